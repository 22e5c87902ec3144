/* SPDX-License-Identifier: MIT */
/*
 * The link application dispatcher (src/runtime/linkapp.c) on two rnsc nodes in one process
 * over real TCP on 127.0.0.1: a server node with a destination accepting links and a client
 * node opening a link to it, both with a linkapp. Resources both ways (accepted, rejected,
 * ignored and cancelled, cut short by the link closing), a 3-segment resource, the request
 * slot (REQUEST packets and request-flagged advertisements handed to it, accepted through
 * rnsc_linkapp_accept_resource), a garbled advertisement tearing the link down as the
 * reference does, and every node hook forwarded to the application.
 */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crypto.h"
#include "cu_run.h"
#include "destination.h"
#include "link.h"
#include "linkapp.h"
#include "node.h"
#include "packet.h"
#include "transport.h"

static rnsc_ctx *C;
static rnsc_plugin_host *H;
static char root[256];
static rnsc_node *SN, *CN; /* server, client */
static rnsc_linkapp *SL, *CL;
static uint8_t dest[16], link_id[16];
static rnsc_identity server_id, client_id;

/* what the application saw, per side */
typedef struct app {
	int established, closed, identified, announces, link_packets, requests, req_advs;
	int accept;  /* resource_advertised answer: 1 accept, 0 reject */
	int offered; /* advertisements offered */
	uint8_t req_adv[600];
	size_t req_adv_len;
	uint8_t lid[16];
} app;
static app SA, CA;

typedef struct xfer {
	const uint8_t *src;
	uint8_t *sink;
	size_t sink_len, cap;
	int done, status;
	uint8_t meta[64];
	size_t meta_len;
} xfer;
static xfer RX; /* the receiving side's sink for accepted resources */

static int x_read(void *ud, uint64_t off, uint8_t *buf, size_t len)
{
	xfer *x = ud;
	memcpy(buf, x->src + off, len);
	return (int)len;
}

static int x_write(void *ud, const uint8_t *p, size_t len)
{
	xfer *x = ud;
	if (x->sink_len + len > x->cap)
		return RNSC_ERR_BUFSIZE;
	memcpy(x->sink + x->sink_len, p, len);
	x->sink_len += len;
	return 0;
}

static void x_meta(void *ud, rnsc_resource *r, const uint8_t *p, size_t len)
{
	(void)r;
	xfer *x = ud;
	x->meta_len = len < sizeof(x->meta) ? len : sizeof(x->meta);
	memcpy(x->meta, p, x->meta_len);
}

static void x_concluded(void *ud, rnsc_resource *r)
{
	xfer *x = ud;
	x->done = 1;
	x->status = rnsc_resource_status(r);
}

static const rnsc_resource_callbacks XCB = {x_read, x_write, x_meta, NULL, x_concluded};

static int on_adv(void *ud, const uint8_t lid[16], const rnsc_resource_adv *adv,
		  rnsc_resource_callbacks *cb, void **cb_ud)
{
	(void)lid, (void)adv;
	app *a = ud;
	a->offered++;
	if (!a->accept)
		return 0;
	*cb = XCB;
	*cb_ud = &RX;
	return 1;
}

static void on_request(void *ud, const uint8_t lid[16], int type, int context, const uint8_t *d,
		       size_t len, const uint8_t ph[32])
{
	(void)lid, (void)type, (void)ph;
	app *a = ud;
	if (context == RNSC_CTX_RESOURCE_ADV) {
		a->req_advs++;
		if (len <= sizeof(a->req_adv)) {
			memcpy(a->req_adv, d, len);
			a->req_adv_len = len;
		}
	} else {
		a->requests++;
	}
}

