/* SPDX-License-Identifier: MIT */
/*
 * bench/ as a library: the benchmark programs' entry points, which the CLI's `rnsc bench`
 * dispatches to (never the reverse: nothing here includes the CLI). Each takes the
 * arguments after its subcommand name and returns one of the exit codes below, which mean
 * what the CLI's own exit codes mean.
 */
#ifndef RNSC_BENCH_H
#define RNSC_BENCH_H

enum {
	BENCH_OK = 0,
	BENCH_FAIL = 1,  /* the measurement ran and a check failed */
	BENCH_USAGE = 2, /* bad command line */
	BENCH_SETUP =
		3, /* environment problem: no plugins, no reference, a peer that won't start */
};

int rnsc_bench_echo_main(int argc, char **argv);        /* bench/echo/echo_matrix.c */
int rnsc_bench_scenarios_main(int argc, char **argv);   /* bench/runner/scenario_run.c */
int rnsc_bench_participant_main(int argc, char **argv); /* bench/participants/rnsc_participant.c */
int rnsc_bench_driver_main(int argc, char **argv);      /* bench/driver/wire_driver.c */
int rnsc_bench_iface_main(int argc, char **argv);       /* bench/runner/iface_bench.c */

#endif
