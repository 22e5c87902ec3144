/* SPDX-License-Identifier: MIT */
#include "request.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "msgpack.h"
#include "packet.h"

#define WHO "request"
#define HL RNSC_TRUNCATED_HASHLEN

/* ---- the wire ------------------------------------------------------------------------------ */

int rnsc_request_path_hash(rnsc_ctx *ctx, uint8_t out[HL], const char *path, size_t len)
{
	if (!ctx || !out || (!path && len))
		return RNSC_ERR_INVAL;
	return rnsc_truncated_hash(ctx, out, (const uint8_t *)path, len);
}

/* 1 when p holds exactly one MessagePack value. */
static int one_value(const uint8_t *p, size_t len)
{
	rnsc_mp_reader r;
	rnsc_mp_reader_init(&r, p, len);
	return rnsc_mp_skip(&r) == 0 && rnsc_mp_reader_remaining(&r) == 0;
}

static const uint8_t NIL = 0xc0;

static int pack2(uint8_t *out, size_t cap, int with_time, double t, const uint8_t id[HL],
		 const uint8_t *v, size_t len)
{
	if (!id || (!v && len) || (!out && cap))
		return RNSC_ERR_INVAL;
	if (!v || !len) {
		v = &NIL;
		len = 1;
	} else if (!one_value(v, len)) {
		return RNSC_ERR_INVAL;
	}
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, cap ? out : NULL, cap);
	rnsc_mp_write_array(&w, with_time ? 3 : 2);
	if (with_time)
		rnsc_mp_write_double(&w, t);
	rnsc_mp_write_bin(&w, id, HL);
	rnsc_mp_write_raw(&w, v, len);
	return rnsc_mp_writer_finish(&w);
}

int rnsc_request_pack(uint8_t *out, size_t cap, double requested_at, const uint8_t path_hash[HL],
		      const uint8_t *data, size_t len)
{
	return pack2(out, cap, 1, requested_at, path_hash, data, len);
}

int rnsc_response_pack(uint8_t *out, size_t cap, const uint8_t request_id[HL],
		       const uint8_t *response, size_t len)
{
	return pack2(out, cap, 0, 0.0, request_id, response, len);
}

/* A 16-byte bin at the cursor (advanced past the value either way), else NULL. */
static int read_id(rnsc_mp_reader *r, const uint8_t **id)
{
	rnsc_mp_token t;
	int rc = rnsc_mp_peek(r, &t);
	if (rc)
		return rc;
	*id = t.type == RNSC_MP_BIN && t.len == HL ? t.p : NULL;
	return rnsc_mp_skip(r);
}

/* The array header and the value at index `at`; the rest of the array is walked so that a
 * value the reference's unpackb() would refuse is refused here too. */
static int read_array(rnsc_mp_reader *r, size_t min, size_t *n)
{
	int rc = rnsc_mp_read_array(r, n);
	if (rc)
		return rc;
	return *n < min ? RNSC_ERR_MALFORMED : 0;
}

static int skip_rest(rnsc_mp_reader *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int rc = rnsc_mp_skip(r);
		if (rc)
			return rc;
	}
	return 0;
}

int rnsc_request_unpack(const uint8_t *in, size_t len, double *requested_at,
			const uint8_t **path_hash, const uint8_t **data, size_t *data_len)
{
	if ((!in && len) || !requested_at || !path_hash || !data || !data_len)
		return RNSC_ERR_INVAL;
	rnsc_mp_reader r;
	rnsc_mp_reader_init(&r, in, len);
	size_t n;
	int rc = read_array(&r, 3, &n);
	if (rc)
		return rc;
	rnsc_mp_token t;
	if ((rc = rnsc_mp_peek(&r, &t)))
		return rc;
	double at = NAN;
	if (t.type == RNSC_MP_FLOAT64)
		at = t.f64;
	else if (t.type == RNSC_MP_FLOAT32)
		at = t.f32;
	else if (t.type == RNSC_MP_UINT)
		at = (double)t.u;
	else if (t.type == RNSC_MP_INT)
		at = (double)t.i;
	if ((rc = rnsc_mp_skip(&r)))
		return rc;
	const uint8_t *ph;
	if ((rc = read_id(&r, &ph)))
		return rc;
	size_t start = r.pos;
	if ((rc = rnsc_mp_skip(&r)))
		return rc;
	size_t end = r.pos;
	if ((rc = skip_rest(&r, n - 3)))
		return rc;
	*requested_at = at;
	*path_hash = ph;
	*data = in + start;
	*data_len = end - start;
	return 0;
}

