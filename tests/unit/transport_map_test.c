/* SPDX-License-Identifier: MIT */
/* The transport engine's hash map (path table, hashlist, announce table): against a
 * plain array as the model, through growth, deletion with backward shifting, replacement,
 * clearing and allocation failure. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cu_run.h"
#include "identity.h"
#include "transport_map.h"
#include "test_rng.h"

#define N 5000

static uint64_t rs = 88172645463325252u;
static uint64_t next_rand(void)
{
	return test_xorshift64(&rs);
}

static void key_of(uint8_t k[16], unsigned i)
{
	/* Keys differ only in a few bytes so that probing and clustering really happen. */
	memset(k, 0xA5, 16);
	memcpy(k, &i, sizeof(i));
}

static int freed;
static void count_free(rnsc_ctx *ctx, void *v)
{
	(void)ctx, (void)v;
	freed++;
}

static void test_model(void)
{
	rnsc_ctx *c;
	CU_ASSERT_EQUAL_FATAL(rnsc_ctx_new(&c), 0);
	rnsc_tmap m;
	rnsc_tmap_init(&m, c, 16);
	static char present[N];
	uint8_t k[16];
	CU_ASSERT_PTR_NULL(rnsc_tmap_get(&m, k, NULL)); /* empty, never allocated */
	CU_ASSERT_PTR_NULL(rnsc_tmap_del(&m, k));
	for (int round = 0; round < 60000; round++) {
		unsigned i = (unsigned)(next_rand() % N);
		key_of(k, i);
		switch (next_rand() % 3) {
		case 0:
		case 1: {
			void *old = (void *)1;
			CU_ASSERT_EQUAL(rnsc_tmap_put(&m, k, (void *)(uintptr_t)(i + 1), &old), 0);
			CU_ASSERT_PTR_EQUAL(old, present[i] ? (void *)(uintptr_t)(i + 1) : NULL);
			present[i] = 1;
			break;
		}
		default:
			CU_ASSERT_PTR_EQUAL(rnsc_tmap_del(&m, k),
					    present[i] ? (void *)(uintptr_t)(i + 1) : NULL);
			present[i] = 0;
		}
	}
	size_t count = 0;
	for (unsigned i = 0; i < N; i++) {
		int found = -1;
		key_of(k, i);
		void *v = rnsc_tmap_get(&m, k, &found);
		CU_ASSERT_EQUAL(found, present[i]);
		CU_ASSERT_EQUAL(rnsc_tmap_has(&m, k), present[i]);
		if (present[i])
			CU_ASSERT_PTR_EQUAL(v, (void *)(uintptr_t)(i + 1));
		count += present[i];
	}
	CU_ASSERT_EQUAL(m.n, count);
	size_t seen = 0;
	for (size_t s = 0; s < m.cap; s++)
		seen += rnsc_tmap_slot_used(&m, s);
	CU_ASSERT_EQUAL(seen, count);
	/* A NULL value is stored and found as such. */
	key_of(k, N + 1);
	CU_ASSERT_EQUAL(rnsc_tmap_put(&m, k, NULL, NULL), 0);
	int found = 0;
	CU_ASSERT_PTR_NULL(rnsc_tmap_get(&m, k, &found));
	CU_ASSERT_EQUAL(found, 1);
	freed = 0;
	rnsc_tmap_free(&m, count_free);
	CU_ASSERT_EQUAL((size_t)freed, count); /* NULL values are not passed to free_val */
	rnsc_tmap_init(&m, c, 16);
	for (unsigned i = 0; i < 100; i++) {
		key_of(k, i);
		CU_ASSERT_EQUAL(rnsc_tmap_put(&m, k, NULL, NULL), 0);
	}
	rnsc_tmap_clear(&m);
	CU_ASSERT_EQUAL(m.n, 0);
	CU_ASSERT_FALSE(rnsc_tmap_has(&m, k));
	rnsc_tmap_free(&m, NULL);
	rnsc_ctx_del(c);
}

static void test_alloc_failure(void)
{
	rnsc_ctx *c;
	CU_ASSERT_EQUAL_FATAL(rnsc_ctx_new(&c), 0);
	uint8_t k[16];
	/* Fail each of the first allocations a growing map makes; the map must stay intact. */
	for (unsigned long nth = 1; nth <= 12; nth++) {
		rnsc_tmap m;
		rnsc_tmap_init(&m, c, 16);
		rnsc_ctx_fail_alloc_after(c, nth);
		unsigned stored = 0;
		for (unsigned i = 0; i < 200; i++) {
			key_of(k, i);
			if (rnsc_tmap_put(&m, k, (void *)(uintptr_t)(i + 1), NULL) == 0)
				stored++;
			else
				CU_ASSERT_FALSE(rnsc_tmap_has(&m, k));
		}
		rnsc_ctx_fail_alloc_after(c, 0);
		CU_ASSERT(stored < 200);
		CU_ASSERT_EQUAL(m.n, stored);
		rnsc_tmap_free(&m, NULL);
	}
	rnsc_ctx_del(c);
}

