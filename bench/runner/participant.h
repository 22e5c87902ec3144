/* SPDX-License-Identifier: MIT */
/*
 * A benchmark participant seen from the runner: a child process speaking the line protocol
 * of bench/participants/rnsc_bench_ref.py on its stdin/stdout (its stderr goes to a log
 * file). Every read has a deadline; a participant that misses one is killed.
 *
 * Ownership: the runner owns the struct; part_finish() or part_kill() reaps the child and
 * closes every fd. Single-threaded.
 */
#ifndef RNSC_BENCH_PARTICIPANT_H
#define RNSC_BENCH_PARTICIPANT_H

#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

typedef struct part {
	pid_t pid;
	int in_fd, out_fd;
	char buf[4096];
	size_t have;
	struct rusage ru; /* from wait4 once reaped */
	int status;       /* wait status once reaped */
	int reaped;
} part;

/* Starts argv[0] (a path) with stderr appended to log_path. Returns 0 or -1 (errno set). */
int part_spawn(part *p, char *const argv[], const char *log_path);
/* Writes one line (a newline is added). Returns 0 or -1. */
int part_send(part *p, const char *line);
/* Reads one line (without its newline) within timeout_s. Returns its length, or -1 on
 * timeout, end of file or error (why in *why). */
int part_readline(part *p, double timeout_s, char *line, size_t cap, const char **why);
/* Sends "quit", waits up to timeout_s for the exit, then kills. Fills ru and status. */
void part_finish(part *p, double timeout_s);
/* Starts a service (a relay under test) that speaks no protocol: stdin /dev/null, stdout and
 * stderr appended to log_path. Returns 0 or -1 (errno set). */
int part_spawn_service(part *p, char *const argv[], const char *log_path);
/* 1 while the child runs (reaps it, filling ru, once it has exited). */
int part_alive(part *p);
/* SIGTERM, waits up to timeout_s for the exit (ru filled), then SIGKILL. */
void part_stop(part *p, double timeout_s);
/* SIGKILL and reap. Safe on a part that never started (pid 0). */
void part_kill(part *p);

#endif
