/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "node_rpc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <unistd.h>

#include "config.h"
#include "iface_host.h"
#include "node_traffic.h"
#include "crypto.h"
#include "msgpack.h"
#include "rpc.h"

#define RPC_MAX_CONNS 16
#define RPC_CONN_TIMEOUT_NS (10ull * 1000000000ull)

static const char *WHO = "rpc";

typedef struct rpc_conn {
	struct rnsc_node_rpc *srv;
	int fd;
	rnsc_watch *w;
	rnsc_timer *tmo;
	rnsc_rpc_conn c;
	int answered; /* response queued: close once written */
	int slot;
} rpc_conn;

struct rnsc_node_rpc {
	rnsc_node *n;
	rnsc_ctx *ctx;
	rnsc_loop *loop;
	int fd;
	rnsc_watch *w;
	uint8_t key[64];
	size_t key_len;
	rpc_conn *conns[RPC_MAX_CONNS];
	rnsc_node_rpc_stats st;
	rnsc_node_traffic *traffic; /* the rates interface_stats serves */
};

/* ---- a growable msgpack buffer: every document is written twice (size, then bytes) ------ */

typedef int (*mp_build_fn)(rnsc_mp_writer *w, void *ud);

static int mp_build(mp_build_fn fn, void *ud, uint8_t **out, size_t *len)
{
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, NULL, 0);
	fn(&w, ud);
	int n = rnsc_mp_writer_finish(&w);
	if (n < 0)
		return n;
	uint8_t *buf = malloc((size_t)n ? (size_t)n : 1);
	if (!buf)
		return RNSC_ERR_NOMEM;
	rnsc_mp_writer_init(&w, buf, (size_t)n);
	fn(&w, ud);
	int m = rnsc_mp_writer_finish(&w);
	if (m != n) {
		free(buf);
		return m < 0 ? m : RNSC_ERR_STATE; /* the document changed between passes */
	}
	*out = buf;
	*len = (size_t)n;
	return 0;
}

static void kstr(rnsc_mp_writer *w, const char *k)
{
	rnsc_mp_write_cstr(w, k);
}

static void kv_int(rnsc_mp_writer *w, const char *k, int64_t v)
{
	kstr(w, k);
	rnsc_mp_write_int(w, v);
}

static void kv_u(rnsc_mp_writer *w, const char *k, uint64_t v)
{
	kstr(w, k);
	rnsc_mp_write_uint(w, v);
}

static void kv_nil(rnsc_mp_writer *w, const char *k)
{
	kstr(w, k);
	rnsc_mp_write_nil(w);
}

static void kv_bool(rnsc_mp_writer *w, const char *k, int v)
{
	kstr(w, k);
	rnsc_mp_write_bool(w, v);
}

static void kv_dbl(rnsc_mp_writer *w, const char *k, double v)
{
	kstr(w, k);
	rnsc_mp_write_double(w, v);
}

static void kv_str(rnsc_mp_writer *w, const char *k, const char *v)
{
	kstr(w, k);
	if (v)
		rnsc_mp_write_cstr(w, v);
	else
		rnsc_mp_write_nil(w);
}

static void kv_bin(rnsc_mp_writer *w, const char *k, const uint8_t *p, size_t len)
{
	kstr(w, k);
	if (p)
		rnsc_mp_write_bin(w, p, len);
	else
		rnsc_mp_write_nil(w);
}

/* ---- interface_stats ------------------------------------------------------------------- */

/* The class the reference gives a spawned connection of a listening interface. */
static const char *child_type(const char *type)
{
	static const char *const map[][2] = {{"TCPServerInterface", "TCPClientInterface"},
					     {"LocalServerInterface", "LocalClientInterface"},
					     {"BackboneInterface", "BackboneClientInterface"},
					     {"RNodeMultiInterface", "RNodeSubInterface"}};
	for (size_t i = 0; type && i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(type, map[i][0]) == 0)
			return map[i][1];
	return type;
}

static const char *const drop_names[] = {"runt",    "oversize", "garbage", "partial",
					 "offline", "txqueue",  "refused", "idle"};
_Static_assert(sizeof(drop_names) / sizeof(drop_names[0]) == RNSC_IFACE_DROP_COUNT,
	       "one name per drop reason");

#define TRANSPORT_COUNTERS RNSC_TRANSPORT_COUNTERS

typedef struct stats_ud {
	rnsc_node *n;
	rnsc_ctx *ctx;
	const rnsc_node_traffic *traffic;
	uint64_t now_ms;
	long rss;
} stats_ud;

/* A frequency as the reference returns it: int 0 until there are samples, else a float. */
static void kv_freq(rnsc_mp_writer *w, const char *k, double v)
{
	if (v == 0.0)
		kv_int(w, k, 0);
	else
		kv_dbl(w, k, v);
}

/* A speed: Transport.count_traffic_loop's float once measured, int 0 before. */
static void kv_rate(rnsc_mp_writer *w, const char *k, double v)
{
	if (v == 0.0)
		kv_int(w, k, 0);
	else
		kv_dbl(w, k, v);
}

