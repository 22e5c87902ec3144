/* SPDX-License-Identifier: MIT */
/* Links in the transport engine: engines in one process wired through their outboxes; links
 * directly between two engines and through a third one acting as transport node (link
 * table, LRPROOF relay, MTU clamping, expiry). */
#include <stdio.h>
#include <string.h>

#include "crypto.h"
#include "cu_run.h"
#include "engine_env.h"
#include "destination.h"
#include "link.h"
#include "packet.h"
#include "plugin_host.h"
#include "transport.h"

#define MAXN 3
#define MAXW 3
typedef struct wire {
	int a, b;
	uint32_t ia, ib;
} wire;

typedef struct node {
	rnsc_transport *t;
	rnsc_identity tid;
	int established, closed, last_reason, initiator;
	uint8_t link_id[16];
	int data_n;
	size_t data_bytes;
	uint8_t last_data[512];
	size_t last_len;
	int proofs;
	int close_in_data; /* tear the link down from inside on_link_data */
} node;

static node N[MAXN];
static wire W[MAXW];
static int n_nodes, n_wires;
static uint64_t NOW = 1700000000000ull;
static uint8_t FRAME[300000];

static void on_est(void *ud, const uint8_t *lid, const uint8_t *dest, int initiator)
{
	(void)dest;
	node *n = ud;
	n->established++;
	n->initiator = initiator;
	memcpy(n->link_id, lid, 16);
}

static void on_closed(void *ud, const uint8_t *lid, int reason)
{
	node *n = ud;
	(void)lid;
	n->closed++;
	n->last_reason = reason;
}

static void on_ldata(void *ud, const uint8_t *lid, const uint8_t *data, size_t len,
		     const uint8_t *ph)
{
	(void)ph;
	node *n = ud;
	n->data_n++;
	n->data_bytes += len;
	n->last_len = len < sizeof(n->last_data) ? len : sizeof(n->last_data);
	memcpy(n->last_data, data, n->last_len);
	if (n->close_in_data)
		CU_ASSERT_EQUAL(rnsc_transport_link_close(n->t, lid, NOW), 0);
}

