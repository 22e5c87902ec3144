/* SPDX-License-Identifier: MIT */
/*
 * The request wiring (src/runtime/linkapp_request.c) on two rnsc nodes in one process over
 * real TCP on 127.0.0.1, each with a linkapp and an rnsc_linkreq: a response beyond the MDU
 * (a resource flagged is_response, progress reported), a request beyond the MDU (flagged
 * is_request), and the error paths: a response advertisement rejected for max_response_size
 * (the receipt fails, the sender's resource is rejected), a request resource offered to a
 * link without handlers (ignored: the request times out), a request too large for the
 * wiring (RNSC_ERR_TOOBIG, nothing left behind), the link closed in the middle of a response
 * (the receipt fails, no transfer state left), and the API's argument checks.
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
#include "destination.h"
#include "cu_run.h"
#include "linkapp.h"
#include "linkapp_request.h"
#include "msgpack.h"
#include "node.h"
#include "packet.h"
#include "transport.h"

static rnsc_ctx *C;
static rnsc_plugin_host *H;
static char root[256];
static rnsc_node *SN, *CN;
static rnsc_linkapp *SL, *CL;
static rnsc_linkreq *SR, *CR;
static rnsc_request_handlers *HS;
static uint8_t dest[16], link_id[16];
static int s_up, c_up, s_closed, c_closed;

static inline uint8_t pat(size_t k)
{
	return (uint8_t)((k * 131u + (k >> 9)) & 0xFF);
}

static uint8_t *g_resp;
static int h_big(void *ud, const rnsc_request_info *req, const uint8_t **resp, size_t *len)
{
	(void)ud;
	rnsc_mp_reader r;
	uint64_t n;
	rnsc_mp_reader_init(&r, req->data, req->data_len);
	if (rnsc_mp_read_uint(&r, &n))
		return 0;
	free(g_resp);
	uint8_t *raw = malloc((size_t)n + 1);
	g_resp = malloc((size_t)n + 16);
	if (!raw || !g_resp) {
		free(raw);
		return RNSC_ERR_NOMEM;
	}
	for (size_t k = 0; k < n; k++)
		raw[k] = pat(k);
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, g_resp, (size_t)n + 16);
	rnsc_mp_write_bin(&w, raw, (size_t)n);
	free(raw);
	int l = rnsc_mp_writer_finish(&w);
	*resp = g_resp;
	*len = (size_t)l;
	return 1;
}

static uint8_t g_len[16];
static int h_len(void *ud, const rnsc_request_info *req, const uint8_t **resp, size_t *len)
{
	(void)ud;
	rnsc_mp_reader r;
	const uint8_t *p;
	size_t n;
	rnsc_mp_reader_init(&r, req->data, req->data_len);
	if (rnsc_mp_read_bin(&r, &p, &n))
		return 0;
	for (size_t k = 0; k < n; k++)
		if (p[k] != pat(k))
			return 0;
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, g_len, sizeof(g_len));
	rnsc_mp_write_uint(&w, n);
	*resp = g_len;
	*len = (size_t)rnsc_mp_writer_finish(&w);
	return 1;
}

/* a sender of pattern bytes for hand-made resources */
typedef struct txs {
	size_t len;
	int done;
} txs;
static txs TXS;
static int t_read(void *ud, uint64_t off, uint8_t *buf, size_t len)
{
	(void)ud;
	for (size_t k = 0; k < len; k++)
		buf[k] = pat((size_t)off + k);
	return (int)len;
}
static void t_concluded(void *ud, rnsc_resource *r)
{
	(void)r;
	((txs *)ud)->done = 1;
}
static const rnsc_resource_callbacks TXCB = {.read = t_read, .concluded = t_concluded};

static int h_none(void *ud, const rnsc_request_info *req, const uint8_t **resp, size_t *len)
{
	(void)ud, (void)req, (void)resp, (void)len;
	return 0; /* answered out of band by the test */
}

static uint8_t last_id[16];

typedef struct rq {
	int done, failed, progress;
	size_t got;
	int ok;
	uint64_t want;
} rq;

