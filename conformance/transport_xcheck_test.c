/* SPDX-License-Identifier: MIT */
/*
 * The transport engine (src/lib/transport.c) against the reference's own Transport logic:
 * the same raw frames go into rnsc_transport_ingest() and into RNS.Transport.inbound() of
 * the embedded reference, driven through interop/python/rnsc_transportharness.py (which
 * documents every stand-in it uses for the state of a running RNS.Reticulum()), and the
 * resulting decisions are compared:
 *
 *   announces  announces the reference built (ratchet, app data, PATH_RESPONSE, hops,
 *              HEADER_2 through a transport id; every interface mode) are accepted and give
 *              the same path entry (timestamp, next hop, hops, expiry by interface mode,
 *              number of random blobs, receiving interface, packet hash) and the same
 *              remembered public key / app data / ratchet;
 *   replace    random sequences of announces for one destination (better and worse hops,
 *              newer and older emissions, repeated random blobs, clock jumps past every
 *              expiry) end in the same path entry after every step;
 *   duplicates mixed packet streams with repeats get the same packet_filter verdict frame by
 *              frame and leave the same number of remembered hashes and path request tags;
 *   path req   a path request (built by the reference) for a local destination is answered
 *              on the requesting interface with the byte-identical path response the
 *              reference sends (randomness and clock pinned on both sides), duplicates are
 *              not answered, and the reference accepts rnsc's response as a path.
 *
 * The reference is mandatory: when it cannot be imported the test fails (never skips).
 * RNSC_XT_SEED picks the seed (default fixed, so CI runs are reproducible).
 */
#include "xt_common.h"

/* replacement test: outcomes seen */
static unsigned long long n_replaced, n_ignored;

static void test_announces_on(const char *backend)
{
	rnsc_ctx *ctx = conf_ctx_for(backend);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ctx);
	rnsc_crypto_set_rng(ctx, test_rng, NULL);
	for (int te = 0; te < 2; te++) {
		pair p;
		int rc = pair_open(&p, ctx, te, MAX_IF, ALL_MODES);
		CHECK(rc == 0, "pair_open: %s", rnsc_err_name(rc));
		if (rc) {
			pair_close(&p);
			break;
		}
		for (int i = 0; i < 24; i++) {
			ann a;
			memset(&a, 0, sizeof(a));
			ann_identity(&a);
			ann_random_shape(&a);
			a.emitted_s = g_now / 1000 - below(100000);
			rnd(a.rand16, 16);
			rc = ann_build(&a);
			CHECK(rc == 0, "announce_build: %s", rnsc_err_name(rc));
			if (rc)
				break;
			g_now += 1 + below(5000);
			uint32_t ifc = below(MAX_IF);
			verdicts v;
			rc = ingest_both(&p, ifc, a.raw, a.len, g_now, NULL, &v);
			CHECK(rc == 0, "inbound: %s", rnsc_err_name(rc));
			CHECK(v.rnsc == 0 && v.ref == 0, "announce verdict rnsc %d, reference %d",
			      v.rnsc, v.ref);
			/* The path entry must exist (fresh destination, hops below the maximum). */
			CHECK(rnsc_transport_has_path(p.t, a.dest), "announce %d not accepted", i);
			compare_state(&p, a.dest, a.ratchet, "announce");
			drain(&p);
		}
		pair_close(&p);
	}
	rnsc_ctx_del(ctx);
}

/* Over every crypto backend rnsc could run its engine on (not the reference backend: the
 * reference is the other side here). */
static void test_announces(void)
{
	g_case = "announces";
	for (size_t b = 0; b < conf_backend_count(); b++) {
		const char *name = conf_backend(b)->name;
		if (strcmp(name, "reference") != 0)
			test_announces_on(name);
	}
}

/* ---- replacement rules ---------------------------------------------------------------------- */

