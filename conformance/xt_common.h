/* SPDX-License-Identifier: MIT */
/*
 * What the transport cross-checks share (conformance/transport_xcheck_test.c and
 * conformance/path_xcheck_test.c): the test's random stream and scripted RNG, failure
 * reporting through CUnit, one rnsc engine beside one reference Transport session
 * (interop/python/rnsc_transportharness.py), frames into both, path entry comparison, and
 * announces built by the reference. Included once per test program (static definitions).
 */
#ifndef RNSC_XT_COMMON_H
#define RNSC_XT_COMMON_H

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
#define XT_UNUSED __attribute__((unused))

/* Interface bitrate both sides use (the harness's interfaces are 62500 bit/s; rnsc's
 * default of 0 means unknown). Set before pair_open(). */
static uint64_t g_bitrate XT_UNUSED;

/* ---- randomness ----------------------------------------------------------------------------
 * One xorshift stream drives the test's choices; the engine's context draws from the same
 * stream except when a case scripts the next draw (a path response's 16 random bytes). */

static uint64_t g_seed = 0x7c0ffee5eedull;
static uint64_t g_rng;

XT_UNUSED
static uint64_t rnd64(void)
{
	g_rng ^= g_rng << 13;
	g_rng ^= g_rng >> 7;
	g_rng ^= g_rng << 17;
	return g_rng;
}

XT_UNUSED
static unsigned below(unsigned n)
{
	return (unsigned)(rnd64() % n);
}

XT_UNUSED
static void rnd(uint8_t *out, size_t len)
{
	for (size_t i = 0; i < len; i++)
		out[i] = (uint8_t)(rnd64() >> 24);
}

static uint8_t g_script[16];
static int g_scripted, g_script_used;

XT_UNUSED
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

XT_UNUSED
static void failf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
XT_UNUSED
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
#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		int ok_ = !!(cond);                                                                \
		if (!ok_)                                                                          \
			failf(__VA_ARGS__);                                                        \
		CU_assertImplementation(ok_ ? CU_TRUE : CU_FALSE, __LINE__, #cond, __FILE__, "",   \
					CU_FALSE);                                                 \
	} while (0)

/* ---- the reference side ------------------------------------------------------------------ */

/* Every harness call goes through rnsc_wireharness.transport(name, ...). */
#define XT(res, fmt, ...) rnsc_refwire_call(conf_ref(), (res), "transport", "s" fmt, __VA_ARGS__)
#define BY(p, n) (const uint8_t *)(p), (size_t)(n)
#define LL(v) (long long)(v)

XT_UNUSED
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
XT_UNUSED static unsigned n_announces, n_entries, n_verdicts, n_pr;

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

XT_UNUSED static const int ALL_MODES[] = {
	RNSC_TRANSPORT_MODE_FULL,         RNSC_TRANSPORT_MODE_POINT_TO_POINT,
	RNSC_TRANSPORT_MODE_ACCESS_POINT, RNSC_TRANSPORT_MODE_ROAMING,
	RNSC_TRANSPORT_MODE_BOUNDARY,     RNSC_TRANSPORT_MODE_GATEWAY,
};

/* A fresh rnsc engine and a fresh reference session with the same transport id, transport
 * switch and interfaces (ids 0..n_if-1 on both sides). */
XT_UNUSED
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
		rc = rnsc_transport_iface_add(p->t, (uint32_t)i, modes[i], g_bitrate, RNSC_MTU);
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

XT_UNUSED
static void pair_close(pair *p)
{
	rnsc_transport_del(p->t);
	p->t = NULL;
}

XT_UNUSED
static void drain(pair *p)
{
	uint8_t buf[RNSC_MTU + HL];
	uint32_t ifc;
	while (rnsc_transport_outbox_pop(p->t, &ifc, buf, sizeof(buf)) > 0)
		;
}

/* Registers the SINGLE destination rnsc.<aspect> of prv on both sides. */
XT_UNUSED
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
XT_UNUSED
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
XT_UNUSED
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
			CHECK(memcmp(rat, r.item[2].p, RNSC_RATCHETSIZE) == 0,
			      "%s: ratchet differs", what);
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
XT_UNUSED
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

XT_UNUSED
static void ann_identity(ann *a)
{
	rnd(a->prv, 64);
	snprintf(a->aspect, sizeof(a->aspect), "x%08x", (unsigned)rnd64());
	rnd(a->ratchet_prv, 32);
}

XT_UNUSED
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

XT_UNUSED static uint64_t g_now; /* ms */

#endif
