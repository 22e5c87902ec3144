/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "node_status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "err.h"

/* Names of enum rnsc_iface_drop, in order (iface_abi.h). */
static const char *const drop_names[] = {"runt",    "oversize", "garbage", "partial",
					 "offline", "txqueue",  "refused"};
_Static_assert(sizeof(drop_names) / sizeof(drop_names[0]) == RNSC_IFACE_DROP_COUNT,
	       "one name per drop reason");

/* The engine's counters, named as in the JSON and (with rnsc_transport_ and _total) in the
 * metrics. */
#define TRANSPORT_COUNTERS(X)                                                              \
	X(rx) X(tx) X(malformed) X(filtered) X(duplicates) X(announces_valid)              \
	X(announces_invalid) X(paths_added) X(announces_ignored) X(rebroadcasts)           \
	X(forwarded) X(delivered) X(decrypt_failed) X(proofs_sent) X(proofs_valid)         \
	X(receipts_timed_out) X(pr_received) X(pr_duplicate) X(pr_answered)                \
	X(hashlist_rotations) X(links_accepted) X(links_refused) X(links_relayed)          \
	X(link_table_forwarded)

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

/* A Prometheus label value: backslash, double quote and newline escaped. */
static void label_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const char *p = s ? s : ""; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static int finish(FILE *f, char **out, size_t *len)
{
	if (ferror(f)) {
		fclose(f);
		free(*out);
		*out = NULL;
		return RNSC_ERR_NOMEM;
	}
	if (fclose(f) != 0) {
		free(*out);
		*out = NULL;
		return RNSC_ERR_NOMEM;
	}
	return 0;
}

