/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for what rnsc id reads from files and arguments (src/cli/cmd_id_crypt.c):
 * rnid's .rsg/.rsm signature envelopes (signature + msgpack {hashtype, hash, meta{signer,
 * pubkey}, [message]}) and the base32/base64 decoders of -m/-M.
 *
 *   1. the envelope check over the input, with and without a required signer: it never
 *      reads outside the input, and an input whose signature was not made by the key in
 *      it is never valid (the fuzzer cannot forge Ed25519);
 *   2. both decoders over the input as text: a decoded length fits the buffer, and the
 *      encoder's output of the decoded bytes decodes to the same bytes;
 *   3. -E's metadata file and spec (src/cli/cmd_id_meta.c): what it accepts encodes to
 *      exactly the msgpack pairs it counts.
 */
#include "fuzz_wire.h"
#include "cmd_id.h"
#include "msgpack.h"

/* cmd_id_crypt.c's hex helpers come from the runtime (src/runtime/strfmt.c, built in). */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rnsc_ctx *ctx = fuzz_ctx();
	uint8_t h[32] = {0}, signer[16];
	if (size >= 32)
		memcpy(h, data + size - 32, 32);
	int r = id_rsg_check(ctx, data, size, h, NULL, signer);
	FUZZ_CHECK(r >= 0 && r <= 2);
	r = id_rsg_check(ctx, data, size, h, size >= 16 ? data : h, signer);
	FUZZ_CHECK(r >= 0 && r <= 2);

	char *s = malloc(size + 1);
	FUZZ_CHECK(s != NULL);
	memcpy(s, data, size);
	s[size] = 0;
	uint8_t out[1024], again[1024];
	for (int k = 0; k < 2; k++) {
		long n =
			k ? id_b64_decode(out, sizeof(out), s) : id_b32_decode(out, sizeof(out), s);
		FUZZ_CHECK(n >= -1 && n <= (long)sizeof(out));
		if (n > 0 && n <= 512) {
			char *e = id_enc(k ? FMT_BASE64 : FMT_BASE32, out, (size_t)n);
			FUZZ_CHECK(e != NULL);
			long m = k ? id_b64_decode(again, sizeof(again), e)
				   : id_b32_decode(again, sizeof(again), e);
			FUZZ_CHECK(m == n && memcmp(out, again, (size_t)n) == 0);
			free(e);
		}
	}
	free(s);

	/* 3. -E's metadata: the input as a ConfigObj file, split at its first NUL into the
	 * metadata and a Validator spec; a result is a well-formed run of msgpack pairs. */
	const uint8_t *nul = memchr(data, 0, size);
	size_t ml = nul ? (size_t)(nul - data) : size;
	uint8_t *kv = NULL;
	size_t kl = 0, np = 0;
	char why[400];
	if (id_meta_parse((const char *)data, ml, nul ? (const char *)nul + 1 : NULL,
			  nul ? size - ml - 1 : 0, &kv, &kl, &np, why, sizeof(why)) == 0) {
		rnsc_mp_reader rd;
		rnsc_mp_reader_init(&rd, kv, kl);
		for (size_t i = 0; i < 2 * np; i++)
			FUZZ_CHECK(rnsc_mp_skip(&rd) == 0);
		FUZZ_CHECK(rnsc_mp_reader_remaining(&rd) == 0);
		free(kv);
	} else {
		FUZZ_CHECK(kv == NULL && memchr(why, 0, sizeof(why)) != NULL);
	}
	return 0;
}
