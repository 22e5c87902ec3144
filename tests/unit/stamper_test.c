/* SPDX-License-Identifier: MIT */
/*
 * LXStamper stamps (src/lib/stamper.c) and the discovery app_data parser
 * (src/lib/discovery.c). The stamp vectors were produced with LXMF 1.1.1's LXStamper on
 * rns 1.5.4 (the same LXStamper.py ships in LXMF 1.2.1): workblocks are given as their
 * SHA-256, stamps with the value and the validity the reference computed.
 */
#include "discovery.h"
#include "stamper.h"
#include "wire_test_util.h"

static uint8_t WB[RNSC_STAMP_DISCOVERY_ROUNDS * RNSC_STAMP_WORKBLOCK_ROUND];

static void t_workblock(void)
{
	static const struct {
		const char *mat;
		unsigned rounds;
		const char *sha;
	} v[] = {
		{"726e7363207374616d70657220766563746f72", 1,
		 "70e8253493c4920e6c442c66871b465e945f79fd13a5b47f6d5c4bec3e798d99"},
		{"726e7363207374616d70657220766563746f72", 20,
		 "ed6e856309550bac1c85edfe76f4c6ee80a84f00dc75cfdbfd3e23a9eddea06a"},
		{"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", 1,
		 "7fbf49b7a5e79e4a70268b4267e6f9abb6540f8b265b6fb13ed9b58494c7a581"},
		{"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", 20,
		 "7c06f15571960ba62e26a1d51bc4f9c86ebc44810701d232af0fe9a6c10f9e61"},
	};
	for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
		uint8_t m[64], d[32];
		size_t ml = unhex(m, v[i].mat);
		CU_ASSERT_EQUAL(rnsc_stamp_workblock(C, WB, sizeof WB, m, ml, v[i].rounds), 0);
		CU_ASSERT_EQUAL(rnsc_sha256(C, d, WB, v[i].rounds * RNSC_STAMP_WORKBLOCK_ROUND), 0);
		CU_ASSERT(eqhex(d, 32, v[i].sha));
	}
	uint8_t m[1] = {1};
	CU_ASSERT_EQUAL(rnsc_stamp_workblock(C, WB, sizeof WB, m, 0, 1), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_stamp_workblock(C, WB, sizeof WB, m, 1, 0), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_stamp_workblock(C, WB, 255, m, 1, 1), RNSC_ERR_BUFSIZE);
}

/* Workblock of SHA-256("gen"), 20 rounds. */
static void gen_wb(void)
{
	uint8_t m[32];
	rnsc_sha256(C, m, (const uint8_t *)"gen", 3);
	CU_ASSERT_EQUAL_FATAL(rnsc_stamp_workblock(C, WB, sizeof WB, m, 32, 20), 0);
}

static void t_value_valid(void)
{
	gen_wb();
	/* stamp, value, valid for costs 0, 1, value, value+1, 16 */
	static const struct {
		const char *stamp;
		int value;
		int valid[5];
	} v[] = {
		{"e8bc163c82eee18733288c7d4ac636db3a6deb013ef2d37b68322be20edc45cc",
		 0,
		 {1, 0, 1, 0, 0}},
		{"5b840157e7e86aef3b3fd0fc24f3add34d3e7f210370d429475ed1bcd3e7fca2",
		 1,
		 {1, 1, 1, 0, 0}},
		{"ec18eac8d758b1eba52d3c10d39adc6dd9806472cb4ae069635d383d9086a513",
		 2,
		 {1, 1, 1, 0, 0}},
		{"1dfae156a06bdb54f4cce8353958495e30a8a4744ccb5346f7fc2ccd13eabc4e",
		 4,
		 {1, 1, 1, 0, 0}},
		{"7b3025770baad3b489a819282b9c3bd7e1f37e42ada83bde4370ef25efdb58a7",
		 5,
		 {1, 1, 1, 0, 0}},
		{"d091f2afe988afd4cea4181b84eaaf780749aed70cbca513c7f900a4fb986b99",
		 7,
		 {1, 1, 1, 0, 0}},
		/* LXStamper.generate_stamp(SHA-256("gen"), stamp_cost=12, expand_rounds=20) */
		{"27a0c6c8e4664845fa481eaadc12f52d1fe801d7da67c7f708bc552b8899f87e",
		 13,
		 {1, 1, 1, 0, 0}},
	};
	for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
		uint8_t s[32];
		unhex(s, v[i].stamp);
		CU_ASSERT_EQUAL(rnsc_stamp_value(C, WB, sizeof WB, s), v[i].value);
		int costs[5] = {0, 1, v[i].value, v[i].value + 1, 16};
		for (int c = 0; c < 5; c++)
			CU_ASSERT_EQUAL(rnsc_stamp_valid(C, s, costs[c], WB, sizeof WB),
					v[i].valid[c]);
		CU_ASSERT_EQUAL(rnsc_stamp_valid(C, s, 257, WB, sizeof WB), 0);
	}
}

