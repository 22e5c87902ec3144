/* SPDX-License-Identifier: MIT */
/*
 * The "local" interface plugin: the shared-instance sockets of the reference (rns 1.5.4,
 * RNS/Interfaces/LocalInterface.py and Reticulum.__start_local_interface):
 *
 *  - LocalServerInterface: the shared instance listens on the abstract Unix socket
 *    "\0rns/<instance_name>" (option socket_path = <instance_name>), or on TCP
 *    127.0.0.1:<port> (option port; shared_instance_type = tcp). Every program that
 *    attaches gets a spawned LocalClientInterface child; the server's own send is a
 *    no-op, as the reference's process_outgoing.
 *  - LocalClientInterface: a program attaching to a running shared instance. The first
 *    connection is made inside open(), synchronously like the reference's constructor,
 *    so a failure (no instance running) is an open error the node turns into
 *    "standalone". A lost connection is retried every RECONNECT_WAIT (8 s; option
 *    reconnect_wait overrides it, for tests).
 *  - Framing: HDLC as TCP; HW_MTU 262144, bitrate 1 Gbit/s; frames of 20 .. HW_MTU +
 *    ifac_size bytes are delivered, the rest counted as drops.
 *
 * Bounds: at most MAX_CLIENTS attached programs, a 4 MiB send queue per connection
 * (beyond it frames are dropped and counted), and one receive buffer of HW_MTU + IFAC per
 * connection that has spoken (allocated at its first byte, so a silent connection costs
 * a few hundred bytes): a hostile local peer costs at most MAX_CLIENTS * (4 MiB + 256 KiB).
 *
 * Admission (the reference has no limit at all, so every program that it would let in
 * must still get in; the floor): a connection that has never sent a byte is the
 * cheapest thing to give up. When the table is full a new program takes the slot of the
 * longest-silent connection that never spoke (older than EVICT_MIN_AGE, so a program that
 * just attached is not pushed out by the next); while more than REAP_PRESSURE are attached,
 * connections that never spoke within REAP_IDLE are closed; and on the Unix socket one user
 * other than the daemon's own holds at most PER_UID_MAX slots (SO_PEERCRED). Refusals are
 * counted as RNSC_IFACE_DROP_REFUSED, evicted and reaped connections as
 * RNSC_IFACE_DROP_IDLE, on the server.
 */
#define _GNU_SOURCE /* accept4 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "hdlc.h"
#include "hdlc_rx.h"
#include "iface_abi.h"
#include "iface_plugin.h"
#include "txq.h"

#define LOCAL_HW_MTU 262144u                         /* LocalClientInterface.HW_MTU */
#define LOCAL_BITRATE 1000000000u                    /* LocalClientInterface.bitrate */
#define LOCAL_IFAC_SIZE 16u                          /* DEFAULT_IFAC_SIZE */
#define RECONNECT_WAIT_NS (8 * UINT64_C(1000000000)) /* LocalClientInterface.RECONNECT_WAIT */
#define TXQ_MAX ((size_t)4 << 20)
#define READ_CHUNK 16384
#define MAX_CLIENTS 128u
#define PER_UID_MAX (MAX_CLIENTS / 2)
#define REAP_PRESSURE (MAX_CLIENTS / 4)
#define REAP_IDLE_NS (10 * UINT64_C(1000000000))
#define REAP_PERIOD_NS (2 * UINT64_C(1000000000))
#define EVICT_MIN_AGE_NS (500 * UINT64_C(1000000)) /* a program speaks within ms */

enum { K_CLIENT = 1, K_SERVER = 2, K_CHILD = 3 };

typedef rnsc_iface_inst local_inst;

