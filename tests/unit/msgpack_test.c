/* SPDX-License-Identifier: MIT */
/*
 * CUnit suite for src/lib/msgpack.c.
 *
 * The golden vectors in tests/data/msgpack_golden.txt were produced by the
 * reference's vendored umsgpack (see the file's header for the rns version
 * and command). Each is checked both ways: encoding its tokens must give the
 * reference's bytes exactly, and decoding those bytes must give the tokens
 * back. Every truncation of every value must fail cleanly: small values are
 * copied into exact-size heap blocks (so ASan or valgrind see any overread),
 * large ones have the bytes past the cut poisoned when built with ASan.
 *
 * The data file is found through $RNSC_SRCDIR (set by make check), else the
 * RNSC_SRCDIR macro, else the current directory. Exit status: the failure
 * count (tests/common/cu_run.h: clamped below automake's 77 = skip).
 */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msgpack.h"
#include "cu_run.h"

#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#ifdef TEST_ASAN
#include <sanitizer/asan_interface.h>
#endif

#ifndef RNSC_SRCDIR
#define RNSC_SRCDIR "."
#endif

/* ---- golden file ------------------------------------------------------ */

enum { G_NIL, G_BOOL, G_INT, G_F64, G_F32, G_STR, G_BIN, G_ARRAY, G_MAP, G_EXT };
enum { DIR_BOTH, DIR_DECODE, DIR_ERROR };

typedef struct gtok {
	int kind;
	int neg; /* G_INT: value < 0 (then i), else u */
	int64_t i;
	uint64_t u; /* also G_BOOL value, G_F64/G_F32 bits, container counts */
	int ext_type;
	uint8_t *p; /* G_STR/G_BIN/G_EXT payload */
	size_t len;
	size_t repeat;
} gtok;

typedef struct gvec {
	char name[64];
	int dir;
	gtok *toks;
	size_t ntoks;
	uint8_t *bytes;
	size_t nbytes;
	int result;
} gvec;

static gvec *g_vecs;
static size_t g_nvecs;

/* Hex with runs "HH*N" and segments joined by '+', "-" for empty. */
static uint8_t *rle_decode(const char *s, size_t *len)
{
	size_t cap = 16, n = 0;
	uint8_t *out = malloc(cap);

	if (strcmp(s, "-") == 0) {
		*len = 0;
		return out;
	}
	while (*s) {
		const char *end = strchr(s, '+');
		const char *star;
		size_t seglen = end ? (size_t)(end - s) : strlen(s);

		star = memchr(s, '*', seglen);
		if (star) {
			unsigned v;
			size_t count = strtoul(star + 1, NULL, 10), k;
			sscanf(s, "%2x", &v);
			while (n + count > cap)
				cap *= 2;
			out = realloc(out, cap);
			for (k = 0; k < count; k++)
				out[n++] = (uint8_t)v;
		} else {
			size_t k;
			while (n + seglen / 2 > cap)
				cap *= 2;
			out = realloc(out, cap);
			for (k = 0; k + 1 < seglen; k += 2) {
				unsigned v;
				sscanf(s + k, "%2x", &v);
				out[n++] = (uint8_t)v;
			}
		}
		s += seglen;
		if (*s == '+')
			s++;
	}
	*len = n;
	return out;
}

static int parse_token(char *v, gtok *t)
{
	char *rep = strstr(v, " x");
	char kind[16];
	int off = 0;

	memset(t, 0, sizeof(*t));
	t->repeat = 1;
	if (rep && rep[2] >= '0' && rep[2] <= '9') {
		t->repeat = strtoul(rep + 2, NULL, 10);
		*rep = 0;
	}
	if (sscanf(v, "%15s %n", kind, &off) < 1)
		return -1;
	v += off;
	if (strcmp(kind, "nil") == 0) {
		t->kind = G_NIL;
	} else if (strcmp(kind, "bool") == 0) {
		t->kind = G_BOOL;
		t->u = strtoull(v, NULL, 10);
	} else if (strcmp(kind, "int") == 0) {
		t->kind = G_INT;
		if (v[0] == '-') {
			t->neg = 1;
			t->i = strtoll(v, NULL, 10);
		} else {
			t->u = strtoull(v, NULL, 10);
		}
	} else if (strcmp(kind, "f64") == 0 || strcmp(kind, "f32") == 0) {
		t->kind = kind[1] == '6' ? G_F64 : G_F32;
		t->u = strtoull(v, NULL, 16);
	} else if (strcmp(kind, "str") == 0 || strcmp(kind, "bin") == 0) {
		t->kind = kind[0] == 's' ? G_STR : G_BIN;
		t->p = rle_decode(v, &t->len);
	} else if (strcmp(kind, "array") == 0 || strcmp(kind, "map") == 0) {
		t->kind = kind[0] == 'a' ? G_ARRAY : G_MAP;
		t->u = strtoull(v, NULL, 10);
	} else if (strcmp(kind, "ext") == 0) {
		char *end;
		t->kind = G_EXT;
		t->ext_type = (int)strtol(v, &end, 10);
		if (end == v || *end != ' ')
			return -1;
		t->p = rle_decode(end + 1, &t->len);
	} else {
		return -1;
	}
	return 0;
}

static const char *srcdir(void)
{
	const char *s = getenv("RNSC_SRCDIR");
	return s && *s ? s : RNSC_SRCDIR;
}

