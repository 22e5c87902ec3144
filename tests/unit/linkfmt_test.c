/* SPDX-License-Identifier: MIT */
/* Link payload layouts: signalling, request, proof, RTT, keepalive, close, identify. */
#include "destination.h"
#include "linkfmt.h"
#include "packet.h"
#include "token.h"
#include "wire_test_util.h"

/* A link request from X25519 key 0x31 * 32 / Ed25519 seed 0x32 * 32 to 00..0f signalling
 * MTU 8192, the link id, the LRPROOF of the destination (identity 00..3f, ephemeral X25519
 * key 0x41 * 32), the derived link key, and the RTT (0.25 s) and identify (identity 00..3f)
 * packets with IV 0x05 * 16, all from rns 1.5.4. */
static const char *LR =
	"0200000102030405060708090a0b0c0d0e0f0004f5f29162c31a8defa18e6e742224ee806fc1718a278be85"
	"9ba5620402b8f3a5e212c0980e4b39fc09721134aa02109374edfd260c0d3d03cb501c8d65457a9202000";
static const char *LINK_ID = "e59175973010c10b699470a68d09a76b";
static const char *LRPROOF =
	"0f00e59175973010c10b699470a68d09a76bff1fed18a9eed366d5c7160a7aa4d649d9500213c532a9e112"
	"765d233311222bd1aa08917162b3122fb24f2905d4f1bdee19ec83f7c30f9d8edd88af8ab12f2a057a1a4e"
	"709bf085ac494aba0469b9b1eda0ab1f78b16aabb79ffeda90623e8522202000";
static const char *LINK_KEY =
	"3e4bf2f9d4c3eed066a89c662a3054b3eb81343496aab38adeb258a2caad39de441d5d4cc44deb5e633a92"
	"2c823fc2c426b75cf94e72f54e429786837da05b84";
static const char *RTT_PACKET =
	"0c00e59175973010c10b699470a68d09a76bfe050505050505050505050505050505050a279e9346692fce"
	"4a732e3fdf0a00522ca42a38b0e9e9d843c358d659e0b55340d4f2e68137436d39e0d13984b5923a";
static const char *IDENTIFY_PACKET =
	"0c00e59175973010c10b699470a68d09a76bfb05050505050505050505050505050505c971e8e208e422316e"
	"c421881697235042b67e4cce26dd42b118292e2a02f3c58f01b823bc72d20c1dfdf3c66964035e4d3ff0cb"
	"4a83741dbc5ef4cf7b23143cef49674a59ca3a1fee39367bf3d5893ec169a4b784e880196f968ea105a283"
	"dfbc7198d6cd4736b1d7c1ede9f3dccd3fc07793211dc688992da00f196ed8d6d449d99d178be47534cdae"
	"473980953e0f88b5b8ea46168dca852de720a1ceae1ad63fad03ef131f64adeb0b52944c84b7";

static rnsc_identity DEST;
static uint8_t LID[16], KEY[64], IV[16];

static void t_signalling(void)
{
	uint8_t s[3];
	uint32_t mtu;
	int mode;
	CU_ASSERT_EQUAL(rnsc_link_signalling(s, 8192, RNSC_LINK_MODE_AES256_CBC), 0);
	CU_ASSERT(eqhex(s, 3, "202000"));
	rnsc_link_signalling_decode(s, &mtu, &mode);
	CU_ASSERT_EQUAL(mtu, 8192);
	CU_ASSERT_EQUAL(mode, 1);
	CU_ASSERT_EQUAL(rnsc_link_signalling(s, RNSC_LINK_MTU_BYTEMASK, 1), 0);
	CU_ASSERT(eqhex(s, 3, "3fffff"));
	CU_ASSERT_EQUAL(rnsc_link_signalling(s, RNSC_LINK_MTU_BYTEMASK + 1, 1), RNSC_ERR_RANGE);
	for (int m = 0; m < 8; m++)
		if (m != RNSC_LINK_MODE_AES256_CBC)
			CU_ASSERT_EQUAL(rnsc_link_signalling(s, 500, m), RNSC_ERR_LINK_MODE);
	CU_ASSERT_EQUAL(rnsc_link_signalling(NULL, 500, 1), RNSC_ERR_INVAL);
	CU_ASSERT_STRING_EQUAL(rnsc_link_mode_name(RNSC_LINK_MODE_PQ_RESERVED_4), "PQ_RESERVED_4");
	CU_ASSERT_PTR_NULL(rnsc_link_mode_name(8));
	CU_ASSERT_PTR_NULL(rnsc_link_mode_name(-1));
	uint8_t odd[3] = {0xe0, 0, 0};
	rnsc_link_signalling_decode(odd, NULL, &mode);
	CU_ASSERT_EQUAL(mode, 7);
}

