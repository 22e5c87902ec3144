/* SPDX-License-Identifier: MIT */
/*
 * The reference's configuration options (rns 1.5.4: Reticulum.py and RNS/Interfaces),
 * each honoured or refused by rnsc, and the start-up audit that names every refused or
 * unknown option in the log instead of ignoring it silently. docs/config-options.md
 * is this table; tests/live/config_keys_test.sh keeps the three (reference source, this
 * table, the document) in step.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cfgfile_internal.h"

#define H(scope, key, why)                                                                         \
	{                                                                                          \
		scope, key, RNSC_CFGKEY_HONOURED, -1, why                                          \
	}
#define R(scope, key, benign, why)                                                                 \
	{                                                                                          \
		scope, key, RNSC_CFGKEY_REFUSED, benign, why                                       \
	}

/* Reasons shared by many rows. */
#define WHY_DISCOVERY                                                                              \
	"rnsc announces TCPServer and Backbone interfaces only, unencrypted, running no "          \
	"commands (discovery_announcer.h)"
#define WHY_ANNOUNCER "the interface discovery announcer (discovery_announcer.c)"
#define WHY_AUTOCONNECT "rnsc does not auto-connect discovered interfaces"
#define WHY_NOPLUGIN                                                                               \
	"no interface plugin shipped with rnsc serves this type; unless one is "                   \
	"loaded the whole interface is logged and skipped"
#define WHY_LOADER "the loader (Reticulum.py)"
#define WHY_POLICY "the announce policy (node_policy.c)"