int rnsc_response_unpack(const uint8_t *in, size_t len, const uint8_t **request_id,
			 const uint8_t **response, size_t *response_len)
{
	if ((!in && len) || !request_id || !response || !response_len)
		return RNSC_ERR_INVAL;
	rnsc_mp_reader r;
	rnsc_mp_reader_init(&r, in, len);
	size_t n;
	int rc = read_array(&r, 2, &n);
	if (rc)
		return rc;
	const uint8_t *id;
	if ((rc = read_id(&r, &id)))
		return rc;
	size_t start = r.pos;
	if ((rc = rnsc_mp_skip(&r)))
		return rc;
	size_t end = r.pos;
	if ((rc = skip_rest(&r, n - 2)))
		return rc;
	*request_id = id;
	*response = in + start;
	*response_len = end - start;
	return 0;
}

/* ---- handlers ------------------------------------------------------------------------------ */

typedef struct handler {
	uint8_t path_hash[HL];
	char *path;
	rnsc_request_handler_fn fn;
	void *ud;
	int allow, auto_compress;
	uint8_t (*allowed)[HL];
	size_t n_allowed;
} handler;

struct rnsc_request_handlers {
	rnsc_ctx *ctx;
	handler **h;
	size_t n, cap;
	size_t max_size;
};

int rnsc_request_handlers_new(rnsc_ctx *ctx, rnsc_request_handlers **out)
{
	if (!ctx || !out)
		return RNSC_ERR_INVAL;
	*out = rnsc_calloc(ctx, 1, sizeof(**out));
	if (!*out)
		return RNSC_ERR_NOMEM;
	(*out)->ctx = ctx;
	(*out)->max_size = SIZE_MAX;
	return 0;
}

static void handler_free(rnsc_ctx *ctx, handler *e)
{
	if (!e)
		return;
	rnsc_free(ctx, e->path);
	rnsc_free(ctx, e->allowed);
	rnsc_free(ctx, e);
}

void rnsc_request_handlers_del(rnsc_request_handlers *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->n; i++)
		handler_free(h->ctx, h->h[i]);
	rnsc_free(h->ctx, h->h);
	rnsc_free(h->ctx, h);
}

static handler *find_handler(const rnsc_request_handlers *h, const uint8_t ph[HL], size_t *at)
{
	for (size_t i = 0; h && ph && i < h->n; i++) {
		if (memcmp(h->h[i]->path_hash, ph, HL) == 0) {
			if (at)
				*at = i;
			return h->h[i];
		}
	}
	return NULL;
}

