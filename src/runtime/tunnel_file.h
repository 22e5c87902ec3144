/* SPDX-License-Identifier: MIT */
/*
 * The reference's persisted tunnel table (Transport.save_tunnel_table / Transport.start,
 * rns 1.5.4), <storage>/tunnels: a msgpack array of
 *   [tunnel_id (bin 32), interface_hash (bin 32, or nil without interface),
 *    [path record, ...] (destination_table's records, path_file.h; their interface hash is
 *    the tunnel's, nil included), expires (float s)]
 * Tunnels or paths with wrong lengths are skipped; a structural error (not an array,
 * truncated, wrong types) rejects the whole file.
 *
 * Pure functions over caller bytes; no allocation, no I/O. Any thread.
 */
#ifndef RNSC_TUNNEL_FILE_H
#define RNSC_TUNNEL_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "msgpack.h"
#include "path_file.h"

#define RNSC_TUNNEL_FILE_MAX ((size_t)256 << 20)

typedef struct rnsc_tunnel_record {
	uint8_t id[RNSC_HASHLEN];
	uint64_t expires; /* ms */
} rnsc_tunnel_record;

/* Called once per usable tunnel with path NULL (before its paths), then once per usable path
 * of it. A non-zero return stops the walk and is returned. */
typedef int (*rnsc_tunnel_each_fn)(void *ud, const rnsc_tunnel_record *tn,
				   const rnsc_path_record *path);

/* Validates the whole file, then walks it (each may be NULL). Returns the number of usable
 * tunnels, RNSC_ERR_INVAL, msgpack errors or each()'s code; *skipped (may be NULL) counts
 * the tunnels and paths left out. */
RNSC_API int rnsc_tunnel_file_parse(const uint8_t *p, size_t len, rnsc_tunnel_each_fn each,
				    void *ud, size_t *skipped);
/* The array header, then per tunnel its header (iface_hash NULL: nil) followed by exactly
 * n_paths rnsc_path_file_entry() calls (records with nil_iface_ok set). */
RNSC_API void rnsc_tunnel_file_begin(rnsc_mp_writer *w, size_t n);
RNSC_API void rnsc_tunnel_file_tunnel(rnsc_mp_writer *w, const rnsc_tunnel_record *tn,
				      const uint8_t *iface_hash, size_t n_paths);
/* Ends a tunnel entry (its expires follows the paths). */
RNSC_API void rnsc_tunnel_file_tunnel_end(rnsc_mp_writer *w, const rnsc_tunnel_record *tn);

#endif
