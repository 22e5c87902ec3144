/* SPDX-License-Identifier: MIT */
/* Discovery (recursive) path requests (transport_discovery.c): engines wired in one process
 * through their outboxes, A -- T (transport node) -- B, with T's interface towards A in a
 * mode that discovers paths. */
#include <stdio.h>
#include <string.h>

#include "crypto.h"
#include "cu_run.h"
#include "engine_env.h"
#include "destination.h"
#include "node_policy.h"
#include "packet.h"
#include "pathreq.h"
#include "plugin_host.h"
#include "transport.h"

#define MAXN 5
#define MAXW 6
typedef struct wire {
	int a, b;
	uint32_t ia, ib;
} wire;

typedef struct node {
	rnsc_transport *t;
	rnsc_identity tid;
	int last_ctx, last_header, announces;
} node;

static node N[MAXN];
static wire W[MAXW];
static int n_nodes, n_wires;
static uint64_t NOW = 1700000000000ull;

static void on_announce(void *ud, const uint8_t *dest, const uint8_t *app, size_t len,
			unsigned hops)
{
	(void)dest, (void)app, (void)len, (void)hops;
	((node *)ud)->announces++;
}

static void net_reset(void)
{
	for (int i = 0; i < n_nodes; i++) {
		rnsc_transport_del(N[i].t);
		rnsc_identity_free(&N[i].tid);
	}
	memset(N, 0, sizeof(N));
	n_nodes = n_wires = 0;
}

static int add_node(int transport_enabled)
{
	node *n = &N[n_nodes];
	memset(n, 0, sizeof(*n));
	CU_ASSERT_EQUAL_FATAL(rnsc_identity_generate(C, &n->tid), 0);
	rnsc_transport_config cfg = {.transport_enabled = transport_enabled,
				     .use_implicit_proof = 1};
	CU_ASSERT_EQUAL_FATAL(rnsc_transport_new(C, &n->t, &n->tid, &cfg), 0);
	rnsc_transport_callbacks cb = {.ud = n, .on_announce = on_announce};
	rnsc_transport_set_callbacks(n->t, &cb);
	return n_nodes++;
}

/* a's interface is FULL, b's has mode_b */
static void wire_up(int a, uint32_t ia, int b, uint32_t ib, int mode_b, uint64_t bitrate_b)
{
	(void)rnsc_transport_iface_add(N[a].t, ia, RNSC_TRANSPORT_MODE_FULL, 10000000, 0);
	(void)rnsc_transport_iface_add(N[b].t, ib, mode_b, bitrate_b, 0);
	W[n_wires++] = (wire){a, b, ia, ib};
}

/* Frames node i sent on iface ifc since the last pump (counted by deliver()). */
static int sent_on[MAXN][8];

static void deliver(int i, uint32_t ifc, const uint8_t *buf, size_t len)
{
	if (ifc < 8)
		sent_on[i][ifc]++;
	for (int w = 0; w < n_wires; w++) {
		int peer = -1;
		uint32_t pif = 0;
		if (W[w].a == i && W[w].ia == ifc)
			peer = W[w].b, pif = W[w].ib;
		else if (W[w].b == i && W[w].ib == ifc)
			peer = W[w].a, pif = W[w].ia;
		if (peer < 0)
			continue;
		if ((buf[0] & 0x03) == RNSC_PKT_ANNOUNCE) {
			N[peer].last_header = (buf[0] >> 6) & 1;
			N[peer].last_ctx = buf[N[peer].last_header ? 34 : 18];
		}
		CU_ASSERT_EQUAL(rnsc_transport_ingest(N[peer].t, pif, buf, len, NOW), 0);
	}
}

static void pump(void)
{
	for (int round = 0; round < 100; round++) {
		int any = 0;
		for (int i = 0; i < n_nodes; i++) {
			uint8_t buf[600];
			uint32_t ifc;
			int len;
			while ((len = rnsc_transport_outbox_pop(N[i].t, &ifc, buf, sizeof(buf))) >
			       0) {
				any = 1;
				deliver(i, ifc, buf, (size_t)len);
			}
		}
		if (!any)
			break;
	}
}

