/* SPDX-License-Identifier: MIT */
/*
 * ConfigParser-style "%(name)s" as ConfigObj's InterpolationEngine does it: names are
 * looked up (raw) from the value's own section upwards, each level's DEFAULT
 * subsection right after the level itself; replacements are interpolated
 * recursively, with a (name, section name) trail catching loops. Limits keep hostile
 * files bounded (cfgfile.h lists them).
 */
#include <stdio.h>
#include <string.h>

#include "cfgfile_internal.h"

#define INTERP_MAX_LEN ((size_t)64 * 1024)
#define INTERP_MAX_DEPTH 200
#define INTERP_MAX_STEPS 100000UL

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
		const cfg_name_ent *e = rnsc_cfg_tab_find(ic->cfg, cur, name);
		const cfg_opt *o = e && e->idx >= 0 ? &cur->opts[e->idx] : NULL;
		if (!o) {
			const cfg_name_ent *d = rnsc_cfg_tab_find(ic->cfg, cur, "DEFAULT");
			if (d && d->idx >= 0) {
				/* A DEFAULT that is an option has no .get(): the reference crashes. */
				snprintf(
					ic->msg, sizeof(ic->msg),
					"DEFAULT is an option, not a section, so %%(%s)s cannot be looked up",
					name);
				return RNSC_ERR_CONFIG_INTERP;
			}
			if (d) {
				const rnsc_config_section *ds = cur->subs[-(d->idx + 1)];
				const cfg_name_ent *e2 = rnsc_cfg_tab_find(ic->cfg, ds, name);
				if (e2 && e2->idx >= 0)
					o = &ds->opts[e2->idx];
			}
		}
		if (o) {
			if (o->is_list) {
				rnsc_cfg_show_value(name, shown, sizeof(shown));
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
	rnsc_cfg_show_value(name, shown, sizeof(shown));
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
		if (strcmp(ic->trail[i].key, key) == 0 &&
		    same_name(ic->trail[i].sname, sec->name)) {
			char shown[96];
			rnsc_cfg_show_value(key, shown, sizeof(shown));
			snprintf(ic->msg, sizeof(ic->msg),
				 "interpolation loop detected in value %s", shown);
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
	char *buf = rnsc_cfg_strndup(cfg, value, len);
	int rc = buf ? 0 : RNSC_ERR_NOMEM;
	size_t pos = 0, a, b, na, nb;
	while (rc == 0 && ip_search(buf, len, pos, &a, &b, &na, &nb)) {
		if (++ic->steps > INTERP_MAX_STEPS) {
			snprintf(ic->msg, sizeof(ic->msg), "more than %lu interpolations",
				 INTERP_MAX_STEPS);
			rc = RNSC_ERR_CONFIG_INTERP;
			break;
		}
		char *name = rnsc_cfg_strndup(cfg, buf + na, nb - na);
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
		rnsc_cfg_free(cfg, name);
		if (rc)
			break;
		size_t rl = strlen(repl), nlen = len - (b - a) + rl;
		if (nlen > INTERP_MAX_LEN) {
			rnsc_cfg_free(cfg, repl);
			snprintf(ic->msg, sizeof(ic->msg),
				 "interpolated value longer than %zu bytes", INTERP_MAX_LEN);
			rc = RNSC_ERR_CONFIG_INTERP;
			break;
		}
		char *nbuf = rnsc_cfg_alloc(cfg, nlen + 1);
		if (!nbuf) {
			rnsc_cfg_free(cfg, repl);
			rc = RNSC_ERR_NOMEM;
			break;
		}
		memcpy(nbuf, buf, a);
		memcpy(nbuf + a, repl, rl);
		memcpy(nbuf + a + rl, buf + b, len - b + 1);
		rnsc_cfg_free(cfg, repl);
		rnsc_cfg_free(cfg, buf);
		buf = nbuf;
		len = nlen;
		pos = a + rl; /* the replacement is final: search on after it */
	}
	ic->depth--;
	if (rc) {
		rnsc_cfg_free(cfg, buf);
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
int rnsc_cfg_opt_interp(const rnsc_config_section *s, cfg_opt *o, rnsc_config_error *err)
{
	rnsc_config *cfg = s->cfg;
	if (o->ip_done == 1)
		return 0;
	if (o->ip_done < 0)
		return rnsc_cfg_opt_err(err, o->ip_done, s, o->key, o->line, "%s",
					o->ip_msg ? o->ip_msg : "");
	char msg[200] = "";
	int rc = 0;
	if (!o->is_list) {
		rc = ip_string(s, o->key, o->str, &o->ip_str, msg, sizeof(msg));
	} else {
		char **it = rnsc_cfg_alloc(cfg, (o->n_items ? o->n_items : 1) * sizeof(*it));
		if (!it)
			return rnsc_cfg_opt_err(err, RNSC_ERR_NOMEM, s, o->key, o->line,
						"out of memory");
		size_t i;
		for (i = 0; i < o->n_items; i++) {
			rc = ip_string(s, o->key, o->items[i], &it[i], msg, sizeof(msg));
			if (rc)
				break;
		}
		if (rc) {
			while (i-- > 0)
				if (it[i] != o->items[i])
					rnsc_cfg_free(cfg, it[i]);
			rnsc_cfg_free(cfg, it);
		} else {
			o->ip_items = it;
		}
	}
	if (rc == RNSC_ERR_NOMEM)
		return rnsc_cfg_opt_err(err, rc, s, o->key, o->line,
					"out of memory"); /* retried next time */
	if (rc) {
		o->ip_done = rc;
		o->ip_msg = rnsc_cfg_strndup(cfg, msg, strlen(msg));
		return rnsc_cfg_opt_err(err, rc, s, o->key, o->line, "%s", msg);
	}
	o->ip_done = 1;
	return 0;
}
