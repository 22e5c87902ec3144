/* SPDX-License-Identifier: MIT */
/* Announces: building (with/without ratchet and app data), validation, failure injection. */
#include "announce.h"
#include "destination.h"
#include "packet.h"
#include "wire_test_util.h"

/* Destination.announce for identity bytes 00..3f, "rnsc.kat", random source 0x55 * 16,
 * t = 1700000000, ratchet private 0x11 * 32, app data "app" (HEADER_1). */
static const char *ANNOUNCE =
	"21000745ec3c5e50a07cb2ee538387c94515008f40c5adb68f25624ae5b214ea767a6ec94d829d3d7b5e1a"
	"d1ba6f3e2138285f29acbae141bccaf0b22e1a94d34d0bc7361e526d0bfe12c89794bc9322966dd76542f7"
	"817f24f1ff03fab1bfaa407f006553f1007b4e909bbe7ffe44c465a220037d608ee35897d31ef972f07f74"
	"892cb0f73f13b48be84c00f5aa819ade3e1f3dfb51f2cb8a711ccef97e5785473590668d2dadb069479897"
	"5405646e42a8f2b6897d2ae0a4c22bc86a624cf4dc8fe65a53e70e617070";
/* the same identity without ratchet or app data, as a PATH_RESPONSE re-sent HEADER_2 with
 * transport id 10..1f and 5 hops */
static const char *ANNOUNCE_H2 =
	"5105101112131415161718191a1b1c1d1e1f0745ec3c5e50a07cb2ee538387c945150b8f40c5adb68f2562"
	"4ae5b214ea767a6ec94d829d3d7b5e1ad1ba6f3e2138285f29acbae141bccaf0b22e1a94d34d0bc7361e52"
	"6d0bfe12c89794bc9322966dd76542f7817f24f1ff03fab1bfaa407f006553f100b19368d689e2c0bdfd80"
	"20283e6a310302b71cc72f6b9dca2a049ccc4c282c1f8391483e722a8ba288850667f9ada1ab045acb707a"
	"32a41ae9adb70fabe8aa03";

typedef struct kat {
	rnsc_identity id;
	uint8_t dest[16], name_hash[10], ratchet_pub[32], rh[10];
} kat;

static int scripted_rng(void *ud, uint8_t *out, size_t len)
{
	memset(out, *(const uint8_t *)ud, len);
	return 0;
}

static void make_kat(kat *k)
{
	uint8_t prv[64], rprv[32];
	for (int i = 0; i < 64; i++)
		prv[i] = (uint8_t)i;
	memset(rprv, 0x11, 32);
	CU_ASSERT_EQUAL_FATAL(rnsc_identity_from_private(C, &k->id, prv, 64), 0);
	const char *aspects[] = {"kat"};
	CU_ASSERT_EQUAL(rnsc_name_hash(C, k->name_hash, "rnsc", aspects, 1), 0);
	CU_ASSERT_EQUAL(rnsc_destination_hash(C, k->dest, k->id.hash, "rnsc", aspects, 1), 0);
	CU_ASSERT_EQUAL(rnsc_ratchet_public(C, k->ratchet_pub, rprv), 0);
	uint8_t fill = 0x55;
	rnsc_crypto_set_rng(C, scripted_rng, &fill);
	CU_ASSERT_EQUAL(rnsc_announce_random_hash(C, k->rh, 1700000000u), 0);
	rnsc_crypto_set_rng(C, wt_rng, NULL);
}

static int pack_announce(uint8_t *out, size_t cap, const uint8_t *data, size_t n, int ratchet,
			 int ht, int pr)
{
	rnsc_packet p = {0};
	p.header_type = (uint8_t)ht;
	p.transport_type = ht == RNSC_HEADER_2;
	p.packet_type = RNSC_PKT_ANNOUNCE;
	p.context_flag = (uint8_t)ratchet;
	p.context = pr ? RNSC_CTX_PATH_RESPONSE : RNSC_CTX_NONE;
	if (ht == RNSC_HEADER_2) {
		p.hops = 5;
		for (int i = 0; i < 16; i++)
			p.transport_id[i] = (uint8_t)(16 + i);
	}
	uint8_t dest[16];
	unhex(dest, "0745ec3c5e50a07cb2ee538387c94515");
	memcpy(p.dest_hash, dest, 16);
	p.data = data;
	p.data_len = n;
	return rnsc_packet_pack(out, cap, &p, RNSC_MTU);
}

