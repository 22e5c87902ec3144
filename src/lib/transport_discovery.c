/* SPDX-License-Identifier: MIT */
/*
 * Discovery (recursive) path requests, as Transport.py 1.5.4 does them.
 *
 * A transport node asked for a destination it does not know, on an interface whose mode
 * is in Interface.DISCOVER_PATHS_FOR (access point, gateway, roaming, internal; boundary
 * interfaces search only boundary and gateway interfaces; recursive_prs searches whatever
 * the mode), passes the request on on its other interfaces with the requestor's tag (so a
 * request that loops back is a duplicate) and its own transport id, and records the
 * requesting interface in discovery_path_requests. When an announce for the destination
 * then updates the path table, every waiting requesting interface gets a path response at
 * once: the announce, HEADER_2 from this node, context PATH_RESPONSE, its hop count as
 * received. Entries time out after max(PATH_REQUEST_TIMEOUT, medium_path_timeout()).
 *
 * Inbound batches requests: the first fresh-tagged request for a destination marks it in
 * flight (inflight_path_requests, cleared when answered, when the path arrives, or after
 * PATH_REQUEST_GATE_TIMEOUT); a later one with another tag while it is in flight is not
 * processed but adds its interface to the discovery entry (creating one that is not
 * "engaged", i.e. answered when the path arrives though nothing was sent for it).
 *
 * Recursive requests are not sent on an interface that is egress limited
 * (should_egress_limit_pr: egress_control on and the outgoing path request rate, counting
 * the one about to go, above ec_pr_freq), that has queued announces, or whose announce
 * cap has not yet allowed the next transmission; one that goes out advances the cap.
 *
 * Memory: each table is bounded by RNSC_DISCOVERY_MAX_ENTRIES (the reference's are not);
 * a search that would exceed it is refused and counted (pr_discovery_full).
 */
#include <string.h>

#include "transport_internal.h"

#define WHO "transport"

static void free_plain(rnsc_ctx *ctx, void *v)
{
	rnsc_free(ctx, v);
}

void rnsc_tr_discovery_init(rnsc_transport *t)
{
	rnsc_tmap_init(&t->discovery_prs, t->ctx, HL);
	rnsc_tmap_init(&t->inflight_prs, t->ctx, HL);
}

void rnsc_tr_discovery_free(rnsc_transport *t)
{
	rnsc_tmap_free(&t->discovery_prs, free_plain);
	rnsc_tmap_free(&t->inflight_prs, free_plain);
}

/* Transport.medium_path_timeout(), ms: an MTU round trip at the lowest known bitrate. */
static uint64_t medium_path_timeout_ms(const rnsc_transport *t)
{
	uint64_t low = 0;
	for (size_t i = 0; i < t->n_ifaces; i++)
		if (!t->ifaces[i].offline && t->ifaces[i].bitrate &&
		    (!low || t->ifaces[i].bitrate < low))
			low = t->ifaces[i].bitrate;
	if (!low)
		return 0;
	if (low < RNSC_MINIMUM_BITRATE)
		low = RNSC_MINIMUM_BITRATE;
	return 2 * ((uint64_t)RNSC_MTU * 8 * 1000 / low) + RNSC_PER_HOP_TIMEOUT_MS;
}

static uint64_t discovery_timeout_ms(const rnsc_transport *t)
{
	uint64_t m = medium_path_timeout_ms(t);
	return m > RNSC_PATH_REQUEST_TIMEOUT_MS ? m : RNSC_PATH_REQUEST_TIMEOUT_MS;
}

static int add_iface(tr_discovery *d, uint32_t id)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->ifaces[i] == id)
			return 0;
	if (d->n == RNSC_DISCOVERY_MAX_IFACES)
		return 0; /* bounded: the first ones keep their place */
	d->ifaces[d->n++] = id;
	return 0;
}

/* The entry for dest, created (not engaged, no interfaces) when absent. NULL when the table
 * is full (*rc 0) or out of memory (*rc RNSC_ERR_NOMEM). */
static tr_discovery *entry_get(rnsc_transport *t, const uint8_t dest[HL], int *rc)
{
	*rc = 0;
	tr_discovery *d = rnsc_tmap_get(&t->discovery_prs, dest, NULL);
	if (d)
		return d;
	if (t->discovery_prs.n >= RNSC_DISCOVERY_MAX_ENTRIES) {
		t->st.pr_discovery_full++;
		return NULL;
	}
	d = rnsc_calloc(t->ctx, 1, sizeof(*d));
	if (!d || (*rc = rnsc_tmap_put(&t->discovery_prs, dest, d, NULL))) {
		rnsc_free(t->ctx, d);
		*rc = RNSC_ERR_NOMEM;
		return NULL;
	}
	return d;
}

