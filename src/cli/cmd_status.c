/* SPDX-License-Identifier: MIT */
/* rnsc status: the reference's rnstatus (rns 1.5.4, RNS/Utilities/rnstatus.py) on the
 * shared instance's RPC, so it reads an rnsc daemon and a reference rnsd alike. It does
 * what rnstatus does: attaches to the running shared instance (counted among the programs
 * it serves), asks for interface_stats (and link_count with -l) over the instance control
 * socket, and prints them with rnstatus's layout, or as rnstatus -j's JSON, which is also
 * exactly what an rnsc daemon serves at GET /status (one renderer: node_status.h). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

#include "cfgfile.h"
#include "cli.h"
#include "cmd_status_disc.h"
#include "config.h"
#include "msgpack.h"
#include "node.h"
#include "node_rpc.h"
#include "node_status.h"
#include "rpc.h"
#include "status_json.h"
#include "cli_remote.h"

#define RPC_TIMEOUT_MS 10000

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rnsc status [-h] [--config CONFIG] [--version] [--attach name]\n"
		"                   [--detach name] [--reload name] [-a] [-A] [-P] [-l] [-B] [-t]\n"
		"                   [-p] [-b] [-q] [-z] [-s SORT] [-r] [-j] [-R hash] [-i path]\n"
		"                   [-w seconds] [-d] [-D] [--show-stale] [--show-unknown] [-m]\n"
		"                   [-I SECONDS] [-v] [filter]\n\n"
		"Reticulum Network Stack Status: the interfaces of the running shared instance\n"
		"(an rnsc daemon or a reference rnsd), read over its RPC socket, printed as the\n"
		"reference's rnstatus prints them.\n\n"
		"positional arguments:\n"
		"  filter                only display interfaces with names including filter\n\n"
		"options:\n"
		"  -h, --help            show this help message and exit\n"
		"  --config CONFIG       path to alternative Reticulum config directory\n"
		"  --version             show program's version number and exit\n"
		"  --attach name         Attach interface by name\n"
		"  --detach name         Detach interface by name\n"
		"  --reload name         Reload interface by name\n"
		"                        (rns 1.5.7's interface management, asked of the shared\n"
		"                        instance: an rnsd 1.5.7 does it; an rnsc daemon, which\n"
		"                        attaches interfaces only at start, answers \"Could not\")\n"
		"  -a, --all             show all interfaces (also spawned connections and local\n"
		"                        programs)\n"
		"  -A, --announce-stats  show announce stats\n"
		"  -P, --pr-stats        show path request stats\n"
		"  -l, --link-stats      show link stats (entries in the link table)\n"
		"  -B, --burst           only show interfaces with active bursts\n"
		"  -t, --totals          display traffic totals\n"
		"  -p, --pps             display packets per second in totals\n"
		"  -s SORT, --sort SORT  sort interfaces by [rate, traffic, rx, tx, rxs, txs, anns,\n"
		"                        arx, atx, arxc, atxc, held, prx, ptx, prxc, ptxc, pvs,\n"
		"                        ivs, flt, txdrp, txdrb, txbuf]\n"
		"  -r, --reverse         reverse sorting\n"
		"  -j, --json            output in JSON format (the document GET /status serves)\n"
		"  -R hash               transport identity hash of remote instance to get status\n"
		"                        from (its enable_remote_management must allow -i)\n"
		"  -i path               path to identity used for remote management\n"
		"  -w seconds            timeout before giving up on remote queries (default 15)\n"
		"  -m, --monitor         continuously monitor status\n"
		"  -I SECONDS, --monitor-interval SECONDS\n"
		"                        refresh interval for monitor mode (default: 1)\n"
		"  -v, --verbose\n\n"
		"  -b, --blocked-ips     list the blocked IP addresses of interfaces that have them\n"
		"  -q, --queues          show the ingress queue pressure\n"
		"  -z, --profiling       show profiling results (rnsc, and a reference instance\n"
		"                        without a running profiler, report none)\n\n"
		"  -d, --discovered      list discovered interfaces (what the instance's\n"
		"                        discover_interfaces handler stored)\n"
		"  -D                    show details and config entries for discovered interfaces\n"
		"  --show-stale          show stale discovery entries\n"
		"  --show-unknown        show discovery entries without version info\n"
		"                        (rns 1.5.7's; rnsc lists every entry, as rns 1.5.4, so\n"
		"                        both are accepted and change nothing)\n\n"
		"Exit status (as rnstatus): 0 printed, 1 no shared instance to ask (and --attach,\n"
		"--detach or --reload not done), 2 the instance\n"
		"did not answer (or refused the RPC key, or a remote request failed), 10 the link to a\n"
		"remote instance failed, 12 no path to it, 20 an unsupported option or bad remote\n"
		"arguments, and 2 for a bad command line.\n");
}

/* ---- a small tree over the msgpack answer ---------------------------------------------- */

typedef struct val {
	rnsc_mp_type type;
	int b;
	double num; /* UINT, INT, FLOAT */
	int is_float;
	const uint8_t *p;  /* STR, BIN */
	size_t len;        /* STR/BIN bytes, ARRAY/MAP items */
	struct val *items; /* ARRAY: len items; MAP: 2*len (key, value) */
} val;

static void val_free(val *v)
{
	if (v->type == RNSC_MP_ARRAY || v->type == RNSC_MP_MAP) {
		size_t n = v->type == RNSC_MP_MAP ? 2 * v->len : v->len;
		for (size_t i = 0; v->items && i < n; i++)
			val_free(&v->items[i]);
		free(v->items);
	}
}

static int val_parse(rnsc_mp_reader *r, val *v, int depth)
{
	memset(v, 0, sizeof(*v));
	if (depth > RNSC_MP_MAX_DEPTH)
		return RNSC_ERR_TOOBIG;
	rnsc_mp_token t;
	int rc = rnsc_mp_next(r, &t);
	if (rc)
		return rc;
	v->type = t.type;
	switch (t.type) {
	case RNSC_MP_BOOL:
		v->b = t.boolean;
		break;
	case RNSC_MP_UINT:
		v->num = (double)t.u;
		break;
	case RNSC_MP_INT:
		v->num = (double)t.i;
		break;
	case RNSC_MP_FLOAT32:
		v->num = t.f32;
		v->is_float = 1;
		v->type = RNSC_MP_FLOAT64;
		break;
	case RNSC_MP_FLOAT64:
		v->num = t.f64;
		v->is_float = 1;
		break;
	case RNSC_MP_STR:
	case RNSC_MP_BIN:
		v->p = t.p;
		v->len = t.len;
		break;
	case RNSC_MP_ARRAY:
	case RNSC_MP_MAP: {
		size_t n = t.type == RNSC_MP_MAP ? 2 * t.len : t.len;
		v->len = t.len;
		v->items = calloc(n ? n : 1, sizeof(val));
		if (!v->items)
			return RNSC_ERR_NOMEM;
		for (size_t i = 0; i < n; i++)
			if ((rc = val_parse(r, &v->items[i], depth + 1)))
				return rc;
		break;
	}
	default:
		break;
	}
	return 0;
}

