/* SPDX-License-Identifier: MIT */
/*
 * The "websocket" interface plugin: WebSocketClientInterface and
 * WebSocketServerInterface, Reticulum packets over RFC 6455, one binary message per
 * packet, on ws:// or (with `tls = yes`) wss:// using the TLS 1.3 helpers the "tls"
 * plugin uses (tls_io.c, same options: certificate/private_key, ca_file/pinned_sha256,
 * server_name). The reference (rns 1.5.4) has no WebSocket interface: rnsc extension.
 *
 * Options: as the TLS interface (listen_ip/listen_port or target_host/target_port,
 * bitrate, ifac_size, reconnect_wait, max_reconnect_tries, handshake_timeout) plus
 * `path` (the endpoint, default "/"), `tls` (yes: wss://) and `ping_interval` (seconds;
 * default 0, off: when set, a ping goes out every interval and a session that stays
 * silent for two intervals is dropped).
 *
 * Codec choice: a small own codec (ws_codec.c), not libwslay. wslay's event API reads
 * and writes through its own callbacks, keeps its own queues allocated outside the host
 * allocator, has no opening handshake, and would sit between the TLS pipe and the loop
 * as a second buffering layer; what Reticulum needs (binary messages of at most HW_MTU
 * bytes) is a few hundred lines that fit the engine's buffers directly and that
 * tests/fuzz/fuzz_ws.c fuzzes.
 *
 * Behaviour (RFC 6455):
 *  - Client: GET <path> with a fresh random Sec-WebSocket-Key; the answer must be 101
 *    with the right Sec-WebSocket-Accept. Every client frame is masked with a fresh key.
 *  - Server: a request that is not a valid upgrade gets 400/404/405/426 and the
 *    connection is closed; its bytes are counted as GARBAGE drops.
 *  - Frames: unmasked client frames (or masked server frames), reserved bits, unknown
 *    opcodes, bad control frames and fragmentation errors -> close 1002; text messages
 *    -> close 1003 (Reticulum packets are binary); a message larger than HW_MTU + IFAC
 *    size -> close 1009 (OVERSIZE drop). Fragmented messages are reassembled. Ping is
 *    answered with pong; close is answered with close and the connection is closed.
 *    Messages shorter than the reference's HEADER_MINSIZE are counted as RUNT drops.
 *    Closing an interface with an open session sends close 1001 (best effort).
 *
 * Byte counts: rx counts delivered packet bytes, tx the framed bytes (WebSocket headers
 * and the HTTP handshake included) handed to the socket or TLS.
 *
 * Threading and ownership: see stream.h; this file only frames.
 */
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "iface_abi.h"
#include "stream.h"
#include "ws_codec.h"

#define WS_HS_MAX 8192    /* opening-handshake header block */
#define WS_MIN_MESSAGE 20 /* the reference's minimum frame (HEADER_MINSIZE + 1) */

enum { PH_HANDSHAKE = 0, PH_OPEN = 1, PH_CLOSING = 2 };

typedef struct ws_cfg {
	char path[256];
	uint64_t ping_ns; /* 0: no keepalive pings */
} ws_cfg;

typedef struct ws_state {
	int phase;
	char accept[RNSC_WS_ACCEPT_LEN + 1]; /* client: what the server must answer */
	size_t hlen;
	uint8_t hbuf[WS_HS_MAX];
	size_t rlen, rcap; /* frame buffer: one whole frame at most */
	uint8_t *rbuf;
	int in_msg; /* a fragmented message is being reassembled */
	size_t mlen;
	uint8_t *msg;
	rnsc_iface_timer *ping;
	uint64_t last_rx_ns;
} ws_state;

