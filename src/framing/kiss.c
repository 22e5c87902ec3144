/* SPDX-License-Identifier: MIT */
#include "kiss.h"

#include <limits.h>
#include <string.h>

/* HUNT until the first FEND so a partial frame at start-up is never taken for
 * a frame; TYPE right after every FEND; DISCARD after an oversized payload. */
enum { KISS_HUNT = 0, KISS_TYPE = 1, KISS_FRAME = 2, KISS_DISCARD = 3 };

static int kiss_special(uint8_t b)
{
	return b == RNSC_KISS_FEND || b == RNSC_KISS_FESC;
}

size_t rnsc_kiss_encoded_max(size_t len)
{
	if (len > (SIZE_MAX - 4) / 2)
		return SIZE_MAX;
	return 2 * len + 4;
}

static size_t kiss_put(uint8_t *out, size_t o, uint8_t b)
{
	/* The reference escapes FESC first and FEND second, in two passes over
	 * the payload; the second pass never matches bytes the first produced
	 * (DB DD holds no C0), so one pass yields the same bytes. */
	if (b == RNSC_KISS_FESC) {
		out[o++] = RNSC_KISS_FESC;
		out[o++] = RNSC_KISS_TFESC;
	} else if (b == RNSC_KISS_FEND) {
		out[o++] = RNSC_KISS_FESC;
		out[o++] = RNSC_KISS_TFEND;
	} else {
		out[o++] = b;
	}
	return o;
}

int rnsc_kiss_encode_frame(uint8_t *out, size_t cap, uint8_t type, const uint8_t *p, size_t len)
{
	size_t need, o = 0, i;

	if ((p == NULL && len > 0) || (out == NULL && cap > 0))
		return RNSC_ERR_INVAL;
	need = 3 + (size_t)kiss_special(type);
	for (i = 0; i < len; i++) {
		size_t add = 1 + (size_t)kiss_special(p[i]);
		if (need > (size_t)INT_MAX)
			break;
		need += add;
	}
	if (need > (size_t)INT_MAX)
		return RNSC_ERR_TOOBIG;
	if (out == NULL || need > cap)
		return RNSC_ERR_BUFSIZE;

	out[o++] = RNSC_KISS_FEND;
	o = kiss_put(out, o, type);
	for (i = 0; i < len; i++)
		o = kiss_put(out, o, p[i]);
	out[o++] = RNSC_KISS_FEND;
	return (int)o;
}

int rnsc_kiss_encode(uint8_t *out, size_t cap, const uint8_t *p, size_t len)
{
	return rnsc_kiss_encode_frame(out, cap, RNSC_KISS_TYPE(0, RNSC_KISS_CMD_DATA), p, len);
}

int rnsc_kiss_encode_command(uint8_t *out, size_t cap, uint8_t cmd, uint8_t value)
{
	if (out == NULL)
		return RNSC_ERR_INVAL;
	/* Data is not a command, and anything above 0x0F would name a port. */
	if (cmd == RNSC_KISS_CMD_DATA || (cmd > 0x0F && cmd != RNSC_KISS_CMD_RETURN))
		return RNSC_ERR_INVAL;
	return rnsc_kiss_encode_frame(out, cap, cmd, &value, 1);
}

uint8_t rnsc_kiss_param_from_ms(long ms)
{
	long v = ms / 10; /* C truncates toward zero, as Python's int() of a float does */

	if (v < 0)
		return 0;
	if (v > 255)
		return 255;
	return (uint8_t)v;
}

int rnsc_kiss_decoder_init(rnsc_kiss_decoder *dec, uint8_t *buf, size_t max_frame)
{
	if (dec == NULL || buf == NULL || max_frame == 0)
		return RNSC_ERR_INVAL;
	memset(dec, 0, sizeof(*dec));
	dec->buf = buf;
	dec->max_frame = max_frame;
	dec->state = KISS_HUNT;
	return 0;
}

void rnsc_kiss_decoder_reset(rnsc_kiss_decoder *dec)
{
	if (dec == NULL)
		return;
	dec->state = KISS_HUNT;
	dec->len = 0;
	dec->esc = 0;
	dec->type = 0;
}

static int kiss_close_frame(rnsc_kiss_decoder *dec, rnsc_kiss_frame_fn cb, void *ud)
{
	size_t n = dec->len;
	int is_data = RNSC_KISS_CMD(dec->type) == RNSC_KISS_CMD_DATA;

	dec->len = 0;
	if (is_data && n == 0) {
		dec->stats.empty++;
		return 0;
	}
	dec->stats.frames++;
	if (is_data)
		dec->stats.data_frames++;
	dec->stats.bytes += n;
	return cb(ud, dec->type, dec->buf, n);
}

int rnsc_kiss_decoder_feed(rnsc_kiss_decoder *dec, const uint8_t *chunk, size_t len,
			   rnsc_kiss_frame_fn cb, void *ud)
{
	size_t i;

	if (dec == NULL || cb == NULL || (chunk == NULL && len > 0))
		return RNSC_ERR_INVAL;

	for (i = 0; i < len; i++) {
		uint8_t b = chunk[i];

		if (b == RNSC_KISS_FEND) {
			if (dec->esc) {
				/* FESC FEND: the frame still ends here; the
				 * dangling FESC is dropped, as the reference does. */
				dec->esc = 0;
				dec->stats.bad_escapes++;
			}
			if (dec->state == KISS_TYPE) {
				dec->stats.empty++;
			} else if (dec->state == KISS_FRAME) {
				int rc = kiss_close_frame(dec, cb, ud);
				if (rc != 0) {
					rnsc_kiss_decoder_reset(dec);
					return rc;
				}
			}
			dec->state = KISS_TYPE;
			dec->len = 0;
			continue;
		}

		if (dec->state == KISS_HUNT) {
			dec->stats.garbage++;
			continue;
		}
		if (dec->state == KISS_DISCARD)
			continue;

		if (dec->esc) {
			dec->esc = 0;
			if (b == RNSC_KISS_TFEND)
				b = RNSC_KISS_FEND;
			else if (b == RNSC_KISS_TFESC)
				b = RNSC_KISS_FESC;
			else
				dec->stats.bad_escapes++; /* kept as is, like the reference */
		} else if (b == RNSC_KISS_FESC) {
			dec->esc = 1;
			continue;
		}

		if (dec->state == KISS_TYPE) {
			dec->type = b;
			dec->state = KISS_FRAME;
			dec->len = 0;
			continue;
		}
		if (dec->len >= dec->max_frame) {
			dec->stats.drop_oversize++;
			dec->state = KISS_DISCARD;
			dec->len = 0;
			continue;
		}
		dec->buf[dec->len++] = b;
	}
	return 0;
}
