/* SPDX-License-Identifier: MIT */
#include "link.h"

#include <string.h>

#include "crypto.h"
#include "destination.h"
#include "msgpack.h"
#include "proof.h"
#include "token.h"

#define WHO "link"
#define HL RNSC_TRUNCATED_HASHLEN

typedef struct outq {
	struct outq *next;
	size_t len;
	uint8_t data[];
} outq;

struct rnsc_link {
	rnsc_ctx *ctx;
	int status, reason, initiator, mode;
	uint8_t link_id[HL];
	uint8_t dest_hash[HL];

	/* own keys: X25519 always ephemeral; Ed25519 ephemeral for an initiator, the
	 * destination identity's for a responder (as the reference signs with owner.identity) */
	uint8_t prv[32], pub[32];
	uint8_t sig_seed[32], sig_pub[32];
	int have_peer;
	uint8_t peer_pub[32], peer_sig_pub[32];
	int have_key;
	uint8_t derived[RNSC_DERIVED_KEY_LEN];
	rnsc_token token;

	int have_dest_identity; /* initiator: whom the link goes to */
	rnsc_identity dest_identity;
	int have_remote;
	rnsc_identity remote;

	uint32_t mtu;
	size_t mdu;
	double rtt; /* seconds, < 0 until known */

	uint64_t request_time, activated_at, stale_deadline;
	int activated;
	uint64_t last_inbound, last_outbound, last_keepalive, last_proof, last_data;
	uint64_t keepalive, stale_time, establishment_timeout;
	int ka_retry; /* initiator: the last keepalive may be re-sent once if unanswered */
	uint64_t rx, rxbytes, tx, txbytes;

	int proof_strategy, channel_on;
	rnsc_link_callbacks cb;
	void *ud;

	outq *head, *tail;
	size_t nout;
};

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Rounded up: a timer derived from the reference's float seconds never fires before the
 * reference's would (at most 1 ms after it). */
static uint64_t secs_to_ms(double s)
{
	if (!(s > 0))
		return 0;
	if (s > 1e12)
		return UINT64_MAX / 2;
	double x = s * 1000.0;
	uint64_t v = (uint64_t)x;
	return (double)v < x ? v + 1 : v;
}

static rnsc_link *link_alloc(rnsc_ctx *ctx)
{
	rnsc_link *l = rnsc_calloc(ctx, 1, sizeof(*l));
	if (!l)
		return NULL;
	l->ctx = ctx;
	l->status = RNSC_LINK_PENDING;
	l->mode = RNSC_LINK_MODE_DEFAULT;
	l->mtu = RNSC_MTU;
	l->mdu = rnsc_link_mdu(RNSC_MTU);
	l->rtt = -1.0;
	l->keepalive = RNSC_LINK_KEEPALIVE_MS;
	l->stale_time = RNSC_LINK_STALE_TIME_MS;
	l->proof_strategy = RNSC_PROVE_NONE;
	return l;
}

static void wipe_keys(rnsc_link *l)
{
	rnsc_memzero(l->prv, sizeof(l->prv));
	rnsc_memzero(l->sig_seed, sizeof(l->sig_seed));
	rnsc_memzero(l->derived, sizeof(l->derived));
	if (l->have_key)
		rnsc_token_free(&l->token);
	l->have_key = 0;
}

void rnsc_link_del(rnsc_link *l)
{
	if (!l)
		return;
	wipe_keys(l);
	if (l->have_dest_identity)
		rnsc_identity_free(&l->dest_identity);
	if (l->have_remote)
		rnsc_identity_free(&l->remote);
	for (outq *q = l->head, *n; q; q = n) {
		n = q->next;
		rnsc_free(l->ctx, q);
	}
	rnsc_free_secret(l->ctx, l, sizeof(*l));
}

/* ---- outbox --------------------------------------------------------------------------- */

/* Packs p into a new outbox entry; *entry receives it (not yet queued). */
static int pack_entry(rnsc_link *l, const rnsc_packet *p, size_t mtu, outq **entry)
{
	size_t need = rnsc_packet_header_len(p->header_type) + p->data_len;
	if (need > mtu)
		return RNSC_ERR_TOOBIG;
	outq *q = rnsc_alloc(l->ctx, sizeof(*q) + need);
	if (!q)
		return RNSC_ERR_NOMEM;
	int n = rnsc_packet_pack(q->data, need, p, mtu);
	if (n < 0) {
		rnsc_free(l->ctx, q);
		return n;
	}
	q->len = (size_t)n;
	q->next = NULL;
	*entry = q;
	return n;
}

static void enqueue(rnsc_link *l, outq *q)
{
	if (l->tail)
		l->tail->next = q;
	else
		l->head = q;
	l->tail = q;
	l->nout++;
}

int rnsc_link_outbox_pop(rnsc_link *l, uint8_t *out, size_t cap)
{
	if (!l || (!out && cap))
		return RNSC_ERR_INVAL;
	outq *q = l->head;
	if (!q)
		return 0;
	if (q->len > cap)
		return RNSC_ERR_BUFSIZE;
	memcpy(out, q->data, q->len);
	int n = (int)q->len;
	l->head = q->next;
	if (!l->head)
		l->tail = NULL;
	l->nout--;
	rnsc_free(l->ctx, q);
	return n;
}

size_t rnsc_link_outbox_count(const rnsc_link *l)
{
	return l ? l->nout : 0;
}

