/* SPDX-License-Identifier: MIT */
/*
 * Resources (src/lib/resource.c, resource_adv.c) between two rnsc ends wired in memory: a
 * shared link token, a send callback per end queueing packets for the other, filters that
 * drop or damage packets in transit. Covers single and multi-part transfers, hashmap
 * updates, metadata, bz2, 3 and 64 segments, retries after a dropped request (the
 * reference's advertise-before-register hazard), corrupt parts, bad proofs, cancellation
 * both ways, rejection, every watchdog timeout, corrupt and oversized segments, the
 * advertisement parser's error paths and allocation failures.
 * conformance/resource_xcheck_test.c checks advertisement bytes and proofs against the
 * reference; tests/live/cp_interop_test.sh runs transfers live against rncp.
 */
#include <bzlib.h>

#include "msgpack.h"
#include "packet.h"
#include "resource.h"
#include "test_rng.h"
#include "token.h"
#include "wire_test_util.h"

typedef struct qpkt {
	int type, ctx;
	size_t len;
	uint8_t *d;
} qpkt;

typedef struct end {
	rnsc_resource *r;
	rnsc_resource_link link;
	qpkt q[4096];
	size_t qn;
	/* filters on packets this end sends */
	int drop_ctx, drop_n, drop_type; /* drop the next drop_n packets of (type, ctx) */
	int damage_ctx, damage_n;        /* flip a byte in the next damage_n packets of ctx */
	int fail_send, corrupt_decrypt, teardowns;
	/* sender source: pattern or buffer */
	const uint8_t *src;
	uint64_t src_len;
	int read_fail;
	uint64_t read_end; /* the furthest byte read so far */
	/* receiver sink */
	uint8_t *sink;
	size_t sink_len, sink_cap;
	rnsc_hash sink_hash;
	uint64_t sink_total;
	int write_fail;
	uint8_t meta[256];
	size_t meta_len;
	int meta_calls, progress_calls, concluded, status;
} end;

static rnsc_token TOK;
static end S, R; /* sender, receiver */
static uint64_t now = 1000000;

static int e_send(void *ud, int type, int context, const uint8_t *d, size_t len)
{
	end *e = ud;
	if (e->fail_send)
		return RNSC_ERR_STATE;
	if (e->drop_n > 0 && context == e->drop_ctx && type == e->drop_type) {
		e->drop_n--;
		return (int)(len + 19);
	}
	if (e->qn == sizeof(e->q) / sizeof(e->q[0]))
		return RNSC_ERR_NOMEM;
	qpkt *p = &e->q[e->qn++];
	p->type = type;
	p->ctx = context;
	p->len = len;
	p->d = malloc(len ? len : 1);
	memcpy(p->d, d, len);
	if (e->damage_n > 0 && context == e->damage_ctx && len) {
		e->damage_n--;
		p->d[len / 2] ^= 0x40;
	}
	return (int)(len + 19);
}

static int e_encrypt(void *ud, uint8_t *out, size_t cap, const uint8_t *pt, size_t len)
{
	(void)ud;
	return rnsc_token_encrypt(&TOK, out, cap, pt, len);
}

static int e_decrypt(void *ud, uint8_t *out, size_t cap, const uint8_t *ct, size_t len)
{
	end *e = ud;
	int n = rnsc_token_decrypt(&TOK, out, cap, ct, len);
	if (n > 8 && e->corrupt_decrypt)
		out[n - 1] ^= 1;
	return n;
}

static int e_encrypt_begin(void *ud, rnsc_token_enc *e, uint8_t out[16])
{
	(void)ud;
	return rnsc_token_enc_begin(e, &TOK, out);
}

static void e_teardown(void *ud)
{
	((end *)ud)->teardowns++;
}

static int e_read(void *ud, uint64_t off, uint8_t *buf, size_t len)
{
	end *e = ud;
	if (e->read_fail)
		return RNSC_ERR_IO;
	if (off + len > e->read_end)
		e->read_end = off + len;
	for (size_t i = 0; i < len; i++)
		buf[i] = e->src ? e->src[off + i]
				: (uint8_t)(((off + i) * 2654435761u) >> 13 ^ (off + i) >> 20);
	return (int)len;
}

static int e_write(void *ud, const uint8_t *p, size_t len)
{
	end *e = ud;
	if (e->write_fail)
		return RNSC_ERR_IO;
	if (e->sink_len + len <= e->sink_cap) {
		memcpy(e->sink + e->sink_len, p, len);
		e->sink_len += len;
	}
	e->sink_total += len;
	(void)rnsc_hash_update(&e->sink_hash, p, len);
	return 0;
}

static void e_meta(void *ud, rnsc_resource *r, const uint8_t *p, size_t len)
{
	(void)r;
	end *e = ud;
	e->meta_calls++;
	e->meta_len = len < sizeof(e->meta) ? len : sizeof(e->meta);
	memcpy(e->meta, p, e->meta_len);
}

static void e_progress(void *ud, rnsc_resource *r)
{
	(void)r;
	((end *)ud)->progress_calls++;
}

static void e_concluded(void *ud, rnsc_resource *r)
{
	end *e = ud;
	e->concluded++;
	e->status = rnsc_resource_status(r);
}

static const rnsc_resource_callbacks CB = {e_read, e_write, e_meta, e_progress, e_concluded};

static void end_init(end *e, size_t mtu, size_t sink_cap)
{
	memset(e, 0, sizeof(*e));
	e->link = (rnsc_resource_link){.ud = e,
				       .send = e_send,
				       .encrypt = e_encrypt,
				       .decrypt = e_decrypt,
				       .teardown = e_teardown,
				       .mtu = mtu,
				       .rtt = 0.05,
				       .establishment_cost = 287};
	e->sink_cap = sink_cap;
	e->sink = sink_cap ? malloc(sink_cap) : NULL;
	(void)rnsc_hash_init(C, &e->sink_hash, RNSC_HASH_SHA256);
}

static void end_free(end *e)
{
	rnsc_resource_del(e->r);
	for (size_t i = 0; i < e->qn; i++)
		free(e->q[i].d);
	free(e->sink);
	rnsc_hash_abort(&e->sink_hash);
	memset(e, 0, sizeof(*e));
}

static void setup(size_t mtu, size_t sink_cap)
{
	uint8_t key[64];
	for (int i = 0; i < 64; i++)
		key[i] = (uint8_t)(i * 7 + 1);
	CU_ASSERT_EQUAL_FATAL(rnsc_token_init(&TOK, C, key, sizeof(key)), 0);
	end_init(&S, mtu, 0);
	end_init(&R, mtu, sink_cap);
}

static void teardown_pair(void)
{
	end_free(&S);
	end_free(&R);
}

static uint64_t hctr;
static int faulting;     /* allocation failures are being injected */
static uint64_t step_ms; /* the clock advances this much per delivered packet */
/* Delivers one queued packet of `from` to `to`; returns 0 when none was queued. */
static int deliver_one(end *from, end *to)
{
	if (!from->qn)
		return 0;
	qpkt p = from->q[0];
	memmove(from->q, from->q + 1, (from->qn - 1) * sizeof(qpkt));
	from->qn--;
	now += step_ms;
	uint8_t h[32] = {0};
	hctr++;
	memcpy(h, &hctr, sizeof(hctr)); /* a distinct packet hash per packet */
	if (p.type == RNSC_PKT_DATA && p.ctx == RNSC_CTX_RESOURCE_ADV) {
		if (!to->r) {
			int rc = rnsc_resource_accept(C, &to->r, &to->link, &CB, to, p.d, p.len,
						      now);
			CU_ASSERT(rc == 0 || (faulting && rc == RNSC_ERR_NOMEM));
		} else {
			rnsc_resource_adv a;
			if (rnsc_resource_adv_unpack(&a, p.d, p.len) == 0)
				(void)rnsc_resource_accept_segment(to->r, &a, now);
		}
	} else if (to->r) {
		(void)rnsc_resource_packet(to->r, p.type, p.ctx, p.d, p.len, h, now);
	}
	free(p.d);
	return 1;
}

static void pump(void)
{
	for (int guard = 0; guard < 10000000; guard++) {
		int moved = deliver_one(&S, &R);
		moved |= deliver_one(&R, &S);
		if (!moved)
			return;
	}
}

/* Pumps, and runs the watchdogs (jumping the clock to the next deadline) until both ends
 * concluded or nothing is due any more. */
static void run(void)
{
	for (int i = 0; i < 2000; i++) {
		pump();
		if ((!S.r || rnsc_resource_done(S.r)) && (!R.r || rnsc_resource_done(R.r)))
			return;
		uint64_t d = rnsc_resource_next_deadline(S.r);
		uint64_t d2 = R.r ? rnsc_resource_next_deadline(R.r) : UINT64_MAX;
		if (d2 < d)
			d = d2;
		if (d == UINT64_MAX)
			return;
		if (d > now)
			now = d;
		rnsc_resource_tick(S.r, now);
		if (R.r)
			rnsc_resource_tick(R.r, now);
	}
}

static int start(uint64_t size, const uint8_t *src, const char *meta, int compress)
{
	S.src = src;
	S.src_len = size;
	uint8_t mp[128];
	size_t ml = 0;
	if (meta) {
		rnsc_mp_writer w;
		rnsc_mp_writer_init(&w, mp, sizeof(mp));
		rnsc_mp_write_map(&w, 1);
		rnsc_mp_write_cstr(&w, "name");
		rnsc_mp_write_bin(&w, (const uint8_t *)meta, strlen(meta));
		ml = (size_t)rnsc_mp_writer_finish(&w);
	}
	rnsc_resource_params p = {.size = size,
				  .metadata = meta ? mp : NULL,
				  .metadata_len = ml,
				  .auto_compress = compress};
	return rnsc_resource_send(C, &S.r, &S.link, &CB, &S, &p, now);
}