static int load_golden(void)
{
	char path[4096];
	FILE *f;
	char *line = NULL;
	size_t lcap = 0;
	ssize_t n;
	gvec *cur = NULL;

	snprintf(path, sizeof(path), "%s/tests/data/msgpack_golden.txt", srcdir());
	f = fopen(path, "r");
	if (f == NULL) {
		fprintf(stderr, "cannot open %s (set RNSC_SRCDIR)\n", path);
		return -1;
	}
	while ((n = getline(&line, &lcap, f)) >= 0) {
		char *eq;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = 0;
		if (n == 0 || line[0] == '#')
			continue;
		eq = strstr(line, " = ");
		if (eq == NULL)
			goto bad;
		*eq = 0;
		eq += 3;
		if (strcmp(line, "Name") == 0) {
			g_vecs = realloc(g_vecs, (g_nvecs + 1) * sizeof(*g_vecs));
			cur = &g_vecs[g_nvecs++];
			memset(cur, 0, sizeof(*cur));
			snprintf(cur->name, sizeof(cur->name), "%s", eq);
		} else if (cur == NULL) {
			goto bad;
		} else if (strcmp(line, "Dir") == 0) {
			cur->dir = strcmp(eq, "both") == 0     ? DIR_BOTH
				   : strcmp(eq, "decode") == 0 ? DIR_DECODE
							       : DIR_ERROR;
		} else if (strcmp(line, "Token") == 0) {
			cur->toks = realloc(cur->toks, (cur->ntoks + 1) * sizeof(*cur->toks));
			if (parse_token(eq, &cur->toks[cur->ntoks++]) != 0)
				goto bad;
		} else if (strcmp(line, "Hex") == 0) {
			cur->bytes = rle_decode(eq, &cur->nbytes);
		} else if (strcmp(line, "Result") == 0) {
			if (!rnsc_err_from_name(eq, &cur->result))
				goto bad;
		}
		/* other keys (Ref) are informational */
	}
	free(line);
	fclose(f);
	return g_nvecs > 0 ? 0 : -1;
bad:
	fprintf(stderr, "%s: cannot parse line: %s\n", path, line);
	free(line);
	fclose(f);
	return -1;
}

static void free_golden(void)
{
	size_t v, t;

	for (v = 0; v < g_nvecs; v++) {
		for (t = 0; t < g_vecs[v].ntoks; t++)
			free(g_vecs[v].toks[t].p);
		free(g_vecs[v].toks);
		free(g_vecs[v].bytes);
	}
	free(g_vecs);
	g_vecs = NULL;
	g_nvecs = 0;
}

/* ---- token helpers ---------------------------------------------------- */

static void write_gtok(rnsc_mp_writer *w, const gtok *t)
{
	double d;
	float f;
	uint32_t b32;

	switch (t->kind) {
	case G_NIL:
		rnsc_mp_write_nil(w);
		break;
	case G_BOOL:
		rnsc_mp_write_bool(w, (int)t->u);
		break;
	case G_INT:
		if (t->neg)
			rnsc_mp_write_int(w, t->i);
		else
			rnsc_mp_write_uint(w, t->u);
		break;
	case G_F64:
		memcpy(&d, &t->u, sizeof(d));
		rnsc_mp_write_double(w, d);
		break;
	case G_F32:
		b32 = (uint32_t)t->u;
		memcpy(&f, &b32, sizeof(f));
		rnsc_mp_write_float(w, f);
		break;
	case G_STR:
		rnsc_mp_write_str(w, (const char *)t->p, t->len);
		break;
	case G_BIN:
		rnsc_mp_write_bin(w, t->p, t->len);
		break;
	case G_ARRAY:
		rnsc_mp_write_array(w, (size_t)t->u);
		break;
	case G_MAP:
		rnsc_mp_write_map(w, (size_t)t->u);
		break;
	case G_EXT:
		rnsc_mp_write_ext(w, (int8_t)t->ext_type, t->p, t->len);
		break;
	}
}

/* Does the decoded token equal the golden one? */
static int token_matches(const rnsc_mp_token *k, const gtok *t)
{
	uint64_t b64;
	uint32_t b32;

	switch (t->kind) {
	case G_NIL:
		return k->type == RNSC_MP_NIL;
	case G_BOOL:
		return k->type == RNSC_MP_BOOL && k->boolean == (int)t->u;
	case G_INT:
		if (t->neg)
			return k->type == RNSC_MP_INT && k->i == t->i;
		return k->type == RNSC_MP_UINT && k->u == t->u;
	case G_F64:
		memcpy(&b64, &k->f64, sizeof(b64));
		return k->type == RNSC_MP_FLOAT64 && b64 == t->u;
	case G_F32:
		memcpy(&b32, &k->f32, sizeof(b32));
		return k->type == RNSC_MP_FLOAT32 && b32 == (uint32_t)t->u;
	case G_STR:
	case G_BIN:
		return k->type == (t->kind == G_STR ? RNSC_MP_STR : RNSC_MP_BIN) &&
		       k->len == t->len && (t->len == 0 || memcmp(k->p, t->p, t->len) == 0);
	case G_ARRAY:
		return k->type == RNSC_MP_ARRAY && k->len == t->u;
	case G_MAP:
		return k->type == RNSC_MP_MAP && k->len == t->u;
	case G_EXT:
		return k->type == RNSC_MP_EXT && k->ext_type == t->ext_type && k->len == t->len &&
		       (t->len == 0 || memcmp(k->p, t->p, t->len) == 0);
	}
	return 0;
}

