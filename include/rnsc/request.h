/* SPDX-License-Identifier: MIT */
/*
 * Requests and responses over a link (mirrors Link.request / handle_request /
 * handle_response, RequestReceipt and Destination.register_request_handler, rns 1.5.4),
 * sans-I/O: time comes in as `now` (ms), packets leave through a link port (linkport.h).
 *
 * Wire (the plaintext of a DATA packet on the link; umsgpack's bytes exactly):
 *   REQUEST   [requested_at (float64, seconds), path_hash (bin8, 16), data (any value)]
 *   RESPONSE  [request_id (bin8, 16), response (any value)]
 * path_hash = SHA-256(path as UTF-8)[:16]. The request id of a request sent as one packet is
 * that packet's truncated hash (first 16 bytes of its full hash); of a request sent as a
 * resource, the truncated hash of the packed request. Request data and responses are carried
 * as already-encoded MessagePack values (one value each), so any value the reference sends
 * (bytes, str, None, maps ...) passes through unchanged; rnsc_mp_* encodes and reads them.
 *
 * Requester (Link.request): a request whose packed form fits the link MDU goes as one REQUEST
 * packet, a larger one as a resource (see "resources" below). Default timeout: the link RTT *
 * 6 (Link.TRAFFIC_TIMEOUT_FACTOR) + 11.25 s (Resource.RESPONSE_MAX_GRACE_TIME * 1.125). A
 * RESPONSE for a pending request concludes it (READY): the progress callback, then the response
 * callback. The response's size for max_response_size is the reference's
 * len(packb(response)) - 2, computed on the value's bytes as received.
 * A request that times out while SENT (single packet) or DELIVERED (sent as a resource) fails
 * with the failed callback, and so does a response rejected for its size and a response
 * resource that fails: rns 1.5.7's request_timed_out / response_rejected (rns 1.5.4 only
 * acted on DELIVERED receipts, leaving a SENT one pending forever; cross-checked against
 * both in conformance/request_xcheck_test). Nothing on the wire differs.
 *
 * Handler side (Link.handle_request): only on an ACTIVE link; a request larger than the
 * handlers' max_request_size is ignored; the path hash selects the handler; the allow policy
 * decides: ALLOW_NONE never answers, ALLOW_ALL always, ALLOW_LIST only when the link's remote
 * identity (Link.identify) is in the list. A request refused or unknown gets no answer at all
 * (the requester times out), as in the reference. A handler's response is packed and sent as
 * one RESPONSE packet when it fits the link MDU, else as a resource.
 *
 * Resources: Resource.py lives in resource.{c,h}; this module meets it through a narrow seam
 * so the two can be wired without either knowing the other's internals:
 *   outgoing  rnsc_request_resource_ops.send(): "send these packed bytes as a resource on the
 *             link, with this request id, as a request (is_response 0) or response (1)", with
 *             the handler's auto_compress and the request's timeout. Without ops (or when it
 *             fails) a request beyond the MDU is refused with RNSC_ERR_TOOBIG and a response
 *             beyond the MDU is dropped (logged).
 *   incoming  the resource layer calls the rnsc_request_link_*resource* entry points below
 *             when an advertisement for a response arrives (accept or reject), on progress,
 *             when a request or response resource completed (its assembled bytes), and when
 *             one failed; and rnsc_request_link_request_resource_sent() when a request sent
 *             as a resource concluded. File responses (resources with metadata) are the
 *             resource layer's business and do not pass through here.
 *
 * Ownership: rnsc_request_handlers belongs to a destination (share it between the links to
 * that destination); rnsc_request_link belongs to one link and borrows its port, its handlers
 * (may be NULL) and the context, all of which must outlive it. Receipts are owned by the
 * request link and handed to callbacks for the call only; a concluded receipt is freed after
 * its callbacks ran. Callbacks and handlers run inside the call that caused them; they may
 * send further requests but must not delete the request link.
 * Threading: the thread that owns the link.
 */
#ifndef RNSC_REQUEST_H
#define RNSC_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include "ctx.h"
#include "identity.h"
#include "linkport.h"

