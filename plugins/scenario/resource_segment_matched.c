/* SPDX-License-Identifier: MIT */
/*
 * Scenario 8, the matched-policy variant of scenario 4 (maximum resource segment):
 * the same traffic and accounting (resource_check.h), but over TCP interfaces on both sides,
 * both configured to the reference's TCP tier (bitrate = 10000000, which both map to the
 * same hardware MTU) instead of each side's default Backbone policy.
 */
#include "resource_check.h"

static int interfaces(void *inst, int role, const int *ports, size_t n, char *out, size_t cap)
{
	(void)inst;
	return scn_tcp_matched_endpoints(role, ports, n, out, cap);
}

static int check(void *inst, const rnsc_scenario_lines *l, rnsc_scenario_sample *s)
{
	(void)inst;
	return scn_resource_check(l, s);
}

static const rnsc_scenario_ops OPS = {
	.struct_size = sizeof(rnsc_scenario_ops),
	.number = 8,
	.topology = RNSC_SCENARIO_ENDPOINTS,
	.title = "matched policy: maximum resource segment",
	.desc = "one link, one 1,048,575-byte resource at a time (compression off), each "
		"content-checked and answered by a 16-byte ACK link packet; sent = completed = "
		"ACKed, bytes equal",
	.unit = "resources/s",
	.size_lo = 1048575,
	.size_hi = 1048575,
	.iface_policy = "TCP (loopback), both sides at the reference's TCP tier "
			"(bitrate = 10000000)",
	.mode = "resource",
	.interfaces = interfaces,
	.check = check,
};

static const rnsc_plugin_desc DESC = {
	.struct_size = sizeof(rnsc_plugin_desc),
	.abi_major = RNSC_PLUGIN_ABI_MAJOR,
	.abi_minor = RNSC_PLUGIN_ABI_MINOR,
	.kind = RNSC_PLUGIN_SCENARIO,
	.name = "resource-segment-matched",
	.version = "1.1.0",
	.description = "benchmark scenario 8 (matched policy of 4): maximum resource segment",
	.ops = &OPS,
};

int rnsc_plugin_init(const rnsc_host_api *host, const rnsc_plugin_desc **out)
	__attribute__((visibility("default")));
int rnsc_plugin_init(const rnsc_host_api *host, const rnsc_plugin_desc **out)
{
	(void)host;
	*out = &DESC;
	return 0;
}
