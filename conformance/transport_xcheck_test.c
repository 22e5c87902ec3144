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
#include "pyref_internal.h" /* <Python.h> first: only to install the harness dispatcher */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "announce.h"
#include "backends.h"
#include "crypto.h"
#include "cu_run.h"
#include "destination.h"
#include "identity.h"
#include "packet.h"
#include "pathreq.h"
#include "ref_wire.h"
#include "transport.h"

#define HL RNSC_TRUNCATED_HASHLEN

/* ---- randomness ----------------------------------------------------------------------------
 * One xorshift stream drives the test's choices; the engine's context draws from the same
 * stream except when a case scripts the next draw (a path response's 16 random bytes). */

static uint64_t g_seed = 0x7c0ffee5eedull;
static uint64_t g_rng;

static uint64_t rnd64(void)
{
	g_rng ^= g_rng << 13;
	g_rng ^= g_rng >> 7;
	g_rng ^= g_rng << 17;
	return g_rng;
}

static unsigned below(unsigned n)
{
	return (unsigned)(rnd64() % n);
}

static void rnd(uint8_t *out, size_t len)
{
	for (size_t i = 0; i < len; i++)
		out[i] = (uint8_t)(rnd64() >> 24);
}

static uint8_t g_script[16];
static int g_scripted, g_script_used;

static int test_rng(void *ud, uint8_t *out, size_t len)
{
	(void)ud;
	if (g_scripted) {
		if (len != sizeof(g_script))
			return RNSC_ERR_STATE; /* only the random-hash draw may be scripted */
		memcpy(out, g_script, len);
		g_scripted = 0;
		g_script_used = 1;
		return 0;
	}
	rnd(out, len);
	return 0;
}

/* ---- failure reporting ------------------------------------------------------------------- */

static unsigned g_fail_msgs;
static const char *g_case = "";

static void failf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void failf(const char *fmt, ...)
{
	if (g_fail_msgs++ < 30) {
		va_list ap;
		va_start(ap, fmt);
		fprintf(stderr, "  transport_xcheck [%s]: ", g_case);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
		va_end(ap);
	}
}

/* Every check is a CUnit assertion (counted when it passes too); a failing one also says
 * what differed. */
#define CHECK(cond, ...)                                                                      \
	do {                                                                                  \
		int ok_ = !!(cond);                                                           \
		if (!ok_)                                                                     \
			failf(__VA_ARGS__);                                                   \
		CU_assertImplementation(ok_ ? CU_TRUE : CU_FALSE, __LINE__, #cond, __FILE__, \
					"", CU_FALSE);                                        \
	} while (0)

/* ---- the reference side ------------------------------------------------------------------ */

/* Every harness call goes through rnsc_wireharness.transport(name, ...). */
#define XT(res, fmt, ...) rnsc_refwire_call(conf_ref(), (res), "transport", "s" fmt, __VA_ARGS__)
#define BY(p, n) (const uint8_t *)(p), (size_t)(n)
#define LL(v) (long long)(v)

static int install_harness(void)
{
	rnsc_pyref *ref = conf_ref();
	pyref_gil st = pyref_enter(ref);
	int rc = 0;
	PyObject *m = PyImport_ImportModule("rnsc_transportharness");
	PyObject *r = m ? PyObject_CallMethod(m, "install", NULL) : NULL;
	if (!r)
		rc = pyref_exc(ref, "rnsc_transportharness.install");
	Py_XDECREF(r);
	Py_XDECREF(m);
	pyref_leave(st);
	return rc;
}

/* Counts of what was checked, for the summary line. */
static unsigned n_announces, n_entries, n_verdicts, n_pr;
static unsigned long long n_replaced, n_ignored; /* replacement test: outcomes seen */

/* ---- one node on each side ---------------------------------------------------------------- */

#define MAX_IF 6

typedef struct pair {
	rnsc_ctx *ctx;
	rnsc_transport *t;
	int transport_enabled;
	uint8_t tid[HL];
	int n_if;
	int modes[MAX_IF];
} pair;

static const int ALL_MODES[] = {
	RNSC_TRANSPORT_MODE_FULL,     RNSC_TRANSPORT_MODE_POINT_TO_POINT,
	RNSC_TRANSPORT_MODE_ACCESS_POINT, RNSC_TRANSPORT_MODE_ROAMING,
	RNSC_TRANSPORT_MODE_BOUNDARY, RNSC_TRANSPORT_MODE_GATEWAY,
};