/* Value-less sets (the packet hashlist): no value array, generation rotation that keeps
 * and, when the current generation outgrew it, enlarges the recycled storage. */
static void test_set_rotate(void)
{
	rnsc_ctx *c;
	CU_ASSERT_EQUAL_FATAL(rnsc_ctx_new(&c), 0);
	rnsc_tmap cur, prev;
	rnsc_tmap_init(&cur, c, 16);
	rnsc_tmap_init(&prev, c, 16);
	uint8_t k[16];
	rnsc_tmap_rotate(&cur, &prev); /* both empty, never allocated */
	CU_ASSERT_EQUAL(cur.cap, 0);
	for (unsigned i = 0; i < 1000; i++) {
		key_of(k, i);
		CU_ASSERT_EQUAL(rnsc_tmap_put(&cur, k, NULL, NULL), 0);
	}
	CU_ASSERT_PTR_NULL(cur.vals);
	int found = 0;
	key_of(k, 7);
	CU_ASSERT_PTR_NULL(rnsc_tmap_get(&cur, k, &found));
	CU_ASSERT_EQUAL(found, 1);
	CU_ASSERT_PTR_NULL(rnsc_tmap_del(&cur, k));
	CU_ASSERT_FALSE(rnsc_tmap_has(&cur, k));
	size_t cap1 = cur.cap;
	/* prev (empty) is sized for cur's entries and becomes the new, empty, current one */
	rnsc_tmap_rotate(&cur, &prev);
	CU_ASSERT_EQUAL(cur.n, 0);
	CU_ASSERT(cur.cap >= 999 * 4 / 3 + 1 && cur.cap < cap1);
	CU_ASSERT_EQUAL(prev.n, 999);
	key_of(k, 8);
	CU_ASSERT(rnsc_tmap_has(&prev, k));
	CU_ASSERT_FALSE(rnsc_tmap_has(&cur, k));
	for (size_t i = 0; i < cur.cap; i++)
		CU_ASSERT_FALSE(rnsc_tmap_slot_used(&cur, i));
	/* a non-power-of-two table works like any other: fill it to its load limit */
	for (unsigned i = 0; i < 999; i++) {
		key_of(k, i + 5000);
		CU_ASSERT_EQUAL(rnsc_tmap_put(&cur, k, NULL, NULL), 0);
	}
	CU_ASSERT(cur.cap < cap1); /* no growth was needed */
	for (unsigned i = 0; i < 999; i += 2) {
		key_of(k, i + 5000);
		CU_ASSERT(rnsc_tmap_has(&cur, k));
		CU_ASSERT_PTR_NULL(rnsc_tmap_del(&cur, k));
	}
	for (unsigned i = 0; i < 999; i++) {
		key_of(k, i + 5000);
		CU_ASSERT_EQUAL(rnsc_tmap_has(&cur, k), (int)(i % 2));
	}
	rnsc_tmap_clear(&cur);
	key_of(k, 8);
	/* a value turns the set into a map */
	void *old = (void *)1;
	CU_ASSERT_EQUAL(rnsc_tmap_put(&cur, k, (void *)&found, &old), 0);
	CU_ASSERT_PTR_NULL(old);
	CU_ASSERT_PTR_EQUAL(rnsc_tmap_get(&cur, k, NULL), &found);
	CU_ASSERT_EQUAL(rnsc_tmap_put(&cur, k, NULL, &old), 0);
	CU_ASSERT_PTR_EQUAL(old, &found);
	/* rotating again drops the old generation; the recycled storage loses its values */
	rnsc_tmap_rotate(&cur, &prev);
	CU_ASSERT_EQUAL(cur.n, 0);
	CU_ASSERT_PTR_NULL(cur.vals);
	CU_ASSERT_EQUAL(prev.n, 1);
	CU_ASSERT(rnsc_tmap_has(&prev, k));
	/* without memory to enlarge, the smaller recycled storage is kept */
	rnsc_tmap_free(&cur, NULL);
	for (unsigned i = 0; i < 200; i++) {
		key_of(k, i);
		CU_ASSERT_EQUAL(rnsc_tmap_put(&prev, k, NULL, NULL), 0);
	}
	rnsc_tmap_init(&cur, c, 16);
	CU_ASSERT_EQUAL(rnsc_tmap_put(&cur, k, NULL, NULL), 0);
	size_t small = cur.cap;
	rnsc_ctx_fail_alloc_after(c, 1);
	rnsc_tmap_rotate(&prev, &cur); /* prev is the bigger current generation here */
	rnsc_ctx_fail_alloc_after(c, 0);
	CU_ASSERT_EQUAL(prev.cap, small);
	CU_ASSERT_EQUAL(prev.n, 0);
	CU_ASSERT_EQUAL(cur.n, 200);
	rnsc_tmap_free(&cur, NULL);
	rnsc_tmap_free(&prev, NULL);
	rnsc_ctx_del(c);
}

int main(void)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("transport_map", NULL, NULL);
	CU_add_test(s, "against a model", test_model);
	CU_add_test(s, "allocation failure", test_alloc_failure);
	CU_add_test(s, "sets and generation rotation", test_set_rotate);
	return rnsc_cu_run();
}
