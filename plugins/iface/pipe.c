/* SPDX-License-Identifier: MIT */
/*
 * The "pipe" interface plugin: PipeInterface as the reference (rns 1.5.4,
 * RNS/Interfaces/PipeInterface.py with the set-up in Reticulum.py) runs it: HDLC frames
 * over the stdin and stdout of a child process.
 *
 *  - `command` (required) is split like Python's shlex.split (shlex.c) and run directly,
 *    searched in PATH, without a shell; stderr is inherited. A command that cannot be
 *    started fails open() with a message naming it, as the reference's constructor raises.
 *  - HDLC framing (src/framing/hdlc.c, compiled in). HW_MTU 1064 (AUTOCONFIGURE_MTU is off for
 *    pipes, so bitrate does not change it); frames of 20 .. 1064 bytes are delivered,
 *    runts and oversized frames dropped and counted (the reference truncates an oversized
 *    frame and hands runts to Transport, which discards both).
 *  - Bitrate: the reference's 1 Mbit/s guess unless `bitrate` (>= 5) is configured.
 *  - When the child's stdout ends (it exited or closed it) or writing to it fails, the
 *    interface goes offline, the child is killed if still running (as the reference does)
 *    and reaped, and a new one is spawned after `respawn_delay` seconds (default 5, as the
 *    reference). rnsc addition: a child that dies within QUICK_DEATH_NS of its start
 *    counts as a failed start; from the second failed start in a row the delay doubles
 *    each time, up to max(60 s, respawn_delay), so a broken command cannot spin.
 *  - Children are watched through a pidfd (a timer polling waitpid where the kernel has
 *    none) and always reaped with waitpid on their own pid: no zombies, and no stealing
 *    of other children's exit statuses. The plugin's pipe ends are close-on-exec and the
 *    child gets only its stdin/stdout pipes above stderr (closefrom where glibc has it),
 *    default SIGPIPE/SIGXFSZ dispositions and an empty signal mask.
 *  - Writes are non-blocking with a 1 MiB queue (frames beyond it are dropped and counted,
 *    where the reference's write would block); SIGPIPE is held off per thread during the
 *    write, so a dead reader shows up as EPIPE even in a host that keeps SIGPIPE's default.
 *
 * Threading: everything runs on the interface's loop thread (iface_abi.h); no locks.
 * Ownership: the plugin owns the handle, both pipe ends, the pidfd and the child.
 */
#define _GNU_SOURCE /* pipe2, posix_spawn_file_actions_addclosefrom_np */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hdlc.h"
#include "hdlc_rx.h"
#include "iface_abi.h"
#include "iface_plugin.h"
#include "txq.h"
#include "shlex.h"

extern char **environ;

#define PIPE_HW_MTU RNSC_HDLC_MTU_PIPE /* PipeInterface HW_MTU */
#define PIPE_BITRATE_GUESS 1000000u    /* PipeInterface.BITRATE_GUESS */
#define RET_MINIMUM_BITRATE 5          /* Reticulum.MINIMUM_BITRATE */
#define NS_PER_S UINT64_C(1000000000)
#define QUICK_DEATH_NS (NS_PER_S) /* lived less than this: a failed start */
#define BACKOFF_CAP_NS (60 * NS_PER_S)
#define BACKOFF_FLOOR_NS (NS_PER_S / 10) /* base of the doubling when the delay is 0 */
#define REAP_POLL_NS (NS_PER_S / 20)     /* waitpid polling without a pidfd */
#define TXQ_MAX ((size_t)1 << 20)
#define READ_CHUNK 16384
#define MAX_ARGS 255

typedef rnsc_iface_inst pipe_inst;

typedef struct pipe_if {
	pipe_inst *inst;
	const rnsc_iface_host_api *host;
	char name[160];
	/* command */
	char *argbuf;
	char *argv[MAX_ARGS + 1];
	uint64_t respawn_ns;
	/* the running child; pid > 0 until it is reaped */
	pid_t pid;
	int pidfd;
	rnsc_iface_watch *pid_w;
	rnsc_iface_timer *reap_timer; /* polls waitpid where pidfd_open is missing */
	uint64_t spawned_at;
	/* the child's stdin (we write) and stdout (we read) */
	int wfd, rfd;
	rnsc_iface_watch *ww, *rw;
	int online;
	rnsc_iface_timer *respawn_timer;
	uint32_t failed_starts; /* consecutive quick deaths or spawn errors */
	uint32_t spawns;
	/* receive */
	rnsc_hdlc_decoder dec;
	rnsc_hdlc_stats seen;
	uint8_t rxbuf[PIPE_HW_MTU];
	/* transmit queue: bytes [tx_off, tx_len) pending */
	uint8_t *tx;
	size_t tx_off, tx_len, tx_cap;
	uint64_t rxb, txb, rxp, txp, bitrate;
} pipe_if;

