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

static void py_float(FILE *f, double v);

void rnsc_py_float_repr(char *buf, size_t cap, double v)
{
	char *o = NULL;
	size_t l = 0;
	FILE *f = open_memstream(&o, &l);
	if (!f) {
		snprintf(buf, cap, "%g", v);
		return;
	}
	py_float(f, v);
	fclose(f);
	snprintf(buf, cap, "%s", o ? o : "");
	free(o);
}

/* A float as Python's repr() writes it (json.dumps uses repr): the shortest digits that
 * read back to the same double, fixed notation for exponents -4..15, else d.ddde+XX. */
static void py_float(FILE *f, double v)
{
	if (v != v) {
		fputs("NaN", f);
		return;
	}
	if (v > 1.7976931348623157e308 || v < -1.7976931348623157e308) {
		fputs(v > 0 ? "Infinity" : "-Infinity", f);
		return;
	}
	char buf[64];
	int p;
	for (p = 1; p <= 17; p++) {
		snprintf(buf, sizeof(buf), "%.*e", p - 1, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	/* buf: [-]d[.ddd]e[+-]XX */
	char *e = strchr(buf, 'e');
	int exp = atoi(e + 1);
	*e = 0;
	const char *m = buf;
	int neg = 0;
	if (*m == '-') {
		neg = 1;
		m++;
	}
	char digits[32];
	size_t nd = 0;
	for (const char *c = m; *c; c++)
		if (*c >= '0' && *c <= '9')
			digits[nd++] = *c;
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	if (neg)
		fputc('-', f);
	if (exp >= -4 && exp < 16) {
		if (exp < 0) {
			fputs("0.", f);
			for (int i = 0; i < -exp - 1; i++)
				fputc('0', f);
			fwrite(digits, 1, nd, f);
		} else {
			for (int i = 0; i <= exp; i++)
				fputc(i < (int)nd ? digits[i] : '0', f);
			fputc('.', f);
			if ((int)nd > exp + 1)
				fwrite(digits + exp + 1, 1, nd - (size_t)exp - 1, f);
			else
				fputc('0', f);
		}
	} else {
		fputc(digits[0], f);
		if (nd > 1) {
			fputc('.', f);
			fwrite(digits + 1, 1, nd - 1, f);
		}
		fprintf(f, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
	}
}

static void json_strn(FILE *f, const uint8_t *p, size_t len)
{
	fputc('"', f);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = p[i];
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* One msgpack value as JSON the way rnstatus -j prints it (json.dumps with bytes turned
 * into hex first). Recursion is bounded by RNSC_MP_MAX_DEPTH. */
static int mp_json(FILE *f, rnsc_mp_reader *r, int depth)
{
	if (depth > RNSC_MP_MAX_DEPTH)
		return RNSC_ERR_TOOBIG;
	rnsc_mp_token t;
	int rc = rnsc_mp_next(r, &t);
	if (rc)
		return rc;
	switch (t.type) {
	case RNSC_MP_NIL:
		fputs("null", f);
		return 0;
	case RNSC_MP_BOOL:
		fputs(t.boolean ? "true" : "false", f);
		return 0;
	case RNSC_MP_UINT:
		fprintf(f, "%llu", (unsigned long long)t.u);
		return 0;
	case RNSC_MP_INT:
		fprintf(f, "%lld", (long long)t.i);
		return 0;
	case RNSC_MP_FLOAT32:
		py_float(f, (double)t.f32);
		return 0;
	case RNSC_MP_FLOAT64:
		py_float(f, t.f64);
		return 0;
	case RNSC_MP_STR:
		json_strn(f, t.p, t.len);
		return 0;
	case RNSC_MP_BIN:
		fputc('"', f);
		for (size_t i = 0; i < t.len; i++)
			fprintf(f, "%02x", t.p[i]);
		fputc('"', f);
		return 0;
	case RNSC_MP_ARRAY:
		fputc('[', f);
		for (size_t i = 0; i < t.len; i++) {
			if (i)
				fputs(", ", f);
			if ((rc = mp_json(f, r, depth + 1)))
				return rc;
		}
		fputc(']', f);
		return 0;
	case RNSC_MP_MAP:
		fputc('{', f);
		for (size_t i = 0; i < t.len; i++) {
			if (i)
				fputs(", ", f);
			rnsc_mp_token k;
			if ((rc = rnsc_mp_peek(r, &k)))
				return rc;
			if (k.type == RNSC_MP_STR || k.type == RNSC_MP_BIN) {
				if ((rc = mp_json(f, r, depth + 1)))
					return rc;
			} else { /* json.dumps turns int, float, bool and None keys into strings */
				fputc('"', f);
				if ((rc = mp_json(f, r, depth + 1)))
					return rc;
				fputc('"', f);
			}
			fputs(": ", f);
			if ((rc = mp_json(f, r, depth + 1)))
				return rc;
		}
		fputc('}', f);
		return 0;
	default: /* ext: rns registers none */
		fputs("null", f);
		return 0;
	}
}

int rnsc_status_json_from_mp(const uint8_t *p, size_t plen, char **out, size_t *len)
{
	if (!p || !out || !len)
		return RNSC_ERR_INVAL;
	*out = NULL;
	FILE *f = open_memstream(out, len);
	if (!f)
		return RNSC_ERR_NOMEM;
	rnsc_mp_reader r;
	rnsc_mp_reader_init(&r, p, plen);
	int rc = mp_json(f, &r, 1);
	fputc('\n', f);
	int frc = finish(f, out, len);
	if (rc || frc) {
		free(*out);
		*out = NULL;
		return rc ? rc : frc;
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
