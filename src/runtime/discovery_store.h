/* SPDX-License-Identifier: MIT */
/*
 * Discovered interfaces on disk, as Discovery.py's InterfaceDiscovery keeps them: one
 * msgpack record per interface in <storage>/discovery/interfaces/<hex discovery_hash>
 * (src/lib/discovery.h writes the record), so the reference's rnstatus -d reads what an
 * rnsc daemon stored and rnsc status -d reads what either stored. Writes are atomic
 * (temporary file + rename); the reference's own writes are not.
 *
 * Runs on the node's thread (the announce callback) and in the status tool.
 */
#ifndef RNSC_DISCOVERY_STORE_H
#define RNSC_DISCOVERY_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "cfgfile.h"
#include "ctx.h"
#include "msgpack.h"
#include "transport.h"

/* One announce that reached the node (transport on_announce). Stores it when dest is the
 * "rnstransport.discovery.interface" destination of the identity that announced it, that
 * identity is in sources (when sources is not empty), and the app_data passes
 * rnsc_discovery_parse() at required_value (<= 0: the default 16). Returns 1 stored, 0
 * not a discovery announce, or a positive rnsc_disc_drop + 1 for a dropped one (see
 * discovery.h), or a negative I/O error. */
int rnsc_discovery_store_announce(rnsc_ctx *ctx, const char *storage, const rnsc_transport *t,
				  const uint8_t dest[16], const uint8_t *app, size_t len,
				  unsigned hops, int required_value, const rnsc_hash_list *sources,
				  double now);

/* InterfaceDiscovery.list_discovered_interfaces(): every record under storage, the name
 * sanitized again and "status"/"status_code" appended, sorted by (status_code, value,
 * last_heard) descending; records older than 7 days, without ids, of a type not stored, or
 * (sources not empty) from another network identity are deleted, as the reference does.
 * *out (malloc'd, the caller frees) is one msgpack array of maps; *count its length.
 * Returns 0 (an absent folder lists nothing) or RNSC_ERR_NOMEM. */
int rnsc_discovery_store_list(rnsc_ctx *ctx, const char *storage, double now,
			      const rnsc_hash_list *sources, uint8_t **out, size_t *out_len,
			      size_t *count);

/* Finds key in the msgpack map at p (one record); 1 found (*v is the value's token), 0. */
int rnsc_discovery_rec_get(const uint8_t *p, size_t len, const char *key, rnsc_mp_token *v);

#endif
