/* SPDX-License-Identifier: MIT */
/*
 * Test plugin for the plugin host: a descriptor from a future, incompatible
 * ABI major (the host must refuse it with RNSC_ERR_ABI before touching ops).
 */
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
	.struct_size = sizeof(rnsc_plugin_desc),
	.abi_major = RNSC_PLUGIN_ABI_MAJOR + 1,
	.abi_minor = 0,
	.kind = RNSC_PLUGIN_CRYPTO,
	.name = "broken",
	.version = "0.0.0",
	.description = "test plugin: ABI major from the future",
	.ops = &ops,
};

EXPORT int rnsc_plugin_init(const rnsc_host_api *host, const rnsc_plugin_desc **out);

EXPORT int rnsc_plugin_init(const rnsc_host_api *host, const rnsc_plugin_desc **out)
{
	(void)host;
	*out = &desc;
	return 0;
}