size_t rnsc_link_outbox_peek_len(const rnsc_link *l)
{
	return l && l->head ? l->head->len : 0;
}

/* ---- sending -------------------------------------------------------------------------- */

/* Packet.send to the link as destination: encrypts when the reference does, packs at the link
 * MTU, refuses a closed link, counts tx and stamps last_outbound (Link.had_outbound). */
static int emit(rnsc_link *l, int packet_type, int context, const uint8_t *data, size_t len,
		uint8_t hash_out[RNSC_HASHLEN], int is_keepalive, uint64_t now)
{
	if (l->status == RNSC_LINK_CLOSED)
		return RNSC_ERR_STATE;
	if (!len)
		return RNSC_ERR_TRUNCATED;
	rnsc_packet p = {
		.header_type = RNSC_HEADER_1,
		.transport_type = RNSC_TRANSPORT_BROADCAST,
		.dest_type = RNSC_DEST_LINK,
		.packet_type = (uint8_t)packet_type,
		.context = (uint8_t)context,
	};
	memcpy(p.dest_hash, l->link_id, HL);
	uint8_t *ct = NULL;
	int rc;
	if (rnsc_packet_encrypts(packet_type, context, RNSC_DEST_LINK)) {
		if (!l->have_key)
			return RNSC_ERR_STATE;
		size_t cn = rnsc_token_len(len);
		if (cn > l->mtu)
			return RNSC_ERR_TOOBIG;
		ct = rnsc_alloc(l->ctx, cn);
		if (!ct)
			return RNSC_ERR_NOMEM;
		rc = rnsc_token_encrypt(&l->token, ct, cn, data, len);
		if (rc < 0) {
			rnsc_free(l->ctx, ct);
			return rc;
		}
		p.data = ct;
		p.data_len = (size_t)rc;
	} else {
		p.data = data;
		p.data_len = len;
	}
	outq *q = NULL;
	rc = pack_entry(l, &p, l->mtu, &q);
	size_t sent_len = p.data_len;
	rnsc_free(l->ctx, ct);
	if (rc < 0)
		return rc;
	if (hash_out) {
		int hr = rnsc_packet_hash(l->ctx, hash_out, q->data, q->len);
		if (hr) {
			rnsc_free(l->ctx, q);
			return hr;
		}
	}
	enqueue(l, q);
	l->tx++;
	l->txbytes += sent_len;
	l->last_outbound = now;
	if (is_keepalive)
		l->last_keepalive = now;
	else
		l->last_data = now;
	return rc;
}

/* ---- keys ----------------------------------------------------------------------------- */

/* Link.handshake: PENDING -> HANDSHAKE, X25519 with the peer, HKDF (salt link id, no info). */
static int handshake(rnsc_link *l)
{
	if (l->status != RNSC_LINK_PENDING)
		return 0;
	l->status = RNSC_LINK_HANDSHAKE;
	if (l->mode != RNSC_LINK_MODE_AES256_CBC)
		return RNSC_ERR_LINK_MODE; /* AES-128 links are not supported (token.h) */
	uint8_t shared[32];
	int rc = rnsc_x25519(l->ctx, shared, l->prv, l->peer_pub);
	if (rc == 0)
		rc = rnsc_hkdf_sha256(l->ctx, l->derived, sizeof(l->derived), shared,
				      sizeof(shared), l->link_id, HL, NULL, 0);
	rnsc_memzero(shared, sizeof(shared));
	if (rc == 0)
		rc = rnsc_token_init(&l->token, l->ctx, l->derived, sizeof(l->derived));
	if (rc == 0)
		l->have_key = 1;
	return rc;
}

static void update_keepalive(rnsc_link *l)
{
	double ka = l->rtt *
		    ((double)RNSC_LINK_KEEPALIVE_MAX_MS / 1000.0 / RNSC_LINK_KEEPALIVE_MAX_RTT);
	uint64_t ms = secs_to_ms(ka);
	l->keepalive = max_u64(min_u64(ms, RNSC_LINK_KEEPALIVE_MAX_MS), RNSC_LINK_KEEPALIVE_MIN_MS);
	l->stale_time = l->keepalive * RNSC_LINK_STALE_FACTOR;
}

/* Link.link_closed: keys gone, callback. */
static void link_closed(rnsc_link *l)
{
	wipe_keys(l);
	if (l->cb.closed)
		l->cb.closed(l->ud, l);
}

static int teardown_packet(rnsc_link *l, uint64_t now)
{
	return emit(l, RNSC_PKT_DATA, RNSC_CTX_LINKCLOSE, l->link_id, HL, NULL, 0, now);
}

/* ---- creation ------------------------------------------------------------------------- */

