/* SPDX-License-Identifier: MIT */
/*
 * Transport engine (see transport.h). Follows Transport.py of rns 1.5.4:
 *
 * Implemented: preprocess_inbound's size/IFAC-bit checks and path-request tag dedup
 * (discovery_pr_tags with its max_pr_tags rotation); packet_filter; the packet hashlist with
 * hashlist_maxsize/2 rotation into a previous generation; hop increment; _inbound's transport
 * forwarding of HEADER_2 packets addressed to this node (remaining hops > 1 / == 1 / == 0) with
 * reverse-table entries, proof transport back along the reverse table; announce handling
 * (validate_announce with the known-key conflict check, Identity.remember and ratchet memory,
 * the path table replacement rules on hops, emission timestamps, random blobs and path expiry,
 * expiry by interface mode, the announce table with PATHFINDER_RW random delay, heard-
 * rebroadcast bookkeeping and LOCAL_REBROADCASTS_MAX); jobs()'s announce retransmission
 * (PATHFINDER_R, PATHFINDER_G + PATHFINDER_RW), receipt timeouts, table culling by
 * DESTINATION_TIMEOUT / AP_PATH_TIME / ROAMING_PATH_TIME from the entry timestamp, reverse table
 * and path-request gate expiry; path_request() for local destinations and, on transport nodes,
 * for known paths (PATH_REQUEST_GRACE, PATH_REQUEST_RG on roaming interfaces, no answer when
 * the requestor is our next hop), and discovery (recursive) requests for unknown ones with
 * in-flight batching (transport_discovery.c); request_path(); _outbound's routing (HEADER_2
 * insertion for paths over one hop, direct send, broadcast with the announce interface-mode
 * rules); delivery to SINGLE (decrypt) and PLAIN destinations with PROVE_ALL proofs; receipts.
 *
 * Shared instance (local roles, transport.h): for local clients hops are not counted, their
 * announces are rebroadcast at once and once, every announce that updates the path table
 * is passed to them at once (HEADER_2 from this instance), their path requests are answered
 * from the path table or forwarded on every other interface, other path requests are
 * forwarded to them (pending_local_path_requests routes their answer back), plain broadcasts
 * cross between them and the other interfaces, and packets to, from and through them are
 * transported (reverse and link tables) even with transport off. Behind a shared instance:
 * no packet filter or hashlist, hops over the shared socket not counted, HEADER_2 insertion
 * for one-hop paths.
 *
 * Links (link table, LRPROOF transport, engine-owned links) are transport_link.c's; ingress
 * control, held announces, announce caps and queues and announce rate limits are
 * transport_policy.c's (called from here).
 * Tunnels are transport_tunnel.c's; discovery (recursive) path requests transport_discovery.c's.
 * Path states and rediscovery after failed links are transport_path.c's.
 * Not implemented: shared_connection_disappeared/reappeared (tables are kept when the shared
 * instance goes away), interface gravity, the packet cache,
 * persistence (the runtime's), the INTERNAL-mode announce flags.
 */
#include <stddef.h>
#include <string.h>

#include "announce.h"
#include "crypto.h"
#include "destination.h"
#include "packet.h"
#include "pathreq.h"
#include "proof.h"
#include "transport.h"
#include "transport_internal.h"

#define WHO "transport"

/* ---- small helpers ------------------------------------------------------------------------ */

static void free_plain(rnsc_ctx *ctx, void *v)
{
	rnsc_free(ctx, v);
}

static void free_local(rnsc_ctx *ctx, void *v)
{
	tr_local *l = v;
	rnsc_tr_ratchets_free_local(ctx, l);
	rnsc_tr_dest_free_extras(ctx, l);
	rnsc_identity_free(&l->id);
	rnsc_free_secret(ctx, l, sizeof(*l));
}

static void free_known(rnsc_ctx *ctx, void *v)
{
	tr_known *k = v;
	rnsc_free(ctx, k->app_data);
	rnsc_free(ctx, k);
}

const tr_iface *rnsc_tr_iface_find(const rnsc_transport *t, uint32_t id)
{
	for (size_t i = 0; i < t->n_ifaces; i++)
		if (t->ifaces[i].id == id)
			return &t->ifaces[i];
	return NULL;
}

static uint64_t timebase_of_blob(const uint8_t *blob)
{
	return rnsc_announce_timestamp(blob); /* Transport.timebase_from_random_blob */
}

/* A uniform fraction in [0, 1) scaled to window ms (RNS.rand() * window). */
static int rand_ms(rnsc_transport *t, uint32_t window, uint64_t *out)
{
	uint8_t b[4];
	int rc = rnsc_random(t->ctx, b, sizeof(b));
	if (rc)
		return rc;
	uint32_t r = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
	*out = ((uint64_t)r * window) >> 32;
	return 0;
}

uint8_t *rnsc_tr_transmit_buf(rnsc_transport *t, uint32_t iface, size_t len)
{
	tr_frame *f = rnsc_alloc(t->ctx, sizeof(*f) + len);
	if (!f)
		return NULL;
	f->next = NULL;
	f->iface = iface;
	f->len = len;
	if (t->out_tail)
		t->out_tail->next = f;
	else
		t->out_head = f;
	t->out_tail = f;
	t->n_out++;
	t->st.tx++;
	return f->data;
}

int rnsc_tr_transmit(rnsc_transport *t, uint32_t iface, const uint8_t *raw, size_t len)
{
	uint8_t *d = rnsc_tr_transmit_buf(t, iface, len);
	if (!d)
		return RNSC_ERR_NOMEM;
	memcpy(d, raw, len);
	return 0;
}

int rnsc_tr_transmit_hops(rnsc_transport *t, uint32_t iface, const uint8_t *raw, size_t len,
			  uint8_t hops)
{
	uint8_t *d = rnsc_tr_transmit_buf(t, iface, len);
	if (!d)
		return RNSC_ERR_NOMEM;
	memcpy(d, raw, len);
	d[1] = hops; /* outside the hashed part: the packet hash still holds */
	return 0;
}

/* Transport.add_packet_hash */
int rnsc_tr_hashlist_add(rnsc_transport *t, const uint8_t hash[RNSC_HASHLEN])
{
	if (t->to_shared)
		return 0; /* the shared instance keeps the hashlist */
	return rnsc_hset_add(&t->hashlist, hash);
}

static int hashlist_has(const rnsc_transport *t, const uint8_t hash[RNSC_HASHLEN])
{
	return rnsc_hset_has(&t->hashlist, hash) || rnsc_hset_has(&t->hashlist_prev, hash);
}

/* ---- lifecycle ---------------------------------------------------------------------------- */

int rnsc_transport_new(rnsc_ctx *ctx, rnsc_transport **out, const rnsc_identity *tid,
		       const rnsc_transport_config *cfg)
{
	if (!ctx || !out || !tid)
		return RNSC_ERR_INVAL;
	*out = NULL;
	rnsc_transport *t = rnsc_calloc(ctx, 1, sizeof(*t));
	if (!t)
		return RNSC_ERR_NOMEM;
	t->ctx = ctx;
	t->ident = *tid;
	t->ident.ctx = ctx;
	if (cfg)
		t->cfg = *cfg;
	else
		t->cfg.use_implicit_proof = 1; /* Reticulum.__use_implicit_proof = True */
	if (t->cfg.hashlist_maxsize == 0)
		t->cfg.hashlist_maxsize = RNSC_HASHLIST_MAXSIZE;
	if (t->cfg.qlen_in_il == 0)
		t->cfg.qlen_in_il = RNSC_INBOUND_IL_QUEUE_LENGTH;
	if (t->cfg.qlen_in_il > RNSC_INBOUND_QUEUE_MAX)
		t->cfg.qlen_in_il = RNSC_INBOUND_QUEUE_MAX;
	rnsc_tmap_init(&t->locals, ctx, HL);
	rnsc_tmap_init(&t->paths, ctx, HL);
	rnsc_tmap_init(&t->announces, ctx, HL);
	rnsc_tmap_init(&t->known, ctx, HL);
	rnsc_tmap_init(&t->ratchets, ctx, HL);
	rnsc_tmap_init(&t->reverse, ctx, HL);
	rnsc_tmap_init(&t->path_requests, ctx, HL);
	/* Only a transport node persists its hashlist (packet_hashlist.raw, whole hashes); any
	 * other keeps the first 16 bytes of each hash, half the memory per entry at the same
	 * duplicate detection (a chance collision needs 2^128 tries). */
	size_t hl_key = t->cfg.transport_enabled ? RNSC_HASHLEN : RNSC_HASHLIST_SHORT_KEY;
	rnsc_hset_init(&t->hashlist, ctx, hl_key);
	rnsc_hset_init(&t->hashlist_prev, ctx, hl_key);
	rnsc_tmap_init(&t->pr_tags, ctx, RNSC_HASHLEN);
	rnsc_tmap_init(&t->pr_tags_prev, ctx, RNSC_HASHLEN);
	rnsc_tmap_init(&t->links, ctx, HL);
	rnsc_tmap_init(&t->link_table, ctx, HL);
	rnsc_tmap_init(&t->pending_local_prs, ctx, HL);
	rnsc_tr_policy_tables_init(t);
	rnsc_tr_tunnels_init(t);
	rnsc_tr_discovery_init(t);
	rnsc_tr_blackhole_init(t);
	rnsc_tr_path_states_init(t);
	static const char *const tunnel_aspects[] = {"tunnel", "synthesize"};
	int rc = rnsc_pathreq_destination(ctx, t->pr_dest);
	if (rc == 0 && t->cfg.local_hops_delta) { /* one random byte mod 6, plus 2 */
		uint8_t r;
		if ((rc = rnsc_random(ctx, &r, 1)) == 0)
			t->hops_delta = (uint8_t)(r % 6 + 2);
	}
	if (rc == 0)
		rc = rnsc_destination_hash(ctx, t->tunnel_dest, NULL, "rnstransport",
					   tunnel_aspects, 2);
	if (rc) {
		rnsc_transport_del(t);
		return rc;
	}
	*out = t;
	return 0;
}

void rnsc_transport_del(rnsc_transport *t)
{
	if (!t)
		return;
	rnsc_ctx *ctx = t->ctx;
	rnsc_tmap_free(&t->locals, free_local);
	rnsc_tmap_free(&t->paths, free_plain);
	rnsc_tmap_free(&t->announces, free_plain);
	rnsc_tmap_free(&t->known, free_known);
	rnsc_tmap_free(&t->ratchets, free_plain);
	rnsc_tr_announce_handlers_free(t);
	rnsc_tmap_free(&t->reverse, free_plain);
	rnsc_tmap_free(&t->path_requests, free_plain);
	rnsc_hset_free(&t->hashlist);
	rnsc_hset_free(&t->hashlist_prev);
	rnsc_tmap_free(&t->pr_tags, NULL);
	rnsc_tmap_free(&t->pr_tags_prev, NULL);
	rnsc_tr_links_free(t);
	rnsc_tmap_free(&t->link_table, free_plain);
	rnsc_tr_path_states_free(t);
	rnsc_tmap_free(&t->pending_local_prs, free_plain);
	rnsc_tr_policy_tables_free(t);
	rnsc_tr_tunnels_free(t);
	rnsc_tr_discovery_free(t);
	rnsc_tr_prq_free(t);
	rnsc_tr_blackhole_free(t);
	for (tr_frame *f = t->out_head, *n; f; f = n) {
		n = f->next;
		rnsc_free(ctx, f);
	}
	rnsc_free(ctx, t->ifaces);
	rnsc_free(ctx, t->receipts);
	rnsc_identity_free(&t->ident);
	rnsc_free_secret(ctx, t, sizeof(*t));
}

