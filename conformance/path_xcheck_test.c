/* SPDX-License-Identifier: MIT */
/*
 * Path behaviour of the transport engine (src/lib/transport.c, transport_path.c,
 * transport_link.c) against the reference's own Transport (RNS.Transport.inbound, jobs,
 * mark_path_*, expire_path), driven through interop/python/rnsc_transportharness.py with
 * the clock pinned on both sides:
 *
 *   states     random sequences of announces for one destination (hops, emissions, repeated
 *              random blobs, interface modes), path state marks (unknown / unresponsive /
 *              responsive), expiries and clock steps past every path lifetime, with both
 *              sides' jobs run at each step: after every step the path entry, the path
 *              state (present or not, and its value) and the mark/expire results agree;
 *   links      a relayed link request (HEADER_2 through this node, taken over 1..3 hops, on
 *              any interface and mode including BOUNDARY) for a destination 1..4 hops away
 *              is never proved: as the clock steps past its proof timeout both sides drop
 *              the link table entry, mark (or not) the path unresponsive, send the same
 *              rediscovery path requests on the same interfaces at the same times (tags
 *              aside: each side draws its own), and end with the same path table; repeated
 *              failures within PATH_REQUEST_MI are throttled alike, an expired path that is
 *              culled before the timeout takes the "path is missing" branch, and a newer
 *              announce after the mark replaces the path as the reference's rule says.
 *
 * The reference is mandatory: when it cannot be imported the test fails (never skips).
 *   own links  links this node opens itself (RNS.Link in the reference, its own watchdog run
 *              a round at each step) to a destination 0..3 hops away, never proved: both
 *              sides compute the same establishment timeout, and as the clock steps past it
 *              both drop the pending link and, on a node without transport, expire the path
 *              and send the same rediscovery path request (throttled by PATH_REQUEST_MI
 *              alike); on a transport node the path stays. (A shared instance's client,
 *              which leaves the request to the instance, is not covered: the harness's
 *              interfaces are not LocalClientInterfaces, so hops would differ.) Steps are more than links_check_interval
 *              (1 s) apart: the reference looks at closed pending links once a second, rnsc
 *              when the link closes.
 *
 *   handlers   announce handlers with and without aspect filters ("rnsc.x1", "rnsc", another
 *              app's name, none) and path response opt-in, added and deregistered while
 *              announces (live and path responses, several identities and aspects) arrive:
 *              after every frame both sides made the same handler calls in the same order
 *              (handler, destination, app data, packet hash, path response flag, announced
 *              key); a deregistered local destination answers no path request on either
 *              side, a registered one answers alike.
 *
 * The reference is mandatory: when it cannot be imported the test fails (never skips).
 * RNSC_XT_SEED picks the seed (default fixed, so CI runs are reproducible); RNSC_XT_TRACE=1
 * prints each step of the link sequences.
 */
#include "xt_common.h"

static unsigned n_steps, n_state_cmp, n_links_failed, n_prs_cmp, n_marked_unresponsive,
	n_unresp_replaced, n_own_links, n_own_failed, n_own_rediscovered, n_handler_calls,
	n_handler_filtered, n_removed_unanswered;

/* pair_open() with the interface policy of the harness's interfaces: no ingress control
 * (held announces), no announce rate target. */
static int pair_open_bare(pair *p, rnsc_ctx *ctx, int transport_enabled, int n_if, const int *modes)
{
	int rc = pair_open(p, ctx, transport_enabled, n_if, modes);
	for (int i = 0; rc == 0 && i < n_if; i++) {
		rnsc_transport_iface_policy pol;
		rnsc_transport_iface_policy_default(p->t, &pol);
		pol.ic.enabled = 0;
		pol.has_rate_target = 0;
		rc = rnsc_transport_iface_set_policy(p->t, (uint32_t)i, &pol, 0);
	}
	return rc;
}

/* ---- comparisons ------------------------------------------------------------------------- */

static void compare_path_state(pair *p, const uint8_t dest[HL], const char *what)
{
	n_state_cmp++;
	int st = rnsc_transport_path_state(p->t, dest);
	rnsc_refwire_res r;
	int rc = XT(&r, "b", "path_state", BY(dest, HL));
	CHECK(rc == 0 && r.n == 1, "%s: harness path_state(): %s", what, rnsc_err_name(rc));
	if (rc == 0 && r.n == 1) {
		long long mine = st == RNSC_ERR_NOTFOUND ? -1 : st;
		CHECK(mine == r.item[0].i, "%s: path state rnsc %lld, reference %lld", what, mine,
		      r.item[0].i);
	}
	rnsc_refwire_res_free(&r);
	rc = XT(&r, "s", "table_keys", "path_states");
	CHECK(rc == 0 && r.n == 1 && r.item[0].len == rnsc_transport_path_state_count(p->t) * HL,
	      "%s: path states rnsc %zu, reference %zu", what,
	      rnsc_transport_path_state_count(p->t), rc == 0 && r.n ? r.item[0].len / HL : 0);
	rnsc_refwire_res_free(&r);
}