/* The typed getter for the golden token's kind must agree with next(), and
 * a getter for another type must fail without moving the cursor. */
static int getter_matches(const rnsc_mp_reader *at, const gtok *t, size_t end_pos)
{
	rnsc_mp_reader r = *at, w = *at;
	int rc, ok = 1;

	switch (t->kind) {
	case G_NIL:
		rc = rnsc_mp_read_nil(&r);
		ok = rc == 0;
		break;
	case G_BOOL: {
		int b = -1;
		rc = rnsc_mp_read_bool(&r, &b);
		ok = rc == 0 && b == (int)t->u;
		break;
	}
	case G_INT: {
		int64_t i = 0;
		uint64_t u = 0;
		if (t->neg) {
			rc = rnsc_mp_read_int(&r, &i);
			ok = rc == 0 && i == t->i;
			/* a negative value never reads as unsigned */
			ok = ok && rnsc_mp_read_uint(&w, &u) == RNSC_ERR_RANGE && w.pos == at->pos;
		} else {
			rc = rnsc_mp_read_uint(&r, &u);
			ok = rc == 0 && u == t->u;
			if (t->u > (uint64_t)INT64_MAX)
				ok = ok && rnsc_mp_read_int(&w, &i) == RNSC_ERR_RANGE &&
				     w.pos == at->pos;
			else
				ok = ok && rnsc_mp_read_int(&w, &i) == 0 && (uint64_t)i == t->u;
		}
		break;
	}
	case G_F64:
	case G_F32: {
		double d = 0;
		rc = rnsc_mp_read_double(&r, &d);
		if (t->kind == G_F64) {
			uint64_t b;
			memcpy(&b, &d, sizeof(b));
			ok = rc == 0 && b == t->u;
		} else {
			float f;
			uint32_t b32 = (uint32_t)t->u;
			memcpy(&f, &b32, sizeof(f));
			ok = rc == 0 && (isnan(f) ? isnan(d) : d == (double)f);
		}
		break;
	}
	case G_STR: {
		const char *s = NULL;
		size_t len = 0;
		rc = rnsc_mp_read_str(&r, &s, &len);
		ok = rc == 0 && len == t->len && (len == 0 || memcmp(s, t->p, len) == 0);
		break;
	}
	case G_BIN: {
		const uint8_t *p = NULL;
		size_t len = 0;
		rc = rnsc_mp_read_bin(&r, &p, &len);
		ok = rc == 0 && len == t->len && (len == 0 || memcmp(p, t->p, len) == 0);
		break;
	}
	case G_ARRAY:
	case G_MAP: {
		size_t n = 0;
		rc = t->kind == G_ARRAY ? rnsc_mp_read_array(&r, &n) : rnsc_mp_read_map(&r, &n);
		ok = rc == 0 && n == t->u;
		break;
	}
	case G_EXT: {
		int8_t et = 0;
		const uint8_t *p = NULL;
		size_t len = 0;
		rc = rnsc_mp_read_ext(&r, &et, &p, &len);
		ok = rc == 0 && et == t->ext_type && len == t->len &&
		     (len == 0 || memcmp(p, t->p, len) == 0);
		break;
	}
	}
	ok = ok && r.pos == end_pos;

	/* wrong-type getter: MALFORMED, cursor untouched */
	w = *at;
	if (t->kind == G_NIL)
		ok = ok && rnsc_mp_read_bool(&w, NULL) == RNSC_ERR_MALFORMED && w.pos == at->pos;
	else
		ok = ok && rnsc_mp_read_nil(&w) == RNSC_ERR_MALFORMED && w.pos == at->pos;
	return ok;
}

/* ---- golden tests ----------------------------------------------------- */

static void test_golden_loaded(void)
{
	CU_ASSERT_FATAL(g_nvecs > 100);
}

static void test_golden_encode(void)
{
	size_t v, t, k;

	for (v = 0; v < g_nvecs; v++) {
		const gvec *g = &g_vecs[v];
		rnsc_mp_writer w, sz;
		uint8_t *out;

		if (g->dir != DIR_BOTH)
			continue;
		out = malloc(g->nbytes + 1);
		out[g->nbytes] = 0xa5; /* canary */
		rnsc_mp_writer_init(&w, out, g->nbytes);
		rnsc_mp_writer_init(&sz, NULL, 0);
		for (t = 0; t < g->ntoks; t++)
			for (k = 0; k < g->toks[t].repeat; k++) {
				write_gtok(&w, &g->toks[t]);
				write_gtok(&sz, &g->toks[t]);
			}
		if (rnsc_mp_writer_finish(&w) != (int)g->nbytes ||
		    memcmp(out, g->bytes, g->nbytes) != 0) {
			fprintf(stderr, "\n  encode mismatch: %s\n", g->name);
			CU_FAIL("encoding differs from the reference");
		}
		CU_ASSERT_EQUAL(rnsc_mp_writer_finish(&sz), (int)g->nbytes);
		CU_ASSERT_EQUAL(out[g->nbytes], 0xa5);

		/* one byte short: the latch reports BUFSIZE and the canary lives */
		if (g->nbytes > 0) {
			out[g->nbytes - 1] = 0xa5;
			rnsc_mp_writer_init(&w, out, g->nbytes - 1);
			for (t = 0; t < g->ntoks; t++)
				for (k = 0; k < g->toks[t].repeat; k++)
					write_gtok(&w, &g->toks[t]);
			CU_ASSERT_EQUAL(rnsc_mp_writer_finish(&w), RNSC_ERR_BUFSIZE);
			CU_ASSERT_EQUAL(out[g->nbytes - 1], 0xa5);
			CU_ASSERT(w.len < g->nbytes);
		}
		free(out);
	}
}

