/* SPDX-License-Identifier: MIT */
/*
 * The interface-plugin ABI: what an RNSC_PLUGIN_IFACE plugin's descriptor->ops points
 * to (rnsc_iface_ops), and the per-interface upcall table the runtime hands to every
 * interface it opens (rnsc_iface_host_api). Like plugin_abi.h, this header is all a
 * plugin needs; plugins never link librnsc.
 *
 * Versioning: every table starts with struct_size; slots are only ever appended, and a
 * slot beyond the struct_size a side reports is treated as absent (RNSC_OPS_HAS).
 *
 * Model. One plugin serves one or more config `type` names (ops->types). For every
 * enabled [[section]] of such a type the runtime calls open() with a view of the
 * section and a fresh upcall table; the plugin returns an opaque interface handle.
 * A listening interface (a TCP server) turns each accepted connection into a child
 * interface of its own through host->spawn(), as the reference's TCPServerInterface
 * spawns a TCPClientInterface per client; the runtime then treats the child like any
 * other interface (send, stats, close) with the same ops table.
 *
 * Threading. Every interface belongs to one rnsc loop. open(), send(), stats(),
 * describe() and close() for an interface, and every fd/timer callback the plugin
 * registered through that interface's upcall table, run on that loop's thread; a child
 * belongs to its parent's loop. A plugin needs no locks for per-interface state. The
 * plugin instance (desc->inst_size) may be shared by interfaces on different loops in
 * the sharded IO model, so plugins keep no mutable state there.
 *
 * Ownership. The plugin owns its handle and everything it allocates, and frees them in
 * close(); it owns the fds it opens and must remove their watches before closing them.
 * The runtime owns the upcall tables (valid from open()/spawn() until close() returns)
 * and the watch and timer records (released by the runtime at close() if the plugin
 * forgot them). Frames passed in either direction are borrowed for the call only.
 *
 * Re-entrancy. Upcalls may be made from any plugin callback. deliver() may re-enter the
 * same interface's send() (a transport answering at once), never its close(): the
 * runtime defers a close requested while a plugin callback is on the stack.
 */
#ifndef RNSC_IFACE_ABI_H
#define RNSC_IFACE_ABI_H

#include <stddef.h>
#include <stdint.h>

#include "plugin_abi.h"

/* fd interest and reported events (same values as the runtime loop's rnsc_ev). */
enum rnsc_iface_ev {
	RNSC_IFACE_EV_READ = 1u << 0,
	RNSC_IFACE_EV_WRITE = 1u << 1,
	RNSC_IFACE_EV_ERROR = 1u << 2, /* error or hang-up; always reported */
};

/* Why inbound or outbound data was lost. The counters only ever grow. */
enum rnsc_iface_drop {
	RNSC_IFACE_DROP_RUNT = 0,     /* frame of 1..HEADER_MINSIZE bytes (the reference's limit) */
	RNSC_IFACE_DROP_OVERSIZE = 1, /* frame beyond HW_MTU + IFAC size */
	RNSC_IFACE_DROP_GARBAGE = 2,  /* bytes outside any frame (n counts bytes, not frames) */
	RNSC_IFACE_DROP_PARTIAL = 3,  /* frame cut short by a disconnect */
	RNSC_IFACE_DROP_OFFLINE = 4,  /* outbound frame while the interface is offline */
	RNSC_IFACE_DROP_TXQUEUE = 5,  /* outbound frame refused: the send queue is full */
	RNSC_IFACE_DROP_REFUSED =
		6, /* incoming connection closed at once: a client limit or a block */
	RNSC_IFACE_DROP_IDLE = 7, /* connection closed for never speaking (evicted or reaped) */
	RNSC_IFACE_DROP_COUNT
};

/* Handles of runtime records; opaque to the plugin. */
typedef struct rnsc_iface_watch rnsc_iface_watch;
typedef struct rnsc_iface_timer rnsc_iface_timer;

typedef void (*rnsc_iface_io_fn)(void *ud, int fd, unsigned events);
typedef void (*rnsc_iface_timer_fn)(void *ud);

