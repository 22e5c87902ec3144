/* SPDX-License-Identifier: MIT */
/* Announce policy: ingress control and held announces (ingress.c), the announce cap and
 * queue (announce_cap.c), announce rate limits (announce_rate.c), and the engine consulting
 * them as Transport.py does (transport_policy.c). Times in ms. */
#include <stdio.h>
#include <string.h>

#include "announce_cap.h"
#include "announce_rate.h"
#include "crypto.h"
#include "cu_run.h"
#include "engine_env.h"
#include "destination.h"
#include "ingress.h"
#include "node_policy.h"
#include "packet.h"
#include "plugin_host.h"
#include "transport.h"

static const uint64_t T0 = 1700000000000ull;

static void dest_of(uint8_t d[16], int i)
{
	memset(d, 0, 16);
	d[0] = (uint8_t)i;
	d[1] = (uint8_t)(i >> 8);
}

/* ---- frequency deques ---- */

static void test_freq(void)
{
	rnsc_freq f;
	memset(&f, 0, sizeof(f));
	CU_ASSERT_EQUAL(rnsc_freq_hz(&f, T0, 2, 10000), 0.0);
	rnsc_freq_add(&f, T0);
	rnsc_freq_add(&f, T0 + 500);
	CU_ASSERT_EQUAL(rnsc_freq_hz(&f, T0 + 1000, 2, 10000), 0.0); /* not more than 2 */
	rnsc_freq_add(&f, T0 + 1000);
	CU_ASSERT_DOUBLE_EQUAL(rnsc_freq_hz(&f, T0 + 1000, 2, 10000), 3.0, 1e-9);
	CU_ASSERT_EQUAL(rnsc_freq_hz(&f, T0, 2, 10000), 0.0); /* span 0 */
	/* peeking never drops a sample */
	CU_ASSERT_DOUBLE_EQUAL(rnsc_freq_peek(&f, T0 + 20000, 2), 3.0 / 20.0, 1e-9);
	CU_ASSERT_EQUAL(f.n, 3);
	CU_ASSERT_EQUAL(rnsc_freq_peek(&f, T0, 2), 0.0);
	/* a span over the decay drops the oldest sample, after counting it */
	CU_ASSERT_DOUBLE_EQUAL(rnsc_freq_hz(&f, T0 + 20000, 2, 10000), 3.0 / 20.0, 1e-9);
	CU_ASSERT_EQUAL(f.n, 2);
	/* maxlen: the oldest falls out */
	memset(&f, 0, sizeof(f));
	for (int i = 0; i < RNSC_IC_FREQ_SAMPLES + 5; i++)
		rnsc_freq_add(&f, T0 + (uint64_t)i * 100);
	CU_ASSERT_EQUAL(f.n, RNSC_IC_FREQ_SAMPLES);
	CU_ASSERT_EQUAL(f.ts[f.head], T0 + 500);
}

/* ---- ingress control ---- */

static void test_burst_thresholds(void)
{
	rnsc_ingress ig;
	rnsc_ingress_init(&ig, C, NULL, T0);
	/* a new interface (younger than ic_new_time): threshold 3 Hz; 3 Hz is not above */
	for (int i = 0; i < 3; i++)
		rnsc_ingress_announce_seen(&ig, T0 + (uint64_t)i * 500);
	CU_ASSERT_EQUAL(rnsc_ingress_should_limit(&ig, T0 + 1000), 0); /* 3 / 1.0 s = 3 Hz */
	rnsc_ingress_announce_seen(&ig, T0 + 1000);
	CU_ASSERT_EQUAL(rnsc_ingress_should_limit(&ig, T0 + 1000), 1); /* 4 Hz */
	CU_ASSERT_EQUAL(ig.burst_active, 1);
	CU_ASSERT_EQUAL(ig.burst_activated, T0 + 1000);
	CU_ASSERT_EQUAL(ig.held_release, T0 + 1000 + RNSC_IC_BURST_PENALTY_MS);
	/* still limited below the threshold until the hold time passed */
	CU_ASSERT_EQUAL(rnsc_ingress_should_limit(&ig, T0 + 10000), 1);
	CU_ASSERT_EQUAL(ig.burst_active, 1);
	/* past activation + hold and sustained + hold, rate low: ends, but this call still
	 * limits */
	uint64_t t = T0 + 1000 + RNSC_IC_BURST_HOLD_MS + 1;
	CU_ASSERT_EQUAL(rnsc_ingress_should_limit(&ig, t), 1);
	CU_ASSERT_EQUAL(ig.burst_active, 0);
	CU_ASSERT_EQUAL(rnsc_ingress_should_limit(&ig, t), 0);
	rnsc_ingress_free(&ig);

	/* an established interface: 10 Hz; a sustained rate keeps the burst going */
	rnsc_ingress_init(&ig, C, NULL, T0 - RNSC_IC_NEW_TIME_MS);
	for (int i = 0; i < 8; i++)
		rnsc_ingress_announce_seen(&ig, T0 + (uint64_t)i * 100); /* 8 / 0.7 s < 10? */
	CU_ASSERT_EQUAL(rnsc_ingress_should_limit(&ig, T0 + 1000), 0);   /* 8 Hz */
	for (int i = 0; i < 4; i++)
		rnsc_ingress_announce_seen(&ig, T0 + 1000);
	CU_ASSERT_EQUAL(rnsc_ingress_should_limit(&ig, T0 + 1000), 1); /* 12 Hz */
	for (int i = 0; i < 36; i++)
		rnsc_ingress_announce_seen(&ig, T0 + 3000);
	CU_ASSERT_EQUAL(rnsc_ingress_should_limit(&ig, T0 + 3000), 1); /* 16 Hz: sustained */
	CU_ASSERT_EQUAL(ig.burst_sustained, T0 + 3000);
	/* disabled ingress control never limits */
	ig.cfg.enabled = 0;
	CU_ASSERT_EQUAL(rnsc_ingress_should_limit(&ig, T0 + 3000), 0);
	CU_ASSERT_EQUAL(rnsc_ingress_should_limit_pr(&ig, T0 + 3000), 0);
	rnsc_ingress_free(&ig);
}