typedef struct local_if local_if;
struct local_if {
	local_inst *inst;
	int kind;
	const rnsc_iface_host_api *host;
	char name[160];
	/* the abstract socket name without its leading NUL ("rns/default"), or "" for TCP */
	char path[108];
	uint16_t port;
	int fd;
	rnsc_iface_watch *w;
	unsigned interest;
	int online;
	rnsc_iface_timer *timer;
	uint64_t reconnect_wait_ns;
	uint32_t reconnects;
	/* receive */
	rnsc_hdlc_decoder dec;
	rnsc_hdlc_stats seen;
	uint8_t *rxbuf;
	size_t max_frame;
	/* transmit queue: bytes [tx_off, tx_len) are pending */
	uint8_t *tx;
	size_t tx_off, tx_len, tx_cap;
	uint64_t rxb, txb, rxp, txp;
	size_t ifac_size;
	/* server <-> children */
	local_if *parent;
	local_if *child_head;
	local_if *sib_next, *sib_prev;
	uint32_t n_children;
	uint32_t n_spawned; /* the reference names children by its running client count */
	/* admission (children): when accepted, whether a byte ever came, the peer's uid */
	uint64_t accepted_ns;
	int spoken;
	long uid; /* -1: unknown (TCP) */
};

static void *xalloc(local_if *t, size_t n)
{
	void *p = t->inst->api->alloc(t->inst->api->host_ctx, n);
	if (p)
		memset(p, 0, n);
	return p;
}

static void xfree(local_if *t, void *p)
{
	if (p)
		t->inst->api->free(t->inst->api->host_ctx, p);
}

__attribute__((format(printf, 3, 4))) static void llog(local_if *t, int level, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	t->host->log(t->host->hctx, level, msg);
}

static int rx_setup(local_if *t)
{
	if (t->rxbuf)
		return 0;
	t->max_frame = LOCAL_HW_MTU + t->ifac_size;
	t->rxbuf = xalloc(t, t->max_frame);
	if (!t->rxbuf)
		return RNSC_ERR_NOMEM;
	rnsc_hdlc_decoder_init(&t->dec, t->rxbuf, t->max_frame);
	rnsc_hdlc_decoder_set_min(&t->dec, RNSC_HDLC_REF_MIN_FRAME);
	return 0;
}

/* The address of the shared instance: abstract Unix socket or TCP on 127.0.0.1. */
static socklen_t make_addr(const local_if *t, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (t->path[0]) {
		struct sockaddr_un *un = (struct sockaddr_un *)ss;
		size_t l = strlen(t->path);
		un->sun_family = AF_UNIX;
		un->sun_path[0] = 0; /* abstract namespace: no file, gone with the process */
		memcpy(un->sun_path + 1, t->path, l);
		return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + l);
	}
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	in->sin_family = AF_INET;
	in->sin_port = htons(t->port);
	in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return sizeof(*in);
}

/* ---- connection I/O (clients and children) -------------------------------------------- */

static void schedule_reconnect(local_if *t);

static void set_interest(local_if *t, unsigned interest)
{
	if (t->w && t->interest != interest &&
	    t->host->watch_modify(t->host->hctx, t->w, interest) == 0)
		t->interest = interest;
}

static void drop_conn(local_if *t)
{
	rnsc_hdlc_rx_reset(t->host, &t->dec);
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
	if (t->online) {
		t->online = 0;
		t->host->set_online(t->host->hctx, 0);
	}
}

/* LocalClientInterface.read_loop: an initiator reconnects, a spawned client goes away. */
static void lost(local_if *t, const char *why)
{
	int was_online = t->online;
	drop_conn(t);
	if (t->kind == K_CLIENT) {
		if (was_online)
			llog(t, RNSC_LOG_WARNING,
			     "Socket for %s was closed (%s), attempting to reconnect...", t->name,
			     why);
		schedule_reconnect(t);
	} else {
		llog(t, RNSC_LOG_DEBUG, "The local client %s went away (%s).", t->name, why);
		t->host->request_close(t->host->hctx);
	}
}

static int on_frame(void *ud, const uint8_t *frame, size_t len)
{
	local_if *t = ud;
	t->rxb += len;
	t->rxp++;
	if (t->parent) {
		t->parent->rxb += len;
		t->parent->rxp++;
	}
	t->host->deliver(t->host->hctx, frame, len);
	return t->fd < 0 ? RNSC_ERR_STATE : 0;
}

