/* SPDX-License-Identifier: MIT */
#include "packet.h"

#include <string.h>

#include "crypto.h"
#include "destination.h"

#define DST_LEN RNSC_TRUNCATED_HASHLEN

const char *rnsc_packet_context_name(int context)
{
	switch (context) {
#define RNSC_X_CTX(name, value)                                                                    \
	case value:                                                                                \
		return #name;
		RNSC_PACKET_CONTEXTS(RNSC_X_CTX)
#undef RNSC_X_CTX
	default:
		return NULL;
	}
}

static const char *pick(const char *const *names, size_t n, int v)
{
	return v >= 0 && (size_t)v < n ? names[v] : NULL;
}

const char *rnsc_packet_type_name(int packet_type)
{
	static const char *const n[] = {"DATA", "ANNOUNCE", "LINKREQUEST", "PROOF"};
	return pick(n, 4, packet_type);
}

const char *rnsc_header_type_name(int header_type)
{
	static const char *const n[] = {"HEADER_1", "HEADER_2"};
	return pick(n, 2, header_type);
}

const char *rnsc_dest_type_name(int dest_type)
{
	static const char *const n[] = {"SINGLE", "GROUP", "PLAIN", "LINK"};
	return pick(n, 4, dest_type);
}

const char *rnsc_transport_type_name(int transport_type)
{
	static const char *const n[] = {"BROADCAST", "TRANSPORT", "RELAY", "TUNNEL"};
	return pick(n, 4, transport_type);
}

size_t rnsc_packet_header_len(int header_type)
{
	switch (header_type) {
	case RNSC_HEADER_1:
		return RNSC_HEADER_MINSIZE;
	case RNSC_HEADER_2:
		return RNSC_HEADER_MAXSIZE;
	default:
		return 0;
	}
}

uint8_t rnsc_packet_flags(const rnsc_packet *p)
{
	unsigned dest_type = p->context == RNSC_CTX_LRPROOF ? RNSC_DEST_LINK : p->dest_type;
	return (uint8_t)(((p->header_type & 1u) << 6) | ((p->context_flag & 1u) << 5) |
			 ((p->transport_type & 1u) << 4) | ((dest_type & 3u) << 2) |
			 (p->packet_type & 3u));
}

int rnsc_packet_pack(uint8_t *out, size_t cap, const rnsc_packet *p, size_t mtu)
{
	if (!out || !p || (p->data_len && !p->data))
		return RNSC_ERR_INVAL;
	if (p->header_type > 1 || p->context_flag > 1 || p->transport_type > 1 ||
	    p->dest_type > 3 || p->packet_type > 3)
		return RNSC_ERR_INVAL;
	if (p->hops >= RNSC_PATHFINDER_M)
		return RNSC_ERR_HOPS;
	if (p->data_len == 0)
		return RNSC_ERR_TRUNCATED;
	size_t hdr = rnsc_packet_header_len(p->header_type);
	if (p->data_len > mtu || hdr > mtu - p->data_len)
		return RNSC_ERR_TOOBIG;
	size_t total = hdr + p->data_len;
	if (total > cap)
		return RNSC_ERR_BUFSIZE;
	if (total > (size_t)INT32_MAX)
		return RNSC_ERR_TOOBIG;
	size_t o = 0;
	out[o++] = rnsc_packet_flags(p);
	out[o++] = p->hops;
	if (p->header_type == RNSC_HEADER_2) {
		memcpy(out + o, p->transport_id, DST_LEN);
		o += DST_LEN;
	}
	memcpy(out + o, p->dest_hash, DST_LEN);
	o += DST_LEN;
	out[o++] = p->context;
	memmove(out + o, p->data, p->data_len);
	return (int)total;
}

