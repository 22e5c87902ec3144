/* SPDX-License-Identifier: MIT */
/* The packet hashlist's sharded set (src/lib/hashset.h): exact membership against a model
 * (every key added is found, no key never added is, duplicates not counted), removal,
 * iteration visiting every key once (the persisted packet_hashlist.raw), the reference's
 * generation rotation, memory in proportion to the entries, and allocation failure. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cu_run.h"
#include "hashset.h"
#include "test_rng.h"

static uint64_t rs = 0x9E3779B97F4A7C15u;

static void rand_key(uint8_t *k, size_t len)
{
	for (size_t i = 0; i < len; i += 8) {
		uint64_t r = test_xorshift64(&rs);
		memcpy(k + i, &r, len - i < 8 ? len - i : 8);
	}
}

#define NK 200000

static void test_model(void)
{
	rnsc_ctx *c;
	CU_ASSERT_EQUAL_FATAL(rnsc_ctx_new(&c), 0);
	uint8_t *keys = malloc((size_t)NK * 16);
	CU_ASSERT_PTR_NOT_NULL_FATAL(keys);
	rnsc_hset s;
	rnsc_hset_init(&s, c, 16);
	for (size_t i = 0; i < NK; i++) {
		rand_key(keys + i * 16, 16);
		CU_ASSERT_EQUAL_FATAL(rnsc_hset_add(&s, keys + i * 16), 0);
	}
	CU_ASSERT_EQUAL(s.n, NK);
	/* a duplicate changes nothing */
	CU_ASSERT_EQUAL(rnsc_hset_add(&s, keys + 77 * 16), 0);
	CU_ASSERT_EQUAL(s.n, NK);
	size_t missing = 0, false_hits = 0;
	for (size_t i = 0; i < NK; i++)
		missing += !rnsc_hset_has(&s, keys + i * 16);
	uint8_t k[16];
	for (size_t i = 0; i < NK; i++) {
		memcpy(k, keys + i * 16, 16);
		k[i % 16] ^= (uint8_t)(1u << (i % 8)); /* one bit off: a different packet */
		false_hits += rnsc_hset_has(&s, k);
	}
	CU_ASSERT_EQUAL(missing, 0);
	CU_ASSERT_EQUAL(false_hits, 0);

	/* Memory follows the entries: at most 1/0.8 * 1.5 slots per entry (plus the shards'
	 * one block each), and no shard far above the others, so one growth step never
	 * holds two tables of the whole set. */
	size_t slots = rnsc_hset_slots(&s);
	CU_ASSERT(slots * 10 <= (size_t)NK * 19 + RNSC_HSET_SHARDS * 10 * RNSC_HSET_BLOCK);
	CU_ASSERT(slots * 10 >= (size_t)NK * 12);     /* load never above 4/5 */
	for (size_t i = 0; i < RNSC_HSET_SHARDS; i++) /* no shard far above the others */
		CU_ASSERT(s.shard[i].nblk * RNSC_HSET_BLOCK * RNSC_HSET_SHARDS <= slots * 2);

	/* removal of every other key */
	for (size_t i = 0; i < NK; i += 2)
		CU_ASSERT_EQUAL(rnsc_hset_del(&s, keys + i * 16), 1);
	CU_ASSERT_EQUAL(rnsc_hset_del(&s, keys), 0);
	CU_ASSERT_EQUAL(s.n, NK / 2);
	missing = 0;
	size_t left = 0;
	for (size_t i = 0; i < NK; i++) {
		int h = rnsc_hset_has(&s, keys + i * 16);
		if (i % 2)
			missing += !h;
		else
			left += h;
	}
	CU_ASSERT_EQUAL(missing, 0);
	CU_ASSERT_EQUAL(left, 0);
	rnsc_hset_free(&s);
	free(keys);
	rnsc_ctx_del(c);
}

static int cmp32(const void *a, const void *b)
{
	return memcmp(a, b, 32);
}

/* Whole 32-byte hashes (a transport node) iterate exactly once each, as the persisted
 * packet_hashlist.raw needs. */