/* A time.time() the reference initialises to int 0. */
static void kv_time(rnsc_mp_writer *w, const char *k, uint64_t ms)
{
	if (ms == 0)
		kv_int(w, k, 0);
	else
		kv_dbl(w, k, (double)ms / 1000.0);
}

static void sum_astats(rnsc_transport_iface_astats *a, const rnsc_transport_iface_astats *c)
{
	a->arxc += c->arxc, a->arxb += c->arxb, a->atxc += c->atxc, a->atxb += c->atxb;
	a->prxc += c->prxc, a->prxb += c->prxb, a->ptxc += c->ptxc, a->ptxb += c->ptxb;
	a->ia_freq += c->ia_freq, a->oa_freq += c->oa_freq;
	a->ip_freq += c->ip_freq, a->op_freq += c->op_freq;
	if (c->burst_active && (!a->burst_active || c->burst_activated < a->burst_activated))
		a->burst_activated = c->burst_activated;
	a->burst_active |= c->burst_active;
	if (c->pr_burst_active &&
	    (!a->pr_burst_active || c->pr_burst_activated < a->pr_burst_activated))
		a->pr_burst_activated = c->pr_burst_activated;
	a->pr_burst_active |= c->pr_burst_active;
}

/* The transport side of interface_stats. As the reference's spawned interfaces report to
 * their parent (received_announce, sent_announce and the path request counterparts feed
 * the parent's counters and deques), a listener adds its children's counters and
 * frequencies to its own, and its ingress state (fed by those deques in the reference)
 * is taken as in a burst while any child is. Held announces and queues stay per
 * interface. A listener the engine does not know gets its children's rate settings. */
static void iface_astats(stats_ud *u, rnsc_iface *f, rnsc_transport_iface_astats *a, int *have_rate)
{
	memset(a, 0, sizeof(*a));
	/* u->now_ms for every interface: the document is built twice (size, then bytes) and
	 * must come out the same */
	*have_rate = rnsc_node_iface_astats(u->n, f, u->now_ms, a) == 0;
	if (rnsc_iface_parent(f))
		return;
	rnsc_iface_host *ih = rnsc_node_ifaces(u->n);
	size_t cnt = rnsc_iface_host_count(ih);
	for (size_t i = 0; i < cnt; i++) {
		rnsc_iface *c = rnsc_iface_host_at(ih, i);
		rnsc_transport_iface_astats cs;
		if (rnsc_iface_parent(c) != f || rnsc_node_iface_astats(u->n, c, u->now_ms, &cs))
			continue;
		sum_astats(a, &cs);
		if (!*have_rate) {
			a->has_rate_target = cs.has_rate_target;
			a->rate_target_s = cs.rate_target_s;
			a->rate_grace = cs.rate_grace;
			a->rate_penalty_s = cs.rate_penalty_s;
			*have_rate = 1;
		}
	}
}

