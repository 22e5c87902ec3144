/* SPDX-License-Identifier: MIT */
/* Packets: header layouts, flags, strict bounds, the packet hash, MTU/MDU rules. */
#include "destination.h"
#include "packet.h"
#include "wire_test_util.h"

static const char *PKT_H1 = "0803000102030405060708090a0b0c0d0e0f0068656c6c6f";
static const char *PKT_H2 =
	"5803101112131415161718191a1b1c1d1e1f000102030405060708090a0b0c0d0e0f0068656c6c6f";
static const char *PKT_HASH = "51e3b11a116cd54b013e0840ad682ae14956b583427f7cc4cec6ae0e1519136f";

static rnsc_packet kat_packet(int ht)
{
	rnsc_packet p = {0};
	p.header_type = (uint8_t)ht;
	p.transport_type = ht == RNSC_HEADER_2;
	p.dest_type = RNSC_DEST_PLAIN;
	p.packet_type = RNSC_PKT_DATA;
	p.hops = 3;
	for (int i = 0; i < 16; i++) {
		p.dest_hash[i] = (uint8_t)i;
		p.transport_id[i] = (uint8_t)(16 + i);
	}
	p.data = (const uint8_t *)"hello";
	p.data_len = 5;
	return p;
}

static void t_pack_kat(void)
{
	uint8_t out[64];
	rnsc_packet p = kat_packet(RNSC_HEADER_1);
	int n = rnsc_packet_pack(out, sizeof(out), &p, RNSC_MTU);
	CU_ASSERT_EQUAL(n, 24);
	CU_ASSERT(eqhex(out, (size_t)n, PKT_H1));
	p = kat_packet(RNSC_HEADER_2);
	n = rnsc_packet_pack(out, sizeof(out), &p, RNSC_MTU);
	CU_ASSERT_EQUAL(n, 40);
	CU_ASSERT(eqhex(out, (size_t)n, PKT_H2));
	CU_ASSERT_EQUAL(rnsc_packet_flags(&p), 0x58);
}

static void t_unpack_kat(void)
{
	uint8_t raw[64];
	size_t n = unhex(raw, PKT_H2);
	rnsc_packet p;
	CU_ASSERT_EQUAL_FATAL(rnsc_packet_unpack(&p, raw, n), 0);
	CU_ASSERT_EQUAL(p.header_type, RNSC_HEADER_2);
	CU_ASSERT_EQUAL(p.transport_type, RNSC_TRANSPORT_TRANSPORT);
	CU_ASSERT_EQUAL(p.dest_type, RNSC_DEST_PLAIN);
	CU_ASSERT_EQUAL(p.packet_type, RNSC_PKT_DATA);
	CU_ASSERT_EQUAL(p.hops, 3);
	CU_ASSERT_EQUAL(p.context, RNSC_CTX_NONE);
	CU_ASSERT_EQUAL(p.transport_id[0], 16);
	CU_ASSERT_EQUAL(p.dest_hash[15], 15);
	CU_ASSERT_EQUAL(p.data_len, 5);
	CU_ASSERT(memcmp(p.data, "hello", 5) == 0);
	/* repack gives the same bytes */
	uint8_t again[64];
	CU_ASSERT_EQUAL(rnsc_packet_pack(again, sizeof(again), &p, RNSC_MTU), (int)n);
	CU_ASSERT(memcmp(again, raw, n) == 0);
}

static void t_hash(void)
{
	uint8_t raw[64], h[32], t[16];
	size_t n = unhex(raw, PKT_H1);
	CU_ASSERT_EQUAL(rnsc_packet_hash(C, h, raw, n), 0);
	CU_ASSERT(eqhex(h, 32, PKT_HASH));
	/* hops and transport id do not count */
	n = unhex(raw, PKT_H2);
	raw[1] = 77;
	CU_ASSERT_EQUAL(rnsc_packet_hash(C, h, raw, n), 0);
	CU_ASSERT(eqhex(h, 32, PKT_HASH));
	CU_ASSERT_EQUAL(rnsc_packet_truncated_hash(C, t, raw, n), 0);
	CU_ASSERT(memcmp(t, h, 16) == 0);
	CU_ASSERT_EQUAL(rnsc_packet_hash(C, h, raw, 1), RNSC_ERR_TRUNCATED);
	CU_ASSERT_EQUAL(rnsc_packet_hash(C, h, raw, 17), RNSC_ERR_TRUNCATED);
	CU_ASSERT_EQUAL(rnsc_packet_hash(C, NULL, raw, n), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_packet_truncated_hash(C, t, raw, 1), RNSC_ERR_TRUNCATED);
}

