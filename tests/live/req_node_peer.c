/* SPDX-License-Identifier: MIT */
/*
 * A request/buffer peer on an rnsc node (rnsc_node hooks + request.h + buffer.h over the
 * engine's links), speaking the same test protocol as tests/live/req_ref_peer.py so
 * tests/live/request_interop_test.sh can pair either side with either:
 *
 *   req_node_peer serve CONFIGDIR ALLOWED_HASH N M TIMEOUT_S [STREAM_BYTES]
 *       SINGLE destination rnsclt.req accepting links, announced every 2 s until a link is
 *       up, with the handlers "/echo" (ALLOW_ALL: answers the request's data),
 *       "/allowed" (ALLOW_LIST [ALLOWED_HASH]: answers b"ok:" + data) and "/denied"
 *       (ALLOW_LIST of another identity: never called). With STREAM_BYTES, a Buffer reader
 *       on stream 1 takes the client's stream to EOF, then a writer sends STREAM_BYTES of
 *       its own on stream 2 and closes it. Exits when the link closes. Prints "dest <hash>",
 *       then "server echo=<n> allowed=<m> denied=<d> bytes=<b>" and, with a stream,
 *       "server stream rx=<bytes> sha=<hex> tx=<bytes> txsha=<hex>".
 *   req_node_peer request CONFIGDIR DEST IDFILE N M D TIMEOUT_S [STREAM_BYTES]
 *       Path, link, identify with IDFILE's identity, N requests to /echo (at most 8 pending),
 *       M to /allowed, D to /denied (3 s timeout each); with STREAM_BYTES sends that many
 *       bytes on stream 1, closes it, reads stream 2 to EOF. Prints "client echo=<ok>
 *       allowed=<ok> denied_failed=<d> bytes=<b> bad=<x>" and the stream line as the server.
 * Request i carries (i * 53) % 381 bytes, byte k = (i * 7 + k * 13) & 0xFF; stream byte k
 * is ((k * 31) ^ (k >> 7) ^ seed) & 0xFF in even 4 KiB blocks and a hash of k ^ seed in odd
 * ones (incompressible), seed 0x11 (client) / 0x22 (server), so the content hash is checked
 * at both ends. Exit status 0 only when the accounting is exact.
 * With REQ_LOSS set (a lossy interface in between): the link is opened again until it comes
 * up, requests have a 4 s timeout and a failed /echo or /allowed request is sent again until
 * answered (requests have no retransmission of their own), and the client ends with a /bye
 * request (retried) after which the server lingers 3 s and stops, since a lost LINKCLOSE
 * would leave it waiting; the server's /echo count is then at least N.
 * REQ_NONE=<k>: the server also has "/none" (ALLOW_NONE: never called, counted as denied);
 * the client sends k requests to it after the others (3 s timeout each) and prints
 * "client none=<k> none_failed=<f>": every one must fail, none be answered.
 * REQ_CANCEL=<bytes>: after the /big phase the client sends two plain resources of that
 * many bytes (beyond 1 MiB: several segments) and the server accepts them. The client
 * cancels the first itself once it has progressed (RESOURCE_ICL); the server cancels the
 * second once it has progressed (RESOURCE_RCL). Each side prints "<role> cancel icl=<0|1>
 * rcl=<0|1>": client icl=1 when its cancelled resource ended FAILED, rcl=1 when the other
 * ended REJECTED (the receiver's cancel, as the reference reports it); server icl=1 when the
 * first ended FAILED without its own cancel (the sender's ICL reached it), rcl=1 when the
 * second, cancelled by it, ended FAILED. Neither may complete.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto.h"
#include "destination.h"
#include "identity.h"
#include "link.h"
#include "linkapp.h"
#include "linkapp_request.h"
#include "linkport.h"
#include "msgpack.h"
#include "node.h"
#include "plugin_host.h"
#include "request.h"
#include "transport.h"
#ifdef REQ_PEER_BUFFER
#include "buffer.h"
#include "channel.h"
#endif

#define HL RNSC_TRUNCATED_HASHLEN

typedef struct app {
	rnsc_ctx *ctx;
	rnsc_node *n;
	rnsc_transport *t;
	int up, closed, server;
	uint8_t link_id[HL];
	rnsc_request_handlers *hs;
	rnsc_request_link *rl; /* the link's, owned by lr */
	rnsc_linkapp *la;
	rnsc_linkreq *lr;
	/* /big and /bigreq (requests and responses beyond the MDU, as resources) */
	unsigned s_big, s_bigreq, c_big, c_bigreq, c_big_bad;
	uint64_t s_bigbytes, s_bigreqbytes, c_bigbytes, c_bigreqbytes;
	/* server counts */
	unsigned s_echo, s_allowed, s_denied;
	uint64_t s_bytes, bye_at;
	int loss, open_failed;
	unsigned retries;
	/* REQ_NONE (client) and REQ_CANCEL (both) */
	unsigned c_none_failed, c_none_bad;
	uint64_t cancel_size;
	rnsc_resource *cx; /* the resource being watched for progress (borrowed) */
	int cx_progressed, cx_done, cx_status, cx_cancelled;
	unsigned s_incoming; /* server: plain resources accepted */
	int s_icl, s_rcl;
	/* client counts */
	unsigned c_echo, c_allowed, c_denied_failed, c_bad, c_done, c_pending;
	uint64_t c_bytes;
#ifdef REQ_PEER_BUFFER
	rnsc_channel *ch;
	rnsc_buffer_reader *rd;
	rnsc_buffer_writer *wr;
	rnsc_hash rx_hash;
	uint64_t rx_bytes;
	int rx_eof;
#endif
} app;