static void write_iface(rnsc_mp_writer *w, stats_ud *u, rnsc_iface *f)
{
	rnsc_transport_iface_astats as;
	int have_rate = 0;
	iface_astats(u, f, &as, &have_rate);
	rnsc_iface_status st;
	memset(&st, 0, sizeof(st));
	(void)rnsc_iface_status_get(f, &st);
	char desc[256];
	if (rnsc_iface_describe(f, desc, sizeof(desc)) < 0 || !desc[0])
		snprintf(desc, sizeof(desc), "%s", st.name ? st.name : "");
	uint8_t h[32] = {0};
	(void)rnsc_sha256(u->ctx, h, (const uint8_t *)desc, strlen(desc)); /* Interface.get_hash */
	const char *netname = NULL;
	size_t ifac_size = 0;
	int mode = rnsc_node_iface_mode(u->n, f, &netname, &ifac_size);
	rnsc_iface *parent = rnsc_iface_parent(f);
	char pdesc[256] = "";
	uint8_t ph[32] = {0};
	if (parent) {
		if (rnsc_iface_describe(parent, pdesc, sizeof(pdesc)) < 0 || !pdesc[0])
			snprintf(pdesc, sizeof(pdesc), "%s", rnsc_iface_name(parent));
		(void)rnsc_sha256(u->ctx, ph, (const uint8_t *)pdesc, strlen(pdesc));
	}
	int listener = !parent && (st.stats.children > 0 ||
				   (st.type && (strstr(st.type, "Server") ||
						strcmp(st.type, "BackboneInterface") == 0)));
	rnsc_mp_write_map(w, 58 + (parent ? 2 : 0));
	kstr(w, "clients");
	if (listener)
		rnsc_mp_write_uint(w, st.stats.children);
	else
		rnsc_mp_write_nil(w);
	if (parent) {
		kv_str(w, "parent_interface_name", pdesc);
		kv_bin(w, "parent_interface_hash", ph, 32);
	}
	kv_u(w, "bitrate", st.stats.bitrate);
	rnsc_traffic_rates tr;
	rnsc_node_traffic_iface(u->traffic, f, &tr);
	kv_rate(w, "rxs", tr.rxs);
	kv_rate(w, "txs", tr.txs);
	kv_rate(w, "arxs", tr.arxs);
	kv_rate(w, "atxs", tr.atxs);
	kv_rate(w, "prxs", tr.prxs);
	kv_rate(w, "ptxs", tr.ptxs);
	/* Interface.ifac_signature exists once a network name or passphrase is set. */
	const uint8_t *sig = NULL;
	uint64_t ifac_viol = 0;
	if (rnsc_node_iface_ifac(u->n, f, &sig, &ifac_size, &ifac_viol)) {
		kv_bin(w, "ifac_signature", sig, RNSC_SIGLEN);
		kv_u(w, "ifac_size", ifac_size);
	} else {
		kv_nil(w, "ifac_signature");
		kv_nil(w, "ifac_size");
	}
	kv_str(w, "ifac_netname", netname);
	kv_nil(w, "autoconnect_source");
	kv_u(w, "announce_queue", as.announce_queue);
	kv_str(w, "name", desc);
	kv_str(w, "short_name", st.name);
	kv_bin(w, "hash", h, 32);
	kv_str(w, "type", parent ? child_type(st.type) : st.type);
	kv_u(w, "mtu", st.stats.hw_mtu);
	kv_u(w, "rxb", st.stats.rx_bytes);
	kv_u(w, "txb", st.stats.tx_bytes);
	kv_u(w, "arxb", as.arxb);
	kv_u(w, "atxb", as.atxb);
	kv_u(w, "arxc", as.arxc);
	kv_u(w, "atxc", as.atxc);
	kv_u(w, "prxb", as.prxb);
	kv_u(w, "ptxb", as.ptxb);
	kv_u(w, "prxc", as.prxc);
	kv_u(w, "ptxc", as.ptxc);
	kv_u(w, "txdrp", st.drops[RNSC_IFACE_DROP_TXQUEUE] + st.drops[RNSC_IFACE_DROP_OFFLINE]);
	kv_int(w, "txdrb", 0);
	kv_bool(w, "txstalled", 0);
	kv_int(w, "txbuffered", 0);
	kv_freq(w, "incoming_announce_frequency", as.ia_freq);
	kv_freq(w, "outgoing_announce_frequency", as.oa_freq);
	kv_freq(w, "incoming_pr_frequency", as.ip_freq);
	kv_freq(w, "outgoing_pr_frequency", as.op_freq);
	/* None unless set (transport nodes default to 3600 s / 0 / 5) */
	if (have_rate && as.has_rate_target) {
		kv_u(w, "announce_rate_target", as.rate_target_s);
		kv_u(w, "announce_rate_penalty", as.rate_penalty_s);
		kv_u(w, "announce_rate_grace", as.rate_grace);
	} else {
		kv_nil(w, "announce_rate_target");
		kv_nil(w, "announce_rate_penalty");
		kv_nil(w, "announce_rate_grace");
	}
	kv_u(w, "held_announces", as.held_announces);
	kv_bool(w, "burst_active", as.burst_active);
	kv_time(w, "burst_activated", as.burst_activated);
	kv_nil(w, "burst_count"); /* Interface.ic_burst_count is None in the reference */
	kv_bool(w, "pr_burst_active", as.pr_burst_active);
	kv_time(w, "pr_burst_activated", as.pr_burst_activated);
	kv_nil(w, "pr_burst_count");
	kv_bool(w, "status", st.stats.online != 0);
	kv_int(w, "mode", mode);
	kv_nil(w, "gravity");
	kv_bool(w, "announces_to_internal", 0);
	kv_int(w, "protocol_violations", 0);
	kv_u(w, "ifac_violations", ifac_viol);
	kv_int(w, "packet_filter_hits", 0);
	/* rnsc's own */
	kv_str(w, "rnsc_plugin", st.plugin);
	kv_u(w, "rnsc_rx_packets", st.stats.rx_packets);
	kv_u(w, "rnsc_tx_packets", st.stats.tx_packets);
	kv_u(w, "rnsc_delivered", st.delivered);
	kstr(w, "rnsc_drops");
	rnsc_mp_write_map(w, RNSC_IFACE_DROP_COUNT);
	for (int d = 0; d < RNSC_IFACE_DROP_COUNT; d++)
		kv_u(w, drop_names[d], st.drops[d]);
}

static long rss_bytes(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long pages = 0, rss = 0;
	if (!f)
		return -1;
	if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
		rss = -1;
	fclose(f);
	return rss < 0 ? -1 : rss * sysconf(_SC_PAGESIZE);
}

