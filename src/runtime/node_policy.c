/* SPDX-License-Identifier: MIT */
/* Interface announce policy from the configuration (see node_policy.h). */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "announce_cap.h"
#include "announce_rate.h"
#include "node_policy.h"

static uint64_t secs_ms(double s)
{
	return s > 0 ? (uint64_t)(s * 1000.0 + 0.5) : 0;
}

void rnsc_node_policy_base(const rnsc_config_settings *set, int local,
			   rnsc_transport_iface_policy *p)
{
	memset(p, 0, sizeof(*p));
	/* only configured interfaces get announce_cap set; the shared instance's own fall
	 * back to Reticulum.ANNOUNCE_CAP itself */
	p->announce_cap = local ? RNSC_ANNOUNCE_CAP_SPAWNED : RNSC_ANNOUNCE_CAP_DEFAULT;
	rnsc_ingress_cfg_default(&p->ic);
	if (!set)
		return;
	/* Reticulum._default_ic_*(): `configured or constant`, so 0 picks the constant */
	if (set->ic_max_held_announces.set && set->ic_max_held_announces.v > 0)
		p->ic.max_held = (size_t)set->ic_max_held_announces.v;
	if (set->ic_burst_hold.set && set->ic_burst_hold.v > 0)
		p->ic.burst_hold_ms = secs_ms(set->ic_burst_hold.v);
	if (set->ic_burst_freq_new.set && set->ic_burst_freq_new.v > 0)
		p->ic.burst_freq_new = set->ic_burst_freq_new.v;
	if (set->ic_burst_freq.set && set->ic_burst_freq.v > 0)
		p->ic.burst_freq = set->ic_burst_freq.v;
	if (set->ic_pr_burst_freq_new.set && set->ic_pr_burst_freq_new.v > 0)
		p->ic.pr_burst_freq_new = set->ic_pr_burst_freq_new.v;
	if (set->ic_pr_burst_freq.set && set->ic_pr_burst_freq.v > 0)
		p->ic.pr_burst_freq = set->ic_pr_burst_freq.v;
	if (set->ic_new_time.set && set->ic_new_time.v > 0)
		p->ic.new_time_ms = secs_ms(set->ic_new_time.v);
	if (set->ic_burst_penalty.set && set->ic_burst_penalty.v > 0)
		p->ic.burst_penalty_ms = secs_ms(set->ic_burst_penalty.v);
	if (set->ic_held_release_interval.set && set->ic_held_release_interval.v > 0)
		p->ic.held_release_interval_ms = secs_ms(set->ic_held_release_interval.v);
	/* Reticulum._default_egress_control() / _default_ec_pr_freq(): `configured or
	 * constant` (recursive path requests, transport_discovery.c) */
	p->egress_control = set->egress_control > 0;
	if (set->ec_pr_freq.set && set->ec_pr_freq.v > 0)
		p->ec_pr_freq = set->ec_pr_freq.v;
	if (!local && set->enable_transport) {
		p->has_rate_target = 1;
		p->rate_target_s = set->default_ar_target.set && set->default_ar_target.v > 0
					   ? (uint64_t)set->default_ar_target.v
					   : RNSC_DEFAULT_AR_TARGET;
		p->rate_penalty_s = set->default_ar_penalty.set && set->default_ar_penalty.v > 0
					    ? (uint64_t)set->default_ar_penalty.v
					    : RNSC_DEFAULT_AR_PENALTY;
		p->rate_grace = set->default_ar_grace.set && set->default_ar_grace.v > 0
					? (uint64_t)set->default_ar_grace.v
					: RNSC_DEFAULT_AR_GRACE;
	}
}

static int get_f(const rnsc_config_section *s, const char *k, double *v, int *has,
		 rnsc_config_error *err)
{
	*has = 0;
	if (!rnsc_config_has(s, k))
		return 0;
	int rc = rnsc_config_get_float(s, k, v, err);
	if (rc == 0)
		*has = 1;
	return rc;
}

static int get_i(const rnsc_config_section *s, const char *k, int64_t *v, int *has,
		 rnsc_config_error *err)
{
	*has = 0;
	if (!rnsc_config_has(s, k))
		return 0;
	int rc = rnsc_config_get_int(s, k, v, err);
	if (rc == 0)
		*has = 1;
	return rc;
}