int rnsc_link_initiate(rnsc_ctx *ctx, rnsc_link **out, const uint8_t dest_hash[HL],
		       const rnsc_identity *dest_identity, const rnsc_link_initiate_params *p,
		       uint64_t now)
{
	if (!ctx || !out || !dest_hash || !dest_identity)
		return RNSC_ERR_INVAL;
	*out = NULL;
	rnsc_link_initiate_params def = {.hops = RNSC_PATHFINDER_M};
	if (!p)
		p = &def;
	int mode = p->mode ? p->mode : RNSC_LINK_MODE_DEFAULT;
	uint8_t sig[RNSC_LINK_MTU_SIZE];
	int rc = rnsc_link_signalling(sig, p->hw_mtu ? p->hw_mtu : RNSC_MTU, mode);
	if (rc)
		return rc;
	rnsc_link *l = link_alloc(ctx);
	if (!l)
		return RNSC_ERR_NOMEM;
	l->initiator = 1;
	l->mode = mode;
	memcpy(l->dest_hash, dest_hash, HL);
	uint8_t pubkey[RNSC_KEYSIZE];
	rnsc_identity_public_bytes(dest_identity, pubkey);
	rc = rnsc_identity_from_public(ctx, &l->dest_identity, pubkey, sizeof(pubkey));
	if (rc)
		goto fail;
	l->have_dest_identity = 1;
	uint64_t fht =
		p->first_hop_timeout_ms ? p->first_hop_timeout_ms : RNSC_LINK_PER_HOP_TIMEOUT_MS;
	l->establishment_timeout =
		sat_add(fht, (uint64_t)RNSC_LINK_PER_HOP_TIMEOUT_MS * (p->hops ? p->hops : 1));
	if ((rc = rnsc_x25519_generate(ctx, l->prv, l->pub)) ||
	    (rc = rnsc_ed25519_generate(ctx, l->sig_seed, l->sig_pub)))
		goto fail;

	uint8_t req[RNSC_LINK_REQUEST_LEN + RNSC_LINK_MTU_SIZE];
	rc = rnsc_link_request_build(req, sizeof(req), l->pub, l->sig_pub, 1,
				     p->hw_mtu ? p->hw_mtu : RNSC_MTU, mode);
	if (rc < 0)
		goto fail;
	rnsc_packet pk = {
		.header_type = RNSC_HEADER_1,
		.transport_type = RNSC_TRANSPORT_BROADCAST,
		.dest_type = RNSC_DEST_SINGLE,
		.packet_type = RNSC_PKT_LINKREQUEST,
		.context = RNSC_CTX_NONE,
		.data = req,
		.data_len = (size_t)rc,
	};
	memcpy(pk.dest_hash, dest_hash, HL);
	outq *q = NULL;
	if ((rc = pack_entry(l, &pk, RNSC_MTU, &q)) < 0)
		goto fail;
	rc = rnsc_link_id_from_request(ctx, l->link_id, q->data, q->len);
	if (rc) {
		rnsc_free(ctx, q);
		goto fail;
	}
	enqueue(l, q);
	l->request_time = now;
	l->last_outbound = l->last_data = now;
	*out = l;
	return 0;
fail:
	rnsc_link_del(l);
	return rc;
}

int rnsc_link_accept(rnsc_ctx *ctx, rnsc_link **out, const rnsc_identity *dest_identity,
		     const uint8_t *raw, size_t len, uint32_t nh_mtu, uint64_t now)
{
	if (!ctx || !out || !dest_identity || !raw)
		return RNSC_ERR_INVAL;
	*out = NULL;
	if (!dest_identity->has_private)
		return RNSC_ERR_NOKEY;
	rnsc_packet pk;
	int rc = rnsc_packet_unpack(&pk, raw, len);
	if (rc)
		return rc;
	if (pk.packet_type != RNSC_PKT_LINKREQUEST)
		return RNSC_ERR_MALFORMED;
	rnsc_link_request req;
	if ((rc = rnsc_link_request_parse(&req, pk.data, pk.data_len)))
		return rc;
	rnsc_link *l = link_alloc(ctx);
	if (!l)
		return RNSC_ERR_NOMEM;
	l->mode = req.mode;
	memcpy(l->dest_hash, pk.dest_hash, HL);
	memcpy(l->peer_pub, req.x25519_pub, 32);
	memcpy(l->peer_sig_pub, req.ed25519_pub, 32);
	l->have_peer = 1;
	if ((rc = rnsc_link_id_from_request(ctx, l->link_id, raw, len)))
		goto fail;
	if (req.has_signalling) {
		/* Transport's clamp on the receiving interface, then Link.validate_request. */
		uint32_t m = req.mtu ? req.mtu : RNSC_MTU;
		if (nh_mtu == 0)
			m = RNSC_MTU;
		else if (nh_mtu < m)
			m = nh_mtu;
		l->mtu = m;
	}
	l->mdu = rnsc_link_mdu(l->mtu);
	l->establishment_timeout =
		sat_add((uint64_t)RNSC_LINK_PER_HOP_TIMEOUT_MS * (pk.hops ? pk.hops : 1),
			RNSC_LINK_KEEPALIVE_MS);
	memcpy(l->sig_seed, dest_identity->ed_seed, 32);
	memcpy(l->sig_pub, dest_identity->ed_pub, 32);
	if ((rc = rnsc_x25519_generate(ctx, l->prv, l->pub)) || (rc = handshake(l)))
		goto fail;

	/* Link.prove */
	uint8_t proof[RNSC_LINK_PROOF_LEN + RNSC_LINK_MTU_SIZE];
	rc = rnsc_link_proof_build(proof, sizeof(proof), dest_identity, l->link_id, l->pub, 1,
				   l->mtu, l->mode);
	if (rc < 0)
		goto fail;
	if ((rc = emit(l, RNSC_PKT_PROOF, RNSC_CTX_LRPROOF, proof, (size_t)rc, NULL, 0, now)) < 0)
		goto fail;
	l->request_time = now;
	l->last_inbound = now;
	*out = l;
	return 0;
fail:
	rnsc_link_del(l);
	return rc;
}

