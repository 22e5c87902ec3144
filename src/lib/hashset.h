/* SPDX-License-Identifier: MIT */
/*
 * Internal to the transport engine: the packet hashlist's set (Transport.packet_hashlist
 * and packet_hashlist_prev), exact over its keys (whole 32-byte hashes on a transport node,
 * which persists them; 16-byte prefixes elsewhere), costing memory in proportion to the
 * entries it holds.
 *
 * Why not one rnsc_tmap: one table doubles at 3/4 load, so while it grows it holds the old
 * and the new table at once (3x the entries' slots), and a process's peak RSS is that
 * moment: about 26 MiB for 460,000 16-byte hashes (a 30 s link benchmark). Here the set is
 * 256 shards (chosen by key byte 15, a byte neither the shard's slot, bytes 0-7, nor its
 * tag, byte 8, uses), each a dense rnsc_tmap that grows by half at 4/5 load: the slots
 * held stay within 1.25-1.9x the entries (17 or 33 bytes a slot), and a growth step holds
 * two tables of one shard only (1/256 of the set) at once, whose freed storage the next
 * shard's growth reuses.
 *
 * Ownership: caller storage (_init/_free); the set owns its shards' tables.
 * Threading: none; the owning engine's thread.
 */
#ifndef RNSC_HASHSET_H
#define RNSC_HASHSET_H

#include <stddef.h>
#include <stdint.h>

#include "transport_map.h"

#define RNSC_HSET_SHARDS 256

typedef struct rnsc_hset {
	size_t n; /* entries over every shard */
	rnsc_tmap shard[RNSC_HSET_SHARDS];
} rnsc_hset;

/* key_len: 16 .. RNSC_TMAP_MAX_KEY. */
void rnsc_hset_init(rnsc_hset *s, rnsc_ctx *ctx, size_t key_len);
void rnsc_hset_free(rnsc_hset *s);
int rnsc_hset_has(const rnsc_hset *s, const uint8_t *key);
/* Adds key (present already: no change). Returns 0 or RNSC_ERR_NOMEM (set unchanged). */
int rnsc_hset_add(rnsc_hset *s, const uint8_t *key);
/* Removes key; 1 when it was present. */
int rnsc_hset_del(rnsc_hset *s, const uint8_t *key);
/* The reference's `prev = cur; cur = set()`: *prev's entries are dropped, *cur's become
 * *prev's, and *cur starts empty (on *prev's storage, resized per shard). */
void rnsc_hset_rotate(rnsc_hset *cur, rnsc_hset *prev);
/* Iteration: *cursor starts at 0; copies the next key into key (key_len bytes) and
 * returns 1, or 0 at the end. Do not modify the set while iterating. */
int rnsc_hset_next(const rnsc_hset *s, size_t *cursor, uint8_t *key);

#endif