static void t_unpack_bounds(void)
{
	uint8_t raw[64];
	size_t n = unhex(raw, PKT_H1);
	rnsc_packet p;
	CU_ASSERT_EQUAL(rnsc_packet_unpack(NULL, raw, n), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_packet_unpack(&p, NULL, 3), RNSC_ERR_INVAL);
	for (size_t len = 0; len <= RNSC_HEADER_MINSIZE; len++)
		CU_ASSERT_EQUAL(rnsc_packet_unpack(&p, raw, len), RNSC_ERR_TRUNCATED);
	CU_ASSERT_EQUAL(rnsc_packet_unpack(&p, raw, RNSC_HEADER_MINSIZE + 1), 0);
	raw[1] = RNSC_PATHFINDER_M;
	CU_ASSERT_EQUAL(rnsc_packet_unpack(&p, raw, n), RNSC_ERR_HOPS);
	raw[1] = RNSC_PATHFINDER_M - 1;
	CU_ASSERT_EQUAL(rnsc_packet_unpack(&p, raw, n), 0);
	raw[0] |= RNSC_PACKET_IFAC_FLAG;
	CU_ASSERT_EQUAL(rnsc_packet_unpack(&p, raw, n), RNSC_ERR_IFAC_UNEXPECTED);
	/* a HEADER_2 flag on HEADER_1 bytes: too short for two addresses */
	raw[0] = 0x40;
	CU_ASSERT_EQUAL(rnsc_packet_unpack(&p, raw, 35), RNSC_ERR_TRUNCATED);
	/* unknown contexts are carried */
	n = unhex(raw, PKT_H1);
	raw[18] = 0x42;
	CU_ASSERT_EQUAL(rnsc_packet_unpack(&p, raw, n), 0);
	CU_ASSERT_EQUAL(p.context, 0x42);
	CU_ASSERT_PTR_NULL(rnsc_packet_context_name(0x42));
}

static void t_pack_bounds(void)
{
	uint8_t out[600], data[600];
	memset(data, 0xab, sizeof(data));
	rnsc_packet p = kat_packet(RNSC_HEADER_1);
	p.data = data;
	p.data_len = RNSC_MTU - RNSC_HEADER_MINSIZE;
	CU_ASSERT_EQUAL(rnsc_packet_pack(out, sizeof(out), &p, RNSC_MTU), RNSC_MTU);
	p.data_len++;
	CU_ASSERT_EQUAL(rnsc_packet_pack(out, sizeof(out), &p, RNSC_MTU), RNSC_ERR_TOOBIG);
	p.data_len = 10;
	CU_ASSERT_EQUAL(rnsc_packet_pack(out, 28, &p, RNSC_MTU), RNSC_ERR_BUFSIZE);
	CU_ASSERT_EQUAL(rnsc_packet_pack(out, 29, &p, RNSC_MTU), 29);
	CU_ASSERT_EQUAL(rnsc_packet_pack(out, sizeof(out), &p, 5), RNSC_ERR_TOOBIG);
	p.data_len = 0;
	CU_ASSERT_EQUAL(rnsc_packet_pack(out, sizeof(out), &p, RNSC_MTU), RNSC_ERR_TRUNCATED);
	p.data_len = 1;
	p.hops = RNSC_PATHFINDER_M;
	CU_ASSERT_EQUAL(rnsc_packet_pack(out, sizeof(out), &p, RNSC_MTU), RNSC_ERR_HOPS);
	p.hops = 0;
	p.transport_type = RNSC_TRANSPORT_RELAY; /* does not fit the one-bit field */
	CU_ASSERT_EQUAL(rnsc_packet_pack(out, sizeof(out), &p, RNSC_MTU), RNSC_ERR_INVAL);
	p.transport_type = 0;
	p.header_type = 2;
	CU_ASSERT_EQUAL(rnsc_packet_pack(out, sizeof(out), &p, RNSC_MTU), RNSC_ERR_INVAL);
	p.header_type = 0;
	p.context_flag = 2;
	CU_ASSERT_EQUAL(rnsc_packet_pack(out, sizeof(out), &p, RNSC_MTU), RNSC_ERR_INVAL);
	p.context_flag = 0;
	p.dest_type = 4;
	CU_ASSERT_EQUAL(rnsc_packet_pack(out, sizeof(out), &p, RNSC_MTU), RNSC_ERR_INVAL);
	p.dest_type = 0;
	p.packet_type = 4;
	CU_ASSERT_EQUAL(rnsc_packet_pack(out, sizeof(out), &p, RNSC_MTU), RNSC_ERR_INVAL);
	p.packet_type = 0;
	p.data = NULL;
	CU_ASSERT_EQUAL(rnsc_packet_pack(out, sizeof(out), &p, RNSC_MTU), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_packet_pack(NULL, sizeof(out), &p, RNSC_MTU), RNSC_ERR_INVAL);
	/* a link MTU above 500 */
	static uint8_t big[8300];
	p.data = data;
	p.data_len = 600;
	CU_ASSERT_EQUAL(rnsc_packet_pack(big, sizeof(big), &p, 8192), 619);
}

