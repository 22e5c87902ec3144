/* SPDX-License-Identifier: MIT */
/*
 * Path requests (mirrors Transport.request_path and Transport.path_request_handler,
 * rns 1.5.4). A path request is a DATA packet, HEADER_1, BROADCAST, context NONE, to the
 * PLAIN destination "rnstransport.path.request" (its hash: rnsc_pathreq_destination()), with
 *   data = destination_hash(16) [transport_id(16)] tag(1..16)
 * A node with transport enabled includes its transport identity hash; the tag (the reference
 * draws 16 random bytes: a truncated hash of random data) lets receivers drop duplicates.
 * Receivers read: data < 16 bytes -> ignored; exactly 16 -> "tagless", ignored; 17..32 ->
 * destination + tag; more than 32 -> destination + transport id + tag, and a tag longer than 16
 * bytes is cut to 16 (the reference also counts that as a protocol violation).
 * The answer is an announce of the destination with context PATH_RESPONSE (announce.h), sent
 * HEADER_2 by a transport node that knows the path.
 *
 * Threading: reentrant. Parsed views borrow the input.
 */
#ifndef RNSC_PATHREQ_H
#define RNSC_PATHREQ_H

#include <stddef.h>
#include <stdint.h>

#include "ctx.h"
#include "identity.h"

#define RNSC_PATHREQ_TAG_MAX RNSC_TRUNCATED_HASHLEN

typedef struct rnsc_pathreq {
	uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN];
	int has_transport_id;
	uint8_t transport_id[RNSC_TRUNCATED_HASHLEN];
	const uint8_t *tag; /* into the parsed data */
	size_t tag_len;     /* 1..16 */
	int tag_truncated;  /* the request carried more than 16 tag bytes */
} rnsc_pathreq;

/* Hash of the PLAIN destination "rnstransport.path.request". */
RNSC_API int rnsc_pathreq_destination(rnsc_ctx *ctx, uint8_t out[RNSC_TRUNCATED_HASHLEN]);

/* Request data; transport_id may be NULL (node without transport). tag_len must be 1..16: a
 * longer tag would make the request ambiguous and is cut by every receiver.
 * Returns the length, RNSC_ERR_INVAL, RNSC_ERR_RANGE (tag length), RNSC_ERR_BUFSIZE. */
RNSC_API int rnsc_pathreq_build(uint8_t *out, size_t cap,
				const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
				const uint8_t *transport_id, const uint8_t *tag, size_t tag_len);

/* Parses request data as receivers do. Returns 0, RNSC_ERR_INVAL, RNSC_ERR_TRUNCATED (shorter
 * than a destination hash), RNSC_ERR_NOTAG (exactly a destination hash). */
RNSC_API int rnsc_pathreq_parse(rnsc_pathreq *r, const uint8_t *data, size_t len) RNSC_MUST_CHECK;

#endif
