/* SPDX-License-Identifier: MIT */
/* Requests on a node's links wired to resources (see linkapp_request.h). */
#include "linkapp_request.h"

#include <string.h>

#include "linkport.h"
#include "packet.h"
#include "resource_adv.h"

#define HL RNSC_TRUNCATED_HASHLEN
#define WHO "linkreq"

enum { X_OUT_REQUEST, X_OUT_RESPONSE, X_IN_REQUEST, X_IN_RESPONSE };

typedef struct lr_link {
	rnsc_linkreq *lr;
	uint8_t id[HL];
	rnsc_request_link *rl;
	int has_handlers;
	struct lr_link *next;
} lr_link;

/* One request or response resource: the bytes it sends (outgoing) or assembles (incoming). */
typedef struct lr_xfer {
	rnsc_linkreq *lr;
	uint8_t link_id[HL];
	uint8_t req_id[HL];
	int kind;
	uint8_t *buf;
	size_t len, cap;
	int has_metadata;
	struct lr_xfer *next;
} lr_xfer;

struct rnsc_linkreq {
	rnsc_ctx *ctx;
	rnsc_node *n;
	rnsc_linkapp *la;
	lr_link *links;
	lr_xfer *xfers;
};

static lr_link *find(const rnsc_linkreq *lr, const uint8_t id[HL])
{
	for (lr_link *l = lr->links; l; l = l->next)
		if (memcmp(l->id, id, HL) == 0)
			return l;
	return NULL;
}

static lr_xfer *xfer_new(rnsc_linkreq *lr, const uint8_t link_id[HL], const uint8_t req_id[HL],
			 int kind, size_t cap)
{
	lr_xfer *x = rnsc_calloc(lr->ctx, 1, sizeof(*x));
	if (!x)
		return NULL;
	if (cap && !(x->buf = rnsc_alloc(lr->ctx, cap))) {
		rnsc_free(lr->ctx, x);
		return NULL;
	}
	x->lr = lr;
	x->cap = cap;
	x->kind = kind;
	memcpy(x->link_id, link_id, HL);
	if (req_id)
		memcpy(x->req_id, req_id, HL);
	x->next = lr->xfers;
	lr->xfers = x;
	return x;
}

static void xfer_free(lr_xfer *x)
{
	rnsc_linkreq *lr = x->lr;
	for (lr_xfer **pp = &lr->xfers; *pp; pp = &(*pp)->next)
		if (*pp == x) {
			*pp = x->next;
			break;
		}
	rnsc_free(lr->ctx, x->buf);
	rnsc_free(lr->ctx, x);
}

/* ---- resource callbacks --------------------------------------------------------------------- */

static int x_read(void *ud, uint64_t off, uint8_t *buf, size_t len)
{
	lr_xfer *x = ud;
	if (off > x->len || len > x->len - off)
		return RNSC_ERR_INVAL;
	memcpy(buf, x->buf + off, len);
	return (int)len;
}

static int x_write(void *ud, const uint8_t *p, size_t len)
{
	lr_xfer *x = ud;
	if (len > x->cap - x->len)
		return RNSC_ERR_TOOBIG; /* more than advertised */
	memcpy(x->buf + x->len, p, len);
	x->len += len;
	return 0;
}

static void x_metadata(void *ud, rnsc_resource *r, const uint8_t *p, size_t len)
{
	(void)r, (void)p, (void)len;
	((lr_xfer *)ud)->has_metadata = 1;
}

static void x_progress(void *ud, rnsc_resource *r)
{
	lr_xfer *x = ud;
	lr_link *l = find(x->lr, x->link_id);
	if (l && x->kind == X_IN_RESPONSE)
		(void)rnsc_request_link_response_progress(
			l->rl, x->req_id, rnsc_resource_progress(r), rnsc_node_now_ms());
}