static void t_flags(void)
{
	rnsc_packet p = {0};
	p.packet_type = RNSC_PKT_PROOF;
	p.dest_type = RNSC_DEST_SINGLE;
	p.context = RNSC_CTX_LRPROOF;
	/* LRPROOF is always flagged as addressed to a link, as the reference packs it */
	CU_ASSERT_EQUAL(rnsc_packet_flags(&p), 0x0f);
	p.context = RNSC_CTX_NONE;
	p.context_flag = 1;
	p.header_type = 1;
	p.transport_type = 1;
	CU_ASSERT_EQUAL(rnsc_packet_flags(&p), 0x73);
}

static void t_names(void)
{
	CU_ASSERT_STRING_EQUAL(rnsc_packet_context_name(RNSC_CTX_LRPROOF), "LRPROOF");
	CU_ASSERT_STRING_EQUAL(rnsc_packet_context_name(RNSC_CTX_NONE), "NONE");
	CU_ASSERT_STRING_EQUAL(rnsc_packet_context_name(RNSC_CTX_CHANNEL), "CHANNEL");
	CU_ASSERT_STRING_EQUAL(rnsc_packet_type_name(RNSC_PKT_LINKREQUEST), "LINKREQUEST");
	CU_ASSERT_PTR_NULL(rnsc_packet_type_name(4));
	CU_ASSERT_PTR_NULL(rnsc_packet_type_name(-1));
	CU_ASSERT_STRING_EQUAL(rnsc_header_type_name(1), "HEADER_2");
	CU_ASSERT_STRING_EQUAL(rnsc_dest_type_name(RNSC_DEST_GROUP), "GROUP");
	CU_ASSERT_STRING_EQUAL(rnsc_transport_type_name(RNSC_TRANSPORT_TUNNEL), "TUNNEL");
	CU_ASSERT_EQUAL(rnsc_packet_header_len(RNSC_HEADER_1), 19);
	CU_ASSERT_EQUAL(rnsc_packet_header_len(RNSC_HEADER_2), 35);
	CU_ASSERT_EQUAL(rnsc_packet_header_len(7), 0);
}

