/* SPDX-License-Identifier: MIT */
/*
 * The link state machine (src/lib/link.c) against live reference links: the actual packet
 * bytes go back and forth between an rnsc link and an RNS.Link of the embedded reference,
 * driven through interop/python/rnsc_linkharness.py (which documents the stand-ins it uses
 * for a running RNS.Reticulum()):
 *
 *   same bytes    with the ephemeral keys and IVs pinned on both sides, rnsc and the reference
 *                 build byte-identical LINKREQUEST, LRPROOF, LRRTT, DATA and LINKCLOSE frames;
 *   rnsc -> ref   an rnsc initiator against a reference responder (RNS.Destination.receive
 *                 of rnsc's LINKREQUEST): proof, RTT, equal session keys and RTT, data both
 *                 ways, a reference proof of an rnsc packet, identify, keepalive answer,
 *                 tampered ciphertext ignored, teardown with the reason the reference gives;
 *   ref -> rnsc   a reference initiator (RNS.Link(destination)) against an rnsc responder:
 *                 the same in the other direction, identify towards rnsc, teardown by rnsc;
 *   MTU           signalled and clamped link MTUs agree, a large packet crosses;
 *   bad proofs    a forged or wrong-mode LRPROOF leaves both initiators in the same state;
 *   timers        the reference's own watchdog (one iteration per step, its clock pinned)
 *                 and rnsc_link_tick() take the same decisions on the same schedule:
 *                 establishment timeout, keepalives, STALE, close after the 5 s nap;
 *   channel       rnsc's Channel against RNS.Channel on both link roles: envelopes
 *                 byte-identical, ordered delivery both ways with proofs through the
 *                 reference's receipts, windows growing alike, reordering, unregistered
 *                 types, and the reference's retransmission time matching the formula
 *                 rnsc uses.
 *
 * The reference is mandatory: when it cannot be imported the test fails (never skips).
 */
#include "pyref_internal.h" /* <Python.h> first: only to install the harness dispatcher */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends.h"
#include "channel.h"
#include "crypto.h"
#include "cu_run.h"
#include "destination.h"
#include "identity.h"
#include "link.h"
#include "packet.h"
#include "ref_wire.h"

#define APP "rnsc"
#define ASPECT "xlink"

static unsigned g_fail_msgs, g_frames;
static const char *g_case = "";

static void failf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void failf(const char *fmt, ...)
{
	if (g_fail_msgs++ < 40) {
		va_list ap;
		va_start(ap, fmt);
		fprintf(stderr, "  link_xcheck [%s]: ", g_case);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
		va_end(ap);
	}
}

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		int ok_ = !!(cond);                                                                \
		if (!ok_)                                                                          \
			failf(__VA_ARGS__);                                                        \
		CU_assertImplementation(ok_ ? CU_TRUE : CU_FALSE, __LINE__, #cond, __FILE__, "",   \
					CU_FALSE);                                                 \
	} while (0)

#define BY(p, n) (const uint8_t *)(p), (size_t)(n)
#define LL(v) (long long)(v)

/* ---- the reference side ------------------------------------------------------------------ */

static int install_harness(void)
{
	rnsc_pyref *ref = conf_ref();
	pyref_gil st = pyref_enter(ref);
	int rc = 0;
	PyObject *m = PyImport_ImportModule("rnsc_linkharness");
	PyObject *r = m ? PyObject_CallMethod(m, "install", NULL) : NULL;
	if (!r)
		rc = pyref_exc(ref, "rnsc_linkharness.install");
	Py_XDECREF(r);
	Py_XDECREF(m);
	pyref_leave(st);
	return rc;
}

/* Frames the reference sent in one call. */
typedef struct frames {
	int n;
	uint8_t f[8][4096];
	size_t len[8];
	long long extra; /* watchdog: the nap in ms */
} frames;

static frames F;

/* Every harness call goes through rnsc_wireharness.link(op, ...). */
#define XL(res, op, fmt, ...) rnsc_refwire_call(conf_ref(), (res), "link", "s" fmt, op, __VA_ARGS__)
#define XL0(res, op) rnsc_refwire_call(conf_ref(), (res), "link", "s", op)

/* Copies the frame items of res (count at index first, frames after it) into F. */
static int take_frames(const rnsc_refwire_res *res, int first)
{
	memset(&F, 0, sizeof(F));
	if (res->n < (size_t)first + 9 || res->item[first].kind != RNSC_RW_INT) {
		failf("harness returned %zu items", res->n);
		return -1;
	}
	F.n = (int)res->item[first].i;
	for (int i = 0; i < F.n && i < 8; i++) {
		const rnsc_refwire_item *it = &res->item[first + 1 + i];
		if (it->kind != RNSC_RW_BYTES || it->len > sizeof(F.f[0]))
			return -1;
		memcpy(F.f[i], it->p, it->len);
		F.len[i] = it->len;
		g_frames++;
	}
	if (first > 0 && res->item[0].kind == RNSC_RW_INT)
		F.extra = res->item[0].i;
	return 0;
}

static void xf_check(int rc, const char *op)
{
	CHECK(rc == 0, "%s: harness call failed: %s", op, rnsc_err_name(rc));
}

/* Runs an op that returns frames; 0 or a negative code (reported). */
#define XF(op, fmt, ...)                                                                           \
	({                                                                                         \
		rnsc_refwire_res r_;                                                               \
		int rc_ = XL(&r_, op, fmt, __VA_ARGS__);                                           \
		xf_check(rc_, op);                                                                 \
		if (rc_ == 0 && take_frames(&r_, strcmp(op, "watchdog") == 0 ? 1 : 0))             \
			rc_ = RNSC_ERR_PYTHON;                                                     \
		rnsc_refwire_res_free(&r_);                                                        \
		rc_;                                                                               \
	})

/* The reference link's state (rnsc_linkharness.state). */
typedef struct ref_state {
	int status, reason, established, closed;
	long long mtu, rtt_us, keepalive_ms, received;
	int has_key, has_remote, has_identified;
	uint8_t key[64], link_id[16], remote[64], identified[64];
} ref_state;

static int ref_state_get(ref_state *s)
{
	rnsc_refwire_res r;
	memset(s, 0, sizeof(*s));
	int rc = XL0(&r, "state");
	CHECK(rc == 0 && r.n == 12, "state: %s, %zu items", rnsc_err_name(rc), r.n);
	if (rc == 0 && r.n == 12) {
		s->status = (int)r.item[0].i;
		s->reason = (int)r.item[1].i;
		s->mtu = r.item[2].i;
		s->rtt_us = r.item[3].i;
		if ((s->has_key = r.item[4].kind == RNSC_RW_BYTES && r.item[4].len == 64))
			memcpy(s->key, r.item[4].p, 64);
		if (r.item[5].len == 16)
			memcpy(s->link_id, r.item[5].p, 16);
		s->keepalive_ms = r.item[6].i;
		s->established = (int)r.item[7].i;
		s->closed = (int)r.item[8].i;
		if ((s->has_remote = r.item[9].kind == RNSC_RW_BYTES && r.item[9].len == 64))
			memcpy(s->remote, r.item[9].p, 64);
		if ((s->has_identified = r.item[10].kind == RNSC_RW_BYTES && r.item[10].len == 64))
			memcpy(s->identified, r.item[10].p, 64);
		s->received = r.item[11].i;
	} else if (rc == 0) {
		rc = RNSC_ERR_PYTHON;
	}
	rnsc_refwire_res_free(&r);
	return rc;
}

/* The i-th message the reference application received. */
static int ref_message(long long i, int *context, uint8_t *out, size_t cap, size_t *len)
{
	rnsc_refwire_res r;
	int rc = XL(&r, "message", "i", LL(i));
	CHECK(rc == 0 && r.n == 2, "message: %s", rnsc_err_name(rc));
	if (rc == 0 && r.n == 2 && r.item[1].len <= cap) {
		*context = (int)r.item[0].i;
		memcpy(out, r.item[1].p, r.item[1].len);
		*len = r.item[1].len;
	} else if (rc == 0) {
		rc = RNSC_ERR_PYTHON;
	}
	rnsc_refwire_res_free(&r);
	return rc;
}

/* ---- the rnsc side ----------------------------------------------------------------------- */

typedef struct side {
	int established, closed, identified, packets, last_ctx;
	uint8_t last[4096];
	size_t last_len;
	uint8_t who[16];
} side;