void rnsc_link_set_callbacks(rnsc_link *l, const rnsc_link_callbacks *cb, void *ud)
{
	if (!l)
		return;
	if (cb)
		l->cb = *cb;
	else
		memset(&l->cb, 0, sizeof(l->cb));
	l->ud = ud;
}

int rnsc_link_set_proof_strategy(rnsc_link *l, int strategy)
{
	if (!l || (strategy != RNSC_PROVE_NONE && strategy != RNSC_PROVE_APP &&
		   strategy != RNSC_PROVE_ALL))
		return RNSC_ERR_INVAL;
	l->proof_strategy = strategy;
	return 0;
}

void rnsc_link_set_channel(rnsc_link *l, int on)
{
	if (l)
		l->channel_on = !!on;
}

/* ---- receiving ------------------------------------------------------------------------ */

/* Link.validate_proof at the initiator. */
static int on_lrproof(rnsc_link *l, const rnsc_packet *pk, uint64_t now)
{
	if (!l->initiator || l->status != RNSC_LINK_PENDING)
		return RNSC_ERR_STATE;
	const uint8_t *d = pk->data;
	size_t n = pk->data_len;
	if (n > RNSC_LINK_PROOF_LEN && (d[RNSC_LINK_PROOF_LEN] >> 5) != l->mode) {
		/* the reference raises here and its handler marks the link closed, no callback */
		l->status = RNSC_LINK_CLOSED;
		wipe_keys(l);
		return RNSC_ERR_LINK_MODE;
	}
	if (n != RNSC_LINK_PROOF_LEN && n != RNSC_LINK_PROOF_LEN + RNSC_LINK_MTU_SIZE)
		return RNSC_ERR_MALFORMED; /* ignored: still PENDING */
	memcpy(l->peer_pub, d + RNSC_SIGLEN, 32);
	memcpy(l->peer_sig_pub, l->dest_identity.ed_pub, 32);
	l->have_peer = 1;
	int rc = handshake(l);
	if (rc) {
		l->status = RNSC_LINK_CLOSED;
		wipe_keys(l);
		return rc;
	}
	rnsc_link_proof lp;
	rc = rnsc_link_proof_validate(l->ctx, &lp, d, n, l->link_id, l->dest_identity.ed_pub,
				      l->mode);
	if (rc)
		return rc; /* left in HANDSHAKE, as the reference does */
	l->rtt = (double)(now - min_u64(now, l->request_time)) / 1000.0;
	l->have_remote = 0;
	uint8_t pubkey[RNSC_KEYSIZE];
	rnsc_identity_public_bytes(&l->dest_identity, pubkey);
	if (rnsc_identity_from_public(l->ctx, &l->remote, pubkey, sizeof(pubkey)) == 0)
		l->have_remote = 1;
	l->mtu = lp.has_signalling && lp.mtu ? lp.mtu : RNSC_MTU;
	l->mdu = rnsc_link_mdu(l->mtu);
	l->status = RNSC_LINK_ACTIVE;
	l->activated_at = now;
	l->activated = 1;
	l->last_proof = now;
	update_keepalive(l);
	uint8_t rtt[16];
	int rn = rnsc_link_rtt_encode(rtt, sizeof(rtt), l->rtt);
	if (rn < 0)
		return rn;
	rc = emit(l, RNSC_PKT_DATA, RNSC_CTX_LRRTT, rtt, (size_t)rn, NULL, 0, now);
	if (rc < 0)
		return rc;
	if (l->cb.established)
		l->cb.established(l->ud, l);
	return 0;
}

/* The first MessagePack value as umsgpack.unpackb + max(measured, value) take it: numbers and
 * booleans count, trailing bytes are ignored, anything else is an error. */
static int rtt_value(const uint8_t *p, size_t len, double *v)
{
	rnsc_mp_reader r;
	rnsc_mp_token t;
	rnsc_mp_reader_init(&r, p, len);
	int rc = rnsc_mp_next(&r, &t);
	if (rc)
		return rc;
	switch (t.type) {
	case RNSC_MP_FLOAT64:
		*v = t.f64;
		return 0;
	case RNSC_MP_FLOAT32:
		*v = (double)t.f32;
		return 0;
	case RNSC_MP_UINT:
		*v = (double)t.u;
		return 0;
	case RNSC_MP_INT:
		*v = (double)t.i;
		return 0;
	case RNSC_MP_BOOL:
		*v = t.boolean ? 1.0 : 0.0;
		return 0;
	default:
		return RNSC_ERR_MALFORMED;
	}
}

/* Decrypts pk's data into a fresh buffer (*pt, caller frees with rnsc_free). */
static int decrypt(rnsc_link *l, const rnsc_packet *pk, uint8_t **pt)
{
	*pt = NULL;
	if (!l->have_key)
		return RNSC_ERR_STATE;
	uint8_t *b = rnsc_alloc(l->ctx, pk->data_len ? pk->data_len : 1);
	if (!b)
		return RNSC_ERR_NOMEM;
	int n = rnsc_token_decrypt(&l->token, b, pk->data_len, pk->data, pk->data_len);
	if (n < 0) {
		rnsc_free(l->ctx, b);
		return n;
	}
	*pt = b;
	return n;
}

