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

int rnsc_token_encrypt(const rnsc_token *t, uint8_t *out, size_t cap, const uint8_t *pt, size_t len)
{
	uint8_t iv[16];
	int rc = rnsc_random(t->ctx, iv, sizeof(iv));
	if (rc)
		return rc;
	return rnsc_token_encrypt_iv(t, out, cap, iv, pt, len);
}

/* HMAC-SHA256 by hand on the streaming hash: SHA-256((K ^ opad) || SHA-256((K ^ ipad) || m))
 * with the 32-byte signing key zero-padded to the 64-byte block. */
static int mac_pad(rnsc_hash *h, const uint8_t *key, uint8_t pad)
{
	uint8_t block[64];
	for (size_t i = 0; i < sizeof(block); i++)
		block[i] = (uint8_t)((i < 32 ? key[i] : 0) ^ pad);
	int rc = rnsc_hash_update(h, block, sizeof(block));
	rnsc_memzero(block, sizeof(block));
	return rc;
}

int rnsc_token_enc_begin_iv(rnsc_token_enc *e, const rnsc_token *t, const uint8_t iv[16],
			    uint8_t out[16])
{
	if (!e || !t || !iv || !out)
		return RNSC_ERR_INVAL;
	memset(e, 0, sizeof(*e));
	int rc = rnsc_hash_init(t->ctx, &e->mac, RNSC_HASH_SHA256);
	if (rc)
		return rc;
	if ((rc = mac_pad(&e->mac, t->key, 0x36)) || (rc = rnsc_hash_update(&e->mac, iv, 16))) {
		rnsc_hash_abort(&e->mac);
		return rc;
	}
	e->ctx = t->ctx;
	memcpy(e->key, t->key, sizeof(e->key));
	memcpy(e->chain, iv, 16);
	memmove(out, iv, 16);
	e->live = 1;
	return 0;
}

int rnsc_token_enc_begin(rnsc_token_enc *e, const rnsc_token *t, uint8_t out[16])
{
	uint8_t iv[16];
	if (!t)
		return RNSC_ERR_INVAL;
	int rc = rnsc_random(t->ctx, iv, sizeof(iv));
	return rc ? rc : rnsc_token_enc_begin_iv(e, t, iv, out);
}

void rnsc_token_enc_abort(rnsc_token_enc *e)
{
	if (!e || !e->live)
		return;
	rnsc_hash_abort(&e->mac);
	rnsc_memzero(e, sizeof(*e));
}

int rnsc_token_enc_update(rnsc_token_enc *e, uint8_t *out, const uint8_t *pt, size_t len)
{
	if (!e || !e->live || (len && (!out || !pt)) || len % 16)
		return RNSC_ERR_INVAL;
	if (!len)
		return 0;
	int rc = rnsc_aes256_cbc_encrypt(e->ctx, out, e->key + 32, e->chain, pt, len);
	if (!rc)
		rc = rnsc_hash_update(&e->mac, out, len);
	if (rc) {
		rnsc_token_enc_abort(e);
		return rc;
	}
	memcpy(e->chain, out + len - 16, 16);
	return 0;
}

int rnsc_token_enc_final(rnsc_token_enc *e, uint8_t *out, size_t cap, const uint8_t *pt, size_t len)
{
	if (!e || !e->live || !out || (len && !pt))
		return RNSC_ERR_INVAL;
	size_t plen = rnsc_pkcs7_padded_len(len);
	if (cap < plen + 32 || plen + 32 > (size_t)INT32_MAX) {
		rnsc_token_enc_abort(e);
		return RNSC_ERR_BUFSIZE;
	}
	uint8_t inner[32];
	rnsc_hash outer;
	int rc = rnsc_pkcs7_pad(out, cap, pt, len);
	if (rc >= 0)
		rc = rnsc_aes256_cbc_encrypt(e->ctx, out, e->key + 32, e->chain, out, plen);
	if (!rc && !(rc = rnsc_hash_update(&e->mac, out, plen)))
		rc = rnsc_hash_final(&e->mac, inner);
	else
		rnsc_hash_abort(&e->mac);
	if (!rc && !(rc = rnsc_hash_init(e->ctx, &outer, RNSC_HASH_SHA256))) {
		if ((rc = mac_pad(&outer, e->key, 0x5c)) ||
		    (rc = rnsc_hash_update(&outer, inner, sizeof(inner))))
			rnsc_hash_abort(&outer);
		else
			rc = rnsc_hash_final(&outer, out + plen);
	}
	rnsc_memzero(inner, sizeof(inner));
	rnsc_memzero(e, sizeof(*e));
	if (rc) {
		rnsc_memzero(out, plen + 32);
		return rc;
	}
	return (int)(plen + 32);
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
