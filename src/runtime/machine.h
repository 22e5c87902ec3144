/* SPDX-License-Identifier: MIT */
/*
 * Facts about the machine a measurement ran on, for benchmark and calibration reports: CPU
 * model and the flags that decide crypto and RandomX speed, kernel, transparent and static
 * huge pages, online cores, page size, compiler, and the load average (the machines are
 * shared, so the load says how quiet a run was). Read from /proc, /sys and uname; a fact
 * that cannot be read is left empty or 0.
 *
 * Ownership: plain data in caller storage.
 */
#ifndef RNSC_MACHINE_H
#define RNSC_MACHINE_H

#include <stdio.h>

#include "export.h"

typedef struct rnsc_machine {
	char cpu[256];            /* /proc/cpuinfo model name, "unknown" when absent */
	char flags[256];          /* the relevant subset of the CPU flags, space-separated */
	char kernel[256];         /* "Linux 6.1.0 x86_64" */
	char release[128];        /* uname release alone */
	char thp[32], defrag[32]; /* transparent huge pages: the bracketed setting */
	char compiler[128];
	char loadavg[64]; /* /proc/loadavg as read, "unknown" when absent */
	double load1;     /* its 1-minute figure */
	long cores, page_size, huge_total, huge_free, huge_kb;
} rnsc_machine;

RNSC_API void rnsc_machine_read(rnsc_machine *m);
/* The 1-minute load average now (-1 when /proc/loadavg cannot be read). */
RNSC_API double rnsc_machine_load1(void);

#endif
