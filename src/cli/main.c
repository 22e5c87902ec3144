/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "config.h"

/* conform embeds the reference: rnsc-ref runs it (see cli_exec_ref). */
static int cmd_conform_ref(int argc, char **argv)
{
	return cli_exec_ref("conform", argc, argv);
}

static const struct {
	const char *name;
	int (*fn)(int, char **);
	const char *summary;
} commands[] = {
	{"plugins", cmd_plugins, "list plugins, their kinds, versions and crypto primitives"},
	{"conform", cmd_conform_ref, "cross-check rnsc against the embedded reference and vectors"},
	{"bench", cmd_bench, "benchmarks: scenarios vs the reference; bench crypto; bench echo"},
	{"id", cmd_id, "identity tool: generate, inspect, sign, verify, encrypt, decrypt"},
	{"daemon", cmd_daemon, "run a Reticulum node from the configuration (like rnsd)"},
	{"status", cmd_status, "status of the running shared instance's interfaces (like rnstatus)"},
	{"path", cmd_path, "show or request paths (like rnpath: -t, or one destination hash)"},
	{"cp", cmd_cp, "send or receive files over links as resources (like rncp)"},
	{"probe", cmd_probe, "probe a destination and report round-trip times (like rnprobe)"},
	{"timelock", cmd_timelock, "RandomX time-lock: calibrate the sequential chain, seal, open"},
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: rnsc COMMAND [OPTIONS]\n\n"
		   "rnsc is the Reticulum Network Stack in C.\n\nCommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nRun 'rnsc COMMAND --help' for a command's options.\n"
		   "\nEnvironment:\n"
		   "  RNSC_PLUGIN_PATH  colon-separated folders searched for plugins first\n"
		   "  RNSC_CRYPTO       crypto backend order, e.g. \"sodium, openssl\"\n"
		   "  RNSC_VENV         virtualenv holding the pinned reference (rns)\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return CLI_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return CLI_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("rnsc %s\n", PACKAGE_VERSION);
		return CLI_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "rnsc: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return CLI_USAGE;
}
