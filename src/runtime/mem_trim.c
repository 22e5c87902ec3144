/* SPDX-License-Identifier: MIT */
#include "mem_trim.h"

#include <stdlib.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "err.h"

struct rnsc_mem_trim {
	rnsc_loop *loop;
	rnsc_timer *timer;
	unsigned ticks;
	uint64_t trims;
};

static void on_tick(rnsc_loop *loop, rnsc_timer *t, void *ud)
{
	(void)loop, (void)t;
	rnsc_mem_trim *m = ud;
#if defined(__GLIBC__)
	struct mallinfo2 mi = mallinfo2();
	int minute = ++m->ticks % (60 / RNSC_MEM_TRIM_PERIOD_S) == 0;
	if ((mi.fordblks > RNSC_MEM_TRIM_SLACK || minute) && malloc_trim(0))
		m->trims++;
#else
	(void)m;
#endif
}

int rnsc_mem_trim_start(rnsc_loop *loop, rnsc_mem_trim **out)
{
	if (!loop || !out)
		return RNSC_ERR_INVAL;
	*out = NULL;
	rnsc_mem_trim *m = calloc(1, sizeof(*m));
	if (!m)
		return RNSC_ERR_NOMEM;
	m->loop = loop;
#if defined(__GLIBC__)
	/* a fixed threshold turns off glibc's raising it after each large free */
	(void)mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
	uint64_t period = (uint64_t)RNSC_MEM_TRIM_PERIOD_S * RNSC_NS_PER_S;
	int rc = rnsc_loop_timer_add(loop, period, period, on_tick, m, &m->timer);
	if (rc) {
		free(m);
		return rc;
	}
	*out = m;
	return 0;
}

void rnsc_mem_trim_stop(rnsc_mem_trim *m)
{
	if (!m)
		return;
	rnsc_loop_timer_cancel(m->loop, m->timer);
	free(m);
}

uint64_t rnsc_mem_trim_count(const rnsc_mem_trim *m)
{
	return m ? m->trims : 0;
}
