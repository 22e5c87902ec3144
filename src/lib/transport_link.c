/* SPDX-License-Identifier: MIT */
/*
 * Links in the transport engine (see transport.h, "links"): the links that terminate here
 * (Transport.pending_links / active_links) and the link table of relayed links
 * (Transport.link_table), following Transport.py of rns 1.5.4 (inbound(), outbound(),
 * jobs()).
 */
#include <string.h>

#include "destination.h"
#include "linkfmt.h"
#include "proof.h"
#include "transport_internal.h"

#define WHO "transport"

/* Transport.LINK_TIMEOUT = Link.STALE_TIME * 1.25 */
#define TR_LINK_TIMEOUT_MS (RNSC_LINK_STALE_TIME_MS * 5 / 4)

static void llink_free(rnsc_ctx *ctx, void *v)
{
	tr_llink *ll = v;
	rnsc_link_del(ll->link);
	rnsc_free(ctx, ll->rcpt);
	rnsc_free(ctx, ll);
}

/* ---- receipts of link packets ------------------------------------------------------------- */

/* Link packet receipts (PacketReceipt for a LINK destination). The reference times them out
 * after max(rtt * Link.TRAFFIC_TIMEOUT_FACTOR, 5 ms), which on a busy host fails receipts
 * whose proofs are merely late; here the floor is one hop's timeout (PER_HOP_TIMEOUT, 6 s),
 * so a timeout means the proof is really missing. Each receipt ends once: proved
 * (on_link_proof) or timed out (on_receipt(hash, 0), counted in receipts_timed_out), also
 * when the link closes first, so none outlives its link. A proof arriving after the
 * timeout is still passed to on_link_proof (channel proofs go that way too). */
#define TR_LINK_TRAFFIC_TIMEOUT_FACTOR 6
#define TR_LINK_TRAFFIC_TIMEOUT_MIN_MS RNSC_PER_HOP_TIMEOUT_MS
/* Transport.MAX_RECEIPTS: beyond it the oldest receipt is culled as timed out. A link
 * whose peer proves nothing thus holds at most 1024 receipts (about 48 KiB), and every
 * operation below is O(1) amortised or bounded by 1024. */
#define TR_LINK_MAX_RECEIPTS 1024

static struct tr_lrcpt *rcpt_at(const tr_llink *ll, size_t i)
{
	return &ll->rcpt[(ll->rcpt_head + i) & (ll->cap_rcpt - 1)];
}

/* Drops proved receipts (tombstones) from the head, so the head is live or the ring empty. */
static void rcpt_trim(tr_llink *ll)
{
	while (ll->n_rcpt && !rcpt_at(ll, 0)->live) {
		ll->rcpt_head = (ll->rcpt_head + 1) & (ll->cap_rcpt - 1);
		ll->n_rcpt--;
	}
}

/* Adds a receipt; when the ring is full, the oldest is culled into *culled (returns 1). */
static int rcpt_add(tr_llink *ll, const uint8_t hash[RNSC_HASHLEN], uint64_t now,
		    uint8_t culled[RNSC_HASHLEN])
{
	rnsc_transport *t = ll->t;
	int cull = 0;
	if (ll->n_rcpt == ll->cap_rcpt && ll->cap_rcpt < TR_LINK_MAX_RECEIPTS) {
		size_t ncap = ll->cap_rcpt ? ll->cap_rcpt * 2 : 8;
		struct tr_lrcpt *nr = rnsc_calloc(t->ctx, ncap, sizeof(*nr));
		if (!nr)
			return RNSC_ERR_NOMEM;
		for (size_t i = 0; i < ll->n_rcpt; i++)
			nr[i] = *rcpt_at(ll, i);
		rnsc_free(t->ctx, ll->rcpt);
		ll->rcpt = nr;
		ll->rcpt_head = 0;
		ll->cap_rcpt = ncap;
	}
	if (ll->n_rcpt == ll->cap_rcpt) { /* full at the maximum: the head is live */
		memcpy(culled, rcpt_at(ll, 0)->hash, RNSC_HASHLEN);
		rcpt_at(ll, 0)->live = 0;
		rcpt_trim(ll);
		cull = 1;
	}
	double rtt = rnsc_link_rtt(ll->link);
	uint64_t tmo = rtt > 0 ? (uint64_t)(rtt * 1000.0 * TR_LINK_TRAFFIC_TIMEOUT_FACTOR) : 0;
	if (tmo < TR_LINK_TRAFFIC_TIMEOUT_MIN_MS)
		tmo = TR_LINK_TRAFFIC_TIMEOUT_MIN_MS;
	uint64_t deadline = now + tmo;
	/* Kept non-decreasing so expiry only looks at the head: an RTT that shrank lets a
	 * receipt wait as long as the one before it, never less than its own timeout. */
	if (ll->n_rcpt && rcpt_at(ll, ll->n_rcpt - 1)->deadline > deadline)
		deadline = rcpt_at(ll, ll->n_rcpt - 1)->deadline;
	struct tr_lrcpt *r = rcpt_at(ll, ll->n_rcpt++);
	memcpy(r->hash, hash, RNSC_HASHLEN);
	r->deadline = deadline;
	r->live = 1;
	return cull;
}

