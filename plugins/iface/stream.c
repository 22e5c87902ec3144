/* SPDX-License-Identifier: MIT */
/* The stream-interface connection engine; see stream.h. Modelled on plugins/iface/tcp.c. */
#define _GNU_SOURCE /* accept4 */
#include "stream.h"
#include "txq.h"
#include "iface_net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define BITRATE_GUESS 10000000u /* as TCPClientInterface.BITRATE_GUESS */
#define DEFAULT_IFAC_SIZE 16u
#define RET_MTU 500u
#define RET_MINIMUM_BITRATE 5
#define SEC UINT64_C(1000000000)
#define RECONNECT_WAIT_NS (5 * SEC)
#define BACKOFF_CAP_NS (60 * SEC)
#define HANDSHAKE_TIMEOUT_NS (10 * SEC)
#define CLOSE_GRACE_NS (2 * SEC)
#define TXQ_MAX ((size_t)4 << 20)
#define READ_CHUNK 16384

/* ---- helpers --------------------------------------------------------------------------- */

void *rnsc_stream_alloc(rnsc_stream *t, size_t n)
{
	void *p = t->inst->api->alloc(t->inst->api->host_ctx, n);
	if (p)
		memset(p, 0, n);
	return p;
}

void rnsc_stream_free(rnsc_stream *t, void *p)
{
	if (p)
		t->inst->api->free(t->inst->api->host_ctx, p);
}

void rnsc_stream_log(rnsc_stream *t, int level, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	t->host->log(t->host->hctx, level, msg);
}

void rnsc_stream_drop(rnsc_stream *t, unsigned reason, uint64_t n)
{
	t->host->drop(t->host->hctx, reason, n);
}

int rnsc_stream_connected(const rnsc_stream *t)
{
	return t->fd >= 0;
}

