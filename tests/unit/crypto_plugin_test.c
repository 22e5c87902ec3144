/* SPDX-License-Identifier: MIT */
/* The crypto plugins driven directly through their ops tables: edge arguments the vectors
 * do not reach, agreement between backends on inputs no vector has (HKDF info longer than
 * OpenSSL's own limit), and OpenSSL allocation failures injected at every step. */
#include <dlfcn.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto.h"
#include "cu_run.h"
#include "plugin_host.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
/* OpenSSL 3.0 itself leaks on some of its own allocation-failure paths inside
 * OSSL_LIB_CTX_new and EVP_*_fetch; allocations made while an injected instance
 * init runs are therefore not leak-checked (everything else still is). */
#define LEAK_CHECK_OFF() __lsan_disable()
#define LEAK_CHECK_ON() __lsan_enable()
#else
#define LEAK_CHECK_OFF() ((void)0)
#define LEAK_CHECK_ON() ((void)0)
#endif

/* ---- OpenSSL allocation failure injection (installed before libcrypto allocates) ------- */
static unsigned long alloc_count, fail_at;

static void *inj_malloc(size_t n, const char *file, int line)
{
	(void)file, (void)line;
	if (fail_at && ++alloc_count >= fail_at)
		return NULL;
	return malloc(n);
}

static void *inj_realloc(void *p, size_t n, const char *file, int line)
{
	(void)file, (void)line;
	if (fail_at && ++alloc_count >= fail_at)
		return NULL;
	return realloc(p, n);
}

static void inj_free(void *p, const char *file, int line)
{
	(void)file, (void)line;
	free(p);
}

static rnsc_ctx *C;
static rnsc_plugin_host *H;

static const rnsc_plugin_rec *plugin(const char *name)
{
	const rnsc_plugin_rec *r = rnsc_plugin_host_find(H, name);
	CU_ASSERT_PTR_NOT_NULL(r);
	return r;
}

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 31u);
}

static void test_long_hkdf_info_agrees(void)
{
	const rnsc_plugin_rec *o = plugin("openssl"), *s = plugin("sodium");
	if (!o || !s)
		return;
	const rnsc_crypto_ops *oo = o->desc->ops, *so = s->desc->ops;
	size_t info_len = 40000; /* beyond OpenSSL 3.0's 32 KiB HKDF info limit */
	uint8_t *info = malloc(info_len), ikm[32], salt[16], a[100], b[100];
	fill(info, info_len, 7);
	fill(ikm, sizeof(ikm), 1);
	fill(salt, sizeof(salt), 2);
	CU_ASSERT_EQUAL(oo->hkdf_sha256(o->inst, a, sizeof(a), ikm, 32, salt, 16, info, info_len),
			0);
	CU_ASSERT_EQUAL(so->hkdf_sha256(s->inst, b, sizeof(b), ikm, 32, salt, 16, info, info_len),
			0);
	CU_ASSERT_EQUAL(memcmp(a, b, sizeof(a)), 0);
	/* Empty salt means HashLen zero bytes on both. */
	CU_ASSERT_EQUAL(oo->hkdf_sha256(o->inst, a, 64, ikm, 32, NULL, 0, NULL, 0), 0);
	CU_ASSERT_EQUAL(so->hkdf_sha256(s->inst, b, 64, ikm, 32, NULL, 0, NULL, 0), 0);
	CU_ASSERT_EQUAL(memcmp(a, b, 64), 0);
	/* And Nettle, whose HKDF is its own hkdf_extract/hkdf_expand, not built here. */
	const rnsc_plugin_rec *n = plugin("nettle");
	if (n) {
		const rnsc_crypto_ops *no = n->desc->ops;
		CU_ASSERT_EQUAL(
			oo->hkdf_sha256(o->inst, a, sizeof(a), ikm, 32, salt, 16, info, info_len),
			0);
		CU_ASSERT_EQUAL(
			no->hkdf_sha256(n->inst, b, sizeof(b), ikm, 32, salt, 16, info, info_len),
			0);
		CU_ASSERT_EQUAL(memcmp(a, b, sizeof(a)), 0);
		CU_ASSERT_EQUAL(oo->hkdf_sha256(o->inst, a, 33, ikm, 32, NULL, 0, NULL, 0), 0);
		CU_ASSERT_EQUAL(no->hkdf_sha256(n->inst, b, 33, ikm, 32, NULL, 0, NULL, 0), 0);
		CU_ASSERT_EQUAL(memcmp(a, b, 33), 0);
	}
	free(info);
}

