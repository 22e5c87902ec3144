/* SPDX-License-Identifier: MIT */
/*
 * The transport engine (mirrors the reference's Transport.py, rns 1.5.4): packet filter and
 * duplicate suppression, announce validation and the path table, known destinations,
 * announce rebroadcast (transport nodes), path requests and path responses, delivery of DATA
 * to local destinations with proofs, and proof validation against receipts.
 *
 * Sans-I/O (DESIGN.md §1): frames come in through rnsc_transport_ingest() after the
 * interface layer removed HDLC/KISS framing and IFAC; frames go out through an outbox of
 * (interface id, frame) pairs that the runtime drains with rnsc_transport_outbox_pop();
 * time is passed in (`now`: milliseconds since the UNIX epoch; announce random hashes carry
 * now / 1000); randomness comes from the context's crypto backend. Nothing here blocks,
 * sleeps, reads a clock or touches a socket. Timers are driven by rnsc_transport_tick().
 *
 * Interfaces are opaque ids chosen by the runtime, registered with their mode
 * (RNSC_TRANSPORT_MODE_*, the reference's Interface.MODE_* values), bitrate and hardware MTU.
 *
 * Announce policy per interface (transport_policy.c): ingress control with held announces
 * (ingress.h), the announce cap and queue (announce_cap.h) and announce rate limiting
 * (announce_rate.h), set with rnsc_transport_iface_set_policy().
 *
 * Not implemented in this slice (see transport.c's header for the detail):
 * the packet cache. Ratchets (transport_ratchet.c): local destinations rotate and announce
 * them, decrypt with them first, and may enforce them; remote ratchets from announces are
 * used when sending. Persistence is the runtime's:
 * the engine only exports and imports its tables (rnsc_transport_known_next/_import).
 *
 * Ownership: the engine is owned by its creator and freed with rnsc_transport_del(); it keeps
 * copies of identities and app data it is given. The context must outlive the engine.
 * Threading: an engine is touched by one thread at a time (the loop that owns it); callbacks
 * run synchronously on that thread from inside ingest/tick/send and must not re-enter the
 * engine except to read (path_get, recall, stats, link_get) or to send/announce (which only
 * append to the outbox); link callbacks may also send on, open or close links (a link closed
 * from inside its own callback is freed once the call that ran the callback returns). Two engines on one context may live on different threads as long as the crypto
 * backends are thread-safe.
 */
#ifndef RNSC_TRANSPORT_H
#define RNSC_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "announce_rate.h"
#include "ctx.h"
#include "identity.h"
#include "ingress.h"
#include "link.h"

/* Interface.MODE_* (Interfaces/Interface.py). */
enum rnsc_transport_mode {
	RNSC_TRANSPORT_MODE_FULL = 0x01,
	RNSC_TRANSPORT_MODE_POINT_TO_POINT = 0x02,
	RNSC_TRANSPORT_MODE_ACCESS_POINT = 0x03,
	RNSC_TRANSPORT_MODE_ROAMING = 0x04,
	RNSC_TRANSPORT_MODE_BOUNDARY = 0x05,
	RNSC_TRANSPORT_MODE_GATEWAY = 0x06,
	RNSC_TRANSPORT_MODE_INTERNAL = 0x07,
};

/* Timing constants of Transport.py, in milliseconds. */
#define RNSC_PATHFINDER_R 1                        /* Transport.PATHFINDER_R: retransmit retries */
#define RNSC_PATHFINDER_G_MS 5000u                 /* Transport.PATHFINDER_G: retry grace period */
#define RNSC_PATHFINDER_RW_MS 500u                 /* Transport.PATHFINDER_RW: random window */
#define RNSC_PATHFINDER_E_MS (7ull * 24 * 3600000) /* Transport.PATHFINDER_E: one week */
#define RNSC_AP_PATH_TIME_MS (24ull * 3600000)     /* Transport.AP_PATH_TIME: one day */
#define RNSC_ROAMING_PATH_TIME_MS (6ull * 3600000) /* Transport.ROAMING_PATH_TIME: 6 hours */
#define RNSC_DESTINATION_TIMEOUT_MS (7ull * 24 * 3600000) /* Transport.DESTINATION_TIMEOUT */
#define RNSC_LOCAL_REBROADCASTS_MAX 2                     /* Transport.LOCAL_REBROADCASTS_MAX */
#define RNSC_PATH_REQUEST_GRACE_MS 400u                   /* Transport.PATH_REQUEST_GRACE */
#define RNSC_PATH_REQUEST_RG_MS 1500u                     /* Transport.PATH_REQUEST_RG */
#define RNSC_PATH_REQUEST_GATE_TIMEOUT_MS 45000u          /* Transport.PATH_REQUEST_GATE_TIMEOUT */
#define RNSC_REVERSE_TIMEOUT_MS (8u * 60000)              /* Transport.REVERSE_TIMEOUT */
#define RNSC_MAX_RECEIPTS 1024                            /* Transport.MAX_RECEIPTS */
#define RNSC_MAX_RANDOM_BLOBS 64                          /* Transport.MAX_RANDOM_BLOBS */
#define RNSC_HASHLIST_MAXSIZE 1000000u                    /* Transport.hashlist_maxsize */
#define RNSC_HASHLIST_SHORT_KEY 16u /* bytes of each packet hash kept where it is not persisted */
#define RNSC_MAX_PR_TAGS 16000u     /* Transport.max_pr_tags */
#define RNSC_ANNOUNCES_CHECK_INTERVAL_MS 1000u       /* Transport.announces_check_interval */
#define RNSC_RECEIPTS_CHECK_INTERVAL_MS 1000u        /* Transport.receipts_check_interval */
#define RNSC_TABLES_CULL_INTERVAL_MS 5000u           /* Transport.tables_cull_interval */
#define RNSC_TUNNEL_TIMEOUT_MS (8ull * 3600000)      /* Transport.TUNNEL_TIMEOUT */
#define RNSC_TUNNEL_PATH_TIMEOUT_MS (8ull * 3600000) /* Transport.TUNNEL_PATH_TIMEOUT */
#define RNSC_PER_HOP_TIMEOUT_MS 6000u                /* Reticulum.DEFAULT_PER_HOP_TIMEOUT */
#define RNSC_PATH_REQUEST_TIMEOUT_MS 15000u          /* Transport.PATH_REQUEST_TIMEOUT */
#define RNSC_PATH_REQUEST_MI_MS 20000u               /* Transport.PATH_REQUEST_MI */
#define RNSC_MAX_QUEUED_DISCOVERY_PRS 32             /* Transport.max_queued_discovery_prs */
#define RNSC_DISCOVERY_PR_TX_THROTTLE_MS 500u        /* Transport.discovery_pr_tx_throttle */
#define RNSC_MINIMUM_BITRATE 5u                      /* Reticulum.MINIMUM_BITRATE, bit/s */
#define RNSC_INBOUND_IL_QUEUE_LENGTH 8u              /* Transport.INBOUND_IL_QUEUE_LENGTH */
#define RNSC_INBOUND_QUEUE_MAX 65536u                /* rnsc's bound on a configured length */

typedef struct rnsc_transport rnsc_transport;

typedef struct rnsc_transport_config {
	/* Reticulum.transport_enabled(): forward packets in transport and rebroadcast announces. */
	int transport_enabled;
	/* Reticulum.should_use_implicit_proof() (default in the reference: on). */
	int use_implicit_proof;
	/* Transport.hashlist_maxsize; 0 selects RNSC_HASHLIST_MAXSIZE. Tests lower it to see the
	 * culling. */
	size_t hashlist_maxsize;
	/* Reticulum.link_mtu_discovery() off (config `link_mtu_discovery = No`): links this node
	 * opens signal the base MTU (RNSC_MTU) instead of the next hop's HW_MTU. 0 (the default)
	 * keeps discovery on, as the reference's default. */
	int link_mtu_discovery_off;
	/* Reticulum.local_hops_delta() (config `local_hops_delta = yes`): packets this node
	 * originates (hops 0) and routes by its path table leave with a hop count drawn once per
	 * engine from 2..7, so a neighbour cannot tell it is the origin. Never towards local
	 * clients or a shared instance, never when connected to one, never PLAIN or GROUP.
	 * The packet hash leaves the hop count out, so proofs still match. */
	int local_hops_delta;
	/* Reticulum qlen_in_il: path requests that arrive on an interface in a path request
	 * burst (the reference's TC_INGRESS_LIMITED class) wait in a queue this long, processed
	 * at the next tick after everything else; more are dropped (pr_queue_dropped).
	 * 0 selects RNSC_INBOUND_IL_QUEUE_LENGTH; at most RNSC_INBOUND_QUEUE_MAX. */
	size_t qlen_in_il;
} rnsc_transport_config;

