/* SPDX-License-Identifier: MIT */
/*
 * `rnsc bench participant`: rnsc's side of the scenario runner, on an in-process node
 * (src/runtime/node.h) built from a Reticulum config folder. It speaks the line protocol of
 * bench/participants/rnsc_bench_ref.py (ready, start, started, done, collect, result, quit)
 * on stdin/stdout, reading stdin through the node's own loop, so traffic and protocol share
 * one thread and nothing here blocks. Logs go to stderr.
 *
 * Scenario "single": the responder registers SINGLE bench.single with prove-all and
 * announces it every 0.5 s until the first packet arrives; the initiator keeps 16 DATA
 * packets (sizes and bytes from bench/scenario/bench_gen.h) in flight, each proved.
 * Scenario "link": the responder registers SINGLE bench.link with prove-all and announces it
 * until a link comes up; the initiator opens one link and keeps 16 link packets of 60..420
 * bytes in flight, each proved by the responder (link packet proofs).
 * Scenarios "resource" (4) and "stream" (5): the responder registers bench.resource /
 * bench.stream, accepts every resource on the link (src/runtime/linkapp.h), compares the
 * received bytes with the payload stream as they are written (nothing is held) and, once a
 * resource is complete, sends the 16-byte ACK ("RNSCBACK" + big-endian sequence, 1 for the
 * link's first resource) as a link packet. The initiator opens one link and sends one
 * resource at a time (compression off), its bytes read from the payload generator as the
 * resource asks for them (one segment in memory, never the whole resource), and starts the
 * next once its resource concluded COMPLETE and the ACK with the expected sequence arrived.
 * Every resource carries the first N bytes of the payload stream (N = 1,048,575 for
 * "resource"; 67,108,800 for "stream", 4,194,300 with --quick). A warm-up resource of
 * min(N, 1,048,575) bytes and its ACK precede "ready".
 * Scenario "request" (3): both configs set link_mtu_discovery = No, so the links signal the
 * base 500-byte MTU. The responder registers bench.request with a request handler for
 * /bench/query (linkapp_request.h; auto-compress off: the bytes are incompressible) on every
 * incoming link; a request is a MessagePack bin of 32..128 bytes whose first two bytes (big
 * endian) name the response size, 1024..4096 bytes, and the response is a bin holding the
 * first N bytes of the payload stream (its packed form exceeds the link MDU: a resource). The
 * initiator opens 4 links and keeps one request in flight on each (the next only once the
 * previous concluded); request sizes from bench_sizes(32, 128), response sizes from
 * bench_sizes(1024, 4096), the request's remaining bytes from the payload stream. It checks
 * each response's content and counts those whose resource progress it saw (status
 * RECEIVING) as delivered by resource. Warm-up: 0.5 s of requests, all answered, before
 * "ready".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_gen.h"
#include "bench.h"
#include "env.h"
#include "strfmt.h"
#include "destination.h"
#include "identity.h"
#include "linkapp.h"
#include "linkapp_request.h"
#include "msgpack.h"
#include "node.h"

#define OUTSTANDING 16
#define ANNOUNCE_EVERY_NS (500 * RNSC_NS_PER_MS)
#define WARMUP_NS (500 * RNSC_NS_PER_MS)
#define WARMUP_DRAIN_NS (10 * RNSC_NS_PER_S)
#define MAX_RTTS (1u << 22)
#define RES_SEGMENT 1048575ull /* Resource.MAX_EFFICIENT_SIZE */
#define RES_STREAM (64ull * RES_SEGMENT)
#define RES_STREAM_QUICK (4ull * RES_SEGMENT)
#define RX_CHUNK (8u * BENCH_CK_WORDS * BENCH_LANES) /* one lane group of the index */
#define ACK_MAGIC "RNSCBACK"
#define ACK_LEN 16
#define REQ_LINKS 4
#define REQ_PATH "/bench/query"
#define REQ_LO 32
#define REQ_HI 128
#define RESP_LO 1024
#define RESP_HI 4096
/* responses this slow are counted (slow=), and those whose resource advertisement came this
 * late (late_adv=: a requester that missed the first advertisement, e.g. the reference's
 * request race, waits for the advertisement's retry) */
#define REQ_SLOW_US 200000

enum phase { PH_SETUP, PH_WARMUP, PH_WARMUP_DRAIN, PH_READY, PH_TIMED, PH_DRAIN, PH_DONE };

typedef struct inflight {
	uint8_t hash[RNSC_HASHLEN];
	uint64_t sent_ns;
	uint32_t size;
	int used;
} inflight;

struct part_state;

/* Scenario "request": one of the initiator's links and its request in flight. */
typedef struct req_slot {
	struct part_state *s;
	uint8_t link_id[RNSC_TRUNCATED_HASHLEN];
	rnsc_request_link *rl;
	int up, busy, via_res;
	uint32_t want;
	uint64_t t0_ns, adv_ns; /* request sent; its response's resource first seen */
} req_slot;