static void *xalloc(pipe_inst *inst, size_t n)
{
	void *p = inst->api->alloc(inst->api->host_ctx, n);
	if (p)
		memset(p, 0, n);
	return p;
}

static void xfree(pipe_inst *inst, void *p)
{
	if (p)
		inst->api->free(inst->api->host_ctx, p);
}

__attribute__((format(printf, 3, 4))) static void plog(pipe_if *p, int level, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p->host->log(p->host->hctx, level, msg);
}

/* ---- child processes ------------------------------------------------------------------- */

static int pidfd_open_compat(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

/* Moves fd above 2 so that dup2 onto the child's stdin/stdout never meets itself. */
static int fd_above_stdio(int fd)
{
	if (fd > 2)
		return fd;
	int n = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	int e = errno;
	close(fd);
	errno = e;
	return n;
}

static void schedule_respawn(pipe_if *p);
static void pipes_down(pipe_if *p, const char *why);

static void stop_reap_watch(pipe_if *p)
{
	if (p->pid_w) {
		p->host->watch_remove(p->host->hctx, p->pid_w);
		p->pid_w = NULL;
	}
	if (p->pidfd >= 0) {
		close(p->pidfd);
		p->pidfd = -1;
	}
	if (p->reap_timer)
		p->host->timer_stop(p->host->hctx, p->reap_timer);
}

/* Collects the child's exit status if it has one. Returns 1 when reaped. */
static int try_reap(pipe_if *p)
{
	if (p->pid <= 0)
		return 1;
	int st = 0;
	pid_t r;
	do
		r = waitpid(p->pid, &st, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return 0;
	if (r == p->pid) {
		if (WIFEXITED(st))
			plog(p, RNSC_LOG_INFO,
			     "Subprocess terminated on PipeInterface[%s] (exit status %d)", p->name,
			     WEXITSTATUS(st));
		else if (WIFSIGNALED(st))
			plog(p, RNSC_LOG_INFO,
			     "Subprocess terminated on PipeInterface[%s] (signal %d)", p->name,
			     WTERMSIG(st));
	}
	/* ECHILD (someone else reaped it, or SIGCHLD is ignored): gone all the same. */
	p->pid = 0;
	stop_reap_watch(p);
	return 1;
}

static void after_reap(pipe_if *p)
{
	/* The pipes already closed: this was the last piece of the old child. */
	if (p->rfd < 0 && p->wfd < 0)
		schedule_respawn(p);
}

static void pidfd_cb(void *ud, int fd, unsigned events)
{
	pipe_if *p = ud;
	(void)fd;
	(void)events;
	if (try_reap(p))
		after_reap(p);
}

static void reap_timer_cb(void *ud)
{
	pipe_if *p = ud;
	if (try_reap(p))
		after_reap(p);
}

static int watch_child(pipe_if *p)
{
	p->pidfd = pidfd_open_compat(p->pid);
	if (p->pidfd >= 0) {
		if (fcntl(p->pidfd, F_SETFD, FD_CLOEXEC) == 0 &&
		    p->host->watch_add(p->host->hctx, p->pidfd, RNSC_IFACE_EV_READ, pidfd_cb, p,
				       &p->pid_w) == 0)
			return 0;
		close(p->pidfd);
		p->pidfd = -1;
	}
	if (!p->reap_timer &&
	    p->host->timer_new(p->host->hctx, reap_timer_cb, p, &p->reap_timer) != 0)
		return RNSC_ERR_NOMEM;
	return p->host->timer_start(p->host->hctx, p->reap_timer, REAP_POLL_NS, REAP_POLL_NS);
}

static void io_cb(void *ud, int fd, unsigned events);

/* Starts the command with fresh pipes. Returns 0 or a negative code with msg filled. */
static int spawn_child(pipe_if *p, char *msg, size_t cap)
{
	int in[2] = {-1, -1}, out[2] = {-1, -1}, rc = RNSC_ERR_SYS, err = 0;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	int fa_ok = 0, attr_ok = 0;
	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) {
		snprintf(msg, cap, "cannot create pipes: %s", strerror(errno));
		goto fail;
	}
	for (int k = 0; k < 2; k++) {
		if ((in[k] = fd_above_stdio(in[k])) < 0 || (out[k] = fd_above_stdio(out[k])) < 0) {
			snprintf(msg, cap, "cannot create pipes: %s", strerror(errno));
			goto fail;
		}
	}
	if ((err = posix_spawn_file_actions_init(&fa)) != 0)
		goto spawn_setup;
	fa_ok = 1;
	if ((err = posix_spawn_file_actions_adddup2(&fa, in[0], 0)) != 0 ||
	    (err = posix_spawn_file_actions_adddup2(&fa, out[1], 1)) != 0)
		goto spawn_setup;
#if defined(__GLIBC__) && defined(__GLIBC_PREREQ)
#if __GLIBC_PREREQ(2, 34)
	/* Whatever a library left without close-on-exec stays out of the child too. */
	if ((err = posix_spawn_file_actions_addclosefrom_np(&fa, 3)) != 0)
		goto spawn_setup;
#endif
#endif
	if ((err = posix_spawnattr_init(&attr)) != 0)
		goto spawn_setup;
	attr_ok = 1;
	sigset_t none, def;
	sigemptyset(&none);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE); /* hosts often ignore it; the child should not inherit that */
	sigaddset(&def, SIGXFSZ);
	if ((err = posix_spawnattr_setsigmask(&attr, &none)) != 0 ||
	    (err = posix_spawnattr_setsigdefault(&attr, &def)) != 0 ||
	    (err = posix_spawnattr_setflags(&attr,
					    POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)) != 0)
		goto spawn_setup;
	pid_t pid;
	err = posix_spawnp(&pid, p->argv[0], &fa, &attr, p->argv, environ);
	if (err != 0) {
		rc = err == ENOENT ? RNSC_ERR_NOENT : err == EACCES ? RNSC_ERR_PERM : RNSC_ERR_IO;
		snprintf(msg, cap, "cannot run \"%s\": %s", p->argv[0], strerror(err));
		goto fail;
	}
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	fa_ok = attr_ok = 0;
	close(in[0]);
	close(out[1]);
	p->pid = pid;
	p->spawned_at = p->host->now_ns(p->host->hctx);
	p->spawns++;
	p->wfd = in[1];
	p->rfd = out[0];
	(void)fcntl(p->wfd, F_SETFL, fcntl(p->wfd, F_GETFL) | O_NONBLOCK);
	(void)fcntl(p->rfd, F_SETFL, fcntl(p->rfd, F_GETFL) | O_NONBLOCK);
	rnsc_hdlc_decoder_reset(&p->dec);
	p->tx_off = p->tx_len = 0;
	if ((rc = watch_child(p)) != 0 ||
	    (rc = p->host->watch_add(p->host->hctx, p->rfd, RNSC_IFACE_EV_READ, io_cb, p,
				     &p->rw)) != 0 ||
	    (rc = p->host->watch_add(p->host->hctx, p->wfd, 0, io_cb, p, &p->ww)) != 0) {
		snprintf(msg, cap, "cannot watch the subprocess");
		pipes_down(p, "set-up failed");
		return rc;
	}
	return 0;
spawn_setup:
	snprintf(msg, cap, "cannot prepare the subprocess: %s", strerror(err));
fail:
	if (fa_ok)
		posix_spawn_file_actions_destroy(&fa);
	if (attr_ok)
		posix_spawnattr_destroy(&attr);
	for (int k = 0; k < 2; k++) {
		if (in[k] >= 0)
			close(in[k]);
		if (out[k] >= 0)
			close(out[k]);
	}
	return rc;
}

