/* SPDX-License-Identifier: MIT */
/* Recursive-descent reader for the small, trusted JSON files under shared/vectors/randomx. */
#include "rx_json.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
	const char *p, *end;
	const char *path;
	int depth;
} parser;

static void skip_ws(parser *ps)
{
	while (ps->p < ps->end && isspace((unsigned char)*ps->p))
		ps->p++;
}

static rx_json *parse_value(parser *ps);

static int fail(parser *ps, const char *what)
{
	fprintf(stderr, "%s: JSON error at byte %ld: %s\n", ps->path, (long)(ps->end - ps->p),
		what);
	return -1;
}

static char *parse_string_raw(parser *ps)
{
	if (ps->p >= ps->end || *ps->p != '"')
		return fail(ps, "expected string"), NULL;
	ps->p++;
	size_t cap = 32, len = 0;
	char *s = malloc(cap);
	if (!s)
		return NULL;
	while (ps->p < ps->end && *ps->p != '"') {
		char c = *ps->p++;
		if (c == '\\') {
			if (ps->p >= ps->end)
				break;
			char e = *ps->p++;
			switch (e) {
			case 'n':
				c = '\n';
				break;
			case 't':
				c = '\t';
				break;
			case 'r':
				c = '\r';
				break;
			case 'b':
				c = '\b';
				break;
			case 'f':
				c = '\f';
				break;
			case 'u': {
				if (ps->end - ps->p < 4) {
					free(s);
					return fail(ps, "short \\u escape"), NULL;
				}
				char hex[5] = {ps->p[0], ps->p[1], ps->p[2], ps->p[3], 0};
				ps->p += 4;
				c = (char)strtoul(hex, NULL, 16); /* the files only escape ASCII */
				break;
			}
			default:
				c = e;
				break;
			}
		}
		if (len + 2 > cap) {
			char *t = realloc(s, cap *= 2);
			if (!t) {
				free(s);
				return NULL;
			}
			s = t;
		}
		s[len++] = c;
	}
	if (ps->p >= ps->end) {
		free(s);
		return fail(ps, "unterminated string"), NULL;
	}
	ps->p++;
	s[len] = 0;
	return s;
}

static rx_json *new_value(rx_json_type t)
{
	rx_json *v = calloc(1, sizeof(*v));
	if (v)
		v->type = t;
	return v;
}

static int push(rx_json *v, char *key, rx_json *item)
{
	rx_json **ni = realloc(v->items, (v->n + 1) * sizeof(*ni));
	if (!ni)
		return -1;
	v->items = ni;
	if (v->type == RXJ_OBJ) {
		char **nk = realloc(v->keys, (v->n + 1) * sizeof(*nk));
		if (!nk)
			return -1;
		v->keys = nk;
		v->keys[v->n] = key;
	}
	v->items[v->n++] = item;
	return 0;
}

static rx_json *parse_container(parser *ps, int obj)
{
	rx_json *v = new_value(obj ? RXJ_OBJ : RXJ_ARR);
	if (!v)
		return NULL;
	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == (obj ? '}' : ']')) {
		ps->p++;
		return v;
	}
	for (;;) {
		char *key = NULL;
		skip_ws(ps);
		if (obj) {
			key = parse_string_raw(ps);
			skip_ws(ps);
			if (!key || ps->p >= ps->end || *ps->p != ':') {
				free(key);
				fail(ps, "expected key and ':'");
				rx_json_free(v);
				return NULL;
			}
			ps->p++;
		}
		rx_json *item = parse_value(ps);
		if (!item || push(v, key, item) < 0) {
			free(key);
			rx_json_free(item);
			rx_json_free(v);
			return NULL;
		}
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == (obj ? '}' : ']')) {
			ps->p++;
			return v;
		}
		fail(ps, "expected ',' or closing bracket");
		rx_json_free(v);
		return NULL;
	}
}

static rx_json *parse_value(parser *ps)
{
	skip_ws(ps);
	if (ps->p >= ps->end)
		return fail(ps, "unexpected end"), NULL;
	if (++ps->depth > 64)
		return fail(ps, "nesting too deep"), NULL;
	rx_json *v = NULL;
	char c = *ps->p;
	if (c == '{' || c == '[') {
		v = parse_container(ps, c == '{');
	} else if (c == '"') {
		char *s = parse_string_raw(ps);
		if (s && (v = new_value(RXJ_STR)))
			v->text = s;
		else
			free(s);
	} else if (!strncmp(ps->p, "true", 4) || !strncmp(ps->p, "false", 5)) {
		v = new_value(RXJ_BOOL);
		if (v)
			v->boolean = c == 't';
		ps->p += c == 't' ? 4 : 5;
	} else if (!strncmp(ps->p, "null", 4)) {
		v = new_value(RXJ_NULL);
		ps->p += 4;
	} else if (c == '-' || isdigit((unsigned char)c)) {
		const char *st = ps->p;
		while (ps->p < ps->end &&
		       (isdigit((unsigned char)*ps->p) || strchr("+-.eE", *ps->p)))
			ps->p++;
		v = new_value(RXJ_NUM);
		if (v && !(v->text = strndup(st, (size_t)(ps->p - st)))) {
			free(v);
			v = NULL;
		}
	} else {
		fail(ps, "unexpected character");
	}
	ps->depth--;
	return v;
}

rx_json *rx_json_load(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return NULL;
	}
	char *buf = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (len + 4096 > cap) {
			char *t = realloc(buf, cap = cap ? cap * 2 : 65536);
			if (!t) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = t;
		}
		size_t r = fread(buf + len, 1, cap - len, f);
		len += r;
		if (r == 0)
			break;
	}
	fclose(f);
	parser ps = {buf, buf + len, path, 0};
	rx_json *v = parse_value(&ps);
	skip_ws(&ps);
	if (v && ps.p != ps.end) {
		fail(&ps, "trailing data");
		rx_json_free(v);
		v = NULL;
	}
	free(buf);
	return v;
}

void rx_json_free(rx_json *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		rx_json_free(v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->text);
	free(v);
}

const rx_json *rx_json_get(const rx_json *o, const char *key)
{
	if (!o || o->type != RXJ_OBJ)
		return NULL;
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return o->items[i];
	return NULL;
}

const rx_json *rx_json_at(const rx_json *a, size_t i)
{
	if (!a || a->type != RXJ_ARR || i >= a->n)
		return NULL;
	return a->items[i];
}

const char *rx_json_str(const rx_json *v)
{
	return v && v->type == RXJ_STR ? v->text : NULL;
}

uint64_t rx_json_u64(const rx_json *v)
{
	/* Numbers too large for a double are written as strings in some files. */
	return v && (v->type == RXJ_NUM || v->type == RXJ_STR) ? strtoull(v->text, NULL, 10) : 0;
}

int rx_json_hex(const rx_json *v, uint8_t *out, size_t max)
{
	const char *s = rx_json_str(v);
	if (!s)
		return -1;
	size_t n = strlen(s);
	if (n % 2 || n / 2 > max)
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		char b[3] = {s[2 * i], s[2 * i + 1], 0};
		if (!isxdigit((unsigned char)b[0]) || !isxdigit((unsigned char)b[1]))
			return -1;
		out[i] = (uint8_t)strtoul(b, NULL, 16);
	}
	return (int)(n / 2);
}

uint64_t rx_json_hex_u64(const rx_json *v)
{
	const char *s = rx_json_str(v);
	return s ? strtoull(s, NULL, 16) : 0;
}