typedef struct part_state {
	/* scenario "request" */
	int req;
	rnsc_linkreq *lr;
	rnsc_request_handlers *hs;
	req_slot rq[REQ_LINKS];
	bench_sizes rsizes;
	uint8_t resp[3 + RESP_HI]; /* bin16 header + the payload stream's first RESP_HI bytes */
	unsigned long long delivered_rq, failed_rq, corrupt_rq, via_rq, slow_rq, late_adv_rq,
		requests, served, bad, req_bytes;
	int link; /* scenario "link" (also set for the resource scenarios: they run on a link) */
	int res;  /* scenarios "resource" and "stream" */
	uint64_t res_size;
	rnsc_linkapp *la;
	/* resource initiator: the current resource */
	int cur_busy, cur_done, cur_acked;
	uint64_t cur_size, cur_t0_ns, seq;
	uint64_t *ck; /* index into the payload stream (bench_gen.h), res_size bytes */
	unsigned long long completed, acked;
	/* resource responder */
	uint8_t *rx_want; /* RX_CHUNK bytes: the payload expected next */
	uint64_t rx_bytes;
	int rx_bad;
	unsigned long long rcompleted, corrupt, rfailed, acks, rseq;
	uint8_t link_id[RNSC_TRUNCATED_HASHLEN];
	int link_up, link_closed;
	unsigned long long sbytes; /* initiator: bytes sent */
	rnsc_node *node;
	rnsc_transport *t;
	int responder;
	int quit, failed;
	char inbuf[1024];
	size_t inlen;
	/* responder */
	uint8_t dest[RNSC_TRUNCATED_HASHLEN];
	int got_traffic;
	unsigned long long delivered, dbytes;
	/* initiator */
	enum phase phase;
	uint64_t phase_end_ns, t0_ns, end_ns;
	inflight fl[OUTSTANDING];
	unsigned n_inflight;
	bench_sizes sizes;
	bench_payload stream;
	unsigned long long sent, proved, timeouts, pbytes;
	uint32_t *rtts;
	size_t n_rtts;
	double drain_s;
} part_state;

static void say(const char *line)
{
	printf("%s\n", line);
	fflush(stdout);
}

static void fail(part_state *s, const char *why)
{
	printf("error reason=");
	for (const char *p = why; *p; p++)
		putchar(*p == ' ' ? '_' : *p);
	printf("\n");
	fflush(stdout);
	s->failed = s->quit = 1;
}

/* ---- initiator ------------------------------------------------------------------------- */

static void send_one(part_state *s)
{
	uint8_t data[512];
	uint32_t size = bench_sizes_next(&s->sizes);
	bench_payload_take(&s->stream, data, size);
	inflight *f = NULL;
	for (unsigned i = 0; i < OUTSTANDING && !f; i++)
		if (!s->fl[i].used)
			f = &s->fl[i];
	if (!f)
		return;
	int rc = s->link ? rnsc_transport_link_send(s->t, s->link_id, data, size, f->hash,
						    rnsc_node_now_ms())
			 : rnsc_transport_send(s->t, s->dest, data, size, f->hash,
					       rnsc_node_now_ms());
	if (rc) {
		char why[128];
		snprintf(why, sizeof(why), "send failed: %s", rnsc_strerror(rc));
		fail(s, why);
		return;
	}
	f->used = 1, f->size = size, f->sent_ns = rnsc_monotonic_ns();
	s->n_inflight++;
	s->sent++;
	s->sbytes += size;
}

static void pump(part_state *s)
{
	while (!s->quit && s->n_inflight < OUTSTANDING)
		send_one(s);
	rnsc_node_flush(s->node);
}

static void on_receipt(void *ud, const uint8_t packet_hash[RNSC_HASHLEN], int proved)
{
	part_state *s = ud;
	uint64_t now = rnsc_monotonic_ns();
	for (unsigned i = 0; i < OUTSTANDING; i++) {
		inflight *f = &s->fl[i];
		if (!f->used || memcmp(f->hash, packet_hash, RNSC_HASHLEN) != 0)
			continue;
		f->used = 0;
		s->n_inflight--;
		if (proved) {
			s->proved++;
			s->pbytes += f->size;
			if (s->phase == PH_TIMED || s->phase == PH_DRAIN) {
				uint64_t us = (now - f->sent_ns) / 1000;
				if (s->n_rtts < MAX_RTTS)
					s->rtts[s->n_rtts++] =
						us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
			}
		} else {
			s->timeouts++;
		}
		if (s->phase == PH_WARMUP || s->phase == PH_TIMED)
			pump(s);
		return;
	}
}

/* ---- resources (scenarios 4 and 5) ---------------------------------------------------- */

/* The sender's data: the payload stream from its start, read through the index. */
static int tx_read(void *ud, uint64_t off, uint8_t *buf, size_t len)
{
	part_state *s = ud;
	if (off > s->res_size || len > s->res_size - off)
		return RNSC_ERR_INVAL; /* past the resource: the index does not reach */
	bench_payload_read(s->ck, off, buf, len);
	return (int)len;
}

static void tx_concluded(void *ud, rnsc_resource *r)
{
	part_state *s = ud;
	if (rnsc_resource_status(r) == RNSC_RESOURCE_COMPLETE) {
		s->cur_done = 1;
		return;
	}
	char why[96];
	snprintf(why, sizeof(why), "resource concluded %s",
		 rnsc_resource_status_name(rnsc_resource_status(r)));
	fail(s, why);
}

static void start_resource(part_state *s)
{
	uint64_t size =
		s->phase == PH_WARMUP && s->res_size > RES_SEGMENT ? RES_SEGMENT : s->res_size;
	rnsc_resource_params p = {.size = size, .auto_compress = 0};
	rnsc_resource_callbacks cb = {.read = tx_read, .concluded = tx_concluded};
	s->cur_busy = 1, s->cur_done = s->cur_acked = 0;
	s->cur_size = size;
	s->cur_t0_ns = rnsc_monotonic_ns();
	s->seq++;
	int rc = rnsc_linkapp_send_resource(s->la, s->link_id, &cb, s, &p, NULL);
	if (rc) {
		char why[96];
		snprintf(why, sizeof(why), "resource send failed: %s", rnsc_strerror(rc));
		fail(s, why);
		return;
	}
	if (s->phase != PH_WARMUP) {
		s->sent++;
		s->sbytes += size;
	}
	rnsc_node_flush(s->node);
}

