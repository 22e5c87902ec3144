/* SPDX-License-Identifier: MIT */
/*
 * A small MessagePack codec with exact control over the bytes, matching the
 * umsgpack 2.7.1 that rns 1.5.4 vendors (RNS/vendor/umsgpack.py) for every
 * value rnsc emits. No allocation: the writer fills a caller buffer, the
 * reader is a cursor over caller bytes and hands out pointers into them.
 *
 * Encoding choices of umsgpack (and therefore of this writer):
 *   - integers take the smallest form, and the sign decides the family:
 *     0..127 positive fixint, then uint8/16/32/64 (cc..cf) for larger
 *     non-negative values (never int8..64); -1..-32 negative fixint, then
 *     int8/16/32/64 (d0..d3) for smaller values;
 *   - floats are always float64 (cb) on CPython (umsgpack picks double when
 *     sys.float_info.mant_dig == 53); float32 (ca) only with
 *     force_float_precision="single", which rns never passes. NaN from Python
 *     is cb 7f f8 00 00 00 00 00 00; the writer copies whatever bits it gets;
 *   - str uses fixstr (< 32 bytes), str8 (d9, < 256), str16, str32;
 *   - bytes use bin8 (c4, even for short values), bin16, bin32; there is no
 *     old-spec raw mode (umsgpack.compatibility stays False in rns);
 *   - arrays and maps: fix (< 16), 16-bit, 32-bit headers; maps keep the
 *     insertion order of the Python dict;
 *   - ext: rns registers no ext types. umsgpack would emit fixext1/2/4/8/16
 *     for those exact sizes and ext8/16/32 otherwise; rnsc_mp_write_ext()
 *     follows that, and the reader accepts ext so it can skip it.
 *
 * Decoding notes (what the reference accepts):
 *   - umsgpack.unpackb() reads one value and ignores trailing bytes; callers
 *     that need the same leniency just stop reading, stricter callers check
 *     rnsc_mp_reader_remaining() == 0;
 *   - 0xc1 is rejected, strings must be valid UTF-8 (Python's strict codec:
 *     no overlongs, no surrogates, nothing above U+10FFFF);
 *   - duplicate or unhashable map keys are rejected by the reference when it
 *     builds a dict; this codec does not look at keys, callers that walk maps
 *     decide for themselves;
 *   - ext type -1 is turned into a datetime by the reference, which rejects
 *     lengths other than 4, 8, 12; here every ext is opaque bytes.
 * Apart from those and the nesting limit below, rnsc_mp_skip() accepts
 * exactly the inputs umsgpack.unpack() accepts and consumes the same number
 * of bytes (checked against umsgpack 2.7.1 on 200k random inputs).
 *
 * Hostile input: every reader function checks lengths before touching bytes,
 * never reads outside [p, p+len), and refuses array/map headers that claim
 * more elements than bytes remain (each element takes at least one byte), so
 * a count is always safe to size an allocation with. rnsc_mp_skip() walks
 * nested values without recursion and refuses nesting deeper than
 * RNSC_MP_MAX_DEPTH.
 *
 * Threading: writer and reader are plain caller-owned values; no shared state.
 */
#ifndef RNSC_MSGPACK_H
#define RNSC_MSGPACK_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* Deepest container nesting rnsc_mp_skip() accepts (the outermost array or
 * map counts as depth 1). rns messages nest a few levels at most. */
#define RNSC_MP_MAX_DEPTH 32

/* ---- writer ---------------------------------------------------------- */

/* Caller storage. The first failing write latches its error in err; every
 * later write then fails with the same code without touching the buffer, so
 * a message can be written with unchecked calls and checked once at the end
 * with rnsc_mp_writer_finish(). buf == NULL makes a sizing pass: nothing is
 * stored, len counts the bytes that would be written. */
typedef struct rnsc_mp_writer {
	uint8_t *buf;
	size_t cap;
	size_t len;
	int err;
} rnsc_mp_writer;

