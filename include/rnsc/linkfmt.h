/* SPDX-License-Identifier: MIT */
/*
 * Link packet payloads (mirrors the layouts in Link.py, rns 1.5.4). Formats only: the state
 * machine that sends and accepts them belongs to the link module.
 *
 * Signalling bytes (3, big-endian): mode(3 bits) << 21 | mtu(21 bits).
 *   The reference builds them only for enabled modes (AES_256_CBC today) and masks the MTU to
 *   21 bits (largest signalled MTU: 2097151).
 * LINKREQUEST data (packet type LINKREQUEST, to the SINGLE destination, not encrypted):
 *   x25519_pub(32) ed25519_pub(32) [signalling(3)]
 *   Accepted lengths: 64 (mode AES_256_CBC, MTU 500) or 67. A signalled MTU of 0 means 500. The
 *   link id is the truncated hash of the request's hashable part without the signalling bytes
 *   (destination.h, rnsc_link_id_from_request).
 * LRPROOF data (packet type PROOF, context LRPROOF, to the link id, not encrypted):
 *   signature(64) responder_x25519_pub(32) [signalling(3)]
 *   signed: link_id(16) responder_x25519_pub(32) destination_ed25519_pub(32) [signalling]
 *   The reference always sends the signalling bytes (the MTU it accepts for the link); it
 *   accepts 96 or 99 bytes; the mode must be the one requested.
 * LRRTT (DATA, context LRRTT, encrypted with the link token): MessagePack float64 of the
 *   initiator's measured round-trip time in seconds.
 * KEEPALIVE (DATA, context KEEPALIVE, not encrypted): one byte, 0xFF from the initiator,
 *   0xFE as the responder's answer.
 * LINKCLOSE (DATA, context LINKCLOSE, encrypted): the link id.
 * LINKIDENTIFY (DATA, context LINKIDENTIFY, encrypted): public_key(64) signature(64) over
 *   link_id || public_key, by the identity the initiator reveals.
 * Packet proofs on links: proof.h.
 *
 * Threading: reentrant. Parsed views borrow the input.
 */
#ifndef RNSC_LINKFMT_H
#define RNSC_LINKFMT_H

#include <stddef.h>
#include <stdint.h>

#include "ctx.h"
#include "identity.h"

#define RNSC_LINK_ECPUBSIZE 64
#define RNSC_LINK_MTU_SIZE 3
#define RNSC_LINK_MTU_BYTEMASK 0x1FFFFFu
#define RNSC_LINK_MODE_BYTEMASK 0xE0u
#define RNSC_LINK_REQUEST_LEN RNSC_LINK_ECPUBSIZE                   /* 64 */
#define RNSC_LINK_PROOF_LEN (RNSC_SIGLEN + RNSC_LINK_ECPUBSIZE / 2) /* 96 */
#define RNSC_LINK_IDENTIFY_LEN (RNSC_KEYSIZE + RNSC_SIGLEN)         /* 128 */
#define RNSC_LINK_KEEPALIVE_REQUEST 0xFF
#define RNSC_LINK_KEEPALIVE_RESPONSE 0xFE

/* Link.MODE_* */
enum rnsc_link_mode {
	RNSC_LINK_MODE_AES128_CBC = 0x00,
	RNSC_LINK_MODE_AES256_CBC = 0x01,
	RNSC_LINK_MODE_AES256_GCM = 0x02,
	RNSC_LINK_MODE_OTP_RESERVED = 0x03,
	RNSC_LINK_MODE_PQ_RESERVED_1 = 0x04,
	RNSC_LINK_MODE_PQ_RESERVED_2 = 0x05,
	RNSC_LINK_MODE_PQ_RESERVED_3 = 0x06,
	RNSC_LINK_MODE_PQ_RESERVED_4 = 0x07,
};
#define RNSC_LINK_MODE_DEFAULT RNSC_LINK_MODE_AES256_CBC

/* 1 for modes the reference enables (Link.ENABLED_MODES: AES_256_CBC only). */
RNSC_API int rnsc_link_mode_enabled(int mode);
/* The reference's constant name without the prefix ("AES256_CBC"), NULL beyond 7. */
RNSC_API const char *rnsc_link_mode_name(int mode);

/* Signalling bytes. Returns 0, RNSC_ERR_LINK_MODE (mode not enabled), RNSC_ERR_RANGE (mtu
 * beyond 21 bits: the reference would silently mask it). */
RNSC_API int rnsc_link_signalling(uint8_t out[RNSC_LINK_MTU_SIZE], uint32_t mtu, int mode);
/* Reads mtu (21 bits) and mode (3 bits) back; never fails. */
RNSC_API void rnsc_link_signalling_decode(const uint8_t in[RNSC_LINK_MTU_SIZE], uint32_t *mtu,
					  int *mode);

