/* SPDX-License-Identifier: MIT */
/* The known-destinations file (src/runtime/known_file.c): the reference's bytes, a round
 * trip through the writer, and every truncation and bit flip of a valid file being
 * either rejected as a whole or parsed without harm. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_run.h"
#include "known_file.h"

/* umsgpack.packb() of three entries written by the pinned reference's vendored umsgpack:
 * two usable ones (app_data None, then b"hello" with a float last_used) and one whose key
 * is 5 bytes (skipped, as Identity.load_known_destinations skips it). */
static const char *REF_HEX =
	"83c410000102030405060708090a0b0c0d0e0f95cb41d954fc40200000c420aaaaaaaaaaaaaaaaaaaaaaaa"
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaac440bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	"c000c410101112131415161718191a1b1c1d1e1f95cb41d954fc40500000c420cccccccccccccccccccccc"
	"ccccccccccccccccccccccccccccccccccccccccccc440dddddddddddddddddddddddddddddddddddddddd"
	"dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
	"ddc40568656c6c6fcb41d954fc40800000c405000102030495cb3ff0000000000000c42078787878787878"
	"78787878787878787878787878787878787878787878787878c44079797979797979797979797979797979"
	"79797979797979797979797979797979797979797979797979797979797979797979797979797979797979"
	"7979797979c000";

static size_t unhex(uint8_t *out, const char *h)
{
	size_t n = 0;
	for (; h[0] && h[1]; h += 2)
		sscanf(h, "%2hhx", &out[n++]);
	return n;
}

typedef struct seen {
	int n;
	rnsc_transport_known k[4];
	uint8_t app[4][16];
} seen;

static int collect(void *ud, const rnsc_transport_known *k)
{
	seen *s = ud;
	if (s->n >= 4)
		return -99;
	s->k[s->n] = *k;
	if (k->app_data) {
		CU_ASSERT_FATAL(k->app_data_len <= 16);
		memcpy(s->app[s->n], k->app_data, k->app_data_len);
	}
	s->n++;
	return 0;
}

static void test_reference_bytes(void)
{
	uint8_t buf[512];
	size_t len = unhex(buf, REF_HEX);
	CU_ASSERT_EQUAL_FATAL(len, 394);
	seen s = {0};
	size_t skipped = 9;
	CU_ASSERT_EQUAL(rnsc_known_file_parse(buf, len, collect, &s, &skipped), 2);
	CU_ASSERT_EQUAL(skipped, 1);
	CU_ASSERT_EQUAL_FATAL(s.n, 2);
	CU_ASSERT_EQUAL(s.k[0].dest_hash[15], 15);
	CU_ASSERT_EQUAL(s.k[0].timestamp, 1700000000500ull);
	CU_ASSERT_EQUAL(s.k[0].packet_hash[0], 0xaa);
	CU_ASSERT_EQUAL(s.k[0].public_key[63], 0xbb);
	CU_ASSERT_PTR_NULL(s.k[0].app_data);
	CU_ASSERT_EQUAL(s.k[1].timestamp, 1700000001250ull);
	CU_ASSERT_EQUAL(s.k[1].app_data_len, 5);
	CU_ASSERT_EQUAL(memcmp(s.app[1], "hello", 5), 0);
}

