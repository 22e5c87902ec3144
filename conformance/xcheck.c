/* SPDX-License-Identifier: MIT */
/*
 * Randomized cross-checks: rnsc (on one crypto backend) against the embedded reference.
 *
 * Each check draws its inputs from a seeded generator, runs the same operation on both sides
 * and compares bytes, or verdicts for inputs that must be rejected. Randomness that ends up in
 * the output (ephemeral keys, IVs) is chosen by the check and handed to both sides: to rnsc
 * through the context's test RNG (a script of exactly the bytes it is expected to draw), to the
 * reference through the harness's pinned key generation and IV.
 *
 * Verdict codes are compared exactly. Where the two implementations reject the same input at
 * different steps, the expected pair is spelled out next to the case (see the truncation
 * rules), so a change on either side is noticed.
 *
 * Single-threaded (static scratch for hex dumps); see xcheck_engine.h.
 */
#include "conf_rng.h"
#include "xcheck.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends.h"
#include "crypto.h"
#include "destination.h"
#include "identity.h"
#include "pyref.h"
#include "token.h"
#include "xcheck_engine.h"

#define MAX_PT 600   /* plaintext bytes in encryption checks */
#define MAX_MSG 1024 /* message bytes in hash / signature checks */
#define TOK_CAP (32 + 16 + MAX_PT + 16 + 32)

typedef struct xc {
	rnsc_ctx *ctx; /* rnsc side: conf_ctx_for(backend), test RNG installed */
	rnsc_pyref *ref;
	const rnsc_crypto_ops *rops; /* the reference as a crypto backend, for raw primitives */
	uint64_t in;                 /* generator for test inputs */
	uint64_t fill;               /* generator for draws rnsc makes beyond the script */
	uint8_t script[128];
	size_t script_len, script_pos, unscripted;
	conf_xcheck_result *res;
	unsigned case_no;
	char dir[256]; /* scratch directory for identity files */
	unsigned files;
} xc;

/* ---- generators --------------------------------------------------------------------------- */

static void rnd(xc *x, void *p, size_t n)
{
	conf_gen_bytes(&x->in, p, n);
}

static size_t below(xc *x, size_t n)
{
	return n ? (size_t)(conf_next64(&x->in) % n) : 0;
}

/* Lengths that hit the edges more often than uniform draws would: empty, whole AES blocks,
 * around the 64-byte hash block, and the maximum. */
static size_t rnd_len(xc *x, size_t max)
{
	static const size_t edges[] = {1,  15, 16, 17, 31,  32,  33, 55,
				       56, 63, 64, 65, 127, 128, 129};
	switch (below(x, 10)) {
	case 0:
		return 0;
	case 1:
		return 16 * below(x, max / 16 + 1);
	case 2: {
		size_t e = edges[below(x, sizeof(edges) / sizeof(edges[0]))];
		return e <= max ? e : max;
	}
	case 3:
		return max;
	default:
		return below(x, max + 1);
	}
}