static const rnsc_config_key keys[] = {
	/* [logging] */
	H("logging", "loglevel", "the log sink; -v/-q adjust it as in rnsd"),
	H("logging", "logtimestamps", "the daemon's log lines (logfile.c)"),

	/* [reticulum] */
	H("reticulum", "share_instance", "the shared instance (node.c)"),
	H("reticulum", "instance_name", "the shared instance's socket name"),
	H("reticulum", "shared_instance_type", "unix or tcp shared instance"),
	H("reticulum", "shared_instance_port", "the shared instance's TCP port"),
	H("reticulum", "instance_control_port", "the RPC listener (rpc.c)"),
	H("reticulum", "rpc_key", "the RPC key (rpc.c)"),
	H("reticulum", "enable_transport", "the transport engine"),
	H("reticulum", "static_transport_identity", "the transport identity"),
	H("reticulum", "local_hops_delta", "the transport engine"),
	R("reticulum", "network_identity", -1,
	  "rnsc has no network identity (it only serves "
	  "interface discovery and blackhole publishing under that identity)"),
	H("reticulum", "link_mtu_discovery", "the transport engine"),
	H("reticulum", "enable_remote_management",
	  "the remote management destination (remote_mgmt.c)"),
	H("reticulum", "remote_management_allowed", "remote management's allowed identities"),
	H("reticulum", "respond_to_probes", "the probe destination (node.c)"),
	R("reticulum", "force_shared_instance_bitrate", -1,
	  "the shared instance interface reports its own bitrate"),
	H("reticulum", "panic_on_interface_error", "interface start-up (node.c)"),
	H("reticulum", "use_implicit_proof", "the transport engine"),
	R("reticulum", "default_gravity", -1, WHY_AUTOCONNECT),
	H("reticulum", "discover_interfaces", "the interface discovery store (discovery_store.c)"),
	H("reticulum", "required_discovery_value", "the discovery stamp check (discovery.c)"),
	H("reticulum", "publish_blackhole", "the blackhole list service"),
	H("reticulum", "blackhole_sources", "the blackhole updater"),
	H("reticulum", "blackhole_update_interval", "the blackhole updater"),
	H("reticulum", "interface_discovery_sources", "the interface discovery store"),
	R("reticulum", "autoconnect_discovered_interfaces", -1, WHY_AUTOCONNECT),
	R("reticulum", "autoconnect_interface_mode", -1, WHY_AUTOCONNECT),
	R("reticulum", "autoconnect_interface_gravity", -1, WHY_AUTOCONNECT),
	R("reticulum", "autoconnect_announces_to_internal", 0, WHY_AUTOCONNECT),
	H("reticulum", "default_ar_target", WHY_POLICY),
	H("reticulum", "default_ar_penalty", WHY_POLICY),
	H("reticulum", "default_ar_grace", WHY_POLICY),
	H("reticulum", "ic_max_held_announces", WHY_POLICY),
	H("reticulum", "ic_burst_hold", WHY_POLICY),
	H("reticulum", "ic_burst_freq_new", WHY_POLICY),
	H("reticulum", "ic_burst_freq", WHY_POLICY),
	H("reticulum", "ic_pr_burst_freq_new", WHY_POLICY),
	H("reticulum", "ic_pr_burst_freq", WHY_POLICY),
	H("reticulum", "ec_pr_freq", WHY_POLICY),
	H("reticulum", "egress_control", WHY_POLICY),
	H("reticulum", "ic_new_time", WHY_POLICY),
	H("reticulum", "ic_burst_penalty", WHY_POLICY),
	H("reticulum", "ic_held_release_interval", WHY_POLICY),
	R("reticulum", "qlen_in_data", -1,
	  "rnsc processes inbound data as it arrives, "
	  "without the reference's bounded inbound data queue"),
	R("reticulum", "qlen_in_announce", -1,
	  "rnsc processes inbound announces as they "
	  "arrive, without the reference's bounded inbound announce queue"),
	R("reticulum", "qlen_in_pr", -1,
	  "rnsc processes path requests as they arrive, "
	  "without the reference's bounded inbound path request queue"),
	H("reticulum", "qlen_in_il", "the transport engine's inbound link queue"),

	/* Every interface (Reticulum._synthesize_interface) */
	H("interface", "type", "selects the interface plugin"),
	H("interface", "enabled", WHY_LOADER),
	H("interface", "interface_enabled", WHY_LOADER),
	H("interface", "interface_mode", "the interface mode (node.c)"),
	H("interface", "mode", "the interface mode (node.c)"),
	H("interface", "networkname", "IFAC (node.c)"),
	H("interface", "network_name", "IFAC (node.c)"),
	H("interface", "passphrase", "IFAC (node.c)"),
	H("interface", "pass_phrase", "IFAC (node.c)"),
	H("interface", "ifac_size", "IFAC (node.c)"),
	H("interface", "bitrate", "the interface plugins"),
	H("interface", "ingress_control", WHY_POLICY),
	H("interface", "egress_control", WHY_POLICY),
	H("interface", "ic_max_held_announces", WHY_POLICY),
	H("interface", "ic_burst_hold", WHY_POLICY),
	H("interface", "ic_burst_freq_new", WHY_POLICY),
	H("interface", "ic_burst_freq", WHY_POLICY),
	H("interface", "ic_pr_burst_freq_new", WHY_POLICY),
	H("interface", "ic_pr_burst_freq", WHY_POLICY),
	H("interface", "ec_pr_freq", WHY_POLICY),
	H("interface", "ic_new_time", WHY_POLICY),
	H("interface", "ic_burst_penalty", WHY_POLICY),
	H("interface", "ic_held_release_interval", WHY_POLICY),
	H("interface", "announce_rate_target", WHY_POLICY),
	H("interface", "announce_rate_grace", WHY_POLICY),
	H("interface", "announce_rate_penalty", WHY_POLICY),
	H("interface", "announce_cap", WHY_POLICY),
	H("interface", "recursive_prs", WHY_POLICY),
	H("interface", "port",
	  "Backbone alias of listen_port/target_port (backbone plugin); "
	  "other types read it themselves"),
	H("interface", "remote", "Backbone alias of target_host (backbone plugin)"),
	H("interface", "target_host", "Backbone client selection (backbone plugin)"),
	H("interface", "listen_on", "Backbone alias of listen_ip (backbone plugin)"),
	R("interface", "outgoing", 1,
	  "rnsc transmits on every interface; a receive-only "
	  "interface (outgoing = no) is not implemented"),
	R("interface", "gravity", -1, WHY_AUTOCONNECT),
	R("interface", "bootstrap_only", 0,
	  "bootstrap interfaces are dropped once discovered "
	  "interfaces connect, and " WHY_AUTOCONNECT),
	R("interface", "announces_from_internal", 1,
	  "announces from internal-mode interfaces are not filtered by rnsc"),
	R("interface", "announces_to_internal", -1,
	  "announces to internal-mode interfaces are not filtered by rnsc"),
	R("interface", "ignore_config_warnings", -1,
	  "it only silences the discovery mode auto-configuration, which rnsc does not do"),
	H("interface", "discoverable", WHY_ANNOUNCER),
	H("interface", "announce_interval", WHY_ANNOUNCER),
	H("interface", "discovery_stamp_value", WHY_ANNOUNCER),
	H("interface", "discovery_name", WHY_ANNOUNCER),
	R("interface", "discovery_encrypt", 0, WHY_DISCOVERY),
	H("interface", "discovery_lxmf_address", WHY_ANNOUNCER),
	R("interface", "discovery_frequency", -1, WHY_DISCOVERY),
	R("interface", "discovery_bandwidth", -1, WHY_DISCOVERY),
	R("interface", "discovery_modulation", -1, WHY_DISCOVERY),
	H("interface", "reachable_on", WHY_ANNOUNCER),
	H("interface", "publish_ifac", WHY_ANNOUNCER),
	R("interface", "location_cmd", -1, WHY_DISCOVERY),
	H("interface", "latitude", WHY_ANNOUNCER),
	H("interface", "longitude", WHY_ANNOUNCER),
	H("interface", "height", WHY_ANNOUNCER),

	/* Types rnsc's plugins serve */
	H("AutoInterface", "group_id", "auto plugin"),
	H("AutoInterface", "discovery_scope", "auto plugin"),
	H("AutoInterface", "discovery_port", "auto plugin"),
	H("AutoInterface", "multicast_address_type", "auto plugin"),
	H("AutoInterface", "data_port", "auto plugin"),
	H("AutoInterface", "devices", "auto plugin"),
	H("AutoInterface", "ignored_devices", "auto plugin"),
	H("BackboneInterface", "device", "backbone plugin"),
	H("BackboneInterface", "port", "backbone plugin"),
	H("BackboneInterface", "listen_ip", "backbone plugin"),
	H("BackboneInterface", "listen_port", "backbone plugin"),
	H("BackboneInterface", "prefer_ipv6", "backbone plugin"),
	H("BackboneInterface", "block_fast_flapping", "backbone plugin"),
	H("BackboneInterface", "fast_flapping_threshold", "backbone plugin"),
	H("BackboneInterface", "fast_flapping_grace", "backbone plugin"),
	H("BackboneInterface", "fast_flapping_block_time", "backbone plugin"),
	H("BackboneClientInterface", "target_host", "backbone plugin"),
	H("BackboneClientInterface", "target_port", "backbone plugin"),
	H("BackboneClientInterface", "i2p_tunneled", "backbone plugin"),
	H("BackboneClientInterface", "connect_timeout", "backbone plugin"),
	H("BackboneClientInterface", "max_reconnect_tries", "backbone plugin"),
	H("BackboneClientInterface", "prefer_ipv6", "backbone plugin"),
	H("TCPServerInterface", "device", "tcp plugin"),
	H("TCPServerInterface", "port", "tcp plugin"),
	H("TCPServerInterface", "listen_ip", "tcp plugin"),
	H("TCPServerInterface", "listen_port", "tcp plugin"),
	H("TCPServerInterface", "i2p_tunneled", "tcp plugin"),
	H("TCPServerInterface", "prefer_ipv6", "tcp plugin"),
	H("TCPClientInterface", "target_host", "tcp plugin"),
	H("TCPClientInterface", "target_port", "tcp plugin"),
	H("TCPClientInterface", "kiss_framing", "tcp plugin"),
	H("TCPClientInterface", "i2p_tunneled", "tcp plugin"),
	H("TCPClientInterface", "connect_timeout", "tcp plugin"),
	H("TCPClientInterface", "max_reconnect_tries", "tcp plugin"),
	H("TCPClientInterface", "fixed_mtu", "tcp plugin"),
	H("UDPInterface", "device", "udp plugin"),
	H("UDPInterface", "port", "udp plugin"),
	H("UDPInterface", "listen_ip", "udp plugin"),
	H("UDPInterface", "listen_port", "udp plugin"),
	H("UDPInterface", "forward_ip", "udp plugin"),
	H("UDPInterface", "forward_port", "udp plugin"),
	H("SerialInterface", "port", "serial plugin"),
	H("SerialInterface", "speed", "serial plugin"),
	H("SerialInterface", "databits", "serial plugin"),
	H("SerialInterface", "parity", "serial plugin"),
	H("SerialInterface", "stopbits", "serial plugin"),
	H("KISSInterface", "port", "serial plugin"),
	H("KISSInterface", "speed", "serial plugin"),
	H("KISSInterface", "databits", "serial plugin"),
	H("KISSInterface", "parity", "serial plugin"),
	H("KISSInterface", "stopbits", "serial plugin"),
	H("KISSInterface", "preamble", "serial plugin"),
	H("KISSInterface", "txtail", "serial plugin"),
	H("KISSInterface", "persistence", "serial plugin"),
	H("KISSInterface", "slottime", "serial plugin"),
	H("KISSInterface", "flow_control", "serial plugin"),
	H("KISSInterface", "id_interval", "serial plugin"),
	H("KISSInterface", "id_callsign", "serial plugin"),
	H("PipeInterface", "command", "pipe plugin"),
	H("PipeInterface", "respawn_delay", "pipe plugin"),

	/* AX.25 over KISS (serial plugin) and RNode radios (rnode and rnode_multi plugins); then the
	 * types no plugin
	 * of rnsc serves (skipped whole, see WHY_NOPLUGIN) */
	H("AX25KISSInterface", "callsign", "serial plugin"),
	H("AX25KISSInterface", "ssid", "serial plugin"),
	H("AX25KISSInterface", "port", "serial plugin"),
	H("AX25KISSInterface", "speed", "serial plugin"),
	H("AX25KISSInterface", "databits", "serial plugin"),
	H("AX25KISSInterface", "parity", "serial plugin"),
	H("AX25KISSInterface", "stopbits", "serial plugin"),
	H("AX25KISSInterface", "preamble", "serial plugin"),
	H("AX25KISSInterface", "txtail", "serial plugin"),
	H("AX25KISSInterface", "persistence", "serial plugin"),
	H("AX25KISSInterface", "slottime", "serial plugin"),
	H("AX25KISSInterface", "flow_control", "serial plugin"),
	R("I2PInterface", "peers", -1, WHY_NOPLUGIN),
	R("I2PInterface", "connectable", -1, WHY_NOPLUGIN),
	H("RNodeInterface", "port", "rnode plugin"),
	H("RNodeInterface", "frequency", "rnode plugin"),
	H("RNodeInterface", "bandwidth", "rnode plugin"),
	H("RNodeInterface", "txpower", "rnode plugin"),
	H("RNodeInterface", "spreadingfactor", "rnode plugin"),
	H("RNodeInterface", "codingrate", "rnode plugin"),
	H("RNodeInterface", "flow_control", "rnode plugin"),
	H("RNodeInterface", "id_interval", "rnode plugin"),
	H("RNodeInterface", "id_callsign", "rnode plugin"),
	H("RNodeInterface", "airtime_limit_short", "rnode plugin"),
	H("RNodeInterface", "airtime_limit_long", "rnode plugin"),
	H("RNodeMultiInterface", "port", "rnode_multi plugin"),
	H("RNodeMultiInterface", "enabled", "rnode_multi plugin"),
	H("RNodeMultiInterface", "id_interval", "rnode_multi plugin"),
	H("RNodeMultiInterface", "id_callsign", "rnode_multi plugin"),
	H("RNodeMultiInterface.sub", "interface_enabled", "rnode_multi plugin"),
	H("RNodeMultiInterface.sub", "vport", "rnode_multi plugin"),
	H("RNodeMultiInterface.sub", "frequency", "rnode_multi plugin"),
	H("RNodeMultiInterface.sub", "bandwidth", "rnode_multi plugin"),
	H("RNodeMultiInterface.sub", "txpower", "rnode_multi plugin"),
	H("RNodeMultiInterface.sub", "spreadingfactor", "rnode_multi plugin"),
	H("RNodeMultiInterface.sub", "codingrate", "rnode_multi plugin"),
	H("RNodeMultiInterface.sub", "flow_control", "rnode_multi plugin"),
	H("RNodeMultiInterface.sub", "airtime_limit_short", "rnode_multi plugin"),
	H("RNodeMultiInterface.sub", "airtime_limit_long", "rnode_multi plugin"),
	H("RNodeMultiInterface.sub", "outgoing", "rnode_multi plugin"),
	R("WeaveInterface", "port", -1, WHY_NOPLUGIN),
};

