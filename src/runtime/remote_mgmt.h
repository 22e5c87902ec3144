/* SPDX-License-Identifier: MIT */
/*
 * Remote management on a node (the reference's Transport.remote_management_destination):
 * with enable_remote_management = yes, and not attached to a shared instance, the
 * rnstransport.remote.management destination on the transport identity answers the
 * reference's "/status" (data [include_link_count, include_profiling] → [interface_stats,
 * link_count?, profiling?]) and "/path" (["table"|"rates", dest_hash?, max_hops?] → the
 * filtered path or rate table, the same documents the RPC serves) requests, only to link
 * peers that identified as one of remote_management_allowed (ALLOW_LIST: anyone else gets
 * no response, as from the reference). The destination is announced with the management
 * announces (15 s after start, then every 2 hours).
 *
 * The links are served through the blackhole service's link application (it owns the
 * node's hooks). Ownership: borrows the node and the service, which must outlive it.
 * Threading: the node's thread.
 */
#ifndef RNSC_REMOTE_MGMT_H
#define RNSC_REMOTE_MGMT_H

#include <stddef.h>
#include <stdint.h>

#include "blackhole_svc.h"
#include "node.h"
#include "request.h"

typedef struct rnsc_remote_mgmt rnsc_remote_mgmt;

/* *out stays NULL (and 0 is returned) when remote management is off or the node is
 * attached to a shared instance. 0, RNSC_ERR_INVAL, RNSC_ERR_NOMEM, identity/registration
 * errors. */
RNSC_API int rnsc_remote_mgmt_start(rnsc_ctx *ctx, rnsc_node *n, rnsc_blackhole_svc *svc,
				    rnsc_remote_mgmt **out);
RNSC_API void rnsc_remote_mgmt_stop(rnsc_remote_mgmt *m);
/* The destination hash served, or NULL. */
RNSC_API const uint8_t *rnsc_remote_mgmt_dest(const rnsc_remote_mgmt *m);

/* The handlers' answers, exposed for the fuzz target and tests: *out malloc'd msgpack.
 * Returns 1 (answer), 0 (no answer: data not a non-empty list, unknown command) or a
 * negative code. */
RNSC_API int rnsc_remote_mgmt_status_answer(rnsc_node *n, rnsc_ctx *ctx, const uint8_t *data,
					    size_t len, uint8_t **out, size_t *out_len);
RNSC_API int rnsc_remote_mgmt_path_answer(rnsc_node *n, rnsc_ctx *ctx, const uint8_t *data,
					  size_t len, uint8_t **out, size_t *out_len);

/* remote_mgmt_msg.c (no node needed). parse_status: 1 with the two flags (`x == True` as
 * Python compares), 0 when the data is not a non-empty list (the reference answers None). */
RNSC_API int rnsc_remote_mgmt_parse_status(const uint8_t *data, size_t len, int *lstats, int *prof);
typedef struct rnsc_remote_mgmt_path_req {
	int table;           /* "table" (else "rates") */
	int dest_any;        /* no destination hash given (None) */
	const uint8_t *dest; /* into data; NULL when given but not bytes (matches nothing) */
	size_t dest_len;
	int with_hops; /* table with an integer max_hops */
	int64_t max_hops;
} rnsc_remote_mgmt_path_req;
/* 1 for a "table" or "rates" command, 0 otherwise (no answer). */
RNSC_API int rnsc_remote_mgmt_parse_path(const uint8_t *data, size_t len,
					 rnsc_remote_mgmt_path_req *q);
/* The entries of a msgpack list of maps whose "hash" is dest (every entry for dest NULL),
 * as a new list in *out (malloc'd). 1, RNSC_ERR_MALFORMED, RNSC_ERR_NOMEM. */
RNSC_API int rnsc_remote_mgmt_filter(const uint8_t *list, size_t len, const uint8_t *dest,
				     uint8_t **out, size_t *out_len);

#endif