/* The whole path table, entry by entry (every key the reference holds, and the counts). */
static void compare_tables(pair *p, const char *what)
{
	rnsc_refwire_res r;
	int rc = XT(&r, "s", "table_keys", "path_table");
	CHECK(rc == 0 && r.n == 1, "%s: harness table_keys(): %s", what, rnsc_err_name(rc));
	if (rc == 0 && r.n == 1) {
		CHECK(r.item[0].len == rnsc_transport_path_count(p->t) * HL,
		      "%s: paths rnsc %zu, reference %zu", what, rnsc_transport_path_count(p->t),
		      r.item[0].len / HL);
		uint8_t keys[8 * HL];
		size_t n = r.item[0].len / HL;
		if (n > 8)
			n = 8;
		memcpy(keys, r.item[0].p, n * HL);
		rnsc_refwire_res_free(&r);
		for (size_t i = 0; i < n; i++) {
			compare_state(p, keys + i * HL, 0, what);
			compare_path_state(p, keys + i * HL, what);
		}
	} else {
		rnsc_refwire_res_free(&r);
	}
	rc = XT(&r, "s", "table_keys", "link_table");
	CHECK(rc == 0 && r.n == 1 && r.item[0].len == rnsc_transport_link_table_count(p->t) * HL,
	      "%s: link table rnsc %zu, reference %zu", what, rnsc_transport_link_table_count(p->t),
	      rc == 0 && r.n ? r.item[0].len / HL : 0);
	rnsc_refwire_res_free(&r);
}

/* Path requests sent: (interface, frame without its 16-byte tag). */
#define MAX_SENT 64
typedef struct sent {
	size_t n;
	uint32_t iface[MAX_SENT];
	uint8_t frame[MAX_SENT][RNSC_MTU];
	size_t len[MAX_SENT];
} sent;

static int is_pathreq(pair *p, const uint8_t *raw, size_t len)
{
	uint8_t prd[HL];
	return len > 2 + HL + 1 + HL && (raw[0] & 0x40) == 0 && raw[0] == 0x08 &&
	       rnsc_pathreq_destination(p->ctx, prd) == 0 && memcmp(raw + 2, prd, HL) == 0;
}

static void sent_add(sent *s, uint32_t ifc, const uint8_t *raw, size_t len)
{
	if (s->n >= MAX_SENT || len < 16 || len > RNSC_MTU)
		return;
	s->iface[s->n] = ifc;
	memcpy(s->frame[s->n], raw, len - 16); /* the request tag is each side's own draw */
	s->len[s->n] = len - 16;
	s->n++;
}

/* rnsc's outbox: its path requests; the rest (announce rebroadcasts) is not compared. */
static void take_rnsc(pair *p, sent *s)
{
	uint8_t buf[RNSC_MTU + HL];
	uint32_t ifc;
	int n;
	while ((n = rnsc_transport_outbox_pop(p->t, &ifc, buf, sizeof(buf))) > 0)
		if (is_pathreq(p, buf, (size_t)n))
			sent_add(s, ifc, buf, (size_t)n);
}

static int sent_equal(const sent *a, const sent *b)
{
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (a->iface[i] != b->iface[i] || a->len[i] != b->len[i] ||
		    memcmp(a->frame[i], b->frame[i], a->len[i]) != 0)
			return 0;
	return 1;
}

/* Both sides' jobs at now. The reference's discovery path request sender runs inside its
 * jobs() (its sleeps advance its clock); rnsc's sends one every
 * RNSC_DISCOVERY_PR_TX_THROTTLE_MS, so rnsc is ticked at those times too. */
static void jobs_both(pair *p, uint64_t now, const char *what)
{
	uint8_t rand[16 * MAX_SENT];
	rnd(rand, sizeof(rand));
	rnsc_refwire_res r;
	int rc = XT(&r, "ib", "jobs", LL(now), BY(rand, sizeof(rand)));
	CHECK(rc == 0 && r.n >= 1, "%s: harness jobs(): %s", what, rnsc_err_name(rc));
	sent ref = {0}, mine = {0};
	for (size_t i = 1; rc == 0 && i + 1 < r.n; i += 2) {
		const uint8_t *raw = r.item[i].p;
		size_t len = r.item[i].len;
		if (!is_pathreq(p, raw, len))
			continue;
		if (r.item[i + 1].i < 0) /* broadcast: every interface, in order */
			for (int k = 0; k < p->n_if; k++)
				sent_add(&ref, (uint32_t)k, raw, len);
		else
			sent_add(&ref, (uint32_t)r.item[i + 1].i, raw, len);
	}
	rnsc_refwire_res_free(&r);
	rc = rnsc_transport_tick(p->t, now);
	CHECK(rc == 0, "%s: tick: %s", what, rnsc_err_name(rc));
	take_rnsc(p, &mine);
	for (uint64_t at = now; rnsc_transport_rediscovery_pending(p->t) > 0;) {
		at += RNSC_DISCOVERY_PR_TX_THROTTLE_MS;
		rc = rnsc_transport_tick(p->t, at);
		CHECK(rc == 0, "%s: tick: %s", what, rnsc_err_name(rc));
		take_rnsc(p, &mine);
		if (rc)
			break;
	}
	n_prs_cmp += (unsigned)ref.n;
	if (!sent_equal(&mine, &ref) && g_fail_msgs < 30) {
		for (size_t i = 0; i < mine.n || i < ref.n; i++) {
			fprintf(stderr, "    #%zu rnsc", i);
			for (size_t k = 0; i < mine.n && k < mine.len[i]; k++)
				fprintf(stderr, "%02x", mine.frame[i][k]);
			fprintf(stderr, " @%u\n    #%zu ref  ", i < mine.n ? mine.iface[i] : 99, i);
			for (size_t k = 0; i < ref.n && k < ref.len[i]; k++)
				fprintf(stderr, "%02x", ref.frame[i][k]);
			fprintf(stderr, " @%u\n", i < ref.n ? ref.iface[i] : 99);
		}
	}
	CHECK(sent_equal(&mine, &ref), "%s: rediscovery path requests rnsc %zu, reference %zu",
	      what, mine.n, ref.n);
}

/* ---- states and replacement ---------------------------------------------------------------- */

