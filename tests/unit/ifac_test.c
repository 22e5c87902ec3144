/* SPDX-License-Identifier: MIT */
/* Interface access codes: derivation, masking, unmasking, drops and counters. */
#include "ifac.h"
#include "packet.h"
#include "wire_test_util.h"

/* network name "rnsc", passphrase "kat", 8-byte codes (rns 1.5.4) */
static const char *KEY =
	"33bdf8f5c9505b13b089dab5361717eff83b518ecdb1d4b96a3d210905de1c72c196d271cc88214a7e2fcf"
	"b258dbd868696b17a04eb2d503571e837b48539ce6";
static const char *PUB =
	"0fd5f47a4c2a52b1497258887b7dc382f2d8e30dfaa95e6ea5df3acc63ac105f76ca321d5dfeda72e47090"
	"90def5d923df88ca539bb5ea7eaf99a164e9d7cec6";
static const char *SIG =
	"810e46d0e8ce62899406e5393d7905b3255699dd152b199c6d590f4ed5b7f107ea07f16c9ebfde5a7f9312"
	"5546a3c17bea103e4b1a618215efdf36542ca3fb01";
static const char *PKT = "0803000102030405060708090a0b0c0d0e0f0068656c6c6f";
static const char *FRAME = "8c7c02a47a2db8cea9072be09a31c5cc9d37b6e0b626075d50a9e711715981b5";
static const char *KEY_NAME_ONLY =
	"93130b1dd9c921f0f2ace67aea4dff0de582ee0c70405cc0f24dece7257e9e339c89abf6e54035106dda07"
	"3096c6859f994a58ebbc67b075d7bfb36a6d1d2af5";
static const char *KEY_PASS_ONLY =
	"405bc4540bdf242c623452bad44b50aa967a830d164b0fa79073c8b55078673406026d73cbb7c7bbd03e6c"
	"69169eef71c8e28d70502dbf7dc775a6b3d275c4c6";
/* SHA-256 of the 16-byte-code frame for a 9019-byte packet (past HKDF's 255 blocks) */
static const char *BIG_SHA = "3df8b2b2cfdb5eab6b33bd5530f8cbc17e57fbfc05af14837b27621f18f14e74";

static void t_derive(void)
{
	rnsc_ifac f;
	CU_ASSERT_EQUAL_FATAL(rnsc_ifac_init(&f, C, "rnsc", "kat", 8), 0);
	CU_ASSERT(eqhex(f.key, 64, KEY));
	uint8_t pub[64];
	rnsc_identity_public_bytes(&f.identity, pub);
	CU_ASSERT(eqhex(pub, 64, PUB));
	CU_ASSERT(eqhex(f.signature, 64, SIG));
	rnsc_ifac_free(&f);
	CU_ASSERT_EQUAL(rnsc_ifac_init(&f, C, "rnsc", NULL, 16), 0);
	CU_ASSERT(eqhex(f.key, 64, KEY_NAME_ONLY));
	rnsc_ifac_free(&f);
	CU_ASSERT_EQUAL(rnsc_ifac_init(&f, C, "", "kat", 16), 0);
	CU_ASSERT(eqhex(f.key, 64, KEY_PASS_ONLY));
	rnsc_ifac_free(&f);
	CU_ASSERT_EQUAL(rnsc_ifac_init(&f, C, NULL, "", 16), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_ifac_init(&f, C, "a", NULL, 0), RNSC_ERR_RANGE);
	CU_ASSERT_EQUAL(rnsc_ifac_init(&f, C, "a", NULL, 65), RNSC_ERR_RANGE);
	CU_ASSERT_EQUAL(rnsc_ifac_init(NULL, C, "a", NULL, 8), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_ifac_size_from_bits(128), 16);
	CU_ASSERT_EQUAL(rnsc_ifac_size_from_bits(12), 1);
	CU_ASSERT_EQUAL(rnsc_ifac_size_from_bits(7), 0);
	CU_ASSERT_EQUAL(rnsc_ifac_size_from_bits(-8), 0);
}

