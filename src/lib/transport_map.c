/* SPDX-License-Identifier: MIT */
/* Hash map for the transport tables (see transport_map.h). */
#include <string.h>

#include "transport_map.h"

/* Grow at 3/4 load: probing stays short and the table at most doubles the entries' memory. */
#define RNSC_TMAP_MIN_CAP 16

void rnsc_tmap_init(rnsc_tmap *m, rnsc_ctx *ctx, size_t key_len)
{
	memset(m, 0, sizeof(*m));
	m->ctx = ctx;
	m->key_len = key_len;
}

/* A slot's tag: 0 when empty, else key byte 8 (0 taken as 1). Byte 8 lies beyond the
 * bytes that choose the home slot, so a probe of a foreign entry reads its key with
 * probability ~1/255 only: a lookup that misses (every new packet hash) costs the tag
 * bytes, not a cache line of keys per probed slot. */
static uint8_t tag_of(const uint8_t *key)
{
	return key[8] ? key[8] : 1;
}

static size_t slot_of(const rnsc_tmap *m, const uint8_t *key)
{
	uint64_t h = 0;
	memcpy(&h, key, sizeof(h)); /* keys are hashes already: uniform bits */
	/* Any capacity, not only powers of two (the hashlist is sized to its bound): a
	 * Fibonacci multiply folds all 64 bits into the top 32, which scale to [0, cap). */
	h = (h * UINT64_C(0x9E3779B97F4A7C15)) >> 32;
	if (m->cap <= UINT32_MAX)
		return (size_t)((h * (uint64_t)m->cap) >> 32);
	return (size_t)(h % m->cap);
}

static size_t next_slot(const rnsc_tmap *m, size_t i)
{
	return i + 1 == m->cap ? 0 : i + 1;
}

static int find(const rnsc_tmap *m, const uint8_t *key, size_t *at)
{
	if (m->cap == 0)
		return 0;
	size_t i = slot_of(m, key);
	uint64_t k0;
	memcpy(&k0, key, sizeof(k0));
	uint8_t tag = tag_of(key);
	for (uint8_t st; (st = m->tags[i]) != 0; i = next_slot(m, i)) {
		if (st != tag)
			continue;
		/* The first word decides almost every mismatch without a memcmp call. */
		const uint8_t *sk = m->keys + i * m->key_len;
		uint64_t s0;
		memcpy(&s0, sk, sizeof(s0));
		if (s0 == k0 && memcmp(sk + 8, key + 8, m->key_len - 8) == 0) {
			*at = i;
			return 1;
		}
	}
	*at = i;
	return 0;
}

static int grow(rnsc_tmap *m)
{
	size_t ncap = m->cap ? m->cap * 2 : RNSC_TMAP_MIN_CAP;
	rnsc_tmap n = *m;
	n.cap = ncap;
	n.n = 0;
	n.keys = rnsc_alloc(m->ctx, ncap * m->key_len);
	n.vals = m->vals ? rnsc_calloc(m->ctx, ncap, sizeof(void *)) : NULL;
	n.tags = rnsc_calloc(m->ctx, ncap, 1);
	if (!n.keys || (m->vals && !n.vals) || !n.tags) {
		rnsc_free(m->ctx, n.keys);
		rnsc_free(m->ctx, n.vals);
		rnsc_free(m->ctx, n.tags);
		return RNSC_ERR_NOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!rnsc_tmap_slot_used(m, i))
			continue;
		size_t at;
		(void)find(&n, m->keys + i * m->key_len, &at);
		memcpy(n.keys + at * m->key_len, m->keys + i * m->key_len, m->key_len);
		if (n.vals)
			n.vals[at] = m->vals[i];
		n.tags[at] = m->tags[i];
		n.n++;
	}
	rnsc_free(m->ctx, m->keys);
	rnsc_free(m->ctx, m->vals);
	rnsc_free(m->ctx, m->tags);
	*m = n;
	return 0;
}

void *rnsc_tmap_get(const rnsc_tmap *m, const uint8_t *key, int *found)
{
	size_t at;
	int f = find(m, key, &at);
	if (found)
		*found = f;
	return f && m->vals ? m->vals[at] : NULL;
}