static size_t req_data(unsigned i, uint8_t *out)
{
	size_t n = (i * 53) % 381;
	for (size_t k = 0; k < n; k++)
		out[k] = (uint8_t)((i * 7 + k * 13) & 0xFF);
	return n;
}

static inline uint8_t stream_byte(uint64_t k, unsigned seed)
{
	if ((k >> 12) & 1) { /* every other 4 KiB block does not compress */
		uint32_t x = (uint32_t)(k * 2654435761u);
		x ^= x >> 15;
		x *= 2246822519u;
		x ^= x >> 13;
		return (uint8_t)((x ^ seed) & 0xFF);
	}
	return (uint8_t)(((k * 31) ^ (k >> 7) ^ seed) & 0xFF);
}

static void hex(char *out, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
}

static int unhex16(uint8_t out[HL], const char *s)
{
	if (strlen(s) != 2 * HL)
		return -1;
	for (int i = 0; i < HL; i++) {
		unsigned v;
		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (uint8_t)v;
	}
	return 0;
}

static uint64_t now_ms(void)
{
	return rnsc_node_now_ms();
}

/* ---- handlers (server) ----------------------------------------------------------------------- */

static uint8_t g_resp[1024];

static int h_echo(void *ud, const rnsc_request_info *req, const uint8_t **resp, size_t *len)
{
	app *a = ud;
	a->s_echo++;
	rnsc_mp_reader r;
	const uint8_t *p;
	size_t n;
	rnsc_mp_reader_init(&r, req->data, req->data_len);
	if (rnsc_mp_read_bin(&r, &p, &n) == 0)
		a->s_bytes += n;
	*resp = req->data;
	*len = req->data_len;
	return 1;
}

static int h_allowed(void *ud, const rnsc_request_info *req, const uint8_t **resp, size_t *len)
{
	app *a = ud;
	a->s_allowed++;
	rnsc_mp_reader r;
	rnsc_mp_reader_init(&r, req->data, req->data_len);
	const uint8_t *p;
	size_t n;
	if (rnsc_mp_read_bin(&r, &p, &n) || n + 3 > 512)
		return 0;
	uint8_t tmp[520];
	memcpy(tmp, "ok:", 3);
	memcpy(tmp + 3, p, n);
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, g_resp, sizeof(g_resp));
	rnsc_mp_write_bin(&w, tmp, n + 3);
	int l = rnsc_mp_writer_finish(&w);
	if (l < 0)
		return l;
	*resp = g_resp;
	*len = (size_t)l;
	return 1;
}

/* /big: the request's data is a size; the response that many pattern bytes (big_byte). */
static inline uint8_t big_byte(uint64_t k)
{
	return (uint8_t)(((uint32_t)(k * 2654435761u) >> 13) & 0xFF);
}

static uint8_t *g_big;

static int h_big(void *ud, const rnsc_request_info *req, const uint8_t **resp, size_t *len)
{
	app *a = ud;
	rnsc_mp_reader r;
	uint64_t n;
	rnsc_mp_reader_init(&r, req->data, req->data_len);
	if (rnsc_mp_read_uint(&r, &n) || n > 4u * 1024u * 1024u)
		return 0;
	free(g_big);
	size_t cap = (size_t)n + 16;
	if (!(g_big = malloc(cap)))
		return RNSC_ERR_NOMEM;
	uint8_t *tmp = malloc((size_t)n + 1);
	if (!tmp)
		return RNSC_ERR_NOMEM;
	for (uint64_t k = 0; k < n; k++)
		tmp[k] = big_byte(k);
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, g_big, cap);
	rnsc_mp_write_bin(&w, tmp, (size_t)n);
	free(tmp);
	int l = rnsc_mp_writer_finish(&w);
	if (l < 0)
		return l;
	a->s_big++;
	a->s_bigbytes += n;
	*resp = g_big;
	*len = (size_t)l;
	return 1;
}

/* /bigreq: the request's data is a bin (beyond the MDU); the response its SHA-256. */
static uint8_t g_sha_resp[40];

static int h_bigreq(void *ud, const rnsc_request_info *req, const uint8_t **resp, size_t *len)
{
	app *a = ud;
	rnsc_mp_reader r;
	const uint8_t *p;
	size_t n;
	uint8_t sha[32];
	rnsc_mp_reader_init(&r, req->data, req->data_len);
	if (rnsc_mp_read_bin(&r, &p, &n) || rnsc_sha256(a->ctx, sha, p, n))
		return 0;
	a->s_bigreq++;
	a->s_bigreqbytes += n;
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, g_sha_resp, sizeof(g_sha_resp));
	rnsc_mp_write_bin(&w, sha, 32);
	int l = rnsc_mp_writer_finish(&w);
	if (l < 0)
		return l;
	*resp = g_sha_resp;
	*len = (size_t)l;
	return 1;
}

static int h_bye(void *ud, const rnsc_request_info *req, const uint8_t **resp, size_t *len)
{
	(void)req;
	app *a = ud;
	if (!a->bye_at)
		a->bye_at = now_ms();
	static const uint8_t yes = 0xc3;
	*resp = &yes;
	*len = 1;
	return 1;
}

/* /none is ALLOW_NONE: the request manager never calls it; a call counts as denied. */
static int h_denied(void *ud, const rnsc_request_info *req, const uint8_t **resp, size_t *len)
{
	(void)req, (void)resp, (void)len;
	((app *)ud)->s_denied++;
	return 0;
}

/* ---- requester callbacks (client) -------------------------------------------------------------- */

typedef struct reqctx {
	app *a;
	int kind; /* 0 echo, 1 allowed, 2 denied, 3 bye */
	unsigned i;
	int resend, done;
} reqctx;