static void test_replacement(void)
{
	g_case = "replace";
	rnsc_ctx *ctx = conf_ctx_for("openssl");
	CU_ASSERT_PTR_NOT_NULL_FATAL(ctx);
	rnsc_crypto_set_rng(ctx, test_rng, NULL);
	static const int modes[3] = {RNSC_TRANSPORT_MODE_FULL, RNSC_TRANSPORT_MODE_ACCESS_POINT,
				     RNSC_TRANSPORT_MODE_ROAMING};
	/* Clock jumps that cross (or just miss) each expiry: roaming 6 h, access point 1 day,
	 * PATHFINDER_E one week. */
	static const uint64_t jumps[] = {
		RNSC_ROAMING_PATH_TIME_MS + 1000,
		RNSC_AP_PATH_TIME_MS + 1000,
		RNSC_PATHFINDER_E_MS + 1000,
		RNSC_ROAMING_PATH_TIME_MS - 1000,
	};
	for (int seq = 0; seq < 40; seq++) {
		pair p;
		int rc = pair_open(&p, ctx, (int)below(2), 3, modes);
		CHECK(rc == 0, "pair_open: %s", rnsc_err_name(rc));
		if (rc) {
			pair_close(&p);
			break;
		}
		ann base;
		memset(&base, 0, sizeof(base));
		ann_identity(&base);
		/* A pool of emissions: the same second twice with different random bytes, older
		 * and newer ones, so blobs repeat and timestamps tie. */
		struct {
			uint8_t rand16[16];
			uint64_t t;
		} em[5];
		uint64_t t0 = g_now / 1000;
		for (int k = 0; k < 5; k++) {
			rnd(em[k].rand16, 16);
			em[k].t = t0 + (k == 1 ? 0 : (uint64_t)(k * 3)) - 6 + below(3);
		}
		em[1].t = em[0].t;
		uint8_t tids[2][HL];
		rnd(tids[0], HL);
		rnd(tids[1], HL);
		for (int step = 0; step < 12; step++) {
			ann a = base;
			int k = (int)below(5);
			memcpy(a.rand16, em[k].rand16, 16);
			a.emitted_s = em[k].t;
			a.ratchet = (int)below(2);
			a.app = below(3) == 0;
			if (a.app) {
				a.app_len = 1 + below(16);
				rnd(a.app_data, a.app_len);
			}
			a.pr = below(5) == 0;
			a.ht = below(2) ? RNSC_HEADER_2 : RNSC_HEADER_1;
			memcpy(a.tid, tids[below(2)], HL);
			a.hops = below(6);
			rc = ann_build(&a);
			CHECK(rc == 0, "announce_build: %s", rnsc_err_name(rc));
			if (rc)
				break;
			g_now += below(6) == 0 ? jumps[below(4)] : 1 + below(20000);
			verdicts v;
			rc = ingest_both(&p, below(3), a.raw, a.len, g_now, NULL, &v);
			CHECK(rc == 0, "inbound: %s", rnsc_err_name(rc));
			CHECK(v.rnsc == v.ref, "verdict rnsc %d, reference %d", v.rnsc, v.ref);
			char what[64];
			snprintf(what, sizeof(what), "sequence %d step %d", seq, step);
			compare_state(&p, a.dest, a.ratchet, what);
			drain(&p);
		}
		n_replaced += rnsc_transport_get_stats(p.t)->paths_added;
		n_ignored += rnsc_transport_get_stats(p.t)->announces_ignored;
		pair_close(&p);
	}
	rnsc_ctx_del(ctx);
	/* Both outcomes must have been exercised for the comparison to mean something: well
	 * beyond the 40 first inserts, replacements and ignored announces. */
	CHECK(n_replaced >= 40 + 30 && n_ignored >= 100, "only %llu path updates, %llu ignored",
	      n_replaced, n_ignored);
}

/* ---- duplicate filtering ---------------------------------------------------------------------- */

