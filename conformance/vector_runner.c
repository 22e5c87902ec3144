/* SPDX-License-Identifier: MIT */
#include "vector_runner.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "vectorfile.h"

/* Guard bytes after every output buffer: a backend writing past the length
 * it was given fails the stanza instead of silently corrupting the heap. */
#define CANARY_LEN 16
#define CANARY_BYTE 0xa5
#define MAX_ALLOCS 24
/* Repeat is for the million-'a' style vectors, not for benchmarks. */
#define MAX_MESSAGE (256u * 1024u * 1024u)
#define MAX_HKDF_L 65536u

enum outcome { PASS, FAIL, NOT_SERVED };

typedef struct run {
	const rnsc_crypto_backend *be;
	const rnsc_crypto_ops *ops;
	const conf_vstanza *s;
	const char *op;
	void *allocs[MAX_ALLOCS];
	size_t nallocs;
} run;

static int fail(run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(run *r, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s:%u: %s on backend '%s': ", r->s->path, r->s->line, r->op,
		r->be->name != NULL ? r->be->name : "?");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (Source: %s)\n", conf_vstanza_get(r->s, "Source"));
	return FAIL;
}

/* A malformed stanza: the parser's message already carries file:line. */
static int malformed(run *r)
{
	fprintf(stderr, "%s [%s, backend '%s']\n", conf_vfile_error(r->s->vf),
		r->op != NULL ? r->op : "?", r->be->name != NULL ? r->be->name : "?");
	return FAIL;
}

static void *track(run *r, void *p)
{
	if (p == NULL || r->nallocs == MAX_ALLOCS) {
		free(p);
		return NULL;
	}
	r->allocs[r->nallocs++] = p;
	return p;
}

static void release(run *r)
{
	for (size_t i = 0; i < r->nallocs; i++)
		free(r->allocs[i]);
	r->nallocs = 0;
}

/* Reads a hex key: 1 present, 0 absent (only when !required), -1 error
 * (reported). want_len 0 accepts any length. */
static int hexkey(run *r, const char *key, int required, size_t want_len, uint8_t **out,
		  size_t *len)
{
	int rc;

	*out = NULL;
	*len = 0;
	if (conf_vstanza_get(r->s, key) == NULL) {
		if (!required)
			return 0;
		conf_vstanza_set_error(r->s, NULL, "missing key '%s'", key);
		malformed(r);
		return -1;
	}
	rc = conf_vstanza_hex(r->s, key, out, len);
	if (rc == 0 && track(r, *out) == NULL) {
		*out = NULL;
		conf_vstanza_set_error(r->s, key, "out of memory");
		rc = RNSC_ERR_NOMEM;
	}
	if (rc != 0) {
		malformed(r);
		return -1;
	}
	if (want_len != 0 && *len != want_len) {
		conf_vstanza_set_error(r->s, key, "'%s' must be %zu bytes, not %zu", key, want_len,
				       *len);
		malformed(r);
		return -1;
	}
	return 1;
}

static int uintkey(run *r, const char *key, unsigned long long min, unsigned long long max,
		   unsigned long long dflt, unsigned long long *out)
{
	*out = dflt;
	if (conf_vstanza_get(r->s, key) == NULL)
		return 0;
	if (conf_vstanza_uint(r->s, key, min, max, out) != 0) {
		malformed(r);
		return -1;
	}
	return 0;
}

/* Expected return code from Result (RNSC_OK when absent); -1 on a bad name. */
static int expected(run *r, int *code)
{
	const char *name = conf_vstanza_get(r->s, "Result");

	*code = RNSC_OK;
	if (name == NULL)
		return 0;
	if (!rnsc_err_from_name(name, code)) {
		conf_vstanza_set_error(r->s, "Result", "unknown error name '%s'", name);
		malformed(r);
		return -1;
	}
	return 0;
}

