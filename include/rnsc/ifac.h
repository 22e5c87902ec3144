/* SPDX-License-Identifier: MIT */
/*
 * Interface access codes (mirrors Reticulum._add_interface's derivation and Transport's
 * handle_outgoing_ifac / handle_ifac / preprocess_inbound checks, rns 1.5.4).
 *
 * Derivation from the interface's network name and/or passphrase (at least one):
 *   origin      = SHA-256(utf8(network_name)) [if set] || SHA-256(utf8(passphrase)) [if set]
 *   ifac_key    = HKDF-SHA256(length 64, ikm = SHA-256(origin), salt = IFAC_SALT, no info)
 *   identity    = the identity whose 64 private bytes are ifac_key
 *                 (X25519 private = key[0:32], Ed25519 seed = key[32:64])
 *   signature   = identity.sign(SHA-256(ifac_key))   (published by interface discovery)
 * IFAC size: 1..64 bytes (configured in bits as ifac_size, >= 8; default 16 bytes, 8 on
 * KISS, AX.25, RNode and pipe interfaces).
 *
 * Outgoing frame for packet raw (n bytes, IFAC bit clear):
 *   ifac = last `size` bytes of identity.sign(raw)
 *   mask = HKDF(length n + size, ikm = ifac, salt = ifac_key, no info)
 *   frame = [raw[0] ^ mask[0] | 0x80] [raw[1] ^ mask[1]] ifac [raw[2+i] ^ mask[2+size+i]]
 * The reference's HKDF keeps expanding past RFC 5869's 255 blocks (the block counter wraps
 * modulo 256), so frames longer than 8160 bytes are masked too; this module does the same.
 * Incoming: a frame of 2 bytes or less is a protocol violation; on an IFAC interface the flag
 * must be set and the frame longer than 2 + size, the mask is regenerated from the received
 * ifac and the code recomputed over the unmasked packet; on an interface without IFAC a set
 * flag drops the frame. Every drop is counted.
 *
 * Lifetimes: rnsc_ifac is caller storage holding key material; rnsc_ifac_free() wipes it. The
 * context must outlive it. Threading: one owner (the interface's thread) for the counters;
 * rnsc_ifac_apply() only reads the object.
 */
#ifndef RNSC_IFAC_H
#define RNSC_IFAC_H

#include <stddef.h>
#include <stdint.h>

#include "ctx.h"
#include "identity.h"

#define RNSC_IFAC_MAX_SIZE 64
#define RNSC_IFAC_DEFAULT_SIZE 16
#define RNSC_IFAC_KEYLEN 64

/* Reticulum.IFAC_SALT */
extern RNSC_API const uint8_t rnsc_ifac_salt[32];

/* Inbound accounting, per interface. */
typedef struct rnsc_ifac_stats {
	uint64_t accepted;   /* frames passed on (code valid, or no IFAC on either side) */
	uint64_t violations; /* every IFAC drop (the reference's ifac_violations) */
	uint64_t bad_code;   /* flag set, code wrong */
	uint64_t missing;    /* flag clear on an IFAC interface */
	uint64_t unexpected; /* flag set on an interface without IFAC */
	uint64_t too_short;  /* flag set, no room for a code and a payload */
	uint64_t runts;      /* 2 bytes or less: a protocol violation, not an IFAC one */
} rnsc_ifac_stats;

typedef struct rnsc_ifac {
	rnsc_ctx *ctx;
	size_t size;
	uint8_t key[RNSC_IFAC_KEYLEN];
	uint8_t signature[RNSC_SIGLEN];
	rnsc_identity identity;
} rnsc_ifac;

/* Derives the interface's access code material. network_name and passphrase are UTF-8, NULL
 * or "" meaning unset (as an empty config value); at least one must be set.
 * Returns 0, RNSC_ERR_INVAL (neither given, NULL ifac/ctx), RNSC_ERR_RANGE (size not 1..64),
 * crypto errors. */
RNSC_API int rnsc_ifac_init(rnsc_ifac *ifac, rnsc_ctx *ctx, const char *network_name,
			    const char *passphrase, size_t size);
RNSC_API void rnsc_ifac_free(rnsc_ifac *ifac);

/* The IFAC size for a configured ifac_size in bits, as Reticulum's config reader: bits / 8
 * when bits >= 8, else 0 (meaning the interface's default). */
RNSC_API size_t rnsc_ifac_size_from_bits(long bits);

/* Adds the access code to an outgoing packet and masks it. out (cap >= len + size) must not
 * overlap raw. Returns len + size, or RNSC_ERR_INVAL, RNSC_ERR_TRUNCATED (len < 2),
 * RNSC_ERR_MALFORMED (raw already carries the IFAC flag), RNSC_ERR_BUFSIZE, crypto errors. */
RNSC_API int rnsc_ifac_apply(const rnsc_ifac *ifac, uint8_t *out, size_t cap, const uint8_t *raw,
			     size_t len);

/* Inbound check for one frame on an interface with access codes (ifac) or without (ifac
 * NULL; ctx is then unused and may be NULL). On success the packet without its code is
 * written to out (cap >= len; may not overlap frame) and its length returned; frames without
 * IFAC on an interface without IFAC are copied unchanged. Every outcome is counted in stats
 * (may be NULL). Returns the length, or
 *   RNSC_ERR_TRUNCATED         2 bytes or less (protocol violation),
 *   RNSC_ERR_IFAC_MISSING      flag clear on an IFAC interface,
 *   RNSC_ERR_IFAC_UNEXPECTED   flag set on an interface without IFAC,
 *   RNSC_ERR_IFAC              flag set but too short for a code and payload, or wrong code,
 *   RNSC_ERR_INVAL, RNSC_ERR_BUFSIZE, crypto errors (not counted). */
RNSC_API int rnsc_ifac_check(const rnsc_ifac *ifac, rnsc_ifac_stats *stats, uint8_t *out,
			     size_t cap, const uint8_t *frame, size_t len) RNSC_MUST_CHECK;

/* The reference's HKDF-SHA256 without the 255-block cap (counter byte wraps). Exposed for the
 * masking tests. Returns 0, RNSC_ERR_INVAL (len 0, empty ikm), crypto errors. */
RNSC_API int rnsc_ifac_hkdf(rnsc_ctx *ctx, uint8_t *out, size_t len, const uint8_t *ikm,
			    size_t ikm_len, const uint8_t *salt, size_t salt_len);

#endif
