/* SPDX-License-Identifier: MIT */
/*
 * The announce policy of an interface from the configuration, as Reticulum.py 1.5.4
 * derives it: [reticulum]'s default_ar_* and ic_* defaults (with the reference's
 * "0 means the built-in default" quirk of its `or` fallbacks), then the interface
 * section's announce_cap, announce_rate_target / _grace / _penalty, ingress_control and
 * ic_* options (Reticulum._synthesize_interface).
 * Internal to the runtime; no state of its own.
 */
#ifndef RNSC_NODE_POLICY_H
#define RNSC_NODE_POLICY_H

#include "cfgfile.h"
#include "transport.h"

/* What an interface gets before its own options: local (shared instance) interfaces have
 * no announce rate target and the unset-cap fallback (RNSC_ANNOUNCE_CAP_SPAWNED); others
 * get the default cap and, when transport is on, the default_ar_* values. */
RNSC_API void rnsc_node_policy_base(const rnsc_config_settings *set, int local,
				    rnsc_transport_iface_policy *p);
/* Base policy plus the options of interface section s. Returns 0 or the config getters'
 * errors (err filled). */
RNSC_API int rnsc_node_policy_read(const rnsc_config_settings *set, const rnsc_config_section *s,
				   rnsc_transport_iface_policy *p, rnsc_config_error *err);

/* The interface mode of section s as Reticulum._synthesize_interface selects it (enum
 * rnsc_iface_mode; FULL when unset or unrecognised). interface_mode wins over mode, but an
 * interface_mode that is none of full, access_point/accesspoint/ap, pointtopoint/ptp,
 * roaming and boundary is resolved by the reference from "mode" (exactly "gateway"/"gw"
 * or "internal", else FULL), and without a "mode" option the reference's lookup raises
 * and the interface is refused: RNSC_ERR_CONFIG_VALUE here (err filled). */
RNSC_API int rnsc_node_iface_mode_read(const rnsc_config_section *s, int *mode,
				       rnsc_config_error *err);

#endif