static void t_generate(void)
{
	gen_wb();
	uint8_t s[32];
	int v = rnsc_stamp_generate(C, s, WB, sizeof WB, 8, 0);
	CU_ASSERT(v >= 8);
	CU_ASSERT_EQUAL(rnsc_stamp_value(C, WB, sizeof WB, s), v);
	CU_ASSERT_EQUAL(rnsc_stamp_valid(C, s, 8, WB, sizeof WB), 1);
	/* Cost 200 cannot be met in 3 tries (2^-200 per try). */
	CU_ASSERT_EQUAL(rnsc_stamp_generate(C, s, WB, sizeof WB, 200, 3), RNSC_ERR_RANGE);
	CU_ASSERT_EQUAL(rnsc_stamp_generate(C, s, WB, sizeof WB, 257, 3), RNSC_ERR_INVAL);
}

static void t_hostname_ip(void)
{
	static const struct {
		const char *s;
		int ip, host;
	} v[] = {
		{"127.0.0.1", 1, 0}, {"10.0.0.256", 0, 0},  {"01.2.3.4", 0, 0},
		{"1.2.3", 0, 0},     {"::1", 1, 0},         {"fe80::1%eth0", 1, 0},
		{"fe80::1%", 0, 0},  {"example.com", 0, 1}, {"example.com.", 0, 1},
		{"a-b.c", 0, 1},     {"-ab.c", 0, 0},       {"ab-.c", 0, 0},
		{"a..b", 0, 0},      {"host", 0, 1},        {"a_b", 0, 0},
	};
	for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
		CU_ASSERT_EQUAL(rnsc_discovery_is_ip(v[i].s, strlen(v[i].s)), v[i].ip);
		CU_ASSERT_EQUAL(rnsc_discovery_is_hostname(v[i].s, strlen(v[i].s)), v[i].host);
	}
}

static void t_sanitize(void)
{
	/* InterfaceAnnounceHandler.sanitize_name on rns 1.5.4. */
	static const struct {
		const char *in, *out;
	} v[] = {
		{"  My  Node  ", "My Node"},  {"--x--", "x"}, {"a      b", "a b"}, {"(x)", "x)"},
		{"caf\xc3\xa9 ok", "caf ok"}, {"!!!", ""},
	};
	for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
		char o[64];
		rnsc_discovery_sanitize_name(o, sizeof o, v[i].in, strlen(v[i].in));
		CU_ASSERT_STRING_EQUAL(o, v[i].out);
	}
}

