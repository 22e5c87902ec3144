/* SPDX-License-Identifier: MIT */
/*
 * ResourceAdvertisement (Resource.py, rns 1.5.4): the MessagePack map a sender puts in a
 * RESOURCE_ADV packet, and the constants both ends derive from it. Pure functions, no
 * allocation: unpack hands out pointers into the caller's bytes.
 *
 * Wire form (umsgpack.packb of a dict, keys in this order, umsgpack's smallest encodings):
 *   {"t": transfer size (encrypted bytes of this segment), "d": total data size (all
 *    segments, metadata included), "n": parts, "h": hash (32), "r": random hash (4),
 *    "o": original hash (first segment's hash), "i": segment index (1-based), "l": total
 *    segments, "q": request id (bin) or nil, "f": flags, "m": up to HASHMAP_MAX_LEN map
 *    hashes of 4 bytes (the first hashmap segment)}
 * Flags: bit0 encrypted, bit1 compressed, bit2 split, bit3 is_request, bit4 is_response,
 * bit5 has_metadata.
 *
 * Unpack follows ResourceAdvertisement.unpack: every key must be present (extra keys are
 * ignored, as a dict lookup does), and t may not exceed 3 * MAX_EFFICIENT_SIZE. Stricter than
 * the reference where it would only fail later (a KeyError or TypeError when the values are
 * used): the numbers must be non-negative integers, h and o 32 bytes, r 1..32 bytes, q nil or
 * 1..32 bytes, m a whole number of map hashes, i and l at least 1 and i <= l.
 * Threading: none (plain values).
 */
#ifndef RNSC_RESOURCE_ADV_H
#define RNSC_RESOURCE_ADV_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define RNSC_RESOURCE_MAPHASH_LEN 4
#define RNSC_RESOURCE_RANDOM_HASH_SIZE 4
/* 1 MiB - 1: the largest segment (plaintext, metadata included). */
#define RNSC_RESOURCE_MAX_EFFICIENT_SIZE (1024u * 1024u - 1u)
/* ResourceAdvertisement.OVERHEAD, HASHMAP_MAX_LEN = floor((Link.MDU - OVERHEAD) / 4) with the
 * reference's constant Link.MDU (431, for the 500-byte MTU, whatever the link's MTU). */
#define RNSC_RESOURCE_ADV_OVERHEAD 134u
#define RNSC_RESOURCE_HASHMAP_MAX_LEN 74u
/* COLLISION_GUARD_SIZE = 2 * WINDOW_MAX + HASHMAP_MAX_LEN */
#define RNSC_RESOURCE_WINDOW_MAX 75u
#define RNSC_RESOURCE_COLLISION_GUARD_SIZE                                                         \
	(2u * RNSC_RESOURCE_WINDOW_MAX + RNSC_RESOURCE_HASHMAP_MAX_LEN)
/* The largest packed advertisement (74 map hashes, a 32-byte request id). */
#define RNSC_RESOURCE_ADV_MAX_LEN 512u

enum rnsc_resource_flag {
	RNSC_RESOURCE_F_ENCRYPTED = 0x01,
	RNSC_RESOURCE_F_COMPRESSED = 0x02,
	RNSC_RESOURCE_F_SPLIT = 0x04,
	RNSC_RESOURCE_F_IS_REQUEST = 0x08,
	RNSC_RESOURCE_F_IS_RESPONSE = 0x10,
	RNSC_RESOURCE_F_HAS_METADATA = 0x20,
};

typedef struct rnsc_resource_adv {
	uint64_t t, d, n;
	uint8_t h[32];
	uint8_t r[32];
	size_t r_len;
	uint8_t o[32];
	uint64_t i, l;
	int has_q;
	uint8_t q[32];
	size_t q_len;
	uint64_t f;
	const uint8_t *m; /* borrowed: the caller's hashmap (pack) or the input bytes (unpack) */
	size_t m_len;     /* bytes */
} rnsc_resource_adv;

/* Packs a->m[segment * HASHMAP_MAX_LEN ...] (at most HASHMAP_MAX_LEN hashes, a->m holding the
 * whole hashmap of a->n hashes) as ResourceAdvertisement.pack(segment). Returns the length,
 * RNSC_ERR_INVAL (NULL, r_len/q_len out of range, m shorter than n hashes),
 * RNSC_ERR_BUFSIZE. */
RNSC_API int rnsc_resource_adv_pack(const rnsc_resource_adv *a, unsigned segment, uint8_t *out,
				    size_t cap);
/* Parses a RESOURCE_ADV plaintext. Returns 0, RNSC_ERR_INVAL, RNSC_ERR_TRUNCATED /
 * RNSC_ERR_MALFORMED (not a map, a key missing, a value of the wrong type or size),
 * RNSC_ERR_TOOBIG (t beyond 3 * MAX_EFFICIENT_SIZE). */
RNSC_API int rnsc_resource_adv_unpack(rnsc_resource_adv *a, const uint8_t *p,
				      size_t len) RNSC_MUST_CHECK;

/* Flag tests on an advertisement as the reference reads them: is_request needs a request id
 * and the u flag, is_response a request id and the p flag. */
RNSC_API int rnsc_resource_adv_is_request(const rnsc_resource_adv *a);
RNSC_API int rnsc_resource_adv_is_response(const rnsc_resource_adv *a);

#endif
