/* SPDX-License-Identifier: MIT */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "backends.h"
#include "cli.h"
#include "matrix.h"
#include "pyref.h"
#include "vector_runner.h"
#include "xcheck.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: rnsc conform [--cases N] [--seed S] [--json] [--report FILE]\n"
		   "       rnsc conform --matrix [--cases N] [--seed S] [--json] [--backend NAME]\n"
		   "                    [--corpus DIR]\n\n"
		   "Cross-checks rnsc against the reference running embedded in this process:\n"
		   "  1. every test vector in conformance/vectors on every crypto backend and on\n"
		   "     the reference itself;\n"
		   "  2. randomized cross-checks in both directions (rnsc encrypts, the reference\n"
		   "     decrypts and the reverse; signatures, hashes, HKDF, names, files) for\n"
		   "     every rnsc crypto backend.\n"
		   "Fails (exit 1) on any disagreement; exit 3 when the reference or a plugin is\n"
		   "missing (it never passes by skipping).\n\n"
		   "  --cases N      random cases per check and backend (default 200)\n"
		   "  --seed S       seed for the random cases (default 1)\n"
		   "  --json         print the summary as JSON\n"
		   "  --report FILE  also write a Markdown report to FILE\n"
		   "  --matrix       run the message matrix instead: every message shape the\n"
		   "                 reference defines, checked four ways (reference builds/rnsc\n"
		   "                 parses, rnsc builds/reference parses, identical bytes,\n"
		   "                 mutations rejected alike); prints covered/defined rows and\n"
		   "                 any row not covered (--cases: per row, default 4)\n"
		   "  --backend NAME rnsc crypto backend for the matrix (default: first plugin)\n"
		   "  --corpus DIR   with --matrix: write fuzz seed inputs built by the reference\n"
		   "  -h, --help     show this help\n");
}

typedef struct conform_out {
	FILE *md;
	int json;
	int first;
	unsigned checks, disagreements;
} conform_out;

static void on_result(void *ud, const conf_xcheck_result *r)
{
	conform_out *o = ud;
	o->checks++;
	o->disagreements += r->disagreed;
	if (o->json) {
		printf("%s\n    {\"check\": ", o->first ? "" : ",");
		cli_json_str(stdout, r->check);
		printf(", \"backend\": ");
		cli_json_str(stdout, r->backend);
		printf(", \"cases\": %u, \"agreed\": %u, \"disagreed\": %u}", r->cases, r->agreed,
		       r->disagreed);
		o->first = 0;
	} else {
		printf("  %-44s %-9s %6u/%-6u %s\n", r->check, r->backend, r->agreed, r->cases,
		       r->disagreed ? "DISAGREE" : "ok");
		if (r->disagreed && r->first_disagreement[0])
			printf("      first: %s\n", r->first_disagreement);
	}
	if (o->md)
		fprintf(o->md, "| %s | %s | %u | %u | %s |\n", r->check, r->backend, r->cases,
			r->agreed, r->disagreed ? "**disagree**" : "ok");
}

typedef struct matrix_out {
	int json;
	unsigned shown;
	char *uncovered; /* JSON list items or text lines, grown as rows arrive */
	size_t len, cap;
} matrix_out;

static void grow_append(matrix_out *o, const char *s)
{
	size_t n = strlen(s);
	if (o->len + n + 1 > o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 1024;
		while (cap < o->len + n + 1)
			cap *= 2;
		char *b = realloc(o->uncovered, cap);
		if (!b)
			return;
		o->uncovered = b;
		o->cap = cap;
	}
	memcpy(o->uncovered + o->len, s, n + 1);
	o->len += n;
}

