/* SPDX-License-Identifier: MIT */
/*
 * rnsc's side of the echo benchmark (see echo_run.h). Server and client are separate
 * threads of one process and share nothing but the kernel's loopback:
 *   server  single: one rnsc_loop on one thread; pool: one loop plus rnsc_pool workers
 *           (the copy of each echoed buffer is handed to a worker, as the pool model hands
 *           over signature checks and decryption); sharded: rnsc_shards, connections
 *           assigned round-robin by the accepting loop (TCP) or SO_REUSEPORT sockets (UDP).
 *   client  one rnsc_loop on the calling thread driving every connection.
 * Ownership: everything is allocated and freed inside echo_run_rnsc().
 */
#define _GNU_SOURCE
#include "echo_run.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "err.h"

#define SRV_BUF 65536u

/* ---- server --------------------------------------------------------------------- */

typedef struct srv srv;

/* A TCP connection or a UDP socket of the server. */
typedef struct srv_conn {
	srv *s;
	rnsc_loop *loop;
	rnsc_watch *w;
	int fd;
	int is_udp;
	uint8_t *buf;            /* receive buffer (SRV_BUF) */
	uint8_t *out;            /* bytes to write back (TCP), out_off..out_len pending */
	size_t out_len, out_off, out_cap;
	unsigned jobs;           /* pool jobs in flight for this connection */
	struct srv_conn *next;
} srv_conn;

struct srv {
	const echo_opts *o;
	int lfd;                  /* TCP listener */
	uint16_t port;
	rnsc_loop *loop;          /* single / pool */
	rnsc_pool *pool;
	rnsc_shards *shards;
	pthread_t thr;
	int thr_started;
	pthread_mutex_t mu;       /* guards conns (appended from shard threads) */
	srv_conn *conns;
	struct pool_job *free_jobs; /* recycled on the loop thread (pool model) */
};

/* Backpressure: a TCP connection stops reading while this much waits to be written. */
#define OUT_HIGH (1u << 20)

static void srv_track(srv *s, srv_conn *c)
{
	pthread_mutex_lock(&s->mu);
	c->next = s->conns;
	s->conns = c;
	pthread_mutex_unlock(&s->mu);
}

static void srv_drop(srv_conn *c)
{
	if (c->w)
		rnsc_loop_watch_remove(c->loop, c->w);
	c->w = NULL;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

static void srv_interest(srv_conn *c)
{
	if (!c->w)
		return;
	size_t pending = c->out_len - c->out_off;
	unsigned ev = (pending < OUT_HIGH ? RNSC_EV_READ : 0u) | (pending ? RNSC_EV_WRITE : 0u);
	if (ev != rnsc_loop_watch_events(c->w))
		rnsc_loop_watch_modify(c->loop, c->w, ev);
}

/* Writes what is queued; -1 when the connection failed (it is dropped then). */
static int srv_flush(srv_conn *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			srv_drop(c);
			return -1;
		}
		c->out_off += (size_t)n;
	}
	if (c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	srv_interest(c);
	return 0;
}

static int srv_queue(srv_conn *c, const uint8_t *p, size_t n)
{
	if (c->out_off && c->out_len + n > c->out_cap) {
		memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
		c->out_len -= c->out_off, c->out_off = 0;
	}
	if (c->out_len + n > c->out_cap) {
		size_t cap = c->out_cap ? c->out_cap : SRV_BUF;
		while (cap < c->out_len + n)
			cap *= 2;
		uint8_t *q = realloc(c->out, cap);
		if (!q)
			return -1;
		c->out = q, c->out_cap = cap;
	}
	memcpy(c->out + c->out_len, p, n);
	c->out_len += n;
	return 0;
}

/* Sends bytes back: straight from the caller's buffer when nothing is queued. */
static void srv_echo_tcp(srv_conn *c, const uint8_t *p, size_t n)
{
	if (c->out_len == c->out_off) {
		while (n) {
			ssize_t k = send(c->fd, p, n, MSG_NOSIGNAL);
			if (k < 0) {
				if (errno == EINTR)
					continue;
				if (errno != EAGAIN) {
					srv_drop(c);
					return;
				}
				break;
			}
			p += k, n -= (size_t)k;
		}
	}
	if (n && srv_queue(c, p, n) != 0) {
		srv_drop(c);
		return;
	}
	srv_interest(c);
}

