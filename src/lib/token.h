/* SPDX-License-Identifier: MIT */
/*
 * The reference's Token (Fernet without version and timestamp):
 *   iv(16) || AES-256-CBC(key[32:64], PKCS7(pt)) || HMAC-SHA256(key[0:32], iv || ct)
 * Only 64-byte keys (AES-256) are supported; the reference's legacy 32-byte
 * AES-128 mode is rejected with RNSC_ERR_KEYLEN.
 *
 * Lifetimes: caller storage; rnsc_token_free() wipes the key.
 */
#ifndef RNSC_TOKEN_H
#define RNSC_TOKEN_H

#include <stddef.h>
#include <stdint.h>

#include "ctx.h"

#define RNSC_TOKEN_KEYLEN 64

typedef struct rnsc_token {
	rnsc_ctx *ctx;
	uint8_t key[RNSC_TOKEN_KEYLEN];
} rnsc_token;

RNSC_API int rnsc_token_init(rnsc_token *t, rnsc_ctx *ctx, const uint8_t *key, size_t key_len);
RNSC_API void rnsc_token_free(rnsc_token *t);
/* Fresh random 64-byte key (the reference's Token.generate_key / GROUP key). */
RNSC_API int rnsc_token_generate_key(rnsc_ctx *ctx, uint8_t key[RNSC_TOKEN_KEYLEN]);
RNSC_API size_t rnsc_token_len(size_t plaintext_len);
/* IV from the context's randomness. Returns the token length. */
RNSC_API int rnsc_token_encrypt(const rnsc_token *t, uint8_t *out, size_t cap, const uint8_t *pt,
				size_t len);
/* Same with a caller-chosen IV (deterministic tests). */
RNSC_API int rnsc_token_encrypt_iv(const rnsc_token *t, uint8_t *out, size_t cap,
				   const uint8_t iv[16], const uint8_t *pt, size_t len);
/* Returns the plaintext length; RNSC_ERR_TRUNCATED when len <= 48 or the ciphertext is not
 * whole blocks, RNSC_ERR_AUTH on HMAC mismatch (checked first, in constant time),
 * RNSC_ERR_PADDING on bad padding. */
RNSC_API int rnsc_token_decrypt(const rnsc_token *t, uint8_t *out, size_t cap,
				const uint8_t *token, size_t len) RNSC_MUST_CHECK;

#endif
