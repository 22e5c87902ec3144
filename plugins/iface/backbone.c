/* SPDX-License-Identifier: MIT */
/*
 * The "backbone" interface plugin: BackboneInterface (a listener that spawns one child
 * interface per accepted connection) and BackboneClientInterface (an initiator that
 * reconnects), as the reference (rns 1.5.4, RNS/Interfaces/BackboneInterface.py plus
 * the interface set-up in Reticulum.py) behaves on the wire:
 *
 *  - HDLC over TCP (src/framing/hdlc.c, compiled in): FLAG escape(p) FLAG out; in, frames
 *    of 20 .. HW_MTU + ifac_size unescaped bytes are delivered, others dropped and
 *    counted (the reference's ReceiveBuffer with min HEADER_MINSIZE).
 *  - Types. "BackboneInterface" is a listener unless the section has target_host (or
 *    remote), in which case it is a client; "BackboneClientInterface" is always a
 *    client. Reticulum.py's aliases apply to both: port sets listen_port and
 *    target_port, remote sets target_host, listen_on sets listen_ip.
 *  - HW_MTU: both classes autoconfigure it from the bitrate (option "bitrate" when
 *    >= 5, else the 100 Mbit/s guess) through Interface.optimise_mtu's tiers, so a
 *    default Backbone interface accepts 32768 + 16 bytes. A child takes its
 *    listener's bitrate, HW_MTU and IFAC size.
 *  - Listener: device (a kernel interface: its first IPv4 address, or IPv6 when
 *    prefer_ipv6 or it has no IPv4; fe80:: gets the interface as scope) or listen_ip
 *    resolved preferring IPv4 unless prefer_ipv6; SO_REUSEADDR. Accepted sockets get
 *    SO_RCVBUF 32768, TCP_NODELAY, TCP_USER_TIMEOUT 24 s and keepalive after 5 s every
 *    2 s, 12 probes. A listener's send is a no-op; children's traffic is added to its
 *    byte counts.
 *  - Fast-flapping block (block_fast_flapping, default yes): a child whose peer hangs
 *    up within fast_flapping_threshold seconds (20) counts a flap against the peer's
 *    IP; beyond fast_flapping_grace flaps (5) further connections from that IP are
 *    closed at once until fast_flapping_block_time minutes (720) pass without a flap.
 *    The reference keeps this table per process; rnsc per listener (no global state).
 *  - Egress control, per connection (children and clients, as the reference's
 *    control thread sees every socket in its epoll set): the send queue holds at most
 *    4 MiB (tx_hwm); a queue above 128 KiB that the measured drain rate would not
 *    clear within 10 s, or that has not moved for 3 one-second ticks, gates new frames
 *    until it would clear within 5 s or falls to 128 KiB; refused frames are dropped
 *    and counted (RNSC_IFACE_DROP_TXQUEUE). No drain progress for 12 s
 *    (DP_EC_DEAD_TIME) tears the connection down (a client then reconnects).
 *  - Client: a connect attempt times out after 5 s; after a failure or a lost
 *    connection it waits 5 s (RECONNECT_WAIT) before every further attempt, no
 *    backoff; max_reconnect_tries caps one reconnect round. prefer_ipv6 picks the
 *    address family among the resolved addresses. rnsc extension: reconnect_wait
 *    (seconds), for tests.
 *
 * Bounds rnsc adds (the reference has none): a listener keeps at most max_clients
 * children (default 1024; rnsc extension); a connection beyond that, or from a blocked
 * IP, is accepted and closed at once and counted as RNSC_IFACE_DROP_REFUSED. When the
 * process runs out of descriptors, accepting pauses for 250 ms instead of spinning.
 * The flap table holds at most 4096 IPs (the stalest entry makes room).
 *
 * Batching (rnsc's own, not visible on the wire): frames sent during a loop iteration are
 * queued and written with one send() by a zero-delay timer that runs at the end of that
 * iteration (or at once when 32 KiB are pending), and reads take up to 64 KiB per call,
 * so a relay makes a few system calls per burst instead of one per frame. The 32 KiB
 * threshold lets the next hop start on a burst sooner than 16 or 64 KiB did. The queue is
 * also written at once when its frames came slower than one per 20 us (FLUSH_SLOW_NS): when
 * each frame costs real work (a proof signed or verified per packet), holding them all to
 * the end of the iteration turned two busy peers into a ping-pong of 16-frame batches,
 * each idle while the other worked; a relay's frames (a few us each) still go out in
 * 32 KiB writes, because a flat age limit slowed the raw-transport relay. The runs behind
 * each choice: bench/results/design-notes.md, "Backbone write batching".
 *
 * Not done: the reference's dataplane ingress control (it gates reading from the
 * busiest connection when Transport's inbound queue is deep; rnsc has no such queue
 * at this layer).
 *
 * The reference refuses to construct BackboneInterface outside Linux and Android (it
 * is built on epoll); rnsc's loop is epoll too, so the plugin is Linux-only as well.
 *
 * Threading and ownership: iface_abi.h. A listener owns its flap table; the runtime
 * owns every child's lifetime once spawn() succeeded.
 */
#define _GNU_SOURCE /* accept4 */
#include <errno.h>
#include <stdarg.h>
#include <netdb.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hdlc.h"
#include "hdlc_rx.h"
#include "iface_abi.h"
#include "iface_plugin.h"
#include "iface_net.h"
#include "txq.h"

#define BB_BITRATE_GUESS 100000000u /* BackboneInterface / BackboneClientInterface.BITRATE_GUESS */
#define BB_DEFAULT_IFAC_SIZE 16u
#define BB_RCVBUF 32768 /* DP_IC_RCVBUF on accepted sockets */
#define RET_MTU 500u    /* Reticulum.MTU */
#define RET_MINIMUM_BITRATE 5
#define NS_PER_S UINT64_C(1000000000)
#define RECONNECT_WAIT_NS (5 * NS_PER_S)
#define CONNECT_TIMEOUT_NS (5 * NS_PER_S)
#define EC_DEAD_NS (12 * NS_PER_S)    /* DP_EC_DEAD_TIME */
#define EC_TICK_NS (1 * NS_PER_S)     /* DP_EC_INTERVAL */
#define EC_MID_WM ((size_t)128 << 10) /* DP_EC_MID_WM */
#define EC_STALL_TICKS 3              /* DP_EC_STALL_TICKS */
#define EC_MAX_ETA 10.0               /* DP_EC_MAX_ETA, seconds */
#define EC_RELEASE_ETA 5.0            /* DP_EC_RELEASE_ETA */
#define ACCEPT_PAUSE_NS (250 * UINT64_C(1000000))
#define TXQ_MAX ((size_t)4 << 20) /* Interface.tx_hwm */
#define READ_CHUNK 65536
#define FLUSH_AT ((size_t)32 << 10) /* queued bytes that are written at once, not at the flush */
#define FLUSH_SLOW_NS (20 * UINT64_C(1000)) /* frames queued slower than this: write at once */
#define DEFAULT_MAX_CLIENTS 1024
#define FLAP_TABLE_MAX 4096

