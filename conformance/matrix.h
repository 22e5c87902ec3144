/* SPDX-License-Identifier: MIT */
/*
 * The message matrix: one row per message shape the reference defines, each cross-checked four
 * ways against the embedded reference (interop/ref_wire.h):
 *   A  the reference builds  -> rnsc parses   -> every field equal to the inputs;
 *   B  rnsc builds            -> the reference parses -> every field equal;
 *   C  both build from the same inputs (the randomness that reaches the bytes is chosen by the
 *      matrix and handed to both sides) -> identical bytes;
 *   D  mutated copies (per mutation class) -> both reject with matching verdicts, or the exact
 *      expected pair where rnsc is deliberately stricter (spelled out next to each class in
 *      matrix.c).
 * Rows are enumerated by the reference at run time from its own constants (packet type x
 * context x destination type x header type, propagation types, context flags, announce
 * variants, proofs, path requests, link payloads, link modes, MTU rules, framing, IFAC sizes
 * and origins). A row rnsc does not recognise (say, a context added upstream) is reported as
 * uncovered, never skipped. A row is covered when rnsc knows it and all four legs ran in every
 * case; disagreements are counted separately.
 *
 * Requires conf_setup() (backends.h). Single-threaded.
 */
#ifndef RNSC_CONF_MATRIX_H
#define RNSC_CONF_MATRIX_H

#include <stddef.h>
#include <stdint.h>

#define CONF_MATRIX_WAY_A 1u
#define CONF_MATRIX_WAY_B 2u
#define CONF_MATRIX_WAY_C 4u
#define CONF_MATRIX_WAY_D 8u
#define CONF_MATRIX_WAYS 15u

typedef struct conf_matrix_row {
	char family[16]; /* "packet", "announce", "ifac", ... */
	char name[112];  /* the reference's spelling, e.g. "packet DATA/LRRTT/LINK/HEADER_1" */
	long long param[4];
	size_t n_param;
	int known;   /* rnsc recognises the row */
	int covered; /* known, and every case ran all four legs */
	unsigned cases;
	unsigned disagreements;
	unsigned mutations; /* mutated copies checked (leg D) */
	char first[320];    /* first disagreement, empty when none */
} conf_matrix_row;

typedef struct conf_matrix_summary {
	unsigned rows_defined;
	unsigned rows_covered;
	unsigned disagreements;
	unsigned mutations;
} conf_matrix_summary;

typedef void (*conf_matrix_sink)(void *ud, const conf_matrix_row *row);

/* Runs every row (cases random cases each, inputs from seed) with the rnsc side on the named
 * crypto backend (NULL: the first plugin). sink (may be NULL) sees each row when it is done.
 * corpus_dir (may be NULL) receives seed inputs for the fuzz targets, built by the reference:
 * <corpus_dir>/fuzz_{packet,announce,proof,ifac}/<name>.
 * Returns 0 when the matrix ran (look at *sum for the verdict), or a negative rnsc_err when it
 * could not (no set-up, unknown backend, the reference's row list unavailable). */
int conf_matrix_run(const char *backend, unsigned cases, uint64_t seed, const char *corpus_dir,
		    conf_matrix_sink sink, void *ud, conf_matrix_summary *sum);

/* Whether rnsc recognises a row (the name must be the one rnsc would give the parameters).
 * Exposed so tests can show that an unknown row is reported rather than skipped. */
int conf_matrix_row_known(const char *family, const char *name, const long long *param,
			  size_t n_param);

#endif