static void do_read(local_if *t)
{
	uint8_t buf[READ_CHUNK];
	for (int round = 0; round < 16 && t->fd >= 0; round++) {
		ssize_t n = recv(t->fd, buf, sizeof(buf), 0);
		if (n > 0 && !t->rxbuf && rx_setup(t) != 0) {
			lost(t, "out of memory");
			return;
		}
		if (n > 0) {
			t->spoken = 1;
			(void)rnsc_hdlc_decoder_feed(&t->dec, buf, (size_t)n, on_frame, t);
			rnsc_hdlc_rx_report(t->host, &t->dec, &t->seen);
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

static void do_write(local_if *t)
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

static void io_cb(void *ud, int fd, unsigned events)
{
	local_if *t = ud;
	(void)fd;
	if (events & (RNSC_IFACE_EV_READ | RNSC_IFACE_EV_ERROR))
		do_read(t);
	if (t->fd >= 0 && (events & RNSC_IFACE_EV_WRITE))
		do_write(t);
}

/* ---- client ---------------------------------------------------------------------------- */

/* One blocking connect (local sockets answer at once), then non-blocking I/O. Returns 0
 * or the errno. */
static int try_connect(local_if *t)
{
	struct sockaddr_storage ss;
	socklen_t sl = make_addr(t, &ss);
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	if (connect(fd, (struct sockaddr *)&ss, sl) != 0) {
		int e = errno;
		close(fd);
		return e;
	}
	int one = 1;
	if (!t->path[0])
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0) {
		int e = errno;
		close(fd);
		return e;
	}
	t->fd = fd;
	t->interest = RNSC_IFACE_EV_READ;
	if (t->host->watch_add(t->host->hctx, fd, t->interest, io_cb, t, &t->w) != 0) {
		close(fd);
		t->fd = -1;
		return ENOMEM;
	}
	t->online = 1;
	t->host->set_online(t->host->hctx, 1);
	return 0;
}

static void timer_cb(void *ud)
{
	local_if *t = ud;
	if (t->fd >= 0)
		return;
	int e = try_connect(t);
	if (e) {
		llog(t, RNSC_LOG_DEBUG, "Connection attempt for %s failed: %s", t->name,
		     strerror(e));
		schedule_reconnect(t);
		return;
	}
	t->reconnects++;
	llog(t, RNSC_LOG_INFO, "Reconnected socket for %s.", t->name);
}

static void schedule_reconnect(local_if *t)
{
	if (t->timer)
		t->host->timer_start(t->host->hctx, t->timer, t->reconnect_wait_ns, 0);
}

/* ---- server ---------------------------------------------------------------------------- */

static void child_unlink(local_if *c)
{
	local_if *p = c->parent;
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

static void free_if(local_if *t)
{
	xfree(t, t->rxbuf);
	xfree(t, t->tx);
	xfree(t, t);
}

/* The never-spoken child accepted longest ago, if older than min_age_ns. */
static local_if *oldest_silent(local_if *s, uint64_t now, uint64_t min_age_ns)
{
	local_if *best = NULL;
	for (local_if *c = s->child_head; c; c = c->sib_next)
		if (!c->spoken && now - c->accepted_ns >= min_age_ns &&
		    (!best || c->accepted_ns < best->accepted_ns))
			best = c;
	return best;
}

static void evict(local_if *s, local_if *c, const char *why)
{
	s->host->drop(s->host->hctx, RNSC_IFACE_DROP_IDLE, 1);
	llog(s, RNSC_LOG_VERBOSE, "Closing local client %s: %s", c->name, why);
	child_unlink(c); /* before lost(): the host may free c in it */
	lost(c, why);    /* request_close: the host closes and frees it */
}

static void reap_cb(void *ud)
{
	local_if *s = ud;
	uint64_t now = s->host->now_ns(s->host->hctx);
	local_if *c;
	while (s->n_children > REAP_PRESSURE && (c = oldest_silent(s, now, REAP_IDLE_NS)))
		evict(s, c, "attached but never spoke");
}

static long peer_uid(int cfd)
{
	struct ucred cr;
	socklen_t l = sizeof(cr);
	if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cr, &l) != 0 || l != sizeof(cr))
		return -1;
	return (long)cr.uid;
}

/* Admission (see the top of the file). Returns 0 to accept. */
static int admit(local_if *s, long uid)
{
	if (uid >= 0 && uid != (long)geteuid()) {
		uint32_t same = 0;
		for (local_if *c = s->child_head; c; c = c->sib_next)
			same += c->uid == uid;
		if (same >= PER_UID_MAX)
			return -1;
	}
	if (s->n_children < MAX_CLIENTS)
		return 0;
	local_if *c = oldest_silent(s, s->host->now_ns(s->host->hctx), EVICT_MIN_AGE_NS);
	if (!c)
		return -1;
	evict(s, c, "the shared instance is full and it never spoke");
	return 0;
}

static void accept_one(local_if *s, int cfd, const struct sockaddr_storage *ss)
{
	long uid = ss->ss_family == AF_UNIX ? peer_uid(cfd) : -1;
	if (admit(s, uid) != 0) {
		s->host->drop(s->host->hctx, RNSC_IFACE_DROP_REFUSED, 1);
		close(cfd);
		return;
	}
	local_if *c = xalloc(s, sizeof(*c));
	if (!c) {
		close(cfd);
		return;
	}
	c->inst = s->inst;
	c->kind = K_CHILD;
	c->fd = -1;
	c->ifac_size = s->ifac_size;
	c->uid = uid;
	c->accepted_ns = s->host->now_ns(s->host->hctx);
	snprintf(c->path, sizeof(c->path), "%s", s->path);
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)ss;
		c->port = ntohs(in->sin_port);
		snprintf(c->name, sizeof(c->name), "%u", (unsigned)c->port);
	} else {
		snprintf(c->name, sizeof(c->name), "%u@%.100s", (unsigned)s->n_spawned, s->path);
	}
	if (ss->ss_family == AF_INET) {
		int one = 1;
		(void)setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	if (s->host->spawn(s->host->hctx, c, c->name, &c->host) != 0) {
		free_if(c);
		close(cfd);
		return;
	}
	c->parent = s;
	c->sib_next = s->child_head;
	if (s->child_head)
		s->child_head->sib_prev = c;
	s->child_head = c;
	s->n_children++;
	s->n_spawned++;
	c->fd = cfd;
	c->interest = RNSC_IFACE_EV_READ;
	if (c->host->watch_add(c->host->hctx, cfd, c->interest, io_cb, c, &c->w) != 0) {
		lost(c, "cannot watch the socket");
		return;
	}
	c->online = 1;
	llog(c, RNSC_LOG_VERBOSE, "Local client %s attached to the shared instance", c->name);
	c->host->set_online(c->host->hctx, 1);
}

