/* SPDX-License-Identifier: MIT */
/*
 * Timing the reference's own crypto inside the embedded interpreter: the loop
 * runs in Python (interop/python/rnsc_refbench.py) so the figure is what a
 * Python program using RNS gets, without C↔Python call overhead.
 */
#ifndef RNSC_REF_BENCH_H
#define RNSC_REF_BENCH_H

#include "pyref.h"

/* Runs benchmark `op` (an id from rnsc_refbench.OPS, e.g. "sha256") on `size` bytes for
 * about `seconds`; *ops_per_s receives the rate. RNSC_ERR_NOTFOUND for an unknown op,
 * RNSC_ERR_PYTHON when the reference raised. */
int rnsc_pyref_bench(rnsc_pyref *ref, const char *op, size_t size, double seconds,
		     double *ops_per_s);

#endif
