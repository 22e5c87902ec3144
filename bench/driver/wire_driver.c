/* SPDX-License-Identifier: MIT */
/*
 * `rnsc bench driver`: the wire driver of the relay scenarios (6 and 7). One process, the
 * same for every relay under test, connects a TCP (HDLC-framed, as Backbone and TCP
 * interfaces speak) client to each of the relay's two server interfaces, side a and side b,
 * and plays an endpoint on each side:
 *
 *  - set-up: an identity and a SINGLE destination per side (bench.relay.a / .b), announced
 *    with real signatures until the relay's rebroadcast of each comes back on the other
 *    side as a HEADER_2 announce: its transport id is the relay's transport identity;
 *  - mode raw (scenario 6): opaque HEADER_2 DATA frames (payload sizes 60..420 and bytes
 *    from bench/scenario/bench_gen.h, one generator pair per direction) addressed through
 *    the relay to the far side's destination, 256 credits per direction; the far side
 *    checks each frame against the sender's in-flight window (intact: the bytes the packet
 *    hash covers equal those sent; once; in order: no frame sent later arrived first; a
 *    loss is counted as lost, not as reordering of the frames after it) and answers with
 *    an opaque PROOF (the packet hash and 64 zero bytes, unsigned: the relay carries
 *    proofs through its reverse table without checking them); the proof returns the
 *    credit;
 *  - mode resource (scenario 7): a real link from side b to side a's destination through
 *    the relay (LINKREQUEST in HEADER_2, LRPROOF signed, RTT packet; src/lib/link.c on both
 *    ends), the MTU signalled as a Backbone client interface would (its 100 Mbit/s guess:
 *    32 KiB) and clamped by the relay; then LINK DATA frames with the RESOURCE context
 *    filling the negotiated link MTU (an 8-byte sequence number, then bytes of a pool drawn
 *    from the payload generator), 16 in flight per direction, a credit when the far side
 *    receives one.
 *
 * Before the sample the driver calibrates its own source and sink capacity without a relay:
 * the same engine over one loopback TCP connection whose two ends stand for side a and side
 * b (the cheapest possible "relay": the kernel), reporting frames per second as capacity.
 *
 * Line protocol with the runner (as the participants): "ready", then "start seconds=S
 * drain=D" → "done", "collect" → "result key=value ...", "quit". Errors: "error reason=...".
 * Single-threaded (epoll); HDLC is encoded and decoded here with a word-at-a-time scan so
 * the driver stays far faster than any relay it measures.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "announce.h"
#include "bench_gen.h"
#include "bench.h"
#include "env.h"
#include "strfmt.h"
#include "destination.h"
#include "identity.h"
#include "link.h"
#include "linkfmt.h"
#include "packet.h"
#include "wire_codec.h"

#define RAW_CREDITS 256
#define RES_CREDITS 16
#define RING 256
#define DONE_RING 1024
#define BACKBONE_CLIENT_HW_MTU 32768 /* Interface.optimise_mtu at the 100 Mbit/s guess */
#define MAX_FRAME (1u << 20)
#define WBUF_HIGH (1u << 20) /* stop producing while this much is unwritten */
#define RBUF (1u << 18)
#define POOL (1u << 20)
#define MAX_RTTS (1u << 22)
#define RAW_MAX_PAYLOAD 420
/* raw: what the packet hash covers (the low nibble of the first byte, the destination, the
 * context and the payload): kept per frame in flight, so the sink compares bytes and hashes
 * only a frame that is not the next one expected */
#define RAW_HASHED (1 + 16 + 1 + RAW_MAX_PAYLOAD)

enum mode { MODE_RAW, MODE_RESOURCE };
enum phase { PH_IDLE, PH_RUN, PH_DRAIN };

typedef struct conn {
	int fd;
	uint8_t *w;
	size_t wlen, woff, wcap;
	int want_out;
	wire_decoder dec;
} conn;

typedef struct flight {
	uint8_t hash[RNSC_HASHLEN]; /* raw: the packet hash */
	uint64_t seq;               /* resource: the sequence number */
	uint64_t sent_ns;
	uint32_t size;
	uint8_t received;
	uint8_t hashed[RAW_HASHED]; /* raw: the bytes the packet hash covers */
} flight;

typedef struct dirn {
	int src, dst;                         /* conn index */
	uint8_t dest[RNSC_TRUNCATED_HASHLEN]; /* raw: the far side's destination; res: link id */
	bench_sizes sizes;
	bench_payload stream;
	flight ring[RING];
	unsigned head, count; /* window, oldest first: sent, not yet credited */
	unsigned rxo;         /* raw: offset from head of the first frame not yet received */
	uint64_t next_seq;    /* of the next frame sent (raw: numbers frames for the order check) */
	uint64_t rx_high;     /* raw: one past the highest sequence number received */
	uint8_t done[DONE_RING][RNSC_TRUNCATED_HASHLEN]; /* raw: recently credited */
	unsigned done_n;
	unsigned long long sent, carried, dup, corrupt, reordered, bytes, stray;
} dirn;

