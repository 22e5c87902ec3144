/* SPDX-License-Identifier: MIT */
/*
 * The rnsc plugin ABI, common to every kind: the descriptor a plugin returns from
 * rnsc_plugin_init, the host's upcall table and the versioning rules. Each kind's ops table
 * has its own header: crypto_abi.h, iface_abi.h, scenario_abi.h. Plugins compile against
 * include/rnsc/ only, never link librnsc, and reach the host only through the tables they
 * are handed at init.
 *
 * Versioning rules:
 *  - A plugin exports exactly one symbol, rnsc_plugin_init.
 *  - The host rejects a plugin whose abi_major differs from its own, or whose
 *    abi_minor is newer than its own.
 *  - Every table starts with struct_size. Slots are only ever appended; a slot
 *    that lies beyond the struct_size a plugin reports is treated as absent.
 *
 * Ownership: the descriptor and ops tables returned by a plugin are static
 * data owned by the plugin and must stay valid until the .so is unloaded.
 * Per-instance state (inst_size bytes, zeroed) is allocated by the host and
 * passed to every ops call; the host frees it after calling fini().
 */
#ifndef RNSC_PLUGIN_ABI_H
#define RNSC_PLUGIN_ABI_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define RNSC_PLUGIN_ABI_MAJOR 1
#define RNSC_PLUGIN_ABI_MINOR 0
#define RNSC_PLUGIN_INIT_SYMBOL "rnsc_plugin_init"

enum rnsc_plugin_kind {
	RNSC_PLUGIN_IFACE = 1,
	RNSC_PLUGIN_CRYPTO = 2,
	RNSC_PLUGIN_SCENARIO = 3,
};

enum rnsc_log_level {
	RNSC_LOG_CRITICAL = 0,
	RNSC_LOG_ERROR = 1,
	RNSC_LOG_WARNING = 2,
	RNSC_LOG_NOTICE = 3,
	RNSC_LOG_INFO = 4,
	RNSC_LOG_VERBOSE = 5,
	RNSC_LOG_DEBUG = 6,
	RNSC_LOG_PATHING = 7, /* the reference's LOG_PATHING and LOG_EXTREME */
	RNSC_LOG_EXTREME = 8,
};

/* Upcalls a plugin may make. host_ctx is opaque and is passed back on every call. */
typedef struct rnsc_host_api {
	size_t struct_size;
	uint32_t abi_major;
	uint32_t abi_minor;
	void *host_ctx;
	void (*log)(void *host_ctx, int level, const char *plugin, const char *msg);
	void *(*alloc)(void *host_ctx, size_t n);
	void (*free)(void *host_ctx, void *p);
	/* Monotonic clock in nanoseconds. */
	uint64_t (*now_ns)(void *host_ctx);
	/* Configuration lookup for this plugin ("section.key"); NULL when unset. */
	const char *(*config_get)(void *host_ctx, const char *plugin, const char *key);
} rnsc_host_api;

typedef struct rnsc_plugin_desc {
	size_t struct_size;
	uint32_t abi_major;
	uint32_t abi_minor;
	uint32_t kind;       /* enum rnsc_plugin_kind */
	const char *name;    /* unique, lower case, e.g. "openssl" */
	const char *version; /* the plugin's own version, e.g. "1.0.0" */
	const char *description;
	uint64_t caps;    /* kind-specific capability bits */
	size_t inst_size; /* bytes of per-instance state the host allocates */
	const void *ops;  /* kind-specific ops table, e.g. rnsc_crypto_ops */
	/* Called once per instance; returns 0 or a negative rnsc_err. May be NULL. */
	int (*init)(void *inst, const rnsc_host_api *host);
	/* Releases everything init acquired. May be NULL. */
	void (*fini)(void *inst);
} rnsc_plugin_desc;

typedef int (*rnsc_plugin_init_fn)(const rnsc_host_api *host, const rnsc_plugin_desc **out);

/* True when an ops table of reported size `sz` contains slot `field`. */
#define RNSC_OPS_HAS(ops, type, field)                                                             \
	((ops) != NULL && (ops)->struct_size >= offsetof(type, field) + sizeof((ops)->field) &&    \
	 (ops)->field != NULL)

#endif