static void x_concluded(void *ud, rnsc_resource *r)
{
	lr_xfer *x = ud;
	lr_link *l = find(x->lr, x->link_id);
	int ok = rnsc_resource_status(r) == RNSC_RESOURCE_COMPLETE;
	uint64_t now = rnsc_node_now_ms();
	int rc = 0;
	if (l) {
		switch (x->kind) {
		case X_OUT_REQUEST:
			rc = rnsc_request_link_request_resource_sent(l->rl, x->req_id, ok, now);
			break;
		case X_IN_REQUEST:
			if (ok)
				rc = rnsc_request_link_request_resource_received(l->rl, x->buf,
										 x->len, now);
			break;
		case X_IN_RESPONSE:
			if (ok && x->has_metadata)
				rnsc_log(
					x->lr->ctx, RNSC_LOG_WARNING, WHO,
					"a response resource with metadata (a file response) is not "
					"supported; the request fails");
			if (ok && !x->has_metadata)
				rc = rnsc_request_link_response_resource_received(l->rl, x->buf,
										  x->len, now);
			else
				rc = rnsc_request_link_response_resource_failed(l->rl, x->req_id,
										now);
			break;
		default: /* a response sent: nothing follows (the reference has no callback) */
			break;
		}
	}
	if (rc && rc != RNSC_ERR_NOTFOUND)
		rnsc_log(x->lr->ctx, RNSC_LOG_DEBUG, WHO, "request resource concluded: %s",
			 rnsc_strerror(rc));
	xfer_free(x);
}

static const rnsc_resource_callbacks x_cb = {.read = x_read,
					     .write = x_write,
					     .metadata = x_metadata,
					     .progress = x_progress,
					     .concluded = x_concluded};

/* ---- outgoing: the request manager's resource ops ------------------------------------------- */

static int op_send(void *ud, const uint8_t request_id[HL], int is_response, const uint8_t *packed,
		   size_t len, int auto_compress, uint64_t timeout_ms, uint64_t now)
{
	(void)now;
	lr_link *l = ud;
	rnsc_linkreq *lr = l->lr;
	if (!len || len > RNSC_LINKREQ_MAX_SIZE)
		return len ? RNSC_ERR_TOOBIG : RNSC_ERR_INVAL;
	lr_xfer *x =
		xfer_new(lr, l->id, request_id, is_response ? X_OUT_RESPONSE : X_OUT_REQUEST, len);
	if (!x)
		return RNSC_ERR_NOMEM;
	memcpy(x->buf, packed, len);
	x->len = len;
	rnsc_resource_params p = {.size = len,
				  .auto_compress = auto_compress,
				  .request_id = request_id,
				  .request_id_len = HL,
				  .is_response = is_response,
				  .timeout_ms = timeout_ms};
	int rc = rnsc_linkapp_send_resource(lr->la, l->id, &x_cb, x, &p, NULL);
	if (rc)
		xfer_free(x); /* nothing started: no concluded callback will come */
	return rc;
}

/* ---- incoming: the request slot ------------------------------------------------------------ */

static void on_adv(rnsc_linkreq *lr, lr_link *l, const uint8_t *d, size_t len)
{
	rnsc_resource_adv a;
	if (rnsc_resource_adv_unpack(&a, d, len) || !a.has_q || a.q_len != HL)
		return;
	uint64_t now = rnsc_node_now_ms();
	int response = rnsc_resource_adv_is_response(&a);
	if (!response) {
		/* Link.receive: a request resource is taken only when the destination has
		 * request handlers */
		if (!l->has_handlers)
			return;
		if (a.d > RNSC_LINKREQ_MAX_SIZE) {
			(void)rnsc_linkapp_reject_resource(lr->la, l->id, d, len);
			return;
		}
	} else {
		int rc = a.d > RNSC_LINKREQ_MAX_SIZE
				 ? RNSC_ERR_TOOBIG
				 : rnsc_request_link_response_advertised(l->rl, a.q, (size_t)a.d,
									 (size_t)a.t, now);
		if (rc == RNSC_ERR_NOTFOUND)
			return; /* no pending request has the id: the reference ignores it */
		if (rc) {
			if (a.d > RNSC_LINKREQ_MAX_SIZE)
				(void)rnsc_request_link_response_resource_failed(l->rl, a.q, now);
			(void)rnsc_linkapp_reject_resource(lr->la, l->id, d, len);
			return;
		}
	}
	lr_xfer *x = xfer_new(lr, l->id, a.q, response ? X_IN_RESPONSE : X_IN_REQUEST, (size_t)a.d);
	int rc = x ? rnsc_linkapp_accept_resource(lr->la, l->id, d, len, &x_cb, x, NULL)
		   : RNSC_ERR_NOMEM;
	if (rc) {
		rnsc_log(lr->ctx, RNSC_LOG_DEBUG, WHO, "request resource not accepted: %s",
			 rnsc_strerror(rc));
		if (x)
			xfer_free(x);
		if (response)
			(void)rnsc_request_link_response_resource_failed(l->rl, a.q, now);
	}
}

