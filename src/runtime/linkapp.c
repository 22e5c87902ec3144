/* SPDX-License-Identifier: MIT */
/* Link application-layer dispatcher (see linkapp.h). */
#include "linkapp.h"

#include <string.h>

#include "link.h"
#include "loop.h"
#include "packet.h"
#include "token.h"
#include "transport.h"

#define HL RNSC_TRUNCATED_HASHLEN

typedef struct la_res {
	rnsc_resource *r;
	struct la_link *lk;
	struct la_res *next;
} la_res;

typedef struct la_link {
	rnsc_linkapp *la;
	uint8_t id[HL];
	unsigned last_window;
	double last_eifr;
	struct la_link *next;
} la_link;

struct rnsc_linkapp {
	rnsc_node *n;
	rnsc_ctx *ctx;
	rnsc_linkapp_callbacks cb;
	/* the request slot (cb.request_packet unless rnsc_linkapp_set_request_slot replaced it) */
	rnsc_linkapp_request_fn req_fn;
	void *req_ud;
	rnsc_node_hooks app;
	la_link *links;
	la_res *res;
	rnsc_timer *timer;
	uint64_t timer_at;
	int depth;
};

static la_link *find_link(rnsc_linkapp *la, const uint8_t id[HL], int create)
{
	for (la_link *l = la->links; l; l = l->next)
		if (memcmp(l->id, id, HL) == 0)
			return l;
	if (!create)
		return NULL;
	la_link *l = rnsc_calloc(la->ctx, 1, sizeof(*l));
	if (!l)
		return NULL;
	l->la = la;
	memcpy(l->id, id, HL);
	l->next = la->links;
	la->links = l;
	return l;
}

static void drop_link(rnsc_linkapp *la, const uint8_t id[HL])
{
	for (la_link **pp = &la->links; *pp; pp = &(*pp)->next)
		if (memcmp((*pp)->id, id, HL) == 0) {
			la_link *l = *pp;
			*pp = l->next;
			rnsc_free(la->ctx, l);
			return;
		}
}

/* ---- the link as a resource sees it ---------------------------------------------------- */

static const rnsc_link *link_of(la_link *lk)
{
	return rnsc_transport_link_get(rnsc_node_transport(lk->la->n), lk->id);
}

static int l_send(void *ud, int type, int context, const uint8_t *d, size_t len)
{
	la_link *lk = ud;
	int rc = rnsc_transport_link_send_packet(rnsc_node_transport(lk->la->n), lk->id, type,
						 context, d, len, NULL, rnsc_node_now_ms());
	if (rc < 0)
		return rc;
	/* the packet on the wire: 19 header bytes, the data in the clear (parts, proofs) or
	 * as a token */
	int clear = type == RNSC_PKT_PROOF || context == RNSC_CTX_RESOURCE;
	return (int)(19 + (clear ? len : rnsc_token_len(len)));
}

static int l_encrypt(void *ud, uint8_t *out, size_t cap, const uint8_t *pt, size_t len)
{
	const rnsc_link *l = link_of(ud);
	return l ? rnsc_link_encrypt(l, out, cap, pt, len) : RNSC_ERR_STATE;
}

static int l_encrypt_begin(void *ud, rnsc_token_enc *e, uint8_t out[16])
{
	const rnsc_link *l = link_of(ud);
	return l ? rnsc_link_encrypt_begin(l, e, out) : RNSC_ERR_STATE;
}

static int l_decrypt(void *ud, uint8_t *out, size_t cap, const uint8_t *ct, size_t len)
{
	const rnsc_link *l = link_of(ud);
	return l ? rnsc_link_decrypt(l, out, cap, ct, len) : RNSC_ERR_STATE;
}

static void l_teardown(void *ud)
{
	la_link *lk = ud;
	(void)rnsc_transport_link_close(rnsc_node_transport(lk->la->n), lk->id, rnsc_node_now_ms());
}

