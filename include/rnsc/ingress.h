/* SPDX-License-Identifier: MIT */
/*
 * Ingress control of one interface (Interfaces/Interface.py of rns 1.5.4:
 * should_ingress_limit, should_ingress_limit_pr, hold_announce, process_held_announces and
 * the incoming announce / path request frequency deques).
 *
 * A new or noisy interface that receives announces for unknown destinations faster than
 * its burst threshold (ic_burst_freq_new while younger than ic_new_time, else
 * ic_burst_freq) enters a burst; while it lasts, such announces are held (one per
 * destination, the newest wins) instead of processed. Held announces are released one at
 * a time, lowest hop count first (first held among equals), every ic_held_release_interval
 * once the incoming frequency is below the threshold again (the first release waits
 * ic_burst_penalty after activation). The caller re-processes a released frame as if it
 * had just been received. Path request bursts are tracked the same way (the engine uses them
 * to stop recursive path requests and to queue a bursting interface's path requests).
 *
 * Sans-I/O: time is passed in, in milliseconds since the epoch. Memory bound: at most
 * cfg.max_held held frames per interface (default RNSC_IC_MAX_HELD_ANNOUNCES = 256, never
 * more than RNSC_IC_MAX_HELD_LIMIT), each at most RNSC_MTU bytes plus ~48 bytes of
 * bookkeeping; the frequency deques are fixed arrays of RNSC_IC_FREQ_SAMPLES timestamps.
 * Ownership: the struct is the caller's (embedded); held frames are owned by it and freed
 * with rnsc_ingress_free(). One thread at a time.
 */
#ifndef RNSC_INGRESS_H
#define RNSC_INGRESS_H

#include <stddef.h>
#include <stdint.h>

#include "ctx.h"

#define RNSC_IC_FREQ_SAMPLES 48              /* Interface.IA_FREQ_SAMPLES / IP_FREQ_SAMPLES */
#define RNSC_IC_FREQ_DECAY_MS 10000u         /* Interface.AR_FREQ_DECAY = PR_FREQ_DECAY = 1/0.1 s */
#define RNSC_IC_DEQUE_MIN_SAMPLE 2           /* Interface.IC_DEQUE_MIN_SAMPLE */
#define RNSC_IC_MAX_HELD_ANNOUNCES 256       /* Interface.MAX_HELD_ANNOUNCES */
#define RNSC_IC_MAX_HELD_LIMIT 65536         /* rnsc's hard bound on a configured maximum */
#define RNSC_IC_NEW_TIME_MS (2ull * 3600000) /* Interface.IC_NEW_TIME */
#define RNSC_IC_BURST_FREQ_NEW 3.0           /* Interface.IC_BURST_FREQ_NEW, Hz */
#define RNSC_IC_BURST_FREQ 10.0              /* Interface.IC_BURST_FREQ */
#define RNSC_IC_PR_BURST_FREQ_NEW 3.0        /* Interface.IC_PR_BURST_FREQ_NEW */
#define RNSC_IC_PR_BURST_FREQ 8.0            /* Interface.IC_PR_BURST_FREQ */
#define RNSC_IC_BURST_HOLD_MS 15000u         /* Interface.IC_BURST_HOLD */
#define RNSC_IC_BURST_PENALTY_MS 15000u      /* Interface.IC_BURST_PENALTY */
#define RNSC_IC_HELD_RELEASE_INTERVAL_MS 5000u /* Interface.IC_HELD_RELEASE_INTERVAL */
#define RNSC_IC_PR_COOLDOWN 3                  /* the reference's literal cooldown count */

typedef struct rnsc_ingress_cfg {
	int enabled;                             /* Interface.ingress_control (default on) */
	size_t max_held;                         /* ic_max_held_announces */
	uint64_t burst_hold_ms;                  /* ic_burst_hold */
	uint64_t new_time_ms;                    /* ic_new_time */
	uint64_t burst_penalty_ms;               /* ic_burst_penalty */
	uint64_t held_release_interval_ms;       /* ic_held_release_interval */
	double burst_freq_new, burst_freq;       /* Hz */
	double pr_burst_freq_new, pr_burst_freq; /* Hz */
} rnsc_ingress_cfg;