/* Destination.ALLOW_* */
enum rnsc_request_policy {
	RNSC_REQUEST_ALLOW_NONE = 0x00,
	RNSC_REQUEST_ALLOW_ALL = 0x01,
	RNSC_REQUEST_ALLOW_LIST = 0x02,
};

/* RequestReceipt.FAILED ... READY */
enum rnsc_request_status {
	RNSC_REQUEST_FAILED = 0x00,
	RNSC_REQUEST_SENT = 0x01,
	RNSC_REQUEST_DELIVERED = 0x02,
	RNSC_REQUEST_RECEIVING = 0x03,
	RNSC_REQUEST_READY = 0x04,
};

#define RNSC_REQUEST_RESPONSE_MAX_GRACE_MS 10000u /* Resource.RESPONSE_MAX_GRACE_TIME */
#define RNSC_REQUEST_TIMEOUT_FACTOR 6u            /* Link.TRAFFIC_TIMEOUT_FACTOR */

/* ---- the wire ------------------------------------------------------------------------------ */

/* path_hash of a path (UTF-8, len bytes). 0 or RNSC_ERR_INVAL, crypto errors. */
RNSC_API int rnsc_request_path_hash(rnsc_ctx *ctx, uint8_t out[RNSC_TRUNCATED_HASHLEN],
				    const char *path, size_t len);
/* Packs [requested_at, path_hash, data]; data is one encoded MessagePack value, NULL/0 for
 * nil. Returns the length, RNSC_ERR_BUFSIZE, RNSC_ERR_INVAL (out NULL with cap, or data not
 * exactly one value). out NULL / cap 0 sizes. */
RNSC_API int rnsc_request_pack(uint8_t *out, size_t cap, double requested_at,
			       const uint8_t path_hash[RNSC_TRUNCATED_HASHLEN], const uint8_t *data,
			       size_t len);
/* Reads a packed request as Link.handle_request does: an array of at least 3 values (more are
 * ignored, as are bytes after it). *requested_at is the float (or integer) at index 0 (NAN
 * when another type: the reference passes any value through); *path_hash (NULL when index 1
 * is not a 16-byte bin: no handler can match it) and *data (the encoded value at index 2)
 * point into in. 0, RNSC_ERR_INVAL, RNSC_ERR_MALFORMED (not an array of >= 3), the errors of
 * rnsc_mp_next()/rnsc_mp_skip(). */
RNSC_API int rnsc_request_unpack(const uint8_t *in, size_t len, double *requested_at,
				 const uint8_t **path_hash, const uint8_t **data,
				 size_t *data_len) RNSC_MUST_CHECK;
/* Packs [request_id, response]; response one encoded value (NULL/0: nil). As request_pack. */
RNSC_API int rnsc_response_pack(uint8_t *out, size_t cap,
				const uint8_t request_id[RNSC_TRUNCATED_HASHLEN],
				const uint8_t *response, size_t len);
/* Reads a packed response as Link.__receive does: an array of at least 2 values; *request_id
 * (NULL when index 0 is not a 16-byte bin: it matches no pending request), *response (the
 * encoded value at index 1). 0, RNSC_ERR_INVAL, RNSC_ERR_MALFORMED, rnsc_mp errors. */
RNSC_API int rnsc_response_unpack(const uint8_t *in, size_t len, const uint8_t **request_id,
				  const uint8_t **response, size_t *response_len) RNSC_MUST_CHECK;

/* ---- handlers (Destination.register_request_handler) --------------------------------------- */

typedef struct rnsc_request_info {
	const char *path;    /* NUL-terminated, as registered */
	const uint8_t *data; /* the request's data: one encoded MessagePack value */
	size_t data_len;
	const uint8_t *request_id;            /* 16 bytes */
	const uint8_t *link_id;               /* 16 bytes */
	const rnsc_identity *remote_identity; /* NULL when the peer did not identify */
	double requested_at;                  /* NAN when the requester sent no number */
} rnsc_request_info;

/* The response generator. Return 1 with *response / *response_len set to one encoded
 * MessagePack value (the handler's storage, read before the call returns) to answer, 0 to
 * send no response (the reference's None), or a negative code (logged, no response). */
typedef int (*rnsc_request_handler_fn)(void *ud, const rnsc_request_info *req,
				       const uint8_t **response, size_t *response_len);