int rnsc_node_status_json(rnsc_node *n, char **out, size_t *len)
{
	if (!n || !out || !len)
		return RNSC_ERR_INVAL;
	*out = NULL;
	FILE *f = open_memstream(out, len);
	if (!f)
		return RNSC_ERR_NOMEM;
	rnsc_transport *t = rnsc_node_transport(n);
	const rnsc_transport_stats *ts = rnsc_transport_get_stats(t);
	const rnsc_config_settings *set = rnsc_node_settings(n);
	rnsc_node_stats ns;
	rnsc_node_stats_get(n, &ns);
	fprintf(f, "{\"rnsc_version\": ");
	json_str(f, PACKAGE_VERSION);
	fprintf(f, ", \"transport_enabled\": %s, \"transport_id\": \"",
		set && set->enable_transport ? "true" : "false");
	const uint8_t *id = rnsc_transport_id(t);
	for (int i = 0; i < RNSC_TRUNCATED_HASHLEN; i++)
		fprintf(f, "%02x", id[i]);
	fprintf(f, "\", \"paths\": %zu, \"known_destinations\": %zu, \"links\": %zu, "
		   "\"relayed_links\": %zu",
		rnsc_transport_path_count(t), rnsc_transport_known_count(t),
		rnsc_transport_link_count(t), rnsc_transport_link_table_count(t));
	fprintf(f, ",\n \"node\": {\"rx_frames\": %llu, \"ifac_dropped\": %llu, \"ingest_errors\": "
		   "%llu, \"tx_frames\": %llu, \"tx_errors\": %llu}",
		(unsigned long long)ns.rx_frames, (unsigned long long)ns.ifac_dropped,
		(unsigned long long)ns.ingest_errors, (unsigned long long)ns.tx_frames,
		(unsigned long long)ns.tx_errors);
	fprintf(f, ",\n \"transport\": {");
	const char *sep = "";
#define X(name)                                                                            \
	fprintf(f, "%s\"" #name "\": %llu", sep, (unsigned long long)ts->name);            \
	sep = ", ";
	TRANSPORT_COUNTERS(X)
#undef X
	fprintf(f, "},\n \"interfaces\": [");
	rnsc_iface_host *ih = rnsc_node_ifaces(n);
	size_t cnt = rnsc_iface_host_count(ih);
	for (size_t i = 0; i < cnt; i++) {
		rnsc_iface *fc = rnsc_iface_host_at(ih, i);
		rnsc_iface_status st;
		if (rnsc_iface_status_get(fc, &st) != 0)
			continue;
		char desc[256];
		if (rnsc_iface_describe(fc, desc, sizeof(desc)) < 0)
			desc[0] = '\0';
		rnsc_iface *parent = rnsc_iface_parent(fc);
		fprintf(f, "%s\n  {\"name\": ", i ? "," : "");
		json_str(f, st.name);
		fprintf(f, ", \"description\": ");
		json_str(f, desc);
		fprintf(f, ", \"type\": ");
		json_str(f, st.type);
		fprintf(f, ", \"plugin\": ");
		json_str(f, st.plugin);
		fprintf(f, ", \"parent\": ");
		if (parent)
			json_str(f, rnsc_iface_name(parent));
		else
			fprintf(f, "null");
		fprintf(f, ", \"status\": \"%s\", \"rx_bytes\": %llu, \"tx_bytes\": %llu, "
			   "\"rx_packets\": %llu, \"tx_packets\": %llu, \"bitrate\": %llu, "
			   "\"hw_mtu\": %zu, \"children\": %u, \"delivered\": %llu, \"drops\": {",
			st.stats.online ? "up" : "down", (unsigned long long)st.stats.rx_bytes,
			(unsigned long long)st.stats.tx_bytes, (unsigned long long)st.stats.rx_packets,
			(unsigned long long)st.stats.tx_packets, (unsigned long long)st.stats.bitrate,
			st.stats.hw_mtu, st.stats.children, (unsigned long long)st.delivered);
		for (int d = 0; d < RNSC_IFACE_DROP_COUNT; d++)
			fprintf(f, "%s\"%s\": %llu", d ? ", " : "", drop_names[d],
				(unsigned long long)st.drops[d]);
		fprintf(f, "}}");
	}
	fprintf(f, "\n ]\n}\n");
	return finish(f, out, len);
}

static void metric_head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

int rnsc_node_status_metrics(rnsc_node *n, char **out, size_t *len)
{
	if (!n || !out || !len)
		return RNSC_ERR_INVAL;
	*out = NULL;
	FILE *f = open_memstream(out, len);
	if (!f)
		return RNSC_ERR_NOMEM;
	rnsc_transport *t = rnsc_node_transport(n);
	const rnsc_transport_stats *ts = rnsc_transport_get_stats(t);
	rnsc_node_stats ns;
	rnsc_node_stats_get(n, &ns);

	metric_head(f, "rnsc_paths", "gauge", "Entries in the path table.");
	fprintf(f, "rnsc_paths %zu\n", rnsc_transport_path_count(t));
	metric_head(f, "rnsc_known_destinations", "gauge", "Identities remembered from announces.");
	fprintf(f, "rnsc_known_destinations %zu\n", rnsc_transport_known_count(t));
	metric_head(f, "rnsc_links", "gauge", "Links of this node's own destinations and initiators.");
	fprintf(f, "rnsc_links %zu\n", rnsc_transport_link_count(t));
	metric_head(f, "rnsc_relayed_links", "gauge", "Entries in the link table (links carried).");
	fprintf(f, "rnsc_relayed_links %zu\n", rnsc_transport_link_table_count(t));
	metric_head(f, "rnsc_node_rx_frames_total", "counter", "Frames received on all interfaces.");
	fprintf(f, "rnsc_node_rx_frames_total %llu\n", (unsigned long long)ns.rx_frames);
	metric_head(f, "rnsc_node_tx_frames_total", "counter", "Frames sent on all interfaces.");
	fprintf(f, "rnsc_node_tx_frames_total %llu\n", (unsigned long long)ns.tx_frames);
	metric_head(f, "rnsc_node_dropped_total", "counter",
		    "Frames the node dropped before or in the engine, by reason.");
	fprintf(f, "rnsc_node_dropped_total{reason=\"ifac\"} %llu\n",
		(unsigned long long)ns.ifac_dropped);
	fprintf(f, "rnsc_node_dropped_total{reason=\"ingest\"} %llu\n",
		(unsigned long long)ns.ingest_errors);
	fprintf(f, "rnsc_node_dropped_total{reason=\"tx_error\"} %llu\n",
		(unsigned long long)ns.tx_errors);
#define X(name)                                                                            \
	metric_head(f, "rnsc_transport_" #name "_total", "counter",                         \
		    "Transport engine counter " #name ".");                                 \
	fprintf(f, "rnsc_transport_" #name "_total %llu\n", (unsigned long long)ts->name);
	TRANSPORT_COUNTERS(X)
#undef X

	rnsc_iface_host *ih = rnsc_node_ifaces(n);
	size_t cnt = rnsc_iface_host_count(ih);
	static const struct {
		const char *name, *type, *help;
	} per_if[] = {
		{"rnsc_interface_up", "gauge", "1 while the interface is online."},
		{"rnsc_interface_rx_bytes_total", "counter", "Bytes received."},
		{"rnsc_interface_tx_bytes_total", "counter", "Bytes sent."},
		{"rnsc_interface_rx_packets_total", "counter", "Packets received."},
		{"rnsc_interface_tx_packets_total", "counter", "Packets sent."},
		{"rnsc_interface_bitrate_bits", "gauge", "Bitrate the interface assumes."},
		{"rnsc_interface_dropped_total", "counter", "Data the interface dropped, by reason."},
	};
	for (size_t m = 0; m < sizeof(per_if) / sizeof(per_if[0]); m++) {
		metric_head(f, per_if[m].name, per_if[m].type, per_if[m].help);
		for (size_t i = 0; i < cnt; i++) {
			rnsc_iface_status st;
			if (rnsc_iface_status_get(rnsc_iface_host_at(ih, i), &st) != 0)
				continue;
			const rnsc_iface_stats *s = &st.stats;
			unsigned long long v[] = {(unsigned long long)(s->online != 0), s->rx_bytes,
						  s->tx_bytes, s->rx_packets, s->tx_packets,
						  s->bitrate};
			int ndrops = m == 6 ? RNSC_IFACE_DROP_COUNT : 1;
			for (int d = 0; d < ndrops; d++) {
				fprintf(f, "%s{interface=", per_if[m].name);
				label_str(f, st.name);
				fprintf(f, ",type=");
				label_str(f, st.type);
				if (m == 6)
					fprintf(f, ",reason=\"%s\"} %llu\n", drop_names[d],
						(unsigned long long)st.drops[d]);
				else
					fprintf(f, "} %llu\n", v[m]);
			}
		}
	}
	return finish(f, out, len);
}
