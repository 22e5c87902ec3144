/* SPDX-License-Identifier: MIT */
/*
 * Event loops and the IO models built on them.
 *
 * rnsc_loop is a small epoll loop in the spirit of Redis' ae and libuv: fd
 * watches, timers on the monotonic clock, a cached "now" and a thread-safe
 * post queue. The protocol core never sees it: the runtime turns fd events
 * into rnsc_transport_ingest() calls and timers into the `now` it passes in.
 *
 * The IO models (DESIGN.md section 1):
 *   single   one rnsc_loop run on one thread (rnsc_loop_run on the caller's thread).
 *   pool     one rnsc_loop plus an rnsc_pool of worker threads. Crypto-heavy jobs
 *            (signature checks, resource hashing) run on a worker; their completion
 *            callback runs on the loop thread, optionally in submission order.
 *   sharded  rnsc_shards: N loops, each run by its own thread; interfaces are
 *            assigned to a loop and all their state is touched only by that thread.
 *
 * Ownership and threads
 *   - A loop is *owned* by the thread running rnsc_loop_run()/run_once() on it (before
 *     the first run: the thread that created it). Only the owner may add, modify or
 *     remove watches and timers, read rnsc_loop_now() or delete the loop. Every
 *     callback (watch, timer, posted function, pool completion) runs on the owner.
 *   - rnsc_loop_post(), rnsc_loop_stop() and rnsc_loop_wake() may be called from any
 *     thread, including signal-free worker threads, as long as the loop outlives the
 *     call. Other threads hand work to a loop only through rnsc_loop_post().
 *   - The loop owns watch and timer records; the caller owns the fds it watches
 *     (the loop never closes them) and every `ud` pointer.
 *   - Protocol state for one link or one destination belongs to one loop; in the
 *     sharded model that is the loop its interface was assigned to.
 *
 * Re-entrancy: callbacks may add, modify and remove any watch or timer, including
 * the one being dispatched, and may post or stop. They must not call run or
 * run_once on the same loop (RNSC_ERR_STATE) nor delete it.
 *
 * Errors: functions return 0 or a negative rnsc_err; every code is listed per function.
 */
#ifndef RNSC_LOOP_H
#define RNSC_LOOP_H

#include <stddef.h>
#include <stdint.h>

#include "ctx.h"

typedef struct rnsc_loop rnsc_loop;
typedef struct rnsc_watch rnsc_watch;
typedef struct rnsc_timer rnsc_timer;

/* Watch interest and reported events. RNSC_EV_ERROR (EPOLLERR/EPOLLHUP) is always
 * reported, even with no interest; a watch with interest 0 stays registered but idle. */
enum rnsc_ev {
	RNSC_EV_READ = 1u << 0,
	RNSC_EV_WRITE = 1u << 1,
	RNSC_EV_ERROR = 1u << 2,
};

typedef void (*rnsc_watch_fn)(rnsc_loop *loop, rnsc_watch *w, int fd, unsigned events, void *ud);
typedef void (*rnsc_timer_fn)(rnsc_loop *loop, rnsc_timer *t, void *ud);
typedef void (*rnsc_post_fn)(rnsc_loop *loop, void *ud);

#define RNSC_NS_PER_MS UINT64_C(1000000)
#define RNSC_NS_PER_S UINT64_C(1000000000)

/* CLOCK_MONOTONIC in nanoseconds, read now (not cached). Any thread. */
RNSC_API uint64_t rnsc_monotonic_ns(void);

/* ---- the loop ------------------------------------------------------------------------ */

/* Creates a loop (an epoll fd and an eventfd, both close-on-exec). ctx supplies the
 * allocator for records made on the owner thread and may be NULL (malloc); it must
 * outlive the loop. Returns 0, RNSC_ERR_INVAL, RNSC_ERR_NOMEM or RNSC_ERR_SYS. */
RNSC_API int rnsc_loop_new(rnsc_ctx *ctx, rnsc_loop **out);

/* Owner thread only, never from a callback. Frees every watch and timer without
 * calling them (watched fds stay open: they are the caller's), then runs the posted
 * callbacks still queued so that ownership handed over in their `ud` is not lost;
 * from that point rnsc_loop_post() fails with RNSC_ERR_STATE. NULL is a no-op. */
RNSC_API void rnsc_loop_del(rnsc_loop *loop);

/* Runs iterations until rnsc_loop_stop(). Returns 0 after a stop, RNSC_ERR_STATE when
 * called from a callback of this loop, or RNSC_ERR_SYS if epoll_wait fails. The stop
 * request is consumed, so the loop can be run again afterwards. */
RNSC_API int rnsc_loop_run(rnsc_loop *loop);

/*
 * One iteration: waits up to timeout_ms (-1: until something happens; 0: poll) or
 * until the next timer is due, then dispatches, in this order, fd events, posted
 * callbacks and due timers. Returns the number of callbacks run (>= 0),
 * RNSC_ERR_STATE (called from a callback), or RNSC_ERR_SYS. A timer armed during an
 * iteration never fires in that same iteration, so a callback re-arming itself with
 * delay 0 cannot starve fds.
 */