static int ws_configure(rnsc_stream *t, const rnsc_iface_config *cfg)
{
	const char *path = "/";
	int rc = cfg->get_str(cfg->cctx, "path", &path);
	if (rc && rc != RNSC_ERR_NOTFOUND)
		return rc;
	size_t n = strlen(path);
	int ok = n > 0 && n < sizeof(((ws_cfg *)0)->path) && path[0] == '/';
	for (size_t i = 0; ok && i < n; i++)
		ok = path[i] > 0x20 && path[i] < 0x7F;
	if (!ok)
		return cfg->fail(cfg->cctx, "path", RNSC_ERR_CONFIG_VALUE,
				 "must start with \"/\" and hold no spaces or control characters");
	double ping = 0;
	if ((rc = cfg->get_float(cfg->cctx, "ping_interval", &ping)) && rc != RNSC_ERR_NOTFOUND)
		return rc;
	if (!(ping >= 0 && ping <= 3600))
		return cfg->fail(cfg->cctx, "ping_interval", RNSC_ERR_CONFIG_VALUE,
				 "must be between 0 (off) and 3600 seconds");
	ws_cfg *c = rnsc_stream_alloc(t, sizeof(*c));
	if (!c)
		return cfg->fail(cfg->cctx, NULL, RNSC_ERR_NOMEM, "out of memory");
	memcpy(c->path, path, n + 1);
	c->ping_ns = (uint64_t)(ping * 1e9);
	t->pcfg = c;
	return 0;
}

static void ws_release(rnsc_stream *t)
{
	rnsc_stream_free(t, t->pcfg);
	t->pcfg = NULL;
}

static int ws_new(rnsc_stream *t)
{
	ws_state *s = rnsc_stream_alloc(t, sizeof(*s));
	if (!s)
		return RNSC_ERR_NOMEM;
	s->rcap = RNSC_WS_MAX_HEADER +
		  (t->max_frame > RNSC_WS_MAX_CONTROL ? t->max_frame : RNSC_WS_MAX_CONTROL);
	s->rbuf = rnsc_stream_alloc(t, s->rcap);
	s->msg = rnsc_stream_alloc(t, t->max_frame);
	if (!s->rbuf || !s->msg) {
		rnsc_stream_free(t, s->rbuf);
		rnsc_stream_free(t, s->msg);
		rnsc_stream_free(t, s);
		return RNSC_ERR_NOMEM;
	}
	t->fs = s;
	return 0;
}

static void ws_free(rnsc_stream *t)
{
	ws_state *s = t->fs;
	if (s->ping)
		t->host->timer_del(t->host->hctx, s->ping);
	rnsc_stream_free(t, s->rbuf);
	rnsc_stream_free(t, s->msg);
	rnsc_stream_free(t, s);
	t->fs = NULL;
}

static int is_client(const rnsc_stream *t)
{
	return t->kind == RNSC_STREAM_CLIENT;
}

/* Queues one frame; client frames are masked with a fresh key (RFC 6455 5.3). */
static int put_frame(rnsc_stream *t, unsigned op, const uint8_t *p, size_t n, int count_drop)
{
	uint8_t mask[4];
	if (is_client(t) && RAND_bytes(mask, sizeof(mask)) != 1)
		return RNSC_ERR_RNG;
	uint8_t *dst = rnsc_stream_tx_reserve(t, RNSC_WS_MAX_HEADER + n, count_drop);
	if (!dst)
		return RNSC_ERR_TOOBIG;
	size_t h = rnsc_ws_build_header(dst, 1, op, n, is_client(t) ? mask : NULL);
	if (n)
		memcpy(dst + h, p, n);
	if (is_client(t))
		rnsc_ws_mask(dst + h, n, mask, 0);
	rnsc_stream_tx_commit(t, h + n);
	return 0;
}

