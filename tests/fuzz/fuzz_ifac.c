/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for interface access codes (src/lib/ifac.c).
 *
 * Input: one byte choosing the code size (1..64), then a frame as received on an interface
 * configured with network name "rnsc-fuzz" and passphrase "fuzz" (the matrix writes seeds
 * under that configuration). Checked beyond "no crash, no UB":
 *   - every drop is one of the documented codes and counted exactly once;
 *   - an accepted frame re-masks to exactly the input frame;
 *   - the same frame on an interface without IFAC passes only when its IFAC flag is clear.
 */
#include "fuzz_wire.h"

#include "ifac.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static rnsc_ifac ifac[RNSC_IFAC_MAX_SIZE + 1];
	rnsc_ctx *ctx = fuzz_ctx();
	if (size < 1)
		return 0;
	size_t sz = 1 + data[0] % RNSC_IFAC_MAX_SIZE;
	if (!ifac[sz].ctx)
		FUZZ_CHECK(rnsc_ifac_init(&ifac[sz], ctx, "rnsc-fuzz", "fuzz", sz) == 0);
	const uint8_t *frame = data + 1;
	size_t len = size - 1;
	uint8_t *out = malloc(len + RNSC_IFAC_MAX_SIZE + 1);
	FUZZ_CHECK(out != NULL);
	rnsc_ifac_stats st = {0};
	int rc = rnsc_ifac_check(&ifac[sz], &st, out, len + 1, frame, len);
	FUZZ_CODE(rc, RNSC_ERR_TRUNCATED, RNSC_ERR_IFAC, RNSC_ERR_IFAC_MISSING);
	FUZZ_CHECK(st.accepted + st.violations + st.runts == 1);
	if (rc >= 0) {
		FUZZ_CHECK((size_t)rc == len - sz && !(out[0] & 0x80));
		uint8_t *again = malloc(len + 1);
		FUZZ_CHECK(again != NULL);
		FUZZ_CHECK(rnsc_ifac_apply(&ifac[sz], again, len, out, (size_t)rc) == (int)len);
		FUZZ_CHECK(memcmp(again, frame, len) == 0);
		free(again);
	}
	rnsc_ifac_stats st2 = {0};
	rc = rnsc_ifac_check(NULL, &st2, out, len + 1, frame, len);
	FUZZ_CODE(rc, RNSC_ERR_TRUNCATED, RNSC_ERR_IFAC_UNEXPECTED);
	if (len > 2)
		FUZZ_CHECK((rc >= 0) == !(frame[0] & 0x80));
	free(out);
	return 0;
}