int rnsc_tr_pr_inflight(rnsc_transport *t, const uint8_t dest[HL], const tr_iface *rif,
			int ingress_limited, uint64_t now)
{
	if (!rnsc_tmap_has(&t->inflight_prs, dest)) {
		/* early registration batches the duplicates that follow */
		if (t->inflight_prs.n >= RNSC_DISCOVERY_MAX_ENTRIES)
			return 0; /* bounded: processed without batching */
		uint64_t *ts = rnsc_alloc(t->ctx, sizeof(*ts));
		if (!ts)
			return RNSC_ERR_NOMEM;
		*ts = now;
		int rc = rnsc_tmap_put(&t->inflight_prs, dest, ts, NULL);
		if (rc)
			rnsc_free(t->ctx, ts);
		return rc;
	}
	if (ingress_limited) {
		t->st.pr_ingress_limited++;
		return 1;
	}
	t->st.pr_batched++;
	int fresh = !rnsc_tmap_has(&t->discovery_prs, dest);
	int rc;
	tr_discovery *d = entry_get(t, dest, &rc);
	if (!d)
		return rc ? rc : 1;
	if (fresh)
		d->timeout = now + discovery_timeout_ms(t);
	add_iface(d, rif->id);
	rnsc_log(t->ctx, RNSC_LOG_DEBUG, WHO,
		 "path request on interface %u already in flight, batched", (unsigned)rif->id);
	return 1;
}

void rnsc_tr_pr_resolved(rnsc_transport *t, const uint8_t dest[HL])
{
	rnsc_free(t->ctx, rnsc_tmap_del(&t->inflight_prs, dest));
}

int rnsc_tr_should_egress_limit_pr(tr_iface *f, uint64_t now)
{
	if (!f->egress_control)
		return 0;
	/* outgoing_pr_frequency(preemptive=True): the request about to go counts */
	rnsc_freq *q = &f->op;
	if (q->n <= 1)
		return 0;
	unsigned n = q->n + 1;
	uint64_t oldest = q->ts[q->head];
	double span = ((double)now - (double)oldest) / 1000.0;
	if (span * 1000.0 > (double)RNSC_IC_FREQ_DECAY_MS) {
		q->head = (q->head + 1) % RNSC_IC_FREQ_SAMPLES;
		q->n--;
	}
	if (span <= 0)
		return 0;
	double thr = f->ec_pr_freq > 0 ? f->ec_pr_freq : RNSC_EC_PR_FREQ;
	/* the sample count is the deque's after the decay step, as the reference reads it */
	return (double)n / span > thr && q->n >= RNSC_EC_BURST_MIN_SAMPLES;
}

static int searches(const tr_iface *f, int *boundary)
{
	*boundary = 0;
	if (f->recursive_prs)
		return 1;
	switch (f->mode) {
	case RNSC_TRANSPORT_MODE_ACCESS_POINT:
	case RNSC_TRANSPORT_MODE_GATEWAY:
	case RNSC_TRANSPORT_MODE_ROAMING:
	case RNSC_TRANSPORT_MODE_INTERNAL:
		return 1;
	case RNSC_TRANSPORT_MODE_BOUNDARY:
		*boundary = 1; /* BOUNDARY_SEARCH_MODES */
		return 1;
	default:
		return 0;
	}
}

int rnsc_tr_discover(rnsc_transport *t, const uint8_t dest[HL], const uint8_t *tag, size_t tag_len,
		     const tr_iface *rif, int ingress_limited, uint64_t now)
{
	int boundary;
	if (!t->cfg.transport_enabled || !searches(rif, &boundary))
		return 0;
	tr_discovery *d = rnsc_tmap_get(&t->discovery_prs, dest, NULL);
	if (d && d->engaged) {
		rnsc_log(t->ctx, RNSC_LOG_DEBUG, WHO, "a discovery path request already waits");
		return 1;
	}
	if (ingress_limited) {
		t->st.pr_ingress_limited++;
		rnsc_log(t->ctx, RNSC_LOG_DEBUG, WHO,
			 "no recursive path request for interface %u: ingress limited",
			 (unsigned)rif->id);
		return 1;
	}
	int rc;
	if (!d && !(d = entry_get(t, dest, &rc)))
		return rc ? rc : 1;
	/* a new entry (the reference's dict), keeping the interfaces already waiting */
	d->timeout = now + discovery_timeout_ms(t);
	d->engaged = 1;
	add_iface(d, rif->id);
	t->st.pr_discovery++;
	rnsc_log(t->ctx, RNSC_LOG_DEBUG, WHO,
		 "discovering an unknown path on behalf of a request on interface %u",
		 (unsigned)rif->id);
	uint32_t ids[RNSC_DISCOVERY_MAX_IFACES];
	size_t n = 0;
	for (size_t i = 0; i < t->n_ifaces && n < RNSC_DISCOVERY_MAX_IFACES; i++) {
		const tr_iface *f = &t->ifaces[i];
		if (f->id == rif->id || f->offline)
			continue;
		if (boundary && f->mode != RNSC_TRANSPORT_MODE_BOUNDARY &&
		    f->mode != RNSC_TRANSPORT_MODE_GATEWAY)
			continue;
		ids[n++] = f->id;
	}
	/* ids, not pointers: sending may not change the interface list, but stay safe */
	for (size_t i = 0; i < n; i++) {
		tr_iface *f = (tr_iface *)rnsc_tr_iface_find(t, ids[i]);
		if (!f)
			continue;
		if (rnsc_tr_should_egress_limit_pr(f, now)) {
			t->st.pr_egress_limited++;
			continue;
		}
		rc = rnsc_tr_request_path(t, dest, &ids[i], tag, tag_len, 1, now);
		if (rc < 0 && rc != RNSC_ERR_HOPS && rc != RNSC_ERR_TOOBIG)
			return rc;
		if (rc == 0)
			t->st.pr_discovery_sent++;
	}
	return 1;
}

