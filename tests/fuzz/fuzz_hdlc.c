/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the HDLC decoder (src/framing/hdlc.c).
 *
 * Input: 3 config bytes (max frame size, min frame size) and the stream.
 * Properties checked beyond "no crash, no UB":
 *   - chunking does not matter: feeding the stream in pieces whose sizes are
 *     derived from the input gives the same frames and counters as one feed;
 *   - every delivered frame fits the limits, and encoding it and decoding the
 *     result gives back exactly that one frame.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hdlc.h"

typedef struct frames {
	uint8_t *data;
	size_t used, cap;
	size_t n;
} frames;

static int collect(void *ud, const uint8_t *f, size_t len)
{
	frames *fr = ud;
	size_t need = fr->used + len + sizeof(size_t);

	if (need > fr->cap) {
		fr->cap = need * 2;
		fr->data = realloc(fr->data, fr->cap);
		if (fr->data == NULL)
			abort();
	}
	/* length-prefixed records so frame boundaries take part in comparisons */
	memcpy(fr->data + fr->used, &len, sizeof(len));
	memcpy(fr->data + fr->used + sizeof(len), f, len);
	fr->used += len + sizeof(len);
	fr->n++;
	return 0;
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rnsc_hdlc_decoder a, b;
	frames fa = {0}, fb = {0};
	uint8_t *bufa, *bufb, *enc;
	size_t max, min, o = 0, i;
	uint64_t seed = 0;

	if (size < 3)
		return 0;
	max = 1 + (((size_t)data[0] << 8 | data[1]) % 1500);
	min = 1 + data[2] % 24;
	if (min > max)
		min = max;
	data += 3;
	size -= 3;
	for (i = 0; i < size; i++)
		seed = seed * 131 + data[i];

	bufa = malloc(max);
	bufb = malloc(max);
	if (bufa == NULL || bufb == NULL)
		abort();
	if (rnsc_hdlc_decoder_init(&a, bufa, max) || rnsc_hdlc_decoder_init(&b, bufb, max) ||
	    rnsc_hdlc_decoder_set_min(&a, min) || rnsc_hdlc_decoder_set_min(&b, min))
		abort();

	/* reference run: one feed */
	if (rnsc_hdlc_decoder_feed(&a, data, size, collect, &fa) != 0)
		abort();
	/* chunked run: sizes from the input's hash, including empty chunks */
	while (o < size) {
		size_t k;
		seed = mix(seed + 1);
		k = seed % 5 == 0 ? 0 : 1 + (size_t)(seed >> 8) % 48;
		if (k > size - o)
			k = size - o;
		if (rnsc_hdlc_decoder_feed(&b, data + o, k, collect, &fb) != 0)
			abort();
		o += k;
	}
	if (fa.n != fb.n || fa.used != fb.used ||
	    (fa.used && memcmp(fa.data, fb.data, fa.used) != 0))
		abort();
	if (memcmp(&a.stats, &b.stats, sizeof(a.stats)) != 0 || a.stats.frames != fa.n)
		abort();

	/* re-encode each frame; decoding must give it back alone */
	enc = malloc(rnsc_hdlc_encoded_max(max));
	if (enc == NULL)
		abort();
	for (o = 0; o < fa.used;) {
		size_t len;
		const uint8_t *f;
		frames one = {0};
		int n;

		memcpy(&len, fa.data + o, sizeof(len));
		f = fa.data + o + sizeof(len);
		o += sizeof(len) + len;
		if (len < min || len > max)
			abort();
		n = rnsc_hdlc_encode(enc, rnsc_hdlc_encoded_max(max), f, len);
		if (n < 0 || (size_t)n != rnsc_hdlc_encoded_len(f, len))
			abort();
		rnsc_hdlc_decoder_init(&b, bufb, max);
		rnsc_hdlc_decoder_set_min(&b, min);
		if (rnsc_hdlc_decoder_feed(&b, enc, (size_t)n, collect, &one) != 0)
			abort();
		if (one.n != 1 || one.used != len + sizeof(len) ||
		    memcmp(one.data + sizeof(len), f, len) != 0 || b.stats.bad_escapes != 0)
			abort();
		free(one.data);
	}
	free(enc);
	free(fa.data);
	free(fb.data);
	free(bufa);
	free(bufb);
	return 0;
}
