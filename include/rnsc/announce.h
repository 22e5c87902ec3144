/* SPDX-License-Identifier: MIT */
/*
 * Announces (mirrors Destination.announce and Identity.validate_announce, rns 1.5.4).
 *
 * Announce data (the payload of an ANNOUNCE packet to a SINGLE destination):
 *   public_key(64) name_hash(10) random_hash(10) [ratchet(32)] signature(64) [app_data]
 * The ratchet (an X25519 public key) is present exactly when the packet's context flag is set.
 * random_hash = truncated_hash(16 random bytes)[:5] || big-endian 5-byte UNIX time in seconds.
 * The signature (Ed25519, by the announced identity) covers
 *   destination_hash(16) public_key name_hash random_hash [ratchet] [app_data]
 * and the destination hash must equal SHA-256(name_hash || identity_hash)[:16].
 * The packet: ANNOUNCE, context NONE (or PATH_RESPONSE when answering a path request), context
 * flag = ratchet present; HEADER_1/BROADCAST when emitted, HEADER_2/TRANSPORT with the
 * transport id of the node when a transport node rebroadcasts it or answers a path request.
 *
 * Empty app data and no app data are the same bytes on the wire. The reference's own notion of
 * "no app data" ignores the ratchet (it tests the length against the ratchet-less minimum), so
 * for ratchet announces it reports b"" where rnsc reports absent; only the bytes are compared.
 *
 * Lifetimes: rnsc_announce views borrow the packet data they were parsed from.
 * Threading: reentrant.
 */
#ifndef RNSC_ANNOUNCE_H
#define RNSC_ANNOUNCE_H

#include <stddef.h>
#include <stdint.h>

#include "ctx.h"
#include "identity.h"
#include "packet.h"

#define RNSC_ANNOUNCE_RANDOM_LEN 10
#define RNSC_ANNOUNCE_TIME_LEN 5
/* public key + name hash + random hash + signature */
#define RNSC_ANNOUNCE_MIN_LEN                                                                      \
	(RNSC_KEYSIZE + RNSC_NAME_HASHLEN + RNSC_ANNOUNCE_RANDOM_LEN + RNSC_SIGLEN)

typedef struct rnsc_announce {
	const uint8_t *public_key;  /* RNSC_KEYSIZE bytes */
	const uint8_t *name_hash;   /* RNSC_NAME_HASHLEN */
	const uint8_t *random_hash; /* RNSC_ANNOUNCE_RANDOM_LEN */
	const uint8_t *ratchet;     /* RNSC_RATCHETSIZE, NULL when the context flag is unset */
	const uint8_t *signature;   /* RNSC_SIGLEN */
	const uint8_t *app_data;    /* NULL when no bytes follow the signature */
	size_t app_data_len;
} rnsc_announce;

/* A fresh random hash: the first 5 bytes of the truncated hash of 16 bytes drawn from the
 * context's randomness, then now (seconds since the epoch) as 5 big-endian bytes.
 * Returns 0, RNSC_ERR_RANGE when now does not fit 40 bits, or crypto/RNG errors. */
RNSC_API int rnsc_announce_random_hash(rnsc_ctx *ctx, uint8_t out[RNSC_ANNOUNCE_RANDOM_LEN],
				       uint64_t now);
/* The emission time carried in a random hash (Transport.timebase_from_random_blob). */
RNSC_API uint64_t rnsc_announce_timestamp(const uint8_t random_hash[RNSC_ANNOUNCE_RANDOM_LEN]);

/* Length of the announce data for the given shape. */
RNSC_API size_t rnsc_announce_data_len(int has_ratchet, size_t app_data_len);

/* Builds the announce data for destination dest_hash (SHA-256(name_hash || id->hash)[:16]; not
 * recomputed here) signed by id, which must hold its private key. ratchet_pub (32 bytes) may be
 * NULL; app_data may be NULL (or app_data_len 0) for none. The packet carrying it must have the
 * context flag set exactly when ratchet_pub is given.
 * Returns the data length, or RNSC_ERR_INVAL (NULL arguments), RNSC_ERR_NOKEY (no private
 * key), RNSC_ERR_BUFSIZE, RNSC_ERR_NOMEM, crypto errors. */
RNSC_API int rnsc_announce_build(uint8_t *out, size_t cap, const rnsc_identity *id,
				 const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
				 const uint8_t name_hash[RNSC_NAME_HASHLEN],
				 const uint8_t random_hash[RNSC_ANNOUNCE_RANDOM_LEN],
				 const uint8_t *ratchet_pub, const uint8_t *app_data,
				 size_t app_data_len);

/* Splits an announce packet's data into its fields (no signature check).
 * Returns 0, RNSC_ERR_INVAL (NULL), RNSC_ERR_MALFORMED (not an ANNOUNCE packet),
 * RNSC_ERR_TRUNCATED (shorter than the fields its context flag calls for). */
RNSC_API int rnsc_announce_parse(rnsc_announce *a, const rnsc_packet *p) RNSC_MUST_CHECK;

/* Full validation as the reference's validate_announce: parse, Ed25519 signature over the
 * signed fields with the announced key, then the destination hash against name hash and
 * identity hash. a (may be NULL) receives the fields, announced (may be NULL) the announced
 * public identity (its ctx is ctx). Transport policy (destination type filter, blackholes,
 * known-key conflicts, the 500-byte ingress limit) is not applied here.
 * Returns 0, the errors of rnsc_announce_parse(), RNSC_ERR_SIGNATURE, RNSC_ERR_DEST_MISMATCH,
 * RNSC_ERR_NOMEM, or crypto errors. */
RNSC_API int rnsc_announce_validate(rnsc_ctx *ctx, const rnsc_packet *p, rnsc_announce *a,
				    rnsc_identity *announced) RNSC_MUST_CHECK;

#endif