static void t_request(void)
{
	uint8_t x[32], e[32], xp[32], ep[32], data[80], raw[200], lid[16];
	memset(x, 0x31, 32);
	memset(e, 0x32, 32);
	CU_ASSERT_EQUAL(rnsc_x25519_public(C, xp, x), 0);
	CU_ASSERT_EQUAL(rnsc_ed25519_public(C, ep, e), 0);
	int n = rnsc_link_request_build(data, sizeof(data), xp, ep, 1, 8192, 1);
	CU_ASSERT_EQUAL_FATAL(n, 67);
	rnsc_packet p = {0};
	p.packet_type = RNSC_PKT_LINKREQUEST;
	for (int i = 0; i < 16; i++)
		p.dest_hash[i] = (uint8_t)i;
	p.data = data;
	p.data_len = (size_t)n;
	int m = rnsc_packet_pack(raw, sizeof(raw), &p, RNSC_MTU);
	CU_ASSERT(eqhex(raw, (size_t)m, LR));
	CU_ASSERT_EQUAL(rnsc_link_id_from_request(C, lid, raw, (size_t)m), 0);
	CU_ASSERT(eqhex(lid, 16, LINK_ID));
	rnsc_link_request r;
	CU_ASSERT_EQUAL(rnsc_link_request_parse(&r, data, 67), 0);
	CU_ASSERT(r.has_signalling && r.mtu == 8192 && r.mode == 1);
	CU_ASSERT(memcmp(r.ed25519_pub, ep, 32) == 0);
	CU_ASSERT_EQUAL(rnsc_link_request_parse(&r, data, 64), 0);
	CU_ASSERT(!r.has_signalling && r.mtu == RNSC_MTU && r.mode == 1);
	data[64] = 0x20, data[65] = data[66] = 0; /* MTU 0 means 500 */
	CU_ASSERT_EQUAL(rnsc_link_request_parse(&r, data, 67), 0);
	CU_ASSERT_EQUAL(r.mtu, RNSC_MTU);
	data[64] = 0x00; /* AES-128 */
	CU_ASSERT_EQUAL(rnsc_link_request_parse(&r, data, 67), RNSC_ERR_LINK_MODE);
	for (size_t len = 0; len < 80; len++)
		if (len != 64 && len != 67)
			CU_ASSERT_EQUAL(rnsc_link_request_parse(&r, data, len), RNSC_ERR_MALFORMED);
	CU_ASSERT_EQUAL(rnsc_link_request_parse(NULL, data, 64), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_link_request_build(data, 66, xp, ep, 1, 8192, 1), RNSC_ERR_BUFSIZE);
	CU_ASSERT_EQUAL(rnsc_link_request_build(data, 80, xp, ep, 0, 0, 0), 64);
	CU_ASSERT_EQUAL(rnsc_link_request_build(data, 80, xp, ep, 1, 500, 0), RNSC_ERR_LINK_MODE);
	CU_ASSERT_EQUAL(rnsc_link_request_build(NULL, 80, xp, ep, 1, 500, 1), RNSC_ERR_INVAL);
}

