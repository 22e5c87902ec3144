/* SPDX-License-Identifier: MIT */
/*
 * The reference's configuration file: reader, typed getters, the [reticulum] and
 * [logging] settings with the reference's defaults, the [interfaces] walk, the
 * search for the configuration folder and the default file.
 *
 * The reference (rns 1.5.4, Reticulum.py) parses its file with the ConfigObj it
 * vendors (RNS/vendor/configobj.py) using default options. This parser reproduces
 * ConfigObj's grammar, including its regular-expression corner cases, and was
 * checked against it differentially (tests/data/config_diff.py):
 *   - lines are split at '\n' only; trailing '\r' characters are dropped; the file
 *     must be UTF-8 (a UTF-8 BOM is skipped); whitespace is Unicode whitespace
 *     (Python's str.isspace: also U+0085, U+00A0, U+2000..U+200A, U+3000 ...).
 *   - a line whose first non-blank character is '#' is a comment; "key = value"
 *     lines and "[name]", "[[name]]", ... section markers, each optionally followed
 *     by "# comment". Indentation carries no meaning: nesting comes only from the
 *     bracket count, and a section may go at most one level deeper than the
 *     current one. Opening and closing bracket counts must match.
 *   - keys and section names may be quoted with ' or "; values may be quoted,
 *     contain '#' only inside quotes (an unquoted '#' starts a comment), and are
 *     lists when they contain an unquoted comma: "a, b" is a two-item list, "a,"
 *     a one-item list and "," the empty list. '''...''' and """...""" values may
 *     span lines and are taken verbatim.
 *   - a duplicate key, or a duplicate section name within one parent, is an
 *     error, as is a key and a section of the same name.
 *   - values are ConfigParser-interpolated when read: "%(name)s" is replaced by
 *     option `name` looked up in the value's own section, its DEFAULT
 *     subsection, then each parent (and its DEFAULT) up to the top.
 *   - booleans are yes/no, on/off, true/false, 1/0 in any ASCII case; integers and
 *     floats follow Python's int() and float(): surrounding whitespace, a sign,
 *     '_' between digits and non-ASCII decimal digits are accepted, "1.0" is not
 *     an integer, "inf" and "nan" are floats.
 * Known, deliberate differences (all on inputs the reference cannot use sensibly):
 * NUL bytes and UTF-16 files are rejected; integers beyond int64 are
 * RNSC_ERR_RANGE; interpolation stops at 64 KiB of output, 200 levels or 100000
 * substitutions (RNSC_ERR_CONFIG_INTERP); a list where a single string is
 * expected is an error rather than Python's str(list); scalar options placed
 * directly under [interfaces] are skipped.
 *
 * Ownership: an rnsc_config owns every string and section it hands out; they stay
 * valid until rnsc_config_del(). Getters cache interpolated values inside the
 * config, so a config (even through its const pointers) must be used by one thread
 * at a time. Memory comes from the rnsc_ctx given at parse time (NULL: malloc),
 * which must outlive the config.
 *
 * Errors: every function returns 0 or a negative rnsc_err. Functions taking an
 * rnsc_config_error fill it (when not NULL) with the same code, the 1-based line
 * it concerns (0 if none) and a message naming the section and option, e.g.
 *   "[interfaces] [[TCP Server]] listen_port: 'abc' is not an integer".
 */
#ifndef RNSC_CFGFILE_H
#define RNSC_CFGFILE_H

#include <stddef.h>
#include <stdint.h>

#include "ctx.h"

/* Largest configuration file rnsc_config_load() reads. */
#define RNSC_CONFIG_MAX_SIZE ((size_t)4 << 20)

typedef struct rnsc_config rnsc_config;
typedef struct rnsc_config_section rnsc_config_section;

typedef struct rnsc_config_error {
	int code;      /* same rnsc_err the function returned; 0 on success */
	unsigned line; /* 1-based line of the file, 0 when not tied to one */
	char msg[384];
} rnsc_config_error;

/* ---- parsing ------------------------------------------------------------------------- */