static void cb_est(void *ud, rnsc_link *l)
{
	(void)l;
	((side *)ud)->established++;
}

static void cb_closed(void *ud, rnsc_link *l)
{
	(void)l;
	((side *)ud)->closed++;
}

static void cb_packet(void *ud, rnsc_link *l, int context, const uint8_t *d, size_t n,
		      const rnsc_packet *pk, const uint8_t *raw, size_t raw_len)
{
	(void)l, (void)pk, (void)raw, (void)raw_len;
	side *s = ud;
	s->packets++;
	s->last_ctx = context;
	s->last_len = n < sizeof(s->last) ? n : sizeof(s->last);
	memcpy(s->last, d, s->last_len);
}

static void cb_ident(void *ud, rnsc_link *l, const rnsc_identity *who)
{
	(void)l;
	side *s = ud;
	s->identified++;
	memcpy(s->who, who->hash, 16);
}

static const rnsc_link_callbacks CBS = {cb_est, cb_closed, cb_packet, cb_ident, NULL};

static rnsc_ctx *g_ctx;

static int pop(rnsc_link *l, uint8_t *f, size_t cap)
{
	int n = rnsc_link_outbox_pop(l, f, cap);
	CHECK(n > 0, "rnsc sent nothing (%d)", n);
	return n;
}

static void ref_status_is(int status, int reason, const char *what)
{
	ref_state rs;
	if (ref_state_get(&rs) == 0)
		CHECK(rs.status == status && rs.reason == reason,
		      "%s: reference link is %s/%d, expected %s/%d", what,
		      rnsc_link_status_name(rs.status), rs.reason, rnsc_link_status_name(status),
		      reason);
}

/* An rnsc initiator at t0 against a reference responder; returns the link, ACTIVE on both
 * sides (proof at t0 + 100, RTT at t0 + 150), or NULL. */
static rnsc_link *rnsc_to_ref(rnsc_identity *dest, side *s, uint32_t hw_mtu, int prove_all,
			      uint64_t t0)
{
	uint8_t prv[64], dh[16], f[8192];
	CHECK(rnsc_identity_generate(g_ctx, dest) == 0, "identity");
	rnsc_identity_private_bytes(dest, prv);
	rnsc_refwire_res r;
	int rc = XL(&r, "responder", "bssi", BY(prv, 64), APP, ASPECT,
		    LL(prove_all ? RNSC_PROVE_ALL : RNSC_PROVE_NONE));
	CHECK(rc == 0 && r.n == 1 && r.item[0].len == 16, "responder: %s", rnsc_err_name(rc));
	if (rc || r.n != 1 || r.item[0].len != 16) {
		rnsc_refwire_res_free(&r);
		return NULL;
	}
	memcpy(dh, r.item[0].p, 16);
	rnsc_refwire_res_free(&r);
	uint8_t mine[16];
	const char *asp[] = {ASPECT};
	CHECK(rnsc_destination_hash(g_ctx, mine, dest->hash, APP, asp, 1) == 0 &&
		      memcmp(mine, dh, 16) == 0,
	      "destination hashes differ");

	rnsc_link *l = NULL;
	rnsc_link_initiate_params p = {.hw_mtu = hw_mtu, .hops = 1};
	CHECK(rnsc_link_initiate(g_ctx, &l, dh, dest, &p, t0) == 0, "initiate");
	if (!l)
		return NULL;
	rnsc_link_set_callbacks(l, &CBS, s);
	int n = pop(l, f, sizeof(f));
	if (XF("request", "bi", BY(f, n), LL(t0 + 40)) || F.n != 1) {
		CHECK(0, "the reference answered the link request with %d frames", F.n);
		rnsc_link_del(l);
		return NULL;
	}
	ref_state rs;
	if (ref_state_get(&rs) == 0) {
		CHECK(rs.status == RNSC_LINK_HANDSHAKE, "reference responder in %d", rs.status);
		CHECK(memcmp(rs.link_id, rnsc_link_id(l), 16) == 0, "link ids differ");
	}
	rc = rnsc_link_receive(l, F.f[0], F.len[0], t0 + 100);
	CHECK(rc == 0, "rnsc refused the reference's LRPROOF: %s", rnsc_err_name(rc));
	CHECK(rnsc_link_status(l) == RNSC_LINK_ACTIVE && s->established == 1,
	      "rnsc initiator not established");
	n = pop(l, f, sizeof(f));
	if (n <= 0 || XF("receive", "bi", BY(f, n), LL(t0 + 150))) {
		rnsc_link_del(l);
		return NULL;
	}
	CHECK(F.n == 0, "the reference answered the RTT packet");
	if (ref_state_get(&rs) == 0) {
		CHECK(rs.status == RNSC_LINK_ACTIVE && rs.established == 1,
		      "reference responder not established (%d)", rs.status);
		CHECK(rs.has_key && rnsc_link_derived_key(l) &&
			      memcmp(rs.key, rnsc_link_derived_key(l), 64) == 0,
		      "session keys differ");
		CHECK(rs.rtt_us == 110000, "reference rtt %lld us, expected max(110 ms, 100 ms)",
		      rs.rtt_us);
		CHECK(rs.mtu == (long long)rnsc_link_mtu(l), "MTU: reference %lld, rnsc %u", rs.mtu,
		      rnsc_link_mtu(l));
	}
	CHECK(rnsc_link_rtt(l) > 0.0999 && rnsc_link_rtt(l) < 0.1001, "rnsc rtt %f",
	      rnsc_link_rtt(l));
	return l;
}

/* A reference initiator at t0 against an rnsc responder (proof back at t0 + 100, RTT at
 * t0 + 150); returns the responder link or NULL. */
static rnsc_link *ref_to_rnsc(rnsc_identity *dest, side *s, uint32_t hw_mtu, uint32_t nh_mtu,
			      uint64_t t0)
{
	uint8_t pub[64], dh[16];
	CHECK(rnsc_identity_generate(g_ctx, dest) == 0, "identity");
	rnsc_identity_public_bytes(dest, pub);
	const char *asp[] = {ASPECT};
	CHECK(rnsc_destination_hash(g_ctx, dh, dest->hash, APP, asp, 1) == 0, "hash");
	if (XF("initiator", "bbssiii", BY(dh, 16), BY(pub, 64), APP, ASPECT, LL(1), LL(hw_mtu),
	       LL(t0)) ||
	    F.n != 1)
		return NULL;
	CHECK(F.len[0] == 19 + 67, "reference link request of %zu bytes", F.len[0]);
	rnsc_link *l = NULL;
	int rc = rnsc_link_accept(g_ctx, &l, dest, F.f[0], F.len[0], nh_mtu, t0 + 40);
	CHECK(rc == 0, "rnsc refused the reference's link request: %s", rnsc_err_name(rc));
	if (rc)
		return NULL;
	rnsc_link_set_callbacks(l, &CBS, s);
	ref_state rs;
	if (ref_state_get(&rs) == 0)
		CHECK(memcmp(rs.link_id, rnsc_link_id(l), 16) == 0, "link ids differ");
	uint8_t f[8192];
	int n = pop(l, f, sizeof(f));
	if (n <= 0 || XF("receive", "bi", BY(f, n), LL(t0 + 100)) || F.n != 1) {
		CHECK(0, "the reference sent %d frames for the proof", F.n);
		rnsc_link_del(l);
		return NULL;
	}
	if (ref_state_get(&rs) == 0) {
		CHECK(rs.status == RNSC_LINK_ACTIVE && rs.established == 1,
		      "reference initiator not established (%d)", rs.status);
		CHECK(rs.has_key && memcmp(rs.key, rnsc_link_derived_key(l), 64) == 0,
		      "session keys differ");
		CHECK(rs.rtt_us == 100000, "reference rtt %lld us", rs.rtt_us);
		CHECK(rs.has_remote, "reference initiator has no remote identity");
	}
	rc = rnsc_link_receive(l, F.f[0], F.len[0], t0 + 150);
	CHECK(rc == 0, "rnsc refused the reference's RTT packet: %s", rnsc_err_name(rc));
	CHECK(rnsc_link_status(l) == RNSC_LINK_ACTIVE && s->established == 1,
	      "rnsc responder not established");
	CHECK(rnsc_link_rtt(l) > 0.1099 && rnsc_link_rtt(l) < 0.1101, "rnsc rtt %f",
	      rnsc_link_rtt(l));
	if (ref_state_get(&rs) == 0)
		CHECK(rs.mtu == (long long)rnsc_link_mtu(l), "MTU: reference %lld, rnsc %u", rs.mtu,
		      rnsc_link_mtu(l));
	return l;
}

