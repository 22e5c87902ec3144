/* SPDX-License-Identifier: MIT */
/*
 * Shared set-up of the wire-format fuzz targets that need crypto (packet, announce, proof,
 * IFAC): one process-wide context with the OpenSSL crypto backend compiled into the fuzzer
 * (plugins/crypto/openssl/openssl.c, so it is instrumented too) and registered directly, as
 * the plugin host would after dlopen. Built by tests/fuzz/run.sh.
 *
 * FUZZ_CHECK aborts (a libFuzzer crash) when an invariant fails; FUZZ_CODE checks that a
 * rejection is one of the codes the function documents.
 */
#ifndef RNSC_FUZZ_WIRE_H
#define RNSC_FUZZ_WIRE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto.h"
#include "ctx.h"
#include "crypto_abi.h"

int rnsc_plugin_init(const rnsc_host_api *host, const rnsc_plugin_desc **out);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* rc is 0 / a length, or one of the listed codes (terminated by 0). */
static int fuzz_code_in(int rc, const int *codes)
{
	if (rc >= 0)
		return 1;
	for (; *codes; codes++)
		if (rc == *codes)
			return 1;
	fprintf(stderr, "unexpected code %s\n", rnsc_err_name(rc));
	return 0;
}
#define FUZZ_CODE(rc, ...) FUZZ_CHECK(fuzz_code_in((rc), (const int[]){__VA_ARGS__, 0}))

static void fz_log(void *h, int level, const char *plugin, const char *msg)
{
	(void)h, (void)level, (void)plugin, (void)msg;
}
static void *fz_alloc(void *h, size_t n)
{
	(void)h;
	return calloc(1, n ? n : 1);
}
static void fz_free(void *h, void *p)
{
	(void)h;
	free(p);
}
static uint64_t fz_now(void *h)
{
	(void)h;
	return 0;
}
static const char *fz_config(void *h, const char *plugin, const char *key)
{
	(void)h, (void)plugin, (void)key;
	return NULL;
}

/* The context, created on first use and kept for the life of the process (a fuzzer never
 * exits cleanly; LeakSanitizer sees it as reachable). */
static rnsc_ctx *fuzz_ctx(void)
{
	static rnsc_ctx *ctx;
	static const rnsc_host_api host = {
		.struct_size = sizeof(rnsc_host_api),
		.abi_major = RNSC_PLUGIN_ABI_MAJOR,
		.abi_minor = RNSC_PLUGIN_ABI_MINOR,
		.log = fz_log,
		.alloc = fz_alloc,
		.free = fz_free,
		.now_ns = fz_now,
		.config_get = fz_config,
	};
	if (ctx)
		return ctx;
	const rnsc_plugin_desc *d = NULL;
	void *inst = NULL;
	if (rnsc_ctx_new(&ctx) != 0 || rnsc_plugin_init(&host, &d) != 0 ||
	    !(inst = calloc(1, d->inst_size ? d->inst_size : 1)) ||
	    (d->init && d->init(inst, &host) != 0) ||
	    rnsc_crypto_register(ctx, d->name, d->ops, inst, d->caps) != 0) {
		fprintf(stderr, "fuzz: crypto set-up failed\n");
		abort();
	}
	rnsc_ctx_set_log(ctx, NULL, NULL, 0);
	return ctx;
}

#endif
