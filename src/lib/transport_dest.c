/* SPDX-License-Identifier: MIT */
/*
 * Local destination settings beyond registration (Destination.py / Transport.py):
 * deregistration, default app data, proof strategies, GROUP keys; and sends to PLAIN and
 * GROUP destinations, which the reference broadcasts without a path or a receipt.
 */
#include <string.h>

#include "announce.h"
#include "destination.h"
#include "link.h"
#include "packet.h"
#include "token.h"
#include "transport_internal.h"

static tr_local *find_local(const rnsc_transport *t, const uint8_t dest_hash[HL])
{
	return t && dest_hash ? rnsc_tmap_get(&t->locals, dest_hash, NULL) : NULL;
}

void rnsc_tr_dest_free_extras(rnsc_ctx *ctx, tr_local *l)
{
	rnsc_free(ctx, l->default_app_data);
	l->default_app_data = NULL;
	rnsc_memzero(l->group_key, sizeof(l->group_key));
}

int rnsc_transport_dest_set_default_app_data(rnsc_transport *t, const uint8_t dest_hash[HL],
					     const uint8_t *data, size_t len)
{
	if (!t || !dest_hash || (!data && len))
		return RNSC_ERR_INVAL;
	tr_local *l = find_local(t, dest_hash);
	if (!l)
		return RNSC_ERR_NOTFOUND;
	uint8_t *copy = NULL;
	if (data) {
		if (rnsc_announce_data_len(1, len) > RNSC_MDU)
			return RNSC_ERR_TOOBIG;
		if (!(copy = rnsc_alloc(t->ctx, len ? len : 1)))
			return RNSC_ERR_NOMEM;
		memcpy(copy, data, len);
	}
	rnsc_free(t->ctx, l->default_app_data);
	l->default_app_data = copy;
	l->default_app_len = data ? len : 0;
	return 0;
}

int rnsc_transport_dest_set_proof_strategy(rnsc_transport *t, const uint8_t dest_hash[HL],
					   int strategy)
{
	if (!t || !dest_hash)
		return RNSC_ERR_INVAL;
	if (strategy != RNSC_PROVE_NONE && strategy != RNSC_PROVE_APP && strategy != RNSC_PROVE_ALL)
		return RNSC_ERR_INVAL;
	tr_local *l = find_local(t, dest_hash);
	if (!l)
		return RNSC_ERR_NOTFOUND;
	l->prove_all = strategy == RNSC_PROVE_ALL;
	l->prove_app = strategy == RNSC_PROVE_APP;
	return 0;
}

int rnsc_transport_dest_group_key(rnsc_transport *t, const uint8_t dest_hash[HL],
				  const uint8_t *key, size_t key_len)
{
	if (!t || !dest_hash || !key)
		return RNSC_ERR_INVAL;
	tr_local *l = find_local(t, dest_hash);
	if (!l)
		return RNSC_ERR_NOTFOUND;
	if (l->type != RNSC_DEST_GROUP)
		return RNSC_ERR_STATE;
	/* Token() takes 32 (AES-128) or 64 (AES-256) bytes; rns only makes 64 */
	rnsc_token tk;
	int rc = rnsc_token_init(&tk, t->ctx, key, key_len);
	if (rc)
		return rc;
	rnsc_token_free(&tk);
	if (key_len != sizeof(l->group_key))
		return RNSC_ERR_KEYLEN;
	memcpy(l->group_key, key, key_len);
	l->has_group_key = 1;
	return 0;
}

int rnsc_tr_group_decrypt(rnsc_transport *t, const tr_local *l, uint8_t *out, size_t cap,
			  const uint8_t *ct, size_t len)
{
	if (!l->has_group_key)
		return RNSC_ERR_NOKEY;
	rnsc_token tk;
	int rc = rnsc_token_init(&tk, t->ctx, l->group_key, sizeof(l->group_key));
	if (rc)
		return rc;
	rc = rnsc_token_decrypt(&tk, out, cap, ct, len);
	rnsc_token_free(&tk);
	return rc;
}

static int send_typed(rnsc_transport *t, const uint8_t dest_hash[HL], int type, const uint8_t *data,
		      size_t len, uint64_t now)
{
	if (len + 2 + HL + 1 > RNSC_MTU) /* Packet.pack: the raw packet must fit the MTU */
		return RNSC_ERR_TOOBIG;
	rnsc_packet p = {0};
	p.header_type = RNSC_HEADER_1;
	p.transport_type = RNSC_TRANSPORT_BROADCAST;
	p.dest_type = (uint8_t)type;
	p.packet_type = RNSC_PKT_DATA;
	memcpy(p.dest_hash, dest_hash, HL);
	p.data = data;
	p.data_len = len;
	return rnsc_tr_outbound(t, &p, NULL, now, NULL);
}

int rnsc_transport_send_plain(rnsc_transport *t, const uint8_t dest_hash[HL], const uint8_t *data,
			      size_t len, uint64_t now)
{
	if (!t || !dest_hash || (!data && len))
		return RNSC_ERR_INVAL;
	return send_typed(t, dest_hash, RNSC_DEST_PLAIN, data, len, now);
}