static const val *get(const val *m, const char *key)
{
	if (!m || m->type != RNSC_MP_MAP)
		return NULL;
	size_t kl = strlen(key);
	for (size_t i = 0; i < m->len; i++) {
		const val *k = &m->items[2 * i];
		if (k->type == RNSC_MP_STR && k->len == kl && memcmp(k->p, key, kl) == 0)
			return &m->items[2 * i + 1];
	}
	return NULL;
}

static int is_num(const val *v)
{
	return v &&
	       (v->type == RNSC_MP_UINT || v->type == RNSC_MP_INT || v->type == RNSC_MP_FLOAT64);
}

static double num(const val *m, const char *key)
{
	const val *v = get(m, key);
	if (v && v->type == RNSC_MP_BOOL)
		return v->b;
	return is_num(v) ? v->num : 0.0;
}

static int truthy(const val *v)
{
	if (!v || v->type == RNSC_MP_NIL)
		return 0;
	if (v->type == RNSC_MP_BOOL)
		return v->b;
	if (is_num(v))
		return v->num != 0;
	return v->len != 0;
}

/* A str value copied into buf (bytes as hex). */
static const char *str(const val *m, const char *key, char *buf, size_t cap)
{
	const val *v = get(m, key);
	buf[0] = 0;
	if (!v || (v->type != RNSC_MP_STR && v->type != RNSC_MP_BIN))
		return NULL;
	if (v->type == RNSC_MP_BIN) {
		size_t n = v->len * 2 + 1 <= cap ? v->len : (cap - 1) / 2;
		cli_hex(buf, v->p, n);
		return buf;
	}
	size_t n = v->len < cap - 1 ? v->len : cap - 1;
	memcpy(buf, v->p, n);
	buf[n] = 0;
	return buf;
}

/* ---- the reference's number formats ---------------------------------------------------- */

static void prettysize(char *out, size_t cap, double n, const char *suffix)
{
	static const char *const units[] = {"", "K", "M", "G", "T", "P", "E", "Z"};
	if (strcmp(suffix, "b") == 0)
		n *= 8;
	for (size_t i = 0; i < 8; i++) {
		if (fabs(n) < 1000.0) {
			if (i == 0)
				snprintf(out, cap, "%.0f %s%s", n, units[i], suffix);
			else
				snprintf(out, cap, "%.2f %s%s", n, units[i], suffix);
			return;
		}
		n /= 1000.0;
	}
	snprintf(out, cap, "%.2fY%s", n, suffix);
}

static void prettyspeed(char *out, size_t cap, double bps)
{
	char t[40];
	prettysize(t, sizeof(t), bps / 8, "b");
	snprintf(out, cap, "%sps", t);
}

static void speed_str(char *out, size_t cap, double n)
{
	static const char *const units[] = {"", "k", "M", "G", "T", "P", "E", "Z"};
	for (size_t i = 0; i < 8; i++) {
		if (fabs(n) < 1000.0) {
			snprintf(out, cap, "%3.2f %s%s", n, units[i], "bps");
			return;
		}
		n /= 1000.0;
	}
	snprintf(out, cap, "%.2f %s%s", n, "Y", "bps");
}

static void prettyfrequency_lpf1(char *out, size_t cap, double hz)
{
	/* prettyfrequency(hz, d=1, lpf=True): str(round(num, 1)) */
	static const char *const units[] = {"", "K", "M", "G", "T", "P", "E", "Z"};
	if (hz == 0) {
		snprintf(out, cap, "0 Hz");
		return;
	}
	double n = hz;
	for (size_t i = 0; i < 8; i++) {
		if (fabs(n) < 1000.0) {
			char r[64];
			rnsc_py_float_repr(r, sizeof(r), round(n * 10) / 10);
			snprintf(out, cap, "%s %sHz", r, units[i]);
			return;
		}
		n /= 1000.0;
	}
	snprintf(out, cap, "%.2fYHz", n);
}

/* Python's len() of a UTF-8 string: code points. */
static size_t ulen(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}

static void pad_to(char *s, size_t cap, size_t width)
{
	size_t l = ulen(s), b = strlen(s);
	while (l < width && b + 1 < cap) {
		s[b++] = ' ';
		s[b] = 0;
		l++;
	}
}

/* ---- printing ------------------------------------------------------------------------- */

typedef struct opts {
	int all, astats, pstats, lstats, totals, pps, json, reverse, verbose, burst;
	int blocked, queues, profiling; /* -b, -q, -z */
	const char *sort, *filter;
} opts;

static const char *sort_key;
static int sort_rev;

static double sort_value(const val *i)
{
	const char *s = sort_key;
	if (!strcmp(s, "rate") || !strcmp(s, "bitrate"))
		return num(i, "bitrate");
	if (!strcmp(s, "rx"))
		return num(i, "rxb");
	if (!strcmp(s, "tx"))
		return num(i, "txb");
	if (!strcmp(s, "rxs"))
		return num(i, "rxs");
	if (!strcmp(s, "txs"))
		return num(i, "txs");
	if (!strcmp(s, "traffic"))
		return num(i, "rxb") + num(i, "txb");
	if (!strcmp(s, "anns") || !strcmp(s, "announces"))
		return num(i, "incoming_announce_frequency") +
		       num(i, "outgoing_announce_frequency");
	if (!strcmp(s, "arx"))
		return num(i, "incoming_announce_frequency");
	if (!strcmp(s, "atx"))
		return num(i, "outgoing_announce_frequency");
	if (!strcmp(s, "arxc"))
		return num(i, "arxc");
	if (!strcmp(s, "atxc"))
		return num(i, "atxc");
	if (!strcmp(s, "prx"))
		return num(i, "incoming_pr_frequency");
	if (!strcmp(s, "ptx"))
		return num(i, "outgoing_pr_frequency");
	if (!strcmp(s, "prxc"))
		return num(i, "prxc");
	if (!strcmp(s, "ptxc"))
		return num(i, "ptxc");
	if (!strcmp(s, "held"))
		return num(i, "held_announces");
	if (!strcmp(s, "pvs"))
		return num(i, "protocol_violations");
	if (!strcmp(s, "ivs"))
		return num(i, "ifac_violations");
	if (!strcmp(s, "flt"))
		return num(i, "packet_filter_hits");
	if (!strcmp(s, "gravity") || !strcmp(s, "g"))
		return num(i, "gravity");
	if (!strcmp(s, "txdrp"))
		return num(i, "txdrp");
	if (!strcmp(s, "txdrb"))
		return num(i, "txdrb");
	if (!strcmp(s, "txbuf"))
		return num(i, "txbuffered");
	return 0;
}

static int sort_cmp(const void *a, const void *b)
{
	double x = sort_value(*(const val *const *)a), y = sort_value(*(const val *const *)b);
	/* Python's sort(reverse=not sort_reverse): descending unless -r; stable either way */
	int c = (x > y) - (x < y);
	return sort_rev ? c : -c;
}

