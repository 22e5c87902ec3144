/* SPDX-License-Identifier: MIT */
/*
 * Internal to the transport engine: an open-addressing hash map whose keys are fixed-length
 * byte strings that already are (truncated) SHA-256 hashes, so the first 8 key bytes serve as
 * the hash. Used for the path, announce, reverse and known-destination tables (16-byte keys,
 * values are owned pointers) and as a set for the packet hashlist (32-byte keys, no values).
 * Linear probing with backward-shift deletion: no tombstones, so a long-lived table does not
 * degrade. Iterate by slot index; delete only after iterating (collect keys first), as the
 * reference does with its stale_* lists.
 * Threading: none; the owning engine's thread.
 */
#ifndef RNSC_TRANSPORT_MAP_H
#define RNSC_TRANSPORT_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "ctx.h"

#define RNSC_TMAP_MAX_KEY 32

typedef struct rnsc_tmap {
	rnsc_ctx *ctx;
	size_t key_len;
	size_t cap; /* power of two, 0 before the first insert */
	size_t n;
	uint8_t *keys;  /* cap * key_len */
	void **vals;    /* cap */
	uint8_t *used;  /* cap */
} rnsc_tmap;

void rnsc_tmap_init(rnsc_tmap *m, rnsc_ctx *ctx, size_t key_len);
/* Frees the table; free_val (may be NULL) is called for every non-NULL value. */
void rnsc_tmap_free(rnsc_tmap *m, void (*free_val)(rnsc_ctx *ctx, void *val));
/* The value for key (NULL when absent or stored as NULL); *found (may be NULL) says which. */
void *rnsc_tmap_get(const rnsc_tmap *m, const uint8_t *key, int *found);
int rnsc_tmap_has(const rnsc_tmap *m, const uint8_t *key);
/* Inserts or replaces; *old (may be NULL) receives the replaced value (NULL if none).
 * Returns 0 or RNSC_ERR_NOMEM (table unchanged). */
int rnsc_tmap_put(rnsc_tmap *m, const uint8_t *key, void *val, void **old);
/* Removes key; returns its value (NULL when absent). */
void *rnsc_tmap_del(rnsc_tmap *m, const uint8_t *key);
/* Slot access for iteration: 1 when slot i holds an entry. */
static inline int rnsc_tmap_slot_used(const rnsc_tmap *m, size_t i)
{
	return m->used[i] != 0;
}
static inline const uint8_t *rnsc_tmap_slot_key(const rnsc_tmap *m, size_t i)
{
	return m->keys + i * m->key_len;
}
static inline void *rnsc_tmap_slot_val(const rnsc_tmap *m, size_t i)
{
	return m->vals[i];
}
/* Drops every entry (values are not freed: only for value-less sets) and releases memory. */
void rnsc_tmap_clear(rnsc_tmap *m);

#endif