/* ---- cases ------------------------------------------------------------------------------- */

static void test_rnsc_initiator(void)
{
	g_case = "rnsc->ref";
	rnsc_identity dest;
	side s = {0};
	rnsc_link *l = rnsc_to_ref(&dest, &s, 0, 1, 1000);
	CU_ASSERT_FATAL(l != NULL);
	uint8_t f[4096], got[4096];
	size_t gl;
	int ctxv, n;

	/* rnsc -> ref, proved by the reference (PROVE_ALL) */
	static const char ping[] = "ping from rnsc";
	uint8_t h[32];
	CHECK(rnsc_link_send(l, RNSC_CTX_NONE, BY(ping, sizeof(ping)), h, 1200) > 0, "send");
	n = pop(l, f, sizeof(f));
	if (XF("receive", "bi", BY(f, n), LL(1210)) == 0) {
		CHECK(F.n == 1, "no proof from the reference (%d frames)", F.n);
		rnsc_packet pk;
		if (F.n == 1 && rnsc_packet_unpack(&pk, F.f[0], F.len[0]) == 0) {
			CHECK(pk.packet_type == RNSC_PKT_PROOF, "proof type");
			int rc = rnsc_link_validate_proof(l, h, pk.data, pk.data_len, 1215);
			CHECK(rc == 0, "reference proof rejected: %s", rnsc_err_name(rc));
		}
	}
	CHECK(ref_message(0, &ctxv, got, sizeof(got), &gl) == 0 && ctxv == RNSC_CTX_NONE &&
		      gl == sizeof(ping) && memcmp(got, ping, gl) == 0,
	      "reference got another message");

	/* ref -> rnsc, NONE and REQUEST */
	static const char pong[] = "pong from the reference";
	if (XF("send", "ibi", LL(RNSC_CTX_NONE), BY(pong, sizeof(pong)), LL(1300)) == 0 &&
	    F.n == 1) {
		int rc = rnsc_link_receive(l, F.f[0], F.len[0], 1310);
		CHECK(rc == 0 && s.packets == 1 && s.last_ctx == RNSC_CTX_NONE &&
			      s.last_len == sizeof(pong) && memcmp(s.last, pong, sizeof(pong)) == 0,
		      "rnsc did not get the reference's message (%s)", rnsc_err_name(rc));
	}
	static const uint8_t req[] = {0x93, 0xcb, 0x41, 0xd9, 0,    0,    0,
				      0,    0,    0,    0xc4, 0x01, 0x00, 0xc0};
	if (XF("send", "ibi", LL(RNSC_CTX_REQUEST), BY(req, sizeof(req)), LL(1320)) == 0 &&
	    F.n == 1) {
		int rc = rnsc_link_receive(l, F.f[0], F.len[0], 1330);
		CHECK(rc == 0 && s.last_ctx == RNSC_CTX_REQUEST && s.last_len == sizeof(req) &&
			      memcmp(s.last, req, sizeof(req)) == 0,
		      "request plaintext differs (%s)", rnsc_err_name(rc));
	}

	/* identify */
	rnsc_identity me;
	uint8_t mepub[64];
	CHECK(rnsc_identity_generate(g_ctx, &me) == 0, "identity");
	rnsc_identity_public_bytes(&me, mepub);
	CHECK(rnsc_link_identify(l, &me, 1400) > 0, "identify");
	n = pop(l, f, sizeof(f));
	if (XF("receive", "bi", BY(f, n), LL(1410)) == 0) {
		ref_state rs;
		if (ref_state_get(&rs) == 0)
			CHECK(rs.has_identified && memcmp(rs.identified, mepub, 64) == 0 &&
				      rs.has_remote && memcmp(rs.remote, mepub, 64) == 0,
			      "the reference did not learn rnsc's identity");
	}

	/* tampered ciphertext: the reference drops it, the link stays up */
	CHECK(rnsc_link_send(l, RNSC_CTX_NONE, BY("x", 1), NULL, 1500) > 0, "send");
	n = pop(l, f, sizeof(f));
	f[n - 5] ^= 0x10;
	if (XF("receive", "bi", BY(f, n), LL(1510)) == 0) {
		CHECK(F.n == 0, "the reference proved a forged packet");
		ref_state rs;
		if (ref_state_get(&rs) == 0)
			CHECK(rs.received == 1 && rs.status == RNSC_LINK_ACTIVE,
			      "forged packet delivered (%lld)", rs.received);
	}

	/* keepalive: rnsc asks, the reference (quiet for its keepalive) answers */
	uint64_t t = 1500 + 22629 + 100;
	CHECK(rnsc_link_tick(l, t) == 0, "tick");
	n = pop(l, f, sizeof(f));
	CHECK(n == 20 && f[18] == RNSC_CTX_KEEPALIVE && f[19] == 0xFF, "keepalive request");
	if (XF("receive", "bi", BY(f, n), LL(t + 5)) == 0) {
		CHECK(F.n == 1 && F.len[0] == 20 && F.f[0][19] == 0xFE, "no keepalive answer");
		if (F.n == 1)
			CHECK(rnsc_link_receive(l, F.f[0], F.len[0], t + 10) == 0,
			      "answer refused");
	}

	/* teardown by rnsc (initiator) */
	CHECK(rnsc_link_teardown(l, t + 100) == 0, "teardown");
	n = pop(l, f, sizeof(f));
	if (XF("receive", "bi", BY(f, n), LL(t + 110)) == 0)
		ref_status_is(RNSC_LINK_CLOSED, RNSC_LINK_INITIATOR_CLOSED,
			      "after rnsc's teardown");
	CHECK(rnsc_link_reason(l) == RNSC_LINK_INITIATOR_CLOSED && s.closed == 1, "rnsc side");
	rnsc_link_del(l);
	rnsc_identity_free(&me);
	rnsc_identity_free(&dest);
}

static void test_ref_initiator(void)
{
	g_case = "ref->rnsc";
	rnsc_identity dest;
	side s = {0};
	rnsc_link *l = ref_to_rnsc(&dest, &s, 0, RNSC_MTU, 1000);
	CU_ASSERT_FATAL(l != NULL);
	uint8_t f[4096], got[4096];
	size_t gl;
	int ctxv, n;

	static const char hello[] = "hello from the reference initiator";
	if (XF("send", "ibi", LL(RNSC_CTX_NONE), BY(hello, sizeof(hello)), LL(1200)) == 0 &&
	    F.n == 1) {
		int rc = rnsc_link_receive(l, F.f[0], F.len[0], 1210);
		CHECK(rc == 0 && s.packets == 1 && s.last_len == sizeof(hello) &&
			      memcmp(s.last, hello, sizeof(hello)) == 0,
		      "rnsc did not get it (%s)", rnsc_err_name(rc));
	}
	static const char back[] = "and back from the rnsc responder";
	CHECK(rnsc_link_send(l, RNSC_CTX_NONE, BY(back, sizeof(back)), NULL, 1300) > 0, "send");
	n = pop(l, f, sizeof(f));
	if (XF("receive", "bi", BY(f, n), LL(1310)) == 0)
		CHECK(ref_message(0, &ctxv, got, sizeof(got), &gl) == 0 && gl == sizeof(back) &&
			      memcmp(got, back, gl) == 0,
		      "the reference got another message");

	/* the reference identifies itself to rnsc */
	rnsc_identity me;
	uint8_t prv[64];
	CHECK(rnsc_identity_generate(g_ctx, &me) == 0, "identity");
	rnsc_identity_private_bytes(&me, prv);
	if (XF("identify", "bi", BY(prv, 64), LL(1400)) == 0 && F.n == 1) {
		int rc = rnsc_link_receive(l, F.f[0], F.len[0], 1410);
		CHECK(rc == 0 && s.identified == 1 && memcmp(s.who, me.hash, 16) == 0,
		      "rnsc did not learn the reference's identity (%s)", rnsc_err_name(rc));
	}

	/* a keepalive from the reference initiator, answered by rnsc once due */
	ref_state rs;
	ref_state_get(&rs);
	uint64_t t = 1500 + (uint64_t)rs.keepalive_ms + 100;
	rnsc_refwire_res r;
	if (XL(&r, "watchdog", "i", LL(t)) == 0 && take_frames(&r, 1) == 0) {
		CHECK(F.n == 1 && F.len[0] == 20 && F.f[0][19] == 0xFF,
		      "reference watchdog sent %d frames", F.n);
		if (F.n == 1) {
			int rc = rnsc_link_receive(l, F.f[0], F.len[0],
						   1300 + rnsc_link_keepalive_ms(l) + 1);
			CHECK(rc == 0, "keepalive refused: %s", rnsc_err_name(rc));
			n = pop(l, f, sizeof(f));
			CHECK(n == 20 && f[19] == 0xFE, "rnsc did not answer");
			if (n > 0 && XF("receive", "bi", BY(f, n), LL(t + 20)) == 0)
				CHECK(F.n == 0, "the reference answered an answer");
		}
	}
	rnsc_refwire_res_free(&r);

	/* teardown by rnsc (responder): the reference initiator sees DESTINATION_CLOSED */
	CHECK(rnsc_link_teardown(l, 24000) == 0, "teardown");
	n = pop(l, f, sizeof(f));
	if (XF("receive", "bi", BY(f, n), LL(24010)) == 0)
		ref_status_is(RNSC_LINK_CLOSED, RNSC_LINK_DESTINATION_CLOSED,
			      "after rnsc's teardown");
	rnsc_link_del(l);

	/* and the other way: the reference tears down, rnsc sees INITIATOR_CLOSED */
	side s2 = {0};
	l = ref_to_rnsc(&dest, &s2, 0, RNSC_MTU, 5000);
	CU_ASSERT_FATAL(l != NULL);
	if (XF("teardown", "i", LL(6000)) == 0 && F.n == 1) {
		int rc = rnsc_link_receive(l, F.f[0], F.len[0], 6010);
		CHECK(rc == 0 && rnsc_link_reason(l) == RNSC_LINK_INITIATOR_CLOSED &&
			      s2.closed == 1,
		      "rnsc did not close (%s)", rnsc_err_name(rc));
	}
	ref_status_is(RNSC_LINK_CLOSED, RNSC_LINK_INITIATOR_CLOSED, "after its own teardown");
	rnsc_link_del(l);
	rnsc_identity_free(&me);
	rnsc_identity_free(&dest);
}

