/* SPDX-License-Identifier: MIT */
#include "node_traffic.h"

#include <stdlib.h>
#include <string.h>

#define SAMPLE_NS 1000000000ull

typedef struct tr_ent {
	const rnsc_iface *f;
	uint64_t rxb, txb, arxb, atxb, prxb, ptxb;
	uint64_t ts_ms;
	rnsc_traffic_rates cur;
	int live; /* seen in the current sample */
} tr_ent;

struct rnsc_node_traffic {
	rnsc_node *n;
	rnsc_timer *timer;
	tr_ent *v;
	size_t nv, cap;
	rnsc_traffic_totals tot;
	uint64_t rxp, txp, cts_ms;
};

static void tick(rnsc_loop *loop, rnsc_timer *tm, void *ud)
{
	(void)loop;
	(void)tm;
	rnsc_node_traffic_sample(ud);
}

int rnsc_node_traffic_new(rnsc_node *n, rnsc_node_traffic **out)
{
	rnsc_node_traffic *t = calloc(1, sizeof(*t));
	if (!t)
		return RNSC_ERR_NOMEM;
	t->n = n;
	rnsc_node_stats ns;
	rnsc_node_stats_get(n, &ns);
	t->rxp = ns.rx_frames;
	t->txp = ns.tx_frames;
	if (rnsc_loop_timer_add(rnsc_node_loop(n), SAMPLE_NS, SAMPLE_NS, tick, t, &t->timer)) {
		free(t);
		return RNSC_ERR_NOMEM;
	}
	*out = t;
	return 0;
}

void rnsc_node_traffic_del(rnsc_node_traffic *t)
{
	if (!t)
		return;
	rnsc_loop_timer_cancel(rnsc_node_loop(t->n), t->timer);
	free(t->v);
	free(t);
}

static tr_ent *find(const rnsc_node_traffic *t, const rnsc_iface *f)
{
	for (size_t i = 0; i < t->nv; i++)
		if (t->v[i].f == f)
			return &t->v[i];
	return NULL;
}

/* Transport.count_traffic_loop skips spawned interfaces and the shared instance's own. */
static int measured(const rnsc_iface *f, const rnsc_iface_status *st)
{
	return !rnsc_iface_parent(f) &&
	       !(st->type && strcmp(st->type, "LocalServerInterface") == 0);
}

static double rate(uint64_t now, uint64_t prev, uint64_t dt_ms)
{
	return now >= prev ? (double)(now - prev) * 8.0 * 1000.0 / (double)dt_ms : 0.0;
}

