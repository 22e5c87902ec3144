/* SPDX-License-Identifier: MIT */
/*
 * One echo benchmark run: a server on rnsc's runtime (rnsc_loop and the IO models of
 * include/rnsc/loop.h) and a load-generating client, in one process, over real sockets on
 * 127.0.0.1. The matrix runner (echo_matrix.c) starts a fresh process per run and reads
 * the one result line echo_result_print() writes; the Boost.Asio peer prints the same line.
 */
#ifndef RNSC_ECHO_RUN_H
#define RNSC_ECHO_RUN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "echo_msg.h"
#include "loop.h"

typedef struct echo_opts {
	const char *proto;        /* tcp, udp, tls, websocket, wss, http, https */
	enum rnsc_io_model model; /* single: 1 loop/1 thread; pool: 1 loop + workers;
				      sharded: `threads` loops, one thread each */
	unsigned threads;         /* server threads (single: 1) */
	size_t payload;           /* bytes per message, ECHO_MIN_PAYLOAD..ECHO_MAX_PAYLOAD */
	unsigned clients;         /* connections (UDP: sockets) */
	unsigned window;          /* messages in flight per client */
	double warmup_s, measure_s, drain_s;
} echo_opts;

typedef struct echo_result {
	uint64_t echoes;  /* echoes received in the measured interval */
	double elapsed_s; /* measured interval */
	double rt_per_s;  /* echoes / elapsed */
	double mib_per_s; /* 2 * payload * echoes / elapsed, MiB */
	double p50_us, p95_us, p99_us;
	double cpu_pct; /* process CPU over the measured interval, 100 = one core */
	long rss_kib;   /* peak RSS */
	uint64_t err[ECHO_ERR_COUNT];
} echo_result;

/* Runs one measurement. Returns 0, or a negative rnsc_err after printing why to stderr
 * (socket set-up failed, bad options). Errors seen while measuring are counted in
 * res->err, not returned. */
int echo_run_rnsc(const echo_opts *o, echo_result *res);

/* `--one PROTO MODEL THREADS PAYLOAD CLIENTS WINDOW WARMUP MEASURE DRAIN` (argv[0] is
 * "--one"): one run, its result line on stdout. Returns 0, 1 (the run could not be set up)
 * or 2 (bad arguments); who names the program in messages. */
int echo_run_main(int argc, char **argv, const char *who);

/* 1 when name is one of the protocols above. */
int echo_proto_known(const char *name);
/* 1 for tls, wss and https. */
int echo_proto_needs_tls(const char *name);

/* Makes sure RNSC_ECHO_CERT and RNSC_ECHO_KEY name a certificate and its key: when unset,
 * a self-signed P-256 pair for localhost/127.0.0.1 is made with the openssl CLI in a
 * temporary directory (removed at exit) and the variables are set, so processes started
 * afterwards (the runs, the peer) use the same pair. 0 or -1 after saying why. */
int echo_tls_material(void);

/* The result line: "ECHO impl=... proto=... key=value ...". */
void echo_result_print(FILE *f, const char *impl, const echo_opts *o, const echo_result *r);

#endif
