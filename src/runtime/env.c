/* SPDX-License-Identifier: MIT */
#include "env.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "src/runtime/build_info.h"
#include "config.h"
#include "crypto.h"
#include "machine.h"
#include "strfmt.h"

void rnsc_env_default_order(rnsc_ctx *ctx, char *buf, size_t cap)
{
	static const char *const preferred[] = {"openssl", "sodium"};
	buf[0] = '\0';
	if (rnsc_crypto_backend_find(ctx, "openssl") && rnsc_crypto_backend_find(ctx, "sodium"))
		strncat(buf, "x25519=sodium,ed25519=sodium,", cap - 1);
	for (size_t i = 0; i < 2; i++)
		if (rnsc_crypto_backend_find(ctx, preferred[i])) {
			strncat(buf, preferred[i], cap - strlen(buf) - 1);
			strncat(buf, ",", cap - strlen(buf) - 1);
		}
	for (size_t i = 0;; i++) {
		const rnsc_crypto_backend *be = rnsc_crypto_backend_at(ctx, i);
		if (!be)
			break;
		if (strcmp(be->name, "openssl") != 0 && strcmp(be->name, "sodium") != 0) {
			strncat(buf, be->name, cap - strlen(buf) - 1);
			strncat(buf, ",", cap - strlen(buf) - 1);
		}
	}
}

void rnsc_env_close(rnsc_env *env)
{
	rnsc_plugin_host_del(env->host);
	rnsc_ctx_del(env->ctx);
	env->host = NULL;
	env->ctx = NULL;
}

static int env_fail(rnsc_env *env, FILE *err, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int env_fail(rnsc_env *env, FILE *err, int rc, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		fprintf(err, "rnsc: ");
		vfprintf(err, fmt, ap);
		fprintf(err, "\n");
		va_end(ap);
	}
	rnsc_env_close(env);
	return rc;
}

int rnsc_env_open(rnsc_env *env, const char *crypto_order, int verbose, FILE *err)
{
	memset(env, 0, sizeof(*env));
	env->verbose = verbose;
	if (rnsc_ctx_new(&env->ctx) != 0)
		return env_fail(env, err, RNSC_ERR_NOMEM, "%s", "out of memory");
	rnsc_ctx_set_log_level(env->ctx, verbose > 1 ? RNSC_LOG_DEBUG
					 : verbose   ? RNSC_LOG_VERBOSE
						     : RNSC_LOG_WARNING);
	if (rnsc_plugin_host_new(env->ctx, &env->host) != 0 ||
	    rnsc_plugin_host_add_default_dirs(env->host) != 0)
		return env_fail(env, err, RNSC_ERR_NOMEM, "%s", "cannot set up the plugin host");
	rnsc_plugin_host_scan(env->host);
	if (!crypto_order || !*crypto_order)
		crypto_order = getenv("RNSC_CRYPTO");
	char buf[512];
	if (!crypto_order || !*crypto_order) {
		rnsc_env_default_order(env->ctx, buf, sizeof(buf));
		crypto_order = buf;
	}
	int rc = rnsc_crypto_set_order(env->ctx, crypto_order);
	if (rc != 0)
		return env_fail(env, err, rc,
				"crypto order '%s' names a backend that is not loaded (see 'rnsc "
				"plugins -v')",
				crypto_order);
	if (!rnsc_crypto_provider(env->ctx, RNSC_PRIM_SHA256))
		return env_fail(env, err, RNSC_ERR_NOPRIM,
				"no crypto backend loaded; searched $RNSC_PLUGIN_PATH, the build "
				"tree and %s",
				RNSC_PLUGINDIR);
	return 0;
}

void rnsc_env_json(FILE *f)
{
	rnsc_machine m;
	rnsc_machine_read(&m);
	fprintf(f, "\"environment\": {\"cpu\": ");
	rnsc_json_str(f, m.cpu);
	fprintf(f, ", \"kernel\": ");
	rnsc_json_str(f, m.release);
	fprintf(f, ", \"compiler\": ");
	rnsc_json_str(f, __VERSION__);
	fprintf(f, ", \"rnsc_version\": ");
	rnsc_json_str(f, PACKAGE_VERSION);
	fprintf(f, ", \"commit\": ");
	rnsc_json_str(f, RNSC_BUILD_COMMIT);
	fprintf(f, ", \"cflags\": ");
	rnsc_json_str(f, RNSC_BUILD_CFLAGS);
	/* which backend serves each primitive under the default order (RNSC_CRYPTO if set) */
	rnsc_env env;
	if (rnsc_env_open(&env, NULL, 0, NULL) == 0) {
		fprintf(f, ", \"crypto\": {");
		for (int p = 0; p < RNSC_PRIM_COUNT; p++) {
			const char *who = rnsc_crypto_provider(env.ctx, (enum rnsc_prim)p);
			fprintf(f, "%s", p ? ", " : "");
			rnsc_json_str(f, rnsc_prim_name((enum rnsc_prim)p));
			fprintf(f, ": ");
			rnsc_json_str(f, who ? who : "none");
		}
		fprintf(f, "}");
		rnsc_env_close(&env);
	}
	/* the machine is shared: the load when the report was written says how quiet it was */
	fprintf(f, ", \"loadavg\": ");
	rnsc_json_str(f, m.loadavg);
	fprintf(f, ", \"online_cpus\": %ld", m.cores);
	fprintf(f, "}");
}