/* A validated proof ends its receipt (if it is still pending). Proofs mostly come in
 * order, so the scan usually stops at the head. */
static void rcpt_prove(tr_llink *ll, const uint8_t hash[RNSC_HASHLEN])
{
	for (size_t i = 0; i < ll->n_rcpt; i++) {
		struct tr_lrcpt *r = rcpt_at(ll, i);
		if (r->live && memcmp(r->hash, hash, RNSC_HASHLEN) == 0) {
			r->live = 0;
			break;
		}
	}
	rcpt_trim(ll);
}

static uint64_t rcpt_deadline(const tr_llink *ll)
{
	return ll->n_rcpt ? rcpt_at(ll, 0)->deadline : UINT64_MAX;
}

static void rcpt_report(rnsc_transport *t, const uint8_t (*h)[RNSC_HASHLEN], size_t k)
{
	t->st.receipts_timed_out += k;
	for (size_t i = 0; i < k; i++)
		if (t->cb.on_receipt)
			t->cb.on_receipt(t->cb.ud, h[i], 0);
}

/* Ends the receipts due at now (all of them when all is set): taken off the link first,
 * then reported, as the callbacks may close or free the link. */
static int rcpt_expire(rnsc_transport *t, tr_llink *ll, uint64_t now, int all)
{
	size_t n = 0;
	while (n < ll->n_rcpt && (all || rcpt_at(ll, n)->deadline <= now))
		n++;
	if (!n)
		return 0;
	uint8_t(*h)[RNSC_HASHLEN] = rnsc_alloc(t->ctx, n * RNSC_HASHLEN);
	if (!h)
		return RNSC_ERR_NOMEM;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const struct tr_lrcpt *r = rcpt_at(ll, i);
		if (r->live)
			memcpy(h[k++], r->hash, RNSC_HASHLEN);
	}
	ll->rcpt_head = (ll->rcpt_head + n) & (ll->cap_rcpt - 1);
	ll->n_rcpt -= n;
	rcpt_trim(ll);
	rcpt_report(t, (const uint8_t(*)[RNSC_HASHLEN])h, k);
	rnsc_free(t->ctx, h);
	return 0;
}

void rnsc_tr_links_free(rnsc_transport *t)
{
	rnsc_tmap_free(&t->links, llink_free);
}

int rnsc_tr_link_table_has(const rnsc_transport *t, const uint8_t dest[HL])
{
	return rnsc_tmap_has(&t->link_table, dest);
}

/* Transport.extra_link_proof_timeout: one MTU's time on the interface, in ms. */
static uint64_t extra_proof_timeout(const tr_iface *f)
{
	return f && f->bitrate ? (uint64_t)RNSC_MTU * 8 * 1000 / f->bitrate : 0;
}

/* ---- links terminating here --------------------------------------------------------------- */

/* Sends what the link queued: on its interface once it has one; the initiator's
 * LINKREQUEST (no interface yet) is routed like any packet to the destination. */
static int drain(tr_llink *ll, uint64_t now)
{
	rnsc_transport *t = ll->t;
	uint8_t buf[RNSC_MTU + HL];
	size_t n;
	while ((n = rnsc_link_outbox_peek_len(ll->link)) > 0) {
		uint8_t *frame = buf;
		if (n > sizeof(buf)) {
			frame = rnsc_alloc(t->ctx, n);
			if (!frame)
				return RNSC_ERR_NOMEM;
		}
		int len = rnsc_link_outbox_pop(ll->link, frame, n);
		int rc = len < 0 ? len : 0;
		if (rc == 0 && ll->has_iface) {
			rc = rnsc_tr_transmit(t, ll->iface, frame, (size_t)len);
		} else if (rc == 0) {
			rnsc_packet p;
			rc = rnsc_packet_unpack(&p, frame, (size_t)len);
			if (rc == 0)
				rc = rnsc_tr_outbound(t, &p, NULL, now, NULL);
		}
		if (frame != buf)
			rnsc_free(t->ctx, frame);
		if (rc)
			return rc;
	}
	return 0;
}

/* After every call into a link: send its frames and forget it once closed. */
static int settle(rnsc_transport *t, const uint8_t id[HL], uint64_t now)
{
	tr_llink *ll = rnsc_tmap_get(&t->links, id, NULL);
	if (!ll)
		return 0;
	int rc = drain(ll, now);
	if (!ll->busy && rnsc_link_status(ll->link) == RNSC_LINK_CLOSED) {
		tr_llink *gone = rnsc_tmap_del(&t->links, id);
		/* A link we opened that never became active: the path is suspect. */
		if (rnsc_link_is_initiator(gone->link) && !gone->was_active)
			rnsc_tr_path_link_failed(t, gone->dest, now);
		/* off the map first: a receipt callback cannot reach the closed link */
		int erc = rcpt_expire(t, gone, now, 1);
		llink_free(t->ctx, gone);
		if (rc == 0)
			rc = erc;
	}
	return rc;
}

