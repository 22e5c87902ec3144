/* SPDX-License-Identifier: MIT */
/*
 * The message matrix (contract in matrix.h).
 *
 * Every case draws its inputs from a seeded generator. Randomness that ends up in the bytes
 * (ephemeral keys, IVs, the 16 bytes behind an announce's random hash, the announce clock, the
 * responder's link key) is chosen here and handed to both sides: to rnsc through the
 * context's test RNG (a script of exactly the bytes it is expected to draw), to the reference
 * through the wire harness's pinned randomness.
 *
 * Leg D compares verdicts. Where rnsc is deliberately stricter than the reference, the expected
 * pair is written at the mutation class (look for "STRICTER:"), so a change on either side
 * shows up as a disagreement:
 *   - IFAC bit on a packet handed to the packet parser: rnsc RNSC_ERR_IFAC_UNEXPECTED; the
 *     reference's Packet.unpack ignores the bit (its interface layer drops such frames first,
 *     which the IFAC rows check);
 *   - RELAY / TUNNEL propagation: rnsc refuses to pack a value the one-bit field cannot hold
 *     (RNSC_ERR_INVAL); the reference's pack spills the high bit into the context flag;
 *   - a link packet proof longer than 96 bytes: rnsc RNSC_ERR_MALFORMED, the reference reads
 *     the first 96 bytes and accepts;
 *   - an RTT payload with bytes after the MessagePack number: rnsc RNSC_ERR_MALFORMED, the
 *     reference's unpackb ignores them;
 *   - a KEEPALIVE payload other than 0xFF/0xFE: rnsc RNSC_ERR_MALFORMED, the reference counts
 *     it as traffic and does not answer;
 *   - signalling for an MTU beyond 21 bits: rnsc RNSC_ERR_RANGE, the reference masks it;
 *   - a KISS payload longer than the hardware MTU: rnsc drops it, the reference delivers the
 *     first HW_MTU bytes.
 */
#include "conf_rng.h"
#include "matrix.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "announce.h"
#include "backends.h"
#include "crypto.h"
#include "destination.h"
#include "hdlc.h"
#include "identity.h"
#include "ifac.h"
#include "kiss.h"
#include "linkfmt.h"
#include "packet.h"
#include "pathreq.h"
#include "proof.h"
#include "pyref.h"
#include "ref_wire.h"
#include "token.h"

#define BUF 20000  /* packets, frames and plaintexts (link MTUs up to 16384) */
#define MAX_RES 24 /* harness results alive in one case */

typedef struct mx {
	rnsc_ctx *ctx;
	rnsc_pyref *ref;
	uint64_t in, fill;
	uint8_t script[128];
	size_t script_len, script_pos, unscripted;
	conf_matrix_row *row;
	unsigned case_no, ways;
	rnsc_refwire_res res[MAX_RES];
	size_t n_res;
	const char *corpus;
	unsigned corpus_n;
	/* scratch */
	uint8_t pt[BUF], a[BUF], b[BUF], c[BUF], d[BUF];
} mx;

/* ---- generators (conf_rng.h, shared with xcheck.c) ------------------------------------------ */

static void rnd(mx *x, void *p, size_t n)
{
	conf_gen_bytes(&x->in, p, n);
}

static size_t below(mx *x, size_t n)
{
	return n ? (size_t)(conf_next64(&x->in) % n) : 0;
}

static int mx_rng(void *ud, uint8_t *out, size_t len)
{
	mx *x = ud;
	size_t have = x->script_len - x->script_pos;
	size_t take = len < have ? len : have;
	memcpy(out, x->script + x->script_pos, take);
	x->script_pos += take;
	if (take < len) {
		conf_gen_bytes(&x->fill, out + take, len - take);
		x->unscripted += len - take;
	}
	return 0;
}

static void script(mx *x, const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
	memcpy(x->script, a, an);
	if (bn)
		memcpy(x->script + an, b, bn);
	x->script_len = an + bn;
	x->script_pos = 0;
	x->unscripted = 0;
}

static int script_used(const mx *x)
{
	return x->script_pos == x->script_len && x->unscripted == 0;
}

static uint64_t name_seed(const char *s)
{
	uint64_t h = UINT64_C(1469598103934665603); /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * UINT64_C(1099511628211);
	return h;
}

/* ---- reporting ----------------------------------------------------------------------------- */

static const char *en(int rc)
{
	return rc >= 0 ? "accepted" : rnsc_err_name(rc);
}

static const char *hx(const uint8_t *p, size_t n)
{
	static char bufs[4][2 * 20 + 8];
	static unsigned k;
	char *b = bufs[k++ % 4];
	size_t shown = n < 20 ? n : 20, o = 0;
	for (size_t i = 0; i < shown; i++)
		o += (size_t)snprintf(b + o, 3, "%02x", p[i]);
	snprintf(b + o, 8, "%s", shown < n ? ".." : n ? "" : "(empty)");
	return b;
}

