/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "node_status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "err.h"
#include "msgpack.h"
#include "node_rpc.h"

/* Names of enum rnsc_iface_drop, in order (iface_abi.h). */
static const char *const drop_names[] = {"runt",    "oversize", "garbage", "partial",
					 "offline", "txqueue",  "refused", "idle"};
_Static_assert(sizeof(drop_names) / sizeof(drop_names[0]) == RNSC_IFACE_DROP_COUNT,
	       "one name per drop reason");

/* The engine's counters, named as in the JSON and (with rnsc_transport_ and _total) in the
 * metrics. */
#define TRANSPORT_COUNTERS RNSC_TRANSPORT_COUNTERS

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
	uint8_t *mp = NULL;
	size_t mlen = 0;
	int rc = rnsc_node_interface_stats(n, rnsc_node_ctx(n), &mp, &mlen);
	if (rc)
		return rc;
	rc = rnsc_status_json_from_mp(mp, mlen, out, len);
	free(mp);
	return rc;
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
	metric_head(f, "rnsc_links", "gauge",
		    "Links of this node's own destinations and initiators.");
	fprintf(f, "rnsc_links %zu\n", rnsc_transport_link_count(t));
	metric_head(f, "rnsc_relayed_links", "gauge", "Entries in the link table (links carried).");
	fprintf(f, "rnsc_relayed_links %zu\n", rnsc_transport_link_table_count(t));
	metric_head(f, "rnsc_node_rx_frames_total", "counter",
		    "Frames received on all interfaces.");
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
#define X(name)                                                                                    \
	metric_head(f, "rnsc_transport_" #name "_total", "counter",                                \
		    "Transport engine counter " #name ".");                                        \
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
		{"rnsc_interface_dropped_total", "counter",
		 "Data the interface dropped, by reason."},
	};
	for (size_t m = 0; m < sizeof(per_if) / sizeof(per_if[0]); m++) {
		metric_head(f, per_if[m].name, per_if[m].type, per_if[m].help);
		for (size_t i = 0; i < cnt; i++) {
			rnsc_iface_status st;
			if (rnsc_iface_status_get(rnsc_iface_host_at(ih, i), &st) != 0)
				continue;
			const rnsc_iface_stats *s = &st.stats;
			unsigned long long v[] = {(unsigned long long)(s->online != 0),
						  s->rx_bytes,
						  s->tx_bytes,
						  s->rx_packets,
						  s->tx_packets,
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