static void h_est(void *ud, const uint8_t lid[16], const uint8_t d[16], int initiator)
{
	(void)d, (void)initiator;
	app *a = ud;
	a->established++;
	memcpy(a->lid, lid, 16);
}
static void h_closed(void *ud, const uint8_t lid[16], int reason)
{
	(void)lid, (void)reason;
	((app *)ud)->closed++;
}
static void h_ident(void *ud, const uint8_t lid[16], const rnsc_identity *who)
{
	(void)lid, (void)who;
	((app *)ud)->identified++;
}
static void h_announce(void *ud, const uint8_t d[16], unsigned hops)
{
	(void)d, (void)hops;
	((app *)ud)->announces++;
}
static void h_packet(void *ud, const uint8_t lid[16], int type, int context, const uint8_t *d,
		     size_t len, const uint8_t ph[32])
{
	(void)lid, (void)type, (void)context, (void)d, (void)len, (void)ph;
	((app *)ud)->link_packets++;
}
static int n_data, n_link_data, n_proof, n_receipt;
static void h_data(void *ud, const uint8_t d[16], const uint8_t *p, size_t len, uint32_t i)
{
	(void)ud, (void)d, (void)p, (void)len, (void)i;
	n_data++;
}
static void h_link_data(void *ud, const uint8_t lid[16], const uint8_t *p, size_t len,
			const uint8_t ph[32])
{
	(void)ud, (void)lid, (void)p, (void)len, (void)ph;
	n_link_data++;
}
static void h_proof(void *ud, const uint8_t lid[16], const uint8_t ph[32])
{
	(void)ud, (void)lid, (void)ph;
	n_proof++;
}
static void h_receipt(void *ud, const uint8_t ph[32], int ok)
{
	(void)ud, (void)ph, (void)ok;
	n_receipt++;
}

static void pump(int ms)
{
	uint64_t end = rnsc_monotonic_ns() + (uint64_t)ms * RNSC_NS_PER_MS;
	while (rnsc_monotonic_ns() < end) {
		rnsc_node_run_once(SN, 0);
		rnsc_node_run_once(CN, 0);
		usleep(1000);
	}
}

static int pump_until(int ms, int (*cond)(void))
{
	for (int i = 0; i < ms / 10; i++) {
		if (cond())
			return 1;
		pump(10);
	}
	return cond();
}

static int c_online(void)
{
	return rnsc_iface_online(rnsc_iface_host_at(rnsc_node_ifaces(CN), 0));
}
static int c_has_path(void)
{
	return rnsc_transport_has_path(rnsc_node_transport(CN), dest);
}
static int linked(void)
{
	return CA.established && SA.established;
}
static int rx_done(void)
{
	return RX.done;
}
static xfer TX;
static int rx_started(void)
{
	return RX.sink_len > 0;
}
static int tx_done(void)
{
	return TX.done;
}

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

static void reset_xfers(uint8_t *sink, size_t cap)
{
	memset(&RX, 0, sizeof(RX));
	memset(&TX, 0, sizeof(TX));
	RX.sink = sink;
	RX.cap = cap;
}

static void open_link(void)
{
	memset(&SA.established, 0, sizeof(int));
	CA.established = 0;
	SA.established = 0;
	CU_ASSERT_EQUAL_FATAL(rnsc_transport_link_open(rnsc_node_transport(CN), dest, link_id,
						       rnsc_node_now_ms()),
			      0);
	rnsc_node_flush(CN);
	CU_ASSERT_FATAL(pump_until(5000, linked));
}

