/* SPDX-License-Identifier: MIT */
/*
 * rnsc-echo: one echo benchmark run in a lean process that links only rnsc's runtime and
 * core (no embedded interpreter, no libffi), so its RSS is that of the runtime the run
 * measures. `rnsc bench echo` starts it for every rnsc run when it is built beside it.
 * Usage: rnsc-echo --one PROTO MODEL THREADS PAYLOAD CLIENTS WINDOW WARMUP MEASURE DRAIN
 */
#include <string.h>

#include "echo_run.h"

int main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--one") != 0)
		return echo_run_main(0, argv, "rnsc-echo");
	return echo_run_main(argc - 1, argv + 1, "rnsc-echo");
}