static void set_timeouts(int fd)
{
	/* As TCPClientInterface.set_timeouts_linux: dead peers are noticed within ~30 s. */
	int user_timeout = 24000, one = 1, idle = 5, intvl = 2, cnt = 12;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof(user_timeout));
	(void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static void set_interest(rnsc_stream *t, unsigned interest)
{
	if (t->w && t->interest != interest &&
	    t->host->watch_modify(t->host->hctx, t->w, interest) == 0)
		t->interest = interest;
}

/* ---- connection I/O -------------------------------------------------------------------- */

static void io_cb(void *ud, int fd, unsigned events);
static void schedule_reconnect(rnsc_stream *t);
static void do_write(rnsc_stream *t);

static void drop_conn(rnsc_stream *t)
{
	if (t->fs && t->proto->down)
		t->proto->down(t);
	if (t->w) {
		t->host->watch_remove(t->host->hctx, t->w);
		t->w = NULL;
	}
	if (t->fd >= 0) {
		rnsc_tlsio_free(&t->io);
		shutdown(t->fd, SHUT_RDWR);
		close(t->fd);
		t->fd = -1;
	}
	if (t->timer)
		t->host->timer_stop(t->host->hctx, t->timer);
	t->tx_off = t->tx_len = 0;
	t->connecting = t->piped = t->closing = 0;
	if (t->online) {
		t->online = 0;
		t->host->set_online(t->host->hctx, 0);
	}
}

void rnsc_stream_lost(rnsc_stream *t, const char *why)
{
	if (t->fd < 0)
		return;
	int was_online = t->online;
	drop_conn(t);
	if (t->kind == RNSC_STREAM_CLIENT) {
		if (was_online)
			rnsc_stream_log(
				t, RNSC_LOG_WARNING,
				"The socket for %s was closed (%s), attempting to reconnect...",
				t->name, why);
		schedule_reconnect(t);
	} else {
		rnsc_stream_log(t, RNSC_LOG_DEBUG,
				"The socket for remote client %s was closed (%s).", t->name, why);
		t->host->request_close(t->host->hctx);
	}
}

void rnsc_stream_close_after_flush(rnsc_stream *t, const char *why)
{
	if (t->fd < 0 || t->closing)
		return;
	rnsc_stream_log(t, RNSC_LOG_DEBUG, "Closing %s (%s:%u): %s", t->name, t->addr,
			(unsigned)t->port, why);
	t->closing = 1;
	if (t->online) { /* nothing more goes out but what is queued */
		t->online = 0;
		t->host->set_online(t->host->hctx, 0);
	}
	t->host->timer_start(t->host->hctx, t->timer, CLOSE_GRACE_NS, 0);
	if (t->tx_off >= t->tx_len)
		rnsc_stream_lost(t, why);
	else
		do_write(t);
}

void rnsc_stream_set_online(rnsc_stream *t)
{
	if (t->fd < 0 || t->online || t->closing)
		return;
	t->host->timer_stop(t->host->hctx, t->timer);
	t->reconnecting = 0;
	t->backoff_ns = 0;
	if (t->kind == RNSC_STREAM_CLIENT) {
		if (!t->never_connected) {
			t->reconnects++;
			rnsc_stream_log(t, RNSC_LOG_INFO, "Reconnected socket for %s.", t->name);
		} else {
			rnsc_stream_log(t, RNSC_LOG_DEBUG, "Connection for %s established",
					t->name);
		}
	}
	t->never_connected = 0;
	t->online = 1;
	t->host->set_online(t->host->hctx, 1);
}

int rnsc_stream_deliver(rnsc_stream *t, const uint8_t *frame, size_t len)
{
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

uint8_t *rnsc_stream_tx_reserve(rnsc_stream *t, size_t need, int count_drop)
{
	if (rnsc_txq_reserve(t->inst, &t->tx, &t->tx_off, &t->tx_len, &t->tx_cap, need, TXQ_MAX,
			     4096) == 0)
		return t->tx + t->tx_len;
	if (count_drop)
		rnsc_stream_drop(t, RNSC_IFACE_DROP_TXQUEUE, 1);
	return NULL;
}

void rnsc_stream_tx_commit(rnsc_stream *t, size_t n)
{
	t->tx_len += n;
	/* Before the pipe is up the bytes wait; the handshake completion writes them. */
	if (t->piped && !(t->interest & RNSC_IFACE_EV_WRITE))
		do_write(t);
}

int rnsc_stream_tx(rnsc_stream *t, const void *p, size_t n)
{
	uint8_t *dst = rnsc_stream_tx_reserve(t, n, 1);
	if (!dst)
		return RNSC_ERR_TOOBIG;
	memcpy(dst, p, n);
	rnsc_stream_tx_commit(t, n);
	return 0;
}

static void do_read(rnsc_stream *t)
{
	uint8_t buf[READ_CHUNK];
	char why[320];
	/* Bounded so one busy peer cannot starve the loop; what TLS already decrypted is
	 * drained regardless, since no readiness event would announce it. */
	for (int round = 0; t->fd >= 0 && (round < 16 || rnsc_tlsio_pending(&t->io)); round++) {
		ssize_t n = rnsc_tlsio_read(&t->io, buf, sizeof(buf), why, sizeof(why));
		if (n > 0) {
			t->proto->input(t, buf, (size_t)n);
			continue;
		}
		if (n == RNSC_TLSIO_WANT_READ)
			return;
		if (n == RNSC_TLSIO_WANT_WRITE) {
			set_interest(t, RNSC_IFACE_EV_READ | RNSC_IFACE_EV_WRITE);
			return;
		}
		rnsc_stream_lost(t, why);
		return;
	}
}

static void do_write(rnsc_stream *t)
{
	char why[320];
	while (t->fd >= 0 && t->tx_off < t->tx_len) {
		ssize_t n = rnsc_tlsio_write(&t->io, t->tx + t->tx_off, t->tx_len - t->tx_off, why,
					     sizeof(why));
		if (n > 0) {
			t->tx_off += (size_t)n;
			t->txb += (uint64_t)n;
			if (t->parent)
				t->parent->txb += (uint64_t)n;
			continue;
		}
		if (n == RNSC_TLSIO_WANT_WRITE || n == RNSC_TLSIO_WANT_READ) {
			set_interest(t, RNSC_IFACE_EV_READ | RNSC_IFACE_EV_WRITE);
			return;
		}
		rnsc_stream_lost(t, why);
		return;
	}
	if (t->fd < 0)
		return;
	t->tx_off = t->tx_len = 0;
	if (t->closing) {
		rnsc_stream_lost(t, "closed after flush");
		return;
	}
	set_interest(t, RNSC_IFACE_EV_READ);
}

static void handshake_step(rnsc_stream *t)
{
	char why[320];
	int r = rnsc_tlsio_handshake(&t->io, why, sizeof(why));
	if (r == RNSC_TLSIO_WANT_READ) {
		set_interest(t, RNSC_IFACE_EV_READ);
		return;
	}
	if (r == RNSC_TLSIO_WANT_WRITE) {
		set_interest(t, RNSC_IFACE_EV_READ | RNSC_IFACE_EV_WRITE);
		return;
	}
	if (r != 0) {
		/* Always logged with the peer: a refused certificate must be visible. */
		rnsc_stream_log(t,
				t->kind == RNSC_STREAM_CLIENT ? RNSC_LOG_ERROR : RNSC_LOG_WARNING,
				"TLS handshake for %s with %s:%u failed: %s", t->name, t->addr,
				(unsigned)t->port, why);
		rnsc_stream_lost(t, why);
		return;
	}
	t->piped = 1;
	set_interest(t, RNSC_IFACE_EV_READ);
	t->proto->up(t);
	if (t->fd >= 0 && t->tx_off < t->tx_len)
		do_write(t);
	if (t->fd >= 0 && rnsc_tlsio_pending(&t->io))
		do_read(t);
}

static void begin_pipe(rnsc_stream *t)
{
	const rnsc_tlsio_peer *peer = t->kind == RNSC_STREAM_CLIENT ? &t->peer : NULL;
	if (rnsc_tlsio_start(&t->io, t->ssl_ctx, t->bio_method, t->fd,
			     t->kind != RNSC_STREAM_CLIENT, peer)) {
		rnsc_stream_lost(t, "cannot start TLS");
		return;
	}
	handshake_step(t);
}

static void tcp_connected(rnsc_stream *t)
{
	set_timeouts(t->fd);
	t->connecting = 0;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char ip[64];
	if (getsockname(t->fd, (struct sockaddr *)&ss, &sl) == 0)
		rnsc_iface_sockaddr_str((struct sockaddr *)&ss, ip, sizeof(ip), &t->local_port);
	begin_pipe(t);
}

static void io_cb(void *ud, int fd, unsigned events)
{
	rnsc_stream *t = ud;
	(void)fd;
	if (t->connecting) {
		int err = 0;
		socklen_t l = sizeof(err);
		if (getsockopt(t->fd, SOL_SOCKET, SO_ERROR, &err, &l) != 0)
			err = errno;
		if (err == 0 && !(events & RNSC_IFACE_EV_WRITE) && (events & RNSC_IFACE_EV_ERROR))
			err = ECONNREFUSED;
		if (err) {
			rnsc_stream_log(t, t->never_connected ? RNSC_LOG_ERROR : RNSC_LOG_DEBUG,
					"Connection attempt for %s failed: %s", t->name,
					strerror(err));
			rnsc_stream_lost(t, strerror(err));
			return;
		}
		if (events & RNSC_IFACE_EV_WRITE)
			tcp_connected(t);
		return;
	}
	if (!t->piped) {
		handshake_step(t);
		return;
	}
	/* A TLS read that wanted the socket writable is retried on the write event too. */
	if ((events & (RNSC_IFACE_EV_READ | RNSC_IFACE_EV_ERROR)) ||
	    ((events & RNSC_IFACE_EV_WRITE) && t->tx_off >= t->tx_len))
		do_read(t);
	/* TLS may want the socket writable to finish a read, or readable to finish a write:
	 * both directions are retried on any event while bytes are queued. */
	if (t->fd >= 0 && t->tx_off < t->tx_len)
		do_write(t);
	else if (t->fd >= 0 && (events & RNSC_IFACE_EV_WRITE))
		set_interest(t, RNSC_IFACE_EV_READ);
}

/* ---- client connect and reconnect ------------------------------------------------------ */

static void start_connect(rnsc_stream *t)
{
	char port[8];
	snprintf(port, sizeof(port), "%u", (unsigned)t->port);
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_protocol = IPPROTO_TCP},
			*ai = NULL;
	int g = getaddrinfo(t->addr, port, &hints, &ai);
	if (g != 0 || !ai) {
		rnsc_stream_log(t, RNSC_LOG_ERROR, "Connection attempt for %s failed: %s", t->name,
				gai_strerror(g));
		if (ai)
			freeaddrinfo(ai);
		schedule_reconnect(t);
		return;
	}
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
	if (fd < 0) {
		freeaddrinfo(ai);
		rnsc_stream_log(t, RNSC_LOG_ERROR, "socket() for %s failed: %s", t->name,
				strerror(errno));
		schedule_reconnect(t);
		return;
	}
	int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	t->fd = fd;
	if (rc != 0 && errno != EINPROGRESS) {
		rnsc_stream_log(t, t->never_connected ? RNSC_LOG_ERROR : RNSC_LOG_DEBUG,
				"Connection attempt for %s failed: %s", t->name, strerror(errno));
		rnsc_stream_lost(t, strerror(errno));
		return;
	}
	t->connecting = 1;
	t->interest = RNSC_IFACE_EV_WRITE;
	if (t->host->watch_add(t->host->hctx, fd, t->interest, io_cb, t, &t->w) != 0) {
		rnsc_stream_lost(t, "cannot watch the socket");
		return;
	}
	/* One deadline for TCP connect, TLS and the framer's handshake. */
	t->host->timer_start(t->host->hctx, t->timer, t->handshake_timeout_ns, 0);
	if (rc == 0)
		tcp_connected(t);
}

static void timer_cb(void *ud)
{
	rnsc_stream *t = ud;
	if (t->fd >= 0) {
		if (t->closing)
			rnsc_stream_lost(t, "close timed out");
		else if (!t->online) {
			rnsc_stream_log(t, RNSC_LOG_WARNING,
					"Handshake for %s with %s:%u timed out", t->name, t->addr,
					(unsigned)t->port);
			rnsc_stream_lost(t, "handshake timed out");
		}
		return;
	}
	if (t->kind != RNSC_STREAM_CLIENT || t->given_up)
		return;
	if (t->reconnecting) {
		t->attempts++;
		if (t->max_tries >= 0 && t->attempts > t->max_tries) {
			rnsc_stream_log(t, RNSC_LOG_ERROR,
					"Max reconnection attempts reached for %s", t->name);
			t->given_up = 1;
			return;
		}
	}
	start_connect(t);
}

static void schedule_reconnect(rnsc_stream *t)
{
	if (t->given_up)
		return;
	if (!t->reconnecting) {
		t->reconnecting = 1;
		t->attempts = 0;
	}
	uint64_t cap =
		t->reconnect_wait_ns > BACKOFF_CAP_NS ? t->reconnect_wait_ns : BACKOFF_CAP_NS;
	t->backoff_ns = t->backoff_ns ? t->backoff_ns * 2 : t->reconnect_wait_ns;
	if (t->backoff_ns > cap)
		t->backoff_ns = cap;
	if (t->never_connected && t->attempts == 0)
		rnsc_stream_log(t, RNSC_LOG_ERROR,
				"Leaving %s unconnected and retrying connection in %.1f seconds.",
				t->name, (double)t->backoff_ns / 1e9);
	t->host->timer_start(t->host->hctx, t->timer, t->backoff_ns, 0);
}

/* ---- server ---------------------------------------------------------------------------- */

static void child_unlink(rnsc_stream *c)
{
	rnsc_stream *p = c->parent;
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

static void free_stream(rnsc_stream *t)
{
	if (t->fs && t->proto->conn_free)
		t->proto->conn_free(t);
	if (t->kind != RNSC_STREAM_CHILD) {
		if (t->pcfg && t->proto->release)
			t->proto->release(t);
		if (t->ssl_ctx)
			SSL_CTX_free(t->ssl_ctx);
		rnsc_tlsio_bio_method_free(t->bio_method);
	}
	rnsc_stream_free(t, t->tx);
	rnsc_stream_free(t, t);
}

static void accept_one(rnsc_stream *s, int cfd, const struct sockaddr *sa)
{
	rnsc_stream *c = rnsc_stream_alloc(s, sizeof(*c));
	if (!c) {
		close(cfd);
		return;
	}
	c->proto = s->proto;
	c->inst = s->inst;
	c->kind = RNSC_STREAM_CHILD;
	c->fd = -1;
	c->bitrate = s->bitrate;
	c->hw_mtu = s->hw_mtu;
	c->ifac_size = s->ifac_size;
	c->max_frame = s->max_frame;
	c->handshake_timeout_ns = s->handshake_timeout_ns;
	c->ssl_ctx = s->ssl_ctx;
	c->bio_method = s->bio_method;
	c->pcfg = s->pcfg;
	snprintf(c->name, sizeof(c->name), "Client on %.140s", s->name);
	rnsc_iface_sockaddr_str(sa, c->addr, sizeof(c->addr), &c->port);
	c->local_port = s->local_port;
	c->host = s->host; /* for allocation and logging until spawned */
	if (c->proto->conn_new(c) != 0) {
		free_stream(c);
		close(cfd);
		return;
	}
	set_timeouts(cfd);
	if (s->host->spawn(s->host->hctx, c, c->name, &c->host) != 0) {
		free_stream(c);
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
	if (c->host->timer_new(c->host->hctx, timer_cb, c, &c->timer) != 0 ||
	    c->host->watch_add(c->host->hctx, cfd, c->interest, io_cb, c, &c->w) != 0) {
		rnsc_stream_lost(c, "cannot watch the socket");
		return;
	}
	c->host->timer_start(c->host->hctx, c->timer, c->handshake_timeout_ns, 0);
	rnsc_stream_log(c, RNSC_LOG_VERBOSE, "Spawned new client interface %s[%s/%s:%u]",
			c->proto->label, c->name, c->addr, (unsigned)c->port);
	begin_pipe(c);
}

static void listen_cb(void *ud, int fd, unsigned events)
{
	rnsc_stream *s = ud;
	(void)events;
	for (int k = 0; k < 64; k++) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		int cfd = accept4(fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
			    errno != ECONNABORTED)
				rnsc_stream_log(s, RNSC_LOG_ERROR, "accept on %s failed: %s",
						s->name, strerror(errno));
			return;
		}
		accept_one(s, cfd, (struct sockaddr *)&ss);
	}
}

/* ---- open ------------------------------------------------------------------------------ */

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

static int cfg_seconds(const rnsc_iface_config *cfg, const char *key, uint64_t *ns)
{
	double v;
	int rc = cfg->get_float(cfg->cctx, key, &v);
	if (rc == RNSC_ERR_NOTFOUND)
		return 0;
	if (rc)
		return rc;
	if (!(v > 0 && v <= 3600))
		return cfg->fail(cfg->cctx, key, RNSC_ERR_CONFIG_VALUE,
				 "must be between 0 and 3600 seconds");
	*ns = (uint64_t)(v * 1e9);
	return 0;
}

static int open_server(rnsc_stream *t, const rnsc_iface_config *cfg)
{
	const char *ip = NULL;
	int64_t port = 0;
	int port_set = 0, rc;
	if ((rc = cfg_port(cfg, "listen_port", &port, &port_set)))
		return rc;
	if (!port_set)
		return cfg->fail(cfg->cctx, "listen_port", RNSC_ERR_CONFIG_VALUE,
				 "no TCP port configured");
	rc = cfg->get_str(cfg->cctx, "listen_ip", &ip);
	if (rc == RNSC_ERR_NOTFOUND)
		return cfg->fail(cfg->cctx, "listen_ip", RNSC_ERR_CONFIG_VALUE,
				 "no bind IP configured");
	if (rc)
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
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
	if (fd < 0) {
		freeaddrinfo(ai);
		snprintf(msg, sizeof(msg), "socket() failed: %s", strerror(errno));
		return cfg->fail(cfg->cctx, NULL, RNSC_ERR_SYS, msg);
	}
	int one = 1;
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, SOMAXCONN) != 0) {
		int e = errno;
		freeaddrinfo(ai);
		close(fd);
		snprintf(msg, sizeof(msg), "cannot listen on %s port %u: %s", ip, (unsigned)port,
			 strerror(e));
		return cfg->fail(cfg->cctx, e == EADDRINUSE ? "listen_port" : "listen_ip",
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
	return 0;
}

static int open_client(rnsc_stream *t, const rnsc_iface_config *cfg)
{
	const char *host = NULL;
	int64_t port = 0, v;
	int port_set = 0, rc;
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
	if (strlen(host) >= sizeof(t->addr) || !*host)
		return cfg->fail(cfg->cctx, "target_host", RNSC_ERR_CONFIG_VALUE,
				 "host name empty or too long");
	snprintf(t->addr, sizeof(t->addr), "%s", host);
	t->port = (uint16_t)port;
	t->max_tries = -1;
	if ((rc = cfg->get_int(cfg->cctx, "max_reconnect_tries", &v)) == 0)
		t->max_tries = v < 0 ? 0 : v;
	else if (rc != RNSC_ERR_NOTFOUND)
		return rc;
	t->reconnect_wait_ns = RECONNECT_WAIT_NS;
	if ((rc = cfg_seconds(cfg, "reconnect_wait", &t->reconnect_wait_ns)))
		return rc;
	return 0;
}

static int want_tls(const rnsc_stream_proto *proto, const rnsc_iface_config *cfg, int *tls)
{
	*tls = 1;
	if (proto->tls_always)
		return 0;
	int rc = cfg->get_bool(cfg->cctx, "tls", tls);
	if (rc == RNSC_ERR_NOTFOUND) {
		*tls = 0;
		return 0;
	}
	return rc;
}

int rnsc_stream_open(const rnsc_stream_proto *proto, void *instp, const rnsc_iface_config *cfg,
		     const rnsc_iface_host_api *host, void **handle)
{
	int server;
	if (strcmp(cfg->type, proto->server_type) == 0)
		server = 1;
	else if (strcmp(cfg->type, proto->client_type) == 0)
		server = 0;
	else
		return cfg->fail(cfg->cctx, "type", RNSC_ERR_NOTFOUND, "not a type of this plugin");

	rnsc_stream tmp = {.inst = instp};
	rnsc_stream *t = rnsc_stream_alloc(&tmp, sizeof(*t));
	if (!t)
		return cfg->fail(cfg->cctx, NULL, RNSC_ERR_NOMEM, "out of memory");
	t->proto = proto;
	t->inst = instp;
	t->host = host;
	t->kind = server ? RNSC_STREAM_SERVER : RNSC_STREAM_CLIENT;
	t->fd = -1;
	t->never_connected = 1;
	snprintf(t->name, sizeof(t->name), "%s", cfg->name);

	int rc, tls;
	int64_t v;
	t->bitrate = BITRATE_GUESS;
	if ((rc = cfg->get_int(cfg->cctx, "bitrate", &v)) == 0) {
		if (v >= RET_MINIMUM_BITRATE)
			t->bitrate = (uint64_t)v;
	} else if (rc != RNSC_ERR_NOTFOUND) {
		goto fail;
	}
	t->ifac_size = DEFAULT_IFAC_SIZE;
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
	t->hw_mtu = rnsc_iface_optimise_mtu(t->bitrate);
	t->max_frame = (t->hw_mtu ? t->hw_mtu : RET_MTU) + t->ifac_size;
	t->handshake_timeout_ns = HANDSHAKE_TIMEOUT_NS;
	if ((rc = cfg_seconds(cfg, "handshake_timeout", &t->handshake_timeout_ns)))
		goto fail;
	if ((rc = want_tls(proto, cfg, &tls)))
		goto fail;
	if (!server) {
		if ((rc = open_client(t, cfg)))
			goto fail;
		if (tls && (rc = rnsc_tlsio_client_ctx(cfg, t->addr, &t->ssl_ctx, &t->peer)))
			goto fail;
	} else if (tls && (rc = rnsc_tlsio_server_ctx(cfg, &t->ssl_ctx))) {
		goto fail;
	}
	if (tls && !(t->bio_method = rnsc_tlsio_bio_method_new())) {
		rc = cfg->fail(cfg->cctx, NULL, RNSC_ERR_NOMEM,
			       "cannot create a TLS socket method");
		goto fail;
	}
	if (proto->configure && (rc = proto->configure(t, cfg)))
		goto fail;
	if (!server && (rc = proto->conn_new(t))) {
		rc = cfg->fail(cfg->cctx, NULL, rc, "out of memory");
		goto fail;
	}
	if (server) {
		/* Listen last: nothing can fail after the socket is bound. */
		if ((rc = open_server(t, cfg)))
			goto fail;
		t->online = 1;
		host->set_online(host->hctx, 1);
	} else {
		if ((rc = host->timer_new(host->hctx, timer_cb, t, &t->timer))) {
			rc = cfg->fail(cfg->cctx, NULL, rc, "cannot create a timer");
			goto fail;
		}
		/* The first attempt is made on the next loop tick: open() never blocks. */
		host->timer_start(host->hctx, t->timer, 0, 0);
	}
	*handle = t;
	return 0;
fail:
	if (t->timer)
		host->timer_del(host->hctx, t->timer);
	free_stream(t);
	return rc;
}

int rnsc_stream_send(void *handle, const uint8_t *frame, size_t len)
{
	rnsc_stream *t = handle;
	if (t->kind == RNSC_STREAM_SERVER)
		return 0; /* as TCPServerInterface: traffic goes through the children */
	if (!t->online || t->fd < 0) {
		rnsc_stream_drop(t, RNSC_IFACE_DROP_OFFLINE, 1);
		return RNSC_ERR_STATE;
	}
	int rc = t->proto->encode(t, frame, len);
	if (rc)
		return rc;
	t->txp++;
	if (t->parent)
		t->parent->txp++;
	return 0;
}

int rnsc_stream_stats(void *handle, rnsc_iface_stats *out)
{
	rnsc_stream *t = handle;
	out->rx_bytes = t->rxb;
	out->tx_bytes = t->txb;
	out->rx_packets = t->rxp;
	out->tx_packets = t->txp;
	out->online = t->online;
	out->bitrate = t->bitrate;
	out->hw_mtu = t->hw_mtu;
	out->children = t->n_children;
	out->local_port = t->local_port;
	out->remote_port = t->kind == RNSC_STREAM_SERVER ? 0 : (t->online ? t->port : 0);
	out->reconnects = t->reconnects;
	return 0;
}

void rnsc_stream_close(void *handle)
{
	rnsc_stream *t = handle;
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
		if (t->kind != RNSC_STREAM_SERVER) {
			uint8_t bye[64];
			char why[64];
			size_t n = t->online && t->piped && t->tx_off >= t->tx_len && t->proto->bye
					   ? t->proto->bye(t, bye, sizeof(bye))
					   : 0;
			if (n)
				(void)rnsc_tlsio_write(&t->io, bye, n, why, sizeof(why));
			rnsc_tlsio_free(&t->io);
			shutdown(t->fd, SHUT_RDWR);
		}
		close(t->fd);
		t->fd = -1;
	}
	free_stream(t);
}

int rnsc_stream_describe(void *handle, char *buf, size_t cap)
{
	rnsc_stream *t = handle;
	int v6 = strchr(t->addr, ':') != NULL;
	return snprintf(buf, cap, "%s[%s/%s%s%s:%u]",
			t->kind == RNSC_STREAM_SERVER ? t->proto->server_label : t->proto->label,
			t->name, v6 ? "[" : "", t->addr, v6 ? "]" : "", (unsigned)t->port);
}
