/* SPDX-License-Identifier: MIT */
#include "loop.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define MAX_EVENTS 64

/* A queued cross-thread call. Intrusive so the pool can embed one and post without
 * allocating on a worker thread. */
struct post_node {
	rnsc_post_fn fn;
	void *ud;
	struct post_node *next;
	int heap_owned; /* allocated by rnsc_loop_post (free after running) */
};

struct rnsc_watch {
	rnsc_loop *loop;
	int fd;
	unsigned events;
	int dead;
	rnsc_watch_fn fn;
	void *ud;
	rnsc_watch *prev, *next; /* live watches, or the graveyard (next only) */
};

struct rnsc_timer {
	uint64_t deadline;
	uint64_t period;
	uint64_t seq; /* arm order: ties at one deadline fire FIFO */
	size_t heap_idx;
	rnsc_timer_fn fn;
	void *ud;
	unsigned char running;
	unsigned char cancelled;
};

#define NOT_IN_HEAP SIZE_MAX

struct rnsc_loop {
	rnsc_ctx *ctx;
	int epfd;
	int evfd;
	uint64_t now;
	int in_iteration;    /* a callback of this loop may be on the stack */
	int dispatching_fds; /* the epoll batch holds watch pointers */
	atomic_int stop;

	rnsc_watch *watches;
	size_t n_watches;
	rnsc_watch *grave;

	rnsc_timer **heap;
	size_t heap_len, heap_cap;
	uint64_t timer_seq;

	pthread_mutex_t mu; /* guards the post queue and the flags below */
	struct post_node *post_head, *post_tail;
	int wake_pending;
	int closed;
};

uint64_t rnsc_monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * RNSC_NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* ---- timer heap ------------------------------------------------------------------------ */

static int timer_before(const rnsc_timer *a, const rnsc_timer *b)
{
	if (a->deadline != b->deadline)
		return a->deadline < b->deadline;
	return a->seq < b->seq;
}

static void heap_set(rnsc_loop *loop, size_t i, rnsc_timer *t)
{
	loop->heap[i] = t;
	t->heap_idx = i;
}

static void heap_up(rnsc_loop *loop, size_t i)
{
	rnsc_timer *t = loop->heap[i];
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!timer_before(t, loop->heap[p]))
			break;
		heap_set(loop, i, loop->heap[p]);
		i = p;
	}
	heap_set(loop, i, t);
}

static void heap_down(rnsc_loop *loop, size_t i)
{
	rnsc_timer *t = loop->heap[i];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		const rnsc_timer *best = t;
		if (l < loop->heap_len && timer_before(loop->heap[l], best)) {
			m = l;
			best = loop->heap[l];
		}
		if (r < loop->heap_len && timer_before(loop->heap[r], best))
			m = r;
		if (m == i)
			break;
		heap_set(loop, i, loop->heap[m]);
		i = m;
	}
	heap_set(loop, i, t);
}

static int heap_push(rnsc_loop *loop, rnsc_timer *t)
{
	if (loop->heap_len == loop->heap_cap) {
		size_t ncap = loop->heap_cap ? loop->heap_cap * 2 : 16;
		rnsc_timer **nh = rnsc_alloc(loop->ctx, ncap * sizeof(*nh));
		if (!nh)
			return RNSC_ERR_NOMEM;
		if (loop->heap_len)
			memcpy(nh, loop->heap, loop->heap_len * sizeof(*nh));
		rnsc_free(loop->ctx, loop->heap);
		loop->heap = nh;
		loop->heap_cap = ncap;
	}
	heap_set(loop, loop->heap_len++, t);
	heap_up(loop, t->heap_idx);
	return 0;
}

static void heap_remove(rnsc_loop *loop, rnsc_timer *t)
{
	size_t i = t->heap_idx;
	if (i == NOT_IN_HEAP)
		return;
	t->heap_idx = NOT_IN_HEAP;
	rnsc_timer *last = loop->heap[--loop->heap_len];
	if (i == loop->heap_len)
		return;
	heap_set(loop, i, last);
	if (i > 0 && timer_before(last, loop->heap[(i - 1) / 2]))
		heap_up(loop, i);
	else
		heap_down(loop, i);
}

