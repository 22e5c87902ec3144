/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the packet parser (src/lib/packet.c) and the payload parsers that
 * read packet data without keys (path requests, link requests, keepalives, RTT values).
 *
 * Input: a packet as received (after IFAC removal). Checked beyond "no crash, no UB":
 *   - every rejection is one of the documented codes;
 *   - an accepted packet packs back to exactly the input bytes, and its hash is the hash of
 *     those bytes (with hops and transport id left out);
 *   - a parsed path request or link request rebuilds to the bytes it was read from.
 */
#include "fuzz_wire.h"

#include "destination.h"
#include "linkfmt.h"
#include "packet.h"
#include "pathreq.h"

static void payloads(const rnsc_packet *p)
{
	rnsc_pathreq pr;
	int rc = rnsc_pathreq_parse(&pr, p->data, p->data_len);
	FUZZ_CODE(rc, RNSC_ERR_TRUNCATED, RNSC_ERR_NOTAG);
	if (rc == 0 && !pr.tag_truncated) {
		uint8_t again[64];
		int n = rnsc_pathreq_build(again, sizeof(again), pr.dest_hash,
					   pr.has_transport_id ? pr.transport_id : NULL, pr.tag,
					   pr.tag_len);
		FUZZ_CHECK(n == (int)p->data_len && memcmp(again, p->data, p->data_len) == 0);
	}
	rnsc_link_request lr;
	rc = rnsc_link_request_parse(&lr, p->data, p->data_len);
	FUZZ_CODE(rc, RNSC_ERR_MALFORMED, RNSC_ERR_LINK_MODE);
	if (rc == 0) {
		uint8_t again[80];
		int n = rnsc_link_request_build(again, sizeof(again), lr.x25519_pub, lr.ed25519_pub,
						lr.has_signalling, lr.mtu, lr.mode);
		FUZZ_CHECK(n == (int)p->data_len);
		FUZZ_CHECK(memcmp(again, p->data, 64) == 0);
	}
	FUZZ_CODE(rnsc_link_keepalive_parse(p->data, p->data_len), RNSC_ERR_MALFORMED);
	double rtt;
	FUZZ_CODE(rnsc_link_rtt_decode(p->data, p->data_len, &rtt), RNSC_ERR_MALFORMED,
		  RNSC_ERR_TRUNCATED);
	uint8_t lid[16] = {0};
	FUZZ_CODE(rnsc_link_close_check(p->data, p->data_len, lid), RNSC_ERR_MALFORMED,
		  RNSC_ERR_NOTFOUND);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rnsc_ctx *ctx = fuzz_ctx();
	rnsc_packet p;
	int rc = rnsc_packet_unpack(&p, data, size);
	FUZZ_CODE(rc, RNSC_ERR_TRUNCATED, RNSC_ERR_HOPS, RNSC_ERR_IFAC_UNEXPECTED);
	uint8_t h[32], h2[32];
	int hr = rnsc_packet_hash(ctx, h, data, size);
	FUZZ_CODE(hr, RNSC_ERR_TRUNCATED);
	if (rc != 0)
		return 0;
	FUZZ_CHECK(hr == 0);
	uint8_t *out = malloc(size);
	FUZZ_CHECK(out != NULL);
	/* context LRPROOF forces the LINK type on packing, as on the wire it always is */
	int n = rnsc_packet_pack(out, size, &p, size);
	if (p.context == RNSC_CTX_LRPROOF && p.dest_type != RNSC_DEST_LINK) {
		FUZZ_CHECK(n == (int)size && (out[0] & 0x0c) == 0x0c);
	} else {
		FUZZ_CHECK(n == (int)size && memcmp(out, data, size) == 0);
		FUZZ_CHECK(rnsc_packet_pack(out, size - 1, &p, size) == RNSC_ERR_BUFSIZE);
		FUZZ_CHECK(rnsc_packet_pack(out, size, &p, size - 1) == RNSC_ERR_TOOBIG);
	}
	/* the hash ignores hops (and the transport id) */
	memcpy(out, data, size);
	out[1] = (uint8_t)(out[1] ^ 0x55);
	FUZZ_CHECK(rnsc_packet_hash(ctx, h2, out, size) == 0 && memcmp(h, h2, 32) == 0);
	free(out);
	(void)rnsc_packet_encrypts(p.packet_type, p.context, p.dest_type);
	payloads(&p);
	return 0;
}
