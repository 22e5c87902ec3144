/* SPDX-License-Identifier: MIT */
/*
 * The tests' deterministic generator: Marsaglia's xorshift64 (shifts 13, 7, 17), the same
 * sequence on every platform, so a failing case repeats exactly. Not for anything that
 * needs real randomness. The caller owns the state (any value but 0).
 */
#ifndef RNSC_TEST_RNG_H
#define RNSC_TEST_RNG_H

#include <stdint.h>

static inline uint64_t test_xorshift64(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

#endif