/* Output buffer of n bytes followed by the canary. */
static uint8_t *outbuf(run *r, size_t n)
{
	uint8_t *p = track(r, malloc(n + CANARY_LEN));

	if (p != NULL)
		memset(p, CANARY_BYTE, n + CANARY_LEN);
	return p;
}

static int canary_ok(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < CANARY_LEN; i++)
		if (p[n + i] != CANARY_BYTE)
			return 0;
	return 1;
}

static void hexdump(const char *label, const uint8_t *p, size_t n)
{
	fprintf(stderr, "    %s:", label);
	for (size_t i = 0; i < n && i < 96; i++)
		fprintf(stderr, "%s%02x", i % 32 == 0 ? "\n      " : "", p[i]);
	if (n > 96)
		fprintf(stderr, " ... (%zu bytes)", n);
	fputc('\n', stderr);
}

/* Compares got to want; on mismatch reports both and returns FAIL. */
static int same(run *r, const char *what, const uint8_t *got, const uint8_t *want, size_t n)
{
	if (n == 0 || memcmp(got, want, n) == 0)
		return PASS;
	fail(r, "%s differs", what);
	hexdump("expected", want, n);
	hexdump("got", got, n);
	return FAIL;
}

static int code_is(run *r, const char *call, int got, int want)
{
	if (got == want)
		return PASS;
	return fail(r, "%s returned %s (%d), expected %s (%d)", call, rnsc_err_name(got), got,
		    rnsc_err_name(want), want);
}

static int served(const run *r, enum rnsc_prim p)
{
	return (r->be->prims & RNSC_PRIM_BIT(p)) != 0;
}

/* A backend claiming a primitive must provide its slots. */
#define NEED_SLOT(r, field)                                                                        \
	do {                                                                                       \
		if (!RNSC_OPS_HAS((r)->ops, rnsc_crypto_ops, field))                               \
			return fail((r), "backend claims the primitive but slot '" #field          \
					 "' is missing");                                          \
	} while (0)

/* ---- ops ------------------------------------------------------------------------------ */

static int run_sha(run *r, int alg)
{
	/* Irregular chunk sizes so the streaming state crosses block boundaries
	 * at every offset, including zero-length updates. */
	static const size_t chunks[] = {1, 0, 3, 64, 127, 128, 1000, 4096, 55, 56};
	const size_t md_len = alg == RNSC_HASH_SHA256 ? 32 : 64;
	uint8_t *msg, *want, *full, *got;
	size_t msg_len, want_len, total;
	unsigned long long repeat;
	int one_shot, stream, rc, verdict = PASS;

	if (hexkey(r, "Msg", 1, 0, &msg, &msg_len) < 0 ||
	    hexkey(r, "Output", 1, md_len, &want, &want_len) < 0 ||
	    uintkey(r, "Repeat", 1, MAX_MESSAGE, 1, &repeat) < 0)
		return FAIL;
	if (msg_len != 0 && repeat > MAX_MESSAGE / msg_len) {
		conf_vstanza_set_error(r->s, "Repeat", "message longer than %u bytes", MAX_MESSAGE);
		return malformed(r);
	}
	total = msg_len * (size_t)repeat;
	full = msg;
	if (repeat > 1) {
		full = track(r, malloc(total + 1));
		if (full == NULL)
			return fail(r, "out of memory for a %zu-byte message", total);
		for (size_t i = 0; i < (size_t)repeat; i++)
			memcpy(full + i * msg_len, msg, msg_len);
	}

	one_shot = served(r, alg == RNSC_HASH_SHA256 ? RNSC_PRIM_SHA256 : RNSC_PRIM_SHA512);
	stream = served(r, RNSC_PRIM_HASH_STREAM);
	if (!one_shot && !stream)
		return NOT_SERVED;
	got = outbuf(r, md_len);
	if (got == NULL)
		return fail(r, "out of memory");

	if (one_shot) {
		if (alg == RNSC_HASH_SHA256) {
			NEED_SLOT(r, sha256);
			rc = r->ops->sha256(r->be->inst, got, full, total);
		} else {
			NEED_SLOT(r, sha512);
			rc = r->ops->sha512(r->be->inst, got, full, total);
		}
		if (code_is(r, "one-shot hash", rc, 0) != PASS ||
		    same(r, "one-shot digest", got, want, md_len) != PASS)
			verdict = FAIL;
	}
	if (stream) {
		rnsc_hash_state st;
		size_t off = 0, k = 0;

		NEED_SLOT(r, hash_abort);
		if (r->ops->hash_init == NULL || r->ops->hash_update == NULL ||
		    r->ops->hash_final == NULL)
			return fail(r, "backend claims hash_stream but a slot is missing");
		memset(got, CANARY_BYTE, md_len);
		rc = r->ops->hash_init(r->be->inst, &st, alg);
		if (code_is(r, "hash_init", rc, 0) != PASS)
			return FAIL;
		while (off < total && rc == 0) {
			size_t n = chunks[k++ % (sizeof chunks / sizeof chunks[0])];
			if (n > total - off)
				n = total - off;
			rc = r->ops->hash_update(r->be->inst, &st, full + off, n);
			off += n;
		}
		if (rc != 0) {
			r->ops->hash_abort(r->be->inst, &st);
			return code_is(r, "hash_update", rc, 0);
		}
		rc = r->ops->hash_final(r->be->inst, &st, got);
		if (code_is(r, "hash_final", rc, 0) != PASS ||
		    same(r, "streamed digest", got, want, md_len) != PASS)
			verdict = FAIL;
	}
	if (!canary_ok(got, md_len))
		return fail(r, "backend wrote past the %zu-byte digest", md_len);
	return verdict;
}