static void expect_pattern(end *e, uint64_t size)
{
	uint8_t want[64], got[32];
	rnsc_hash h;
	(void)rnsc_hash_init(C, &h, RNSC_HASH_SHA256);
	uint8_t buf[65536];
	end tmp = {0};
	for (uint64_t off = 0; off < size; off += sizeof(buf)) {
		size_t n = size - off < sizeof(buf) ? (size_t)(size - off) : sizeof(buf);
		e_read(&tmp, off, buf, n);
		(void)rnsc_hash_update(&h, buf, n);
	}
	(void)rnsc_hash_final(&h, want);
	(void)rnsc_hash_final(&e->sink_hash, got);
	(void)rnsc_hash_init(C, &e->sink_hash, RNSC_HASH_SHA256);
	CU_ASSERT_EQUAL(e->sink_total, size);
	CU_ASSERT(memcmp(want, got, 32) == 0);
}

/* ---- transfers ---------------------------------------------------------------------------- */

static void t_small(void)
{
	setup(500, 1 << 16);
	const uint8_t msg[] = "a small resource";
	CU_ASSERT_EQUAL_FATAL(start(sizeof(msg), msg, NULL, 1), 0);
	CU_ASSERT_EQUAL(rnsc_resource_status(S.r), RNSC_RESOURCE_ADVERTISED);
	CU_ASSERT_EQUAL(rnsc_resource_flags(S.r), RNSC_RESOURCE_F_ENCRYPTED);
	CU_ASSERT(rnsc_resource_is_initiator(S.r));
	CU_ASSERT_EQUAL(rnsc_resource_segments(S.r), 1);
	CU_ASSERT_EQUAL(rnsc_resource_parts(S.r), 1);
	CU_ASSERT_EQUAL(rnsc_resource_progress(S.r), 0.0);
	run();
	CU_ASSERT_EQUAL(S.status, RNSC_RESOURCE_COMPLETE);
	CU_ASSERT_EQUAL(R.status, RNSC_RESOURCE_COMPLETE);
	CU_ASSERT_EQUAL(S.concluded, 1);
	CU_ASSERT_EQUAL(R.concluded, 1);
	CU_ASSERT_EQUAL(R.sink_len, sizeof(msg));
	CU_ASSERT(memcmp(R.sink, msg, sizeof(msg)) == 0);
	CU_ASSERT_EQUAL(R.meta_calls, 0);
	CU_ASSERT_EQUAL(rnsc_resource_progress(S.r), 1.0);
	CU_ASSERT_EQUAL(rnsc_resource_progress(R.r), 1.0);
	CU_ASSERT_EQUAL(rnsc_resource_segment_progress(R.r), 1.0);
	CU_ASSERT(!rnsc_resource_is_initiator(R.r));
	CU_ASSERT(memcmp(rnsc_resource_hash(S.r), rnsc_resource_hash(R.r), 32) == 0);
	CU_ASSERT(memcmp(rnsc_resource_original_hash(R.r), rnsc_resource_hash(R.r), 32) == 0);
	CU_ASSERT(R.progress_calls >= 1 && S.progress_calls >= 1);
	CU_ASSERT_EQUAL(rnsc_resource_next_deadline(S.r), UINT64_MAX);
	/* packets after the end are not the resource's any more */
	uint8_t h[32] = {0};
	CU_ASSERT_EQUAL(
		rnsc_resource_packet(S.r, RNSC_PKT_DATA, RNSC_CTX_RESOURCE_REQ, h, 32, h, now),
		RNSC_ERR_NOTFOUND);
	teardown_pair();
}

static void t_metadata_compressed_hmu(void)
{
	/* 120 kB of text at MTU 500: compressed, > 74 parts, so the hashmap is exhausted and
	 * hashmap updates flow */
	setup(500, 1 << 20);
	static uint8_t text[120000];
	uint64_t x = 7;
	for (size_t i = 0; i < sizeof(text); i++) {
		text[i] = (uint8_t)("abcdefghijklmnop \n"[test_xorshift64(&x) % 18]);
	}
	CU_ASSERT_EQUAL_FATAL(start(sizeof(text), text, "file.txt", 1), 0);
	CU_ASSERT_EQUAL(rnsc_resource_flags(S.r), 0x23);
	CU_ASSERT(rnsc_resource_compressed(S.r));
	CU_ASSERT(rnsc_resource_parts(S.r) > RNSC_RESOURCE_HASHMAP_MAX_LEN);
	run();
	CU_ASSERT_EQUAL(S.status, RNSC_RESOURCE_COMPLETE);
	CU_ASSERT_EQUAL(R.status, RNSC_RESOURCE_COMPLETE);
	CU_ASSERT_EQUAL(R.sink_len, sizeof(text));
	CU_ASSERT(memcmp(R.sink, text, sizeof(text)) == 0);
	CU_ASSERT_EQUAL(R.meta_calls, 1);
	CU_ASSERT(R.meta_len == 16 && memcmp(R.meta + 6,
					     "\xc4\x08"
					     "file.txt",
					     10) == 0);
	CU_ASSERT(rnsc_resource_compressed(R.r));
	rnsc_resource_stats st;
	rnsc_resource_stats_get(S.r, &st);
	CU_ASSERT(st.hmus >= 1);
	CU_ASSERT_EQUAL(st.parts, rnsc_resource_parts(S.r));
	CU_ASSERT_EQUAL(st.resent_parts, 0);
	/* the window grew past its start */
	CU_ASSERT(rnsc_resource_window(R.r) > RNSC_RESOURCE_WINDOW);
	CU_ASSERT(rnsc_resource_eifr(R.r) > 0);
	teardown_pair();

	/* the same text without compression */
	setup(500, 1 << 20);
	CU_ASSERT_EQUAL_FATAL(start(sizeof(text), text, "file.txt", 0), 0);
	CU_ASSERT_EQUAL(rnsc_resource_flags(S.r), 0x21);
	run();
	CU_ASSERT_EQUAL(R.status, RNSC_RESOURCE_COMPLETE);
	CU_ASSERT(R.sink_len == sizeof(text) && memcmp(R.sink, text, sizeof(text)) == 0);
	teardown_pair();

	/* random data: compression does not help, sent uncompressed */
	setup(8192, 1 << 20);
	static uint8_t rnd[50000];
	for (size_t i = 0; i < sizeof(rnd); i += 32) {
		uint8_t ctr[8], h[32];
		uint64_t i64 = i; /* 8 counter bytes whatever the width of size_t (armhf: 4) */
		memcpy(ctr, &i64, sizeof(ctr));
		(void)rnsc_sha256(C, h, ctr, sizeof(ctr));
		memcpy(rnd + i, h, sizeof(rnd) - i < 32 ? sizeof(rnd) - i : 32);
	}
	CU_ASSERT_EQUAL_FATAL(start(sizeof(rnd), rnd, NULL, 1), 0);
	CU_ASSERT_EQUAL(rnsc_resource_flags(S.r), 0x01);
	run();
	CU_ASSERT(R.sink_len == sizeof(rnd) && memcmp(R.sink, rnd, sizeof(rnd)) == 0);
	teardown_pair();
}

/* A link owner's remembered window above the most a part request can name is taken as
 * that most (75 part hashes in one request). */
static void t_oversized_last_window(void)
{
	setup(500, 0);
	R.link.last_window = 1000;
	uint64_t size = 200000;
	CU_ASSERT_EQUAL_FATAL(start(size, NULL, NULL, 0), 0);
	run();
	CU_ASSERT_EQUAL(S.status, RNSC_RESOURCE_COMPLETE);
	CU_ASSERT_EQUAL(R.status, RNSC_RESOURCE_COMPLETE);
	CU_ASSERT(rnsc_resource_window(R.r) <= RNSC_RESOURCE_WINDOW_MAX_FAST);
	expect_pattern(&R, size);
	teardown_pair();
}

static void t_segments(void)
{
	/* 2.5 MB with metadata: 3 segments, appended in order, metadata once */
	setup(8192, 0);
	uint64_t size = 2500000;
	CU_ASSERT_EQUAL_FATAL(start(size, NULL, "big.bin", 0), 0);
	CU_ASSERT_EQUAL(rnsc_resource_segments(S.r), 3);
	CU_ASSERT_EQUAL(rnsc_resource_flags(S.r), 0x25);
	CU_ASSERT_EQUAL(rnsc_resource_total_size(S.r), size + 3 + 15);
	run();
	CU_ASSERT_EQUAL(S.status, RNSC_RESOURCE_COMPLETE);
	CU_ASSERT_EQUAL(R.status, RNSC_RESOURCE_COMPLETE);
	CU_ASSERT_EQUAL(rnsc_resource_segment_index(R.r), 3);
	CU_ASSERT_EQUAL(R.meta_calls, 1);
	expect_pattern(&R, size);
	CU_ASSERT_EQUAL(rnsc_resource_progress(R.r), 1.0);
	teardown_pair();

	/* 64 segments (the large case), no compression, 16 KiB link MTU */
	setup(16384, 0);
	size = 64ull * RNSC_RESOURCE_MAX_EFFICIENT_SIZE - 100;
	CU_ASSERT_EQUAL_FATAL(start(size, NULL, NULL, 0), 0);
	CU_ASSERT_EQUAL(rnsc_resource_segments(S.r), 64);
	int checked_mid = 0;
	for (int i = 0; i < 200000 && !rnsc_resource_done(S.r); i++) {
		if (!deliver_one(&S, &R) && !deliver_one(&R, &S))
			break;
		if (!checked_mid && R.r && rnsc_resource_segment_index(R.r) == 32) {
			double p = rnsc_resource_progress(R.r);
			CU_ASSERT(p > 0.45 && p < 0.55);
			p = rnsc_resource_progress(S.r);
			CU_ASSERT(p > 0.45 && p < 0.55);
			checked_mid = 1;
		}
	}
	pump();
	CU_ASSERT(checked_mid);
	CU_ASSERT_EQUAL(S.status, RNSC_RESOURCE_COMPLETE);
	CU_ASSERT_EQUAL(R.status, RNSC_RESOURCE_COMPLETE);
	CU_ASSERT_EQUAL(rnsc_resource_segment_index(S.r), 64);
	expect_pattern(&R, size);
	teardown_pair();
}