/* Callbacks, all optional, run on the engine's thread. Pointers passed in are only valid for
 * the duration of the call. */
typedef struct rnsc_transport_callbacks {
	void *ud;
	/* DATA for a registered destination: decrypted for SINGLE, as received for PLAIN. */
	void (*on_data)(void *ud, const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
			const uint8_t *data, size_t len, const uint8_t packet_hash[RNSC_HASHLEN],
			uint32_t iface);
	/* A receipt was proved (proved = 1) or timed out / was culled (proved = 0). */
	void (*on_receipt)(void *ud, const uint8_t packet_hash[RNSC_HASHLEN], int proved);
	/* A valid announce updated the path table (the reference's announce handlers). */
	void (*on_announce)(void *ud, const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
			    const uint8_t *app_data, size_t app_data_len, unsigned hops);
	/* Links terminating here (either side). A link became ACTIVE; dest_hash is the
	 * destination it leads to (ours for a responder). */
	void (*on_link_established)(void *ud, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
				    const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN], int initiator);
	/* A link closed (reason: enum rnsc_link_reason); its id is forgotten after the call. */
	void (*on_link_closed)(void *ud, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN], int reason);
	/* DATA with context NONE on a link, decrypted. */
	void (*on_link_data)(void *ud, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
			     const uint8_t *data, size_t len,
			     const uint8_t packet_hash[RNSC_HASHLEN]);
	/* A valid proof came back for a packet sent with rnsc_transport_link_send(). */
	void (*on_link_proof)(void *ud, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
			      const uint8_t packet_hash[RNSC_HASHLEN]);
	/* Every other packet the link hands up, for the application layer (requests,
	 * resources, channel): DATA with context REQUEST, RESPONSE, RESOURCE, RESOURCE_ADV /
	 * _REQ / _HMU / _ICL / _RCL, CHANNEL (once on), and PROOF with context RESOURCE_PRF.
	 * data is the plaintext for the contexts the reference encrypts, the packet data as
	 * received for RESOURCE and RESOURCE_PRF. packet_hash is the packet's full hash (a
	 * request id is its first 16 bytes). */
	void (*on_link_packet)(void *ud, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
			       int packet_type, int context, const uint8_t *data, size_t len,
			       const uint8_t packet_hash[RNSC_HASHLEN]);
	/* The initiator of a link to a local destination revealed its identity (first time). */
	void (*on_link_identified)(void *ud, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
				   const rnsc_identity *who);
	/* Identity._remember_ratchet took a new ratchet for dest (from an announce, or one of
	 * ours being announced): persist it (<storage>/ratchets/<hex>). Not called while the
	 * engine is attached to a shared instance, as in the reference. received: ms. */
	void (*on_ratchet)(void *ud, const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
			   const uint8_t ratchet_pub[RNSC_RATCHETSIZE], uint64_t received);
	/* A local destination rotated its ratchets (Destination._persist_ratchets): the new
	 * list, newest first, to be written to its ratchet file. */
	void (*on_dest_ratchets)(void *ud, const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
				 const uint8_t (*ratchets)[RNSC_RATCHETSIZE], size_t n);
	/* Destination.PROVE_APP (callbacks.proof_requested): a DATA packet was delivered to a
	 * SINGLE destination with that strategy; return nonzero to prove it. Runs after on_data.
	 * Without this callback such packets are not proved, as in the reference. */
	int (*on_proof_requested)(void *ud, const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
				  const uint8_t *data, size_t len,
				  const uint8_t packet_hash[RNSC_HASHLEN]);
} rnsc_transport_callbacks;

typedef struct rnsc_transport_stats {
	uint64_t rx;                /* frames ingested */
	uint64_t tx;                /* frames put in the outbox */
	uint64_t malformed;         /* frames that did not parse or exceeded an MTU */
	uint64_t filtered;          /* packet_filter() hits (duplicates included) */
	uint64_t duplicates;        /* filter hits because the hash was in the hashlist */
	uint64_t announces_valid;   /* announces that passed validate_announce */
	uint64_t announces_invalid; /* bad signature, hash mismatch, known-key conflict */
	uint64_t paths_added;       /* path table inserts and replacements */
	uint64_t announces_ignored; /* valid announces the replacement rules did not take */
	uint64_t rebroadcasts;      /* announce retransmissions from the announce table */
	uint64_t forwarded;         /* packets forwarded in transport (incl. proofs) */
	uint64_t delivered;         /* DATA delivered to local destinations */
	uint64_t decrypt_failed;    /* DATA for a local SINGLE destination that did not decrypt */
	uint64_t proofs_sent;
	uint64_t proofs_valid; /* receipts proved */
	uint64_t receipts_timed_out;
	uint64_t pr_received;  /* path requests accepted (unique tag) */
	uint64_t pr_duplicate; /* path requests dropped for a tag already seen */
	uint64_t pr_answered;
	uint64_t hashlist_rotations;
	uint64_t links_accepted;       /* LINKREQUESTs that made a responder link */
	uint64_t links_refused;        /* LINKREQUESTs for local destinations not taken */
	uint64_t links_relayed;        /* LINKREQUESTs forwarded with a link table entry */
	uint64_t link_table_forwarded; /* link packets and LRPROOFs carried for relayed links */
	uint64_t tunnels_synthesized;  /* tunnel synthesis packets sent */
	uint64_t tunnels_established;  /* new tunnel ids received */
	uint64_t tunnels_reappeared;   /* known tunnel ids received on a (new) interface */
	uint64_t tunnel_paths_restored;
	uint64_t tunnels_invalid; /* synthesis packets of the wrong size or signature */
	/* Discovery (recursive) path requests (transport_discovery.c). */
	uint64_t pr_discovery;          /* recursive searches started for an unknown destination */
	uint64_t pr_discovery_sent;     /* recursive path requests sent (one per interface) */
	uint64_t pr_discovery_answered; /* path responses sent to waiting requestors */
	uint64_t pr_discovery_expired;  /* waiting discovery entries that timed out */
	uint64_t pr_batched;            /* requests joined to one already in flight */
	uint64_t pr_ingress_limited;    /* dropped or not searched: ingress-limited interface */
	uint64_t pr_egress_limited;     /* recursive requests not sent: egress limit or cap */
	uint64_t pr_discovery_full;     /* searches refused: discovery or in-flight table full */
	uint64_t pr_queued;             /* ingress-limited path requests queued for the next tick */
	uint64_t pr_queue_dropped;      /* ...dropped: the queue was full (qlen_in_il) */
	uint64_t announces_blackholed;  /* announces dropped: their identity is blackholed */
	/* Where the announces that announces_valid does not count went (issue 28: every drop has a
	 * counter). A held announce that is released later is counted again when processed. */
	uint64_t announces_held;            /* ingress control held it (new destination, burst) */
	uint64_t announces_ingress_dropped; /* ingress control dropped it: held table full, hops */
	uint64_t announces_rate_blocked;  /* valid, but its rebroadcast exceeded the rate target */
	uint64_t announces_queue_dropped; /* dropped from a full announce queue (announce cap) */
	uint64_t announces_own;           /* echo of one of this node's own destinations */
	/* Path rediscovery (transport_path.c): path requests queued because a link failed, and
	 * those not queued because max_queued_discovery_prs were waiting. */
	uint64_t pr_rediscovery;
	uint64_t pr_rediscovery_dropped;
} rnsc_transport_stats;

/* Every counter of rnsc_transport_stats, for the places that serve them all (RPC, /metrics,
 * /status): X(name) once per field, in declaration order. */