static void on_matrix_row(void *ud, const conf_matrix_row *r)
{
	matrix_out *o = ud;
	if (r->covered && !r->disagreements)
		return;
	if (o->json) {
		/* row names are the reference's constant names: printable ASCII; escape anyway */
		char name[2 * sizeof(r->name)], line[sizeof(name) + 128];
		size_t k = 0;
		for (const char *c = r->name; *c && k + 2 < sizeof(name); c++) {
			if (*c == '"' || *c == '\\')
				name[k++] = '\\';
			name[k++] = (unsigned char)*c < 0x20 ? '?' : *c;
		}
		name[k] = 0;
		snprintf(line, sizeof(line),
			 "%s\n    {\"row\": \"%s\", \"known\": %s, \"covered\": %s, "
			 "\"disagreements\": %u}",
			 o->shown ? "," : "", name, r->known ? "true" : "false",
			 r->covered ? "true" : "false", r->disagreements);
		grow_append(o, line);
	} else {
		char line[1024];
		snprintf(line, sizeof(line), "  %-48s %s%s%s%s\n", r->name,
			 r->known ? "" : "unknown to rnsc, ",
			 r->covered ? "covered" : "NOT COVERED",
			 r->disagreements ? ", DISAGREES: " : "", r->disagreements ? r->first : "");
		grow_append(o, line);
	}
	o->shown++;
}

static int run_matrix(int json, unsigned cases, uint64_t seed, const char *backend,
		      const char *corpus)
{
	if (conf_setup() != 0)
		return CLI_SETUP;
	matrix_out o = {.json = json};
	conf_matrix_summary sum;
	int rc = conf_matrix_run(backend, cases, seed, corpus, on_matrix_row, &o, &sum);
	const char *refv = rnsc_pyref_version(conf_ref());
	if (rc) {
		fprintf(stderr, "rnsc conform: the matrix could not run: %s\n", rnsc_strerror(rc));
		free(o.uncovered);
		conf_teardown();
		return CLI_SETUP;
	}
	int ok = sum.rows_covered == sum.rows_defined && sum.disagreements == 0;
	if (json) {
		printf("{\"reference_version\": \"%s\", \"rows_defined\": %u, \"rows_covered\": %u, "
		       "\"disagreements\": %u, \"mutations\": %u, \"passed\": %s,\n  \"uncovered\": [",
		       refv, sum.rows_defined, sum.rows_covered, sum.disagreements, sum.mutations,
		       ok ? "true" : "false");
		printf("%s%s]}\n", o.uncovered ? o.uncovered : "", o.shown ? "\n  " : "");
	} else {
		printf("Message matrix against rns %s (embedded), %u cases per row, seed %llu\n",
		       refv, cases, (unsigned long long)seed);
		if (o.uncovered)
			printf("%s", o.uncovered);
		printf("%u/%u rows covered four ways, %u disagreements, %u mutations checked: %s\n",
		       sum.rows_covered, sum.rows_defined, sum.disagreements, sum.mutations,
		       ok ? "CONFORMANT" : "NOT CONFORMANT");
	}
	free(o.uncovered);
	conf_teardown();
	return ok ? CLI_OK : CLI_FAIL;
}

