/* SPDX-License-Identifier: MIT */
/*
 * Internal to the transport engine: the packet hashlist's set (Transport.packet_hashlist
 * and packet_hashlist_prev), exact over its keys (whole 32-byte hashes on a transport node,
 * which persists them; 16-byte prefixes elsewhere), costing memory in proportion to the
 * entries it holds.
 *
 * Why not one rnsc_tmap: a table doubling at 3/4 load holds the old and the new table at
 * once while it grows (3x the slots of the entries), and a process's peak RSS is that
 * moment: about 26 MiB for 460,000 16-byte hashes (a 30 s link benchmark). Here:
 * - 64 shards (chosen by key byte 15, which neither the slot, bytes 0-7, nor the tag,
 *   byte 8, uses), each a linear-probing table (tags, backward-shift deletion, as
 *   rnsc_tmap) that grows by half at 4/5 load, so the slots held stay within 1.25-1.9x the
 *   entries, and a growth step holds two tables of one shard only (1/64 of the set);
 * - a shard's slots live in fixed-size blocks of RNSC_HSET_BLOCK slots (tags then keys),
 *   so the blocks one growth step frees are exactly the size the next step allocates and
 *   the allocator reuses them: the heap does not keep the holes of outgrown tables.
 * Rotation frees the previous generation's blocks, which the new one then reuses.
 *
 * Ownership: caller storage (_init/_free); the set owns its blocks.
 * Threading: none; the owning engine's thread.
 */
#ifndef RNSC_HASHSET_H
#define RNSC_HASHSET_H

#include <stddef.h>
#include <stdint.h>

#include "ctx.h"

#define RNSC_HSET_SHARDS 64
#define RNSC_HSET_BLOCK 128 /* slots per block: 2,176 bytes at 16-byte keys */

typedef struct rnsc_hset_shard {
	uint8_t **blk; /* nblk blocks of RNSC_HSET_BLOCK tags, then RNSC_HSET_BLOCK keys */
	size_t nblk;
	size_t n;
} rnsc_hset_shard;

typedef struct rnsc_hset {
	rnsc_ctx *ctx;
	size_t key_len;
	size_t n; /* entries over every shard */
	rnsc_hset_shard shard[RNSC_HSET_SHARDS];
} rnsc_hset;

/* key_len: 16 .. 32. */
void rnsc_hset_init(rnsc_hset *s, rnsc_ctx *ctx, size_t key_len);
void rnsc_hset_free(rnsc_hset *s);
int rnsc_hset_has(const rnsc_hset *s, const uint8_t *key);
/* Adds key (present already: no change). Returns 0 or RNSC_ERR_NOMEM (set unchanged). */
int rnsc_hset_add(rnsc_hset *s, const uint8_t *key);
/* Removes key; 1 when it was present. */
int rnsc_hset_del(rnsc_hset *s, const uint8_t *key);
/* The reference's `prev = cur; cur = set()`: *prev's entries are dropped (its blocks
 * freed), *cur's become *prev's, and *cur starts empty. Both share ctx and key_len. */
void rnsc_hset_rotate(rnsc_hset *cur, rnsc_hset *prev);
/* Slots held over every shard (for tests and memory accounting). */
size_t rnsc_hset_slots(const rnsc_hset *s);
/* Iteration: *cursor starts at 0; copies the next key into key (key_len bytes) and
 * returns 1, or 0 at the end. Do not modify the set while iterating. */
int rnsc_hset_next(const rnsc_hset *s, size_t *cursor, uint8_t *key);

#endif