int rnsc_tr_discovery_answer(rnsc_transport *t, const rnsc_packet *p, uint64_t now)
{
	rnsc_tr_pr_resolved(t, p->dest_hash);
	tr_discovery *d = rnsc_tmap_del(&t->discovery_prs, p->dest_hash);
	if (!d)
		return 0;
	if (d->n) /* the reference recalls the identity to answer: a use */
		rnsc_transport_known_used(t, p->dest_hash, now);
	int rc = 0;
	for (size_t i = 0; i < d->n && rc == 0; i++) {
		if (!rnsc_tr_iface_find(t, d->ifaces[i]))
			continue; /* gone since it asked */
		rnsc_packet a = *p;
		a.header_type = RNSC_HEADER_2;
		a.transport_type = RNSC_TRANSPORT_TRANSPORT;
		memcpy(a.transport_id, t->ident.hash, HL);
		a.context = RNSC_CTX_PATH_RESPONSE;
		rnsc_log(t->ctx, RNSC_LOG_DEBUG, WHO,
			 "answering a waiting discovery path request on interface %u",
			 (unsigned)d->ifaces[i]);
		rc = rnsc_tr_outbound(t, &a, &d->ifaces[i], now, NULL);
		if (rc == 0)
			t->st.pr_discovery_answered++;
		else if (rc == RNSC_ERR_HOPS || rc == RNSC_ERR_TOOBIG)
			rc = 0;
	}
	rnsc_free(t->ctx, d);
	return rc;
}

int rnsc_transport_iface_set_online(rnsc_transport *t, uint32_t id, int online)
{
	if (!t)
		return RNSC_ERR_INVAL;
	tr_iface *f = (tr_iface *)rnsc_tr_iface_find(t, id);
	if (!f)
		return RNSC_ERR_NOTFOUND;
	f->offline = !online;
	return 0;
}

int rnsc_tr_discovery_waiting(const rnsc_transport *t, const uint8_t dest[HL])
{
	return rnsc_tmap_has(&t->discovery_prs, dest);
}

int rnsc_tr_discovery_pending(const rnsc_transport *t)
{
	return t->discovery_prs.n || t->inflight_prs.n;
}

int rnsc_tr_discovery_cull(rnsc_transport *t, uint64_t now)
{
	rnsc_tmap *maps[2] = {&t->discovery_prs, &t->inflight_prs};
	for (int k = 0; k < 2; k++) {
		rnsc_tmap *m = maps[k];
		if (!m->n)
			continue;
		uint8_t(*gone)[HL] = rnsc_alloc(t->ctx, m->n * HL);
		if (!gone)
			return RNSC_ERR_NOMEM;
		size_t n = 0;
		for (size_t i = 0; i < m->cap; i++) {
			if (!rnsc_tmap_slot_used(m, i))
				continue;
			const void *v = rnsc_tmap_slot_val(m, i);
			int stale = k == 0 ? now > ((const tr_discovery *)v)->timeout
					   : now > *(const uint64_t *)v +
							     RNSC_PATH_REQUEST_GATE_TIMEOUT_MS;
			if (stale)
				memcpy(gone[n++], rnsc_tmap_slot_key(m, i), HL);
		}
		for (size_t i = 0; i < n; i++)
			rnsc_free(t->ctx, rnsc_tmap_del(m, gone[i]));
		if (k == 0)
			t->st.pr_discovery_expired += n;
		rnsc_free(t->ctx, gone);
	}
	return 0;
}