/*
 * Parses text[0..len) (need not be NUL-terminated). origin (a file name, may be NULL)
 * prefixes parse-error messages. On success *out is owned by the caller
 * (rnsc_config_del). Returns 0, RNSC_ERR_INVAL, RNSC_ERR_NOMEM, RNSC_ERR_MALFORMED (not
 * UTF-8, a NUL byte, a UTF-16 BOM), RNSC_ERR_CONFIG_SYNTAX (an invalid line, a bad value
 * or multi-line value, unbalanced or over-deep section brackets) or RNSC_ERR_CONFIG_DUP.
 * The reference reports the first error in the file; so does this.
 */
RNSC_API int rnsc_config_parse(rnsc_ctx *ctx, const char *text, size_t len, const char *origin,
			       rnsc_config **out, rnsc_config_error *err);

/* Reads path (at most RNSC_CONFIG_MAX_SIZE) and parses it. Returns the codes of
 * rnsc_config_parse() and of rnsc_store_read_file() (RNSC_ERR_NOENT, RNSC_ERR_PERM,
 * RNSC_ERR_TOOBIG, ...), with a message naming the file. */
RNSC_API int rnsc_config_load(rnsc_ctx *ctx, const char *path, rnsc_config **out,
			      rnsc_config_error *err);

/* NULL is a no-op. */
RNSC_API void rnsc_config_del(rnsc_config *cfg);

/* ---- the tree ------------------------------------------------------------------------ */

/* The top level (options before the first section live here). */
RNSC_API const rnsc_config_section *rnsc_config_root(const rnsc_config *cfg);
/* Direct subsection `name` of parent, or NULL. */
RNSC_API const rnsc_config_section *rnsc_config_section_get(const rnsc_config_section *parent,
							    const char *name);
/* Name (NULL for the top level), nesting depth (0 for the top level), parent (NULL for
 * the top level) and the line of the section marker (0 for the top level). */
RNSC_API const char *rnsc_config_section_name(const rnsc_config_section *s);
RNSC_API unsigned rnsc_config_section_depth(const rnsc_config_section *s);
RNSC_API const rnsc_config_section *rnsc_config_section_parent(const rnsc_config_section *s);
RNSC_API unsigned rnsc_config_section_line(const rnsc_config_section *s);
/* Subsections and options, each in file order (the reference iterates a section's
 * options first, then its subsections). */
RNSC_API size_t rnsc_config_section_count(const rnsc_config_section *s);
RNSC_API const rnsc_config_section *rnsc_config_section_at(const rnsc_config_section *s, size_t i);
RNSC_API size_t rnsc_config_option_count(const rnsc_config_section *s);
RNSC_API const char *rnsc_config_option_name(const rnsc_config_section *s, size_t i);
/* Line of option `key`, 0 when absent. */
RNSC_API unsigned rnsc_config_option_line(const rnsc_config_section *s, const char *key);
/* 1 when a typed getter has asked for option `key` of s (whatever it returned), 0 when
 * not or when there is no such option: what the start-up audit calls "read". */
RNSC_API int rnsc_config_option_used(const rnsc_config_section *s, const char *key);
/* 1 when `key` is an option or a subsection of s (the reference's `key in section`). */
RNSC_API int rnsc_config_has(const rnsc_config_section *s, const char *key);
/* "[interfaces] [[TCP Server]]" (empty for the top level) into buf; returns the
 * length it needed, like snprintf. */
RNSC_API size_t rnsc_config_section_path(const rnsc_config_section *s, char *buf, size_t cap);

/* ---- typed getters ------------------------------------------------------------------- */
/*
 * All getters: RNSC_ERR_INVAL (NULL arguments), RNSC_ERR_NOTFOUND (no such option),
 * RNSC_ERR_CONFIG_VALUE (the name is a subsection; a list where one value is needed;
 * not a boolean / integer / number), RNSC_ERR_RANGE (an integer beyond int64),
 * RNSC_ERR_CONFIG_INTERP (a "%(name)s" naming a missing option or a list, a loop, or
 * over the limits) or RNSC_ERR_NOMEM. Outputs are untouched on failure. Returned
 * strings are interpolated and owned by the config.
 */
RNSC_API int rnsc_config_get_str(const rnsc_config_section *s, const char *key, const char **out,
				 rnsc_config_error *err);
/* The reference's as_list(): a single value is a one-item list. */
RNSC_API int rnsc_config_get_list(const rnsc_config_section *s, const char *key,
				  const char *const **items, size_t *n, rnsc_config_error *err);