void rnsc_transport_set_callbacks(rnsc_transport *t, const rnsc_transport_callbacks *cb)
{
	if (cb)
		t->cb = *cb;
	else
		memset(&t->cb, 0, sizeof(t->cb));
}

const rnsc_transport_stats *rnsc_transport_get_stats(const rnsc_transport *t)
{
	return &t->st;
}

const uint8_t *rnsc_transport_id(const rnsc_transport *t)
{
	return t->ident.hash;
}

int rnsc_transport_iface_add(rnsc_transport *t, uint32_t id, int mode, uint64_t bitrate,
			     size_t hw_mtu)
{
	if (!t || mode < RNSC_TRANSPORT_MODE_FULL || mode > RNSC_TRANSPORT_MODE_INTERNAL)
		return RNSC_ERR_INVAL;
	if (rnsc_tr_iface_find(t, id))
		return RNSC_ERR_STATE;
	if (t->n_ifaces == t->cap_ifaces) {
		size_t ncap = t->cap_ifaces ? t->cap_ifaces * 2 : 4;
		tr_iface *n = rnsc_calloc(t->ctx, ncap, sizeof(*n));
		if (!n)
			return RNSC_ERR_NOMEM;
		if (t->n_ifaces)
			memcpy(n, t->ifaces, t->n_ifaces * sizeof(*n));
		rnsc_free(t->ctx, t->ifaces);
		t->ifaces = n;
		t->cap_ifaces = ncap;
	}
	tr_iface *f = &t->ifaces[t->n_ifaces++];
	/* The slot may hold a stale copy left behind by iface_remove's memmove (its local role
	 * among it, which would make set_local skip counting the new local client). */
	memset(f, 0, sizeof(*f));
	f->id = id;
	f->mode = mode;
	f->bitrate = bitrate;
	f->hw_mtu = hw_mtu ? hw_mtu : RNSC_MTU;
	rnsc_tr_policy_init(t, f);
	return 0;
}

int rnsc_transport_iface_set_local(rnsc_transport *t, uint32_t id, int role)
{
	if (!t || role < RNSC_TRANSPORT_LOCAL_NONE || role > RNSC_TRANSPORT_LOCAL_SHARED)
		return RNSC_ERR_INVAL;
	tr_iface *f = (tr_iface *)rnsc_tr_iface_find(t, id);
	if (!f)
		return RNSC_ERR_NOTFOUND;
	if (f->local_role == RNSC_TRANSPORT_LOCAL_CLIENT)
		t->n_local_clients--;
	if (f->local_role == RNSC_TRANSPORT_LOCAL_SHARED)
		t->to_shared--;
	f->local_role = role;
	if (role == RNSC_TRANSPORT_LOCAL_CLIENT)
		t->n_local_clients++;
	if (role == RNSC_TRANSPORT_LOCAL_SHARED)
		t->to_shared++;
	return 0;
}

int rnsc_transport_connected_to_shared(const rnsc_transport *t)
{
	return t && t->to_shared > 0;
}

int rnsc_transport_iface_remove(rnsc_transport *t, uint32_t id)
{
	for (size_t i = 0; i < t->n_ifaces; i++) {
		if (t->ifaces[i].id == id) {
			(void)rnsc_transport_iface_set_local(t, id, RNSC_TRANSPORT_LOCAL_NONE);
			rnsc_tr_policy_free(t, &t->ifaces[i]);
			rnsc_tr_tunnel_iface_gone(t, id);
			memmove(&t->ifaces[i], &t->ifaces[i + 1],
				(t->n_ifaces - i - 1) * sizeof(t->ifaces[0]));
			t->n_ifaces--;
			return 0;
		}
	}
	return RNSC_ERR_NOTFOUND;
}

int rnsc_transport_dest_add(rnsc_transport *t, int dest_type, const rnsc_identity *id,
			    const char *app_name, const char *const *aspects, size_t n_aspects,
			    int prove_all, uint8_t out_hash[HL])
{
	if (!t || !app_name)
		return RNSC_ERR_INVAL;
	if (dest_type == RNSC_DEST_SINGLE) {
		if (!id)
			return RNSC_ERR_INVAL;
		if (!id->has_private)
			return RNSC_ERR_NOKEY;
	} else if (dest_type == RNSC_DEST_GROUP) {
		/* an identity only names it (Destination.hash); the key is the Token's */
	} else if (dest_type != RNSC_DEST_PLAIN || id) {
		return RNSC_ERR_INVAL;
	}
	tr_local *l = rnsc_calloc(t->ctx, 1, sizeof(*l));
	if (!l)
		return RNSC_ERR_NOMEM;
	l->type = dest_type;
	l->prove_all = prove_all;
	l->accept_links = 1;
	if (id) {
		l->id = *id;
		l->id.ctx = t->ctx;
		l->has_id = 1;
	}
	int rc = rnsc_name_hash(t->ctx, l->name_hash, app_name, aspects, n_aspects);
	if (rc == 0)
		rc = rnsc_destination_hash(t->ctx, l->hash, id ? id->hash : NULL, app_name, aspects,
					   n_aspects);
	if (rc == 0 && rnsc_tmap_has(&t->locals, l->hash))
		rc = RNSC_ERR_STATE;
	if (rc == 0)
		rc = rnsc_tmap_put(&t->locals, l->hash, l, NULL);
	if (rc) {
		free_local(t->ctx, l);
		return rc;
	}
	if (out_hash)
		memcpy(out_hash, l->hash, HL);
	return 0;
}

/* ---- outbound (Transport._outbound) ------------------------------------------------------- */

/* Whether an announce without an attached interface goes out on iface (the mode rules of
 * _outbound; announce caps are not applied). */
static int announce_allowed_on(const rnsc_transport *t, const tr_iface *iface,
			       const uint8_t dest[HL])
{
	int local = rnsc_tmap_has(&t->locals, dest);
	const tr_path *p = rnsc_tmap_get(&t->paths, dest, NULL);
	const tr_iface *from = p ? rnsc_tr_iface_find(t, p->pub.iface) : NULL;
	if (!local && !from)
		return 0;
	if (iface->mode == RNSC_TRANSPORT_MODE_ACCESS_POINT)
		return 0;
	if (!local && iface->mode == RNSC_TRANSPORT_MODE_INTERNAL)
		return from->mode != RNSC_TRANSPORT_MODE_BOUNDARY;
	if (iface->mode == RNSC_TRANSPORT_MODE_ROAMING && !local)
		return from->mode != RNSC_TRANSPORT_MODE_ROAMING &&
		       from->mode != RNSC_TRANSPORT_MODE_BOUNDARY;
	if (iface->mode == RNSC_TRANSPORT_MODE_BOUNDARY && !local)
		return from->mode != RNSC_TRANSPORT_MODE_ROAMING;
	return 1;
}

/* Transport.should_apply_delta: the hop count a routed packet leaves with on iface. The
 * destination type is not checked here: PLAIN and GROUP never take the path-table route. */
static uint8_t routed_hops(const rnsc_transport *t, const rnsc_packet *p, uint32_t iface)
{
	if (!t->hops_delta || p->hops != 0 || t->to_shared)
		return p->hops;
	const tr_iface *f = rnsc_tr_iface_find(t, iface);
	if (f && f->local_role != RNSC_TRANSPORT_LOCAL_NONE)
		return p->hops;
	return t->hops_delta;
}

/* Packs and routes one packet. attached (may be NULL) restricts a broadcast to one
 * interface. hash_out (may be NULL) receives the packet hash. */
int rnsc_tr_outbound(rnsc_transport *t, const rnsc_packet *p, const uint32_t *attached,
		     uint64_t now, uint8_t hash_out[RNSC_HASHLEN])
{
	uint8_t raw[RNSC_MTU + HL];
	if (p->hops > RNSC_PATHFINDER_M - 1) /* Transport.PATHFINDER_M */
		return RNSC_ERR_HOPS;
	int n = rnsc_packet_pack(raw, RNSC_MTU, p, RNSC_MTU);
	if (n < 0)
		return n;
	uint8_t hash[RNSC_HASHLEN];
	int rc = rnsc_packet_hash(t->ctx, hash, raw, (size_t)n);
	if (rc)
		return rc;
	if (hash_out)
		memcpy(hash_out, hash, RNSC_HASHLEN);

	tr_path *path = NULL;
	if (p->packet_type != RNSC_PKT_ANNOUNCE && p->dest_type != RNSC_DEST_PLAIN &&
	    p->dest_type != RNSC_DEST_GROUP)
		path = rnsc_tmap_get(&t->paths, p->dest_hash, NULL);
	if (path) {
		/* Behind a shared instance a destination one hop away is also reached through
		 * the instance's transport (Transport._outbound). */
		if (path->pub.hops > 1 || (path->pub.hops == 1 && t->to_shared)) {
			if (p->header_type != RNSC_HEADER_1)
				return 0; /* the reference sends nothing in this case either */
			/* Insert into transport: HEADER_2, TRANSPORT, next hop's transport id. */
			uint8_t nr[RNSC_MTU + HL];
			nr[0] = (uint8_t)(RNSC_HEADER_2 << 6 | RNSC_TRANSPORT_TRANSPORT << 4 |
					  (raw[0] & 0x0f));
			nr[1] = routed_hops(t, p, path->pub.iface);
			memcpy(nr + 2, path->pub.next_hop, HL);
			memcpy(nr + 2 + HL, raw + 2, (size_t)n - 2);
			path->pub.timestamp = now;
			return rnsc_tr_transmit(t, path->pub.iface, nr, (size_t)n + HL);
		}
		raw[1] = routed_hops(t, p, path->pub.iface);
		return rnsc_tr_transmit(t, path->pub.iface, raw, (size_t)n);
	}
	int stored_hash = 0;
	for (size_t i = 0; i < t->n_ifaces; i++) {
		tr_iface *f = &t->ifaces[i];
		if (attached && f->id != *attached)
			continue;
		if (p->packet_type == RNSC_PKT_ANNOUNCE && !attached &&
		    !announce_allowed_on(t, f, p->dest_hash))
			continue;
		if (p->packet_type == RNSC_PKT_ANNOUNCE && !attached &&
		    (rc = rnsc_tr_announce_cap(t, f, p, raw, (size_t)n, now)) != 0) {
			if (rc < 0)
				return rc;
			continue; /* queued behind the interface's announce cap */
		}
		if (!stored_hash) {
			rc = rnsc_tr_hashlist_add(t, hash);
			if (rc)
				return rc;
			stored_hash = 1;
		}
		rc = rnsc_tr_transmit(t, f->id, raw, (size_t)n);
		if (rc)
			return rc;
		rnsc_tr_policy_sent(t, f, p, (size_t)n, now);
	}
	return 0;
}

/* ---- announces ---------------------------------------------------------------------------- */

static int announce_local(rnsc_transport *t, tr_local *l, const uint8_t *app_data, size_t app_len,
			  int path_response, const uint32_t *attached, uint64_t now)
{
	uint8_t rh[RNSC_ANNOUNCE_RANDOM_LEN], data[RNSC_MTU], ratchet[RNSC_RATCHETSIZE];
	if (!app_data && l->default_app_data) { /* app_data None: default_app_data */
		app_data = l->default_app_data;
		app_len = l->default_app_len;
	}
	int rc = rnsc_announce_random_hash(t->ctx, rh, now / 1000);
	if (rc)
		return rc;
	if (rnsc_announce_data_len(l->ratchets_on, app_len) > RNSC_MDU)
		return RNSC_ERR_TOOBIG;
	int has_ratchet = 0;
	if ((rc = rnsc_tr_ratchet_for_announce(t, l, ratchet, &has_ratchet, now)))
		return rc;
	int n = rnsc_announce_build(data, sizeof(data), &l->id, l->hash, l->name_hash, rh,
				    has_ratchet ? ratchet : NULL, app_data, app_len);
	if (n < 0)
		return n;
	rnsc_packet p = {0};
	p.context_flag = has_ratchet ? RNSC_FLAG_SET : RNSC_FLAG_UNSET;
	p.header_type = RNSC_HEADER_1;
	p.transport_type = RNSC_TRANSPORT_BROADCAST;
	p.dest_type = RNSC_DEST_SINGLE;
	p.packet_type = RNSC_PKT_ANNOUNCE;
	p.context = path_response ? RNSC_CTX_PATH_RESPONSE : RNSC_CTX_NONE;
	memcpy(p.dest_hash, l->hash, HL);
	p.data = data;
	p.data_len = (size_t)n;
	return rnsc_tr_outbound(t, &p, attached, now, NULL);
}