static int run_sha256(run *r)
{
	return run_sha(r, RNSC_HASH_SHA256);
}

static int run_sha512(run *r)
{
	return run_sha(r, RNSC_HASH_SHA512);
}

static int run_hmac(run *r)
{
	uint8_t *key, *msg, *want, *got;
	size_t key_len, msg_len, want_len;
	unsigned long long trunc;
	int rc;

	if (uintkey(r, "Truncate", 1, 32, 32, &trunc) < 0 ||
	    hexkey(r, "Key", 1, 0, &key, &key_len) < 0 ||
	    hexkey(r, "Msg", 1, 0, &msg, &msg_len) < 0 ||
	    hexkey(r, "Output", 1, (size_t)trunc, &want, &want_len) < 0)
		return FAIL;
	if (!served(r, RNSC_PRIM_HMAC_SHA256))
		return NOT_SERVED;
	NEED_SLOT(r, hmac_sha256);
	got = outbuf(r, 32);
	if (got == NULL)
		return fail(r, "out of memory");
	rc = r->ops->hmac_sha256(r->be->inst, got, key, key_len, msg, msg_len);
	if (code_is(r, "hmac_sha256", rc, 0) != PASS)
		return FAIL;
	if (!canary_ok(got, 32))
		return fail(r, "backend wrote past the 32-byte tag");
	return same(r, "tag", got, want, (size_t)trunc);
}

