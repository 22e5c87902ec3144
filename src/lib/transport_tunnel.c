/* SPDX-License-Identifier: MIT */
/*
 * Tunnels (Transport.tunnels; synthesize_tunnel, tunnel_synthesize_handler, handle_tunnel,
 * void_tunnel_interface and the tunnel part of the table culling in Transport.py).
 *
 * Why they exist: a TCP client that reconnects comes back to its server as a new spawned
 * interface, and the paths learnt through the old one would be lost with it. The client
 * therefore signs "its transport public key + a hash of its interface" on every connect and
 * sends it to the PLAIN destination rnstransport.tunnel.synthesize; the server files every
 * path that arrives on that interface under the tunnel id (SHA-256 of key + interface hash)
 * and, when the same tunnel id shows up on a new interface, puts the paths back on it.
 *
 * Packet data: public key (64) | interface hash (32) | random hash (16) | signature (64)
 * over the first 112 bytes. Entries live TUNNEL_TIMEOUT (8 h) after their last use, tunnel
 * paths TUNNEL_PATH_TIMEOUT (8 h) after the announce.
 *
 * Persistence: as the reference, the runtime writes the table to storage/tunnels and the
 * tunnel paths' announces to the announce cache, and loads them back at start
 * (rnsc_transport_tunnel_next / _path_next / _import / _path_import below).
 *
 * Ownership: the tunnel table and its path copies belong to the engine (freed by
 * rnsc_tr_tunnels_free). Threading: the engine's thread.
 */
#include <string.h>

#include "crypto.h"
#include "ctx.h"
#include "destination.h"
#include "err.h"
#include "identity.h"
#include "transport_internal.h"

#define WHO "transport"
#define TUNNEL_DATA_LEN (RNSC_KEYSIZE + RNSC_HASHLEN + HL + RNSC_SIGLEN)

typedef struct tr_tunnel {
	int has_iface;
	uint32_t iface;   /* IDX_TT_IF (None: has_iface 0) */
	uint64_t expires; /* IDX_TT_EXPIRES */
	rnsc_tmap paths;  /* IDX_TT_PATHS: dest -> tr_path* (pub.iface unused) */
} tr_tunnel;

static void free_path(rnsc_ctx *ctx, void *v)
{
	rnsc_free(ctx, v);
}

static void free_tunnel(rnsc_ctx *ctx, void *v)
{
	tr_tunnel *tn = v;
	if (!tn)
		return;
	rnsc_tmap_free(&tn->paths, free_path);
	rnsc_free(ctx, tn);
}

void rnsc_tr_tunnels_init(rnsc_transport *t)
{
	rnsc_tmap_init(&t->tunnels, t->ctx, RNSC_HASHLEN);
}

void rnsc_tr_tunnels_free(rnsc_transport *t)
{
	rnsc_tmap_free(&t->tunnels, free_tunnel);
}

int rnsc_transport_tunnel_synthesize(rnsc_transport *t, uint32_t iface,
				     const uint8_t iface_hash[RNSC_HASHLEN], uint64_t now)
{
	if (!t || !iface_hash)
		return RNSC_ERR_INVAL;
	if (!rnsc_tr_iface_find(t, iface))
		return RNSC_ERR_NOTFOUND;
	uint8_t data[TUNNEL_DATA_LEN];
	rnsc_identity_public_bytes(&t->ident, data);
	memcpy(data + RNSC_KEYSIZE, iface_hash, RNSC_HASHLEN);
	int rc = rnsc_random_hash(t->ctx, data + RNSC_KEYSIZE + RNSC_HASHLEN);
	if (rc == 0)
		rc = rnsc_identity_sign(&t->ident, data + RNSC_KEYSIZE + RNSC_HASHLEN + HL, data,
					RNSC_KEYSIZE + RNSC_HASHLEN + HL);
	if (rc)
		return rc;
	rnsc_packet p = {0};
	p.header_type = RNSC_HEADER_1;
	p.transport_type = RNSC_TRANSPORT_BROADCAST;
	p.dest_type = RNSC_DEST_PLAIN;
	p.packet_type = RNSC_PKT_DATA;
	p.context = RNSC_CTX_NONE;
	memcpy(p.dest_hash, t->tunnel_dest, HL);
	p.data = data;
	p.data_len = sizeof(data);
	rc = rnsc_tr_outbound(t, &p, &iface, now, NULL);
	if (rc == 0)
		t->st.tunnels_synthesized++;
	return rc;
}

