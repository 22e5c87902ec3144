/* SPDX-License-Identifier: MIT */
/*
 * Blackholed identities (Transport.blackholed_identities and its helpers in rns 1.5.4):
 * the table, the announce drop, the expiry job and the msgpack list codec shared by the
 * runtime's persistence (storage/blackhole/), the RPC and the /list request handler.
 * Same threading rules as transport.h.
 */
#include <string.h>

#include "identity.h"
#include "msgpack.h"
#include "transport.h"
#include "transport_internal.h"

/* One entry; the reason follows the struct. */
typedef struct tr_blackhole {
	uint8_t source[HL];
	double until;
	int until_int;
	int has_reason;
	size_t reason_len;
	char reason[];
} tr_blackhole;

static void free_entry(rnsc_ctx *ctx, void *v)
{
	rnsc_free(ctx, v);
}

void rnsc_tr_blackhole_init(rnsc_transport *t)
{
	rnsc_tmap_init(&t->blackhole, t->ctx, HL);
}

void rnsc_tr_blackhole_free(rnsc_transport *t)
{
	rnsc_tmap_free(&t->blackhole, free_entry);
}

static void fill(const tr_blackhole *b, rnsc_blackhole_entry *out)
{
	if (!out)
		return;
	out->has_source = 1;
	memcpy(out->source, b->source, HL);
	out->until = b->until;
	out->until_int = b->until_int;
	out->reason = b->has_reason ? b->reason : NULL;
	out->reason_len = b->reason_len;
}

int rnsc_transport_blackhole_add(rnsc_transport *t, const uint8_t id[HL],
				 const rnsc_blackhole_entry *e)
{
	if (!t || !id || !e || (e->reason_len && !e->reason) || !(e->until >= 0))
		return RNSC_ERR_INVAL;
	if (rnsc_tmap_has(&t->blackhole, id))
		return 0; /* the reference answers None: already blackholed */
	tr_blackhole *b = rnsc_calloc(t->ctx, 1, sizeof(*b) + e->reason_len + 1);
	if (!b)
		return RNSC_ERR_NOMEM;
	memcpy(b->source, e->has_source ? e->source : rnsc_transport_id(t), HL);
	b->until = e->until;
	b->until_int = e->until_int;
	b->has_reason = e->reason != NULL;
	b->reason_len = e->reason_len;
	if (e->reason_len)
		memcpy(b->reason, e->reason, e->reason_len);
	if (rnsc_tmap_put(&t->blackhole, id, b, NULL)) {
		rnsc_free(t->ctx, b);
		return RNSC_ERR_NOMEM;
	}
	(void)rnsc_transport_blackhole_purge_paths(t);
	return 1;
}

int rnsc_transport_blackhole_remove(rnsc_transport *t, const uint8_t id[HL])
{
	if (!t || !id)
		return RNSC_ERR_INVAL;
	tr_blackhole *b = rnsc_tmap_del(&t->blackhole, id);
	if (!b)
		return 0;
	rnsc_free(t->ctx, b);
	return 1;
}

int rnsc_transport_blackhole_get(const rnsc_transport *t, const uint8_t id[HL],
				 rnsc_blackhole_entry *out)
{
	if (!t || !id)
		return RNSC_ERR_INVAL;
	const tr_blackhole *b = rnsc_tmap_get(&t->blackhole, id, NULL);
	if (!b)
		return RNSC_ERR_NOTFOUND;
	fill(b, out);
	return 0;
}

size_t rnsc_transport_blackhole_count(const rnsc_transport *t)
{
	return t ? t->blackhole.n : 0;
}

int rnsc_transport_blackhole_next(const rnsc_transport *t, size_t *cursor, uint8_t id[HL],
				  rnsc_blackhole_entry *out)
{
	if (!t || !cursor)
		return 0;
	const rnsc_tmap *m = &t->blackhole;
	for (; *cursor < m->cap; (*cursor)++) {
		if (!rnsc_tmap_slot_used(m, *cursor))
			continue;
		if (id)
			memcpy(id, rnsc_tmap_slot_key(m, *cursor), HL);
		fill(rnsc_tmap_slot_val(m, *cursor), out);
		(*cursor)++;
		return 1;
	}
	return 0;
}

/* Identity.recall(destination).hash is listed. */
static int dest_blackholed(rnsc_transport *t, const uint8_t dest[HL])
{
	const tr_known *k = rnsc_tmap_get(&t->known, dest, NULL);
	uint8_t ih[HL];
	return k && rnsc_truncated_hash(t->ctx, ih, k->pub, RNSC_KEYSIZE) == 0 &&
	       rnsc_tmap_has(&t->blackhole, ih);
}

