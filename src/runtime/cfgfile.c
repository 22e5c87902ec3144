/* SPDX-License-Identifier: MIT */
/*
 * Reader for the reference's configuration format. The grammar follows the
 * regular expressions of the ConfigObj the reference vendors; where a regex
 * backtracks, the matchers below reproduce the order in which Python's engine
 * tries alternatives, because that order decides how odd lines split. Each
 * matcher is linear in the line length (precomputed "next position where ..."
 * tables replace the regex's backtracking).
 */
#define _GNU_SOURCE /* strtod_l, newlocale */
#include "cfgfile.h"

#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store.h"

#define MAX_LINE ((size_t)64 * 1024) /* code points in one physical line */
#define INTERP_MAX_LEN ((size_t)64 * 1024)
#define INTERP_MAX_DEPTH 200
#define INTERP_MAX_STEPS 100000UL

/* ---- data ------------------------------------------------------------------------------ */

typedef struct cfg_opt {
	char *key;
	unsigned line;
	int is_list;
	char *str;     /* raw single value */
	char **items;  /* raw list items */
	size_t n_items;
	int ip_done;   /* 0: not yet, 1: ok, < 0: that error */
	char *ip_str;  /* interpolated value (aliases str when nothing changed) */
	char **ip_items;
	char *ip_msg;  /* message for a failed interpolation */
} cfg_opt;

struct rnsc_config_section {
	rnsc_config *cfg;
	rnsc_config_section *parent;
	char *name;
	unsigned depth;
	unsigned line;
	cfg_opt *opts;
	size_t n_opts, cap_opts;
	rnsc_config_section **subs;
	size_t n_subs, cap_subs;
};

/* One hash table for every (section, name) pair: duplicate checks and lookups stay
 * O(1) however many options a section has. idx >= 0 is an option, < 0 a subsection. */
typedef struct name_ent {
	const rnsc_config_section *sec;
	const char *name;
	uint32_t hash;
	int32_t idx;
} name_ent;

struct rnsc_config {
	rnsc_ctx *ctx;
	rnsc_config_section root;
	name_ent *tab;
	size_t tab_cap, tab_len;
	void **extras; /* memory handed out by rnsc_config_read_settings */
	size_t n_extras, cap_extras;
};

static void *cfg_alloc(rnsc_config *cfg, size_t n)
{
	return rnsc_alloc(cfg->ctx, n);
}

static void cfg_free(rnsc_config *cfg, void *p)
{
	rnsc_free(cfg->ctx, p);
}