static void cb_established(void *ud, rnsc_link *link)
{
	tr_llink *ll = ud;
	ll->was_active = 1;
	if (ll->t->cb.on_link_established)
		ll->t->cb.on_link_established(ll->t->cb.ud, ll->id, ll->dest,
					      rnsc_link_is_initiator(link));
}

static void cb_closed(void *ud, rnsc_link *link)
{
	tr_llink *ll = ud;
	if (ll->t->cb.on_link_closed)
		ll->t->cb.on_link_closed(ll->t->cb.ud, ll->id, rnsc_link_reason(link));
}

/* The hash of the packet a link callback is about: the one ingest computed when the link
 * is handing up that very packet, else computed here. */
static int cb_hash(tr_llink *ll, uint8_t out[RNSC_HASHLEN], const uint8_t *raw, size_t raw_len)
{
	if (ll->rx_hash && raw == ll->rx_raw && raw_len == ll->rx_len) {
		memcpy(out, ll->rx_hash, RNSC_HASHLEN);
		return 0;
	}
	return rnsc_packet_hash(ll->t->ctx, out, raw, raw_len);
}

static void cb_packet(void *ud, rnsc_link *link, int context, const uint8_t *data, size_t len,
		      const rnsc_packet *pkt, const uint8_t *raw, size_t raw_len)
{
	tr_llink *ll = ud;
	rnsc_transport *t = ll->t;
	if (context != RNSC_CTX_NONE) {
		/* requests, resources, channel: for the application layer above the engine */
		uint8_t hash[RNSC_HASHLEN];
		if (t->cb.on_link_packet && cb_hash(ll, hash, raw, raw_len) == 0)
			t->cb.on_link_packet(t->cb.ud, ll->id, pkt->packet_type, context, data, len,
					     hash);
		return;
	}
	if (pkt->packet_type == RNSC_PKT_DATA) {
		uint8_t hash[RNSC_HASHLEN];
		if (cb_hash(ll, hash, raw, raw_len))
			return;
		if (t->cb.on_link_data)
			t->cb.on_link_data(t->cb.ud, ll->id, data, len, hash);
	} else if (pkt->packet_type == RNSC_PKT_PROOF && pkt->data_len == RNSC_PROOF_EXPLICIT_LEN) {
		/* Link packet proofs are explicit: the proved hash leads the proof. */
		uint8_t hash[RNSC_HASHLEN];
		memcpy(hash, pkt->data, RNSC_HASHLEN);
		if (rnsc_link_validate_proof(link, hash, pkt->data, pkt->data_len, ll->now) != 0)
			return;
		rcpt_prove(ll, hash);
		if (t->cb.on_link_proof)
			t->cb.on_link_proof(t->cb.ud, ll->id, hash);
	}
}

static void cb_identified(void *ud, rnsc_link *link, const rnsc_identity *who)
{
	(void)link;
	tr_llink *ll = ud;
	if (ll->t->cb.on_link_identified)
		ll->t->cb.on_link_identified(ll->t->cb.ud, ll->id, who);
}

static const rnsc_link_callbacks link_cbs = {
	.established = cb_established,
	.closed = cb_closed,
	.packet = cb_packet,
	.identified = cb_identified,
};

static int adopt(rnsc_transport *t, rnsc_link *link, const uint8_t dest[HL], int has_iface,
		 uint32_t iface, unsigned expected_hops)
{
	const uint8_t *id = rnsc_link_id(link);
	if (rnsc_tmap_has(&t->links, id)) {
		rnsc_link_del(link);
		return RNSC_ERR_STATE;
	}
	tr_llink *ll = rnsc_calloc(t->ctx, 1, sizeof(*ll));
	if (!ll) {
		rnsc_link_del(link);
		return RNSC_ERR_NOMEM;
	}
	ll->t = t;
	ll->link = link;
	memcpy(ll->id, id, HL);
	memcpy(ll->dest, dest, HL);
	ll->has_iface = has_iface;
	ll->iface = iface;
	ll->expected_hops = expected_hops;
	int rc = rnsc_tmap_put(&t->links, ll->id, ll, NULL);
	if (rc) {
		llink_free(t->ctx, ll);
		return rc;
	}
	rnsc_link_set_callbacks(link, &link_cbs, ll);
	return 0;
}

