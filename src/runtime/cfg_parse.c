/* SPDX-License-Identifier: MIT */
/*
 * Parsing: splits the text into lines, checks the encoding, runs the matchers of
 * cfg_scan.c on each line and builds the tree, reporting the first error as
 * ConfigObj does (rnsc_config_parse).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cfgfile_internal.h"

#define MAX_LINE ((size_t)64 * 1024) /* code points in one physical line */

/* ---- the tree -------------------------------------------------------------------------- */

/* Adds subsection `name` (taken over) to parent. */
static int add_section(rnsc_config *cfg, rnsc_config_section *parent, char *name, unsigned line,
		       rnsc_config_section **out)
{
	if (parent->n_subs == parent->cap_subs) {
		size_t ncap = parent->cap_subs ? parent->cap_subs * 2 : 4;
		rnsc_config_section **n = rnsc_cfg_alloc(cfg, ncap * sizeof(*n));
		if (!n)
			goto nomem;
		if (parent->n_subs)
			memcpy(n, parent->subs, parent->n_subs * sizeof(*n));
		rnsc_cfg_free(cfg, parent->subs);
		parent->subs = n;
		parent->cap_subs = ncap;
	}
	rnsc_config_section *s = rnsc_calloc(cfg->ctx, 1, sizeof(*s));
	if (!s)
		goto nomem;
	if (rnsc_cfg_tab_add(cfg, parent, name, -(int32_t)parent->n_subs - 1) != 0) {
		rnsc_cfg_free(cfg, s);
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
	rnsc_cfg_free(cfg, name);
	return RNSC_ERR_NOMEM;
}

/* Adds an option; takes over key and value storage (freed on failure). */
static int add_option(rnsc_config *cfg, rnsc_config_section *s, cfg_opt *o)
{
	if (s->n_opts == s->cap_opts) {
		size_t ncap = s->cap_opts ? s->cap_opts * 2 : 8;
		cfg_opt *n = rnsc_cfg_alloc(cfg, ncap * sizeof(*n));
		if (!n)
			goto nomem;
		if (s->n_opts)
			memcpy(n, s->opts, s->n_opts * sizeof(*n));
		rnsc_cfg_free(cfg, s->opts);
		s->opts = n;
		s->cap_opts = ncap;
	}
	if (rnsc_cfg_tab_add(cfg, s, o->key, (int32_t)s->n_opts) != 0)
		goto nomem;
	s->opts[s->n_opts++] = *o;
	return 0;
nomem:
	rnsc_cfg_opt_clear(cfg, o);
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
	cfg_scan sc;
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
		return rnsc_cfg_set_err(ps->err, code, (unsigned)(idx + 1), "%s:%zu: %s",
					ps->origin, idx + 1, tail);
	return rnsc_cfg_set_err(ps->err, code, (unsigned)(idx + 1), "line %zu: %s", idx + 1, tail);
}

/* UTF-8 of code points s[a..b). */
static char *cp_string(rnsc_config *cfg, const uint32_t *s, size_t a, size_t b)
{
	char *o = rnsc_cfg_alloc(cfg, (b - a) * 4 + 1);
	if (!o)
		return NULL;
	size_t n = 0;
	for (size_t i = a; i < b; i++)
		n += rnsc_cfg_utf8_put(s[i], o + n);
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
		char **n = rnsc_cfg_alloc(ps->cfg, ncap * sizeof(*n));
		if (!n)
			return RNSC_ERR_NOMEM;
		if (ps->n_items)
			memcpy(n, ps->items, ps->n_items * sizeof(*n));
		rnsc_cfg_free(ps->cfg, ps->items);
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
		rnsc_cfg_free(ps->cfg, ps->items[i]);
	rnsc_cfg_free(ps->cfg, ps->items);
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
	int rc = rnsc_cfg_scan_reserve(&ps->sc, l->len);
	if (rc)
		return rc;
	*n = rnsc_cfg_scan_decode(&ps->sc, ps->text + l->off, l->len);
	if (*n > MAX_LINE)
		return perr(ps, RNSC_ERR_TOOBIG, idx, "line longer than %zu characters", MAX_LINE);
	return 0;
}

/* Finds the first "quot" (three quote code points) at or after `from` in s[0..n) such
 * that the rest matches \s*(#.*)?$; T must describe s. Returns its index or SIZE_MAX. */
static size_t find_close(const uint32_t *s, size_t n, size_t from, uint32_t q,
			 const unsigned char *T)
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
	rnsc_cfg_scan_basic(&ps->sc, s, n);
	size_t j = find_close(s, n, vs + 3, q, ps->sc.T);
	if (j != SIZE_MAX) {
		*out = cp_string(cfg, s, vs + 3, j);
		return *out ? 0 : RNSC_ERR_NOMEM;
	}
	if (has_triple(s, vs + 3, n, q))
		return RNSC_ERR_CONFIG_SYNTAX;
	/* Accumulate UTF-8: the first line's tail, then whole lines. */
	size_t cap = (n - vs) * 4 + 64, len = 0;
	char *acc = rnsc_cfg_alloc(cfg, cap);
	if (!acc)
		return RNSC_ERR_NOMEM;
	for (size_t i = vs + 3; i < n; i++)
		len += rnsc_cfg_utf8_put(s[i], acc + len);
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
			char *na = rnsc_cfg_alloc(cfg, ncap);
			if (!na) {
				rc = RNSC_ERR_NOMEM;
				break;
			}
			memcpy(na, acc, len);
			rnsc_cfg_free(cfg, acc);
			acc = na;
			cap = ncap;
		}
		acc[len++] = '\n';
		if (!has_triple(s, 0, ln, q)) {
			for (size_t i = 0; i < ln; i++)
				len += rnsc_cfg_utf8_put(s[i], acc + len);
			rc = RNSC_ERR_CONFIG_SYNTAX; /* still open if this was the last line */
			continue;
		}
		rnsc_cfg_scan_basic(&ps->sc, s, ln);
		size_t e = find_close(s, ln, 0, q, ps->sc.T);
		if (e == SIZE_MAX) {
			rc = RNSC_ERR_CONFIG_SYNTAX;
			break;
		}
		for (size_t i = 0; i < e; i++)
			len += rnsc_cfg_utf8_put(s[i], acc + len);
		acc[len] = '\0';
		*out = acc;
		*idx = cur;
		return 0;
	}
	rnsc_cfg_free(cfg, acc);
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
		cfg_value_match vm;
		const uint32_t *v = s + vs;
		size_t m = n - vs;
		if (!rnsc_cfg_match_value(&ps->sc, v, m, &vm)) {
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
							       : rnsc_cfg_strndup(cfg, "", 0);
				if (!o.str)
					rc = RNSC_ERR_NOMEM;
			} else {
				o.is_list = 1;
				ps->item_err = 0;
				rc = rnsc_cfg_findall_items(&ps->sc, v, vm.list_end, collect_item,
							    ps);
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
		rnsc_cfg_opt_clear(cfg, &o);
		return rc;
	}
	if (rnsc_cfg_tab_find(cfg, sec, o.key)) {
		char shown[96];
		rnsc_cfg_show_value(o.key, shown, sizeof(shown));
		char path[160];
		rnsc_config_section_path(sec, path, sizeof(path));
		/* ConfigObj reports it on the last line the value used. */
		rc = perr(ps, RNSC_ERR_CONFIG_DUP, *idx, "duplicate option %s in %s", shown,
			  path[0] ? path : "the top level");
		rnsc_cfg_opt_clear(cfg, &o);
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
		return rnsc_cfg_set_err(ps->err, RNSC_ERR_MALFORMED, 1,
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
			size_t l = rnsc_cfg_utf8_valid_len(t + k, e - k);
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
		size_t f = rnsc_cfg_skip_ws(s, n, 0);
		if (f == n || s[f] == '#')
			continue;
		unsigned open, close;
		size_t ns, ne;
		if (rnsc_cfg_match_section(&ps->sc, s, n, &open, &close, &ns, &ne)) {
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
				return perr(
					ps, RNSC_ERR_CONFIG_SYNTAX, idx,
					"section too nested (%u levels below a level-%u section)",
					open, cur->depth);
			}
			unquote_range(s, &ns, &ne);
			char *name = cp_string(cfg, s, ns, ne);
			if (!name)
				return RNSC_ERR_NOMEM;
			if (rnsc_cfg_tab_find(cfg, parent, name)) {
				char shown[96], path[160];
				rnsc_cfg_show_value(name, shown, sizeof(shown));
				rnsc_config_section_path(parent, path, sizeof(path));
				rnsc_cfg_free(cfg, name);
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
		if (!rnsc_cfg_match_keyword(&ps->sc, s, n, &ks, &ke, &vs))
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
	rnsc_cfg_clear_err(err);
	if (!out || (!text && len))
		return rnsc_cfg_set_err(err, RNSC_ERR_INVAL, 0, "invalid argument");
	*out = NULL;
	rnsc_config *cfg = rnsc_calloc(ctx, 1, sizeof(*cfg));
	if (!cfg)
		return rnsc_cfg_set_err(err, RNSC_ERR_NOMEM, 0, "out of memory");
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
	rnsc_cfg_scan_free(&ps.sc);
	drop_items(&ps);
	rnsc_free(ctx, ps.lines);
	if (rc) {
		if (rc == RNSC_ERR_NOMEM)
			rnsc_cfg_set_err(err, rc, 0, "out of memory");
		rnsc_config_del(cfg);
		return rc;
	}
	*out = cfg;
	return 0;
}