static void listen_cb(void *ud, int fd, unsigned events)
{
	local_if *s = ud;
	(void)events;
	for (int k = 0; k < 64; k++) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		memset(&ss, 0, sizeof(ss));
		int cfd = accept4(fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
			    errno != ECONNABORTED)
				llog(s, RNSC_LOG_ERROR, "accept on %s failed: %s", s->name,
				     strerror(errno));
			return;
		}
		accept_one(s, cfd, &ss);
	}
}

/* ---- ops ------------------------------------------------------------------------------- */

static const char *const local_types[] = {"LocalServerInterface", "LocalClientInterface", NULL};

static int open_server(local_if *t, const rnsc_iface_config *cfg)
{
	struct sockaddr_storage ss;
	socklen_t sl = make_addr(t, &ss);
	char msg[256];
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(msg, sizeof(msg), "socket() failed: %s", strerror(errno));
		return cfg->fail(cfg->cctx, NULL, RNSC_ERR_SYS, msg);
	}
	int one = 1;
	if (!t->path[0])
		(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) != 0 || listen(fd, SOMAXCONN) != 0) {
		int e = errno;
		close(fd);
		if (t->path[0])
			snprintf(msg, sizeof(msg), "cannot listen on @%s: %s", t->path,
				 strerror(e));
		else
			snprintf(msg, sizeof(msg), "cannot listen on 127.0.0.1 port %u: %s",
				 (unsigned)t->port, strerror(e));
		return cfg->fail(cfg->cctx, t->path[0] ? "socket_path" : "port",
				 e == EADDRINUSE ? RNSC_ERR_IO : RNSC_ERR_SYS, msg);
	}
	if (!t->path[0] && t->port == 0) {
		struct sockaddr_in in;
		socklen_t il = sizeof(in);
		if (getsockname(fd, (struct sockaddr *)&in, &il) == 0)
			t->port = ntohs(in.sin_port);
	}
	t->fd = fd;
	int rc = t->host->watch_add(t->host->hctx, fd, RNSC_IFACE_EV_READ, listen_cb, t, &t->w);
	if (rc) {
		close(fd);
		t->fd = -1;
		return cfg->fail(cfg->cctx, NULL, rc, "cannot watch the listening socket");
	}
	if ((rc = t->host->timer_new(t->host->hctx, reap_cb, t, &t->timer)) ||
	    (rc = t->host->timer_start(t->host->hctx, t->timer, REAP_PERIOD_NS, REAP_PERIOD_NS)))
		return cfg->fail(cfg->cctx, NULL, rc, "cannot create a timer");
	t->online = 1;
	t->host->set_online(t->host->hctx, 1);
	return 0;
}

