/* SPDX-License-Identifier: MIT */
/*
 * A program's rnsc environment: a context, the plugin host with the default plugin folders
 * scanned, and the crypto order applied. What every rnsc program (the CLI's commands, the
 * benchmark runners and participants, the bridge) sets up first; and the "environment"
 * object that benchmark reports carry (machine, build, which backend serves each primitive).
 *
 * Ownership: rnsc_env_open() fills caller storage; rnsc_env_close() frees the host and the
 * context (in that order) and may be called on a zeroed or half-opened env.
 */
#ifndef RNSC_ENV_H
#define RNSC_ENV_H

#include <stddef.h>
#include <stdio.h>

#include "ctx.h"
#include "plugin_host.h"

typedef struct rnsc_env {
	rnsc_ctx *ctx;
	rnsc_plugin_host *host;
	int verbose;
} rnsc_env;

/* Creates the context (log level from verbose: 0 warning, 1 verbose, 2+ debug), loads the
 * plugins of the default folders and applies crypto_order (NULL or empty: $RNSC_CRYPTO,
 * else rnsc_env_default_order()). Returns 0, or a negative rnsc_err after writing
 * "rnsc: <what is missing>" to err (NULL: silently); the env is then closed. */
RNSC_API int rnsc_env_open(rnsc_env *env, const char *crypto_order, int verbose, FILE *err);
RNSC_API void rnsc_env_close(rnsc_env *env);
/* The default crypto order for what loaded: OpenSSL first, then libsodium, then any other
 * backend; with both, X25519 and Ed25519 from libsodium (OpenSSL builds a key object per
 * call, which costs it most of its signing rate; bench/results/crypto.json). */
RNSC_API void rnsc_env_default_order(rnsc_ctx *ctx, char *buf, size_t cap);
/* Writes "environment": {cpu, kernel, compiler, rnsc_version, commit, cflags, crypto,
 * loadavg, online_cpus} (no trailing comma). */
RNSC_API void rnsc_env_json(FILE *f);

#endif
