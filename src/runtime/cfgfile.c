/* SPDX-License-Identifier: MIT */
/*
 * The config object itself: its memory, its error messages, the name table every
 * lookup goes through, and its lifetime (rnsc_config_del, rnsc_config_load). The
 * grammar, the getters and the settings live in the cfg_*.c files (see
 * cfgfile_internal.h), so that each can be read on its own.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cfgfile_internal.h"
#include "store.h"

/* ---- memory ---------------------------------------------------------------------------- */

void *rnsc_cfg_alloc(rnsc_config *cfg, size_t n)
{
	return rnsc_alloc(cfg->ctx, n);
}

void rnsc_cfg_free(rnsc_config *cfg, void *p)
{
	rnsc_free(cfg->ctx, p);
}

char *rnsc_cfg_strndup(rnsc_config *cfg, const char *s, size_t n)
{
	char *d = rnsc_cfg_alloc(cfg, n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

int rnsc_cfg_keep(rnsc_config *cfg, void *p)
{
	if (cfg->n_extras == cfg->cap_extras) {
		size_t ncap = cfg->cap_extras ? cfg->cap_extras * 2 : 8;
		void **n = rnsc_cfg_alloc(cfg, ncap * sizeof(*n));
		if (!n)
			return RNSC_ERR_NOMEM;
		if (cfg->n_extras)
			memcpy(n, cfg->extras, cfg->n_extras * sizeof(*n));
		rnsc_cfg_free(cfg, cfg->extras);
		cfg->extras = n;
		cfg->cap_extras = ncap;
	}
	cfg->extras[cfg->n_extras++] = p;
	return 0;
}

/* ---- errors ---------------------------------------------------------------------------- */

int rnsc_cfg_set_err(rnsc_config_error *err, int code, unsigned line, const char *fmt, ...)
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

void rnsc_cfg_clear_err(rnsc_config_error *err)
{
	if (err) {
		err->code = 0;
		err->line = 0;
		err->msg[0] = '\0';
	}
}

/* 'value' for messages: quoted, control characters escaped, long values cut. */
void rnsc_cfg_show_value(const char *v, char *buf, size_t cap)
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

/* "[interfaces] [[TCP Server]] listen_port: <msg>" */
int rnsc_cfg_opt_err(rnsc_config_error *err, int code, const rnsc_config_section *s,
		     const char *key, unsigned line, const char *fmt, ...)
{
	if (!err)
		return code;
	char path[192], tail[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(tail, sizeof(tail), fmt, ap);
	va_end(ap);
	rnsc_config_section_path(s, path, sizeof(path));
	return rnsc_cfg_set_err(err, code, line, "%s%s%s: %s", path, path[0] ? " " : "", key, tail);
}

/* ---- the tree -------------------------------------------------------------------------- */

static uint32_t name_hash(const rnsc_config_section *sec, const char *name)
{
	uint64_t h = UINT64_C(1469598103934665603) ^ (uint64_t)(uintptr_t)sec;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * UINT64_C(1099511628211);
	return (uint32_t)(h ^ (h >> 32));
}

cfg_name_ent *rnsc_cfg_tab_find(const rnsc_config *cfg, const rnsc_config_section *sec,
				const char *name)
{
	if (!cfg->tab_cap)
		return NULL;
	uint32_t h = name_hash(sec, name);
	for (size_t i = h & (cfg->tab_cap - 1);; i = (i + 1) & (cfg->tab_cap - 1)) {
		cfg_name_ent *e = &cfg->tab[i];
		if (!e->name)
			return NULL;
		if (e->hash == h && e->sec == sec && strcmp(e->name, name) == 0)
			return e;
	}
}

int rnsc_cfg_tab_add(rnsc_config *cfg, const rnsc_config_section *sec, const char *name,
		     int32_t idx)
{
	if ((cfg->tab_len + 1) * 2 > cfg->tab_cap) {
		size_t ncap = cfg->tab_cap ? cfg->tab_cap * 2 : 64;
		cfg_name_ent *nt = rnsc_calloc(cfg->ctx, ncap, sizeof(*nt));
		if (!nt)
			return RNSC_ERR_NOMEM;
		for (size_t i = 0; i < cfg->tab_cap; i++) {
			cfg_name_ent *e = &cfg->tab[i];
			if (!e->name)
				continue;
			size_t j = e->hash & (ncap - 1);
			while (nt[j].name)
				j = (j + 1) & (ncap - 1);
			nt[j] = *e;
		}
		rnsc_cfg_free(cfg, cfg->tab);
		cfg->tab = nt;
		cfg->tab_cap = ncap;
	}
	uint32_t h = name_hash(sec, name);
	size_t j = h & (cfg->tab_cap - 1);
	while (cfg->tab[j].name)
		j = (j + 1) & (cfg->tab_cap - 1);
	cfg->tab[j] = (cfg_name_ent){.sec = sec, .name = name, .hash = h, .idx = idx};
	cfg->tab_len++;
	return 0;
}

void rnsc_cfg_opt_clear(rnsc_config *cfg, cfg_opt *o)
{
	if (o->ip_str != o->str)
		rnsc_cfg_free(cfg, o->ip_str);
	if (o->ip_items) {
		for (size_t i = 0; i < o->n_items; i++)
			if (o->ip_items[i] != o->items[i])
				rnsc_cfg_free(cfg, o->ip_items[i]);
		rnsc_cfg_free(cfg, o->ip_items);
	}
	for (size_t i = 0; i < o->n_items; i++)
		rnsc_cfg_free(cfg, o->items[i]);
	rnsc_cfg_free(cfg, o->items);
	rnsc_cfg_free(cfg, o->str);
	rnsc_cfg_free(cfg, o->ip_msg);
	rnsc_cfg_free(cfg, o->key);
}

static void section_clear(rnsc_config *cfg, rnsc_config_section *s)
{
	for (size_t i = 0; i < s->n_opts; i++)
		rnsc_cfg_opt_clear(cfg, &s->opts[i]);
	rnsc_cfg_free(cfg, s->opts);
	for (size_t i = 0; i < s->n_subs; i++) {
		section_clear(cfg, s->subs[i]);
		rnsc_cfg_free(cfg, s->subs[i]);
	}
	rnsc_cfg_free(cfg, s->subs);
	rnsc_cfg_free(cfg, s->name);
}

void rnsc_config_del(rnsc_config *cfg)
{
	if (!cfg)
		return;
	section_clear(cfg, &cfg->root);
	rnsc_cfg_free(cfg, cfg->tab);
	for (size_t i = 0; i < cfg->n_extras; i++)
		rnsc_cfg_free(cfg, cfg->extras[i]);
	rnsc_cfg_free(cfg, cfg->extras);
	rnsc_free(cfg->ctx, cfg);
}

int rnsc_config_load(rnsc_ctx *ctx, const char *path, rnsc_config **out, rnsc_config_error *err)
{
	rnsc_cfg_clear_err(err);
	if (!path || !out)
		return rnsc_cfg_set_err(err, RNSC_ERR_INVAL, 0, "invalid argument");
	uint8_t *buf;
	size_t len;
	int rc = rnsc_store_read_file(ctx, path, RNSC_CONFIG_MAX_SIZE, &buf, &len);
	if (rc) {
		*out = NULL;
		if (rc == RNSC_ERR_TOOBIG)
			return rnsc_cfg_set_err(err, rc, 0, "%s: larger than %zu bytes", path,
						RNSC_CONFIG_MAX_SIZE);
		return rnsc_cfg_set_err(err, rc, 0, "%s: %s", path, rnsc_strerror(rc));
	}
	rc = rnsc_config_parse(ctx, (const char *)buf, len, path, out, err);
	rnsc_free(ctx, buf);
	return rc;
}
