/* SPDX-License-Identifier: MIT */
/*
 * The randomx plugin through the plugin ABI and the core's dispatch (rnsc_randomx_*): the
 * upstream hash vectors on every implementation that claims each version (own: v1 and v2;
 * librandomx: v1), in light mode; the self-test's cost; machine descriptions; error paths.
 *
 *   rx_plugin_test          make check (light mode)
 *   rx_plugin_test --full   make check-full: full_mode_upstream_v2_vector through the plugin
 *                           (own), and the v1 vectors in full mode on librandomx when built
 *
 * RNSC_TEST_QUICK=1 (set by slow instrumented builds such as ASan) hashes only the first key's
 * vectors per implementation and version: one cache build each instead of two. Every vector
 * file and every implementation is still exercised.
 * Vectors: $RX_VECTOR_DIR, else $RNSC_SRCDIR/../shared/vectors/randomx.
 */
#include <fenv.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "crypto.h"
#include "cu_run.h"
#include "plugin_host.h"
#include "rx_json.h"

static rnsc_ctx *C;
static rnsc_plugin_host *H;
static char vec_dir[PATH_MAX];
static int quick, full_mode;

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int have_librandomx(void)
{
	char info[512];
	return rnsc_randomx_backend_info(C, info, sizeof(info)) > 0 &&
	       strstr(info, "librandomx") != NULL;
}

static rx_json *load(const char *name)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/%s", vec_dir, name);
	rx_json *j = rx_json_load(path);
	if (!j)
		fprintf(stderr, "cannot load vector file %s\n", path);
	return j;
}

/*
 * Hashes every vector of file (or only those of the first key when quick) on a machine built
 * with flags, one machine per key. Returns the number of vectors checked.
 */
static int check_file(const char *file, uint32_t flags, const char *label)
{
	rx_json *j = load(file);
	CU_ASSERT_PTR_NOT_NULL_FATAL(j);
	const rx_json *v = rx_json_get(j, "vectors");
	CU_ASSERT_FATAL(v && v->n > 0);
	int checked = 0;
	char done_keys[8][80];
	size_t n_done = 0;
	for (size_t i = 0; i < v->n; i++) {
		const char *key = rx_json_str(rx_json_get(v->items[i], "key_hex"));
		CU_ASSERT_PTR_NOT_NULL_FATAL(key);
		int seen = 0;
		for (size_t d = 0; d < n_done; d++)
			seen |= !strcmp(done_keys[d], key);
		if (seen || n_done == 8)
			continue;
		snprintf(done_keys[n_done++], sizeof(done_keys[0]), "%s", key);
		uint8_t k[64];
		int kl = rx_json_hex(rx_json_get(v->items[i], "key_hex"), k, sizeof(k));
		CU_ASSERT_FATAL(kl >= 0);
		rnsc_randomx *rx = NULL;
		double t0 = now_s();
		int rc = rnsc_randomx_new(C, &rx, flags, k, (size_t)kl, 0);
		CU_ASSERT_EQUAL_FATAL(rc, 0);
		char info[512];
		CU_ASSERT(rnsc_randomx_info(rx, info, sizeof(info)) > 0);
		fprintf(stderr, "\n  %s %s key %s: built in %.2f s: %s", label, file, key,
			now_s() - t0, info);
		for (size_t m = i; m < v->n; m++) {
			const rx_json *t = v->items[m];
			if (strcmp(rx_json_str(rx_json_get(t, "key_hex")), key) != 0)
				continue;
			uint8_t in[256], want[32], got[32];
			int il = rx_json_hex(rx_json_get(t, "input_hex"), in, sizeof(in));
			CU_ASSERT_FATAL(il >= 0);
			CU_ASSERT_FATAL(rx_json_hex(rx_json_get(t, "expected_hex"), want, 32) ==
					32);
			/* The ABI promises the caller's floating-point environment back. */
			int saved = fegetround();
			fesetround(FE_UPWARD);
			CU_ASSERT_EQUAL(rnsc_randomx_hash(rx, got, in, (size_t)il), 0);
			CU_ASSERT_EQUAL(fegetround(), FE_UPWARD);
			fesetround(saved);
			if (memcmp(got, want, 32) != 0) {
				fprintf(stderr, "\n  %s: %s [%s] mismatch", file,
					rx_json_str(rx_json_get(t, "name")), label);
				CU_FAIL("hash mismatch");
			}
			checked++;
		}
		rnsc_randomx_del(rx);
		if (quick)
			break;
	}
	rx_json_free(j);
	return checked;
}

static void test_self_test_is_cheap(void)
{
	const rnsc_plugin_rec *r = rnsc_plugin_host_find(H, "randomx");
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_EQUAL(r->desc->caps, RNSC_PRIM_BIT(RNSC_PRIM_RANDOMX));
	const rnsc_crypto_ops *ops = r->desc->ops;
	double t0 = now_s();
	for (int i = 0; i < 10; i++)
		CU_ASSERT_EQUAL(ops->self_test(r->inst), 0);
	double each = (now_s() - t0) / 10;
	fprintf(stderr, "\n  self-test: %.3f ms", each * 1e3);
	/* It runs at every plugin load: no cache (a second or more) may hide in it. Generous for
	 * instrumented builds. */
	CU_ASSERT(each < 0.25);
	CU_ASSERT_STRING_EQUAL(rnsc_crypto_provider(C, RNSC_PRIM_RANDOMX), "randomx");
}