int rnsc_tmap_has(const rnsc_tmap *m, const uint8_t *key)
{
	size_t at;
	return find(m, key, &at);
}

int rnsc_tmap_put(rnsc_tmap *m, const uint8_t *key, void *val, void **old)
{
	size_t at;
	if (old)
		*old = NULL;
	int f = find(m, key, &at);
	if (!f && (m->n + 1) * 4 > m->cap * 3) {
		int rc = grow(m);
		if (rc)
			return rc;
		(void)find(m, key, &at);
	}
	if (val && !m->vals) { /* first non-NULL value: the set becomes a map */
		m->vals = rnsc_calloc(m->ctx, m->cap, sizeof(void *));
		if (!m->vals)
			return RNSC_ERR_NOMEM;
	}
	if (f) {
		if (old && m->vals)
			*old = m->vals[at];
		if (m->vals)
			m->vals[at] = val;
		return 0;
	}
	memcpy(m->keys + at * m->key_len, key, m->key_len);
	if (m->vals)
		m->vals[at] = val;
	m->tags[at] = tag_of(key);
	m->n++;
	return 0;
}

void *rnsc_tmap_del(rnsc_tmap *m, const uint8_t *key)
{
	size_t at;
	if (!find(m, key, &at))
		return NULL;
	void *val = m->vals ? m->vals[at] : NULL;
	size_t hole = at, i = at;
	/* Backward shift: move later members of the probe run into the hole when their home
	 * slot does not lie cyclically in (hole, i]. */
	for (;;) {
		i = next_slot(m, i);
		if (!rnsc_tmap_slot_used(m, i))
			break;
		size_t home = slot_of(m, m->keys + i * m->key_len);
		int in_range = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
		if (in_range)
			continue;
		memcpy(m->keys + hole * m->key_len, m->keys + i * m->key_len, m->key_len);
		if (m->vals)
			m->vals[hole] = m->vals[i];
		m->tags[hole] = m->tags[i];
		hole = i;
	}
	m->tags[hole] = 0;
	if (m->vals)
		m->vals[hole] = NULL;
	m->n--;
	return val;
}

void rnsc_tmap_clear(rnsc_tmap *m)
{
	rnsc_free(m->ctx, m->keys);
	rnsc_free(m->ctx, m->vals);
	rnsc_free(m->ctx, m->tags);
	m->keys = NULL;
	m->vals = NULL;
	m->tags = NULL;
	m->cap = 0;
	m->n = 0;
}

void rnsc_tmap_rotate(rnsc_tmap *cur, rnsc_tmap *prev)
{
	rnsc_tmap fresh = *prev;
	/* Sets only: a value array (never expected here) is released, not reused. */
	rnsc_free(fresh.ctx, fresh.vals);
	fresh.vals = NULL;
	fresh.n = 0;
	/* The next generation will likely fill like this one: size it for this one's
	 * entries (plus 1/16) under the 3/4 load limit, instead of regrowing through every
	 * smaller table (each growth holds two tables at once) or keeping a table far
	 * larger than needed. Without memory the old storage is kept. */
	size_t want = (cur->n + cur->n / 16 + 16) / 3 * 4 + 4;
	if (cur->n && (fresh.cap < want || fresh.cap > want + want / 4)) {
		uint8_t *keys = rnsc_alloc(fresh.ctx, want * fresh.key_len);
		uint8_t *tags = rnsc_calloc(fresh.ctx, want, 1);
		if (keys && tags) {
			rnsc_free(fresh.ctx, fresh.keys);
			rnsc_free(fresh.ctx, fresh.tags);
			fresh.keys = keys;
			fresh.tags = tags;
			fresh.cap = want;
		} else {
			rnsc_free(fresh.ctx, keys);
			rnsc_free(fresh.ctx, tags);
		}
	}
	if (fresh.tags)
		memset(fresh.tags, 0, fresh.cap);
	*prev = *cur;
	*cur = fresh;
}

void rnsc_tmap_free(rnsc_tmap *m, void (*free_val)(rnsc_ctx *ctx, void *val))
{
	if (free_val && m->vals)
		for (size_t i = 0; i < m->cap; i++)
			if (rnsc_tmap_slot_used(m, i) && m->vals[i])
				free_val(m->ctx, m->vals[i]);
	rnsc_tmap_clear(m);
}