static void test_pr_burst_cooldown(void)
{
	rnsc_ingress ig;
	rnsc_ingress_init(&ig, C, NULL, T0);
	for (int i = 0; i < 4; i++)
		rnsc_ingress_pr_seen(&ig, T0 + (uint64_t)i * 100);
	CU_ASSERT_EQUAL(rnsc_ingress_should_limit_pr(&ig, T0 + 300), 1);
	CU_ASSERT_EQUAL(ig.pr_burst_active, 1);
	CU_ASSERT_EQUAL(ig.pr_cooldown, RNSC_IC_PR_COOLDOWN);
	uint64_t t = T0 + 300 + RNSC_IC_BURST_HOLD_MS + 30000; /* rate has decayed */
	for (int i = 0; i < RNSC_IC_PR_COOLDOWN; i++) {
		CU_ASSERT_EQUAL(rnsc_ingress_should_limit_pr(&ig, t), 1);
		CU_ASSERT_EQUAL(ig.pr_burst_active, 1);
	}
	CU_ASSERT_EQUAL(rnsc_ingress_should_limit_pr(&ig, t), 1); /* the ending call */
	CU_ASSERT_EQUAL(ig.pr_burst_active, 0);
	CU_ASSERT_EQUAL(rnsc_ingress_should_limit_pr(&ig, t), 0);
	rnsc_ingress_free(&ig);
}

static void test_hold_and_release(void)
{
	rnsc_ingress_cfg cfg;
	rnsc_ingress_cfg_default(&cfg);
	cfg.max_held = 4;
	rnsc_ingress ig;
	rnsc_ingress_init(&ig, C, &cfg, T0);
	uint8_t d[16], raw[8], buf[RNSC_MTU];
	size_t len = 0;
	unsigned hops[] = {3, 1, 2, 1};
	for (int i = 0; i < 4; i++) {
		dest_of(d, i);
		memset(raw, 'a' + i, sizeof(raw));
		CU_ASSERT_EQUAL(rnsc_ingress_hold(&ig, d, hops[i], raw, sizeof(raw)), 1);
	}
	dest_of(d, 9);
	CU_ASSERT_EQUAL(rnsc_ingress_hold(&ig, d, 1, raw, sizeof(raw)), 0); /* full */
	CU_ASSERT_EQUAL(ig.held_dropped, 1);
	dest_of(d, 0); /* replacing keeps its place, newest frame wins */
	memset(raw, 'z', sizeof(raw));
	CU_ASSERT_EQUAL(rnsc_ingress_hold(&ig, d, 1, raw, 4), 1);
	CU_ASSERT_EQUAL(ig.n_held, 4);
	CU_ASSERT_EQUAL(rnsc_ingress_hold(&ig, d, RNSC_PATHFINDER_M - 1, raw, 4), 0);
	/* not before held_release, nor while the rate is at the threshold */
	ig.held_release = T0 + 15000;
	CU_ASSERT_EQUAL(rnsc_ingress_release(&ig, T0 + 15000, buf, sizeof(buf), &len), 0);
	for (int i = 0; i < 4; i++)
		rnsc_ingress_announce_seen(&ig, T0 + 15000);
	rnsc_ingress_announce_seen(&ig, T0 + 15500);
	CU_ASSERT_EQUAL(rnsc_ingress_release(&ig, T0 + 16000, buf, sizeof(buf), &len), 0);
	/* lowest hops first; among equals the first held (dest 0, replaced in place) */
	uint64_t t = T0 + 40000;
	const char expect[] = {'z', 'b', 'd', 'c'};
	for (int i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL(rnsc_ingress_release(&ig, t, buf, sizeof(buf), &len), 1);
		CU_ASSERT_EQUAL(buf[0], expect[i]);
		CU_ASSERT_EQUAL(len, expect[i] == 'z' ? 4u : 8u);
		CU_ASSERT_EQUAL(ig.held_release, t + RNSC_IC_HELD_RELEASE_INTERVAL_MS);
		/* one per release interval */
		CU_ASSERT_EQUAL(rnsc_ingress_release(&ig, t + 1000, buf, sizeof(buf), &len), 0);
		t += RNSC_IC_HELD_RELEASE_INTERVAL_MS + 1;
	}
	CU_ASSERT_EQUAL(ig.n_held, 0);
	CU_ASSERT_EQUAL(ig.released, 4);
	CU_ASSERT_EQUAL(rnsc_ingress_release(&ig, t, buf, sizeof(buf), &len), 0);
	/* a too small buffer keeps the frame */
	dest_of(d, 1);
	CU_ASSERT_EQUAL(rnsc_ingress_hold(&ig, d, 1, raw, 8), 1);
	CU_ASSERT_EQUAL(rnsc_ingress_release(&ig, t, buf, 4, &len), RNSC_ERR_BUFSIZE);
	CU_ASSERT_EQUAL(ig.n_held, 1);
	/* a configured maximum is bounded */
	cfg.max_held = (size_t)RNSC_IC_MAX_HELD_LIMIT * 4;
	rnsc_ingress_configure(&ig, &cfg);
	CU_ASSERT_EQUAL(ig.cfg.max_held, RNSC_IC_MAX_HELD_LIMIT);
	rnsc_ingress_free(&ig);
}

/* ---- announce cap and queue ---- */

