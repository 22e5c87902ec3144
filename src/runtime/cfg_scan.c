/* SPDX-License-Identifier: MIT */
/*
 * Lexing for the reference's configuration format: UTF-8, Python's character classes
 * and the per-line matchers. The grammar follows the regular expressions of the
 * ConfigObj the reference vendors; where a regex backtracks, the matchers below
 * reproduce the order in which Python's engine tries alternatives, because that order
 * decides how odd lines split. Each matcher is linear in the line length (precomputed
 * "next position where ..." tables replace the regex's backtracking).
 */
#include <string.h>

#include "cfgfile_internal.h"

/* ---- UTF-8 and Python's character classes ------------------------------------------------ */

/* Decodes one code point of valid UTF-8 (validated beforehand). */
uint32_t rnsc_cfg_utf8_next(const unsigned char **pp)
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
	return ((c & 0x07) << 18) | ((uint32_t)(p[1] & 0x3f) << 12) |
	       ((uint32_t)(p[2] & 0x3f) << 6) | (p[3] & 0x3f);
}

/* Length of the valid UTF-8 sequence at p (strict, as Python's decoder: no overlongs,
 * surrogates or code points past U+10FFFF), or 0. */
size_t rnsc_cfg_utf8_valid_len(const unsigned char *p, size_t avail)
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

size_t rnsc_cfg_utf8_put(uint32_t c, char *o)
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
int rnsc_cfg_py_isspace(uint32_t c)
{
	if (c <= 0x20)
		return c == 0x20 || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f);
	if (c < 0x85)
		return 0;
	return c == 0x85 || c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) ||
	       c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

/* ---- per-line scanning ------------------------------------------------------------------- */

void rnsc_cfg_scan_free(cfg_scan *sc)
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
int rnsc_cfg_scan_reserve(cfg_scan *sc, size_t n)
{
	if (n + 2 <= sc->cap)
		return 0;
	size_t cap = sc->cap ? sc->cap : 64;
	while (cap < n + 2)
		cap *= 2;
	rnsc_ctx *ctx = sc->ctx;
	rnsc_cfg_scan_free(sc);
	sc->cap = cap;
	unsigned char **b[] = {&sc->T, &sc->G, &sc->R, &sc->good, &sc->anyg[0], &sc->anyg[1]};
	uint32_t **w[] = {&sc->cp,      &sc->nextG,  &sc->wsend,  &sc->wsstart,
			  &sc->ncomma,  &sc->nch,    &sc->nT,     &sc->nokc[0],
			  &sc->nokc[1], &sc->nqt[0], &sc->nqt[1], &sc->cntR};
	int ok = 1;
	for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++)
		ok &= (*b[i] = rnsc_alloc(ctx, cap)) != NULL;
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		ok &= (*w[i] = rnsc_alloc(ctx, cap * sizeof(uint32_t))) != NULL;
	if (!ok) {
		rnsc_cfg_scan_free(sc);
		return RNSC_ERR_NOMEM;
	}
	return 0;
}

/* Decodes UTF-8 bytes (already validated) into sc->cp; returns the length. */
size_t rnsc_cfg_scan_decode(cfg_scan *sc, const char *p, size_t len)
{
	const unsigned char *u = (const unsigned char *)p, *end = u + len;
	size_t n = 0;
	while (u < end)
		sc->cp[n++] = rnsc_cfg_utf8_next(&u);
	return n;
}

/* Shared tables: whitespace runs and the comment tail T. */
void rnsc_cfg_scan_basic(cfg_scan *sc, const uint32_t *s, size_t n)
{
	sc->T[n] = 1;
	sc->wsend[n] = (uint32_t)n;
	for (size_t i = n; i-- > 0;) {
		int ws = rnsc_cfg_py_isspace(s[i]);
		sc->T[i] = s[i] == '#' || (ws && sc->T[i + 1]);
		sc->wsend[i] = ws ? sc->wsend[i + 1] : (uint32_t)i;
	}
	sc->wsstart[0] = 0;
	for (size_t j = 1; j <= n; j++)
		sc->wsstart[j] = rnsc_cfg_py_isspace(s[j - 1]) ? sc->wsstart[j - 1] : (uint32_t)j;
}

size_t rnsc_cfg_skip_ws(const uint32_t *s, size_t n, size_t i)
{
	while (i < n && rnsc_cfg_py_isspace(s[i]))
		i++;
	return i;
}

/*
 * _sectionmarker:  ^(\s*)((?:\[\s*)+)("\s*\S.*?\s*"|'\s*\S.*?\s*'|[^'"\s].*?)((?:\s*\])+)\s*(\#.*)?$
 * The bracket group is greedy, so ends are tried from the longest down; for each, the
 * name alternatives in order with their lazy ends. Returns 1 on a match.
 */
