/* SPDX-License-Identifier: MIT */
/*
 * Deterministic generators of the benchmark scenarios (mirrored in Python by
 * bench/participants/bench_gen.py; tests/unit/bench_gen_test.c checks both against the same
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
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

/* Random access into the payload stream through an index: ck[b] is the state from which
 * word b * BENCH_CK_WORDS is the next step (ck[0] is the seed). One xorshift chain is
 * latency-bound, each step waiting for the last, so the resource scenarios, which draw
 * megabytes per resource on each side, run BENCH_LANES indexed blocks side by side. The
 * reference's participant makes its payload (in memory, or a file for the stream) before
 * timing; this keeps rnsc's comparable without holding 64 MiB. Caller storage, built once:
 * 8 bytes per 8 KiB of stream. */
#define BENCH_CK_WORDS 1024u
#define BENCH_LANES 8u

/* Index entries needed to read the first `bytes` bytes. */
static inline size_t bench_payload_index_len(uint64_t bytes)
{
	uint64_t words = (bytes + 7) / 8;
	return (size_t)((words + BENCH_CK_WORDS - 1) / BENCH_CK_WORDS);
}

static inline void bench_payload_index_build(uint64_t *ck, size_t n)
{
	uint64_t x = BENCH_PAYLOAD_SEED;
	for (size_t b = 0; b < n; b++) {
		ck[b] = x;
		for (unsigned j = 0; j < BENCH_CK_WORDS; j++)
			x = bench_xorshift64(x);
	}
}

static inline void bench_payload_store(uint8_t *p, uint64_t x)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	x = __builtin_bswap64(x);
#endif
	memcpy(p, &x, 8); /* little-endian */
}

/* The state from which word w is the next step. */
static inline uint64_t bench_payload_state_at(const uint64_t *ck, uint64_t w)
{
	uint64_t x = ck[w / BENCH_CK_WORDS];
	for (uint64_t j = w % BENCH_CK_WORDS; j > 0; j--)
		x = bench_xorshift64(x);
	return x;
}

/* Blocks w / BENCH_CK_WORDS .. + lanes - 1 (w on a block boundary) to out, side by side.
 * Called with a constant lanes, so that the states stay in registers. */
static inline void bench_payload_lanes(const uint64_t *ck, uint64_t w, uint8_t *out, unsigned lanes)
{
#if defined(__SSE2__)
	/* Two lanes per register where SSE2 is there (every x86-64, little-endian): half the
	 * shift and xor instructions. 1 MiB: 0.12-0.16 ms here, against 0.17-0.20 with scalar
	 * lanes and 0.28 for one chain. */
	if (lanes % 2 == 0) {
		__m128i v[BENCH_LANES / 2];
		for (unsigned l = 0; l < lanes; l += 2)
			v[l / 2] = _mm_loadu_si128(
				(const __m128i *)(const void *)(ck + w / BENCH_CK_WORDS + l));
		for (unsigned j = 0; j < BENCH_CK_WORDS; j++)
			for (unsigned l = 0; l < lanes; l += 2) {
				__m128i x = v[l / 2];
				x = _mm_xor_si128(x, _mm_slli_epi64(x, 13));
				x = _mm_xor_si128(x, _mm_srli_epi64(x, 7));
				x = _mm_xor_si128(x, _mm_slli_epi64(x, 17));
				v[l / 2] = x;
				uint8_t *o = out + 8 * ((size_t)l * BENCH_CK_WORDS + j);
				_mm_storel_epi64((__m128i *)(void *)o, x);
				_mm_storel_epi64((__m128i *)(void *)(o + 8 * BENCH_CK_WORDS),
						 _mm_unpackhi_epi64(x, x));
			}
		return;
	}
#endif
	uint64_t s[BENCH_LANES];
	for (unsigned l = 0; l < lanes; l++)
		s[l] = ck[w / BENCH_CK_WORDS + l];
	for (unsigned j = 0; j < BENCH_CK_WORDS; j++)
		for (unsigned l = 0; l < lanes; l++) {
			s[l] = bench_xorshift64(s[l]);
			bench_payload_store(out + 8 * ((size_t)l * BENCH_CK_WORDS + j), s[l]);
		}
}

/* Words [w, w + nw) to out (8 * nw bytes). */
static inline void bench_payload_words(const uint64_t *ck, uint64_t w, uint64_t nw, uint8_t *out)
{
	const uint64_t end = w + nw;
	uint64_t x;
	if (w % BENCH_CK_WORDS) {
		x = bench_payload_state_at(ck, w);
		for (; w < end && w % BENCH_CK_WORDS; w++, out += 8)
			bench_payload_store(out, x = bench_xorshift64(x));
	}
	for (unsigned lanes = BENCH_LANES; lanes >= 2; lanes /= 2)
		while (end - w >= (uint64_t)lanes * BENCH_CK_WORDS) {
			if (lanes == BENCH_LANES)
				bench_payload_lanes(ck, w, out, BENCH_LANES);
			else if (lanes == 4)
				bench_payload_lanes(ck, w, out, 4);
			else
				bench_payload_lanes(ck, w, out, 2);
			w += (uint64_t)lanes * BENCH_CK_WORDS;
			out += 8 * (size_t)lanes * BENCH_CK_WORDS;
		}
	if (w < end) {
		x = ck[w / BENCH_CK_WORDS]; /* w is on a block boundary here */
		for (; w < end; w++, out += 8)
			bench_payload_store(out, x = bench_xorshift64(x));
	}
}

/* Bytes [off, off + len) of the stream; the index must cover off + len bytes. */
static inline void bench_payload_read(const uint64_t *ck, uint64_t off, uint8_t *out, size_t len)
{
	uint8_t tmp[8];
	size_t i = 0;
	if (len && off % 8) {
		size_t s = (size_t)(off % 8), k = 8 - s < len ? 8 - s : len;
		bench_payload_store(tmp, bench_xorshift64(bench_payload_state_at(ck, off / 8)));
		memcpy(out, tmp + s, k);
		i = k;
	}
	uint64_t w = (off + i) / 8, nw = (len - i) / 8;
	bench_payload_words(ck, w, nw, out + i);
	i += (size_t)nw * 8;
	if (i < len) {
		bench_payload_store(tmp, bench_xorshift64(bench_payload_state_at(ck, w + nw)));
		memcpy(out + i, tmp, len - i);
	}
}

#endif
