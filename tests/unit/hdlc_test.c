/* SPDX-License-Identifier: MIT */
/*
 * CUnit suite for src/framing/hdlc.c. Encoder vectors were produced with the
 * reference (rns 1.5.4, RNS.Interfaces.util.HDLC.frame); decoder
 * expectations follow its ReceiveBuffer. The exit status is the failure
 * count (tests/common/cu_run.h: clamped below automake's 77 = skip).
 */
#include <CUnit/Basic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hdlc.h"
#include "cu_run.h"

/* ---- helpers --------------------------------------------------------- */

static uint64_t rng_state;

static void rng_seed(uint64_t s)
{
	rng_state = s ? s : 0x9e3779b97f4a7c15ull;
}

static uint64_t rng_next(void)
{
	/* xorshift64*: deterministic across platforms, good enough for tests */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static size_t rng_below(size_t n)
{
	return n ? (size_t)(rng_next() % n) : 0;
}

/* Payload bytes biased towards the two special bytes and their escaped
 * forms, so escapes land everywhere, including chunk edges. */
static uint8_t rng_byte(void)
{
	static const uint8_t interesting[] = {0x7e, 0x7d, 0x5e, 0x5d, 0x20};
	if (rng_below(3) == 0)
		return interesting[rng_below(sizeof(interesting))];
	return (uint8_t)rng_next();
}

/* Collects delivered frames back to back. */
typedef struct sink {
	uint8_t data[1 << 16];
	size_t used;
	size_t lens[1024];
	size_t n;
	size_t stop_at; /* return -99 when frame number stop_at (1-based) arrives */
} sink;

static int sink_cb(void *ud, const uint8_t *f, size_t len)
{
	sink *s = ud;

	CU_ASSERT_FATAL(s->n < 1024 && s->used + len <= sizeof(s->data));
	memcpy(s->data + s->used, f, len);
	s->used += len;
	s->lens[s->n++] = len;
	if (s->stop_at && s->n == s->stop_at)
		return -99;
	return 0;
}

static int sink_equal(const sink *a, const sink *b)
{
	return a->n == b->n && a->used == b->used &&
	       memcmp(a->lens, b->lens, a->n * sizeof(a->lens[0])) == 0 &&
	       memcmp(a->data, b->data, a->used) == 0;
}

static sink *sink_new(void)
{
	sink *s = calloc(1, sizeof(*s));
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	return s;
}

static uint8_t *hexbytes(const char *hex, size_t *len)
{
	size_t n = strlen(hex) / 2, i;
	uint8_t *out = malloc(n ? n : 1);

	for (i = 0; i < n; i++) {
		unsigned v;
		sscanf(hex + 2 * i, "%2x", &v);
		out[i] = (uint8_t)v;
	}
	*len = n;
	return out;
}

static void feed_all(rnsc_hdlc_decoder *d, const uint8_t *p, size_t len, sink *s)
{
	CU_ASSERT_EQUAL(rnsc_hdlc_decoder_feed(d, p, len, sink_cb, s), 0);
}

/* ---- encoder --------------------------------------------------------- */

static void test_encode_reference(void)
{
	/* payload -> bytes of the reference's HDLC.frame() */
	static const char *vec[][2] = {
		{"", "7e7e"},
		{"017e027d03", "7e017d5e027d5d037e"},
		{"7d5e", "7e7d5d5e7e"},
		{"7e7e", "7e7d5e7d5e7e"},
		{"7d5d7e5e", "7e7d5d5d7d5e5e7e"},
	};
	size_t i;

	for (i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		size_t plen, elen;
		uint8_t *p = hexbytes(vec[i][0], &plen);
		uint8_t *e = hexbytes(vec[i][1], &elen);
		uint8_t out[64];
		int n = rnsc_hdlc_encode(out, sizeof(out), p, plen);

		CU_ASSERT_EQUAL(n, (int)elen);
		CU_ASSERT(n > 0 && memcmp(out, e, elen) == 0);
		CU_ASSERT_EQUAL(rnsc_hdlc_encoded_len(p, plen), elen);
		free(p);
		free(e);
	}
}

static void test_encode_sizes(void)
{
	uint8_t p[3] = {0x7e, 0x41, 0x7d};
	uint8_t out[16];

	CU_ASSERT_EQUAL(rnsc_hdlc_encoded_max(0), 2);
	CU_ASSERT_EQUAL(rnsc_hdlc_encoded_max(10), 22);
	CU_ASSERT_EQUAL(rnsc_hdlc_encoded_max(SIZE_MAX / 2), SIZE_MAX);
	CU_ASSERT_EQUAL(rnsc_hdlc_encoded_len(p, 3), 7);
	CU_ASSERT_EQUAL(rnsc_hdlc_encoded_len(NULL, 0), 2);

	/* one byte short: nothing written at all */
	memset(out, 0xaa, sizeof(out));
	CU_ASSERT_EQUAL(rnsc_hdlc_encode(out, 6, p, 3), RNSC_ERR_BUFSIZE);
	CU_ASSERT_EQUAL(out[0], 0xaa);
	CU_ASSERT_EQUAL(rnsc_hdlc_encode(out, 7, p, 3), 7);
	CU_ASSERT_EQUAL(out[7], 0xaa);
	CU_ASSERT_EQUAL(rnsc_hdlc_encode(NULL, 0, p, 3), RNSC_ERR_BUFSIZE);
	CU_ASSERT_EQUAL(rnsc_hdlc_encode(NULL, 5, p, 3), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_hdlc_encode(out, sizeof(out), NULL, 1), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_hdlc_encode(out, sizeof(out), NULL, 0), 2);
}

/* ---- decoder --------------------------------------------------------- */

static void test_decoder_args(void)
{
	rnsc_hdlc_decoder d;
	uint8_t buf[8];
	sink *s = sink_new();

	CU_ASSERT_EQUAL(rnsc_hdlc_decoder_init(NULL, buf, 8), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_hdlc_decoder_init(&d, NULL, 8), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_hdlc_decoder_init(&d, buf, 0), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_hdlc_decoder_init(&d, buf, 8), 0);
	CU_ASSERT_EQUAL(rnsc_hdlc_decoder_set_min(&d, 9), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_hdlc_decoder_set_min(&d, 8), 0);
	CU_ASSERT_EQUAL(rnsc_hdlc_decoder_set_min(&d, 0), 0);
	CU_ASSERT_EQUAL(d.min_frame, 1);
	CU_ASSERT_EQUAL(rnsc_hdlc_decoder_set_min(NULL, 1), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_hdlc_decoder_feed(NULL, buf, 1, sink_cb, s), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_hdlc_decoder_feed(&d, NULL, 1, sink_cb, s), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_hdlc_decoder_feed(&d, buf, 1, NULL, s), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_hdlc_decoder_feed(&d, NULL, 0, sink_cb, s), 0);
	rnsc_hdlc_decoder_reset(NULL);
	free(s);
}

/* The reference's ReceiveBuffer on this stream yields exactly these frames
 * (checked with rns 1.5.4): garbage before the first flag is dropped, an
 * unknown escape and an ESC before the closing flag stay literal. */
static void test_decoder_reference_quirks(void)
{
	rnsc_hdlc_decoder d;
	uint8_t buf[10];
	size_t len;
	uint8_t *in = hexbytes("aa7e017d417e7e027d7e7d7d5e7e", &len);
	sink *s = sink_new();

	rnsc_hdlc_decoder_init(&d, buf, sizeof(buf));
	feed_all(&d, in, len, s);
	CU_ASSERT_EQUAL(s->n, 3);
	CU_ASSERT_EQUAL(s->used, 3 + 2 + 2);
	CU_ASSERT(memcmp(s->data,
			 "\x01\x7d\x41"
			 "\x02\x7d"
			 "\x7d\x7e",
			 7) == 0);
	CU_ASSERT_EQUAL(d.stats.garbage, 1);
	CU_ASSERT_EQUAL(d.stats.empty, 1);
	CU_ASSERT_EQUAL(d.stats.bad_escapes, 3);
	CU_ASSERT_EQUAL(d.stats.frames, 3);
	CU_ASSERT_EQUAL(d.stats.bytes, 7);
	free(in);
	free(s);
}

static void test_decoder_shared_flags_and_empty(void)
{
	rnsc_hdlc_decoder d;
	uint8_t buf[16];
	/* one flag between frames is enough; runs of flags are empty frames */
	static const uint8_t in[] = {0x7e, 0x7e, 0x7e, 'a', 0x7e, 'b', 'c', 0x7e, 0x7e};
	sink *s = sink_new();

	rnsc_hdlc_decoder_init(&d, buf, sizeof(buf));
	feed_all(&d, in, sizeof(in), s);
	CU_ASSERT_EQUAL(s->n, 2);
	CU_ASSERT(memcmp(s->data, "abc", 3) == 0);
	CU_ASSERT_EQUAL(d.stats.empty, 3);
	CU_ASSERT_EQUAL(d.stats.garbage, 0);
	free(s);
}

static void test_decoder_min_frame(void)
{
	rnsc_hdlc_decoder d;
	uint8_t buf[64], frame[64], enc[140];
	sink *s = sink_new();
	int n;

	rnsc_hdlc_decoder_init(&d, buf, sizeof(buf));
	CU_ASSERT_EQUAL(rnsc_hdlc_decoder_set_min(&d, RNSC_HDLC_REF_MIN_FRAME), 0);
	memset(frame, 0x7e, sizeof(frame));
	n = rnsc_hdlc_encode(enc, sizeof(enc), frame, 19); /* HEADER_MINSIZE: dropped */
	feed_all(&d, enc, (size_t)n, s);
	n = rnsc_hdlc_encode(enc, sizeof(enc), frame, 20);
	feed_all(&d, enc, (size_t)n, s);
	CU_ASSERT_EQUAL(s->n, 1);
	CU_ASSERT_EQUAL(s->lens[0], 20);
	CU_ASSERT_EQUAL(d.stats.drop_runt, 1);
	free(s);
}

static void test_decoder_oversize(void)
{
	rnsc_hdlc_decoder d;
	uint8_t buf[8];
	sink *s = sink_new();
	/* 8 bytes (fits), 9 bytes (dropped), 7 + escaped flag = 8 (fits),
	 * 8 + escape = 9 (dropped), 8 + lone ESC kept literally = 9 (dropped),
	 * then a small frame that must still arrive. */
	static const uint8_t in[] = {0x7e, '1', '2', '3', '4', '5',  '6',  '7',  '8',  0x7e, '1',
				     '2',  '3', '4', '5', '6', '7',  '8',  '9',  0x7e, '1',  '2',
				     '3',  '4', '5', '6', '7', 0x7d, 0x5e, 0x7e, '1',  '2',  '3',
				     '4',  '5', '6', '7', '8', 0x7d, 0x5d, 0x7e, '1',  '2',  '3',
				     '4',  '5', '6', '7', '8', 0x7d, 0x7e, 'o',  'k',  0x7e};

	rnsc_hdlc_decoder_init(&d, buf, sizeof(buf));
	feed_all(&d, in, sizeof(in), s);
	CU_ASSERT_EQUAL(s->n, 3);
	CU_ASSERT_EQUAL(s->lens[0], 8);
	CU_ASSERT_EQUAL(s->lens[1], 8);
	CU_ASSERT_EQUAL(s->data[15], 0x7e);
	CU_ASSERT_EQUAL(s->lens[2], 2);
	CU_ASSERT(memcmp(s->data + 16, "ok", 2) == 0);
	CU_ASSERT_EQUAL(d.stats.drop_oversize, 3);

	/* A runaway frame far beyond the limit costs nothing and the decoder
	 * picks up the frame after it. */
	{
		uint8_t big[5000];
		memset(big, 'x', sizeof(big));
		big[0] = 0x7e;
		feed_all(&d, big, sizeof(big), s);
		feed_all(&d, big + 1, sizeof(big) - 1, s);
		feed_all(&d,
			 (const uint8_t *)"\x7e"
					  "zz"
					  "\x7e",
			 4, s);
		CU_ASSERT_EQUAL(s->n, 4);
		CU_ASSERT_EQUAL(s->lens[3], 2);
		CU_ASSERT_EQUAL(d.stats.drop_oversize, 4);
	}
	free(s);
}

static void test_decoder_garbage(void)
{
	rnsc_hdlc_decoder d;
	uint8_t buf[32];
	sink *s = sink_new();
	static const uint8_t in[] = {'j', 'u', 'n', 'k', 0x7d, 0x7d, 0x5e, 0x7e, 'h', 'i', 0x7e};

	rnsc_hdlc_decoder_init(&d, buf, sizeof(buf));
	feed_all(&d, in, sizeof(in), s);
	CU_ASSERT_EQUAL(s->n, 1);
	CU_ASSERT(memcmp(s->data, "hi", 2) == 0);
	CU_ASSERT_EQUAL(d.stats.garbage, 7);
	CU_ASSERT_EQUAL(d.stats.bad_escapes, 0);

	/* after a reset (reconnect), the tail of an old frame is garbage */
	feed_all(&d,
		 (const uint8_t *)"\x7e"
				  "par",
		 4, s);
	rnsc_hdlc_decoder_reset(&d);
	feed_all(&d,
		 (const uint8_t *)"tial\x7e"
				  "new\x7e",
		 9, s);
	CU_ASSERT_EQUAL(s->n, 2);
	CU_ASSERT_EQUAL(s->lens[1], 3);
	CU_ASSERT(memcmp(s->data + 2, "new", 3) == 0);
	CU_ASSERT_EQUAL(d.stats.garbage, 11);
	free(s);
}

static void test_decoder_escape_at_chunk_edge(void)
{
	rnsc_hdlc_decoder d;
	uint8_t buf[32];
	sink *s = sink_new();

	rnsc_hdlc_decoder_init(&d, buf, sizeof(buf));
	feed_all(&d,
		 (const uint8_t *)"\x7e"
				  "a\x7d",
		 3, s);
	feed_all(&d, (const uint8_t *)"\x5e", 1, s);
	feed_all(&d, (const uint8_t *)"\x7d", 1, s);
	feed_all(&d,
		 (const uint8_t *)"\x5d"
				  "b\x7d",
		 3, s);
	feed_all(&d, (const uint8_t *)"\x7e", 1, s); /* ESC then FLAG in the next read */
	CU_ASSERT_EQUAL(s->n, 1);
	CU_ASSERT_EQUAL(s->lens[0], 5);
	CU_ASSERT(memcmp(s->data,
			 "a\x7e\x7d"
			 "b\x7d",
			 5) == 0);
	CU_ASSERT_EQUAL(d.stats.bad_escapes, 1); /* the ESC before the flag */
	free(s);
}

/* Builds a stream of random frames; returns its length. Frames are also
 * recorded in `want` as the decoder should deliver them. */
static size_t build_stream(uint8_t *out, size_t cap, size_t nframes, size_t maxlen, sink *want)
{
	size_t used = 0, f;
	uint8_t p[2048];

	for (f = 0; f < nframes; f++) {
		size_t len = 1 + rng_below(maxlen), i;
		int n;
		for (i = 0; i < len; i++)
			p[i] = rng_byte();
		n = rnsc_hdlc_encode(out + used, cap - used, p, len);
		CU_ASSERT_FATAL(n > 0);
		used += (size_t)n;
		sink_cb(want, p, len);
	}
	return used;
}

static void test_roundtrip_random(void)
{
	static uint8_t stream[1 << 17];
	rnsc_hdlc_decoder d;
	uint8_t buf[2048];
	sink *want = sink_new(), *got = sink_new();
	size_t len, o = 0;

	rng_seed(20240601);
	len = build_stream(stream, sizeof(stream), 200, 300, want);
	rnsc_hdlc_decoder_init(&d, buf, sizeof(buf));
	while (o < len) {
		size_t k = 1 + rng_below(700);
		if (k > len - o)
			k = len - o;
		feed_all(&d, stream + o, k, got);
		o += k;
	}
	CU_ASSERT(sink_equal(want, got));
	CU_ASSERT_EQUAL(d.stats.frames, 200);
	CU_ASSERT_EQUAL(d.stats.drop_oversize + d.stats.drop_runt + d.stats.garbage, 0);
	free(want);
	free(got);
}

static void test_every_split(void)
{
	uint8_t stream[512];
	rnsc_hdlc_decoder d;
	uint8_t buf[64];
	sink *want = sink_new(), *got = sink_new();
	size_t len, i, j;

	rng_seed(7);
	len = build_stream(stream, sizeof(stream), 6, 12, want);
	/* every split into two reads */
	for (i = 0; i <= len; i++) {
		memset(got, 0, sizeof(*got));
		rnsc_hdlc_decoder_init(&d, buf, sizeof(buf));
		feed_all(&d, stream, i, got);
		feed_all(&d, stream + i, len - i, got);
		CU_ASSERT(sink_equal(want, got));
	}
	/* every split into three reads */
	for (i = 0; i <= len; i++) {
		for (j = i; j <= len; j++) {
			memset(got, 0, sizeof(*got));
			rnsc_hdlc_decoder_init(&d, buf, sizeof(buf));
			feed_all(&d, stream, i, got);
			feed_all(&d, stream + i, j - i, got);
			feed_all(&d, stream + j, len - j, got);
			if (!sink_equal(want, got)) {
				CU_FAIL("three-way split differs");
				i = len;
				break;
			}
		}
	}
	/* one byte at a time */
	memset(got, 0, sizeof(*got));
	rnsc_hdlc_decoder_init(&d, buf, sizeof(buf));
	for (i = 0; i < len; i++)
		feed_all(&d, stream + i, 1, got);
	CU_ASSERT(sink_equal(want, got));
	free(want);
	free(got);
}

static void test_callback_stop(void)
{
	rnsc_hdlc_decoder d;
	uint8_t buf[16];
	sink *s = sink_new();
	static const uint8_t in[] = {0x7e, 'a', 0x7e, 'b', 0x7e, 'c', 0x7e, 'd', 0x7e};

	s->stop_at = 2;
	rnsc_hdlc_decoder_init(&d, buf, sizeof(buf));
	CU_ASSERT_EQUAL(rnsc_hdlc_decoder_feed(&d, in, sizeof(in), sink_cb, s), -99);
	CU_ASSERT_EQUAL(s->n, 2);
	/* reset to hunting: 'x' is garbage, the next flag opens a frame */
	s->stop_at = 0;
	feed_all(&d,
		 (const uint8_t *)"x\x7e"
				  "e\x7e",
		 4, s);
	CU_ASSERT_EQUAL(s->n, 3);
	CU_ASSERT_EQUAL(s->data[2], 'e');
	free(s);
}

int main(void)
{
	CU_pSuite suite;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	suite = CU_add_suite("hdlc", NULL, NULL);
	if (suite == NULL ||
	    !CU_add_test(suite, "encode matches reference", test_encode_reference) ||
	    !CU_add_test(suite, "encode sizes and errors", test_encode_sizes) ||
	    !CU_add_test(suite, "decoder argument checks", test_decoder_args) ||
	    !CU_add_test(suite, "decoder reference quirks", test_decoder_reference_quirks) ||
	    !CU_add_test(suite, "shared flags, empty frames",
			 test_decoder_shared_flags_and_empty) ||
	    !CU_add_test(suite, "min frame (HEADER_MINSIZE)", test_decoder_min_frame) ||
	    !CU_add_test(suite, "oversized frames", test_decoder_oversize) ||
	    !CU_add_test(suite, "garbage and reset", test_decoder_garbage) ||
	    !CU_add_test(suite, "escape at chunk edge", test_decoder_escape_at_chunk_edge) ||
	    !CU_add_test(suite, "random round trip", test_roundtrip_random) ||
	    !CU_add_test(suite, "every split position", test_every_split) ||
	    !CU_add_test(suite, "callback stops feed", test_callback_stop)) {
		CU_cleanup_registry();
		return 1;
	}
	return rnsc_cu_run();
}
