/* SPDX-License-Identifier: MIT */
/*
 * Value conversions with Python's rules (as_bool, int(), float()), kept apart from the
 * tree so they can be checked alone against the reference: Unicode digits and spaces,
 * '_' between digits, "inf"/"nan", C-locale parsing whatever the process locale.
 */
#define _GNU_SOURCE /* strtod_l, newlocale */
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cfgfile_internal.h"

/* Zeros of the Unicode decimal-digit runs (category Nd, Unicode 14): int() and float()
 * accept any of these digits. Every run is exactly ten code points long. */
static const uint32_t nd_zeros[] = {
	0x30,    0x660,   0x6f0,   0x7c0,   0x966,   0x9e6,   0xa66,   0xae6,   0xb66,   0xbe6,
	0xc66,   0xce6,   0xd66,   0xde6,   0xe50,   0xed0,   0xf20,   0x1040,  0x1090,  0x17e0,
	0x1810,  0x1946,  0x19d0,  0x1a80,  0x1a90,  0x1b50,  0x1bb0,  0x1c40,  0x1c50,  0xa620,
	0xa8d0,  0xa900,  0xa9d0,  0xa9f0,  0xaa50,  0xabf0,  0xff10,  0x104a0, 0x10d30, 0x11066,
	0x110f0, 0x11136, 0x111d0, 0x112f0, 0x11450, 0x114d0, 0x11650, 0x116c0, 0x11730, 0x118e0,
	0x11950, 0x11c50, 0x11d50, 0x11da0, 0x16a60, 0x16ac0, 0x16b50, 0x1d7ce, 0x1d7d8, 0x1d7e2,
	0x1d7ec, 0x1d7f6, 0x1e140, 0x1e2f0, 0x1e950, 0x1fbf0,
};

static int py_decimal(uint32_t c)
{
	size_t lo = 0, hi = sizeof(nd_zeros) / sizeof(nd_zeros[0]);
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (nd_zeros[mid] <= c)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -1;
	uint32_t z = nd_zeros[lo - 1];
	return c - z < 10 ? (int)(c - z) : -1;
}

int rnsc_config_parse_bool(const char *s, int *out)
{
	static const struct {
		const char *w;
		int v;
	} words[] = {{"yes", 1}, {"no", 0}, {"on", 1},   {"off", 0},
		     {"1", 1},   {"0", 0},  {"true", 1}, {"false", 0}};
	if (!s || !out)
		return RNSC_ERR_INVAL;
	char low[8];
	size_t n = strlen(s);
	if (n >= sizeof(low))
		return RNSC_ERR_CONFIG_VALUE;
	/* Python lowercases with Unicode rules, but no non-ASCII character lowercases into
	 * the letters of these words, so ASCII folding decides the same. */
	for (size_t i = 0; i <= n; i++)
		low[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] + ('a' - 'A') : s[i]);
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (strcmp(low, words[i].w) == 0) {
			*out = words[i].v;
			return 0;
		}
	}
	return RNSC_ERR_CONFIG_VALUE;
}

/* CPython's _PyUnicode_TransformDecimalAndSpaceToASCII: ASCII is kept, Unicode spaces
 * become ' ', Unicode decimal digits become '0'..'9'; anything else makes the number
 * invalid (returns NULL with *bad = 1). The result is malloc'd. */
static char *py_number_ascii(const char *s, int *bad)
{
	size_t n = strlen(s);
	char *o = malloc(n + 1);
	*bad = 0;
	if (!o)
		return NULL;
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	size_t k = 0;
	while (p < end) {
		size_t l = rnsc_cfg_utf8_valid_len(p, (size_t)(end - p));
		if (!l) {
			*bad = 1;
			break;
		}
		uint32_t c = rnsc_cfg_utf8_next(&p);
		if (c < 127) {
			o[k++] = (char)c;
		} else if (rnsc_cfg_py_isspace(c)) {
			o[k++] = ' ';
		} else {
			int d = py_decimal(c);
			if (d < 0) {
				*bad = 1;
				break;
			}
			o[k++] = (char)('0' + d);
		}
	}
	if (*bad) {
		free(o);
		return NULL;
	}
	o[k] = '\0';
	return o;
}