/* 1 when the option holds a list (even of one item), 0 for a single value. */
RNSC_API int rnsc_config_is_list(const rnsc_config_section *s, const char *key);
RNSC_API int rnsc_config_get_bool(const rnsc_config_section *s, const char *key, int *out,
				  rnsc_config_error *err);
RNSC_API int rnsc_config_get_int(const rnsc_config_section *s, const char *key, int64_t *out,
				 rnsc_config_error *err);
RNSC_API int rnsc_config_get_float(const rnsc_config_section *s, const char *key, double *out,
				   rnsc_config_error *err);

/* The conversions alone, on one UTF-8 string. Return 0, RNSC_ERR_INVAL (NULL),
 * RNSC_ERR_CONFIG_VALUE or (int) RNSC_ERR_RANGE. */
RNSC_API int rnsc_config_parse_bool(const char *s, int *out);
RNSC_API int rnsc_config_parse_int(const char *s, int64_t *out);
RNSC_API int rnsc_config_parse_float(const char *s, double *out);

/* ---- [reticulum] and [logging] --------------------------------------------------------- */

/* Interface modes with the reference's numeric values (Interface.MODE_*). */
enum rnsc_iface_mode {
	RNSC_IFMODE_UNSET = 0,
	RNSC_IFMODE_FULL = 1,
	RNSC_IFMODE_POINT_TO_POINT = 2,
	RNSC_IFMODE_ACCESS_POINT = 3,
	RNSC_IFMODE_ROAMING = 4,
	RNSC_IFMODE_BOUNDARY = 5,
	RNSC_IFMODE_GATEWAY = 6,
	RNSC_IFMODE_INTERNAL = 7,
};

/* Maps the reference's mode names (full, access_point/accesspoint/ap,
 * pointtopoint/ptp, roaming, boundary, gateway/gw, internal; ASCII case-insensitive).
 * Returns the mode, or RNSC_IFMODE_UNSET for anything else. */
RNSC_API int rnsc_config_iface_mode_from_name(const char *name);

enum rnsc_shared_type {
	RNSC_SHARED_UNSET = 0, /* not configured: a Unix socket on Linux */
	RNSC_SHARED_TCP = 1,
	RNSC_SHARED_UNIX = 2,
};

/* Options the reference treats as "None unless configured" carry a set flag. */
typedef struct rnsc_opt_int {
	int set;
	int64_t v;
} rnsc_opt_int;
typedef struct rnsc_opt_float {
	int set;
	double v;
} rnsc_opt_float;

/* A list of 16-byte identity or destination hashes (duplicates removed, file order). */
typedef struct rnsc_hash_list {
	const uint8_t (*h)[16];
	size_t n;
} rnsc_hash_list;

/*
 * Every option of [reticulum] and [logging] that Reticulum.py 1.5.4 reads, after
 * its own post-processing (clamping, unit conversion, "only positive values count").
 * Defaults are the reference's values when the option is absent; note that the
 * default *file* sets loglevel = 4 while an absent loglevel leaves RNS at 3.
 */