static void test_mtu(void)
{
	g_case = "mtu";
	rnsc_identity dest;
	side s = {0};
	/* the reference signals its interface's 8192, rnsc's interface clamps to 4096 */
	rnsc_link *l = ref_to_rnsc(&dest, &s, 8192, 4096, 1000);
	CU_ASSERT_FATAL(l != NULL);
	CHECK(rnsc_link_mtu(l) == 4096, "rnsc MTU %u", rnsc_link_mtu(l));
	uint8_t big[3000];
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 7);
	if (XF("send", "ibi", LL(RNSC_CTX_NONE), BY(big, sizeof(big)), LL(1200)) == 0 && F.n == 1) {
		CHECK(F.len[0] > RNSC_MTU, "not a large packet");
		int rc = rnsc_link_receive(l, F.f[0], F.len[0], 1210);
		CHECK(rc == 0 && s.last_len == sizeof(big) && memcmp(s.last, big, sizeof(big)) == 0,
		      "large packet lost (%s)", rnsc_err_name(rc));
	}
	rnsc_link_del(l);
	rnsc_identity_free(&dest);
	/* rnsc signals 8192; the reference responder (no transport clamp here) confirms it */
	side s2 = {0};
	l = rnsc_to_ref(&dest, &s2, 8192, 0, 2000);
	CU_ASSERT_FATAL(l != NULL);
	CHECK(rnsc_link_mtu(l) == 8192, "rnsc MTU %u", rnsc_link_mtu(l));
	CHECK(rnsc_link_send(l, RNSC_CTX_NONE, big, sizeof(big), NULL, 2200) > RNSC_MTU, "send");
	uint8_t f[4096];
	int n = pop(l, f, sizeof(f));
	if (XF("receive", "bi", BY(f, n), LL(2210)) == 0) {
		uint8_t got[4096];
		size_t gl = 0;
		int ctxv;
		CHECK(ref_message(0, &ctxv, got, sizeof(got), &gl) == 0 && gl == sizeof(big) &&
			      memcmp(got, big, gl) == 0,
		      "the reference lost the large packet");
	}
	rnsc_link_del(l);
	rnsc_identity_free(&dest);
}

/* A reference responder's proof, forged, to an rnsc initiator; an rnsc responder's proof,
 * forged, to a reference initiator: both end in the same state. */
static void test_bad_proofs(void)
{
	g_case = "bad proofs";
	for (int kind = 0; kind < 2; kind++) {
		int want = kind == 0 ? RNSC_LINK_HANDSHAKE : RNSC_LINK_CLOSED;
		/* rnsc initiator, reference responder */
		rnsc_identity dest;
		uint8_t prv[64], dh[16] = {0}, f[4096];
		CHECK(rnsc_identity_generate(g_ctx, &dest) == 0, "identity");
		rnsc_identity_private_bytes(&dest, prv);
		rnsc_refwire_res r;
		int rc = XL(&r, "responder", "bssi", BY(prv, 64), APP, ASPECT, LL(RNSC_PROVE_NONE));
		CHECK(rc == 0 && r.n == 1, "responder");
		if (rc == 0 && r.n == 1)
			memcpy(dh, r.item[0].p, 16);
		rnsc_refwire_res_free(&r);
		rnsc_link *l = NULL;
		rnsc_link_initiate_params p = {.hops = 1};
		CHECK(rnsc_link_initiate(g_ctx, &l, dh, &dest, &p, 1000) == 0, "initiate");
		CU_ASSERT_FATAL(l != NULL);
		int n = pop(l, f, sizeof(f));
		if (XF("request", "bi", BY(f, n), LL(1040)) == 0 && F.n == 1) {
			uint8_t pf[4096];
			memcpy(pf, F.f[0], F.len[0]);
			if (kind == 0)
				pf[19 + 5] ^= 0x20; /* signature */
			else
				pf[19 + 96] = (uint8_t)((pf[19 + 96] & 0x1F) | 0x40); /* mode */
			rc = rnsc_link_receive(l, pf, F.len[0], 1100);
			CHECK(rc == (kind == 0 ? RNSC_ERR_SIGNATURE : RNSC_ERR_LINK_MODE),
			      "forged proof: %s", rnsc_err_name(rc));
			CHECK(rnsc_link_status(l) == want, "rnsc initiator %s after a forged proof",
			      rnsc_link_status_name(rnsc_link_status(l)));
			/* the genuine proof after the forged one */
			rc = rnsc_link_receive(l, F.f[0], F.len[0], 1101);
			CHECK(rc == RNSC_ERR_STATE, "late proof: %s", rnsc_err_name(rc));
			CHECK(rnsc_link_status(l) == want, "rnsc initiator %s after the real proof",
			      rnsc_link_status_name(rnsc_link_status(l)));
		}
		rnsc_link_del(l);

		/* reference initiator, rnsc responder */
		uint8_t pub[64];
		rnsc_identity_public_bytes(&dest, pub);
		const char *asp[] = {ASPECT};
		CHECK(rnsc_destination_hash(g_ctx, dh, dest.hash, APP, asp, 1) == 0, "hash");
		if (XF("initiator", "bbssiii", BY(dh, 16), BY(pub, 64), APP, ASPECT, LL(1), LL(0),
		       LL(1000)) == 0 &&
		    F.n == 1) {
			rc = rnsc_link_accept(g_ctx, &l, &dest, F.f[0], F.len[0], RNSC_MTU, 1040);
			CHECK(rc == 0, "accept: %s", rnsc_err_name(rc));
			if (rc == 0) {
				n = pop(l, f, sizeof(f));
				uint8_t pf[4096];
				memcpy(pf, f, (size_t)n);
				if (kind == 0)
					pf[19 + 5] ^= 0x20;
				else
					pf[19 + 96] = (uint8_t)((pf[19 + 96] & 0x1F) | 0x40);
				if (XF("receive", "bi", BY(pf, n), LL(1100)) == 0)
					CHECK(F.n == 0,
					      "the reference sent an RTT after a forged proof");
				ref_status_is(want, 0, "reference initiator after a forged proof");
				if (XF("receive", "bi", BY(f, n), LL(1101)) == 0)
					CHECK(F.n == 0, "the reference took the real proof late");
				ref_status_is(want, 0, "reference initiator after the real proof");
				rnsc_link_del(l);
			}
		}
		rnsc_identity_free(&dest);
	}
}

