/* SPDX-License-Identifier: MIT */
/* Ingress control of one interface (see ingress.h; Interface.py of rns 1.5.4). */
#include <string.h>

#include "err.h"
#include "ingress.h"
#include "packet.h"

void rnsc_ingress_cfg_default(rnsc_ingress_cfg *c)
{
	c->enabled = 1;
	c->max_held = RNSC_IC_MAX_HELD_ANNOUNCES;
	c->burst_hold_ms = RNSC_IC_BURST_HOLD_MS;
	c->new_time_ms = RNSC_IC_NEW_TIME_MS;
	c->burst_penalty_ms = RNSC_IC_BURST_PENALTY_MS;
	c->held_release_interval_ms = RNSC_IC_HELD_RELEASE_INTERVAL_MS;
	c->burst_freq_new = RNSC_IC_BURST_FREQ_NEW;
	c->burst_freq = RNSC_IC_BURST_FREQ;
	c->pr_burst_freq_new = RNSC_IC_PR_BURST_FREQ_NEW;
	c->pr_burst_freq = RNSC_IC_PR_BURST_FREQ;
}

void rnsc_ingress_configure(rnsc_ingress *ig, const rnsc_ingress_cfg *cfg)
{
	if (cfg)
		ig->cfg = *cfg;
	else
		rnsc_ingress_cfg_default(&ig->cfg);
	if (ig->cfg.max_held > RNSC_IC_MAX_HELD_LIMIT)
		ig->cfg.max_held = RNSC_IC_MAX_HELD_LIMIT;
}

void rnsc_ingress_init(rnsc_ingress *ig, rnsc_ctx *ctx, const rnsc_ingress_cfg *cfg,
		       uint64_t created)
{
	memset(ig, 0, sizeof(*ig));
	ig->ctx = ctx;
	ig->created = created;
	rnsc_ingress_configure(ig, cfg);
}

void rnsc_ingress_free(rnsc_ingress *ig)
{
	if (!ig)
		return;
	for (size_t i = 0; i < ig->n_held; i++)
		rnsc_free(ig->ctx, ig->held[i].raw);
	rnsc_free(ig->ctx, ig->held);
	ig->held = NULL;
	ig->n_held = ig->cap_held = 0;
}

void rnsc_freq_add(rnsc_freq *f, uint64_t now)
{
	unsigned tail = (f->head + f->n) % RNSC_IC_FREQ_SAMPLES;
	f->ts[tail] = now;
	if (f->n < RNSC_IC_FREQ_SAMPLES)
		f->n++;
	else /* maxlen: the oldest falls out */
		f->head = (f->head + 1) % RNSC_IC_FREQ_SAMPLES;
}

double rnsc_freq_hz(rnsc_freq *f, uint64_t now, unsigned min_n, uint64_t decay_ms)
{
	unsigned n = f->n;
	if (n <= min_n)
		return 0.0;
	uint64_t oldest = f->ts[f->head];
	double span = ((double)now - (double)oldest) / 1000.0;
	if (span * 1000.0 > (double)decay_ms) { /* popleft; n was counted before */
		f->head = (f->head + 1) % RNSC_IC_FREQ_SAMPLES;
		f->n--;
	}
	if (span <= 0)
		return 0.0;
	return (double)n / span;
}

double rnsc_freq_peek(const rnsc_freq *f, uint64_t now, unsigned min_n)
{
	if (f->n <= min_n)
		return 0.0;
	double span = ((double)now - (double)f->ts[f->head]) / 1000.0;
	return span <= 0 ? 0.0 : (double)f->n / span;
}

void rnsc_ingress_announce_seen(rnsc_ingress *ig, uint64_t now)
{
	rnsc_freq_add(&ig->ia, now);
}

void rnsc_ingress_pr_seen(rnsc_ingress *ig, uint64_t now)
{
	rnsc_freq_add(&ig->ip, now);
}

double rnsc_ingress_ia_freq(rnsc_ingress *ig, uint64_t now)
{
	return rnsc_freq_hz(&ig->ia, now, RNSC_IC_DEQUE_MIN_SAMPLE, RNSC_IC_FREQ_DECAY_MS);
}

double rnsc_ingress_ip_freq(rnsc_ingress *ig, uint64_t now)
{
	return rnsc_freq_hz(&ig->ip, now, RNSC_IC_DEQUE_MIN_SAMPLE, RNSC_IC_FREQ_DECAY_MS);
}

static int is_new(const rnsc_ingress *ig, uint64_t now)
{
	/* age() < ic_new_time; a clock before `created` counts as age 0 */
	return now < ig->created || now - ig->created < ig->cfg.new_time_ms;
}