typedef struct rnsc_config_settings {
	/* [logging] */
	int loglevel;         /* 0..8 (clamped); default 3 (RNS.LOG_NOTICE) */
	int loglevel_set;     /* the file had a loglevel (the reference lets --loglevel win) */
	int64_t loglevel_raw; /* as written: the reference adds -v/-q before clamping */
	int logtimestamps;    /* default 1 */

	/* [reticulum] */
	int enable_transport;          /* default 0 */
	int share_instance;            /* default 1 */
	const char *instance_name;     /* raw option; NULL when absent */
	int shared_instance_type;      /* enum rnsc_shared_type; other values are ignored */
	int64_t shared_instance_port;  /* default 37428 */
	int64_t instance_control_port; /* default 37429 */
	/* Derived as the reference does on Linux: a Unix socket unless the type is tcp,
	 * named instance_name or "default"; NULL for tcp. */
	int shared_instance_unix;
	const char *local_socket_path;
	const uint8_t *rpc_key; /* NULL: derived from the transport identity (default) */
	size_t rpc_key_len;
	int rpc_key_invalid;           /* set but not hex: the reference logs and falls back */
	int static_transport_identity; /* default 0 */
	int local_hops_delta;          /* default 0 */
	const char *network_identity;  /* path as written (the reference expands "~"); NULL */
	int link_mtu_discovery;        /* default 1 */
	int enable_remote_management;  /* default 0 */
	rnsc_hash_list remote_management_allowed;
	int respond_to_probes; /* default 0 */
	rnsc_opt_int force_shared_instance_bitrate;
	int panic_on_interface_error; /* default 0 */
	int use_implicit_proof;       /* default 1 */
	rnsc_opt_int default_gravity;
	int discover_interfaces;               /* default 0 */
	rnsc_opt_int required_discovery_value; /* set only when > 0 */
	int publish_blackhole;                 /* default 0 */
	rnsc_hash_list blackhole_sources;
	double blackhole_update_interval; /* seconds; option in minutes, at least 2; 3600 */
	rnsc_hash_list interface_discovery_sources;
	int64_t autoconnect_discovered_interfaces; /* max count; 0 = off (set only when > 0) */
	int autoconnect_interface_mode;            /* enum rnsc_iface_mode; UNSET default */
	rnsc_opt_int autoconnect_interface_gravity;
	int autoconnect_announces_to_internal; /* -1 unset (default), 1 yes (no keeps unset) */
	rnsc_opt_int default_ar_target;        /* set when > 0 (0 unsets) */
	rnsc_opt_int default_ar_penalty;       /* set when >= 0 */
	rnsc_opt_int default_ar_grace;         /* set when >= 0 */
	rnsc_opt_int ic_max_held_announces;    /* set when >= 0 */
	rnsc_opt_float ic_burst_hold;          /* floats: set when >= 0 */
	rnsc_opt_float ic_burst_freq_new;
	rnsc_opt_float ic_burst_freq;
	rnsc_opt_float ic_pr_burst_freq_new;
	rnsc_opt_float ic_pr_burst_freq;
	rnsc_opt_float ec_pr_freq;
	int egress_control; /* -1 unset (default), else 0/1 */
	rnsc_opt_float ic_new_time;
	rnsc_opt_float ic_burst_penalty;
	rnsc_opt_float ic_held_release_interval;
	rnsc_opt_int qlen_in_data; /* queue lengths: set when > 0 */
	rnsc_opt_int qlen_in_announce;
	rnsc_opt_int qlen_in_pr;
	rnsc_opt_int qlen_in_il;
} rnsc_config_settings;

/* Fills *out with the reference's defaults (what an empty file yields). */
RNSC_API void rnsc_config_settings_defaults(rnsc_config_settings *out);

/*
 * Reads [logging] then [reticulum] as Reticulum.__apply_config does: every option of
 * those sections is read (and interpolated) in file order, unknown options are
 * ignored, and the first bad value fails the whole read, as it stops the reference.
 * Pointers in *out point into cfg. Returns 0 or the getter errors (with the
 * message), RNSC_ERR_CONFIG_VALUE also for a malformed hash in a hash list.
 */
RNSC_API int rnsc_config_read_settings(const rnsc_config *cfg, rnsc_config_settings *out,
				       rnsc_config_error *err);

/* ---- [interfaces] ------------------------------------------------------------------ */

typedef struct rnsc_config_iface {
	const rnsc_config_section *section; /* read its other options with the getters */
	const char *name;
	const char *type; /* "TCPServerInterface", ...; NULL when absent (disabled only) */
	int enabled;
} rnsc_config_iface;

/* Number of interface subsections of [interfaces] (0 when there is none). */
RNSC_API size_t rnsc_config_iface_count(const rnsc_config *cfg);

/*
 * Interface i in file order. enabled follows the reference exactly: the interface is
 * up when "interface_enabled" is present and true, or else when "enabled" is present
 * and true; an absent pair means disabled; a present value that is not a boolean is
 * an error (the reference aborts). An enabled interface without "type" is
 * RNSC_ERR_NOTFOUND. Returns 0, RNSC_ERR_INVAL (i out of range) or getter errors.
 */
RNSC_API int rnsc_config_iface_at(const rnsc_config *cfg, size_t i, rnsc_config_iface *out,
				  rnsc_config_error *err);