int rnsc_transport_send_group(rnsc_transport *t, const uint8_t dest_hash[HL], const uint8_t *key,
			      size_t key_len, const uint8_t *data, size_t len, uint64_t now)
{
	if (!t || !dest_hash || !key || (!data && len))
		return RNSC_ERR_INVAL;
	if (rnsc_token_len(len) + 2 + HL + 1 > RNSC_MTU)
		return RNSC_ERR_TOOBIG;
	rnsc_token tk;
	int rc = rnsc_token_init(&tk, t->ctx, key, key_len);
	if (rc)
		return rc;
	uint8_t ct[RNSC_MTU];
	int n = rnsc_token_encrypt(&tk, ct, sizeof(ct), data, len);
	rnsc_token_free(&tk);
	if (n < 0)
		return n;
	return send_typed(t, dest_hash, RNSC_DEST_GROUP, ct, (size_t)n, now);
}

int rnsc_transport_dest_remove(rnsc_transport *t, const uint8_t dest_hash[HL])
{
	if (!t || !dest_hash)
		return RNSC_ERR_INVAL;
	tr_local *l = rnsc_tmap_del(&t->locals, dest_hash);
	if (!l)
		return RNSC_ERR_NOTFOUND;
	rnsc_tr_ratchets_free_local(t->ctx, l);
	rnsc_tr_dest_free_extras(t->ctx, l);
	rnsc_identity_free(&l->id);
	rnsc_free_secret(t->ctx, l, sizeof(*l));
	return 0;
}

/* ---- announce handlers (Transport.announce_handlers) ---- */

struct tr_ahandler {
	uint32_t handle;
	char *filter; /* NULL: every announce */
	int path_responses;
	rnsc_announce_handler_fn fn;
	void *ud;
};

int rnsc_transport_announce_handler_add(rnsc_transport *t, const char *aspect_filter,
					int receive_path_responses, rnsc_announce_handler_fn fn,
					void *ud, uint32_t *handle)
{
	if (!t || !fn)
		return RNSC_ERR_INVAL;
	if (t->in_ahandlers)
		return RNSC_ERR_STATE;
	if (t->n_ahandlers == t->cap_ahandlers) {
		size_t ncap = t->cap_ahandlers ? 2 * t->cap_ahandlers : 4;
		struct tr_ahandler *nh = rnsc_calloc(t->ctx, ncap, sizeof(*nh));
		if (!nh)
			return RNSC_ERR_NOMEM;
		if (t->n_ahandlers)
			memcpy(nh, t->ahandlers, t->n_ahandlers * sizeof(*nh));
		rnsc_free(t->ctx, t->ahandlers);
		t->ahandlers = nh;
		t->cap_ahandlers = ncap;
	}
	struct tr_ahandler *h = &t->ahandlers[t->n_ahandlers];
	memset(h, 0, sizeof(*h));
	if (aspect_filter) {
		size_t n = strlen(aspect_filter) + 1;
		if (!(h->filter = rnsc_alloc(t->ctx, n)))
			return RNSC_ERR_NOMEM;
		memcpy(h->filter, aspect_filter, n);
	}
	h->handle = ++t->next_ahandler;
	h->path_responses = receive_path_responses != 0;
	h->fn = fn;
	h->ud = ud;
	t->n_ahandlers++;
	if (handle)
		*handle = h->handle;
	return 0;
}

int rnsc_transport_announce_handler_remove(rnsc_transport *t, uint32_t handle)
{
	if (!t)
		return RNSC_ERR_INVAL;
	if (t->in_ahandlers)
		return RNSC_ERR_STATE;
	for (size_t i = 0; i < t->n_ahandlers; i++) {
		if (t->ahandlers[i].handle != handle)
			continue;
		rnsc_free(t->ctx, t->ahandlers[i].filter);
		memmove(&t->ahandlers[i], &t->ahandlers[i + 1],
			(t->n_ahandlers - i - 1) * sizeof(t->ahandlers[0]));
		t->n_ahandlers--;
		return 0;
	}
	return RNSC_ERR_NOTFOUND;
}

void rnsc_tr_announce_handlers_free(rnsc_transport *t)
{
	for (size_t i = 0; i < t->n_ahandlers; i++)
		rnsc_free(t->ctx, t->ahandlers[i].filter);
	rnsc_free(t->ctx, t->ahandlers);
	t->ahandlers = NULL;
	t->n_ahandlers = t->cap_ahandlers = 0;
}

int rnsc_tr_announce_handlers_run(rnsc_transport *t, const rnsc_packet *p,
				  const uint8_t hash[RNSC_HASHLEN], const rnsc_announce *a)
{
	if (!t->n_ahandlers)
		return 0;
	rnsc_identity id;
	int rc = rnsc_identity_from_public(t->ctx, &id, a->public_key, RNSC_KEYSIZE);
	if (rc)
		return 0; /* validated already: cannot happen */
	int pr = p->context == RNSC_CTX_PATH_RESPONSE;
	t->in_ahandlers = 1;
	for (size_t i = 0; i < t->n_ahandlers; i++) {
		const struct tr_ahandler *h = &t->ahandlers[i];
		if (h->filter) {
			uint8_t want[HL];
			if (rnsc_destination_hash_from_name(t->ctx, want, id.hash, h->filter) ||
			    memcmp(want, p->dest_hash, HL) != 0)
				continue;
		}
		if (pr && !h->path_responses)
			continue;
		h->fn(h->ud, p->dest_hash, &id, a->app_data, a->app_data ? a->app_data_len : 0,
		      hash, pr);
	}
	t->in_ahandlers = 0;
	rnsc_identity_free(&id);
	return 0;
}
