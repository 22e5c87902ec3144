/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the MessagePack reader and writer (src/lib/msgpack.c).
 *
 * Any input: skip() and the token walk must agree, typed getters must either
 * succeed or fail without moving the cursor, and nothing may read outside
 * the input. When the input starts with a complete value, its tokens are
 * re-encoded canonically (umsgpack's choices); the result must decode to the
 * same tokens, re-encode to identical bytes, never be longer than the input
 * value, and equal the input bytes token by token wherever the input was
 * already canonical.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "msgpack.h"

static void write_token(rnsc_mp_writer *w, const rnsc_mp_token *t)
{
	switch (t->type) {
	case RNSC_MP_NIL:
		rnsc_mp_write_nil(w);
		break;
	case RNSC_MP_BOOL:
		rnsc_mp_write_bool(w, t->boolean);
		break;
	case RNSC_MP_UINT:
		rnsc_mp_write_uint(w, t->u);
		break;
	case RNSC_MP_INT:
		rnsc_mp_write_int(w, t->i);
		break;
	case RNSC_MP_FLOAT32:
		rnsc_mp_write_float(w, t->f32);
		break;
	case RNSC_MP_FLOAT64:
		rnsc_mp_write_double(w, t->f64);
		break;
	case RNSC_MP_STR:
		rnsc_mp_write_str(w, (const char *)t->p, t->len);
		break;
	case RNSC_MP_BIN:
		rnsc_mp_write_bin(w, t->p, t->len);
		break;
	case RNSC_MP_ARRAY:
		rnsc_mp_write_array(w, t->len);
		break;
	case RNSC_MP_MAP:
		rnsc_mp_write_map(w, t->len);
		break;
	case RNSC_MP_EXT:
		rnsc_mp_write_ext(w, t->ext_type, t->p, t->len);
		break;
	}
}

static int same_token(const rnsc_mp_token *a, const rnsc_mp_token *b)
{
	if (a->type != b->type)
		return 0;
	switch (a->type) {
	case RNSC_MP_NIL:
		return 1;
	case RNSC_MP_BOOL:
		return a->boolean == b->boolean;
	case RNSC_MP_UINT:
		return a->u == b->u;
	case RNSC_MP_INT:
		return a->i == b->i;
	case RNSC_MP_FLOAT32:
		return memcmp(&a->f32, &b->f32, sizeof(a->f32)) == 0;
	case RNSC_MP_FLOAT64:
		return memcmp(&a->f64, &b->f64, sizeof(a->f64)) == 0;
	case RNSC_MP_ARRAY:
	case RNSC_MP_MAP:
		return a->len == b->len;
	case RNSC_MP_EXT:
		if (a->ext_type != b->ext_type)
			return 0;
		/* fall through */
	case RNSC_MP_STR:
	case RNSC_MP_BIN:
		return a->len == b->len && (a->len == 0 || memcmp(a->p, b->p, a->len) == 0);
	}
	return 0;
}

/* Every getter at the cursor: success advances by the token size, failure
 * leaves the cursor alone. */
static void poke_getters(const rnsc_mp_reader *at, size_t tok_size, int tok_ok)
{
	rnsc_mp_reader r;
	int b;
	int64_t i;
	uint64_t u;
	double d;
	const char *s;
	const uint8_t *p;
	size_t n;
	int8_t et;
	int rc[10], k;

#define POKE(idx, call)                                                                            \
	do {                                                                                       \
		r = *at;                                                                           \
		rc[idx] = (call);                                                                  \
		if (rc[idx] == 0 ? r.pos != at->pos + tok_size : r.pos != at->pos)                 \
			abort();                                                                   \
	} while (0)
	POKE(0, rnsc_mp_read_nil(&r));
	POKE(1, rnsc_mp_read_bool(&r, &b));
	POKE(2, rnsc_mp_read_int(&r, &i));
	POKE(3, rnsc_mp_read_uint(&r, &u));
	POKE(4, rnsc_mp_read_double(&r, &d));
	POKE(5, rnsc_mp_read_str(&r, &s, &n));
	POKE(6, rnsc_mp_read_bin(&r, &p, &n));
	POKE(7, rnsc_mp_read_array(&r, &n));
	POKE(8, rnsc_mp_read_map(&r, &n));
	POKE(9, rnsc_mp_read_ext(&r, &et, &p, &n));
#undef POKE
	for (k = 0; k < 10; k++)
		if (rc[k] == 0 && !tok_ok)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rnsc_mp_reader r, s;
	rnsc_mp_token t;
	rnsc_mp_writer w, sz;
	uint8_t *out;
	size_t value_len, ntok = 0;
	int rc_skip, rc, len;

	/* exact-size copy so any overread is caught */
	uint8_t *in = malloc(size ? size : 1);
	if (in == NULL)
		abort();
	memcpy(in, data, size);

	rnsc_mp_reader_init(&s, in, size);
	rc_skip = rnsc_mp_skip(&s);
	if (rc_skip != 0 && s.pos != 0)
		abort();
	if (rc_skip != 0 && rc_skip != RNSC_ERR_TRUNCATED && rc_skip != RNSC_ERR_MALFORMED &&
	    rc_skip != RNSC_ERR_TOOBIG)
		abort();
	value_len = s.pos;

	/* token walk over the whole input, poking every getter on the way */
	rnsc_mp_reader_init(&r, in, size);
	for (;;) {
		rnsc_mp_reader at = r;
		rc = rnsc_mp_next(&r, &t);
		poke_getters(&at, rc == 0 ? t.size : 0, rc == 0);
		if (rc != 0) {
			if (r.pos != at.pos)
				abort();
			break;
		}
		if (t.size == 0 || r.pos > size)
			abort();
	}

	if (rc_skip != 0) {
		free(in);
		return 0;
	}

	/* re-encode the first value token by token */
	out = malloc(value_len ? value_len : 1);
	if (out == NULL)
		abort();
	rnsc_mp_writer_init(&w, out, value_len);
	rnsc_mp_writer_init(&sz, NULL, 0);
	rnsc_mp_reader_init(&r, in, value_len);
	while (r.pos < value_len) {
		size_t before = w.len, at = r.pos;
		if (rnsc_mp_next(&r, &t) != 0)
			abort();
		write_token(&w, &t);
		write_token(&sz, &t);
		if (w.err != 0)
			abort(); /* canonical is never longer than any valid form */
		/* a token already in canonical form comes out unchanged */
		if (w.len - before == t.size && memcmp(out + before, in + at, t.size) != 0) {
			/* same length but different bytes is only possible for
			 * non-canonical ints of equal width (e.g. d0 05 vs cc..) */
			if (t.type != RNSC_MP_UINT && t.type != RNSC_MP_INT)
				abort();
		}
		ntok++;
	}
	len = rnsc_mp_writer_finish(&w);
	if (len < 0 || (size_t)len > value_len || rnsc_mp_writer_finish(&sz) != len)
		abort();

	/* the canonical bytes decode to the same tokens and re-encode identically */
	{
		rnsc_mp_reader a, c;
		rnsc_mp_writer w2;
		uint8_t *out2 = malloc((size_t)len ? (size_t)len : 1);
		rnsc_mp_token ta, tc;

		if (out2 == NULL)
			abort();
		rnsc_mp_reader_init(&a, in, value_len);
		rnsc_mp_reader_init(&c, out, (size_t)len);
		rnsc_mp_writer_init(&w2, out2, (size_t)len);
		while (ntok--) {
			if (rnsc_mp_next(&a, &ta) != 0 || rnsc_mp_next(&c, &tc) != 0 ||
			    !same_token(&ta, &tc))
				abort();
			write_token(&w2, &tc);
		}
		if (rnsc_mp_reader_remaining(&c) != 0 || rnsc_mp_writer_finish(&w2) != len ||
		    memcmp(out, out2, (size_t)len) != 0)
			abort();
		rnsc_mp_reader_init(&c, out, (size_t)len);
		if (rnsc_mp_skip(&c) != 0 || c.pos != (size_t)len)
			abort();
		free(out2);
	}
	free(out);
	free(in);
	return 0;
}
