/* SPDX-License-Identifier: MIT */
/*
 * The "tcp" interface plugin: TCPClientInterface and TCPServerInterface as the reference
 * (rns 1.5.4, RNS/Interfaces/TCPInterface.py plus the interface set-up in Reticulum.py)
 * behaves on the wire:
 *
 *  - HDLC framing (src/framing/hdlc.c, compiled into this module): FLAG escape(p) FLAG out;
 *    in, frames of 20 .. HW_MTU + ifac_size unescaped bytes are delivered, others dropped.
 *  - HW_MTU: the reference builds the interface with 262144 and then, in its post-init,
 *    bitrate (option "bitrate" when >= 5, else the 10 Mbit/s guess) is mapped through
 *    Interface.optimise_mtu's tiers, so a default TCP interface accepts 16384 + 16 bytes.
 *    "fixed_mtu" (clients only, >= 500) turns the tiers off. A spawned connection inherits
 *    its server's HW_MTU, bitrate and IFAC size.
 *  - Sockets: TCP_NODELAY; after connecting (and on accepted sockets) TCP_USER_TIMEOUT
 *    24 s, keepalive after 5 s every 2 s, 12 probes (i2p_tunneled: 45 s, 10 s, 9 s, 5).
 *    Servers bind with SO_REUSEADDR; an IPv4 address is preferred unless prefer_ipv6.
 *  - Client reconnects: a connect attempt times out after 5 s (INITIAL_CONNECT_TIMEOUT;
 *    the reference reads connect_timeout but never uses it). After a failed first attempt
 *    or a lost connection the client waits RECONNECT_WAIT (5 s) before every further
 *    attempt: a fixed wait, no backoff, as the reference. max_reconnect_tries caps the
 *    attempts of one reconnect round; beyond it the interface stays down for good.
 *    rnsc extension: "reconnect_wait" (seconds) overrides the 5 s, for tests.
 *  - A server's send is a no-op (the reference's TCPServerInterface.process_outgoing);
 *    traffic goes through the spawned per-connection interfaces, whose byte counts are
 *    also added to the server's, as the reference does with rxb/txb.
 *
 *  - kiss_framing = yes (clients: a KISS TNC or software modem reached over TCP): frames
 *    are KISS data frames (FEND 00 escape(p) FEND, src/framing/kiss.c) instead of HDLC, as the
 *    reference's TCPClientInterface does; other KISS commands from the TNC are counted as
 *    garbage, frames of up to 19 bytes as runts. No tunnel is synthesized for such a
 *    client (the node reads the option too). The reference's server ignores the option
 *    and so does rnsc's, saying so in the log.
 *
 * Not supported yet (open fails naming the option): device = ...
 *
 * Non-blocking throughout: connect, accept, read and write run from loop callbacks; a
 * frame that cannot be written at once waits in a per-connection queue (4 MiB at most;
 * beyond it frames are dropped and counted, where the reference's sendall would block).
 */
#define _GNU_SOURCE /* accept4 */
#include <errno.h>
#include <stdarg.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hdlc.h"
#include "kiss.h"
#include "hdlc_rx.h"
#include "iface_abi.h"
#include "iface_plugin.h"
#include "iface_net.h"
#include "txq.h"

#define TCP_HW_MTU 262144u          /* TCPInterface.HW_MTU */
#define TCP_BITRATE_GUESS 10000000u /* TCPClientInterface / TCPServerInterface.BITRATE_GUESS */
#define TCP_DEFAULT_IFAC_SIZE 16u   /* DEFAULT_IFAC_SIZE */
#define RET_MTU 500u                /* Reticulum.MTU */
#define RET_MINIMUM_BITRATE 5       /* Reticulum.MINIMUM_BITRATE */
#define RECONNECT_WAIT_NS (5 * UINT64_C(1000000000))
#define CONNECT_TIMEOUT_NS (5 * UINT64_C(1000000000))
#define TXQ_MAX ((size_t)4 << 20)
#define READ_CHUNK 16384

enum { K_CLIENT = 1, K_SERVER = 2, K_CHILD = 3 };