/* The reference initiator's watchdog at ref_now and rnsc's tick at now: the same frames,
 * plus `extra` keepalive requests from rnsc (a re-sent unanswered keepalive). */
static void compare_step_at(rnsc_link *l, uint64_t ref_now, uint64_t now, int extra,
			    const char *what);

static void compare_step(rnsc_link *l, uint64_t now, const char *what)
{
	compare_step_at(l, now, now, 0, what);
}

static void compare_step_at(rnsc_link *l, uint64_t ref_now, uint64_t now, int extra,
			    const char *what)
{
	g_case = what;
	rnsc_refwire_res r;
	int rc = XL(&r, "watchdog", "i", LL(ref_now));
	CHECK(rc == 0, "watchdog: %s", rnsc_err_name(rc));
	if (rc || take_frames(&r, 1)) {
		rnsc_refwire_res_free(&r);
		return;
	}
	rnsc_refwire_res_free(&r);
	frames ref = F;
	CHECK(rnsc_link_tick(l, now) == 0, "tick");
	int n = 0;
	uint8_t f[8][600];
	size_t fl[8];
	int k;
	while (n < 8 && (k = rnsc_link_outbox_pop(l, f[n], sizeof(f[n]))) > 0)
		fl[n++] = (size_t)k;
	CHECK(n == ref.n + extra, "at %llu: rnsc sent %d frames, the reference %d (+%d expected)",
	      (unsigned long long)now, n, ref.n, extra);
	for (int i = ref.n; i < n; i++)
		CHECK(f[i][18] == RNSC_CTX_KEEPALIVE && f[i][19] == 0xFF,
		      "at %llu: rnsc's extra frame %d is not a keepalive request",
		      (unsigned long long)now, i);
	for (int i = 0; i < n && i < ref.n; i++)
		CHECK(fl[i] == ref.len[i] && f[i][18] == ref.f[i][18] &&
			      (f[i][18] != RNSC_CTX_KEEPALIVE || f[i][19] == ref.f[i][19]),
		      "at %llu: frame %d differs (context %02x/%02x, %zu/%zu bytes)",
		      (unsigned long long)now, i, f[i][18], ref.f[i][18], fl[i], ref.len[i]);
	ref_state rs;
	if (ref_state_get(&rs) == 0)
		CHECK(rs.status == rnsc_link_status(l) && rs.reason == rnsc_link_reason(l),
		      "at %llu: reference %s/%d, rnsc %s/%d", (unsigned long long)now,
		      rnsc_link_status_name(rs.status), rs.reason,
		      rnsc_link_status_name(rnsc_link_status(l)), rnsc_link_reason(l));
	if (rs.status == RNSC_LINK_STALE)
		CHECK(ref.extra == (long long)(rnsc_link_next_deadline(l) - now),
		      "stale nap: reference %lld ms, rnsc %llu ms", ref.extra,
		      (unsigned long long)(rnsc_link_next_deadline(l) - now));
	if (rs.status == RNSC_LINK_PENDING)
		CHECK(ref.extra == (long long)(rnsc_link_next_deadline(l) - now) ||
			      (ref.extra == 5000 && rnsc_link_next_deadline(l) - now > 5000),
		      "pending nap: reference %lld ms, rnsc %llu ms", ref.extra,
		      (unsigned long long)(rnsc_link_next_deadline(l) - now));
}

static void test_timers(void)
{
	/* establishment timeout: a reference and an rnsc initiator, one hop, no answer */
	rnsc_identity dest;
	uint8_t pub[64], dh[16], f[600];
	CHECK(rnsc_identity_generate(g_ctx, &dest) == 0, "identity");
	rnsc_identity_public_bytes(&dest, pub);
	const char *asp[] = {ASPECT};
	CHECK(rnsc_destination_hash(g_ctx, dh, dest.hash, APP, asp, 1) == 0, "hash");
	g_case = "establishment";
	CU_ASSERT_FATAL(XF("initiator", "bbssiii", BY(dh, 16), BY(pub, 64), APP, ASPECT, LL(1),
			   LL(0), LL(1000)) == 0);
	rnsc_link *l = NULL;
	rnsc_link_initiate_params p = {.hops = 1};
	CU_ASSERT_FATAL(rnsc_link_initiate(g_ctx, &l, dh, &dest, &p, 1000) == 0);
	(void)pop(l, f, sizeof(f));
	compare_step(l, 2000, "pending +1s");
	compare_step(l, 12999, "pending, 1 ms before the timeout");
	compare_step(l, 13000, "establishment timeout");
	CHECK(rnsc_link_reason(l) == RNSC_LINK_TIMEOUT, "reason");
	rnsc_link_del(l);

	/* an established initiator left alone: keepalives, STALE, close */
	side s = {0}, sr = {0};
	rnsc_link *resp = ref_to_rnsc(&dest, &sr, 0, RNSC_MTU, 1000);
	CU_ASSERT_FATAL(resp != NULL);
	rnsc_link_del(resp);
	/* the rnsc twin of the reference initiator: same times (request 1000, proof 1100) */
	rnsc_identity d2;
	CHECK(rnsc_identity_generate(g_ctx, &d2) == 0, "identity");
	CU_ASSERT_FATAL(rnsc_link_initiate(g_ctx, &l, dh, &d2, &p, 1000) == 0);
	rnsc_link_set_callbacks(l, &CBS, &s);
	int n = pop(l, f, sizeof(f));
	rnsc_link *twin = NULL;
	CU_ASSERT_FATAL(rnsc_link_accept(g_ctx, &twin, &d2, f, (size_t)n, RNSC_MTU, 1040) == 0);
	n = pop(twin, f, sizeof(f));
	CU_ASSERT_FATAL(rnsc_link_receive(l, f, (size_t)n, 1100) == 0);
	(void)pop(l, f, sizeof(f)); /* its RTT packet */
	rnsc_link_del(twin);
	uint64_t ka = rnsc_link_keepalive_ms(l), st = rnsc_link_stale_time_ms(l);
	ref_state rs;
	if (ref_state_get(&rs) == 0)
		CHECK(rs.keepalive_ms == (long long)ka || rs.keepalive_ms + 1 == (long long)ka,
		      "keepalive: reference %lld ms, rnsc %llu ms", rs.keepalive_ms,
		      (unsigned long long)ka);
	/* Deliberate: rnsc sends each keepalive a margin after the reference's time (its RTT,
	 * 50 ms..1 s; see link.c keepalive_margin) and re-sends an unanswered one a quarter
	 * keepalive after that time; the schedule, STALE and the close are the reference's. */
	double rtt_ms = rnsc_link_rtt(l) * 1000.0;
	uint64_t m = (uint64_t)rtt_ms;
	m += (double)m < rtt_ms; /* rounded up, as link.c's secs_to_ms */
	m = m < 50 ? 50 : m > 1000 ? 1000 : m;
	compare_step(l, 1100 + ka - 2, "1 ms before the first keepalive");
	compare_step_at(l, 1100 + ka + 1, 1100 + ka + m - 1, -1, "first keepalive, rnsc's margin");
	compare_step_at(l, 1100 + ka + 2, 1100 + ka + m, 1, "first keepalive after the margin");
	compare_step(l, 1100 + ka + m + 500, "no second keepalive yet");
	compare_step_at(l, 1100 + ka + ka / 4, 1100 + ka + ka / 4, 1,
			"rnsc re-sends the unanswered one");
	compare_step(l, 1100 + st - 2, "just before stale and the second keepalive");
	compare_step(l, 1100 + st + 1, "second keepalive, stale");
	compare_step(l, 1100 + st + 1 + 5000, "closed after the nap");
	CHECK(rnsc_link_reason(l) == RNSC_LINK_TIMEOUT, "reason");
	rnsc_link_del(l);
	rnsc_identity_free(&d2);
	rnsc_identity_free(&dest);

	/* a responder left alone (request 1040, RTT 1150): no keepalives of its own, STALE,
	 * then closed with a LINKCLOSE; the reference responder against an rnsc twin */
	side s3 = {0};
	rnsc_link *ini = rnsc_to_ref(&dest, &s3, 0, 0, 1000);
	CU_ASSERT_FATAL(ini != NULL);
	rnsc_link_del(ini);
	CU_ASSERT_FATAL(rnsc_identity_generate(g_ctx, &d2) == 0);
	CU_ASSERT_FATAL(rnsc_link_initiate(g_ctx, &ini, dh, &d2, &p, 1000) == 0);
	n = pop(ini, f, sizeof(f));
	rnsc_link *resp2 = NULL;
	CU_ASSERT_FATAL(rnsc_link_accept(g_ctx, &resp2, &d2, f, (size_t)n, RNSC_MTU, 1040) == 0);
	n = pop(resp2, f, sizeof(f));
	CU_ASSERT_FATAL(rnsc_link_receive(ini, f, (size_t)n, 1100) == 0);
	n = pop(ini, f, sizeof(f));
	CU_ASSERT_FATAL(rnsc_link_receive(resp2, f, (size_t)n, 1150) == 0);
	rnsc_link_del(ini);
	st = rnsc_link_stale_time_ms(resp2);
	ka = rnsc_link_keepalive_ms(resp2);
	compare_step(resp2, 1150 + ka + 1, "responder past its keepalive");
	compare_step(resp2, 1150 + st - 2, "responder just before stale");
	compare_step(resp2, 1150 + st + 1, "responder stale");
	compare_step(resp2, 1150 + st + 1 + 5000, "responder closed after the nap");
	CHECK(rnsc_link_reason(resp2) == RNSC_LINK_TIMEOUT, "reason");
	rnsc_link_del(resp2);
	rnsc_identity_free(&d2);
	rnsc_identity_free(&dest);
}