/* Moves S's packets, gives S one tick at its next deadline for each segment whose proof it
 * awaits (the loop pass after the last part, when it prepares the next segment), then
 * moves R's. fail_first: reads fail during the first such tick (1: only then, 2: from then
 * on); cancel: the resource is cancelled right after the first. Returns the ticks that read. */
static int run_ticking_ahead(int fail_first, int cancel)
{
	int ahead = 0;
	unsigned ticked = 0;
	for (int i = 0; i < 1000000 && !rnsc_resource_done(S.r); i++) {
		int moved = 0;
		while (deliver_one(&S, &R))
			moved = 1;
		unsigned seg = rnsc_resource_segment_index(S.r);
		if (rnsc_resource_status(S.r) == RNSC_RESOURCE_AWAITING_PROOF && seg != ticked &&
		    seg < rnsc_resource_segments(S.r)) {
			ticked = seg;
			uint64_t d = rnsc_resource_next_deadline(S.r), before = S.read_end;
			CU_ASSERT(d <= now + 1);
			if (d > now)
				now = d;
			if (fail_first && seg == 1)
				S.read_fail = 1;
			rnsc_resource_tick(S.r, now);
			if (fail_first == 1)
				S.read_fail = 0;
			ahead += S.read_end > before;
			CU_ASSERT_EQUAL(rnsc_resource_status(S.r), RNSC_RESOURCE_AWAITING_PROOF);
			/* the prepared segment does not bring the deadline forward again */
			CU_ASSERT(rnsc_resource_next_deadline(S.r) > now);
			if (cancel) {
				rnsc_resource_cancel(S.r, now); /* the prepared segment goes too */
				return ahead;
			}
		}
		if (deliver_one(&R, &S))
			moved = 1;
		if (!moved)
			break;
	}
	return ahead;
}

static void t_prepared_ahead(void)
{
	/* segment k + 1 is read while k's proof is awaited; the bytes are those of t_segments */
	setup(8192, 0);
	uint64_t size = 2500000;
	CU_ASSERT_EQUAL_FATAL(start(size, NULL, "big.bin", 0), 0);
	CU_ASSERT_EQUAL(run_ticking_ahead(0, 0), 2);
	pump();
	CU_ASSERT_EQUAL(S.status, RNSC_RESOURCE_COMPLETE);
	CU_ASSERT_EQUAL(R.status, RNSC_RESOURCE_COMPLETE);
	CU_ASSERT_EQUAL(R.meta_calls, 1);
	expect_pattern(&R, size);
	teardown_pair();

	/* preparation ahead fails (a read error that has cleared by the proof): the segment is
	 * prepared at the proof instead, once */
	setup(8192, 0);
	CU_ASSERT_EQUAL_FATAL(start(size, NULL, NULL, 0), 0);
	CU_ASSERT_EQUAL(run_ticking_ahead(1, 0), 1);
	pump();
	CU_ASSERT_EQUAL(S.status, RNSC_RESOURCE_COMPLETE);
	CU_ASSERT_EQUAL(R.status, RNSC_RESOURCE_COMPLETE);
	expect_pattern(&R, size);
	teardown_pair();

	/* a read error that persists fails the resource at the proof */
	setup(8192, 0);
	CU_ASSERT_EQUAL_FATAL(start(size, NULL, NULL, 0), 0);
	(void)run_ticking_ahead(2, 0);
	pump();
	CU_ASSERT_EQUAL(S.status, RNSC_RESOURCE_FAILED);
	teardown_pair();

	/* cancelled while holding a prepared segment: freed with it (LSan-checked) */
	setup(8192, 0);
	CU_ASSERT_EQUAL_FATAL(start(size, NULL, NULL, 0), 0);
	CU_ASSERT_EQUAL(run_ticking_ahead(0, 1), 1);
	CU_ASSERT_EQUAL(rnsc_resource_status(S.r), RNSC_RESOURCE_FAILED);
	teardown_pair();
}

/* With the link's encryption in pieces, S prepares the next segment a slice per deferred
 * pass while the current one transfers. Packets move one at a time each way between passes.
 * mode 0: every pass runs; 1: reads fail in the third pass only; 2: cancelled after the
 * second; 3: two passes per segment, the proof finishes the rest. Returns the passes. */
static int run_slices(int mode)
{
	int passes = 0, seg_passes = 0;
	unsigned seg = 0;
	for (int i = 0; i < 1000000 && !rnsc_resource_done(S.r); i++) {
		int moved = 0;
		if (rnsc_resource_segment_index(S.r) != seg) {
			seg = rnsc_resource_segment_index(S.r);
			seg_passes = 0;
		}
		if (rnsc_resource_work_deferred(S.r) && (mode != 3 || seg_passes < 2)) {
			CU_ASSERT(rnsc_resource_next_deadline(S.r) <= now);
			passes++, seg_passes++;
			if (mode == 1 && passes == 3)
				S.read_fail = 1;
			rnsc_resource_tick(S.r, now);
			S.read_fail = 0;
			if (mode == 2 && passes == 2) {
				rnsc_resource_cancel(S.r, now); /* the shadow goes too */
				return passes;
			}
			moved = 1;
		}
		moved |= deliver_one(&S, &R);
		moved |= deliver_one(&R, &S);
		if (!moved)
			break;
	}
	return passes;
}

static void t_prepared_in_slices(void)
{
	uint64_t size = 2500000; /* three segments, the third short */
	for (int mode = 0; mode < 4; mode++) {
		setup(8192, 0);
		S.link.encrypt_begin = e_encrypt_begin;
		CU_ASSERT_EQUAL_FATAL(start(size, NULL, mode ? NULL : "big.bin", 0), 0);
		int passes = run_slices(mode);
		if (mode == 2) {
			CU_ASSERT_EQUAL(passes, 2);
			CU_ASSERT_EQUAL(rnsc_resource_status(S.r), RNSC_RESOURCE_FAILED);
			teardown_pair();
			continue;
		}
		if (mode == 0) /* begin + 33 slices for segment 2, begin + 13 for segment 3 */
			CU_ASSERT(passes >= 45 && passes <= 48);
		if (mode == 1) /* segment 2 dropped at its second slice and prepared whole */
			CU_ASSERT(passes >= 15 && passes <= 17);
		if (mode == 3)
			CU_ASSERT_EQUAL(passes, 4);
		pump();
		CU_ASSERT_EQUAL(S.status, RNSC_RESOURCE_COMPLETE);
		CU_ASSERT_EQUAL(R.status, RNSC_RESOURCE_COMPLETE);
		CU_ASSERT_EQUAL(rnsc_resource_segment_index(S.r), 3);
		CU_ASSERT_EQUAL(R.meta_calls, mode ? 0 : 1);
		expect_pattern(&R, size);
		teardown_pair();
	}
}

static void t_rates(void)
{
	/* a fast link (1 ms per packet): after FAST_RATE_THRESHOLD fast rounds the window may
	 * grow past WINDOW_MAX_SLOW */
	static uint8_t d[400000];
	for (size_t i = 0; i < sizeof(d); i++)
		d[i] = (uint8_t)(i * 7 + (i >> 9));
	setup(500, sizeof(d));
	step_ms = 1;
	CU_ASSERT_EQUAL_FATAL(start(sizeof(d), d, NULL, 0), 0);
	run();
	CU_ASSERT_EQUAL(R.status, RNSC_RESOURCE_COMPLETE);
	CU_ASSERT(R.sink_len == sizeof(d) && memcmp(R.sink, d, sizeof(d)) == 0);
	CU_ASSERT(rnsc_resource_window(R.r) > RNSC_RESOURCE_WINDOW_MAX_SLOW);
	teardown_pair();
	/* a very slow link (3 s per packet): after VERY_SLOW_RATE_THRESHOLD slow rounds
	 * window_max drops to WINDOW_MAX_VERY_SLOW, so the window (4, then 5 and 6 in those two
	 * rounds: the reference grows it before measuring) grows no further */
	setup(500, 1 << 16);
	step_ms = 3000;
	CU_ASSERT_EQUAL_FATAL(start(12000, d, NULL, 0), 0);
	run();
	CU_ASSERT_EQUAL(R.status, RNSC_RESOURCE_COMPLETE);
	CU_ASSERT(R.sink_len == 12000 && memcmp(R.sink, d, 12000) == 0);
	CU_ASSERT(rnsc_resource_window(R.r) <= RNSC_RESOURCE_WINDOW + 2);
	step_ms = 0;
	teardown_pair();
	/* the link's defaults when it reports no RTT or handshake cost */
	setup(500, 1 << 16);
	S.link.rtt = 0;
	S.link.establishment_cost = 0;
	R.link.rtt = 0;
	R.link.establishment_cost = 0;
	CU_ASSERT_EQUAL_FATAL(start(3000, d, NULL, 0), 0);
	CU_ASSERT_EQUAL(rnsc_resource_next_deadline(S.r), now + 6 + 1000);
	run();
	CU_ASSERT_EQUAL(R.status, RNSC_RESOURCE_COMPLETE);
	teardown_pair();
}

/* ---- loss, damage, retries ------------------------------------------------------------- */