typedef struct rnsc_request_handlers rnsc_request_handlers;

RNSC_API int rnsc_request_handlers_new(rnsc_ctx *ctx, rnsc_request_handlers **out);
RNSC_API void rnsc_request_handlers_del(rnsc_request_handlers *h);
/* Registers (or replaces) the handler for path (non-empty UTF-8). allowed: n identity hashes
 * (copied), used with RNSC_REQUEST_ALLOW_LIST. auto_compress is handed to the resource layer
 * for large responses (the reference's default is on). Returns 0, RNSC_ERR_INVAL (empty path,
 * no fn, unknown policy), RNSC_ERR_NOMEM, crypto errors. */
RNSC_API int rnsc_request_handlers_register(rnsc_request_handlers *h, const char *path,
					    rnsc_request_handler_fn fn, void *ud, int allow,
					    const uint8_t (*allowed)[RNSC_TRUNCATED_HASHLEN],
					    size_t n_allowed, int auto_compress);
/* 0, or RNSC_ERR_NOTFOUND when no handler is registered for path. */
RNSC_API int rnsc_request_handlers_deregister(rnsc_request_handlers *h, const char *path);
/* Destination.set_max_request_size; SIZE_MAX (the default) means no limit. */
RNSC_API void rnsc_request_handlers_set_max_size(rnsc_request_handlers *h, size_t max);
RNSC_API size_t rnsc_request_handlers_count(const rnsc_request_handlers *h);

/* ---- receipts (RequestReceipt) --------------------------------------------------------------- */

typedef struct rnsc_request_receipt {
	uint8_t request_id[RNSC_TRUNCATED_HASHLEN];
	int status;          /* enum rnsc_request_status */
	double progress;     /* 0.0 .. 1.0 */
	size_t request_size; /* the packed request */
	int as_resource;     /* the request went as a resource */
	/* the response (one encoded value), only inside the response callback */
	const uint8_t *response;
	size_t response_len;
	size_t response_size, response_transfer_size; /* 0 until known */
	uint64_t sent_at, concluded_at, timeout_ms;
	size_t max_response_size; /* 0: none */
	void *ud;
} rnsc_request_receipt;

typedef void (*rnsc_request_cb)(void *ud, const rnsc_request_receipt *r);

typedef struct rnsc_request_params {
	uint64_t timeout_ms;      /* 0: the reference's default (see the top) */
	size_t max_response_size; /* 0: none */
	double requested_at;      /* seconds; 0: now / 1000 (the node's clock is wall time) */
	rnsc_request_cb response, failed, progress;
	void *ud;
} rnsc_request_params;

/* ---- the seam to the resource layer ------------------------------------------------------- */

typedef struct rnsc_request_resource_ops {
	/* Start a resource on the link carrying packed (a packed request, is_response 0, or a
	 * packed response, 1) with request_id, auto_compress (responses: the handler's; requests:
	 * 1) and timeout_ms (requests: the request's; responses: 0 = the resource's default).
	 * 0 when started, a negative code otherwise. */
	int (*send)(void *ud, const uint8_t request_id[RNSC_TRUNCATED_HASHLEN], int is_response,
		    const uint8_t *packed, size_t len, int auto_compress, uint64_t timeout_ms,
		    uint64_t now);
	void *ud;
} rnsc_request_resource_ops;

/* ---- a link's requests ------------------------------------------------------------------------ */

typedef struct rnsc_request_link rnsc_request_link;

/* handlers may be NULL (nothing is answered); port is copied. 0, RNSC_ERR_INVAL,
 * RNSC_ERR_NOMEM. */
RNSC_API int rnsc_request_link_new(rnsc_request_link **out, rnsc_ctx *ctx,
				   const rnsc_linkport *port, rnsc_request_handlers *handlers);
/* Frees pending receipts without callbacks. NULL is fine. */
RNSC_API void rnsc_request_link_del(rnsc_request_link *rl);
RNSC_API void rnsc_request_link_set_resource_ops(rnsc_request_link *rl,
						 const rnsc_request_resource_ops *ops);