int rnsc_transport_announce(rnsc_transport *t, const uint8_t dest_hash[HL], const uint8_t *app_data,
			    size_t app_data_len, uint64_t now)
{
	if (!t || !dest_hash)
		return RNSC_ERR_INVAL;
	tr_local *l = rnsc_tmap_get(&t->locals, dest_hash, NULL);
	if (!l)
		return RNSC_ERR_NOTFOUND;
	if (l->type != RNSC_DEST_SINGLE)
		return RNSC_ERR_INVAL;
	return announce_local(t, l, app_data, app_data_len, 0, NULL, now);
}

/* Identity.remember / _remember_ratchet */
static int remember(rnsc_transport *t, const uint8_t dest[HL], const uint8_t packet_hash[32],
		    const rnsc_announce *a, uint64_t now)
{
	int fresh = 0;
	tr_known *k = rnsc_tmap_get(&t->known, dest, NULL);
	uint8_t *app = NULL;
	if (a->app_data) {
		app = rnsc_alloc(t->ctx, a->app_data_len);
		if (!app)
			return RNSC_ERR_NOMEM;
		memcpy(app, a->app_data, a->app_data_len);
	}
	if (!k) {
		k = rnsc_calloc(t->ctx, 1, sizeof(*k));
		if (!k) {
			rnsc_free(t->ctx, app);
			return RNSC_ERR_NOMEM;
		}
		fresh = 1;
		k->last_used_int = 1; /* the reference's integer 0: never used */
	}
	k->timestamp = now;
	memcpy(k->packet_hash, packet_hash, RNSC_HASHLEN);
	memcpy(k->pub, a->public_key, RNSC_KEYSIZE);
	rnsc_free(t->ctx, k->app_data);
	k->app_data = app;
	k->app_len = a->app_data ? a->app_data_len : 0;
	if (fresh) {
		int rc = rnsc_tmap_put(&t->known, dest, k, NULL);
		if (rc) {
			free_known(t->ctx, k);
			return rc;
		}
	}
	return a->ratchet ? rnsc_tr_ratchet_remember(t, dest, a->ratchet, now) : 0;
}

static int blob_known(const tr_path *p, const uint8_t *blob)
{
	for (size_t i = 0; i < p->pub.n_random_blobs; i++)
		if (memcmp(p->blobs[i], blob, RNSC_ANNOUNCE_RANDOM_LEN) == 0)
			return 1;
	return 0;
}

uint64_t rnsc_tr_path_timebase(const tr_path *p) /* Transport.timebase_from_random_blobs */
{
	uint64_t tb = 0;
	for (size_t i = 0; i < p->pub.n_random_blobs; i++)
		if (timebase_of_blob(p->blobs[i]) > tb)
			tb = timebase_of_blob(p->blobs[i]);
	return tb;
}

static uint64_t expiry_for_mode(int mode)
{
	if (mode == RNSC_TRANSPORT_MODE_ACCESS_POINT)
		return RNSC_AP_PATH_TIME_MS; /* Transport.AP_PATH_TIME */
	if (mode == RNSC_TRANSPORT_MODE_ROAMING)
		return RNSC_ROAMING_PATH_TIME_MS; /* Transport.ROAMING_PATH_TIME */
	return RNSC_PATHFINDER_E_MS;              /* Transport.PATHFINDER_E */
}

/* validate_announce with the known-key conflict check (done once, early, as the reference's
 * ingress limiting needs it). */
static int announce_check(rnsc_transport *t, const rnsc_packet *p, rnsc_announce *a)
{
	rnsc_identity announced;
	memset(&announced, 0, sizeof(announced));
	int rc = rnsc_announce_validate(t->ctx, p, a, &announced);
	if (rc == 0) {
		const tr_known *k = rnsc_tmap_get(&t->known, p->dest_hash, NULL);
		/* A different key for a known destination is a collision or an attack. */
		if (k && memcmp(k->pub, a->public_key, RNSC_KEYSIZE) != 0)
			rc = RNSC_ERR_DEST_MISMATCH;
	}
	rnsc_identity_free(&announced);
	return rc;
}

static int inbound_announce(rnsc_transport *t, const rnsc_packet *p, const uint8_t *raw, size_t len,
			    const uint8_t hash[RNSC_HASHLEN], const tr_iface *rif,
			    const rnsc_announce *va, int rc, uint64_t now)
{
	rnsc_announce a = *va;
	if (rc == RNSC_ERR_NOMEM)
		return rc;
	if (rc) {
		t->st.announces_invalid++;
		rnsc_log(t->ctx, RNSC_LOG_DEBUG, WHO, "invalid announce: %s", rnsc_err_name(rc));
		return 0;
	}
	t->st.announces_valid++;
	rc = remember(t, p->dest_hash, hash, &a, now);
	if (rc)
		return rc;
	if (rnsc_tmap_has(&t->locals, p->dest_hash)) {
		t->st.announces_own++;
		return 0;
	}

	const uint8_t *received_from = p->dest_hash;
	if (p->header_type == RNSC_HEADER_2) {
		received_from = p->transport_id;
		tr_announce *ae = t->cfg.transport_enabled
					  ? rnsc_tmap_get(&t->announces, p->dest_hash, NULL)
					  : NULL;
		if (ae) {
			int done = 0;
			if ((unsigned)p->hops - 1 == ae->hops) {
				/* Another node rebroadcast what we hold. */
				ae->local_rebroadcasts++;
				if (ae->retries > 0 &&
				    ae->local_rebroadcasts >= RNSC_LOCAL_REBROADCASTS_MAX)
					done = 1; /* Transport.LOCAL_REBROADCASTS_MAX */
			}
			if ((unsigned)p->hops - 1 == ae->hops + 1 && ae->retries > 0 &&
			    now < ae->rtrns_tmo)
				done = 1; /* passed on by the next node */
			if (done)
				rnsc_free(t->ctx, rnsc_tmap_del(&t->announces, p->dest_hash));
		}
	}

	/* hops < PATHFINDER_M + 1 always holds: unpack rejects 128 and above, +1 gives <= 128 */
	uint64_t emitted = timebase_of_blob(a.random_hash);
	tr_path *old = rnsc_tmap_get(&t->paths, p->dest_hash, NULL);
	int should_add = 0;
	if (!old) {
		should_add = 1;
	} else if (p->hops <= old->pub.hops) {
		/* Equal or fewer hops: take it when it is a newer emission we have not seen.
		 * The same emission on a higher-gravity interface would also win in the
		 * reference; rnsc interfaces carry no gravity (None), so it never does. */
		if (!blob_known(old, a.random_hash) && emitted > rnsc_tr_path_timebase(old))
			should_add = 1;
	} else {
		uint64_t path_emitted = 0;
		for (size_t i = 0; i < old->pub.n_random_blobs; i++) {
			uint64_t e = timebase_of_blob(old->blobs[i]);
			if (e > path_emitted)
				path_emitted = e;
			if (path_emitted >= emitted)
				break; /* as the reference's loop: stop at the first not-older blob */
		}
		if (now >= old->pub.expires)
			should_add = !blob_known(old, a.random_hash);
		else if (emitted > path_emitted)
			should_add = !blob_known(old, a.random_hash);
		else if (emitted == path_emitted)
			/* an announce heard before, but the path it gave failed to respond */
			should_add = rnsc_tr_path_is_unresponsive(t, p->dest_hash);
	}
	if (!should_add) {
		t->st.announces_ignored++;
		return 0;
	}

	tr_path *e = rnsc_calloc(t->ctx, 1, sizeof(*e));
	if (!e)
		return RNSC_ERR_NOMEM;
	if (old) {
		memcpy(e->blobs, old->blobs, sizeof(e->blobs));
		e->pub.n_random_blobs = old->pub.n_random_blobs;
	}
	if (!blob_known(e, a.random_hash)) {
		/* random_blobs[-MAX_RANDOM_BLOBS:] */
		if (e->pub.n_random_blobs == RNSC_MAX_RANDOM_BLOBS) {
			memmove(e->blobs[0], e->blobs[1],
				(RNSC_MAX_RANDOM_BLOBS - 1) * RNSC_ANNOUNCE_RANDOM_LEN);
			e->pub.n_random_blobs--;
		}
		memcpy(e->blobs[e->pub.n_random_blobs++], a.random_hash, RNSC_ANNOUNCE_RANDOM_LEN);
	}
	e->pub.timestamp = now;
	memcpy(e->pub.next_hop, received_from, HL);
	e->pub.hops = p->hops;
	e->pub.expires = now + expiry_for_mode(rif->mode);
	e->pub.iface = rif->id;
	memcpy(e->pub.packet_hash, hash, RNSC_HASHLEN);
	memcpy(e->raw, raw, len);
	e->raw_len = len;

	/* A local client's announce goes out at once, and only once; so does its path
	 * response when a peer asked us for that destination (pending_local_path_requests). */
	int from_local = rif->local_role == RNSC_TRANSPORT_LOCAL_CLIENT;
	int queue = 0, rate_blocked = 0;
	if ((rc = rnsc_tr_announce_rate(t, rif, p, now, &rate_blocked))) {
		rnsc_free(t->ctx, e);
		return rc;
	}
	if ((t->cfg.transport_enabled || from_local) && p->context != RNSC_CTX_PATH_RESPONSE) {
		queue = !rate_blocked;
	} else if (from_local && p->context == RNSC_CTX_PATH_RESPONSE) {
		uint32_t *pi = rnsc_tmap_del(&t->pending_local_prs, p->dest_hash);
		queue = pi != NULL;
		rnsc_free(t->ctx, pi);
	}
	if (queue) {
		tr_announce *ae = rnsc_calloc(t->ctx, 1, sizeof(*ae));
		uint64_t delay = 0;
		rc = ae ? rand_ms(t, RNSC_PATHFINDER_RW_MS, &delay) : RNSC_ERR_NOMEM;
		if (rc == 0) {
			ae->timestamp = now;
			ae->rtrns_tmo = now + delay; /* now + RNS.rand() * PATHFINDER_RW */
			ae->retries = 0;
			if (from_local) {
				ae->rtrns_tmo = now;
				ae->retries = RNSC_PATHFINDER_R;
			}
			memcpy(ae->rcvd_from, received_from, HL);
			ae->hops = p->hops;
			memcpy(ae->raw, raw, len);
			ae->raw_len = len;
			void *prev = NULL;
			rc = rnsc_tmap_put(&t->announces, p->dest_hash, ae, &prev);
			rnsc_free(t->ctx, prev);
		}
		if (rc) {
			rnsc_free(t->ctx, ae);
			rnsc_free(t->ctx, e);
			return rc;
		}
	}
	void *prev = NULL;
	rc = rnsc_tmap_put(&t->paths, p->dest_hash, e, &prev);
	if (rc) {
		rnsc_free(t->ctx, e);
		return rc;
	}
	rnsc_free(t->ctx, prev);
	t->st.paths_added++;
	if ((rc = rnsc_tr_path_state_set(t, p->dest_hash, RNSC_PATH_STATE_UNKNOWN)) < 0)
		return rc;
	if (rnsc_tmap_has(&t->path_requests, p->dest_hash)) /* we asked for it: in use */
		rnsc_transport_known_used(t, p->dest_hash, now);
	if ((rc = rnsc_tr_tunnel_path_stored(t, rif, p->dest_hash, e, now)))
		return rc;
	rnsc_log(t->ctx, RNSC_LOG_DEBUG, WHO, "destination is now %u hops away on interface %u",
		 (unsigned)p->hops, (unsigned)rif->id);
	/* Local clients get every announce that updated the path table at once, in transport
	 * from this instance so they route through it. */
	for (size_t i = 0; i < t->n_ifaces && t->n_local_clients; i++) {
		const tr_iface *f = &t->ifaces[i];
		if (f->local_role != RNSC_TRANSPORT_LOCAL_CLIENT || f->id == rif->id)
			continue;
		rnsc_packet c = *p;
		c.header_type = RNSC_HEADER_2;
		c.transport_type = RNSC_TRANSPORT_TRANSPORT;
		memcpy(c.transport_id, t->ident.hash, HL);
		c.context = RNSC_CTX_NONE;
		rc = rnsc_tr_outbound(t, &c, &f->id, now, NULL);
		if (rc && rc != RNSC_ERR_HOPS && rc != RNSC_ERR_TOOBIG)
			return rc;
	}
	/* Waiting discovery path requests are answered at once (transport_discovery.c). */
	if ((rc = rnsc_tr_discovery_answer(t, p, now)))
		return rc;
	if (t->cb.on_announce)
		t->cb.on_announce(t->cb.ud, p->dest_hash, a.app_data,
				  a.app_data ? a.app_data_len : 0, p->hops);
	return rnsc_tr_announce_handlers_run(t, p, hash, &a);
}

