/* SPDX-License-Identifier: MIT */
/*
 * The interface dimension of `rnsc bench` (--iface): which interface plugin carries an
 * endpoint scenario between its two participants, and the [interfaces] (and, for the local
 * shared instance, [reticulum]) lines each role's config gets for it. Everything listens
 * and connects on 127.0.0.1 only. "backbone" is each scenario plugin's own policy.
 * Static tables; nothing here owns memory.
 */
#ifndef RNSC_BENCH_IFACE_H
#define RNSC_BENCH_IFACE_H

#include <stddef.h>

/* What the runner sets up per sample, beyond config files, for the two ends to meet. */
enum bench_carrier {
	BENCH_CARRIER_NONE,  /* loopback sockets only */
	BENCH_CARRIER_NETNS, /* two network namespaces joined by a veth pair; each end runs in one */
	BENCH_CARRIER_PTY,   /* two ptys joined back to back (bench/participants/pty_pair.py) */
	BENCH_CARRIER_RNODE, /* two RNode simulators on one simulated channel (tests/common/rnode_sim.py) */
};

typedef struct bench_iface {
	const char *name;   /* the --iface token */
	const char *policy; /* in words, for the report */
	int nports;         /* loopback ports the runner picks for it */
	int ref_has;        /* the reference has this interface type */
	int plugin_own;     /* the scenario plugin writes the section itself */
	const char *cannot; /* non-NULL: no cell over it can run in this harness, and why */
	enum bench_carrier carrier;
	double min_drain; /* a slow carrier's least drain limit, seconds (0: the runner's) */
} bench_iface;

/* The interface named name, or NULL. */
const bench_iface *bench_iface_find(const char *name);
/* The i-th known interface, or NULL past the end. */
const bench_iface *bench_iface_at(size_t i);
/* What some interfaces need beyond ports: python and helper run the pipe interface's byte
 * relay; cert, key and pin (its SHA-256 fingerprint) are the TLS server's self-signed
 * certificate, which the client pins; dev[role] is the responder's (0) and initiator's (1)
 * device: the veth adapter (auto) or the tty path (serial, kiss, rnode). */
typedef struct bench_iface_env {
	const char *python, *helper;
	const char *tls_cert, *tls_key, *tls_pin;
	const char *dev[2];
} bench_iface_env;

/* Writes the config lines for role (RNSC_SCENARIO_ROLE_RESPONDER or _INITIATOR) into
 * reticulum (extra [reticulum] lines, maybe empty) and interfaces (from "[interfaces]" on).
 * Returns 0 or -1 (no room, or what the interface needs is missing from env). */
int bench_iface_config(const bench_iface *f, int role, const int *ports, const bench_iface_env *env,
		       char *reticulum, size_t rcap, char *interfaces, size_t icap);

#endif
