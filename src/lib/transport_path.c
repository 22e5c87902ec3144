/* SPDX-License-Identifier: MIT */
/*
 * Path behaviour beside the path table (Transport.py of rns 1.5.4 and 1.5.7, identical here):
 *
 *   path states   Transport.path_states: dest -> STATE_UNKNOWN / UNRESPONSIVE / RESPONSIVE,
 *                 set only for destinations in the path table (mark_path_*), reset to unknown
 *                 by every path table insert, read by the announce replacement rule that
 *                 lets the same emission over more hops replace an unresponsive path
 *                 (path_is_unresponsive), culled in the table pass for destinations that
 *                 were no longer in the path table when the pass began;
 *   rediscovery   a relayed link request that was never proved (link table cull), or a link
 *                 this node opened that closed while pending, leads to a path request, and
 *                 for a destination one hop away (or an initiator one hop away) on a
 *                 transport node to the path being marked unresponsive; without transport
 *                 the path is expired instead;
 *   the sender    those path requests wait in Transport.pending_discovery_prs (at most
 *                 max_queued_discovery_prs, one per destination) and go out one every
 *                 discovery_pr_tx_throttle, the first one that long after it was queued, as
 *                 handle_disovery_path_requests' thread sleeps before each.
 *
 * The reference keeps the interface to leave out in one variable for the whole link table
 * pass, so an entry that does not set it inherits the previous entry's, and the first entry
 * to queue a destination decides; both are reproduced (entries are walked in insertion
 * order, as the reference walks its dict; interop/REFERENCE-QUIRKS.md). Where rnsc differs:
 * the reference checks closed pending links once a second (links_check_interval); here the
 * check runs when the link closes.
 */
#include <stdint.h>
#include <string.h>

#include "transport.h"
#include "transport_internal.h"

#define WHO "transport"

/* States are stored in the map's value pointer as state + 1 (NULL means "set, no value",
 * which the map cannot tell from absent without *found). */
static void *state_val(int state)
{
	return (void *)(uintptr_t)(state + 1);
}

void rnsc_tr_path_states_init(rnsc_transport *t)
{
	rnsc_tmap_init(&t->path_states, t->ctx, HL);
	t->n_pdpr = 0;
	t->pdpr_at = 0;
}

void rnsc_tr_path_states_free(rnsc_transport *t)
{
	rnsc_tmap_free(&t->path_states, NULL); /* values are not allocations */
}

/* Transport.mark_path_*: only for a destination in the path table. 1 marked, 0 not. */
int rnsc_tr_path_state_set(rnsc_transport *t, const uint8_t dest[HL], int state)
{
	if (!rnsc_tmap_has(&t->paths, dest))
		return 0;
	int rc = rnsc_tmap_put(&t->path_states, dest, state_val(state), NULL);
	return rc ? rc : 1;
}

int rnsc_tr_path_is_unresponsive(const rnsc_transport *t, const uint8_t dest[HL])
{
	void *v = rnsc_tmap_get(&t->path_states, dest, NULL);
	return v == state_val(RNSC_PATH_STATE_UNRESPONSIVE);
}

int rnsc_tr_path_states_stale(rnsc_transport *t, uint8_t (**out)[HL], size_t *n)
{
	*out = NULL;
	*n = 0;
	const rnsc_tmap *m = &t->path_states;
	if (!m->n)
		return 0;
	uint8_t(*ids)[HL] = rnsc_alloc(t->ctx, m->n * HL);
	if (!ids)
		return RNSC_ERR_NOMEM;
	for (size_t i = 0; i < m->cap; i++)
		if (rnsc_tmap_slot_used(m, i) &&
		    !rnsc_tmap_has(&t->paths, rnsc_tmap_slot_key(m, i)))
			memcpy(ids[(*n)++], rnsc_tmap_slot_key(m, i), HL);
	*out = ids;
	return 0;
}

void rnsc_tr_path_states_drop(rnsc_transport *t, uint8_t (*ids)[HL], size_t n)
{
	for (size_t i = 0; i < n; i++)
		rnsc_tmap_del(&t->path_states, ids[i]);
	rnsc_free(t->ctx, ids);
}

/* ---- the discovery path request sender ------------------------------------------------ */

/* Appends to pending_discovery_prs unless the destination is queued already or the queue is
 * full (the jobs() epilogue). blocked: the interface to leave out, or NULL for all. */
static void pdpr_queue(rnsc_transport *t, const uint8_t dest[HL], const uint32_t *blocked,
		       uint64_t now)
{
	for (size_t i = 0; i < t->n_pdpr; i++)
		if (memcmp(t->pdpr[i].dest, dest, HL) == 0)
			return;
	if (t->n_pdpr >= RNSC_MAX_QUEUED_DISCOVERY_PRS) {
		t->st.pr_rediscovery_dropped++;
		return;
	}
	if (t->n_pdpr == 0)
		t->pdpr_at = now + RNSC_DISCOVERY_PR_TX_THROTTLE_MS; /* the sender sleeps first */
	struct tr_pdpr *q = &t->pdpr[t->n_pdpr++];
	memcpy(q->dest, dest, HL);
	q->has_blocked = blocked != NULL;
	q->blocked = blocked ? *blocked : 0;
	t->st.pr_rediscovery++;
}