/* Re-sends a stored announce HEADER_2 from this transport node (jobs() and path responses). */
static int send_stored_announce(rnsc_transport *t, const tr_announce *ae, uint64_t now)
{
	rnsc_packet orig;
	int rc = rnsc_packet_unpack(&orig, ae->raw, ae->raw_len);
	if (rc)
		return rc;
	rnsc_packet p = orig;
	p.header_type = RNSC_HEADER_2;
	p.transport_type = RNSC_TRANSPORT_TRANSPORT;
	memcpy(p.transport_id, t->ident.hash, HL);
	p.context = ae->block_rebroadcasts ? RNSC_CTX_PATH_RESPONSE : RNSC_CTX_NONE;
	p.hops = (uint8_t)ae->hops;
	t->st.rebroadcasts++;
	return rnsc_tr_outbound(t, &p, ae->has_attached ? &ae->attached : NULL, now, NULL);
}

/* ---- path requests ------------------------------------------------------------------------ */

/* Transport.request_path. A recursive request (discovery on behalf of a peer) is not sent
 * on an egress-limited interface, one with queued announces, or one whose announce cap has
 * not allowed the next transmission yet; one that goes out advances the cap by its own
 * airtime. Returns 1 when blocked. */
int rnsc_tr_request_path(rnsc_transport *t, const uint8_t dest_hash[HL], const uint32_t *iface,
			 const uint8_t *tag_in, size_t tag_len, int recursive, uint64_t now)
{
	tr_iface *f = iface ? (tr_iface *)rnsc_tr_iface_find(t, *iface) : NULL;
	if (iface && !f)
		return RNSC_ERR_NOTFOUND;
	if (f && recursive && rnsc_tr_should_egress_limit_pr(f, now)) {
		t->st.pr_egress_limited++;
		return 1;
	}
	uint8_t tag[HL], data[3 * HL];
	if (tag_in) {
		memcpy(tag, tag_in, tag_len);
	} else {
		int rc = rnsc_random_hash(t->ctx, tag); /* RNS.Identity.get_random_hash() */
		if (rc)
			return rc;
		tag_len = HL;
	}
	int n = rnsc_pathreq_build(data, sizeof(data), dest_hash,
				   t->cfg.transport_enabled ? t->ident.hash : NULL, tag, tag_len);
	if (n < 0)
		return n;
	if (f && recursive) {
		if (f->acap.n || (double)now < f->acap.allowed_at) {
			t->st.pr_egress_limited++; /* queued announces or the announce cap */
			return 1;
		}
		if (f->bitrate) {
			/* tx_time / announce_cap, in ms */
			double tx_ms = ((double)n + RNSC_HEADER_MINSIZE) * 8.0 * 1000.0 /
				       (double)f->bitrate;
			f->acap.allowed_at = (double)now + tx_ms / f->acap.cap;
		}
	}
	uint64_t *ts = rnsc_tmap_get(&t->path_requests, dest_hash, NULL);
	if (!ts) {
		ts = rnsc_alloc(t->ctx, sizeof(*ts));
		if (!ts)
			return RNSC_ERR_NOMEM;
		int rc = rnsc_tmap_put(&t->path_requests, dest_hash, ts, NULL);
		if (rc) {
			rnsc_free(t->ctx, ts);
			return rc;
		}
	}
	*ts = now;
	rnsc_packet p = {0};
	p.header_type = RNSC_HEADER_1;
	p.transport_type = RNSC_TRANSPORT_BROADCAST;
	p.dest_type = RNSC_DEST_PLAIN;
	p.packet_type = RNSC_PKT_DATA;
	memcpy(p.dest_hash, t->pr_dest, HL);
	p.data = data;
	p.data_len = (size_t)n;
	return rnsc_tr_outbound(t, &p, iface, now, NULL);
}

int rnsc_transport_request_path(rnsc_transport *t, const uint8_t dest_hash[HL], int iface_only,
				uint32_t iface, uint64_t now)
{
	if (!t || !dest_hash)
		return RNSC_ERR_INVAL;
	return rnsc_tr_request_path(t, dest_hash, iface_only ? &iface : NULL, NULL, 0, 0, now);
}

int rnsc_transport_request_path_tagged(rnsc_transport *t, const uint8_t dest_hash[HL],
				       int iface_only, uint32_t iface, const uint8_t *tag,
				       size_t tag_len, uint64_t now)
{
	if (!t || !dest_hash || (!tag && tag_len))
		return RNSC_ERR_INVAL;
	if (tag_len > HL)
		return RNSC_ERR_RANGE; /* a path request's tag is read back as at most 16 bytes */
	return rnsc_tr_request_path(t, dest_hash, iface_only ? &iface : NULL, tag_len ? tag : NULL,
				    tag_len, 0, now);
}

/* Transport.path_request (local destinations, and known paths on transport nodes). */
/* Asks every interface but `except` (UINT32_MAX: none) with role `role` (-1: any) for a
 * path, as the reference forwards path requests for and to local clients. */
static int request_path_on(rnsc_transport *t, const uint8_t dest[HL], uint32_t except, int role,
			   uint64_t now)
{
	uint32_t ids[64];
	size_t n = 0;
	for (size_t i = 0; i < t->n_ifaces && n < 64; i++)
		if (t->ifaces[i].id != except && (role < 0 || t->ifaces[i].local_role == role))
			ids[n++] = t->ifaces[i].id;
	/* a local client's request goes out with one random tag on every interface */
	uint8_t tag[HL];
	int trc = role < 0 ? rnsc_random_hash(t->ctx, tag) : 0;
	if (trc)
		return trc;
	for (size_t i = 0; i < n; i++) {
		int rc = rnsc_tr_request_path(t, dest, &ids[i], role < 0 ? tag : NULL, HL, 0, now);
		if (rc && rc != RNSC_ERR_NOTFOUND)
			return rc;
	}
	return 0;
}

#define PENDING_LOCAL_PRS_MAX 4096u

static int path_request(rnsc_transport *t, const rnsc_pathreq *r, const tr_iface *rif,
			int ingress_limited, uint64_t now)
{
	int from_local = rif->local_role == RNSC_TRANSPORT_LOCAL_CLIENT;
	const tr_path *known = rnsc_tmap_get(&t->paths, r->dest_hash, NULL);
	const tr_iface *kif = known ? rnsc_tr_iface_find(t, known->pub.iface) : NULL;
	if (kif && kif->local_role == RNSC_TRANSPORT_LOCAL_CLIENT) {
		/* The destination lives on a local client: its path response is passed on to
		 * the requestor. */
		if (t->pending_local_prs.n >= PENDING_LOCAL_PRS_MAX) { /* bounded: start over */
			rnsc_tmap_free(&t->pending_local_prs, free_plain);
			rnsc_tmap_init(&t->pending_local_prs, t->ctx, HL);
		}
		uint32_t *pi = rnsc_alloc(t->ctx, sizeof(*pi));
		if (!pi)
			return RNSC_ERR_NOMEM;
		*pi = rif->id;
		void *old = NULL;
		int prc = rnsc_tmap_put(&t->pending_local_prs, r->dest_hash, pi, &old);
		rnsc_free(t->ctx, old);
		if (prc) {
			rnsc_free(t->ctx, pi);
			return prc;
		}
		rnsc_transport_known_used(t, r->dest_hash, now);
	}
	tr_local *l = rnsc_tmap_get(&t->locals, r->dest_hash, NULL);
	if (l) {
		rnsc_tr_pr_resolved(t, r->dest_hash); /* answered */
		if (l->type != RNSC_DEST_SINGLE)
			return 0; /* only SINGLE destinations announce */
		t->st.pr_answered++;
		return announce_local(t, l, NULL, 0, 1, &rif->id, now);
	}
	tr_path *path = t->cfg.transport_enabled || from_local
				? rnsc_tmap_get(&t->paths, r->dest_hash, NULL)
				: NULL;
	if (!path && from_local) /* asked on every other interface for the client */
		return request_path_on(t, r->dest_hash, rif->id, -1, now);
	if (!path) { /* a recursive search on discovering interfaces (transport_discovery.c) */
		int rc = rnsc_tr_discover(t, r->dest_hash, r->tag, r->tag_len, rif, ingress_limited,
					  now);
		if (rc)
			return rc < 0 ? rc : 0;
	}
	if (!path && t->n_local_clients) /* passed on to the local clients */
		return request_path_on(t, r->dest_hash, rif->id, RNSC_TRANSPORT_LOCAL_CLIENT, now);
	if (!path)
		return 0;                     /* no path known: ignored */
	rnsc_tr_pr_resolved(t, r->dest_hash); /* answered (or deliberately not) */
	if (rif->mode == RNSC_TRANSPORT_MODE_ROAMING && rif->id == path->pub.iface)
		return 0; /* the reference does not answer a roaming peer from its own side */
	if (r->has_transport_id && memcmp(r->transport_id, path->pub.next_hop, HL) == 0)
		return 0; /* the requestor is our next hop: it knows better */
	tr_announce *ae = rnsc_calloc(t->ctx, 1, sizeof(*ae));
	if (!ae)
		return RNSC_ERR_NOMEM;
	ae->timestamp = now;
	/* PATH_REQUEST_GRACE lets directly reachable peers answer first; roaming interfaces
	 * wait PATH_REQUEST_RG more. */
	ae->rtrns_tmo = now + RNSC_PATH_REQUEST_GRACE_MS;
	if (rif->mode == RNSC_TRANSPORT_MODE_ROAMING)
		ae->rtrns_tmo += RNSC_PATH_REQUEST_RG_MS;
	if (from_local || (kif && kif->local_role == RNSC_TRANSPORT_LOCAL_CLIENT))
		ae->rtrns_tmo = now; /* nobody closer to wait for */
	ae->retries = RNSC_PATHFINDER_R;
	memcpy(ae->rcvd_from, path->pub.next_hop, HL);
	ae->hops = path->pub.hops;
	memcpy(ae->raw, path->raw, path->raw_len);
	ae->raw_len = path->raw_len;
	ae->block_rebroadcasts = 1;
	ae->has_attached = 1;
	ae->attached = rif->id;
	void *prev = NULL;
	int rc = rnsc_tmap_put(&t->announces, r->dest_hash, ae, &prev);
	if (rc) {
		rnsc_free(t->ctx, ae);
		return rc;
	}
	/* A rebroadcast pending for the same destination waits in held_announces until the
	 * path response went out (process_announce_table reinserts it). */
	if (prev && (rc = rnsc_tr_hold_for_pr(t, r->dest_hash, prev)))
		return rc;
	rnsc_transport_known_used(t, r->dest_hash, now);
	t->st.pr_answered++;
	return 0;
}