enum { K_CLIENT = 1, K_SERVER = 2, K_CHILD = 3 };

typedef rnsc_iface_inst bb_inst;

typedef struct flap {
	char ip[64];
	uint64_t first_ns, last_ns;
	uint32_t flaps;
} flap;

typedef struct bb_if bb_if;
struct bb_if {
	bb_inst *inst;
	int kind;
	const rnsc_iface_host_api *host;
	char name[160];
	char addr[256]; /* target for clients, bind address for listeners, peer IP for children */
	uint16_t port;
	uint16_t local_port;
	int prefer_ipv6;
	int fd;
	rnsc_iface_watch *w;
	unsigned interest;
	int connecting;
	int online;
	rnsc_iface_timer *timer; /* client: connect/reconnect; listener: accept pause */
	uint64_t reconnect_wait_ns;
	int64_t max_tries; /* -1: unlimited */
	int64_t attempts;
	int reconnecting;
	int never_connected;
	int given_up;
	/* receive */
	rnsc_hdlc_decoder dec;
	rnsc_hdlc_stats seen;
	uint8_t *rxbuf;
	size_t max_frame;
	/* transmit queue: bytes [tx_off, tx_len) are pending */
	uint8_t *tx;
	size_t tx_off, tx_len, tx_cap;
	/* egress control (clients and children): the reference's 1 s evaluation */
	rnsc_iface_timer *ec_timer;
	int ec_armed;
	rnsc_iface_timer *fl_timer; /* end-of-iteration flush of the send queue */
	int fl_armed;
	uint64_t q_first_ns; /* when the oldest pending byte was queued (CLOCK_MONOTONIC) */
	uint64_t q_frames;   /* frames queued since then */
	int tx_stalled;
	unsigned ec_zero_ticks;
	uint64_t last_drain_ns;
	uint64_t tx_sent, ec_prev_sent;
	/* stats */
	uint64_t rxb, txb, rxp, txp;
	uint32_t reconnects;
	size_t hw_mtu;
	uint64_t bitrate;
	size_t ifac_size;
	/* child */
	uint64_t spawned_ns;
	/* listener */
	bb_if *parent;
	bb_if *child_head;
	bb_if *sib_next, *sib_prev;
	uint32_t n_children;
	uint32_t max_clients;
	int flap_block;
	uint64_t flap_threshold_ns, flap_expiry_ns;
	int64_t flap_grace;
	flap *flaps;
	size_t n_flaps;
};

/* ---- helpers --------------------------------------------------------------------------- */

static void *xalloc(bb_inst *inst, size_t n)
{
	void *p = inst->api->alloc(inst->api->host_ctx, n);
	if (p)
		memset(p, 0, n);
	return p;
}

static void xfree(bb_inst *inst, void *p)
{
	if (p)
		inst->api->free(inst->api->host_ctx, p);
}

__attribute__((format(printf, 3, 4))) static void blog(bb_if *t, int level, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	t->host->log(t->host->hctx, level, msg);
}

static void set_timeouts(int fd)
{
	/* BackboneClientInterface.set_timeouts_linux (i2p_tunneled does not change it). */
	int user_timeout = 24 * 1000, one = 1, idle = 5, intvl = 2, cnt = 12;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof(user_timeout));
	(void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
}

/* get_address_for_host's choice: the first entry of the preferred family, else the first. */
static struct addrinfo *pick_family(struct addrinfo *ai, int prefer_ipv6)
{
	for (struct addrinfo *e = ai; e; e = e->ai_next)
		if (e->ai_family == (prefer_ipv6 ? AF_INET6 : AF_INET))
			return e;
	return ai;
}

static int rx_setup(bb_if *t)
{
	/* With HW_MTU None (bitrate below 62500) the reference could not read at all; rnsc
	 * falls back to Reticulum.MTU. */
	t->max_frame = (t->hw_mtu ? t->hw_mtu : RET_MTU) + t->ifac_size;
	t->rxbuf = xalloc(t->inst, t->max_frame);
	if (!t->rxbuf)
		return RNSC_ERR_NOMEM;
	rnsc_hdlc_decoder_init(&t->dec, t->rxbuf, t->max_frame);
	rnsc_hdlc_decoder_set_min(&t->dec, RNSC_HDLC_REF_MIN_FRAME);
	return 0;
}

/* ---- fast-flapping table (listener) ------------------------------------------------------ */

static flap *flap_find(bb_if *s, const char *ip)
{
	for (size_t k = 0; k < s->n_flaps; k++)
		if (strcmp(s->flaps[k].ip, ip) == 0)
			return &s->flaps[k];
	return NULL;
}

/* Drops entries whose last flap is older than the block time (blocked_ip_count). */
static void flap_expire(bb_if *s, uint64_t now)
{
	size_t k = 0;
	while (k < s->n_flaps) {
		if (now - s->flaps[k].last_ns > s->flap_expiry_ns) {
			blog(s, RNSC_LOG_DEBUG, "Fast-flapping block expired for %s",
			     s->flaps[k].ip);
			s->flaps[k] = s->flaps[--s->n_flaps];
		} else {
			k++;
		}
	}
}

static int flap_blocked(bb_if *s, const char *ip, uint64_t now)
{
	if (!s->flap_block || !s->n_flaps)
		return 0;
	flap_expire(s, now);
	flap *f = flap_find(s, ip);
	return f && (int64_t)f->flaps > s->flap_grace;
}

static void flap_record(bb_if *s, const char *ip, uint64_t connected_ns, uint64_t now)
{
	if (!s->flaps) {
		s->flaps = xalloc(s->inst, FLAP_TABLE_MAX * sizeof(flap));
		if (!s->flaps)
			return;
	}
	flap *f = flap_find(s, ip);
	if (!f) {
		if (s->n_flaps == FLAP_TABLE_MAX) { /* make room: forget the stalest entry */
			size_t old = 0;
			for (size_t k = 1; k < s->n_flaps; k++)
				if (s->flaps[k].last_ns < s->flaps[old].last_ns)
					old = k;
			s->flaps[old] = s->flaps[--s->n_flaps];
		}
		f = &s->flaps[s->n_flaps++];
		memset(f, 0, sizeof(*f));
		snprintf(f->ip, sizeof(f->ip), "%.63s", ip);
		f->first_ns = now;
	}
	f->last_ns = now;
	f->flaps++;
	blog(s, RNSC_LOG_DEBUG,
	     "Client from %s is fast flapping, connection time was %.3f s, %u fast flaps", ip,
	     (double)connected_ns / 1e9, (unsigned)f->flaps);
	if ((int64_t)f->flaps > s->flap_grace)
		blog(s, RNSC_LOG_WARNING,
		     "Ignoring further connections from %s due to fast-flapping", ip);
}

