/* SPDX-License-Identifier: MIT */
/*
 * Ratchets in the engine: Identity.known_ratchets and _remember_ratchet for the remote side,
 * Destination.ratchets / rotate_ratchets / enforce_ratchets for local destinations
 * (Destination.py, Identity.py). The files are the runtime's (ratchet_file.h).
 */
#include <string.h>

#include "destination.h"
#include "ratchet_file.h"
#include "transport_internal.h"

int rnsc_tr_ratchet_remember(rnsc_transport *t, const uint8_t dest[HL], const uint8_t pub[32],
			     uint64_t now)
{
	tr_ratchet *r = rnsc_tmap_get(&t->ratchets, dest, NULL);
	if (r && memcmp(r->pub, pub, 32) == 0)
		return 0; /* ratchet_exists: neither the time nor the file change */
	if (!r) {
		if (!(r = rnsc_calloc(t->ctx, 1, sizeof(*r))))
			return RNSC_ERR_NOMEM;
		int rc = rnsc_tmap_put(&t->ratchets, dest, r, NULL);
		if (rc) {
			rnsc_free(t->ctx, r);
			return rc;
		}
	}
	memcpy(r->pub, pub, 32);
	r->received = now;
	if (!t->to_shared && t->cb.on_ratchet)
		t->cb.on_ratchet(t->cb.ud, dest, pub, now);
	return 0;
}

int rnsc_transport_ratchet_import(rnsc_transport *t, const uint8_t dest_hash[HL],
				  const uint8_t ratchet_pub[32], uint64_t received, uint64_t now)
{
	if (!t || !dest_hash || !ratchet_pub)
		return RNSC_ERR_INVAL;
	/* get_ratchet: time.time() < received + RATCHET_EXPIRY */
	if (!(now < received + RNSC_RATCHET_EXPIRY_S * 1000))
		return RNSC_ERR_RANGE;
	if (rnsc_tmap_has(&t->ratchets, dest_hash))
		return 0;
	tr_ratchet *r = rnsc_calloc(t->ctx, 1, sizeof(*r));
	if (!r)
		return RNSC_ERR_NOMEM;
	memcpy(r->pub, ratchet_pub, 32);
	r->received = received;
	int rc = rnsc_tmap_put(&t->ratchets, dest_hash, r, NULL);
	if (rc)
		rnsc_free(t->ctx, r);
	return rc;
}

int rnsc_transport_ratchet_next(const rnsc_transport *t, size_t *cursor, uint8_t dest_hash[HL],
				uint8_t ratchet_pub[32], uint64_t *received)
{
	if (!t || !cursor)
		return 0;
	for (size_t i = *cursor; i < t->ratchets.cap; i++) {
		if (!rnsc_tmap_slot_used(&t->ratchets, i))
			continue;
		const tr_ratchet *r = rnsc_tmap_slot_val(&t->ratchets, i);
		if (dest_hash)
			memcpy(dest_hash, rnsc_tmap_slot_key(&t->ratchets, i), HL);
		if (ratchet_pub)
			memcpy(ratchet_pub, r->pub, 32);
		if (received)
			*received = r->received;
		*cursor = i + 1;
		return 1;
	}
	*cursor = t->ratchets.cap;
	return 0;
}

int rnsc_transport_ratchet_get(const rnsc_transport *t, const uint8_t dest_hash[HL],
			       uint8_t ratchet_pub[RNSC_RATCHETSIZE])
{
	if (!t || !dest_hash || !ratchet_pub)
		return RNSC_ERR_INVAL;
	const tr_ratchet *r = rnsc_tmap_get(&t->ratchets, dest_hash, NULL);
	if (!r)
		return RNSC_ERR_NOTFOUND;
	memcpy(ratchet_pub, r->pub, RNSC_RATCHETSIZE);
	return 0;
}

void rnsc_tr_ratchets_free_local(rnsc_ctx *ctx, tr_local *l)
{
	if (l->ratchets)
		rnsc_free_secret(ctx, l->ratchets, l->n_ratchets * sizeof(*l->ratchets));
	l->ratchets = NULL;
	l->n_ratchets = 0;
}

static tr_local *find_local(const rnsc_transport *t, const uint8_t dest_hash[HL])
{
	if (!t || !dest_hash)
		return NULL;
	return rnsc_tmap_get(&t->locals, dest_hash, NULL);
}

/* Replaces l's list with the first min(n, retained) of src (src may alias nothing of l's). */
static int set_list(rnsc_transport *t, tr_local *l, const uint8_t (*src)[32], size_t n)
{
	if (n > l->retained)
		n = l->retained;
	uint8_t(*nl)[32] = NULL;
	if (n) {
		if (!(nl = rnsc_alloc(t->ctx, n * sizeof(*nl))))
			return RNSC_ERR_NOMEM;
		memcpy(nl, src, n * sizeof(*nl));
	}
	rnsc_tr_ratchets_free_local(t->ctx, l);
	l->ratchets = nl;
	l->n_ratchets = n;
	return 0;
}

