/* SPDX-License-Identifier: MIT */
/*
 * rnsc bench mesh: hands over to the mesh runner (bench/mesh/mesh.py) on the venv's python,
 * which drives rnsc daemons and the reference's rnsd in network namespaces. The runner is
 * Python because the workload and the reference side are; it runs this binary as the rnsc
 * daemon (--rnsc).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "pyref.h"

int cmd_bench_mesh(int argc, char **argv)
{
	char self[PATH_MAX], python[PATH_MAX], script[PATH_MAX];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	const char *venv = rnsc_pyref_venv_dir(), *src = rnsc_pyref_src_dir();
	if (sl <= 0 || !venv || !src) {
		fprintf(stderr, "rnsc bench mesh: RNSC_VENV or RNSC_SRCDIR unknown (set them)\n");
		return CLI_SETUP;
	}
	self[sl] = '\0';
	snprintf(python, sizeof(python), "%s/bin/python", venv);
	snprintf(script, sizeof(script), "%s/bench/mesh/mesh.py", src);
	if (access(python, X_OK) != 0 || access(script, R_OK) != 0) {
		fprintf(stderr,
			"rnsc bench mesh: the runner needs %s and %s (run `make venv`, or "
			"set RNSC_VENV / RNSC_SRCDIR)\n",
			python, script);
		return CLI_SETUP;
	}
	/* python script --rnsc self [args after "mesh"] */
	char **av = calloc((size_t)argc + 5, sizeof(*av));
	if (!av)
		return CLI_SETUP;
	int k = 0;
	av[k++] = python;
	av[k++] = script;
	av[k++] = "--rnsc";
	av[k++] = self;
	for (int i = 1; i < argc; i++)
		av[k++] = argv[i];
	av[k] = NULL;
	fflush(NULL);
	execv(python, av);
	fprintf(stderr, "rnsc bench mesh: cannot run %s: %s\n", python, strerror(errno));
	free(av);
	return CLI_SETUP;
}
