/* SPDX-License-Identifier: MIT */
#include "pathreq.h"

#include <string.h>

#include "destination.h"

#define DST_LEN RNSC_TRUNCATED_HASHLEN

int rnsc_pathreq_destination(rnsc_ctx *ctx, uint8_t out[RNSC_TRUNCATED_HASHLEN])
{
	static const char *const aspects[] = {"path", "request"};
	return rnsc_destination_hash(ctx, out, NULL, "rnstransport", aspects, 2);
}

int rnsc_pathreq_build(uint8_t *out, size_t cap, const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
		       const uint8_t *transport_id, const uint8_t *tag, size_t tag_len)
{
	if (!out || !dest_hash || !tag)
		return RNSC_ERR_INVAL;
	if (tag_len == 0 || tag_len > RNSC_PATHREQ_TAG_MAX)
		return RNSC_ERR_RANGE;
	size_t n = DST_LEN + (transport_id ? DST_LEN : 0) + tag_len;
	if (n > cap)
		return RNSC_ERR_BUFSIZE;
	size_t o = 0;
	memcpy(out, dest_hash, DST_LEN);
	o += DST_LEN;
	if (transport_id) {
		memcpy(out + o, transport_id, DST_LEN);
		o += DST_LEN;
	}
	memcpy(out + o, tag, tag_len);
	return (int)n;
}

int rnsc_pathreq_parse(rnsc_pathreq *r, const uint8_t *data, size_t len)
{
	if (!r || (!data && len))
		return RNSC_ERR_INVAL;
	memset(r, 0, sizeof(*r));
	if (len < DST_LEN)
		return RNSC_ERR_TRUNCATED;
	if (len == DST_LEN)
		return RNSC_ERR_NOTAG;
	memcpy(r->dest_hash, data, DST_LEN);
	size_t o = DST_LEN;
	if (len > 2 * DST_LEN) {
		r->has_transport_id = 1;
		memcpy(r->transport_id, data + DST_LEN, DST_LEN);
		o += DST_LEN;
	}
	r->tag = data + o;
	r->tag_len = len - o;
	if (r->tag_len > RNSC_PATHREQ_TAG_MAX) {
		r->tag_len = RNSC_PATHREQ_TAG_MAX;
		r->tag_truncated = 1;
	}
	return 0;
}
