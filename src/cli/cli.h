/* SPDX-License-Identifier: MIT */
/* Shared pieces of the rnsc command-line tool. Each subcommand lives in its own cmd_*.c. */
#ifndef RNSC_CLI_H
#define RNSC_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ctx.h"
#include "plugin_host.h"

/* Exit codes shared by the subcommands (sysexits-like, as scripts expect). */
enum {
	CLI_OK = 0,
	CLI_FAIL = 1,  /* the operation ran and failed (e.g. a disagreement) */
	CLI_USAGE = 2, /* bad command line */
	CLI_SETUP = 3, /* environment problem: no plugins, no reference, unreadable file */
};

typedef struct cli_env {
	rnsc_ctx *ctx;
	rnsc_plugin_host *host;
	int verbose;
} cli_env;

/* Creates the context, loads plugins from the default folders and applies the crypto
 * order (crypto_order NULL → $RNSC_CRYPTO or "openssl, sodium" restricted to what
 * loaded). Returns CLI_OK or CLI_SETUP after printing why. */
int cli_env_open(cli_env *env, const char *crypto_order, int verbose);
void cli_env_close(cli_env *env);

void cli_hex(char *out, const uint8_t *p, size_t len); /* out holds 2*len+1 */
int cli_unhex(uint8_t *out, size_t cap, const char *hex); /* returns length or -1 */
void cli_json_str(FILE *f, const char *s);
/* RNS.prettytime: "1d, 2h, 3m and 4.5s", "-" in front when negative, "0s" for zero. */
void cli_prettytime(char *out, size_t cap, double t);
/* "environment": {cpu, kernel, compiler, rnsc_version} (no trailing comma). */
void cli_env_json(FILE *f);

/* Runs a command of rnsc-ref, the companion program that embeds CPython (conform, bench
 * crypto), found next to the running executable: execs `rnsc-ref SUB argv[1..]`; returns only
 * on failure, after saying why (CLI_SETUP). Keeping CPython out of rnsc keeps every daemon and
 * benchmark participant about 2.5 MiB smaller. */
int cli_exec_ref(const char *sub, int argc, char **argv);

int cmd_plugins(int argc, char **argv);
int cmd_conform(int argc, char **argv);       /* rnsc-ref */
int cmd_bench_crypto(int argc, char **argv);  /* rnsc-ref */
int cmd_bench(int argc, char **argv);
int cmd_bench_echo(int argc, char **argv);      /* bench/echo/echo_matrix.c */
int cmd_bench_scenarios(int argc, char **argv); /* bench/runner/scenario_run.c */
int cmd_bench_participant(int argc, char **argv); /* bench/participants/rnsc_participant.c */
int cmd_bench_mesh(int argc, char **argv);        /* src/cli/cmd_bench_mesh.c */
int cmd_bench_iface(int argc, char **argv);       /* bench/runner/iface_bench.c */
int cmd_bench_driver(int argc, char **argv); /* bench/driver/wire_driver.c */
int cmd_id(int argc, char **argv);
int cmd_timelock(int argc, char **argv);
int cmd_daemon(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_path(int argc, char **argv);
int cmd_cp(int argc, char **argv); /* cmd_cp.c: rncp */
int cmd_status(int argc, char **argv);
int cmd_x(int argc, char **argv); /* cmd_x.c: rnx */

#endif