static void test_round_trip(void)
{
	rnsc_transport_known in[2];
	memset(in, 0, sizeof(in));
	for (int i = 0; i < 2; i++) {
		memset(in[i].dest_hash, 0x10 + i, 16);
		memset(in[i].packet_hash, 0x20 + i, 32);
		memset(in[i].public_key, 0x30 + i, 64);
		in[i].timestamp = 1764460800123ull + (uint64_t)i;
	}
	in[1].app_data = (const uint8_t *)"";
	in[1].app_data_len = 0;                /* empty bytes, not None */
	in[0].last_used = 1764460800.125;      /* a use: a float */
	in[1].last_used = RNSC_KNOWN_RETAINED; /* retained: the integer -1 */
	in[1].last_used_int = 1;
	uint8_t buf[1024];
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, buf, sizeof(buf));
	rnsc_known_file_begin(&w, 2);
	rnsc_known_file_entry(&w, &in[0]);
	rnsc_known_file_entry(&w, &in[1]);
	CU_ASSERT_FATAL(rnsc_mp_writer_finish(&w) >= 0);
	seen s = {0};
	CU_ASSERT_EQUAL(rnsc_known_file_parse(buf, w.len, collect, &s, NULL), 2);
	CU_ASSERT_EQUAL(s.n, 2);
	CU_ASSERT_EQUAL(memcmp(s.k[0].dest_hash, in[0].dest_hash, 16), 0);
	CU_ASSERT_EQUAL(s.k[0].timestamp, in[0].timestamp);
	CU_ASSERT_DOUBLE_EQUAL(s.k[0].last_used, 1764460800.125, 0.0);
	CU_ASSERT_EQUAL(s.k[0].last_used_int, 0);
	CU_ASSERT_DOUBLE_EQUAL(s.k[1].last_used, -1.0, 0.0);
	CU_ASSERT_EQUAL(s.k[1].last_used_int, 1);
	CU_ASSERT_PTR_NULL(s.k[0].app_data);
	CU_ASSERT_PTR_NOT_NULL(s.k[1].app_data);
	CU_ASSERT_EQUAL(s.k[1].app_data_len, 0);
	CU_ASSERT_EQUAL(memcmp(s.k[1].public_key, in[1].public_key, 64), 0);
}

static int count_only(void *ud, const rnsc_transport_known *k)
{
	(void)k;
	(*(int *)ud)++;
	return 0;
}

/* Every prefix of a valid file is refused whole: no callback runs. */
static void test_truncations(void)
{
	uint8_t buf[512];
	size_t len = unhex(buf, REF_HEX);
	for (size_t cut = 0; cut < len; cut++) {
		int calls = 0;
		int rc = rnsc_known_file_parse(buf, cut, count_only, &calls, NULL);
		CU_ASSERT(rc < 0);
		CU_ASSERT_EQUAL(calls, 0);
	}
}

/* Single-byte corruptions: either the whole file is refused with no callback, or it
 * parses and every callback sees well-formed sizes. */
static void test_corruptions(void)
{
	uint8_t ref[512], buf[512];
	size_t len = unhex(ref, REF_HEX);
	static const uint8_t vals[] = {0x00, 0xc0, 0xc1, 0xc4, 0xdc, 0xde, 0xff, 0x90};
	for (size_t i = 0; i < len; i++) {
		for (size_t v = 0; v < sizeof(vals); v++) {
			memcpy(buf, ref, len);
			buf[i] = vals[v];
			int calls = 0;
			int rc = rnsc_known_file_parse(buf, len, count_only, &calls, NULL);
			if (rc < 0) {
				CU_ASSERT_EQUAL(calls, 0);
			} else {
				CU_ASSERT_EQUAL(calls, rc);
			}
		}
	}
	CU_ASSERT(rnsc_known_file_parse((const uint8_t *)"\x90", 1, NULL, NULL, NULL) < 0);
	CU_ASSERT_EQUAL(rnsc_known_file_parse((const uint8_t *)"\x80", 1, NULL, NULL, NULL), 0);
	CU_ASSERT_EQUAL(rnsc_known_file_parse(NULL, 3, NULL, NULL, NULL), RNSC_ERR_INVAL);
}

int main(void)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("known_file", NULL, NULL);
	CU_add_test(s, "reference bytes", test_reference_bytes);
	CU_add_test(s, "round trip", test_round_trip);
	CU_add_test(s, "truncations refused whole", test_truncations);
	CU_add_test(s, "corruptions", test_corruptions);
	return rnsc_cu_run();
}