/* OpenSSL keeps a finished HMAC context for the next call: a sequence of keys (long, empty,
 * short, the same again) and messages gives libsodium's answer every time. */
static void test_hmac_sequence_agrees(void)
{
	const rnsc_plugin_rec *o = plugin("openssl"), *s = plugin("sodium");
	if (!o || !s)
		return;
	const rnsc_crypto_ops *oo = o->desc->ops, *so = s->desc->ops;
	uint8_t key[100], msg[300], a[32], b[32];
	fill(key, sizeof(key), 21);
	fill(msg, sizeof(msg), 22);
	static const size_t klen[] = {100, 0, 16, 64, 0, 32, 32};
	static const size_t mlen[] = {300, 0, 64, 1, 300, 0, 77};
	for (size_t i = 0; i < sizeof(klen) / sizeof(klen[0]); i++) {
		CU_ASSERT_EQUAL(oo->hmac_sha256(o->inst, a, klen[i] ? key : NULL, klen[i],
						mlen[i] ? msg : NULL, mlen[i]),
				0);
		CU_ASSERT_EQUAL(so->hmac_sha256(s->inst, b, klen[i] ? key : NULL, klen[i],
						mlen[i] ? msg : NULL, mlen[i]),
				0);
		CU_ASSERT_EQUAL(memcmp(a, b, 32), 0);
	}
	const rnsc_plugin_rec *n = plugin("nettle");
	const rnsc_crypto_ops *no = n ? n->desc->ops : NULL;
	for (size_t i = 0; n && i < sizeof(klen) / sizeof(klen[0]); i++) {
		CU_ASSERT_EQUAL(oo->hmac_sha256(o->inst, a, klen[i] ? key : NULL, klen[i],
						mlen[i] ? msg : NULL, mlen[i]),
				0);
		CU_ASSERT_EQUAL(no->hmac_sha256(n->inst, b, klen[i] ? key : NULL, klen[i],
						mlen[i] ? msg : NULL, mlen[i]),
				0);
		CU_ASSERT_EQUAL(memcmp(a, b, 32), 0);
	}
}

