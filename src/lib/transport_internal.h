/* SPDX-License-Identifier: MIT */
/*
 * What transport.c and transport_link.c share: the engine's tables and a few helpers.
 * Internal to librnsc_core (not installed, not exported). Same threading rules as
 * transport.h: one thread at a time per engine.
 */
#ifndef RNSC_TRANSPORT_INTERNAL_H
#define RNSC_TRANSPORT_INTERNAL_H

#include "announce.h"
#include "announce_cap.h"
#include "announce_rate.h"
#include "ingress.h"
#include "link.h"
#include "packet.h"
#include "pathreq.h"
#include "transport.h"
#include "hashset.h"
#include "transport_map.h"

#define HL RNSC_TRUNCATED_HASHLEN

typedef struct tr_iface {
	uint32_t id;
	int mode;
	uint64_t bitrate;
	size_t hw_mtu;
	/* Interface.AUTOCONFIGURE_MTU or FIXED_MTU: link MTU signalling uses hw_mtu */
	int mtu_capable;
	int local_role; /* enum rnsc_transport_local_role */
	/* Announce policy (transport_policy.c): ingress control, the announce cap and queue,
	 * announce_rate_* and the reference's per-interface announce/path request counters. */
	int created_set; /* Interface.created is taken from the first `now` seen */
	rnsc_ingress ig;
	rnsc_acap acap;
	int has_rate; /* announce_rate_target is not None */
	uint64_t rate_target_s, rate_grace, rate_penalty_s;
	rnsc_freq oa, op; /* oa_freq_deque, op_freq_deque */
	uint64_t arxc, arxb, atxc, atxb, prxc, prxb, ptxc, ptxb;
	int has_tunnel; /* Interface.tunnel_id, set by a tunnel synthesis received here */
	uint8_t tunnel_id[RNSC_HASHLEN];
	/* discovery path requests (transport_discovery.c) */
	int egress_control; /* Interface.egress_control */
	double ec_pr_freq;  /* Interface.ec_pr_freq, Hz */
	int recursive_prs;  /* Interface.recursive_prs */
	int offline;        /* not Interface.online (rnsc_transport_iface_set_online) */
} tr_iface;

typedef struct tr_local {
	int type;
	int prove_all;
	int has_id;
	rnsc_identity id;
	uint8_t name_hash[RNSC_NAME_HASHLEN];
	uint8_t hash[HL];
	int accept_links; /* Destination.accepts_links (default on) */
	/* Destination.ratchets (transport_ratchet.c): NULL while ratchets are off (the
	 * reference's None); newest first, at most `retained`. */
	uint8_t (*ratchets)[RNSC_RATCHETSIZE];
	size_t n_ratchets;
	int ratchets_on;
	size_t retained;              /* Destination.retained_ratchets */
	uint64_t ratchet_interval_ms; /* Destination.ratchet_interval */
	uint64_t latest_ratchet_time; /* Destination.latest_ratchet_time, ms */
	int enforce_ratchets;
	int has_latest_rid; /* Destination.latest_ratchet_id is not None */
	uint8_t latest_rid[RNSC_RATCHET_ID_LEN];
	int prove_app;             /* Destination.PROVE_APP (prove_all: PROVE_ALL) */
	uint8_t *default_app_data; /* Destination.default_app_data; NULL: None */
	size_t default_app_len;
	int has_group_key; /* GROUP: Destination.prv (a Token key) */
	uint8_t group_key[64];
} tr_local;

/* Identity.known_ratchets: the latest ratchet a destination announced. */
typedef struct tr_ratchet {
	uint8_t pub[RNSC_RATCHETSIZE];
	uint64_t received; /* ms */
} tr_ratchet;

typedef struct tr_path {
	rnsc_transport_path pub;
	uint8_t blobs[RNSC_MAX_RANDOM_BLOBS][RNSC_ANNOUNCE_RANDOM_LEN];
	/* The announce as received: stands in for the reference's packet cache when a
	 * transport node answers a path request. */
	uint8_t raw[RNSC_MTU];
	size_t raw_len;
} tr_path;