/* A stream's pool of distinct frames; each frame of the stream is one of them, sent again
 * with other hop counts (the packet hash ignores hops and, for HEADER_2, the transport id). */
#define POOL 14

typedef struct frame {
	uint8_t raw[RNSC_MTU];
	size_t len;
	size_t hops_at; /* offset of the hops byte (1), or 0 when hops must stay as built */
} frame;

static int pack_frame(frame *f, int ht, int pt, int dt, int ctxv, const uint8_t *tid,
		      size_t data_len, unsigned hops)
{
	uint8_t data[RNSC_MTU];
	rnd(data, data_len);
	rnsc_packet p = {0};
	p.header_type = (uint8_t)ht;
	p.transport_type =
		ht == RNSC_HEADER_2 ? RNSC_TRANSPORT_TRANSPORT : RNSC_TRANSPORT_BROADCAST;
	p.packet_type = (uint8_t)pt;
	p.dest_type = (uint8_t)dt;
	p.context = (uint8_t)ctxv;
	p.hops = (uint8_t)hops;
	rnd(p.dest_hash, HL);
	if (tid)
		memcpy(p.transport_id, tid, HL);
	p.data = data;
	p.data_len = data_len;
	int n = rnsc_packet_pack(f->raw, sizeof(f->raw), &p, RNSC_MTU);
	if (n < 0)
		return n;
	f->len = (size_t)n;
	f->hops_at = 1;
	return 0;
}

static int make_pool(pair *p, frame *pool)
{
	uint8_t other[HL];
	rnd(other, HL);
	int rc = 0;
	for (int i = 0; i < POOL && rc == 0; i++) {
		frame *f = &pool[i];
		switch (i) {
		case 0:
		case 1:
			rc = pack_frame(f, RNSC_HEADER_1, RNSC_PKT_DATA, RNSC_DEST_SINGLE,
					RNSC_CTX_NONE, NULL, 1 + below(80), 0);
			break;
		case 2: /* PLAIN: never hash-filtered, dropped when transported (hops > 1) */
			rc = pack_frame(f, RNSC_HEADER_1, RNSC_PKT_DATA, RNSC_DEST_PLAIN,
					RNSC_CTX_NONE, NULL, 1 + below(80), 0);
			break;
		case 3:
			rc = pack_frame(f, RNSC_HEADER_1, RNSC_PKT_DATA, RNSC_DEST_GROUP,
					RNSC_CTX_NONE, NULL, 1 + below(80), 0);
			break;
		case 4: /* explicit proof */
			rc = pack_frame(f, RNSC_HEADER_1, RNSC_PKT_PROOF, RNSC_DEST_SINGLE,
					RNSC_CTX_NONE, NULL, 96, 0);
			break;
		case 5: /* link request proof: not remembered until its place is known */
			rc = pack_frame(f, RNSC_HEADER_1, RNSC_PKT_PROOF, RNSC_DEST_LINK,
					RNSC_CTX_LRPROOF, NULL, 96, 0);
			break;
		case 6: { /* contexts that bypass the filter */
			static const int ctxs[] = {RNSC_CTX_KEEPALIVE, RNSC_CTX_RESOURCE,
						   RNSC_CTX_RESOURCE_REQ, RNSC_CTX_RESOURCE_PRF,
						   RNSC_CTX_CHANNEL};
			rc = pack_frame(f, RNSC_HEADER_1, RNSC_PKT_DATA, RNSC_DEST_LINK,
					ctxs[below(5)], NULL, 1 + below(40), 0);
			break;
		}
		case 7: /* in transport for another instance */
			rc = pack_frame(f, RNSC_HEADER_2, RNSC_PKT_DATA, RNSC_DEST_SINGLE,
					RNSC_CTX_NONE, other, 1 + below(80), 0);
			break;
		case 8: /* in transport for us (no path: not forwarded) */
			rc = pack_frame(f, RNSC_HEADER_2, RNSC_PKT_DATA, RNSC_DEST_SINGLE,
					RNSC_CTX_NONE, p->tid, 1 + below(80), 0);
			break;
		case 9:
			rc = pack_frame(f, RNSC_HEADER_1, RNSC_PKT_LINKREQUEST, RNSC_DEST_SINGLE,
					RNSC_CTX_NONE, NULL, 64, 0);
			break;
		case 10:
			rc = pack_frame(f, RNSC_HEADER_1, RNSC_PKT_DATA, RNSC_DEST_LINK,
					RNSC_CTX_NONE, NULL, 1 + below(80), 0);
			break;
		case 11:
		case 12: { /* announces the reference built */
			ann a;
			memset(&a, 0, sizeof(a));
			ann_identity(&a);
			ann_random_shape(&a);
			a.hops = below(4);
			a.emitted_s = g_now / 1000;
			rnd(a.rand16, 16);
			rc = ann_build(&a);
			memcpy(f->raw, a.raw, a.len);
			f->len = a.len;
			f->hops_at = 1;
			break;
		}
		case 13: { /* a path request (reference-built) for a random destination */
			uint8_t dest[HL], tag[HL];
			rnd(dest, HL);
			rnd(tag, HL);
			rnsc_refwire_res r;
			rc = rnsc_refwire_call(conf_ref(), &r, "pathreq_build", "bbb", BY(dest, HL),
					       BY(tag, HL), below(2) ? p->tid : NULL, (size_t)HL);
			if (rc == 0 && r.n == 1 && r.item[0].len <= RNSC_MTU) {
				memcpy(f->raw, r.item[0].p, r.item[0].len);
				f->len = r.item[0].len;
				f->hops_at = 1;
			} else if (rc == 0) {
				rc = RNSC_ERR_PYTHON;
			}
			rnsc_refwire_res_free(&r);
			break;
		}
		}
	}
	return rc;
}

