/* SPDX-License-Identifier: MIT */
/*
 * rnid's -E/--meta-spec: the metadata a signed message (.rsm) embeds, read from a ConfigObj
 * file and, when a spec file exists, checked and converted the way ConfigObj's validate()
 * with Validator does it (rnid.py rsg_meta_from_file). The result is the msgpack of the
 * extra "meta" entries, in the order ConfigObj's dict() gives them: a section's options in
 * file order, then the spec's defaults for options the file lacks, then subsections.
 *
 * The spec is parsed by rnid as a plain ConfigObj, so a check with a comma in it
 * ("integer(min=0, max=9)") arrives as a list and makes rnid fail; each check therefore
 * has at most one argument. Checks known here: string, integer, float, boolean, ip_addr,
 * pass, option, list, tuple and the typed lists, each with min=, max= (or one positional
 * minimum) and default=. A name Validator does not know fails validation as it does there;
 * force_list, mixed_list and __many__ sections are refused with a message rather than
 * guessed at.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfgfile.h"
#include "cmd_id.h"
#include "err.h"
#include "msgpack.h"

enum ck {
	CK_UNKNOWN,
	CK_UNSUPPORTED,
	CK_PASS,
	CK_STR,
	CK_INT,
	CK_FLOAT,
	CK_BOOL,
	CK_IP,
	CK_OPTION,
	CK_LIST,
	CK_STR_LIST,
	CK_INT_LIST,
	CK_FLOAT_LIST,
	CK_BOOL_LIST,
	CK_IP_LIST
};

typedef struct check {
	enum ck k;
	int has_min, has_max, has_default, default_none;
	char min[64], max[64], opt[128], def[256];
} check;

typedef struct meta_state {
	int invalid;   /* a value failed its check: rnid's "did not pass spec validation" */
	char why[320]; /* set when the spec itself cannot be used */
} meta_state;

static const struct {
	const char *name;
	enum ck k;
} CHECKS[] = {
	{"pass", CK_PASS},
	{"string", CK_STR},
	{"integer", CK_INT},
	{"float", CK_FLOAT},
	{"boolean", CK_BOOL},
	{"option", CK_OPTION},
	{"list", CK_LIST},
	{"tuple", CK_LIST},
	{"string_list", CK_STR_LIST},
	{"int_list", CK_INT_LIST},
	{"float_list", CK_FLOAT_LIST},
	{"bool_list", CK_BOOL_LIST},
	{"ip_addr", CK_IP},
	{"ip_addr_list", CK_IP_LIST},
	{"", CK_PASS},
	/* Validator has these too; rnid fails on force_list, mixed_list needs several args */
	{"force_list", CK_UNSUPPORTED},
	{"mixed_list", CK_UNSUPPORTED},
};

static void trim(char *s)
{
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
	size_t i = 0;
	while (isspace((unsigned char)s[i]))
		i++;
	memmove(s, s + i, n - i + 1);
}

static void unquote(char *s)
{
	size_t n = strlen(s);
	if (n >= 2 && (s[0] == '"' || s[0] == '\'') && s[n - 1] == s[0]) {
		memmove(s, s + 1, n - 2);
		s[n - 2] = 0;
	}
}

/* "name" or "name(arg)" with arg one of min=, max=, default= or a positional value. */
static int parse_check(const char *text, check *c, meta_state *st, const char *key)
{
	memset(c, 0, sizeof(*c));
	char buf[512];
	if (strlen(text) >= sizeof(buf))
		goto bad;
	strcpy(buf, text);
	trim(buf);
	char *arg = strchr(buf, '(');
	if (arg) {
		size_t n = strlen(buf);
		if (buf[n - 1] != ')')
			goto bad;
		buf[n - 1] = 0;
		*arg++ = 0;
		trim(arg);
	}
	trim(buf);
	c->k = CK_UNKNOWN;
	for (size_t i = 0; i < sizeof(CHECKS) / sizeof(CHECKS[0]); i++)
		if (strcmp(buf, CHECKS[i].name) == 0)
			c->k = CHECKS[i].k;
	if (c->k == CK_UNKNOWN) { /* Validator's VdtUnknownCheckError: the value fails */
		st->invalid = 1;
		return 1;
	}
	if (c->k == CK_UNSUPPORTED) {
		snprintf(st->why, sizeof(st->why),
			 "the spec check \"%s\" for %s is not supported by rnsc id", buf, key);
		return -1;
	}
	if (!arg || !*arg)
		return 0;
	char *eq = strchr(arg, '=');
	char *val = eq ? eq + 1 : arg;
	if (eq)
		*eq = 0;
	trim(arg);
	trim(val);
	unquote(val);
	if (!eq && c->k == CK_OPTION) {
		snprintf(c->opt, sizeof(c->opt), "%s", val);
	} else if (!eq || strcmp(arg, "min") == 0) {
		c->has_min = 1;
		snprintf(c->min, sizeof(c->min), "%s", val);
	} else if (strcmp(arg, "max") == 0) {
		c->has_max = 1;
		snprintf(c->max, sizeof(c->max), "%s", val);
	} else if (strcmp(arg, "default") == 0) {
		c->has_default = 1;
		c->default_none = strcmp(val, "None") == 0;
		snprintf(c->def, sizeof(c->def), "%s", val);
	} else {
		goto bad;
	}
	return 0;
bad:
	snprintf(st->why, sizeof(st->why),
		 "the spec check \"%s\" for %s is not supported by rnsc id", text, key);
	return -1;
}