int rnsc_node_policy_read(const rnsc_config_settings *set, const rnsc_config_section *s,
			  rnsc_transport_iface_policy *p, rnsc_config_error *err)
{
	rnsc_node_policy_base(set, 0, p);
	p->has_rate_target = 0; /* decided below, as _synthesize_interface does */
	int rc, has, b;
	double f;
	int64_t i;
	if (rnsc_config_has(s, "ingress_control")) {
		if ((rc = rnsc_config_get_bool(s, "ingress_control", &b, err)))
			return rc;
		p->ic.enabled = b;
	}
	if ((rc = get_i(s, "ic_max_held_announces", &i, &has, err)))
		return rc;
	if (has)
		p->ic.max_held = i > 0 ? (size_t)i : 0;
	struct {
		const char *k;
		uint64_t *ms;
		double *hz;
	} fl[] = {
		{"ic_burst_hold", &p->ic.burst_hold_ms, NULL},
		{"ic_burst_freq_new", NULL, &p->ic.burst_freq_new},
		{"ic_burst_freq", NULL, &p->ic.burst_freq},
		{"ic_pr_burst_freq_new", NULL, &p->ic.pr_burst_freq_new},
		{"ic_pr_burst_freq", NULL, &p->ic.pr_burst_freq},
		{"ic_new_time", &p->ic.new_time_ms, NULL},
		{"ic_burst_penalty", &p->ic.burst_penalty_ms, NULL},
		{"ic_held_release_interval", &p->ic.held_release_interval_ms, NULL},
	};
	for (size_t k = 0; k < sizeof(fl) / sizeof(fl[0]); k++) {
		if ((rc = get_f(s, fl[k].k, &f, &has, err)))
			return rc;
		if (!has)
			continue;
		if (fl[k].ms)
			*fl[k].ms = secs_ms(f);
		else
			*fl[k].hz = f;
	}
	/* announce_rate_*: target only when > 0, grace and penalty when >= 0; a target
	 * without them gets 0 for both; transport fills what is still unset. */
	int has_t = 0, has_g = 0, has_p = 0;
	int64_t tv = 0, gv = 0, pv = 0;
	if ((rc = get_i(s, "announce_rate_target", &tv, &has_t, err)) ||
	    (rc = get_i(s, "announce_rate_grace", &gv, &has_g, err)) ||
	    (rc = get_i(s, "announce_rate_penalty", &pv, &has_p, err)))
		return rc;
	has_t = has_t && tv > 0;
	has_g = has_g && gv >= 0;
	has_p = has_p && pv >= 0;
	rnsc_transport_iface_policy def;
	rnsc_node_policy_base(set, 0, &def);
	if (has_t) {
		p->has_rate_target = 1;
		p->rate_target_s = (uint64_t)tv;
		p->rate_grace = has_g ? (uint64_t)gv : 0;
		p->rate_penalty_s = has_p ? (uint64_t)pv : 0;
	} else if (def.has_rate_target) {
		p->has_rate_target = 1;
		p->rate_target_s = def.rate_target_s;
		p->rate_grace = has_g ? (uint64_t)gv : def.rate_grace;
		p->rate_penalty_s = has_p ? (uint64_t)pv : def.rate_penalty_s;
	}
	/* egress control of recursive path requests, and recursive_prs; an interface's
	 * ec_pr_freq is taken as given (0 included, which the engine reads as "default":
	 * the smallest positive rate stands in for it) */
	if (rnsc_config_has(s, "egress_control")) {
		if ((rc = rnsc_config_get_bool(s, "egress_control", &b, err)))
			return rc;
		p->egress_control = b;
	}
	if (rnsc_config_has(s, "recursive_prs")) {
		if ((rc = rnsc_config_get_bool(s, "recursive_prs", &b, err)))
			return rc;
		p->recursive_prs = b;
	}
	if ((rc = get_f(s, "ec_pr_freq", &f, &has, err)))
		return rc;
	if (has)
		p->ec_pr_freq = f > 0 ? f : 1e-9;
	if ((rc = get_f(s, "announce_cap", &f, &has, err)))
		return rc;
	if (has && f > 0 && f <= 100)
		p->announce_cap = f / 100.0;
	return 0;
}

int rnsc_node_iface_mode_read(const rnsc_config_section *s, int *mode, rnsc_config_error *err)
{
	static const char *const first[] = {"full",    "access_point", "accesspoint",
					    "ap",      "pointtopoint", "ptp",
					    "roaming", "boundary"};
	const char *v;
	int rc;
	*mode = RNSC_IFMODE_FULL;
	if (rnsc_config_has(s, "interface_mode")) {
		if ((rc = rnsc_config_get_str(s, "interface_mode", &v, err)))
			return rc;
		for (size_t i = 0; i < sizeof(first) / sizeof(first[0]); i++)
			if (strcasecmp(v, first[i]) == 0) {
				*mode = rnsc_config_iface_mode_from_name(v);
				return 0;
			}
		/* the reference's gateway and internal arms of this branch compare c["mode"],
		 * unlowered */
		if (!rnsc_config_has(s, "mode")) {
			if (err) {
				err->code = RNSC_ERR_CONFIG_VALUE;
				err->line = rnsc_config_option_line(s, "interface_mode");
				char p[128];
				rnsc_config_section_path(s, p, sizeof(p));
				snprintf(err->msg, sizeof(err->msg),
					 "%s interface_mode = %s needs a \"mode\" option as well "
					 "(the reference reads mode for it and fails without one)",
					 p, v);
			}
			return RNSC_ERR_CONFIG_VALUE;
		}
		if ((rc = rnsc_config_get_str(s, "mode", &v, err)))
			return rc;
		if (strcmp(v, "gateway") == 0 || strcmp(v, "gw") == 0)
			*mode = RNSC_IFMODE_GATEWAY;
		else if (strcmp(v, "internal") == 0)
			*mode = RNSC_IFMODE_INTERNAL;
		return 0;
	}
	if (rnsc_config_has(s, "mode")) {
		if ((rc = rnsc_config_get_str(s, "mode", &v, err)))
			return rc;
		int m = rnsc_config_iface_mode_from_name(v);
		if (m != RNSC_IFMODE_UNSET)
			*mode = m;
	}
	return 0;
}
