/* SPDX-License-Identifier: MIT */
/* Behaviour of the core modules: errors, context, crypto dispatch, PKCS#7, Token,
 * Identity and Destination naming. Byte-exactness against the reference is proven by the
 * conformance suites; the fixed values here were produced by rns 1.5.4. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crypto.h"
#include "cu_run.h"
#include "destination.h"
#include "identity.h"
#include "plugin_host.h"
#include "test_rng.h"
#include "token.h"

static rnsc_ctx *C;
static rnsc_plugin_host *H;

static void unhex(uint8_t *out, const char *hex)
{
	for (size_t i = 0; hex[2 * i]; i++) {
		unsigned v;
		sscanf(hex + 2 * i, "%2x", &v);
		out[i] = (uint8_t)v;
	}
}

/* Deterministic RNG so tests are repeatable. */
static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static int test_rng(void *ud, uint8_t *out, size_t len)
{
	(void)ud;
	for (size_t i = 0; i < len; i++) {
		out[i] = (uint8_t)test_xorshift64(&rng_state);
	}
	return 0;
}

static void test_errors(void)
{
	CU_ASSERT_STRING_EQUAL(rnsc_err_name(RNSC_ERR_AUTH), "RNSC_ERR_AUTH");
	CU_ASSERT_STRING_EQUAL(rnsc_err_name(12345), "RNSC_ERR_UNKNOWN");
	CU_ASSERT_STRING_EQUAL(rnsc_strerror(12345), "unknown error");
	CU_ASSERT(strstr(rnsc_strerror(RNSC_ERR_PADDING), "padding") != NULL);
	int v = 0;
	CU_ASSERT(rnsc_err_from_name("RNSC_ERR_LOW_ORDER", &v));
	CU_ASSERT_EQUAL(v, RNSC_ERR_LOW_ORDER);
	CU_ASSERT(!rnsc_err_from_name("RNSC_NOPE", &v));
}

static int logged;
static void count_log(void *ud, int level, const char *who, const char *msg)
{
	(void)ud, (void)level, (void)who, (void)msg;
	logged++;
}

static void test_ctx(void)
{
	rnsc_ctx *c;
	CU_ASSERT_EQUAL_FATAL(rnsc_ctx_new(&c), 0);
	rnsc_ctx_set_log(c, count_log, NULL, RNSC_LOG_NOTICE);
	rnsc_log(c, RNSC_LOG_ERROR, "t", "shown %d", 1);
	rnsc_log(c, RNSC_LOG_DEBUG, "t", "hidden");
	CU_ASSERT_EQUAL(logged, 1);
	CU_ASSERT_EQUAL(rnsc_ctx_log_level(c), RNSC_LOG_NOTICE);
	rnsc_ctx_fail_alloc_after(c, 2);
	void *a = rnsc_alloc(c, 8);
	void *b = rnsc_alloc(c, 8);
	CU_ASSERT_PTR_NOT_NULL(a);
	CU_ASSERT_PTR_NULL(b);
	CU_ASSERT_EQUAL(rnsc_ctx_fail_alloc_after(c, 0), 2);
	rnsc_free_secret(c, a, 8);
	uint8_t x[4] = {1, 2, 3, 4}, y[4] = {1, 2, 3, 5};
	CU_ASSERT_EQUAL(rnsc_ct_memcmp(x, x, 4), 0);
	CU_ASSERT_NOT_EQUAL(rnsc_ct_memcmp(x, y, 4), 0);
	/* No backends at all: a clear error for every primitive. */
	uint8_t out[32];
	CU_ASSERT_EQUAL(rnsc_sha256(c, out, x, 4), RNSC_ERR_NOPRIM);
	CU_ASSERT_EQUAL(rnsc_random(c, out, 4), RNSC_ERR_NOPRIM);
	rnsc_identity none;
	CU_ASSERT_EQUAL(rnsc_identity_generate(c, &none), RNSC_ERR_NOPRIM);
	CU_ASSERT_FALSE(none.has_private);
	CU_ASSERT_PTR_NULL(rnsc_crypto_provider(c, RNSC_PRIM_SHA256));
	CU_ASSERT_STRING_EQUAL(rnsc_prim_name(RNSC_PRIM_X25519), "x25519");
	CU_ASSERT_STRING_EQUAL(rnsc_prim_name(RNSC_PRIM_COUNT), "unknown");
	rnsc_ctx_del(c);
}

