/* SPDX-License-Identifier: MIT */
/*
 * The runtime side of interfaces: opens interfaces from config sections through the
 * loaded IFACE plugins (matched on `type`), wires each one's upcalls (iface_abi.h) to an
 * rnsc_loop, keeps the list (spawned children included), routes inbound frames to one
 * callback (where the transport plugs in), sends outbound frames and reports status.
 *
 * Threading: an rnsc_iface_host and all its interfaces belong to the thread that owns
 * its loop; every function here and every callback it makes run on that thread. (The
 * sharded IO model uses one host per shard loop.)
 *
 * Ownership: the host owns every rnsc_iface. A pointer stays valid until the interface
 * is removed: by rnsc_iface_close(), by its plugin (a spawned connection whose peer went
 * away), by closing its parent, or by rnsc_iface_host_del(). The event callback reports
 * RNSC_IFACE_REMOVED just before the record is freed. The plugin host and the loop must
 * outlive the iface host.
 *
 * Errors: 0 or a negative rnsc_err, listed per function. Open failures fill a
 * rnsc_config_error whose message names the section and the option at fault.
 */
#ifndef RNSC_IFACE_HOST_H
#define RNSC_IFACE_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "cfgfile.h"
#include "ctx.h"
#include "iface_abi.h"
#include "loop.h"
#include "plugin_host.h"

typedef struct rnsc_iface_host rnsc_iface_host;
typedef struct rnsc_iface rnsc_iface;

/* An inbound frame (de-framed; IFAC, if any, still on). frame is borrowed for the call.
 * The callback may send on any interface; closing one is deferred to a later tick. */
typedef void (*rnsc_iface_rx_fn)(void *ud, rnsc_iface *iface, const uint8_t *frame, size_t len,
				 uint64_t now_ns);

enum rnsc_iface_event {
	RNSC_IFACE_ADDED = 1, /* opened from config, or spawned by a parent */
	RNSC_IFACE_ONLINE = 2,
	RNSC_IFACE_OFFLINE = 3,
	RNSC_IFACE_REMOVED = 4, /* about to be freed */
};
typedef void (*rnsc_iface_event_fn)(void *ud, rnsc_iface *iface, int event);

/* Status: the plugin's stats plus the runtime's own counters. */
typedef struct rnsc_iface_status {
	const char *name;
	const char *type;
	const char *plugin;
	rnsc_iface_stats stats;
	/* Drops reported by the plugin; a parent also accumulates its removed children's. */
	uint64_t drops[RNSC_IFACE_DROP_COUNT];
	uint64_t delivered; /* frames handed to the rx callback */
	int is_child;
} rnsc_iface_status;

/* Creates an empty host. Returns 0, RNSC_ERR_INVAL or RNSC_ERR_NOMEM. */
RNSC_API int rnsc_iface_host_new(rnsc_ctx *ctx, rnsc_plugin_host *plugins, rnsc_loop *loop,
				 rnsc_iface_host **out);
/* Closes every interface (children first; events are reported) and frees. NULL: no-op. */
RNSC_API void rnsc_iface_host_del(rnsc_iface_host *h);
RNSC_API void rnsc_iface_host_set_rx(rnsc_iface_host *h, rnsc_iface_rx_fn fn, void *ud);
RNSC_API void rnsc_iface_host_set_event(rnsc_iface_host *h, rnsc_iface_event_fn fn, void *ud);

/*
 * Opens one interface of `type` named `name` with options from section s. Returns 0
 * (and *out when not NULL), or with err filled: RNSC_ERR_NOTFOUND (no plugin serves
 * the type; the message names the section and "type"), the config getters' bad-value
 * codes, or whatever the plugin's open returned (RNSC_ERR_IO for a port in use, ...).
 */
RNSC_API int rnsc_iface_host_open(rnsc_iface_host *h, const rnsc_config_section *s,
				  const char *name, const char *type, rnsc_iface **out,
				  rnsc_config_error *err);

/* 1 when a loaded plugin serves `type`. */
RNSC_API int rnsc_iface_host_serves(const rnsc_iface_host *h, const char *type);

/* 1 for the open failures that are the world's rather than the configuration's (a
 * missing device, command or address, a port in use: RNSC_ERR_NOENT, _PERM, _IO, _SYS). */