static void t_encrypts(void)
{
	CU_ASSERT_TRUE(rnsc_packet_encrypts(RNSC_PKT_DATA, RNSC_CTX_NONE, RNSC_DEST_SINGLE));
	CU_ASSERT_TRUE(rnsc_packet_encrypts(RNSC_PKT_DATA, RNSC_CTX_LINKCLOSE, RNSC_DEST_LINK));
	CU_ASSERT_TRUE(rnsc_packet_encrypts(RNSC_PKT_PROOF, RNSC_CTX_NONE, RNSC_DEST_SINGLE));
	CU_ASSERT_FALSE(rnsc_packet_encrypts(RNSC_PKT_PROOF, RNSC_CTX_NONE, RNSC_DEST_LINK));
	CU_ASSERT_FALSE(
		rnsc_packet_encrypts(RNSC_PKT_PROOF, RNSC_CTX_RESOURCE_PRF, RNSC_DEST_SINGLE));
	CU_ASSERT_FALSE(rnsc_packet_encrypts(RNSC_PKT_ANNOUNCE, RNSC_CTX_NONE, RNSC_DEST_SINGLE));
	CU_ASSERT_FALSE(
		rnsc_packet_encrypts(RNSC_PKT_LINKREQUEST, RNSC_CTX_NONE, RNSC_DEST_SINGLE));
	CU_ASSERT_FALSE(rnsc_packet_encrypts(RNSC_PKT_DATA, RNSC_CTX_KEEPALIVE, RNSC_DEST_LINK));
	CU_ASSERT_FALSE(rnsc_packet_encrypts(RNSC_PKT_DATA, RNSC_CTX_RESOURCE, RNSC_DEST_LINK));
	CU_ASSERT_FALSE(
		rnsc_packet_encrypts(RNSC_PKT_DATA, RNSC_CTX_CACHE_REQUEST, RNSC_DEST_LINK));
	CU_ASSERT_FALSE(rnsc_packet_encrypts(RNSC_PKT_PROOF, RNSC_CTX_LRPROOF, RNSC_DEST_SINGLE));
}

static void t_mtu(void)
{
	CU_ASSERT_EQUAL(RNSC_MDU, 464);
	CU_ASSERT_EQUAL(rnsc_link_mdu(RNSC_MTU), RNSC_LINK_MDU);
	CU_ASSERT_EQUAL(rnsc_link_mdu(8192), 8111);
	CU_ASSERT_EQUAL(rnsc_link_mdu(84), 15);
	CU_ASSERT_EQUAL(rnsc_link_mdu(83), 0);
	CU_ASSERT_EQUAL(rnsc_link_mdu(0), 0);
	CU_ASSERT_EQUAL(rnsc_hw_mtu_for_bitrate(62499), 0);
	CU_ASSERT_EQUAL(rnsc_hw_mtu_for_bitrate(62500), 1024);
	CU_ASSERT_EQUAL(rnsc_hw_mtu_for_bitrate(10000000), 16384);
	CU_ASSERT_EQUAL(rnsc_hw_mtu_for_bitrate(99999999), 16384);
	CU_ASSERT_EQUAL(rnsc_hw_mtu_for_bitrate(1000000000), 524288);
	/* an encrypted single packet of ENCRYPTED_MDU fits with the IFAC minimum to spare */
	CU_ASSERT(RNSC_HEADER_MINSIZE + 32 + 16 + (RNSC_ENCRYPTED_MDU / 16 + 1) * 16 + 32 <=
		  RNSC_MTU - RNSC_IFAC_MIN_SIZE);
}

/* Packing and parsing never allocate: they work with every allocation failing. */
static void t_no_alloc(void)
{
	uint8_t out[64], raw[64], h[32];
	size_t n = unhex(raw, PKT_H1);
	rnsc_packet p = kat_packet(RNSC_HEADER_2), q;
	rnsc_ctx_fail_alloc_after(C, 1);
	CU_ASSERT_EQUAL(rnsc_packet_pack(out, sizeof(out), &p, RNSC_MTU), 40);
	CU_ASSERT_EQUAL(rnsc_packet_unpack(&q, raw, n), 0);
	CU_ASSERT_EQUAL(rnsc_packet_hash(C, h, raw, n), 0);
	CU_ASSERT_EQUAL(rnsc_ctx_fail_alloc_after(C, 0), 0);
}

int main(void)
{
	static const wt_test tests[] = {
		{"pack KAT", t_pack_kat},
		{"unpack KAT", t_unpack_kat},
		{"packet hash", t_hash},
		{"unpack bounds", t_unpack_bounds},
		{"pack bounds", t_pack_bounds},
		{"flags", t_flags},
		{"names", t_names},
		{"encryption rules", t_encrypts},
		{"MTU and MDU", t_mtu},
		{"no allocation", t_no_alloc},
	};
	return wt_main("packet", tests, sizeof(tests) / sizeof(tests[0]));
}