static void test_cap_queue(void)
{
	rnsc_acap a;
	rnsc_acap_init(&a, C, 0); /* default 2 % */
	CU_ASSERT_DOUBLE_EQUAL(a.cap, 0.02, 1e-12);
	uint8_t d[16], raw[100], buf[RNSC_MTU];
	size_t len = 0;
	const uint64_t br = 1000000; /* 100 bytes = 0.8 ms, / 0.02 = 40 ms */
	dest_of(d, 1);
	memset(raw, 1, sizeof(raw));
	CU_ASSERT_EQUAL(rnsc_acap_admit(&a, T0, br, d, 2, 10, raw, 100), RNSC_ACAP_SEND);
	CU_ASSERT_DOUBLE_EQUAL(a.allowed_at, (double)T0 + 40.0, 1e-6);
	CU_ASSERT_EQUAL(rnsc_acap_deadline(&a), UINT64_MAX);
	/* within the wait: queued, the timer runs at allowed_at */
	struct {
		int dest;
		unsigned hops;
		uint64_t at;
	} in[] = {{2, 3, T0 + 1}, {3, 2, T0 + 2}, {4, 3, T0 + 3}, {5, 2, T0 + 4}};
	for (int i = 0; i < 4; i++) {
		dest_of(d, in[i].dest);
		memset(raw, in[i].dest, sizeof(raw));
		CU_ASSERT_EQUAL(rnsc_acap_admit(&a, in[i].at, br, d, in[i].hops, 10, raw, 100),
				RNSC_ACAP_QUEUED);
	}
	CU_ASSERT_EQUAL(a.n, 4);
	CU_ASSERT_EQUAL(rnsc_acap_deadline(&a), T0 + 40);
	/* the same destination again: merged; a newer emission replaces frame, hops, time */
	dest_of(d, 2);
	memset(raw, 0x22, sizeof(raw));
	CU_ASSERT_EQUAL(rnsc_acap_admit(&a, T0 + 5, br, d, 1, 10, raw, 100), RNSC_ACAP_QUEUED);
	CU_ASSERT_EQUAL(a.q[0].hops, 3); /* same emission: unchanged */
	CU_ASSERT_EQUAL(rnsc_acap_admit(&a, T0 + 6, br, d, 3, 11, raw, 100), RNSC_ACAP_QUEUED);
	CU_ASSERT_EQUAL(a.q[0].hops, 3);
	CU_ASSERT_EQUAL(a.q[0].time, T0 + 6);
	CU_ASSERT_EQUAL(a.n, 4);
	/* an admission while others wait is queued even after allowed_at */
	dest_of(d, 6);
	memset(raw, 6, sizeof(raw));
	CU_ASSERT_EQUAL(rnsc_acap_admit(&a, T0 + 100, br, d, 3, 10, raw, 100), RNSC_ACAP_QUEUED);
	/* early runs do nothing; then lowest hops first, oldest first among them */
	CU_ASSERT_EQUAL(rnsc_acap_run(&a, T0 + 39, br, buf, sizeof(buf), &len), 0);
	const int order[] = {3, 5, 4, 0x22, 6}; /* hops 2 by age, then hops 3 by age */
	uint64_t t = T0 + 40;
	for (int i = 0; i < 5; i++) {
		CU_ASSERT_EQUAL(rnsc_acap_run(&a, t, br, buf, sizeof(buf), &len), 1);
		CU_ASSERT_EQUAL(buf[0], order[i]);
		CU_ASSERT_EQUAL(len, 100);
		if (i < 4)
			CU_ASSERT_EQUAL(rnsc_acap_deadline(&a), t + 40);
		t += 40;
	}
	CU_ASSERT_EQUAL(rnsc_acap_deadline(&a), UINT64_MAX);
	CU_ASSERT_EQUAL(rnsc_acap_run(&a, t, br, buf, sizeof(buf), &len), 0);
	rnsc_acap_free(&a);
}

static void test_cap_bounds(void)
{
	rnsc_acap a;
	rnsc_acap_init(&a, C, 0.5);
	uint8_t d[16], raw[50], buf[RNSC_MTU];
	size_t len = 0;
	memset(raw, 7, sizeof(raw));
	/* no bitrate: queued; the queue run clears it (the reference's error path) */
	dest_of(d, 1);
	CU_ASSERT_EQUAL(rnsc_acap_admit(&a, T0, 0, d, 1, 1, raw, 50), RNSC_ACAP_QUEUED);
	CU_ASSERT_EQUAL(rnsc_acap_deadline(&a), T0);
	CU_ASSERT_EQUAL(rnsc_acap_run(&a, T0, 0, buf, sizeof(buf), &len), 0);
	CU_ASSERT_EQUAL(a.n, 0);
	CU_ASSERT_EQUAL(a.dropped, 1);
	/* the queue length is bounded */
	a.allowed_at = (double)T0 + 1e9;
	for (int i = 0; i < RNSC_MAX_QUEUED_ANNOUNCES; i++) {
		dest_of(d, i);
		CU_ASSERT_EQUAL_FATAL(rnsc_acap_admit(&a, T0, 1000, d, 1, 1, raw, 50),
				      RNSC_ACAP_QUEUED);
	}
	dest_of(d, RNSC_MAX_QUEUED_ANNOUNCES);
	CU_ASSERT_EQUAL(rnsc_acap_admit(&a, T0, 1000, d, 1, 1, raw, 50), RNSC_ACAP_DROPPED);
	CU_ASSERT_EQUAL(rnsc_acap_clear(&a), RNSC_MAX_QUEUED_ANNOUNCES);
	/* stale entries (QUEUED_ANNOUNCE_LIFE) are dropped before selection */
	a.allowed_at = (double)T0 + 10;
	dest_of(d, 1);
	CU_ASSERT_EQUAL(rnsc_acap_admit(&a, T0, 1000, d, 1, 1, raw, 50), RNSC_ACAP_QUEUED);
	dest_of(d, 2);
	raw[0] = 2;
	CU_ASSERT_EQUAL(
		rnsc_acap_admit(&a, T0 + RNSC_QUEUED_ANNOUNCE_LIFE_MS, 1000, d, 2, 1, raw, 50),
		RNSC_ACAP_QUEUED);
	CU_ASSERT_EQUAL(
		rnsc_acap_run(&a, T0 + RNSC_QUEUED_ANNOUNCE_LIFE_MS + 1, 1000, buf, 10, &len),
		RNSC_ERR_BUFSIZE);
	CU_ASSERT_EQUAL(a.n, 1);
	a.timer = (double)T0; /* re-arm after the failed run */
	CU_ASSERT_EQUAL(rnsc_acap_run(&a, T0 + RNSC_QUEUED_ANNOUNCE_LIFE_MS + 2, 1000, buf,
				      sizeof(buf), &len),
			1);
	CU_ASSERT_EQUAL(buf[0], 2);
	rnsc_acap_free(&a);
}

