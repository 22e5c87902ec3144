/* SPDX-License-Identifier: MIT */
/*
 * Private to the config reader: the tree's types and the helpers that cfgfile.c and
 * the cfg_*.c files beside it share. Not installed, not exported (no RNSC_API under
 * -fvisibility=hidden); everything else uses cfgfile.h.
 *
 *   cfgfile.c       memory, error messages, the name table, rnsc_config_del/_load
 *   cfg_scan.c      UTF-8, Python's whitespace, the per-line matchers (ConfigObj's regexes)
 *   cfg_parse.c     lines into the tree: rnsc_config_parse
 *   cfg_access.c    walking the tree and the typed getters
 *   cfg_interp.c    "%(name)s" interpolation, cached in each option
 *   cfg_convert.c   Python's bool/int/float rules: rnsc_config_parse_bool/_int/_float
 *   cfg_settings.c  [logging], [reticulum] and [interfaces] as Reticulum.py reads them
 *   cfg_locate.c    the configuration folder, the default file, rnsc_config_open
 *   cfg_keys.c      the reference's option table and the start-up audit against it
 *
 * Ownership: an rnsc_config owns every section, option, string, name-table entry and
 * interpolation result reachable from it; all of it comes from cfg->ctx
 * (rnsc_cfg_alloc) and is freed by rnsc_config_del(). A cfg_scan owns its work arrays
 * (rnsc_cfg_scan_free). Threading as in cfgfile.h: one thread at a time per config,
 * getters included (they fill the interpolation cache).
 */
#ifndef RNSC_CFGFILE_INTERNAL_H
#define RNSC_CFGFILE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "cfgfile.h"

/* ---- data ------------------------------------------------------------------------------ */

