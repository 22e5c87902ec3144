/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the two ratchet file parsers (src/lib/ratchet_file.c). Beyond "no
 * crash, no leak, no UB": a local file must never be accepted under a fixed identity unless
 * its signature verifies, so any accepted input re-encodes (signed again, Ed25519 is
 * deterministic) to the same bytes when it has the reference's layout; an accepted remote
 * file re-encodes to a record that decodes to the same ratchet and time.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_wire.h"
#include "ratchet_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rnsc_ctx *ctx = fuzz_ctx();
	static rnsc_identity id;
	static int have;
	if (!have) {
		uint8_t prv[64];
		for (int i = 0; i < 64; i++)
			prv[i] = (uint8_t)(i * 7 + 1);
		if (rnsc_identity_from_private(ctx, &id, prv, sizeof(prv)))
			abort();
		have = 1;
	}
	size_t n = 0;
	if (rnsc_ratchet_file_decode(&id, data, size, NULL, 0, &n) == 0) {
		uint8_t(*keys)[32] = calloc(n ? n : 1, 32);
		if (!keys || rnsc_ratchet_file_decode(&id, data, size, keys, n, &n))
			abort();
		int len = rnsc_ratchet_file_encode(&id, (const uint8_t(*)[32])keys, n, NULL, 0);
		if (len <= 0)
			abort();
		uint8_t *buf = malloc((size_t)len);
		size_t m = 0;
		if (!buf ||
		    rnsc_ratchet_file_encode(&id, (const uint8_t(*)[32])keys, n, buf,
					     (size_t)len) != len ||
		    rnsc_ratchet_file_decode(&id, buf, (size_t)len, NULL, 0, &m) || m != n)
			abort();
		free(buf);
		free(keys);
	}
	uint8_t r[32], r2[32], out[RNSC_RATCHET_REMOTE_FILE_MAX];
	double t, t2;
	if (rnsc_ratchet_remote_decode(data, size, r, &t) == 0) {
		int len = rnsc_ratchet_remote_encode(r, t, out, sizeof(out));
		if (len <= 0 || rnsc_ratchet_remote_decode(out, (size_t)len, r2, &t2) ||
		    memcmp(r, r2, 32) || memcmp(&t, &t2, sizeof(t)))
			abort();
	}
	return 0;
}
