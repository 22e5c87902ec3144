/* SPDX-License-Identifier: MIT */
/*
 * AES-NI versions of the RandomX AES functions (see rx_aes.c for the semantics). Only the
 * functions here are compiled for AES-NI, through a target attribute, so the library needs no
 * special build flags and the rest of it runs on any x86-64; nothing here runs unless
 * rx_aes_hw() found AES-NI.
 */
#include "rx_internal.h"

#if defined(__x86_64__)
#include <emmintrin.h>
#include <wmmintrin.h>

#define AESNI __attribute__((target("aes,sse4.1")))

static inline __m128i ld(const uint8_t *p)
{
	return _mm_loadu_si128((const __m128i *)(const void *)p);
}

static inline void st(uint8_t *p, __m128i v)
{
	_mm_storeu_si128((__m128i *)(void *)p, v);
}

AESNI static void ni_enc_round(uint8_t blk[16], const uint8_t key[16])
{
	st(blk, _mm_aesenc_si128(ld(blk), ld(key)));
}

AESNI static void ni_dec_round(uint8_t blk[16], const uint8_t key[16])
{
	st(blk, _mm_aesdec_si128(ld(blk), ld(key)));
}

AESNI static void ni_fill1r(uint8_t state[64], uint8_t *out, size_t len)
{
	const __m128i k0 = ld(rx_aes_gen1r_keys), k1 = ld(rx_aes_gen1r_keys + 16),
		      k2 = ld(rx_aes_gen1r_keys + 32), k3 = ld(rx_aes_gen1r_keys + 48);
	__m128i s0 = ld(state), s1 = ld(state + 16), s2 = ld(state + 32), s3 = ld(state + 48);
	for (size_t off = 0; off < len; off += 64) {
		s0 = _mm_aesdec_si128(s0, k0);
		s1 = _mm_aesenc_si128(s1, k1);
		s2 = _mm_aesdec_si128(s2, k2);
		s3 = _mm_aesenc_si128(s3, k3);
		st(out + off, s0);
		st(out + off + 16, s1);
		st(out + off + 32, s2);
		st(out + off + 48, s3);
	}
	st(state, s0);
	st(state + 16, s1);
	st(state + 32, s2);
	st(state + 48, s3);
}

AESNI static void ni_fill4r(const uint8_t state[64], uint8_t *out, size_t len)
{
	__m128i k[8];
	for (int i = 0; i < 8; i++)
		k[i] = ld(rx_aes_gen4r_keys + 16 * i);
	__m128i s0 = ld(state), s1 = ld(state + 16), s2 = ld(state + 32), s3 = ld(state + 48);
	for (size_t off = 0; off < len; off += 64) {
		for (int r = 0; r < 4; r++) {
			s0 = _mm_aesdec_si128(s0, k[r]);
			s1 = _mm_aesenc_si128(s1, k[r]);
			s2 = _mm_aesdec_si128(s2, k[4 + r]);
			s3 = _mm_aesenc_si128(s3, k[4 + r]);
		}
		st(out + off, s0);
		st(out + off + 16, s1);
		st(out + off + 32, s2);
		st(out + off + 48, s3);
	}
}

AESNI static void ni_hash1r(const uint8_t *in, size_t len, uint8_t out[64])
{
	__m128i s0 = ld(rx_aes_hash1r_state), s1 = ld(rx_aes_hash1r_state + 16),
		s2 = ld(rx_aes_hash1r_state + 32), s3 = ld(rx_aes_hash1r_state + 48);
	for (size_t off = 0; off < len; off += 64) {
		s0 = _mm_aesenc_si128(s0, ld(in + off));
		s1 = _mm_aesdec_si128(s1, ld(in + off + 16));
		s2 = _mm_aesenc_si128(s2, ld(in + off + 32));
		s3 = _mm_aesdec_si128(s3, ld(in + off + 48));
	}
	for (int r = 0; r < 2; r++) {
		__m128i x = ld(rx_aes_hash1r_xkeys + 16 * r);
		s0 = _mm_aesenc_si128(s0, x);
		s1 = _mm_aesdec_si128(s1, x);
		s2 = _mm_aesenc_si128(s2, x);
		s3 = _mm_aesdec_si128(s3, x);
	}
	st(out, s0);
	st(out + 16, s1);
	st(out + 32, s2);
	st(out + 48, s3);
}

AESNI static void ni_mix_fe(uint8_t f[64], const uint8_t e[64])
{
	__m128i s0 = ld(f), s1 = ld(f + 16), s2 = ld(f + 32), s3 = ld(f + 48);
	for (int r = 0; r < 4; r++) {
		__m128i k = ld(e + 16 * r);
		s0 = _mm_aesenc_si128(s0, k);
		s1 = _mm_aesdec_si128(s1, k);
		s2 = _mm_aesenc_si128(s2, k);
		s3 = _mm_aesdec_si128(s3, k);
	}
	st(f, s0);
	st(f + 16, s1);
	st(f + 32, s2);
	st(f + 48, s3);
}

const rx_aes_impl rx_aes_ni = {
	.name = "aes-ni",
	.fill1r = ni_fill1r,
	.fill4r = ni_fill4r,
	.hash1r = ni_hash1r,
	.mix_fe = ni_mix_fe,
	.enc_round = ni_enc_round,
	.dec_round = ni_dec_round,
};
#else
/* Keeps the translation unit non-empty where AES-NI does not exist. */
typedef int rx_aes_ni_unused;
#endif