static void on_lproof(void *ud, const uint8_t *lid, const uint8_t *ph)
{
	(void)lid, (void)ph;
	((node *)ud)->proofs++;
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

static int mtu_discovery_off; /* the next add_node()'s link_mtu_discovery_off */

static int add_node(int transport_enabled)
{
	node *n = &N[n_nodes];
	memset(n, 0, sizeof(*n));
	CU_ASSERT_EQUAL_FATAL(rnsc_identity_generate(C, &n->tid), 0);
	rnsc_transport_config cfg = {.transport_enabled = transport_enabled,
				     .use_implicit_proof = 1,
				     .link_mtu_discovery_off = mtu_discovery_off};
	CU_ASSERT_EQUAL_FATAL(rnsc_transport_new(C, &n->t, &n->tid, &cfg), 0);
	rnsc_transport_callbacks cb = {.ud = n,
				       .on_link_established = on_est,
				       .on_link_closed = on_closed,
				       .on_link_data = on_ldata,
				       .on_link_proof = on_lproof};
	rnsc_transport_set_callbacks(n->t, &cb);
	return n_nodes++;
}

/* hw_mtu 0: RNSC_MTU and no link MTU discovery; otherwise an autoconfiguring interface. */
static void wire_up(int a, uint32_t ia, size_t mtu_a, int b, uint32_t ib, size_t mtu_b)
{
	CU_ASSERT_EQUAL(
		rnsc_transport_iface_add(N[a].t, ia, RNSC_TRANSPORT_MODE_FULL, 10000000, mtu_a), 0);
	CU_ASSERT_EQUAL(
		rnsc_transport_iface_add(N[b].t, ib, RNSC_TRANSPORT_MODE_FULL, 10000000, mtu_b), 0);
	if (mtu_a)
		CU_ASSERT_EQUAL(rnsc_transport_iface_set_mtu_capable(N[a].t, ia, 1), 0);
	if (mtu_b)
		CU_ASSERT_EQUAL(rnsc_transport_iface_set_mtu_capable(N[b].t, ib, 1), 0);
	W[n_wires++] = (wire){a, b, ia, ib};
}

/* Moves frames until the network is quiet. drop_from >= 0 discards what that node sends. */
static int pump_drop(int drop_from)
{
	int moved = 0;
	for (int round = 0; round < 100; round++) {
		int any = 0;
		for (int i = 0; i < n_nodes; i++) {
			uint32_t ifc;
			int len;
			while ((len = rnsc_transport_outbox_pop(N[i].t, &ifc, FRAME,
								sizeof(FRAME))) > 0) {
				any = 1;
				moved++;
				if (i == drop_from)
					continue;
				for (int w = 0; w < n_wires; w++) {
					int peer = -1;
					uint32_t pif = 0;
					if (W[w].a == i && W[w].ia == ifc)
						peer = W[w].b, pif = W[w].ib;
					else if (W[w].b == i && W[w].ib == ifc)
						peer = W[w].a, pif = W[w].ia;
					if (peer < 0)
						continue;
					CU_ASSERT_EQUAL(rnsc_transport_ingest(N[peer].t, pif, FRAME,
									      (size_t)len, NOW),
							0);
				}
			}
		}
		if (!any)
			break;
	}
	return moved;
}

static int pump(void)
{
	return pump_drop(-1);
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

static const char *const ASP[] = {"link", "test"};

/* A SINGLE destination on node b (proving everything), announced and known to node a. */
static void dest_on(int b, int a, rnsc_identity *id, uint8_t hash[16], unsigned want_hops)
{
	CU_ASSERT_EQUAL_FATAL(rnsc_identity_generate(C, id), 0);
	CU_ASSERT_EQUAL_FATAL(
		rnsc_transport_dest_add(N[b].t, RNSC_DEST_SINGLE, id, "rnsc", ASP, 2, 1, hash), 0);
	CU_ASSERT_EQUAL(rnsc_transport_announce(N[b].t, hash, NULL, 0, NOW), 0);
	pump();
	tick_all(NOW + 3000, 100); /* transport nodes rebroadcast after a random delay */
	rnsc_transport_path p;
	CU_ASSERT_EQUAL_FATAL(rnsc_transport_path_get(N[a].t, hash, &p), 0);
	CU_ASSERT_EQUAL(p.hops, want_hops);
}

/* Data both ways with proofs from the responder (its destination proves all). */
static void exchange(int a, int b, int rounds)
{
	const uint8_t *lid = N[a].link_id;
	for (int i = 0; i < rounds; i++) {
		uint8_t msg[300];
		size_t len = 60 + (size_t)i * 40;
		for (size_t k = 0; k < len; k++)
			msg[k] = (uint8_t)(k * 7 + (size_t)i);
		uint8_t ph[32];
		CU_ASSERT_EQUAL(rnsc_transport_link_send(N[a].t, lid, msg, len, ph, NOW), 0);
		pump();
		CU_ASSERT_EQUAL(N[b].last_len, len);
		CU_ASSERT_EQUAL(memcmp(N[b].last_data, msg, len), 0);
		CU_ASSERT_EQUAL(rnsc_transport_link_send(N[b].t, lid, msg, len / 2, NULL, NOW), 0);
		pump();
		CU_ASSERT_EQUAL(N[a].last_len, len / 2);
	}
	CU_ASSERT_EQUAL(N[b].data_n, rounds);
	CU_ASSERT_EQUAL(N[a].data_n, rounds);
	CU_ASSERT_EQUAL(N[a].proofs, rounds); /* the responder proves all */
	CU_ASSERT_EQUAL(N[b].proofs, 0);      /* the initiator proves none (an OUT destination) */
}

static void test_direct(void)
{
	int a = add_node(0), b = add_node(0);
	wire_up(a, 1, 0, b, 7, 0);
	rnsc_identity idb;
	uint8_t db[16], lid[16];
	dest_on(b, a, &idb, db, 1);
	uint8_t unknown[16] = {1};
	CU_ASSERT_EQUAL(rnsc_transport_link_open(N[a].t, unknown, lid, NOW), RNSC_ERR_NOTFOUND);
	CU_ASSERT_EQUAL(rnsc_transport_link_open(N[a].t, db, lid, NOW), 0);
	CU_ASSERT_EQUAL(rnsc_transport_link_count(N[a].t), 1);
	CU_ASSERT_EQUAL(rnsc_transport_link_send(N[a].t, lid, (const uint8_t *)"x", 1, NULL, NOW),
			RNSC_ERR_STATE);
	NOW += 20;
	pump();
	CU_ASSERT_EQUAL(N[a].established, 1);
	CU_ASSERT_EQUAL(N[b].established, 1);
	CU_ASSERT_EQUAL(N[a].initiator, 1);
	CU_ASSERT_EQUAL(N[b].initiator, 0);
	CU_ASSERT_EQUAL(memcmp(N[a].link_id, lid, 16), 0);
	CU_ASSERT_EQUAL(memcmp(N[b].link_id, lid, 16), 0);
	CU_ASSERT_EQUAL(rnsc_transport_get_stats(N[b].t)->links_accepted, 1);
	const rnsc_link *la = rnsc_transport_link_get(N[a].t, lid);
	CU_ASSERT_FATAL(la != NULL);
	CU_ASSERT_EQUAL(rnsc_link_status(la), RNSC_LINK_ACTIVE);
	CU_ASSERT_EQUAL(rnsc_link_mtu(la), RNSC_MTU);
	exchange(a, b, 6);
	/* Keepalives keep an idle link up across many keepalive intervals. */
	tick_all(NOW + 60000, 1000);
	CU_ASSERT_EQUAL(N[a].closed, 0);
	CU_ASSERT_EQUAL(N[b].closed, 0);
	/* The initiator proves nothing: the responder's 6 receipts timed out, counted once each;
	 * the initiator's were all proved. */
	CU_ASSERT_EQUAL(rnsc_transport_get_stats(N[b].t)->receipts_timed_out, 6);
	CU_ASSERT_EQUAL(rnsc_transport_get_stats(N[a].t)->receipts_timed_out, 0);
	/* Transport.MAX_RECEIPTS: 1,100 more unproved packets keep 1,024 receipts pending; the
	 * 76 oldest are culled as timed out at once. */
	for (int i = 0; i < 1100; i++) {
		CU_ASSERT_EQUAL(rnsc_transport_link_send(N[b].t, lid, (const uint8_t *)"flood", 5,
							 NULL, NOW),
				0);
		if (i % 100 == 99)
			pump();
	}
	pump();
	CU_ASSERT_EQUAL(rnsc_transport_get_stats(N[b].t)->receipts_timed_out, 6 + 76);
	/* one more unproved packet from the responder, pending when the link closes below */
	CU_ASSERT_EQUAL(
		rnsc_transport_link_send(N[b].t, lid, (const uint8_t *)"late", 4, NULL, NOW), 0);
	pump();
	/* The responder tears the link down from inside its data callback. */
	N[b].close_in_data = 1;
	CU_ASSERT_EQUAL(rnsc_transport_link_send(N[a].t, lid, (const uint8_t *)"bye", 3, NULL, NOW),
			0);
	pump();
	CU_ASSERT_EQUAL(N[b].closed, 1);
	CU_ASSERT_EQUAL(N[b].last_reason, RNSC_LINK_DESTINATION_CLOSED);
	CU_ASSERT_EQUAL(N[a].closed, 1);
	CU_ASSERT_EQUAL(N[a].last_reason, RNSC_LINK_DESTINATION_CLOSED);
	CU_ASSERT_EQUAL(rnsc_transport_link_count(N[a].t), 0);
	CU_ASSERT_EQUAL(rnsc_transport_link_count(N[b].t), 0);
	CU_ASSERT_EQUAL(rnsc_transport_link_close(N[a].t, lid, NOW), RNSC_ERR_NOTFOUND);
	/* the receipt left at close ended with its link (no leak: the run is LSan-checked) */
	CU_ASSERT_EQUAL(rnsc_transport_get_stats(N[b].t)->receipts_timed_out, 6 + 1101);
	rnsc_identity_free(&idb);
	net_reset();
}

/* A -- T -- B, T a transport node. MTU: A and T's A-side carry 262144, T's B-side 8192, B's
 * side 262144: T clamps the signalled MTU to 8192 and both ends run at 8192. */
static void test_through_transport(void)
{
	int a = add_node(0), t = add_node(1), b = add_node(0);
	wire_up(a, 1, 262144, t, 1, 262144);
	wire_up(t, 2, 8192, b, 1, 262144);
	rnsc_identity idb;
	uint8_t db[16], lid[16];
	dest_on(b, a, &idb, db, 2);
	CU_ASSERT_EQUAL(rnsc_transport_link_open(N[a].t, db, lid, NOW), 0);
	NOW += 20;
	pump();
	CU_ASSERT_EQUAL(rnsc_transport_get_stats(N[t].t)->links_relayed, 1);
	CU_ASSERT_EQUAL(rnsc_transport_link_table_count(N[t].t), 1);
	CU_ASSERT_EQUAL(rnsc_transport_link_count(N[t].t), 0);
	CU_ASSERT_EQUAL(N[a].established, 1);
	CU_ASSERT_EQUAL(N[b].established, 1);
	const rnsc_link *la = rnsc_transport_link_get(N[a].t, lid);
	const rnsc_link *lb = rnsc_transport_link_get(N[b].t, lid);
	CU_ASSERT_FATAL(la && lb);
	CU_ASSERT_EQUAL(rnsc_link_mtu(la), 8192);
	CU_ASSERT_EQUAL(rnsc_link_mtu(lb), 8192);
	exchange(a, b, 6);
	/* a packet larger than the base MTU crosses the transport node */
	static uint8_t big[4000];
	memset(big, 0x5a, sizeof(big));
	CU_ASSERT_EQUAL(rnsc_transport_link_send(N[a].t, lid, big, sizeof(big), NULL, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(N[b].data_bytes, 60 + 100 + 140 + 180 + 220 + 260 + sizeof(big));
	/* LRPROOF, 7 data packets and 6 proofs from B, 6 data packets from A... all carried */
	CU_ASSERT(rnsc_transport_get_stats(N[t].t)->link_table_forwarded >= 1 + 7 + 6 + 6 + 1);
	CU_ASSERT_EQUAL(rnsc_transport_link_close(N[a].t, lid, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(N[a].last_reason, RNSC_LINK_INITIATOR_CLOSED);
	CU_ASSERT_EQUAL(N[b].closed, 1);
	CU_ASSERT_EQUAL(N[b].last_reason, RNSC_LINK_INITIATOR_CLOSED);
	/* The link table entry goes after Transport.LINK_TIMEOUT without traffic. */
	tick_all(NOW + (uint64_t)RNSC_LINK_STALE_TIME_MS * 5 / 4 + 10000, 5000);
	CU_ASSERT_EQUAL(rnsc_transport_link_table_count(N[t].t), 0);
	rnsc_identity_free(&idb);
	net_reset();
}

/* The transport node's next hop cannot autoconfigure its MTU: signalling is removed and the
 * link runs at the base MTU. */
static void test_clamp_to_base(void)
{
	int a = add_node(0), t = add_node(1), b = add_node(0);
	wire_up(a, 1, 262144, t, 1, 262144);
	wire_up(t, 2, 0, b, 1, 262144);
	rnsc_identity idb;
	uint8_t db[16], lid[16];
	dest_on(b, a, &idb, db, 2);
	CU_ASSERT_EQUAL(rnsc_transport_link_open(N[a].t, db, lid, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(N[a].established, 1);
	const rnsc_link *la = rnsc_transport_link_get(N[a].t, lid);
	CU_ASSERT_FATAL(la != NULL);
	CU_ASSERT_EQUAL(rnsc_link_mtu(la), RNSC_MTU);
	rnsc_identity_free(&idb);
	net_reset();
}

/* link_mtu_discovery = No on the initiator: it signals the base MTU although its next hop
 * could carry 262144, and both ends run at RNSC_MTU (the benchmark's scenario 3 relies on it). */
static void test_mtu_discovery_off(void)
{
	mtu_discovery_off = 1;
	int a = add_node(0);
	mtu_discovery_off = 0;
	int b = add_node(0);
	wire_up(a, 1, 262144, b, 1, 262144);
	rnsc_identity idb;
	uint8_t db[16], lid[16];
	dest_on(b, a, &idb, db, 1);
	CU_ASSERT_EQUAL(rnsc_transport_link_open(N[a].t, db, lid, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(N[a].established, 1);
	CU_ASSERT_EQUAL(N[b].established, 1);
	const rnsc_link *la = rnsc_transport_link_get(N[a].t, lid);
	const rnsc_link *lb = rnsc_transport_link_get(N[b].t, lid);
	CU_ASSERT_FATAL(la && lb);
	CU_ASSERT_EQUAL(rnsc_link_mtu(la), RNSC_MTU);
	CU_ASSERT_EQUAL(rnsc_link_mtu(lb), RNSC_MTU);
	rnsc_identity_free(&idb);
	net_reset();
}

/* Refused requests: the initiator's link times out, the relay's unproved entry expires. */
static void test_refused_and_expiry(void)
{
	int a = add_node(0), t = add_node(1), b = add_node(0);
	wire_up(a, 1, 0, t, 1, 0);
	wire_up(t, 2, 0, b, 1, 0);
	rnsc_identity idb;
	uint8_t db[16], lid[16];
	dest_on(b, a, &idb, db, 2);
	CU_ASSERT_EQUAL(rnsc_transport_dest_accept_links(N[b].t, db, 0), 0);
	CU_ASSERT_EQUAL(rnsc_transport_link_open(N[a].t, db, lid, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(rnsc_transport_get_stats(N[b].t)->links_refused, 1);
	CU_ASSERT_EQUAL(rnsc_transport_link_table_count(N[t].t), 1);
	CU_ASSERT(rnsc_transport_next_deadline(N[a].t) != UINT64_MAX);
	tick_all(NOW + 30000, 500);
	CU_ASSERT_EQUAL(N[a].established, 0);
	CU_ASSERT_EQUAL(N[a].closed, 1);
	CU_ASSERT_EQUAL(N[a].last_reason, RNSC_LINK_TIMEOUT);
	CU_ASSERT_EQUAL(rnsc_transport_link_count(N[a].t), 0);
	CU_ASSERT_EQUAL(rnsc_transport_link_table_count(N[t].t), 0);
	/* Both ends of the failure asked for the path again: the transport node because the
	 * destination was one hop from it, the initiator because its link never came up. */
	CU_ASSERT_EQUAL(rnsc_transport_get_stats(N[t].t)->pr_rediscovery, 1);
	CU_ASSERT_EQUAL(rnsc_transport_get_stats(N[a].t)->pr_rediscovery, 1);
	CU_ASSERT(rnsc_transport_path_request_time(N[t].t, db) > 0);
	rnsc_identity_free(&idb);
	net_reset();
}

/* A lost LRPROOF: the initiator's request times out (first hop + 6 s per hop); the
 * responder's half-open link waits 6 s per hop + KEEPALIVE (Link.validate_request) and
 * closes by its timer. */
static void test_lost_proof(void)
{
	int a = add_node(0), b = add_node(0);
	wire_up(a, 1, 0, b, 1, 0);
	rnsc_identity idb;
	uint8_t db[16], lid[16];
	dest_on(b, a, &idb, db, 1);
	CU_ASSERT_EQUAL(rnsc_transport_link_open(N[a].t, db, lid, NOW), 0);
	pump_drop(1); /* B's LRPROOF is lost */
	CU_ASSERT_EQUAL(rnsc_transport_link_count(N[b].t), 1);
	tick_all(NOW + 13000, 500);
	CU_ASSERT_EQUAL(N[a].closed, 1);
	CU_ASSERT_EQUAL(N[a].last_reason, RNSC_LINK_TIMEOUT);
	CU_ASSERT_EQUAL(N[b].closed, 0);
	tick_all(NOW + RNSC_LINK_PER_HOP_TIMEOUT_MS + RNSC_LINK_KEEPALIVE_MS, 1000);
	CU_ASSERT_EQUAL(N[b].closed, 1);
	CU_ASSERT_EQUAL(N[b].last_reason, RNSC_LINK_TIMEOUT);
	CU_ASSERT_EQUAL(rnsc_transport_link_count(N[a].t), 0);
	CU_ASSERT_EQUAL(rnsc_transport_link_count(N[b].t), 0);
	rnsc_identity_free(&idb);
	net_reset();
}

/* A link this node opens that never comes up (its LRPROOF is lost): without transport the
 * path is expired and a path request goes out one throttle interval later (Transport.jobs'
 * pending-link check and its discovery sender); the destination answers, so the path comes
 * back, newer. A second failure within PATH_REQUEST_MI expires the path without asking. */
static void test_link_rediscovery(void)
{
	int a = add_node(0), b = add_node(0);
	wire_up(a, 1, 0, b, 1, 0);
	rnsc_identity idb;
	uint8_t db[16], lid[16];
	dest_on(b, a, &idb, db, 1);
	rnsc_transport_path p0, p1;
	CU_ASSERT_EQUAL_FATAL(rnsc_transport_path_get(N[a].t, db, &p0), 0);
	CU_ASSERT_EQUAL(rnsc_transport_path_state(N[a].t, db), RNSC_PATH_STATE_UNKNOWN);
	CU_ASSERT_EQUAL(rnsc_transport_link_open(N[a].t, db, lid, NOW), 0);
	pump_drop(1);
	uint64_t asked_before = rnsc_transport_path_request_time(N[a].t, db);
	uint64_t pr_b = rnsc_transport_get_stats(N[b].t)->pr_received;
	tick_all(NOW + 13000, 250);
	CU_ASSERT_EQUAL(N[a].closed, 1);
	CU_ASSERT_EQUAL(rnsc_transport_get_stats(N[a].t)->pr_rediscovery, 1);
	CU_ASSERT_EQUAL(rnsc_transport_rediscovery_pending(N[a].t), 0);
	CU_ASSERT_EQUAL(rnsc_transport_get_stats(N[b].t)->pr_received, pr_b + 1);
	uint64_t asked = rnsc_transport_path_request_time(N[a].t, db);
	CU_ASSERT(asked > asked_before && asked > p0.timestamp);
	CU_ASSERT_EQUAL_FATAL(rnsc_transport_path_get(N[a].t, db, &p1), 0);
	CU_ASSERT(p1.timestamp > asked - 1); /* the answer to that request */
	CU_ASSERT_EQUAL(rnsc_transport_path_state(N[a].t, db), RNSC_PATH_STATE_UNKNOWN);

	CU_ASSERT_EQUAL(rnsc_transport_link_open(N[a].t, db, lid, NOW), 0);
	pump_drop(1);
	uint64_t until = asked + RNSC_PATH_REQUEST_MI_MS - 1000;
	CU_ASSERT(NOW + 12500 < until);
	tick_all(NOW + 12500, 250);
	CU_ASSERT_EQUAL(N[a].closed, 2);
	CU_ASSERT_EQUAL(rnsc_transport_get_stats(N[a].t)->pr_rediscovery, 1); /* throttled */
	CU_ASSERT_EQUAL(rnsc_transport_path_request_time(N[a].t, db), asked);
	CU_ASSERT_EQUAL(rnsc_transport_has_path(N[a].t, db), 0); /* expired and culled */
	rnsc_identity_free(&idb);
	net_reset();
}

/* Link traffic is bound to the link's interface: a link packet arriving on another
 * interface is not delivered, and its hash is forgotten so that the same packet is still
 * taken when it arrives on the right one. */
static void test_interface_binding(void)
{
	int a = add_node(0), b = add_node(0);
	wire_up(a, 1, 0, b, 1, 0);
	wire_up(a, 2, 0, b, 2, 0);
	rnsc_identity idb;
	uint8_t db[16], lid[16];
	dest_on(b, a, &idb, db, 1);
	CU_ASSERT_EQUAL(rnsc_transport_link_open(N[a].t, db, lid, NOW), 0);
	pump();
	CU_ASSERT_FATAL(N[a].established == 1 && N[b].established == 1);
	CU_ASSERT_EQUAL(
		rnsc_transport_link_send(N[b].t, lid, (const uint8_t *)"bound", 5, NULL, NOW), 0);
	uint32_t ifc;
	int len = rnsc_transport_outbox_pop(N[b].t, &ifc, FRAME, sizeof(FRAME));
	CU_ASSERT_FATAL(len > 0 && (ifc == 1 || ifc == 2));
	uint32_t wrong = ifc == 1 ? 2 : 1;
	CU_ASSERT_EQUAL(rnsc_transport_ingest(N[a].t, wrong, FRAME, (size_t)len, NOW), 0);
	CU_ASSERT_EQUAL(N[a].data_n, 0);
	CU_ASSERT_EQUAL(rnsc_transport_ingest(N[a].t, ifc, FRAME, (size_t)len, NOW), 0);
	CU_ASSERT_EQUAL(N[a].data_n, 1);
	CU_ASSERT_EQUAL(N[a].last_len, 5);
	/* and now it is a duplicate */
	CU_ASSERT_EQUAL(rnsc_transport_ingest(N[a].t, ifc, FRAME, (size_t)len, NOW), 0);
	CU_ASSERT_EQUAL(N[a].data_n, 1);
	rnsc_identity_free(&idb);
	net_reset();
}

/* A destination on a local client K of a transport node S, while other clients come and
 * go (as rnsc cp / rnpath runs do): one leaving from the middle of the interface list left
 * a copy of the last interface, local role and all, in the slot the next interface got,
 * so that client went uncounted and, once it left too, S counted no local client while K
 * was still attached. S's peer R echoes K's announce back (a rebroadcast, then a path
 * response, both with more hops); S keeps its own 0-hop path (Transport.inbound: more hops
 * and the same emission never win), so R's link request, which arrives without a
 * transport id, is still taken into transport and passed to K (for_local_client). */
static void test_local_client_echo(void)
{
	int k = add_node(0), s = add_node(1), r = add_node(1);
	wire_up(k, 1, 0, s, 2, 0);
	wire_up(s, 1, 0, r, 1, 0);
	CU_ASSERT_EQUAL(rnsc_transport_iface_set_local(N[s].t, 2, RNSC_TRANSPORT_LOCAL_CLIENT), 0);
	CU_ASSERT_EQUAL(rnsc_transport_iface_set_local(N[k].t, 1, RNSC_TRANSPORT_LOCAL_SHARED), 0);
	/* client churn on S: 5 and 6 attach, 5 leaves (not the last slot), 7 attaches into
	 * the vacated last slot and leaves, then 6 leaves */
	for (uint32_t id = 5; id <= 6; id++) {
		CU_ASSERT_EQUAL(rnsc_transport_iface_add(N[s].t, id, RNSC_TRANSPORT_MODE_FULL,
							 1000000000, 0),
				0);
		CU_ASSERT_EQUAL(
			rnsc_transport_iface_set_local(N[s].t, id, RNSC_TRANSPORT_LOCAL_CLIENT), 0);
	}
	CU_ASSERT_EQUAL(rnsc_transport_iface_remove(N[s].t, 5), 0);
	CU_ASSERT_EQUAL(
		rnsc_transport_iface_add(N[s].t, 7, RNSC_TRANSPORT_MODE_FULL, 1000000000, 0), 0);
	CU_ASSERT_EQUAL(rnsc_transport_iface_set_local(N[s].t, 7, RNSC_TRANSPORT_LOCAL_CLIENT), 0);
	CU_ASSERT_EQUAL(rnsc_transport_iface_remove(N[s].t, 7), 0);
	CU_ASSERT_EQUAL(rnsc_transport_iface_remove(N[s].t, 6), 0);
	rnsc_identity idk;
	uint8_t dk[16], lid[16];
	uint64_t rx0 = rnsc_transport_get_stats(N[s].t)->rx;
	dest_on(k, r, &idk, dk, 1); /* R rebroadcasts it back to S meanwhile */
	CU_ASSERT(rnsc_transport_get_stats(N[s].t)->rx >= rx0 + 2); /* the echo reached S */
	rnsc_transport_path p;
	CU_ASSERT_EQUAL_FATAL(rnsc_transport_path_get(N[s].t, dk, &p), 0);
	CU_ASSERT(p.hops == 0 && p.iface == 2);
	/* S asks R (a path response from R, 2 hops at S): still the client's path */
	CU_ASSERT_EQUAL(rnsc_transport_request_path(N[s].t, dk, 0, 0, NOW), 0);
	pump();
	tick_all(NOW + 3000, 100);
	CU_ASSERT_EQUAL_FATAL(rnsc_transport_path_get(N[s].t, dk, &p), 0);
	CU_ASSERT(p.hops == 0 && p.iface == 2);
	CU_ASSERT_EQUAL(rnsc_transport_link_open(N[r].t, dk, lid, NOW), 0);
	NOW += 20;
	pump();
	CU_ASSERT_EQUAL(N[k].established, 1);
	CU_ASSERT_EQUAL(N[r].established, 1);
	CU_ASSERT_EQUAL(rnsc_transport_get_stats(N[s].t)->links_relayed, 1);
	exchange(r, k, 2);
	rnsc_identity_free(&idk);
	net_reset();
}

int main(void)
{
	if (engine_env_open("transport_link_test", 0x9E3779B97F4A7C15u))
		return 1;
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("transport_link", NULL, NULL);
	CU_add_test(s, "direct link: establish, data, proofs, keepalive, close", test_direct);
	CU_add_test(s, "link through a transport node, MTU clamped", test_through_transport);
	CU_add_test(s, "next hop without MTU discovery: base MTU", test_clamp_to_base);
	CU_add_test(s, "link_mtu_discovery off: the base MTU is signalled", test_mtu_discovery_off);
	CU_add_test(s, "refused request: timeout, link table expiry", test_refused_and_expiry);
	CU_add_test(s, "lost LRPROOF: both sides time out", test_lost_proof);
	CU_add_test(s, "link never established: path expired and rediscovered",
		    test_link_rediscovery);
	CU_add_test(s, "link packets bound to the link's interface", test_interface_binding);
	CU_add_test(s, "link to a local client after its announce came back",
		    test_local_client_echo);
	int rc = rnsc_cu_run();
	engine_env_close();
	return rc;
}
