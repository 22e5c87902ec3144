/* SPDX-License-Identifier: MIT */
#include "hdlc.h"

#include <limits.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Decoder states. HUNT until the first FLAG so that whatever precedes it (a
 * half-read frame after a reconnect, line noise) never becomes a frame. */
enum { HDLC_HUNT = 0, HDLC_FRAME = 1, HDLC_DISCARD = 2 };

/* Unescaped forms, spelled out so the decoder's comparisons read naturally. */
#define HDLC_ESCAPED_FLAG (RNSC_HDLC_FLAG ^ RNSC_HDLC_ESC_MASK) /* 0x5E */
#define HDLC_ESCAPED_ESC (RNSC_HDLC_ESC ^ RNSC_HDLC_ESC_MASK)   /* 0x5D */

/*
 * Word-at-a-time scanning. A relay spends most of its time framing: profiling `rnsc bench
 * --scenario transported-resource` (32 KiB frames through rnsc daemon) put 70% of the
 * relay's cycles in per-byte HDLC loops. Random payloads hold a FLAG or ESC about once in
 * 128 bytes, so testing 8 bytes at a time and copying runs with memcpy pays (figures in
 * bench/results/design-notes.md, "HDLC scanning"); the output and the decoder's behaviour are unchanged byte for byte.
 */
#define HDLC_ONES UINT64_C(0x0101010101010101)
#define HDLC_HIGHS UINT64_C(0x8080808080808080)
#define HDLC_LOWS UINT64_C(0x7F7F7F7F7F7F7F7F)

static inline uint64_t hdlc_load(const uint8_t *p)
{
	uint64_t x;
	memcpy(&x, p, sizeof(x));
	return x;
}

/* Non-zero when some byte of x is FLAG or ESC (exact: the borrow trick only errs on
 * bytes above a true zero byte, which already makes the answer yes). */
static inline uint64_t hdlc_any_special(uint64_t x)
{
	uint64_t a = x ^ (HDLC_ONES * RNSC_HDLC_FLAG), b = x ^ (HDLC_ONES * RNSC_HDLC_ESC);
	return (((a - HDLC_ONES) & ~a) | ((b - HDLC_ONES) & ~b)) & HDLC_HIGHS;
}

/* High bit set in exactly the bytes of x that are zero (no borrow between bytes). */
static inline uint64_t hdlc_zero_bytes(uint64_t x)
{
	return ~(((x & HDLC_LOWS) + HDLC_LOWS) | x | HDLC_LOWS);
}

/* Copies the run of plain bytes at src (at most n) to dst and returns its length: the scan
 * and the copy share one pass, whole words at a time (a word is stored only when none of
 * its bytes is special, so dst never receives a byte beyond the run). */
static size_t hdlc_copy_plain(uint8_t *dst, const uint8_t *src, size_t n)
{
	size_t i = 0;
#if defined(__SSE2__)
	/* 16 bytes per step where SSE2 is there (every x86-64): the run ends at the first set
	 * bit of the compare mask (faster than the word loop: bench/results/design-notes.md). */
	const __m128i flag = _mm_set1_epi8((char)RNSC_HDLC_FLAG);
	const __m128i esc = _mm_set1_epi8((char)RNSC_HDLC_ESC);
	while (i + 16 <= n) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(src + i));
		unsigned m = (unsigned)_mm_movemask_epi8(
			_mm_or_si128(_mm_cmpeq_epi8(x, flag), _mm_cmpeq_epi8(x, esc)));
		if (m != 0) {
			unsigned k = (unsigned)__builtin_ctz(m);
			memcpy(dst + i, src + i, k);
			return i + k;
		}
		_mm_storeu_si128((__m128i *)(void *)(dst + i), x);
		i += 16;
	}
#endif
	while (i + 8 <= n) {
		uint64_t x = hdlc_load(src + i);
		if (hdlc_any_special(x))
			break;
		memcpy(dst + i, &x, sizeof(x));
		i += 8;
	}
	while (i < n && src[i] != RNSC_HDLC_FLAG && src[i] != RNSC_HDLC_ESC) {
		dst[i] = src[i];
		i++;
	}
	return i;
}

