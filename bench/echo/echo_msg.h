/* SPDX-License-Identifier: MIT */
/*
 * The echo benchmark's message and measurement rules, shared by rnsc's implementation
 * (bench/echo/echo_run.c) and the Boost.Asio peer (bench/peers/asio_echo.cpp) so both
 * send, check and count exactly the same way. Plain C, header-only, usable from C++.
 *
 * Message (payload bytes, 16 minimum):
 *   0..2   magic "ECH"
 *   3      phase (ECHO_PHASE_*: the client's phase when it sent the message)
 *   4..7   client id, big-endian
 *   8..15  sequence number, big-endian, per client from 0
 *   16..   pattern byte i = (seq * 131 + client * 17 + i) & 0xff
 * The server echoes bytes unchanged; the client checks every byte and the order.
 *
 * RTT samples go to a reservoir of ECHO_RESERVOIR entries (Algorithm R with a fixed-seed
 * xorshift generator), percentiles by nearest rank.
 */
#ifndef RNSC_ECHO_MSG_H
#define RNSC_ECHO_MSG_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define ECHO_MIN_PAYLOAD 16u
#define ECHO_MAX_PAYLOAD 65000u /* one UDP datagram on loopback */
#define ECHO_RESERVOIR 8192u

enum echo_phase { ECHO_PHASE_WARMUP = 1, ECHO_PHASE_MEASURE = 2, ECHO_PHASE_DRAIN = 3 };

/* Error counters: any non-zero one makes a run invalid. */
enum echo_err {
	ECHO_ERR_CONTENT = 0,    /* a byte differs from what was sent */
	ECHO_ERR_ORDER = 1,      /* an echo arrived out of sequence */
	ECHO_ERR_LOSS = 2,       /* a datagram echo never came back */
	ECHO_ERR_DISCONNECT = 3, /* a connection closed or failed mid-run */
	ECHO_ERR_DRAIN = 4,      /* echoes still outstanding when the drain time ran out */
	ECHO_ERR_COUNT
};
static const char *const echo_err_names[ECHO_ERR_COUNT] = {"content", "order", "loss", "disconnect",
							   "drain_timeout"};

static inline uint8_t echo_pattern(uint64_t seq, uint32_t client, size_t i)
{
	return (uint8_t)((seq * 131u + (uint64_t)client * 17u + i) & 0xffu);
}

static inline void echo_fill(uint8_t *m, size_t len, uint32_t client, uint64_t seq, int phase)
{
	m[0] = 'E', m[1] = 'C', m[2] = 'H', m[3] = (uint8_t)phase;
	for (int k = 0; k < 4; k++)
		m[4 + k] = (uint8_t)(client >> (24 - 8 * k));
	for (int k = 0; k < 8; k++)
		m[8 + k] = (uint8_t)(seq >> (56 - 8 * k));
	for (size_t i = 16; i < len; i++)
		m[i] = echo_pattern(seq, client, i);
}

/* Returns -1 when the header or a pattern byte is wrong; otherwise 0 with *seq set. */
static inline int echo_check(const uint8_t *m, size_t len, uint32_t client, uint64_t *seq)
{
	if (len < ECHO_MIN_PAYLOAD || m[0] != 'E' || m[1] != 'C' || m[2] != 'H' || m[3] < 1 ||
	    m[3] > 3)
		return -1;
	uint32_t c = 0;
	uint64_t s = 0;
	for (int k = 0; k < 4; k++)
		c = c << 8 | m[4 + k];
	for (int k = 0; k < 8; k++)
		s = s << 8 | m[8 + k];
	if (c != client)
		return -1;
	for (size_t i = 16; i < len; i++)
		if (m[i] != echo_pattern(s, client, i))
			return -1;
	*seq = s;
	return 0;
}

/* RTT reservoir (one per client thread; merged by the caller). */
typedef struct echo_reservoir {
	uint64_t seen;
	uint64_t rng;
	uint32_t n;
	uint32_t us[ECHO_RESERVOIR]; /* RTT samples in microseconds (rounded down, ns/1000) */
} echo_reservoir;

static inline void echo_reservoir_init(echo_reservoir *r, uint64_t seed)
{
	r->seen = 0, r->n = 0, r->rng = seed ? seed : 0x9e3779b97f4a7c15ull;
}

static inline uint64_t echo_xorshift(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13, x ^= x >> 7, x ^= x << 17;
	return *s = x;
}

/* rtt_ns is kept as a 32-bit microsecond count (saturating at ~71 minutes). */
static inline void echo_reservoir_add(echo_reservoir *r, uint64_t rtt_ns)
{
	uint64_t us = rtt_ns / 1000u;
	uint32_t v = us > 0xffffffffu ? 0xffffffffu : (uint32_t)us;
	r->seen++;
	if (r->n < ECHO_RESERVOIR) {
		r->us[r->n++] = v;
		return;
	}
	uint64_t j = echo_xorshift(&r->rng) % r->seen;
	if (j < ECHO_RESERVOIR)
		r->us[j] = v;
}

static inline int echo_u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* Nearest rank on a sorted array: the smallest value with at least p% at or below it. */
static inline double echo_percentile(const uint32_t *sorted, uint32_t n, double p)
{
	if (n == 0)
		return 0.0;
	double rank = p / 100.0 * (double)n;
	uint32_t k = (uint32_t)rank;
	if ((double)k < rank)
		k++;
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return (double)sorted[k - 1];
}

#endif