/* ---- channel ----------------------------------------------------------------------------- */

typedef struct chside {
	rnsc_channel *ch;
	unsigned got;
	uint16_t last_type, last_seq;
	uint8_t last[512], last_pt[600];
	size_t last_len, last_pt_len;
	int proof_rc, receive_rc;
} chside;

static uint64_t g_ch_now;

static void ch_packet(void *ud, rnsc_link *l, int context, const uint8_t *d, size_t n,
		      const rnsc_packet *pk, const uint8_t *raw, size_t raw_len)
{
	(void)l, (void)raw, (void)raw_len;
	chside *c = ud;
	if (pk->packet_type == RNSC_PKT_PROOF && context == RNSC_CTX_NONE) {
		c->proof_rc = rnsc_channel_proof(c->ch, d, n, g_ch_now);
	} else if (context == RNSC_CTX_CHANNEL) {
		c->last_pt_len = n < sizeof(c->last_pt) ? n : sizeof(c->last_pt);
		memcpy(c->last_pt, d, c->last_pt_len);
		c->receive_rc = rnsc_channel_receive(c->ch, d, n, g_ch_now);
	}
}

static int ch_handler(void *ud, rnsc_channel *ch, uint16_t type, uint16_t seq, const uint8_t *p,
		      size_t n)
{
	(void)ch;
	chside *c = ud;
	c->got++;
	c->last_type = type;
	c->last_seq = seq;
	c->last_len = n < sizeof(c->last) ? n : sizeof(c->last);
	memcpy(c->last, p, c->last_len);
	return 0;
}

static const rnsc_link_callbacks CH_CBS = {NULL, NULL, ch_packet, NULL, NULL};

typedef struct ref_ch {
	long long window, window_max, window_min, next_seq, next_rx, outstanding, held, received;
} ref_ch;

static int ref_ch_state(ref_ch *r)
{
	rnsc_refwire_res res;
	memset(r, 0, sizeof(*r));
	int rc = XL0(&res, "channel_state");
	CHECK(rc == 0 && res.n == 8, "channel_state: %s", rnsc_err_name(rc));
	if (rc == 0 && res.n == 8) {
		r->window = res.item[0].i;
		r->window_max = res.item[1].i;
		r->window_min = res.item[2].i;
		r->next_seq = res.item[3].i;
		r->next_rx = res.item[4].i;
		r->outstanding = res.item[5].i;
		r->held = res.item[6].i;
		r->received = res.item[7].i;
	}
	rnsc_refwire_res_free(&res);
	return rc;
}

/* rnsc -> reference: one message, its proof back; returns 0 when both sides agree. */
static void ch_rnsc_to_ref(rnsc_link *l, chside *c, const char *msg, uint64_t now)
{
	g_ch_now = now;
	uint16_t seq = 0;
	int rc = rnsc_channel_send(c->ch, 0x0101, BY(msg, strlen(msg)), &seq, now);
	CHECK(rc == 0, "rnsc channel send: %s", rnsc_err_name(rc));
	uint8_t f[600];
	int n = rnsc_link_outbox_pop(l, f, sizeof(f));
	if (n <= 0 || XF("receive", "bi", BY(f, n), LL(now + 5)) || F.n != 1) {
		CHECK(0, "the reference did not prove rnsc's channel packet (%d frames)", F.n);
		return;
	}
	rnsc_refwire_res r;
	ref_ch rc_;
	if (ref_ch_state(&rc_) == 0 && rc_.received > 0 &&
	    XL(&r, "channel_message", "i", LL(rc_.received - 1)) == 0) {
		CHECK(r.n == 2 && r.item[0].i == 0x0101 && r.item[1].len == strlen(msg) &&
			      memcmp(r.item[1].p, msg, strlen(msg)) == 0,
		      "the reference channel got another message");
		rnsc_refwire_res_free(&r);
		CHECK(rc_.next_rx == (long long)((seq + 1) & 0xFFFF), "reference next rx %lld",
		      rc_.next_rx);
	}
	g_ch_now = now + 10;
	rc = rnsc_link_receive(l, F.f[0], F.len[0], now + 10);
	CHECK(rc == 0 && c->proof_rc == 0, "the reference's proof: %s / %s", rnsc_err_name(rc),
	      rnsc_err_name(c->proof_rc));
}

/* reference -> rnsc: one message, rnsc's proof back to the reference's receipt. expect_rc is
 * the channel's verdict; 1 means taken but held (no delivery yet). */
static void ch_ref_to_rnsc(rnsc_link *l, chside *c, uint16_t type, const char *msg, uint64_t now,
			   int expect_rc)
{
	g_ch_now = now + 5;
	unsigned before = c->got;
	if (XF("channel_send", "ibi", LL(type), BY(msg, strlen(msg)), LL(now)) || F.n != 1) {
		CHECK(0, "the reference channel sent %d frames", F.n);
		return;
	}
	int rc = rnsc_link_receive(l, F.f[0], F.len[0], now + 5);
	CHECK(rc == 0 && c->receive_rc == (expect_rc == 1 ? 0 : expect_rc),
	      "rnsc took the reference's envelope: %s / %s", rnsc_err_name(rc),
	      rnsc_err_name(c->receive_rc));
	if (expect_rc == 0) {
		CHECK(c->got == before + 1 && c->last_type == type && c->last_len == strlen(msg) &&
			      memcmp(c->last, msg, strlen(msg)) == 0,
		      "rnsc's channel got another message");
		/* the envelope itself: type, sequence, length, payload, as rnsc would pack it */
		uint8_t e[600];
		int en = rnsc_channel_envelope_pack(e, sizeof(e), type, c->last_seq,
						    BY(msg, strlen(msg)));
		CHECK(en > 0 && (size_t)en == c->last_pt_len &&
			      memcmp(e, c->last_pt, (size_t)en) == 0,
		      "the reference's envelope differs from rnsc's packing");
	}
	uint8_t f[600];
	int n = rnsc_link_outbox_pop(l, f, sizeof(f));
	CHECK(n > 0, "rnsc did not prove the channel packet");
	if (n > 0 && XF("receive", "bi", BY(f, n), LL(now + 10)) == 0)
		CHECK(F.n == 0, "the reference answered a proof");
}

