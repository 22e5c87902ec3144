/* SPDX-License-Identifier: MIT */
/*
 * Scaffolding shared by the interface-plugin tests (tests/live/iface_*_test.c): one plugin
 * loaded per suite, one loop + interface host per test, captured inbound frames and
 * interface events, bounded waits that pump the loop (and an optional per-iteration
 * hook), config helpers, the frame generator the python peers also use, a child-process
 * census from /proc and a python peer process (the venv's interpreter running a tests/live/
 * script, most of them driving the reference's own interface classes). Single-threaded;
 * the globals belong to the one test binary that includes this header.
 */
#ifndef RNSC_TESTS_IFACE_TEST_UTIL_H
#define RNSC_TESTS_IFACE_TEST_UTIL_H

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cu_run.h"
#include "iface_host.h"

static rnsc_ctx *C;
static rnsc_plugin_host *P;
static rnsc_loop *L;
static rnsc_iface_host *H;

/* Frame i of a test run: LENGTHS-driven, with bytes that need HDLC escaping (and a
 * lookalike) at 1..3. The python peers generate the same bytes. */
static inline size_t tu_make_frame(const size_t *lengths, unsigned i, uint8_t *out)
{
	size_t n = lengths[i];
	for (size_t j = 0; j < n; j++)
		out[j] = (uint8_t)((i * 31 + j * 7) & 0xFF);
	out[1] = 0x7E;
	out[2] = 0x7D;
	out[3] = 0x5E;
	return n;
}

#define TU_MAXRX 1024
static struct {
	rnsc_iface *iface;
	uint8_t *data;
	size_t len;
} rx[TU_MAXRX];
static size_t nrx;

static inline void rx_clear(void)
{
	for (size_t k = 0; k < nrx; k++)
		free(rx[k].data);
	nrx = 0;
}

static inline void tu_on_rx(void *ud, rnsc_iface *iface, const uint8_t *frame, size_t len,
			    uint64_t now)
{
	(void)ud;
	(void)now;
	if (nrx >= TU_MAXRX)
		return;
	rx[nrx].iface = iface;
	rx[nrx].data = malloc(len ? len : 1);
	memcpy(rx[nrx].data, frame, len);
	rx[nrx].len = len;
	nrx++;
}

/* Interface events since tu_setup; last_child is the newest spawned child still there. */
static int online_events, offline_events;
static rnsc_iface *last_child;
static int added_children;

static inline void tu_on_event(void *ud, rnsc_iface *iface, int ev)
{
	(void)ud;
	if (ev == RNSC_IFACE_ONLINE)
		online_events++;
	if (ev == RNSC_IFACE_OFFLINE)
		offline_events++;
	if (ev == RNSC_IFACE_ADDED && rnsc_iface_parent(iface)) {
		last_child = iface;
		added_children++;
	}
	if (ev == RNSC_IFACE_REMOVED && iface == last_child)
		last_child = NULL;
}

/* Called on every loop iteration of the waits (a pty relay, for instance). */
static void (*pump_hook)(void);

static inline uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

typedef int (*pred_fn)(void *);

/* One loop iteration. A hook pumps something outside the loop, so it gets called at
 * least every 5 ms; without one, 10 ms (the loop wakes earlier for its own fds). */
static inline void tick(void)
{
	if (pump_hook)
		pump_hook();
	rnsc_loop_run_once(L, pump_hook ? 5 : 10);
}

/* Runs the loop until pred holds or timeout_ms passes; returns pred's final value. */
static inline int run_until(pred_fn pred, void *arg, unsigned timeout_ms)
{
	uint64_t end = mono_ms() + timeout_ms;
	while (!pred(arg)) {
		if (mono_ms() >= end)
			return 0;
		tick();
	}
	return 1;
}

static inline void run_for(unsigned ms)
{
	uint64_t end = mono_ms() + ms;
	while (mono_ms() < end)
		tick();
}

/* Every captured frame must be one of the nframes make() builds (longest maxlen bytes),
 * on iface when it is not NULL, and each of them must have arrived exactly `times` times. */
static inline int tu_frames_match(size_t (*make)(unsigned, uint8_t *), unsigned nframes,
				  size_t maxlen, rnsc_iface *iface, unsigned times)
{
	uint8_t *want = malloc(maxlen);
	unsigned *seen = calloc(nframes, sizeof(*seen));
	int ok = want && seen;
	for (size_t k = 0; ok && k < nrx; k++) {
		if (iface && rx[k].iface != iface) {
			ok = 0;
			break;
		}
		int hit = 0;
		for (unsigned i = 0; i < nframes && !hit; i++) {
			size_t n = make(i, want);
			if (n == rx[k].len && memcmp(want, rx[k].data, n) == 0) {
				seen[i]++;
				hit = 1;
			}
		}
		ok = hit;
	}
	for (unsigned i = 0; ok && i < nframes; i++)
		ok = seen[i] == times;
	free(want);
	free(seen);
	return ok;
}

