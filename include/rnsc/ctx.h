/* SPDX-License-Identifier: MIT */
/*
 * rnsc_ctx: the root object everything hangs off (allocator, log sink, crypto
 * backend selection). rnsc keeps no global state: two contexts in one process
 * are fully independent.
 *
 * Threading: a context is not internally locked. Configure it (log sink,
 * backends, order) from one thread before sharing it; crypto calls through a
 * configured context may then be made from any thread as long as the backends
 * themselves are thread-safe (openssl and sodium are).
 */
#ifndef RNSC_CTX_H
#define RNSC_CTX_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "crypto_abi.h"

typedef struct rnsc_ctx rnsc_ctx;

/* Log sink: `who` names the module or plugin, `msg` is one line without newline. */
typedef void (*rnsc_log_fn)(void *ud, int level, const char *who, const char *msg);

/* Creates a context with the default stderr log sink at RNSC_LOG_NOTICE.
 * Returns 0 or RNSC_ERR_NOMEM. The caller owns *out and frees it with rnsc_ctx_del(). */
RNSC_API int rnsc_ctx_new(rnsc_ctx **out);
/* Frees the context. Backends registered in it are forgotten, not unloaded. NULL is fine. */
RNSC_API void rnsc_ctx_del(rnsc_ctx *ctx);

/* Replaces the log sink (fn NULL silences all logging) and sets the maximum level logged. */
RNSC_API void rnsc_ctx_set_log(rnsc_ctx *ctx, rnsc_log_fn fn, void *ud, int level);
/* Changes only the level, keeping the current sink. */
RNSC_API void rnsc_ctx_set_log_level(rnsc_ctx *ctx, int level);
RNSC_API int rnsc_ctx_log_level(const rnsc_ctx *ctx);
RNSC_API void rnsc_log(rnsc_ctx *ctx, int level, const char *who, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
RNSC_API void rnsc_vlog(rnsc_ctx *ctx, int level, const char *who, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

/* Allocation through the context (malloc today; one place to hook failure injection). */
RNSC_API void *rnsc_alloc(rnsc_ctx *ctx, size_t n);
RNSC_API void *rnsc_calloc(rnsc_ctx *ctx, size_t n, size_t size);
RNSC_API void rnsc_free(rnsc_ctx *ctx, void *p);
/* Wipes n bytes at p before freeing (for secrets). */
RNSC_API void rnsc_free_secret(rnsc_ctx *ctx, void *p, size_t n);

/* Allocation-failure injection for tests: the nth allocation from now (1 = next) fails;
 * 0 disables. Returns how many allocations have been made since the last call. */
RNSC_API unsigned long rnsc_ctx_fail_alloc_after(rnsc_ctx *ctx, unsigned long nth);

/* Wipes memory in a way the compiler will not elide. */
RNSC_API void rnsc_memzero(void *p, size_t n);
/* Constant-time comparison: 0 when equal. */
RNSC_API int rnsc_ct_memcmp(const void *a, const void *b, size_t n);

#endif