int rnsc_ingress_should_limit(rnsc_ingress *ig, uint64_t now)
{
	if (!ig->cfg.enabled)
		return 0;
	double threshold = is_new(ig, now) ? ig->cfg.burst_freq_new : ig->cfg.burst_freq;
	double freq = rnsc_ingress_ia_freq(ig, now);
	if (ig->burst_active) {
		if (freq < threshold && now > ig->burst_activated + ig->cfg.burst_hold_ms &&
		    now > ig->burst_sustained + ig->cfg.burst_hold_ms) {
			if (ig->ia.n >= RNSC_IC_DEQUE_MIN_SAMPLE)
				ig->burst_active = 0;
		} else if (freq >= threshold) {
			ig->burst_sustained = now;
		}
		return 1; /* even on the call that ends the burst, as the reference */
	}
	if (freq > threshold) {
		ig->burst_active = 1;
		ig->burst_activated = now;
		ig->burst_sustained = now;
		ig->held_release = now + ig->cfg.burst_penalty_ms;
		return 1;
	}
	return 0;
}

int rnsc_ingress_should_limit_pr(rnsc_ingress *ig, uint64_t now)
{
	if (!ig->cfg.enabled)
		return 0;
	double threshold = is_new(ig, now) ? ig->cfg.pr_burst_freq_new : ig->cfg.pr_burst_freq;
	double freq = rnsc_ingress_ip_freq(ig, now);
	if (ig->pr_burst_active) {
		if (freq < threshold && now > ig->pr_burst_activated + ig->cfg.burst_hold_ms &&
		    now > ig->pr_burst_sustained + ig->cfg.burst_hold_ms) {
			/* a few calls below the threshold before it ends */
			if (ig->pr_cooldown <= 0)
				ig->pr_burst_active = 0;
			else
				ig->pr_cooldown--;
		} else {
			ig->pr_cooldown = RNSC_IC_PR_COOLDOWN;
			if (freq >= threshold)
				ig->pr_burst_sustained = now;
		}
		return 1;
	}
	if (freq > threshold) {
		ig->pr_burst_active = 1;
		ig->pr_burst_activated = now;
		ig->pr_burst_sustained = now;
		ig->pr_cooldown = RNSC_IC_PR_COOLDOWN;
		return 1;
	}
	return 0;
}

int rnsc_ingress_hold(rnsc_ingress *ig, const uint8_t dest[16], unsigned hops, const uint8_t *raw,
		      size_t len)
{
	if (hops >= RNSC_PATHFINDER_M - 1) {
		ig->held_dropped++;
		return 0;
	}
	size_t i = 0;
	while (i < ig->n_held && memcmp(ig->held[i].dest, dest, 16) != 0)
		i++;
	if (i == ig->n_held && ig->n_held >= ig->cfg.max_held) {
		ig->held_dropped++;
		return 0;
	}
	uint8_t *copy = rnsc_alloc(ig->ctx, len ? len : 1);
	if (!copy)
		return RNSC_ERR_NOMEM;
	memcpy(copy, raw, len);
	if (i == ig->n_held) {
		if (ig->n_held == ig->cap_held) {
			size_t ncap = ig->cap_held ? ig->cap_held * 2 : 16;
			rnsc_held *n = rnsc_calloc(ig->ctx, ncap, sizeof(*n));
			if (!n) {
				rnsc_free(ig->ctx, copy);
				return RNSC_ERR_NOMEM;
			}
			if (ig->n_held)
				memcpy(n, ig->held, ig->n_held * sizeof(*n));
			rnsc_free(ig->ctx, ig->held);
			ig->held = n;
			ig->cap_held = ncap;
		}
		ig->n_held++;
		memcpy(ig->held[i].dest, dest, 16);
	} else {
		rnsc_free(ig->ctx, ig->held[i].raw); /* the newest wins, in place */
	}
	ig->held[i].hops = hops;
	ig->held[i].raw = copy;
	ig->held[i].len = len;
	return 1;
}

int rnsc_ingress_release(rnsc_ingress *ig, uint64_t now, uint8_t *buf, size_t cap, size_t *len)
{
	if (ig->n_held == 0 || !(now > ig->held_release))
		return 0;
	double threshold = is_new(ig, now) ? ig->cfg.burst_freq_new : ig->cfg.burst_freq;
	if (!(rnsc_ingress_ia_freq(ig, now) < threshold))
		return 0;
	size_t sel = ig->n_held;
	unsigned min_hops = RNSC_PATHFINDER_M;
	for (size_t i = 0; i < ig->n_held; i++) {
		if (ig->held[i].hops < min_hops) {
			min_hops = ig->held[i].hops;
			sel = i;
		}
	}
	if (sel == ig->n_held)
		return 0;
	if (ig->held[sel].len > cap)
		return RNSC_ERR_BUFSIZE;
	memcpy(buf, ig->held[sel].raw, ig->held[sel].len);
	*len = ig->held[sel].len;
	rnsc_free(ig->ctx, ig->held[sel].raw);
	memmove(&ig->held[sel], &ig->held[sel + 1], (ig->n_held - sel - 1) * sizeof(ig->held[0]));
	ig->n_held--;
	ig->held_release = now + ig->cfg.held_release_interval_ms;
	ig->released++;
	return 1;
}