/* Up to UDP_BATCH datagrams per recvmmsg and one sendmmsg back: one syscall pair per
 * batch instead of per datagram. */
#define UDP_BATCH 32
#define UDP_SLOT (SRV_BUF / UDP_BATCH) /* larger datagrams are received one by one */

typedef struct udp_batch {
	struct mmsghdr m[UDP_BATCH];
	struct iovec iov[UDP_BATCH];
	struct sockaddr_in from[UDP_BATCH];
	unsigned n;
} udp_batch;

/* Receives into buf (slots of `slot` bytes); returns the count, 0 when none waits. */
static unsigned udp_recv(int fd, udp_batch *b, uint8_t *buf, size_t slot, unsigned max)
{
	for (unsigned i = 0; i < max; i++) {
		b->iov[i].iov_base = buf + (size_t)i * slot;
		b->iov[i].iov_len = slot;
		memset(&b->m[i].msg_hdr, 0, sizeof(b->m[i].msg_hdr));
		b->m[i].msg_hdr.msg_iov = &b->iov[i];
		b->m[i].msg_hdr.msg_iovlen = 1;
		b->m[i].msg_hdr.msg_name = &b->from[i];
		b->m[i].msg_hdr.msg_namelen = sizeof(b->from[i]);
	}
	int n = recvmmsg(fd, b->m, max, MSG_DONTWAIT, NULL);
	if (n <= 0)
		return 0;
	for (int i = 0; i < n; i++)
		b->iov[i].iov_len = b->m[i].msg_len; /* echo exactly what came */
	return b->n = (unsigned)n;
}

static void udp_send(int fd, udp_batch *b)
{
	for (unsigned sent = 0; sent < b->n;) {
		int k = sendmmsg(fd, b->m + sent, b->n - sent, 0);
		if (k <= 0)
			break;
		sent += (unsigned)k;
	}
}

/* ---- the pool model: the copy of a received buffer runs on a worker ----------------
 * As the runtime's pool model hands over signature checks and decryption, not every
 * packet: a job under POOL_MIN_JOB bytes is answered on the loop thread when nothing
 * earlier from that connection is still on a worker (order is kept either way). */
#define POOL_MIN_JOB 4096u

typedef struct pool_job {
	struct pool_job *next_free;
	srv_conn *c;
	size_t len;
	udp_batch ub; /* UDP */
	uint8_t in[SRV_BUF];
	uint8_t out[SRV_BUF];
} pool_job;

/* Jobs are large (two receive buffers): recycle them instead of mapping fresh memory. */
static pool_job *job_get(srv *s)
{
	pool_job *j = s->free_jobs;
	if (j) {
		s->free_jobs = j->next_free;
		return j;
	}
	return malloc(sizeof(*j));
}

static void job_put(srv *s, pool_job *j)
{
	j->next_free = s->free_jobs;
	s->free_jobs = j;
}

static int pool_work(void *ud)
{
	pool_job *j = ud;
	memcpy(j->out, j->in, j->len);
	if (j->c->is_udp) /* the replies point into out */
		for (unsigned i = 0; i < j->ub.n; i++)
			j->ub.iov[i].iov_base = j->out + ((uint8_t *)j->ub.iov[i].iov_base - j->in);
	return 0;
}

static void pool_done(rnsc_loop *loop, void *ud, int result)
{
	(void)loop;
	pool_job *j = ud;
	srv_conn *c = j->c;
	c->jobs--;
	if (result == 0 && c->fd >= 0) {
		if (c->is_udp)
			udp_send(c->fd, &j->ub);
		else
			srv_echo_tcp(c, j->out, j->len);
	}
	job_put(c->s, j);
}

static int srv_submit(srv_conn *c, pool_job *j)
{
	j->c = c;
	c->jobs++;
	if (rnsc_pool_submit(c->s->pool, pool_work, pool_done, j) != 0) {
		c->jobs--;
		job_put(c->s, j);
		return -1;
	}
	return 0;
}