static const int MODES3[3] = {RNSC_TRANSPORT_MODE_FULL, RNSC_TRANSPORT_MODE_ACCESS_POINT,
			      RNSC_TRANSPORT_MODE_ROAMING};

static void test_states(void)
{
	g_case = "states";
	rnsc_ctx *ctx = conf_ctx_for("openssl");
	CU_ASSERT_PTR_NOT_NULL_FATAL(ctx);
	rnsc_crypto_set_rng(ctx, test_rng, NULL);
	static const uint64_t jumps[] = {
		RNSC_ROAMING_PATH_TIME_MS + 1000, RNSC_AP_PATH_TIME_MS + 1000,
		RNSC_PATHFINDER_E_MS + 1000,      RNSC_ROAMING_PATH_TIME_MS - 1000,
		RNSC_TABLES_CULL_INTERVAL_MS + 1,
	};
	for (int seq = 0; seq < 120; seq++) {
		pair p;
		int rc = pair_open_bare(&p, ctx, (int)below(2), 3, MODES3);
		CHECK(rc == 0, "pair_open: %s", rnsc_err_name(rc));
		if (rc) {
			pair_close(&p);
			break;
		}
		ann base;
		memset(&base, 0, sizeof(base));
		ann_identity(&base);
		struct {
			uint8_t rand16[16];
			uint64_t t;
		} em[4];
		uint64_t t0 = g_now / 1000;
		for (int k = 0; k < 4; k++) {
			rnd(em[k].rand16, 16);
			em[k].t = t0 + (uint64_t)(k * 2) - 6;
		}
		em[1].t = em[0].t; /* same second, other random bytes */
		uint8_t tid[HL];
		rnd(tid, HL);
		for (int step = 0; step < 16; step++) {
			char what[64];
			snprintf(what, sizeof(what), "sequence %d step %d", seq, step);
			n_steps++;
			unsigned op = below(10);
			if (op < 5 || step == 0) { /* an announce */
				ann a = base;
				int k = (int)below(4);
				memcpy(a.rand16, em[k].rand16, 16);
				a.emitted_s = em[k].t;
				a.ht = below(2) ? RNSC_HEADER_2 : RNSC_HEADER_1;
				memcpy(a.tid, tid, HL);
				a.hops = below(5);
				rc = ann_build(&a);
				CHECK(rc == 0, "announce_build: %s", rnsc_err_name(rc));
				if (rc)
					break;
				memcpy(base.dest, a.dest, HL);
				g_now += 1 + below(3000);
				int was_unresp = rnsc_transport_path_is_unresponsive(p.t, a.dest);
				uint64_t added = rnsc_transport_get_stats(p.t)->paths_added;
				verdicts v;
				rc = ingest_both(&p, below(3), a.raw, a.len, g_now, NULL, &v);
				CHECK(rc == 0, "inbound: %s", rnsc_err_name(rc));
				CHECK(v.rnsc == v.ref, "%s: verdict rnsc %d, reference %d", what,
				      v.rnsc, v.ref);
				if (was_unresp &&
				    rnsc_transport_get_stats(p.t)->paths_added != added)
					n_unresp_replaced++;
			} else if (op < 8) { /* a mark */
				int state = (int)below(3);
				if (below(2))
					state = RNSC_PATH_STATE_UNRESPONSIVE;
				int mine = rnsc_transport_mark_path(p.t, base.dest, state);
				rnsc_refwire_res r;
				rc = XT(&r, "bi", "mark", BY(base.dest, HL), LL(state));
				CHECK(rc == 0 && r.n == 1 && r.item[0].i == mine,
				      "%s: mark %d rnsc %d, reference %lld", what, state, mine,
				      rc == 0 && r.n ? r.item[0].i : -9);
				rnsc_refwire_res_free(&r);
				if (mine == 1 && state == RNSC_PATH_STATE_UNRESPONSIVE)
					n_marked_unresponsive++;
			} else if (op < 9) { /* expire_path */
				int mine = rnsc_transport_expire_path(p.t, base.dest) == 0;
				rnsc_refwire_res r;
				rc = XT(&r, "b", "expire", BY(base.dest, HL));
				CHECK(rc == 0 && r.n == 1 && r.item[0].i == mine,
				      "%s: expire rnsc %d, reference %lld", what, mine,
				      rc == 0 && r.n ? r.item[0].i : -9);
				rnsc_refwire_res_free(&r);
			} else { /* time passes */
				g_now += below(2) ? jumps[below(5)] : 1 + below(8000);
			}
			jobs_both(&p, g_now, what);
			compare_state(&p, base.dest, 0, what);
			compare_path_state(&p, base.dest, what);
			drain(&p);
		}
		pair_close(&p);
	}
	rnsc_ctx_del(ctx);
	CHECK(n_marked_unresponsive >= 80 && n_unresp_replaced >= 12,
	      "only %u unresponsive marks, %u unresponsive paths replaced", n_marked_unresponsive,
	      n_unresp_replaced);
}

/* ---- failed relayed links ---------------------------------------------------------------- */

static const int MODES4[4] = {RNSC_TRANSPORT_MODE_FULL, RNSC_TRANSPORT_MODE_BOUNDARY,
			      RNSC_TRANSPORT_MODE_ACCESS_POINT, RNSC_TRANSPORT_MODE_ROAMING};

/* A link request in transport through this node (transport id tid) for dest, as received
 * with raw hop count hops (the node counts one more). */
