/* SPDX-License-Identifier: MIT */
/*
 * The node (src/runtime/node.c) in-process: configuration errors naming section and
 * option; three nodes in one process over real TCP on 127.0.0.1 (no global state): a
 * transport node answering probes behind IFAC, a client with the right access code that
 * finds the path and gets its probe proved, one with the wrong code that gets nothing and
 * is counted; persistence across a restart (known destinations reloaded, a corrupt file
 * ignored); stopping a running node from another thread.
 */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crypto.h"
#include "cu_run.h"
#include "node.h"
#include "store.h"

static rnsc_ctx *C;
static rnsc_plugin_host *H;
static char root[256];

static void write_config(const char *dir, const char *text)
{
	char path[512];
	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/config", dir);
	FILE *f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
}

static int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t l = sizeof(a);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(fd, (struct sockaddr *)&a, &l))
		return -1;
	close(fd);
	return ntohs(a.sin_port);
}

static int start(const char *dir, rnsc_node **n, rnsc_config_error *err)
{
	rnsc_node_options o = {.config_dir = dir};
	return rnsc_node_new(C, H, &o, n, err);
}

static void expect_error(const char *name, const char *text, const char *w1, const char *w2)
{
	char dir[512];
	snprintf(dir, sizeof(dir), "%s/%s", root, name);
	write_config(dir, text);
	rnsc_node *n = NULL;
	rnsc_config_error err;
	int rc = start(dir, &n, &err);
	CU_ASSERT(rc < 0);
	CU_ASSERT_PTR_NULL(n);
	if (!strstr(err.msg, w1) || !strstr(err.msg, w2)) {
		fprintf(stderr, "node_test: '%s' lacks '%s'/'%s'\n", err.msg, w1, w2);
		CU_FAIL("message does not name section and option");
	}
	rnsc_node_del(n);
}

static void test_config_errors(void)
{
	expect_error("e1", "[reticulum]\n  enable_transport = maybe\n", "reticulum",
		     "enable_transport");
	expect_error("e2",
		     "[interfaces]\n  [[Srv]]\n    type = TCPServerInterface\n    enabled = yes\n"
		     "    listen_ip = 127.0.0.1\n    listen_port = abc\n",
		     "Srv", "listen_port");
	expect_error("e3",
		     "[interfaces]\n  [[Big]]\n    type = TCPServerInterface\n    enabled = yes\n"
		     "    listen_ip = 127.0.0.1\n    listen_port = 1\n    passphrase = x\n"
		     "    ifac_size = 1024\n",
		     "Big", "ifac_size");
}

/* ---- config honesty: skipped types, audit lines, retries ------------------------------------ */

static char logged[8192];

static void capture(void *ud, int level, const char *who, const char *msg)
{
	(void)ud;
	size_t l = strlen(logged);
	snprintf(logged + l, sizeof(logged) - l, "%d %s: %s\n", level, who, msg);
}

/* A type no plugin serves is logged and skipped, the TCP interface beside it opens; a
 * refused option, a typo and a foreign section are each named in one warning. */