/* ---- announce rate ---- */

static void test_rate(void)
{
	rnsc_arate e;
	uint64_t t = T0;
	rnsc_arate_init(&e, t);
	/* target 60 s, grace 2, penalty 30 s: the third early announce blocks */
	t += 10000;
	CU_ASSERT_EQUAL(rnsc_arate_check(&e, t, 60, 2, 30), 0);
	CU_ASSERT_EQUAL(e.rate_violations, 1);
	t += 10000;
	CU_ASSERT_EQUAL(rnsc_arate_check(&e, t, 60, 2, 30), 0);
	uint64_t last = t;
	t += 10000;
	CU_ASSERT_EQUAL(rnsc_arate_check(&e, t, 60, 2, 30), 1);
	CU_ASSERT_EQUAL(e.rate_violations, 3);
	CU_ASSERT_EQUAL(e.blocked_until, last + 90000);
	CU_ASSERT_EQUAL(e.last, last);
	/* blocked until last + target + penalty, violations untouched */
	CU_ASSERT_EQUAL(rnsc_arate_check(&e, last + 90000, 60, 2, 30), 1);
	CU_ASSERT_EQUAL(e.rate_violations, 3);
	/* after the block a slow announce forgives one violation: within grace again */
	CU_ASSERT_EQUAL(rnsc_arate_check(&e, last + 90001, 60, 2, 30), 0);
	CU_ASSERT_EQUAL(e.rate_violations, 2);
	CU_ASSERT_EQUAL(e.last, last + 90001);
	t = last + 90001 + 200000;
	CU_ASSERT_EQUAL(rnsc_arate_check(&e, t, 60, 2, 30), 0);
	CU_ASSERT_EQUAL(e.rate_violations, 1);
	CU_ASSERT_EQUAL(e.last, t);
	CU_ASSERT_EQUAL(e.n_timestamps, 7);
	for (int i = 0; i < 20; i++)
		(void)rnsc_arate_check(&e, t + (uint64_t)i * 1000000, 60, 2, 30);
	CU_ASSERT_EQUAL(e.n_timestamps, RNSC_MAX_RATE_TIMESTAMPS);
	CU_ASSERT_EQUAL(e.timestamps[RNSC_MAX_RATE_TIMESTAMPS - 1], t + 19000000ull);
}

/* ---- the engine ---- */

typedef struct eng {
	rnsc_transport *t;
	rnsc_identity tid;
	int announces;
} eng;

static void on_announce(void *ud, const uint8_t *dest, const uint8_t *app, size_t len,
			unsigned hops)
{
	(void)dest, (void)app, (void)len, (void)hops;
	((eng *)ud)->announces++;
}

static void eng_new(eng *e, int transport)
{
	memset(e, 0, sizeof(*e));
	CU_ASSERT_EQUAL_FATAL(rnsc_identity_generate(C, &e->tid), 0);
	rnsc_transport_config cfg = {.transport_enabled = transport, .use_implicit_proof = 1};
	CU_ASSERT_EQUAL_FATAL(rnsc_transport_new(C, &e->t, &e->tid, &cfg), 0);
	rnsc_transport_callbacks cb = {.ud = e, .on_announce = on_announce};
	rnsc_transport_set_callbacks(e->t, &cb);
}

static void eng_del(eng *e)
{
	rnsc_transport_del(e->t);
	rnsc_identity_free(&e->tid);
}

/* Moves every frame of `from` to `to` (all interfaces of from map to iface `to_if`);
 * returns how many. */
static int move(eng *from, eng *to, uint32_t to_if, uint64_t now)
{
	uint8_t buf[RNSC_MTU + 16];
	uint32_t ifc;
	int len, n = 0;
	while ((len = rnsc_transport_outbox_pop(from->t, &ifc, buf, sizeof(buf))) > 0) {
		n++;
		if (to)
			CU_ASSERT_EQUAL(rnsc_transport_ingest(to->t, to_if, buf, (size_t)len, now),
					0);
	}
	return n;
}

static const char *const ASP[] = {"policy", "test"};