static int build_stats(rnsc_mp_writer *w, void *ud)
{
	stats_ud *u = ud;
	rnsc_node *n = u->n;
	rnsc_transport *t = rnsc_node_transport(n);
	const rnsc_config_settings *set = rnsc_node_settings(n);
	rnsc_iface_host *ih = rnsc_node_ifaces(n);
	size_t cnt = rnsc_iface_host_count(ih);
	uint64_t rxb = 0, txb = 0;
	for (size_t i = 0; i < cnt; i++) {
		rnsc_iface *f = rnsc_iface_host_at(ih, i);
		rnsc_iface_status st;
		if (rnsc_iface_parent(f) || rnsc_iface_status_get(f, &st))
			continue;
		rxb += st.stats.rx_bytes;
		txb += st.stats.tx_bytes;
	}
	int transport = set && set->enable_transport;
	rnsc_mp_write_map(w, 38 + (transport ? 4 : 0));
	kstr(w, "interfaces");
	rnsc_mp_write_array(w, cnt);
	for (size_t i = 0; i < cnt; i++)
		write_iface(w, u, rnsc_iface_host_at(ih, i));
	rnsc_traffic_totals tt;
	rnsc_node_traffic_totals(u->traffic, &tt);
	if (!u->traffic) /* no sampler (no shared instance): the interfaces' sums */
		tt.rxb = rxb, tt.txb = txb;
	kv_u(w, "rxb", tt.rxb);
	kv_u(w, "txb", tt.txb);
	kv_rate(w, "rxs", tt.speed.rxs);
	kv_rate(w, "txs", tt.speed.txs);
	kv_u(w, "arxb", tt.arxb);
	kv_u(w, "atxb", tt.atxb);
	kv_rate(w, "arxs", tt.speed.arxs);
	kv_rate(w, "atxs", tt.speed.atxs);
	kv_freq(w, "arxf", tt.arxf);
	kv_freq(w, "atxf", tt.atxf);
	kv_u(w, "prxb", tt.prxb);
	kv_u(w, "ptxb", tt.ptxb);
	kv_rate(w, "prxs", tt.speed.prxs);
	kv_rate(w, "ptxs", tt.speed.ptxs);
	kv_freq(w, "prxf", tt.prxf);
	kv_freq(w, "ptxf", tt.ptxf);
	kv_int(w, "rxpps", tt.rxpps);
	kv_int(w, "txpps", tt.txpps);
	/* rnsc processes inbound packets as they arrive: its inbound queues stay empty. */
	static const char *const zero[] = {"rxqt",       "rxqd",       "rxqa",       "rxqp",
					   "rxqil",      "rxqtd",      "rxqdd",      "rxqad",
					   "rxqpd",      "rxqild",     "tqpressure", "dqpressure",
					   "aqpressure", "pqpressure", "ilqpressure"};
	for (size_t i = 0; i < sizeof(zero) / sizeof(zero[0]); i++)
		kv_int(w, zero[i], 0);
	kv_nil(w, "txq");
	if (transport) {
		kv_bin(w, "transport_id", rnsc_transport_id(t), RNSC_TRUNCATED_HASHLEN);
		kv_nil(w, "network_id");
		kv_dbl(w, "transport_uptime",
		       (double)(u->now_ms - rnsc_node_started_ms(n)) / 1000.0);
		const uint8_t *probe = rnsc_node_probe_hash(n);
		kv_bin(w, "probe_responder", probe, RNSC_TRUNCATED_HASHLEN);
	}
	kstr(w, "rss");
	if (u->rss >= 0)
		rnsc_mp_write_int(w, u->rss);
	else
		rnsc_mp_write_nil(w);
	/* rnsc's own */
	kv_str(w, "rnsc_version", PACKAGE_VERSION);
	kstr(w, "rnsc");
	rnsc_node_stats ns;
	rnsc_node_stats_get(n, &ns);
	const rnsc_transport_stats *ts = rnsc_transport_get_stats(t);
	rnsc_mp_write_map(w, 10);
	kv_bool(w, "transport_enabled", transport);
	char hx[2 * RNSC_TRUNCATED_HASHLEN + 1];
	for (int i = 0; i < RNSC_TRUNCATED_HASHLEN; i++) /* a str: rnstatus -j hexes bytes at the
							    top two levels only */
		snprintf(hx + 2 * i, 3, "%02x", rnsc_transport_id(t)[i]);
	kv_str(w, "engine_transport_id", hx);
	kv_bool(w, "shared_instance", rnsc_node_is_shared_instance(n));
	kv_u(w, "paths", rnsc_transport_path_count(t));
	kv_u(w, "known_destinations", rnsc_transport_known_count(t));
	kv_u(w, "links", rnsc_transport_link_count(t));
	kv_u(w, "relayed_links", rnsc_transport_link_table_count(t));
	kstr(w, "node");
	rnsc_mp_write_map(w, 5);
	kv_u(w, "rx_frames", ns.rx_frames);
	kv_u(w, "ifac_dropped", ns.ifac_dropped);
	kv_u(w, "ingest_errors", ns.ingest_errors);
	kv_u(w, "tx_frames", ns.tx_frames);
	kv_u(w, "tx_errors", ns.tx_errors);
	kstr(w, "transport");
	size_t nc = 0;
#define X(name) nc++;
	TRANSPORT_COUNTERS(X)
#undef X
	rnsc_mp_write_map(w, nc);
#define X(name) kv_u(w, #name, ts->name);
	TRANSPORT_COUNTERS(X)
#undef X
	kstr(w, "rpc");
	rnsc_node_rpc_stats rs = {0};
	rnsc_node_rpc_stats_get(rnsc_node_rpc_server(n), &rs);
	rnsc_mp_write_map(w, 3);
	kv_u(w, "served", rs.served);
	kv_u(w, "refused", rs.refused);
	kv_u(w, "dropped", rs.dropped);
	return 0;
}