static void t_dropped_first_request(void)
{
	/* the reference registers an outgoing resource only after advertising it: a fast first
	 * request is lost; the receiver asks again after its timeout */
	setup(500, 1 << 16);
	R.drop_type = RNSC_PKT_DATA;
	R.drop_ctx = RNSC_CTX_RESOURCE_REQ;
	R.drop_n = 1;
	uint8_t d[3000];
	wt_rng(NULL, d, sizeof(d));
	CU_ASSERT_EQUAL_FATAL(start(sizeof(d), d, NULL, 0), 0);
	uint64_t t0 = now;
	pump();
	CU_ASSERT_EQUAL(rnsc_resource_status(R.r), RNSC_RESOURCE_TRANSFERRING);
	uint64_t dl = rnsc_resource_next_deadline(R.r);
	/* last_activity + 4 * (3 * sdu / eifr) + 0.25 s, eifr = 287 * 8 / 0.05 */
	double expect = 4.0 * (3.0 * 464.0 / (287.0 * 8.0 / 0.05)) + 0.25;
	CU_ASSERT(dl >= t0 + (uint64_t)(expect * 1000) - 2 &&
		  dl <= t0 + (uint64_t)(expect * 1000) + 2);
	rnsc_resource_tick(R.r, dl - 1); /* not yet */
	rnsc_resource_stats st;
	rnsc_resource_stats_get(R.r, &st);
	CU_ASSERT_EQUAL(st.retries, 0);
	run();
	CU_ASSERT_EQUAL(R.status, RNSC_RESOURCE_COMPLETE);
	CU_ASSERT_EQUAL(S.status, RNSC_RESOURCE_COMPLETE);
	rnsc_resource_stats_get(R.r, &st);
	CU_ASSERT_EQUAL(st.retries, 1);
	CU_ASSERT(R.sink_len == sizeof(d) && memcmp(R.sink, d, sizeof(d)) == 0);
	teardown_pair();
}

static void t_corrupt_and_lost_parts(void)
{
	setup(500, 1 << 16);
	S.damage_ctx = RNSC_CTX_RESOURCE;
	S.damage_n = 2;
	S.drop_type = RNSC_PKT_DATA;
	S.drop_ctx = RNSC_CTX_RESOURCE;
	S.drop_n = 0;
	uint8_t d[20000];
	wt_rng(NULL, d, sizeof(d));
	CU_ASSERT_EQUAL_FATAL(start(sizeof(d), d, NULL, 0), 0);
	run();
	CU_ASSERT_EQUAL(R.status, RNSC_RESOURCE_COMPLETE);
	CU_ASSERT_EQUAL(S.status, RNSC_RESOURCE_COMPLETE);
	CU_ASSERT(R.sink_len == sizeof(d) && memcmp(R.sink, d, sizeof(d)) == 0);
	rnsc_resource_stats st;
	rnsc_resource_stats_get(S.r, &st);
	CU_ASSERT(st.resent_parts >= 2);
	teardown_pair();

	/* lost HMU: the receiver re-requests the hashmap */
	setup(500, 1 << 18);
	S.drop_type = RNSC_PKT_DATA;
	S.drop_ctx = RNSC_CTX_RESOURCE_HMU;
	S.drop_n = 1;
	static uint8_t big[60000];
	wt_rng(NULL, big, sizeof(big));
	CU_ASSERT_EQUAL_FATAL(start(sizeof(big), big, NULL, 0), 0);
	run();
	CU_ASSERT_EQUAL(R.status, RNSC_RESOURCE_COMPLETE);
	CU_ASSERT(R.sink_len == sizeof(big) && memcmp(R.sink, big, sizeof(big)) == 0);
	teardown_pair();
}

static void t_bad_proof(void)
{
	/* every proof damaged: the sender waits rtt * 3 + 10 s three more times, then fails
	 * and sends ICL */
	setup(500, 1 << 16);
	R.damage_ctx = RNSC_CTX_RESOURCE_PRF;
	R.damage_n = 100;
	uint8_t d[1000];
	wt_rng(NULL, d, sizeof(d));
	CU_ASSERT_EQUAL_FATAL(start(sizeof(d), d, NULL, 0), 0);
	pump();
	CU_ASSERT_EQUAL(R.status, RNSC_RESOURCE_COMPLETE);
	CU_ASSERT_EQUAL(rnsc_resource_status(S.r), RNSC_RESOURCE_AWAITING_PROOF);
	uint64_t t0 = now;
	run();
	CU_ASSERT_EQUAL(S.status, RNSC_RESOURCE_FAILED);
	CU_ASSERT(now - t0 >= 4 * 10000);
	CU_ASSERT(S.qn == 0); /* the ICL went to the receiver, which ignored it */
	/* a proof of the wrong length or for another resource is not taken */
	uint8_t pr[64] = {0};
	CU_ASSERT_EQUAL(
		rnsc_resource_packet(S.r, RNSC_PKT_PROOF, RNSC_CTX_RESOURCE_PRF, pr, 10, NULL, now),
		RNSC_ERR_NOTFOUND);
	teardown_pair();

	setup(500, 1 << 16);
	CU_ASSERT_EQUAL_FATAL(start(sizeof(d), d, NULL, 0), 0);
	CU_ASSERT_EQUAL(
		rnsc_resource_packet(S.r, RNSC_PKT_PROOF, RNSC_CTX_RESOURCE_PRF, pr, 10, NULL, now),
		RNSC_ERR_MALFORMED);
	CU_ASSERT_EQUAL(
		rnsc_resource_packet(S.r, RNSC_PKT_PROOF, RNSC_CTX_RESOURCE_PRF, pr, 64, NULL, now),
		RNSC_ERR_NOTFOUND);
	memcpy(pr, rnsc_resource_hash(S.r), 32);
	CU_ASSERT_EQUAL(
		rnsc_resource_packet(S.r, RNSC_PKT_PROOF, RNSC_CTX_RESOURCE_PRF, pr, 64, NULL, now),
		0);
	CU_ASSERT_EQUAL(rnsc_resource_packet(S.r, RNSC_PKT_PROOF, RNSC_CTX_NONE, pr, 64, NULL, now),
			RNSC_ERR_NOTFOUND);
	CU_ASSERT_EQUAL(rnsc_resource_status(S.r), RNSC_RESOURCE_ADVERTISED);
	teardown_pair();
}

static void t_cancel_and_reject(void)
{
	uint8_t d[20000];
	wt_rng(NULL, d, sizeof(d));
	/* sender cancels mid-transfer: ICL, the receiver fails and answers RCL */
	setup(500, 1 << 16);
	CU_ASSERT_EQUAL_FATAL(start(sizeof(d), d, NULL, 0), 0);
	for (int i = 0; i < 6; i++)
		deliver_one(&S, &R), deliver_one(&R, &S);
	rnsc_resource_cancel(S.r, now);
	CU_ASSERT_EQUAL(S.status, RNSC_RESOURCE_FAILED);
	CU_ASSERT_EQUAL(S.q[S.qn - 1].ctx, RNSC_CTX_RESOURCE_ICL);
	pump();
	CU_ASSERT_EQUAL(R.status, RNSC_RESOURCE_FAILED);
	CU_ASSERT_EQUAL(R.concluded, 1);
	rnsc_resource_cancel(S.r, now); /* no-op once concluded */
	CU_ASSERT_EQUAL(S.concluded, 1);
	teardown_pair();

	/* receiver cancels: RCL, the sender is REJECTED */
	setup(500, 1 << 16);
	CU_ASSERT_EQUAL_FATAL(start(sizeof(d), d, NULL, 0), 0);
	for (int i = 0; i < 4; i++)
		deliver_one(&S, &R), deliver_one(&R, &S);
	rnsc_resource_cancel(R.r, now);
	CU_ASSERT_EQUAL(R.status, RNSC_RESOURCE_FAILED);
	pump();
	CU_ASSERT_EQUAL(S.status, RNSC_RESOURCE_REJECTED);
	teardown_pair();

	/* an advertisement rejected outright (Resource.reject) */
	setup(500, 1 << 16);
	CU_ASSERT_EQUAL_FATAL(start(sizeof(d), d, NULL, 0), 0);
	CU_ASSERT_EQUAL(S.qn, 1);
	CU_ASSERT_EQUAL(rnsc_resource_reject(&R.link, S.q[0].d, S.q[0].len), 0);
	CU_ASSERT_EQUAL(rnsc_resource_reject(&R.link, S.q[0].d, 3), RNSC_ERR_TRUNCATED);
	CU_ASSERT_EQUAL(rnsc_resource_reject(NULL, S.q[0].d, 3), RNSC_ERR_INVAL);
	free(S.q[0].d);
	S.qn = 0;
	pump();
	CU_ASSERT_EQUAL(S.status, RNSC_RESOURCE_REJECTED);
	teardown_pair();

	/* the link goes down under both ends */
	setup(500, 1 << 16);
	CU_ASSERT_EQUAL_FATAL(start(sizeof(d), d, NULL, 0), 0);
	deliver_one(&S, &R);
	rnsc_resource_link_closed(S.r);
	rnsc_resource_link_closed(R.r);
	CU_ASSERT(S.status == RNSC_RESOURCE_FAILED && R.status == RNSC_RESOURCE_FAILED);
	CU_ASSERT_EQUAL(R.qn, 1); /* only the first request, no RCL */
	rnsc_resource_link_closed(R.r);
	CU_ASSERT_EQUAL(R.concluded, 1);
	teardown_pair();
}

/* A response whose first advertisement is lost (the reference drops one that arrives before
 * it registered the request) is advertised once more after RNSC_RESOURCE_RESPONSE_READV_MS +
 * 3 RTTs, without spending a retry, instead of after timeout + 1 s. */
