/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

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
	{"bench", cmd_bench,
	 "benchmarks: scenarios vs the reference; bench crypto, echo, iface, matrix"},
	{"id", cmd_id, "identity tool: generate, inspect, sign, verify, encrypt, decrypt"},
	{"daemon", cmd_daemon, "run a Reticulum node from the configuration (like rnsd)"},
	{"status", cmd_status,
	 "status of the running shared instance's interfaces (like rnstatus)"},
	{"path", cmd_path, "show or request paths (like rnpath: -t, or one destination hash)"},
	{"cp", cmd_cp, "send or receive files over links as resources (like rncp)"},
	{"x", cmd_x, "execute commands on a remote listener, or listen for them (like rnx)"},
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
		   "  RNSC_VENV         virtualenv holding the pinned reference (rns)\n"
		   "  RNSC_REF_VERSION  reference release to embed: 1.5.4 (baseline) or 1.5.7\n"
		   "  GLIBC_TUNABLES    glibc.malloc.* settings replace rnsc's malloc thresholds\n"
		   "                    (blocks up to 4 MiB from the heap, 8 MiB kept free)\n");
}

/*
 * glibc serves blocks above a dynamic threshold (128 KiB at first) with mmap and gives the
 * top of the heap back beyond 2x that, so every resource segment (about 1 MiB of data,
 * again as ciphertext, again when assembled) came from fresh pages: each page faulted and
 * was zeroed on every segment. Blocks up to 4 MiB are kept in the heap and up to 8 MiB of
 * free heap top retained, which the resource-segment cell repays for about 1 MiB more peak
 * RSS per side (bench/results/design-notes.md, "malloc thresholds"). Larger blocks (the packet hashlist's tables) still map and unmap directly. A
 * GLIBC_TUNABLES setting of glibc.malloc.* takes precedence.
 */
static void tune_malloc(void)
{
#if defined(__GLIBC__) && defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
	const char *t = getenv("GLIBC_TUNABLES");
	if (t && strstr(t, "glibc.malloc."))
		return;
	(void)mallopt(M_MMAP_THRESHOLD, 4 << 20);
	(void)mallopt(M_TRIM_THRESHOLD, 8 << 20);
#endif
}

int main(int argc, char **argv)
{
	tune_malloc();
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
