/* SPDX-License-Identifier: MIT */
/*
 * The ops table of a scenario plugin (kind RNSC_PLUGIN_SCENARIO of include/rnsc/plugin_abi.h).
 * A scenario plugin is loaded by the one plugin host like interface and crypto plugins and
 * tells `rnsc bench` everything that defines a scenario: its number and names, what runs
 * (two endpoint participants, or a relay under test beside rnsc's wire driver), the payload
 * size range, the interface policy and each role's [interfaces] section, and the exact
 * accounting rule that decides whether a sample counts. The runner contains no scenario:
 * adding or swapping one is a plugin on the search path, never a rebuild.
 *
 * Rules (as every ops table of the ABI): slots are only ever appended; a slot beyond
 * struct_size is absent (RNSC_OPS_HAS). The tables and strings are static data of the
 * plugin. Every call is made from the runner's single thread with the instance the host
 * allocated for the plugin. Plugins use libc only; they never link librnsc.
 */
#ifndef RNSC_SCENARIO_ABI_H
#define RNSC_SCENARIO_ABI_H

#include <stddef.h>
#include <stdint.h>

#include "plugin_abi.h"

/* What the runner starts for one sample. */
enum rnsc_scenario_topology {
	/* an initiator and a responder participant (rnsc's or the reference's) talk directly:
	 * cells are the four initiator/responder pairings */
	RNSC_SCENARIO_ENDPOINTS = 1,
	/* the implementation under test is a pure relay (rnsc daemon or the reference's rnsd)
	 * with two server interfaces; rnsc's wire driver (`rnsc bench driver`) drives both
	 * sides: cells are one per relay */
	RNSC_SCENARIO_RELAY = 2,
};

/* Roles whose [interfaces] section a plugin writes. */
enum rnsc_scenario_role {
	RNSC_SCENARIO_ROLE_RESPONDER = 1, /* endpoints: the side that listens */
	RNSC_SCENARIO_ROLE_INITIATOR = 2, /* endpoints: the side that connects */
	RNSC_SCENARIO_ROLE_RELAY = 3,     /* relay: two server interfaces, ports[0] and ports[1] */
};

/* Result lines as the participants sent them ("result key=value ..."), for check(). */
typedef struct rnsc_scenario_lines {
	size_t struct_size;
	/* endpoints: the initiator's and the responder's; relay: the driver's (a) and NULL */
	const char *a, *b;
} rnsc_scenario_lines;

/* One sample as check() judges it; the runner zeroes it and sets struct_size. */
typedef struct rnsc_scenario_sample {
	size_t struct_size;
	int ok;        /* the accounting rule held exactly */
	char why[400]; /* when not ok: which rule failed, with the counts */
	/* the counters of the JSON record (a scenario sets those it has) */
	unsigned long long sent, proved, delivered, timeouts, unproved, bytes;
	double elapsed_s;
	double rate;    /* in the plugin's unit */
	double goodput; /* payload bytes per second */
	double p50_us, p99_us;
	uint32_t link_mtu; /* negotiated link MTU when the scenario has a link, else 0 */
	/* extra JSON members for the sample record, e.g. "\"dup\": 0, \"lost\": 0" (no braces,
	 * no leading comma); empty when none */
	char extra_json[768];
} rnsc_scenario_sample;

typedef struct rnsc_scenario_ops {
	size_t struct_size;
	uint32_t number;           /* the scenario's number in the published benchmark (1..8) */
	uint32_t topology;         /* enum rnsc_scenario_topology */
	const char *title;         /* one line for the report, e.g. "raw transport throughput" */
	const char *desc;          /* a sentence: traffic and accounting rule */
	const char *unit;          /* unit of rate, e.g. "packets/s" */
	uint32_t size_lo, size_hi; /* payload size range (0, 0 when the scenario has none) */
	/* the interface policy in words for the report, e.g. "TCP (loopback), each side's
	 * default MTU policy" */
	const char *iface_policy;
	/* what the participant or driver is told to run: `--scenario <mode>` of the
	 * participants, or `--mode <mode>` of the wire driver */
	const char *mode;
	/* Writes the [interfaces] section (from "[interfaces]" on) for role into out (NUL
	 * terminated). ports holds the loopback TCP ports the runner picked: one for the
	 * endpoint roles, two for the relay. Returns 0 or a negative rnsc_err
	 * (RNSC_ERR_BUFSIZE, RNSC_ERR_INVAL for a role the scenario has not). */
	int (*interfaces)(void *inst, int role, const int *ports, size_t n_ports, char *out,
			  size_t cap);
	/* Judges one sample from the result lines; fills s (ok, why, counters, rate). Returns 0
	 * (the verdict is in s->ok) or RNSC_ERR_INVAL. */
	int (*check)(void *inst, const rnsc_scenario_lines *lines, rnsc_scenario_sample *s);
	/* Extra options for every role's [reticulum] section, each line indented and ending in
	 * a newline (e.g. "  link_mtu_discovery = No\n" to pin the base 500-byte link MTU), or
	 * NULL for none. Both implementations read the same config. */
	const char *reticulum;
} rnsc_scenario_ops;

#endif
