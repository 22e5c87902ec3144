/* SPDX-License-Identifier: MIT */
/*
 * Test plugin for the plugin host: a descriptor that reports a struct_size
 * ending before its ops pointer, as a plugin built against a truncated or
 * foreign header would (the host must refuse it with RNSC_ERR_ABI).
 */
#include <stddef.h>

#include "crypto_abi.h"

#define EXPORT __attribute__((visibility("default")))

static int self_test(void *inst)
{
	(void)inst;
	return 0;
}

static const rnsc_crypto_ops ops = {
	.struct_size = sizeof(rnsc_crypto_ops),
	.self_test = self_test,
};

static const rnsc_plugin_desc desc = {
	.struct_size = offsetof(rnsc_plugin_desc, ops),
	.abi_major = RNSC_PLUGIN_ABI_MAJOR,
	.abi_minor = RNSC_PLUGIN_ABI_MINOR,
	.kind = RNSC_PLUGIN_CRYPTO,
	.name = "broken",
	.version = "0.0.0",
	.description = "test plugin: descriptor struct_size too small",
	.ops = &ops,
};

EXPORT int rnsc_plugin_init(const rnsc_host_api *host, const rnsc_plugin_desc **out);

EXPORT int rnsc_plugin_init(const rnsc_host_api *host, const rnsc_plugin_desc **out)
{
	(void)host;
	*out = &desc;
	return 0;
}
