/* SPDX-License-Identifier: MIT */
/*
 * Reads and rewrites of the engine's announce table (Transport.announce_table), of path
 * timestamps (Transport.path_table), and of the link and reverse tables, for tools that inspect or age a node's state (the
 * conformance bridge). The engine keeps and processes the entries (transport.c); nothing
 * here changes how.
 */
#include <string.h>

#include "packet.h"
#include "transport.h"
#include "transport_internal.h"

int rnsc_transport_announce_get(const rnsc_transport *t, const uint8_t dest[RNSC_TRUNCATED_HASHLEN],
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

int rnsc_transport_announce_set_times(rnsc_transport *t, const uint8_t dest[RNSC_TRUNCATED_HASHLEN],
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

static void lte_out(const uint8_t *id, const tr_lte *e, rnsc_transport_link_entry *out)
{
	memcpy(out->link_id, id, HL);
	out->timestamp = e->timestamp;
	memcpy(out->next_hop_transport_id, e->nh_trid, HL);
	out->next_hop_iface = e->nh_if;
	out->remaining_hops = e->rem_hops;
	out->received_iface = e->rcvd_if;
	out->hops = e->hops;
	memcpy(out->dest_hash, e->dest, HL);
	out->validated = e->validated;
	out->proof_timeout = e->proof_tmo;
}

int rnsc_transport_link_entry_next(const rnsc_transport *t, size_t *cursor,
				   rnsc_transport_link_entry *out)
{
	if (!t || !cursor || !out)
		return 0;
	for (size_t i = *cursor; i < t->link_table.cap; i++) {
		if (!rnsc_tmap_slot_used(&t->link_table, i))
			continue;
		lte_out(rnsc_tmap_slot_key(&t->link_table, i),
			rnsc_tmap_slot_val(&t->link_table, i), out);
		*cursor = i + 1;
		return 1;
	}
	*cursor = t->link_table.cap;
	return 0;
}

int rnsc_transport_link_entry_get(const rnsc_transport *t, const uint8_t link_id[HL],
				  rnsc_transport_link_entry *out)
{
	if (!t || !link_id || !out)
		return RNSC_ERR_INVAL;
	const tr_lte *e = rnsc_tmap_get(&t->link_table, link_id, NULL);
	if (!e)
		return RNSC_ERR_NOTFOUND;
	lte_out(link_id, e, out);
	return 0;
}

int rnsc_transport_link_entry_put(rnsc_transport *t, const rnsc_transport_link_entry *in)
{
	if (!t || !in)
		return RNSC_ERR_INVAL;
	if (!rnsc_tr_iface_find(t, in->next_hop_iface) ||
	    !rnsc_tr_iface_find(t, in->received_iface))
		return RNSC_ERR_NOTFOUND;
	tr_lte *e = rnsc_alloc(t->ctx, sizeof(*e));
	if (!e)
		return RNSC_ERR_NOMEM;
	e->timestamp = in->timestamp;
	memcpy(e->nh_trid, in->next_hop_transport_id, HL);
	e->nh_if = in->next_hop_iface;
	e->rem_hops = in->remaining_hops;
	e->rcvd_if = in->received_iface;
	e->hops = in->hops;
	memcpy(e->dest, in->dest_hash, HL);
	e->validated = in->validated;
	e->proof_tmo = in->proof_timeout;
	void *old = NULL;
	int rc = rnsc_tmap_put(&t->link_table, in->link_id, e, &old);
	if (rc) {
		rnsc_free(t->ctx, e);
		return rc;
	}
	rnsc_free(t->ctx, old);
	return 0;
}

int rnsc_transport_reverse_next(const rnsc_transport *t, size_t *cursor,
				rnsc_transport_reverse_entry *out)
{
	if (!t || !cursor || !out)
		return 0;
	for (size_t i = *cursor; i < t->reverse.cap; i++) {
		if (!rnsc_tmap_slot_used(&t->reverse, i))
			continue;
		const tr_reverse *rv = rnsc_tmap_slot_val(&t->reverse, i);
		memcpy(out->key, rnsc_tmap_slot_key(&t->reverse, i), HL);
		out->received_iface = rv->rcvd_if;
		out->outbound_iface = rv->outb_if;
		out->timestamp = rv->timestamp;
		*cursor = i + 1;
		return 1;
	}
	*cursor = t->reverse.cap;
	return 0;
}

int rnsc_transport_reverse_put(rnsc_transport *t, const rnsc_transport_reverse_entry *in)
{
	if (!t || !in)
		return RNSC_ERR_INVAL;
	if (!rnsc_tr_iface_find(t, in->received_iface) ||
	    !rnsc_tr_iface_find(t, in->outbound_iface))
		return RNSC_ERR_NOTFOUND;
	tr_reverse *rv = rnsc_alloc(t->ctx, sizeof(*rv));
	if (!rv)
		return RNSC_ERR_NOMEM;
	rv->rcvd_if = in->received_iface;
	rv->outb_if = in->outbound_iface;
	rv->timestamp = in->timestamp;
	void *old = NULL;
	int rc = rnsc_tmap_put(&t->reverse, in->key, rv, &old);
	if (rc) {
		rnsc_free(t->ctx, rv);
		return rc;
	}
	rnsc_free(t->ctx, old);
	return 0;
}