/* A TCPServerInterface announce built here, stamped, parsed back. */
static size_t build(uint8_t *out, size_t cap, int cost, int with_type)
{
	uint8_t packed[512];
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, packed, sizeof packed);
	rnsc_mp_write_map(&w, with_type ? 11 : 10);
	if (with_type) {
		rnsc_mp_write_uint(&w, 0);
		rnsc_mp_write_cstr(&w, "TCPServerInterface");
	}
	uint8_t tid[16];
	memset(tid, 0xab, sizeof tid);
	rnsc_mp_write_uint(&w, 1);
	rnsc_mp_write_bool(&w, 1);
	rnsc_mp_write_uint(&w, 0xfe);
	rnsc_mp_write_bin(&w, tid, 16);
	rnsc_mp_write_uint(&w, 0xfd);
	rnsc_mp_write_cstr(&w, "RNS");
	rnsc_mp_write_uint(&w, 0xfc);
	rnsc_mp_write_cstr(&w, "1.5.4");
	rnsc_mp_write_uint(&w, 0xff);
	rnsc_mp_write_cstr(&w, "Test Node");
	rnsc_mp_write_uint(&w, 3);
	rnsc_mp_write_double(&w, 52.5);
	rnsc_mp_write_uint(&w, 4);
	rnsc_mp_write_nil(&w);
	rnsc_mp_write_uint(&w, 5);
	rnsc_mp_write_nil(&w);
	rnsc_mp_write_uint(&w, 2);
	rnsc_mp_write_cstr(&w, "127.0.0.1");
	rnsc_mp_write_uint(&w, 6);
	rnsc_mp_write_uint(&w, 4242);
	int pl = rnsc_mp_writer_finish(&w);
	CU_ASSERT_FATAL(pl > 0 && (size_t)pl + 33 <= cap);
	uint8_t ih[32];
	rnsc_sha256(C, ih, packed, (size_t)pl);
	CU_ASSERT_EQUAL_FATAL(rnsc_stamp_workblock(C, WB, sizeof WB, ih, 32, 20), 0);
	out[0] = 0;
	memcpy(out + 1, packed, (size_t)pl);
	CU_ASSERT_FATAL(rnsc_stamp_generate(C, out + 1 + pl, WB, sizeof WB, cost, 0) >= cost);
	return (size_t)pl + 33;
}

static void t_parse(void)
{
	uint8_t ad[600];
	size_t n = build(ad, sizeof ad, 8, 1);
	rnsc_disc_info in;
	CU_ASSERT_EQUAL(rnsc_discovery_parse(C, &in, ad, n, 8), RNSC_DISC_OK);
	CU_ASSERT_STRING_EQUAL(in.type, "TCPServerInterface");
	CU_ASSERT_STRING_EQUAL(in.name, "Test Node");
	CU_ASSERT_EQUAL(in.transport, 1);
	CU_ASSERT_EQUAL(in.port.u, 4242);
	CU_ASSERT(in.latitude.type == RNSC_MP_FLOAT64 && in.latitude.d == 52.5);
	CU_ASSERT(in.longitude.type == RNSC_MP_NIL);
	CU_ASSERT(in.value >= 8);
	if (in.value < 40)
		CU_ASSERT_EQUAL(rnsc_discovery_parse(C, &in, ad, n, 40), RNSC_DISC_STAMP);
	ad[n - 1] ^= 1; /* almost surely no longer valid for 8 */
	int r = rnsc_discovery_parse(C, &in, ad, n, 8);
	CU_ASSERT(r == RNSC_DISC_STAMP || r == RNSC_DISC_OK);
	CU_ASSERT_EQUAL(rnsc_discovery_parse(C, &in, ad, 33, 8), RNSC_DISC_SHORT);
	ad[0] = RNSC_DISC_FLAG_ENCRYPTED;
	CU_ASSERT_EQUAL(rnsc_discovery_parse(C, &in, ad, n, 8), RNSC_DISC_ENCRYPTED);
	n = build(ad, sizeof ad, 4, 0);
	CU_ASSERT_EQUAL(rnsc_discovery_parse(C, &in, ad, n, 4), RNSC_DISC_NOTYPE);
}