/* handle_tunnel: a tunnel id seen on iface, new or back. Paths filed under a known tunnel go
 * back into the path table on iface unless the table has a better or newer one. */
static int handle_tunnel(rnsc_transport *t, const uint8_t id[RNSC_HASHLEN], tr_iface *rif,
			 uint64_t now)
{
	tr_tunnel *tn = rnsc_tmap_get(&t->tunnels, id, NULL);
	memcpy(rif->tunnel_id, id, RNSC_HASHLEN);
	rif->has_tunnel = 1;
	if (!tn) {
		if (!(tn = rnsc_calloc(t->ctx, 1, sizeof(*tn))))
			return RNSC_ERR_NOMEM;
		rnsc_tmap_init(&tn->paths, t->ctx, HL);
		tn->has_iface = 1;
		tn->iface = rif->id;
		tn->expires = now + RNSC_TUNNEL_TIMEOUT_MS;
		int rc = rnsc_tmap_put(&t->tunnels, id, tn, NULL);
		if (rc) {
			free_tunnel(t->ctx, tn);
			return rc;
		}
		t->st.tunnels_established++;
		rnsc_log(t->ctx, RNSC_LOG_DEBUG, WHO, "tunnel endpoint established on interface %u",
			 (unsigned)rif->id);
		return 0;
	}
	tn->has_iface = 1;
	tn->iface = rif->id;
	tn->expires = now + RNSC_TUNNEL_TIMEOUT_MS;
	t->st.tunnels_reappeared++;
	size_t n = tn->paths.n, nd = 0;
	if (!n)
		return 0;
	uint8_t(*gone)[HL] = rnsc_alloc(t->ctx, n * HL);
	if (!gone)
		return RNSC_ERR_NOMEM;
	int rc = 0;
	for (size_t i = 0; i < tn->paths.cap && rc == 0; i++) {
		if (!rnsc_tmap_slot_used(&tn->paths, i))
			continue;
		const uint8_t *dest = rnsc_tmap_slot_key(&tn->paths, i);
		const tr_path *tp = rnsc_tmap_slot_val(&tn->paths, i);
		const tr_path *cur = rnsc_tmap_get(&t->paths, dest, NULL);
		int add;
		if (cur)
			add = (tp->pub.hops <= cur->pub.hops || now > cur->pub.expires) &&
			      rnsc_tr_path_timebase(tp) >= rnsc_tr_path_timebase(cur);
		else
			add = now < tp->pub.expires;
		if (!add) {
			memcpy(gone[nd++], dest, HL);
			continue;
		}
		tr_path *e = rnsc_alloc(t->ctx, sizeof(*e));
		if (!e) {
			rc = RNSC_ERR_NOMEM;
			break;
		}
		*e = *tp;
		e->pub.timestamp = now;
		e->pub.iface = rif->id;
		void *prev = NULL;
		if ((rc = rnsc_tmap_put(&t->paths, dest, e, &prev))) {
			rnsc_free(t->ctx, e);
			break;
		}
		rnsc_free(t->ctx, prev);
		t->st.tunnel_paths_restored++;
	}
	for (size_t i = 0; i < nd; i++)
		rnsc_free(t->ctx, rnsc_tmap_del(&tn->paths, gone[i]));
	rnsc_free(t->ctx, gone);
	rnsc_log(t->ctx, RNSC_LOG_DEBUG, WHO,
		 "tunnel endpoint reappeared on interface %u: %zu "
		 "paths restored, %zu dropped",
		 (unsigned)rif->id, n - nd, nd);
	/* a path kept in the tunnel while its identity was blackholed must not come back with it */
	(void)rnsc_transport_blackhole_purge_paths(t);
	return rc;
}