static void srv_tcp_io(rnsc_loop *loop, rnsc_watch *w, int fd, unsigned ev, void *ud)
{
	(void)loop, (void)w;
	srv_conn *c = ud;
	if ((ev & RNSC_EV_WRITE) && srv_flush(c) != 0)
		return;
	if (!(ev & (RNSC_EV_READ | RNSC_EV_ERROR)))
		return;
	pool_job *j = NULL;
	if (c->s->pool && !(j = job_get(c->s))) {
		srv_drop(c);
		return;
	}
	uint8_t *dst = j ? j->in : c->buf;
	ssize_t n = recv(fd, dst, SRV_BUF, 0);
	if (n <= 0 && j)
		job_put(c->s, j);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		srv_drop(c);
		return;
	}
	if (n < 0)
		return;
	if (j) {
		j->len = (size_t)n;
		if (j->len < POOL_MIN_JOB && !c->jobs) {
			/* not worth a thread hop, and nothing earlier is still on a worker */
			srv_echo_tcp(c, j->in, j->len);
			job_put(c->s, j);
			return;
		}
		if (srv_submit(c, j) != 0)
			srv_drop(c);
		return;
	}
	srv_echo_tcp(c, c->buf, (size_t)n);
}

static void srv_udp_io(rnsc_loop *loop, rnsc_watch *w, int fd, unsigned ev, void *ud)
{
	(void)loop, (void)w, (void)ev;
	srv_conn *c = ud;
	size_t p = c->s->o->payload;
	unsigned max = p <= UDP_SLOT ? UDP_BATCH : 1;
	size_t slot = p <= UDP_SLOT ? UDP_SLOT : SRV_BUF;
	for (int round = 0; round < 8; round++) {
		if (c->s->pool) {
			pool_job *j = job_get(c->s);
			if (!j)
				return;
			if (!udp_recv(fd, &j->ub, j->in, slot, max)) {
				job_put(c->s, j);
				return;
			}
			j->len = (size_t)(j->ub.n - 1) * slot + j->ub.iov[j->ub.n - 1].iov_len;
			size_t bytes = 0;
			for (unsigned i = 0; i < j->ub.n; i++)
				bytes += j->ub.iov[i].iov_len;
			if (bytes < POOL_MIN_JOB && !c->jobs) {
				udp_send(fd, &j->ub); /* small: answered on the loop thread */
				job_put(c->s, j);
				continue;
			}
			if (srv_submit(c, j) != 0)
				return;
			continue;
		}
		udp_batch b;
		unsigned n = udp_recv(fd, &b, c->buf, slot, max);
		if (!n)
			return;
		udp_send(fd, &b);
		if (n < max)
			return;
	}
}

static srv_conn *srv_conn_new(srv *s, rnsc_loop *loop, int fd, int is_udp)
{
	srv_conn *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->buf = malloc(SRV_BUF);
	if (!c->buf) {
		free(c);
		return NULL;
	}
	c->s = s, c->loop = loop, c->fd = fd, c->is_udp = is_udp;
	srv_track(s, c);
	return c;
}

/* Runs on the shard thread the connection was assigned to. */
static void srv_attach(rnsc_loop *loop, void *ud)
{
	srv_conn *c = ud;
	c->loop = loop;
	if (rnsc_loop_watch_add(loop, c->fd, RNSC_EV_READ, srv_tcp_io, c, &c->w) != 0)
		srv_drop(c);
}

static void srv_accept(rnsc_loop *loop, rnsc_watch *w, int fd, unsigned ev, void *ud)
{
	(void)w, (void)ev;
	srv *s = ud;
	for (;;) {
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd < 0)
			return;
		int one = 1;
		setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		srv_conn *c = srv_conn_new(s, loop, cfd, 0);
		if (!c) {
			close(cfd);
			continue;
		}
		if (s->shards) {
			unsigned i = rnsc_shards_next(s->shards);
			if (rnsc_shards_post(s->shards, i, srv_attach, c) != 0)
				srv_drop(c);
		} else {
			srv_attach(loop, c);
		}
	}
}

static int bind_local(int type, uint16_t port, int reuseport, uint16_t *bound)
{
	int fd = socket(AF_INET, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (reuseport)
		setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t al = sizeof(a);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    (type == SOCK_STREAM && listen(fd, 512) != 0) ||
	    getsockname(fd, (struct sockaddr *)&a, &al) != 0) {
		close(fd);
		return -1;
	}
	*bound = ntohs(a.sin_port);
	return fd;
}

static void *srv_thread(void *ud)
{
	srv *s = ud;
	rnsc_loop_run(s->loop);
	return NULL;
}