static void on_response(void *ud, const rnsc_request_receipt *r)
{
	reqctx *q = ud;
	app *a = q->a;
	a->c_done++;
	a->c_pending--;
	q->done = 1;
	if (q->kind == 3)
		return;
	uint8_t want[520];
	size_t wl = req_data(q->i, want + 3);
	memcpy(want, "ok:", 3);
	const uint8_t *exp = q->kind == 1 ? want : want + 3;
	size_t el = q->kind == 1 ? wl + 3 : wl;
	rnsc_mp_reader rd;
	rnsc_mp_reader_init(&rd, r->response, r->response_len);
	const uint8_t *p;
	size_t n;
	if (q->kind == 2 || rnsc_mp_read_bin(&rd, &p, &n) || n != el || memcmp(p, exp, n) != 0) {
		a->c_bad++;
		return;
	}
	if (q->kind == 0) {
		a->c_echo++;
		a->c_bytes += n;
	} else {
		a->c_allowed++;
	}
}

static void on_failed(void *ud, const rnsc_request_receipt *r)
{
	(void)r;
	reqctx *q = ud;
	q->a->c_pending--;
	if (q->a->loss && q->kind != 2) {
		q->resend = 1; /* lost on the way: asked again */
		q->a->retries++;
		return;
	}
	q->a->c_done++;
	q->done = 1;
	if (q->kind == 2)
		q->a->c_denied_failed++;
	else
		q->a->c_bad++;
}

/* ---- the stream ---------------------------------------------------------------------------- */

#ifdef REQ_PEER_BUFFER
static void on_ready(void *ud, rnsc_buffer_reader *rd, size_t ready)
{
	(void)ready;
	app *a = ud;
	uint8_t buf[4096];
	for (;;) {
		int n = rnsc_buffer_reader_read(rd, buf, sizeof(buf));
		if (n <= 0)
			break;
		(void)rnsc_hash_update(&a->rx_hash, buf, (size_t)n);
		a->rx_bytes += (uint64_t)n;
	}
	if (rnsc_buffer_reader_eof(rd))
		a->rx_eof = 1;
}

/* Writes `total` bytes of the pattern on the writer, driving the node while the channel's
 * window is full; then closes the stream (EOF). Fills sha with the content hash. */
static int stream_out(app *a, uint64_t total, unsigned seed, uint8_t sha[32], uint64_t end_ms)
{
	rnsc_hash h;
	if (rnsc_hash_init(a->ctx, &h, RNSC_HASH_SHA256))
		return -1;
	uint64_t off = 0;
	uint8_t buf[16384];
	while (off < total && !a->closed && now_ms() < end_ms) {
		size_t n = total - off < sizeof(buf) ? (size_t)(total - off) : sizeof(buf);
		for (size_t k = 0; k < n; k++)
			buf[k] = stream_byte(off + k, seed);
		int w = rnsc_buffer_writer_write(a->wr, buf, n, now_ms());
		if (w < 0) {
			fprintf(stderr, "stream write: %s\n", rnsc_strerror(w));
			rnsc_hash_abort(&h);
			return -1;
		}
		if (w > 0) {
			(void)rnsc_hash_update(&h, buf, (size_t)w);
			off += (uint64_t)w;
		}
		rnsc_node_flush(a->n);
		if (w == 0 || !rnsc_channel_ready(a->ch)) {
			(void)rnsc_channel_tick(a->ch, now_ms());
			rnsc_node_run_once(a->n, 5);
		}
	}
	while (!a->closed && now_ms() < end_ms) {
		int rc = rnsc_buffer_writer_close(a->wr, now_ms());
		rnsc_node_flush(a->n);
		if (rc == 0)
			break;
		(void)rnsc_channel_tick(a->ch, now_ms());
		rnsc_node_run_once(a->n, 5);
	}
	rnsc_hash_final(&h, sha);
	return off == total ? 0 : -1;
}

static int chan_open(app *a)
{
	rnsc_linkport port;
	rnsc_linkport_on_transport(&port, a->t, a->link_id);
	if (rnsc_channel_new_port(&a->ch, a->ctx, &port) ||
	    rnsc_channel_set_rx_span(a->ch, 250) || /* a reference sender may run ahead */
	    rnsc_hash_init(a->ctx, &a->rx_hash, RNSC_HASH_SHA256))
		return -1;
	unsigned rx_id = a->server ? 1 : 2, tx_id = a->server ? 2 : 1;
	if (rnsc_buffer_reader_new(&a->rd, a->ch, rx_id, on_ready, a) ||
	    rnsc_buffer_writer_new(&a->wr, a->ch, tx_id))
		return -1;
	return 0;
}
#endif

/* ---- node hooks ---------------------------------------------------------------------------- */

static void on_est(void *ud, const uint8_t *lid, const uint8_t *dest, int initiator)
{
	(void)dest, (void)initiator;
	app *a = ud;
	if (a->up)
		return;
	a->up = 1;
	memcpy(a->link_id, lid, HL);
	if (rnsc_linkreq_attach(a->lr, lid, a->hs, &a->rl))
		fprintf(stderr, "request link: out of memory\n");
#ifdef REQ_PEER_BUFFER
	if (getenv("REQ_PEER_STREAM") && chan_open(a))
		fprintf(stderr, "channel/buffer set-up failed\n");
#endif
	if (a->server) {
		const rnsc_link *l = rnsc_transport_link_get(a->t, lid);
		printf("server link up mtu=%u\n", l ? (unsigned)rnsc_link_mtu(l) : 0);
		fflush(stdout);
	}
}

static void on_closed(void *ud, const uint8_t *lid, int reason)
{
	(void)reason;
	app *a = ud;
	if (a->up && memcmp(lid, a->link_id, HL) == 0)
		a->closed = 1;
	else if (!a->up)
		a->open_failed = 1;
}