int rnsc_tr_tunnel_inbound(rnsc_transport *t, tr_iface *rif, const rnsc_packet *p, uint64_t now)
{
	if (p->data_len != TUNNEL_DATA_LEN) {
		t->st.tunnels_invalid++; /* the reference ignores other lengths */
		return 0;
	}
	rnsc_identity remote;
	uint8_t id[RNSC_HASHLEN];
	int rc = rnsc_identity_from_public(t->ctx, &remote, p->data, RNSC_KEYSIZE);
	if (rc) {
		t->st.tunnels_invalid++;
		return 0;
	}
	const size_t signed_len = RNSC_KEYSIZE + RNSC_HASHLEN + HL;
	int valid = rnsc_identity_verify(&remote, p->data + signed_len, RNSC_SIGLEN, p->data,
					 signed_len) == 0;
	rnsc_identity_free(&remote);
	if (!valid) {
		t->st.tunnels_invalid++; /* protocol_violation("Invalid tunnel synthesis packet") */
		return 0;
	}
	if ((rc = rnsc_full_hash(t->ctx, id, p->data, RNSC_KEYSIZE + RNSC_HASHLEN)))
		return rc;
	return handle_tunnel(t, id, rif, now);
}

int rnsc_tr_tunnel_path_stored(rnsc_transport *t, const tr_iface *rif, const uint8_t dest[HL],
			       const tr_path *e, uint64_t now)
{
	if (!rif->has_tunnel)
		return 0;
	tr_tunnel *tn = rnsc_tmap_get(&t->tunnels, rif->tunnel_id, NULL);
	if (!tn) {
		rnsc_log(t->ctx, RNSC_LOG_WARNING, WHO,
			 "tunnel id of interface %u not in the "
			 "tunnel table",
			 (unsigned)rif->id);
		return 0;
	}
	tr_path *c = rnsc_alloc(t->ctx, sizeof(*c));
	if (!c)
		return RNSC_ERR_NOMEM;
	*c = *e;
	void *prev = NULL;
	int rc = rnsc_tmap_put(&tn->paths, dest, c, &prev);
	if (rc) {
		rnsc_free(t->ctx, c);
		return rc;
	}
	rnsc_free(t->ctx, prev);
	tn->expires = now + RNSC_TUNNEL_TIMEOUT_MS;
	return 0;
}

void rnsc_tr_tunnel_iface_gone(rnsc_transport *t, uint32_t iface)
{
	for (size_t i = 0; i < t->tunnels.cap; i++) {
		tr_tunnel *tn = rnsc_tmap_slot_used(&t->tunnels, i)
					? rnsc_tmap_slot_val(&t->tunnels, i)
					: NULL;
		if (tn && tn->has_iface && tn->iface == iface)
			tn->has_iface = 0; /* void_tunnel_interface */
	}
}

/* The tunnel part of the reference's table culling: tunnels past their expiry (or with an
 * expiry too far ahead to be genuine) go; in the others, paths older than
 * TUNNEL_PATH_TIMEOUT or superseded by a newer path in the table go. */