static void t_mask(void)
{
	rnsc_ifac f;
	CU_ASSERT_EQUAL_FATAL(rnsc_ifac_init(&f, C, "rnsc", "kat", 8), 0);
	uint8_t pkt[64], frame[64], back[64];
	size_t n = unhex(pkt, PKT);
	int m = rnsc_ifac_apply(&f, frame, sizeof(frame), pkt, n);
	CU_ASSERT_EQUAL_FATAL(m, (int)n + 8);
	CU_ASSERT(eqhex(frame, (size_t)m, FRAME));
	rnsc_ifac_stats st = {0};
	CU_ASSERT_EQUAL(rnsc_ifac_check(&f, &st, back, sizeof(back), frame, (size_t)m), (int)n);
	CU_ASSERT(memcmp(back, pkt, n) == 0);
	CU_ASSERT_EQUAL(st.accepted, 1);
	CU_ASSERT_EQUAL(st.violations, 0);
	/* arguments */
	CU_ASSERT_EQUAL(rnsc_ifac_apply(&f, frame, (size_t)m - 1, pkt, n), RNSC_ERR_BUFSIZE);
	CU_ASSERT_EQUAL(rnsc_ifac_apply(&f, frame, sizeof(frame), pkt, 1), RNSC_ERR_TRUNCATED);
	CU_ASSERT_EQUAL(rnsc_ifac_apply(&f, frame, sizeof(frame), frame, 4), RNSC_ERR_MALFORMED);
	CU_ASSERT_EQUAL(rnsc_ifac_apply(NULL, frame, sizeof(frame), pkt, n), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_ifac_check(&f, &st, back, (size_t)m - 1, frame, (size_t)m),
			RNSC_ERR_BUFSIZE);
	CU_ASSERT_EQUAL(rnsc_ifac_check(&f, &st, NULL, 64, frame, (size_t)m), RNSC_ERR_INVAL);
	rnsc_ifac_free(&f);
}

static void t_big(void)
{
	rnsc_ifac f;
	CU_ASSERT_EQUAL_FATAL(rnsc_ifac_init(&f, C, "rnsc", "kat", 16), 0);
	static uint8_t pkt[9100], frame[9200], back[9200];
	size_t n = 19 + 9000;
	memset(pkt, 0, 19);
	pkt[1] = 1;
	for (int i = 0; i < 16; i++)
		pkt[2 + i] = (uint8_t)i;
	for (size_t i = 0; i < 9000; i++)
		pkt[19 + i] = (uint8_t)i;
	int m = rnsc_ifac_apply(&f, frame, sizeof(frame), pkt, n);
	CU_ASSERT_EQUAL_FATAL(m, (int)n + 16);
	uint8_t h[32];
	CU_ASSERT_EQUAL(rnsc_sha256(C, h, frame, (size_t)m), 0);
	CU_ASSERT(eqhex(h, 32, BIG_SHA));
	CU_ASSERT_EQUAL(rnsc_ifac_check(&f, NULL, back, sizeof(back), frame, (size_t)m), (int)n);
	CU_ASSERT(memcmp(back, pkt, n) == 0);
	/* the first 8160 bytes are plain RFC 5869 HKDF */
	static uint8_t a[8160], b[8160];
	CU_ASSERT_EQUAL(rnsc_ifac_hkdf(C, a, sizeof(a), f.key, 64, (const uint8_t *)"salt", 4), 0);
	CU_ASSERT_EQUAL(
		rnsc_hkdf_sha256(C, b, sizeof(b), f.key, 64, (const uint8_t *)"salt", 4, NULL, 0),
		0);
	CU_ASSERT(memcmp(a, b, sizeof(a)) == 0);
	CU_ASSERT_EQUAL(rnsc_ifac_hkdf(C, a, 32, f.key, 64, NULL, 0), 0);
	CU_ASSERT_EQUAL(rnsc_hkdf_sha256(C, b, 32, f.key, 64, NULL, 0, NULL, 0), 0);
	CU_ASSERT(memcmp(a, b, 32) == 0);
	CU_ASSERT_EQUAL(rnsc_ifac_hkdf(C, a, 0, f.key, 64, NULL, 0), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_ifac_hkdf(C, a, 10, f.key, 0, NULL, 0), RNSC_ERR_INVAL);
	rnsc_ifac_free(&f);
}