static void test_backend_info(void)
{
	char info[512];
	int n = rnsc_randomx_backend_info(C, info, sizeof(info));
	CU_ASSERT(n > 0 && (size_t)n == strlen(info));
	CU_ASSERT(strstr(info, "impls=own") != NULL);
	CU_ASSERT(strstr(info, "own_versions=1,2") != NULL);
#ifdef HAVE_LIBRANDOMX
	CU_ASSERT(strstr(info, "librandomx_versions=1") != NULL);
#endif
	/* Truncation keeps a terminated string and reports what was written. */
	char small[8];
	n = rnsc_randomx_backend_info(C, small, sizeof(small));
	CU_ASSERT_EQUAL(n, 7);
	CU_ASSERT_EQUAL(strlen(small), 7);
}

static void test_own_v1_light(void)
{
	CU_ASSERT(check_file("hashes-v1.json", RNSC_RANDOMX_IMPL_OWN, "own v1 jit") > 0);
}

static void test_own_v2_light(void)
{
	CU_ASSERT(check_file("hashes-v2.json", RNSC_RANDOMX_V2 | RNSC_RANDOMX_IMPL_OWN,
			     "own v2 jit") > 0);
}

/* The interpreter and software AES through the plugin flags (rx_kat_test covers them in
 * depth; here: that the flags reach the implementation). */
static void test_own_interp_soft_aes(void)
{
	rx_json *j = load("hashes-v2.json");
	CU_ASSERT_PTR_NOT_NULL_FATAL(j);
	const rx_json *t = rx_json_at(rx_json_get(j, "vectors"), 0);
	uint8_t k[64], in[256], want[32], got[32];
	int kl = rx_json_hex(rx_json_get(t, "key_hex"), k, sizeof(k));
	int il = rx_json_hex(rx_json_get(t, "input_hex"), in, sizeof(in));
	CU_ASSERT_FATAL(kl >= 0 && il >= 0);
	CU_ASSERT_FATAL(rx_json_hex(rx_json_get(t, "expected_hex"), want, 32) == 32);
	rnsc_randomx *rx = NULL;
	CU_ASSERT_EQUAL_FATAL(rnsc_randomx_new(C, &rx,
					       RNSC_RANDOMX_V2 | RNSC_RANDOMX_INTERP |
						       RNSC_RANDOMX_SOFT_AES | RNSC_RANDOMX_NO_HUGE,
					       k, (size_t)kl, 1),
			      0);
	char info[512];
	CU_ASSERT(rnsc_randomx_info(rx, info, sizeof(info)) > 0);
	CU_ASSERT(strstr(info, "impl=own ") != NULL);
	CU_ASSERT(strstr(info, "version=2 ") != NULL);
	CU_ASSERT(strstr(info, "mode=light ") != NULL);
	CU_ASSERT(strstr(info, "jit=off ") != NULL);
	CU_ASSERT(strstr(info, "aes=soft ") != NULL);
	CU_ASSERT(strstr(info, "pages=4k ") != NULL);
	CU_ASSERT(strstr(info, "thp_kb=0 ") != NULL);
	CU_ASSERT_EQUAL(rnsc_randomx_hash(rx, got, in, (size_t)il), 0);
	CU_ASSERT(memcmp(got, want, 32) == 0);
	CU_ASSERT_EQUAL(rnsc_randomx_hash(rx, NULL, in, (size_t)il), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_randomx_hash(rx, got, NULL, 5), RNSC_ERR_INVAL);
	/* A machine keeps its backend even when the order no longer serves RandomX. */
	CU_ASSERT_EQUAL(rnsc_crypto_set_order(C, ""), 0);
	CU_ASSERT_PTR_NULL(rnsc_crypto_provider(C, RNSC_PRIM_RANDOMX));
	memset(got, 0, sizeof(got));
	CU_ASSERT_EQUAL(rnsc_randomx_hash(rx, got, in, (size_t)il), 0);
	CU_ASSERT(memcmp(got, want, 32) == 0);
	CU_ASSERT_EQUAL(rnsc_crypto_set_order(C, "randomx"), 0);
	rnsc_randomx_del(rx);
	rx_json_free(j);
}

static void test_librandomx_v1_light(void)
{
	if (!have_librandomx()) {
		printf("(librandomx not built) ");
		return;
	}
	CU_ASSERT(check_file("hashes-v1.json", RNSC_RANDOMX_IMPL_LIBRANDOMX, "librandomx v1") > 0);
}