int rnsc_tr_link_request(rnsc_transport *t, const rnsc_packet *p, const uint8_t *raw, size_t len,
			 const tr_iface *rif, uint64_t now)
{
	if (p->header_type == RNSC_HEADER_2 && memcmp(p->transport_id, t->ident.hash, HL) != 0)
		return 0;
	tr_local *l = rnsc_tmap_get(&t->locals, p->dest_hash, NULL);
	if (!l || l->type != p->dest_type)
		return 0;
	if (l->type != RNSC_DEST_SINGLE || !l->accept_links) {
		t->st.links_refused++;
		return 0;
	}
	/* The receiving interface's MTU when it autoconfigures or fixes it, else Reticulum.MTU;
	 * rnsc_link_accept clamps a larger signalled MTU to it. */
	uint32_t nh_mtu = rif->mtu_capable ? (uint32_t)rif->hw_mtu : RNSC_MTU;
	uint8_t copy[RNSC_MTU + HL];
	if (len > sizeof(copy))
		return 0;
	memcpy(copy, raw, len);
	copy[1] = p->hops; /* the link's timeouts count the hops taken, as the reference's */
	rnsc_link *link;
	int rc = rnsc_link_accept(t->ctx, &link, &l->id, copy, len, nh_mtu, now);
	if (rc == RNSC_ERR_NOMEM)
		return rc;
	if (rc) {
		t->st.links_refused++;
		rnsc_log(t->ctx, RNSC_LOG_DEBUG, WHO, "link request refused: %s",
			 rnsc_strerror(rc));
		return 0;
	}
	rnsc_link_set_proof_strategy(link, l->prove_all ? RNSC_PROVE_ALL : RNSC_PROVE_NONE);
	uint8_t id[HL];
	memcpy(id, rnsc_link_id(link), HL);
	rc = adopt(t, link, l->hash, 1, rif->id, p->hops);
	if (rc == RNSC_ERR_STATE)
		return 0; /* a repeated request for a link we hold */
	if (rc)
		return rc;
	t->st.links_accepted++;
	return settle(t, id, now);
}

int rnsc_tr_link_packet(rnsc_transport *t, const rnsc_packet *p, const uint8_t *raw, size_t len,
			const uint8_t hash[RNSC_HASHLEN], const tr_iface *rif, uint64_t now)
{
	tr_llink *ll = rnsc_tmap_get(&t->links, p->dest_hash, NULL);
	if (!ll)
		return 0;
	if (!ll->has_iface || ll->iface != rif->id) {
		/* Link traffic is bound to the link's interface; the hash is forgotten so the
		 * packet can still arrive over the right one. */
		(void)rnsc_hset_del(&t->hashlist, hash);
		(void)rnsc_hset_del(&t->hashlist_prev, hash);
		return 0;
	}
	uint8_t copy[RNSC_MTU + HL];
	uint8_t *buf = len > sizeof(copy) ? rnsc_alloc(t->ctx, len) : copy;
	if (!buf)
		return RNSC_ERR_NOMEM;
	memcpy(buf, raw, len);
	buf[1] = p->hops; /* hops lie outside the hashed part: the hash still holds */
	ll->now = now;
	ll->busy = 1;
	ll->rx_raw = buf, ll->rx_len = len, ll->rx_hash = hash;
	int rc = rnsc_link_receive(ll->link, buf, len, now);
	ll->rx_raw = NULL, ll->rx_len = 0, ll->rx_hash = NULL;
	ll->busy = 0;
	if (buf != copy)
		rnsc_free(t->ctx, buf);
	if (rc && rc != RNSC_ERR_NOMEM)
		rnsc_log(t->ctx, RNSC_LOG_DEBUG, WHO, "link packet dropped: %s", rnsc_strerror(rc));
	uint8_t id[HL];
	memcpy(id, p->dest_hash, HL);
	int src = settle(t, id, now);
	if (rc == RNSC_ERR_NOMEM)
		return rc;
	return src ? src : 1;
}

/* LRPROOF for a relayed link: checked against the destination's recalled identity before
 * it goes back towards the initiator. */
static int relay_proof(rnsc_transport *t, tr_lte *e, const rnsc_packet *p, const uint8_t *raw,
		       size_t len, const tr_iface *rif, uint64_t now)
{
	if (p->hops != e->rem_hops || rif->id != e->nh_if)
		return 0; /* hop mismatch or wrong interface: not transported */
	if (p->data_len != RNSC_LINK_PROOF_LEN &&
	    p->data_len != RNSC_LINK_PROOF_LEN + RNSC_LINK_MTU_SIZE)
		return 0;
	const tr_known *k = rnsc_tmap_get(&t->known, e->dest, NULL);
	if (!k)
		return 0;
	rnsc_identity id;
	if (rnsc_identity_from_public(t->ctx, &id, k->pub, RNSC_KEYSIZE))
		return 0;
	int mode = RNSC_LINK_MODE_DEFAULT;
	if (p->data_len == RNSC_LINK_PROOF_LEN + RNSC_LINK_MTU_SIZE) {
		uint32_t mtu;
		rnsc_link_signalling_decode(p->data + RNSC_LINK_PROOF_LEN, &mtu, &mode);
	}
	rnsc_link_proof lp;
	int rc = rnsc_link_proof_validate(t->ctx, &lp, p->data, p->data_len, p->dest_hash,
					  id.ed_pub, mode);
	rnsc_identity_free(&id);
	if (rc) {
		rnsc_log(t->ctx, RNSC_LOG_DEBUG, WHO, "invalid link request proof in transport: %s",
			 rnsc_strerror(rc));
		return 0;
	}
	if (len > RNSC_MTU + HL)
		return 0;
	e->validated = 1;
	rnsc_transport_known_used(t, e->dest, now);
	t->st.link_table_forwarded++;
	return rnsc_tr_transmit_hops(t, e->rcvd_if, raw, len, p->hops);
}

