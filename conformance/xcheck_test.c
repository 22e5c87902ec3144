/* SPDX-License-Identifier: MIT */
/*
 * CUnit runner for the randomized cross-checks against the embedded reference (xcheck.c):
 * one suite per crypto backend (the plugins, then the reference itself as a backend), one test
 * per check, 1000 seeded cases each by default. Also checks the embedding's own contract:
 * a missing venv is RNSC_ERR_NOREF (never a silent pass), and the swap's state rules.
 *
 * Environment: RNSC_XCHECK_CASES (default 1000), RNSC_XCHECK_SEED (default 1).
 * The nettle backend runs a quarter of the cases (at least 1): it is the third full backend
 * and its checks go through the same rnsc code as the other two, so what it adds is its own
 * primitives, which a quarter of the cases still covers, and CI time is the scarce resource.
 * Exit status: the number of failures (tests/common/cu_run.h), so `make check` sees them.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "backends.h"
#include "cu_run.h"
#include "pyref.h"
#include "xcheck_engine.h"

static unsigned g_cases = 1000;
static uint64_t g_seed = 1;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static unsigned cases_for(const char *backend)
{
	if (strcmp(backend, "nettle") == 0)
		return g_cases / 4 ? g_cases / 4 : 1;
	return g_cases;
}

/* Every per-backend test runs this; the suite name carries the backend and the test name the
 * check, so CUnit's report names both. */
static void run_current_check(void)
{
	const char *suite = CU_get_current_suite()->pName;
	const char *test = CU_get_current_test()->pName;
	const char *backend = strchr(suite, ' ') ? strchr(suite, ' ') + 1 : suite;
	unsigned idx = 0;
	while (conf_xcheck_name(idx) && strcmp(conf_xcheck_name(idx), test) != 0)
		idx++;
	CU_ASSERT_PTR_NOT_NULL_FATAL(conf_xcheck_name(idx));

	conf_xcheck_result r;
	unsigned cases = cases_for(backend);
	double t0 = now_s();
	int rc = conf_xcheck_run_one(idx, backend, cases, g_seed, &r);
	double dt = now_s() - t0;
	fprintf(stderr, "  xcheck %-38s %-9s %5u/%-5u agreed  %6.2fs%s\n", test, backend, r.agreed,
		r.cases, dt, r.disagreed || rc ? "  DISAGREE" : "");
	if (r.first_disagreement[0])
		fprintf(stderr, "    first disagreement: %s\n", r.first_disagreement);
	if (rc)
		fprintf(stderr, "    check could not run: %s\n", rnsc_strerror(rc));
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(r.cases, cases);
	CU_ASSERT_EQUAL(r.disagreed, 0);
	CU_ASSERT_EQUAL(r.agreed, cases);
}

/* The pin in interop/requirements.txt is what was imported. */
/* The imported release is the one asked for (RNSC_REF_VERSION, whose own pin file must pin
 * it), else the baseline pin of interop/requirements.txt. */
static void test_pinned_version(void)
{
	const char *src = getenv("RNSC_SRCDIR"), *want = getenv("RNSC_REF_VERSION");
	char path[4096], line[128], pin[64] = "";
	src = src && *src ? src : RNSC_SRCDIR;
	if (want && *want)
		snprintf(path, sizeof(path), "%s/interop/requirements-%s.txt", src, want);
	else
		snprintf(path, sizeof(path), "%s/interop/requirements.txt", src);
	FILE *f = fopen(path, "r");
	if (!f) { /* the baseline release may be named too */
		snprintf(path, sizeof(path), "%s/interop/requirements.txt", src);
		f = fopen(path, "r");
	}
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "rns==%63[0-9A-Za-z.]", pin) == 1)
			break;
	fclose(f);
	if (want && *want)
		CU_ASSERT_STRING_EQUAL(pin, want);
	CU_ASSERT_STRING_EQUAL(rnsc_pyref_version(conf_ref()), pin);
}

static void test_reference_self_test(void)
{
	CU_ASSERT_EQUAL(rnsc_pyref_crypto_ops()->self_test(conf_ref()), 0);
}