/* ---- delivery and proofs ------------------------------------------------------------------ */

static int deliver(rnsc_transport *t, const rnsc_packet *p, const uint8_t hash[RNSC_HASHLEN],
		   const tr_iface *rif, uint64_t now)
{
	tr_local *l = rnsc_tmap_get(&t->locals, p->dest_hash, NULL);
	if (!l || l->type != p->dest_type)
		return 0;
	if (memcmp(p->dest_hash, t->pr_dest, HL) == 0)
		return 0; /* not reachable: the path request destination is not in locals */
	/* An interface with a larger hardware MTU carries larger SINGLE packets, and the
	 * reference decrypts them: the stack buffer is for the usual size only. */
	uint8_t stack_pt[RNSC_MTU];
	uint8_t *pt = stack_pt;
	size_t pt_cap = sizeof(stack_pt);
	const uint8_t *data = p->data;
	size_t len = p->data_len;
	if (l->type == RNSC_DEST_SINGLE) {
		if (p->data_len > pt_cap) {
			pt_cap = p->data_len;
			if (!(pt = rnsc_alloc(t->ctx, pt_cap)))
				return RNSC_ERR_NOMEM;
		}
		/* Destination.decrypt: the retained ratchets first, then (unless enforced) the
		 * identity key; latest_ratchet_id names the one that worked. */
		int used = -1;
		int n = rnsc_identity_decrypt(&l->id, pt, pt_cap, p->data, p->data_len,
					      (const uint8_t(*)[32])l->ratchets, l->n_ratchets,
					      l->enforce_ratchets, &used);
		l->has_latest_rid = 0;
		if (n >= 0 && used >= 0) {
			uint8_t rpub[RNSC_RATCHETSIZE];
			int rc = rnsc_ratchet_public(t->ctx, rpub, l->ratchets[used]);
			if (rc == 0)
				rc = rnsc_ratchet_id(t->ctx, l->latest_rid, rpub);
			l->has_latest_rid = rc == 0;
		}
		if (n < 0) {
			t->st.decrypt_failed++;
			if (pt != stack_pt)
				rnsc_free_secret(t->ctx, pt, pt_cap);
			return 0;
		}
		data = pt;
		len = (size_t)n;
	} else if (l->type == RNSC_DEST_GROUP) {
		if (p->data_len > pt_cap) {
			pt_cap = p->data_len;
			if (!(pt = rnsc_alloc(t->ctx, pt_cap)))
				return RNSC_ERR_NOMEM;
		}
		int n = rnsc_tr_group_decrypt(t, l, pt, pt_cap, p->data, p->data_len);
		if (n < 0) {
			t->st.decrypt_failed++;
			if (pt != stack_pt)
				rnsc_free_secret(t->ctx, pt, pt_cap);
			return 0;
		}
		data = pt;
		len = (size_t)n;
	}
	t->st.delivered++;
	int want_app = l->prove_app && l->type == RNSC_DEST_SINGLE;
	if (t->cb.on_data)
		t->cb.on_data(t->cb.ud, p->dest_hash, data, len, hash, rif->id);
	/* PROVE_APP: callbacks.proof_requested decides (SINGLE only: proofs need the identity's
	 * private key). The callback may have deregistered the destination: look it up again. */
	int app_says = 0;
	if (want_app && t->cb.on_proof_requested)
		app_says = t->cb.on_proof_requested(t->cb.ud, p->dest_hash, data, len, hash) != 0;
	if (pt != stack_pt)
		rnsc_free_secret(t->ctx, pt, pt_cap);
	else
		rnsc_memzero(stack_pt, sizeof(stack_pt));
	if (!(l = rnsc_tmap_get(&t->locals, p->dest_hash, NULL)))
		return 0;
	if (!(l->prove_all || app_says) || l->type != RNSC_DEST_SINGLE)
		return 0;
	/* Packet.prove -> Identity.prove: on the receiving interface, implicit by default. */
	uint8_t proof[RNSC_PROOF_EXPLICIT_LEN];
	int n = rnsc_proof_build(proof, sizeof(proof), &l->id, hash, t->cfg.use_implicit_proof);
	if (n < 0)
		return n;
	rnsc_packet pp;
	rnsc_proof_packet(&pp, hash, proof, (size_t)n);
	t->st.proofs_sent++;
	return rnsc_tr_outbound(t, &pp, &rif->id, now, NULL);
}

int rnsc_transport_send(rnsc_transport *t, const uint8_t dest_hash[HL], const uint8_t *data,
			size_t len, uint8_t packet_hash[RNSC_HASHLEN], uint64_t now)
{
	if (!t || !dest_hash || (!data && len))
		return RNSC_ERR_INVAL;
	/* Packet.pack refuses only a raw packet over the MTU, so up to 399 bytes go out
	 * (ENCRYPTED_MDU, 383, is what the reference advertises, not what it enforces) */
	if (len > RNSC_MTU ||
	    rnsc_packet_header_len(RNSC_HEADER_1) + rnsc_identity_token_len(len) > RNSC_MTU)
		return RNSC_ERR_TOOBIG;
	const tr_known *k = rnsc_tmap_get(&t->known, dest_hash, NULL);
	if (!k)
		return RNSC_ERR_NOTFOUND;
	rnsc_identity id;
	int rc = rnsc_identity_from_public(t->ctx, &id, k->pub, RNSC_KEYSIZE);
	if (rc)
		return rc;
	/* Destination.encrypt: to the latest known ratchet (Identity.get_ratchet) if any */
	const tr_ratchet *rt = rnsc_tmap_get(&t->ratchets, dest_hash, NULL);
	uint8_t ct[RNSC_MTU];
	int n = rnsc_identity_encrypt(&id, ct, sizeof(ct), data, len, rt ? rt->pub : NULL);
	rnsc_identity_free(&id);
	if (n < 0)
		return n;
	rnsc_packet p = {0};
	p.header_type = RNSC_HEADER_1;
	p.transport_type = RNSC_TRANSPORT_BROADCAST;
	p.dest_type = RNSC_DEST_SINGLE;
	p.packet_type = RNSC_PKT_DATA;
	memcpy(p.dest_hash, dest_hash, HL);
	p.data = ct;
	p.data_len = (size_t)n;
	uint8_t hash[RNSC_HASHLEN];
	rc = rnsc_tr_outbound(t, &p, NULL, now, hash);
	if (rc)
		return rc;
	if (packet_hash)
		memcpy(packet_hash, hash, RNSC_HASHLEN);
	/* PacketReceipt: timeout = first_hop_timeout + TIMEOUT_PER_HOP * hops_to(dest). */
	const tr_path *path = rnsc_tmap_get(&t->paths, dest_hash, NULL);
	uint64_t timeout = RNSC_PER_HOP_TIMEOUT_MS;
	if (path) {
		const tr_iface *f = rnsc_tr_iface_find(t, path->pub.iface);
		if (f && f->bitrate)
			timeout += (uint64_t)RNSC_MTU * 8 * 1000 / f->bitrate;
		timeout += (uint64_t)RNSC_PER_HOP_TIMEOUT_MS * path->pub.hops;
	} else {
		/* hops_to() is PATHFINDER_M for an unknown path */
		timeout += (uint64_t)RNSC_PER_HOP_TIMEOUT_MS * RNSC_PATHFINDER_M;
	}
	if (t->n_receipts == t->cap_receipts) {
		size_t ncap = t->cap_receipts ? t->cap_receipts * 2 : 16;
		tr_receipt *nr = rnsc_calloc(t->ctx, ncap, sizeof(*nr));
		if (!nr)
			return RNSC_ERR_NOMEM;
		if (t->n_receipts)
			memcpy(nr, t->receipts, t->n_receipts * sizeof(*nr));
		rnsc_free(t->ctx, t->receipts);
		t->receipts = nr;
		t->cap_receipts = ncap;
	}
	tr_receipt *r = &t->receipts[t->n_receipts++];
	memcpy(r->hash, hash, RNSC_HASHLEN);
	memcpy(r->dest, dest_hash, HL);
	r->timeout = now + timeout;
	return 0;
}

static void receipt_remove(rnsc_transport *t, size_t i)
{
	memmove(&t->receipts[i], &t->receipts[i + 1],
		(t->n_receipts - i - 1) * sizeof(*t->receipts));
	t->n_receipts--;
}

static int inbound_proof(rnsc_transport *t, const rnsc_packet *p, const uint8_t *raw, size_t len,
			 const tr_iface *rif)
{
	if (rnsc_tr_relaying(t)) {
		tr_reverse *rv = rnsc_tmap_del(&t->reverse, p->dest_hash);
		if (rv) {
			int rc = 0;
			if (rv->outb_if == rif->id) {
				t->st.forwarded++;
				rc = rnsc_tr_transmit_hops(t, rv->rcvd_if, raw, len, p->hops);
			}
			rnsc_free(t->ctx, rv);
			if (rc)
				return rc;
		}
	}
	const uint8_t *proof_hash = p->data_len == RNSC_PROOF_EXPLICIT_LEN ? p->data : NULL;
	for (size_t i = 0; i < t->n_receipts; i++) {
		tr_receipt *r = &t->receipts[i];
		if (proof_hash && memcmp(r->hash, proof_hash, RNSC_HASHLEN) != 0)
			continue;
		uint8_t pd[HL];
		rnsc_proof_destination(pd, r->hash);
		if (memcmp(pd, p->dest_hash, HL) != 0)
			continue;
		const tr_known *k = rnsc_tmap_get(&t->known, r->dest, NULL);
		if (!k)
			continue;
		rnsc_identity id;
		if (rnsc_identity_from_public(t->ctx, &id, k->pub, RNSC_KEYSIZE))
			continue;
		int ok = rnsc_proof_validate(&id, r->hash, p->data, p->data_len) == 0;
		rnsc_identity_free(&id);
		if (!ok)
			continue;
		uint8_t h[RNSC_HASHLEN];
		memcpy(h, r->hash, RNSC_HASHLEN);
		receipt_remove(t, i);
		t->st.proofs_valid++;
		if (t->cb.on_receipt)
			t->cb.on_receipt(t->cb.ud, h, 1);
		break;
	}
	return 0;
}

/* ---- inbound ------------------------------------------------------------------------------ */

/* Transport.packet_filter: 1 to process, 0 to drop. A hashlist duplicate is counted only
 * when count is set (inbound; not a query through rnsc_transport_packet_filter). */
