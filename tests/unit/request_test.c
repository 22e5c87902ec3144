/* SPDX-License-Identifier: MIT */
/*
 * Requests (src/lib/request.c) over an rnsc link pair: the packed layouts (umsgpack's bytes),
 * the lenient unpacking the reference does, handlers with every allow policy (identified and
 * anonymous peers), responses in one packet and through the resource seam, receipts with the
 * default timeout, failures (timeout, rejected size, failed resources), progress, and the
 * API's error paths. conformance/request_xcheck_test.c compares the bytes with the reference.
 */
#include "request.h"

#include <math.h>

#include "destination.h"
#include "msgpack.h"
#include "wire_test_util.h"

typedef struct side {
	rnsc_link *l;
	rnsc_request_link *rl;
	int last_rc;
} side;

static side A, B; /* A initiates, B answers */
static rnsc_request_handlers *HS;
static rnsc_identity DEST, WHO;
static uint64_t now = 1000;

static void on_packet(void *ud, rnsc_link *l, int context, const uint8_t *d, size_t n,
		      const rnsc_packet *pk, const uint8_t *raw, size_t raw_len)
{
	(void)l, (void)pk;
	side *s = ud;
	uint8_t h[32];
	if (!s->rl || rnsc_packet_hash(C, h, raw, raw_len))
		return;
	if (context == RNSC_CTX_REQUEST || context == RNSC_CTX_RESPONSE)
		s->last_rc = rnsc_request_link_packet(s->rl, context, d, n, h, now);
}

static const rnsc_link_callbacks CBS = {NULL, NULL, on_packet, NULL, NULL};

static int move(side *from, side *to)
{
	uint8_t f[600];
	int n = rnsc_link_outbox_pop(from->l, f, sizeof(f));
	if (n <= 0)
		return n == 0 ? 1 : n;
	return rnsc_link_receive(to->l, f, (size_t)n, now);
}

static void pump(void)
{
	for (int i = 0; i < 100; i++) {
		int a = move(&A, &B), b = move(&B, &A);
		if (a == 1 && b == 1)
			return;
	}
	CU_FAIL("pump did not settle");
}

static void drop_all(side *s)
{
	uint8_t f[600];
	while (rnsc_link_outbox_pop(s->l, f, sizeof(f)) > 0)
		;
}

static void free_pair(void)
{
	rnsc_request_link_del(A.rl);
	rnsc_request_link_del(B.rl);
	rnsc_link_del(A.l);
	rnsc_link_del(B.l);
	rnsc_request_handlers_del(HS);
	HS = NULL;
	memset(&A, 0, sizeof(A));
	memset(&B, 0, sizeof(B));
}

static void pair(void)
{
	free_pair();
	static int have_ids;
	if (!have_ids) { /* identities on the suite's context (C lives until the end) */
		CU_ASSERT_FATAL(rnsc_identity_generate(C, &DEST) == 0);
		CU_ASSERT_FATAL(rnsc_identity_generate(C, &WHO) == 0);
		have_ids = 1;
	}
	uint8_t dh[16];
	const char *asp[] = {"request"};
	CU_ASSERT_FATAL(rnsc_destination_hash(C, dh, DEST.hash, "rnsc", asp, 1) == 0);
	rnsc_link_initiate_params p = {.hops = 1};
	now = 1000;
	CU_ASSERT_FATAL(rnsc_link_initiate(C, &A.l, dh, &DEST, &p, now) == 0);
	uint8_t f[600];
	int n = rnsc_link_outbox_pop(A.l, f, sizeof(f));
	CU_ASSERT_FATAL(rnsc_link_accept(C, &B.l, &DEST, f, (size_t)n, RNSC_MTU, now + 40) == 0);
	now += 100;
	CU_ASSERT_FATAL(move(&B, &A) == 0);
	now += 50;
	CU_ASSERT_FATAL(move(&A, &B) == 0);
	rnsc_link_set_callbacks(A.l, &CBS, &A);
	rnsc_link_set_callbacks(B.l, &CBS, &B);
	CU_ASSERT_FATAL(rnsc_request_handlers_new(C, &HS) == 0);
	rnsc_linkport pa, pb;
	rnsc_linkport_on_link(&pa, A.l);
	rnsc_linkport_on_link(&pb, B.l);
	CU_ASSERT_FATAL(rnsc_request_link_new(&A.rl, C, &pa, NULL) == 0);
	CU_ASSERT_FATAL(rnsc_request_link_new(&B.rl, C, &pb, HS) == 0);
}

/* ---- handlers and callbacks ----------------------------------------------------------------- */

static unsigned g_calls, g_resp, g_failed, g_progress;
static uint8_t g_last_resp[8192];
static uint8_t g_req_id[16];
static size_t g_last_resp_len;
static rnsc_request_info g_info;
static int g_handler_rc = 1;
static uint8_t g_out[2048];
static size_t g_out_len;
static int g_last_status;

