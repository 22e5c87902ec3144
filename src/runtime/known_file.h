/* SPDX-License-Identifier: MIT */
/*
 * The reference's known-destinations file (<storage>/known_destinations, written by
 * Identity.save_known_destinations, rns 1.5.4): one msgpack map
 *   { destination_hash (bin, 16 bytes):
 *       [timestamp (float seconds), packet_hash (bin), public_key (bin, 64),
 *        app_data (bin or nil), last_used (number: 0 never used, -1 retained, else the
 *        float time of the last use)] }
 * Records of four elements (older files) are accepted, as the reference does. Entries
 * whose key is not 16 bytes are skipped as the reference skips them; entries rnsc cannot
 * use (a public key that is not 64 bytes, a packet hash that is not 32) are skipped and
 * counted. Anything structurally wrong (not a map, truncated, a record that is not an
 * array, wrong value types) rejects the whole file, so a corrupt file never yields half
 * a table.
 *
 * Pure functions over caller bytes; no allocation, no I/O. Any thread.
 */
#ifndef RNSC_KNOWN_FILE_H
#define RNSC_KNOWN_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "msgpack.h"
#include "transport.h"

/* Largest file the loader reads. */
#define RNSC_KNOWN_FILE_MAX ((size_t)256 << 20)

typedef int (*rnsc_known_each_fn)(void *ud, const rnsc_transport_known *k);

/*
 * Validates the whole file first, then (when each is not NULL) calls each() for every
 * usable entry in file order; app_data points into p. A non-zero return from each()
 * stops the walk and is returned. *skipped (may be NULL) receives the number of entries
 * left out. Returns the number of usable entries, RNSC_ERR_INVAL, RNSC_ERR_MALFORMED,
 * RNSC_ERR_TRUNCATED or RNSC_ERR_TOOBIG (nesting), or each()'s code.
 */
RNSC_API int rnsc_known_file_parse(const uint8_t *p, size_t len, rnsc_known_each_fn each, void *ud,
				   size_t *skipped);

/* Writes the map header for n entries, then one entry per call (the writer latches
 * errors: check rnsc_mp_writer_finish()). */
RNSC_API void rnsc_known_file_begin(rnsc_mp_writer *w, size_t n);
RNSC_API void rnsc_known_file_entry(rnsc_mp_writer *w, const rnsc_transport_known *k);

#endif