/*
 * The per-interface upcall table. hctx identifies the interface to the runtime and is
 * passed back on every call. All calls: the interface's loop thread only.
 */
typedef struct rnsc_iface_host_api {
	size_t struct_size;
	void *hctx;
	/* Watches fd (level-triggered). Returns 0, RNSC_ERR_INVAL, RNSC_ERR_STATE (fd already
	 * watched), RNSC_ERR_NOMEM or RNSC_ERR_SYS. *out is valid until watch_remove(). */
	int (*watch_add)(void *hctx, int fd, unsigned events, rnsc_iface_io_fn fn, void *ud,
			 rnsc_iface_watch **out);
	/* Changes the interest set. Returns 0, RNSC_ERR_INVAL or RNSC_ERR_SYS. */
	int (*watch_modify)(void *hctx, rnsc_iface_watch *w, unsigned events);
	/* Stops watching (call before closing the fd); no callback follows. NULL is a no-op. */
	void (*watch_remove)(void *hctx, rnsc_iface_watch *w);
	/* A stopped timer; start it with timer_start. Returns 0, RNSC_ERR_INVAL or NOMEM. */
	int (*timer_new)(void *hctx, rnsc_iface_timer_fn fn, void *ud, rnsc_iface_timer **out);
	/* (Re)arms: fires delay_ns from now, then every period_ns when period_ns > 0. Restarting
	 * a pending timer moves it. May be called from the timer's own callback. 0 or NOMEM. */
	int (*timer_start)(void *hctx, rnsc_iface_timer *t, uint64_t delay_ns, uint64_t period_ns);
	/* Disarms; the record stays usable. NULL is a no-op. */
	void (*timer_stop)(void *hctx, rnsc_iface_timer *t);
	/* Disarms and frees; safe from the timer's own callback. NULL is a no-op. */
	void (*timer_del)(void *hctx, rnsc_iface_timer *t);
	/* The loop's cached monotonic time in nanoseconds. */
	uint64_t (*now_ns)(void *hctx);
	/* Hands one de-framed inbound frame (the packet, IFAC included) to the runtime. */
	void (*deliver)(void *hctx, const uint8_t *frame, size_t len);
	/* Reports a change of link state (connected, listening; or lost). */
	void (*set_online)(void *hctx, int online);
	/*
	 * Registers child (a plugin handle, e.g. an accepted connection) as a new interface
	 * named `name` whose parent is this one. On success *child_api is the child's own
	 * upcall table and the runtime will call ops->close(child) when it is removed; on
	 * failure (RNSC_ERR_NOMEM, RNSC_ERR_STATE while the parent is closing) the plugin
	 * still owns child and must release it.
	 */
	int (*spawn)(void *hctx, void *child, const char *name,
		     const struct rnsc_iface_host_api **child_api);
	/* Asks the runtime to remove this interface (a spawned connection whose peer went
	 * away). The runtime calls ops->close() later on the loop, never from inside. */
	void (*request_close)(void *hctx);
	void (*log)(void *hctx, int level, const char *msg);
	/* Counts n drops of a reason (n is bytes for RNSC_IFACE_DROP_GARBAGE). */
	void (*drop)(void *hctx, unsigned reason, uint64_t n);
} rnsc_iface_host_api;

/*
 * A read-only view of one interface's config section, valid during open() only (copy
 * what you keep). Getters return 0, RNSC_ERR_NOTFOUND (absent; *out untouched) or a
 * bad-value code (RNSC_ERR_CONFIG_VALUE, RNSC_ERR_RANGE, RNSC_ERR_CONFIG_INTERP), in which
 * case the runtime has already recorded a message naming the section and the option:
 * open() then just returns the code. Booleans follow the reference (yes/no, true/false,
 * on/off, 1/0).
 */