/* The initiator's resource loop, from the main loop (never inside a resource callback). */
static void resource_tick(part_state *s)
{
	if (s->cur_busy && s->cur_done && s->cur_acked) {
		s->cur_busy = 0;
		if (s->phase == PH_TIMED || s->phase == PH_DRAIN) {
			s->completed++, s->acked++;
			s->pbytes += s->cur_size;
			uint64_t us = (rnsc_monotonic_ns() - s->cur_t0_ns) / 1000;
			if (s->n_rtts < MAX_RTTS)
				s->rtts[s->n_rtts++] = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
		}
	}
	if (!s->cur_busy && s->phase == PH_TIMED && !s->quit &&
	    rnsc_monotonic_ns() < s->phase_end_ns)
		start_resource(s);
}

static void ack_received(part_state *s, const uint8_t *data, size_t len)
{
	uint64_t q = 0;
	if (len != ACK_LEN || memcmp(data, ACK_MAGIC, 8) != 0) {
		fail(s, "a link packet that is not an ACK");
		return;
	}
	for (int i = 0; i < 8; i++)
		q = q << 8 | data[8 + i];
	if (!s->cur_busy || q != s->seq || s->cur_acked) {
		char why[96];
		snprintf(why, sizeof(why), "ACK %llu out of sequence (expected %llu)",
			 (unsigned long long)q, (unsigned long long)s->seq);
		fail(s, why);
		return;
	}
	s->cur_acked = 1;
}

/* The content check: what arrives against the payload stream at the same offset, in pieces
 * that end on lane-group boundaries of the index so that each is generated side by side. */
static int rx_write(void *ud, const uint8_t *p, size_t len)
{
	part_state *s = ud;
	if (s->rx_bytes > s->res_size || len > s->res_size - s->rx_bytes) {
		s->rx_bad = 1; /* longer than any resource this scenario sends */
		s->rx_bytes += len;
		return 0;
	}
	for (size_t off = 0; off < len;) {
		uint64_t at = s->rx_bytes + off;
		size_t k = RX_CHUNK - (size_t)(at % RX_CHUNK);
		k = len - off < k ? len - off : k;
		bench_payload_read(s->ck, at, s->rx_want, k);
		if (memcmp(s->rx_want, p + off, k) != 0)
			s->rx_bad = 1;
		off += k;
	}
	s->rx_bytes += len;
	return 0;
}

static void rx_concluded(void *ud, rnsc_resource *r)
{
	part_state *s = ud;
	if (rnsc_resource_status(r) != RNSC_RESOURCE_COMPLETE) {
		s->rfailed++; /* concluded without completing: failed, not corrupt */
		return;
	}
	if (s->rx_bad) {
		s->corrupt++;
		return;
	}
	uint8_t ack[ACK_LEN], h[RNSC_HASHLEN];
	s->rseq++;
	memcpy(ack, ACK_MAGIC, 8);
	for (int i = 0; i < 8; i++)
		ack[8 + i] = (uint8_t)(s->rseq >> (56 - 8 * i));
	s->rcompleted++;
	s->dbytes += s->rx_bytes;
	if (rnsc_transport_link_send(s->t, s->link_id, ack, sizeof(ack), h, rnsc_node_now_ms()) ==
	    0)
		s->acks++;
	rnsc_node_flush(s->node);
}

static int on_advertised(void *ud, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
			 const rnsc_resource_adv *adv, rnsc_resource_callbacks *cb, void **cb_ud)
{
	(void)link_id, (void)adv;
	part_state *s = ud;
	s->rx_bytes = 0, s->rx_bad = 0;
	*cb = (rnsc_resource_callbacks){.write = rx_write, .concluded = rx_concluded};
	*cb_ud = s;
	return 1;
}

/* ---- requests (scenario 3) ------------------------------------------------------------- */

/* The responder's /bench/query: a bin of 32..128 bytes naming the response size in its first
 * two bytes; answers a bin of that many bytes of the payload stream. A malformed request is
 * counted and left unanswered (the sample then fails). */
static int rq_handler(void *ud, const rnsc_request_info *req, const uint8_t **resp, size_t *len)
{
	part_state *s = ud;
	rnsc_mp_reader rd;
	const uint8_t *p;
	size_t n;
	s->requests++;
	rnsc_mp_reader_init(&rd, req->data, req->data_len);
	if (rnsc_mp_read_bin(&rd, &p, &n) != 0) {
		s->bad++;
		return 0;
	}
	s->req_bytes += n;
	uint32_t want = n >= 2 ? (uint32_t)p[0] << 8 | p[1] : 0;
	if (n < REQ_LO || n > REQ_HI || want < RESP_LO || want > RESP_HI) {
		s->bad++;
		return 0;
	}
	s->resp[0] = 0xc5; /* bin16: the payload follows the header in s->resp */
	s->resp[1] = (uint8_t)(want >> 8), s->resp[2] = (uint8_t)want;
	*resp = s->resp;
	*len = 3 + want;
	s->served++;
	s->dbytes += want;
	return 1;
}