typedef struct cfg_opt {
	char *key;
	unsigned line;
	int is_list;
	char *str;    /* raw single value */
	char **items; /* raw list items */
	size_t n_items;
	int ip_done;  /* 0: not yet, 1: ok, < 0: that error */
	char *ip_str; /* interpolated value (aliases str when nothing changed) */
	char **ip_items;
	char *ip_msg; /* message for a failed interpolation */
	int used;     /* a typed getter asked for it (rnsc_config_option_used) */
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
typedef struct cfg_name_ent {
	const rnsc_config_section *sec;
	const char *name;
	uint32_t hash;
	int32_t idx;
} cfg_name_ent;

struct rnsc_config {
	rnsc_ctx *ctx;
	rnsc_config_section root;
	cfg_name_ent *tab;
	size_t tab_cap, tab_len;
	void **extras; /* memory handed out by rnsc_config_read_settings */
	size_t n_extras, cap_extras;
};

/* ---- memory and errors (cfgfile.c) ------------------------------------------------------ */

/* From cfg->ctx (NULL ctx: malloc). */
void *rnsc_cfg_alloc(rnsc_config *cfg, size_t n);
void rnsc_cfg_free(rnsc_config *cfg, void *p);
char *rnsc_cfg_strndup(rnsc_config *cfg, const char *s, size_t n);
/* Makes p owned by cfg until rnsc_config_del (memory rnsc_config_read_settings hands
 * out); on RNSC_ERR_NOMEM p stays the caller's. */
int rnsc_cfg_keep(rnsc_config *cfg, void *p);

/* Fill err (when not NULL) and return code. */
int rnsc_cfg_set_err(rnsc_config_error *err, int code, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void rnsc_cfg_clear_err(rnsc_config_error *err);
/* "[interfaces] [[TCP Server]] listen_port: <msg>" */
int rnsc_cfg_opt_err(rnsc_config_error *err, int code, const rnsc_config_section *s,
		     const char *key, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
/* 'value' for messages: quoted, control characters escaped, long values cut. */
void rnsc_cfg_show_value(const char *v, char *buf, size_t cap);

/* ---- the name table and the tree (cfgfile.c) -------------------------------------------- */

cfg_name_ent *rnsc_cfg_tab_find(const rnsc_config *cfg, const rnsc_config_section *sec,
				const char *name);
/* name is not copied: it must be the option's key or the section's name. */
int rnsc_cfg_tab_add(rnsc_config *cfg, const rnsc_config_section *sec, const char *name,
		     int32_t idx);
/* Frees everything the option owns (raw and interpolated values, key, message). */
void rnsc_cfg_opt_clear(rnsc_config *cfg, cfg_opt *o);

/* ---- lexing (cfg_scan.c) ---------------------------------------------------------------- */

/* One code point of UTF-8 that rnsc_cfg_utf8_valid_len accepted. */
uint32_t rnsc_cfg_utf8_next(const unsigned char **pp);
/* Length of the strict UTF-8 sequence at p, or 0. */
size_t rnsc_cfg_utf8_valid_len(const unsigned char *p, size_t avail);
/* Writes c as UTF-8 (1 to 4 bytes) and returns the count. */
size_t rnsc_cfg_utf8_put(uint32_t c, char *o);
/* Python's str.isspace(). */
int rnsc_cfg_py_isspace(uint32_t c);

/* Work arrays for one line, reused across lines (indices fit 32 bits: cfg_parse.c's
 * MAX_LINE). */
typedef struct cfg_scan {
	rnsc_ctx *ctx;
	uint32_t *cp; /* code points of the line */
	size_t cap;
	unsigned char *T; /* T[i]: s[i..] matches \s*(#.*)?$ */
	unsigned char *G; /* section close: s[i..] matches (\s*\])+\s*(#.*)?$ */
	unsigned char *R; /* value regex feasible from i (see rnsc_cfg_match_value) */
	unsigned char *good;
	unsigned char *anyg[2];
	uint32_t *nextG, *wsend, *wsstart, *ncomma, *nch, *nT, *nokc[2], *nqt[2], *cntR;
} cfg_scan;

void rnsc_cfg_scan_free(cfg_scan *sc);
/* Room for a line of n code points; RNSC_ERR_NOMEM leaves sc empty. */
int rnsc_cfg_scan_reserve(cfg_scan *sc, size_t n);
/* Decodes validated UTF-8 into sc->cp; returns the code point count. */
size_t rnsc_cfg_scan_decode(cfg_scan *sc, const char *p, size_t len);
/* Fills sc->T, sc->wsend and sc->wsstart for s[0..n). */
void rnsc_cfg_scan_basic(cfg_scan *sc, const uint32_t *s, size_t n);
size_t rnsc_cfg_skip_ws(const uint32_t *s, size_t n, size_t i);

/* ConfigObj's _sectionmarker, _keyword and _valueexp, and _listvalueexp.findall; each
 * returns 1 on a match, 0 otherwise (findall: 0 or the callback's first nonzero). */
int rnsc_cfg_match_section(cfg_scan *sc, const uint32_t *s, size_t n, unsigned *open,
			   unsigned *close, size_t *ns, size_t *ne);
int rnsc_cfg_match_keyword(cfg_scan *sc, const uint32_t *s, size_t n, size_t *ks, size_t *ke,
			   size_t *vs);

enum { SINGLE_NONE, SINGLE_EMPTY, SINGLE_RANGE };

typedef struct cfg_value_match {
	int empty_list;  /* the (,) alternative */
	size_t list_end; /* group 1 is s[0..list_end) */
	int single;      /* SINGLE_* */
	size_t ss, se;   /* SINGLE_RANGE: s[ss..se) */
} cfg_value_match;

int rnsc_cfg_match_value(cfg_scan *sc, const uint32_t *s, size_t m, cfg_value_match *vm);

/* Called for each list item s[a..b), in order. */
typedef int (*cfg_item_fn)(void *ud, const uint32_t *s, size_t a, size_t b);

int rnsc_cfg_findall_items(cfg_scan *sc, const uint32_t *s, size_t m, cfg_item_fn fn, void *ud);

/* ---- interpolation (cfg_interp.c) and conversions (cfg_convert.c) ----------------------- */

/* Fills the option's interpolation cache once (a failure is cached too, except
 * RNSC_ERR_NOMEM) and returns its outcome with the message in err. */
int rnsc_cfg_opt_interp(const rnsc_config_section *s, cfg_opt *o, rnsc_config_error *err);

/* Py_ISSPACE: ASCII whitespace. */
int rnsc_cfg_py_isspace_ascii(char c);

#endif