static size_t u8len(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* min/max on a length (strings, lists). */
static int len_ok(const check *c, size_t len)
{
	int64_t lim;
	if (c->has_min && (rnsc_config_parse_int(c->min, &lim) || (int64_t)len < lim))
		return 0;
	if (c->has_max && (rnsc_config_parse_int(c->max, &lim) || (int64_t)len > lim))
		return 0;
	return 1;
}

/* One scalar through a scalar check: writes the converted value (w may be a sizing
 * writer). Returns 1 when it passed. */
static int emit_scalar(rnsc_mp_writer *w, enum ck k, const check *c, const char *v)
{
	switch (k) {
	case CK_PASS:
	case CK_STR:
	case CK_LIST: /* only reached for list items */
		if (k == CK_STR && c && !len_ok(c, u8len(v)))
			return 0;
		rnsc_mp_write_cstr(w, v);
		return 1;
	case CK_OPTION:
		if (strcmp(v, c->opt) != 0)
			return 0;
		rnsc_mp_write_cstr(w, v);
		return 1;
	case CK_INT: {
		int64_t x, lim;
		if (rnsc_config_parse_int(v, &x))
			return 0;
		if (c && c->has_min && (rnsc_config_parse_int(c->min, &lim) || x < lim))
			return 0;
		if (c && c->has_max && (rnsc_config_parse_int(c->max, &lim) || x > lim))
			return 0;
		rnsc_mp_write_int(w, x);
		return 1;
	}
	case CK_FLOAT: {
		double x, lim;
		if (rnsc_config_parse_float(v, &x))
			return 0;
		if (c && c->has_min && (rnsc_config_parse_float(c->min, &lim) || x < lim))
			return 0;
		if (c && c->has_max && (rnsc_config_parse_float(c->max, &lim) || x > lim))
			return 0;
		rnsc_mp_write_double(w, x);
		return 1;
	}
	case CK_IP: { /* Validator: socket.inet_aton, i.e. the C library's inet_aton */
		struct in_addr ia;
		if (!inet_aton(v, &ia))
			return 0;
		rnsc_mp_write_cstr(w, v);
		return 1;
	}
	case CK_BOOL: {
		int b;
		if (rnsc_config_parse_bool(v, &b))
			return 0;
		rnsc_mp_write_bool(w, b);
		return 1;
	}
	default:
		return 0;
	}
}

static enum ck item_check(enum ck k)
{
	switch (k) {
	case CK_STR_LIST:
		return CK_STR;
	case CK_INT_LIST:
		return CK_INT;
	case CK_FLOAT_LIST:
		return CK_FLOAT;
	case CK_BOOL_LIST:
		return CK_BOOL;
	case CK_IP_LIST:
		return CK_IP;
	default:
		return CK_PASS;
	}
}

static int is_list_check(enum ck k)
{
	return k >= CK_LIST;
}

/* The value of option key of s (NULL: missing, use the default) under check c. */
static void emit_checked(rnsc_mp_writer *w, const rnsc_config_section *s, const char *key,
			 const check *c, meta_state *st)
{
	if (!s) { /* missing: Validator falls back to the default, converted by the check */
		if (!c->has_default) {
			st->invalid = 1;
			rnsc_mp_write_nil(w);
		} else if (c->default_none) {
			rnsc_mp_write_nil(w);
		} else if (is_list_check(c->k)) {
			st->invalid = 1; /* a text default is not a list */
			rnsc_mp_write_nil(w);
		} else if (!emit_scalar(w, c->k, c, c->def)) {
			st->invalid = 1;
			rnsc_mp_write_nil(w);
		}
		return;
	}
	int list = rnsc_config_is_list(s, key);
	if (list && c->k == CK_PASS) {
		list = 1; /* pass keeps the list as it is */
	} else if (list != is_list_check(c->k)) {
		st->invalid = 1;
		rnsc_mp_write_nil(w);
		return;
	}
	if (!list) {
		const char *v = NULL;
		if (rnsc_config_get_str(s, key, &v, NULL) || !emit_scalar(w, c->k, c, v)) {
			st->invalid = 1;
			rnsc_mp_write_nil(w);
		}
		return;
	}
	const char *const *items = NULL;
	size_t n = 0;
	if (rnsc_config_get_list(s, key, &items, &n, NULL) || (c->k != CK_PASS && !len_ok(c, n))) {
		st->invalid = 1;
		rnsc_mp_write_nil(w);
		return;
	}
	rnsc_mp_write_array(w, n);
	for (size_t i = 0; i < n; i++)
		if (!emit_scalar(w, item_check(c->k), NULL, items[i]))
			st->invalid = 1;
}

static void emit_plain(rnsc_mp_writer *w, const rnsc_config_section *s, const char *key)
{
	if (rnsc_config_is_list(s, key)) {
		const char *const *items = NULL;
		size_t n = 0;
		if (rnsc_config_get_list(s, key, &items, &n, NULL))
			n = 0;
		rnsc_mp_write_array(w, n);
		for (size_t i = 0; i < n; i++)
			rnsc_mp_write_cstr(w, items[i]);
		return;
	}
	const char *v = "";
	rnsc_config_get_str(s, key, &v, NULL);
	rnsc_mp_write_cstr(w, v);
}

static int is_option(const rnsc_config_section *s, const char *key)
{
	return s && rnsc_config_has(s, key) && !rnsc_config_section_get(s, key);
}

/* rnid keeps its own signer and pubkey: create_rsg skips these top-level keys. */
static int skipped(int top, const char *key)
{
	return top && (strcmp(key, "signer") == 0 || strcmp(key, "pubkey") == 0);
}

static void emit_section(rnsc_mp_writer *w, const rnsc_config_section *s,
			 const rnsc_config_section *spec, int top, int as_map, meta_state *st);

/* Counts (w NULL) or writes the entries of one section. Returns the entry count. */
static size_t section_entries(rnsc_mp_writer *w, const rnsc_config_section *s,
			      const rnsc_config_section *spec, int top, meta_state *st)
{
	size_t n = 0;
	rnsc_mp_writer sink;
	rnsc_mp_writer_init(&sink, NULL, 0);
	rnsc_mp_writer *o = w ? w : &sink;
	size_t no = s ? rnsc_config_option_count(s) : 0;
	for (size_t i = 0; i < no; i++) {
		const char *key = rnsc_config_option_name(s, i);
		if (skipped(top, key))
			continue;
		n++;
		rnsc_mp_write_cstr(o, key);
		const char *sv = NULL;
		if (spec && rnsc_config_section_get(spec, key)) {
			st->invalid = 1; /* a section in the spec, an option here */
			emit_plain(o, s, key);
		} else if (is_option(spec, key)) {
			check c;
			if (rnsc_config_is_list(spec, key) ||
			    rnsc_config_get_str(spec, key, &sv, NULL)) {
				snprintf(
					st->why, sizeof(st->why),
					"the spec for %s holds a comma (rnid's spec reader makes it a list "
					"and fails)",
					key);
				return n;
			}
			int pc = parse_check(sv, &c, st, key);
			if (pc < 0)
				return n;
			if (pc > 0)
				emit_plain(o, s, key);
			else
				emit_checked(o, s, key, &c, st);
		} else {
			emit_plain(o, s, key);
		}
	}
	size_t nso = spec ? rnsc_config_option_count(spec) : 0;
	for (size_t i = 0; i < nso; i++) { /* spec options the file lacks */
		const char *key = rnsc_config_option_name(spec, i);
		if (is_option(s, key))
			continue;
		const char *sv = NULL;
		check c;
		if (rnsc_config_is_list(spec, key) || rnsc_config_get_str(spec, key, &sv, NULL)) {
			snprintf(
				st->why, sizeof(st->why),
				"the spec for %s holds a comma (rnid's spec reader makes it a list and "
				"fails)",
				key);
			return n;
		}
		int pc = parse_check(sv, &c, st, key);
		if (pc < 0)
			return n;
		if (pc > 0)
			continue;
		if (s && rnsc_config_section_get(s, key)) {
			st->invalid = 1;
			continue;
		}
		if (!c.has_default) {
			st->invalid = 1;
			continue;
		}
		if (skipped(top, key))
			continue;
		n++;
		rnsc_mp_write_cstr(o, key);
		emit_checked(o, NULL, key, &c, st);
	}
	size_t ns = s ? rnsc_config_section_count(s) : 0;
	for (size_t i = 0; i < ns; i++) {
		const rnsc_config_section *sub = rnsc_config_section_at(s, i);
		const char *key = rnsc_config_section_name(sub);
		if (is_option(spec, key))
			st->invalid = 1;
		if (skipped(top, key))
			continue;
		n++;
		rnsc_mp_write_cstr(o, key);
		emit_section(o, sub, spec ? rnsc_config_section_get(spec, key) : NULL, 0, 1, st);
	}
	size_t nss = spec ? rnsc_config_section_count(spec) : 0;
	for (size_t i = 0; i < nss; i++) { /* spec sections the file lacks: created empty */
		const rnsc_config_section *sub = rnsc_config_section_at(spec, i);
		const char *key = rnsc_config_section_name(sub);
		if (strcmp(key, "__many__") == 0 || strcmp(key, "___many___") == 0) {
			snprintf(
				st->why, sizeof(st->why),
				"__many__ sections in a metadata spec are not supported by rnsc id");
			return n;
		}
		if (s && rnsc_config_has(s, key))
			continue;
		if (skipped(top, key))
			continue;
		n++;
		rnsc_mp_write_cstr(o, key);
		emit_section(o, NULL, sub, 0, 1, st);
	}
	return n;
}

static void emit_section(rnsc_mp_writer *w, const rnsc_config_section *s,
			 const rnsc_config_section *spec, int top, int as_map, meta_state *st)
{
	if (as_map)
		rnsc_mp_write_map(w, section_entries(NULL, s, spec, top, st));
	section_entries(w, s, spec, top, st);
}

/* The shared part of id_meta_load and id_meta_parse: cfg and spec (may be NULL) parsed. */
static int meta_build(const rnsc_config *cfg, const rnsc_config *spec, uint8_t **kv, size_t *kv_len,
		      size_t *n_pairs, char *why, size_t why_cap)
{
	meta_state st = {0};
	const rnsc_config_section *root = rnsc_config_root(cfg);
	const rnsc_config_section *sroot = spec ? rnsc_config_root(spec) : NULL;
	size_t n = section_entries(NULL, root, sroot, 1, &st);
	if (st.why[0]) {
		snprintf(why, why_cap, "%s", st.why);
		return -1;
	}
	if (st.invalid) {
		snprintf(why, why_cap, "Metadata did not pass spec validation");
		return -1;
	}
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, NULL, 0);
	section_entries(&w, root, sroot, 1, &st);
	int len = rnsc_mp_writer_finish(&w);
	uint8_t *buf = len > 0 ? malloc((size_t)len) : NULL;
	if (len < 0 || (len > 0 && !buf)) {
		snprintf(why, why_cap, "%s", rnsc_strerror(len < 0 ? len : RNSC_ERR_NOMEM));
		return -1;
	}
	rnsc_mp_writer_init(&w, buf, (size_t)len);
	section_entries(&w, root, sroot, 1, &st);
	if (rnsc_mp_writer_finish(&w) != len) {
		free(buf);
		snprintf(why, why_cap, "metadata encoding failed");
		return -1;
	}
	*kv = buf;
	*kv_len = (size_t)len;
	*n_pairs = n;
	return 0;
}