static void test_skip_and_audit(void)
{
	char dir[512], text[1024];
	snprintf(dir, sizeof(dir), "%s/skip", root);
	snprintf(
		text, sizeof(text),
		"[reticulum]\n  share_instance = no\n  frobnicate = 3\n"
		"  discover_interfaces = no\n  qlen_in_pr = 9\n[extra]\n"
		"[interfaces]\n  loose = 1\n  [[Odd]]\n    type = NoSuchInterface\n    enabled = yes\n"
		"  [[My Weave]]\n    type = WeaveInterface\n    enabled = yes\n"
		"    port = /dev/rnsc-none\n"
		"  [[Srv]]\n    type = TCPServerInterface\n    enabled = yes\n"
		"    listen_ip = 127.0.0.1\n    listen_port = %d\n    outgoing = no\n"
		"    discoverable = no\n    spped = 3\n    target_port = 1\n"
		"    [[[sub]]]\n      x = 1\n",
		free_port());
	write_config(dir, text);
	logged[0] = 0;
	rnsc_ctx_set_log(C, capture, NULL, RNSC_LOG_WARNING);
	rnsc_node *n = NULL;
	rnsc_config_error err;
	int rc = start(dir, &n, &err);
	rnsc_ctx_set_log(C, capture, NULL, RNSC_LOG_CRITICAL);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	CU_ASSERT_EQUAL(rnsc_iface_host_count(rnsc_node_ifaces(n)), 1);
	CU_ASSERT_PTR_NOT_NULL(rnsc_iface_host_find(rnsc_node_ifaces(n), "Srv"));
	static const char *const want[] = {
		"[[Odd]] option \"type\": no loaded interface plugin serves type \"NoSuchInterface\"",
		"[[My Weave]] option \"type\": no loaded interface plugin serves type \"WeaveInterface\"",
		"[reticulum] option \"frobnicate\" (line 3): no version of the reference reads",
		"[reticulum] option \"qlen_in_pr\" (line 5): refused: ",
		"[extra] (line 6): the reference reads only",
		"[interfaces] option \"loose\" (line 8): an option outside any interface section",
		"[[Srv]] option \"outgoing\" (line 21): refused: rnsc transmits on every interface",
		"[[Srv]] option \"spped\" (line 23): no version of the reference reads",
		"[[Srv]] option \"target_port\" (line 24): not an option of TCPServerInterface",
		"[[[sub]]] (line 25): subsections of TCPServerInterface are never read",
		"2 interfaces could not be started",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(logged, want[i])) {
			fprintf(stderr, "node_test: log lacks '%s':\n%s", want[i], logged);
			CU_FAIL("an expected start-up log line is missing");
		}
	/* Benign values and options something read are not worth a line. */
	CU_ASSERT_PTR_NULL(strstr(logged, "discover_interfaces"));
	CU_ASSERT_PTR_NULL(strstr(logged, "discoverable"));
	CU_ASSERT_PTR_NULL(strstr(logged, "listen_port"));
	CU_ASSERT_PTR_NULL(strstr(logged, "\"type\" (line"));
	rnsc_node_del(n);
	/* An option before any section is never read by the reference either. */
	rnsc_config *cfg = NULL;
	CU_ASSERT_EQUAL_FATAL(
		rnsc_config_parse(C, "stray = 1\n[logging]\n  loglevel = 4\n", 35, "t", &cfg, &err),
		0);
	logged[0] = 0;
	rnsc_ctx_set_log(C, capture, NULL, RNSC_LOG_WARNING);
	CU_ASSERT_EQUAL(rnsc_config_audit_settings(cfg), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(logged, "option \"stray\" (line 1): an option outside any"));
	CU_ASSERT_EQUAL(rnsc_config_audit_settings(NULL), 0);
	CU_ASSERT_EQUAL(rnsc_config_audit_iface(NULL, "x"), 0);
	CU_ASSERT_PTR_NULL(rnsc_config_key_find("interface", "frobnicate"));
	CU_ASSERT_EQUAL(rnsc_config_key_find("interface", "outgoing")->status, RNSC_CFGKEY_REFUSED);
	rnsc_config_del(cfg);
	rnsc_ctx_set_log(C, NULL, NULL, RNSC_LOG_CRITICAL);
}

static int reopened;

static void on_reopened(void *ud, rnsc_iface *iface, const rnsc_config_section *s, const char *type)
{
	(void)ud;
	(void)s;
	reopened += iface && strcmp(type, "TCPServerInterface") == 0;
}

