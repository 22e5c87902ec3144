/* SPDX-License-Identifier: MIT */
/*
 * Scenario 2, link-message throughput: one link, link packets of 60..420 bytes, each proved,
 * 16 outstanding, over Backbone. Accounting: sent = delivered, bytes sent = bytes delivered, and
 * every packet accounted for by its proof, a receipt timeout or as unproved at the end (the
 * reference registers a link packet's receipt after sending it, so a very fast proof can
 * miss it: NOTES-reference.md).
 */
#include "scn_util.h"

static int interfaces(void *inst, int role, const int *ports, size_t n, char *out, size_t cap)
{
	(void)inst;
	return scn_backbone_endpoints(role, ports, n, out, cap);
}

static int check(void *inst, const rnsc_scenario_lines *l, rnsc_scenario_sample *s)
{
	(void)inst;
	if (!l || !s)
		return RNSC_ERR_INVAL;
	int missing = 0;
	s->sent = scn_u(l->a, "sent", &missing);
	s->proved = scn_u(l->a, "proved", &missing);
	s->timeouts = scn_u(l->a, "timeouts", &missing);
	s->unproved = scn_u(l->a, "unproved", &missing);
	s->bytes = scn_u(l->a, "bytes", &missing);
	s->elapsed_s = scn_d(l->a, "elapsed_s", &missing);
	s->p50_us = scn_d(l->a, "rtt_p50_us", &missing);
	s->p99_us = scn_d(l->a, "rtt_p99_us", &missing);
	s->delivered = scn_u(l->b, "delivered", &missing);
	unsigned long long bytes_delivered = scn_u(l->b, "bytes", &missing);
	unsigned long long bytes_sent = scn_u(l->a, "sent_bytes", &missing);
	int optional = 0; /* participants older than the link_mtu field */
	s->link_mtu = (uint32_t)scn_u(l->a, "link_mtu", &optional);
	if (missing)
		return scn_fail(s, "a result line lacks %d field(s): '%s' / '%s'", missing,
				l->a ? l->a : "", l->b ? l->b : "");
	if (s->elapsed_s > 0) {
		s->rate = (double)s->proved / s->elapsed_s;
		s->goodput = (double)s->bytes / s->elapsed_s;
	}
	if (s->sent == 0)
		return scn_fail(s, "nothing was sent");
	if (s->sent != s->delivered || bytes_sent != bytes_delivered ||
	    s->proved + s->timeouts + s->unproved != s->sent)
		return scn_fail(
			s,
			"accounting: sent %llu, delivered %llu, proved %llu, timeouts %llu, "
			"unproved %llu, bytes sent %llu vs delivered %llu",
			s->sent, s->delivered, s->proved, s->timeouts, s->unproved, bytes_sent,
			bytes_delivered);
	s->ok = 1;
	return 0;
}

static const rnsc_scenario_ops OPS = {
	.struct_size = sizeof(rnsc_scenario_ops),
	.number = 2,
	.topology = RNSC_SCENARIO_ENDPOINTS,
	.title = "link-message throughput",
	.desc = "link throughput: one link, link packets each proved, 16 outstanding",
	.unit = "packets/s",
	.size_lo = 60,
	.size_hi = 420,
	.iface_policy = "Backbone (loopback), each side's default MTU policy",
	.mode = "link",
	.interfaces = interfaces,
	.check = check,
};

static const rnsc_plugin_desc DESC = {
	.struct_size = sizeof(rnsc_plugin_desc),
	.abi_major = RNSC_PLUGIN_ABI_MAJOR,
	.abi_minor = RNSC_PLUGIN_ABI_MINOR,
	.kind = RNSC_PLUGIN_SCENARIO,
	.name = "link",
	.version = "1.1.0",
	.description = "benchmark scenario 2: link-message throughput",
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
