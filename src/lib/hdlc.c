/* SPDX-License-Identifier: MIT */
#include "hdlc.h"

#include <limits.h>
#include <string.h>

/* Decoder states. HUNT until the first FLAG so that whatever precedes it (a
 * half-read frame after a reconnect, line noise) never becomes a frame. */
enum { HDLC_HUNT = 0, HDLC_FRAME = 1, HDLC_DISCARD = 2 };

/* Unescaped forms, spelled out so the decoder's comparisons read naturally. */
#define HDLC_ESCAPED_FLAG (RNSC_HDLC_FLAG ^ RNSC_HDLC_ESC_MASK) /* 0x5E */
#define HDLC_ESCAPED_ESC (RNSC_HDLC_ESC ^ RNSC_HDLC_ESC_MASK)   /* 0x5D */

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
	for (i = 0; i < len; i++) {
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
	need = rnsc_hdlc_encoded_len(p, len);
	/* Checked before the buffer so callers learn a frame can never be sent. */
	if (need > (size_t)INT_MAX)
		return RNSC_ERR_TOOBIG;
	if (out == NULL || need > cap)
		return RNSC_ERR_BUFSIZE;

	out[o++] = RNSC_HDLC_FLAG;
	for (i = 0; i < len; i++) {
		uint8_t b = p[i];
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
		uint8_t b = chunk[i];

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