/* ---- connection I/O (clients and children) -------------------------------------------- */

static void schedule_reconnect(bb_if *t);

static void set_interest(bb_if *t, unsigned interest)
{
	if (t->w && t->interest != interest &&
	    t->host->watch_modify(t->host->hctx, t->w, interest) == 0)
		t->interest = interest;
}

static void drop_conn(bb_if *t)
{
	if (rnsc_hdlc_rx_partial(&t->dec)) /* a frame cut short by the disconnect */
		t->host->drop(t->host->hctx, RNSC_IFACE_DROP_PARTIAL, 1);
	if (t->rxbuf)
		rnsc_hdlc_decoder_reset(&t->dec);
	if (t->w) {
		t->host->watch_remove(t->host->hctx, t->w);
		t->w = NULL;
	}
	if (t->fd >= 0) {
		shutdown(t->fd, SHUT_RDWR);
		close(t->fd);
		t->fd = -1;
	}
	t->tx_off = t->tx_len = 0;
	if (t->fl_armed) {
		t->host->timer_stop(t->host->hctx, t->fl_timer);
		t->fl_armed = 0;
	}
	t->connecting = 0;
	t->tx_stalled = 0;
	t->ec_zero_ticks = 0;
	if (t->ec_timer) {
		t->host->timer_stop(t->host->hctx, t->ec_timer);
		t->ec_armed = 0;
	}
	if (t->online) {
		t->online = 0;
		t->host->set_online(t->host->hctx, 0);
	}
}

/* The socket is gone: an initiator reconnects, a child is torn down (the reference's
 * receive(b"") path), counting a fast flap against the peer when it was short-lived. */
static void lost(bb_if *t, const char *why, int peer_closed)
{
	int was_online = t->online;
	drop_conn(t);
	if (t->kind == K_CLIENT) {
		if (was_online)
			blog(t, RNSC_LOG_WARNING,
			     "The socket for %s was closed (%s), attempting to reconnect...",
			     t->name, why);
		schedule_reconnect(t);
		return;
	}
	blog(t, RNSC_LOG_DEBUG, "The socket for remote client %s was closed (%s).", t->name, why);
	bb_if *s = t->parent;
	if (peer_closed && s && s->flap_block) {
		uint64_t now = t->host->now_ns(t->host->hctx);
		uint64_t up = now - t->spawned_ns;
		if (up < s->flap_threshold_ns)
			flap_record(s, t->addr, up, now);
	}
	t->host->request_close(t->host->hctx);
}

static int on_frame(void *ud, const uint8_t *frame, size_t len)
{
	bb_if *t = ud;
	t->rxb += len;
	t->rxp++;
	if (t->parent) {
		t->parent->rxb += len;
		t->parent->rxp++;
	}
	t->host->deliver(t->host->hctx, frame, len);
	/* deliver may have made the transport answer and fail, dropping the connection. */
	return t->fd < 0 ? RNSC_ERR_STATE : 0;
}