int rnsc_tr_link_proof(rnsc_transport *t, const rnsc_packet *p, const uint8_t *raw, size_t len,
		       const uint8_t hash[RNSC_HASHLEN], const tr_iface *rif, uint64_t now)
{
	if (rnsc_tr_relaying(t)) {
		tr_lte *e = rnsc_tmap_get(&t->link_table, p->dest_hash, NULL);
		if (e)
			return relay_proof(t, e, p, raw, len, rif, now);
	}
	tr_llink *ll = rnsc_tmap_get(&t->links, p->dest_hash, NULL);
	if (!ll || !rnsc_link_is_initiator(ll->link) ||
	    rnsc_link_status(ll->link) != RNSC_LINK_PENDING)
		return 0;
	if (p->hops != ll->expected_hops)
		return 0; /* re-balancing is not implemented: the proof is not ours to take */
	int rc = rnsc_tr_hashlist_add(t, hash);
	if (rc)
		return rc;
	/* Link.attached_interface is the interface the proof came in on. */
	ll->has_iface = 1;
	ll->iface = rif->id;
	uint8_t copy[RNSC_MTU + HL];
	if (len > sizeof(copy))
		return 0;
	memcpy(copy, raw, len);
	copy[1] = p->hops;
	ll->now = now;
	ll->busy = 1;
	rc = rnsc_link_receive(ll->link, copy, len, now);
	ll->busy = 0;
	if (rc == RNSC_ERR_NOMEM)
		return rc;
	if (rnsc_link_status(ll->link) == RNSC_LINK_PENDING)
		ll->has_iface = 0; /* ignored proof (wrong length): still routed by path */
	uint8_t id[HL];
	memcpy(id, p->dest_hash, HL);
	return settle(t, id, now);
}

/* ---- the link table (transport nodes) ----------------------------------------------------- */

int rnsc_tr_lr_forward(rnsc_transport *t, const uint8_t *raw, size_t len, uint8_t *nr, size_t *nlen,
		       const tr_iface *rif, const tr_iface *oif, const uint8_t next_hop[HL],
		       unsigned remaining_hops, unsigned taken_hops, const uint8_t dest[HL],
		       uint64_t now)
{
	rnsc_packet q;
	int rc = rnsc_packet_unpack(&q, raw, len);
	if (rc)
		return rc;
	if (q.data_len == RNSC_LINK_REQUEST_LEN + RNSC_LINK_MTU_SIZE) {
		uint32_t path_mtu;
		int mode;
		rnsc_link_signalling_decode(nr + *nlen - RNSC_LINK_MTU_SIZE, &path_mtu, &mode);
		if (path_mtu) {
			if (!oif->mtu_capable) {
				/* the next hop cannot carry a larger MTU: signalling removed */
				*nlen -= RNSC_LINK_MTU_SIZE;
				rnsc_log(t->ctx, RNSC_LOG_DEBUG, WHO,
					 "link request: no MTU autoconfiguration on the next hop, "
					 "MTU signalling removed");
			} else if (oif->hw_mtu < path_mtu || rif->hw_mtu < path_mtu) {
				uint32_t m = (uint32_t)(oif->hw_mtu < rif->hw_mtu ? oif->hw_mtu
										  : rif->hw_mtu);
				rc = rnsc_link_signalling(nr + *nlen - RNSC_LINK_MTU_SIZE, m, mode);
				if (rc)
					return rc;
				rnsc_log(t->ctx, RNSC_LOG_DEBUG, WHO,
					 "link request: link MTU clamped from %u to %u",
					 (unsigned)path_mtu, (unsigned)m);
			}
		}
	}
	uint8_t link_id[HL];
	rc = rnsc_link_id_from_request(t->ctx, link_id, raw, len);
	if (rc)
		return rc;
	tr_lte *e = rnsc_calloc(t->ctx, 1, sizeof(*e));
	if (!e)
		return RNSC_ERR_NOMEM;
	e->timestamp = now;
	memcpy(e->nh_trid, next_hop, HL);
	e->nh_if = oif->id;
	e->rem_hops = remaining_hops;
	e->rcvd_if = rif->id;
	e->hops = taken_hops;
	memcpy(e->dest, dest, HL);
	e->seq = ++t->lte_seq;
	e->proof_tmo =
		now + extra_proof_timeout(oif) +
		(uint64_t)RNSC_LINK_PER_HOP_TIMEOUT_MS * (remaining_hops > 1 ? remaining_hops : 1);
	void *old = NULL;
	rc = rnsc_tmap_put(&t->link_table, link_id, e, &old);
	if (rc) {
		rnsc_free(t->ctx, e);
		return rc;
	}
	rnsc_free(t->ctx, old);
	t->st.links_relayed++;
	return 0;
}