typedef struct tr_announce {
	uint64_t timestamp;    /* IDX_AT_TIMESTAMP */
	uint64_t rtrns_tmo;    /* IDX_AT_RTRNS_TMO */
	int retries;           /* IDX_AT_RETRIES */
	uint8_t rcvd_from[HL]; /* IDX_AT_RCVD_IF (the reference stores received_from there) */
	unsigned hops;         /* IDX_AT_HOPS */
	uint8_t raw[RNSC_MTU]; /* IDX_AT_PACKET */
	size_t raw_len;
	int local_rebroadcasts; /* IDX_AT_LCL_RBRD */
	int block_rebroadcasts; /* IDX_AT_BLCK_RBRD */
	int has_attached;       /* IDX_AT_ATTCHD_IF */
	uint32_t attached;
} tr_announce;

typedef struct tr_known {
	uint64_t timestamp;
	uint8_t packet_hash[RNSC_HASHLEN];
	uint8_t pub[RNSC_KEYSIZE];
	uint8_t *app_data; /* NULL: none */
	size_t app_len;
	double last_used;  /* seconds; RNSC_KNOWN_NEVER_USED / RNSC_KNOWN_RETAINED */
	int last_used_int; /* an integer in the file (0 and -1 are; time.time() is not) */
} tr_known;

typedef struct tr_reverse {
	uint32_t rcvd_if;   /* IDX_RT_RCVD_IF */
	uint32_t outb_if;   /* IDX_RT_OUTB_IF */
	uint64_t timestamp; /* IDX_RT_TIMESTAMP */
} tr_reverse;

typedef struct tr_receipt {
	uint8_t hash[RNSC_HASHLEN];
	uint8_t dest[HL];
	uint64_t timeout; /* absolute, ms */
} tr_receipt;

typedef struct tr_frame {
	struct tr_frame *next;
	uint32_t iface;
	size_t len;
	uint8_t data[];
} tr_frame;

struct rnsc_transport {
	uint8_t hops_delta; /* Transport.local_hops_delta: 0 (off) or 2..7 */
	rnsc_ctx *ctx;
	rnsc_identity ident;
	rnsc_transport_config cfg;
	rnsc_transport_callbacks cb;
	rnsc_transport_stats st;
	uint8_t pr_dest[HL];     /* Transport.pr_destination_hash */
	uint8_t tunnel_dest[HL]; /* rnstransport.tunnel.synthesize: the other control hash */

	tr_iface *ifaces;
	size_t n_ifaces, cap_ifaces;

	rnsc_tmap locals;                  /* destinations_map */
	rnsc_tmap paths;                   /* path_table */
	rnsc_tmap announces;               /* announce_table */
	rnsc_tmap known;                   /* Identity.known_destinations */
	rnsc_tmap ratchets;                /* Identity.known_ratchets: dest -> tr_ratchet* */
	rnsc_tmap reverse;                 /* reverse_table */
	rnsc_tmap path_requests;           /* path_requests: dest -> uint64_t* timestamp */
	rnsc_hset hashlist, hashlist_prev; /* packet_hashlist(_prev): 32- or 16-byte keys */
	rnsc_tmap pr_tags, pr_tags_prev;   /* discovery_pr_tags(_prev), SHA-256 of the tag */

	tr_receipt *receipts;
	size_t n_receipts, cap_receipts;

	tr_frame *out_head, *out_tail;
	size_t n_out;

	rnsc_tmap links;      /* pending_links_map + active_links_map: link id -> tr_llink* */
	rnsc_tmap link_table; /* link_table: link id -> tr_lte* */

	uint64_t announces_last_checked, receipts_last_checked, tables_last_culled;

	/* Shared instance: programs attached here (Transport.local_client_interfaces), and
	 * whether this engine is itself attached to one (is_connected_to_shared_instance). */
	size_t n_local_clients;
	int to_shared;
	rnsc_tmap pending_local_prs; /* pending_local_path_requests: dest -> uint32_t* iface */