static int link_params(la_link *lk, rnsc_resource_link *rl)
{
	const rnsc_link *l = link_of(lk);
	if (!l)
		return RNSC_ERR_NOTFOUND;
	int st = rnsc_link_status(l);
	if (st != RNSC_LINK_ACTIVE && st != RNSC_LINK_STALE)
		return RNSC_ERR_STATE;
	memset(rl, 0, sizeof(*rl));
	rl->ud = lk;
	rl->send = l_send;
	rl->encrypt = l_encrypt;
	rl->encrypt_begin = l_encrypt_begin;
	rl->decrypt = l_decrypt;
	rl->teardown = l_teardown;
	rl->mtu = rnsc_link_mtu(l);
	rl->rtt = rnsc_link_rtt(l) > 0 ? rnsc_link_rtt(l) : 0.001;
	/* LINKREQUEST (with signalling) + LRPROOF + LRRTT as the reference counts them */
	rl->establishment_cost = 86 + 118 + 83;
	rl->last_window = lk->last_window;
	rl->last_eifr = lk->last_eifr;
	return 0;
}

/* ---- bookkeeping ----------------------------------------------------------------------- */

static int add_res(rnsc_linkapp *la, la_link *lk, rnsc_resource *r)
{
	la_res *e = rnsc_calloc(la->ctx, 1, sizeof(*e));
	if (!e)
		return RNSC_ERR_NOMEM;
	e->r = r;
	e->lk = lk;
	e->next = la->res;
	la->res = e;
	return 0;
}

static void arm(rnsc_linkapp *la);

/* Frees concluded resources, flushes the node, re-arms the timer. Only at the outermost
 * entry point, so callbacks never see a freed resource. */
static void settle(rnsc_linkapp *la)
{
	if (la->depth > 0)
		return;
	for (la_res **pp = &la->res; *pp;) {
		la_res *e = *pp;
		if (rnsc_resource_done(e->r)) {
			if (!rnsc_resource_is_initiator(e->r) &&
			    rnsc_resource_status(e->r) == RNSC_RESOURCE_COMPLETE) {
				e->lk->last_window = rnsc_resource_window(e->r);
				e->lk->last_eifr = rnsc_resource_eifr(e->r);
			}
			*pp = e->next;
			rnsc_resource_del(e->r);
			rnsc_free(la->ctx, e);
		} else {
			pp = &e->next;
		}
	}
	/* Link.ready_for_new_resource: one outgoing resource per link at a time; the oldest
	 * queued one (the list is newest first) goes when the link is free */
	for (la_link *lk = la->links; lk; lk = lk->next) {
		la_res *next = NULL;
		int busy = 0;
		for (la_res *e = la->res; e; e = e->next) {
			if (e->lk != lk || !rnsc_resource_is_initiator(e->r) ||
			    rnsc_resource_done(e->r))
				continue;
			if (rnsc_resource_status(e->r) == RNSC_RESOURCE_QUEUED)
				next = e;
			else
				busy = 1;
		}
		if (!busy && next) {
			la->depth++;
			(void)rnsc_resource_advertise(next->r, rnsc_node_now_ms());
			la->depth--;
			if (rnsc_resource_done(next->r)) {
				settle(la); /* reap it and try the next one */
				return;
			}
		}
	}
	rnsc_node_flush(la->n);
	arm(la);
}

static void on_timer(rnsc_loop *loop, rnsc_timer *t, void *ud)
{
	(void)loop;
	(void)t;
	rnsc_linkapp *la = ud;
	la->timer = NULL;
	la->timer_at = 0;
	uint64_t now = rnsc_node_now_ms();
	la->depth++;
	for (la_res *e = la->res; e; e = e->next)
		if (!rnsc_resource_done(e->r) && rnsc_resource_next_deadline(e->r) <= now)
			rnsc_resource_tick(e->r, now);
	la->depth--;
	settle(la);
}

static void arm(rnsc_linkapp *la)
{
	uint64_t next = UINT64_MAX;
	int deferred = 0;
	for (la_res *e = la->res; e; e = e->next) {
		uint64_t d = rnsc_resource_next_deadline(e->r);
		if (d < next)
			next = d;
		deferred |= rnsc_resource_work_deferred(e->r);
	}
	rnsc_loop *loop = rnsc_node_loop(la->n);
	if (next == UINT64_MAX) {
		if (la->timer) {
			rnsc_loop_timer_cancel(loop, la->timer);
			la->timer = NULL;
		}
		return;
	}
	uint64_t now = rnsc_node_now_ms();
	/* the reference's watchdogs wake at least every WATCHDOG_MAX_SLEEP */
	uint64_t delay = next > now ? next - now : 0;
	if (delay > RNSC_RESOURCE_WATCHDOG_MAX_SLEEP_MS)
		delay = RNSC_RESOURCE_WATCHDOG_MAX_SLEEP_MS;
	/* Deferred work runs on the next pass: a timer armed now fires after the interfaces'
	 * end-of-pass flushes armed before it (same deadline, earlier sequence). */
	uint64_t ns = deferred ? 0 : delay * RNSC_NS_PER_MS + 1000000;
	if (la->timer) {
		if (rnsc_loop_timer_rearm(loop, la->timer, ns, 0) == 0)
			return;
		rnsc_loop_timer_cancel(loop, la->timer);
		la->timer = NULL;
	}
	(void)rnsc_loop_timer_add(loop, ns, 0, on_timer, la, &la->timer);
}

