/* SPDX-License-Identifier: MIT */
/*
 * Blake2b for RandomX through libsodium: crypto_generichash is unkeyed Blake2b with a digest of
 * 16..64 bytes, which covers everything RandomX needs (Hash512, Hash256, Argon2's H0 and H').
 * Also the BlakeGenerator of spec 3.5 and the IMUL_RCP reciprocal, both small and stateless.
 */
#include <sodium.h>

#include "rx_internal.h"

void rx_blake2b(void *out, size_t outlen, const void *in, size_t inlen)
{
	/* Cannot fail for 16 <= outlen <= 64 and no key, which every caller here guarantees. */
	(void)crypto_generichash((unsigned char *)out, outlen, (const unsigned char *)in, inlen,
				 NULL, 0);
}

void rx_blake2_gen_init(rx_blake2_gen *g, const uint8_t *seed, size_t seed_len, uint32_t nonce)
{
	memset(g->data, 0, sizeof(g->data));
	if (seed_len > RX_KEY_MAX)
		seed_len = RX_KEY_MAX;
	if (seed_len)
		memcpy(g->data, seed, seed_len);
	rx_store32(g->data + RX_KEY_MAX, nonce);
	/* Marked exhausted so the first draw hashes the padded seed (spec 3.5.1). */
	g->pos = sizeof(g->data);
}

static void gen_need(rx_blake2_gen *g, size_t n)
{
	if (g->pos + n > sizeof(g->data)) {
		uint8_t tmp[64];
		rx_blake2b(tmp, sizeof(tmp), g->data, sizeof(g->data));
		memcpy(g->data, tmp, sizeof(tmp));
		g->pos = 0;
	}
}

uint8_t rx_blake2_gen_byte(rx_blake2_gen *g)
{
	gen_need(g, 1);
	return g->data[g->pos++];
}

uint32_t rx_blake2_gen_u32(rx_blake2_gen *g)
{
	gen_need(g, 4);
	uint32_t v = rx_load32(g->data + g->pos);
	g->pos += 4;
	return v;
}

uint64_t rx_reciprocal(uint32_t d)
{
	/* The quotient of 2^(63 + bitlen(d)) by d lies in [2^63, 2^64) for d not a power of two,
	 * which is exactly "the largest x such that the result fits 64 bits". */
	unsigned bits = 32u - (unsigned)__builtin_clz(d);
	/* 2^(63+bits) = A * 2^32 with A = 2^(31+bits) < 2^64, divided in two 64-bit steps
	 * (no __int128 on 32-bit targets): floor(A*2^32/d) = (A/d)*2^32 + floor((A%d)*2^32/d),
	 * and A%d < d < 2^32 keeps the second dividend within 64 bits. */
	uint64_t a = (uint64_t)1 << (31 + bits);
	uint64_t q1 = a / d, r1 = a % d;
	return (q1 << 32) + ((r1 << 32) / d);
}