static void do_read(bb_if *t)
{
	uint8_t buf[READ_CHUNK];
	/* Bounded so one busy peer cannot starve the loop. */
	for (int round = 0; round < 16 && t->fd >= 0; round++) {
		ssize_t n = recv(t->fd, buf, sizeof(buf), 0);
		if (n > 0) {
			(void)rnsc_hdlc_decoder_feed(&t->dec, buf, (size_t)n, on_frame, t);
			rnsc_hdlc_rx_report(t->host, &t->dec, &t->seen);
			if ((size_t)n < sizeof(buf))
				return;
			continue;
		}
		if (n == 0) {
			lost(t, "end of stream", 1);
			return;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			lost(t, strerror(errno), 1);
		return;
	}
}

/* Egress control runs every second while the queue is not empty (with an empty queue
 * the reference's evaluation only resets its state). */
static void ec_arm(bb_if *t)
{
	if (t->ec_armed || !t->ec_timer)
		return;
	t->ec_prev_sent = t->tx_sent;
	if (t->host->timer_start(t->host->hctx, t->ec_timer, EC_TICK_NS, EC_TICK_NS) == 0)
		t->ec_armed = 1;
}

static void do_write(bb_if *t)
{
	while (t->fd >= 0 && t->tx_off < t->tx_len) {
		ssize_t n = send(t->fd, t->tx + t->tx_off, t->tx_len - t->tx_off, MSG_NOSIGNAL);
		if (n > 0) {
			t->tx_off += (size_t)n;
			t->txb += (uint64_t)n;
			t->tx_sent += (uint64_t)n;
			if (t->parent)
				t->parent->txb += (uint64_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			set_interest(t, RNSC_IFACE_EV_READ | RNSC_IFACE_EV_WRITE);
			ec_arm(t);
			return;
		}
		lost(t, n < 0 ? strerror(errno) : "write returned 0", 0);
		return;
	}
	t->tx_off = t->tx_len = 0;
	if (t->fd >= 0)
		set_interest(t, RNSC_IFACE_EV_READ);
}

static void fl_timer_cb(void *ud)
{
	bb_if *t = ud;
	t->fl_armed = 0;
	if (!(t->interest & RNSC_IFACE_EV_WRITE))
		do_write(t);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* Writes the queue at the end of this loop iteration (see Batching above). */
static void flush_later(bb_if *t)
{
	if (t->interest & RNSC_IFACE_EV_WRITE)
		return; /* the socket is full: io_cb writes when it drains */
	/* the first frame of a queue cannot be late yet: no clock read for it */
	if (t->tx_len - t->tx_off >= FLUSH_AT || !t->fl_timer ||
	    (t->q_frames > 1 && mono_ns() - t->q_first_ns >= FLUSH_SLOW_NS * t->q_frames)) {
		do_write(t);
		return;
	}
	if (t->fl_armed)
		return;
	if (t->host->timer_start(t->host->hctx, t->fl_timer, 0, 0) == 0)
		t->fl_armed = 1;
	else
		do_write(t);
}

static void connected(bb_if *t)
{
	set_timeouts(t->fd);
	t->connecting = 0;
	t->reconnecting = 0;
	t->host->timer_stop(t->host->hctx, t->timer);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char ip[64];
	if (getsockname(t->fd, (struct sockaddr *)&ss, &sl) == 0)
		rnsc_iface_sockaddr_str((struct sockaddr *)&ss, ip, sizeof(ip), &t->local_port);
	if (!t->never_connected) {
		t->reconnects++;
		blog(t, RNSC_LOG_INFO, "Reconnected socket for %s.", t->name);
	} else {
		blog(t, RNSC_LOG_DEBUG, "TCP connection for %s established", t->name);
	}
	t->never_connected = 0;
	t->online = 1;
	set_interest(t, RNSC_IFACE_EV_READ);
	t->host->set_online(t->host->hctx, 1);
}

static void io_cb(void *ud, int fd, unsigned events)
{
	bb_if *t = ud;
	(void)fd;
	if (t->connecting) {
		int err = 0;
		socklen_t l = sizeof(err);
		if (getsockopt(t->fd, SOL_SOCKET, SO_ERROR, &err, &l) != 0)
			err = errno;
		if (err == 0 && !(events & RNSC_IFACE_EV_WRITE) && (events & RNSC_IFACE_EV_ERROR))
			err = ECONNREFUSED;
		if (err) {
			blog(t, t->never_connected ? RNSC_LOG_WARNING : RNSC_LOG_DEBUG,
			     "Connection attempt for %s failed: %s", t->name, strerror(err));
			lost(t, strerror(err), 0);
			return;
		}
		if (events & RNSC_IFACE_EV_WRITE)
			connected(t);
		return;
	}
	if (events & (RNSC_IFACE_EV_READ | RNSC_IFACE_EV_ERROR))
		do_read(t); /* an error or hang-up shows up as a failing or empty read */
	if (t->fd >= 0 && (events & RNSC_IFACE_EV_WRITE))
		do_write(t);
}

/* ---- client connect and reconnect ------------------------------------------------------ */

static void start_connect(bb_if *t)
{
	char port[8];
	snprintf(port, sizeof(port), "%u", (unsigned)t->port);
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_protocol = IPPROTO_TCP},
			*ai = NULL;
	int g = getaddrinfo(t->addr, port, &hints, &ai);
	if (g != 0 || !ai) {
		blog(t, RNSC_LOG_WARNING, "Connection attempt for %s failed: %s", t->name,
		     gai_strerror(g));
		if (ai)
			freeaddrinfo(ai);
		schedule_reconnect(t);
		return;
	}
	struct addrinfo *pick = pick_family(ai, t->prefer_ipv6);
	int fd = socket(pick->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
	if (fd < 0) {
		freeaddrinfo(ai);
		blog(t, RNSC_LOG_ERROR, "socket() for %s failed: %s", t->name, strerror(errno));
		schedule_reconnect(t);
		return;
	}
	int one = 1;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	int rc = connect(fd, pick->ai_addr, pick->ai_addrlen);
	freeaddrinfo(ai);
	t->fd = fd;
	if (rc != 0 && errno != EINPROGRESS) {
		blog(t, t->never_connected ? RNSC_LOG_WARNING : RNSC_LOG_DEBUG,
		     "Connection attempt for %s failed: %s", t->name, strerror(errno));
		lost(t, strerror(errno), 0);
		return;
	}
	t->connecting = 1;
	t->interest = RNSC_IFACE_EV_WRITE;
	if (t->host->watch_add(t->host->hctx, fd, t->interest, io_cb, t, &t->w) != 0) {
		lost(t, "cannot watch the socket", 0);
		return;
	}
	if (rc == 0) {
		connected(t);
		return;
	}
	t->host->timer_start(t->host->hctx, t->timer, CONNECT_TIMEOUT_NS, 0);
}

static void client_timer_cb(void *ud)
{
	bb_if *t = ud;
	if (t->connecting) { /* INITIAL_CONNECT_TIMEOUT passed */
		blog(t, RNSC_LOG_DEBUG, "Connection attempt for %s timed out", t->name);
		lost(t, "timed out", 0);
		return;
	}
	if (t->fd >= 0 || t->given_up)
		return;
	if (t->reconnecting) {
		t->attempts++;
		if (t->max_tries >= 0 && t->attempts > t->max_tries) {
			blog(t, RNSC_LOG_WARNING, "Max reconnection attempts reached for %s",
			     t->name);
			blog(t, RNSC_LOG_ERROR,
			     "The interface %s experienced an unrecoverable error and is being torn down.",
			     t->name);
			t->given_up = 1;
			return;
		}
	}
	start_connect(t);
}

static void schedule_reconnect(bb_if *t)
{
	if (t->given_up)
		return;
	if (!t->reconnecting) {
		t->reconnecting = 1;
		t->attempts = 0;
		if (t->never_connected)
			blog(t, RNSC_LOG_WARNING,
			     "Leaving %s unconnected and retrying connection in %.1f seconds.",
			     t->name, (double)t->reconnect_wait_ns / 1e9);
	}
	t->host->timer_start(t->host->hctx, t->timer, t->reconnect_wait_ns, 0);
}

/* ---- children -------------------------------------------------------------------------- */

/* BackboneInterface._dp_ec_evaluate: no drain progress for 12 s tears the connection
 * down; a queue above 128 KiB that would take more than 10 s to clear at the measured
 * rate, or that has not moved for 3 ticks, gates new frames (dropped and counted) until
 * the rate would clear it within 5 s or it falls to 128 KiB. */
static void ec_timer_cb(void *ud)
{
	bb_if *t = ud;
	uint64_t now = t->host->now_ns(t->host->hctx);
	uint64_t drained = t->tx_sent - t->ec_prev_sent;
	size_t buffered = t->tx_len - t->tx_off;
	t->ec_prev_sent = t->tx_sent;
	if (t->fd < 0 || buffered == 0) {
		t->ec_zero_ticks = 0;
		t->tx_stalled = 0;
		t->host->timer_stop(t->host->hctx, t->ec_timer);
		t->ec_armed = 0;
		return;
	}
	if (now - t->last_drain_ns >= EC_DEAD_NS) {
		blog(t, RNSC_LOG_NOTICE,
		     "No egress control drain progress for 12s on %s, tearing down", t->name);
		lost(t, "egress stalled", 0);
		return;
	}
	if (drained > 0) {
		t->last_drain_ns = now;
		t->ec_zero_ticks = 0;
		double eta = (double)buffered / ((double)drained / ((double)EC_TICK_NS / 1e9));
		if (buffered > EC_MID_WM && eta > EC_MAX_ETA) {
			if (!t->tx_stalled)
				blog(t, RNSC_LOG_DEBUG,
				     "Egress control drain ETA of %.1fs exceeds maximum on %s, gating outbound",
				     eta, t->name);
			t->tx_stalled = 1;
		} else if (eta < EC_RELEASE_ETA || buffered <= EC_MID_WM) {
			if (t->tx_stalled)
				blog(t, RNSC_LOG_DEBUG,
				     "Egress control drain recovered on %s, resuming outbound",
				     t->name);
			t->tx_stalled = 0;
		}
	} else if (buffered > EC_MID_WM) {
		if (++t->ec_zero_ticks >= EC_STALL_TICKS) {
			if (!t->tx_stalled)
				blog(t, RNSC_LOG_DEBUG,
				     "No egress control drain progress on %s, gating outbound",
				     t->name);
			t->tx_stalled = 1;
		}
	} else {
		t->ec_zero_ticks = 0;
		t->tx_stalled = 0;
	}
}

static void child_unlink(bb_if *c)
{
	bb_if *p = c->parent;
	if (!p)
		return;
	if (c->sib_prev)
		c->sib_prev->sib_next = c->sib_next;
	else
		p->child_head = c->sib_next;
	if (c->sib_next)
		c->sib_next->sib_prev = c->sib_prev;
	p->n_children--;
	c->parent = NULL;
}

static void free_if(bb_if *t)
{
	xfree(t->inst, t->rxbuf);
	xfree(t->inst, t->tx);
	xfree(t->inst, t->flaps);
	xfree(t->inst, t);
}

static void refuse(bb_if *s, int cfd, const char *ip, const char *why)
{
	blog(s, RNSC_LOG_DEBUG, "Refusing incoming connection from %s: %s", ip, why);
	close(cfd);
	s->host->drop(s->host->hctx, RNSC_IFACE_DROP_REFUSED, 1);
}

static void accept_one(bb_if *s, int cfd, const struct sockaddr *sa)
{
	char ip[64];
	uint16_t port;
	rnsc_iface_sockaddr_str(sa, ip, sizeof(ip), &port);
	uint64_t now = s->host->now_ns(s->host->hctx);
	if (flap_blocked(s, ip, now)) {
		refuse(s, cfd, ip, "fast-flapping");
		return;
	}
	if (s->n_children >= s->max_clients) {
		refuse(s, cfd, ip, "max_clients reached");
		return;
	}
	bb_if *c = xalloc(s->inst, sizeof(*c));
	if (!c) {
		close(cfd);
		return;
	}
	c->inst = s->inst;
	c->kind = K_CHILD;
	c->fd = -1;
	/* incoming_connection: the child takes the listener's bitrate, HW_MTU and IFAC size. */
	c->bitrate = s->bitrate;
	c->hw_mtu = s->hw_mtu;
	c->ifac_size = s->ifac_size;
	snprintf(c->name, sizeof(c->name), "Client on %.140s", s->name);
	snprintf(c->addr, sizeof(c->addr), "%s", ip);
	c->port = port;
	c->local_port = s->local_port;
	if (rx_setup(c) != 0) {
		free_if(c);
		close(cfd);
		return;
	}
	int one = 1, rcvbuf = BB_RCVBUF;
	(void)setsockopt(cfd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	set_timeouts(cfd);
	(void)setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (s->host->spawn(s->host->hctx, c, c->name, &c->host) != 0) {
		free_if(c);
		close(cfd);
		return;
	}
	/* From here the runtime owns c's lifetime (it will call close). */
	c->parent = s;
	c->sib_next = s->child_head;
	if (s->child_head)
		s->child_head->sib_prev = c;
	s->child_head = c;
	s->n_children++;
	c->fd = cfd;
	c->spawned_ns = now;
	if (c->host->timer_new(c->host->hctx, ec_timer_cb, c, &c->ec_timer) != 0 ||
	    c->host->timer_new(c->host->hctx, fl_timer_cb, c, &c->fl_timer) != 0) {
		lost(c, "cannot create a timer", 0);
		return;
	}
	c->interest = RNSC_IFACE_EV_READ;
	if (c->host->watch_add(c->host->hctx, cfd, c->interest, io_cb, c, &c->w) != 0) {
		lost(c, "cannot watch the socket", 0);
		return;
	}
	c->online = 1;
	blog(c, RNSC_LOG_VERBOSE,
	     "Spawned new BackboneClient Interface: BackboneInterface[%s/%s:%u]", c->name, c->addr,
	     (unsigned)c->port);
	c->host->set_online(c->host->hctx, 1);
}

static void listen_cb(void *ud, int fd, unsigned events);

static void listener_timer_cb(void *ud)
{
	bb_if *s = ud;
	set_interest(s, RNSC_IFACE_EV_READ); /* the accept pause is over */
}

static void listen_cb(void *ud, int fd, unsigned events)
{
	bb_if *s = ud;
	(void)events;
	for (int k = 0; k < 64; k++) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		int cfd = accept4(fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM) {
				/* The pending connection stays queued and the socket readable: stop
				 * watching for a moment rather than spin on a level-triggered fd. */
				blog(s, RNSC_LOG_ERROR, "accept on %s failed: %s; pausing", s->name,
				     strerror(errno));
				if (s->timer &&
				    s->host->watch_modify(s->host->hctx, s->w, 0) == 0) {
					s->interest = 0;
					s->host->timer_start(s->host->hctx, s->timer,
							     ACCEPT_PAUSE_NS, 0);
				}
			} else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
				   errno != ECONNABORTED) {
				blog(s, RNSC_LOG_WARNING,
				     "Accepting socket failed for incoming connection: %s",
				     strerror(errno));
			}
			return;
		}
		accept_one(s, cfd, (struct sockaddr *)&ss);
	}
}

/* ---- config ---------------------------------------------------------------------------- */

static const char *const bb_types[] = {"BackboneInterface", "BackboneClientInterface", NULL};

static int cfg_port(const rnsc_iface_config *cfg, const char *key, int64_t *v, int *set)
{
	int rc = cfg->get_int(cfg->cctx, key, v);
	if (rc == RNSC_ERR_NOTFOUND)
		return 0;
	if (rc)
		return rc;
	if (*v < 0 || *v > 65535)
		return cfg->fail(cfg->cctx, key, RNSC_ERR_CONFIG_VALUE,
				 "a TCP port must be between 0 and 65535");
	*set = 1;
	return 0;
}

/* Reticulum.py's aliases: the later name wins. Sets *key to the option that gave it. */
static int cfg_str_alias(const rnsc_iface_config *cfg, const char *name, const char *alias,
			 const char **out, const char **key)
{
	int rc = cfg->get_str(cfg->cctx, alias, out);
	if (rc == 0) {
		*key = alias;
		return 0;
	}
	if (rc != RNSC_ERR_NOTFOUND)
		return rc;
	rc = cfg->get_str(cfg->cctx, name, out);
	if (rc == 0)
		*key = name;
	else if (rc == RNSC_ERR_NOTFOUND)
		*out = NULL;
	else
		return rc;
	return 0;
}

static int cfg_port_alias(const rnsc_iface_config *cfg, const char *name, int64_t *v, int *set,
			  const char **key)
{
	int rc, p = 0;
	int64_t pv = 0;
	if ((rc = cfg_port(cfg, "port", &pv, &p)))
		return rc;
	if (p) {
		*v = pv;
		*set = 1;
		*key = "port";
		return 0;
	}
	*key = name;
	return cfg_port(cfg, name, v, set);
}

/* get_address_for_if: IPv6 when preferred or when there is no IPv4; else the IPv4. */
static int device_address(const char *dev, int prefer_ipv6, uint16_t port,
			  struct sockaddr_storage *out, socklen_t *outlen, char *ip, size_t ipcap,
			  char *why, size_t whycap)
{
	struct ifaddrs *ifa = NULL;
	if (getifaddrs(&ifa) != 0) {
		snprintf(why, whycap, "cannot list kernel interfaces: %s", strerror(errno));
		return -1;
	}
	const struct sockaddr_in *v4 = NULL;
	const struct sockaddr_in6 *v6 = NULL;
	int found = 0;
	for (struct ifaddrs *e = ifa; e; e = e->ifa_next) {
		if (strcmp(e->ifa_name, dev) != 0)
			continue;
		found = 1;
		if (!e->ifa_addr)
			continue;
		if (e->ifa_addr->sa_family == AF_INET && !v4)
			v4 = (const void *)e->ifa_addr;
		if (e->ifa_addr->sa_family == AF_INET6 && !v6)
			v6 = (const void *)e->ifa_addr;
	}
	int rc = 0;
	memset(out, 0, sizeof(*out));
	if (v6 && (prefer_ipv6 || !v4)) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)out;
		*a = *v6;
		a->sin6_port = htons(port);
		if (IN6_IS_ADDR_LINKLOCAL(&a->sin6_addr))
			a->sin6_scope_id = if_nametoindex(dev); /* fe80:: needs its interface */
		*outlen = sizeof(*a);
		inet_ntop(AF_INET6, &a->sin6_addr, ip, (socklen_t)ipcap);
	} else if (v4) {
		struct sockaddr_in *a = (struct sockaddr_in *)out;
		*a = *v4;
		a->sin_port = htons(port);
		*outlen = sizeof(*a);
		inet_ntop(AF_INET, &a->sin_addr, ip, (socklen_t)ipcap);
	} else {
		snprintf(why, whycap,
			 found ? "no addresses available on kernel interface \"%s\" to bind to"
			       : "no kernel interface named \"%s\"",
			 dev);
		rc = -1;
	}
	freeifaddrs(ifa);
	return rc;
}