static void r_response(void *ud, const rnsc_request_receipt *r)
{
	rq *q = ud;
	q->done = 1;
	rnsc_mp_reader rd;
	rnsc_mp_reader_init(&rd, r->response, r->response_len);
	const uint8_t *p;
	size_t n;
	uint64_t v;
	if (rnsc_mp_read_bin(&rd, &p, &n) == 0) {
		q->got = n;
		q->ok = n == q->want;
		for (size_t k = 0; q->ok && k < n; k++)
			q->ok = p[k] == pat(k);
	} else {
		rnsc_mp_reader_init(&rd, r->response, r->response_len);
		q->ok = rnsc_mp_read_uint(&rd, &v) == 0 && v == q->want;
	}
}
static void r_failed(void *ud, const rnsc_request_receipt *r)
{
	(void)r;
	rq *q = ud;
	q->done = 1;
	q->failed = 1;
}
static void r_progress(void *ud, const rnsc_request_receipt *r)
{
	(void)r;
	((rq *)ud)->progress++;
}

static void h_est(void *ud, const uint8_t lid[16], const uint8_t d[16], int initiator)
{
	(void)d;
	rnsc_linkreq *lr = *(rnsc_linkreq **)ud;
	if (initiator) {
		c_up = 1;
		CU_ASSERT_EQUAL(rnsc_linkreq_attach(lr, lid, NULL, NULL), 0);
	} else {
		s_up = 1;
		CU_ASSERT_EQUAL(rnsc_linkreq_attach(lr, lid, HS, NULL), 0);
	}
}
static void h_closed(void *ud, const uint8_t lid[16], int reason)
{
	(void)reason;
	rnsc_linkreq *lr = *(rnsc_linkreq **)ud;
	if (lr == SR)
		s_closed++;
	else
		c_closed++;
	rnsc_linkreq_detach(lr, lid);
}

static void pump(int ms)
{
	uint64_t end = rnsc_monotonic_ns() + (uint64_t)ms * RNSC_NS_PER_MS;
	while (rnsc_monotonic_ns() < end) {
		rnsc_node_run_once(SN, 0);
		rnsc_node_run_once(CN, 0);
		(void)rnsc_linkreq_tick(SR, rnsc_node_now_ms());
		(void)rnsc_linkreq_tick(CR, rnsc_node_now_ms());
		usleep(1000);
	}
}
static rq *cur;
static int q_done(void)
{
	return cur->done;
}
static int q_progress(void)
{
	return cur->progress > 1 || cur->done;
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
	return c_up && s_up;
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

static void open_link(void)
{
	c_up = s_up = 0;
	CU_ASSERT_EQUAL_FATAL(rnsc_transport_link_open(rnsc_node_transport(CN), dest, link_id,
						       rnsc_node_now_ms()),
			      0);
	rnsc_node_flush(CN);
	CU_ASSERT_FATAL(pump_until(5000, linked));
}

/* Sends /big asking for n bytes (or /len with n pattern bytes as the request) on the link. */
static int ask(rq *q, const char *path, uint64_t n, size_t max_response, uint64_t timeout_ms)
{
	memset(q, 0, sizeof(*q));
	q->want = n;
	size_t cap = (size_t)n + 16;
	uint8_t *mp = malloc(cap), *raw = malloc((size_t)n + 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mp);
	CU_ASSERT_PTR_NOT_NULL_FATAL(raw);
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, mp, cap);
	if (!strcmp(path, "/len")) {
		for (size_t k = 0; k < n; k++)
			raw[k] = pat(k);
		rnsc_mp_write_bin(&w, raw, (size_t)n);
	} else {
		rnsc_mp_write_uint(&w, n);
	}
	int ml = rnsc_mp_writer_finish(&w);
	rnsc_request_params p = {.response = r_response,
				 .failed = r_failed,
				 .progress = r_progress,
				 .ud = q,
				 .max_response_size = max_response,
				 .timeout_ms = timeout_ms};
	rnsc_request_link *rl = rnsc_linkreq_get(CR, link_id);
	CU_ASSERT_PTR_NOT_NULL_FATAL(rl);
	int rc = rnsc_request_link_send(rl, path, mp, (size_t)ml, &p, last_id, rnsc_node_now_ms());
	free(mp);
	free(raw);
	rnsc_node_flush(CN);
	cur = q;
	return rc;
}

