/* SPDX-License-Identifier: MIT */
/*
 * Tests of src/runtime/loop.c: timers (ordering, thousands of them, cancel and re-arm
 * from callbacks), fd watches (removal of the watch being dispatched and of others
 * with events already fetched, fd reuse), posting from many threads, the pool
 * (completion order, cancellation, teardown races) and sharded loops, with a check
 * that nothing leaks threads or file descriptors.
 */
#include <CUnit/Basic.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cu_run.h"
#include "loop.h"

#define MS RNSC_NS_PER_MS

static int count_dir(const char *path)
{
	DIR *d = opendir(path);
	int n = 0;
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static int open_fds(void)
{
	return count_dir("/proc/self/fd");
}

static int threads_now(void)
{
	return count_dir("/proc/self/task");
}

static void sleep_us(long us)
{
	struct timespec d = {us / 1000000, (us % 1000000) * 1000};
	nanosleep(&d, NULL);
}

/* The thread count once joined threads are gone. pthread_join returns when the
 * kernel clears the thread's tid, a moment before the task leaves
 * /proc/self/task; on a loaded machine that moment can stretch, so wait for it
 * (up to 2 s) instead of sampling once. A thread that never exits still fails. */
static int base_threads; /* the process's tasks before any test starts a thread */

static int threads_after_join(int expect)
{
	int n = threads_now();
	for (int i = 0; i < 2000 && n != expect; i++) {
		sleep_us(1000);
		n = threads_now();
	}
	return n;
}

/* Runs iterations until *flag is set or the time budget (ms) runs out. */
static void run_until(rnsc_loop *loop, const int *flag, int budget_ms)
{
	uint64_t end = rnsc_monotonic_ns() + (uint64_t)budget_ms * MS;
	while (!*flag && rnsc_monotonic_ns() < end)
		CU_ASSERT(rnsc_loop_run_once(loop, 10) >= 0);
}

/* ---- timers ---------------------------------------------------------------------------- */

typedef struct trec {
	int order[64];
	int n;
	uint64_t fired_at[64];
	uint64_t deadline[64];
	rnsc_timer *t[64];
	rnsc_loop *loop;
	int done;
} trec;

static trec T;

static void t_record(rnsc_loop *loop, rnsc_timer *t, void *ud)
{
	int id = (int)(intptr_t)ud;
	T.fired_at[T.n] = rnsc_loop_now(loop);
	T.order[T.n++] = id;
	(void)t;
}

static const int order_delays[] = {30, 10, 20, 10, 0, 20, 10};
static uint64_t order_start;

/* Arms the ordering test's timers from one callback, so all share one cached now:
 * armed outside an iteration each add reads the clock, and a stall of 10 ms between
 * two adds (qemu-user on a loaded machine) reordered their deadlines. */
static void p_arm_order(rnsc_loop *loop, void *ud)
{
	(void)ud;
	order_start = rnsc_loop_now(loop);
	for (int i = 0; i < 7; i++)
		CU_ASSERT_EQUAL(rnsc_loop_timer_add(loop, (uint64_t)order_delays[i] * MS, 0,
						    t_record, (void *)(intptr_t)i, &T.t[i]),
				0);
}

static void test_timer_order(void)
{
	rnsc_loop *loop;
	CU_ASSERT_EQUAL_FATAL(rnsc_loop_new(NULL, &loop), 0);
	memset(&T, 0, sizeof(T));
	/* distinct delays fire by deadline; equal delays fire in arm order */
	const int *delays = order_delays;
	CU_ASSERT_EQUAL(rnsc_loop_post(loop, p_arm_order, NULL), 0);
	/* the post, and maybe the 0 ms timer already (armed by a post, not a timer) */
	CU_ASSERT(rnsc_loop_run_once(loop, 0) >= 1);
	uint64_t start = order_start;
	CU_ASSERT(rnsc_loop_timer_count(loop) + (size_t)T.n == 7);
	uint64_t end = rnsc_monotonic_ns() + 10000 * MS;
	while (T.n < 7 && rnsc_monotonic_ns() < end)
		CU_ASSERT(rnsc_loop_run_once(loop, -1) >= 0);
	int want[] = {4, 1, 3, 6, 2, 5, 0};
	CU_ASSERT_EQUAL_FATAL(T.n, 7);
	for (int i = 0; i < 7; i++)
		CU_ASSERT_EQUAL(T.order[i], want[i]);
	/* never early */
	for (int i = 0; i < 7; i++)
		CU_ASSERT(T.fired_at[i] >= start + (uint64_t)delays[T.order[i]] * MS);
	CU_ASSERT_EQUAL(rnsc_loop_timer_count(loop), 0);
	rnsc_loop_del(loop);
}

/* Thousands of timers with random deadlines, half cancelled before they fire. */
static uint64_t many_last;
static int many_fired, many_bad;

static void t_many(rnsc_loop *loop, rnsc_timer *t, void *ud)
{
	uint64_t dl = rnsc_loop_timer_deadline(t);
	(void)ud;
	if (dl < many_last || rnsc_loop_now(loop) < dl)
		many_bad++;
	many_last = dl;
	many_fired++;
}

static void test_many_timers(void)
{
	enum { N = 10000 };
	rnsc_loop *loop;
	CU_ASSERT_EQUAL_FATAL(rnsc_loop_new(NULL, &loop), 0);
	static rnsc_timer *ts[N];
	uint64_t seed = 12345;
	many_last = 0;
	many_fired = many_bad = 0;
	for (int i = 0; i < N; i++) {
		seed = seed * 6364136223846793005ULL + 1;
		CU_ASSERT_EQUAL(rnsc_loop_timer_add(loop, (seed >> 33) % (40 * MS), 0, t_many, NULL,
						    &ts[i]),
				0);
	}
	int kept = 0;
	for (int i = 0; i < N; i++) {
		if (i % 2)
			rnsc_loop_timer_cancel(loop, ts[i]);
		else
			kept++;
	}
	CU_ASSERT_EQUAL(rnsc_loop_timer_count(loop), (size_t)kept);
	uint64_t end = rnsc_monotonic_ns() + 3000 * MS;
	while (many_fired < kept && rnsc_monotonic_ns() < end)
		CU_ASSERT(rnsc_loop_run_once(loop, -1) >= 0);
	CU_ASSERT_EQUAL(many_fired, kept);
	CU_ASSERT_EQUAL(many_bad, 0); /* by deadline, and never early */
	CU_ASSERT_EQUAL(rnsc_loop_timer_count(loop), 0);
	rnsc_loop_del(loop);
}

/* Exact heap order: deadlines read back from the handles. */
static uint64_t exact_prev;
static int exact_bad, exact_n;

static void t_exact(rnsc_loop *loop, rnsc_timer *t, void *ud)
{
	uint64_t dl = rnsc_loop_timer_deadline(t);
	(void)ud;
	if (dl < exact_prev || rnsc_loop_now(loop) < dl)
		exact_bad++;
	exact_prev = dl;
	exact_n++;
}

static void test_heap_exact(void)
{
	enum { N = 3000 };
	rnsc_loop *loop;
	CU_ASSERT_EQUAL_FATAL(rnsc_loop_new(NULL, &loop), 0);
	static rnsc_timer *ts[N];
	uint64_t seed = 99;
	exact_prev = 0;
	exact_bad = exact_n = 0;
	for (int i = 0; i < N; i++) {
		seed = seed * 6364136223846793005ULL + 1;
		CU_ASSERT_EQUAL(rnsc_loop_timer_add(loop, (seed >> 33) % (30 * MS), 0, t_exact,
						    NULL, &ts[i]),
				0);
	}
	/* re-arm a third of them to new random deadlines, cancel another third */
	int live = N;
	for (int i = 0; i < N; i++) {
		seed = seed * 6364136223846793005ULL + 1;
		if (i % 3 == 0) {
			CU_ASSERT_EQUAL(
				rnsc_loop_timer_rearm(loop, ts[i], (seed >> 33) % (30 * MS), 0), 0);
		} else if (i % 3 == 1) {
			rnsc_loop_timer_cancel(loop, ts[i]);
			live--;
		}
	}
	uint64_t end = rnsc_monotonic_ns() + 3000 * MS;
	while (exact_n < live && rnsc_monotonic_ns() < end)
		CU_ASSERT(rnsc_loop_run_once(loop, -1) >= 0);
	CU_ASSERT_EQUAL(exact_n, live);
	CU_ASSERT_EQUAL(exact_bad, 0);
	rnsc_loop_del(loop);
}

/* Callbacks cancelling other timers and themselves, re-arming themselves. */
static int fired_a, fired_b, fired_c, fired_p, fired_q;
static rnsc_timer *tb, *tp, *tq;

static void t_b(rnsc_loop *l, rnsc_timer *t, void *ud)
{
	(void)l, (void)t, (void)ud;
	fired_b++;
}

static void t_a(rnsc_loop *l, rnsc_timer *t, void *ud)
{
	(void)t, (void)ud;
	fired_a++;
	rnsc_loop_timer_cancel(l, tb); /* due in this same iteration, after us */
	rnsc_loop_timer_cancel(l, t);  /* ourselves, while running: freed on return */
}

static void t_c(rnsc_loop *l, rnsc_timer *t, void *ud)
{
	(void)ud;
	/* a one-shot that re-arms itself three times */
	if (++fired_c < 4)
		CU_ASSERT_EQUAL(rnsc_loop_timer_rearm(l, t, 1 * MS, 0), 0);
}

static void t_p(rnsc_loop *l, rnsc_timer *t, void *ud)
{
	(void)ud;
	/* periodic; cancels itself on the fifth run */
	if (++fired_p == 5)
		rnsc_loop_timer_cancel(l, t);
}

static void t_q(rnsc_loop *l, rnsc_timer *t, void *ud)
{
	(void)l, (void)t, (void)ud;
	fired_q++;
}

static void t_stop_q(rnsc_loop *l, rnsc_timer *t, void *ud)
{
	(void)ud;
	/* Waits for q's third run rather than a fixed time: a stall of 25 ms (qemu-user
	 * on a loaded machine) used to let both fall due in one iteration, q running once. */
	if (fired_q < 3) {
		CU_ASSERT_EQUAL(rnsc_loop_timer_rearm(l, t, 5 * MS, 0), 0);
		return;
	}
	rnsc_loop_timer_cancel(l, tq); /* a periodic timer cancelled by another timer */
}

static void test_timer_cancel_in_callbacks(void)
{
	rnsc_loop *loop;
	CU_ASSERT_EQUAL_FATAL(rnsc_loop_new(NULL, &loop), 0);
	fired_a = fired_b = fired_c = fired_p = fired_q = 0;
	rnsc_timer *ta, *tc;
	/* a and b due at the same instant; a was armed first so it runs first */
	CU_ASSERT_EQUAL(rnsc_loop_timer_add(loop, 5 * MS, 0, t_a, NULL, &ta), 0);
	CU_ASSERT_EQUAL(rnsc_loop_timer_rearm(loop, ta, 5 * MS, 0), 0);
	CU_ASSERT_EQUAL(rnsc_loop_timer_add(loop, 5 * MS, 0, t_b, NULL, &tb), 0);
	/* force equal deadlines regardless of clock reads between the two adds */
	CU_ASSERT_EQUAL(rnsc_loop_timer_add(loop, 1 * MS, 0, t_c, NULL, &tc), 0);
	CU_ASSERT_EQUAL(rnsc_loop_timer_add(loop, 1 * MS, 2 * MS, t_p, NULL, &tp), 0);
	CU_ASSERT_EQUAL(rnsc_loop_timer_add(loop, 1 * MS, 1 * MS, t_q, NULL, &tq), 0);
	rnsc_timer *ts;
	CU_ASSERT_EQUAL(rnsc_loop_timer_add(loop, 25 * MS, 0, t_stop_q, NULL, &ts), 0);
	uint64_t end = rnsc_monotonic_ns() + 10000 * MS;
	while (rnsc_loop_timer_count(loop) > 0 && rnsc_monotonic_ns() < end)
		CU_ASSERT(rnsc_loop_run_once(loop, -1) >= 0);
	CU_ASSERT_EQUAL(rnsc_loop_timer_count(loop), 0);
	CU_ASSERT_EQUAL(fired_a, 1);
	CU_ASSERT(fired_b <= 1); /* 0 when a ran first in the same iteration */
	CU_ASSERT_EQUAL(fired_c, 4);
	CU_ASSERT_EQUAL(fired_p, 5);
	CU_ASSERT(fired_q >= 3);
	int q = fired_q;
	CU_ASSERT(rnsc_loop_run_once(loop, 5) >= 0);
	CU_ASSERT_EQUAL(fired_q, q);
	rnsc_loop_del(loop);
}

/* a and b are armed from one callback (one cached now, so one deadline, a first);
 * when they fire, a cancels b, which must then never run. */
static rnsc_timer *same_b;
static int same_a_fired, same_b_fired;

static void same_a(rnsc_loop *l, rnsc_timer *t, void *ud)
{
	(void)t, (void)ud;
	same_a_fired++;
	rnsc_loop_timer_cancel(l, same_b);
}

static void same_bf(rnsc_loop *l, rnsc_timer *t, void *ud)
{
	(void)l, (void)t, (void)ud;
	same_b_fired++;
}

static void p_arm_pair(rnsc_loop *l, void *ud)
{
	rnsc_timer *a;
	(void)ud;
	CU_ASSERT_EQUAL(rnsc_loop_timer_add(l, 2 * MS, 0, same_a, NULL, &a), 0);
	CU_ASSERT_EQUAL(rnsc_loop_timer_add(l, 2 * MS, 0, same_bf, NULL, &same_b), 0);
	CU_ASSERT_EQUAL(rnsc_loop_timer_deadline(a), rnsc_loop_timer_deadline(same_b));
}

static void test_cancel_same_iteration(void)
{
	rnsc_loop *loop;
	CU_ASSERT_EQUAL_FATAL(rnsc_loop_new(NULL, &loop), 0);
	same_a_fired = same_b_fired = 0;
	CU_ASSERT_EQUAL(rnsc_loop_post(loop, p_arm_pair, NULL), 0);
	CU_ASSERT(rnsc_loop_run_once(loop, 0) >= 1);
	uint64_t end = rnsc_monotonic_ns() + 1000 * MS;
	while (rnsc_loop_timer_count(loop) > 0 && rnsc_monotonic_ns() < end)
		CU_ASSERT(rnsc_loop_run_once(loop, -1) >= 0);
	CU_ASSERT_EQUAL(same_a_fired, 1);
	CU_ASSERT_EQUAL(same_b_fired, 0);
	rnsc_loop_del(loop);
}

/* A timer re-arming itself with delay 0 must not starve fd events. */
static int spin_runs, pipe_seen;

static void t_spin(rnsc_loop *l, rnsc_timer *t, void *ud)
{
	(void)ud;
	spin_runs++;
	if (!pipe_seen)
		CU_ASSERT_EQUAL(rnsc_loop_timer_rearm(l, t, 0, 0), 0);
}

static void w_pipe_seen(rnsc_loop *l, rnsc_watch *w, int fd, unsigned ev, void *ud)
{
	char buf[16];
	(void)l, (void)w, (void)ud;
	CU_ASSERT(ev & RNSC_EV_READ);
	CU_ASSERT(read(fd, buf, sizeof(buf)) > 0);
	pipe_seen = 1;
}

static void test_zero_delay_fairness(void)
{
	rnsc_loop *loop;
	CU_ASSERT_EQUAL_FATAL(rnsc_loop_new(NULL, &loop), 0);
	int p[2];
	CU_ASSERT_EQUAL_FATAL(pipe(p), 0);
	spin_runs = pipe_seen = 0;
	rnsc_watch *w;
	CU_ASSERT_EQUAL(rnsc_loop_watch_add(loop, p[0], RNSC_EV_READ, w_pipe_seen, NULL, &w), 0);
	CU_ASSERT_EQUAL(rnsc_loop_timer_add(loop, 0, 0, t_spin, NULL, NULL), 0);
	CU_ASSERT(rnsc_loop_run_once(loop, 0) >= 0);
	CU_ASSERT(rnsc_loop_run_once(loop, 0) >= 0);
	CU_ASSERT_EQUAL(write(p[1], "x", 1), 1);
	for (int i = 0; i < 5 && !pipe_seen; i++)
		CU_ASSERT(rnsc_loop_run_once(loop, 0) >= 0);
	CU_ASSERT(pipe_seen);
	CU_ASSERT(spin_runs >= 2 && spin_runs < 10); /* one run per iteration, not a spin */
	rnsc_loop_watch_remove(loop, w);
	close(p[0]);
	close(p[1]);
	rnsc_loop_del(loop);
}

/* Every callback of one iteration sees the same cached now. */
static uint64_t now_a, now_b;

static void t_now_a(rnsc_loop *l, rnsc_timer *t, void *ud)
{
	(void)t, (void)ud;
	now_a = rnsc_loop_now(l);
	sleep_us(3000);
}

static void t_now_b(rnsc_loop *l, rnsc_timer *t, void *ud)
{
	(void)t, (void)ud;
	now_b = rnsc_loop_now(l);
	CU_ASSERT(rnsc_loop_update_now(l) >= now_b + 2 * MS);
}

static void test_cached_now(void)
{
	rnsc_loop *loop;
	CU_ASSERT_EQUAL_FATAL(rnsc_loop_new(NULL, &loop), 0);
	rnsc_timer *a, *b;
	CU_ASSERT_EQUAL(rnsc_loop_timer_add(loop, 0, 0, t_now_a, NULL, &a), 0);
	CU_ASSERT_EQUAL(rnsc_loop_timer_add(loop, 0, 0, t_now_b, NULL, &b), 0);
	CU_ASSERT_EQUAL(rnsc_loop_timer_rearm(loop, b, 0, 0), 0);
	uint64_t end = rnsc_monotonic_ns() + 500 * MS;
	while (rnsc_loop_timer_count(loop) && rnsc_monotonic_ns() < end)
		CU_ASSERT(rnsc_loop_run_once(loop, 10) >= 0);
	CU_ASSERT(now_a != 0);
	CU_ASSERT_EQUAL(now_a, now_b);
	rnsc_loop_del(loop);
}

/* ---- fd watches ------------------------------------------------------------------------ */

typedef struct wctx {
	rnsc_loop *loop;
	rnsc_watch *self, *other;
	int other_fd;
	int calls;
	unsigned last_ev;
	int remove_self, remove_other, reuse;
} wctx;

static wctx W[2];

static void w_cb(rnsc_loop *l, rnsc_watch *w, int fd, unsigned ev, void *ud)
{
	wctx *c = ud;
	char buf[64];
	c->calls++;
	c->last_ev = ev;
	if (ev & RNSC_EV_READ)
		(void)!read(fd, buf, sizeof(buf));
	if (c->remove_other && c->other) {
		rnsc_loop_watch_remove(l, c->other);
		wctx *o = c == &W[0] ? &W[1] : &W[0];
		o->self = NULL;
		c->other = NULL;
		if (c->reuse) {
			/* close the other fd and reuse its number for a new pipe at once: the
			 * events already fetched for the old watch must not reach anyone */
			int fdnum = c->other_fd;
			close(fdnum);
			int q[2];
			CU_ASSERT_EQUAL(pipe(q), 0);
			if (q[0] != fdnum) {
				CU_ASSERT_EQUAL(dup2(q[0], fdnum), fdnum);
				close(q[0]);
			}
			c->other_fd = fdnum;
			close(q[1]);
		}
	}
	if (c->remove_self) {
		rnsc_loop_watch_remove(l, w);
		c->self = NULL;
	}
}

static void test_watch_remove_in_callbacks(void)
{
	int fds0 = open_fds();
	for (int reuse = 0; reuse < 2; reuse++) {
		rnsc_loop *loop;
		CU_ASSERT_EQUAL_FATAL(rnsc_loop_new(NULL, &loop), 0);
		int a[2], b[2];
		CU_ASSERT_EQUAL_FATAL(pipe(a), 0);
		CU_ASSERT_EQUAL_FATAL(pipe(b), 0);
		memset(W, 0, sizeof(W));
		CU_ASSERT_EQUAL(
			rnsc_loop_watch_add(loop, a[0], RNSC_EV_READ, w_cb, &W[0], &W[0].self), 0);
		CU_ASSERT_EQUAL(
			rnsc_loop_watch_add(loop, b[0], RNSC_EV_READ, w_cb, &W[1], &W[1].self), 0);
		W[0].other = W[1].self;
		W[1].other = W[0].self;
		W[0].other_fd = b[0];
		W[1].other_fd = a[0];
		/* both readable: whichever runs first removes the other (and itself) */
		W[0].remove_other = W[1].remove_other = 1;
		W[0].remove_self = W[1].remove_self = 1;
		W[0].reuse = W[1].reuse = reuse;
		CU_ASSERT_EQUAL(write(a[1], "x", 1), 1);
		CU_ASSERT_EQUAL(write(b[1], "y", 1), 1);
		CU_ASSERT(rnsc_loop_run_once(loop, 100) >= 1);
		CU_ASSERT_EQUAL(W[0].calls + W[1].calls, 1);
		CU_ASSERT_EQUAL(rnsc_loop_watch_count(loop), 0);
		CU_ASSERT(rnsc_loop_run_once(loop, 0) >= 0);
		CU_ASSERT_EQUAL(W[0].calls + W[1].calls, 1);
		close(a[0]);
		close(a[1]);
		close(b[0]);
		close(b[1]);
		rnsc_loop_del(loop);
	}
	CU_ASSERT_EQUAL(open_fds(), fds0);
}

static int wr_calls;

static void w_write_once(rnsc_loop *l, rnsc_watch *w, int fd, unsigned ev, void *ud)
{
	(void)fd, (void)ud;
	CU_ASSERT(ev & RNSC_EV_WRITE);
	wr_calls++;
	CU_ASSERT_EQUAL(rnsc_loop_watch_modify(l, w, 0), 0); /* idle, still registered */
}

static int hup_ev;

static void w_hup(rnsc_loop *l, rnsc_watch *w, int fd, unsigned ev, void *ud)
{
	(void)fd, (void)ud;
	hup_ev = (int)ev;
	rnsc_loop_watch_remove(l, w);
}

static void test_watch_modify_and_errors(void)
{
	int fds0 = open_fds();
	rnsc_loop *loop;
	CU_ASSERT_EQUAL_FATAL(rnsc_loop_new(NULL, &loop), 0);
	int p[2];
	CU_ASSERT_EQUAL_FATAL(pipe(p), 0);
	rnsc_watch *w;
	wr_calls = 0;
	CU_ASSERT_EQUAL(rnsc_loop_watch_add(loop, p[1], RNSC_EV_WRITE, w_write_once, NULL, &w), 0);
	CU_ASSERT_EQUAL(rnsc_loop_watch_fd(w), p[1]);
	CU_ASSERT_EQUAL(rnsc_loop_watch_events(w), RNSC_EV_WRITE);
	for (int i = 0; i < 3; i++)
		CU_ASSERT(rnsc_loop_run_once(loop, 0) >= 0);
	CU_ASSERT_EQUAL(wr_calls, 1);
	CU_ASSERT_EQUAL(rnsc_loop_watch_events(w), 0);
	CU_ASSERT_EQUAL(rnsc_loop_watch_modify(loop, w, RNSC_EV_WRITE), 0);
	CU_ASSERT(rnsc_loop_run_once(loop, 0) >= 0);
	CU_ASSERT_EQUAL(wr_calls, 2);
	/* argument and state errors */
	CU_ASSERT_EQUAL(rnsc_loop_watch_add(loop, p[1], RNSC_EV_READ, w_write_once, NULL, NULL),
			RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(rnsc_loop_watch_add(loop, -1, RNSC_EV_READ, w_write_once, NULL, NULL),
			RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_loop_watch_add(loop, p[0], 8, w_write_once, NULL, NULL),
			RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_loop_watch_add(loop, p[0], RNSC_EV_READ, NULL, NULL, NULL),
			RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_loop_watch_add(loop, 9999, RNSC_EV_READ, w_write_once, NULL, NULL),
			RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_loop_watch_modify(loop, w, 16), RNSC_ERR_INVAL);
	int reg = open("/proc/self/status", O_RDONLY | O_CLOEXEC); /* epoll refuses */
	CU_ASSERT(reg >= 0);
	CU_ASSERT_EQUAL(rnsc_loop_watch_add(loop, reg, RNSC_EV_READ, w_write_once, NULL, NULL),
			RNSC_ERR_SYS);
	close(reg);
	rnsc_loop_watch_remove(loop, w);
	rnsc_loop_watch_remove(loop, NULL);
	/* the writer closing is reported on the reader, even with no interest set */
	rnsc_watch *r;
	hup_ev = 0;
	CU_ASSERT_EQUAL(rnsc_loop_watch_add(loop, p[0], 0, w_hup, NULL, &r), 0);
	close(p[1]);
	CU_ASSERT(rnsc_loop_run_once(loop, 100) >= 1);
	CU_ASSERT(hup_ev & RNSC_EV_ERROR);
	CU_ASSERT_EQUAL(rnsc_loop_watch_count(loop), 0);
	close(p[0]);
	/* watches still registered at delete time are freed; their fds stay open */
	int q[2];
	CU_ASSERT_EQUAL_FATAL(pipe(q), 0);
	CU_ASSERT_EQUAL(rnsc_loop_watch_add(loop, q[0], RNSC_EV_READ, w_hup, NULL, NULL), 0);
	rnsc_loop_del(loop);
	CU_ASSERT(fcntl(q[0], F_GETFD) >= 0); /* still open */
	close(q[0]);
	close(q[1]);
	CU_ASSERT_EQUAL(open_fds(), fds0);
}

/* ---- run, stop, post --------------------------------------------------------------------- */

static void p_nested(rnsc_loop *l, void *ud)
{
	(void)ud;
	CU_ASSERT_EQUAL(rnsc_loop_run_once(l, 0), RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(rnsc_loop_run(l), RNSC_ERR_STATE);
	rnsc_loop_stop(l);
}

static void *stopper(void *arg)
{
	sleep_us(20000);
	rnsc_loop_stop(arg);
	return NULL;
}

static void test_run_stop(void)
{
	rnsc_loop *loop;
	CU_ASSERT_EQUAL_FATAL(rnsc_loop_new(NULL, &loop), 0);
	/* stop from inside a callback */
	CU_ASSERT_EQUAL(rnsc_loop_post(loop, p_nested, NULL), 0);
	CU_ASSERT_EQUAL(rnsc_loop_run(loop), 0);
	CU_ASSERT(!rnsc_loop_stopping(loop));
	/* stop from another thread while blocked in epoll_wait */
	pthread_t th;
	uint64_t t0 = rnsc_monotonic_ns();
	CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, stopper, loop), 0);
	CU_ASSERT_EQUAL(rnsc_loop_run(loop), 0);
	CU_ASSERT(rnsc_monotonic_ns() - t0 >= 15 * MS);
	pthread_join(th, NULL);
	/* a stop requested before run() ends the next run after one iteration */
	rnsc_loop_stop(loop);
	CU_ASSERT(rnsc_loop_stopping(loop));
	CU_ASSERT_EQUAL(rnsc_loop_run_once(loop, 0), 0); /* does not consume it */
	CU_ASSERT_EQUAL(rnsc_loop_run(loop), 0);
	/* wake interrupts a blocking run_once without work */
	rnsc_loop_wake(loop);
	CU_ASSERT_EQUAL(rnsc_loop_run_once(loop, 5000), 0);
	CU_ASSERT_EQUAL(rnsc_loop_post(loop, NULL, NULL), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_loop_post(NULL, p_nested, NULL), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_loop_new(NULL, NULL), RNSC_ERR_INVAL);
	rnsc_loop_del(loop);
	rnsc_loop_del(NULL);
}

enum { POSTERS = 8, PER_POSTER = 20000 };
_Static_assert(PER_POSTER < (1 << 24) && POSTERS < 128, "id and seq share a 32-bit uintptr_t");

typedef struct poster {
	rnsc_loop *loop;
	int id;
	pthread_t th;
} poster;

static int post_next[POSTERS];
static int post_total, post_bad;
static pthread_t loop_thread;

static void p_count(rnsc_loop *l, void *ud)
{
	uintptr_t v = (uintptr_t)ud;
	/* id in the top byte: uintptr_t is 32 bits on armhf */
	int id = (int)(v >> 24), seq = (int)(v & 0xffffffu);
	(void)l;
	if (!pthread_equal(pthread_self(), loop_thread) || seq != post_next[id])
		post_bad++;
	post_next[id] = seq + 1;
	if (++post_total == POSTERS * PER_POSTER)
		rnsc_loop_stop(l);
}

static void *post_main(void *arg)
{
	poster *p = arg;
	for (int i = 0; i < PER_POSTER; i++) {
		uintptr_t v = ((uintptr_t)p->id << 24) | (uintptr_t)i;
		while (rnsc_loop_post(p->loop, p_count, (void *)v) != 0)
			sleep_us(100);
		if (i % 1000 == 0)
			sched_yield();
	}
	return NULL;
}

static void test_post_many_threads(void)
{
	int fds0 = open_fds(), th0 = threads_after_join(base_threads);
	rnsc_loop *loop;
	CU_ASSERT_EQUAL_FATAL(rnsc_loop_new(NULL, &loop), 0);
	poster ps[POSTERS];
	memset(post_next, 0, sizeof(post_next));
	post_total = post_bad = 0;
	loop_thread = pthread_self();
	for (int i = 0; i < POSTERS; i++) {
		ps[i].loop = loop;
		ps[i].id = i;
		CU_ASSERT_EQUAL_FATAL(pthread_create(&ps[i].th, NULL, post_main, &ps[i]), 0);
	}
	CU_ASSERT_EQUAL(rnsc_loop_run(loop), 0);
	for (int i = 0; i < POSTERS; i++)
		pthread_join(ps[i].th, NULL);
	CU_ASSERT_EQUAL(post_total, POSTERS * PER_POSTER);
	CU_ASSERT_EQUAL(post_bad, 0); /* each thread's posts ran in its order, on the loop */
	rnsc_loop_del(loop);
	CU_ASSERT_EQUAL(open_fds(), fds0);
	CU_ASSERT_EQUAL(threads_after_join(th0), th0);
}

/* Posts still queued when the loop is deleted run then; new posts are refused. */
static int del_runs, del_refused;

static void p_at_del(rnsc_loop *l, void *ud)
{
	(void)ud;
	del_runs++;
	if (rnsc_loop_post(l, p_at_del, NULL) == RNSC_ERR_STATE)
		del_refused++;
}

static void test_del_runs_posts(void)
{
	rnsc_loop *loop;
	CU_ASSERT_EQUAL_FATAL(rnsc_loop_new(NULL, &loop), 0);
	del_runs = del_refused = 0;
	for (int i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(rnsc_loop_post(loop, p_at_del, NULL), 0);
	rnsc_timer *t;
	CU_ASSERT_EQUAL(rnsc_loop_timer_add(loop, 1000 * MS, 0, t_q, NULL, &t), 0);
	rnsc_loop_del(loop);
	CU_ASSERT_EQUAL(del_runs, 3);
	CU_ASSERT_EQUAL(del_refused, 3);
}

static void test_alloc_failure(void)
{
	rnsc_ctx *ctx;
	CU_ASSERT_EQUAL_FATAL(rnsc_ctx_new(&ctx), 0);
	rnsc_loop *loop = NULL;
	rnsc_ctx_fail_alloc_after(ctx, 1);
	CU_ASSERT_EQUAL(rnsc_loop_new(ctx, &loop), RNSC_ERR_NOMEM);
	CU_ASSERT_PTR_NULL(loop);
	rnsc_ctx_fail_alloc_after(ctx, 0);
	CU_ASSERT_EQUAL_FATAL(rnsc_loop_new(ctx, &loop), 0);
	int p[2];
	CU_ASSERT_EQUAL_FATAL(pipe(p), 0);
	rnsc_ctx_fail_alloc_after(ctx, 1);
	CU_ASSERT_EQUAL(rnsc_loop_watch_add(loop, p[0], RNSC_EV_READ, w_hup, NULL, NULL),
			RNSC_ERR_NOMEM);
	rnsc_ctx_fail_alloc_after(ctx, 1);
	CU_ASSERT_EQUAL(rnsc_loop_timer_add(loop, 0, 0, t_q, NULL, NULL), RNSC_ERR_NOMEM);
	rnsc_ctx_fail_alloc_after(ctx, 2); /* the timer, then the heap array */
	CU_ASSERT_EQUAL(rnsc_loop_timer_add(loop, 0, 0, t_q, NULL, NULL), RNSC_ERR_NOMEM);
	rnsc_ctx_fail_alloc_after(ctx, 0);
	CU_ASSERT_EQUAL(rnsc_loop_timer_count(loop), 0);
	CU_ASSERT_EQUAL(rnsc_loop_watch_count(loop), 0);
	rnsc_loop_del(loop);
	close(p[0]);
	close(p[1]);
	rnsc_ctx_del(ctx);
}

/* ---- pool ---------------------------------------------------------------------------- */

enum { JOBS = 400 };

typedef struct job {
	int idx;
	int sleep_us;
	pthread_t ran_on;
} job;

static int delivered[JOBS];
static int deliver_order[JOBS];
static int n_delivered, deliver_bad, done_flag;

static atomic_int works_finished;

static int work(void *ud)
{
	job *j = ud;
	if (j->sleep_us)
		sleep_us(j->sleep_us);
	j->ran_on = pthread_self();
	atomic_fetch_add(&works_finished, 1);
	return j->idx * 2;
}

static void done(rnsc_loop *l, void *ud, int result)
{
	job *j = ud;
	(void)l;
	if (!pthread_equal(pthread_self(), loop_thread))
		deliver_bad++; /* completions run on the loop thread */
	if (result == RNSC_ERR_STATE) {
		delivered[j->idx] = -1;
	} else {
		if (result != j->idx * 2 || pthread_equal(j->ran_on, loop_thread))
			deliver_bad++; /* work ran on a worker */
		delivered[j->idx]++;
	}
	deliver_order[n_delivered++] = j->idx;
	if (n_delivered == JOBS)
		done_flag = 1;
}

static void run_pool(unsigned flags, int reverse)
{
	int fds0 = open_fds(), th0 = threads_after_join(base_threads);
	rnsc_loop *loop;
	CU_ASSERT_EQUAL_FATAL(rnsc_loop_new(NULL, &loop), 0);
	rnsc_pool *pool;
	CU_ASSERT_EQUAL_FATAL(rnsc_pool_new(loop, 4, flags, &pool), 0);
	CU_ASSERT_EQUAL(rnsc_pool_threads(pool), 4);
	CU_ASSERT_EQUAL(threads_now(), th0 + 4);
	static job jobs[JOBS];
	memset(delivered, 0, sizeof(delivered));
	n_delivered = deliver_bad = done_flag = 0;
	loop_thread = pthread_self();
	for (int i = 0; i < JOBS; i++) {
		jobs[i].idx = i;
		/* early jobs slowest, so workers finish them last */
		jobs[i].sleep_us = reverse ? (JOBS - i) * 5 : (i * 7919) % 300;
		CU_ASSERT_EQUAL(rnsc_pool_submit(pool, work, done, &jobs[i]), 0);
	}
	CU_ASSERT_EQUAL(rnsc_pool_pending(pool), JOBS);
	run_until(loop, &done_flag, 10000);
	CU_ASSERT_EQUAL(n_delivered, JOBS);
	CU_ASSERT_EQUAL(deliver_bad, 0);
	CU_ASSERT_EQUAL(rnsc_pool_pending(pool), 0);
	int inorder = 1, once = 1;
	for (int i = 0; i < JOBS; i++) {
		once &= delivered[i] == 1;
		inorder &= deliver_order[i] == i;
	}
	CU_ASSERT(once);
	if (flags & RNSC_POOL_ORDERED) {
		CU_ASSERT(inorder);
	} else if (reverse) {
		CU_ASSERT(!inorder); /* unordered really delivers in completion order */
	}
	rnsc_pool_del(pool);
	rnsc_loop_del(loop);
	CU_ASSERT_EQUAL(threads_after_join(th0), th0);
	CU_ASSERT_EQUAL(open_fds(), fds0);
}

static void test_pool_unordered(void)
{
	run_pool(0, 0);
	run_pool(0, 1);
}

static void test_pool_ordered(void)
{
	run_pool(RNSC_POOL_ORDERED, 0);
	run_pool(RNSC_POOL_ORDERED, 1);
}

static atomic_int gate_open;
static atomic_int gate_entered; /* jobs that reached gated_work */

static int gated_work(void *ud)
{
	job *j = ud;
	atomic_fetch_add(&gate_entered, 1);
	while (!atomic_load(&gate_open))
		sleep_us(200);
	j->ran_on = pthread_self();
	return j->idx * 2;
}

/* rnsc_pool_del with jobs running and queued: running ones finish and deliver their
 * result, queued ones are cancelled with RNSC_ERR_STATE, all right inside del. */
static void test_pool_del_cancels(void)
{
	for (int ordered = 0; ordered < 2; ordered++) {
		rnsc_loop *loop;
		CU_ASSERT_EQUAL_FATAL(rnsc_loop_new(NULL, &loop), 0);
		rnsc_pool *pool;
		CU_ASSERT_EQUAL_FATAL(
			rnsc_pool_new(loop, 1, ordered ? RNSC_POOL_ORDERED : 0, &pool), 0);
		static job jobs[10];
		memset(delivered, 0, sizeof(delivered));
		n_delivered = deliver_bad = 0;
		loop_thread = pthread_self();
		atomic_store(&gate_open, 0);
		atomic_store(&gate_entered, 0);
		for (int i = 0; i < 10; i++) {
			jobs[i].idx = i;
			CU_ASSERT_EQUAL(rnsc_pool_submit(pool, gated_work, done, &jobs[i]), 0);
		}
		/* the single worker is then stuck in job 0 (waited for, not slept for: a
		 * thread's start can take longer than any fixed sleep under qemu-user) */
		for (int i = 0; i < 20000 && !atomic_load(&gate_entered); i++)
			sleep_us(500);
		CU_ASSERT_EQUAL(atomic_load(&gate_entered), 1);
		atomic_store(&gate_open, 1);
		rnsc_pool_del(pool);
		CU_ASSERT_EQUAL(n_delivered, 10);
		CU_ASSERT_EQUAL(delivered[0], 1); /* it was running: finished normally */
		int cancelled = 0;
		for (int i = 1; i < 10; i++)
			cancelled += delivered[i] == -1;
		CU_ASSERT(cancelled >= 8);
		if (ordered)
			for (int i = 0; i < 10; i++)
				CU_ASSERT_EQUAL(deliver_order[i], i);
		CU_ASSERT_EQUAL(deliver_bad, 0);
		rnsc_loop_del(loop);
	}
}

/* A completion drain is queued on the loop but the loop has not run when the pool is
 * deleted: the pool must survive until that queued drain runs (or the loop is deleted). */
static void test_pool_del_with_queued_drain(void)
{
	for (int how = 0; how < 2; how++) {
		rnsc_loop *loop;
		CU_ASSERT_EQUAL_FATAL(rnsc_loop_new(NULL, &loop), 0);
		rnsc_pool *pool;
		CU_ASSERT_EQUAL_FATAL(rnsc_pool_new(loop, 2, 0, &pool), 0);
		static job jobs[4];
		memset(delivered, 0, sizeof(delivered));
		n_delivered = deliver_bad = 0;
		loop_thread = pthread_self();
		atomic_store(&works_finished, 0);
		for (int i = 0; i < 4; i++) {
			jobs[i].idx = i;
			jobs[i].sleep_us = 0;
			CU_ASSERT_EQUAL(rnsc_pool_submit(pool, work, done, &jobs[i]), 0);
		}
		/* all finished (waited for, not slept for); a worker past its work posts the
		 * drain before rnsc_pool_del's join returns, so a drain is queued on the loop */
		for (int i = 0; i < 20000 && atomic_load(&works_finished) < 4; i++)
			sleep_us(500);
		CU_ASSERT_EQUAL(atomic_load(&works_finished), 4);
		rnsc_pool_del(pool);
		CU_ASSERT_EQUAL(n_delivered, 4);
		if (how == 0)
			CU_ASSERT(rnsc_loop_run_once(loop, 0) >= 1); /* the late drain frees it */
		rnsc_loop_del(loop); /* (how 1: rnsc_loop_del runs it) */
		CU_ASSERT_EQUAL(n_delivered, 4);
		CU_ASSERT_EQUAL(deliver_bad, 0);
	}
}

static void test_pool_args(void)
{
	rnsc_loop *loop;
	CU_ASSERT_EQUAL_FATAL(rnsc_loop_new(NULL, &loop), 0);
	rnsc_pool *pool;
	CU_ASSERT_EQUAL(rnsc_pool_new(loop, 0, 0, &pool), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_pool_new(loop, 257, 0, &pool), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_pool_new(loop, 1, 0x80, &pool), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_pool_new(NULL, 1, 0, &pool), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL_FATAL(rnsc_pool_new(loop, 1, 0, &pool), 0);
	CU_ASSERT_EQUAL(rnsc_pool_submit(pool, NULL, done, NULL), RNSC_ERR_INVAL);
	static job j = {.idx = 1};
	n_delivered = deliver_bad = 0;
	memset(delivered, 0, sizeof(delivered));
	loop_thread = pthread_self();
	CU_ASSERT_EQUAL(rnsc_pool_submit(pool, work, NULL, &j), 0); /* no completion wanted */
	int flag = 0;
	uint64_t end = rnsc_monotonic_ns() + 2000 * MS;
	while (rnsc_pool_pending(pool) && rnsc_monotonic_ns() < end)
		CU_ASSERT(rnsc_loop_run_once(loop, 10) >= 0);
	(void)flag;
	CU_ASSERT_EQUAL(rnsc_pool_pending(pool), 0);
	rnsc_pool_del(pool);
	rnsc_pool_del(NULL);
	rnsc_loop_del(loop);
	enum rnsc_io_model m;
	CU_ASSERT_EQUAL(rnsc_io_model_from_name("Pool", &m), 0);
	CU_ASSERT_EQUAL(m, RNSC_IO_POOL);
	CU_ASSERT_EQUAL(rnsc_io_model_from_name("sharded", &m), 0);
	CU_ASSERT_EQUAL(m, RNSC_IO_SHARDED);
	CU_ASSERT_EQUAL(rnsc_io_model_from_name("SINGLE", &m), 0);
	CU_ASSERT_EQUAL(m, RNSC_IO_SINGLE);
	CU_ASSERT_EQUAL(rnsc_io_model_from_name("threads", &m), RNSC_ERR_INVAL);
	CU_ASSERT_STRING_EQUAL(rnsc_io_model_name(RNSC_IO_SHARDED), "sharded");
}

/* Error and edge paths: partial construction failures, a submit refused while the
 * pool is being deleted, removing a watch that is not the newest one. */
static rnsc_pool *closing_pool;
static int refused_submits;

static void done_resubmit(rnsc_loop *l, void *ud, int result)
{
	(void)l, (void)result;
	if (rnsc_pool_submit(closing_pool, work, NULL, ud) == RNSC_ERR_STATE)
		refused_submits++;
}

static void w_noop(rnsc_loop *l, rnsc_watch *w, int fd, unsigned ev, void *ud)
{
	(void)l, (void)w, (void)fd, (void)ev, (void)ud;
}

static void test_edges(void)
{
	int fds0 = open_fds();
	rnsc_ctx *ctx;
	CU_ASSERT_EQUAL_FATAL(rnsc_ctx_new(&ctx), 0);
	/* sharded construction failing at each allocation cleans up what it made */
	for (unsigned long k = 1; k < 12; k++) {
		rnsc_shards *g = NULL;
		rnsc_ctx_fail_alloc_after(ctx, k);
		int rc = rnsc_shards_new(ctx, 3, &g);
		CU_ASSERT(rc == 0 || rc == RNSC_ERR_NOMEM);
		rnsc_ctx_fail_alloc_after(ctx, 0);
		rnsc_shards_del(g);
	}
	CU_ASSERT_EQUAL(open_fds(), fds0);
	rnsc_ctx_del(ctx);

	rnsc_loop *loop;
	CU_ASSERT_EQUAL_FATAL(rnsc_loop_new(NULL, &loop), 0);
	/* pool: completions that try to submit while the pool is going away */
	CU_ASSERT_EQUAL_FATAL(rnsc_pool_new(loop, 1, 0, &closing_pool), 0);
	static job jobs[5];
	refused_submits = 0;
	atomic_store(&gate_open, 0);
	atomic_store(&gate_entered, 0);
	for (int i = 0; i < 5; i++) {
		jobs[i].idx = i;
		CU_ASSERT_EQUAL(rnsc_pool_submit(closing_pool, gated_work, done_resubmit, &jobs[i]),
				0);
	}
	/* Wait until the worker runs job 0: it then finishes while rnsc_pool_del joins and
	 * queues the pool's drain on the loop, so del must defer the free to that drain.
	 * Without this wait the worker may or may not have started (thread start-up is slow
	 * under qemu-user), and the drain left on the loop made the run_once(loop, 5) below
	 * count one callback in some runs. */
	for (int i = 0; i < 20000 && !atomic_load(&gate_entered); i++)
		sleep_us(500);
	CU_ASSERT_EQUAL_FATAL(atomic_load(&gate_entered), 1);
	atomic_store(&gate_open, 1);
	rnsc_pool_del(closing_pool);
	CU_ASSERT_EQUAL(refused_submits, 5);
	/* the deferred drain is the one posted callback left; it frees the pool */
	CU_ASSERT_EQUAL(rnsc_loop_run_once(loop, 0), 1);
	CU_ASSERT_EQUAL(rnsc_loop_run_once(loop, 0), 0);
	/* remove the older of two watches (not the list head) */
	int p[2], q[2];
	CU_ASSERT_EQUAL_FATAL(pipe(p), 0);
	CU_ASSERT_EQUAL_FATAL(pipe(q), 0);
	rnsc_watch *w1, *w2;
	CU_ASSERT_EQUAL(rnsc_loop_watch_add(loop, p[0], RNSC_EV_READ, w_noop, NULL, &w1), 0);
	CU_ASSERT_EQUAL(rnsc_loop_watch_add(loop, q[0], RNSC_EV_READ, w_noop, NULL, &w2), 0);
	rnsc_loop_watch_remove(loop, w1);
	CU_ASSERT_EQUAL(rnsc_loop_watch_count(loop), 1);
	rnsc_loop_watch_remove(loop, w2);
	/* a short run_once timeout wins over a far timer */
	rnsc_timer *t;
	CU_ASSERT_EQUAL(rnsc_loop_timer_add(loop, 5000 * MS, 0, t_q, NULL, &t), 0);
	uint64_t t0 = rnsc_monotonic_ns();
	CU_ASSERT_EQUAL(rnsc_loop_run_once(loop, 5), 0);
	CU_ASSERT(rnsc_monotonic_ns() - t0 < 4000 * MS); /* well short of the 5 s timer */
	rnsc_loop_timer_cancel(loop, t);
	rnsc_loop_timer_cancel(loop, NULL);
	CU_ASSERT_EQUAL(rnsc_loop_timer_rearm(loop, NULL, 0, 0), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_loop_timer_add(loop, 0, 0, NULL, NULL, NULL), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_loop_run_once(NULL, 0), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_loop_run(NULL), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_shards_start(NULL), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_shards_stop(NULL), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_shards_new(NULL, 1, NULL), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_pool_new(loop, 1, 0, NULL), RNSC_ERR_INVAL);
	CU_ASSERT_STRING_EQUAL(rnsc_io_model_name(RNSC_IO_SINGLE), "single");
	CU_ASSERT_STRING_EQUAL(rnsc_io_model_name(RNSC_IO_POOL), "pool");
	CU_ASSERT_STRING_EQUAL(rnsc_io_model_name((enum rnsc_io_model)9), "unknown");
	CU_ASSERT_EQUAL(rnsc_io_model_from_name(NULL, NULL), RNSC_ERR_INVAL);
	rnsc_loop_del(loop);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
	CU_ASSERT_EQUAL(open_fds(), fds0);
}

/* ---- sharded --------------------------------------------------------------------------- */

enum { SHARDS = 4 };
static pthread_t shard_thread[SHARDS];
static atomic_int shard_hits[SHARDS], shard_timer_hits[SHARDS];

static void p_shard(rnsc_loop *l, void *ud)
{
	int i = (int)(intptr_t)ud;
	(void)l;
	shard_thread[i] = pthread_self();
	atomic_fetch_add(&shard_hits[i], 1);
}

static void t_shard(rnsc_loop *l, rnsc_timer *t, void *ud)
{
	int i = (int)(intptr_t)ud;
	(void)l, (void)t;
	atomic_fetch_add(&shard_timer_hits[i], 1);
}

static void test_sharded(void)
{
	int fds0 = open_fds(), th0 = threads_after_join(base_threads);
	rnsc_shards *g;
	CU_ASSERT_EQUAL(rnsc_shards_new(NULL, 0, &g), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL_FATAL(rnsc_shards_new(NULL, SHARDS, &g), 0);
	CU_ASSERT_EQUAL(rnsc_shards_count(g), SHARDS);
	CU_ASSERT_PTR_NULL(rnsc_shards_loop(g, SHARDS));
	CU_ASSERT_EQUAL(rnsc_shards_stop(g), RNSC_ERR_STATE);
	/* set-up before start happens directly on each loop */
	for (int i = 0; i < SHARDS; i++) {
		atomic_store(&shard_hits[i], 0);
		atomic_store(&shard_timer_hits[i], 0);
		CU_ASSERT_EQUAL(rnsc_loop_timer_add(rnsc_shards_loop(g, (unsigned)i), 1 * MS,
						    2 * MS, t_shard, (void *)(intptr_t)i, NULL),
				0);
	}
	for (int round = 0; round < 2; round++) {
		CU_ASSERT_EQUAL_FATAL(rnsc_shards_start(g), 0);
		CU_ASSERT(rnsc_shards_running(g));
		CU_ASSERT_EQUAL(rnsc_shards_start(g), RNSC_ERR_STATE);
		CU_ASSERT_EQUAL(threads_now(), th0 + SHARDS);
		for (int k = 0; k < 100; k++)
			for (int i = 0; i < SHARDS; i++)
				CU_ASSERT_EQUAL(rnsc_shards_post(g, (unsigned)i, p_shard,
								 (void *)(intptr_t)i),
						0);
		CU_ASSERT_EQUAL(rnsc_shards_post(g, SHARDS, p_shard, NULL), RNSC_ERR_INVAL);
		uint64_t end = rnsc_monotonic_ns() + 10000 * MS;
		int all;
		do {
			all = 1;
			for (int i = 0; i < SHARDS; i++)
				all &= atomic_load(&shard_hits[i]) == 100 * (round + 1) &&
				       atomic_load(&shard_timer_hits[i]) >= 3 * (round + 1);
			if (!all)
				sleep_us(1000);
		} while (!all && rnsc_monotonic_ns() < end);
		CU_ASSERT(all);
		CU_ASSERT_EQUAL(rnsc_shards_stop(g), 0);
		CU_ASSERT(!rnsc_shards_running(g));
		CU_ASSERT_EQUAL(threads_after_join(th0), th0);
		/* each loop ran on its own thread, none on ours */
		for (int i = 0; i < SHARDS; i++) {
			CU_ASSERT(!pthread_equal(shard_thread[i], pthread_self()));
			for (int j = 0; j < i; j++)
				CU_ASSERT(!pthread_equal(shard_thread[i], shard_thread[j]));
		}
		/* stopped: the caller owns the loops again and may touch them */
		int before = atomic_load(&shard_timer_hits[0]);
		sleep_us(10000);
		CU_ASSERT_EQUAL(atomic_load(&shard_timer_hits[0]), before);
		CU_ASSERT(rnsc_loop_run_once(rnsc_shards_loop(g, 0), 0) >= 0);
	}
	/* assignment helpers */
	unsigned seen = 0;
	for (uint64_t k = 0; k < 64; k++) {
		unsigned a = rnsc_shards_assign(g, k);
		CU_ASSERT(a < SHARDS);
		CU_ASSERT_EQUAL(a, rnsc_shards_assign(g, k));
		seen |= 1u << a;
	}
	CU_ASSERT_EQUAL(seen, (1u << SHARDS) - 1);
	unsigned rr = 0;
	for (int i = 0; i < SHARDS; i++)
		rr |= 1u << rnsc_shards_next(g);
	CU_ASSERT_EQUAL(rr, (1u << SHARDS) - 1);
	/* deleting a running group stops it first */
	CU_ASSERT_EQUAL(rnsc_shards_start(g), 0);
	rnsc_shards_del(g);
	rnsc_shards_del(NULL);
	CU_ASSERT_EQUAL(threads_after_join(th0), th0);
	CU_ASSERT_EQUAL(open_fds(), fds0);
}

int main(void)
{
	/* qemu-user counts its own tasks too; they are part of this baseline */
	base_threads = threads_now();
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("loop", NULL, NULL);
	CU_add_test(s, "timer ordering", test_timer_order);
	CU_add_test(s, "thousands of timers", test_many_timers);
	CU_add_test(s, "heap order with re-arm and cancel", test_heap_exact);
	CU_add_test(s, "cancel and re-arm inside callbacks", test_timer_cancel_in_callbacks);
	CU_add_test(s, "cancel a timer due in the same iteration", test_cancel_same_iteration);
	CU_add_test(s, "zero-delay timer does not starve fds", test_zero_delay_fairness);
	CU_add_test(s, "cached now", test_cached_now);
	CU_add_test(s, "remove watches inside callbacks, fd reuse", test_watch_remove_in_callbacks);
	CU_add_test(s, "watch modify and errors", test_watch_modify_and_errors);
	CU_add_test(s, "run and stop", test_run_stop);
	CU_add_test(s, "post from many threads", test_post_many_threads);
	CU_add_test(s, "delete runs queued posts", test_del_runs_posts);
	CU_add_test(s, "allocation failures", test_alloc_failure);
	CU_add_test(s, "pool, unordered completions", test_pool_unordered);
	CU_add_test(s, "pool, ordered completions", test_pool_ordered);
	CU_add_test(s, "pool delete cancels queued jobs", test_pool_del_cancels);
	CU_add_test(s, "pool delete with a queued drain", test_pool_del_with_queued_drain);
	CU_add_test(s, "pool arguments and IO model names", test_pool_args);
	CU_add_test(s, "sharded start, stop, restart", test_sharded);
	CU_add_test(s, "edge and error paths", test_edges);
	return rnsc_cu_run();
}
