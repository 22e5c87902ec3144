/* SPDX-License-Identifier: MIT */
/*
 * Reading the tree: sections and options by name and position, and the typed getters,
 * which interpolate on first use (cfg_interp.c) and convert with cfg_convert.c.
 */
#include <stdio.h>
#include <string.h>

#include "cfgfile_internal.h"

/* ---- tree access ----------------------------------------------------------------------- */

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

const rnsc_config_section *rnsc_config_root(const rnsc_config *cfg)
{
	return cfg ? &cfg->root : NULL;
}

const rnsc_config_section *rnsc_config_section_get(const rnsc_config_section *parent,
						   const char *name)
{
	if (!parent || !name)
		return NULL;
	const cfg_name_ent *e = rnsc_cfg_tab_find(parent->cfg, parent, name);
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
	return s && key && rnsc_cfg_tab_find(s->cfg, s, key) != NULL;
}

static cfg_opt *opt_lookup(const rnsc_config_section *s, const char *key)
{
	const cfg_name_ent *e = rnsc_cfg_tab_find(s->cfg, s, key);
	return e && e->idx >= 0 ? &((rnsc_config_section *)s)->opts[e->idx] : NULL;
}

int rnsc_config_option_used(const rnsc_config_section *s, const char *key)
{
	const cfg_opt *o = s && key ? opt_lookup(s, key) : NULL;
	return o ? o->used : 0;
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

/* ---- getters -------------------------------------------------------------------------- */

static int get_opt(const rnsc_config_section *s, const char *key, cfg_opt **out,
		   rnsc_config_error *err)
{
	rnsc_cfg_clear_err(err);
	if (!s || !key)
		return rnsc_cfg_set_err(err, RNSC_ERR_INVAL, 0, "invalid argument");
	const cfg_name_ent *e = rnsc_cfg_tab_find(s->cfg, s, key);
	if (!e)
		return rnsc_cfg_opt_err(err, RNSC_ERR_NOTFOUND, s, key, 0, "option is missing");
	if (e->idx < 0)
		return rnsc_cfg_opt_err(err, RNSC_ERR_CONFIG_VALUE, s, key,
					s->subs[-(e->idx + 1)]->line,
					"is a section, not an option");
	cfg_opt *o = &((rnsc_config_section *)s)->opts[e->idx];
	o->used = 1;
	int rc = rnsc_cfg_opt_interp(s, o, err);
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
			rnsc_cfg_show_value((*o)->ip_items[0], first, sizeof(first));
		return rnsc_cfg_opt_err(err, RNSC_ERR_CONFIG_VALUE, s, key, (*o)->line,
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
		return rnsc_cfg_set_err(err, RNSC_ERR_INVAL, 0, "invalid argument");
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
		return rnsc_cfg_set_err(err, RNSC_ERR_INVAL, 0, "invalid argument");
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

int rnsc_config_get_bool(const rnsc_config_section *s, const char *key, int *out,
			 rnsc_config_error *err)
{
	cfg_opt *o;
	if (!out)
		return rnsc_cfg_set_err(err, RNSC_ERR_INVAL, 0, "invalid argument");
	int rc = get_single(s, key, &o, err);
	if (rc)
		return rc;
	int v;
	if (rnsc_config_parse_bool(o->ip_str, &v) != 0) {
		char shown[96];
		rnsc_cfg_show_value(o->ip_str, shown, sizeof(shown));
		return rnsc_cfg_opt_err(
			err, RNSC_ERR_CONFIG_VALUE, s, key, o->line,
			"%s is not a boolean (use yes/no, true/false, on/off or 1/0)", shown);
	}
	*out = v;
	return 0;
}

/* The error for a value that rnsc_config_parse_int/_float refused; `kind` names
 * what was expected ("an integer", "a number"). */
static int number_err(const rnsc_config_section *s, const char *key, const cfg_opt *o, int rc,
		      const char *kind, rnsc_config_error *err)
{
	char shown[96];
	rnsc_cfg_show_value(o->ip_str, shown, sizeof(shown));
	if (rc == RNSC_ERR_RANGE)
		return rnsc_cfg_opt_err(err, rc, s, key, o->line, "%s is out of range", shown);
	if (rc == RNSC_ERR_CONFIG_VALUE)
		return rnsc_cfg_opt_err(err, rc, s, key, o->line, "%s is not %s", shown, kind);
	return rnsc_cfg_opt_err(err, rc, s, key, o->line, "%s", rnsc_strerror(rc));
}

int rnsc_config_get_int(const rnsc_config_section *s, const char *key, int64_t *out,
			rnsc_config_error *err)
{
	cfg_opt *o;
	if (!out)
		return rnsc_cfg_set_err(err, RNSC_ERR_INVAL, 0, "invalid argument");
	int rc = get_single(s, key, &o, err);
	if (rc)
		return rc;
	rc = rnsc_config_parse_int(o->ip_str, out);
	return rc ? number_err(s, key, o, rc, "an integer", err) : 0;
}

int rnsc_config_get_float(const rnsc_config_section *s, const char *key, double *out,
			  rnsc_config_error *err)
{
	cfg_opt *o;
	if (!out)
		return rnsc_cfg_set_err(err, RNSC_ERR_INVAL, 0, "invalid argument");
	int rc = get_single(s, key, &o, err);
	if (rc)
		return rc;
	rc = rnsc_config_parse_float(o->ip_str, out);
	return rc ? number_err(s, key, o, rc, "a number", err) : 0;
}