static int link_request(uint8_t *raw, size_t *len, const uint8_t tid[HL], const uint8_t dest[HL],
			unsigned hops)
{
	uint8_t data[RNSC_LINK_REQUEST_LEN];
	rnd(data, sizeof(data));
	rnsc_packet q = {0};
	q.header_type = RNSC_HEADER_2;
	q.transport_type = RNSC_TRANSPORT_TRANSPORT;
	q.packet_type = RNSC_PKT_LINKREQUEST;
	q.dest_type = RNSC_DEST_SINGLE;
	q.context = RNSC_CTX_NONE;
	q.hops = (uint8_t)hops;
	memcpy(q.dest_hash, dest, HL);
	memcpy(q.transport_id, tid, HL);
	q.data = data;
	q.data_len = sizeof(data);
	int n = rnsc_packet_pack(raw, RNSC_MTU, &q, RNSC_MTU);
	if (n < 0)
		return n;
	*len = (size_t)n;
	return 0;
}

static void test_links(void)
{
	g_case = "links";
	rnsc_ctx *ctx = conf_ctx_for("openssl");
	CU_ASSERT_PTR_NOT_NULL_FATAL(ctx);
	rnsc_crypto_set_rng(ctx, test_rng, NULL);
	for (int seq = 0; seq < 160; seq++) {
		pair p;
		/* Link table entries exist on transport nodes (and for local clients). */
		int rc = pair_open_bare(&p, ctx, 1, 4, MODES4);
		CHECK(rc == 0, "pair_open: %s", rnsc_err_name(rc));
		if (rc) {
			pair_close(&p);
			break;
		}
		ann a;
		memset(&a, 0, sizeof(a));
		ann_identity(&a);
		a.ht = RNSC_HEADER_2;
		rnd(a.tid, HL);
		a.hops = below(2) ? 0 : below(4); /* one hop away in half the sequences */
		rnd(a.rand16, 16);
		a.emitted_s = g_now / 1000 - 5;
		rc = ann_build(&a);
		CHECK(rc == 0, "announce_build: %s", rnsc_err_name(rc));
		uint32_t path_if = below(4);
		verdicts v;
		g_now += 1000;
		rc = rc ? rc : ingest_both(&p, path_if, a.raw, a.len, g_now, NULL, &v);
		CHECK(rc == 0 && v.rnsc == v.ref, "inbound: %s", rnsc_err_name(rc));
		jobs_both(&p, g_now, "announce");
		drain(&p);
		for (int step = 0; rc == 0 && step < 14; step++) {
			char what[64];
			snprintf(what, sizeof(what), "sequence %d step %d", seq, step);
			n_steps++;
			unsigned op = below(8);
			if (getenv("RNSC_XT_TRACE"))
				fprintf(stderr, "%s: op %u at %llu (path %d, links %zu)\n", what,
					op, (unsigned long long)g_now,
					rnsc_transport_has_path(p.t, a.dest),
					rnsc_transport_link_table_count(p.t));
			if (op < 3) { /* a link request through us that will never be proved */
				uint8_t raw[RNSC_MTU];
				size_t len = 0;
				rc = link_request(raw, &len, p.tid, a.dest, below(3));
				CHECK(rc == 0, "link request: %s", rnsc_err_name(rc));
				g_now += 1 + below(2000);
				size_t before = rnsc_transport_link_table_count(p.t);
				rc = rc ? rc : ingest_both(&p, below(4), raw, len, g_now, NULL, &v);
				CHECK(rc == 0 && v.rnsc == v.ref, "%s: inbound: %s", what,
				      rnsc_err_name(rc));
				if (rnsc_transport_link_table_count(p.t) > before)
					n_links_failed++;
			} else if (op < 4) { /* the path goes away meanwhile */
				int mine = rnsc_transport_expire_path(p.t, a.dest) == 0;
				rnsc_refwire_res r;
				rc = XT(&r, "b", "expire", BY(a.dest, HL));
				CHECK(rc == 0 && r.n == 1 && r.item[0].i == mine,
				      "%s: expire rnsc %d, reference %lld", what, mine,
				      rc == 0 && r.n ? r.item[0].i : -9);
				rnsc_refwire_res_free(&r);
			} else if (op < 5) { /* the destination announces again, maybe farther */
				ann b = a;
				rnd(b.rand16, 16);
				b.emitted_s = g_now / 1000 + (below(2) ? 0 : 1);
				b.hops = below(5);
				if (below(3) == 0) { /* the very announce again, over more hops */
					b = a;
					b.hops = a.hops + 1 + below(2);
				}
				rc = ann_build(&b);
				CHECK(rc == 0, "announce_build: %s", rnsc_err_name(rc));
				g_now += 1 + below(1500);
				int was_unresp = rnsc_transport_path_is_unresponsive(p.t, a.dest);
				uint64_t added = rnsc_transport_get_stats(p.t)->paths_added;
				rc = rc ? rc
					: ingest_both(&p, below(4), b.raw, b.len, g_now, NULL, &v);
				CHECK(rc == 0 && v.rnsc == v.ref, "%s: inbound: %s", what,
				      rnsc_err_name(rc));
				if (was_unresp &&
				    rnsc_transport_get_stats(p.t)->paths_added != added)
					n_unresp_replaced++;
			} else { /* time passes: proof timeouts are 6 s per hop */
				g_now += below(3) ? 1000 + below(9000) : 20000 + below(30000);
			}
			if (rnsc_transport_path_is_unresponsive(p.t, a.dest))
				n_marked_unresponsive++;
			jobs_both(&p, g_now, what);
			compare_tables(&p, what);
			compare_path_state(&p, a.dest, what);
			rnsc_refwire_res r;
			rc = XT(&r, "b", "path_request_ts", BY(a.dest, HL));
			long long mine = (long long)rnsc_transport_path_request_time(p.t, a.dest);
			CHECK(rc == 0 && r.n == 1 && r.item[0].i == (mine ? mine : -1),
			      "%s: last path request rnsc %lld, reference %lld", what, mine,
			      rc == 0 && r.n ? r.item[0].i : -9);
			rnsc_refwire_res_free(&r);
			drain(&p);
		}
		pair_close(&p);
	}
	rnsc_ctx_del(ctx);
	/* the comparison must have seen rediscoveries happen, and paths marked by them */
	CHECK(n_links_failed >= 120 && n_prs_cmp >= 120, "only %u relayed links, %u path requests",
	      n_links_failed, n_prs_cmp);
}