#undef H
#undef R

#define N_KEYS (sizeof(keys) / sizeof(keys[0]))

const rnsc_config_key *rnsc_config_key_at(size_t i)
{
	return i < N_KEYS ? &keys[i] : NULL;
}

const rnsc_config_key *rnsc_config_key_find(const char *scope, const char *key)
{
	for (size_t i = 0; scope && key && i < N_KEYS; i++)
		if (strcmp(keys[i].scope, scope) == 0 && strcmp(keys[i].key, key) == 0)
			return &keys[i];
	return NULL;
}

static int known_anywhere(const char *key)
{
	for (size_t i = 0; i < N_KEYS; i++)
		if (strcmp(keys[i].key, key) == 0)
			return 1;
	return 0;
}

/* A refused boolean at the value that changes nothing is not worth a line. */
static int benign(const rnsc_config_section *s, const char *key, const rnsc_config_key *k)
{
	if (k->benign_bool < 0)
		return 0;
	cfg_opt *o = NULL;
	const cfg_name_ent *e = rnsc_cfg_tab_find(s->cfg, s, key);
	if (e && e->idx >= 0)
		o = &((rnsc_config_section *)s)->opts[e->idx];
	if (!o || o->is_list || rnsc_cfg_opt_interp(s, o, NULL) != 0)
		return 0;
	int b;
	return rnsc_config_parse_bool(o->ip_str, &b) == 0 && b == k->benign_bool;
}