static int start_response(uint64_t size)
{
	static const uint8_t rid[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
	S.src = NULL;
	S.src_len = size;
	rnsc_resource_params p = {
		.size = size, .request_id = rid, .request_id_len = sizeof(rid), .is_response = 1};
	return rnsc_resource_send(C, &S.r, &S.link, &CB, &S, &p, now);
}

static void t_response_readvertised(void)
{
	rnsc_resource_stats st;
	/* the first advertisement is lost: the second one starts the transfer */
	setup(500, 1 << 16);
	S.drop_type = RNSC_PKT_DATA;
	S.drop_ctx = RNSC_CTX_RESOURCE_ADV;
	S.drop_n = 1;
	uint64_t t0 = now;
	CU_ASSERT_EQUAL_FATAL(start_response(3000), 0);
	uint64_t early = t0 + RNSC_RESOURCE_RESPONSE_READV_MS + 150; /* 3 x the link's 50 ms */
	CU_ASSERT_EQUAL(rnsc_resource_next_deadline(S.r), early);
	CU_ASSERT_EQUAL(S.qn, 0);
	run();
	CU_ASSERT_EQUAL(S.status, RNSC_RESOURCE_COMPLETE);
	CU_ASSERT_EQUAL(R.status, RNSC_RESOURCE_COMPLETE);
	CU_ASSERT(now < t0 + 300 + RNSC_RESOURCE_PROCESSING_GRACE_MS);
	rnsc_resource_stats_get(S.r, &st);
	CU_ASSERT_EQUAL(st.advertisements, 2);
	CU_ASSERT_EQUAL(st.early_advertisements, 1);
	CU_ASSERT_EQUAL(st.retries, 0);
	teardown_pair();

	/* nobody answers: the early one, then the reference's 4 retries at their usual times */
	setup(500, 0);
	t0 = now;
	CU_ASSERT_EQUAL_FATAL(start_response(3000), 0);
	now = rnsc_resource_next_deadline(S.r);
	CU_ASSERT_EQUAL(now, t0 + RNSC_RESOURCE_RESPONSE_READV_MS + 150);
	rnsc_resource_tick(S.r, now);
	CU_ASSERT_EQUAL(S.qn, 2);
	CU_ASSERT(S.q[0].len == S.q[1].len && memcmp(S.q[0].d, S.q[1].d, S.q[0].len) == 0);
	CU_ASSERT_EQUAL(rnsc_resource_next_deadline(S.r),
			t0 + 300 + RNSC_RESOURCE_PROCESSING_GRACE_MS);
	for (int i = 0; i < 10 && !rnsc_resource_done(S.r); i++) {
		now = rnsc_resource_next_deadline(S.r);
		rnsc_resource_tick(S.r, now);
	}
	CU_ASSERT_EQUAL(S.status, RNSC_RESOURCE_FAILED);
	rnsc_resource_stats_get(S.r, &st);
	CU_ASSERT_EQUAL(st.advertisements, 2 + RNSC_RESOURCE_MAX_ADV_RETRIES);
	CU_ASSERT_EQUAL(st.early_advertisements, 1);
	teardown_pair();

	/* answered in time: no second advertisement */
	setup(500, 1 << 16);
	CU_ASSERT_EQUAL_FATAL(start_response(3000), 0);
	run();
	CU_ASSERT_EQUAL(R.status, RNSC_RESOURCE_COMPLETE);
	rnsc_resource_stats_get(S.r, &st);
	CU_ASSERT_EQUAL(st.advertisements, 1);
	CU_ASSERT_EQUAL(st.early_advertisements, 0);
	teardown_pair();
}

static void t_timeouts(void)
{
	uint8_t d[5000];
	wt_rng(NULL, d, sizeof(d));
	/* nobody answers the advertisement: 4 re-advertisements, then FAILED */
	setup(500, 0);
	CU_ASSERT_EQUAL_FATAL(start(sizeof(d), d, NULL, 0), 0);
	uint64_t t0 = now;
	CU_ASSERT_EQUAL(rnsc_resource_next_deadline(S.r), t0 + 300 + 1000);
	for (int i = 0; i < 10 && !rnsc_resource_done(S.r); i++) {
		now = rnsc_resource_next_deadline(S.r);
		rnsc_resource_tick(S.r, now);
	}
	CU_ASSERT_EQUAL(S.status, RNSC_RESOURCE_FAILED);
	rnsc_resource_stats st;
	rnsc_resource_stats_get(S.r, &st);
	CU_ASSERT_EQUAL(st.advertisements, 1 + RNSC_RESOURCE_MAX_ADV_RETRIES);
	CU_ASSERT_EQUAL(S.q[S.qn - 1].ctx, RNSC_CTX_RESOURCE_ICL);
	teardown_pair();

	/* the sender never sees parts requested again: the receiver retries 16 times (with
	 * growing waits and a shrinking window), then FAILED with RCL */
	setup(500, 1 << 16);
	CU_ASSERT_EQUAL_FATAL(start(sizeof(d), d, NULL, 0), 0);
	deliver_one(&S, &R);
	R.drop_type = RNSC_PKT_DATA;
	R.drop_ctx = RNSC_CTX_RESOURCE_REQ;
	R.drop_n = 1000;
	free(R.q[0].d);
	R.qn = 0;
	for (int i = 0; i < 40 && !rnsc_resource_done(R.r); i++) {
		now = rnsc_resource_next_deadline(R.r);
		rnsc_resource_tick(R.r, now);
	}
	CU_ASSERT_EQUAL(R.status, RNSC_RESOURCE_FAILED);
	rnsc_resource_stats_get(R.r, &st);
	CU_ASSERT_EQUAL(st.retries, RNSC_RESOURCE_MAX_RETRIES);
	CU_ASSERT_EQUAL(rnsc_resource_window(R.r), RNSC_RESOURCE_WINDOW_MIN);
	CU_ASSERT_EQUAL(R.q[R.qn - 1].ctx, RNSC_CTX_RESOURCE_RCL);
	teardown_pair();

	/* the receiver vanishes mid-transfer: the sender gives up after
	 * rtt * 6 * 16 + 10 s + 68 s without requests */
	setup(500, 1 << 16);
	CU_ASSERT_EQUAL_FATAL(start(sizeof(d), d, NULL, 0), 0);
	deliver_one(&S, &R);
	deliver_one(&R, &S);
	CU_ASSERT_EQUAL(rnsc_resource_status(S.r), RNSC_RESOURCE_TRANSFERRING);
	uint64_t dl = rnsc_resource_next_deadline(S.r);
	CU_ASSERT(dl >= now + 78000 && dl <= now + 78000 + 5000);
	now = dl;
	rnsc_resource_tick(S.r, now);
	CU_ASSERT_EQUAL(S.status, RNSC_RESOURCE_FAILED);
	teardown_pair();
}

static void t_corrupt_segment(void)
{
	/* the assembled data does not match the hash: CORRUPT, nothing written, no proof */
	setup(500, 1 << 16);
	R.corrupt_decrypt = 1;
	uint8_t d[3000];
	wt_rng(NULL, d, sizeof(d));
	CU_ASSERT_EQUAL_FATAL(start(sizeof(d), d, NULL, 0), 0);
	pump();
	CU_ASSERT_EQUAL(R.status, RNSC_RESOURCE_CORRUPT);
	CU_ASSERT_EQUAL(R.sink_total, 0);
	CU_ASSERT_EQUAL(rnsc_resource_status(S.r), RNSC_RESOURCE_AWAITING_PROOF);
	teardown_pair();

	/* the sink refuses the data: FAILED with RCL, the sender is rejected */
	setup(500, 1 << 16);
	R.write_fail = 1;
	CU_ASSERT_EQUAL_FATAL(start(sizeof(d), d, NULL, 0), 0);
	pump();
	CU_ASSERT_EQUAL(R.status, RNSC_RESOURCE_FAILED);
	CU_ASSERT_EQUAL(S.status, RNSC_RESOURCE_REJECTED);
	teardown_pair();
}

/* A hand-made sender: one segment of zlen zero bytes, bz2-compressed, whose hash is right
 * (valid) or not. */
static void hand_made_compressed(size_t zlen, int valid)
{
	setup(16384, 1 << 16);
	uint8_t *zeros = calloc(1, zlen + 4);
	unsigned clen = 200000;
	uint8_t *payload = malloc(4 + clen);
	memset(payload, 0xAB, 4);
	CU_ASSERT_EQUAL_FATAL(BZ2_bzBuffToBuffCompress((char *)payload + 4, &clen, (char *)zeros,
						       (unsigned)zlen, 9, 0, 0),
			      BZ_OK);
	uint8_t rh[4] = {1, 2, 3, 4}, full[32], h[32];
	memcpy(zeros + zlen, rh, 4); /* the resource hash: SHA-256(data + random_hash) */
	(void)rnsc_sha256(C, h, zeros, zlen + 4);
	free(zeros);
	size_t elen = rnsc_token_len(4 + clen);
	uint8_t *enc = malloc(elen);
	CU_ASSERT_EQUAL_FATAL(rnsc_token_encrypt(&TOK, enc, elen, payload, 4 + clen), (int)elen);
	free(payload);
	size_t sdu = 16384 - 36, parts = (elen + sdu - 1) / sdu;
	CU_ASSERT_FATAL(parts <= RNSC_RESOURCE_HASHMAP_MAX_LEN);
	uint8_t hm[RNSC_RESOURCE_HASHMAP_MAX_LEN * 4];
	for (size_t i = 0; i < parts; i++) {
		size_t pl = elen - i * sdu < sdu ? elen - i * sdu : sdu;
		uint8_t *tmp = malloc(pl + 4);
		memcpy(tmp, enc + i * sdu, pl);
		memcpy(tmp + pl, rh, 4);
		(void)rnsc_sha256(C, full, tmp, pl + 4);
		memcpy(hm + i * 4, full, 4);
		free(tmp);
	}
	rnsc_resource_adv a = {.t = elen,
			       .d = zlen,
			       .n = parts,
			       .r_len = 4,
			       .i = 1,
			       .l = 1,
			       .f = 0x03,
			       .m = hm,
			       .m_len = parts * 4};
	if (valid) {
		memcpy(a.h, h, 32);
		memcpy(a.o, h, 32);
	} else {
		memset(a.h, 0x11, 32);
		memset(a.o, 0x11, 32);
	}
	memcpy(a.r, rh, 4);
	uint8_t adv[600];
	int al = rnsc_resource_adv_pack(&a, 0, adv, sizeof(adv));
	CU_ASSERT_FATAL(al > 0);
	CU_ASSERT_EQUAL_FATAL(rnsc_resource_accept(C, &R.r, &R.link, &CB, &R, adv, (size_t)al, now),
			      0);
	for (size_t i = 0; i < parts; i++) {
		size_t pl = elen - i * sdu < sdu ? elen - i * sdu : sdu;
		CU_ASSERT_EQUAL(rnsc_resource_packet(R.r, RNSC_PKT_DATA, RNSC_CTX_RESOURCE,
						     enc + i * sdu, pl, NULL, now),
				0);
	}
	free(enc);
}

/* Beyond the reference's max_decompressed_size (AUTO_COMPRESS_MAX_SIZE): rejected with RCL
 * and the link torn down, nothing written. */
static void t_decompression_limit(void)
{
	hand_made_compressed(RNSC_RESOURCE_MAX_DECOMPRESSED + 4096, 0);
	CU_ASSERT_EQUAL(R.status, RNSC_RESOURCE_CORRUPT);
	CU_ASSERT_EQUAL(R.teardowns, 1);
	CU_ASSERT_EQUAL(R.q[R.qn - 1].ctx, RNSC_CTX_RESOURCE_RCL);
	CU_ASSERT_EQUAL(R.sink_total, 0);
	teardown_pair();
}

/* 8 MiB that compress to a few kilobytes (above the old 4 MiB cap, within the reference's
 * limit): accepted, streamed to the sink whole and proved. A wrong hash is caught before
 * anything is written. */
static void t_decompression_large(void)
{
	size_t zlen = 8u * 1024 * 1024;
	hand_made_compressed(zlen, 1);
	CU_ASSERT_EQUAL(R.status, RNSC_RESOURCE_COMPLETE);
	CU_ASSERT_EQUAL(R.sink_total, zlen);
	CU_ASSERT_EQUAL(R.teardowns, 0);
	CU_ASSERT_EQUAL(R.q[R.qn - 1].type, RNSC_PKT_PROOF);
	teardown_pair();
	hand_made_compressed(zlen, 0);
	CU_ASSERT_EQUAL(R.status, RNSC_RESOURCE_CORRUPT);
	CU_ASSERT_EQUAL(R.sink_total, 0);
	teardown_pair();
}

/* ---- advertisement ---------------------------------------------------------------------- */

static size_t adv_map(uint8_t *out, size_t cap, const char *skip, const char *extra)
{
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, out, cap);
	static const char keys[] = "tdnhroilqfm";
	size_t n = 0;
	for (const char *k = keys; *k; k++)
		n += !strchr(skip, *k);
	rnsc_mp_write_map(&w, n + (extra ? 1 : 0));
	uint8_t h[32] = {0};
	for (const char *k = keys; *k; k++) {
		if (strchr(skip, *k))
			continue;
		char ks[2] = {*k, 0};
		rnsc_mp_write_cstr(&w, ks);
		switch (*k) {
		case 'h':
		case 'o':
			rnsc_mp_write_bin(&w, h, 32);
			break;
		case 'r':
			rnsc_mp_write_bin(&w, h, 4);
			break;
		case 'q':
			rnsc_mp_write_nil(&w);
			break;
		case 'm':
			rnsc_mp_write_bin(&w, h, 8);
			break;
		case 'i':
		case 'l':
			rnsc_mp_write_uint(&w, 1);
			break;
		case 't':
			rnsc_mp_write_uint(&w, 1000);
			break;
		default:
			rnsc_mp_write_uint(&w, 100);
			break;
		}
	}
	if (extra) {
		rnsc_mp_write_cstr(&w, extra);
		rnsc_mp_write_array(&w, 1);
		rnsc_mp_write_nil(&w);
	}
	return (size_t)rnsc_mp_writer_finish(&w);
}