static void deliver(rnsc_link *l, int context, const uint8_t *d, size_t n, const rnsc_packet *pk,
		    const uint8_t *raw, size_t len)
{
	if (l->cb.packet)
		l->cb.packet(l->ud, l, context, d, n, pk, raw, len);
}

/* Link.rtt_packet at the responder. */
static int on_rtt(rnsc_link *l, const rnsc_packet *pk, uint64_t now)
{
	double measured = (double)(now - min_u64(now, l->request_time)) / 1000.0;
	uint8_t *pt;
	int n = decrypt(l, pk, &pt);
	if (n < 0)
		return n;
	double v = 0;
	int rc = rtt_value(pt, (size_t)n, &v);
	rnsc_free_secret(l->ctx, pt, (size_t)n);
	if (rc) {
		rnsc_link_teardown(l, now);
		return rc;
	}
	l->rtt = v > measured ? v : measured;
	l->status = RNSC_LINK_ACTIVE;
	l->activated_at = now;
	l->activated = 1;
	update_keepalive(l);
	if (l->cb.established)
		l->cb.established(l->ud, l);
	return 0;
}

static int on_identify(rnsc_link *l, const rnsc_packet *pk)
{
	uint8_t *pt;
	int n = decrypt(l, pk, &pt);
	if (n < 0)
		return n;
	int rc = 0;
	if (l->initiator || (size_t)n != RNSC_LINK_IDENTIFY_LEN) {
		rc = l->initiator ? RNSC_ERR_STATE : RNSC_ERR_MALFORMED;
	} else {
		rnsc_identity who;
		rc = rnsc_link_identify_validate(l->ctx, &who, pt, (size_t)n, l->link_id);
		if (rc == 0 && !l->have_remote) {
			l->remote = who;
			l->have_remote = 1;
			if (l->cb.identified)
				l->cb.identified(l->ud, l, &l->remote);
		}
	}
	rnsc_free(l->ctx, pt);
	return rc;
}

static int on_close(rnsc_link *l, const rnsc_packet *pk)
{
	uint8_t *pt;
	int n = decrypt(l, pk, &pt);
	if (n < 0)
		return n;
	int rc = rnsc_link_close_check(pt, (size_t)n, l->link_id);
	rnsc_free(l->ctx, pt);
	if (rc)
		return rc;
	l->status = RNSC_LINK_CLOSED;
	l->reason = l->initiator ? RNSC_LINK_DESTINATION_CLOSED : RNSC_LINK_INITIATOR_CLOSED;
	link_closed(l);
	return 0;
}

/* Contexts whose plaintext goes to the packet callback as it is. */
static int delivered_encrypted(int context)
{
	switch (context) {
	case RNSC_CTX_REQUEST:
	case RNSC_CTX_RESPONSE:
	case RNSC_CTX_RESOURCE_ADV:
	case RNSC_CTX_RESOURCE_REQ:
	case RNSC_CTX_RESOURCE_HMU:
	case RNSC_CTX_RESOURCE_ICL:
	case RNSC_CTX_RESOURCE_RCL:
		return 1;
	default:
		return 0;
	}
}

static int on_data(rnsc_link *l, const rnsc_packet *pk, const uint8_t *raw, size_t len,
		   uint64_t now)
{
	int ctxv = pk->context;
	uint8_t *pt = NULL;
	int n, rc = 0;
	if (ctxv == RNSC_CTX_NONE) {
		if ((n = decrypt(l, pk, &pt)) < 0)
			return n;
		deliver(l, ctxv, pt, (size_t)n, pk, raw, len);
		rnsc_free(l->ctx, pt);
		int prove = l->proof_strategy == RNSC_PROVE_ALL;
		if (l->proof_strategy == RNSC_PROVE_APP && l->cb.proof_requested)
			prove = l->cb.proof_requested(l->ud, l, pk) != 0;
		if (prove && l->status != RNSC_LINK_CLOSED) {
			rc = rnsc_link_prove_packet(l, raw, len, now);
			return rc < 0 ? rc : 0;
		}
		return 0;
	}
	if (delivered_encrypted(ctxv)) {
		if ((n = decrypt(l, pk, &pt)) < 0)
			return n;
		deliver(l, ctxv, pt, (size_t)n, pk, raw, len);
		rnsc_free(l->ctx, pt);
		return 0;
	}
	switch (ctxv) {
	case RNSC_CTX_LINKIDENTIFY:
		return on_identify(l, pk);
	case RNSC_CTX_LRRTT:
		return l->initiator ? RNSC_ERR_STATE : on_rtt(l, pk, now);
	case RNSC_CTX_LINKCLOSE:
		return on_close(l, pk);
	case RNSC_CTX_KEEPALIVE:
		if (!l->initiator && pk->data_len == 1 &&
		    pk->data[0] == RNSC_LINK_KEEPALIVE_REQUEST &&
		    now >= sat_add(l->last_outbound, l->keepalive)) {
			static const uint8_t ka = RNSC_LINK_KEEPALIVE_RESPONSE;
			rc = emit(l, RNSC_PKT_DATA, RNSC_CTX_KEEPALIVE, &ka, 1, NULL, 1, now);
			return rc < 0 ? rc : 0;
		}
		return 0;
	case RNSC_CTX_RESOURCE:
		deliver(l, ctxv, pk->data, pk->data_len, pk, raw, len);
		return 0;
	case RNSC_CTX_CHANNEL:
		if (!l->channel_on)
			return RNSC_ERR_STATE;
		/* the reference proves a channel packet before it decrypts it */
		if ((rc = rnsc_link_prove_packet(l, raw, len, now)) < 0)
			return rc;
		if ((n = decrypt(l, pk, &pt)) < 0)
			return n;
		deliver(l, ctxv, pt, (size_t)n, pk, raw, len);
		rnsc_free(l->ctx, pt);
		return 0;
	default:
		return 0; /* contexts a link does not handle are ignored, as Link.receive does */
	}
}