RNSC_API int rnsc_loop_run_once(rnsc_loop *loop, int timeout_ms);

/* Any thread. Makes rnsc_loop_run() return after its current iteration (and wakes it if
 * it is waiting). A stop requested while the loop is not running applies to the next
 * rnsc_loop_run(), which then returns after one iteration. */
RNSC_API void rnsc_loop_stop(rnsc_loop *loop);

/* True between rnsc_loop_stop() and the moment run() consumes the request. Any thread. */
RNSC_API int rnsc_loop_stopping(rnsc_loop *loop);

/* Any thread: interrupts a waiting run()/run_once() without queuing work. */
RNSC_API void rnsc_loop_wake(rnsc_loop *loop);

/* Owner thread: the monotonic time (ns) cached at the start of the current iteration,
 * so every callback of one iteration sees the same `now`. */
RNSC_API uint64_t rnsc_loop_now(const rnsc_loop *loop);

/* Owner thread: re-reads the clock into the cache (after a long computation). */
RNSC_API uint64_t rnsc_loop_update_now(rnsc_loop *loop);

/* Any thread: queues fn(loop, ud) to run on the owner thread, in FIFO order, and wakes
 * the loop. Never blocks on the loop. Returns 0, RNSC_ERR_INVAL, RNSC_ERR_NOMEM or
 * RNSC_ERR_STATE (the loop is being deleted; fn will not run). The record is allocated
 * with malloc, not the ctx allocator, because the ctx allocator is not thread-safe. */
RNSC_API int rnsc_loop_post(rnsc_loop *loop, rnsc_post_fn fn, void *ud);

/* Owner thread: number of watches and of pending timers (for tests and status). */
RNSC_API size_t rnsc_loop_watch_count(const rnsc_loop *loop);
RNSC_API size_t rnsc_loop_timer_count(const rnsc_loop *loop);

/* ---- fd watches (owner thread) ----------------------------------------------------- */

/*
 * Watches fd (level-triggered) for `events` (RNSC_EV_READ | RNSC_EV_WRITE, or 0).
 * *out, when not NULL, receives the handle, valid until rnsc_loop_watch_remove() or
 * rnsc_loop_del(). Returns 0, RNSC_ERR_INVAL (bad fd, unknown event bits, NULL fn),
 * RNSC_ERR_STATE (fd is already watched by this loop), RNSC_ERR_NOMEM or
 * RNSC_ERR_SYS (epoll_ctl refused it, e.g. a regular file).
 */
RNSC_API int rnsc_loop_watch_add(rnsc_loop *loop, int fd, unsigned events, rnsc_watch_fn fn,
				 void *ud, rnsc_watch **out);

/* Changes the interest set. Returns 0, RNSC_ERR_INVAL or RNSC_ERR_SYS. */
RNSC_API int rnsc_loop_watch_modify(rnsc_loop *loop, rnsc_watch *w, unsigned events);

/* Stops watching and frees the handle; safe from any callback, including this watch's
 * own: no callback for it runs afterwards, even if its events were already fetched in
 * the current iteration. Call it before closing the fd. NULL is a no-op. */
RNSC_API void rnsc_loop_watch_remove(rnsc_loop *loop, rnsc_watch *w);

RNSC_API int rnsc_loop_watch_fd(const rnsc_watch *w);
RNSC_API unsigned rnsc_loop_watch_events(const rnsc_watch *w);

/* ---- timers (owner thread) --------------------------------------------------------- */

/*
 * Arms a timer firing delay_ns after rnsc_loop_now(); with period_ns > 0 it then fires
 * every period_ns (missed periods are skipped, not bunched). Timers due at the same
 * instant fire in the order they were armed. Timers live in a binary heap: add, cancel
 * and re-arm are O(log n), so thousands of timers are cheap.
 *
 * Lifetime: a one-shot timer is freed right after its callback returns unless the
 * callback re-armed it; a periodic timer lives until cancelled. *out, when not NULL,
 * receives the handle for cancel/rearm while the timer is pending or inside its own
 * callback. Returns 0, RNSC_ERR_INVAL (NULL fn) or RNSC_ERR_NOMEM.
 */
RNSC_API int rnsc_loop_timer_add(rnsc_loop *loop, uint64_t delay_ns, uint64_t period_ns,
				 rnsc_timer_fn fn, void *ud, rnsc_timer **out);

/* Re-arms a pending timer, or a timer from inside its own callback (which keeps a
 * one-shot alive). Returns 0, RNSC_ERR_INVAL (NULL, or cancelled) or RNSC_ERR_NOMEM
 * (only when re-arming a fired one-shot needs a larger heap; it is then freed when its
 * callback returns, as if not re-armed). */
RNSC_API int rnsc_loop_timer_rearm(rnsc_loop *loop, rnsc_timer *t, uint64_t delay_ns,
				   uint64_t period_ns);

/* Cancels and frees a pending timer; safe from any callback including its own (it is
 * then freed when that callback returns). NULL is a no-op. */
RNSC_API void rnsc_loop_timer_cancel(rnsc_loop *loop, rnsc_timer *t);