static int packet_filter(rnsc_transport *t, const rnsc_packet *p, const uint8_t hash[RNSC_HASHLEN],
			 int count)
{
	if (p->header_type == RNSC_HEADER_2 && p->packet_type != RNSC_PKT_ANNOUNCE &&
	    memcmp(p->transport_id, t->ident.hash, HL) != 0)
		return 0; /* in transport for another transport instance */
	switch (p->context) {
	case RNSC_CTX_KEEPALIVE:
	case RNSC_CTX_RESOURCE_REQ:
	case RNSC_CTX_RESOURCE_PRF:
	case RNSC_CTX_RESOURCE:
	case RNSC_CTX_CACHE_REQUEST:
	case RNSC_CTX_CHANNEL:
		return 1;
	default:
		break;
	}
	if (p->dest_type == RNSC_DEST_PLAIN || p->dest_type == RNSC_DEST_GROUP) {
		if (p->packet_type == RNSC_PKT_ANNOUNCE)
			return 0;    /* announces are for SINGLE destinations only */
		return p->hops <= 1; /* PLAIN and GROUP packets are never transported */
	}
	if (!hashlist_has(t, hash))
		return 1;
	if (p->packet_type == RNSC_PKT_ANNOUNCE && p->dest_type == RNSC_DEST_SINGLE)
		return 1; /* repeated announces are sorted out by the path table rules */
	if (count)
		t->st.duplicates++;
	return 0;
}

/* The packet as the next hop gets it, into out (room for len bytes): hops counted, and the
 * transport id replaced by the next hop's (or, on the last transport hop, the transport
 * header stripped). Returns its length. */
static size_t rewrite_for_next_hop(uint8_t *out, const rnsc_packet *p, const uint8_t *raw,
				   size_t len, const tr_path *path)
{
	if (path->pub.hops == 1) {
		out[0] = (uint8_t)(RNSC_HEADER_1 << 6 | RNSC_TRANSPORT_BROADCAST << 4 |
				   (raw[0] & 0x0f));
		out[1] = p->hops;
		memcpy(out + 2, raw + 2 + HL, len - 2 - HL);
		return len - HL;
	}
	memcpy(out, raw, len);
	out[1] = p->hops;
	if (path->pub.hops > 1)
		memcpy(out + 2, path->pub.next_hop, HL);
	return len;
}

/* forward() for anything but a link request: the reverse table entry for the proof's way
 * back, and the packet rewritten straight into the outbox. */
static int forward_packet(rnsc_transport *t, const rnsc_packet *p, const uint8_t *raw, size_t len,
			  const uint8_t hash[RNSC_HASHLEN], const tr_iface *rif, tr_path *path,
			  uint64_t now)
{
	/* reverse_table[truncated packet hash] */
	tr_reverse *rv = rnsc_alloc(t->ctx, sizeof(*rv));
	if (!rv)
		return RNSC_ERR_NOMEM;
	rv->rcvd_if = rif->id;
	rv->outb_if = path->pub.iface;
	rv->timestamp = now;
	void *prev = NULL;
	int rc = rnsc_tmap_put(&t->reverse, hash, rv, &prev); /* first 16 bytes = key */
	if (rc) {
		rnsc_free(t->ctx, rv);
		return rc;
	}
	rnsc_free(t->ctx, prev);
	size_t nlen = path->pub.hops == 1 ? len - HL : len;
	uint8_t *out = rnsc_tr_transmit_buf(t, path->pub.iface, nlen);
	if (!out)
		return RNSC_ERR_NOMEM;
	rewrite_for_next_hop(out, p, raw, len, path);
	t->st.forwarded++;
	path->pub.timestamp = now;
	return 0;
}

/* Forwarding of a packet addressed to this node in transport (HEADER_2, non-announce). */
static int forward(rnsc_transport *t, const rnsc_packet *p, const uint8_t *raw, size_t len,
		   const uint8_t hash[RNSC_HASHLEN], const tr_iface *rif, uint64_t now,
		   int *lr_handled)
{
	tr_path *path = rnsc_tmap_get(&t->paths, p->dest_hash, NULL);
	if (!path)
		return 0; /* no path: dropped, as the reference does */
	if (p->packet_type != RNSC_PKT_LINKREQUEST)
		return forward_packet(t, p, raw, len, hash, rif, path, now);
	const tr_iface *oif = rnsc_tr_iface_find(t, path->pub.iface);
	if (!oif)
		return 0;
	/* A link request may be as long as the interface carries: the stack buffer is for the
	 * usual one only. */
	uint8_t stack_nr[RNSC_MTU];
	uint8_t *nr = len > sizeof(stack_nr) ? rnsc_alloc(t->ctx, len) : stack_nr;
	if (!nr)
		return RNSC_ERR_NOMEM;
	size_t nlen = rewrite_for_next_hop(nr, p, raw, len, path);
	int rc = rnsc_tr_lr_forward(t, raw, len, nr, &nlen, rif, oif, path->pub.next_hop,
				    path->pub.hops, p->hops, p->dest_hash, now);
	if (rc == 0) {
		*lr_handled = 1;
		t->st.forwarded++;
		path->pub.timestamp = now;
		rc = rnsc_tr_transmit(t, path->pub.iface, nr, nlen);
	} else if (rc == RNSC_ERR_LINK_MODE || rc == RNSC_ERR_RANGE || rc == RNSC_ERR_MALFORMED) {
		rc = 0; /* undecodable signalling: dropped, as the reference does */
	}
	if (nr != stack_nr)
		rnsc_free(t->ctx, nr);
	return rc;
}

int rnsc_tr_path_request(rnsc_transport *t, const rnsc_pathreq *r, const tr_iface *rif,
			 int ingress_limited, uint64_t now)
{
	return path_request(t, r, rif, ingress_limited, now);
}

static int inbound_path_request(rnsc_transport *t, const rnsc_packet *p, const tr_iface *rif,
				size_t len, uint64_t now)
{
	rnsc_pathreq r;
	if (rnsc_pathreq_parse(&r, p->data, p->data_len) != 0)
		return 0; /* short or tagless: ignored (a protocol violation in the reference) */
	/* unique_tag = destination_hash + tag, remembered in two generations */
	uint8_t key[RNSC_HASHLEN], ut[2 * HL];
	memcpy(ut, r.dest_hash, HL);
	memcpy(ut + HL, r.tag, r.tag_len);
	int rc = rnsc_sha256(t->ctx, key, ut, HL + r.tag_len);
	if (rc)
		return rc;
	if (rnsc_tmap_has(&t->pr_tags, key) || rnsc_tmap_has(&t->pr_tags_prev, key)) {
		t->st.pr_duplicate++;
		return 0;
	}
	rc = rnsc_tmap_put(&t->pr_tags, key, NULL, NULL);
	if (rc)
		return rc;
	t->st.pr_received++;
	int limited = rnsc_tr_pr_ingress(t, (tr_iface *)rif, len, now);
	rc = rnsc_tr_pr_inflight(t, r.dest_hash, rif, limited, now);
	if (rc)
		return rc < 0 ? rc : 0; /* batched into the request in flight */
	if (limited) /* TC_INGRESS_LIMITED: waits for the next tick (transport_policy.c) */
		return rnsc_tr_prq_put(t, &r, rif);
	return path_request(t, &r, rif, 0, now);
}

int rnsc_transport_ingest(rnsc_transport *t, uint32_t iface, const uint8_t *frame, size_t len,
			  uint64_t now)
{
	if (!t || !frame)
		return RNSC_ERR_INVAL;
	const tr_iface *rif = rnsc_tr_iface_find(t, iface);
	if (!rif)
		return RNSC_ERR_NOTFOUND;
	t->st.rx++;
	if (len > 2 && (frame[0] & RNSC_PACKET_IFAC_FLAG)) {
		t->st.malformed++;
		return RNSC_ERR_IFAC_UNEXPECTED;
	}
	if (len > rif->hw_mtu) {
		t->st.malformed++;
		return RNSC_ERR_TOOBIG;
	}
	rnsc_packet p;
	int rc = rnsc_packet_unpack(&p, frame, len);
	if (rc) {
		t->st.malformed++;
		return rc;
	}
	uint8_t hash[RNSC_HASHLEN];
	rc = rnsc_packet_hash(t->ctx, hash, frame, len);
	if (rc)
		return rc;
	/* Behind a shared instance the instance filters (Transport.packet_filter). */
	if (!t->to_shared && !packet_filter(t, &p, hash, 1)) {
		t->st.filtered++;
		return 0;
	}
	/* Hops over the shared-instance socket are not hops (Transport.inbound). */
	int from_local = rif->local_role == RNSC_TRANSPORT_LOCAL_CLIENT;
	if (rif->local_role == RNSC_TRANSPORT_LOCAL_NONE)
		p.hops++;
	if (p.packet_type == RNSC_PKT_ANNOUNCE && len > RNSC_MTU) {
		t->st.malformed++; /* excessive announce frame size */
		return 0;
	}
	if (rnsc_tr_blackhole_drops(t, &p))
		return 0; /* validate_announce(signal_blackholed=True): dropped before validation */
	/* Announces are validated early and ingress limited before they are remembered. */
	rnsc_announce va = {0};
	int vrc = 0;
	if (p.packet_type == RNSC_PKT_ANNOUNCE) {
		vrc = announce_check(t, &p, &va);
		rc = rnsc_tr_announce_ingress(t, (tr_iface *)rif, &p, frame, len, vrc, now);
		if (rc)
			return rc < 0 ? rc : 0;
	}
	if (p.packet_type == RNSC_PKT_DATA && memcmp(p.dest_hash, t->pr_dest, HL) == 0) {
		/* path requests are remembered in the hashlist like everything else */
		rc = rnsc_tr_hashlist_add(t, hash);
		if (rc)
			return rc;
		return inbound_path_request(t, &p, rif, len, now);
	}

	/* Packets of relayed links and LRPROOFs are only remembered once their place in the
	 * chain is known; everything else right away. */
	if (!rnsc_tr_link_table_has(t, p.dest_hash) &&
	    !(p.packet_type == RNSC_PKT_PROOF && p.context == RNSC_CTX_LRPROOF)) {
		rc = rnsc_tr_hashlist_add(t, hash);
		if (rc)
			return rc;
	}

	/* Plain broadcasts from a local client go out everywhere else; those from elsewhere
	 * reach every local client. */
	if (t->n_local_clients && p.dest_type == RNSC_DEST_PLAIN &&
	    p.transport_type == RNSC_TRANSPORT_BROADCAST &&
	    memcmp(p.dest_hash, t->tunnel_dest, HL) != 0) { /* not the control destinations */
		for (size_t i = 0; i < t->n_ifaces; i++) {
			const tr_iface *f = &t->ifaces[i];
			if (f->id == rif->id ||
			    (!from_local && f->local_role != RNSC_TRANSPORT_LOCAL_CLIENT))
				continue;
			if ((rc = rnsc_tr_transmit(t, f->id, frame, len)))
				return rc;
		}
	}
	/* A packet for a destination on a local client arrives without a transport id (the
	 * client looks directly reachable): it is taken into transport here. */
	int for_local = 0;
	if (p.packet_type != RNSC_PKT_ANNOUNCE && t->n_local_clients) {
		const tr_path *lp = rnsc_tmap_get(&t->paths, p.dest_hash, NULL);
		for_local = lp && lp->pub.hops == 0;
	}
	int lr_handled = 0;
	if (((t->cfg.transport_enabled || from_local) && p.header_type == RNSC_HEADER_2 &&
	     p.packet_type != RNSC_PKT_ANNOUNCE) ||
	    (for_local && p.header_type == RNSC_HEADER_1)) {
		/* packet_filter already dropped transport ids other than ours. As in the
		 * reference, processing goes on below (local delivery) after forwarding. */
		rc = forward(t, &p, frame, len, hash, rif, now, &lr_handled);
		if (rc)
			return rc;
	}
	if (rnsc_tr_relaying(t) && p.packet_type != RNSC_PKT_ANNOUNCE &&
	    p.packet_type != RNSC_PKT_LINKREQUEST && p.context != RNSC_CTX_LRPROOF) {
		rc = rnsc_tr_link_transport(t, &p, frame, len, hash, rif, now);
		if (rc)
			return rc < 0 ? rc : 0;
	}
	switch (p.packet_type) {
	case RNSC_PKT_ANNOUNCE:
		return inbound_announce(t, &p, frame, len, hash, rif, &va, vrc, now);
	case RNSC_PKT_LINKREQUEST:
		if (lr_handled)
			return 0;
		return rnsc_tr_link_request(t, &p, frame, len, rif, now);
	case RNSC_PKT_DATA:
		if (p.dest_type == RNSC_DEST_LINK) {
			rc = rnsc_tr_link_packet(t, &p, frame, len, hash, rif, now);
			return rc < 0 ? rc : 0;
		}
		if (p.dest_type == RNSC_DEST_PLAIN && memcmp(p.dest_hash, t->tunnel_dest, HL) == 0)
			return rnsc_tr_tunnel_inbound(t, (tr_iface *)rif, &p, now);
		return deliver(t, &p, hash, rif, now);
	case RNSC_PKT_PROOF:
		if (p.context == RNSC_CTX_LRPROOF)
			return rnsc_tr_link_proof(t, &p, frame, len, hash, rif, now);
		if (p.context == RNSC_CTX_RESOURCE_PRF || p.dest_type == RNSC_DEST_LINK) {
			rc = rnsc_tr_link_packet(t, &p, frame, len, hash, rif, now);
			if (rc < 0)
				return rc;
			if (p.context == RNSC_CTX_RESOURCE_PRF)
				return 0;
		}
		return inbound_proof(t, &p, frame, len, rif);
	default:
		return 0;
	}
}