static void test_pkcs7(void)
{
	uint8_t buf[64];
	for (size_t len = 0; len < 40; len++) {
		memset(buf, 0xAA, sizeof(buf));
		int n = rnsc_pkcs7_pad(buf, sizeof(buf), buf, len);
		CU_ASSERT_EQUAL((size_t)n, rnsc_pkcs7_padded_len(len));
		CU_ASSERT_EQUAL(n % 16, 0);
		CU_ASSERT_EQUAL(rnsc_pkcs7_unpad_len(buf, (size_t)n), (int)len);
	}
	CU_ASSERT_EQUAL(rnsc_pkcs7_pad(buf, 16, buf, 16), RNSC_ERR_BUFSIZE);
	memset(buf, 0, 16);
	CU_ASSERT_EQUAL(rnsc_pkcs7_unpad_len(buf, 16), RNSC_ERR_PADDING); /* pad byte 0 */
	buf[15] = 17;
	CU_ASSERT_EQUAL(rnsc_pkcs7_unpad_len(buf, 16), RNSC_ERR_PADDING); /* > block */
	buf[15] = 2;
	buf[14] = 3;
	CU_ASSERT_EQUAL(rnsc_pkcs7_unpad_len(buf, 16), RNSC_ERR_PADDING); /* inconsistent */
	CU_ASSERT_EQUAL(rnsc_pkcs7_unpad_len(buf, 15), RNSC_ERR_PADDING);
	CU_ASSERT_EQUAL(rnsc_pkcs7_unpad_len(buf, 0), RNSC_ERR_PADDING);
}

static void test_token(void)
{
	uint8_t key[64], pt[100], tok[200], out[200];
	CU_ASSERT_EQUAL(rnsc_token_generate_key(C, key), 0);
	rnsc_token t;
	CU_ASSERT_EQUAL(rnsc_token_init(&t, C, key, 32), RNSC_ERR_KEYLEN);
	CU_ASSERT_EQUAL_FATAL(rnsc_token_init(&t, C, key, 64), 0);
	for (size_t len = 0; len <= sizeof(pt); len += 7) {
		test_rng(NULL, pt, len);
		int n = rnsc_token_encrypt(&t, tok, sizeof(tok), pt, len);
		CU_ASSERT_EQUAL((size_t)n, rnsc_token_len(len));
		int m = rnsc_token_decrypt(&t, out, sizeof(out), tok, (size_t)n);
		CU_ASSERT_EQUAL((size_t)m, len);
		CU_ASSERT(m < 0 || memcmp(out, pt, len) == 0);
		/* Any single flipped bit is caught by the HMAC. */
		tok[(size_t)n / 2] ^= 0x10;
		CU_ASSERT_EQUAL(rnsc_token_decrypt(&t, out, sizeof(out), tok, (size_t)n),
				RNSC_ERR_AUTH);
		tok[(size_t)n / 2] ^= 0x10;
		CU_ASSERT_EQUAL(rnsc_token_decrypt(&t, out, sizeof(out), tok, (size_t)n - 1),
				RNSC_ERR_TRUNCATED);
		CU_ASSERT_EQUAL(rnsc_token_decrypt(&t, out, 0, tok, (size_t)n), RNSC_ERR_BUFSIZE);
	}
	CU_ASSERT_EQUAL(rnsc_token_decrypt(&t, out, sizeof(out), tok, 48), RNSC_ERR_TRUNCATED);
	CU_ASSERT_EQUAL(rnsc_token_encrypt(&t, tok, 10, pt, 5), RNSC_ERR_BUFSIZE);
	/* A correctly authenticated token with bad padding: re-MAC a crafted ciphertext. */
	uint8_t iv[16] = {0}, block[16], ct[16];
	memset(block, 0x42, 16); /* last byte 0x42 > 16: invalid padding */
	CU_ASSERT_EQUAL(rnsc_aes256_cbc_encrypt(C, ct, key + 32, iv, block, 16), 0);
	memcpy(tok, iv, 16);
	memcpy(tok + 16, ct, 16);
	CU_ASSERT_EQUAL(rnsc_hmac_sha256(C, tok + 32, key, 32, tok, 32), 0);
	CU_ASSERT_EQUAL(rnsc_token_decrypt(&t, out, sizeof(out), tok, 64), RNSC_ERR_PADDING);
	rnsc_token_free(&t);
}