static void t_build_kat(void)
{
	kat k;
	make_kat(&k);
	CU_ASSERT(eqhex(k.dest, 16, "0745ec3c5e50a07cb2ee538387c94515"));
	CU_ASSERT_EQUAL(rnsc_announce_timestamp(k.rh), 1700000000u);
	uint8_t data[400], raw[500];
	int n = rnsc_announce_build(data, sizeof(data), &k.id, k.dest, k.name_hash, k.rh,
				    k.ratchet_pub, (const uint8_t *)"app", 3);
	CU_ASSERT_EQUAL_FATAL(n, (int)rnsc_announce_data_len(1, 3));
	int m = pack_announce(raw, sizeof(raw), data, (size_t)n, 1, RNSC_HEADER_1, 0);
	CU_ASSERT(eqhex(raw, (size_t)m, ANNOUNCE));
	n = rnsc_announce_build(data, sizeof(data), &k.id, k.dest, k.name_hash, k.rh, NULL, NULL,
				0);
	CU_ASSERT_EQUAL_FATAL(n, RNSC_ANNOUNCE_MIN_LEN);
	m = pack_announce(raw, sizeof(raw), data, (size_t)n, 0, RNSC_HEADER_2, 1);
	CU_ASSERT(eqhex(raw, (size_t)m, ANNOUNCE_H2));
	rnsc_identity_free(&k.id);
}

static void t_validate(void)
{
	uint8_t raw[500];
	size_t n = unhex(raw, ANNOUNCE);
	rnsc_packet p;
	CU_ASSERT_EQUAL_FATAL(rnsc_packet_unpack(&p, raw, n), 0);
	rnsc_announce a;
	rnsc_identity who;
	CU_ASSERT_EQUAL_FATAL(rnsc_announce_validate(C, &p, &a, &who), 0);
	CU_ASSERT_PTR_NOT_NULL(a.ratchet);
	CU_ASSERT_EQUAL(a.app_data_len, 3);
	CU_ASSERT(memcmp(a.app_data, "app", 3) == 0);
	CU_ASSERT_EQUAL(rnsc_announce_timestamp(a.random_hash), 1700000000u);
	CU_ASSERT(memcmp(who.ed_pub, a.public_key + 32, 32) == 0);
	CU_ASSERT_EQUAL(rnsc_announce_validate(C, &p, NULL, NULL), 0);

	n = unhex(raw, ANNOUNCE_H2);
	CU_ASSERT_EQUAL_FATAL(rnsc_packet_unpack(&p, raw, n), 0);
	CU_ASSERT_EQUAL(rnsc_announce_validate(C, &p, &a, NULL), 0);
	CU_ASSERT_PTR_NULL(a.ratchet);
	CU_ASSERT_PTR_NULL(a.app_data);
	CU_ASSERT_EQUAL(p.context, RNSC_CTX_PATH_RESPONSE);

	/* every signed byte matters */
	for (size_t i = 2; i < n; i++) {
		if (i >= 2 && i < 18)
			continue; /* the transport id is not signed */
		if (i == 34)
			continue; /* nor the context */
		raw[i] ^= 0x01;
		CU_ASSERT_EQUAL_FATAL(rnsc_packet_unpack(&p, raw, n), 0);
		int rc = rnsc_announce_validate(C, &p, NULL, NULL);
		CU_ASSERT(rc == RNSC_ERR_SIGNATURE);
		raw[i] ^= 0x01;
	}
	CU_ASSERT_EQUAL_FATAL(rnsc_packet_unpack(&p, raw, n), 0);
	CU_ASSERT_EQUAL(rnsc_announce_validate(C, &p, NULL, NULL), 0);
}

