/* SPDX-License-Identifier: MIT */
#include "token.h"

#include <string.h>

#include "crypto.h"

int rnsc_token_init(rnsc_token *t, rnsc_ctx *ctx, const uint8_t *key, size_t key_len)
{
	if (!t || !ctx || !key)
		return RNSC_ERR_INVAL;
	if (key_len != RNSC_TOKEN_KEYLEN)
		return RNSC_ERR_KEYLEN;
	t->ctx = ctx;
	memcpy(t->key, key, RNSC_TOKEN_KEYLEN);
	return 0;
}

void rnsc_token_free(rnsc_token *t)
{
	if (t)
		rnsc_memzero(t->key, sizeof(t->key));
}

int rnsc_token_generate_key(rnsc_ctx *ctx, uint8_t key[RNSC_TOKEN_KEYLEN])
{
	return rnsc_random(ctx, key, RNSC_TOKEN_KEYLEN);
}

size_t rnsc_token_len(size_t plaintext_len)
{
	return 16 + rnsc_pkcs7_padded_len(plaintext_len) + 32;
}

int rnsc_token_encrypt_iv(const rnsc_token *t, uint8_t *out, size_t cap, const uint8_t iv[16],
			  const uint8_t *pt, size_t len)
{
	size_t total = rnsc_token_len(len);
	if (total > cap || total > (size_t)INT32_MAX)
		return RNSC_ERR_BUFSIZE;
	/* Pad in place inside the output, then encrypt in place. */
	uint8_t *body = out + 16;
	int plen = rnsc_pkcs7_pad(body, cap - 16, pt, len);
	if (plen < 0)
		return plen;
	memmove(out, iv, 16);
	int rc = rnsc_aes256_cbc_encrypt(t->ctx, body, t->key + 32, out, body, (size_t)plen);
	if (rc == 0)
		rc = rnsc_hmac_sha256(t->ctx, out + 16 + plen, t->key, 32, out, 16 + (size_t)plen);
	if (rc) {
		rnsc_memzero(out, total);
		return rc;
	}
	return (int)total;
}

int rnsc_token_encrypt(const rnsc_token *t, uint8_t *out, size_t cap, const uint8_t *pt,
		       size_t len)
{
	uint8_t iv[16];
	int rc = rnsc_random(t->ctx, iv, sizeof(iv));
	if (rc)
		return rc;
	return rnsc_token_encrypt_iv(t, out, cap, iv, pt, len);
}

int rnsc_token_decrypt(const rnsc_token *t, uint8_t *out, size_t cap, const uint8_t *token,
		       size_t len)
{
	if (len <= 48 || (len - 48) % 16 || len > (size_t)INT32_MAX)
		return RNSC_ERR_TRUNCATED;
	uint8_t mac[32];
	int rc = rnsc_hmac_sha256(t->ctx, mac, t->key, 32, token, len - 32);
	if (rc)
		return rc;
	if (rnsc_ct_memcmp(mac, token + len - 32, 32) != 0)
		return RNSC_ERR_AUTH;
	size_t ct_len = len - 48;
	if (cap < ct_len)
		return RNSC_ERR_BUFSIZE;
	rc = rnsc_aes256_cbc_decrypt(t->ctx, out, t->key + 32, token, token + 16, ct_len);
	if (rc)
		return rc;
	int n = rnsc_pkcs7_unpad_len(out, ct_len);
	if (n < 0)
		rnsc_memzero(out, ct_len);
	return n;
}
