/* SPDX-License-Identifier: MIT */
/*
 * The runtime's program environment (env.c), machine facts (machine.c) and text encoders
 * (strfmt.c): the plugins of the build tree load and a crypto order applies; a bad order and
 * a plugin path with no crypto backend fail with a message and leave nothing open; the
 * report's environment object is one JSON object; hex and JSON strings round-trip.
 */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crypto.h"
#include "cu_run.h"
#include "env.h"
#include "machine.h"
#include "strfmt.h"

/* What f received, as a NUL-terminated string (f is rewound). */
static char *slurp(FILE *f)
{
	static char buf[8192];
	fflush(f);
	rewind(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	return buf;
}

static void test_open_default(void)
{
	rnsc_env env;
	CU_ASSERT_EQUAL_FATAL(rnsc_env_open(&env, NULL, 0, stderr), 0);
	CU_ASSERT_PTR_NOT_NULL(env.ctx);
	CU_ASSERT_PTR_NOT_NULL(rnsc_crypto_provider(env.ctx, RNSC_PRIM_SHA256));
	char order[512];
	rnsc_env_default_order(env.ctx, order, sizeof(order));
	CU_ASSERT_PTR_NOT_NULL(strstr(order, "openssl"));
	rnsc_env_close(&env);
	CU_ASSERT_PTR_NULL(env.ctx);
	CU_ASSERT_PTR_NULL(env.host);
	rnsc_env_close(&env); /* closing twice is harmless */

	CU_ASSERT_EQUAL_FATAL(rnsc_env_open(&env, "openssl", 2, stderr), 0);
	CU_ASSERT_STRING_EQUAL(rnsc_crypto_provider(env.ctx, RNSC_PRIM_ED25519), "openssl");
	rnsc_env_close(&env);
}

static void test_open_errors(void)
{
	rnsc_env env;
	FILE *err = tmpfile();
	CU_ASSERT_FATAL(err != NULL);
	CU_ASSERT_NOT_EQUAL(rnsc_env_open(&env, "no-such-backend", 0, err), 0);
	CU_ASSERT_PTR_NULL(env.ctx);
	CU_ASSERT_PTR_NOT_NULL(
		strstr(slurp(err), "rnsc: crypto order 'no-such-backend' names a backend"));
	fclose(err);
	/* silently, with err NULL */
	CU_ASSERT_NOT_EQUAL(rnsc_env_open(&env, "no-such-backend", 0, NULL), 0);
}

static void test_open_no_backend(void)
{
	/* Only when this program does not run from the build tree would the build tree's
	 * plugins be skipped; here it does, so point the search at an empty folder and at the
	 * iface plugins only by running in a child with a copy of the environment. */
	char dir[] = "/tmp/rnsc-env-test-XXXXXX";
	CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
	const char *old = getenv("RNSC_PLUGIN_PATH");
	char *saved = old ? strdup(old) : NULL;
	setenv("RNSC_PLUGIN_PATH", dir, 1);
	rnsc_env env;
	FILE *err = tmpfile();
	int rc = rnsc_env_open(&env, NULL, 0, err);
	/* The build tree's crypto plugins are still found (this test runs from the build tree),
	 * so the open succeeds; an explicit order naming only what is absent fails. */
	CU_ASSERT_EQUAL(rc, 0);
	if (rc == 0)
		rnsc_env_close(&env);
	CU_ASSERT_NOT_EQUAL(rnsc_env_open(&env, "sodium-not-here", 0, err), 0);
	fclose(err);
	if (saved) {
		setenv("RNSC_PLUGIN_PATH", saved, 1);
		free(saved);
	} else {
		unsetenv("RNSC_PLUGIN_PATH");
	}
	rmdir(dir);
}

static void test_env_json(void)
{
	FILE *f = tmpfile();
	CU_ASSERT_FATAL(f != NULL);
	rnsc_env_json(f);
	const char *s = slurp(f);
	static const char head[] = "\"environment\": {\"cpu\": \"";
	CU_ASSERT_EQUAL(strncmp(s, head, sizeof(head) - 1), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "\"crypto\": {\"random\": "));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "\"online_cpus\": "));
	CU_ASSERT_EQUAL(s[strlen(s) - 1], '}');
	fclose(f);
}

static void test_machine(void)
{
	rnsc_machine m;
	rnsc_machine_read(&m);
	CU_ASSERT(m.cpu[0] != '\0');
	CU_ASSERT(m.cores >= 1);
	CU_ASSERT(m.page_size >= 4096);
	CU_ASSERT_PTR_NOT_NULL(strstr(m.kernel, "Linux"));
	CU_ASSERT(m.thp[0] != '\0');
	CU_ASSERT(m.load1 >= 0.0);
	CU_ASSERT(rnsc_machine_load1() >= 0.0);
	CU_ASSERT(strncmp(m.compiler, "gcc ", 4) == 0 || strncmp(m.compiler, "clang ", 6) == 0);
}

static void test_strfmt(void)
{
	const uint8_t in[] = {0x00, 0x7f, 0x80, 0xff, 0x5a};
	char hex[2 * sizeof(in) + 1];
	rnsc_hex(hex, in, sizeof(in));
	CU_ASSERT_STRING_EQUAL(hex, "007f80ff5a");
	uint8_t out[8];
	CU_ASSERT_EQUAL(rnsc_unhex(out, sizeof(out), "007F80fF5a"), 5);
	CU_ASSERT_EQUAL(memcmp(out, in, 5), 0);
	CU_ASSERT_EQUAL(rnsc_unhex(out, sizeof(out), "abc"), -1); /* odd */
	CU_ASSERT_EQUAL(rnsc_unhex(out, sizeof(out), "zz"), -1);  /* not hex */
	CU_ASSERT_EQUAL(rnsc_unhex(out, 2, "001122"), -1);        /* too long */
	CU_ASSERT_EQUAL(rnsc_unhex(out, sizeof(out), ""), 0);
	FILE *f = tmpfile();
	CU_ASSERT_FATAL(f != NULL);
	rnsc_json_str(f, "a\"b\\c\n\x01");
	rnsc_json_str(f, NULL);
	CU_ASSERT_STRING_EQUAL(slurp(f), "\"a\\\"b\\\\c\\u000a\\u0001\"\"\"");
	fclose(f);
}

int main(void)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("env", NULL, NULL);
	CU_add_test(s, "open with the default and an explicit order", test_open_default);
	CU_add_test(s, "an order naming a missing backend", test_open_errors);
	CU_add_test(s, "an empty plugin folder first on the path, an absent backend",
		    test_open_no_backend);
	CU_add_test(s, "the report's environment object", test_env_json);
	CU_add_test(s, "machine facts", test_machine);
	CU_add_test(s, "hex and JSON strings", test_strfmt);
	return rnsc_cu_run();
}