	rnsc_tmap rates;          /* announce_rate_table: dest -> rnsc_arate* */
	rnsc_tmap held;           /* Transport.held_announces: dest -> tr_announce* */
	uint64_t iface_jobs_last; /* Transport.interface_last_jobs */
	rnsc_tmap tunnels;        /* Transport.tunnels: tunnel id (32) -> tr_tunnel* */
	int in_release;           /* re-processing a released held announce */

	/* discovery path requests (transport_discovery.c) */
	rnsc_tmap discovery_prs; /* discovery_path_requests: dest -> tr_discovery* */
	rnsc_tmap inflight_prs;  /* inflight_path_requests: dest -> uint64_t* timestamp */
	/* the TC_INGRESS_LIMITED inbound queue, for path requests (transport_policy.c) */
	struct tr_prq *prq; /* ring of cfg.qlen_in_il entries, allocated on first use */
	size_t prq_head, prq_n;
	rnsc_tmap blackhole; /* blackholed_identities: identity hash -> tr_blackhole* */
	/* path states and rediscovery (transport_path.c) */
	rnsc_tmap path_states; /* path_states: dest -> (void *)(state + 1), not allocated */
	struct tr_pdpr {       /* pending_discovery_prs: [dest, blocked_if] */
		uint8_t dest[HL];
		int has_blocked;
		uint32_t blocked;
	} pdpr[RNSC_MAX_QUEUED_DISCOVERY_PRS];
	size_t n_pdpr;
	uint64_t pdpr_at;              /* when the sender sends the next one */
	uint64_t lte_seq;              /* link table insertions so far */
	struct tr_ahandler *ahandlers; /* Transport.announce_handlers (transport_dest.c) */
	size_t n_ahandlers, cap_ahandlers;
	uint32_t next_ahandler;
	int in_ahandlers;
	uint64_t blackhole_last_checked;
};

/* Transport enabled, or acting for attached programs (which the reference transports
 * for even when transport is off). */
static inline int rnsc_tr_relaying(const rnsc_transport *t)
{
	return t->cfg.transport_enabled || t->n_local_clients > 0;
}

/* A link that terminates here (either side). */
typedef struct tr_llink {
	rnsc_transport *t;
	rnsc_link *link;
	uint8_t id[HL];
	uint8_t dest[HL];
	uint32_t iface; /* Link.attached_interface */
	int has_iface;
	unsigned expected_hops; /* initiator: hops_to(dest) when requested */
	int was_active;         /* became ACTIVE once (a pending link that closes failed) */
	int busy;     /* inside a call into the link: its deletion waits for the outer settle */
	uint64_t now; /* the time of the call in progress (for proof checks in callbacks) */
	/* During rnsc_link_receive() of an inbound packet: the buffer handed to the link and
	 * the packet hash ingest computed, so the callbacks for that packet do not hash it
	 * again (a resource part is up to a link MTU of 32 KiB + header) */
	const uint8_t *rx_raw;
	size_t rx_len;
	const uint8_t *rx_hash;
	/* receipts of packets sent with rnsc_transport_link_send() and not proved yet */
	/* Receipts of link DATA packets: a FIFO ring (head, n slots in use, cap a power of
	 * two up to TR_LINK_MAX_RECEIPTS), deadlines non-decreasing from the head; a proved
	 * receipt becomes a tombstone (live = 0) until it reaches the head. */
	struct tr_lrcpt {
		uint8_t hash[RNSC_HASHLEN];
		uint64_t deadline;
		uint8_t live;
	} * rcpt;
	size_t rcpt_head, n_rcpt, cap_rcpt;
} tr_llink;

/* A relayed link (Transport.link_table, IDX_LT_*). */
typedef struct tr_lte {
	uint64_t timestamp;  /* IDX_LT_TIMESTAMP */
	uint8_t nh_trid[HL]; /* IDX_LT_NH_TRID */
	uint32_t nh_if;      /* IDX_LT_NH_IF */
	unsigned rem_hops;   /* IDX_LT_REM_HOPS */
	uint32_t rcvd_if;    /* IDX_LT_RCVD_IF */
	unsigned hops;       /* IDX_LT_HOPS */
	uint8_t dest[HL];    /* IDX_LT_DSTHASH */
	int validated;       /* IDX_LT_VALIDATED */
	uint64_t proof_tmo;  /* IDX_LT_PROOF_TMO */
	uint64_t seq;        /* insertion order (the reference's dict order) */
} tr_lte;