/* ---- jobs --------------------------------------------------------------------------------- */

static int process_announce_table(rnsc_transport *t, uint64_t now)
{
	rnsc_tmap *m = &t->announces;
	uint8_t(*done)[HL] = NULL, (*due)[HL] = NULL;
	size_t n_done = 0, n_due = 0;
	int rc = 0;
	if (m->n) {
		done = rnsc_alloc(t->ctx, m->n * HL);
		due = rnsc_alloc(t->ctx, m->n * HL);
		if (!done || !due) {
			rnsc_free(t->ctx, done);
			rnsc_free(t->ctx, due);
			return RNSC_ERR_NOMEM;
		}
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!rnsc_tmap_slot_used(m, i))
			continue;
		tr_announce *ae = rnsc_tmap_slot_val(m, i);
		const uint8_t *dest = rnsc_tmap_slot_key(m, i);
		if (ae->retries > 0 && ae->retries >= RNSC_LOCAL_REBROADCASTS_MAX) {
			memcpy(done[n_done++], dest, HL); /* local rebroadcast limit reached */
		} else if (ae->retries > RNSC_PATHFINDER_R) {
			memcpy(done[n_done++], dest, HL); /* retry limit reached */
		} else if (now > ae->rtrns_tmo) {
			ae->rtrns_tmo = now + RNSC_PATHFINDER_G_MS + RNSC_PATHFINDER_RW_MS;
			ae->retries++;
			if (!rnsc_tmap_has(&t->known, dest))
				memcpy(done[n_done++], dest, HL); /* identity forgotten meanwhile */
			else
				memcpy(due[n_due++], dest, HL);
		}
	}
	/* The pass's rebroadcasts go out lowest hop count first (the reference sends its
	 * outgoing list sorted by hops); insertion sort: a pass holds few. */
	for (size_t i = 1; i < n_due; i++) {
		for (size_t j = i; j > 0; j--) {
			const tr_announce *a = rnsc_tmap_get(m, due[j - 1], NULL);
			const tr_announce *b = rnsc_tmap_get(m, due[j], NULL);
			if (a->hops <= b->hops)
				break;
			uint8_t tmp[HL];
			memcpy(tmp, due[j], HL);
			memcpy(due[j], due[j - 1], HL);
			memcpy(due[j - 1], tmp, HL);
		}
	}
	for (size_t i = 0; i < n_due && rc == 0; i++) {
		tr_announce *ae = rnsc_tmap_get(m, due[i], NULL);
		if (!ae)
			continue; /* gone while an earlier one was sent */
		if ((rc = send_stored_announce(t, ae, now)) == 0)
			rc = rnsc_tr_reinsert_held(t, due[i]);
		/* A rebroadcast that cannot be sent (hops reached PATHFINDER_M, or the HEADER_2
		 * re-send of a full-size announce exceeds the MTU) is dropped as the reference's
		 * _outbound / Packet.pack drop it; it must not fail the whole tick (tables would
		 * go unculled while it waits out its retries). */
		if (rc == RNSC_ERR_HOPS || rc == RNSC_ERR_TOOBIG)
			rc = 0;
	}
	for (size_t i = 0; i < n_done; i++)
		rnsc_free(t->ctx, rnsc_tmap_del(m, done[i]));
	rnsc_free(t->ctx, done);
	rnsc_free(t->ctx, due);
	return rc;
}

static void cull_receipts(rnsc_transport *t, uint64_t now)
{
	while (t->n_receipts > RNSC_MAX_RECEIPTS) { /* Transport.MAX_RECEIPTS: oldest culled */
		uint8_t h[RNSC_HASHLEN];
		memcpy(h, t->receipts[0].hash, RNSC_HASHLEN);
		receipt_remove(t, 0);
		t->st.receipts_timed_out++;
		if (t->cb.on_receipt)
			t->cb.on_receipt(t->cb.ud, h, 0);
	}
	for (size_t i = 0; i < t->n_receipts;) {
		if (now > t->receipts[i].timeout) {
			uint8_t h[RNSC_HASHLEN];
			memcpy(h, t->receipts[i].hash, RNSC_HASHLEN);
			receipt_remove(t, i);
			t->st.receipts_timed_out++;
			if (t->cb.on_receipt)
				t->cb.on_receipt(t->cb.ud, h, 0);
		} else {
			i++;
		}
	}
}

/* Removes every entry of m for which stale(t, val, now) holds. */
static int cull_map(rnsc_transport *t, rnsc_tmap *m, uint64_t now,
		    int (*stale)(const rnsc_transport *, const void *, uint64_t))
{
	if (!m->n)
		return 0;
	uint8_t(*gone)[HL] = rnsc_alloc(t->ctx, m->n * HL);
	if (!gone)
		return RNSC_ERR_NOMEM;
	size_t n = 0;
	for (size_t i = 0; i < m->cap; i++)
		if (rnsc_tmap_slot_used(m, i) && stale(t, rnsc_tmap_slot_val(m, i), now))
			memcpy(gone[n++], rnsc_tmap_slot_key(m, i), HL);
	for (size_t i = 0; i < n; i++)
		rnsc_free(t->ctx, rnsc_tmap_del(m, gone[i]));
	rnsc_free(t->ctx, gone);
	return 0;
}

static int path_stale(const rnsc_transport *t, const void *v, uint64_t now)
{
	const tr_path *p = v;
	const tr_iface *f = rnsc_tr_iface_find(t, p->pub.iface);
	if (!f)
		return 1; /* attached interface no longer exists */
	/* Expiry from the entry's timestamp, by the receiving interface's mode. */
	uint64_t ttl = RNSC_DESTINATION_TIMEOUT_MS; /* Transport.DESTINATION_TIMEOUT */
	if (f->mode == RNSC_TRANSPORT_MODE_ACCESS_POINT)
		ttl = RNSC_AP_PATH_TIME_MS;
	else if (f->mode == RNSC_TRANSPORT_MODE_ROAMING)
		ttl = RNSC_ROAMING_PATH_TIME_MS;
	return now > p->pub.timestamp + ttl;
}

static int reverse_stale(const rnsc_transport *t, const void *v, uint64_t now)
{
	const tr_reverse *r = v;
	return now > r->timestamp + RNSC_REVERSE_TIMEOUT_MS || !rnsc_tr_iface_find(t, r->outb_if) ||
	       !rnsc_tr_iface_find(t, r->rcvd_if);
}

static int pr_stale(const rnsc_transport *t, const void *v, uint64_t now)
{
	(void)t;
	return now > *(const uint64_t *)v + RNSC_PATH_REQUEST_GATE_TIMEOUT_MS;
}

/* The reference's table pass (jobs(), every tables_cull_interval). */
static int tables_pass(rnsc_transport *t, uint64_t now)
{
	if (now <= t->tables_last_culled + RNSC_TABLES_CULL_INTERVAL_MS)
		return 0;
	/* The reference's order: path states of destinations without a path as the pass
	 * begins, the reverse and link tables (link failures may expire paths and mark
	 * them unresponsive), then the path table, and the stale states go last. */
	uint8_t(*stale_states)[HL] = NULL;
	size_t n_stale_states = 0;
	rnsc_tr_policy_cull(t);
	int rc = rnsc_tr_path_states_stale(t, &stale_states, &n_stale_states);
	if (rc == 0)
		rc = cull_map(t, &t->reverse, now, reverse_stale);
	if (rc == 0)
		rc = rnsc_tr_link_table_cull(t, now);
	if (rc == 0)
		rc = cull_map(t, &t->paths, now, path_stale);
	if (rc == 0)
		rc = cull_map(t, &t->path_requests, now, pr_stale);
	if (rc == 0)
		rc = rnsc_tr_tunnels_cull(t, now);
	if (rc == 0)
		rc = rnsc_tr_discovery_cull(t, now);
	rnsc_tr_path_states_drop(t, stale_states, n_stale_states);
	if (rc)
		return rc;
	t->tables_last_culled = now;
	return 0;
}

int rnsc_transport_tick(rnsc_transport *t, uint64_t now)
{
	if (!t)
		return RNSC_ERR_INVAL;
	int rc = rnsc_tr_prq_drain(t, now); /* the inbound worker's last queue */
	if (rc)
		return rc;
	if (now > t->receipts_last_checked + RNSC_RECEIPTS_CHECK_INTERVAL_MS) {
		cull_receipts(t, now);
		t->receipts_last_checked = now;
	}
	if (now > t->announces_last_checked + RNSC_ANNOUNCES_CHECK_INTERVAL_MS) {
		rc = process_announce_table(t, now);
		if (rc)
			return rc;
		t->announces_last_checked = now;
	}
	if (t->hashlist.n > t->cfg.hashlist_maxsize / 2) {
		/* packet_hashlist_prev = packet_hashlist; packet_hashlist = set() */
		rnsc_hset_rotate(&t->hashlist, &t->hashlist_prev);
		t->st.hashlist_rotations++;
	}
	if (t->pr_tags.n > RNSC_MAX_PR_TAGS) {
		rnsc_tmap_free(&t->pr_tags_prev, NULL);
		t->pr_tags_prev = t->pr_tags;
		rnsc_tmap_init(&t->pr_tags, t->ctx, RNSC_HASHLEN);
	}
	if ((rc = rnsc_tr_policy_tick(t, now)))
		return rc;
	rnsc_tr_blackhole_tick(t, now);
	if ((rc = tables_pass(t, now)))
		return rc;
	if ((rc = rnsc_tr_links_tick(t, now)))
		return rc;
	/* A link opened here that closed while pending expired its path: the reference notices
	 * closed pending links first in jobs(), so the same run's table pass culls that path. */
	if ((rc = tables_pass(t, now)))
		return rc;
	/* the sender thread of the reference's jobs() epilogue */
	return rnsc_tr_path_tick(t, now);
}