typedef rnsc_iface_inst tcp_inst;

typedef struct tcp_if tcp_if;
struct tcp_if {
	tcp_inst *inst;
	int kind;
	const rnsc_iface_host_api *host;
	char name[160];
	/* where: target for clients, bind address for servers, peer for children */
	char addr[256];
	uint16_t port;
	uint16_t local_port;
	int prefer_ipv6;
	int i2p;
	int fd;
	rnsc_iface_watch *w;
	unsigned interest;
	int connecting;
	int online;
	rnsc_iface_timer *timer;
	uint64_t reconnect_wait_ns;
	int64_t max_tries; /* -1: unlimited (RECONNECT_MAX_TRIES = None) */
	int64_t attempts;
	int reconnecting;
	int never_connected;
	int given_up;
	/* receive */
	rnsc_hdlc_decoder dec;
	rnsc_hdlc_stats seen;
	int kiss; /* kiss_framing: KISS data frames instead of HDLC */
	rnsc_kiss_decoder kdec;
	rnsc_kiss_stats kseen;
	uint8_t *rxbuf;
	size_t max_frame;
	/* transmit queue: bytes [tx_off, tx_len) are pending */
	uint8_t *tx;
	size_t tx_off, tx_len, tx_cap;
	/* stats */
	uint64_t rxb, txb, rxp, txp;
	uint32_t reconnects;
	size_t hw_mtu;
	uint64_t bitrate;
	size_t ifac_size;
	/* server <-> children */
	tcp_if *parent;
	tcp_if *child_head;
	tcp_if *sib_next, *sib_prev;
	uint32_t n_children;
};

/* ---- helpers --------------------------------------------------------------------------- */

static void *xalloc(tcp_if *t, size_t n)
{
	void *p = t->inst->api->alloc(t->inst->api->host_ctx, n);
	if (p)
		memset(p, 0, n);
	return p;
}

static void xfree(tcp_if *t, void *p)
{
	if (p)
		t->inst->api->free(t->inst->api->host_ctx, p);
}

__attribute__((format(printf, 3, 4))) static void tlog(tcp_if *t, int level, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	t->host->log(t->host->hctx, level, msg);
}

static void set_timeouts(int fd, int i2p)
{
	/* TCPClientInterface.set_timeouts_linux: dead peers are noticed within ~30 s. */
	int user_timeout = (i2p ? 45 : 24) * 1000, one = 1, idle = i2p ? 10 : 5,
	    intvl = i2p ? 9 : 2, cnt = i2p ? 5 : 12;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof(user_timeout));
	(void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
}

static int rx_setup(tcp_if *t)
{
	/* check_frame_len: HEADER_MINSIZE < len <= HW_MTU + ifac_size. With HW_MTU None the
	 * reference cannot read at all; rnsc falls back to Reticulum.MTU. */
	t->max_frame = (t->hw_mtu ? t->hw_mtu : RET_MTU) + t->ifac_size;
	t->rxbuf = xalloc(t, t->max_frame);
	if (!t->rxbuf)
		return RNSC_ERR_NOMEM;
	rnsc_hdlc_decoder_init(&t->dec, t->rxbuf, t->max_frame);
	rnsc_hdlc_decoder_set_min(&t->dec, RNSC_HDLC_REF_MIN_FRAME);
	if (t->kiss)
		(void)rnsc_kiss_decoder_init(&t->kdec, t->rxbuf, t->max_frame);
	return 0;
}

/* ---- connection I/O (clients and children) -------------------------------------------- */

static void io_cb(void *ud, int fd, unsigned events);
static void schedule_reconnect(tcp_if *t);

static void set_interest(tcp_if *t, unsigned interest)
{
	if (t->w && t->interest != interest &&
	    t->host->watch_modify(t->host->hctx, t->w, interest) == 0)
		t->interest = interest;
}