typedef struct driver {
	rnsc_ctx *ctx;
	enum mode mode;
	conn c[2];
	int ep;
	dirn d[2]; /* 0: a → b, 1: b → a */
	enum phase phase;
	unsigned credits;
	uint8_t relay_id[RNSC_TRUNCATED_HASHLEN];
	int have_relay[2];
	rnsc_identity id[2];
	uint8_t dest[2][RNSC_TRUNCATED_HASHLEN];
	uint8_t name_hash[RNSC_NAME_HASHLEN];
	rnsc_link *link[2]; /* resource: [0] side a (responder), [1] side b (initiator) */
	uint32_t link_mtu;
	size_t frame_data; /* resource: data bytes per frame */
	uint8_t *pool;
	/* resource: the pool HDLC-encoded once; emap[i] is where byte i's encoding starts, so
	 * the encoding of any window is one slice (frames are sent without re-escaping) */
	uint8_t *epool;
	uint32_t *emap;
	uint32_t *rtts;
	size_t n_rtts;
	int record_rtt;
	/* one clock read per batch: frames queued by one pump() leave in one write, frames
	 * decoded from one read arrived together */
	uint64_t tx_ns, rx_ns;
	int failed;
	int connected; /* set-up over: a closed connection is a failure from now on */
	char why[256];
	uint8_t rbuf[RBUF];
	uint8_t tmp[MAX_FRAME + 64];
} driver;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ms(void)
{
	return now_ns() / 1000000u;
}

static void say(const char *line)
{
	printf("%s\n", line);
	fflush(stdout);
}

static void drv_fail(driver *dv, const char *why)
{
	if (dv->failed)
		return;
	dv->failed = 1;
	snprintf(dv->why, sizeof(dv->why), "%s", why);
	printf("error reason=");
	for (const char *p = why; *p; p++)
		putchar(*p == ' ' ? '_' : *p);
	printf("\n");
	fflush(stdout);
}

/* ---- output ------------------------------------------------------------------------------ */

static int wreserve(conn *c, size_t more)
{
	if (c->wlen + more <= c->wcap)
		return 0;
	if (c->woff) {
		memmove(c->w, c->w + c->woff, c->wlen - c->woff);
		c->wlen -= c->woff, c->woff = 0;
		if (c->wlen + more <= c->wcap)
			return 0;
	}
	size_t cap = c->wcap ? c->wcap : 1u << 16;
	while (cap < c->wlen + more)
		cap *= 2;
	uint8_t *n = realloc(c->w, cap);
	if (!n)
		return -1;
	c->w = n, c->wcap = cap;
	return 0;
}

/* Appends one HDLC frame of p to c's output. */
static int queue_frame(conn *c, const uint8_t *p, size_t len)
{
	if (wreserve(c, 2 * len + 2))
		return -1;
	c->wlen += wire_encode(c->w + c->wlen, p, len);
	return 0;
}

static void on_frame(driver *dv, int side, const uint8_t *f, size_t len);

typedef struct rx_ctx {
	driver *dv;
	int side;
} rx_ctx;

static int rx_frame(void *ud, const uint8_t *f, size_t len)
{
	rx_ctx *r = ud;
	on_frame(r->dv, r->side, f, len);
	return r->dv->failed;
}

static void decode(driver *dv, int side, const uint8_t *p, size_t n)
{
	rx_ctx r = {dv, side};
	(void)wire_decode(&dv->c[side].dec, p, n, rx_frame, &r);
}

static void flush(driver *dv, int side)
{
	conn *c = &dv->c[side];
	while (c->woff < c->wlen) {
		ssize_t n = send(c->fd, c->w + c->woff, c->wlen - c->woff, MSG_NOSIGNAL);
		if (n > 0) {
			c->woff += (size_t)n;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (!c->want_out) {
				struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT,
							 .data.u32 = (uint32_t)side};
				epoll_ctl(dv->ep, EPOLL_CTL_MOD, c->fd, &ev);
				c->want_out = 1;
			}
			return;
		}
		if (n < 0 && errno == EINTR)
			continue;
		drv_fail(dv, "write to the relay failed");
		return;
	}
	c->woff = c->wlen = 0;
	if (c->want_out) {
		struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)side};
		epoll_ctl(dv->ep, EPOLL_CTL_MOD, c->fd, &ev);
		c->want_out = 0;
	}
}

/* ---- connections ---------------------------------------------------------------------- */

static void conn_close(driver *dv, int side)
{
	conn *c = &dv->c[side];
	if (c->fd >= 0) {
		epoll_ctl(dv->ep, EPOLL_CTL_DEL, c->fd, NULL);
		close(c->fd);
	}
	c->fd = -1;
	c->wlen = c->woff = 0, c->want_out = 0, c->dec.in_frame = 0, c->dec.len = 0;
}

static int conn_attach(driver *dv, int side, int fd)
{
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	dv->c[side].fd = fd;
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)side};
	return epoll_ctl(dv->ep, EPOLL_CTL_ADD, fd, &ev);
}

static int connect_port(int port, double timeout_s)
{
	uint64_t end = now_ns() + (uint64_t)(timeout_s * 1e9);
	for (;;) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -1;
		struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
			return fd;
		close(fd);
		if (now_ns() >= end)
			return -1;
		usleep(50000);
	}
}