int rnsc_tr_link_transport(rnsc_transport *t, const rnsc_packet *p, const uint8_t *raw, size_t len,
			   const uint8_t hash[RNSC_HASHLEN], const tr_iface *rif, uint64_t now)
{
	tr_lte *e = rnsc_tmap_get(&t->link_table, p->dest_hash, NULL);
	if (!e)
		return 0;
	if (!e->validated)
		return 1; /* link packet before validation: a protocol violation, dropped */
	int have_out = 0;
	uint32_t out = 0;
	if (e->nh_if == e->rcvd_if) {
		/* same interface both ways: repeat it when the hop count is one we expect */
		if (p->hops == e->rem_hops || p->hops == e->hops) {
			out = e->nh_if;
			have_out = 1;
		}
	} else if (rif->id == e->nh_if) {
		if (p->hops == e->rem_hops) {
			out = e->rcvd_if;
			have_out = 1;
		}
	} else if (rif->id == e->rcvd_if) {
		if (p->hops == e->hops) {
			out = e->nh_if;
			have_out = 1;
		}
	}
	if (!have_out)
		return 1;
	int rc = rnsc_tr_hashlist_add(t, hash);
	if (rc)
		return rc;
	if ((rc = rnsc_tr_transmit_hops(t, out, raw, len, p->hops)))
		return rc;
	e->timestamp = now;
	t->st.link_table_forwarded++;
	return 1;
}

/* ---- timers ------------------------------------------------------------------------------- */

static int lte_stale(const rnsc_transport *t, const tr_lte *e, uint64_t now)
{
	if (!e->validated)
		return now > e->proof_tmo;
	return now > e->timestamp + TR_LINK_TIMEOUT_MS || !rnsc_tr_iface_find(t, e->nh_if) ||
	       !rnsc_tr_iface_find(t, e->rcvd_if);
}

/* Collects the keys of m whose entry pred() selects (at most m->n). */
static size_t collect(rnsc_transport *t, rnsc_tmap *m, uint8_t (*ids)[HL], uint64_t now,
		      int (*pred)(rnsc_transport *, void *, uint64_t))
{
	size_t n = 0;
	for (size_t i = 0; i < m->cap; i++)
		if (rnsc_tmap_slot_used(m, i) && pred(t, rnsc_tmap_slot_val(m, i), now))
			memcpy(ids[n++], rnsc_tmap_slot_key(m, i), HL);
	return n;
}

static int link_due(rnsc_transport *t, void *v, uint64_t now)
{
	(void)t;
	const tr_llink *ll = v;
	return rnsc_link_next_deadline(ll->link) <= now || rcpt_deadline(ll) <= now ||
	       rnsc_link_status(ll->link) == RNSC_LINK_CLOSED;
}

static int lte_due(rnsc_transport *t, void *v, uint64_t now)
{
	return lte_stale(t, v, now);
}

int rnsc_tr_links_tick(rnsc_transport *t, uint64_t now)
{
	int rc = 0;
	if (t->links.n) {
		uint8_t(*ids)[HL] = rnsc_alloc(t->ctx, t->links.n * HL);
		if (!ids)
			return RNSC_ERR_NOMEM;
		size_t n = collect(t, &t->links, ids, now, link_due);
		for (size_t i = 0; i < n && rc == 0; i++) {
			/* callbacks may open or close links: look each one up again */
			tr_llink *ll = rnsc_tmap_get(&t->links, ids[i], NULL);
			if (!ll)
				continue;
			ll->now = now;
			ll->busy = 1;
			rc = rnsc_link_tick(ll->link, now);
			ll->busy = 0;
			if (rc == 0 && rnsc_link_status(ll->link) != RNSC_LINK_CLOSED)
				rc = rcpt_expire(t, ll, now, 0);
			int src = settle(t, ids[i], now);
			if (rc == 0)
				rc = src;
		}
		rnsc_free(t->ctx, ids);
		if (rc)
			return rc;
	}
	return 0;
}

/* The link table part of the reference's table pass: stale entries go, and an entry whose
 * link request was never proved starts the path's rediscovery (transport_path.c). */