typedef struct rnsc_link_request {
	const uint8_t *x25519_pub;
	const uint8_t *ed25519_pub;
	int has_signalling;
	uint32_t mtu; /* RNSC_MTU when not signalled or signalled as 0 */
	int mode;
} rnsc_link_request;

/* x25519_pub || ed25519_pub [|| signalling for (mtu, mode)] when signal is set.
 * Returns 64 or 67, or RNSC_ERR_INVAL, RNSC_ERR_BUFSIZE, the errors of rnsc_link_signalling(). */
RNSC_API int rnsc_link_request_build(uint8_t *out, size_t cap, const uint8_t x25519_pub[32],
				     const uint8_t ed25519_pub[32], int signal, uint32_t mtu,
				     int mode);
/* Returns 0, RNSC_ERR_INVAL, RNSC_ERR_MALFORMED (length other than 64 or 67),
 * RNSC_ERR_LINK_MODE (signalled mode not enabled: the reference drops such requests). */
RNSC_API int rnsc_link_request_parse(rnsc_link_request *r, const uint8_t *data,
				     size_t len) RNSC_MUST_CHECK;

typedef struct rnsc_link_proof {
	const uint8_t *signature;
	const uint8_t *x25519_pub;
	int has_signalling;
	uint32_t mtu; /* RNSC_MTU when not signalled */
	int mode;
} rnsc_link_proof;

/* LRPROOF data by the destination's identity (private key) for link_id, with the responder's
 * ephemeral x25519_pub; signalling for (mtu, mode) when signal is set (the reference always
 * sets it). Returns 96 or 99, RNSC_ERR_NOKEY, RNSC_ERR_INVAL, RNSC_ERR_BUFSIZE,
 * RNSC_ERR_LINK_MODE, RNSC_ERR_RANGE, crypto errors. */
RNSC_API int rnsc_link_proof_build(uint8_t *out, size_t cap, const rnsc_identity *dest_identity,
				   const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
				   const uint8_t x25519_pub[32], int signal, uint32_t mtu,
				   int mode);
/* Validates LRPROOF data for the link the initiator requested with mode, against the
 * destination's Ed25519 public key (the second half of its public key).
 * Returns 0 (p filled), RNSC_ERR_INVAL, RNSC_ERR_MALFORMED (length other than 96 or 99),
 * RNSC_ERR_LINK_MODE (a mode other than the requested one), RNSC_ERR_SIGNATURE. */
RNSC_API int rnsc_link_proof_validate(rnsc_ctx *ctx, rnsc_link_proof *p, const uint8_t *data,
				      size_t len, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
				      const uint8_t dest_ed25519_pub[32],
				      int expected_mode) RNSC_MUST_CHECK;

/* LRRTT plaintext: MessagePack float64. Returns 9 or RNSC_ERR_BUFSIZE / RNSC_ERR_INVAL. */
RNSC_API int rnsc_link_rtt_encode(uint8_t *out, size_t cap, double rtt);
/* Accepts one MessagePack number (float64, float32 or integer) and nothing after it.
 * Returns 0, RNSC_ERR_INVAL, RNSC_ERR_MALFORMED (another type, or trailing bytes: the
 * reference ignores those), RNSC_ERR_TRUNCATED. */
RNSC_API int rnsc_link_rtt_decode(const uint8_t *p, size_t len, double *rtt) RNSC_MUST_CHECK;

/* Returns RNSC_LINK_KEEPALIVE_REQUEST / _RESPONSE for the two one-byte payloads, else
 * RNSC_ERR_MALFORMED (the reference counts any other payload as mere traffic). */
RNSC_API int rnsc_link_keepalive_parse(const uint8_t *p, size_t len);

/* LINKCLOSE plaintext check: 0, RNSC_ERR_MALFORMED (not 16 bytes), RNSC_ERR_NOTFOUND (another
 * link's id: the reference ignores it). */
RNSC_API int rnsc_link_close_check(const uint8_t *p, size_t len,
				   const uint8_t link_id[RNSC_TRUNCATED_HASHLEN]) RNSC_MUST_CHECK;

/* LINKIDENTIFY plaintext for identity (private key). Returns 128, RNSC_ERR_NOKEY,
 * RNSC_ERR_BUFSIZE, RNSC_ERR_INVAL, crypto errors. */
RNSC_API int rnsc_link_identify_build(uint8_t *out, size_t cap, const rnsc_identity *identity,
				      const uint8_t link_id[RNSC_TRUNCATED_HASHLEN]);
/* Checks LINKIDENTIFY plaintext; *who (may be NULL) receives the public identity.
 * Returns 0, RNSC_ERR_INVAL, RNSC_ERR_MALFORMED (not 128 bytes), RNSC_ERR_SIGNATURE. */
RNSC_API int rnsc_link_identify_validate(rnsc_ctx *ctx, rnsc_identity *who, const uint8_t *p,
					 size_t len, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN])
	RNSC_MUST_CHECK;

#endif