void rnsc_linkreq_packet(void *ud, const uint8_t link_id[HL], int packet_type, int context,
			 const uint8_t *data, size_t len, const uint8_t packet_hash[RNSC_HASHLEN])
{
	(void)packet_type;
	rnsc_linkreq *lr = ud;
	lr_link *l = lr && link_id ? find(lr, link_id) : NULL;
	if (!l)
		return; /* not attached: dropped, as a link without requests drops them */
	if (context == RNSC_CTX_RESOURCE_ADV) {
		on_adv(lr, l, data, len);
		return;
	}
	int rc = rnsc_request_link_packet(l->rl, context, data, len, packet_hash,
					  rnsc_node_now_ms());
	if (rc)
		rnsc_log(lr->ctx, RNSC_LOG_DEBUG, WHO, "request packet: %s", rnsc_strerror(rc));
	rnsc_node_flush(lr->n);
}

/* ---- API ----------------------------------------------------------------------------------- */

int rnsc_linkreq_new(rnsc_ctx *ctx, rnsc_node *n, rnsc_linkapp *la, rnsc_linkreq **out)
{
	if (!ctx || !n || !la || !out)
		return RNSC_ERR_INVAL;
	rnsc_linkreq *lr = rnsc_calloc(ctx, 1, sizeof(*lr));
	if (!lr)
		return RNSC_ERR_NOMEM;
	lr->ctx = ctx;
	lr->n = n;
	lr->la = la;
	rnsc_linkapp_set_request_slot(la, rnsc_linkreq_packet, lr);
	*out = lr;
	return 0;
}

void rnsc_linkreq_del(rnsc_linkreq *lr)
{
	if (!lr)
		return;
	while (lr->links) {
		lr_link *l = lr->links;
		lr->links = l->next;
		rnsc_request_link_del(l->rl);
		rnsc_free(lr->ctx, l);
	}
	while (lr->xfers)
		xfer_free(lr->xfers);
	rnsc_free(lr->ctx, lr);
}

int rnsc_linkreq_attach(rnsc_linkreq *lr, const uint8_t link_id[HL],
			rnsc_request_handlers *handlers, rnsc_request_link **out)
{
	if (!lr || !link_id)
		return RNSC_ERR_INVAL;
	lr_link *l = find(lr, link_id);
	if (!l) {
		rnsc_transport *t = rnsc_node_transport(lr->n);
		if (!rnsc_transport_link_get(t, link_id))
			return RNSC_ERR_NOTFOUND;
		l = rnsc_calloc(lr->ctx, 1, sizeof(*l));
		if (!l)
			return RNSC_ERR_NOMEM;
		rnsc_linkport port;
		rnsc_linkport_on_transport(&port, t, link_id);
		int rc = rnsc_request_link_new(&l->rl, lr->ctx, &port, handlers);
		if (rc) {
			rnsc_free(lr->ctx, l);
			return rc;
		}
		l->lr = lr;
		memcpy(l->id, link_id, HL);
		l->has_handlers = handlers != NULL;
		rnsc_request_resource_ops ops = {.send = op_send, .ud = l};
		rnsc_request_link_set_resource_ops(l->rl, &ops);
		l->next = lr->links;
		lr->links = l;
	}
	if (out)
		*out = l->rl;
	return 0;
}

rnsc_request_link *rnsc_linkreq_get(const rnsc_linkreq *lr, const uint8_t link_id[HL])
{
	lr_link *l = lr && link_id ? find(lr, link_id) : NULL;
	return l ? l->rl : NULL;
}

void rnsc_linkreq_detach(rnsc_linkreq *lr, const uint8_t link_id[HL])
{
	if (!lr || !link_id)
		return;
	for (lr_link **pp = &lr->links; *pp; pp = &(*pp)->next)
		if (memcmp((*pp)->id, link_id, HL) == 0) {
			lr_link *l = *pp;
			*pp = l->next;
			rnsc_request_link_del(l->rl);
			rnsc_free(lr->ctx, l);
			return;
		}
}

int rnsc_linkreq_tick(rnsc_linkreq *lr, uint64_t now)
{
	int n = 0;
	for (lr_link *l = lr ? lr->links : NULL; l; l = l->next)
		n += rnsc_request_link_tick(l->rl, now);
	if (n)
		rnsc_node_flush(lr->n);
	return n;
}

size_t rnsc_linkreq_transfers(const rnsc_linkreq *lr)
{
	size_t n = 0;
	for (lr_xfer *x = lr ? lr->xfers : NULL; x; x = x->next)
		n++;
	return n;
}