int rnsc_tr_tunnels_cull(rnsc_transport *t, uint64_t now)
{
	if (!t->tunnels.n)
		return 0;
	uint8_t(*gone)[RNSC_HASHLEN] = rnsc_alloc(t->ctx, t->tunnels.n * RNSC_HASHLEN);
	if (!gone)
		return RNSC_ERR_NOMEM;
	size_t ng = 0;
	int rc = 0;
	for (size_t i = 0; i < t->tunnels.cap && rc == 0; i++) {
		if (!rnsc_tmap_slot_used(&t->tunnels, i))
			continue;
		tr_tunnel *tn = rnsc_tmap_slot_val(&t->tunnels, i);
		if (tn->expires > now + 2 * RNSC_TUNNEL_TIMEOUT_MS || now > tn->expires) {
			memcpy(gone[ng++], rnsc_tmap_slot_key(&t->tunnels, i), RNSC_HASHLEN);
			continue;
		}
		if (tn->has_iface && !rnsc_tr_iface_find(t, tn->iface))
			tn->has_iface = 0;
		if (!tn->paths.n)
			continue;
		uint8_t(*pg)[HL] = rnsc_alloc(t->ctx, tn->paths.n * HL);
		if (!pg) {
			rc = RNSC_ERR_NOMEM;
			break;
		}
		size_t np = 0;
		for (size_t k = 0; k < tn->paths.cap; k++) {
			if (!rnsc_tmap_slot_used(&tn->paths, k))
				continue;
			const uint8_t *dest = rnsc_tmap_slot_key(&tn->paths, k);
			const tr_path *tp = rnsc_tmap_slot_val(&tn->paths, k);
			const tr_path *cur = rnsc_tmap_get(&t->paths, dest, NULL);
			if (now > tp->pub.timestamp + RNSC_TUNNEL_PATH_TIMEOUT_MS ||
			    (cur && rnsc_tr_path_timebase(cur) > rnsc_tr_path_timebase(tp)))
				memcpy(pg[np++], dest, HL);
		}
		for (size_t k = 0; k < np; k++)
			rnsc_free(t->ctx, rnsc_tmap_del(&tn->paths, pg[k]));
		rnsc_free(t->ctx, pg);
	}
	for (size_t i = 0; i < ng; i++)
		free_tunnel(t->ctx, rnsc_tmap_del(&t->tunnels, gone[i]));
	rnsc_free(t->ctx, gone);
	return rc;
}

size_t rnsc_transport_tunnel_count(const rnsc_transport *t)
{
	return t ? t->tunnels.n : 0;
}

int rnsc_transport_tunnel_get(const rnsc_transport *t, const uint8_t id[RNSC_HASHLEN],
			      rnsc_transport_tunnel *out)
{
	if (!t || !id || !out)
		return RNSC_ERR_INVAL;
	const tr_tunnel *tn = rnsc_tmap_get(&t->tunnels, id, NULL);
	if (!tn)
		return RNSC_ERR_NOTFOUND;
	out->has_iface = tn->has_iface;
	out->iface = tn->iface;
	out->expires = tn->expires;
	out->n_paths = tn->paths.n;
	return 0;
}

int rnsc_transport_iface_tunnel(const rnsc_transport *t, uint32_t iface, uint8_t id[RNSC_HASHLEN])
{
	const tr_iface *f = t ? rnsc_tr_iface_find(t, iface) : NULL;
	if (!f || !id)
		return RNSC_ERR_INVAL;
	if (!f->has_tunnel)
		return RNSC_ERR_NOTFOUND;
	memcpy(id, f->tunnel_id, RNSC_HASHLEN);
	return 0;
}

int rnsc_transport_tunnel_next(const rnsc_transport *t, size_t *cursor, uint8_t id[RNSC_HASHLEN],
			       rnsc_transport_tunnel *out)
{
	if (!t || !cursor)
		return 0;
	for (size_t i = *cursor; i < t->tunnels.cap; i++) {
		if (!rnsc_tmap_slot_used(&t->tunnels, i))
			continue;
		const tr_tunnel *tn = rnsc_tmap_slot_val(&t->tunnels, i);
		if (id)
			memcpy(id, rnsc_tmap_slot_key(&t->tunnels, i), RNSC_HASHLEN);
		if (out) {
			out->has_iface = tn->has_iface;
			out->iface = tn->iface;
			out->expires = tn->expires;
			out->n_paths = tn->paths.n;
		}
		*cursor = i + 1;
		return 1;
	}
	*cursor = t->tunnels.cap;
	return 0;
}

