/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <string.h>

#include "cli.h"
#include "src/cli/build_info.h"
#include "config.h"
#include "crypto.h"
#include "status_json.h"

/* openssl first (the default), then sodium, then anything else that loaded; with both,
 * X25519 and Ed25519 come from libsodium: OpenSSL builds a key object (and derives its
 * public key) per call, which halves its signing rate (bench/results/crypto.json:
 * sign 15k/s against libsodium's 34k/s, verify 6.8k/s against 11k/s), while its
 * SHA-NI hashes and AES-NI CBC beat libsodium's portable hashes several times over. */
static void default_order(rnsc_ctx *ctx, char *buf, size_t cap)
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

int cli_env_open(cli_env *env, const char *crypto_order, int verbose)
{
	memset(env, 0, sizeof(*env));
	env->verbose = verbose;
	if (rnsc_ctx_new(&env->ctx) != 0) {
		fprintf(stderr, "rnsc: out of memory\n");
		return CLI_SETUP;
	}
	rnsc_ctx_set_log_level(env->ctx, verbose > 1 ? RNSC_LOG_DEBUG
					 : verbose ? RNSC_LOG_VERBOSE
						   : RNSC_LOG_WARNING);
	if (rnsc_plugin_host_new(env->ctx, &env->host) != 0 ||
	    rnsc_plugin_host_add_default_dirs(env->host) != 0) {
		fprintf(stderr, "rnsc: cannot set up the plugin host\n");
		cli_env_close(env);
		return CLI_SETUP;
	}
	rnsc_plugin_host_scan(env->host);
	if (!crypto_order)
		crypto_order = getenv("RNSC_CRYPTO");
	char buf[512];
	if (!crypto_order || !*crypto_order) {
		default_order(env->ctx, buf, sizeof(buf));
		crypto_order = buf;
	}
	if (rnsc_crypto_set_order(env->ctx, crypto_order) != 0) {
		fprintf(stderr, "rnsc: crypto order '%s' names a backend that is not loaded "
				"(see 'rnsc plugins -v')\n", crypto_order);
		cli_env_close(env);
		return CLI_SETUP;
	}
	if (!rnsc_crypto_provider(env->ctx, RNSC_PRIM_SHA256)) {
		fprintf(stderr, "rnsc: no crypto backend loaded; searched $RNSC_PLUGIN_PATH, the "
				"build tree and %s\n", RNSC_PLUGINDIR);
		cli_env_close(env);
		return CLI_SETUP;
	}
	return CLI_OK;
}

void cli_env_close(cli_env *env)
{
	rnsc_plugin_host_del(env->host);
	rnsc_ctx_del(env->ctx);
	env->host = NULL;
	env->ctx = NULL;
}

void cli_hex(char *out, const uint8_t *p, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * len] = '\0';
}

static int nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int cli_unhex(uint8_t *out, size_t cap, const char *hex)
{
	size_t n = strlen(hex);
	if (n % 2 || n / 2 > cap)
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return (int)(n / 2);
}