/* An announce flood into a new interface: bursts, held announces, release over time. */
static void test_engine_ingress(void)
{
	eng a, b;
	eng_new(&a, 0);
	eng_new(&b, 1);
	uint64_t now = T0;
	CU_ASSERT_EQUAL(rnsc_transport_iface_add(a.t, 1, RNSC_TRANSPORT_MODE_FULL, 10000000, 0), 0);
	CU_ASSERT_EQUAL(rnsc_transport_iface_add(b.t, 7, RNSC_TRANSPORT_MODE_FULL, 10000000, 0), 0);
	rnsc_transport_iface_policy pol;
	rnsc_transport_iface_policy_default(b.t, &pol);
	CU_ASSERT_EQUAL(pol.has_rate_target, 1);
	CU_ASSERT_EQUAL(pol.rate_target_s, 3600);
	CU_ASSERT_EQUAL(rnsc_transport_iface_set_policy(b.t, 7, &pol, now), 0);
	CU_ASSERT_EQUAL(rnsc_transport_iface_set_policy(b.t, 8, &pol, now), RNSC_ERR_NOTFOUND);
	enum { ND = 12 };
	rnsc_identity ids[ND];
	uint8_t dh[ND][16];
	for (int i = 0; i < ND; i++) {
		CU_ASSERT_EQUAL_FATAL(rnsc_identity_generate(C, &ids[i]), 0);
		CU_ASSERT_EQUAL_FATAL(rnsc_transport_dest_add(a.t, RNSC_DEST_SINGLE, &ids[i],
							      "rnsc", ASP, 2, 0, dh[i]),
				      0);
		CU_ASSERT_EQUAL(rnsc_transport_announce(a.t, dh[i], NULL, 0, now), 0);
		CU_ASSERT_EQUAL(move(&a, &b, 7, now), 1);
		now += 10;
	}
	rnsc_transport_iface_astats st;
	CU_ASSERT_EQUAL(rnsc_transport_iface_astats_get(b.t, 7, now, &st), 0);
	CU_ASSERT_EQUAL(st.arxc, ND);
	CU_ASSERT_EQUAL(st.burst_active, 1);
	CU_ASSERT_EQUAL(st.burst_activated, T0 + 20);
	CU_ASSERT_EQUAL(st.held_announces, ND - 2); /* the first two were below the sample */
	CU_ASSERT_EQUAL(rnsc_transport_path_count(b.t), 2);
	CU_ASSERT(rnsc_transport_next_deadline(b.t) != UINT64_MAX);
	/* released one per interval once the rate is down and the penalty is over */
	uint64_t first = 0;
	for (int s = 0; s < 120 && rnsc_transport_path_count(b.t) < ND; s++) {
		now += 1000;
		CU_ASSERT_EQUAL(rnsc_transport_tick(b.t, now), 0);
		(void)move(&b, NULL, 0, now);
		if (!first && rnsc_transport_path_count(b.t) > 2)
			first = now;
	}
	CU_ASSERT_EQUAL(rnsc_transport_path_count(b.t), ND);
	CU_ASSERT(first >= T0 + 20 + RNSC_IC_BURST_PENALTY_MS);
	CU_ASSERT_EQUAL(rnsc_transport_iface_astats_get(b.t, 7, now, &st), 0);
	CU_ASSERT_EQUAL(st.held_announces, 0);
	CU_ASSERT_EQUAL(st.held_released, ND - 2);
	CU_ASSERT_EQUAL(st.burst_active, 0);
	CU_ASSERT_EQUAL(b.announces, ND);
	/* ingress control off: nothing is held */
	pol.ic.enabled = 0;
	CU_ASSERT_EQUAL(rnsc_transport_iface_set_policy(b.t, 7, &pol, 0), 0);
	CU_ASSERT_EQUAL(rnsc_transport_iface_astats_get(b.t, 9, now, &st), RNSC_ERR_NOTFOUND);
	for (int i = 0; i < ND; i++)
		rnsc_identity_free(&ids[i]);
	eng_del(&a);
	eng_del(&b);
}

/* LocalClientInterface.should_ingress_limit is always False: the same flood that is held on
 * a new ordinary interface (above) is taken at once from a program attached to a shared
 * instance (the instance's spawned interface) and by that program from the instance (its
 * interface to it), 10 ms or 0.6 s apart; the announces are still counted. */
static void test_engine_ingress_local(void)
{
	enum { ND = 12 };
	const int roles[2] = {RNSC_TRANSPORT_LOCAL_CLIENT, RNSC_TRANSPORT_LOCAL_SHARED};
	const uint64_t gaps[2] = {10, 600};
	for (int v = 0; v < 4; v++) {
		eng a, b;
		eng_new(&a, 0);
		eng_new(&b, roles[v / 2] == RNSC_TRANSPORT_LOCAL_CLIENT);
		uint64_t now = T0;
		CU_ASSERT_EQUAL(
			rnsc_transport_iface_add(a.t, 1, RNSC_TRANSPORT_MODE_FULL, 10000000, 0), 0);
		CU_ASSERT_EQUAL(
			rnsc_transport_iface_add(b.t, 7, RNSC_TRANSPORT_MODE_FULL, 1000000000, 0),
			0);
		CU_ASSERT_EQUAL(rnsc_transport_iface_set_local(b.t, 7, roles[v / 2]), 0);
		rnsc_identity ids[ND];
		uint8_t dh[ND][16];
		for (int i = 0; i < ND; i++) {
			CU_ASSERT_EQUAL_FATAL(rnsc_identity_generate(C, &ids[i]), 0);
			CU_ASSERT_EQUAL_FATAL(rnsc_transport_dest_add(a.t, RNSC_DEST_SINGLE,
								      &ids[i], "rnsc", ASP, 2, 0,
								      dh[i]),
					      0);
			CU_ASSERT_EQUAL(rnsc_transport_announce(a.t, dh[i], NULL, 0, now), 0);
			CU_ASSERT_EQUAL(move(&a, &b, 7, now), 1);
			(void)move(&b, NULL, 0, now);
			now += gaps[v % 2];
		}
		rnsc_transport_iface_astats st;
		CU_ASSERT_EQUAL(rnsc_transport_iface_astats_get(b.t, 7, now, &st), 0);
		CU_ASSERT_EQUAL(st.arxc, ND);
		CU_ASSERT_EQUAL(st.held_announces, 0);
		CU_ASSERT_EQUAL(st.burst_active, 0);
		CU_ASSERT_EQUAL(rnsc_transport_path_count(b.t), ND);
		CU_ASSERT_EQUAL(b.announces, ND);
		for (int i = 0; i < ND; i++)
			rnsc_identity_free(&ids[i]);
		eng_del(&a);
		eng_del(&b);
	}
}