static int srv_start(srv *s)
{
	const echo_opts *o = s->o;
	int udp = strcmp(o->proto, "udp") == 0;
	unsigned nloops = o->model == RNSC_IO_SHARDED ? o->threads : 1;
	pthread_mutex_init(&s->mu, NULL);
	s->lfd = -1;
	if (o->model == RNSC_IO_SHARDED) {
		if (rnsc_shards_new(NULL, nloops, &s->shards) != 0)
			return -1;
	} else if (rnsc_loop_new(NULL, &s->loop) != 0) {
		return -1;
	}
	if (o->model == RNSC_IO_POOL &&
	    rnsc_pool_new(s->loop, o->threads > 1 ? o->threads - 1 : 1, RNSC_POOL_ORDERED,
			  &s->pool) != 0)
		return -1;
	rnsc_loop *first = s->shards ? rnsc_shards_loop(s->shards, 0) : s->loop;
	if (!udp) {
		s->lfd = bind_local(SOCK_STREAM, 0, 0, &s->port);
		if (s->lfd < 0 || rnsc_loop_watch_add(first, s->lfd, RNSC_EV_READ, srv_accept, s,
						      NULL) != 0)
			return -1;
	} else {
		for (unsigned i = 0; i < nloops; i++) {
			uint16_t p;
			int fd = bind_local(SOCK_DGRAM, s->port, nloops > 1, &p);
			if (fd < 0)
				return -1;
			int big = 4 << 20;
			setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
			s->port = p;
			rnsc_loop *l = s->shards ? rnsc_shards_loop(s->shards, i) : s->loop;
			srv_conn *c = srv_conn_new(s, l, fd, 1);
			if (!c || rnsc_loop_watch_add(l, fd, RNSC_EV_READ, srv_udp_io, c, &c->w) != 0)
				return -1;
		}
	}
	if (s->shards)
		return rnsc_shards_start(s->shards) == 0 ? 0 : -1;
	if (pthread_create(&s->thr, NULL, srv_thread, s) != 0)
		return -1;
	s->thr_started = 1;
	return 0;
}

static void srv_stop(srv *s)
{
	if (s->shards && rnsc_shards_running(s->shards))
		rnsc_shards_stop(s->shards);
	if (s->thr_started) {
		rnsc_loop_stop(s->loop);
		pthread_join(s->thr, NULL);
	}
	/* every loop is owned by this thread again */
	if (s->pool)
		rnsc_pool_del(s->pool);
	for (pool_job *j = s->free_jobs, *n; j; j = n) {
		n = j->next_free;
		free(j);
	}
	for (srv_conn *c = s->conns, *n; c; c = n) {
		n = c->next;
		srv_drop(c);
		free(c->buf);
		free(c->out);
		free(c);
	}
	if (s->lfd >= 0)
		close(s->lfd);
	rnsc_shards_del(s->shards);
	rnsc_loop_del(s->loop);
	pthread_mutex_destroy(&s->mu);
}

/* ---- client --------------------------------------------------------------------- */

typedef struct cli cli;

typedef struct cli_conn {
	cli *k;
	uint32_t id;
	int fd;
	rnsc_watch *w;
	uint64_t send_seq, recv_seq;
	uint64_t *sent_ns;   /* [window]: send time of seq % window */
	uint8_t *rx;         /* received bytes (TCP): at most window messages are in flight */
	size_t rx_have;
	uint8_t *tx;         /* unsent bytes (TCP), at most window messages */
	int in_read;         /* cli_io is processing a read batch */
	size_t tx_len, tx_off;
	int dead;
} cli_conn;

struct cli {
	const echo_opts *o;
	rnsc_loop *loop;
	cli_conn *conns;
	int udp;
	int phase;
	uint64_t t0, t1, drain_deadline;
	struct rusage ru0, ru1;
	echo_result *res;
	echo_reservoir *rsv;
	uint8_t *scratch;
};

static void cli_fail(cli_conn *c, int err)
{
	c->k->res->err[err]++;
	if (!c->dead) {
		c->dead = 1;
		if (c->w)
			rnsc_loop_watch_remove(c->k->loop, c->w);
		c->w = NULL;
	}
}