size_t rnsc_hdlc_encoded_max(size_t len)
{
	if (len > (SIZE_MAX - 2) / 2)
		return SIZE_MAX;
	return 2 * len + 2;
}

size_t rnsc_hdlc_encoded_len(const uint8_t *p, size_t len)
{
	size_t n = 2, i;

	if (p == NULL)
		return len == 0 ? 2 : SIZE_MAX;
	/* whole words: n stays far below SIZE_MAX here (at most 2 per byte of a buffer) */
	for (i = 0; i + 8 <= len && len <= SIZE_MAX / 4; i += 8) {
		uint64_t x = hdlc_load(p + i);
		uint64_t m = hdlc_zero_bytes(x ^ (HDLC_ONES * RNSC_HDLC_FLAG)) |
			     hdlc_zero_bytes(x ^ (HDLC_ONES * RNSC_HDLC_ESC));
		n += 8 + (size_t)(((m >> 7) * HDLC_ONES) >> 56); /* one bit per special byte */
	}
	for (; i < len; i++) {
		size_t add = (p[i] == RNSC_HDLC_FLAG || p[i] == RNSC_HDLC_ESC) ? 2 : 1;
		if (n > SIZE_MAX - add)
			return SIZE_MAX;
		n += add;
	}
	return n;
}

int rnsc_hdlc_encode(uint8_t *out, size_t cap, const uint8_t *p, size_t len)
{
	size_t need, o = 0, i;

	if ((p == NULL && len > 0) || (out == NULL && cap > 0))
		return RNSC_ERR_INVAL;
	/* When even the worst case fits (cap and INT_MAX), skip the counting pass: callers
	 * usually sized the buffer with rnsc_hdlc_encoded_len() already. */
	if (out != NULL && len <= ((size_t)INT_MAX - 2) / 2 && cap >= 2 * len + 2) {
		need = 0;
	} else {
		need = rnsc_hdlc_encoded_len(p, len);
		/* Checked before the buffer so callers learn a frame can never be sent. */
		if (need > (size_t)INT_MAX)
			return RNSC_ERR_TOOBIG;
		if (out == NULL || need > cap)
			return RNSC_ERR_BUFSIZE;
	}

	out[o++] = RNSC_HDLC_FLAG;
	for (i = 0; i < len;) {
		size_t run = hdlc_copy_plain(out + o, p + i, len - i);
		if (run) {
			o += run, i += run;
			continue;
		}
		uint8_t b = p[i++];
		/* The reference escapes ESC first, then FLAG, in two passes; the
		 * second pass can never touch bytes the first produced (0x7D 0x5D
		 * contains no FLAG), so a single pass gives the same bytes. */
		if (b == RNSC_HDLC_FLAG || b == RNSC_HDLC_ESC) {
			out[o++] = RNSC_HDLC_ESC;
			out[o++] = (uint8_t)(b ^ RNSC_HDLC_ESC_MASK);
		} else {
			out[o++] = b;
		}
	}
	out[o++] = RNSC_HDLC_FLAG;
	return (int)o;
}

int rnsc_hdlc_decoder_init(rnsc_hdlc_decoder *dec, uint8_t *buf, size_t max_frame)
{
	if (dec == NULL || buf == NULL || max_frame == 0)
		return RNSC_ERR_INVAL;
	memset(dec, 0, sizeof(*dec));
	dec->buf = buf;
	dec->max_frame = max_frame;
	dec->min_frame = 1;
	dec->state = HDLC_HUNT;
	return 0;
}

int rnsc_hdlc_decoder_set_min(rnsc_hdlc_decoder *dec, size_t min_frame)
{
	if (dec == NULL)
		return RNSC_ERR_INVAL;
	if (min_frame == 0)
		min_frame = 1;
	if (min_frame > dec->max_frame)
		return RNSC_ERR_INVAL;
	dec->min_frame = min_frame;
	return 0;
}

void rnsc_hdlc_decoder_reset(rnsc_hdlc_decoder *dec)
{
	if (dec == NULL)
		return;
	dec->state = HDLC_HUNT;
	dec->len = 0;
	dec->esc = 0;
}