static int starts(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

static int ci_contains(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	for (const char *h = hay; *h; h++)
		if (strncasecmp(h, needle, n) == 0)
			return 1;
	return n == 0;
}

/* rnstatus's "(↓x% / ↑y% of flow)" after the announce or path request rates. */
static void flow_pct(const val *i, const char *rk, const char *tk, char *out, size_t cap)
{
	if (!(get(i, "prxs") && get(i, "rxs") && get(i, "ptxs") && get(i, "txs")))
		return;
	double rxs = num(i, "rxs"), txs = num(i, "txs"), r = num(i, rk), t = num(i, tk);
	double rp = rxs && r ? fmin(100.0, r / rxs * 100.0) : 0.0;
	double tp = txs && t ? fmin(100.0, t / txs * 100.0) : 0.0;
	char pct[96];
	snprintf(pct, sizeof(pct), "(\xe2\x86\x93%d%% / \xe2\x86\x91%d%% of flow)", (int)rp,
		 (int)tp);
	size_t l = strlen(out);
	if (l)
		snprintf(out + l, cap - l, " %s", pct);
	else
		snprintf(out, cap, "%s", pct);
}

/* The Path Rqs. / Announces totals of -t with -P / -A. */
static void totals_kind(const val *st, const char *title, const char *rb, const char *tb,
			const char *rs, const char *ts, const char *rf, const char *tf)
{
	if (!(get(st, rb) && get(st, tb) && get(st, rs) && get(st, ts)))
		return;
	char a[64], b[64], rx[256], tx[256], fa[64], fb[64];
	prettysize(a, sizeof(a), num(st, rb), "B");
	prettysize(b, sizeof(b), num(st, tb), "B");
	snprintf(rx, sizeof(rx), "\xe2\x86\x93%s", a);
	snprintf(tx, sizeof(tx), "\xe2\x86\x91%s", b);
	size_t lr = ulen(rx), lt = ulen(tx);
	pad_to(tx, sizeof(tx), lr);
	pad_to(rx, sizeof(rx), lt);
	double rxs = num(st, "rxs"), txs = num(st, "txs");
	double rp = rxs && num(st, rs) ? fmin(100.0, num(st, rs) / rxs * 100.0) : 0.0;
	double tp = txs && num(st, ts) ? fmin(100.0, num(st, ts) / txs * 100.0) : 0.0;
	/* prettyfrequency(hz) with d=2, lpf=False */
	static const char *const u[] = {"\xc2\xb5", "m", "", "K", "M", "G", "T", "P", "E", "Z"};
	double f2[2] = {num(st, rf), num(st, tf)};
	char *fo[2] = {fa, fb};
	for (int k = 0; k < 2; k++) {
		double v = f2[k] * 1e6;
		if (f2[k] == 0) {
			snprintf(fo[k], 64, "0 Hz");
			continue;
		}
		size_t j = 0;
		while (j < 9 && fabs(v) >= 1000.0) {
			v /= 1000.0;
			j++;
		}
		snprintf(fo[k], 64, "%.2f %sHz", v, u[j]);
	}
	prettyspeed(a, sizeof(a), num(st, rs));
	prettyspeed(b, sizeof(b), num(st, ts));
	printf("\n %s : %s  %s, %d%% of flow, %s\n                %s  %s, %d%% of flow, %s\n",
	       title, tx, b, (int)tp, fb, rx, a, (int)rp, fa);
}

/* rnstatus's burst_str / pburst_str: "<lead>burst [on N ]for <time since activation>". */
static void burst_str(const val *i, const char *active, const char *count, const char *since,
		      const char *lead, char *out, size_t cap)
{
	out[0] = 0;
	if (!truthy(get(i, active)))
		return;
	char on[48] = "", t[64];
	if (truthy(get(i, count)))
		snprintf(on, sizeof(on), "on %.0f ", num(i, count));
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	cli_prettytime(t, sizeof(t), (double)ts.tv_sec + ts.tv_nsec / 1e9 - num(i, since));
	snprintf(out, cap, "%sburst %sfor %s", lead, on, t);
}

static void print_iface(const val *i, const opts *o)
{
	char name[512], b1[64], b2[64];
	str(i, "name", name, sizeof(name));
	const val *clients_v = get(i, "clients");
	int has_clients = is_num(clients_v);
	double clients = has_clients ? clients_v->num : 0;
	printf("\n");
	char ss[64];
	snprintf(ss, sizeof(ss), "%s", truthy(get(i, "status")) ? "Up" : "Down");
	const val *g = get(i, "gravity");
	if (truthy(g)) {
		char gr[40];
		rnsc_py_float_repr(gr, sizeof(gr), g->num);
		snprintf(ss + strlen(ss), sizeof(ss) - strlen(ss), ", gravity %s",
			 g->is_float ? gr : (snprintf(gr, sizeof(gr), "%.0f", g->num), gr));
	}
	int mode = (int)num(i, "mode");
	const char *modestr = mode == 0x03   ? "Access Point"
			      : mode == 0x02 ? "Point-to-Point"
			      : mode == 0x04 ? "Roaming"
			      : mode == 0x05 ? "Boundary"
			      : mode == 0x06 ? "Gateway"
			      : mode == 0x07 ? "Internal"
					     : "Full";
	char clients_string[1024] = "";
	if (has_clients) {
		if (starts(name, "Shared Instance[")) {
			long cnum = (long)clients - 1;
			if (cnum < 0)
				cnum = 0;
			snprintf(clients_string, sizeof(clients_string),
				 "Serving   : %ld program%s", cnum, cnum == 1 ? "" : "s");
		} else if (starts(name, "I2PInterface[")) {
			if (truthy(get(i, "i2p_connectable")))
				snprintf(clients_string, sizeof(clients_string),
					 "Peers     : %.0f connected I2P endpoint%s", clients,
					 clients == 1 ? "" : "s");
		} else {
			snprintf(clients_string, sizeof(clients_string), "Clients   : %.0f",
				 clients);
			if (is_num(get(i, "blocked_ips")) && num(i, "blocked_ips") > 0)
				snprintf(clients_string + strlen(clients_string),
					 sizeof(clients_string) - strlen(clients_string),
					 "\n    Blocked   : %.0f IPs", num(i, "blocked_ips"));
			const val *bl = get(i, "blocked_ip_list");
			if (o->blocked && bl && bl->type == RNSC_MP_ARRAY) /* -b: the addresses */
				for (size_t k = 0; k < bl->len; k++)
					if (bl->items[k].type == RNSC_MP_STR &&
					    strlen(clients_string) + bl->items[k].len + 20 <
						    sizeof(clients_string))
						snprintf(clients_string + strlen(clients_string),
							 sizeof(clients_string) -
								 strlen(clients_string),
							 "\n                %.*s",
							 (int)bl->items[k].len,
							 (const char *)bl->items[k].p);
		}
	}
	printf(" %s\n", name);
	if (str(i, "autoconnect_source", b1, sizeof(b1)))
		printf("    Source    : Auto-connect via <%s>\n", b1);
	if (str(i, "ifac_netname", b1, sizeof(b1)))
		printf("    Network   : %s\n", b1);
	printf("    Status    : %s\n", ss);
	if (has_clients && clients_string[0])
		printf("    %s\n", clients_string);
	if (!(starts(name, "Shared Instance[") || starts(name, "TCPInterface[Client") ||
	      starts(name, "LocalInterface[")))
		printf("    Mode      : %s%s\n", modestr,
		       truthy(get(i, "announces_to_internal")) ? " (a>i)" : "");
	if (truthy(get(i, "txdrp"))) {
		prettysize(b1, sizeof(b1), num(i, "txdrb"), "B");
		printf("    TX Drops  : %.0f (%s)\n", num(i, "txdrp"), b1);
	}
	if (is_num(get(i, "bitrate"))) {
		speed_str(b1, sizeof(b1), num(i, "bitrate"));
		printf("    Rate      : %s, MTU %.0f\n", b1, num(i, "mtu"));
	}
	if (is_num(get(i, "peers")))
		printf("    Peers     : %.0f reachable\n", num(i, "peers"));
	const val *sig = get(i, "ifac_signature");
	if (sig && sig->type == RNSC_MP_BIN && sig->len >= 5) {
		cli_hex(b1, sig->p + sig->len - 5, 5);
		printf("    Access    : %.0f-bit IFAC by <\xe2\x80\xa6%s>\n",
		       num(i, "ifac_size") * 8, b1);
	}
	if (o->astats && num(i, "announce_queue") > 0) {
		double q = num(i, "announce_queue");
		printf("    Queued    : %.0f announce%s\n", q, q == 1 ? "" : "s");
	}
	if (o->astats && num(i, "held_announces") > 0) {
		double q = num(i, "held_announces");
		printf("    Held      : %.0f announce%s\n", q, q == 1 ? "" : "s");
	}
	char rxb_str[160], txb_str[160], iaf[160] = "", oaf[160] = "", ipf[160] = "", opf[160] = "";
	char pc_str[160] = "", rpc_str[160] = "";
	prettysize(b1, sizeof(b1), num(i, "rxb"), "B");
	snprintf(rxb_str, sizeof(rxb_str), "\xe2\x86\x93%s", b1);
	prettysize(b1, sizeof(b1), num(i, "txb"), "B");
	snprintf(txb_str, sizeof(txb_str), "\xe2\x86\x91%s", b1);
	int asr = o->astats && is_num(get(i, "incoming_announce_frequency"));
	if (asr) {
		double oan = num(i, "outgoing_announce_frequency"),
		       ian = num(i, "incoming_announce_frequency");
		if (starts(name, "Shared Instance[") && has_clients && clients > 0)
			oan = oan - oan / clients;
		prettyfrequency_lpf1(oaf, sizeof(oaf), oan);
		prettyfrequency_lpf1(iaf, sizeof(iaf), ian);
		if (has_clients && clients > 0) {
			prettyfrequency_lpf1(b1, sizeof(b1),
					     num(i, "outgoing_announce_frequency") / clients);
			snprintf(pc_str, sizeof(pc_str), " %s/c", b1);
		}
		flow_pct(i, "arxs", "atxs", pc_str, sizeof(pc_str));
	}
	int psr = o->pstats && is_num(get(i, "incoming_pr_frequency"));
	if (psr) {
		double opn = num(i, "outgoing_pr_frequency"), ipn = num(i, "incoming_pr_frequency");
		if (starts(name, "Shared Instance[") && has_clients && clients > 0)
			opn = opn - opn / clients;
		prettyfrequency_lpf1(b1, sizeof(b1), opn);
		prettyfrequency_lpf1(b2, sizeof(b2), ipn);
		if (o->astats) {
			snprintf(opf, sizeof(opf), "\xe2\x86\x91%s", b1);
			snprintf(ipf, sizeof(ipf), "\xe2\x86\x93%s", b2);
		} else {
			snprintf(opf, sizeof(opf), "%s\xe2\x86\x91", b1);
			snprintf(ipf, sizeof(ipf), "%s\xe2\x86\x93", b2);
		}
		if (has_clients && clients > 0) {
			prettyfrequency_lpf1(b1, sizeof(b1),
					     num(i, "outgoing_pr_frequency") / clients);
			snprintf(rpc_str, sizeof(rpc_str), " %s/c", b1);
		}
		flow_pct(i, "prxs", "ptxs", rpc_str, sizeof(rpc_str));
	}
	size_t amlen = ulen(iaf) > ulen(oaf) ? ulen(iaf) : ulen(oaf);
	pad_to(iaf, sizeof(iaf), amlen);
	strncat(iaf, "\xe2\x86\x93", sizeof(iaf) - strlen(iaf) - 1);
	pad_to(oaf, sizeof(oaf), amlen);
	strncat(oaf, "\xe2\x86\x91", sizeof(oaf) - strlen(oaf) - 1);
	size_t mlen = 10;
	const char *all[] = {iaf, oaf, rxb_str, txb_str, ipf, opf};
	for (int k = 0; k < 6; k++)
		if (ulen(all[k]) > mlen)
			mlen = ulen(all[k]);
	pad_to(iaf, sizeof(iaf), mlen);
	pad_to(oaf, sizeof(oaf), mlen);
	pad_to(ipf, sizeof(ipf), mlen);
	pad_to(opf, sizeof(opf), mlen);
	pad_to(rxb_str, sizeof(rxb_str), mlen);
	pad_to(txb_str, sizeof(txb_str), mlen);
	double pv = num(i, "protocol_violations"), iv = num(i, "ifac_violations");
	if (get(i, "protocol_violations") && get(i, "ifac_violations") && (pv || iv)) {
		printf("    Violatns. : %.0f protocol%s", pv, iv ? ", " : "");
		if (iv)
			printf("%.0f IFAC", iv);
		printf("\n");
	}
	if (truthy(get(i, "packet_filter_hits")))
		printf("    Flt. Hits : %.0f\n", num(i, "packet_filter_hits"));
	if (psr) {
		if (truthy(get(i, "prxc")) && truthy(get(i, "ptxc"))) {
			printf("    Path Rqs. : %.0f\xe2\x86\x93 %.0f\xe2\x86\x91 total\n",
			       num(i, "prxc"), num(i, "ptxc"));
			printf("                %s %s\n", opf, rpc_str);
		} else {
			printf("    Path Rqs. : %s %s\n", opf, rpc_str);
		}
		char pburst[160] = "";
		burst_str(i, "pr_burst_active", "pr_burst_count", "pr_burst_activated", "", pburst,
			  sizeof(pburst));
		printf("                %s  %s\n", ipf, pburst);
	}
	if (asr) {
		if (truthy(get(i, "arxc")) && truthy(get(i, "atxc"))) {
			printf("    Announces : %.0f\xe2\x86\x93 %.0f\xe2\x86\x91 total\n",
			       num(i, "arxc"), num(i, "atxc"));
			printf("                %s %s\n", oaf, pc_str);
		} else {
			printf("    Announces : %s %s\n", oaf, pc_str);
		}
		char art_str[200] = "";
		const val *art = get(i, "announce_rate_target"),
			  *arp = get(i, "announce_rate_penalty"),
			  *arg = get(i, "announce_rate_grace");
		if (truthy(art)) {
			char t1[64], t2[64], t3[40];
			cli_prettytime(t1, sizeof(t1), art->num);
			if (is_num(arp)) {
				cli_prettytime(t2, sizeof(t2), arp->num);
				if (truthy(arg)) {
					if (arg->is_float)
						rnsc_py_float_repr(t3, sizeof(t3), arg->num);
					else
						snprintf(t3, sizeof(t3), "%.0f", arg->num);
					snprintf(art_str, sizeof(art_str), "(t:%s/p:%s/g:%s)", t1,
						 t2, t3);
				} else {
					snprintf(art_str, sizeof(art_str), "(t:%s/p:%s)", t1, t2);
				}
			} else {
				snprintf(art_str, sizeof(art_str), "(t:%s)", t1);
			}
		}
		char burst[160] = "";
		burst_str(i, "burst_active", "burst_count", "burst_activated", " ", burst,
			  sizeof(burst));
		printf("                %s %s%s\n", iaf, art_str, burst);
	}
	char rxstat[256], txstat[256];
	snprintf(rxstat, sizeof(rxstat), "%s", rxb_str);
	snprintf(txstat, sizeof(txstat), "%s", txb_str);
	if (get(i, "rxs") && get(i, "txs")) {
		prettyspeed(b1, sizeof(b1), num(i, "rxs"));
		prettyspeed(b2, sizeof(b2), num(i, "txs"));
		snprintf(rxstat + strlen(rxstat), sizeof(rxstat) - strlen(rxstat), "  %s", b1);
		snprintf(txstat + strlen(txstat), sizeof(txstat) - strlen(txstat), "  %s", b2);
	}
	if (truthy(get(i, "txbuffered"))) {
		prettysize(b1, sizeof(b1), num(i, "txbuffered"), "B");
		snprintf(txstat + strlen(txstat), sizeof(txstat) - strlen(txstat),
			 " (%s waiting%s)", b1, truthy(get(i, "txstalled")) ? ", stalled" : "");
	}
	printf("    Traffic   : %s\n                %s\n", txstat, rxstat);
}

static int print_status(const val *stats, const opts *o, int has_lc, double link_count)
{
	const val *ifs = get(stats, "interfaces");
	size_t n = ifs && ifs->type == RNSC_MP_ARRAY ? ifs->len : 0;
	const val **order = calloc(n ? n : 1, sizeof(*order));
	if (!order)
		return CLI_SETUP;
	for (size_t k = 0; k < n; k++)
		order[k] = &ifs->items[k];
	if (o->sort) {
		static char low[32];
		size_t l = 0;
		for (; o->sort[l] && l < sizeof(low) - 1; l++)
			low[l] = (char)(o->sort[l] >= 'A' && o->sort[l] <= 'Z' ? o->sort[l] + 32
									       : o->sort[l]);
		low[l] = 0;
		sort_key = low;
		sort_rev = o->reverse;
		/* a stable sort: insertion, the lists are short */
		for (size_t a = 1; a < n; a++)
			for (size_t b = a; b > 0 && sort_cmp(&order[b - 1], &order[b]) > 0; b--) {
				const val *t = order[b];
				order[b] = order[b - 1];
				order[b - 1] = t;
			}
	}
	for (size_t k = 0; k < n; k++) {
		const val *i = order[k];
		char name[512];
		str(i, "name", name, sizeof(name));
		int hidden =
			starts(name, "LocalInterface[") || starts(name, "TCPInterface[Client") ||
			starts(name, "BackboneInterface[Client on") ||
			starts(name, "AutoInterfacePeer[") || starts(name, "WeaveInterfacePeer[") ||
			starts(name, "I2PInterfacePeer[Connected peer");
		const val *conn = get(i, "i2p_connectable");
		int i2p_hidden = starts(name, "I2PInterface[") && conn &&
				 conn->type == RNSC_MP_BOOL && !conn->b;
		if ((!o->all && (hidden || i2p_hidden)) || i2p_hidden)
			continue;
		if (o->burst) { /* -B: interfaces in a burst, or matching the filter */
			int act = get(i, "burst_active") && get(i, "pr_burst_active") &&
				  (truthy(get(i, "burst_active")) ||
				   truthy(get(i, "pr_burst_active")));
			if (!act && !(o->filter && ci_contains(name, o->filter)))
				continue;
		} else if (o->filter && !ci_contains(name, o->filter)) {
			continue;
		}
		print_iface(i, o);
	}
	free(order);
	char lstr[128] = "";
	const val *tid = get(stats, "transport_id");
	int has_tid = tid && tid->type == RNSC_MP_BIN;
	if (has_lc && o->lstats) {
		const char *ms = link_count == 1 ? "y" : "ies";
		snprintf(lstr, sizeof(lstr), "%s%.0f entr%s in link table", has_tid ? ", " : " ",
			 link_count, ms);
	}
	if (o->totals) {
		char a[64], b[64], rx[256], tx[256];
		prettysize(a, sizeof(a), num(stats, "rxb"), "B");
		prettysize(b, sizeof(b), num(stats, "txb"), "B");
		snprintf(rx, sizeof(rx), "\xe2\x86\x93%s", a);
		snprintf(tx, sizeof(tx), "\xe2\x86\x91%s", b);
		size_t lr = ulen(rx), lt = ulen(tx);
		pad_to(tx, sizeof(tx), lr);
		pad_to(rx, sizeof(rx), lt);
		prettyspeed(a, sizeof(a), num(stats, "rxs"));
		prettyspeed(b, sizeof(b), num(stats, "txs"));
		snprintf(rx + strlen(rx), sizeof(rx) - strlen(rx), "  %s", a);
		snprintf(tx + strlen(tx), sizeof(tx) - strlen(tx), "  %s", b);
		if ((o->pstats || o->astats) && get(stats, "prxs") && get(stats, "ptxs") &&
		    get(stats, "arxs") && get(stats, "atxs")) {
			double rxs = num(stats, "rxs"), txs = num(stats, "txs");
			double parxs = num(stats, "prxs") + num(stats, "arxs");
			double patxs = num(stats, "ptxs") + num(stats, "atxs");
			double drx = rxs ? 100.0 - fmin(100.0, parxs / rxs * 100.0) : 100.0;
			double dtx = txs ? 100.0 - fmin(100.0, patxs / txs * 100.0) : 100.0;
			if (rxs > 0) {
				prettyspeed(a, sizeof(a), rxs * drx / 100.0);
				snprintf(rx + strlen(rx), sizeof(rx) - strlen(rx),
					 ", %d%% data (%s)", (int)drx, a);
			}
			if (txs > 0) {
				prettyspeed(b, sizeof(b), txs * dtx / 100.0);
				snprintf(tx + strlen(tx), sizeof(tx) - strlen(tx),
					 ", %d%% data (%s)", (int)dtx, b);
			}
		}
		if (o->pps) {
			prettysize(a, sizeof(a), num(stats, "rxpps"), "pps");
			prettysize(b, sizeof(b), num(stats, "txpps"), "pps");
			snprintf(rx + strlen(rx), sizeof(rx) - strlen(rx), ", %s", a);
			snprintf(tx + strlen(tx), sizeof(tx) - strlen(tx), ", %s", b);
		}
		printf("\n Totals       : %s\n                %s\n", tx, rx);
		if (o->pstats)
			totals_kind(stats, "Path Rqs.   ", "prxb", "ptxb", "prxs", "ptxs", "prxf",
				    "ptxf");
		if (o->astats)
			totals_kind(stats, "Announces   ", "arxb", "atxb", "arxs", "atxs", "arxf",
				    "atxf");
	}
	if (o->queues) { /* -q: rnstatus's queue pressure block */
		static const char *const q[5][4] = {
			{"tqpressure", "rxqt", "rxqtd", "total"},
			{"dqpressure", "rxqd", "rxqdd", "data"},
			{"aqpressure", "rxqa", "rxqad", "announce"},
			{"pqpressure", "rxqp", "rxqpd", "path request"},
			{"ilqpressure", "rxqil", "rxqild", "ingress limiter"}};
		for (int k = 0; k < 5; k++) {
			char pct[40], drop[48] = "";
			rnsc_py_float_repr(pct, sizeof(pct),
					   round(num(stats, q[k][0]) * 100.0 * 10.0) / 10.0);
			if (truthy(get(stats, q[k][2])))
				snprintf(drop, sizeof(drop), ", %.0f dropped", num(stats, q[k][2]));
			printf(k ? "                %s%% %s, %.0f pkts%s\n"
				 : "\n Qu. Pressure : %s%% %s, %.0f pkts%s\n",
			       pct, q[k][3], num(stats, q[k][1]), drop);
		}
	}
	if (has_tid) {
		char h[40];
		cli_hex(h, tid->p, tid->len < 16 ? tid->len : 16);
		printf("\n Transport Instance <%s> running\n", h);
		const val *nid = get(stats, "network_id");
		if (nid && nid->type == RNSC_MP_BIN) {
			cli_hex(h, nid->p, nid->len < 16 ? nid->len : 16);
			printf(" Network Identity   <%s>\n", h);
		}
		const val *pr = get(stats, "probe_responder");
		if (pr && pr->type == RNSC_MP_BIN) {
			cli_hex(h, pr->p, pr->len < 16 ? pr->len : 16);
			printf(" Probe responder at <%s> active\n", h);
		}
		const val *up = get(stats, "transport_uptime");
		if (is_num(up)) {
			char t[128];
			cli_prettytime(t, sizeof(t), up->num);
			printf(" Uptime is %s%s\n", t, lstr);
		}
	} else if (lstr[0]) {
		printf("\n%s\n", lstr);
	}
	printf("\n");
	return CLI_OK;
}

/* ---- talking to the shared instance -------------------------------------------------- */

/* rnstatus attaches to the shared instance (it is a Reticulum program); so does rnsc status,
 * for as long as it asks, so "Serving : N programs" reads the same. Returns the fd or -1. */
static int attach(const rnsc_config_settings *set)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	memset(&ss, 0, sizeof(ss));
	if (set->shared_instance_unix && set->local_socket_path) {
		struct sockaddr_un *un = (struct sockaddr_un *)&ss;
		int l = snprintf(un->sun_path + 1, sizeof(un->sun_path) - 1, "rns/%s",
				 set->local_socket_path);
		if (l < 0 || (size_t)l >= sizeof(un->sun_path) - 1)
			return -1;
		un->sun_family = AF_UNIX;
		sl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)l);
	} else {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)set->shared_instance_port);
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sl = sizeof(*in);
	}
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&ss, sl) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int call(rnsc_ctx *ctx, const struct sockaddr_storage *addr, unsigned alen,
		const uint8_t *key, size_t klen, const char *what, uint8_t **resp, size_t *rlen)
{
	uint8_t req[64];
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, req, sizeof(req));
	rnsc_mp_write_map(&w, 1);
	rnsc_mp_write_cstr(&w, "get");
	rnsc_mp_write_cstr(&w, what);
	int n = rnsc_mp_writer_finish(&w);
	if (n < 0)
		return n;
	return rnsc_rpc_call(ctx, addr, alen, key, klen, req, (size_t)n, resp, rlen,
			     RPC_TIMEOUT_MS);
}