static void t_drops(void)
{
	rnsc_ifac f, g;
	CU_ASSERT_EQUAL_FATAL(rnsc_ifac_init(&f, C, "rnsc", "kat", 8), 0);
	CU_ASSERT_EQUAL_FATAL(rnsc_ifac_init(&g, C, "rnsc", "other", 8), 0);
	uint8_t pkt[64], frame[64], m[64], back[64];
	size_t n = unhex(pkt, PKT);
	int fl = rnsc_ifac_apply(&f, frame, sizeof(frame), pkt, n);
	rnsc_ifac_stats st = {0};
	/* a flipped code byte, payload byte; cleared flag; too short; wrong key */
	memcpy(m, frame, (size_t)fl);
	m[3] ^= 1;
	CU_ASSERT_EQUAL(rnsc_ifac_check(&f, &st, back, 64, m, (size_t)fl), RNSC_ERR_IFAC);
	memcpy(m, frame, (size_t)fl);
	m[20] ^= 1;
	CU_ASSERT_EQUAL(rnsc_ifac_check(&f, &st, back, 64, m, (size_t)fl), RNSC_ERR_IFAC);
	memcpy(m, frame, (size_t)fl);
	m[0] &= 0x7f;
	CU_ASSERT_EQUAL(rnsc_ifac_check(&f, &st, back, 64, m, (size_t)fl), RNSC_ERR_IFAC_MISSING);
	CU_ASSERT_EQUAL(rnsc_ifac_check(&f, &st, back, 64, frame, 10), RNSC_ERR_IFAC);
	CU_ASSERT_EQUAL(rnsc_ifac_check(&g, &st, back, 64, frame, (size_t)fl), RNSC_ERR_IFAC);
	CU_ASSERT_EQUAL(st.violations, 5);
	CU_ASSERT_EQUAL(st.bad_code, 3);
	CU_ASSERT_EQUAL(st.missing, 1);
	CU_ASSERT_EQUAL(st.too_short, 1);
	/* runts are protocol violations, not IFAC ones */
	CU_ASSERT_EQUAL(rnsc_ifac_check(&f, &st, back, 64, frame, 2), RNSC_ERR_TRUNCATED);
	CU_ASSERT_EQUAL(rnsc_ifac_check(NULL, &st, back, 64, frame, 2), RNSC_ERR_TRUNCATED);
	CU_ASSERT_EQUAL(st.runts, 2);
	CU_ASSERT_EQUAL(st.violations, 5);
	/* interfaces without IFAC: plain frames pass, flagged frames drop */
	CU_ASSERT_EQUAL(rnsc_ifac_check(NULL, &st, back, 64, pkt, n), (int)n);
	CU_ASSERT(memcmp(back, pkt, n) == 0);
	CU_ASSERT_EQUAL(rnsc_ifac_check(NULL, &st, back, 64, frame, (size_t)fl),
			RNSC_ERR_IFAC_UNEXPECTED);
	CU_ASSERT_EQUAL(rnsc_ifac_check(NULL, &st, back, 3, pkt, n), RNSC_ERR_BUFSIZE);
	CU_ASSERT_EQUAL(st.unexpected, 1);
	CU_ASSERT_EQUAL(st.violations, 6);
	CU_ASSERT_EQUAL(st.accepted, 1);
	/* no stats pointer is fine */
	CU_ASSERT_EQUAL(rnsc_ifac_check(&f, NULL, back, 64, frame, (size_t)fl), (int)n);
	rnsc_ifac_free(&g);
	rnsc_ifac_free(&f);
	rnsc_ifac_free(NULL);
}

static void t_no_alloc(void)
{
	rnsc_ifac f;
	uint8_t pkt[64], frame[64], back[64];
	size_t n = unhex(pkt, PKT);
	rnsc_ctx_fail_alloc_after(C, 1);
	CU_ASSERT_EQUAL(rnsc_ifac_init(&f, C, "rnsc", "kat", 8), 0);
	int m = rnsc_ifac_apply(&f, frame, sizeof(frame), pkt, n);
	CU_ASSERT_EQUAL(rnsc_ifac_check(&f, NULL, back, sizeof(back), frame, (size_t)m), (int)n);
	CU_ASSERT_EQUAL(rnsc_ctx_fail_alloc_after(C, 0), 0);
	rnsc_ifac_free(&f);
}

int main(void)
{
	static const wt_test tests[] = {
		{"derivation", t_derive},          {"masking KAT", t_mask},
		{"frames past 8160 bytes", t_big}, {"drops and counters", t_drops},
		{"no allocation", t_no_alloc},
	};
	return wt_main("ifac", tests, sizeof(tests) / sizeof(tests[0]));
}
