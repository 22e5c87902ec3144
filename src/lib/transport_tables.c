/* SPDX-License-Identifier: MIT */
/*
 * Reads and rewrites of the engine's announce table (Transport.announce_table) and of path
 * timestamps (Transport.path_table), for tools that inspect or age a node's state (the
 * conformance bridge). The engine keeps and processes the entries (transport.c); nothing
 * here changes how.
 */
#include <string.h>

#include "packet.h"
#include "transport.h"
#include "transport_internal.h"

int rnsc_transport_announce_get(const rnsc_transport *t,
				const uint8_t dest[RNSC_TRUNCATED_HASHLEN],
				rnsc_transport_announce_entry *out)
{
	if (!t || !dest || !out)
		return RNSC_ERR_INVAL;
	const tr_announce *ae = rnsc_tmap_get(&t->announces, dest, NULL);
	if (!ae)
		return RNSC_ERR_NOTFOUND;
	memset(out, 0, sizeof *out);
	out->timestamp = ae->timestamp;
	out->retransmit_timeout = ae->rtrns_tmo;
	out->retries = ae->retries;
	out->hops = ae->hops;
	memcpy(out->received_from, ae->rcvd_from, HL);
	out->local_rebroadcasts = ae->local_rebroadcasts;
	out->block_rebroadcasts = ae->block_rebroadcasts;
	out->has_attached = ae->has_attached;
	out->attached = ae->attached;
	return rnsc_packet_hash(t->ctx, out->packet_hash, ae->raw, ae->raw_len);
}

int rnsc_transport_announce_set_times(rnsc_transport *t,
				      const uint8_t dest[RNSC_TRUNCATED_HASHLEN],
				      const uint64_t *timestamp, const uint64_t *retransmit_timeout)
{
	if (!t || !dest)
		return RNSC_ERR_INVAL;
	tr_announce *ae = rnsc_tmap_get(&t->announces, dest, NULL);
	if (!ae)
		return RNSC_ERR_NOTFOUND;
	if (timestamp)
		ae->timestamp = *timestamp;
	if (retransmit_timeout)
		ae->rtrns_tmo = *retransmit_timeout;
	return 0;
}

int rnsc_transport_path_set_times(rnsc_transport *t, const uint8_t dest[RNSC_TRUNCATED_HASHLEN],
				  const uint64_t *timestamp, const uint64_t *expires)
{
	if (!t || !dest)
		return RNSC_ERR_INVAL;
	tr_path *p = rnsc_tmap_get(&t->paths, dest, NULL);
	if (!p)
		return RNSC_ERR_NOTFOUND;
	if (timestamp)
		p->pub.timestamp = *timestamp;
	if (expires)
		p->pub.expires = *expires;
	return 0;
}

void rnsc_transport_jobs_due(rnsc_transport *t)
{
	if (!t)
		return;
	t->announces_last_checked = 0;
	t->tables_last_culled = 0;
}