/* Echo: answers with the request's data (or g_out when set). */
static int echo(void *ud, const rnsc_request_info *req, const uint8_t **resp, size_t *len)
{
	(void)ud;
	g_calls++;
	g_info = *req;
	memcpy(g_req_id, req->request_id, 16);
	if (g_out_len) {
		*resp = g_out;
		*len = g_out_len;
	} else {
		*resp = req->data;
		*len = req->data_len;
	}
	return g_handler_rc;
}

static void cb_resp(void *ud, const rnsc_request_receipt *r)
{
	(void)ud;
	g_resp++;
	g_last_status = r->status;
	g_last_resp_len = r->response_len < sizeof(g_last_resp) ? r->response_len : 0;
	memcpy(g_last_resp, r->response, g_last_resp_len);
}

static void cb_failed(void *ud, const rnsc_request_receipt *r)
{
	(void)ud;
	g_failed++;
	g_last_status = r->status;
}

static void cb_progress(void *ud, const rnsc_request_receipt *r)
{
	(void)ud, (void)r;
	g_progress++;
}

static void reset_counts(void)
{
	g_calls = g_resp = g_failed = g_progress = 0;
	g_last_resp_len = 0;
	g_handler_rc = 1;
	g_out_len = 0;
	memset(&g_info, 0, sizeof(g_info));
}

static const rnsc_request_params PRM = {
	.response = cb_resp, .failed = cb_failed, .progress = cb_progress};

static size_t mp_bin(uint8_t *out, size_t cap, const char *s)
{
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, out, cap);
	rnsc_mp_write_bin(&w, (const uint8_t *)s, strlen(s));
	return (size_t)rnsc_mp_writer_finish(&w);
}

/* ---- tests ---------------------------------------------------------------------------------- */

