/* SPDX-License-Identifier: MIT */
/* Every vector file under conformance/vectors runs against every backend: the crypto
 * plugins and the embedded reference. A backend may lack a primitive only if it does not
 * claim it; a vector nobody serves is a failure. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <string.h>

#include "backends.h"
#include "cu_run.h"
#include "vector_runner.h"

static void run_backend(const char *name)
{
	const rnsc_crypto_backend *be = NULL;
	for (size_t i = 0; i < conf_backend_count(); i++)
		if (strcmp(conf_backend(i)->name, name) == 0)
			be = conf_backend(i);
	CU_ASSERT_PTR_NOT_NULL_FATAL(be);
	unsigned passed = 0, failed = 0, not_served = 0;
	int rc = conf_run_vectors_on_backend(be, conf_vectors_dir(), &passed, &failed, &not_served);
	printf("\n  %-10s passed %u, failed %u, not served %u", name, passed, failed, not_served);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(failed, 0);
	CU_ASSERT(passed > 0);
	/* openssl, nettle and the reference implement every primitive; they must run every
	 * vector. */
	if (strcmp(name, "sodium") != 0) {
		CU_ASSERT_EQUAL(not_served, 0);
	} else {
		CU_ASSERT(not_served > 0); /* AES-CBC vectors: libsodium has none */
	}
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

static void test_all_backends_present(void)
{
	const char *want[] = {"openssl", "sodium", "nettle", "reference"};
	for (size_t w = 0; w < sizeof(want) / sizeof(want[0]); w++) {
		int found = 0;
		for (size_t i = 0; i < conf_backend_count(); i++)
			found |= strcmp(conf_backend(i)->name, want[w]) == 0;
		if (!found)
			fprintf(stderr, "backend %s is missing\n", want[w]);
		CU_ASSERT(found);
	}
}

int main(void)
{
	if (conf_setup() != 0) {
		fprintf(stderr, "vectors_test: FAILED: set-up failed (see above)\n");
		return 1;
	}
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("vectors", NULL, NULL);
	CU_add_test(s, "all backends present", test_all_backends_present);
	CU_add_test(s, "openssl", test_openssl);
	CU_add_test(s, "sodium", test_sodium);
	CU_add_test(s, "nettle", test_nettle);
	CU_add_test(s, "reference", test_reference);
	int failures = rnsc_cu_run();
	conf_teardown();
	return failures;
}