int rnsc_cfg_py_isspace_ascii(char c) /* Py_ISSPACE */
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

int rnsc_config_parse_int(const char *s, int64_t *out)
{
	if (!s || !out)
		return RNSC_ERR_INVAL;
	int bad;
	char *t = py_number_ascii(s, &bad);
	if (!t)
		return bad ? RNSC_ERR_CONFIG_VALUE : RNSC_ERR_NOMEM;
	const char *p = t;
	while (*p && rnsc_cfg_py_isspace_ascii(*p))
		p++;
	int neg = 0;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	uint64_t mag = 0;
	int over = 0, digits = 0;
	char prev = 0;
	if (*p == '_')
		goto invalid;
	for (; (*p >= '0' && *p <= '9') || *p == '_'; p++) {
		if (*p == '_') {
			if (prev == '_')
				goto invalid;
		} else {
			unsigned d = (unsigned)(*p - '0');
			if (mag > (UINT64_MAX - d) / 10)
				over = 1;
			else
				mag = mag * 10 + d;
			digits++;
		}
		prev = *p;
	}
	if (!digits || prev == '_')
		goto invalid;
	while (*p && rnsc_cfg_py_isspace_ascii(*p))
		p++;
	if (*p)
		goto invalid;
	free(t);
	if (over || mag > (uint64_t)INT64_MAX + (uint64_t)neg)
		return RNSC_ERR_RANGE;
	*out = neg ? (mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag) : (int64_t)mag;
	return 0;
invalid:
	free(t);
	return RNSC_ERR_CONFIG_VALUE;
}

static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;

static void make_c_locale(void)
{
	c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

static int ascii_ieq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++) {
		char x = *a >= 'A' && *a <= 'Z' ? (char)(*a + 32) : *a;
		if (x != *b)
			return 0;
	}
	return *a == *b;
}

int rnsc_config_parse_float(const char *s, double *out)
{
	if (!s || !out)
		return RNSC_ERR_INVAL;
	int bad;
	char *t = py_number_ascii(s, &bad);
	if (!t)
		return bad ? RNSC_ERR_CONFIG_VALUE : RNSC_ERR_NOMEM;
	int rc = RNSC_ERR_CONFIG_VALUE;
	/* _Py_string_to_number_with_underscores: '_' only between digits, then dropped. */
	if (strchr(t, '_')) {
		char prev = 0, *w = t;
		for (const char *p = t; *p; p++) {
			if (*p == '_') {
				if (!(prev >= '0' && prev <= '9'))
					goto done;
			} else {
				if (prev == '_' && !(*p >= '0' && *p <= '9'))
					goto done;
				*w++ = *p;
			}
			prev = *p;
		}
		if (prev == '_')
			goto done;
		*w = '\0';
	}
	char *a = t, *e = t + strlen(t);
	while (a < e && rnsc_cfg_py_isspace_ascii(*a))
		a++;
	while (e > a && rnsc_cfg_py_isspace_ascii(e[-1]))
		e--;
	*e = '\0';
	const char *p = a;
	if (*p == '+' || *p == '-')
		p++;
	if (ascii_ieq(p, "inf") || ascii_ieq(p, "infinity") || ascii_ieq(p, "nan")) {
		double v = ascii_ieq(p, "nan") ? NAN : INFINITY;
		*out = *a == '-' ? -v : v;
		rc = 0;
		goto done;
	}
	int mant = 0;
	while (*p >= '0' && *p <= '9')
		p++, mant++;
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9')
			p++, mant++;
	}
	if (!mant)
		goto done;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!(*p >= '0' && *p <= '9'))
			goto done;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p)
		goto done;
	pthread_once(&c_locale_once, make_c_locale);
	if (c_locale == (locale_t)0) {
		rc = RNSC_ERR_SYS;
		goto done;
	}
	/* Overflow gives +-inf and underflow 0 or a subnormal, as Python's float() does. */
	*out = strtod_l(a, NULL, c_locale);
	rc = 0;
done:
	free(t);
	return rc;
}