void cli_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void cli_env_json(FILE *f)
{
	struct utsname u;
	uname(&u);
	char cpu[256] = "unknown";
	FILE *ci = fopen("/proc/cpuinfo", "r");
	if (ci) {
		char line[512];
		while (fgets(line, sizeof(line), ci))
			if (!strncmp(line, "model name", 10)) {
				char *p = strchr(line, ':');
				if (p) {
					snprintf(cpu, sizeof(cpu), "%s", p + 2);
					cpu[strcspn(cpu, "\n")] = '\0';
				}
				break;
			}
		fclose(ci);
	}
	fprintf(f, "\"environment\": {\"cpu\": ");
	cli_json_str(f, cpu);
	fprintf(f, ", \"kernel\": ");
	cli_json_str(f, u.release);
	fprintf(f, ", \"compiler\": ");
	cli_json_str(f, __VERSION__);
	fprintf(f, ", \"rnsc_version\": ");
	cli_json_str(f, PACKAGE_VERSION);
	fprintf(f, ", \"commit\": ");
	cli_json_str(f, RNSC_BUILD_COMMIT);
	fprintf(f, ", \"cflags\": ");
	cli_json_str(f, RNSC_BUILD_CFLAGS);
	/* which backend serves each primitive under the default order (RNSC_CRYPTO if set) */
	{
		cli_env env;
		if (cli_env_open(&env, NULL, 0) == CLI_OK) {
			fprintf(f, ", \"crypto\": {");
			for (int p = 0; p < RNSC_PRIM_COUNT; p++) {
				const char *who = rnsc_crypto_provider(env.ctx, (enum rnsc_prim)p);
				fprintf(f, "%s", p ? ", " : "");
				cli_json_str(f, rnsc_prim_name((enum rnsc_prim)p));
				fprintf(f, ": ");
				cli_json_str(f, who ? who : "none");
			}
			fprintf(f, "}");
			cli_env_close(&env);
		}
	}
	/* the machine is shared: the load when the report was written says how quiet it was */
	char load[64] = "unknown";
	FILE *la = fopen("/proc/loadavg", "r");
	if (la) {
		if (fgets(load, sizeof(load), la))
			load[strcspn(load, "\n")] = '\0';
		fclose(la);
	}
	fprintf(f, ", \"loadavg\": ");
	cli_json_str(f, load);
	fprintf(f, ", \"online_cpus\": %ld", sysconf(_SC_NPROCESSORS_ONLN));
	fprintf(f, "}");
}

int cli_exec_ref(const char *sub, int argc, char **argv)
{
	char self[PATH_MAX], path[PATH_MAX + 16];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		fprintf(stderr, "rnsc: cannot find its own executable: %s\n", strerror(errno));
		return CLI_SETUP;
	}
	self[n] = '\0';
	char *slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	snprintf(path, sizeof(path), "%s/rnsc-ref", slash ? self : ".");
	char **av = calloc((size_t)argc + 2, sizeof(*av));
	if (!av)
		return CLI_SETUP;
	av[0] = "rnsc-ref";
	av[1] = (char *)sub;
	for (int i = 1; i < argc; i++)
		av[i + 1] = argv[i];
	fflush(NULL);
	execv(path, av);
	fprintf(stderr, "rnsc: cannot run %s (%s): the commands that embed the reference live "
		"there; build or install it with rnsc\n", path, strerror(errno));
	free(av);
	return CLI_SETUP;
}

/* RNS.prettytime */
void cli_prettytime(char *out, size_t cap, double t)
{
	int neg = t < 0;
	if (neg)
		t = -t;
	long days = (long)(t / 86400);
	t = fmod(t, 86400);
	long hours = (long)(t / 3600);
	t = fmod(t, 3600);
	long minutes = (long)(t / 60);
	t = fmod(t, 60);
	double seconds = round(t * 100) / 100;
	char comp[4][48];
	int nc = 0;
	if (days > 0)
		snprintf(comp[nc++], 48, "%ldd", days);
	if (hours > 0)
		snprintf(comp[nc++], 48, "%ldh", hours);
	if (minutes > 0)
		snprintf(comp[nc++], 48, "%ldm", minutes);
	if (seconds > 0) {
		char r[40];
		rnsc_py_float_repr(r, sizeof(r), seconds);
		snprintf(comp[nc++], 48, "%ss", r);
	}
	size_t o = 0;
	out[0] = 0;
	if (neg && nc)
		o += (size_t)snprintf(out + o, cap - o, "-");
	for (int i = 0; i < nc && o < cap; i++) {
		const char *sep = i == 0 ? "" : i < nc - 1 ? ", " : " and ";
		o += (size_t)snprintf(out + o, cap - o, "%s%s", sep, comp[i]);
	}
	if (!nc)
		snprintf(out, cap, "0s");
}