static void tick_all(uint64_t until, uint64_t step)
{
	while (NOW < until) {
		NOW += step;
		for (int i = 0; i < n_nodes; i++)
			CU_ASSERT_EQUAL(rnsc_transport_tick(N[i].t, NOW), 0);
		pump();
	}
}

static const char *const ASP[] = {"discovery", "test"};

static void add_single(int node_i, rnsc_identity *id, uint8_t hash[16])
{
	CU_ASSERT_EQUAL_FATAL(rnsc_identity_generate(C, id), 0);
	CU_ASSERT_EQUAL_FATAL(
		rnsc_transport_dest_add(N[node_i].t, RNSC_DEST_SINGLE, id, "rnsc", ASP, 2, 1, hash),
		0);
}

static const rnsc_transport_stats *ST(int i)
{
	return rnsc_transport_get_stats(N[i].t);
}

/* Pops node i's single outbox frame; returns its length. */
static int pop1(int i, uint32_t *ifc, uint8_t *buf)
{
	int len = rnsc_transport_outbox_pop(N[i].t, ifc, buf, 600);
	CU_ASSERT(len > 0);
	return len;
}

/* ---- tests ---- */

/* A asks T (gateway towards A) for a destination only B has: T asks B with A's tag and its
 * own transport id, B answers, T answers A at once with a path response from itself. */
static void test_discovery_answered(void)
{
	int a = add_node(0), t = add_node(1), b = add_node(0);
	wire_up(a, 1, t, 1, RNSC_TRANSPORT_MODE_GATEWAY, 10000000);
	wire_up(b, 1, t, 2, RNSC_TRANSPORT_MODE_FULL, 10000000);
	rnsc_identity idb;
	uint8_t db[16];
	add_single(b, &idb, db);

	CU_ASSERT_EQUAL(rnsc_transport_request_path(N[a].t, db, 0, 0, NOW), 0);
	uint8_t req[600], fwd[600];
	uint32_t ifc;
	int rlen = pop1(a, &ifc, req);
	CU_ASSERT_EQUAL(rnsc_transport_ingest(N[t].t, 1, req, (size_t)rlen, NOW), 0);
	CU_ASSERT_EQUAL(ST(t)->pr_discovery, 1);
	CU_ASSERT_EQUAL(ST(t)->pr_discovery_sent, 1);
	int flen = pop1(t, &ifc, fwd);
	CU_ASSERT_EQUAL(ifc, 2); /* not back towards A */
	CU_ASSERT_EQUAL(rnsc_transport_outbox_count(N[t].t), 0);
	rnsc_packet rp, fp;
	CU_ASSERT_EQUAL_FATAL(rnsc_packet_unpack(&rp, req, (size_t)rlen), 0);
	CU_ASSERT_EQUAL_FATAL(rnsc_packet_unpack(&fp, fwd, (size_t)flen), 0);
	rnsc_pathreq r1, r2;
	CU_ASSERT_EQUAL_FATAL(rnsc_pathreq_parse(&r1, rp.data, rp.data_len), 0);
	CU_ASSERT_EQUAL_FATAL(rnsc_pathreq_parse(&r2, fp.data, fp.data_len), 0);
	CU_ASSERT_FALSE(r1.has_transport_id); /* A has no transport */
	CU_ASSERT(r2.has_transport_id);
	CU_ASSERT_EQUAL(memcmp(r2.transport_id, rnsc_transport_id(N[t].t), 16), 0);
	CU_ASSERT_EQUAL(memcmp(r2.dest_hash, db, 16), 0);
	CU_ASSERT_EQUAL(r2.tag_len, r1.tag_len); /* the requestor's tag, against loops */
	CU_ASSERT_EQUAL(memcmp(r2.tag, r1.tag, r1.tag_len), 0);
	/* The same request again on T (a loop): a duplicate tag, nothing new. */
	CU_ASSERT_EQUAL(rnsc_transport_ingest(N[t].t, 1, req, (size_t)rlen, NOW), 0);
	CU_ASSERT_EQUAL(ST(t)->pr_duplicate, 1);
	CU_ASSERT_EQUAL(rnsc_transport_outbox_count(N[t].t), 0);

	deliver(t, 2, fwd, (size_t)flen); /* B answers; T answers A at once */
	pump();
	CU_ASSERT_EQUAL(ST(b)->pr_answered, 1);
	CU_ASSERT_EQUAL(ST(t)->pr_discovery_answered, 1);
	rnsc_transport_path p;
	CU_ASSERT_EQUAL_FATAL(rnsc_transport_path_get(N[a].t, db, &p), 0);
	CU_ASSERT_EQUAL(p.hops, 2);
	CU_ASSERT_EQUAL(memcmp(p.next_hop, rnsc_transport_id(N[t].t), 16), 0);
	CU_ASSERT_EQUAL(N[a].last_header, RNSC_HEADER_2);
	CU_ASSERT_EQUAL(N[a].last_ctx, RNSC_CTX_PATH_RESPONSE);
	/* the entry is gone: a later announce answers nobody */
	CU_ASSERT_EQUAL(rnsc_transport_announce(N[b].t, db, NULL, 0, NOW), 0);
	tick_all(NOW + 3000, 250);
	CU_ASSERT_EQUAL(ST(t)->pr_discovery_answered, 1);
	rnsc_identity_free(&idb);
	net_reset();
}