static void test_duplicates(void)
{
	g_case = "duplicates";
	rnsc_ctx *ctx = conf_ctx_for("openssl");
	CU_ASSERT_PTR_NOT_NULL_FATAL(ctx);
	rnsc_crypto_set_rng(ctx, test_rng, NULL);
	static const int modes[2] = {RNSC_TRANSPORT_MODE_FULL, RNSC_TRANSPORT_MODE_POINT_TO_POINT};
	for (int stream = 0; stream < 8; stream++) {
		pair p;
		int rc = pair_open(&p, ctx, stream & 1, 2, modes);
		CHECK(rc == 0, "pair_open: %s", rnsc_err_name(rc));
		frame pool[POOL];
		if (rc == 0)
			rc = make_pool(&p, pool);
		CHECK(rc == 0, "pool: %s", rnsc_err_name(rc));
		if (rc) {
			pair_close(&p);
			break;
		}
		for (int i = 0; i < 70; i++) {
			frame f = pool[below(POOL)];
			/* hops 0..2 mostly; PLAIN/GROUP with 2 are transported and must be dropped */
			if (f.hops_at)
				f.raw[f.hops_at] = (uint8_t)below(3);
			g_now += below(3000);
			verdicts v;
			rc = ingest_both(&p, below(2), f.raw, f.len, g_now, NULL, &v);
			CHECK(rc == 0, "inbound: %s", rnsc_err_name(rc));
			n_verdicts++;
			CHECK(v.rnsc == v.ref,
			      "stream %d frame %d (flags %02x hops %u ctx %02x): "
			      "verdict rnsc %d, reference %d",
			      stream, i, f.raw[0], f.raw[1],
			      f.raw[f.raw[0] & 0x40 ? 2 + 2 * HL : 2 + HL], v.rnsc, v.ref);
			drain(&p);
		}
		rnsc_refwire_res r;
		rc = XT(&r, "", "hashlist_count");
		CHECK(rc == 0 && r.n == 1 &&
			      r.item[0].i == (long long)rnsc_transport_hashlist_count(p.t),
		      "stream %d: remembered hashes rnsc %zu, reference %lld", stream,
		      rnsc_transport_hashlist_count(p.t), r.n ? r.item[0].i : -1);
		rnsc_refwire_res_free(&r);
		rc = XT(&r, "", "pr_tag_count");
		const rnsc_transport_stats *st = rnsc_transport_get_stats(p.t);
		CHECK(rc == 0 && r.n == 1 && r.item[0].i == (long long)st->pr_received,
		      "stream %d: path request tags rnsc %llu, reference %lld", stream,
		      (unsigned long long)st->pr_received, r.n ? r.item[0].i : -1);
		rnsc_refwire_res_free(&r);
		pair_close(&p);
	}
	rnsc_ctx_del(ctx);
}

