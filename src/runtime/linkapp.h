/* SPDX-License-Identifier: MIT */
/*
 * The application layer of a node's links: a dispatcher that sits on an rnsc_node's hooks,
 * keeps per-link resource state (resource.h), drives the resources' timers on the node's
 * loop and hands everything else on to the application.
 *
 *   rnsc_node hooks ──> linkapp ──> resources (RESOURCE_ADV/REQ/HMU/ICL/RCL, parts, proofs)
 *                          │──> request slot: REQUEST / RESPONSE packets, and advertisements
 *                          │    flagged is_request / is_response (left to the request
 *                          │    manager, src/lib/request.{c,h}: it registers
 *                          │    rnsc_linkapp_callbacks.request_packet and accepts such
 *                          │    resources with rnsc_linkapp_accept_resource())
 *                          └──> the application's own node hooks (every hook is forwarded)
 *
 * Resource acceptance follows Link.resource_strategy: with no resource_advertised callback
 * advertisements are ignored (ACCEPT_NONE); otherwise the callback decides (ACCEPT_APP;
 * return 1 for ACCEPT_ALL). Later segments of an accepted split resource are taken without
 * asking again (the reference asks per segment; rncp answers the same every time).
 * Outgoing resources on one link go one at a time, as the reference's
 * Link.ready_for_new_resource has it: a resource sent while another is running on the link is
 * prepared and QUEUED, and advertised when the link is free (oldest first).
 *
 * Ownership: linkapp borrows the node (which must outlive it) and owns the resources it runs:
 * a resource is freed right after its concluded callback returns, so pointers handed to
 * callbacks are valid until then. Threading: the node's thread only.
 */
#ifndef RNSC_LINKAPP_H
#define RNSC_LINKAPP_H

#include "node.h"
#include "resource.h"

typedef struct rnsc_linkapp rnsc_linkapp;

/* The request slot's signature (rnsc_linkapp_callbacks.request_packet). */
typedef void (*rnsc_linkapp_request_fn)(void *ud, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
					int packet_type, int context, const uint8_t *data,
					size_t len, const uint8_t packet_hash[RNSC_HASHLEN]);

typedef struct rnsc_linkapp_callbacks {
	void *ud;
	/* An advertisement for a new resource (adv borrowed for the call). Return 1 and fill
	 * *cb / *cb_ud (the resource's callbacks) to accept, 0 to reject (RESOURCE_RCL sent).
	 * NULL: advertisements are ignored. */
	int (*resource_advertised)(void *ud, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
				   const rnsc_resource_adv *adv, rnsc_resource_callbacks *cb,
				   void **cb_ud);
	/* The request manager's slot: DATA with context REQUEST or RESPONSE (decrypted), and
	 * RESOURCE_ADV plaintexts whose advertisement is a request or a response. NULL: they
	 * are dropped, as a reference link without pending requests or handlers does. */
	void (*request_packet)(void *ud, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
			       int packet_type, int context, const uint8_t *data, size_t len,
			       const uint8_t packet_hash[RNSC_HASHLEN]);
} rnsc_linkapp_callbacks;

/* Installs itself as n's hooks (ctx: the node's context); app_hooks (may be NULL) receive every node event, including
 * on_link_packet for contexts linkapp does not handle (CHANNEL). Returns 0, RNSC_ERR_INVAL,
 * RNSC_ERR_NOMEM. */
RNSC_API int rnsc_linkapp_new(rnsc_ctx *ctx, rnsc_node *n, const rnsc_linkapp_callbacks *cb,
			      const rnsc_node_hooks *app_hooks, rnsc_linkapp **out);
/* Cancels nothing, frees every resource (no concluded callbacks) and restores empty hooks. */
RNSC_API void rnsc_linkapp_del(rnsc_linkapp *la);

/* Starts an outgoing resource on an established link (rnsc_resource_send); out (may be NULL)
 * receives the borrowed resource. Returns 0, RNSC_ERR_NOTFOUND (no such link),
 * RNSC_ERR_STATE (not established) or rnsc_resource_send's errors. */
RNSC_API int rnsc_linkapp_send_resource(rnsc_linkapp *la,
					const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
					const rnsc_resource_callbacks *cb, void *cb_ud,
					const rnsc_resource_params *p, rnsc_resource **out);
/* Accepts an advertisement (its decrypted plaintext) as an incoming resource on the link;
 * for the request manager (responses and requests sent as resources). */
RNSC_API int rnsc_linkapp_accept_resource(rnsc_linkapp *la,
					  const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
					  const uint8_t *adv_plain, size_t len,
					  const rnsc_resource_callbacks *cb, void *cb_ud,
					  rnsc_resource **out);
/* Replaces the request slot (callbacks.request_packet and its ud) after creation; the
 * request wiring (linkapp_request.h) installs itself here. fn NULL: such packets dropped. */
RNSC_API void rnsc_linkapp_set_request_slot(rnsc_linkapp *la, rnsc_linkapp_request_fn fn, void *ud);
/* Resource.reject for an advertisement (its decrypted plaintext): RESOURCE_RCL on the link.
 * Returns 0, RNSC_ERR_INVAL, RNSC_ERR_NOTFOUND (no such link), RNSC_ERR_STATE, the errors of
 * rnsc_resource_reject(). */
RNSC_API int rnsc_linkapp_reject_resource(rnsc_linkapp *la,
					  const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
					  const uint8_t *adv_plain, size_t len);
/* Cancels a running resource (ICL / RCL as the reference). */
RNSC_API void rnsc_linkapp_cancel_resource(rnsc_linkapp *la, rnsc_resource *r);
/* Resources running (all links). */
RNSC_API size_t rnsc_linkapp_resource_count(const rnsc_linkapp *la);

#endif
