/* SPDX-License-Identifier: MIT */
/*
 * The two ratchet files the reference keeps (Destination.py, Identity.py, rns 1.5.4/1.5.7):
 *
 *   A local destination's ratchets (Destination._persist_ratchets / _reload_ratchets), at the
 *   path the application gave enable_ratchets():
 *     {"signature": bin(64), "ratchets": bin(packed)}      (map, keys in this order)
 *     packed = [bin(32), ...]                               (newest first)
 *   The signature is the destination identity's Ed25519 signature over `packed`; a file whose
 *   signature does not verify is refused (the reference raises and leaves ratchets off).
 *
 *   A remote destination's latest ratchet (Identity._remember_ratchet / get_ratchet), at
 *   <storage>/ratchets/<destination hash in hex>:
 *     {"ratchet": bin(32), "received": float64 (UNIX seconds)}
 *   It is used while now < received + RATCHET_EXPIRY (30 days).
 *
 * Sans-I/O: these functions encode and decode bytes; the runtime reads and writes the files
 * (atomically, src/runtime/node_ratchets.c).
 * Ownership: output buffers are the caller's; parsed pointers point into the caller's input.
 */
#ifndef RNSC_RATCHET_FILE_H
#define RNSC_RATCHET_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "identity.h"

#define RNSC_RATCHET_EXPIRY_S (30ull * 24 * 3600) /* Identity.RATCHET_EXPIRY */
#define RNSC_RATCHET_COUNT 512                    /* Destination.RATCHET_COUNT */
#define RNSC_RATCHET_INTERVAL_S (30u * 60)        /* Destination.RATCHET_INTERVAL */
/* Largest local ratchet file rnsc reads: RNSC_RATCHET_MAX ratchets and the envelope. */
#define RNSC_RATCHET_MAX 65536u
#define RNSC_RATCHET_FILE_MAX ((size_t)RNSC_RATCHET_MAX * 34 + 128)
#define RNSC_RATCHET_REMOTE_FILE_MAX 256u

/* Encodes the local ratchet file for n ratchets (private keys, newest first), signed by id
 * (private key needed). out may be NULL to learn the size. Returns the length,
 * RNSC_ERR_INVAL, RNSC_ERR_RANGE (n > RNSC_RATCHET_MAX), RNSC_ERR_BUFSIZE, RNSC_ERR_NOKEY,
 * crypto errors. */
RNSC_API int rnsc_ratchet_file_encode(const rnsc_identity *id, const uint8_t (*ratchets)[32],
				      size_t n, uint8_t *out, size_t cap);
/* Decodes a local ratchet file and checks its signature against id (public key enough).
 * The keys (newest first) are copied to out[0..cap); out may be NULL (cap 0) to count them.
 * *n receives the count in the file. Returns 0, RNSC_ERR_MALFORMED / RNSC_ERR_TRUNCATED
 * (not the reference's layout, a key of the wrong length, trailing bytes), RNSC_ERR_RANGE
 * (more than RNSC_RATCHET_MAX), RNSC_ERR_BUFSIZE (more than cap with out given),
 * RNSC_ERR_SIGNATURE. */
RNSC_API int rnsc_ratchet_file_decode(const rnsc_identity *id, const uint8_t *buf, size_t len,
				      uint8_t (*out)[32], size_t cap, size_t *n) RNSC_MUST_CHECK;

/* Encodes the remote ratchet file. received_s: UNIX seconds. Returns the length or
 * RNSC_ERR_BUFSIZE / RNSC_ERR_INVAL. */
RNSC_API int rnsc_ratchet_remote_encode(const uint8_t ratchet[32], double received_s, uint8_t *out,
					size_t cap);
/* Decodes one; the map may hold its two keys in either order (umsgpack keeps insertion
 * order, which is ratchet first). Returns 0, RNSC_ERR_MALFORMED, RNSC_ERR_TRUNCATED,
 * RNSC_ERR_KEYLEN (ratchet not 32 bytes: get_ratchet ignores such a file). */
RNSC_API int rnsc_ratchet_remote_decode(const uint8_t *buf, size_t len, uint8_t ratchet[32],
					double *received_s) RNSC_MUST_CHECK;

#endif
