/* SPDX-License-Identifier: MIT */
/* Proofs: explicit and implicit forms, proof destinations, receipt validation, link proofs. */
#include "destination.h"
#include "packet.h"
#include "proof.h"
#include "wire_test_util.h"

/* the packet 08 03 00..0f 00 "hello" (packet_test.c) proved by identity 00..3f */
static const char *PACKET_HASH = "51e3b11a116cd54b013e0840ad682ae14956b583427f7cc4cec6ae0e1519136f";
static const char *PROOF_EXPLICIT =
	"030051e3b11a116cd54b013e0840ad682ae10051e3b11a116cd54b013e0840ad682ae14956b583427f7cc4c"
	"ec6ae0e1519136fb263ad25a00144e8583026296aba1cc1a3865726e7cabc5795207566689f402840c911a"
	"249ff20755eb5b1913892967f6df1ce5db0ef63e517c5f840cb730002";
static const char *PROOF_IMPLICIT =
	"030051e3b11a116cd54b013e0840ad682ae100b263ad25a00144e8583026296aba1cc1a3865726e7cabc57"
	"95207566689f402840c911a249ff20755eb5b1913892967f6df1ce5db0ef63e517c5f840cb730002";
/* Link.prove_packet on a link whose signing key is the identity's Ed25519 seed (32..3f) */
static const char *LINK_PROOF =
	"0f00000102030405060708090a0b0c0d0e0f0051e3b11a116cd54b013e0840ad682ae14956b583427f7cc4"
	"cec6ae0e1519136fb263ad25a00144e8583026296aba1cc1a3865726e7cabc5795207566689f402840c911"
	"a249ff20755eb5b1913892967f6df1ce5db0ef63e517c5f840cb730002";

static rnsc_identity ID;
static uint8_t PH[32];

static void load(void)
{
	uint8_t prv[64];
	for (int i = 0; i < 64; i++)
		prv[i] = (uint8_t)i;
	CU_ASSERT_EQUAL_FATAL(rnsc_identity_from_private(C, &ID, prv, 64), 0);
	unhex(PH, PACKET_HASH);
}

static void t_build(void)
{
	load();
	uint8_t proof[96], raw[200];
	rnsc_packet p;
	int n = rnsc_proof_build(proof, sizeof(proof), &ID, PH, 0);
	CU_ASSERT_EQUAL_FATAL(n, RNSC_PROOF_EXPLICIT_LEN);
	rnsc_proof_packet(&p, PH, proof, (size_t)n);
	int m = rnsc_packet_pack(raw, sizeof(raw), &p, RNSC_MTU);
	CU_ASSERT(eqhex(raw, (size_t)m, PROOF_EXPLICIT));
	n = rnsc_proof_build(proof, sizeof(proof), &ID, PH, 1);
	CU_ASSERT_EQUAL_FATAL(n, RNSC_PROOF_IMPLICIT_LEN);
	rnsc_proof_packet(&p, PH, proof, (size_t)n);
	m = rnsc_packet_pack(raw, sizeof(raw), &p, RNSC_MTU);
	CU_ASSERT(eqhex(raw, (size_t)m, PROOF_IMPLICIT));
	uint8_t dest[16];
	rnsc_proof_destination(dest, PH);
	CU_ASSERT(memcmp(dest, PH, 16) == 0);
	/* over a link */
	n = rnsc_proof_build_link(C, proof, sizeof(proof), ID.ed_seed, ID.ed_pub, PH);
	CU_ASSERT_EQUAL_FATAL(n, 96);
	rnsc_proof_packet(&p, PH, proof, (size_t)n);
	p.dest_type = RNSC_DEST_LINK;
	for (int i = 0; i < 16; i++)
		p.dest_hash[i] = (uint8_t)i;
	m = rnsc_packet_pack(raw, sizeof(raw), &p, RNSC_MTU);
	CU_ASSERT(eqhex(raw, (size_t)m, LINK_PROOF));
	/* arguments */
	CU_ASSERT_EQUAL(rnsc_proof_build(proof, 95, &ID, PH, 0), RNSC_ERR_BUFSIZE);
	CU_ASSERT_EQUAL(rnsc_proof_build(proof, 63, &ID, PH, 1), RNSC_ERR_BUFSIZE);
	CU_ASSERT_EQUAL(rnsc_proof_build(NULL, 96, &ID, PH, 1), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_proof_build_link(C, proof, 95, ID.ed_seed, ID.ed_pub, PH),
			RNSC_ERR_BUFSIZE);
	CU_ASSERT_EQUAL(rnsc_proof_build_link(C, NULL, 96, ID.ed_seed, ID.ed_pub, PH),
			RNSC_ERR_INVAL);
	rnsc_identity pub;
	uint8_t pk[64];
	rnsc_identity_public_bytes(&ID, pk);
	CU_ASSERT_EQUAL(rnsc_identity_from_public(C, &pub, pk, 64), 0);
	CU_ASSERT_EQUAL(rnsc_proof_build(proof, 96, &pub, PH, 0), RNSC_ERR_NOKEY);
}