/* buf may be NULL (sizing pass, cap ignored). Never fails. */
RNSC_API void rnsc_mp_writer_init(rnsc_mp_writer *w, uint8_t *buf, size_t cap);

/* Returns the number of bytes written (or counted), or the latched error
 * (RNSC_ERR_BUFSIZE: a write did not fit; RNSC_ERR_INVAL: bad argument or
 * invalid UTF-8; RNSC_ERR_TOOBIG: a length of 2^32 or more), or
 * RNSC_ERR_TOOBIG when the total exceeds INT_MAX, RNSC_ERR_INVAL for NULL w. */
RNSC_API int rnsc_mp_writer_finish(const rnsc_mp_writer *w);

/* Each write returns 0 or the latched error. A write that does not fit
 * writes nothing and latches RNSC_ERR_BUFSIZE. */
RNSC_API int rnsc_mp_write_nil(rnsc_mp_writer *w);
RNSC_API int rnsc_mp_write_bool(rnsc_mp_writer *w, int v);
/* Smallest encoding, as umsgpack: a non-negative v is written as by
 * rnsc_mp_write_uint(). */
RNSC_API int rnsc_mp_write_int(rnsc_mp_writer *w, int64_t v);
RNSC_API int rnsc_mp_write_uint(rnsc_mp_writer *w, uint64_t v);
/* float64 (cb): what umsgpack emits for every Python float. */
RNSC_API int rnsc_mp_write_double(rnsc_mp_writer *w, double v);
/* float32 (ca): only for peers that ask for it; rns never emits it. */
RNSC_API int rnsc_mp_write_float(rnsc_mp_writer *w, float v);
/* s holds len bytes of UTF-8 (no terminator needed). Latches RNSC_ERR_INVAL
 * for invalid UTF-8 (the reference cannot produce such a str) and
 * RNSC_ERR_TOOBIG for len >= 2^32. */
RNSC_API int rnsc_mp_write_str(rnsc_mp_writer *w, const char *s, size_t len);
/* NUL-terminated convenience form of rnsc_mp_write_str(). */
RNSC_API int rnsc_mp_write_cstr(rnsc_mp_writer *w, const char *s);
/* Latches RNSC_ERR_TOOBIG for len >= 2^32, RNSC_ERR_INVAL for NULL p with len > 0. */
RNSC_API int rnsc_mp_write_bin(rnsc_mp_writer *w, const uint8_t *p, size_t len);
/* Headers only: the caller then writes n values (array) or n key/value
 * pairs (map). Latch RNSC_ERR_TOOBIG for n >= 2^32. */
RNSC_API int rnsc_mp_write_array(rnsc_mp_writer *w, size_t n);
RNSC_API int rnsc_mp_write_map(rnsc_mp_writer *w, size_t n);
/* Ext value of application type `type`, in umsgpack's choice of form. */
RNSC_API int rnsc_mp_write_ext(rnsc_mp_writer *w, int8_t type, const uint8_t *p, size_t len);
/* Appends already-encoded MessagePack verbatim (not checked). */
RNSC_API int rnsc_mp_write_raw(rnsc_mp_writer *w, const uint8_t *p, size_t len);

/* ---- reader ---------------------------------------------------------- */

/* Cursor over caller bytes, which must outlive every pointer handed out.
 * Every reader function either succeeds and advances past what it read, or
 * fails and leaves pos unchanged, so a caller may try another type. */
typedef struct rnsc_mp_reader {
	const uint8_t *p;
	size_t len;
	size_t pos;
} rnsc_mp_reader;

typedef enum rnsc_mp_type {
	RNSC_MP_NIL = 1,
	RNSC_MP_BOOL,
	RNSC_MP_UINT, /* any integer >= 0, whatever its encoding */
	RNSC_MP_INT,  /* any integer < 0 */
	RNSC_MP_FLOAT32,
	RNSC_MP_FLOAT64,
	RNSC_MP_STR,
	RNSC_MP_BIN,
	RNSC_MP_ARRAY,
	RNSC_MP_MAP,
	RNSC_MP_EXT
} rnsc_mp_type;

