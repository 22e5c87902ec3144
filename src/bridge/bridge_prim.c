/* SPDX-License-Identifier: MIT */
/*
 * The suite's primitives family on rnsc's core: crypto, identity, destination naming,
 * ratchets, packets, announces, HDLC/KISS framing and bz2. Parameter and result names follow
 * the suite's reference bridge; the answers come from src/lib.
 */
#include <bzlib.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "announce.h"
#include "announce_cap.h"
#include "bridge.h"
#include "buffer.h"
#include "channel.h"
#include "crypto.h"
#include "destination.h"
#include "err.h"
#include "cfgfile.h"
#include "hdlc.h"
#include "ifac.h"
#include "identity.h"
#include "kiss.h"
#include "node_policy.h"
#include "packet.h"
#include "token.h"
#include "transport.h"

#define E err, errcap
/* Every handler frees what it took on the way out; "fail" is the common exit. */
#define HEX(key, req, p, n)                                                                        \
	do {                                                                                       \
		if (rnsc_bridge_hex(params, key, req, &(p), &(n), E))                              \
			goto fail;                                                                 \
	} while (0)
#define FIXED(key, buf)                                                                            \
	do {                                                                                       \
		if (rnsc_bridge_hex_fixed(params, key, buf, sizeof(buf), E))                       \
			goto fail;                                                                 \
	} while (0)
#define SETHEX(key, p, n)                                                                          \
	do {                                                                                       \
		if (rnsc_bridge_set_hex(result, key, p, n)) {                                      \
			snprintf(E, "out of memory");                                              \
			goto fail;                                                                 \
		}                                                                                  \
	} while (0)
#define CHECK(what, expr)                                                                          \
	do {                                                                                       \
		int rc_ = (expr);                                                                  \
		if (rc_ < 0) {                                                                     \
			rnsc_bridge_fail(E, what, rc_);                                            \
			goto fail;                                                                 \
		}                                                                                  \
	} while (0)
#define SETINT(key, v) json_object_set_new(result, key, json_integer((json_int_t)(v)))
#define SETBOOL(key, v) json_object_set_new(result, key, json_boolean(v))

/* ---- crypto ---------------------------------------------------------------------------- */

static int c_x25519_generate(rnsc_bridge *b, json_t *params, json_t *result, char *err,
			     size_t errcap)
{
	uint8_t seed[32], pub[32];
	FIXED("seed", seed);
	CHECK("x25519 public", rnsc_x25519_public(b->ctx, pub, seed));
	SETHEX("private_key", seed, 32);
	SETHEX("public_key", pub, 32);
	return 0;
fail:
	return 1;
}

static int c_x25519_public(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	uint8_t prv[32], pub[32];
	FIXED("private_key", prv);
	CHECK("x25519 public", rnsc_x25519_public(b->ctx, pub, prv));
	SETHEX("public_key", pub, 32);
	return 0;
fail:
	return 1;
}

static int c_x25519_exchange(rnsc_bridge *b, json_t *params, json_t *result, char *err,
			     size_t errcap)
{
	uint8_t prv[32], pub[32], shared[32];
	FIXED("private_key", prv);
	FIXED("peer_public_key", pub);
	CHECK("x25519", rnsc_x25519(b->ctx, shared, prv, pub));
	SETHEX("shared_secret", shared, 32);
	return 0;
fail:
	return 1;
}

static int c_ed25519_generate(rnsc_bridge *b, json_t *params, json_t *result, char *err,
			      size_t errcap)
{
	uint8_t seed[32], pub[32];
	FIXED("seed", seed);
	CHECK("ed25519 public", rnsc_ed25519_public(b->ctx, pub, seed));
	SETHEX("private_key", seed, 32);
	SETHEX("public_key", pub, 32);
	return 0;
fail:
	return 1;
}

static int c_ed25519_sign(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	uint8_t seed[32], pub[32], sig[64], *msg = NULL, *k = NULL;
	size_t n, kn;
	/* a 32-byte seed, or the 64-byte seed || public form other Ed25519 APIs use */
	HEX("private_key", 1, k, kn);
	if (kn != 32 && kn != 64) {
		snprintf(E, "parameter 'private_key' must be 32 or 64 bytes, got %zu", kn);
		goto fail;
	}
	memcpy(seed, k, 32);
	HEX("message", 1, msg, n);
	CHECK("ed25519 public", rnsc_ed25519_public(b->ctx, pub, seed));
	CHECK("ed25519 sign", rnsc_ed25519_sign(b->ctx, sig, seed, pub, msg, n));
	if (kn == 64 && rnsc_ct_memcmp(k + 32, pub, 32) != 0) {
		snprintf(E, "the 64-byte private key's public half does not match its seed");
		goto fail;
	}
	SETHEX("signature", sig, 64);
	free(msg), free(k);
	return 0;
fail:
	free(msg), free(k);
	return 1;
}

static int c_ed25519_verify(rnsc_bridge *b, json_t *params, json_t *result, char *err,
			    size_t errcap)
{
	uint8_t *pub = NULL, *msg = NULL, *sig = NULL;
	size_t pn, mn, sn;
	HEX("public_key", 1, pub, pn);
	HEX("message", 1, msg, mn);
	HEX("signature", 1, sig, sn);
	/* a key or signature of the wrong size does not verify (the reference says False) */
	SETBOOL("valid",
		pn == 32 && sn == 64 && rnsc_ed25519_verify(b->ctx, sig, pub, msg, mn) == 0);
	free(pub), free(msg), free(sig);
	return 0;
fail:
	free(pub), free(msg), free(sig);
	return 1;
}

static int c_sha(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap, int wide)
{
	uint8_t *d = NULL, h[64];
	size_t n;
	HEX("data", 1, d, n);
	if (wide)
		CHECK("sha512", rnsc_sha512(b->ctx, h, d, n));
	else
		CHECK("sha256", rnsc_sha256(b->ctx, h, d, n));
	SETHEX("hash", h, wide ? 64 : 32);
	free(d);
	return 0;
fail:
	free(d);
	return 1;
}
static int c_sha256(rnsc_bridge *b, json_t *p, json_t *r, char *err, size_t errcap)
{
	return c_sha(b, p, r, err, errcap, 0);
}
static int c_sha512(rnsc_bridge *b, json_t *p, json_t *r, char *err, size_t errcap)
{
	return c_sha(b, p, r, err, errcap, 1);
}

static int c_hmac_sha256(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	uint8_t *k = NULL, *m = NULL, h[32];
	size_t kn, mn;
	HEX("key", 1, k, kn);
	HEX("message", 1, m, mn);
	CHECK("hmac", rnsc_hmac_sha256(b->ctx, h, k, kn, m, mn));
	SETHEX("hmac", h, 32);
	free(k), free(m);
	return 0;
fail:
	free(k), free(m);
	return 1;
}

static int c_hkdf(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	uint8_t *ikm = NULL, *salt = NULL, *info = NULL, *out = NULL;
	size_t in, sn, fn;
	long long len;
	if (rnsc_bridge_int(params, "length", -1, &len, E))
		goto fail;
	HEX("ikm", 1, ikm, in);
	HEX("salt", 0, salt, sn);
	HEX("info", 0, info, fn);
	/* the reference caps nothing but a positive length; 255 blocks is HKDF's own limit */
	if (len < 1 || len > 255 * 32) {
		snprintf(E, "hkdf: length must be 1..8160, got %lld", len);
		goto fail;
	}
	out = malloc((size_t)len);
	if (!out) {
		snprintf(E, "out of memory");
		goto fail;
	}
	CHECK("hkdf", rnsc_hkdf_sha256(b->ctx, out, (size_t)len, ikm, in, sn ? salt : NULL, sn,
				       fn ? info : NULL, fn));
	SETHEX("derived_key", out, (size_t)len);
	free(ikm), free(salt), free(info), free(out);
	return 0;
fail:
	free(ikm), free(salt), free(info), free(out);
	return 1;
}

static int c_pkcs7_pad(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	(void)b;
	uint8_t *d = NULL, *o = NULL;
	size_t n;
	HEX("data", 1, d, n);
	size_t cap = rnsc_pkcs7_padded_len(n);
	o = malloc(cap);
	if (!o) {
		snprintf(E, "out of memory");
		goto fail;
	}
	int len = rnsc_pkcs7_pad(o, cap, d, n);
	CHECK("pkcs7 pad", len);
	SETHEX("padded", o, (size_t)len);
	free(d), free(o);
	return 0;
fail:
	free(d), free(o);
	return 1;
}

static int c_pkcs7_unpad(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	(void)b;
	uint8_t *d = NULL;
	size_t n;
	HEX("data", 1, d, n);
	int len = rnsc_pkcs7_unpad_len(d, n);
	CHECK("pkcs7 unpad", len);
	SETHEX("unpadded", d, (size_t)len);
	free(d);
	return 0;
fail:
	free(d);
	return 1;
}

/* AES-256-CBC, raw (whole blocks) or with PKCS#7 around it. rnsc implements only AES-256
 * (the cipher of every RNS 1.5 token); AES_128_CBC is refused. */
static int aes(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap, int enc,
	       int pad)
{
	uint8_t key[32], iv[16], *in = NULL, *buf = NULL;
	size_t n;
	const char *mode;
	if (rnsc_bridge_str(params, "mode", "AES_256_CBC", &mode, E))
		goto fail;
	if (strcmp(mode, "AES_256_CBC") != 0) {
		snprintf(E, "mode %.40s: rnsc implements AES_256_CBC only", mode);
		goto fail;
	}
	FIXED("key", key);
	FIXED("iv", iv);
	HEX(enc ? "plaintext" : "ciphertext", 1, in, n);
	size_t blen = enc && pad ? rnsc_pkcs7_padded_len(n) : n;
	buf = malloc(blen + 1);
	if (!buf) {
		snprintf(E, "out of memory");
		goto fail;
	}
	if (enc && pad)
		CHECK("pkcs7 pad", rnsc_pkcs7_pad(buf, blen, in, n));
	else if (n)
		memcpy(buf, in, n);
	if (blen % 16) {
		snprintf(E, "AES-CBC input of %zu bytes is not whole 16-byte blocks", blen);
		goto fail;
	}
	if (enc)
		CHECK("aes encrypt", rnsc_aes256_cbc_encrypt(b->ctx, buf, key, iv, buf, blen));
	else
		CHECK("aes decrypt", rnsc_aes256_cbc_decrypt(b->ctx, buf, key, iv, buf, blen));
	size_t olen = blen;
	if (!enc && pad) {
		int u = rnsc_pkcs7_unpad_len(buf, blen);
		CHECK("pkcs7 unpad", u);
		olen = (size_t)u;
	}
	SETHEX(enc ? "ciphertext" : "plaintext", buf, olen);
	free(in), free(buf);
	return 0;
fail:
	free(in), free(buf);
	return 1;
}
static int c_aes_encrypt(rnsc_bridge *b, json_t *p, json_t *r, char *err, size_t errcap)
{
	return aes(b, p, r, err, errcap, 1, 1);
}
static int c_aes_decrypt(rnsc_bridge *b, json_t *p, json_t *r, char *err, size_t errcap)
{
	return aes(b, p, r, err, errcap, 0, 1);
}
static int c_aes_raw_encrypt(rnsc_bridge *b, json_t *p, json_t *r, char *err, size_t errcap)
{
	return aes(b, p, r, err, errcap, 1, 0);
}
static int c_aes_raw_decrypt(rnsc_bridge *b, json_t *p, json_t *r, char *err, size_t errcap)
{
	return aes(b, p, r, err, errcap, 0, 0);
}