static void test_channel(void)
{
	g_case = "channel rnsc->ref";
	rnsc_identity dest;
	side s = {0};
	rnsc_link *l = rnsc_to_ref(&dest, &s, 0, 0, 1000);
	CU_ASSERT_FATAL(l != NULL);
	chside c = {0};
	rnsc_link_set_callbacks(l, &CH_CBS, &c);
	CU_ASSERT_FATAL(rnsc_channel_new(&c.ch, l) == 0);
	CHECK(rnsc_channel_register_type(c.ch, 0x0101, 0) == 0, "register");
	CHECK(rnsc_channel_add_handler(c.ch, ch_handler, &c) == 0, "handler");
	rnsc_refwire_res r;
	int rc = XL(&r, "channel_open", "i", LL(0x0101));
	CHECK(rc == 0 && r.n == 4, "channel_open: %s", rnsc_err_name(rc));
	if (rc == 0 && r.n == 4) {
		CHECK(r.item[0].i == rnsc_channel_window(c.ch) &&
			      r.item[1].i == rnsc_channel_window_max(c.ch) &&
			      r.item[2].i == rnsc_channel_window_min(c.ch),
		      "initial windows differ: reference %lld/%lld/%lld", r.item[0].i, r.item[1].i,
		      r.item[2].i);
		CHECK(r.item[3].i == (long long)rnsc_channel_mdu(c.ch), "channel MDU %lld vs %zu",
		      r.item[3].i, rnsc_channel_mdu(c.ch));
	}
	rnsc_refwire_res_free(&r);

	/* twelve messages each way, one at a time: the windows grow alike (fast rate) */
	uint64_t t = 2000;
	for (int i = 0; i < 12; i++, t += 100) {
		char m[32];
		snprintf(m, sizeof(m), "rnsc message %d", i);
		ch_rnsc_to_ref(l, &c, m, t);
		snprintf(m, sizeof(m), "reference message %d", i);
		ch_ref_to_rnsc(l, &c, 0x0101, m, t + 50, 0);
	}
	ref_ch rs;
	if (ref_ch_state(&rs) == 0) {
		CHECK(rs.window == rnsc_channel_window(c.ch) &&
			      rs.window_max == rnsc_channel_window_max(c.ch) &&
			      rs.window_min == rnsc_channel_window_min(c.ch),
		      "windows after 12 deliveries: reference %lld/%lld/%lld, rnsc %u/%u/%u",
		      rs.window, rs.window_max, rs.window_min, rnsc_channel_window(c.ch),
		      rnsc_channel_window_max(c.ch), rnsc_channel_window_min(c.ch));
		CHECK(rs.window_max == 48, "the reference did not reach the fast window");
		CHECK(rs.outstanding == 0 && rnsc_channel_outstanding(c.ch) == 0, "outstanding");
		CHECK(rs.next_seq == 12 && rnsc_channel_next_sequence(c.ch) == 12 &&
			      rs.next_rx == 12 && rnsc_channel_next_rx_sequence(c.ch) == 12,
		      "sequences");
	}

	/* reordering: two reference envelopes arrive swapped */
	g_case = "channel reorder";
	uint8_t f1[600], f2[600];
	size_t n1 = 0, n2 = 0;
	if (XF("channel_send", "ibi", LL(0x0101), BY("first", 5), LL(t)) == 0 && F.n == 1) {
		memcpy(f1, F.f[0], F.len[0]);
		n1 = F.len[0];
	}
	if (XF("channel_send", "ibi", LL(0x0101), BY("second", 6), LL(t + 1)) == 0 && F.n == 1) {
		memcpy(f2, F.f[0], F.len[0]);
		n2 = F.len[0];
	}
	g_ch_now = t + 10;
	unsigned before = c.got;
	CHECK(n2 && rnsc_link_receive(l, f2, n2, t + 10) == 0 && c.got == before &&
		      rnsc_channel_held(c.ch) == 1,
	      "the second envelope was not held");
	CHECK(n1 && rnsc_link_receive(l, f1, n1, t + 11) == 0 && c.got == before + 2 &&
		      c.last_len == 6 && memcmp(c.last, "second", 6) == 0,
	      "not delivered in order");
	uint8_t f[600];
	int n;
	while ((n = rnsc_link_outbox_pop(l, f, sizeof(f))) > 0)
		CHECK(XF("receive", "bi", BY(f, n), LL(t + 20)) == 0 && F.n == 0, "proof");
	if (ref_ch_state(&rs) == 0)
		CHECK(rs.outstanding == 0, "the reference still waits for %lld proofs",
		      rs.outstanding);

	/* the reference's retransmission time: 1.5^0 * max(rtt * 2.5, 0.025) * (1 + 1.5) */
	g_case = "channel retransmission";
	ref_state st;
	ref_state_get(&st);
	uint64_t t0 = t + 1000;
	if (XF("channel_send", "ibi", LL(0x0101), BY("lost", 4), LL(t0)) == 0 && F.n == 1) {
		double rtt = (double)st.rtt_us / 1e6;
		double to = (rtt * 2.5 > 0.025 ? rtt * 2.5 : 0.025) * 2.5;
		uint64_t due = t0 + (uint64_t)(to * 1000.0) + 1;
		CHECK(XF("receipts_check", "i", LL(due - 1)) == 0 && F.n == 0,
		      "the reference resent early (rtt %f, due %llu)", rtt,
		      (unsigned long long)due);
		CHECK(XF("receipts_check", "i", LL(due)) == 0 && F.n == 1,
		      "the reference did not resend at %llu", (unsigned long long)due);
		if (F.n == 1) {
			g_ch_now = due + 5;
			before = c.got;
			rc = rnsc_link_receive(l, F.f[0], F.len[0], due + 5);
			CHECK(rc == 0 && c.got == before + 1,
			      "the resent envelope was not delivered");
			while ((n = rnsc_link_outbox_pop(l, f, sizeof(f))) > 0)
				CHECK(XF("receive", "bi", BY(f, n), LL(due + 10)) == 0, "proof");
			/* 14 deliveries (window 9, minimum 16 since the fast upgrade at the 10th),
			 * so the timeout could not shrink it; this delivery makes it 10 */
			if (ref_ch_state(&rs) == 0)
				CHECK(rs.outstanding == 0 && rs.window == 10 && rs.window_min == 16,
				      "after a timeout: reference window %lld, outstanding %lld",
				      rs.window, rs.outstanding);
		}
	}
	/* a type rnsc has not registered: dropped by rnsc's channel, still proved by its link */
	g_case = "channel unregistered";
	rc = XL(&r, "channel_open", "i", LL(0x0202));
	rnsc_refwire_res_free(&r);
	ch_ref_to_rnsc(l, &c, 0x0202, "nobody listens", t0 + 100, RNSC_ERR_NOTFOUND);
	CHECK(rnsc_channel_next_rx_sequence(c.ch) == 15, "rnsc took the unregistered envelope");
	/* as in the reference, the sequence it used now stalls the channel: the next message is
	 * held, never delivered */
	before = c.got;
	ch_ref_to_rnsc(l, &c, 0x0101, "stalled", t0 + 200, 1);
	CHECK(c.got == before && rnsc_channel_held(c.ch) == 1,
	      "a message after the gap was delivered");

	/* and rnsc's own timer, from the same formula with its own RTT */
	g_ch_now = t0 + 5000;
	CHECK(rnsc_channel_send(c.ch, 0x0101, BY("timer", 5), NULL, t0 + 5000) == 0, "send");
	{
		double rtt = rnsc_link_rtt(l);
		double to = (rtt * 2.5 > 0.025 ? rtt * 2.5 : 0.025) * 2.5;
		CHECK(rnsc_channel_next_deadline(c.ch) == t0 + 5000 + (uint64_t)(to * 1000.0) + 1,
		      "rnsc deadline");
	}
	rnsc_channel_del(c.ch);
	rnsc_link_del(l);
	rnsc_identity_free(&dest);

	/* the other role: a reference initiator's channel and an rnsc responder's */
	g_case = "channel ref->rnsc";
	side s2 = {0};
	l = ref_to_rnsc(&dest, &s2, 0, RNSC_MTU, 1000);
	CU_ASSERT_FATAL(l != NULL);
	chside c2 = {0};
	rnsc_link_set_callbacks(l, &CH_CBS, &c2);
	CU_ASSERT_FATAL(rnsc_channel_new(&c2.ch, l) == 0);
	CHECK(rnsc_channel_register_type(c2.ch, 0x0101, 0) == 0, "register");
	CHECK(rnsc_channel_add_handler(c2.ch, ch_handler, &c2) == 0, "handler");
	rc = XL(&r, "channel_open", "i", LL(0x0101));
	rnsc_refwire_res_free(&r);
	t = 2000;
	for (int i = 0; i < 3; i++, t += 100) {
		ch_ref_to_rnsc(l, &c2, 0x0101, "to the responder", t, 0);
		ch_rnsc_to_ref(l, &c2, "to the initiator", t + 50);
	}
	if (ref_ch_state(&rs) == 0)
		CHECK(rs.window == rnsc_channel_window(c2.ch) && rs.received == 3 && c2.got == 3,
		      "reference window %lld, rnsc %u; received %lld / %u", rs.window,
		      rnsc_channel_window(c2.ch), rs.received, c2.got);
	rnsc_channel_del(c2.ch);
	rnsc_link_del(l);
	rnsc_identity_free(&dest);
}