/* One token: a scalar, a str/bin/ext with its payload, or a container
 * header (its elements follow as further tokens). */
typedef struct rnsc_mp_token {
	rnsc_mp_type type;
	uint8_t code;     /* the leading byte: tells encodings apart (e.g. fixint vs cc) */
	size_t size;      /* bytes this token occupies (container: header only) */
	int boolean;      /* BOOL */
	uint64_t u;       /* UINT */
	int64_t i;        /* INT */
	float f32;        /* FLOAT32 */
	double f64;       /* FLOAT64 */
	int8_t ext_type;  /* EXT */
	const uint8_t *p; /* STR, BIN, EXT: payload inside the reader's bytes */
	size_t len;       /* STR/BIN/EXT: payload bytes; ARRAY: elements; MAP: pairs */
} rnsc_mp_token;

RNSC_API void rnsc_mp_reader_init(rnsc_mp_reader *r, const uint8_t *p, size_t len);
RNSC_API size_t rnsc_mp_reader_remaining(const rnsc_mp_reader *r);

/* Reads the next token and advances past it (for containers: past the
 * header only). Returns 0, or
 *   RNSC_ERR_TRUNCATED  input ends inside the token, or an array/map claims
 *                       more elements than bytes remain (also at end of input),
 *   RNSC_ERR_MALFORMED  reserved code 0xc1, or a str that is not valid UTF-8,
 *   RNSC_ERR_INVAL      r or t NULL,
 *   RNSC_ERR_STATE      the caller moved pos beyond len. */
RNSC_API int rnsc_mp_next(rnsc_mp_reader *r, rnsc_mp_token *t);
/* Same as rnsc_mp_next() without advancing. */
RNSC_API int rnsc_mp_peek(const rnsc_mp_reader *r, rnsc_mp_token *t);

/* Skips one complete value, containers with all their contents. Returns 0,
 * the errors of rnsc_mp_next(), or RNSC_ERR_TOOBIG when containers nest
 * deeper than RNSC_MP_MAX_DEPTH. */
RNSC_API int rnsc_mp_skip(rnsc_mp_reader *r);

/* Typed getters. Besides the errors of rnsc_mp_next() they return
 * RNSC_ERR_MALFORMED when the next value has another type, and the integer
 * getters RNSC_ERR_RANGE when the value does not fit the C type. */
RNSC_API int rnsc_mp_read_nil(rnsc_mp_reader *r);
RNSC_API int rnsc_mp_read_bool(rnsc_mp_reader *r, int *out);
RNSC_API int rnsc_mp_read_int(rnsc_mp_reader *r, int64_t *out);
RNSC_API int rnsc_mp_read_uint(rnsc_mp_reader *r, uint64_t *out);
/* Accepts float32 (widened exactly) and float64; integers are not floats. */
RNSC_API int rnsc_mp_read_double(rnsc_mp_reader *r, double *out);
/* *s points into the input and is NOT NUL-terminated. */
RNSC_API int rnsc_mp_read_str(rnsc_mp_reader *r, const char **s, size_t *len);
/* *p points into the input. */
RNSC_API int rnsc_mp_read_bin(rnsc_mp_reader *r, const uint8_t **p, size_t *len);
/* Headers: *n elements (array) or pairs (map) follow. */
RNSC_API int rnsc_mp_read_array(rnsc_mp_reader *r, size_t *n);
RNSC_API int rnsc_mp_read_map(rnsc_mp_reader *r, size_t *n);
RNSC_API int rnsc_mp_read_ext(rnsc_mp_reader *r, int8_t *type, const uint8_t **p, size_t *len);

/* Python-strict UTF-8 check (1 valid, 0 not), the rule str values obey. */
RNSC_API int rnsc_mp_utf8_valid(const uint8_t *p, size_t len);

#endif