static void rq_progress(void *ud, const rnsc_request_receipt *r)
{
	req_slot *q = ud;
	if (r->status == RNSC_REQUEST_RECEIVING && !q->via_res) {
		q->via_res = 1; /* the response's resource is arriving */
		q->adv_ns = rnsc_monotonic_ns();
	}
}

static void rq_record(part_state *s, req_slot *q)
{
	uint64_t us = (rnsc_monotonic_ns() - q->t0_ns) / 1000;
	s->slow_rq += us >= REQ_SLOW_US;
	s->late_adv_rq += q->via_res && (q->adv_ns - q->t0_ns) / 1000 >= REQ_SLOW_US;
	if (s->phase == PH_TIMED || s->phase == PH_DRAIN) {
		if (s->n_rtts < MAX_RTTS)
			s->rtts[s->n_rtts++] = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
	}
	q->busy = 0;
}

static void rq_response(void *ud, const rnsc_request_receipt *r)
{
	req_slot *q = ud;
	part_state *s = q->s;
	rnsc_mp_reader rd;
	const uint8_t *p;
	size_t n = 0;
	rnsc_mp_reader_init(&rd, r->response, r->response_len);
	if (rnsc_mp_read_bin(&rd, &p, &n) != 0 || n != q->want || memcmp(p, s->resp + 3, n) != 0)
		s->corrupt_rq++;
	s->delivered_rq++;
	s->via_rq += q->via_res;
	s->pbytes += n;
	rq_record(s, q);
}

static void rq_failed(void *ud, const rnsc_request_receipt *r)
{
	(void)r;
	req_slot *q = ud;
	q->s->failed_rq++;
	q->busy = 0;
}

static void rq_send(part_state *s, req_slot *q)
{
	uint8_t mp[2 + REQ_HI];
	uint32_t size = bench_sizes_next(&s->sizes), want = bench_sizes_next(&s->rsizes);
	mp[0] = 0xc4, mp[1] = (uint8_t)size; /* bin8 */
	mp[2] = (uint8_t)(want >> 8), mp[3] = (uint8_t)want;
	bench_payload_take(&s->stream, mp + 4, size - 2);
	rnsc_request_params p = {
		.response = rq_response, .failed = rq_failed, .progress = rq_progress, .ud = q};
	q->busy = 1, q->via_res = 0, q->want = want;
	q->t0_ns = rnsc_monotonic_ns();
	int rc =
		rnsc_request_link_send(q->rl, REQ_PATH, mp, 2 + size, &p, NULL, rnsc_node_now_ms());
	if (rc) {
		char why[96];
		q->busy = 0;
		snprintf(why, sizeof(why), "request failed: %s", rnsc_strerror(rc));
		fail(s, why);
		return;
	}
	s->sent++;
	s->sbytes += size;
}

static unsigned rq_busy(const part_state *s)
{
	unsigned n = 0;
	for (int i = 0; i < REQ_LINKS; i++)
		n += (unsigned)s->rq[i].busy;
	return n;
}

/* The initiator's request loop, from the main loop: every idle link gets its next request
 * while traffic runs. */
static void request_tick(part_state *s)
{
	(void)rnsc_linkreq_tick(s->lr, rnsc_node_now_ms());
	int sending = s->phase == PH_WARMUP ||
		      (s->phase == PH_TIMED && rnsc_monotonic_ns() < s->phase_end_ns);
	for (int i = 0; i < REQ_LINKS && sending && !s->quit; i++)
		if (!s->rq[i].busy)
			rq_send(s, &s->rq[i]);
	rnsc_node_flush(s->node);
}

static req_slot *rq_slot(part_state *s, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN])
{
	for (int i = 0; i < REQ_LINKS; i++)
		if (!memcmp(s->rq[i].link_id, link_id, RNSC_TRUNCATED_HASHLEN))
			return &s->rq[i];
	return NULL;
}

static void rq_link_est(part_state *s, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN], int initiator)
{
	if (!initiator) { /* the responder answers on every incoming link */
		s->got_traffic = 1;
		if (rnsc_linkreq_attach(s->lr, link_id, s->hs, NULL) != 0)
			fail(s, "cannot set up requests on a link");
		return;
	}
	req_slot *q = rq_slot(s, link_id);
	if (q && rnsc_linkreq_attach(s->lr, link_id, NULL, &q->rl) == 0)
		q->up = 1;
	else
		fail(s, "cannot set up requests on a link");
}

static void rq_link_closed(part_state *s, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN], int reason)
{
	rnsc_linkreq_detach(s->lr, link_id);
	req_slot *q = s->responder ? NULL : rq_slot(s, link_id);
	if (!q)
		return;
	q->rl = NULL, q->up = 0;
	if (s->phase != PH_DONE) {
		char why[64];
		snprintf(why, sizeof(why), "link closed (%s)", rnsc_link_reason_name(reason));
		fail(s, why);
	}
}

static void on_link_proof(void *ud, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
			  const uint8_t packet_hash[RNSC_HASHLEN])
{
	(void)link_id;
	on_receipt(ud, packet_hash, 1);
}

static void on_link_est(void *ud, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
			const uint8_t dest[RNSC_TRUNCATED_HASHLEN], int initiator)
{
	(void)dest;
	part_state *s = ud;
	if (s->req) {
		rq_link_est(s, link_id, initiator);
		return;
	}
	memcpy(s->link_id, link_id, RNSC_TRUNCATED_HASHLEN);
	s->link_up = 1;
	s->got_traffic = 1; /* the responder stops announcing */
}

