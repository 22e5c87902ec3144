/* SPDX-License-Identifier: MIT */
/*
 * Per-interface announce policy as Transport.py 1.5.4 consults it: ingress control of
 * announces and path requests (ingress.h) with held announces released by the interface
 * jobs every interface_jobs_interval, the announce cap and queue of _outbound
 * (announce_cap.h), the announce rate table (announce_rate.h), the per-interface announce
 * and path request counters of get_interface_stats, and Transport.held_announces (an
 * announce table entry parked while a path response for the same destination goes out).
 */
#include <string.h>

#include "destination.h"
#include "transport_internal.h"

#define WHO "transport"

static void free_plain(rnsc_ctx *ctx, void *v)
{
	rnsc_free(ctx, v);
}

void rnsc_transport_iface_policy_default(const rnsc_transport *t, rnsc_transport_iface_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->announce_cap = RNSC_ANNOUNCE_CAP_DEFAULT;
	if (t && t->cfg.transport_enabled) {
		p->has_rate_target = 1;
		p->rate_target_s = RNSC_DEFAULT_AR_TARGET;
		p->rate_grace = RNSC_DEFAULT_AR_GRACE;
		p->rate_penalty_s = RNSC_DEFAULT_AR_PENALTY;
	}
	rnsc_ingress_cfg_default(&p->ic);
	p->ec_pr_freq = RNSC_EC_PR_FREQ; /* egress control itself is off, as EGRESS_CONTROL */
}

static void apply(tr_iface *f, const rnsc_transport_iface_policy *p)
{
	f->acap.cap = p->announce_cap > 0 ? p->announce_cap : RNSC_ANNOUNCE_CAP_DEFAULT;
	f->has_rate = p->has_rate_target;
	f->rate_target_s = p->rate_target_s;
	f->rate_grace = p->rate_grace;
	f->rate_penalty_s = p->rate_penalty_s;
	rnsc_ingress_configure(&f->ig, &p->ic);
	f->egress_control = p->egress_control;
	f->ec_pr_freq = p->ec_pr_freq > 0 ? p->ec_pr_freq : RNSC_EC_PR_FREQ;
	f->recursive_prs = p->recursive_prs;
}

void rnsc_tr_policy_init(rnsc_transport *t, tr_iface *f)
{
	rnsc_transport_iface_policy p;
	rnsc_transport_iface_policy_default(t, &p);
	rnsc_ingress_init(&f->ig, t->ctx, &p.ic, 0);
	rnsc_acap_init(&f->acap, t->ctx, p.announce_cap);
	apply(f, &p);
}

void rnsc_tr_policy_free(rnsc_transport *t, tr_iface *f)
{
	(void)t;
	rnsc_ingress_free(&f->ig);
	rnsc_acap_free(&f->acap);
}

void rnsc_tr_policy_tables_init(rnsc_transport *t)
{
	rnsc_tmap_init(&t->rates, t->ctx, HL);
	rnsc_tmap_init(&t->held, t->ctx, HL);
}

void rnsc_tr_policy_tables_free(rnsc_transport *t)
{
	rnsc_tmap_free(&t->rates, free_plain);
	rnsc_tmap_free(&t->held, free_plain);
	for (size_t i = 0; i < t->n_ifaces; i++)
		rnsc_tr_policy_free(t, &t->ifaces[i]);
}

static tr_iface *find(rnsc_transport *t, uint32_t id)
{
	for (size_t i = 0; i < t->n_ifaces; i++)
		if (t->ifaces[i].id == id)
			return &t->ifaces[i];
	return NULL;
}

int rnsc_transport_iface_set_policy(rnsc_transport *t, uint32_t id,
				    const rnsc_transport_iface_policy *p, uint64_t created)
{
	if (!t || !p)
		return RNSC_ERR_INVAL;
	tr_iface *f = find(t, id);
	if (!f)
		return RNSC_ERR_NOTFOUND;
	apply(f, p);
	if (created) {
		f->ig.created = created;
		f->created_set = 1;
	}
	return 0;
}