static void test_linkreq(void)
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
	CU_ASSERT_EQUAL_FATAL(rnsc_request_handlers_new(C, &HS), 0);
	CU_ASSERT_EQUAL_FATAL(rnsc_request_handlers_register(HS, "/big", h_big, NULL,
							     RNSC_REQUEST_ALLOW_ALL, NULL, 0, 1),
			      0);
	CU_ASSERT_EQUAL_FATAL(rnsc_request_handlers_register(HS, "/len", h_len, NULL,
							     RNSC_REQUEST_ALLOW_ALL, NULL, 0, 1),
			      0);
	CU_ASSERT_EQUAL_FATAL(rnsc_request_handlers_register(HS, "/none", h_none, NULL,
							     RNSC_REQUEST_ALLOW_ALL, NULL, 0, 1),
			      0);
	/* the hooks' ud is the side's linkreq slot: linkreq needs the linkapp first */
	rnsc_node_hooks hs = {.ud = &SR, .on_link_established = h_est, .on_link_closed = h_closed};
	rnsc_node_hooks hc = hs;
	hc.ud = &CR;
	CU_ASSERT_EQUAL(rnsc_linkreq_new(NULL, SN, NULL, &SR), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL_FATAL(rnsc_linkapp_new(C, SN, NULL, &hs, &SL), 0);
	CU_ASSERT_EQUAL_FATAL(rnsc_linkapp_new(C, CN, NULL, &hc, &CL), 0);
	CU_ASSERT_EQUAL_FATAL(rnsc_linkreq_new(C, SN, SL, &SR), 0);
	CU_ASSERT_EQUAL_FATAL(rnsc_linkreq_new(C, CN, CL, &CR), 0);
	CU_ASSERT_FATAL(pump_until(5000, c_online));

	rnsc_identity sid;
	CU_ASSERT_EQUAL_FATAL(rnsc_identity_generate(C, &sid), 0);
	const char *asp[] = {"lreq"};
	rnsc_transport *st = rnsc_node_transport(SN);
	CU_ASSERT_EQUAL_FATAL(
		rnsc_transport_dest_add(st, RNSC_DEST_SINGLE, &sid, "rnsc", asp, 1, 1, dest), 0);
	rnsc_identity_free(&sid);
	CU_ASSERT_EQUAL(rnsc_transport_announce(st, dest, NULL, 0, rnsc_node_now_ms()), 0);
	rnsc_node_flush(SN);
	CU_ASSERT_FATAL(pump_until(5000, c_has_path));
	open_link();
	CU_ASSERT_PTR_NOT_NULL(rnsc_linkreq_get(SR, link_id));

	/* 1: a response beyond the MDU, with progress */
	rq q;
	CU_ASSERT_EQUAL(ask(&q, "/big", 60000, 0, 0), 0);
	CU_ASSERT(pump_until(15000, q_done));
	CU_ASSERT(q.ok && !q.failed && q.got == 60000);
	CU_ASSERT(q.progress >= 1);
	pump(50);
	CU_ASSERT_EQUAL(rnsc_linkreq_transfers(SR), 0);
	CU_ASSERT_EQUAL(rnsc_linkreq_transfers(CR), 0);

	/* 2: a request beyond the MDU (a resource flagged is_request), answered in one packet */
	CU_ASSERT_EQUAL(ask(&q, "/len", 5000, 0, 0), 0);
	CU_ASSERT(pump_until(15000, q_done));
	CU_ASSERT(q.ok && !q.failed);

	/* 3: a response advertisement rejected for max_response_size: the receipt fails */
	CU_ASSERT_EQUAL(ask(&q, "/big", 30000, 1000, 0), 0);
	CU_ASSERT(pump_until(15000, q_done));
	CU_ASSERT(q.failed && !q.ok);
	pump(200);
	CU_ASSERT_EQUAL(rnsc_linkreq_transfers(SR), 0); /* the sender's resource was rejected */
	CU_ASSERT_EQUAL(rnsc_linkreq_transfers(CR), 0);

	/* 4: a request resource offered to a link without handlers (the client's): ignored,
	 * the request times out */
	rnsc_request_link *srl = rnsc_linkreq_get(SR, link_id);
	CU_ASSERT_PTR_NOT_NULL_FATAL(srl);
	{
		static uint8_t raw[3000], mp[3100];
		rnsc_mp_writer w;
		rnsc_mp_writer_init(&w, mp, sizeof(mp));
		rnsc_mp_write_bin(&w, raw, sizeof(raw));
		int ml = rnsc_mp_writer_finish(&w);
		rq q2 = {0};
		rnsc_request_params p = {
			.response = r_response, .failed = r_failed, .ud = &q2, .timeout_ms = 1500};
		CU_ASSERT_EQUAL(rnsc_request_link_send(srl, "/len", mp, (size_t)ml, &p, NULL,
						       rnsc_node_now_ms()),
				0);
		rnsc_node_flush(SN);
		cur = &q2;
		CU_ASSERT(pump_until(20000, q_done));
		CU_ASSERT(q2.failed);
	}

	/* 5: a request too large for the wiring: refused, nothing left behind */
	{
		size_t n = RNSC_LINKREQ_MAX_SIZE + 10;
		uint8_t *mp = calloc(1, n + 16), *body = calloc(1, n);
		CU_ASSERT_PTR_NOT_NULL_FATAL(mp);
		CU_ASSERT_PTR_NOT_NULL_FATAL(body);
		rnsc_mp_writer w;
		rnsc_mp_writer_init(&w, mp, n + 16);
		rnsc_mp_write_bin(&w, body, n - 16); /* the body must not alias the output */
		free(body);
		int ml = rnsc_mp_writer_finish(&w);
		rnsc_request_params p = {.response = r_response, .failed = r_failed, .ud = &q};
		CU_ASSERT(rnsc_request_link_send(rnsc_linkreq_get(CR, link_id), "/len", mp,
						 (size_t)ml, &p, NULL, rnsc_node_now_ms()) < 0);
		free(mp);
		CU_ASSERT_EQUAL(rnsc_linkreq_transfers(CR), 0);
	}

	/* 6: response resources the server starts by hand for a pending request (/none does
	 * not answer): with metadata (a file response: the receipt fails), larger than the
	 * wiring takes (rejected, the receipt fails), and for an id nobody asked (ignored) */
	{
		static uint8_t meta[] = {0x81, 0xa4, 'n', 'a', 'm', 'e', 0xc4, 0x01, 'x'};
		TXS.len = 4000;
		for (int k = 0; k < 2; k++) {
			CU_ASSERT_EQUAL(ask(&q, "/none", 1, 0, 20000), 0);
			pump(100);
			rnsc_resource_params rp = {.size = k ? RNSC_LINKREQ_MAX_SIZE + 1 : 4000,
						   .metadata = k ? NULL : meta,
						   .metadata_len = k ? 0 : sizeof(meta),
						   .request_id = last_id,
						   .request_id_len = 16,
						   .is_response = 1};
			rnsc_resource *r = NULL;
			TXS.len = (size_t)rp.size;
			CU_ASSERT_EQUAL(
				rnsc_linkapp_send_resource(SL, link_id, &TXCB, &TXS, &rp, &r), 0);
			CU_ASSERT(pump_until(10000, q_done));
			CU_ASSERT(q.failed && !q.ok);
			pump(300);
			CU_ASSERT_EQUAL(rnsc_linkreq_transfers(CR), 0);
		}
		uint8_t nobody[16];
		memset(nobody, 0x77, sizeof(nobody));
		rnsc_resource_params rp = {.size = 3000,
					   .request_id = nobody,
					   .request_id_len = 16,
					   .is_response = 1,
					   .timeout_ms = 300};
		rnsc_resource *r = NULL;
		TXS.len = 3000;
		TXS.done = 0;
		CU_ASSERT_EQUAL(rnsc_linkapp_send_resource(SL, link_id, &TXCB, &TXS, &rp, &r), 0);
		pump(200);
		CU_ASSERT_EQUAL(rnsc_linkreq_transfers(CR), 0);
		if (!TXS.done) /* still advertising: r is alive until its concluded callback */
			rnsc_linkapp_cancel_resource(SL, r);
		pump(200);
	}

	/* 7: the link closes in the middle of a response: the receipt fails, nothing is left */
	CU_ASSERT_EQUAL(ask(&q, "/big", 1500000, 0, 0), 0);
	CU_ASSERT(pump_until(15000, q_progress));
	CU_ASSERT(!q.done);
	CU_ASSERT(rnsc_linkreq_transfers(CR) >= 1);
	int sc = s_closed;
	CU_ASSERT_EQUAL(rnsc_transport_link_close(st, link_id, rnsc_node_now_ms()), 0);
	rnsc_node_flush(SN);
	CU_ASSERT(pump_until(10000, q_done));
	CU_ASSERT(q.failed);
	pump(200);
	CU_ASSERT(s_closed > sc);
	CU_ASSERT_EQUAL(rnsc_linkreq_transfers(SR), 0);
	CU_ASSERT_EQUAL(rnsc_linkreq_transfers(CR), 0);
	CU_ASSERT_PTR_NULL(rnsc_linkreq_get(SR, link_id)); /* detached on close */

	/* the API's checks */
	uint8_t none[16] = {0};
	rnsc_request_link *rl = NULL;
	CU_ASSERT_EQUAL(rnsc_linkreq_attach(NULL, none, NULL, &rl), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_linkreq_attach(SR, NULL, NULL, &rl), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_linkreq_attach(SR, none, NULL, &rl), RNSC_ERR_NOTFOUND);
	CU_ASSERT_PTR_NULL(rnsc_linkreq_get(SR, none));
	CU_ASSERT_PTR_NULL(rnsc_linkreq_get(NULL, none));
	rnsc_linkreq_detach(SR, none);
	rnsc_linkreq_detach(NULL, none);
	rnsc_linkreq_packet(SR, none, RNSC_PKT_DATA, RNSC_CTX_REQUEST, (const uint8_t *)"x", 1,
			    NULL);
	CU_ASSERT_EQUAL(rnsc_linkreq_tick(NULL, 0), 0);
	CU_ASSERT_EQUAL(rnsc_linkreq_transfers(NULL), 0);
	CU_ASSERT_EQUAL(rnsc_linkapp_reject_resource(NULL, none, NULL, 0), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_linkapp_reject_resource(SL, none, (const uint8_t *)"x", 1),
			RNSC_ERR_NOTFOUND);
	rnsc_linkapp_set_request_slot(NULL, NULL, NULL);

	rnsc_linkapp_del(CL);
	rnsc_linkapp_del(SL);
	rnsc_linkreq_del(CR);
	rnsc_linkreq_del(SR);
	rnsc_linkreq_del(NULL);
	rnsc_request_handlers_del(HS);
	rnsc_node_del(CN);
	rnsc_node_del(SN);
	free(g_resp);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	snprintf(root, sizeof(root), "%s/rnsc-linkreq-test.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(root))
		return 1;
	if (rnsc_ctx_new(&C) || rnsc_plugin_host_new(C, &H) || rnsc_plugin_host_add_default_dirs(H))
		return 1;
	rnsc_plugin_host_scan(H);
	if (rnsc_crypto_set_order(C, "openssl") != 0 ||
	    !rnsc_plugin_host_find_iface(H, "TCPServerInterface")) {
		fprintf(stderr, "linkreq_test: FAILED: the openssl and tcp plugins did not load\n");
		return 1;
	}
	rnsc_ctx_set_log_level(C, getenv("RNSC_TEST_VERBOSE") ? RNSC_LOG_DEBUG : RNSC_LOG_CRITICAL);
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("linkreq", NULL, NULL);
	CU_add_test(s, "requests wired to resources on two nodes", test_linkreq);
	int rc = rnsc_cu_run();
	rnsc_plugin_host_del(H);
	rnsc_ctx_del(C);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		rc = rc ? rc : 1;
	return rc;
}