static char *cfg_strndup(rnsc_config *cfg, const char *s, size_t n)
{
	char *d = cfg_alloc(cfg, n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

static int cfg_keep(rnsc_config *cfg, void *p)
{
	if (cfg->n_extras == cfg->cap_extras) {
		size_t ncap = cfg->cap_extras ? cfg->cap_extras * 2 : 8;
		void **n = cfg_alloc(cfg, ncap * sizeof(*n));
		if (!n)
			return RNSC_ERR_NOMEM;
		if (cfg->n_extras)
			memcpy(n, cfg->extras, cfg->n_extras * sizeof(*n));
		cfg_free(cfg, cfg->extras);
		cfg->extras = n;
		cfg->cap_extras = ncap;
	}
	cfg->extras[cfg->n_extras++] = p;
	return 0;
}

/* ---- errors ---------------------------------------------------------------------------- */

static int set_err(rnsc_config_error *err, int code, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int set_err(rnsc_config_error *err, int code, unsigned line, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		err->code = code;
		err->line = line;
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return code;
}

static void clear_err(rnsc_config_error *err)
{
	if (err) {
		err->code = 0;
		err->line = 0;
		err->msg[0] = '\0';
	}
}

/* 'value' for messages: quoted, control characters escaped, long values cut. */
static void show_value(const char *v, char *buf, size_t cap)
{
	size_t o = 0;
	if (cap < 8) {
		if (cap)
			buf[0] = '\0';
		return;
	}
	buf[o++] = '\'';
	for (size_t i = 0; v[i]; i++) {
		unsigned char c = (unsigned char)v[i];
		if (o + 8 >= cap || i >= 60) {
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		if (c < 0x20 || c == 0x7f) {
			o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", c);
		} else if (c == '\'' || c == '\\') {
			buf[o++] = '\\';
			buf[o++] = (char)c;
		} else {
			buf[o++] = (char)c;
		}
	}
	buf[o++] = '\'';
	buf[o] = '\0';
}

size_t rnsc_config_section_path(const rnsc_config_section *s, char *buf, size_t cap)
{
	const rnsc_config_section *chain[64];
	size_t n = 0, o = 0;
	if (cap)
		buf[0] = '\0';
	for (const rnsc_config_section *p = s; p && p->parent && n < 64; p = p->parent)
		chain[n++] = p;
	while (n--) {
		const rnsc_config_section *p = chain[n];
		char open[72], close[72];
		unsigned d = p->depth < 64 ? p->depth : 64;
		memset(open, '[', d);
		open[d] = '\0';
		memset(close, ']', d);
		close[d] = '\0';
		int w = snprintf(o < cap ? buf + o : NULL, o < cap ? cap - o : 0, "%s%s%s%s",
				 o ? " " : "", open, p->name, close);
		if (w > 0)
			o += (size_t)w;
	}
	return o;
}

/* "[interfaces] [[TCP Server]] listen_port: <msg>" */
static int opt_err(rnsc_config_error *err, int code, const rnsc_config_section *s, const char *key,
		   unsigned line, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static int opt_err(rnsc_config_error *err, int code, const rnsc_config_section *s, const char *key,
		   unsigned line, const char *fmt, ...)
{
	if (!err)
		return code;
	char path[192], tail[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(tail, sizeof(tail), fmt, ap);
	va_end(ap);
	rnsc_config_section_path(s, path, sizeof(path));
	return set_err(err, code, line, "%s%s%s: %s", path, path[0] ? " " : "", key, tail);
}

/* ---- UTF-8 and Python's character classes ------------------------------------------------ */

/* Decodes one code point of valid UTF-8 (validated beforehand). */
static uint32_t utf8_next(const unsigned char **pp)
{
	const unsigned char *p = *pp;
	uint32_t c = p[0];
	if (c < 0x80) {
		*pp = p + 1;
		return c;
	}
	if (c < 0xe0) {
		*pp = p + 2;
		return ((c & 0x1f) << 6) | (p[1] & 0x3f);
	}
	if (c < 0xf0) {
		*pp = p + 3;
		return ((c & 0x0f) << 12) | ((uint32_t)(p[1] & 0x3f) << 6) | (p[2] & 0x3f);
	}
	*pp = p + 4;
	return ((c & 0x07) << 18) | ((uint32_t)(p[1] & 0x3f) << 12) | ((uint32_t)(p[2] & 0x3f) << 6) |
	       (p[3] & 0x3f);
}

/* Length of the valid UTF-8 sequence at p (strict, as Python's decoder: no overlongs,
 * surrogates or code points past U+10FFFF), or 0. */
static size_t utf8_valid_len(const unsigned char *p, size_t avail)
{
	unsigned c = p[0];
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return avail >= 2 && (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if (avail < 3 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
			return 0;
		if (c == 0xe0 && p[1] < 0xa0)
			return 0;
		if (c == 0xed && p[1] > 0x9f)
			return 0;
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if (avail < 4 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 ||
		    (p[3] & 0xc0) != 0x80)
			return 0;
		if (c == 0xf0 && p[1] < 0x90)
			return 0;
		if (c == 0xf4 && p[1] > 0x8f)
			return 0;
		return 4;
	}
	return 0;
}

static size_t utf8_put(uint32_t c, char *o)
{
	if (c < 0x80) {
		o[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		o[0] = (char)(0xc0 | (c >> 6));
		o[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		o[0] = (char)(0xe0 | (c >> 12));
		o[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		o[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (c >> 18));
	o[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	o[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/* Python's str.isspace() (and the regex class \s on str), Unicode 14 as in CPython 3.11. */
static int py_isspace(uint32_t c)
{
	if (c <= 0x20)
		return c == 0x20 || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f);
	if (c < 0x85)
		return 0;
	return c == 0x85 || c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) ||
	       c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

/* Zeros of the Unicode decimal-digit runs (category Nd, Unicode 14): int() and float()
 * accept any of these digits. Every run is exactly ten code points long. */
static const uint32_t nd_zeros[] = {
	0x30,    0x660,   0x6f0,   0x7c0,   0x966,   0x9e6,   0xa66,   0xae6,   0xb66,
	0xbe6,   0xc66,   0xce6,   0xd66,   0xde6,   0xe50,   0xed0,   0xf20,   0x1040,
	0x1090,  0x17e0,  0x1810,  0x1946,  0x19d0,  0x1a80,  0x1a90,  0x1b50,  0x1bb0,
	0x1c40,  0x1c50,  0xa620,  0xa8d0,  0xa900,  0xa9d0,  0xa9f0,  0xaa50,  0xabf0,
	0xff10,  0x104a0, 0x10d30, 0x11066, 0x110f0, 0x11136, 0x111d0, 0x112f0, 0x11450,
	0x114d0, 0x11650, 0x116c0, 0x11730, 0x118e0, 0x11950, 0x11c50, 0x11d50, 0x11da0,
	0x16a60, 0x16ac0, 0x16b50, 0x1d7ce, 0x1d7d8, 0x1d7e2, 0x1d7ec, 0x1d7f6, 0x1e140,
	0x1e2f0, 0x1e950, 0x1fbf0,
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

/* ---- per-line scanning ------------------------------------------------------------------- */

/* Work arrays for one line, reused across lines (indices fit 32 bits: MAX_LINE). */
typedef struct scan {
	rnsc_ctx *ctx;
	uint32_t *cp; /* code points of the line */
	size_t cap;
	unsigned char *T; /* T[i]: s[i..] matches \s*(#.*)?$ */
	unsigned char *G; /* section close: s[i..] matches (\s*\])+\s*(#.*)?$ */
	unsigned char *R; /* value regex feasible from i (see match_value) */
	unsigned char *good;
	unsigned char *anyg[2];
	uint32_t *nextG, *wsend, *wsstart, *ncomma, *nch, *nT, *nokc[2], *nqt[2], *cntR;
} scan;

static void scan_free(scan *sc)
{
	rnsc_ctx *ctx = sc->ctx;
	rnsc_free(ctx, sc->cp);
	rnsc_free(ctx, sc->T);
	rnsc_free(ctx, sc->G);
	rnsc_free(ctx, sc->R);
	rnsc_free(ctx, sc->good);
	rnsc_free(ctx, sc->anyg[0]);
	rnsc_free(ctx, sc->anyg[1]);
	rnsc_free(ctx, sc->nextG);
	rnsc_free(ctx, sc->wsend);
	rnsc_free(ctx, sc->wsstart);
	rnsc_free(ctx, sc->ncomma);
	rnsc_free(ctx, sc->nch);
	rnsc_free(ctx, sc->nT);
	rnsc_free(ctx, sc->nokc[0]);
	rnsc_free(ctx, sc->nokc[1]);
	rnsc_free(ctx, sc->nqt[0]);
	rnsc_free(ctx, sc->nqt[1]);
	rnsc_free(ctx, sc->cntR);
	memset(sc, 0, sizeof(*sc));
	sc->ctx = ctx;
}

/* Room for lines of n code points (arrays hold n + 2 entries). */
static int scan_reserve(scan *sc, size_t n)
{
	if (n + 2 <= sc->cap)
		return 0;
	size_t cap = sc->cap ? sc->cap : 64;
	while (cap < n + 2)
		cap *= 2;
	rnsc_ctx *ctx = sc->ctx;
	scan_free(sc);
	sc->cap = cap;
	unsigned char **b[] = {&sc->T, &sc->G, &sc->R, &sc->good, &sc->anyg[0], &sc->anyg[1]};
	uint32_t **w[] = {&sc->cp,      &sc->nextG,   &sc->wsend,   &sc->wsstart, &sc->ncomma,
			  &sc->nch,     &sc->nT,      &sc->nokc[0], &sc->nokc[1], &sc->nqt[0],
			  &sc->nqt[1],  &sc->cntR};
	int ok = 1;
	for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++)
		ok &= (*b[i] = rnsc_alloc(ctx, cap)) != NULL;
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		ok &= (*w[i] = rnsc_alloc(ctx, cap * sizeof(uint32_t))) != NULL;
	if (!ok) {
		scan_free(sc);
		return RNSC_ERR_NOMEM;
	}
	return 0;
}

/* Decodes UTF-8 bytes (already validated) into sc->cp; returns the length. */
static size_t scan_decode(scan *sc, const char *p, size_t len)
{
	const unsigned char *u = (const unsigned char *)p, *end = u + len;
	size_t n = 0;
	while (u < end)
		sc->cp[n++] = utf8_next(&u);
	return n;
}

/* Shared tables: whitespace runs and the comment tail T. */
static void scan_basic(scan *sc, const uint32_t *s, size_t n)
{
	sc->T[n] = 1;
	sc->wsend[n] = (uint32_t)n;
	for (size_t i = n; i-- > 0;) {
		int ws = py_isspace(s[i]);
		sc->T[i] = s[i] == '#' || (ws && sc->T[i + 1]);
		sc->wsend[i] = ws ? sc->wsend[i + 1] : (uint32_t)i;
	}
	sc->wsstart[0] = 0;
	for (size_t j = 1; j <= n; j++)
		sc->wsstart[j] = py_isspace(s[j - 1]) ? sc->wsstart[j - 1] : (uint32_t)j;
}

static size_t skip_ws(const uint32_t *s, size_t n, size_t i)
{
	while (i < n && py_isspace(s[i]))
		i++;
	return i;
}

/*
 * _sectionmarker:  ^(\s*)((?:\[\s*)+)("\s*\S.*?\s*"|'\s*\S.*?\s*'|[^'"\s].*?)((?:\s*\])+)\s*(\#.*)?$
 * The bracket group is greedy, so ends are tried from the longest down; for each, the
 * name alternatives in order with their lazy ends. Returns 1 on a match.
 */
static int match_section(scan *sc, const uint32_t *s, size_t n, unsigned *open, unsigned *close,
			 size_t *ns, size_t *ne)
{
	size_t i0 = skip_ws(s, n, 0);
	if (i0 >= n || s[i0] != '[')
		return 0;
	scan_basic(sc, s, n);
	unsigned char *G = sc->G;
	G[n] = 0;
	for (size_t q = n; q-- > 0;)
		G[q] = (s[q] == ']' && (sc->T[q + 1] || G[q + 1])) || (py_isspace(s[q]) && G[q + 1]);
	uint32_t *nextG = sc->nextG;
	nextG[n + 1] = (uint32_t)(n + 1);
	for (size_t q = n + 1; q-- > 0;)
		nextG[q] = G[q] ? (uint32_t)q : nextG[q + 1];
	size_t emax = i0;
	while (emax < n && (s[emax] == '[' || py_isspace(s[emax])))
		emax++;
	for (size_t p = emax; p > i0; p--) {
		if (p >= n)
			continue;
		size_t q = SIZE_MAX;
		uint32_t c = s[p];
		if (c == '"' || c == '\'') {
			size_t f = skip_ws(s, n, p + 1);
			if (f < n) {
				for (size_t k = f + 1; k < n; k++) {
					if (s[k] == c && G[k + 1]) {
						q = k + 1;
						break;
					}
				}
			}
		} else if (!py_isspace(c)) {
			if (nextG[p + 1] <= n)
				q = nextG[p + 1];
		}
		if (q == SIZE_MAX)
			continue;
		unsigned o = 0, cl = 0;
		for (size_t k = i0; k < p; k++)
			o += s[k] == '[';
		for (size_t k = q; k < n && (s[k] == ']' || py_isspace(s[k])); k++)
			cl += s[k] == ']';
		*open = o;
		*close = cl;
		*ns = p;
		*ne = q;
		return 1;
	}
	return 0;
}

/*
 * _keyword:  ^(\s*)(".*?"|'.*?'|[^'"=].*?)\s*=\s*(.*)$
 * When the key cannot start after the whole indentation, the engine gives one blank
 * back and the unquoted alternative then starts with it (so "  = v" has key " ").
 */
static int match_keyword(scan *sc, const uint32_t *s, size_t n, size_t *ks, size_t *ke,
			 size_t *vs)
{
	(void)sc;
	size_t i0 = skip_ws(s, n, 0);
	size_t eq = SIZE_MAX;
	if (i0 < n) {
		uint32_t c = s[i0];
		if (c == '"' || c == '\'') {
			for (size_t k = i0 + 1; k < n; k++) {
				if (s[k] != c)
					continue;
				size_t j = skip_ws(s, n, k + 1);
				if (j < n && s[j] == '=') {
					*ks = i0;
					*ke = k + 1;
					eq = j;
					break;
				}
			}
		} else if (c != '=') {
			size_t e = i0 + 1;
			while (e < n && s[e] != '=')
				e++;
			if (e < n) {
				size_t k = e;
				while (k > i0 + 1 && py_isspace(s[k - 1]))
					k--;
				*ks = i0;
				*ke = k;
				eq = e;
			}
		}
	}
	if (eq == SIZE_MAX && i0 > 0) {
		size_t g = i0 - 1, e = i0;
		while (e < n && s[e] != '=')
			e++;
		if (e < n) {
			size_t k = e;
			while (k > g + 1 && py_isspace(s[k - 1]))
				k--;
			*ks = g;
			*ke = k;
			eq = e;
		}
	}
	if (eq == SIZE_MAX)
		return 0;
	*vs = skip_ws(s, n, eq + 1);
	return 1;
}

/* Everything match_value needs beyond the basic tables, for s[0..m). */
static void scan_value_tables(scan *sc, const uint32_t *s, size_t m)
{
	scan_basic(sc, s, m);
	sc->ncomma[m] = sc->ncomma[m + 1] = (uint32_t)m;
	sc->nch[m] = sc->nch[m + 1] = (uint32_t)m;
	sc->nT[m] = sc->nT[m + 1] = (uint32_t)m;
	for (int qi = 0; qi < 2; qi++) {
		sc->nokc[qi][m] = sc->nokc[qi][m + 1] = (uint32_t)m;
		sc->nqt[qi][m] = sc->nqt[qi][m + 1] = (uint32_t)m;
	}
	for (size_t i = m; i-- > 0;) {
		uint32_t c = s[i];
		sc->ncomma[i] = c == ',' ? (uint32_t)i : sc->ncomma[i + 1];
		sc->nch[i] = (c == ',' || c == '#') ? (uint32_t)i : sc->nch[i + 1];
		sc->nT[i] = sc->T[i] ? (uint32_t)i : sc->nT[i + 1];
		for (int qi = 0; qi < 2; qi++) {
			uint32_t q = qi ? '\'' : '"';
			uint32_t w1 = sc->wsend[i + 1];
			int okc = c == q && w1 < m && s[w1] == ',';
			sc->nokc[qi][i] = okc ? (uint32_t)i : sc->nokc[qi][i + 1];
			sc->nqt[qi][i] = (c == q && sc->T[i + 1]) ? (uint32_t)i : sc->nqt[qi][i + 1];
		}
	}
}

static int qidx(uint32_t c)
{
	return c == '"' ? 0 : c == '\'' ? 1 : -1;
}

static int is_item_start(uint32_t c) /* [^'",\#] */
{
	return c != '\'' && c != '"' && c != ',' && c != '#';
}

/* Largest e in [a, b] with R[e], or SIZE_MAX. */
static size_t last_r(const scan *sc, size_t a, size_t b)
{
	if (a > b || sc->cntR[a] == sc->cntR[b + 1])
		return SIZE_MAX;
	for (size_t e = b + 1; e-- > a;)
		if (sc->R[e])
			return e;
	return SIZE_MAX;
}

enum { SINGLE_NONE, SINGLE_EMPTY, SINGLE_RANGE };

typedef struct value_match {
	int empty_list; /* the (,) alternative */
	size_t list_end; /* group 1 is s[0..list_end) */
	int single;      /* SINGLE_* */
	size_t ss, se;   /* SINGLE_RANGE: s[ss..se) */
} value_match;

/*
 * _valueexp:
 *   ^(?:(?:((?:(?:".*?"|'.*?'|[^'",\#][^,\#]*?)\s*,\s*)*)
 *         (".*?"|'.*?'|[^'",\#\s][^,]*?|(?:(?<!,)))?)|(,))\s*(\#.*)?$
 * Group 1 is a greedy star over "item, " chunks. Python explores it depth first:
 * at each position it first tries one more chunk (item alternatives in order, each
 * lazy in its end, the blanks after the comma greedy), and only then the last item
 * and the tail. R[i] ("some way to finish from i") is computed right to left, so the
 * path the engine takes is then walked left to right in O(m).
 */
static int match_value(scan *sc, const uint32_t *s, size_t m, value_match *vm)
{
	memset(vm, 0, sizeof(*vm));
	scan_value_tables(sc, s, m);
	unsigned char *R = sc->R, *T = sc->T;
	uint32_t *cntR = sc->cntR;
	cntR[m + 1] = 0;
	sc->anyg[0][m] = sc->anyg[0][m + 1] = 0;
	sc->anyg[1][m] = sc->anyg[1][m + 1] = 0;
	for (size_t pos = m + 1; pos-- > 0;) {
		int r = 0;
		uint32_t c = pos < m ? s[pos] : 0;
		/* good[pos]: pos is a quote closing an item whose comma chunk can be followed. */
		sc->good[pos] = 0;
		if (pos < m) {
			int qi = qidx(c);
			if (qi >= 0 && sc->nokc[qi][pos] == pos) {
				size_t w1 = sc->wsend[pos + 1], w2 = sc->wsend[w1 + 1];
				sc->good[pos] = cntR[w1 + 1] != cntR[w2 + 1];
			}
			for (int k = 0; k < 2; k++)
				sc->anyg[k][pos] = sc->anyg[k][pos + 1] ||
						   (qidx(c) == k && sc->good[pos]);
		}
		if (pos < m) {
			int qi = qidx(c);
			if (qi >= 0) {
				r = sc->anyg[qi][pos + 1];
				if (!r)
					r = sc->nqt[qi][pos + 1] < m;
			} else if (is_item_start(c)) {
				size_t m1 = sc->nch[pos + 1];
				if (m1 < m && s[m1] == ',') {
					size_t w = sc->wsend[m1 + 1];
					r = cntR[m1 + 1] != cntR[w + 1];
				}
				if (!r && !py_isspace(c))
					r = sc->nT[pos + 1] <= sc->ncomma[pos + 1];
				if (!r && py_isspace(c))
					r = T[pos];
			} else {
				r = T[pos]; /* ',' or '#' */
			}
		} else {
			r = 1; /* end of value: the empty last item or the tail */
		}
		R[pos] = (unsigned char)r;
		cntR[pos] = cntR[pos + 1] + (uint32_t)r;
	}
	if (!R[0]) {
		if (m > 0 && s[0] == ',' && T[1]) {
			vm->empty_list = 1;
			return 1;
		}
		return 0;
	}
	size_t pos = 0;
	for (;;) {
		uint32_t c = pos < m ? s[pos] : 0;
		int qi = pos < m ? qidx(c) : -1;
		size_t next = SIZE_MAX;
		if (qi >= 0) {
			size_t k = sc->nokc[qi][pos + 1];
			while (k < m && !sc->good[k])
				k = sc->nokc[qi][k + 1];
			if (k < m) {
				size_t w1 = sc->wsend[k + 1];
				next = last_r(sc, w1 + 1, sc->wsend[w1 + 1]);
			}
		} else if (pos < m && is_item_start(c)) {
			size_t m1 = sc->nch[pos + 1];
			if (m1 < m && s[m1] == ',')
				next = last_r(sc, m1 + 1, sc->wsend[m1 + 1]);
		}
		if (next != SIZE_MAX) {
			pos = next;
			continue;
		}
		/* No further chunk: the last item and the tail, which R says will match. */
		vm->list_end = pos;
		if (qi >= 0) {
			vm->single = SINGLE_RANGE;
			vm->ss = pos;
			vm->se = (size_t)sc->nqt[qi][pos + 1] + 1;
		} else if (pos < m && is_item_start(c) && !py_isspace(c) &&
			   sc->nT[pos + 1] <= sc->ncomma[pos + 1]) {
			vm->single = SINGLE_RANGE;
			vm->ss = pos;
			vm->se = sc->nT[pos + 1];
		} else {
			/* (?<!,) allows the empty item unless a comma is right before it */
			vm->single = (pos == 0 || s[pos - 1] != ',') ? SINGLE_EMPTY : SINGLE_NONE;
		}
		return 1;
	}
}

/*
 * _listvalueexp.findall over group 1:  (".*?"|'.*?'|[^'",\#]?.*?)\s*,\s*
 * Calls fn for each item (in order) with s[a..b).
 */
typedef int (*item_fn)(void *ud, const uint32_t *s, size_t a, size_t b);

static int findall_items(scan *sc, const uint32_t *s, size_t m, item_fn fn, void *ud)
{
	scan_value_tables(sc, s, m);
	size_t pos = 0;
	while (pos < m) {
		uint32_t c = s[pos];
		int qi = qidx(c);
		size_t a = pos, b = SIZE_MAX, comma = SIZE_MAX;
		if (qi >= 0) {
			size_t k = sc->nokc[qi][pos + 1];
			if (k < m) {
				b = k + 1;
				comma = sc->wsend[k + 1];
			}
		}
		if (b == SIZE_MAX) {
			size_t from = (is_item_start(c)) ? pos + 1 : pos;
			size_t m1 = sc->ncomma[from];
			if (m1 < m) {
				size_t k = sc->wsstart[m1];
				b = k > from ? k : from;
				comma = m1;
			}
		}
		if (b == SIZE_MAX) {
			pos++; /* findall searches on */
			continue;
		}
		int rc = fn(ud, s, a, b);
		if (rc)
			return rc;
		pos = sc->wsend[comma + 1];
	}
	return 0;
}

/* ---- the tree -------------------------------------------------------------------------- */

static uint32_t name_hash(const rnsc_config_section *sec, const char *name)
{
	uint64_t h = UINT64_C(1469598103934665603) ^ (uint64_t)(uintptr_t)sec;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * UINT64_C(1099511628211);
	return (uint32_t)(h ^ (h >> 32));
}

static name_ent *tab_find(const rnsc_config *cfg, const rnsc_config_section *sec, const char *name)
{
	if (!cfg->tab_cap)
		return NULL;
	uint32_t h = name_hash(sec, name);
	for (size_t i = h & (cfg->tab_cap - 1);; i = (i + 1) & (cfg->tab_cap - 1)) {
		name_ent *e = &cfg->tab[i];
		if (!e->name)
			return NULL;
		if (e->hash == h && e->sec == sec && strcmp(e->name, name) == 0)
			return e;
	}
}

static int tab_add(rnsc_config *cfg, const rnsc_config_section *sec, const char *name, int32_t idx)
{
	if ((cfg->tab_len + 1) * 2 > cfg->tab_cap) {
		size_t ncap = cfg->tab_cap ? cfg->tab_cap * 2 : 64;
		name_ent *nt = rnsc_calloc(cfg->ctx, ncap, sizeof(*nt));
		if (!nt)
			return RNSC_ERR_NOMEM;
		for (size_t i = 0; i < cfg->tab_cap; i++) {
			name_ent *e = &cfg->tab[i];
			if (!e->name)
				continue;
			size_t j = e->hash & (ncap - 1);
			while (nt[j].name)
				j = (j + 1) & (ncap - 1);
			nt[j] = *e;
		}
		cfg_free(cfg, cfg->tab);
		cfg->tab = nt;
		cfg->tab_cap = ncap;
	}
	uint32_t h = name_hash(sec, name);
	size_t j = h & (cfg->tab_cap - 1);
	while (cfg->tab[j].name)
		j = (j + 1) & (cfg->tab_cap - 1);
	cfg->tab[j] = (name_ent){.sec = sec, .name = name, .hash = h, .idx = idx};
	cfg->tab_len++;
	return 0;
}

static void opt_clear(rnsc_config *cfg, cfg_opt *o)
{
	if (o->ip_str != o->str)
		cfg_free(cfg, o->ip_str);
	if (o->ip_items) {
		for (size_t i = 0; i < o->n_items; i++)
			if (o->ip_items[i] != o->items[i])
				cfg_free(cfg, o->ip_items[i]);
		cfg_free(cfg, o->ip_items);
	}
	for (size_t i = 0; i < o->n_items; i++)
		cfg_free(cfg, o->items[i]);
	cfg_free(cfg, o->items);
	cfg_free(cfg, o->str);
	cfg_free(cfg, o->ip_msg);
	cfg_free(cfg, o->key);
}

static void section_clear(rnsc_config *cfg, rnsc_config_section *s)
{
	for (size_t i = 0; i < s->n_opts; i++)
		opt_clear(cfg, &s->opts[i]);
	cfg_free(cfg, s->opts);
	for (size_t i = 0; i < s->n_subs; i++) {
		section_clear(cfg, s->subs[i]);
		cfg_free(cfg, s->subs[i]);
	}
	cfg_free(cfg, s->subs);
	cfg_free(cfg, s->name);
}

void rnsc_config_del(rnsc_config *cfg)
{
	if (!cfg)
		return;
	section_clear(cfg, &cfg->root);
	cfg_free(cfg, cfg->tab);
	for (size_t i = 0; i < cfg->n_extras; i++)
		cfg_free(cfg, cfg->extras[i]);
	cfg_free(cfg, cfg->extras);
	rnsc_free(cfg->ctx, cfg);
}

/* Adds subsection `name` (taken over) to parent. */
static int add_section(rnsc_config *cfg, rnsc_config_section *parent, char *name, unsigned line,
		       rnsc_config_section **out)
{
	if (parent->n_subs == parent->cap_subs) {
		size_t ncap = parent->cap_subs ? parent->cap_subs * 2 : 4;
		rnsc_config_section **n = cfg_alloc(cfg, ncap * sizeof(*n));
		if (!n)
			goto nomem;
		if (parent->n_subs)
			memcpy(n, parent->subs, parent->n_subs * sizeof(*n));
		cfg_free(cfg, parent->subs);
		parent->subs = n;
		parent->cap_subs = ncap;
	}
	rnsc_config_section *s = rnsc_calloc(cfg->ctx, 1, sizeof(*s));
	if (!s)
		goto nomem;
	if (tab_add(cfg, parent, name, -(int32_t)parent->n_subs - 1) != 0) {
		cfg_free(cfg, s);
		goto nomem;
	}
	s->cfg = cfg;
	s->parent = parent;
	s->name = name;
	s->depth = parent->depth + 1;
	s->line = line;
	parent->subs[parent->n_subs++] = s;
	*out = s;
	return 0;
nomem:
	cfg_free(cfg, name);
	return RNSC_ERR_NOMEM;
}

/* Adds an option; takes over key and value storage (freed on failure). */
static int add_option(rnsc_config *cfg, rnsc_config_section *s, cfg_opt *o)
{
	if (s->n_opts == s->cap_opts) {
		size_t ncap = s->cap_opts ? s->cap_opts * 2 : 8;
		cfg_opt *n = cfg_alloc(cfg, ncap * sizeof(*n));
		if (!n)
			goto nomem;
		if (s->n_opts)
			memcpy(n, s->opts, s->n_opts * sizeof(*n));
		cfg_free(cfg, s->opts);
		s->opts = n;
		s->cap_opts = ncap;
	}
	if (tab_add(cfg, s, o->key, (int32_t)s->n_opts) != 0)
		goto nomem;
	s->opts[s->n_opts++] = *o;
	return 0;
nomem:
	opt_clear(cfg, o);
	return RNSC_ERR_NOMEM;
}

/* ---- parsing --------------------------------------------------------------------------- */

typedef struct line_ref {
	size_t off, len; /* bytes of the line without '\n' and trailing '\r's */
} line_ref;

typedef struct parser {
	rnsc_config *cfg;
	const char *text;
	line_ref *lines;
	size_t n_lines;
	scan sc;
	const char *origin;
	rnsc_config_error *err;
	/* the value being assembled */
	char **items;
	size_t n_items, cap_items;
	int item_err;
} parser;

static int perr(parser *ps, int code, size_t idx, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int perr(parser *ps, int code, size_t idx, const char *fmt, ...)
{
	char tail[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(tail, sizeof(tail), fmt, ap);
	va_end(ap);
	if (ps->origin)
		return set_err(ps->err, code, (unsigned)(idx + 1), "%s:%zu: %s", ps->origin, idx + 1,
			       tail);
	return set_err(ps->err, code, (unsigned)(idx + 1), "line %zu: %s", idx + 1, tail);
}

/* UTF-8 of code points s[a..b). */
static char *cp_string(rnsc_config *cfg, const uint32_t *s, size_t a, size_t b)
{
	char *o = cfg_alloc(cfg, (b - a) * 4 + 1);
	if (!o)
		return NULL;
	size_t n = 0;
	for (size_t i = a; i < b; i++)
		n += utf8_put(s[i], o + n);
	o[n] = '\0';
	return o;
}

/* ConfigObj._unquote: strips one pair of matching quotes. The caller rejects "". */
static void unquote_range(const uint32_t *s, size_t *a, size_t *b)
{
	if (*b - *a >= 1 && s[*a] == s[*b - 1] && (s[*a] == '"' || s[*a] == '\'')) {
		if (*b - *a >= 2) {
			(*a)++;
			(*b)--;
		} else {
			*b = *a; /* a lone quote unquotes to "" (value[1:-1]) */
		}
	}
}

static int collect_item(void *ud, const uint32_t *s, size_t a, size_t b)
{
	parser *ps = ud;
	if (a == b) {
		ps->item_err = 1; /* _unquote('') raises: "Parse error in value" */
		return RNSC_ERR_CONFIG_SYNTAX;
	}
	unquote_range(s, &a, &b);
	if (ps->n_items == ps->cap_items) {
		size_t ncap = ps->cap_items ? ps->cap_items * 2 : 8;
		char **n = cfg_alloc(ps->cfg, ncap * sizeof(*n));
		if (!n)
			return RNSC_ERR_NOMEM;
		if (ps->n_items)
			memcpy(n, ps->items, ps->n_items * sizeof(*n));
		cfg_free(ps->cfg, ps->items);
		ps->items = n;
		ps->cap_items = ncap;
	}
	char *v = cp_string(ps->cfg, s, a, b);
	if (!v)
		return RNSC_ERR_NOMEM;
	ps->items[ps->n_items++] = v;
	return 0;
}

static void drop_items(parser *ps)
{
	for (size_t i = 0; i < ps->n_items; i++)
		cfg_free(ps->cfg, ps->items[i]);
	cfg_free(ps->cfg, ps->items);
	ps->items = NULL;
	ps->n_items = ps->cap_items = 0;
}

/* Decodes line idx into ps->sc.cp; returns its length in code points, or an error. */
static int load_line(parser *ps, size_t idx, size_t *n)
{
	const line_ref *l = &ps->lines[idx];
	/* A line never has more code points than bytes. */
	if (l->len > MAX_LINE * 4)
		return perr(ps, RNSC_ERR_TOOBIG, idx, "line longer than %zu characters", MAX_LINE);
	int rc = scan_reserve(&ps->sc, l->len);
	if (rc)
		return rc;
	*n = scan_decode(&ps->sc, ps->text + l->off, l->len);
	if (*n > MAX_LINE)
		return perr(ps, RNSC_ERR_TOOBIG, idx, "line longer than %zu characters", MAX_LINE);
	return 0;
}

/* Finds the first "quot" (three quote code points) at or after `from` in s[0..n) such
 * that the rest matches \s*(#.*)?$; T must describe s. Returns its index or SIZE_MAX. */
static size_t find_close(const uint32_t *s, size_t n, size_t from, uint32_t q, const unsigned char *T)
{
	for (size_t j = from; j + 3 <= n; j++)
		if (s[j] == q && s[j + 1] == q && s[j + 2] == q && T[j + 3])
			return j;
	return SIZE_MAX;
}

static int has_triple(const uint32_t *s, size_t a, size_t n, uint32_t q)
{
	for (size_t j = a; j + 3 <= n; j++)
		if (s[j] == q && s[j + 1] == q && s[j + 2] == q)
			return 1;
	return 0;
}

/*
 * ConfigObj._multiline for a value starting with ''' or """ on line *idx (its code
 * points start at v, length m). On success *out is the value and *idx the last line
 * used. The value lines are taken verbatim and joined with '\n'.
 */
static int parse_multiline(parser *ps, size_t *idx, size_t vs, size_t n, char **out)
{
	rnsc_config *cfg = ps->cfg;
	uint32_t *s = ps->sc.cp;
	uint32_t q = s[vs];
	scan_basic(&ps->sc, s, n);
	size_t j = find_close(s, n, vs + 3, q, ps->sc.T);
	if (j != SIZE_MAX) {
		*out = cp_string(cfg, s, vs + 3, j);
		return *out ? 0 : RNSC_ERR_NOMEM;
	}
	if (has_triple(s, vs + 3, n, q))
		return RNSC_ERR_CONFIG_SYNTAX;
	/* Accumulate UTF-8: the first line's tail, then whole lines. */
	size_t cap = (n - vs) * 4 + 64, len = 0;
	char *acc = cfg_alloc(cfg, cap);
	if (!acc)
		return RNSC_ERR_NOMEM;
	for (size_t i = vs + 3; i < n; i++)
		len += utf8_put(s[i], acc + len);
	size_t cur = *idx;
	int rc = RNSC_ERR_CONFIG_SYNTAX;
	while (cur + 1 < ps->n_lines) {
		cur++;
		size_t ln;
		rc = load_line(ps, cur, &ln);
		if (rc)
			break;
		s = ps->sc.cp;
		size_t need = len + 1 + ln * 4 + 1;
		if (need > cap) {
			size_t ncap = cap * 2 > need ? cap * 2 : need;
			char *na = cfg_alloc(cfg, ncap);
			if (!na) {
				rc = RNSC_ERR_NOMEM;
				break;
			}
			memcpy(na, acc, len);
			cfg_free(cfg, acc);
			acc = na;
			cap = ncap;
		}
		acc[len++] = '\n';
		if (!has_triple(s, 0, ln, q)) {
			for (size_t i = 0; i < ln; i++)
				len += utf8_put(s[i], acc + len);
			rc = RNSC_ERR_CONFIG_SYNTAX; /* still open if this was the last line */
			continue;
		}
		scan_basic(&ps->sc, s, ln);
		size_t e = find_close(s, ln, 0, q, ps->sc.T);
		if (e == SIZE_MAX) {
			rc = RNSC_ERR_CONFIG_SYNTAX;
			break;
		}
		for (size_t i = 0; i < e; i++)
			len += utf8_put(s[i], acc + len);
		acc[len] = '\0';
		*out = acc;
		*idx = cur;
		return 0;
	}
	cfg_free(cfg, acc);
	return rc;
}

/* Parses one "key = value" line (already matched). */
static int parse_option(parser *ps, rnsc_config_section *sec, size_t *idx, size_t n, size_t ks,
			size_t ke, size_t vs)
{
	rnsc_config *cfg = ps->cfg;
	const size_t key_line = *idx;
	cfg_opt o;
	memset(&o, 0, sizeof(o));
	o.line = (unsigned)(key_line + 1);
	/* The key first: the value parse may replace the line buffer (multi-line). */
	size_t a = ks, b = ke;
	unquote_range(ps->sc.cp, &a, &b);
	o.key = cp_string(cfg, ps->sc.cp, a, b);
	if (!o.key)
		return RNSC_ERR_NOMEM;
	uint32_t *s = ps->sc.cp;
	int rc = 0;
	if (n - vs >= 3 && (s[vs] == '"' || s[vs] == '\'') && s[vs + 1] == s[vs] &&
	    s[vs + 2] == s[vs]) {
		rc = parse_multiline(ps, idx, vs, n, &o.str);
		if (rc == RNSC_ERR_CONFIG_SYNTAX)
			rc = perr(ps, rc, key_line, "unterminated or malformed multi-line value");
	} else {
		value_match vm;
		const uint32_t *v = s + vs;
		size_t m = n - vs;
		if (!match_value(&ps->sc, v, m, &vm)) {
			rc = perr(ps, RNSC_ERR_CONFIG_SYNTAX, key_line,
				  "parse error in value (badly quoted, or an invalid list)");
		} else if (vm.empty_list) {
			o.is_list = 1;
		} else {
			int single = vm.single;
			size_t ss = vm.ss, se = vm.se;
			if (vm.list_end > 0 && single == SINGLE_EMPTY)
				single = SINGLE_NONE; /* "a," : the regex's trailing empty item */
			if (vm.list_end == 0) {
				if (single == SINGLE_RANGE)
					unquote_range(v, &ss, &se);
				o.str = single == SINGLE_RANGE ? cp_string(cfg, v, ss, se)
							       : cfg_strndup(cfg, "", 0);
				if (!o.str)
					rc = RNSC_ERR_NOMEM;
			} else {
				o.is_list = 1;
				ps->item_err = 0;
				rc = findall_items(&ps->sc, v, vm.list_end, collect_item, ps);
				if (rc == 0 && single == SINGLE_RANGE)
					rc = collect_item(ps, v, ss, se);
				if (rc == RNSC_ERR_CONFIG_SYNTAX && ps->item_err)
					rc = perr(ps, rc, key_line,
						  "parse error in value (an empty list item)");
				if (rc == 0) {
					o.items = ps->items;
					o.n_items = ps->n_items;
					ps->items = NULL;
					ps->n_items = ps->cap_items = 0;
				} else {
					drop_items(ps);
				}
			}
		}
	}
	if (rc) {
		opt_clear(cfg, &o);
		return rc;
	}
	if (tab_find(cfg, sec, o.key)) {
		char shown[96];
		show_value(o.key, shown, sizeof(shown));
		char path[160];
		rnsc_config_section_path(sec, path, sizeof(path));
		/* ConfigObj reports it on the last line the value used. */
		rc = perr(ps, RNSC_ERR_CONFIG_DUP, *idx, "duplicate option %s in %s", shown,
			  path[0] ? path : "the top level");
		opt_clear(cfg, &o);
		return rc;
	}
	return add_option(cfg, sec, &o);
}

/* Splits text into lines the way Python's bytes.readlines() + rstrip('\r\n') does, and
 * checks the encoding (the reference decodes the whole file before parsing). */
static int split_lines(parser *ps, size_t len)
{
	const unsigned char *t = (const unsigned char *)ps->text;
	size_t start = 0;
	if (len >= 2 && ((t[0] == 0xff && t[1] == 0xfe) || (t[0] == 0xfe && t[1] == 0xff)))
		return set_err(ps->err, RNSC_ERR_MALFORMED, 1,
			       "%s%sUTF-16 configuration files are not supported",
			       ps->origin ? ps->origin : "", ps->origin ? ": " : "");
	if (len >= 3 && t[0] == 0xef && t[1] == 0xbb && t[2] == 0xbf)
		start = 3;
	size_t count = 0;
	for (size_t i = start; i < len; i++)
		count += t[i] == '\n';
	count += 1;
	ps->lines = rnsc_calloc(ps->cfg->ctx, count, sizeof(*ps->lines));
	if (!ps->lines)
		return RNSC_ERR_NOMEM;
	size_t i = start, n = 0;
	while (i < len) {
		size_t j = i;
		while (j < len && t[j] != '\n')
			j++;
		size_t e = j;
		while (e > i && t[e - 1] == '\r')
			e--;
		for (size_t k = i; k < e;) {
			if (t[k] == 0)
				return perr(ps, RNSC_ERR_MALFORMED, n, "NUL byte in the file");
			size_t l = utf8_valid_len(t + k, e - k);
			if (!l) {
				/* The '\r's dropped above are ASCII, so a sequence cut at e was
				 * cut in the file too. */
				return perr(ps, RNSC_ERR_MALFORMED, n, "not valid UTF-8");
			}
			k += l;
		}
		ps->lines[n].off = i;
		ps->lines[n].len = e - i;
		n++;
		i = j + 1;
	}
	ps->n_lines = n;
	return 0;
}

static int parse_lines(parser *ps)
{
	rnsc_config *cfg = ps->cfg;
	rnsc_config_section *cur = &cfg->root;
	for (size_t idx = 0; idx < ps->n_lines; idx++) {
		size_t n;
		int rc = load_line(ps, idx, &n);
		if (rc)
			return rc;
		const uint32_t *s = ps->sc.cp;
		size_t f = skip_ws(s, n, 0);
		if (f == n || s[f] == '#')
			continue;
		unsigned open, close;
		size_t ns, ne;
		if (match_section(&ps->sc, s, n, &open, &close, &ns, &ne)) {
			if (open != close)
				return perr(ps, RNSC_ERR_CONFIG_SYNTAX, idx,
					    "cannot compute the section depth (%u '[' but %u ']')",
					    open, close);
			rnsc_config_section *parent;
			if (open < cur->depth) {
				parent = cur;
				while (parent->depth > open)
					parent = parent->parent;
				parent = parent->parent;
			} else if (open == cur->depth) {
				parent = cur->parent;
			} else if (open == cur->depth + 1) {
				parent = cur;
			} else {
				return perr(ps, RNSC_ERR_CONFIG_SYNTAX, idx,
					    "section too nested (%u levels below a level-%u section)",
					    open, cur->depth);
			}
			unquote_range(s, &ns, &ne);
			char *name = cp_string(cfg, s, ns, ne);
			if (!name)
				return RNSC_ERR_NOMEM;
			if (tab_find(cfg, parent, name)) {
				char shown[96], path[160];
				show_value(name, shown, sizeof(shown));
				rnsc_config_section_path(parent, path, sizeof(path));
				cfg_free(cfg, name);
				return perr(ps, RNSC_ERR_CONFIG_DUP, idx,
					    "duplicate section name %s in %s", shown,
					    path[0] ? path : "the top level");
			}
			rc = add_section(cfg, parent, name, (unsigned)(idx + 1), &cur);
			if (rc)
				return rc;
			continue;
		}
		size_t ks, ke, vs;
		if (!match_keyword(&ps->sc, s, n, &ks, &ke, &vs))
			return perr(ps, RNSC_ERR_CONFIG_SYNTAX, idx,
				    "invalid line (neither a [section] nor key = value)");
		rc = parse_option(ps, cur, &idx, n, ks, ke, vs);
		if (rc)
			return rc;
	}
	return 0;
}

int rnsc_config_parse(rnsc_ctx *ctx, const char *text, size_t len, const char *origin,
		      rnsc_config **out, rnsc_config_error *err)
{
	clear_err(err);
	if (!out || (!text && len))
		return set_err(err, RNSC_ERR_INVAL, 0, "invalid argument");
	*out = NULL;
	rnsc_config *cfg = rnsc_calloc(ctx, 1, sizeof(*cfg));
	if (!cfg)
		return set_err(err, RNSC_ERR_NOMEM, 0, "out of memory");
	cfg->ctx = ctx;
	cfg->root.cfg = cfg;
	parser ps;
	memset(&ps, 0, sizeof(ps));
	ps.cfg = cfg;
	ps.text = text ? text : "";
	ps.origin = origin;
	ps.err = err;
	ps.sc.ctx = ctx;
	int rc = split_lines(&ps, len);
	if (rc == 0)
		rc = parse_lines(&ps);
	scan_free(&ps.sc);
	drop_items(&ps);
	rnsc_free(ctx, ps.lines);
	if (rc) {
		if (rc == RNSC_ERR_NOMEM)
			set_err(err, rc, 0, "out of memory");
		rnsc_config_del(cfg);
		return rc;
	}
	*out = cfg;
	return 0;
}

int rnsc_config_load(rnsc_ctx *ctx, const char *path, rnsc_config **out, rnsc_config_error *err)
{
	clear_err(err);
	if (!path || !out)
		return set_err(err, RNSC_ERR_INVAL, 0, "invalid argument");
	uint8_t *buf;
	size_t len;
	int rc = rnsc_store_read_file(ctx, path, RNSC_CONFIG_MAX_SIZE, &buf, &len);
	if (rc) {
		*out = NULL;
		if (rc == RNSC_ERR_TOOBIG)
			return set_err(err, rc, 0, "%s: larger than %zu bytes", path,
				       RNSC_CONFIG_MAX_SIZE);
		return set_err(err, rc, 0, "%s: %s", path, rnsc_strerror(rc));
	}
	rc = rnsc_config_parse(ctx, (const char *)buf, len, path, out, err);
	rnsc_free(ctx, buf);
	return rc;
}

/* ---- tree access ----------------------------------------------------------------------- */

const rnsc_config_section *rnsc_config_root(const rnsc_config *cfg)
{
	return cfg ? &cfg->root : NULL;
}

const rnsc_config_section *rnsc_config_section_get(const rnsc_config_section *parent,
						   const char *name)
{
	if (!parent || !name)
		return NULL;
	const name_ent *e = tab_find(parent->cfg, parent, name);
	return e && e->idx < 0 ? parent->subs[-(e->idx + 1)] : NULL;
}

const char *rnsc_config_section_name(const rnsc_config_section *s)
{
	return s ? s->name : NULL;
}

unsigned rnsc_config_section_depth(const rnsc_config_section *s)
{
	return s ? s->depth : 0;
}

const rnsc_config_section *rnsc_config_section_parent(const rnsc_config_section *s)
{
	return s ? s->parent : NULL;
}

unsigned rnsc_config_section_line(const rnsc_config_section *s)
{
	return s ? s->line : 0;
}

size_t rnsc_config_section_count(const rnsc_config_section *s)
{
	return s ? s->n_subs : 0;
}

const rnsc_config_section *rnsc_config_section_at(const rnsc_config_section *s, size_t i)
{
	return s && i < s->n_subs ? s->subs[i] : NULL;
}

size_t rnsc_config_option_count(const rnsc_config_section *s)
{
	return s ? s->n_opts : 0;
}

const char *rnsc_config_option_name(const rnsc_config_section *s, size_t i)
{
	return s && i < s->n_opts ? s->opts[i].key : NULL;
}

int rnsc_config_has(const rnsc_config_section *s, const char *key)
{
	return s && key && tab_find(s->cfg, s, key) != NULL;
}

static cfg_opt *opt_lookup(const rnsc_config_section *s, const char *key)
{
	const name_ent *e = tab_find(s->cfg, s, key);
	return e && e->idx >= 0 ? &((rnsc_config_section *)s)->opts[e->idx] : NULL;
}

unsigned rnsc_config_option_line(const rnsc_config_section *s, const char *key)
{
	const cfg_opt *o = s && key ? opt_lookup(s, key) : NULL;
	return o ? o->line : 0;
}

int rnsc_config_is_list(const rnsc_config_section *s, const char *key)
{
	if (!s || !key)
		return RNSC_ERR_INVAL;
	const cfg_opt *o = opt_lookup(s, key);
	return o ? o->is_list : RNSC_ERR_NOTFOUND;
}

/* ---- interpolation ------------------------------------------------------------------------ */

/* ConfigParser-style "%(name)s" as ConfigObj's InterpolationEngine does it: names are
 * looked up (raw) from the value's own section upwards, each level's DEFAULT
 * subsection right after the level itself; replacements are interpolated
 * recursively, with a (name, section name) trail catching loops. */
typedef struct ip_ctx {
	rnsc_config *cfg;
	const rnsc_config_section *owner;
	struct {
		const char *key;
		const char *sname;
	} trail[INTERP_MAX_DEPTH];
	int depth;
	unsigned long steps;
	char msg[200];
} ip_ctx;

static int same_name(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* _fetch: returns 0 and the raw string plus the section where the search found it. */
static int ip_fetch(ip_ctx *ic, const char *name, const char **val,
		    const rnsc_config_section **where)
{
	const rnsc_config_section *cur = ic->owner;
	char shown[96];
	for (;;) {
		const name_ent *e = tab_find(ic->cfg, cur, name);
		const cfg_opt *o = e && e->idx >= 0 ? &cur->opts[e->idx] : NULL;
		if (!o) {
			const name_ent *d = tab_find(ic->cfg, cur, "DEFAULT");
			if (d && d->idx >= 0) {
				/* A DEFAULT that is an option has no .get(): the reference crashes. */
				snprintf(ic->msg, sizeof(ic->msg),
					 "DEFAULT is an option, not a section, so %%(%s)s cannot be looked up",
					 name);
				return RNSC_ERR_CONFIG_INTERP;
			}
			if (d) {
				const rnsc_config_section *ds = cur->subs[-(d->idx + 1)];
				const name_ent *e2 = tab_find(ic->cfg, ds, name);
				if (e2 && e2->idx >= 0)
					o = &ds->opts[e2->idx];
			}
		}
		if (o) {
			if (o->is_list) {
				show_value(name, shown, sizeof(shown));
				snprintf(ic->msg, sizeof(ic->msg),
					 "%%(%s)s refers to a list, which cannot be interpolated",
					 name);
				return RNSC_ERR_CONFIG_INTERP;
			}
			*val = o->str;
			*where = cur;
			return 0;
		}
		if (cur->parent == NULL)
			break;
		cur = cur->parent;
	}
	show_value(name, shown, sizeof(shown));
	snprintf(ic->msg, sizeof(ic->msg), "missing option %s in interpolation", shown);
	return RNSC_ERR_CONFIG_INTERP;
}

static int ip_recurse(ip_ctx *ic, const char *key, const char *value,
		      const rnsc_config_section *sec, char **out);

/* Finds the next %(name)s at or after pos: returns 1 with [*a, *b) the whole match and
 * [*na, *nb) the name. */
static int ip_search(const char *v, size_t len, size_t pos, size_t *a, size_t *b, size_t *na,
		     size_t *nb)
{
	for (size_t i = pos; i + 1 < len; i++) {
		if (v[i] != '%' || v[i + 1] != '(')
			continue;
		const char *close = memchr(v + i + 2, ')', len - i - 2);
		if (!close)
			return 0; /* no ')' left anywhere: no later '%' can match either */
		size_t j = (size_t)(close - v);
		if (j + 1 < len && v[j + 1] == 's') {
			*a = i;
			*b = j + 2;
			*na = i + 2;
			*nb = j;
			return 1;
		}
	}
	return 0;
}

static int ip_recurse(ip_ctx *ic, const char *key, const char *value,
		      const rnsc_config_section *sec, char **out)
{
	rnsc_config *cfg = ic->cfg;
	for (int i = 0; i < ic->depth; i++) {
		if (strcmp(ic->trail[i].key, key) == 0 && same_name(ic->trail[i].sname, sec->name)) {
			char shown[96];
			show_value(key, shown, sizeof(shown));
			snprintf(ic->msg, sizeof(ic->msg), "interpolation loop detected in value %s",
				 shown);
			return RNSC_ERR_CONFIG_INTERP;
		}
	}
	if (ic->depth == INTERP_MAX_DEPTH) {
		snprintf(ic->msg, sizeof(ic->msg), "interpolation nested deeper than %d levels",
			 INTERP_MAX_DEPTH);
		return RNSC_ERR_CONFIG_INTERP;
	}
	ic->trail[ic->depth].key = key;
	ic->trail[ic->depth].sname = sec->name;
	ic->depth++;
	size_t len = strlen(value);
	char *buf = cfg_strndup(cfg, value, len);
	int rc = buf ? 0 : RNSC_ERR_NOMEM;
	size_t pos = 0, a, b, na, nb;
	while (rc == 0 && ip_search(buf, len, pos, &a, &b, &na, &nb)) {
		if (++ic->steps > INTERP_MAX_STEPS) {
			snprintf(ic->msg, sizeof(ic->msg), "more than %lu interpolations",
				 INTERP_MAX_STEPS);
			rc = RNSC_ERR_CONFIG_INTERP;
			break;
		}
		char *name = cfg_strndup(cfg, buf + na, nb - na);
		if (!name) {
			rc = RNSC_ERR_NOMEM;
			break;
		}
		const char *raw;
		const rnsc_config_section *where;
		char *repl = NULL;
		rc = ip_fetch(ic, name, &raw, &where);
		if (rc == 0)
			rc = ip_recurse(ic, name, raw, where, &repl);
		cfg_free(cfg, name);
		if (rc)
			break;
		size_t rl = strlen(repl), nlen = len - (b - a) + rl;
		if (nlen > INTERP_MAX_LEN) {
			cfg_free(cfg, repl);
			snprintf(ic->msg, sizeof(ic->msg), "interpolated value longer than %zu bytes",
				 INTERP_MAX_LEN);
			rc = RNSC_ERR_CONFIG_INTERP;
			break;
		}
		char *nbuf = cfg_alloc(cfg, nlen + 1);
		if (!nbuf) {
			cfg_free(cfg, repl);
			rc = RNSC_ERR_NOMEM;
			break;
		}
		memcpy(nbuf, buf, a);
		memcpy(nbuf + a, repl, rl);
		memcpy(nbuf + a + rl, buf + b, len - b + 1);
		cfg_free(cfg, repl);
		cfg_free(cfg, buf);
		buf = nbuf;
		len = nlen;
		pos = a + rl; /* the replacement is final: search on after it */
	}
	ic->depth--;
	if (rc) {
		cfg_free(cfg, buf);
		return rc;
	}
	*out = buf;
	return 0;
}

/* Interpolates one string of option `key` owned by s; *out aliases v when v has no
 * '%' (the reference's shortcut). */
static int ip_string(const rnsc_config_section *s, const char *key, char *v, char **out, char *msg,
		     size_t msgcap)
{
	if (!strchr(v, '%')) {
		*out = v;
		return 0;
	}
	ip_ctx *ic = rnsc_calloc(s->cfg->ctx, 1, sizeof(*ic));
	if (!ic)
		return RNSC_ERR_NOMEM;
	ic->cfg = s->cfg;
	ic->owner = s;
	int rc = ip_recurse(ic, key, v, s, out);
	if (rc == RNSC_ERR_CONFIG_INTERP)
		snprintf(msg, msgcap, "%s", ic->msg);
	rnsc_free(s->cfg->ctx, ic);
	return rc;
}

/* Fills the option's interpolation cache; returns its outcome. */
static int opt_interp(const rnsc_config_section *s, cfg_opt *o, rnsc_config_error *err)
{
	rnsc_config *cfg = s->cfg;
	if (o->ip_done == 1)
		return 0;
	if (o->ip_done < 0)
		return opt_err(err, o->ip_done, s, o->key, o->line, "%s", o->ip_msg ? o->ip_msg : "");
	char msg[200] = "";
	int rc = 0;
	if (!o->is_list) {
		rc = ip_string(s, o->key, o->str, &o->ip_str, msg, sizeof(msg));
	} else {
		char **it = cfg_alloc(cfg, (o->n_items ? o->n_items : 1) * sizeof(*it));
		if (!it)
			return opt_err(err, RNSC_ERR_NOMEM, s, o->key, o->line, "out of memory");
		size_t i;
		for (i = 0; i < o->n_items; i++) {
			rc = ip_string(s, o->key, o->items[i], &it[i], msg, sizeof(msg));
			if (rc)
				break;
		}
		if (rc) {
			while (i-- > 0)
				if (it[i] != o->items[i])
					cfg_free(cfg, it[i]);
			cfg_free(cfg, it);
		} else {
			o->ip_items = it;
		}
	}
	if (rc == RNSC_ERR_NOMEM)
		return opt_err(err, rc, s, o->key, o->line, "out of memory"); /* retried next time */
	if (rc) {
		o->ip_done = rc;
		o->ip_msg = cfg_strndup(cfg, msg, strlen(msg));
		return opt_err(err, rc, s, o->key, o->line, "%s", msg);
	}
	o->ip_done = 1;
	return 0;
}

static int get_opt(const rnsc_config_section *s, const char *key, cfg_opt **out,
		   rnsc_config_error *err)
{
	clear_err(err);
	if (!s || !key)
		return set_err(err, RNSC_ERR_INVAL, 0, "invalid argument");
	const name_ent *e = tab_find(s->cfg, s, key);
	if (!e)
		return opt_err(err, RNSC_ERR_NOTFOUND, s, key, 0, "option is missing");
	if (e->idx < 0)
		return opt_err(err, RNSC_ERR_CONFIG_VALUE, s, key, s->subs[-(e->idx + 1)]->line,
			       "is a section, not an option");
	cfg_opt *o = &((rnsc_config_section *)s)->opts[e->idx];
	int rc = opt_interp(s, o, err);
	if (rc)
		return rc;
	*out = o;
	return 0;
}

/* Single string of an option; a list is an error for every scalar getter. */
static int get_single(const rnsc_config_section *s, const char *key, cfg_opt **o,
		      rnsc_config_error *err)
{
	int rc = get_opt(s, key, o, err);
	if (rc)
		return rc;
	if ((*o)->is_list) {
		char first[96] = "";
		if ((*o)->n_items)
			show_value((*o)->ip_items[0], first, sizeof(first));
		return opt_err(err, RNSC_ERR_CONFIG_VALUE, s, key, (*o)->line,
			       "is a list (%zu item%s%s%s), expected a single value",
			       (*o)->n_items, (*o)->n_items == 1 ? "" : "s",
			       (*o)->n_items ? ", first " : "", first);
	}
	return 0;
}

int rnsc_config_get_str(const rnsc_config_section *s, const char *key, const char **out,
			rnsc_config_error *err)
{
	cfg_opt *o;
	if (!out)
		return set_err(err, RNSC_ERR_INVAL, 0, "invalid argument");
	int rc = get_single(s, key, &o, err);
	if (rc == 0)
		*out = o->ip_str;
	return rc;
}

int rnsc_config_get_list(const rnsc_config_section *s, const char *key, const char *const **items,
			 size_t *n, rnsc_config_error *err)
{
	cfg_opt *o;
	if (!items || !n)
		return set_err(err, RNSC_ERR_INVAL, 0, "invalid argument");
	int rc = get_opt(s, key, &o, err);
	if (rc)
		return rc;
	if (o->is_list) {
		*items = (const char *const *)o->ip_items;
		*n = o->n_items;
	} else {
		*items = (const char *const *)&o->ip_str;
		*n = 1;
	}
	return 0;
}

/* ---- conversions ------------------------------------------------------------------------- */

int rnsc_config_parse_bool(const char *s, int *out)
{
	static const struct {
		const char *w;
		int v;
	} words[] = {{"yes", 1}, {"no", 0},  {"on", 1},   {"off", 0},
		     {"1", 1},   {"0", 0},   {"true", 1}, {"false", 0}};
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
		size_t l = utf8_valid_len(p, (size_t)(end - p));
		if (!l) {
			*bad = 1;
			break;
		}
		uint32_t c = utf8_next(&p);
		if (c < 127) {
			o[k++] = (char)c;
		} else if (py_isspace(c)) {
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

static int py_isspace_ascii(char c) /* Py_ISSPACE */
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
	while (*p && py_isspace_ascii(*p))
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
	while (*p && py_isspace_ascii(*p))
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
	while (a < e && py_isspace_ascii(*a))
		a++;
	while (e > a && py_isspace_ascii(e[-1]))
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

int rnsc_config_get_bool(const rnsc_config_section *s, const char *key, int *out,
			 rnsc_config_error *err)
{
	cfg_opt *o;
	if (!out)
		return set_err(err, RNSC_ERR_INVAL, 0, "invalid argument");
	int rc = get_single(s, key, &o, err);
	if (rc)
		return rc;
	int v;
	if (rnsc_config_parse_bool(o->ip_str, &v) != 0) {
		char shown[96];
		show_value(o->ip_str, shown, sizeof(shown));
		return opt_err(err, RNSC_ERR_CONFIG_VALUE, s, key, o->line,
			       "%s is not a boolean (use yes/no, true/false, on/off or 1/0)", shown);
	}
	*out = v;
	return 0;
}

int rnsc_config_get_int(const rnsc_config_section *s, const char *key, int64_t *out,
			rnsc_config_error *err)
{
	cfg_opt *o;
	if (!out)
		return set_err(err, RNSC_ERR_INVAL, 0, "invalid argument");
	int rc = get_single(s, key, &o, err);
	if (rc)
		return rc;
	int64_t v;
	rc = rnsc_config_parse_int(o->ip_str, &v);
	if (rc) {
		char shown[96];
		show_value(o->ip_str, shown, sizeof(shown));
		if (rc == RNSC_ERR_RANGE)
			return opt_err(err, rc, s, key, o->line, "%s is out of range", shown);
		if (rc == RNSC_ERR_NOMEM)
			return opt_err(err, rc, s, key, o->line, "out of memory");
		return opt_err(err, rc, s, key, o->line, "%s is not an integer", shown);
	}
	*out = v;
	return 0;
}

int rnsc_config_get_float(const rnsc_config_section *s, const char *key, double *out,
			  rnsc_config_error *err)
{
	cfg_opt *o;
	if (!out)
		return set_err(err, RNSC_ERR_INVAL, 0, "invalid argument");
	int rc = get_single(s, key, &o, err);
	if (rc)
		return rc;
	double v;
	rc = rnsc_config_parse_float(o->ip_str, &v);
	if (rc) {
		char shown[96];
		show_value(o->ip_str, shown, sizeof(shown));
		if (rc == RNSC_ERR_CONFIG_VALUE)
			return opt_err(err, rc, s, key, o->line, "%s is not a number", shown);
		return opt_err(err, rc, s, key, o->line, "%s", rnsc_strerror(rc));
	}
	*out = v;
	return 0;
}

/* ---- [reticulum] and [logging] --------------------------------------------------------- */

static int ascii_casecmp(const char *a, const char *b)
{
	for (;; a++, b++) {
		int x = (unsigned char)*a, y = (unsigned char)*b;
		if (x >= 'A' && x <= 'Z')
			x += 32;
		if (y >= 'A' && y <= 'Z')
			y += 32;
		if (x != y || !x)
			return x - y;
	}
}

int rnsc_config_iface_mode_from_name(const char *name)
{
	static const struct {
		const char *n;
		int m;
	} modes[] = {
		{"full", RNSC_IFMODE_FULL},
		{"access_point", RNSC_IFMODE_ACCESS_POINT},
		{"accesspoint", RNSC_IFMODE_ACCESS_POINT},
		{"ap", RNSC_IFMODE_ACCESS_POINT},
		{"pointtopoint", RNSC_IFMODE_POINT_TO_POINT},
		{"ptp", RNSC_IFMODE_POINT_TO_POINT},
		{"roaming", RNSC_IFMODE_ROAMING},
		{"boundary", RNSC_IFMODE_BOUNDARY},
		{"gateway", RNSC_IFMODE_GATEWAY},
		{"gw", RNSC_IFMODE_GATEWAY},
		{"internal", RNSC_IFMODE_INTERNAL},
	};
	if (!name)
		return RNSC_IFMODE_UNSET;
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (ascii_casecmp(name, modes[i].n) == 0)
			return modes[i].m;
	return RNSC_IFMODE_UNSET;
}

void rnsc_config_settings_defaults(rnsc_config_settings *out)
{
	memset(out, 0, sizeof(*out));
	out->loglevel = 3; /* RNS.loglevel = LOG_NOTICE until configured */
	out->loglevel_raw = 3;
	out->logtimestamps = 1;
	out->share_instance = 1;
	out->shared_instance_port = 37428;
	out->instance_control_port = 37429;
	out->shared_instance_unix = 1;
	out->local_socket_path = "default";
	out->link_mtu_discovery = 1;
	out->use_implicit_proof = 1;
	out->blackhole_update_interval = 60.0 * 60.0; /* BlackholeUpdater.UPDATE_INTERVAL */
	out->autoconnect_announces_to_internal = -1;
	out->egress_control = -1;
}

static int hexval(uint32_t c)
{
	if (c >= '0' && c <= '9')
		return (int)(c - '0');
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return (int)(c - 'a' + 10);
	return -1;
}

/* bytes.fromhex(): ASCII whitespace may separate byte pairs. Returns the byte count
 * or -1; out may be NULL to only count. */
static long py_fromhex(const char *s, uint8_t *out)
{
	long n = 0;
	const unsigned char *p = (const unsigned char *)s;
	for (;;) {
		while (*p && py_isspace_ascii((char)*p))
			p++;
		if (!*p)
			return n;
		int hi = hexval(p[0]), lo = p[1] ? hexval(p[1]) : -1;
		if (hi < 0 || lo < 0)
			return -1;
		if (out)
			out[n] = (uint8_t)(hi << 4 | lo);
		n++;
		p += 2;
	}
}

/* A list option of 16-byte hashes (remote_management_allowed, blackhole_sources, ...). */
static int read_hashes(const rnsc_config_section *s, const char *key, rnsc_hash_list *out,
		       rnsc_config_error *err)
{
	const char *const *items;
	size_t n;
	int rc = rnsc_config_get_list(s, key, &items, &n, err);
	if (rc)
		return rc;
	uint8_t(*h)[16] = NULL;
	if (n) {
		h = cfg_alloc(s->cfg, n * sizeof(*h));
		if (!h || cfg_keep(s->cfg, h) != 0) {
			cfg_free(s->cfg, h);
			return opt_err(err, RNSC_ERR_NOMEM, s, key, 0, "out of memory");
		}
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		uint8_t tmp[16];
		/* The reference checks the length (32 characters) before decoding; a value with
		 * blanks between the pairs would decode shorter there, which no hash can be. */
		if (strlen(items[i]) != 32 || py_fromhex(items[i], NULL) != 16) {
			char shown[96];
			show_value(items[i], shown, sizeof(shown));
			return opt_err(err, RNSC_ERR_CONFIG_VALUE, s, key, rnsc_config_option_line(s, key),
				       "%s is not a 32-character hexadecimal hash (16 bytes)", shown);
		}
		py_fromhex(items[i], tmp);
		int dup = 0;
		for (size_t j = 0; j < k; j++)
			dup |= memcmp(h[j], tmp, 16) == 0;
		if (!dup)
			memcpy(h[k++], tmp, 16);
	}
	out->h = (const uint8_t(*)[16])h;
	out->n = k;
	return 0;
}

static int read_logging(const rnsc_config_section *sec, rnsc_config_settings *st,
			rnsc_config_error *err)
{
	for (size_t i = 0; i < sec->n_opts; i++) {
		const char *key = sec->opts[i].key;
		int rc = rnsc_config_get_list(sec, key, &(const char *const *){NULL}, &(size_t){0}, err);
		if (rc)
			return rc; /* every option is read, so every one must interpolate */
		if (strcmp(key, "loglevel") == 0) {
			int64_t lv;
			rc = rnsc_config_get_int(sec, key, &lv, err);
			if (rc)
				return rc;
			st->loglevel_raw = lv;
			st->loglevel = lv < 0 ? 0 : lv > 8 ? 8 : (int)lv;
			st->loglevel_set = 1;
		} else if (strcmp(key, "logtimestamps") == 0) {
			rc = rnsc_config_get_bool(sec, key, &st->logtimestamps, err);
			if (rc)
				return rc;
		}
	}
	for (size_t i = 0; i < sec->n_subs; i++) {
		const char *name = sec->subs[i]->name;
		if (strcmp(name, "loglevel") == 0 || strcmp(name, "logtimestamps") == 0)
			return opt_err(err, RNSC_ERR_CONFIG_VALUE, sec, name, sec->subs[i]->line,
				       "is a section, not an option");
	}
	return 0;
}

/* The options of [reticulum] the reference reads, and how. */
enum rk {
	RK_BOOL,    /* as_bool into an int */
	RK_BOOL_T,  /* as_bool, only True counts */
	RK_INT,     /* int() into int64 */
	RK_OPTINT,  /* as_int into rnsc_opt_int with a condition */
	RK_OPTFLT,  /* as_float into rnsc_opt_float when >= 0 */
	RK_HASHES,
	RK_SPECIAL,
};

enum cond { C_ANY, C_POS, C_NONNEG };

typedef struct rkey {
	const char *name;
	enum rk kind;
	size_t off;
	enum cond cond;
} rkey;

#define OFF(f) offsetof(rnsc_config_settings, f)
static const rkey reticulum_keys[] = {
	{"share_instance", RK_BOOL, OFF(share_instance), C_ANY},
	{"instance_name", RK_SPECIAL, 0, C_ANY},
	{"shared_instance_type", RK_SPECIAL, 0, C_ANY},
	{"shared_instance_port", RK_INT, OFF(shared_instance_port), C_ANY},
	{"instance_control_port", RK_INT, OFF(instance_control_port), C_ANY},
	{"rpc_key", RK_SPECIAL, 0, C_ANY},
	{"enable_transport", RK_BOOL_T, OFF(enable_transport), C_ANY},
	{"static_transport_identity", RK_BOOL_T, OFF(static_transport_identity), C_ANY},
	{"local_hops_delta", RK_BOOL_T, OFF(local_hops_delta), C_ANY},
	{"network_identity", RK_SPECIAL, 0, C_ANY},
	{"link_mtu_discovery", RK_BOOL, OFF(link_mtu_discovery), C_ANY},
	{"enable_remote_management", RK_BOOL_T, OFF(enable_remote_management), C_ANY},
	{"remote_management_allowed", RK_HASHES, OFF(remote_management_allowed), C_ANY},
	{"respond_to_probes", RK_BOOL_T, OFF(respond_to_probes), C_ANY},
	{"force_shared_instance_bitrate", RK_OPTINT, OFF(force_shared_instance_bitrate), C_ANY},
	{"panic_on_interface_error", RK_BOOL_T, OFF(panic_on_interface_error), C_ANY},
	{"use_implicit_proof", RK_BOOL, OFF(use_implicit_proof), C_ANY},
	{"default_gravity", RK_OPTINT, OFF(default_gravity), C_ANY},
	{"discover_interfaces", RK_BOOL, OFF(discover_interfaces), C_ANY},
	{"required_discovery_value", RK_OPTINT, OFF(required_discovery_value), C_POS},
	{"publish_blackhole", RK_BOOL, OFF(publish_blackhole), C_ANY},
	{"blackhole_sources", RK_HASHES, OFF(blackhole_sources), C_ANY},
	{"blackhole_update_interval", RK_SPECIAL, 0, C_ANY},
	{"interface_discovery_sources", RK_HASHES, OFF(interface_discovery_sources), C_ANY},
	{"autoconnect_discovered_interfaces", RK_SPECIAL, 0, C_ANY},
	{"autoconnect_interface_mode", RK_SPECIAL, 0, C_ANY},
	{"autoconnect_interface_gravity", RK_OPTINT, OFF(autoconnect_interface_gravity), C_ANY},
	{"autoconnect_announces_to_internal", RK_SPECIAL, 0, C_ANY},
	{"default_ar_target", RK_SPECIAL, 0, C_ANY},
	{"default_ar_penalty", RK_OPTINT, OFF(default_ar_penalty), C_NONNEG},
	{"default_ar_grace", RK_OPTINT, OFF(default_ar_grace), C_NONNEG},
	{"ic_max_held_announces", RK_OPTINT, OFF(ic_max_held_announces), C_NONNEG},
	{"ic_burst_hold", RK_OPTFLT, OFF(ic_burst_hold), C_NONNEG},
	{"ic_burst_freq_new", RK_OPTFLT, OFF(ic_burst_freq_new), C_NONNEG},
	{"ic_burst_freq", RK_OPTFLT, OFF(ic_burst_freq), C_NONNEG},
	{"ic_pr_burst_freq_new", RK_OPTFLT, OFF(ic_pr_burst_freq_new), C_NONNEG},
	{"ic_pr_burst_freq", RK_OPTFLT, OFF(ic_pr_burst_freq), C_NONNEG},
	{"ec_pr_freq", RK_OPTFLT, OFF(ec_pr_freq), C_NONNEG},
	{"egress_control", RK_SPECIAL, 0, C_ANY},
	{"ic_new_time", RK_OPTFLT, OFF(ic_new_time), C_NONNEG},
	{"ic_burst_penalty", RK_OPTFLT, OFF(ic_burst_penalty), C_NONNEG},
	{"ic_held_release_interval", RK_OPTFLT, OFF(ic_held_release_interval), C_NONNEG},
	{"qlen_in_data", RK_OPTINT, OFF(qlen_in_data), C_POS},
	{"qlen_in_announce", RK_OPTINT, OFF(qlen_in_announce), C_POS},
	{"qlen_in_pr", RK_OPTINT, OFF(qlen_in_pr), C_POS},
	{"qlen_in_il", RK_OPTINT, OFF(qlen_in_il), C_POS},
};
#undef OFF

static int read_special(const rnsc_config_section *sec, const char *key, rnsc_config_settings *st,
			rnsc_config_error *err)
{
	int rc = 0, b;
	int64_t iv;
	double fv;
	const char *sv;
	if (strcmp(key, "instance_name") == 0) {
		rc = rnsc_config_get_str(sec, key, &st->instance_name, err);
	} else if (strcmp(key, "shared_instance_type") == 0) {
		rc = rnsc_config_get_str(sec, key, &sv, err);
		if (rc == 0 && ascii_casecmp(sv, "tcp") == 0)
			st->shared_instance_type = RNSC_SHARED_TCP;
		else if (rc == 0 && ascii_casecmp(sv, "unix") == 0)
			st->shared_instance_type = RNSC_SHARED_UNIX;
	} else if (strcmp(key, "rpc_key") == 0) {
		/* The reference catches every failure here and falls back to the derived key. */
		st->rpc_key = NULL;
		st->rpc_key_len = 0;
		st->rpc_key_invalid = 1;
		rnsc_config_error tmp;
		if (rnsc_config_get_str(sec, key, &sv, &tmp) == 0) {
			long n = py_fromhex(sv, NULL);
			if (n >= 0) {
				uint8_t *k = cfg_alloc(sec->cfg, n ? (size_t)n : 1);
				if (!k || cfg_keep(sec->cfg, k) != 0) {
					cfg_free(sec->cfg, k);
					return opt_err(err, RNSC_ERR_NOMEM, sec, key, 0, "out of memory");
				}
				py_fromhex(sv, k);
				st->rpc_key = k;
				st->rpc_key_len = (size_t)n;
				st->rpc_key_invalid = 0;
			}
		}
	} else if (strcmp(key, "network_identity") == 0) {
		rc = rnsc_config_get_str(sec, key, &st->network_identity, err);
	} else if (strcmp(key, "blackhole_update_interval") == 0) {
		rc = rnsc_config_get_float(sec, key, &fv, err);
		if (rc == 0) {
			if (fv < 2)
				fv = 2;
			st->blackhole_update_interval = fv * 60;
		}
	} else if (strcmp(key, "autoconnect_discovered_interfaces") == 0) {
		rc = rnsc_config_get_int(sec, key, &iv, err);
		if (rc == 0 && iv > 0)
			st->autoconnect_discovered_interfaces = iv;
	} else if (strcmp(key, "autoconnect_interface_mode") == 0) {
		/* str(value).lower(): a list never names a mode, and is not an error. */
		if (rnsc_config_is_list(sec, key) == 1) {
			const char *const *it;
			size_t n;
			rc = rnsc_config_get_list(sec, key, &it, &n, err);
		} else {
			rc = rnsc_config_get_str(sec, key, &sv, err);
			if (rc == 0) {
				int m = rnsc_config_iface_mode_from_name(sv);
				if (m != RNSC_IFMODE_UNSET)
					st->autoconnect_interface_mode = m;
			}
		}
	} else if (strcmp(key, "autoconnect_announces_to_internal") == 0) {
		rc = rnsc_config_get_bool(sec, key, &b, err);
		if (rc == 0 && b)
			st->autoconnect_announces_to_internal = 1;
	} else if (strcmp(key, "default_ar_target") == 0) {
		rc = rnsc_config_get_int(sec, key, &iv, err);
		if (rc == 0 && iv == 0)
			st->default_ar_target.set = 0;
		else if (rc == 0 && iv > 0)
			st->default_ar_target = (rnsc_opt_int){1, iv};
	} else if (strcmp(key, "egress_control") == 0) {
		rc = rnsc_config_get_bool(sec, key, &b, err);
		if (rc == 0)
			st->egress_control = b;
	}
	return rc;
}

static int read_reticulum(const rnsc_config_section *sec, rnsc_config_settings *st,
			  rnsc_config_error *err)
{
	for (size_t i = 0; i < sec->n_opts + sec->n_subs; i++) {
		const char *key = i < sec->n_opts ? sec->opts[i].key : sec->subs[i - sec->n_opts]->name;
		int rc;
		if (i < sec->n_opts) {
			/* Reading the value interpolates it, known option or not. */
			rc = rnsc_config_get_list(sec, key, &(const char *const *){NULL}, &(size_t){0},
						  err);
			if (rc)
				return rc;
		}
		const rkey *k = NULL;
		for (size_t j = 0; j < sizeof(reticulum_keys) / sizeof(reticulum_keys[0]); j++)
			if (strcmp(reticulum_keys[j].name, key) == 0)
				k = &reticulum_keys[j];
		if (!k)
			continue;
		if (i >= sec->n_opts && strcmp(key, "rpc_key") == 0) {
			st->rpc_key = NULL; /* fromhex(section) fails inside the reference's try */
			st->rpc_key_len = 0;
			st->rpc_key_invalid = 1;
			continue;
		}
		if (i >= sec->n_opts && strcmp(key, "autoconnect_interface_mode") == 0)
			continue; /* str(section) names no mode */
		char *base = (char *)st;
		int b;
		int64_t iv;
		double fv;
		switch (k->kind) {
		case RK_BOOL:
			rc = rnsc_config_get_bool(sec, key, (int *)(base + k->off), err);
			break;
		case RK_BOOL_T:
			rc = rnsc_config_get_bool(sec, key, &b, err);
			if (rc == 0 && b)
				*(int *)(base + k->off) = 1;
			break;
		case RK_INT:
			rc = rnsc_config_get_int(sec, key, (int64_t *)(base + k->off), err);
			break;
		case RK_OPTINT:
			rc = rnsc_config_get_int(sec, key, &iv, err);
			if (rc == 0 && (k->cond == C_ANY || (k->cond == C_POS && iv > 0) ||
					(k->cond == C_NONNEG && iv >= 0)))
				*(rnsc_opt_int *)(base + k->off) = (rnsc_opt_int){1, iv};
			else if (rc == 0 && k->cond == C_POS)
				((rnsc_opt_int *)(base + k->off))->set = 0;
			break;
		case RK_OPTFLT:
			rc = rnsc_config_get_float(sec, key, &fv, err);
			if (rc == 0 && fv >= 0)
				*(rnsc_opt_float *)(base + k->off) = (rnsc_opt_float){1, fv};
			break;
		case RK_HASHES:
			rc = read_hashes(sec, key, (rnsc_hash_list *)(base + k->off), err);
			break;
		default:
			rc = read_special(sec, key, st, err);
			break;
		}
		if (rc)
			return rc;
	}
	return 0;
}

int rnsc_config_read_settings(const rnsc_config *cfg, rnsc_config_settings *out,
			      rnsc_config_error *err)
{
	clear_err(err);
	if (!cfg || !out)
		return set_err(err, RNSC_ERR_INVAL, 0, "invalid argument");
	rnsc_config_settings st;
	rnsc_config_settings_defaults(&st);
	const rnsc_config_section *lg = rnsc_config_section_get(&cfg->root, "logging");
	const rnsc_config_section *rt = rnsc_config_section_get(&cfg->root, "reticulum");
	int rc = lg ? read_logging(lg, &st, err) : 0;
	if (rc == 0 && rt)
		rc = read_reticulum(rt, &st, err);
	if (rc)
		return rc;
	/* As Reticulum.__apply_config resolves them on Linux (use_af_unix() is true). */
	st.shared_instance_unix = st.shared_instance_type != RNSC_SHARED_TCP;
	if (!st.shared_instance_unix)
		st.local_socket_path = NULL;
	else
		st.local_socket_path = st.instance_name ? st.instance_name : "default";
	*out = st;
	return 0;
}

/* ---- [interfaces] ------------------------------------------------------------------ */

static const rnsc_config_section *ifaces(const rnsc_config *cfg)
{
	return cfg ? rnsc_config_section_get(&cfg->root, "interfaces") : NULL;
}

size_t rnsc_config_iface_count(const rnsc_config *cfg)
{
	const rnsc_config_section *s = ifaces(cfg);
	return s ? s->n_subs : 0;
}

int rnsc_config_iface_at(const rnsc_config *cfg, size_t i, rnsc_config_iface *out,
			 rnsc_config_error *err)
{
	clear_err(err);
	const rnsc_config_section *s = ifaces(cfg);
	if (!out || !s || i >= s->n_subs)
		return set_err(err, RNSC_ERR_INVAL, 0, "invalid argument");
	const rnsc_config_section *c = s->subs[i];
	int enabled = 0, rc;
	/* (interface_enabled present and true) or (enabled present and true), evaluated
	 * left to right: "enabled" is not even read when interface_enabled is true. */
	if (rnsc_config_has(c, "interface_enabled")) {
		rc = rnsc_config_get_bool(c, "interface_enabled", &enabled, err);
		if (rc)
			return rc;
	}
	if (!enabled && rnsc_config_has(c, "enabled")) {
		rc = rnsc_config_get_bool(c, "enabled", &enabled, err);
		if (rc)
			return rc;
	}
	const char *type = NULL;
	if (enabled) {
		rc = rnsc_config_get_str(c, "type", &type, err);
		if (rc)
			return rc;
	} else if (rnsc_config_get_str(c, "type", &type, NULL) != 0) {
		type = NULL; /* a disabled interface is never instantiated */
	}
	out->section = c;
	out->name = c->name;
	out->type = type;
	out->enabled = enabled;
	return 0;
}

/* ---- where the file lives ------------------------------------------------------------ */

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int put(char *out, size_t cap, const char *a, const char *b)
{
	int n = snprintf(out, cap, "%s%s", a, b);
	return n < 0 || (size_t)n >= cap ? RNSC_ERR_BUFSIZE : 0;
}

/* os.path.expanduser("~") */
static int home_dir(char *out, size_t cap)
{
	const char *h = getenv("HOME");
	char pwbuf[4096];
	if (!h) {
		struct passwd pw, *res = NULL;
		if (getpwuid_r(getuid(), &pw, pwbuf, sizeof(pwbuf), &res) != 0 || !res)
			return RNSC_ERR_NOENT;
		h = res->pw_dir;
	}
	size_t n = strlen(h);
	while (n > 0 && h[n - 1] == '/')
		n--;
	if (n == 0)
		return put(out, cap, "/", "");
	if (n >= cap)
		return RNSC_ERR_BUFSIZE;
	memcpy(out, h, n);
	out[n] = '\0';
	return 0;
}

int rnsc_config_locate_in(const char *override_dir, const char *etc_dir, const char *home,
			  char *out, size_t cap)
{
	char buf[PATH_MAX], hb[PATH_MAX];
	if (!out || !cap)
		return RNSC_ERR_INVAL;
	if (override_dir)
		return put(out, cap, override_dir, "");
	const char *etc = etc_dir ? etc_dir : "/etc/reticulum";
	if (put(buf, sizeof(buf), etc, "/config") == 0 && is_dir(etc) && is_file(buf))
		return put(out, cap, etc, "");
	if (!home) {
		int rc = home_dir(hb, sizeof(hb));
		if (rc)
			return rc;
		home = hb;
	}
	char dir[PATH_MAX];
	if (put(dir, sizeof(dir), home, "/.config/reticulum") == 0 &&
	    put(buf, sizeof(buf), dir, "/config") == 0 && is_dir(dir) && is_file(buf))
		return put(out, cap, dir, "");
	return put(out, cap, home, "/.reticulum");
}

int rnsc_config_locate(const char *override_dir, char *out, size_t cap)
{
	return rnsc_config_locate_in(override_dir, NULL, NULL, out, cap);
}

static const char default_text[] =
	"# Reticulum configuration, written by rnsc because none was found.\n"
	"# The format is the one the Python reference reads, so the file works with\n"
	"# either implementation. Options left out keep their built-in defaults;\n"
	"# the Reticulum manual lists them all.\n"
	"\n"
	"[reticulum]\n"
	"\n"
	"# Forward packets, announces and path requests for other nodes. Only worth\n"
	"# enabling on a node that stays in one place and is always on.\n"
	"enable_transport = False\n"
	"\n"
	"# The first program started on this machine becomes the shared instance: it\n"
	"# opens the interfaces below, and programs started later reach the network\n"
	"# through it over a local socket.\n"
	"share_instance = Yes\n"
	"\n"
	"# Several independent shared instances on one machine need distinct names.\n"
	"instance_name = default\n"
	"\n"
	"# Where local domain sockets are unavailable, instances are told apart by\n"
	"# port numbers instead:\n"
	"# shared_instance_port = 37428\n"
	"# instance_control_port = 37429\n"
	"\n"
	"# Use TCP on the loopback for the shared instance even where domain sockets\n"
	"# are available:\n"
	"# shared_instance_type = tcp\n"
	"\n"
	"# Collect interface announcements made by transport nodes on the network:\n"
	"# discover_interfaces = No\n"
	"\n"
	"# Exit instead of carrying on without it when an interface fails for good,\n"
	"# for instance when its hardware is unplugged:\n"
	"# panic_on_interface_error = No\n"
	"\n"
	"# Ignore announces from identities that these blackhole list publishers have\n"
	"# listed (a comma-separated list of 32-character identity hashes):\n"
	"# blackhole_sources = <identity hash>, <identity hash>\n"
	"\n"
	"\n"
	"[logging]\n"
	"\n"
	"# 0 critical, 1 error, 2 warning, 3 notice, 4 info, 5 verbose, 6 debug,\n"
	"# 7 path, 8 extreme. Each level includes the ones below it.\n"
	"loglevel = 4\n"
	"\n"
	"\n"
	"# One [[subsection]] per interface: \"type\" chooses the kind of interface and\n"
	"# \"enabled\" switches it on or off.\n"
	"[interfaces]\n"
	"\n"
	"  # Finds other Reticulum nodes on the local network by itself over IPv6\n"
	"  # link-local multicast; it needs no router, DHCP or configured address.\n"
	"  [[Default Interface]]\n"
	"    type = AutoInterface\n"
	"    enabled = Yes\n";

const char *rnsc_config_default_text(size_t *len)
{
	if (len)
		*len = sizeof(default_text) - 1;
	return default_text;
}

int rnsc_config_write_default(const char *configdir)
{
	char path[PATH_MAX];
	if (!configdir || !*configdir)
		return RNSC_ERR_INVAL;
	if (put(path, sizeof(path), configdir, "/config") != 0)
		return RNSC_ERR_INVAL;
	int rc = rnsc_store_mkdirs(configdir);
	if (rc)
		return rc;
	return rnsc_store_write_atomic(path, default_text, sizeof(default_text) - 1, 0666);
}

int rnsc_config_open(rnsc_ctx *ctx, const char *override_dir, char *dir_out, size_t dir_cap,
		     int *created, rnsc_config **out, rnsc_config_error *err)
{
	char dir[PATH_MAX], path[PATH_MAX];
	clear_err(err);
	if (!out)
		return set_err(err, RNSC_ERR_INVAL, 0, "invalid argument");
	*out = NULL;
	if (created)
		*created = 0;
	int rc = rnsc_config_locate(override_dir, dir, sizeof(dir));
	if (rc)
		return set_err(err, rc, 0, "cannot locate the configuration folder: %s",
			       rnsc_strerror(rc));
	if (dir_out && put(dir_out, dir_cap, dir, "") != 0)
		return set_err(err, RNSC_ERR_BUFSIZE, 0, "folder name too long");
	if (put(path, sizeof(path), dir, "/config") != 0)
		return set_err(err, RNSC_ERR_INVAL, 0, "%s: path too long", dir);
	if (is_file(path))
		return rnsc_config_load(ctx, path, out, err);
	rc = rnsc_config_write_default(dir);
	if (rc)
		return set_err(err, rc, 0, "%s: cannot write the default configuration: %s", path,
			       rnsc_strerror(rc));
	if (created)
		*created = 1;
	return rnsc_config_parse(ctx, default_text, sizeof(default_text) - 1, path, out, err);
}
