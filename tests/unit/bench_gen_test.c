/* SPDX-License-Identifier: MIT */
/* The benchmark generators (bench/scenario/bench_gen.h) against golden values: the size
 * sequence the scenario specification gives for [16, 300], and the payload stream's first
 * bytes, which bench/participants/bench_gen.py must produce too (tests/live/bench_scenarios_test.sh
 * checks the Python side against the same values). */
#include <string.h>

#include "bench_gen.h"
#include "cu_run.h"

static void test_sizes_golden(void)
{
	static const uint32_t want[8] = {84, 208, 175, 156, 212, 233, 190, 250};
	bench_sizes g;
	bench_sizes_init(&g, 16, 300);
	for (int i = 0; i < 8; i++)
		CU_ASSERT_EQUAL(bench_sizes_next(&g), want[i]);
}

static void test_sizes_range(void)
{
	bench_sizes g;
	bench_sizes_init(&g, 60, 380);
	uint32_t lo = 1000, hi = 0;
	for (int i = 0; i < 100000; i++) {
		uint32_t v = bench_sizes_next(&g);
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
	}
	CU_ASSERT_EQUAL(lo, 60);
	CU_ASSERT_EQUAL(hi, 380);
	bench_sizes_init(&g, 60, 380);
	CU_ASSERT_EQUAL(bench_sizes_next(&g), 377);
	CU_ASSERT_EQUAL(bench_sizes_next(&g), 219);
}

static void test_payload_golden(void)
{
	static const uint8_t want[32] = {0xad, 0x4d, 0xf3, 0x0b, 0xae, 0x77, 0x1b, 0xdc,
					 0x76, 0x60, 0x6e, 0x02, 0xb9, 0xee, 0xf0, 0x64,
					 0x36, 0x61, 0x90, 0xe5, 0x91, 0xce, 0x07, 0x7b,
					 0x74, 0xcc, 0x8d, 0x36, 0x0c, 0x05, 0x5f, 0x30};
	bench_payload g;
	uint8_t got[32];
	bench_payload_init(&g);
	/* the stream does not depend on how it is cut */
	bench_payload_take(&g, got, 5);
	bench_payload_take(&g, got + 5, 27);
	CU_ASSERT_EQUAL(memcmp(got, want, 32), 0);
	/* first word is the seed advanced once, little-endian */
	uint64_t w = bench_xorshift64(BENCH_PAYLOAD_SEED);
	for (int k = 0; k < 8; k++)
		CU_ASSERT_EQUAL(got[k], (uint8_t)(w >> (8 * k)));
}

/* The same stream however it is cut: whole words, odd pieces, pieces crossing words,
 * against a byte-at-a-time reading of the definition. */
static void test_payload_cuts(void)
{
	enum { N = 4099 };
	static uint8_t ref[N], got[N];
	uint64_t st = BENCH_PAYLOAD_SEED;
	for (size_t i = 0; i < N; i++) {
		if (i % 8 == 0)
			st = bench_xorshift64(st);
		ref[i] = (uint8_t)(st >> (8 * (i % 8)));
	}
	static const size_t cuts[][4] = {
		{N, 0, 0, 0}, {1, 7, 8, 9}, {3, 1024, 5, 17}, {8, 16, 4000, 1}, {13, 0, 2, 4000}};
	for (size_t c = 0; c < sizeof(cuts) / sizeof(cuts[0]); c++) {
		bench_payload g;
		bench_payload_init(&g);
		size_t at = 0;
		for (int k = 0; k < 4 && at < N; k++) {
			size_t take = cuts[c][k] < N - at ? cuts[c][k] : N - at;
			bench_payload_take(&g, got + at, take);
			at += take;
		}
		bench_payload_take(&g, got + at, N - at);
		CU_ASSERT_EQUAL(memcmp(got, ref, N), 0);
	}
}

/* Indexed reads (the resource scenarios' path) against the sequential stream: offsets on
 * and off word, block and lane-group boundaries, lengths from 0 to the whole index. */
static void test_payload_indexed(void)
{
	enum { N = 300001 };
	static uint8_t ref[N], got[N];
	static uint64_t ck[64];
	bench_payload g;
	bench_payload_init(&g);
	bench_payload_take(&g, ref, N);
	size_t n = bench_payload_index_len(N);
	CU_ASSERT_FATAL(n <= 64);
	CU_ASSERT_EQUAL(n, (N + 8 * BENCH_CK_WORDS - 1) / (8 * BENCH_CK_WORDS));
	bench_payload_index_build(ck, n);
	const size_t group = 8 * BENCH_CK_WORDS * BENCH_LANES;
	const size_t offs[] = {0,
			       1,
			       7,
			       8,
			       9,
			       8 * BENCH_CK_WORDS - 3,
			       8 * BENCH_CK_WORDS,
			       group - 1,
			       group,
			       group + 8,
			       2 * group + 5,
			       N - 9,
			       N - 1,
			       N};
	const size_t lens[] = {0,
			       1,
			       5,
			       8,
			       16,
			       8 * BENCH_CK_WORDS + 3,
			       group,
			       group + 1,
			       7 * 8 * BENCH_CK_WORDS + 5,
			       3 * 8 * BENCH_CK_WORDS,
			       2 * group + 7,
			       4 * group};
	for (size_t a = 0; a < sizeof(offs) / sizeof(offs[0]); a++)
		for (size_t b = 0; b < sizeof(lens) / sizeof(lens[0]); b++) {
			size_t off = offs[a], len = lens[b] < N - off ? lens[b] : N - off;
			memset(got, 0xA5, len + (off + len < N));
			bench_payload_read(ck, off, got, len);
			CU_ASSERT_EQUAL(memcmp(got, ref + off, len), 0);
			if (off + len < N) /* nothing written past the end */
				CU_ASSERT_EQUAL(got[len], 0xA5);
		}
	bench_payload_read(ck, 0, got, N);
	CU_ASSERT_EQUAL(memcmp(got, ref, N), 0);
}

int main(void)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("bench_gen", NULL, NULL);
	CU_add_test(s, "size sequence golden values", test_sizes_golden);
	CU_add_test(s, "sizes cover the range", test_sizes_range);
	CU_add_test(s, "payload stream golden bytes", test_payload_golden);
	CU_add_test(s, "payload stream independent of the cuts", test_payload_cuts);
	CU_add_test(s, "payload stream read through the index", test_payload_indexed);
	return rnsc_cu_run();
}