int rnsc_tr_link_table_cull(rnsc_transport *t, uint64_t now)
{
	if (!t->link_table.n)
		return 0;
	uint8_t(*ids)[HL] = rnsc_alloc(t->ctx, t->link_table.n * HL);
	if (!ids)
		return RNSC_ERR_NOMEM;
	size_t n = collect(t, &t->link_table, ids, now, lte_due);
	/* In insertion order, as the reference walks its dict: which failed entry queues a
	 * destination's path request first decides the interface it leaves out. */
	for (size_t i = 1; i < n; i++) {
		uint8_t k[HL];
		memcpy(k, ids[i], HL);
		uint64_t ks = ((tr_lte *)rnsc_tmap_get(&t->link_table, k, NULL))->seq;
		size_t j = i;
		for (;
		     j > 0 && ((tr_lte *)rnsc_tmap_get(&t->link_table, ids[j - 1], NULL))->seq > ks;
		     j--)
			memcpy(ids[j], ids[j - 1], HL);
		memcpy(ids[j], k, HL);
	}
	int rc = 0;
	tr_blocked blocked = {0};
	for (size_t i = 0; i < n; i++) {
		tr_lte *e = rnsc_tmap_del(&t->link_table, ids[i]);
		if (e && !e->validated && rc == 0)
			rc = rnsc_tr_path_lte_failed(t, e->dest, e->rcvd_if, e->hops, &blocked,
						     now);
		rnsc_free(t->ctx, e);
	}
	rnsc_free(t->ctx, ids);
	return rc;
}

uint64_t rnsc_tr_links_deadline(const rnsc_transport *t)
{
	uint64_t d = UINT64_MAX;
	const rnsc_tmap *m = &t->links;
	for (size_t i = 0; i < m->cap; i++) {
		if (!rnsc_tmap_slot_used(m, i))
			continue;
		const tr_llink *ll = rnsc_tmap_slot_val(m, i);
		uint64_t x = rnsc_link_next_deadline(ll->link);
		d = x < d ? x : d;
		x = rcpt_deadline(ll);
		d = x < d ? x : d;
	}
	return d; /* the link table is culled in transport.c's table pass */
}

/* ---- the application's API ---------------------------------------------------------------- */

int rnsc_transport_iface_set_mtu_capable(rnsc_transport *t, uint32_t id, int on)
{
	if (!t)
		return RNSC_ERR_INVAL;
	tr_iface *f = (tr_iface *)rnsc_tr_iface_find(t, id);
	if (!f)
		return RNSC_ERR_NOTFOUND;
	f->mtu_capable = !!on;
	return 0;
}

int rnsc_transport_dest_accept_links(rnsc_transport *t, const uint8_t dest_hash[HL], int on)
{
	if (!t || !dest_hash)
		return RNSC_ERR_INVAL;
	tr_local *l = rnsc_tmap_get(&t->locals, dest_hash, NULL);
	if (!l)
		return RNSC_ERR_NOTFOUND;
	l->accept_links = !!on;
	return 0;
}

int rnsc_transport_link_open(rnsc_transport *t, const uint8_t dest_hash[HL], uint8_t link_id[HL],
			     uint64_t now)
{
	if (!t || !dest_hash)
		return RNSC_ERR_INVAL;
	const tr_known *k = rnsc_tmap_get(&t->known, dest_hash, NULL);
	const tr_path *path = rnsc_tmap_get(&t->paths, dest_hash, NULL);
	if (!k || !path)
		return RNSC_ERR_NOTFOUND;
	const tr_iface *f = rnsc_tr_iface_find(t, path->pub.iface);
	if (!f)
		return RNSC_ERR_NOTFOUND;
	rnsc_identity id;
	int rc = rnsc_identity_from_public(t->ctx, &id, k->pub, RNSC_KEYSIZE);
	if (rc)
		return rc;
	rnsc_link_initiate_params prm = {0};
	/* Link.__init__: the next hop's HW_MTU only with link MTU discovery on */
	prm.hw_mtu = f->mtu_capable && !t->cfg.link_mtu_discovery_off ? (uint32_t)f->hw_mtu : 0;
	prm.hops = path->pub.hops;
	/* Reticulum.get_first_hop_timeout: one MTU's time on the first hop + the per-hop timeout */
	prm.first_hop_timeout_ms = RNSC_PER_HOP_TIMEOUT_MS + extra_proof_timeout(f);
	prm.mode = RNSC_LINK_MODE_DEFAULT;
	rnsc_link *link;
	rc = rnsc_link_initiate(t->ctx, &link, dest_hash, &id, &prm, now);
	rnsc_identity_free(&id);
	if (rc)
		return rc;
	uint8_t lid[HL];
	memcpy(lid, rnsc_link_id(link), HL);
	rc = adopt(t, link, dest_hash, 0, 0, path->pub.hops);
	if (rc)
		return rc;
	rc = settle(t, lid, now);
	if (rc)
		return rc;
	if (link_id)
		memcpy(link_id, lid, HL);
	return 0;
}