static void on_packet(void *ud, const uint8_t *lid, int type, int context, const uint8_t *data,
		      size_t len, const uint8_t *hash)
{
	(void)type;
	app *a = ud;
	if (!a->up || memcmp(lid, a->link_id, HL) != 0)
		return;
	(void)hash; /* requests and responses reach the request link through linkreq */
#ifdef REQ_PEER_BUFFER
	if (context == RNSC_CTX_CHANNEL && a->ch) {
		int rc = rnsc_channel_receive(a->ch, data, len, now_ms());
		if (rc && getenv("PEER_DEBUG"))
			fprintf(stderr, "channel receive (seq %u, next %u): %s\n",
				len >= 4 ? (unsigned)(data[2] << 8 | data[3]) : 0,
				rnsc_channel_next_rx_sequence(a->ch), rnsc_strerror(rc));
	}
#endif
}

static void on_proof(void *ud, const uint8_t *lid, const uint8_t *ph)
{
	app *a = ud;
	(void)a, (void)lid, (void)ph;
#ifdef REQ_PEER_BUFFER
	if (a->ch && a->up && memcmp(lid, a->link_id, HL) == 0)
		(void)rnsc_channel_delivered(a->ch, ph, now_ms());
#endif
}

/* One loop turn: the node, then the request and channel timers. */
static void turn(app *a, int ms)
{
	rnsc_node_run_once(a->n, ms);
	(void)rnsc_linkreq_tick(a->lr, now_ms());
#ifdef REQ_PEER_BUFFER
	if (a->ch && !a->closed)
		(void)rnsc_channel_tick(a->ch, now_ms());
#endif
	rnsc_node_flush(a->n);
}

static void app_free(app *a)
{
	a->rl = NULL; /* owned by a->lr */
#ifdef REQ_PEER_BUFFER
	rnsc_buffer_reader_del(a->rd);
	rnsc_buffer_writer_del(a->wr);
	rnsc_channel_del(a->ch);
	a->rd = NULL;
	a->wr = NULL;
	a->ch = NULL;
#endif
}

/* ---- /big and /bigreq (client) ------------------------------------------------------------------ */

typedef struct bigctx {
	app *a;
	int done, ok;
	uint64_t size; /* /big: the size asked; /bigreq: the bytes sent */
	uint8_t sha[32];
	int kind; /* 0 /big, 1 /bigreq */
	double progress;
} bigctx;

static void big_response(void *ud, const rnsc_request_receipt *r)
{
	bigctx *b = ud;
	b->done = 1;
	rnsc_mp_reader rd;
	const uint8_t *p;
	size_t n;
	rnsc_mp_reader_init(&rd, r->response, r->response_len);
	if (rnsc_mp_read_bin(&rd, &p, &n))
		return;
	if (b->kind == 1) {
		b->ok = n == 32 && memcmp(p, b->sha, 32) == 0;
		return;
	}
	if (n != b->size)
		return;
	for (size_t k = 0; k < n; k++)
		if (p[k] != big_byte(k))
			return;
	b->ok = 1;
}

static void big_failed(void *ud, const rnsc_request_receipt *r)
{
	(void)r;
	((bigctx *)ud)->done = 1;
}

static void big_progress(void *ud, const rnsc_request_receipt *r)
{
	((bigctx *)ud)->progress = r->progress;
}

/* REQ_BIG="s1 s2 ..." asks /big for responses of these sizes, REQ_BIGREQ="l1 ..." sends
 * /bigreq requests of these sizes; one at a time. 1 when every one came back right. */
static int big_phase(app *a, uint64_t end)
{
	int ok = 1;
	for (int kind = 0; kind < 2; kind++) {
		const char *list = getenv(kind ? "REQ_BIGREQ" : "REQ_BIG");
		if (!list)
			continue;
		char *dup = strdup(list), *save = NULL;
		for (char *tok = strtok_r(dup, " ,", &save); tok && !a->closed;
		     tok = strtok_r(NULL, " ,", &save)) {
			bigctx b = {.a = a, .kind = kind, .size = strtoull(tok, NULL, 10)};
			size_t cap = (size_t)b.size + 16;
			uint8_t *mp = malloc(cap), *raw = malloc((size_t)b.size + 1);
			if (!mp || !raw) {
				free(mp), free(raw);
				ok = 0;
				break;
			}
			rnsc_mp_writer w;
			rnsc_mp_writer_init(&w, mp, cap);
			if (kind) {
				for (uint64_t k = 0; k < b.size; k++)
					raw[k] = (uint8_t)(big_byte(k) ^ 0x5A);
				(void)rnsc_sha256(a->ctx, b.sha, raw, (size_t)b.size);
				rnsc_mp_write_bin(&w, raw, (size_t)b.size);
			} else {
				rnsc_mp_write_uint(&w, b.size);
			}
			int ml = rnsc_mp_writer_finish(&w);
			rnsc_request_params p = {.response = big_response,
						 .failed = big_failed,
						 .progress = big_progress,
						 .ud = &b};
			int rc =
				ml < 0 ? ml
				       : rnsc_request_link_send(a->rl, kind ? "/bigreq" : "/big",
								mp, (size_t)ml, &p, NULL, now_ms());
			free(raw);
			free(mp);
			if (rc) {
				fprintf(stderr, "req_node_peer: big request: %s\n",
					rnsc_strerror(rc));
				ok = 0;
				break;
			}
			rnsc_node_flush(a->n);
			while (!b.done && !a->closed && now_ms() < end)
				turn(a, 20);
			if (b.ok && kind) {
				a->c_bigreq++;
				a->c_bigreqbytes += b.size;
			} else if (b.ok) {
				a->c_big++;
				a->c_bigbytes += b.size;
			} else {
				a->c_big_bad++;
				ok = 0;
				fprintf(stderr, "big request %s %llu: %s (progress %.2f)\n",
					kind ? "/bigreq" : "/big", (unsigned long long)b.size,
					b.done ? "wrong or failed" : "no answer", b.progress);
			}
		}
		free(dup);
	}
	return ok;
}

