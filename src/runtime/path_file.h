/* SPDX-License-Identifier: MIT */
/*
 * The reference's persisted path table (Transport.save_path_table / Transport.start,
 * rns 1.5.4) and its announce cache entries:
 *
 *   <storage>/destination_table: msgpack array of
 *     [destination_hash (bin 16), timestamp (float s), received_from (bin 16), hops (int),
 *      expires (float s), random_blobs (array of bin 10), interface_hash (bin 32:
 *      SHA-256 of the interface's str()), packet_hash (bin 32)]
 *   <storage>/cache/announces/<hex packet_hash>: msgpack [raw announce (bin, as received,
 *     hops not increased), str(receiving interface) or nil]
 *
 * Entries with wrong field lengths are skipped (the reference skips bad destination
 * hashes; rnsc also refuses other lengths it cannot use); a structural error (not an
 * array, truncated, wrong types) rejects the whole file. More than RNSC_MAX_RANDOM_BLOBS
 * blobs keep the newest, as the engine would.
 *
 * Pure functions over caller bytes; no allocation, no I/O. Any thread.
 */
#ifndef RNSC_PATH_FILE_H
#define RNSC_PATH_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "msgpack.h"
#include "transport.h"

#define RNSC_PATH_FILE_MAX ((size_t)256 << 20)

typedef struct rnsc_path_record {
	uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN];
	rnsc_transport_path path; /* iface is not stored: see iface_hash */
	uint8_t blobs[RNSC_MAX_RANDOM_BLOBS][10];
	size_t n_blobs;
	uint8_t iface_hash[RNSC_HASHLEN];
	int has_iface_hash; /* 0: nil (only in storage/tunnels, for a tunnel without interface) */
	int nil_iface_ok;   /* writer: write nil when !has_iface_hash (tunnel paths) */
} rnsc_path_record;

/* One entry of either file (storage/tunnels holds the same records; nil_iface lets their
 * interface hash be nil). *usable is 0 for an entry with wrong lengths (skipped). Returns 0
 * or a msgpack error for a structural one. */
RNSC_API int rnsc_path_record_read(rnsc_mp_reader *r, rnsc_path_record *rec, int nil_iface,
				   int *usable);

typedef int (*rnsc_path_each_fn)(void *ud, const rnsc_path_record *r);

/* Validates the whole file, then calls each() (may be NULL) per usable entry. Returns the
 * number of usable entries, RNSC_ERR_INVAL, msgpack errors (RNSC_ERR_MALFORMED,
 * RNSC_ERR_TRUNCATED, RNSC_ERR_TOOBIG) or each()'s non-zero code. */
RNSC_API int rnsc_path_file_parse(const uint8_t *p, size_t len, rnsc_path_each_fn each, void *ud,
				  size_t *skipped);
RNSC_API void rnsc_path_file_begin(rnsc_mp_writer *w, size_t n);
RNSC_API void rnsc_path_file_entry(rnsc_mp_writer *w, const rnsc_path_record *r);

/* One announce cache file. *raw points into p. Returns 0, RNSC_ERR_INVAL or msgpack
 * errors (RNSC_ERR_MALFORMED for a wrong shape). */
RNSC_API int rnsc_path_cache_parse(const uint8_t *p, size_t len, const uint8_t **raw,
				   size_t *raw_len);
/* iface_ref may be NULL (nil). */
RNSC_API void rnsc_path_cache_write(rnsc_mp_writer *w, const uint8_t *raw, size_t raw_len,
				    const char *iface_ref);

#endif