int rnsc_request_handlers_register(rnsc_request_handlers *h, const char *path,
				   rnsc_request_handler_fn fn, void *ud, int allow,
				   const uint8_t (*allowed)[HL], size_t n_allowed,
				   int auto_compress)
{
	if (!h || !path || !*path || !fn || (!allowed && n_allowed) ||
	    (allow != RNSC_REQUEST_ALLOW_NONE && allow != RNSC_REQUEST_ALLOW_ALL &&
	     allow != RNSC_REQUEST_ALLOW_LIST) ||
	    !rnsc_mp_utf8_valid((const uint8_t *)path, strlen(path)))
		return RNSC_ERR_INVAL;
	handler *e = rnsc_calloc(h->ctx, 1, sizeof(*e));
	if (!e)
		return RNSC_ERR_NOMEM;
	size_t pl = strlen(path);
	e->path = rnsc_alloc(h->ctx, pl + 1);
	if (n_allowed)
		e->allowed = rnsc_alloc(h->ctx, n_allowed * HL);
	if (!e->path || (n_allowed && !e->allowed)) {
		handler_free(h->ctx, e);
		return RNSC_ERR_NOMEM;
	}
	memcpy(e->path, path, pl + 1);
	if (n_allowed)
		memcpy(e->allowed, allowed, n_allowed * HL);
	e->n_allowed = n_allowed;
	e->fn = fn;
	e->ud = ud;
	e->allow = allow;
	e->auto_compress = auto_compress;
	int rc = rnsc_request_path_hash(h->ctx, e->path_hash, path, pl);
	if (rc) {
		handler_free(h->ctx, e);
		return rc;
	}
	size_t at;
	handler *old = find_handler(h, e->path_hash, &at);
	if (old) { /* a dict assignment: the new handler replaces the old one */
		handler_free(h->ctx, old);
		h->h[at] = e;
		return 0;
	}
	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 4;
		handler **nh = rnsc_alloc(h->ctx, cap * sizeof(*nh));
		if (!nh) {
			handler_free(h->ctx, e);
			return RNSC_ERR_NOMEM;
		}
		if (h->n)
			memcpy(nh, h->h, h->n * sizeof(*nh));
		rnsc_free(h->ctx, h->h);
		h->h = nh;
		h->cap = cap;
	}
	h->h[h->n++] = e;
	return 0;
}

int rnsc_request_handlers_deregister(rnsc_request_handlers *h, const char *path)
{
	if (!h || !path)
		return RNSC_ERR_INVAL;
	uint8_t ph[HL];
	int rc = rnsc_request_path_hash(h->ctx, ph, path, strlen(path));
	if (rc)
		return rc;
	size_t at;
	handler *e = find_handler(h, ph, &at);
	if (!e)
		return RNSC_ERR_NOTFOUND;
	handler_free(h->ctx, e);
	memmove(&h->h[at], &h->h[at + 1], (h->n - at - 1) * sizeof(*h->h));
	h->n--;
	return 0;
}

void rnsc_request_handlers_set_max_size(rnsc_request_handlers *h, size_t max)
{
	if (h)
		h->max_size = max;
}

size_t rnsc_request_handlers_count(const rnsc_request_handlers *h)
{
	return h ? h->n : 0;
}

/* ---- a link's requests ------------------------------------------------------------------------ */

typedef struct pending {
	rnsc_request_receipt r;
	rnsc_request_params p;
	int timing;        /* the timeout runs (SENT as a packet, or DELIVERED as a resource) */
	uint64_t timer_at; /* when it started */
} pending;

struct rnsc_request_link {
	rnsc_ctx *ctx;
	rnsc_linkport port;
	rnsc_request_handlers *handlers;
	rnsc_request_resource_ops res;
	pending **q;
	size_t n, cap;
};

int rnsc_request_link_new(rnsc_request_link **out, rnsc_ctx *ctx, const rnsc_linkport *port,
			  rnsc_request_handlers *handlers)
{
	if (!out || !ctx || !port || !port->send || !port->get)
		return RNSC_ERR_INVAL;
	*out = rnsc_calloc(ctx, 1, sizeof(**out));
	if (!*out)
		return RNSC_ERR_NOMEM;
	(*out)->ctx = ctx;
	(*out)->port = *port;
	(*out)->handlers = handlers;
	return 0;
}

void rnsc_request_link_del(rnsc_request_link *rl)
{
	if (!rl)
		return;
	for (size_t i = 0; i < rl->n; i++)
		rnsc_free(rl->ctx, rl->q[i]);
	rnsc_free(rl->ctx, rl->q);
	rnsc_free(rl->ctx, rl);
}

