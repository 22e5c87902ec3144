/* SPDX-License-Identifier: MIT */
/*
 * Deterministic generators of the benchmark scenarios (mirrored in Python by
 * bench/participants/bench_gen.py; tests/bench_gen_test.c checks both against the same
 * golden values).
 *
 * Sizes: xorshift64 (shifts 13, 7, 17) from seed 6840346605343539201; every draw advances
 * the state, then size = lo + state mod (hi - lo + 1).
 * Payload: an incompressible stream, xorshift64 from seed 0x9E3779B97F4A7C15; every step
 * advances the state and appends its 8 bytes little-endian.
 * Header-only, no allocation; one generator per thread.
 */
#ifndef RNSC_BENCH_GEN_H
#define RNSC_BENCH_GEN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define BENCH_SIZE_SEED UINT64_C(6840346605343539201)
#define BENCH_PAYLOAD_SEED UINT64_C(0x9E3779B97F4A7C15)

static inline uint64_t bench_xorshift64(uint64_t x)
{
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return x;
}

typedef struct bench_sizes {
	uint64_t state;
	uint32_t lo, span;
} bench_sizes;

static inline void bench_sizes_init(bench_sizes *g, uint32_t lo, uint32_t hi)
{
	g->state = BENCH_SIZE_SEED, g->lo = lo, g->span = hi - lo + 1;
}

static inline uint32_t bench_sizes_next(bench_sizes *g)
{
	g->state = bench_xorshift64(g->state);
	return g->lo + (uint32_t)(g->state % g->span);
}

typedef struct bench_payload {
	uint64_t state;
	uint8_t word[8];
	unsigned used; /* bytes of word already handed out (8: none left) */
} bench_payload;

static inline void bench_payload_init(bench_payload *g)
{
	g->state = BENCH_PAYLOAD_SEED, g->used = 8;
}

/* Whole words go straight from the state to the output: the resource scenarios draw a
 * mebibyte per resource on each side, and a byte-at-a-time loop made this generator a
 * tenth of a resource cell's profile. The stream is the same however it is cut. */
static inline void bench_payload_take(bench_payload *g, uint8_t *out, size_t n)
{
	size_t i = 0;
	while (i < n && g->used < 8)
		out[i++] = g->word[g->used++];
	for (; i + 8 <= n; i += 8) {
		uint64_t x = g->state = bench_xorshift64(g->state);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		x = __builtin_bswap64(x);
#endif
		memcpy(out + i, &x, 8); /* little-endian */
	}
	if (i < n) {
		g->state = bench_xorshift64(g->state);
		for (int k = 0; k < 8; k++)
			g->word[k] = (uint8_t)(g->state >> (8 * k));
		size_t r = n - i; /* 1..7 */
		for (size_t k = 0; k < r && k < 8; k++)
			out[i + k] = g->word[k];
		g->used = (unsigned)r;
	}
}

#endif