/* ---- node hooks ------------------------------------------------------------------------ */

static void h_receipt(void *ud, const uint8_t packet_hash[RNSC_HASHLEN], int proved)
{
	rnsc_linkapp *la = ud;
	if (la->app.on_receipt)
		la->app.on_receipt(la->app.ud, packet_hash, proved);
}

static void h_announce(void *ud, const uint8_t dest[HL], unsigned hops)
{
	rnsc_linkapp *la = ud;
	if (la->app.on_announce)
		la->app.on_announce(la->app.ud, dest, hops);
}

static void h_data(void *ud, const uint8_t dest[HL], const uint8_t *d, size_t len, uint32_t iface)
{
	rnsc_linkapp *la = ud;
	if (la->app.on_data)
		la->app.on_data(la->app.ud, dest, d, len, iface);
}

static void h_est(void *ud, const uint8_t id[HL], const uint8_t dest[HL], int initiator)
{
	rnsc_linkapp *la = ud;
	(void)find_link(la, id, 1);
	if (la->app.on_link_established)
		la->app.on_link_established(la->app.ud, id, dest, initiator);
}

static void h_closed(void *ud, const uint8_t id[HL], int reason)
{
	rnsc_linkapp *la = ud;
	la->depth++;
	for (la_res *e = la->res; e; e = e->next)
		if (memcmp(e->lk->id, id, HL) == 0)
			rnsc_resource_link_closed(e->r);
	la->depth--;
	if (la->app.on_link_closed)
		la->app.on_link_closed(la->app.ud, id, reason);
	settle(la);
	/* every resource of the link was concluded and freed by settle() */
	int left = 0;
	for (la_res *e = la->res; e; e = e->next)
		left |= memcmp(e->lk->id, id, HL) == 0;
	if (!left)
		drop_link(la, id);
}

static void h_link_data(void *ud, const uint8_t id[HL], const uint8_t *d, size_t len,
			const uint8_t packet_hash[RNSC_HASHLEN])
{
	rnsc_linkapp *la = ud;
	if (la->app.on_link_data)
		la->app.on_link_data(la->app.ud, id, d, len, packet_hash);
}

static void h_link_proof(void *ud, const uint8_t id[HL], const uint8_t packet_hash[RNSC_HASHLEN])
{
	rnsc_linkapp *la = ud;
	if (la->app.on_link_proof)
		la->app.on_link_proof(la->app.ud, id, packet_hash);
}

static void h_identified(void *ud, const uint8_t id[HL], const rnsc_identity *who)
{
	rnsc_linkapp *la = ud;
	if (la->app.on_link_identified)
		la->app.on_link_identified(la->app.ud, id, who);
}