/* A fresh rnsc engine and a fresh reference session with the same transport id, transport
 * switch and interfaces (ids 0..n_if-1 on both sides). */
static int pair_open(pair *p, rnsc_ctx *ctx, int transport_enabled, int n_if, const int *modes)
{
	memset(p, 0, sizeof(*p));
	p->ctx = ctx;
	p->transport_enabled = transport_enabled;
	uint8_t prv[64];
	rnd(prv, sizeof(prv));
	rnsc_identity tid;
	int rc = rnsc_identity_from_private(ctx, &tid, prv, sizeof(prv));
	if (rc)
		return rc;
	rnsc_transport_config cfg = {.transport_enabled = transport_enabled,
				     .use_implicit_proof = 1};
	rc = rnsc_transport_new(ctx, &p->t, &tid, &cfg);
	memcpy(p->tid, tid.hash, HL);
	rnsc_identity_free(&tid);
	if (rc)
		return rc;
	rnsc_refwire_res r;
	rc = XT(&r, "ib", "reset", LL(transport_enabled), BY(p->tid, HL));
	uint8_t pr_dest[HL];
	if (rc == 0 && rnsc_pathreq_destination(ctx, pr_dest) == 0)
		CHECK(r.n == 1 && r.item[0].len == HL && memcmp(r.item[0].p, pr_dest, HL) == 0,
		      "path request destination differs");
	rnsc_refwire_res_free(&r);
	for (int i = 0; rc == 0 && i < n_if; i++) {
		p->modes[i] = modes[i];
		rc = rnsc_transport_iface_add(p->t, (uint32_t)i, modes[i], 0, RNSC_MTU);
		if (rc == 0) {
			rc = XT(&r, "ii", "iface_add", LL(modes[i]), LL(RNSC_MTU));
			if (rc == 0 && (r.n != 1 || r.item[0].i != i))
				rc = RNSC_ERR_STATE;
			rnsc_refwire_res_free(&r);
		}
	}
	p->n_if = n_if;
	return rc;
}

static void pair_close(pair *p)
{
	rnsc_transport_del(p->t);
	p->t = NULL;
}

static void drain(pair *p)
{
	uint8_t buf[RNSC_MTU + HL];
	uint32_t ifc;
	while (rnsc_transport_outbox_pop(p->t, &ifc, buf, sizeof(buf)) > 0)
		;
}

/* Registers the SINGLE destination rnsc.<aspect> of prv on both sides. */
static int pair_dest(pair *p, const uint8_t prv[64], const char *aspect, uint8_t hash[HL])
{
	rnsc_identity id;
	int rc = rnsc_identity_from_private(p->ctx, &id, prv, 64);
	if (rc)
		return rc;
	const char *aspects[] = {aspect};
	rc = rnsc_transport_dest_add(p->t, RNSC_DEST_SINGLE, &id, "rnsc", aspects, 1, 0, hash);
	rnsc_identity_free(&id);
	if (rc)
		return rc;
	rnsc_refwire_res r;
	rc = XT(&r, "bss", "dest_add", BY(prv, 64), "rnsc", aspect);
	if (rc == 0)
		CHECK(r.n == 1 && r.item[0].len == HL && memcmp(r.item[0].p, hash, HL) == 0,
		      "local destination hash differs");
	rnsc_refwire_res_free(&r);
	return rc;
}

/* Verdicts: -1 the frame never reached the packet filter, 0 passed, 1 dropped by it. */
typedef struct verdicts {
	int rnsc, ref;
	size_t ref_sent;
	uint8_t ref_frame[RNSC_MTU + HL];
	size_t ref_len;
	long long ref_attached;
} verdicts;

/* One frame into both sides at now_ms. rand16 (may be NULL) is scripted on both sides for
 * the one random hash a path response draws. */
