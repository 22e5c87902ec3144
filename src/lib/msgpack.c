/* SPDX-License-Identifier: MIT */
#include "msgpack.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

/* ---- writer ---------------------------------------------------------- */

void rnsc_mp_writer_init(rnsc_mp_writer *w, uint8_t *buf, size_t cap)
{
	w->buf = buf;
	w->cap = buf == NULL ? 0 : cap;
	w->len = 0;
	w->err = 0;
}

int rnsc_mp_writer_finish(const rnsc_mp_writer *w)
{
	if (w == NULL)
		return RNSC_ERR_INVAL;
	if (w->err != 0)
		return w->err;
	if (w->len > (size_t)INT_MAX)
		return RNSC_ERR_TOOBIG;
	return (int)w->len;
}

/* A length msgpack's 32-bit length fields cannot carry. A 32-bit size_t never exceeds it (and
 * the comparison would draw -Wtype-limits on armhf). */
static int mp_over_u32(size_t len)
{
#if SIZE_MAX > UINT32_MAX
	return len > UINT32_MAX;
#else
	(void)len;
	return 0;
#endif
}

static int mp_fail(rnsc_mp_writer *w, int err)
{
	if (w->err == 0)
		w->err = err;
	return w->err;
}

/* Header and payload go through one call so that a value is either written
 * whole or not at all: a half-written value would be worse than none if a
 * caller ignored the latch. */
static int mp_put2(rnsc_mp_writer *w, const uint8_t *hdr, size_t hlen, const uint8_t *body,
		   size_t blen)
{
	if (w->err != 0)
		return w->err;
	if (blen > SIZE_MAX - hlen || hlen + blen > SIZE_MAX - w->len)
		return mp_fail(w, RNSC_ERR_TOOBIG);
	if (w->buf != NULL) {
		if (hlen + blen > w->cap - w->len)
			return mp_fail(w, RNSC_ERR_BUFSIZE);
		/* memcpy with a NULL source is undefined even for 0 bytes, and
		 * rnsc_mp_write_raw(w, NULL, 0) is legal */
		if (hlen > 0)
			memcpy(w->buf + w->len, hdr, hlen);
		if (blen > 0)
			memcpy(w->buf + w->len + hlen, body, blen);
	}
	w->len += hlen + blen;
	return 0;
}