static void on_link_closed(void *ud, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN], int reason)
{
	part_state *s = ud;
	if (s->req) {
		rq_link_closed(s, link_id, reason);
		return;
	}
	if (memcmp(link_id, s->link_id, RNSC_TRUNCATED_HASHLEN) != 0)
		return;
	s->link_closed = 1;
	if (!s->responder && s->phase != PH_DONE) {
		char why[64];
		snprintf(why, sizeof(why), "link closed (%s)", rnsc_link_reason_name(reason));
		fail(s, why);
	}
}

static void on_link_data(void *ud, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
			 const uint8_t *data, size_t len, const uint8_t packet_hash[RNSC_HASHLEN])
{
	(void)data, (void)packet_hash;
	part_state *s = ud;
	(void)link_id;
	if (s->res && !s->responder) {
		ack_received(s, data, len);
		return;
	}
	if (!s->responder || !s->link || s->res)
		return;
	s->delivered++;
	s->dbytes += len;
}

static void on_data(void *ud, const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN], const uint8_t *data,
		    size_t len, uint32_t iface)
{
	(void)data, (void)iface;
	part_state *s = ud;
	if (!s->responder || memcmp(dest_hash, s->dest, RNSC_TRUNCATED_HASHLEN) != 0)
		return;
	s->got_traffic = 1;
	s->delivered++;
	s->dbytes += len;
}

static int u32cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static double pct(const uint32_t *v, size_t n, double p)
{
	if (!n)
		return 0;
	double r = p / 100.0 * (double)n;
	size_t k = (size_t)r;
	if ((double)k < r)
		k++;
	k = k < 1 ? 1 : (k > n ? n : k);
	return (double)v[k - 1];
}

/* Phase changes driven by time; called after every loop iteration. */
static void initiator_tick(part_state *s)
{
	uint64_t now = rnsc_monotonic_ns();
	if (s->req) {
		request_tick(s);
		if (s->phase == PH_WARMUP && now >= s->phase_end_ns) {
			s->phase = PH_WARMUP_DRAIN;
			s->phase_end_ns =
				now + WARMUP_DRAIN_NS * 3; /* a lost advertisement retries */
		} else if (s->phase == PH_WARMUP_DRAIN && !rq_busy(s)) {
			if (s->failed_rq || s->corrupt_rq || s->via_rq != s->delivered_rq) {
				fail(s,
				     "a warm-up request failed or was not answered by a resource");
				return;
			}
			s->sent = s->sbytes = s->pbytes = 0;
			s->delivered_rq = s->via_rq = s->slow_rq = s->late_adv_rq = 0;
			s->phase = PH_READY;
			say("ready");
		} else if (s->phase == PH_WARMUP_DRAIN && now >= s->phase_end_ns) {
			fail(s, "warm-up requests were never answered");
		} else if (s->phase == PH_TIMED && now >= s->phase_end_ns) {
			s->phase = PH_DRAIN;
			s->phase_end_ns = now + (uint64_t)(s->drain_s * 1e9);
		} else if (s->phase == PH_DRAIN && (!rq_busy(s) || now >= s->phase_end_ns)) {
			s->end_ns = now;
			s->phase = PH_DONE;
			say("done");
		}
		return;
	}
	if (s->res) {
		resource_tick(s);
		if (s->phase == PH_WARMUP && !s->cur_busy) {
			s->sent = s->sbytes = 0;
			s->phase = PH_READY;
			say("ready");
		} else if (s->phase == PH_WARMUP && now >= s->phase_end_ns) {
			fail(s, "the warm-up resource was not completed and ACKed");
		} else if (s->phase == PH_TIMED && now >= s->phase_end_ns) {
			s->phase = PH_DRAIN;
			s->phase_end_ns = now + (uint64_t)(s->drain_s * 1e9);
		} else if (s->phase == PH_DRAIN && (!s->cur_busy || now >= s->phase_end_ns)) {
			s->end_ns = now;
			s->phase = PH_DONE;
			say("done");
		}
		return;
	}
	switch (s->phase) {
	case PH_WARMUP:
		if (now >= s->phase_end_ns) {
			s->phase = PH_WARMUP_DRAIN;
			s->phase_end_ns = now + WARMUP_DRAIN_NS;
		}
		break;
	case PH_WARMUP_DRAIN:
		if (!s->n_inflight) {
			s->sent = s->proved = s->timeouts = s->pbytes = s->sbytes = 0;
			s->phase = PH_READY;
			say("ready");
		} else if (now >= s->phase_end_ns) {
			fail(s, "warm-up packets were never proved");
		}
		break;
	case PH_TIMED:
		if (now >= s->phase_end_ns) {
			s->phase = PH_DRAIN;
			s->phase_end_ns = now + (uint64_t)(s->drain_s * 1e9);
		}
		break;
	case PH_DRAIN:
		if (!s->n_inflight || now >= s->phase_end_ns) {
			s->end_ns = now;
			s->phase = PH_DONE;
			say("done");
		}
		break;
	default:
		break;
	}
}

/* ---- the protocol on stdin -------------------------------------------------------------- */

static double kv(const char *line, const char *key, double dflt)
{
	char pat[32];
	snprintf(pat, sizeof(pat), "%s=", key);
	const char *p = strstr(line, pat);
	return p ? strtod(p + strlen(pat), NULL) : dflt;
}

/* The negotiated MTU of the scenario's link (0 without one), for the report. */
static unsigned link_mtu(const part_state *s)
{
	const uint8_t *id = s->req ? s->rq[0].link_id : s->link_id;
	const rnsc_link *l = s->link || s->req ? rnsc_transport_link_get(s->t, id) : NULL;
	return l ? (unsigned)rnsc_link_mtu(l) : 0;
}