__attribute__((format(printf, 3, 4))) static void warn(const rnsc_config_section *s,
						       const char *key, const char *fmt, ...)
{
	char path[200], msg[400];
	rnsc_config_section_path(s, path, sizeof(path));
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (key)
		rnsc_log(s->cfg->ctx, RNSC_LOG_WARNING, "config", "%s option \"%s\" (line %u): %s",
			 path, key, rnsc_config_option_line(s, key), msg);
	else
		rnsc_log(s->cfg->ctx, RNSC_LOG_WARNING, "config", "%s (line %u): %s", path,
			 rnsc_config_section_line(s), msg);
}

#define IGNORED_TYPO "no version of the reference reads this option (a typo?); ignored"

/* One section's options against scope (and, for interfaces, the common scope). */
static int audit_opts(const rnsc_config_section *s, const char *scope, const char *common,
		      int skip_read)
{
	int lines = 0;
	for (size_t i = 0; i < s->n_opts; i++) {
		const char *key = s->opts[i].key;
		const rnsc_config_key *k = rnsc_config_key_find(scope, key);
		if (!k && common)
			k = rnsc_config_key_find(common, key);
		if (skip_read && s->opts[i].used)
			continue; /* a getter asked for it: the node or the plugin acts on it */
		if (k && k->status == RNSC_CFGKEY_HONOURED)
			continue;
		if (k) {
			if (benign(s, key, k))
				continue;
			warn(s, key, "refused: %s; ignored", k->why);
		} else if (common && known_anywhere(key)) {
			warn(s, key, "not an option of %s in the reference; ignored", scope);
		} else {
			warn(s, key, "%s", IGNORED_TYPO);
		}
		lines++;
	}
	return lines;
}

