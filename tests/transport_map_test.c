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

#define N 5000

static uint64_t rs = 88172645463325252u;
static uint64_t next_rand(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
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

int main(void)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("transport_map", NULL, NULL);
	CU_add_test(s, "against a model", test_model);
	CU_add_test(s, "allocation failure", test_alloc_failure);
	return rnsc_cu_run();
}