/* A deque(maxlen=RNSC_IC_FREQ_SAMPLES) of arrival times. */
typedef struct rnsc_freq {
	uint64_t ts[RNSC_IC_FREQ_SAMPLES];
	unsigned head, n;
} rnsc_freq;

typedef struct rnsc_held {
	uint8_t dest[16];
	unsigned hops; /* as received plus one (the reference's packet.hops after inbound) */
	size_t len;
	uint8_t *raw; /* the frame as received */
} rnsc_held;

typedef struct rnsc_ingress {
	rnsc_ctx *ctx;
	rnsc_ingress_cfg cfg;
	uint64_t created; /* Interface.created */
	rnsc_freq ia, ip; /* ia_freq_deque, ip_freq_deque */
	int burst_active;
	uint64_t burst_activated, burst_sustained;
	int pr_burst_active;
	uint64_t pr_burst_activated, pr_burst_sustained;
	int pr_cooldown;
	uint64_t held_release;
	rnsc_held *held; /* insertion order (the reference's dict order) */
	size_t n_held, cap_held;
	uint64_t held_dropped; /* not held: table full or too many hops */
	uint64_t released;
} rnsc_ingress;

/* The reference's defaults (Interface constants). */
RNSC_API void rnsc_ingress_cfg_default(rnsc_ingress_cfg *c);
/* cfg NULL: defaults. max_held is clamped to RNSC_IC_MAX_HELD_LIMIT. */
RNSC_API void rnsc_ingress_init(rnsc_ingress *ig, rnsc_ctx *ctx, const rnsc_ingress_cfg *cfg,
				uint64_t created);
/* Changes the configuration, keeping state (held frames beyond a lowered max stay). */
RNSC_API void rnsc_ingress_configure(rnsc_ingress *ig, const rnsc_ingress_cfg *cfg);
RNSC_API void rnsc_ingress_free(rnsc_ingress *ig);

RNSC_API void rnsc_freq_add(rnsc_freq *f, uint64_t now);
/* Interface.*_frequency: 0 unless more than min_n samples; otherwise n / span in Hz, and
 * the oldest sample is dropped when the span exceeds decay_ms (as the reference does, on
 * every call). */
RNSC_API double rnsc_freq_hz(rnsc_freq *f, uint64_t now, unsigned min_n, uint64_t decay_ms);
/* The same value without dropping a sample (for status queries, which must not change
 * the state they report). */
RNSC_API double rnsc_freq_peek(const rnsc_freq *f, uint64_t now, unsigned min_n);

/* received_announce / received_path_request (the deque part). */
RNSC_API void rnsc_ingress_announce_seen(rnsc_ingress *ig, uint64_t now);
RNSC_API void rnsc_ingress_pr_seen(rnsc_ingress *ig, uint64_t now);
RNSC_API double rnsc_ingress_ia_freq(rnsc_ingress *ig, uint64_t now);
RNSC_API double rnsc_ingress_ip_freq(rnsc_ingress *ig, uint64_t now);

/* should_ingress_limit / should_ingress_limit_pr: 1 to limit. They update the burst state
 * exactly as the reference (activation above the threshold, deactivation once below it
 * and both activation and last sustained rate are ic_burst_hold old). */
RNSC_API int rnsc_ingress_should_limit(rnsc_ingress *ig, uint64_t now);
RNSC_API int rnsc_ingress_should_limit_pr(rnsc_ingress *ig, uint64_t now);

/* hold_announce: keeps (a copy of) the frame. Returns 1 when held or replaced, 0 when not
 * (hops >= PATHFINDER_M - 1, or the table is full: the frame is dropped either way, as in
 * the reference), RNSC_ERR_NOMEM. */
RNSC_API int rnsc_ingress_hold(rnsc_ingress *ig, const uint8_t dest[16], unsigned hops,
			       const uint8_t *raw, size_t len);
/* process_held_announces: when one is due, moves it into buf (cap >= its length; RNSC_MTU
 * suffices) and returns 1; 0 when none is due; RNSC_ERR_BUFSIZE. */
RNSC_API int rnsc_ingress_release(rnsc_ingress *ig, uint64_t now, uint8_t *buf, size_t cap,
				  size_t *len);

#endif