/* The interface_stats document as JSON or as rnstatus's text. */
static int render(const uint8_t *doc, size_t len, const opts *o, int has_lc, double lc)
{
	if (o->json) {
		char *js = NULL;
		size_t jl = 0;
		if (rnsc_status_json_from_mp(doc, len, &js, &jl)) {
			printf("Could not get RNS status\n");
			return 2;
		}
		fwrite(js, 1, jl, stdout);
		free(js);
		return CLI_OK;
	}
	rnsc_mp_reader r;
	rnsc_mp_reader_init(&r, doc, len);
	val stats;
	int rc = val_parse(&r, &stats, 1);
	if (rc || stats.type != RNSC_MP_MAP) {
		val_free(&stats);
		printf("Could not get RNS status\n");
		return 2;
	}
	rc = print_status(&stats, o, has_lc, lc);
	val_free(&stats);
	return rc;
}

/* share_instance = no: rnstatus then runs a standalone instance of its own and shows that
 * one's interfaces; so does rnsc status. */
static int status_standalone(cli_env *env, const char *dir, const opts *o)
{
	rnsc_node_options no = {.config_dir = dir};
	rnsc_node *n = NULL;
	rnsc_config_error err;
	int rc = rnsc_node_new(env->ctx, env->host, &no, &n, &err);
	if (rc) {
		fprintf(stderr, "rnsc status: %s\n", err.msg[0] ? err.msg : rnsc_strerror(rc));
		return CLI_SETUP;
	}
	for (int i = 0; i < 10; i++) /* let the interfaces come up */
		rnsc_node_run_once(n, 20);
	uint8_t *doc = NULL;
	size_t len = 0;
	int ret = 2;
	if (rnsc_node_interface_stats(n, env->ctx, &doc, &len) == 0)
		ret = render(doc, len, o, o->lstats,
			     (double)rnsc_transport_link_table_count(rnsc_node_transport(n)));
	else
		printf("Could not get RNS status\n");
	free(doc);
	rnsc_node_del(n);
	return ret;
}