static void touch(tr_iface *f, uint64_t now)
{
	if (!f->created_set) {
		f->ig.created = now;
		f->created_set = 1;
	}
}

int rnsc_transport_iface_astats_get(rnsc_transport *t, uint32_t id, uint64_t now,
				    rnsc_transport_iface_astats *out)
{
	if (!t || !out)
		return RNSC_ERR_INVAL;
	tr_iface *f = find(t, id);
	if (!f)
		return RNSC_ERR_NOTFOUND;
	memset(out, 0, sizeof(*out));
	out->arxc = f->arxc;
	out->arxb = f->arxb;
	out->atxc = f->atxc;
	out->atxb = f->atxb;
	out->prxc = f->prxc;
	out->prxb = f->prxb;
	out->ptxc = f->ptxc;
	out->ptxb = f->ptxb;
	/* peeked: a status query leaves the deques alone (the reference's getters drop a
	 * decayed sample; the interface jobs still do that here) */
	out->ia_freq = rnsc_freq_peek(&f->ig.ia, now, RNSC_IC_DEQUE_MIN_SAMPLE);
	out->oa_freq = rnsc_freq_peek(&f->oa, now, 1);
	out->ip_freq = rnsc_freq_peek(&f->ig.ip, now, RNSC_IC_DEQUE_MIN_SAMPLE);
	out->op_freq = rnsc_freq_peek(&f->op, now, 1);
	out->announce_queue = f->acap.n;
	out->held_announces = f->ig.n_held;
	out->has_rate_target = f->has_rate;
	out->rate_target_s = f->rate_target_s;
	out->rate_grace = f->rate_grace;
	out->rate_penalty_s = f->rate_penalty_s;
	out->burst_active = f->ig.burst_active;
	out->burst_activated = f->ig.burst_activated;
	out->pr_burst_active = f->ig.pr_burst_active;
	out->pr_burst_activated = f->ig.pr_burst_activated;
	out->held_dropped = f->ig.held_dropped;
	out->held_released = f->ig.released;
	out->queue_dropped = f->acap.dropped;
	return 0;
}

int rnsc_transport_rate_next(const rnsc_transport *t, size_t *cursor, uint8_t dest_hash[HL],
			     rnsc_arate *out)
{
	if (!t || !cursor)
		return 0;
	const rnsc_tmap *m = &t->rates;
	for (; *cursor < m->cap; (*cursor)++) {
		if (!rnsc_tmap_slot_used(m, *cursor))
			continue;
		if (dest_hash)
			memcpy(dest_hash, rnsc_tmap_slot_key(m, *cursor), HL);
		if (out)
			*out = *(const rnsc_arate *)rnsc_tmap_slot_val(m, *cursor);
		(*cursor)++;
		return 1;
	}
	return 0;
}

size_t rnsc_transport_drop_announce_queues(rnsc_transport *t)
{
	size_t n = 0;
	for (size_t i = 0; t && i < t->n_ifaces; i++)
		n += rnsc_acap_clear(&t->ifaces[i].acap);
	return n;
}

int rnsc_tr_announce_ingress(rnsc_transport *t, tr_iface *rif, const rnsc_packet *p,
			     const uint8_t *raw, size_t len, int vrc, uint64_t now)
{
	touch(rif, now);
	if (vrc)
		return 0; /* not counted; inbound_announce counts and drops it */
	rif->arxc++;      /* received_announce */
	rif->arxb += len;
	rnsc_ingress_announce_seen(&rif->ig, now);
	if (rnsc_tmap_has(&t->paths, p->dest_hash) ||
	    rnsc_tmap_has(&t->path_requests, p->dest_hash) ||
	    rnsc_tr_discovery_waiting(t, p->dest_hash))
		return 0; /* known or awaited destinations are left to the announce rate rules */
	/* LocalClientInterface.should_ingress_limit is always False in the reference: neither
	 * a shared instance's spawned client interfaces nor a client's own interface to the
	 * instance hold announces (path requests on them are still limited). */
	if (rif->local_role != RNSC_TRANSPORT_LOCAL_NONE)
		return 0;
	if (!rnsc_ingress_should_limit(&rif->ig, now))
		return 0;
	int rc = rnsc_ingress_hold(&rif->ig, p->dest_hash, p->hops, raw, len);
	if (rc < 0)
		return rc;
	if (rc)
		t->st.announces_held++;
	else
		t->st.announces_ingress_dropped++;
	rnsc_log(t->ctx, RNSC_LOG_DEBUG, WHO, "ingress limited announce on interface %u %s",
		 (unsigned)rif->id, rc ? "held" : "dropped");
	return 1;
}

