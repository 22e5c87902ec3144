/* SPDX-License-Identifier: MIT */
/*
 * rnsc's side of the echo benchmark (see echo_run.h). Server and client are separate
 * threads of one process and share nothing but the kernel's loopback:
 *   server  single: one rnsc_loop on one thread; pool: one loop plus rnsc_pool workers
 *           (the copy of each echoed buffer is handed to a worker, as the pool model hands
 *           over signature checks and decryption); sharded: rnsc_shards, connections
 *           assigned round-robin by the accepting loop (TCP) or SO_REUSEPORT sockets (UDP).
 *   client  one rnsc_loop on the calling thread driving every connection.
 * Protocols: tcp and udp on raw sockets; tls, websocket, wss, http and https through the
 * interfaces' own code paths: the TLS byte pipe and contexts of plugins/iface/tls_io.c
 * (OpenSSL TLS 1.3; plain sockets go through the same pipe with no SSL), the RFC 6455
 * codec of plugins/iface/ws_codec.c (handshake, masking, frame headers) and the HTTP/1.1
 * keep-alive subset of echo_http.c. TLS certificates come from RNSC_ECHO_CERT and
 * RNSC_ECHO_KEY, made with the openssl CLI by echo_tls_material() when unset.
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
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "echo_http.h"
#include "err.h"
#include "tls_io.h"
#include "ws_codec.h"

/* ---- protocols ------------------------------------------------------------------- */

enum eproto { P_TCP, P_UDP, P_TLS, P_WS, P_WSS, P_HTTP, P_HTTPS, P_COUNT };
static const char *const proto_names[P_COUNT] = {"tcp", "udp",  "tls",  "websocket",
						 "wss", "http", "https"};
enum eframe { F_RAW, F_WS, F_HTTP };

int echo_proto_known(const char *name)
{
	for (int i = 0; i < P_COUNT; i++)
		if (name && !strcmp(name, proto_names[i]))
			return 1;
	return 0;
}

static int proto_of(const char *name)
{
	for (int i = 0; i < P_COUNT; i++)
		if (!strcmp(name, proto_names[i]))
			return i;
	return -1;
}

static int proto_tls(int p)
{
	return p == P_TLS || p == P_WSS || p == P_HTTPS;
}

static enum eframe proto_frame(int p)
{
	return p == P_WS || p == P_WSS ? F_WS : p == P_HTTP || p == P_HTTPS ? F_HTTP : F_RAW;
}

int echo_proto_needs_tls(const char *name)
{
	int p = name ? proto_of(name) : -1;
	return p >= 0 && proto_tls(p);
}

/* ---- test certificates ------------------------------------------------------------ */

static char tls_dir[64];

static void tls_cleanup(void)
{
	char f[96];
	snprintf(f, sizeof(f), "%s/cert.pem", tls_dir);
	unlink(f);
	snprintf(f, sizeof(f), "%s/key.pem", tls_dir);
	unlink(f);
	rmdir(tls_dir);
}

int echo_tls_material(void)
{
	const char *c = getenv("RNSC_ECHO_CERT"), *k = getenv("RNSC_ECHO_KEY");
	if (c && *c && k && *k)
		return 0;
	snprintf(tls_dir, sizeof(tls_dir), "/tmp/rnsc-echo-tls.XXXXXX");
	if (!mkdtemp(tls_dir)) {
		fprintf(stderr, "rnsc bench echo: cannot make a temporary directory: %s\n",
			strerror(errno));
		return -1;
	}
	char cert[96], key[96];
	snprintf(cert, sizeof(cert), "%s/cert.pem", tls_dir);
	snprintf(key, sizeof(key), "%s/key.pem", tls_dir);
	/* a throw-away self-signed P-256 certificate for localhost and 127.0.0.1 */
	pid_t pid = fork();
	if (pid == 0) {
		int dn = open("/dev/null", O_WRONLY);
		if (dn >= 0)
			dup2(dn, 1), dup2(dn, 2);
		execlp("openssl", "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
		       "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", cert,
		       "-days", "2", "-subj", "/CN=localhost", "-addext",
		       "subjectAltName=DNS:localhost,IP:127.0.0.1", (char *)NULL);
		_exit(127);
	}
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "rnsc bench echo: the openssl CLI could not make a test "
				"certificate (install the Debian package 'openssl')\n");
		tls_cleanup();
		return -1;
	}
	atexit(tls_cleanup);
	setenv("RNSC_ECHO_CERT", cert, 1);
	setenv("RNSC_ECHO_KEY", key, 1);
	return 0;
}

/* The interfaces' context builders read a config section; this one holds the settings. */
typedef struct kv_cfg {
	const char *k[4], *v[4];
} kv_cfg;