/* ---- links this node opens -------------------------------------------------------------- */

static void test_own_links(void)
{
	g_case = "own links";
	rnsc_ctx *ctx = conf_ctx_for("openssl");
	CU_ASSERT_PTR_NOT_NULL_FATAL(ctx);
	rnsc_crypto_set_rng(ctx, test_rng, NULL);
	for (int seq = 0; seq < 120; seq++) {
		pair p;
		int te = below(4) == 0;
		int rc = pair_open_bare(&p, ctx, te, 4, MODES4);
		CHECK(rc == 0, "pair_open: %s", rnsc_err_name(rc));
		if (rc) {
			pair_close(&p);
			break;
		}
		uint8_t lids[16][HL];
		size_t n_lids = 0;
		ann a;
		memset(&a, 0, sizeof(a));
		ann_identity(&a);
		a.ht = below(2) ? RNSC_HEADER_2 : RNSC_HEADER_1;
		rnd(a.tid, HL);
		a.hops = below(4);
		rnd(a.rand16, 16);
		a.emitted_s = g_now / 1000 - 5;
		rc = rc ? rc : ann_build(&a);
		CHECK(rc == 0, "announce_build: %s", rnsc_err_name(rc));
		uint32_t in_if = below(4);
		verdicts v;
		g_now += 1500;
		rc = rc ? rc : ingest_both(&p, in_if, a.raw, a.len, g_now, NULL, &v);
		CHECK(rc == 0 && v.rnsc == v.ref, "inbound: %s", rnsc_err_name(rc));
		jobs_both(&p, g_now, "announce");
		drain(&p);
		for (int step = 0; rc == 0 && step < 12; step++) {
			char what[80];
			snprintf(what, sizeof(what), "sequence %d step %d (%s)", seq, step,
				 te ? "transport" : "no transport");
			n_steps++;
			unsigned op = below(8);
			if (getenv("RNSC_XT_TRACE"))
				fprintf(stderr, "%s: op %u at %llu (path %d, links %zu)\n", what,
					op, (unsigned long long)g_now,
					rnsc_transport_has_path(p.t, a.dest),
					rnsc_transport_link_count(p.t));
			/* more than links_check_interval since the last jobs() */
			g_now += 1001 + below(1500);
			if (op < 3 && rnsc_transport_has_path(p.t, a.dest)) { /* open a link */
				uint8_t lid[HL];
				rc = rnsc_transport_link_open(p.t, a.dest, lid, g_now);
				CHECK(rc == 0, "%s: link_open: %s", what, rnsc_err_name(rc));
				if (rc == 0 && n_lids < 16)
					memcpy(lids[n_lids++], lid, HL);
				const rnsc_link *l = rc ? NULL : rnsc_transport_link_get(p.t, lid);
				rnsc_refwire_res r;
				int xrc = XT(&r, "bssi", "link_open", BY(a.dest, HL), "rnsc",
					     a.aspect, LL(g_now));
				CHECK(xrc == 0 && r.n == 3, "%s: harness link_open(): %s", what,
				      rnsc_err_name(xrc));
				if (l && xrc == 0 && r.n == 3) {
					long long mine =
						(long long)rnsc_link_establishment_timeout_ms(l);
					CHECK(mine == r.item[1].i,
					      "%s: establishment timeout rnsc %lld ms, reference %lld ms",
					      what, mine, r.item[1].i);
					n_own_links++;
				}
				rnsc_refwire_res_free(&r);
				rc = rc ? rc : xrc;
			} else if (op < 4) { /* the path goes away meanwhile */
				int mine = rnsc_transport_expire_path(p.t, a.dest) == 0;
				rnsc_refwire_res r;
				rc = XT(&r, "b", "expire", BY(a.dest, HL));
				CHECK(rc == 0 && r.n == 1 && r.item[0].i == mine,
				      "%s: expire rnsc %d, reference %lld", what, mine,
				      rc == 0 && r.n ? r.item[0].i : -9);
				rnsc_refwire_res_free(&r);
			} else if (op < 5) { /* the destination announces again */
				ann b = a;
				rnd(b.rand16, 16);
				b.emitted_s = g_now / 1000;
				b.hops = below(4);
				rc = ann_build(&b);
				CHECK(rc == 0, "announce_build: %s", rnsc_err_name(rc));
				rc = rc ? rc
					: ingest_both(&p, below(4), b.raw, b.len, g_now, NULL, &v);
				CHECK(rc == 0 && v.rnsc == v.ref, "%s: inbound: %s", what,
				      rnsc_err_name(rc));
			} else { /* time passes: establishment takes 6 s per hop + the first hop */
				g_now += below(3) ? below(9000) : 10000 + below(30000);
			}
			/* jobs_both() ticks rnsc on through the discovery sender's sleeps (up to
			 * one throttle interval here) while the reference's watchdogs and table
			 * pass ran at now only: a link timing out, or the table pass falling due,
			 * inside that window would happen earlier in rnsc than the reference's
			 * next jobs() could notice. Step past such a deadline, on both sides. */
			rnsc_refwire_res tr;
			rc = XT(&tr, "s", "timer", "tables_last_culled");
			CHECK(rc == 0 && tr.n == 1, "%s: harness timer(): %s", what,
			      rnsc_err_name(rc));
			uint64_t cull_due =
				rc == 0 && tr.n == 1
					? (uint64_t)tr.item[0].i + RNSC_TABLES_CULL_INTERVAL_MS + 1
					: UINT64_MAX;
			rnsc_refwire_res_free(&tr);
			for (int moved = 1; moved;) {
				moved = 0;
				for (size_t i = 0; i <= n_lids; i++) {
					const rnsc_link *l =
						i < n_lids ? rnsc_transport_link_get(p.t, lids[i])
							   : NULL;
					uint64_t d = i == n_lids ? cull_due
						     : l         ? rnsc_link_next_deadline(l)
								 : UINT64_MAX;
					if (d > g_now &&
					    d <= g_now + 2 * RNSC_DISCOVERY_PR_TX_THROTTLE_MS) {
						g_now = d + 1;
						moved = 1;
					}
				}
			}
			size_t links_before = rnsc_transport_link_count(p.t);
			uint64_t pr_before = rnsc_transport_get_stats(p.t)->pr_rediscovery;
			jobs_both(&p, g_now, what);
			size_t closed = links_before - rnsc_transport_link_count(p.t);
			n_own_failed += (unsigned)closed;
			n_own_rediscovered +=
				(unsigned)(rnsc_transport_get_stats(p.t)->pr_rediscovery -
					   pr_before);
			compare_tables(&p, what);
			compare_path_state(&p, a.dest, what);
			rnsc_refwire_res r;
			rc = XT(&r, "", "link_counts");
			CHECK(rc == 0 && r.n == 2 &&
				      (size_t)(r.item[0].i + r.item[1].i) ==
					      rnsc_transport_link_count(p.t),
			      "%s: own links rnsc %zu, reference %lld pending + %lld active", what,
			      rnsc_transport_link_count(p.t),
			      rc == 0 && r.n == 2 ? r.item[0].i : -9,
			      rc == 0 && r.n == 2 ? r.item[1].i : -9);
			rnsc_refwire_res_free(&r);
			rc = XT(&r, "b", "path_request_ts", BY(a.dest, HL));
			long long mine = (long long)rnsc_transport_path_request_time(p.t, a.dest);
			CHECK(rc == 0 && r.n == 1 && r.item[0].i == (mine ? mine : -1),
			      "%s: last path request rnsc %lld, reference %lld", what, mine,
			      rc == 0 && r.n ? r.item[0].i : -9);
			rnsc_refwire_res_free(&r);
			drain(&p);
		}
		pair_close(&p);
	}
	rnsc_ctx_del(ctx);
	/* the comparison must have seen links fail and rediscoveries follow */
	CHECK(n_own_links >= 100 && n_own_failed >= 80 && n_own_rediscovered >= 30,
	      "only %u own links opened, %u failed, %u rediscoveries", n_own_links, n_own_failed,
	      n_own_rediscovered);
}