/* Transport._outbound for one packet (transport.c). attached (may be NULL) restricts a
 * broadcast to one interface; hash_out (may be NULL) receives the packet hash. */
int rnsc_tr_outbound(rnsc_transport *t, const rnsc_packet *p, const uint32_t *attached,
		     uint64_t now, uint8_t hash_out[RNSC_HASHLEN]);
/* Appends one frame to the outbox. */
int rnsc_tr_transmit(rnsc_transport *t, uint32_t iface, const uint8_t *raw, size_t len);
/* Appends a frame of len bytes and returns its bytes for the caller to fill at once (before
 * the engine returns to its caller), sparing a copy when a frame is built from another;
 * NULL when out of memory (nothing queued). */
uint8_t *rnsc_tr_transmit_buf(rnsc_transport *t, uint32_t iface, size_t len);
/* rnsc_tr_transmit_buf() filled with raw, its hops byte replaced: a packet repeated on. */
int rnsc_tr_transmit_hops(rnsc_transport *t, uint32_t iface, const uint8_t *raw, size_t len,
			  uint8_t hops);
/* Transport.add_packet_hash */
int rnsc_tr_hashlist_add(rnsc_transport *t, const uint8_t hash[RNSC_HASHLEN]);
const tr_iface *rnsc_tr_iface_find(const rnsc_transport *t, uint32_t id);
/* Transport.timebase_from_random_blobs for a path entry (transport.c). */
uint64_t rnsc_tr_path_timebase(const tr_path *p);

/* Path states and rediscovery (transport_path.c). */
void rnsc_tr_path_states_init(rnsc_transport *t);
void rnsc_tr_path_states_free(rnsc_transport *t);
/* mark_path_*: 1 marked, 0 no path, RNSC_ERR_NOMEM. */
int rnsc_tr_path_state_set(rnsc_transport *t, const uint8_t dest[HL], int state);
int rnsc_tr_path_is_unresponsive(const rnsc_transport *t, const uint8_t dest[HL]);
/* The table pass: states whose destination has no path as the pass begins (*out allocated,
 * NULL when none), dropped with rnsc_tr_path_states_drop() (which frees *out) at its end. */
int rnsc_tr_path_states_stale(rnsc_transport *t, uint8_t (**out)[HL], size_t *n);
void rnsc_tr_path_states_drop(rnsc_transport *t, uint8_t (*ids)[HL], size_t n);
/* A relayed link request (link table entry) was never proved: rediscovery as the reference's
 * link table cull does it. */
typedef struct tr_blocked { /* jobs()' blocked_if, shared by one table pass */
	int has;
	uint32_t id;
} tr_blocked;
int rnsc_tr_path_lte_failed(rnsc_transport *t, const uint8_t dest[HL], uint32_t rcvd_if,
			    unsigned taken_hops, tr_blocked *blocked, uint64_t now);
/* A link this node initiated closed while pending. */
void rnsc_tr_path_link_failed(rnsc_transport *t, const uint8_t dest[HL], uint64_t now);
/* Sends due rediscovery path requests. */
int rnsc_tr_path_tick(rnsc_transport *t, uint64_t now);
uint64_t rnsc_tr_path_deadline(const rnsc_transport *t);
/* transport_link.c: the link table cull, run inside the table pass before the path table's
 * (as the reference orders them). */
int rnsc_tr_link_table_cull(rnsc_transport *t, uint64_t now);
/* Ratchets (transport_ratchet.c). */
/* Identity._remember_ratchet: keeps pub as dest's latest ratchet; a new one is handed to
 * on_ratchet for persistence (not when attached to a shared instance). */
int rnsc_tr_ratchet_remember(rnsc_transport *t, const uint8_t dest[HL], const uint8_t pub[32],
			     uint64_t now);
/* Destination.rotate_ratchets at announce time: *pub gets the ratchet to announce, or the
 * call returns 0 with *has 0 when ratchets are off. */