static void test_golden_decode(void)
{
	size_t v, t, k;

	for (v = 0; v < g_nvecs; v++) {
		const gvec *g = &g_vecs[v];
		rnsc_mp_reader r, s;
		int ok = 1;

		if (g->dir == DIR_ERROR)
			continue;
		rnsc_mp_reader_init(&r, g->bytes, g->nbytes);
		for (t = 0; t < g->ntoks && ok; t++) {
			for (k = 0; k < g->toks[t].repeat && ok; k++) {
				rnsc_mp_reader at = r;
				rnsc_mp_token tok, peeked;
				ok = rnsc_mp_peek(&r, &peeked) == 0 && r.pos == at.pos;
				ok = ok && rnsc_mp_next(&r, &tok) == 0 &&
				     token_matches(&tok, &g->toks[t]);
				ok = ok && tok.type == peeked.type && tok.size == peeked.size &&
				     tok.len == peeked.len && tok.p == peeked.p;
				/* the large flat vectors would make this quadratic */
				if (ok && g->ntoks * g->toks[t].repeat < 4096)
					ok = getter_matches(&at, &g->toks[t], r.pos);
			}
		}
		if (!ok) {
			fprintf(stderr, "\n  decode mismatch: %s (token %zu)\n", g->name, t);
			CU_FAIL("decoding differs from the reference");
			continue;
		}
		/* skip() covers exactly the same bytes as the token walk */
		rnsc_mp_reader_init(&s, g->bytes, g->nbytes);
		CU_ASSERT_EQUAL(rnsc_mp_skip(&s), 0);
		CU_ASSERT_EQUAL(s.pos, r.pos);
		/* umsgpack ignores trailing bytes; only dec_trailing has any */
		CU_ASSERT_EQUAL(rnsc_mp_reader_remaining(&r),
				strcmp(g->name, "dec_trailing") == 0 ? 1u : 0u);
	}
}

/* Skips a prefix of k bytes that must be incomplete; the buffer handed to
 * the reader ends exactly at the cut. */
static int truncated_ok(const uint8_t *value, size_t full, size_t k)
{
	rnsc_mp_reader r;
	rnsc_mp_token tok;
	int rc, rc2 = 0;
	uint8_t *copy = NULL;
	const uint8_t *p;

	if (full <= 4096) {
		copy = k ? malloc(k) : NULL;
		if (k)
			memcpy(copy, value, k);
		p = copy;
	} else {
		p = value;
#ifdef TEST_ASAN
		ASAN_POISON_MEMORY_REGION(value + k, full - k);
#endif
	}
	rnsc_mp_reader_init(&r, p, k);
	rc = rnsc_mp_skip(&r);
	/* the token walk must also stop with an error before the end */
	rnsc_mp_reader_init(&r, p, k);
	while ((rc2 = rnsc_mp_next(&r, &tok)) == 0)
		;
#ifdef TEST_ASAN
	if (copy == NULL)
		ASAN_UNPOISON_MEMORY_REGION(value + k, full - k);
#endif
	free(copy);
	return rc == RNSC_ERR_TRUNCATED && rc2 == RNSC_ERR_TRUNCATED && r.pos <= k;
}

static void test_golden_truncations(void)
{
	size_t v, k, checked = 0;

	for (v = 0; v < g_nvecs; v++) {
		const gvec *g = &g_vecs[v];
		rnsc_mp_reader r;
		uint8_t *own;

		if (g->dir == DIR_ERROR)
			continue;
		rnsc_mp_reader_init(&r, g->bytes, g->nbytes);
		CU_ASSERT_EQUAL_FATAL(rnsc_mp_skip(&r), 0);
		/* private copy: poisoning must not hit the shared golden buffer's
		 * neighbours, and it must be exactly the value */
		own = malloc(r.pos);
		memcpy(own, g->bytes, r.pos);
		for (k = 0; k < r.pos; k++) {
			checked++;
			if (!truncated_ok(own, r.pos, k)) {
				fprintf(stderr, "\n  truncation not rejected: %s at %zu\n", g->name,
					k);
				CU_FAIL("truncated input accepted");
				break;
			}
		}
		free(own);
	}
	fprintf(stderr, " [%zu truncations] ", checked);
	CU_ASSERT(checked > 400000);
}

