/* SPDX-License-Identifier: MIT */
/* The fixed keys, signature and token of the reference's own test suite
 * (conformance/vectors_identity/), run through rnsc's identity layer on every crypto
 * backend and through the embedded reference's own Identity class. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends.h"
#include "cu_run.h"
#include "identity.h"
#include "pyref.h"
#include "vectorfile.h"

typedef struct stanza_bytes {
	uint8_t *prv, *want, *msg;
	size_t prv_len, want_len, msg_len;
} stanza_bytes;

/* Runs one stanza on ctx (rnsc side) and on the reference; returns the failure count. */
static int run_stanza(rnsc_ctx *ctx, const char *backend, const conf_vstanza *s)
{
	const char *op = conf_vstanza_get(s, "Op"), *res = conf_vstanza_get(s, "Result");
	int want_rc = 0, fails = 0;
	if (res && !rnsc_err_from_name(res, &want_rc)) {
		fprintf(stderr, "%s:%u: unknown Result %s\n", s->path, s->line, res);
		return 1;
	}
	uint8_t *prv = NULL, *a = NULL, *b = NULL;
	size_t prv_len = 0, a_len = 0, b_len = 0;
	if (conf_vstanza_hex(s, "PrivateKey", &prv, &prv_len) != 0) {
		fprintf(stderr, "%s:%u: no PrivateKey\n", s->path, s->line);
		return 1;
	}
	rnsc_identity id;
	int rc = rnsc_identity_from_private(ctx, &id, prv, prv_len);
	uint8_t out[1024], pub[64], hash[16];
	if (rc) {
		fails++;
		goto done;
	}
	if (strcmp(op, "identity_hash") == 0) {
		if (conf_vstanza_hex(s, "Public", &a, &a_len) ||
		    conf_vstanza_hex(s, "IdentityHash", &b, &b_len))
			goto bad;
		rnsc_identity_public_bytes(&id, pub);
		fails += memcmp(pub, a, 64) != 0 || memcmp(id.hash, b, 16) != 0;
		/* and the reference's Identity on the same key */
		rc = rnsc_pyref_identity_public(conf_ref(), pub, hash, prv, prv_len);
		fails += rc != 0 || memcmp(pub, a, 64) != 0 || memcmp(hash, b, 16) != 0;
	} else if (strcmp(op, "identity_sign") == 0) {
		if (conf_vstanza_hex(s, "Msg", &a, &a_len) ||
		    conf_vstanza_hex(s, "Signature", &b, &b_len))
			goto bad;
		fails += rnsc_identity_sign(&id, out, a, a_len) != 0 || memcmp(out, b, 64) != 0;
		fails += rnsc_identity_verify(&id, b, b_len, a, a_len) != 0;
		fails += rnsc_pyref_identity_sign(conf_ref(), out, prv, prv_len, a, a_len) != 64 ||
			 memcmp(out, b, 64) != 0;
	} else if (strcmp(op, "identity_decrypt") == 0) {
		if (conf_vstanza_hex(s, "Token", &a, &a_len))
			goto bad;
		rc = rnsc_identity_decrypt(&id, out, sizeof(out), a, a_len, NULL, 0, 0, NULL);
		int rrc = rnsc_pyref_identity_decrypt(conf_ref(), out + 512, 512, prv, prv_len, a,
						      a_len, NULL, 0, 0, NULL);
		if (want_rc) {
			fails += rc != want_rc || rrc != want_rc;
		} else {
			if (conf_vstanza_hex(s, "Plaintext", &b, &b_len))
				goto bad;
			fails += rc != (int)b_len || memcmp(out, b, b_len) != 0;
			fails += rrc != (int)b_len || memcmp(out + 512, b, b_len) != 0;
		}
	} else {
		goto bad;
	}
	if (fails)
		fprintf(stderr, "%s:%u: %s disagrees on %s backend %s\n", s->path, s->line, op,
			backend, res ? res : "");
	goto done;
bad:
	fprintf(stderr, "%s:%u: malformed stanza for %s\n", s->path, s->line, op ? op : "(no Op)");
	fails++;
done:
	rnsc_identity_free(&id);
	free(prv);
	free(a);
	free(b);
	return fails;
}

static unsigned stanzas_run;

static void run_backend(const char *name)
{
	rnsc_ctx *ctx = conf_ctx_for(name);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ctx);
	char path[4096];
	snprintf(path, sizeof(path), "%s_identity/reference_identity.txt", conf_vectors_dir());
	conf_vfile *vf = NULL;
	int rc = conf_vfile_open(&vf, path);
	if (rc)
		fprintf(stderr, "%s\n", conf_vfile_error(vf));
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	const conf_vstanza *s;
	unsigned n = 0;
	int fails = 0;
	while ((rc = conf_vfile_next(vf, &s)) == 1) {
		fails += run_stanza(ctx, name, s);
		n++;
	}
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(fails, 0);
	CU_ASSERT(n >= 8);
	stanzas_run += n;
	conf_vfile_close(vf);
	rnsc_ctx_del(ctx);
}

static void test_openssl(void)
{
	run_backend("openssl");
}
static void test_sodium(void)
{
	run_backend("sodium");
}
static void test_nettle(void)
{
	run_backend("nettle");
}
static void test_reference(void)
{
	run_backend("reference");
}

int main(void)
{
	if (conf_setup() != 0) {
		fprintf(stderr, "identity_vectors_test: FAILED: set-up failed (see above)\n");
		return 1;
	}
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("reference test-suite identity vectors", NULL, NULL);
	CU_add_test(s, "openssl", test_openssl);
	CU_add_test(s, "sodium", test_sodium);
	CU_add_test(s, "nettle", test_nettle);
	CU_add_test(s, "reference backend", test_reference);
	int failures = rnsc_cu_run();
	conf_teardown();
	return failures;
}