static void go_online(pipe_if *p)
{
	if (!p->online) {
		p->online = 1;
		p->host->set_online(p->host->hctx, 1);
	}
}

static void close_pipes(pipe_if *p)
{
	rnsc_hdlc_rx_reset(p->host, &p->dec); /* counts a frame cut short */
	if (p->rw) {
		p->host->watch_remove(p->host->hctx, p->rw);
		p->rw = NULL;
	}
	if (p->ww) {
		p->host->watch_remove(p->host->hctx, p->ww);
		p->ww = NULL;
	}
	if (p->rfd >= 0) {
		close(p->rfd);
		p->rfd = -1;
	}
	if (p->wfd >= 0) {
		close(p->wfd);
		p->wfd = -1;
	}
	p->tx_off = p->tx_len = 0;
}

/* The child's stdout ended or its stdin broke: offline, kill, reap, respawn. */
static void pipes_down(pipe_if *p, const char *why)
{
	close_pipes(p);
	if (p->online) {
		p->online = 0;
		p->host->set_online(p->host->hctx, 0);
	}
	uint64_t lived = p->host->now_ns(p->host->hctx) - p->spawned_at;
	if (lived < QUICK_DEATH_NS)
		p->failed_starts++;
	else
		p->failed_starts = 0;
	plog(p, RNSC_LOG_WARNING, "Subprocess pipe for PipeInterface[%s] closed (%s)", p->name,
	     why);
	if (p->pid > 0 && !try_reap(p)) {
		/* Still running with its stdout gone: the reference kills it too. The reap
		 * follows from the pidfd (or the polling timer), then the respawn. */
		kill(p->pid, SIGKILL);
		return;
	}
	schedule_respawn(p);
}

