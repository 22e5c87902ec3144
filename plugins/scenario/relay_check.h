/* SPDX-License-Identifier: MIT */
/*
 * The accounting rule of the relay scenarios (6 and 7), judged from the wire driver's result
 * line. Per direction (ab: side a → side b, ba: back): every frame sent was carried to the
 * far side exactly once, intact and in order (no duplicate, corrupt, reordered or lost
 * frame), and, when the scenario returns credits by proof, every proof came back. The
 * driver's own source/sink capacity, calibrated without a relay just before the sample, must
 * be at least 1.25 times the rate the relay carried, or the figure would measure the driver.
 */
#ifndef RNSC_RELAY_CHECK_H
#define RNSC_RELAY_CHECK_H

#include "scn_util.h"

#define RELAY_CAPACITY_MARGIN 1.25

static inline int relay_check(const rnsc_scenario_lines *l, rnsc_scenario_sample *s, int proofs)
{
	if (!l || !s)
		return RNSC_ERR_INVAL;
	static const char *const dir[2] = {"ab", "ba"};
	static const char *const what[] = {"sent",      "carried", "dup",   "corrupt",
					   "reordered", "lost",    "bytes", "unproved"};
	unsigned long long v[2][8];
	char key[32];
	int missing = 0;
	for (int d = 0; d < 2; d++)
		for (int k = 0; k < 8; k++) {
			snprintf(key, sizeof(key), "%s_%s", dir[d], what[k]);
			v[d][k] = scn_u(l->a, key, &missing);
		}
	s->elapsed_s = scn_d(l->a, "elapsed_s", &missing);
	s->p50_us = scn_d(l->a, "rtt_p50_us", &missing);
	s->p99_us = scn_d(l->a, "rtt_p99_us", &missing);
	double capacity = scn_d(l->a, "capacity", &missing);
	s->link_mtu = (uint32_t)scn_u(l->a, "link_mtu", &missing);
	if (missing)
		return scn_fail(s, "the driver's result line lacks %d field(s): '%s'", missing,
				l->a ? l->a : "");
	s->sent = v[0][0] + v[1][0];
	s->delivered = v[0][1] + v[1][1];
	s->bytes = v[0][6] + v[1][6];
	s->unproved = v[0][7] + v[1][7];
	s->proved = proofs ? s->delivered - s->unproved : 0;
	if (s->elapsed_s > 0) {
		s->rate = (double)s->delivered / s->elapsed_s;
		s->goodput = (double)s->bytes / s->elapsed_s;
	}
	snprintf(
		s->extra_json, sizeof(s->extra_json),
		"\"capacity\": %.6g, \"link_mtu\": %u, \"ab\": {\"sent\": %llu, \"carried\": %llu, "
		"\"dup\": %llu, \"corrupt\": %llu, \"reordered\": %llu, \"lost\": %llu, \"bytes\": "
		"%llu, \"unproved\": %llu}, \"ba\": {\"sent\": %llu, \"carried\": %llu, \"dup\": "
		"%llu, \"corrupt\": %llu, \"reordered\": %llu, \"lost\": %llu, \"bytes\": %llu, "
		"\"unproved\": %llu}",
		capacity, s->link_mtu, v[0][0], v[0][1], v[0][2], v[0][3], v[0][4], v[0][5],
		v[0][6], v[0][7], v[1][0], v[1][1], v[1][2], v[1][3], v[1][4], v[1][5], v[1][6],
		v[1][7]);
	for (int d = 0; d < 2; d++) {
		if (v[d][0] == 0)
			return scn_fail(s, "nothing was sent %s", dir[d]);
		if (v[d][0] != v[d][1] || v[d][2] || v[d][3] || v[d][4] || v[d][5] ||
		    (proofs && v[d][7]))
			return scn_fail(s,
					"accounting %s: sent %llu, carried %llu, duplicate %llu, "
					"corrupt %llu, reordered %llu, lost %llu, unproved %llu",
					dir[d], v[d][0], v[d][1], v[d][2], v[d][3], v[d][4],
					v[d][5], v[d][7]);
	}
	if (capacity < RELAY_CAPACITY_MARGIN * s->rate)
		return scn_fail(
			s,
			"the driver's calibrated capacity %.0f frames/s is below %.2f x the "
			"carried rate %.0f frames/s: the sample would measure the driver",
			capacity, RELAY_CAPACITY_MARGIN, s->rate);
	s->ok = 1;
	return 0;
}

#define RELAY_PLUGIN(NAME, NUMBER, TITLE, DESCRIPTION, LO, HI, MODE, PROOFS)                       \
	static int interfaces(void *inst, int role, const int *ports, size_t n, char *out,         \
			      size_t cap)                                                          \
	{                                                                                          \
		(void)inst;                                                                        \
		return scn_backbone_relay(role, ports, n, out, cap);                               \
	}                                                                                          \
	static int check(void *inst, const rnsc_scenario_lines *l, rnsc_scenario_sample *s)        \
	{                                                                                          \
		(void)inst;                                                                        \
		return relay_check(l, s, PROOFS);                                                  \
	}                                                                                          \
	static const rnsc_scenario_ops OPS = {                                                     \
		.struct_size = sizeof(rnsc_scenario_ops),                                          \
		.number = NUMBER,                                                                  \
		.topology = RNSC_SCENARIO_RELAY,                                                   \
		.title = TITLE,                                                                    \
		.desc = DESCRIPTION,                                                               \
		.unit = "frames/s",                                                                \
		.size_lo = LO,                                                                     \
		.size_hi = HI,                                                                     \
		.iface_policy = "Backbone (loopback) on both relay sides, the relay's default "    \
				"bitrate/MTU policy",                                              \
		.mode = MODE,                                                                      \
		.interfaces = interfaces,                                                          \
		.check = check,                                                                    \
	};                                                                                         \
	static const rnsc_plugin_desc DESC = {                                                     \
		.struct_size = sizeof(rnsc_plugin_desc),                                           \
		.abi_major = RNSC_PLUGIN_ABI_MAJOR,                                                \
		.abi_minor = RNSC_PLUGIN_ABI_MINOR,                                                \
		.kind = RNSC_PLUGIN_SCENARIO,                                                      \
		.name = NAME,                                                                      \
		.version = "1.0.0",                                                                \
		.description = "benchmark scenario " #NUMBER ": " TITLE,                           \
		.ops = &OPS,                                                                       \
	};                                                                                         \
	int rnsc_plugin_init(const rnsc_host_api *host, const rnsc_plugin_desc **out)              \
		__attribute__((visibility("default")));                                            \
	int rnsc_plugin_init(const rnsc_host_api *host, const rnsc_plugin_desc **out)              \
	{                                                                                          \
		(void)host;                                                                        \
		*out = &DESC;                                                                      \
		return 0;                                                                          \
	}

#endif