static void test_linkapp(void)
{
	int port = free_port();
	CU_ASSERT_FATAL(port > 0);
	char ds[300], dc[300], text[1024];
	snprintf(ds, sizeof(ds), "%s/S", root);
	snprintf(dc, sizeof(dc), "%s/C", root);
	snprintf(text, sizeof(text),
		 "[reticulum]\n  share_instance = no\n[interfaces]\n  [[Srv]]\n"
		 "    type = TCPServerInterface\n    enabled = yes\n    listen_ip = 127.0.0.1\n"
		 "    listen_port = %d\n",
		 port);
	write_config(ds, text);
	snprintf(text, sizeof(text),
		 "[reticulum]\n  share_instance = no\n[interfaces]\n  [[Cli]]\n"
		 "    type = TCPClientInterface\n    enabled = yes\n    target_host = 127.0.0.1\n"
		 "    target_port = %d\n",
		 port);
	write_config(dc, text);
	rnsc_config_error err;
	rnsc_node_options os = {.config_dir = ds}, oc = {.config_dir = dc};
	CU_ASSERT_EQUAL_FATAL(rnsc_node_new(C, H, &os, &SN, &err), 0);
	CU_ASSERT_EQUAL_FATAL(rnsc_node_new(C, H, &oc, &CN, &err), 0);
	rnsc_node_hooks hs = {.ud = &SA,
			      .on_link_established = h_est,
			      .on_link_closed = h_closed,
			      .on_link_identified = h_ident,
			      .on_link_packet = h_packet,
			      .on_data = h_data,
			      .on_link_data = h_link_data,
			      .on_link_proof = h_proof,
			      .on_receipt = h_receipt};
	rnsc_node_hooks hc = hs;
	hc.ud = &CA;
	hc.on_announce = h_announce;
	rnsc_linkapp_callbacks ls = {
		.ud = &SA, .resource_advertised = on_adv, .request_packet = on_request};
	rnsc_linkapp_callbacks lc = {.ud = &CA, .resource_advertised = on_adv};
	CU_ASSERT_EQUAL(rnsc_linkapp_new(NULL, SN, &ls, &hs, &SL), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL_FATAL(rnsc_linkapp_new(C, SN, &ls, &hs, &SL), 0);
	CU_ASSERT_EQUAL_FATAL(rnsc_linkapp_new(C, CN, &lc, &hc, &CL), 0);
	CU_ASSERT_FATAL(pump_until(5000, c_online));

	CU_ASSERT_EQUAL_FATAL(rnsc_identity_generate(C, &server_id), 0);
	CU_ASSERT_EQUAL_FATAL(rnsc_identity_generate(C, &client_id), 0);
	const char *asp[] = {"lapp"};
	rnsc_transport *st = rnsc_node_transport(SN), *ct = rnsc_node_transport(CN);
	CU_ASSERT_EQUAL_FATAL(
		rnsc_transport_dest_add(st, RNSC_DEST_SINGLE, &server_id, "rnsc", asp, 1, 1, dest),
		0);
	CU_ASSERT_EQUAL(rnsc_transport_announce(st, dest, NULL, 0, rnsc_node_now_ms()), 0);
	rnsc_node_flush(SN);
	CU_ASSERT_FATAL(pump_until(5000, c_has_path));
	CU_ASSERT(CA.announces >= 1);
	open_link();
	/* identify: forwarded to the server's application */
	CU_ASSERT_EQUAL(rnsc_transport_link_identify(ct, link_id, &client_id, rnsc_node_now_ms()),
			0);
	rnsc_node_flush(CN);
	pump(100);
	CU_ASSERT_EQUAL(SA.identified, 1);
	/* plain link data still reaches the application's hooks */
	uint8_t ph[32];
	CU_ASSERT_EQUAL(rnsc_transport_link_send(ct, link_id, (const uint8_t *)"hi", 2, ph,
						 rnsc_node_now_ms()),
			0);
	rnsc_node_flush(CN);
	pump(100);
	CU_ASSERT_EQUAL(n_link_data, 1);
	CU_ASSERT_EQUAL(n_proof, 1); /* PROVE_ALL: the proof reaches the client's hook */
	/* a single packet to the destination: data hook on the server, receipt on the client */
	CU_ASSERT_EQUAL(
		rnsc_transport_send(ct, dest, (const uint8_t *)"one", 3, ph, rnsc_node_now_ms()),
		0);
	rnsc_node_flush(CN);
	pump(200);
	CU_ASSERT_EQUAL(n_data, 1);
	CU_ASSERT(n_receipt >= 1);

	/* 1: client -> server, accepted, with metadata */
	static uint8_t data[200000], sink[3100000];
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 13 + (i >> 8));
	reset_xfers(sink, sizeof(sink));
	SA.accept = 1;
	TX.src = data;
	rnsc_resource_params p = {.size = sizeof(data),
				  .metadata = (const uint8_t *)"\x81\xa1x\x01",
				  .metadata_len = 4,
				  .auto_compress = 1};
	rnsc_resource *r = NULL;
	CU_ASSERT_EQUAL_FATAL(rnsc_linkapp_send_resource(CL, link_id, &XCB, &TX, &p, &r), 0);
	CU_ASSERT_PTR_NOT_NULL(r);
	CU_ASSERT_EQUAL(rnsc_linkapp_resource_count(CL), 1);
	CU_ASSERT(pump_until(10000, rx_done) && pump_until(5000, tx_done));
	CU_ASSERT_EQUAL(RX.status, RNSC_RESOURCE_COMPLETE);
	CU_ASSERT_EQUAL(TX.status, RNSC_RESOURCE_COMPLETE);
	CU_ASSERT(RX.sink_len == sizeof(data) && memcmp(sink, data, sizeof(data)) == 0);
	CU_ASSERT(RX.meta_len == 4 && memcmp(RX.meta, "\x81\xa1x\x01", 4) == 0);
	pump(50);
	CU_ASSERT_EQUAL(rnsc_linkapp_resource_count(CL), 0);
	CU_ASSERT_EQUAL(rnsc_linkapp_resource_count(SL), 0);

	/* 2: server -> client (the responder sends), 3 segments */
	static uint8_t big[2500000];
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 31 + (i >> 11));
	reset_xfers(sink, sizeof(sink));
	CA.accept = 1;
	TX.src = big;
	p = (rnsc_resource_params){.size = sizeof(big)};
	CU_ASSERT_EQUAL_FATAL(rnsc_linkapp_send_resource(SL, SA.lid, &XCB, &TX, &p, NULL), 0);
	CU_ASSERT(pump_until(20000, rx_done) && pump_until(5000, tx_done));
	CU_ASSERT_EQUAL(RX.status, RNSC_RESOURCE_COMPLETE);
	CU_ASSERT(RX.sink_len == sizeof(big) && memcmp(sink, big, sizeof(big)) == 0);
	CU_ASSERT_EQUAL(CA.offered, 1); /* later segments are not offered again */

	/* 2b: two resources sent back to back on one link: the second waits (QUEUED) until the
	 * first concluded, then goes */
	reset_xfers(sink, sizeof(sink));
	static xfer TX2;
	memset(&TX2, 0, sizeof(TX2));
	SA.accept = 1;
	TX.src = data;
	TX2.src = data + 1000;
	p = (rnsc_resource_params){.size = 50000};
	rnsc_resource *r1 = NULL, *r2 = NULL;
	CU_ASSERT_EQUAL(rnsc_linkapp_send_resource(CL, link_id, &XCB, &TX, &p, &r1), 0);
	CU_ASSERT_EQUAL(rnsc_linkapp_send_resource(CL, link_id, &XCB, &TX2, &p, &r2), 0);
	CU_ASSERT_EQUAL(rnsc_resource_status(r1), RNSC_RESOURCE_ADVERTISED);
	CU_ASSERT_EQUAL(rnsc_resource_status(r2), RNSC_RESOURCE_QUEUED);
	CU_ASSERT(pump_until(5000, tx_done));
	CU_ASSERT_EQUAL(TX.status, RNSC_RESOURCE_COMPLETE);
	for (int i = 0; i < 500 && !TX2.done; i++)
		pump(10);
	CU_ASSERT(TX2.done && TX2.status == RNSC_RESOURCE_COMPLETE);
	/* the sink got both, in order */
	CU_ASSERT(RX.sink_len == 100000 && memcmp(sink, data, 50000) == 0 &&
		  memcmp(sink + 50000, data + 1000, 50000) == 0);

	/* 3: rejected by the application */
	reset_xfers(sink, sizeof(sink));
	SA.accept = 0;
	TX.src = data;
	p = (rnsc_resource_params){.size = 1000};
	CU_ASSERT_EQUAL(rnsc_linkapp_send_resource(CL, link_id, &XCB, &TX, &p, NULL), 0);
	CU_ASSERT(pump_until(5000, tx_done));
	CU_ASSERT_EQUAL(TX.status, RNSC_RESOURCE_REJECTED);

	/* 4: the request slot: a REQUEST packet, then a request-flagged advertisement that the
	 * request manager accepts itself */
	CU_ASSERT_EQUAL(rnsc_transport_link_send_packet(ct, link_id, RNSC_PKT_DATA,
							RNSC_CTX_REQUEST, (const uint8_t *)"rq", 2,
							NULL, rnsc_node_now_ms()),
			0);
	rnsc_node_flush(CN);
	pump(100);
	CU_ASSERT_EQUAL(SA.requests, 1);
	reset_xfers(sink, sizeof(sink));
	TX.src = data;
	uint8_t rid[16] = {7, 7, 7};
	p = (rnsc_resource_params){.size = 5000, .request_id = rid, .request_id_len = 16};
	int offered = SA.offered;
	CU_ASSERT_EQUAL(rnsc_linkapp_send_resource(CL, link_id, &XCB, &TX, &p, NULL), 0);
	pump(200);
	CU_ASSERT_EQUAL(SA.req_advs, 1);
	CU_ASSERT_EQUAL(SA.offered, offered); /* not offered to the application */
	rnsc_resource *in = NULL;
	CU_ASSERT_EQUAL(rnsc_linkapp_accept_resource(SL, SA.lid, SA.req_adv, SA.req_adv_len, &XCB,
						     &RX, &in),
			0);
	CU_ASSERT(pump_until(5000, rx_done) && pump_until(5000, tx_done));
	CU_ASSERT_EQUAL(RX.status, RNSC_RESOURCE_COMPLETE);
	CU_ASSERT(RX.sink_len == 5000 && memcmp(sink, data, 5000) == 0);

	/* 4b: nobody takes a request-flagged advertisement: the sender's watchdog, run from the
	 * node's loop timer, advertises again after timeout + 1 s; then it is cancelled */
	int advs = SA.req_advs;
	reset_xfers(sink, sizeof(sink));
	TX.src = data;
	p = (rnsc_resource_params){
		.size = 2000, .request_id = rid, .request_id_len = 16, .timeout_ms = 1};
	r = NULL;
	CU_ASSERT_EQUAL(rnsc_linkapp_send_resource(CL, link_id, &XCB, &TX, &p, &r), 0);
	pump(1400);
	CU_ASSERT_EQUAL(SA.req_advs, advs + 2);
	rnsc_resource_stats rst;
	rnsc_resource_stats_get(r, &rst);
	CU_ASSERT_EQUAL(rst.advertisements, 2);
	rnsc_linkapp_cancel_resource(CL, r);
	CU_ASSERT(TX.done && TX.status == RNSC_RESOURCE_FAILED);

	/* 5: the client's application refuses: the server's resource is REJECTED */
	reset_xfers(sink, sizeof(sink));
	CA.accept = 0;
	CA.offered = 0;
	TX.src = data;
	p = (rnsc_resource_params){.size = 1000};
	CU_ASSERT_EQUAL(rnsc_linkapp_send_resource(SL, SA.lid, &XCB, &TX, &p, NULL), 0);
	CU_ASSERT(pump_until(2000, tx_done));
	CU_ASSERT_EQUAL(CA.offered, 1);
	CU_ASSERT_EQUAL(TX.status, RNSC_RESOURCE_REJECTED);

	/* 6: cancelled by the sender while advertised */
	reset_xfers(sink, sizeof(sink));
	SA.accept = 1;
	TX.src = big;
	p = (rnsc_resource_params){.size = 800000};
	r = NULL;
	CU_ASSERT_EQUAL(rnsc_linkapp_send_resource(CL, link_id, &XCB, &TX, &p, &r), 0);
	rnsc_linkapp_cancel_resource(CL, r); /* advertisement and ICL leave together */
	CU_ASSERT(TX.done && TX.status == RNSC_RESOURCE_FAILED);
	CU_ASSERT(pump_until(2000, rx_done));
	CU_ASSERT_EQUAL(RX.status, RNSC_RESOURCE_FAILED);

	/* 7: the link closes mid-transfer: both ends conclude FAILED */
	reset_xfers(sink, sizeof(sink));
	TX.src = big;
	p = (rnsc_resource_params){.size = sizeof(big)};
	CU_ASSERT_EQUAL(rnsc_linkapp_send_resource(CL, link_id, &XCB, &TX, &p, NULL), 0);
	/* closed once the first of the 3 segments has been written */
	CU_ASSERT(pump_until(10000, rx_started));
	CU_ASSERT(!TX.done);
	CU_ASSERT_EQUAL(rnsc_transport_link_close(ct, link_id, rnsc_node_now_ms()), 0);
	rnsc_node_flush(CN);
	pump(200);
	CU_ASSERT(TX.done && TX.status == RNSC_RESOURCE_FAILED);
	CU_ASSERT(RX.done && RX.status == RNSC_RESOURCE_FAILED);
	CU_ASSERT(CA.closed >= 1 && SA.closed >= 1);
	CU_ASSERT_EQUAL(rnsc_linkapp_resource_count(CL), 0);
	CU_ASSERT_EQUAL(rnsc_linkapp_resource_count(SL), 0);
	/* no such link any more */
	CU_ASSERT(rnsc_linkapp_send_resource(CL, link_id, &XCB, &TX, &p, NULL) < 0);
	CU_ASSERT(rnsc_linkapp_accept_resource(SL, SA.lid, SA.req_adv, SA.req_adv_len, &XCB, &RX,
					       NULL) < 0);
	CU_ASSERT_EQUAL(rnsc_linkapp_send_resource(NULL, link_id, &XCB, &TX, &p, NULL),
			RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_linkapp_accept_resource(NULL, link_id, NULL, 0, &XCB, &RX, NULL),
			RNSC_ERR_INVAL);

	/* 8: a garbled advertisement: the receiver tears the link down */
	open_link();
	int closed = SA.closed;
	CU_ASSERT_EQUAL(rnsc_transport_link_send_packet(
				ct, link_id, RNSC_PKT_DATA, RNSC_CTX_RESOURCE_ADV,
				(const uint8_t *)"\x81\xa1t\x01", 4, NULL, rnsc_node_now_ms()),
			0);
	rnsc_node_flush(CN);
	pump(300);
	CU_ASSERT(SA.closed > closed);
	CU_ASSERT(SA.link_packets == 0); /* resource contexts never reach the app's hook */
	rnsc_linkapp_cancel_resource(NULL, NULL);
	CU_ASSERT_EQUAL(rnsc_linkapp_resource_count(NULL), 0);

	rnsc_linkapp_del(CL);
	rnsc_linkapp_del(SL);
	rnsc_linkapp_del(NULL);
	rnsc_node_del(CN);
	rnsc_node_del(SN);
	rnsc_identity_free(&server_id);
	rnsc_identity_free(&client_id);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	snprintf(root, sizeof(root), "%s/rnsc-linkapp-test.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(root))
		return 1;
	if (rnsc_ctx_new(&C) || rnsc_plugin_host_new(C, &H) || rnsc_plugin_host_add_default_dirs(H))
		return 1;
	rnsc_plugin_host_scan(H);
	if (rnsc_crypto_set_order(C, "openssl") != 0 ||
	    !rnsc_plugin_host_find_iface(H, "TCPServerInterface")) {
		fprintf(stderr, "linkapp_test: FAILED: the openssl and tcp plugins did not load\n");
		return 1;
	}
	rnsc_ctx_set_log_level(C, getenv("RNSC_TEST_VERBOSE") ? RNSC_LOG_DEBUG : RNSC_LOG_CRITICAL);
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("linkapp", NULL, NULL);
	CU_add_test(s, "resources and the request slot on two nodes", test_linkapp);
	int rc = rnsc_cu_run();
	rnsc_plugin_host_del(H);
	rnsc_ctx_del(C);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		rc = rc ? rc : 1;
	return rc;
}