/* ---- announce handlers and deregistration ----------------------------------------------- */

#define MAX_CALLS 16
typedef struct hcall {
	int idx, is_pr;
	uint8_t dest[HL], ph[RNSC_HASHLEN], pub[64];
	uint8_t app[64];
	size_t app_len;
	int has_app;
} hcall;
static hcall g_calls[MAX_CALLS];
static size_t g_n_calls;
static int g_handler_idx[8];

static void on_handler(void *ud, const uint8_t dest[HL], const rnsc_identity *announced,
		       const uint8_t *app_data, size_t app_len, const uint8_t ph[RNSC_HASHLEN],
		       int is_pr)
{
	if (g_n_calls >= MAX_CALLS)
		return;
	hcall *c = &g_calls[g_n_calls++];
	memset(c, 0, sizeof(*c));
	c->idx = *(const int *)ud;
	c->is_pr = is_pr;
	memcpy(c->dest, dest, HL);
	memcpy(c->ph, ph, RNSC_HASHLEN);
	memcpy(c->pub, announced->x_pub, 32);
	memcpy(c->pub + 32, announced->ed_pub, 32);
	c->has_app = app_data != NULL;
	c->app_len = app_len < sizeof(c->app) ? app_len : sizeof(c->app);
	if (app_data)
		memcpy(c->app, app_data, c->app_len);
}

static void compare_calls(const char *what)
{
	rnsc_refwire_res r;
	int rc = XT(&r, "", "handler_calls");
	CHECK(rc == 0 && r.n == 1, "%s: harness handler_calls(): %s", what, rnsc_err_name(rc));
	size_t n = rc == 0 && r.n == 1 ? (size_t)r.item[0].i : 0;
	rnsc_refwire_res_free(&r);
	CHECK(n == g_n_calls, "%s: handler calls rnsc %zu, reference %zu", what, g_n_calls, n);
	for (size_t i = 0; i < n && i < g_n_calls; i++) {
		rc = XT(&r, "i", "handler_call", LL(i));
		CHECK(rc == 0 && r.n == 6, "%s: harness handler_call(): %s", what,
		      rnsc_err_name(rc));
		if (rc || r.n != 6) {
			rnsc_refwire_res_free(&r);
			break;
		}
		const rnsc_refwire_item *it = r.item;
		const hcall *c = &g_calls[i];
		int app_ref = it[2].kind == RNSC_RW_BYTES;
		CHECK(it[0].i == g_handler_idx[c->idx] && it[1].len == HL &&
			      memcmp(it[1].p, c->dest, HL) == 0 && it[4].i == c->is_pr &&
			      it[3].len == RNSC_HASHLEN &&
			      memcmp(it[3].p, c->ph, RNSC_HASHLEN) == 0 && it[5].len == 64 &&
			      memcmp(it[5].p, c->pub, 64) == 0,
		      "%s: handler call %zu differs (handler rnsc %d, reference %lld)", what, i,
		      g_handler_idx[c->idx], it[0].i);
		CHECK(app_ref == c->has_app &&
			      (!app_ref || (it[2].len == c->app_len &&
					    memcmp(it[2].p, c->app, c->app_len) == 0)),
		      "%s: handler call %zu app data differs", what, i);
		rnsc_refwire_res_free(&r);
	}
	n_handler_calls += (unsigned)n;
	rc = XT(&r, "", "handler_calls_clear");
	rnsc_refwire_res_free(&r);
	g_n_calls = 0;
}

