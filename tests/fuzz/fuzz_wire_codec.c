/* SPDX-License-Identifier: MIT */
/*
 * The wire driver's codec (bench/driver/wire_codec.h) on arbitrary bytes: the stream is
 * decoded in two cuts (the frames must not depend on where reads split it) into a small
 * buffer, every frame gets its header view, and the input as one frame must encode to the
 * bytes rnsc_hdlc_encode() gives and decode back to itself alone.
 */
#include <stdlib.h>
#include <string.h>

#include "hdlc.h"
#include "wire_codec.h"

typedef struct seen {
	uint8_t log[8192];
	size_t used, frames;
} seen;

static int record(void *ud, const uint8_t *f, size_t len)
{
	seen *s = ud;
	wire_view v;
	if (wire_view_of(&v, f, len) == 0) {
		if (v.hdr + 1 + v.data_len != len || v.dest + 16 > f + len || v.context != f[v.hdr])
			abort();
	}
	s->frames++;
	if (s->used + len + sizeof(len) <= sizeof(s->log)) {
		memcpy(s->log + s->used, &len, sizeof(len));
		memcpy(s->log + s->used + sizeof(len), f, len);
		s->used += len + sizeof(len);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t buf1[300], buf2[300];
	static seen a, b;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	wire_decoder d1 = {.buf = buf1, .max = sizeof(buf1)},
		     d2 = {.buf = buf2, .max = sizeof(buf2)};
	(void)wire_decode(&d1, data, size, record, &a);
	size_t cut = size ? data[0] % (size + 1) : 0;
	(void)wire_decode(&d2, data, cut, record, &b);
	(void)wire_decode(&d2, data + cut, size - cut, record, &b);
	if (a.frames != b.frames || a.used != b.used || memcmp(a.log, b.log, a.used) != 0)
		abort();

	/* round trip of the input as one frame, byte-identical to the core's encoder */
	uint8_t *enc = malloc(2 * size + 2), *ref = malloc(2 * size + 2), *back = malloc(size + 1);
	if (!enc || !ref || !back)
		abort();
	size_t n = wire_encode(enc, data, size);
	int m = rnsc_hdlc_encode(ref, 2 * size + 2, data, size);
	if (m < 0 || (size_t)m != n || memcmp(enc, ref, n) != 0)
		abort();
	memset(&a, 0, sizeof(a));
	wire_decoder d3 = {.buf = back, .max = size + 1};
	(void)wire_decode(&d3, enc, n, record, &a);
	if (size && (a.frames != 1 || (a.used == size + sizeof(size_t) &&
				       memcmp(a.log + sizeof(size_t), data, size) != 0)))
		abort();
	if (!size && a.frames != 0)
		abort();
	free(enc), free(ref), free(back);
	return 0;
}