static void on_adv(rnsc_linkapp *la, la_link *lk, const uint8_t *d, size_t len,
		   const uint8_t packet_hash[RNSC_HASHLEN])
{
	rnsc_resource_adv a;
	if (rnsc_resource_adv_unpack(&a, d, len)) {
		/* "Invalid resource advertisement": the reference tears the link down */
		l_teardown(lk);
		return;
	}
	uint64_t now = rnsc_node_now_ms();
	/* first the resources already running: a repeated advertisement, or the next segment
	 * of a split one (requests and responses included: their later segments are not asked
	 * about again) */
	for (la_res *e = la->res; e; e = e->next) {
		if (e->lk != lk || rnsc_resource_is_initiator(e->r) || rnsc_resource_done(e->r))
			continue;
		/* Link.has_incoming_resource: a repeated advertisement is ignored */
		if (memcmp(rnsc_resource_hash(e->r), a.h, 32) == 0)
			return;
		if (rnsc_resource_accept_segment(e->r, &a, now) != 0)
			return;
	}
	if (rnsc_resource_adv_is_request(&a) || rnsc_resource_adv_is_response(&a)) {
		if (la->req_fn)
			la->req_fn(la->req_ud, lk->id, RNSC_PKT_DATA, RNSC_CTX_RESOURCE_ADV, d, len,
				   packet_hash);
		return;
	}
	if (!la->cb.resource_advertised)
		return; /* ACCEPT_NONE */
	rnsc_resource_callbacks rcb = {0};
	void *rud = NULL;
	rnsc_resource_link rl;
	if (link_params(lk, &rl))
		return;
	if (!la->cb.resource_advertised(la->cb.ud, lk->id, &a, &rcb, &rud)) {
		(void)rnsc_resource_reject(&rl, d, len);
		return;
	}
	rnsc_resource *r = NULL;
	if (rnsc_resource_accept(la->ctx, &r, &rl, &rcb, rud, d, len, now) == 0 &&
	    add_res(la, lk, r) != 0)
		rnsc_resource_del(r);
}

static void h_link_packet(void *ud, const uint8_t id[HL], int type, int context, const uint8_t *d,
			  size_t len, const uint8_t packet_hash[RNSC_HASHLEN])
{
	rnsc_linkapp *la = ud;
	int resource_ctx = context >= RNSC_CTX_RESOURCE && context <= RNSC_CTX_RESOURCE_RCL;
	if (!resource_ctx) {
		if ((context == RNSC_CTX_REQUEST || context == RNSC_CTX_RESPONSE) && la->req_fn)
			la->req_fn(la->req_ud, id, type, context, d, len, packet_hash);
		else if (la->app.on_link_packet)
			la->app.on_link_packet(la->app.ud, id, type, context, d, len, packet_hash);
		return;
	}
	la_link *lk = find_link(la, id, 1);
	if (!lk)
		return;
	uint64_t now = rnsc_node_now_ms();
	la->depth++;
	if (type == RNSC_PKT_DATA && context == RNSC_CTX_RESOURCE_ADV) {
		on_adv(la, lk, d, len, packet_hash);
	} else {
		for (la_res *e = la->res; e; e = e->next) {
			if (e->lk != lk)
				continue;
			int rc =
				rnsc_resource_packet(e->r, type, context, d, len, packet_hash, now);
			/* parts go to every incoming resource, the rest to the one named */
			if (rc == 0 && context != RNSC_CTX_RESOURCE)
				break;
		}
	}
	la->depth--;
	settle(la);
}

/* ---- API --------------------------------------------------------------------------------- */

int rnsc_linkapp_new(rnsc_ctx *ctx, rnsc_node *n, const rnsc_linkapp_callbacks *cb,
		     const rnsc_node_hooks *app_hooks, rnsc_linkapp **out)
{
	if (!ctx || !n || !out)
		return RNSC_ERR_INVAL;
	rnsc_linkapp *la = rnsc_calloc(ctx, 1, sizeof(*la));
	if (!la)
		return RNSC_ERR_NOMEM;
	la->n = n;
	la->ctx = ctx;
	if (cb) {
		la->cb = *cb;
		la->req_fn = cb->request_packet;
		la->req_ud = cb->ud;
	}
	if (app_hooks)
		la->app = *app_hooks;
	rnsc_node_hooks h = {.ud = la,
			     .on_receipt = h_receipt,
			     .on_announce = h_announce,
			     .on_data = h_data,
			     .on_link_established = h_est,
			     .on_link_closed = h_closed,
			     .on_link_data = h_link_data,
			     .on_link_proof = h_link_proof,
			     .on_link_packet = h_link_packet,
			     .on_link_identified = h_identified};
	rnsc_node_set_hooks(n, &h);
	*out = la;
	return 0;
}

void rnsc_linkapp_del(rnsc_linkapp *la)
{
	if (!la)
		return;
	rnsc_node_hooks none = {0};
	rnsc_node_set_hooks(la->n, &none);
	if (la->timer)
		rnsc_loop_timer_cancel(rnsc_node_loop(la->n), la->timer);
	while (la->res) {
		la_res *e = la->res;
		la->res = e->next;
		rnsc_resource_del(e->r);
		rnsc_free(la->ctx, e);
	}
	while (la->links) {
		la_link *l = la->links;
		la->links = l->next;
		rnsc_free(la->ctx, l);
	}
	rnsc_free(la->ctx, la);
}