static size_t mp_be(uint8_t *out, uint64_t v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		out[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
	return n;
}

/* code followed by a big-endian n-byte value. */
static int mp_put_code(rnsc_mp_writer *w, uint8_t code, uint64_t v, size_t n)
{
	uint8_t hdr[9];

	hdr[0] = code;
	mp_be(hdr + 1, v, n);
	return mp_put2(w, hdr, 1 + n, NULL, 0);
}

static int mp_check(rnsc_mp_writer *w)
{
	if (w == NULL)
		return RNSC_ERR_INVAL;
	return w->err;
}

int rnsc_mp_write_nil(rnsc_mp_writer *w)
{
	uint8_t c = 0xc0;
	int rc = mp_check(w);

	return rc ? rc : mp_put2(w, &c, 1, NULL, 0);
}

int rnsc_mp_write_bool(rnsc_mp_writer *w, int v)
{
	uint8_t c = v ? 0xc3 : 0xc2;
	int rc = mp_check(w);

	return rc ? rc : mp_put2(w, &c, 1, NULL, 0);
}

int rnsc_mp_write_uint(rnsc_mp_writer *w, uint64_t v)
{
	uint8_t c;
	int rc = mp_check(w);

	if (rc)
		return rc;
	if (v < 128) {
		c = (uint8_t)v;
		return mp_put2(w, &c, 1, NULL, 0);
	}
	if (v <= UINT8_MAX)
		return mp_put_code(w, 0xcc, v, 1);
	if (v <= UINT16_MAX)
		return mp_put_code(w, 0xcd, v, 2);
	if (v <= UINT32_MAX)
		return mp_put_code(w, 0xce, v, 4);
	return mp_put_code(w, 0xcf, v, 8);
}

int rnsc_mp_write_int(rnsc_mp_writer *w, int64_t v)
{
	uint8_t c;
	int rc = mp_check(w);

	if (rc)
		return rc;
	/* umsgpack chooses the family by sign: non-negative values never use
	 * the signed forms, even where int8 would be as short. */
	if (v >= 0)
		return rnsc_mp_write_uint(w, (uint64_t)v);
	/* Two's complement bits of v, truncated to the field width below. */
	if (v >= -32) {
		c = (uint8_t)((uint64_t)v & 0xff);
		return mp_put2(w, &c, 1, NULL, 0);
	}
	if (v >= INT8_MIN)
		return mp_put_code(w, 0xd0, (uint64_t)v, 1);
	if (v >= INT16_MIN)
		return mp_put_code(w, 0xd1, (uint64_t)v, 2);
	if (v >= INT32_MIN)
		return mp_put_code(w, 0xd2, (uint64_t)v, 4);
	return mp_put_code(w, 0xd3, (uint64_t)v, 8);
}

int rnsc_mp_write_double(rnsc_mp_writer *w, double v)
{
	uint64_t bits;
	int rc = mp_check(w);

	if (rc)
		return rc;
	memcpy(&bits, &v, sizeof(bits));
	return mp_put_code(w, 0xcb, bits, 8);
}

int rnsc_mp_write_float(rnsc_mp_writer *w, float v)
{
	uint32_t bits;
	int rc = mp_check(w);

	if (rc)
		return rc;
	memcpy(&bits, &v, sizeof(bits));
	return mp_put_code(w, 0xca, bits, 4);
}

int rnsc_mp_write_str(rnsc_mp_writer *w, const char *s, size_t len)
{
	uint8_t hdr[5];
	size_t h;
	int rc = mp_check(w);

	if (rc)
		return rc;
	if (s == NULL && len > 0)
		return mp_fail(w, RNSC_ERR_INVAL);
	if (mp_over_u32(len))
		return mp_fail(w, RNSC_ERR_TOOBIG);
	if (!rnsc_mp_utf8_valid((const uint8_t *)s, len))
		return mp_fail(w, RNSC_ERR_INVAL);
	if (len < 32) {
		hdr[0] = (uint8_t)(0xa0 | len);
		h = 1;
	} else if (len <= UINT8_MAX) {
		hdr[0] = 0xd9; /* umsgpack does use str8 */
		h = 1 + mp_be(hdr + 1, len, 1);
	} else if (len <= UINT16_MAX) {
		hdr[0] = 0xda;
		h = 1 + mp_be(hdr + 1, len, 2);
	} else {
		hdr[0] = 0xdb;
		h = 1 + mp_be(hdr + 1, len, 4);
	}
	return mp_put2(w, hdr, h, (const uint8_t *)s, len);
}

int rnsc_mp_write_cstr(rnsc_mp_writer *w, const char *s)
{
	int rc = mp_check(w);

	if (rc)
		return rc;
	if (s == NULL)
		return mp_fail(w, RNSC_ERR_INVAL);
	return rnsc_mp_write_str(w, s, strlen(s));
}

int rnsc_mp_write_bin(rnsc_mp_writer *w, const uint8_t *p, size_t len)
{
	uint8_t hdr[5];
	size_t h;
	int rc = mp_check(w);

	if (rc)
		return rc;
	if (p == NULL && len > 0)
		return mp_fail(w, RNSC_ERR_INVAL);
	if (mp_over_u32(len))
		return mp_fail(w, RNSC_ERR_TOOBIG);
	if (len <= UINT8_MAX) {
		hdr[0] = 0xc4;
		h = 1 + mp_be(hdr + 1, len, 1);
	} else if (len <= UINT16_MAX) {
		hdr[0] = 0xc5;
		h = 1 + mp_be(hdr + 1, len, 2);
	} else {
		hdr[0] = 0xc6;
		h = 1 + mp_be(hdr + 1, len, 4);
	}
	return mp_put2(w, hdr, h, p, len);
}

static int mp_write_container(rnsc_mp_writer *w, size_t n, uint8_t fix, uint8_t c16, uint8_t c32)
{
	uint8_t c;
	int rc = mp_check(w);

	if (rc)
		return rc;
	if (mp_over_u32(n))
		return mp_fail(w, RNSC_ERR_TOOBIG);
	if (n < 16) {
		c = (uint8_t)(fix | n);
		return mp_put2(w, &c, 1, NULL, 0);
	}
	if (n <= UINT16_MAX)
		return mp_put_code(w, c16, n, 2);
	return mp_put_code(w, c32, n, 4);
}

int rnsc_mp_write_array(rnsc_mp_writer *w, size_t n)
{
	return mp_write_container(w, n, 0x90, 0xdc, 0xdd);
}

int rnsc_mp_write_map(rnsc_mp_writer *w, size_t n)
{
	return mp_write_container(w, n, 0x80, 0xde, 0xdf);
}

int rnsc_mp_write_ext(rnsc_mp_writer *w, int8_t type, const uint8_t *p, size_t len)
{
	uint8_t hdr[6];
	size_t h;
	int rc = mp_check(w);

	if (rc)
		return rc;
	if (p == NULL && len > 0)
		return mp_fail(w, RNSC_ERR_INVAL);
	if (mp_over_u32(len))
		return mp_fail(w, RNSC_ERR_TOOBIG);
	switch (len) {
	case 1:
		hdr[0] = 0xd4;
		h = 1;
		break;
	case 2:
		hdr[0] = 0xd5;
		h = 1;
		break;
	case 4:
		hdr[0] = 0xd6;
		h = 1;
		break;
	case 8:
		hdr[0] = 0xd7;
		h = 1;
		break;
	case 16:
		hdr[0] = 0xd8;
		h = 1;
		break;
	default:
		if (len <= UINT8_MAX) {
			hdr[0] = 0xc7;
			h = 1 + mp_be(hdr + 1, len, 1);
		} else if (len <= UINT16_MAX) {
			hdr[0] = 0xc8;
			h = 1 + mp_be(hdr + 1, len, 2);
		} else {
			hdr[0] = 0xc9;
			h = 1 + mp_be(hdr + 1, len, 4);
		}
	}
	hdr[h++] = (uint8_t)type;
	return mp_put2(w, hdr, h, p, len);
}

int rnsc_mp_write_raw(rnsc_mp_writer *w, const uint8_t *p, size_t len)
{
	int rc = mp_check(w);

	if (rc)
		return rc;
	if (p == NULL && len > 0)
		return mp_fail(w, RNSC_ERR_INVAL);
	return mp_put2(w, p, len, NULL, 0);
}

/* ---- UTF-8 ----------------------------------------------------------- */

int rnsc_mp_utf8_valid(const uint8_t *p, size_t len)
{
	size_t i = 0;

	if (p == NULL)
		return len == 0;
	while (i < len) {
		uint8_t b = p[i];
		size_t n;
		uint8_t lo = 0x80, hi = 0xbf; /* allowed range of the 2nd byte */

		if (b < 0x80) {
			i++;
			continue;
		}
		/* Python's strict decoder: C0/C1 and F5..FF never start a
		 * sequence; E0 and F0 have narrowed 2nd bytes (no overlongs),
		 * ED excludes surrogates, F4 caps at U+10FFFF. */
		if (b >= 0xc2 && b <= 0xdf) {
			n = 1;
		} else if (b >= 0xe0 && b <= 0xef) {
			n = 2;
			if (b == 0xe0)
				lo = 0xa0;
			else if (b == 0xed)
				hi = 0x9f;
		} else if (b >= 0xf0 && b <= 0xf4) {
			n = 3;
			if (b == 0xf0)
				lo = 0x90;
			else if (b == 0xf4)
				hi = 0x8f;
		} else {
			return 0;
		}
		if (len - i - 1 < n)
			return 0;
		if (p[i + 1] < lo || p[i + 1] > hi)
			return 0;
		for (size_t k = 2; k <= n; k++)
			if ((p[i + k] & 0xc0) != 0x80)
				return 0;
		i += n + 1;
	}
	return 1;
}

/* ---- reader ---------------------------------------------------------- */

void rnsc_mp_reader_init(rnsc_mp_reader *r, const uint8_t *p, size_t len)
{
	r->p = p;
	r->len = p == NULL ? 0 : len;
	r->pos = 0;
}

size_t rnsc_mp_reader_remaining(const rnsc_mp_reader *r)
{
	if (r == NULL || r->pos > r->len)
		return 0;
	return r->len - r->pos;
}

static uint64_t mp_get_be(const uint8_t *p, size_t n)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < n; i++)
		v = (v << 8) | p[i];
	return v;
}

