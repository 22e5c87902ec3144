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

#include "crypto.h"
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
/* The same token made in pieces, so that a large one (a resource segment) can be encrypted
 * between other work: begin writes the IV (out[0..16)), each update encrypts whole blocks
 * of plaintext to the ciphertext that follows, final encrypts the rest with its padding and
 * appends the HMAC. The result equals rnsc_token_encrypt_iv with that IV. The state holds
 * a copy of the key (the token may go away meanwhile); final or abort wipes it. */
typedef struct rnsc_token_enc {
	rnsc_ctx *ctx;
	uint8_t key[RNSC_TOKEN_KEYLEN];
	uint8_t chain[16]; /* the last ciphertext block (the IV at first) */
	rnsc_hash mac;     /* the HMAC's inner hash, over iv || ciphertext so far */
	int live;
} rnsc_token_enc;
RNSC_API int rnsc_token_enc_begin(rnsc_token_enc *e, const rnsc_token *t, uint8_t out[16]);
RNSC_API int rnsc_token_enc_begin_iv(rnsc_token_enc *e, const rnsc_token *t, const uint8_t iv[16],
				     uint8_t out[16]);
/* len % 16 == 0 (else RNSC_ERR_INVAL); out and pt may be the same. */
RNSC_API int rnsc_token_enc_update(rnsc_token_enc *e, uint8_t *out, const uint8_t *pt, size_t len);
/* Any len; out needs rnsc_pkcs7_padded_len(len) + 32 bytes (cap). Returns that count. */
RNSC_API int rnsc_token_enc_final(rnsc_token_enc *e, uint8_t *out, size_t cap, const uint8_t *pt,
				  size_t len);
RNSC_API void rnsc_token_enc_abort(rnsc_token_enc *e);

/* Returns the plaintext length; RNSC_ERR_TRUNCATED when len <= 48 or the ciphertext is not
 * whole blocks, RNSC_ERR_AUTH on HMAC mismatch (checked first, in constant time),
 * RNSC_ERR_PADDING on bad padding. */
RNSC_API int rnsc_token_decrypt(const rnsc_token *t, uint8_t *out, size_t cap, const uint8_t *token,
				size_t len) RNSC_MUST_CHECK;

#endif