int rnsc_node_interface_stats(rnsc_node *n, rnsc_ctx *ctx, uint8_t **out, size_t *len)
{
	if (!n || !ctx || !out || !len)
		return RNSC_ERR_INVAL;
	const rnsc_node_rpc *srv = rnsc_node_rpc_server(n);
	stats_ud u = {.n = n,
		      .ctx = ctx,
		      .traffic = srv ? srv->traffic : NULL,
		      .now_ms = rnsc_node_now_ms(),
		      .rss = rss_bytes()};
	return mp_build(build_stats, &u, out, len);
}

/* ---- the calls -------------------------------------------------------------------------- */

static int streq(const char *s, size_t len, const char *lit)
{
	return s && strlen(lit) == len && memcmp(s, lit, len) == 0;
}

typedef struct ans_ud {
	rnsc_node *n;
	const rnsc_rpc_request *q;
	int kind;
	int64_t iv;
	double dv;
	const char *sv;
	const uint8_t *bv;
	size_t bl;
} ans_ud;

enum {
	A_NIL,
	A_BOOL,
	A_INT,
	A_DBL,
	A_STR,
	A_BIN,
	A_EMPTY_LIST,
	A_EMPTY_MAP,
	A_PATHS,
	A_RATES,
	A_BLACKHOLE
};

/* Reticulum.get_rate_table: one map per destination; times are floats once set (the
 * reference's initial blocked_until is the int 0). */
static int build_rates(rnsc_mp_writer *w, rnsc_node *n)
{
	rnsc_transport *t = rnsc_node_transport(n);
	size_t cur = 0, cnt = 0;
	uint8_t h[RNSC_TRUNCATED_HASHLEN];
	rnsc_arate e;
	while (rnsc_transport_rate_next(t, &cur, NULL, NULL))
		cnt++;
	rnsc_mp_write_array(w, cnt);
	cur = 0;
	while (rnsc_transport_rate_next(t, &cur, h, &e)) {
		rnsc_mp_write_map(w, 5);
		kv_bin(w, "hash", h, sizeof(h));
		kv_dbl(w, "last", (double)e.last / 1000.0);
		kv_u(w, "rate_violations", e.rate_violations);
		kv_time(w, "blocked_until", e.blocked_until);
		kstr(w, "timestamps");
		rnsc_mp_write_array(w, e.n_timestamps);
		for (unsigned i = 0; i < e.n_timestamps; i++)
			rnsc_mp_write_double(w, (double)e.timestamps[i] / 1000.0);
	}
	return 0;
}

/* str(interface) as the reference puts it in path_table and next_hop_if_name, e.g.
 * "TCPInterface[Client on Srv/127.0.0.1:38604]": the plugin's description, else the
 * configured name, else "None" (str(None)). */
static const char *iface_str(rnsc_node *n, uint32_t id, char *buf, size_t cap)
{
	const char *nm = rnsc_node_iface_name(n, id);
	if (!nm)
		return "None";
	rnsc_iface *f = rnsc_iface_host_find(rnsc_node_ifaces(n), nm);
	if (f && rnsc_iface_describe(f, buf, cap) > 0)
		return buf;
	return nm;
}

static int build_paths(rnsc_mp_writer *w, rnsc_node *n, const rnsc_rpc_request *q)
{
	char desc[160];
	rnsc_transport *t = rnsc_node_transport(n);
	size_t cur = 0, cnt = 0;
	uint8_t h[RNSC_TRUNCATED_HASHLEN];
	rnsc_transport_path p;
	while (rnsc_transport_path_next(t, &cur, h, &p))
		if (!q->has_max_hops || (int64_t)p.hops <= q->max_hops)
			cnt++;
	rnsc_mp_write_array(w, cnt);
	cur = 0;
	while (rnsc_transport_path_next(t, &cur, h, &p)) {
		if (q->has_max_hops && (int64_t)p.hops > q->max_hops)
			continue;
		rnsc_mp_write_map(w, 6);
		kv_bin(w, "hash", h, sizeof(h));
		kv_dbl(w, "timestamp", (double)p.timestamp / 1000.0);
		kv_bin(w, "via", p.next_hop, sizeof(p.next_hop));
		kv_u(w, "hops", p.hops);
		kv_dbl(w, "expires", (double)p.expires / 1000.0);
		kv_str(w, "interface", iface_str(n, p.iface, desc, sizeof(desc)));
	}
	return 0;
}

static int build_answer(rnsc_mp_writer *w, void *ud)
{
	ans_ud *a = ud;
	switch (a->kind) {
	case A_NIL:
		return rnsc_mp_write_nil(w);
	case A_BOOL:
		return rnsc_mp_write_bool(w, (int)a->iv);
	case A_INT:
		return rnsc_mp_write_int(w, a->iv);
	case A_DBL:
		return rnsc_mp_write_double(w, a->dv);
	case A_STR:
		return rnsc_mp_write_cstr(w, a->sv);
	case A_BIN:
		return rnsc_mp_write_bin(w, a->bv, a->bl);
	case A_EMPTY_LIST:
		return rnsc_mp_write_array(w, 0);
	case A_EMPTY_MAP:
		return rnsc_mp_write_map(w, 0);
	case A_RATES:
		return build_rates(w, a->n);
	case A_BLACKHOLE: /* Transport.blackholed_identities, every source */
		return rnsc_blackhole_list_write(w, rnsc_node_transport(a->n), NULL);
	default:
		return build_paths(w, a->n, a->q);
	}
}