int cmd_conform(int argc, char **argv)
{
	static const struct option opts[] = {{"cases", required_argument, NULL, 'n'},
					     {"seed", required_argument, NULL, 's'},
					     {"json", no_argument, NULL, 'j'},
					     {"report", required_argument, NULL, 'r'},
					     {"matrix", no_argument, NULL, 'm'},
					     {"backend", required_argument, NULL, 'b'},
					     {"corpus", required_argument, NULL, 'c'},
					     {"help", no_argument, NULL, 'h'},
					     {0, 0, 0, 0}};
	unsigned cases = 200;
	uint64_t seed = 1;
	const char *report = NULL, *backend = NULL, *corpus = NULL;
	int matrix = 0, cases_set = 0;
	conform_out o = {.first = 1};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'n': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);
			if (*end || v == 0 || v > 1000000) {
				fprintf(stderr, "rnsc conform: --cases must be 1..1000000\n");
				return CLI_USAGE;
			}
			cases = (unsigned)v;
			cases_set = 1;
			break;
		}
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'j':
			o.json = 1;
			break;
		case 'r':
			report = optarg;
			break;
		case 'm':
			matrix = 1;
			break;
		case 'b':
			backend = optarg;
			break;
		case 'c':
			corpus = optarg;
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			usage(stderr);
			return CLI_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rnsc conform: unexpected argument '%s'\n", argv[optind]);
		return CLI_USAGE;
	}
	if (matrix) {
		if (report) {
			fprintf(stderr, "rnsc conform: --report does not apply to --matrix\n");
			return CLI_USAGE;
		}
		return run_matrix(o.json, cases_set ? cases : 4, seed, backend, corpus);
	}
	if (backend || corpus) {
		fprintf(stderr, "rnsc conform: --backend and --corpus need --matrix\n");
		return CLI_USAGE;
	}
	if (conf_setup() != 0)
		return CLI_SETUP;
	if (report && !(o.md = fopen(report, "w"))) {
		fprintf(stderr, "rnsc conform: cannot write %s\n", report);
		conf_teardown();
		return CLI_SETUP;
	}
	const char *refv = rnsc_pyref_version(conf_ref());
	if (o.md)
		fprintf(o.md,
			"# rnsc conformance report\n\nReference: rns %s (embedded). Cases per "
			"check: %u, seed %llu.\n\n## Test vectors\n\n| backend | passed | "
			"failed | not served |\n|---|---|---|---|\n",
			refv, cases, (unsigned long long)seed);
	unsigned vec_failed = 0;
	if (o.json)
		printf("{\"reference_version\": \"%s\", \"vectors\": [", refv);
	else
		printf("Reference: rns %s, embedded\n\nTest vectors (conformance/vectors):\n",
		       refv);
	for (size_t i = 0; i < conf_backend_count(); i++) {
		const rnsc_crypto_backend *be = conf_backend(i);
		unsigned passed = 0, failed = 0, not_served = 0;
		int rc = conf_run_vectors_on_backend(be, conf_vectors_dir(), &passed, &failed,
						     &not_served);
		if (rc)
			failed++;
		vec_failed += failed;
		if (o.json) {
			printf("%s\n    {\"backend\": ", i ? "," : "");
			cli_json_str(stdout, be->name);
			printf(", \"passed\": %u, \"failed\": %u, \"not_served\": %u}", passed,
			       failed, not_served);
		} else {
			printf("  %-10s passed %4u  failed %u  not served %u\n", be->name, passed,
			       failed, not_served);
		}
		if (o.md)
			fprintf(o.md, "| %s | %u | %u | %u |\n", be->name, passed, failed,
				not_served);
	}
	if (o.json)
		printf("\n  ], \"cross_checks\": [");
	else
		printf("\nCross-checks against the reference (%u cases each):\n", cases);
	if (o.md)
		fprintf(o.md, "\n## Cross-checks against the reference\n\n| check | rnsc backend | "
			      "cases | agreed | verdict |\n|---|---|---|---|---|\n");
	int dis = conf_xcheck_run_all(cases, seed, on_result, &o);
	int ok = dis == 0 && vec_failed == 0;
	if (o.json)
		printf("\n  ], \"vector_failures\": %u, \"disagreements\": %d, \"passed\": %s}\n",
		       vec_failed, dis, ok ? "true" : "false");
	else
		printf("\n%s: %u vector failures, %d disagreements over %u checks\n",
		       ok ? "CONFORMANT" : "NOT CONFORMANT", vec_failed, dis, o.checks);
	if (o.md) {
		fprintf(o.md, "\n**%s**: %u vector failures, %d disagreements.\n",
			ok ? "Conformant" : "Not conformant", vec_failed, dis);
		fclose(o.md);
	}
	conf_teardown();
	if (dis < 0)
		return CLI_SETUP;
	return ok ? CLI_OK : CLI_FAIL;
}