static void command(part_state *s, const char *line)
{
	char out[512];
	if (!strncmp(line, "start", 5)) {
		if (s->responder) {
			s->delivered = s->dbytes = 0; /* the warm-up was proved before ready */
			s->rcompleted = s->corrupt = s->rfailed = s->acks = 0;
			s->requests = s->served = s->bad = s->req_bytes = 0;
			say("started");
			return;
		}
		if (s->phase != PH_READY) {
			fail(s, "start before ready");
			return;
		}
		s->drain_s = kv(line, "drain", 30);
		s->phase = PH_TIMED;
		s->t0_ns = rnsc_monotonic_ns();
		s->phase_end_ns = s->t0_ns + (uint64_t)(kv(line, "seconds", 30) * 1e9);
		if (s->req)
			request_tick(s);
		else if (s->res)
			resource_tick(s);
		else
			pump(s);
	} else if (!strcmp(line, "collect")) {
		if (s->responder && s->req) {
			snprintf(
				out, sizeof(out),
				"result requests=%llu served=%llu bad=%llu req_bytes=%llu bytes=%llu",
				s->requests, s->served, s->bad, s->req_bytes, s->dbytes);
		} else if (s->req) {
			qsort(s->rtts, s->n_rtts, sizeof(uint32_t), u32cmp);
			snprintf(
				out, sizeof(out),
				"result sent=%llu delivered=%llu failed=%llu unanswered=%u "
				"corrupt=%llu via_resource=%llu bytes=%llu sent_bytes=%llu links=%d "
				"slow=%llu late_adv=%llu elapsed_s=%.6f rtt_p50_us=%.1f rtt_p99_us=%.1f link_mtu=%u",
				s->sent, s->delivered_rq, s->failed_rq, rq_busy(s), s->corrupt_rq,
				s->via_rq, s->pbytes, s->sbytes, REQ_LINKS, s->slow_rq,
				s->late_adv_rq, (double)(s->end_ns - s->t0_ns) * 1e-9,
				pct(s->rtts, s->n_rtts, 50), pct(s->rtts, s->n_rtts, 99),
				link_mtu(s));
		} else if (s->responder && s->res) {
			snprintf(
				out, sizeof(out),
				"result completed=%llu bytes=%llu corrupt=%llu failed=%llu acks=%llu",
				s->rcompleted, s->dbytes, s->corrupt, s->rfailed, s->acks);
		} else if (s->responder) {
			snprintf(out, sizeof(out), "result delivered=%llu bytes=%llu", s->delivered,
				 s->dbytes);
		} else if (s->res) {
			qsort(s->rtts, s->n_rtts, sizeof(uint32_t), u32cmp);
			snprintf(
				out, sizeof(out),
				"result sent=%llu completed=%llu acked=%llu bytes=%llu sent_bytes=%llu "
				"resource_size=%llu unfinished=%d elapsed_s=%.6f rtt_p50_us=%.1f "
				"rtt_p99_us=%.1f link_mtu=%u",
				s->sent, s->completed, s->acked, s->pbytes, s->sbytes,
				(unsigned long long)s->res_size, s->cur_busy,
				(double)(s->end_ns - s->t0_ns) * 1e-9, pct(s->rtts, s->n_rtts, 50),
				pct(s->rtts, s->n_rtts, 99), link_mtu(s));
		} else {
			qsort(s->rtts, s->n_rtts, sizeof(uint32_t), u32cmp);
			snprintf(
				out, sizeof(out),
				"result sent=%llu proved=%llu timeouts=%llu unproved=%u bytes=%llu "
				"sent_bytes=%llu elapsed_s=%.6f rtt_p50_us=%.1f rtt_p99_us=%.1f "
				"link_mtu=%u",
				s->sent, s->proved, s->timeouts, s->n_inflight, s->pbytes,
				s->sbytes, (double)(s->end_ns - s->t0_ns) * 1e-9,
				pct(s->rtts, s->n_rtts, 50), pct(s->rtts, s->n_rtts, 99),
				link_mtu(s));
		}
		say(out);
	} else if (!strcmp(line, "quit")) {
		s->quit = 1;
	} else {
		snprintf(out, sizeof(out), "unknown command %.100s", line);
		fail(s, out);
	}
}

static void on_stdin(rnsc_loop *loop, rnsc_watch *w, int fd, unsigned ev, void *ud)
{
	(void)loop, (void)w, (void)ev;
	part_state *s = ud;
	ssize_t n = read(fd, s->inbuf + s->inlen, sizeof(s->inbuf) - 1 - s->inlen);
	if (n <= 0) {
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			fail(s, "runner closed stdin");
		return;
	}
	s->inlen += (size_t)n;
	char *nl;
	while ((nl = memchr(s->inbuf, '\n', s->inlen))) {
		*nl = '\0';
		command(s, s->inbuf);
		size_t used = (size_t)(nl - s->inbuf) + 1;
		memmove(s->inbuf, nl + 1, s->inlen - used);
		s->inlen -= used;
	}
	if (s->inlen == sizeof(s->inbuf) - 1)
		fail(s, "command line too long");
}

static void announce_tick(rnsc_loop *loop, rnsc_timer *tm, void *ud)
{
	part_state *s = ud;
	if (s->got_traffic) {
		rnsc_loop_timer_cancel(loop, tm);
		return;
	}
	int rc = rnsc_transport_announce(s->t, s->dest, NULL, 0, rnsc_node_now_ms());
	if (rc)
		fail(s, "announce failed");
	rnsc_node_flush(s->node);
}