typedef struct rnsc_iface_config {
	size_t struct_size;
	void *cctx;
	const char *name; /* the interface's name (its subsection) */
	const char *type; /* the config type that selected this plugin */
	int (*get_str)(void *cctx, const char *key, const char **out);
	int (*get_int)(void *cctx, const char *key, int64_t *out);
	int (*get_bool)(void *cctx, const char *key, int *out);
	int (*get_float)(void *cctx, const char *key, double *out);
	/* Records why open() fails; key names the option at fault (NULL: the section).
	 * Returns code, so plugins write `return cfg->fail(cfg->cctx, "listen_port", rc, m);`. */
	int (*fail)(void *cctx, const char *key, int code, const char *msg);
	/* The reference's as_list(): "a, b" gives two items, a single value one. The items
	 * stay valid during open() only. Same returns as the other getters. */
	int (*get_list)(void *cctx, const char *key, const char *const **items, size_t *n);
	/*
	 * Appended slots (test with RNSC_OPS_HAS(cfg, rnsc_iface_config, sub_at)): the
	 * section's own subsections, [[[name]]] under an interface (RNodeMultiInterface's
	 * radios), in file order. sub_at() fills *out (the plugin sets nothing) with a view
	 * of the i-th one: out->name is the subsection's name, out->type this section's type,
	 * the getters and fail() read and blame the subsection; a failure there fails this
	 * open() as well. Views stay valid during open() only; they have no subsections of
	 * their own (sub_count() gives 0). At most RNSC_IFACE_SUBS_MAX are visible.
	 * sub_at returns 0, or RNSC_ERR_NOTFOUND when i >= sub_count().
	 */
	size_t (*sub_count)(void *cctx);
	int (*sub_at)(void *cctx, size_t i, struct rnsc_iface_config *out);
} rnsc_iface_config;

#define RNSC_IFACE_SUBS_MAX 32

/* What ops->stats() reports. Byte counts follow the reference's rxb/txb: rx counts
 * de-framed payload bytes delivered, tx counts bytes written to the medium (framing
 * included). A parent (server) includes its children's traffic, as the reference does. */
typedef struct rnsc_iface_stats {
	size_t struct_size;
	uint64_t rx_bytes, tx_bytes;
	uint64_t rx_packets, tx_packets;
	int online;
	uint64_t bitrate;     /* bits/s the interface assumes (configured or guessed) */
	size_t hw_mtu;        /* the reference's HW_MTU after optimise_mtu (0: None) */
	uint32_t children;    /* spawned interfaces currently open */
	uint16_t local_port;  /* bound/local port, 0 when not applicable */
	uint16_t remote_port; /* peer port, 0 when not connected */
	uint32_t reconnects;  /* successful reconnections after the first connect */
} rnsc_iface_stats;

typedef struct rnsc_iface_ops {
	size_t struct_size;
	/* Config `type` names this plugin serves, NULL-terminated. */
	const char *const *types;
	/*
	 * Creates an interface. inst is the plugin instance, host the upcall table (kept by
	 * the plugin until close). Must not block on the network: connections are made from
	 * fd/timer callbacks. Returns 0 with *handle set, or a negative rnsc_err after
	 * cfg->fail() (bad value, port in use: RNSC_ERR_CONFIG_VALUE, RNSC_ERR_IO, ...).
	 */
	int (*open)(void *inst, const rnsc_iface_config *cfg, const rnsc_iface_host_api *host,
		    void **handle);
	/* Queues one outbound packet; the plugin frames it. Returns 0 or RNSC_ERR_STATE
	 * (offline), RNSC_ERR_NOMEM / RNSC_ERR_TOOBIG (queue full); each also counted as a drop. */
	int (*send)(void *handle, const uint8_t *frame, size_t len);
	/* Fills *out (the runtime sets out->struct_size first). Returns 0. */
	int (*stats)(void *handle, rnsc_iface_stats *out);
	/* Releases the interface; the runtime has already closed its children. */
	void (*close)(void *handle);
	/* Optional: a one-line description like the reference's str(), e.g.
	 * "TCPInterface[name/127.0.0.1:4242]". Returns the length (as snprintf). */
	int (*describe)(void *handle, char *buf, size_t cap);
} rnsc_iface_ops;

#endif