static int kv_get_str(void *cctx, const char *key, const char **out)
{
	kv_cfg *c = cctx;
	for (int i = 0; i < 4; i++)
		if (c->k[i] && !strcmp(c->k[i], key)) {
			*out = c->v[i];
			return 0;
		}
	return RNSC_ERR_NOTFOUND;
}

static int kv_get_none(void *cctx, const char *key, void *out)
{
	(void)cctx, (void)key, (void)out;
	return RNSC_ERR_NOTFOUND;
}

static int kv_get_int(void *cctx, const char *key, int64_t *out)
{
	return kv_get_none(cctx, key, out);
}

static int kv_get_bool(void *cctx, const char *key, int *out)
{
	return kv_get_none(cctx, key, out);
}

static int kv_get_float(void *cctx, const char *key, double *out)
{
	return kv_get_none(cctx, key, out);
}

static int kv_get_list(void *cctx, const char *key, const char *const **items, size_t *n)
{
	(void)items, (void)n;
	return kv_get_none(cctx, key, NULL);
}

static int kv_fail(void *cctx, const char *key, int code, const char *msg)
{
	(void)cctx;
	fprintf(stderr, "rnsc bench echo: TLS setting %s: %s\n", key ? key : "-", msg);
	return code;
}

static void kv_init(rnsc_iface_config *cfg, kv_cfg *kv)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->struct_size = sizeof(*cfg);
	cfg->cctx = kv;
	cfg->name = "echo";
	cfg->type = "echo";
	cfg->get_str = kv_get_str;
	cfg->get_int = kv_get_int;
	cfg->get_bool = kv_get_bool;
	cfg->get_float = kv_get_float;
	cfg->fail = kv_fail;
	cfg->get_list = kv_get_list;
}

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
	uint8_t *buf; /* receive buffer (SRV_BUF) */
	uint8_t *out; /* bytes to write back (TCP), out_off..out_len pending */
	size_t out_len, out_off, out_cap;
	unsigned jobs; /* pool jobs in flight for this connection */
	/* stream protocols other than tcp (tls, websocket, wss, http, https) */
	rnsc_tlsio io; /* TLS or plain byte pipe (tls_io.c) */
	int has_io;
	uint8_t *in; /* received plaintext, in_len bytes (IN_CAP) */
	size_t in_len;
	int upgraded; /* websocket: the opening handshake is done */
	int counted;  /* in s->live */
	struct srv_conn *next;
} srv_conn;

/* A whole message (head + 65000 bytes) always fits; reads take at most IN_READ so that
 * what a connection holds (in, and out up to OUT_FLUSH before it is written) stays near
 * one message plus one read, not everything its peer has in flight. */
#define IN_CAP (ECHO_MAX_PAYLOAD + ECHO_HTTP_MAX_HEAD + 1024u)
#define IN_READ (32u * 1024u)
#define OUT_FLUSH (64u * 1024u)

