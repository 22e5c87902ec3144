/* SPDX-License-Identifier: MIT */
/* Announce rate limiting of one destination (see announce_rate.h). */
#include <string.h>

#include "announce_rate.h"

void rnsc_arate_init(rnsc_arate *e, uint64_t now)
{
	memset(e, 0, sizeof(*e));
	e->last = now;
	e->timestamps[0] = now;
	e->n_timestamps = 1;
}

int rnsc_arate_check(rnsc_arate *e, uint64_t now, uint64_t target_s, uint64_t grace,
		     uint64_t penalty_s)
{
	if (e->n_timestamps == RNSC_MAX_RATE_TIMESTAMPS) /* keep the newest ones */
		memmove(e->timestamps, e->timestamps + 1,
			(RNSC_MAX_RATE_TIMESTAMPS - 1) * sizeof(e->timestamps[0]));
	else
		e->n_timestamps++;
	e->timestamps[e->n_timestamps - 1] = now;
	if (!(now > e->blocked_until))
		return 1;
	uint64_t since = now > e->last ? now - e->last : 0;
	if (since < target_s * 1000)
		e->rate_violations++;
	else if (e->rate_violations > 0)
		e->rate_violations--;
	if (e->rate_violations > grace) {
		e->blocked_until = e->last + (target_s + penalty_s) * 1000;
		return 1;
	}
	e->last = now;
	return 0;
}