static void drop_conn(tcp_if *t)
{
	rnsc_hdlc_rx_reset(t->host, &t->dec); /* counts a frame the disconnect cut short */
	if (t->kiss) {
		if (t->kdec.state == 2 && (t->kdec.len > 0 || t->kdec.esc))
			t->host->drop(t->host->hctx, RNSC_IFACE_DROP_PARTIAL, 1);
		rnsc_kiss_decoder_reset(&t->kdec);
	}
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
	t->connecting = 0;
	if (t->online) {
		t->online = 0;
		t->host->set_online(t->host->hctx, 0);
	}
}

/* The socket is gone: a client reconnects, a spawned connection is removed (the
 * reference's read_loop: reconnect() for initiators, teardown() otherwise). */
static void lost(tcp_if *t, const char *why)
{
	int was_online = t->online;
	drop_conn(t);
	if (t->kind == K_CLIENT) {
		if (was_online)
			tlog(t, RNSC_LOG_WARNING,
			     "The socket for %s was closed (%s), attempting to reconnect...",
			     t->name, why);
		schedule_reconnect(t);
	} else {
		tlog(t, RNSC_LOG_DEBUG, "The socket for remote client %s was closed (%s).", t->name,
		     why);
		t->host->request_close(t->host->hctx);
	}
}

