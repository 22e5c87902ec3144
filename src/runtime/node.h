/* SPDX-License-Identifier: MIT */
/*
 * A running Reticulum node: the reference's Reticulum() start-up and Transport.start()
 * wired from rnsc's parts. It finds and reads the configuration folder, loads the
 * transport identity (<configdir>/storage/transport_identity, the reference's 64-byte
 * private key file, created on first start), creates the sans-I/O transport engine,
 * opens [interfaces] through the interface host, applies IFAC per interface, moves
 * frames between interfaces and the engine, drives the engine's timers from the loop,
 * runs the probe responder (rnstransport.probe) and persists the tables it keeps.
 *
 * Behaviour copied from the reference (Reticulum.py, Transport.py, rns 1.5.4):
 *   - without enable_transport (and without static_transport_identity) the engine runs
 *     on an ephemeral identity; the stored one is still created and kept;
 *   - the probe destination exists only when transport and respond_to_probes are both
 *     on; management destinations announce 15 s after start, then every 2 hours;
 *   - interface options read by the node (the plugin reads the rest): interface_mode /
 *     mode, network_name / networkname, passphrase / pass_phrase, ifac_size (bits);
 *     a spawned interface inherits its parent's mode and IFAC.
 *   - an interface is attached to the engine from the moment it exists until it is
 *     removed (the reference's Transport.interfaces), online or not;
 *   - known destinations (storage/known_destinations) and the path table
 *     (storage/destination_table with storage/cache/announces/) are persisted in the
 *     reference's msgpack layouts (known_file.h, path_file.h) on shutdown and every 5
 *     minutes, with the packet hashlist (storage/packet_hashlist.raw) on transport
 *     nodes; paths and the hashlist are reloaded only with enable_transport, as in the
 *     reference; an unreadable or corrupt file is logged and ignored;
 *   - remote ratchets (storage/ratchets/<hex>, node_ratchets.h) are written when learnt,
 *     loaded and cleaned at start as Identity._clean_ratchets does.
 *
 * Ownership: the caller owns the context and the plugin host (both must outlive the
 * node); the node owns its loop, interface host, engine and config.
 * Threading: the node and everything in it belong to the thread calling
 * rnsc_node_run(); rnsc_node_stop() may be called from any thread. Signals: with
 * handle_signals set, SIGINT and SIGTERM are blocked in the calling thread and read
 * through a signalfd on the loop, so they stop the node cleanly, and SIGPIPE is ignored
 * process-wide.
 *
 * Shared instance (share_instance, default on; Reticulum.__start_local_interface): when
 * another instance already listens at the configured address (the abstract Unix socket
 * "\0rns/<instance_name>", or TCP 127.0.0.1:shared_instance_port with
 * shared_instance_type = tcp), the node attaches to it through a LocalClientInterface
 * and opens none of [interfaces]; transport and probes are off, as in the reference.
 * Otherwise it becomes the shared instance: a LocalServerInterface accepts programs
 * (reference ones or rnsc ones) and the engine acts for them (transport.h, local roles).
 * If neither works the node runs standalone and logs why.
 */
#ifndef RNSC_NODE_H
#define RNSC_NODE_H

#include <stddef.h>
#include <stdint.h>

#include "cfgfile.h"
#include "ctx.h"
#include "iface_host.h"
#include "loop.h"
#include "plugin_host.h"
#include "transport.h"

typedef struct rnsc_node rnsc_node;

typedef struct rnsc_node_options {
	const char *config_dir; /* --config; NULL: the reference's search order */
	int handle_signals;     /* stop on SIGINT/SIGTERM (daemon) */
	/* Set the context's log level from [logging] loglevel plus verbosity (-v/-q), clamped
	 * to 0..8 (critical .. extreme), as rnsd does. Otherwise the caller's level stays. */
	int apply_loglevel;
	int verbosity;
	/* When not NULL, receives [logging] logtimestamps once the file is read (before the
	 * first line the node logs), for the caller's log sink. */
	int *logtimestamps;
} rnsc_node_options;

/* Application hooks (a client tool such as probe): called after the node's own handling,
 * on the node's thread. Pointers are valid for the call only. */