int rnsc_config_audit_settings(const rnsc_config *cfg)
{
	if (!cfg)
		return 0;
	int lines = 0;
	const rnsc_config_section *root = &cfg->root;
	for (size_t i = 0; i < root->n_subs; i++) {
		const rnsc_config_section *sub = root->subs[i];
		if (strcmp(sub->name, "logging") == 0 || strcmp(sub->name, "reticulum") == 0) {
			lines += audit_opts(sub, sub->name, NULL, 0);
		} else if (strcmp(sub->name, "interfaces") == 0) {
			for (size_t k = 0; k < sub->n_opts; k++) {
				warn(sub, sub->opts[k].key,
				     "an option outside any interface "
				     "section is never read; ignored");
				lines++;
			}
		} else {
			warn(sub, NULL,
			     "the reference reads only [reticulum], [logging] and "
			     "[interfaces]; section ignored");
			lines++;
		}
	}
	for (size_t i = 0; i < root->n_opts; i++) {
		warn(root, root->opts[i].key,
		     "an option outside any section is never read; "
		     "ignored");
		lines++;
	}
	return lines;
}

int rnsc_config_audit_iface(const rnsc_config_section *s, const char *type)
{
	if (!s || !type)
		return 0;
	/* What the node or the plugin read is theirs to honour (a plugin serving a type
	 * the table refuses reads its options); only unread options are judged. */
	int lines = audit_opts(s, type, "interface", 1);
	int multi = strcmp(type, "RNodeMultiInterface") == 0;
	for (size_t i = 0; i < s->n_subs; i++) {
		const rnsc_config_section *sub = s->subs[i];
		if (multi) { /* its subinterfaces: their options, and nothing deeper */
			lines += audit_opts(sub, "RNodeMultiInterface.sub", NULL, 1);
			for (size_t k = 0; k < sub->n_subs; k++, lines++)
				warn(sub->subs[k], NULL,
				     "subsections of a subinterface are never read; "
				     "ignored");
			continue;
		}
		warn(sub, NULL, "subsections of %s are never read; ignored", type);
		lines++;
	}
	return lines;
}