size_t rnsc_transport_blackhole_purge_paths(rnsc_transport *t)
{
	if (!t || !t->blackhole.n)
		return 0;
	size_t dropped = 0;
	uint8_t batch[64][HL];
	size_t nb;
	do { /* collect, then delete: the table must not change while iterating */
		nb = 0;
		for (size_t i = 0; i < t->paths.cap && nb < 64; i++)
			if (rnsc_tmap_slot_used(&t->paths, i) &&
			    dest_blackholed(t, rnsc_tmap_slot_key(&t->paths, i)))
				memcpy(batch[nb++], rnsc_tmap_slot_key(&t->paths, i), HL);
		for (size_t i = 0; i < nb; i++)
			rnsc_free(t->ctx, rnsc_tmap_del(&t->paths, batch[i]));
		dropped += nb;
	} while (nb == 64);
	if (dropped)
		rnsc_log(t->ctx, RNSC_LOG_INFO, "transport",
			 "removed %zu destination%s associated with blackholed identities from "
			 "path table",
			 dropped, dropped == 1 ? "" : "s");
	return dropped;
}

int rnsc_tr_blackhole_drops(rnsc_transport *t, const rnsc_packet *p)
{
	if (!t->blackhole.n || p->packet_type != RNSC_PKT_ANNOUNCE || p->data_len < RNSC_KEYSIZE)
		return 0;
	/* the announced identity is the hash of the public key the announce opens with,
	 * checked before the signature as validate_announce does */
	uint8_t ih[HL];
	if (rnsc_truncated_hash(t->ctx, ih, p->data, RNSC_KEYSIZE) ||
	    !rnsc_tmap_has(&t->blackhole, ih))
		return 0;
	t->st.announces_blackholed++;
	return 1;
}

void rnsc_tr_blackhole_tick(rnsc_transport *t, uint64_t now)
{
	if (now <= t->blackhole_last_checked + RNSC_BLACKHOLE_CHECK_INTERVAL_MS)
		return;
	t->blackhole_last_checked = now;
	double now_s = (double)now / 1000.0;
	uint8_t batch[64][HL];
	size_t nb, removed = 0;
	do {
		nb = 0;
		for (size_t i = 0; i < t->blackhole.cap && nb < 64; i++) {
			if (!rnsc_tmap_slot_used(&t->blackhole, i))
				continue;
			const tr_blackhole *b = rnsc_tmap_slot_val(&t->blackhole, i);
			if (b->until > 0 && now_s > b->until)
				memcpy(batch[nb++], rnsc_tmap_slot_key(&t->blackhole, i), HL);
		}
		for (size_t i = 0; i < nb; i++)
			(void)rnsc_transport_blackhole_remove(t, batch[i]);
		removed += nb;
	} while (nb == 64);
	if (removed)
		rnsc_log(t->ctx, RNSC_LOG_VERBOSE, "transport", "removed %zu blackholed identit%s",
			 removed, removed == 1 ? "y" : "ies");
}

uint64_t rnsc_tr_blackhole_deadline(const rnsc_transport *t)
{
	if (!t->blackhole.n)
		return UINT64_MAX;
	return t->blackhole_last_checked + RNSC_BLACKHOLE_CHECK_INTERVAL_MS + 1;
}

/* ---- the list codec ------------------------------------------------------------------------ */

