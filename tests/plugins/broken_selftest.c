/* SPDX-License-Identifier: MIT */
/*
 * Test plugin for the plugin host: a well-formed crypto plugin whose
 * known-answer self-test fails (RNSC_ERR_SELFTEST), so the host must not
 * register it as a backend. Its one primitive always fails too, so a host
 * that registered it anyway could not produce a plausible result with it.
 */
#include "crypto_abi.h"

#define EXPORT __attribute__((visibility("default")))

static int self_test(void *inst)
{
	(void)inst;
	return RNSC_ERR_SELFTEST;
}

static int sha256(void *inst, uint8_t out[32], const uint8_t *msg, size_t len)
{
	(void)inst;
	(void)out;
	(void)msg;
	(void)len;
	return RNSC_ERR_CRYPTO;
}

static const rnsc_crypto_ops ops = {
	.struct_size = sizeof(rnsc_crypto_ops),
	.self_test = self_test,
	.sha256 = sha256,
};

static const rnsc_plugin_desc desc = {
	.struct_size = sizeof(rnsc_plugin_desc),
	.abi_major = RNSC_PLUGIN_ABI_MAJOR,
	.abi_minor = RNSC_PLUGIN_ABI_MINOR,
	.kind = RNSC_PLUGIN_CRYPTO,
	.name = "broken",
	.version = "0.0.0",
	.description = "test plugin: failing known-answer self-test",
	.caps = RNSC_PRIM_BIT(RNSC_PRIM_SHA256),
	.inst_size = 0,
	.ops = &ops,
};

EXPORT int rnsc_plugin_init(const rnsc_host_api *host, const rnsc_plugin_desc **out);

EXPORT int rnsc_plugin_init(const rnsc_host_api *host, const rnsc_plugin_desc **out)
{
	(void)host;
	*out = &desc;
	return 0;
}