/* clang-format off */
#define RNSC_TRANSPORT_COUNTERS(X)                                                         \
	X(rx) X(tx) X(malformed) X(filtered) X(duplicates) X(announces_valid)              \
	X(announces_invalid) X(paths_added) X(announces_ignored) X(rebroadcasts)           \
	X(forwarded) X(delivered) X(decrypt_failed) X(proofs_sent) X(proofs_valid)         \
	X(receipts_timed_out) X(pr_received) X(pr_duplicate) X(pr_answered)                \
	X(hashlist_rotations) X(links_accepted) X(links_refused) X(links_relayed)          \
	X(link_table_forwarded) X(tunnels_synthesized) X(tunnels_established)              \
	X(tunnels_reappeared) X(tunnel_paths_restored) X(tunnels_invalid)                  \
	X(pr_discovery) X(pr_discovery_sent) X(pr_discovery_answered)                      \
	X(pr_discovery_expired) X(pr_batched) X(pr_ingress_limited) X(pr_egress_limited)   \
	X(pr_discovery_full) X(pr_queued) X(pr_queue_dropped) X(announces_blackholed)      \
	X(announces_held) X(announces_ingress_dropped) X(announces_rate_blocked)           \
	X(announces_queue_dropped) X(announces_own) X(pr_rediscovery) X(pr_rediscovery_dropped)
/* clang-format on */

/* A path table entry (Transport.path_table, IDX_PT_*). */
typedef struct rnsc_transport_path {
	uint64_t timestamp;                       /* IDX_PT_TIMESTAMP, ms */
	uint8_t next_hop[RNSC_TRUNCATED_HASHLEN]; /* IDX_PT_NEXT_HOP: transport id or the dest */
	unsigned hops;                            /* IDX_PT_HOPS */
	uint64_t expires;                         /* IDX_PT_EXPIRES, ms */
	size_t n_random_blobs;                    /* IDX_PT_RANDBLOBS */
	uint32_t iface;                           /* IDX_PT_RVCD_IF */
	uint8_t packet_hash[RNSC_HASHLEN];        /* IDX_PT_PACKET */
} rnsc_transport_path;

/* Tunnels (Transport.synthesize_tunnel and the receiving side, transport_tunnel.c). A TCP
 * client interface calls rnsc_transport_tunnel_synthesize() each time it connects, with
 * iface_hash = SHA-256 of the interface's name as the reference prints it
 * ("TCPInterface[name/host:port]"): the far end files the paths it learns through this
 * connection under the tunnel and restores them when the same tunnel comes back on a new
 * connection. The runtime persists them in storage/tunnels (node_store.c). */
typedef struct rnsc_transport_tunnel {
	int has_iface; /* 0 once its interface went away */
	uint32_t iface;
	uint64_t expires; /* ms */
	size_t n_paths;
} rnsc_transport_tunnel;
RNSC_API int rnsc_transport_tunnel_synthesize(rnsc_transport *t, uint32_t iface,
					      const uint8_t iface_hash[RNSC_HASHLEN], uint64_t now);
RNSC_API size_t rnsc_transport_tunnel_count(const rnsc_transport *t);
/* RNSC_ERR_NOTFOUND for an unknown id. */
RNSC_API int rnsc_transport_tunnel_get(const rnsc_transport *t, const uint8_t id[RNSC_HASHLEN],
				       rnsc_transport_tunnel *out);
/* Export and import for storage/tunnels (Transport.save_tunnel_table / Transport.start).
 * tunnel_next iterates tunnels as rnsc_transport_path_next does; tunnel_path_next the paths
 * filed under tunnel id (out->iface unused; blobs may be NULL; *raw points into the engine,
 * valid until the next ingest/tick/import/del). Both return 1 while there is one, else 0. */
RNSC_API int rnsc_transport_tunnel_next(const rnsc_transport *t, size_t *cursor,
					uint8_t id[RNSC_HASHLEN], rnsc_transport_tunnel *out);
RNSC_API int rnsc_transport_tunnel_path_next(const rnsc_transport *t,
					     const uint8_t id[RNSC_HASHLEN], size_t *cursor,
					     uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
					     rnsc_transport_path *out, uint8_t blobs[][10],
					     const uint8_t **raw, size_t *raw_len);
/* A tunnel loaded from storage: no interface until its synthesis arrives again (the
 * reference loads it with interface None); an existing one is kept. Its paths follow with
 * tunnel_path_import (raw: the cached announce for dest_hash, at most RNSC_MTU bytes;
 * n_blobs at most RNSC_MAX_RANDOM_BLOBS). Return 0, RNSC_ERR_INVAL, RNSC_ERR_NOTFOUND (no
 * such tunnel), RNSC_ERR_TOOBIG, RNSC_ERR_MALFORMED (raw is not an announce for dest_hash),
 * RNSC_ERR_NOMEM. */
RNSC_API int rnsc_transport_tunnel_import(rnsc_transport *t, const uint8_t id[RNSC_HASHLEN],
					  uint64_t expires_ms);
RNSC_API int rnsc_transport_tunnel_path_import(rnsc_transport *t, const uint8_t id[RNSC_HASHLEN],
					       const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
					       const rnsc_transport_path *p,
					       const uint8_t blobs[][10], size_t n_blobs,
					       const uint8_t *raw, size_t raw_len);
/* The tunnel id a synthesis established on iface; RNSC_ERR_NOTFOUND when none. */
RNSC_API int rnsc_transport_iface_tunnel(const rnsc_transport *t, uint32_t iface,
					 uint8_t id[RNSC_HASHLEN]);

/* Creates an engine. transport_identity (private key needed only for path responses as a
 * transport node; its hash is the transport id) is copied. cfg may be NULL (defaults:
 * transport disabled, implicit proofs). Returns 0, RNSC_ERR_INVAL, RNSC_ERR_NOMEM, or crypto
 * errors (hashing the path request destination). */
RNSC_API int rnsc_transport_new(rnsc_ctx *ctx, rnsc_transport **out,
				const rnsc_identity *transport_identity,
				const rnsc_transport_config *cfg);
/* Frees everything, wiping identities. NULL is fine. */
RNSC_API void rnsc_transport_del(rnsc_transport *t);
RNSC_API void rnsc_transport_set_callbacks(rnsc_transport *t, const rnsc_transport_callbacks *cb);
RNSC_API const rnsc_transport_stats *rnsc_transport_get_stats(const rnsc_transport *t);
/* The transport id (the transport identity's hash). */
RNSC_API const uint8_t *rnsc_transport_id(const rnsc_transport *t);

/* Attaches an interface. hw_mtu 0 means the base MTU (RNSC_MTU); bitrate 0 means unknown.
 * Returns 0, RNSC_ERR_INVAL (mode out of range), RNSC_ERR_STATE (id already attached),
 * RNSC_ERR_NOMEM. */
RNSC_API int rnsc_transport_iface_add(rnsc_transport *t, uint32_t id, int mode, uint64_t bitrate,
				      size_t hw_mtu);
/* Detaches it; paths and reverse entries through it go at the next table cull, as in the
 * reference. Returns 0 or RNSC_ERR_NOTFOUND. */
RNSC_API int rnsc_transport_iface_remove(rnsc_transport *t, uint32_t id);
/* Interface.online (interfaces are online when added): an offline interface stays attached
 * (its paths survive) but recursive path requests skip it and its bitrate does not count
 * for medium_path_timeout(). Returns 0, RNSC_ERR_INVAL or RNSC_ERR_NOTFOUND. */
RNSC_API int rnsc_transport_iface_set_online(rnsc_transport *t, uint32_t id, int online);

/* The announce policy of an interface (the options Reticulum._synthesize_interface sets). */
typedef struct rnsc_transport_iface_policy {
	double announce_cap;     /* Interface.announce_cap, a fraction; <= 0: the default 0.02 */
	int has_rate_target;     /* announce_rate_target is not None */
	uint64_t rate_target_s;  /* announce_rate_target, s */
	uint64_t rate_grace;     /* announce_rate_grace */
	uint64_t rate_penalty_s; /* announce_rate_penalty, s */
	rnsc_ingress_cfg ic;     /* ingress_control and ic_* */
	/* Egress control of recursive path requests (Interface.should_egress_limit_pr). */
	int egress_control; /* Interface.egress_control (default off, as EGRESS_CONTROL) */
	double ec_pr_freq;  /* Interface.ec_pr_freq, Hz; <= 0: EC_PR_FREQ (5) */
	int recursive_prs;  /* Interface.recursive_prs: discover paths whatever the mode */
} rnsc_transport_iface_policy;

/* What an interface gets when none is set: ingress control with the reference's defaults,
 * the default cap, and (transport enabled) announce_rate_target 3600 s, grace 5,
 * penalty 0 as Reticulum._default_ar_*(); no rate target with transport off. */