/* The packed map against umsgpack.packb() of the same info dict on rns 1.5.4 (the dict
 * InterfaceAnnouncer.get_interface_announce_data builds, in its key order). */
static void t_announce_data(void)
{
	static const char *want1 =
		"8c00b2544350536572766572496e7465726661636501c3ccfec410000102030405060708090a0b0c0d0e0f"
		"ccfda3524e53ccfca5312e352e34ccffb2726e73632054657374204261636b626f6e6503cb404a428f5c28f5"
		"c304cb402acf5c28f5c28f05cb4041400000000000ccf0c410aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa02a931"
		"32372e302e302e3106cd1092";
	static const char *want2 =
		"8d00b14261636b626f6e65496e7465726661636501c2ccfec410000102030405060708090a0b0c0d0e0f"
		"ccfda3524e53ccfca5312e352e34ccffc003c004c005c002ab6578616d706c652e6f726706cd136507a36e"
		"657408a36b6579";
	uint8_t op[16], out[512];
	memset(op, 0xaa, sizeof op);
	rnsc_disc_announce a = {.type = "TCPServerInterface",
				.transport = 1,
				.impl = "RNS",
				.version = "1.5.4",
				.name = "rnsc Test Backbone",
				.op_addr = op,
				.reachable_on = "127.0.0.1",
				.port = 4242};
	for (int i = 0; i < 16; i++)
		a.transport_id[i] = (uint8_t)i;
	a.latitude = (rnsc_disc_val){.present = 1, .type = RNSC_MP_FLOAT64, .d = 52.52};
	a.longitude = (rnsc_disc_val){.present = 1, .type = RNSC_MP_FLOAT64, .d = 13.405};
	a.height = (rnsc_disc_val){.present = 1, .type = RNSC_MP_FLOAT64, .d = 34.5};
	size_t pl = 0;
	int n = rnsc_discovery_announce_data(C, out, sizeof out, &a, 8, &pl);
	CU_ASSERT_FATAL(n > 0 && (size_t)n == 1 + pl + 32);
	CU_ASSERT_EQUAL(out[0], 0);
	CU_ASSERT(eqhex(out + 1, pl, want1));
	rnsc_disc_info in;
	CU_ASSERT_EQUAL(rnsc_discovery_parse(C, &in, out, (size_t)n, 8), RNSC_DISC_OK);
	CU_ASSERT_STRING_EQUAL(in.name, "rnsc Test Backbone");
	CU_ASSERT(in.has_op_addr && in.port.u == 4242);

	rnsc_disc_announce b = {.type = "BackboneInterface",
				.transport = 0,
				.impl = "RNS",
				.version = "1.5.4",
				.reachable_on = "example.org",
				.port = 4965,
				.ifac_netname = "net",
				.ifac_netkey = "key"};
	memcpy(b.transport_id, a.transport_id, 16);
	n = rnsc_discovery_announce_data(C, out, sizeof out, &b, 4, &pl);
	CU_ASSERT_FATAL(n > 0);
	CU_ASSERT(eqhex(out + 1, pl, want2));
	CU_ASSERT_EQUAL(rnsc_discovery_parse(C, &in, out, (size_t)n, 4), RNSC_DISC_OK);
	CU_ASSERT_STRING_EQUAL(in.name, "Discovered BackboneInterface");
	b.reachable_on = NULL;
	CU_ASSERT_EQUAL(rnsc_discovery_announce_data(C, out, sizeof out, &b, 4, &pl),
			RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_discovery_announce_data(C, out, 40, &a, 4, &pl), RNSC_ERR_BUFSIZE);
}

int main(void)
{
	static const wt_test t[] = {
		{"workblock", t_workblock},         {"value_valid", t_value_valid},
		{"generate", t_generate},           {"hostname_ip", t_hostname_ip},
		{"sanitize", t_sanitize},           {"parse", t_parse},
		{"announce_data", t_announce_data},
	};
	return wt_main("stamper", t, sizeof t / sizeof *t);
}
