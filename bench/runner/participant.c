/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "participant.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int part_spawn(part *p, char *const argv[], const char *log_path)
{
	memset(p, 0, sizeof(*p));
	p->in_fd = p->out_fd = -1;
	int in[2], out[2];
	if (pipe2(in, O_CLOEXEC) != 0)
		return -1;
	if (pipe2(out, O_CLOEXEC) != 0) {
		close(in[0]), close(in[1]);
		return -1;
	}
	int log = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	pid_t pid = log < 0 ? -1 : fork();
	if (pid < 0) {
		int e = errno;
		close(in[0]), close(in[1]), close(out[0]), close(out[1]);
		if (log >= 0)
			close(log);
		errno = e;
		return -1;
	}
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(log, 2);
		execv(argv[0], argv);
		dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
		dprintf(1, "error reason=exec_failed\n");
		_exit(127);
	}
	close(in[0]), close(out[1]), close(log);
	p->pid = pid, p->in_fd = in[1], p->out_fd = out[0];
	return 0;
}

int part_send(part *p, const char *line)
{
	char b[512];
	int n = snprintf(b, sizeof(b), "%s\n", line);
	if (n < 0 || (size_t)n >= sizeof(b) || p->in_fd < 0)
		return -1;
	/* a participant that died must not kill the runner with SIGPIPE */
	struct sigaction ign = {.sa_handler = SIG_IGN}, old;
	sigaction(SIGPIPE, &ign, &old);
	ssize_t w = write(p->in_fd, b, (size_t)n);
	sigaction(SIGPIPE, &old, NULL);
	return w == n ? 0 : -1;
}

int part_readline(part *p, double timeout_s, char *line, size_t cap, const char **why)
{
	double end = mono_s() + timeout_s;
	for (;;) {
		char *nl = memchr(p->buf, '\n', p->have);
		if (nl) {
			size_t n = (size_t)(nl - p->buf);
			size_t c = n < cap - 1 ? n : cap - 1;
			memcpy(line, p->buf, c);
			line[c] = '\0';
			memmove(p->buf, nl + 1, p->have - n - 1);
			p->have -= n + 1;
			return (int)c;
		}
		if (p->have == sizeof(p->buf)) {
			*why = "line too long";
			return -1;
		}
		double left = end - mono_s();
		if (left <= 0) {
			*why = "timed out";
			return -1;
		}
		struct pollfd pf = {.fd = p->out_fd, .events = POLLIN};
		int r = poll(&pf, 1, (int)(left * 1000) + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;
		ssize_t k = read(p->out_fd, p->buf + p->have, sizeof(p->buf) - p->have);
		if (k <= 0) {
			*why = "exited";
			return -1;
		}
		p->have += (size_t)k;
	}
}

static void close_fds(part *p)
{
	if (p->in_fd >= 0)
		close(p->in_fd);
	if (p->out_fd >= 0)
		close(p->out_fd);
	p->in_fd = p->out_fd = -1;
}

void part_finish(part *p, double timeout_s)
{
	if (!p->pid || p->reaped)
		return;
	part_send(p, "quit");
	double end = mono_s() + timeout_s;
	while (mono_s() < end) {
		pid_t r = wait4(p->pid, &p->status, WNOHANG, &p->ru);
		if (r == p->pid) {
			p->reaped = 1;
			close_fds(p);
			return;
		}
		usleep(10000);
	}
	part_kill(p);
}

void part_kill(part *p)
{
	if (p->pid && !p->reaped) {
		kill(p->pid, SIGKILL);
		wait4(p->pid, &p->status, 0, &p->ru);
		p->reaped = 1;
	}
	close_fds(p);
}

int part_spawn_service(part *p, char *const argv[], const char *log_path)
{
	memset(p, 0, sizeof(*p));
	p->in_fd = p->out_fd = -1;
	int log = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (log < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(log);
		errno = e;
		return -1;
	}
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);
		dup2(nul, 0);
		dup2(log, 1);
		dup2(log, 2);
		execv(argv[0], argv);
		dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(log);
	p->pid = pid;
	return 0;
}

int part_alive(part *p)
{
	if (!p->pid || p->reaped)
		return 0;
	if (wait4(p->pid, &p->status, WNOHANG, &p->ru) == p->pid) {
		p->reaped = 1;
		return 0;
	}
	return 1;
}

void part_stop(part *p, double timeout_s)
{
	if (!p->pid || p->reaped)
		return;
	kill(p->pid, SIGTERM);
	double end = mono_s() + timeout_s;
	while (mono_s() < end) {
		if (wait4(p->pid, &p->status, WNOHANG, &p->ru) == p->pid) {
			p->reaped = 1;
			close_fds(p);
			return;
		}
		usleep(10000);
	}
	part_kill(p);
}