static int open_client(local_if *t, const rnsc_iface_config *cfg)
{
	double wait;
	int rc;
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
	int e = try_connect(t);
	if (e) {
		char msg[256];
		snprintf(msg, sizeof(msg), "no shared instance at %s%s: %s", t->path[0] ? "@" : "",
			 t->name, strerror(e));
		return cfg->fail(cfg->cctx, t->path[0] ? "socket_path" : "port", RNSC_ERR_IO, msg);
	}
	return 0;
}

static int local_open(void *instp, const rnsc_iface_config *cfg, const rnsc_iface_host_api *host,
		      void **handle)
{
	local_inst *inst = instp;
	int server;
	if (strcmp(cfg->type, "LocalServerInterface") == 0)
		server = 1;
	else if (strcmp(cfg->type, "LocalClientInterface") == 0)
		server = 0;
	else
		return cfg->fail(cfg->cctx, "type", RNSC_ERR_NOTFOUND,
				 "not a local interface type");

	local_if tmp = {.inst = inst};
	local_if *t = xalloc(&tmp, sizeof(*t));
	if (!t)
		return cfg->fail(cfg->cctx, NULL, RNSC_ERR_NOMEM, "out of memory");
	t->inst = inst;
	t->host = host;
	t->kind = server ? K_SERVER : K_CLIENT;
	t->fd = -1;
	t->ifac_size = LOCAL_IFAC_SIZE;
	int rc;
	int64_t v;
	const char *sp = NULL;
	if ((rc = cfg->get_str(cfg->cctx, "socket_path", &sp)) == 0) {
		if (!*sp || strlen(sp) + 4 >= sizeof(t->path)) {
			rc = cfg->fail(cfg->cctx, "socket_path", RNSC_ERR_CONFIG_VALUE,
				       "the instance name must be 1 to 100 bytes");
			goto fail;
		}
		snprintf(t->path, sizeof(t->path), "rns/%s", sp);
	} else if (rc != RNSC_ERR_NOTFOUND) {
		goto fail;
	} else if ((rc = cfg->get_int(cfg->cctx, "port", &v)) == 0) {
		if (v < 0 || v > 65535 || (v == 0 && !server)) {
			rc = cfg->fail(cfg->cctx, "port", RNSC_ERR_CONFIG_VALUE,
				       "a TCP port must be between 1 and 65535");
			goto fail;
		}
		t->port = (uint16_t)v;
	} else {
		if (rc == RNSC_ERR_NOTFOUND)
			rc = cfg->fail(cfg->cctx, "socket_path", RNSC_ERR_CONFIG_VALUE,
				       "neither socket_path nor port is set");
		goto fail;
	}
	if ((rc = cfg->get_int(cfg->cctx, "ifac_size", &v)) == 0) {
		if (v >= 8 && v <= 8 * 512)
			t->ifac_size = (size_t)(v / 8);
	} else if (rc != RNSC_ERR_NOTFOUND) {
		goto fail;
	}
	if (t->path[0])
		snprintf(t->name, sizeof(t->name), "%s", t->path);
	else
		snprintf(t->name, sizeof(t->name), "%u", (unsigned)t->port);
	if (!server && (rc = rx_setup(t))) {
		rc = cfg->fail(cfg->cctx, NULL, rc, "out of memory");
		goto fail;
	}
	rc = server ? open_server(t, cfg) : open_client(t, cfg);
	if (rc)
		goto fail;
	if (server && !t->path[0])
		snprintf(t->name, sizeof(t->name), "%u", (unsigned)t->port);
	*handle = t;
	return 0;
fail:
	if (t->timer)
		host->timer_del(host->hctx, t->timer);
	free_if(t);
	return rc;
}

