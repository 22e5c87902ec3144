/* SPDX-License-Identifier: MIT */
/*
 * Randomized cross-checks of rnsc against the embedded reference, shared by the
 * CUnit suite (xcheck_test) and `rnsc conform`. Each check runs `cases` seeded
 * random cases of one operation with one rnsc backend and reports how many
 * agreed with the reference (bytes identical, or both sides accepting or both
 * rejecting with matching verdicts).
 *
 * Requires conf_setup() to have succeeded.
 */
#ifndef RNSC_CONF_XCHECK_H
#define RNSC_CONF_XCHECK_H

#include <stdint.h>

typedef struct conf_xcheck_result {
	const char *check;   /* e.g. "identity_encrypt rnsc->ref" */
	const char *backend; /* rnsc backend used on the rnsc side */
	unsigned cases;
	unsigned agreed;
	unsigned disagreed;
	char first_disagreement[256]; /* empty when none */
} conf_xcheck_result;

typedef void (*conf_xcheck_sink)(void *ud, const conf_xcheck_result *r);

/* Number of checks that conf_xcheck_run_all runs per backend. */
unsigned conf_xcheck_count(void);
/* Runs every check on every plugin backend; returns the total number of disagreements
 * (0 = full agreement) or a negative rnsc_err when set-up failed. */
int conf_xcheck_run_all(unsigned cases, uint64_t seed, conf_xcheck_sink sink, void *ud);

#endif