/* Sign-extends an n-byte two's complement value without relying on
 * implementation-defined conversions. */
static int64_t mp_sext(uint64_t v, size_t n)
{
	uint64_t sign = (uint64_t)1 << (8 * n - 1);

	if (v & sign) {
		uint64_t mag = ((~v) & ((sign << 1) - 1)) + 1; /* |value|, may be 2^63 */
		if (mag == ((uint64_t)1 << 63))
			return INT64_MIN;
		return -(int64_t)mag;
	}
	return (int64_t)v;
}

static void mp_set_int(rnsc_mp_token *t, int64_t v)
{
	if (v < 0) {
		t->type = RNSC_MP_INT;
		t->i = v;
	} else {
		t->type = RNSC_MP_UINT;
		t->u = (uint64_t)v;
	}
}

/* Parses one token at p (avail bytes). The core of every reader function:
 * all bounds checks live here. */
static int mp_parse(const uint8_t *p, size_t avail, rnsc_mp_token *t)
{
	uint8_t c;
	size_t lenbytes = 0, hdr;
	uint64_t v;

	memset(t, 0, sizeof(*t));
	if (avail == 0)
		return RNSC_ERR_TRUNCATED;
	c = p[0];
	t->code = c;
	t->size = 1;

	if (c <= 0x7f) {
		t->type = RNSC_MP_UINT;
		t->u = c;
		return 0;
	}
	if (c >= 0xe0) {
		t->type = RNSC_MP_INT;
		t->i = (int64_t)c - 256;
		return 0;
	}
	if (c >= 0x80 && c <= 0x8f) {
		t->type = RNSC_MP_MAP;
		t->len = c & 0x0f;
		goto container;
	}
	if (c >= 0x90 && c <= 0x9f) {
		t->type = RNSC_MP_ARRAY;
		t->len = c & 0x0f;
		goto container;
	}
	if (c >= 0xa0 && c <= 0xbf) {
		t->type = RNSC_MP_STR;
		t->len = c & 0x1f;
		hdr = 1;
		goto payload;
	}

	switch (c) {
	case 0xc0:
		t->type = RNSC_MP_NIL;
		return 0;
	case 0xc1:
		return RNSC_ERR_MALFORMED; /* reserved, never valid */
	case 0xc2:
	case 0xc3:
		t->type = RNSC_MP_BOOL;
		t->boolean = c == 0xc3;
		return 0;
	case 0xc4:
	case 0xc5:
	case 0xc6:
		t->type = RNSC_MP_BIN;
		lenbytes = (size_t)1 << (c - 0xc4);
		goto sized;
	case 0xc7:
	case 0xc8:
	case 0xc9:
		t->type = RNSC_MP_EXT;
		lenbytes = (size_t)1 << (c - 0xc7);
		goto sized;
	case 0xca:
		if (avail < 5)
			return RNSC_ERR_TRUNCATED;
		{
			uint32_t bits = (uint32_t)mp_get_be(p + 1, 4);
			memcpy(&t->f32, &bits, sizeof(bits));
		}
		t->type = RNSC_MP_FLOAT32;
		t->size = 5;
		return 0;
	case 0xcb:
		if (avail < 9)
			return RNSC_ERR_TRUNCATED;
		v = mp_get_be(p + 1, 8);
		memcpy(&t->f64, &v, sizeof(v));
		t->type = RNSC_MP_FLOAT64;
		t->size = 9;
		return 0;
	case 0xcc:
	case 0xcd:
	case 0xce:
	case 0xcf:
		lenbytes = (size_t)1 << (c - 0xcc);
		if (avail < 1 + lenbytes)
			return RNSC_ERR_TRUNCATED;
		t->type = RNSC_MP_UINT;
		t->u = mp_get_be(p + 1, lenbytes);
		t->size = 1 + lenbytes;
		return 0;
	case 0xd0:
	case 0xd1:
	case 0xd2:
	case 0xd3:
		lenbytes = (size_t)1 << (c - 0xd0);
		if (avail < 1 + lenbytes)
			return RNSC_ERR_TRUNCATED;
		/* Valid msgpack may carry a non-negative value in a signed
		 * form (umsgpack decodes it); classify by value, not code. */
		mp_set_int(t, mp_sext(mp_get_be(p + 1, lenbytes), lenbytes));
		t->size = 1 + lenbytes;
		return 0;
	case 0xd4:
	case 0xd5:
	case 0xd6:
	case 0xd7:
	case 0xd8:
		t->type = RNSC_MP_EXT;
		t->len = (size_t)1 << (c - 0xd4);
		hdr = 1;
		goto ext_payload;
	case 0xd9:
	case 0xda:
	case 0xdb:
		t->type = RNSC_MP_STR;
		lenbytes = (size_t)1 << (c - 0xd9);
		goto sized;
	case 0xdc:
	case 0xdd:
		t->type = RNSC_MP_ARRAY;
		lenbytes = (size_t)2 << (c - 0xdc);
		goto sized_container;
	case 0xde:
	case 0xdf:
		t->type = RNSC_MP_MAP;
		lenbytes = (size_t)2 << (c - 0xde);
		goto sized_container;
	default:
		return RNSC_ERR_MALFORMED; /* unreachable: every code is covered */
	}

sized:
	if (avail < 1 + lenbytes)
		return RNSC_ERR_TRUNCATED;
	t->len = (size_t)mp_get_be(p + 1, lenbytes);
	hdr = 1 + lenbytes;
	if (t->type == RNSC_MP_EXT)
		goto ext_payload;
payload:
	if (avail - hdr < t->len)
		return RNSC_ERR_TRUNCATED;
	t->p = p + hdr;
	t->size = hdr + t->len;
	if (t->type == RNSC_MP_STR && !rnsc_mp_utf8_valid(t->p, t->len))
		return RNSC_ERR_MALFORMED;
	return 0;

ext_payload:
	/* One type byte sits between the length and the data. */
	if (avail - hdr < 1)
		return RNSC_ERR_TRUNCATED;
	t->ext_type = (int8_t)mp_sext(p[hdr], 1);
	hdr++;
	if (avail - hdr < t->len)
		return RNSC_ERR_TRUNCATED;
	t->p = p + hdr;
	t->size = hdr + t->len;
	return 0;

sized_container:
	if (avail < 1 + lenbytes)
		return RNSC_ERR_TRUNCATED;
	t->len = (size_t)mp_get_be(p + 1, lenbytes);
	t->size = 1 + lenbytes;
container:
	/* Every element needs at least one byte, every pair two: a count the
	 * rest of the input cannot satisfy is truncated (or a lie), and
	 * refusing it here makes counts safe for callers to allocate with. */
	{
		size_t rest = avail - t->size;
		if (t->type == RNSC_MP_ARRAY ? t->len > rest : t->len > rest / 2)
			return RNSC_ERR_TRUNCATED;
	}
	return 0;
}