static void edge_cases(const char *name)
{
	const rnsc_plugin_rec *r = plugin(name);
	if (!r)
		return;
	const rnsc_crypto_ops *ops = r->desc->ops;
	void *in = r->inst;
	uint8_t out[8200], key[32], iv[16], msg[64], big[8161];
	fill(key, 32, 3);
	fill(iv, 16, 4);
	fill(msg, 64, 5);
	CU_ASSERT_EQUAL(ops->self_test(in), 0);
	CU_ASSERT_EQUAL(ops->random(in, out, 0), 0);
	CU_ASSERT_EQUAL(ops->random(in, out, sizeof(out)), 0);
	/* HKDF output bounds: 255 blocks is the most RFC 5869 allows. */
	CU_ASSERT_EQUAL(ops->hkdf_sha256(in, out, 8160, key, 32, NULL, 0, NULL, 0), 0);
	CU_ASSERT(ops->hkdf_sha256(in, big, sizeof(big), key, 32, NULL, 0, NULL, 0) < 0);
	/* Streaming: several live states, unknown algorithm, abort. */
	rnsc_hash_state s1, s2;
	CU_ASSERT(ops->hash_init(in, &s1, 77) < 0);
	CU_ASSERT_EQUAL(ops->hash_init(in, &s1, RNSC_HASH_SHA256), 0);
	CU_ASSERT_EQUAL(ops->hash_init(in, &s2, RNSC_HASH_SHA512), 0);
	CU_ASSERT_EQUAL(ops->hash_update(in, &s1, msg, 0), 0);
	CU_ASSERT_EQUAL(ops->hash_update(in, &s2, msg, 64), 0);
	ops->hash_abort(in, &s2);
	CU_ASSERT_EQUAL(ops->hash_final(in, &s1, out), 0);
	uint8_t direct[32];
	CU_ASSERT_EQUAL(ops->sha256(in, direct, msg, 0), 0);
	CU_ASSERT_EQUAL(memcmp(out, direct, 32), 0);
	/* Copy: a shared prefix finished two ways, each as if hashed alone; the source stays
	 * live; a dead source is refused and leaves a state abort() accepts. */
	for (int alg = RNSC_HASH_SHA256; alg <= RNSC_HASH_SHA512; alg++) {
		size_t dl = alg == RNSC_HASH_SHA256 ? 32 : 64;
		uint8_t d1[64], d2[64], w1[64], w2[64], joined[64 + 3];
		CU_ASSERT_FATAL(RNSC_OPS_HAS(ops, rnsc_crypto_ops, hash_copy));
		CU_ASSERT_EQUAL(ops->hash_init(in, &s1, alg), 0);
		CU_ASSERT_EQUAL(ops->hash_update(in, &s1, msg, 40), 0);
		CU_ASSERT_EQUAL(ops->hash_copy(in, &s2, &s1), 0);
		CU_ASSERT_EQUAL(ops->hash_update(in, &s2, (const uint8_t *)"abc", 3), 0);
		CU_ASSERT_EQUAL(ops->hash_update(in, &s1, msg + 40, 24), 0);
		CU_ASSERT_EQUAL(ops->hash_final(in, &s2, d2), 0);
		CU_ASSERT_EQUAL(ops->hash_final(in, &s1, d1), 0);
		memcpy(joined, msg, 40);
		memcpy(joined + 40, "abc", 3);
		if (alg == RNSC_HASH_SHA256) {
			CU_ASSERT_EQUAL(ops->sha256(in, w1, msg, 64), 0);
			CU_ASSERT_EQUAL(ops->sha256(in, w2, joined, 43), 0);
		} else {
			CU_ASSERT_EQUAL(ops->sha512(in, w1, msg, 64), 0);
			CU_ASSERT_EQUAL(ops->sha512(in, w2, joined, 43), 0);
		}
		CU_ASSERT_EQUAL(memcmp(d1, w1, dl), 0);
		CU_ASSERT_EQUAL(memcmp(d2, w2, dl), 0);
	}
	CU_ASSERT(ops->hash_copy(in, &s2, &s1) < 0); /* s1 was finalised */
	ops->hash_abort(in, &s2);
	CU_ASSERT(ops->hash_copy(in, &s2, NULL) < 0);
	CU_ASSERT(ops->hash_copy(in, NULL, &s1) < 0);
	/* HMAC with a key longer than the block size, and an empty key. */
	uint8_t longkey[200];
	fill(longkey, sizeof(longkey), 9);
	CU_ASSERT_EQUAL(ops->hmac_sha256(in, out, longkey, sizeof(longkey), msg, 64), 0);
	CU_ASSERT_EQUAL(ops->hmac_sha256(in, out, NULL, 0, NULL, 0), 0);
	/* Ed25519: garbage public keys and signatures never verify. */
	uint8_t seed[32], pub[32], sig[64], badpub[32];
	fill(seed, 32, 11);
	CU_ASSERT_EQUAL(ops->ed25519_public(in, pub, seed), 0);
	CU_ASSERT_EQUAL(ops->ed25519_sign(in, sig, seed, pub, msg, 64), 0);
	CU_ASSERT_EQUAL(ops->ed25519_verify(in, sig, pub, msg, 64), 0);
	memset(badpub, 0xff, sizeof(badpub)); /* not a valid point encoding */
	CU_ASSERT(ops->ed25519_verify(in, sig, badpub, msg, 64) < 0);
	uint8_t highs[64];
	memcpy(highs, sig, 64);
	memset(highs + 32, 0xff, 32); /* S out of range */
	CU_ASSERT_EQUAL(ops->ed25519_verify(in, highs, pub, msg, 64), RNSC_ERR_SIGNATURE);
	CU_ASSERT_EQUAL(ops->ed25519_sign(in, sig, seed, pub, NULL, 0), 0);
	CU_ASSERT_EQUAL(ops->ed25519_verify(in, sig, pub, NULL, 0), 0);
	/* X25519: all-zero peer is low order. */
	uint8_t zero[32] = {0}, shared[32];
	CU_ASSERT_EQUAL(ops->x25519(in, shared, seed, zero), RNSC_ERR_LOW_ORDER);
	if (ops->aes256_cbc_encrypt) {
		CU_ASSERT_EQUAL(ops->aes256_cbc_encrypt(in, out, key, iv, msg, 15), RNSC_ERR_INVAL);
		CU_ASSERT_EQUAL(ops->aes256_cbc_decrypt(in, out, key, iv, msg, 17), RNSC_ERR_INVAL);
		CU_ASSERT_EQUAL(ops->aes256_cbc_encrypt(in, out, key, iv, msg, 0), 0);
	}
}