void rnsc_request_link_set_resource_ops(rnsc_request_link *rl, const rnsc_request_resource_ops *ops)
{
	if (!rl)
		return;
	if (ops)
		rl->res = *ops;
	else
		memset(&rl->res, 0, sizeof(rl->res));
}

static int q_add(rnsc_request_link *rl, pending *e)
{
	if (rl->n == rl->cap) {
		size_t cap = rl->cap ? 2 * rl->cap : 8;
		pending **nq = rnsc_alloc(rl->ctx, cap * sizeof(*nq));
		if (!nq)
			return RNSC_ERR_NOMEM;
		if (rl->n)
			memcpy(nq, rl->q, rl->n * sizeof(*nq));
		rnsc_free(rl->ctx, rl->q);
		rl->q = nq;
		rl->cap = cap;
	}
	rl->q[rl->n++] = e;
	return 0;
}

static pending *q_find(const rnsc_request_link *rl, const uint8_t id[HL], size_t *at)
{
	for (size_t i = 0; id && i < rl->n; i++) {
		if (memcmp(rl->q[i]->r.request_id, id, HL) == 0) {
			if (at)
				*at = i;
			return rl->q[i];
		}
	}
	return NULL;
}

/* Takes the receipt out of the pending list (callbacks may then send new requests). */
static void q_take(rnsc_request_link *rl, size_t at)
{
	memmove(&rl->q[at], &rl->q[at + 1], (rl->n - at - 1) * sizeof(*rl->q));
	rl->n--;
}

static void fail(rnsc_request_link *rl, size_t at, uint64_t now)
{
	pending *e = rl->q[at];
	q_take(rl, at);
	e->r.status = RNSC_REQUEST_FAILED;
	e->r.concluded_at = now;
	if (e->p.failed)
		e->p.failed(e->p.ud, &e->r);
	rnsc_free(rl->ctx, e);
}

int rnsc_request_link_send(rnsc_request_link *rl, const char *path, const uint8_t *data, size_t len,
			   const rnsc_request_params *p, uint8_t request_id[HL], uint64_t now)
{
	if (!rl || !path || (!data && len))
		return RNSC_ERR_INVAL;
	if (rnsc_linkport_status(&rl->port) != RNSC_LINK_ACTIVE)
		return RNSC_ERR_STATE;
	rnsc_request_params prm = {0};
	if (p)
		prm = *p;
	uint8_t ph[HL];
	int rc = rnsc_request_path_hash(rl->ctx, ph, path, strlen(path));
	if (rc)
		return rc;
	double at = prm.requested_at != 0 ? prm.requested_at : (double)now / 1000.0;
	int need = rnsc_request_pack(NULL, 0, at, ph, data, len);
	if (need < 0)
		return need;
	uint64_t timeout = prm.timeout_ms;
	if (!timeout)
		timeout = (uint64_t)(rnsc_linkport_rtt(&rl->port) * RNSC_REQUEST_TIMEOUT_FACTOR *
				     1000.0) +
			  RNSC_REQUEST_RESPONSE_MAX_GRACE_MS * 9 / 8;
	pending *e = rnsc_calloc(rl->ctx, 1, sizeof(*e));
	uint8_t *packed = rnsc_alloc(rl->ctx, (size_t)need);
	if (!e || !packed) {
		rnsc_free(rl->ctx, e);
		rnsc_free(rl->ctx, packed);
		return RNSC_ERR_NOMEM;
	}
	(void)rnsc_request_pack(packed, (size_t)need, at, ph, data, len);
	if ((size_t)need <= rnsc_linkport_mdu(&rl->port)) {
		uint8_t hash[RNSC_HASHLEN];
		rc = rl->port.send(&rl->port, RNSC_CTX_REQUEST, packed, (size_t)need, hash, now);
		if (rc >= 0) {
			memcpy(e->r.request_id, hash, HL);
			e->timing = 1;
			e->timer_at = now;
			rc = 0;
		}
	} else if (rl->res.send) {
		e->r.as_resource = 1;
		rc = rnsc_truncated_hash(rl->ctx, e->r.request_id, packed, (size_t)need);
		if (rc == 0)
			rc = rl->res.send(rl->res.ud, e->r.request_id, 0, packed, (size_t)need, 1,
					  timeout, now);
	} else {
		rc = RNSC_ERR_TOOBIG;
	}
	rnsc_free(rl->ctx, packed);
	if (rc == 0) {
		e->p = prm;
		e->r.status = RNSC_REQUEST_SENT;
		e->r.request_size = (size_t)need;
		e->r.sent_at = now;
		e->r.timeout_ms = timeout;
		e->r.max_response_size = prm.max_response_size;
		e->r.ud = prm.ud;
		rc = q_add(rl, e);
	}
	if (rc) {
		rnsc_free(rl->ctx, e);
		return rc;
	}
	if (request_id)
		memcpy(request_id, e->r.request_id, HL);
	return 0;
}

