/* SPDX-License-Identifier: MIT */
/* rnsc bench crypto: every crypto primitive on every loaded backend and on the embedded
 * reference, side by side. Part of rnsc-ref (main_ref.c), the program that embeds CPython;
 * `rnsc bench crypto` runs it. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "config.h"
#include "crypto.h"
#include "identity.h"
#include "pyref.h"
#include "ref_bench.h"

/* One benchmarked operation: an id shared with rnsc_refbench.py, a size and a label. */
typedef struct bench_op {
	const char *id;
	size_t size;
	const char *label;
	int throughput; /* report MB/s too */
	int prim;       /* the primitive timed, or -1 for composite operations */
} bench_op;

static const bench_op OPS[] = {
	{"random", 32, "random (32 B)", 0, RNSC_PRIM_RANDOM},
	{"sha256", 64, "sha256 (64 B)", 0, RNSC_PRIM_SHA256},
	{"sha256", 16384, "sha256 (16 KiB)", 1, RNSC_PRIM_SHA256},
	{"sha512", 64, "sha512 (64 B)", 0, RNSC_PRIM_SHA512},
	{"hmac_sha256", 64, "hmac-sha256 (64 B)", 0, RNSC_PRIM_HMAC_SHA256},
	{"hkdf_sha256", 64, "hkdf-sha256 (64 B out)", 0, RNSC_PRIM_HKDF_SHA256},
	{"aes256_cbc_encrypt", 16384, "aes256-cbc encrypt (16 KiB)", 1, RNSC_PRIM_AES256_CBC},
	{"aes256_cbc_decrypt", 16384, "aes256-cbc decrypt (16 KiB)", 1, RNSC_PRIM_AES256_CBC},
	{"x25519_public", 32, "x25519 public key", 0, RNSC_PRIM_X25519},
	{"x25519", 32, "x25519 exchange", 0, RNSC_PRIM_X25519},
	{"ed25519_sign", 64, "ed25519 sign (64 B)", 0, RNSC_PRIM_ED25519},
	{"ed25519_verify", 64, "ed25519 verify (64 B)", 0, RNSC_PRIM_ED25519},
	{"identity_encrypt", 64, "identity encrypt (64 B)", 0, -1},
	{"identity_decrypt", 64, "identity decrypt (64 B)", 0, -1},
};
#define N_OPS (sizeof(OPS) / sizeof(OPS[0]))
#define NOT_SERVED (-2.0)

typedef struct bench_in {
	rnsc_ctx *ctx;
	uint8_t *data, *out;
	size_t size;
	uint8_t key[64], iv[16], priv[32], pub[32], seed[32], edpub[32], sig[64];
	rnsc_identity id;
	uint8_t *token;
	int token_len;
} bench_in;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int run_once(bench_in *in, const char *id)
{
	rnsc_ctx *c = in->ctx;
	if (!strcmp(id, "random"))
		return rnsc_random(c, in->out, in->size);
	if (!strcmp(id, "sha256"))
		return rnsc_sha256(c, in->out, in->data, in->size);
	if (!strcmp(id, "sha512"))
		return rnsc_sha512(c, in->out, in->data, in->size);
	if (!strcmp(id, "hmac_sha256"))
		return rnsc_hmac_sha256(c, in->out, in->key, 32, in->data, in->size);
	if (!strcmp(id, "hkdf_sha256"))
		return rnsc_hkdf_sha256(c, in->out, in->size, in->key, 32, in->data, 16, NULL, 0);
	if (!strcmp(id, "aes256_cbc_encrypt"))
		return rnsc_aes256_cbc_encrypt(c, in->out, in->key, in->iv, in->data, in->size);
	if (!strcmp(id, "aes256_cbc_decrypt"))
		return rnsc_aes256_cbc_decrypt(c, in->out, in->key, in->iv, in->data, in->size);
	if (!strcmp(id, "x25519_public")) {
		in->key[0]++; /* a fresh private key each time, as when generating keys */
		return rnsc_x25519_public(c, in->out, in->key);
	}
	if (!strcmp(id, "x25519"))
		return rnsc_x25519(c, in->out, in->priv, in->pub);
	if (!strcmp(id, "ed25519_sign"))
		return rnsc_ed25519_sign(c, in->out, in->seed, in->edpub, in->data, in->size);
	if (!strcmp(id, "ed25519_verify"))
		return rnsc_ed25519_verify(c, in->sig, in->edpub, in->data, in->size);
	if (!strcmp(id, "identity_encrypt"))
		return rnsc_identity_encrypt(&in->id, in->out, in->size + 256, in->data, in->size,
					     NULL) < 0;
	if (!strcmp(id, "identity_decrypt"))
		return rnsc_identity_decrypt(&in->id, in->out, in->size + 256, in->token,
					     (size_t)in->token_len, NULL, 0, 0, NULL) < 0;
	return RNSC_ERR_NOTFOUND;
}