int rnsc_tr_pr_ingress(rnsc_transport *t, tr_iface *rif, size_t len, uint64_t now)
{
	(void)t;
	touch(rif, now);
	rif->prxc++; /* received_path_request */
	rif->prxb += len;
	rnsc_ingress_pr_seen(&rif->ig, now);
	if (rnsc_ingress_should_limit_pr(&rif->ig, now))
		return 1;
	/* path_request() asks again when inbound did not limit */
	return rnsc_ingress_should_limit_pr(&rif->ig, now);
}

int rnsc_tr_announce_rate(rnsc_transport *t, const tr_iface *rif, const rnsc_packet *p,
			  uint64_t now, int *blocked)
{
	*blocked = 0;
	if (p->context == RNSC_CTX_PATH_RESPONSE || !rif->has_rate)
		return 0;
	rnsc_arate *e = rnsc_tmap_get(&t->rates, p->dest_hash, NULL);
	if (!e) {
		e = rnsc_alloc(t->ctx, sizeof(*e));
		if (!e)
			return RNSC_ERR_NOMEM;
		rnsc_arate_init(e, now);
		int rc = rnsc_tmap_put(&t->rates, p->dest_hash, e, NULL);
		if (rc)
			rnsc_free(t->ctx, e);
		return rc;
	}
	*blocked =
		rnsc_arate_check(e, now, rif->rate_target_s, rif->rate_grace, rif->rate_penalty_s);
	t->st.announces_rate_blocked += *blocked != 0;
	if (*blocked)
		rnsc_log(t->ctx, RNSC_LOG_DEBUG, WHO,
			 "blocking rebroadcast of an announce due to excessive announce rate");
	return 0;
}

int rnsc_tr_announce_cap(rnsc_transport *t, tr_iface *f, const rnsc_packet *p, const uint8_t *raw,
			 size_t len, uint64_t now)
{
	/* Only where the reference's mode chain reaches the cap: full, point-to-point and
	 * gateway interfaces, for announces not originating here. */
	if (p->hops == 0 ||
	    (f->mode != RNSC_TRANSPORT_MODE_FULL && f->mode != RNSC_TRANSPORT_MODE_POINT_TO_POINT &&
	     f->mode != RNSC_TRANSPORT_MODE_GATEWAY))
		return 0;
	uint64_t emitted = 0;
	if (p->data_len >= RNSC_KEYSIZE + RNSC_NAME_HASHLEN + RNSC_ANNOUNCE_RANDOM_LEN)
		emitted = rnsc_announce_timestamp(p->data + RNSC_KEYSIZE + RNSC_NAME_HASHLEN);
	uint64_t dropped = f->acap.dropped;
	int v = rnsc_acap_admit(&f->acap, now, f->bitrate, p->dest_hash, p->hops, emitted, raw,
				len);
	t->st.announces_queue_dropped += f->acap.dropped - dropped;
	if (v < 0)
		return v;
	return v != RNSC_ACAP_SEND;
}

void rnsc_tr_policy_sent(rnsc_transport *t, tr_iface *f, const rnsc_packet *p, size_t len,
			 uint64_t now)
{
	if (p->packet_type == RNSC_PKT_ANNOUNCE) {
		f->atxc++;
		f->atxb += len;
		rnsc_freq_add(&f->oa, now);
	} else if (p->packet_type == RNSC_PKT_DATA && p->dest_type == RNSC_DEST_PLAIN &&
		   memcmp(p->dest_hash, t->pr_dest, HL) == 0) {
		f->ptxc++;
		f->ptxb += len;
		rnsc_freq_add(&f->op, now);
	}
}