static void test_edges_openssl(void)
{
	edge_cases("openssl");
}

static void test_edges_sodium(void)
{
	edge_cases("sodium");
}

static void test_edges_nettle(void)
{
	edge_cases("nettle");
}

/* Nettle against OpenSSL on what no vector pins: CBC over many blocks in place (Nettle
 * advances a private IV copy; the caller's stays as given), X25519 with the peer's top bit
 * set (RFC 7748 masks it), and a whole exchange both ways. Then every op on a finished
 * instance refuses with RNSC_ERR_STATE and missing buffers with RNSC_ERR_INVAL. */
static void test_nettle_agrees_and_refuses(void)
{
	const rnsc_plugin_rec *o = plugin("openssl"), *n = plugin("nettle");
	if (!o || !n)
		return;
	const rnsc_crypto_ops *oo = o->desc->ops, *no = n->desc->ops;
	uint8_t key[32], iv[16], iv0[16], buf[4096], a[4096], b[4096], pa[32], pb[32], sa[32],
		sb[32];
	fill(key, 32, 41);
	fill(iv, 16, 42);
	memcpy(iv0, iv, 16);
	fill(buf, sizeof(buf), 43);
	CU_ASSERT_EQUAL(oo->aes256_cbc_encrypt(o->inst, a, key, iv, buf, sizeof(buf)), 0);
	memcpy(b, buf, sizeof(b));
	CU_ASSERT_EQUAL(no->aes256_cbc_encrypt(n->inst, b, key, iv, b, sizeof(b)), 0);
	CU_ASSERT_EQUAL(memcmp(a, b, sizeof(a)), 0);
	CU_ASSERT_EQUAL(memcmp(iv, iv0, 16), 0);
	CU_ASSERT_EQUAL(no->aes256_cbc_decrypt(n->inst, b, key, iv, b, sizeof(b)), 0);
	CU_ASSERT_EQUAL(memcmp(b, buf, sizeof(b)), 0);
	CU_ASSERT_EQUAL(no->x25519_public(n->inst, pa, key), 0);
	CU_ASSERT_EQUAL(oo->x25519_public(o->inst, pb, buf), 0);
	CU_ASSERT_EQUAL(no->x25519(n->inst, sa, key, pb), 0);
	CU_ASSERT_EQUAL(oo->x25519(o->inst, sb, buf, pa), 0);
	CU_ASSERT_EQUAL(memcmp(sa, sb, 32), 0);
	pb[31] |= 0x80;
	CU_ASSERT_EQUAL(no->x25519(n->inst, sb, key, pb), 0);
	CU_ASSERT_EQUAL(memcmp(sa, sb, 32), 0);

	void *dead = calloc(1, n->desc->inst_size);
	rnsc_hash_state st;
	CU_ASSERT_PTR_NOT_NULL_FATAL(dead);
	CU_ASSERT_EQUAL(n->desc->init(dead, NULL), 0); /* no host: logging is skipped */
	CU_ASSERT_EQUAL(no->sha256(dead, a, NULL, 0), 0);
	n->desc->fini(dead);
	CU_ASSERT_EQUAL(n->desc->init(NULL, NULL), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(no->self_test(dead), RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(no->random(dead, a, 1), RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(no->sha256(dead, a, buf, 1), RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(no->sha512(dead, a, buf, 1), RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(no->hash_init(dead, &st, RNSC_HASH_SHA256), RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(no->hash_update(dead, &st, buf, 1), RNSC_ERR_STATE);
	no->hash_abort(dead, &st);
	no->hash_abort(dead, NULL);
	CU_ASSERT_EQUAL(no->hmac_sha256(dead, a, key, 32, buf, 1), RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(no->hkdf_sha256(dead, a, 32, key, 32, NULL, 0, NULL, 0), RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(no->aes256_cbc_encrypt(dead, a, key, iv, buf, 16), RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(no->x25519_public(dead, pa, key), RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(no->x25519(dead, sa, key, pa), RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(no->ed25519_public(dead, pa, key), RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(no->ed25519_sign(dead, a, key, pa, buf, 1), RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(no->ed25519_verify(dead, a, pa, buf, 1), RNSC_ERR_STATE);
	free(dead);

	void *in = n->inst;
	CU_ASSERT_EQUAL(no->random(in, NULL, 1), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(no->sha256(in, NULL, buf, 1), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(no->sha512(in, a, NULL, 1), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(no->hash_init(in, NULL, RNSC_HASH_SHA256), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(no->hash_init(in, &st, RNSC_HASH_SHA256), 0);
	CU_ASSERT_EQUAL(no->hash_update(in, &st, NULL, 1), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(no->hash_final(in, &st, NULL), RNSC_ERR_INVAL); /* releases st */
	CU_ASSERT_EQUAL(no->hash_final(in, &st, a), RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(no->hash_final(in, NULL, a), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(no->hmac_sha256(in, NULL, key, 32, buf, 1), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(no->hkdf_sha256(in, a, 0, key, 32, NULL, 0, NULL, 0), 0);
	CU_ASSERT_EQUAL(no->hkdf_sha256(in, NULL, 32, key, 32, NULL, 0, NULL, 0), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(no->aes256_cbc_decrypt(in, a, NULL, iv, buf, 16), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(no->x25519_public(in, NULL, key), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(no->x25519(in, sa, NULL, pa), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(no->ed25519_public(in, NULL, key), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(no->ed25519_sign(in, a, key, NULL, buf, 1), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(no->ed25519_verify(in, a, NULL, buf, 1), RNSC_ERR_INVAL);
	/* The entry point checks the host it is handed. */
	int (*entry)(const rnsc_host_api *, const rnsc_plugin_desc **) = NULL;
	*(void **)&entry = n->handle ? dlsym(n->handle, "rnsc_plugin_init") : NULL;
	CU_ASSERT_PTR_NOT_NULL_FATAL(entry);
	const rnsc_plugin_desc *d = NULL;
	CU_ASSERT_EQUAL(entry(NULL, &d), 0);
	CU_ASSERT_PTR_EQUAL(d, n->desc);
	CU_ASSERT_EQUAL(entry(NULL, NULL), RNSC_ERR_INVAL);
	rnsc_host_api newer = {.struct_size = sizeof(newer),
			       .abi_major = RNSC_PLUGIN_ABI_MAJOR + 1};
	CU_ASSERT_EQUAL(entry(&newer, &d), RNSC_ERR_ABI);
}

/* Ed25519 with a small-order key: a signature (R small order, S = 0) that OpenSSL accepts for
 * some messages exists for every canonical blocklisted key; libsodium refuses them all, and
 * so does rnsc_ed25519_verify, whichever backend serves it. */
static void test_small_order_ed25519(void)
{
	const rnsc_plugin_rec *o = plugin("openssl"), *s = plugin("sodium");
	if (!o || !s)
		return;
	static const uint8_t y1[32] = {0x01};
	uint8_t keys[8][32];
	size_t nkeys = 0;
	/* identity, order 2 (y = p - 1), order 4 (y = 0), and the two order-8 y values */
	memcpy(keys[nkeys++], y1, 32);
	memset(keys[nkeys], 0xff, 32);
	keys[nkeys][0] = 0xec, keys[nkeys][31] = 0x7f, nkeys++;
	memset(keys[nkeys++], 0, 32);
	static const char *o8[2] = {
		"c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
		"26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05"};
	for (int k = 0; k < 2; k++, nkeys++)
		for (int i = 0; i < 32; i++) {
			unsigned v;
			CU_ASSERT_EQUAL(sscanf(o8[k] + 2 * i, "%2x", &v), 1);
			keys[nkeys][i] = (uint8_t)v;
		}
	const rnsc_crypto_ops *oo = o->desc->ops, *so = s->desc->ops;
	for (size_t a = 0; a < nkeys; a++) {
		CU_ASSERT(rnsc_ed25519_small_order(keys[a]));
		uint8_t flipped[32];
		memcpy(flipped, keys[a], 32);
		flipped[31] ^= 0x80; /* the sign bit does not matter */
		CU_ASSERT(rnsc_ed25519_small_order(flipped));
		int forged = 0;
		for (size_t r = 0; r < nkeys; r++)
			for (int sign = 0; sign < 2; sign++)
				for (uint8_t m = 0; m < 16; m++) {
					uint8_t sig[64] = {0};
					memcpy(sig, keys[r], 32);
					sig[31] |= (uint8_t)(sign << 7);
					if (oo->ed25519_verify(o->inst, sig, keys[a], &m, 1) == 0)
						forged++;
					CU_ASSERT_NOT_EQUAL(
						so->ed25519_verify(s->inst, sig, keys[a], &m, 1),
						0);
					CU_ASSERT_EQUAL(rnsc_ed25519_verify(C, sig, keys[a], &m, 1),
							RNSC_ERR_SIGNATURE);
				}
		CU_ASSERT(forged > 0);
	}
	/* an ordinary key is not on the list */
	uint8_t seed[32], pub[32];
	fill(seed, 32, 9);
	CU_ASSERT_EQUAL(rnsc_ed25519_public(C, pub, seed), 0);
	CU_ASSERT(!rnsc_ed25519_small_order(pub));
}

static int quiet_log_count;
static void quiet_log(void *hc, int level, const char *plugin_name, const char *msg)
{
	(void)hc, (void)level, (void)plugin_name, (void)msg;
	quiet_log_count++;
}
static void *h_alloc(void *hc, size_t n)
{
	(void)hc;
	return malloc(n);
}
static void h_free(void *hc, void *p)
{
	(void)hc;
	free(p);
}

/* Every primitive, and a fresh instance's init, with the nth libcrypto allocation failing:
 * each call either works or reports an error; none crashes, and afterwards all work. */
static void test_openssl_alloc_failures(void)
{
	const rnsc_plugin_rec *r = plugin("openssl");
	if (!r)
		return;
	const rnsc_crypto_ops *ops = r->desc->ops;
	rnsc_host_api api = {.struct_size = sizeof(api),
			     .abi_major = RNSC_PLUGIN_ABI_MAJOR,
			     .log = quiet_log,
			     .alloc = h_alloc,
			     .free = h_free};
	uint8_t key[32], iv[16], msg[64], out[128], seed[32], pub[32], sig[64], peer[32];
	fill(key, 32, 1);
	fill(iv, 16, 2);
	fill(msg, 64, 3);
	fill(seed, 32, 4);
	CU_ASSERT_EQUAL_FATAL(ops->ed25519_public(r->inst, pub, seed), 0);
	CU_ASSERT_EQUAL_FATAL(ops->x25519_public(r->inst, peer, key), 0);
	unsigned failures_seen = 0;
	/* Instance set-up: fail each allocation in turn until init gets through unharmed. */
	unsigned long nth;
	/* Every early allocation, then a stride: the later ones are repetitive provider
	 * fetches, and each try re-runs the whole init. */
	for (nth = 1; nth < 100000; nth += nth < 300 ? 1 : 13) {
		void *inst = calloc(1, r->desc->inst_size);
		alloc_count = 0;
		fail_at = nth;
		LEAK_CHECK_OFF();
		int irc = r->desc->init(inst, &api);
		LEAK_CHECK_ON();
		fail_at = 0;
		CU_ASSERT(irc <= 0);
		if (irc == 0)
			r->desc->fini(inst);
		free(inst);
		if (irc == 0)
			break;
		failures_seen++;
	}
	CU_ASSERT(nth > 1 && nth < 100000);
	/* The primitives on a healthy instance, failing the nth allocation from the call on. */
	void *inst = calloc(1, r->desc->inst_size);
	CU_ASSERT_EQUAL_FATAL(r->desc->init(inst, &api), 0);
	for (nth = 1; nth <= 40; nth++) {
		for (int op = 0; op < 12; op++) {
			rnsc_hash_state st;
			int rc = 0;
			alloc_count = 0;
			fail_at = nth;
			switch (op) {
			case 0:
				rc = ops->sha256(inst, out, msg, 64);
				break;
			case 1:
				rc = ops->sha512(inst, out, msg, 64);
				break;
			case 2:
				rc = ops->hmac_sha256(inst, out, key, 32, msg, 64);
				break;
			case 3:
				rc = ops->hkdf_sha256(inst, out, 64, key, 32, iv, 16, msg, 64);
				break;
			case 4:
				rc = ops->aes256_cbc_encrypt(inst, out, key, iv, msg, 64);
				break;
			case 5:
				rc = ops->aes256_cbc_decrypt(inst, out, key, iv, msg, 64);
				break;
			case 6:
				rc = ops->x25519_public(inst, out, key);
				break;
			case 7:
				rc = ops->x25519(inst, out, key, peer);
				break;
			case 8:
				rc = ops->ed25519_sign(inst, sig, seed, pub, msg, 64);
				break;
			case 9:
				rc = ops->ed25519_verify(inst, sig, pub, msg, 64);
				rc = rc == RNSC_ERR_SIGNATURE
					     ? 0
					     : rc; /* sig may be from a failed sign */
				break;
			case 10:
				rc = ops->hash_init(inst, &st, RNSC_HASH_SHA256);
				if (rc == 0) {
					rc = ops->hash_update(inst, &st, msg, 64);
					if (rc == 0)
						rc = ops->hash_final(inst, &st, out);
					else
						ops->hash_abort(inst, &st);
				}
				break;
			case 11: {
				rnsc_hash_state cp;
				fail_at = 0;
				rc = ops->hash_init(inst, &st, RNSC_HASH_SHA256);
				CU_ASSERT_EQUAL(rc, 0);
				alloc_count = 0;
				fail_at = nth;
				if (rc == 0) {
					rc = ops->hash_copy(inst, &cp, &st);
					if (rc == 0)
						rc = ops->hash_final(inst, &cp, out);
					else
						ops->hash_abort(inst, &cp);
					ops->hash_abort(inst, &st);
				}
				break;
			}
			}
			fail_at = 0;
			CU_ASSERT(rc <= 0);
			failures_seen += rc < 0;
		}
	}
	CU_ASSERT_EQUAL(ops->self_test(inst), 0); /* unharmed afterwards */
	r->desc->fini(inst);
	free(inst);
	fail_at = 0;
	CU_ASSERT(failures_seen > 0); /* the injection really bit */
	/* The shared instance still works. */
	CU_ASSERT_EQUAL(ops->self_test(r->inst), 0);
}

int main(void)
{
	if (!CRYPTO_set_mem_functions(inj_malloc, inj_realloc, inj_free)) {
		fprintf(stderr, "crypto_plugin_test: cannot install OpenSSL allocator hooks\n");
		return 1;
	}
	if (rnsc_ctx_new(&C) || rnsc_plugin_host_new(C, &H) || rnsc_plugin_host_add_default_dirs(H))
		return 1;
	rnsc_ctx_set_log(C, NULL, NULL, 0);
	rnsc_plugin_host_scan(H);
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("crypto_plugins", NULL, NULL);
	CU_add_test(s, "HKDF with info beyond 32 KiB agrees", test_long_hkdf_info_agrees);
	CU_add_test(s, "HMAC key sequence agrees (reused context)", test_hmac_sequence_agrees);
	CU_add_test(s, "openssl edge arguments", test_edges_openssl);
	CU_add_test(s, "sodium edge arguments", test_edges_sodium);
	CU_add_test(s, "nettle edge arguments", test_edges_nettle);
	CU_add_test(s, "nettle agrees with openssl; refuses dead instances and missing buffers",
		    test_nettle_agrees_and_refuses);
	CU_add_test(s, "openssl under allocation failure", test_openssl_alloc_failures);
	CU_add_test(s, "small-order Ed25519 keys refused by every backend",
		    test_small_order_ed25519);
	int failures = rnsc_cu_run();
	rnsc_plugin_host_del(H);
	rnsc_ctx_del(C);
	return failures;
}