/* ---- loop lifecycle -------------------------------------------------------------------- */

static void wake_fd(rnsc_loop *loop)
{
	uint64_t one = 1;
	/* EAGAIN means the counter is already non-zero: the loop will wake anyway. */
	ssize_t n;
	do
		n = write(loop->evfd, &one, sizeof(one));
	while (n < 0 && errno == EINTR);
}

int rnsc_loop_new(rnsc_ctx *ctx, rnsc_loop **out)
{
	if (!out)
		return RNSC_ERR_INVAL;
	*out = NULL;
	rnsc_loop *loop = rnsc_calloc(ctx, 1, sizeof(*loop));
	if (!loop)
		return RNSC_ERR_NOMEM;
	loop->ctx = ctx;
	loop->epfd = epoll_create1(EPOLL_CLOEXEC);
	loop->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (loop->epfd < 0 || loop->evfd < 0 || pthread_mutex_init(&loop->mu, NULL) != 0) {
		if (loop->epfd >= 0)
			close(loop->epfd);
		if (loop->evfd >= 0)
			close(loop->evfd);
		rnsc_free(ctx, loop);
		return RNSC_ERR_SYS;
	}
	/* The eventfd is registered with a NULL pointer, which no watch can have. */
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
	if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, loop->evfd, &ev) != 0) {
		close(loop->epfd);
		close(loop->evfd);
		pthread_mutex_destroy(&loop->mu);
		rnsc_free(ctx, loop);
		return RNSC_ERR_SYS;
	}
	atomic_init(&loop->stop, 0);
	loop->now = rnsc_monotonic_ns();
	*out = loop;
	return 0;
}

static struct post_node *take_posts(rnsc_loop *loop)
{
	pthread_mutex_lock(&loop->mu);
	struct post_node *head = loop->post_head;
	loop->post_head = loop->post_tail = NULL;
	loop->wake_pending = 0;
	pthread_mutex_unlock(&loop->mu);
	return head;
}

static int run_posts(rnsc_loop *loop, struct post_node *n)
{
	int count = 0;
	while (n) {
		struct post_node *next = n->next;
		rnsc_post_fn fn = n->fn;
		void *ud = n->ud;
		/* Release the record first: the callback may free the memory an intrusive
		 * node lives in (the pool does exactly that when it is being torn down). */
		if (n->heap_owned)
			free(n);
		fn(loop, ud);
		count++;
		n = next;
	}
	return count;
}

static void free_grave(rnsc_loop *loop)
{
	while (loop->grave) {
		rnsc_watch *w = loop->grave;
		loop->grave = w->next;
		rnsc_free(loop->ctx, w);
	}
}

void rnsc_loop_del(rnsc_loop *loop)
{
	if (!loop)
		return;
	pthread_mutex_lock(&loop->mu);
	loop->closed = 1;
	pthread_mutex_unlock(&loop->mu);
	/* Posted work first, with the loop still whole: its callbacks may free what their
	 * ud owns and may even cancel timers or remove watches. */
	loop->in_iteration = 1;
	struct post_node *p;
	while ((p = take_posts(loop)) != NULL)
		run_posts(loop, p);
	while (loop->watches) {
		rnsc_watch *w = loop->watches;
		loop->watches = w->next;
		rnsc_free(loop->ctx, w);
	}
	free_grave(loop);
	for (size_t i = 0; i < loop->heap_len; i++)
		rnsc_free(loop->ctx, loop->heap[i]);
	rnsc_free(loop->ctx, loop->heap);
	close(loop->epfd);
	close(loop->evfd);
	pthread_mutex_destroy(&loop->mu);
	rnsc_free(loop->ctx, loop);
}

uint64_t rnsc_loop_now(const rnsc_loop *loop)
{
	return loop->now;
}

uint64_t rnsc_loop_update_now(rnsc_loop *loop)
{
	loop->now = rnsc_monotonic_ns();
	return loop->now;
}

size_t rnsc_loop_watch_count(const rnsc_loop *loop)
{
	return loop->n_watches;
}

size_t rnsc_loop_timer_count(const rnsc_loop *loop)
{
	return loop->heap_len;
}