RNSC_API void rnsc_transport_iface_policy_default(const rnsc_transport *t,
						  rnsc_transport_iface_policy *p);
/* Sets an attached interface's policy; created is Interface.created (ms; 0: the first time
 * the engine sees, as now, after this call). Burst state, held and queued announces are
 * kept. Returns 0, RNSC_ERR_INVAL or RNSC_ERR_NOTFOUND. */
RNSC_API int rnsc_transport_iface_set_policy(rnsc_transport *t, uint32_t id,
					     const rnsc_transport_iface_policy *p,
					     uint64_t created);

/* The interface_stats fields of Reticulum.get_interface_stats that come from transport. */
typedef struct rnsc_transport_iface_astats {
	uint64_t arxc, arxb, atxc, atxb;           /* announces received / sent (count, bytes) */
	uint64_t prxc, prxb, ptxc, ptxb;           /* path requests received / sent */
	double ia_freq, oa_freq, ip_freq, op_freq; /* Hz, as the reference computes them */
	size_t announce_queue;                     /* len(announce_queue) */
	size_t held_announces;                     /* len(held_announces) */
	int has_rate_target;
	uint64_t rate_target_s, rate_grace, rate_penalty_s;
	int burst_active;
	uint64_t burst_activated; /* ms; 0: never (the reference's 0) */
	int pr_burst_active;
	uint64_t pr_burst_activated; /* ms */
	/* rnsc's own */
	uint64_t held_dropped, held_released, queue_dropped;
} rnsc_transport_iface_astats;
/* Fills *out for an attached interface; changes nothing (the same now gives the same
 * answer). Returns 0, RNSC_ERR_INVAL or RNSC_ERR_NOTFOUND. */
RNSC_API int rnsc_transport_iface_astats_get(rnsc_transport *t, uint32_t id, uint64_t now,
					     rnsc_transport_iface_astats *out);
/* Iteration over Transport.announce_rate_table like rnsc_transport_path_next(): fills
 * *dest_hash and *out (either may be NULL) and returns 1, or 0 at the end. */
RNSC_API int rnsc_transport_rate_next(const rnsc_transport *t, size_t *cursor,
				      uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN], rnsc_arate *out);
/* Transport.drop_announce_queues: empties every interface's announce queue; returns the
 * number of announces dropped. */
RNSC_API size_t rnsc_transport_drop_announce_queues(rnsc_transport *t);

/* Registers a local IN destination: SINGLE with identity id (private key required, copied),
 * PLAIN with id NULL, or GROUP with id NULL or an identity whose hash names it (public key
 * enough; load its key with rnsc_transport_dest_group_key()). prove_all selects
 * Destination.PROVE_ALL (else PROVE_NONE; see rnsc_transport_dest_set_proof_strategy).
 * out_hash (may be NULL) receives the destination hash.
 * Returns 0, RNSC_ERR_INVAL (type/identity mismatch), RNSC_ERR_NOKEY, RNSC_ERR_NAME,
 * RNSC_ERR_STATE (hash already registered), RNSC_ERR_NOMEM, crypto errors. */
RNSC_API int rnsc_transport_dest_add(rnsc_transport *t, int dest_type, const rnsc_identity *id,
				     const char *app_name, const char *const *aspects,
				     size_t n_aspects, int prove_all,
				     uint8_t out_hash[RNSC_TRUNCATED_HASHLEN]);

/* Transport.deregister_destination: the destination is no longer served (its DATA is not
 * delivered, path requests for it are not answered here). Links already established to it
 * stay until they close. Returns 0, RNSC_ERR_INVAL or RNSC_ERR_NOTFOUND. */
RNSC_API int rnsc_transport_dest_remove(rnsc_transport *t,
					const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN]);
/* Destination.set_default_app_data / clear_default_app_data (data NULL): the app data every
 * announce without its own carries, path responses included. Copied. Returns 0,
 * RNSC_ERR_INVAL, RNSC_ERR_NOTFOUND, RNSC_ERR_TOOBIG (cannot fit an announce), RNSC_ERR_NOMEM. */
RNSC_API int rnsc_transport_dest_set_default_app_data(
	rnsc_transport *t, const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN], const uint8_t *data,
	size_t len);
/* Destination.set_proof_strategy: RNSC_PROVE_NONE, RNSC_PROVE_APP (on_proof_requested
 * decides) or RNSC_PROVE_ALL (link.h). Returns 0, RNSC_ERR_INVAL, RNSC_ERR_NOTFOUND. */
RNSC_API int rnsc_transport_dest_set_proof_strategy(rnsc_transport *t,
						    const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
						    int strategy);
/* Destination.load_private_key for a GROUP destination (the 64-byte Token key, copied; make
 * one with rnsc_token_generate_key, Destination.create_keys). Returns 0, RNSC_ERR_INVAL,
 * RNSC_ERR_NOTFOUND, RNSC_ERR_STATE (not GROUP: the reference's TypeError), RNSC_ERR_KEYLEN. */
RNSC_API int rnsc_transport_dest_group_key(rnsc_transport *t,
					   const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
					   const uint8_t *key, size_t key_len);
/* Packet(dest, data).send() for an OUT PLAIN destination (data as is) or an OUT GROUP
 * destination (data in a Token under key, 64 bytes): broadcast on every interface, no
 * receipt (no proof ever comes back for these types). Returns 0, RNSC_ERR_INVAL,
 * RNSC_ERR_KEYLEN, RNSC_ERR_TOOBIG (over the MDU once encrypted), RNSC_ERR_NOMEM, crypto
 * errors. */
RNSC_API int rnsc_transport_send_plain(rnsc_transport *t,
				       const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
				       const uint8_t *data, size_t len, uint64_t now);
RNSC_API int rnsc_transport_send_group(rnsc_transport *t,
				       const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
				       const uint8_t *key, size_t key_len, const uint8_t *data,
				       size_t len, uint64_t now);

/* Transport.register_announce_handler: fn runs for every valid announce that reaches the
 * announce handlers in the reference (after on_announce), when aspect_filter is NULL or
 * names the destination for the announced identity (Destination.hash_from_name_and_identity:
 * "app.aspect1.aspect2"), and, for a path response, only with receive_path_responses.
 * app_data is NULL for none. The filter is copied. fn must not add or remove handlers.
 * *handle (may be NULL) receives an id for _remove. Returns 0, RNSC_ERR_INVAL,
 * RNSC_ERR_STATE (called from inside a handler), RNSC_ERR_NOMEM. */
typedef void (*rnsc_announce_handler_fn)(void *ud, const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
					 const rnsc_identity *announced, const uint8_t *app_data,
					 size_t app_data_len,
					 const uint8_t packet_hash[RNSC_HASHLEN],
					 int is_path_response);
RNSC_API int rnsc_transport_announce_handler_add(rnsc_transport *t, const char *aspect_filter,
						 int receive_path_responses,
						 rnsc_announce_handler_fn fn, void *ud,
						 uint32_t *handle);
/* Transport.deregister_announce_handler. Returns 0, RNSC_ERR_NOTFOUND, RNSC_ERR_STATE. */
RNSC_API int rnsc_transport_announce_handler_remove(rnsc_transport *t, uint32_t handle);

/* Destination.announce for a local SINGLE destination: queues the announce on every interface
 * the reference would use. Returns 0, RNSC_ERR_NOTFOUND (not registered), RNSC_ERR_INVAL
 * (not SINGLE), RNSC_ERR_TOOBIG (app data does not fit the MTU), RNSC_ERR_NOMEM, crypto
 * errors. */
RNSC_API int rnsc_transport_announce(rnsc_transport *t,
				     const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
				     const uint8_t *app_data, size_t app_data_len, uint64_t now);

/* Transport.request_path: a path request with a fresh random tag on every interface (or on
 * iface only when iface_only is set). Returns 0, RNSC_ERR_NOTFOUND (iface_only names an
 * unknown interface), RNSC_ERR_NOMEM, crypto errors. */
RNSC_API int rnsc_transport_request_path(rnsc_transport *t,
					 const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
					 int iface_only, uint32_t iface, uint64_t now);
/* As rnsc_transport_request_path with the caller's request tag (Transport.request_path's
 * tag argument): tag_len 1..16 bytes, or 0 for a random one. Returns the same codes, and
 * RNSC_ERR_RANGE for a longer tag. */
