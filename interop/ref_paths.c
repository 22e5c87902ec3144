/* SPDX-License-Identifier: MIT */
/*
 * Where the pinned reference and the interop scripts live. Kept apart from pyref.c, which
 * embeds CPython, so that programs which only start the reference as a separate process (the
 * benchmark runner, rnsc bench mesh) do not link libpython.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pyref.h"

#define HARNESS "rnsc_refharness"

const char *rnsc_pyref_ref_version(void)
{
	const char *v = getenv("RNSC_REF_VERSION");
	return v && *v ? v : NULL;
}

/* $RNSC_VENV always wins (an explicit choice). Without it, RNSC_REF_VERSION=1.5.7 picks the
 * build's second venv, any other release the sibling "<default venv>-<version>". */
const char *rnsc_pyref_venv_dir(void)
{
	const char *v = getenv("RNSC_VENV");
	if (v && *v)
		return v;
#ifdef RNSC_DEFAULT_VENV
	const char *want = rnsc_pyref_ref_version();
	if (!want)
		return RNSC_DEFAULT_VENV;
#ifdef RNSC_DEFAULT_VENV_157
	if (strcmp(want, "1.5.7") == 0)
		return RNSC_DEFAULT_VENV_157;
#endif
	static char sibling[PATH_MAX];
	snprintf(sibling, sizeof(sibling), "%s-%s", RNSC_DEFAULT_VENV, want);
	return sibling;
#else
	return NULL;
#endif
}

/* The directory holding interop/python/ (the harness) and interop/requirements.txt (the pin):
 * $RNSC_SRCDIR, else the source tree this was built from, else the installed copy. */
const char *rnsc_pyref_src_dir(void)
{
	const char *candidates[3];
	size_t n = 0;
	const char *env = getenv("RNSC_SRCDIR");
	if (env && *env)
		return env; /* an explicit choice is never second-guessed */
#ifdef RNSC_SRCDIR
	candidates[n++] = RNSC_SRCDIR;
#endif
#ifdef RNSC_PKGDATADIR
	candidates[n++] = RNSC_PKGDATADIR;
#endif
	for (size_t i = 0; i < n; i++) {
		char probe[PATH_MAX];
		snprintf(probe, sizeof(probe), "%s/interop/python/" HARNESS ".py", candidates[i]);
		if (access(probe, R_OK) == 0)
			return candidates[i];
	}
	return n ? candidates[0] : NULL;
}