/* ---- path requests for local destinations ------------------------------------------------------ */

static void test_path_requests(void)
{
	g_case = "path requests";
	rnsc_ctx *ctx = conf_ctx_for("openssl");
	CU_ASSERT_PTR_NOT_NULL_FATAL(ctx);
	rnsc_crypto_set_rng(ctx, test_rng, NULL);
	static const int modes[3] = {RNSC_TRANSPORT_MODE_FULL, RNSC_TRANSPORT_MODE_ROAMING,
				     RNSC_TRANSPORT_MODE_ACCESS_POINT};
	for (int c = 0; c < 24; c++) {
		pair p;
		int rc = pair_open(&p, ctx, (int)below(2), 3, modes);
		CHECK(rc == 0, "pair_open: %s", rnsc_err_name(rc));
		uint8_t prv[64], dest[HL];
		char aspect[16];
		rnd(prv, 64);
		snprintf(aspect, sizeof(aspect), "pr%08x", (unsigned)rnd64());
		if (rc == 0)
			rc = pair_dest(&p, prv, aspect, dest);
		CHECK(rc == 0, "pair_dest: %s", rnsc_err_name(rc));
		if (rc) {
			pair_close(&p);
			break;
		}
		/* The request as the reference sends it: with or without the requestor's
		 * transport id, with a full or a short tag. */
		uint8_t tag[HL], tid[HL];
		size_t tag_len = below(3) == 0 ? 1 + below(HL) : HL;
		rnd(tag, tag_len);
		rnd(tid, HL);
		rnsc_refwire_res r;
		rc = rnsc_refwire_call(conf_ref(), &r, "pathreq_build", "bbb", BY(dest, HL),
				       BY(tag, tag_len), below(2) ? tid : NULL, (size_t)HL);
		uint8_t req[RNSC_MTU];
		size_t req_len = 0;
		if (rc == 0 && r.n == 1 && r.item[0].len <= sizeof(req)) {
			memcpy(req, r.item[0].p, r.item[0].len);
			req_len = r.item[0].len;
		}
		rnsc_refwire_res_free(&r);
		CHECK(req_len > 0, "pathreq_build: %s", rnsc_err_name(rc));
		if (!req_len) {
			pair_close(&p);
			break;
		}
		uint8_t rand16[16];
		rnd(rand16, 16);
		uint32_t ifc = below(3);
		g_now += 1 + below(100000);
		verdicts v;
		rc = ingest_both(&p, ifc, req, req_len, g_now, rand16, &v);
		CHECK(rc == 0, "inbound: %s", rnsc_err_name(rc));
		CHECK(g_script_used, "rnsc drew no random hash for its path response");
		n_pr++;
		/* rnsc: exactly one frame, on the requesting interface, byte for byte the
		 * reference's Destination.announce(path_response=True, attached_interface=...). */
		uint8_t resp[RNSC_MTU + HL];
		uint32_t out_if = 999;
		CHECK(rnsc_transport_outbox_count(p.t) == 1, "case %d: rnsc sent %zu frames", c,
		      rnsc_transport_outbox_count(p.t));
		int n = rnsc_transport_outbox_pop(p.t, &out_if, resp, sizeof(resp));
		CHECK(v.ref_sent == 1, "case %d: reference sent %zu frames", c, v.ref_sent);
		CHECK(n > 0 && out_if == ifc && v.ref_attached == (long long)ifc,
		      "case %d: response interface rnsc %u, reference %lld (asked on %u)", c,
		      (unsigned)out_if, v.ref_attached, (unsigned)ifc);
		CHECK(n > 0 && (size_t)n == v.ref_len && memcmp(resp, v.ref_frame, v.ref_len) == 0,
		      "case %d: path response bytes differ (%d vs %zu)", c, n, v.ref_len);
		drain(&p);

		/* The same request again (another hop count): a duplicate tag, no answer. */
		req[1] = (uint8_t)(req[1] + 1);
		rc = ingest_both(&p, ifc, req, req_len, g_now + 10, NULL, &v);
		CHECK(rc == 0, "inbound: %s", rnsc_err_name(rc));
		CHECK(rnsc_transport_outbox_count(p.t) == 0 && v.ref_sent == 0,
		      "case %d: duplicate request answered (rnsc %zu, reference %zu)", c,
		      rnsc_transport_outbox_count(p.t), v.ref_sent);
		drain(&p);
		pair_close(&p);

		/* A remote reference node takes rnsc's response as a one-hop path. */
		if (n > 0) {
			pair q;
			rc = pair_open(&q, ctx, 0, 1, modes);
			CHECK(rc == 0, "pair_open: %s", rnsc_err_name(rc));
			rc = rc ? rc : ingest_both(&q, 0, resp, (size_t)n, g_now + 50, NULL, &v);
			CHECK(rc == 0 && v.ref == 0 && v.rnsc == 0,
			      "case %d: response verdict %d/%d", c, v.rnsc, v.ref);
			rc = XT(&r, "b", "path", BY(dest, HL));
			CHECK(rc == 0 && r.n == 8 && r.item[2].i == 1 &&
				      memcmp(r.item[1].p, dest, HL) == 0,
			      "case %d: the reference did not take rnsc's path response", c);
			rnsc_refwire_res_free(&r);
			compare_state(&q, dest, 0, "path response");
			pair_close(&q);
		}
	}
	rnsc_ctx_del(ctx);
}

