/* SPDX-License-Identifier: MIT */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "backends.h"
#include "cli.h"
#include "pyref.h"
#include "vector_runner.h"
#include "xcheck.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rnsc conform [--cases N] [--seed S] [--json] [--report FILE]\n\n"
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

int cmd_conform(int argc, char **argv)
{
	static const struct option opts[] = {{"cases", required_argument, NULL, 'n'},
					     {"seed", required_argument, NULL, 's'},
					     {"json", no_argument, NULL, 'j'},
					     {"report", required_argument, NULL, 'r'},
					     {"help", no_argument, NULL, 'h'},
					     {0, 0, 0, 0}};
	unsigned cases = 200;
	uint64_t seed = 1;
	const char *report = NULL;
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
			break;
		}
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'j': o.json = 1; break;
		case 'r': report = optarg; break;
		case 'h': usage(stdout); return CLI_OK;
		default: usage(stderr); return CLI_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rnsc conform: unexpected argument '%s'\n", argv[optind]);
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
		fprintf(o.md, "# rnsc conformance report\n\nReference: rns %s (embedded). Cases per "
			      "check: %u, seed %llu.\n\n## Test vectors\n\n| backend | passed | "
			      "failed | not served |\n|---|---|---|---|\n",
			refv, cases, (unsigned long long)seed);
	unsigned vec_failed = 0;
	if (o.json)
		printf("{\"reference_version\": \"%s\", \"vectors\": [", refv);
	else
		printf("Reference: rns %s, embedded\n\nTest vectors (conformance/vectors):\n", refv);
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
			printf(", \"passed\": %u, \"failed\": %u, \"not_served\": %u}", passed, failed,
			       not_served);
		} else {
			printf("  %-10s passed %4u  failed %u  not served %u\n", be->name, passed,
			       failed, not_served);
		}
		if (o.md)
			fprintf(o.md, "| %s | %u | %u | %u |\n", be->name, passed, failed, not_served);
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
