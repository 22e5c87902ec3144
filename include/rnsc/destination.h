/* SPDX-License-Identifier: MIT */
/*
 * Destination naming and hashing (mirrors the reference's Destination.py).
 *   name      = app_name "." aspect "." aspect ...        (no dots inside parts)
 *   name hash = SHA-256(name)[:10]
 *   SINGLE    = SHA-256(name_hash || identity_hash)[:16]
 *   GROUP, PLAIN (no identity) = SHA-256(name_hash)[:16]
 *   LINK      = link id: truncated hash of the link request's hashable part, with the
 *               MTU signalling bytes removed.
 */
#ifndef RNSC_DESTINATION_H
#define RNSC_DESTINATION_H

#include <stddef.h>
#include <stdint.h>

#include "ctx.h"
#include "identity.h"

enum rnsc_dest_type {
	RNSC_DEST_SINGLE = 0x00,
	RNSC_DEST_GROUP = 0x01,
	RNSC_DEST_PLAIN = 0x02,
	RNSC_DEST_LINK = 0x03,
};

/* Writes the dotted name (NUL-terminated) into out; identity_hexhash (32 hex chars) is
 * appended when identity_hash is not NULL. Returns the length, RNSC_ERR_NAME for a dot
 * inside app_name or an aspect, RNSC_ERR_BUFSIZE. */
RNSC_API int rnsc_destination_expand_name(char *out, size_t cap, const uint8_t *identity_hash,
					  const char *app_name, const char *const *aspects,
					  size_t n_aspects);
RNSC_API int rnsc_name_hash(rnsc_ctx *ctx, uint8_t out[RNSC_NAME_HASHLEN], const char *app_name,
			    const char *const *aspects, size_t n_aspects);
/* identity_hash (16 bytes) may be NULL for GROUP and PLAIN destinations. */
RNSC_API int rnsc_destination_hash(rnsc_ctx *ctx, uint8_t out[RNSC_TRUNCATED_HASHLEN],
				   const uint8_t *identity_hash, const char *app_name,
				   const char *const *aspects, size_t n_aspects);
/* Same from a full dotted name "app.aspect1.aspect2". */
RNSC_API int rnsc_destination_hash_from_name(rnsc_ctx *ctx, uint8_t out[RNSC_TRUNCATED_HASHLEN],
					     const uint8_t *identity_hash, const char *full_name);
/* Link id from a raw LINKREQUEST packet (as sent on the wire, no IFAC). */
RNSC_API int rnsc_link_id_from_request(rnsc_ctx *ctx, uint8_t out[RNSC_TRUNCATED_HASHLEN],
				       const uint8_t *raw, size_t len);

#endif