static int allowed(const handler *h, const rnsc_identity *who)
{
	if (h->allow == RNSC_REQUEST_ALLOW_ALL)
		return 1;
	if (h->allow != RNSC_REQUEST_ALLOW_LIST || !who)
		return 0;
	for (size_t i = 0; i < h->n_allowed; i++)
		if (memcmp(h->allowed[i], who->hash, HL) == 0)
			return 1;
	return 0;
}

/* Link.handle_request */
static int handle_request(rnsc_request_link *rl, const uint8_t id[HL], const uint8_t *packed,
			  size_t len, uint64_t now)
{
	if (rnsc_linkport_status(&rl->port) != RNSC_LINK_ACTIVE)
		return RNSC_ERR_STATE;
	if (!rl->handlers)
		return RNSC_ERR_NOTFOUND;
	if (len > rl->handlers->max_size)
		return RNSC_ERR_TOOBIG;
	rnsc_request_info info = {0};
	const uint8_t *ph;
	int rc = rnsc_request_unpack(packed, len, &info.requested_at, &ph, &info.data,
				     &info.data_len);
	if (rc)
		return rc;
	handler *h = find_handler(rl->handlers, ph, NULL);
	if (!h)
		return RNSC_ERR_NOTFOUND;
	info.remote_identity = rnsc_linkport_remote_identity(&rl->port);
	if (!allowed(h, info.remote_identity)) {
		rnsc_log(rl->ctx, RNSC_LOG_DEBUG, WHO, "request for %s not allowed", h->path);
		return RNSC_ERR_PERM;
	}
	info.path = h->path;
	info.request_id = id;
	info.link_id = rnsc_linkport_id(&rl->port);
	int auto_compress = h->auto_compress;
	const uint8_t *resp = NULL;
	size_t resp_len = 0;
	rc = h->fn(h->ud, &info, &resp, &resp_len);
	if (rc <= 0) {
		if (rc < 0)
			rnsc_log(rl->ctx, RNSC_LOG_ERROR, WHO, "request handler failed: %s",
				 rnsc_strerror(rc));
		return rc < 0 ? rc : 0;
	}
	int need = rnsc_response_pack(NULL, 0, id, resp, resp_len);
	if (need < 0)
		return need;
	uint8_t *out = rnsc_alloc(rl->ctx, (size_t)need);
	if (!out)
		return RNSC_ERR_NOMEM;
	(void)rnsc_response_pack(out, (size_t)need, id, resp, resp_len);
	if ((size_t)need <= rnsc_linkport_mdu(&rl->port)) {
		rc = rl->port.send(&rl->port, RNSC_CTX_RESPONSE, out, (size_t)need, NULL, now);
	} else if (rl->res.send) {
		rc = rl->res.send(rl->res.ud, id, 1, out, (size_t)need, auto_compress, 0, now);
	} else {
		rc = RNSC_ERR_TOOBIG;
		rnsc_log(rl->ctx, RNSC_LOG_WARNING, WHO,
			 "response of %d bytes exceeds the link MDU and no resource layer is set",
			 need);
	}
	rnsc_free(rl->ctx, out);
	return rc < 0 ? rc : 0;
}