RNSC_API int rnsc_transport_request_path_tagged(rnsc_transport *t,
						const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
						int iface_only, uint32_t iface, const uint8_t *tag,
						size_t tag_len, uint64_t now);

/* Sends one DATA packet to a remote SINGLE destination (encrypted to its recalled identity,
 * or its latest ratchet when one was announced) and registers a receipt. packet_hash (may be
 * NULL) receives the packet hash that a proof will name.
 * Returns 0, RNSC_ERR_NOTFOUND (identity unknown: no announce seen), RNSC_ERR_TOOBIG (the
 * encrypted packet would exceed RNSC_MTU, as Packet.pack refuses it: over 399 bytes of data),
 * RNSC_ERR_NOMEM, crypto errors. */
RNSC_API int rnsc_transport_send(rnsc_transport *t, const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
				 const uint8_t *data, size_t len, uint8_t packet_hash[RNSC_HASHLEN],
				 uint64_t now);

/* One frame received on interface iface (framing and IFAC already removed).
 * Returns 0 when the frame was processed, dropped by policy or filtered (see the stats), or
 *   RNSC_ERR_INVAL            NULL arguments,
 *   RNSC_ERR_NOTFOUND         iface is not attached,
 *   RNSC_ERR_IFAC_UNEXPECTED  the IFAC bit is still set,
 *   RNSC_ERR_TOOBIG           longer than the interface's hardware MTU,
 *   RNSC_ERR_TRUNCATED / RNSC_ERR_HOPS  the frame does not parse,
 *   RNSC_ERR_NOMEM, crypto errors. */
RNSC_API int rnsc_transport_ingest(rnsc_transport *t, uint32_t iface, const uint8_t *frame,
				   size_t len, uint64_t now);

/* Timers (Transport.jobs): announce retransmissions, receipt timeouts, hashlist and tag-list
 * culling, path/reverse/path-request table expiry. Call it at least every 250 ms
 * (Transport.job_interval) for reference-like timing; calling it more often is harmless.
 * Returns 0, RNSC_ERR_NOMEM, crypto errors. */
RNSC_API int rnsc_transport_tick(rnsc_transport *t, uint64_t now);
/* The earliest time tick() has work to do (for the runtime's timer); UINT64_MAX if none. */
RNSC_API uint64_t rnsc_transport_next_deadline(const rnsc_transport *t);

/* Outbox: frames in FIFO order. pop copies the oldest frame into buf and removes it.
 * Returns the frame length, 0 when the outbox is empty, RNSC_ERR_BUFSIZE (frame kept) when
 * cap is too small, RNSC_ERR_INVAL. */
RNSC_API int rnsc_transport_outbox_pop(rnsc_transport *t, uint32_t *iface, uint8_t *buf,
				       size_t cap);
/* Removes the oldest frame without copying it: returns its bytes (NULL when the outbox is
 * empty or an argument is NULL), *iface and *len. The caller owns them until it hands them
 * back with rnsc_transport_outbox_release(), and may call into the engine meanwhile. */
RNSC_API const uint8_t *rnsc_transport_outbox_take(rnsc_transport *t, uint32_t *iface, size_t *len);
/* Frees a frame from rnsc_transport_outbox_take() (NULL: nothing). */
RNSC_API void rnsc_transport_outbox_release(rnsc_transport *t, const uint8_t *frame);
RNSC_API size_t rnsc_transport_outbox_count(const rnsc_transport *t);

/* Path table lookups. path_get returns 0 or RNSC_ERR_NOTFOUND. */
RNSC_API int rnsc_transport_has_path(const rnsc_transport *t,
				     const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN]);
RNSC_API int rnsc_transport_path_get(const rnsc_transport *t,
				     const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
				     rnsc_transport_path *out);
RNSC_API size_t rnsc_transport_path_count(const rnsc_transport *t);
/* Transport.expire_path: sets the entry's timestamp to 0 and makes the table cull due, so
 * the next tick removes it. Returns 0 or RNSC_ERR_NOTFOUND. */
RNSC_API int rnsc_transport_expire_path(rnsc_transport *t,
					const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN]);

/* Path states (Transport.path_states, transport_path.c). Every path table insert sets the
 * destination's state to UNKNOWN; an UNRESPONSIVE path may be replaced by the same emission
 * over more hops; a state outlives its path until the table cull after the path went. */
enum rnsc_path_state {
	RNSC_PATH_STATE_UNKNOWN = 0x00,      /* Transport.STATE_UNKNOWN */
	RNSC_PATH_STATE_UNRESPONSIVE = 0x01, /* Transport.STATE_UNRESPONSIVE */
	RNSC_PATH_STATE_RESPONSIVE = 0x02,   /* Transport.STATE_RESPONSIVE */
};
/* Transport.mark_path_unknown_state / _unresponsive / _responsive: 1 when marked, 0 when
 * dest has no path (nothing changes), RNSC_ERR_INVAL, RNSC_ERR_NOMEM. */
RNSC_API int rnsc_transport_mark_path(rnsc_transport *t,
				      const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN], int state);
/* The state recorded for dest (enum rnsc_path_state), RNSC_ERR_NOTFOUND when none is (the
 * reference then reports unknown), RNSC_ERR_INVAL. */
RNSC_API int rnsc_transport_path_state(const rnsc_transport *t,
				       const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN]);
/* Transport.path_is_unresponsive: 1 or 0. */
RNSC_API int rnsc_transport_path_is_unresponsive(const rnsc_transport *t,
						 const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN]);
RNSC_API size_t rnsc_transport_path_state_count(const rnsc_transport *t);
/* Transport.path_requests[dest]: when this node last asked for a path to dest (ms), 0 when
 * it has not (or the entry was culled after PATH_REQUEST_GATE_TIMEOUT). */
RNSC_API uint64_t rnsc_transport_path_request_time(const rnsc_transport *t,
						   const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN]);
/* Rediscovery path requests waiting for the sender (Transport.pending_discovery_prs). */
RNSC_API size_t rnsc_transport_rediscovery_pending(const rnsc_transport *t);

/* Identity.recall: the public identity remembered for a destination (from an announce).
 * app_data / app_data_len (may be NULL) receive a pointer into the engine's memory, valid
 * until the next ingest/tick/del. Returns 0 or RNSC_ERR_NOTFOUND, or RNSC_ERR_KEYLEN. */
RNSC_API int rnsc_transport_recall(const rnsc_transport *t,
				   const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
				   rnsc_identity *id, const uint8_t **app_data,
				   size_t *app_data_len);
/* The latest ratchet public key announced for dest (Identity.get_ratchet); 0 or
 * RNSC_ERR_NOTFOUND. */
RNSC_API int rnsc_transport_ratchet_get(const rnsc_transport *t,
					const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
					uint8_t ratchet_pub[RNSC_RATCHETSIZE]);
/* Adds a remembered ratchet loaded from storage (Identity.get_ratchet's file branch):
 * refused with RNSC_ERR_RANGE when now >= received + RATCHET_EXPIRY. A ratchet the engine
 * already holds is kept. No on_ratchet call. Returns 0, RNSC_ERR_INVAL, RNSC_ERR_RANGE,
 * RNSC_ERR_NOMEM. */
RNSC_API int rnsc_transport_ratchet_import(rnsc_transport *t,
					   const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
					   const uint8_t ratchet_pub[RNSC_RATCHETSIZE],
					   uint64_t received, uint64_t now);
/* Iteration over the remembered ratchets like rnsc_transport_path_next(). */
RNSC_API int rnsc_transport_ratchet_next(const rnsc_transport *t, size_t *cursor,
					 uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
					 uint8_t ratchet_pub[RNSC_RATCHETSIZE], uint64_t *received);

/* Local destination ratchets (Destination.enable_ratchets and friends; transport_ratchet.c).
 * enable: ratchets on, with the n keys (newest first, copied) loaded from the destination's
 * ratchet file (n = 0 for a new file); latest_ratchet_time is 0, so the next announce
 * rotates, as in the reference. The keys beyond the retained count are dropped.
 * Returns 0, RNSC_ERR_INVAL, RNSC_ERR_NOTFOUND, RNSC_ERR_STATE (not a SINGLE destination),
 * RNSC_ERR_NOMEM. */
RNSC_API int rnsc_transport_dest_ratchets_enable(rnsc_transport *t,
						 const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
						 const uint8_t (*ratchets)[RNSC_RATCHETSIZE],
						 size_t n);