uint64_t rnsc_transport_next_deadline(const rnsc_transport *t)
{
	uint64_t d = UINT64_MAX;
	if (t->announces.n)
		d = t->announces_last_checked + RNSC_ANNOUNCES_CHECK_INTERVAL_MS + 1;
	if (t->n_receipts) {
		uint64_t r = t->receipts_last_checked + RNSC_RECEIPTS_CHECK_INTERVAL_MS + 1;
		d = r < d ? r : d;
	}
	if (t->paths.n || t->reverse.n || t->path_requests.n || t->tunnels.n || t->link_table.n ||
	    t->path_states.n || rnsc_tr_discovery_pending(t)) {
		uint64_t c = t->tables_last_culled + RNSC_TABLES_CULL_INTERVAL_MS + 1;
		d = c < d ? c : d;
	}
	/* A full hashlist generation is due for rotation now: the reference checks it on
	 * every 250 ms job run, and a busy relay would otherwise fill it for seconds. */
	if (t->hashlist.n > t->cfg.hashlist_maxsize / 2)
		d = 0;
	if (t->prq_n) /* queued path requests wait for the next tick only */
		d = 0;
	uint64_t l = rnsc_tr_links_deadline(t);
	d = l < d ? l : d;
	l = rnsc_tr_path_deadline(t);
	d = l < d ? l : d;
	l = rnsc_tr_policy_deadline(t);
	d = l < d ? l : d;
	l = rnsc_tr_blackhole_deadline(t);
	return l < d ? l : d;
}

/* ---- outbox and queries ------------------------------------------------------------------- */

int rnsc_transport_outbox_pop(rnsc_transport *t, uint32_t *iface, uint8_t *buf, size_t cap)
{
	if (!t || !iface || !buf)
		return RNSC_ERR_INVAL;
	tr_frame *f = t->out_head;
	if (!f)
		return 0;
	if (f->len > cap)
		return RNSC_ERR_BUFSIZE;
	*iface = f->iface;
	memcpy(buf, f->data, f->len);
	int n = (int)f->len;
	t->out_head = f->next;
	if (!t->out_head)
		t->out_tail = NULL;
	t->n_out--;
	rnsc_free(t->ctx, f);
	return n;
}

const uint8_t *rnsc_transport_outbox_take(rnsc_transport *t, uint32_t *iface, size_t *len)
{
	if (!t || !iface || !len || !t->out_head)
		return NULL;
	tr_frame *f = t->out_head;
	t->out_head = f->next;
	if (!t->out_head)
		t->out_tail = NULL;
	t->n_out--;
	*iface = f->iface;
	*len = f->len;
	return f->data;
}

void rnsc_transport_outbox_release(rnsc_transport *t, const uint8_t *frame)
{
	if (!t || !frame)
		return;
	rnsc_free(t->ctx, (void *)(uintptr_t)(frame - offsetof(tr_frame, data)));
}

size_t rnsc_transport_outbox_count(const rnsc_transport *t)
{
	return t->n_out;
}

int rnsc_transport_has_path(const rnsc_transport *t, const uint8_t dest_hash[HL])
{
	return rnsc_tmap_has(&t->paths, dest_hash);
}

int rnsc_transport_path_get(const rnsc_transport *t, const uint8_t dest_hash[HL],
			    rnsc_transport_path *out)
{
	const tr_path *p = rnsc_tmap_get(&t->paths, dest_hash, NULL);
	if (!p)
		return RNSC_ERR_NOTFOUND;
	if (out)
		*out = p->pub;
	return 0;
}

size_t rnsc_transport_path_count(const rnsc_transport *t)
{
	return t->paths.n;
}

int rnsc_transport_expire_path(rnsc_transport *t, const uint8_t dest_hash[HL])
{
	tr_path *p = rnsc_tmap_get(&t->paths, dest_hash, NULL);
	if (!p)
		return RNSC_ERR_NOTFOUND;
	p->pub.timestamp = 0;
	t->tables_last_culled = 0; /* the reference culls at its next jobs() run */
	return 0;
}

int rnsc_transport_recall(const rnsc_transport *t, const uint8_t dest_hash[HL], rnsc_identity *id,
			  const uint8_t **app_data, size_t *app_data_len)
{
	const tr_known *k = rnsc_tmap_get(&t->known, dest_hash, NULL);
	if (!k)
		return RNSC_ERR_NOTFOUND;
	if (app_data)
		*app_data = k->app_data;
	if (app_data_len)
		*app_data_len = k->app_len;
	return id ? rnsc_identity_from_public(t->ctx, id, k->pub, RNSC_KEYSIZE) : 0;
}

size_t rnsc_transport_hashlist_count(const rnsc_transport *t)
{
	return t->hashlist.n + t->hashlist_prev.n;
}

/* ---- export / import for the runtime's persistence ---------------------------------------- */

int rnsc_transport_path_next(const rnsc_transport *t, size_t *cursor, uint8_t dest_hash[HL],
			     rnsc_transport_path *out)
{
	if (!t || !cursor)
		return 0;
	for (size_t i = *cursor; i < t->paths.cap; i++) {
		if (!rnsc_tmap_slot_used(&t->paths, i))
			continue;
		const tr_path *p = rnsc_tmap_slot_val(&t->paths, i);
		if (dest_hash)
			memcpy(dest_hash, rnsc_tmap_slot_key(&t->paths, i), HL);
		if (out)
			*out = p->pub;
		*cursor = i + 1;
		return 1;
	}
	*cursor = t->paths.cap;
	return 0;
}

int rnsc_transport_known_next(const rnsc_transport *t, size_t *cursor, rnsc_transport_known *out)
{
	if (!t || !cursor || !out)
		return 0;
	for (size_t i = *cursor; i < t->known.cap; i++) {
		if (!rnsc_tmap_slot_used(&t->known, i))
			continue;
		const tr_known *k = rnsc_tmap_slot_val(&t->known, i);
		memcpy(out->dest_hash, rnsc_tmap_slot_key(&t->known, i), HL);
		out->timestamp = k->timestamp;
		memcpy(out->packet_hash, k->packet_hash, RNSC_HASHLEN);
		memcpy(out->public_key, k->pub, RNSC_KEYSIZE);
		out->app_data = k->app_data;
		out->app_data_len = k->app_len;
		out->last_used = k->last_used;
		out->last_used_int = k->last_used_int;
		*cursor = i + 1;
		return 1;
	}
	*cursor = t->known.cap;
	return 0;
}

size_t rnsc_transport_known_count(const rnsc_transport *t)
{
	return t ? t->known.n : 0;
}

int rnsc_transport_known_import(rnsc_transport *t, const rnsc_transport_known *k)
{
	if (!t || !k || (k->app_data_len && !k->app_data))
		return RNSC_ERR_INVAL;
	if (rnsc_tmap_has(&t->known, k->dest_hash))
		return 0;
	tr_known *e = rnsc_calloc(t->ctx, 1, sizeof(*e));
	if (!e)
		return RNSC_ERR_NOMEM;
	/* An empty bytes value is kept distinct from None, as the reference does. */
	if (k->app_data) {
		e->app_data = rnsc_alloc(t->ctx, k->app_data_len ? k->app_data_len : 1);
		if (!e->app_data) {
			rnsc_free(t->ctx, e);
			return RNSC_ERR_NOMEM;
		}
		memcpy(e->app_data, k->app_data, k->app_data_len);
		e->app_len = k->app_data_len;
	}
	e->timestamp = k->timestamp;
	e->last_used = k->last_used;
	e->last_used_int = k->last_used_int;
	memcpy(e->packet_hash, k->packet_hash, RNSC_HASHLEN);
	memcpy(e->pub, k->public_key, RNSC_KEYSIZE);
	int rc = rnsc_tmap_put(&t->known, k->dest_hash, e, NULL);
	if (rc)
		free_known(t->ctx, e);
	return rc;
}

int rnsc_transport_path_detail(const rnsc_transport *t, const uint8_t dest_hash[HL],
			       uint8_t blobs[][RNSC_ANNOUNCE_RANDOM_LEN], size_t *n_blobs,
			       const uint8_t **raw, size_t *raw_len)
{
	const tr_path *p = t && dest_hash ? rnsc_tmap_get(&t->paths, dest_hash, NULL) : NULL;
	if (!p)
		return RNSC_ERR_NOTFOUND;
	if (blobs)
		memcpy(blobs, p->blobs, p->pub.n_random_blobs * RNSC_ANNOUNCE_RANDOM_LEN);
	if (n_blobs)
		*n_blobs = p->pub.n_random_blobs;
	if (raw)
		*raw = p->raw;
	if (raw_len)
		*raw_len = p->raw_len;
	return 0;
}

int rnsc_transport_path_import(rnsc_transport *t, const uint8_t dest_hash[HL],
			       const rnsc_transport_path *p,
			       const uint8_t blobs[][RNSC_ANNOUNCE_RANDOM_LEN], size_t n_blobs,
			       const uint8_t *raw, size_t raw_len)
{
	if (!t || !dest_hash || !p || !raw || (n_blobs && !blobs) ||
	    n_blobs > RNSC_MAX_RANDOM_BLOBS || p->hops >= RNSC_PATHFINDER_M)
		return RNSC_ERR_INVAL;
	if (raw_len > RNSC_MTU)
		return RNSC_ERR_TOOBIG;
	if (!rnsc_tr_iface_find(t, p->iface))
		return RNSC_ERR_NOTFOUND;
	rnsc_packet pk;
	int rc = rnsc_packet_unpack(&pk, raw, raw_len);
	if (rc)
		return rc;
	if (pk.packet_type != RNSC_PKT_ANNOUNCE || memcmp(pk.dest_hash, dest_hash, HL) != 0)
		return RNSC_ERR_MALFORMED;
	if (rnsc_tmap_has(&t->paths, dest_hash))
		return 0;
	tr_path *e = rnsc_calloc(t->ctx, 1, sizeof(*e));
	if (!e)
		return RNSC_ERR_NOMEM;
	e->pub = *p;
	e->pub.n_random_blobs = n_blobs;
	if (n_blobs)
		memcpy(e->blobs, blobs, n_blobs * RNSC_ANNOUNCE_RANDOM_LEN);
	memcpy(e->raw, raw, raw_len);
	e->raw_len = raw_len;
	if ((rc = rnsc_tmap_put(&t->paths, dest_hash, e, NULL)))
		rnsc_free(t->ctx, e);
	return rc;
}

int rnsc_transport_hashlist_next(const rnsc_transport *t, size_t *cursor,
				 uint8_t hash[RNSC_HASHLEN])
{
	if (!t || !cursor || !hash || t->hashlist.key_len != RNSC_HASHLEN)
		return 0;
	return rnsc_hset_next(&t->hashlist, cursor, hash);
}

int rnsc_transport_packet_filter(rnsc_transport *t, const uint8_t *raw, size_t len, int *accepted,
				 uint8_t hash[RNSC_HASHLEN])
{
	if (!t || !raw || !accepted)
		return RNSC_ERR_INVAL;
	rnsc_packet p;
	int rc = rnsc_packet_unpack(&p, raw, len);
	if (rc)
		return rc;
	uint8_t h[RNSC_HASHLEN];
	rc = rnsc_packet_hash(t->ctx, h, raw, len);
	if (rc)
		return rc;
	/* connected to a shared instance: the instance filters, everything passes here */
	*accepted = t->to_shared ? 1 : packet_filter(t, &p, h, 0);
	if (hash)
		memcpy(hash, h, RNSC_HASHLEN);
	return 0;
}

int rnsc_transport_hashlist_add(rnsc_transport *t, const uint8_t hash[RNSC_HASHLEN])
{
	if (!t || !hash)
		return RNSC_ERR_INVAL;
	return rnsc_tr_hashlist_add(t, hash);
}