int rnsc_tr_path_tick(rnsc_transport *t, uint64_t now)
{
	while (t->n_pdpr && now >= t->pdpr_at) {
		struct tr_pdpr q = t->pdpr[0];
		memmove(&t->pdpr[0], &t->pdpr[1], (t->n_pdpr - 1) * sizeof(t->pdpr[0]));
		t->n_pdpr--;
		int rc = 0;
		if (!q.has_blocked) {
			rc = rnsc_transport_request_path(t, q.dest, 0, 0, now);
		} else {
			/* every interface but the one the failed attempt came through */
			for (size_t i = 0; i < t->n_ifaces && rc == 0; i++)
				if (t->ifaces[i].id != q.blocked)
					rc = rnsc_transport_request_path(t, q.dest, 1,
									 t->ifaces[i].id, now);
		}
		if (rc == RNSC_ERR_NOMEM)
			return rc;
		/* The next one after another throttle interval, from this send. */
		t->pdpr_at = now + RNSC_DISCOVERY_PR_TX_THROTTLE_MS;
	}
	return 0;
}

uint64_t rnsc_tr_path_deadline(const rnsc_transport *t)
{
	return t->n_pdpr ? t->pdpr_at : UINT64_MAX;
}

/* ---- rediscovery ------------------------------------------------------------------------ */

static uint64_t last_path_request(const rnsc_transport *t, const uint8_t dest[HL])
{
	const uint64_t *ts = rnsc_tmap_get(&t->path_requests, dest, NULL);
	return ts ? *ts : 0;
}

static unsigned hops_to(const rnsc_transport *t, const uint8_t dest[HL])
{
	const tr_path *p = rnsc_tmap_get(&t->paths, dest, NULL);
	return p ? p->pub.hops : RNSC_PATHFINDER_M; /* Transport.hops_to */
}

int rnsc_tr_path_lte_failed(rnsc_transport *t, const uint8_t dest[HL], uint32_t rcvd_if,
			    unsigned taken_hops, tr_blocked *blocked, uint64_t now)
{
	/* path_request_throttle: a path request for it went out less than PATH_REQUEST_MI ago */
	int throttle = now - last_path_request(t, dest) < RNSC_PATH_REQUEST_MI_MS;
	int cond = 0, mark = 0;
	if (!rnsc_tmap_has(&t->paths, dest)) {
		cond = 1; /* the path went away meanwhile */
	} else if (!throttle && taken_hops == 0) {
		cond = 1; /* the request came from a local client */
	} else if (!throttle && (hops_to(t, dest) == 1 || taken_hops == 1)) {
		/* The destination was local to one of our interfaces and probably roamed, or
		 * the initiator is next to us and the topology changed. */
		cond = 1;
		blocked->has = 1;
		blocked->id = rcvd_if;
		const tr_iface *f = rnsc_tr_iface_find(t, rcvd_if);
		mark = t->cfg.transport_enabled && f && f->mode != RNSC_TRANSPORT_MODE_BOUNDARY;
	}
	if (mark) {
		int rc = rnsc_tr_path_state_set(t, dest, RNSC_PATH_STATE_UNRESPONSIVE);
		if (rc < 0)
			return rc;
	}
	if (!cond)
		return 0;
	rnsc_log(t->ctx, RNSC_LOG_DEBUG, WHO,
		 "a relayed link was never established: rediscovering its path");
	/* blocked is what the last entry of this pass that set it left there (the reference's
	 * jobs() variable), not necessarily this entry's */
	pdpr_queue(t, dest, blocked->has ? &blocked->id : NULL, now);
	if (!t->cfg.transport_enabled)
		rnsc_transport_expire_path(t, dest); /* allow worse or reused paths */
	return 0;
}

void rnsc_tr_path_link_failed(rnsc_transport *t, const uint8_t dest[HL], uint64_t now)
{
	if (t->cfg.transport_enabled)
		return; /* a transport node waits for the link table's verdict */
	rnsc_transport_expire_path(t, dest);
	/* Behind a shared instance, the instance asks for the path. */
	if (t->to_shared)
		return;
	if (now - last_path_request(t, dest) > RNSC_PATH_REQUEST_MI_MS) {
		rnsc_log(t->ctx, RNSC_LOG_DEBUG, WHO,
			 "a link was never established: rediscovering its path");
		pdpr_queue(t, dest, NULL, now);
	}
}

/* ---- the public API ----------------------------------------------------------------------- */

int rnsc_transport_mark_path(rnsc_transport *t, const uint8_t dest_hash[HL], int state)
{
	if (!t || !dest_hash || state < RNSC_PATH_STATE_UNKNOWN ||
	    state > RNSC_PATH_STATE_RESPONSIVE)
		return RNSC_ERR_INVAL;
	return rnsc_tr_path_state_set(t, dest_hash, state);
}

int rnsc_transport_path_state(const rnsc_transport *t, const uint8_t dest_hash[HL])
{
	if (!t || !dest_hash)
		return RNSC_ERR_INVAL;
	int found = 0;
	void *v = rnsc_tmap_get(&t->path_states, dest_hash, &found);
	if (!found)
		return RNSC_ERR_NOTFOUND;
	return (int)((uintptr_t)v - 1);
}

int rnsc_transport_path_is_unresponsive(const rnsc_transport *t, const uint8_t dest_hash[HL])
{
	return t && dest_hash && rnsc_tr_path_is_unresponsive(t, dest_hash);
}

size_t rnsc_transport_path_state_count(const rnsc_transport *t)
{
	return t ? t->path_states.n : 0;
}

uint64_t rnsc_transport_path_request_time(const rnsc_transport *t, const uint8_t dest_hash[HL])
{
	return t && dest_hash ? last_path_request(t, dest_hash) : 0;
}

size_t rnsc_transport_rediscovery_pending(const rnsc_transport *t)
{
	return t ? t->n_pdpr : 0;
}
