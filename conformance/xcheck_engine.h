/* SPDX-License-Identifier: MIT */
/*
 * Per-check access to the cross-check engine (xcheck.c) for runners that report each
 * check separately, such as the CUnit suite. xcheck.h has the all-in-one entry point.
 *
 * Threading: the engine uses the process-wide conformance set-up (conf_setup()) and the
 * embedded reference; run checks from one thread at a time.
 */
#ifndef RNSC_CONF_XCHECK_ENGINE_H
#define RNSC_CONF_XCHECK_ENGINE_H

#include <stdint.h>

#include "xcheck.h"

/* Name of check i (0 <= i < conf_xcheck_count()), e.g. "identity_encrypt rnsc->ref";
 * NULL past the end. Static storage. */
const char *conf_xcheck_name(unsigned i);

/* Runs `cases` seeded random cases of check i with the rnsc side on the named backend
 * (conf_ctx_for(backend)). Fills *out (out->check and out->backend point to static / the
 * backend's storage). Returns 0 when the check ran (agreement or not: see out->disagreed),
 * or a negative rnsc_err when it could not run (unknown check or backend, no set-up).
 * The inputs depend only on (seed, check, backend name), so a failure reproduces. */
int conf_xcheck_run_one(unsigned i, const char *backend, unsigned cases, uint64_t seed,
			conf_xcheck_result *out);

#endif