/* ---- set-up ------------------------------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rnsc bench participant --role responder|initiator\n"
		"                              --scenario single|link|resource|stream|request\n"
		"                              --config DIR [--dest HASH] [--path-timeout S]\n"
		"                              [--quick]\n\n"
		"rnsc's participant in the benchmark scenarios (started by `rnsc bench`; speaks\n"
		"its line protocol on stdin/stdout).\n");
}

static int wait_path(part_state *s, double timeout_s)
{
	uint64_t end = rnsc_monotonic_ns() + (uint64_t)(timeout_s * 1e9);
	uint64_t next_req = 0;
	rnsc_identity id;
	while (!s->quit) {
		uint64_t now = rnsc_monotonic_ns();
		if (now >= end)
			return -1;
		if (rnsc_transport_has_path(s->t, s->dest) &&
		    rnsc_transport_recall(s->t, s->dest, &id, NULL, NULL) == 0)
			return 0;
		if (now >= next_req && !rnsc_transport_has_path(s->t, s->dest)) {
			/* the first request may precede the interface coming up: repeat it */
			if (rnsc_transport_request_path(s->t, s->dest, 0, 0, rnsc_node_now_ms()) ==
			    0)
				rnsc_node_flush(s->node);
			next_req = now + 2 * RNSC_NS_PER_S;
		}
		rnsc_node_run_once(s->node, 50);
	}
	return -1;
}

static int open_link(part_state *s, double timeout_s)
{
	int rc = rnsc_transport_link_open(s->t, s->dest, s->link_id, rnsc_node_now_ms());
	if (rc)
		return -1;
	rnsc_node_flush(s->node);
	uint64_t end = rnsc_monotonic_ns() + (uint64_t)(timeout_s * 1e9);
	while (!s->quit && !s->link_up && !s->link_closed && rnsc_monotonic_ns() < end)
		rnsc_node_run_once(s->node, 50);
	return s->link_up ? 0 : -1;
}

/* Scenario "request": the initiator's 4 links to the responder, all up before traffic. */
static int open_req_links(part_state *s, double timeout_s)
{
	for (int i = 0; i < REQ_LINKS; i++)
		if (rnsc_transport_link_open(s->t, s->dest, s->rq[i].link_id, rnsc_node_now_ms()))
			return -1;
	rnsc_node_flush(s->node);
	uint64_t end = rnsc_monotonic_ns() + (uint64_t)(timeout_s * 1e9);
	int up = 0;
	while (!s->quit && up < REQ_LINKS && rnsc_monotonic_ns() < end) {
		rnsc_node_run_once(s->node, 50);
		up = 0;
		for (int i = 0; i < REQ_LINKS; i++)
			up += s->rq[i].up;
	}
	return up == REQ_LINKS ? 0 : -1;
}

