/* SPDX-License-Identifier: MIT */
#include <getopt.h>
#include <string.h>

#include "cli.h"
#include "crypto.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: rnsc plugins [-v] [--json] [--crypto ORDER]\n\n"
		   "Lists every plugin found on the search path: name, kind, version, file and\n"
		   "capabilities. Plugins that failed to load are listed with the reason.\n\n"
		   "  -v, --verbose     also show which crypto backend serves each primitive\n"
		   "      --json        print a JSON list of plugin objects instead\n"
		   "      --crypto LIST crypto backend order to resolve (default: $RNSC_CRYPTO or\n"
		   "                    \"openssl, sodium\")\n"
		   "  -h, --help        show this help\n\n"
		   "Exit status: 0 when every plugin found loaded, 1 when some were rejected,\n"
		   "3 when no usable crypto backend was found.\n");
}

static void caps_str(const rnsc_plugin_rec *r, char *buf, size_t cap)
{
	buf[0] = '\0';
	if (!r->desc || r->desc->kind != RNSC_PLUGIN_CRYPTO)
		return;
	for (int p = 0; p < RNSC_PRIM_COUNT; p++)
		if (r->desc->caps & RNSC_PRIM_BIT(p)) {
			if (buf[0])
				strncat(buf, ",", cap - strlen(buf) - 1);
			strncat(buf, rnsc_prim_name(p), cap - strlen(buf) - 1);
		}
}

static void print_json(cli_env *env)
{
	size_t n = rnsc_plugin_host_count(env->host);
	printf("[");
	for (size_t i = 0; i < n; i++) {
		const rnsc_plugin_rec *r = rnsc_plugin_host_at(env->host, i);
		printf("%s\n  {\"name\": ", i ? "," : "");
		cli_json_str(stdout, r->desc ? r->desc->name : NULL);
		printf(", \"kind\": ");
		cli_json_str(stdout, r->desc ? rnsc_plugin_kind_name(r->desc->kind) : "unknown");
		printf(", \"version\": ");
		cli_json_str(stdout, r->desc ? r->desc->version : NULL);
		printf(", \"file\": ");
		cli_json_str(stdout, r->file);
		printf(", \"loaded\": %s", r->status == 0 ? "true" : "false");
		if (r->status) {
			printf(", \"error\": ");
			cli_json_str(stdout, rnsc_err_name(r->status));
			printf(", \"reason\": ");
			cli_json_str(stdout, r->error);
		}
		if (r->desc && r->desc->kind == RNSC_PLUGIN_CRYPTO) {
			printf(", \"primitives\": [");
			int first = 1;
			for (int p = 0; p < RNSC_PRIM_COUNT; p++)
				if (r->desc->caps & RNSC_PRIM_BIT(p)) {
					printf("%s", first ? "" : ", ");
					cli_json_str(stdout, rnsc_prim_name(p));
					first = 0;
				}
			printf("], \"serves\": [");
			first = 1;
			for (int p = 0; p < RNSC_PRIM_COUNT; p++) {
				const char *who = rnsc_crypto_provider(env->ctx, p);
				if (who && strcmp(who, r->desc->name) == 0) {
					printf("%s", first ? "" : ", ");
					cli_json_str(stdout, rnsc_prim_name(p));
					first = 0;
				}
			}
			printf("]");
		}
		printf("}");
	}
	printf("\n]\n");
}

int cmd_plugins(int argc, char **argv)
{
	static const struct option opts[] = {{"verbose", no_argument, NULL, 'v'},
					     {"json", no_argument, NULL, 'j'},
					     {"crypto", required_argument, NULL, 'c'},
					     {"help", no_argument, NULL, 'h'},
					     {0, 0, 0, 0}};
	int verbose = 0, json = 0, c;
	const char *order = NULL;
	optind = 1;
	while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (c) {
		case 'v':
			verbose++;
			break;
		case 'j':
			json = 1;
			break;
		case 'c':
			order = optarg;
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
		fprintf(stderr, "rnsc plugins: unexpected argument '%s'\n", argv[optind]);
		return CLI_USAGE;
	}
	cli_env env;
	int rc = cli_env_open(&env, order, 0);
	if (rc)
		return rc;
	size_t n = rnsc_plugin_host_count(env.host);
	int rejected = 0;
	for (size_t i = 0; i < n; i++)
		rejected += rnsc_plugin_host_at(env.host, i)->status != 0;
	if (json) {
		print_json(&env);
	} else {
		printf("%-10s %-9s %-8s %-8s %s\n", "NAME", "KIND", "VERSION", "STATUS", "FILE");
		for (size_t i = 0; i < n; i++) {
			const rnsc_plugin_rec *r = rnsc_plugin_host_at(env.host, i);
			printf("%-10s %-9s %-8s %-8s %s\n", r->desc ? r->desc->name : "-",
			       r->desc ? rnsc_plugin_kind_name(r->desc->kind) : "-",
			       r->desc ? r->desc->version : "-", r->status ? "REJECTED" : "ok",
			       r->file);
			if (r->status)
				printf("           %s: %s\n", rnsc_err_name(r->status), r->error);
			else if (verbose) {
				char caps[256];
				caps_str(r, caps, sizeof(caps));
				if (caps[0])
					printf("           implements: %s\n", caps);
			}
		}
		if (verbose) {
			printf("\nCrypto primitives under the configured order:\n");
			for (int p = 0; p < RNSC_PRIM_COUNT; p++) {
				const char *who = rnsc_crypto_provider(env.ctx, p);
				printf("  %-12s %s\n", rnsc_prim_name(p),
				       who ? who : "(none: unavailable)");
			}
		}
	}
	cli_env_close(&env);
	return rejected ? CLI_FAIL : CLI_OK;
}