static int run_hkdf(run *r)
{
	uint8_t *ikm, *salt, *info, *want = NULL, *got;
	size_t ikm_len, salt_len, info_len, want_len = 0;
	unsigned long long l;
	int code, rc;

	if (expected(r, &code) < 0 || hexkey(r, "IKM", 1, 0, &ikm, &ikm_len) < 0 ||
	    hexkey(r, "Salt", 1, 0, &salt, &salt_len) < 0 ||
	    hexkey(r, "Info", 1, 0, &info, &info_len) < 0)
		return FAIL;
	if (conf_vstanza_get(r->s, "L") == NULL) {
		conf_vstanza_set_error(r->s, NULL, "missing key 'L'");
		return malformed(r);
	}
	if (uintkey(r, "L", 0, MAX_HKDF_L, 0, &l) < 0 ||
	    hexkey(r, "Output", code == 0, code == 0 ? (size_t)l : 0, &want, &want_len) < 0)
		return FAIL;
	if (code == 0 && l == 0 && want_len != 0) {
		conf_vstanza_set_error(r->s, "Output", "Output must be empty when L = 0");
		return malformed(r);
	}
	if (code != 0 && want != NULL) {
		conf_vstanza_set_error(r->s, "Output", "Output given with a failing Result");
		return malformed(r);
	}
	if (!served(r, RNSC_PRIM_HKDF_SHA256))
		return NOT_SERVED;
	NEED_SLOT(r, hkdf_sha256);
	got = outbuf(r, (size_t)l);
	if (got == NULL)
		return fail(r, "out of memory");
	rc = r->ops->hkdf_sha256(r->be->inst, got, (size_t)l, ikm, ikm_len, salt, salt_len, info,
				 info_len);
	if (code_is(r, "hkdf_sha256", rc, code) != PASS)
		return FAIL;
	if (!canary_ok(got, (size_t)l))
		return fail(r, "backend wrote past the %llu-byte output", l);
	return code == 0 ? same(r, "OKM", got, want, (size_t)l) : PASS;
}

static int run_aes(run *r, int encrypt)
{
	uint8_t *key, *iv, *pt, *ct, *got;
	size_t key_len, iv_len, pt_len, ct_len;
	int code, rc, have_pt, have_ct;

	if (expected(r, &code) < 0 || hexkey(r, "Key", 1, 32, &key, &key_len) < 0 ||
	    hexkey(r, "IV", 1, 16, &iv, &iv_len) < 0)
		return FAIL;
	have_pt = hexkey(r, "Plaintext", code == 0 || encrypt, 0, &pt, &pt_len);
	have_ct = hexkey(r, "Ciphertext", code == 0 || !encrypt, 0, &ct, &ct_len);
	if (have_pt < 0 || have_ct < 0)
		return FAIL;
	if (code == 0 && pt_len != ct_len) {
		conf_vstanza_set_error(r->s, "Ciphertext",
				       "Plaintext and Ciphertext differ in length");
		return malformed(r);
	}
	if (!served(r, RNSC_PRIM_AES256_CBC))
		return NOT_SERVED;
	NEED_SLOT(r, aes256_cbc_decrypt);
	if (r->ops->aes256_cbc_encrypt == NULL)
		return fail(r, "backend claims the primitive but slot 'aes256_cbc_encrypt' is "
			       "missing");

	if (code != 0) {
		const uint8_t *src = encrypt ? pt : ct;
		size_t len = encrypt ? pt_len : ct_len;
		got = outbuf(r, len);
		if (got == NULL)
			return fail(r, "out of memory");
		rc = encrypt ? r->ops->aes256_cbc_encrypt(r->be->inst, got, key, iv, src, len)
			     : r->ops->aes256_cbc_decrypt(r->be->inst, got, key, iv, src, len);
		if (code_is(r, encrypt ? "aes256_cbc_encrypt" : "aes256_cbc_decrypt", rc, code) !=
		    PASS)
			return FAIL;
		return canary_ok(got, len) ? PASS : fail(r, "backend wrote past the output");
	}
	/* Both directions for either op: the values are one pair. */
	got = outbuf(r, pt_len);
	if (got == NULL)
		return fail(r, "out of memory");
	rc = r->ops->aes256_cbc_encrypt(r->be->inst, got, key, iv, pt, pt_len);
	if (code_is(r, "aes256_cbc_encrypt", rc, 0) != PASS ||
	    same(r, "ciphertext", got, ct, ct_len) != PASS)
		return FAIL;
	if (!canary_ok(got, pt_len))
		return fail(r, "backend wrote past the output");
	memset(got, CANARY_BYTE, pt_len);
	rc = r->ops->aes256_cbc_decrypt(r->be->inst, got, key, iv, ct, ct_len);
	if (code_is(r, "aes256_cbc_decrypt", rc, 0) != PASS ||
	    same(r, "plaintext", got, pt, pt_len) != PASS)
		return FAIL;
	return canary_ok(got, ct_len) ? PASS : fail(r, "backend wrote past the output");
}