static inline int is_online(void *a)
{
	return rnsc_iface_online(a);
}
static inline int is_offline(void *a)
{
	return !rnsc_iface_online(a);
}
static inline int child_online(void *a)
{
	(void)a;
	return last_child && rnsc_iface_online(last_child);
}
static inline int have_rx(void *a)
{
	return nrx >= *(size_t *)a;
}
static inline int host_count_is(void *a)
{
	return rnsc_iface_host_count(H) == *(size_t *)a;
}

static inline int open_text(const char *text, rnsc_config_error *err)
{
	rnsc_config *cfg = NULL;
	int rc = rnsc_config_parse(C, text, strlen(text), "test", &cfg, err);
	if (rc)
		return rc;
	rc = rnsc_iface_host_open_config(H, cfg, err);
	rnsc_config_del(cfg);
	return rc;
}

/* Opens [[name]] of type with the given option lines; returns it or NULL (logged). */
static inline rnsc_iface *open_iface(const char *name, const char *type, const char *opts)
{
	char text[2048];
	rnsc_config_error err;
	snprintf(text, sizeof(text), "[interfaces]\n  [[%s]]\n    type = %s\n    enabled = yes\n%s",
		 name, type, opts ? opts : "");
	int rc = open_text(text, &err);
	if (rc != 1)
		fprintf(stderr, "open %s: %d %s\n", name, rc, err.msg);
	return rnsc_iface_host_find(H, name);
}

static inline unsigned port_of(rnsc_iface *i)
{
	rnsc_iface_status st;
	rnsc_iface_status_get(i, &st);
	return st.stats.local_port;
}

static inline int tu_setup(void)
{
	rx_clear();
	online_events = offline_events = 0;
	last_child = NULL;
	added_children = 0;
	pump_hook = NULL;
	if (rnsc_loop_new(C, &L) || rnsc_iface_host_new(C, P, L, &H))
		return 1;
	rnsc_iface_host_set_rx(H, tu_on_rx, NULL);
	rnsc_iface_host_set_event(H, tu_on_event, NULL);
	return 0;
}

static inline void tu_teardown(void)
{
	rnsc_iface_host_del(H);
	H = NULL;
	rnsc_loop_del(L);
	L = NULL;
	rx_clear();
	pump_hook = NULL;
}

static inline void tu_expect_error(const char *text, int code, const char *needle1,
				   const char *needle2)
{
	rnsc_config_error err = {0};
	int rc = open_text(text, &err);
	CU_ASSERT_EQUAL(rc, code);
	if (rc != code || !strstr(err.msg, needle1) || (needle2 && !strstr(err.msg, needle2)))
		fprintf(stderr, "unexpected error %d (%s) for:\n%s\n", rc, err.msg, text);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, needle1));
	if (needle2)
		CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, needle2));
}

/* Loads plugins/iface/.libs/<so> into a fresh plugin host. */
static inline int tu_suite_init(const char *so)
{
	char path[4096];
	if (rnsc_ctx_new(&C) || rnsc_plugin_host_new(C, &P))
		return 1;
	snprintf(path, sizeof(path), "%s/plugins/iface/.libs/%s", RNSC_BUILDDIR, so);
	return rnsc_plugin_host_load_file(P, path) != 0;
}

static inline int tu_suite_fini(void)
{
	rnsc_plugin_host_del(P);
	rnsc_ctx_del(C);
	return 0;
}

/* Children of this process from /proc: all of them, and those that are zombies. */
static inline void child_census(int *live, int *zombies)
{
	*live = *zombies = 0;
	DIR *d = opendir("/proc");
	if (!d)
		return;
	struct dirent *e;
	pid_t me = getpid();
	while ((e = readdir(d))) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		char path[300], buf[512];
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = 0;
		char *rp = strrchr(buf, ')'); /* the command name may hold anything */
		char state;
		int ppid;
		if (!rp || sscanf(rp + 1, " %c %d", &state, &ppid) != 2 || ppid != me)
			continue;
		if (state == 'Z')
			(*zombies)++;
		else
			(*live)++;
	}
	closedir(d);
}