static void t_proof(void)
{
	uint8_t prv[64], eph[32], ephp[32], data[100], raw[200];
	for (int i = 0; i < 64; i++)
		prv[i] = (uint8_t)i;
	CU_ASSERT_EQUAL_FATAL(rnsc_identity_from_private(C, &DEST, prv, 64), 0);
	unhex(LID, LINK_ID);
	memset(eph, 0x41, 32);
	CU_ASSERT_EQUAL(rnsc_x25519_public(C, ephp, eph), 0);
	int n = rnsc_link_proof_build(data, sizeof(data), &DEST, LID, ephp, 1, 8192, 1);
	CU_ASSERT_EQUAL_FATAL(n, 99);
	rnsc_packet p = {0};
	p.packet_type = RNSC_PKT_PROOF;
	p.context = RNSC_CTX_LRPROOF;
	memcpy(p.dest_hash, LID, 16);
	p.data = data;
	p.data_len = (size_t)n;
	int m = rnsc_packet_pack(raw, sizeof(raw), &p, RNSC_MTU);
	CU_ASSERT(eqhex(raw, (size_t)m, LRPROOF));
	rnsc_link_proof lp;
	CU_ASSERT_EQUAL(rnsc_link_proof_validate(C, &lp, data, 99, LID, DEST.ed_pub, 1), 0);
	CU_ASSERT(lp.has_signalling && lp.mtu == 8192 && memcmp(lp.x25519_pub, ephp, 32) == 0);
	CU_ASSERT_EQUAL(rnsc_link_proof_validate(C, &lp, data, 96, LID, DEST.ed_pub, 1),
			RNSC_ERR_SIGNATURE);
	CU_ASSERT_EQUAL(rnsc_link_proof_validate(C, &lp, data, 98, LID, DEST.ed_pub, 1),
			RNSC_ERR_MALFORMED);
	CU_ASSERT_EQUAL(rnsc_link_proof_validate(C, &lp, data, 99, LID, DEST.ed_pub, 0),
			RNSC_ERR_LINK_MODE);
	CU_ASSERT_EQUAL(rnsc_link_proof_validate(C, &lp, data, 99, LID, DEST.x_pub, 1),
			RNSC_ERR_SIGNATURE);
	CU_ASSERT_EQUAL(rnsc_link_proof_validate(C, NULL, data, 99, LID, DEST.ed_pub, 1),
			RNSC_ERR_INVAL);
	/* without signalling (older peers): 96 bytes, MTU 500 */
	n = rnsc_link_proof_build(data, sizeof(data), &DEST, LID, ephp, 0, 0, 0);
	CU_ASSERT_EQUAL_FATAL(n, 96);
	CU_ASSERT_EQUAL(rnsc_link_proof_validate(C, &lp, data, 96, LID, DEST.ed_pub, 1), 0);
	CU_ASSERT(!lp.has_signalling && lp.mtu == RNSC_MTU);
	uint8_t bad[32];
	memset(bad, 0xff, 32);
	CU_ASSERT_EQUAL(rnsc_link_proof_validate(C, &lp, data, 96, LID, bad, 1),
			RNSC_ERR_SIGNATURE);
	CU_ASSERT_EQUAL(rnsc_link_proof_build(data, 98, &DEST, LID, ephp, 1, 500, 1),
			RNSC_ERR_BUFSIZE);
	CU_ASSERT_EQUAL(rnsc_link_proof_build(data, 99, &DEST, LID, ephp, 1, 500, 2),
			RNSC_ERR_LINK_MODE);
	CU_ASSERT_EQUAL(rnsc_link_proof_build(NULL, 99, &DEST, LID, ephp, 1, 500, 1),
			RNSC_ERR_INVAL);
	rnsc_identity pub;
	uint8_t pk[64];
	rnsc_identity_public_bytes(&DEST, pk);
	CU_ASSERT_EQUAL(rnsc_identity_from_public(C, &pub, pk, 64), 0);
	CU_ASSERT_EQUAL(rnsc_link_proof_build(data, 99, &pub, LID, ephp, 1, 500, 1),
			RNSC_ERR_NOKEY);
	/* both ends derive the same key */
	uint8_t x[32], shared[32], key[64];
	memset(x, 0x31, 32);
	CU_ASSERT_EQUAL(rnsc_x25519(C, shared, x, ephp), 0);
	CU_ASSERT_EQUAL(rnsc_hkdf_sha256(C, key, 64, shared, 32, LID, 16, NULL, 0), 0);
	CU_ASSERT(eqhex(key, 64, LINK_KEY));
	memcpy(KEY, key, 64);
	memset(IV, 0x05, 16);
}