/* Ends the session with a close frame; input is ignored from here. */
static void fail_ws(rnsc_stream *t, unsigned code, const char *why)
{
	ws_state *s = t->fs;
	uint8_t body[2] = {(uint8_t)(code >> 8), (uint8_t)code};
	if (code == RNSC_WS_CLOSE_TOO_BIG)
		rnsc_stream_drop(t, RNSC_IFACE_DROP_OVERSIZE, 1);
	else if (code != RNSC_WS_CLOSE_NORMAL)
		rnsc_stream_drop(t, RNSC_IFACE_DROP_GARBAGE, s->rlen ? s->rlen : 1);
	if (code != RNSC_WS_CLOSE_NORMAL)
		rnsc_stream_log(t, RNSC_LOG_WARNING,
				"WebSocket peer %s:%u of %s: %s (closing with %u)", t->addr,
				(unsigned)t->port, t->name, why, code);
	s->phase = PH_CLOSING;
	s->rlen = 0;
	s->in_msg = 0;
	(void)put_frame(t, RNSC_WS_OP_CLOSE, body, sizeof(body), 0);
	rnsc_stream_close_after_flush(t, why);
}

static int deliver_msg(rnsc_stream *t, const uint8_t *p, size_t n)
{
	if (n < WS_MIN_MESSAGE) {
		rnsc_stream_drop(t, RNSC_IFACE_DROP_RUNT, 1);
		return 0;
	}
	return rnsc_stream_deliver(t, p, n);
}

/* One whole frame; returns non-zero when parsing must stop. */
static int on_frame(rnsc_stream *t, const rnsc_ws_frame *f, const uint8_t *p)
{
	ws_state *s = t->fs;
	size_t n = (size_t)f->len;
	switch (f->opcode) {
	case RNSC_WS_OP_PING:
		(void)put_frame(t, RNSC_WS_OP_PONG, p, n, 1);
		return 0;
	case RNSC_WS_OP_PONG:
		return 0;
	case RNSC_WS_OP_CLOSE: {
		unsigned code = RNSC_WS_CLOSE_NORMAL;
		if (n == 1) {
			fail_ws(t, RNSC_WS_CLOSE_PROTOCOL, "close frame with a 1-byte body");
			return 1;
		}
		if (n >= 2)
			code = (unsigned)p[0] << 8 | p[1];
		rnsc_stream_log(t, RNSC_LOG_DEBUG, "WebSocket peer of %s closed with %u", t->name,
				code);
		s->rlen = 0;
		fail_ws(t, RNSC_WS_CLOSE_NORMAL, "closed by the peer");
		return 1;
	}
	case RNSC_WS_OP_TEXT:
		fail_ws(t, RNSC_WS_CLOSE_UNSUPPORTED,
			"text message (Reticulum packets are binary)");
		return 1;
	case RNSC_WS_OP_BINARY:
		if (s->in_msg) {
			fail_ws(t, RNSC_WS_CLOSE_PROTOCOL, "new message inside a fragmented one");
			return 1;
		}
		if (f->fin)
			return deliver_msg(t, p, n);
		memcpy(s->msg, p, n); /* n <= max_frame: checked by the header parser */
		s->mlen = n;
		s->in_msg = 1;
		return 0;
	default: /* continuation */
		if (!s->in_msg) {
			fail_ws(t, RNSC_WS_CLOSE_PROTOCOL, "continuation without a message");
			return 1;
		}
		if (n > t->max_frame - s->mlen) {
			fail_ws(t, RNSC_WS_CLOSE_TOO_BIG, "message larger than the HW MTU");
			return 1;
		}
		memcpy(s->msg + s->mlen, p, n);
		s->mlen += n;
		if (!f->fin)
			return 0;
		s->in_msg = 0;
		return deliver_msg(t, s->msg, s->mlen);
	}
}