static void t_wire(void)
{
	uint8_t ph[16], out[128];
	CU_ASSERT_EQUAL(rnsc_request_path_hash(C, ph, "/echo", 5), 0);
	/* SHA-256("/echo")[:16] */
	uint8_t full[32];
	CU_ASSERT_EQUAL(rnsc_full_hash(C, full, (const uint8_t *)"/echo", 5), 0);
	CU_ASSERT(memcmp(full, ph, 16) == 0);
	uint8_t data[16];
	size_t dl = mp_bin(data, sizeof(data), "hi");
	int n = rnsc_request_pack(out, sizeof(out), 1.5, ph, data, dl);
	CU_ASSERT_EQUAL(n, 1 + 9 + 18 + 4);
	CU_ASSERT(eqhex(out, 10, "93cb3ff8000000000000"));
	CU_ASSERT(eqhex(out + 10, 2, "c410"));
	CU_ASSERT(memcmp(out + 12, ph, 16) == 0);
	CU_ASSERT(eqhex(out + 28, 4, "c4026869"));
	CU_ASSERT_EQUAL(rnsc_request_pack(NULL, 0, 1.5, ph, data, dl), n);
	CU_ASSERT_EQUAL(rnsc_request_pack(out, 10, 1.5, ph, data, dl), RNSC_ERR_BUFSIZE);
	/* nil data, and data that is not exactly one value */
	CU_ASSERT_EQUAL(rnsc_request_pack(out, sizeof(out), 1.5, ph, NULL, 0), 29);
	CU_ASSERT_EQUAL(out[28], 0xc0);
	CU_ASSERT_EQUAL(
		rnsc_request_pack(out, sizeof(out), 1.5, ph, (const uint8_t *)"\xc0\xc0", 2),
		RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_request_pack(out, sizeof(out), 1.5, NULL, NULL, 0), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_request_path_hash(NULL, ph, "x", 1), RNSC_ERR_INVAL);
	n = rnsc_request_pack(out, sizeof(out), 1.5, ph, data, dl);
	double at;
	const uint8_t *p, *d;
	size_t l;
	CU_ASSERT_EQUAL(rnsc_request_unpack(out, (size_t)n, &at, &p, &d, &l), 0);
	CU_ASSERT(at == 1.5 && p == out + 12 && d == out + 28 && l == 4);
	CU_ASSERT_EQUAL(rnsc_request_unpack(out, (size_t)n - 1, &at, &p, &d, &l),
			RNSC_ERR_TRUNCATED);
	CU_ASSERT_EQUAL(rnsc_request_unpack(out, (size_t)n, NULL, &p, &d, &l), RNSC_ERR_INVAL);
	/* lenient as the reference: extra elements, an int timestamp, a path that is no hash */
	static const char *const lenient[] = {
		"94cb3ff8000000000000c410000102030405060708090a0b0c0d0e0f01c0", /* 4 items */
		"9305c41000010203040506070809 0a0b0c0d0e0f01",                  /* int time */
		"93fbc410000102030405060708090a0b0c0d0e0f01",                   /* neg int */
		"93c0a3616263c0",                                               /* str path */
		"93ca3fc00000c410000102030405060708090a0b0c0d0e0f01",           /* float32 */
	};
	for (size_t i = 0; i < sizeof(lenient) / sizeof(*lenient); i++) {
		uint8_t b[64];
		char hx[128];
		size_t k = 0;
		for (const char *c = lenient[i]; *c; c++)
			if (*c != ' ')
				hx[k++] = *c;
		hx[k] = 0;
		size_t bl = unhex(b, hx);
		CU_ASSERT_EQUAL(rnsc_request_unpack(b, bl, &at, &p, &d, &l), 0);
		if (i == 1)
			CU_ASSERT(at == 5.0);
		if (i == 2)
			CU_ASSERT(at == -5.0);
		if (i == 3)
			CU_ASSERT(p == NULL && isnan(at));
		if (i == 4)
			CU_ASSERT(at == 1.5);
	}
	uint8_t b[64];
	size_t bl = unhex(b, "92c0c0"); /* two items only */
	CU_ASSERT_EQUAL(rnsc_request_unpack(b, bl, &at, &p, &d, &l), RNSC_ERR_MALFORMED);
	bl = unhex(b, "c0");
	CU_ASSERT_EQUAL(rnsc_request_unpack(b, bl, &at, &p, &d, &l), RNSC_ERR_MALFORMED);
	bl = unhex(b, "94c0c0c0c1"); /* the 4th element is not valid MessagePack */
	CU_ASSERT(rnsc_request_unpack(b, bl, &at, &p, &d, &l) < 0);
	bl = unhex(b, "93c0c0"); /* data missing */
	CU_ASSERT(rnsc_request_unpack(b, bl, &at, &p, &d, &l) < 0);
	bl = unhex(b, "93c0"); /* path missing */
	CU_ASSERT(rnsc_request_unpack(b, bl, &at, &p, &d, &l) < 0);
	bl = unhex(b, "93"); /* nothing */
	CU_ASSERT(rnsc_request_unpack(b, bl, &at, &p, &d, &l) < 0);
	bl = unhex(b, "93c1"); /* timestamp invalid */
	CU_ASSERT(rnsc_request_unpack(b, bl, &at, &p, &d, &l) < 0);
	/* responses */
	n = rnsc_response_pack(out, sizeof(out), ph, data, dl);
	CU_ASSERT_EQUAL(n, 1 + 18 + 4);
	CU_ASSERT(eqhex(out, 3, "92c410"));
	const uint8_t *id, *r;
	CU_ASSERT_EQUAL(rnsc_response_unpack(out, (size_t)n, &id, &r, &l), 0);
	CU_ASSERT(id == out + 3 && r == out + 19 && l == 4);
	CU_ASSERT_EQUAL(rnsc_response_pack(out, sizeof(out), ph, NULL, 0), 20);
	CU_ASSERT_EQUAL(rnsc_response_pack(out, 5, ph, NULL, 0), RNSC_ERR_BUFSIZE);
	CU_ASSERT_EQUAL(rnsc_response_pack(NULL, 5, ph, NULL, 0), RNSC_ERR_INVAL);
	bl = unhex(b, "91c0");
	CU_ASSERT_EQUAL(rnsc_response_unpack(b, bl, &id, &r, &l), RNSC_ERR_MALFORMED);
	bl = unhex(b, "92a3616263c0c0"); /* str id: matches nothing; trailing bytes ignored */
	CU_ASSERT_EQUAL(rnsc_response_unpack(b, bl, &id, &r, &l), 0);
	CU_ASSERT(id == NULL);
	bl = unhex(b, "93c0c0c1");
	CU_ASSERT(rnsc_response_unpack(b, bl, &id, &r, &l) < 0);
	bl = unhex(b, "92c0");
	CU_ASSERT(rnsc_response_unpack(b, bl, &id, &r, &l) < 0);
	bl = unhex(b, "92c1");
	CU_ASSERT(rnsc_response_unpack(b, bl, &id, &r, &l) < 0);
	bl = unhex(b, "c1");
	CU_ASSERT(rnsc_response_unpack(b, bl, &id, &r, &l) < 0);
	CU_ASSERT_EQUAL(rnsc_response_unpack(b, bl, NULL, &r, &l), RNSC_ERR_INVAL);
	CU_ASSERT_STRING_EQUAL(rnsc_request_status_name(RNSC_REQUEST_READY), "READY");
	CU_ASSERT_STRING_EQUAL(rnsc_request_status_name(RNSC_REQUEST_FAILED), "FAILED");
	CU_ASSERT_STRING_EQUAL(rnsc_request_status_name(RNSC_REQUEST_SENT), "SENT");
	CU_ASSERT_STRING_EQUAL(rnsc_request_status_name(RNSC_REQUEST_DELIVERED), "DELIVERED");
	CU_ASSERT_STRING_EQUAL(rnsc_request_status_name(RNSC_REQUEST_RECEIVING), "RECEIVING");
	CU_ASSERT_PTR_NULL(rnsc_request_status_name(9));
}