static void test_golden_errors(void)
{
	size_t v, n = 0;

	for (v = 0; v < g_nvecs; v++) {
		const gvec *g = &g_vecs[v];
		rnsc_mp_reader r;
		uint8_t *copy;
		int rc;

		if (g->dir != DIR_ERROR)
			continue;
		n++;
		copy = g->nbytes ? malloc(g->nbytes) : NULL;
		if (g->nbytes)
			memcpy(copy, g->bytes, g->nbytes);
		rnsc_mp_reader_init(&r, copy, g->nbytes);
		rc = rnsc_mp_skip(&r);
		if (rc != g->result) {
			fprintf(stderr, "\n  %s: got %s, want %s\n", g->name, rnsc_err_name(rc),
				rnsc_err_name(g->result));
			CU_FAIL("wrong error for invalid input");
		}
		CU_ASSERT_EQUAL(r.pos, 0);
		free(copy);
	}
	CU_ASSERT(n >= 15);
}

/* ---- hand-written tests ---------------------------------------------- */

static void test_writer_latch(void)
{
	uint8_t buf[4];
	rnsc_mp_writer w;

	memset(buf, 0xee, sizeof(buf));
	rnsc_mp_writer_init(&w, buf, 3);
	CU_ASSERT_EQUAL(rnsc_mp_write_uint(&w, 1), 0);
	CU_ASSERT_EQUAL(rnsc_mp_write_cstr(&w, "hello"), RNSC_ERR_BUFSIZE);
	/* would fit, but the latch holds */
	CU_ASSERT_EQUAL(rnsc_mp_write_nil(&w), RNSC_ERR_BUFSIZE);
	CU_ASSERT_EQUAL(rnsc_mp_write_bin(&w, NULL, 0), RNSC_ERR_BUFSIZE);
	CU_ASSERT_EQUAL(rnsc_mp_writer_finish(&w), RNSC_ERR_BUFSIZE);
	CU_ASSERT_EQUAL(w.len, 1);
	CU_ASSERT_EQUAL(buf[1], 0xee);

	/* invalid UTF-8 is refused and latched */
	rnsc_mp_writer_init(&w, buf, sizeof(buf));
	CU_ASSERT_EQUAL(rnsc_mp_write_str(&w, "\xc3\x28", 2), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_mp_write_nil(&w), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_mp_writer_finish(&w), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(w.len, 0);

	rnsc_mp_writer_init(&w, buf, sizeof(buf));
	CU_ASSERT_EQUAL(rnsc_mp_write_bin(&w, NULL, 1), RNSC_ERR_INVAL);
	rnsc_mp_writer_init(&w, buf, sizeof(buf));
	CU_ASSERT_EQUAL(rnsc_mp_write_cstr(&w, NULL), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_mp_write_nil(NULL), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_mp_writer_finish(NULL), RNSC_ERR_INVAL);

	/* empty writer */
	rnsc_mp_writer_init(&w, buf, 0);
	CU_ASSERT_EQUAL(rnsc_mp_writer_finish(&w), 0);
	CU_ASSERT_EQUAL(rnsc_mp_write_nil(&w), RNSC_ERR_BUFSIZE);

	/* raw splice */
	rnsc_mp_writer_init(&w, buf, sizeof(buf));
	CU_ASSERT_EQUAL(rnsc_mp_write_array(&w, 1), 0);
	CU_ASSERT_EQUAL(rnsc_mp_write_raw(&w, (const uint8_t *)"\xc3", 1), 0);
	CU_ASSERT_EQUAL(rnsc_mp_writer_finish(&w), 2);
	CU_ASSERT(memcmp(buf, "\x91\xc3", 2) == 0);
}

static void test_writer_headers_and_limits(void)
{
	uint8_t buf[16];
	rnsc_mp_writer w;

	/* map32 is not in the golden file (umsgpack needs a 65536-entry dict);
	 * the rule is the same as for array32, which is. */
	rnsc_mp_writer_init(&w, buf, sizeof(buf));
	rnsc_mp_write_map(&w, 65536);
	rnsc_mp_write_map(&w, 65535);
	rnsc_mp_write_array(&w, 0xffffffffu);
	CU_ASSERT_EQUAL(rnsc_mp_writer_finish(&w), 13);
	CU_ASSERT(memcmp(buf, "\xdf\x00\x01\x00\x00\xde\xff\xff\xdd\xff\xff\xff\xff", 13) == 0);

	rnsc_mp_writer_init(&w, buf, sizeof(buf));
	CU_ASSERT_EQUAL(rnsc_mp_write_double(&w, NAN), 0);
	CU_ASSERT(memcmp(buf, "\xcb\x7f\xf8\x00\x00\x00\x00\x00\x00", 9) == 0);

	rnsc_mp_writer_init(&w, buf, sizeof(buf));
	CU_ASSERT_EQUAL(rnsc_mp_write_int(&w, INT64_MAX), 0);
	CU_ASSERT(memcmp(buf, "\xcf\x7f\xff\xff\xff\xff\xff\xff\xff", 9) == 0);

#if SIZE_MAX > 0xffffffffu
	/* sizes umsgpack refuses ("huge ..."); checked before any byte is read */
	rnsc_mp_writer_init(&w, NULL, 0);
	CU_ASSERT_EQUAL(rnsc_mp_write_bin(&w, buf, (size_t)1 << 32), RNSC_ERR_TOOBIG);
	rnsc_mp_writer_init(&w, NULL, 0);
	CU_ASSERT_EQUAL(rnsc_mp_write_str(&w, (const char *)buf, (size_t)1 << 32), RNSC_ERR_TOOBIG);
	rnsc_mp_writer_init(&w, NULL, 0);
	CU_ASSERT_EQUAL(rnsc_mp_write_array(&w, (size_t)1 << 32), RNSC_ERR_TOOBIG);
	rnsc_mp_writer_init(&w, NULL, 0);
	CU_ASSERT_EQUAL(rnsc_mp_write_map(&w, (size_t)1 << 32), RNSC_ERR_TOOBIG);
	rnsc_mp_writer_init(&w, NULL, 0);
	CU_ASSERT_EQUAL(rnsc_mp_write_ext(&w, 1, buf, (size_t)1 << 32), RNSC_ERR_TOOBIG);
#endif
}

static void test_reader_getters(void)
{
	/* [cf ffffffffffffffff, ff, ca 3fc00000, a1 'x', c4 01 aa, c0] */
	static const uint8_t in[] = {0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				     0xff, 0xff, 0xff, 0xca, 0x3f, 0xc0, 0x00,
				     0x00, 0xa1, 'x',  0xc4, 0x01, 0xaa, 0xc0};
	rnsc_mp_reader r;
	int64_t i;
	uint64_t u;
	double d;
	const char *s;
	const uint8_t *p;
	size_t n;

	rnsc_mp_reader_init(&r, in, sizeof(in));
	CU_ASSERT_EQUAL(rnsc_mp_read_int(&r, &i), RNSC_ERR_RANGE);
	CU_ASSERT_EQUAL(r.pos, 0);
	CU_ASSERT_EQUAL(rnsc_mp_read_double(&r, &d), RNSC_ERR_MALFORMED);
	CU_ASSERT_EQUAL(rnsc_mp_read_uint(&r, &u), 0);
	CU_ASSERT_EQUAL(u, UINT64_MAX);
	CU_ASSERT_EQUAL(rnsc_mp_read_uint(&r, &u), RNSC_ERR_RANGE);
	CU_ASSERT_EQUAL(rnsc_mp_read_int(&r, &i), 0);
	CU_ASSERT_EQUAL(i, -1);
	CU_ASSERT_EQUAL(rnsc_mp_read_int(&r, &i), RNSC_ERR_MALFORMED);
	CU_ASSERT_EQUAL(rnsc_mp_read_double(&r, &d), 0);
	CU_ASSERT(d == 1.5);
	CU_ASSERT_EQUAL(rnsc_mp_read_bin(&r, &p, &n), RNSC_ERR_MALFORMED);
	CU_ASSERT_EQUAL(rnsc_mp_read_str(&r, &s, &n), 0);
	CU_ASSERT(n == 1 && s[0] == 'x');
	CU_ASSERT_EQUAL(rnsc_mp_read_str(&r, &s, &n), RNSC_ERR_MALFORMED);
	CU_ASSERT_EQUAL(rnsc_mp_read_bin(&r, &p, &n), 0);
	CU_ASSERT(n == 1 && p[0] == 0xaa);
	CU_ASSERT_EQUAL(rnsc_mp_read_array(&r, &n), RNSC_ERR_MALFORMED);
	CU_ASSERT_EQUAL(rnsc_mp_read_map(&r, &n), RNSC_ERR_MALFORMED);
	CU_ASSERT_EQUAL(rnsc_mp_read_ext(&r, NULL, NULL, NULL), RNSC_ERR_MALFORMED);
	CU_ASSERT_EQUAL(rnsc_mp_read_nil(&r), 0);
	CU_ASSERT_EQUAL(rnsc_mp_reader_remaining(&r), 0);
	CU_ASSERT_EQUAL(rnsc_mp_read_nil(&r), RNSC_ERR_TRUNCATED);
	CU_ASSERT_EQUAL(rnsc_mp_skip(&r), RNSC_ERR_TRUNCATED);

	/* NULL outputs are allowed; NULL reader is not */
	rnsc_mp_reader_init(&r, in, sizeof(in));
	CU_ASSERT_EQUAL(rnsc_mp_read_uint(&r, NULL), 0);
	CU_ASSERT_EQUAL(rnsc_mp_next(NULL, NULL), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_mp_skip(NULL), RNSC_ERR_INVAL);
	/* an empty reader over NULL */
	rnsc_mp_reader_init(&r, NULL, 5);
	CU_ASSERT_EQUAL(rnsc_mp_reader_remaining(&r), 0);
	CU_ASSERT_EQUAL(rnsc_mp_skip(&r), RNSC_ERR_TRUNCATED);
}

static void test_container_counts(void)
{
	/* counts that the remaining bytes cannot satisfy are refused at the
	 * header, so they are safe to allocate with */
	static const uint8_t arr[] = {0xdc, 0xff, 0xff, 0x01, 0x02, 0x03};
	static const uint8_t map[] = {0x83, 0x01, 0x02, 0x03, 0x04, 0x05};
	static const uint8_t ok[] = {0x93, 0xc0, 0xc0, 0xc0};
	rnsc_mp_reader r;
	size_t n;

	rnsc_mp_reader_init(&r, arr, sizeof(arr));
	CU_ASSERT_EQUAL(rnsc_mp_read_array(&r, &n), RNSC_ERR_TRUNCATED);
	rnsc_mp_reader_init(&r, map, sizeof(map));
	CU_ASSERT_EQUAL(rnsc_mp_read_map(&r, &n), RNSC_ERR_TRUNCATED);
	rnsc_mp_reader_init(&r, ok, sizeof(ok));
	CU_ASSERT_EQUAL(rnsc_mp_read_array(&r, &n), 0);
	CU_ASSERT_EQUAL(n, 3);
}

static void test_skip_depth(void)
{
	uint8_t buf[2 * RNSC_MP_MAX_DEPTH + 8];
	rnsc_mp_reader r;
	size_t i;

	/* 32 nested arrays: accepted */
	for (i = 0; i < RNSC_MP_MAX_DEPTH - 1; i++)
		buf[i] = 0x91;
	buf[i++] = 0x90;
	rnsc_mp_reader_init(&r, buf, i);
	CU_ASSERT_EQUAL(rnsc_mp_skip(&r), 0);
	CU_ASSERT_EQUAL(r.pos, i);

	/* 33, innermost empty: refused, cursor unchanged */
	for (i = 0; i < RNSC_MP_MAX_DEPTH; i++)
		buf[i] = 0x91;
	buf[i++] = 0x90;
	rnsc_mp_reader_init(&r, buf, i);
	CU_ASSERT_EQUAL(rnsc_mp_skip(&r), RNSC_ERR_TOOBIG);
	CU_ASSERT_EQUAL(r.pos, 0);

	/* 33 through map values */
	for (i = 0; i < 2 * RNSC_MP_MAX_DEPTH; i += 2) {
		buf[i] = 0x81;
		buf[i + 1] = 0xc0; /* key nil, value: the next map */
	}
	buf[i++] = 0x80;
	rnsc_mp_reader_init(&r, buf, i);
	CU_ASSERT_EQUAL(rnsc_mp_skip(&r), RNSC_ERR_TOOBIG);

	/* depth is about nesting, not length: wide and shallow is fine */
	{
		static uint8_t wide[3 + 60000];
		wide[0] = 0xdc;
		wide[1] = (uint8_t)(60000 >> 8);
		wide[2] = (uint8_t)(60000 & 0xff);
		for (i = 0; i < 60000; i++)
			wide[3 + i] = 0x90;
		rnsc_mp_reader_init(&r, wide, sizeof(wide));
		CU_ASSERT_EQUAL(rnsc_mp_skip(&r), 0);
		CU_ASSERT_EQUAL(r.pos, sizeof(wide));
	}
}

static void test_utf8(void)
{
	static const struct {
		const char *s;
		size_t len;
		int valid;
	} v[] = {
		{"", 0, 1},
		{"\x7f", 1, 1},
		{"\xc2\x80", 2, 1},
		{"\xdf\xbf", 2, 1},
		{"\xe0\xa0\x80", 3, 1},
		{"\xed\x9f\xbf", 3, 1},
		{"\xee\x80\x80", 3, 1},
		{"\xef\xbf\xbf", 3, 1},
		{"\xf0\x90\x80\x80", 4, 1},
		{"\xf4\x8f\xbf\xbf", 4, 1},
		{"\x00", 1, 1},
		{"\x80", 1, 0},
		{"\xc0\x80", 2, 0},
		{"\xc1\xbf", 2, 0},
		{"\xc2", 1, 0},
		{"\xc2\x7f", 2, 0},
		{"\xe0\x9f\xbf", 3, 0},
		{"\xed\xa0\x80", 3, 0},
		{"\xed\xbf\xbf", 3, 0},
		{"\xef\xbf", 2, 0},
		{"\xf0\x8f\xbf\xbf", 4, 0},
		{"\xf4\x90\x80\x80", 4, 0},
		{"\xf5\x80\x80\x80", 4, 0},
		{"\xff", 1, 0},
		{"\xe2\x82\xac\xe2\x82", 5, 0},
	};
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		CU_ASSERT_EQUAL(rnsc_mp_utf8_valid((const uint8_t *)v[i].s, v[i].len), v[i].valid);
	CU_ASSERT_EQUAL(rnsc_mp_utf8_valid(NULL, 0), 1);
	CU_ASSERT_EQUAL(rnsc_mp_utf8_valid(NULL, 1), 0);
}

/* ---- random round trip ------------------------------------------------ */

static uint64_t rng_state;

static uint64_t rng_next(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static size_t rng_below(size_t n)
{
	return n ? (size_t)(rng_next() % n) : 0;
}

/* Writes a random value and records its tokens for comparison. */
static void random_value(rnsc_mp_writer *w, gtok *toks, size_t *nt, size_t cap, int depth,
			 uint8_t *pool)
{
	gtok *t;
	int kind = (int)rng_below(depth < 4 ? 10 : 8);

	/* Past half the budget no new containers open, so the values still
	 * owed to open containers (at most depth * 38) always fit. */
	if (*nt >= cap / 2 && kind >= G_ARRAY)
		kind = G_NIL;
	t = &toks[(*nt)++];
	memset(t, 0, sizeof(*t));
	t->repeat = 1;
	if (kind == G_EXT)
		kind = G_MAP; /* keep ext rarer: mapped onto containers */
	t->kind = kind;
	switch (kind) {
	case G_BOOL:
		t->u = rng_below(2);
		break;
	case G_INT: {
		/* pick a magnitude class so every width is exercised */
		unsigned bits = (unsigned)rng_below(65);
		uint64_t m = bits == 64 ? rng_next() : rng_next() & ((((uint64_t)1) << bits) - 1);
		if (rng_below(2)) {
			t->neg = 1;
			t->i = (m >> 1) == 0 ? -1 : -(int64_t)(m >> 1);
			if (bits == 64 && rng_below(8) == 0)
				t->i = INT64_MIN;
		} else {
			t->u = m;
		}
		break;
	}
	case G_F64:
		t->u = rng_next();
		break;
	case G_F32:
		t->u = (uint32_t)rng_next();
		break;
	case G_STR: {
		size_t k;
		t->len = rng_below(rng_below(64) == 0 ? 70000 : 40);
		for (k = 0; k < t->len; k++)
			pool[k] = (uint8_t)(0x20 + rng_below(0x5f));
		t->p = pool;
		break;
	}
	case G_BIN: {
		size_t k;
		t->len = rng_below(rng_below(64) == 0 ? 70000 : 40);
		for (k = 0; k < t->len; k++)
			pool[k] = (uint8_t)rng_next();
		t->p = pool;
		break;
	}
	default:
		break;
	}
	if (kind == G_ARRAY || kind == G_MAP) {
		size_t n = rng_below(rng_below(16) == 0 ? 20 : 5), k;
		t->u = n;
		write_gtok(w, t);
		for (k = 0; k < n * (kind == G_MAP ? 2 : 1); k++)
			random_value(w, toks, nt, cap, depth + 1, pool);
		return;
	}
	write_gtok(w, t);
	if (t->p != NULL) {
		/* keep a private copy: the pool is reused by the next value */
		uint8_t *c = malloc(t->len ? t->len : 1);
		memcpy(c, t->p, t->len);
		t->p = c;
	}
}

static void test_random_roundtrip(void)
{
	static uint8_t buf[1 << 23], pool[70000];
	static gtok toks[4096];
	int round;

	rng_state = 0x5eed;
	for (round = 0; round < 300; round++) {
		rnsc_mp_writer w;
		rnsc_mp_reader r;
		size_t nt = 0, i;
		int len, ok = 1;

		rnsc_mp_writer_init(&w, buf, sizeof(buf));
		random_value(&w, toks, &nt, 4000, 0, pool);
		len = rnsc_mp_writer_finish(&w);
		CU_ASSERT_FATAL(len > 0);
		rnsc_mp_reader_init(&r, buf, (size_t)len);
		for (i = 0; i < nt && ok; i++) {
			rnsc_mp_token tok;
			ok = rnsc_mp_next(&r, &tok) == 0 && token_matches(&tok, &toks[i]);
		}
		CU_ASSERT(ok);
		CU_ASSERT_EQUAL(rnsc_mp_reader_remaining(&r), 0);
		rnsc_mp_reader_init(&r, buf, (size_t)len);
		CU_ASSERT_EQUAL(rnsc_mp_skip(&r), 0);
		CU_ASSERT_EQUAL(r.pos, (size_t)len);
		for (i = 0; i < nt; i++)
			free(toks[i].p);
	}
}

/* Random bytes: whatever happens, no crash, and the cursor stays in range. */
static void test_random_garbage(void)
{
	uint8_t in[64];
	int round;

	rng_state = 0xbadc0de;
	for (round = 0; round < 200000; round++) {
		size_t len = rng_below(sizeof(in) + 1), i;
		rnsc_mp_reader r;
		rnsc_mp_token t;
		uint8_t *copy;
		int rc;

		for (i = 0; i < len; i++)
			in[i] = (uint8_t)rng_next();
		copy = malloc(len ? len : 1);
		memcpy(copy, in, len);
		rnsc_mp_reader_init(&r, copy, len);
		rc = rnsc_mp_skip(&r);
		if (rc != 0 && r.pos != 0)
			CU_FAIL("failed skip moved the cursor");
		rnsc_mp_reader_init(&r, copy, len);
		while (rnsc_mp_next(&r, &t) == 0)
			if (r.pos > len)
				break;
		if (r.pos > len)
			CU_FAIL("cursor past the end");
		free(copy);
	}
}

int main(void)
{
	CU_pSuite suite;
	int rc;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	if (load_golden() != 0) {
		CU_cleanup_registry();
		return 1;
	}
	suite = CU_add_suite("msgpack", NULL, NULL);
	if (suite == NULL || !CU_add_test(suite, "golden file loaded", test_golden_loaded) ||
	    !CU_add_test(suite, "golden: encode == reference bytes", test_golden_encode) ||
	    !CU_add_test(suite, "golden: decode(reference bytes) == value", test_golden_decode) ||
	    !CU_add_test(suite, "golden: every truncation rejected", test_golden_truncations) ||
	    !CU_add_test(suite, "golden: invalid input rejected", test_golden_errors) ||
	    !CU_add_test(suite, "writer error latch", test_writer_latch) ||
	    !CU_add_test(suite, "writer headers and limits", test_writer_headers_and_limits) ||
	    !CU_add_test(suite, "typed getters", test_reader_getters) ||
	    !CU_add_test(suite, "container counts vs input", test_container_counts) ||
	    !CU_add_test(suite, "skip depth limit", test_skip_depth) ||
	    !CU_add_test(suite, "utf-8 validation", test_utf8) ||
	    !CU_add_test(suite, "random round trip", test_random_roundtrip) ||
	    !CU_add_test(suite, "random garbage", test_random_garbage)) {
		CU_cleanup_registry();
		free_golden();
		return 1;
	}
	rc = rnsc_cu_run();
	free_golden();
	return rc;
}