static int open_server(bb_if *t, const rnsc_iface_config *cfg)
{
	const char *ip = NULL, *ip_key = "listen_ip", *port_key = "listen_port", *device = NULL;
	int64_t port = 0, v;
	int port_set = 0, rc, b;
	double f;
	char msg[384];

	if ((rc = cfg_port_alias(cfg, "listen_port", &port, &port_set, &port_key)))
		return rc;
	if (!port_set)
		return cfg->fail(cfg->cctx, "listen_port", RNSC_ERR_CONFIG_VALUE,
				 "no TCP port configured");
	if ((rc = cfg_str_alias(cfg, "listen_ip", "listen_on", &ip, &ip_key)))
		return rc;
	if ((rc = cfg->get_str(cfg->cctx, "device", &device)) && rc != RNSC_ERR_NOTFOUND)
		return rc;
	if (rc == RNSC_ERR_NOTFOUND)
		device = NULL;
	if (!device && !ip)
		return cfg->fail(cfg->cctx, "listen_ip", RNSC_ERR_CONFIG_VALUE,
				 "no TCP bind IP configured");
	if ((rc = cfg->get_bool(cfg->cctx, "prefer_ipv6", &t->prefer_ipv6)) &&
	    rc != RNSC_ERR_NOTFOUND)
		return rc;

	t->flap_block = 1;
	t->flap_threshold_ns = 20 * NS_PER_S;
	t->flap_grace = 5;
	t->flap_expiry_ns = 12 * 3600 * NS_PER_S;
	if ((rc = cfg->get_bool(cfg->cctx, "block_fast_flapping", &b)) == 0)
		t->flap_block = b;
	else if (rc != RNSC_ERR_NOTFOUND)
		return rc;
	if ((rc = cfg->get_float(cfg->cctx, "fast_flapping_threshold", &f)) == 0) {
		if (!(f >= 0 && f <= 86400))
			return cfg->fail(cfg->cctx, "fast_flapping_threshold",
					 RNSC_ERR_CONFIG_VALUE,
					 "must be between 0 and 86400 seconds");
		t->flap_threshold_ns = (uint64_t)(f * 1e9);
	} else if (rc != RNSC_ERR_NOTFOUND) {
		return rc;
	}
	if ((rc = cfg->get_int(cfg->cctx, "fast_flapping_grace", &v)) == 0)
		t->flap_grace = v;
	else if (rc != RNSC_ERR_NOTFOUND)
		return rc;
	if ((rc = cfg->get_float(cfg->cctx, "fast_flapping_block_time", &f)) == 0) {
		if (!(f >= 0 && f <= 525600))
			return cfg->fail(cfg->cctx, "fast_flapping_block_time",
					 RNSC_ERR_CONFIG_VALUE,
					 "must be between 0 and 525600 minutes");
		t->flap_expiry_ns = (uint64_t)(f * 60 * 1e9);
	} else if (rc != RNSC_ERR_NOTFOUND) {
		return rc;
	}
	t->max_clients = DEFAULT_MAX_CLIENTS;
	if ((rc = cfg->get_int(cfg->cctx, "max_clients", &v)) == 0) {
		if (v < 1 || v > 1000000)
			return cfg->fail(cfg->cctx, "max_clients", RNSC_ERR_CONFIG_VALUE,
					 "must be between 1 and 1000000");
		t->max_clients = (uint32_t)v;
	} else if (rc != RNSC_ERR_NOTFOUND) {
		return rc;
	}

	struct sockaddr_storage ss;
	socklen_t sl = 0;
	char bound_ip[INET6_ADDRSTRLEN] = "";
	if (device) {
		ip_key = "device";
		if (device_address(device, t->prefer_ipv6, (uint16_t)port, &ss, &sl, bound_ip,
				   sizeof(bound_ip), msg, sizeof(msg)) != 0)
			return cfg->fail(cfg->cctx, "device", RNSC_ERR_NOENT,
					 msg); /* absent, not misconfigured */
		ip = bound_ip;
	} else {
		char portstr[8];
		snprintf(portstr, sizeof(portstr), "%u", (unsigned)port);
		struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_protocol = IPPROTO_TCP},
				*ai = NULL;
		int g = getaddrinfo(ip, portstr, &hints, &ai);
		if (g != 0 || !ai) {
			snprintf(msg, sizeof(msg), "cannot resolve \"%s\": %s", ip,
				 gai_strerror(g));
			if (ai)
				freeaddrinfo(ai);
			return cfg->fail(cfg->cctx, ip_key, RNSC_ERR_CONFIG_VALUE, msg);
		}
		struct addrinfo *pick = pick_family(ai, t->prefer_ipv6);
		memcpy(&ss, pick->ai_addr, pick->ai_addrlen);
		sl = pick->ai_addrlen;
		freeaddrinfo(ai);
	}
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
	if (fd < 0) {
		snprintf(msg, sizeof(msg), "socket() failed: %s", strerror(errno));
		return cfg->fail(cfg->cctx, NULL, RNSC_ERR_SYS, msg);
	}
	int one = 1;
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* The reference listens with a backlog of 1; a deeper queue lets a burst of honest
	 * clients in, and max_clients bounds what is kept. */
	if (bind(fd, (struct sockaddr *)&ss, sl) != 0 || listen(fd, SOMAXCONN) != 0) {
		int e = errno;
		close(fd);
		snprintf(msg, sizeof(msg), "cannot listen on %s port %u: %s", ip, (unsigned)port,
			 strerror(e));
		return cfg->fail(cfg->cctx, e == EADDRINUSE ? port_key : ip_key,
				 e == EADDRNOTAVAIL || e == EADDRINUSE ? RNSC_ERR_IO : RNSC_ERR_SYS,
				 msg);
	}
	struct sockaddr_storage bs;
	socklen_t bl = sizeof(bs);
	char tmp[INET6_ADDRSTRLEN];
	if (getsockname(fd, (struct sockaddr *)&bs, &bl) == 0)
		rnsc_iface_sockaddr_str((struct sockaddr *)&bs, tmp, sizeof(tmp), &t->local_port);
	snprintf(t->addr, sizeof(t->addr), "%s", ip);
	t->port = t->local_port;
	t->fd = fd;
	if ((rc = t->host->timer_new(t->host->hctx, listener_timer_cb, t, &t->timer))) {
		close(fd);
		t->fd = -1;
		return cfg->fail(cfg->cctx, NULL, rc, "cannot create a timer");
	}
	t->interest = RNSC_IFACE_EV_READ;
	if ((rc = t->host->watch_add(t->host->hctx, fd, t->interest, listen_cb, t, &t->w))) {
		close(fd);
		t->fd = -1;
		return cfg->fail(cfg->cctx, NULL, rc, "cannot watch the listening socket");
	}
	t->online = 1;
	t->host->set_online(t->host->hctx, 1);
	return 0;
}