/* RequestReceipt.response_received */
static void received(rnsc_request_link *rl, size_t at, const uint8_t *resp, size_t len,
		     uint64_t now)
{
	pending *e = rl->q[at];
	q_take(rl, at);
	e->r.progress = 1.0;
	e->r.status = RNSC_REQUEST_READY;
	e->r.concluded_at = now;
	e->r.response = resp;
	e->r.response_len = len;
	if (e->p.progress)
		e->p.progress(e->p.ud, &e->r);
	if (e->p.response)
		e->p.response(e->p.ud, &e->r);
	rnsc_free(rl->ctx, e);
}

/* Link.handle_response; sizes: update them and check max_response_size (a RESPONSE packet)
 * or leave them (a response resource). */
static int handle_response(rnsc_request_link *rl, const uint8_t *packed, size_t len, int packet,
			   uint64_t now)
{
	if (rnsc_linkport_status(&rl->port) != RNSC_LINK_ACTIVE)
		return RNSC_ERR_STATE;
	const uint8_t *id, *resp;
	size_t rlen;
	int rc = rnsc_response_unpack(packed, len, &id, &resp, &rlen);
	if (rc)
		return rc;
	size_t at;
	pending *e = q_find(rl, id, &at);
	if (!e)
		return RNSC_ERR_NOTFOUND;
	if (packet) {
		/* the reference's len(umsgpack.packb(response_data)) - 2 */
		long long size = (long long)rlen - 2;
		e->r.response_size = size > 0 ? (size_t)size : 0;
		e->r.response_transfer_size += e->r.response_size;
		if (e->r.max_response_size && size > (long long)e->r.max_response_size) {
			rnsc_log(rl->ctx, RNSC_LOG_DEBUG, WHO, "rejected response of %lld bytes",
				 size);
			fail(rl, at, now);
			return RNSC_ERR_TOOBIG;
		}
	}
	if (e->r.status == RNSC_REQUEST_FAILED)
		return 0;
	received(rl, at, resp, rlen, now);
	return 0;
}

int rnsc_request_link_packet(rnsc_request_link *rl, int context, const uint8_t *data, size_t len,
			     const uint8_t packet_hash[RNSC_HASHLEN], uint64_t now)
{
	if (!rl || (!data && len))
		return RNSC_ERR_INVAL;
	if (context == RNSC_CTX_REQUEST) {
		if (!packet_hash)
			return RNSC_ERR_INVAL;
		return handle_request(rl, packet_hash, data, len, now);
	}
	if (context == RNSC_CTX_RESPONSE)
		return handle_response(rl, data, len, 1, now);
	return RNSC_ERR_INVAL;
}

static uint64_t deadline(const pending *e)
{
	if (!e->timing)
		return UINT64_MAX;
	/* PacketReceipt.is_timed_out: sent_at + timeout < now */
	return e->timer_at + e->r.timeout_ms + 1;
}

int rnsc_request_link_tick(rnsc_request_link *rl, uint64_t now)
{
	if (!rl)
		return RNSC_ERR_INVAL;
	int failed = 0;
	for (size_t i = 0; i < rl->n;) {
		if (deadline(rl->q[i]) <= now) {
			fail(rl, i, now); /* callbacks may add requests: they land at the end */
			failed++;
		} else {
			i++;
		}
	}
	return failed;
}

uint64_t rnsc_request_link_next_deadline(const rnsc_request_link *rl)
{
	uint64_t d = UINT64_MAX;
	for (size_t i = 0; rl && i < rl->n; i++) {
		uint64_t x = deadline(rl->q[i]);
		d = x < d ? x : d;
	}
	return d;
}