int rnsc_transport_tunnel_path_next(const rnsc_transport *t, const uint8_t id[RNSC_HASHLEN],
				    size_t *cursor, uint8_t dest_hash[HL], rnsc_transport_path *out,
				    uint8_t blobs[][RNSC_ANNOUNCE_RANDOM_LEN], const uint8_t **raw,
				    size_t *raw_len)
{
	const tr_tunnel *tn = t && id ? rnsc_tmap_get(&t->tunnels, id, NULL) : NULL;
	if (!tn || !cursor)
		return 0;
	for (size_t i = *cursor; i < tn->paths.cap; i++) {
		if (!rnsc_tmap_slot_used(&tn->paths, i))
			continue;
		const tr_path *p = rnsc_tmap_slot_val(&tn->paths, i);
		if (dest_hash)
			memcpy(dest_hash, rnsc_tmap_slot_key(&tn->paths, i), HL);
		if (out)
			*out = p->pub;
		if (blobs)
			memcpy(blobs, p->blobs, p->pub.n_random_blobs * RNSC_ANNOUNCE_RANDOM_LEN);
		if (raw)
			*raw = p->raw;
		if (raw_len)
			*raw_len = p->raw_len;
		*cursor = i + 1;
		return 1;
	}
	*cursor = tn->paths.cap;
	return 0;
}

int rnsc_transport_tunnel_import(rnsc_transport *t, const uint8_t id[RNSC_HASHLEN],
				 uint64_t expires_ms)
{
	if (!t || !id)
		return RNSC_ERR_INVAL;
	if (rnsc_tmap_has(&t->tunnels, id))
		return 0;
	tr_tunnel *tn = rnsc_calloc(t->ctx, 1, sizeof(*tn));
	if (!tn)
		return RNSC_ERR_NOMEM;
	rnsc_tmap_init(&tn->paths, t->ctx, HL);
	tn->expires = expires_ms;
	int rc = rnsc_tmap_put(&t->tunnels, id, tn, NULL);
	if (rc)
		free_tunnel(t->ctx, tn);
	return rc;
}

int rnsc_transport_tunnel_path_import(rnsc_transport *t, const uint8_t id[RNSC_HASHLEN],
				      const uint8_t dest_hash[HL], const rnsc_transport_path *p,
				      const uint8_t blobs[][RNSC_ANNOUNCE_RANDOM_LEN],
				      size_t n_blobs, const uint8_t *raw, size_t raw_len)
{
	if (!t || !id || !dest_hash || !p || !raw || (n_blobs && !blobs) ||
	    n_blobs > RNSC_MAX_RANDOM_BLOBS)
		return RNSC_ERR_INVAL;
	if (raw_len > RNSC_MTU)
		return RNSC_ERR_TOOBIG;
	tr_tunnel *tn = rnsc_tmap_get(&t->tunnels, id, NULL);
	if (!tn)
		return RNSC_ERR_NOTFOUND;
	rnsc_packet pk;
	int rc = rnsc_packet_unpack(&pk, raw, raw_len);
	if (rc)
		return rc;
	if (pk.packet_type != RNSC_PKT_ANNOUNCE || memcmp(pk.dest_hash, dest_hash, HL) != 0)
		return RNSC_ERR_MALFORMED;
	tr_path *e = rnsc_calloc(t->ctx, 1, sizeof(*e));
	if (!e)
		return RNSC_ERR_NOMEM;
	e->pub = *p;
	e->pub.n_random_blobs = n_blobs;
	if (n_blobs)
		memcpy(e->blobs, blobs, n_blobs * RNSC_ANNOUNCE_RANDOM_LEN);
	memcpy(e->raw, raw, raw_len);
	e->raw_len = raw_len;
	void *prev = NULL;
	if ((rc = rnsc_tmap_put(&tn->paths, dest_hash, e, &prev)))
		rnsc_free(t->ctx, e);
	rnsc_free(t->ctx, prev);
	return rc;
}
