/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for announce validation (src/lib/announce.c).
 *
 * Input: a packet as received. Checked beyond "no crash, no UB":
 *   - every rejection is one of the documented codes;
 *   - parse and validate agree on the field layout; an accepted announce has a signature
 *     over the exact signed fields (changing the random hash breaks it) and a destination hash
 *     derived from its name hash and identity.
 */
#include "fuzz_wire.h"

#include "announce.h"
#include "packet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rnsc_ctx *ctx = fuzz_ctx();
	rnsc_packet p;
	if (rnsc_packet_unpack(&p, data, size) != 0)
		return 0;
	rnsc_announce a, b;
	int prc = rnsc_announce_parse(&a, &p);
	FUZZ_CODE(prc, RNSC_ERR_MALFORMED, RNSC_ERR_TRUNCATED);
	rnsc_identity who;
	int rc = rnsc_announce_validate(ctx, &p, &b, &who);
	FUZZ_CODE(rc, RNSC_ERR_MALFORMED, RNSC_ERR_TRUNCATED, RNSC_ERR_SIGNATURE,
		  RNSC_ERR_DEST_MISMATCH);
	if (prc != 0) {
		FUZZ_CHECK(rc == prc);
		return 0;
	}
	FUZZ_CHECK(a.public_key == p.data);
	FUZZ_CHECK((a.ratchet != NULL) == (p.context_flag == RNSC_FLAG_SET));
	FUZZ_CHECK(a.app_data_len == p.data_len - rnsc_announce_data_len(a.ratchet != NULL, 0));
	(void)rnsc_announce_timestamp(a.random_hash);
	if (rc != 0)
		return 0;
	FUZZ_CHECK(memcmp(&a, &b, sizeof(a)) == 0);
	FUZZ_CHECK(memcmp(who.ed_pub, a.public_key + 32, 32) == 0);
	/* the random hash is signed */
	uint8_t *copy = malloc(size);
	FUZZ_CHECK(copy != NULL);
	memcpy(copy, data, size);
	copy[(size_t)(a.random_hash - data)] ^= 1;
	rnsc_packet q;
	FUZZ_CHECK(rnsc_packet_unpack(&q, copy, size) == 0);
	FUZZ_CHECK(rnsc_announce_validate(ctx, &q, NULL, NULL) == RNSC_ERR_SIGNATURE);
	free(copy);
	return 0;
}
