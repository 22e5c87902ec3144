/* SPDX-License-Identifier: MIT */
/*
 * The seeded input generator shared by the conformance engines (xcheck.c, matrix.c):
 * splitmix64 — tiny, full-period, and good enough to spread test inputs. Inputs depend
 * only on the seed, so every failure reproduces. Header-only; no state of its own.
 */
#ifndef RNSC_CONF_RNG_H
#define RNSC_CONF_RNG_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t conf_next64(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static inline void conf_gen_bytes(uint64_t *s, uint8_t *p, size_t n)
{
	while (n) {
		uint64_t v = conf_next64(s);
		size_t k = n < 8 ? n : 8;
		memcpy(p, &v, k);
		p += k;
		n -= k;
	}
}

#endif