static void t_adv(void)
{
	uint8_t buf[600];
	rnsc_resource_adv a;
	size_t n = adv_map(buf, sizeof(buf), "", NULL);
	CU_ASSERT_EQUAL(rnsc_resource_adv_unpack(&a, buf, n), 0);
	CU_ASSERT(a.t == 1000 && a.m_len == 8 && !a.has_q && a.r_len == 4);
	CU_ASSERT(!rnsc_resource_adv_is_request(&a) && !rnsc_resource_adv_is_response(&a));
	/* extra keys are ignored, a missing key is not */
	n = adv_map(buf, sizeof(buf), "", "zz");
	CU_ASSERT_EQUAL(rnsc_resource_adv_unpack(&a, buf, n), 0);
	n = adv_map(buf, sizeof(buf), "", "x");
	CU_ASSERT_EQUAL(rnsc_resource_adv_unpack(&a, buf, n), 0);
	for (const char *k = "tdnhroilqfm"; *k; k++) {
		char skip[2] = {*k, 0};
		n = adv_map(buf, sizeof(buf), skip, NULL);
		CU_ASSERT_EQUAL(rnsc_resource_adv_unpack(&a, buf, n), RNSC_ERR_MALFORMED);
	}
	/* not a map, truncated, wrong types, sizes, limits */
	CU_ASSERT_EQUAL(rnsc_resource_adv_unpack(&a, (const uint8_t *)"\x91\x01", 2),
			RNSC_ERR_MALFORMED);
	n = adv_map(buf, sizeof(buf), "", NULL);
	CU_ASSERT(rnsc_resource_adv_unpack(&a, buf, n - 3) != 0);
	CU_ASSERT_EQUAL(rnsc_resource_adv_unpack(NULL, buf, n), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_resource_adv_unpack(&a, NULL, 5), RNSC_ERR_INVAL);
	rnsc_resource_adv g = {.t = 10, .d = 10, .n = 1, .r_len = 4, .i = 1, .l = 1, .f = 1};
	uint8_t hm[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	g.m = hm;
	g.m_len = 4;
	int len = rnsc_resource_adv_pack(&g, 0, buf, sizeof(buf));
	CU_ASSERT(len > 0);
	CU_ASSERT_EQUAL(rnsc_resource_adv_unpack(&a, buf, (size_t)len), 0);
	CU_ASSERT(a.m_len == 4 && memcmp(a.m, hm, 4) == 0);
	g.t = 3ull * RNSC_RESOURCE_MAX_EFFICIENT_SIZE + 1;
	len = rnsc_resource_adv_pack(&g, 0, buf, sizeof(buf));
	CU_ASSERT_EQUAL(rnsc_resource_adv_unpack(&a, buf, (size_t)len), RNSC_ERR_TOOBIG);
	g.t = 10;
	g.i = 2; /* i > l */
	len = rnsc_resource_adv_pack(&g, 0, buf, sizeof(buf));
	CU_ASSERT_EQUAL(rnsc_resource_adv_unpack(&a, buf, (size_t)len), RNSC_ERR_MALFORMED);
	g.i = 1;
	g.has_q = 1;
	g.q_len = 16;
	memset(g.q, 0x42, 16);
	g.f = 0x09;
	len = rnsc_resource_adv_pack(&g, 0, buf, sizeof(buf));
	CU_ASSERT_EQUAL(rnsc_resource_adv_unpack(&a, buf, (size_t)len), 0);
	CU_ASSERT(a.has_q && a.q_len == 16 && rnsc_resource_adv_is_request(&a) &&
		  !rnsc_resource_adv_is_response(&a));
	g.f = 0x11;
	len = rnsc_resource_adv_pack(&g, 0, buf, sizeof(buf));
	CU_ASSERT_EQUAL(rnsc_resource_adv_unpack(&a, buf, (size_t)len), 0);
	CU_ASSERT(rnsc_resource_adv_is_response(&a) && !rnsc_resource_adv_is_request(&a));
	/* pack: bad arguments, a short buffer, the second hashmap segment is empty here */
	CU_ASSERT_EQUAL(rnsc_resource_adv_pack(NULL, 0, buf, sizeof(buf)), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_resource_adv_pack(&g, 0, buf, 10), RNSC_ERR_BUFSIZE);
	g.n = 5; /* more parts than map hashes given */
	CU_ASSERT_EQUAL(rnsc_resource_adv_pack(&g, 0, buf, sizeof(buf)), RNSC_ERR_INVAL);
	g.n = 1;
	len = rnsc_resource_adv_pack(&g, 3, buf, sizeof(buf));
	CU_ASSERT_EQUAL(rnsc_resource_adv_unpack(&a, buf, (size_t)len), 0);
	CU_ASSERT_EQUAL(a.m_len, 0);
	/* a map hash list that is not whole, an r of 40 bytes, a q of the wrong type */
	uint8_t bad[700];
	rnsc_mp_writer w;
	/* variants: m of 3 bytes, r of 40, q a str, h of 5, t negative */
	for (size_t v = 0; v < 5; v++) {
		rnsc_mp_writer_init(&w, bad, sizeof(bad));
		rnsc_mp_write_map(&w, 11);
		uint8_t z[40] = {0};
		for (const char *k = "tdnhroilqfm"; *k; k++) {
			char ks[2] = {*k, 0};
			rnsc_mp_write_cstr(&w, ks);
			if (*k == 'm')
				rnsc_mp_write_bin(&w, z, v == 0 ? 3 : 4);
			else if (*k == 'r')
				rnsc_mp_write_bin(&w, z, v == 1 ? 40 : 4);
			else if (*k == 'q')
				v == 2 ? rnsc_mp_write_cstr(&w, "x") : rnsc_mp_write_nil(&w);
			else if (*k == 'h')
				rnsc_mp_write_bin(&w, z, v == 3 ? 5 : 32);
			else if (*k == 'o')
				rnsc_mp_write_bin(&w, z, 32);
			else if (*k == 't' && v == 4)
				rnsc_mp_write_int(&w, -1);
			else
				rnsc_mp_write_uint(&w, 1);
		}
		int bl = rnsc_mp_writer_finish(&w);
		CU_ASSERT(rnsc_resource_adv_unpack(&a, bad, (size_t)bl) != 0);
	}
	CU_ASSERT(!rnsc_resource_adv_is_request(NULL) && !rnsc_resource_adv_is_response(NULL));
}

/* ---- receiver-side protocol edges ------------------------------------------------------ */

static void t_receiver_edges(void)
{
	uint8_t d[60000];
	wt_rng(NULL, d, sizeof(d));
	setup(500, 1 << 17);
	CU_ASSERT_EQUAL_FATAL(start(sizeof(d), d, NULL, 0), 0);
	/* an advertisement with no map hash is refused */
	rnsc_resource *x = NULL;
	uint8_t buf[600];
	size_t n = adv_map(buf, sizeof(buf), "", NULL);
	CU_ASSERT_EQUAL(rnsc_resource_accept(C, &x, &R.link, &CB, &R, buf, n, now), 0);
	rnsc_resource_del(x);
	for (size_t i = 0; i < R.qn; i++)
		free(R.q[i].d);
	R.qn = 0;
	rnsc_resource_adv g = {.t = 1000, .d = 10, .n = 3, .r_len = 4, .i = 1, .l = 1, .f = 1};
	uint8_t hm[4 * 80] = {0};
	g.m = hm;
	g.m_len = 0;
	g.n = 0;
	int len = rnsc_resource_adv_pack(&g, 0, buf, sizeof(buf));
	CU_ASSERT_EQUAL(rnsc_resource_accept(C, &x, &R.link, &CB, &R, buf, (size_t)len, now),
			RNSC_ERR_MALFORMED);
	/* more map hashes than parts: the reference's IndexError */
	g.n = 80;
	g.m_len = sizeof(hm);
	len = rnsc_resource_adv_pack(&g, 0, buf, sizeof(buf));
	CU_ASSERT_EQUAL(rnsc_resource_accept(C, &x, &R.link, &CB, &R, buf, (size_t)len, now),
			RNSC_ERR_MALFORMED);
	CU_ASSERT_EQUAL(rnsc_resource_accept(C, &x, &R.link, NULL, &R, buf, (size_t)len, now),
			RNSC_ERR_INVAL);
	/* the real transfer, with junk thrown at both ends on the way */
	deliver_one(&S, &R);
	uint8_t junk[64] = {0};
	CU_ASSERT_EQUAL(
		rnsc_resource_packet(R.r, RNSC_PKT_DATA, RNSC_CTX_RESOURCE_HMU, junk, 8, NULL, now),
		RNSC_ERR_MALFORMED);
	CU_ASSERT_EQUAL(rnsc_resource_packet(R.r, RNSC_PKT_DATA, RNSC_CTX_RESOURCE_HMU, junk, 40,
					     NULL, now),
			RNSC_ERR_NOTFOUND);
	CU_ASSERT_EQUAL(rnsc_resource_packet(R.r, RNSC_PKT_DATA, RNSC_CTX_RESOURCE_REQ, junk, 40,
					     NULL, now),
			RNSC_ERR_NOTFOUND);
	CU_ASSERT_EQUAL(rnsc_resource_packet(R.r, RNSC_PKT_DATA, RNSC_CTX_RESOURCE_RCL, junk, 40,
					     NULL, now),
			RNSC_ERR_NOTFOUND);
	CU_ASSERT_EQUAL(
		rnsc_resource_packet(R.r, RNSC_PKT_DATA, RNSC_CTX_NONE, junk, 40, NULL, now),
		RNSC_ERR_NOTFOUND);
	CU_ASSERT_EQUAL(
		rnsc_resource_packet(S.r, RNSC_PKT_DATA, RNSC_CTX_RESOURCE, junk, 40, NULL, now),
		RNSC_ERR_NOTFOUND);
	CU_ASSERT_EQUAL(rnsc_resource_packet(S.r, RNSC_PKT_DATA, RNSC_CTX_RESOURCE_HMU, junk, 40,
					     NULL, now),
			RNSC_ERR_NOTFOUND);
	CU_ASSERT_EQUAL(
		rnsc_resource_packet(S.r, RNSC_PKT_DATA, RNSC_CTX_RESOURCE_REQ, junk, 0, NULL, now),
		RNSC_ERR_MALFORMED);
	CU_ASSERT_EQUAL(rnsc_resource_packet(S.r, RNSC_PKT_DATA, RNSC_CTX_RESOURCE_REQ, junk, 20,
					     NULL, now),
			RNSC_ERR_MALFORMED);
	CU_ASSERT_EQUAL(rnsc_resource_packet(S.r, RNSC_PKT_DATA, RNSC_CTX_RESOURCE_RCL, junk, 20,
					     NULL, now),
			RNSC_ERR_MALFORMED);
	CU_ASSERT_EQUAL(rnsc_resource_packet(S.r, RNSC_PKT_DATA, RNSC_CTX_RESOURCE_RCL, junk, 40,
					     NULL, now),
			RNSC_ERR_NOTFOUND);
	CU_ASSERT_EQUAL(rnsc_resource_packet(NULL, 0, 0, junk, 4, NULL, now), RNSC_ERR_INVAL);
	/* an HMU the receiver did not ask for is ignored; an unparseable one too */
	uint8_t hmu[64];
	memcpy(hmu, rnsc_resource_hash(R.r), 32);
	memcpy(hmu + 32, "\x92\x01\xc4\x04\x01\x02\x03\x04", 8);
	CU_ASSERT_EQUAL(
		rnsc_resource_packet(R.r, RNSC_PKT_DATA, RNSC_CTX_RESOURCE_HMU, hmu, 40, NULL, now),
		0);
	/* a duplicated request (same packet hash) is served once */
	CU_ASSERT_EQUAL(R.qn, 1);
	uint8_t ph[32] = {9};
	rnsc_resource_stats st;
	(void)rnsc_resource_packet(S.r, RNSC_PKT_DATA, RNSC_CTX_RESOURCE_REQ, R.q[0].d, R.q[0].len,
				   ph, now);
	rnsc_resource_stats_get(S.r, &st);
	uint64_t parts = st.parts;
	CU_ASSERT_EQUAL(parts, RNSC_RESOURCE_WINDOW);
	(void)rnsc_resource_packet(S.r, RNSC_PKT_DATA, RNSC_CTX_RESOURCE_REQ, R.q[0].d, R.q[0].len,
				   ph, now);
	rnsc_resource_stats_get(S.r, &st);
	CU_ASSERT_EQUAL(st.parts, parts);
	free(R.q[0].d);
	R.qn = 0;
	run();
	CU_ASSERT_EQUAL(R.status, RNSC_RESOURCE_COMPLETE);
	CU_ASSERT(R.sink_len == sizeof(d) && memcmp(R.sink, d, sizeof(d)) == 0);
	teardown_pair();

	/* an HMU with an empty hashmap cancels the transfer */
	setup(500, 1 << 17);
	CU_ASSERT_EQUAL_FATAL(start(sizeof(d), d, NULL, 0), 0);
	S.drop_type = RNSC_PKT_DATA;
	S.drop_ctx = RNSC_CTX_RESOURCE_HMU;
	S.drop_n = 1000;
	pump();
	CU_ASSERT_EQUAL(rnsc_resource_status(R.r), RNSC_RESOURCE_TRANSFERRING);
	memcpy(hmu, rnsc_resource_hash(R.r), 32);
	memcpy(hmu + 32, "\x92\x01\xa1", 3); /* unparseable: dropped */
	CU_ASSERT_EQUAL(
		rnsc_resource_packet(R.r, RNSC_PKT_DATA, RNSC_CTX_RESOURCE_HMU, hmu, 35, NULL, now),
		0);
	CU_ASSERT_EQUAL(rnsc_resource_status(R.r), RNSC_RESOURCE_TRANSFERRING);
	memcpy(hmu + 32, "\x92\x01\xc4\x00", 4);
	CU_ASSERT_EQUAL(
		rnsc_resource_packet(R.r, RNSC_PKT_DATA, RNSC_CTX_RESOURCE_HMU, hmu, 36, NULL, now),
		0);
	CU_ASSERT_EQUAL(R.status, RNSC_RESOURCE_FAILED);
	/* and an HMU naming hashes beyond the parts is dropped */
	teardown_pair();
	setup(500, 1 << 17);
	CU_ASSERT_EQUAL_FATAL(start(sizeof(d), d, NULL, 0), 0);
	S.drop_type = RNSC_PKT_DATA;
	S.drop_ctx = RNSC_CTX_RESOURCE_HMU;
	S.drop_n = 1000;
	pump();
	memcpy(hmu, rnsc_resource_hash(R.r), 32);
	memcpy(hmu + 32, "\x92\x50\xc4\x04\x01\x02\x03\x04", 8);
	CU_ASSERT_EQUAL(
		rnsc_resource_packet(R.r, RNSC_PKT_DATA, RNSC_CTX_RESOURCE_HMU, hmu, 40, NULL, now),
		0);
	CU_ASSERT_EQUAL(rnsc_resource_status(R.r), RNSC_RESOURCE_TRANSFERRING);
	teardown_pair();

	/* a request whose last map hash is not at a hashmap boundary: sequencing error */
	setup(500, 1 << 17);
	CU_ASSERT_EQUAL_FATAL(start(sizeof(d), d, NULL, 0), 0);
	uint8_t req[1 + 4 + 32];
	req[0] = 0xFF;
	memset(req + 1, 0xEE, 4); /* matches nothing: part_index runs to the scope's end */
	memcpy(req + 5, rnsc_resource_hash(S.r), 32);
	CU_ASSERT_EQUAL(rnsc_resource_packet(S.r, RNSC_PKT_DATA, RNSC_CTX_RESOURCE_REQ, req,
					     sizeof(req), NULL, now),
			0);
	CU_ASSERT_EQUAL(S.status, RNSC_RESOURCE_FAILED);
	teardown_pair();
}

/* ---- API and allocation failures ------------------------------------------------------ */

static void t_api(void)
{
	CU_ASSERT_STRING_EQUAL(rnsc_resource_status_name(RNSC_RESOURCE_AWAITING_PROOF),
			       "AWAITING_PROOF");
	CU_ASSERT_PTR_NULL(rnsc_resource_status_name(10));
	CU_ASSERT_PTR_NULL(rnsc_resource_status_name(-1));
	CU_ASSERT_EQUAL(rnsc_resource_status(NULL), RNSC_ERR_INVAL);
	CU_ASSERT(rnsc_resource_done(NULL));
	CU_ASSERT(!rnsc_resource_is_initiator(NULL) && !rnsc_resource_hash(NULL) &&
		  !rnsc_resource_original_hash(NULL) && !rnsc_resource_total_size(NULL) &&
		  !rnsc_resource_transfer_size(NULL) && !rnsc_resource_parts(NULL) &&
		  !rnsc_resource_segment_index(NULL) && !rnsc_resource_segments(NULL) &&
		  !rnsc_resource_flags(NULL) && !rnsc_resource_compressed(NULL) &&
		  !rnsc_resource_window(NULL) && rnsc_resource_eifr(NULL) == 0 &&
		  rnsc_resource_progress(NULL) == 0 && rnsc_resource_segment_progress(NULL) == 0);
	size_t ql = 5;
	CU_ASSERT_PTR_NULL(rnsc_resource_request_id(NULL, &ql));
	CU_ASSERT_EQUAL(ql, 0);
	CU_ASSERT_EQUAL(rnsc_resource_next_deadline(NULL), UINT64_MAX);
	rnsc_resource_tick(NULL, 0);
	rnsc_resource_cancel(NULL, 0);
	rnsc_resource_link_closed(NULL);
	rnsc_resource_del(NULL);
	rnsc_resource_stats_get(NULL, NULL);
	CU_ASSERT_EQUAL(rnsc_resource_accept_segment(NULL, NULL, 0), RNSC_ERR_INVAL);

	setup(500, 1 << 16);
	rnsc_resource *r = NULL;
	rnsc_resource_params p = {.size = 10};
	CU_ASSERT_EQUAL(rnsc_resource_send(NULL, &r, &S.link, &CB, &S, &p, now), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_resource_send(C, &r, &S.link, NULL, &S, &p, now), RNSC_ERR_INVAL);
	p.request_id = (const uint8_t *)"x";
	CU_ASSERT_EQUAL(rnsc_resource_send(C, &r, &S.link, &CB, &S, &p, now), RNSC_ERR_INVAL);
	p.request_id = NULL;
	p.metadata = (const uint8_t *)"x";
	p.metadata_len = RNSC_RESOURCE_METADATA_MAX_SIZE + 1;
	CU_ASSERT_EQUAL(rnsc_resource_send(C, &r, &S.link, &CB, &S, &p, now), RNSC_ERR_TOOBIG);
	p.metadata_len = 0;
	p.metadata = NULL;
	S.read_fail = 1;
	CU_ASSERT_EQUAL(rnsc_resource_send(C, &r, &S.link, &CB, &S, &p, now), RNSC_ERR_IO);
	S.read_fail = 0;
	S.fail_send = 1;
	CU_ASSERT_EQUAL(rnsc_resource_send(C, &r, &S.link, &CB, &S, &p, now), RNSC_ERR_STATE);
	S.fail_send = 0;
	/* a request id and the response flag go into the advertisement */
	uint8_t rid[16];
	memset(rid, 0x5A, sizeof(rid));
	p.request_id = rid;
	p.request_id_len = sizeof(rid);
	p.is_response = 1;
	p.timeout_ms = 12345;
	CU_ASSERT_EQUAL_FATAL(rnsc_resource_send(C, &S.r, &S.link, &CB, &S, &p, now), 0);
	CU_ASSERT_EQUAL(rnsc_resource_flags(S.r), 0x11);
	/* a response's first deadline is its early re-advertisement (t_response_readvertised) */
	CU_ASSERT_EQUAL(rnsc_resource_next_deadline(S.r),
			now + RNSC_RESOURCE_RESPONSE_READV_MS + 150);
	const uint8_t *q = rnsc_resource_request_id(S.r, &ql);
	CU_ASSERT(q && ql == 16 && memcmp(q, rid, 16) == 0);
	rnsc_resource_adv a;
	CU_ASSERT_EQUAL(rnsc_resource_adv_unpack(&a, S.q[0].d, S.q[0].len), 0);
	CU_ASSERT(rnsc_resource_adv_is_response(&a) && a.q_len == 16);
	pump();
	q = rnsc_resource_request_id(R.r, &ql);
	CU_ASSERT(q && ql == 16 && memcmp(q, rid, 16) == 0);
	/* a segment advertisement that does not continue R's transfer is not taken */
	CU_ASSERT_EQUAL(rnsc_resource_accept_segment(R.r, &a, now), 0);
	CU_ASSERT_EQUAL(rnsc_resource_accept_segment(S.r, &a, now), 0);
	run();
	CU_ASSERT_EQUAL(R.status, RNSC_RESOURCE_COMPLETE);
	teardown_pair();

	/* a queued resource is prepared but waits for rnsc_resource_advertise() */
	setup(500, 1 << 16);
	uint8_t qd[2000];
	wt_rng(NULL, qd, sizeof(qd));
	S.src = qd;
	rnsc_resource_params qp = {.size = sizeof(qd), .queued = 1};
	CU_ASSERT_EQUAL_FATAL(rnsc_resource_send(C, &S.r, &S.link, &CB, &S, &qp, now), 0);
	CU_ASSERT_EQUAL(rnsc_resource_status(S.r), RNSC_RESOURCE_QUEUED);
	CU_ASSERT_EQUAL(S.qn, 0);
	CU_ASSERT_EQUAL(rnsc_resource_next_deadline(S.r), UINT64_MAX);
	CU_ASSERT_EQUAL(rnsc_resource_advertise(S.r, now), 0);
	CU_ASSERT_EQUAL(rnsc_resource_advertise(S.r, now), RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(rnsc_resource_advertise(NULL, now), RNSC_ERR_INVAL);
	run();
	CU_ASSERT_EQUAL(R.status, RNSC_RESOURCE_COMPLETE);
	CU_ASSERT(R.sink_len == sizeof(qd) && memcmp(R.sink, qd, sizeof(qd)) == 0);
	teardown_pair();
	setup(500, 1 << 16);
	S.src = qd;
	CU_ASSERT_EQUAL_FATAL(rnsc_resource_send(C, &S.r, &S.link, &CB, &S, &qp, now), 0);
	S.fail_send = 1;
	CU_ASSERT_EQUAL(rnsc_resource_advertise(S.r, now), RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(S.status, RNSC_RESOURCE_FAILED);
	teardown_pair();

	/* allocation failures anywhere in send / accept: clean errors, nothing leaks */
	uint8_t d[30000];
	wt_rng(NULL, d, sizeof(d));
	for (unsigned long k = 1; k < 40; k++) {
		setup(500, 1 << 16);
		rnsc_ctx_fail_alloc_after(C, k);
		int rc = start(sizeof(d), d, "m", 1);
		rnsc_ctx_fail_alloc_after(C, 0);
		if (rc == 0) {
			rnsc_ctx_fail_alloc_after(C, k);
			faulting = 1;
			deliver_one(&S, &R);
			faulting = 0;
			rnsc_ctx_fail_alloc_after(C, 0);
			run();
		} else {
			CU_ASSERT_EQUAL(rc, RNSC_ERR_NOMEM);
		}
		teardown_pair();
	}
}

int main(void)
{
	(void)eqhex;
	static const wt_test tests[] = {
		{"small transfer", t_small},
		{"metadata, bz2, hashmap updates", t_metadata_compressed_hmu},
		{"3 and 64 segments", t_segments},
		{"an oversized remembered window", t_oversized_last_window},
		{"next segment prepared while the proof is awaited", t_prepared_ahead},
		{"next segment prepared in slices during the transfer", t_prepared_in_slices},
		{"fast and very slow rates", t_rates},
		{"dropped first request is retried", t_dropped_first_request},
		{"corrupt and lost parts, lost HMU", t_corrupt_and_lost_parts},
		{"bad proofs", t_bad_proof},
		{"cancel, reject, link closed", t_cancel_and_reject},
		{"watchdog timeouts", t_timeouts},
		{"corrupt segment, refusing sink", t_corrupt_segment},
		{"decompression limit", t_decompression_limit},
		{"large compressed segment, streamed", t_decompression_large},
		{"advertisement parser", t_adv},
		{"a lost response advertisement is sent again early", t_response_readvertised},
		{"receiver and sender edges", t_receiver_edges},
		{"API edges, allocation failures", t_api},
	};
	return wt_main("resource", tests, sizeof(tests) / sizeof(tests[0]));
}