/* A loopback TCP connection whose two ends stand for side a and side b (calibration). */
static int loop_pair(int fds[2])
{
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0)
		return -1;
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t al = sizeof(a);
	int rc = -1;
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(l, 1) == 0 &&
	    getsockname(l, (struct sockaddr *)&a, &al) == 0) {
		fds[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fds[0] >= 0 && connect(fds[0], (struct sockaddr *)&a, sizeof(a)) == 0 &&
		    (fds[1] = accept4(l, NULL, NULL, SOCK_CLOEXEC)) >= 0)
			rc = 0;
		else if (fds[0] >= 0)
			close(fds[0]);
	}
	close(l);
	return rc;
}

/* ---- traffic ---------------------------------------------------------------------------- */

static void reset_counters(driver *dv)
{
	for (int k = 0; k < 2; k++) {
		dirn *d = &dv->d[k];
		d->sent = d->carried = d->dup = d->corrupt = d->reordered = d->bytes = d->stray = 0;
	}
	dv->n_rtts = 0;
}

static void reset_window(driver *dv)
{
	for (int k = 0; k < 2; k++)
		dv->d[k].head = dv->d[k].count = dv->d[k].rxo = 0, dv->d[k].done_n = 0;
}

static void send_raw(driver *dv, dirn *d)
{
	uint8_t *p = dv->tmp;
	uint32_t size = bench_sizes_next(&d->sizes);
	/* HEADER_2, transport, SINGLE, DATA; hops 0; the relay's id; the far destination */
	p[0] = (uint8_t)(RNSC_HEADER_2 << 6 | RNSC_TRANSPORT_TRANSPORT << 4 | 0 << 2 |
			 RNSC_PKT_DATA);
	p[1] = 0;
	memcpy(p + 2, dv->relay_id, 16);
	memcpy(p + 18, d->dest, 16);
	p[34] = RNSC_CTX_NONE;
	bench_payload_take(&d->stream, p + 35, size);
	flight *f = &d->ring[(d->head + d->count) % RING];
	if (rnsc_packet_hash(dv->ctx, f->hash, p, 35 + size)) {
		drv_fail(dv, "hashing failed");
		return;
	}
	f->hashed[0] = p[0] & 0x0f;
	memcpy(f->hashed + 1, p + 18, 17 + size);
	f->seq = d->next_seq++;
	f->size = size, f->received = 0, f->sent_ns = dv->tx_ns;
	d->count++;
	d->sent++;
	if (queue_frame(&dv->c[d->src], p, 35 + size))
		drv_fail(dv, "out of memory");
}

static void send_res(driver *dv, dirn *d)
{
	uint8_t *p = dv->tmp;
	/* HEADER_1, broadcast, LINK, DATA; the link id; context RESOURCE */
	p[0] = (uint8_t)(RNSC_HEADER_1 << 6 | RNSC_TRANSPORT_BROADCAST << 4 | 3 << 2 |
			 RNSC_PKT_DATA);
	p[1] = 0;
	memcpy(p + 2, d->dest, 16);
	p[18] = RNSC_CTX_RESOURCE;
	uint64_t seq = d->next_seq++;
	for (int k = 0; k < 8; k++)
		p[19 + k] = (uint8_t)(seq >> (8 * k));
	size_t body = dv->frame_data - 8;
	size_t off = (size_t)((seq * 4099u) % (POOL - body));
	flight *f = &d->ring[(d->head + d->count) % RING];
	f->seq = seq, f->size = (uint32_t)dv->frame_data, f->received = 0, f->sent_ns = dv->tx_ns;
	d->count++;
	d->sent++;
	/* FLAG, the escaped header and sequence, the pre-escaped body slice, FLAG */
	conn *c = &dv->c[d->src];
	size_t slice = dv->emap[off + body] - dv->emap[off];
	if (wreserve(c, 2 * 27 + 2 + slice)) {
		drv_fail(dv, "out of memory");
		return;
	}
	size_t n = wire_encode(c->w + c->wlen, p, 27) - 1; /* without its closing FLAG */
	memcpy(c->w + c->wlen + n, dv->epool + dv->emap[off], slice);
	n += slice;
	c->w[c->wlen + n++] = WIRE_FLAG;
	c->wlen += n;
}

static void pump(driver *dv)
{
	if (dv->phase != PH_RUN || dv->failed)
		return;
	dv->tx_ns = now_ns();
	for (int k = 0; k < 2; k++) {
		dirn *d = &dv->d[k];
		conn *c = &dv->c[d->src];
		while (d->count < dv->credits && c->wlen - c->woff < WBUF_HIGH && !dv->failed) {
			if (dv->mode == MODE_RAW)
				send_raw(dv, d);
			else
				send_res(dv, d);
		}
	}
}

static void rtt(driver *dv, const flight *f)
{
	if (dv->record_rtt && dv->n_rtts < MAX_RTTS) {
		uint64_t us = (dv->rx_ns - f->sent_ns) / 1000;
		dv->rtts[dv->n_rtts++] = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
	}
}

static void pop_done(dirn *d)
{
	d->head = (d->head + 1) % RING;
	d->count--;
	if (d->rxo)
		d->rxo--;
}

/* raw: x arrived intact for the first time. It is out of order when a frame sent after it
 * came first; a frame lost before it does not make it (or any later frame) reordered. */
