/* SPDX-License-Identifier: MIT */
/*
 * Internal to the transport engine: an open-addressing hash map whose keys are fixed-length
 * byte strings that already are (truncated) SHA-256 hashes, so the first 8 key bytes serve as
 * the hash. Used for the path, announce, reverse and known-destination tables (16-byte keys,
 * values are owned pointers) and as value-less sets (32- or 16-byte keys).
 * Linear probing with backward-shift deletion: no tombstones, so a long-lived table does not
 * degrade. Iterate by slot index; delete only after iterating (collect keys first), as the
 * reference does with its stale_* lists.
 *
 * Memory: keys are stored inline next to a one-byte tag per slot (0: empty, else a key
 * fingerprint that spares most key reads while probing); the value array is allocated
 * only once a non-NULL value is stored, so a set costs key_len + 1 bytes per slot. The
 * table grows (doubling) past 3/4 load, so a set of n entries holds at most
 * (key_len + 1) * 2^ceil(log2(4n/3)) bytes plus, transiently while growing, the half-size
 * table. (The packet hashlist has its own blocked, sharded set: hashset.h.)
 *
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
	size_t cap; /* any size (powers of two while growing), 0 before the first insert */
	size_t n;
	uint8_t *keys; /* cap * key_len */
	void **vals;   /* cap, or NULL while every stored value is NULL */
	uint8_t *tags; /* cap; 0: slot empty */
} rnsc_tmap;

/* key_len: 16 .. RNSC_TMAP_MAX_KEY (bytes 0-7 choose the slot, byte 8 is the tag). */
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
	return m->tags[i] != 0;
}
static inline const uint8_t *rnsc_tmap_slot_key(const rnsc_tmap *m, size_t i)
{
	return m->keys + i * m->key_len;
}
static inline void *rnsc_tmap_slot_val(const rnsc_tmap *m, size_t i)
{
	return m->vals ? m->vals[i] : NULL;
}
/* Drops every entry (values are not freed: only for value-less sets) and releases memory. */
void rnsc_tmap_clear(rnsc_tmap *m);
/* Generation rotation of value-less sets (the reference's `prev = cur; cur = set()`):
 * *prev's entries are dropped, *cur's entries become *prev, and *cur starts empty on the
 * storage *prev had (kept, cleared; enlarged to *cur's capacity when smaller), so a busy set
 * does not regrow from scratch. */
void rnsc_tmap_rotate(rnsc_tmap *cur, rnsc_tmap *prev);

#endif