int rnsc_tr_ratchet_for_announce(rnsc_transport *t, tr_local *l, uint8_t pub[32], int *has,
				 uint64_t now);
void rnsc_tr_ratchets_free_local(rnsc_ctx *ctx, tr_local *l);

/* Local destination settings and PLAIN/GROUP sends (transport_dest.c). */
void rnsc_tr_dest_free_extras(rnsc_ctx *ctx, tr_local *l);
/* The announce handlers for a valid announce that updated the path table. */
int rnsc_tr_announce_handlers_run(rnsc_transport *t, const rnsc_packet *p,
				  const uint8_t hash[RNSC_HASHLEN], const rnsc_announce *a);
void rnsc_tr_announce_handlers_free(rnsc_transport *t);
/* GROUP delivery: decrypts with the destination's key into out (cap >= len). Returns the
 * plaintext length or an error (no key: RNSC_ERR_NOKEY). */
int rnsc_tr_group_decrypt(rnsc_transport *t, const tr_local *l, uint8_t *out, size_t cap,
			  const uint8_t *ct, size_t len);

/* Tunnels (transport_tunnel.c). */
void rnsc_tr_tunnels_init(rnsc_transport *t);
void rnsc_tr_tunnels_free(rnsc_transport *t);
/* A DATA packet for rnstransport.tunnel.synthesize arrived on rif. */
int rnsc_tr_tunnel_inbound(rnsc_transport *t, tr_iface *rif, const rnsc_packet *p, uint64_t now);
/* An announce put e into the path table from rif: filed under rif's tunnel, if it has one. */
int rnsc_tr_tunnel_path_stored(rnsc_transport *t, const tr_iface *rif, const uint8_t dest[HL],
			       const tr_path *e, uint64_t now);
/* The interface is gone: tunnels on it lose their interface (void_tunnel_interface). */
void rnsc_tr_tunnel_iface_gone(rnsc_transport *t, uint32_t iface);
int rnsc_tr_tunnels_cull(rnsc_transport *t, uint64_t now);

/* transport_link.c: links terminating here and the link table of relayed links. */
void rnsc_tr_links_free(rnsc_transport *t);
/* Forwarding of a LINKREQUEST in transport: clamps the signalled MTU in nr (may shorten
 * *nlen) and records the link table entry. raw/len is the packet as received. */
int rnsc_tr_lr_forward(rnsc_transport *t, const uint8_t *raw, size_t len, uint8_t *nr, size_t *nlen,
		       const tr_iface *rif, const tr_iface *oif, const uint8_t next_hop[HL],
		       unsigned remaining_hops, unsigned taken_hops, const uint8_t dest[HL],
		       uint64_t now);
/* Whether dest is a link id in the link table (packet hashes are then remembered late). */
int rnsc_tr_link_table_has(const rnsc_transport *t, const uint8_t dest[HL]);
/* Link table transport of a packet for a relayed link. Returns 1 when the packet belonged
 * to the link table (processing stops), 0 otherwise, or an error. */
int rnsc_tr_link_transport(rnsc_transport *t, const rnsc_packet *p, const uint8_t *raw, size_t len,
			   const uint8_t hash[RNSC_HASHLEN], const tr_iface *rif, uint64_t now);
/* LINKREQUEST to a local destination. */
int rnsc_tr_link_request(rnsc_transport *t, const rnsc_packet *p, const uint8_t *raw, size_t len,
			 const tr_iface *rif, uint64_t now);
/* LRPROOF: relayed (transport enabled, in the link table) or for a pending local link. */
int rnsc_tr_link_proof(rnsc_transport *t, const rnsc_packet *p, const uint8_t *raw, size_t len,
		       const uint8_t hash[RNSC_HASHLEN], const tr_iface *rif, uint64_t now);
/* DATA, RESOURCE_PRF proofs and packet proofs addressed to a local link. Returns 1 when a
 * local link took the packet. */
int rnsc_tr_link_packet(rnsc_transport *t, const rnsc_packet *p, const uint8_t *raw, size_t len,
			const uint8_t hash[RNSC_HASHLEN], const tr_iface *rif, uint64_t now);
