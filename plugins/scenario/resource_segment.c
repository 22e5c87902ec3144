/* SPDX-License-Identifier: MIT */
/*
 * Scenario 4, maximum resource segment: over one link, one resource of 1,048,575 bytes
 * (Resource.MAX_EFFICIENT_SIZE, one segment) at a time, compression off, each followed by
 * the receiver's 16-byte application ACK; Backbone interfaces on both sides. Accounting in
 * resource_check.h.
 */
#include "resource_check.h"

static int interfaces(void *inst, int role, const int *ports, size_t n, char *out, size_t cap)
{
	(void)inst;
	return scn_backbone_endpoints(role, ports, n, out, cap);
}

static int check(void *inst, const rnsc_scenario_lines *l, rnsc_scenario_sample *s)
{
	(void)inst;
	return scn_resource_check(l, s);
}

static const rnsc_scenario_ops OPS = {
	.struct_size = sizeof(rnsc_scenario_ops),
	.number = 4,
	.topology = RNSC_SCENARIO_ENDPOINTS,
	.title = "maximum resource segment",
	.desc = "one link, one 1,048,575-byte resource at a time (compression off), each "
		"content-checked and answered by a 16-byte ACK link packet; sent = completed = "
		"ACKed, bytes equal",
	.unit = "resources/s",
	.size_lo = 1048575,
	.size_hi = 1048575,
	.iface_policy = "Backbone (loopback), each side's default MTU policy",
	.mode = "resource",
	.interfaces = interfaces,
	.check = check,
};

static const rnsc_plugin_desc DESC = {
	.struct_size = sizeof(rnsc_plugin_desc),
	.abi_major = RNSC_PLUGIN_ABI_MAJOR,
	.abi_minor = RNSC_PLUGIN_ABI_MINOR,
	.kind = RNSC_PLUGIN_SCENARIO,
	.name = "resource-segment",
	.version = "1.1.0",
	.description = "benchmark scenario 4: maximum resource segment",
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