static void frames(rnsc_stream *t)
{
	ws_state *s = t->fs;
	size_t off = 0;
	while (rnsc_stream_connected(t) && s->phase == PH_OPEN) {
		rnsc_ws_frame f;
		int h = rnsc_ws_parse_header(s->rbuf + off, s->rlen - off, !is_client(t),
					     t->max_frame, &f);
		if (h == 0)
			break;
		if (h < 0) {
			fail_ws(t, (unsigned)-h,
				-h == RNSC_WS_CLOSE_TOO_BIG ? "message larger than the HW MTU"
				: is_client(t) || (s->rbuf[off + 1] & 0x80)
					? "malformed frame"
					: "unmasked client frame");
			return;
		}
		if (s->rlen - off < (size_t)h + f.len)
			break;
		uint8_t *p = s->rbuf + off + h;
		if (f.masked)
			rnsc_ws_mask(p, (size_t)f.len, f.mask, 0);
		off += (size_t)h + (size_t)f.len;
		if (on_frame(t, &f, p))
			return;
	}
	if (s->phase != PH_OPEN || !rnsc_stream_connected(t))
		return;
	memmove(s->rbuf, s->rbuf + off, s->rlen - off);
	s->rlen -= off;
}

static void feed_frames(rnsc_stream *t, const uint8_t *p, size_t n)
{
	ws_state *s = t->fs;
	while (n && s->phase == PH_OPEN && rnsc_stream_connected(t)) {
		/* A frame never exceeds rcap (the header check refuses longer ones), so a full
		 * buffer always holds a complete frame and the loop makes progress. */
		size_t take = s->rcap - s->rlen < n ? s->rcap - s->rlen : n;
		if (!take) { /* cannot happen (see above); never spin if it did */
			fail_ws(t, RNSC_WS_CLOSE_TOO_BIG, "frame buffer full");
			return;
		}
		memcpy(s->rbuf + s->rlen, p, take);
		s->rlen += take;
		p += take;
		n -= take;
		frames(t);
	}
}

static void http_reply(rnsc_stream *t, int status, const char *reason)
{
	char r[256];
	int n = snprintf(r, sizeof(r),
			 "HTTP/1.1 %d %s\r\nConnection: close\r\n%sContent-Length: 0\r\n\r\n",
			 status, reason, status == 426 ? "Sec-WebSocket-Version: 13\r\n" : "");
	(void)rnsc_stream_tx(t, r, (size_t)n);
}

static const char *status_reason(int status)
{
	switch (status) {
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 426:
		return "Upgrade Required";
	default:
		return "Bad Request";
	}
}

static void refuse(rnsc_stream *t, int status, const char *why)
{
	ws_state *s = t->fs;
	rnsc_stream_log(t, RNSC_LOG_WARNING,
			"WebSocket handshake from %s:%u on %s refused (%d): %s", t->addr,
			(unsigned)t->port, t->name, status, why);
	rnsc_stream_drop(t, RNSC_IFACE_DROP_GARBAGE, s->hlen ? s->hlen : 1);
	s->phase = PH_CLOSING;
	http_reply(t, status, status_reason(status));
	rnsc_stream_close_after_flush(t, why);
}

/* Keepalive: a ping every ping_interval; a session silent for two intervals is dead
 * (proxies and NATs drop idle connections without telling either end). */
static void ping_cb(void *ud)
{
	rnsc_stream *t = ud;
	ws_state *s = t->fs;
	const ws_cfg *c = t->pcfg;
	if (s->phase != PH_OPEN || !rnsc_stream_connected(t))
		return;
	if (t->host->now_ns(t->host->hctx) - s->last_rx_ns > 2 * c->ping_ns) {
		rnsc_stream_log(t, RNSC_LOG_WARNING,
				"WebSocket peer %s:%u of %s did not answer pings", t->addr,
				(unsigned)t->port, t->name);
		rnsc_stream_lost(t, "no answer to ping");
		return;
	}
	(void)put_frame(t, RNSC_WS_OP_PING, (const uint8_t *)"rnsc", 4, 0);
}