/* One swap at a time (it patches the one RNS module set), and unswap only undoes a swap. */
static void test_swap_state(void)
{
	rnsc_pyref *ref = conf_ref();
	rnsc_ctx *c = conf_ctx_for(conf_backend(0)->name);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(rnsc_pyref_unswap_crypto(ref), RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(rnsc_pyref_swap_crypto(ref, c), 0);
	CU_ASSERT_EQUAL(rnsc_pyref_swap_crypto(ref, c), RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(rnsc_pyref_swap_calls(ref, RNSC_PRIM_X25519), 0);
	uint8_t prv[64] = {1, 2, 3}, pub[64], hash[16];
	CU_ASSERT_EQUAL(rnsc_pyref_identity_public(ref, pub, hash, prv, 64), 0);
	CU_ASSERT(rnsc_pyref_swap_calls(ref, RNSC_PRIM_X25519) > 0);
	CU_ASSERT(rnsc_pyref_swap_calls(ref, RNSC_PRIM_ED25519) > 0);
	CU_ASSERT_EQUAL(rnsc_pyref_unswap_crypto(ref), 0);
	CU_ASSERT_EQUAL(rnsc_pyref_unswap_crypto(ref), RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(rnsc_pyref_swap_calls(ref, RNSC_PRIM_X25519), 0);
	rnsc_ctx_del(c);
}

/* The host's signal dispositions survive the interpreter and `import RNS`. */
static struct sigaction g_sig_before[2];
static const int g_sigs[2] = {SIGINT, SIGTERM};

static void test_signals_untouched(void)
{
	for (int i = 0; i < 2; i++) {
		struct sigaction now;
		sigaction(g_sigs[i], NULL, &now);
		CU_ASSERT(now.sa_handler == g_sig_before[i].sa_handler);
	}
}

/* The reference logs failures through RNS.log, which prints by default; none of it may reach
 * the host's stdout. */
static void test_stdout_clean(void)
{
	char path[] = "/tmp/rnsc-xcheck-stdout-XXXXXX";
	int fd = mkstemp(path);
	CU_ASSERT_FATAL(fd >= 0);
	fflush(stdout);
	int saved = dup(1);
	dup2(fd, 1);
	uint8_t key[64] = {0}, tok[80] = {0}, out[80], prv[64];
	int a = rnsc_pyref_group_decrypt(conf_ref(), out, sizeof(out), key, 64, tok, sizeof(tok));
	int b = rnsc_pyref_identity_from_file(conf_ref(), prv, "/nonexistent/rnsc/identity");
	int c = rnsc_pyref_flush(conf_ref()); /* Python buffers what it prints */
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	struct stat st;
	CU_ASSERT(fstat(fd, &st) == 0 && st.st_size == 0);
	close(fd);
	unlink(path);
	CU_ASSERT_EQUAL(a, RNSC_ERR_AUTH);
	CU_ASSERT_EQUAL(b, RNSC_ERR_NOENT);
	CU_ASSERT_EQUAL(c, 0);
}

/* Before anything starts the interpreter: a venv that is not there must be RNSC_ERR_NOREF,
 * with the advice logged, and must not start Python on some other prefix. */
static int g_noref_rc;

static void check_missing_venv_first(void)
{
	const char *saved = getenv("RNSC_VENV");
	char *keep = saved ? strdup(saved) : NULL;
	rnsc_ctx *ctx = NULL;
	rnsc_pyref *ref = NULL;
	setenv("RNSC_VENV", "/nonexistent/rnsc-venv", 1);
	if (rnsc_ctx_new(&ctx) == 0) {
		rnsc_ctx_set_log(ctx, NULL, NULL, 0); /* the expected error is not news */
		g_noref_rc = rnsc_pyref_open(ctx, &ref);
		rnsc_pyref_close(ref);
		rnsc_ctx_del(ctx);
	}
	if (keep) {
		setenv("RNSC_VENV", keep, 1);
		free(keep);
	} else {
		unsetenv("RNSC_VENV");
	}
}

static void test_missing_venv_is_noref(void)
{
	CU_ASSERT_EQUAL(g_noref_rc, RNSC_ERR_NOREF);
}

int main(void)
{
	const char *e = getenv("RNSC_XCHECK_CASES");
	if (e && *e)
		g_cases = (unsigned)strtoul(e, NULL, 10);
	e = getenv("RNSC_XCHECK_SEED");
	if (e && *e)
		g_seed = strtoull(e, NULL, 0);

	for (int i = 0; i < 2; i++)
		sigaction(g_sigs[i], NULL, &g_sig_before[i]);
	check_missing_venv_first();
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	int setup = conf_setup();
	if (setup != 0) {
		fprintf(stderr, "xcheck_test: FAILED: conformance set-up failed: %s\n",
			rnsc_strerror(setup));
		CU_cleanup_registry();
		return 1;
	}

	CU_pSuite s = CU_add_suite("embedding", NULL, NULL);
	CU_add_test(s, "missing venv is RNSC_ERR_NOREF", test_missing_venv_is_noref);
	CU_add_test(s, "imported rns is the pinned version", test_pinned_version);
	CU_add_test(s, "reference backend self-test", test_reference_self_test);
	CU_add_test(s, "swap state rules", test_swap_state);
	CU_add_test(s, "host signal handlers untouched", test_signals_untouched);
	CU_add_test(s, "reference output never reaches stdout", test_stdout_clean);

	/* Suite names must outlive the registry: keep them until exit. */
	static char names[16][80];
	size_t nb = conf_backend_count();
	for (size_t b = 0; b < nb && b < 16; b++) {
		snprintf(names[b], sizeof(names[b]), "xcheck %s", conf_backend(b)->name);
		s = CU_add_suite(names[b], NULL, NULL);
		for (unsigned i = 0; conf_xcheck_name(i); i++)
			CU_add_test(s, conf_xcheck_name(i), run_current_check);
	}
	fprintf(stderr,
		"xcheck_test: rns %s embedded; %zu backends; %u cases per check; seed %llu\n",
		rnsc_pyref_version(conf_ref()), nb, g_cases, (unsigned long long)g_seed);
	double t0 = now_s();
	int failures = rnsc_cu_run();
	fprintf(stderr, "xcheck_test: %.1fs, %d failures\n", now_s() - t0, failures);
	conf_teardown();
	return failures;
}