/* A transport node rebroadcasting onto a slow interface: the announce cap queues. */
static void test_engine_cap(void)
{
	eng a, b;
	eng_new(&a, 0);
	eng_new(&b, 1);
	uint64_t now = T0;
	CU_ASSERT_EQUAL(rnsc_transport_iface_add(a.t, 1, RNSC_TRANSPORT_MODE_FULL, 10000000, 0), 0);
	CU_ASSERT_EQUAL(rnsc_transport_iface_add(b.t, 1, RNSC_TRANSPORT_MODE_FULL, 10000000, 0), 0);
	/* 1200 bps: a ~170-byte announce is ~1.1 s, at 2 % a minute between rebroadcasts */
	CU_ASSERT_EQUAL(rnsc_transport_iface_add(b.t, 2, RNSC_TRANSPORT_MODE_FULL, 1200, 0), 0);
	rnsc_transport_iface_policy pol;
	rnsc_transport_iface_policy_default(b.t, &pol);
	pol.ic.enabled = 0;
	CU_ASSERT_EQUAL(rnsc_transport_iface_set_policy(b.t, 1, &pol, now), 0);
	pol.announce_cap = 0.5; /* 50 %: ~2.3 s apart */
	CU_ASSERT_EQUAL(rnsc_transport_iface_set_policy(b.t, 2, &pol, now), 0);
	enum { ND = 4 };
	rnsc_identity ids[ND];
	uint8_t dh[ND][16];
	for (int i = 0; i < ND; i++) {
		CU_ASSERT_EQUAL_FATAL(rnsc_identity_generate(C, &ids[i]), 0);
		CU_ASSERT_EQUAL_FATAL(rnsc_transport_dest_add(a.t, RNSC_DEST_SINGLE, &ids[i],
							      "rnsc", ASP, 2, 0, dh[i]),
				      0);
		CU_ASSERT_EQUAL(rnsc_transport_announce(a.t, dh[i], NULL, 0, now), 0);
		CU_ASSERT_EQUAL(move(&a, &b, 1, now), 1);
	}
	/* rebroadcasts: on iface 1 all at once, on iface 2 one, then the queue */
	int on1 = 0, on2 = 0;
	uint64_t t2[ND];
	for (int s = 0; s < 400; s++) {
		now += 100;
		CU_ASSERT_EQUAL(rnsc_transport_tick(b.t, now), 0);
		uint8_t buf[RNSC_MTU + 16];
		uint32_t ifc;
		int len;
		while ((len = rnsc_transport_outbox_pop(b.t, &ifc, buf, sizeof(buf))) > 0) {
			if (ifc == 1)
				on1++;
			else if (on2 < ND)
				t2[on2++] = now;
		}
		if (s == 15) { /* the first went out, the others wait */
			rnsc_transport_iface_astats st;
			CU_ASSERT_EQUAL(rnsc_transport_iface_astats_get(b.t, 2, now, &st), 0);
			CU_ASSERT_EQUAL(st.announce_queue, ND - 1);
			CU_ASSERT_EQUAL(st.atxc, 1);
		}
	}
	CU_ASSERT(on1 >= ND);
	CU_ASSERT_EQUAL(on2, ND);
	for (int i = 1; i < on2; i++)
		CU_ASSERT(t2[i] - t2[i - 1] >= 2000); /* spaced by the cap */
	rnsc_transport_iface_astats st;
	CU_ASSERT_EQUAL(rnsc_transport_iface_astats_get(b.t, 2, now, &st), 0);
	CU_ASSERT_EQUAL(st.announce_queue, 0);
	CU_ASSERT(st.atxc >= ND); /* retransmissions of still-queued ones merge */
	CU_ASSERT_EQUAL(rnsc_transport_drop_announce_queues(b.t), 0);
	for (int i = 0; i < ND; i++)
		rnsc_identity_free(&ids[i]);
	eng_del(&a);
	eng_del(&b);
}

/* Announce rate limiting on a transport node: past the grace, rebroadcasts stop. */
static void test_engine_rate(void)
{
	eng a, b;
	eng_new(&a, 0);
	eng_new(&b, 1);
	uint64_t now = T0;
	CU_ASSERT_EQUAL(rnsc_transport_iface_add(a.t, 1, RNSC_TRANSPORT_MODE_FULL, 10000000, 0), 0);
	CU_ASSERT_EQUAL(rnsc_transport_iface_add(b.t, 1, RNSC_TRANSPORT_MODE_FULL, 10000000, 0), 0);
	rnsc_transport_iface_policy pol;
	rnsc_transport_iface_policy_default(b.t, &pol);
	pol.rate_target_s = 60;
	pol.rate_grace = 1;
	pol.rate_penalty_s = 0;
	CU_ASSERT_EQUAL(rnsc_transport_iface_set_policy(b.t, 1, &pol, now), 0);
	rnsc_identity id;
	uint8_t dh[16];
	CU_ASSERT_EQUAL_FATAL(rnsc_identity_generate(C, &id), 0);
	CU_ASSERT_EQUAL_FATAL(
		rnsc_transport_dest_add(a.t, RNSC_DEST_SINGLE, &id, "rnsc", ASP, 2, 0, dh), 0);
	uint64_t rb[5];
	for (int i = 0; i < 5; i++) {
		CU_ASSERT_EQUAL(rnsc_transport_announce(a.t, dh, NULL, 0, now), 0);
		CU_ASSERT_EQUAL(move(&a, &b, 1, now), 1);
		for (int s = 0; s < 10; s++) { /* let the rebroadcast go out */
			now += 1000;
			CU_ASSERT_EQUAL(rnsc_transport_tick(b.t, now), 0);
			(void)move(&b, NULL, 0, now);
		}
		rb[i] = rnsc_transport_get_stats(b.t)->rebroadcasts;
	}
	CU_ASSERT_EQUAL(rnsc_transport_path_count(b.t), 1);
	CU_ASSERT(rb[0] >= 1);             /* first: a new entry (and its retry) */
	CU_ASSERT_EQUAL(rb[1], 2 * rb[0]); /* one violation: within the grace */
	CU_ASSERT_EQUAL(rb[2], rb[1]);     /* two: blocked */
	CU_ASSERT_EQUAL(rb[4], rb[1]);     /* and while blocked */
	size_t cur = 0;
	uint8_t h[16];
	rnsc_arate e;
	CU_ASSERT_EQUAL(rnsc_transport_rate_next(b.t, &cur, h, &e), 1);
	CU_ASSERT_EQUAL(memcmp(h, dh, 16), 0);
	CU_ASSERT(e.rate_violations >= 2);
	CU_ASSERT(e.blocked_until > e.last);
	CU_ASSERT_EQUAL(e.n_timestamps, 5);
	CU_ASSERT_EQUAL(rnsc_transport_rate_next(b.t, &cur, NULL, NULL), 0);
	rnsc_identity_free(&id);
	eng_del(&a);
	eng_del(&b);
}

