/* SPDX-License-Identifier: MIT */
/*
 * The daemon's log lines as the reference writes them (RNS.log): "[timestamp] [Level]
 * message" with the reference's level names for its nine levels (Critical .. Extra), the
 * timestamp left out when [logging] logtimestamps = no, to standard output or appended to
 * a log file. A file that grows beyond its limit after a line (RNS.LOG_MAXSIZE, 5 MiB) is
 * renamed to "<file>.1", replacing an older one, and the next line starts a new file.
 *
 * Ownership and threading: an rnsc_logfile owns its FILE and path; one thread at a time
 * (the daemon's log sink runs on the loop thread). A write that fails switches the sink
 * to standard output with one line saying so, as the reference dumps to the console.
 */
#ifndef RNSC_LOGFILE_H
#define RNSC_LOGFILE_H

#include <stdint.h>
#include <stdio.h>

#define RNSC_LOGFILE_MAXSIZE ((uint64_t)5 * 1024 * 1024) /* RNS.LOG_MAXSIZE */

typedef struct rnsc_logfile {
	FILE *f;        /* stdout or the open file */
	char *path;     /* NULL for stdout */
	uint64_t max;   /* rotation limit in bytes */
	int timestamps; /* [logging] logtimestamps */
	unsigned rotations;
} rnsc_logfile;

/* The reference's name for a level, "[Notice]" style; "Unknown" outside 0..8. */
const char *rnsc_log_level_name(int level);

/* Standard output (path NULL) or path opened for appending. Returns 0, RNSC_ERR_INVAL or
 * RNSC_ERR_IO (cannot open). */
int rnsc_logfile_open(rnsc_logfile *lf, const char *path, uint64_t max);
void rnsc_logfile_close(rnsc_logfile *lf);
/* One line: "[ts] [Level] who: msg". */
void rnsc_logfile_write(rnsc_logfile *lf, int level, const char *who, const char *msg);

#endif
