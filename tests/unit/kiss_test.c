/* SPDX-License-Identifier: MIT */
/*
 * CUnit suite for src/framing/kiss.c. Encoder vectors were produced with the
 * reference (rns 1.5.4: KISS.escape plus the framing in
 * KISSInterface.process_outgoing and its set* configuration commands). The
 * exit status is the failure count (tests/common/cu_run.h: clamped below
 * automake's 77 = skip).
 */
#include <CUnit/Basic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kiss.h"
#include "cu_run.h"

/* ---- helpers --------------------------------------------------------- */

static uint64_t rng_state;

static void rng_seed(uint64_t s)
{
	rng_state = s ? s : 0x9e3779b97f4a7c15ull;
}

static uint64_t rng_next(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static size_t rng_below(size_t n)
{
	return n ? (size_t)(rng_next() % n) : 0;
}

static uint8_t rng_byte(void)
{
	static const uint8_t interesting[] = {0xc0, 0xdb, 0xdc, 0xdd, 0x00};
	if (rng_below(3) == 0)
		return interesting[rng_below(sizeof(interesting))];
	return (uint8_t)rng_next();
}

typedef struct sink {
	uint8_t data[1 << 16];
	size_t used;
	size_t lens[1024];
	uint8_t types[1024];
	size_t n;
	size_t stop_at;
} sink;

static int sink_cb(void *ud, uint8_t type, const uint8_t *f, size_t len)
{
	sink *s = ud;

	CU_ASSERT_FATAL(s->n < 1024 && s->used + len <= sizeof(s->data));
	memcpy(s->data + s->used, f, len);
	s->used += len;
	s->types[s->n] = type;
	s->lens[s->n++] = len;
	if (s->stop_at && s->n == s->stop_at)
		return -99;
	return 0;
}

static int sink_equal(const sink *a, const sink *b)
{
	return a->n == b->n && a->used == b->used &&
	       memcmp(a->lens, b->lens, a->n * sizeof(a->lens[0])) == 0 &&
	       memcmp(a->types, b->types, a->n) == 0 && memcmp(a->data, b->data, a->used) == 0;
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

static void feed_all(rnsc_kiss_decoder *d, const uint8_t *p, size_t len, sink *s)
{
	CU_ASSERT_EQUAL(rnsc_kiss_decoder_feed(d, p, len, sink_cb, s), 0);
}

/* ---- encoder --------------------------------------------------------- */

static void test_encode_reference(void)
{
	static const char *vec[][2] = {
		{"", "c000c0"},
		{"01c002db03", "c00001dbdc02dbdd03c0"},
		{"dbdc", "c000dbdddcc0"},
		{"c0c0", "c000dbdcdbdcc0"},
		{"dbddc0dc", "c000dbdddddbdcdcc0"},
	};
	size_t i;

	for (i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		size_t plen, elen;
		uint8_t *p = hexbytes(vec[i][0], &plen);
		uint8_t *e = hexbytes(vec[i][1], &elen);
		uint8_t out[64];
		int n = rnsc_kiss_encode(out, sizeof(out), p, plen);

		CU_ASSERT_EQUAL(n, (int)elen);
		CU_ASSERT(n > 0 && memcmp(out, e, elen) == 0);
		free(p);
		free(e);
	}
}

static void test_encode_commands(void)
{
	/* What KISSInterface.configure_device() sends with default settings:
	 * preamble 350 ms, txtail 20 ms, persistence 64, slottime 20 ms, READY 1. */
	static const struct {
		uint8_t cmd;
		long ms_or_value;
		int is_ms;
		const char *hex;
	} vec[] = {
		{RNSC_KISS_CMD_TXDELAY, 350, 1, "c00123c0"},
		{RNSC_KISS_CMD_TXTAIL, 20, 1, "c00402c0"},
		{RNSC_KISS_CMD_P, 64, 0, "c00240c0"},
		{RNSC_KISS_CMD_SLOTTIME, 20, 1, "c00302c0"},
		{RNSC_KISS_CMD_READY, 1, 0, "c00f01c0"},
	};
	uint8_t out[8];
	size_t i;

	for (i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		size_t elen;
		uint8_t *e = hexbytes(vec[i].hex, &elen);
		uint8_t v = vec[i].is_ms ? rnsc_kiss_param_from_ms(vec[i].ms_or_value)
					 : (uint8_t)vec[i].ms_or_value;
		int n = rnsc_kiss_encode_command(out, sizeof(out), vec[i].cmd, v);
		CU_ASSERT_EQUAL(n, (int)elen);
		CU_ASSERT(n > 0 && memcmp(out, e, elen) == 0);
		free(e);
	}
	/* values the reference would send unescaped are escaped here */
	CU_ASSERT_EQUAL(rnsc_kiss_encode_command(out, sizeof(out), RNSC_KISS_CMD_P, 0xc0), 5);
	CU_ASSERT(memcmp(out, "\xc0\x02\xdb\xdc\xc0", 5) == 0);
	CU_ASSERT_EQUAL(rnsc_kiss_encode_command(out, sizeof(out), RNSC_KISS_CMD_RETURN, 0), 4);
	CU_ASSERT(memcmp(out, "\xc0\xff\x00\xc0", 4) == 0);
	CU_ASSERT_EQUAL(rnsc_kiss_encode_command(out, sizeof(out), RNSC_KISS_CMD_DATA, 1),
			RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_kiss_encode_command(out, sizeof(out), 0x10, 1), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_kiss_encode_command(NULL, 8, RNSC_KISS_CMD_P, 1), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_kiss_encode_command(out, 3, RNSC_KISS_CMD_P, 1), RNSC_ERR_BUFSIZE);

	CU_ASSERT_EQUAL(rnsc_kiss_param_from_ms(-5), 0);
	CU_ASSERT_EQUAL(rnsc_kiss_param_from_ms(9), 0);
	CU_ASSERT_EQUAL(rnsc_kiss_param_from_ms(2559), 255);
	CU_ASSERT_EQUAL(rnsc_kiss_param_from_ms(100000), 255);
}

static void test_encode_frame_and_sizes(void)
{
	uint8_t out[16];
	uint8_t p[2] = {0xc0, 0x41};

	/* port 12 data: the type byte itself is FEND and gets escaped */
	CU_ASSERT_EQUAL(RNSC_KISS_TYPE(12, 0), 0xc0);
	CU_ASSERT_EQUAL(rnsc_kiss_encode_frame(out, sizeof(out), RNSC_KISS_TYPE(12, 0), p, 2), 7);
	CU_ASSERT(memcmp(out, "\xc0\xdb\xdc\xdb\xdc\x41\xc0", 7) == 0);
	CU_ASSERT_EQUAL(rnsc_kiss_encoded_max(0), 4);
	CU_ASSERT_EQUAL(rnsc_kiss_encoded_max(10), 24);
	CU_ASSERT_EQUAL(rnsc_kiss_encoded_max(SIZE_MAX / 2), SIZE_MAX);

	memset(out, 0xaa, sizeof(out));
	CU_ASSERT_EQUAL(rnsc_kiss_encode(out, 5, p, 2), RNSC_ERR_BUFSIZE);
	CU_ASSERT_EQUAL(out[0], 0xaa);
	CU_ASSERT_EQUAL(rnsc_kiss_encode(out, 6, p, 2), 6);
	CU_ASSERT_EQUAL(out[6], 0xaa);
	CU_ASSERT_EQUAL(rnsc_kiss_encode(out, 6, NULL, 2), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_kiss_encode(NULL, 6, p, 2), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_kiss_encode(NULL, 0, p, 2), RNSC_ERR_BUFSIZE);
}

/* ---- decoder --------------------------------------------------------- */

static void test_decoder_args(void)
{
	rnsc_kiss_decoder d;
	uint8_t buf[8];
	sink *s = sink_new();

	CU_ASSERT_EQUAL(rnsc_kiss_decoder_init(NULL, buf, 8), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_kiss_decoder_init(&d, NULL, 8), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_kiss_decoder_init(&d, buf, 0), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_kiss_decoder_init(&d, buf, 8), 0);
	CU_ASSERT_EQUAL(rnsc_kiss_decoder_feed(NULL, buf, 1, sink_cb, s), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_kiss_decoder_feed(&d, NULL, 1, sink_cb, s), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_kiss_decoder_feed(&d, buf, 1, NULL, s), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_kiss_decoder_feed(&d, NULL, 0, sink_cb, s), 0);
	rnsc_kiss_decoder_reset(NULL);
	free(s);
}

static void test_decoder_basic(void)
{
	rnsc_kiss_decoder d;
	uint8_t buf[16];
	sink *s = sink_new();
	size_t len;
	/* garbage, FEND FEND (sync), data frame with both escapes, an empty data
	 * frame, a READY command, a port-1 data frame, FESC + other byte. */
	uint8_t *in =
		hexbytes("4142c0c0c00001dbdc02dbdd03c0c000c0c00f01c0c01055c0c000db41c0", &len);

	rnsc_kiss_decoder_init(&d, buf, sizeof(buf));
	feed_all(&d, in, len, s);
	CU_ASSERT_EQUAL(s->n, 4);
	CU_ASSERT_EQUAL(s->types[0], 0x00);
	CU_ASSERT_EQUAL(s->lens[0], 5);
	CU_ASSERT(memcmp(s->data, "\x01\xc0\x02\xdb\x03", 5) == 0);
	CU_ASSERT_EQUAL(RNSC_KISS_CMD(s->types[1]), RNSC_KISS_CMD_READY);
	CU_ASSERT_EQUAL(s->lens[1], 1);
	CU_ASSERT_EQUAL(s->data[5], 0x01);
	CU_ASSERT_EQUAL(RNSC_KISS_PORT(s->types[2]), 1);
	CU_ASSERT_EQUAL(RNSC_KISS_CMD(s->types[2]), RNSC_KISS_CMD_DATA);
	CU_ASSERT_EQUAL(s->data[6], 0x55);
	CU_ASSERT_EQUAL(s->lens[3], 1);
	CU_ASSERT_EQUAL(s->data[7], 0x41); /* FESC + other: the byte, as the reference */
	CU_ASSERT_EQUAL(d.stats.garbage, 2);
	CU_ASSERT_EQUAL(d.stats.frames, 4);
	CU_ASSERT_EQUAL(d.stats.data_frames, 3);
	CU_ASSERT_EQUAL(d.stats.bad_escapes, 1);
	/* two FEND FEND after the first FEND, the empty data frame c000c0, and
	 * the closing/opening FEND pair between each two of the five frames */
	CU_ASSERT_EQUAL(d.stats.empty, 7);
	free(in);
	free(s);
}

static void test_decoder_shared_fend(void)
{
	rnsc_kiss_decoder d;
	uint8_t buf[16];
	sink *s = sink_new();
	static const uint8_t in[] = {0xc0, 0x00, 'a', 0xc0, 0x00, 'b', 0xc0};

	rnsc_kiss_decoder_init(&d, buf, sizeof(buf));
	feed_all(&d, in, sizeof(in), s);
	CU_ASSERT_EQUAL(s->n, 2);
	CU_ASSERT(memcmp(s->data, "ab", 2) == 0);
	free(s);
}

static void test_decoder_fesc_fend(void)
{
	rnsc_kiss_decoder d;
	uint8_t buf[16];
	sink *s = sink_new();
	/* FESC right before FEND: frame ends, FESC dropped, no leak into the
	 * next frame (whose first payload byte is TFEND, taken literally). */
	static const uint8_t in[] = {0xc0, 0x00, 'a', 0xdb, 0xc0, 0x00, 0xdc, 0xc0};

	rnsc_kiss_decoder_init(&d, buf, sizeof(buf));
	feed_all(&d, in, sizeof(in), s);
	CU_ASSERT_EQUAL(s->n, 2);
	CU_ASSERT_EQUAL(s->lens[0], 1);
	CU_ASSERT_EQUAL(s->data[0], 'a');
	CU_ASSERT_EQUAL(s->lens[1], 1);
	CU_ASSERT_EQUAL(s->data[1], 0xdc);
	CU_ASSERT_EQUAL(d.stats.bad_escapes, 1);
	free(s);
}

static void test_decoder_escaped_type(void)
{
	rnsc_kiss_decoder d;
	uint8_t buf[16], enc[16];
	sink *s = sink_new();
	int n = rnsc_kiss_encode_frame(enc, sizeof(enc), RNSC_KISS_TYPE(13, 11),
				       (const uint8_t *)"z", 1);

	CU_ASSERT_EQUAL(RNSC_KISS_TYPE(13, 11), 0xdb);
	rnsc_kiss_decoder_init(&d, buf, sizeof(buf));
	feed_all(&d, enc, (size_t)n, s);
	CU_ASSERT_EQUAL(s->n, 1);
	CU_ASSERT_EQUAL(s->types[0], 0xdb);
	CU_ASSERT_EQUAL(s->data[0], 'z');
	free(s);
}

static void test_decoder_oversize(void)
{
	rnsc_kiss_decoder d;
	uint8_t buf[4];
	sink *s = sink_new();
	/* 4 bytes fit, 5 bytes (last escaped) do not, then a frame that fits */
	static const uint8_t in[] = {0xc0, 0x00, '1',  '2',  '3',  '4',  0xc0, 0xc0, 0x00, '1', '2',
				     '3',  '4',  0xdb, 0xdc, 0xc0, 0xc0, 0x00, 'o',  'k',  0xc0};
	uint8_t big[3000];

	rnsc_kiss_decoder_init(&d, buf, sizeof(buf));
	feed_all(&d, in, sizeof(in), s);
	CU_ASSERT_EQUAL(s->n, 2);
	CU_ASSERT_EQUAL(s->lens[0], 4);
	CU_ASSERT_EQUAL(s->lens[1], 2);
	CU_ASSERT_EQUAL(d.stats.drop_oversize, 1);

	memset(big, 'x', sizeof(big));
	big[0] = 0xc0;
	feed_all(&d, big, sizeof(big), s);
	feed_all(&d, big + 1, sizeof(big) - 1, s);
	feed_all(&d, (const uint8_t *)"\xc0\x00zz\xc0", 5, s);
	CU_ASSERT_EQUAL(s->n, 3);
	CU_ASSERT_EQUAL(s->lens[2], 2);
	CU_ASSERT_EQUAL(d.stats.drop_oversize, 2);
	free(s);
}

static void test_decoder_edges_and_reset(void)
{
	rnsc_kiss_decoder d;
	uint8_t buf[16];
	sink *s = sink_new();

	rnsc_kiss_decoder_init(&d, buf, sizeof(buf));
	/* split between FESC and TFEND, and between FEND and type byte */
	feed_all(&d, (const uint8_t *)"\xc0", 1, s);
	feed_all(&d,
		 (const uint8_t *)"\x00"
				  "a\xdb",
		 3, s);
	feed_all(&d, (const uint8_t *)"\xdc", 1, s);
	feed_all(&d, (const uint8_t *)"\xdb", 1, s);
	feed_all(&d, (const uint8_t *)"\xdd\xc0", 2, s);
	CU_ASSERT_EQUAL(s->n, 1);
	CU_ASSERT_EQUAL(s->lens[0], 3);
	CU_ASSERT(memcmp(s->data, "a\xc0\xdb", 3) == 0);

	/* reset mid-frame (the reference's 100 ms silence rule) */
	feed_all(&d, (const uint8_t *)"\xc0\x00par", 5, s);
	rnsc_kiss_decoder_reset(&d);
	feed_all(&d, (const uint8_t *)"tial\xc0\x00new\xc0", 10, s);
	CU_ASSERT_EQUAL(s->n, 2);
	CU_ASSERT_EQUAL(s->lens[1], 3);
	CU_ASSERT(memcmp(s->data + 3, "new", 3) == 0);
	CU_ASSERT_EQUAL(d.stats.garbage, 4);
	free(s);
}

static size_t build_stream(uint8_t *out, size_t cap, size_t nframes, size_t maxlen, sink *want)
{
	size_t used = 0, f;
	uint8_t p[2048];

	for (f = 0; f < nframes; f++) {
		size_t len = 1 + rng_below(maxlen), i;
		/* mostly data, sometimes a command or another port */
		uint8_t type = rng_below(4) == 0 ? (uint8_t)rng_next() : 0x00;
		int n;
		for (i = 0; i < len; i++)
			p[i] = rng_byte();
		n = rnsc_kiss_encode_frame(out + used, cap - used, type, p, len);
		CU_ASSERT_FATAL(n > 0);
		used += (size_t)n;
		sink_cb(want, type, p, len);
	}
	return used;
}

static void test_roundtrip_random(void)
{
	static uint8_t stream[1 << 17];
	rnsc_kiss_decoder d;
	uint8_t buf[2048];
	sink *want = sink_new(), *got = sink_new();
	size_t len, o = 0;

	rng_seed(424242);
	len = build_stream(stream, sizeof(stream), 200, 300, want);
	rnsc_kiss_decoder_init(&d, buf, sizeof(buf));
	while (o < len) {
		size_t k = 1 + rng_below(700);
		if (k > len - o)
			k = len - o;
		feed_all(&d, stream + o, k, got);
		o += k;
	}
	CU_ASSERT(sink_equal(want, got));
	CU_ASSERT_EQUAL(d.stats.frames, 200);
	CU_ASSERT_EQUAL(d.stats.drop_oversize + d.stats.garbage + d.stats.bad_escapes, 0);
	free(want);
	free(got);
}

static void test_every_split(void)
{
	uint8_t stream[512];
	rnsc_kiss_decoder d;
	uint8_t buf[64];
	sink *want = sink_new(), *got = sink_new();
	size_t len, i, j;

	rng_seed(11);
	len = build_stream(stream, sizeof(stream), 6, 12, want);
	for (i = 0; i <= len; i++) {
		memset(got, 0, sizeof(*got));
		rnsc_kiss_decoder_init(&d, buf, sizeof(buf));
		feed_all(&d, stream, i, got);
		feed_all(&d, stream + i, len - i, got);
		CU_ASSERT(sink_equal(want, got));
	}
	for (i = 0; i <= len; i++) {
		for (j = i; j <= len; j++) {
			memset(got, 0, sizeof(*got));
			rnsc_kiss_decoder_init(&d, buf, sizeof(buf));
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
	memset(got, 0, sizeof(*got));
	rnsc_kiss_decoder_init(&d, buf, sizeof(buf));
	for (i = 0; i < len; i++)
		feed_all(&d, stream + i, 1, got);
	CU_ASSERT(sink_equal(want, got));
	free(want);
	free(got);
}

static void test_callback_stop(void)
{
	rnsc_kiss_decoder d;
	uint8_t buf[16];
	sink *s = sink_new();
	static const uint8_t in[] = {0xc0, 0, 'a', 0xc0, 0, 'b', 0xc0, 0, 'c', 0xc0};

	s->stop_at = 1;
	rnsc_kiss_decoder_init(&d, buf, sizeof(buf));
	CU_ASSERT_EQUAL(rnsc_kiss_decoder_feed(&d, in, sizeof(in), sink_cb, s), -99);
	CU_ASSERT_EQUAL(s->n, 1);
	s->stop_at = 0;
	feed_all(&d,
		 (const uint8_t *)"x\xc0\x00"
				  "e\xc0",
		 5, s);
	CU_ASSERT_EQUAL(s->n, 2);
	CU_ASSERT_EQUAL(s->data[1], 'e');
	free(s);
}

int main(void)
{
	CU_pSuite suite;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	suite = CU_add_suite("kiss", NULL, NULL);
	if (suite == NULL ||
	    !CU_add_test(suite, "data frames match reference", test_encode_reference) ||
	    !CU_add_test(suite, "TNC commands match reference", test_encode_commands) ||
	    !CU_add_test(suite, "frame types and sizes", test_encode_frame_and_sizes) ||
	    !CU_add_test(suite, "decoder argument checks", test_decoder_args) ||
	    !CU_add_test(suite, "decoder basics", test_decoder_basic) ||
	    !CU_add_test(suite, "shared FEND", test_decoder_shared_fend) ||
	    !CU_add_test(suite, "FESC before FEND", test_decoder_fesc_fend) ||
	    !CU_add_test(suite, "escaped type byte", test_decoder_escaped_type) ||
	    !CU_add_test(suite, "oversized frames", test_decoder_oversize) ||
	    !CU_add_test(suite, "chunk edges and reset", test_decoder_edges_and_reset) ||
	    !CU_add_test(suite, "random round trip", test_roundtrip_random) ||
	    !CU_add_test(suite, "every split position", test_every_split) ||
	    !CU_add_test(suite, "callback stops feed", test_callback_stop)) {
		CU_cleanup_registry();
		return 1;
	}
	return rnsc_cu_run();
}