/* Destination.set_ratchet_interval (seconds, > 0) / set_retained_ratchets (> 0; drops the
 * oldest beyond it now) / enforce_ratchets (RNSC_ERR_STATE while ratchets are off, the
 * reference's False). Returns 0, RNSC_ERR_INVAL (0 or a NULL), RNSC_ERR_NOTFOUND. */
RNSC_API int rnsc_transport_dest_ratchet_interval(rnsc_transport *t,
						  const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
						  uint64_t seconds);
RNSC_API int rnsc_transport_dest_retained_ratchets(rnsc_transport *t,
						   const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
						   size_t retained);
RNSC_API int rnsc_transport_dest_enforce_ratchets(rnsc_transport *t,
						  const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN]);
/* The current list (newest first), pointing into the engine until the next call that
 * announces or changes the destination. Returns 0, RNSC_ERR_NOTFOUND, RNSC_ERR_STATE
 * (ratchets off). */
RNSC_API int rnsc_transport_dest_ratchets(const rnsc_transport *t,
					  const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
					  const uint8_t (**ratchets)[RNSC_RATCHETSIZE], size_t *n);
/* Destination.latest_ratchet_id: the id of the ratchet that decrypted the last packet for
 * dest (read it from on_data). Returns 1 with id filled, 0 when the identity key did (None),
 * RNSC_ERR_NOTFOUND. */
RNSC_API int rnsc_transport_dest_latest_ratchet_id(const rnsc_transport *t,
						   const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
						   uint8_t id[RNSC_RATCHET_ID_LEN]);

/* Iteration over the path table in no particular order: start with *cursor = 0; each call
 * fills *dest_hash and *out (either may be NULL) and returns 1, or 0 at the end. The table
 * must not change between calls (no ingest/tick in between). */
RNSC_API int rnsc_transport_path_next(const rnsc_transport *t, size_t *cursor,
				      uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
				      rnsc_transport_path *out);

/* The parts of a path entry the reference persists beside the public fields: the random
 * blobs (IDX_PT_RANDBLOBS, oldest first, each RNSC_ANNOUNCE_RANDOM_LEN = 10 bytes) and the
 * announce as received (the reference keeps it in its packet cache). blobs may be NULL;
 * *raw points into the engine, valid until the next ingest/tick/import/del.
 * Returns 0 or RNSC_ERR_NOTFOUND. */
RNSC_API int rnsc_transport_path_detail(const rnsc_transport *t,
					const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
					uint8_t blobs[][10], size_t *n_blobs, const uint8_t **raw,
					size_t *raw_len);
/* Restores a path entry loaded from storage (Transport.start): p->iface must be attached,
 * raw must be an announce for dest_hash of at most RNSC_MTU bytes, n_blobs at most
 * RNSC_MAX_RANDOM_BLOBS. An entry the engine already holds is kept. Returns 0,
 * RNSC_ERR_INVAL, RNSC_ERR_NOTFOUND (interface not attached), RNSC_ERR_TOOBIG,
 * RNSC_ERR_MALFORMED (raw is not an announce for dest_hash), parse errors, RNSC_ERR_NOMEM. */
RNSC_API int rnsc_transport_path_import(rnsc_transport *t,
					const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
					const rnsc_transport_path *p, const uint8_t blobs[][10],
					size_t n_blobs, const uint8_t *raw, size_t raw_len);

/* One announce_table entry (the reference's IDX_AT_* fields), as the engine holds it for
 * rebroadcast and retransmission. Times are in the engine's clock (ms, as passed to tick). */
typedef struct rnsc_transport_announce_entry {
	uint64_t timestamp;          /* IDX_AT_TIMESTAMP */
	uint64_t retransmit_timeout; /* IDX_AT_RTRNS_TMO: the next retransmission is after it */
	int retries;                 /* IDX_AT_RETRIES */
	unsigned hops;               /* IDX_AT_HOPS */
	uint8_t received_from[RNSC_TRUNCATED_HASHLEN]; /* IDX_AT_RCVD_IF: a hash, not an iface */
	int local_rebroadcasts;                        /* IDX_AT_LCL_RBRD */
	int block_rebroadcasts;                        /* IDX_AT_BLCK_RBRD */
	int has_attached; /* IDX_AT_ATTCHD_IF is set: attached is the interface id */
	uint32_t attached;
	uint8_t packet_hash[RNSC_HASHLEN]; /* hash of the held announce (IDX_AT_PACKET) */
} rnsc_transport_announce_entry;

/* Copies the announce_table entry of dest into *out. Returns 0, RNSC_ERR_INVAL or
 * RNSC_ERR_NOTFOUND (transport_tables.c). */
RNSC_API int rnsc_transport_announce_get(const rnsc_transport *t,
					 const uint8_t dest[RNSC_TRUNCATED_HASHLEN],
					 rnsc_transport_announce_entry *out);
/* Rewrites an entry's timestamp and/or retransmit timeout (NULL: unchanged), e.g. to make
 * the next tick retransmit at once. Returns 0, RNSC_ERR_INVAL or RNSC_ERR_NOTFOUND. */
RNSC_API int rnsc_transport_announce_set_times(rnsc_transport *t,
					       const uint8_t dest[RNSC_TRUNCATED_HASHLEN],
					       const uint64_t *timestamp,
					       const uint64_t *retransmit_timeout);

/* Rewrites a path_table entry's timestamp and/or expiry (engine ms; NULL: unchanged), as
 * the cull and path-replacement rules read them. Returns 0, RNSC_ERR_INVAL or
 * RNSC_ERR_NOTFOUND (transport_tables.c). */
RNSC_API int rnsc_transport_path_set_times(rnsc_transport *t,
					   const uint8_t dest[RNSC_TRUNCATED_HASHLEN],
					   const uint64_t *timestamp, const uint64_t *expires);

/* Makes the announce-retransmit pass and the table culls (link table included) due at the
 * next tick, whatever their intervals (the reference's tests rewind announces_last_checked
 * and tables_last_culled).
 * NULL is a no-op (transport_tables.c). */
RNSC_API void rnsc_transport_jobs_due(rnsc_transport *t);

/* One Transport.link_table entry (a relayed link, IDX_LT_*), keyed by link id. Times in
 * engine ms; the interfaces are engine interface ids. */
typedef struct rnsc_transport_link_entry {
	uint8_t link_id[RNSC_TRUNCATED_HASHLEN];
	uint64_t timestamp;                                    /* IDX_LT_TIMESTAMP */
	uint8_t next_hop_transport_id[RNSC_TRUNCATED_HASHLEN]; /* IDX_LT_NH_TRID */
	uint32_t next_hop_iface;                               /* IDX_LT_NH_IF */
	unsigned remaining_hops;                               /* IDX_LT_REM_HOPS */
	uint32_t received_iface;                               /* IDX_LT_RCVD_IF */
	unsigned hops;                                         /* IDX_LT_HOPS */
	uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN];             /* IDX_LT_DSTHASH */
	int validated;                                         /* IDX_LT_VALIDATED */
	uint64_t proof_timeout;                                /* IDX_LT_PROOF_TMO */
} rnsc_transport_link_entry;
/* Iteration like rnsc_transport_path_next(): 1 with *out filled, 0 at the end. */
RNSC_API int rnsc_transport_link_entry_next(const rnsc_transport *t, size_t *cursor,
					    rnsc_transport_link_entry *out);
/* Returns 0, RNSC_ERR_INVAL or RNSC_ERR_NOTFOUND. */
RNSC_API int rnsc_transport_link_entry_get(const rnsc_transport *t,
					   const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
					   rnsc_transport_link_entry *out);
/* Inserts or replaces the entry of in->link_id, which the engine then relays and culls as
 * one it created. Returns 0, RNSC_ERR_INVAL, RNSC_ERR_NOTFOUND (an interface id is not
 * attached) or RNSC_ERR_NOMEM. */
RNSC_API int rnsc_transport_link_entry_put(rnsc_transport *t, const rnsc_transport_link_entry *in);

/* One Transport.reverse_table entry (where a proof for a relayed packet goes back), keyed by
 * the truncated packet hash. */