__attribute__((format(printf, 2, 3))) static int fail(mx *x, const char *fmt, ...)
{
	conf_matrix_row *r = x->row;
	if (!r->first[0]) {
		int n = snprintf(r->first, sizeof(r->first), "case %u: ", x->case_no);
		va_list ap;
		va_start(ap, fmt);
		if (n > 0 && (size_t)n < sizeof(r->first))
			vsnprintf(r->first + n, sizeof(r->first) - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

#define EXPECT(cond, ...)                                                                          \
	do {                                                                                       \
		if (!(cond))                                                                       \
			return fail(x, __VA_ARGS__);                                               \
	} while (0)

#define SAME(what, p, pn, q, qn)                                                                   \
	do {                                                                                       \
		size_t pn_ = (pn), qn_ = (qn);                                                     \
		EXPECT(pn_ == qn_ && memcmp((p), (q), pn_) == 0, "%s: %s (%zu) vs %s (%zu)", what, \
		       hx((const uint8_t *)(p), pn_), pn_, hx((const uint8_t *)(q), qn_), qn_);    \
	} while (0)

#define VERDICT(what, rc_rnsc, want_rnsc, rc_ref, want_ref)                                        \
	do {                                                                                       \
		int rr_ = (rc_rnsc), fr_ = (rc_ref);                                               \
		EXPECT(rr_ == (want_rnsc) && fr_ == (want_ref),                                    \
		       "%s: rnsc %s (want %s), reference %s (want %s)", what, en(rr_),             \
		       en(want_rnsc), en(fr_), en(want_ref));                                      \
		x->row->mutations++;                                                               \
	} while (0)

/* Both reject with the same code (or both accept). */
#define SAME_VERDICT(what, rc_rnsc, rc_ref)                                                        \
	do {                                                                                       \
		int rs_ = (rc_rnsc), fs_ = (rc_ref);                                               \
		EXPECT(rs_ == fs_ || (rs_ >= 0 && fs_ >= 0), "%s: rnsc %s, reference %s", what,    \
		       en(rs_), en(fs_));                                                          \
		x->row->mutations++;                                                               \
	} while (0)

/* ---- the reference ------------------------------------------------------------------------- */

#define B(p, n) (const uint8_t *)(p), (size_t)(n)
#define NB (const uint8_t *)NULL, (size_t)0
#define I(v) (long long)(v)

/* Calls the wire harness; *out stays valid until the case ends. */
static int rw(mx *x, rnsc_refwire_res **out, const char *fn, const char *fmt, ...)
{
	if (x->n_res == MAX_RES)
		return RNSC_ERR_RANGE;
	rnsc_refwire_res *r = &x->res[x->n_res++];
	va_list ap;
	va_start(ap, fmt);
	int rc = rnsc_refwire_vcall(x->ref, r, fn, fmt, ap);
	va_end(ap);
	*out = r;
	return rc;
}

static void drop_results(mx *x)
{
	for (size_t i = 0; i < x->n_res; i++)
		rnsc_refwire_res_free(&x->res[i]);
	x->n_res = 0;
}

static int is_bytes(const rnsc_refwire_res *r, size_t i)
{
	return i < r->n && r->item[i].kind == RNSC_RW_BYTES;
}

static int is_none(const rnsc_refwire_res *r, size_t i)
{
	return i < r->n && r->item[i].kind == RNSC_RW_NONE;
}

static long long ival(const rnsc_refwire_res *r, size_t i)
{
	return i < r->n && r->item[i].kind == RNSC_RW_INT ? r->item[i].i : -999999;
}

/* A harness call that must succeed with at least `items` items. */
#define REF_OK(rc, res, items, what)                                                               \
	EXPECT((rc) == 0 && (res)->n >= (items), "%s: reference %s", what,                         \
	       (rc) ? en(rc) : "returned too few items")

/* A harness call returning bytes. */
#define REF_BYTES(rc, res, what)                                                                   \
	EXPECT((rc) == 0 && is_bytes(res, 0), "%s: reference %s", what,                            \
	       (rc) ? en(rc) : "returned no bytes")

/* ---- corpus -------------------------------------------------------------------------------- */

static void corpus_put(mx *x, const char *target, const uint8_t *p, size_t n)
{
	/* seeds stay small: libFuzzer sizes its inputs after the largest seed */
	if (!x->corpus || x->case_no != 0 || n > 1200)
		return;
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", x->corpus, target);
	mkdir(path, 0777);
	snprintf(path, sizeof(path), "%s/%s/matrix-%04u", x->corpus, target, x->corpus_n++);
	FILE *f = fopen(path, "wb");
	if (f) {
		fwrite(p, 1, n, f);
		fclose(f);
	}
}

/* ---- shared fixtures ----------------------------------------------------------------------- */

static int gen_identity(mx *x, rnsc_identity *id, uint8_t prv[64])
{
	rnd(x, prv, 64);
	int rc = rnsc_identity_from_private(x->ctx, id, prv, 64);
	EXPECT(rc == 0, "identity: %s", en(rc));
	return 0;
}

/* rnsc's unpack of raw, and the fields a matrix input says it must carry. */
static int check_fields(mx *x, const char *what, const rnsc_packet *got, const rnsc_packet *want)
{
	unsigned want_dt = want->context == RNSC_CTX_LRPROOF ? RNSC_DEST_LINK : want->dest_type;
	EXPECT(got->header_type == want->header_type && got->context_flag == want->context_flag &&
		       got->transport_type == want->transport_type && got->dest_type == want_dt &&
		       got->packet_type == want->packet_type && got->hops == want->hops &&
		       got->context == want->context,
	       "%s: fields h%u f%u t%u d%u p%u hops %u ctx %u, want h%u f%u t%u d%u p%u hops %u "
	       "ctx %u",
	       what, got->header_type, got->context_flag, got->transport_type, got->dest_type,
	       got->packet_type, got->hops, got->context, want->header_type, want->context_flag,
	       want->transport_type, want_dt, want->packet_type, want->hops, want->context);
	SAME("destination hash", got->dest_hash, 16, want->dest_hash, 16);
	if (want->header_type == RNSC_HEADER_2)
		SAME("transport id", got->transport_id, 16, want->transport_id, 16);
	return 0;
}

/* The reference's packet_unpack tuple against wanted fields (and rnsc's hash of the bytes). */
static int check_ref_fields(mx *x, const char *what, const rnsc_refwire_res *r,
			    const rnsc_packet *want, const uint8_t *raw, size_t len)
{
	unsigned want_dt = want->context == RNSC_CTX_LRPROOF ? RNSC_DEST_LINK : want->dest_type;
	EXPECT(r->n >= 14, "%s: reference returned %zu items", what, r->n);
	EXPECT(ival(r, 1) == want->hops && ival(r, 2) == want->header_type &&
		       ival(r, 3) == want->context_flag && ival(r, 4) == want->transport_type &&
		       ival(r, 5) == want_dt && ival(r, 6) == want->packet_type &&
		       ival(r, 9) == want->context,
	       "%s: reference read hops %lld h%lld f%lld t%lld d%lld p%lld ctx %lld", what,
	       ival(r, 1), ival(r, 2), ival(r, 3), ival(r, 4), ival(r, 5), ival(r, 6), ival(r, 9));
	EXPECT(is_bytes(r, 8), "%s: no destination hash", what);
	SAME("reference destination hash", r->item[8].p, r->item[8].len, want->dest_hash, 16);
	if (want->header_type == RNSC_HEADER_2) {
		EXPECT(is_bytes(r, 7), "%s: no transport id", what);
		SAME("reference transport id", r->item[7].p, r->item[7].len, want->transport_id,
		     16);
	} else {
		EXPECT(is_none(r, 7), "%s: reference found a transport id in HEADER_1", what);
	}
	uint8_t h[32];
	int rc = rnsc_packet_hash(x->ctx, h, raw, len);
	EXPECT(rc == 0 && is_bytes(r, 11) && is_bytes(r, 12), "%s: packet hash %s", what, en(rc));
	SAME("packet hash", h, 32, r->item[11].p, r->item[11].len);
	SAME("truncated packet hash", h, 16, r->item[12].p, r->item[12].len);
	return 0;
}

/* ---- packets ------------------------------------------------------------------------------- */

enum { ENC_NONE = 0, ENC_IDENTITY = 1, ENC_GROUP = 2, ENC_LINK = 3 };

typedef struct pk_in {
	rnsc_packet p; /* wanted fields (data set when built) */
	size_t pt_len;
	int enc;
	uint8_t key[64]; /* GROUP / link key, or the recipient's private key */
	uint8_t pub[64]; /* the recipient's public key (ENC_IDENTITY) */
	int ratchet;
	uint8_t ratchet_prv[32], ratchet_pub[32];
	uint8_t eph[32], iv[16];
	size_t mtu;
	int ref_tt; /* the transport type handed to the reference (RELAY/TUNNEL spill) */
} pk_in;

static size_t max_plain(int enc, size_t room)
{
	switch (enc) {
	case ENC_IDENTITY:
		return room < 96 ? 0 : (room - 80) / 16 * 16 - 1;
	case ENC_GROUP:
	case ENC_LINK:
		return room < 64 ? 0 : (room - 48) / 16 * 16 - 1;
	default:
		return room;
	}
}

/* Draws one packet of the given shape. flag < 0 and tt < 0 mean "at random". */
static int gen_packet(mx *x, pk_in *in, int pt, int context, int dt, int ht, int flag, int tt)
{
	memset(in, 0, sizeof(*in));
	rnsc_packet *p = &in->p;
	p->packet_type = (uint8_t)pt;
	p->context = (uint8_t)context;
	p->dest_type = (uint8_t)dt;
	p->header_type = (uint8_t)ht;
	p->hops = (uint8_t)(below(x, 4) ? below(x, 8) : below(x, RNSC_PATHFINDER_M));
	p->context_flag = (uint8_t)(flag >= 0 ? flag : (int)below(x, 2));
	/* Transport insertion (mangle_hops) sets the transport bit of every HEADER_2 packet. */
	in->ref_tt = tt >= 0 ? tt : ht == RNSC_HEADER_2 ? 1 : (int)below(x, 2);
	p->transport_type = (uint8_t)(in->ref_tt & 1);
	if (in->ref_tt > 1)
		p->context_flag = 1; /* the spilled bit */
	rnd(x, p->dest_hash, 16);
	if (ht == RNSC_HEADER_2)
		rnd(x, p->transport_id, 16);
	in->mtu = RNSC_MTU;
	if (dt == RNSC_DEST_LINK && below(x, 2)) {
		static const size_t link_mtus[] = {1064, 4096, 8192};
		in->mtu = link_mtus[below(x, 3)];
	}
	in->enc = ENC_NONE;
	if (rnsc_packet_encrypts(pt, context, dt)) {
		if (dt == RNSC_DEST_SINGLE)
			in->enc = ENC_IDENTITY;
		else if (dt == RNSC_DEST_GROUP)
			in->enc = ENC_GROUP;
		else if (dt == RNSC_DEST_LINK)
			in->enc = ENC_LINK;
	}
	if (in->enc == ENC_IDENTITY) {
		rnsc_identity id;
		if (gen_identity(x, &id, in->key))
			return -1;
		rnsc_identity_public_bytes(&id, in->pub);
		rnsc_identity_free(&id);
		in->ratchet = below(x, 3) == 0;
		if (in->ratchet) {
			rnd(x, in->ratchet_prv, 32);
			int rc = rnsc_ratchet_public(x->ctx, in->ratchet_pub, in->ratchet_prv);
			EXPECT(rc == 0, "ratchet public: %s", en(rc));
		}
	} else if (in->enc != ENC_NONE) {
		rnd(x, in->key, 64);
	}
	rnd(x, in->eph, 32);
	rnd(x, in->iv, 16);
	size_t room = in->mtu - rnsc_packet_header_len(ht);
	size_t max = max_plain(in->enc, room);
	switch (below(x, 4)) {
	case 0:
		in->pt_len = max;
		break;
	case 1:
		in->pt_len = 1 + below(x, max);
		break;
	default:
		in->pt_len = 1 + below(x, max < 64 ? max : 64);
		break;
	}
	rnd(x, x->pt, in->pt_len);
	return 0;
}

/* rnsc encrypts (when the shape calls for it) and packs into out. */
static int rnsc_build(mx *x, const pk_in *in, uint8_t *out, size_t cap)
{
	rnsc_packet p = in->p;
	uint8_t *ct = x->d;
	int n = (int)in->pt_len;
	if (in->enc == ENC_IDENTITY) {
		rnsc_identity to;
		int rc = rnsc_identity_from_public(x->ctx, &to, in->pub, 64);
		if (rc)
			return rc;
		script(x, in->eph, 32, in->iv, 16);
		n = rnsc_identity_encrypt(&to, ct, BUF, x->pt, in->pt_len,
					  in->ratchet ? in->ratchet_pub : NULL);
		if (n >= 0 && !script_used(x))
			return RNSC_ERR_STATE;
	} else if (in->enc != ENC_NONE) {
		rnsc_token t;
		int rc = rnsc_token_init(&t, x->ctx, in->key, 64);
		if (rc)
			return rc;
		n = rnsc_token_encrypt_iv(&t, ct, BUF, in->iv, x->pt, in->pt_len);
		rnsc_token_free(&t);
	} else {
		memcpy(ct, x->pt, in->pt_len);
	}
	if (n < 0)
		return n;
	p.data = ct;
	p.data_len = (size_t)n;
	return rnsc_packet_pack(out, cap, &p, in->mtu);
}

/* rnsc decrypts a packet's data into x->d (or copies it when it is not encrypted). */
static int rnsc_open(mx *x, const pk_in *in, const uint8_t *data, size_t len)
{
	if (in->enc == ENC_IDENTITY) {
		rnsc_identity me;
		int rc = rnsc_identity_from_private(x->ctx, &me, in->key, 64);
		if (rc)
			return rc;
		const uint8_t(*r)[32] = in->ratchet ? (const uint8_t(*)[32])in->ratchet_prv : NULL;
		rc = rnsc_identity_decrypt(&me, x->d, BUF, data, len, r, in->ratchet ? 1 : 0, 0,
					   NULL);
		rnsc_identity_free(&me);
		return rc;
	}
	if (in->enc != ENC_NONE) {
		rnsc_token t;
		int rc = rnsc_token_init(&t, x->ctx, in->key, 64);
		if (rc)
			return rc;
		rc = rnsc_token_decrypt(&t, x->d, BUF, data, len);
		rnsc_token_free(&t);
		return rc;
	}
	if (len > BUF)
		return RNSC_ERR_BUFSIZE;
	memcpy(x->d, data, len);
	return (int)len;
}

static int ref_build(mx *x, const pk_in *in, rnsc_refwire_res **r)
{
	const rnsc_packet *p = &in->p;
	int ident = in->enc == ENC_IDENTITY;
	return rw(x, r, "packet_pack", "iiiiiiibbbibbbbi", I(p->header_type), I(p->packet_type),
		  I(p->dest_type), I(p->context), I(in->ref_tt > 1 ? 0 : p->context_flag),
		  I(in->ref_tt), I(p->hops),
		  p->header_type == RNSC_HEADER_2 ? p->transport_id : NULL, (size_t)16,
		  B(p->dest_hash, 16), B(x->pt, in->pt_len), I(in->enc),
		  in->enc == ENC_NONE ? NULL
		  : ident             ? in->pub
				      : in->key,
		  (size_t)64, ident && in->ratchet ? in->ratchet_pub : NULL, (size_t)32,
		  in->enc == ENC_NONE ? NULL : in->eph, (size_t)32,
		  in->enc == ENC_NONE ? NULL : in->iv, (size_t)16, I(in->mtu));
}

static int ref_unpack(mx *x, const pk_in *in, rnsc_refwire_res **r, const uint8_t *raw, size_t len)
{
	int dec = in ? in->enc : ENC_NONE;
	return rw(x, r, "packet_unpack", "bibb", B(raw, len), I(dec),
		  dec == ENC_NONE ? NULL : in->key, (size_t)64,
		  dec == ENC_IDENTITY && in->ratchet ? in->ratchet_prv : NULL, (size_t)32);
}

/* Legs A-C for one packet input; on success x->a holds rnsc's bytes (length returned). */
static int packet_legs(mx *x, const pk_in *in, int corpus)
{
	rnsc_refwire_res *r;
	/* A: the reference builds, rnsc parses (and opens the payload) */
	int rc = ref_build(x, in, &r);
	REF_BYTES(rc, r, "reference pack");
	const uint8_t *raw_ref = r->item[0].p;
	size_t ref_len = r->item[0].len;
	rnsc_packet got;
	rc = rnsc_packet_unpack(&got, raw_ref, ref_len);
	EXPECT(rc == 0, "A: rnsc unpack of the reference's %s: %s", hx(raw_ref, ref_len), en(rc));
	if (check_fields(x, "A", &got, &in->p))
		return -1;
	rc = rnsc_open(x, in, got.data, got.data_len);
	EXPECT(rc >= 0, "A: rnsc could not open the reference's payload: %s", en(rc));
	SAME("A: payload", x->d, (size_t)rc, x->pt, in->pt_len);
	if (corpus)
		corpus_put(x, "fuzz_packet", raw_ref, ref_len);
	x->ways |= CONF_MATRIX_WAY_A;

	/* B: rnsc builds, the reference parses (and opens the payload) */
	int n = rnsc_build(x, in, x->a, BUF);
	EXPECT(n > 0, "B: rnsc build: %s", en(n));
	rnsc_refwire_res *u;
	rc = ref_unpack(x, in, &u, x->a, (size_t)n);
	REF_OK(rc, u, 14, "B: reference unpack");
	if (check_ref_fields(x, "B", u, &in->p, x->a, (size_t)n))
		return -1;
	if (in->enc == ENC_NONE) {
		EXPECT(is_bytes(u, 10), "B: no data");
		SAME("B: reference data", u->item[10].p, u->item[10].len, x->pt, in->pt_len);
	} else {
		EXPECT(is_bytes(u, 13), "B: the reference did not open the payload");
		SAME("B: reference plaintext", u->item[13].p, u->item[13].len, x->pt, in->pt_len);
	}
	x->ways |= CONF_MATRIX_WAY_B;

	/* C: the same inputs give the same bytes */
	SAME("C: bytes (rnsc vs reference)", x->a, (size_t)n, raw_ref, ref_len);
	x->ways |= CONF_MATRIX_WAY_C;
	return n;
}

/* Leg D on a packet rnsc built (x->a, n bytes). */
static int packet_mutations(mx *x, const pk_in *in, size_t n)
{
	rnsc_refwire_res *r;
	rnsc_packet got;
	size_t hdr = rnsc_packet_header_len(in->p.header_type);
	uint8_t *m = x->b;

	/* header only: no data byte */
	memcpy(m, x->a, hdr);
	VERDICT("D header only", rnsc_packet_unpack(&got, m, hdr), RNSC_ERR_TRUNCATED,
		ref_unpack(x, NULL, &r, m, hdr), RNSC_ERR_TRUNCATED);
	/* cut inside the header */
	size_t cut = below(x, hdr);
	VERDICT("D cut header", rnsc_packet_unpack(&got, m, cut), RNSC_ERR_TRUNCATED,
		ref_unpack(x, NULL, &r, m, cut), RNSC_ERR_TRUNCATED);
	/* hop count at the path limit or beyond */
	memcpy(m, x->a, n);
	m[1] = (uint8_t)(RNSC_PATHFINDER_M + below(x, 128));
	VERDICT("D hops", rnsc_packet_unpack(&got, m, n), RNSC_ERR_HOPS,
		ref_unpack(x, NULL, &r, m, n), RNSC_ERR_HOPS);
	/* STRICTER: the IFAC bit reaching the packet parser. rnsc refuses; Packet.unpack ignores
	 * the bit (the reference's interface layer drops such frames before, see the IFAC rows). */
	memcpy(m, x->a, n);
	m[0] |= RNSC_PACKET_IFAC_FLAG;
	VERDICT("D IFAC bit", rnsc_packet_unpack(&got, m, n), RNSC_ERR_IFAC_UNEXPECTED,
		ref_unpack(x, NULL, &r, m, n), 0);
	/* a flipped payload byte: an encrypted payload no longer opens (same verdict on both
	 * sides); a plain one parses on both sides to the same new packet hash */
	memcpy(m, x->a, n);
	size_t at = hdr + below(x, n - hdr);
	uint8_t bit = (uint8_t)(1u << below(x, 8));
	/* X25519 ignores the top bit of a public key: flipping it in the ephemeral key leaves
	 * a token that still opens (on both sides), so flip another bit there. */
	if (in->enc == ENC_IDENTITY && at == hdr + 31 && bit == 0x80)
		bit = 0x01;
	m[at] ^= bit;
	int rc = rnsc_packet_unpack(&got, m, n);
	EXPECT(rc == 0, "D payload: rnsc unpack %s", en(rc));
	int rr = rnsc_open(x, in, got.data, got.data_len);
	int fr = ref_unpack(x, in, &r, m, n);
	if (in->enc == ENC_NONE) {
		EXPECT(rr >= 0 && fr == 0, "D payload: rnsc %s, reference %s", en(rr), en(fr));
		if (check_ref_fields(x, "D payload", r, &in->p, m, n))
			return -1;
		x->row->mutations++;
	} else {
		SAME_VERDICT("D payload (encrypted)", rr, fr);
		EXPECT(rr < 0, "D payload: a flipped ciphertext opened");
	}
	x->ways |= CONF_MATRIX_WAY_D;
	return 0;
}

static int c_packet(mx *x)
{
	const long long *q = x->row->param;
	pk_in in;
	if (gen_packet(x, &in, (int)q[0], (int)q[1], (int)q[2], (int)q[3], -1, -1))
		return -1;
	/* whether the payload is encrypted: Packet.pack decides on the reference side */
	rnsc_refwire_res *e;
	int rc = rw(x, &e, "packet_encrypts", "iii", I(q[0]), I(q[1]), I(q[2]));
	REF_OK(rc, e, 1, "packet_encrypts");
	EXPECT(ival(e, 0) == rnsc_packet_encrypts((int)q[0], (int)q[1], (int)q[2]),
	       "encryption rule: reference %lld, rnsc %d", ival(e, 0),
	       rnsc_packet_encrypts((int)q[0], (int)q[1], (int)q[2]));
	/* about one packet row in eight seeds the packet fuzzer */
	int n = packet_legs(x, &in, name_seed(x->row->name) % 8 == 0);
	if (n < 0)
		return -1;
	return packet_mutations(x, &in, (size_t)n);
}

/* A packet of a random (known) shape for the propagation and flag rows. */
static int gen_any(mx *x, pk_in *in, int ht, int flag, int tt)
{
	static const int ctxs[] = {RNSC_CTX_NONE,          RNSC_CTX_RESOURCE,     RNSC_CTX_REQUEST,
				   RNSC_CTX_CHANNEL,       RNSC_CTX_KEEPALIVE,    RNSC_CTX_LRPROOF,
				   RNSC_CTX_PATH_RESPONSE, RNSC_CTX_CACHE_REQUEST};
	return gen_packet(x, in, (int)below(x, 4), ctxs[below(x, 8)], (int)below(x, 4), ht, flag,
			  tt);
}

static int c_propagation(mx *x)
{
	int tt = (int)x->row->param[0];
	pk_in in;
	if (gen_any(x, &in, RNSC_HEADER_1, -1, tt))
		return -1;
	if (tt > 1) {
		/* STRICTER: the one-bit field cannot hold RELAY/TUNNEL; rnsc refuses to pack it,
		 * the reference's pack spills the high bit into the context flag. Legs A-C then
		 * show the reference's bytes are exactly BROADCAST/TRANSPORT with the flag set. */
		rnsc_packet p = in.p;
		p.transport_type = (uint8_t)tt;
		p.data = x->pt;
		p.data_len = in.pt_len;
		int rc = rnsc_packet_pack(x->c, BUF, &p, in.mtu);
		EXPECT(rc == RNSC_ERR_INVAL, "rnsc packed propagation type %d: %s", tt, en(rc));
	}
	int n = packet_legs(x, &in, 0);
	if (n < 0)
		return -1;
	return packet_mutations(x, &in, (size_t)n);
}

static int c_flag(mx *x)
{
	pk_in in;
	if (gen_any(x, &in, (int)below(x, 2), (int)x->row->param[0], -1))
		return -1;
	int n = packet_legs(x, &in, 0);
	if (n < 0)
		return -1;
	return packet_mutations(x, &in, (size_t)n);
}

/* ---- announces ----------------------------------------------------------------------------- */

typedef struct an_in {
	uint8_t prv[64], pub[64], id_hash[16];
	char aspect[16];
	int ratchet, app, pr, ht;
	uint8_t ratchet_prv[32], ratchet_pub[32];
	uint8_t app_data[128];
	size_t app_len;
	uint8_t rand16[16];
	uint64_t now;
	uint8_t tid[16];
	uint8_t hops;
	uint8_t name_hash[10], dest[16];
} an_in;

static int rnsc_announce_packet(mx *x, const an_in *in, const uint8_t *dest, uint8_t *out,
				size_t cap)
{
	rnsc_identity id;
	int rc = rnsc_identity_from_private(x->ctx, &id, in->prv, 64);
	if (rc)
		return rc;
	uint8_t rh[RNSC_ANNOUNCE_RANDOM_LEN];
	script(x, in->rand16, 16, NULL, 0);
	rc = rnsc_announce_random_hash(x->ctx, rh, in->now);
	if (rc == 0 && !script_used(x))
		rc = RNSC_ERR_STATE;
	int n = rc ? rc
		   : rnsc_announce_build(x->d, BUF, &id, dest, in->name_hash, rh,
					 in->ratchet ? in->ratchet_pub : NULL,
					 in->app ? in->app_data : NULL, in->app_len);
	rnsc_identity_free(&id);
	if (n < 0)
		return n;
	rnsc_packet p = {0};
	p.header_type = (uint8_t)in->ht;
	p.transport_type =
		in->ht == RNSC_HEADER_2 ? RNSC_TRANSPORT_TRANSPORT : RNSC_TRANSPORT_BROADCAST;
	p.packet_type = RNSC_PKT_ANNOUNCE;
	p.dest_type = RNSC_DEST_SINGLE;
	p.context = in->pr ? RNSC_CTX_PATH_RESPONSE : RNSC_CTX_NONE;
	p.context_flag = (uint8_t)in->ratchet;
	p.hops = in->hops;
	memcpy(p.dest_hash, dest, 16);
	memcpy(p.transport_id, in->tid, 16);
	p.data = x->d;
	p.data_len = (size_t)n;
	return rnsc_packet_pack(out, cap, &p, RNSC_MTU);
}

/* rnsc's verdict on raw as an announce: unpack, then validate. */
static int rnsc_announce_verdict(mx *x, const uint8_t *raw, size_t len, rnsc_announce *a)
{
	rnsc_packet p;
	int rc = rnsc_packet_unpack(&p, raw, len);
	if (rc)
		return rc;
	rnsc_announce tmp;
	return rnsc_announce_validate(x->ctx, &p, a ? a : &tmp, NULL);
}

static int c_announce(mx *x)
{
	const long long *q = x->row->param;
	an_in in;
	memset(&in, 0, sizeof(in));
	in.ratchet = (int)q[0];
	in.app = (int)q[1];
	in.pr = (int)q[2];
	in.ht = (int)q[3];
	rnsc_identity id;
	if (gen_identity(x, &id, in.prv))
		return -1;
	rnsc_identity_public_bytes(&id, in.pub);
	memcpy(in.id_hash, id.hash, 16);
	rnsc_identity_free(&id);
	uint8_t asp[4];
	rnd(x, asp, 4);
	snprintf(in.aspect, sizeof(in.aspect), "a%02x%02x%02x%02x", asp[0], asp[1], asp[2], asp[3]);
	const char *aspects[] = {in.aspect};
	int rc = rnsc_name_hash(x->ctx, in.name_hash, "rnsc", aspects, 1);
	if (rc == 0)
		rc = rnsc_destination_hash(x->ctx, in.dest, in.id_hash, "rnsc", aspects, 1);
	EXPECT(rc == 0, "destination: %s", en(rc));
	if (in.ratchet) {
		rnd(x, in.ratchet_prv, 32);
		rc = rnsc_ratchet_public(x->ctx, in.ratchet_pub, in.ratchet_prv);
		EXPECT(rc == 0, "ratchet: %s", en(rc));
	}
	if (in.app) {
		in.app_len = 1 + below(x, 100);
		rnd(x, in.app_data, in.app_len);
	}
	rnd(x, in.rand16, 16);
	in.now = 1600000000u + below(x, 400000000u);
	if (in.ht == RNSC_HEADER_2) {
		rnd(x, in.tid, 16);
		in.hops = (uint8_t)below(x, RNSC_PATHFINDER_M);
	}

	/* A: Destination.announce builds, rnsc validates and reads every field */
	rnsc_refwire_res *r;
	rc = rw(x, &r, "announce_build", "bssbbibiibi", B(in.prv, 64), "rnsc", in.aspect,
		in.ratchet ? in.ratchet_prv : NULL, (size_t)32, in.app ? in.app_data : NULL,
		in.app_len, I(in.pr), B(in.rand16, 16), I(in.now), I(in.ht),
		in.ht == RNSC_HEADER_2 ? in.tid : NULL, (size_t)16, I(in.hops));
	REF_BYTES(rc, r, "A: announce_build");
	const uint8_t *raw_ref = r->item[0].p;
	size_t ref_len = r->item[0].len;
	rnsc_announce a;
	rnsc_packet p;
	rc = rnsc_packet_unpack(&p, raw_ref, ref_len);
	EXPECT(rc == 0, "A: unpack: %s", en(rc));
	rnsc_packet want = {0};
	want.header_type = (uint8_t)in.ht;
	want.transport_type = in.ht == RNSC_HEADER_2;
	want.packet_type = RNSC_PKT_ANNOUNCE;
	want.context = in.pr ? RNSC_CTX_PATH_RESPONSE : RNSC_CTX_NONE;
	want.context_flag = (uint8_t)in.ratchet;
	want.hops = in.hops;
	memcpy(want.dest_hash, in.dest, 16);
	memcpy(want.transport_id, in.tid, 16);
	if (check_fields(x, "A", &p, &want))
		return -1;
	rc = rnsc_announce_validate(x->ctx, &p, &a, NULL);
	EXPECT(rc == 0, "A: rnsc rejects the reference's announce: %s", en(rc));
	SAME("A: public key", a.public_key, 64, in.pub, 64);
	SAME("A: name hash", a.name_hash, 10, in.name_hash, 10);
	uint8_t th[16];
	rc = rnsc_truncated_hash(x->ctx, th, in.rand16, 16);
	EXPECT(rc == 0, "hash");
	SAME("A: random part", a.random_hash, 5, th, 5);
	EXPECT(rnsc_announce_timestamp(a.random_hash) == in.now, "A: timestamp %llu, want %llu",
	       (unsigned long long)rnsc_announce_timestamp(a.random_hash),
	       (unsigned long long)in.now);
	if (in.ratchet)
		SAME("A: ratchet", a.ratchet, a.ratchet ? 32 : 0, in.ratchet_pub, 32);
	else
		EXPECT(a.ratchet == NULL, "A: a ratchet appeared");
	SAME("A: app data", a.app_data ? a.app_data : (const uint8_t *)"", a.app_data_len,
	     in.app_data, in.app_len);
	corpus_put(x, "fuzz_announce", raw_ref, ref_len);
	x->ways |= CONF_MATRIX_WAY_A;

	/* B: rnsc builds, Identity.validate_announce accepts and remembers the same */
	int n = rnsc_announce_packet(x, &in, in.dest, x->a, BUF);
	EXPECT(n > 0, "B: rnsc build: %s", en(n));
	rnsc_refwire_res *v;
	rc = rw(x, &v, "announce_validate", "b", B(x->a, n));
	REF_OK(rc, v, 8, "B: validate_announce");
	EXPECT(is_bytes(v, 0) && is_bytes(v, 1) && is_bytes(v, 2) && is_bytes(v, 3) &&
		       is_bytes(v, 4) && is_bytes(v, 6),
	       "B: reference returned the wrong kinds");
	SAME("B: public key", v->item[0].p, v->item[0].len, in.pub, 64);
	SAME("B: name hash", v->item[1].p, v->item[1].len, in.name_hash, 10);
	rnsc_announce mine;
	rc = rnsc_announce_verdict(x, x->a, (size_t)n, &mine);
	EXPECT(rc == 0, "B: rnsc rejects its own announce: %s", en(rc));
	SAME("B: random hash", v->item[2].p, v->item[2].len, mine.random_hash, 10);
	SAME("B: ratchet", v->item[3].p, v->item[3].len, in.ratchet_pub, in.ratchet ? 32u : 0u);
	SAME("B: signature", v->item[4].p, v->item[4].len, mine.signature, 64);
	/* The reference remembers None for "no app data" only without a ratchet: its test
	 * ignores the ratchet's 32 bytes, so a ratchet announce without app data gives b"". */
	if (in.app || in.ratchet) {
		EXPECT(is_bytes(v, 5), "B: reference remembered no app data");
		SAME("B: app data", v->item[5].p, v->item[5].len, in.app_data, in.app_len);
	} else {
		EXPECT(is_none(v, 5), "B: reference remembered app data");
	}
	SAME("B: identity hash", v->item[6].p, v->item[6].len, in.id_hash, 16);
	if (in.ratchet) {
		EXPECT(is_bytes(v, 7), "B: reference did not remember the ratchet");
		SAME("B: remembered ratchet", v->item[7].p, v->item[7].len, in.ratchet_pub, 32);
	} else {
		EXPECT(is_none(v, 7), "B: reference remembered a ratchet");
	}
	x->ways |= CONF_MATRIX_WAY_B;

	/* C */
	SAME("C: announce bytes", x->a, (size_t)n, raw_ref, ref_len);
	x->ways |= CONF_MATRIX_WAY_C;

	/* D */
	size_t hdr = rnsc_packet_header_len(in.ht);
	size_t sig_at = hdr + 64 + 10 + 10 + (in.ratchet ? 32 : 0);
	uint8_t *m = x->b;
#define ANN_VERDICT(what, len, want)                                                               \
	VERDICT(what, rnsc_announce_verdict(x, m, (len), NULL), (want),                            \
		rw(x, &r, "announce_validate", "b", B(m, (len))), (want))
	memcpy(m, x->a, (size_t)n);
	m[sig_at + below(x, 64)] ^= (uint8_t)(1u << below(x, 8));
	ANN_VERDICT("D signature byte", (size_t)n, RNSC_ERR_SIGNATURE);
	memcpy(m, x->a, (size_t)n);
	m[hdr + 64 + 10 + below(x, 10)] ^= 0x01;
	ANN_VERDICT("D random hash byte", (size_t)n, RNSC_ERR_SIGNATURE);
	memcpy(m, x->a, (size_t)n);
	m[hdr - 17 + below(x, 16)] ^= 0x80; /* the destination hash is signed too */
	ANN_VERDICT("D destination byte", (size_t)n, RNSC_ERR_SIGNATURE);
	memcpy(m, x->a, (size_t)n);
	ANN_VERDICT("D truncated", sig_at + 63, RNSC_ERR_TRUNCATED);
	memcpy(m, x->a, (size_t)n);
	m[0] = (uint8_t)(m[0] & ~3u); /* now a DATA packet */
	ANN_VERDICT("D not an announce", (size_t)n, RNSC_ERR_MALFORMED);
	/* the context flag toggled: fields shift; both sides see the same failure */
	memcpy(m, x->a, (size_t)n);
	m[0] ^= 0x20;
	SAME_VERDICT("D context flag", rnsc_announce_verdict(x, m, (size_t)n, NULL),
		     rw(x, &r, "announce_validate", "b", B(m, n)));
	/* validly signed for a destination its name and identity do not hash to */
	uint8_t other[16];
	rnd(x, other, 16);
	int n2 = rnsc_announce_packet(x, &in, other, m, BUF);
	EXPECT(n2 > 0, "D: rnsc build: %s", en(n2));
	ANN_VERDICT("D destination mismatch", (size_t)n2, RNSC_ERR_DEST_MISMATCH);
#undef ANN_VERDICT
	x->ways |= CONF_MATRIX_WAY_D;
	return 0;
}

/* ---- proofs -------------------------------------------------------------------------------- */

static int c_proof(mx *x)
{
	long long kind = x->row->param[0]; /* 96 explicit, 64 implicit, 0 link */
	int link = kind == 0, implicit = kind == RNSC_PROOF_IMPLICIT_LEN;
	rnsc_identity id;
	uint8_t prv[64], pub[64];
	if (gen_identity(x, &id, prv))
		return -1;
	rnsc_identity_public_bytes(&id, pub);
	/* the proved packet: DATA to the destination (or over the link) */
	pk_in in;
	if (gen_packet(x, &in, RNSC_PKT_DATA, RNSC_CTX_NONE,
		       link ? RNSC_DEST_LINK : RNSC_DEST_SINGLE, RNSC_HEADER_1, 0, 0)) {
		rnsc_identity_free(&id);
		return -1;
	}
	int pn = rnsc_build(x, &in, x->c, BUF);
	uint8_t ph[32];
	int rc = pn > 0 ? rnsc_packet_hash(x->ctx, ph, x->c, (size_t)pn) : pn;
	if (rc) {
		rnsc_identity_free(&id);
		return fail(x, "proved packet: %s", en(rc));
	}
	rnsc_refwire_res *r;
	if (link)
		rc = rw(x, &r, "link_proof_build", "bbi", B(prv + 32, 32), B(x->c, pn), I(in.mtu));
	else
		rc = rw(x, &r, "proof_build", "bbi", B(prv, 64), B(x->c, pn), I(implicit));
	if (rc || !is_bytes(r, 0)) {
		rnsc_identity_free(&id);
		return fail(x, "A: reference proof: %s", en(rc));
	}
	/* A: the proof packet the reference sends, addressed and read by rnsc */
	rnsc_packet want = {0}, got;
	want.packet_type = RNSC_PKT_PROOF;
	want.dest_type = link ? RNSC_DEST_LINK : RNSC_DEST_SINGLE;
	if (link)
		memcpy(want.dest_hash, in.p.dest_hash, 16); /* the link id */
	else
		rnsc_proof_destination(want.dest_hash, ph);
	const uint8_t *raw_ref = r->item[0].p;
	size_t ref_len = r->item[0].len;
	rc = rnsc_packet_unpack(&got, raw_ref, ref_len);
	if (rc || check_fields(x, "A", &got, &want)) {
		rnsc_identity_free(&id);
		return rc ? fail(x, "A: unpack %s", en(rc)) : -1;
	}
	EXPECT(got.data_len == (link ? 96u : (size_t)kind), "A: proof of %zu bytes", got.data_len);
	rc = link ? rnsc_proof_validate_link(x->ctx, pub + 32, ph, got.data, got.data_len)
		  : rnsc_proof_validate(&id, ph, got.data, got.data_len);
	EXPECT(rc == 0, "A: rnsc rejects the reference's proof: %s", en(rc));
	/* corpus: hash || signer public key || proof packet */
	memcpy(x->d, ph, 32);
	memcpy(x->d + 32, pub, 64);
	memcpy(x->d + 96, raw_ref, ref_len);
	corpus_put(x, "fuzz_proof", x->d, 96 + ref_len);
	x->ways |= CONF_MATRIX_WAY_A;

	/* B: rnsc builds the proof packet, the reference's receipt validates it */
	uint8_t proof[96];
	int plen =
		link ? rnsc_proof_build_link(x->ctx, proof, sizeof(proof), prv + 32, pub + 32, ph)
		     : rnsc_proof_build(proof, sizeof(proof), &id, ph, implicit);
	rnsc_identity_free(&id);
	EXPECT(plen > 0, "B: rnsc proof: %s", en(plen));
	rnsc_packet pp;
	rnsc_proof_packet(&pp, ph, proof, (size_t)plen);
	if (link) {
		pp.dest_type = RNSC_DEST_LINK;
		memcpy(pp.dest_hash, in.p.dest_hash, 16);
	}
	int n = rnsc_packet_pack(x->a, BUF, &pp, in.mtu);
	EXPECT(n > 0, "B: pack: %s", en(n));
	rnsc_refwire_res *u, *v;
	rc = ref_unpack(x, NULL, &u, x->a, (size_t)n);
	REF_OK(rc, u, 14, "B: reference unpack");
	if (check_ref_fields(x, "B", u, &want, x->a, (size_t)n))
		return -1;
#define REF_PROOF(p_, n_)                                                                          \
	(link ? rw(x, &v, "link_proof_validate", "bbb", B(pub + 32, 32), B(ph, 32), B(p_, n_))     \
	      : rw(x, &v, "proof_validate", "bbb", B(pub, 64), B(ph, 32), B(p_, n_)))
	rc = REF_PROOF(proof, plen);
	EXPECT(rc == 0, "B: the reference's receipt rejects rnsc's proof: %s", en(rc));
	x->ways |= CONF_MATRIX_WAY_B;

	/* C */
	SAME("C: proof packet", x->a, (size_t)n, raw_ref, ref_len);
	x->ways |= CONF_MATRIX_WAY_C;

	/* D */
	uint8_t m[100];
	rnsc_identity who;
	rc = rnsc_identity_from_public(x->ctx, &who, pub, 64);
	EXPECT(rc == 0, "identity");
#define RNSC_PROOF(p_, n_)                                                                         \
	(link ? rnsc_proof_validate_link(x->ctx, pub + 32, ph, p_, n_)                             \
	      : rnsc_proof_validate(&who, ph, p_, n_))
	size_t sig_at = implicit ? 0 : 32;
	memcpy(m, proof, (size_t)plen);
	m[sig_at + below(x, 64)] ^= (uint8_t)(1u << below(x, 8));
	VERDICT("D signature byte", RNSC_PROOF(m, (size_t)plen), RNSC_ERR_SIGNATURE,
		REF_PROOF(m, plen), RNSC_ERR_SIGNATURE);
	VERDICT("D one byte short", RNSC_PROOF(proof, (size_t)plen - 1), RNSC_ERR_MALFORMED,
		REF_PROOF(proof, plen - 1), RNSC_ERR_MALFORMED);
	if (!implicit) {
		memcpy(m, proof, (size_t)plen);
		m[below(x, 32)] ^= 0x40;
		VERDICT("D hash byte", RNSC_PROOF(m, (size_t)plen), RNSC_ERR_PROOF_HASH,
			REF_PROOF(m, plen), RNSC_ERR_PROOF_HASH);
	}
	memcpy(m, proof, (size_t)plen);
	m[plen] = 0;
	if (link) {
		/* STRICTER: a link proof with trailing bytes; the reference reads 96 of them */
		VERDICT("D one byte long", RNSC_PROOF(m, (size_t)plen + 1), RNSC_ERR_MALFORMED,
			REF_PROOF(m, plen + 1), 0);
	} else {
		VERDICT("D one byte long", RNSC_PROOF(m, (size_t)plen + 1), RNSC_ERR_MALFORMED,
			REF_PROOF(m, plen + 1), RNSC_ERR_MALFORMED);
	}
#undef RNSC_PROOF
#undef REF_PROOF
	x->ways |= CONF_MATRIX_WAY_D;
	return 0;
}

/* ---- path requests ------------------------------------------------------------------------- */

static int c_pathreq(mx *x)
{
	int transport = (int)x->row->param[0];
	uint8_t dest[16], tid[16], tag[16], prdest[16];
	rnd(x, dest, 16);
	rnd(x, tid, 16);
	rnd(x, tag, 16);
	size_t tag_len = below(x, 3) ? 16 : 1 + below(x, 16);
	int rc = rnsc_pathreq_destination(x->ctx, prdest);
	EXPECT(rc == 0, "path request destination: %s", en(rc));
	rnsc_packet want = {0};
	want.packet_type = RNSC_PKT_DATA;
	want.dest_type = RNSC_DEST_PLAIN;
	memcpy(want.dest_hash, prdest, 16);

	/* A: Transport.request_path sends, rnsc parses */
	rnsc_refwire_res *r;
	rc = rw(x, &r, "pathreq_build", "bbb", B(dest, 16), B(tag, tag_len), transport ? tid : NULL,
		(size_t)16);
	REF_BYTES(rc, r, "A: request_path");
	rnsc_packet got;
	rc = rnsc_packet_unpack(&got, r->item[0].p, r->item[0].len);
	EXPECT(rc == 0, "A: unpack %s", en(rc));
	if (check_fields(x, "A", &got, &want))
		return -1;
	rnsc_pathreq pr;
	rc = rnsc_pathreq_parse(&pr, got.data, got.data_len);
	EXPECT(rc == 0, "A: rnsc parse: %s", en(rc));
	SAME("A: destination", pr.dest_hash, 16, dest, 16);
	EXPECT(pr.has_transport_id == transport, "A: transport id presence");
	if (transport)
		SAME("A: transport id", pr.transport_id, 16, tid, 16);
	SAME("A: tag", pr.tag, pr.tag_len, tag, tag_len);
	corpus_put(x, "fuzz_packet", r->item[0].p, r->item[0].len);
	x->ways |= CONF_MATRIX_WAY_A;

	/* B: rnsc builds, path_request_handler reads the same */
	int dn = rnsc_pathreq_build(x->d, BUF, dest, transport ? tid : NULL, tag, tag_len);
	EXPECT(dn > 0, "B: build %s", en(dn));
	rnsc_packet p = want;
	p.data = x->d;
	p.data_len = (size_t)dn;
	int n = rnsc_packet_pack(x->a, BUF, &p, RNSC_MTU);
	EXPECT(n > 0, "B: pack %s", en(n));
	rnsc_refwire_res *u;
	rc = ref_unpack(x, NULL, &u, x->a, (size_t)n);
	REF_OK(rc, u, 14, "B: unpack");
	if (check_ref_fields(x, "B", u, &want, x->a, (size_t)n))
		return -1;
	rc = rw(x, &u, "pathreq_parse", "b", B(x->d, dn));
	REF_OK(rc, u, 3, "B: path_request_handler");
	EXPECT(is_bytes(u, 0) && is_bytes(u, 2), "B: kinds");
	SAME("B: destination", u->item[0].p, u->item[0].len, dest, 16);
	if (transport) {
		EXPECT(is_bytes(u, 1), "B: no transport id");
		SAME("B: transport id", u->item[1].p, u->item[1].len, tid, 16);
	} else {
		EXPECT(is_none(u, 1), "B: a transport id appeared");
	}
	SAME("B: tag", u->item[2].p, u->item[2].len, tag, tag_len);
	x->ways |= CONF_MATRIX_WAY_B;

	SAME("C: request bytes", x->a, (size_t)n, r->item[0].p, r->item[0].len);
	x->ways |= CONF_MATRIX_WAY_C;

	/* D: tagless, shorter than a hash, and an over-long tag (cut to 16 on both sides) */
	VERDICT("D tagless", rnsc_pathreq_parse(&pr, x->d, 16), RNSC_ERR_NOTAG,
		rw(x, &u, "pathreq_parse", "b", B(x->d, 16)), RNSC_ERR_NOTAG);
	size_t cut = below(x, 16);
	VERDICT("D short", rnsc_pathreq_parse(&pr, x->d, cut), RNSC_ERR_TRUNCATED,
		rw(x, &u, "pathreq_parse", "b", B(x->d, cut)), RNSC_ERR_TRUNCATED);
	memcpy(x->b, dest, 16);
	memcpy(x->b + 16, tid, 16);
	rnd(x, x->b + 32, 24);
	rc = rnsc_pathreq_parse(&pr, x->b, 56);
	EXPECT(rc == 0 && pr.tag_truncated && pr.tag_len == 16, "D long tag: rnsc %s", en(rc));
	rc = rw(x, &u, "pathreq_parse", "b", B(x->b, 56));
	REF_OK(rc, u, 3, "D long tag");
	SAME("D long tag", u->item[2].p, u->item[2].len, pr.tag, pr.tag_len);
	x->row->mutations++;
	x->ways |= CONF_MATRIX_WAY_D;
	return 0;
}

/* ---- links --------------------------------------------------------------------------------- */

static const uint32_t link_mtus[] = {500, 1064, 8192, 16384, 262144, 0x1FFFFF, 0};

typedef struct lk {
	uint8_t dest_prv[64], dest_pub[64], dest[16];
	uint8_t ix[32], ixp[32], ie[32], iep[32]; /* initiator's link keys */
	uint8_t eph[32], ephp[32];                /* responder's link key */
	uint32_t mtu;
	int signal;
	uint8_t lr[600];
	size_t lr_len;
	uint8_t link_id[16];
} lk;

static int gen_link(mx *x, lk *k)
{
	rnsc_identity id;
	if (gen_identity(x, &id, k->dest_prv))
		return -1;
	rnsc_identity_public_bytes(&id, k->dest_pub);
	rnsc_identity_free(&id);
	rnd(x, k->dest, 16);
	rnd(x, k->ix, 32);
	rnd(x, k->ie, 32);
	rnd(x, k->eph, 32);
	int rc = rnsc_x25519_public(x->ctx, k->ixp, k->ix);
	if (rc == 0)
		rc = rnsc_ed25519_public(x->ctx, k->iep, k->ie);
	if (rc == 0)
		rc = rnsc_x25519_public(x->ctx, k->ephp, k->eph);
	EXPECT(rc == 0, "link keys: %s", en(rc));
	k->mtu = link_mtus[below(x, 7)];
	k->signal = below(x, 5) != 0;
	return 0;
}

/* rnsc's link request packet for k (into k->lr) and its link id. */
static int rnsc_lr(mx *x, lk *k, int mode)
{
	uint8_t data[80];
	int dn = rnsc_link_request_build(data, sizeof(data), k->ixp, k->iep, k->signal, k->mtu,
					 mode);
	if (dn < 0)
		return dn;
	rnsc_packet p = {0};
	p.packet_type = RNSC_PKT_LINKREQUEST;
	p.dest_type = RNSC_DEST_SINGLE;
	memcpy(p.dest_hash, k->dest, 16);
	p.data = data;
	p.data_len = (size_t)dn;
	int n = rnsc_packet_pack(k->lr, sizeof(k->lr), &p, RNSC_MTU);
	if (n < 0)
		return n;
	k->lr_len = (size_t)n;
	return rnsc_link_id_from_request(x->ctx, k->link_id, k->lr, k->lr_len);
}

/* The link's derived key as both ends compute it: HKDF(64, ECDH, salt = link id). */
static int link_key(mx *x, const lk *k, uint8_t out[64])
{
	uint8_t shared[32];
	int rc = rnsc_x25519(x->ctx, shared, k->ix, k->ephp);
	if (rc == 0)
		rc = rnsc_hkdf_sha256(x->ctx, out, 64, shared, 32, k->link_id, 16, NULL, 0);
	return rc;
}

static int rnsc_lr_verdict(const uint8_t *raw, size_t len)
{
	rnsc_packet p;
	rnsc_link_request lr;
	int rc = rnsc_packet_unpack(&p, raw, len);
	return rc ? rc : rnsc_link_request_parse(&lr, p.data, p.data_len);
}

static int c_link_request(mx *x)
{
	lk k;
	if (gen_link(x, &k))
		return -1;
	int rc = rnsc_lr(x, &k, RNSC_LINK_MODE_DEFAULT);
	EXPECT(rc == 0, "rnsc link request: %s", en(rc));
	/* A */
	rnsc_refwire_res *r;
	rc = rw(x, &r, "link_request_build", "bbbiii", B(k.dest, 16), B(k.ixp, 32), B(k.iep, 32),
		I(k.signal), I(k.mtu), I(RNSC_LINK_MODE_DEFAULT));
	REF_BYTES(rc, r, "A: link request");
	rnsc_packet got, want = {0};
	want.packet_type = RNSC_PKT_LINKREQUEST;
	memcpy(want.dest_hash, k.dest, 16);
	rc = rnsc_packet_unpack(&got, r->item[0].p, r->item[0].len);
	EXPECT(rc == 0, "A: unpack %s", en(rc));
	if (check_fields(x, "A", &got, &want))
		return -1;
	rnsc_link_request lr;
	rc = rnsc_link_request_parse(&lr, got.data, got.data_len);
	EXPECT(rc == 0, "A: rnsc parse %s", en(rc));
	SAME("A: x25519", lr.x25519_pub, 32, k.ixp, 32);
	SAME("A: ed25519", lr.ed25519_pub, 32, k.iep, 32);
	uint32_t want_mtu = k.signal && k.mtu ? k.mtu : RNSC_MTU;
	EXPECT(lr.has_signalling == k.signal && lr.mtu == want_mtu &&
		       lr.mode == RNSC_LINK_MODE_DEFAULT,
	       "A: signalling %d mtu %u mode %d", lr.has_signalling, lr.mtu, lr.mode);
	corpus_put(x, "fuzz_packet", r->item[0].p, r->item[0].len);
	x->ways |= CONF_MATRIX_WAY_A;
	/* B: Link.validate_request at the reference's destination */
	rnsc_refwire_res *v;
	rc = rw(x, &v, "link_request_accept", "bbb", B(k.lr, k.lr_len), B(k.dest_prv, 64),
		B(k.eph, 32));
	REF_OK(rc, v, 5, "B: validate_request");
	EXPECT(is_bytes(v, 0) && is_bytes(v, 4), "B: kinds");
	SAME("B: link id", v->item[0].p, v->item[0].len, k.link_id, 16);
	EXPECT(ival(v, 1) == want_mtu && ival(v, 2) == RNSC_LINK_MODE_DEFAULT,
	       "B: reference link mtu %lld mode %lld, want %u", ival(v, 1), ival(v, 2), want_mtu);
	uint8_t dk[64];
	rc = link_key(x, &k, dk);
	EXPECT(rc == 0, "link key %s", en(rc));
	SAME("B: derived link key", v->item[4].p, v->item[4].len, dk, 64);
	x->ways |= CONF_MATRIX_WAY_B;
	SAME("C: link request", k.lr, k.lr_len, r->item[0].p, r->item[0].len);
	x->ways |= CONF_MATRIX_WAY_C;
	/* D */
	uint8_t *m = x->b;
	memcpy(m, k.lr, k.lr_len);
	VERDICT("D one byte short", rnsc_lr_verdict(m, k.lr_len - 1), RNSC_ERR_MALFORMED,
		rw(x, &v, "link_request_accept", "bbb", B(m, k.lr_len - 1), B(k.dest_prv, 64),
		   B(k.eph, 32)),
		RNSC_ERR_MALFORMED);
	if (k.signal) {
		int mode = below(x, 2) ? RNSC_LINK_MODE_AES128_CBC : 2 + (int)below(x, 6);
		m[k.lr_len - 3] = (uint8_t)((m[k.lr_len - 3] & 0x1f) | (mode << 5));
		VERDICT("D link mode", rnsc_lr_verdict(m, k.lr_len), RNSC_ERR_LINK_MODE,
			rw(x, &v, "link_request_accept", "bbb", B(m, k.lr_len), B(k.dest_prv, 64),
			   B(k.eph, 32)),
			RNSC_ERR_LINK_MODE);
	}
	x->ways |= CONF_MATRIX_WAY_D;
	return 0;
}

static int c_link_proof(mx *x)
{
	lk k;
	if (gen_link(x, &k))
		return -1;
	k.signal = 1; /* the reference always signals in its proof */
	int rc = rnsc_lr(x, &k, RNSC_LINK_MODE_DEFAULT);
	EXPECT(rc == 0, "rnsc link request: %s", en(rc));
	uint32_t mtu = k.mtu ? k.mtu : RNSC_MTU;
	/* A: the reference's destination answers the request with its LRPROOF */
	rnsc_refwire_res *r;
	rc = rw(x, &r, "link_request_accept", "bbb", B(k.lr, k.lr_len), B(k.dest_prv, 64),
		B(k.eph, 32));
	REF_OK(rc, r, 5, "A: validate_request");
	EXPECT(is_bytes(r, 3), "A: no proof");
	const uint8_t *raw_ref = r->item[3].p;
	size_t ref_len = r->item[3].len;
	rnsc_packet got, want = {0};
	want.packet_type = RNSC_PKT_PROOF;
	want.dest_type = RNSC_DEST_LINK;
	want.context = RNSC_CTX_LRPROOF;
	memcpy(want.dest_hash, k.link_id, 16);
	rc = rnsc_packet_unpack(&got, raw_ref, ref_len);
	EXPECT(rc == 0, "A: unpack %s", en(rc));
	if (check_fields(x, "A", &got, &want))
		return -1;
	rnsc_link_proof lp;
	rc = rnsc_link_proof_validate(x->ctx, &lp, got.data, got.data_len, k.link_id,
				      k.dest_pub + 32, RNSC_LINK_MODE_DEFAULT);
	EXPECT(rc == 0, "A: rnsc rejects the reference's link proof: %s", en(rc));
	SAME("A: responder key", lp.x25519_pub, 32, k.ephp, 32);
	EXPECT(lp.has_signalling && lp.mtu == mtu, "A: proof mtu %u want %u", lp.mtu, mtu);
	corpus_put(x, "fuzz_packet", raw_ref, ref_len);
	/* fuzz_proof reads: 32 bytes, the signer's public key, the packet */
	memset(x->d, 0, 32);
	memcpy(x->d + 32, k.dest_pub, 64);
	memcpy(x->d + 96, raw_ref, ref_len);
	corpus_put(x, "fuzz_proof", x->d, 96 + ref_len);
	x->ways |= CONF_MATRIX_WAY_A;
	/* B: rnsc proves, Link.validate_proof at the reference's initiator accepts */
	rnsc_identity dest;
	rc = rnsc_identity_from_private(x->ctx, &dest, k.dest_prv, 64);
	EXPECT(rc == 0, "identity");
	uint8_t data[100];
	int dn = rnsc_link_proof_build(data, sizeof(data), &dest, k.link_id, k.ephp, 1, mtu,
				       RNSC_LINK_MODE_DEFAULT);
	rnsc_identity_free(&dest);
	EXPECT(dn > 0, "B: rnsc link proof %s", en(dn));
	rnsc_packet p = want;
	p.data = data;
	p.data_len = (size_t)dn;
	int n = rnsc_packet_pack(x->a, BUF, &p, RNSC_MTU);
	EXPECT(n > 0, "B: pack %s", en(n));
	double now = (double)(1600000000u + below(x, 100000000u));
	double rtt = (double)(1 + below(x, 4000)) / 1024.0;
	uint8_t iv[16];
	rnd(x, iv, 16);
#define REF_ACCEPT(p_, n_)                                                                         \
	rw(x, &r, "link_proof_accept", "bbbbbiddb", B(p_, n_), B(k.link_id, 16),                   \
	   B(k.dest_pub, 64), B(k.ix, 32), B(k.ie, 32), I(RNSC_LINK_MODE_DEFAULT), now, rtt,       \
	   B(iv, 16))
	rc = REF_ACCEPT(x->a, n);
	REF_OK(rc, r, 3, "B: validate_proof");
	EXPECT(ival(r, 0) == mtu, "B: reference link mtu %lld want %u", ival(r, 0), mtu);
	uint8_t dk[64];
	rc = link_key(x, &k, dk);
	EXPECT(rc == 0 && is_bytes(r, 1), "link key");
	SAME("B: derived key", r->item[1].p, r->item[1].len, dk, 64);
	x->ways |= CONF_MATRIX_WAY_B;
	SAME("C: link proof", x->a, (size_t)n, raw_ref, ref_len);
	x->ways |= CONF_MATRIX_WAY_C;
	/* D */
	uint8_t *m = x->b;
#define RNSC_LP(p_, n_, mode_)                                                                     \
	rnsc_link_proof_validate(x->ctx, &lp, (p_) + 19, (n_)-19, k.link_id, k.dest_pub + 32, mode_)
	memcpy(m, x->a, (size_t)n);
	m[19 + below(x, 64)] ^= (uint8_t)(1u << below(x, 8));
	VERDICT("D signature byte", RNSC_LP(m, (size_t)n, 1), RNSC_ERR_SIGNATURE, REF_ACCEPT(m, n),
		RNSC_ERR_SIGNATURE);
	memcpy(m, x->a, (size_t)n);
	VERDICT("D signalling dropped", RNSC_LP(m, (size_t)n - 3, 1), RNSC_ERR_SIGNATURE,
		REF_ACCEPT(m, n - 3), RNSC_ERR_SIGNATURE);
	VERDICT("D cut to 97", RNSC_LP(m, (size_t)n - 2, 1), RNSC_ERR_MALFORMED,
		REF_ACCEPT(m, n - 2), RNSC_ERR_MALFORMED);
	m[n - 3] = (uint8_t)((m[n - 3] & 0x1f) | ((2 + below(x, 6)) << 5));
	VERDICT("D other mode", RNSC_LP(m, (size_t)n, 1), RNSC_ERR_LINK_MODE, REF_ACCEPT(m, n),
		RNSC_ERR_LINK_MODE);
#undef RNSC_LP
#undef REF_ACCEPT
	x->ways |= CONF_MATRIX_WAY_D;
	return 0;
}

/* A link packet of context ctx (DATA to the link id); encrypted unless KEEPALIVE. */
static int rnsc_link_packet(mx *x, int ctx, const uint8_t link_id[16], const uint8_t key[64],
			    const uint8_t iv[16], const uint8_t *pt, size_t len, uint8_t *out)
{
	rnsc_packet p = {0};
	p.packet_type = RNSC_PKT_DATA;
	p.dest_type = RNSC_DEST_LINK;
	p.context = (uint8_t)ctx;
	memcpy(p.dest_hash, link_id, 16);
	int n = (int)len;
	if (rnsc_packet_encrypts(RNSC_PKT_DATA, ctx, RNSC_DEST_LINK)) {
		rnsc_token t;
		int rc = rnsc_token_init(&t, x->ctx, key, 64);
		if (rc)
			return rc;
		n = rnsc_token_encrypt_iv(&t, x->d, BUF, iv, pt, len);
		rnsc_token_free(&t);
		if (n < 0)
			return n;
		p.data = x->d;
	} else {
		p.data = pt;
	}
	p.data_len = (size_t)n;
	return rnsc_packet_pack(out, BUF, &p, RNSC_MTU);
}

/* rnsc opens a link packet's payload into x->d. */
static int rnsc_link_open(mx *x, const uint8_t *raw, size_t len, const uint8_t key[64],
			  rnsc_packet *p)
{
	int rc = rnsc_packet_unpack(p, raw, len);
	if (rc)
		return rc;
	if (!rnsc_packet_encrypts(p->packet_type, p->context, p->dest_type)) {
		memcpy(x->d, p->data, p->data_len);
		return (int)p->data_len;
	}
	rnsc_token t;
	rc = rnsc_token_init(&t, x->ctx, key, 64);
	if (rc)
		return rc;
	rc = rnsc_token_decrypt(&t, x->d, BUF, p->data, p->data_len);
	rnsc_token_free(&t);
	return rc;
}

/* rnsc's verdict on an opened link payload (in x->d) of context ctx. */
static int payload_verdict(mx *x, int ctx, size_t len, const uint8_t lid[16])
{
	double t;
	switch (ctx) {
	case RNSC_CTX_LRRTT:
		return rnsc_link_rtt_decode(x->d, len, &t);
	case RNSC_CTX_LINKCLOSE:
		return rnsc_link_close_check(x->d, len, lid);
	default:
		return rnsc_link_identify_validate(x->ctx, NULL, x->d, len, lid);
	}
}

static int c_link_payload(mx *x)
{
	int ctx = (int)x->row->param[0];
	uint8_t lid[16], key[64], iv[16], prv[64];
	rnd(x, lid, 16);
	rnd(x, key, 64);
	rnd(x, iv, 16);
	rnsc_identity who;
	if (gen_identity(x, &who, prv))
		return -1;
	double now = (double)(1600000000u + below(x, 100000000u));
	double rtt = (double)(1 + below(x, 40000)) / 1024.0;
	int ka = below(x, 2) ? RNSC_LINK_KEEPALIVE_REQUEST : RNSC_LINK_KEEPALIVE_RESPONSE;
	/* rnsc's plaintext for the context */
	uint8_t pt[200];
	int plen;
	switch (ctx) {
	case RNSC_CTX_LRRTT:
		plen = rnsc_link_rtt_encode(pt, sizeof(pt), rtt);
		break;
	case RNSC_CTX_KEEPALIVE:
		pt[0] = (uint8_t)ka;
		plen = 1;
		break;
	case RNSC_CTX_LINKCLOSE:
		memcpy(pt, lid, 16);
		plen = 16;
		break;
	default:
		plen = rnsc_link_identify_build(pt, sizeof(pt), &who, lid);
		break;
	}
	rnsc_identity_free(&who);
	EXPECT(plen > 0, "rnsc payload %s", en(plen));
	/* A: the link object of the reference sends it */
	rnsc_refwire_res *r, *v;
	int rc =
		ctx == RNSC_CTX_KEEPALIVE
			? rw(x, &r, "link_packet_build", "ibbbid", I(ctx), B(lid, 16), B(key, 64),
			     B(iv, 16), I(ka), rtt)
			: rw(x, &r, "link_packet_build", "ibbbbd", I(ctx), B(lid, 16), B(key, 64),
			     B(iv, 16), ctx == RNSC_CTX_LINKIDENTIFY ? prv : NULL, (size_t)64, rtt);
	REF_BYTES(rc, r, "A: link packet");
	rnsc_packet got, want = {0};
	want.dest_type = RNSC_DEST_LINK;
	want.context = (uint8_t)ctx;
	memcpy(want.dest_hash, lid, 16);
	int on = rnsc_link_open(x, r->item[0].p, r->item[0].len, key, &got);
	EXPECT(on >= 0, "A: rnsc opens %s", en(on));
	if (check_fields(x, "A", &got, &want))
		return -1;
	switch (ctx) {
	case RNSC_CTX_LRRTT: {
		double got_rtt = 0;
		rc = rnsc_link_rtt_decode(x->d, (size_t)on, &got_rtt);
		EXPECT(rc == 0 && got_rtt == rtt, "A: rtt %s %.9f want %.9f", en(rc), got_rtt, rtt);
		break;
	}
	case RNSC_CTX_KEEPALIVE:
		EXPECT(rnsc_link_keepalive_parse(x->d, (size_t)on) == ka, "A: keepalive");
		break;
	case RNSC_CTX_LINKCLOSE:
		EXPECT(rnsc_link_close_check(x->d, (size_t)on, lid) == 0, "A: close");
		break;
	default: {
		rnsc_identity id2;
		rc = rnsc_link_identify_validate(x->ctx, &id2, x->d, (size_t)on, lid);
		EXPECT(rc == 0, "A: identify %s", en(rc));
		SAME("A: identity", x->d, 64, pt, 64);
		/* fuzz_proof seed: the opened identify proof as a packet's data */
		rnsc_packet sp = want;
		uint8_t *seed = x->b;
		memset(seed, 0, 32);
		memcpy(seed + 32, x->d, 64);
		sp.data = x->d;
		sp.data_len = (size_t)on;
		int sn = rnsc_packet_pack(seed + 96, BUF - 96, &sp, RNSC_MTU);
		if (sn > 0)
			corpus_put(x, "fuzz_proof", seed, 96 + (size_t)sn);
		break;
	}
	}
	x->ways |= CONF_MATRIX_WAY_A;
	/* B: rnsc sends, the reference's link receives */
	int n = rnsc_link_packet(x, ctx, lid, key, iv, pt, (size_t)plen, x->a);
	EXPECT(n > 0, "B: rnsc packet %s", en(n));
#define REF_RECV(p_, n_)                                                                           \
	rw(x, &v, "link_packet_receive", "ibbbd", I(ctx), B(p_, n_), B(lid, 16), B(key, 64), now)
	rc = REF_RECV(x->a, n);
	EXPECT(rc == 0, "B: reference link rejects rnsc's packet: %s", en(rc));
	switch (ctx) {
	case RNSC_CTX_LRRTT:
		EXPECT(ival(v, 0) == (long long)(rtt * 1048576.0), "B: reference rtt %lld / 2^20 s",
		       ival(v, 0));
		break;
	case RNSC_CTX_KEEPALIVE:
		/* the responder answers a request and takes an answer as plain traffic */
		EXPECT(ival(v, 0) == (ka == RNSC_LINK_KEEPALIVE_REQUEST ? 0xFF : 0),
		       "B: keepalive answer %lld", ival(v, 0));
		break;
	case RNSC_CTX_LINKCLOSE:
		EXPECT(is_none(v, 0), "B: link did not close");
		break;
	default:
		EXPECT(is_bytes(v, 0), "B: not identified");
		SAME("B: identity", v->item[0].p, v->item[0].len, pt, 64);
		break;
	}
	x->ways |= CONF_MATRIX_WAY_B;
	SAME("C: link packet", x->a, (size_t)n, r->item[0].p, r->item[0].len);
	x->ways |= CONF_MATRIX_WAY_C;
	/* D */
	uint8_t *m = x->b;
	if (ctx == RNSC_CTX_KEEPALIVE) {
		/* STRICTER: any other keepalive byte; the reference takes it as traffic */
		uint8_t odd = (uint8_t)below(x, 0xFE);
		n = rnsc_link_packet(x, ctx, lid, key, iv, &odd, 1, m);
		EXPECT(n > 0, "pack");
		rnsc_packet kp;
		rc = rnsc_link_open(x, m, (size_t)n, key, &kp);
		VERDICT("D other byte", rc >= 0 ? rnsc_link_keepalive_parse(x->d, (size_t)rc) : rc,
			RNSC_ERR_MALFORMED, REF_RECV(m, n), 0);
		EXPECT(ival(v, 0) == 0, "D: the reference answered byte %02x", odd);
		x->ways |= CONF_MATRIX_WAY_D;
		return 0;
	}
	memcpy(m, x->a, (size_t)n);
	m[19 + 16 + below(x, (size_t)n - 19 - 16)] ^= 0x04; /* ciphertext or HMAC */
	rnsc_packet mp;
	VERDICT("D ciphertext byte", rnsc_link_open(x, m, (size_t)n, key, &mp), RNSC_ERR_AUTH,
		REF_RECV(m, n), RNSC_ERR_AUTH);
	/* wrong plaintext inside a valid token */
	uint8_t bad[200];
	size_t blen = 0;
	int want_rnsc = RNSC_ERR_MALFORMED, want_ref = RNSC_ERR_MALFORMED;
	if (ctx == RNSC_CTX_LRRTT) {
		/* STRICTER: bytes after the float; umsgpack.unpackb ignores them */
		memcpy(bad, pt, (size_t)plen);
		bad[plen] = 0xc0;
		blen = (size_t)plen + 1;
		want_ref = 0;
	} else if (ctx == RNSC_CTX_LINKCLOSE) {
		rnd(x, bad, 16); /* another link's id */
		blen = 16;
		want_rnsc = want_ref = RNSC_ERR_NOTFOUND;
	} else {
		memcpy(bad, pt, (size_t)plen);
		bad[64 + below(x, 64)] ^= 0x10; /* the signature */
		blen = (size_t)plen;
		want_rnsc = want_ref = RNSC_ERR_SIGNATURE;
	}
	n = rnsc_link_packet(x, ctx, lid, key, iv, bad, blen, m);
	EXPECT(n > 0, "pack");
	rc = rnsc_link_open(x, m, (size_t)n, key, &mp);
	EXPECT(rc >= 0, "open");
	int vr = payload_verdict(x, ctx, (size_t)rc, lid);
	int fr = REF_RECV(m, n);
	VERDICT("D wrong plaintext", vr, want_rnsc, fr < 0 ? fr : 0, want_ref);
	/* a plaintext one byte short */
	n = rnsc_link_packet(x, ctx, lid, key, iv, pt, (size_t)plen - 1, m);
	EXPECT(n > 0, "pack");
	rc = rnsc_link_open(x, m, (size_t)n, key, &mp);
	EXPECT(rc >= 0, "open");
	vr = payload_verdict(x, ctx, (size_t)rc, lid);
	/* a cut float is a truncated MessagePack value on both sides */
	int want_short = ctx == RNSC_CTX_LRRTT ? RNSC_ERR_TRUNCATED : RNSC_ERR_MALFORMED;
	VERDICT("D one byte short", vr, want_short, REF_RECV(m, n), want_short);
#undef REF_RECV
	x->ways |= CONF_MATRIX_WAY_D;
	return 0;
}

static int c_link(mx *x)
{
	switch (x->row->param[0]) {
	case RNSC_PKT_LINKREQUEST:
		return c_link_request(x);
	case RNSC_CTX_LRPROOF:
		return c_link_proof(x);
	default:
		return c_link_payload(x);
	}
}

static int c_signalling(mx *x)
{
	int mode = (int)x->row->param[0];
	uint32_t mtu = link_mtus[below(x, 6)];
	if (below(x, 3) == 0)
		mtu = (uint32_t)below(x, RNSC_LINK_MTU_BYTEMASK + 1);
	uint8_t s[3];
	int rc = rnsc_link_signalling(s, mtu, mode);
	rnsc_refwire_res *r, *v;
	int fr = rw(x, &r, "link_signalling", "ii", I(mtu), I(mode));
	if (!rnsc_link_mode_enabled(mode)) {
		/* every leg: neither side encodes a mode it has not enabled */
		VERDICT("A-C disabled mode", rc, RNSC_ERR_LINK_MODE, fr, RNSC_ERR_LINK_MODE);
		x->ways |= CONF_MATRIX_WAY_A | CONF_MATRIX_WAY_B | CONF_MATRIX_WAY_C;
		/* D: a request signalling it is refused by both (the link rows show the same on
		 * whole packets) */
		uint8_t lr[67] = {0};
		rnd(x, lr, 64);
		lr[64] = (uint8_t)(mode << 5);
		rnsc_link_request q;
		int rr = rnsc_link_request_parse(&q, lr, 67);
		EXPECT(rr == RNSC_ERR_LINK_MODE, "D: rnsc accepts mode %d: %s", mode, en(rr));
		rc = rw(x, &v, "link_signalling_decode", "b", B(lr + 64, 3));
		REF_OK(rc, v, 2, "D decode");
		EXPECT(ival(v, 1) == mode, "D: reference reads mode %lld", ival(v, 1));
		x->row->mutations++;
		x->ways |= CONF_MATRIX_WAY_D;
		return 0;
	}
	REF_BYTES(fr, r, "A: signalling_bytes");
	uint32_t m2;
	int mode2;
	rnsc_link_signalling_decode(r->item[0].p, &m2, &mode2);
	EXPECT(m2 == mtu && mode2 == mode, "A: rnsc reads mtu %u mode %d", m2, mode2);
	x->ways |= CONF_MATRIX_WAY_A;
	EXPECT(rc == 0, "B: rnsc %s", en(rc));
	rc = rw(x, &v, "link_signalling_decode", "b", B(s, 3));
	REF_OK(rc, v, 2, "B: decode");
	EXPECT((uint32_t)ival(v, 0) == mtu && ival(v, 1) == mode, "B: reference reads %lld/%lld",
	       ival(v, 0), ival(v, 1));
	x->ways |= CONF_MATRIX_WAY_B;
	SAME("C: signalling", s, 3, r->item[0].p, r->item[0].len);
	x->ways |= CONF_MATRIX_WAY_C;
	/* STRICTER: an MTU beyond 21 bits; the reference masks it silently */
	uint32_t big = RNSC_LINK_MTU_BYTEMASK + 1 + (uint32_t)below(x, 1000000);
	rc = rnsc_link_signalling(s, big, mode);
	fr = rw(x, &r, "link_signalling", "ii", I(big), I(mode));
	VERDICT("D mtu beyond 21 bits", rc, RNSC_ERR_RANGE, fr, 0);
	rnsc_link_signalling_decode(r->item[0].p, &m2, &mode2);
	EXPECT(m2 == (big & RNSC_LINK_MTU_BYTEMASK), "D: reference masked to %u", m2);
	x->ways |= CONF_MATRIX_WAY_D;
	return 0;
}

/* ---- MTU rules ----------------------------------------------------------------------------- */

static const struct {
	const char *name;
	long long value;
} wire_constants[] = {
	{"MTU", RNSC_MTU},
	{"MDU", RNSC_MDU},
	{"HEADER_MINSIZE", RNSC_HEADER_MINSIZE},
	{"HEADER_MAXSIZE", RNSC_HEADER_MAXSIZE},
	{"IFAC_MIN_SIZE", RNSC_IFAC_MIN_SIZE},
	{"ENCRYPTED_MDU", RNSC_ENCRYPTED_MDU},
	{"PLAIN_MDU", RNSC_PLAIN_MDU},
	{"LINK_MDU", RNSC_LINK_MDU},
	{"LINK_MDU_AT_MTU", RNSC_LINK_MDU},
	{"PATHFINDER_M", RNSC_PATHFINDER_M},
	{"EXPL_LENGTH", RNSC_PROOF_EXPLICIT_LEN},
	{"IMPL_LENGTH", RNSC_PROOF_IMPLICIT_LEN},
	{"LINK_MTU_SIZE", RNSC_LINK_MTU_SIZE},
	{"ECPUBSIZE", RNSC_LINK_ECPUBSIZE},
	{"MTU_BYTEMASK", RNSC_LINK_MTU_BYTEMASK},
	{"MODE_BYTEMASK", RNSC_LINK_MODE_BYTEMASK},
	{"MODE_DEFAULT", RNSC_LINK_MODE_DEFAULT},
	{"TRUNCATED_HASHLENGTH", RNSC_TRUNCATED_HASHLEN},
	{"NAME_HASH_LENGTH", RNSC_NAME_HASHLEN},
	{"KEYSIZE", RNSC_KEYSIZE},
	{"SIGLENGTH", RNSC_SIGLEN},
	{"RATCHETSIZE", RNSC_RATCHETSIZE},
	{"TOKEN_OVERHEAD", RNSC_TOKEN_OVERHEAD},
	{"DEFAULT_IFAC_SIZE", RNSC_IFAC_DEFAULT_SIZE},
	{"KISS_DEFAULT_IFAC_SIZE", 8},
};

static int c_constants(mx *x)
{
	/* A-C: every constant the reference reports has the same value in rnsc */
	size_t i = 0;
	for (;; i++) {
		rnsc_refwire_res *r;
		if (x->n_res == MAX_RES)
			drop_results(x);
		int rc = rw(x, &r, "constants_item", "i", I(i));
		if (rc == 0 && is_none(r, 0))
			break;
		REF_OK(rc, r, 2, "constants");
		const char *name = (const char *)r->item[0].p;
		size_t k = 0;
		while (k < sizeof(wire_constants) / sizeof(wire_constants[0]) &&
		       strcmp(wire_constants[k].name, name) != 0)
			k++;
		EXPECT(k < sizeof(wire_constants) / sizeof(wire_constants[0]),
		       "rnsc has no constant %s", name);
		EXPECT(wire_constants[k].value == ival(r, 1), "%s: rnsc %lld, reference %lld", name,
		       wire_constants[k].value, ival(r, 1));
	}
	EXPECT(i == sizeof(wire_constants) / sizeof(wire_constants[0]),
	       "the reference reports %zu constants, rnsc checks %zu", i,
	       sizeof(wire_constants) / sizeof(wire_constants[0]));
	x->ways |= CONF_MATRIX_WAY_A | CONF_MATRIX_WAY_B | CONF_MATRIX_WAY_C;
	/* D: the derived sizes hold: an encrypted single packet of ENCRYPTED_MDU fits the MTU */
	pk_in in;
	if (gen_packet(x, &in, RNSC_PKT_DATA, RNSC_CTX_NONE, RNSC_DEST_SINGLE, RNSC_HEADER_1, 0, 0))
		return -1;
	in.pt_len = RNSC_ENCRYPTED_MDU;
	rnd(x, x->pt, in.pt_len);
	int n = packet_legs(x, &in, 0);
	if (n < 0)
		return -1;
	EXPECT((size_t)n + RNSC_IFAC_MIN_SIZE + 16 <= RNSC_MTU, "ENCRYPTED_MDU packet of %d", n);
	x->row->mutations++;
	x->ways |= CONF_MATRIX_WAY_D;
	return 0;
}

/* Packets right at a limit pass all legs; one unit more is refused by both packers. */
static int limit_case(mx *x, int dt, size_t mtu)
{
	pk_in in;
	if (gen_packet(x, &in, RNSC_PKT_DATA, RNSC_CTX_NONE, dt, RNSC_HEADER_1, 0, 0))
		return -1;
	in.mtu = mtu;
	in.pt_len = max_plain(in.enc, mtu - RNSC_HEADER_MINSIZE);
	rnd(x, x->pt, in.pt_len + 16);
	int n = packet_legs(x, &in, 0);
	if (n < 0)
		return -1;
	/* D: one byte more (for an encrypted payload: one more cipher block) */
	in.pt_len++;
	rnsc_refwire_res *r;
	VERDICT("D over the MTU", rnsc_build(x, &in, x->b, BUF), RNSC_ERR_TOOBIG,
		ref_build(x, &in, &r), RNSC_ERR_TOOBIG);
	x->ways |= CONF_MATRIX_WAY_D;
	return 0;
}

static int c_mtu(mx *x)
{
	switch (x->row->param[0]) {
	case 0:
		return c_constants(x);
	case 1: /* the base MTU: a plain packet of exactly 500 bytes */
		return limit_case(x, RNSC_DEST_PLAIN, RNSC_MTU);
	case 2: { /* link MTUs above 500 */
		static const size_t mtus[] = {501, 1064, 4096, 8192, 16384};
		return limit_case(x, RNSC_DEST_LINK, mtus[below(x, 5)]);
	}
	case 3: { /* Link.update_mdu at any MTU */
		size_t mtu = below(x, 2) ? 500 + below(x, 20000) : link_mtus[below(x, 6)];
		rnsc_refwire_res *r;
		int rc = rw(x, &r, "link_mdu", "i", I(mtu));
		REF_OK(rc, r, 1, "link_mdu");
		EXPECT((long long)rnsc_link_mdu(mtu) == ival(r, 0),
		       "link MDU at %zu: rnsc %zu ref %lld", mtu, rnsc_link_mdu(mtu), ival(r, 0));
		x->ways |= CONF_MATRIX_WAY_A | CONF_MATRIX_WAY_B | CONF_MATRIX_WAY_C;
		/* D: a link packet with MDU bytes of plaintext fits; a block more does not */
		if (mtu > 20000)
			mtu = 16384;
		pk_in in;
		if (gen_packet(x, &in, RNSC_PKT_DATA, RNSC_CTX_NONE, RNSC_DEST_LINK, RNSC_HEADER_1,
			       0, 0))
			return -1;
		in.mtu = mtu;
		in.pt_len = rnsc_link_mdu(mtu);
		rnd(x, x->pt, in.pt_len + 17);
		int n = packet_legs(x, &in, 0);
		if (n < 0)
			return -1;
		in.pt_len += 17;
		VERDICT("D MDU + 17", rnsc_build(x, &in, x->b, BUF), RNSC_ERR_TOOBIG,
			ref_build(x, &in, &r), RNSC_ERR_TOOBIG);
		x->ways |= CONF_MATRIX_WAY_D;
		return 0;
	}
	default: { /* hardware MTU tiers of AUTOCONFIGURE_MTU interfaces */
		static const uint64_t edges[] = {62500,     1000000,   2000000,   5000000,
						 10000000,  100000000, 200000000, 400000000,
						 750000000, 1000000000};
		uint64_t at = edges[below(x, 10)];
		uint64_t rates[3] = {at, at - 1, at + below(x, 1000000)};
		for (int i = 0; i < 3; i++) {
			rnsc_refwire_res *r;
			int rc = rw(x, &r, "hw_mtu", "i", I(rates[i]));
			REF_OK(rc, r, 1, "hw_mtu");
			EXPECT((long long)rnsc_hw_mtu_for_bitrate(rates[i]) == ival(r, 0),
			       "tier at %llu bps: rnsc %zu ref %lld", (unsigned long long)rates[i],
			       rnsc_hw_mtu_for_bitrate(rates[i]), ival(r, 0));
		}
		x->row->mutations++; /* the edge minus one lands in the lower tier on both */
		x->ways |= CONF_MATRIX_WAYS;
		return 0;
	}
	}
}

/* ---- framing ------------------------------------------------------------------------------- */

typedef struct frames {
	size_t n;
	size_t len[4];
	uint8_t *buf; /* frame i at buf + i * BUF / 4 */
} frames;

static int collect_hdlc(void *ud, const uint8_t *f, size_t len)
{
	frames *fr = ud;
	if (fr->n < 4 && len <= BUF / 4) {
		memcpy(fr->buf + fr->n * (BUF / 4), f, len);
		fr->len[fr->n] = len;
	}
	fr->n++;
	return 0;
}

static int collect_kiss(void *ud, uint8_t type, const uint8_t *f, size_t len)
{
	if (RNSC_KISS_CMD(type) != RNSC_KISS_CMD_DATA)
		return 0;
	return collect_hdlc(ud, f, len);
}

static int rnsc_deframe(mx *x, int kiss, const uint8_t *s, size_t n, size_t hw_mtu, frames *fr)
{
	memset(fr, 0, sizeof(*fr));
	fr->buf = x->c;
	static uint8_t work[BUF];
	if (kiss) {
		rnsc_kiss_decoder d;
		int rc = rnsc_kiss_decoder_init(&d, work, hw_mtu);
		return rc ? rc : rnsc_kiss_decoder_feed(&d, s, n, collect_kiss, fr);
	}
	rnsc_hdlc_decoder d;
	int rc = rnsc_hdlc_decoder_init(&d, work, hw_mtu);
	if (rc == 0)
		rc = rnsc_hdlc_decoder_set_min(&d, RNSC_HDLC_REF_MIN_FRAME);
	return rc ? rc : rnsc_hdlc_decoder_feed(&d, s, n, collect_hdlc, fr);
}

static int c_framing(mx *x)
{
	int kiss = (int)x->row->param[0];
	size_t hw = kiss ? RNSC_KISS_MTU_SERIAL : RNSC_HDLC_MTU_PIPE;
	size_t len = RNSC_HDLC_REF_MIN_FRAME + below(x, hw - RNSC_HDLC_REF_MIN_FRAME + 1);
	rnd(x, x->pt, len);
	/* plenty of bytes that need escaping */
	static const uint8_t special[] = {0x7e, 0x7d, 0xc0, 0xdb, 0x5e, 0x5d, 0xdc, 0xdd};
	for (size_t i = 0, k = below(x, len); i < k; i++)
		x->pt[below(x, len)] = special[below(x, 8)];
	const char *fn_frame = kiss ? "kiss_frame" : "hdlc_frame";
	const char *fn_recv = kiss ? "kiss_receive" : "hdlc_receive";
	rnsc_refwire_res *r, *v;
	int rc = rw(x, &r, fn_frame, "b", B(x->pt, len));
	REF_BYTES(rc, r, "A: frame");
	frames fr;
	rc = rnsc_deframe(x, kiss, r->item[0].p, r->item[0].len, hw, &fr);
	EXPECT(rc == 0 && fr.n == 1, "A: rnsc found %zu frames (%s)", fr.n, en(rc));
	SAME("A: payload", fr.buf, fr.len[0], x->pt, len);
	x->ways |= CONF_MATRIX_WAY_A;
	int n = kiss ? rnsc_kiss_encode(x->a, BUF, x->pt, len)
		     : rnsc_hdlc_encode(x->a, BUF, x->pt, len);
	EXPECT(n > 0, "B: encode %s", en(n));
	rc = rw(x, &v, fn_recv, "bi", B(x->a, n), I(hw));
	EXPECT(rc == 0 && v->n == 1 && is_bytes(v, 0), "B: the reference found %zu frames (%s)",
	       v->n, en(rc));
	SAME("B: payload", v->item[0].p, v->item[0].len, x->pt, len);
	x->ways |= CONF_MATRIX_WAY_B;
	SAME("C: frame", x->a, (size_t)n, r->item[0].p, r->item[0].len);
	x->ways |= CONF_MATRIX_WAY_C;
	/* D: unterminated (both wait for more), and two frames back to back (both deliver) */
	rc = rnsc_deframe(x, kiss, x->a, (size_t)n - 1, hw, &fr);
	int frc = rw(x, &v, fn_recv, "bi", B(x->a, n - 1), I(hw));
	EXPECT(rc == 0 && frc == 0 && fr.n == 0 && v->n == 0,
	       "D unterminated: rnsc %zu frames, reference %zu", fr.n, v->n);
	x->row->mutations++;
	if (!kiss) {
		/* a runt (HEADER_MINSIZE bytes or less): both drop it */
		size_t rl = 1 + below(x, RNSC_HDLC_REF_MIN_FRAME - 1);
		n = rnsc_hdlc_encode(x->a, BUF, x->pt, rl);
		rc = rnsc_deframe(x, kiss, x->a, (size_t)n, hw, &fr);
		frc = rw(x, &v, fn_recv, "bi", B(x->a, n), I(hw));
		EXPECT(rc == 0 && frc == 0 && fr.n == 0 && v->n == 0,
		       "D runt of %zu: rnsc %zu frames, reference %zu", rl, fr.n, v->n);
		/* oversized: both drop it */
		rnd(x, x->pt, hw + 200);
		n = rnsc_hdlc_encode(x->a, BUF, x->pt, hw + 1 + below(x, 100));
		rc = rnsc_deframe(x, kiss, x->a, (size_t)n, hw, &fr);
		frc = rw(x, &v, fn_recv, "bi", B(x->a, n), I(hw));
		EXPECT(rc == 0 && frc == 0 && fr.n == 0 && v->n == 0,
		       "D oversized: rnsc %zu frames, reference %zu", fr.n, v->n);
		x->row->mutations += 2;
	} else {
		/* STRICTER: a payload beyond HW_MTU; rnsc drops it, the reference delivers the
		 * first HW_MTU bytes */
		rnd(x, x->pt, hw + 200);
		size_t big = hw + 1 + below(x, 100);
		n = rnsc_kiss_encode(x->a, BUF, x->pt, big);
		rc = rnsc_deframe(x, kiss, x->a, (size_t)n, hw, &fr);
		frc = rw(x, &v, fn_recv, "bi", B(x->a, n), I(hw));
		EXPECT(rc == 0 && frc == 0 && fr.n == 0 && v->n == 1 && v->item[0].len == hw,
		       "D oversized: rnsc %zu frames, reference %zu", fr.n, v->n);
		x->row->mutations++;
	}
	x->ways |= CONF_MATRIX_WAY_D;
	return 0;
}

/* ---- IFAC ---------------------------------------------------------------------------------- */

static void rnd_name(mx *x, char *out, size_t cap)
{
	static const char alpha[] = "abcdefghijklmnopqrstuvwxyz0123456789-_ ";
	size_t n = 1 + below(x, cap - 1 < 24 ? cap - 1 : 24);
	for (size_t i = 0; i < n; i++)
		out[i] = alpha[below(x, sizeof(alpha) - 1)];
	out[n] = 0;
}

static int ref_ifac_recv(mx *x, rnsc_refwire_res **v, const char *nn, const char *pp, size_t size,
			 const uint8_t *f, size_t n, size_t hw)
{
	return rw(x, v, "ifac_receive", "ssibi", nn, pp, I(size), B(f, n), I(hw));
}

/* The reference's verdict from ifac_receive: the packet passed, or dropped and counted. */
static int ifac_dropped(const rnsc_refwire_res *v)
{
	return v->n == 3 && is_none(v, 0) && ival(v, 1) == 1;
}

static int c_ifac(mx *x)
{
	size_t size = (size_t)x->row->param[0];
	int origin = (int)x->row->param[1];
	char name[32] = "", pass[32] = "";
	if (origin & 1)
		rnd_name(x, name, sizeof(name));
	if (origin & 2)
		rnd_name(x, pass, sizeof(pass));
	const char *nn = origin & 1 ? name : NULL, *pp = origin & 2 ? pass : NULL;
	rnsc_ifac ifac;
	int rc = rnsc_ifac_init(&ifac, x->ctx, nn, pp, size);
	EXPECT(rc == 0, "rnsc ifac: %s", en(rc));
	/* derivation */
	rnsc_refwire_res *r, *v;
	rc = rw(x, &r, "ifac_derive", "ssi", nn, pp, I(size));
	if (rc || r->n != 3) {
		rnsc_ifac_free(&ifac);
		return fail(x, "ifac_derive: %s", en(rc));
	}
	uint8_t ipub[64];
	rnsc_identity_public_bytes(&ifac.identity, ipub);
	int same = r->item[0].len == 64 && memcmp(r->item[0].p, ifac.key, 64) == 0 &&
		   r->item[1].len == 64 && memcmp(r->item[1].p, ipub, 64) == 0 &&
		   r->item[2].len == 64 && memcmp(r->item[2].p, ifac.signature, 64) == 0;
	if (!same) {
		rnsc_ifac_free(&ifac);
		return fail(x, "IFAC key/identity/signature differ: ref key %s",
			    hx(r->item[0].p, r->item[0].len));
	}
	/* a packet to carry (sometimes past the 8160-byte mark of standard HKDF) */
	pk_in in;
	int big = below(x, 6) == 0;
	int grc = gen_packet(x, &in, (int)below(x, 4), RNSC_CTX_NONE, RNSC_DEST_PLAIN,
			     (int)below(x, 2), -1, -1);
	if (grc == 0 && big) {
		in.mtu = 16384;
		in.pt_len = 8200 + below(x, 2000);
		rnd(x, x->pt, in.pt_len);
	}
	int pn = grc ? -1 : rnsc_build(x, &in, x->c, BUF);
	size_t hw = big ? 16384 : RNSC_MTU;
	int out = 0;
	rnsc_ifac_stats st = {0};
	if (pn <= 0) {
		out = fail(x, "packet %s", en(pn));
		goto done;
	}
	/* A: handle_outgoing_ifac masks, rnsc checks and unmasks */
	rc = rw(x, &r, "ifac_apply", "ssib", nn, pp, I(size), B(x->c, pn));
	if (rc || !is_bytes(r, 0)) {
		out = fail(x, "A: handle_outgoing_ifac %s", en(rc));
		goto done;
	}
	rc = rnsc_ifac_check(&ifac, &st, x->a, BUF, r->item[0].p, r->item[0].len);
	if (rc != pn || memcmp(x->a, x->c, (size_t)pn) != 0 || st.accepted != 1) {
		out = fail(x, "A: rnsc check of the reference's frame: %s", en(rc));
		goto done;
	}
	x->ways |= CONF_MATRIX_WAY_A;
	/* B: rnsc masks, preprocess_inbound accepts and unmasks */
	int fn = rnsc_ifac_apply(&ifac, x->a, BUF, x->c, (size_t)pn);
	if (fn != pn + (int)size) {
		out = fail(x, "B: rnsc apply %s", en(fn));
		goto done;
	}
	rc = ref_ifac_recv(x, &v, nn, pp, size, x->a, (size_t)fn, hw);
	if (rc || v->n != 3 || !is_bytes(v, 0) || v->item[0].len != (size_t)pn ||
	    memcmp(v->item[0].p, x->c, (size_t)pn) != 0 || ival(v, 1) != 0) {
		out = fail(x, "B: the reference refused rnsc's IFAC frame (%s, violations %lld)",
			   en(rc), ival(v, 1));
		goto done;
	}
	x->ways |= CONF_MATRIX_WAY_B;
	if (r->item[0].len != (size_t)fn || memcmp(r->item[0].p, x->a, (size_t)fn) != 0) {
		out = fail(x, "C: IFAC frames differ: rnsc %s ref %s", hx(x->a, (size_t)fn),
			   hx(r->item[0].p, r->item[0].len));
		goto done;
	}
	x->ways |= CONF_MATRIX_WAY_C;
	if (x->case_no == 0 && x->corpus && !big) {
		/* seed for fuzz_ifac: size byte, then a frame under the fuzzer's fixed config */
		rnsc_refwire_res *s;
		rc = rw(x, &s, "ifac_apply", "ssib", "rnsc-fuzz", "fuzz", I(size), B(x->c, pn));
		if (rc == 0 && is_bytes(s, 0)) {
			x->d[0] = (uint8_t)size;
			memcpy(x->d + 1, s->item[0].p, s->item[0].len);
			corpus_put(x, "fuzz_ifac", x->d, 1 + s->item[0].len);
		}
	}
	/* D: every broken frame is dropped and counted by both */
	struct {
		const char *what;
		int expect; /* rnsc's code; the reference drops with one IFAC violation */
	} cls[] = {{"code byte", RNSC_ERR_IFAC},
		   {"payload byte", RNSC_ERR_IFAC},
		   {"flag cleared", RNSC_ERR_IFAC_MISSING},
		   {"too short for a code", RNSC_ERR_IFAC},
		   {"other passphrase", RNSC_ERR_IFAC},
		   {"IFAC frame on an interface without IFAC", RNSC_ERR_IFAC_UNEXPECTED}};
	for (size_t c = 0; c < sizeof(cls) / sizeof(cls[0]); c++) {
		uint8_t *m = x->b;
		size_t mlen = (size_t)fn;
		memcpy(m, x->a, mlen);
		const char *n2 = nn, *p2 = pp;
		const rnsc_ifac *chk = &ifac;
		rnsc_ifac other;
		int have_other = 0;
		switch (c) {
		case 0:
			m[2 + below(x, size)] ^= (uint8_t)(1u << below(x, 8));
			break;
		case 1:
			m[2 + size + below(x, mlen - 2 - size)] ^= 0x01;
			break;
		case 2:
			m[0] &= 0x7f;
			break;
		case 3:
			mlen = 2 + below(x, size) + 1;
			break;
		case 4:
			p2 = pp ? "not-the-passphrase" : "some-passphrase";
			rc = rnsc_ifac_init(&other, x->ctx, n2, p2, size);
			if (rc) {
				out = fail(x, "ifac init %s", en(rc));
				goto done;
			}
			have_other = 1;
			chk = &other;
			break;
		default:
			n2 = p2 = NULL, chk = NULL;
			break;
		}
		rnsc_ifac_stats ms = {0};
		int rr = rnsc_ifac_check(chk, &ms, x->d, BUF, m, mlen);
		if (have_other)
			rnsc_ifac_free(&other);
		int fr = ref_ifac_recv(x, &v, n2, p2, size, m, mlen, hw);
		/* A code of n bytes collides with probability 2^-8n: a changed code, payload or key
		 * can still verify (the mask changes with the code, so the recomputed code does
		 * too). Then both sides pass the same unmasked packet on (the reference's packet
		 * layer may still refuse it, and so must rnsc's). */
		if (c != 2 && c != 3 && c != 5 && rr >= 0 && fr == 0 && v->n == 3 &&
		    ival(v, 1) == 0) {
			rnsc_packet pk;
			if (is_bytes(v, 0))
				EXPECT(v->item[0].len == (size_t)rr &&
					       memcmp(v->item[0].p, x->d, (size_t)rr) == 0,
				       "D %s: colliding code, different packets", cls[c].what);
			else
				EXPECT(rnsc_packet_unpack(&pk, x->d, (size_t)rr) != 0,
				       "D %s: colliding code, rnsc parses what the reference refused",
				       cls[c].what);
			x->row->mutations++;
			continue;
		}
		if (rr != cls[c].expect || ms.violations != 1 || fr != 0 || !ifac_dropped(v)) {
			out = fail(x, "D %s: rnsc %s (violations %llu), reference %s %s",
				   cls[c].what, en(rr), (unsigned long long)ms.violations, en(fr),
				   fr == 0 && ifac_dropped(v) ? "dropped" : "accepted");
			goto done;
		}
		x->row->mutations++;
	}
	/* a plain frame on an IFAC interface: both count a violation */
	{
		rnsc_ifac_stats ms = {0};
		int rr = rnsc_ifac_check(&ifac, &ms, x->d, BUF, x->c, (size_t)pn);
		int fr = ref_ifac_recv(x, &v, nn, pp, size, x->c, (size_t)pn, hw);
		if (rr != RNSC_ERR_IFAC_MISSING || ms.missing != 1 || fr != 0 || !ifac_dropped(v)) {
			out = fail(x, "D plain frame: rnsc %s, reference %s", en(rr), en(fr));
			goto done;
		}
		x->row->mutations++;
	}
	x->ways |= CONF_MATRIX_WAY_D;
done:
	rnsc_ifac_free(&ifac);
	return out;
}

/* ---- rows ---------------------------------------------------------------------------------- */

typedef struct row_family {
	const char *name;
	int (*run)(mx *x);
} row_family;

static const row_family families[] = {
	{"packet", c_packet}, {"propagation", c_propagation},
	{"flag", c_flag},     {"announce", c_announce},
	{"proof", c_proof},   {"pathreq", c_pathreq},
	{"link", c_link},     {"signalling", c_signalling},
	{"mtu", c_mtu},       {"framing", c_framing},
	{"ifac", c_ifac},
};
#define N_FAMILIES (sizeof(families) / sizeof(families[0]))

/* The name rnsc gives a row's parameters; empty when rnsc does not know them. */
static void rnsc_row_name(char *out, size_t cap, const char *family, const long long *q, size_t nq)
{
	out[0] = 0;
#define P(i) (i < nq ? q[i] : -1)
	if (!strcmp(family, "packet") && nq == 4) {
		const char *pt = rnsc_packet_type_name((int)P(0)),
			   *ctx = rnsc_packet_context_name((int)P(1)),
			   *dt = rnsc_dest_type_name((int)P(2)),
			   *ht = rnsc_header_type_name((int)P(3));
		if (pt && ctx && dt && ht)
			snprintf(out, cap, "packet %s/%s/%s/%s", pt, ctx, dt, ht);
	} else if (!strcmp(family, "propagation") && nq == 1) {
		const char *t = rnsc_transport_type_name((int)P(0));
		if (t)
			snprintf(out, cap, "propagation %s", t);
	} else if (!strcmp(family, "flag") && nq == 1) {
		if (P(0) == RNSC_FLAG_SET || P(0) == RNSC_FLAG_UNSET)
			snprintf(out, cap, "context flag FLAG_%s", P(0) ? "SET" : "UNSET");
	} else if (!strcmp(family, "announce") && nq == 4) {
		if (P(0) >= 0 && P(0) <= 1 && P(1) >= 0 && P(1) <= 1 && P(2) >= 0 && P(2) <= 1 &&
		    rnsc_header_type_name((int)P(3)))
			snprintf(out, cap, "announce %s/%s/%s/%s", P(0) ? "ratchet" : "no-ratchet",
				 P(1) ? "app-data" : "no-app-data", P(2) ? "PATH_RESPONSE" : "NONE",
				 rnsc_header_type_name((int)P(3)));
	} else if (!strcmp(family, "proof") && nq == 1) {
		if (P(0) == RNSC_PROOF_EXPLICIT_LEN)
			snprintf(out, cap, "proof explicit (%d bytes)", RNSC_PROOF_EXPLICIT_LEN);
		else if (P(0) == RNSC_PROOF_IMPLICIT_LEN)
			snprintf(out, cap, "proof implicit (%d bytes)", RNSC_PROOF_IMPLICIT_LEN);
		else if (P(0) == 0)
			snprintf(out, cap, "proof on link (%d bytes, LINK)",
				 RNSC_PROOF_EXPLICIT_LEN);
	} else if (!strcmp(family, "pathreq") && nq == 1) {
		if (P(0) == 0)
			snprintf(out, cap, "path request (tag only)");
		else if (P(0) == 1)
			snprintf(out, cap, "path request (transport id + tag)");
	} else if (!strcmp(family, "link") && nq == 1) {
		if (P(0) == RNSC_PKT_LINKREQUEST)
			snprintf(out, cap, "link LINKREQUEST");
		else if (P(0) == RNSC_CTX_LRPROOF || P(0) == RNSC_CTX_LRRTT ||
			 P(0) == RNSC_CTX_KEEPALIVE || P(0) == RNSC_CTX_LINKCLOSE ||
			 P(0) == RNSC_CTX_LINKIDENTIFY)
			snprintf(out, cap, "link %s", rnsc_packet_context_name((int)P(0)));
	} else if (!strcmp(family, "signalling") && nq == 1) {
		const char *m = rnsc_link_mode_name((int)P(0));
		if (m)
			snprintf(out, cap, "link signalling MODE_%s", m);
	} else if (!strcmp(family, "mtu") && nq == 1) {
		static const char *const n[] = {"constants", "packet boundary", "link above 500",
						"link MDU", "hardware tiers"};
		if (P(0) >= 0 && P(0) < 5)
			snprintf(out, cap, "mtu %s", n[P(0)]);
	} else if (!strcmp(family, "framing") && nq == 1) {
		if (P(0) == 0 || P(0) == 1)
			snprintf(out, cap, "framing %s", P(0) ? "KISS" : "HDLC");
	} else if (!strcmp(family, "ifac") && nq == 2) {
		if (P(0) >= RNSC_IFAC_MIN_SIZE && P(0) <= RNSC_IFAC_MAX_SIZE) {
			if (P(1) == 3)
				snprintf(out, cap, "ifac size %lld", P(0));
			else if (P(1) == 1 || P(1) == 2)
				snprintf(out, cap, "ifac origin %s",
					 P(1) == 1 ? "network_name" : "passphrase");
		}
	}
#undef P
}

int conf_matrix_row_known(const char *family, const char *name, const long long *param,
			  size_t n_param)
{
	char mine[sizeof(((conf_matrix_row *)0)->name)];
	if (!family || !name)
		return 0;
	rnsc_row_name(mine, sizeof(mine), family, param, n_param);
	return mine[0] && strcmp(mine, name) == 0;
}

static const row_family *find_family(const char *name)
{
	for (size_t i = 0; i < N_FAMILIES; i++)
		if (!strcmp(families[i].name, name))
			return &families[i];
	return NULL;
}

static int fetch_row(mx *x, long long i, conf_matrix_row *row)
{
	memset(row, 0, sizeof(*row));
	rnsc_refwire_res r;
	int rc = rnsc_refwire_call(x->ref, &r, "row", "i", i);
	if (rc == 0 && (r.n < 2 || r.item[0].kind != RNSC_RW_STR || r.item[1].kind != RNSC_RW_STR ||
			r.n - 2 > 4))
		rc = RNSC_ERR_PYTHON;
	if (rc == 0) {
		snprintf(row->family, sizeof(row->family), "%s", (const char *)r.item[0].p);
		snprintf(row->name, sizeof(row->name), "%s", (const char *)r.item[1].p);
		row->n_param = r.n - 2;
		for (size_t k = 0; k < row->n_param; k++)
			row->param[k] = r.item[2 + k].kind == RNSC_RW_INT ? r.item[2 + k].i : -1;
	}
	rnsc_refwire_res_free(&r);
	return rc;
}

int conf_matrix_run(const char *backend, unsigned cases, uint64_t seed, const char *corpus_dir,
		    conf_matrix_sink sink, void *ud, conf_matrix_summary *sum)
{
	if (!sum || cases == 0)
		return RNSC_ERR_INVAL;
	memset(sum, 0, sizeof(*sum));
	rnsc_pyref *ref = conf_ref();
	if (!ref)
		return RNSC_ERR_STATE;
	if (!backend) {
		if (conf_backend_count() == 0)
			return RNSC_ERR_NOTFOUND;
		backend = conf_backend(0)->name;
	}
	mx *x = calloc(1, sizeof(*x));
	if (!x)
		return RNSC_ERR_NOMEM;
	x->ref = ref;
	x->corpus = corpus_dir;
	if (corpus_dir)
		mkdir(corpus_dir, 0777);
	x->ctx = conf_ctx_for(backend);
	if (!x->ctx) {
		free(x);
		return RNSC_ERR_NOTFOUND;
	}
	rnsc_crypto_set_rng(x->ctx, mx_rng, x);
	rnsc_refwire_res cnt;
	int rc = rnsc_refwire_call(ref, &cnt, "row_count", "");
	long long rows = rc == 0 && cnt.n == 1 ? cnt.item[0].i : -1;
	rnsc_refwire_res_free(&cnt);
	if (rows <= 0)
		rc = rc ? rc : RNSC_ERR_PYTHON;
	for (long long i = 0; rc == 0 && i < rows; i++) {
		conf_matrix_row row;
		rc = fetch_row(x, i, &row);
		if (rc)
			break;
		sum->rows_defined++;
		x->row = &row;
		row.known = conf_matrix_row_known(row.family, row.name, row.param, row.n_param);
		const row_family *f = find_family(row.family);
		if (row.known && f) {
			unsigned all_ways = 1;
			unsigned n_cases = cases;
			/* the packet family is large and uniform: its rows share the case budget */
			if (!strcmp(row.family, "packet") && cases > 1)
				n_cases = (cases + 1) / 2;
			x->in = seed ^ name_seed(row.name) ^ (name_seed(backend) << 1);
			x->fill = ~x->in;
			for (unsigned c = 0; c < n_cases; c++) {
				x->case_no = c;
				x->ways = 0;
				if (f->run(x) != 0)
					row.disagreements++;
				drop_results(x);
				all_ways &= x->ways == CONF_MATRIX_WAYS;
				row.cases++;
			}
			row.covered = all_ways;
		}
		if (row.covered)
			sum->rows_covered++;
		sum->disagreements += row.disagreements;
		sum->mutations += row.mutations;
		if (sink)
			sink(ud, &row);
	}
	rnsc_crypto_set_rng(x->ctx, NULL, NULL);
	rnsc_ctx_del(x->ctx);
	free(x);
	return rc;
}