int rnsc_tr_links_tick(rnsc_transport *t, uint64_t now);
uint64_t rnsc_tr_links_deadline(const rnsc_transport *t);

/* transport_policy.c: per-interface announce policy (ingress.h, announce_cap.h,
 * announce_rate.h) as Transport.py consults it. */
#define RNSC_IFACE_JOBS_INTERVAL_MS 5000u /* Transport.interface_jobs_interval */
void rnsc_tr_policy_init(rnsc_transport *t, tr_iface *f);
void rnsc_tr_policy_free(rnsc_transport *t, tr_iface *f);
void rnsc_tr_policy_tables_init(rnsc_transport *t);
void rnsc_tr_policy_tables_free(rnsc_transport *t);
/* Transport.inbound's early announce handling, after the packet filter and hop count:
 * counts a validly signed announce (vrc == 0) on rif and holds it when rif is ingress
 * limited and the destination is unknown. Returns 1 when held or dropped (stop), 0 to go
 * on, or RNSC_ERR_NOMEM. */
int rnsc_tr_announce_ingress(rnsc_transport *t, tr_iface *rif, const rnsc_packet *p,
			     const uint8_t *raw, size_t len, int vrc, uint64_t now);
/* A path request with a fresh tag arrived on rif (received_path_request and the
 * should_ingress_limit_pr calls of inbound and path_request). Returns 1 when ingress
 * limited. */
int rnsc_tr_pr_ingress(rnsc_transport *t, tr_iface *rif, size_t len, uint64_t now);
/* The announce rate rule for an announce that updates the path table: *blocked is set when
 * its rebroadcast must be suppressed. 0 or RNSC_ERR_NOMEM. */
int rnsc_tr_announce_rate(rnsc_transport *t, const tr_iface *rif, const rnsc_packet *p,
			  uint64_t now, int *blocked);
/* The announce cap for a broadcast announce about to go out on f: 0 to transmit now, 1 when
 * queued or dropped, RNSC_ERR_NOMEM. */
int rnsc_tr_announce_cap(rnsc_transport *t, tr_iface *f, const rnsc_packet *p, const uint8_t *raw,
			 size_t len, uint64_t now);
/* Counters after a frame went out on f (sent_announce / sent_path_request). */
void rnsc_tr_policy_sent(rnsc_transport *t, tr_iface *f, const rnsc_packet *p, size_t len,
			 uint64_t now);
/* Transport.held_announces around a path response: keeps `prev` (an announce table entry
 * a path response replaced) until the response went out. Takes ownership. */
int rnsc_tr_hold_for_pr(rnsc_transport *t, const uint8_t dest[HL], tr_announce *prev);
/* After a retransmission from the announce table: reinserts a held entry for dest. */
int rnsc_tr_reinsert_held(rnsc_transport *t, const uint8_t dest[HL]);
/* Interface jobs and announce queue timers; deadline for them. */
int rnsc_tr_policy_tick(rnsc_transport *t, uint64_t now);
uint64_t rnsc_tr_policy_deadline(const rnsc_transport *t);
/* Table culling: rate entries and held entries of destinations no longer known. */
void rnsc_tr_policy_cull(rnsc_transport *t);

/* ---- discovery (recursive) path requests: transport_discovery.c ---- */
#define RNSC_DISCOVERY_MAX_IFACES 64     /* requesting interfaces kept per entry */
#define RNSC_DISCOVERY_MAX_ENTRIES 16384 /* rnsc's bound on each of the two tables */
#define RNSC_EC_PR_FREQ 5.0              /* Interface.EC_PR_FREQ, Hz */
#define RNSC_EC_BURST_MIN_SAMPLES 2      /* Interface.EC_BURST_MIN_SAMPLES */
/* A Transport.discovery_path_requests entry. */
typedef struct tr_discovery {
	uint64_t timeout; /* absolute, ms */
	int engaged;      /* a recursive request went out for it */
	size_t n;
	uint32_t ifaces[RNSC_DISCOVERY_MAX_IFACES]; /* requesting_interfaces, in arrival order */
} tr_discovery;
void rnsc_tr_discovery_init(rnsc_transport *t);
void rnsc_tr_discovery_free(rnsc_transport *t);
/* Transport.request_path: tag NULL draws a random one; recursive applies the reference's
 * egress limit and announce-cap gate for recursive requests (returns 1 when blocked).
 * Lives in transport.c. */