int rnsc_linkapp_send_resource(rnsc_linkapp *la, const uint8_t link_id[HL],
			       const rnsc_resource_callbacks *cb, void *cb_ud,
			       const rnsc_resource_params *p, rnsc_resource **out)
{
	if (!la || !link_id || !cb || !p)
		return RNSC_ERR_INVAL;
	if (!rnsc_transport_link_get(rnsc_node_transport(la->n), link_id))
		return RNSC_ERR_NOTFOUND; /* before any bookkeeping for it */
	la_link *lk = find_link(la, link_id, 1);
	if (!lk)
		return RNSC_ERR_NOMEM;
	rnsc_resource_link rl;
	int rc = link_params(lk, &rl);
	if (rc)
		return rc;
	rnsc_resource *r = NULL;
	rnsc_resource_params qp = *p;
	for (la_res *e = la->res; e; e = e->next)
		if (e->lk == lk && rnsc_resource_is_initiator(e->r) && !rnsc_resource_done(e->r))
			qp.queued = 1; /* the link has an outgoing resource: wait for it */
	la->depth++;
	rc = rnsc_resource_send(la->ctx, &r, &rl, cb, cb_ud, &qp, rnsc_node_now_ms());
	la->depth--;
	if (rc == 0 && (rc = add_res(la, lk, r)) != 0)
		rnsc_resource_del(r);
	if (rc == 0 && out)
		*out = r;
	settle(la);
	return rc;
}

int rnsc_linkapp_accept_resource(rnsc_linkapp *la, const uint8_t link_id[HL],
				 const uint8_t *adv_plain, size_t len,
				 const rnsc_resource_callbacks *cb, void *cb_ud,
				 rnsc_resource **out)
{
	if (!la || !link_id || !cb)
		return RNSC_ERR_INVAL;
	if (!rnsc_transport_link_get(rnsc_node_transport(la->n), link_id))
		return RNSC_ERR_NOTFOUND;
	la_link *lk = find_link(la, link_id, 1);
	if (!lk)
		return RNSC_ERR_NOMEM;
	rnsc_resource_link rl;
	int rc = link_params(lk, &rl);
	if (rc)
		return rc;
	rnsc_resource *r = NULL;
	la->depth++;
	rc = rnsc_resource_accept(la->ctx, &r, &rl, cb, cb_ud, adv_plain, len, rnsc_node_now_ms());
	la->depth--;
	if (rc == 0 && (rc = add_res(la, lk, r)) != 0)
		rnsc_resource_del(r);
	if (rc == 0 && out)
		*out = r;
	settle(la);
	return rc;
}

void rnsc_linkapp_cancel_resource(rnsc_linkapp *la, rnsc_resource *r)
{
	if (!la || !r)
		return;
	la->depth++;
	rnsc_resource_cancel(r, rnsc_node_now_ms());
	la->depth--;
	settle(la);
}

size_t rnsc_linkapp_resource_count(const rnsc_linkapp *la)
{
	size_t n = 0;
	for (la_res *e = la ? la->res : NULL; e; e = e->next)
		n++;
	return n;
}

void rnsc_linkapp_set_request_slot(rnsc_linkapp *la, rnsc_linkapp_request_fn fn, void *ud)
{
	if (!la)
		return;
	la->req_fn = fn;
	la->req_ud = ud;
}

int rnsc_linkapp_reject_resource(rnsc_linkapp *la, const uint8_t link_id[HL],
				 const uint8_t *adv_plain, size_t len)
{
	if (!la || !link_id || !adv_plain)
		return RNSC_ERR_INVAL;
	if (!rnsc_transport_link_get(rnsc_node_transport(la->n), link_id))
		return RNSC_ERR_NOTFOUND;
	la_link *lk = find_link(la, link_id, 1);
	if (!lk)
		return RNSC_ERR_NOMEM;
	rnsc_resource_link rl;
	int rc = link_params(lk, &rl);
	if (!rc)
		rc = rnsc_resource_reject(&rl, adv_plain, len);
	rnsc_node_flush(la->n);
	return rc;
}