static void opened(rnsc_stream *t)
{
	ws_state *s = t->fs;
	const ws_cfg *c = t->pcfg;
	s->phase = PH_OPEN;
	s->last_rx_ns = t->host->now_ns(t->host->hctx);
	if (c->ping_ns && (s->ping || t->host->timer_new(t->host->hctx, ping_cb, t, &s->ping) == 0))
		t->host->timer_start(t->host->hctx, s->ping, c->ping_ns, c->ping_ns);
	rnsc_stream_set_online(t);
}

static void handshake_input(rnsc_stream *t, const uint8_t *p, size_t n)
{
	ws_state *s = t->fs;
	size_t take = WS_HS_MAX - s->hlen < n ? WS_HS_MAX - s->hlen : n;
	memcpy(s->hbuf + s->hlen, p, take);
	s->hlen += take;
	/* Refuse what cannot become a handshake at once instead of waiting for 8 KiB. */
	static const char get[] = "GET ", http[] = "HTTP/1.1 ";
	const char *want = is_client(t) ? http : get;
	size_t cmp = s->hlen < strlen(want) ? s->hlen : strlen(want);
	size_t end = rnsc_ws_header_end(s->hbuf, s->hlen);
	if (memcmp(s->hbuf, want, cmp) != 0 || (!end && s->hlen == WS_HS_MAX)) {
		if (!is_client(t)) {
			refuse(t, 400, end ? "not an HTTP GET request" : "no HTTP request");
			return;
		}
		rnsc_stream_log(t, RNSC_LOG_ERROR,
				"WebSocket handshake for %s with %s:%u failed: %s", t->name,
				t->addr, (unsigned)t->port, "the answer is not HTTP/1.1");
		rnsc_stream_lost(t, "bad WebSocket handshake");
		return;
	}
	if (!end)
		return;
	const char *why = NULL;
	if (is_client(t)) {
		if (rnsc_ws_parse_response(s->hbuf, end, s->accept, &why) != 0) {
			rnsc_stream_log(t, RNSC_LOG_ERROR,
					"WebSocket handshake for %s with %s:%u failed: %s", t->name,
					t->addr, (unsigned)t->port, why);
			rnsc_stream_lost(t, "bad WebSocket handshake");
			return;
		}
	} else {
		char key[RNSC_WS_KEY_LEN + 1], acc[RNSC_WS_ACCEPT_LEN + 1], r[256];
		const ws_cfg *c = t->pcfg;
		int status = rnsc_ws_parse_request(s->hbuf, end, c->path, key, &why);
		if (status) {
			refuse(t, status, why);
			return;
		}
		if (rnsc_ws_accept(key, RNSC_WS_KEY_LEN, acc) != 0) {
			refuse(t, 400, "cannot compute Sec-WebSocket-Accept");
			return;
		}
		int rn = snprintf(r, sizeof(r),
				  "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
				  "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
				  acc);
		if (rnsc_stream_tx(t, r, (size_t)rn) != 0)
			return;
	}
	opened(t);
	/* Bytes after the header block (a frame sent right behind it) and what did not fit. */
	uint8_t rest[WS_HS_MAX];
	size_t nrest = s->hlen - end;
	memcpy(rest, s->hbuf + end, nrest);
	s->hlen = 0;
	feed_frames(t, rest, nrest);
	feed_frames(t, p + take, n - take);
}

static void ws_input(rnsc_stream *t, const uint8_t *p, size_t n)
{
	ws_state *s = t->fs;
	s->last_rx_ns = t->host->now_ns(t->host->hctx);
	if (s->phase == PH_HANDSHAKE)
		handshake_input(t, p, n);
	else if (s->phase == PH_OPEN)
		feed_frames(t, p, n);
	/* PH_CLOSING: whatever the peer still sends is ignored. */
}