int rnsc_tr_hold_for_pr(rnsc_transport *t, const uint8_t dest[HL], tr_announce *prev)
{
	void *old = NULL;
	int rc = rnsc_tmap_put(&t->held, dest, prev, &old);
	rnsc_free(t->ctx, old);
	if (rc)
		rnsc_free(t->ctx, prev);
	return rc;
}

int rnsc_tr_reinsert_held(rnsc_transport *t, const uint8_t dest[HL])
{
	tr_announce *h = rnsc_tmap_del(&t->held, dest);
	if (!h)
		return 0;
	void *old = NULL;
	int rc = rnsc_tmap_put(&t->announces, dest, h, &old);
	rnsc_free(t->ctx, old);
	if (rc)
		rnsc_free(t->ctx, h);
	return rc;
}

int rnsc_tr_policy_tick(rnsc_transport *t, uint64_t now)
{
	uint8_t buf[RNSC_MTU];
	size_t len = 0;
	for (size_t i = 0; i < t->n_ifaces; i++) {
		tr_iface *f = &t->ifaces[i];
		touch(f, now);
		uint64_t dropped = f->acap.dropped;
		int rc = rnsc_acap_run(&f->acap, now, f->bitrate, buf, sizeof(buf), &len);
		t->st.announces_queue_dropped += f->acap.dropped - dropped;
		if (rc < 0)
			return rc;
		if (rc == 1) {
			if ((rc = rnsc_tr_transmit(t, f->id, buf, len)))
				return rc;
			rnsc_packet p = {0};
			p.packet_type = RNSC_PKT_ANNOUNCE;
			rnsc_tr_policy_sent(t, f, &p, len, now);
		}
	}
	if (!(now > t->iface_jobs_last + RNSC_IFACE_JOBS_INTERVAL_MS))
		return 0;
	t->iface_jobs_last = now;
	/* Ids, not pointers: re-processing a released announce may run callbacks. */
	for (size_t i = 0; i < t->n_ifaces; i++) {
		uint32_t id = t->ifaces[i].id;
		tr_iface *f = &t->ifaces[i];
		(void)rnsc_ingress_should_limit(&f->ig, now);
		(void)rnsc_ingress_should_limit_pr(&f->ig, now);
		int rc = rnsc_ingress_release(&f->ig, now, buf, sizeof(buf), &len);
		if (rc < 0)
			return rc;
		if (rc == 1) {
			rnsc_log(t->ctx, RNSC_LOG_DEBUG, WHO,
				 "releasing a held announce on interface %u", (unsigned)id);
			rc = rnsc_transport_ingest(t, id, buf, len, now);
			if (rc == RNSC_ERR_NOMEM)
				return rc;
		}
		if (i >= t->n_ifaces || t->ifaces[i].id != id)
			break; /* the interface list changed under a callback */
	}
	return 0;
}

uint64_t rnsc_tr_policy_deadline(const rnsc_transport *t)
{
	uint64_t d = UINT64_MAX;
	int jobs = 0;
	for (size_t i = 0; i < t->n_ifaces; i++) {
		const tr_iface *f = &t->ifaces[i];
		uint64_t a = rnsc_acap_deadline(&f->acap);
		d = a < d ? a : d;
		/* interface jobs matter while there is state they can change */
		if (f->ig.n_held || f->ig.burst_active || f->ig.pr_burst_active ||
		    f->ig.ia.n > RNSC_IC_DEQUE_MIN_SAMPLE || f->ig.ip.n > RNSC_IC_DEQUE_MIN_SAMPLE)
			jobs = 1;
	}
	if (jobs) {
		uint64_t j = t->iface_jobs_last + RNSC_IFACE_JOBS_INTERVAL_MS + 1;
		d = j < d ? j : d;
	}
	return d;
}

