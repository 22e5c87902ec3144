/* SPDX-License-Identifier: MIT */
/*
 * The reference as one more crypto backend: each rnsc_crypto_ops slot calls the reference's
 * RNS.Cryptography code (through the harness's prim_* functions, which hold the primitives as
 * imported). inst is the rnsc_pyref handle. Thread-safe in the sense of pyref.h: every call
 * takes the GIL.
 */
#include "pyref_internal.h"

#include <string.h>

#define YB(p, n) (const char *)(p), (Py_ssize_t)(n)

/* The streaming state parked in the caller's rnsc_hash_state. */
struct ref_hash {
	PyObject *obj; /* hashlib object, owned while the stream is open */
	int alg;
};

_Static_assert(sizeof(struct ref_hash) <= RNSC_HASH_STATE_SIZE, "hash state too small");

static int call_out(rnsc_pyref *ref, const char *fn, uint8_t *out, size_t n, const char *fmt, ...)
{
	pyref_gil st = pyref_enter(ref);
	va_list ap;
	va_start(ap, fmt);
	PyObject *args = Py_VaBuildValue(fmt, ap);
	va_end(ap);
	int rc;
	if (!args) {
		rc = pyref_exc(ref, fn);
	} else {
		PyObject *res = pyref_call_args(ref, fn, args);
		Py_DECREF(args);
		rc = pyref_result(ref, fn, res, out, n, n);
	}
	pyref_leave(st);
	return rc < 0 ? rc : 0;
}

static int ref_random(void *inst, uint8_t *out, size_t len)
{
	return call_out(inst, "prim_random", out, len, "(n)", (Py_ssize_t)len);
}

static int ref_sha256(void *inst, uint8_t out[32], const uint8_t *msg, size_t len)
{
	return call_out(inst, "prim_sha256", out, 32, "(y#)", YB(msg, len));
}

static int ref_sha512(void *inst, uint8_t out[64], const uint8_t *msg, size_t len)
{
	return call_out(inst, "prim_sha512", out, 64, "(y#)", YB(msg, len));
}

static int ref_hash_init(void *inst, rnsc_hash_state *st, int alg)
{
	rnsc_pyref *ref = inst;
	if (alg != RNSC_HASH_SHA256 && alg != RNSC_HASH_SHA512)
		return RNSC_ERR_INVAL;
	struct ref_hash h = {.obj = NULL, .alg = alg};
	pyref_gil g = pyref_enter(ref);
	h.obj = pyref_call(ref, "prim_hash_new", "(i)", alg);
	pyref_leave(g);
	if (!h.obj)
		return RNSC_ERR_PYTHON;
	memcpy(st->bytes, &h, sizeof(h));
	return 0;
}

static int ref_hash_update(void *inst, rnsc_hash_state *st, const uint8_t *p, size_t len)
{
	rnsc_pyref *ref = inst;
	struct ref_hash h;
	memcpy(&h, st->bytes, sizeof(h));
	if (!h.obj)
		return RNSC_ERR_STATE;
	if (len == 0)
		return 0;
	pyref_gil g = pyref_enter(ref);
	/* hashlib reads the buffer during the call and keeps nothing, so no copy is needed */
	PyObject *view = PyMemoryView_FromMemory((char *)(uintptr_t)p, (Py_ssize_t)len, PyBUF_READ);
	PyObject *res = view ? PyObject_CallMethod(h.obj, "update", "O", view) : NULL;
	int rc = res ? 0 : pyref_exc(ref, "hashlib update");
	Py_XDECREF(res);
	Py_XDECREF(view);
	pyref_leave(g);
	return rc;
}

static void drop_hash(rnsc_pyref *ref, rnsc_hash_state *st)
{
	struct ref_hash h;
	memcpy(&h, st->bytes, sizeof(h));
	if (h.obj) {
		pyref_gil g = pyref_enter(ref);
		Py_DECREF(h.obj);
		pyref_leave(g);
	}
	memset(st->bytes, 0, sizeof(h));
}

static int ref_hash_final(void *inst, rnsc_hash_state *st, uint8_t *out)
{
	rnsc_pyref *ref = inst;
	struct ref_hash h;
	memcpy(&h, st->bytes, sizeof(h));
	if (!h.obj)
		return RNSC_ERR_STATE;
	pyref_gil g = pyref_enter(ref);
	PyObject *res = PyObject_CallMethod(h.obj, "digest", NULL);
	if (!res)
		pyref_exc(ref, "hashlib digest");
	size_t n = h.alg == RNSC_HASH_SHA256 ? 32 : 64;
	int rc = pyref_result(ref, "hashlib digest", res, out, n, n);
	pyref_leave(g);
	drop_hash(ref, st);
	return rc < 0 ? rc : 0;
}

static void ref_hash_abort(void *inst, rnsc_hash_state *st)
{
	drop_hash(inst, st);
}

static int ref_hmac(void *inst, uint8_t out[32], const uint8_t *key, size_t key_len,
		    const uint8_t *msg, size_t msg_len)
{
	return call_out(inst, "prim_hmac", out, 32, "(y#y#)", YB(key, key_len), YB(msg, msg_len));
}

static int ref_hkdf(void *inst, uint8_t *out, size_t out_len, const uint8_t *ikm, size_t ikm_len,
		    const uint8_t *salt, size_t salt_len, const uint8_t *info, size_t info_len)
{
	/* The reference refuses a zero length (ValueError); say so without an exception. */
	if (out_len == 0)
		return RNSC_ERR_INVAL;
	return call_out(inst, "prim_hkdf", out, out_len, "(ny#y#y#)", (Py_ssize_t)out_len,
			YB(ikm, ikm_len), YB(salt, salt_len), YB(info, info_len));
}