int id_meta_load(const char *path, const char *spec_path, uint8_t **kv, size_t *kv_len,
		 size_t *n_pairs, char *why, size_t why_cap)
{
	rnsc_config *cfg = NULL, *spec = NULL;
	rnsc_config_error err;
	int ret = -1;
	*kv = NULL;
	if (rnsc_config_load(NULL, path, &cfg, &err)) {
		snprintf(why, why_cap, "%s", err.msg);
		return -1;
	}
	if (spec_path && rnsc_config_load(NULL, spec_path, &spec, &err))
		snprintf(why, why_cap, "%s", err.msg);
	else
		ret = meta_build(cfg, spec, kv, kv_len, n_pairs, why, why_cap);
	rnsc_config_del(spec);
	rnsc_config_del(cfg);
	return ret;
}

int id_meta_parse(const char *text, size_t len, const char *spec, size_t spec_len, uint8_t **kv,
		  size_t *kv_len, size_t *n_pairs, char *why, size_t why_cap)
{
	rnsc_config *cfg = NULL, *sp = NULL;
	rnsc_config_error err;
	int ret = -1;
	*kv = NULL;
	if (rnsc_config_parse(NULL, text, len, "metadata", &cfg, &err)) {
		snprintf(why, why_cap, "%s", err.msg);
		return -1;
	}
	if (spec && rnsc_config_parse(NULL, spec, spec_len, "spec", &sp, &err))
		snprintf(why, why_cap, "%s", err.msg);
	else
		ret = meta_build(cfg, sp, kv, kv_len, n_pairs, why, why_cap);
	rnsc_config_del(sp);
	rnsc_config_del(cfg);
	return ret;
}