static int ingest_both(pair *p, uint32_t ifc, const uint8_t *raw, size_t len, uint64_t now_ms,
		       const uint8_t *rand16, verdicts *v)
{
	memset(v, 0, sizeof(*v));
	const rnsc_transport_stats *st = rnsc_transport_get_stats(p->t);
	uint64_t filtered = st->filtered;
	if (rand16) {
		memcpy(g_script, rand16, 16);
		g_scripted = 1;
		g_script_used = 0;
	}
	int rc = rnsc_transport_ingest(p->t, ifc, raw, len, now_ms);
	g_scripted = 0;
	v->rnsc = rc < 0 ? -1 : st->filtered != filtered ? 1 : 0;
	rnsc_refwire_res r;
	rc = XT(&r, "biib", "inbound", BY(raw, len), LL(ifc), LL(now_ms), rand16, (size_t)16);
	if (rc == 0 && r.n == 5) {
		v->ref = (int)r.item[0].i;
		v->ref_sent = (size_t)r.item[2].i;
		if (r.item[3].kind == RNSC_RW_BYTES && r.item[3].len <= sizeof(v->ref_frame)) {
			memcpy(v->ref_frame, r.item[3].p, r.item[3].len);
			v->ref_len = r.item[3].len;
		}
		v->ref_attached = r.item[4].i;
	} else if (rc == 0) {
		rc = RNSC_ERR_PYTHON;
	}
	rnsc_refwire_res_free(&r);
	return rc;
}

/* The path entry and the remembered identity for dest must be the same on both sides.
 * last_ratchet says whether the last announce ingested for dest carried a ratchet (its
 * context flag): see the app data comparison. */
static void compare_state(pair *p, const uint8_t dest[HL], int last_ratchet, const char *what)
{
	n_entries++;
	rnsc_refwire_res r;
	rnsc_transport_path e;
	int have = rnsc_transport_path_get(p->t, dest, &e) == 0;
	int rc = XT(&r, "b", "path", BY(dest, HL));
	CHECK(rc == 0, "%s: harness path(): %s", what, rnsc_err_name(rc));
	int ref_have = rc == 0 && !(r.n == 1 && r.item[0].kind == RNSC_RW_NONE);
	CHECK(have == ref_have, "%s: path present rnsc %d, reference %d", what, have, ref_have);
	if (have && ref_have && r.n == 8) {
		CHECK((long long)e.timestamp == r.item[0].i, "%s: timestamp %llu vs %lld", what,
		      (unsigned long long)e.timestamp, r.item[0].i);
		CHECK(memcmp(e.next_hop, r.item[1].p, HL) == 0, "%s: next hop differs", what);
		CHECK((long long)e.hops == r.item[2].i, "%s: hops %u vs %lld", what, e.hops,
		      r.item[2].i);
		CHECK((long long)e.expires == r.item[3].i, "%s: expires %llu vs %lld", what,
		      (unsigned long long)e.expires, r.item[3].i);
		CHECK((long long)e.n_random_blobs == r.item[4].i, "%s: random blobs %zu vs %lld",
		      what, e.n_random_blobs, r.item[4].i);
		CHECK((long long)e.iface == r.item[5].i, "%s: interface %u vs %lld", what,
		      (unsigned)e.iface, r.item[5].i);
		CHECK(memcmp(e.packet_hash, r.item[6].p, RNSC_HASHLEN) == 0,
		      "%s: path packet hash differs", what);
	}
	rnsc_refwire_res_free(&r);

	rnsc_identity id;
	const uint8_t *app = NULL;
	size_t app_len = 0;
	have = rnsc_transport_recall(p->t, dest, &id, &app, &app_len) == 0;
	rc = XT(&r, "b", "known", BY(dest, HL));
	CHECK(rc == 0, "%s: harness known(): %s", what, rnsc_err_name(rc));
	ref_have = rc == 0 && !(r.n == 1 && r.item[0].kind == RNSC_RW_NONE);
	CHECK(have == ref_have, "%s: known identity rnsc %d, reference %d", what, have, ref_have);
	if (have && ref_have && r.n == 5) {
		uint8_t pub[RNSC_KEYSIZE];
		rnsc_identity_public_bytes(&id, pub);
		CHECK(memcmp(pub, r.item[0].p, RNSC_KEYSIZE) == 0, "%s: public key differs", what);
		int ref_app = r.item[1].kind == RNSC_RW_BYTES;
		/* Known difference, encoded exactly: Identity.validate_announce decides "no app
		 * data" by comparing the data length with the ratchet-less minimum, so a ratchet
		 * announce without app data is remembered as b"" (recall_app_data() returns b"",
		 * handlers get b""), where rnsc remembers none (NULL). Both carry no bytes; only
		 * that pair is accepted, and only after a ratchet announce. */
		if (last_ratchet && !app && ref_app && r.item[1].len == 0)
			ref_app = 0;
		CHECK((app != NULL) == ref_app, "%s: app data present rnsc %d, reference %d", what,
		      app != NULL, ref_app);
		if (app && ref_app)
			CHECK(app_len == r.item[1].len && memcmp(app, r.item[1].p, app_len) == 0,
			      "%s: app data differs", what);
		uint8_t rat[RNSC_RATCHETSIZE];
		int have_rat = rnsc_transport_ratchet_get(p->t, dest, rat) == 0;
		int ref_rat = r.item[2].kind == RNSC_RW_BYTES;
		CHECK(have_rat == ref_rat, "%s: ratchet present rnsc %d, reference %d", what,
		      have_rat, ref_rat);
		if (have_rat && ref_rat)
			CHECK(memcmp(rat, r.item[2].p, RNSC_RATCHETSIZE) == 0, "%s: ratchet differs",
			      what);
	}
	if (have)
		rnsc_identity_free(&id);
	rnsc_refwire_res_free(&r);
}