int rnsc_mp_peek(const rnsc_mp_reader *r, rnsc_mp_token *t)
{
	if (r == NULL || t == NULL)
		return RNSC_ERR_INVAL;
	if (r->pos > r->len)
		return RNSC_ERR_STATE;
	return mp_parse(r->p + r->pos, r->len - r->pos, t);
}

int rnsc_mp_next(rnsc_mp_reader *r, rnsc_mp_token *t)
{
	int rc = rnsc_mp_peek(r, t);

	if (rc == 0)
		r->pos += t->size;
	return rc;
}

int rnsc_mp_skip(rnsc_mp_reader *r)
{
	/* pending[d] = values still to read at nesting level d; level 0 is the
	 * value being skipped. A map of n pairs is 2n values (fits: n < 2^32). */
	uint64_t pending[RNSC_MP_MAX_DEPTH + 1];
	size_t depth = 0, pos;
	rnsc_mp_token t;

	if (r == NULL)
		return RNSC_ERR_INVAL;
	if (r->pos > r->len)
		return RNSC_ERR_STATE;
	pos = r->pos;
	pending[0] = 1;
	for (;;) {
		int rc;

		while (pending[depth] == 0) {
			if (depth == 0) {
				r->pos = pos;
				return 0;
			}
			depth--;
		}
		pending[depth]--;
		rc = mp_parse(r->p + pos, r->len - pos, &t);
		if (rc != 0)
			return rc;
		pos += t.size;
		if (t.type == RNSC_MP_ARRAY || t.type == RNSC_MP_MAP) {
			/* Empty containers count too: the limit is on nesting as
			 * written, not on how much of it carries data. */
			if (depth + 1 > RNSC_MP_MAX_DEPTH)
				return RNSC_ERR_TOOBIG;
			if (t.len > 0) {
				depth++;
				pending[depth] =
					t.type == RNSC_MP_MAP ? 2 * (uint64_t)t.len : t.len;
			}
		}
	}
}