static void t_roundtrip(void)
{
	pair();
	reset_counts();
	CU_ASSERT_EQUAL(rnsc_request_handlers_register(HS, "/echo", echo, NULL,
						       RNSC_REQUEST_ALLOW_ALL, NULL, 0, 1),
			0);
	CU_ASSERT_EQUAL(rnsc_request_handlers_count(HS), 1);
	uint8_t data[64], id[16];
	size_t dl = mp_bin(data, sizeof(data), "hello request");
	CU_ASSERT_EQUAL(rnsc_request_link_send(A.rl, "/echo", data, dl, &PRM, id, now), 0);
	CU_ASSERT_EQUAL(rnsc_request_link_pending(A.rl), 1);
	const rnsc_request_receipt *r = rnsc_request_link_receipt(A.rl, id);
	CU_ASSERT_FATAL(r != NULL);
	CU_ASSERT_EQUAL(r->status, RNSC_REQUEST_SENT);
	/* default timeout: rtt * 6 + 11.25 s */
	double rtt = rnsc_link_rtt(A.l);
	CU_ASSERT_EQUAL(r->timeout_ms, (uint64_t)(rtt * 6 * 1000.0) + 11250);
	CU_ASSERT_EQUAL(rnsc_request_link_next_deadline(A.rl), now + r->timeout_ms + 1);
	/* the request id is the sent packet's truncated hash */
	uint8_t f[600], h[32];
	size_t fl = rnsc_link_outbox_peek_len(A.l);
	CU_ASSERT_FATAL(fl > 0);
	CU_ASSERT_EQUAL((size_t)rnsc_link_outbox_pop(A.l, f, sizeof(f)), fl);
	CU_ASSERT_EQUAL(rnsc_packet_hash(C, h, f, fl), 0);
	CU_ASSERT(memcmp(h, id, 16) == 0);
	now += 5;
	CU_ASSERT_EQUAL(rnsc_link_receive(B.l, f, fl, now), 0);
	CU_ASSERT_EQUAL(B.last_rc, 0);
	CU_ASSERT_EQUAL(g_calls, 1);
	CU_ASSERT_STRING_EQUAL(g_info.path, "/echo");
	CU_ASSERT(memcmp(g_req_id, id, 16) == 0);
	CU_ASSERT(memcmp(g_info.link_id, rnsc_link_id(B.l), 16) == 0);
	CU_ASSERT_PTR_NULL(g_info.remote_identity);
	CU_ASSERT(fabs(g_info.requested_at - 1.15) < 1e-9); /* now / 1000 at the send */
	pump();
	CU_ASSERT_EQUAL(A.last_rc, 0);
	CU_ASSERT_EQUAL(g_resp, 1);
	CU_ASSERT_EQUAL(g_progress, 1);
	CU_ASSERT_EQUAL(g_last_status, RNSC_REQUEST_READY);
	CU_ASSERT(g_last_resp_len == dl && memcmp(g_last_resp, data, dl) == 0);
	CU_ASSERT_EQUAL(rnsc_request_link_pending(A.rl), 0);
	CU_ASSERT_PTR_NULL(rnsc_request_link_receipt(A.rl, id));
	/* a second response for the same id: nothing pending */
	uint8_t resp[64];
	int n = rnsc_response_pack(resp, sizeof(resp), id, NULL, 0);
	CU_ASSERT_EQUAL(rnsc_request_link_packet(A.rl, RNSC_CTX_RESPONSE, resp, (size_t)n, h, now),
			RNSC_ERR_NOTFOUND);
	/* nil data, handler answering nothing, handler failing */
	reset_counts();
	CU_ASSERT_EQUAL(rnsc_request_link_send(A.rl, "/echo", NULL, 0, &PRM, id, now), 0);
	pump();
	CU_ASSERT_EQUAL(g_resp, 1);
	CU_ASSERT(g_last_resp_len == 1 && g_last_resp[0] == 0xc0);
	reset_counts();
	g_handler_rc = 0;
	CU_ASSERT_EQUAL(rnsc_request_link_send(A.rl, "/echo", NULL, 0, &PRM, id, now), 0);
	pump();
	CU_ASSERT(g_calls == 1 && g_resp == 0 && B.last_rc == 0);
	g_handler_rc = RNSC_ERR_IO;
	CU_ASSERT_EQUAL(rnsc_request_link_send(A.rl, "/echo", NULL, 0, &PRM, id, now), 0);
	pump();
	CU_ASSERT(g_calls == 2 && g_resp == 0 && B.last_rc == RNSC_ERR_IO);
	/* both pending requests time out with the failed callback */
	CU_ASSERT_EQUAL(rnsc_request_link_pending(A.rl), 2);
	uint64_t dl2 = rnsc_request_link_next_deadline(A.rl);
	CU_ASSERT_EQUAL(rnsc_request_link_tick(A.rl, dl2 - 1), 0);
	CU_ASSERT_EQUAL(rnsc_request_link_tick(A.rl, dl2), 2);
	CU_ASSERT_EQUAL(g_failed, 2);
	CU_ASSERT_EQUAL(g_last_status, RNSC_REQUEST_FAILED);
	CU_ASSERT_EQUAL(rnsc_request_link_next_deadline(A.rl), UINT64_MAX);
	/* an unknown path: no answer */
	reset_counts();
	CU_ASSERT_EQUAL(rnsc_request_link_send(A.rl, "/nothing", NULL, 0, &PRM, id, now), 0);
	pump();
	CU_ASSERT_EQUAL(B.last_rc, RNSC_ERR_NOTFOUND);
	/* explicit timeout and timestamp */
	rnsc_request_params p2 = PRM;
	p2.timeout_ms = 500;
	p2.requested_at = 12345.25;
	g_handler_rc = 1;
	CU_ASSERT_EQUAL(rnsc_request_link_send(A.rl, "/echo", NULL, 0, &p2, id, now), 0);
	CU_ASSERT_EQUAL(rnsc_request_link_receipt(A.rl, id)->timeout_ms, 500);
	pump();
	CU_ASSERT(g_info.requested_at == 12345.25);
	/* deregistering */
	CU_ASSERT_EQUAL(rnsc_request_handlers_deregister(HS, "/echo"), 0);
	CU_ASSERT_EQUAL(rnsc_request_handlers_deregister(HS, "/echo"), RNSC_ERR_NOTFOUND);
	CU_ASSERT_EQUAL(rnsc_request_handlers_count(HS), 0);
	free_pair();
}