/* ---- REQ_NONE: requests to an ALLOW_NONE path (client) -------------------------------------- */

typedef struct nonectx {
	int done, answered;
} nonectx;

static nonectx g_none[64]; /* static: a receipt still pending at the end keeps a valid ud */

static void none_response(void *ud, const rnsc_request_receipt *r)
{
	(void)r;
	((nonectx *)ud)->done = ((nonectx *)ud)->answered = 1;
}

static void none_failed(void *ud, const rnsc_request_receipt *r)
{
	(void)r;
	((nonectx *)ud)->done = 1;
}

/* k requests to /none (3 s timeout each); 1 when every one failed unanswered. */
static int none_phase(app *a, unsigned k, uint64_t end)
{
	if (k > sizeof(g_none) / sizeof(g_none[0]))
		k = sizeof(g_none) / sizeof(g_none[0]);
	unsigned sent = 0;
	for (unsigned i = 0; i < k && !a->closed; i++) {
		uint8_t mp[16];
		rnsc_mp_writer w;
		rnsc_mp_writer_init(&w, mp, sizeof(mp));
		rnsc_mp_write_uint(&w, i);
		int ml = rnsc_mp_writer_finish(&w);
		rnsc_request_params p = {.response = none_response,
					 .failed = none_failed,
					 .ud = &g_none[i],
					 .timeout_ms = 3000};
		if (ml < 0 ||
		    rnsc_request_link_send(a->rl, "/none", mp, (size_t)ml, &p, NULL, now_ms()))
			break;
		sent++;
	}
	rnsc_node_flush(a->n);
	for (;;) {
		unsigned done = 0;
		for (unsigned i = 0; i < sent; i++)
			done += (unsigned)g_none[i].done;
		if (done == sent || a->closed || now_ms() >= end)
			break;
		turn(a, 20);
	}
	for (unsigned i = 0; i < sent; i++) {
		if (g_none[i].answered)
			a->c_none_bad++;
		else if (g_none[i].done)
			a->c_none_failed++;
	}
	printf("client none=%u none_failed=%u\n", sent, a->c_none_failed);
	return sent == k && a->c_none_failed == k && a->c_none_bad == 0;
}

/* ---- REQ_CANCEL: plain resources cancelled by their sender and by their receiver ----------- */

static int cx_read(void *ud, uint64_t off, uint8_t *buf, size_t len)
{
	(void)ud;
	for (size_t k = 0; k < len; k++)
		buf[k] = big_byte(off + k);
	return (int)len;
}

static int cx_sink(void *ud, const uint8_t *p, size_t len)
{
	(void)ud, (void)p, (void)len;
	return 0;
}

/* Progress (either role): marks the watched resource as having moved; the loop cancels it
 * after the call returns (a resource is not cancelled from inside its own callback). */
static void cx_progress(void *ud, rnsc_resource *r)
{
	app *a = ud;
	if (a->server)
		a->cx = r;
	if (r == a->cx && rnsc_resource_progress(r) > 0)
		a->cx_progressed = 1;
}

static void cx_concluded(void *ud, rnsc_resource *r)
{
	app *a = ud;
	int st = rnsc_resource_status(r);
	if (a->server) { /* the first: cancelled by the sender; the second: by us */
		if (a->s_incoming == 1)
			a->s_icl = st == RNSC_RESOURCE_FAILED && !a->cx_cancelled;
		else if (a->s_incoming == 2)
			a->s_rcl = st == RNSC_RESOURCE_FAILED && a->cx_cancelled;
	}
	if (a->server || r == a->cx) {
		a->cx_done = 1;
		a->cx_status = st;
		a->cx = NULL;
	}
}

static int srv_advertised(void *ud, const uint8_t *lid, const rnsc_resource_adv *adv,
			  rnsc_resource_callbacks *cb, void **cb_ud)
{
	(void)lid, (void)adv;
	app *a = ud;
	a->s_incoming++;
	a->cx = NULL;
	a->cx_progressed = a->cx_cancelled = a->cx_done = 0;
	cb->write = cx_sink;
	cb->progress = cx_progress;
	cb->concluded = cx_concluded;
	*cb_ud = a;
	return 1;
}

/* The server's part: cancels the second incoming resource once it has moved. */
static void srv_cancel_check(app *a)
{
	if (a->server && a->s_incoming == 2 && a->cx && a->cx_progressed && !a->cx_cancelled) {
		a->cx_cancelled = 1;
		fprintf(stderr, "server cancels the incoming resource at progress %.3f\n",
			rnsc_resource_progress(a->cx));
		rnsc_linkapp_cancel_resource(a->la, a->cx);
		rnsc_node_flush(a->n);
	}
}

/* The client's part: sends the first resource and cancels it once it has moved, then sends
 * the second and waits for its end. 1 when icl and rcl both hold (see the top). */