static int open_client(bb_if *t, const rnsc_iface_config *cfg)
{
	const char *host = NULL, *host_key = "target_host", *port_key = "target_port";
	int64_t port = 0, v;
	int port_set = 0, rc, b;
	double wait;
	if ((rc = cfg_str_alias(cfg, "target_host", "remote", &host, &host_key)))
		return rc;
	if (!host)
		return cfg->fail(cfg->cctx, "target_host", RNSC_ERR_CONFIG_VALUE,
				 "no target host configured");
	if ((rc = cfg_port_alias(cfg, "target_port", &port, &port_set, &port_key)))
		return rc;
	if (!port_set || port == 0)
		return cfg->fail(cfg->cctx, port_key, RNSC_ERR_CONFIG_VALUE,
				 port_set ? "target port 0 cannot be connected to"
					  : "no target port configured");
	if (strlen(host) >= sizeof(t->addr))
		return cfg->fail(cfg->cctx, host_key, RNSC_ERR_CONFIG_VALUE, "host name too long");
	snprintf(t->addr, sizeof(t->addr), "%s", host);
	t->port = (uint16_t)port;
	if ((rc = cfg->get_bool(cfg->cctx, "prefer_ipv6", &t->prefer_ipv6)) &&
	    rc != RNSC_ERR_NOTFOUND)
		return rc;
	/* Read for validity only: the reference stores them but does not use them. */
	if ((rc = cfg->get_bool(cfg->cctx, "i2p_tunneled", &b)) && rc != RNSC_ERR_NOTFOUND)
		return rc;
	if ((rc = cfg->get_int(cfg->cctx, "connect_timeout", &v)) && rc != RNSC_ERR_NOTFOUND)
		return rc;
	t->max_tries = -1;
	if ((rc = cfg->get_int(cfg->cctx, "max_reconnect_tries", &v)) == 0)
		t->max_tries = v < 0 ? 0 : v;
	else if (rc != RNSC_ERR_NOTFOUND)
		return rc;
	t->reconnect_wait_ns = RECONNECT_WAIT_NS;
	if ((rc = cfg->get_float(cfg->cctx, "reconnect_wait", &wait)) == 0) {
		if (!(wait > 0 && wait <= 3600))
			return cfg->fail(cfg->cctx, "reconnect_wait", RNSC_ERR_CONFIG_VALUE,
					 "must be between 0 and 3600 seconds");
		t->reconnect_wait_ns = (uint64_t)(wait * 1e9);
	} else if (rc != RNSC_ERR_NOTFOUND) {
		return rc;
	}
	if ((rc = rx_setup(t)))
		return cfg->fail(cfg->cctx, NULL, rc, "out of memory");
	if ((rc = t->host->timer_new(t->host->hctx, client_timer_cb, t, &t->timer)) ||
	    (rc = t->host->timer_new(t->host->hctx, ec_timer_cb, t, &t->ec_timer)) ||
	    (rc = t->host->timer_new(t->host->hctx, fl_timer_cb, t, &t->fl_timer)))
		return cfg->fail(cfg->cctx, NULL, rc, "cannot create a timer");
	/* The reference connects synchronously in its constructor; rnsc makes the first
	 * attempt on the next loop tick so start-up never blocks on the network. */
	t->host->timer_start(t->host->hctx, t->timer, 0, 0);
	return 0;
}

