/* SPDX-License-Identifier: MIT */
/*
 * Shared by the pipe and serial interface tests: a runtime (ctx, plugin host, loop,
 * interface host) with one plugin loaded, received-frame capture, bounded waits that
 * pump the loop (and an optional per-iteration hook), config helpers, a child-process
 * census from /proc (zombies, live children) and a line-oriented python peer.
 * Single-threaded; static state, one test program per include.
 */
#ifndef RNSC_TESTS_IFACE_HELPERS_H
#define RNSC_TESTS_IFACE_HELPERS_H

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

#define MAXRX 512
static struct {
	rnsc_iface *iface;
	uint8_t *data;
	size_t len;
} rx[MAXRX];
static size_t nrx;
static int online_events, offline_events;

/* Called on every loop iteration of the waits (a pty relay, for instance). */
static void (*pump_hook)(void);

static inline void rx_clear(void)
{
	for (size_t k = 0; k < nrx; k++)
		free(rx[k].data);
	nrx = 0;
}

static inline void on_rx(void *ud, rnsc_iface *iface, const uint8_t *frame, size_t len, uint64_t now)
{
	(void)ud;
	(void)now;
	if (nrx >= MAXRX)
		return;
	rx[nrx].iface = iface;
	rx[nrx].data = malloc(len ? len : 1);
	memcpy(rx[nrx].data, frame, len);
	rx[nrx].len = len;
	nrx++;
}

static inline void on_event(void *ud, rnsc_iface *iface, int ev)
{
	(void)ud;
	(void)iface;
	if (ev == RNSC_IFACE_ONLINE)
		online_events++;
	if (ev == RNSC_IFACE_OFFLINE)
		offline_events++;
}

static inline uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

typedef int (*pred_fn)(void *);

static inline void tick(void)
{
	if (pump_hook)
		pump_hook();
	rnsc_loop_run_once(L, 5);
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

static inline int is_online(void *a)
{
	return rnsc_iface_online(a);
}
static inline int is_offline(void *a)
{
	return !rnsc_iface_online(a);
}
static inline int have_rx(void *a)
{
	return nrx >= *(size_t *)a;
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

static inline void expect_error(const char *text, int code, const char *needle1, const char *needle2)
{
	rnsc_config_error err;
	memset(&err, 0, sizeof(err));
	int rc = open_text(text, &err);
	CU_ASSERT_EQUAL(rc, code);
	if (rc != code || !strstr(err.msg, needle1) || (needle2 && !strstr(err.msg, needle2)))
		fprintf(stderr, "unexpected error %d (%s) for:\n%s\n", rc, err.msg, text);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, needle1));
	if (needle2)
		CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, needle2));
}

static inline int setup(void)
{
	rx_clear();
	online_events = offline_events = 0;
	pump_hook = NULL;
	if (rnsc_loop_new(C, &L) || rnsc_iface_host_new(C, P, L, &H))
		return 1;
	rnsc_iface_host_set_rx(H, on_rx, NULL);
	rnsc_iface_host_set_event(H, on_event, NULL);
	return 0;
}

static inline void teardown(void)
{
	rnsc_iface_host_del(H);
	H = NULL;
	rnsc_loop_del(L);
	L = NULL;
	rx_clear();
	pump_hook = NULL;
}

static inline int load_plugin(const char *so)
{
	char path[4096];
	if (rnsc_ctx_new(&C) || rnsc_plugin_host_new(C, &P))
		return 1;
	snprintf(path, sizeof(path), "%s/plugins/iface/.libs/%s", RNSC_BUILDDIR, so);
	return rnsc_plugin_host_load_file(P, path) != 0;
}

static inline int unload_plugin(void)
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

static inline const char *venv_python(void)
{
	static char py[1024];
	const char *venv = getenv("RNSC_VENV");
	snprintf(py, sizeof(py), "%s/bin/python", venv && *venv ? venv : RNSC_DEFAULT_VENV);
	return py;
}

static inline const char *src_file(const char *rel)
{
	static char path[2][1024];
	static int k;
	const char *src = getenv("RNSC_SRCDIR");
	k ^= 1;
	snprintf(path[k], sizeof(path[k]), "%s/%s", src && *src ? src : RNSC_SRCDIR, rel);
	return path[k];
}

/* A python helper whose stdout we read line by line; it exits when its stdin closes. */
typedef struct peer {
	pid_t pid;
	int in_fd;
	int out_fd;
	char buf[8192];
	size_t len;
} peer;

static inline int peer_start(peer *p, const char *script, const char *const *args)
{
	const char *py = venv_python();
	int in[2], out[2];
	if (pipe(in) || pipe(out))
		return -1;
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
	fcntl(in[1], F_SETFD, FD_CLOEXEC);
	fcntl(out[0], F_SETFD, FD_CLOEXEC);
	p->in_fd = in[1];
	p->out_fd = out[0];
	fcntl(p->out_fd, F_SETFL, fcntl(p->out_fd, F_GETFL) | O_NONBLOCK);
	return 0;
}

static inline int peer_has(peer *p, const char *prefix)
{
	ssize_t n;
	while (p->len + 1 < sizeof(p->buf) &&
	       (n = read(p->out_fd, p->buf + p->len, sizeof(p->buf) - 1 - p->len)) > 0)
		p->len += (size_t)n;
	p->buf[p->len] = 0;
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

static inline void peer_send(peer *p, const char *line)
{
	size_t n = strlen(line);
	if (write(p->in_fd, line, n) != (ssize_t)n)
		fprintf(stderr, "peer_send: %s\n", strerror(errno));
}

static inline void peer_stop(peer *p)
{
	close(p->in_fd);
	int status = 0;
	for (int k = 0; k < 600; k++) {
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

#endif
