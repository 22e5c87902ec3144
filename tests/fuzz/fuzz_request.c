/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the request and response parsers (src/lib/request.c): any input is
 * read as a packed request and as a packed response. Rejections must be documented codes;
 * accepted inputs must point inside the input, and packing what was read (the timestamp, the
 * path hash and the data value, or the id and the response value) must give a message that
 * reads back to the same values.
 */
#include <math.h>

#include "fuzz_wire.h"
#include "request.h"

static const int CODES[] = {RNSC_ERR_MALFORMED, RNSC_ERR_TRUNCATED, RNSC_ERR_TOOBIG, 0};

static int inside(const uint8_t *p, size_t n, const uint8_t *in, size_t len)
{
	return p >= in && p + n <= in + len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	double at;
	const uint8_t *ph, *d;
	size_t dl;
	int rc = rnsc_request_unpack(data, size, &at, &ph, &d, &dl);
	FUZZ_CHECK(fuzz_code_in(rc, CODES));
	if (rc == 0) {
		FUZZ_CHECK(inside(d, dl, data, size) && dl > 0);
		FUZZ_CHECK(!ph || inside(ph, 16, data, size));
		if (ph) {
			uint8_t *out = malloc(dl + 64);
			FUZZ_CHECK(out);
			int n = rnsc_request_pack(out, dl + 64, at, ph, d, dl);
			FUZZ_CHECK(n > 0);
			double at2;
			const uint8_t *ph2, *d2;
			size_t dl2;
			FUZZ_CHECK(rnsc_request_unpack(out, (size_t)n, &at2, &ph2, &d2, &dl2) == 0);
			FUZZ_CHECK(ph2 && memcmp(ph2, ph, 16) == 0 && dl2 == dl &&
				   memcmp(d2, d, dl) == 0);
			FUZZ_CHECK((isnan(at) && isnan(at2)) || at == at2);
			free(out);
		}
	}
	const uint8_t *id, *r;
	size_t rl;
	rc = rnsc_response_unpack(data, size, &id, &r, &rl);
	FUZZ_CHECK(fuzz_code_in(rc, CODES));
	if (rc == 0) {
		FUZZ_CHECK(inside(r, rl, data, size) && rl > 0);
		FUZZ_CHECK(!id || inside(id, 16, data, size));
		if (id) {
			uint8_t *out = malloc(rl + 32);
			FUZZ_CHECK(out);
			int n = rnsc_response_pack(out, rl + 32, id, r, rl);
			FUZZ_CHECK(n > 0);
			const uint8_t *id2, *r2;
			size_t rl2;
			FUZZ_CHECK(rnsc_response_unpack(out, (size_t)n, &id2, &r2, &rl2) == 0);
			FUZZ_CHECK(id2 && memcmp(id2, id, 16) == 0 && rl2 == rl &&
				   memcmp(r2, r, rl) == 0);
			free(out);
		}
	}
	return 0;
}