/* Seals pt with the link token and packs it as a link packet of context ctx. */
static int seal(uint8_t *raw, size_t cap, int ctx, const uint8_t *pt, size_t len)
{
	uint8_t tok[400];
	rnsc_token t;
	if (rnsc_token_init(&t, C, KEY, 64))
		return -1;
	int n = rnsc_token_encrypt_iv(&t, tok, sizeof(tok), IV, pt, len);
	rnsc_token_free(&t);
	rnsc_packet p = {0};
	p.dest_type = RNSC_DEST_LINK;
	p.context = (uint8_t)ctx;
	memcpy(p.dest_hash, LID, 16);
	p.data = tok;
	p.data_len = (size_t)n;
	return n < 0 ? n : rnsc_packet_pack(raw, cap, &p, RNSC_MTU);
}

static void t_rtt(void)
{
	uint8_t pt[16], raw[200];
	int n = rnsc_link_rtt_encode(pt, sizeof(pt), 0.25);
	CU_ASSERT_EQUAL_FATAL(n, 9);
	CU_ASSERT(eqhex(pt, 9, "cb3fd0000000000000"));
	int m = seal(raw, sizeof(raw), RNSC_CTX_LRRTT, pt, 9);
	CU_ASSERT(eqhex(raw, (size_t)m, RTT_PACKET));
	double rtt = 0;
	CU_ASSERT_EQUAL(rnsc_link_rtt_decode(pt, 9, &rtt), 0);
	CU_ASSERT(rtt == 0.25);
	static const uint8_t f32[] = {0xca, 0x3e, 0x80, 0, 0}, u[] = {0x05}, i[] = {0xff},
			     str[] = {0xa1, 'x'}, big[] = {0xcd, 0x01, 0x00};
	CU_ASSERT_EQUAL(rnsc_link_rtt_decode(f32, 5, &rtt), 0);
	CU_ASSERT(rtt == 0.25);
	CU_ASSERT_EQUAL(rnsc_link_rtt_decode(u, 1, &rtt), 0);
	CU_ASSERT(rtt == 5.0);
	CU_ASSERT_EQUAL(rnsc_link_rtt_decode(i, 1, &rtt), 0);
	CU_ASSERT(rtt == -1.0);
	CU_ASSERT_EQUAL(rnsc_link_rtt_decode(big, 3, &rtt), 0);
	CU_ASSERT_EQUAL(rnsc_link_rtt_decode(str, 2, &rtt), RNSC_ERR_MALFORMED);
	CU_ASSERT_EQUAL(rnsc_link_rtt_decode(pt, 8, &rtt), RNSC_ERR_TRUNCATED);
	CU_ASSERT_EQUAL(rnsc_link_rtt_decode(pt, 0, &rtt), RNSC_ERR_TRUNCATED);
	pt[9] = 0xc0;
	CU_ASSERT_EQUAL(rnsc_link_rtt_decode(pt, 10, &rtt), RNSC_ERR_MALFORMED);
	CU_ASSERT_EQUAL(rnsc_link_rtt_decode(pt, 9, NULL), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_link_rtt_encode(pt, 8, 1.0), RNSC_ERR_BUFSIZE);
	CU_ASSERT_EQUAL(rnsc_link_rtt_encode(NULL, 8, 1.0), RNSC_ERR_INVAL);
}

