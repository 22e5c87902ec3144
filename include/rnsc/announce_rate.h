/* SPDX-License-Identifier: MIT */
/*
 * Announce rate limiting of one destination (Transport.announce_rate_table and the rule in
 * Transport.inbound's announce branch, rns 1.5.4).
 *
 * Each time an announce would update the path table (and is not a path response) on an
 * interface with an announce_rate_target, the destination's entry is consulted: an
 * announce sooner than the target after the last accepted one is a violation, a later one
 * forgives one; more violations than announce_rate_grace block rebroadcasts until
 * last + target + announce_rate_penalty. A blocked announce still updates the path table;
 * only its rebroadcast is suppressed.
 *
 * Sans-I/O; times in ms since the epoch, target and penalty in seconds as configured.
 * Memory: one fixed-size entry per destination; the engine culls entries of destinations
 * no longer in its path table (the reference never culls this table).
 */
#ifndef RNSC_ANNOUNCE_RATE_H
#define RNSC_ANNOUNCE_RATE_H

#include <stdint.h>

#include "ctx.h"

#define RNSC_MAX_RATE_TIMESTAMPS 16 /* Transport.MAX_RATE_TIMESTAMPS */
#define RNSC_DEFAULT_AR_TARGET 3600 /* Interface.DEFAULT_AR_TARGET, s */
#define RNSC_DEFAULT_AR_PENALTY 0   /* Interface.DEFAULT_AR_PENALTY, s */
#define RNSC_DEFAULT_AR_GRACE 5     /* Interface.DEFAULT_AR_GRACE */

typedef struct rnsc_arate {
	uint64_t last; /* ms */
	uint64_t rate_violations;
	uint64_t blocked_until; /* ms */
	uint64_t timestamps[RNSC_MAX_RATE_TIMESTAMPS];
	unsigned n_timestamps; /* oldest first */
} rnsc_arate;

/* A new entry for a first announce at now (never blocked). */
RNSC_API void rnsc_arate_init(rnsc_arate *e, uint64_t now);
/* A later announce for the entry's destination: returns 1 when its rebroadcast is
 * blocked, 0 when allowed, updating the entry as the reference does. */
RNSC_API int rnsc_arate_check(rnsc_arate *e, uint64_t now, uint64_t target_s, uint64_t grace,
			      uint64_t penalty_s);

#endif