typedef struct rnsc_transport_reverse_entry {
	uint8_t key[RNSC_TRUNCATED_HASHLEN];
	uint32_t received_iface; /* IDX_RT_RCVD_IF */
	uint32_t outbound_iface; /* IDX_RT_OUTB_IF */
	uint64_t timestamp;      /* IDX_RT_TIMESTAMP, engine ms */
} rnsc_transport_reverse_entry;
/* Iteration like rnsc_transport_path_next(). */
RNSC_API int rnsc_transport_reverse_next(const rnsc_transport *t, size_t *cursor,
					 rnsc_transport_reverse_entry *out);
/* Inserts or replaces an entry. Returns as rnsc_transport_link_entry_put(). */
RNSC_API int rnsc_transport_reverse_put(rnsc_transport *t, const rnsc_transport_reverse_entry *in);

/* The current generation of the packet hashlist, which is what the reference persists
 * (packet_hashlist.raw). Iteration as rnsc_transport_path_next(). Only an engine with
 * transport_enabled keeps whole hashes (the reference persists the list only then); any
 * other keeps RNSC_HASHLIST_SHORT_KEY bytes of each and yields nothing here. */
RNSC_API int rnsc_transport_hashlist_next(const rnsc_transport *t, size_t *cursor,
					  uint8_t hash[RNSC_HASHLEN]);
/* Adds a packet hash loaded from storage to the current generation (rotation happens at
 * the next tick as usual). Returns 0, RNSC_ERR_INVAL or RNSC_ERR_NOMEM. */
RNSC_API int rnsc_transport_hashlist_add(rnsc_transport *t, const uint8_t hash[RNSC_HASHLEN]);
/* Transport.packet_filter's verdict on one raw packet (no IFAC), as inbound applies it
 * before the hop count is incremented: foreign transport ids, the exempt contexts, PLAIN and
 * GROUP hop and announce rules, the hashlist. Nothing is ingested, remembered or counted
 * (rnsc_transport_hashlist_add remembers). *accepted is 1 (processed) or 0 (dropped); hash,
 * when not NULL, receives the packet hash. Returns 0, RNSC_ERR_INVAL or the error of
 * rnsc_packet_unpack for a malformed packet. */
RNSC_API int rnsc_transport_packet_filter(rnsc_transport *t, const uint8_t *raw, size_t len,
					  int *accepted, uint8_t hash[RNSC_HASHLEN]);

/* One Identity.known_destinations entry, for persistence (the reference's
 * [timestamp, packet_hash, public_key, app_data, last_used] record). */
typedef struct rnsc_transport_known {
	uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN];
	uint64_t timestamp; /* ms since the epoch */
	uint8_t packet_hash[RNSC_HASHLEN];
	uint8_t public_key[RNSC_KEYSIZE];
	const uint8_t *app_data; /* NULL: none (the reference's None) */
	size_t app_data_len;
	/* Seconds since the epoch as the reference keeps it (a float, so a file round-trips
	 * exactly): RNSC_KNOWN_NEVER_USED, RNSC_KNOWN_RETAINED, or when it was last used. */
	double last_used;
	int last_used_int; /* written as a msgpack integer (the reference's 0, -1, or as read) */
} rnsc_transport_known;
#define RNSC_KNOWN_NEVER_USED 0.0
#define RNSC_KNOWN_RETAINED (-1.0)
/* Iteration like rnsc_transport_path_next(); app_data points into the engine and is valid
 * until the next ingest/tick/import/del. */
RNSC_API int rnsc_transport_known_next(const rnsc_transport *t, size_t *cursor,
				       rnsc_transport_known *out);
RNSC_API size_t rnsc_transport_known_count(const rnsc_transport *t);
/* Adds a remembered identity (loaded from storage). An entry the engine already holds is
 * kept (it is newer than the file). app_data is copied. The key is not validated here:
 * recall() and send() check it when it is used, as the reference does. Returns 0,
 * RNSC_ERR_INVAL (NULL) or RNSC_ERR_NOMEM. */
RNSC_API int rnsc_transport_known_import(rnsc_transport *t, const rnsc_transport_known *k);

/* Known-destination use and retention (Identity._used_destination_data,
 * _retain_destination_data, _unretain_destination_data, _retain_identity; also what a
 * shared-instance client asks for over RPC). used() stamps last_used with now_ms unless the
 * entry is retained; unretain() stamps it whatever it was. Each returns 1 when an entry was
 * changed, 0 when none (unknown, or retained for used()), RNSC_ERR_INVAL for NULL. The
 * engine calls used() itself where Transport.py does (a path request answered for it or
 * passed to the local client that holds it, a waiting discovery request answered, an
 * announce for a destination it asked a path for, a link proof it forwarded). */
RNSC_API int rnsc_transport_known_used(rnsc_transport *t, const uint8_t dest_hash[16],
				       uint64_t now_ms);
RNSC_API int rnsc_transport_known_retain(rnsc_transport *t, const uint8_t dest_hash[16]);
RNSC_API int rnsc_transport_known_unretain(rnsc_transport *t, const uint8_t dest_hash[16],
					   uint64_t now_ms);
/* Retains every destination whose public key hashes to identity_hash. */
RNSC_API int rnsc_transport_known_retain_identity(rnsc_transport *t,
						  const uint8_t identity_hash[16]);

/* Identity.clean_known_destinations: an entry without a path that is not retained goes
 * when it was never used, or when it was last used more than 1.25 x DESTINATION_TIMEOUT
 * ago. (The reference also names UNUSED_DESTINATION_LINGER, but since it measures
 * "unused for" from last_used 0 as well, a pathless never-used entry goes on the first
 * clean whatever its age; rnsc keeps that behaviour.) removed (may be NULL) is called for
 * each entry taken out, before it is freed (the runtime deletes its ratchet file).
 * Returns the number removed or RNSC_ERR_INVAL. */
#define RNSC_DESTINATION_TIMEOUT_S (60.0 * 60 * 24 * 7)
#define RNSC_UNUSED_DESTINATION_LINGER_S (6.0 * 60)
#define RNSC_KNOWN_CLEAN_INTERVAL_MS (5u * 60u * 1000u)
typedef void (*rnsc_known_removed_fn)(void *ud, const uint8_t dest_hash[16]);
RNSC_API int rnsc_transport_known_clean(rnsc_transport *t, uint64_t now_ms,
					rnsc_known_removed_fn removed, void *ud);

/* ---- links (transport_link.c) ----------------------------------------------------------
 * Links that terminate here are owned by the engine and named by their link id; the engine
 * feeds them the packets addressed to their id on their interface, sends their frames on
 * that interface and drives their timers from rnsc_transport_tick(). Relayed links (transport
 * enabled) live in the link table: LINKREQUESTs in transport are forwarded with the signalled
 * MTU clamped as Transport.py does, LRPROOFs are checked against the destination's recalled
 * identity and sent back, link packets cross in the direction their hop count names.
 * A relayed link request that is never proved, or a link opened here that closes while
 * pending, starts the path's rediscovery (transport_path.c).
 * Not implemented: path re-balancing from LRPROOFs with unexpected hop counts (such proofs
 * are dropped), channels/resources over engine-owned links. */

/* Interface.AUTOCONFIGURE_MTU / FIXED_MTU for an attached interface: when on, links over it
 * may use its hardware MTU (link MTU discovery); off (the default) keeps them at RNSC_MTU.
 * Returns 0 or RNSC_ERR_NOTFOUND. */
RNSC_API int rnsc_transport_iface_set_mtu_capable(rnsc_transport *t, uint32_t id, int on);
/* Shared instance roles of an interface (LocalInterface.py): a program attached to this
 * instance (Transport.local_client_interfaces), or this engine's own connection to the
 * shared instance it is attached to (is_connected_to_shared_instance). */
enum rnsc_transport_local_role {
	RNSC_TRANSPORT_LOCAL_NONE = 0,
	RNSC_TRANSPORT_LOCAL_CLIENT = 1,
	RNSC_TRANSPORT_LOCAL_SHARED = 2,
};
/* Sets the role of an attached interface. For a LOCAL_CLIENT the engine forwards, for that
 * program, what Transport.py forwards for local clients even with transport off: its
 * announces and path requests go out on the other interfaces, announces and path
 * requests from elsewhere are passed to it, packets to and from it are transported, its
 * hops are not counted. With a LOCAL_SHARED interface the engine behaves as the
 * reference's attached program: no packet filter or hashlist (the shared instance does
 * that), hops over that interface not counted, and packets to a destination one hop
 * away are inserted into transport via the shared instance.
 * Returns 0, RNSC_ERR_INVAL or RNSC_ERR_NOTFOUND. */