RNSC_API int rnsc_iface_open_failed_on_resource(int rc);
/* The failures rnsc_iface_host_open_retry tries again after: those above, and a device
 * that is there but not ready (RNSC_ERR_STATE, or RNSC_ERR_PLUGIN_INIT from a plugin that
 * gave no reason); never a configuration error. */
RNSC_API int rnsc_iface_open_failure_retryable(int rc);

/* The reference's period for bringing up an interface whose device could not be opened
 * (RNodeInterface.RECONNECT_WAIT and the 5 s sleep of its reconnect_port loops). */
#define RNSC_IFACE_RETRY_MS 5000u

/* Runs before every retry of rnsc_iface_host_open_retry (the node reads the section's
 * generic options there); a nonzero return gives that attempt up. */
typedef int (*rnsc_iface_prepare_fn)(void *ud, const rnsc_config_section *s, const char *type);
/* Called after a retry opened the interface. */
typedef void (*rnsc_iface_reopened_fn)(void *ud, rnsc_iface *iface, const rnsc_config_section *s,
				       const char *type);
RNSC_API void rnsc_iface_host_set_retry_hooks(rnsc_iface_host *h, rnsc_iface_prepare_fn prep,
					      rnsc_iface_reopened_fn done, void *ud);

/*
 * rnsc_iface_host_open, and when that fails retryably (above) and retry_ms > 0, the
 * host tries again every retry_ms (as the reference's RNode and Weave interfaces do)
 * until it opens or the host is deleted; each failed retry is logged at verbose level.
 * s must outlive the host. Returns the first attempt's result (RNSC_ERR_NOMEM also when
 * the retry cannot be scheduled).
 */
RNSC_API int rnsc_iface_host_open_retry(rnsc_iface_host *h, const rnsc_config_section *s,
					const char *name, const char *type, unsigned retry_ms,
					rnsc_iface **out, rnsc_config_error *err);
/* Interfaces waiting for a retry. */
RNSC_API size_t rnsc_iface_host_retry_count(const rnsc_iface_host *h);

/* Opens every enabled interface of [interfaces] in file order; stops at the first
 * failure (as the reference stops at startup) leaving those opened so far. Returns the
 * number opened, or a negative code with err filled. */
RNSC_API int rnsc_iface_host_open_config(rnsc_iface_host *h, const rnsc_config *cfg,
					 rnsc_config_error *err);

/* Number of interfaces (children included) and the i-th in creation order. */
RNSC_API size_t rnsc_iface_host_count(const rnsc_iface_host *h);
RNSC_API rnsc_iface *rnsc_iface_host_at(const rnsc_iface_host *h, size_t i);
/* The interface of that name, or NULL. */
RNSC_API rnsc_iface *rnsc_iface_host_find(const rnsc_iface_host *h, const char *name);

/* Sends one packet; the plugin frames it. Returns 0, RNSC_ERR_INVAL, RNSC_ERR_STATE
 * (offline or closing) or the plugin's send error. */
RNSC_API int rnsc_iface_send(rnsc_iface *i, const uint8_t *frame, size_t len);
/* Fills *out. Returns 0 or RNSC_ERR_INVAL. */
RNSC_API int rnsc_iface_status_get(const rnsc_iface *i, rnsc_iface_status *out);
/* Removes the interface and its children; deferred to the next loop tick when called
 * from inside a plugin or rx/event callback. NULL is a no-op. */
RNSC_API void rnsc_iface_close(rnsc_iface *i);

RNSC_API const char *rnsc_iface_name(const rnsc_iface *i);
RNSC_API int rnsc_iface_online(const rnsc_iface *i);
RNSC_API rnsc_iface *rnsc_iface_parent(const rnsc_iface *i);
/* The plugin's description (reference-style str()), written to buf. Returns length. */
RNSC_API int rnsc_iface_describe(const rnsc_iface *i, char *buf, size_t cap);
/* Free for the caller (e.g. the transport's per-interface state). */
RNSC_API void rnsc_iface_set_user(rnsc_iface *i, void *user);
RNSC_API void *rnsc_iface_user(const rnsc_iface *i);

#endif