static int run_aes_encrypt(run *r)
{
	return run_aes(r, 1);
}

static int run_aes_decrypt(run *r)
{
	return run_aes(r, 0);
}

static int run_x25519(run *r)
{
	uint8_t *k, *u, *want, *got;
	size_t k_len, u_len, want_len;
	int code, rc, have_out;

	if (expected(r, &code) < 0 || hexkey(r, "Scalar", 1, 32, &k, &k_len) < 0 ||
	    hexkey(r, "U", 1, 32, &u, &u_len) < 0)
		return FAIL;
	have_out = hexkey(r, "Output", code == 0, 32, &want, &want_len);
	if (have_out < 0)
		return FAIL;
	if (code != 0 && have_out) {
		conf_vstanza_set_error(r->s, "Output", "Output given with a failing Result");
		return malformed(r);
	}
	if (!served(r, RNSC_PRIM_X25519))
		return NOT_SERVED;
	NEED_SLOT(r, x25519);
	got = outbuf(r, 32);
	if (got == NULL)
		return fail(r, "out of memory");
	rc = r->ops->x25519(r->be->inst, got, k, u);
	if (code_is(r, "x25519", rc, code) != PASS)
		return FAIL;
	if (!canary_ok(got, 32))
		return fail(r, "backend wrote past the 32-byte secret");
	return code == 0 ? same(r, "shared secret", got, want, 32) : PASS;
}

static int run_x25519_public(run *r)
{
	uint8_t *priv, *want, *got;
	size_t priv_len, want_len;
	int rc;

	if (hexkey(r, "Private", 1, 32, &priv, &priv_len) < 0 ||
	    hexkey(r, "Public", 1, 32, &want, &want_len) < 0)
		return FAIL;
	if (!served(r, RNSC_PRIM_X25519))
		return NOT_SERVED;
	NEED_SLOT(r, x25519_public);
	got = outbuf(r, 32);
	if (got == NULL)
		return fail(r, "out of memory");
	rc = r->ops->x25519_public(r->be->inst, got, priv);
	if (code_is(r, "x25519_public", rc, 0) != PASS)
		return FAIL;
	if (!canary_ok(got, 32))
		return fail(r, "backend wrote past the 32-byte key");
	return same(r, "public key", got, want, 32);
}

static int run_ed25519(run *r)
{
	uint8_t *seed, *pub, *msg, *sig, *got;
	size_t seed_len, pub_len, msg_len, sig_len;
	int rc;

	if (hexkey(r, "Seed", 1, 32, &seed, &seed_len) < 0 ||
	    hexkey(r, "Public", 1, 32, &pub, &pub_len) < 0 ||
	    hexkey(r, "Msg", 1, 0, &msg, &msg_len) < 0 ||
	    hexkey(r, "Signature", 1, 64, &sig, &sig_len) < 0)
		return FAIL;
	if (!served(r, RNSC_PRIM_ED25519))
		return NOT_SERVED;
	NEED_SLOT(r, ed25519_verify);
	if (r->ops->ed25519_public == NULL || r->ops->ed25519_sign == NULL)
		return fail(r, "backend claims ed25519 but a slot is missing");
	got = outbuf(r, 64);
	if (got == NULL)
		return fail(r, "out of memory");
	rc = r->ops->ed25519_public(r->be->inst, got, seed);
	if (code_is(r, "ed25519_public", rc, 0) != PASS ||
	    same(r, "public key", got, pub, 32) != PASS)
		return FAIL;
	memset(got, CANARY_BYTE, 64);
	rc = r->ops->ed25519_sign(r->be->inst, got, seed, pub, msg, msg_len);
	if (code_is(r, "ed25519_sign", rc, 0) != PASS || same(r, "signature", got, sig, 64) != PASS)
		return FAIL;
	if (!canary_ok(got, 64))
		return fail(r, "backend wrote past the 64-byte signature");
	rc = r->ops->ed25519_verify(r->be->inst, sig, pub, msg, msg_len);
	return code_is(r, "ed25519_verify", rc, 0);
}