int rnsc_transport_dest_ratchets_enable(rnsc_transport *t, const uint8_t dest_hash[HL],
					const uint8_t (*ratchets)[32], size_t n)
{
	if (!t || !dest_hash || (n && !ratchets))
		return RNSC_ERR_INVAL;
	tr_local *l = find_local(t, dest_hash);
	if (!l)
		return RNSC_ERR_NOTFOUND;
	if (l->type != RNSC_DEST_SINGLE)
		return RNSC_ERR_STATE;
	if (!l->retained)
		l->retained = RNSC_RATCHET_COUNT;
	if (!l->ratchet_interval_ms)
		l->ratchet_interval_ms = (uint64_t)RNSC_RATCHET_INTERVAL_S * 1000;
	int rc = set_list(t, l, ratchets, n);
	if (rc)
		return rc;
	l->ratchets_on = 1;
	l->latest_ratchet_time = 0;
	return 0;
}

int rnsc_transport_dest_ratchet_interval(rnsc_transport *t, const uint8_t dest_hash[HL],
					 uint64_t seconds)
{
	tr_local *l = find_local(t, dest_hash);
	if (!l)
		return t && dest_hash ? RNSC_ERR_NOTFOUND : RNSC_ERR_INVAL;
	if (!seconds)
		return RNSC_ERR_INVAL;
	l->ratchet_interval_ms = seconds * 1000;
	return 0;
}

int rnsc_transport_dest_retained_ratchets(rnsc_transport *t, const uint8_t dest_hash[HL],
					  size_t retained)
{
	tr_local *l = find_local(t, dest_hash);
	if (!l)
		return t && dest_hash ? RNSC_ERR_NOTFOUND : RNSC_ERR_INVAL;
	if (!retained)
		return RNSC_ERR_INVAL;
	l->retained = retained;
	/* _clean_ratchets: only trims, the file follows at the next rotation */
	if (l->n_ratchets > retained) {
		rnsc_memzero(l->ratchets[retained], (l->n_ratchets - retained) * 32);
		l->n_ratchets = retained;
	}
	return 0;
}

int rnsc_transport_dest_enforce_ratchets(rnsc_transport *t, const uint8_t dest_hash[HL])
{
	tr_local *l = find_local(t, dest_hash);
	if (!l)
		return t && dest_hash ? RNSC_ERR_NOTFOUND : RNSC_ERR_INVAL;
	if (!l->ratchets_on)
		return RNSC_ERR_STATE;
	l->enforce_ratchets = 1;
	return 0;
}

int rnsc_transport_dest_ratchets(const rnsc_transport *t, const uint8_t dest_hash[HL],
				 const uint8_t (**ratchets)[32], size_t *n)
{
	const tr_local *l = find_local(t, dest_hash);
	if (!l)
		return t && dest_hash ? RNSC_ERR_NOTFOUND : RNSC_ERR_INVAL;
	if (!l->ratchets_on)
		return RNSC_ERR_STATE;
	if (ratchets)
		*ratchets = (const uint8_t(*)[32])l->ratchets;
	if (n)
		*n = l->n_ratchets;
	return 0;
}

int rnsc_transport_dest_latest_ratchet_id(const rnsc_transport *t, const uint8_t dest_hash[HL],
					  uint8_t id[RNSC_RATCHET_ID_LEN])
{
	const tr_local *l = find_local(t, dest_hash);
	if (!l)
		return t && dest_hash ? RNSC_ERR_NOTFOUND : RNSC_ERR_INVAL;
	if (!l->has_latest_rid)
		return 0;
	if (id)
		memcpy(id, l->latest_rid, RNSC_RATCHET_ID_LEN);
	return 1;
}

int rnsc_tr_ratchet_for_announce(rnsc_transport *t, tr_local *l, uint8_t pub[32], int *has,
				 uint64_t now)
{
	*has = 0;
	if (!l->ratchets_on)
		return 0;
	/* rotate_ratchets: now > latest_ratchet_time + ratchet_interval */
	if (now > l->latest_ratchet_time + l->ratchet_interval_ms) {
		size_t n = l->n_ratchets + 1 > l->retained ? l->retained : l->n_ratchets + 1;
		uint8_t(*nl)[32] = rnsc_alloc(t->ctx, n * sizeof(*nl));
		if (!nl)
			return RNSC_ERR_NOMEM;
		int rc = rnsc_ratchet_generate(t->ctx, nl[0]);
		if (rc) {
			rnsc_free_secret(t->ctx, nl, n * sizeof(*nl));
			return rc;
		}
		if (n > 1)
			memcpy(nl[1], l->ratchets, (n - 1) * sizeof(*nl));
		rnsc_tr_ratchets_free_local(t->ctx, l);
		l->ratchets = nl;
		l->n_ratchets = n;
		l->latest_ratchet_time = now;
		if (t->cb.on_dest_ratchets)
			t->cb.on_dest_ratchets(t->cb.ud, l->hash, (const uint8_t(*)[32])l->ratchets,
					       l->n_ratchets);
	}
	if (!l->n_ratchets)
		return 0; /* retained 0 cannot happen: set_retained refuses it */
	int rc = rnsc_ratchet_public(t->ctx, pub, l->ratchets[0]);
	if (rc)
		return rc;
	*has = 1;
	return rnsc_tr_ratchet_remember(t, l->hash, pub, now);
}
