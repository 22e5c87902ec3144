/* SPDX-License-Identifier: MIT */
/*
 * The node's persistence glue: known destinations to and from
 * <storage>/known_destinations (format: known_file.h), written with
 * rnsc_store_write_atomic(). Internal to the runtime; used by node.c.
 * Threading: the node's thread (the engine is read or filled).
 */
#ifndef RNSC_NODE_STORE_H
#define RNSC_NODE_STORE_H

#include "ctx.h"
#include "transport.h"

/* Loads the file into the engine. A missing file is normal; an unreadable or corrupt
 * one is logged (naming the file and the reason) and ignored, leaving the engine empty.
 * Returns the number of entries imported or a negative code (already logged). */
int node_store_load_known(rnsc_ctx *ctx, rnsc_transport *t, const char *storage);
/* Writes every known destination. Returns 0 or the store's/writer's error (logged). */
int node_store_save_known(rnsc_ctx *ctx, rnsc_transport *t, const char *storage);

/* How the path table names interfaces on disk: the SHA-256 of their str(). */
typedef struct node_store_ifaces {
	void *ud;
	/* Writes str() of engine interface id into buf; returns 0, or < 0 when unknown. */
	int (*describe)(void *ud, uint32_t id, char *buf, size_t cap);
	/* The engine id of the attached interface whose str() hashes to h; 0 when none. */
	uint32_t (*find)(void *ud, const uint8_t h[32]);
} node_store_ifaces;

/* <storage>/destination_table and <storage>/cache/announces/ (path_file.h). Entries whose
 * interface or cached announce is gone are skipped, as the reference skips them; a
 * corrupt table is logged and ignored. Returns the number restored or a negative code. */
int node_store_load_paths(rnsc_ctx *ctx, rnsc_transport *t, const char *storage,
			  const node_store_ifaces *ifs);
/* Writes the table and any missing announce cache files. Returns 0 or an error (logged). */
int node_store_save_paths(rnsc_ctx *ctx, rnsc_transport *t, const char *storage,
			  const node_store_ifaces *ifs);

/* <storage>/tunnels (tunnel_file.h) with the tunnel paths' announces in the announce cache,
 * as Transport.save_tunnel_table / Transport.start keep them: a tunnel loads without an
 * interface, with the paths whose cached announce is there (a tunnel with none is left out);
 * at most PERSIST_RANDOM_BLOBS (32) random blobs per path are written. */
#define NODE_STORE_PERSIST_RANDOM_BLOBS 32u
int node_store_load_tunnels(rnsc_ctx *ctx, rnsc_transport *t, const char *storage);
int node_store_save_tunnels(rnsc_ctx *ctx, rnsc_transport *t, const char *storage,
			    const node_store_ifaces *ifs);

/* <storage>/packet_hashlist.raw: the packet hashes back to back, 32 bytes each (the
 * reference's format; a partial last hash is ignored, as the reference ignores it).
 * Returns the number loaded or a negative code (logged); 0 or an error for save. */
int node_store_load_hashlist(rnsc_ctx *ctx, rnsc_transport *t, const char *storage);
int node_store_save_hashlist(rnsc_ctx *ctx, rnsc_transport *t, const char *storage);

/* Blackholed identities in the reference's layout: <storage>/blackhole/local holds this
 * node's own entries, <storage>/blackhole/<source hex> the list fetched from a configured
 * blackhole source (Transport.reload_blackhole / persist_blackhole, BlackholeUpdater); each
 * a msgpack map (rnsc_blackhole_list_write). load creates the folder, reads "local" (source:
 * this transport) then each file of a source in `sources` (others are skipped), drops
 * entries already expired at now_ms, keeps local entries over a source's, and purges
 * paths. Returns the number of entries loaded or a negative code (logged). */
int node_store_load_blackhole(rnsc_ctx *ctx, rnsc_transport *t, const char *storage,
			      const uint8_t (*sources)[16], size_t n_sources, uint64_t now_ms);
/* Writes this node's own entries to <storage>/blackhole/local (temp + rename). */
int node_store_save_blackhole(rnsc_ctx *ctx, rnsc_transport *t, const char *storage);
/* Writes a source's list as received (BlackholeUpdater) to <storage>/blackhole/<hex>. */
int node_store_save_blackhole_source(rnsc_ctx *ctx, const char *storage, const uint8_t source[16],
				     const uint8_t *list, size_t len);

/* Storage hygiene (Transport.jobs): known destinations cleaned every
 * known_destinations_interval (5 min, the first 5 min after start), then written; the announce
 * cache cleaned every cache_clean_interval (5 min, the first deferred 60 s more). Only the
 * instance that owns the storage does either (not a program attached to a shared instance). */
#define NODE_STORE_CLEAN_KNOWN_MS (5u * 60u * 1000u)
#define NODE_STORE_CLEAN_CACHE_MS (5u * 60u * 1000u)
#define NODE_STORE_CLEAN_CACHE_DEFER_MS (60u * 1000u)
/* Identity.clean_known_destinations, then the ratchet files of the removed entries
 * (<storage>/ratchets/<hex>) are deleted and the file is written. now_ms: wall clock.
 * Returns the number removed or a negative code (logged). */
int node_store_clean_known(rnsc_ctx *ctx, rnsc_transport *t, const char *storage, uint64_t now_ms);
/* Transport.clean_announce_cache: every file in <storage>/cache/announces whose name is not
 * the hex packet hash of a path table or tunnel path announce is deleted. Returns the number
 * removed or a negative code (logged). */
int node_store_clean_cache(rnsc_ctx *ctx, rnsc_transport *t, const char *storage);
typedef struct node_store_hygiene {
	uint64_t known_ms, cache_ms; /* when each is next due (monotonic ms) */
	int init;
} node_store_hygiene;
enum { NODE_STORE_CLEAN_KNOWN = 1, NODE_STORE_CLEAN_CACHE = 2 };
/* What is due at now_ms (monotonic), as a mask; counts it as done. */
int node_store_hygiene_due(node_store_hygiene *h, uint64_t now_ms);

/* When to write: known destinations and the path table are written SAVE_GAP_MS after they
 * changed (checked every NODE_STORE_CHECK_MS; at most one write per gap, so a flood costs
 * one write per gap, and a kill -9 loses at most a gap plus a check of what was learnt),
 * everything (the packet hashlist too) every NODE_STORE_FULL_MS. */
#define NODE_STORE_CHECK_MS 5000u
#define NODE_STORE_GAP_MS 15000u
#define NODE_STORE_FULL_MS (5u * 60u * 1000u)
typedef struct node_store_cadence {
	uint64_t sig[3];   /* what the tables looked like at the last write */
	uint64_t saved_ms; /* last write of the tables */
	uint64_t full_ms;  /* last write of everything */
	int init;
} node_store_cadence;
enum { NODE_STORE_NOTHING = 0, NODE_STORE_TABLES = 1, NODE_STORE_ALL = 2 };
/* What is due at now_ms (a monotonic millisecond clock); counts the write as done. */
int node_store_cadence_due(node_store_cadence *c, const rnsc_transport *t, uint64_t now_ms);

#endif
