/* SPDX-License-Identifier: MIT */
/*
 * Identities (mirrors the reference's Identity.py): an X25519 key for
 * encryption plus an Ed25519 key for signatures.
 *
 *  private key file / bytes : x25519_private(32) || ed25519_seed(32)   (64 bytes, as rnid writes)
 *  public key               : x25519_public(32)  || ed25519_public(32) (64 bytes)
 *  identity hash            : SHA-256(public key)[:16]
 *  encryption token         : ephemeral_x25519_pub(32) || iv(16) || AES-256-CBC(PKCS7(pt)) || HMAC(32)
 *                             key = HKDF-SHA256(len 64, ikm = ECDH, salt = identity hash, no info);
 *                             first 32 bytes sign (HMAC), last 32 encrypt.
 *
 * Lifetimes: rnsc_identity is caller storage. rnsc_identity_free() wipes the
 * private keys; the context passed at load time must outlive the identity.
 */
#ifndef RNSC_IDENTITY_H
#define RNSC_IDENTITY_H

#include <stddef.h>
#include <stdint.h>

#include "ctx.h"

#define RNSC_KEYSIZE 64 /* public or private key bytes */
#define RNSC_HALF_KEYSIZE 32
#define RNSC_HASHLEN 32 /* full SHA-256 */
#define RNSC_TRUNCATED_HASHLEN 16
#define RNSC_NAME_HASHLEN 10
#define RNSC_SIGLEN 64
#define RNSC_RATCHETSIZE 32
#define RNSC_RATCHET_ID_LEN 10
#define RNSC_TOKEN_OVERHEAD 48 /* iv + HMAC */
#define RNSC_DERIVED_KEY_LEN 64

typedef struct rnsc_identity {
	rnsc_ctx *ctx;
	int has_private;
	uint8_t x_priv[32];
	uint8_t ed_seed[32];
	uint8_t x_pub[32];
	uint8_t ed_pub[32];
	uint8_t hash[RNSC_TRUNCATED_HASHLEN];
} rnsc_identity;

/* New random identity (randomness from the context). */
RNSC_API int rnsc_identity_generate(rnsc_ctx *ctx, rnsc_identity *id);
/* From 64 private bytes; RNSC_ERR_KEYLEN for any other length. */
RNSC_API int rnsc_identity_from_private(rnsc_ctx *ctx, rnsc_identity *id, const uint8_t *prv,
					size_t len);
/* From 64 public bytes (no private part); RNSC_ERR_KEYLEN for any other length. */
RNSC_API int rnsc_identity_from_public(rnsc_ctx *ctx, rnsc_identity *id, const uint8_t *pub,
				       size_t len);
/* Wipes key material. */
RNSC_API void rnsc_identity_free(rnsc_identity *id);

RNSC_API int rnsc_identity_private_bytes(const rnsc_identity *id, uint8_t out[RNSC_KEYSIZE]);
RNSC_API void rnsc_identity_public_bytes(const rnsc_identity *id, uint8_t out[RNSC_KEYSIZE]);

/* The reference's identity file: exactly the 64 private bytes. load: RNSC_ERR_NOENT,
 * RNSC_ERR_IO, RNSC_ERR_KEYLEN (wrong size). save: written 0600 through a temp file and
 * rename, so a crash never leaves a half-written key. */
RNSC_API int rnsc_identity_load_file(rnsc_ctx *ctx, rnsc_identity *id, const char *path);
RNSC_API int rnsc_identity_save_file(const rnsc_identity *id, const char *path);

/* Ed25519 signature over msg. RNSC_ERR_NOKEY without a private key. */
RNSC_API int rnsc_identity_sign(const rnsc_identity *id, uint8_t sig[RNSC_SIGLEN],
				const uint8_t *msg, size_t len);
/* 0 when valid; RNSC_ERR_SIGNATURE (also for a signature of the wrong length). */
RNSC_API int rnsc_identity_verify(const rnsc_identity *id, const uint8_t *sig, size_t sig_len,
				  const uint8_t *msg, size_t len) RNSC_MUST_CHECK;

/* Size of the token produced for a plaintext of len bytes. */
RNSC_API size_t rnsc_identity_token_len(size_t len);
/* Encrypts to the identity's X25519 key, or to ratchet_pub (32 bytes) when not NULL.
 * Returns the token length or RNSC_ERR_BUFSIZE / crypto errors. */
RNSC_API int rnsc_identity_encrypt(const rnsc_identity *id, uint8_t *out, size_t cap,
				   const uint8_t *pt, size_t len, const uint8_t *ratchet_pub);
/* Decrypts a token. When ratchets (n private ratchet keys of 32 bytes) are given they are
 * tried first, in order; *used_ratchet (may be NULL) receives the index that worked or -1.
 * With enforce_ratchets the identity key itself is not tried. Returns the plaintext length
 * or RNSC_ERR_TRUNCATED (token too short), RNSC_ERR_AUTH, RNSC_ERR_PADDING,
 * RNSC_ERR_LOW_ORDER, RNSC_ERR_DECRYPT (no ratchet worked under enforcement),
 * RNSC_ERR_NOKEY. */
RNSC_API int rnsc_identity_decrypt(const rnsc_identity *id, uint8_t *out, size_t cap,
				   const uint8_t *token, size_t len, const uint8_t (*ratchets)[32],
				   size_t n_ratchets, int enforce_ratchets,
				   int *used_ratchet) RNSC_MUST_CHECK;

/* Hashes. */
RNSC_API int rnsc_full_hash(rnsc_ctx *ctx, uint8_t out[RNSC_HASHLEN], const uint8_t *p, size_t len);
RNSC_API int rnsc_truncated_hash(rnsc_ctx *ctx, uint8_t out[RNSC_TRUNCATED_HASHLEN],
				 const uint8_t *p, size_t len);
/* Truncated hash of 16 random bytes (the reference's get_random_hash). */
RNSC_API int rnsc_random_hash(rnsc_ctx *ctx, uint8_t out[RNSC_TRUNCATED_HASHLEN]);

/* Ratchets: a ratchet is an X25519 private key; its id is SHA-256(public)[:10]. */
RNSC_API int rnsc_ratchet_generate(rnsc_ctx *ctx, uint8_t priv[RNSC_RATCHETSIZE]);
RNSC_API int rnsc_ratchet_public(rnsc_ctx *ctx, uint8_t pub[RNSC_RATCHETSIZE],
				 const uint8_t priv[RNSC_RATCHETSIZE]);
RNSC_API int rnsc_ratchet_id(rnsc_ctx *ctx, uint8_t out[RNSC_RATCHET_ID_LEN],
			     const uint8_t pub[RNSC_RATCHETSIZE]);

#endif