int rnsc_cfg_match_section(cfg_scan *sc, const uint32_t *s, size_t n, unsigned *open,
			   unsigned *close, size_t *ns, size_t *ne)
{
	size_t i0 = rnsc_cfg_skip_ws(s, n, 0);
	if (i0 >= n || s[i0] != '[')
		return 0;
	rnsc_cfg_scan_basic(sc, s, n);
	unsigned char *G = sc->G;
	G[n] = 0;
	for (size_t q = n; q-- > 0;)
		G[q] = (s[q] == ']' && (sc->T[q + 1] || G[q + 1])) ||
		       (rnsc_cfg_py_isspace(s[q]) && G[q + 1]);
	uint32_t *nextG = sc->nextG;
	nextG[n + 1] = (uint32_t)(n + 1);
	for (size_t q = n + 1; q-- > 0;)
		nextG[q] = G[q] ? (uint32_t)q : nextG[q + 1];
	size_t emax = i0;
	while (emax < n && (s[emax] == '[' || rnsc_cfg_py_isspace(s[emax])))
		emax++;
	for (size_t p = emax; p > i0; p--) {
		if (p >= n)
			continue;
		size_t q = SIZE_MAX;
		uint32_t c = s[p];
		if (c == '"' || c == '\'') {
			size_t f = rnsc_cfg_skip_ws(s, n, p + 1);
			if (f < n) {
				for (size_t k = f + 1; k < n; k++) {
					if (s[k] == c && G[k + 1]) {
						q = k + 1;
						break;
					}
				}
			}
		} else if (!rnsc_cfg_py_isspace(c)) {
			if (nextG[p + 1] <= n)
				q = nextG[p + 1];
		}
		if (q == SIZE_MAX)
			continue;
		unsigned o = 0, cl = 0;
		for (size_t k = i0; k < p; k++)
			o += s[k] == '[';
		for (size_t k = q; k < n && (s[k] == ']' || rnsc_cfg_py_isspace(s[k])); k++)
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
int rnsc_cfg_match_keyword(cfg_scan *sc, const uint32_t *s, size_t n, size_t *ks, size_t *ke,
			   size_t *vs)
{
	(void)sc;
	size_t i0 = rnsc_cfg_skip_ws(s, n, 0);
	size_t eq = SIZE_MAX;
	if (i0 < n) {
		uint32_t c = s[i0];
		if (c == '"' || c == '\'') {
			for (size_t k = i0 + 1; k < n; k++) {
				if (s[k] != c)
					continue;
				size_t j = rnsc_cfg_skip_ws(s, n, k + 1);
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
				while (k > i0 + 1 && rnsc_cfg_py_isspace(s[k - 1]))
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
			while (k > g + 1 && rnsc_cfg_py_isspace(s[k - 1]))
				k--;
			*ks = g;
			*ke = k;
			eq = e;
		}
	}
	if (eq == SIZE_MAX)
		return 0;
	*vs = rnsc_cfg_skip_ws(s, n, eq + 1);
	return 1;
}

/* Everything rnsc_cfg_match_value needs beyond the basic tables, for s[0..m). */
static void scan_value_tables(cfg_scan *sc, const uint32_t *s, size_t m)
{
	rnsc_cfg_scan_basic(sc, s, m);
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
			sc->nqt[qi][i] =
				(c == q && sc->T[i + 1]) ? (uint32_t)i : sc->nqt[qi][i + 1];
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
static size_t last_r(const cfg_scan *sc, size_t a, size_t b)
{
	if (a > b || sc->cntR[a] == sc->cntR[b + 1])
		return SIZE_MAX;
	for (size_t e = b + 1; e-- > a;)
		if (sc->R[e])
			return e;
	return SIZE_MAX;
}

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
int rnsc_cfg_match_value(cfg_scan *sc, const uint32_t *s, size_t m, cfg_value_match *vm)
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
				sc->anyg[k][pos] =
					sc->anyg[k][pos + 1] || (qidx(c) == k && sc->good[pos]);
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
				if (!r && !rnsc_cfg_py_isspace(c))
					r = sc->nT[pos + 1] <= sc->ncomma[pos + 1];
				if (!r && rnsc_cfg_py_isspace(c))
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
		} else if (pos < m && is_item_start(c) && !rnsc_cfg_py_isspace(c) &&
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

int rnsc_cfg_findall_items(cfg_scan *sc, const uint32_t *s, size_t m, cfg_item_fn fn, void *ud)
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
