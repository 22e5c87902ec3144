/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <string.h>

#include "cli.h"
#include "config.h"
#include "crypto.h"
#include "status_json.h"

int cli_env_open(cli_env *env, const char *crypto_order, int verbose)
{
	return rnsc_env_open(env, crypto_order, verbose, stderr) == 0 ? CLI_OK : CLI_SETUP;
}

int cli_exec_ref(const char *sub, int argc, char **argv)
{
	char self[PATH_MAX], path[PATH_MAX + 16];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		fprintf(stderr, "rnsc: cannot find its own executable: %s\n", strerror(errno));
		return CLI_SETUP;
	}
	self[n] = '\0';
	char *slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	snprintf(path, sizeof(path), "%s/rnsc-ref", slash ? self : ".");
	char **av = calloc((size_t)argc + 2, sizeof(*av));
	if (!av)
		return CLI_SETUP;
	av[0] = "rnsc-ref";
	av[1] = (char *)sub;
	for (int i = 1; i < argc; i++)
		av[i + 1] = argv[i];
	fflush(NULL);
	execv(path, av);
	fprintf(stderr,
		"rnsc: cannot run %s (%s): the commands that embed the reference live "
		"there; build or install it with rnsc\n",
		path, strerror(errno));
	free(av);
	return CLI_SETUP;
}

/* RNS.prettytime */
void cli_prettytime(char *out, size_t cap, double t)
{
	int neg = t < 0;
	if (neg)
		t = -t;
	long days = (long)(t / 86400);
	t = fmod(t, 86400);
	long hours = (long)(t / 3600);
	t = fmod(t, 3600);
	long minutes = (long)(t / 60);
	t = fmod(t, 60);
	double seconds = round(t * 100) / 100;
	char comp[4][48];
	int nc = 0;
	if (days > 0)
		snprintf(comp[nc++], 48, "%ldd", days);
	if (hours > 0)
		snprintf(comp[nc++], 48, "%ldh", hours);
	if (minutes > 0)
		snprintf(comp[nc++], 48, "%ldm", minutes);
	if (seconds > 0) {
		char r[40];
		rnsc_py_float_repr(r, sizeof(r), seconds);
		snprintf(comp[nc++], 48, "%ss", r);
	}
	size_t o = 0;
	out[0] = 0;
	if (neg && nc)
		o += (size_t)snprintf(out + o, cap - o, "-");
	for (int i = 0; i < nc && o < cap; i++) {
		const char *sep = i == 0 ? "" : i < nc - 1 ? ", " : " and ";
		o += (size_t)snprintf(out + o, cap - o, "%s%s", sep, comp[i]);
	}
	if (!nc)
		snprintf(out, cap, "0s");
}