/* A device that cannot be opened yet (here: a port in use) is retried until it can. */
static void test_open_retry(void)
{
	int busy = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t l = sizeof(a);
	CU_ASSERT_FATAL(busy >= 0 && bind(busy, (struct sockaddr *)&a, sizeof(a)) == 0 &&
			listen(busy, 1) == 0 && getsockname(busy, (struct sockaddr *)&a, &l) == 0);
	char text[256];
	snprintf(text, sizeof(text),
		 "[interfaces]\n  [[Late]]\n    type = TCPServerInterface\n    enabled = yes\n"
		 "    listen_ip = 127.0.0.1\n    listen_port = %d\n",
		 ntohs(a.sin_port));
	rnsc_config *cfg = NULL;
	rnsc_loop *loop = NULL;
	rnsc_iface_host *ih = NULL;
	rnsc_config_error err;
	CU_ASSERT_EQUAL_FATAL(rnsc_config_parse(C, text, strlen(text), "t", &cfg, &err), 0);
	CU_ASSERT_EQUAL_FATAL(rnsc_loop_new(C, &loop), 0);
	CU_ASSERT_EQUAL_FATAL(rnsc_iface_host_new(C, H, loop, &ih), 0);
	rnsc_iface_host_set_retry_hooks(ih, NULL, on_reopened, NULL);
	rnsc_config_iface ci;
	CU_ASSERT_EQUAL_FATAL(rnsc_config_iface_at(cfg, 0, &ci, &err), 0);
	int rc = rnsc_iface_host_open_retry(ih, ci.section, ci.name, ci.type, 50, NULL, &err);
	CU_ASSERT(rnsc_iface_open_failed_on_resource(rc));
	CU_ASSERT(rnsc_iface_open_failure_retryable(RNSC_ERR_STATE));
	CU_ASSERT(rnsc_iface_open_failure_retryable(RNSC_ERR_PLUGIN_INIT));
	CU_ASSERT(!rnsc_iface_open_failure_retryable(RNSC_ERR_CONFIG_VALUE));
	CU_ASSERT(!rnsc_iface_open_failure_retryable(RNSC_ERR_NOTFOUND));
	CU_ASSERT_EQUAL(rnsc_iface_host_retry_count(ih), 1);
	CU_ASSERT_EQUAL(rnsc_iface_host_count(ih), 0);
	for (int i = 0; i < 10; i++) /* still busy: it keeps trying */
		rnsc_loop_run_once(loop, 20);
	CU_ASSERT_EQUAL(rnsc_iface_host_retry_count(ih), 1);
	CU_ASSERT_EQUAL(reopened, 0);
	close(busy);
	for (int i = 0; i < 100 && rnsc_iface_host_retry_count(ih); i++)
		rnsc_loop_run_once(loop, 20);
	CU_ASSERT_EQUAL(rnsc_iface_host_retry_count(ih), 0);
	CU_ASSERT_EQUAL(reopened, 1);
	CU_ASSERT_PTR_NOT_NULL(rnsc_iface_host_find(ih, "Late"));
	/* A configuration error is not retried; a pending retry dies with its host. */
	CU_ASSERT_EQUAL(rnsc_iface_host_open_retry(ih, ci.section, "Other", "NoSuchInterface", 50,
						   NULL, &err),
			RNSC_ERR_NOTFOUND);
	CU_ASSERT_EQUAL(rnsc_iface_host_retry_count(ih), 0);
	CU_ASSERT_EQUAL(
		rnsc_iface_host_open_retry(ih, ci.section, "Twice", ci.type, 50, NULL, &err),
		RNSC_ERR_IO);
	CU_ASSERT_EQUAL(rnsc_iface_host_retry_count(ih), 1);
	rnsc_iface_host_del(ih);
	rnsc_loop_del(loop);
	rnsc_config_del(cfg);
}

/* ---- three nodes -------------------------------------------------------------------------- */

static rnsc_node *A, *B, *X;
static uint8_t probe_hash[RNSC_HASHLEN];
static int proved = -1;

static void on_receipt(void *ud, const uint8_t h[RNSC_HASHLEN], int ok)
{
	(void)ud;
	if (memcmp(h, probe_hash, RNSC_HASHLEN) == 0)
		proved = ok;
}

static void pump(int ms)
{
	uint64_t end = rnsc_monotonic_ns() + (uint64_t)ms * RNSC_NS_PER_MS;
	while (rnsc_monotonic_ns() < end) {
		rnsc_node *ns[3] = {A, B, X};
		for (int i = 0; i < 3; i++)
			if (ns[i])
				rnsc_node_run_once(ns[i], 0);
		usleep(2000);
	}
}