/* -R HASH -i IDENTITY -w S: the "/status" request of rnstatus -R to a transport instance's
 * remote management destination; the answer [interface_stats, link_count?] is printed as
 * the local status is. Exit codes as rnstatus: 12 no path, 10 the link failed, 20 bad
 * arguments, 2 no status (refused, or the request failed). */
static int status_remote(cli_env *env, const char *dir, const opts *o, const char *remote,
			 const char *mgmt_id, double timeout)
{
	uint8_t ih[16];
	if (!mgmt_id) {
		printf("Remote management requires an identity file. Use -i to specify the path to "
		       "a management identity.\n");
		return 20;
	}
	if (strlen(remote) != 32) {
		printf("Destination length is invalid, must be 32 hexadecimal characters (16 "
		       "bytes).\n");
		return 20;
	}
	if (cli_unhex(ih, sizeof(ih), remote) != 16) {
		printf("Invalid destination entered. Check your input.\n");
		return 20;
	}
	uint8_t req[4] = {0x92, o->lstats ? 0xc3 : 0xc2,
			  o->profiling ? 0xc3 : 0xc2}; /* [lstats, profiling] */
	uint8_t *resp = NULL;
	size_t rl = 0;
	int rc = cli_remote_request(env, dir, ih, mgmt_id, "/status", req, 3, timeout, o->json,
				    &resp, &rl);
	if (rc == CLI_REMOTE_NO_PATH)
		return 12;
	if (rc == CLI_REMOTE_LINK)
		return 10;
	if (rc == CLI_REMOTE_SETUP)
		return 20;
	if (rc == CLI_REMOTE_FAILED && !o->json)
		printf("\r                                                          \r"
		       "The remote status request failed. Likely authentication failure.\n");
	int ret = 2;
	rnsc_mp_reader r;
	rnsc_mp_reader_init(&r, resp, rl);
	size_t n = 0;
	if (rc == CLI_REMOTE_OK && rnsc_mp_read_array(&r, &n) == 0 && n >= 1) {
		if (!o->json)
			printf("\r                                                          \r");
		size_t start = r.pos;
		if (rnsc_mp_skip(&r) == 0) {
			size_t slen = r.pos - start;
			int has_lc = 0;
			double lc = 0;
			int64_t v;
			if (n >= 2 && rnsc_mp_read_int(&r, &v) == 0) {
				has_lc = 1;
				lc = (double)v;
			}
			ret = render(resp + start, slen, o, has_lc, lc);
			free(resp);
			return ret;
		}
	}
	free(resp);
	printf("Could not get RNS status from remote transport instance <%s>\n", remote);
	return ret;
}