static uint64_t respawn_wait(const pipe_if *p)
{
	if (p->failed_starts <= 1)
		return p->respawn_ns;
	uint64_t base = p->respawn_ns > BACKOFF_FLOOR_NS ? p->respawn_ns : BACKOFF_FLOOR_NS;
	uint64_t cap = p->respawn_ns > BACKOFF_CAP_NS ? p->respawn_ns : BACKOFF_CAP_NS;
	uint64_t d = base;
	for (uint32_t k = 1; k < p->failed_starts && d < cap; k++)
		d *= 2;
	return d < cap ? d : cap;
}

static void schedule_respawn(pipe_if *p)
{
	uint64_t d = respawn_wait(p);
	plog(p, RNSC_LOG_VERBOSE, "Respawning subprocess for PipeInterface[%s] in %.2f seconds",
	     p->name, (double)d / 1e9);
	p->host->timer_start(p->host->hctx, p->respawn_timer, d, 0);
}

static void respawn_cb(void *ud)
{
	pipe_if *p = ud;
	if (p->pid > 0 || p->rfd >= 0)
		return;
	char msg[384];
	plog(p, RNSC_LOG_VERBOSE, "Attempting to respawn subprocess for PipeInterface[%s]...",
	     p->name);
	if (spawn_child(p, msg, sizeof(msg)) != 0) {
		plog(p, RNSC_LOG_ERROR, "Error while spawning subprocess for PipeInterface[%s]: %s",
		     p->name, msg);
		if (p->pid <= 0 && p->rfd < 0) {
			p->failed_starts++;
			schedule_respawn(p);
		}
		return;
	}
	go_online(p);
	plog(p, RNSC_LOG_INFO, "Reconnected pipe for PipeInterface[%s]", p->name);
}

/* ---- I/O ------------------------------------------------------------------------------- */

static int on_frame(void *ud, const uint8_t *frame, size_t len)
{
	pipe_if *p = ud;
	p->rxb += len;
	p->rxp++;
	p->host->deliver(p->host->hctx, frame, len);
	/* An answer sent from deliver may have found the pipe broken. */
	return p->rfd < 0 ? RNSC_ERR_STATE : 0;
}