int rnsc_node_rpc_answer(rnsc_node *n, rnsc_ctx *ctx, const uint8_t *req, size_t len, uint8_t **out,
			 size_t *out_len)
{
	if (!n || !ctx || !req || !out || !out_len)
		return RNSC_ERR_INVAL;
	rnsc_rpc_request q;
	if (rnsc_rpc_request_parse(&q, req, len))
		return RNSC_ERR_MALFORMED;
	rnsc_transport *t = rnsc_node_transport(n);
	ans_ud a = {.n = n, .q = &q, .kind = A_NIL};
	char ifdesc[160];
	int have_dest = q.dest && q.dest_len == RNSC_TRUNCATED_HASHLEN;
	rnsc_transport_path p;
	int known = have_dest && rnsc_transport_path_get(t, q.dest, &p) == 0;
	if (q.get) {
		if (streq(q.get, q.get_len, "interface_stats"))
			return rnsc_node_interface_stats(n, ctx, out, out_len);
		if (streq(q.get, q.get_len, "path_table")) {
			a.kind = A_PATHS;
		} else if (streq(q.get, q.get_len, "rate_table")) {
			a.kind = A_RATES;
		} else if (streq(q.get, q.get_len, "next_hop_if_name")) {
			a.kind = A_STR;
			a.sv = known ? iface_str(n, p.iface, ifdesc, sizeof(ifdesc)) : "None";
		} else if (streq(q.get, q.get_len, "next_hop")) {
			if (known) {
				a.kind = A_BIN;
				a.bv = p.next_hop;
				a.bl = sizeof(p.next_hop);
			}
		} else if (streq(q.get, q.get_len, "first_hop_timeout")) {
			/* Transport.first_hop_timeout: MTU * per-byte latency + DEFAULT_PER_HOP_TIMEOUT */
			a.kind = A_DBL;
			a.dv = RNSC_PER_HOP_TIMEOUT_MS / 1000.0;
			rnsc_iface_status st;
			rnsc_iface *f = known ? rnsc_node_iface_by_id(n, p.iface) : NULL;
			if (f && rnsc_iface_status_get(f, &st) == 0 && st.stats.bitrate)
				a.dv += (double)RNSC_MTU * 8.0 / (double)st.stats.bitrate;
		} else if (streq(q.get, q.get_len, "lowest_interface_bitrate") ||
			   streq(q.get, q.get_len, "medium_path_timeout")) {
			uint64_t low = rnsc_node_lowest_bitrate(n);
			if (q.get[0] == 'l') {
				if (low) {
					a.kind = A_INT;
					a.iv = (int64_t)low;
				}
			} else {
				a.kind = low ? A_DBL : A_INT;
				a.iv = 0;
				a.dv = rnsc_node_medium_path_timeout_s(n);
			}
		} else if (streq(q.get, q.get_len, "link_count")) {
			a.kind = A_INT;
			a.iv = (int64_t)rnsc_transport_link_table_count(t);
		} else if (streq(q.get, q.get_len, "active_link_count")) {
			a.kind = A_INT;
			a.iv = (int64_t)rnsc_transport_link_table_active_count(t);
		} else if (streq(q.get, q.get_len, "packet_rssi") ||
			   streq(q.get, q.get_len, "packet_snr") ||
			   streq(q.get, q.get_len, "packet_q") ||
			   streq(q.get, q.get_len, "profiling_results")) {
			a.kind = A_NIL;
		} else if (streq(q.get, q.get_len, "blackholed_identities")) {
			a.kind = A_BLACKHOLE;
		} else if (streq(q.get, q.get_len, "is_blackholed")) {
			a.kind = A_BOOL;
			a.iv = have_dest && rnsc_transport_blackhole_get(t, q.dest, NULL) == 0;
		} else {
			return RNSC_ERR_NOTFOUND;
		}
	} else if (q.drop) {
		if (streq(q.drop, q.drop_len, "path")) {
			a.kind = A_BOOL;
			a.iv = have_dest && rnsc_transport_expire_path(t, q.dest) == 0;
		} else if (streq(q.drop, q.drop_len, "all_via")) {
			a.kind = A_INT;
			a.iv = 0;
			uint8_t drop[64][RNSC_TRUNCATED_HASHLEN];
			size_t nd;
			do { /* expire in batches: the table must not change while iterating */
				nd = 0;
				size_t cur = 0;
				uint8_t h[RNSC_TRUNCATED_HASHLEN];
				rnsc_transport_path e;
				while (nd < 64 && rnsc_transport_path_next(t, &cur, h, &e))
					if (have_dest && e.timestamp &&
					    memcmp(e.next_hop, q.dest, RNSC_TRUNCATED_HASHLEN) == 0)
						memcpy(drop[nd++], h, sizeof(h));
				for (size_t i = 0; i < nd; i++)
					if (rnsc_transport_expire_path(t, drop[i]) == 0)
						a.iv++;
			} while (nd == 64);
		} else if (streq(q.drop, q.drop_len, "announce_queues")) {
			a.kind = A_INT; /* Transport.drop_announce_queues */
			a.iv = (int64_t)rnsc_transport_drop_announce_queues(t);
		} else {
			return RNSC_ERR_NOTFOUND;
		}
	} else if (q.dest_data || q.ident_data) {
		/* A shared-instance client's recall/retain lands in this instance's table, so the
		 * known destinations stay one table written by one process (Reticulum.py's
		 * destination_data / identity_data calls). An unknown operation gets no answer, as
		 * the reference gives none. */
		uint64_t now = rnsc_node_now_ms();
		int hash_ok = q.dest && q.dest_len == RNSC_TRUNCATED_HASHLEN;
		int rc;
		if (q.dest_data && streq(q.dest_data, q.dest_data_len, "used"))
			rc = hash_ok ? rnsc_transport_known_used(t, q.dest, now) : 0;
		else if (q.dest_data && streq(q.dest_data, q.dest_data_len, "retain"))
			rc = hash_ok ? rnsc_transport_known_retain(t, q.dest) : 0;
		else if (q.dest_data && streq(q.dest_data, q.dest_data_len, "unretain"))
			rc = hash_ok ? rnsc_transport_known_unretain(t, q.dest, now) : 0;
		else if (!q.dest_data && streq(q.ident_data, q.ident_data_len, "retain"))
			rc = hash_ok ? rnsc_transport_known_retain_identity(t, q.dest) : 0;
		else
			return RNSC_ERR_NOTFOUND;
		a.kind = A_BOOL;
		a.iv = rc == 1;
	} else if (q.has_blackhole || q.has_unblackhole) {
		/* Reticulum.blackhole_identity: False for a hash of the wrong length, else
		 * Transport's True (done) or None (already / not blackholed) */
		a.kind = A_BOOL;
		a.iv = 0;
		if (q.bh_id && q.bh_id_len == RNSC_TRUNCATED_HASHLEN) {
			int rc = q.has_blackhole
					 ? rnsc_node_blackhole(n, q.bh_id, q.until, q.until_int,
							       q.reason, q.reason_len)
					 : rnsc_node_unblackhole(n, q.bh_id);
			if (rc == 1)
				a.iv = 1;
			else if (rc == 0)
				a.kind = A_NIL;
		}
	} else if (q.manage) {
		/* rnstatus --attach/--detach/--reload (rns 1.5.7): rnsc attaches interfaces only at
		 * start, so it answers as rnsd with enable_interface_management = no: False */
		rnsc_log(ctx, RNSC_LOG_NOTICE, WHO,
			 "refused RPC %.*s of interface \"%.*s\": rnsc daemon does not attach or "
			 "detach interfaces while running (restart it with the changed config)",
			 (int)q.manage_len, q.manage, (int)q.name_len, q.name ? q.name : "");
		a.kind = A_BOOL;
		a.iv = 0;
	} else {
		return RNSC_ERR_NOTFOUND;
	}
	return mp_build(build_answer, &a, out, out_len);
}