static int status_once(rnsc_ctx *ctx, const rnsc_config_settings *set, const char *dir,
		       const opts *o)
{
	struct sockaddr_storage addr;
	unsigned alen = 0;
	uint8_t key[64];
	size_t klen = 0;
	int afd = set->share_instance ? attach(set) : -1;
	if (afd < 0) {
		printf("No shared RNS instance available to get status from\n");
		return CLI_FAIL;
	}
	/* let the instance count us among the programs it serves, as it counts rnstatus */
	struct timespec settle = {0, 200 * 1000000L};
	nanosleep(&settle, NULL);
	int ret = 2;
	uint8_t *resp = NULL, *lresp = NULL;
	size_t rlen = 0, llen = 0;
	int rc = rnsc_rpc_endpoint(ctx, set, dir, &addr, &alen, key, &klen);
	if (rc) {
		if (o->verbose)
			fprintf(stderr, "rnsc status: no RPC key: %s\n", rnsc_strerror(rc));
		printf("Could not get RNS status\n");
		goto out;
	}
	int has_lc = 0;
	double lc = 0;
	if (o->lstats && call(ctx, &addr, alen, key, klen, "link_count", &lresp, &llen) == 0) {
		rnsc_mp_reader r;
		rnsc_mp_reader_init(&r, lresp, llen);
		int64_t v;
		if (rnsc_mp_read_int(&r, &v) == 0) {
			has_lc = 1;
			lc = (double)v;
		}
	}
	rc = call(ctx, &addr, alen, key, klen, "interface_stats", &resp, &rlen);
	if (rc) {
		if (o->verbose)
			fprintf(stderr, "rnsc status: RPC failed: %s\n", rnsc_strerror(rc));
		printf("Could not get RNS status\n");
		goto out;
	}
	ret = render(resp, rlen, o, has_lc, lc);
out:
	free(resp);
	free(lresp);
	memset(key, 0, sizeof(key));
	close(afd);
	return ret;
}

