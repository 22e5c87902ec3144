/* SPDX-License-Identifier: MIT */
#include "logfile.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "err.h"

const char *rnsc_log_level_name(int level)
{
	static const char *const names[] = {"Critical", "Error", "Warning", "Notice", "Info",
					    "Verbose",  "Debug", "Pathing", "Extra"};
	return level >= 0 && level <= 8 ? names[level] : "Unknown";
}

int rnsc_logfile_open(rnsc_logfile *lf, const char *path, uint64_t max)
{
	if (!lf)
		return RNSC_ERR_INVAL;
	memset(lf, 0, sizeof(*lf));
	lf->timestamps = 1;
	lf->max = max;
	if (!path) {
		lf->f = stdout;
		return 0;
	}
	if (!(lf->path = strdup(path)))
		return RNSC_ERR_NOMEM;
	if (!(lf->f = fopen(path, "a"))) {
		free(lf->path);
		lf->path = NULL;
		return RNSC_ERR_IO;
	}
	return 0;
}

void rnsc_logfile_close(rnsc_logfile *lf)
{
	if (!lf)
		return;
	if (lf->f && lf->f != stdout)
		fclose(lf->f);
	free(lf->path);
	memset(lf, 0, sizeof(*lf));
}

/* The file's writes failed: on to the console, as RNS.log does. */
static void to_console(rnsc_logfile *lf, const char *why)
{
	if (lf->f && lf->f != stdout)
		fclose(lf->f);
	lf->f = stdout;
	fprintf(stdout, "[Critical] cannot write the log file %s (%s): logging to the console\n",
		lf->path ? lf->path : "", why);
	free(lf->path);
	lf->path = NULL;
}

static void rotate(rnsc_logfile *lf)
{
	size_t n = strlen(lf->path) + 3;
	char *prev = malloc(n);
	if (!prev)
		return;
	snprintf(prev, n, "%s.1", lf->path);
	fclose(lf->f);
	lf->f = NULL;
	(void)unlink(prev);
	int moved = rename(lf->path, prev) == 0;
	free(prev);
	lf->f = fopen(lf->path, "a");
	if (!lf->f)
		to_console(lf, "cannot reopen it after rotation");
	else if (moved)
		lf->rotations++;
}

void rnsc_logfile_write(rnsc_logfile *lf, int level, const char *who, const char *msg)
{
	if (!lf || !lf->f)
		return;
	char ts[40] = "";
	if (lf->timestamps) {
		time_t now = time(NULL);
		struct tm tm;
		localtime_r(&now, &tm);
		ts[0] = '[';
		size_t l = strftime(ts + 1, sizeof(ts) - 3, "%Y-%m-%d %H:%M:%S", &tm);
		memcpy(ts + 1 + l, "] ", 3);
	}
	int rc = fprintf(lf->f, "%s[%s] %s: %s\n", ts, rnsc_log_level_name(level),
			 who ? who : "rnsc", msg);
	if (fflush(lf->f) != 0 || rc < 0) {
		if (lf->path)
			to_console(lf, "write failed");
		return;
	}
	if (lf->path && lf->max) {
		long pos = ftell(lf->f);
		if (pos > 0 && (uint64_t)pos > lf->max)
			rotate(lf);
	}
}