static int cancel_phase(app *a, uint64_t end)
{
	rnsc_resource_callbacks cb = {
		.read = cx_read, .progress = cx_progress, .concluded = cx_concluded};
	rnsc_resource_params p = {.size = a->cancel_size};
	int icl = 0, rcl = 0;
	for (int round = 0; round < 2 && !a->closed; round++) {
		a->cx = NULL;
		a->cx_progressed = a->cx_done = a->cx_cancelled = a->cx_status = 0;
		int rc = rnsc_linkapp_send_resource(a->la, a->link_id, &cb, a, &p, &a->cx);
		if (rc) {
			fprintf(stderr, "req_node_peer: cancel resource: %s\n", rnsc_strerror(rc));
			break;
		}
		rnsc_node_flush(a->n);
		while (!a->cx_done && !a->closed && now_ms() < end) {
			turn(a, 5);
			if (round == 0 && a->cx && a->cx_progressed && !a->cx_cancelled) {
				a->cx_cancelled = 1;
				fprintf(stderr, "client cancels its resource at progress %.3f\n",
					rnsc_resource_progress(a->cx));
				rnsc_linkapp_cancel_resource(a->la, a->cx);
				rnsc_node_flush(a->n);
			}
		}
		if (round == 0)
			icl = a->cx_done && a->cx_cancelled && a->cx_status == RNSC_RESOURCE_FAILED;
		else
			rcl = a->cx_done && a->cx_status == RNSC_RESOURCE_REJECTED;
		if (!a->cx_done)
			fprintf(stderr, "req_node_peer: cancel round %d did not conclude\n", round);
	}
	printf("client cancel icl=%d rcl=%d\n", icl, rcl);
	return icl && rcl;
}