static void received(dirn *d, flight *x)
{
	if (x->seq + 1 < d->rx_high)
		d->reordered++;
	else
		d->rx_high = x->seq + 1;
	x->received = 1;
	d->carried++;
}

/* raw: a DATA frame arrived at its sink; check it against the sender's window, prove it */
static void sink_raw(driver *dv, dirn *d, const uint8_t *f, size_t len, size_t hdr)
{
	uint8_t h[RNSC_HASHLEN];
	int found = 0;
	flight *e = d->rxo < d->count ? &d->ring[(d->head + d->rxo) % RING] : NULL;
	/* hdr counts the bytes before the context; the hash skips the hops byte and any
	 * transport id, i.e. hdr - 16 bytes, and starts with the first byte's low nibble */
	if (e && e->size && len == hdr + 1 + e->size && (f[0] & 0x0f) == e->hashed[0] &&
	    !memcmp(f + hdr - 16, e->hashed + 1, 17 + e->size)) {
		/* the usual case: the next frame in send order, byte for byte */
		memcpy(h, e->hash, RNSC_HASHLEN);
		received(d, e);
		d->bytes += len - hdr - 1;
		found = 1;
		goto advance;
	}
	if (rnsc_packet_hash(dv->ctx, h, f, len)) {
		d->corrupt++;
		return;
	}
	for (unsigned i = 0; i < d->count; i++) {
		flight *x = &d->ring[(d->head + i) % RING];
		if (memcmp(x->hash, h, RNSC_HASHLEN) != 0)
			continue;
		found = 1;
		if (x->received) {
			d->dup++;
		} else {
			received(d, x);
			d->bytes += len - hdr - 1;
		}
		break;
	}
	if (!found) {
		for (unsigned i = 0; i < d->done_n && i < DONE_RING; i++)
			if (!memcmp(d->done[i], h, RNSC_TRUNCATED_HASHLEN)) {
				found = 1;
				d->dup++;
				break;
			}
		if (!found) {
			d->corrupt++;
			return;
		}
	}
advance:
	while (d->rxo < d->count && d->ring[(d->head + d->rxo) % RING].received)
		d->rxo++;
	/* the opaque proof: HEADER_1, broadcast, SINGLE, PROOF to the truncated packet hash */
	uint8_t p[19 + 96];
	p[0] = (uint8_t)(RNSC_HEADER_1 << 6 | RNSC_TRANSPORT_BROADCAST << 4 | 0 << 2 |
			 RNSC_PKT_PROOF);
	p[1] = 0;
	memcpy(p + 2, h, 16);
	p[18] = RNSC_CTX_NONE;
	memcpy(p + 19, h, 32);
	memset(p + 51, 0, 64);
	if (queue_frame(&dv->c[d->dst], p, sizeof(p)))
		drv_fail(dv, "out of memory");
}

/* raw: a proof came back to the source side: return the credit */
static void proof_raw(driver *dv, dirn *d, const uint8_t *th)
{
	/* th: the proof's destination, the truncated hash of the packet it proves */
	for (unsigned i = 0; i < d->count; i++) {
		flight *x = &d->ring[(d->head + i) % RING];
		if (memcmp(x->hash, th, RNSC_TRUNCATED_HASHLEN) != 0)
			continue;
		rtt(dv, x);
		memcpy(d->done[d->done_n % DONE_RING], x->hash, RNSC_TRUNCATED_HASHLEN);
		d->done_n++;
		x->size = 0; /* credited */
		while (d->count && d->ring[d->head].size == 0 && d->ring[d->head].received)
			pop_done(d);
		return;
	}
	d->stray++;
}

/* resource: a RESOURCE frame arrived at its sink; credit on receipt */
static void sink_res(driver *dv, dirn *d, const uint8_t *f, size_t len)
{
	if (len != 19 + dv->frame_data) {
		d->corrupt++;
		return;
	}
	uint64_t seq = 0;
	for (int k = 0; k < 8; k++)
		seq |= (uint64_t)f[19 + k] << (8 * k);
	size_t body = dv->frame_data - 8;
	size_t off = (size_t)((seq * 4099u) % (POOL - body));
	if (memcmp(f + 27, dv->pool + off, body) != 0) {
		d->corrupt++;
		return;
	}
	if (!d->count || seq < d->ring[d->head].seq) {
		d->dup++;
		return;
	}
	unsigned i = (unsigned)(seq - d->ring[d->head].seq);
	if (i >= d->count) {
		d->corrupt++; /* never sent */
		return;
	}
	flight *x = &d->ring[(d->head + i) % RING];
	if (x->received) {
		d->dup++;
		return;
	}
	if (i)
		d->reordered++;
	x->received = 1;
	d->carried++;
	d->bytes += dv->frame_data;
	rtt(dv, x);
	while (d->count && d->ring[d->head].received)
		pop_done(d);
}

/* ---- set-up: announces, the relay's identity, the link ---------------------------------- */

