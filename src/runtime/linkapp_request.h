/* SPDX-License-Identifier: MIT */
/*
 * Requests on a node's links, wired to resources: the glue between the request manager
 * (include/rnsc/request.h, sans-I/O) and linkapp (linkapp.h, resources on the node). It keeps one
 * rnsc_request_link per attached link and:
 *   - takes linkapp's request slot: REQUEST / RESPONSE packets go to the link's request
 *     manager; advertisements flagged is_request / is_response are decided here as
 *     Link.receive does (requests: accepted when the link has handlers, ignored otherwise;
 *     responses: rnsc_request_link_response_advertised() first, then accepted, rejected
 *     (RESOURCE_RCL, the receipt fails) or ignored when no pending request has the id);
 *   - gives every request link a resource `send` that starts a resource on the link with the
 *     request id (flags is_request / is_response set by the resource from is_response, as
 *     the reference's Resource(request_id=..., is_response=...) does);
 *   - feeds resource events back: progress of a response -> response_progress, a request or
 *     response assembled -> request_resource_received / response_resource_received, a
 *     response failed (cancelled, timed out, link closed) -> response_resource_failed, a
 *     request sent as a resource concluded -> request_resource_sent.
 * Requests and responses larger than the link MDU thus work in both directions.
 *
 * Bounds and differences: an incoming request or response resource is assembled in memory
 * (it is one MessagePack value); one whose advertised size exceeds RNSC_LINKREQ_MAX_SIZE is
 * rejected (a response's receipt fails). The reference checks max_request_size on the
 * advertisement; here the request manager checks it once the request is assembled (the
 * request is then ignored, as the reference ignores it). A response resource carrying
 * metadata (the reference's file responses) is not read as a packed response: its receipt
 * fails (logged).
 *
 * Ownership: borrows the linkapp and the node (both outlive it) and owns the request links
 * it creates and the transfer state of their resources. Delete the linkapp before this
 * (linkapp frees its resources without callbacks; this then frees what they referenced).
 * Request timeouts: call rnsc_linkreq_tick() from the node loop (e.g. each turn).
 * Threading: the node's thread only.
 */
#ifndef RNSC_LINKAPP_REQUEST_H
#define RNSC_LINKAPP_REQUEST_H

#include "linkapp.h"
#include "request.h"

/* The largest request or response resource taken in (bytes, as advertised). */
#define RNSC_LINKREQ_MAX_SIZE (16u * 1024u * 1024u)

typedef struct rnsc_linkreq rnsc_linkreq;

/* Creates the wiring and installs it as la's request slot (rnsc_linkapp_set_request_slot).
 * 0, RNSC_ERR_INVAL, RNSC_ERR_NOMEM. */
RNSC_API int rnsc_linkreq_new(rnsc_ctx *ctx, rnsc_node *n, rnsc_linkapp *la, rnsc_linkreq **out);
/* Frees every request link (pending receipts without callbacks) and transfer state. The
 * linkapp must be gone already or must no longer run resources of these links. */
RNSC_API void rnsc_linkreq_del(rnsc_linkreq *lr);

/* The request link of an established link, created on first use with handlers (may be
 * NULL: nothing is answered, request advertisements ignored; the handlers must outlive the
 * request link); a later call returns the existing one (handlers ignored). *out borrowed
 * until rnsc_linkreq_detach. 0, RNSC_ERR_INVAL, RNSC_ERR_NOTFOUND (no such link),
 * RNSC_ERR_NOMEM. */
RNSC_API int rnsc_linkreq_attach(rnsc_linkreq *lr, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
				 rnsc_request_handlers *handlers, rnsc_request_link **out);
/* The link's request link or NULL. */
RNSC_API rnsc_request_link *rnsc_linkreq_get(const rnsc_linkreq *lr,
					     const uint8_t link_id[RNSC_TRUNCATED_HASHLEN]);
/* Frees the link's request link (call it from on_link_closed: by then linkapp has failed the
 * link's resources, so their receipts got their failed callbacks). No-op when not attached. */
RNSC_API void rnsc_linkreq_detach(rnsc_linkreq *lr, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN]);
/* rnsc_request_link_tick on every request link; returns the number of requests failed. */
RNSC_API int rnsc_linkreq_tick(rnsc_linkreq *lr, uint64_t now);
/* Transfers (request or response resources) this wiring follows, for tests. */
RNSC_API size_t rnsc_linkreq_transfers(const rnsc_linkreq *lr);

/* The request slot itself (installed by rnsc_linkreq_new; exposed for tests). */
RNSC_API void rnsc_linkreq_packet(void *lr, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
				  int packet_type, int context, const uint8_t *data, size_t len,
				  const uint8_t packet_hash[RNSC_HASHLEN]);

#endif