int rnsc_link_receive(rnsc_link *l, const uint8_t *raw, size_t len, uint64_t now)
{
	if (!l || !raw)
		return RNSC_ERR_INVAL;
	if (l->status == RNSC_LINK_CLOSED)
		return RNSC_ERR_STATE;
	rnsc_packet pk;
	int rc = rnsc_packet_unpack(&pk, raw, len);
	if (rc)
		return rc;
	if (memcmp(pk.dest_hash, l->link_id, HL) != 0)
		return RNSC_ERR_NOTFOUND;
	if (pk.packet_type == RNSC_PKT_PROOF && pk.context == RNSC_CTX_LRPROOF)
		return on_lrproof(l, &pk, now);
	/* Transport hands a pending initiator nothing but its proof. */
	if (l->initiator && l->status == RNSC_LINK_PENDING)
		return RNSC_ERR_STATE;
	if (pk.packet_type != RNSC_PKT_DATA && pk.packet_type != RNSC_PKT_PROOF)
		return RNSC_ERR_MALFORMED;
	if (pk.packet_type == RNSC_PKT_PROOF && pk.context == RNSC_CTX_NONE) {
		/* a packet proof goes to the receipts (Transport), not through Link.receive: it is
		 * not inbound traffic; a valid one refreshes last_proof (rnsc_link_validate_proof) */
		deliver(l, pk.context, pk.data, pk.data_len, &pk, raw, len);
		return 0;
	}
	if (l->initiator && pk.context == RNSC_CTX_KEEPALIVE && pk.data_len == 1 &&
	    pk.data[0] == RNSC_LINK_KEEPALIVE_REQUEST)
		return 0; /* an initiator never answers keepalives, and does not count them */
	l->last_inbound = now;
	if (pk.context != RNSC_CTX_KEEPALIVE)
		l->last_data = now;
	l->rx++;
	l->rxbytes += pk.data_len;
	if (l->status == RNSC_LINK_STALE)
		l->status = RNSC_LINK_ACTIVE;
	if (pk.packet_type == RNSC_PKT_DATA)
		return on_data(l, &pk, raw, len, now);
	if (pk.context == RNSC_CTX_RESOURCE_PRF)
		deliver(l, pk.context, pk.data, pk.data_len, &pk, raw, len);
	return 0;
}

/* ---- timers --------------------------------------------------------------------------- */

static uint64_t last_in(const rnsc_link *l)
{
	return max_u64(max_u64(l->last_inbound, l->last_proof), l->activated ? l->activated_at : 0);
}

/* When the reference's initiator sends its next keepalive: once nothing came in, or nothing
 * went out, for `keepalive`, and at most one per `keepalive`. */
static uint64_t keepalive_nominal(const rnsc_link *l, uint64_t li)
{
	uint64_t quiet = sat_add(min_u64(li, l->last_outbound), l->keepalive);
	return max_u64(quiet, sat_add(l->last_keepalive, l->keepalive));
}

/* rnsc sends each keepalive this much after the nominal time: the link's RTT, at least 50 ms,
 * at most 1 s. Why: a responder answers only when it sent nothing for `keepalive`, timed from
 * after its last reply went out, so an initiator whose clock runs from that reply (or from its
 * own send, on the exact schedule) reaches it ahead of time by the responder's processing and
 * goes unanswered; two in a row make the link STALE. The nominal time is still what is
 * recorded, so the schedule, and the keepalive that goes out with STALE, stay the
 * reference's (conformance/link_xcheck_test checks both). */
static uint64_t keepalive_margin(const rnsc_link *l)
{
	uint64_t m = l->rtt > 0 ? secs_to_ms(l->rtt) : 0;
	return min_u64(max_u64(m, 50), 1000);
}

/* A keepalive with no inbound packet after it is sent once more, a quarter keepalive later
 * (well inside stale_time = 2 x keepalive): it covers a lost packet or a reply held back
 * by the rule above. It leaves the schedule as it was. */
static uint64_t keepalive_retry_due(const rnsc_link *l)
{
	return sat_add(l->last_keepalive, l->keepalive / 4);
}

