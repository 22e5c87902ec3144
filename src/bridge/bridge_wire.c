/* SPDX-License-Identifier: MIT */
/*
 * wire_*: live rnsc nodes on loopback TCP, driven by the suite's wire family (bridge.h).
 *
 * Each wire_start_* writes a config folder (the same [reticulum] and [interfaces] lines the
 * suite's reference bridge writes) and opens an rnsc node on it (src/runtime/node.h). One
 * driver thread runs every node's loop; the bridge's command thread takes the same lock
 * (rnsc_bridge_wire_lock) around each command, so a node, the shared context and the state
 * its hooks record are only ever touched by one thread at a time. Commands that wait
 * (poll_path, link_open, link_poll) drop the lock between checks so the nodes keep running.
 *
 * Ownership: instances live from wire_start_* to wire_stop (or exit); their folders are
 * removed on stop.
 */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "bridge.h"
#include "destination.h"
#include "err.h"
#include "identity.h"
#include "iface_host.h"
#include "link.h"
#include "node.h"
#include "crypto.h"
#include "transport.h"

#define WIRE_MAX_INST 8
#define WIRE_MAX_DEST 32
#define WIRE_MAX_LINKS 32
#define WIRE_MAX_RX 256

typedef struct wire_rx {
	uint8_t *data;
	size_t len;
} wire_rx;

typedef struct wire_dest {
	uint8_t hash[RNSC_TRUNCATED_HASHLEN];
	rnsc_identity id;
	int listener;
	wire_rx rx[WIRE_MAX_RX]; /* link data received on links to this destination */
	size_t n_rx;
} wire_dest;

typedef struct wire_link {
	uint8_t id[RNSC_TRUNCATED_HASHLEN];
	uint8_t dest[RNSC_TRUNCATED_HASHLEN];
	int initiator, established, closed, reason;
} wire_link;

typedef struct wire_inst {
	int used;
	char handle[17];
	char dir[256];
	rnsc_node *node;
	int port;
	wire_dest dests[WIRE_MAX_DEST];
	size_t n_dests;
	wire_link links[WIRE_MAX_LINKS];
	size_t n_links;
	struct {
		uint8_t hash[RNSC_HASHLEN];
		char id[17];
		int status; /* PacketReceipt: 0 FAILED, 1 SENT, 2 DELIVERED */
	} receipts[WIRE_MAX_RX];
	size_t n_receipts;
} wire_inst;

static pthread_mutex_t wire_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_t wire_thread;
static int wire_thread_on;
static int wire_quit; /* under wire_mu: the driver returns (joined at shutdown, so that the
		       * crypto libraries' per-thread state is released) */
static wire_inst insts[WIRE_MAX_INST];
static rnsc_plugin_host *wire_plugins;

void rnsc_bridge_wire_lock(void)
{
	pthread_mutex_lock(&wire_mu);
}

void rnsc_bridge_wire_unlock(void)
{
	pthread_mutex_unlock(&wire_mu);
}

static void *driver(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&wire_mu);
		if (wire_quit) {
			pthread_mutex_unlock(&wire_mu);
			return NULL;
		}
		for (size_t i = 0; i < WIRE_MAX_INST; i++)
			if (insts[i].used && insts[i].node)
				rnsc_node_run_once(insts[i].node, 0);
		pthread_mutex_unlock(&wire_mu);
		/* a short sleep bounds the latency of every node at a few ms */
		struct timespec ts = {0, 3 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
}

/* Sleeps with the lock released so the driver runs the nodes meanwhile. */
static void wait_unlocked(int ms)
{
	pthread_mutex_unlock(&wire_mu);
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
	pthread_mutex_lock(&wire_mu);
}

static wire_inst *find_inst(json_t *params, char *err, size_t errcap)
{
	const char *h;
	if (rnsc_bridge_str(params, "handle", NULL, &h, err, errcap))
		return NULL;
	for (size_t i = 0; i < WIRE_MAX_INST; i++)
		if (insts[i].used && strcmp(insts[i].handle, h) == 0)
			return &insts[i];
	snprintf(err, errcap, "Unknown handle: %.64s", h);
	return NULL;
}

static wire_dest *find_dest(wire_inst *w, const uint8_t *hash)
{
	for (size_t i = 0; i < w->n_dests; i++)
		if (memcmp(w->dests[i].hash, hash, RNSC_TRUNCATED_HASHLEN) == 0)
			return &w->dests[i];
	return NULL;
}

static wire_link *find_link(wire_inst *w, const uint8_t *id)
{
	for (size_t i = 0; i < w->n_links; i++)
		if (memcmp(w->links[i].id, id, RNSC_TRUNCATED_HASHLEN) == 0)
			return &w->links[i];
	return NULL;
}

/* ---- node hooks (driver thread, lock held) ----------------------------------------------- */

static void on_link_established(void *ud, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
				const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN], int initiator)
{
	wire_inst *w = ud;
	wire_link *l = find_link(w, link_id);
	if (!l) {
		if (w->n_links == WIRE_MAX_LINKS)
			return;
		l = &w->links[w->n_links++];
		memset(l, 0, sizeof(*l));
		memcpy(l->id, link_id, RNSC_TRUNCATED_HASHLEN);
	}
	memcpy(l->dest, dest_hash, RNSC_TRUNCATED_HASHLEN);
	l->initiator = initiator;
	l->established = 1;
}

static void on_link_closed(void *ud, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN], int reason)
{
	wire_inst *w = ud;
	wire_link *l = find_link(w, link_id);
	if (!l) {
		if (w->n_links == WIRE_MAX_LINKS)
			return;
		l = &w->links[w->n_links++];
		memset(l, 0, sizeof(*l));
		memcpy(l->id, link_id, RNSC_TRUNCATED_HASHLEN);
	}
	l->closed = 1;
	l->reason = reason;
}