/* An announce (a path response) for dest among a frame's bytes. */
static int announces(const uint8_t *raw, size_t len, const uint8_t dest[HL])
{
	size_t off = (raw[0] & 0x40) ? 2 + HL : 2;
	return len >= off + HL && (raw[0] & 0x03) == RNSC_PKT_ANNOUNCE &&
	       memcmp(raw + off, dest, HL) == 0;
}

static void test_handlers(void)
{
	g_case = "handlers";
	rnsc_ctx *ctx = conf_ctx_for("openssl");
	CU_ASSERT_PTR_NOT_NULL_FATAL(ctx);
	rnsc_crypto_set_rng(ctx, test_rng, NULL);
	static const char *filters[] = {"rnsc.x1", "rnsc.x2", "rnsc", "other.x1", NULL};
	static const char *aspects[] = {"x1", "x2"};
	static int idx_store[8] = {0, 1, 2, 3, 4, 5, 6, 7};
	for (int seq = 0; seq < 60; seq++) {
		pair p;
		/* rnsc's interfaces without a bitrate: the harness records the reference's
		 * rebroadcasts instead of passing them through Transport.outbound, so its
		 * announce cap never holds a recursive path request back; rnsc's would. */
		uint64_t bitrate = g_bitrate;
		g_bitrate = 0;
		int rc = pair_open_bare(&p, ctx, (int)below(2), 2, MODES3);
		g_bitrate = bitrate;
		CHECK(rc == 0, "pair_open: %s", rnsc_err_name(rc));
		if (rc) {
			pair_close(&p);
			break;
		}
		uint32_t handles[8];
		int live[8] = {0};
		int n_h = 0;
		ann ids[3];
		for (int k = 0; k < 3; k++) {
			memset(&ids[k], 0, sizeof(ids[k]));
			ann_identity(&ids[k]);
		}
		uint8_t lprv[64], local[HL];
		rnd(lprv, sizeof(lprv));
		rc = pair_dest(&p, lprv, "local", local);
		CHECK(rc == 0, "pair_dest: %s", rnsc_err_name(rc));
		int local_live = rc == 0;
		g_n_calls = 0;
		for (int step = 0; rc == 0 && step < 24; step++) {
			char what[64];
			snprintf(what, sizeof(what), "sequence %d step %d", seq, step);
			n_steps++;
			unsigned op = below(10);
			g_now += 1000 + below(3000);
			if ((op < 2 || step < 2) && n_h < 8) { /* a handler */
				const char *f = filters[below(5)];
				int prs = (int)below(2);
				rc = rnsc_transport_announce_handler_add(
					p.t, f, prs, on_handler, &idx_store[n_h], &handles[n_h]);
				CHECK(rc == 0, "%s: handler_add: %s", what, rnsc_err_name(rc));
				rnsc_refwire_res r;
				rc = rc ? rc
					: XT(&r, "bi", "handler_add", (const uint8_t *)f,
					     f ? strlen(f) : 0, LL(prs));
				CHECK(rc == 0 && r.n == 1, "%s: harness handler_add(): %s", what,
				      rnsc_err_name(rc));
				g_handler_idx[n_h] = rc == 0 && r.n == 1 ? (int)r.item[0].i : -1;
				rnsc_refwire_res_free(&r);
				live[n_h++] = 1;
			} else if (op < 3 && n_h > 0) { /* one goes */
				int k = (int)below((unsigned)n_h);
				if (live[k]) {
					rc = rnsc_transport_announce_handler_remove(p.t,
										    handles[k]);
					CHECK(rc == 0, "%s: handler_remove: %s", what,
					      rnsc_err_name(rc));
					rnsc_refwire_res r;
					rc = rc ? rc
						: XT(&r, "i", "handler_remove",
						     LL(g_handler_idx[k]));
					rnsc_refwire_res_free(&r);
					live[k] = 0;
				}
			} else if (op < 4 && local_live && below(3) == 0) { /* deregistration */
				rc = rnsc_transport_dest_remove(p.t, local);
				CHECK(rc == 0, "%s: dest_remove: %s", what, rnsc_err_name(rc));
				rnsc_refwire_res r;
				rc = rc ? rc : XT(&r, "b", "dest_remove", BY(local, HL));
				CHECK(rc == 0 && r.n == 1 && r.item[0].i == 1,
				      "%s: harness dest_remove(): %s", what, rnsc_err_name(rc));
				rnsc_refwire_res_free(&r);
				local_live = 0;
			} else if (op < 5) { /* a path request for the local destination */
				uint8_t tag[HL];
				rnd(tag, HL);
				rnsc_refwire_res r;
				rc = rnsc_refwire_call(conf_ref(), &r, "pathreq_build", "bbb",
						       BY(local, HL), BY(tag, HL), NULL,
						       (size_t)HL);
				uint8_t req[RNSC_MTU];
				size_t req_len = 0;
				if (rc == 0 && r.n == 1 && r.item[0].len <= sizeof(req)) {
					memcpy(req, r.item[0].p, r.item[0].len);
					req_len = r.item[0].len;
				}
				rnsc_refwire_res_free(&r);
				CHECK(req_len > 0, "%s: pathreq_build: %s", what,
				      rnsc_err_name(rc));
				uint8_t rand16[16];
				rnd(rand16, 16);
				verdicts v;
				uint32_t pr_if = below(2);
				rc = rc ? rc
					: ingest_both(&p, pr_if, req, req_len, g_now, rand16, &v);
				CHECK(rc == 0, "%s: inbound: %s", what, rnsc_err_name(rc));
				/* a transport node forwards a request it cannot answer: only an
				 * announce for the destination is an answer */
				size_t mine = rnsc_transport_outbox_count(p.t);
				int mine_answered = 0;
				uint8_t buf[RNSC_MTU + HL];
				uint32_t ifc;
				int len;
				while ((len = rnsc_transport_outbox_pop(p.t, &ifc, buf,
									sizeof(buf))) > 0)
					mine_answered |= announces(buf, (size_t)len, local);
				int ref_answered =
					v.ref_sent > 0 && announces(v.ref_frame, v.ref_len, local);
				CHECK(mine == v.ref_sent && mine_answered == ref_answered &&
					      mine_answered == local_live,
				      "%s: path request for a local destination (%s): rnsc sent %zu "
				      "(answer %d), reference %zu (answer %d)",
				      what, local_live ? "registered" : "deregistered", mine,
				      mine_answered, v.ref_sent, ref_answered);
				if (mine != v.ref_sent && getenv("RNSC_XT_TRACE")) {
					fprintf(stderr, "    transport %d, reference frame @%lld ",
						p.transport_enabled, v.ref_attached);
					for (size_t k = 0; k < v.ref_len; k++)
						fprintf(stderr, "%02x", v.ref_frame[k]);
					fprintf(stderr, "\n");
				}
				if (!local_live && !mine_answered && !ref_answered)
					n_removed_unanswered++;
			} else { /* an announce */
				ann a = ids[below(3)];
				snprintf(a.aspect, sizeof(a.aspect), "%s", aspects[below(2)]);
				a.app = (int)below(2);
				if (a.app) {
					a.app_len = 1 + below(sizeof(a.app_data));
					rnd(a.app_data, a.app_len);
				}
				a.pr = below(3) == 0;
				a.ht = below(2) ? RNSC_HEADER_2 : RNSC_HEADER_1;
				rnd(a.tid, HL);
				a.hops = below(4);
				rnd(a.rand16, 16);
				a.emitted_s = g_now / 1000;
				rc = ann_build(&a);
				CHECK(rc == 0, "announce_build: %s", rnsc_err_name(rc));
				verdicts v;
				rc = rc ? rc
					: ingest_both(&p, below(2), a.raw, a.len, g_now, NULL, &v);
				CHECK(rc == 0 && v.rnsc == v.ref, "%s: inbound: %s", what,
				      rnsc_err_name(rc));
				if (g_n_calls < (size_t)n_h)
					n_handler_filtered++;
				drain(&p); /* rebroadcasts: not what jobs_both() compares */
			}
			compare_calls(what);
			jobs_both(&p, g_now, what);
			drain(&p);
		}
		pair_close(&p);
	}
	rnsc_ctx_del(ctx);
	CHECK(n_handler_calls >= 300 && n_handler_filtered >= 100 && n_removed_unanswered >= 10,
	      "only %u handler calls, %u announces some handler filtered out, %u path requests "
	      "for deregistered destinations",
	      n_handler_calls, n_handler_filtered, n_removed_unanswered);
}