static void ws_up(rnsc_stream *t)
{
	ws_state *s = t->fs;
	if (!is_client(t))
		return; /* wait for the request */
	uint8_t nonce[16];
	char key[RNSC_WS_KEY_LEN + 1], req[1024];
	if (RAND_bytes(nonce, sizeof(nonce)) != 1 ||
	    EVP_EncodeBlock((unsigned char *)key, nonce, sizeof(nonce)) != RNSC_WS_KEY_LEN ||
	    rnsc_ws_accept(key, RNSC_WS_KEY_LEN, s->accept) != 0) {
		rnsc_stream_lost(t, "cannot make a Sec-WebSocket-Key");
		return;
	}
	const ws_cfg *c = t->pcfg;
	int v6 = strchr(t->addr, ':') != NULL;
	int n = snprintf(req, sizeof(req),
			 "GET %s HTTP/1.1\r\nHost: %s%s%s:%u\r\nUpgrade: websocket\r\n"
			 "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
			 "Sec-WebSocket-Version: 13\r\n\r\n",
			 c->path, v6 ? "[" : "", t->addr, v6 ? "]" : "", (unsigned)t->port, key);
	if (n < 0 || (size_t)n >= sizeof(req) || rnsc_stream_tx(t, req, (size_t)n) != 0)
		rnsc_stream_lost(t, "cannot queue the WebSocket handshake");
}

static int ws_encode(rnsc_stream *t, const uint8_t *frame, size_t len)
{
	return put_frame(t, RNSC_WS_OP_BINARY, frame, len, 1);
}

static void ws_down(rnsc_stream *t)
{
	ws_state *s = t->fs;
	if (s->phase == PH_OPEN && (s->in_msg || s->rlen))
		rnsc_stream_drop(t, RNSC_IFACE_DROP_PARTIAL, 1);
	if (s->ping)
		t->host->timer_stop(t->host->hctx, s->ping);
	s->phase = PH_HANDSHAKE;
	s->hlen = s->rlen = s->mlen = 0;
	s->in_msg = 0;
}

/* Closing an open session: close 1001 "going away" (RFC 6455 7.4.1), masked from clients. */
static size_t ws_bye(rnsc_stream *t, uint8_t *buf, size_t cap)
{
	ws_state *s = t->fs;
	uint8_t mask[4], body[2] = {RNSC_WS_CLOSE_GOING_AWAY >> 8, RNSC_WS_CLOSE_GOING_AWAY & 0xFF};
	if (s->phase != PH_OPEN || cap < RNSC_WS_MAX_HEADER + 2 ||
	    (is_client(t) && RAND_bytes(mask, sizeof(mask)) != 1))
		return 0;
	size_t h = rnsc_ws_build_header(buf, 1, RNSC_WS_OP_CLOSE, 2, is_client(t) ? mask : NULL);
	memcpy(buf + h, body, 2);
	if (is_client(t))
		rnsc_ws_mask(buf + h, 2, mask, 0);
	return h + 2;
}

static const rnsc_stream_proto ws_proto = {
	.client_type = "WebSocketClientInterface",
	.server_type = "WebSocketServerInterface",
	.label = "WebSocketInterface",
	.server_label = "WebSocketServerInterface",
	.tls_always = 0,
	.configure = ws_configure,
	.release = ws_release,
	.conn_new = ws_new,
	.conn_free = ws_free,
	.up = ws_up,
	.input = ws_input,
	.encode = ws_encode,
	.down = ws_down,
	.bye = ws_bye,
};

static const char *const ws_types[] = {"WebSocketClientInterface", "WebSocketServerInterface",
				       NULL};

static int ws_open(void *inst, const rnsc_iface_config *cfg, const rnsc_iface_host_api *host,
		   void **handle)
{
	return rnsc_stream_open(&ws_proto, inst, cfg, host, handle);
}

RNSC_IFACE_PLUGIN("websocket",
		  "WebSocketClientInterface and WebSocketServerInterface (RFC 6455, ws:// "
		  "and wss://; rnsc only)",
		  ws_types, ws_open, rnsc_stream_send, rnsc_stream_stats, rnsc_stream_close,
		  rnsc_stream_describe)