/* ---- runner ----------------------------------------------------------------------------------- */

int main(void)
{
	const char *e = getenv("RNSC_XT_SEED");
	if (e && *e)
		g_seed = strtoull(e, NULL, 0);
	g_rng = g_seed ? g_seed : 1;
	g_now = 1700000000000ull + (rnd64() % 100000000000ull);

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	int rc = conf_setup();
	if (rc == 0)
		rc = install_harness();
	if (rc != 0) {
		fprintf(stderr, "transport_xcheck_test: FAILED: set-up failed: %s\n",
			rnsc_strerror(rc));
		CU_cleanup_registry();
		return 1;
	}
	CU_pSuite s = CU_add_suite("transport vs reference Transport", NULL, NULL);
	CU_add_test(s, "reference announces give equal path entries", test_announces);
	CU_add_test(s, "path table replacement rules", test_replacement);
	CU_add_test(s, "duplicate filtering", test_duplicates);
	CU_add_test(s, "path requests to local destinations", test_path_requests);
	fprintf(stderr, "transport_xcheck_test: rns %s embedded; seed 0x%llx\n",
		rnsc_pyref_version(conf_ref()), (unsigned long long)g_seed);
	int failures = rnsc_cu_run();
	fprintf(stderr,
		"transport_xcheck_test: %u reference-built announces, %u state comparisons, "
		"%u filter verdicts, %u path requests; replacement sequences: %llu path updates, "
		"%llu announces ignored; %d failures\n",
		n_announces, n_entries, n_verdicts, n_pr, n_replaced, n_ignored, failures);
	conf_teardown();
	return failures;
}
