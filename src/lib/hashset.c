/* SPDX-License-Identifier: MIT */
/* Blocked, sharded packet hash set (see hashset.h). */
#include <string.h>

#include "err.h"
#include "hashset.h"

#define B RNSC_HSET_BLOCK

static size_t shard_of(const uint8_t *key)
{
	return key[15] % RNSC_HSET_SHARDS; /* keys are hashes: uniform bytes */
}

/* As rnsc_tmap: 0 marks an empty slot, byte 8 spares most key reads while probing. */
static uint8_t tag_of(const uint8_t *key)
{
	return key[8] ? key[8] : 1;
}

static size_t cap_of(const rnsc_hset_shard *h)
{
	return h->nblk * B;
}

static size_t home_of(size_t cap, const uint8_t *key)
{
	uint64_t x;
	memcpy(&x, key, sizeof(x));
	x = (x * UINT64_C(0x9E3779B97F4A7C15)) >> 32;
	return (size_t)((x * (uint64_t)cap) >> 32); /* cap < 2^32: fits a shard */
}

static uint8_t *tag_at(const rnsc_hset_shard *h, size_t i)
{
	return h->blk[i / B] + i % B;
}

static uint8_t *key_at(const rnsc_hset_shard *h, size_t kl, size_t i)
{
	return h->blk[i / B] + B + (i % B) * kl;
}

static int find(const rnsc_hset_shard *h, size_t kl, const uint8_t *key, size_t *at)
{
	size_t cap = cap_of(h);
	if (!cap)
		return 0;
	size_t i = home_of(cap, key);
	uint8_t tag = tag_of(key);
	for (uint8_t st; (st = *tag_at(h, i)) != 0; i = i + 1 == cap ? 0 : i + 1) {
		if (st == tag && memcmp(key_at(h, kl, i), key, kl) == 0) {
			*at = i;
			return 1;
		}
	}
	*at = i;
	return 0;
}

static void free_blocks(rnsc_ctx *ctx, rnsc_hset_shard *h)
{
	for (size_t b = 0; b < h->nblk; b++)
		rnsc_free(ctx, h->blk[b]);
	rnsc_free(ctx, h->blk);
	memset(h, 0, sizeof(*h));
}

static int grow(rnsc_hset *s, rnsc_hset_shard *h)
{
	rnsc_hset_shard n = {0};
	size_t nb = h->nblk ? h->nblk + (h->nblk + 1) / 2 : 1;
	size_t bsz = B + B * s->key_len;
	n.blk = rnsc_calloc(s->ctx, nb, sizeof(*n.blk));
	if (!n.blk)
		return RNSC_ERR_NOMEM;
	for (; n.nblk < nb; n.nblk++) {
		n.blk[n.nblk] = rnsc_alloc(s->ctx, bsz);
		if (!n.blk[n.nblk]) {
			free_blocks(s->ctx, &n);
			return RNSC_ERR_NOMEM;
		}
		memset(n.blk[n.nblk], 0, B); /* tags only: keys are written before read */
	}
	size_t cap = cap_of(h);
	for (size_t i = 0; i < cap; i++) {
		if (!*tag_at(h, i))
			continue;
		size_t at;
		const uint8_t *k = key_at(h, s->key_len, i);
		(void)find(&n, s->key_len, k, &at);
		memcpy(key_at(&n, s->key_len, at), k, s->key_len);
		*tag_at(&n, at) = *tag_at(h, i);
	}
	n.n = h->n;
	free_blocks(s->ctx, h);
	*h = n;
	return 0;
}

void rnsc_hset_init(rnsc_hset *s, rnsc_ctx *ctx, size_t key_len)
{
	memset(s, 0, sizeof(*s));
	s->ctx = ctx;
	s->key_len = key_len;
}

void rnsc_hset_free(rnsc_hset *s)
{
	for (size_t i = 0; i < RNSC_HSET_SHARDS; i++)
		free_blocks(s->ctx, &s->shard[i]);
	s->n = 0;
}

int rnsc_hset_has(const rnsc_hset *s, const uint8_t *key)
{
	size_t at;
	return s->n && find(&s->shard[shard_of(key)], s->key_len, key, &at);
}

int rnsc_hset_add(rnsc_hset *s, const uint8_t *key)
{
	rnsc_hset_shard *h = &s->shard[shard_of(key)];
	size_t at;
	if (find(h, s->key_len, key, &at))
		return 0;
	if ((h->n + 1) * 5 > cap_of(h) * 4) {
		int rc = grow(s, h);
		if (rc)
			return rc;
		(void)find(h, s->key_len, key, &at);
	}
	memcpy(key_at(h, s->key_len, at), key, s->key_len);
	*tag_at(h, at) = tag_of(key);
	h->n++;
	s->n++;
	return 0;
}

int rnsc_hset_del(rnsc_hset *s, const uint8_t *key)
{
	rnsc_hset_shard *h = &s->shard[shard_of(key)];
	size_t kl = s->key_len, at;
	if (!find(h, kl, key, &at))
		return 0;
	size_t cap = cap_of(h), hole = at, i = at;
	/* Backward shift: move later members of the probe run into the hole when their home
	 * slot does not lie cyclically in (hole, i]. */
	for (;;) {
		i = i + 1 == cap ? 0 : i + 1;
		if (!*tag_at(h, i))
			break;
		size_t home = home_of(cap, key_at(h, kl, i));
		int in_range = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
		if (in_range)
			continue;
		memcpy(key_at(h, kl, hole), key_at(h, kl, i), kl);
		*tag_at(h, hole) = *tag_at(h, i);
		hole = i;
	}
	*tag_at(h, hole) = 0;
	h->n--;
	s->n--;
	return 1;
}

void rnsc_hset_rotate(rnsc_hset *cur, rnsc_hset *prev)
{
	rnsc_hset_free(prev);
	memcpy(prev->shard, cur->shard, sizeof(prev->shard));
	prev->n = cur->n;
	memset(cur->shard, 0, sizeof(cur->shard));
	cur->n = 0;
}

size_t rnsc_hset_slots(const rnsc_hset *s)
{
	size_t sum = 0;
	for (size_t i = 0; i < RNSC_HSET_SHARDS; i++)
		sum += cap_of(&s->shard[i]);
	return sum;
}

int rnsc_hset_next(const rnsc_hset *s, size_t *cursor, uint8_t *key)
{
	/* cursor: shard * 2^shift + the next slot (past the end: RNSC_HSET_SHARDS * 2^shift) */
	const unsigned shift = sizeof(size_t) >= 8 ? 40 : 24;
	size_t sh0 = *cursor >> shift;
	for (size_t sh = sh0; sh < RNSC_HSET_SHARDS; sh++) {
		const rnsc_hset_shard *h = &s->shard[sh];
		size_t i = sh == sh0 ? (*cursor & (((size_t)1 << shift) - 1)) : 0;
		for (size_t cap = cap_of(h); i < cap; i++) {
			if (!*tag_at(h, i))
				continue;
			memcpy(key, key_at(h, s->key_len, i), s->key_len);
			*cursor = (sh << shift) | (i + 1);
			return 1;
		}
	}
	*cursor = (size_t)RNSC_HSET_SHARDS << shift;
	return 0;
}