/* Link.request: path (UTF-8, NUL-terminated), data one encoded value (NULL/0: nil), p may be
 * NULL (defaults). request_id (may be NULL) receives the id. Returns 0, RNSC_ERR_INVAL,
 * RNSC_ERR_STATE (link not ACTIVE), RNSC_ERR_TOOBIG (beyond the MDU with no resource ops),
 * RNSC_ERR_NOMEM, the port's send errors, the resource ops' errors. */
RNSC_API int rnsc_request_link_send(rnsc_request_link *rl, const char *path, const uint8_t *data,
				    size_t len, const rnsc_request_params *p,
				    uint8_t request_id[RNSC_TRUNCATED_HASHLEN], uint64_t now);

/* A REQUEST or RESPONSE packet the link delivered (on_link_packet: context, plaintext, the
 * packet's full hash). Returns 0 when handled (answered, concluded a request, or silently
 * ignored as the reference ignores it: refused, no handler, no response), or why it was
 * dropped: RNSC_ERR_INVAL (other context), RNSC_ERR_STATE (link not ACTIVE), RNSC_ERR_TOOBIG
 * (over max_request_size), RNSC_ERR_NOTFOUND (no handler / no pending request),
 * RNSC_ERR_PERM (refused by the allow policy), the unpack errors, the send errors of the
 * response. */
RNSC_API int rnsc_request_link_packet(rnsc_request_link *rl, int context, const uint8_t *data,
				      size_t len, const uint8_t packet_hash[RNSC_HASHLEN],
				      uint64_t now);
/* Fails the requests whose timeout passed (failed callback). Returns the number failed. */
RNSC_API int rnsc_request_link_tick(rnsc_request_link *rl, uint64_t now);
/* The earliest request timeout, UINT64_MAX when none. */
RNSC_API uint64_t rnsc_request_link_next_deadline(const rnsc_request_link *rl);
RNSC_API size_t rnsc_request_link_pending(const rnsc_request_link *rl);
/* A pending receipt by id (borrowed until the next call on rl), or NULL. */
RNSC_API const rnsc_request_receipt *rnsc_request_link_receipt(
	const rnsc_request_link *rl, const uint8_t request_id[RNSC_TRUNCATED_HASHLEN]);

/* Resource entry points (see the top). Each returns 0, RNSC_ERR_NOTFOUND when no pending
 * request has the id, or the errors named. */
/* A request this side sent as a resource concluded: ok -> DELIVERED, the timeout starts now;
 * not ok -> FAILED (failed callback). */
RNSC_API int rnsc_request_link_request_resource_sent(
	rnsc_request_link *rl, const uint8_t request_id[RNSC_TRUNCATED_HASHLEN], int ok,
	uint64_t now);
/* A request arrived as a resource (its assembled bytes): handled as a REQUEST packet, with
 * the truncated hash of packed as request id. Errors as rnsc_request_link_packet. */
RNSC_API int rnsc_request_link_request_resource_received(rnsc_request_link *rl,
							 const uint8_t *packed, size_t len,
							 uint64_t now);
/* A response resource was advertised (size: its data size, transfer_size: on the wire):
 * 0 = accept it (the receipt is RECEIVING), RNSC_ERR_TOOBIG = reject it (the receipt
 * failed), RNSC_ERR_NOTFOUND = not ours (the reference ignores it). */
RNSC_API int rnsc_request_link_response_advertised(rnsc_request_link *rl,
						   const uint8_t request_id[RNSC_TRUNCATED_HASHLEN],
						   size_t size, size_t transfer_size, uint64_t now);
RNSC_API int rnsc_request_link_response_progress(rnsc_request_link *rl,
						 const uint8_t request_id[RNSC_TRUNCATED_HASHLEN],
						 double progress, uint64_t now);
/* A response resource completed: packed is the packed response ([id, value]). */
RNSC_API int rnsc_request_link_response_resource_received(rnsc_request_link *rl,
							  const uint8_t *packed, size_t len,
							  uint64_t now);
RNSC_API int rnsc_request_link_response_resource_failed(
	rnsc_request_link *rl, const uint8_t request_id[RNSC_TRUNCATED_HASHLEN], uint64_t now);

RNSC_API const char *rnsc_request_status_name(int status);

#endif