/* ---- the reference's options, honoured or refused (cfg_keys.c) ------------------------ */

/*
 * Every option the reference's loader (Reticulum.py) and its interface classes
 * (the classes in RNS/Interfaces) read, with what rnsc does with it; docs/config-options.md is
 * this table, and tests/live/config_keys_test.sh derives the key list from the installed
 * reference and checks both. scope is "logging", "reticulum", "interface" (read by the
 * loader for every interface type), an interface type ("TCPServerInterface") or
 * "<type>.sub" (options of its subsections).
 */
enum rnsc_config_key_status {
	RNSC_CFGKEY_UNKNOWN = 0,  /* not in the table */
	RNSC_CFGKEY_HONOURED = 1, /* acted on as the reference acts on it */
	RNSC_CFGKEY_REFUSED = 2,  /* not acted on: logged at start (why says why) */
};

typedef struct rnsc_config_key {
	const char *scope;
	const char *key;
	int status;      /* enum rnsc_config_key_status */
	int benign_bool; /* refused keys: the boolean value that changes nothing (the
			    reference's default), which is then not logged; -1: none */
	const char *why; /* refused: the reason; honoured: what serves it */
} rnsc_config_key;

/* Table rows in order; NULL past the end. */
RNSC_API const rnsc_config_key *rnsc_config_key_at(size_t i);
/* The row for (scope, key), or NULL. */
RNSC_API const rnsc_config_key *rnsc_config_key_find(const char *scope, const char *key);

/*
 * Start-up audit, logged through the config's context: one warning per refused option
 * (naming the section, the option and why; a refused boolean at its benign value is
 * not logged), per option no reference version reads (a typo, such as
 * "frobnicate = 3") and per section the reference ignores. Options are never an error
 * here: the reference ignores what it does not read, and so does rnsc.
 * rnsc_config_audit_settings covers the top level, [logging] and [reticulum];
 * rnsc_config_audit_iface one opened interface's section of that type, after its plugin
 * read its options (an option no getter asked for and that the table honours for the
 * type is left alone: the reference ignores it in that configuration too).
 * Both return the number of lines logged.
 */
RNSC_API int rnsc_config_audit_settings(const rnsc_config *cfg);
RNSC_API int rnsc_config_audit_iface(const rnsc_config_section *s, const char *type);

/* ---- where the file lives ------------------------------------------------------------ */

/*
 * The reference's search (Reticulum.__init__): an explicit folder (--config) is used
 * as given; otherwise /etc/reticulum if it is a folder holding a file "config", then
 * ~/.config/reticulum likewise, else ~/.reticulum (whether or not it exists). "~" is
 * $HOME, or the password database entry when HOME is unset. Writes the folder to out.
 * Returns 0, RNSC_ERR_INVAL, RNSC_ERR_BUFSIZE or RNSC_ERR_NOENT (no home folder).
 */
RNSC_API int rnsc_config_locate(const char *override_dir, char *out, size_t cap);
/* The same with the system folder and home given (NULL: the real ones), for tests. */
RNSC_API int rnsc_config_locate_in(const char *override_dir, const char *etc_dir, const char *home,
				   char *out, size_t cap);

/* The default file rnsc writes when none exists: the reference's keys and values
 * (enable_transport = False, share_instance = Yes, instance_name = default,
 * loglevel = 4, one AutoInterface) with rnsc's own comments. Static; len optional. */
RNSC_API const char *rnsc_config_default_text(size_t *len);

/* Creates configdir (mkdir -p) and writes configdir/config atomically with the
 * default text, mode 0666 minus the umask as the reference does. Returns 0 or the
 * rnsc_store_* errors. */
RNSC_API int rnsc_config_write_default(const char *configdir);

/*
 * Locate, then load configdir/config, or, when it is not a file, write the default
 * file there and use the default text (the reference's startup). dir_out (may be
 * NULL) receives the folder; *created is set to 1 when the default was written.
 * Returns the errors of the functions above.
 */
RNSC_API int rnsc_config_open(rnsc_ctx *ctx, const char *override_dir, char *dir_out,
			      size_t dir_cap, int *created, rnsc_config **out,
			      rnsc_config_error *err);

#endif