struct srv {
	const echo_opts *o;
	int lfd; /* TCP listener */
	uint16_t port;
	rnsc_loop *loop; /* single / pool */
	rnsc_pool *pool;
	rnsc_shards *shards;
	pthread_t thr;
	int thr_started;
	pthread_mutex_t mu; /* guards conns (appended from shard threads) */
	srv_conn *conns;
	struct pool_job *free_jobs; /* recycled on the loop thread (pool model) */
	unsigned live;              /* pool model: open TCP connections (loop thread only) */
	unsigned jobs_total;        /* pool model: jobs on workers (loop thread only) */
	unsigned resume_rr;         /* pool model: where sec_resume() starts */
	int proto;
	SSL_CTX *sctx; /* TLS protocols */
	BIO_METHOD *bm;
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
	if (c->counted)
		c->s->live--;
	c->counted = 0;
	if (c->has_io)
		rnsc_tlsio_free(&c->io);
	c->has_io = 0;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

/* Pool model, stream protocols: while this many jobs are on workers the loop reads no
 * more (each job holds a copy of its message; without a bound every message in flight
 * could be waiting in the pool queue, and memory grows with the load, not the work). */
#define POOL_MAX_INFLIGHT 8u

static int sec_paused(const srv *s)
{
	return s->pool && s->jobs_total >= POOL_MAX_INFLIGHT;
}

static void srv_interest(srv_conn *c)
{
	if (!c->w)
		return;
	size_t pending = c->out_len - c->out_off;
	int rd = pending < OUT_HIGH && !(c->has_io && sec_paused(c->s));
	unsigned ev = (rd ? RNSC_EV_READ : 0u) | (pending ? RNSC_EV_WRITE : 0u);
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
	if (n) /* an empty frame: c->out may still be NULL */
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
 * earlier from that connection is still on a worker (order is kept either way). A large
 * job goes to a worker only when the loop has other work meanwhile (another connection
 * open, or more datagrams waiting): with a single peer the hop to a worker and back (two
 * thread wake-ups) only adds latency, and nothing runs in parallel with it. */
#define POOL_MIN_JOB 4096u

typedef struct pool_job {
	struct pool_job *next_free;
	srv_conn *c;
	size_t len;
	uint8_t hdr[96]; /* stream protocols: frame or response head, written before out */
	size_t hl;
	int masked; /* websocket: unmask out with mask */
	uint8_t mask[4];
	udp_batch ub; /* UDP */
	uint8_t in[SRV_BUF];
	uint8_t out[SRV_BUF];
} pool_job;

/* Jobs are large (two receive buffers): recycle them instead of mapping fresh memory. */
static pool_job *job_get(srv *s)
{
	pool_job *j = s->free_jobs;
	if (j)
		s->free_jobs = j->next_free;
	else if (!(j = malloc(sizeof(*j))))
		return NULL;
	/* a raw TCP job sets neither: a fresh or recycled job must not unmask or carry a head */
	j->masked = 0;
	j->hl = 0;
	return j;
}

static void job_put(srv *s, pool_job *j)
{
	j->next_free = s->free_jobs;
	s->free_jobs = j;
}

static int pool_work(void *ud)
{
	pool_job *j = ud;
	if (j->len)
		memcpy(j->out, j->in, j->len);
	if (j->masked)
		rnsc_ws_mask(j->out, j->len, j->mask, 0);
	if (j->c->is_udp) /* the replies point into out */
		for (unsigned i = 0; i < j->ub.n; i++)
			j->ub.iov[i].iov_base = j->out + ((uint8_t *)j->ub.iov[i].iov_base - j->in);
	return 0;
}

static void sec_done(srv_conn *c, pool_job *j);
static void sec_resume(srv *s);

static void pool_done(rnsc_loop *loop, void *ud, int result)
{
	(void)loop;
	pool_job *j = ud;
	srv_conn *c = j->c;
	srv *s = c->s;
	int was_paused = sec_paused(s);
	c->jobs--;
	s->jobs_total--;
	if (result == 0 && c->fd >= 0) {
		if (c->is_udp)
			udp_send(c->fd, &j->ub);
		else if (c->has_io)
			sec_done(c, j);
		else
			srv_echo_tcp(c, j->out, j->len);
	}
	job_put(s, j);
	if (was_paused && !sec_paused(s))
		sec_resume(s);
}

static int srv_submit(srv_conn *c, pool_job *j)
{
	j->c = c;
	c->jobs++;
	c->s->jobs_total++;
	if (rnsc_pool_submit(c->s->pool, pool_work, pool_done, j) != 0) {
		c->jobs--;
		c->s->jobs_total--;
		job_put(c->s, j);
		return -1;
	}
	return 0;
}

/* ---- stream protocols: tls, websocket, wss, http, https -------------------------- */

/* Writes what is queued through the byte pipe; -1 when the connection failed (dropped). */
static int sec_flush(srv_conn *c)
{
	char why[256];
	while (c->out_off < c->out_len) {
		ssize_t n = rnsc_tlsio_write(&c->io, c->out + c->out_off, c->out_len - c->out_off,
					     why, sizeof(why));
		if (n == RNSC_TLSIO_WANT_WRITE || n == RNSC_TLSIO_WANT_READ)
			break;
		if (n < 0) {
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

static void sec_done(srv_conn *c, pool_job *j)
{
	if (srv_queue(c, j->hdr, j->hl) != 0 || srv_queue(c, j->out, j->len) != 0) {
		srv_drop(c);
		return;
	}
	sec_flush(c);
}

/* Answers one message: head (frame header or response head) and the payload, unmasked with
 * mask when given. In the pool model a large payload (or anything behind one still on a
 * worker) is copied and unmasked by a worker, completions in order. */
static int srv_emit(srv_conn *c, const uint8_t *hdr, size_t hl, uint8_t *p, size_t n,
		    const uint8_t *mask)
{
	srv *s = c->s;
	if (s->pool && ((n >= POOL_MIN_JOB && s->live > 1) || c->jobs)) {
		pool_job *j = job_get(s);
		if (!j || hl > sizeof(j->hdr))
			return -1;
		if (hl)
			memcpy(j->hdr, hdr, hl);
		j->hl = hl;
		if (n) /* an empty payload has no buffer */
			memcpy(j->in, p, n);
		j->len = n;
		j->masked = mask != NULL;
		if (mask)
			memcpy(j->mask, mask, 4);
		return srv_submit(c, j);
	}
	if (mask)
		rnsc_ws_mask(p, n, mask, 0);
	if (srv_queue(c, hdr, hl) != 0 || srv_queue(c, p, n) != 0)
		return -1;
	return 0;
}

/* Consumes every complete message in c->in; -1 on a protocol error. */
static int srv_process(srv_conn *c)
{
	uint8_t *in = c->in;
	size_t len = c->in_len, at = 0;
	uint8_t hdr[128];
	switch (proto_frame(c->s->proto)) {
	case F_RAW:
		if (srv_emit(c, NULL, 0, in, len, NULL) != 0)
			return -1;
		at = len;
		break;
	case F_WS:
		if (!c->upgraded) {
			size_t e = rnsc_ws_header_end(in, len);
			if (!e)
				return len > 8192 ? -1 : 0;
			char key[RNSC_WS_KEY_LEN + 1], acc[RNSC_WS_ACCEPT_LEN + 1], resp[192];
			const char *why = NULL;
			if (rnsc_ws_parse_request(in, e, "/echo", key, &why) != 0 ||
			    rnsc_ws_accept(key, strlen(key), acc) != 0)
				return -1;
			int hn = snprintf(
				resp, sizeof(resp),
				"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
				"Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
				acc);
			if (srv_queue(c, (const uint8_t *)resp, (size_t)hn) != 0)
				return -1;
			c->upgraded = 1;
			at = e;
		}
		for (;;) {
			rnsc_ws_frame f;
			int h = rnsc_ws_parse_header(in + at, len - at, 1, ECHO_MAX_PAYLOAD, &f);
			if (h < 0)
				return -1;
			if (h == 0 || len - at - (size_t)h < f.len)
				break;
			uint8_t *pl = in + at + h;
			size_t fl = (size_t)f.len;
			if (f.opcode == RNSC_WS_OP_BINARY || f.opcode == RNSC_WS_OP_TEXT ||
			    f.opcode == RNSC_WS_OP_PING) {
				if (!f.fin) /* the benchmark's messages are never fragmented */
					return -1;
				unsigned op =
					f.opcode == RNSC_WS_OP_PING ? RNSC_WS_OP_PONG : f.opcode;
				size_t hl = rnsc_ws_build_header(hdr, 1, op, f.len, NULL);
				if (srv_emit(c, hdr, hl, pl, fl, f.mask) != 0)
					return -1;
			} else if (f.opcode != RNSC_WS_OP_PONG) {
				return -1; /* close or a stray continuation: end the connection */
			}
			at += (size_t)h + fl;
		}
		break;
	case F_HTTP:
		for (;;) {
			echo_http_head hd;
			int h = echo_http_parse(in + at, len - at, 1, ECHO_MAX_PAYLOAD, &hd);
			if (h < 0)
				return -1;
			if (h == 0 || len - at - (size_t)h < hd.body_len)
				break;
			size_t hl = echo_http_response_head(hdr, sizeof(hdr), hd.body_len);
			if (srv_emit(c, hdr, hl, in + at + h, hd.body_len, NULL) != 0)
				return -1;
			at += (size_t)h + hd.body_len;
		}
		break;
	}
	if (at && at < len)
		memmove(in, in + at, len - at);
	c->in_len = len - at;
	return 0;
}

static void srv_sec_io(rnsc_loop *loop, rnsc_watch *w, int fd, unsigned ev, void *ud)
{
	(void)w, (void)fd;
	srv_conn *c = ud;
	char why[256];
	if (!c->io.established) {
		int r = rnsc_tlsio_handshake(&c->io, why, sizeof(why));
		if (r == RNSC_TLSIO_WANT_READ || r == RNSC_TLSIO_WANT_WRITE) {
			unsigned want = r == RNSC_TLSIO_WANT_READ ? RNSC_EV_READ : RNSC_EV_WRITE;
			if (rnsc_loop_watch_events(c->w) != want)
				rnsc_loop_watch_modify(loop, c->w, want);
			return;
		}
		if (r != 0) {
			srv_drop(c);
			return;
		}
	}
	if (c->out_len > c->out_off && sec_flush(c) != 0)
		return;
	/* read until the pipe is empty: OpenSSL may hold decrypted bytes the socket's
	 * level-triggered readiness would never report (sec_resume() comes back for them) */
	while (c->out_len - c->out_off < OUT_HIGH && !sec_paused(c->s)) {
		if (c->in_len == IN_CAP) {
			srv_drop(c);
			return;
		}
		size_t room = IN_CAP - c->in_len;
		ssize_t n = rnsc_tlsio_read(&c->io, c->in + c->in_len,
					    room < IN_READ ? room : IN_READ, why, sizeof(why));
		if (n == RNSC_TLSIO_WANT_READ || n == RNSC_TLSIO_WANT_WRITE)
			break;
		if (n < 0 || (c->in_len += (size_t)n, srv_process(c) != 0)) {
			srv_drop(c);
			return;
		}
		if (c->out_len - c->out_off >= OUT_FLUSH && sec_flush(c) != 0)
			return;
	}
	sec_flush(c);
}

/* The pool has room again: the stream connections read on (one loop: the pool model),
 * starting one further along the list each time so none is always served last. */
static void sec_resume(srv *s)
{
	pthread_mutex_lock(&s->mu);
	srv_conn *list = s->conns;
	pthread_mutex_unlock(&s->mu);
	unsigned n = 0;
	for (srv_conn *c = list; c; c = c->next)
		n++;
	if (!n)
		return;
	unsigned start = s->resume_rr++ % n, i = 0;
	srv_conn *first = list;
	for (; i < start; i++)
		first = first->next;
	srv_conn *c = first;
	for (i = 0; i < n && !sec_paused(s); i++, c = c->next ? c->next : list)
		if (c->has_io && c->w && c->fd >= 0)
			srv_sec_io(c->loop, c->w, c->fd, RNSC_EV_READ, c);
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
		if ((j->len < POOL_MIN_JOB || c->s->live < 2) && !c->jobs) {
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
			if ((bytes < POOL_MIN_JOB || round == 0) && !c->jobs) {
				udp_send(fd,
					 &j->ub); /* small or alone: answered on the loop thread */
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
	/* tcp and udp receive into buf; the other protocols into in */
	if ((is_udp || s->proto == P_TCP) && !(c->buf = malloc(SRV_BUF))) {
		free(c);
		return NULL;
	}
	c->s = s, c->loop = loop, c->fd = fd, c->is_udp = is_udp;
	srv_track(s, c);
	if (!is_udp && s->proto != P_TCP) {
		/* tracked from here: on failure has_io stays 0 and the caller drops it */
		if ((c->in = malloc(IN_CAP)) &&
		    rnsc_tlsio_start(&c->io, s->sctx, s->bm, fd, 1, NULL) == 0)
			c->has_io = 1;
	}
	return c;
}

/* Runs on the shard thread the connection was assigned to. */
static void srv_attach(rnsc_loop *loop, void *ud)
{
	srv_conn *c = ud;
	c->loop = loop;
	if (rnsc_loop_watch_add(loop, c->fd, RNSC_EV_READ, c->has_io ? srv_sec_io : srv_tcp_io, c,
				&c->w) != 0) {
		srv_drop(c);
		return;
	}
	if (c->s->pool) { /* the pool model has one loop: no other thread counts */
		c->s->live++;
		c->counted = 1;
	}
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
		if (s->proto != P_TCP && !c->has_io) {
			srv_drop(c);
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
	s->proto = proto_of(o->proto);
	if (proto_tls(s->proto)) {
		/* the TLS interface's server settings: certificate and private_key */
		kv_cfg kv = {{"certificate", "private_key"},
			     {getenv("RNSC_ECHO_CERT"), getenv("RNSC_ECHO_KEY")}};
		rnsc_iface_config cfg;
		kv_init(&cfg, &kv);
		if (!kv.v[0] || !kv.v[1]) {
			fprintf(stderr, "rnsc bench echo: RNSC_ECHO_CERT and RNSC_ECHO_KEY are not "
					"set\n");
			return -1;
		}
		if (rnsc_tlsio_server_ctx(&cfg, &s->sctx) != 0 ||
		    !(s->bm = rnsc_tlsio_bio_method_new()))
			return -1;
	}
	if (o->model == RNSC_IO_SHARDED) {
		if (rnsc_shards_new(NULL, nloops, &s->shards) != 0)
			return -1;
	} else if (rnsc_loop_new(NULL, &s->loop) != 0) {
		return -1;
	}
	if (o->model == RNSC_IO_POOL && rnsc_pool_new(s->loop, o->threads > 1 ? o->threads - 1 : 1,
						      RNSC_POOL_ORDERED, &s->pool) != 0)
		return -1;
	rnsc_loop *first = s->shards ? rnsc_shards_loop(s->shards, 0) : s->loop;
	if (!udp) {
		s->lfd = bind_local(SOCK_STREAM, 0, 0, &s->port);
		if (s->lfd < 0 ||
		    rnsc_loop_watch_add(first, s->lfd, RNSC_EV_READ, srv_accept, s, NULL) != 0)
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
			if (!c ||
			    rnsc_loop_watch_add(l, fd, RNSC_EV_READ, srv_udp_io, c, &c->w) != 0)
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
		free(c->in);
		free(c->out);
		free(c);
	}
	if (s->lfd >= 0)
		close(s->lfd);
	rnsc_shards_del(s->shards);
	rnsc_loop_del(s->loop);
	pthread_mutex_destroy(&s->mu);
	if (s->sctx)
		SSL_CTX_free(s->sctx);
	rnsc_tlsio_bio_method_free(s->bm);
}

/* ---- client --------------------------------------------------------------------- */

typedef struct cli cli;

typedef struct cli_conn {
	cli *k;
	uint32_t id;
	int fd;
	rnsc_watch *w;
	uint64_t send_seq, recv_seq;
	uint64_t *sent_ns; /* [window]: send time of seq % window */
	uint8_t *rx;       /* received bytes (TCP): at most window messages are in flight */
	size_t rx_have;
	uint8_t *tx; /* unsent bytes (TCP), at most window messages */
	int in_read; /* cli_io is processing a read batch */
	size_t tx_len, tx_off;
	int dead;
	/* stream protocols other than tcp */
	rnsc_tlsio io;
	int has_io;
	size_t rx_cap, tx_cap;
	uint64_t mask_rng; /* websocket masks and handshake keys */
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
	int proto;
	SSL_CTX *cctx; /* TLS protocols: trusts the test certificate for localhost */
	BIO_METHOD *bm;
	rnsc_tlsio_peer peer;
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

static void cli_sec_frame(cli_conn *c, uint64_t seq);
static int cli_sec_flush(cli_conn *c);

static void cli_send(cli_conn *c)
{
	cli *k = c->k;
	size_t p = k->o->payload;
	uint64_t seq = c->send_seq++;
	c->sent_ns[seq % k->o->window] = rnsc_monotonic_ns();
	if (c->has_io) {
		cli_sec_frame(c, seq);
		if (!c->in_read)
			cli_sec_flush(c);
		return;
	}
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
				if (!k->conns[i].dead &&
				    k->conns[i].recv_seq != k->conns[i].send_seq)
					k->res->err[ECHO_ERR_DRAIN]++;
			rnsc_loop_stop(loop);
		}
	}
}

/* ---- client: stream protocols ---------------------------------------------------- */

#define CLI_HEAD 96u /* room for a frame or request head per message */

static int cli_sec_flush(cli_conn *c)
{
	char why[256];
	while (c->tx_off < c->tx_len) {
		ssize_t n = rnsc_tlsio_write(&c->io, c->tx + c->tx_off, c->tx_len - c->tx_off, why,
					     sizeof(why));
		if (n == RNSC_TLSIO_WANT_WRITE || n == RNSC_TLSIO_WANT_READ)
			break;
		if (n < 0) {
			cli_fail(c, ECHO_ERR_DISCONNECT);
			return -1;
		}
		c->tx_off += (size_t)n;
	}
	if (c->tx_off == c->tx_len)
		c->tx_off = c->tx_len = 0;
	if (!c->dead) {
		unsigned want = RNSC_EV_READ | (c->tx_len ? RNSC_EV_WRITE : 0u);
		if (rnsc_loop_watch_events(c->w) != want)
			rnsc_loop_watch_modify(c->k->loop, c->w, want);
	}
	return 0;
}

/* Appends one message, framed for the protocol, to c->tx. */
static void cli_sec_frame(cli_conn *c, uint64_t seq)
{
	cli *k = c->k;
	size_t p = k->o->payload;
	if (c->tx_off && c->tx_len + p + CLI_HEAD > c->tx_cap) {
		memmove(c->tx, c->tx + c->tx_off, c->tx_len - c->tx_off);
		c->tx_len -= c->tx_off, c->tx_off = 0;
	}
	uint8_t *m = c->tx + c->tx_len;
	size_t hl = 0;
	switch (proto_frame(k->proto)) {
	case F_RAW:
		break;
	case F_WS: {
		uint64_t r = echo_xorshift(&c->mask_rng);
		uint8_t mk[4] = {(uint8_t)r, (uint8_t)(r >> 8), (uint8_t)(r >> 16),
				 (uint8_t)(r >> 24)};
		hl = rnsc_ws_build_header(m, 1, RNSC_WS_OP_BINARY, p, mk);
		echo_fill(m + hl, p, c->id, seq, k->phase);
		rnsc_ws_mask(m + hl, p, mk, 0);
		c->tx_len += hl + p;
		return;
	}
	case F_HTTP:
		hl = echo_http_request_head(m, CLI_HEAD, p);
		break;
	}
	echo_fill(m + hl, p, c->id, seq, k->phase);
	c->tx_len += hl + p;
}

/* Consumes the complete echoes in c->rx. */
static void cli_sec_parse(cli_conn *c)
{
	cli *k = c->k;
	size_t p = k->o->payload, at = 0;
	c->in_read = 1;
	while (!c->dead) {
		uint8_t *q = c->rx + at;
		size_t left = c->rx_have - at;
		if (proto_frame(k->proto) == F_RAW) {
			if (left < p)
				break;
			cli_got(c, q, p);
			at += p;
		} else if (proto_frame(k->proto) == F_WS) {
			rnsc_ws_frame f;
			int h = rnsc_ws_parse_header(q, left, 0, ECHO_MAX_PAYLOAD, &f);
			if (h < 0 || (h > 0 && (f.opcode != RNSC_WS_OP_BINARY || !f.fin))) {
				cli_fail(c, ECHO_ERR_CONTENT);
				break;
			}
			if (h == 0 || left - (size_t)h < f.len)
				break;
			cli_got(c, q + h, (size_t)f.len);
			at += (size_t)h + (size_t)f.len;
		} else {
			echo_http_head hd;
			int h = echo_http_parse(q, left, 0, ECHO_MAX_PAYLOAD, &hd);
			if (h < 0 || (h > 0 && (hd.status != 200 || hd.close))) {
				cli_fail(c, ECHO_ERR_CONTENT);
				break;
			}
			if (h == 0 || left - (size_t)h < hd.body_len)
				break;
			cli_got(c, q + h, hd.body_len);
			at += (size_t)h + hd.body_len;
		}
	}
	c->in_read = 0;
	if (at && at < c->rx_have)
		memmove(c->rx, c->rx + at, c->rx_have - at);
	c->rx_have -= at;
}

static void cli_sec_io(rnsc_loop *loop, rnsc_watch *w, int fd, unsigned ev, void *ud)
{
	(void)loop, (void)w, (void)fd, (void)ev;
	cli_conn *c = ud;
	char why[256];
	if (c->tx_len > c->tx_off && cli_sec_flush(c) != 0)
		return;
	/* until the pipe is empty (decrypted bytes may wait inside OpenSSL) */
	while (!c->dead) {
		if (c->rx_have == c->rx_cap) {
			cli_fail(c, ECHO_ERR_CONTENT); /* more than the window's echoes */
			return;
		}
		ssize_t n = rnsc_tlsio_read(&c->io, c->rx + c->rx_have, c->rx_cap - c->rx_have, why,
					    sizeof(why));
		if (n == RNSC_TLSIO_WANT_READ || n == RNSC_TLSIO_WANT_WRITE)
			break;
		if (n < 0) {
			cli_fail(c, ECHO_ERR_DISCONNECT);
			return;
		}
		c->rx_have += (size_t)n;
		cli_sec_parse(c);
	}
	if (!c->dead && c->tx_len > c->tx_off)
		cli_sec_flush(c);
}

/* Waits (up to 5 s) for what the pipe asked for during connection set-up. */
static int cli_wait(int fd, ssize_t want)
{
	struct pollfd pf = {.fd = fd, .events = want == RNSC_TLSIO_WANT_WRITE ? POLLOUT : POLLIN};
	return poll(&pf, 1, 5000) == 1 ? 0 : -1;
}

/* TLS handshake and the websocket opening handshake, done before the run starts (the
 * server's loops are already running on their threads). */
static int cli_sec_setup(cli *k, cli_conn *c)
{
	char why[256];
	if (rnsc_tlsio_start(&c->io, k->cctx, k->bm, c->fd, 0, &k->peer) != 0)
		return -1;
	c->has_io = 1;
	for (;;) {
		int r = rnsc_tlsio_handshake(&c->io, why, sizeof(why));
		if (r == 0)
			break;
		if ((r != RNSC_TLSIO_WANT_READ && r != RNSC_TLSIO_WANT_WRITE) ||
		    cli_wait(c->fd, r)) {
			fprintf(stderr, "rnsc bench echo: TLS handshake: %s\n", why);
			return -1;
		}
	}
	if (proto_frame(k->proto) != F_WS)
		return 0;
	uint8_t raw[16];
	char key[RNSC_WS_KEY_LEN + 1], acc[RNSC_WS_ACCEPT_LEN + 1], req[256];
	for (int i = 0; i < 16; i++)
		raw[i] = (uint8_t)echo_xorshift(&c->mask_rng);
	EVP_EncodeBlock((unsigned char *)key, raw, 16);
	if (rnsc_ws_accept(key, strlen(key), acc) != 0)
		return -1;
	int n = snprintf(req, sizeof(req),
			 "GET /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
			 "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
			 "Sec-WebSocket-Version: 13\r\n\r\n",
			 key);
	for (size_t off = 0; off < (size_t)n;) {
		ssize_t r = rnsc_tlsio_write(&c->io, req + off, (size_t)n - off, why, sizeof(why));
		if (r > 0)
			off += (size_t)r;
		else if ((r != RNSC_TLSIO_WANT_READ && r != RNSC_TLSIO_WANT_WRITE) ||
			 cli_wait(c->fd, r))
			return -1;
	}
	for (;;) {
		ssize_t r = rnsc_tlsio_read(&c->io, c->rx + c->rx_have, c->rx_cap - c->rx_have, why,
					    sizeof(why));
		if (r > 0) {
			c->rx_have += (size_t)r;
			size_t e = rnsc_ws_header_end(c->rx, c->rx_have);
			if (!e)
				continue;
			const char *bad = NULL;
			if (rnsc_ws_parse_response(c->rx, e, acc, &bad) != 0) {
				fprintf(stderr, "rnsc bench echo: websocket handshake: %s\n", bad);
				return -1;
			}
			memmove(c->rx, c->rx + e, c->rx_have - e);
			c->rx_have -= e;
			return 0;
		}
		if ((r != RNSC_TLSIO_WANT_READ && r != RNSC_TLSIO_WANT_WRITE) || cli_wait(c->fd, r))
			return -1;
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
	if (k->proto != P_TCP && k->proto != P_UDP) {
		if (cli_sec_setup(k, c) != 0)
			return -1;
		return rnsc_loop_watch_add(k->loop, fd, RNSC_EV_READ, cli_sec_io, c, &c->w);
	}
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
	if (!echo_proto_known(o->proto) || o->payload < ECHO_MIN_PAYLOAD ||
	    o->payload > ECHO_MAX_PAYLOAD || !o->clients || o->clients > 4096 || !o->window ||
	    o->window > 1024 || !o->threads || o->threads > 256) {
		fprintf(stderr, "rnsc bench echo: bad run options\n");
		return RNSC_ERR_INVAL;
	}
	int rc = RNSC_ERR_SYS;
	srv s = {.o = o, .lfd = -1};
	cli k = {.o = o, .udp = strcmp(o->proto, "udp") == 0, .res = res};
	k.rsv = malloc(sizeof(*k.rsv));
	k.scratch = malloc(ECHO_MAX_PAYLOAD);
	k.conns = calloc(o->clients, sizeof(*k.conns));
	if (!k.rsv || !k.scratch || !k.conns) {
		rc = RNSC_ERR_NOMEM;
		goto out;
	}
	echo_reservoir_init(k.rsv, 0x5eed);
	for (unsigned i = 0; i < o->clients; i++)
		k.conns[i].fd = -1; /* the clean-up below may run before they are connected */
	k.proto = proto_of(o->proto);
	if (proto_tls(k.proto)) {
		/* the TLS interface's client settings: ca_file, server_name */
		kv_cfg kv = {{"ca_file", "server_name"}, {getenv("RNSC_ECHO_CERT"), "localhost"}};
		rnsc_iface_config cfg;
		kv_init(&cfg, &kv);
		if (!kv.v[0] || rnsc_tlsio_client_ctx(&cfg, "127.0.0.1", &k.cctx, &k.peer) != 0 ||
		    !(k.bm = rnsc_tlsio_bio_method_new())) {
			fprintf(stderr,
				"rnsc bench echo: no TLS client settings (RNSC_ECHO_CERT)\n");
			goto out;
		}
	}
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
		c->rx_cap = c->tx_cap = (size_t)o->window * (o->payload + CLI_HEAD) + 256;
		/* stream protocols parse as they read: one message plus 64 KiB is enough */
		if (k.proto > P_UDP && c->rx_cap > o->payload + CLI_HEAD + 65536)
			c->rx_cap = o->payload + CLI_HEAD + 65536;
		c->mask_rng = 0x243f6a8885a308d3ull ^ ((uint64_t)i << 32 | i);
		c->rx = malloc(c->rx_cap);
		c->tx = malloc(c->tx_cap);
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
			if (c->has_io)
				rnsc_tlsio_free(&c->io);
			if (c->fd >= 0)
				close(c->fd);
			free(c->sent_ns), free(c->rx), free(c->tx);
		}
	rnsc_loop_del(k.loop);
	srv_stop(&s);
	if (k.cctx)
		SSL_CTX_free(k.cctx);
	rnsc_tlsio_bio_method_free(k.bm);
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
		fprintf(stderr,
			"usage: %s --one PROTO MODEL THREADS PAYLOAD CLIENTS WINDOW WARMUP "
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
	if (echo_proto_needs_tls(o.proto) && echo_tls_material() != 0)
		return 1;
	echo_result r;
	if (echo_run_rnsc(&o, &r) != 0)
		return 1;
	echo_result_print(stdout, "rnsc", &o, &r);
	return 0;
}