/* The token made in pieces equals the one-shot token with the same IV, for every way of
 * cutting it into whole blocks, and final on its own (no update) too. */
static void test_token_stream(void)
{
	uint8_t key[64], iv[16], pt[300], whole[400], piece[400];
	for (size_t i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)(i * 7 + 1);
	for (size_t i = 0; i < sizeof(iv); i++)
		iv[i] = (uint8_t)(0xA0 + i);
	for (size_t i = 0; i < sizeof(pt); i++)
		pt[i] = (uint8_t)(i * 13);
	rnsc_token t;
	CU_ASSERT_EQUAL_FATAL(rnsc_token_init(&t, C, key, 64), 0);
	static const size_t lens[] = {0, 1, 15, 16, 17, 32, 255, 300};
	static const size_t cuts[] = {0, 16, 48, 256};
	for (size_t a = 0; a < sizeof(lens) / sizeof(lens[0]); a++)
		for (size_t b = 0; b < sizeof(cuts) / sizeof(cuts[0]); b++) {
			size_t len = lens[a], cut = cuts[b] <= len ? cuts[b] : len - len % 16;
			int n = rnsc_token_encrypt_iv(&t, whole, sizeof(whole), iv, pt, len);
			CU_ASSERT_EQUAL_FATAL((size_t)n, rnsc_token_len(len));
			rnsc_token_enc e;
			memset(piece, 0, sizeof(piece));
			CU_ASSERT_EQUAL(rnsc_token_enc_begin_iv(&e, &t, iv, piece), 0);
			size_t at = 0;
			while (at < cut) { /* one block, then the rest of the cut */
				size_t k = at == 0 ? 16 : cut - at;
				CU_ASSERT_EQUAL(
					rnsc_token_enc_update(&e, piece + 16 + at, pt + at, k), 0);
				at += k;
			}
			int m = rnsc_token_enc_final(&e, piece + 16 + at, sizeof(piece) - 16 - at,
						     pt + at, len - at);
			CU_ASSERT_EQUAL((size_t)m + 16 + at, (size_t)n);
			CU_ASSERT_EQUAL(memcmp(piece, whole, (size_t)n), 0);
		}
	/* errors: a partial block to update, no room for final, use after final */
	rnsc_token_enc e;
	CU_ASSERT_EQUAL_FATAL(rnsc_token_enc_begin(&e, &t, piece), 0);
	CU_ASSERT_EQUAL(rnsc_token_enc_update(&e, piece + 16, pt, 15), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_token_enc_final(&e, piece + 16, 40, pt, 20), RNSC_ERR_BUFSIZE);
	CU_ASSERT_EQUAL(rnsc_token_enc_update(&e, piece + 16, pt, 16), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_token_enc_begin(&e, &t, piece), 0);
	int m = rnsc_token_enc_final(&e, piece + 16, sizeof(piece) - 16, pt, 20);
	CU_ASSERT_EQUAL(m, 32 + 32);
	CU_ASSERT_EQUAL(rnsc_token_decrypt(&t, whole, sizeof(whole), piece, 16 + (size_t)m), 20);
	CU_ASSERT_EQUAL(memcmp(whole, pt, 20), 0);
	rnsc_token_enc_abort(&e); /* after final: nothing to do */
	CU_ASSERT_EQUAL(rnsc_token_enc_begin(&e, &t, piece), 0);
	rnsc_token_enc_abort(&e);
	CU_ASSERT_EQUAL(e.live, 0);
	rnsc_token_free(&t);
}

static const char *FIXED_PRV = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
			       "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f";
static const char *FIXED_PUB = "8f40c5adb68f25624ae5b214ea767a6ec94d829d3d7b5e1ad1ba6f3e2138285f"
			       "29acbae141bccaf0b22e1a94d34d0bc7361e526d0bfe12c89794bc9322966dd7";

