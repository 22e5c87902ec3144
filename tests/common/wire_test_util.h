/* SPDX-License-Identifier: MIT */
/*
 * Shared set-up for the wire-format unit tests (packet, announce, proof, pathreq, linkfmt,
 * ifac): one context with the crypto plugins from RNSC_PLUGIN_PATH, a deterministic RNG, hex
 * helpers. The known answers in these tests were produced by rns 1.5.4 through
 * interop/python/rnsc_wireharness.py; the conformance matrix proves the general case.
 */
#ifndef RNSC_WIRE_TEST_UTIL_H
#define RNSC_WIRE_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto.h"
#include "cu_run.h"
#include "plugin_host.h"

static rnsc_ctx *C;
static rnsc_plugin_host *H;

static uint64_t wt_rng_state = 0x9E3779B97F4A7C15u;
static int wt_rng(void *ud, uint8_t *out, size_t len)
{
	(void)ud;
	for (size_t i = 0; i < len; i++) {
		wt_rng_state ^= wt_rng_state << 13;
		wt_rng_state ^= wt_rng_state >> 7;
		wt_rng_state ^= wt_rng_state << 17;
		out[i] = (uint8_t)wt_rng_state;
	}
	return 0;
}

/* Returns the byte count. */
static size_t unhex(uint8_t *out, const char *hex)
{
	size_t i = 0;
	for (; hex[2 * i] && hex[2 * i + 1]; i++) {
		unsigned v;
		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			break;
		out[i] = (uint8_t)v;
	}
	return i;
}

/* Compares len bytes against hex. */
static int eqhex(const uint8_t *p, size_t len, const char *hex)
{
	uint8_t buf[4096];
	size_t n = unhex(buf, hex);
	return n == len && memcmp(p, buf, n) == 0;
}

static int wt_setup(void)
{
	if (rnsc_ctx_new(&C) || rnsc_plugin_host_new(C, &H) || rnsc_plugin_host_add_default_dirs(H))
		return -1;
	rnsc_ctx_set_log(C, NULL, NULL, 0);
	rnsc_plugin_host_scan(H);
	if (!rnsc_crypto_provider(C, RNSC_PRIM_ED25519)) {
		fprintf(stderr, "no crypto plugin loaded (RNSC_PLUGIN_PATH?)\n");
		return -1;
	}
	rnsc_crypto_set_rng(C, wt_rng, NULL);
	return 0;
}

static void wt_teardown(void)
{
	rnsc_plugin_host_del(H);
	rnsc_ctx_del(C);
}

typedef struct wt_test {
	const char *name;
	void (*fn)(void);
} wt_test;

/* Runs the tests after the set-up; the exit status is the failure count. */
static int wt_main(const char *suite, const wt_test *tests, size_t n)
{
	if (wt_setup() != 0)
		return 1;
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite(suite, NULL, NULL);
	for (size_t i = 0; s && i < n; i++)
		if (!CU_add_test(s, tests[i].name, tests[i].fn))
			s = NULL;
	int rc = s ? rnsc_cu_run() : 1;
	if (!s)
		CU_cleanup_registry();
	wt_teardown();
	return rc;
}

#endif