/* The venv's interpreter (RNSC_VENV, else the configured one); a static buffer. */
static inline const char *venv_python(void)
{
	static char py[1024];
	const char *venv = getenv("RNSC_VENV");
	snprintf(py, sizeof(py), "%s/bin/python", venv && *venv ? venv : RNSC_DEFAULT_VENV);
	return py;
}

/* rel under the source tree (RNSC_SRCDIR, else the configured one); two static buffers
 * alternate, so two results can be used together. */
static inline const char *src_file(const char *rel)
{
	static char path[2][1024];
	static int k;
	const char *src = getenv("RNSC_SRCDIR");
	k ^= 1;
	snprintf(path[k], sizeof(path[k]), "%s/%s", src && *src ? src : RNSC_SRCDIR, rel);
	return path[k];
}

/* ---- the python peer ------------------------------------------------------------------ */

typedef struct peer {
	pid_t pid;
	int in_fd;  /* its stdin */
	int out_fd; /* its stdout, non-blocking */
	char buf[8192];
	size_t len;
} peer;

/* Starts `python <script> args...` (args NULL-terminated, 12 at most) with its stdin and
 * stdout piped to us. A peer that cannot start exits 127 and says why on stderr; the
 * caller's bounded wait for its first line then fails. */
static inline int peer_startv(peer *p, const char *script, const char *const *args)
{
	const char *py = venv_python();
	int in[2], out[2];
	if (pipe(in))
		return -1;
	if (pipe(out)) {
		close(in[0]);
		close(in[1]);
		return -1;
	}
	memset(p, 0, sizeof(*p));
	p->pid = fork();
	if (p->pid < 0)
		return -1;
	if (p->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		const char *argv[16] = {py, script};
		for (int k = 0; args[k] && k < 12; k++)
			argv[2 + k] = args[k];
		execv(py, (char *const *)argv);
		fprintf(stderr, "cannot run %s: %s\n", py, strerror(errno));
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	/* Keep our ends out of children the plugins spawn (pipe interfaces). */
	fcntl(in[1], F_SETFD, FD_CLOEXEC);
	fcntl(out[0], F_SETFD, FD_CLOEXEC);
	p->in_fd = in[1];
	p->out_fd = out[0];
	fcntl(p->out_fd, F_SETFL, fcntl(p->out_fd, F_GETFL) | O_NONBLOCK);
	return 0;
}

/* Starts `python tests/live/<script> mode [arg]`. */
static inline int peer_start(peer *p, const char *script, const char *mode, const char *arg)
{
	char rel[256];
	snprintf(rel, sizeof(rel), "tests/live/%s", script);
	const char *args[] = {mode, arg, NULL};
	return peer_startv(p, src_file(rel), args);
}

/* Collects what the peer has written so far into p->buf (NUL-terminated). */
static inline void peer_read(peer *p)
{
	ssize_t n;
	while (p->len + 1 < sizeof(p->buf) &&
	       (n = read(p->out_fd, p->buf + p->len, sizeof(p->buf) - 1 - p->len)) > 0)
		p->len += (size_t)n;
	p->buf[p->len] = 0;
}

/* Collects the peer's output; true once a complete line starting with prefix is there. */
static inline int peer_has(peer *p, const char *prefix)
{
	peer_read(p);
	for (const char *l = p->buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, prefix, strlen(prefix)) == 0 && strchr(l, '\n'))
			return 1;
	return 0;
}

static inline const char *peer_line(peer *p, const char *prefix)
{
	for (const char *l = p->buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, prefix, strlen(prefix)) == 0)
			return l;
	return "";
}

static inline void peer_say(peer *p, const char *line)
{
	size_t n = strlen(line);
	if (write(p->in_fd, line, n) != (ssize_t)n)
		fprintf(stderr, "cannot write to the peer: %s\n", strerror(errno));
}

static inline void peer_stop(peer *p)
{
	close(p->in_fd); /* the peer exits when its stdin closes */
	int status = 0;
	uint64_t end = mono_ms() + 3000; /* then it is killed */
	while (mono_ms() < end) {
		if (waitpid(p->pid, &status, WNOHANG) == p->pid) {
			close(p->out_fd);
			return;
		}
		if (L)
			tick();
		else
			usleep(5000);
	}
	kill(p->pid, SIGKILL);
	waitpid(p->pid, &status, 0);
	close(p->out_fd);
}

static peer *cur_peer;
static inline int peer_done(void *a)
{
	size_t want = *(size_t *)a;
	return nrx >= want && peer_has(cur_peer, "RESULT");
}
static inline int peer_port(void *a)
{
	(void)a;
	return peer_has(cur_peer, "PORT ") || peer_has(cur_peer, "RESULT");
}

#endif