/* --attach/--detach/--reload NAME (rns 1.5.7): one {"manage": VERB_interface, "name": NAME}
 * call to the shared instance, answered True (done), False (refused or failed) or None (no
 * such interface), printed as rnstatus prints them. Exit 0 only for True. */
static int status_manage(rnsc_ctx *ctx, const rnsc_config_settings *set, const char *dir,
			 int verbose, const char *verb, const char *name)
{
	char what[32], done[16], doing[16];
	snprintf(what, sizeof(what), "%s_interface", verb);
	snprintf(done, sizeof(done), "%sed", verb);
	snprintf(doing, sizeof(doing), "%sing", verb);
	int afd = set->share_instance ? attach(set) : -1;
	if (afd < 0) {
		printf("No shared RNS instance available to get status from\n");
		return CLI_FAIL;
	}
	close(afd);
	struct sockaddr_storage addr;
	unsigned alen = 0;
	uint8_t key[64], *resp = NULL;
	size_t klen = 0, rlen = 0;
	int rc = rnsc_rpc_endpoint(ctx, set, dir, &addr, &alen, key, &klen);
	size_t nl = strlen(name);
	uint8_t *req = malloc(nl + 64);
	int n = -1;
	if (rc == 0 && req) {
		rnsc_mp_writer w;
		rnsc_mp_writer_init(&w, req, nl + 64);
		rnsc_mp_write_map(&w, 2);
		rnsc_mp_write_cstr(&w, "manage");
		rnsc_mp_write_cstr(&w, what);
		rnsc_mp_write_cstr(&w, "name");
		rnsc_mp_write_str(&w, name, nl);
		n = rnsc_mp_writer_finish(&w);
	}
	if (rc == 0 && n > 0)
		rc = rnsc_rpc_call(ctx, &addr, alen, key, klen, req, (size_t)n, &resp, &rlen,
				   RPC_TIMEOUT_MS);
	else if (rc == 0)
		rc = RNSC_ERR_NOMEM;
	memset(key, 0, sizeof(key));
	free(req);
	int ret = CLI_FAIL;
	if (rc) {
		if (verbose)
			fprintf(stderr, "rnsc status: RPC failed: %s\n", rnsc_strerror(rc));
		printf("Unknown error while %s interface %s\n", doing, name);
	} else if (rlen == 1 && resp[0] == 0xc3) {
		printf("Interface %s was %s\n", name, done);
		ret = CLI_OK;
	} else if (rlen == 1 && resp[0] == 0xc2) {
		printf("Could not %s interface %s\n", verb, name);
	} else if (rlen == 1 && resp[0] == 0xc0) {
		printf("The interface %s does not exist\n", name);
	} else {
		printf("Unknown error while %s interface %s\n", doing, name);
	}
	free(resp);
	return ret;
}

typedef struct status_args {
	opts o;
	const char *dir, *remote, *mgmt_id;
	const char *manage_verb, *manage_name; /* the first of --attach, --detach, --reload */
	double remote_timeout, interval;
	int monitor;
	int disc; /* -d 1, -D 2 */
} status_args;

enum { OPT_ATTACH = 1000, OPT_DETACH, OPT_RELOAD, OPT_SHOW_157 };