/* Modes outside DISCOVER_PATHS_FOR do not search, nor does a node without transport. */
static void test_no_discovery(void)
{
	static const int modes[] = {RNSC_TRANSPORT_MODE_FULL, RNSC_TRANSPORT_MODE_POINT_TO_POINT};
	for (int k = 0; k < 3; k++) {
		int a = add_node(0), t = add_node(k < 2), b = add_node(0);
		wire_up(a, 1, t, 1, k < 2 ? modes[k] : RNSC_TRANSPORT_MODE_GATEWAY, 10000000);
		wire_up(b, 1, t, 2, RNSC_TRANSPORT_MODE_FULL, 10000000);
		uint8_t db[16] = {0x42};
		CU_ASSERT_EQUAL(rnsc_transport_request_path(N[a].t, db, 0, 0, NOW), 0);
		pump();
		CU_ASSERT_EQUAL(ST(t)->pr_received, 1);
		CU_ASSERT_EQUAL(ST(t)->pr_discovery, 0);
		CU_ASSERT_EQUAL(ST(b)->pr_received, 0);
		net_reset();
	}
}

/* Entries live max(PATH_REQUEST_TIMEOUT, medium_path_timeout()); an announce after that
 * answers nobody. */
static void test_discovery_expiry(void)
{
	for (int k = 0; k < 3; k++) {
		int slow = k == 1; /* k == 2: the slow interface is offline */
		int a = add_node(0), t = add_node(1), b = add_node(0);
		wire_up(a, 1, t, 1, RNSC_TRANSPORT_MODE_ACCESS_POINT, 10000000);
		wire_up(b, 1, t, 2, RNSC_TRANSPORT_MODE_FULL, 10000000);
		if (k) /* 100 bit/s: 2 * 4000 / 100 + 6 = 86 s; not while offline */
			CU_ASSERT_EQUAL(rnsc_transport_iface_add(N[t].t, 7,
								 RNSC_TRANSPORT_MODE_FULL, 100, 0),
					0);
		if (k == 2)
			CU_ASSERT_EQUAL(rnsc_transport_iface_set_online(N[t].t, 7, 0), 0);
		rnsc_identity idb;
		uint8_t db[16];
		add_single(b, &idb, db);
		/* B does not answer: the request to it is lost */
		CU_ASSERT_EQUAL(rnsc_transport_request_path(N[a].t, db, 0, 0, NOW), 0);
		uint8_t req[600];
		uint32_t ifc;
		int rlen = pop1(a, &ifc, req);
		CU_ASSERT_EQUAL(rnsc_transport_ingest(N[t].t, 1, req, (size_t)rlen, NOW), 0);
		CU_ASSERT_EQUAL(ST(t)->pr_discovery_sent, 1 + (unsigned)slow);
		while (rnsc_transport_outbox_pop(N[t].t, &ifc, req, sizeof(req)) > 0)
			;
		CU_ASSERT(rnsc_transport_next_deadline(N[t].t) < NOW + 6000);
		tick_all(NOW + 21000, 500);
		CU_ASSERT_EQUAL(ST(t)->pr_discovery_expired, slow ? 0u : 1u);
		if (slow) {
			tick_all(NOW + 70000, 1000);
			CU_ASSERT_EQUAL(ST(t)->pr_discovery_expired, 1);
		}
		CU_ASSERT_EQUAL(rnsc_transport_announce(N[b].t, db, NULL, 0, NOW), 0);
		pump();
		CU_ASSERT(rnsc_transport_has_path(N[t].t, db));
		CU_ASSERT_EQUAL(ST(t)->pr_discovery_answered, 0);
		rnsc_identity_free(&idb);
		net_reset();
	}
}