void rnsc_node_traffic_sample(rnsc_node_traffic *t)
{
	rnsc_node *n = t->n;
	rnsc_iface_host *ih = rnsc_node_ifaces(n);
	uint64_t now = rnsc_node_now_ms();
	for (size_t i = 0; i < t->nv; i++)
		t->v[i].live = 0;
	rnsc_traffic_rates sum = {0};
	double arxf = 0, atxf = 0, prxf = 0, ptxf = 0;
	for (size_t k = 0; k < rnsc_iface_host_count(ih); k++) {
		rnsc_iface *f = rnsc_iface_host_at(ih, k);
		rnsc_iface_status st;
		if (rnsc_iface_status_get(f, &st) || !measured(f, &st))
			continue;
		/* A listener's announce and path request counters include its connections', as
		 * the reference's spawned interfaces feed their parent's. */
		rnsc_transport_iface_astats as, cs;
		memset(&as, 0, sizeof(as));
		(void)rnsc_node_iface_astats(n, f, now, &as);
		for (size_t c = 0; c < rnsc_iface_host_count(ih); c++) {
			rnsc_iface *ch = rnsc_iface_host_at(ih, c);
			if (rnsc_iface_parent(ch) == f &&
			    rnsc_node_iface_astats(n, ch, now, &cs) == 0) {
				as.arxb += cs.arxb, as.atxb += cs.atxb, as.prxb += cs.prxb;
				as.ptxb += cs.ptxb;
				as.ia_freq += cs.ia_freq, as.oa_freq += cs.oa_freq;
				as.ip_freq += cs.ip_freq, as.op_freq += cs.op_freq;
			}
		}
		uint64_t rxb = st.stats.rx_bytes, txb = st.stats.tx_bytes;
		tr_ent *e = find(t, f);
		if (e && (rxb < e->rxb || txb < e->txb || as.arxb < e->arxb || as.atxb < e->atxb ||
			  as.prxb < e->prxb || as.ptxb < e->ptxb))
			e->f = NULL, e = NULL; /* counters went back: another interface now */
		if (!e) {
			if (t->nv == t->cap) {
				size_t cap = t->cap ? t->cap * 2 : 8;
				tr_ent *v = realloc(t->v, cap * sizeof(*v));
				if (!v)
					continue;
				t->v = v;
				t->cap = cap;
			}
			e = &t->v[t->nv++];
			*e = (tr_ent){.f = f,
				      .rxb = rxb,
				      .txb = txb,
				      .arxb = as.arxb,
				      .atxb = as.atxb,
				      .prxb = as.prxb,
				      .ptxb = as.ptxb,
				      .ts_ms = now};
			e->live = 1;
			continue; /* the first sample only sets the baseline */
		}
		e->live = 1;
		uint64_t dt = now > e->ts_ms ? now - e->ts_ms : 1;
		e->cur = (rnsc_traffic_rates){
			rate(rxb, e->rxb, dt),      rate(txb, e->txb, dt),
			rate(as.arxb, e->arxb, dt), rate(as.atxb, e->atxb, dt),
			rate(as.prxb, e->prxb, dt), rate(as.ptxb, e->ptxb, dt)};
		t->tot.rxb += rxb - e->rxb, t->tot.txb += txb - e->txb;
		t->tot.arxb += as.arxb - e->arxb, t->tot.atxb += as.atxb - e->atxb;
		t->tot.prxb += as.prxb - e->prxb, t->tot.ptxb += as.ptxb - e->ptxb;
		sum.rxs += e->cur.rxs, sum.txs += e->cur.txs, sum.arxs += e->cur.arxs;
		sum.atxs += e->cur.atxs, sum.prxs += e->cur.prxs, sum.ptxs += e->cur.ptxs;
		arxf += as.ia_freq, atxf += as.oa_freq, prxf += as.ip_freq, ptxf += as.op_freq;
		*e = (tr_ent){.f = f,
			      .rxb = rxb,
			      .txb = txb,
			      .arxb = as.arxb,
			      .atxb = as.atxb,
			      .prxb = as.prxb,
			      .ptxb = as.ptxb,
			      .ts_ms = now,
			      .cur = e->cur,
			      .live = 1};
	}
	size_t w = 0;
	for (size_t i = 0; i < t->nv; i++)
		if (t->v[i].live && t->v[i].f)
			t->v[w++] = t->v[i];
	t->nv = w;
	t->tot.speed = sum;
	t->tot.arxf = arxf, t->tot.atxf = atxf, t->tot.prxf = prxf, t->tot.ptxf = ptxf;
	/* Packets per second since the previous sample (the first one since the start). */
	rnsc_node_stats ns;
	rnsc_node_stats_get(n, &ns);
	uint64_t since = t->cts_ms ? t->cts_ms : rnsc_node_started_ms(n);
	double td = now > since ? (double)(now - since) / 1000.0 : 1.0;
	t->tot.rxpps = (int64_t)((double)(ns.rx_frames - t->rxp) / td + 0.5);
	t->tot.txpps = (int64_t)((double)(ns.tx_frames - t->txp) / td + 0.5);
	t->rxp = ns.rx_frames;
	t->txp = ns.tx_frames;
	t->cts_ms = now;
}

void rnsc_node_traffic_iface(const rnsc_node_traffic *t, const rnsc_iface *f,
			     rnsc_traffic_rates *out)
{
	const tr_ent *e = t ? find(t, f) : NULL;
	if (e)
		*out = e->cur;
	else
		memset(out, 0, sizeof(*out));
}

void rnsc_node_traffic_totals(const rnsc_node_traffic *t, rnsc_traffic_totals *out)
{
	if (t)
		*out = t->tot;
	else
		memset(out, 0, sizeof(*out));
}