RNSC_API int rnsc_transport_iface_set_local(rnsc_transport *t, uint32_t id, int role);
/* 1 when an attached interface has the LOCAL_SHARED role. */
RNSC_API int rnsc_transport_connected_to_shared(const rnsc_transport *t);

/* Destination.accepts_links for a local destination (default on). 0 or RNSC_ERR_NOTFOUND. */
RNSC_API int rnsc_transport_dest_accept_links(rnsc_transport *t,
					      const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
					      int on);
/* RNS.Link(destination): opens a link to a remote SINGLE destination through its path, to
 * its recalled identity. link_id (may be NULL) receives the id; on_link_established or
 * on_link_closed (timeout) follows. Returns 0, RNSC_ERR_INVAL, RNSC_ERR_NOTFOUND (no identity
 * or no path known), RNSC_ERR_KEYLEN, RNSC_ERR_NOMEM, crypto errors. */
RNSC_API int rnsc_transport_link_open(rnsc_transport *t,
				      const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
				      uint8_t link_id[RNSC_TRUNCATED_HASHLEN], uint64_t now);
/* Sends data (context NONE) on an established link. packet_hash (may be NULL) receives the
 * hash a proof will name. The packet's receipt ends once: on_link_proof, or on_receipt(hash,
 * 0) after max(rtt * 6, 6 s) or when the link closes first (counted in receipts_timed_out;
 * see transport_link.c). Returns 0, RNSC_ERR_NOTFOUND (no such link), RNSC_ERR_STATE (not
 * established), RNSC_ERR_TOOBIG (over the link MDU), RNSC_ERR_NOMEM. */
RNSC_API int rnsc_transport_link_send(rnsc_transport *t,
				      const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
				      const uint8_t *data, size_t len,
				      uint8_t packet_hash[RNSC_HASHLEN], uint64_t now);
/* Sends any packet on an established link (rnsc_link_send_packet): DATA with any context,
 * or a PROOF with context RESOURCE_PRF. 0, RNSC_ERR_NOTFOUND, RNSC_ERR_STATE, RNSC_ERR_TOOBIG,
 * RNSC_ERR_INVAL, RNSC_ERR_NOMEM. */
RNSC_API int rnsc_transport_link_send_packet(rnsc_transport *t,
					     const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
					     int packet_type, int context, const uint8_t *data,
					     size_t len, uint8_t packet_hash[RNSC_HASHLEN],
					     uint64_t now);
/* Link.identify on a link this side initiated. 0, RNSC_ERR_NOTFOUND, RNSC_ERR_STATE, ... */
RNSC_API int rnsc_transport_link_identify(rnsc_transport *t,
					  const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
					  const rnsc_identity *identity, uint64_t now);
/* Turns channel delivery on for a link (rnsc_link_set_channel). 0 or RNSC_ERR_NOTFOUND. */
RNSC_API int rnsc_transport_link_set_channel(rnsc_transport *t,
					     const uint8_t link_id[RNSC_TRUNCATED_HASHLEN], int on);
/* Link.teardown; on_link_closed runs before it returns. 0 or RNSC_ERR_NOTFOUND. */
RNSC_API int rnsc_transport_link_close(rnsc_transport *t,
				       const uint8_t link_id[RNSC_TRUNCATED_HASHLEN], uint64_t now);
/* The engine's link for status queries (rnsc_link_status, _mtu, _rtt ...), NULL when none.
 * Borrowed: valid until the next ingest/tick/link call on the engine; do not send on it or
 * tear it down directly. */
RNSC_API const rnsc_link *rnsc_transport_link_get(const rnsc_transport *t,
						  const uint8_t link_id[RNSC_TRUNCATED_HASHLEN]);
/* Links terminating here (pending and active), and entries in the link table. */
RNSC_API size_t rnsc_transport_link_count(const rnsc_transport *t);
RNSC_API size_t rnsc_transport_link_table_count(const rnsc_transport *t);
/* Link table entries whose link was proved (Transport.active_link_count). */
RNSC_API size_t rnsc_transport_link_table_active_count(const rnsc_transport *t);

/* Number of entries in the packet hashlist (current + previous generation). */
RNSC_API size_t rnsc_transport_hashlist_count(const rnsc_transport *t);

/* ---- blackholed identities (transport_blackhole.c) ------------------------------------------
 * Transport.blackholed_identities: identity hash -> {source, until, reason}. An announce whose
 * announced identity is listed is dropped on ingest before validation (counted in
 * stats.announces_blackholed, as validate_announce(signal_blackholed=True) drops it) and
 * never reaches the path table; adding an identity drops the paths of destinations it
 * announced (remove_blackholed_paths). Entries with an `until` expire on the transport's jobs
 * every RNSC_BLACKHOLE_CHECK_INTERVAL_MS. Persistence is the runtime's (the list codec below
 * writes and reads the reference's msgpack layout). */
#define RNSC_BLACKHOLE_CHECK_INTERVAL_MS 60000u /* Transport.blackhole_check_interval */

typedef struct rnsc_blackhole_entry {
	int has_source; /* 0 on add: this transport's identity (a local blackhole) */
	uint8_t source[RNSC_TRUNCATED_HASHLEN];
	double until;       /* UNIX seconds; 0: indefinitely (the reference's None) */
	int until_int;      /* until was an int on the wire (kept so it is written back as one) */
	const char *reason; /* UTF-8, not NUL-terminated; NULL: none */
	size_t reason_len;
} rnsc_blackhole_entry;

/* Transport.blackhole_identity: 1 added (and paths from the identity dropped), 0 when the
 * identity is already listed (the reference's None), RNSC_ERR_INVAL, RNSC_ERR_NOMEM. */
RNSC_API int rnsc_transport_blackhole_add(rnsc_transport *t,
					  const uint8_t identity_hash[RNSC_TRUNCATED_HASHLEN],
					  const rnsc_blackhole_entry *e);
/* Transport.unblackhole_identity: 1 removed, 0 when not listed, RNSC_ERR_INVAL. */
RNSC_API int rnsc_transport_blackhole_remove(rnsc_transport *t,
					     const uint8_t identity_hash[RNSC_TRUNCATED_HASHLEN]);
/* 0 and *out filled (reason points into the engine, valid until the table changes), or
 * RNSC_ERR_NOTFOUND. out may be NULL. */
RNSC_API int rnsc_transport_blackhole_get(const rnsc_transport *t,
					  const uint8_t identity_hash[RNSC_TRUNCATED_HASHLEN],
					  rnsc_blackhole_entry *out);
RNSC_API size_t rnsc_transport_blackhole_count(const rnsc_transport *t);
/* Iteration as rnsc_transport_path_next(). */
RNSC_API int rnsc_transport_blackhole_next(const rnsc_transport *t, size_t *cursor,
					   uint8_t identity_hash[RNSC_TRUNCATED_HASHLEN],
					   rnsc_blackhole_entry *out);
/* Transport.remove_blackholed_paths: drops path entries of destinations whose remembered
 * identity is blackholed. Returns the number dropped. */
RNSC_API size_t rnsc_transport_blackhole_purge_paths(rnsc_transport *t);

/* The list codec: the msgpack map the reference persists (storage/blackhole/<source>) and
 * answers /list with: {identity_hash(bin 16): {"source": bin, "until": None|float|int,
 * "reason": None|str}}. write emits the entries whose source is only_source (NULL: all).
 * Returns what rnsc_mp_writer_finish() would (bytes, or the writer's error). */
struct rnsc_mp_writer;
RNSC_API int rnsc_blackhole_list_write(struct rnsc_mp_writer *w, const rnsc_transport *t,
				       const uint8_t *only_source);
/* Parses such a map (untrusted: from a file or a remote /list answer). cb is called per
 * entry with a 16-byte key (other keys are skipped, as the reference skips them); e's
 * pointers point into buf. An entry value that is not a map with the expected types makes
 * the whole list malformed. Returns the number of entries passed to cb, a cb error (< 0,
 * stops), or RNSC_ERR_MALFORMED / RNSC_ERR_TRUNCATED. */
RNSC_API int rnsc_blackhole_list_parse(const uint8_t *buf, size_t len,
				       int (*cb)(void *ud, const uint8_t id[RNSC_TRUNCATED_HASHLEN],
						 const rnsc_blackhole_entry *e),
				       void *ud);

#endif