static void t_policies(void)
{
	pair();
	reset_counts();
	uint8_t list[2][16];
	memset(list[0], 0x55, 16);
	memcpy(list[1], WHO.hash, 16);
	CU_ASSERT_EQUAL(rnsc_request_handlers_register(HS, "/none", echo, NULL,
						       RNSC_REQUEST_ALLOW_NONE, NULL, 0, 1),
			0);
	CU_ASSERT_EQUAL(rnsc_request_handlers_register(HS, "/list", echo, NULL,
						       RNSC_REQUEST_ALLOW_LIST,
						       (const uint8_t(*)[16])list, 2, 1),
			0);
	CU_ASSERT_EQUAL(rnsc_request_handlers_register(HS, "/list1", echo, NULL,
						       RNSC_REQUEST_ALLOW_LIST,
						       (const uint8_t(*)[16])list, 1, 1),
			0);
	uint8_t id[16];
	CU_ASSERT_EQUAL(rnsc_request_link_send(A.rl, "/none", NULL, 0, &PRM, id, now), 0);
	pump();
	CU_ASSERT(B.last_rc == RNSC_ERR_PERM && g_calls == 0);
	/* not identified: refused */
	CU_ASSERT_EQUAL(rnsc_request_link_send(A.rl, "/list", NULL, 0, &PRM, id, now), 0);
	pump();
	CU_ASSERT(B.last_rc == RNSC_ERR_PERM && g_calls == 0);
	CU_ASSERT(rnsc_link_identify(A.l, &WHO, now) > 0);
	pump();
	CU_ASSERT_EQUAL(rnsc_request_link_send(A.rl, "/list", NULL, 0, &PRM, id, now), 0);
	pump();
	CU_ASSERT(B.last_rc == 0 && g_calls == 1 && g_resp == 1);
	CU_ASSERT(g_info.remote_identity &&
		  memcmp(g_info.remote_identity->hash, WHO.hash, 16) == 0);
	/* identified, but not in this list */
	CU_ASSERT_EQUAL(rnsc_request_link_send(A.rl, "/list1", NULL, 0, &PRM, id, now), 0);
	pump();
	CU_ASSERT(B.last_rc == RNSC_ERR_PERM && g_calls == 1);
	/* replacing a handler */
	CU_ASSERT_EQUAL(rnsc_request_handlers_register(HS, "/none", echo, NULL,
						       RNSC_REQUEST_ALLOW_ALL, NULL, 0, 1),
			0);
	CU_ASSERT_EQUAL(rnsc_request_handlers_count(HS), 3);
	CU_ASSERT_EQUAL(rnsc_request_link_send(A.rl, "/none", NULL, 0, &PRM, id, now), 0);
	pump();
	CU_ASSERT(B.last_rc == 0 && g_calls == 2);
	/* max request size */
	rnsc_request_handlers_set_max_size(HS, 10);
	CU_ASSERT_EQUAL(rnsc_request_link_send(A.rl, "/none", NULL, 0, &PRM, id, now), 0);
	pump();
	CU_ASSERT(B.last_rc == RNSC_ERR_TOOBIG && g_calls == 2);
	rnsc_request_handlers_set_max_size(HS, SIZE_MAX);
	/* registration errors */
	CU_ASSERT_EQUAL(rnsc_request_handlers_register(HS, "", echo, NULL, 1, NULL, 0, 1),
			RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_request_handlers_register(HS, "/x", NULL, NULL, 1, NULL, 0, 1),
			RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_request_handlers_register(HS, "/x", echo, NULL, 7, NULL, 0, 1),
			RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_request_handlers_register(HS, "/x", echo, NULL, 2, NULL, 3, 1),
			RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_request_handlers_register(HS, "\xff", echo, NULL, 1, NULL, 0, 1),
			RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_request_handlers_register(NULL, "/x", echo, NULL, 1, NULL, 0, 1),
			RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_request_handlers_deregister(NULL, "/x"), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_request_handlers_new(NULL, NULL), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_request_handlers_count(NULL), 0);
	rnsc_request_handlers_set_max_size(NULL, 1);
	rnsc_request_handlers_del(NULL);
	/* more handlers than the first allocation holds */
	char path[16];
	for (int i = 0; i < 6; i++) {
		snprintf(path, sizeof(path), "/p%d", i);
		CU_ASSERT_EQUAL(rnsc_request_handlers_register(HS, path, echo, NULL, 1, NULL, 0, 1),
				0);
	}
	CU_ASSERT_EQUAL(rnsc_request_handlers_count(HS), 9);
	/* allocation failures while registering */
	for (unsigned k = 1; k <= 4; k++) {
		rnsc_ctx_fail_alloc_after(C, k);
		int rc = rnsc_request_handlers_register(HS, "/nomem", echo, NULL, 2,
							(const uint8_t(*)[16])list, 2, 1);
		rnsc_ctx_fail_alloc_after(C, 0);
		CU_ASSERT(rc == RNSC_ERR_NOMEM || rc == 0);
		(void)rnsc_request_handlers_deregister(HS, "/nomem");
	}
	free_pair();
}