void rnsc_loop_stop(rnsc_loop *loop)
{
	atomic_store(&loop->stop, 1);
	wake_fd(loop);
}

int rnsc_loop_stopping(rnsc_loop *loop)
{
	return atomic_load(&loop->stop);
}

void rnsc_loop_wake(rnsc_loop *loop)
{
	wake_fd(loop);
}

static int post_node(rnsc_loop *loop, struct post_node *n)
{
	n->next = NULL;
	pthread_mutex_lock(&loop->mu);
	if (loop->closed) {
		pthread_mutex_unlock(&loop->mu);
		return RNSC_ERR_STATE;
	}
	if (loop->post_tail)
		loop->post_tail->next = n;
	else
		loop->post_head = n;
	loop->post_tail = n;
	/* Only the first post after a drain writes the eventfd; later ones ride along. */
	int need_wake = !loop->wake_pending;
	loop->wake_pending = 1;
	pthread_mutex_unlock(&loop->mu);
	if (need_wake)
		wake_fd(loop);
	return 0;
}

int rnsc_loop_post(rnsc_loop *loop, rnsc_post_fn fn, void *ud)
{
	if (!loop || !fn)
		return RNSC_ERR_INVAL;
	struct post_node *n = malloc(sizeof(*n));
	if (!n)
		return RNSC_ERR_NOMEM;
	n->fn = fn;
	n->ud = ud;
	n->heap_owned = 1;
	int rc = post_node(loop, n);
	if (rc)
		free(n);
	return rc;
}

/* ---- watches --------------------------------------------------------------------------- */

static uint32_t to_epoll(unsigned events)
{
	uint32_t e = 0;
	if (events & RNSC_EV_READ)
		e |= EPOLLIN | EPOLLRDHUP | EPOLLPRI;
	if (events & RNSC_EV_WRITE)
		e |= EPOLLOUT;
	return e;
}

static unsigned from_epoll(uint32_t e)
{
	unsigned r = 0;
	if (e & (EPOLLIN | EPOLLRDHUP | EPOLLPRI))
		r |= RNSC_EV_READ;
	if (e & EPOLLOUT)
		r |= RNSC_EV_WRITE;
	if (e & (EPOLLERR | EPOLLHUP))
		r |= RNSC_EV_ERROR;
	return r;
}

int rnsc_loop_watch_add(rnsc_loop *loop, int fd, unsigned events, rnsc_watch_fn fn, void *ud,
			rnsc_watch **out)
{
	if (out)
		*out = NULL;
	if (!loop || fd < 0 || !fn || (events & ~(unsigned)(RNSC_EV_READ | RNSC_EV_WRITE)))
		return RNSC_ERR_INVAL;
	rnsc_watch *w = rnsc_calloc(loop->ctx, 1, sizeof(*w));
	if (!w)
		return RNSC_ERR_NOMEM;
	w->loop = loop;
	w->fd = fd;
	w->events = events;
	w->fn = fn;
	w->ud = ud;
	struct epoll_event ev = {.events = to_epoll(events), .data.ptr = w};
	if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		int e = errno;
		rnsc_free(loop->ctx, w);
		if (e == EEXIST)
			return RNSC_ERR_STATE;
		if (e == EBADF)
			return RNSC_ERR_INVAL;
		if (e == ENOMEM)
			return RNSC_ERR_NOMEM;
		return RNSC_ERR_SYS;
	}
	w->next = loop->watches;
	if (loop->watches)
		loop->watches->prev = w;
	loop->watches = w;
	loop->n_watches++;
	if (out)
		*out = w;
	return 0;
}

int rnsc_loop_watch_modify(rnsc_loop *loop, rnsc_watch *w, unsigned events)
{
	if (!loop || !w || w->dead || (events & ~(unsigned)(RNSC_EV_READ | RNSC_EV_WRITE)))
		return RNSC_ERR_INVAL;
	struct epoll_event ev = {.events = to_epoll(events), .data.ptr = w};
	if (epoll_ctl(loop->epfd, EPOLL_CTL_MOD, w->fd, &ev) != 0)
		return errno == EBADF || errno == ENOENT ? RNSC_ERR_INVAL : RNSC_ERR_SYS;
	w->events = events;
	return 0;
}

