/* SPDX-License-Identifier: MIT */
#include "ctx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctx_internal.h"

static const char *level_name(int level)
{
	static const char *names[] = {"critical", "error",   "warning", "notice",
				      "info",     "verbose", "debug"};
	if (level >= 0 && level <= RNSC_LOG_DEBUG)
		return names[level];
	return "log";
}

static void stderr_sink(void *ud, int level, const char *who, const char *msg)
{
	(void)ud;
	fprintf(stderr, "rnsc[%s] %s: %s\n", level_name(level), who ? who : "core", msg);
}

int rnsc_ctx_new(rnsc_ctx **out)
{
	rnsc_ctx *ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return RNSC_ERR_NOMEM;
	ctx->log_fn = stderr_sink;
	ctx->log_level = RNSC_LOG_NOTICE;
	*out = ctx;
	return 0;
}

void rnsc_ctx_del(rnsc_ctx *ctx)
{
	if (!ctx)
		return;
	rnsc_memzero(ctx, sizeof(*ctx));
	free(ctx);
}

void rnsc_ctx_set_log(rnsc_ctx *ctx, rnsc_log_fn fn, void *ud, int level)
{
	ctx->log_fn = fn;
	ctx->log_ud = ud;
	ctx->log_level = level;
}

void rnsc_ctx_set_log_level(rnsc_ctx *ctx, int level)
{
	ctx->log_level = level;
}

int rnsc_ctx_log_level(const rnsc_ctx *ctx)
{
	return ctx->log_fn ? ctx->log_level : -1;
}

void rnsc_vlog(rnsc_ctx *ctx, int level, const char *who, const char *fmt, va_list ap)
{
	char line[1024];
	if (!ctx || !ctx->log_fn || level > ctx->log_level)
		return;
	vsnprintf(line, sizeof(line), fmt, ap);
	ctx->log_fn(ctx->log_ud, level, who, line);
}

void rnsc_log(rnsc_ctx *ctx, int level, const char *who, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rnsc_vlog(ctx, level, who, fmt, ap);
	va_end(ap);
}

static int alloc_should_fail(rnsc_ctx *ctx)
{
	ctx->alloc_count++;
	return ctx->fail_alloc_at != 0 && ctx->alloc_count == ctx->fail_alloc_at;
}

void *rnsc_alloc(rnsc_ctx *ctx, size_t n)
{
	if (ctx && alloc_should_fail(ctx))
		return NULL;
	return malloc(n ? n : 1);
}

void *rnsc_calloc(rnsc_ctx *ctx, size_t n, size_t size)
{
	if (ctx && alloc_should_fail(ctx))
		return NULL;
	return calloc(n ? n : 1, size ? size : 1);
}

void rnsc_free(rnsc_ctx *ctx, void *p)
{
	(void)ctx;
	free(p);
}

void rnsc_free_secret(rnsc_ctx *ctx, void *p, size_t n)
{
	if (p)
		rnsc_memzero(p, n);
	rnsc_free(ctx, p);
}

unsigned long rnsc_ctx_fail_alloc_after(rnsc_ctx *ctx, unsigned long nth)
{
	unsigned long made = ctx->alloc_count;
	ctx->alloc_count = 0;
	ctx->fail_alloc_at = nth;
	return made;
}

void rnsc_memzero(void *p, size_t n)
{
	/* A volatile function pointer keeps the compiler from proving the store dead. */
	static void *(*const volatile wipe)(void *, int, size_t) = memset;
	wipe(p, 0, n);
}

int rnsc_ct_memcmp(const void *a, const void *b, size_t n)
{
	const volatile uint8_t *x = a, *y = b;
	uint8_t d = 0;
	for (size_t i = 0; i < n; i++)
		d |= (uint8_t)(x[i] ^ y[i]);
	return d != 0;
}