static int on_frame(void *ud, const uint8_t *frame, size_t len)
{
	tcp_if *t = ud;
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

/* kiss_framing: data frames (any TNC port, as the reference masks it) are packets. */
static int on_kiss(void *ud, uint8_t type, const uint8_t *p, size_t len)
{
	tcp_if *t = ud;
	if (RNSC_KISS_CMD(type) != RNSC_KISS_CMD_DATA) {
		t->host->drop(t->host->hctx, RNSC_IFACE_DROP_GARBAGE, 1 + (uint64_t)len);
		return 0;
	}
	if (len < RNSC_HDLC_REF_MIN_FRAME) {
		t->host->drop(t->host->hctx, RNSC_IFACE_DROP_RUNT, 1);
		return 0;
	}
	return on_frame(t, p, len);
}

static void kiss_report(tcp_if *t)
{
	const rnsc_kiss_stats *s = &t->kdec.stats;
	if (s->drop_oversize != t->kseen.drop_oversize)
		t->host->drop(t->host->hctx, RNSC_IFACE_DROP_OVERSIZE,
			      s->drop_oversize - t->kseen.drop_oversize);
	if (s->garbage != t->kseen.garbage)
		t->host->drop(t->host->hctx, RNSC_IFACE_DROP_GARBAGE,
			      s->garbage - t->kseen.garbage);
	t->kseen = *s;
}

static void do_read(tcp_if *t)
{
	uint8_t buf[READ_CHUNK];
	/* Bounded so one busy peer cannot starve the loop. */
	for (int round = 0; round < 16 && t->fd >= 0; round++) {
		ssize_t n = recv(t->fd, buf, sizeof(buf), 0);
		if (n > 0) {
			if (t->kiss) {
				(void)rnsc_kiss_decoder_feed(&t->kdec, buf, (size_t)n, on_kiss, t);
				kiss_report(t);
			} else {
				(void)rnsc_hdlc_decoder_feed(&t->dec, buf, (size_t)n, on_frame, t);
				rnsc_hdlc_rx_report(t->host, &t->dec, &t->seen);
			}
			if ((size_t)n < sizeof(buf))
				return;
			continue;
		}
		if (n == 0) {
			lost(t, "end of stream");
			return;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			lost(t, strerror(errno));
		return;
	}
}

static void do_write(tcp_if *t)
{
	while (t->fd >= 0 && t->tx_off < t->tx_len) {
		ssize_t n = send(t->fd, t->tx + t->tx_off, t->tx_len - t->tx_off, MSG_NOSIGNAL);
		if (n > 0) {
			t->tx_off += (size_t)n;
			t->txb += (uint64_t)n;
			if (t->parent)
				t->parent->txb += (uint64_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			set_interest(t, RNSC_IFACE_EV_READ | RNSC_IFACE_EV_WRITE);
			return;
		}
		lost(t, n < 0 ? strerror(errno) : "write returned 0");
		return;
	}
	t->tx_off = t->tx_len = 0;
	if (t->fd >= 0)
		set_interest(t, RNSC_IFACE_EV_READ);
}

static void connected(tcp_if *t)
{
	set_timeouts(t->fd, t->i2p);
	t->connecting = 0;
	t->reconnecting = 0;
	if (t->timer)
		t->host->timer_stop(t->host->hctx, t->timer);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char ip[64];
	if (getsockname(t->fd, (struct sockaddr *)&ss, &sl) == 0)
		rnsc_iface_sockaddr_str((struct sockaddr *)&ss, ip, sizeof(ip), &t->local_port);
	if (!t->never_connected) {
		t->reconnects++;
		tlog(t, RNSC_LOG_INFO, "Reconnected socket for %s.", t->name);
	} else {
		tlog(t, RNSC_LOG_DEBUG, "TCP connection for %s established", t->name);
	}
	t->never_connected = 0;
	t->online = 1;
	set_interest(t, RNSC_IFACE_EV_READ);
	t->host->set_online(t->host->hctx, 1);
}

static void io_cb(void *ud, int fd, unsigned events)
{
	tcp_if *t = ud;
	(void)fd;
	if (t->connecting) {
		int err = 0;
		socklen_t l = sizeof(err);
		if (getsockopt(t->fd, SOL_SOCKET, SO_ERROR, &err, &l) != 0)
			err = errno;
		if (err == 0 && !(events & RNSC_IFACE_EV_WRITE) && (events & RNSC_IFACE_EV_ERROR))
			err = ECONNREFUSED;
		if (err) {
			tlog(t, t->never_connected ? RNSC_LOG_ERROR : RNSC_LOG_DEBUG,
			     "Connection attempt for %s failed: %s", t->name, strerror(err));
			lost(t, strerror(err));
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

static void start_connect(tcp_if *t)
{
	char port[8];
	snprintf(port, sizeof(port), "%u", (unsigned)t->port);
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_protocol = IPPROTO_TCP},
			*ai = NULL;
	/* The reference takes the first address getaddrinfo offers. */
	int g = getaddrinfo(t->addr, port, &hints, &ai);
	if (g != 0 || !ai) {
		tlog(t, RNSC_LOG_ERROR, "Connection attempt for %s failed: %s", t->name,
		     gai_strerror(g));
		if (ai)
			freeaddrinfo(ai);
		schedule_reconnect(t);
		return;
	}
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
	if (fd < 0) {
		freeaddrinfo(ai);
		tlog(t, RNSC_LOG_ERROR, "socket() for %s failed: %s", t->name, strerror(errno));
		schedule_reconnect(t);
		return;
	}
	int one = 1;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	t->fd = fd;
	if (rc != 0 && errno != EINPROGRESS) {
		tlog(t, t->never_connected ? RNSC_LOG_ERROR : RNSC_LOG_DEBUG,
		     "Connection attempt for %s failed: %s", t->name, strerror(errno));
		lost(t, strerror(errno));
		return;
	}
	t->connecting = 1;
	t->interest = RNSC_IFACE_EV_WRITE;
	if (t->host->watch_add(t->host->hctx, fd, t->interest, io_cb, t, &t->w) != 0) {
		lost(t, "cannot watch the socket");
		return;
	}
	if (rc == 0) {
		connected(t);
		return;
	}
	t->host->timer_start(t->host->hctx, t->timer, CONNECT_TIMEOUT_NS, 0);
}

static void timer_cb(void *ud)
{
	tcp_if *t = ud;
	if (t->connecting) { /* INITIAL_CONNECT_TIMEOUT passed */
		tlog(t, RNSC_LOG_DEBUG, "Connection attempt for %s timed out", t->name);
		lost(t, "timed out");
		return;
	}
	if (t->fd >= 0 || t->given_up)
		return;
	if (t->reconnecting) {
		t->attempts++;
		if (t->max_tries >= 0 && t->attempts > t->max_tries) {
			tlog(t, RNSC_LOG_ERROR, "Max reconnection attempts reached for %s",
			     t->name);
			tlog(t, RNSC_LOG_ERROR,
			     "The interface %s experienced an unrecoverable error and is being torn down.",
			     t->name);
			t->given_up = 1;
			return;
		}
	}
	start_connect(t);
}

static void schedule_reconnect(tcp_if *t)
{
	if (t->given_up)
		return;
	if (!t->reconnecting) {
		t->reconnecting = 1;
		t->attempts = 0;
		if (t->never_connected)
			tlog(t, RNSC_LOG_ERROR,
			     "Leaving %s unconnected and retrying connection in %.1f seconds.",
			     t->name, (double)t->reconnect_wait_ns / 1e9);
	}
	t->host->timer_start(t->host->hctx, t->timer, t->reconnect_wait_ns, 0);
}

/* ---- server ---------------------------------------------------------------------------- */

static void child_unlink(tcp_if *c)
{
	tcp_if *p = c->parent;
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

static void free_if(tcp_if *t)
{
	xfree(t, t->rxbuf);
	xfree(t, t->tx);
	xfree(t, t);
}

static void accept_one(tcp_if *s, int cfd, const struct sockaddr *sa)
{
	tcp_if *c = xalloc(s, sizeof(*c));
	if (!c) {
		close(cfd);
		return;
	}
	c->inst = s->inst;
	c->kind = K_CHILD;
	c->fd = -1;
	c->i2p = s->i2p;
	/* incoming_connection: the child takes the server's bitrate, HW_MTU and IFAC size. */
	c->bitrate = s->bitrate;
	c->hw_mtu = s->hw_mtu;
	c->ifac_size = s->ifac_size;
	c->never_connected = 0;
	snprintf(c->name, sizeof(c->name), "Client on %.140s", s->name);
	rnsc_iface_sockaddr_str(sa, c->addr, sizeof(c->addr), &c->port);
	c->local_port = s->local_port;
	if (rx_setup(c) != 0) {
		free_if(c);
		close(cfd);
		return;
	}
	int one = 1;
	set_timeouts(cfd, c->i2p);
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
	c->interest = RNSC_IFACE_EV_READ;
	if (c->host->watch_add(c->host->hctx, cfd, c->interest, io_cb, c, &c->w) != 0) {
		lost(c, "cannot watch the socket");
		return;
	}
	c->online = 1;
	tlog(c, RNSC_LOG_VERBOSE, "Spawned new TCPClient Interface: TCPInterface[%s/%s:%u]",
	     c->name, c->addr, (unsigned)c->port);
	c->host->set_online(c->host->hctx, 1);
}

static void listen_cb(void *ud, int fd, unsigned events)
{
	tcp_if *s = ud;
	(void)events;
	for (int k = 0; k < 64; k++) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		int cfd = accept4(fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
			    errno != ECONNABORTED)
				tlog(s, RNSC_LOG_ERROR, "accept on %s failed: %s", s->name,
				     strerror(errno));
			return;
		}
		tlog(s, RNSC_LOG_VERBOSE, "Accepting incoming TCP connection");
		accept_one(s, cfd, (struct sockaddr *)&ss);
	}
}

/* ---- ops ------------------------------------------------------------------------------- */

static const char *const tcp_types[] = {"TCPClientInterface", "TCPServerInterface", NULL};

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

static int open_server(tcp_if *t, const rnsc_iface_config *cfg)
{
	const char *ip = NULL, *device = NULL;
	int64_t port = 0;
	int port_set = 0, rc;
	const char *port_key = "listen_port";
	if ((rc = cfg->get_str(cfg->cctx, "device", &device)) == 0)
		return cfg->fail(cfg->cctx, "device", RNSC_ERR_CONFIG_VALUE,
				 "binding to a kernel interface by name is not supported yet; "
				 "use listen_ip");
	if (rc != RNSC_ERR_NOTFOUND)
		return rc;
	if ((rc = cfg_port(cfg, "listen_port", &port, &port_set)))
		return rc;
	int p2 = 0;
	int64_t port2 = 0;
	if ((rc = cfg_port(cfg, "port", &port2, &p2)))
		return rc;
	if (p2) { /* "port" overrides "listen_port" */
		port = port2;
		port_set = 1;
		port_key = "port";
	}
	if (!port_set)
		return cfg->fail(cfg->cctx, "listen_port", RNSC_ERR_CONFIG_VALUE,
				 "no TCP port configured");
	rc = cfg->get_str(cfg->cctx, "listen_ip", &ip);
	if (rc == RNSC_ERR_NOTFOUND)
		return cfg->fail(cfg->cctx, "listen_ip", RNSC_ERR_CONFIG_VALUE,
				 "no TCP bind IP configured");
	if (rc)
		return rc;
	if ((rc = cfg->get_bool(cfg->cctx, "prefer_ipv6", &t->prefer_ipv6)) &&
	    rc != RNSC_ERR_NOTFOUND)
		return rc;

	char portstr[8], msg[384];
	snprintf(portstr, sizeof(portstr), "%u", (unsigned)port);
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_protocol = IPPROTO_TCP},
			*ai = NULL;
	int g = getaddrinfo(ip, portstr, &hints, &ai);
	if (g != 0 || !ai) {
		snprintf(msg, sizeof(msg), "cannot resolve \"%s\": %s", ip, gai_strerror(g));
		if (ai)
			freeaddrinfo(ai);
		return cfg->fail(cfg->cctx, "listen_ip", RNSC_ERR_CONFIG_VALUE, msg);
	}
	/* get_address_for_host: the first entry, or the first of the preferred family. */
	struct addrinfo *pick = ai;
	for (struct addrinfo *e = ai; e; e = e->ai_next)
		if (e->ai_family == (t->prefer_ipv6 ? AF_INET6 : AF_INET)) {
			pick = e;
			break;
		}
	int fd = socket(pick->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
	if (fd < 0) {
		freeaddrinfo(ai);
		snprintf(msg, sizeof(msg), "socket() failed: %s", strerror(errno));
		return cfg->fail(cfg->cctx, NULL, RNSC_ERR_SYS, msg);
	}
	int one = 1;
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, pick->ai_addr, pick->ai_addrlen) != 0 || listen(fd, SOMAXCONN) != 0) {
		int e = errno;
		freeaddrinfo(ai);
		close(fd);
		snprintf(msg, sizeof(msg), "cannot listen on %s port %u: %s", ip, (unsigned)port,
			 strerror(e));
		return cfg->fail(cfg->cctx, e == EADDRINUSE ? port_key : "listen_ip",
				 e == EADDRNOTAVAIL || e == EADDRINUSE ? RNSC_ERR_IO : RNSC_ERR_SYS,
				 msg);
	}
	freeaddrinfo(ai);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char bound[64];
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
		rnsc_iface_sockaddr_str((struct sockaddr *)&ss, bound, sizeof(bound),
					&t->local_port);
	snprintf(t->addr, sizeof(t->addr), "%s", ip);
	t->port = t->local_port;
	t->fd = fd;
	if ((rc = t->host->watch_add(t->host->hctx, fd, RNSC_IFACE_EV_READ, listen_cb, t, &t->w))) {
		close(fd);
		t->fd = -1;
		return cfg->fail(cfg->cctx, NULL, rc, "cannot watch the listening socket");
	}
	t->online = 1;
	t->host->set_online(t->host->hctx, 1);
	return 0;
}

static int open_client(tcp_if *t, const rnsc_iface_config *cfg)
{
	const char *host = NULL;
	int64_t port = 0, v;
	int port_set = 0, rc;
	double wait;
	rc = cfg->get_str(cfg->cctx, "target_host", &host);
	if (rc == RNSC_ERR_NOTFOUND)
		return cfg->fail(cfg->cctx, "target_host", RNSC_ERR_CONFIG_VALUE,
				 "no target host configured");
	if (rc)
		return rc;
	if ((rc = cfg_port(cfg, "target_port", &port, &port_set)))
		return rc;
	if (!port_set || port == 0)
		return cfg->fail(cfg->cctx, "target_port", RNSC_ERR_CONFIG_VALUE,
				 port_set ? "target port 0 cannot be connected to"
					  : "no target port configured");
	if (strlen(host) >= sizeof(t->addr))
		return cfg->fail(cfg->cctx, "target_host", RNSC_ERR_CONFIG_VALUE,
				 "host name too long");
	snprintf(t->addr, sizeof(t->addr), "%s", host);
	t->port = (uint16_t)port;
	t->max_tries = -1;
	if ((rc = cfg->get_int(cfg->cctx, "max_reconnect_tries", &v)) == 0)
		t->max_tries = v < 0 ? 0 : v;
	else if (rc != RNSC_ERR_NOTFOUND)
		return rc;
	/* Read for its validity only: the reference stores it but connects with 5 s. */
	if ((rc = cfg->get_int(cfg->cctx, "connect_timeout", &v)) && rc != RNSC_ERR_NOTFOUND)
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
	if ((rc = t->host->timer_new(t->host->hctx, timer_cb, t, &t->timer)))
		return cfg->fail(cfg->cctx, NULL, rc, "cannot create a timer");
	/* The reference connects synchronously inside its constructor; rnsc makes the first
	 * attempt on the next loop tick so start-up never blocks on the network. */
	t->host->timer_start(t->host->hctx, t->timer, 0, 0);
	return 0;
}

static int tcp_open(void *instp, const rnsc_iface_config *cfg, const rnsc_iface_host_api *host,
		    void **handle)
{
	tcp_inst *inst = instp;
	int server;
	if (strcmp(cfg->type, "TCPServerInterface") == 0)
		server = 1;
	else if (strcmp(cfg->type, "TCPClientInterface") == 0)
		server = 0;
	else
		return cfg->fail(cfg->cctx, "type", RNSC_ERR_NOTFOUND, "not a TCP interface type");

	tcp_if tmp = {.inst = inst};
	tcp_if *t = xalloc(&tmp, sizeof(*t));
	if (!t)
		return cfg->fail(cfg->cctx, NULL, RNSC_ERR_NOMEM, "out of memory");
	t->inst = inst;
	t->host = host;
	t->kind = server ? K_SERVER : K_CLIENT;
	t->fd = -1;
	t->never_connected = 1;
	snprintf(t->name, sizeof(t->name), "%s", cfg->name);

	int rc, b;
	int64_t v;
	if ((rc = cfg->get_bool(cfg->cctx, "kiss_framing", &b)) == 0 && b) {
		if (server)
			tlog(t, RNSC_LOG_WARNING,
			     "kiss_framing has no effect on TCPServerInterface[%s] "
			     "(the reference's server ignores it too); its clients use HDLC",
			     t->name);
		else
			t->kiss = 1;
	} else if (rc && rc != RNSC_ERR_NOTFOUND) {
		goto fail;
	}
	if ((rc = cfg->get_bool(cfg->cctx, "i2p_tunneled", &t->i2p)) && rc != RNSC_ERR_NOTFOUND)
		goto fail;
	/* Reticulum.py: bitrate counts when >= MINIMUM_BITRATE; ifac_size is in bits. */
	t->bitrate = TCP_BITRATE_GUESS;
	if ((rc = cfg->get_int(cfg->cctx, "bitrate", &v)) == 0) {
		if (v >= RET_MINIMUM_BITRATE)
			t->bitrate = (uint64_t)v;
	} else if (rc != RNSC_ERR_NOTFOUND) {
		goto fail;
	}
	t->ifac_size = TCP_DEFAULT_IFAC_SIZE;
	if ((rc = cfg->get_int(cfg->cctx, "ifac_size", &v)) == 0) {
		if (v >= 8 && v <= 8 * 512)
			t->ifac_size = (size_t)(v / 8);
		else if (v > 8 * 512) {
			rc = cfg->fail(cfg->cctx, "ifac_size", RNSC_ERR_CONFIG_VALUE,
				       "IFAC size beyond 4096 bits");
			goto fail;
		}
	} else if (rc != RNSC_ERR_NOTFOUND) {
		goto fail;
	}
	t->hw_mtu = rnsc_iface_optimise_mtu(t->bitrate);
	if (!server) { /* only TCPClientInterface reads fixed_mtu */
		if ((rc = cfg->get_int(cfg->cctx, "fixed_mtu", &v)) == 0) {
			if (v != 0 && v < (int64_t)RET_MTU) {
				char m[96];
				snprintf(m, sizeof(m), "configured MTU of %lld bytes is too small",
					 (long long)v);
				rc = cfg->fail(cfg->cctx, "fixed_mtu", RNSC_ERR_CONFIG_VALUE, m);
				goto fail;
			}
			if (v > (int64_t)(64u << 20)) {
				rc = cfg->fail(cfg->cctx, "fixed_mtu", RNSC_ERR_CONFIG_VALUE,
					       "MTU beyond 64 MiB");
				goto fail;
			}
			if (v != 0)
				t->hw_mtu = (size_t)v;
		} else if (rc != RNSC_ERR_NOTFOUND) {
			goto fail;
		}
	}
	if (!server && (rc = rx_setup(t))) {
		rc = cfg->fail(cfg->cctx, NULL, rc, "out of memory");
		goto fail;
	}
	rc = server ? open_server(t, cfg) : open_client(t, cfg);
	if (rc)
		goto fail;
	*handle = t;
	return 0;
fail:
	if (t->timer)
		host->timer_del(host->hctx, t->timer);
	free_if(t);
	return rc;
}

static int tcp_send(void *handle, const uint8_t *frame, size_t len)
{
	tcp_if *t = handle;
	if (t->kind == K_SERVER)
		return 0; /* TCPServerInterface.process_outgoing does nothing */
	if (!t->online || t->fd < 0) {
		t->host->drop(t->host->hctx, RNSC_IFACE_DROP_OFFLINE, 1);
		return RNSC_ERR_STATE;
	}
	size_t need = t->kiss ? rnsc_kiss_encoded_max(len) : rnsc_hdlc_encoded_len(frame, len);
	int rc = rnsc_txq_reserve(t->inst, &t->tx, &t->tx_off, &t->tx_len, &t->tx_cap, need,
				  TXQ_MAX, 4096);
	if (rc) {
		t->host->drop(t->host->hctx, RNSC_IFACE_DROP_TXQUEUE, 1);
		return rc;
	}
	int n = t->kiss ? rnsc_kiss_encode(t->tx + t->tx_len, t->tx_cap - t->tx_len, frame, len)
			: rnsc_hdlc_encode(t->tx + t->tx_len, t->tx_cap - t->tx_len, frame, len);
	if (n < 0)
		return n;
	t->tx_len += (size_t)n;
	t->txp++;
	if (t->parent)
		t->parent->txp++;
	if (!(t->interest & RNSC_IFACE_EV_WRITE))
		do_write(t);
	return 0;
}

static int tcp_stats(void *handle, rnsc_iface_stats *out)
{
	tcp_if *t = handle;
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

static void tcp_close(void *handle)
{
	tcp_if *t = handle;
	/* The runtime closes children first; unhook any left so none points at us. */
	while (t->child_head)
		child_unlink(t->child_head);
	child_unlink(t);
	if (t->timer) {
		t->host->timer_del(t->host->hctx, t->timer);
		t->timer = NULL;
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

static int tcp_describe(void *handle, char *buf, size_t cap)
{
	tcp_if *t = handle;
	int v6 = strchr(t->addr, ':') != NULL;
	return snprintf(buf, cap, "%s[%s/%s%s%s:%u]",
			t->kind == K_SERVER ? "TCPServerInterface" : "TCPInterface", t->name,
			v6 ? "[" : "", t->addr, v6 ? "]" : "", (unsigned)t->port);
}

RNSC_IFACE_PLUGIN("tcp", "TCPClientInterface and TCPServerInterface (HDLC over TCP)", tcp_types,
		  tcp_open, tcp_send, tcp_stats, tcp_close, tcp_describe)
