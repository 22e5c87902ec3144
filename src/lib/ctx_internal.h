/* SPDX-License-Identifier: MIT */
/* Context internals shared by the core's own modules; not part of the public API. */
#ifndef RNSC_CTX_INTERNAL_H
#define RNSC_CTX_INTERNAL_H

#include "crypto.h"
#include "ctx.h"

struct rnsc_ctx {
	rnsc_log_fn log_fn;
	void *log_ud;
	int log_level;
	unsigned long fail_alloc_at; /* 0 = off */
	unsigned long alloc_count;
	/* crypto */
	rnsc_crypto_backend backends[RNSC_CRYPTO_MAX_BACKENDS];
	size_t n_backends;
	size_t order[RNSC_CRYPTO_MAX_BACKENDS]; /* indices into backends */
	size_t n_order;
	/* per-primitive pins from "prim=backend" items: backend index + 1, 0 = none */
	size_t pin[RNSC_PRIM_COUNT];
	/* cached per-primitive choice, rebuilt whenever backends or order change */
	const rnsc_crypto_backend *serve[RNSC_PRIM_COUNT];
	rnsc_rng_fn rng_fn;
	void *rng_ud;
};

void rnsc_crypto_rebuild(rnsc_ctx *ctx);

#endif