static int cli_tcp_flush(cli_conn *c)
{
	while (c->tx_off < c->tx_len) {
		ssize_t n = send(c->fd, c->tx + c->tx_off, c->tx_len - c->tx_off, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			cli_fail(c, ECHO_ERR_DISCONNECT);
			return -1;
		}
		c->tx_off += (size_t)n;
	}
	if (c->tx_off == c->tx_len)
		c->tx_off = c->tx_len = 0;
	if (!c->dead)
		rnsc_loop_watch_modify(c->k->loop, c->w,
				       RNSC_EV_READ | (c->tx_len ? RNSC_EV_WRITE : 0u));
	return 0;
}

static void cli_send(cli_conn *c)
{
	cli *k = c->k;
	size_t p = k->o->payload;
	uint64_t seq = c->send_seq++;
	c->sent_ns[seq % k->o->window] = rnsc_monotonic_ns();
	if (k->udp) {
		echo_fill(k->scratch, p, c->id, seq, k->phase);
		if (send(c->fd, k->scratch, p, 0) < 0 && errno != EAGAIN)
			cli_fail(c, ECHO_ERR_DISCONNECT);
		return;
	}
	if (c->tx_off && c->tx_len + p > (size_t)k->o->window * p) {
		memmove(c->tx, c->tx + c->tx_off, c->tx_len - c->tx_off);
		c->tx_len -= c->tx_off, c->tx_off = 0;
	}
	echo_fill(c->tx + c->tx_len, p, c->id, seq, k->phase);
	c->tx_len += p;
	if (!c->in_read)
		cli_tcp_flush(c); /* inside cli_io the flush comes once, after the read batch */
}

static void cli_got(cli_conn *c, const uint8_t *m, size_t len)
{
	cli *k = c->k;
	uint64_t now = rnsc_monotonic_ns(), seq;
	if (len != k->o->payload || echo_check(m, len, c->id, &seq) != 0) {
		cli_fail(c, ECHO_ERR_CONTENT);
		return;
	}
	if (seq != c->recv_seq) {
		cli_fail(c, ECHO_ERR_ORDER);
		return;
	}
	c->recv_seq++;
	if (k->phase == ECHO_PHASE_MEASURE) {
		k->res->echoes++;
		echo_reservoir_add(k->rsv, now - c->sent_ns[seq % k->o->window]);
	}
	if (k->phase != ECHO_PHASE_DRAIN)
		cli_send(c);
}

static void cli_io(rnsc_loop *loop, rnsc_watch *w, int fd, unsigned ev, void *ud)
{
	(void)loop, (void)w;
	cli_conn *c = ud;
	cli *k = c->k;
	size_t p = k->o->payload;
	if (ev & RNSC_EV_WRITE) {
		if (cli_tcp_flush(c) != 0)
			return;
	}
	if (!(ev & (RNSC_EV_READ | RNSC_EV_ERROR)))
		return;
	for (int batch = 0; batch < 64 && !c->dead; batch++) {
		if (k->udp) {
			ssize_t n = recv(fd, k->scratch, ECHO_MAX_PAYLOAD, 0);
			if (n < 0) {
				if (errno != EAGAIN && errno != EINTR)
					cli_fail(c, ECHO_ERR_DISCONNECT);
				return;
			}
			cli_got(c, k->scratch, (size_t)n);
			continue;
		}
		size_t want = (size_t)k->o->window * p - c->rx_have;
		ssize_t n = recv(fd, c->rx + c->rx_have, want, 0);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			cli_fail(c, ECHO_ERR_DISCONNECT);
			break;
		}
		if (n < 0)
			break;
		c->rx_have += (size_t)n;
		size_t at = 0;
		c->in_read = 1;
		for (; at + p <= c->rx_have && !c->dead; at += p)
			cli_got(c, c->rx + at, p);
		c->in_read = 0;
		if (at && at < c->rx_have)
			memmove(c->rx, c->rx + at, c->rx_have - at);
		c->rx_have -= at;
		if ((size_t)n < want)
			break; /* the socket is drained */
	}
	if (!k->udp && !c->dead && c->tx_len > c->tx_off)
		cli_tcp_flush(c);
}

static int outstanding(const cli *k)
{
	for (unsigned i = 0; i < k->o->clients; i++) {
		const cli_conn *c = &k->conns[i];
		if (!c->dead && c->recv_seq != c->send_seq)
			return 1;
	}
	return 0;
}