static void on_link_data(void *ud, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
			 const uint8_t *data, size_t len, const uint8_t packet_hash[RNSC_HASHLEN])
{
	(void)packet_hash;
	wire_inst *w = ud;
	wire_link *l = find_link(w, link_id);
	wire_dest *d = l && !l->initiator ? find_dest(w, l->dest) : NULL;
	if (!d || d->n_rx == WIRE_MAX_RX)
		return; /* nothing listens: dropped, as the reference's buffer only exists per listener */
	uint8_t *p = malloc(len ? len : 1);
	if (!p)
		return;
	memcpy(p, data, len);
	d->rx[d->n_rx].data = p;
	d->rx[d->n_rx].len = len;
	d->n_rx++;
}

static void on_receipt(void *ud, const uint8_t packet_hash[RNSC_HASHLEN], int proved)
{
	wire_inst *w = ud;
	for (size_t i = 0; i < w->n_receipts; i++)
		if (memcmp(w->receipts[i].hash, packet_hash, RNSC_HASHLEN) == 0 &&
		    w->receipts[i].status == 1)
			w->receipts[i].status = proved ? 2 : 0;
}

/* ---- start / stop ------------------------------------------------------------------------ */

static int free_port(void)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0)
		return -1;
	struct sockaddr_in a = {0};
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t al = sizeof(a);
	int port = -1;
	if (bind(s, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(s, (struct sockaddr *)&a, &al) == 0)
		port = ntohs(a.sin_port);
	close(s);
	return port;
}

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *f)
{
	(void)sb, (void)flag, (void)f;
	remove(p);
	return 0;
}

