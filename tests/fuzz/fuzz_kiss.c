/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the KISS decoder (src/framing/kiss.c).
 *
 * Input: 2 config bytes (max payload size) and the stream. Checked beyond
 * "no crash, no UB":
 *   - chunking does not matter: pieces sized from the input's hash give the
 *     same frames (type and payload) and counters as one feed;
 *   - every delivered frame fits the limit, and encoding it with its type and
 *     decoding the result gives back exactly that one frame.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kiss.h"

typedef struct frames {
	uint8_t *data;
	size_t used, cap;
	size_t n;
} frames;

static int collect(void *ud, uint8_t type, const uint8_t *f, size_t len)
{
	frames *fr = ud;
	size_t need = fr->used + 1 + sizeof(len) + len;

	if (need > fr->cap) {
		fr->cap = need * 2;
		fr->data = realloc(fr->data, fr->cap);
		if (fr->data == NULL)
			abort();
	}
	fr->data[fr->used] = type;
	memcpy(fr->data + fr->used + 1, &len, sizeof(len));
	memcpy(fr->data + fr->used + 1 + sizeof(len), f, len);
	fr->used = need;
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
	rnsc_kiss_decoder a, b;
	frames fa = {0}, fb = {0};
	uint8_t *bufa, *bufb, *enc;
	size_t max, o = 0, i, encmax;
	uint64_t seed = 0;

	if (size < 2)
		return 0;
	max = 1 + (((size_t)data[0] << 8 | data[1]) % 1500);
	data += 2;
	size -= 2;
	for (i = 0; i < size; i++)
		seed = seed * 131 + data[i];

	bufa = malloc(max);
	bufb = malloc(max);
	if (bufa == NULL || bufb == NULL)
		abort();
	if (rnsc_kiss_decoder_init(&a, bufa, max) || rnsc_kiss_decoder_init(&b, bufb, max))
		abort();
	if (rnsc_kiss_decoder_feed(&a, data, size, collect, &fa) != 0)
		abort();
	while (o < size) {
		size_t k;
		seed = mix(seed + 1);
		k = seed % 5 == 0 ? 0 : 1 + (size_t)(seed >> 8) % 48;
		if (k > size - o)
			k = size - o;
		if (rnsc_kiss_decoder_feed(&b, data + o, k, collect, &fb) != 0)
			abort();
		o += k;
	}
	if (fa.n != fb.n || fa.used != fb.used ||
	    (fa.used && memcmp(fa.data, fb.data, fa.used) != 0))
		abort();
	if (memcmp(&a.stats, &b.stats, sizeof(a.stats)) != 0 || a.stats.frames != fa.n)
		abort();

	encmax = rnsc_kiss_encoded_max(max);
	enc = malloc(encmax);
	if (enc == NULL)
		abort();
	for (o = 0; o < fa.used;) {
		uint8_t type = fa.data[o];
		size_t len;
		const uint8_t *f;
		frames one = {0};
		int n;

		memcpy(&len, fa.data + o + 1, sizeof(len));
		f = fa.data + o + 1 + sizeof(len);
		o += 1 + sizeof(len) + len;
		if (len > max || (RNSC_KISS_CMD(type) == RNSC_KISS_CMD_DATA && len == 0))
			abort();
		n = rnsc_kiss_encode_frame(enc, encmax, type, f, len);
		if (n < 0)
			abort();
		rnsc_kiss_decoder_init(&b, bufb, max);
		if (rnsc_kiss_decoder_feed(&b, enc, (size_t)n, collect, &one) != 0)
			abort();
		if (one.n != 1 || one.data[0] != type || one.used != 1 + sizeof(len) + len ||
		    memcmp(one.data + 1 + sizeof(len), f, len) != 0 || b.stats.bad_escapes != 0)
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