static int prepare(bench_in *in, rnsc_ctx *ctx, size_t size)
{
	memset(in, 0, sizeof(*in));
	in->ctx = ctx;
	in->size = size;
	in->data = malloc(size);
	in->out = malloc(size + 256);
	in->token = malloc(size + 256);
	if (!in->data || !in->out || !in->token)
		return RNSC_ERR_NOMEM;
	int rc = rnsc_random(ctx, in->data, size);
	if (!rc)
		rc = rnsc_random(ctx, in->key, sizeof(in->key));
	if (!rc)
		rc = rnsc_random(ctx, in->iv, sizeof(in->iv));
	if (!rc)
		rc = rnsc_x25519_generate(ctx, in->priv, in->out);
	if (!rc)
		rc = rnsc_x25519_generate(ctx, in->seed, in->pub); /* any peer key */
	if (!rc)
		rc = rnsc_ed25519_generate(ctx, in->seed, in->edpub);
	if (!rc)
		rc = rnsc_ed25519_sign(ctx, in->sig, in->seed, in->edpub, in->data, size);
	if (!rc)
		rc = rnsc_identity_generate(ctx, &in->id);
	if (!rc) {
		in->token_len =
			rnsc_identity_encrypt(&in->id, in->token, size + 256, in->data, size, NULL);
		rc = in->token_len < 0 ? in->token_len : 0;
	}
	return rc;
}

static void release(bench_in *in)
{
	rnsc_identity_free(&in->id);
	free(in->data);
	free(in->out);
	free(in->token);
}

/* Times op on ctx for about `seconds`; returns ops/s or a negative value on error. */
static double time_op(rnsc_ctx *ctx, const bench_op *op, double seconds)
{
	bench_in in;
	double rate = -1;
	if (prepare(&in, ctx, op->size) == 0 && run_once(&in, op->id) == 0) {
		unsigned long count = 0, batch = 16;
		double start = now_s(), t = start;
		int err = 0;
		while (!err && t - start < seconds) {
			for (unsigned long i = 0; i < batch && !err; i++)
				err = run_once(&in, op->id);
			count += batch;
			t = now_s();
			if (t - start < seconds / 20)
				batch *= 2;
		}
		if (!err)
			rate = (double)count / (t - start);
	}
	release(&in);
	return rate;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rnsc bench crypto [--seconds S] [--quick] [--json FILE] [--no-reference]\n"
		"       rnsc bench echo [OPTIONS]   (see rnsc bench echo --help)\n"
		"       rnsc bench mesh [OPTIONS]   (see rnsc bench mesh --help)\n\n"
		"Measures operations per second of every crypto primitive on every loaded crypto\n"
		"backend and on the embedded reference (RNS, in-process), in the same run, and\n"
		"prints the rnsc/reference ratio. This is the crypto bound later benchmarks are\n"
		"judged against.\n\n"
		"  --seconds S     time per cell (default 0.5)\n"
		"  --quick         0.1 s per cell\n"
		"  --json FILE     also write the results as JSON to FILE (- for stdout)\n"
		"  --no-reference  skip the reference column (no ratio is printed then)\n"
		"  -h, --help      show this help\n");
}