static void t_validate(void)
{
	uint8_t raw[200];
	size_t n = unhex(raw, PROOF_EXPLICIT);
	rnsc_packet p;
	CU_ASSERT_EQUAL_FATAL(rnsc_packet_unpack(&p, raw, n), 0);
	CU_ASSERT_EQUAL(rnsc_proof_validate(&ID, PH, p.data, p.data_len), 0);
	uint8_t m[100];
	memcpy(m, p.data, 96);
	m[5] ^= 1;
	CU_ASSERT_EQUAL(rnsc_proof_validate(&ID, PH, m, 96), RNSC_ERR_PROOF_HASH);
	m[5] ^= 1;
	m[50] ^= 1;
	CU_ASSERT_EQUAL(rnsc_proof_validate(&ID, PH, m, 96), RNSC_ERR_SIGNATURE);
	CU_ASSERT_EQUAL(rnsc_proof_validate(&ID, PH, p.data, 95), RNSC_ERR_MALFORMED);
	CU_ASSERT_EQUAL(rnsc_proof_validate(&ID, PH, p.data, 97), RNSC_ERR_MALFORMED);
	CU_ASSERT_EQUAL(rnsc_proof_validate(&ID, PH, NULL, 5), RNSC_ERR_INVAL);
	n = unhex(raw, PROOF_IMPLICIT);
	CU_ASSERT_EQUAL_FATAL(rnsc_packet_unpack(&p, raw, n), 0);
	CU_ASSERT_EQUAL(rnsc_proof_validate(&ID, PH, p.data, p.data_len), 0);
	memcpy(m, p.data, 64);
	m[0] ^= 0x80;
	CU_ASSERT_EQUAL(rnsc_proof_validate(&ID, PH, m, 64), RNSC_ERR_SIGNATURE);
	/* another packet's hash */
	uint8_t other[32];
	memcpy(other, PH, 32);
	other[31] ^= 1;
	CU_ASSERT_EQUAL(rnsc_proof_validate(&ID, other, p.data, 64), RNSC_ERR_SIGNATURE);
	/* link proofs */
	n = unhex(raw, LINK_PROOF);
	CU_ASSERT_EQUAL_FATAL(rnsc_packet_unpack(&p, raw, n), 0);
	CU_ASSERT_EQUAL(rnsc_proof_validate_link(C, ID.ed_pub, PH, p.data, p.data_len), 0);
	CU_ASSERT_EQUAL(rnsc_proof_validate_link(C, ID.ed_pub, other, p.data, p.data_len),
			RNSC_ERR_PROOF_HASH);
	CU_ASSERT_EQUAL(rnsc_proof_validate_link(C, ID.ed_pub, PH, p.data, 97), RNSC_ERR_MALFORMED);
	CU_ASSERT_EQUAL(rnsc_proof_validate_link(C, ID.ed_pub, PH, p.data, 64), RNSC_ERR_MALFORMED);
	CU_ASSERT_EQUAL(rnsc_proof_validate_link(C, ID.x_pub, PH, p.data, 96), RNSC_ERR_SIGNATURE);
	CU_ASSERT_EQUAL(rnsc_proof_validate_link(C, NULL, PH, p.data, 96), RNSC_ERR_INVAL);
	uint8_t bad[32];
	memset(bad, 0xff, 32); /* not a point */
	CU_ASSERT_EQUAL(rnsc_proof_validate_link(C, bad, PH, p.data, 96), RNSC_ERR_SIGNATURE);
}

static void t_no_alloc(void)
{
	uint8_t proof[96];
	rnsc_ctx_fail_alloc_after(C, 1);
	CU_ASSERT_EQUAL(rnsc_proof_build(proof, sizeof(proof), &ID, PH, 0), 96);
	CU_ASSERT_EQUAL(rnsc_proof_validate(&ID, PH, proof, 96), 0);
	CU_ASSERT_EQUAL(rnsc_ctx_fail_alloc_after(C, 0), 0);
	rnsc_identity_free(&ID);
}

int main(void)
{
	static const wt_test tests[] = {
		{"build KAT", t_build},
		{"receipt validation", t_validate},
		{"no allocation", t_no_alloc},
	};
	return wt_main("proof", tests, sizeof(tests) / sizeof(tests[0]));
}