int rnsc_link_tick(rnsc_link *l, uint64_t now)
{
	if (!l)
		return RNSC_ERR_INVAL;
	int rc = 0;
	switch (l->status) {
	case RNSC_LINK_PENDING:
	case RNSC_LINK_HANDSHAKE:
		if (now >= sat_add(l->request_time, l->establishment_timeout)) {
			l->status = RNSC_LINK_CLOSED;
			l->reason = RNSC_LINK_TIMEOUT;
			link_closed(l);
		}
		break;
	case RNSC_LINK_ACTIVE: {
		uint64_t li = last_in(l), nominal = keepalive_nominal(l, li);
		static const uint8_t ka = RNSC_LINK_KEEPALIVE_REQUEST;
		int going_stale = now >= sat_add(li, l->stale_time);
		if (l->initiator && (now >= sat_add(nominal, keepalive_margin(l)) ||
				     (going_stale && now >= nominal))) {
			rc = emit(l, RNSC_PKT_DATA, RNSC_CTX_KEEPALIVE, &ka, 1, NULL, 1, now);
			rc = rc > 0 ? 0 : rc;
			l->last_keepalive = nominal;
			l->ka_retry = 1;
		} else if (l->initiator && l->ka_retry && li < l->last_keepalive &&
			   now >= keepalive_retry_due(l)) {
			uint64_t lk = l->last_keepalive;
			rc = emit(l, RNSC_PKT_DATA, RNSC_CTX_KEEPALIVE, &ka, 1, NULL, 1, now);
			rc = rc > 0 ? 0 : rc;
			l->last_keepalive = lk;
			l->ka_retry = 0;
		}
		if (now >= sat_add(li, l->keepalive) ||
		    now >= sat_add(l->last_outbound, l->keepalive)) {
			if (now >= sat_add(li, l->stale_time)) {
				double g = (l->rtt > 0 ? l->rtt : 0) *
					   RNSC_LINK_KEEPALIVE_TIMEOUT_FACTOR;
				uint64_t grace = sat_add(secs_to_ms(g), RNSC_LINK_STALE_GRACE_MS);
				l->stale_deadline = sat_add(
					now, min_u64(grace, RNSC_LINK_WATCHDOG_MAX_SLEEP_MS));
				l->status = RNSC_LINK_STALE;
			}
		}
		break;
	}
	case RNSC_LINK_STALE:
		if (now >= l->stale_deadline) {
			int tr = teardown_packet(l, now);
			rc = tr < 0 ? tr : 0;
			l->status = RNSC_LINK_CLOSED;
			l->reason = RNSC_LINK_TIMEOUT;
			link_closed(l);
		}
		break;
	default:
		break;
	}
	return rc;
}

uint64_t rnsc_link_next_deadline(const rnsc_link *l)
{
	if (!l)
		return UINT64_MAX;
	switch (l->status) {
	case RNSC_LINK_PENDING:
	case RNSC_LINK_HANDSHAKE:
		return sat_add(l->request_time, l->establishment_timeout);
	case RNSC_LINK_ACTIVE: {
		uint64_t li = last_in(l);
		uint64_t t = sat_add(li, l->stale_time);
		if (l->initiator) {
			t = min_u64(t, sat_add(keepalive_nominal(l, li), keepalive_margin(l)));
			if (l->ka_retry && li < l->last_keepalive)
				t = min_u64(t, keepalive_retry_due(l));
		}
		return t;
	}
	case RNSC_LINK_STALE:
		return l->stale_deadline;
	default:
		return UINT64_MAX;
	}
}

/* ---- commands ------------------------------------------------------------------------- */

int rnsc_link_send(rnsc_link *l, int context, const uint8_t *data, size_t len,
		   uint8_t packet_hash[RNSC_HASHLEN], uint64_t now)
{
	if (!l || (!data && len) || context < 0 || context > 0xFF)
		return RNSC_ERR_INVAL;
	if (l->status != RNSC_LINK_ACTIVE && l->status != RNSC_LINK_STALE)
		return RNSC_ERR_STATE;
	return emit(l, RNSC_PKT_DATA, context, data, len, packet_hash,
		    context == RNSC_CTX_KEEPALIVE, now);
}

int rnsc_link_send_packet(rnsc_link *l, int packet_type, int context, const uint8_t *data,
			  size_t len, uint8_t packet_hash[RNSC_HASHLEN], uint64_t now)
{
	if (packet_type == RNSC_PKT_DATA)
		return rnsc_link_send(l, context, data, len, packet_hash, now);
	if (!l || (!data && len) || packet_type != RNSC_PKT_PROOF ||
	    context != RNSC_CTX_RESOURCE_PRF)
		return RNSC_ERR_INVAL;
	if (l->status != RNSC_LINK_ACTIVE && l->status != RNSC_LINK_STALE)
		return RNSC_ERR_STATE;
	return emit(l, RNSC_PKT_PROOF, context, data, len, packet_hash, 0, now);
}

int rnsc_link_encrypt(const rnsc_link *l, uint8_t *out, size_t cap, const uint8_t *pt, size_t len)
{
	if (!l || (!pt && len) || (!out && cap))
		return RNSC_ERR_INVAL;
	if (!l->have_key)
		return RNSC_ERR_STATE;
	return rnsc_token_encrypt(&l->token, out, cap, pt, len);
}

int rnsc_link_encrypt_begin(const rnsc_link *l, rnsc_token_enc *e, uint8_t out[16])
{
	if (!l || !e || !out)
		return RNSC_ERR_INVAL;
	if (!l->have_key)
		return RNSC_ERR_STATE;
	return rnsc_token_enc_begin(e, &l->token, out);
}

int rnsc_link_decrypt(const rnsc_link *l, uint8_t *out, size_t cap, const uint8_t *ct, size_t len)
{
	if (!l || (!ct && len) || (!out && cap))
		return RNSC_ERR_INVAL;
	if (!l->have_key)
		return RNSC_ERR_STATE;
	return rnsc_token_decrypt(&l->token, out, cap, ct, len);
}