static int announce(driver *dv, int side)
{
	uint8_t rh[RNSC_ANNOUNCE_RANDOM_LEN], data[512], raw[600];
	if (rnsc_announce_random_hash(dv->ctx, rh, (uint64_t)time(NULL)))
		return -1;
	int n = rnsc_announce_build(data, sizeof(data), &dv->id[side], dv->dest[side],
				    dv->name_hash, rh, NULL, NULL, 0);
	if (n < 0)
		return -1;
	rnsc_packet p = {.header_type = RNSC_HEADER_1,
			 .transport_type = RNSC_TRANSPORT_BROADCAST,
			 .dest_type = 0,
			 .packet_type = RNSC_PKT_ANNOUNCE,
			 .context = RNSC_CTX_NONE,
			 .data = data,
			 .data_len = (size_t)n};
	memcpy(p.dest_hash, dv->dest[side], 16);
	int len = rnsc_packet_pack(raw, sizeof(raw), &p, RNSC_MTU);
	if (len < 0)
		return -1;
	return queue_frame(&dv->c[side], raw, (size_t)len);
}

/* Sends what a link endpoint queued; the initiator's LINKREQUEST goes through the relay. */
static void link_out(driver *dv, int side)
{
	rnsc_link *l = dv->link[side];
	int n;
	while (l && (n = rnsc_link_outbox_pop(l, dv->tmp, MAX_FRAME)) > 0) {
		uint8_t *p = dv->tmp;
		if ((p[0] & 3) == RNSC_PKT_LINKREQUEST && (p[0] >> 6) == RNSC_HEADER_1) {
			/* Transport.outbound for a destination two hops away: HEADER_2 via the relay */
			memmove(p + 18, p + 2, (size_t)n - 2);
			memcpy(p + 2, dv->relay_id, 16);
			p[0] = (uint8_t)(RNSC_HEADER_2 << 6 | RNSC_TRANSPORT_TRANSPORT << 4 |
					 (p[0] & 0x0F));
			n += 16;
		}
		if (queue_frame(&dv->c[side], p, (size_t)n))
			drv_fail(dv, "out of memory");
	}
}

static void setup_frame(driver *dv, int side, const uint8_t *f, size_t len)
{
	rnsc_packet p;
	if (rnsc_packet_unpack(&p, f, len) != 0)
		return;
	if (p.packet_type == RNSC_PKT_ANNOUNCE) {
		/* the relay's rebroadcast of the other side's announce */
		if (p.header_type == RNSC_HEADER_2 && !memcmp(p.dest_hash, dv->dest[!side], 16)) {
			if ((dv->have_relay[0] || dv->have_relay[1]) &&
			    memcmp(dv->relay_id, p.transport_id, 16)) {
				drv_fail(dv, "the two sides saw different transport ids");
				return;
			}
			memcpy(dv->relay_id, p.transport_id, 16);
			dv->have_relay[side] = 1;
		}
		return;
	}
	if (dv->mode != MODE_RESOURCE)
		return;
	uint64_t now = now_ms();
	if (side == 0 && p.packet_type == RNSC_PKT_LINKREQUEST && !dv->link[0] &&
	    !memcmp(p.dest_hash, dv->dest[0], 16)) {
		if (rnsc_link_accept(dv->ctx, &dv->link[0], &dv->id[0], f, len,
				     BACKBONE_CLIENT_HW_MTU, now) != 0) {
			drv_fail(dv, "side a could not accept the link request");
			return;
		}
		link_out(dv, 0);
		return;
	}
	if (dv->link[side] && !memcmp(p.dest_hash, rnsc_link_id(dv->link[side]), 16)) {
		int rc = rnsc_link_receive(dv->link[side], f, len, now);
		(void)rc; /* the link's state says what it made of the packet */
		link_out(dv, side);
	}
}

static void on_frame(driver *dv, int side, const uint8_t *f, size_t len)
{
	wire_view v;
	if (wire_view_of(&v, f, len) != 0)
		return;
	if (dv->phase == PH_IDLE) {
		setup_frame(dv, side, f, len);
		return;
	}
	if (dv->mode == MODE_RAW) {
		if (v.type == RNSC_PKT_DATA)
			sink_raw(dv, &dv->d[side == 1 ? 0 : 1], f, len, v.hdr);
		else if (v.type == RNSC_PKT_PROOF && !v.header2)
			proof_raw(dv, &dv->d[side == 0 ? 0 : 1], v.dest);
		return;
	}
	if (v.type == RNSC_PKT_DATA && v.context == RNSC_CTX_RESOURCE && !v.header2)
		sink_res(dv, &dv->d[side == 1 ? 0 : 1], f, len);
	else if (dv->link[side] && rnsc_link_receive(dv->link[side], f, len, now_ms()) == 0)
		link_out(dv, side); /* keepalives */
}

/* ---- the loop ----------------------------------------------------------------------------- */

static char inbuf[512];
static size_t inlen;

