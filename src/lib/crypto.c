/* SPDX-License-Identifier: MIT */
#include "crypto.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "ctx_internal.h"

static const char *const prim_names[RNSC_PRIM_COUNT] = {
	[RNSC_PRIM_RANDOM] = "random",           [RNSC_PRIM_SHA256] = "sha256",
	[RNSC_PRIM_SHA512] = "sha512",           [RNSC_PRIM_HASH_STREAM] = "hash-stream",
	[RNSC_PRIM_HMAC_SHA256] = "hmac-sha256", [RNSC_PRIM_HKDF_SHA256] = "hkdf-sha256",
	[RNSC_PRIM_AES256_CBC] = "aes256-cbc",   [RNSC_PRIM_X25519] = "x25519",
	[RNSC_PRIM_ED25519] = "ed25519",         [RNSC_PRIM_RANDOMX] = "randomx",
};

const char *rnsc_prim_name(enum rnsc_prim prim)
{
	if ((unsigned)prim < RNSC_PRIM_COUNT)
		return prim_names[prim];
	return "unknown";
}

/* A backend claiming a primitive must really have every slot that primitive needs. */
static int slots_present(const rnsc_crypto_ops *o, uint64_t prims)
{
#define NEED(p, field)                                                                             \
	if ((prims & RNSC_PRIM_BIT(p)) && !RNSC_OPS_HAS(o, rnsc_crypto_ops, field))                \
		return 0;
	NEED(RNSC_PRIM_RANDOM, random)
	NEED(RNSC_PRIM_SHA256, sha256)
	NEED(RNSC_PRIM_SHA512, sha512)
	NEED(RNSC_PRIM_HASH_STREAM, hash_init)
	NEED(RNSC_PRIM_HASH_STREAM, hash_update)
	NEED(RNSC_PRIM_HASH_STREAM, hash_final)
	NEED(RNSC_PRIM_HASH_STREAM, hash_abort)
	NEED(RNSC_PRIM_HMAC_SHA256, hmac_sha256)
	NEED(RNSC_PRIM_HKDF_SHA256, hkdf_sha256)
	NEED(RNSC_PRIM_AES256_CBC, aes256_cbc_encrypt)
	NEED(RNSC_PRIM_AES256_CBC, aes256_cbc_decrypt)
	NEED(RNSC_PRIM_X25519, x25519_public)
	NEED(RNSC_PRIM_X25519, x25519)
	NEED(RNSC_PRIM_ED25519, ed25519_public)
	NEED(RNSC_PRIM_ED25519, ed25519_sign)
	NEED(RNSC_PRIM_ED25519, ed25519_verify)
	NEED(RNSC_PRIM_RANDOMX, randomx_new)
	NEED(RNSC_PRIM_RANDOMX, randomx_hash)
	NEED(RNSC_PRIM_RANDOMX, randomx_info)
	NEED(RNSC_PRIM_RANDOMX, randomx_del)
#undef NEED
	return 1;
}

void rnsc_crypto_rebuild(rnsc_ctx *ctx)
{
	for (int p = 0; p < RNSC_PRIM_COUNT; p++) {
		ctx->serve[p] = NULL;
		if (ctx->pin[p] && (ctx->backends[ctx->pin[p] - 1].prims & RNSC_PRIM_BIT(p))) {
			ctx->serve[p] = &ctx->backends[ctx->pin[p] - 1];
			continue;
		}
		for (size_t i = 0; i < ctx->n_order; i++) {
			const rnsc_crypto_backend *be = &ctx->backends[ctx->order[i]];
			if (be->prims & RNSC_PRIM_BIT(p)) {
				ctx->serve[p] = be;
				break;
			}
		}
	}
}

int rnsc_crypto_register(rnsc_ctx *ctx, const char *name, const rnsc_crypto_ops *ops, void *inst,
			 uint64_t prims)
{
	if (!ctx || !name || !*name || !ops)
		return RNSC_ERR_INVAL;
	if (rnsc_crypto_backend_find(ctx, name))
		return RNSC_ERR_DUPLICATE;
	if (ctx->n_backends >= RNSC_CRYPTO_MAX_BACKENDS)
		return RNSC_ERR_RANGE;
	prims &= (RNSC_PRIM_BIT(RNSC_PRIM_COUNT) - 1);
	if (!slots_present(ops, prims))
		return RNSC_ERR_PLUGIN_DESC;
	size_t i = ctx->n_backends++;
	ctx->backends[i] =
		(rnsc_crypto_backend){.name = name, .ops = ops, .inst = inst, .prims = prims};
	ctx->order[ctx->n_order++] = i;
	rnsc_crypto_rebuild(ctx);
	return 0;
}