static void test_identity_fixed(void)
{
	uint8_t prv[64], pub[64], want[64], h[16];
	unhex(prv, FIXED_PRV);
	unhex(want, FIXED_PUB);
	rnsc_identity id;
	CU_ASSERT_EQUAL(rnsc_identity_from_private(C, &id, prv, 63), RNSC_ERR_KEYLEN);
	CU_ASSERT_EQUAL_FATAL(rnsc_identity_from_private(C, &id, prv, 64), 0);
	rnsc_identity_public_bytes(&id, pub);
	CU_ASSERT_EQUAL(memcmp(pub, want, 64), 0);
	unhex(h, "aca31af0441d81dbec71e82da0b4b5f5");
	CU_ASSERT_EQUAL(memcmp(id.hash, h, 16), 0);
	uint8_t dh[16];
	const char *aspects[] = {"test", "one"};
	CU_ASSERT_EQUAL(rnsc_destination_hash(C, dh, id.hash, "rnsc", aspects, 2), 0);
	unhex(h, "de85cc589070808ce758d79229077b3f");
	CU_ASSERT_EQUAL(memcmp(dh, h, 16), 0);
	CU_ASSERT_EQUAL(rnsc_destination_hash_from_name(C, dh, id.hash, "rnsc.test.one"), 0);
	CU_ASSERT_EQUAL(memcmp(dh, h, 16), 0);
	CU_ASSERT_EQUAL(rnsc_destination_hash(C, dh, NULL, "rnsc", aspects, 1), 0);
	unhex(h, "66a45bad3648b2b4c39b74285d209fd6");
	CU_ASSERT_EQUAL(memcmp(dh, h, 16), 0);
	uint8_t nh[10];
	CU_ASSERT_EQUAL(rnsc_name_hash(C, nh, "rnsc", aspects, 2), 0);
	unhex(h, "c6d973eeb95d752b2464");
	CU_ASSERT_EQUAL(memcmp(nh, h, 10), 0);
	rnsc_identity_free(&id);
}

static void test_names(void)
{
	char name[128];
	uint8_t h[16];
	const char *aspects[] = {"a", "b.c"};
	CU_ASSERT_EQUAL(rnsc_destination_expand_name(name, sizeof(name), NULL, "app", aspects, 1),
			5);
	CU_ASSERT_STRING_EQUAL(name, "app.a");
	CU_ASSERT_EQUAL(rnsc_destination_expand_name(name, sizeof(name), NULL, "app", aspects, 2),
			RNSC_ERR_NAME);
	CU_ASSERT_EQUAL(rnsc_destination_expand_name(name, sizeof(name), NULL, "a.pp", aspects, 0),
			RNSC_ERR_NAME);
	CU_ASSERT_EQUAL(rnsc_destination_expand_name(name, 4, NULL, "app", aspects, 1),
			RNSC_ERR_BUFSIZE);
	uint8_t idh[16];
	memset(idh, 0xab, 16);
	CU_ASSERT_EQUAL(rnsc_destination_expand_name(name, sizeof(name), idh, "app", aspects, 1),
			5 + 33);
	CU_ASSERT_STRING_EQUAL(name, "app.a.abababababababababababababababab");
	CU_ASSERT_EQUAL(rnsc_name_hash(C, h, "app", aspects, 2), RNSC_ERR_NAME);
	CU_ASSERT_EQUAL(rnsc_destination_hash(C, h, NULL, "a.b", aspects, 0), RNSC_ERR_NAME);
}