int rnsc_blackhole_list_write(rnsc_mp_writer *w, const rnsc_transport *t,
			      const uint8_t *only_source)
{
	if (!w || !t)
		return RNSC_ERR_INVAL;
	const rnsc_tmap *m = &t->blackhole;
	size_t n = 0;
	for (size_t i = 0; i < m->cap; i++)
		if (rnsc_tmap_slot_used(m, i) &&
		    (!only_source ||
		     memcmp(((const tr_blackhole *)rnsc_tmap_slot_val(m, i))->source, only_source,
			    HL) == 0))
			n++;
	rnsc_mp_write_map(w, n);
	for (size_t i = 0; i < m->cap; i++) {
		if (!rnsc_tmap_slot_used(m, i))
			continue;
		const tr_blackhole *b = rnsc_tmap_slot_val(m, i);
		if (only_source && memcmp(b->source, only_source, HL) != 0)
			continue;
		/* {"source": ..., "until": ..., "reason": ...}: the key order of the reference's
		 * entry dict */
		rnsc_mp_write_bin(w, rnsc_tmap_slot_key(m, i), HL);
		rnsc_mp_write_map(w, 3);
		rnsc_mp_write_cstr(w, "source");
		rnsc_mp_write_bin(w, b->source, HL);
		rnsc_mp_write_cstr(w, "until");
		if (b->until <= 0)
			rnsc_mp_write_nil(w);
		else if (b->until_int && b->until < 9.2e18) /* past int64: written as a float */
			rnsc_mp_write_int(w, (int64_t)b->until);
		else
			rnsc_mp_write_double(w, b->until);
		rnsc_mp_write_cstr(w, "reason");
		if (b->has_reason)
			rnsc_mp_write_str(w, b->reason, b->reason_len);
		else
			rnsc_mp_write_nil(w);
	}
	return rnsc_mp_writer_finish(w);
}

static int keyis(const rnsc_mp_token *k, const char *lit)
{
	return k->type == RNSC_MP_STR && k->len == strlen(lit) && memcmp(k->p, lit, k->len) == 0;
}

/* One entry value: a map; "source" bin, "until" nil / number, "reason" nil / str. */
static int parse_entry(rnsc_mp_reader *r, rnsc_blackhole_entry *e)
{
	memset(e, 0, sizeof(*e));
	rnsc_mp_token t, k, v;
	int rc = rnsc_mp_next(r, &t);
	if (rc)
		return rc;
	if (t.type != RNSC_MP_MAP)
		return RNSC_ERR_MALFORMED;
	for (size_t j = 0; j < t.len; j++) {
		if ((rc = rnsc_mp_next(r, &k)) || (rc = rnsc_mp_peek(r, &v)))
			return rc;
		if (keyis(&k, "source") && v.type == RNSC_MP_BIN && v.len == HL) {
			memcpy(e->source, v.p, HL);
			e->has_source = 1;
		} else if (keyis(&k, "source") && v.type != RNSC_MP_NIL) {
			return RNSC_ERR_MALFORMED;
		} else if (keyis(&k, "until")) {
			if (v.type == RNSC_MP_FLOAT64)
				e->until = v.f64;
			else if (v.type == RNSC_MP_FLOAT32)
				e->until = v.f32;
			else if (v.type == RNSC_MP_UINT)
				e->until = (double)v.u, e->until_int = 1;
			else if (v.type == RNSC_MP_INT)
				e->until = 1e-9; /* before the epoch: long expired, not forever */
			else if (v.type != RNSC_MP_NIL)
				return RNSC_ERR_MALFORMED;
			if (!(e->until >= 0)) /* NaN or negative */
				return RNSC_ERR_MALFORMED;
		} else if (keyis(&k, "reason")) {
			if (v.type == RNSC_MP_STR) {
				e->reason = (const char *)v.p;
				e->reason_len = v.len;
			} else if (v.type != RNSC_MP_NIL) {
				return RNSC_ERR_MALFORMED;
			}
		}
		if ((rc = rnsc_mp_skip(r)))
			return rc;
	}
	return 0;
}

int rnsc_blackhole_list_parse(const uint8_t *buf, size_t len,
			      int (*cb)(void *ud, const uint8_t id[HL],
					const rnsc_blackhole_entry *e),
			      void *ud)
{
	if (!buf && len)
		return RNSC_ERR_INVAL;
	rnsc_mp_reader r;
	rnsc_mp_reader_init(&r, buf, len);
	size_t n;
	int rc = rnsc_mp_read_map(&r, &n);
	if (rc)
		return rc;
	int count = 0;
	for (size_t i = 0; i < n; i++) {
		rnsc_mp_token k;
		if ((rc = rnsc_mp_next(&r, &k)))
			return rc;
		if (k.type == RNSC_MP_ARRAY || k.type == RNSC_MP_MAP)
			return RNSC_ERR_MALFORMED; /* an unhashable key: not a dict the reference wrote */
		if (k.type != RNSC_MP_BIN || k.len != HL) { /* skipped, as the reference skips it */
			if ((rc = rnsc_mp_skip(&r)))
				return rc;
			continue;
		}
		rnsc_blackhole_entry e;
		if ((rc = parse_entry(&r, &e)))
			return rc;
		if (cb && (rc = cb(ud, k.p, &e)) < 0)
			return rc;
		count++;
	}
	return count;
}