static int run_ed25519_verify(run *r)
{
	uint8_t *pub, *msg, *sig;
	size_t pub_len, msg_len, sig_len;
	int code, rc;

	if (expected(r, &code) < 0 || hexkey(r, "Public", 1, 32, &pub, &pub_len) < 0 ||
	    hexkey(r, "Msg", 1, 0, &msg, &msg_len) < 0 ||
	    hexkey(r, "Signature", 1, 64, &sig, &sig_len) < 0)
		return FAIL;
	if (!served(r, RNSC_PRIM_ED25519))
		return NOT_SERVED;
	NEED_SLOT(r, ed25519_verify);
	rc = r->ops->ed25519_verify(r->be->inst, sig, pub, msg, msg_len);
	return code_is(r, "ed25519_verify", rc, code);
}

/* ---- dispatch ------------------------------------------------------------------------- */

#define MAX_KEYS 8

static const struct op_def {
	const char *name;
	int (*fn)(run *r);
	const char *keys[MAX_KEYS]; /* besides Op and Source */
} op_defs[] = {
	{"sha256", run_sha256, {"Msg", "Repeat", "Output"}},
	{"sha512", run_sha512, {"Msg", "Repeat", "Output"}},
	{"hmac_sha256", run_hmac, {"Key", "Msg", "Truncate", "Output"}},
	{"hkdf_sha256", run_hkdf, {"IKM", "Salt", "Info", "L", "Output", "Result"}},
	{"aes256_cbc_encrypt", run_aes_encrypt, {"Key", "IV", "Plaintext", "Ciphertext", "Result"}},
	{"aes256_cbc_decrypt", run_aes_decrypt, {"Key", "IV", "Plaintext", "Ciphertext", "Result"}},
	{"x25519", run_x25519, {"Scalar", "U", "Output", "Result"}},
	{"x25519_public", run_x25519_public, {"Private", "Public"}},
	{"ed25519", run_ed25519, {"Seed", "Public", "Msg", "Signature"}},
	{"ed25519_verify", run_ed25519_verify, {"Public", "Msg", "Signature", "Result"}},
};

static int known_key(const struct op_def *d, const char *key)
{
	if (strcmp(key, "Op") == 0 || strcmp(key, "Source") == 0)
		return 1;
	for (size_t i = 0; i < MAX_KEYS && d->keys[i] != NULL; i++)
		if (strcmp(key, d->keys[i]) == 0)
			return 1;
	return 0;
}

static int run_stanza(const rnsc_crypto_backend *be, const conf_vstanza *s)
{
	run r = {.be = be, .ops = be->ops, .s = s};
	const struct op_def *d = NULL;
	const char *src;
	int verdict;

	r.op = conf_vstanza_get(s, "Op");
	if (r.op == NULL) {
		conf_vstanza_set_error(s, NULL, "stanza has no 'Op'");
		return malformed(&r);
	}
	for (size_t i = 0; i < sizeof op_defs / sizeof op_defs[0]; i++)
		if (strcmp(op_defs[i].name, r.op) == 0)
			d = &op_defs[i];
	if (d == NULL) {
		conf_vstanza_set_error(s, "Op", "unknown Op '%s'", r.op);
		return malformed(&r);
	}
	src = conf_vstanza_get(s, "Source");
	if (src == NULL || *src == '\0') {
		conf_vstanza_set_error(s, "Source", "every stanza needs a non-empty 'Source'");
		return malformed(&r);
	}
	/* An unknown key is most likely a typo that would drop part of a check. */
	for (size_t i = 0; i < s->count; i++) {
		if (!known_key(d, s->kv[i].key)) {
			conf_vstanza_set_error(s, s->kv[i].key, "key '%s' is not used by Op %s",
					       s->kv[i].key, r.op);
			return malformed(&r);
		}
	}
	verdict = d->fn(&r);
	release(&r);
	return verdict;
}

