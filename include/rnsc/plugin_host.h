/* SPDX-License-Identifier: MIT */
/*
 * The plugin host: finds plugin .so files, loads them with dlopen, checks the
 * ABI handshake, creates one instance of each, runs crypto self-tests and
 * registers crypto backends in the context.
 *
 * Search order: $RNSC_PLUGIN_PATH (colon separated), the build tree's plugin
 * folders (when present), then the installed plugin folder. The first plugin
 * of a given name wins; later ones are recorded as duplicates.
 *
 * A broken plugin never takes the host down: every failure is recorded on the
 * plugin's record with a specific code and a message naming the file, logged,
 * and the host carries on.
 *
 * Ownership: the host owns every record, handle and instance, and must outlive
 * every use of the backends it registered; rnsc_plugin_host_del() unregisters
 * them from the context before unloading. Not thread-safe: use from one thread.
 */
#ifndef RNSC_PLUGIN_HOST_H
#define RNSC_PLUGIN_HOST_H

#include <stddef.h>

#include "ctx.h"
#include "crypto_abi.h"

typedef struct rnsc_plugin_rec {
	char *file;                   /* path loaded, or "builtin:<label>" */
	const rnsc_plugin_desc *desc; /* NULL when loading failed before the handshake */
	void *handle;                 /* dlopen handle, NULL for builtins */
	void *inst;                   /* per-instance state, NULL unless active */
	int status;                   /* 0 when active, else a negative rnsc_err */
	char error[512];              /* human-readable reason when status != 0 */
} rnsc_plugin_rec;

typedef struct rnsc_plugin_host rnsc_plugin_host;

RNSC_API int rnsc_plugin_host_new(rnsc_ctx *ctx, rnsc_plugin_host **out);
RNSC_API void rnsc_plugin_host_del(rnsc_plugin_host *h);
/* Appends one folder to the search list (missing folders are skipped at scan time). */
RNSC_API int rnsc_plugin_host_add_dir(rnsc_plugin_host *h, const char *dir);
/* Appends $RNSC_PLUGIN_PATH, the build tree's plugin folders (only for a program that runs
 * from the build tree) and the installed folder. */
RNSC_API int rnsc_plugin_host_add_default_dirs(rnsc_plugin_host *h);
/* Loads every *.so in the search folders (sorted by name within a folder). Returns the
 * number of plugins now active; failures are recorded, not returned. */
RNSC_API int rnsc_plugin_host_scan(rnsc_plugin_host *h);
/* Loads one file. Returns 0 or the specific error (also recorded): RNSC_ERR_DLOPEN,
 * RNSC_ERR_NOSYM, RNSC_ERR_ABI, RNSC_ERR_PLUGIN_DESC, RNSC_ERR_PLUGIN_INIT,
 * RNSC_ERR_SELFTEST, RNSC_ERR_DUPLICATE, RNSC_ERR_NOMEM. */
RNSC_API int rnsc_plugin_host_load_file(rnsc_plugin_host *h, const char *path);
/* Same handshake for a plugin linked into the binary (static builds, tests). */
RNSC_API int rnsc_plugin_host_load_builtin(rnsc_plugin_host *h, rnsc_plugin_init_fn init,
					   const char *label);
RNSC_API size_t rnsc_plugin_host_count(const rnsc_plugin_host *h);
RNSC_API const rnsc_plugin_rec *rnsc_plugin_host_at(const rnsc_plugin_host *h, size_t i);
/* The active plugin of that name, or NULL. */
RNSC_API const rnsc_plugin_rec *rnsc_plugin_host_find(const rnsc_plugin_host *h, const char *name);
/* The first active interface plugin (load order) whose ops->types lists `type`
 * ("TCPClientInterface", ...), or NULL. Its desc->ops is a validated rnsc_iface_ops
 * (iface_abi.h) and its inst the instance to pass to ops->open. */
RNSC_API const rnsc_plugin_rec *rnsc_plugin_host_find_iface(const rnsc_plugin_host *h,
							    const char *type);
/* Sets a configuration value plugins can read through host->config_get. Copies both. */
RNSC_API int rnsc_plugin_host_set_config(rnsc_plugin_host *h, const char *plugin, const char *key,
					 const char *value);
RNSC_API const char *rnsc_plugin_kind_name(uint32_t kind);

#endif