/* Returns -1 to go on, or the exit code. */
static int status_parse(int argc, char **argv, status_args *a)
{
	static const struct option lopts[] = {{"config", required_argument, NULL, 'c'},
					      {"version", no_argument, NULL, 'V'},
					      {"attach", required_argument, NULL, OPT_ATTACH},
					      {"detach", required_argument, NULL, OPT_DETACH},
					      {"reload", required_argument, NULL, OPT_RELOAD},
					      {"all", no_argument, NULL, 'a'},
					      {"announce-stats", no_argument, NULL, 'A'},
					      {"pr-stats", no_argument, NULL, 'P'},
					      {"link-stats", no_argument, NULL, 'l'},
					      {"burst", no_argument, NULL, 'B'},
					      {"blocked-ips", no_argument, NULL, 'b'},
					      {"totals", no_argument, NULL, 't'},
					      {"pps", no_argument, NULL, 'p'},
					      {"queues", no_argument, NULL, 'q'},
					      {"profiling", no_argument, NULL, 'z'},
					      {"sort", required_argument, NULL, 's'},
					      {"reverse", no_argument, NULL, 'r'},
					      {"json", no_argument, NULL, 'j'},
					      {"discovered", no_argument, NULL, 'd'},
					      {"show-stale", no_argument, NULL, OPT_SHOW_157},
					      {"show-unknown", no_argument, NULL, OPT_SHOW_157},
					      {"monitor", no_argument, NULL, 'm'},
					      {"monitor-interval", required_argument, NULL, 'I'},
					      {"verbose", no_argument, NULL, 'v'},
					      {"help", no_argument, NULL, 'h'},
					      {0, 0, 0, 0}};
	const char *attach_n = NULL, *detach_n = NULL, *reload_n = NULL;
	opts *o = &a->o;
	int c;
	char *end;
	a->remote_timeout = 15.0; /* Transport.PATH_REQUEST_TIMEOUT */
	a->interval = 1.0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "aAPlBbtpqzs:rjR:i:w:dDmI:vh", lopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			a->dir = optarg;
			break;
		case 'V':
			printf("rnsc status %s\n", PACKAGE_VERSION);
			return CLI_OK;
		case OPT_ATTACH:
			attach_n = optarg;
			break;
		case OPT_DETACH:
			detach_n = optarg;
			break;
		case OPT_RELOAD:
			reload_n = optarg;
			break;
		case OPT_SHOW_157:
			/* rns 1.5.7 hides stale entries and those without a stack version unless
			 * asked; rnsc lists every entry, as rns 1.5.4 does, so both only say
			 * what rnsc does anyway */
			break;
		case 'a':
			o->all = 1;
			break;
		case 'A':
			o->astats = 1;
			break;
		case 'P':
			o->pstats = 1;
			break;
		case 'l':
			o->lstats = 1;
			break;
		case 't':
			o->totals = 1;
			break;
		case 'p':
			o->pps = 1;
			break;
		case 's':
			o->sort = optarg;
			break;
		case 'r':
			o->reverse = 1;
			break;
		case 'j':
			o->json = 1;
			break;
		case 'm':
			a->monitor = 1;
			break;
		case 'I':
			a->interval = strtod(optarg, &end);
			if (*end || end == optarg || !(a->interval > 0 && a->interval < 86400)) {
				fprintf(stderr, "rnsc status: invalid interval '%s'\n", optarg);
				return CLI_USAGE;
			}
			break;
		case 'v':
			o->verbose++;
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		case 'B':
			o->burst = 1;
			break;
		case 'b':
			o->blocked = 1;
			break;
		case 'q':
			o->queues = 1;
			break;
		case 'z':
			o->profiling = 1;
			break; /* rnsc runs no profiler: nothing to show */
		case 'R':
			a->remote = optarg;
			break;
		case 'i':
			a->mgmt_id = optarg;
			break;
		case 'w':
			a->remote_timeout = strtod(optarg, &end);
			if (*end || end == optarg || !(a->remote_timeout >= 0)) {
				fprintf(stderr, "rnsc status: invalid timeout '%s'\n", optarg);
				return CLI_USAGE;
			}
			break;
		case 'd':
			a->disc = a->disc ? a->disc : 1;
			break;
		case 'D':
			a->disc = 2;
			break;
		default:
			usage(stderr);
			return CLI_USAGE;
		}
	}
	if (argc - optind > 1) {
		fprintf(stderr, "rnsc status: unexpected argument '%s'\n", argv[optind + 1]);
		return CLI_USAGE;
	}
	o->filter = optind < argc ? argv[optind] : NULL;
	/* rnstatus handles --attach, then --detach, then --reload, and exits after the first */
	if (attach_n) {
		a->manage_verb = "attach";
		a->manage_name = attach_n;
	} else if (detach_n) {
		a->manage_verb = "detach";
		a->manage_name = detach_n;
	} else if (reload_n) {
		a->manage_verb = "reload";
		a->manage_name = reload_n;
	}
	return -1;
}

int cmd_status(int argc, char **argv)
{
	status_args a = {0};
	int rc = status_parse(argc, argv, &a);
	if (rc >= 0)
		return rc;
	const opts *o = &a.o;
	cli_env env;
	if ((rc = cli_env_open(&env, NULL, 0)))
		return rc;
	rnsc_ctx_set_log_level(env.ctx, o->verbose ? RNSC_LOG_DEBUG : RNSC_LOG_WARNING);
	char cdir[4096];
	int created = 0;
	rnsc_config *cfg = NULL;
	rnsc_config_error err;
	rnsc_config_settings set;
	int ret;
	if ((rc = rnsc_config_open(env.ctx, a.dir, cdir, sizeof(cdir), &created, &cfg, &err)) ||
	    (rc = rnsc_config_read_settings(cfg, &set, &err))) {
		fprintf(stderr, "rnsc status: %s\n", err.msg[0] ? err.msg : rnsc_strerror(rc));
		ret = CLI_SETUP;
		goto out;
	}
	if (a.manage_verb) {
		ret = status_manage(env.ctx, &set, cdir, o->verbose, a.manage_verb, a.manage_name);
		goto out;
	}
	if (a.disc) {
		/* rnstatus lists the storage folder once it is attached to the shared instance
		 * (with -R it starts without requiring one). */
		int afd = a.remote ? -2 : (set.share_instance ? attach(&set) : -1);
		if (afd == -1) {
			printf("No shared RNS instance available to get status from\n");
			ret = CLI_FAIL;
			goto out;
		}
		ret = status_discovered(env.ctx, &set, cdir, o->json, a.disc == 2, o->filter);
		if (afd >= 0)
			close(afd);
		goto out;
	}
	if (a.remote) {
		ret = status_remote(&env, cdir, o, a.remote, a.mgmt_id, a.remote_timeout);
		goto out;
	}
	if (!set.share_instance) {
		ret = status_standalone(&env, cdir, o);
		goto out;
	}
	if (!a.monitor) {
		ret = status_once(env.ctx, &set, cdir, o);
		goto out;
	}
	for (;;) { /* -m: until interrupted, as rnstatus */
		printf("\033[H\033[2J");
		ret = status_once(env.ctx, &set, cdir, o);
		fflush(stdout);
		struct timespec ts = {(time_t)a.interval,
				      (long)((a.interval - (double)(time_t)a.interval) * 1e9)};
		nanosleep(&ts, NULL);
	}
out:
	rnsc_config_del(cfg);
	cli_env_close(&env);
	return ret;
}
