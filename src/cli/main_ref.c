/* SPDX-License-Identifier: MIT */
/* rnsc-ref: the commands that embed the reference (CPython and the pinned rns) in-process.
 * rnsc runs them (`rnsc conform`, `rnsc bench crypto`) by exec'ing this program, so that rnsc
 * itself, every daemon and every benchmark participant, does not link libpython. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "config.h"

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "conform") == 0)
		return cmd_conform(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "bench-crypto") == 0)
		return cmd_bench_crypto(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
		printf("rnsc-ref %s\n", PACKAGE_VERSION);
		return CLI_OK;
	}
	fprintf(argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
			? stdout
			: stderr,
		"Usage: rnsc-ref conform [OPTIONS]       (what `rnsc conform` runs)\n"
		"       rnsc-ref bench-crypto [OPTIONS]  (what `rnsc bench crypto` runs)\n\n"
		"The rnsc commands that embed the reference (CPython with the pinned rns) in\n"
		"this process. Use them through rnsc; see `rnsc conform --help` and\n"
		"`rnsc bench crypto --help`.\n");
	return argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
		       ? CLI_OK
		       : CLI_USAGE;
}