/* A second requestor while the first is in flight is batched: no second search, both are
 * answered when the path arrives; past PATH_REQUEST_GATE_TIMEOUT a request is new again. */
static void test_batching_and_gate(void)
{
	int a = add_node(0), t = add_node(1), b = add_node(0), c = add_node(0);
	wire_up(a, 1, t, 1, RNSC_TRANSPORT_MODE_GATEWAY, 10000000);
	wire_up(b, 1, t, 2, RNSC_TRANSPORT_MODE_FULL, 10000000);
	wire_up(c, 1, t, 3, RNSC_TRANSPORT_MODE_ROAMING, 10000000);
	rnsc_identity idb;
	uint8_t db[16];
	add_single(b, &idb, db);
	uint8_t req[600];
	uint32_t ifc;
	CU_ASSERT_EQUAL(rnsc_transport_request_path(N[a].t, db, 0, 0, NOW), 0);
	int rlen = pop1(a, &ifc, req);
	CU_ASSERT_EQUAL(rnsc_transport_ingest(N[t].t, 1, req, (size_t)rlen, NOW), 0);
	CU_ASSERT_EQUAL(ST(t)->pr_discovery_sent, 2); /* to B and to C */
	while (rnsc_transport_outbox_pop(N[t].t, &ifc, req, sizeof(req)) > 0)
		; /* lost */
	CU_ASSERT_EQUAL(rnsc_transport_request_path(N[c].t, db, 0, 0, NOW), 0);
	rlen = pop1(c, &ifc, req);
	CU_ASSERT_EQUAL(rnsc_transport_ingest(N[t].t, 3, req, (size_t)rlen, NOW), 0);
	CU_ASSERT_EQUAL(ST(t)->pr_batched, 1);
	CU_ASSERT_EQUAL(ST(t)->pr_discovery, 1);
	CU_ASSERT_EQUAL(rnsc_transport_outbox_count(N[t].t), 0);
	/* B announces: both waiting interfaces get a path response */
	CU_ASSERT_EQUAL(rnsc_transport_announce(N[b].t, db, NULL, 0, NOW), 0);
	memset(sent_on, 0, sizeof(sent_on));
	pump();
	CU_ASSERT_EQUAL(ST(t)->pr_discovery_answered, 2);
	CU_ASSERT(rnsc_transport_has_path(N[a].t, db));
	CU_ASSERT(rnsc_transport_has_path(N[c].t, db));
	CU_ASSERT_EQUAL(N[c].last_ctx, RNSC_CTX_PATH_RESPONSE);

	/* A batched request with no search behind it (engaged = 0) is answered too, and a
	 * request after the gate timeout searches again. */
	uint8_t dx[16] = {0x77};
	CU_ASSERT_EQUAL(rnsc_transport_request_path(N[a].t, dx, 0, 0, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(ST(t)->pr_discovery, 2);
	tick_all(NOW + 20000, 1000); /* the discovery entry times out, in flight stays */
	CU_ASSERT_EQUAL(ST(t)->pr_discovery_expired, 1);
	CU_ASSERT_EQUAL(rnsc_transport_request_path(N[c].t, dx, 0, 0, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(ST(t)->pr_batched, 2);
	CU_ASSERT_EQUAL(ST(t)->pr_discovery, 2);
	tick_all(NOW + 30000, 1000); /* gate timeout (45 s) passes */
	CU_ASSERT_EQUAL(rnsc_transport_request_path(N[c].t, dx, 0, 0, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(ST(t)->pr_discovery, 3);
	rnsc_identity_free(&idb);
	net_reset();
}

/* Boundary interfaces search only boundary and gateway interfaces; a requesting interface
 * that went away gets no answer. */
static void test_boundary_and_removed(void)
{
	int a = add_node(0), t = add_node(1), b = add_node(0), c = add_node(0);
	wire_up(a, 1, t, 1, RNSC_TRANSPORT_MODE_BOUNDARY, 10000000);
	wire_up(b, 1, t, 2, RNSC_TRANSPORT_MODE_FULL, 10000000);
	wire_up(c, 1, t, 3, RNSC_TRANSPORT_MODE_GATEWAY, 10000000);
	rnsc_identity idb;
	uint8_t db[16];
	add_single(b, &idb, db);
	memset(sent_on, 0, sizeof(sent_on));
	CU_ASSERT_EQUAL(rnsc_transport_request_path(N[a].t, db, 0, 0, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(sent_on[t][2], 0);
	CU_ASSERT_EQUAL(sent_on[t][3], 1);
	CU_ASSERT_EQUAL(ST(t)->pr_discovery_sent, 1);
	/* an offline interface is not searched */
	CU_ASSERT_EQUAL(rnsc_transport_iface_set_online(N[t].t, 3, 0), 0);
	CU_ASSERT_EQUAL(rnsc_transport_iface_set_online(N[t].t, 9, 0), RNSC_ERR_NOTFOUND);
	CU_ASSERT_EQUAL(rnsc_transport_iface_set_online(NULL, 3, 0), RNSC_ERR_INVAL);
	uint8_t dy[16] = {0x5a};
	CU_ASSERT_EQUAL(rnsc_transport_request_path(N[a].t, dy, 0, 0, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(ST(t)->pr_discovery, 2);
	CU_ASSERT_EQUAL(ST(t)->pr_discovery_sent, 1);
	CU_ASSERT_EQUAL(rnsc_transport_iface_set_online(N[t].t, 3, 1), 0);
	CU_ASSERT_EQUAL(rnsc_transport_iface_remove(N[t].t, 1), 0);
	CU_ASSERT_EQUAL(rnsc_transport_announce(N[b].t, db, NULL, 0, NOW), 0);
	pump();
	CU_ASSERT(rnsc_transport_has_path(N[t].t, db));
	CU_ASSERT_EQUAL(ST(t)->pr_discovery_answered, 0);
	rnsc_identity_free(&idb);
	net_reset();
}

/* Many requests for unknown destinations from a new interface: its path request burst
 * stops the searches (ingress limiting); the limited requests wait in the ingress-limited
 * queue (8) for the next tick, the rest is dropped and counted. */
static void test_ingress_limited(void)
{
	int a = add_node(0), t = add_node(1), b = add_node(0);
	wire_up(a, 1, t, 1, RNSC_TRANSPORT_MODE_GATEWAY, 10000000);
	wire_up(b, 1, t, 2, RNSC_TRANSPORT_MODE_FULL, 10000000);
	for (int i = 0; i < 12; i++) {
		uint8_t d[16] = {(uint8_t)(i + 1), 0x55};
		CU_ASSERT_EQUAL(rnsc_transport_request_path(N[a].t, d, 0, 0, NOW), 0);
		pump();
		NOW += 20;
	}
	/* two before the burst searched; ten limited: eight queued, two dropped */
	CU_ASSERT_EQUAL(ST(t)->pr_discovery, 2);
	CU_ASSERT_EQUAL(ST(t)->pr_queued, 8);
	CU_ASSERT_EQUAL(ST(t)->pr_queue_dropped, 2);
	CU_ASSERT_EQUAL(ST(t)->pr_ingress_limited, 0);
	CU_ASSERT_EQUAL(rnsc_transport_next_deadline(N[t].t), 0); /* a tick is due at once */
	CU_ASSERT_EQUAL(rnsc_transport_tick(N[t].t, NOW), 0);
	CU_ASSERT_EQUAL(ST(t)->pr_ingress_limited, 8); /* processed, not searched */
	CU_ASSERT_EQUAL(ST(t)->pr_discovery, 2);
	CU_ASSERT(rnsc_transport_next_deadline(N[t].t) > 0);
	/* ingress limited while in flight: dropped, neither batched nor queued */
	uint8_t d1[16] = {1, 0x55};
	CU_ASSERT_EQUAL(rnsc_transport_request_path(N[a].t, d1, 0, 0, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(ST(t)->pr_ingress_limited, 9);
	CU_ASSERT_EQUAL(ST(t)->pr_batched, 0);
	CU_ASSERT_EQUAL(ST(t)->pr_queued, 8);
	net_reset();
}

/* A queue of two (qlen_in_il): a queued request for a local destination is still answered
 * at the tick; one whose interface went away is skipped. */
static void test_il_queue(void)
{
	int a = add_node(0), t = add_node(1);
	rnsc_transport_del(N[t].t);
	rnsc_transport_config cfg = {
		.transport_enabled = 1, .use_implicit_proof = 1, .qlen_in_il = 2};
	CU_ASSERT_EQUAL_FATAL(rnsc_transport_new(C, &N[t].t, &N[t].tid, &cfg), 0);
	int c = add_node(0);
	wire_up(a, 1, t, 1, RNSC_TRANSPORT_MODE_FULL, 10000000);
	wire_up(c, 1, t, 2, RNSC_TRANSPORT_MODE_FULL, 10000000);
	rnsc_identity idt;
	uint8_t dt[16];
	add_single(t, &idt, dt);
	for (int i = 0; i < 3; i++) { /* warm-up: the burst starts with the third */
		uint8_t d[16] = {(uint8_t)(i + 1), 0x44};
		CU_ASSERT_EQUAL(rnsc_transport_request_path(N[a].t, d, 0, 0, NOW), 0);
		pump();
		NOW += 20;
	}
	CU_ASSERT_EQUAL(ST(t)->pr_queued, 1);
	CU_ASSERT_EQUAL(rnsc_transport_tick(N[t].t, NOW), 0);
	CU_ASSERT_EQUAL(rnsc_transport_request_path(N[a].t, dt, 0, 0, NOW), 0);
	pump();
	uint8_t d9[16] = {9, 0x44};
	CU_ASSERT_EQUAL(rnsc_transport_request_path(N[a].t, d9, 0, 0, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(rnsc_transport_request_path(N[a].t, d9, 0, 0, NOW), 0);
	pump(); /* in flight and limited: dropped before the queue */
	CU_ASSERT_EQUAL(ST(t)->pr_queued, 3);
	CU_ASSERT_EQUAL(ST(t)->pr_answered, 0);
	CU_ASSERT_FALSE(rnsc_transport_has_path(N[a].t, dt));
	NOW += 10;
	tick_all(NOW + 1000, 250); /* answered from the queue, at the grace-free local announce */
	CU_ASSERT_EQUAL(ST(t)->pr_answered, 1);
	CU_ASSERT(rnsc_transport_has_path(N[a].t, dt));
	/* fill the queue from C, then remove C's interface before the tick */
	for (int i = 0; i < 6; i++) {
		uint8_t d[16] = {(uint8_t)(i + 20), 0x44};
		CU_ASSERT_EQUAL(rnsc_transport_request_path(N[c].t, d, 0, 0, NOW), 0);
		pump();
		NOW += 20;
	}
	CU_ASSERT(ST(t)->pr_queue_dropped >= 1);
	uint64_t lim = ST(t)->pr_ingress_limited;
	CU_ASSERT_EQUAL(rnsc_transport_iface_remove(N[t].t, 2), 0);
	CU_ASSERT_EQUAL(rnsc_transport_tick(N[t].t, NOW), 0);
	CU_ASSERT_EQUAL(ST(t)->pr_ingress_limited, lim);
	rnsc_identity_free(&idt);
	net_reset();
}

/* Egress control: recursive requests above ec_pr_freq are not sent; the announce cap
 * spaces them on a slow interface. */
static void test_egress_limits(void)
{
	for (int slow = 0; slow < 2; slow++) {
		int a = add_node(0), t = add_node(1), b = add_node(0);
		wire_up(a, 1, t, 1, RNSC_TRANSPORT_MODE_GATEWAY, 10000000);
		wire_up(b, 1, t, 2, RNSC_TRANSPORT_MODE_FULL, slow ? 1000 : 10000000);
		rnsc_transport_iface_policy pol;
		rnsc_transport_iface_policy_default(N[t].t, &pol);
		pol.ic.enabled = 0;
		CU_ASSERT_EQUAL(rnsc_transport_iface_set_policy(N[t].t, 1, &pol, 0), 0);
		rnsc_transport_iface_policy_default(N[t].t, &pol);
		pol.egress_control = !slow;
		pol.ec_pr_freq = 0; /* the default, 5 Hz */
		CU_ASSERT_EQUAL(rnsc_transport_iface_set_policy(N[t].t, 2, &pol, 0), 0);
		for (int i = 0; i < 6; i++) {
			uint8_t d[16] = {(uint8_t)(i + 1), 0x66};
			CU_ASSERT_EQUAL(rnsc_transport_request_path(N[a].t, d, 0, 0, NOW), 0);
			pump();
			NOW += 10;
		}
		CU_ASSERT_EQUAL(ST(t)->pr_discovery, 6);
		/* fast: two go out before the rate counts; slow: a 67-byte request at 1 kbit/s
		 * under a 2 % cap blocks the interface for ~27 s */
		CU_ASSERT_EQUAL(ST(t)->pr_discovery_sent, slow ? 1u : 2u);
		CU_ASSERT_EQUAL(ST(t)->pr_egress_limited, slow ? 5u : 4u);
		CU_ASSERT_EQUAL(ST(b)->pr_received, slow ? 1u : 2u);
		net_reset();
	}
}

/* Both tables are bounded: past RNSC_DISCOVERY_MAX_ENTRIES (16384) requests are processed
 * without batching and searches are refused (counted). */
static void test_tables_full(void)
{
	int a = add_node(0), t = add_node(1);
	wire_up(a, 1, t, 1, RNSC_TRANSPORT_MODE_GATEWAY, 10000000);
	rnsc_transport_iface_policy pol;
	rnsc_transport_iface_policy_default(N[t].t, &pol);
	pol.ic.enabled = 0;
	CU_ASSERT_EQUAL(rnsc_transport_iface_set_policy(N[t].t, 1, &pol, 0), 0);
	const unsigned total = 16384 + 3;
	uint8_t req[600];
	uint32_t ifc;
	for (unsigned i = 0; i < total; i++) {
		uint8_t d[16] = {(uint8_t)i, (uint8_t)(i >> 8), 0x99};
		CU_ASSERT_EQUAL_FATAL(rnsc_transport_request_path(N[a].t, d, 0, 0, NOW), 0);
		int len = rnsc_transport_outbox_pop(N[a].t, &ifc, req, sizeof(req));
		CU_ASSERT_FATAL(len > 0);
		CU_ASSERT_EQUAL(rnsc_transport_ingest(N[t].t, 1, req, (size_t)len, NOW), 0);
	}
	CU_ASSERT_EQUAL(ST(t)->pr_discovery, 16384);
	CU_ASSERT_EQUAL(ST(t)->pr_discovery_full, 3);
	/* a second tag for a destination past the bound is not batched (not in flight) */
	uint8_t d[16] = {(uint8_t)(total - 1), (uint8_t)((total - 1) >> 8), 0x99};
	CU_ASSERT_EQUAL(rnsc_transport_request_path(N[a].t, d, 0, 0, NOW), 0);
	int len = rnsc_transport_outbox_pop(N[a].t, &ifc, req, sizeof(req));
	CU_ASSERT_EQUAL(rnsc_transport_ingest(N[t].t, 1, req, (size_t)len, NOW), 0);
	CU_ASSERT_EQUAL(ST(t)->pr_batched, 0);
	CU_ASSERT_EQUAL(ST(t)->pr_discovery_full, 4);
	/* everything expires */
	tick_all(NOW + 50000, 5000);
	CU_ASSERT_EQUAL(ST(t)->pr_discovery_expired, 16384);
	net_reset();
}

/* The configuration's egress_control, ec_pr_freq and recursive_prs ([reticulum] defaults
 * and per interface). */
static void test_config(void)
{
	static const char text[] =
		"[reticulum]\n  enable_transport = yes\n  egress_control = yes\n  ec_pr_freq = 2\n"
		"[interfaces]\n"
		"  [[A]]\n    type = TCPServerInterface\n    egress_control = no\n"
		"    recursive_prs = yes\n    ec_pr_freq = 0\n"
		"  [[B]]\n    type = TCPServerInterface\n"
		"  [[C]]\n    type = TCPServerInterface\n    recursive_prs = maybe\n";
	rnsc_config *cfg = NULL;
	rnsc_config_error err;
	CU_ASSERT_EQUAL_FATAL(rnsc_config_parse(C, text, strlen(text), "test", &cfg, &err), 0);
	rnsc_config_settings set;
	CU_ASSERT_EQUAL_FATAL(rnsc_config_read_settings(cfg, &set, &err), 0);
	const rnsc_config_section *ifs =
		rnsc_config_section_get(rnsc_config_root(cfg), "interfaces");
	rnsc_transport_iface_policy p;
	CU_ASSERT_EQUAL(rnsc_node_policy_read(&set, rnsc_config_section_get(ifs, "A"), &p, &err),
			0);
	CU_ASSERT_EQUAL(p.egress_control, 0);
	CU_ASSERT_EQUAL(p.recursive_prs, 1);
	CU_ASSERT(p.ec_pr_freq > 0 && p.ec_pr_freq < 1e-6);
	CU_ASSERT_EQUAL(rnsc_node_policy_read(&set, rnsc_config_section_get(ifs, "B"), &p, &err),
			0);
	CU_ASSERT_EQUAL(p.egress_control, 1);
	CU_ASSERT_EQUAL(p.recursive_prs, 0);
	CU_ASSERT_DOUBLE_EQUAL(p.ec_pr_freq, 2.0, 1e-12);
	CU_ASSERT(rnsc_node_policy_read(&set, rnsc_config_section_get(ifs, "C"), &p, &err) != 0);
	rnsc_config_del(cfg);

	/* recursive_prs on a FULL interface makes it search */
	int a = add_node(0), t = add_node(1), b = add_node(0);
	wire_up(a, 1, t, 1, RNSC_TRANSPORT_MODE_FULL, 10000000);
	wire_up(b, 1, t, 2, RNSC_TRANSPORT_MODE_FULL, 10000000);
	rnsc_transport_iface_policy_default(N[t].t, &p);
	p.recursive_prs = 1;
	CU_ASSERT_EQUAL(rnsc_transport_iface_set_policy(N[t].t, 1, &p, 0), 0);
	uint8_t d[16] = {0x31};
	CU_ASSERT_EQUAL(rnsc_transport_request_path(N[a].t, d, 0, 0, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(ST(t)->pr_discovery, 1);
	CU_ASSERT_EQUAL(ST(b)->pr_received, 1);
	net_reset();
}

int main(void)
{
	if (engine_env_open("transport_discovery_test", 0x9E3779B97F4A7C15u))
		return 1;
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("transport_discovery", NULL, NULL);
	CU_add_test(s, "recursive request answered with a path response", test_discovery_answered);
	CU_add_test(s, "no discovery outside DISCOVER_PATHS_FOR or without transport",
		    test_no_discovery);
	CU_add_test(s, "entries time out (medium path timeout)", test_discovery_expiry);
	CU_add_test(s, "in-flight batching and the gate timeout", test_batching_and_gate);
	CU_add_test(s, "boundary search modes, removed requestor", test_boundary_and_removed);
	CU_add_test(s, "ingress-limited interface does not search", test_ingress_limited);
	CU_add_test(s, "ingress-limited path request queue", test_il_queue);
	CU_add_test(s, "egress control and announce cap on recursive requests", test_egress_limits);
	CU_add_test(s, "bounded tables", test_tables_full);
	CU_add_test(s, "configuration: egress_control, ec_pr_freq, recursive_prs", test_config);
	int rc = rnsc_cu_run();
	engine_env_close();
	return rc;
}