/* argv[0] names the command ("bench-crypto"); options follow. */
int cmd_bench_crypto(int argc, char **argv)
{
	static const struct option opts[] = {
		{"seconds", required_argument, NULL, 's'}, {"quick", no_argument, NULL, 'q'},
		{"json", required_argument, NULL, 'j'},    {"no-reference", no_argument, NULL, 'n'},
		{"help", no_argument, NULL, 'h'},          {0, 0, 0, 0}};
	double seconds = 0.5;
	int json = 0, with_ref = 1, c;
	const char *json_file = NULL;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			seconds = atof(optarg);
			if (seconds <= 0 || seconds > 60) {
				fprintf(stderr, "rnsc bench: --seconds must be in (0, 60]\n");
				return CLI_USAGE;
			}
			break;
		case 'q':
			seconds = 0.1;
			break;
		case 'j':
			json = 1;
			json_file = strcmp(optarg, "-") == 0 ? NULL : optarg;
			break;
		case 'n':
			with_ref = 0;
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			usage(stderr);
			return CLI_USAGE;
		}
	}
	cli_env env;
	int rc = cli_env_open(&env, NULL, 0);
	if (rc)
		return rc;
	rnsc_pyref *ref = NULL;
	if (with_ref && (rc = rnsc_pyref_open(env.ctx, &ref)) != 0) {
		fprintf(stderr,
			"rnsc bench: the embedded reference is unavailable (%s); run 'make "
			"venv' or pass --no-reference\n",
			rnsc_strerror(rc));
		cli_env_close(&env);
		return CLI_SETUP;
	}
	/* One context per plugin backend, each with that backend first. */
	const char *names[RNSC_CRYPTO_MAX_BACKENDS];
	size_t nb = 0;
	uint64_t timed = 0;
	for (size_t i = 0; i < N_OPS; i++)
		if (OPS[i].prim >= 0)
			timed |= RNSC_PRIM_BIT(OPS[i].prim);
	/* Backends serving none of these primitives (e.g. randomx) get no column. */
	for (size_t k = 0; rnsc_crypto_backend_at(env.ctx, k); k++) {
		const rnsc_crypto_backend *be = rnsc_crypto_backend_at(env.ctx, k);
		if (be->prims & timed)
			names[nb++] = be->name;
	}
	double rates[N_OPS][RNSC_CRYPTO_MAX_BACKENDS + 1];
	char order[512];
	for (size_t b = 0; b < nb; b++) {
		snprintf(order, sizeof(order), "%s", names[b]);
		for (size_t k = 0; k < nb; k++)
			if (k != b) {
				strncat(order, ",", sizeof(order) - strlen(order) - 1);
				strncat(order, names[k], sizeof(order) - strlen(order) - 1);
			}
		(void)rnsc_crypto_set_order(env.ctx, order);
		const rnsc_crypto_backend *be = rnsc_crypto_backend_find(env.ctx, names[b]);
		for (size_t i = 0; i < N_OPS; i++)
			rates[i][b] = OPS[i].prim >= 0 && !(be->prims & RNSC_PRIM_BIT(OPS[i].prim))
					      ? NOT_SERVED
					      : time_op(env.ctx, &OPS[i], seconds);
	}
	for (size_t i = 0; i < N_OPS; i++) {
		double r = -1;
		if (ref && rnsc_pyref_bench(ref, OPS[i].id, OPS[i].size, seconds, &r) != 0)
			r = -1;
		rates[i][nb] = r;
	}
	/* JSON on stdout replaces the table, so the output stays parseable. */
	FILE *tf = json && !json_file ? stderr : stdout;
	/* Table: which backend actually served (a backend lacking a primitive is served by
	 * the next one; mark those cells). */
	fprintf(tf, "%-28s", "operation (ops/s)");
	for (size_t b = 0; b < nb; b++)
		fprintf(tf, " %12s", names[b]);
	if (ref)
		fprintf(tf, " %12s %8s", "reference", "best/ref");
	fprintf(tf, "\n");
	for (size_t i = 0; i < N_OPS; i++) {
		fprintf(tf, "%-28s", OPS[i].label);
		double best = -1;
		for (size_t b = 0; b < nb; b++) {
			if (rates[i][b] == NOT_SERVED)
				fprintf(tf, " %12s", "n/a");
			else if (rates[i][b] < 0)
				fprintf(tf, " %12s", "error");
			else
				fprintf(tf, " %12.0f", rates[i][b]);
			if (rates[i][b] > best)
				best = rates[i][b];
		}
		if (ref) {
			if (rates[i][nb] > 0)
				fprintf(tf, " %12.0f %7.1fx", rates[i][nb], best / rates[i][nb]);
			else
				fprintf(tf, " %12s %8s", "error", "-");
		}
		fprintf(tf, "\n");
	}
	if (ref)
		fprintf(tf,
			"\nreference: rns %s (embedded CPython); a backend that lacks a primitive "
			"shows n/a; composite operations use the backend first and the next for the rest.\n",
			rnsc_pyref_version(ref));
	if (json) {
		FILE *f = json_file ? fopen(json_file, "w") : stdout;
		if (!f) {
			fprintf(stderr, "rnsc bench: cannot write %s\n", json_file);
			rc = CLI_SETUP;
		} else {
			fprintf(f, "{");
			cli_env_json(f);
			fprintf(f,
				", \"seconds_per_cell\": %.3f, \"reference_version\": ", seconds);
			cli_json_str(f, ref ? rnsc_pyref_version(ref) : NULL);
			fprintf(f, ", \"results\": [");
			int first = 1;
			for (size_t i = 0; i < N_OPS; i++)
				for (size_t b = 0; b <= nb; b++) {
					if (b == nb && !ref)
						continue;
					fprintf(f, "%s\n  {\"op\": ", first ? "" : ",");
					first = 0;
					cli_json_str(f, OPS[i].id);
					fprintf(f, ", \"size\": %zu, \"backend\": ", OPS[i].size);
					cli_json_str(f, b == nb ? "reference" : names[b]);
					if (rates[i][b] == NOT_SERVED)
						fprintf(f,
							", \"ops_per_s\": null, \"served\": false}");
					else if (rates[i][b] < 0)
						fprintf(f,
							", \"ops_per_s\": null, \"error\": true}");
					else
						fprintf(f,
							", \"ops_per_s\": %.1f, \"mb_per_s\": %.2f}",
							rates[i][b],
							rates[i][b] * (double)OPS[i].size / 1e6);
				}
			fprintf(f, "\n]}\n");
			if (json_file)
				fclose(f);
		}
	}
	rnsc_pyref_close(ref);
	cli_env_close(&env);
	return rc;
}
