/* SPDX-License-Identifier: MIT */
/*
 * Shared set-up for conformance suites: one context with every crypto plugin
 * found on RNSC_PLUGIN_PATH loaded (self-tests run), plus the embedded
 * reference registered as the crypto backend named "reference".
 *
 * The reference is mandatory: when it cannot be imported, conf_setup() prints
 * how to install it and returns a negative code, and the suite must fail.
 */
#ifndef RNSC_CONF_BACKENDS_H
#define RNSC_CONF_BACKENDS_H

#include "crypto.h"
#include "ctx.h"

struct rnsc_pyref;

/* Returns 0, or a negative rnsc_err after printing the reason on stderr. Idempotent. */
int conf_setup(void);
void conf_teardown(void);
rnsc_ctx *conf_ctx(void);
struct rnsc_pyref *conf_ref(void);
/* Every backend under test: the plugins ("openssl", "sodium", ...) then "reference". */
size_t conf_backend_count(void);
const rnsc_crypto_backend *conf_backend(size_t i);
/* A fresh context whose crypto order is exactly `name` followed by every other plugin
 * (so primitives the named backend lacks still work). Caller frees with rnsc_ctx_del. */
rnsc_ctx *conf_ctx_for(const char *name);
/* Directory of conformance/vectors in the source tree. */
const char *conf_vectors_dir(void);

#endif