typedef struct rnsc_node_hooks {
	void *ud;
	void (*on_receipt)(void *ud, const uint8_t packet_hash[RNSC_HASHLEN], int proved);
	void (*on_announce)(void *ud, const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
			    unsigned hops);
	/* DATA delivered to a destination registered on the node's engine (decrypted). */
	void (*on_data)(void *ud, const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
			const uint8_t *data, size_t len, uint32_t iface);
	/* Links terminating at the node's engine (transport.h, links): opened with
	 * rnsc_transport_link_open() on rnsc_node_transport() or accepted for a local
	 * destination. Send with rnsc_transport_link_send() and then rnsc_node_flush(). */
	void (*on_link_established)(void *ud, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
				    const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN], int initiator);
	void (*on_link_closed)(void *ud, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN], int reason);
	void (*on_link_data)(void *ud, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
			     const uint8_t *data, size_t len,
			     const uint8_t packet_hash[RNSC_HASHLEN]);
	void (*on_link_proof)(void *ud, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
			      const uint8_t packet_hash[RNSC_HASHLEN]);
	/* The application-layer packets of a link (transport.h, on_link_packet: requests,
	 * resources, channel); reply with rnsc_transport_link_send_packet() + flush. */
	void (*on_link_packet)(void *ud, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
			       int packet_type, int context, const uint8_t *data, size_t len,
			       const uint8_t packet_hash[RNSC_HASHLEN]);
	void (*on_link_identified)(void *ud, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
				   const rnsc_identity *who);
	/* PROVE_APP destinations on the node's engine (transport.h, on_proof_requested):
	 * nonzero proves the packet. */
	int (*on_proof_requested)(void *ud, const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
				  const uint8_t *data, size_t len,
				  const uint8_t packet_hash[RNSC_HASHLEN]);
} rnsc_node_hooks;

/*
 * Reads the config and sets everything up, opening the interfaces. Nothing runs until
 * rnsc_node_run()/run_once(). On failure *out is NULL and err (may be NULL) carries a
 * one-line message naming the file, section and option at fault. Returns 0,
 * RNSC_ERR_INVAL, RNSC_ERR_NOMEM, the config reader's codes, the store's codes for the
 * storage folder and identity file, RNSC_ERR_NOTFOUND (no plugin serves an interface
 * type), the interface plugins' open errors, RNSC_ERR_SYS (loop, signalfd) or crypto
 * errors.
 */
RNSC_API int rnsc_node_new(rnsc_ctx *ctx, rnsc_plugin_host *plugins, const rnsc_node_options *opt,
			   rnsc_node **out, rnsc_config_error *err);
/* Saves the tables, closes every interface and frees. NULL is a no-op. */
RNSC_API void rnsc_node_del(rnsc_node *n);

/* Runs until rnsc_node_stop() or a handled signal. Returns 0 or RNSC_ERR_SYS. */
RNSC_API int rnsc_node_run(rnsc_node *n);
/* One loop iteration (timeout_ms as rnsc_loop_run_once). Returns >= 0 or a loop error. */
RNSC_API int rnsc_node_run_once(rnsc_node *n, int timeout_ms);
/* Any thread. */
RNSC_API void rnsc_node_stop(rnsc_node *n);
/* 1 once a handled signal or rnsc_node_stop() asked the node to stop. */
RNSC_API int rnsc_node_stopping(const rnsc_node *n);

RNSC_API void rnsc_node_set_hooks(rnsc_node *n, const rnsc_node_hooks *hooks);

/* Borrowed handles, valid until rnsc_node_del(). Use them on the node's thread only; after
 * calling into the engine (send, announce, request_path) call rnsc_node_flush(). */
RNSC_API rnsc_transport *rnsc_node_transport(rnsc_node *n);
RNSC_API rnsc_iface_host *rnsc_node_ifaces(rnsc_node *n);
RNSC_API rnsc_loop *rnsc_node_loop(rnsc_node *n);
RNSC_API const rnsc_config_settings *rnsc_node_settings(const rnsc_node *n);
RNSC_API const char *rnsc_node_config_dir(const rnsc_node *n);
/* The loaded configuration (owned by the node, valid while it lives). */
RNSC_API const rnsc_config *rnsc_node_config(const rnsc_node *n);
/* When the node was created (ms since the epoch); the shared-instance RPC server (NULL
 * unless this node is the shared instance); an interface's transport mode, IFAC network
 * name and IFAC size (bytes); the interface of an engine interface id (or NULL). */
RNSC_API uint64_t rnsc_node_started_ms(const rnsc_node *n);
RNSC_API rnsc_ctx *rnsc_node_ctx(const rnsc_node *n);
struct rnsc_node_rpc;
RNSC_API struct rnsc_node_rpc *rnsc_node_rpc_server(const rnsc_node *n);
RNSC_API int rnsc_node_iface_mode(const rnsc_node *n, const rnsc_iface *f, const char **netname,
				  size_t *ifac_size);