/* The resource seam: what the request layer hands over, and the entry points back. */
static unsigned g_res_calls;
static int g_res_rc;
static uint8_t g_res_id[16];
static int g_res_is_response, g_res_auto;
static size_t g_res_len;
static uint8_t g_res_data[8192];
static uint64_t g_res_timeout;

static int res_send(void *ud, const uint8_t id[16], int is_response, const uint8_t *packed,
		    size_t len, int auto_compress, uint64_t timeout_ms, uint64_t n)
{
	(void)ud, (void)n;
	g_res_calls++;
	memcpy(g_res_id, id, 16);
	g_res_is_response = is_response;
	g_res_auto = auto_compress;
	g_res_len = len < sizeof(g_res_data) ? len : 0;
	memcpy(g_res_data, packed, g_res_len);
	g_res_timeout = timeout_ms;
	return g_res_rc;
}

static void t_resources(void)
{
	pair();
	reset_counts();
	CU_ASSERT_EQUAL(rnsc_request_handlers_register(HS, "/big", echo, NULL,
						       RNSC_REQUEST_ALLOW_ALL, NULL, 0, 0),
			0);
	/* a request larger than the MDU without resource ops: refused */
	uint8_t big[3000];
	memset(big, 0x41, sizeof(big));
	uint8_t data[3100];
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, data, sizeof(data));
	rnsc_mp_write_bin(&w, big, sizeof(big));
	size_t dl = (size_t)rnsc_mp_writer_finish(&w);
	uint8_t id[16];
	CU_ASSERT_EQUAL(rnsc_request_link_send(A.rl, "/big", data, dl, &PRM, id, now),
			RNSC_ERR_TOOBIG);
	CU_ASSERT_EQUAL(rnsc_request_link_pending(A.rl), 0);
	rnsc_request_resource_ops ops = {res_send, NULL};
	rnsc_request_link_set_resource_ops(A.rl, &ops);
	rnsc_request_link_set_resource_ops(B.rl, &ops);
	/* with them: handed over with the truncated hash of the packed request as id */
	g_res_rc = RNSC_ERR_IO;
	CU_ASSERT_EQUAL(rnsc_request_link_send(A.rl, "/big", data, dl, &PRM, id, now), RNSC_ERR_IO);
	g_res_rc = 0;
	rnsc_request_params p = PRM;
	p.timeout_ms = 3000;
	CU_ASSERT_EQUAL(rnsc_request_link_send(A.rl, "/big", data, dl, &p, id, now), 0);
	CU_ASSERT_EQUAL(g_res_calls, 2);
	CU_ASSERT(g_res_is_response == 0 && g_res_auto == 1 && g_res_timeout == 3000);
	uint8_t th[16];
	CU_ASSERT_EQUAL(rnsc_truncated_hash(C, th, g_res_data, g_res_len), 0);
	CU_ASSERT(memcmp(th, id, 16) == 0 && memcmp(g_res_id, id, 16) == 0);
	const rnsc_request_receipt *r = rnsc_request_link_receipt(A.rl, id);
	CU_ASSERT(r && r->as_resource && r->status == RNSC_REQUEST_SENT);
	/* no timeout while the resource is in flight */
	CU_ASSERT_EQUAL(rnsc_request_link_next_deadline(A.rl), UINT64_MAX);
	CU_ASSERT_EQUAL(rnsc_request_link_request_resource_sent(A.rl, id, 1, now + 100), 0);
	CU_ASSERT_EQUAL(r->status, RNSC_REQUEST_DELIVERED);
	CU_ASSERT_EQUAL(rnsc_request_link_next_deadline(A.rl), now + 100 + 3000 + 1);
	/* the other side gets the request resource; its response is a resource too */
	size_t req_len = g_res_len;
	uint8_t req_packed[3200];
	memcpy(req_packed, g_res_data, req_len);
	CU_ASSERT_EQUAL(rnsc_request_link_request_resource_received(B.rl, req_packed, req_len, now),
			0);
	CU_ASSERT_EQUAL(g_calls, 1);
	CU_ASSERT(memcmp(g_req_id, id, 16) == 0);
	CU_ASSERT_EQUAL(g_res_calls, 3);
	CU_ASSERT(g_res_is_response == 1 && g_res_auto == 0 && g_res_timeout == 0);
	CU_ASSERT(memcmp(g_res_id, id, 16) == 0);
	/* advertised, progress, received */
	CU_ASSERT_EQUAL(rnsc_request_link_response_advertised(A.rl, id, g_res_len, 100, now), 0);
	CU_ASSERT_EQUAL(r->status, RNSC_REQUEST_RECEIVING);
	CU_ASSERT_EQUAL(r->response_size, g_res_len);
	CU_ASSERT_EQUAL(rnsc_request_link_next_deadline(A.rl), UINT64_MAX);
	CU_ASSERT_EQUAL(rnsc_request_link_response_progress(A.rl, id, 0.5, now), 0);
	CU_ASSERT(r->progress == 0.5);
	CU_ASSERT_EQUAL(g_progress, 2);
	CU_ASSERT_EQUAL(
		rnsc_request_link_response_resource_received(A.rl, g_res_data, g_res_len, now), 0);
	CU_ASSERT_EQUAL(g_resp, 1);
	CU_ASSERT(g_last_resp_len == dl && memcmp(g_last_resp, data, dl) == 0);
	/* unknown ids */
	CU_ASSERT_EQUAL(rnsc_request_link_response_advertised(A.rl, id, 1, 1, now),
			RNSC_ERR_NOTFOUND);
	CU_ASSERT_EQUAL(rnsc_request_link_response_progress(A.rl, id, 1, now), RNSC_ERR_NOTFOUND);
	CU_ASSERT_EQUAL(rnsc_request_link_response_resource_failed(A.rl, id, now),
			RNSC_ERR_NOTFOUND);
	CU_ASSERT_EQUAL(rnsc_request_link_request_resource_sent(A.rl, id, 1, now),
			RNSC_ERR_NOTFOUND);
	/* a request resource that failed; a response resource that failed; one too big */
	reset_counts();
	CU_ASSERT_EQUAL(rnsc_request_link_send(A.rl, "/big", data, dl, &p, id, now), 0);
	CU_ASSERT_EQUAL(rnsc_request_link_request_resource_sent(A.rl, id, 0, now), 0);
	CU_ASSERT_EQUAL(g_failed, 1);
	CU_ASSERT_EQUAL(rnsc_request_link_send(A.rl, "/big", data, dl, &p, id, now), 0);
	CU_ASSERT_EQUAL(rnsc_request_link_response_resource_failed(A.rl, id, now), 0);
	CU_ASSERT_EQUAL(g_failed, 2);
	p.max_response_size = 100;
	CU_ASSERT_EQUAL(rnsc_request_link_send(A.rl, "/big", data, dl, &p, id, now), 0);
	CU_ASSERT_EQUAL(rnsc_request_link_response_advertised(A.rl, id, 101, 50, now),
			RNSC_ERR_TOOBIG);
	CU_ASSERT_EQUAL(g_failed, 3);
	/* a response resource whose request is unknown */
	CU_ASSERT_EQUAL(
		rnsc_request_link_response_resource_received(A.rl, g_res_data, g_res_len, now),
		RNSC_ERR_NOTFOUND);
	/* a response larger than the MDU with no ops is dropped */
	rnsc_request_link_set_resource_ops(B.rl, NULL);
	g_out_len = dl;
	memcpy(g_out, data, 2000 < dl ? 2000 : dl);
	g_out_len = 0;
	rnsc_mp_writer_init(&w, g_out, sizeof(g_out));
	rnsc_mp_write_bin(&w, big, 1500);
	g_out_len = (size_t)rnsc_mp_writer_finish(&w);
	CU_ASSERT_EQUAL(rnsc_request_link_send(A.rl, "/big", NULL, 0, &PRM, id, now), 0);
	pump();
	CU_ASSERT_EQUAL(B.last_rc, RNSC_ERR_TOOBIG);
	/* entry point argument errors */
	CU_ASSERT_EQUAL(rnsc_request_link_request_resource_sent(NULL, id, 1, now), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_request_link_request_resource_received(NULL, NULL, 0, now),
			RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_request_link_response_advertised(A.rl, NULL, 1, 1, now),
			RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_request_link_response_progress(NULL, id, 1, now), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_request_link_response_resource_received(NULL, NULL, 0, now),
			RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_request_link_response_resource_failed(NULL, id, now), RNSC_ERR_INVAL);
	rnsc_request_link_set_resource_ops(NULL, &ops);
	free_pair();
}