static int ref_aes_enc(void *inst, uint8_t *out, const uint8_t key[32], const uint8_t iv[16],
		       const uint8_t *in, size_t len)
{
	if (len % 16)
		return RNSC_ERR_INVAL;
	return call_out(inst, "prim_aes_encrypt", out, len, "(y#y#y#)", YB(key, 32), YB(iv, 16),
			YB(in, len));
}

static int ref_aes_dec(void *inst, uint8_t *out, const uint8_t key[32], const uint8_t iv[16],
		       const uint8_t *in, size_t len)
{
	if (len % 16)
		return RNSC_ERR_INVAL;
	return call_out(inst, "prim_aes_decrypt", out, len, "(y#y#y#)", YB(key, 32), YB(iv, 16),
			YB(in, len));
}

static int ref_x25519_public(void *inst, uint8_t pub[32], const uint8_t priv[32])
{
	return call_out(inst, "prim_x25519_public", pub, 32, "(y#)", YB(priv, 32));
}

static int ref_x25519(void *inst, uint8_t shared[32], const uint8_t priv[32],
		      const uint8_t peer_pub[32])
{
	return call_out(inst, "prim_x25519", shared, 32, "(y#y#)", YB(priv, 32), YB(peer_pub, 32));
}

static int ref_ed25519_public(void *inst, uint8_t pub[32], const uint8_t seed[32])
{
	return call_out(inst, "prim_ed25519_public", pub, 32, "(y#)", YB(seed, 32));
}

static int ref_ed25519_sign(void *inst, uint8_t sig[64], const uint8_t seed[32],
			    const uint8_t pub[32], const uint8_t *msg, size_t len)
{
	(void)pub; /* the reference derives it from the seed */
	return call_out(inst, "prim_ed25519_sign", sig, 64, "(y#y#)", YB(seed, 32), YB(msg, len));
}

static int ref_ed25519_verify(void *inst, const uint8_t sig[64], const uint8_t pub[32],
			      const uint8_t *msg, size_t len)
{
	return call_out(inst, "prim_ed25519_verify", NULL, 0, "(y#y#y#)", YB(pub, 32), YB(sig, 64),
			YB(msg, len));
}

/* Known answers: SHA-256("abc") (FIPS 180-2) and the RFC 8032 section 7.1 TEST 1 key pair. */
static int ref_self_test(void *inst)
{
	static const uint8_t abc_sha256[32] = {0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea,
					       0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23,
					       0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c,
					       0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad};
	static const uint8_t ed_seed[32] = {0x9d, 0x61, 0xb1, 0x9d, 0xef, 0xfd, 0x5a, 0x60,
					    0xba, 0x84, 0x4a, 0xf4, 0x92, 0xec, 0x2c, 0xc4,
					    0x44, 0x49, 0xc5, 0x69, 0x7b, 0x32, 0x69, 0x19,
					    0x70, 0x3b, 0xac, 0x03, 0x1c, 0xae, 0x7f, 0x60};
	static const uint8_t ed_pub[32] = {0xd7, 0x5a, 0x98, 0x01, 0x82, 0xb1, 0x0a, 0xb7,
					   0xd5, 0x4b, 0xfe, 0xd3, 0xc9, 0x64, 0x07, 0x3a,
					   0x0e, 0xe1, 0x72, 0xf3, 0xda, 0xa6, 0x23, 0x25,
					   0xaf, 0x02, 0x1a, 0x68, 0xf7, 0x07, 0x51, 0x1a};
	uint8_t out[32];
	int rc = ref_sha256(inst, out, (const uint8_t *)"abc", 3);
	if (rc)
		return rc;
	if (memcmp(out, abc_sha256, 32) != 0)
		return RNSC_ERR_SELFTEST;
	rc = ref_ed25519_public(inst, out, ed_seed);
	if (rc)
		return rc;
	return memcmp(out, ed_pub, 32) == 0 ? 0 : RNSC_ERR_SELFTEST;
}

static const rnsc_crypto_ops ref_ops = {
	.struct_size = sizeof(rnsc_crypto_ops),
	.self_test = ref_self_test,
	.random = ref_random,
	.sha256 = ref_sha256,
	.sha512 = ref_sha512,
	.hash_init = ref_hash_init,
	.hash_update = ref_hash_update,
	.hash_final = ref_hash_final,
	.hash_abort = ref_hash_abort,
	.hmac_sha256 = ref_hmac,
	.hkdf_sha256 = ref_hkdf,
	.aes256_cbc_encrypt = ref_aes_enc,
	.aes256_cbc_decrypt = ref_aes_dec,
	.x25519_public = ref_x25519_public,
	.x25519 = ref_x25519,
	.ed25519_public = ref_ed25519_public,
	.ed25519_sign = ref_ed25519_sign,
	.ed25519_verify = ref_ed25519_verify,
};

const rnsc_crypto_ops *rnsc_pyref_crypto_ops(void)
{
	return &ref_ops;
}

uint64_t rnsc_pyref_crypto_prims(void)
{
	/* Every general primitive; the reference has no RandomX (and no randomx_* slots). */
	return (RNSC_PRIM_BIT(RNSC_PRIM_COUNT) - 1) & ~RNSC_PRIM_BIT(RNSC_PRIM_RANDOMX);
}