void rnsc_tr_policy_cull(rnsc_transport *t)
{
	uint8_t(*gone)[HL] = NULL;
	rnsc_tmap *maps[2] = {&t->rates, &t->held};
	for (int k = 0; k < 2; k++) {
		rnsc_tmap *m = maps[k];
		size_t n = 0;
		if (!m->n)
			continue;
		gone = rnsc_alloc(t->ctx, m->n * HL);
		if (!gone)
			return; /* culling waits for the next run */
		for (size_t i = 0; i < m->cap; i++) {
			if (!rnsc_tmap_slot_used(m, i))
				continue;
			const uint8_t *key = rnsc_tmap_slot_key(m, i);
			/* rate entries live as long as the path; held entries as long as the
			 * path response they wait for */
			if (k == 0 ? !rnsc_tmap_has(&t->paths, key)
				   : !rnsc_tmap_has(&t->announces, key))
				memcpy(gone[n++], key, HL);
		}
		for (size_t i = 0; i < n; i++)
			rnsc_free(t->ctx, rnsc_tmap_del(m, gone[i]));
		rnsc_free(t->ctx, gone);
	}
}

/* ---- the ingress-limited path request queue ---------------------------------------------- */
/* The reference puts every inbound packet in a queue by traffic class (InboundQueues) that
 * one worker drains in priority order: data, announces, path requests, and last the path
 * requests of an interface in a path request burst (TC_INGRESS_LIMITED, a queue of
 * INBOUND_IL_QUEUE_LENGTH = 8); a full queue drops the packet. rnsc processes the other
 * classes as they arrive (its worker is never behind them), and keeps the ingress-limited
 * path requests back until the next tick, which the runtime runs as soon as the frames
 * already received are processed: a burst larger than the queue in one go is dropped. */

int rnsc_tr_prq_put(rnsc_transport *t, const rnsc_pathreq *r, const tr_iface *rif)
{
	size_t cap = t->cfg.qlen_in_il;
	if (!t->prq) {
		t->prq = rnsc_calloc(t->ctx, cap, sizeof(*t->prq));
		if (!t->prq)
			return RNSC_ERR_NOMEM;
	}
	if (t->prq_n >= cap) {
		t->st.pr_queue_dropped++;
		rnsc_log(
			t->ctx, RNSC_LOG_DEBUG, WHO,
			"dropping a path request on interface %u: the ingress-limited queue is full",
			(unsigned)rif->id);
		return 0;
	}
	tr_prq *e = &t->prq[(t->prq_head + t->prq_n++) % cap];
	memset(e, 0, sizeof(*e));
	e->iface = rif->id;
	memcpy(e->dest, r->dest_hash, HL);
	e->has_tid = r->has_transport_id;
	if (r->has_transport_id)
		memcpy(e->tid, r->transport_id, HL);
	e->tag_len = r->tag_len <= HL ? r->tag_len : HL;
	memcpy(e->tag, r->tag, e->tag_len);
	t->st.pr_queued++;
	return 0;
}

int rnsc_tr_prq_drain(rnsc_transport *t, uint64_t now)
{
	size_t cap = t->cfg.qlen_in_il;
	while (t->prq_n) {
		tr_prq e = t->prq[t->prq_head];
		t->prq_head = (t->prq_head + 1) % cap;
		t->prq_n--;
		const tr_iface *rif = rnsc_tr_iface_find(t, e.iface);
		if (!rif)
			continue; /* the interface went away meanwhile */
		rnsc_pathreq r;
		memset(&r, 0, sizeof(r));
		memcpy(r.dest_hash, e.dest, HL);
		r.has_transport_id = e.has_tid;
		memcpy(r.transport_id, e.tid, HL);
		r.tag = e.tag;
		r.tag_len = e.tag_len;
		int rc = rnsc_tr_path_request(t, &r, rif, 1, now);
		if (rc == RNSC_ERR_NOMEM)
			return rc;
	}
	t->prq_head = 0;
	return 0;
}

void rnsc_tr_prq_free(rnsc_transport *t)
{
	rnsc_free(t->ctx, t->prq);
	t->prq = NULL;
	t->prq_head = t->prq_n = 0;
}