static int token_from(rnsc_bridge *b, json_t *params, rnsc_token *t, char *err, size_t errcap)
{
	uint8_t *k = NULL;
	size_t kn;
	if (rnsc_bridge_hex(params, "key", 1, &k, &kn, E))
		return 1;
	int rc = rnsc_token_init(t, b->ctx, k, kn);
	free(k);
	if (rc)
		return rnsc_bridge_fail(E, "token key", rc);
	return 0;
}

static int c_token_encrypt(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	rnsc_token t;
	uint8_t *pt = NULL, *out = NULL;
	size_t n;
	if (token_from(b, params, &t, E))
		return 1;
	HEX("plaintext", 1, pt, n);
	size_t cap = rnsc_token_len(n);
	out = malloc(cap);
	if (!out) {
		snprintf(E, "out of memory");
		goto fail;
	}
	int len = rnsc_token_encrypt(&t, out, cap, pt, n);
	CHECK("token encrypt", len);
	SETHEX("token", out, (size_t)len);
	rnsc_token_free(&t), free(pt), free(out);
	return 0;
fail:
	rnsc_token_free(&t), free(pt), free(out);
	return 1;
}

static int c_token_decrypt(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	rnsc_token t;
	uint8_t *tok = NULL, *out = NULL;
	size_t n;
	if (token_from(b, params, &t, E))
		return 1;
	HEX("token", 1, tok, n);
	out = malloc(n + 1);
	if (!out) {
		snprintf(E, "out of memory");
		goto fail;
	}
	int len = rnsc_token_decrypt(&t, out, n, tok, n);
	CHECK("token decrypt", len);
	SETHEX("plaintext", out, (size_t)len);
	rnsc_token_free(&t), free(tok), free(out);
	return 0;
fail:
	rnsc_token_free(&t), free(tok), free(out);
	return 1;
}

/* The HMAC check alone, over the token's signed part with the key's signing half (the
 * layout token.c reads: IV || ciphertext || HMAC-SHA256). */
static int c_token_verify_hmac(rnsc_bridge *b, json_t *params, json_t *result, char *err,
			       size_t errcap)
{
	rnsc_token t;
	uint8_t *tok = NULL, mac[32];
	size_t n;
	if (token_from(b, params, &t, E))
		return 1;
	HEX("token", 1, tok, n);
	if (n <= 32) {
		snprintf(E, "cannot verify the HMAC of a token of %zu bytes", n);
		goto fail;
	}
	CHECK("hmac", rnsc_hmac_sha256(b->ctx, mac, t.key, 32, tok, n - 32));
	SETBOOL("valid", rnsc_ct_memcmp(mac, tok + n - 32, 32) == 0);
	rnsc_token_free(&t), free(tok);
	return 0;
fail:
	rnsc_token_free(&t), free(tok);
	return 1;
}

static int c_token_generate_key(rnsc_bridge *b, json_t *params, json_t *result, char *err,
				size_t errcap)
{
	const char *mode;
	uint8_t key[RNSC_TOKEN_KEYLEN];
	if (rnsc_bridge_str(params, "mode", "AES_256_CBC", &mode, E))
		return 1;
	if (strcmp(mode, "AES_256_CBC") != 0) {
		snprintf(E, "Invalid token mode: %.40s (rnsc implements AES_256_CBC only)", mode);
		return 1;
	}
	CHECK("token key", rnsc_token_generate_key(b->ctx, key));
	SETHEX("key", key, sizeof(key));
	rnsc_memzero(key, sizeof(key));
	return 0;
fail:
	return 1;
}

/* ---- identity -------------------------------------------------------------------------- */

static int id_private(rnsc_bridge *b, json_t *params, rnsc_identity *id, char *err, size_t errcap)
{
	uint8_t *k = NULL;
	size_t n;
	if (rnsc_bridge_hex(params, "private_key", 1, &k, &n, E))
		return 1;
	int rc = rnsc_identity_from_private(b->ctx, id, k, n);
	rnsc_memzero(k, n);
	free(k);
	return rc ? rnsc_bridge_fail(E, "identity from private key", rc) : 0;
}

static int id_public(rnsc_bridge *b, json_t *params, rnsc_identity *id, char *err, size_t errcap)
{
	uint8_t *k = NULL;
	size_t n;
	if (rnsc_bridge_hex(params, "public_key", 1, &k, &n, E))
		return 1;
	int rc = rnsc_identity_from_public(b->ctx, id, k, n);
	free(k);
	return rc ? rnsc_bridge_fail(E, "identity from public key", rc) : 0;
}

static int put_identity(json_t *result, const rnsc_identity *id)
{
	uint8_t pub[RNSC_KEYSIZE];
	rnsc_identity_public_bytes(id, pub);
	int rc = rnsc_bridge_set_hex(result, "public_key", pub, sizeof(pub));
	rc |= rnsc_bridge_set_hex(result, "hash", id->hash, sizeof(id->hash));
	json_t *h = json_object_get(result, "hash");
	rc |= json_object_set(result, "hexhash", h);
	return rc;
}

static int c_identity_from_private_key(rnsc_bridge *b, json_t *params, json_t *result, char *err,
				       size_t errcap)
{
	rnsc_identity id;
	if (id_private(b, params, &id, E))
		return 1;
	int rc = put_identity(result, &id);
	rnsc_identity_free(&id);
	return rc ? (snprintf(E, "out of memory"), 1) : 0;
}

static int c_identity_hash(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	rnsc_identity id;
	if (id_public(b, params, &id, E))
		return 1;
	int rc = rnsc_bridge_set_hex(result, "hash", id.hash, sizeof(id.hash));
	rnsc_identity_free(&id);
	return rc ? (snprintf(E, "out of memory"), 1) : 0;
}

/* Encrypt to an identity's key, or to a ratchet key when ratchet_key names a param. */
static int id_encrypt(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap,
		      const char *ratchet_key)
{
	rnsc_identity id;
	uint8_t *pt = NULL, *out = NULL, ratchet[32];
	size_t n;
	if (id_public(b, params, &id, E))
		return 1;
	if (ratchet_key)
		FIXED(ratchet_key, ratchet);
	HEX("plaintext", 1, pt, n);
	size_t cap = rnsc_identity_token_len(n);
	out = malloc(cap);
	if (!out) {
		snprintf(E, "out of memory");
		goto fail;
	}
	int len = rnsc_identity_encrypt(&id, out, cap, pt, n, ratchet_key ? ratchet : NULL);
	CHECK("identity encrypt", len);
	SETHEX("ciphertext", out, (size_t)len);
	rnsc_identity_free(&id), free(pt), free(out);
	return 0;
fail:
	rnsc_identity_free(&id), free(pt), free(out);
	return 1;
}
static int c_identity_encrypt(rnsc_bridge *b, json_t *p, json_t *r, char *err, size_t errcap)
{
	return id_encrypt(b, p, r, err, errcap, NULL);
}
static int c_ratchet_encrypt(rnsc_bridge *b, json_t *p, json_t *r, char *err, size_t errcap)
{
	return id_encrypt(b, p, r, err, errcap, "ratchet_public");
}

/* Decryption as Identity.decrypt: a token that does not open gives plaintext null (not an
 * error); ratchets, when given, are tried in order and the one that opened it is named. */
