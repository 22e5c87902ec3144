/* SPDX-License-Identifier: MIT */
/*
 * Argon2d memory fill for the RandomX cache (spec 7.1; Argon2 version 0x13, RFC 9106).
 *
 * Debian's libargon2 only exposes whole-hash APIs (it finalises and frees the memory), and
 * libsodium implements Argon2i/Argon2id but not Argon2d, so the fill lives here. Only what
 * RandomX uses is implemented: one lane, no secret, no associated data, output length 0, and
 * the filled memory itself is the result.
 */
#include <sodium.h>

#include "rx_internal.h"

#define A2_BLOCK_WORDS 128 /* 1 KiB block as 64-bit words */
#define A2_SYNC_POINTS 4
#define A2_VERSION 0x13
#define A2_TYPE_D 0

typedef struct a2_block {
	uint64_t v[A2_BLOCK_WORDS];
} a2_block;

static inline uint64_t rotr64(uint64_t x, unsigned c)
{
	return (x >> c) | (x << (64 - c));
}

/* BlaMka: Blake2b's G with the additions replaced by a + b + 2 * lo32(a) * lo32(b). */
static inline uint64_t fblamka(uint64_t x, uint64_t y)
{
	return x + y + 2 * (uint64_t)(uint32_t)x * (uint32_t)y;
}

#define A2_G(a, b, c, d)                                                                           \
	do {                                                                                       \
		a = fblamka(a, b);                                                                 \
		d = rotr64(d ^ a, 32);                                                             \
		c = fblamka(c, d);                                                                 \
		b = rotr64(b ^ c, 24);                                                             \
		a = fblamka(a, b);                                                                 \
		d = rotr64(d ^ a, 16);                                                             \
		c = fblamka(c, d);                                                                 \
		b = rotr64(b ^ c, 63);                                                             \
	} while (0)

/* The permutation P on 16 words addressed through an index table. */
static inline void a2_round(uint64_t *v, const uint8_t idx[16])
{
	uint64_t *w[16];
	for (int i = 0; i < 16; i++)
		w[i] = &v[idx[i]];
	A2_G(*w[0], *w[4], *w[8], *w[12]);
	A2_G(*w[1], *w[5], *w[9], *w[13]);
	A2_G(*w[2], *w[6], *w[10], *w[14]);
	A2_G(*w[3], *w[7], *w[11], *w[15]);
	A2_G(*w[0], *w[5], *w[10], *w[15]);
	A2_G(*w[1], *w[6], *w[11], *w[12]);
	A2_G(*w[2], *w[7], *w[8], *w[13]);
	A2_G(*w[3], *w[4], *w[9], *w[14]);
}

/* Index tables: rows are 16 consecutive words; columns take word pairs 2i, 2i+1 of each row. */
static const uint8_t (*a2_tables(void))[16]
{
	static const uint8_t t[16][16] = {
#define ROW(i)                                                                                     \
	{16 * i + 0,  16 * i + 1,  16 * i + 2,  16 * i + 3, 16 * i + 4,  16 * i + 5,               \
	 16 * i + 6,  16 * i + 7,  16 * i + 8,  16 * i + 9, 16 * i + 10, 16 * i + 11,              \
	 16 * i + 12, 16 * i + 13, 16 * i + 14, 16 * i + 15}
#define COL(i)                                                                                     \
	{                                                                                          \
		2 * i, 2 * i + 1, 2 * i + 16, 2 * i + 17, 2 * i + 32, 2 * i + 33, 2 * i + 48,      \
			2 * i + 49, 2 * i + 64, 2 * i + 65, 2 * i + 80, 2 * i + 81, 2 * i + 96,    \
			2 * i + 97, 2 * i + 112, 2 * i + 113                                       \
	}
		ROW(0), ROW(1), ROW(2), ROW(3), ROW(4), ROW(5), ROW(6), ROW(7),
		COL(0), COL(1), COL(2), COL(3), COL(4), COL(5), COL(6), COL(7),
#undef ROW
#undef COL
	};
	return t;
}

/* next = P(prev ^ ref) ^ prev ^ ref (^ next when overwriting in later passes). */
static void a2_fill_block(const a2_block *prev, const a2_block *ref, a2_block *next, int with_xor)
{
	a2_block r, t;
	const uint8_t(*tab)[16] = a2_tables();
	for (int i = 0; i < A2_BLOCK_WORDS; i++)
		r.v[i] = prev->v[i] ^ ref->v[i];
	t = r;
	if (with_xor)
		for (int i = 0; i < A2_BLOCK_WORDS; i++)
			t.v[i] ^= next->v[i];
	for (int i = 0; i < 16; i++)
		a2_round(r.v, tab[i]);
	for (int i = 0; i < A2_BLOCK_WORDS; i++)
		next->v[i] = t.v[i] ^ r.v[i];
}