/* ---- byte-identical frames ---------------------------------------------------------------- */

static uint8_t g_script[128];
static size_t g_script_len, g_script_pos;

/* Serves the scripted bytes, then refuses: a draw nobody scripted is a test failure. */
static int script_rng(void *ud, uint8_t *out, size_t len)
{
	(void)ud;
	if (g_script_pos + len > g_script_len)
		return RNSC_ERR_RNG;
	memcpy(out, g_script + g_script_pos, len);
	g_script_pos += len;
	return 0;
}

static void script(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
	memcpy(g_script, a, an);
	if (bn)
		memcpy(g_script + an, b, bn);
	g_script_len = an + bn;
	g_script_pos = 0;
	rnsc_crypto_set_rng(g_ctx, script_rng, NULL);
}

static void unscript(void)
{
	CHECK(g_script_pos == g_script_len, "rnsc drew %zu of %zu scripted bytes", g_script_pos,
	      g_script_len);
	rnsc_crypto_set_rng(g_ctx, NULL, NULL);
}

static int pin(const uint8_t *x, const uint8_t *ed, const uint8_t *iv)
{
	rnsc_refwire_res r;
	int rc = XL(&r, "pin", "bbb", x, (size_t)(x ? 32 : 0), ed, (size_t)(ed ? 32 : 0), iv,
		    (size_t)(iv ? 16 : 0));
	rnsc_refwire_res_free(&r);
	CHECK(rc == 0, "pin: %s", rnsc_err_name(rc));
	return rc;
}

static void same(const uint8_t *a, size_t an, const char *what)
{
	CHECK(F.n == 1 && F.len[0] == an && memcmp(F.f[0], a, an) == 0,
	      "%s: rnsc and the reference built different frames (%zu / %zu bytes)", what, an,
	      F.n ? F.len[0] : 0);
}

static void test_same_bytes(void)
{
	g_case = "same bytes";
	rnsc_identity dest;
	uint8_t prv[64], pub[64], dh[16], x_i[32], ed_i[32], x_r[32], iv[4][16];
	CU_ASSERT_FATAL(rnsc_identity_generate(g_ctx, &dest) == 0);
	rnsc_identity_private_bytes(&dest, prv);
	rnsc_identity_public_bytes(&dest, pub);
	const char *asp[] = {ASPECT};
	CU_ASSERT_FATAL(rnsc_destination_hash(g_ctx, dh, dest.hash, APP, asp, 1) == 0);
	CU_ASSERT_FATAL(rnsc_random(g_ctx, x_i, 32) == 0 && rnsc_random(g_ctx, ed_i, 32) == 0 &&
			rnsc_random(g_ctx, x_r, 32) == 0 &&
			rnsc_random(g_ctx, (uint8_t *)iv, sizeof(iv)) == 0);
	uint8_t req[600], proof[600], f[600];
	int rn, pn, n;

	/* LINKREQUEST */
	rnsc_link *li = NULL, *lr = NULL;
	rnsc_link_initiate_params p = {.hops = 1};
	script(x_i, 32, ed_i, 32);
	CU_ASSERT_FATAL(rnsc_link_initiate(g_ctx, &li, dh, &dest, &p, 1000) == 0);
	unscript();
	rn = rnsc_link_outbox_pop(li, req, sizeof(req));
	CU_ASSERT_FATAL(rn > 0);
	if (pin(x_i, ed_i, NULL) == 0 && XF("initiator", "bbssiii", BY(dh, 16), BY(pub, 64), APP,
					    ASPECT, LL(1), LL(0), LL(1000)) == 0)
		same(req, (size_t)rn, "LINKREQUEST");

	/* LRPROOF: rnsc's responder here, the reference's below */
	script(x_r, 32, NULL, 0);
	int rc = rnsc_link_accept(g_ctx, &lr, &dest, req, (size_t)rn, RNSC_MTU, 1040);
	unscript();
	CU_ASSERT_FATAL(rc == 0);
	pn = rnsc_link_outbox_pop(lr, proof, sizeof(proof));
	CU_ASSERT_FATAL(pn > 0);

	/* LRRTT (rtt 0.125 s, exact in binary on both sides) */
	script(iv[0], 16, NULL, 0);
	CHECK(rnsc_link_receive(li, proof, (size_t)pn, 1125) == 0, "proof");
	unscript();
	n = rnsc_link_outbox_pop(li, f, sizeof(f));
	if (pin(NULL, NULL, iv[0]) == 0 && XF("receive", "bi", BY(proof, pn), LL(1125)) == 0)
		same(f, (size_t)n, "LRRTT");
	CHECK(rnsc_link_receive(lr, f, (size_t)n, 1150) == 0 &&
		      rnsc_link_status(lr) == RNSC_LINK_ACTIVE,
	      "rnsc responder");

	/* the reference as responder to rnsc's request */
	rnsc_refwire_res r;
	rc = XL(&r, "responder", "bssi", BY(prv, 64), APP, ASPECT, LL(RNSC_PROVE_NONE));
	rnsc_refwire_res_free(&r);
	CHECK(rc == 0, "responder");
	if (pin(x_r, NULL, NULL) == 0 && XF("request", "bi", BY(req, rn), LL(1040)) == 0)
		same(proof, (size_t)pn, "LRPROOF");
	if (XF("receive", "bi", BY(f, n), LL(1150)) == 0)
		ref_status_is(RNSC_LINK_ACTIVE, 0, "reference responder");

	/* DATA and LINKCLOSE from both responders */
	static const char msg[] = "same bytes on the wire";
	script(iv[1], 16, NULL, 0);
	CHECK(rnsc_link_send(lr, RNSC_CTX_NONE, BY(msg, sizeof(msg)), NULL, 1200) > 0, "send");
	unscript();
	n = rnsc_link_outbox_pop(lr, f, sizeof(f));
	if (pin(NULL, NULL, iv[1]) == 0 &&
	    XF("send", "ibi", LL(RNSC_CTX_NONE), BY(msg, sizeof(msg)), LL(1200)) == 0)
		same(f, (size_t)n, "DATA");
	script(iv[2], 16, NULL, 0);
	CHECK(rnsc_link_teardown(lr, 1300) == 0, "teardown");
	unscript();
	n = rnsc_link_outbox_pop(lr, f, sizeof(f));
	if (pin(NULL, NULL, iv[2]) == 0 && XF("teardown", "i", LL(1300)) == 0)
		same(f, (size_t)n, "LINKCLOSE");
	rnsc_link_del(li);
	rnsc_link_del(lr);
	rnsc_identity_free(&dest);
}

int main(void)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	int rc = conf_setup();
	if (rc == 0)
		rc = install_harness();
	const rnsc_crypto_backend *be = rc == 0 ? conf_backend(0) : NULL;
	if (rc == 0 && (!be || strcmp(be->name, "reference") == 0))
		rc = RNSC_ERR_NOPRIM; /* rnsc's side must run on an rnsc crypto plugin */
	if (rc == 0 && !(g_ctx = conf_ctx_for(be->name)))
		rc = RNSC_ERR_NOMEM;
	if (rc != 0) {
		fprintf(stderr, "link_xcheck_test: FAILED: set-up failed: %s\n", rnsc_strerror(rc));
		CU_cleanup_registry();
		return 1;
	}
	CU_pSuite s = CU_add_suite("link vs reference Link", NULL, NULL);
	CU_add_test(s, "byte-identical frames", test_same_bytes);
	CU_add_test(s, "rnsc initiator, reference responder", test_rnsc_initiator);
	CU_add_test(s, "reference initiator, rnsc responder", test_ref_initiator);
	CU_add_test(s, "link MTU signalling", test_mtu);
	CU_add_test(s, "forged proofs", test_bad_proofs);
	CU_add_test(s, "watchdog timers", test_timers);
	CU_add_test(s, "channel", test_channel);
	fprintf(stderr, "link_xcheck_test: rns %s embedded; rnsc crypto: %s\n",
		rnsc_pyref_version(conf_ref()), be->name);
	int failures = rnsc_cu_run();
	fprintf(stderr, "link_xcheck_test: %u reference frames exchanged; %d failures\n", g_frames,
		failures);
	rnsc_ctx_del(g_ctx);
	conf_teardown();
	return failures;
}