static int c_ratchet_decrypt(rnsc_bridge *b, json_t *params, json_t *result, char *err,
			     size_t errcap)
{
	rnsc_identity id;
	uint8_t *ct = NULL, *out = NULL, (*ratchets)[32] = NULL;
	size_t n, nr = 0;
	if (id_private(b, params, &id, E))
		return 1;
	HEX("ciphertext", 1, ct, n);
	json_t *list = json_object_get(params, "ratchet_privates");
	json_t *one = json_object_get(params, "ratchet_private");
	if (list && !json_is_null(list)) {
		if (!json_is_array(list) || json_array_size(list) > 4096) {
			snprintf(E, "ratchet_privates must be a list of at most 4096 hex keys");
			goto fail;
		}
		nr = json_array_size(list);
	} else if (one && !json_is_null(one)) {
		nr = 1;
	}
	ratchets = calloc(nr ? nr : 1, 32);
	out = malloc(n + 1);
	if (!ratchets || !out) {
		snprintf(E, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < nr; i++) {
		json_t *w = json_object();
		json_object_set(w, "k",
				list && !json_is_null(list) ? json_array_get(list, i) : one);
		int bad = rnsc_bridge_hex_fixed(w, "k", ratchets[i], 32, E);
		json_decref(w);
		if (bad)
			goto fail;
	}
	int used = -1;
	int len = rnsc_identity_decrypt(&id, out, n, ct, n,
					nr ? (const uint8_t(*)[32])ratchets : NULL, nr,
					rnsc_bridge_bool(params, "enforce_ratchets", 0), &used);
	if (len >= 0)
		SETHEX("plaintext", out, (size_t)len);
	else
		json_object_set_new(result, "plaintext", json_null());
	if (len >= 0 && used >= 0) {
		uint8_t pub[32], rid[RNSC_RATCHET_ID_LEN];
		CHECK("ratchet public", rnsc_ratchet_public(b->ctx, pub, ratchets[used]));
		CHECK("ratchet id", rnsc_ratchet_id(b->ctx, rid, pub));
		SETHEX("latest_ratchet_id", rid, sizeof(rid));
	} else {
		json_object_set_new(result, "latest_ratchet_id", json_null());
	}
	rnsc_identity_free(&id), free(ct), free(out);
	if (ratchets)
		rnsc_memzero(ratchets, nr * 32);
	free(ratchets);
	return 0;
fail:
	rnsc_identity_free(&id), free(ct), free(out);
	if (ratchets)
		rnsc_memzero(ratchets, nr * 32);
	free(ratchets);
	return 1;
}

static int c_identity_decrypt(rnsc_bridge *b, json_t *params, json_t *result, char *err,
			      size_t errcap)
{
	int rc = c_ratchet_decrypt(b, params, result, err, errcap);
	json_object_del(result, "latest_ratchet_id");
	return rc;
}

static int c_identity_sign(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	rnsc_identity id;
	uint8_t *m = NULL, sig[RNSC_SIGLEN];
	size_t n;
	if (id_private(b, params, &id, E))
		return 1;
	HEX("message", 1, m, n);
	CHECK("identity sign", rnsc_identity_sign(&id, sig, m, n));
	SETHEX("signature", sig, sizeof(sig));
	rnsc_identity_free(&id), free(m);
	return 0;
fail:
	rnsc_identity_free(&id), free(m);
	return 1;
}

static int c_identity_verify(rnsc_bridge *b, json_t *params, json_t *result, char *err,
			     size_t errcap)
{
	rnsc_identity id;
	uint8_t *m = NULL, *s = NULL;
	size_t n, sn;
	if (id_public(b, params, &id, E))
		return 1;
	HEX("message", 1, m, n);
	HEX("signature", 1, s, sn);
	SETBOOL("valid", rnsc_identity_verify(&id, s, sn, m, n) == 0);
	rnsc_identity_free(&id), free(m), free(s);
	return 0;
fail:
	rnsc_identity_free(&id), free(m), free(s);
	return 1;
}

static int c_identity_to_file(rnsc_bridge *b, json_t *params, json_t *result, char *err,
			      size_t errcap)
{
	rnsc_identity id;
	char path[320];
	const char *dir = b->tmpdir[0] ? b->tmpdir : getenv("TMPDIR");
	if (id_private(b, params, &id, E))
		return 1;
	snprintf(path, sizeof(path), "%s/conformance_identity_XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(path);
	if (fd < 0) {
		rnsc_identity_free(&id);
		snprintf(E, "cannot create a file under %s", dir && *dir ? dir : "/tmp");
		return 1;
	}
	close(fd);
	int rc = rnsc_identity_save_file(&id, path);
	rnsc_identity_free(&id);
	if (rc) {
		unlink(path);
		return rnsc_bridge_fail(E, "identity save", rc);
	}
	json_object_set_new(result, "path", json_string(path));
	return 0;
}

static int c_identity_from_file(rnsc_bridge *b, json_t *params, json_t *result, char *err,
				size_t errcap)
{
	const char *path;
	rnsc_identity id;
	if (rnsc_bridge_str(params, "path", NULL, &path, E))
		return 1;
	if (rnsc_identity_load_file(b->ctx, &id, path) != 0) {
		SETBOOL("found", 0);
		return 0;
	}
	SETBOOL("found", 1);
	int rc = put_identity(result, &id);
	rnsc_identity_free(&id);
	return rc ? (snprintf(E, "out of memory"), 1) : 0;
}

static int c_identity_random_hash(rnsc_bridge *b, json_t *params, json_t *result, char *err,
				  size_t errcap)
{
	(void)params;
	uint8_t h[RNSC_TRUNCATED_HASHLEN];
	CHECK("random hash", rnsc_random_hash(b->ctx, h));
	SETHEX("random_hash", h, sizeof(h));
	return 0;
fail:
	return 1;
}

/* The keyless identity of Identity(create_keys=False): rnsc reports RNSC_ERR_NOKEY where the
 * reference raises KeyError, so that is the name the suite reads. */
static int c_identity_keyless_op(rnsc_bridge *b, json_t *params, json_t *result, char *err,
				 size_t errcap)
{
	const char *op;
	uint8_t *d = NULL, *out = NULL;
	size_t n;
	rnsc_identity id;
	memset(&id, 0, sizeof(id));
	id.ctx = b->ctx;
	if (rnsc_bridge_str(params, "op", NULL, &op, E))
		return 1;
	HEX("data", 1, d, n);
	out = malloc(rnsc_identity_token_len(n) + n + RNSC_SIGLEN);
	if (!out) {
		snprintf(E, "out of memory");
		goto fail;
	}
	int rc;
	if (strcmp(op, "decrypt") == 0)
		rc = rnsc_identity_decrypt(&id, out, n, d, n, NULL, 0, 0, NULL);
	else if (strcmp(op, "sign") == 0)
		rc = rnsc_identity_sign(&id, out, d, n);
	else if (strcmp(op, "encrypt") == 0)
		rc = rnsc_identity_encrypt(&id, out, rnsc_identity_token_len(n), d, n, NULL);
	else {
		snprintf(E, "unknown op '%.40s'", op);
		goto fail;
	}
	if (rc == RNSC_ERR_NOKEY) {
		json_object_set_new(result, "raised", json_string("KeyError"));
		json_object_set_new(result, "message", json_string(rnsc_strerror(rc)));
	} else {
		CHECK(op, rc);
		json_object_set_new(result, "raised", json_null());
		SETHEX("result", out, (size_t)rc);
	}
	free(d), free(out);
	return 0;
fail:
	free(d), free(out);
	return 1;
}

/* ---- destination naming and hashes ------------------------------------------------------ */

#define MAX_ASPECTS 64
/* aspects: a list of strings, or one comma-separated string (the reference accepts both). */
typedef struct aspects {
	const char *v[MAX_ASPECTS];
	size_t n;
	char *buf;
} aspects;

static int get_aspects(json_t *params, aspects *a, char *err, size_t errcap)
{
	memset(a, 0, sizeof(*a));
	json_t *v = json_object_get(params, "aspects");
	if (!v || json_is_null(v))
		return 0;
	if (json_is_array(v)) {
		if (json_array_size(v) > MAX_ASPECTS) {
			snprintf(E, "at most %d aspects", MAX_ASPECTS);
			return 1;
		}
		for (size_t i = 0; i < json_array_size(v); i++) {
			json_t *s = json_array_get(v, i);
			if (!json_is_string(s) ||
			    strlen(json_string_value(s)) != json_string_length(s)) {
				snprintf(E, "aspects must be strings");
				return 1;
			}
			a->v[a->n++] = json_string_value(s);
		}
		return 0;
	}
	if (!json_is_string(v)) {
		snprintf(E, "aspects must be a list or a comma-separated string");
		return 1;
	}
	if (json_string_length(v) == 0)
		return 0;
	a->buf = strdup(json_string_value(v));
	if (!a->buf) {
		snprintf(E, "out of memory");
		return 1;
	}
	char *s = a->buf;
	for (;;) {
		if (a->n == MAX_ASPECTS) {
			snprintf(E, "at most %d aspects", MAX_ASPECTS);
			return 1;
		}
		a->v[a->n++] = s;
		char *c = strchr(s, ',');
		if (!c)
			break;
		*c = '\0';
		s = c + 1;
	}
	return 0;
}

static int c_destination_hash(rnsc_bridge *b, json_t *params, json_t *result, char *err,
			      size_t errcap)
{
	uint8_t idh[RNSC_TRUNCATED_HASHLEN], h[RNSC_TRUNCATED_HASHLEN];
	const char *app;
	aspects a;
	memset(&a, 0, sizeof(a));
	FIXED("identity_hash", idh);
	if (rnsc_bridge_str(params, "app_name", NULL, &app, E) || get_aspects(params, &a, E))
		goto fail;
	CHECK("destination hash", rnsc_destination_hash(b->ctx, h, idh, app, a.v, a.n));
	SETHEX("destination_hash", h, sizeof(h));
	free(a.buf);
	return 0;
fail:
	free(a.buf);
	return 1;
}

static int c_truncated_hash(rnsc_bridge *b, json_t *params, json_t *result, char *err,
			    size_t errcap)
{
	uint8_t *d = NULL, t[RNSC_TRUNCATED_HASHLEN], f[RNSC_HASHLEN];
	size_t n;
	HEX("data", 1, d, n);
	CHECK("truncated hash", rnsc_truncated_hash(b->ctx, t, d, n));
	CHECK("full hash", rnsc_full_hash(b->ctx, f, d, n));
	SETHEX("hash", t, sizeof(t));
	SETHEX("full_hash", f, sizeof(f));
	free(d);
	return 0;
fail:
	free(d);
	return 1;
}

/* The name hash of a full dotted name: rnsc_name_hash over the name as one app name would
 * refuse the dots, so the name is split into app name and aspects as expand_name joins them. */
static int c_name_hash(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	const char *name;
	uint8_t h[RNSC_NAME_HASHLEN];
	if (rnsc_bridge_str(params, "name", NULL, &name, E))
		return 1;
	char *copy = strdup(name);
	const char *v[MAX_ASPECTS];
	size_t n = 0;
	if (!copy) {
		snprintf(E, "out of memory");
		return 1;
	}
	char *s = strchr(copy, '.');
	if (s)
		*s++ = '\0';
	while (s) {
		if (n == MAX_ASPECTS) {
			free(copy);
			snprintf(E, "at most %d aspects", MAX_ASPECTS);
			return 1;
		}
		v[n++] = s;
		s = strchr(s, '.');
		if (s)
			*s++ = '\0';
	}
	int rc = rnsc_name_hash(b->ctx, h, copy, v, n);
	free(copy);
	CHECK("name hash", rc);
	SETHEX("hash", h, sizeof(h));
	return 0;
fail:
	return 1;
}

static int c_app_and_aspects_from_name(rnsc_bridge *b, json_t *params, json_t *result, char *err,
				       size_t errcap)
{
	(void)b;
	const char *name;
	if (rnsc_bridge_str(params, "full_name", NULL, &name, E) &&
	    rnsc_bridge_str(params, "name", NULL, &name, E))
		return 1;
	err[0] = '\0';
	const char *dot = strchr(name, '.');
	json_t *asp = json_array();
	json_object_set_new(result, "app_name",
			    dot ? json_stringn(name, (size_t)(dot - name)) : json_string(name));
	while (dot) {
		const char *s = dot + 1;
		dot = strchr(s, '.');
		json_array_append_new(asp,
				      dot ? json_stringn(s, (size_t)(dot - s)) : json_string(s));
	}
	json_object_set_new(result, "aspects", asp);
	return 0;
}

static int c_ratchet_id(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	uint8_t pub[32], rid[RNSC_RATCHET_ID_LEN];
	FIXED("ratchet_public", pub);
	CHECK("ratchet id", rnsc_ratchet_id(b->ctx, rid, pub));
	SETHEX("ratchet_id", rid, sizeof(rid));
	return 0;
fail:
	return 1;
}

static int c_ratchet_public(rnsc_bridge *b, json_t *params, json_t *result, char *err,
			    size_t errcap)
{
	uint8_t prv[32], pub[32];
	FIXED("ratchet_private", prv);
	CHECK("ratchet public", rnsc_ratchet_public(b->ctx, pub, prv));
	SETHEX("ratchet_public", pub, sizeof(pub));
	return 0;
fail:
	return 1;
}

/* ---- packets ---------------------------------------------------------------------------- */

static int put_packet(json_t *result, rnsc_ctx *ctx, const uint8_t *raw, size_t len,
		      const rnsc_packet *p)
{
	uint8_t h[RNSC_HASHLEN];
	int rc = rnsc_packet_hash(ctx, h, raw, len);
	if (rc)
		return rc;
	SETINT("flags", raw[0]);
	SETINT("hops", p->hops);
	SETINT("header_type", p->header_type);
	SETINT("context_flag", p->context_flag);
	SETINT("transport_type", p->transport_type);
	SETINT("destination_type", p->dest_type);
	SETINT("packet_type", p->packet_type);
	SETINT("context", p->context);
	rc = rnsc_bridge_set_hex(result, "destination_hash", p->dest_hash, sizeof(p->dest_hash));
	if (p->header_type == RNSC_HEADER_2)
		rc |= rnsc_bridge_set_hex(result, "transport_id", p->transport_id,
					  sizeof(p->transport_id));
	else
		json_object_set_new(result, "transport_id", json_null());
	rc |= rnsc_bridge_set_hex(result, "data", p->data, p->data_len);
	rc |= rnsc_bridge_set_hex(result, "hash", h, sizeof(h));
	return rc ? RNSC_ERR_NOMEM : 0;
}

static int c_packet_build(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	long long ptype, ctxv, cflag, ttype, hops;
	const char *dtype;
	uint8_t *data = NULL, *payload = NULL, raw[RNSC_MTU + 64];
	size_t n, plen;
	rnsc_packet p;
	rnsc_identity id;
	int have_id = 0;
	memset(&p, 0, sizeof(p));
	if (rnsc_bridge_str(params, "dest_type", "plain", &dtype, E) ||
	    rnsc_bridge_int(params, "packet_type", RNSC_PKT_DATA, &ptype, E) ||
	    rnsc_bridge_int(params, "context", 0, &ctxv, E) ||
	    rnsc_bridge_int(params, "context_flag", 0, &cflag, E) ||
	    rnsc_bridge_int(params, "transport_type", RNSC_TRANSPORT_BROADCAST, &ttype, E) ||
	    rnsc_bridge_int(params, "hops", 0, &hops, E))
		goto fail;
	HEX("data", 0, data, n);
	json_t *ht = json_object_get(params, "header_type");
	int h2 = 0;
	if (!ht || json_is_null(ht) || (json_is_integer(ht) && json_integer_value(ht) == 1) ||
	    (json_is_string(ht) &&
	     (!strcmp(json_string_value(ht), "1") || !strcmp(json_string_value(ht), "HEADER_1"))))
		h2 = 0;
	else if ((json_is_integer(ht) && json_integer_value(ht) == 2) ||
		 (json_is_string(ht) && (!strcmp(json_string_value(ht), "2") ||
					 !strcmp(json_string_value(ht), "HEADER_2"))))
		h2 = 1;
	else {
		snprintf(E, "unsupported header_type (use 1 / 2 or 'HEADER_1' / 'HEADER_2')");
		goto fail;
	}
	if (ptype < 0 || ptype > 3 || ctxv < 0 || ctxv > 255 || cflag < 0 || cflag > 1 ||
	    ttype < 0 || ttype > 1 || hops < 0 || hops > 255) {
		snprintf(E, "packet field out of range");
		goto fail;
	}
	if (h2) {
		if (ptype != RNSC_PKT_ANNOUNCE) {
			snprintf(E, "HEADER_2 packets are only buildable for ANNOUNCE packet_type");
			goto fail;
		}
		FIXED("transport_id", p.transport_id);
	}
	int dt;
	if (!strcmp(dtype, "plain"))
		dt = RNSC_DEST_PLAIN;
	else if (!strcmp(dtype, "single"))
		dt = RNSC_DEST_SINGLE;
	else if (!strcmp(dtype, "group"))
		dt = RNSC_DEST_GROUP;
	else {
		snprintf(E, "unsupported dest_type '%.20s' (use 'plain', 'single' or 'group')",
			 dtype);
		goto fail;
	}
	/* the suite's destination: conformance.packet, on a fresh identity unless PLAIN */
	static const char *const asp[] = {"packet"};
	if (dt != RNSC_DEST_PLAIN) {
		CHECK("identity", rnsc_identity_generate(b->ctx, &id));
		have_id = 1;
	}
	CHECK("destination hash",
	      rnsc_destination_hash(b->ctx, p.dest_hash, have_id ? id.hash : NULL, "conformance",
				    asp, 1));
	payload = data;
	plen = n;
	if (rnsc_packet_encrypts((int)ptype, (int)ctxv, dt) && dt != RNSC_DEST_PLAIN) {
		size_t cap = rnsc_identity_token_len(n) + 16;
		payload = malloc(cap);
		if (!payload) {
			snprintf(E, "out of memory");
			goto fail;
		}
		int len;
		if (dt == RNSC_DEST_SINGLE) {
			len = rnsc_identity_encrypt(&id, payload, cap, data, n, NULL);
		} else {
			uint8_t key[RNSC_TOKEN_KEYLEN];
			rnsc_token t;
			len = rnsc_token_generate_key(b->ctx, key);
			if (len == 0 &&
			    (len = rnsc_token_init(&t, b->ctx, key, sizeof(key))) == 0) {
				len = rnsc_token_encrypt(&t, payload, cap, data, n);
				rnsc_token_free(&t);
			}
			rnsc_memzero(key, sizeof(key));
		}
		CHECK("encrypt", len);
		plen = (size_t)len;
	}
	p.header_type = h2 ? RNSC_HEADER_2 : RNSC_HEADER_1;
	p.context_flag = (uint8_t)cflag;
	p.transport_type = (uint8_t)ttype;
	p.dest_type = (uint8_t)dt;
	p.packet_type = (uint8_t)ptype;
	p.hops = (uint8_t)hops;
	p.context = (uint8_t)ctxv;
	p.data = payload;
	p.data_len = plen;
	int len = rnsc_packet_pack(raw, sizeof(raw), &p, RNSC_MTU);
	CHECK("packet pack", len);
	rnsc_packet q;
	CHECK("packet unpack", rnsc_packet_unpack(&q, raw, (size_t)len));
	SETHEX("raw", raw, (size_t)len);
	CHECK("packet", put_packet(result, b->ctx, raw, (size_t)len, &q));
	if (payload != data)
		free(payload);
	free(data);
	if (have_id)
		rnsc_identity_free(&id);
	return 0;
fail:
	if (payload != data)
		free(payload);
	free(data);
	if (have_id)
		rnsc_identity_free(&id);
	return 1;
}

static int c_packet_unpack(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	uint8_t *raw = NULL;
	size_t n;
	rnsc_packet p;
	HEX("raw", 1, raw, n);
	if (rnsc_packet_unpack(&p, raw, n) != 0) {
		SETBOOL("unpacked", 0);
	} else {
		SETBOOL("unpacked", 1);
		CHECK("packet", put_packet(result, b->ctx, raw, n, &p));
	}
	free(raw);
	return 0;
fail:
	free(raw);
	return 1;
}

static int c_packet_hash(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	uint8_t *raw = NULL, h[RNSC_HASHLEN];
	size_t n;
	rnsc_packet p;
	HEX("raw", 1, raw, n);
	/* the hash covers the low flag nibble only, so an IFAC-flagged frame (which unpack
	 * refuses) still has one; a frame too short for any packet has none */
	int rc = rnsc_packet_unpack(&p, raw, n);
	if (rc < 0 && rc != RNSC_ERR_IFAC_UNEXPECTED)
		CHECK("malformed packet", rc);
	CHECK("packet hash", rnsc_packet_hash(b->ctx, h, raw, n));
	SETHEX("hash", h, sizeof(h));
	free(raw);
	return 0;
fail:
	free(raw);
	return 1;
}

static int c_packet_constants(rnsc_bridge *b, json_t *params, json_t *result, char *err,
			      size_t errcap)
{
	(void)b, (void)params, (void)err, (void)errcap;
	SETINT("mtu", RNSC_MTU);
	SETINT("header_minsize", RNSC_HEADER_MINSIZE);
	SETINT("header_maxsize", RNSC_HEADER_MAXSIZE);
	SETINT("mdu", RNSC_MDU);
	SETINT("ifac_min_size", RNSC_IFAC_MIN_SIZE);
	SETINT("packet_mdu", RNSC_MDU);
	SETINT("packet_plain_mdu", RNSC_PLAIN_MDU);
	SETINT("packet_encrypted_mdu", RNSC_ENCRYPTED_MDU);
	SETINT("link_mdu", rnsc_link_mdu(RNSC_MTU));
	SETINT("hashlength", RNSC_HASHLEN * 8);
	SETINT("siglength", RNSC_SIGLEN * 8);
	SETINT("truncated_hashlength", RNSC_TRUNCATED_HASHLEN * 8);
	SETINT("keysize", RNSC_KEYSIZE * 8);
	SETINT("name_hash_length", RNSC_NAME_HASHLEN * 8);
	SETINT("token_overhead", RNSC_TOKEN_OVERHEAD);
	SETINT("aes128_blocksize", 16);
	return 0;
}

static int c_packet_context_constants(rnsc_bridge *b, json_t *params, json_t *result, char *err,
				      size_t errcap)
{
	(void)b, (void)params, (void)err, (void)errcap;
#define RNSC_X_PUT(name, value) SETINT(#name, value);
	RNSC_PACKET_CONTEXTS(RNSC_X_PUT)
#undef RNSC_X_PUT
	json_object_del(result, "REQUEST"); /* the suite's table has no REQUEST row */
	return 0;
}

static int c_announce_queue_constants(rnsc_bridge *b, json_t *params, json_t *result, char *err,
				      size_t errcap)
{
	(void)b, (void)params, (void)err, (void)errcap;
	SETINT("announce_cap", (long long)(RNSC_ANNOUNCE_CAP_DEFAULT * 100 + 0.5));
	SETINT("max_queued_announces", RNSC_MAX_QUEUED_ANNOUNCES);
	SETINT("queued_announce_life", RNSC_QUEUED_ANNOUNCE_LIFE_MS / 1000);
	return 0;
}

/* ---- announces -------------------------------------------------------------------------- */

static int c_announce_build(rnsc_bridge *b, json_t *params, json_t *result, char *err,
			    size_t errcap)
{
	rnsc_identity id;
	const char *app;
	aspects a;
	uint8_t *app_data = NULL, dh[RNSC_TRUNCATED_HASHLEN], nh[RNSC_NAME_HASHLEN];
	uint8_t rh[RNSC_ANNOUNCE_RANDOM_LEN], rprv[32], rpub[32];
	uint8_t data[RNSC_MTU], raw[RNSC_MTU + 64];
	size_t adn;
	long long ts;
	memset(&a, 0, sizeof(a));
	if (id_private(b, params, &id, E))
		return 1;
	if (rnsc_bridge_str(params, "app_name", NULL, &app, E) || get_aspects(params, &a, E) ||
	    rnsc_bridge_int(params, "emission_ts", (long long)time(NULL), &ts, E))
		goto fail;
	HEX("app_data", 0, app_data, adn);
	int ratchets = rnsc_bridge_bool(params, "enable_ratchets", 0);
	if (ts < 0) {
		snprintf(E, "emission_ts must not be negative");
		goto fail;
	}
	CHECK("destination hash", rnsc_destination_hash(b->ctx, dh, id.hash, app, a.v, a.n));
	CHECK("name hash", rnsc_name_hash(b->ctx, nh, app, a.v, a.n));
	CHECK("random hash", rnsc_announce_random_hash(b->ctx, rh, (uint64_t)ts));
	if (ratchets) {
		CHECK("ratchet", rnsc_ratchet_generate(b->ctx, rprv));
		CHECK("ratchet public", rnsc_ratchet_public(b->ctx, rpub, rprv));
		rnsc_memzero(rprv, sizeof(rprv));
	}
	int dlen = rnsc_announce_build(data, sizeof(data), &id, dh, nh, rh, ratchets ? rpub : NULL,
				       app_data, adn);
	CHECK("announce build", dlen);
	rnsc_packet p;
	memset(&p, 0, sizeof(p));
	p.header_type = RNSC_HEADER_1;
	p.context_flag = ratchets ? RNSC_FLAG_SET : RNSC_FLAG_UNSET;
	p.transport_type = RNSC_TRANSPORT_BROADCAST;
	p.dest_type = RNSC_DEST_SINGLE;
	p.packet_type = RNSC_PKT_ANNOUNCE;
	p.context = RNSC_CTX_NONE;
	memcpy(p.dest_hash, dh, sizeof(dh));
	p.data = data;
	p.data_len = (size_t)dlen;
	int len = rnsc_packet_pack(raw, sizeof(raw), &p, RNSC_MTU);
	CHECK("packet pack", len);
	rnsc_announce an;
	CHECK("announce parse", rnsc_announce_parse(&an, &p));
	SETHEX("raw", raw, (size_t)len);
	SETHEX("destination_hash", dh, sizeof(dh));
	SETHEX("announce_data", data, (size_t)dlen);
	SETHEX("public_key", an.public_key, RNSC_KEYSIZE);
	SETHEX("name_hash", an.name_hash, RNSC_NAME_HASHLEN);
	SETHEX("random_hash", an.random_hash, RNSC_ANNOUNCE_RANDOM_LEN);
	SETHEX("ratchet", an.ratchet ? an.ratchet : rpub, an.ratchet ? RNSC_RATCHETSIZE : 0);
	SETHEX("signature", an.signature, RNSC_SIGLEN);
	SETHEX("app_data", an.app_data ? an.app_data : data, an.app_data_len);
	SETBOOL("has_ratchet", an.ratchet != NULL);
	rnsc_identity_free(&id), free(a.buf), free(app_data);
	return 0;
fail:
	rnsc_identity_free(&id), free(a.buf), free(app_data);
	return 1;
}

static int c_announce_validate(rnsc_bridge *b, json_t *params, json_t *result, char *err,
			       size_t errcap)
{
	uint8_t *raw = NULL;
	size_t n;
	rnsc_packet p;
	rnsc_announce a;
	rnsc_identity who;
	HEX("raw", 1, raw, n);
	if (rnsc_packet_unpack(&p, raw, n) != 0) {
		SETBOOL("valid", 0);
		json_object_set_new(result, "error", json_string("unpack_failed"));
		goto out;
	}
	if (p.packet_type != RNSC_PKT_ANNOUNCE) {
		SETBOOL("valid", 0);
		json_object_set_new(result, "error", json_string("not_an_announce"));
		goto out;
	}
	int rc = rnsc_announce_validate(b->ctx, &p, &a, &who);
	if (rc == 0)
		rnsc_identity_free(&who);
	SETBOOL("valid", rc == 0);
	SETHEX("destination_hash", p.dest_hash, sizeof(p.dest_hash));
	SETBOOL("has_ratchet", p.context_flag == RNSC_FLAG_SET);
	if (p.context_flag == RNSC_FLAG_SET) {
		rnsc_announce f;
		if (rnsc_announce_parse(&f, &p) == 0)
			SETHEX("ratchet", f.ratchet, RNSC_RATCHETSIZE);
		else
			SETHEX("ratchet", p.data, 0);
	}
out:
	free(raw);
	return 0;
fail:
	free(raw);
	return 1;
}

/* ---- bz2 -------------------------------------------------------------------------------- */

#define BZ2_MAX_OUT (64u * 1024u * 1024u)

static int c_bz2_compress(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	(void)b;
	uint8_t *d = NULL, *o = NULL;
	size_t n;
	HEX("data", 1, d, n);
	size_t cap = n + n / 100 + 600;
	o = malloc(cap);
	if (!o) {
		snprintf(E, "out of memory");
		goto fail;
	}
	int len = rnsc_stream_bz2(o, cap, d, n);
	CHECK("bz2 compress", len);
	SETHEX("compressed", o, (size_t)len);
	SETINT("original_size", n);
	SETINT("compressed_size", len);
	json_object_set_new(result, "ratio",
			    n ? json_real((double)len / (double)n) : json_integer(0));
	free(d), free(o);
	return 0;
fail:
	free(d), free(o);
	return 1;
}

/* bz2.decompress: concatenated streams are all decompressed; trailing garbage or a stream
 * that does not end is an error. libbz2 is the library rnsc's resources and buffers use. */
static int c_bz2_decompress(rnsc_bridge *b, json_t *params, json_t *result, char *err,
			    size_t errcap)
{
	(void)b;
	uint8_t *d = NULL, *o = NULL;
	size_t n, used = 0, cap = 0, pos = 0;
	HEX("compressed", 1, d, n);
	if (n > UINT_MAX) {
		snprintf(E, "input too large");
		goto fail;
	}
	do {
		bz_stream s;
		memset(&s, 0, sizeof(s));
		if (BZ2_bzDecompressInit(&s, 0, 0) != BZ_OK) {
			snprintf(E, "out of memory");
			goto fail;
		}
		s.next_in = (char *)d + pos;
		s.avail_in = (unsigned)(n - pos);
		int rc;
		do {
			if (used == cap) {
				size_t nc = cap ? cap * 2 : 4096;
				uint8_t *no = nc <= BZ2_MAX_OUT ? realloc(o, nc) : NULL;
				if (!no) {
					BZ2_bzDecompressEnd(&s);
					snprintf(E, "decompressed data exceeds %u bytes",
						 BZ2_MAX_OUT);
					goto fail;
				}
				o = no, cap = nc;
			}
			s.next_out = (char *)o + used;
			s.avail_out = (unsigned)(cap - used);
			rc = BZ2_bzDecompress(&s);
			used = cap - s.avail_out;
		} while (rc == BZ_OK && (s.avail_in > 0 || s.avail_out == 0));
		pos = n - s.avail_in;
		BZ2_bzDecompressEnd(&s);
		if (rc != BZ_STREAM_END) {
			snprintf(E,
				 rc == BZ_OK
					 ? "Compressed data ended before the end-of-stream marker"
					 : "Invalid data stream (bz2 error %d)",
				 rc);
			goto fail;
		}
	} while (pos < n);
	SETHEX("decompressed", o ? o : d, used);
	SETINT("size", used);
	free(d), free(o);
	return 0;
fail:
	free(d), free(o);
	return 1;
}

/* ---- framing ---------------------------------------------------------------------------- */

typedef struct frame_list {
	json_t *frames;
	int first_only;
} frame_list;

static int hdlc_collect(void *ud, const uint8_t *f, size_t len)
{
	frame_list *fl = ud;
	json_t *w = json_object();
	if (!w || rnsc_bridge_set_hex(w, "f", f, len)) {
		json_decref(w);
		return RNSC_ERR_NOMEM;
	}
	json_array_append(fl->frames, json_object_get(w, "f"));
	json_decref(w);
	return fl->first_only ? 1 : 0;
}

static int kiss_collect(void *ud, uint8_t type, const uint8_t *f, size_t len)
{
	/* the reference strips the port nibble and delivers data frames only */
	if (RNSC_KISS_CMD(type) != RNSC_KISS_CMD_DATA)
		return 0;
	return hdlc_collect(ud, f, len);
}

static int c_hdlc_frame(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	(void)b;
	uint8_t *d = NULL, *o = NULL;
	size_t n;
	HEX("data", 1, d, n);
	size_t cap = rnsc_hdlc_encoded_max(n);
	o = cap < SIZE_MAX ? malloc(cap) : NULL;
	if (!o) {
		snprintf(E, "out of memory");
		goto fail;
	}
	int len = rnsc_hdlc_encode(o, cap, d, n);
	CHECK("hdlc encode", len);
	SETHEX("framed", o, (size_t)len);
	free(d), free(o);
	return 0;
fail:
	free(d), free(o);
	return 1;
}

/* HDLC.escape: the frame without its two flags. */
static int c_hdlc_escape(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	if (c_hdlc_frame(b, params, result, err, errcap))
		return 1;
	const char *f = json_string_value(json_object_get(result, "framed"));
	size_t fl = strlen(f);
	json_object_set_new(result, "escaped", json_stringn(f + 2, fl - 4));
	json_object_del(result, "framed");
	return 0;
}

static int c_kiss_frame(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	(void)b;
	uint8_t *d = NULL, *o = NULL;
	size_t n;
	HEX("data", 1, d, n);
	size_t cap = rnsc_kiss_encoded_max(n);
	o = cap < SIZE_MAX ? malloc(cap) : NULL;
	if (!o) {
		snprintf(E, "out of memory");
		goto fail;
	}
	int len = rnsc_kiss_encode(o, cap, d, n);
	CHECK("kiss encode", len);
	SETHEX("framed", o, (size_t)len);
	free(d), free(o);
	return 0;
fail:
	free(d), free(o);
	return 1;
}

/* Deframes a stream with rnsc's decoders. first_only: the first frame (hdlc_deframe /
 * kiss_deframe), else every frame as an interface would deliver it (min size, hw_mtu). */
static int deframe(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap,
		   int kiss, int first_only)
{
	(void)b;
	uint8_t *s = NULL, *buf = NULL;
	size_t n;
	long long mtu;
	frame_list fl = {json_array(), first_only};
	HEX(first_only ? "framed" : "stream", 1, s, n);
	if (rnsc_bridge_int(params, "hw_mtu", kiss ? RNSC_KISS_MTU_TCP : 262144, &mtu, E))
		goto fail;
	if (first_only)
		mtu = (long long)n + 1; /* no interface limit: whatever fits the input */
	if (mtu < 1 || mtu > 64ll * 1024 * 1024) {
		snprintf(E, "hw_mtu must be 1..67108864");
		goto fail;
	}
	buf = malloc((size_t)mtu);
	if (!buf || !fl.frames) {
		snprintf(E, "out of memory");
		goto fail;
	}
	int rc;
	if (kiss) {
		rnsc_kiss_decoder d;
		CHECK("kiss decoder", rnsc_kiss_decoder_init(&d, buf, (size_t)mtu));
		rc = rnsc_kiss_decoder_feed(&d, s, n, kiss_collect, &fl);
	} else {
		rnsc_hdlc_decoder d;
		CHECK("hdlc decoder", rnsc_hdlc_decoder_init(&d, buf, (size_t)mtu));
		if (!first_only)
			CHECK("hdlc decoder",
			      rnsc_hdlc_decoder_set_min(&d, RNSC_HDLC_REF_MIN_FRAME));
		rc = rnsc_hdlc_decoder_feed(&d, s, n, hdlc_collect, &fl);
	}
	CHECK("deframe", rc);
	if (first_only) {
		if (json_array_size(fl.frames) == 0) {
			snprintf(E, "no complete %s frame in the input",
				 kiss ? "KISS data" : "HDLC");
			goto fail;
		}
		json_object_set(result, "data", json_array_get(fl.frames, 0));
	} else {
		json_object_set(result, "frames", fl.frames);
	}
	json_decref(fl.frames), free(s), free(buf);
	return 0;
fail:
	json_decref(fl.frames), free(s), free(buf);
	return 1;
}
static int c_hdlc_deframe(rnsc_bridge *b, json_t *p, json_t *r, char *err, size_t errcap)
{
	return deframe(b, p, r, err, errcap, 0, 1);
}
static int c_kiss_deframe(rnsc_bridge *b, json_t *p, json_t *r, char *err, size_t errcap)
{
	return deframe(b, p, r, err, errcap, 1, 1);
}
static int c_hdlc_deframe_stream(rnsc_bridge *b, json_t *p, json_t *r, char *err, size_t errcap)
{
	return deframe(b, p, r, err, errcap, 0, 0);
}
static int c_kiss_deframe_stream(rnsc_bridge *b, json_t *p, json_t *r, char *err, size_t errcap)
{
	return deframe(b, p, r, err, errcap, 1, 0);
}

/* ---- crypto backends, naming extras, interface numbers --------------------------------- */

/* One primitive through a named rnsc crypto backend. The suite names the reference's two
 * providers; 'pyca' (PyCA cryptography, i.e. OpenSSL) maps to rnsc's openssl plugin and
 * 'internal' (an independent implementation) to its libsodium plugin. rnsc's own backend
 * names are accepted as well. */
static int c_crypto_provider_op(rnsc_bridge *b, json_t *params, json_t *result, char *err,
				size_t errcap)
{
	const char *op, *prov;
	if (rnsc_bridge_str(params, "op", NULL, &op, E) ||
	    rnsc_bridge_str(params, "provider", NULL, &prov, E))
		return 1;
	const char *be = !strcmp(prov, "pyca")       ? "openssl"
			 : !strcmp(prov, "internal") ? "sodium"
						     : prov;
	if (!rnsc_crypto_backend_find(b->ctx, be)) {
		snprintf(E, "Unknown provider: %.40s (no rnsc crypto backend '%.40s' is loaded)",
			 prov, be);
		return 1;
	}
	if (rnsc_bridge_open_backend(b, be)) {
		snprintf(E, "cannot select crypto backend '%s'", be);
		return 1;
	}
	rnsc_bridge sub = *b;
	sub.ctx = b->alt_ctx;
	int rc;
	json_t *r = json_object();
	if (!r) {
		snprintf(E, "out of memory");
		return 1;
	}
	if (!strcmp(op, "x25519_exchange")) {
		rc = c_x25519_exchange(&sub, params, r, err, errcap);
		if (!rc)
			json_object_set(result, "result", json_object_get(r, "shared_secret"));
	} else if (!strcmp(op, "ed25519_sign")) {
		rc = c_ed25519_sign(&sub, params, r, err, errcap);
		if (!rc)
			json_object_set(result, "result", json_object_get(r, "signature"));
	} else if (!strcmp(op, "ed25519_verify")) {
		rc = c_ed25519_verify(&sub, params, r, err, errcap);
		if (!rc)
			json_object_set(result, "valid", json_object_get(r, "valid"));
	} else if (!strcmp(op, "aes_256_cbc_encrypt")) {
		rc = aes(&sub, params, r, err, errcap, 1, 0);
		if (!rc)
			json_object_set(result, "result", json_object_get(r, "ciphertext"));
	} else {
		snprintf(E, "Unknown op: %.40s", op);
		rc = 1;
	}
	json_decref(r);
	return rc;
}

static int c_hash_from_name_and_identity(rnsc_bridge *b, json_t *params, json_t *result, char *err,
					 size_t errcap)
{
	uint8_t idh[RNSC_TRUNCATED_HASHLEN], h[RNSC_TRUNCATED_HASHLEN];
	const char *name;
	FIXED("identity_hash", idh);
	if (rnsc_bridge_str(params, "full_name", NULL, &name, E))
		goto fail;
	CHECK("destination hash", rnsc_destination_hash_from_name(b->ctx, h, idh, name));
	SETHEX("destination_hash", h, sizeof(h));
	return 0;
fail:
	return 1;
}

static int c_destination_expand_name(rnsc_bridge *b, json_t *params, json_t *result, char *err,
				     size_t errcap)
{
	const char *app;
	aspects a;
	rnsc_identity id;
	int have_id = 0;
	char name[2048];
	memset(&a, 0, sizeof(a));
	if (rnsc_bridge_str(params, "app_name", NULL, &app, E) || get_aspects(params, &a, E))
		goto fail;
	json_t *pk = json_object_get(params, "identity_private_key");
	if (rnsc_bridge_bool(params, "identity_private_key", 0) && json_is_string(pk)) {
		json_t *w = json_object();
		json_object_set(w, "private_key", pk);
		int bad = id_private(b, w, &id, E);
		json_decref(w);
		if (bad)
			goto fail;
		have_id = 1;
	}
	CHECK("expand name", rnsc_destination_expand_name(name, sizeof(name),
							  have_id ? id.hash : NULL, app, a.v, a.n));
	json_object_set_new(result, "name", json_string(name));
	if (have_id)
		SETHEX("identity_hexhash", id.hash, sizeof(id.hash));
	if (have_id)
		rnsc_identity_free(&id);
	free(a.buf);
	return 0;
fail:
	if (have_id)
		rnsc_identity_free(&id);
	free(a.buf);
	return 1;
}

/* AutoInterface's discovery token: full_hash(group_id || address text). */
static int c_auto_discovery_token(rnsc_bridge *b, json_t *params, json_t *result, char *err,
				  size_t errcap)
{
	uint8_t *g = NULL, *buf = NULL, h[RNSC_HASHLEN];
	size_t gn;
	const char *addr;
	HEX("group_id", 1, g, gn);
	if (rnsc_bridge_str(params, "link_local_addr", NULL, &addr, E))
		goto fail;
	size_t an = strlen(addr);
	buf = malloc(gn + an + 1);
	if (!buf) {
		snprintf(E, "out of memory");
		goto fail;
	}
	memcpy(buf, g, gn);
	memcpy(buf + gn, addr, an);
	CHECK("full hash", rnsc_full_hash(b->ctx, h, buf, gn + an));
	SETHEX("token", h, sizeof(h));
	free(g), free(buf);
	return 0;
fail:
	free(g), free(buf);
	return 1;
}

/* Interface.optimise_mtu's tier table (rnsc_hw_mtu_for_bitrate); below the lowest tier the
 * reference sets HW_MTU to None, which the suite reads as hw_mtu null. */
static int c_interface_optimise_mtu(rnsc_bridge *b, json_t *params, json_t *result, char *err,
				    size_t errcap)
{
	(void)b;
	long long br;
	if (rnsc_bridge_int(params, "bitrate", -1, &br, E))
		return 1;
	if (!json_object_get(params, "bitrate") || br < 0) {
		snprintf(E, "parameter 'bitrate' must be a non-negative integer");
		return 1;
	}
	if (!rnsc_bridge_bool(params, "autoconfigure", 1)) {
		SETINT("hw_mtu", -1);
		SETBOOL("unchanged", 1);
		return 0;
	}
	size_t mtu = rnsc_hw_mtu_for_bitrate((uint64_t)br);
	if (mtu)
		SETINT("hw_mtu", mtu);
	else
		json_object_set_new(result, "hw_mtu", json_null());
	SETBOOL("unchanged", 0);
	return 0;
}

/* The reference's Packet.pack() assembles a HEADER_2 header only for an ANNOUNCE it
 * originates (transport rewrites forwarded packets' raw bytes instead), and only with a
 * transport id. rnsc_packet_pack is the wire encoder under both, so the bridge keeps the
 * origination rule: a refusal is an answer ({error, error_type}), not a failed command,
 * worded as the reference words it because the suite matches that text. */
static int c_packet_build_raw_header2(rnsc_bridge *b, json_t *params, json_t *result, char *err,
				      size_t errcap)
{
	long long ptype;
	uint8_t *data = NULL, raw[RNSC_MTU + 64], one = 0;
	size_t n;
	rnsc_packet p;
	rnsc_identity id;
	memset(&p, 0, sizeof(p));
	if (rnsc_bridge_int(params, "packet_type", RNSC_PKT_ANNOUNCE, &ptype, E))
		return 1;
	if (rnsc_bridge_hex(params, "data", 0, &data, &n, E))
		return 1;
	json_t *tid = json_object_get(params, "transport_id");
	const char *refusal = NULL;
	if (!tid || json_is_null(tid))
		refusal = "Packet with header type 2 must have a transport ID";
	else if (ptype != RNSC_PKT_ANNOUNCE)
		refusal = "rnsc originates HEADER_2 packets for ANNOUNCE only (transport inserts "
			  "the transport id of any other packet it forwards)";
	if (refusal) {
		free(data);
		json_object_set_new(result, "error", json_string(refusal));
		json_object_set_new(result, "error_type",
				    json_string(rnsc_err_name(RNSC_ERR_INVAL)));
		return 0;
	}
	if (rnsc_bridge_hex_fixed(params, "transport_id", p.transport_id, sizeof(p.transport_id),
				  E)) {
		free(data);
		return 1;
	}
	static const char *const asp[] = {"packet"};
	int rc = rnsc_identity_generate(b->ctx, &id);
	if (rc) {
		free(data);
		return rnsc_bridge_fail(E, "identity", rc);
	}
	rc = rnsc_destination_hash(b->ctx, p.dest_hash, id.hash, "conformance", asp, 1);
	rnsc_identity_free(&id);
	p.header_type = RNSC_HEADER_2;
	p.transport_type = RNSC_TRANSPORT_BROADCAST;
	p.dest_type = RNSC_DEST_SINGLE;
	p.packet_type = RNSC_PKT_ANNOUNCE;
	/* the reference's bridge packs b"\x00" for empty data */
	p.data = n ? data : &one;
	p.data_len = n ? n : 1;
	int len = rc ? rc : rnsc_packet_pack(raw, sizeof(raw), &p, RNSC_MTU);
	free(data);
	if (len < 0)
		return rnsc_bridge_fail(E, "packet pack", len);
	if (rnsc_bridge_set_hex(result, "raw", raw, (size_t)len)) {
		snprintf(E, "out of memory");
		return 1;
	}
	SETINT("raw_len", len);
	return 0;
}

/* Identity.remember into rnsc's known-destinations store (the transport engine's, here a
 * fresh engine per request, since the bridge runs none for primitives), then recall. The
 * store's record holds exactly RNSC_KEYSIZE (64) key bytes, so any other length is refused
 * before it, where the reference raises TypeError: answered with the suite's name for it. */
static int c_identity_remember(rnsc_bridge *b, json_t *params, json_t *result, char *err,
			       size_t errcap)
{
	rnsc_transport_known k;
	uint8_t *pub = NULL, *app = NULL;
	size_t pn, an = 0;
	memset(&k, 0, sizeof(k));
	/* the reference stores whatever packet hash it is given; the record keeps up to 32 bytes */
	uint8_t *ph = NULL;
	size_t phn;
	if (rnsc_bridge_hex(params, "packet_hash", 1, &ph, &phn, E))
		return 1;
	if (phn)
		memcpy(k.packet_hash, ph,
		       phn < sizeof(k.packet_hash) ? phn : sizeof(k.packet_hash));
	free(ph);
	if (rnsc_bridge_hex_fixed(params, "destination_hash", k.dest_hash, sizeof(k.dest_hash), E))
		return 1;
	if (rnsc_bridge_hex(params, "public_key", 1, &pub, &pn, E))
		return 1;
	SETINT("public_key_len", pn);
	if (pn != RNSC_KEYSIZE) {
		free(pub);
		SETBOOL("ok", 0);
		json_object_set_new(result, "error", json_string("TypeError"));
		json_object_set_new(result, "reason",
				    json_string("a known destination's public key is 64 bytes"));
		return 0;
	}
	memcpy(k.public_key, pub, RNSC_KEYSIZE);
	free(pub);
	json_t *ad = json_object_get(params, "app_data");
	if (ad && !json_is_null(ad) && !(json_is_string(ad) && !*json_string_value(ad))) {
		if (rnsc_bridge_hex(params, "app_data", 0, &app, &an, E))
			return 1;
		k.app_data = app;
		k.app_data_len = an;
	}
	k.timestamp = (uint64_t)time(NULL) * 1000u;
	rnsc_identity tid, got;
	rnsc_transport *t = NULL;
	int rc = rnsc_identity_generate(b->ctx, &tid);
	if (rc == 0) {
		rc = rnsc_transport_new(b->ctx, &t, &tid, NULL);
		rnsc_identity_free(&tid);
	}
	if (rc == 0)
		rc = rnsc_transport_known_import(t, &k);
	free(app);
	if (rc) {
		rnsc_transport_del(t);
		return rnsc_bridge_fail(E, "remember", rc);
	}
	rc = rnsc_transport_recall(t, k.dest_hash, &got, NULL, NULL);
	if (rc == 0)
		rnsc_identity_free(&got);
	rnsc_transport_del(t);
	SETBOOL("ok", 1);
	SETBOOL("recalled", rc == 0);
	if (rc)
		json_object_set_new(result, "recall_error", json_string(rnsc_err_name(rc)));
	return 0;
}

/* ---- config_parse_interface: one [interfaces] section through rnsc's config reader -------- */

/* The suite's probe type: a no-op interface of bitrate 62500 whose DEFAULT_IFAC_SIZE is 16
 * bytes (RNSC_IFAC_DEFAULT_SIZE, the TCP class's). */
#define PROBE_TYPE "ConfigParseProbeInterface"
#define PROBE_BITRATE 62500

static void set_secs(json_t *result, const char *key, uint64_t ms)
{
	if (ms % 1000 == 0)
		SETINT(key, ms / 1000);
	else
		json_object_set_new(result, key, json_real((double)ms / 1000.0));
}

static int cfg_fail(char *err, size_t errcap, const rnsc_config_error *ce, int rc)
{
	snprintf(E, "config: %s (%s)", rnsc_strerror(rc), ce->msg[0] ? ce->msg : "no detail");
	return 1;
}

/* The per-interface decisions rnsc's node makes when it opens a configured interface
 * (node.c read_iface_opts, node_policy.c), read back under the suite's field names. */
static int c_config_parse_interface(rnsc_bridge *b, json_t *params, json_t *result, char *err,
				    size_t errcap)
{
	const char *text, *name, *v;
	if (rnsc_bridge_str(params, "config_text", NULL, &text, E) ||
	    rnsc_bridge_str(params, "interface_name", NULL, &name, E))
		return 1;
	if (!text || !name) {
		snprintf(E, "parameters 'config_text' and 'interface_name' are required");
		return 1;
	}
	rnsc_config *cfg = NULL;
	rnsc_config_error ce;
	memset(&ce, 0, sizeof(ce));
	int rc = rnsc_config_parse(b->ctx, text, strlen(text), "config_text", &cfg, &ce);
	if (rc)
		return cfg_fail(E, &ce, rc);
	int ret = 1;
	const rnsc_config_section *ifs =
		rnsc_config_section_get(rnsc_config_root(cfg), "interfaces");
	const rnsc_config_section *s = ifs ? rnsc_config_section_get(ifs, name) : NULL;
	if (!s) {
		snprintf(E, "config_text has no [[%s]] under [interfaces]", name);
		goto out;
	}
	if (!rnsc_config_has(s, "type") || rnsc_config_get_str(s, "type", &v, &ce) ||
	    strcmp(v, PROBE_TYPE) != 0) {
		snprintf(E, "the interface type must be " PROBE_TYPE " (rnsc opens no other here)");
		goto out;
	}
	int mode;
	if ((rc = rnsc_node_iface_mode_read(s, &mode, &ce))) {
		cfg_fail(E, &ce, rc);
		goto out;
	}
	int disc = 0;
	if (rnsc_config_has(s, "discoverable") &&
	    (rc = rnsc_config_get_bool(s, "discoverable", &disc, &ce))) {
		cfg_fail(E, &ce, rc);
		goto out;
	}
	if (disc) {
		snprintf(E, "discoverable = yes: rnsc does not publish interface discovery "
			    "announces, so it has no discovery mode forcing or announce interval");
		goto out;
	}
	rnsc_transport_iface_policy pol;
	if ((rc = rnsc_node_policy_read(NULL, s, &pol, &ce))) {
		cfg_fail(E, &ce, rc);
		goto out;
	}
	int64_t bitrate = 0, bits = 0;
	int has_bitrate = 0;
	if (rnsc_config_has(s, "bitrate")) {
		if ((rc = rnsc_config_get_int(s, "bitrate", &bitrate, &ce))) {
			cfg_fail(E, &ce, rc);
			goto out;
		}
		has_bitrate = bitrate >= (int64_t)RNSC_MINIMUM_BITRATE;
	}
	size_t ifac_size = RNSC_IFAC_DEFAULT_SIZE;
	if (rnsc_config_has(s, "ifac_size")) {
		if ((rc = rnsc_config_get_int(s, "ifac_size", &bits, &ce))) {
			cfg_fail(E, &ce, rc);
			goto out;
		}
		size_t sz = rnsc_ifac_size_from_bits((long)(bits > 8 * 512 ? 8 * 512 + 8 : bits));
		if (sz > RNSC_IFAC_MAX_SIZE) {
			snprintf(E,
				 "ifac_size: %lld bits is beyond the 512-bit maximum rnsc accepts",
				 (long long)bits);
			goto out;
		}
		if (sz)
			ifac_size = sz;
	}
	/* later spellings override earlier ones; empty values count as unset (node.c) */
	const char *netname = NULL, *netkey = NULL;
	static const char *const names[] = {"networkname", "network_name"};
	static const char *const passes[] = {"passphrase", "pass_phrase"};
	for (int i = 0; i < 2; i++) {
		if (rnsc_config_has(s, names[i]) &&
		    rnsc_config_get_str(s, names[i], &v, &ce) == 0 && *v)
			netname = v;
		if (rnsc_config_has(s, passes[i]) &&
		    rnsc_config_get_str(s, passes[i], &v, &ce) == 0 && *v)
			netkey = v;
	}
	int ifac_active = 0;
	if (netname || netkey) {
		rnsc_ifac ifac;
		if ((rc = rnsc_ifac_init(&ifac, b->ctx, netname, netkey, ifac_size))) {
			rnsc_bridge_fail(E, "ifac_init", rc);
			goto out;
		}
		rnsc_ifac_free(&ifac);
		ifac_active = 1;
	}
	static const char *const mode_names[] = {
		NULL, "full", "pointtopoint", "access_point", "roaming", "boundary", "gateway"};
	SETINT("selected_interface_mode", mode);
	SETINT("mode", mode);
	json_object_set_new(result, "mode_name",
			    mode >= 1 && mode <= 6 ? json_string(mode_names[mode]) : json_null());
	if (has_bitrate)
		SETINT("configured_bitrate", bitrate);
	else
		json_object_set_new(result, "configured_bitrate", json_null());
	SETINT("bitrate", has_bitrate ? bitrate : PROBE_BITRATE);
	json_object_set_new(result, "announce_cap", json_real(pol.announce_cap));
	SETINT("ifac_size", ifac_size);
	SETINT("default_ifac_size", RNSC_IFAC_DEFAULT_SIZE);
	SETBOOL("discoverable", 0);
	json_object_set_new(result, "discovery_announce_interval", json_null());
	json_object_set_new(result, "ifac_netname", netname ? json_string(netname) : json_null());
	json_object_set_new(result, "ifac_netkey", netkey ? json_string(netkey) : json_null());
	SETBOOL("ifac_active", ifac_active);
	SETINT("ic_max_held_announces", pol.ic.max_held);
	set_secs(result, "ic_burst_hold", pol.ic.burst_hold_ms);
	json_object_set_new(result, "ic_burst_freq_new", json_real(pol.ic.burst_freq_new));
	json_object_set_new(result, "ic_burst_freq", json_real(pol.ic.burst_freq));
	set_secs(result, "ic_new_time", pol.ic.new_time_ms);
	set_secs(result, "ic_burst_penalty", pol.ic.burst_penalty_ms);
	set_secs(result, "ic_held_release_interval", pol.ic.held_release_interval_ms);
	ret = 0;
out:
	rnsc_config_del(cfg);
	return ret;
}

/* ---- Channel envelopes and Buffer stream messages (channel.h, buffer.h) ------------------- */

static int c_wire_channel_envelope_pack(rnsc_bridge *b, json_t *params, json_t *result, char *err,
					size_t errcap)
{
	(void)b;
	long long mt, seq;
	uint8_t *d = NULL, *o = NULL;
	size_t n;
	if (rnsc_bridge_int(params, "msgtype", -1, &mt, E) ||
	    rnsc_bridge_int(params, "sequence", -1, &seq, E))
		goto fail;
	if (mt < 0 || mt > 0xFFFF || seq < 0 || seq > 0xFFFF) {
		snprintf(E, "msgtype and sequence must be 0..65535");
		goto fail;
	}
	HEX("data", 0, d, n);
	o = malloc(n + RNSC_CHANNEL_ENVELOPE_HEADER);
	if (!o) {
		snprintf(E, "out of memory");
		goto fail;
	}
	int len = rnsc_channel_envelope_pack(o, n + RNSC_CHANNEL_ENVELOPE_HEADER, (uint16_t)mt,
					     (uint16_t)seq, d, n);
	CHECK("envelope pack", len);
	SETHEX("raw", o, (size_t)len);
	SETINT("sequence", seq);
	free(d), free(o);
	return 0;
fail:
	free(d), free(o);
	return 1;
}

/* StreamDataMessage pack, or unpack when unpack_raw is given. Refusals are reported as an
 * "error" field of a successful answer, as the suite expects of this command. */
static int c_wire_buffer_pack(rnsc_bridge *b, json_t *params, json_t *result, char *err,
			      size_t errcap)
{
	(void)b;
	uint8_t *d = NULL, *o = NULL;
	size_t n;
	json_t *ur = json_object_get(params, "unpack_raw");
	if (ur && !json_is_null(ur)) {
		unsigned sid;
		int eof, comp;
		HEX("unpack_raw", 1, d, n);
		o = malloc(n + RNSC_BUFFER_MAX_CHUNK_LEN);
		if (!o) {
			snprintf(E, "out of memory");
			goto fail;
		}
		int len = rnsc_stream_msg_decode(d, n, &sid, &eof, &comp, o,
						 n + RNSC_BUFFER_MAX_CHUNK_LEN);
		if (len < 0) {
			json_object_set_new(result, "error", json_string(rnsc_strerror(len)));
		} else {
			SETINT("stream_id", sid);
			SETBOOL("eof", eof);
			SETBOOL("compressed", comp);
			SETHEX("data", o, (size_t)len);
		}
		free(d), free(o);
		return 0;
	}
	long long sid;
	if (rnsc_bridge_int(params, "stream_id", -1, &sid, E))
		goto fail;
	if (!json_object_get(params, "stream_id")) {
		snprintf(E, "missing parameter 'stream_id'");
		goto fail;
	}
	HEX("data", 0, d, n);
	o = malloc(n + RNSC_BUFFER_HEADER_LEN);
	if (!o) {
		snprintf(E, "out of memory");
		goto fail;
	}
	int len = sid < 0 || sid > UINT_MAX
			  ? RNSC_ERR_RANGE
			  : rnsc_stream_msg_pack(o, n + RNSC_BUFFER_HEADER_LEN, (unsigned)sid,
						 rnsc_bridge_bool(params, "eof", 0),
						 rnsc_bridge_bool(params, "compressed", 0), d, n);
	if (len == RNSC_ERR_RANGE) {
		char msg[96];
		snprintf(msg, sizeof(msg), "stream_id must be 0-%d: %s", RNSC_BUFFER_STREAM_ID_MAX,
			 rnsc_strerror(len));
		json_object_set_new(result, "error", json_string(msg));
	} else if (len < 0) {
		json_object_set_new(result, "error", json_string(rnsc_strerror(len)));
	} else {
		SETHEX("raw", o, (size_t)len);
		SETINT("msgtype", RNSC_CHANNEL_SMT_STREAM_DATA);
	}
	free(d), free(o);
	return 0;
fail:
	free(d), free(o);
	return 1;
}

const rnsc_bridge_cmd rnsc_bridge_prim_cmds[] = {
	{"x25519_generate", c_x25519_generate},
	{"x25519_public_from_private", c_x25519_public},
	{"x25519_exchange", c_x25519_exchange},
	{"ed25519_generate", c_ed25519_generate},
	{"ed25519_sign", c_ed25519_sign},
	{"ed25519_verify", c_ed25519_verify},
	{"sha256", c_sha256},
	{"sha512", c_sha512},
	{"hmac_sha256", c_hmac_sha256},
	{"hkdf", c_hkdf},
	{"pkcs7_pad", c_pkcs7_pad},
	{"pkcs7_unpad", c_pkcs7_unpad},
	{"aes_encrypt", c_aes_encrypt},
	{"aes_decrypt", c_aes_decrypt},
	{"aes_256_cbc_encrypt", c_aes_raw_encrypt},
	{"aes_256_cbc_decrypt", c_aes_raw_decrypt},
	{"token_encrypt", c_token_encrypt},
	{"token_decrypt", c_token_decrypt},
	{"token_verify_hmac", c_token_verify_hmac},
	{"token_generate_key", c_token_generate_key},
	{"identity_from_private_key", c_identity_from_private_key},
	{"identity_encrypt", c_identity_encrypt},
	{"identity_decrypt", c_identity_decrypt},
	{"identity_sign", c_identity_sign},
	{"identity_verify", c_identity_verify},
	{"identity_hash", c_identity_hash},
	{"identity_to_file", c_identity_to_file},
	{"identity_from_file", c_identity_from_file},
	{"identity_random_hash", c_identity_random_hash},
	{"identity_keyless_op", c_identity_keyless_op},
	{"destination_hash", c_destination_hash},
	{"truncated_hash", c_truncated_hash},
	{"name_hash", c_name_hash},
	{"app_and_aspects_from_name", c_app_and_aspects_from_name},
	{"ratchet_id", c_ratchet_id},
	{"ratchet_public_from_private", c_ratchet_public},
	{"ratchet_encrypt", c_ratchet_encrypt},
	{"ratchet_decrypt", c_ratchet_decrypt},
	{"packet_build", c_packet_build},
	{"packet_unpack", c_packet_unpack},
	{"packet_hash", c_packet_hash},
	{"packet_constants", c_packet_constants},
	{"packet_context_constants", c_packet_context_constants},
	{"announce_queue_constants", c_announce_queue_constants},
	{"announce_build", c_announce_build},
	{"announce_validate", c_announce_validate},
	{"bz2_compress", c_bz2_compress},
	{"bz2_decompress", c_bz2_decompress},
	{"hdlc_frame", c_hdlc_frame},
	{"hdlc_escape", c_hdlc_escape},
	{"kiss_frame", c_kiss_frame},
	{"hdlc_deframe", c_hdlc_deframe},
	{"kiss_deframe", c_kiss_deframe},
	{"hdlc_deframe_stream", c_hdlc_deframe_stream},
	{"kiss_deframe_stream", c_kiss_deframe_stream},
	{"crypto_provider_op", c_crypto_provider_op},
	{"hash_from_name_and_identity", c_hash_from_name_and_identity},
	{"destination_expand_name", c_destination_expand_name},
	{"auto_discovery_token", c_auto_discovery_token},
	{"interface_optimise_mtu", c_interface_optimise_mtu},
	{"config_parse_interface", c_config_parse_interface},
	{"identity_remember", c_identity_remember},
	{"packet_build_raw_header2", c_packet_build_raw_header2},
	{"wire_channel_envelope_pack", c_wire_channel_envelope_pack},
	{"wire_buffer_pack", c_wire_buffer_pack},
	{NULL, NULL},
};