int rnsc_crypto_unregister(rnsc_ctx *ctx, const char *name)
{
	size_t idx = RNSC_CRYPTO_MAX_BACKENDS;
	for (size_t i = 0; i < ctx->n_backends; i++)
		if (strcmp(ctx->backends[i].name, name) == 0)
			idx = i;
	if (idx == RNSC_CRYPTO_MAX_BACKENDS)
		return RNSC_ERR_NOTFOUND;
	size_t w = 0;
	for (size_t i = 0; i < ctx->n_order; i++) {
		if (ctx->order[i] == idx)
			continue;
		ctx->order[w++] = ctx->order[i] > idx ? ctx->order[i] - 1 : ctx->order[i];
	}
	ctx->n_order = w;
	for (int p = 0; p < RNSC_PRIM_COUNT; p++)
		ctx->pin[p] = ctx->pin[p] == idx + 1  ? 0
			      : ctx->pin[p] > idx + 1 ? ctx->pin[p] - 1
						      : ctx->pin[p];
	memmove(&ctx->backends[idx], &ctx->backends[idx + 1],
		(ctx->n_backends - idx - 1) * sizeof(ctx->backends[0]));
	ctx->n_backends--;
	rnsc_crypto_rebuild(ctx);
	return 0;
}

static size_t find_index(rnsc_ctx *ctx, const char *s, size_t len)
{
	for (size_t i = 0; i < ctx->n_backends; i++)
		if (strlen(ctx->backends[i].name) == len &&
		    memcmp(ctx->backends[i].name, s, len) == 0)
			return i;
	return RNSC_CRYPTO_MAX_BACKENDS;
}