/* A path request answered while the same destination's rebroadcast is pending: the
 * rebroadcast waits in held_announces and goes out after the path response. */
static void test_engine_held_for_pr(void)
{
	eng a, b, c;
	eng_new(&a, 0);
	eng_new(&b, 1);
	eng_new(&c, 0);
	uint64_t now = T0;
	CU_ASSERT_EQUAL(rnsc_transport_iface_add(a.t, 1, RNSC_TRANSPORT_MODE_FULL, 10000000, 0), 0);
	CU_ASSERT_EQUAL(rnsc_transport_iface_add(b.t, 1, RNSC_TRANSPORT_MODE_FULL, 10000000, 0), 0);
	CU_ASSERT_EQUAL(rnsc_transport_iface_add(b.t, 2, RNSC_TRANSPORT_MODE_FULL, 10000000, 0), 0);
	CU_ASSERT_EQUAL(rnsc_transport_iface_add(c.t, 1, RNSC_TRANSPORT_MODE_FULL, 10000000, 0), 0);
	rnsc_identity id;
	uint8_t dh[16];
	CU_ASSERT_EQUAL_FATAL(rnsc_identity_generate(C, &id), 0);
	CU_ASSERT_EQUAL_FATAL(
		rnsc_transport_dest_add(a.t, RNSC_DEST_SINGLE, &id, "rnsc", ASP, 2, 0, dh), 0);
	CU_ASSERT_EQUAL(rnsc_transport_announce(a.t, dh, NULL, 0, now), 0);
	CU_ASSERT_EQUAL(move(&a, &b, 1, now), 1);
	CU_ASSERT_EQUAL(rnsc_transport_request_path(c.t, dh, 0, 0, now), 0);
	CU_ASSERT_EQUAL(move(&c, &b, 2, now), 1);
	rnsc_transport_iface_astats st;
	CU_ASSERT_EQUAL(rnsc_transport_iface_astats_get(b.t, 2, now, &st), 0);
	CU_ASSERT_EQUAL(st.prxc, 1);
	uint8_t buf[RNSC_MTU + 16];
	uint32_t ifc;
	int len, ctx_first = -1, n_first = 0, n_second = 0, ifs_second = 0;
	now += 1100;
	CU_ASSERT_EQUAL(rnsc_transport_tick(b.t, now), 0);
	while ((len = rnsc_transport_outbox_pop(b.t, &ifc, buf, sizeof(buf))) > 0) {
		n_first++;
		ctx_first = buf[34];
		CU_ASSERT_EQUAL(ifc, 2);
	}
	CU_ASSERT_EQUAL(n_first, 1);
	CU_ASSERT_EQUAL(ctx_first, RNSC_CTX_PATH_RESPONSE);
	now += 1100;
	CU_ASSERT_EQUAL(rnsc_transport_tick(b.t, now), 0);
	while ((len = rnsc_transport_outbox_pop(b.t, &ifc, buf, sizeof(buf))) > 0) {
		n_second++;
		ifs_second |= 1 << ifc;
		CU_ASSERT_EQUAL(buf[34], RNSC_CTX_NONE); /* the held rebroadcast, reinserted */
	}
	CU_ASSERT_EQUAL(n_second, 2);
	CU_ASSERT_EQUAL(ifs_second, (1 << 1) | (1 << 2));
	rnsc_identity_free(&id);
	eng_del(&a);
	eng_del(&b);
	eng_del(&c);
}