static void do_read(pipe_if *p)
{
	uint8_t buf[READ_CHUNK];
	for (int round = 0; round < 16 && p->rfd >= 0; round++) {
		ssize_t n = read(p->rfd, buf, sizeof(buf));
		if (n > 0) {
			(void)rnsc_hdlc_decoder_feed(&p->dec, buf, (size_t)n, on_frame, p);
			rnsc_hdlc_rx_report(p->host, &p->dec, &p->seen);
			if ((size_t)n < sizeof(buf))
				return;
			continue;
		}
		if (n == 0) {
			pipes_down(p, "end of output");
			return;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			pipes_down(p, strerror(errno));
		return;
	}
}

/* write() with SIGPIPE held off for this thread, so a closed reader is just EPIPE. */
static ssize_t write_nosigpipe(int fd, const void *b, size_t n)
{
	sigset_t pipe_set, old, pending;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigpending(&pending);
	int was_pending = sigismember(&pending, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	ssize_t r = write(fd, b, n);
	int e = errno;
	if (r < 0 && e == EPIPE && !was_pending) {
		struct timespec zero = {0, 0};
		while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = e;
	return r;
}

static void do_write(pipe_if *p)
{
	while (p->wfd >= 0 && p->tx_off < p->tx_len) {
		ssize_t n = write_nosigpipe(p->wfd, p->tx + p->tx_off, p->tx_len - p->tx_off);
		if (n > 0) {
			p->tx_off += (size_t)n;
			p->txb += (uint64_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			p->host->watch_modify(p->host->hctx, p->ww, RNSC_IFACE_EV_WRITE);
			return;
		}
		pipes_down(p, n < 0 ? strerror(errno) : "write returned 0");
		return;
	}
	p->tx_off = p->tx_len = 0;
	if (p->ww)
		p->host->watch_modify(p->host->hctx, p->ww, 0);
}

static void io_cb(void *ud, int fd, unsigned events)
{
	pipe_if *p = ud;
	if (fd == p->rfd && (events & (RNSC_IFACE_EV_READ | RNSC_IFACE_EV_ERROR)))
		do_read(p); /* a hang-up shows up as end of output */
	else if (fd == p->wfd && (events & RNSC_IFACE_EV_ERROR) && !(events & RNSC_IFACE_EV_WRITE))
		pipes_down(p, "the subprocess closed its input");
	else if (fd == p->wfd && (events & RNSC_IFACE_EV_WRITE))
		do_write(p);
}

/* ---- ops ------------------------------------------------------------------------------- */

static const char *const pipe_types[] = {"PipeInterface", NULL};

static void free_if(pipe_if *p)
{
	pipe_inst *inst = p->inst;
	xfree(inst, p->argbuf);
	xfree(inst, p->tx);
	xfree(inst, p);
}

static void end_child(pipe_if *p)
{
	if (p->pid <= 0)
		return;
	/* Its stdin is closed already; give it a moment to go by itself, then insist. */
	kill(p->pid, SIGTERM);
	for (int k = 0; k < 20; k++) {
		if (try_reap(p))
			return;
		struct timespec ts = {0, 5 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	kill(p->pid, SIGKILL);
	int st;
	while (waitpid(p->pid, &st, 0) < 0 && errno == EINTR)
		;
	p->pid = 0;
}

static void pipe_close(void *handle)
{
	pipe_if *p = handle;
	close_pipes(p);
	end_child(p);
	stop_reap_watch(p);
	if (p->reap_timer)
		p->host->timer_del(p->host->hctx, p->reap_timer);
	if (p->respawn_timer)
		p->host->timer_del(p->host->hctx, p->respawn_timer);
	free_if(p);
}

static int pipe_open(void *instp, const rnsc_iface_config *cfg, const rnsc_iface_host_api *host,
		     void **handle)
{
	pipe_inst *inst = instp;
	const char *command = NULL, *why = NULL;
	char msg[512];
	int rc;
	if (strcmp(cfg->type, "PipeInterface") != 0)
		return cfg->fail(cfg->cctx, "type", RNSC_ERR_NOTFOUND, "not a pipe interface type");
	rc = cfg->get_str(cfg->cctx, "command", &command);
	if (rc == RNSC_ERR_NOTFOUND)
		return cfg->fail(cfg->cctx, "command", RNSC_ERR_CONFIG_VALUE,
				 "No command specified for PipeInterface");
	if (rc)
		return rc;
	pipe_if *p = xalloc(inst, sizeof(*p));
	if (!p)
		return cfg->fail(cfg->cctx, NULL, RNSC_ERR_NOMEM, "out of memory");
	p->inst = inst;
	p->host = host;
	p->pid = 0;
	p->pidfd = p->rfd = p->wfd = -1;
	snprintf(p->name, sizeof(p->name), "%s", cfg->name);
	size_t cap = strlen(command) + 1;
	if (!(p->argbuf = xalloc(inst, cap))) {
		rc = cfg->fail(cfg->cctx, NULL, RNSC_ERR_NOMEM, "out of memory");
		goto fail;
	}
	rc = rnsc_shlex_split(command, p->argbuf, cap, p->argv, MAX_ARGS, &why);
	if (rc <= 0) {
		snprintf(msg, sizeof(msg), "cannot split the command: %s",
			 rc == 0                    ? "it is empty"
			 : rc == RNSC_ERR_MALFORMED ? why
						    : "more than 255 arguments");
		rc = cfg->fail(cfg->cctx, "command", RNSC_ERR_CONFIG_VALUE, msg);
		goto fail;
	}
	double delay = 5.0;
	if ((rc = cfg->get_float(cfg->cctx, "respawn_delay", &delay)) && rc != RNSC_ERR_NOTFOUND)
		goto fail;
	if (!(delay >= 0 && delay <= 86400)) {
		rc = cfg->fail(cfg->cctx, "respawn_delay", RNSC_ERR_CONFIG_VALUE,
			       "must be between 0 and 86400 seconds");
		goto fail;
	}
	p->respawn_ns = (uint64_t)(delay * 1e9);
	int64_t v;
	p->bitrate = PIPE_BITRATE_GUESS;
	if ((rc = cfg->get_int(cfg->cctx, "bitrate", &v)) == 0) {
		if (v >= RET_MINIMUM_BITRATE)
			p->bitrate = (uint64_t)v;
	} else if (rc != RNSC_ERR_NOTFOUND) {
		goto fail;
	}
	rnsc_hdlc_decoder_init(&p->dec, p->rxbuf, sizeof(p->rxbuf));
	rnsc_hdlc_decoder_set_min(&p->dec, RNSC_HDLC_REF_MIN_FRAME);
	if ((rc = host->timer_new(host->hctx, respawn_cb, p, &p->respawn_timer))) {
		rc = cfg->fail(cfg->cctx, NULL, rc, "cannot create a timer");
		goto fail;
	}
	/* Like the reference's constructor: the first start must work. */
	if ((rc = spawn_child(p, msg, sizeof(msg))) != 0) {
		rc = cfg->fail(cfg->cctx, "command", rc, msg);
		goto fail_child;
	}
	go_online(p);
	plog(p, RNSC_LOG_VERBOSE, "Subprocess pipe for PipeInterface[%s] is now connected",
	     p->name);
	*handle = p;
	return 0;
fail_child:
	close_pipes(p);
	end_child(p);
	stop_reap_watch(p);
	if (p->reap_timer)
		host->timer_del(host->hctx, p->reap_timer);
fail:
	if (p->respawn_timer)
		host->timer_del(host->hctx, p->respawn_timer);
	free_if(p);
	return rc;
}

static int pipe_send(void *handle, const uint8_t *frame, size_t len)
{
	pipe_if *p = handle;
	if (!p->online || p->wfd < 0) {
		p->host->drop(p->host->hctx, RNSC_IFACE_DROP_OFFLINE, 1);
		return RNSC_ERR_STATE;
	}
	size_t need = rnsc_hdlc_encoded_len(frame, len);
	int rc = rnsc_txq_reserve(p->inst, &p->tx, &p->tx_off, &p->tx_len, &p->tx_cap, need,
				  TXQ_MAX, 4096);
	if (rc) {
		p->host->drop(p->host->hctx, RNSC_IFACE_DROP_TXQUEUE, 1);
		return rc;
	}
	int n = rnsc_hdlc_encode(p->tx + p->tx_len, p->tx_cap - p->tx_len, frame, len);
	if (n < 0)
		return n;
	p->tx_len += (size_t)n;
	p->txp++;
	if (p->tx_off == 0 && p->tx_len == (size_t)n)
		do_write(p); /* nothing was waiting for the pipe to drain */
	return 0;
}

static int pipe_stats(void *handle, rnsc_iface_stats *out)
{
	pipe_if *p = handle;
	out->rx_bytes = p->rxb;
	out->tx_bytes = p->txb;
	out->rx_packets = p->rxp;
	out->tx_packets = p->txp;
	out->online = p->online;
	out->bitrate = p->bitrate;
	out->hw_mtu = PIPE_HW_MTU;
	out->reconnects = p->spawns ? p->spawns - 1 : 0; /* respawns */
	return 0;
}

static int pipe_describe(void *handle, char *buf, size_t cap)
{
	pipe_if *p = handle;
	return snprintf(buf, cap, "PipeInterface[%s]", p->name);
}

RNSC_IFACE_PLUGIN("pipe", "PipeInterface (HDLC over a subprocess's stdin and stdout)", pipe_types,
		  pipe_open, pipe_send, pipe_stats, pipe_close, pipe_describe)