int rnsc_transport_link_send(rnsc_transport *t, const uint8_t link_id[HL], const uint8_t *data,
			     size_t len, uint8_t packet_hash[RNSC_HASHLEN], uint64_t now)
{
	if (!t || !link_id || (!data && len))
		return RNSC_ERR_INVAL;
	uint8_t id[HL]; /* a copy: callbacks may free the caller's storage */
	memcpy(id, link_id, HL);
	tr_llink *ll = rnsc_tmap_get(&t->links, id, NULL);
	if (!ll)
		return RNSC_ERR_NOTFOUND;
	if (ll->busy)
		ll->now = now;
	uint8_t ph[RNSC_HASHLEN];
	int rc = rnsc_link_send(ll->link, RNSC_CTX_NONE, data, len, ph, now);
	if (rc < 0)
		return rc;
	if (packet_hash)
		memcpy(packet_hash, ph, RNSC_HASHLEN);
	uint8_t culled[RNSC_HASHLEN];
	rc = rcpt_add(ll, ph, now, culled);
	int src = settle(t, id, now);
	if (rc == 1) { /* reported last: the callback may close the link */
		rcpt_report(t, (const uint8_t(*)[RNSC_HASHLEN]) & culled, 1);
		rc = 0;
	}
	return rc ? rc : src;
}

int rnsc_transport_link_send_packet(rnsc_transport *t, const uint8_t link_id[HL], int packet_type,
				    int context, const uint8_t *data, size_t len,
				    uint8_t packet_hash[RNSC_HASHLEN], uint64_t now)
{
	if (!t || !link_id || (!data && len))
		return RNSC_ERR_INVAL;
	uint8_t id[HL]; /* a copy: callbacks may free the caller's storage */
	memcpy(id, link_id, HL);
	tr_llink *ll = rnsc_tmap_get(&t->links, id, NULL);
	if (!ll)
		return RNSC_ERR_NOTFOUND;
	if (ll->busy)
		ll->now = now;
	int rc = rnsc_link_send_packet(ll->link, packet_type, context, data, len, packet_hash, now);
	if (rc < 0)
		return rc;
	return settle(t, id, now);
}

int rnsc_transport_link_identify(rnsc_transport *t, const uint8_t link_id[HL],
				 const rnsc_identity *identity, uint64_t now)
{
	if (!t || !link_id || !identity)
		return RNSC_ERR_INVAL;
	uint8_t id[HL]; /* a copy: callbacks may free the caller's storage */
	memcpy(id, link_id, HL);
	tr_llink *ll = rnsc_tmap_get(&t->links, id, NULL);
	if (!ll)
		return RNSC_ERR_NOTFOUND;
	int rc = rnsc_link_identify(ll->link, identity, now);
	if (rc < 0)
		return rc;
	return settle(t, id, now);
}

int rnsc_transport_link_set_channel(rnsc_transport *t, const uint8_t link_id[HL], int on)
{
	if (!t || !link_id)
		return RNSC_ERR_INVAL;
	tr_llink *ll = rnsc_tmap_get(&t->links, link_id, NULL);
	if (!ll)
		return RNSC_ERR_NOTFOUND;
	rnsc_link_set_channel(ll->link, on);
	return 0;
}

int rnsc_transport_link_close(rnsc_transport *t, const uint8_t link_id[HL], uint64_t now)
{
	if (!t || !link_id)
		return RNSC_ERR_INVAL;
	/* link_id may live in state the closed callback frees (an application's per-link
	 * record): keep a copy before tearing down. */
	uint8_t id[HL];
	memcpy(id, link_id, HL);
	tr_llink *ll = rnsc_tmap_get(&t->links, id, NULL);
	if (!ll)
		return RNSC_ERR_NOTFOUND;
	int outer = ll->busy;
	ll->busy = 1;
	int rc = rnsc_link_teardown(ll->link, now);
	ll->busy = outer;
	int src = settle(t, id, now);
	return rc ? rc : src;
}

const rnsc_link *rnsc_transport_link_get(const rnsc_transport *t, const uint8_t link_id[HL])
{
	if (!t || !link_id)
		return NULL;
	const tr_llink *ll = rnsc_tmap_get(&t->links, link_id, NULL);
	return ll ? ll->link : NULL;
}

size_t rnsc_transport_link_count(const rnsc_transport *t)
{
	return t ? t->links.n : 0;
}

size_t rnsc_transport_link_table_count(const rnsc_transport *t)
{
	return t ? t->link_table.n : 0;
}

size_t rnsc_transport_link_table_active_count(const rnsc_transport *t)
{
	size_t n = 0;
	for (size_t i = 0; t && i < t->link_table.cap; i++) {
		const tr_lte *e = rnsc_tmap_slot_used(&t->link_table, i)
					  ? rnsc_tmap_slot_val(&t->link_table, i)
					  : NULL;
		n += e && e->validated;
	}
	return n;
}