static void cli_tick(rnsc_loop *loop, rnsc_timer *t, void *ud)
{
	(void)t;
	cli *k = ud;
	uint64_t now = rnsc_monotonic_ns();
	const echo_opts *o = k->o;
	if (k->phase == ECHO_PHASE_WARMUP && now >= k->t0) {
		k->t0 = now;
		getrusage(RUSAGE_SELF, &k->ru0);
		k->phase = ECHO_PHASE_MEASURE;
		k->t1 = now + (uint64_t)(o->measure_s * 1e9);
	} else if (k->phase == ECHO_PHASE_MEASURE && now >= k->t1) {
		k->t1 = now;
		getrusage(RUSAGE_SELF, &k->ru1);
		k->phase = ECHO_PHASE_DRAIN;
		k->drain_deadline = now + (uint64_t)(o->drain_s * 1e9);
	}
	if (k->udp && k->phase != ECHO_PHASE_DRAIN) {
		/* a datagram whose echo is 1 s late is lost; move on with the next one */
		for (unsigned i = 0; i < o->clients; i++) {
			cli_conn *c = &k->conns[i];
			if (c->dead || c->recv_seq == c->send_seq)
				continue;
			if (now - c->sent_ns[c->recv_seq % o->window] > RNSC_NS_PER_S) {
				k->res->err[ECHO_ERR_LOSS]++;
				c->recv_seq++;
				cli_send(c);
			}
		}
	}
	if (k->phase == ECHO_PHASE_DRAIN) {
		if (!outstanding(k)) {
			rnsc_loop_stop(loop);
		} else if (now >= k->drain_deadline) {
			for (unsigned i = 0; i < o->clients; i++)
				if (!k->conns[i].dead && k->conns[i].recv_seq != k->conns[i].send_seq)
					k->res->err[ECHO_ERR_DRAIN]++;
			rnsc_loop_stop(loop);
		}
	}
}

