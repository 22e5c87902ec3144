/* SPDX-License-Identifier: MIT */
/* Per-interface announce cap and queue (see announce_cap.h). */
#include <string.h>

#include "announce_cap.h"
#include "err.h"

void rnsc_acap_init(rnsc_acap *a, rnsc_ctx *ctx, double cap)
{
	memset(a, 0, sizeof(*a));
	a->ctx = ctx;
	a->cap = cap > 0 ? cap : RNSC_ANNOUNCE_CAP_DEFAULT;
	a->timer = -1;
}

size_t rnsc_acap_clear(rnsc_acap *a)
{
	size_t n = a->n;
	for (size_t i = 0; i < a->n; i++)
		rnsc_free(a->ctx, a->q[i].raw);
	a->n = 0;
	a->dropped += n;
	return n;
}

void rnsc_acap_free(rnsc_acap *a)
{
	if (!a)
		return;
	(void)rnsc_acap_clear(a);
	rnsc_free(a->ctx, a->q);
	a->q = NULL;
	a->capq = 0;
}

/* tx_time / announce_cap, in ms */
static double wait_ms(const rnsc_acap *a, size_t len, uint64_t bitrate)
{
	return ((double)len * 8.0 / (double)bitrate) / a->cap * 1000.0;
}

static void remove_at(rnsc_acap *a, size_t i)
{
	rnsc_free(a->ctx, a->q[i].raw);
	memmove(&a->q[i], &a->q[i + 1], (a->n - i - 1) * sizeof(a->q[0]));
	a->n--;
}

int rnsc_acap_admit(rnsc_acap *a, uint64_t now, uint64_t bitrate, const uint8_t dest[16],
		    unsigned hops, uint64_t emitted, const uint8_t *raw, size_t len)
{
	if (a->n == 0 && (double)now > a->allowed_at && bitrate != 0) {
		a->allowed_at = (double)now + wait_ms(a, len, bitrate);
		return RNSC_ACAP_SEND;
	}
	if (a->n >= RNSC_MAX_QUEUED_ANNOUNCES) {
		a->dropped++;
		return RNSC_ACAP_DROPPED;
	}
	for (size_t i = 0; i < a->n; i++) {
		rnsc_acap_entry *e = &a->q[i];
		if (memcmp(e->dest, dest, 16) != 0)
			continue;
		if (emitted > e->emitted) { /* a newer emission takes the entry over */
			uint8_t *copy = rnsc_alloc(a->ctx, len ? len : 1);
			if (!copy)
				return RNSC_ERR_NOMEM;
			memcpy(copy, raw, len);
			rnsc_free(a->ctx, e->raw);
			e->raw = copy;
			e->len = len;
			e->time = now;
			e->hops = hops;
			e->emitted = emitted;
		}
		return RNSC_ACAP_QUEUED;
	}
	if (a->n == a->capq) {
		size_t ncap = a->capq ? a->capq * 2 : 16;
		rnsc_acap_entry *nq = rnsc_calloc(a->ctx, ncap, sizeof(*nq));
		if (!nq)
			return RNSC_ERR_NOMEM;
		if (a->n)
			memcpy(nq, a->q, a->n * sizeof(*nq));
		rnsc_free(a->ctx, a->q);
		a->q = nq;
		a->capq = ncap;
	}
	uint8_t *copy = rnsc_alloc(a->ctx, len ? len : 1);
	if (!copy)
		return RNSC_ERR_NOMEM;
	memcpy(copy, raw, len);
	rnsc_acap_entry *e = &a->q[a->n++];
	memcpy(e->dest, dest, 16);
	e->time = now;
	e->hops = hops;
	e->emitted = emitted;
	e->raw = copy;
	e->len = len;
	if (a->n == 1) /* the first queued entry starts the timer */
		a->timer = a->allowed_at > (double)now ? a->allowed_at : (double)now;
	return RNSC_ACAP_QUEUED;
}

int rnsc_acap_run(rnsc_acap *a, uint64_t now, uint64_t bitrate, uint8_t *buf, size_t cap,
		  size_t *len)
{
	if (a->timer < 0 || (double)now < a->timer)
		return 0;
	a->timer = -1;
	for (size_t i = 0; i < a->n;) {
		if (now > a->q[i].time + RNSC_QUEUED_ANNOUNCE_LIFE_MS) {
			remove_at(a, i);
			a->dropped++;
		} else {
			i++;
		}
	}
	if (a->n == 0)
		return 0;
	if (bitrate == 0) {
		(void)rnsc_acap_clear(a); /* the reference's error path clears the queue */
		return 0;
	}
	size_t sel = 0;
	for (size_t i = 1; i < a->n; i++) {
		const rnsc_acap_entry *e = &a->q[i], *s = &a->q[sel];
		if (e->hops < s->hops || (e->hops == s->hops && e->time < s->time))
			sel = i;
	}
	if (a->q[sel].len > cap)
		return RNSC_ERR_BUFSIZE;
	double w = wait_ms(a, a->q[sel].len, bitrate);
	a->allowed_at = (double)now + w;
	memcpy(buf, a->q[sel].raw, a->q[sel].len);
	*len = a->q[sel].len;
	remove_at(a, sel);
	if (a->n > 0)
		a->timer = (double)now + w;
	return 1;
}

uint64_t rnsc_acap_deadline(const rnsc_acap *a)
{
	if (a->timer < 0)
		return UINT64_MAX;
	uint64_t d = (uint64_t)a->timer;
	return (double)d < a->timer ? d + 1 : d;
}