/* The interface options of the config, with the reference's defaults and quirks. */
static void test_config_policy(void)
{
	static const char text[] =
		"[reticulum]\n  enable_transport = yes\n  default_ar_grace = 0\n"
		"  ic_burst_penalty = 0\n  ic_held_release_interval = 2.5\n"
		"  ic_max_held_announces = 10\n"
		"[interfaces]\n"
		"  [[A]]\n    type = TCPServerInterface\n    announce_cap = 5\n"
		"    ingress_control = no\n    ic_burst_freq = 20\n    ic_new_time = 60\n"
		"  [[B]]\n    type = TCPServerInterface\n    announce_rate_target = 600\n"
		"    announce_cap = 150\n    ic_max_held_announces = 3\n"
		"  [[C]]\n    type = TCPServerInterface\n    announce_rate_grace = 9\n"
		"  [[D]]\n    type = TCPServerInterface\n    announce_rate_target = x\n";
	rnsc_config *cfg = NULL;
	rnsc_config_error err;
	CU_ASSERT_EQUAL_FATAL(rnsc_config_parse(C, text, strlen(text), "test", &cfg, &err), 0);
	rnsc_config_settings set;
	CU_ASSERT_EQUAL_FATAL(rnsc_config_read_settings(cfg, &set, &err), 0);
	const rnsc_config_section *ifs =
		rnsc_config_section_get(rnsc_config_root(cfg), "interfaces");
	rnsc_transport_iface_policy p;
	/* a local interface: no rate target; [reticulum] ic_* with 0 meaning the default */
	rnsc_node_policy_base(&set, 1, &p);
	CU_ASSERT_EQUAL(p.has_rate_target, 0);
	CU_ASSERT_DOUBLE_EQUAL(p.announce_cap, RNSC_ANNOUNCE_CAP_SPAWNED, 1e-12);
	CU_ASSERT_EQUAL(p.ic.burst_penalty_ms, RNSC_IC_BURST_PENALTY_MS);
	CU_ASSERT_EQUAL(p.ic.held_release_interval_ms, 2500);
	CU_ASSERT_EQUAL(p.ic.max_held, 10);
	CU_ASSERT_EQUAL(rnsc_node_policy_read(&set, rnsc_config_section_get(ifs, "A"), &p, &err),
			0);
	CU_ASSERT_DOUBLE_EQUAL(p.announce_cap, 0.05, 1e-12);
	CU_ASSERT_EQUAL(p.ic.enabled, 0);
	CU_ASSERT_DOUBLE_EQUAL(p.ic.burst_freq, 20.0, 1e-12);
	CU_ASSERT_EQUAL(p.ic.new_time_ms, 60000);
	CU_ASSERT_EQUAL(p.has_rate_target, 1); /* transport defaults: 3600 s, grace `0 or 5` */
	CU_ASSERT_EQUAL(p.rate_target_s, 3600);
	CU_ASSERT_EQUAL(p.rate_grace, 5);
	CU_ASSERT_EQUAL(p.rate_penalty_s, 0);
	CU_ASSERT_EQUAL(rnsc_node_policy_read(&set, rnsc_config_section_get(ifs, "B"), &p, &err),
			0);
	CU_ASSERT_DOUBLE_EQUAL(p.announce_cap, 0.02, 1e-12); /* beyond 100 %: default */
	CU_ASSERT_EQUAL(p.rate_target_s, 600);
	CU_ASSERT_EQUAL(p.rate_grace, 0); /* a configured target brings grace 0 */
	CU_ASSERT_EQUAL(p.ic.max_held, 3);
	CU_ASSERT_EQUAL(rnsc_node_policy_read(&set, rnsc_config_section_get(ifs, "C"), &p, &err),
			0);
	CU_ASSERT_EQUAL(p.rate_target_s, 3600);
	CU_ASSERT_EQUAL(p.rate_grace, 9);
	CU_ASSERT(rnsc_node_policy_read(&set, rnsc_config_section_get(ifs, "D"), &p, &err) != 0);
	rnsc_config_del(cfg);
}

/* Reticulum._synthesize_interface's mode selection: interface_mode first, and its gateway /
 * internal arms reading "mode" (unlowered), a KeyError without it. */
static void test_config_mode(void)
{
	static const struct {
		const char *opts;
		int rc, mode;
	} cases[] = {
		{"", 0, RNSC_IFMODE_FULL},
		{"mode = PTP\n", 0, RNSC_IFMODE_POINT_TO_POINT},
		{"mode = gw\n", 0, RNSC_IFMODE_GATEWAY},
		{"mode = point_to_point\n", 0, RNSC_IFMODE_FULL},
		{"interface_mode = AP\nmode = boundary\n", 0, RNSC_IFMODE_ACCESS_POINT},
		{"interface_mode = gateway\n", RNSC_ERR_CONFIG_VALUE, 0},
		{"interface_mode = nonsense\n", RNSC_ERR_CONFIG_VALUE, 0},
		{"interface_mode = gateway\nmode = gw\n", 0, RNSC_IFMODE_GATEWAY},
		{"interface_mode = gw\nmode = internal\n", 0, RNSC_IFMODE_INTERNAL},
		{"interface_mode = gateway\nmode = Gateway\n", 0, RNSC_IFMODE_FULL},
		{"interface_mode = nonsense\nmode = ap\n", 0, RNSC_IFMODE_FULL},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[256];
		snprintf(text, sizeof(text), "[interfaces]\n  [[A]]\n    type = X\n    %s",
			 cases[i].opts);
		rnsc_config *cfg = NULL;
		rnsc_config_error err;
		CU_ASSERT_EQUAL_FATAL(rnsc_config_parse(C, text, strlen(text), "t", &cfg, &err), 0);
		const rnsc_config_section *a = rnsc_config_section_get(
			rnsc_config_section_get(rnsc_config_root(cfg), "interfaces"), "A");
		int mode = -1;
		memset(&err, 0, sizeof(err));
		int rc = rnsc_node_iface_mode_read(a, &mode, &err);
		CU_ASSERT_EQUAL(rc, cases[i].rc);
		if (rc == 0) {
			CU_ASSERT_EQUAL(mode, cases[i].mode);
		} else {
			CU_ASSERT(strstr(err.msg, "interface_mode") != NULL);
		}
		rnsc_config_del(cfg);
	}
}

int main(void)
{
	if (engine_env_open("announce_policy_test", 0x9E3779B97F4A7C15u))
		return 1;
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("announce policy", NULL, NULL);
	CU_add_test(s, "frequency deques", test_freq);
	CU_add_test(s, "burst activation and deactivation", test_burst_thresholds);
	CU_add_test(s, "path request burst cooldown", test_pr_burst_cooldown);
	CU_add_test(s, "held announces: bound, replacement, release order", test_hold_and_release);
	CU_add_test(s, "announce cap: delay and queue order", test_cap_queue);
	CU_add_test(s, "announce cap: no bitrate, queue bound, stale entries", test_cap_bounds);
	CU_add_test(s, "announce rate: grace, block, penalty", test_rate);
	CU_add_test(s, "engine: announce flood into a new interface", test_engine_ingress);
	CU_add_test(s, "engine: no ingress limiting on local client interfaces",
		    test_engine_ingress_local);
	CU_add_test(s, "engine: announce cap on a slow interface", test_engine_cap);
	CU_add_test(s, "engine: announce rate limit", test_engine_rate);
	CU_add_test(s, "engine: held announce around a path response", test_engine_held_for_pr);
	CU_add_test(s, "config: interface announce policy", test_config_policy);
	CU_add_test(s, "config: interface mode selection", test_config_mode);
	int rc = rnsc_cu_run();
	engine_env_close();
	return rc;
}
