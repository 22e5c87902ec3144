/* SPDX-License-Identifier: MIT */
/* The benchmark generators (bench/scenario/bench_gen.h) against golden values: the size
 * sequence the scenario specification gives for [16, 300], and the payload stream's first
 * bytes, which bench/participants/bench_gen.py must produce too (tests/bench_scenarios_test.sh
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
	static const uint8_t want[32] = {
		0xad, 0x4d, 0xf3, 0x0b, 0xae, 0x77, 0x1b, 0xdc, 0x76, 0x60, 0x6e,
		0x02, 0xb9, 0xee, 0xf0, 0x64, 0x36, 0x61, 0x90, 0xe5, 0x91, 0xce,
		0x07, 0x7b, 0x74, 0xcc, 0x8d, 0x36, 0x0c, 0x05, 0x5f, 0x30};
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
	static const size_t cuts[][4] = {{N, 0, 0, 0}, {1, 7, 8, 9}, {3, 1024, 5, 17},
					 {8, 16, 4000, 1}, {13, 0, 2, 4000}};
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

int main(void)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("bench_gen", NULL, NULL);
	CU_add_test(s, "size sequence golden values", test_sizes_golden);
	CU_add_test(s, "sizes cover the range", test_sizes_range);
	CU_add_test(s, "payload stream golden bytes", test_payload_golden);
	CU_add_test(s, "payload stream independent of the cuts", test_payload_cuts);
	return rnsc_cu_run();
}