/* One iteration: reads, frames, writes; a line from stdin into *line when one is complete. */
static int step(driver *dv, int timeout_ms, char *line, size_t cap)
{
	struct epoll_event ev[8];
	int n = epoll_wait(dv->ep, ev, 8, timeout_ms);
	int got_line = 0;
	for (int i = 0; i < n; i++) {
		uint32_t who = ev[i].data.u32;
		if (who == 2) {
			ssize_t r = read(0, inbuf + inlen, sizeof(inbuf) - 1 - inlen);
			if (r <= 0) {
				drv_fail(dv, "runner closed stdin");
				return 0;
			}
			inlen += (size_t)r;
			continue;
		}
		conn *c = &dv->c[who];
		if (c->fd < 0)
			continue;
		if (ev[i].events & EPOLLOUT)
			flush(dv, (int)who);
		if (ev[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
			ssize_t r = recv(c->fd, dv->rbuf, sizeof(dv->rbuf), 0);
			if (r > 0) {
				dv->rx_ns = now_ns();
				decode(dv, (int)who, dv->rbuf, (size_t)r);
			} else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
				/* a relay still starting may drop a connection it accepted (the
				 * reference's Backbone server before its interface is complete):
				 * the set-up reconnects */
				if (!dv->connected)
					conn_close(dv, (int)who);
				else
					drv_fail(dv, who ? "side b connection closed"
							 : "side a connection closed");
			}
		}
	}
	pump(dv);
	for (int s = 0; s < 2; s++)
		if (dv->c[s].fd >= 0 && dv->c[s].wlen > dv->c[s].woff && !dv->c[s].want_out)
			flush(dv, s);
	char *nl = memchr(inbuf, '\n', inlen);
	if (line && nl) {
		*nl = '\0';
		size_t ln = (size_t)(nl - inbuf) + 1;
		memcpy(line, inbuf, ln < cap ? ln : cap);
		line[cap - 1] = '\0';
		size_t used = (size_t)(nl - inbuf) + 1;
		memmove(inbuf, nl + 1, inlen - used);
		inlen -= used;
		got_line = 1;
	}
	return got_line;
}

static int in_flight(const driver *dv)
{
	return (int)(dv->d[0].count + dv->d[1].count);
}

/* Runs traffic for run_s, then drains up to drain_s. Returns elapsed seconds. */
static double traffic(driver *dv, double run_s, double drain_s)
{
	uint64_t t0 = now_ns(), end = t0 + (uint64_t)(run_s * 1e9);
	dv->phase = PH_RUN;
	pump(dv);
	while (!dv->failed && now_ns() < end)
		(void)step(dv, 1, NULL, 0);
	dv->phase = PH_DRAIN;
	uint64_t dend = now_ns() + (uint64_t)(drain_s * 1e9);
	while (!dv->failed && in_flight(dv) && now_ns() < dend)
		(void)step(dv, 1, NULL, 0);
	return (double)(now_ns() - t0) * 1e-9;
}

static void init_dirs(driver *dv)
{
	for (int k = 0; k < 2; k++) {
		dirn *d = &dv->d[k];
		d->src = k, d->dst = !k;
		bench_sizes_init(&d->sizes, 60, RAW_MAX_PAYLOAD);
		bench_payload_init(&d->stream);
		d->next_seq = 0;
	}
}

static void set_dests(driver *dv)
{
	if (dv->mode == MODE_RAW) {
		memcpy(dv->d[0].dest, dv->dest[1], 16); /* a → b: side b's destination */
		memcpy(dv->d[1].dest, dv->dest[0], 16);
	} else {
		memcpy(dv->d[0].dest, rnsc_link_id(dv->link[0]), 16);
		memcpy(dv->d[1].dest, rnsc_link_id(dv->link[1]), 16);
	}
}

/* The driver alone over one loopback connection: frames per second it sources and sinks. */
static double calibrate(driver *dv, double seconds)
{
	int saved[2] = {dv->c[0].fd, dv->c[1].fd};
	int fds[2];
	if (loop_pair(fds) != 0)
		return 0;
	/* park the relay connections: nothing flows on them while calibrating */
	for (int s = 0; s < 2; s++)
		epoll_ctl(dv->ep, EPOLL_CTL_DEL, saved[s], NULL);
	dv->c[0].fd = dv->c[1].fd = -1;
	conn_attach(dv, 0, fds[0]);
	conn_attach(dv, 1, fds[1]);
	reset_window(dv), reset_counters(dv);
	double el = traffic(dv, seconds, 5);
	double cap = el > 0 ? (double)(dv->d[0].carried + dv->d[1].carried) / el : 0;
	if (dv->d[0].corrupt || dv->d[1].corrupt || dv->d[0].dup || dv->d[1].dup)
		cap = 0;
	dv->phase = PH_IDLE;
	conn_close(dv, 0), conn_close(dv, 1);
	conn_attach(dv, 0, saved[0]);
	conn_attach(dv, 1, saved[1]);
	reset_window(dv), reset_counters(dv);
	return cap;
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

static double kv(const char *line, const char *key, double dflt)
{
	char pat[32];
	snprintf(pat, sizeof(pat), "%s=", key);
	const char *p = strstr(line, pat);
	return p ? strtod(p + strlen(pat), NULL) : dflt;
}

/* Waits for one command line; NULL when the driver failed or stdin closed. */
static int await(driver *dv, char *line, size_t cap)
{
	while (!dv->failed)
		if (step(dv, 100, line, cap))
			return 0;
	return -1;
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: rnsc bench driver --mode raw|resource --a PORT --b PORT\n"
		   "                         [--calibrate S] [--setup-timeout S]\n\n"
		   "The wire driver of the relay scenarios (started by `rnsc bench`; speaks its\n"
		   "line protocol on stdin/stdout): connects to the relay's two server interfaces\n"
		   "on 127.0.0.1 and drives frames through it in both directions.\n");
}