RNSC_API rnsc_iface *rnsc_node_iface_by_id(const rnsc_node *n, uint32_t id);
/* The transport's announce counters and policy state of an attached interface (the
 * interface_stats fields); 0 or RNSC_ERR_NOTFOUND (not attached to the engine). */
/* IFAC of an interface as interface_stats reports it: 1 with *signature (the 64-byte
 * Interface.ifac_signature, owned by the node), *ifac_size and *violations (IFAC drops)
 * when the interface has a network name or passphrase, else 0. */
RNSC_API int rnsc_node_iface_ifac(const rnsc_node *n, const rnsc_iface *f,
				  const uint8_t **signature, size_t *ifac_size,
				  uint64_t *violations);
RNSC_API int rnsc_node_iface_astats(rnsc_node *n, const rnsc_iface *f, uint64_t now,
				    rnsc_transport_iface_astats *out);
/* 1 when this node is the shared instance / is attached to another one. */
RNSC_API int rnsc_node_is_shared_instance(const rnsc_node *n);
RNSC_API int rnsc_node_connected_to_shared(const rnsc_node *n);
/* The probe destination's hash, or NULL when the node does not respond to probes. */
RNSC_API const uint8_t *rnsc_node_probe_hash(const rnsc_node *n);
/* The interface name of an engine interface id, or NULL. */
RNSC_API const char *rnsc_node_iface_name(const rnsc_node *n, uint32_t id);

/* Destination.enable_ratchets(path) for a SINGLE destination the caller registered on the
 * node's engine with identity id (copied): the ratchet file (ratchet_file.h) is read, its
 * signature checked, or created with an empty list; every rotation rewrites it (temp +
 * rename). Use rnsc_transport_dest_ratchet_interval / _retained_ratchets /
 * _enforce_ratchets for the rest. Returns 0, RNSC_ERR_SIGNATURE or a parse error (file
 * refused, left untouched, logged), store errors, RNSC_ERR_NOTFOUND / RNSC_ERR_STATE
 * (not a registered SINGLE destination). */
RNSC_API int rnsc_node_dest_enable_ratchets(rnsc_node *n,
					    const uint8_t dest[RNSC_TRUNCATED_HASHLEN],
					    const rnsc_identity *id, const char *path);

/* Sends what the engine queued and re-arms its timer. */
RNSC_API void rnsc_node_flush(rnsc_node *n);
/* Wall-clock milliseconds since the epoch, the engine's time base. */
RNSC_API uint64_t rnsc_node_now_ms(void);
/* Transport.get_lowest_interface_bitrate(): the lowest bitrate of an online interface, 0 when
 * none is online. */
RNSC_API uint64_t rnsc_node_lowest_bitrate(rnsc_node *n);
/* Transport.medium_path_timeout() in seconds: a round trip of an MTU at the lowest bitrate
 * plus the per-hop grace; 0 when no interface is online. */
RNSC_API double rnsc_node_medium_path_timeout_s(rnsc_node *n);

/* Frames refused before or by the engine (IFAC failures, frames that do not parse). */
typedef struct rnsc_node_stats {
	uint64_t rx_frames;
	uint64_t ifac_dropped;
	uint64_t ingest_errors;
	uint64_t tx_frames;
	uint64_t tx_errors;
} rnsc_node_stats;
RNSC_API void rnsc_node_stats_get(const rnsc_node *n, rnsc_node_stats *out);
/* Logs a summary (engine counters, each interface's drops) at NOTICE. */
RNSC_API void rnsc_node_log_stats(rnsc_node *n);

/* Writes the persisted tables now (atomically). Returns 0 or the store's errors. */
RNSC_API int rnsc_node_save(rnsc_node *n);

/* Reticulum.blackhole_identity / unblackhole_identity on this node: the engine's table
 * (rnsc_transport_blackhole_add/_remove, source: this transport) and, on a change,
 * <storage>/blackhole/local rewritten. until: UNIX seconds, 0 forever; reason may be NULL.
 * Return 1 done, 0 nothing to do (the reference's None), or an error. */
RNSC_API int rnsc_node_blackhole(rnsc_node *n, const uint8_t identity_hash[16], double until,
				 int until_int, const char *reason, size_t reason_len);
RNSC_API int rnsc_node_unblackhole(rnsc_node *n, const uint8_t identity_hash[16]);

#endif