static void t_rejects(void)
{
	kat k;
	make_kat(&k);
	uint8_t data[400], raw[500];
	rnsc_packet p;
	rnsc_announce a;
	/* validly signed for a destination the name and identity do not hash to */
	uint8_t other[16] = {1};
	int n = rnsc_announce_build(data, sizeof(data), &k.id, other, k.name_hash, k.rh, NULL, NULL,
				    0);
	CU_ASSERT_EQUAL_FATAL(n, RNSC_ANNOUNCE_MIN_LEN);
	rnsc_packet q = {0};
	q.packet_type = RNSC_PKT_ANNOUNCE;
	memcpy(q.dest_hash, other, 16);
	q.data = data;
	q.data_len = (size_t)n;
	CU_ASSERT_EQUAL(rnsc_announce_validate(C, &q, &a, NULL), RNSC_ERR_DEST_MISMATCH);
	/* short data, with and without the ratchet flag */
	q.data_len = RNSC_ANNOUNCE_MIN_LEN - 1;
	CU_ASSERT_EQUAL(rnsc_announce_validate(C, &q, &a, NULL), RNSC_ERR_TRUNCATED);
	q.data_len = RNSC_ANNOUNCE_MIN_LEN;
	q.context_flag = 1;
	CU_ASSERT_EQUAL(rnsc_announce_parse(&a, &q), RNSC_ERR_TRUNCATED);
	q.context_flag = 0;
	q.packet_type = RNSC_PKT_DATA;
	CU_ASSERT_EQUAL(rnsc_announce_parse(&a, &q), RNSC_ERR_MALFORMED);
	CU_ASSERT_EQUAL(rnsc_announce_parse(NULL, &q), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_announce_parse(&a, NULL), RNSC_ERR_INVAL);
	(void)raw;
	(void)p;
	/* builder arguments */
	CU_ASSERT_EQUAL(
		rnsc_announce_build(data, 10, &k.id, k.dest, k.name_hash, k.rh, NULL, NULL, 0),
		RNSC_ERR_BUFSIZE);
	CU_ASSERT_EQUAL(
		rnsc_announce_build(NULL, 10, &k.id, k.dest, k.name_hash, k.rh, NULL, NULL, 0),
		RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_announce_build(data, sizeof(data), &k.id, k.dest, k.name_hash, k.rh,
					    NULL, NULL, 5),
			RNSC_ERR_INVAL);
	rnsc_identity pub;
	uint8_t pk[64];
	rnsc_identity_public_bytes(&k.id, pk);
	CU_ASSERT_EQUAL(rnsc_identity_from_public(C, &pub, pk, 64), 0);
	CU_ASSERT_EQUAL(rnsc_announce_build(data, sizeof(data), &pub, k.dest, k.name_hash, k.rh,
					    NULL, NULL, 0),
			RNSC_ERR_NOKEY);
	CU_ASSERT_EQUAL(rnsc_announce_random_hash(C, k.rh, UINT64_C(1) << 40), RNSC_ERR_RANGE);
	CU_ASSERT_EQUAL(rnsc_announce_random_hash(C, NULL, 0), RNSC_ERR_INVAL);
	/* a public key the backend cannot decode verifies nothing */
	n = rnsc_announce_build(data, sizeof(data), &k.id, k.dest, k.name_hash, k.rh, NULL, NULL,
				0);
	memset(data + 32, 0xff, 32);
	q.packet_type = RNSC_PKT_ANNOUNCE;
	memcpy(q.dest_hash, k.dest, 16);
	q.data_len = (size_t)n;
	CU_ASSERT_EQUAL(rnsc_announce_validate(C, &q, &a, NULL), RNSC_ERR_SIGNATURE);
	rnsc_identity_free(&k.id);
}

/* The builder and the validator allocate the signed bytes: every failure point returns
 * RNSC_ERR_NOMEM cleanly (the ASan build checks for leaks), then the call succeeds. */
static void t_alloc_failures(void)
{
	kat k;
	make_kat(&k);
	uint8_t data[400];
	int n = 0, nomem = 0;
	for (unsigned long nth = 1; nth < 16; nth++) {
		rnsc_ctx_fail_alloc_after(C, nth);
		n = rnsc_announce_build(data, sizeof(data), &k.id, k.dest, k.name_hash, k.rh,
					k.ratchet_pub, (const uint8_t *)"xyz", 3);
		rnsc_ctx_fail_alloc_after(C, 0);
		if (n != RNSC_ERR_NOMEM)
			break;
		nomem++;
	}
	CU_ASSERT(nomem >= 1);
	CU_ASSERT_EQUAL_FATAL(n, (int)rnsc_announce_data_len(1, 3));
	rnsc_packet q = {0};
	q.packet_type = RNSC_PKT_ANNOUNCE;
	q.context_flag = 1;
	memcpy(q.dest_hash, k.dest, 16);
	q.data = data;
	q.data_len = (size_t)n;
	int rc = 0;
	nomem = 0;
	for (unsigned long nth = 1; nth < 16; nth++) {
		rnsc_ctx_fail_alloc_after(C, nth);
		rc = rnsc_announce_validate(C, &q, NULL, NULL);
		rnsc_ctx_fail_alloc_after(C, 0);
		if (rc != RNSC_ERR_NOMEM)
			break;
		nomem++;
	}
	CU_ASSERT(nomem >= 1);
	CU_ASSERT_EQUAL(rc, 0);
	rnsc_identity_free(&k.id);
}

int main(void)
{
	static const wt_test tests[] = {
		{"build KAT", t_build_kat},
		{"validate", t_validate},
		{"rejections", t_rejects},
		{"allocation failures", t_alloc_failures},
	};
	return wt_main("announce", tests, sizeof(tests) / sizeof(tests[0]));
}