static void inst_free(wire_inst *w)
{
	if (w->node) {
		/* the reference's exit handler tears down every link, so the peer sees
		 * DESTINATION_CLOSED / INITIATOR_CLOSED rather than a timeout */
		rnsc_transport *t = rnsc_node_transport(w->node);
		for (size_t i = 0; i < w->n_links; i++)
			if (w->links[i].established && !w->links[i].closed &&
			    rnsc_transport_link_get(t, w->links[i].id))
				rnsc_transport_link_close(t, w->links[i].id, rnsc_node_now_ms());
		rnsc_node_flush(w->node);
	}
	rnsc_node_del(w->node);
	for (size_t i = 0; i < w->n_dests; i++) {
		for (size_t j = 0; j < w->dests[i].n_rx; j++)
			free(w->dests[i].rx[j].data);
		rnsc_identity_free(&w->dests[i].id);
	}
	if (w->dir[0])
		nftw(w->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	memset(w, 0, sizeof(*w));
}

/* The reference bridge's mode aliases, onto config values rnsc's reader takes. */
static const char *mode_value(const char *m)
{
	if (!m || !*m)
		return NULL;
	static const char *const map[][2] = {
		{"full", "full"},
		{"gateway", "gateway"},
		{"gw", "gateway"},
		{"access_point", "access_point"},
		{"accesspoint", "access_point"},
		{"ap", "access_point"},
		{"roaming", "roaming"},
		{"boundary", "boundary"},
		{"point_to_point", "point_to_point"},
		{"pointtopoint", "point_to_point"},
		{"ptp", "point_to_point"},
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcasecmp(m, map[i][0]) == 0)
			return map[i][1];
	return m;
}

static int wire_start(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap,
		      int server)
{
	const char *netname, *pass, *mode, *host = NULL;
	long long port = 0, fixed_mtu = -1, ifac_size = -1, bitrate = -1;
	if (rnsc_bridge_str(params, "network_name", "", &netname, err, errcap) ||
	    rnsc_bridge_str(params, "passphrase", "", &pass, err, errcap) ||
	    rnsc_bridge_str(params, "mode", "", &mode, err, errcap) ||
	    rnsc_bridge_int(params, "fixed_mtu", -1, &fixed_mtu, err, errcap) ||
	    rnsc_bridge_int(params, "ifac_size", -1, &ifac_size, err, errcap) ||
	    rnsc_bridge_int(params, "bitrate", -1, &bitrate, err, errcap))
		return 1;
	if (server) {
		if (rnsc_bridge_int(params, "bind_port", 0, &port, err, errcap))
			return 1;
	} else if (rnsc_bridge_str(params, "target_host", NULL, &host, err, errcap) ||
		   rnsc_bridge_int(params, "target_port", -1, &port, err, errcap)) {
		return 1;
	}
	if (server && rnsc_bridge_bool(params, "share_instance", 0)) {
		snprintf(err, errcap, "share_instance is not bridged for wire instances yet");
		return 1;
	}
	if (port < 0 || port > 65535) {
		snprintf(err, errcap, "port out of range");
		return 1;
	}
	if (server && port == 0)
		port = free_port();
	if (port <= 0) {
		snprintf(err, errcap, "no free port");
		return 1;
	}
	if (!wire_plugins) {
		snprintf(err, errcap, "no plugin host for wire instances");
		return 1;
	}
	wire_inst *w = NULL;
	for (size_t i = 0; i < WIRE_MAX_INST; i++)
		if (!insts[i].used) {
			w = &insts[i];
			break;
		}
	if (!w) {
		snprintf(err, errcap, "too many wire instances in one bridge");
		return 1;
	}
	const char *tmp = getenv("TMPDIR");
	snprintf(w->dir, sizeof(w->dir), "%s/rnsc_wire_%s_XXXXXX", tmp && *tmp ? tmp : "/tmp",
		 server ? "server" : "client");
	if (!mkdtemp(w->dir)) {
		w->dir[0] = '\0';
		snprintf(err, errcap, "mkdtemp failed");
		return 1;
	}
	char path[300];
	snprintf(path, sizeof(path), "%s/config", w->dir);
	FILE *f = fopen(path, "w");
	if (!f) {
		snprintf(err, errcap, "cannot write %s", path);
		w->dir[0] = '\0';
		return 1;
	}
	/* enable_transport: absent -> Yes (server default), null -> no line, else as given; the
	 * client's config has it on too, as the reference bridge's helper defaults it */
	json_t *et = json_object_get(params, "enable_transport");
	fprintf(f, "[reticulum]\n");
	if (!et)
		fprintf(f, "  enable_transport = Yes\n");
	else if (!json_is_null(et))
		fprintf(f, "  enable_transport = %s\n",
			rnsc_bridge_bool(params, "enable_transport", 1) ? "Yes" : "No");
	fprintf(f, "  share_instance = No\n");
	fprintf(f, "  respond_to_probes = %s\n",
		rnsc_bridge_bool(params, "respond_to_probes", 0) ? "Yes" : "No");
	json_t *uip = json_object_get(params, "use_implicit_proof");
	if (uip && !json_is_null(uip))
		fprintf(f, "  use_implicit_proof = %s\n",
			rnsc_bridge_bool(params, "use_implicit_proof", 1) ? "Yes" : "No");
	fprintf(f, "\n[logging]\n  loglevel = 0\n");
	fprintf(f, "\n[interfaces]\n  [[Wire TCP %s]]\n", server ? "Server" : "Client");
	if (server)
		fprintf(f,
			"    type = TCPServerInterface\n    enabled = Yes\n"
			"    listen_ip = 127.0.0.1\n    listen_port = %lld\n",
			port);
	else
		fprintf(f,
			"    type = TCPClientInterface\n    enabled = Yes\n"
			"    target_host = %s\n    target_port = %lld\n",
			host, port);
	if (fixed_mtu >= 0)
		fprintf(f, "    fixed_mtu = %lld\n", fixed_mtu);
	if (*netname)
		fprintf(f, "    network_name = %s\n", netname);
	if (*pass)
		fprintf(f, "    passphrase = %s\n", pass);
	if (ifac_size >= 0)
		fprintf(f, "    ifac_size = %lld\n", ifac_size);
	if (bitrate >= 0)
		fprintf(f, "    bitrate = %lld\n", bitrate);
	if (mode_value(mode))
		fprintf(f, "    mode = %s\n", mode_value(mode));
	if (fclose(f) != 0) {
		snprintf(err, errcap, "cannot write %s", path);
		inst_free(w);
		return 1;
	}
	rnsc_node_options opt = {0};
	opt.config_dir = w->dir;
	rnsc_config_error ce = {0};
	int rc = rnsc_node_new(b->ctx, wire_plugins, &opt, &w->node, &ce);
	if (rc) {
		snprintf(err, errcap, "node start failed: %s (%.300s)", rnsc_err_name(rc), ce.msg);
		inst_free(w);
		return 1;
	}
	rnsc_node_hooks hooks = {0};
	hooks.ud = w;
	hooks.on_link_established = on_link_established;
	hooks.on_link_closed = on_link_closed;
	hooks.on_link_data = on_link_data;
	hooks.on_receipt = on_receipt;
	rnsc_node_set_hooks(w->node, &hooks);
	uint8_t rnd[8];
	rnsc_random(b->ctx, rnd, sizeof(rnd));
	for (int i = 0; i < 8; i++)
		snprintf(w->handle + 2 * i, 3, "%02x", rnd[i]);
	w->used = 1;
	w->port = (int)port;
	if (!wire_thread_on) {
		if (pthread_create(&wire_thread, NULL, driver, NULL) != 0) {
			inst_free(w);
			snprintf(err, errcap, "cannot start the driver thread");
			return 1;
		}
		wire_thread_on = 1;
	}
	if (!server) {
		/* the reference's TCPClientInterface connects inside Reticulum() before the start
		 * returns; rnsc's connects on the loop, so wait (up to 5 s) for it to be online,
		 * else a test that announces right after the start races the connect */
		uint64_t deadline = rnsc_node_now_ms() + 5000;
		rnsc_iface_host *h = rnsc_node_ifaces(w->node);
		for (;;) {
			int online = 0;
			for (size_t i = 0; i < rnsc_iface_host_count(h); i++)
				online |= rnsc_iface_online(rnsc_iface_host_at(h, i));
			if (online || rnsc_node_now_ms() >= deadline)
				break;
			wait_unlocked(20);
		}
		/* and give the server a moment to accept and spawn its side of the connection */
		wait_unlocked(250);
	}
	json_object_set_new(result, "handle", json_string(w->handle));
	rnsc_bridge_set_hex(result, "identity_hash",
			    rnsc_transport_id(rnsc_node_transport(w->node)),
			    RNSC_TRUNCATED_HASHLEN);
	if (server) {
		json_object_set_new(result, "port", json_integer(port));
		json_object_set_new(
			result, "transport_enabled",
			json_boolean(!et || (!json_is_null(et) &&
					     rnsc_bridge_bool(params, "enable_transport", 1))));
	}
	return 0;
}

static int cmd_start_tcp_server(rnsc_bridge *b, json_t *p, json_t *r, char *e, size_t n)
{
	return wire_start(b, p, r, e, n, 1);
}

static int cmd_start_tcp_client(rnsc_bridge *b, json_t *p, json_t *r, char *e, size_t n)
{
	return wire_start(b, p, r, e, n, 0);
}

static int cmd_stop(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	(void)b;
	wire_inst *w = find_inst(params, err, errcap);
	if (!w) {
		if (!json_is_string(json_object_get(params, "handle")))
			return 1;
		err[0] = '\0';
		json_object_set_new(result, "stopped", json_false());
		return 0;
	}
	inst_free(w);
	json_object_set_new(result, "stopped", json_true());
	return 0;
}

/* ---- destinations, announces, paths -------------------------------------------------------- */

/* Registers a fresh SINGLE IN destination with a new identity (app_name, aspects). */
static wire_dest *new_dest(rnsc_bridge *b, wire_inst *w, json_t *params, int prove_all, char *err,
			   size_t errcap)
{
	const char *app;
	if (rnsc_bridge_str(params, "app_name", NULL, &app, err, errcap))
		return NULL;
	json_t *asp = json_object_get(params, "aspects");
	const char *aspects[16];
	size_t na = 0;
	if (asp && !json_is_null(asp)) {
		if (!json_is_array(asp) || json_array_size(asp) > 16) {
			snprintf(err, errcap, "aspects must be a list of at most 16 strings");
			return NULL;
		}
		for (size_t i = 0; i < json_array_size(asp); i++) {
			json_t *a = json_array_get(asp, i);
			if (!json_is_string(a)) {
				snprintf(err, errcap, "aspects must be strings");
				return NULL;
			}
			aspects[na++] = json_string_value(a);
		}
	}
	if (w->n_dests == WIRE_MAX_DEST) {
		snprintf(err, errcap, "too many destinations on one instance");
		return NULL;
	}
	wire_dest *d = &w->dests[w->n_dests];
	memset(d, 0, sizeof(*d));
	int rc = rnsc_identity_generate(b->ctx, &d->id);
	if (rc) {
		rnsc_bridge_fail(err, errcap, "identity", rc);
		return NULL;
	}
	rc = rnsc_transport_dest_add(rnsc_node_transport(w->node), RNSC_DEST_SINGLE, &d->id, app,
				     aspects, na, prove_all, d->hash);
	if (rc) {
		rnsc_identity_free(&d->id);
		rnsc_bridge_fail(err, errcap, "destination", rc);
		return NULL;
	}
	w->n_dests++;
	return d;
}

static int announce_dest(wire_inst *w, wire_dest *d, const uint8_t *ad, size_t adl, char *err,
			 size_t errcap)
{
	int rc = rnsc_transport_announce(rnsc_node_transport(w->node), d->hash, ad, adl,
					 rnsc_node_now_ms());
	if (rc)
		return rnsc_bridge_fail(err, errcap, "announce", rc);
	rnsc_node_flush(w->node);
	return 0;
}

static int cmd_announce(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	wire_inst *w = find_inst(params, err, errcap);
	if (!w)
		return 1;
	if (rnsc_bridge_bool(params, "enable_ratchets", 0)) {
		snprintf(err, errcap, "enable_ratchets is not bridged for wire announces yet");
		return 1;
	}
	uint8_t *ad;
	size_t adl;
	if (rnsc_bridge_hex(params, "app_data", 0, &ad, &adl, err, errcap))
		return 1;
	wire_dest *d = new_dest(b, w, params, 0, err, errcap);
	int rc = !d || announce_dest(w, d, adl ? ad : NULL, adl, err, errcap);
	free(ad);
	if (rc)
		return 1;
	rnsc_bridge_set_hex(result, "destination_hash", d->hash, RNSC_TRUNCATED_HASHLEN);
	rnsc_bridge_set_hex(result, "identity_hash", d->id.hash, RNSC_TRUNCATED_HASHLEN);
	return 0;
}

static int cmd_listen(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	wire_inst *w = find_inst(params, err, errcap);
	if (!w)
		return 1;
	const char *ps, *rs;
	if (rnsc_bridge_str(params, "proof_strategy", "none", &ps, err, errcap) ||
	    rnsc_bridge_str(params, "resource_strategy", "all", &rs, err, errcap))
		return 1;
	if (strcasecmp(ps, "all") != 0 && strcasecmp(ps, "none") != 0) {
		snprintf(err, errcap,
			 "Unsupported proof_strategy='%.32s'; expected 'none' or 'all'", ps);
		return 1;
	}
	if (rnsc_bridge_bool(params, "enable_ratchets", 0)) {
		snprintf(err, errcap, "enable_ratchets is not bridged for wire listeners yet");
		return 1;
	}
	wire_dest *d = new_dest(b, w, params, strcasecmp(ps, "all") == 0, err, errcap);
	if (!d)
		return 1;
	d->listener = 1;
	if (announce_dest(w, d, NULL, 0, err, errcap))
		return 1;
	uint8_t pub[RNSC_KEYSIZE];
	memcpy(pub, d->id.x_pub, 32);
	memcpy(pub + 32, d->id.ed_pub, 32);
	rnsc_bridge_set_hex(result, "destination_hash", d->hash, RNSC_TRUNCATED_HASHLEN);
	rnsc_bridge_set_hex(result, "identity_hash", d->id.hash, RNSC_TRUNCATED_HASHLEN);
	rnsc_bridge_set_hex(result, "public_key", pub, sizeof(pub));
	json_object_set_new(result, "resource_strategy", json_string(rs));
	return 0;
}

static int cmd_poll_path(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	(void)b;
	wire_inst *w = find_inst(params, err, errcap);
	uint8_t dh[RNSC_TRUNCATED_HASHLEN];
	long long timeout;
	if (!w || rnsc_bridge_hex_fixed(params, "destination_hash", dh, sizeof(dh), err, errcap) ||
	    rnsc_bridge_int(params, "timeout_ms", 5000, &timeout, err, errcap))
		return 1;
	uint64_t deadline = rnsc_node_now_ms() + (uint64_t)(timeout > 0 ? timeout : 0);
	for (;;) {
		rnsc_transport_path p;
		if (rnsc_transport_path_get(rnsc_node_transport(w->node), dh, &p) == 0) {
			json_object_set_new(result, "found", json_true());
			json_object_set_new(result, "hops", json_integer(p.hops));
			return 0;
		}
		if (rnsc_node_now_ms() >= deadline)
			break;
		wait_unlocked(50);
		if (!w->used)
			break;
	}
	json_object_set_new(result, "found", json_false());
	json_object_set_new(result, "hops", json_null());
	return 0;
}

static int cmd_request_path(rnsc_bridge *b, json_t *params, json_t *result, char *err,
			    size_t errcap)
{
	(void)b;
	wire_inst *w = find_inst(params, err, errcap);
	uint8_t dh[RNSC_TRUNCATED_HASHLEN];
	if (!w || rnsc_bridge_hex_fixed(params, "destination_hash", dh, sizeof(dh), err, errcap))
		return 1;
	int rc = rnsc_transport_request_path(rnsc_node_transport(w->node), dh, 0, 0,
					     rnsc_node_now_ms());
	if (rc)
		return rnsc_bridge_fail(err, errcap, "request_path", rc);
	rnsc_node_flush(w->node);
	json_object_set_new(result, "sent", json_true());
	return 0;
}

static int cmd_read_path_entry(rnsc_bridge *b, json_t *params, json_t *result, char *err,
			       size_t errcap)
{
	(void)b;
	wire_inst *w = find_inst(params, err, errcap);
	uint8_t dh[RNSC_TRUNCATED_HASHLEN];
	if (!w || rnsc_bridge_hex_fixed(params, "destination_hash", dh, sizeof(dh), err, errcap))
		return 1;
	rnsc_transport_path p;
	if (rnsc_transport_path_get(rnsc_node_transport(w->node), dh, &p) != 0) {
		json_object_set_new(result, "found", json_false());
		return 0;
	}
	json_object_set_new(result, "found", json_true());
	json_object_set_new(result, "timestamp", json_integer((json_int_t)p.timestamp));
	json_object_set_new(result, "expires", json_integer((json_int_t)p.expires));
	json_object_set_new(result, "hops", json_integer(p.hops));
	rnsc_bridge_set_hex(result, "next_hop", p.next_hop, RNSC_TRUNCATED_HASHLEN);
	const char *name = rnsc_node_iface_name(w->node, p.iface);
	json_object_set_new(result, "receiving_interface_name",
			    name ? json_string(name) : json_null());
	return 0;
}

/* ---- links ------------------------------------------------------------------------------- */

static int cmd_link_open(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	(void)b;
	wire_inst *w = find_inst(params, err, errcap);
	uint8_t dh[RNSC_TRUNCATED_HASHLEN], lid[RNSC_TRUNCATED_HASHLEN];
	long long timeout;
	if (!w || rnsc_bridge_hex_fixed(params, "destination_hash", dh, sizeof(dh), err, errcap) ||
	    rnsc_bridge_int(params, "timeout_ms", 10000, &timeout, err, errcap))
		return 1;
	rnsc_transport *t = rnsc_node_transport(w->node);
	int rc = rnsc_transport_link_open(t, dh, lid, rnsc_node_now_ms());
	if (rc == RNSC_ERR_NOTFOUND) {
		char hx[33];
		for (int i = 0; i < 16; i++)
			snprintf(hx + 2 * i, 3, "%02x", dh[i]);
		snprintf(err, errcap,
			 "No identity known for %s; ensure an announce for this destination was "
			 "received first.",
			 hx);
		return 1;
	}
	if (rc)
		return rnsc_bridge_fail(err, errcap, "link_open", rc);
	rnsc_node_flush(w->node);
	uint64_t deadline = rnsc_node_now_ms() + (uint64_t)(timeout > 0 ? timeout : 0);
	for (;;) {
		wire_link *l = find_link(w, lid);
		if (l && l->closed) {
			snprintf(err, errcap, "link closed before becoming active (reason %d)",
				 l->reason);
			return 1;
		}
		if (l && l->established)
			break;
		if (rnsc_node_now_ms() >= deadline) {
			rnsc_transport_link_close(t, lid, rnsc_node_now_ms());
			rnsc_node_flush(w->node);
			snprintf(err, errcap, "Link did not become active within %lldms", timeout);
			return 1;
		}
		wait_unlocked(20);
		if (!w->used) {
			snprintf(err, errcap, "instance stopped");
			return 1;
		}
	}
	rnsc_bridge_set_hex(result, "link_id", lid, sizeof(lid));
	return 0;
}

static int cmd_link_send(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	(void)b;
	wire_inst *w = find_inst(params, err, errcap);
	uint8_t lid[RNSC_TRUNCATED_HASHLEN];
	if (!w || rnsc_bridge_hex_fixed(params, "link_id", lid, sizeof(lid), err, errcap))
		return 1;
	wire_link *l = find_link(w, lid);
	if (!l || !l->initiator) {
		snprintf(err, errcap, "Unknown link_id");
		return 1;
	}
	uint8_t *data;
	size_t len;
	if (rnsc_bridge_hex(params, "data", 0, &data, &len, err, errcap))
		return 1;
	int rc = rnsc_transport_link_send(rnsc_node_transport(w->node), lid, data, len, NULL,
					  rnsc_node_now_ms());
	free(data);
	if (rc)
		return rnsc_bridge_fail(err, errcap, "link_send", rc);
	rnsc_node_flush(w->node);
	json_object_set_new(result, "sent", json_true());
	return 0;
}

static int cmd_link_poll(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	(void)b;
	wire_inst *w = find_inst(params, err, errcap);
	uint8_t dh[RNSC_TRUNCATED_HASHLEN];
	long long timeout;
	if (!w || rnsc_bridge_hex_fixed(params, "destination_hash", dh, sizeof(dh), err, errcap) ||
	    rnsc_bridge_int(params, "timeout_ms", 5000, &timeout, err, errcap))
		return 1;
	wire_dest *d = find_dest(w, dh);
	if (!d || !d->listener) {
		snprintf(err, errcap, "No listener registered for that destination_hash");
		return 1;
	}
	uint64_t deadline = rnsc_node_now_ms() + (uint64_t)(timeout > 0 ? timeout : 0);
	while (d->n_rx == 0 && rnsc_node_now_ms() < deadline) {
		wait_unlocked(50);
		if (!w->used) {
			snprintf(err, errcap, "instance stopped");
			return 1;
		}
	}
	json_t *arr = json_array();
	for (size_t i = 0; i < d->n_rx; i++) {
		json_t *tmp = json_object();
		rnsc_bridge_set_hex(tmp, "x", d->rx[i].data, d->rx[i].len);
		json_array_append(arr, json_object_get(tmp, "x"));
		json_decref(tmp);
		free(d->rx[i].data);
	}
	d->n_rx = 0;
	json_object_set_new(result, "packets", arr);
	return 0;
}

static int cmd_link_teardown(rnsc_bridge *b, json_t *params, json_t *result, char *err,
			     size_t errcap)
{
	(void)b;
	wire_inst *w = find_inst(params, err, errcap);
	uint8_t lid[RNSC_TRUNCATED_HASHLEN];
	if (!w || rnsc_bridge_hex_fixed(params, "link_id", lid, sizeof(lid), err, errcap))
		return 1;
	int rc = rnsc_transport_link_close(rnsc_node_transport(w->node), lid, rnsc_node_now_ms());
	rnsc_node_flush(w->node);
	json_object_set_new(result, "torn_down", json_boolean(rc == 0));
	return 0;
}

/* ---- observations ------------------------------------------------------------------------ */

static int cmd_tx_bytes(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	(void)b;
	wire_inst *w = find_inst(params, err, errcap);
	if (!w)
		return 1;
	/* the configured interface only: a server's count includes its children's */
	uint64_t total = 0;
	rnsc_iface_host *h = rnsc_node_ifaces(w->node);
	for (size_t i = 0; i < rnsc_iface_host_count(h); i++) {
		rnsc_iface_status st;
		memset(&st, 0, sizeof(st));
		st.stats.struct_size = sizeof(st.stats);
		if (rnsc_iface_status_get(rnsc_iface_host_at(h, i), &st) == 0 && !st.is_child)
			total += st.stats.tx_bytes;
	}
	json_object_set_new(result, "tx_bytes", json_integer((json_int_t)total));
	return 0;
}

static int cmd_identity_recall(rnsc_bridge *b, json_t *params, json_t *result, char *err,
			       size_t errcap)
{
	(void)b;
	wire_inst *w = find_inst(params, err, errcap);
	uint8_t dh[RNSC_TRUNCATED_HASHLEN];
	long long timeout;
	if (!w || rnsc_bridge_hex_fixed(params, "destination_hash", dh, sizeof(dh), err, errcap) ||
	    rnsc_bridge_int(params, "timeout_ms", 0, &timeout, err, errcap))
		return 1;
	if (rnsc_bridge_bool(params, "from_identity_hash", 0)) {
		snprintf(err, errcap, "recall by identity hash is not bridged for wire instances");
		return 1;
	}
	uint64_t deadline = rnsc_node_now_ms() + (uint64_t)(timeout > 0 ? timeout : 0);
	for (;;) {
		rnsc_identity id;
		const uint8_t *ad = NULL;
		size_t adl = 0;
		if (rnsc_transport_recall(rnsc_node_transport(w->node), dh, &id, &ad, &adl) == 0) {
			uint8_t pub[RNSC_KEYSIZE];
			memcpy(pub, id.x_pub, 32);
			memcpy(pub + 32, id.ed_pub, 32);
			json_object_set_new(result, "found", json_true());
			rnsc_bridge_set_hex(result, "public_key", pub, sizeof(pub));
			rnsc_bridge_set_hex(result, "hash", id.hash, sizeof(id.hash));
			if (ad)
				rnsc_bridge_set_hex(result, "app_data", ad, adl);
			else
				json_object_set_new(result, "app_data", json_null());
			rnsc_identity_free(&id);
			return 0;
		}
		if (rnsc_node_now_ms() >= deadline)
			break;
		wait_unlocked(50);
		if (!w->used)
			break;
	}
	json_object_set_new(result, "found", json_false());
	json_object_set_new(result, "app_data", json_null());
	return 0;
}

static int cmd_set_proof_strategy(rnsc_bridge *b, json_t *params, json_t *result, char *err,
				  size_t errcap)
{
	(void)b;
	wire_inst *w = find_inst(params, err, errcap);
	uint8_t dh[RNSC_TRUNCATED_HASHLEN];
	const char *st;
	if (!w || rnsc_bridge_hex_fixed(params, "destination_hash", dh, sizeof(dh), err, errcap) ||
	    rnsc_bridge_str(params, "strategy", NULL, &st, err, errcap))
		return 1;
	int c;
	if (strcasecmp(st, "all") == 0)
		c = RNSC_PROVE_ALL;
	else if (strcasecmp(st, "none") == 0)
		c = RNSC_PROVE_NONE;
	else {
		/* PROVE_APP needs the reference bridge's payload-byte callback, not bridged yet */
		snprintf(err, errcap, "strategy must be one of ['all', 'none'] here (got '%.16s')",
			 st);
		return 1;
	}
	if (!find_dest(w, dh)) {
		snprintf(err, errcap,
			 "No registered destination with that hash; call wire_listen first.");
		return 1;
	}
	int rc = rnsc_transport_dest_set_proof_strategy(rnsc_node_transport(w->node), dh, c);
	if (rc)
		return rnsc_bridge_fail(err, errcap, "set_proof_strategy", rc);
	json_object_set_new(result, "strategy", json_string(c == RNSC_PROVE_ALL ? "all" : "none"));
	json_object_set_new(result, "proof_strategy", json_integer(c));
	return 0;
}

/* The reference bridge's link snapshot, from the engine's link (or, once the engine has
 * dropped a closed link, from what on_link_closed recorded). Fields rnsc's link does not
 * expose (last inbound, last keepalive) are null. */
static void link_status_fill(wire_inst *w, wire_link *l, json_t *r)
{
	const rnsc_link *k = rnsc_transport_link_get(rnsc_node_transport(w->node), l->id);
	int st = k ? rnsc_link_status(k) : RNSC_LINK_CLOSED;
	int reason = k ? rnsc_link_reason(k) : l->reason;
	if (st != RNSC_LINK_CLOSED)
		reason = 0;
	const char *sn = rnsc_link_status_name(st), *rn = rnsc_link_reason_name(reason);
	json_object_set_new(r, "status", json_integer(st));
	json_object_set_new(r, "status_name", sn ? json_string(sn) : json_null());
	json_object_set_new(r, "teardown_reason", reason ? json_integer(reason) : json_null());
	json_object_set_new(r, "teardown_reason_name",
			    rn && reason ? json_string(rn) : json_null());
	json_object_set_new(r, "no_inbound_for_ms", json_null());
	json_object_set_new(r, "last_keepalive_ago_ms", json_null());
	if (k) {
		json_object_set_new(r, "keepalive_s",
				    json_real(rnsc_link_keepalive_ms(k) / 1000.0));
		json_object_set_new(r, "stale_time_s",
				    json_real(rnsc_link_stale_time_ms(k) / 1000.0));
		double rtt = rnsc_link_rtt(k);
		json_object_set_new(r, "rtt", rtt >= 0 ? json_real(rtt) : json_null());
		json_object_set_new(r, "mtu", json_integer(rnsc_link_mtu(k)));
		json_object_set_new(r, "mdu", json_integer((json_int_t)rnsc_link_get_mdu(k)));
		json_object_set_new(r, "mode", json_integer(rnsc_link_get_mode(k)));
		const rnsc_identity *ri = l->initiator ? NULL : rnsc_link_remote_identity(k);
		if (ri)
			rnsc_bridge_set_hex(r, "remote_identity_hash", ri->hash, sizeof(ri->hash));
		else
			json_object_set_new(r, "remote_identity_hash", json_null());
		json_object_set_new(r, "remote_identified", json_boolean(ri != NULL));
	} else {
		json_object_set_new(r, "remote_identity_hash", json_null());
		json_object_set_new(r, "remote_identified", json_false());
	}
}

static int cmd_link_status(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	(void)b;
	wire_inst *w = find_inst(params, err, errcap);
	uint8_t lid[RNSC_TRUNCATED_HASHLEN];
	if (!w || rnsc_bridge_hex_fixed(params, "link_id", lid, sizeof(lid), err, errcap))
		return 1;
	wire_link *l = find_link(w, lid);
	if (!l || !l->initiator) {
		snprintf(err, errcap, "Unknown link_id");
		return 1;
	}
	link_status_fill(w, l, result);
	return 0;
}

static int cmd_listener_link_status(rnsc_bridge *b, json_t *params, json_t *result, char *err,
				    size_t errcap)
{
	(void)b;
	wire_inst *w = find_inst(params, err, errcap);
	uint8_t dh[RNSC_TRUNCATED_HASHLEN];
	long long timeout;
	if (!w || rnsc_bridge_hex_fixed(params, "destination_hash", dh, sizeof(dh), err, errcap) ||
	    rnsc_bridge_int(params, "timeout_ms", 0, &timeout, err, errcap))
		return 1;
	wire_dest *d = find_dest(w, dh);
	if (!d || !d->listener) {
		snprintf(err, errcap, "No listener registered for that destination_hash");
		return 1;
	}
	uint64_t deadline = rnsc_node_now_ms() + (uint64_t)(timeout > 0 ? timeout : 0);
	for (;;) {
		wire_link *last = NULL;
		size_t n = 0;
		for (size_t i = 0; i < w->n_links; i++)
			if (!w->links[i].initiator && w->links[i].established &&
			    memcmp(w->links[i].dest, dh, sizeof(dh)) == 0)
				last = &w->links[i], n++;
		if (last) {
			link_status_fill(w, last, result);
			json_object_set_new(result, "found", json_true());
			json_object_set_new(result, "link_count", json_integer((json_int_t)n));
			return 0;
		}
		if (rnsc_node_now_ms() >= deadline)
			break;
		wait_unlocked(50);
		if (!w->used)
			break;
	}
	json_object_set_new(result, "found", json_false());
	json_object_set_new(result, "link_count", json_integer(0));
	return 0;
}

static int cmd_link_await_status(rnsc_bridge *b, json_t *params, json_t *result, char *err,
				 size_t errcap)
{
	(void)b;
	wire_inst *w = find_inst(params, err, errcap);
	uint8_t lid[RNSC_TRUNCATED_HASHLEN];
	long long timeout, target = -1;
	if (!w || rnsc_bridge_hex_fixed(params, "link_id", lid, sizeof(lid), err, errcap) ||
	    rnsc_bridge_int(params, "timeout_ms", 15000, &timeout, err, errcap))
		return 1;
	json_t *tv = json_object_get(params, "target_status");
	if (json_is_string(tv)) {
		static const char *const names[] = {"PENDING", "HANDSHAKE", "ACTIVE", "STALE",
						    "CLOSED"};
		for (int i = 0; i < 5; i++)
			if (strcasecmp(json_string_value(tv), names[i]) == 0)
				target = i;
	} else if (rnsc_bridge_int(params, "target_status", -1, &target, err, errcap)) {
		return 1;
	}
	if (target < 0 || target > 4) {
		snprintf(err, errcap, "target_status must be a link status");
		return 1;
	}
	wire_link *l = find_link(w, lid);
	if (!l) {
		snprintf(err, errcap, "Unknown link_id");
		return 1;
	}
	uint64_t deadline = rnsc_node_now_ms() + (uint64_t)(timeout > 0 ? timeout : 0);
	int reached = 0;
	for (;;) {
		const rnsc_link *k = rnsc_transport_link_get(rnsc_node_transport(w->node), lid);
		int st = k ? rnsc_link_status(k) : RNSC_LINK_CLOSED;
		if (st >= target) {
			reached = 1;
			break;
		}
		if (rnsc_node_now_ms() >= deadline)
			break;
		wait_unlocked(50);
		if (!w->used)
			break;
	}
	link_status_fill(w, l, result);
	json_object_set_new(result, "reached", json_boolean(reached));
	return 0;
}

static const char *receipt_name(int st)
{
	return st == 2 ? "DELIVERED" : st == 1 ? "SENT" : "FAILED";
}

static int wait_receipt(wire_inst *w, size_t i, long long timeout)
{
	uint64_t deadline = rnsc_node_now_ms() + (uint64_t)(timeout > 0 ? timeout : 0);
	while (w->used && w->receipts[i].status == 1 && rnsc_node_now_ms() < deadline)
		wait_unlocked(50);
	return w->used;
}

static int cmd_send_packet_with_proof_request(rnsc_bridge *b, json_t *params, json_t *result,
					      char *err, size_t errcap)
{
	wire_inst *w = find_inst(params, err, errcap);
	uint8_t dh[RNSC_TRUNCATED_HASHLEN];
	long long timeout;
	if (!w || rnsc_bridge_hex_fixed(params, "destination_hash", dh, sizeof(dh), err, errcap) ||
	    rnsc_bridge_int(params, "timeout_ms", 10000, &timeout, err, errcap))
		return 1;
	if (w->n_receipts == WIRE_MAX_RX) {
		snprintf(err, errcap, "too many receipts on one instance");
		return 1;
	}
	uint8_t *data;
	size_t len;
	if (rnsc_bridge_hex(params, "data", 0, &data, &len, err, errcap))
		return 1;
	size_t i = w->n_receipts;
	int rc = rnsc_transport_send(rnsc_node_transport(w->node), dh, data, len,
				     w->receipts[i].hash, rnsc_node_now_ms());
	free(data);
	if (rc == RNSC_ERR_NOTFOUND) {
		snprintf(err, errcap,
			 "No identity known for that destination; ensure an announce "
			 "for this destination was received first.");
		return 1;
	}
	if (rc)
		return rnsc_bridge_fail(err, errcap, "send", rc);
	rnsc_node_flush(w->node);
	uint8_t rnd[8];
	rnsc_random(b->ctx, rnd, sizeof(rnd));
	for (int k = 0; k < 8; k++)
		snprintf(w->receipts[i].id + 2 * k, 3, "%02x", rnd[k]);
	w->receipts[i].status = 1;
	w->n_receipts++;
	rnsc_transport_path p;
	int hops = rnsc_transport_path_get(rnsc_node_transport(w->node), dh, &p) == 0
			   ? (int)p.hops
			   : RNSC_PATHFINDER_M;
	if (!wait_receipt(w, i, timeout)) {
		snprintf(err, errcap, "instance stopped");
		return 1;
	}
	int st = w->receipts[i].status;
	json_object_set_new(result, "sent", json_true());
	json_object_set_new(result, "receipt_id", json_string(w->receipts[i].id));
	json_object_set_new(result, "hops", json_integer(hops));
	json_object_set_new(result, "delivered", json_boolean(st == 2));
	json_object_set_new(result, "proved", json_boolean(st == 2));
	rnsc_bridge_set_hex(result, "proved_packet_hash", w->receipts[i].hash, RNSC_HASHLEN);
	/* the proof packet itself is consumed inside the engine: not observable here */
	json_object_set_new(result, "proof_data", json_null());
	json_object_set_new(result, "proof_len", json_null());
	json_object_set_new(result, "proof_raw", json_null());
	return 0;
}

static int cmd_packet_receipt_status(rnsc_bridge *b, json_t *params, json_t *result, char *err,
				     size_t errcap)
{
	(void)b;
	wire_inst *w = find_inst(params, err, errcap);
	const char *id;
	long long timeout;
	if (!w || rnsc_bridge_str(params, "receipt_id", NULL, &id, err, errcap) ||
	    rnsc_bridge_int(params, "timeout_ms", 0, &timeout, err, errcap))
		return 1;
	for (size_t i = 0; i < w->n_receipts; i++) {
		if (strcmp(w->receipts[i].id, id) != 0)
			continue;
		if (!wait_receipt(w, i, timeout)) {
			snprintf(err, errcap, "instance stopped");
			return 1;
		}
		int st = w->receipts[i].status;
		json_object_set_new(result, "status", json_integer(st));
		json_object_set_new(result, "status_name", json_string(receipt_name(st)));
		json_object_set_new(result, "delivered", json_boolean(st == 2));
		json_object_set_new(result, "proved", json_boolean(st == 2));
		return 0;
	}
	snprintf(err, errcap, "Unknown receipt_id: %.32s", id);
	return 1;
}

void rnsc_bridge_wire_set_plugins(rnsc_plugin_host *host)
{
	wire_plugins = host;
}

void rnsc_bridge_wire_shutdown(void)
{
	pthread_mutex_lock(&wire_mu);
	for (size_t i = 0; i < WIRE_MAX_INST; i++)
		if (insts[i].used)
			inst_free(&insts[i]);
	wire_quit = 1;
	pthread_mutex_unlock(&wire_mu);
	if (wire_thread_on)
		pthread_join(wire_thread, NULL);
	wire_thread_on = 0;
}

const rnsc_bridge_cmd rnsc_bridge_wire_cmds[] = {
	{"wire_start_tcp_server", cmd_start_tcp_server},
	{"wire_start_tcp_client", cmd_start_tcp_client},
	{"wire_stop", cmd_stop},
	{"wire_announce", cmd_announce},
	{"wire_listen", cmd_listen},
	{"wire_poll_path", cmd_poll_path},
	{"wire_request_path", cmd_request_path},
	{"wire_read_path_entry", cmd_read_path_entry},
	{"wire_link_open", cmd_link_open},
	{"wire_link_send", cmd_link_send},
	{"wire_link_poll", cmd_link_poll},
	{"wire_link_teardown", cmd_link_teardown},
	{"wire_tx_bytes", cmd_tx_bytes},
	{"wire_send_packet_with_proof_request", cmd_send_packet_with_proof_request},
	{"wire_packet_receipt_status", cmd_packet_receipt_status},
	{"wire_link_status", cmd_link_status},
	{"wire_listener_link_status", cmd_listener_link_status},
	{"wire_link_await_status", cmd_link_await_status},
	{"wire_identity_recall", cmd_identity_recall},
	{"wire_set_proof_strategy", cmd_set_proof_strategy},
	{NULL, NULL},
};