/* Peeks a token of the wanted type; the getters advance only on success. */
static int mp_want(rnsc_mp_reader *r, rnsc_mp_type type, rnsc_mp_token *t)
{
	int rc = rnsc_mp_peek(r, t);

	if (rc != 0)
		return rc;
	if (t->type != type)
		return RNSC_ERR_MALFORMED;
	return 0;
}

int rnsc_mp_read_nil(rnsc_mp_reader *r)
{
	rnsc_mp_token t;
	int rc = mp_want(r, RNSC_MP_NIL, &t);

	if (rc == 0)
		r->pos += t.size;
	return rc;
}

int rnsc_mp_read_bool(rnsc_mp_reader *r, int *out)
{
	rnsc_mp_token t;
	int rc = mp_want(r, RNSC_MP_BOOL, &t);

	if (rc != 0)
		return rc;
	if (out != NULL)
		*out = t.boolean;
	r->pos += t.size;
	return 0;
}

int rnsc_mp_read_int(rnsc_mp_reader *r, int64_t *out)
{
	rnsc_mp_token t;
	int64_t v;
	int rc = rnsc_mp_peek(r, &t);

	if (rc != 0)
		return rc;
	if (t.type == RNSC_MP_INT) {
		v = t.i;
	} else if (t.type == RNSC_MP_UINT) {
		if (t.u > (uint64_t)INT64_MAX)
			return RNSC_ERR_RANGE;
		v = (int64_t)t.u;
	} else {
		return RNSC_ERR_MALFORMED;
	}
	if (out != NULL)
		*out = v;
	r->pos += t.size;
	return 0;
}