static void t_keepalive_close(void)
{
	uint8_t b = 0xFF;
	CU_ASSERT_EQUAL(rnsc_link_keepalive_parse(&b, 1), RNSC_LINK_KEEPALIVE_REQUEST);
	b = 0xFE;
	CU_ASSERT_EQUAL(rnsc_link_keepalive_parse(&b, 1), RNSC_LINK_KEEPALIVE_RESPONSE);
	b = 0x00;
	CU_ASSERT_EQUAL(rnsc_link_keepalive_parse(&b, 1), RNSC_ERR_MALFORMED);
	CU_ASSERT_EQUAL(rnsc_link_keepalive_parse(&b, 0), RNSC_ERR_MALFORMED);
	CU_ASSERT_EQUAL(rnsc_link_keepalive_parse(NULL, 1), RNSC_ERR_MALFORMED);
	CU_ASSERT_EQUAL(rnsc_link_close_check(LID, 16, LID), 0);
	CU_ASSERT_EQUAL(rnsc_link_close_check(LID, 15, LID), RNSC_ERR_MALFORMED);
	uint8_t other[16];
	memcpy(other, LID, 16);
	other[0] ^= 1;
	CU_ASSERT_EQUAL(rnsc_link_close_check(other, 16, LID), RNSC_ERR_NOTFOUND);
	CU_ASSERT_EQUAL(rnsc_link_close_check(NULL, 16, LID), RNSC_ERR_INVAL);
}

static void t_identify(void)
{
	uint8_t pt[200], raw[300];
	int n = rnsc_link_identify_build(pt, sizeof(pt), &DEST, LID);
	CU_ASSERT_EQUAL_FATAL(n, 128);
	int m = seal(raw, sizeof(raw), RNSC_CTX_LINKIDENTIFY, pt, 128);
	CU_ASSERT(eqhex(raw, (size_t)m, IDENTIFY_PACKET));
	rnsc_identity who;
	CU_ASSERT_EQUAL(rnsc_link_identify_validate(C, &who, pt, 128, LID), 0);
	CU_ASSERT(memcmp(who.hash, DEST.hash, 16) == 0);
	CU_ASSERT_EQUAL(rnsc_link_identify_validate(C, NULL, pt, 127, LID), RNSC_ERR_MALFORMED);
	pt[100] ^= 1;
	CU_ASSERT_EQUAL(rnsc_link_identify_validate(C, NULL, pt, 128, LID), RNSC_ERR_SIGNATURE);
	pt[100] ^= 1;
	memset(pt + 32, 0xff, 32); /* not a point */
	CU_ASSERT_EQUAL(rnsc_link_identify_validate(C, NULL, pt, 128, LID), RNSC_ERR_SIGNATURE);
	CU_ASSERT_EQUAL(rnsc_link_identify_validate(C, NULL, NULL, 128, LID), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_link_identify_build(pt, 127, &DEST, LID), RNSC_ERR_BUFSIZE);
	CU_ASSERT_EQUAL(rnsc_link_identify_build(NULL, 128, &DEST, LID), RNSC_ERR_INVAL);
	rnsc_identity pub;
	uint8_t pk[64];
	rnsc_identity_public_bytes(&DEST, pk);
	CU_ASSERT_EQUAL(rnsc_identity_from_public(C, &pub, pk, 64), 0);
	CU_ASSERT_EQUAL(rnsc_link_identify_build(pt, 128, &pub, LID), RNSC_ERR_NOKEY);
}

static void t_no_alloc(void)
{
	uint8_t pt[200];
	rnsc_ctx_fail_alloc_after(C, 1);
	CU_ASSERT_EQUAL(rnsc_link_identify_build(pt, sizeof(pt), &DEST, LID), 128);
	CU_ASSERT_EQUAL(rnsc_link_identify_validate(C, NULL, pt, 128, LID), 0);
	CU_ASSERT_EQUAL(rnsc_ctx_fail_alloc_after(C, 0), 0);
	rnsc_identity_free(&DEST);
}

int main(void)
{
	static const wt_test tests[] = {
		{"signalling", t_signalling},
		{"link request", t_request},
		{"link proof", t_proof},
		{"RTT", t_rtt},
		{"keepalive and close", t_keepalive_close},
		{"identify", t_identify},
		{"no allocation", t_no_alloc},
	};
	return wt_main("linkfmt", tests, sizeof(tests) / sizeof(tests[0]));
}