static int cli_connect(cli *k, cli_conn *c, uint16_t port)
{
	int fd = socket(AF_INET, (k->udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		close(fd);
		return -1;
	}
	int one = 1;
	if (!k->udp)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	c->fd = fd;
	return rnsc_loop_watch_add(k->loop, fd, RNSC_EV_READ, cli_io, c, &c->w);
}

/* ---- one run ---------------------------------------------------------------------- */

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

int echo_run_rnsc(const echo_opts *o, echo_result *res)
{
	memset(res, 0, sizeof(*res));
	if (!o->proto || (strcmp(o->proto, "tcp") && strcmp(o->proto, "udp")) ||
	    o->payload < ECHO_MIN_PAYLOAD || o->payload > ECHO_MAX_PAYLOAD || !o->clients ||
	    o->clients > 4096 || !o->window || o->window > 1024 || !o->threads ||
	    o->threads > 256) {
		fprintf(stderr, "rnsc bench echo: bad run options\n");
		return RNSC_ERR_INVAL;
	}
	int rc = RNSC_ERR_SYS;
	srv s = {.o = o};
	cli k = {.o = o, .udp = strcmp(o->proto, "udp") == 0, .res = res};
	k.rsv = malloc(sizeof(*k.rsv));
	k.scratch = malloc(ECHO_MAX_PAYLOAD);
	k.conns = calloc(o->clients, sizeof(*k.conns));
	if (!k.rsv || !k.scratch || !k.conns) {
		rc = RNSC_ERR_NOMEM;
		goto out;
	}
	echo_reservoir_init(k.rsv, 0x5eed);
	if (srv_start(&s) != 0) {
		fprintf(stderr, "rnsc bench echo: cannot start the %s server: %s\n", o->proto,
			strerror(errno));
		goto out;
	}
	if (rnsc_loop_new(NULL, &k.loop) != 0)
		goto out;
	for (unsigned i = 0; i < o->clients; i++) {
		cli_conn *c = &k.conns[i];
		c->k = &k, c->id = i, c->fd = -1;
		c->sent_ns = calloc(o->window, sizeof(uint64_t));
		c->rx = malloc((size_t)o->window * o->payload);
		c->tx = malloc((size_t)o->window * o->payload);
		if (!c->sent_ns || !c->rx || !c->tx) {
			rc = RNSC_ERR_NOMEM;
			goto out;
		}
		if (cli_connect(&k, c, s.port) != 0) {
			fprintf(stderr, "rnsc bench echo: cannot connect client %u: %s\n", i,
				strerror(errno));
			goto out;
		}
	}
	k.phase = ECHO_PHASE_WARMUP;
	k.t0 = rnsc_monotonic_ns() + (uint64_t)(o->warmup_s * 1e9);
	for (unsigned i = 0; i < o->clients; i++)
		for (unsigned j = 0; j < o->window; j++)
			cli_send(&k.conns[i]);
	if (rnsc_loop_timer_add(k.loop, RNSC_NS_PER_MS, RNSC_NS_PER_MS, cli_tick, &k, NULL) != 0)
		goto out;
	rnsc_loop_run(k.loop);

	res->elapsed_s = (double)(k.t1 - k.t0) * 1e-9;
	if (res->elapsed_s > 0) {
		res->rt_per_s = (double)res->echoes / res->elapsed_s;
		res->mib_per_s = 2.0 * (double)o->payload * (double)res->echoes / res->elapsed_s /
				 (1024.0 * 1024.0);
		double cpu = tv_s(k.ru1.ru_utime) + tv_s(k.ru1.ru_stime) - tv_s(k.ru0.ru_utime) -
			     tv_s(k.ru0.ru_stime);
		res->cpu_pct = 100.0 * cpu / res->elapsed_s;
	}
	qsort(k.rsv->us, k.rsv->n, sizeof(uint32_t), echo_u32_cmp);
	res->p50_us = echo_percentile(k.rsv->us, k.rsv->n, 50);
	res->p95_us = echo_percentile(k.rsv->us, k.rsv->n, 95);
	res->p99_us = echo_percentile(k.rsv->us, k.rsv->n, 99);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	res->rss_kib = ru.ru_maxrss;
	rc = 0;
out:
	if (k.conns)
		for (unsigned i = 0; i < o->clients; i++) {
			cli_conn *c = &k.conns[i];
			if (c->w)
				rnsc_loop_watch_remove(k.loop, c->w);
			if (c->fd >= 0)
				close(c->fd);
			free(c->sent_ns), free(c->rx), free(c->tx);
		}
	rnsc_loop_del(k.loop);
	srv_stop(&s);
	free(k.conns), free(k.rsv), free(k.scratch);
	return rc;
}

void echo_result_print(FILE *f, const char *impl, const echo_opts *o, const echo_result *r)
{
	fprintf(f,
		"ECHO impl=%s proto=%s model=%s threads=%u payload=%zu clients=%u window=%u "
		"echoes=%llu elapsed_s=%.6f rt_per_s=%.1f mib_per_s=%.3f p50_us=%.1f p95_us=%.1f "
		"p99_us=%.1f cpu_pct=%.1f rss_kib=%ld",
		impl, o->proto, rnsc_io_model_name(o->model), o->threads, o->payload, o->clients,
		o->window, (unsigned long long)r->echoes, r->elapsed_s, r->rt_per_s, r->mib_per_s,
		r->p50_us, r->p95_us, r->p99_us, r->cpu_pct, r->rss_kib);
	for (int e = 0; e < ECHO_ERR_COUNT; e++)
		fprintf(f, " err_%s=%llu", echo_err_names[e], (unsigned long long)r->err[e]);
	fputc('\n', f);
}

int echo_run_main(int argc, char **argv, const char *who)
{
	if (argc != 10) {
		fprintf(stderr, "usage: %s --one PROTO MODEL THREADS PAYLOAD CLIENTS WINDOW WARMUP "
				"MEASURE DRAIN\n",
			who);
		return 2;
	}
	echo_opts o = {0};
	o.proto = argv[1];
	if (rnsc_io_model_from_name(argv[2], &o.model) != 0) {
		fprintf(stderr, "%s: unknown IO model '%s'\n", who, argv[2]);
		return 2;
	}
	o.threads = (unsigned)strtoul(argv[3], NULL, 10);
	if (o.model == RNSC_IO_SINGLE)
		o.threads = 1;
	o.payload = strtoul(argv[4], NULL, 10);
	o.clients = (unsigned)strtoul(argv[5], NULL, 10);
	o.window = (unsigned)strtoul(argv[6], NULL, 10);
	o.warmup_s = strtod(argv[7], NULL);
	o.measure_s = strtod(argv[8], NULL);
	o.drain_s = strtod(argv[9], NULL);
	echo_result r;
	if (echo_run_rnsc(&o, &r) != 0)
		return 1;
	echo_result_print(stdout, "rnsc", &o, &r);
	return 0;
}
