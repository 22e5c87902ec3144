/* SPDX-License-Identifier: MIT */
/*
 * The node's ratchet storage (ratchet_file.h has the layouts):
 *   - remote ratchets at <storage>/ratchets/<hex>, written (temp + rename) each time the
 *     engine remembers a new one (Identity._remember_ratchet), loaded at start, and cleaned
 *     at start as Identity._clean_ratchets does (expired, corrupt, or of a destination not in
 *     known_destinations: the file is removed) unless attached to a shared instance, which
 *     owns the folder;
 *   - local destinations' ratchet files at the path an application gives
 *     rnsc_node_dest_enable_ratchets(), rewritten (temp + rename) at every rotation.
 * Internal to the runtime; used by node.c. Threading: the node's thread.
 */
#ifndef RNSC_NODE_RATCHETS_H
#define RNSC_NODE_RATCHETS_H

#include <stdint.h>

#include "ctx.h"
#include "identity.h"
#include "transport.h"

/* Loads <storage>/ratchets into the engine (after known destinations); with clean, removes
 * the files _clean_ratchets removes. Returns the number imported (problems are logged). */
int node_ratchets_load(rnsc_ctx *ctx, rnsc_transport *t, const char *storage, int clean,
		       uint64_t now_ms);
/* Writes <storage>/ratchets/<hex of dest>. Returns 0 or a store error (logged). */
int node_ratchets_persist(rnsc_ctx *ctx, const char *storage, const uint8_t dest[16],
			  const uint8_t pub[32], uint64_t received_ms);

/* The local ratchet files registered on a node: dest -> (path, identity). */
typedef struct node_ratchet_files node_ratchet_files;
void node_ratchet_files_free(rnsc_ctx *ctx, node_ratchet_files *f);
/* Destination.enable_ratchets(path) for a destination registered on t with identity id:
 * reads the file (signature checked) or, when there is none, writes an empty list; then
 * remembers path for rotations. Returns 0, RNSC_ERR_SIGNATURE / parse errors (the file is
 * refused and left as it is, as the reference leaves it), store and engine errors. */
int node_ratchet_files_enable(rnsc_ctx *ctx, node_ratchet_files **f, rnsc_transport *t,
			      const uint8_t dest[16], const rnsc_identity *id, const char *path);
/* The engine rotated dest's ratchets: rewrite its file. */
void node_ratchet_files_rotated(rnsc_ctx *ctx, node_ratchet_files *f, const uint8_t dest[16],
				const uint8_t (*ratchets)[32], size_t n);

#endif