int rnsc_bench_participant_main(int argc, char **argv)
{
	static const struct option opts[] = {{"role", required_argument, NULL, 'r'},
					     {"scenario", required_argument, NULL, 's'},
					     {"config", required_argument, NULL, 'c'},
					     {"dest", required_argument, NULL, 'd'},
					     {"path-timeout", required_argument, NULL, 't'},
					     {"help", no_argument, NULL, 'h'},
					     {"quick", no_argument, NULL, 'q'},
					     {NULL, 0, NULL, 0}};
	const char *role = NULL, *scenario = NULL, *config = NULL, *dest = NULL;
	double path_timeout = 30;
	int c, quick = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			role = optarg;
			break;
		case 's':
			scenario = optarg;
			break;
		case 'c':
			config = optarg;
			break;
		case 'd':
			dest = optarg;
			break;
		case 't':
			path_timeout = strtod(optarg, NULL);
			break;
		case 'q':
			quick = 1;
			break;
		case 'h':
			usage(stdout);
			return BENCH_OK;
		default:
			usage(stderr);
			return BENCH_USAGE;
		}
	}
	if (optind != argc || !role || !scenario || !config ||
	    (strcmp(role, "responder") && strcmp(role, "initiator")) ||
	    (!strcmp(role, "initiator") && !dest) || path_timeout <= 0) {
		usage(stderr);
		return BENCH_USAGE;
	}
	part_state *s = calloc(1, sizeof(*s));
	if (!s)
		return BENCH_FAIL;
	s->responder = !strcmp(role, "responder");
	s->res = !strcmp(scenario, "resource") || !strcmp(scenario, "stream");
	s->res_size = !strcmp(scenario, "resource") ? RES_SEGMENT
		      : quick                       ? RES_STREAM_QUICK
						    : RES_STREAM;
	s->link = !strcmp(scenario, "link") || s->res;
	s->req = !strcmp(scenario, "request");
	if (strcmp(scenario, "single") != 0 && !s->link && !s->req) {
		fail(s, "unknown scenario");
		free(s);
		return BENCH_USAGE;
	}
	rnsc_env env;
	int rc = rnsc_env_open(&env, NULL, 0, stderr) == 0 ? BENCH_OK : BENCH_SETUP;
	if (rc) {
		fail(s, "cannot load plugins");
		free(s);
		return rc;
	}
	rnsc_node_options no = {.config_dir = config};
	rnsc_config_error err;
	int ret = BENCH_OK;
	if ((rc = rnsc_node_new(env.ctx, env.host, &no, &s->node, &err))) {
		fprintf(stderr, "rnsc bench participant: %s\n",
			err.msg[0] ? err.msg : rnsc_strerror(rc));
		fail(s, "node start failed");
		ret = BENCH_SETUP;
		goto out;
	}
	s->t = rnsc_node_transport(s->node);
	if (s->res) { /* the payload index, before anything is timed (17 ms for 64 MiB) */
		size_t n = bench_payload_index_len(s->res_size);
		s->ck = malloc(n * sizeof(*s->ck));
		s->rx_want = malloc(RX_CHUNK);
		if (!s->ck || !s->rx_want) {
			fail(s, "out of memory");
			ret = BENCH_FAIL;
			goto out;
		}
		bench_payload_index_build(s->ck, n);
	}
	rnsc_node_hooks hooks = {.ud = s,
				 .on_receipt = on_receipt,
				 .on_data = on_data,
				 .on_link_established = on_link_est,
				 .on_link_closed = on_link_closed,
				 .on_link_data = on_link_data,
				 .on_link_proof = on_link_proof};
	if (s->res || s->req) {
		/* scenario "request": no resource_advertised, only request/response resources */
		rnsc_linkapp_callbacks lcb = {.ud = s,
					      .resource_advertised = s->res ? on_advertised : NULL};
		if (rnsc_linkapp_new(env.ctx, s->node, &lcb, &hooks, &s->la) ||
		    (s->req && rnsc_linkreq_new(env.ctx, s->node, s->la, &s->lr))) {
			fail(s, "cannot set up the link application");
			ret = BENCH_FAIL;
			goto out;
		}
	} else {
		rnsc_node_set_hooks(s->node, &hooks);
	}
	rnsc_loop *loop = rnsc_node_loop(s->node);
	if (rnsc_loop_watch_add(loop, 0, RNSC_EV_READ, on_stdin, s, NULL) != 0) {
		fail(s, "cannot watch stdin");
		ret = BENCH_SETUP;
		goto out;
	}
	if (s->req) {
		bench_payload g;
		bench_payload_init(&g);
		bench_payload_take(&g, s->resp + 3, RESP_HI);
		for (int i = 0; i < REQ_LINKS; i++)
			s->rq[i].s = s;
	}
	if (s->req && s->responder &&
	    (rnsc_request_handlers_new(env.ctx, &s->hs) ||
	     rnsc_request_handlers_register(s->hs, REQ_PATH, rq_handler, s, RNSC_REQUEST_ALLOW_ALL,
					    NULL, 0, 0))) {
		fail(s, "cannot register the request handler");
		ret = BENCH_FAIL;
		goto out;
	}
	if (s->responder) {
		rnsc_identity id;
		const char *const aspects[] = {scenario};
		if (rnsc_identity_generate(env.ctx, &id) ||
		    rnsc_transport_dest_add(s->t, RNSC_DEST_SINGLE, &id, "bench", aspects, 1, 1,
					    s->dest)) {
			fail(s, "cannot register the bench destination");
			ret = BENCH_FAIL;
			goto out;
		}
		rnsc_identity_free(&id);
		if (rnsc_loop_timer_add(loop, 0, ANNOUNCE_EVERY_NS, announce_tick, s, NULL) != 0) {
			fail(s, "cannot arm the announce timer");
			ret = BENCH_FAIL;
			goto out;
		}
		char line[64] = "ready dest=";
		rnsc_hex(line + strlen(line), s->dest, RNSC_TRUNCATED_HASHLEN);
		say(line);
	} else {
		if (rnsc_unhex(s->dest, sizeof(s->dest), dest) != RNSC_TRUNCATED_HASHLEN) {
			fail(s, "bad destination hash");
			ret = BENCH_USAGE;
			goto out;
		}
		s->rtts = malloc(MAX_RTTS * sizeof(uint32_t));
		if (!s->rtts) {
			fail(s, "out of memory");
			ret = BENCH_FAIL;
			goto out;
		}
		bench_sizes_init(&s->sizes, s->req ? REQ_LO : 60,
				 s->req    ? REQ_HI
				 : s->link ? 420
					   : 380);
		bench_sizes_init(&s->rsizes, RESP_LO, RESP_HI);
		bench_payload_init(&s->stream);
		if (wait_path(s, path_timeout) != 0) {
			fail(s, "no path to the responder");
			ret = BENCH_FAIL;
			goto out;
		}
		if (s->req && open_req_links(s, path_timeout) != 0) {
			if (!s->failed)
				fail(s, "the links were not established");
			ret = BENCH_FAIL;
			goto out;
		}
		if (s->link && open_link(s, path_timeout) != 0) {
			if (!s->failed)
				fail(s, "the link was not established");
			ret = BENCH_FAIL;
			goto out;
		}
		s->phase = PH_WARMUP;
		s->phase_end_ns = rnsc_monotonic_ns() + WARMUP_NS;
		if (s->req) {
			request_tick(s);
		} else if (s->res) {
			s->phase_end_ns =
				rnsc_monotonic_ns() + (uint64_t)path_timeout * RNSC_NS_PER_S;
			start_resource(s);
		} else {
			pump(s);
		}
	}
	while (!s->quit) {
		rnsc_node_run_once(s->node, 5);
		if (!s->responder)
			initiator_tick(s);
	}
	if (s->failed)
		ret = BENCH_FAIL;
out:
	rnsc_linkapp_del(s->la);
	rnsc_linkreq_del(s->lr);
	rnsc_request_handlers_del(s->hs);
	rnsc_node_del(s->node);
	rnsc_env_close(&env);
	free(s->rtts);
	free(s->ck);
	free(s->rx_want);
	free(s);
	return ret;
}