/* ---- runner ----------------------------------------------------------------------------------- */

int main(void)
{
	const char *e = getenv("RNSC_XT_SEED");
	if (e && *e)
		g_seed = strtoull(e, NULL, 0);
	g_rng = g_seed ? g_seed : 1;
	g_now = 1700000000000ull + (rnd64() % 100000000000ull);
	g_bitrate = 62500; /* as the harness's interfaces: the same link proof timeouts */

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	int rc = conf_setup();
	if (rc == 0)
		rc = install_harness();
	if (rc != 0) {
		fprintf(stderr, "path_xcheck_test: FAILED: set-up failed: %s\n", rnsc_strerror(rc));
		CU_cleanup_registry();
		return 1;
	}
	CU_pSuite s = CU_add_suite("path behaviour vs reference Transport", NULL, NULL);
	CU_add_test(s, "path states, marks, expiry and replacement", test_states);
	CU_add_test(s, "failed relayed links: rediscovery", test_links);
	CU_add_test(s, "failed links opened here: rediscovery", test_own_links);
	CU_add_test(s, "announce handlers: aspect filters, path responses, deregistration",
		    test_handlers);
	fprintf(stderr, "path_xcheck_test: rns %s embedded; seed 0x%llx\n",
		rnsc_pyref_version(conf_ref()), (unsigned long long)g_seed);
	int failures = rnsc_cu_run();
	fprintf(stderr,
		"path_xcheck_test: %u steps, %u reference-built announces, %u path entry and %u "
		"path state comparisons, %u relayed links left unproved, %u rediscovery path "
		"requests compared, %u unresponsive marks seen, %u unresponsive paths replaced, "
		"%u own links opened, %u of them failed, %u rediscoveries after them, %u handler "
		"calls, %u path requests for deregistered destinations unanswered; %d failures\n",
		n_steps, n_announces, n_entries, n_state_cmp, n_links_failed, n_prs_cmp,
		n_marked_unresponsive, n_unresp_replaced, n_own_links, n_own_failed,
		n_own_rediscovered, n_handler_calls, n_removed_unanswered, failures);
	conf_teardown();
	return failures;
}