void rnsc_loop_watch_remove(rnsc_loop *loop, rnsc_watch *w)
{
	if (!loop || !w || w->dead)
		return;
	/* EBADF/ENOENT here mean the caller closed the fd first; the kernel already
	 * dropped the registration then, so there is nothing left to undo. */
	epoll_ctl(loop->epfd, EPOLL_CTL_DEL, w->fd, NULL);
	w->dead = 1;
	if (w->prev)
		w->prev->next = w->next;
	else
		loop->watches = w->next;
	if (w->next)
		w->next->prev = w->prev;
	loop->n_watches--;
	if (loop->dispatching_fds) {
		/* The current epoll batch may still hold this pointer: free it after the batch. */
		w->prev = NULL;
		w->next = loop->grave;
		loop->grave = w;
	} else {
		rnsc_free(loop->ctx, w);
	}
}

int rnsc_loop_watch_fd(const rnsc_watch *w)
{
	return w->fd;
}

unsigned rnsc_loop_watch_events(const rnsc_watch *w)
{
	return w->events;
}

/* ---- timers ---------------------------------------------------------------------------- */

/* Outside an iteration the cached clock may be stale (the loop was idle or not yet
 * run), so delays are measured from a fresh reading there. */
static uint64_t timer_base(rnsc_loop *loop)
{
	return loop->in_iteration ? loop->now : rnsc_loop_update_now(loop);
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

int rnsc_loop_timer_add(rnsc_loop *loop, uint64_t delay_ns, uint64_t period_ns, rnsc_timer_fn fn,
			void *ud, rnsc_timer **out)
{
	if (out)
		*out = NULL;
	if (!loop || !fn)
		return RNSC_ERR_INVAL;
	rnsc_timer *t = rnsc_calloc(loop->ctx, 1, sizeof(*t));
	if (!t)
		return RNSC_ERR_NOMEM;
	t->fn = fn;
	t->ud = ud;
	t->period = period_ns;
	t->deadline = add_sat(timer_base(loop), delay_ns);
	t->seq = loop->timer_seq++;
	t->heap_idx = NOT_IN_HEAP;
	if (heap_push(loop, t) != 0) {
		rnsc_free(loop->ctx, t);
		return RNSC_ERR_NOMEM;
	}
	if (out)
		*out = t;
	return 0;
}

int rnsc_loop_timer_rearm(rnsc_loop *loop, rnsc_timer *t, uint64_t delay_ns, uint64_t period_ns)
{
	if (!loop || !t || t->cancelled)
		return RNSC_ERR_INVAL;
	t->period = period_ns;
	t->deadline = add_sat(timer_base(loop), delay_ns);
	t->seq = loop->timer_seq++;
	if (t->heap_idx == NOT_IN_HEAP) {
		/* A fired one-shot inside its callback: back into the heap. The slot exists
		 * because popping it made room. */
		return heap_push(loop, t);
	}
	heap_remove(loop, t);
	return heap_push(loop, t);
}

void rnsc_loop_timer_cancel(rnsc_loop *loop, rnsc_timer *t)
{
	if (!loop || !t || t->cancelled)
		return;
	heap_remove(loop, t);
	if (t->running)
		t->cancelled = 1; /* freed when its callback returns */
	else
		rnsc_free(loop->ctx, t);
}

uint64_t rnsc_loop_timer_deadline(const rnsc_timer *t)
{
	return t->deadline;
}

static int run_timers(rnsc_loop *loop)
{
	int count = 0;
	/* Timers armed from here on get seq >= limit and wait for the next iteration. */
	uint64_t limit = loop->timer_seq;
	while (loop->heap_len > 0) {
		rnsc_timer *t = loop->heap[0];
		if (t->deadline > loop->now || t->seq >= limit)
			break;
		heap_remove(loop, t);
		if (t->period > 0) {
			uint64_t next = add_sat(t->deadline, t->period);
			if (next <= loop->now)
				next = add_sat(loop->now, t->period); /* skip missed periods */
			t->deadline = next;
			t->seq = loop->timer_seq++;
			/* Cannot fail: the slot was just freed by heap_remove. */
			(void)heap_push(loop, t);
		}
		t->running = 1;
		t->fn(loop, t, t->ud);
		t->running = 0;
		count++;
		if (t->cancelled || t->heap_idx == NOT_IN_HEAP)
			rnsc_free(loop->ctx, t);
	}
	return count;
}

/* ---- running --------------------------------------------------------------------------- */

static int compute_timeout(rnsc_loop *loop, int timeout_ms)
{
	if (atomic_load(&loop->stop))
		return 0;
	if (loop->heap_len == 0)
		return timeout_ms < 0 ? -1 : timeout_ms;
	uint64_t due = loop->heap[0]->deadline;
	int t;
	if (due <= loop->now) {
		t = 0;
	} else {
		/* Round up: waking a little late is fine, waking early just spins once more. */
		uint64_t ms = (due - loop->now + RNSC_NS_PER_MS - 1) / RNSC_NS_PER_MS;
		t = ms > INT_MAX ? INT_MAX : (int)ms;
	}
	if (timeout_ms >= 0 && timeout_ms < t)
		t = timeout_ms;
	return t;
}

static void drain_eventfd(rnsc_loop *loop)
{
	uint64_t v;
	ssize_t n;
	do
		n = read(loop->evfd, &v, sizeof(v));
	while (n < 0 && errno == EINTR);
}

int rnsc_loop_run_once(rnsc_loop *loop, int timeout_ms)
{
	if (!loop)
		return RNSC_ERR_INVAL;
	if (loop->in_iteration)
		return RNSC_ERR_STATE;
	struct epoll_event evs[MAX_EVENTS];
	loop->now = rnsc_monotonic_ns();
	int n = epoll_wait(loop->epfd, evs, MAX_EVENTS, compute_timeout(loop, timeout_ms));
	if (n < 0) {
		if (errno != EINTR)
			return RNSC_ERR_SYS;
		n = 0;
	}
	loop->in_iteration = 1;
	loop->now = rnsc_monotonic_ns();
	int count = 0;
	loop->dispatching_fds = 1;
	for (int i = 0; i < n; i++) {
		rnsc_watch *w = evs[i].data.ptr;
		if (!w) {
			drain_eventfd(loop);
			continue;
		}
		if (w->dead)
			continue;
		w->fn(loop, w, w->fd, from_epoll(evs[i].events), w->ud);
		count++;
	}
	loop->dispatching_fds = 0;
	free_grave(loop);
	count += run_posts(loop, take_posts(loop));
	count += run_timers(loop);
	loop->in_iteration = 0;
	return count;
}

int rnsc_loop_run(rnsc_loop *loop)
{
	if (!loop)
		return RNSC_ERR_INVAL;
	if (loop->in_iteration)
		return RNSC_ERR_STATE;
	for (;;) {
		int rc = rnsc_loop_run_once(loop, -1);
		if (rc < 0)
			return rc;
		if (atomic_exchange(&loop->stop, 0))
			return 0;
	}
}

/* ---- IO model names -------------------------------------------------------------------- */

static int ascii_casecmp(const char *a, const char *b)
{
	for (;; a++, b++) {
		int x = (unsigned char)*a, y = (unsigned char)*b;
		if (x >= 'A' && x <= 'Z')
			x += 'a' - 'A';
		if (y >= 'A' && y <= 'Z')
			y += 'a' - 'A';
		if (x != y || !x)
			return x - y;
	}
}

int rnsc_io_model_from_name(const char *name, enum rnsc_io_model *out)
{
	static const char *names[] = {"single", "pool", "sharded"};
	if (!name || !out)
		return RNSC_ERR_INVAL;
	for (int i = 0; i < 3; i++) {
		if (ascii_casecmp(name, names[i]) == 0) {
			*out = (enum rnsc_io_model)i;
			return 0;
		}
	}
	return RNSC_ERR_INVAL;
}

const char *rnsc_io_model_name(enum rnsc_io_model m)
{
	switch (m) {
	case RNSC_IO_SINGLE:
		return "single";
	case RNSC_IO_POOL:
		return "pool";
	case RNSC_IO_SHARDED:
		return "sharded";
	}
	return "unknown";
}

/* Threads we start must not take process signals (SIGINT, SIGTERM, SIGHUP): those are
 * for the daemon's main thread, typically through a signalfd on its loop. */
static int start_thread(pthread_t *th, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(th, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc == 0 ? 0 : RNSC_ERR_SYS;
}

/* ---- pool ------------------------------------------------------------------------------ */

enum { JOB_QUEUED, JOB_RUNNING, JOB_DONE };

struct pool_job {
	rnsc_pool_work_fn work;
	rnsc_pool_done_fn done;
	void *ud;
	int result;
	int state;
	struct pool_job *qnext; /* work queue */
	struct pool_job *onext; /* delivery list */
};

struct rnsc_pool {
	rnsc_loop *loop;
	unsigned flags;
	unsigned nthreads;
	pthread_t *threads;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct pool_job *q_head, *q_tail; /* not started */
	/* ORDERED: every undelivered job in submission order.
	 * unordered: finished jobs in completion order. */
	struct pool_job *o_head, *o_tail;
	int stopping;
	int drain_posted; /* `drain` is queued on the loop */
	int dead;         /* rnsc_pool_del ran; the queued drain frees the struct */
	struct post_node drain;
	size_t pending; /* owner thread only */
};

static void o_append(rnsc_pool *p, struct pool_job *j)
{
	j->onext = NULL;
	if (p->o_tail)
		p->o_tail->onext = j;
	else
		p->o_head = j;
	p->o_tail = j;
}

/* Detaches the jobs ready for delivery (caller holds mu). */
static struct pool_job *take_ready(rnsc_pool *p)
{
	struct pool_job *head = p->o_head;
	if (!(p->flags & RNSC_POOL_ORDERED)) {
		p->o_head = p->o_tail = NULL;
		return head;
	}
	struct pool_job *last = NULL, *j = head;
	while (j && j->state == JOB_DONE) {
		last = j;
		j = j->onext;
	}
	if (!last)
		return NULL;
	p->o_head = j;
	if (!j)
		p->o_tail = NULL;
	last->onext = NULL;
	return head;
}

static void deliver(rnsc_pool *p, struct pool_job *j)
{
	while (j) {
		struct pool_job *next = j->onext;
		p->pending--;
		if (j->done)
			j->done(p->loop, j->ud, j->result);
		free(j);
		j = next;
	}
}

static void pool_destroy(rnsc_pool *p)
{
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p->threads);
	free(p);
}

static void pool_drain(rnsc_loop *loop, void *ud)
{
	(void)loop;
	rnsc_pool *p = ud;
	pthread_mutex_lock(&p->mu);
	p->drain_posted = 0;
	int dead = p->dead;
	struct pool_job *ready = dead ? NULL : take_ready(p);
	pthread_mutex_unlock(&p->mu);
	if (dead) {
		pool_destroy(p);
		return;
	}
	deliver(p, ready);
}

static void *pool_worker(void *arg)
{
	rnsc_pool *p = arg;
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->q_head && !p->stopping)
			pthread_cond_wait(&p->cv, &p->mu);
		if (!p->q_head)
			break; /* stopping and nothing left that may start */
		if (p->stopping)
			break; /* queued jobs are cancelled by rnsc_pool_del */
		struct pool_job *j = p->q_head;
		p->q_head = j->qnext;
		if (!p->q_head)
			p->q_tail = NULL;
		j->state = JOB_RUNNING;
		pthread_mutex_unlock(&p->mu);
		int r = j->work(j->ud);
		pthread_mutex_lock(&p->mu);
		j->result = r;
		j->state = JOB_DONE;
		if (!(p->flags & RNSC_POOL_ORDERED))
			o_append(p, j);
		if (!p->drain_posted && !p->dead) {
			p->drain_posted = 1;
			p->drain.fn = pool_drain;
			p->drain.ud = p;
			p->drain.heap_owned = 0;
			/* Under mu so rnsc_pool_del cannot free the node between our decision
			 * and the post; the loop's own lock nests inside ours, never the reverse. */
			if (post_node(p->loop, &p->drain) != 0)
				p->drain_posted = 0;
		}
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

int rnsc_pool_new(rnsc_loop *loop, unsigned nthreads, unsigned flags, rnsc_pool **out)
{
	if (!out)
		return RNSC_ERR_INVAL;
	*out = NULL;
	if (!loop || nthreads == 0 || nthreads > 256 || (flags & ~(unsigned)RNSC_POOL_ORDERED))
		return RNSC_ERR_INVAL;
	/* The pool is touched by worker threads, so it uses malloc rather than the
	 * single-threaded ctx allocator. */
	rnsc_pool *p = calloc(1, sizeof(*p));
	if (!p)
		return RNSC_ERR_NOMEM;
	p->threads = calloc(nthreads, sizeof(*p->threads));
	if (!p->threads) {
		free(p);
		return RNSC_ERR_NOMEM;
	}
	if (pthread_mutex_init(&p->mu, NULL) != 0) {
		free(p->threads);
		free(p);
		return RNSC_ERR_SYS;
	}
	if (pthread_cond_init(&p->cv, NULL) != 0) {
		pthread_mutex_destroy(&p->mu);
		free(p->threads);
		free(p);
		return RNSC_ERR_SYS;
	}
	p->loop = loop;
	p->flags = flags;
	for (unsigned i = 0; i < nthreads; i++) {
		if (start_thread(&p->threads[i], pool_worker, p) != 0) {
			p->nthreads = i;
			rnsc_pool_del(p);
			return RNSC_ERR_SYS;
		}
		p->nthreads = i + 1;
	}
	*out = p;
	return 0;
}

int rnsc_pool_submit(rnsc_pool *pool, rnsc_pool_work_fn work, rnsc_pool_done_fn done, void *ud)
{
	if (!pool || !work)
		return RNSC_ERR_INVAL;
	struct pool_job *j = calloc(1, sizeof(*j));
	if (!j)
		return RNSC_ERR_NOMEM;
	j->work = work;
	j->done = done;
	j->ud = ud;
	j->state = JOB_QUEUED;
	pthread_mutex_lock(&pool->mu);
	if (pool->stopping) {
		pthread_mutex_unlock(&pool->mu);
		free(j);
		return RNSC_ERR_STATE;
	}
	if (pool->q_tail)
		pool->q_tail->qnext = j;
	else
		pool->q_head = j;
	pool->q_tail = j;
	if (pool->flags & RNSC_POOL_ORDERED)
		o_append(pool, j);
	pool->pending++;
	pthread_cond_signal(&pool->cv);
	pthread_mutex_unlock(&pool->mu);
	return 0;
}

size_t rnsc_pool_pending(const rnsc_pool *pool)
{
	return pool->pending;
}

unsigned rnsc_pool_threads(const rnsc_pool *pool)
{
	return pool->nthreads;
}

void rnsc_pool_del(rnsc_pool *pool)
{
	if (!pool)
		return;
	pthread_mutex_lock(&pool->mu);
	pool->stopping = 1;
	pthread_cond_broadcast(&pool->cv);
	pthread_mutex_unlock(&pool->mu);
	for (unsigned i = 0; i < pool->nthreads; i++)
		pthread_join(pool->threads[i], NULL);
	/* No worker is left: everything is either done or never started. */
	pthread_mutex_lock(&pool->mu);
	for (struct pool_job *j = pool->q_head; j; j = j->qnext) {
		j->state = JOB_DONE;
		j->result = RNSC_ERR_STATE;
		if (!(pool->flags & RNSC_POOL_ORDERED))
			o_append(pool, j);
	}
	pool->q_head = pool->q_tail = NULL;
	struct pool_job *all = pool->o_head;
	pool->o_head = pool->o_tail = NULL;
	pool->dead = 1;
	int deferred = pool->drain_posted;
	pthread_mutex_unlock(&pool->mu);
	deliver(pool, all);
	/* A drain still queued on the loop points into this struct; it frees it instead. */
	if (!deferred)
		pool_destroy(pool);
}

/* ---- sharded --------------------------------------------------------------------------- */

struct rnsc_shards {
	rnsc_ctx *ctx;
	unsigned n;
	rnsc_loop **loops;
	pthread_t *threads;
	int running;
	atomic_uint rr;
};

static void *shard_main(void *arg)
{
	rnsc_loop *loop = arg;
	/* RNSC_ERR_SYS from epoll_wait cannot be reported from here; the thread ends and
	 * rnsc_shards_stop() still joins it. */
	(void)rnsc_loop_run(loop);
	return NULL;
}

int rnsc_shards_new(rnsc_ctx *ctx, unsigned n, rnsc_shards **out)
{
	if (!out)
		return RNSC_ERR_INVAL;
	*out = NULL;
	if (n == 0 || n > 256)
		return RNSC_ERR_INVAL;
	rnsc_shards *g = rnsc_calloc(ctx, 1, sizeof(*g));
	if (!g)
		return RNSC_ERR_NOMEM;
	g->ctx = ctx;
	g->loops = rnsc_calloc(ctx, n, sizeof(*g->loops));
	g->threads = rnsc_calloc(ctx, n, sizeof(*g->threads));
	if (!g->loops || !g->threads) {
		rnsc_free(ctx, g->loops);
		rnsc_free(ctx, g->threads);
		rnsc_free(ctx, g);
		return RNSC_ERR_NOMEM;
	}
	atomic_init(&g->rr, 0);
	for (unsigned i = 0; i < n; i++) {
		int rc = rnsc_loop_new(ctx, &g->loops[i]);
		if (rc) {
			g->n = i;
			rnsc_shards_del(g);
			return rc;
		}
	}
	g->n = n;
	*out = g;
	return 0;
}

static void join_shards(rnsc_shards *g, unsigned started)
{
	for (unsigned i = 0; i < started; i++)
		rnsc_loop_stop(g->loops[i]);
	for (unsigned i = 0; i < started; i++)
		pthread_join(g->threads[i], NULL);
}

int rnsc_shards_start(rnsc_shards *g)
{
	if (!g)
		return RNSC_ERR_INVAL;
	if (g->running)
		return RNSC_ERR_STATE;
	for (unsigned i = 0; i < g->n; i++) {
		if (start_thread(&g->threads[i], shard_main, g->loops[i]) != 0) {
			join_shards(g, i);
			return RNSC_ERR_SYS;
		}
	}
	g->running = 1;
	return 0;
}

int rnsc_shards_stop(rnsc_shards *g)
{
	if (!g)
		return RNSC_ERR_INVAL;
	if (!g->running)
		return RNSC_ERR_STATE;
	join_shards(g, g->n);
	g->running = 0;
	/* A stop that raced with the thread's exit would otherwise linger and cut the
	 * next run short. */
	for (unsigned i = 0; i < g->n; i++)
		atomic_store(&g->loops[i]->stop, 0);
	return 0;
}

void rnsc_shards_del(rnsc_shards *g)
{
	if (!g)
		return;
	if (g->running)
		rnsc_shards_stop(g);
	for (unsigned i = 0; i < g->n; i++)
		rnsc_loop_del(g->loops[i]);
	rnsc_free(g->ctx, g->loops);
	rnsc_free(g->ctx, g->threads);
	rnsc_free(g->ctx, g);
}

unsigned rnsc_shards_count(const rnsc_shards *g)
{
	return g->n;
}

rnsc_loop *rnsc_shards_loop(const rnsc_shards *g, unsigned i)
{
	return i < g->n ? g->loops[i] : NULL;
}

int rnsc_shards_post(rnsc_shards *g, unsigned i, rnsc_post_fn fn, void *ud)
{
	if (!g || i >= g->n)
		return RNSC_ERR_INVAL;
	return rnsc_loop_post(g->loops[i], fn, ud);
}

unsigned rnsc_shards_assign(const rnsc_shards *g, uint64_t key)
{
	/* Mix first so keys that differ only in high bits still spread. */
	key ^= key >> 33;
	key *= UINT64_C(0xff51afd7ed558ccd);
	key ^= key >> 33;
	return (unsigned)(key % g->n);
}

unsigned rnsc_shards_next(rnsc_shards *g)
{
	return atomic_fetch_add(&g->rr, 1) % g->n;
}

int rnsc_shards_running(const rnsc_shards *g)
{
	return g->running;
}
