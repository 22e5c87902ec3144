/* SPDX-License-Identifier: MIT */
#include "stamper.h"

#include <string.h>

#include "crypto.h"
#include "err.h"

int rnsc_stamp_workblock(rnsc_ctx *ctx, uint8_t *out, size_t cap, const uint8_t *material,
			 size_t material_len, unsigned rounds)
{
	if (!ctx || !out || !material || material_len == 0 || rounds == 0 ||
	    rounds > RNSC_STAMP_MAX_ROUNDS)
		return RNSC_ERR_INVAL;
	if (cap < (size_t)rounds * RNSC_STAMP_WORKBLOCK_ROUND)
		return RNSC_ERR_BUFSIZE;
	for (unsigned n = 0; n < rounds; n++) {
		/* msgpack(n): a positive fixint below 128, uint8 / uint16 above (rounds <= 4096). */
		uint8_t mp[3];
		size_t mp_len;
		if (n < 128) {
			mp[0] = (uint8_t)n;
			mp_len = 1;
		} else if (n < 256) {
			mp[0] = 0xcc;
			mp[1] = (uint8_t)n;
			mp_len = 2;
		} else {
			mp[0] = 0xcd;
			mp[1] = (uint8_t)(n >> 8);
			mp[2] = (uint8_t)n;
			mp_len = 3;
		}
		rnsc_hash h;
		uint8_t salt[32];
		int rc = rnsc_hash_init(ctx, &h, RNSC_HASH_SHA256);
		if (rc < 0)
			return rc;
		if ((rc = rnsc_hash_update(&h, material, material_len)) < 0 ||
		    (rc = rnsc_hash_update(&h, mp, mp_len)) < 0) {
			rnsc_hash_abort(&h);
			return rc;
		}
		if ((rc = rnsc_hash_final(&h, salt)) < 0)
			return rc;
		rc = rnsc_hkdf_sha256(ctx, out + (size_t)n * RNSC_STAMP_WORKBLOCK_ROUND,
				      RNSC_STAMP_WORKBLOCK_ROUND, material, material_len, salt,
				      sizeof salt, NULL, 0);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int leading_zeros(const uint8_t d[32])
{
	int v = 0;
	for (int i = 0; i < 32; i++) {
		if (d[i] == 0) {
			v += 8;
			continue;
		}
		for (int b = 7; b >= 0 && !(d[i] & (1u << b)); b--)
			v++;
		break;
	}
	return v;
}

/* hash <= 2^(256-cost), big-endian. */
static int within(const uint8_t d[32], int cost)
{
	if (cost <= 0)
		return 1;
	if (cost > 256)
		return 0;
	int z = leading_zeros(d);
	if (z >= cost)
		return 1;
	if (z != cost - 1)
		return 0;
	/* The only value with cost-1 leading zeros still allowed is 2^(256-cost) itself. */
	int bit = 256 - cost; /* the set bit's index from the least significant end */
	int byte = 31 - bit / 8;
	if (d[byte] != (uint8_t)(1u << (bit % 8)))
		return 0;
	for (int i = byte + 1; i < 32; i++)
		if (d[i])
			return 0;
	return 1;
}

static int stamp_hash(rnsc_ctx *ctx, uint8_t d[32], const rnsc_hash *prefix, const uint8_t *wb,
		      size_t wb_len, const uint8_t *stamp)
{
	rnsc_hash h;
	int rc;
	if (!prefix || rnsc_hash_copy(&h, prefix) < 0) {
		if ((rc = rnsc_hash_init(ctx, &h, RNSC_HASH_SHA256)) < 0)
			return rc;
		if ((rc = rnsc_hash_update(&h, wb, wb_len)) < 0) {
			rnsc_hash_abort(&h);
			return rc;
		}
	}
	if ((rc = rnsc_hash_update(&h, stamp, RNSC_STAMP_SIZE)) < 0) {
		rnsc_hash_abort(&h);
		return rc;
	}
	return rnsc_hash_final(&h, d);
}

int rnsc_stamp_value(rnsc_ctx *ctx, const uint8_t *workblock, size_t wb_len,
		     const uint8_t stamp[RNSC_STAMP_SIZE])
{
	if (!ctx || (!workblock && wb_len) || !stamp)
		return RNSC_ERR_INVAL;
	uint8_t d[32];
	int rc = stamp_hash(ctx, d, NULL, workblock, wb_len, stamp);
	return rc < 0 ? rc : leading_zeros(d);
}

int rnsc_stamp_valid(rnsc_ctx *ctx, const uint8_t stamp[RNSC_STAMP_SIZE], int cost,
		     const uint8_t *workblock, size_t wb_len)
{
	if (!ctx || (!workblock && wb_len) || !stamp)
		return RNSC_ERR_INVAL;
	uint8_t d[32];
	int rc = stamp_hash(ctx, d, NULL, workblock, wb_len, stamp);
	return rc < 0 ? rc : within(d, cost);
}

int rnsc_stamp_generate(rnsc_ctx *ctx, uint8_t out[RNSC_STAMP_SIZE], const uint8_t *workblock,
			size_t wb_len, int cost, uint64_t max_tries)
{
	if (!ctx || !out || (!workblock && wb_len) || cost < 0 || cost > 256)
		return RNSC_ERR_INVAL;
	/* The workblock prefix is hashed once; each try continues a copy of that state. */
	rnsc_hash prefix;
	int rc = rnsc_hash_init(ctx, &prefix, RNSC_HASH_SHA256);
	if (rc < 0)
		return rc;
	if ((rc = rnsc_hash_update(&prefix, workblock, wb_len)) < 0) {
		rnsc_hash_abort(&prefix);
		return rc;
	}
	uint8_t s[RNSC_STAMP_SIZE], d[32];
	for (uint64_t n = 0; max_tries == 0 || n < max_tries; n++) {
		if ((rc = rnsc_random(ctx, s, sizeof s)) < 0)
			break;
		if ((rc = stamp_hash(ctx, d, &prefix, workblock, wb_len, s)) < 0)
			break;
		if (within(d, cost)) {
			memcpy(out, s, sizeof s);
			rnsc_hash_abort(&prefix);
			return leading_zeros(d);
		}
	}
	rnsc_hash_abort(&prefix);
	return rc < 0 ? rc : RNSC_ERR_RANGE;
}