static void test_errors(void)
{
	rnsc_randomx *rx = (rnsc_randomx *)1;
	/* Refused before any memory is touched. */
	CU_ASSERT_EQUAL(rnsc_randomx_new(C, &rx, 1u << 20, (const uint8_t *)"k", 1, 0),
			RNSC_ERR_INVAL);
	CU_ASSERT_PTR_NULL(rx);
	CU_ASSERT_EQUAL(rnsc_randomx_new(C, &rx, 7u << 8, (const uint8_t *)"k", 1, 0),
			RNSC_ERR_NOPRIM);
	CU_ASSERT_EQUAL(rnsc_randomx_new(C, &rx, RNSC_RANDOMX_V2 | RNSC_RANDOMX_IMPL_LIBRANDOMX,
					 (const uint8_t *)"k", 1, 0),
			RNSC_ERR_NOPRIM); /* v1 only, or not built at all */
	CU_ASSERT_EQUAL(rnsc_randomx_new(C, &rx, 0, NULL, 5, 0), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_randomx_new(C, NULL, 0, NULL, 0, 0), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_randomx_info(NULL, NULL, 0), RNSC_ERR_INVAL);
	rnsc_randomx_del(NULL);
	/* No backend serving RandomX: a clear code, not a crash. */
	rnsc_ctx *c2 = NULL;
	CU_ASSERT_EQUAL_FATAL(rnsc_ctx_new(&c2), 0);
	CU_ASSERT_EQUAL(rnsc_randomx_new(c2, &rx, 0, (const uint8_t *)"k", 1, 0), RNSC_ERR_NOPRIM);
	char info[64];
	CU_ASSERT_EQUAL(rnsc_randomx_backend_info(c2, info, sizeof(info)), RNSC_ERR_NOPRIM);
	rnsc_ctx_del(c2);
}

/* ---- make check-full ---- */

static void test_full_mode_upstream_v2_vector(void)
{
	CU_ASSERT(check_file("hashes-v2.json", RNSC_RANDOMX_V2 | RNSC_RANDOMX_FULL, "own v2 full") >
		  0);
}

static void test_full_mode_upstream_v1_vector_librandomx(void)
{
	if (!have_librandomx()) {
		printf("(librandomx not built) ");
		return;
	}
	CU_ASSERT(check_file("hashes-v1.json", RNSC_RANDOMX_FULL | RNSC_RANDOMX_IMPL_LIBRANDOMX,
			     "librandomx v1 full") > 0);
}

int main(int argc, char **argv)
{
	full_mode = argc > 1 && !strcmp(argv[1], "--full");
	const char *q = getenv("RNSC_TEST_QUICK");
	/* Full mode builds a 2 GiB dataset per key: one key is what a release check needs. */
	quick = (q && *q && strcmp(q, "0") != 0) || full_mode;
	const char *d = getenv("RX_VECTOR_DIR"), *src = getenv("RNSC_SRCDIR");
	if (d && *d)
		snprintf(vec_dir, sizeof(vec_dir), "%s", d);
	else
		snprintf(vec_dir, sizeof(vec_dir), "%s/../shared/vectors/randomx",
			 src && *src ? src : RNSC_SRCDIR);
	const char *b = getenv("RNSC_BUILDDIR");
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/plugins/crypto/.libs/randomx.so",
		 b && *b ? b : RNSC_BUILDDIR);
	if (rnsc_ctx_new(&C) || rnsc_plugin_host_new(C, &H))
		return 1;
	rnsc_ctx_set_log_level(C, RNSC_LOG_WARNING);
	int rc = rnsc_plugin_host_load_file(H, path);
	if (rc) {
		fprintf(stderr, "cannot load %s: %s\n", path, rnsc_strerror(rc));
		return 1;
	}
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s =
		CU_add_suite(full_mode ? "randomx_plugin_full" : "randomx_plugin", NULL, NULL);
	if (full_mode) {
		CU_add_test(s, "full_mode_upstream_v2_vector", test_full_mode_upstream_v2_vector);
		CU_add_test(s, "full_mode_upstream_v1_vector_librandomx",
			    test_full_mode_upstream_v1_vector_librandomx);
	} else {
		CU_add_test(s, "self-test is cheap", test_self_test_is_cheap);
		CU_add_test(s, "backend info", test_backend_info);
		CU_add_test(s, "own v1 light: upstream vectors", test_own_v1_light);
		CU_add_test(s, "own v2 light: upstream vectors", test_own_v2_light);
		CU_add_test(s, "own interpreter and soft AES via flags, order change",
			    test_own_interp_soft_aes);
		CU_add_test(s, "librandomx v1 light: upstream vectors", test_librandomx_v1_light);
		CU_add_test(s, "errors", test_errors);
	}
	fprintf(stderr, "rx_plugin_test: vectors from %s%s\n", vec_dir,
		quick && !full_mode ? " (RNSC_TEST_QUICK: first key only)" : "");
	rc = rnsc_cu_run();
	rnsc_plugin_host_del(H);
	rnsc_ctx_del(C);
	return rc;
}