/* H' of Argon2 for a 1024-byte output: chained Blake2b-512, 32 bytes kept from each link. */
static void a2_hprime_block(uint8_t out[1024], const uint8_t *in, size_t in_len)
{
	uint8_t buf[4 + 72];
	uint8_t v[64];
	rx_store32(buf, 1024);
	memcpy(buf + 4, in, in_len);
	rx_blake2b(v, 64, buf, 4 + in_len);
	memcpy(out, v, 32);
	size_t pos = 32;
	while (1024 - pos > 64) {
		rx_blake2b(v, 64, v, 64);
		memcpy(out + pos, v, 32);
		pos += 32;
	}
	rx_blake2b(v, 64, v, 64);
	memcpy(out + pos, v, 64);
}

static void a2_initial_hash(uint8_t h0[64], const uint8_t *pwd, size_t pwd_len)
{
	/* H0 input: lanes, tag length, memory, passes, version, type, then length-prefixed
	 * password, salt, secret and associated data, all little-endian 32-bit. Streamed so a key
	 * of any length needs no buffer. */
	crypto_generichash_state st;
	uint8_t w[4];
	const uint32_t head[6] = {RX_ARGON_LANES,  0 /* RandomX asks for no tag */,
				  RX_ARGON_MEMORY, RX_ARGON_ITERATIONS,
				  A2_VERSION,      A2_TYPE_D};
	crypto_generichash_init(&st, NULL, 0, 64);
	for (int i = 0; i < 6; i++) {
		rx_store32(w, head[i]);
		crypto_generichash_update(&st, w, 4);
	}
	rx_store32(w, (uint32_t)pwd_len);
	crypto_generichash_update(&st, w, 4);
	if (pwd_len)
		crypto_generichash_update(&st, pwd, pwd_len);
	rx_store32(w, RX_ARGON_SALT_LEN);
	crypto_generichash_update(&st, w, 4);
	crypto_generichash_update(&st, (const uint8_t *)RX_ARGON_SALT, RX_ARGON_SALT_LEN);
	rx_store32(w, 0);
	crypto_generichash_update(&st, w, 4); /* secret length */
	crypto_generichash_update(&st, w, 4); /* associated data length */
	crypto_generichash_final(&st, h0, 64);
	sodium_memzero(&st, sizeof(st));
}

/* Reference block index for Argon2d with one lane (the same-lane case of RFC 9106 3.4.1.2). */
static uint32_t a2_ref_index(uint32_t pass, uint32_t slice, uint32_t index, uint32_t rand32)
{
	const uint32_t seg = RX_ARGON_MEMORY / A2_SYNC_POINTS;
	const uint32_t lane_len = RX_ARGON_MEMORY;
	uint32_t area;
	uint64_t start = 0;
	if (pass == 0)
		area = slice * seg + index - 1;
	else
		area = lane_len - seg + index - 1;
	if (pass != 0 && slice != A2_SYNC_POINTS - 1)
		start = (uint64_t)(slice + 1) * seg;
	uint64_t x = ((uint64_t)rand32 * rand32) >> 32;
	uint64_t rel = area - 1 - (((uint64_t)area * x) >> 32);
	return (uint32_t)((start + rel) % lane_len);
}

void rx_argon2d_fill(uint8_t *mem, const uint8_t *pwd, size_t pwd_len)
{
	const uint32_t seg = RX_ARGON_MEMORY / A2_SYNC_POINTS;
	const uint32_t lane_len = RX_ARGON_MEMORY;
	a2_block *b = (a2_block *)(void *)mem;
	uint8_t h0x[72];
	uint8_t blk[1024];

	a2_initial_hash(h0x, pwd, pwd_len);
	/* The first two blocks of the lane: H'(H0 || LE32(block) || LE32(lane)). */
	for (uint32_t i = 0; i < 2; i++) {
		rx_store32(h0x + 64, i);
		rx_store32(h0x + 68, 0);
		a2_hprime_block(blk, h0x, sizeof(h0x));
		for (int w = 0; w < A2_BLOCK_WORDS; w++)
			b[i].v[w] = rx_load64(blk + 8 * w);
	}
	sodium_memzero(h0x, sizeof(h0x));
	sodium_memzero(blk, sizeof(blk));

	for (uint32_t pass = 0; pass < RX_ARGON_ITERATIONS; pass++) {
		for (uint32_t slice = 0; slice < A2_SYNC_POINTS; slice++) {
			uint32_t idx = (pass == 0 && slice == 0) ? 2 : 0;
			uint32_t cur = slice * seg + idx;
			uint32_t prev = cur ? cur - 1 : lane_len - 1;
			for (; idx < seg; idx++, cur++, prev = cur - 1) {
				/* Argon2d: the reference is chosen by the previous block's first word. */
				uint32_t rand32 = (uint32_t)b[prev].v[0];
				uint32_t ref = a2_ref_index(pass, slice, idx, rand32);
				a2_fill_block(&b[prev], &b[ref], &b[cur], pass != 0);
			}
		}
	}
}