/* ---- the server on the node's loop ---------------------------------------------------- */

static void conn_close(rpc_conn *c)
{
	rnsc_node_rpc *s = c->srv;
	if (c->w)
		rnsc_loop_watch_remove(s->loop, c->w);
	if (c->tmo)
		rnsc_loop_timer_cancel(s->loop, c->tmo);
	close(c->fd);
	rnsc_rpc_conn_free(&c->c);
	s->conns[c->slot] = NULL;
	free(c);
}

static void conn_flush(rpc_conn *c)
{
	const uint8_t *p;
	size_t n;
	while ((n = rnsc_rpc_conn_pending(&c->c, &p)) > 0) {
		ssize_t k = send(c->fd, p, n, MSG_NOSIGNAL);
		if (k > 0) {
			rnsc_rpc_conn_consume(&c->c, (size_t)k);
			continue;
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			rnsc_loop_watch_modify(c->srv->loop, c->w, RNSC_EV_READ | RNSC_EV_WRITE);
			return;
		}
		c->answered = 1; /* peer gone */
		conn_close(c);
		return;
	}
	if (c->answered || c->c.state == RNSC_RPC_FAILED) {
		conn_close(c);
		return;
	}
	rnsc_loop_watch_modify(c->srv->loop, c->w, RNSC_EV_READ);
}