/* ---- ops ------------------------------------------------------------------------------- */

static int bb_open(void *instp, const rnsc_iface_config *cfg, const rnsc_iface_host_api *host,
		   void **handle)
{
	bb_inst *inst = instp;
	int server, rc;
	const char *s;
	if (strcmp(cfg->type, "BackboneClientInterface") == 0) {
		server = 0;
	} else if (strcmp(cfg->type, "BackboneInterface") == 0) {
		/* Reticulum.py: a BackboneInterface section with a target is a client. */
		rc = cfg->get_str(cfg->cctx, "target_host", &s);
		if (rc == RNSC_ERR_NOTFOUND)
			rc = cfg->get_str(cfg->cctx, "remote", &s);
		if (rc && rc != RNSC_ERR_NOTFOUND)
			return rc;
		server = rc == RNSC_ERR_NOTFOUND;
	} else {
		return cfg->fail(cfg->cctx, "type", RNSC_ERR_NOTFOUND,
				 "not a Backbone interface type");
	}

	bb_if *t = xalloc(inst, sizeof(*t));
	if (!t)
		return cfg->fail(cfg->cctx, NULL, RNSC_ERR_NOMEM, "out of memory");
	t->inst = inst;
	t->host = host;
	t->kind = server ? K_SERVER : K_CLIENT;
	t->fd = -1;
	t->never_connected = 1;
	snprintf(t->name, sizeof(t->name), "%s", cfg->name);

	int64_t v;
	t->bitrate = BB_BITRATE_GUESS;
	if ((rc = cfg->get_int(cfg->cctx, "bitrate", &v)) == 0) {
		if (v >= RET_MINIMUM_BITRATE)
			t->bitrate = (uint64_t)v;
	} else if (rc != RNSC_ERR_NOTFOUND) {
		goto fail;
	}
	t->ifac_size = BB_DEFAULT_IFAC_SIZE;
	if ((rc = cfg->get_int(cfg->cctx, "ifac_size", &v)) == 0) {
		if (v > 8 * 512) {
			rc = cfg->fail(cfg->cctx, "ifac_size", RNSC_ERR_CONFIG_VALUE,
				       "IFAC size beyond 4096 bits");
			goto fail;
		}
		if (v >= 8)
			t->ifac_size = (size_t)(v / 8);
	} else if (rc != RNSC_ERR_NOTFOUND) {
		goto fail;
	}
	t->hw_mtu = rnsc_iface_optimise_mtu(t->bitrate); /* AUTOCONFIGURE_MTU on both classes */
	rc = server ? open_server(t, cfg) : open_client(t, cfg);
	if (rc)
		goto fail;
	*handle = t;
	return 0;
fail:
	if (t->w)
		host->watch_remove(host->hctx, t->w);
	if (t->timer)
		host->timer_del(host->hctx, t->timer);
	if (t->ec_timer)
		host->timer_del(host->hctx, t->ec_timer);
	if (t->fl_timer)
		host->timer_del(host->hctx, t->fl_timer);
	if (t->fd >= 0)
		close(t->fd);
	free_if(t);
	return rc;
}