int main(int argc, char **argv)
{
	int serve = (argc == 7 || argc == 8) && strcmp(argv[1], "serve") == 0;
	int request = (argc == 9 || argc == 10) && strcmp(argv[1], "request") == 0;
	if (!serve && !request) {
		fprintf(stderr, "usage: req_node_peer serve DIR ALLOWED N M T [SB] | "
				"request DIR DEST IDFILE N M D T [SB]\n");
		return 2;
	}
	uint64_t stream_bytes = 0;
	if (serve && argc == 8)
		stream_bytes = strtoull(argv[7], NULL, 10);
	if (request && argc == 10)
		stream_bytes = strtoull(argv[9], NULL, 10);
	if (stream_bytes)
		setenv("REQ_PEER_STREAM", "1", 1);
#ifndef REQ_PEER_BUFFER
	if (stream_bytes) {
		fprintf(stderr, "req_node_peer: built without the Buffer\n");
		return 2;
	}
#endif
	uint64_t end = now_ms() + 1000 * (uint64_t)atoi(argv[serve ? 6 : 8]);
	app a = {0};
	a.server = serve;
	a.loss = getenv("REQ_LOSS") != NULL;
	rnsc_plugin_host *h;
	if (rnsc_ctx_new(&a.ctx) || rnsc_plugin_host_new(a.ctx, &h) ||
	    rnsc_plugin_host_add_default_dirs(h))
		return 1;
	rnsc_plugin_host_scan(h);
	if (rnsc_crypto_set_order(a.ctx, "openssl") != 0) {
		fprintf(stderr, "req_node_peer: the openssl plugin did not load\n");
		return 1;
	}
	rnsc_ctx_set_log_level(a.ctx, getenv("PEER_DEBUG") ? RNSC_LOG_DEBUG : RNSC_LOG_WARNING);
	rnsc_node_options no = {.config_dir = argv[2], .handle_signals = 1};
	rnsc_config_error err;
	int rc = rnsc_node_new(a.ctx, h, &no, &a.n, &err);
	if (rc) {
		fprintf(stderr, "req_node_peer: %s\n", err.msg[0] ? err.msg : rnsc_strerror(rc));
		return 1;
	}
	a.t = rnsc_node_transport(a.n);
	rnsc_node_hooks hooks = {.ud = &a,
				 .on_link_established = on_est,
				 .on_link_closed = on_closed,
				 .on_link_proof = on_proof,
				 .on_link_packet = on_packet};
	const char *cx_env = getenv("REQ_CANCEL");
	a.cancel_size = cx_env ? strtoull(cx_env, NULL, 10) : 0;
	rnsc_linkapp_callbacks lacb = {.ud = &a, .resource_advertised = srv_advertised};
	if (rnsc_linkapp_new(a.ctx, a.n, serve && a.cancel_size ? &lacb : NULL, &hooks, &a.la) ||
	    rnsc_linkreq_new(a.ctx, a.n, a.la, &a.lr)) {
		fprintf(stderr, "req_node_peer: linkapp set-up failed\n");
		return 1;
	}
	int ret = 1, ret_cancel_bad = 0;
	char hx[65];
	if (serve) {
		uint8_t allowed[1][HL], other[1][HL];
		memset(other, 0x5A, sizeof(other));
		if (unhex16(allowed[0], argv[3]) || rnsc_request_handlers_new(a.ctx, &a.hs) ||
		    rnsc_request_handlers_register(a.hs, "/echo", h_echo, &a,
						   RNSC_REQUEST_ALLOW_ALL, NULL, 0, 1) ||
		    rnsc_request_handlers_register(a.hs, "/allowed", h_allowed, &a,
						   RNSC_REQUEST_ALLOW_LIST,
						   (const uint8_t(*)[HL])allowed, 1, 1) ||
		    rnsc_request_handlers_register(a.hs, "/denied", h_denied, &a,
						   RNSC_REQUEST_ALLOW_LIST,
						   (const uint8_t(*)[HL])other, 1, 1) ||
		    rnsc_request_handlers_register(a.hs, "/none", h_denied, &a,
						   RNSC_REQUEST_ALLOW_NONE, NULL, 0, 1) ||
		    rnsc_request_handlers_register(a.hs, "/bye", h_bye, &a, RNSC_REQUEST_ALLOW_ALL,
						   NULL, 0, 1) ||
		    rnsc_request_handlers_register(a.hs, "/big", h_big, &a, RNSC_REQUEST_ALLOW_ALL,
						   NULL, 0, 1) ||
		    rnsc_request_handlers_register(a.hs, "/bigreq", h_bigreq, &a,
						   RNSC_REQUEST_ALLOW_ALL, NULL, 0, 1)) {
			fprintf(stderr, "req_node_peer: handler set-up failed\n");
			goto out;
		}
		rnsc_identity id;
		uint8_t dest[HL];
		static const char *const asp[] = {"req"};
		if (rnsc_identity_generate(a.ctx, &id) ||
		    rnsc_transport_dest_add(a.t, RNSC_DEST_SINGLE, &id, "rnsclt", asp, 1, 1,
					    dest)) {
			fprintf(stderr, "req_node_peer: cannot register the destination\n");
			goto out;
		}
		rnsc_identity_free(&id);
		hex(hx, dest, HL);
		printf("dest %s\n", hx);
		fflush(stdout);
		uint64_t next_announce = 0;
		unsigned N = (unsigned)atoi(argv[4]), M = (unsigned)atoi(argv[5]);
#ifdef REQ_PEER_BUFFER
		int streamed = 0;
		uint8_t txsha[32] = {0};
#endif
		while (now_ms() < end && !a.closed && !rnsc_node_stopping(a.n) &&
		       !(a.bye_at && now_ms() > a.bye_at + 3000)) {
			if (!a.up && now_ms() >= next_announce) {
				(void)rnsc_transport_announce(a.t, dest, NULL, 0, now_ms());
				next_announce = now_ms() + 2000;
			}
#ifdef REQ_PEER_BUFFER
			if (stream_bytes && a.rd && a.rx_eof && !streamed) {
				streamed = 1;
				if (stream_out(&a, stream_bytes, 0x22, txsha, end))
					fprintf(stderr, "server stream out failed\n");
			}
#endif
			turn(&a, a.cancel_size ? 5 : 50);
			srv_cancel_check(&a);
		}
		printf("server echo=%u allowed=%u denied=%u bytes=%llu\n", a.s_echo, a.s_allowed,
		       a.s_denied, (unsigned long long)a.s_bytes);
		printf("server big=%u bigbytes=%llu bigreq=%u bigreqbytes=%llu\n", a.s_big,
		       (unsigned long long)a.s_bigbytes, a.s_bigreq,
		       (unsigned long long)a.s_bigreqbytes);
		if (a.cancel_size) {
			printf("server cancel icl=%d rcl=%d\n", a.s_icl, a.s_rcl);
			if (!a.s_icl || !a.s_rcl)
				ret_cancel_bad = 1;
		}
		ret = (a.closed || a.bye_at) && (a.loss ? a.s_echo >= N : a.s_echo == N) &&
				      a.s_allowed == M && a.s_denied == 0
			      ? ret_cancel_bad
			      : 1;
#ifdef REQ_PEER_BUFFER
		if (stream_bytes) {
			uint8_t sha[32] = {0};
			char th[65];
			if (a.rd)
				rnsc_hash_final(&a.rx_hash, sha);
			hex(hx, sha, 32);
			hex(th, txsha, 32);
			if (getenv("PEER_DEBUG") && a.ch)
				fprintf(stderr,
					"channel: outstanding %zu held %zu window %u next %u rx %u shut %d\n",
					rnsc_channel_outstanding(a.ch), rnsc_channel_held(a.ch),
					rnsc_channel_window(a.ch), rnsc_channel_next_sequence(a.ch),
					rnsc_channel_next_rx_sequence(a.ch),
					rnsc_channel_is_shut_down(a.ch));
			printf("server stream rx=%llu sha=%s tx=%llu txsha=%s\n",
			       (unsigned long long)a.rx_bytes, hx,
			       (unsigned long long)(streamed ? stream_bytes : 0), th);
			if (!a.rx_eof || !streamed)
				ret = 1;
		}
#endif
		goto out;
	}
	uint8_t dest[HL];
	rnsc_identity me;
	if (unhex16(dest, argv[3]) || rnsc_identity_load_file(a.ctx, &me, argv[4])) {
		fprintf(stderr, "req_node_peer: bad destination or identity file\n");
		goto out;
	}
	unsigned N = (unsigned)atoi(argv[5]), M = (unsigned)atoi(argv[6]),
		 D = (unsigned)atoi(argv[7]);
	uint64_t next_req = 0;
	while (!rnsc_transport_has_path(a.t, dest) ||
	       rnsc_transport_recall(a.t, dest, NULL, NULL, NULL)) {
		if (now_ms() >= end || rnsc_node_stopping(a.n)) {
			printf("client: no path\n");
			goto out_id;
		}
		if (now_ms() >= next_req) {
			(void)rnsc_transport_request_path(a.t, dest, 0, 0, now_ms());
			rnsc_node_flush(a.n);
			next_req = now_ms() + 3000;
		}
		rnsc_node_run_once(a.n, 50);
	}
	uint8_t lid[HL];
	while (!a.up && now_ms() < end) {
		a.open_failed = 0;
		if ((rc = rnsc_transport_link_open(a.t, dest, lid, now_ms()))) {
			fprintf(stderr, "req_node_peer: link open: %s\n", rnsc_strerror(rc));
			goto out_id;
		}
		rnsc_node_flush(a.n);
		while (!a.up && !a.open_failed && now_ms() < end)
			rnsc_node_run_once(a.n, 50);
	}
	if (!a.up) {
		printf("client: link not established\n");
		goto out_id;
	}
	if ((rc = rnsc_transport_link_identify(a.t, lid, &me, now_ms()))) {
		fprintf(stderr, "req_node_peer: identify: %s\n", rnsc_strerror(rc));
		goto out_id;
	}
	rnsc_node_flush(a.n);
	unsigned total = N + M + D;
	reqctx *qs = calloc(total + 1, sizeof(*qs));
	if (!qs)
		goto out_id;
	unsigned sent = 0;
	static const char *const paths[] = {"/echo", "/allowed", "/denied", "/bye"};
	for (;;) {
		if (a.closed || now_ms() >= end)
			break;
		if (a.c_pending >= 8) {
			turn(&a, 10);
			continue;
		}
		reqctx *q = NULL;
		for (unsigned k = 0; k < sent && !q; k++)
			if (qs[k].resend)
				q = &qs[k];
		if (!q && sent < total) {
			q = &qs[sent++];
			q->a = &a;
			q->i = sent - 1;
			q->kind = q->i < N ? 0 : q->i < N + M ? 1 : 2;
		}
		if (!q) {
			if (a.c_done >= total)
				break;
			turn(&a, 20);
			continue;
		}
		q->resend = 0;
		uint8_t raw[400], mp[420];
		size_t n = req_data(q->i, raw);
		rnsc_mp_writer w;
		rnsc_mp_writer_init(&w, mp, sizeof(mp));
		rnsc_mp_write_bin(&w, raw, n);
		int ml = rnsc_mp_writer_finish(&w);
		rnsc_request_params p = {.response = on_response, .failed = on_failed, .ud = q};
		if (q->kind == 2)
			p.timeout_ms = 3000;
		else if (a.loss)
			p.timeout_ms = 4000;
		rc = ml < 0 ? ml
			    : rnsc_request_link_send(a.rl, paths[q->kind], mp, (size_t)ml, &p, NULL,
						     now_ms());
		if (rc) {
			fprintf(stderr, "req_node_peer: request: %s\n", rnsc_strerror(rc));
			break;
		}
		a.c_pending++;
		rnsc_node_flush(a.n);
		turn(&a, 0);
	}
	const char *none_env = getenv("REQ_NONE");
	int none_ok =
		none_env && atoi(none_env) > 0 ? none_phase(&a, (unsigned)atoi(none_env), end) : 1;
	int big_ok = big_phase(&a, end) && none_ok;
	if (a.cancel_size && !a.closed)
		big_ok = cancel_phase(&a, end) && big_ok;
	int stream_ok = 1;
#ifdef REQ_PEER_BUFFER
	if (stream_bytes) {
		uint8_t txsha[32] = {0}, sha[32];
		char th[65];
		stream_ok = a.rd && a.wr && stream_out(&a, stream_bytes, 0x11, txsha, end) == 0;
		while (!a.rx_eof && !a.closed && now_ms() < end)
			turn(&a, 20);
		stream_ok = stream_ok && a.rx_eof;
		rnsc_hash_final(&a.rx_hash, sha);
		hex(hx, sha, 32);
		hex(th, txsha, 32);
		if (getenv("PEER_DEBUG"))
			fprintf(stderr,
				"channel: outstanding %zu held %zu window %u next %u rx %u shut %d\n",
				rnsc_channel_outstanding(a.ch), rnsc_channel_held(a.ch),
				rnsc_channel_window(a.ch), rnsc_channel_next_sequence(a.ch),
				rnsc_channel_next_rx_sequence(a.ch),
				rnsc_channel_is_shut_down(a.ch));
		printf("client stream rx=%llu sha=%s tx=%llu txsha=%s\n",
		       (unsigned long long)a.rx_bytes, hx, (unsigned long long)stream_bytes, th);
		/* let the last proofs come back before closing */
		for (int i = 0; i < 40 && rnsc_channel_outstanding(a.ch) && !a.closed; i++)
			turn(&a, 25);
	}
#endif
	if (a.loss) { /* /bye, asked again until answered (at most 5 times) */
		reqctx *q = &qs[total];
		q->a = &a;
		q->kind = 3;
		for (int k = 0; k < 5 && !q->done && !a.closed && now_ms() < end; k++) {
			rnsc_request_params p = {.response = on_response,
						 .failed = on_failed,
						 .ud = q,
						 .timeout_ms = 3000};
			q->resend = 0;
			if (rnsc_request_link_send(a.rl, "/bye", NULL, 0, &p, NULL, now_ms()))
				break;
			a.c_pending++;
			rnsc_node_flush(a.n);
			while (!q->done && !q->resend && !a.closed && now_ms() < end)
				turn(&a, 20);
		}
	}
	printf("client echo=%u allowed=%u denied_failed=%u bytes=%llu bad=%u retries=%u\n",
	       a.c_echo, a.c_allowed, a.c_denied_failed, (unsigned long long)a.c_bytes, a.c_bad,
	       a.retries);
	printf("client big=%u bigbytes=%llu bigreq=%u bigreqbytes=%llu bigbad=%u\n", a.c_big,
	       (unsigned long long)a.c_bigbytes, a.c_bigreq, (unsigned long long)a.c_bigreqbytes,
	       a.c_big_bad);
	ret = big_ok && stream_ok && sent == total && a.c_echo == N && a.c_allowed == M &&
			      a.c_denied_failed == D && a.c_bad == 0
		      ? 0
		      : 1;
	app_free(&a);
	(void)rnsc_transport_link_close(a.t, lid, now_ms());
	rnsc_node_flush(a.n);
	for (int i = 0; i < 10; i++)
		rnsc_node_run_once(a.n, 50);
	free(qs);
out_id:
	rnsc_identity_free(&me);
out:
	fflush(stdout);
	app_free(&a);
	rnsc_linkapp_del(a.la);
	rnsc_linkreq_del(a.lr);
	rnsc_request_handlers_del(a.hs);
	free(g_big);
	rnsc_node_del(a.n);
	rnsc_plugin_host_del(h);
	rnsc_ctx_del(a.ctx);
	return ret;
}