static void conn_io(rnsc_loop *loop, rnsc_watch *w, int fd, unsigned events, void *ud)
{
	(void)loop;
	(void)w;
	rpc_conn *c = ud;
	rnsc_node_rpc *s = c->srv;
	if (events & RNSC_EV_WRITE) {
		conn_flush(c);
		return; /* c may be gone */
	}
	uint8_t buf[4096];
	ssize_t k = recv(fd, buf, sizeof(buf), 0);
	if (k < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (k <= 0) {
		if (c->c.state != RNSC_RPC_DONE)
			s->st.dropped++;
		conn_close(c);
		return;
	}
	if (c->answered) { /* bytes after the request: the reference reads no more */
		s->st.dropped++;
		conn_close(c);
		return;
	}
	int st = rnsc_rpc_conn_feed(&c->c, buf, (size_t)k);
	if (st == RNSC_RPC_FAILED) {
		if (c->c.err == RNSC_ERR_AUTH) {
			s->st.refused++;
			rnsc_log(s->ctx, RNSC_LOG_WARNING, WHO,
				 "a local client failed RPC authentication; connection closed");
		} else {
			s->st.dropped++;
			rnsc_log(s->ctx, RNSC_LOG_DEBUG, WHO, "RPC connection dropped: %s",
				 rnsc_strerror(c->c.err));
		}
		conn_flush(c); /* sends #FAILURE# when that is why, then closes */
		return;
	}
	if (st == RNSC_RPC_DONE) {
		uint8_t *resp = NULL;
		size_t rl = 0;
		int rc = rnsc_node_rpc_answer(s->n, s->ctx, c->c.msg, c->c.msg_len, &resp, &rl);
		if (rc) {
			s->st.dropped++;
			rnsc_log(s->ctx, RNSC_LOG_DEBUG, WHO, "RPC request not served: %s",
				 rnsc_strerror(rc));
			conn_close(c);
			return;
		}
		rc = rnsc_rpc_conn_send(&c->c, resp, rl);
		free(resp);
		if (rc) {
			s->st.dropped++;
			conn_close(c);
			return;
		}
		rnsc_node_flush(s->n); /* drop path etc. may have queued work */
		s->st.served++;
		c->answered = 1;
	}
	conn_flush(c);
}

static void conn_timeout(rnsc_loop *loop, rnsc_timer *t, void *ud)
{
	(void)loop;
	(void)t;
	rpc_conn *c = ud;
	c->tmo = NULL; /* a fired one-shot is freed by the loop */
	c->srv->st.dropped++;
	conn_close(c);
}

static void accept_cb(rnsc_loop *loop, rnsc_watch *w, int fd, unsigned events, void *ud)
{
	(void)w;
	(void)events;
	rnsc_node_rpc *s = ud;
	for (int k = 0; k < 16; k++) {
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd < 0)
			return;
		int slot = -1;
		for (int i = 0; i < RPC_MAX_CONNS; i++)
			if (!s->conns[i]) {
				slot = i;
				break;
			}
		rpc_conn *c = slot >= 0 ? calloc(1, sizeof(*c)) : NULL;
		if (!c) {
			s->st.dropped++;
			close(cfd);
			continue;
		}
		c->srv = s;
		c->fd = cfd;
		c->slot = slot;
		s->conns[slot] = c;
		if (rnsc_rpc_conn_init(&c->c, s->ctx, 1, s->key, s->key_len,
				       RNSC_RPC_REQUEST_MAX) ||
		    rnsc_loop_watch_add(loop, cfd, RNSC_EV_READ, conn_io, c, &c->w) ||
		    rnsc_loop_timer_add(loop, RPC_CONN_TIMEOUT_NS, 0, conn_timeout, c, &c->tmo)) {
			s->st.dropped++;
			conn_close(c);
			continue;
		}
		conn_flush(c); /* the challenge */
	}
}

int rnsc_node_rpc_start(rnsc_node *n, rnsc_ctx *ctx, rnsc_node_rpc **out)
{
	*out = NULL;
	rnsc_node_rpc *s = calloc(1, sizeof(*s));
	if (!s)
		return RNSC_ERR_NOMEM;
	s->n = n;
	s->ctx = ctx;
	s->loop = rnsc_node_loop(n);
	s->fd = -1;
	struct sockaddr_storage addr;
	unsigned alen = 0;
	int rc = rnsc_rpc_endpoint(ctx, rnsc_node_settings(n), rnsc_node_config_dir(n), &addr,
				   &alen, s->key, &s->key_len);
	if (rc)
		goto fail;
	s->fd = socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->fd < 0) {
		rc = RNSC_ERR_SYS;
		goto fail;
	}
	int one = 1;
	if (addr.ss_family == AF_INET)
		(void)setsockopt(s->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s->fd, (struct sockaddr *)&addr, alen) != 0 || listen(s->fd, 16) != 0) {
		rc = errno == EADDRINUSE ? RNSC_ERR_IO : RNSC_ERR_SYS;
		goto fail;
	}
	if ((rc = rnsc_loop_watch_add(s->loop, s->fd, RNSC_EV_READ, accept_cb, s, &s->w)))
		goto fail;
	if ((rc = rnsc_node_traffic_new(n, &s->traffic))) {
		rnsc_loop_watch_remove(s->loop, s->w);
		goto fail;
	}
	*out = s;
	return 0;
fail:
	if (s->fd >= 0)
		close(s->fd);
	free(s);
	return rc;
}

void rnsc_node_rpc_stop(rnsc_node_rpc *s)
{
	if (!s)
		return;
	for (int i = 0; i < RPC_MAX_CONNS; i++)
		if (s->conns[i])
			conn_close(s->conns[i]);
	if (s->w)
		rnsc_loop_watch_remove(s->loop, s->w);
	rnsc_node_traffic_del(s->traffic);
	close(s->fd);
	memset(s->key, 0, sizeof(s->key));
	free(s);
}

void rnsc_node_rpc_stats_get(const rnsc_node_rpc *r, rnsc_node_rpc_stats *out)
{
	if (!out)
		return;
	if (r)
		*out = r->st;
	else
		memset(out, 0, sizeof(*out));
}
