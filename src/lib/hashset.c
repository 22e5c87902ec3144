/* SPDX-License-Identifier: MIT */
/* Sharded packet hash set (see hashset.h). */
#include <string.h>

#include "hashset.h"

static size_t shard_of(const uint8_t *key)
{
	return key[15]; /* RNSC_HSET_SHARDS == 256; keys are hashes: uniform bytes */
}

void rnsc_hset_init(rnsc_hset *s, rnsc_ctx *ctx, size_t key_len)
{
	s->n = 0;
	for (size_t i = 0; i < RNSC_HSET_SHARDS; i++) {
		rnsc_tmap_init(&s->shard[i], ctx, key_len);
		s->shard[i].dense = 1;
	}
}

void rnsc_hset_free(rnsc_hset *s)
{
	for (size_t i = 0; i < RNSC_HSET_SHARDS; i++)
		rnsc_tmap_free(&s->shard[i], NULL);
	s->n = 0;
}

int rnsc_hset_has(const rnsc_hset *s, const uint8_t *key)
{
	return s->n && rnsc_tmap_has(&s->shard[shard_of(key)], key);
}

int rnsc_hset_add(rnsc_hset *s, const uint8_t *key)
{
	rnsc_tmap *m = &s->shard[shard_of(key)];
	size_t before = m->n;
	int rc = rnsc_tmap_put(m, key, NULL, NULL);
	if (rc)
		return rc;
	s->n += m->n - before;
	return 0;
}

int rnsc_hset_del(rnsc_hset *s, const uint8_t *key)
{
	rnsc_tmap *m = &s->shard[shard_of(key)];
	size_t before = m->n;
	(void)rnsc_tmap_del(m, key);
	if (m->n == before)
		return 0;
	s->n--;
	return 1;
}

void rnsc_hset_rotate(rnsc_hset *cur, rnsc_hset *prev)
{
	for (size_t i = 0; i < RNSC_HSET_SHARDS; i++)
		rnsc_tmap_rotate(&cur->shard[i], &prev->shard[i]);
	prev->n = cur->n;
	cur->n = 0;
}

int rnsc_hset_next(const rnsc_hset *s, size_t *cursor, uint8_t *key)
{
	/* cursor: shard * 2^shift + the next slot (past the end: RNSC_HSET_SHARDS * 2^shift) */
	const size_t shift = sizeof(size_t) >= 8 ? 40 : 23;
	for (size_t sh = *cursor >> shift; sh < RNSC_HSET_SHARDS; sh++) {
		const rnsc_tmap *m = &s->shard[sh];
		size_t i = (sh == (*cursor >> shift)) ? (*cursor & (((size_t)1 << shift) - 1)) : 0;
		for (; i < m->cap; i++) {
			if (!rnsc_tmap_slot_used(m, i))
				continue;
			memcpy(key, rnsc_tmap_slot_key(m, i), m->key_len);
			*cursor = (sh << shift) | (i + 1);
			return 1;
		}
	}
	*cursor = (size_t)RNSC_HSET_SHARDS << shift;
	return 0;
}
