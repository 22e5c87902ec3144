/* SPDX-License-Identifier: MIT */
/*
 * Known-destination hygiene: the last_used field of Identity.known_destinations, the
 * retain/unretain marks, and Identity.clean_known_destinations (run by the runtime every
 * Transport.known_destinations_interval). The reference keeps last_used as a float of
 * seconds, 0 for never used and -1 for retained; so does rnsc, so that a file written by
 * either loads into the other unchanged.
 *
 * Ownership: the entries belong to the engine. Threading: the engine's thread.
 */
#include <string.h>

#include "identity.h"
#include "transport_internal.h"

static double secs(uint64_t now_ms)
{
	return (double)now_ms / 1000.0;
}

int rnsc_transport_known_used(rnsc_transport *t, const uint8_t dest_hash[16], uint64_t now_ms)
{
	if (!t || !dest_hash)
		return RNSC_ERR_INVAL;
	tr_known *k = rnsc_tmap_get(&t->known, dest_hash, NULL);
	if (!k || k->last_used < 0)
		return 0; /* retained entries keep their mark */
	k->last_used = secs(now_ms);
	k->last_used_int = 0;
	return 1;
}

int rnsc_transport_known_retain(rnsc_transport *t, const uint8_t dest_hash[16])
{
	if (!t || !dest_hash)
		return RNSC_ERR_INVAL;
	tr_known *k = rnsc_tmap_get(&t->known, dest_hash, NULL);
	if (!k)
		return 0;
	k->last_used = RNSC_KNOWN_RETAINED;
	k->last_used_int = 1;
	return 1;
}

int rnsc_transport_known_unretain(rnsc_transport *t, const uint8_t dest_hash[16], uint64_t now_ms)
{
	if (!t || !dest_hash)
		return RNSC_ERR_INVAL;
	tr_known *k = rnsc_tmap_get(&t->known, dest_hash, NULL);
	if (!k)
		return 0;
	k->last_used = secs(now_ms);
	k->last_used_int = 0;
	return 1;
}

int rnsc_transport_known_retain_identity(rnsc_transport *t, const uint8_t identity_hash[16])
{
	if (!t || !identity_hash)
		return RNSC_ERR_INVAL;
	int retained = 0;
	for (size_t i = 0; i < t->known.cap; i++) {
		if (!rnsc_tmap_slot_used(&t->known, i))
			continue;
		tr_known *k = rnsc_tmap_slot_val(&t->known, i);
		uint8_t h[RNSC_TRUNCATED_HASHLEN];
		if (rnsc_truncated_hash(t->ctx, h, k->pub, RNSC_KEYSIZE) == 0 &&
		    memcmp(h, identity_hash, sizeof(h)) == 0) {
			k->last_used = RNSC_KNOWN_RETAINED;
			k->last_used_int = 1;
			retained = 1;
		}
	}
	return retained;
}

static int stale(const rnsc_transport *t, const uint8_t *dest, const tr_known *k, double now)
{
	if (rnsc_tmap_has(&t->paths, dest) || k->last_used == RNSC_KNOWN_RETAINED)
		return 0;
	int was_used = k->last_used > 0;
	double last_announce = (double)k->timestamp / 1000.0;
	if (!was_used && now - last_announce > RNSC_UNUSED_DESTINATION_LINGER_S)
		return 1;
	/* measured from last_used even when it is 0 or another negative mark, as the
	 * reference measures it */
	return now - k->last_used > RNSC_DESTINATION_TIMEOUT_S * 1.25;
}

int rnsc_transport_known_clean(rnsc_transport *t, uint64_t now_ms, rnsc_known_removed_fn removed,
			       void *ud)
{
	if (!t)
		return RNSC_ERR_INVAL;
	double now = secs(now_ms);
	int n = 0;
	/* Collect first (in batches, bounded on the stack): the map must not change while its
	 * slots are walked. */
	for (;;) {
		uint8_t batch[64][RNSC_TRUNCATED_HASHLEN];
		size_t nb = 0;
		for (size_t i = 0; i < t->known.cap && nb < 64; i++) {
			if (!rnsc_tmap_slot_used(&t->known, i))
				continue;
			const uint8_t *key = rnsc_tmap_slot_key(&t->known, i);
			if (stale(t, key, rnsc_tmap_slot_val(&t->known, i), now))
				memcpy(batch[nb++], key, RNSC_TRUNCATED_HASHLEN);
		}
		for (size_t i = 0; i < nb; i++) {
			tr_known *k = rnsc_tmap_del(&t->known, batch[i]);
			if (!k)
				continue;
			if (removed)
				removed(ud, batch[i]);
			rnsc_free(t->ctx, k->app_data);
			rnsc_free(t->ctx, k);
			n++;
		}
		if (nb < 64)
			break;
	}
	if (n)
		rnsc_log(t->ctx, RNSC_LOG_DEBUG, "transport",
			 "cleaned %d stale known destination%s", n, n == 1 ? "" : "s");
	return n;
}