static int local_send(void *handle, const uint8_t *frame, size_t len)
{
	local_if *t = handle;
	if (t->kind == K_SERVER)
		return 0; /* LocalServerInterface.process_outgoing does nothing */
	if (!t->online || t->fd < 0) {
		t->host->drop(t->host->hctx, RNSC_IFACE_DROP_OFFLINE, 1);
		return RNSC_ERR_STATE;
	}
	size_t need = rnsc_hdlc_encoded_len(frame, len);
	int rc = rnsc_txq_reserve(t->inst, &t->tx, &t->tx_off, &t->tx_len, &t->tx_cap, need,
				  TXQ_MAX, 4096);
	if (rc) {
		t->host->drop(t->host->hctx, RNSC_IFACE_DROP_TXQUEUE, 1);
		return rc;
	}
	int n = rnsc_hdlc_encode(t->tx + t->tx_len, t->tx_cap - t->tx_len, frame, len);
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

static int local_stats(void *handle, rnsc_iface_stats *out)
{
	local_if *t = handle;
	out->rx_bytes = t->rxb;
	out->tx_bytes = t->txb;
	out->rx_packets = t->rxp;
	out->tx_packets = t->txp;
	out->online = t->online;
	out->bitrate = LOCAL_BITRATE;
	out->hw_mtu = LOCAL_HW_MTU;
	out->children = t->n_children;
	out->local_port = t->path[0] ? 0 : (t->kind == K_CHILD ? 0 : t->port);
	out->remote_port = t->kind == K_SERVER || t->path[0] ? 0 : t->port;
	out->reconnects = t->reconnects;
	return 0;
}

static void local_close(void *handle)
{
	local_if *t = handle;
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

/* The reference's str(): "Shared Instance[rns/default]" for the server,
 * "LocalInterface[rns/default]" or "LocalInterface[37428]" for the others. */
static int local_describe(void *handle, char *buf, size_t cap)
{
	local_if *t = handle;
	if (t->kind == K_SERVER)
		return snprintf(buf, cap, "Shared Instance[%s]", t->name);
	if (t->path[0])
		return snprintf(buf, cap, "LocalInterface[%s]", t->path);
	return snprintf(buf, cap, "LocalInterface[%s]", t->name);
}

RNSC_IFACE_PLUGIN("local", "LocalServerInterface and LocalClientInterface (the shared instance)",
		  local_types, local_open, local_send, local_stats, local_close, local_describe)