int rnsc_crypto_set_order(rnsc_ctx *ctx, const char *list)
{
	size_t order[RNSC_CRYPTO_MAX_BACKENDS], n = 0, pin[RNSC_PRIM_COUNT] = {0};
	const char *p = list;
	while (p && *p) {
		while (*p == ',' || isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		const char *s = p;
		while (*p && *p != ',' && !isspace((unsigned char)*p))
			p++;
		size_t len = (size_t)(p - s);
		const char *eq = memchr(s, '=', len);
		if (eq) {
			size_t plen = (size_t)(eq - s), blen = len - plen - 1;
			int prim = -1;
			for (int k = 0; k < RNSC_PRIM_COUNT; k++)
				if (prim_names[k] && strlen(prim_names[k]) == plen &&
				    memcmp(prim_names[k], s, plen) == 0)
					prim = k;
			size_t b = find_index(ctx, eq + 1, blen);
			if (prim < 0 || b == RNSC_CRYPTO_MAX_BACKENDS) {
				rnsc_log(ctx, RNSC_LOG_ERROR, "crypto",
					 "crypto order item '%.*s': %s", (int)len, s,
					 prim < 0 ? "no such primitive" : "backend not loaded");
				return RNSC_ERR_NOTFOUND;
			}
			if (!(ctx->backends[b].prims & RNSC_PRIM_BIT(prim))) {
				rnsc_log(
					ctx, RNSC_LOG_ERROR, "crypto",
					"crypto order item '%.*s': backend '%s' does not implement %s",
					(int)len, s, ctx->backends[b].name, prim_names[prim]);
				return RNSC_ERR_INVAL;
			}
			pin[prim] = b + 1;
			continue;
		}
		size_t found = find_index(ctx, s, len);
		if (found == RNSC_CRYPTO_MAX_BACKENDS) {
			rnsc_log(ctx, RNSC_LOG_ERROR, "crypto",
				 "crypto backend '%.*s' named in the order is not loaded", (int)len,
				 s);
			return RNSC_ERR_NOTFOUND;
		}
		int dup = 0;
		for (size_t k = 0; k < n; k++)
			dup |= order[k] == found;
		if (!dup)
			order[n++] = found;
	}
	memcpy(ctx->order, order, n * sizeof(order[0]));
	ctx->n_order = n;
	memcpy(ctx->pin, pin, sizeof(pin));
	rnsc_crypto_rebuild(ctx);
	return 0;
}

const char *rnsc_crypto_provider(rnsc_ctx *ctx, enum rnsc_prim prim)
{
	if ((unsigned)prim >= RNSC_PRIM_COUNT || !ctx->serve[prim])
		return NULL;
	return ctx->serve[prim]->name;
}

const rnsc_crypto_backend *rnsc_crypto_backend_at(rnsc_ctx *ctx, size_t i)
{
	return i < ctx->n_backends ? &ctx->backends[i] : NULL;
}

const rnsc_crypto_backend *rnsc_crypto_backend_find(rnsc_ctx *ctx, const char *name)
{
	for (size_t i = 0; i < ctx->n_backends; i++)
		if (strcmp(ctx->backends[i].name, name) == 0)
			return &ctx->backends[i];
	return NULL;
}

void rnsc_crypto_set_rng(rnsc_ctx *ctx, rnsc_rng_fn fn, void *ud)
{
	ctx->rng_fn = fn;
	ctx->rng_ud = ud;
}

#define SERVED(ctx, prim, be)                                                                      \
	const rnsc_crypto_backend *be = (ctx)->serve[prim];                                        \
	if (!be)                                                                                   \
		return RNSC_ERR_NOPRIM;

int rnsc_random(rnsc_ctx *ctx, uint8_t *out, size_t len)
{
	if (ctx->rng_fn)
		return ctx->rng_fn(ctx->rng_ud, out, len) ? RNSC_ERR_RNG : 0;
	SERVED(ctx, RNSC_PRIM_RANDOM, be);
	return be->ops->random(be->inst, out, len);
}

int rnsc_sha256(rnsc_ctx *ctx, uint8_t out[32], const uint8_t *msg, size_t len)
{
	SERVED(ctx, RNSC_PRIM_SHA256, be);
	return be->ops->sha256(be->inst, out, msg, len);
}

int rnsc_sha512(rnsc_ctx *ctx, uint8_t out[64], const uint8_t *msg, size_t len)
{
	SERVED(ctx, RNSC_PRIM_SHA512, be);
	return be->ops->sha512(be->inst, out, msg, len);
}

int rnsc_hash_init(rnsc_ctx *ctx, rnsc_hash *h, int alg)
{
	if (alg != RNSC_HASH_SHA256 && alg != RNSC_HASH_SHA512)
		return RNSC_ERR_INVAL;
	h->be = NULL;
	SERVED(ctx, RNSC_PRIM_HASH_STREAM, be);
	int rc = be->ops->hash_init(be->inst, &h->st, alg);
	if (rc == 0) {
		h->be = be;
		h->alg = alg;
	}
	return rc;
}

int rnsc_hash_update(rnsc_hash *h, const uint8_t *p, size_t len)
{
	if (!h->be)
		return RNSC_ERR_STATE;
	return h->be->ops->hash_update(h->be->inst, &h->st, p, len);
}

int rnsc_hash_final(rnsc_hash *h, uint8_t *out)
{
	if (!h->be)
		return RNSC_ERR_STATE;
	int rc = h->be->ops->hash_final(h->be->inst, &h->st, out);
	h->be = NULL;
	return rc;
}

int rnsc_hash_copy(rnsc_hash *dst, const rnsc_hash *src)
{
	if (!dst || !src)
		return RNSC_ERR_INVAL;
	dst->be = NULL;
	if (!src->be)
		return RNSC_ERR_STATE;
	if (!RNSC_OPS_HAS(src->be->ops, rnsc_crypto_ops, hash_copy))
		return RNSC_ERR_NOPRIM;
	int rc = src->be->ops->hash_copy(src->be->inst, &dst->st, &src->st);
	if (rc == 0) {
		dst->be = src->be;
		dst->alg = src->alg;
	}
	return rc;
}

void rnsc_hash_abort(rnsc_hash *h)
{
	if (h->be)
		h->be->ops->hash_abort(h->be->inst, &h->st);
	h->be = NULL;
}

int rnsc_hmac_sha256(rnsc_ctx *ctx, uint8_t out[32], const uint8_t *key, size_t key_len,
		     const uint8_t *msg, size_t msg_len)
{
	SERVED(ctx, RNSC_PRIM_HMAC_SHA256, be);
	return be->ops->hmac_sha256(be->inst, out, key, key_len, msg, msg_len);
}

int rnsc_hkdf_sha256(rnsc_ctx *ctx, uint8_t *out, size_t out_len, const uint8_t *ikm,
		     size_t ikm_len, const uint8_t *salt, size_t salt_len, const uint8_t *info,
		     size_t info_len)
{
	/* RFC 5869 caps the output at 255 blocks; the reference refuses zero-length output
	 * and missing input material, but derives from empty bytes (its check compares
	 * derive_from with the str "", which b"" never equals). */
	if (out_len == 0 || out_len > 255 * 32 || (!ikm && ikm_len))
		return RNSC_ERR_INVAL;
	SERVED(ctx, RNSC_PRIM_HKDF_SHA256, be);
	return be->ops->hkdf_sha256(be->inst, out, out_len, ikm, ikm_len, salt, salt_len, info,
				    info_len);
}

int rnsc_aes256_cbc_encrypt(rnsc_ctx *ctx, uint8_t *out, const uint8_t key[32],
			    const uint8_t iv[16], const uint8_t *in, size_t len)
{
	if (len % 16)
		return RNSC_ERR_INVAL;
	SERVED(ctx, RNSC_PRIM_AES256_CBC, be);
	return be->ops->aes256_cbc_encrypt(be->inst, out, key, iv, in, len);
}

int rnsc_aes256_cbc_decrypt(rnsc_ctx *ctx, uint8_t *out, const uint8_t key[32],
			    const uint8_t iv[16], const uint8_t *in, size_t len)
{
	if (len % 16)
		return RNSC_ERR_INVAL;
	SERVED(ctx, RNSC_PRIM_AES256_CBC, be);
	return be->ops->aes256_cbc_decrypt(be->inst, out, key, iv, in, len);
}

int rnsc_x25519_public(rnsc_ctx *ctx, uint8_t pub[32], const uint8_t priv[32])
{
	SERVED(ctx, RNSC_PRIM_X25519, be);
	return be->ops->x25519_public(be->inst, pub, priv);
}

int rnsc_x25519_generate(rnsc_ctx *ctx, uint8_t priv[32], uint8_t pub[32])
{
	int rc = rnsc_random(ctx, priv, 32);
	if (rc == 0)
		rc = rnsc_x25519_public(ctx, pub, priv);
	if (rc)
		rnsc_memzero(priv, 32);
	return rc;
}

int rnsc_x25519(rnsc_ctx *ctx, uint8_t shared[32], const uint8_t priv[32],
		const uint8_t peer_pub[32])
{
	SERVED(ctx, RNSC_PRIM_X25519, be);
	int rc = be->ops->x25519(be->inst, shared, priv, peer_pub);
	/* Defence in depth: never hand an all-zero secret on, whatever the backend said. */
	static const uint8_t zero[32];
	if (rc == 0 && rnsc_ct_memcmp(shared, zero, 32) == 0)
		rc = RNSC_ERR_LOW_ORDER;
	if (rc)
		rnsc_memzero(shared, 32);
	return rc;
}

int rnsc_ed25519_public(rnsc_ctx *ctx, uint8_t pub[32], const uint8_t seed[32])
{
	SERVED(ctx, RNSC_PRIM_ED25519, be);
	return be->ops->ed25519_public(be->inst, pub, seed);
}

int rnsc_ed25519_generate(rnsc_ctx *ctx, uint8_t seed[32], uint8_t pub[32])
{
	int rc = rnsc_random(ctx, seed, 32);
	if (rc == 0)
		rc = rnsc_ed25519_public(ctx, pub, seed);
	if (rc)
		rnsc_memzero(seed, 32);
	return rc;
}

int rnsc_ed25519_sign(rnsc_ctx *ctx, uint8_t sig[64], const uint8_t seed[32], const uint8_t pub[32],
		      const uint8_t *msg, size_t len)
{
	SERVED(ctx, RNSC_PRIM_ED25519, be);
	return be->ops->ed25519_sign(be->inst, sig, seed, pub, msg, len);
}

/*
 * Encodings (sign bit cleared) of the eight Ed25519 points of small order, including the two
 * non-canonical ones (y = p, y = p + 1). A key or commitment R among them lets anyone produce
 * signatures that verify for a fraction of all messages; libsodium refuses them and OpenSSL
 * does not, so the check lives here and every backend gives the same verdict.
 */
static const uint8_t small_order_y[7][32] = {
	{0},
	{0x01},
	{0xc7, 0x17, 0x6a, 0x70, 0x3d, 0x4d, 0xd8, 0x4f, 0xba, 0x3c, 0x0b,
	 0x76, 0x0d, 0x10, 0x67, 0x0f, 0x2a, 0x20, 0x53, 0xfa, 0x2c, 0x39,
	 0xcc, 0xc6, 0x4e, 0xc7, 0xfd, 0x77, 0x92, 0xac, 0x03, 0x7a},
	{0x26, 0xe8, 0x95, 0x8f, 0xc2, 0xb2, 0x27, 0xb0, 0x45, 0xc3, 0xf4,
	 0x89, 0xf2, 0xef, 0x98, 0xf0, 0xd5, 0xdf, 0xac, 0x05, 0xd3, 0xc6,
	 0x33, 0x39, 0xb1, 0x38, 0x02, 0x88, 0x6d, 0x53, 0xfc, 0x05},
	{0xec, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
	{0xed, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
	{0xee, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
};

bool rnsc_ed25519_small_order(const uint8_t enc[32])
{
	for (size_t i = 0; i < 7; i++) {
		if (memcmp(enc, small_order_y[i], 31) == 0 &&
		    (enc[31] & 0x7f) == small_order_y[i][31])
			return true;
	}
	return false;
}

int rnsc_ed25519_verify(rnsc_ctx *ctx, const uint8_t sig[64], const uint8_t pub[32],
			const uint8_t *msg, size_t len)
{
	SERVED(ctx, RNSC_PRIM_ED25519, be);
	if (rnsc_ed25519_small_order(pub) || rnsc_ed25519_small_order(sig))
		return RNSC_ERR_SIGNATURE;
	return be->ops->ed25519_verify(be->inst, sig, pub, msg, len);
}

size_t rnsc_pkcs7_padded_len(size_t len)
{
	return len + (16 - len % 16);
}

int rnsc_pkcs7_pad(uint8_t *out, size_t out_cap, const uint8_t *in, size_t len)
{
	size_t total = rnsc_pkcs7_padded_len(len);
	if (total > out_cap || total > (size_t)INT32_MAX)
		return RNSC_ERR_BUFSIZE;
	uint8_t n = (uint8_t)(total - len);
	if (len && out != in)
		memmove(out, in, len);
	memset(out + len, n, n);
	return (int)total;
}

int rnsc_pkcs7_unpad_len(const uint8_t *in, size_t len)
{
	if (len == 0 || len % 16 || len > (size_t)INT32_MAX)
		return RNSC_ERR_PADDING;
	uint8_t n = in[len - 1];
	if (n == 0 || n > 16)
		return RNSC_ERR_PADDING;
	/* Checked without early exit; the HMAC has already authenticated these bytes. */
	uint8_t bad = 0;
	for (size_t i = len - n; i < len; i++)
		bad |= (uint8_t)(in[i] ^ n);
	if (bad)
		return RNSC_ERR_PADDING;
	return (int)(len - n);
}

/* ---- RandomX machines ------------------------------------------------------------------ */

struct rnsc_randomx {
	rnsc_ctx *ctx;
	/* The serving backend's table and instance, copied rather than pointed to: the
	 * backend array moves when another backend is unregistered. */
	const rnsc_crypto_ops *ops;
	void *inst;
	void *vm;
};

int rnsc_randomx_new(rnsc_ctx *ctx, rnsc_randomx **out, uint32_t flags, const uint8_t *key,
		     size_t key_len, unsigned init_threads)
{
	if (!ctx || !out || (key_len && !key))
		return RNSC_ERR_INVAL;
	*out = NULL;
	SERVED(ctx, RNSC_PRIM_RANDOMX, be);
	rnsc_randomx *rx = rnsc_calloc(ctx, 1, sizeof(*rx));
	if (!rx)
		return RNSC_ERR_NOMEM;
	rx->ctx = ctx;
	rx->ops = be->ops;
	rx->inst = be->inst;
	int rc = be->ops->randomx_new(be->inst, flags, key, key_len, init_threads, &rx->vm);
	if (rc != 0 || !rx->vm) {
		int e = errno; /* the backend's reason for RNSC_ERR_NOMEM, kept for the caller */
		rnsc_free(ctx, rx);
		errno = e;
		return rc ? rc : RNSC_ERR_CRYPTO;
	}
	*out = rx;
	return 0;
}

int rnsc_randomx_hash(rnsc_randomx *rx, uint8_t out[32], const uint8_t *in, size_t len)
{
	if (!rx || !out || (len && !in))
		return RNSC_ERR_INVAL;
	return rx->ops->randomx_hash(rx->inst, rx->vm, out, in, len);
}

int rnsc_randomx_info(rnsc_randomx *rx, char *buf, size_t cap)
{
	if (!rx || !buf || !cap)
		return RNSC_ERR_INVAL;
	return rx->ops->randomx_info(rx->inst, rx->vm, buf, cap);
}

int rnsc_randomx_backend_info(rnsc_ctx *ctx, char *buf, size_t cap)
{
	if (!ctx || !buf || !cap)
		return RNSC_ERR_INVAL;
	SERVED(ctx, RNSC_PRIM_RANDOMX, be);
	return be->ops->randomx_info(be->inst, NULL, buf, cap);
}

void rnsc_randomx_del(rnsc_randomx *rx)
{
	if (!rx)
		return;
	rx->ops->randomx_del(rx->inst, rx->vm);
	rnsc_free(rx->ctx, rx);
}