int rnsc_packet_unpack(rnsc_packet *p, const uint8_t *raw, size_t len)
{
	if (!p || (!raw && len))
		return RNSC_ERR_INVAL;
	memset(p, 0, sizeof(*p));
	if (len < 2)
		return RNSC_ERR_TRUNCATED;
	uint8_t flags = raw[0];
	if (flags & RNSC_PACKET_IFAC_FLAG)
		return RNSC_ERR_IFAC_UNEXPECTED;
	if (raw[1] >= RNSC_PATHFINDER_M)
		return RNSC_ERR_HOPS;
	p->header_type = (flags >> 6) & 1u;
	p->context_flag = (flags >> 5) & 1u;
	p->transport_type = (flags >> 4) & 1u;
	p->dest_type = (flags >> 2) & 3u;
	p->packet_type = flags & 3u;
	p->hops = raw[1];
	size_t hdr = rnsc_packet_header_len(p->header_type);
	if (len <= hdr)
		return RNSC_ERR_TRUNCATED;
	size_t o = 2;
	if (p->header_type == RNSC_HEADER_2) {
		memcpy(p->transport_id, raw + o, DST_LEN);
		o += DST_LEN;
	}
	memcpy(p->dest_hash, raw + o, DST_LEN);
	o += DST_LEN;
	p->context = raw[o++];
	p->data = raw + o;
	p->data_len = len - o;
	return 0;
}

int rnsc_packet_hash(rnsc_ctx *ctx, uint8_t out[RNSC_HASHLEN], const uint8_t *raw, size_t len)
{
	if (!out || (!raw && len))
		return RNSC_ERR_INVAL;
	if (len < 2)
		return RNSC_ERR_TRUNCATED;
	size_t skip = (raw[0] & 0x40) ? 2 + DST_LEN : 2;
	if (len < skip)
		return RNSC_ERR_TRUNCATED;
	uint8_t first = raw[0] & 0x0f;
	rnsc_hash h;
	int rc = rnsc_hash_init(ctx, &h, RNSC_HASH_SHA256);
	if (rc)
		return rc;
	rc = rnsc_hash_update(&h, &first, 1);
	if (rc == 0)
		rc = rnsc_hash_update(&h, raw + skip, len - skip);
	if (rc) {
		rnsc_hash_abort(&h);
		return rc;
	}
	return rnsc_hash_final(&h, out);
}

int rnsc_packet_truncated_hash(rnsc_ctx *ctx, uint8_t out[RNSC_TRUNCATED_HASHLEN],
			       const uint8_t *raw, size_t len)
{
	uint8_t full[RNSC_HASHLEN];
	int rc = rnsc_packet_hash(ctx, full, raw, len);
	if (rc == 0)
		memcpy(out, full, RNSC_TRUNCATED_HASHLEN);
	return rc;
}

int rnsc_packet_encrypts(int packet_type, int context, int dest_type)
{
	/* Packet.pack, in its order. LRPROOF is checked first there (it skips the rest). */
	if (context == RNSC_CTX_LRPROOF)
		return 0;
	if (packet_type == RNSC_PKT_ANNOUNCE || packet_type == RNSC_PKT_LINKREQUEST)
		return 0;
	if (packet_type == RNSC_PKT_PROOF &&
	    (context == RNSC_CTX_RESOURCE_PRF || dest_type == RNSC_DEST_LINK))
		return 0;
	if (context == RNSC_CTX_RESOURCE || context == RNSC_CTX_KEEPALIVE ||
	    context == RNSC_CTX_CACHE_REQUEST)
		return 0;
	return 1;
}

size_t rnsc_link_mdu(size_t mtu)
{
	const size_t overhead = RNSC_IFAC_MIN_SIZE + RNSC_HEADER_MINSIZE + RNSC_TOKEN_OVERHEAD;
	if (mtu < overhead + 16)
		return 0;
	return (mtu - overhead) / 16 * 16 - 1;
}

size_t rnsc_hw_mtu_for_bitrate(uint64_t bitrate)
{
	static const struct {
		uint64_t min_bps;
		size_t mtu;
	} tiers[] = {
		{1000000000u, 524288}, {750000000u, 262144}, {400000000u, 131072},
		{200000000u, 65536},   {100000000u, 32768},  {10000000u, 16384},
		{5000000u, 8192},      {2000000u, 4096},     {1000000u, 2048},
		{62500u, 1024},
	};
	for (size_t i = 0; i < sizeof(tiers) / sizeof(tiers[0]); i++)
		if (bitrate >= tiers[i].min_bps)
			return tiers[i].mtu;
	return 0;
}