static void t_sizes_and_errors(void)
{
	pair();
	reset_counts();
	CU_ASSERT_EQUAL(rnsc_request_handlers_register(HS, "/echo", echo, NULL,
						       RNSC_REQUEST_ALLOW_ALL, NULL, 0, 1),
			0);
	/* max_response_size: the reference's len(packb(response)) - 2 decides */
	uint8_t data[64], id[16];
	size_t dl = mp_bin(data, sizeof(data), "0123456789"); /* 12 bytes packed: size 10 */
	rnsc_request_params p = PRM;
	p.max_response_size = 10;
	CU_ASSERT_EQUAL(rnsc_request_link_send(A.rl, "/echo", data, dl, &p, id, now), 0);
	pump();
	CU_ASSERT(g_resp == 1 && g_failed == 0);
	p.max_response_size = 9;
	CU_ASSERT_EQUAL(rnsc_request_link_send(A.rl, "/echo", data, dl, &p, id, now), 0);
	pump();
	CU_ASSERT(g_resp == 1 && g_failed == 1 && A.last_rc == RNSC_ERR_TOOBIG);
	/* callbacks are optional */
	CU_ASSERT_EQUAL(rnsc_request_link_send(A.rl, "/echo", data, dl, NULL, id, now), 0);
	pump();
	CU_ASSERT_EQUAL(rnsc_request_link_pending(A.rl), 0);
	CU_ASSERT_EQUAL(rnsc_request_link_send(A.rl, "/echo", data, dl, NULL, id, now), 0);
	CU_ASSERT_EQUAL(rnsc_request_link_tick(A.rl, now + 100000), 1);
	/* many pending requests at once (the list grows) */
	for (int i = 0; i < 20; i++)
		CU_ASSERT_EQUAL(rnsc_request_link_send(A.rl, "/echo", data, dl, &PRM, NULL, now),
				0);
	CU_ASSERT_EQUAL(rnsc_request_link_pending(A.rl), 20);
	pump();
	CU_ASSERT_EQUAL(rnsc_request_link_pending(A.rl), 0);
	/* argument and state errors */
	CU_ASSERT_EQUAL(rnsc_request_link_send(NULL, "/echo", NULL, 0, NULL, id, now),
			RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_request_link_send(A.rl, NULL, NULL, 0, NULL, id, now), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_request_link_send(A.rl, "/echo", (const uint8_t *)"\xc0\xc0", 2, NULL,
					       id, now),
			RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_request_link_packet(A.rl, RNSC_CTX_NONE, data, dl, NULL, now),
			RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_request_link_packet(A.rl, RNSC_CTX_REQUEST, data, dl, NULL, now),
			RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_request_link_packet(NULL, RNSC_CTX_REQUEST, data, dl, NULL, now),
			RNSC_ERR_INVAL);
	uint8_t h[32] = {0};
	/* the initiator has no handlers */
	CU_ASSERT_EQUAL(rnsc_request_link_packet(A.rl, RNSC_CTX_REQUEST, data, dl, h, now),
			RNSC_ERR_NOTFOUND);
	CU_ASSERT_EQUAL(rnsc_request_link_packet(B.rl, RNSC_CTX_REQUEST, data, dl, h, now),
			RNSC_ERR_MALFORMED);
	CU_ASSERT_EQUAL(rnsc_request_link_packet(A.rl, RNSC_CTX_RESPONSE, data, dl, h, now),
			RNSC_ERR_MALFORMED);
	CU_ASSERT_EQUAL(rnsc_request_link_tick(NULL, now), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_request_link_next_deadline(NULL), UINT64_MAX);
	CU_ASSERT_EQUAL(rnsc_request_link_pending(NULL), 0);
	CU_ASSERT_PTR_NULL(rnsc_request_link_receipt(NULL, id));
	rnsc_linkport bad = {0};
	rnsc_request_link *x;
	CU_ASSERT_EQUAL(rnsc_request_link_new(&x, C, &bad, NULL), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_request_link_new(NULL, C, &bad, NULL), RNSC_ERR_INVAL);
	rnsc_request_link_del(NULL);
	/* allocation failures */
	for (unsigned k = 1; k <= 3; k++) {
		rnsc_ctx_fail_alloc_after(C, k);
		int rc = rnsc_request_link_send(A.rl, "/echo", data, dl, &PRM, id, now);
		rnsc_ctx_fail_alloc_after(C, 0);
		CU_ASSERT(rc == 0 || rc == RNSC_ERR_NOMEM);
	}
	drop_all(&A);
	rnsc_request_handlers *spare = NULL;
	rnsc_ctx_fail_alloc_after(C, 1);
	CU_ASSERT_EQUAL(rnsc_request_handlers_new(C, &spare), RNSC_ERR_NOMEM);
	rnsc_ctx_fail_alloc_after(C, 0);
	CU_ASSERT_PTR_NULL(spare);
	/* a closed link: nothing goes out, nothing is handled */
	B.rl = B.rl; /* keep B's request link: its handlers are freed below */
	CU_ASSERT(rnsc_link_teardown(A.l, now) >= 0);
	CU_ASSERT_EQUAL(rnsc_request_link_send(A.rl, "/echo", data, dl, &PRM, id, now),
			RNSC_ERR_STATE);
	uint8_t resp[64];
	int n = rnsc_response_pack(resp, sizeof(resp), id, NULL, 0);
	CU_ASSERT_EQUAL(rnsc_request_link_packet(A.rl, RNSC_CTX_RESPONSE, resp, (size_t)n, h, now),
			RNSC_ERR_STATE);
	free_pair();
}

int main(void)
{
	static const wt_test tests[] = {
		{"wire layouts", t_wire},
		{"request and response round trip", t_roundtrip},
		{"allow policies", t_policies},
		{"the resource seam", t_resources},
		{"sizes and errors", t_sizes_and_errors},
	};
	return wt_main("request", tests, sizeof(tests) / sizeof(tests[0]));
}
