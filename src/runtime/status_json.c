/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "status_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "msgpack.h"

static int finish(FILE *f, char **out, size_t *len)
{
	(void)len;
	if (ferror(f)) {
		fclose(f);
		free(*out);
		*out = NULL;
		return RNSC_ERR_NOMEM;
	}
	if (fclose(f) != 0) {
		free(*out);
		*out = NULL;
		return RNSC_ERR_NOMEM;
	}
	return 0;
}

static void py_float(FILE *f, double v);

void rnsc_py_float_repr(char *buf, size_t cap, double v)
{
	char *o = NULL;
	size_t l = 0;
	FILE *f = open_memstream(&o, &l);
	if (!f) {
		snprintf(buf, cap, "%g", v);
		return;
	}
	py_float(f, v);
	fclose(f);
	snprintf(buf, cap, "%s", o ? o : "");
	free(o);
}

/* A float as Python's repr() writes it (json.dumps uses repr): the shortest digits that
 * read back to the same double, fixed notation for exponents -4..15, else d.ddde+XX. */
static void py_float(FILE *f, double v)
{
	if (v != v) {
		fputs("NaN", f);
		return;
	}
	if (v > 1.7976931348623157e308 || v < -1.7976931348623157e308) {
		fputs(v > 0 ? "Infinity" : "-Infinity", f);
		return;
	}
	char buf[64];
	int p;
	for (p = 1; p <= 17; p++) {
		snprintf(buf, sizeof(buf), "%.*e", p - 1, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	/* buf: [-]d[.ddd]e[+-]XX */
	char *e = strchr(buf, 'e');
	int exp = atoi(e + 1);
	*e = 0;
	const char *m = buf;
	int neg = 0;
	if (*m == '-') {
		neg = 1;
		m++;
	}
	char digits[32];
	size_t nd = 0;
	for (const char *c = m; *c; c++)
		if (*c >= '0' && *c <= '9')
			digits[nd++] = *c;
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	if (neg)
		fputc('-', f);
	if (exp >= -4 && exp < 16) {
		if (exp < 0) {
			fputs("0.", f);
			for (int i = 0; i < -exp - 1; i++)
				fputc('0', f);
			fwrite(digits, 1, nd, f);
		} else {
			for (int i = 0; i <= exp; i++)
				fputc(i < (int)nd ? digits[i] : '0', f);
			fputc('.', f);
			if ((int)nd > exp + 1)
				fwrite(digits + exp + 1, 1, nd - (size_t)exp - 1, f);
			else
				fputc('0', f);
		}
	} else {
		fputc(digits[0], f);
		if (nd > 1) {
			fputc('.', f);
			fwrite(digits + 1, 1, nd - 1, f);
		}
		fprintf(f, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
	}
}

static void json_strn(FILE *f, const uint8_t *p, size_t len)
{
	fputc('"', f);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = p[i];
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* One msgpack value as JSON the way rnstatus -j prints it (json.dumps with bytes turned
 * into hex first). Recursion is bounded by RNSC_MP_MAX_DEPTH. */
static int mp_json(FILE *f, rnsc_mp_reader *r, int depth)
{
	if (depth > RNSC_MP_MAX_DEPTH)
		return RNSC_ERR_TOOBIG;
	rnsc_mp_token t;
	int rc = rnsc_mp_next(r, &t);
	if (rc)
		return rc;
	switch (t.type) {
	case RNSC_MP_NIL:
		fputs("null", f);
		return 0;
	case RNSC_MP_BOOL:
		fputs(t.boolean ? "true" : "false", f);
		return 0;
	case RNSC_MP_UINT:
		fprintf(f, "%llu", (unsigned long long)t.u);
		return 0;
	case RNSC_MP_INT:
		fprintf(f, "%lld", (long long)t.i);
		return 0;
	case RNSC_MP_FLOAT32:
		py_float(f, (double)t.f32);
		return 0;
	case RNSC_MP_FLOAT64:
		py_float(f, t.f64);
		return 0;
	case RNSC_MP_STR:
		json_strn(f, t.p, t.len);
		return 0;
	case RNSC_MP_BIN:
		fputc('"', f);
		for (size_t i = 0; i < t.len; i++)
			fprintf(f, "%02x", t.p[i]);
		fputc('"', f);
		return 0;
	case RNSC_MP_ARRAY:
		fputc('[', f);
		for (size_t i = 0; i < t.len; i++) {
			if (i)
				fputs(", ", f);
			if ((rc = mp_json(f, r, depth + 1)))
				return rc;
		}
		fputc(']', f);
		return 0;
	case RNSC_MP_MAP:
		fputc('{', f);
		for (size_t i = 0; i < t.len; i++) {
			if (i)
				fputs(", ", f);
			rnsc_mp_token k;
			if ((rc = rnsc_mp_peek(r, &k)))
				return rc;
			if (k.type == RNSC_MP_STR || k.type == RNSC_MP_BIN) {
				if ((rc = mp_json(f, r, depth + 1)))
					return rc;
			} else { /* json.dumps turns int, float, bool and None keys into strings */
				fputc('"', f);
				if ((rc = mp_json(f, r, depth + 1)))
					return rc;
				fputc('"', f);
			}
			fputs(": ", f);
			if ((rc = mp_json(f, r, depth + 1)))
				return rc;
		}
		fputc('}', f);
		return 0;
	default: /* ext: rns registers none */
		fputs("null", f);
		return 0;
	}
}

int rnsc_status_json_from_mp(const uint8_t *p, size_t plen, char **out, size_t *len)
{
	if (!p || !out || !len)
		return RNSC_ERR_INVAL;
	*out = NULL;
	FILE *f = open_memstream(out, len);
	if (!f)
		return RNSC_ERR_NOMEM;
	rnsc_mp_reader r;
	rnsc_mp_reader_init(&r, p, plen);
	int rc = mp_json(f, &r, 1);
	fputc('\n', f);
	int frc = finish(f, out, len);
	if (rc || frc) {
		free(*out);
		*out = NULL;
		return rc ? rc : frc;
	}
	return 0;
}