/* Absolute deadline (loop clock, ns) of a pending timer. */
RNSC_API uint64_t rnsc_loop_timer_deadline(const rnsc_timer *t);

/* ---- IO models --------------------------------------------------------------------- */

enum rnsc_io_model {
	RNSC_IO_SINGLE = 0,
	RNSC_IO_POOL = 1,
	RNSC_IO_SHARDED = 2,
};

/* "single", "pool" or "sharded" (ASCII case-insensitive). Returns 0 or RNSC_ERR_INVAL. */
RNSC_API int rnsc_io_model_from_name(const char *name, enum rnsc_io_model *out);
RNSC_API const char *rnsc_io_model_name(enum rnsc_io_model m);

/* ---- pool: worker threads feeding one loop ----------------------------------------- */

typedef struct rnsc_pool rnsc_pool;

/* Runs on a worker thread. It must not touch state owned by the loop thread; whatever
 * it needs travels in ud. Its return value is handed to the completion callback. */
typedef int (*rnsc_pool_work_fn)(void *ud);
/* Runs on the loop thread with the work function's result, or RNSC_ERR_STATE when the
 * job was cancelled by rnsc_pool_del() before it started. Usually frees ud. */
typedef void (*rnsc_pool_done_fn)(rnsc_loop *loop, void *ud, int result);

enum rnsc_pool_flags {
	/* Deliver completions in submission order (a slow job holds back later ones):
	 * packets verified in parallel are still processed in arrival order. */
	RNSC_POOL_ORDERED = 1u << 0,
};

/*
 * Starts nthreads (1..256) workers serving `loop`. The pool belongs to the loop's owner
 * thread and must be deleted before the loop. Returns 0, RNSC_ERR_INVAL,
 * RNSC_ERR_NOMEM or RNSC_ERR_SYS (a thread could not be started; none is left running).
 */
RNSC_API int rnsc_pool_new(rnsc_loop *loop, unsigned nthreads, unsigned flags, rnsc_pool **out);

/* Owner thread: queues a job. done may be NULL. Returns 0, RNSC_ERR_INVAL,
 * RNSC_ERR_NOMEM or RNSC_ERR_STATE (pool shutting down). */
RNSC_API int rnsc_pool_submit(rnsc_pool *pool, rnsc_pool_work_fn work, rnsc_pool_done_fn done,
			      void *ud);

/* Jobs submitted and not yet delivered to their completion callback. Owner thread. */
RNSC_API size_t rnsc_pool_pending(const rnsc_pool *pool);
RNSC_API unsigned rnsc_pool_threads(const rnsc_pool *pool);

/*
 * Owner thread, not from a pool completion callback. Lets running jobs finish, joins
 * every worker, cancels jobs that never started and then calls every outstanding
 * completion callback right here (finished jobs with their result, cancelled ones with
 * RNSC_ERR_STATE; in submission order for an ORDERED pool). NULL is a no-op.
 */
RNSC_API void rnsc_pool_del(rnsc_pool *pool);

/* ---- sharded: N loops, one thread each --------------------------------------------- */

typedef struct rnsc_shards rnsc_shards;

/* Creates n (1..256) loops; no thread runs yet, so the caller may set up watches and
 * timers on each loop directly until rnsc_shards_start(). Returns 0, RNSC_ERR_INVAL,
 * RNSC_ERR_NOMEM or RNSC_ERR_SYS. */
RNSC_API int rnsc_shards_new(rnsc_ctx *ctx, unsigned n, rnsc_shards **out);

/* Starts one thread per loop running rnsc_loop_run(); each thread becomes its loop's
 * owner. From now on reach loop i only through rnsc_shards_post(). Returns 0,
 * RNSC_ERR_STATE (already running) or RNSC_ERR_SYS (a thread could not be started;
 * those already started are stopped and joined). */
RNSC_API int rnsc_shards_start(rnsc_shards *g);

/* Stops every loop after its current iteration and joins the threads; the calling
 * thread owns the loops again. Not from a shard thread. Returns 0 or RNSC_ERR_STATE
 * (not running). */
RNSC_API int rnsc_shards_stop(rnsc_shards *g);

/* Stops (if running) and deletes every loop. NULL is a no-op. */
RNSC_API void rnsc_shards_del(rnsc_shards *g);

RNSC_API unsigned rnsc_shards_count(const rnsc_shards *g);
/* Loop i, or NULL when out of range. Touch it directly only while not running. */
RNSC_API rnsc_loop *rnsc_shards_loop(const rnsc_shards *g, unsigned i);
/* Any thread: rnsc_loop_post() to loop i. RNSC_ERR_INVAL for a bad index. */
RNSC_API int rnsc_shards_post(rnsc_shards *g, unsigned i, rnsc_post_fn fn, void *ud);
/* Stable assignment of a key (e.g. a hash of the interface name) to a loop index. */
RNSC_API unsigned rnsc_shards_assign(const rnsc_shards *g, uint64_t key);
/* Round-robin assignment; any thread. */
RNSC_API unsigned rnsc_shards_next(rnsc_shards *g);
/* True while the threads run. */
RNSC_API int rnsc_shards_running(const rnsc_shards *g);

#endif