static void test_iterate(void)
{
	rnsc_ctx *c;
	CU_ASSERT_EQUAL_FATAL(rnsc_ctx_new(&c), 0);
	enum { M = 30000 };
	uint8_t *keys = malloc((size_t)M * 32), *seen = malloc((size_t)M * 32);
	CU_ASSERT_PTR_NOT_NULL_FATAL(keys);
	CU_ASSERT_PTR_NOT_NULL_FATAL(seen);
	rnsc_hset s;
	rnsc_hset_init(&s, c, 32);
	size_t cur = 0, got = 0;
	uint8_t k[32];
	CU_ASSERT_EQUAL(rnsc_hset_next(&s, &cur, k), 0); /* empty */
	for (size_t i = 0; i < M; i++) {
		rand_key(keys + i * 32, 32);
		CU_ASSERT_EQUAL_FATAL(rnsc_hset_add(&s, keys + i * 32), 0);
	}
	cur = 0;
	while (got < M + 1 && rnsc_hset_next(&s, &cur, k))
		memcpy(seen + (got++) * 32, k, 32);
	CU_ASSERT_EQUAL_FATAL(got, M);
	CU_ASSERT_EQUAL(rnsc_hset_next(&s, &cur, k), 0); /* stays at the end */
	qsort(keys, M, 32, cmp32);
	qsort(seen, M, 32, cmp32);
	CU_ASSERT_EQUAL(memcmp(keys, seen, (size_t)M * 32), 0);
	rnsc_hset_free(&s);
	free(keys);
	free(seen);
	rnsc_ctx_del(c);
}

/* Transport's `prev = cur; cur = set()`: after one rotation the old keys are still
 * duplicates (in prev), after a second they are forgotten. */
static void test_rotate(void)
{
	rnsc_ctx *c;
	CU_ASSERT_EQUAL_FATAL(rnsc_ctx_new(&c), 0);
	rnsc_hset cur, prev;
	rnsc_hset_init(&cur, c, 16);
	rnsc_hset_init(&prev, c, 16);
	enum { G = 5000 };
	static uint8_t a[G][16], b[G][16];
	for (size_t i = 0; i < G; i++) {
		rand_key(a[i], 16);
		rand_key(b[i], 16);
		CU_ASSERT_EQUAL(rnsc_hset_add(&cur, a[i]), 0);
	}
	rnsc_hset_rotate(&cur, &prev);
	CU_ASSERT_EQUAL(cur.n, 0);
	CU_ASSERT_EQUAL(prev.n, G);
	size_t in_prev = 0, in_cur = 0;
	for (size_t i = 0; i < G; i++) {
		in_prev += rnsc_hset_has(&prev, a[i]);
		in_cur += rnsc_hset_has(&cur, a[i]);
		CU_ASSERT_EQUAL(rnsc_hset_add(&cur, b[i]), 0);
	}
	CU_ASSERT_EQUAL(in_prev, G);
	CU_ASSERT_EQUAL(in_cur, 0);
	rnsc_hset_rotate(&cur, &prev);
	size_t a_left = 0, b_prev = 0;
	for (size_t i = 0; i < G; i++) {
		a_left += rnsc_hset_has(&prev, a[i]) + rnsc_hset_has(&cur, a[i]);
		b_prev += rnsc_hset_has(&prev, b[i]);
	}
	CU_ASSERT_EQUAL(a_left, 0);
	CU_ASSERT_EQUAL(b_prev, G);
	CU_ASSERT_EQUAL(prev.n, G);
	rnsc_hset_free(&cur);
	rnsc_hset_free(&prev);
	rnsc_ctx_del(c);
}

static void test_alloc_failure(void)
{
	rnsc_ctx *c;
	CU_ASSERT_EQUAL_FATAL(rnsc_ctx_new(&c), 0);
	uint8_t k[16];
	for (unsigned long nth = 1; nth <= 40; nth++) {
		rnsc_hset s;
		rnsc_hset_init(&s, c, 16);
		rnsc_ctx_fail_alloc_after(c, nth);
		size_t stored = 0;
		uint64_t save = rs;
		for (unsigned i = 0; i < 3000; i++) {
			rand_key(k, 16);
			if (rnsc_hset_add(&s, k) == 0)
				stored++;
			else
				CU_ASSERT_FALSE(rnsc_hset_has(&s, k));
		}
		rnsc_ctx_fail_alloc_after(c, 0);
		CU_ASSERT(stored < 3000);
		CU_ASSERT_EQUAL(s.n, stored);
		/* what was stored is still found */
		rs = save;
		size_t found = 0;
		for (unsigned i = 0; i < 3000; i++) {
			rand_key(k, 16);
			found += rnsc_hset_has(&s, k);
		}
		CU_ASSERT_EQUAL(found, stored);
		rnsc_hset_free(&s);
	}
	rnsc_ctx_del(c);
}

int main(void)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("hashset", NULL, NULL);
	CU_add_test(s, "exact membership against a model, memory per entry", test_model);
	CU_add_test(s, "iteration visits every key once", test_iterate);
	CU_add_test(s, "generation rotation", test_rotate);
	CU_add_test(s, "allocation failure", test_alloc_failure);
	return rnsc_cu_run();
}
