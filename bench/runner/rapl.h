/* SPDX-License-Identifier: MIT */
/*
 * Package energy for benchmark samples, from the kernel's powercap interface (RAPL: Intel's,
 * and AMD's on recent kernels, both under /sys/class/powercap/intel-rapl:N). Every top-level
 * zone whose name starts with "package" is summed; counters wrap at max_energy_range_uj.
 * Energy is machine-wide: a sample's figure covers both participants and everything else that
 * ran meanwhile. Where nothing is readable (a VM without RAPL, no permission) the runner
 * omits energy and says so; it never estimates it.
 *
 * The root is $RNSC_POWERCAP_ROOT when set (tests point it at a fake tree), else
 * /sys/class/powercap. Ownership: a plain value type, nothing to free. Threading: none.
 */
#ifndef RNSC_BENCH_RAPL_H
#define RNSC_BENCH_RAPL_H

#include <limits.h>
#include <stdint.h>

#define RNSC_RAPL_MAX_ZONES 8

typedef struct rnsc_rapl {
	int n; /* readable package zones; 0: energy is not available */
	char path[RNSC_RAPL_MAX_ZONES][PATH_MAX]; /* .../energy_uj */
	uint64_t range_uj[RNSC_RAPL_MAX_ZONES];   /* max_energy_range_uj (wrap), 0 if unknown */
	char why[160];                            /* when n == 0: why not, for the report */
} rnsc_rapl;

typedef struct rnsc_rapl_mark {
	uint64_t uj[RNSC_RAPL_MAX_ZONES];
	int ok;
} rnsc_rapl_mark;

/* Finds the package zones; returns how many are readable (0: see r->why). */
int rnsc_rapl_open(rnsc_rapl *r);
/* Reads every zone now; m->ok is 0 when any read failed. */
void rnsc_rapl_mark_now(const rnsc_rapl *r, rnsc_rapl_mark *m);
/* Joules between two marks (wraps counted once per zone); negative when either mark failed
 * or no zone is readable. */
double rnsc_rapl_joules(const rnsc_rapl *r, const rnsc_rapl_mark *a, const rnsc_rapl_mark *b);

#endif