static int xc_rng(void *ud, uint8_t *out, size_t len)
{
	xc *x = ud;
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

/* The next rnsc_random() draws return exactly these bytes, in order. */
static void script(xc *x, const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
	memcpy(x->script, a, an);
	if (bn)
		memcpy(x->script + an, b, bn);
	x->script_len = an + bn;
	x->script_pos = 0;
	x->unscripted = 0;
}

static int script_used_exactly(const xc *x)
{
	return x->script_pos == x->script_len && x->unscripted == 0;
}

/* ---- reporting ---------------------------------------------------------------------------- */

static const char *hx(const uint8_t *p, size_t n)
{
	static char bufs[4][2 * 24 + 8];
	static unsigned k;
	char *b = bufs[k++ % 4];
	size_t shown = n < 24 ? n : 24, o = 0;
	for (size_t i = 0; i < shown; i++)
		o += (size_t)snprintf(b + o, 3, "%02x", p[i]);
	if (shown < n)
		snprintf(b + o, 8, "..");
	if (n == 0)
		snprintf(b, 8, "(empty)");
	return b;
}

/* Offset of the first differing byte, n when equal. */
static size_t first_diff(const void *a, const void *b, size_t n)
{
	const uint8_t *p = a, *q = b;
	size_t i = 0;
	while (i < n && p[i] == q[i])
		i++;
	return i;
}

static const char *en(int rc)
{
	return rc >= 0 ? "accepted" : rnsc_err_name(rc);
}

__attribute__((format(printf, 2, 3))) static int fail(xc *x, const char *fmt, ...)
{
	conf_xcheck_result *r = x->res;
	if (!r->first_disagreement[0]) {
		int n = snprintf(r->first_disagreement, sizeof(r->first_disagreement),
				 "case %u: ", x->case_no);
		va_list ap;
		va_start(ap, fmt);
		if (n > 0 && (size_t)n < sizeof(r->first_disagreement))
			vsnprintf(r->first_disagreement + n,
				  sizeof(r->first_disagreement) - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

#define EXPECT(cond, ...)                                                                          \
	do {                                                                                       \
		if (!(cond))                                                                       \
			return fail(x, __VA_ARGS__);                                               \
	} while (0)

/* Both sides returned the same bytes (rc is a length or 0 for fixed-size outputs). */
#define SAME_BYTES(what, rc_rnsc, a, rc_ref, b, n)                                                 \
	do {                                                                                       \
		int rr_ = (rc_rnsc), fr_ = (rc_ref);                                               \
		EXPECT(rr_ >= 0 && fr_ >= 0, "%s: rnsc %s, reference %s", what, en(rr_), en(fr_)); \
		size_t at_ = first_diff((a), (b), (n));                                            \
		EXPECT(at_ == (n), "%s differs at byte %zu of %zu: rnsc %s reference %s", what,    \
		       at_, (size_t)(n), hx((const uint8_t *)(a) + at_, (n)-at_),                  \
		       hx((const uint8_t *)(b) + at_, (n)-at_));                                   \
	} while (0)

#define SAME_VERDICT(what, rc_rnsc, want_rnsc, rc_ref, want_ref)                                   \
	do {                                                                                       \
		int rr_ = (rc_rnsc), fr_ = (rc_ref);                                               \
		EXPECT(rr_ == (want_rnsc) && fr_ == (want_ref),                                    \
		       "%s: rnsc %s (want %s), reference %s (want %s)", what, en(rr_),             \
		       en(want_rnsc), en(fr_), en(want_ref));                                      \
	} while (0)

/* ---- shared fixtures ---------------------------------------------------------------------- */

/* Low-order (and twist) points whose X25519 result is all zero for every clamped scalar. */
static const uint8_t low_order[7][32] = {
	{0},
	{1},
	{0xe0, 0xeb, 0x7a, 0x7c, 0x3b, 0x41, 0xb8, 0xae, 0x16, 0x56, 0xe3,
	 0xfa, 0xf1, 0x9f, 0xc4, 0x6a, 0xda, 0x09, 0x8d, 0xeb, 0x9c, 0x32,
	 0xb1, 0xfd, 0x86, 0x62, 0x05, 0x16, 0x5f, 0x49, 0xb8, 0x00},
	{0x5f, 0x9c, 0x95, 0xbc, 0xa3, 0x50, 0x8c, 0x24, 0xb1, 0xd0, 0xb1,
	 0x55, 0x9c, 0x83, 0xef, 0x5b, 0x04, 0x44, 0x5c, 0xc4, 0x58, 0x1c,
	 0x8e, 0x86, 0xd8, 0x22, 0x4e, 0xdd, 0xd0, 0x9f, 0x11, 0x57},
	{0xec, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
	{0xed, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
	{0xee, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
};

/* A low-order point; the top bit is ignored by X25519 on both sides, so set it at random. */
static void rnd_low_order(xc *x, uint8_t out[32])
{
	memcpy(out, low_order[below(x, 7)], 32);
	if (below(x, 2))
		out[31] |= 0x80;
}

/* A random identity on the rnsc side plus its 64 private bytes. */
static int rnd_identity(xc *x, rnsc_identity *id, uint8_t prv[64])
{
	rnd(x, prv, 64);
	int rc = rnsc_identity_from_private(x->ctx, id, prv, 64);
	if (rc)
		return fail(x, "rnsc_identity_from_private: %s", en(rc));
	return 0;
}

/* Length the truncation rules predict. The reference's Token refuses to look at 32 bytes or
 * fewer and otherwise computes the HMAC over whatever is there; rnsc refuses anything that is
 * not IV + whole blocks + HMAC before touching the MAC. Both reject; the codes differ by step. */
static int trunc_ref_token(size_t tlen)
{
	return tlen <= 32 ? RNSC_ERR_TRUNCATED : RNSC_ERR_AUTH;
}

static int trunc_rnsc_token(size_t tlen)
{
	return tlen <= 48 || (tlen - 48) % 16 ? RNSC_ERR_TRUNCATED : RNSC_ERR_AUTH;
}

/* rnsc AES-CBC over raw blocks with a chosen last byte, then the HMAC: a token whose MAC is
 * valid but whose padding is not. */
static int bad_padding_token(xc *x, uint8_t *tok, const uint8_t key[64], size_t blocks, uint8_t pad)
{
	uint8_t pt[16 * 8];
	rnd(x, pt, blocks * 16);
	pt[blocks * 16 - 1] = pad;
	rnd(x, tok, 16); /* iv */
	int rc = rnsc_aes256_cbc_encrypt(x->ctx, tok + 16, key + 32, tok, pt, blocks * 16);
	if (rc == 0)
		rc = rnsc_hmac_sha256(x->ctx, tok + 16 + blocks * 16, key, 32, tok,
				      16 + blocks * 16);
	return rc ? rc : (int)(16 + blocks * 16 + 32);
}

/* ---- primitives --------------------------------------------------------------------------- */

static int c_sha256(xc *x)
{
	static uint8_t msg[70000];
	size_t len = below(x, 50) == 0 ? below(x, sizeof(msg) + 1) : rnd_len(x, 2048);
	rnd(x, msg, len);
	uint8_t a[32], b[32], ta[16], tb[16];
	SAME_BYTES("sha256", rnsc_sha256(x->ctx, a, msg, len), a,
		   rnsc_pyref_full_hash(x->ref, b, msg, len), b, 32);
	SAME_BYTES("truncated_hash", rnsc_truncated_hash(x->ctx, ta, msg, len), ta,
		   rnsc_pyref_truncated_hash(x->ref, tb, msg, len), tb, 16);
	return 0;
}

static int c_sha512(xc *x)
{
	uint8_t msg[4096], a[64], b[64];
	size_t len = rnd_len(x, sizeof(msg));
	rnd(x, msg, len);
	SAME_BYTES("sha512", rnsc_sha512(x->ctx, a, msg, len), a,
		   x->rops->sha512(x->ref, b, msg, len), b, 64);
	return 0;
}

static int c_hash_stream(xc *x)
{
	uint8_t msg[4096], a[64], b[64];
	size_t len = rnd_len(x, sizeof(msg));
	rnd(x, msg, len);
	int alg = below(x, 2) ? RNSC_HASH_SHA512 : RNSC_HASH_SHA256;
	size_t dl = alg == RNSC_HASH_SHA256 ? 32 : 64;
	rnsc_hash h;
	int rc = rnsc_hash_init(x->ctx, &h, alg);
	EXPECT(rc == 0, "hash_init: %s", en(rc));
	for (size_t off = 0; off < len;) {
		size_t n = 1 + below(x, len - off < 200 ? len - off : 200);
		if ((rc = rnsc_hash_update(&h, msg + off, n)) != 0) {
			rnsc_hash_abort(&h);
			return fail(x, "hash_update: %s", en(rc));
		}
		off += n;
	}
	rc = rnsc_hash_final(&h, a);
	int rr = alg == RNSC_HASH_SHA256 ? rnsc_pyref_full_hash(x->ref, b, msg, len)
					 : x->rops->sha512(x->ref, b, msg, len);
	SAME_BYTES(alg == RNSC_HASH_SHA256 ? "streamed sha256" : "streamed sha512", rc, a, rr, b,
		   dl);
	return 0;
}

static int c_hmac(xc *x)
{
	uint8_t key[200], msg[1500], a[32], b[32];
	size_t kl = rnd_len(x, sizeof(key)), ml = rnd_len(x, sizeof(msg));
	rnd(x, key, kl);
	rnd(x, msg, ml);
	SAME_BYTES("hmac_sha256", rnsc_hmac_sha256(x->ctx, a, key, kl, msg, ml), a,
		   x->rops->hmac_sha256(x->ref, b, key, kl, msg, ml), b, 32);
	return 0;
}

static int c_hkdf(xc *x)
{
	static uint8_t a[255 * 32], b[255 * 32];
	uint8_t ikm[128], salt[100], info[100];
	size_t ol = below(x, 40) == 0 ? 1 + below(x, sizeof(a)) : 1 + below(x, 256);
	size_t il = 1 + below(x, sizeof(ikm));
	size_t sl = below(x, 4) == 0 ? 0 : rnd_len(x, sizeof(salt));
	size_t nl = below(x, 4) == 0 ? 0 : rnd_len(x, sizeof(info));
	rnd(x, ikm, il);
	rnd(x, salt, sl);
	rnd(x, info, nl);
	/* an empty salt or info may come as NULL or as a pointer with length 0 */
	const uint8_t *sp = sl == 0 && below(x, 2) ? NULL : salt;
	const uint8_t *np = nl == 0 && below(x, 2) ? NULL : info;
	SAME_BYTES("hkdf_sha256", rnsc_hkdf_sha256(x->ctx, a, ol, ikm, il, sp, sl, np, nl), a,
		   x->rops->hkdf_sha256(x->ref, b, ol, ikm, il, sp, sl, np, nl), b, ol);
	return 0;
}

static int c_aes(xc *x)
{
	uint8_t key[32], iv[16], pt[1024], a[1024], b[1024], back[1024];
	size_t len = 16 * (1 + below(x, 64));
	rnd(x, key, 32);
	rnd(x, iv, 16);
	rnd(x, pt, len);
	SAME_BYTES("aes256_cbc encrypt", rnsc_aes256_cbc_encrypt(x->ctx, a, key, iv, pt, len), a,
		   x->rops->aes256_cbc_encrypt(x->ref, b, key, iv, pt, len), b, len);
	SAME_BYTES("aes256_cbc decrypt of the reference's ciphertext",
		   rnsc_aes256_cbc_decrypt(x->ctx, back, key, iv, b, len), back, 0, pt, len);
	SAME_BYTES("reference decrypt of rnsc's ciphertext",
		   x->rops->aes256_cbc_decrypt(x->ref, back, key, iv, a, len), back, 0, pt, len);
	return 0;
}

static int c_x25519(xc *x)
{
	uint8_t priv[32], peer_priv[32], peer[32], pa[32], pb[32], a[32], b[32];
	rnd(x, priv, 32);
	rnd(x, peer_priv, 32);
	SAME_BYTES("x25519 public", rnsc_x25519_public(x->ctx, pa, priv), pa,
		   x->rops->x25519_public(x->ref, pb, priv), pb, 32);
	if (below(x, 8) == 0) {
		rnd_low_order(x, peer);
		SAME_VERDICT("x25519 with a low-order point", rnsc_x25519(x->ctx, a, priv, peer),
			     RNSC_ERR_LOW_ORDER, x->rops->x25519(x->ref, b, priv, peer),
			     RNSC_ERR_LOW_ORDER);
		return 0;
	}
	int rc = rnsc_x25519_public(x->ctx, peer, peer_priv);
	EXPECT(rc == 0, "x25519_public: %s", en(rc));
	SAME_BYTES("x25519 shared secret", rnsc_x25519(x->ctx, a, priv, peer), a,
		   x->rops->x25519(x->ref, b, priv, peer), b, 32);
	return 0;
}

static int c_ed25519(xc *x)
{
	uint8_t seed[32], pa[32], pb[32], sa[64], sb[64], msg[MAX_MSG];
	size_t ml = rnd_len(x, sizeof(msg));
	rnd(x, seed, 32);
	rnd(x, msg, ml);
	SAME_BYTES("ed25519 public", rnsc_ed25519_public(x->ctx, pa, seed), pa,
		   x->rops->ed25519_public(x->ref, pb, seed), pb, 32);
	SAME_BYTES("ed25519 signature", rnsc_ed25519_sign(x->ctx, sa, seed, pa, msg, ml), sa,
		   x->rops->ed25519_sign(x->ref, sb, seed, pb, msg, ml), sb, 64);
	/* each side verifies the other's signature; corrupted ones: c_neg_signature */
	SAME_VERDICT("ed25519 verify", rnsc_ed25519_verify(x->ctx, sb, pa, msg, ml), 0,
		     x->rops->ed25519_verify(x->ref, sa, pb, msg, ml), 0);
	return 0;
}

/* ---- identities --------------------------------------------------------------------------- */

static int c_identity_keys(xc *x)
{
	rnsc_identity id;
	uint8_t prv[64], pub[64], rpub[64], rhash[16];
	if (rnd_identity(x, &id, prv))
		return -1;
	rnsc_identity_public_bytes(&id, pub);
	int rc = rnsc_pyref_identity_public(x->ref, rpub, rhash, prv, 64);
	rnsc_identity_free(&id);
	SAME_BYTES("public key from private", 0, pub, rc, rpub, 64);
	SAME_BYTES("identity hash", 0, id.hash, rc, rhash, 16);
	/* ratchets are bare X25519 keys; use the X25519 half as one */
	uint8_t ra[32], rb[32], ia[10], ib[10];
	SAME_BYTES("ratchet public", rnsc_ratchet_public(x->ctx, ra, prv), ra,
		   rnsc_pyref_ratchet_public(x->ref, rb, prv), rb, 32);
	SAME_BYTES("ratchet id", rnsc_ratchet_id(x->ctx, ia, ra), ia,
		   rnsc_pyref_ratchet_id(x->ref, ib, rb), ib, 10);
	return 0;
}

static int c_identity_hash(xc *x)
{
	rnsc_identity id;
	uint8_t pub[64], h[16];
	rnd(x, pub, 64);
	int rc = rnsc_identity_from_public(x->ctx, &id, pub, 64);
	SAME_BYTES("identity hash from public key", rc, id.hash,
		   rnsc_pyref_identity_hash(x->ref, h, pub, 64), h, 16);
	return 0;
}

/* rnsc encrypts with a scripted ephemeral key and IV; the reference decrypts it, and encrypts
 * the same plaintext with the same randomness to the same bytes. */
static int encrypt_rnsc_to_ref(xc *x, const rnsc_identity *id, const uint8_t prv[64],
			       const uint8_t *ratchet_pub, const uint8_t (*ratchets)[32],
			       size_t n_ratchets, int enforce, int want_used)
{
	uint8_t pt[MAX_PT], eph[32], iv[16], pub[64];
	uint8_t tok[TOK_CAP], rtok[TOK_CAP], back[TOK_CAP];
	size_t len = rnd_len(x, MAX_PT);
	rnd(x, pt, len);
	rnd(x, eph, 32);
	rnd(x, iv, 16);
	rnsc_identity_public_bytes(id, pub);
	script(x, eph, 32, iv, 16);
	int n = rnsc_identity_encrypt(id, tok, sizeof(tok), pt, len, ratchet_pub);
	EXPECT(n >= 0, "rnsc encrypt: %s", en(n));
	EXPECT(script_used_exactly(x), "rnsc drew %zu of 48 scripted random bytes (+%zu more)",
	       x->script_pos, x->unscripted);
	EXPECT((size_t)n == rnsc_identity_token_len(len), "token length %d for %zu bytes", n, len);
	int m = rnsc_pyref_identity_encrypt(x->ref, rtok, sizeof(rtok), pub, 64, pt, len,
					    ratchet_pub, ratchet_pub ? 32 : 0, eph, iv);
	EXPECT(m == n, "token lengths: rnsc %d, reference %s", n, m < 0 ? en(m) : "other");
	EXPECT(memcmp(tok, rtok, (size_t)n) == 0, "tokens differ: rnsc %s reference %s",
	       hx(tok, (size_t)n), hx(rtok, (size_t)n));
	int used = -2;
	int d = rnsc_pyref_identity_decrypt(x->ref, back, sizeof(back), prv, 64, tok, (size_t)n,
					    ratchets, n_ratchets, enforce, &used);
	if (want_used == -2) { /* enforced ratchets and the identity key was used */
		SAME_VERDICT("reference decrypt, ratchets enforced", RNSC_ERR_DECRYPT,
			     RNSC_ERR_DECRYPT, d, RNSC_ERR_DECRYPT);
		return 0;
	}
	EXPECT(d == (int)len && memcmp(back, pt, len) == 0, "reference decrypt of rnsc's token: %s",
	       d < 0 ? en(d) : hx(back, (size_t)d));
	EXPECT(used == want_used, "reference used ratchet %d, expected %d", used, want_used);
	return 0;
}

/* The reference encrypts with chosen randomness; rnsc decrypts and reproduces the bytes. */
static int encrypt_ref_to_rnsc(xc *x, const rnsc_identity *id, const uint8_t *ratchet_pub,
			       const uint8_t (*ratchets)[32], size_t n_ratchets, int enforce,
			       int want_used)
{
	uint8_t pt[MAX_PT], eph[32], iv[16], pub[64];
	uint8_t tok[TOK_CAP], rtok[TOK_CAP], back[TOK_CAP];
	size_t len = rnd_len(x, MAX_PT);
	rnd(x, pt, len);
	rnd(x, eph, 32);
	rnd(x, iv, 16);
	rnsc_identity_public_bytes(id, pub);
	int m = rnsc_pyref_identity_encrypt(x->ref, rtok, sizeof(rtok), pub, 64, pt, len,
					    ratchet_pub, ratchet_pub ? 32 : 0, eph, iv);
	EXPECT(m > 0, "reference encrypt: %s", en(m));
	int used = -2;
	int d = rnsc_identity_decrypt(id, back, sizeof(back), rtok, (size_t)m, ratchets, n_ratchets,
				      enforce, &used);
	if (want_used == -2) {
		SAME_VERDICT("rnsc decrypt, ratchets enforced", d, RNSC_ERR_DECRYPT,
			     RNSC_ERR_DECRYPT, RNSC_ERR_DECRYPT);
	} else {
		EXPECT(d == (int)len && memcmp(back, pt, len) == 0,
		       "rnsc decrypt of the reference's token: %s",
		       d < 0 ? en(d) : hx(back, (size_t)d));
		EXPECT(used == want_used, "rnsc used ratchet %d, expected %d", used, want_used);
	}
	script(x, eph, 32, iv, 16);
	int n = rnsc_identity_encrypt(id, tok, sizeof(tok), pt, len, ratchet_pub);
	EXPECT(n == m && script_used_exactly(x), "rnsc encrypt with the same randomness: %s",
	       en(n));
	EXPECT(memcmp(tok, rtok, (size_t)n) == 0, "tokens differ: rnsc %s reference %s",
	       hx(tok, (size_t)n), hx(rtok, (size_t)n));
	return 0;
}

static int c_encrypt_rnsc_ref(xc *x)
{
	rnsc_identity id;
	uint8_t prv[64];
	if (rnd_identity(x, &id, prv))
		return -1;
	int rc = encrypt_rnsc_to_ref(x, &id, prv, NULL, NULL, 0, 0, -1);
	rnsc_identity_free(&id);
	return rc;
}

static int c_encrypt_ref_rnsc(xc *x)
{
	rnsc_identity id;
	uint8_t prv[64];
	if (rnd_identity(x, &id, prv))
		return -1;
	int rc = encrypt_ref_to_rnsc(x, &id, NULL, NULL, 0, 0, -1);
	rnsc_identity_free(&id);
	return rc;
}

/* 1..4 ratchets; the target is one of them or (index -1) the identity key itself. With
 * enforcement a token for the identity key must be refused (want -2). */
static int ratchet_case(xc *x, int rnsc_encrypts)
{
	rnsc_identity id;
	uint8_t prv[64], ratchets[4][32], rpub[32];
	if (rnd_identity(x, &id, prv))
		return -1;
	size_t n = 1 + below(x, 4);
	rnd(x, ratchets, sizeof(ratchets));
	int target = (int)below(x, n + 1) - 1;
	int enforce = (int)below(x, 2);
	int rc = 0;
	if (target >= 0) {
		/* the ratchet public key, as each side computes it, must agree first */
		uint8_t other[32];
		int a = rnsc_ratchet_public(x->ctx, rpub, ratchets[target]);
		int b = rnsc_pyref_ratchet_public(x->ref, other, ratchets[target]);
		if (a || b || memcmp(rpub, other, 32) != 0)
			rc = fail(x, "ratchet public keys: rnsc %s reference %s", hx(rpub, 32),
				  hx(other, 32));
	}
	int want = target >= 0 ? target : enforce ? -2 : -1;
	const uint8_t *rp = target >= 0 ? rpub : NULL;
	if (rc == 0)
		rc = rnsc_encrypts
			     ? encrypt_rnsc_to_ref(x, &id, prv, rp, (const uint8_t(*)[32])ratchets,
						   n, enforce, want)
			     : encrypt_ref_to_rnsc(x, &id, rp, (const uint8_t(*)[32])ratchets, n,
						   enforce, want);
	rnsc_identity_free(&id);
	return rc;
}

static int c_ratchet_rnsc_ref(xc *x)
{
	return ratchet_case(x, 1);
}

static int c_ratchet_ref_rnsc(xc *x)
{
	return ratchet_case(x, 0);
}

/* Ed25519 is deterministic, so both sides must produce the very same signature. */
static int sign_case(xc *x, int rnsc_signs)
{
	rnsc_identity id;
	uint8_t prv[64], pub[64], msg[MAX_MSG], a[64], b[64];
	if (rnd_identity(x, &id, prv))
		return -1;
	rnsc_identity_public_bytes(&id, pub);
	size_t ml = rnd_len(x, sizeof(msg));
	rnd(x, msg, ml);
	int ra = rnsc_identity_sign(&id, a, msg, ml);
	int rb = rnsc_pyref_identity_sign(x->ref, b, prv, 64, msg, ml);
	int v = rnsc_signs ? rnsc_pyref_identity_validate(x->ref, pub, 64, a, 64, msg, ml)
			   : rnsc_identity_verify(&id, b, 64, msg, ml);
	rnsc_identity_free(&id);
	SAME_BYTES("signature", ra, a, rb, b, 64);
	EXPECT(v == 0, "%s rejects the %s signature: %s", rnsc_signs ? "reference" : "rnsc",
	       rnsc_signs ? "rnsc" : "reference", en(v));
	return 0;
}

static int c_sign_rnsc_ref(xc *x)
{
	return sign_case(x, 1);
}

static int c_sign_ref_rnsc(xc *x)
{
	return sign_case(x, 0);
}

/* ---- names and destinations --------------------------------------------------------------- */

/* A random name part: ASCII and multi-byte UTF-8, never a dot unless asked for; a requested
 * dot goes between pieces, so the part stays valid UTF-8. */
static void rnd_part(xc *x, char *out, size_t cap, int with_dot)
{
	static const char *const pieces[] = {"a", "b", "x", "z", "Q", "0",  "7", "_",   "-", "~",
					     " ", "é", "ß", "λ", "ж", "中", "😀", "app", "tx"};
	size_t n = below(x, 12), o = 0;
	size_t dot_at = with_dot ? below(x, n + 1) : (size_t)-1;
	out[0] = '\0';
	for (size_t i = 0; i <= n; i++) {
		if (i == dot_at && o + 2 < cap) {
			out[o++] = '.';
			out[o] = '\0';
		}
		if (i == n)
			break;
		const char *p = pieces[below(x, sizeof(pieces) / sizeof(pieces[0]))];
		size_t l = strlen(p);
		if (o + l + 2 >= cap)
			break;
		memcpy(out + o, p, l + 1);
		o += l;
	}
}

typedef struct rname {
	char app[64];
	char asp[4][64];
	const char *aspects[4];
	size_t n;
	int dotted; /* a dot was put somewhere: both sides must refuse the name */
} rname;

static void rnd_name(xc *x, rname *nm, int allow_dot)
{
	nm->n = below(x, 5);
	nm->dotted = allow_dot && below(x, 10) == 0;
	size_t dot_at = below(x, nm->n + 1); /* 0 = app name, k = aspect k-1 */
	rnd_part(x, nm->app, sizeof(nm->app), nm->dotted && dot_at == 0);
	if (!nm->app[0] && below(x, 4))
		strcpy(nm->app, "rnsc");
	for (size_t i = 0; i < nm->n; i++) {
		rnd_part(x, nm->asp[i], sizeof(nm->asp[i]), nm->dotted && dot_at == i + 1);
		nm->aspects[i] = nm->asp[i];
	}
}

static int c_names(xc *x)
{
	rname nm;
	rnd_name(x, &nm, 1);
	uint8_t ih[16];
	const uint8_t *idh = below(x, 2) ? (rnd(x, ih, 16), ih) : NULL;
	char a[512], b[512];
	int ra = rnsc_destination_expand_name(a, sizeof(a), idh, nm.app, nm.aspects, nm.n);
	int rb = rnsc_pyref_expand_name(x->ref, b, sizeof(b), idh, nm.app, nm.aspects, nm.n);
	uint8_t ha[10], hb[10];
	int sa = rnsc_name_hash(x->ctx, ha, nm.app, nm.aspects, nm.n);
	int sb = rnsc_pyref_name_hash(x->ref, hb, nm.app, nm.aspects, nm.n);
	if (nm.dotted) {
		SAME_VERDICT("expand_name with a dot", ra, RNSC_ERR_NAME, rb, RNSC_ERR_NAME);
		SAME_VERDICT("name hash with a dot", sa, RNSC_ERR_NAME, sb, RNSC_ERR_NAME);
		return 0;
	}
	EXPECT(ra >= 0 && rb >= 0 && strcmp(a, b) == 0,
	       "expanded names: rnsc '%s' (%s), "
	       "reference '%s' (%s)",
	       ra >= 0 ? a : "", en(ra), rb >= 0 ? b : "", en(rb));
	SAME_BYTES("name hash", sa, ha, sb, hb, 10);
	return 0;
}

static int c_destinations(xc *x)
{
	rname nm;
	rnd_name(x, &nm, 0);
	rnsc_identity id;
	uint8_t prv[64], pub[64], rhash[16], a[16], b[16];
	if (rnd_identity(x, &id, prv))
		return -1;
	rnsc_identity_public_bytes(&id, pub);
	rnsc_identity_free(&id);
	/* SINGLE: with the identity hash the reference computes from the public key */
	int rc = rnsc_pyref_identity_hash(x->ref, rhash, pub, 64);
	SAME_BYTES("identity hash", 0, id.hash, rc, rhash, 16);
	SAME_BYTES("SINGLE destination hash",
		   rnsc_destination_hash(x->ctx, a, id.hash, nm.app, nm.aspects, nm.n), a,
		   rnsc_pyref_destination_hash(x->ref, b, rhash, nm.app, nm.aspects, nm.n), b, 16);
	/* GROUP and PLAIN hash the name alone (no identity goes into the address) */
	SAME_BYTES("GROUP/PLAIN destination hash",
		   rnsc_destination_hash(x->ctx, a, NULL, nm.app, nm.aspects, nm.n), a,
		   rnsc_pyref_destination_hash(x->ref, b, NULL, nm.app, nm.aspects, nm.n), b, 16);
	char full[512];
	int fl = rnsc_destination_expand_name(full, sizeof(full), NULL, nm.app, nm.aspects, nm.n);
	EXPECT(fl >= 0, "expand_name: %s", en(fl));
	const uint8_t *idh = below(x, 2) ? id.hash : NULL;
	SAME_BYTES("destination hash from the full name",
		   rnsc_destination_hash_from_name(x->ctx, a, idh, full), a,
		   rnsc_pyref_destination_hash_from_name(x->ref, b, idh, full), b, 16);
	return 0;
}

/* ---- GROUP tokens ------------------------------------------------------------------------- */

static int group_case(xc *x, int rnsc_encrypts)
{
	uint8_t key[64], iv[16], pt[MAX_PT], a[TOK_CAP], b[TOK_CAP], back[TOK_CAP];
	size_t len = rnd_len(x, MAX_PT);
	rnd(x, key, 64);
	rnd(x, iv, 16);
	rnd(x, pt, len);
	rnsc_token t;
	int rc = rnsc_token_init(&t, x->ctx, key, 64);
	EXPECT(rc == 0, "token_init: %s", en(rc));
	script(x, iv, 16, NULL, 0);
	int n = rnsc_token_encrypt(&t, a, sizeof(a), pt, len);
	int used = script_used_exactly(x);
	int m = rnsc_pyref_group_encrypt(x->ref, b, sizeof(b), key, 64, iv, pt, len);
	int d = rnsc_encrypts
			? rnsc_pyref_group_decrypt(x->ref, back, sizeof(back), key, 64, a,
						   n > 0 ? (size_t)n : 0)
			: rnsc_token_decrypt(&t, back, sizeof(back), b, m > 0 ? (size_t)m : 0);
	rnsc_token_free(&t);
	EXPECT(used, "rnsc drew %zu of 16 scripted IV bytes (+%zu more)", x->script_pos,
	       x->unscripted);
	EXPECT(n > 0 && n == m, "token lengths: rnsc %d (%s), reference %d (%s)", n, en(n), m,
	       en(m));
	EXPECT(memcmp(a, b, (size_t)n) == 0, "GROUP tokens differ: rnsc %s reference %s",
	       hx(a, (size_t)n), hx(b, (size_t)n));
	EXPECT(d == (int)len && memcmp(back, pt, len) == 0, "%s decrypt: %s",
	       rnsc_encrypts ? "reference" : "rnsc", d < 0 ? en(d) : hx(back, (size_t)d));
	return 0;
}

static int c_group_rnsc_ref(xc *x)
{
	return group_case(x, 1);
}

static int c_group_ref_rnsc(xc *x)
{
	return group_case(x, 0);
}

/* ---- identity files ----------------------------------------------------------------------- */

static int file_case(xc *x, int rnsc_writes)
{
	char path[320];
	snprintf(path, sizeof(path), "%s/id%u", x->dir, x->files++);
	rnsc_identity id, back;
	uint8_t prv[64], got[64];
	if (rnd_identity(x, &id, prv))
		return -1;
	int kind = (int)below(x, 10);
	int rc = 0;
	if (kind == 0) {
		/* a file of the wrong size: both refuse it as a key of the wrong length */
		uint8_t content[65];
		size_t sz = below(x, 2) ? 63 : 65;
		memcpy(content, prv, 64);
		content[64] = 0x5a;
		FILE *f = fopen(path, "wb");
		int ok = f && fwrite(content, 1, sz, f) == sz;
		if (f && fclose(f) != 0)
			ok = 0;
		if (!ok)
			rc = fail(x, "cannot write %s: %s", path, strerror(errno));
		else {
			int a = rnsc_identity_load_file(x->ctx, &back, path);
			int b = rnsc_pyref_identity_from_file(x->ref, got, path);
			if (a != RNSC_ERR_KEYLEN || b != RNSC_ERR_KEYLEN)
				rc = fail(x, "%zu-byte identity file: rnsc %s, reference %s", sz,
					  en(a), en(b));
		}
	} else if (kind == 1) {
		int a = rnsc_identity_load_file(x->ctx, &back, path);
		int b = rnsc_pyref_identity_from_file(x->ref, got, path);
		if (a != RNSC_ERR_NOENT || b != RNSC_ERR_NOENT)
			rc = fail(x, "missing identity file: rnsc %s, reference %s", en(a), en(b));
	} else if (rnsc_writes) {
		int a = rnsc_identity_save_file(&id, path);
		int b = a ? a : rnsc_pyref_identity_from_file(x->ref, got, path);
		if (a || b || memcmp(got, prv, 64) != 0)
			rc = fail(x, "rnsc saves, reference loads: save %s, load %s, key %s", en(a),
				  en(b), b ? "-" : hx(got, 64));
	} else {
		int a = rnsc_pyref_identity_to_file(x->ref, prv, path);
		int b = a ? a : rnsc_identity_load_file(x->ctx, &back, path);
		uint8_t bp[64] = {0};
		if (!a && !b)
			(void)rnsc_identity_private_bytes(&back, bp);
		if (a || b || memcmp(bp, prv, 64) != 0 || memcmp(back.hash, id.hash, 16) != 0)
			rc = fail(x, "reference saves, rnsc loads: save %s, load %s", en(a), en(b));
		if (!b)
			rnsc_identity_free(&back);
	}
	unlink(path);
	rnsc_identity_free(&id);
	return rc;
}

static int c_file_rnsc_ref(xc *x)
{
	return file_case(x, 1);
}

static int c_file_ref_rnsc(xc *x)
{
	return file_case(x, 0);
}

/* ---- negative cases ------------------------------------------------------------------------ */

/* Mutated GROUP tokens, each kind with the codes both sides must give. */
static int c_neg_group(xc *x)
{
	uint8_t key[96], pt[MAX_PT], tok[TOK_CAP], back[TOK_CAP];
	size_t len = rnd_len(x, 200);
	rnd(x, key, sizeof(key));
	rnd(x, pt, len);
	rnsc_token t;
	int rc = rnsc_token_init(&t, x->ctx, key, 64);
	EXPECT(rc == 0, "token_init: %s", en(rc));
	int n = rnsc_token_encrypt(&t, tok, sizeof(tok), pt, len);
	EXPECT(n > 0, "token_encrypt: %s", en(n));
	int kind = (int)below(x, 4), a, b;
	switch (kind) {
	case 0: { /* truncated */
		size_t l = below(x, (size_t)n);
		a = rnsc_token_decrypt(&t, back, sizeof(back), tok, l);
		b = rnsc_pyref_group_decrypt(x->ref, back, sizeof(back), key, 64, tok, l);
		rnsc_token_free(&t);
		SAME_VERDICT("truncated GROUP token", a, trunc_rnsc_token(l), b,
			     trunc_ref_token(l));
		return 0;
	}
	case 1: /* any bit of IV, ciphertext or HMAC */
		tok[below(x, (size_t)n)] ^= (uint8_t)(1u << below(x, 8));
		a = rnsc_token_decrypt(&t, back, sizeof(back), tok, (size_t)n);
		b = rnsc_pyref_group_decrypt(x->ref, back, sizeof(back), key, 64, tok, (size_t)n);
		rnsc_token_free(&t);
		SAME_VERDICT("GROUP token with a flipped bit", a, RNSC_ERR_AUTH, b, RNSC_ERR_AUTH);
		return 0;
	case 2: {
		/* Valid HMAC, bad padding. The reference's PKCS7.unpad only checks that the last
		 * byte is at most 16; rnsc also refuses 0 and pad bytes that are not all equal
		 * (strict PKCS#7), which the reference would accept and strip. Only a last byte
		 * above 16 is refused by both, so that is the both-sides case. */
		uint8_t pad = (uint8_t)(17 + below(x, 239));
		int l = bad_padding_token(x, tok, key, 1 + below(x, 8), pad);
		EXPECT(l > 0, "building a bad-padding token: %s", en(l));
		a = rnsc_token_decrypt(&t, back, sizeof(back), tok, (size_t)l);
		b = rnsc_pyref_group_decrypt(x->ref, back, sizeof(back), key, 64, tok, (size_t)l);
		rnsc_token_free(&t);
		SAME_VERDICT("GROUP token with pad byte > 16", a, RNSC_ERR_PADDING, b,
			     RNSC_ERR_PADDING);
		return 0;
	}
	default: {
		/* Keys of a wrong length. 32 bytes is not among them: the reference takes those
		 * as AES-128 keys, rnsc supports AES-256 tokens only (token.h). */
		static const size_t bad[] = {0, 1, 16, 31, 33, 48, 63, 65, 96};
		size_t kl = bad[below(x, sizeof(bad) / sizeof(bad[0]))];
		rnsc_token t2;
		rnsc_token_free(&t);
		a = rnsc_token_init(&t2, x->ctx, key, kl);
		b = rnsc_pyref_group_decrypt(x->ref, back, sizeof(back), key, kl, tok, (size_t)n);
		int c = rnsc_pyref_group_encrypt(x->ref, back, sizeof(back), key, kl, NULL, pt,
						 len);
		SAME_VERDICT("GROUP key of a wrong length (decrypt)", a, RNSC_ERR_KEYLEN, b,
			     RNSC_ERR_KEYLEN);
		SAME_VERDICT("GROUP key of a wrong length (encrypt)", a, RNSC_ERR_KEYLEN, c,
			     RNSC_ERR_KEYLEN);
		return 0;
	}
	}
}

/* Mutated identity tokens and keys. */
static int c_neg_identity(xc *x)
{
	rnsc_identity id, other;
	uint8_t prv[64], prv2[64], pub[64], pt[200], tok[TOK_CAP], back[TOK_CAP];
	if (rnd_identity(x, &id, prv))
		return -1;
	if (rnd_identity(x, &other, prv2)) {
		rnsc_identity_free(&id);
		return -1;
	}
	rnsc_identity_public_bytes(&id, pub);
	size_t len = rnd_len(x, sizeof(pt));
	rnd(x, pt, len);
	int n = rnsc_identity_encrypt(&id, tok, sizeof(tok), pt, len, NULL);
	int kind = (int)below(x, 8), a = 0, b = 0, rc = 0;
	const char *what = "";
	int wa = 0, wb = 0;
	if (n <= 0) {
		rc = fail(x, "rnsc encrypt: %s", en(n));
		goto out;
	}
	switch (kind) {
	case 0: { /* truncated: ephemeral key + Token, see the truncation rules */
		size_t l = below(x, (size_t)n);
		what = "truncated identity token";
		a = rnsc_identity_decrypt(&id, back, sizeof(back), tok, l, NULL, 0, 0, NULL);
		b = rnsc_pyref_identity_decrypt(x->ref, back, sizeof(back), prv, 64, tok, l, NULL,
						0, 0, NULL);
		wa = l <= 32 ? RNSC_ERR_TRUNCATED : trunc_rnsc_token(l - 32);
		wb = l <= 32 ? RNSC_ERR_TRUNCATED : trunc_ref_token(l - 32);
		break;
	}
	case 1: /* a bit of IV, ciphertext or HMAC */
		tok[32 + below(x, (size_t)n - 32)] ^= (uint8_t)(1u << below(x, 8));
		what = "identity token with a flipped bit";
		a = rnsc_identity_decrypt(&id, back, sizeof(back), tok, (size_t)n, NULL, 0, 0,
					  NULL);
		b = rnsc_pyref_identity_decrypt(x->ref, back, sizeof(back), prv, 64, tok, (size_t)n,
						NULL, 0, 0, NULL);
		wa = wb = RNSC_ERR_AUTH;
		break;
	case 2: { /* valid HMAC, pad byte > 16 (see c_neg_group for why only that) */
		uint8_t eph[32], shared[32], key[64];
		rnd(x, eph, 32);
		int r = rnsc_x25519_public(x->ctx, tok, eph);
		if (!r)
			r = rnsc_x25519(x->ctx, shared, eph, id.x_pub);
		if (!r)
			r = rnsc_hkdf_sha256(x->ctx, key, 64, shared, 32, id.hash, 16, NULL, 0);
		int l = r ? r
			  : bad_padding_token(x, tok + 32, key, 1 + below(x, 8),
					      (uint8_t)(17 + below(x, 239)));
		if (l <= 0) {
			rc = fail(x, "building a bad-padding identity token: %s", en(l));
			goto out;
		}
		what = "identity token with pad byte > 16";
		a = rnsc_identity_decrypt(&id, back, sizeof(back), tok, (size_t)l + 32, NULL, 0, 0,
					  NULL);
		b = rnsc_pyref_identity_decrypt(x->ref, back, sizeof(back), prv, 64, tok,
						(size_t)l + 32, NULL, 0, 0, NULL);
		wa = wb = RNSC_ERR_PADDING;
		break;
	}
	case 3: { /* the ephemeral key replaced by a low-order point, with or without ratchets */
		uint8_t r[2][32];
		size_t nr = below(x, 3);
		rnd(x, r, sizeof(r));
		rnd_low_order(x, tok);
		what = "identity token from a low-order point";
		a = rnsc_identity_decrypt(&id, back, sizeof(back), tok, (size_t)n,
					  (const uint8_t(*)[32])r, nr, 0, NULL);
		b = rnsc_pyref_identity_decrypt(x->ref, back, sizeof(back), prv, 64, tok, (size_t)n,
						(const uint8_t(*)[32])r, nr, 0, NULL);
		wa = wb = RNSC_ERR_LOW_ORDER;
		break;
	}
	case 4: { /* encrypting to a low-order ratchet */
		uint8_t lo[32];
		rnd_low_order(x, lo);
		what = "encrypt to a low-order ratchet key";
		a = rnsc_identity_encrypt(&id, back, sizeof(back), pt, len, lo);
		b = rnsc_pyref_identity_encrypt(x->ref, back, sizeof(back), pub, 64, pt, len, lo,
						32, NULL, NULL);
		wa = wb = RNSC_ERR_LOW_ORDER;
		break;
	}
	case 5: { /* private keys of a wrong length */
		static const size_t bad[] = {0, 31, 32, 33, 63, 65, 96, 128};
		size_t kl = bad[below(x, sizeof(bad) / sizeof(bad[0]))];
		uint8_t big[128], p1[64], h1[16];
		rnsc_identity tmp;
		rnd(x, big, sizeof(big));
		what = "private key of a wrong length";
		a = rnsc_identity_from_private(x->ctx, &tmp, big, kl);
		b = rnsc_pyref_identity_public(x->ref, p1, h1, big, kl);
		wa = wb = RNSC_ERR_KEYLEN;
		break;
	}
	case 6: { /* public keys of a wrong length */
		static const size_t bad[] = {0, 31, 32, 33, 63, 65, 96, 128};
		size_t kl = bad[below(x, sizeof(bad) / sizeof(bad[0]))];
		uint8_t big[128], h1[16];
		rnsc_identity tmp;
		rnd(x, big, sizeof(big));
		what = "public key of a wrong length";
		a = rnsc_identity_from_public(x->ctx, &tmp, big, kl);
		b = rnsc_pyref_identity_hash(x->ref, h1, big, kl);
		wa = wb = RNSC_ERR_KEYLEN;
		break;
	}
	default: /* a token for someone else */
		what = "identity token for another identity";
		a = rnsc_identity_decrypt(&other, back, sizeof(back), tok, (size_t)n, NULL, 0, 0,
					  NULL);
		b = rnsc_pyref_identity_decrypt(x->ref, back, sizeof(back), prv2, 64, tok,
						(size_t)n, NULL, 0, 0, NULL);
		wa = wb = RNSC_ERR_AUTH;
		break;
	}
	if (a != wa || b != wb)
		rc = fail(x, "%s: rnsc %s (want %s), reference %s (want %s)", what, en(a), en(wa),
			  en(b), en(wb));
out:
	rnsc_identity_free(&id);
	rnsc_identity_free(&other);
	return rc;
}

static int c_neg_signature(xc *x)
{
	rnsc_identity id, other;
	uint8_t prv[64], prv2[64], pub[64], pub2[64], msg[MAX_MSG + 1], sig[80];
	if (rnd_identity(x, &id, prv))
		return -1;
	if (rnd_identity(x, &other, prv2)) {
		rnsc_identity_free(&id);
		return -1;
	}
	rnsc_identity_public_bytes(&id, pub);
	rnsc_identity_public_bytes(&other, pub2);
	size_t ml = rnd_len(x, MAX_MSG), sl = 64;
	rnd(x, msg, ml);
	rnd(x, sig + 64, sizeof(sig) - 64);
	int rc = rnsc_identity_sign(&id, sig, msg, ml);
	const rnsc_identity *vid = &id;
	const uint8_t *vpub = pub;
	const char *what = "";
	if (rc) {
		rc = fail(x, "rnsc sign: %s", en(rc));
		goto out;
	}
	switch (below(x, 4)) {
	case 0:
		sig[below(x, 64)] ^= (uint8_t)(1u << below(x, 8));
		what = "corrupted signature";
		break;
	case 1:
		if (ml == 0)
			msg[ml++] = 0;
		else
			msg[below(x, ml)] ^= (uint8_t)(1u << below(x, 8));
		what = "signature over another message";
		break;
	case 2:
		sl = below(x, 2) ? below(x, 64) : 65 + below(x, sizeof(sig) - 65);
		what = "signature of a wrong length";
		break;
	default:
		vid = &other;
		vpub = pub2;
		what = "signature checked with another identity's key";
		break;
	}
	int a = rnsc_identity_verify(vid, sig, sl, msg, ml);
	int b = rnsc_pyref_identity_validate(x->ref, vpub, 64, sig, sl, msg, ml);
	if (a != RNSC_ERR_SIGNATURE || b != RNSC_ERR_SIGNATURE)
		rc = fail(x, "%s (%zu bytes): rnsc %s, reference %s", what, sl, en(a), en(b));
out:
	rnsc_identity_free(&id);
	rnsc_identity_free(&other);
	return rc;
}

/* ---- the ffi swap: the reference's own Identity code on rnsc's crypto ---------------------- */

typedef struct swap_case {
	uint8_t prv[64], pub[64], hash[16], eph[32], iv[16];
	uint8_t pt[256], msg[256], tok[32 + 16 + 256 + 16 + 32], sig[64];
	size_t pt_len, msg_len;
	int tok_len;
} swap_case;

static int swap_compare(xc *x, const swap_case *c)
{
	uint8_t pub[64], hash[16], tok[sizeof(c->tok)], sig[64], back[sizeof(c->tok)];
	int rc = rnsc_pyref_identity_public(x->ref, pub, hash, c->prv, 64);
	SAME_BYTES("swapped public key", rc, pub, 0, c->pub, 64);
	SAME_BYTES("swapped identity hash", rc, hash, 0, c->hash, 16);
	int n = rnsc_pyref_identity_encrypt(x->ref, tok, sizeof(tok), c->pub, 64, c->pt, c->pt_len,
					    NULL, 0, c->eph, c->iv);
	EXPECT(n == c->tok_len && memcmp(tok, c->tok, (size_t)n) == 0,
	       "swapped encrypt: %s, unswapped %s", n < 0 ? en(n) : hx(tok, (size_t)n),
	       hx(c->tok, (size_t)c->tok_len));
	SAME_BYTES("swapped signature",
		   rnsc_pyref_identity_sign(x->ref, sig, c->prv, 64, c->msg, c->msg_len), sig, 0,
		   c->sig, 64);
	int d = rnsc_pyref_identity_decrypt(x->ref, back, sizeof(back), c->prv, 64, c->tok,
					    (size_t)c->tok_len, NULL, 0, 0, NULL);
	EXPECT(d == (int)c->pt_len && memcmp(back, c->pt, c->pt_len) == 0, "swapped decrypt: %s",
	       en(d));
	int v = rnsc_pyref_identity_validate(x->ref, c->pub, 64, c->sig, 64, c->msg, c->msg_len);
	EXPECT(v == 0, "swapped validate: %s", en(v));
	/* and the swapped crypto still rejects what it must (every fourth case: rejections cost
	 * the reference a replay, and the negative checks cover them in depth) */
	if (x->case_no % 4)
		return 0;
	uint8_t bad[sizeof(c->tok)];
	memcpy(bad, c->tok, (size_t)c->tok_len);
	bad[32 + below(x, (size_t)c->tok_len - 32)] ^= 1;
	d = rnsc_pyref_identity_decrypt(x->ref, back, sizeof(back), c->prv, 64, bad,
					(size_t)c->tok_len, NULL, 0, 0, NULL);
	EXPECT(d == RNSC_ERR_AUTH, "swapped decrypt of a tampered token: %s", en(d));
	memcpy(sig, c->sig, 64);
	sig[below(x, 64)] ^= 0x10;
	v = rnsc_pyref_identity_validate(x->ref, c->pub, 64, sig, 64, c->msg, c->msg_len);
	EXPECT(v == RNSC_ERR_SIGNATURE, "swapped validate of a bad signature: %s", en(v));
	return 0;
}

/* Runs all cases at once: the unswapped results first, then one swap for the comparison,
 * because installing the swap patches every RNS module and is not per-case cheap. */
static int run_swap(xc *x, unsigned cases)
{
	conf_xcheck_result *r = x->res;
	swap_case *cs = calloc(cases ? cases : 1, sizeof(*cs));
	if (!cs)
		return RNSC_ERR_NOMEM;
	int *ok = calloc(cases ? cases : 1, sizeof(*ok));
	if (!ok) {
		free(cs);
		return RNSC_ERR_NOMEM;
	}
	for (unsigned i = 0; i < cases; i++) {
		swap_case *c = &cs[i];
		x->case_no = i;
		rnd(x, c->prv, 64);
		rnd(x, c->eph, 32);
		rnd(x, c->iv, 16);
		c->pt_len = rnd_len(x, sizeof(c->pt));
		c->msg_len = rnd_len(x, sizeof(c->msg));
		rnd(x, c->pt, c->pt_len);
		rnd(x, c->msg, c->msg_len);
		int a = rnsc_pyref_identity_public(x->ref, c->pub, c->hash, c->prv, 64);
		c->tok_len = rnsc_pyref_identity_encrypt(x->ref, c->tok, sizeof(c->tok), c->pub, 64,
							 c->pt, c->pt_len, NULL, 0, c->eph, c->iv);
		int b = rnsc_pyref_identity_sign(x->ref, c->sig, c->prv, 64, c->msg, c->msg_len);
		ok[i] = a == 0 && c->tok_len > 0 && b == 64;
		if (!ok[i])
			fail(x, "unswapped reference: keys %s, encrypt %s, sign %s", en(a),
			     en(c->tok_len), en(b));
	}
	int rc = rnsc_pyref_swap_crypto(x->ref, x->ctx);
	if (rc) {
		free(cs);
		free(ok);
		return rc;
	}
	for (unsigned i = 0; i < cases; i++) {
		x->case_no = i;
		if (ok[i] && swap_compare(x, &cs[i]) == 0)
			r->agreed++;
		else
			r->disagreed++;
	}
	/* The swap must really have routed the reference through rnsc. */
	static const enum rnsc_prim used[] = {RNSC_PRIM_SHA256,      RNSC_PRIM_HMAC_SHA256,
					      RNSC_PRIM_HKDF_SHA256, RNSC_PRIM_AES256_CBC,
					      RNSC_PRIM_X25519,      RNSC_PRIM_ED25519};
	for (size_t k = 0; cases && k < sizeof(used) / sizeof(used[0]); k++) {
		if (rnsc_pyref_swap_calls(x->ref, used[k]) == 0) {
			fail(x, "the reference never called rnsc's %s while swapped",
			     rnsc_prim_name(used[k]));
			if (r->agreed) {
				r->agreed--;
				r->disagreed++;
			}
		}
	}
	rc = rnsc_pyref_unswap_crypto(x->ref);
	/* Unswapped again, the reference must be back on its own crypto. */
	if (rc == 0 && cases && ok[0]) {
		uint8_t tok[sizeof(cs[0].tok)];
		int n = rnsc_pyref_identity_encrypt(x->ref, tok, sizeof(tok), cs[0].pub, 64,
						    cs[0].pt, cs[0].pt_len, NULL, 0, cs[0].eph,
						    cs[0].iv);
		if (n != cs[0].tok_len || memcmp(tok, cs[0].tok, (size_t)n) != 0) {
			fail(x, "after unswap the reference encrypts differently");
			rc = RNSC_ERR_STATE;
		}
	}
	free(cs);
	free(ok);
	return rc;
}

/* LINK destinations are named by the link id: the truncated hash of the link request's
 * hashable part without its MTU signalling bytes. Random requests of both header types,
 * with and without signalling. */
static int c_link_id(xc *x)
{
	uint8_t raw[2 + 32 + 1 + 64 + 3], a[16], b[16];
	int header2 = (int)below(x, 2);
	size_t extra = below(x, 2) ? 3 : below(x, 4);
	size_t len = 2 + (header2 ? 32 : 16) + 1 + 64 + extra;
	rnd(x, raw, len);
	raw[0] = (uint8_t)((header2 << 6) | (raw[0] & 0x3c) | 0x02); /* LINKREQUEST */
	raw[1] &= 0x7f; /* hop counts the reference accepts */
	SAME_BYTES("link id", rnsc_link_id_from_request(x->ctx, a, raw, len), a,
		   rnsc_pyref_link_id(x->ref, b, raw, len), b, 16);
	return 0;
}

/* ---- the table ---------------------------------------------------------------------------- */

typedef struct check {
	const char *name;
	int (*one)(xc *x); /* one case; NULL for checks that run all cases themselves */
	int (*all)(xc *x, unsigned cases);
	int files; /* needs the scratch directory */
} check;

static const check checks[] = {
	{"sha256 (+truncated_hash)", c_sha256, NULL, 0},
	{"sha512", c_sha512, NULL, 0},
	{"hash streaming", c_hash_stream, NULL, 0},
	{"hmac_sha256", c_hmac, NULL, 0},
	{"hkdf_sha256", c_hkdf, NULL, 0},
	{"aes256_cbc both ways", c_aes, NULL, 0},
	{"x25519 (+low-order)", c_x25519, NULL, 0},
	{"ed25519", c_ed25519, NULL, 0},
	{"identity keys + ratchet ids", c_identity_keys, NULL, 0},
	{"identity hash from public key", c_identity_hash, NULL, 0},
	{"identity_encrypt rnsc->ref", c_encrypt_rnsc_ref, NULL, 0},
	{"identity_encrypt ref->rnsc", c_encrypt_ref_rnsc, NULL, 0},
	{"ratchet encrypt rnsc->ref", c_ratchet_rnsc_ref, NULL, 0},
	{"ratchet encrypt ref->rnsc", c_ratchet_ref_rnsc, NULL, 0},
	{"sign rnsc->ref", c_sign_rnsc_ref, NULL, 0},
	{"sign ref->rnsc", c_sign_ref_rnsc, NULL, 0},
	{"names + name hash", c_names, NULL, 0},
	{"destination hashes", c_destinations, NULL, 0},
	{"LINK destination (link id)", c_link_id, NULL, 0},
	{"GROUP token rnsc->ref", c_group_rnsc_ref, NULL, 0},
	{"GROUP token ref->rnsc", c_group_ref_rnsc, NULL, 0},
	{"identity file rnsc->ref", c_file_rnsc_ref, NULL, 1},
	{"identity file ref->rnsc", c_file_ref_rnsc, NULL, 1},
	{"negative: GROUP tokens", c_neg_group, NULL, 0},
	{"negative: identity tokens/keys", c_neg_identity, NULL, 0},
	{"negative: signatures", c_neg_signature, NULL, 0},
	{"ffi swap: reference on rnsc crypto", NULL, run_swap, 0},
};
#define N_CHECKS (sizeof(checks) / sizeof(checks[0]))

unsigned conf_xcheck_count(void)
{
	return (unsigned)N_CHECKS;
}

const char *conf_xcheck_name(unsigned i)
{
	return i < N_CHECKS ? checks[i].name : NULL;
}

static uint64_t name_seed(const char *s)
{
	uint64_t h = UINT64_C(1469598103934665603); /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * UINT64_C(1099511628211);
	return h;
}

/* A private scratch directory, in memory when /dev/shm is there: rnsc fsyncs every saved key
 * and a thousand fsyncs on disk would dominate the run. */
static int make_dir(xc *x)
{
	const char *bases[] = {"/dev/shm", getenv("TMPDIR"), "/tmp"};
	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		if (!bases[i] || !*bases[i])
			continue;
		snprintf(x->dir, sizeof(x->dir), "%s/rnsc-xcheck-XXXXXX", bases[i]);
		if (mkdtemp(x->dir))
			return 0;
	}
	x->dir[0] = '\0';
	return RNSC_ERR_IO;
}

int conf_xcheck_run_one(unsigned i, const char *backend, unsigned cases, uint64_t seed,
			conf_xcheck_result *out)
{
	if (i >= N_CHECKS || !backend || !out)
		return RNSC_ERR_INVAL;
	memset(out, 0, sizeof(*out));
	out->check = checks[i].name;
	out->backend = backend;
	rnsc_pyref *ref = conf_ref();
	if (!ref)
		return RNSC_ERR_STATE;
	xc x = {0};
	x.ref = ref;
	x.rops = rnsc_pyref_crypto_ops();
	x.res = out;
	x.ctx = conf_ctx_for(backend);
	if (!x.ctx)
		return RNSC_ERR_NOTFOUND;
	/* inputs depend on the seed, the check and the backend name only */
	x.in = seed ^ name_seed(checks[i].name) ^ (name_seed(backend) << 1);
	x.fill = ~x.in;
	rnsc_crypto_set_rng(x.ctx, xc_rng, &x);
	int rc = 0;
	if (checks[i].files && make_dir(&x) != 0)
		rc = RNSC_ERR_IO;
	if (rc == 0 && checks[i].all) {
		rc = checks[i].all(&x, cases);
	} else if (rc == 0) {
		for (unsigned c = 0; c < cases; c++) {
			x.case_no = c;
			if (checks[i].one(&x) == 0)
				out->agreed++;
			else
				out->disagreed++;
		}
	}
	out->cases = cases;
	if (x.dir[0])
		rmdir(x.dir);
	rnsc_crypto_set_rng(x.ctx, NULL, NULL);
	rnsc_ctx_del(x.ctx);
	return rc;
}

int conf_xcheck_run_all(unsigned cases, uint64_t seed, conf_xcheck_sink sink, void *ud)
{
	if (!conf_ref())
		return RNSC_ERR_STATE;
	int total = 0;
	for (size_t b = 0; b < conf_backend_count(); b++) {
		const char *name = conf_backend(b)->name;
		for (unsigned i = 0; i < N_CHECKS; i++) {
			conf_xcheck_result r;
			int rc = conf_xcheck_run_one(i, name, cases, seed, &r);
			if (rc < 0) {
				/* a check that could not run is a disagreement, never a pass */
				r.disagreed = r.cases ? r.cases - r.agreed : 1;
				if (!r.first_disagreement[0])
					snprintf(r.first_disagreement, sizeof(r.first_disagreement),
						 "check could not run: %s", rnsc_strerror(rc));
			}
			if (sink)
				sink(ud, &r);
			total += (int)r.disagreed;
		}
	}
	return total;
}
