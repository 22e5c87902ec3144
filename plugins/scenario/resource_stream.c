/* SPDX-License-Identifier: MIT */
/*
 * Scenario 5, 64-segment resource stream: over one link, one resource of 67,108,800 bytes
 * (64 segments of Resource.MAX_EFFICIENT_SIZE) at a time, compression off, each followed by
 * the receiver's 16-byte application ACK; Backbone interfaces on both sides. Accounting in
 * resource_check.h. --quick (2 s + 10 s drain) runs a stated smaller variant: 4 segments,
 * 4,194,300 bytes per resource, because the reference cannot move 64 MiB within a quick
 * sample on a shared CI machine; the result line and JSON carry the size that ran.
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
	.number = 5,
	.topology = RNSC_SCENARIO_ENDPOINTS,
	.title = "64-segment resource stream",
	.desc = "one link, one 67,108,800-byte resource (64 segments) at a time "
		"(compression off; --quick: 4 segments, 4,194,300 bytes), each content-checked "
		"and answered by a 16-byte ACK link packet; sent = completed = "
		"ACKed, bytes equal",
	.unit = "resources/s",
	.size_lo = 67108800,
	.size_hi = 67108800,
	.iface_policy = "Backbone (loopback), each side's default MTU policy",
	.mode = "stream",
	.interfaces = interfaces,
	.check = check,
};

static const rnsc_plugin_desc DESC = {
	.struct_size = sizeof(rnsc_plugin_desc),
	.abi_major = RNSC_PLUGIN_ABI_MAJOR,
	.abi_minor = RNSC_PLUGIN_ABI_MINOR,
	.kind = RNSC_PLUGIN_SCENARIO,
	.name = "resource-stream",
	.version = "1.1.0",
	.description = "benchmark scenario 5: 64-segment resource stream",
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