/* Appends one unescaped byte. On overflow the frame is given up at once (and
 * counted once); the rest of it is skipped up to the next FLAG. */
static int hdlc_push(rnsc_hdlc_decoder *dec, uint8_t b)
{
	if (dec->len >= dec->max_frame) {
		dec->stats.drop_oversize++;
		dec->state = HDLC_DISCARD;
		dec->len = 0;
		dec->esc = 0;
		return 0;
	}
	dec->buf[dec->len++] = b;
	return 1;
}

static int hdlc_close_frame(rnsc_hdlc_decoder *dec, rnsc_hdlc_frame_fn cb, void *ud)
{
	size_t n = dec->len;

	dec->len = 0;
	if (n == 0) {
		dec->stats.empty++;
		return 0;
	}
	if (n < dec->min_frame) {
		dec->stats.drop_runt++;
		return 0;
	}
	dec->stats.frames++;
	dec->stats.bytes += n;
	return cb(ud, dec->buf, n);
}

int rnsc_hdlc_decoder_feed(rnsc_hdlc_decoder *dec, const uint8_t *chunk, size_t len,
			   rnsc_hdlc_frame_fn cb, void *ud)
{
	size_t i;

	if (dec == NULL || cb == NULL || (chunk == NULL && len > 0))
		return RNSC_ERR_INVAL;

	for (i = 0; i < len; i++) {
		uint8_t b;

		/* Fast paths: a run of plain bytes inside a frame is copied whole as far as
		 * it fits (a longer run then overflows in the byte loop below, exactly as
		 * byte by byte); outside a frame everything up to the next FLAG is skipped
		 * at once. */
		if (dec->state == HDLC_FRAME && !dec->esc) {
			size_t room = dec->max_frame - dec->len, n = len - i;
			size_t run = hdlc_copy_plain(dec->buf + dec->len, chunk + i,
						     n < room ? n : room);
			dec->len += run;
			i += run;
			if (i >= len)
				break;
		} else if (dec->state != HDLC_FRAME) {
			const uint8_t *q = memchr(chunk + i, RNSC_HDLC_FLAG, len - i);
			size_t skip = q ? (size_t)(q - (chunk + i)) : len - i;
			if (dec->state == HDLC_HUNT)
				dec->stats.garbage += skip;
			i += skip;
			if (i >= len)
				break;
		}
		b = chunk[i];

		if (b == RNSC_HDLC_FLAG) {
			if (dec->state == HDLC_FRAME) {
				int rc;
				/* ESC right before the closing FLAG: the reference's
				 * unescape leaves it in the frame as a literal. */
				if (dec->esc) {
					dec->esc = 0;
					dec->stats.bad_escapes++;
					if (!hdlc_push(dec, RNSC_HDLC_ESC))
						goto open_next;
				}
				rc = hdlc_close_frame(dec, cb, ud);
				if (rc != 0) {
					rnsc_hdlc_decoder_reset(dec);
					return rc;
				}
			}
		open_next:
			/* Every FLAG also opens the next frame. */
			dec->state = HDLC_FRAME;
			dec->len = 0;
			dec->esc = 0;
			continue;
		}

		if (dec->state == HDLC_HUNT) {
			dec->stats.garbage++;
			continue;
		}
		if (dec->state == HDLC_DISCARD)
			continue;

		if (dec->esc) {
			dec->esc = 0;
			if (b == HDLC_ESCAPED_FLAG) {
				hdlc_push(dec, RNSC_HDLC_FLAG);
				continue;
			}
			if (b == HDLC_ESCAPED_ESC) {
				hdlc_push(dec, RNSC_HDLC_ESC);
				continue;
			}
			/* Unknown escape: like the reference, keep the ESC and
			 * treat b as an ordinary byte (it may itself be ESC). */
			dec->stats.bad_escapes++;
			if (!hdlc_push(dec, RNSC_HDLC_ESC))
				continue;
		}
		if (b == RNSC_HDLC_ESC) {
			dec->esc = 1;
			continue;
		}
		hdlc_push(dec, b);
	}
	return 0;
}