/* Pumps until cond() or ms elapse; returns cond(). */
static int pump_until(int ms, int (*cond)(void))
{
	for (int i = 0; i < ms / 20; i++) {
		if (cond())
			return 1;
		pump(20);
	}
	return cond();
}

static int b_online(void)
{
	return rnsc_iface_online(rnsc_iface_host_at(rnsc_node_ifaces(B), 0)) &&
	       rnsc_iface_online(rnsc_iface_host_at(rnsc_node_ifaces(X), 0));
}

static int b_has_path(void)
{
	return rnsc_transport_has_path(rnsc_node_transport(B), rnsc_node_probe_hash(A));
}

static int b_proved(void)
{
	return proved >= 0;
}

static void test_three_nodes(void)
{
	char da[512], db[512], dx[512], text[1024];
	int port = free_port();
	CU_ASSERT_FATAL(port > 0);
	snprintf(da, sizeof(da), "%s/A", root);
	snprintf(db, sizeof(db), "%s/B", root);
	snprintf(dx, sizeof(dx), "%s/X", root);
	snprintf(text, sizeof(text),
		 "[reticulum]\n  enable_transport = yes\n  respond_to_probes = yes\n"
		 "  share_instance = no\n"
		 "[interfaces]\n  [[Srv]]\n    type = TCPServerInterface\n    enabled = yes\n"
		 "    listen_ip = 127.0.0.1\n    listen_port = %d\n    network_name = net\n"
		 "    passphrase = right\n    mode = gateway\n",
		 port);
	write_config(da, text);
#define CLIENT_CFG                                                                                                        \
	"[reticulum]\n  share_instance = no\n[interfaces]\n  [[Cli]]\n    type = TCPClientInterface\n    enabled = yes\n" \
	"    target_host = 127.0.0.1\n    target_port = %d\n    networkname = net\n"                                      \
	"    pass_phrase = %s\n"
	snprintf(text, sizeof(text), CLIENT_CFG, port, "right");
	write_config(db, text);
	snprintf(text, sizeof(text), CLIENT_CFG, port, "wrong");
	write_config(dx, text);
	rnsc_config_error err;
	CU_ASSERT_EQUAL_FATAL(start(da, &A, &err), 0);
	CU_ASSERT_EQUAL_FATAL(start(db, &B, &err), 0);
	CU_ASSERT_EQUAL_FATAL(start(dx, &X, &err), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(rnsc_node_probe_hash(A));
	CU_ASSERT_PTR_NULL(rnsc_node_probe_hash(B)); /* no transport: no probe responder */
	CU_ASSERT_FATAL(pump_until(10000, b_online));

	const uint8_t *ph = rnsc_node_probe_hash(A);
	rnsc_transport *tb = rnsc_node_transport(B), *tx = rnsc_node_transport(X);
	CU_ASSERT_EQUAL(rnsc_transport_request_path(tb, ph, 0, 0, rnsc_node_now_ms()), 0);
	CU_ASSERT_EQUAL(rnsc_transport_request_path(tx, ph, 0, 0, rnsc_node_now_ms()), 0);
	rnsc_node_flush(B);
	rnsc_node_flush(X);
	CU_ASSERT_FATAL(pump_until(10000, b_has_path));
	rnsc_transport_path p;
	CU_ASSERT_EQUAL(rnsc_transport_path_get(tb, ph, &p), 0);
	CU_ASSERT_EQUAL(p.hops, 1);
	CU_ASSERT_STRING_EQUAL(rnsc_node_iface_name(B, p.iface), "Cli");

	rnsc_node_hooks hk = {.on_receipt = on_receipt};
	rnsc_node_set_hooks(B, &hk);
	uint8_t payload[16] = "probe payload";
	CU_ASSERT_EQUAL(rnsc_transport_send(tb, ph, payload, sizeof(payload), probe_hash,
					    rnsc_node_now_ms()),
			0);
	rnsc_node_flush(B);
	CU_ASSERT(pump_until(10000, b_proved));
	CU_ASSERT_EQUAL(proved, 1);

	/* The wrong access code: nothing from X passes A's check, nothing back reaches X. */
	CU_ASSERT_FALSE(rnsc_transport_has_path(tx, ph));
	rnsc_node_stats sa, sx;
	rnsc_node_stats_get(A, &sa);
	rnsc_node_stats_get(X, &sx);
	CU_ASSERT(sa.ifac_dropped >= 1);
	CU_ASSERT(sa.rx_frames >= 2);
	CU_ASSERT(sx.tx_frames >= 1);
	CU_ASSERT(rnsc_transport_get_stats(rnsc_node_transport(A))->proofs_sent >= 1);

	/* Restart B: the identity behind the probe destination is remembered from disk. */
	rnsc_node_del(B);
	B = NULL;
	CU_ASSERT_EQUAL_FATAL(start(db, &B, &err), 0);
	rnsc_identity id;
	CU_ASSERT_EQUAL(rnsc_transport_recall(rnsc_node_transport(B), ph, &id, NULL, NULL), 0);
	rnsc_identity_free(&id);
	/* Without enable_transport the path table is not restored, as in the reference. */
	CU_ASSERT_FALSE(rnsc_transport_has_path(rnsc_node_transport(B), ph));
	rnsc_node_del(B);
	B = NULL;

	/* A corrupt file is ignored: the node starts with nothing remembered. */
	char kd[600];
	snprintf(kd, sizeof(kd), "%s/storage/known_destinations", db);
	CU_ASSERT_EQUAL(rnsc_store_write_atomic(kd, "\x81\xc4\x10garbage", 10, 0644), 0);
	CU_ASSERT_EQUAL_FATAL(start(db, &B, &err), 0);
	CU_ASSERT_EQUAL(rnsc_transport_known_count(rnsc_node_transport(B)), 0);
	rnsc_node_del(B);
	B = NULL;
	rnsc_node_del(X);
	X = NULL;

	/* A transport node writes its path table on shutdown (empty here: clients only asked). */
	char dt[600];
	rnsc_node_del(A);
	A = NULL;
	snprintf(dt, sizeof(dt), "%s/storage/destination_table", da);
	struct stat st;
	CU_ASSERT_EQUAL(stat(dt, &st), 0);
	/* ... and its packet hashlist (32-byte hashes back to back), so a packet seen before
	 * the restart is still a duplicate after it. */
	snprintf(dt, sizeof(dt), "%s/storage/packet_hashlist.raw", da);
	CU_ASSERT_EQUAL(stat(dt, &st), 0);
	CU_ASSERT(st.st_size > 0 && st.st_size % 32 == 0);
	CU_ASSERT_EQUAL_FATAL(start(da, &A, &err), 0);
	CU_ASSERT_EQUAL(rnsc_transport_hashlist_count(rnsc_node_transport(A)),
			(size_t)st.st_size / 32);
	rnsc_node_del(A);
	A = NULL;
	/* A partial last hash is ignored, as the reference ignores it. */
	CU_ASSERT_EQUAL(truncate(dt, st.st_size - 5), 0);
	CU_ASSERT_EQUAL_FATAL(start(da, &A, &err), 0);
	CU_ASSERT_EQUAL(rnsc_transport_hashlist_count(rnsc_node_transport(A)),
			(size_t)st.st_size / 32 - 1);
	rnsc_node_del(A);
	A = NULL;
}

/* ---- the engine's export/import used by the persistence ------------------------------------ */

static void test_engine_import(void)
{
	rnsc_transport *a = NULL, *b = NULL;
	rnsc_identity ida, idb;
	CU_ASSERT_EQUAL_FATAL(rnsc_identity_generate(C, &ida), 0);
	CU_ASSERT_EQUAL_FATAL(rnsc_identity_generate(C, &idb), 0);
	rnsc_transport_config tc = {.transport_enabled = 1, .use_implicit_proof = 1};
	CU_ASSERT_EQUAL_FATAL(rnsc_transport_new(C, &a, &ida, &tc), 0);
	CU_ASSERT_EQUAL_FATAL(rnsc_transport_new(C, &b, &idb, &tc), 0);
	CU_ASSERT_EQUAL(rnsc_transport_iface_add(a, 1, RNSC_TRANSPORT_MODE_FULL, 0, 0), 0);
	CU_ASSERT_EQUAL(rnsc_transport_iface_add(b, 7, RNSC_TRANSPORT_MODE_FULL, 0, 0), 0);
	static const char *const asp[] = {"node", "test"};
	uint8_t dh[16];
	CU_ASSERT_EQUAL_FATAL(rnsc_transport_dest_add(a, 0, &ida, "rnsc", asp, 2, 0, dh), 0);
	CU_ASSERT_EQUAL_FATAL(rnsc_transport_announce(a, dh, (const uint8_t *)"hi", 2, 1000), 0);
	uint8_t raw[600];
	uint32_t ifc;
	int len = rnsc_transport_outbox_pop(a, &ifc, raw, sizeof(raw));
	CU_ASSERT_FATAL(len > 0);
	CU_ASSERT_EQUAL(rnsc_transport_ingest(b, 7, raw, (size_t)len, 2000), 0);
	CU_ASSERT_TRUE_FATAL(rnsc_transport_has_path(b, dh));

	/* Export from b... */
	rnsc_transport_path p;
	uint8_t blobs[RNSC_MAX_RANDOM_BLOBS][10];
	size_t nb = 0, rl = 0, cur = 0;
	const uint8_t *r = NULL;
	uint8_t got[16];
	CU_ASSERT_EQUAL(rnsc_transport_path_next(b, &cur, got, &p), 1);
	CU_ASSERT_EQUAL(memcmp(got, dh, 16), 0);
	CU_ASSERT_EQUAL(rnsc_transport_path_next(b, &cur, got, &p), 0);
	CU_ASSERT_EQUAL(rnsc_transport_path_detail(b, dh, blobs, &nb, &r, &rl), 0);
	CU_ASSERT_EQUAL(nb, 1);
	CU_ASSERT_EQUAL(rl, (size_t)len);
	uint8_t saved[600];
	memcpy(saved, r, rl);
	rnsc_transport_known k;
	cur = 0;
	CU_ASSERT_EQUAL(rnsc_transport_known_next(b, &cur, &k), 1);
	CU_ASSERT_EQUAL(k.app_data_len, 2);
	uint8_t app[2];
	memcpy(app, k.app_data, 2);
	k.app_data = app;

	/* ... into a fresh engine c, with the errors the header lists. */
	rnsc_transport *c = NULL;
	CU_ASSERT_EQUAL_FATAL(rnsc_transport_new(C, &c, &idb, &tc), 0);
	CU_ASSERT_EQUAL(rnsc_transport_path_import(c, dh, &p, blobs, nb, saved, rl),
			RNSC_ERR_NOTFOUND); /* interface 7 not attached yet */
	CU_ASSERT_EQUAL(rnsc_transport_iface_add(c, 7, RNSC_TRANSPORT_MODE_FULL, 0, 0), 0);
	CU_ASSERT_EQUAL(rnsc_transport_path_import(c, dh, &p, blobs, nb, saved, 600),
			RNSC_ERR_TOOBIG);
	uint8_t other[16];
	memcpy(other, dh, 16);
	other[0] ^= 1;
	CU_ASSERT_EQUAL(rnsc_transport_path_import(c, other, &p, blobs, nb, saved, rl),
			RNSC_ERR_MALFORMED); /* not the announce of that destination */
	CU_ASSERT_EQUAL(
		rnsc_transport_path_import(c, dh, &p, blobs, RNSC_MAX_RANDOM_BLOBS + 1, saved, rl),
		RNSC_ERR_INVAL);
	CU_ASSERT(rnsc_transport_path_import(c, dh, &p, blobs, nb, saved, 5) < 0);
	CU_ASSERT_EQUAL(rnsc_transport_path_import(c, dh, &p, blobs, nb, saved, rl), 0);
	CU_ASSERT_EQUAL(rnsc_transport_known_import(c, &k), 0);
	CU_ASSERT_EQUAL(rnsc_transport_known_import(c, &k), 0); /* kept, not duplicated */
	CU_ASSERT_EQUAL(rnsc_transport_known_count(c), 1);
	rnsc_transport_path q;
	CU_ASSERT_EQUAL(rnsc_transport_path_get(c, dh, &q), 0);
	CU_ASSERT_EQUAL(q.hops, p.hops);
	CU_ASSERT_EQUAL(q.expires, p.expires);
	rnsc_identity rid;
	const uint8_t *ad = NULL;
	size_t adl = 0;
	CU_ASSERT_EQUAL(rnsc_transport_recall(c, dh, &rid, &ad, &adl), 0);
	CU_ASSERT_EQUAL(adl, 2);
	CU_ASSERT_EQUAL(memcmp(rid.hash, ida.hash, 16), 0);
	rnsc_identity_free(&rid);
	/* A restored path is usable: DATA to it goes out on interface 7. */
	uint8_t pkh[32];
	CU_ASSERT_EQUAL(rnsc_transport_send(c, dh, (const uint8_t *)"x", 1, pkh, 3000), 0);
	CU_ASSERT_EQUAL(rnsc_transport_outbox_pop(c, &ifc, raw, sizeof(raw)) > 0, 1);
	CU_ASSERT_EQUAL(ifc, 7);
	rnsc_transport_del(a);
	rnsc_transport_del(b);
	rnsc_transport_del(c);
	rnsc_identity_free(&ida);
	rnsc_identity_free(&idb);
}

/* ---- stop from another thread ------------------------------------------------------------ */

static void *stopper(void *ud)
{
	usleep(100000);
	rnsc_node_stop(ud);
	return NULL;
}

static void test_stop_from_thread(void)
{
	char d[512];
	snprintf(d, sizeof(d), "%s/T", root);
	write_config(d, "[reticulum]\n  share_instance = no\n");
	rnsc_node *n = NULL;
	rnsc_config_error err;
	CU_ASSERT_EQUAL_FATAL(start(d, &n, &err), 0);
	pthread_t th;
	CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, stopper, n), 0);
	CU_ASSERT_EQUAL(rnsc_node_run(n), 0);
	CU_ASSERT(rnsc_node_stopping(n));
	pthread_join(th, NULL);
	rnsc_node_del(n);
	char idp[600];
	snprintf(idp, sizeof(idp), "%s/storage/transport_identity", d);
	uint8_t key[64];
	CU_ASSERT_EQUAL(rnsc_store_read_exact(idp, key, sizeof(key)), 0);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	snprintf(root, sizeof(root), "%s/rnsc-node-test.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(root))
		return 1;
	if (rnsc_ctx_new(&C) || rnsc_plugin_host_new(C, &H) || rnsc_plugin_host_add_default_dirs(H))
		return 1;
	rnsc_plugin_host_scan(H);
	if (rnsc_crypto_set_order(C, "openssl") != 0 ||
	    !rnsc_plugin_host_find_iface(H, "TCPServerInterface")) {
		fprintf(stderr, "node_test: FAILED: the openssl and tcp plugins did not load\n");
		return 1;
	}
	rnsc_ctx_set_log_level(C, getenv("RNSC_TEST_VERBOSE") ? RNSC_LOG_DEBUG : RNSC_LOG_CRITICAL);
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("node", NULL, NULL);
	CU_add_test(s, "configuration errors name section and option", test_config_errors);
	CU_add_test(s, "unserved types skipped, options audited", test_skip_and_audit);
	CU_add_test(s, "an interface that cannot open yet is retried", test_open_retry);
	CU_add_test(s, "three nodes: IFAC, path, probe proof, persistence", test_three_nodes);
	CU_add_test(s, "stop from another thread", test_stop_from_thread);
	CU_add_test(s, "engine export and import of paths and identities", test_engine_import);
	int rc = rnsc_cu_run();
	rnsc_node_del(A);
	rnsc_node_del(B);
	rnsc_node_del(X);
	rnsc_plugin_host_del(H);
	rnsc_ctx_del(C);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "node_test: could not remove %s\n", root);
	return rc;
}
