/* SPDX-License-Identifier: MIT */
/*
 * The set-up the transport engine's unit tests share: one context C with the plugins from the
 * build tree, the OpenSSL crypto plugin first, and a seeded xorshift64 (shifts 13, 7, 17) in
 * place of the system RNG, so every run draws the same keys and delays. Each test keeps its
 * own seed. Header-only (static), for one test program at a time.
 */
#ifndef RNSC_TESTS_ENGINE_ENV_H
#define RNSC_TESTS_ENGINE_ENV_H

#include <stdint.h>
#include <stdio.h>

#include "crypto.h"
#include "ctx.h"
#include "plugin_host.h"

static rnsc_ctx *C;
static rnsc_plugin_host *H;
static uint64_t rng_state;

static int test_rng(void *ud, uint8_t *out, size_t len)
{
	(void)ud;
	for (size_t i = 0; i < len; i++) {
		rng_state ^= rng_state << 13;
		rng_state ^= rng_state >> 7;
		rng_state ^= rng_state << 17;
		out[i] = (uint8_t)rng_state;
	}
	return 0;
}

/* Returns 0, or 1 after saying why on stderr (who names the test program). */
static int engine_env_open(const char *who, uint64_t seed)
{
	rng_state = seed;
	if (rnsc_ctx_new(&C) || rnsc_plugin_host_new(C, &H) || rnsc_plugin_host_add_default_dirs(H))
		return 1;
	rnsc_plugin_host_scan(H);
	if (rnsc_crypto_set_order(C, "openssl") != 0) {
		fprintf(stderr, "%s: FAILED: openssl plugin did not load\n", who);
		return 1;
	}
	rnsc_crypto_set_rng(C, test_rng, NULL);
	rnsc_ctx_set_log_level(C, RNSC_LOG_WARNING);
	return 0;
}

static void engine_env_close(void)
{
	rnsc_plugin_host_del(H);
	rnsc_ctx_del(C);
}

#endif
