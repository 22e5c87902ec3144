/* SPDX-License-Identifier: MIT */
/*
 * The wire driver's framing and frame header view (header-only; tests/fuzz/fuzz_wire_codec.c
 * fuzzes it). HDLC as Backbone and TCP interfaces speak it: FLAG 0x7E delimits frames, ESC
 * 0x7D escapes FLAG and ESC by XOR 0x20. Runs of plain bytes are found 8 bytes at a time
 * and copied whole, so the driver stays far faster than the relays it measures. The bytes
 * written are those of rnsc_hdlc_encode(); the decoder unescapes any ESC x as x ^ 0x20 and
 * gives up a frame longer than its buffer up to the next FLAG. Nothing here allocates.
 */
#ifndef RNSC_WIRE_CODEC_H
#define RNSC_WIRE_CODEC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define WIRE_FLAG 0x7E
#define WIRE_ESC 0x7D
#define WIRE_ONES UINT64_C(0x0101010101010101)
#define WIRE_HIGHS UINT64_C(0x8080808080808080)

/* Non-zero when some byte of x is FLAG or ESC. */
static inline uint64_t wire_has_special(uint64_t x)
{
	uint64_t a = x ^ (WIRE_ONES * WIRE_FLAG), b = x ^ (WIRE_ONES * WIRE_ESC);
	return (((a - WIRE_ONES) & ~a) | ((b - WIRE_ONES) & ~b)) & WIRE_HIGHS;
}

/* Length of the run at p that needs no escaping. */
static inline size_t wire_plain_run(const uint8_t *p, size_t n)
{
	size_t i = 0;
	while (i + 8 <= n) {
		uint64_t x;
		memcpy(&x, p + i, 8);
		if (wire_has_special(x))
			break;
		i += 8;
	}
	while (i < n && p[i] != WIRE_FLAG && p[i] != WIRE_ESC)
		i++;
	return i;
}

/* Frames p into out, which holds at least 2 * len + 2 bytes; returns the frame length. */
static inline size_t wire_encode(uint8_t *out, const uint8_t *p, size_t len)
{
	uint8_t *o = out;
	*o++ = WIRE_FLAG;
	size_t i = 0;
	while (i < len) {
		size_t r = wire_plain_run(p + i, len - i);
		memcpy(o, p + i, r);
		o += r, i += r;
		if (i < len) {
			*o++ = WIRE_ESC;
			*o++ = p[i++] ^ 0x20;
		}
	}
	*o++ = WIRE_FLAG;
	return (size_t)(o - out);
}

/* Streaming decoder state; buf (max bytes) is caller storage. Zero the rest to start. */
typedef struct wire_decoder {
	uint8_t *buf;
	size_t max, len;
	int in_frame, esc, overflow;
} wire_decoder;

/* Called per complete non-empty frame (valid during the call); non-zero stops decoding. */
typedef int (*wire_frame_fn)(void *ud, const uint8_t *frame, size_t len);

/* Feeds n bytes; returns 0, or the callback's non-zero value (the rest is dropped). */
static inline int wire_decode(wire_decoder *d, const uint8_t *p, size_t n, wire_frame_fn cb,
			      void *ud)
{
	size_t i = 0;
	while (i < n) {
		if (!d->in_frame) {
			const uint8_t *q = memchr(p + i, WIRE_FLAG, n - i);
			if (!q)
				return 0;
			i = (size_t)(q - p) + 1;
			d->in_frame = 1, d->len = 0, d->esc = 0, d->overflow = 0;
			continue;
		}
		if (!d->esc) {
			size_t r = wire_plain_run(p + i, n - i);
			if (r && d->len + r <= d->max) {
				memcpy(d->buf + d->len, p + i, r);
				d->len += r, i += r;
				continue;
			}
		}
		uint8_t b = p[i++];
		if (b == WIRE_FLAG) {
			size_t len = d->len;
			int over = d->overflow;
			/* the closing flag opens the next frame */
			d->len = 0, d->esc = 0, d->overflow = 0;
			if (len > 0 && !over) {
				int rc = cb(ud, d->buf, len);
				if (rc)
					return rc;
			}
			continue;
		}
		if (b == WIRE_ESC && !d->esc) {
			d->esc = 1;
			continue;
		}
		if (d->esc)
			b ^= 0x20, d->esc = 0;
		if (d->len < d->max)
			d->buf[d->len++] = b;
		else
			d->overflow = 1;
	}
	return 0;
}

/* The header of a Reticulum frame as the driver needs it. */
typedef struct wire_view {
	int type;            /* packet type: flags & 3 */
	int header2;         /* HEADER_2 (transport id present) */
	int dest_type;       /* (flags >> 2) & 3 */
	size_t hdr;          /* bytes before the context byte: 18 or 34 */
	const uint8_t *tid;  /* transport id (HEADER_2) or NULL */
	const uint8_t *dest; /* 16 bytes */
	int context;
	const uint8_t *data;
	size_t data_len;
} wire_view;

/* Fills v for frame f; -1 when f is too short to hold its header and context. */
static inline int wire_view_of(wire_view *v, const uint8_t *f, size_t len)
{
	if (len < 19)
		return -1;
	v->type = f[0] & 3;
	v->dest_type = (f[0] >> 2) & 3;
	v->header2 = (f[0] >> 6) & 1;
	v->hdr = v->header2 ? 34 : 18;
	if (len < v->hdr + 1)
		return -1;
	v->tid = v->header2 ? f + 2 : NULL;
	v->dest = f + v->hdr - 16;
	v->context = f[v->hdr];
	v->data = f + v->hdr + 1;
	v->data_len = len - v->hdr - 1;
	return 0;
}

#endif
