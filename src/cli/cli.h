/* SPDX-License-Identifier: MIT */
/* Shared pieces of the rnsc command-line tool. Each subcommand lives in its own cmd_*.c. */
#ifndef RNSC_CLI_H
#define RNSC_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ctx.h"
#include "env.h"
#include "plugin_host.h"
#include "strfmt.h"

/* Exit codes shared by the subcommands (sysexits-like, as scripts expect). */
enum {
	CLI_OK = 0,
	CLI_FAIL = 1,  /* the operation ran and failed (e.g. a disagreement) */
	CLI_USAGE = 2, /* bad command line */
	CLI_SETUP = 3, /* environment problem: no plugins, no reference, unreadable file */
};

/* The program environment (context, plugins, crypto order) is the runtime's rnsc_env;
 * cli_env_open() prints why it could not be set up and returns CLI_OK or CLI_SETUP. */
typedef rnsc_env cli_env;
int cli_env_open(cli_env *env, const char *crypto_order, int verbose);
static inline void cli_env_close(cli_env *env)
{
	rnsc_env_close(env);
}

/* The runtime's text encoders (strfmt.h) under the names the commands use. */
static inline void cli_hex(char *out, const uint8_t *p, size_t len)
{
	rnsc_hex(out, p, len);
}
static inline int cli_unhex(uint8_t *out, size_t cap, const char *hex)
{
	return rnsc_unhex(out, cap, hex);
}
static inline void cli_json_str(FILE *f, const char *s)
{
	rnsc_json_str(f, s);
}
static inline void cli_env_json(FILE *f)
{
	rnsc_env_json(f);
}
/* RNS.prettytime: "1d, 2h, 3m and 4.5s", "-" in front when negative, "0s" for zero. */
void cli_prettytime(char *out, size_t cap, double t);

/* Runs a command of rnsc-ref, the companion program that embeds CPython (conform, bench
 * crypto), found next to the running executable: execs `rnsc-ref SUB argv[1..]`; returns only
 * on failure, after saying why (CLI_SETUP). Keeping CPython out of rnsc keeps every daemon and
 * benchmark participant about 2.5 MiB smaller. */
int cli_exec_ref(const char *sub, int argc, char **argv);

int cmd_plugins(int argc, char **argv);
int cmd_conform(int argc, char **argv);      /* rnsc-ref */
int cmd_bench_crypto(int argc, char **argv); /* rnsc-ref */
int cmd_bench(int argc, char **argv);
int cmd_bench_mesh(int argc, char **argv); /* src/cli/cmd_bench_mesh.c */
int cmd_id(int argc, char **argv);
int cmd_timelock(int argc, char **argv);
int cmd_daemon(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_path(int argc, char **argv);
int cmd_cp(int argc, char **argv); /* cmd_cp.c: rncp */
int cmd_status(int argc, char **argv);
int cmd_x(int argc, char **argv); /* cmd_x.c: rnx */

#endif