typedef struct tally {
	unsigned passed, failed, not_served;
} tally;

static void run_file(const rnsc_crypto_backend *be, const char *path, tally *t)
{
	conf_vfile *vf = NULL;
	const conf_vstanza *s;
	int rc = conf_vfile_open(&vf, path);

	if (rc != 0) {
		fprintf(stderr, "%s [backend '%s']\n",
			vf != NULL ? conf_vfile_error(vf) : "out of memory", be->name);
		t->failed++;
		conf_vfile_close(vf);
		return;
	}
	while ((rc = conf_vfile_next(vf, &s)) == 1) {
		switch (run_stanza(be, s)) {
		case PASS:
			t->passed++;
			break;
		case NOT_SERVED:
			t->not_served++;
			break;
		default:
			t->failed++;
			break;
		}
	}
	if (rc < 0) {
		fprintf(stderr, "%s [backend '%s']\n", conf_vfile_error(vf), be->name);
		t->failed++;
	}
	conf_vfile_close(vf);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int has_txt_suffix(const char *name)
{
	size_t n = strlen(name);
	return n > 4 && name[0] != '.' && strcmp(name + n - 4, ".txt") == 0;
}

/* Sorted names of the *.txt files in dir; the caller frees each and the array. */
static int list_vector_files(const char *dir, char ***out, size_t *count)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	*out = NULL;
	*count = 0;
	if (d == NULL)
		return errno == ENOENT || errno == ENOTDIR ? RNSC_ERR_NOENT : RNSC_ERR_IO;
	while ((e = readdir(d)) != NULL) {
		if (!has_txt_suffix(e->d_name))
			continue;
		if (n == cap) {
			size_t ncap = cap != 0 ? cap * 2 : 16;
			char **p = realloc(names, ncap * sizeof *p);
			if (p == NULL) {
				rc = RNSC_ERR_NOMEM;
				break;
			}
			names = p;
			cap = ncap;
		}
		names[n] = strdup(e->d_name);
		if (names[n] == NULL) {
			rc = RNSC_ERR_NOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	if (rc != 0) {
		for (size_t i = 0; i < n; i++)
			free(names[i]);
		free(names);
		return rc;
	}
	if (n != 0)
		qsort(names, n, sizeof *names, by_name);
	*out = names;
	*count = n;
	return 0;
}

int conf_run_vectors_on_backend(const rnsc_crypto_backend *be, const char *vectors_dir,
				unsigned *passed, unsigned *failed, unsigned *not_served)
{
	tally t = {0, 0, 0};
	char **names;
	size_t n;
	int rc;

	if (passed != NULL)
		*passed = 0;
	if (failed != NULL)
		*failed = 0;
	if (not_served != NULL)
		*not_served = 0;
	if (be == NULL || be->ops == NULL || vectors_dir == NULL)
		return RNSC_ERR_INVAL;
	rc = list_vector_files(vectors_dir, &names, &n);
	if (rc != 0) {
		fprintf(stderr, "%s: cannot list test vectors: %s\n", vectors_dir,
			rnsc_strerror(rc));
		return rc;
	}
	if (n == 0) {
		fprintf(stderr, "%s: no *.txt test vector files\n", vectors_dir);
		free(names);
		return RNSC_ERR_NOTFOUND;
	}
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(vectors_dir) + strlen(names[i]) + 2;
		char *path = malloc(len);
		if (path == NULL) {
			rc = RNSC_ERR_NOMEM;
		} else {
			snprintf(path, len, "%s/%s", vectors_dir, names[i]);
			run_file(be, path, &t);
			free(path);
		}
		free(names[i]);
	}
	free(names);
	if (passed != NULL)
		*passed = t.passed;
	if (failed != NULL)
		*failed = t.failed;
	if (not_served != NULL)
		*not_served = t.not_served;
	return rc;
}
