/* SPDX-License-Identifier: MIT */
/*
 * Per-interface announce cap and announce queue (Transport._outbound's announce branch and
 * Interface.process_announce_queue of rns 1.5.4).
 *
 * Rebroadcast announces (hops > 0) may use at most `cap` (Interface.announce_cap, a
 * fraction: the config's percentage / 100, default RNSC_ANNOUNCE_CAP_DEFAULT) of an
 * interface's bitrate: after each one the interface waits tx_time / cap, with tx_time =
 * frame bits / bitrate. An announce that arrives while the interface waits, or while
 * others are queued, is queued instead: one entry per destination (a newer emission
 * replaces the entry's frame, hops and time in place), at most RNSC_MAX_QUEUED_ANNOUNCES
 * entries (more are dropped). When the wait is over the queue sends one entry: the lowest
 * hop count, the oldest among those; entries older than RNSC_QUEUED_ANNOUNCE_LIFE_MS are
 * dropped first. An interface without a bitrate queues everything, and the first queue
 * run then clears the queue (the reference's division by zero ends in its error path).
 *
 * Sans-I/O: time is passed in, in ms since the epoch; the queue's timer is a deadline the
 * caller honours with rnsc_acap_run(). Time resolution is 1 ms: two announces in the same
 * millisecond on a fast interface are one queue run apart (the reference's clock is finer).
 * Memory bound: RNSC_MAX_QUEUED_ANNOUNCES frames per interface, each at most RNSC_MTU
 * bytes + ~64 bytes (about 2.3 MB per interface at worst).
 * Ownership: embedded in the caller's interface record; frames are copied and freed by
 * rnsc_acap_free(). One thread at a time.
 */
#ifndef RNSC_ANNOUNCE_CAP_H
#define RNSC_ANNOUNCE_CAP_H

#include <stddef.h>
#include <stdint.h>

#include "ctx.h"

#define RNSC_MAX_QUEUED_ANNOUNCES 4096                /* Reticulum.MAX_QUEUED_ANNOUNCES */
#define RNSC_QUEUED_ANNOUNCE_LIFE_MS (3ull * 3600000) /* Reticulum.QUEUED_ANNOUNCE_LIFE */
#define RNSC_ANNOUNCE_CAP_DEFAULT 0.02                /* Reticulum.ANNOUNCE_CAP / 100 */
/* Interfaces spawned by a server (TCP, Backbone, Auto peers, shared-instance clients) and
 * the shared instance's own interfaces never get announce_cap set, and the fallback in
 * _outbound and process_announce_queue is Reticulum.ANNOUNCE_CAP itself: 2, i.e. 200%. */
#define RNSC_ANNOUNCE_CAP_SPAWNED 2.0

typedef struct rnsc_acap_entry {
	uint8_t dest[16];
	uint64_t time; /* when queued (or last replaced), ms */
	unsigned hops;
	uint64_t emitted; /* emission timestamp from the announce's random blob, s */
	size_t len;
	uint8_t *raw;
} rnsc_acap_entry;

typedef struct rnsc_acap {
	rnsc_ctx *ctx;
	double cap;         /* fraction of the bitrate */
	double allowed_at;  /* Interface.announce_allowed_at, ms (fractional) */
	double timer;       /* when the queue runs next, ms; < 0: no timer */
	rnsc_acap_entry *q; /* insertion order */
	size_t n, capq;
	uint64_t dropped; /* queue full, stale, or cleared */
} rnsc_acap;

enum rnsc_acap_verdict {
	RNSC_ACAP_SEND = 0,   /* transmit now (allowed_at advanced) */
	RNSC_ACAP_QUEUED = 1, /* queued or merged into an entry: do not transmit */
	RNSC_ACAP_DROPPED = 2 /* queue full: do not transmit */
};

/* cap <= 0 selects RNSC_ANNOUNCE_CAP_DEFAULT. */
RNSC_API void rnsc_acap_init(rnsc_acap *a, rnsc_ctx *ctx, double cap);
RNSC_API void rnsc_acap_free(rnsc_acap *a);
/* Drops every queued entry (Transport.drop_announce_queues); returns how many. */
RNSC_API size_t rnsc_acap_clear(rnsc_acap *a);

/* One rebroadcast announce about to go out on the interface. Returns an
 * enum rnsc_acap_verdict, or RNSC_ERR_NOMEM. */
RNSC_API int rnsc_acap_admit(rnsc_acap *a, uint64_t now, uint64_t bitrate, const uint8_t dest[16],
			     unsigned hops, uint64_t emitted, const uint8_t *raw, size_t len);
/* The queue's timer: when due (now >= deadline), sends at most one entry: copies it to buf
 * (cap >= RNSC_MTU suffices), returns 1 with *len set; 0 when nothing went out;
 * RNSC_ERR_BUFSIZE. Calling it early does nothing. */
RNSC_API int rnsc_acap_run(rnsc_acap *a, uint64_t now, uint64_t bitrate, uint8_t *buf, size_t cap,
			   size_t *len);
/* When rnsc_acap_run() has work; UINT64_MAX when no timer is armed. */
RNSC_API uint64_t rnsc_acap_deadline(const rnsc_acap *a);

#endif