int rnsc_tr_request_path(rnsc_transport *t, const uint8_t dest[HL], const uint32_t *iface,
			 const uint8_t *tag, size_t tag_len, int recursive, uint64_t now);
/* Inbound's in-flight batching of a fresh-tagged path request: 1 when it was batched into
 * (or, ingress limited, dropped behind) one already in flight: stop; 0 to go on (now in
 * flight); RNSC_ERR_NOMEM. */
int rnsc_tr_pr_inflight(rnsc_transport *t, const uint8_t dest[HL], const tr_iface *rif,
			int ingress_limited, uint64_t now);
/* path_request() answered (local destination or known path): no longer in flight. */
void rnsc_tr_pr_resolved(rnsc_transport *t, const uint8_t dest[HL]);
/* The should_search_for_unknown branch of path_request() for an unknown destination.
 * Returns 1 when rif searches (handled, whether or not anything was sent), 0 when it does
 * not (transport off, or a mode that does not discover), or an error. */
int rnsc_tr_discover(rnsc_transport *t, const uint8_t dest[HL], const uint8_t *tag, size_t tag_len,
		     const tr_iface *rif, int ingress_limited, uint64_t now);
/* An announce for dest updated the path table: answers waiting discovery requests with
 * path responses on the requesting interfaces and resolves an in-flight request. p is the
 * announce as received (hops already counted). */
int rnsc_tr_discovery_answer(rnsc_transport *t, const rnsc_packet *p, uint64_t now);
/* Whether dest waits for a discovery answer (exempts its announce from ingress limiting). */
int rnsc_tr_discovery_waiting(const rnsc_transport *t, const uint8_t dest[HL]);
/* Interface.should_egress_limit_pr */
int rnsc_tr_should_egress_limit_pr(tr_iface *f, uint64_t now);
/* Table culling: timed-out discovery entries and in-flight requests past the gate. */
int rnsc_tr_discovery_cull(rnsc_transport *t, uint64_t now);
int rnsc_tr_discovery_pending(const rnsc_transport *t);

/* ---- the ingress-limited path request queue: transport_policy.c ---- */
typedef struct tr_prq {
	uint32_t iface;
	uint8_t dest[HL];
	int has_tid;
	uint8_t tid[HL];
	uint8_t tag[HL];
	size_t tag_len;
} tr_prq;
/* Queues a parsed path request from rif (Transport.inbound_queues.put with
 * TC_INGRESS_LIMITED). 0 (queued or, queue full, dropped and counted) or RNSC_ERR_NOMEM. */
int rnsc_tr_prq_put(rnsc_transport *t, const rnsc_pathreq *r, const tr_iface *rif);
/* The inbound worker for that queue: every queued request goes to path_request() as
 * ingress limited, oldest first (transport.c's rnsc_tr_path_request). */
int rnsc_tr_prq_drain(rnsc_transport *t, uint64_t now);
void rnsc_tr_prq_free(rnsc_transport *t);
/* transport.c: path_request() for a parsed request from rif. */
int rnsc_tr_path_request(rnsc_transport *t, const rnsc_pathreq *r, const tr_iface *rif,
			 int ingress_limited, uint64_t now);
/* transport_blackhole.c: the blackholed identities table. */
void rnsc_tr_blackhole_init(rnsc_transport *t);
void rnsc_tr_blackhole_free(rnsc_transport *t);
/* An ANNOUNCE whose announced identity is blackholed: counted, 1 (drop it); else 0. */
int rnsc_tr_blackhole_drops(rnsc_transport *t, const rnsc_packet *p);
/* The expiry job (every RNSC_BLACKHOLE_CHECK_INTERVAL_MS) and its deadline. */
void rnsc_tr_blackhole_tick(rnsc_transport *t, uint64_t now);
uint64_t rnsc_tr_blackhole_deadline(const rnsc_transport *t);

#endif