int rnsc_link_identify(rnsc_link *l, const rnsc_identity *identity, uint64_t now)
{
	if (!l || !identity)
		return RNSC_ERR_INVAL;
	if (!l->initiator || l->status != RNSC_LINK_ACTIVE)
		return RNSC_ERR_STATE;
	uint8_t pt[RNSC_LINK_IDENTIFY_LEN];
	int rc = rnsc_link_identify_build(pt, sizeof(pt), identity, l->link_id);
	if (rc < 0)
		return rc;
	return emit(l, RNSC_PKT_DATA, RNSC_CTX_LINKIDENTIFY, pt, (size_t)rc, NULL, 0, now);
}

int rnsc_link_teardown(rnsc_link *l, uint64_t now)
{
	if (!l)
		return RNSC_ERR_INVAL;
	if (l->status == RNSC_LINK_CLOSED)
		return 0;
	int rc = 0;
	if (l->status != RNSC_LINK_PENDING) {
		rc = teardown_packet(l, now);
		rc = rc < 0 ? rc : 0;
	}
	l->status = RNSC_LINK_CLOSED;
	l->reason = l->initiator ? RNSC_LINK_INITIATOR_CLOSED : RNSC_LINK_DESTINATION_CLOSED;
	link_closed(l);
	return rc;
}

int rnsc_link_prove_packet(rnsc_link *l, const uint8_t *raw, size_t len, uint64_t now)
{
	if (!l || !raw)
		return RNSC_ERR_INVAL;
	rnsc_packet pk;
	int rc = rnsc_packet_unpack(&pk, raw, len);
	if (rc)
		return rc;
	uint8_t h[RNSC_HASHLEN], proof[RNSC_PROOF_EXPLICIT_LEN];
	if ((rc = rnsc_packet_hash(l->ctx, h, raw, len)))
		return rc;
	rc = rnsc_proof_build_link(l->ctx, proof, sizeof(proof), l->sig_seed, l->sig_pub, h);
	if (rc < 0)
		return rc;
	return emit(l, RNSC_PKT_PROOF, RNSC_CTX_NONE, proof, (size_t)rc, NULL, 0, now);
}

int rnsc_link_validate_proof(rnsc_link *l, const uint8_t packet_hash[RNSC_HASHLEN],
			     const uint8_t *proof, size_t len, uint64_t now)
{
	if (!l || !packet_hash || (!proof && len))
		return RNSC_ERR_INVAL;
	if (!l->have_peer)
		return RNSC_ERR_STATE;
	int rc = rnsc_proof_validate_link(l->ctx, l->peer_sig_pub, packet_hash, proof, len);
	if (rc == 0)
		l->last_proof = now;
	return rc;
}

/* ---- accessors ------------------------------------------------------------------------ */

rnsc_ctx *rnsc_link_context(const rnsc_link *l)
{
	return l ? l->ctx : NULL;
}

int rnsc_link_status(const rnsc_link *l)
{
	return l ? l->status : RNSC_ERR_INVAL;
}

int rnsc_link_reason(const rnsc_link *l)
{
	return l ? l->reason : RNSC_ERR_INVAL;
}

int rnsc_link_is_initiator(const rnsc_link *l)
{
	return l ? l->initiator : 0;
}

const uint8_t *rnsc_link_id(const rnsc_link *l)
{
	return l ? l->link_id : NULL;
}

uint32_t rnsc_link_mtu(const rnsc_link *l)
{
	return l ? l->mtu : 0;
}

size_t rnsc_link_get_mdu(const rnsc_link *l)
{
	return l ? l->mdu : 0;
}

int rnsc_link_get_mode(const rnsc_link *l)
{
	return l ? l->mode : RNSC_ERR_INVAL;
}

double rnsc_link_rtt(const rnsc_link *l)
{
	return l ? l->rtt : -1.0;
}

uint64_t rnsc_link_keepalive_ms(const rnsc_link *l)
{
	return l ? l->keepalive : 0;
}

uint64_t rnsc_link_stale_time_ms(const rnsc_link *l)
{
	return l ? l->stale_time : 0;
}

uint64_t rnsc_link_establishment_timeout_ms(const rnsc_link *l)
{
	return l ? l->establishment_timeout : 0;
}

const rnsc_identity *rnsc_link_remote_identity(const rnsc_link *l)
{
	return l && l->have_remote ? &l->remote : NULL;
}

const uint8_t *rnsc_link_derived_key(const rnsc_link *l)
{
	return l && l->have_key ? l->derived : NULL;
}

void rnsc_link_counters(const rnsc_link *l, uint64_t *rx, uint64_t *rxbytes, uint64_t *tx,
			uint64_t *txbytes)
{
	if (rx)
		*rx = l ? l->rx : 0;
	if (rxbytes)
		*rxbytes = l ? l->rxbytes : 0;
	if (tx)
		*tx = l ? l->tx : 0;
	if (txbytes)
		*txbytes = l ? l->txbytes : 0;
}

const char *rnsc_link_status_name(int status)
{
	static const char *const n[] = {"PENDING", "HANDSHAKE", "ACTIVE", "STALE", "CLOSED"};
	return status >= 0 && status < 5 ? n[status] : NULL;
}

const char *rnsc_link_reason_name(int reason)
{
	static const char *const n[] = {NULL, "TIMEOUT", "INITIATOR_CLOSED", "DESTINATION_CLOSED"};
	return reason >= 1 && reason < 4 ? n[reason] : NULL;
}