int rnsc_bench_driver_main(int argc, char **argv)
{
	static const struct option opts[] = {{"mode", required_argument, NULL, 'm'},
					     {"a", required_argument, NULL, 'a'},
					     {"b", required_argument, NULL, 'b'},
					     {"calibrate", required_argument, NULL, 'c'},
					     {"setup-timeout", required_argument, NULL, 't'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	const char *mode = NULL;
	int pa = 0, pb = 0, c;
	double calib_s = 1, setup_s = 60;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			mode = optarg;
			break;
		case 'a':
			pa = atoi(optarg);
			break;
		case 'b':
			pb = atoi(optarg);
			break;
		case 'c':
			calib_s = strtod(optarg, NULL);
			break;
		case 't':
			setup_s = strtod(optarg, NULL);
			break;
		case 'h':
			usage(stdout);
			return BENCH_OK;
		default:
			usage(stderr);
			return BENCH_USAGE;
		}
	}
	if (optind != argc || !mode || (strcmp(mode, "raw") && strcmp(mode, "resource")) ||
	    pa <= 0 || pa > 65535 || pb <= 0 || pb > 65535 || calib_s <= 0 || setup_s <= 0) {
		usage(stderr);
		return BENCH_USAGE;
	}
	rnsc_env env;
	int rc = rnsc_env_open(&env, NULL, 0, stderr) == 0 ? BENCH_OK : BENCH_SETUP;
	if (rc)
		return rc;
	driver *dv = calloc(1, sizeof(*dv));
	int ret = BENCH_FAIL;
	if (!dv)
		goto out;
	dv->ep = -1;
	dv->ctx = env.ctx;
	dv->mode = strcmp(mode, "raw") ? MODE_RESOURCE : MODE_RAW;
	dv->credits = dv->mode == MODE_RAW ? RAW_CREDITS : RES_CREDITS;
	dv->c[0].fd = dv->c[1].fd = -1;
	dv->c[0].dec.buf = malloc(MAX_FRAME), dv->c[1].dec.buf = malloc(MAX_FRAME);
	dv->c[0].dec.max = dv->c[1].dec.max = MAX_FRAME;
	dv->rtts = malloc(MAX_RTTS * sizeof(uint32_t));
	dv->pool = malloc(POOL);
	dv->epool = malloc(2 * POOL);
	dv->emap = malloc((POOL + 1) * sizeof(uint32_t));
	dv->ep = epoll_create1(EPOLL_CLOEXEC);
	if (!dv->c[0].dec.buf || !dv->c[1].dec.buf || !dv->rtts || !dv->pool || !dv->epool ||
	    !dv->emap || dv->ep < 0) {
		drv_fail(dv, "out of memory");
		goto out;
	}
	bench_payload pg;
	bench_payload_init(&pg);
	bench_payload_take(&pg, dv->pool, POOL);
	for (size_t i = 0, o = 0; i <= POOL; i++) {
		dv->emap[i] = (uint32_t)o;
		if (i == POOL)
			break;
		uint8_t b = dv->pool[i];
		if (b == WIRE_FLAG || b == WIRE_ESC) {
			dv->epool[o++] = WIRE_ESC;
			dv->epool[o++] = b ^ 0x20;
		} else {
			dv->epool[o++] = b;
		}
	}
	fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
	struct epoll_event sev = {.events = EPOLLIN, .data.u32 = 2};
	epoll_ctl(dv->ep, EPOLL_CTL_ADD, 0, &sev);

	/* identities and destinations, one per side */
	static const char *const asp_a[] = {"relay", "a"}, *const asp_b[] = {"relay", "b"};
	if (rnsc_identity_generate(dv->ctx, &dv->id[0]) ||
	    rnsc_identity_generate(dv->ctx, &dv->id[1]) ||
	    rnsc_destination_hash(dv->ctx, dv->dest[0], dv->id[0].hash, "bench", asp_a, 2) ||
	    rnsc_destination_hash(dv->ctx, dv->dest[1], dv->id[1].hash, "bench", asp_b, 2)) {
		drv_fail(dv, "cannot create the identities");
		goto out;
	}
	int fa = connect_port(pa, setup_s), fb = fa >= 0 ? connect_port(pb, setup_s) : -1;
	if (fa < 0 || fb < 0) {
		if (fa >= 0)
			close(fa);
		drv_fail(dv, "cannot connect to the relay");
		goto out;
	}
	conn_attach(dv, 0, fa);
	conn_attach(dv, 1, fb);
	uint64_t deadline = now_ns() + (uint64_t)(setup_s * 1e9), next_ann = 0;
	while (!dv->failed && !(dv->have_relay[0] && dv->have_relay[1])) {
		if (now_ns() >= deadline) {
			drv_fail(dv, "the relay never rebroadcast the announces");
			goto out;
		}
		for (int s = 0; s < 2; s++)
			if (dv->c[s].fd < 0) {
				int fd = connect_port(s ? pb : pa, 0.2);
				if (fd >= 0) {
					conn_attach(dv, s, fd);
					next_ann = 0;
				}
			}
		if (now_ns() >= next_ann && dv->c[0].fd >= 0 && dv->c[1].fd >= 0) {
			for (int s = 0; s < 2; s++) {
				const char *const *asp = s ? asp_b : asp_a;
				if (rnsc_name_hash(dv->ctx, dv->name_hash, "bench", asp, 2) ||
				    announce(dv, s)) {
					drv_fail(dv, "cannot build an announce");
					goto out;
				}
			}
			next_ann = now_ns() + 500 * 1000000ull;
		}
		(void)step(dv, 20, NULL, 0);
	}
	dv->connected = 1;
	if (dv->mode == MODE_RESOURCE) {
		rnsc_link_initiate_params lp = {.hw_mtu = BACKBONE_CLIENT_HW_MTU, .hops = 2};
		rnsc_identity pub;
		uint8_t pk[RNSC_KEYSIZE];
		rnsc_identity_public_bytes(&dv->id[0], pk);
		if (rnsc_identity_from_public(dv->ctx, &pub, pk, sizeof(pk)) ||
		    rnsc_link_initiate(dv->ctx, &dv->link[1], dv->dest[0], &pub, &lp, now_ms())) {
			drv_fail(dv, "cannot start the link");
			goto out;
		}
		rnsc_identity_free(&pub);
		link_out(dv, 1);
		while (!dv->failed &&
		       !(dv->link[0] && rnsc_link_status(dv->link[0]) == RNSC_LINK_ACTIVE &&
			 rnsc_link_status(dv->link[1]) == RNSC_LINK_ACTIVE)) {
			if (now_ns() >= deadline ||
			    rnsc_link_status(dv->link[1]) == RNSC_LINK_CLOSED) {
				drv_fail(dv, "the link through the relay was not established");
				goto out;
			}
			(void)step(dv, 20, NULL, 0);
		}
		dv->link_mtu = rnsc_link_mtu(dv->link[1]);
		if (rnsc_link_mtu(dv->link[0]) != dv->link_mtu || dv->link_mtu < 19 + 64 ||
		    dv->link_mtu > MAX_FRAME / 2) {
			drv_fail(dv, "the two link ends disagree on the MTU");
			goto out;
		}
		dv->frame_data = dv->link_mtu - 19;
	}
	init_dirs(dv);
	set_dests(dv);
	double capacity = calibrate(dv, calib_s);
	if (dv->failed)
		goto out;
	/* warm-up through the relay: paths, reverse/link tables and caches are hot */
	(void)traffic(dv, 0.5, 10);
	dv->phase = PH_IDLE;
	if (dv->failed)
		goto out;
	if (in_flight(dv)) {
		drv_fail(dv, "warm-up frames were never carried");
		goto out;
	}
	reset_window(dv), reset_counters(dv);
	say("ready");
	char line[512];
	if (await(dv, line, sizeof(line)) || strncmp(line, "start", 5)) {
		drv_fail(dv, "expected start");
		goto out;
	}
	dv->record_rtt = 1;
	double elapsed = traffic(dv, kv(line, "seconds", 30), kv(line, "drain", 30));
	dv->record_rtt = 0;
	dv->phase = PH_IDLE;
	if (dv->failed)
		goto out;
	say("done");
	if (await(dv, line, sizeof(line)) || strcmp(line, "collect")) {
		drv_fail(dv, "expected collect");
		goto out;
	}
	qsort(dv->rtts, dv->n_rtts, sizeof(uint32_t), u32cmp);
	char out[1536];
	int n = snprintf(out, sizeof(out),
			 "result mode=%s elapsed_s=%.6f capacity=%.1f link_mtu=%u "
			 "rtt_p50_us=%.1f rtt_p99_us=%.1f",
			 mode, elapsed, capacity, dv->link_mtu, pct(dv->rtts, dv->n_rtts, 50),
			 pct(dv->rtts, dv->n_rtts, 99));
	for (int k = 0; k < 2; k++) {
		dirn *d = &dv->d[k];
		unsigned lost = 0, unproved = d->count;
		for (unsigned i = 0; i < d->count; i++)
			lost += !d->ring[(d->head + i) % RING].received;
		n += snprintf(out + n, sizeof(out) - (size_t)n,
			      " %s_sent=%llu %s_carried=%llu %s_dup=%llu %s_corrupt=%llu "
			      "%s_reordered=%llu %s_lost=%u %s_bytes=%llu %s_unproved=%u",
			      k ? "ba" : "ab", d->sent, k ? "ba" : "ab", d->carried,
			      k ? "ba" : "ab", d->dup, k ? "ba" : "ab", d->corrupt, k ? "ba" : "ab",
			      d->reordered, k ? "ba" : "ab", lost, k ? "ba" : "ab", d->bytes,
			      k ? "ba" : "ab", unproved);
	}
	say(out);
	if (await(dv, line, sizeof(line)) == 0 && !strcmp(line, "quit"))
		ret = BENCH_OK;
out:
	if (dv) {
		for (int s = 0; s < 2; s++) {
			conn_close(dv, s);
			free(dv->c[s].w);
			free(dv->c[s].dec.buf);
			rnsc_link_del(dv->link[s]);
			rnsc_identity_free(&dv->id[s]);
		}
		if (dv->ep >= 0)
			close(dv->ep);
		free(dv->rtts);
		free(dv->pool);
		free(dv->epool);
		free(dv->emap);
		free(dv);
	}
	rnsc_env_close(&env);
	return ret;
}