/* ---- announces built by the reference ------------------------------------------------------- */

typedef struct ann {
	uint8_t prv[64];
	char aspect[16];
	uint8_t dest[HL];
	int ratchet, app, pr, ht;
	uint8_t ratchet_prv[32];
	uint8_t app_data[64];
	size_t app_len;
	uint8_t rand16[16];
	uint64_t emitted_s;
	uint8_t tid[HL];
	unsigned hops;
	uint8_t raw[RNSC_MTU];
	size_t len;
} ann;

/* Destination.announce(send=False) in the reference, re-sent HEADER_2 when a.ht says so. */
static int ann_build(ann *a)
{
	rnsc_refwire_res r;
	int rc = rnsc_refwire_call(conf_ref(), &r, "announce_build", "bssbbibiibi", BY(a->prv, 64),
				   "rnsc", a->aspect, a->ratchet ? a->ratchet_prv : NULL,
				   (size_t)32, a->app ? a->app_data : NULL, a->app_len, LL(a->pr),
				   BY(a->rand16, 16), LL(a->emitted_s), LL(a->ht),
				   a->ht == RNSC_HEADER_2 ? a->tid : NULL, (size_t)HL, LL(a->hops));
	if (rc == 0 && (r.n != 1 || r.item[0].kind != RNSC_RW_BYTES || r.item[0].len > RNSC_MTU))
		rc = RNSC_ERR_PYTHON;
	if (rc == 0) {
		memcpy(a->raw, r.item[0].p, r.item[0].len);
		a->len = r.item[0].len;
		memcpy(a->dest, a->raw + (a->ht == RNSC_HEADER_2 ? 2 + HL : 2), HL);
	}
	rnsc_refwire_res_free(&r);
	n_announces++;
	return rc;
}

static void ann_identity(ann *a)
{
	rnd(a->prv, 64);
	snprintf(a->aspect, sizeof(a->aspect), "x%08x", (unsigned)rnd64());
	rnd(a->ratchet_prv, 32);
}

static void ann_random_shape(ann *a)
{
	a->ratchet = (int)below(2);
	a->app = (int)below(2);
	if (a->app) {
		a->app_len = 1 + below(sizeof(a->app_data));
		rnd(a->app_data, a->app_len);
	}
	a->pr = below(4) == 0;
	a->ht = below(2) ? RNSC_HEADER_2 : RNSC_HEADER_1;
	rnd(a->tid, HL);
	a->hops = below(3) == 0 ? below(RNSC_PATHFINDER_M - 1) : below(8);
}

static uint64_t g_now; /* ms */

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
		RNSC_ROAMING_PATH_TIME_MS + 1000, RNSC_AP_PATH_TIME_MS + 1000,
		RNSC_PATHFINDER_E_MS + 1000,      RNSC_ROAMING_PATH_TIME_MS - 1000,
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
	p.transport_type = ht == RNSC_HEADER_2 ? RNSC_TRANSPORT_TRANSPORT : RNSC_TRANSPORT_BROADCAST;
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
		case 0: case 1:
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
		case 11: case 12: { /* announces the reference built */
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
			CHECK(v.rnsc == v.ref, "stream %d frame %d (flags %02x hops %u ctx %02x): "
			      "verdict rnsc %d, reference %d", stream, i, f.raw[0], f.raw[1],
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
			CHECK(rc == 0 && v.ref == 0 && v.rnsc == 0, "case %d: response verdict %d/%d",
			      c, v.rnsc, v.ref);
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