int rnsc_mp_read_uint(rnsc_mp_reader *r, uint64_t *out)
{
	rnsc_mp_token t;
	int rc = rnsc_mp_peek(r, &t);

	if (rc != 0)
		return rc;
	if (t.type == RNSC_MP_INT)
		return RNSC_ERR_RANGE;
	if (t.type != RNSC_MP_UINT)
		return RNSC_ERR_MALFORMED;
	if (out != NULL)
		*out = t.u;
	r->pos += t.size;
	return 0;
}

int rnsc_mp_read_double(rnsc_mp_reader *r, double *out)
{
	rnsc_mp_token t;
	double v;
	int rc = rnsc_mp_peek(r, &t);

	if (rc != 0)
		return rc;
	if (t.type == RNSC_MP_FLOAT64)
		v = t.f64;
	else if (t.type == RNSC_MP_FLOAT32)
		v = (double)t.f32;
	else
		return RNSC_ERR_MALFORMED;
	if (out != NULL)
		*out = v;
	r->pos += t.size;
	return 0;
}

static int mp_read_bytes(rnsc_mp_reader *r, rnsc_mp_type type, const uint8_t **p, size_t *len)
{
	rnsc_mp_token t;
	int rc = mp_want(r, type, &t);

	if (rc != 0)
		return rc;
	if (p != NULL)
		*p = t.p;
	if (len != NULL)
		*len = t.len;
	r->pos += t.size;
	return 0;
}

int rnsc_mp_read_str(rnsc_mp_reader *r, const char **s, size_t *len)
{
	const uint8_t *p = NULL;
	int rc = mp_read_bytes(r, RNSC_MP_STR, &p, len);

	if (rc == 0 && s != NULL)
		*s = (const char *)p;
	return rc;
}

int rnsc_mp_read_bin(rnsc_mp_reader *r, const uint8_t **p, size_t *len)
{
	return mp_read_bytes(r, RNSC_MP_BIN, p, len);
}

int rnsc_mp_read_array(rnsc_mp_reader *r, size_t *n)
{
	rnsc_mp_token t;
	int rc = mp_want(r, RNSC_MP_ARRAY, &t);

	if (rc != 0)
		return rc;
	if (n != NULL)
		*n = t.len;
	r->pos += t.size;
	return 0;
}

int rnsc_mp_read_map(rnsc_mp_reader *r, size_t *n)
{
	rnsc_mp_token t;
	int rc = mp_want(r, RNSC_MP_MAP, &t);

	if (rc != 0)
		return rc;
	if (n != NULL)
		*n = t.len;
	r->pos += t.size;
	return 0;
}

int rnsc_mp_read_ext(rnsc_mp_reader *r, int8_t *type, const uint8_t **p, size_t *len)
{
	rnsc_mp_token t;
	int rc = mp_want(r, RNSC_MP_EXT, &t);

	if (rc != 0)
		return rc;
	if (type != NULL)
		*type = t.ext_type;
	if (p != NULL)
		*p = t.p;
	if (len != NULL)
		*len = t.len;
	r->pos += t.size;
	return 0;
}
