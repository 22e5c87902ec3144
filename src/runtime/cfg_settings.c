/* SPDX-License-Identifier: MIT */
/*
 * The sections Reticulum.py reads: [logging] and [reticulum] with the reference's
 * defaults and post-processing, and the [interfaces] walk. Options are read through
 * the typed getters, in file order, as Reticulum.__apply_config reads them.
 */
#include <stddef.h>
#include <string.h>

#include "cfgfile_internal.h"

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
		while (*p && rnsc_cfg_py_isspace_ascii((char)*p))
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
		h = rnsc_cfg_alloc(s->cfg, n * sizeof(*h));
		if (!h || rnsc_cfg_keep(s->cfg, h) != 0) {
			rnsc_cfg_free(s->cfg, h);
			return rnsc_cfg_opt_err(err, RNSC_ERR_NOMEM, s, key, 0, "out of memory");
		}
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		uint8_t tmp[16];
		/* The reference checks the length (32 characters) before decoding; a value with
		 * blanks between the pairs would decode shorter there, which no hash can be. */
		if (strlen(items[i]) != 32 || py_fromhex(items[i], NULL) != 16) {
			char shown[96];
			rnsc_cfg_show_value(items[i], shown, sizeof(shown));
			return rnsc_cfg_opt_err(
				err, RNSC_ERR_CONFIG_VALUE, s, key, rnsc_config_option_line(s, key),
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
		int rc = rnsc_config_get_list(sec, key, &(const char *const *){NULL}, &(size_t){0},
					      err);
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
			return rnsc_cfg_opt_err(err, RNSC_ERR_CONFIG_VALUE, sec, name,
						sec->subs[i]->line, "is a section, not an option");
	}
	return 0;
}

/* The options of [reticulum] the reference reads, and how. */
enum rk {
	RK_BOOL,   /* as_bool into an int */
	RK_BOOL_T, /* as_bool, only True counts */
	RK_INT,    /* int() into int64 */
	RK_OPTINT, /* as_int into rnsc_opt_int with a condition */
	RK_OPTFLT, /* as_float into rnsc_opt_float when >= 0 */
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
				uint8_t *k = rnsc_cfg_alloc(sec->cfg, n ? (size_t)n : 1);
				if (!k || rnsc_cfg_keep(sec->cfg, k) != 0) {
					rnsc_cfg_free(sec->cfg, k);
					return rnsc_cfg_opt_err(err, RNSC_ERR_NOMEM, sec, key, 0,
								"out of memory");
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
		const char *key =
			i < sec->n_opts ? sec->opts[i].key : sec->subs[i - sec->n_opts]->name;
		int rc;
		if (i < sec->n_opts) {
			/* Reading the value interpolates it, known option or not. */
			rc = rnsc_config_get_list(sec, key, &(const char *const *){NULL},
						  &(size_t){0}, err);
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
	rnsc_cfg_clear_err(err);
	if (!cfg || !out)
		return rnsc_cfg_set_err(err, RNSC_ERR_INVAL, 0, "invalid argument");
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
	rnsc_cfg_clear_err(err);
	const rnsc_config_section *s = ifaces(cfg);
	if (!out || !s || i >= s->n_subs)
		return rnsc_cfg_set_err(err, RNSC_ERR_INVAL, 0, "invalid argument");
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
