/* SPDX-License-Identifier: MIT */
/* rnsc bench: the scenarios (no name), echo, iface, matrix, mesh, the participant and wire
 * driver the scenario runner starts, and crypto (run by rnsc-ref, which embeds the reference). */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "cli.h"

int cmd_bench(int argc, char **argv)
{
	if (argc < 2 || argv[1][0] == '-')
		return rnsc_bench_scenarios_main(argc, argv);
	if (strcmp(argv[1], "echo") == 0)
		return rnsc_bench_echo_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "participant") == 0)
		return rnsc_bench_participant_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "mesh") == 0)
		return cmd_bench_mesh(argc - 1, argv + 1);
	if (strcmp(argv[1], "driver") == 0)
		return rnsc_bench_driver_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "iface") == 0) /* interface plugins on their own */
		return rnsc_bench_iface_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "matrix") == 0) /* the scenario runner over a grid */
		return rnsc_bench_scenarios_main(argc, argv);
	if (strcmp(argv[1], "crypto") == 0) /* embeds the reference: rnsc-ref runs it */
		return cli_exec_ref("bench-crypto", argc - 1, argv + 1);
	fprintf(stderr,
		"rnsc bench: unknown benchmark '%s' (available: crypto, echo, iface, matrix, mesh; without a\n"
		"name: the scenarios, see rnsc bench --help)\n",
		argv[1]);
	return CLI_USAGE;
}