size_t rnsc_request_link_pending(const rnsc_request_link *rl)
{
	return rl ? rl->n : 0;
}

const rnsc_request_receipt *rnsc_request_link_receipt(const rnsc_request_link *rl,
						      const uint8_t request_id[HL])
{
	const pending *e = rl ? q_find(rl, request_id, NULL) : NULL;
	return e ? &e->r : NULL;
}

int rnsc_request_link_request_resource_sent(rnsc_request_link *rl, const uint8_t request_id[HL],
					    int ok, uint64_t now)
{
	if (!rl || !request_id)
		return RNSC_ERR_INVAL;
	size_t at;
	pending *e = q_find(rl, request_id, &at);
	if (!e)
		return RNSC_ERR_NOTFOUND;
	if (!ok) {
		fail(rl, at, now);
		return 0;
	}
	e->r.status = RNSC_REQUEST_DELIVERED;
	e->timing = 1;
	e->timer_at = now;
	return 0;
}

int rnsc_request_link_request_resource_received(rnsc_request_link *rl, const uint8_t *packed,
						size_t len, uint64_t now)
{
	if (!rl || (!packed && len))
		return RNSC_ERR_INVAL;
	uint8_t id[HL];
	int rc = rnsc_truncated_hash(rl->ctx, id, packed, len);
	if (rc)
		return rc;
	return handle_request(rl, id, packed, len, now);
}

int rnsc_request_link_response_advertised(rnsc_request_link *rl, const uint8_t request_id[HL],
					  size_t size, size_t transfer_size, uint64_t now)
{
	if (!rl || !request_id)
		return RNSC_ERR_INVAL;
	size_t at;
	pending *e = q_find(rl, request_id, &at);
	if (!e)
		return RNSC_ERR_NOTFOUND;
	if (e->r.max_response_size && size > e->r.max_response_size) {
		fail(rl, at, now);
		return RNSC_ERR_TOOBIG;
	}
	if (!e->r.response_size)
		e->r.response_size = size;
	e->r.response_transfer_size += transfer_size;
	return rnsc_request_link_response_progress(rl, request_id, 0.0, now);
}

int rnsc_request_link_response_progress(rnsc_request_link *rl, const uint8_t request_id[HL],
					double progress, uint64_t now)
{
	(void)now;
	if (!rl || !request_id)
		return RNSC_ERR_INVAL;
	pending *e = q_find(rl, request_id, NULL);
	if (!e)
		return RNSC_ERR_NOTFOUND;
	e->r.status = RNSC_REQUEST_RECEIVING;
	e->timing = 0; /* the packet receipt counts as delivered: the resource times out now */
	e->r.progress = progress;
	if (e->p.progress)
		e->p.progress(e->p.ud, &e->r);
	return 0;
}

int rnsc_request_link_response_resource_received(rnsc_request_link *rl, const uint8_t *packed,
						 size_t len, uint64_t now)
{
	if (!rl || (!packed && len))
		return RNSC_ERR_INVAL;
	return handle_response(rl, packed, len, 0, now);
}

int rnsc_request_link_response_resource_failed(rnsc_request_link *rl, const uint8_t request_id[HL],
					       uint64_t now)
{
	if (!rl || !request_id)
		return RNSC_ERR_INVAL;
	size_t at;
	if (!q_find(rl, request_id, &at))
		return RNSC_ERR_NOTFOUND;
	fail(rl, at, now);
	return 0;
}

const char *rnsc_request_status_name(int status)
{
	switch (status) {
	case RNSC_REQUEST_FAILED:
		return "FAILED";
	case RNSC_REQUEST_SENT:
		return "SENT";
	case RNSC_REQUEST_DELIVERED:
		return "DELIVERED";
	case RNSC_REQUEST_RECEIVING:
		return "RECEIVING";
	case RNSC_REQUEST_READY:
		return "READY";
	default:
		return NULL;
	}
}
