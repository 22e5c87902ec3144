/* SPDX-License-Identifier: MIT */
/*
 * CUnit runner for the message matrix (matrix.c): every row the reference defines must be
 * covered four ways with no disagreement. The rows are run once, in the suite set-up, on the
 * first crypto plugin; one test per row family then asserts its rows, so CUnit's report names
 * the family that failed and the log names the row and its first disagreement.
 *
 * Environment: RNSC_MATRIX_CASES (default 4 per row; packet rows get half), RNSC_MATRIX_SEED
 * (default 1), RNSC_MATRIX_BACKEND (default: the first plugin).
 * Exit status: the number of failures (tests/common/cu_run.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <CUnit/Basic.h>

#include "backends.h"
#include "cu_run.h"
#include "matrix.h"

#define MAX_FAMILIES 16

typedef struct fam_stat {
	char name[16];
	unsigned rows, covered, disagreements;
} fam_stat;

static fam_stat g_fam[MAX_FAMILIES];
static size_t g_nfam;
static conf_matrix_summary g_sum;
static int g_run_rc = -1;

static fam_stat *fam(const char *name)
{
	for (size_t i = 0; i < g_nfam; i++)
		if (!strcmp(g_fam[i].name, name))
			return &g_fam[i];
	if (g_nfam == MAX_FAMILIES)
		return NULL;
	snprintf(g_fam[g_nfam].name, sizeof(g_fam[g_nfam].name), "%s", name);
	return &g_fam[g_nfam++];
}

static void on_row(void *ud, const conf_matrix_row *r)
{
	(void)ud;
	fam_stat *f = fam(r->family);
	if (f) {
		f->rows++;
		f->covered += r->covered != 0;
		f->disagreements += r->disagreements;
	}
	if (!r->covered || r->disagreements) {
		fprintf(stderr, "  matrix %-48s %s%s\n", r->name,
			r->known ? "" : "UNKNOWN TO RNSC ",
			r->disagreements ? "DISAGREE" : "UNCOVERED");
		if (r->first[0])
			fprintf(stderr, "    first: %s\n", r->first);
	}
}

static unsigned env_uint(const char *name, unsigned dflt)
{
	const char *v = getenv(name);
	return v && *v ? (unsigned)strtoul(v, NULL, 0) : dflt;
}

static int suite_init(void)
{
	if (conf_setup() != 0)
		return 1;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	g_run_rc = conf_matrix_run(getenv("RNSC_MATRIX_BACKEND"), env_uint("RNSC_MATRIX_CASES", 4),
				   env_uint("RNSC_MATRIX_SEED", 1), NULL, on_row, NULL, &g_sum);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fprintf(stderr, "  matrix: %u/%u rows covered, %u disagreements, %u mutations, %.2fs\n",
		g_sum.rows_covered, g_sum.rows_defined, g_sum.disagreements, g_sum.mutations,
		(double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	return 0;
}

static int suite_clean(void)
{
	conf_teardown();
	return 0;
}

static void check_family(const char *name, unsigned min_rows)
{
	CU_ASSERT_EQUAL_FATAL(g_run_rc, 0);
	fam_stat *f = fam(name);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fprintf(stderr, "  %-12s %4u/%-4u covered, %u disagreements\n", name, f->covered, f->rows,
		f->disagreements);
	CU_ASSERT(f->rows >= min_rows);
	CU_ASSERT_EQUAL(f->covered, f->rows);
	CU_ASSERT_EQUAL(f->disagreements, 0);
}

/* Minimum row counts are what rns 1.5.4 defines; a newer reference may only add rows. */
static void t_packet(void)
{
	check_family("packet", 4 * 21 * 4 * 2);
}
static void t_propagation(void)
{
	check_family("propagation", 4);
}
static void t_flag(void)
{
	check_family("flag", 2);
}
static void t_announce(void)
{
	check_family("announce", 16);
}
static void t_proof(void)
{
	check_family("proof", 3);
}
static void t_pathreq(void)
{
	check_family("pathreq", 2);
}
static void t_link(void)
{
	check_family("link", 6);
}
static void t_signalling(void)
{
	check_family("signalling", 8);
}
static void t_mtu(void)
{
	check_family("mtu", 5);
}
static void t_framing(void)
{
	check_family("framing", 2);
}
static void t_ifac(void)
{
	check_family("ifac", 6);
}

static void t_total(void)
{
	CU_ASSERT_EQUAL_FATAL(g_run_rc, 0);
	CU_ASSERT(g_sum.rows_defined > 0);
	CU_ASSERT_EQUAL(g_sum.rows_covered, g_sum.rows_defined);
	CU_ASSERT_EQUAL(g_sum.disagreements, 0);
	CU_ASSERT(g_sum.mutations > g_sum.rows_defined);
	size_t total = 0;
	for (size_t i = 0; i < g_nfam; i++)
		total += g_fam[i].rows;
	CU_ASSERT_EQUAL(total, g_sum.rows_defined);
}

/* A row rnsc cannot name (a context the reference might add upstream) is unknown, so it shows
 * up as uncovered instead of being skipped; rows rnsc knows are recognised by their exact
 * reference spelling. */
static void t_unknown_rows(void)
{
	const long long future[4] = {0, 0x42, 0, 0};
	CU_ASSERT_FALSE(
		conf_matrix_row_known("packet", "packet DATA/FUTURE/SINGLE/HEADER_1", future, 4));
	const long long lrrtt[4] = {0, 0xFE, 3, 0};
	CU_ASSERT_TRUE(
		conf_matrix_row_known("packet", "packet DATA/LRRTT/LINK/HEADER_1", lrrtt, 4));
	CU_ASSERT_FALSE(
		conf_matrix_row_known("packet", "packet DATA/LRRTT/LINK/HEADER_2", lrrtt, 4));
	const long long mode9[1] = {9};
	CU_ASSERT_FALSE(conf_matrix_row_known("signalling", "link signalling MODE_NEW", mode9, 1));
	CU_ASSERT_FALSE(conf_matrix_row_known("nosuchfamily", "x", NULL, 0));
	const long long ifac[2] = {65, 3};
	CU_ASSERT_FALSE(conf_matrix_row_known("ifac", "ifac size 65", ifac, 2));
}

int main(void)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("message matrix", suite_init, suite_clean);
	struct {
		const char *name;
		void (*fn)(void);
	} tests[] = {
		{"packet rows", t_packet},
		{"propagation rows", t_propagation},
		{"context flag rows", t_flag},
		{"announce rows", t_announce},
		{"proof rows", t_proof},
		{"path request rows", t_pathreq},
		{"link payload rows", t_link},
		{"link signalling rows", t_signalling},
		{"MTU rows", t_mtu},
		{"framing rows", t_framing},
		{"IFAC rows", t_ifac},
		{"all rows", t_total},
		{"unknown rows are uncovered", t_unknown_rows},
	};
	for (size_t i = 0; s && i < sizeof(tests) / sizeof(tests[0]); i++)
		if (!CU_add_test(s, tests[i].name, tests[i].fn))
			s = NULL;
	if (!s) {
		CU_cleanup_registry();
		return 1;
	}
	return rnsc_cu_run();
}
