/* SPDX-License-Identifier: MIT */
/*
 * A link peer on an rnsc node (rnsc_node + the engine's link API), speaking the same test
 * protocol as tests/live/link_ref_peer.py so any pairing can be run by tests/live/link_interop_test.sh:
 *
 *   link_node_peer serve CONFIGDIR N TIMEOUT_S
 *       SINGLE destination rnsclt.link (PROVE_ALL) on a fresh identity, accepting links;
 *       announces every 2 s until a link is up; echoes every packet back on the link; exits
 *       when the link closes. Prints "dest <hash>", "server link up mtu=<m>",
 *       "server rx=<n> bytes=<b>".
 *   link_node_peer connect CONFIGDIR DEST N TIMEOUT_S
 *       Requests a path, opens a link, sends N packets of 60..420 bytes (at most 16 unproved
 *       at a time), waits for every proof (or its receipt's timeout) and echo, closes.
 *       Prints "client sent=.. bytes=.. proved=.. echoed=.. echo_bytes=.. mtu=.. timeouts=..".
 * Exit status 0 only when the accounting is exact: with PEER_EXPECT_TIMEOUTS=K in the
 * environment exactly K receipts must time out (a server withholding K proofs), else none;
 * every wait is bounded. With PEER_MDU=1 the client's packets are the established link's
 * MDU, MDU-1 and MDU-2 bytes long instead (tests/live/link_mtu_clamp_test.sh); both ends then
 * also print "client link mtu=<m> mdu=<d>" / "server link mdu=<d>".
 * With PEER_HOLD=S both ends also report keepalive, stale and close as tests/live/link_ref_peer.py
 * does (see there): the client holds the link idle for S seconds before sending; last inbound
 * is the time the link's rx counter last moved (seen within one 20 ms poll).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "crypto.h"
#include "destination.h"
#include "link.h"
#include "node.h"
#include "plugin_host.h"
#include "transport.h"

#define HL RNSC_TRUNCATED_HASHLEN
#define WINDOW 16
#define MAXPAYLOAD 65536

static size_t g_mdu; /* PEER_MDU: payload sizes follow the link's MDU */
static int g_mdu_mode;
static const char *g_hold; /* PEER_HOLD */

typedef struct peer {
	rnsc_node *n;
	rnsc_transport *t;
	int up, closed;
	uint8_t link_id[HL];
	uint32_t mtu;
	unsigned rx, proved, echoed, outstanding, timeouts;
	uint64_t rx_bytes, echo_bytes;
	int echo; /* server: send every packet back */
	/* client: payloads sent and not yet echoed, by index */
	unsigned char *pending;
	unsigned char *rstate; /* receipt per packet: 1 waiting, 2 proved, 3 timed out */
	uint8_t (*hash)[RNSC_HASHLEN];
	unsigned count, sent;
	/* PEER_HOLD */
	int reason, stale;
	double closed_at;
	uint64_t tx0, rx0;
} peer;