static int bb_send(void *handle, const uint8_t *frame, size_t len)
{
	bb_if *t = handle;
	if (t->kind == K_SERVER)
		return 0; /* BackboneInterface.process_outgoing does nothing */
	if (!t->online || t->fd < 0) {
		t->host->drop(t->host->hctx, RNSC_IFACE_DROP_OFFLINE, 1);
		return RNSC_ERR_STATE;
	}
	/* Reserving the worst case (every byte escaped) spares a counting pass over the
	 * frame; the exact length is counted only when the worst case would pass the
	 * queue's limit, so what is refused stays the same. */
	size_t need = 2 * len + 2;
	if (len > TXQ_MAX || t->tx_len - t->tx_off + need > TXQ_MAX)
		need = rnsc_hdlc_encoded_len(frame, len);
	int rc = t->tx_stalled ? RNSC_ERR_TOOBIG
			       : rnsc_txq_reserve(t->inst, &t->tx, &t->tx_off, &t->tx_len,
						  &t->tx_cap, need, TXQ_MAX, 4096);
	if (rc) {
		t->host->drop(t->host->hctx, RNSC_IFACE_DROP_TXQUEUE, 1);
		return rc;
	}
	int n = rnsc_hdlc_encode(t->tx + t->tx_len, t->tx_cap - t->tx_len, frame, len);
	if (n < 0)
		return n;
	if (t->tx_len == 0) /* the dead-time clock starts when the queue fills */
		t->last_drain_ns = t->host->now_ns(t->host->hctx);
	if (t->tx_len == t->tx_off) {
		t->q_first_ns = mono_ns();
		t->q_frames = 0;
	}
	t->tx_len += (size_t)n;
	t->q_frames++;
	t->txp++;
	if (t->parent)
		t->parent->txp++;
	flush_later(t);
	return 0;
}

static int bb_stats(void *handle, rnsc_iface_stats *out)
{
	bb_if *t = handle;
	out->rx_bytes = t->rxb;
	out->tx_bytes = t->txb;
	out->rx_packets = t->rxp;
	out->tx_packets = t->txp;
	out->online = t->online;
	out->bitrate = t->bitrate;
	out->hw_mtu = t->hw_mtu;
	out->children = t->n_children;
	out->local_port = t->local_port;
	out->remote_port = t->kind == K_SERVER ? 0 : (t->online ? t->port : 0);
	out->reconnects = t->reconnects;
	return 0;
}

static void bb_close(void *handle)
{
	bb_if *t = handle;
	/* The runtime closes children first; unhook any left so none points at us. */
	while (t->child_head)
		child_unlink(t->child_head);
	child_unlink(t);
	if (t->timer) {
		t->host->timer_del(t->host->hctx, t->timer);
		t->timer = NULL;
	}
	if (t->ec_timer) {
		t->host->timer_del(t->host->hctx, t->ec_timer);
		t->ec_timer = NULL;
	}
	if (t->fl_timer) {
		t->host->timer_del(t->host->hctx, t->fl_timer);
		t->fl_timer = NULL;
	}
	if (t->w) {
		t->host->watch_remove(t->host->hctx, t->w);
		t->w = NULL;
	}
	if (t->fd >= 0) {
		if (t->kind != K_SERVER)
			shutdown(t->fd, SHUT_RDWR);
		close(t->fd);
		t->fd = -1;
	}
	free_if(t);
}

static int bb_describe(void *handle, char *buf, size_t cap)
{
	bb_if *t = handle;
	int v6 = strchr(t->addr, ':') != NULL;
	return snprintf(buf, cap, "BackboneInterface[%s/%s%s%s:%u]", t->name, v6 ? "[" : "",
			t->addr, v6 ? "]" : "", (unsigned)t->port);
}

RNSC_IFACE_PLUGIN("backbone", "BackboneInterface and BackboneClientInterface (HDLC over TCP)",
		  bb_types, bb_open, bb_send, bb_stats, bb_close, bb_describe)
