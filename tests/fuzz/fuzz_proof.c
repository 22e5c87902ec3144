/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for proof validation (src/lib/proof.c) and the signed link payloads
 * (LRPROOF and LINKIDENTIFY in src/lib/linkfmt.c).
 *
 * Input: packet_hash(32) || signer public key(64) || a proof packet as received. Checked
 * beyond "no crash, no UB": every rejection is one of the documented codes; an accepted
 * receipt proof is bound to the packet hash (another hash is refused), and an explicit proof
 * names it.
 */
#include "fuzz_wire.h"

#include "linkfmt.h"
#include "packet.h"
#include "proof.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rnsc_ctx *ctx = fuzz_ctx();
	if (size < 96)
		return 0;
	const uint8_t *ph = data, *pub = data + 32;
	rnsc_identity id;
	FUZZ_CHECK(rnsc_identity_from_public(ctx, &id, pub, 64) == 0);
	rnsc_packet p;
	if (rnsc_packet_unpack(&p, data + 96, size - 96) != 0)
		return 0;
	int rc = rnsc_proof_validate(&id, ph, p.data, p.data_len);
	FUZZ_CODE(rc, RNSC_ERR_MALFORMED, RNSC_ERR_PROOF_HASH, RNSC_ERR_SIGNATURE);
	if (rc == 0) {
		uint8_t other[32];
		memcpy(other, ph, 32);
		other[0] ^= 1;
		FUZZ_CHECK(rnsc_proof_validate(&id, other, p.data, p.data_len) != 0);
		if (p.data_len == RNSC_PROOF_EXPLICIT_LEN)
			FUZZ_CHECK(memcmp(p.data, ph, 32) == 0);
	}
	rc = rnsc_proof_validate_link(ctx, pub + 32, ph, p.data, p.data_len);
	FUZZ_CODE(rc, RNSC_ERR_MALFORMED, RNSC_ERR_PROOF_HASH, RNSC_ERR_SIGNATURE);
	if (rc == 0)
		FUZZ_CHECK(p.data_len == 96 && memcmp(p.data, ph, 32) == 0);
	rnsc_link_proof lp;
	rc = rnsc_link_proof_validate(ctx, &lp, p.data, p.data_len, p.dest_hash, pub + 32,
				      RNSC_LINK_MODE_DEFAULT);
	FUZZ_CODE(rc, RNSC_ERR_MALFORMED, RNSC_ERR_LINK_MODE, RNSC_ERR_SIGNATURE);
	rc = rnsc_link_identify_validate(ctx, NULL, p.data, p.data_len, p.dest_hash);
	FUZZ_CODE(rc, RNSC_ERR_MALFORMED, RNSC_ERR_SIGNATURE);
	return 0;
}