static double now_f(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t payload(unsigned i, uint8_t *out)
{
	size_t n = 60 + (i * 37) % 361;
	if (g_mdu_mode && g_mdu > 2)
		n = g_mdu - i % 3;
	if (n > MAXPAYLOAD)
		n = MAXPAYLOAD;
	for (size_t k = 0; k < n; k++)
		out[k] = (uint8_t)((i * 31 + k * 7) & 0xFF);
	return n;
}

static void hex(char *out, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
}

static void on_est(void *ud, const uint8_t *lid, const uint8_t *dest, int initiator)
{
	(void)dest, (void)initiator;
	peer *p = ud;
	p->up = 1;
	memcpy(p->link_id, lid, HL);
	const rnsc_link *l = rnsc_transport_link_get(p->t, lid);
	p->mtu = l ? rnsc_link_mtu(l) : 0;
	g_mdu = l ? rnsc_link_get_mdu(l) : 0;
	uint64_t rxb, txb;
	if (l)
		rnsc_link_counters(l, &p->rx0, &rxb, &p->tx0, &txb);
	if (p->echo)
		printf("server link up mtu=%u\n", (unsigned)p->mtu);
	if (g_mdu_mode && p->echo)
		printf("server link mdu=%zu\n", g_mdu);
	else if (g_mdu_mode)
		printf("client link mtu=%u mdu=%zu\n", (unsigned)p->mtu, g_mdu);
	fflush(stdout);
}

static void on_closed(void *ud, const uint8_t *lid, int reason)
{
	peer *p = ud;
	p->closed = 1;
	p->reason = reason;
	p->closed_at = now_f();
	if (g_hold && p->echo) {
		const rnsc_link *l = rnsc_transport_link_get(p->t, lid);
		uint64_t rx = p->rx0, tx = p->tx0, b;
		if (l) /* else the deltas print as 0 */
			rnsc_link_counters(l, &rx, &b, &tx, &b);
		const char *rn = rnsc_link_reason_name(reason);
		printf("server closed reason=%s tx=%llu rx=%llu stale=%d\n", rn ? rn : "?",
		       (unsigned long long)(tx - p->tx0), (unsigned long long)(rx - p->rx0),
		       p->stale);
		fflush(stdout);
	}
}

/* PEER_HOLD on the client: the link held idle for secs, stale and close reported. */
static int hold(peer *p, const uint8_t *lid, double secs)
{
	const rnsc_link *l = rnsc_transport_link_get(p->t, lid);
	if (!l)
		return 1;
	printf("client link up t=%.3f keepalive=%.3f stale_time=%.3f rtt=%.4f\n", now_f(),
	       rnsc_link_keepalive_ms(l) / 1000.0, rnsc_link_stale_time_ms(l) / 1000.0,
	       rnsc_link_rtt(l));
	fflush(stdout);
	uint64_t rx0, tx0, rx, tx, b;
	rnsc_link_counters(l, &rx0, &b, &tx0, &b);
	uint64_t last_rx = rx0;
	double li = now_f(), end = li + secs;
	int stale = 0;
	while (now_f() < end && !p->closed && !rnsc_node_stopping(p->n)) {
		rnsc_node_run_once(p->n, 20);
		if (p->closed || !(l = rnsc_transport_link_get(p->t, lid)))
			break;
		rnsc_link_counters(l, &rx, &b, &tx, &b);
		if (rx != last_rx) {
			last_rx = rx;
			li = now_f();
		}
		if (rnsc_link_status(l) == RNSC_LINK_STALE && !stale) {
			stale = 1;
			printf("client stale t=%.3f last_inbound=%.3f\n", now_f(), li);
			fflush(stdout);
		}
	}
	if (p->closed || !l) {
		const char *rn = rnsc_link_reason_name(p->reason);
		printf("client closed reason=%s t=%.3f last_inbound=%.3f\n", rn ? rn : "?",
		       p->closed_at, li);
		return 1;
	}
	printf("client hold tx=%llu rx=%llu stale=%d\n", (unsigned long long)(tx - tx0),
	       (unsigned long long)(rx - rx0), stale);
	fflush(stdout);
	return 0;
}

static void on_data(void *ud, const uint8_t *lid, const uint8_t *data, size_t len,
		    const uint8_t *ph)
{
	(void)ph;
	peer *p = ud;
	if (p->echo) {
		p->rx++;
		p->rx_bytes += len;
		int rc = rnsc_transport_link_send(p->t, lid, data, len, NULL, rnsc_node_now_ms());
		if (rc)
			fprintf(stderr, "echo failed: %s\n", rnsc_strerror(rc));
		return;
	}
	/* find which payload came back */
	static uint8_t buf[MAXPAYLOAD];
	for (unsigned i = 0; i < p->count; i++) {
		if (!p->pending[i])
			continue;
		size_t n = payload(i, buf);
		if (n == len && memcmp(buf, data, len) == 0) {
			p->pending[i] = 0;
			p->echoed++;
			p->echo_bytes += len;
			return;
		}
	}
}

static int rindex_of(const peer *p, const uint8_t *ph)
{
	for (unsigned i = 0; p->hash && i < p->sent; i++)
		if (memcmp(p->hash[i], ph, RNSC_HASHLEN) == 0)
			return (int)i;
	return -1;
}

static void on_proof(void *ud, const uint8_t *lid, const uint8_t *ph)
{
	(void)lid;
	peer *p = ud;
	int i = rindex_of(p, ph);
	if (i < 0 || p->rstate[i] == 2)
		return;
	if (p->rstate[i] == 1 && p->outstanding)
		p->outstanding--;
	if (p->rstate[i] == 3) /* late: the timeout is taken back */
		p->timeouts--;
	p->rstate[i] = 2;
	p->proved++;
}

static void on_receipt(void *ud, const uint8_t *ph, int proved)
{
	peer *p = ud;
	int i = rindex_of(p, ph);
	if (proved || i < 0 || p->rstate[i] != 1)
		return;
	p->rstate[i] = 3;
	p->timeouts++;
	if (p->outstanding)
		p->outstanding--;
}

static uint64_t now_s(void)
{
	return rnsc_node_now_ms() / 1000;
}

int main(int argc, char **argv)
{
	int serve = argc == 5 && strcmp(argv[1], "serve") == 0;
	int connect = argc == 6 && strcmp(argv[1], "connect") == 0;
	if (!serve && !connect) {
		fprintf(stderr, "usage: link_node_peer serve DIR N T | connect DIR DEST N T\n");
		return 2;
	}
	unsigned n = (unsigned)atoi(argv[serve ? 3 : 4]);
	uint64_t end = now_s() + (uint64_t)atoi(argv[serve ? 4 : 5]);
	rnsc_ctx *ctx;
	rnsc_plugin_host *h;
	if (rnsc_ctx_new(&ctx) || rnsc_plugin_host_new(ctx, &h) ||
	    rnsc_plugin_host_add_default_dirs(h))
		return 1;
	rnsc_plugin_host_scan(h);
	if (rnsc_crypto_set_order(ctx, "openssl") != 0) {
		fprintf(stderr, "link_node_peer: the openssl plugin did not load\n");
		return 1;
	}
	rnsc_ctx_set_log_level(ctx, getenv("PEER_DEBUG") ? RNSC_LOG_DEBUG : RNSC_LOG_WARNING);
	rnsc_node_options no = {.config_dir = argv[2], .handle_signals = 1};
	rnsc_config_error err;
	peer p = {0};
	int rc = rnsc_node_new(ctx, h, &no, &p.n, &err);
	if (rc) {
		fprintf(stderr, "link_node_peer: %s\n", err.msg[0] ? err.msg : rnsc_strerror(rc));
		return 1;
	}
	p.t = rnsc_node_transport(p.n);
	p.echo = serve;
	g_mdu_mode = getenv("PEER_MDU") != NULL;
	g_hold = getenv("PEER_HOLD");
	p.count = n;
	rnsc_node_hooks hooks = {.ud = &p,
				 .on_link_established = on_est,
				 .on_link_closed = on_closed,
				 .on_link_data = on_data,
				 .on_link_proof = on_proof,
				 .on_receipt = on_receipt};
	rnsc_node_set_hooks(p.n, &hooks);
	int ret = 1;
	char hx[2 * HL + 1];
	if (serve) {
		rnsc_identity id;
		uint8_t dest[HL];
		static const char *const asp[] = {"link"};
		if (rnsc_identity_generate(ctx, &id) ||
		    rnsc_transport_dest_add(p.t, RNSC_DEST_SINGLE, &id, "rnsclt", asp, 1, 1,
					    dest)) {
			fprintf(stderr, "link_node_peer: cannot register the destination\n");
			goto out;
		}
		rnsc_identity_free(&id);
		hex(hx, dest, HL);
		printf("dest %s\n", hx);
		fflush(stdout);
		uint64_t next_announce = 0;
		while (now_s() < end && !p.closed && !rnsc_node_stopping(p.n)) {
			if (!p.up && rnsc_node_now_ms() >= next_announce) {
				(void)rnsc_transport_announce(p.t, dest, NULL, 0,
							      rnsc_node_now_ms());
				next_announce = rnsc_node_now_ms() + 2000;
			}
			rnsc_node_flush(p.n);
			rnsc_node_run_once(p.n, g_hold ? 20 : 50);
			const rnsc_link *l = p.up ? rnsc_transport_link_get(p.t, p.link_id) : NULL;
			if (g_hold && l && rnsc_link_status(l) == RNSC_LINK_STALE)
				p.stale = 1;
		}
		printf("server rx=%u bytes=%llu\n", p.rx, (unsigned long long)p.rx_bytes);
		ret = p.closed && p.rx == n ? 0 : 1;
		goto out;
	}
	uint8_t dest[HL];
	if (strlen(argv[3]) != 2 * HL) {
		fprintf(stderr, "link_node_peer: bad destination\n");
		goto out;
	}
	for (int i = 0; i < HL; i++) {
		unsigned v;
		if (sscanf(argv[3] + 2 * i, "%2x", &v) != 1)
			goto out;
		dest[i] = (uint8_t)v;
	}
	uint64_t next_req = 0;
	while (!rnsc_transport_has_path(p.t, dest) ||
	       rnsc_transport_recall(p.t, dest, NULL, NULL, NULL)) {
		if (now_s() >= end || rnsc_node_stopping(p.n)) {
			printf("client: no path\n");
			goto out;
		}
		if (rnsc_node_now_ms() >= next_req) {
			(void)rnsc_transport_request_path(p.t, dest, 0, 0, rnsc_node_now_ms());
			rnsc_node_flush(p.n);
			next_req = rnsc_node_now_ms() + 3000;
		}
		rnsc_node_run_once(p.n, 50);
	}
	uint8_t lid[HL];
	if ((rc = rnsc_transport_link_open(p.t, dest, lid, rnsc_node_now_ms()))) {
		fprintf(stderr, "link_node_peer: link open: %s\n", rnsc_strerror(rc));
		goto out;
	}
	rnsc_node_flush(p.n);
	while (!p.up && !p.closed && now_s() < end)
		rnsc_node_run_once(p.n, 50);
	if (!p.up) {
		printf("client: link not established\n");
		goto out;
	}
	if (g_hold && hold(&p, lid, atof(g_hold)) != 0)
		goto out;
	p.pending = calloc(n ? n : 1, 1);
	p.rstate = calloc(n ? n : 1, 1);
	p.hash = calloc(n ? n : 1, sizeof(*p.hash));
	if (!p.pending || !p.rstate || !p.hash)
		goto out;
	unsigned sent = 0;
	uint64_t bytes = 0;
	while (sent < n && !p.closed && now_s() < end) {
		if (p.outstanding >= WINDOW) {
			rnsc_node_run_once(p.n, 20);
			continue;
		}
		static uint8_t buf[MAXPAYLOAD];
		size_t len = payload(sent, buf);
		p.pending[sent] = 1;
		rc = rnsc_transport_link_send(p.t, lid, buf, len, p.hash[sent], rnsc_node_now_ms());
		if (rc) {
			fprintf(stderr, "link_node_peer: send: %s\n", rnsc_strerror(rc));
			break;
		}
		p.rstate[sent] = 1;
		p.outstanding++;
		sent++;
		p.sent = sent;
		bytes += len;
		rnsc_node_flush(p.n);
		rnsc_node_run_once(p.n, 0);
	}
	while ((p.proved + p.timeouts < n || p.echoed < n) && !p.closed && now_s() < end)
		rnsc_node_run_once(p.n, 50);
	uint32_t mtu = p.mtu;
	(void)rnsc_transport_link_close(p.t, lid, rnsc_node_now_ms());
	rnsc_node_flush(p.n);
	for (int i = 0; i < 10; i++)
		rnsc_node_run_once(p.n, 50);
	printf("client sent=%u bytes=%llu proved=%u echoed=%u echo_bytes=%llu mtu=%u timeouts=%u\n",
	       sent, (unsigned long long)bytes, p.proved, p.echoed,
	       (unsigned long long)p.echo_bytes, (unsigned)mtu, p.timeouts);
	const char *et = getenv("PEER_EXPECT_TIMEOUTS");
	unsigned want_to = et ? (unsigned)atoi(et) : 0;
	ret = sent == n && p.proved + p.timeouts == n && p.timeouts == want_to && p.echoed == n &&
			      p.echo_bytes == bytes
		      ? 0
		      : 1;
out:
	fflush(stdout);
	free(p.pending);
	free(p.rstate);
	free(p.hash);
	rnsc_node_del(p.n);
	rnsc_plugin_host_del(h);
	rnsc_ctx_del(ctx);
	return ret;
}
