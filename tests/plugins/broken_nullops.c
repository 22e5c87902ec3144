/* SPDX-License-Identifier: MIT */
/*
 * Test plugin for the plugin host: a crypto descriptor that claims
 * primitives but has no ops table (the host must refuse it with
 * RNSC_ERR_PLUGIN_DESC instead of dereferencing NULL).
 */
#include "crypto_abi.h"

#define EXPORT __attribute__((visibility("default")))

static const rnsc_plugin_desc desc = {
	.struct_size = sizeof(rnsc_plugin_desc),
	.abi_major = RNSC_PLUGIN_ABI_MAJOR,
	.abi_minor = RNSC_PLUGIN_ABI_MINOR,
	.kind = RNSC_PLUGIN_CRYPTO,
	.name = "broken",
	.version = "0.0.0",
	.description = "test plugin: NULL ops table",
	.caps = RNSC_PRIM_BIT(RNSC_PRIM_SHA256) | RNSC_PRIM_BIT(RNSC_PRIM_X25519),
	.ops = NULL,
};

EXPORT int rnsc_plugin_init(const rnsc_host_api *host, const rnsc_plugin_desc **out);

EXPORT int rnsc_plugin_init(const rnsc_host_api *host, const rnsc_plugin_desc **out)
{
	(void)host;
	*out = &desc;
	return 0;
}