static void test_identity_ops(void)
{
	rnsc_identity a, pubonly;
	CU_ASSERT_EQUAL_FATAL(rnsc_identity_generate(C, &a), 0);
	uint8_t pub[64], sig[64], msg[300], tok[512], out[512];
	rnsc_identity_public_bytes(&a, pub);
	CU_ASSERT_EQUAL(rnsc_identity_from_public(C, &pubonly, pub, 32), RNSC_ERR_KEYLEN);
	CU_ASSERT_EQUAL_FATAL(rnsc_identity_from_public(C, &pubonly, pub, 64), 0);
	CU_ASSERT_EQUAL(memcmp(pubonly.hash, a.hash, 16), 0);
	test_rng(NULL, msg, sizeof(msg));
	CU_ASSERT_EQUAL(rnsc_identity_sign(&pubonly, sig, msg, 10), RNSC_ERR_NOKEY);
	CU_ASSERT_EQUAL(rnsc_identity_sign(&a, sig, msg, sizeof(msg)), 0);
	CU_ASSERT_EQUAL(rnsc_identity_verify(&pubonly, sig, 64, msg, sizeof(msg)), 0);
	CU_ASSERT_EQUAL(rnsc_identity_verify(&pubonly, sig, 63, msg, sizeof(msg)),
			RNSC_ERR_SIGNATURE);
	sig[5] ^= 1;
	CU_ASSERT_EQUAL(rnsc_identity_verify(&pubonly, sig, 64, msg, sizeof(msg)),
			RNSC_ERR_SIGNATURE);
	uint8_t prv[64];
	CU_ASSERT_EQUAL(rnsc_identity_private_bytes(&pubonly, prv), RNSC_ERR_NOKEY);

	int n = rnsc_identity_encrypt(&pubonly, tok, sizeof(tok), msg, 100, NULL);
	CU_ASSERT_EQUAL((size_t)n, rnsc_identity_token_len(100));
	CU_ASSERT_EQUAL(
		rnsc_identity_decrypt(&pubonly, out, sizeof(out), tok, (size_t)n, NULL, 0, 0, NULL),
		RNSC_ERR_NOKEY);
	int used = 7;
	CU_ASSERT_EQUAL(
		rnsc_identity_decrypt(&a, out, sizeof(out), tok, (size_t)n, NULL, 0, 0, &used),
		100);
	CU_ASSERT_EQUAL(used, -1);
	CU_ASSERT_EQUAL(memcmp(out, msg, 100), 0);
	CU_ASSERT_EQUAL(rnsc_identity_decrypt(&a, out, sizeof(out), tok, 80, NULL, 0, 0, NULL),
			RNSC_ERR_TRUNCATED);
	CU_ASSERT_EQUAL(rnsc_identity_encrypt(&a, tok, 20, msg, 100, NULL), RNSC_ERR_BUFSIZE);
	/* Low-order ephemeral key in the token. */
	uint8_t bad[512];
	memcpy(bad, tok, (size_t)n);
	memset(bad, 0, 32);
	CU_ASSERT_EQUAL(
		rnsc_identity_decrypt(&a, out, sizeof(out), bad, (size_t)n, NULL, 0, 0, NULL),
		RNSC_ERR_LOW_ORDER);

	/* Ratchets: encrypt to the second ratchet; decrypt tries the list in order. */
	uint8_t r[3][32], rpub[32], rid[10];
	for (int i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(rnsc_ratchet_generate(C, r[i]), 0);
	CU_ASSERT_EQUAL(rnsc_ratchet_public(C, rpub, r[1]), 0);
	CU_ASSERT_EQUAL(rnsc_ratchet_id(C, rid, rpub), 0);
	n = rnsc_identity_encrypt(&pubonly, tok, sizeof(tok), msg, 33, rpub);
	CU_ASSERT_EQUAL(rnsc_identity_decrypt(&a, out, sizeof(out), tok, (size_t)n,
					      (const uint8_t(*)[32])r, 3, 1, &used),
			33);
	CU_ASSERT_EQUAL(used, 1);
	/* Not decryptable with the identity key alone, and enforcement forbids the fallback. */
	CU_ASSERT_EQUAL(
		rnsc_identity_decrypt(&a, out, sizeof(out), tok, (size_t)n, NULL, 0, 0, NULL),
		RNSC_ERR_AUTH);
	CU_ASSERT_EQUAL(rnsc_identity_decrypt(&a, out, sizeof(out), tok, (size_t)n,
					      (const uint8_t(*)[32])r, 1, 1, &used),
			RNSC_ERR_DECRYPT);
	/* A token for the identity key still opens when ratchets are given but not enforced. */
	n = rnsc_identity_encrypt(&pubonly, tok, sizeof(tok), msg, 5, NULL);
	CU_ASSERT_EQUAL(rnsc_identity_decrypt(&a, out, sizeof(out), tok, (size_t)n,
					      (const uint8_t(*)[32])r, 3, 0, &used),
			5);
	CU_ASSERT_EQUAL(used, -1);
	uint8_t rh[16], full[32], direct[32];
	CU_ASSERT_EQUAL(rnsc_random_hash(C, rh), 0);
	CU_ASSERT_EQUAL(rnsc_full_hash(C, full, msg, 10), 0);
	CU_ASSERT_EQUAL(rnsc_sha256(C, direct, msg, 10), 0);
	CU_ASSERT_EQUAL(memcmp(full, direct, 32), 0);
	rnsc_identity_free(&a);
	rnsc_identity_free(&pubonly);
}

static void test_identity_file(void)
{
	char dir[] = "/tmp/rnsc-id-XXXXXX", path[256];
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/identity", dir);
	rnsc_identity a, b;
	CU_ASSERT_EQUAL_FATAL(rnsc_identity_generate(C, &a), 0);
	CU_ASSERT_EQUAL(rnsc_identity_save_file(&a, path), 0);
	struct stat st;
	CU_ASSERT_EQUAL(stat(path, &st), 0);
	CU_ASSERT_EQUAL(st.st_size, 64);
	CU_ASSERT_EQUAL(st.st_mode & 077, 0); /* private key file is not group/world readable */
	CU_ASSERT_EQUAL(rnsc_identity_load_file(C, &b, path), 0);
	CU_ASSERT_EQUAL(memcmp(a.hash, b.hash, 16), 0);
	CU_ASSERT_EQUAL(memcmp(a.ed_seed, b.ed_seed, 32), 0);
	/* Truncated and oversized files are rejected. */
	FILE *f = fopen(path, "wb");
	fwrite(a.x_priv, 1, 32, f);
	fclose(f);
	CU_ASSERT_EQUAL(rnsc_identity_load_file(C, &b, path), RNSC_ERR_KEYLEN);
	f = fopen(path, "wb");
	for (int i = 0; i < 3; i++)
		fwrite(a.x_priv, 1, 32, f);
	fclose(f);
	CU_ASSERT_EQUAL(rnsc_identity_load_file(C, &b, path), RNSC_ERR_KEYLEN);
	unlink(path);
	CU_ASSERT_EQUAL(rnsc_identity_load_file(C, &b, path), RNSC_ERR_NOENT);
	/* A folder opens but cannot be read: an I/O error, not a key. */
	CU_ASSERT_EQUAL(rnsc_identity_load_file(C, &b, dir), RNSC_ERR_IO);
	snprintf(path, sizeof(path), "%s/missing/identity", dir);
	CU_ASSERT_EQUAL(rnsc_identity_save_file(&a, path), RNSC_ERR_NOENT);
	rmdir(dir);
	rnsc_identity_free(&a);
	rnsc_identity_free(&b);
}

static void test_streaming_hash(void)
{
	uint8_t msg[1000], one[64], two[64];
	test_rng(NULL, msg, sizeof(msg));
	rnsc_hash h;
	CU_ASSERT_EQUAL(rnsc_hash_init(C, &h, 99), RNSC_ERR_INVAL);
	for (int alg = RNSC_HASH_SHA256; alg <= RNSC_HASH_SHA512; alg++) {
		CU_ASSERT_EQUAL_FATAL(rnsc_hash_init(C, &h, alg), 0);
		for (size_t off = 0; off < sizeof(msg); off += 37)
			CU_ASSERT_EQUAL(
				rnsc_hash_update(&h, msg + off,
						 off + 37 > sizeof(msg) ? sizeof(msg) - off : 37),
				0);
		CU_ASSERT_EQUAL(rnsc_hash_final(&h, one), 0);
		CU_ASSERT_EQUAL(rnsc_hash_update(&h, msg, 1), RNSC_ERR_STATE);
		int rc = alg == RNSC_HASH_SHA256 ? rnsc_sha256(C, two, msg, sizeof(msg))
						 : rnsc_sha512(C, two, msg, sizeof(msg));
		CU_ASSERT_EQUAL(rc, 0);
		CU_ASSERT_EQUAL(memcmp(one, two, alg == RNSC_HASH_SHA256 ? 32 : 64), 0);
	}
	/* A copy finishes the shared prefix its own way; the source goes on unaffected. */
	rnsc_hash h2;
	CU_ASSERT_EQUAL_FATAL(rnsc_hash_init(C, &h, RNSC_HASH_SHA256), 0);
	CU_ASSERT_EQUAL(rnsc_hash_update(&h, msg, 500), 0);
	CU_ASSERT_EQUAL_FATAL(rnsc_hash_copy(&h2, &h), 0);
	CU_ASSERT_EQUAL(rnsc_hash_update(&h, msg + 500, 500), 0);
	CU_ASSERT_EQUAL(rnsc_hash_final(&h, one), 0);
	CU_ASSERT_EQUAL(rnsc_hash_final(&h2, two), 0);
	uint8_t want[32];
	CU_ASSERT_EQUAL(rnsc_sha256(C, want, msg, sizeof(msg)), 0);
	CU_ASSERT_EQUAL(memcmp(one, want, 32), 0);
	CU_ASSERT_EQUAL(rnsc_sha256(C, want, msg, 500), 0);
	CU_ASSERT_EQUAL(memcmp(two, want, 32), 0);
	CU_ASSERT_EQUAL(rnsc_hash_copy(&h2, &h), RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(rnsc_hash_init(C, &h, RNSC_HASH_SHA256), 0);
	rnsc_hash_abort(&h);
	CU_ASSERT_EQUAL(rnsc_hash_final(&h, one), RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(rnsc_hkdf_sha256(C, one, 0, msg, 32, NULL, 0, NULL, 0), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_hkdf_sha256(C, one, 32, NULL, 1, NULL, 0, NULL, 0), RNSC_ERR_INVAL);
	/* empty input material derives, as the reference's hkdf(derive_from=b"") does
	 * (conformance/vectors/hkdf_sha256.txt, the empty-IKM stanza) */
	static const uint8_t empty_ikm[32] = {0xeb, 0x70, 0xf0, 0x1d, 0xed, 0xe9, 0xaf, 0xaf,
					      0xa4, 0x49, 0xee, 0xe1, 0xb1, 0x28, 0x65, 0x04,
					      0xe1, 0xf6, 0x23, 0x88, 0xb3, 0xf7, 0xdd, 0x4f,
					      0x95, 0x66, 0x97, 0xb0, 0xe8, 0x28, 0xfe, 0x18};
	CU_ASSERT_EQUAL(rnsc_hkdf_sha256(C, one, 32, msg, 0, NULL, 0, NULL, 0), 0);
	CU_ASSERT_EQUAL(memcmp(one, empty_ikm, 32), 0);
	CU_ASSERT_EQUAL(rnsc_aes256_cbc_encrypt(C, one, msg, msg, msg, 15), RNSC_ERR_INVAL);
}

static void test_alloc_failure_host(void)
{
	/* The plugin host survives every allocation failure during a scan. */
	for (unsigned long nth = 1; nth < 40; nth++) {
		rnsc_ctx *c;
		CU_ASSERT_EQUAL_FATAL(rnsc_ctx_new(&c), 0);
		rnsc_ctx_set_log(c, NULL, NULL, 0);
		rnsc_plugin_host *h = NULL;
		rnsc_ctx_fail_alloc_after(c, nth);
		if (rnsc_plugin_host_new(c, &h) == 0) {
			(void)rnsc_plugin_host_add_default_dirs(h);
			(void)rnsc_plugin_host_scan(h);
			rnsc_plugin_host_del(h);
		}
		rnsc_ctx_del(c);
	}
}

int main(void)
{
	if (rnsc_ctx_new(&C) || rnsc_plugin_host_new(C, &H) || rnsc_plugin_host_add_default_dirs(H))
		return 1;
	rnsc_plugin_host_scan(H);
	if (rnsc_crypto_set_order(C, "openssl, sodium") != 0) {
		fprintf(stderr, "core_test: FAILED: openssl/sodium plugins did not load\n");
		return 1;
	}
	rnsc_crypto_set_rng(C, test_rng, NULL);
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("core", NULL, NULL);
	CU_add_test(s, "error table", test_errors);
	CU_add_test(s, "context, logging, allocation", test_ctx);
	CU_add_test(s, "pkcs7", test_pkcs7);
	CU_add_test(s, "token", test_token);
	CU_add_test(s, "token made in pieces", test_token_stream);
	CU_add_test(s, "identity from fixed key (rns 1.5.4 values)", test_identity_fixed);
	CU_add_test(s, "destination names", test_names);
	CU_add_test(s, "identity sign/encrypt/ratchets", test_identity_ops);
	CU_add_test(s, "identity file", test_identity_file);
	CU_add_test(s, "streaming hash and argument checks", test_streaming_hash);
	CU_add_test(s, "plugin host under allocation failure", test_alloc_failure_host);
	int failures = rnsc_cu_run();
	rnsc_plugin_host_del(H);
	rnsc_ctx_del(C);
	return failures;
}
