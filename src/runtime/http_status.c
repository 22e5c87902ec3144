/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "http_status.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <dlfcn.h>
#include <pthread.h>

#include "err.h"
#include "loop.h"
#include "node_status.h"

/* libmicrohttpd is opened when an endpoint is first started rather than linked: it brings
 * GnuTLS and its helpers, about 2.4 MiB resident in every process of the runtime, for an
 * endpoint that is off by default. */
#define MHD_SONAME "libmicrohttpd.so.12"
/* clang-format off */
#define MHD_FUNCS(X)                                                                               \
	X(start_daemon) X(stop_daemon) X(run) X(get_timeout) X(get_daemon_info)                      \
	X(is_feature_supported) X(create_response_from_buffer) X(destroy_response)                  \
	X(add_response_header) X(queue_response) X(get_connection_info)
/* clang-format on */
static struct {
#define MHD_FIELD(n) __typeof__(&MHD_##n) n;
	MHD_FUNCS(MHD_FIELD)
#undef MHD_FIELD
	int ok;
	char err[200];
} mhd;
static pthread_once_t mhd_once = PTHREAD_ONCE_INIT;

static void mhd_load(void)
{
	void *h = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(mhd.err, sizeof(mhd.err), "cannot open " MHD_SONAME ": %s", dlerror());
		return;
	}
#define MHD_SYM(n)                                                                                 \
	if (!(*(void **)&mhd.n = dlsym(h, "MHD_" #n))) {                                           \
		snprintf(mhd.err, sizeof(mhd.err), MHD_SONAME " lacks MHD_" #n);                   \
		return;                                                                            \
	}
	MHD_FUNCS(MHD_SYM)
#undef MHD_SYM
	mhd.ok = 1; /* kept open for the life of the process */
}

#define MHD_start_daemon mhd.start_daemon
#define MHD_stop_daemon mhd.stop_daemon
#define MHD_run mhd.run
#define MHD_get_timeout mhd.get_timeout
#define MHD_get_daemon_info mhd.get_daemon_info
#define MHD_is_feature_supported mhd.is_feature_supported
#define MHD_create_response_from_buffer mhd.create_response_from_buffer
#define MHD_destroy_response mhd.destroy_response
#define MHD_add_response_header mhd.add_response_header
#define MHD_queue_response mhd.queue_response
#define MHD_get_connection_info mhd.get_connection_info

/* Limits: a status endpoint needs little, and a hostile client gets no more than this. One
 * source address holds at most HTTP_PER_SOURCE of the HTTP_MAX_CONNECTIONS slots, so a
 * flood from one address leaves room for every other; a connection gets HTTP_DEADLINE_NS
 * to deliver its request headers, and as long again idle between keep-alive requests. */
#define HTTP_MAX_CONNECTIONS 64
#define HTTP_PER_SOURCE 8
#define HTTP_DEADLINE_NS (5 * RNSC_NS_PER_S)
#define HTTP_SWEEP_NS (200 * RNSC_NS_PER_MS)
#define HTTP_TIMEOUT_S 10                /* libmicrohttpd's own inactivity timeout, a backstop */
#define HTTP_MEMORY_PER_CONNECTION 16384 /* request line and headers must fit */
#define HTTP_MAX_FILE (64 * 1024)        /* certificate and key files */

/* One accepted connection, as libmicrohttpd reported it. waiting_since: when it started
 * waiting for request headers (accepted, or its last response sent); 0 while a request is
 * being answered. */
struct http_conn {
	int fd;
	int used;
	struct sockaddr_storage peer;
	uint64_t waiting_since;
};

struct rnsc_http_status {
	rnsc_node *node;
	rnsc_loop *loop;
	struct MHD_Daemon *mhd;
	rnsc_watch *w;
	rnsc_timer *timer;
	uint16_t port;
	uint64_t served, refused;
	uint64_t source_refused;  /* connections over the per-source budget */
	uint64_t deadline_closed; /* headers or next request not in time */
	uint64_t peer_closed;     /* gone while libmicrohttpd had not noticed */
	struct http_conn conns[HTTP_MAX_CONNECTIONS];
	char *cert, *key; /* PEM, kept for the daemon's lifetime */
};

static void rearm(rnsc_http_status *h);

/* libmicrohttpd's log lines go to the node's log, one line each. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls, (void)fmt, (void)ap; /* its messages are about clients; counted instead */
}

static enum MHD_Result reply(rnsc_http_status *h, struct MHD_Connection *c, unsigned status,
			     const char *type, char *body, size_t len, int must_free)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		len, body, must_free ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	if (!r) {
		if (must_free)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	if (status >= 400) {
		MHD_add_response_header(r, "Connection", "close");
		h->refused++;
	} else {
		h->served++;
	}
	enum MHD_Result rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

static struct http_conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *i =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return i ? i->socket_context : NULL;
}

/* libmicrohttpd hands the path over as a C string cut at the first NUL, at a '?' and
 * after %-decoding, so "GET /status\0/../x" would look like "/status". Both the path and
 * the version point into the request line it parsed in place ("<path>\0<version>"): only
 * a target whose bytes are exactly the path we serve passes, so embedded NULs, escapes
 * and queries are all "not found". */
static int target_is_literal(const char *url, const char *version)
{
	size_t n = strlen(url);
	if (!version || (uintptr_t)version <= (uintptr_t)url ||
	    (uintptr_t)version - (uintptr_t)url > HTTP_MEMORY_PER_CONNECTION)
		return 0; /* not the layout we know: refuse rather than guess */
	return (uintptr_t)url + n + 1 == (uintptr_t)version;
}

static int same_source(const struct sockaddr_storage *a, const struct sockaddr *b)
{
	if (a->ss_family != b->sa_family)
		return 0;
	if (b->sa_family == AF_INET)
		return ((const struct sockaddr_in *)(const void *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)(const void *)b)->sin_addr.s_addr;
	if (b->sa_family == AF_INET6)
		return memcmp(&((const struct sockaddr_in6 *)(const void *)a)->sin6_addr,
			      &((const struct sockaddr_in6 *)(const void *)b)->sin6_addr,
			      sizeof(struct in6_addr)) == 0;
	return 0;
}

/* Admission, before libmicrohttpd spends anything on the connection: one source may hold
 * HTTP_PER_SOURCE connections, the rest are closed at once (and counted). */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
	rnsc_http_status *h = cls;
	unsigned same = 0;
	if (!addr || len < sizeof(sa_family_t))
		return MHD_YES;
	for (size_t i = 0; i < HTTP_MAX_CONNECTIONS; i++)
		if (h->conns[i].used && same_source(&h->conns[i].peer, addr))
			same++;
	if (same >= HTTP_PER_SOURCE) {
		h->source_refused++;
		return MHD_NO;
	}
	return MHD_YES;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **ctx,
			  enum MHD_ConnectionNotificationCode what)
{
	rnsc_http_status *h = cls;
	if (what == MHD_CONNECTION_NOTIFY_CLOSED) {
		struct http_conn *hc = *ctx;
		if (hc)
			memset(hc, 0, sizeof(*hc));
		*ctx = NULL;
		return;
	}
	struct http_conn *hc = NULL;
	for (size_t i = 0; i < HTTP_MAX_CONNECTIONS && !hc; i++)
		if (!h->conns[i].used)
			hc = &h->conns[i];
	*ctx = hc;
	if (!hc)
		return; /* cannot happen: libmicrohttpd admits no more than the table holds */
	const union MHD_ConnectionInfo *fd =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	const union MHD_ConnectionInfo *peer =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	hc->used = 1;
	hc->fd = fd ? fd->connect_fd : -1;
	if (peer && peer->client_addr) {
		size_t l = peer->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
								    : sizeof(struct sockaddr_in);
		memcpy(&hc->peer, peer->client_addr, l);
	}
	hc->waiting_since = rnsc_loop_now(h->loop);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **state,
			 enum MHD_RequestTerminationCode why)
{
	(void)cls, (void)state, (void)why;
	struct http_conn *hc = conn_of(c);
	if (hc)
		hc->waiting_since = rnsc_loop_now(((rnsc_http_status *)cls)->loop);
}

/* What libmicrohttpd's edge-triggered epoll misses: a client that sent its bytes and its
 * FIN before the connection was accepted gives one edge, the bytes are read, the end of
 * stream is never seen and the slot is held until the inactivity timeout (a backlog of
 * such connections then takes minutes to drain). A peer that is gone (a peek reads the
 * end of stream) and a connection past its deadline are shut down here, which wakes
 * libmicrohttpd to close them. Returns how many connections are open. */
static size_t sweep(rnsc_http_status *h)
{
	uint64_t now = rnsc_loop_now(h->loop);
	size_t open = 0;
	for (size_t i = 0; i < HTTP_MAX_CONNECTIONS; i++) {
		struct http_conn *hc = &h->conns[i];
		if (!hc->used || hc->fd < 0)
			continue;
		open++;
		if (hc->waiting_since == UINT64_MAX)
			continue; /* already shut down, libmicrohttpd closes it */
		if (!hc->waiting_since)
			continue; /* a request is being answered (the peer may have half-closed) */
		char b;
		ssize_t r = recv(hc->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
		if (r == 0 ||
		    (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
			h->peer_closed++;
		} else if (now - hc->waiting_since > HTTP_DEADLINE_NS) {
			h->deadline_closed++;
		} else {
			continue;
		}
		shutdown(hc->fd, SHUT_RDWR);
		hc->waiting_since = UINT64_MAX;
	}
	return open;
}

/* The endpoint's own counters after the node's: requests, and connections its defences
 * closed (see sweep() and on_accept()). */
static int append_own_metrics(rnsc_http_status *h, char **body, size_t *len)
{
	char own[1024];
	int n = snprintf(
		own, sizeof(own),
		"# HELP rnsc_http_requests_total Requests to this endpoint, by result.\n"
		"# TYPE rnsc_http_requests_total counter\n"
		"rnsc_http_requests_total{result=\"served\"} %llu\n"
		"rnsc_http_requests_total{result=\"refused\"} %llu\n"
		"# HELP rnsc_http_connections_closed_total Connections the endpoint closed itself, "
		"by reason.\n"
		"# TYPE rnsc_http_connections_closed_total counter\n"
		"rnsc_http_connections_closed_total{reason=\"over_source_budget\"} %llu\n"
		"rnsc_http_connections_closed_total{reason=\"deadline\"} %llu\n"
		"rnsc_http_connections_closed_total{reason=\"peer_gone\"} %llu\n",
		(unsigned long long)h->served, (unsigned long long)h->refused,
		(unsigned long long)h->source_refused, (unsigned long long)h->deadline_closed,
		(unsigned long long)h->peer_closed);
	char *grown =
		n > 0 && (size_t)n < sizeof(own) ? realloc(*body, *len + (size_t)n + 1) : NULL;
	if (!grown) {
		free(*body);
		*body = NULL;
		return RNSC_ERR_NOMEM;
	}
	memcpy(grown + *len, own, (size_t)n + 1);
	*body = grown;
	*len += (size_t)n;
	return 0;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **state)
{
	(void)upload;
	rnsc_http_status *h = cls;
	static char not_found[] = "not found: GET /status or /metrics\n";
	static char bad_method[] = "method not allowed: read-only endpoint\n";
	static char too_large[] = "request body not accepted\n";
	static char failed[] = "status unavailable\n";
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		if (*upload_size)
			*upload_size = 0; /* discard, then refuse */
		return reply(h, c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", bad_method,
			     sizeof(bad_method) - 1, 0);
	}
	if (!*state) { /* headers complete; wait for any body to be announced */
		*state = h;
		struct http_conn *hc = conn_of(c);
		if (hc)
			hc->waiting_since = 0;
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0;
		return reply(h, c, MHD_HTTP_CONTENT_TOO_LARGE, "text/plain", too_large,
			     sizeof(too_large) - 1, 0);
	}
	char *body = NULL;
	size_t len = 0;
	int rc;
	if (!target_is_literal(url, version)) {
		return reply(h, c, MHD_HTTP_NOT_FOUND, "text/plain", not_found,
			     sizeof(not_found) - 1, 0);
	} else if (strcmp(url, "/status") == 0) {
		rc = rnsc_node_status_json(h->node, &body, &len);
		if (rc == 0)
			return reply(h, c, MHD_HTTP_OK, "application/json", body, len, 1);
	} else if (strcmp(url, "/metrics") == 0) {
		rc = rnsc_node_status_metrics(h->node, &body, &len);
		if (rc == 0 && (rc = append_own_metrics(h, &body, &len)) == 0)
			return reply(h, c, MHD_HTTP_OK, "text/plain; version=0.0.4", body, len, 1);
	} else {
		return reply(h, c, MHD_HTTP_NOT_FOUND, "text/plain", not_found,
			     sizeof(not_found) - 1, 0);
	}
	return reply(h, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain", failed, sizeof(failed) - 1,
		     0);
}

static void on_ready(rnsc_loop *loop, rnsc_watch *w, int fd, unsigned ev, void *ud)
{
	(void)loop, (void)w, (void)fd, (void)ev;
	rnsc_http_status *h = ud;
	MHD_run(h->mhd);
	sweep(h);
	MHD_run(h->mhd);
	rearm(h);
}

static void on_timer(rnsc_loop *loop, rnsc_timer *t, void *ud)
{
	(void)loop, (void)t;
	rnsc_http_status *h = ud;
	MHD_run(h->mhd);
	sweep(h);
	MHD_run(h->mhd);
	rearm(h);
}

/* libmicrohttpd wants MHD_run() again within its timeout even without socket activity
 * (connection timeouts, pending work). */
static void rearm(rnsc_http_status *h)
{
	MHD_UNSIGNED_LONG_LONG ms = 0;
	uint64_t delay = 1000 * RNSC_NS_PER_MS;
	if (MHD_get_timeout(h->mhd, &ms) == MHD_YES)
		delay = ms < 1000 ? (uint64_t)ms * RNSC_NS_PER_MS : delay;
	for (size_t i = 0; i < HTTP_MAX_CONNECTIONS; i++)
		if (h->conns[i].used && delay > HTTP_SWEEP_NS) {
			delay = HTTP_SWEEP_NS; /* connections to sweep (see sweep()) */
			break;
		}
	rnsc_loop_timer_rearm(h->loop, h->timer, delay, 0);
}

static int read_file(const char *path, char **out, char *err, size_t cap, const char *what)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, cap, "cannot read the %s %s: %s", what, path, strerror(errno));
		return RNSC_ERR_NOENT;
	}
	char *buf = malloc(HTTP_MAX_FILE + 1);
	size_t n = buf ? fread(buf, 1, HTTP_MAX_FILE + 1, f) : 0;
	fclose(f);
	if (!buf)
		return RNSC_ERR_NOMEM;
	if (n == 0 || n > HTTP_MAX_FILE) {
		free(buf);
		snprintf(err, cap, "the %s %s is empty or larger than %d bytes", what, path,
			 HTTP_MAX_FILE);
		return RNSC_ERR_INVAL;
	}
	buf[n] = '\0';
	*out = buf;
	return 0;
}

int rnsc_http_status_start(rnsc_node *n, const rnsc_http_status_options *o, rnsc_http_status **out,
			   char *err, size_t cap)
{
	if (!n || !o || !out || !err || !cap)
		return RNSC_ERR_INVAL;
	err[0] = '\0';
	*out = NULL;
	if (!o->cert_file != !o->key_file) {
		snprintf(err, cap, "HTTPS needs both a certificate and a key");
		return RNSC_ERR_INVAL;
	}
	pthread_once(&mhd_once, mhd_load);
	if (!mhd.ok) {
		snprintf(err, cap, "%s (Debian package libmicrohttpd12)", mhd.err);
		return RNSC_ERR_DLOPEN;
	}
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof(ss));
	const char *bind_to = o->bind ? o->bind : "127.0.0.1";
	unsigned flags = MHD_USE_EPOLL;
	struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
	if (inet_pton(AF_INET, bind_to, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons(o->port);
	} else if (inet_pton(AF_INET6, bind_to, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(o->port);
		flags |= MHD_USE_IPv6;
	} else {
		snprintf(err, cap, "'%s' is not an IPv4 or IPv6 address", bind_to);
		return RNSC_ERR_INVAL;
	}
	rnsc_http_status *h = calloc(1, sizeof(*h));
	if (!h)
		return RNSC_ERR_NOMEM;
	h->node = n;
	h->loop = rnsc_node_loop(n);
	int rc;
	if (o->cert_file) {
		if ((rc = read_file(o->cert_file, &h->cert, err, cap, "certificate")) ||
		    (rc = read_file(o->key_file, &h->key, err, cap, "key")))
			goto fail;
		if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
			snprintf(err, cap, "this libmicrohttpd was built without TLS");
			rc = RNSC_ERR_IO;
			goto fail;
		}
		flags |= MHD_USE_TLS;
	}
	if (h->cert)
		h->mhd = MHD_start_daemon(
			flags, o->port, on_accept, h, on_request, h, MHD_OPTION_SOCK_ADDR, &ss,
			MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_MAX_CONNECTIONS,
			MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_TIMEOUT_S,
			MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_MEMORY_PER_CONNECTION,
			MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h, MHD_OPTION_STRICT_FOR_CLIENT, 1,
			MHD_OPTION_NOTIFY_CONNECTION, on_connection, h, MHD_OPTION_NOTIFY_COMPLETED,
			on_completed, h, MHD_OPTION_HTTPS_MEM_CERT, h->cert,
			MHD_OPTION_HTTPS_MEM_KEY, h->key, MHD_OPTION_END);
	else
		h->mhd = MHD_start_daemon(
			flags, o->port, on_accept, h, on_request, h, MHD_OPTION_SOCK_ADDR, &ss,
			MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_MAX_CONNECTIONS,
			MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_TIMEOUT_S,
			MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_MEMORY_PER_CONNECTION,
			MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h, MHD_OPTION_STRICT_FOR_CLIENT, 1,
			MHD_OPTION_NOTIFY_CONNECTION, on_connection, h, MHD_OPTION_NOTIFY_COMPLETED,
			on_completed, h, MHD_OPTION_END);
	if (!h->mhd) {
		snprintf(err, cap,
			 "cannot serve HTTP%s on %s port %u (in use, or the certificate "
			 "and key were refused)",
			 h->cert ? "S" : "", bind_to, (unsigned)o->port);
		rc = RNSC_ERR_IO;
		goto fail;
	}
	const union MHD_DaemonInfo *port = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_BIND_PORT);
	const union MHD_DaemonInfo *efd = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_EPOLL_FD);
	if (!port || !efd) {
		snprintf(err, cap, "libmicrohttpd did not report its port and epoll fd");
		rc = RNSC_ERR_IO;
		goto fail;
	}
	h->port = port->port;
	if ((rc = rnsc_loop_watch_add(h->loop, efd->epoll_fd, RNSC_EV_READ, on_ready, h, &h->w)) ||
	    (rc = rnsc_loop_timer_add(h->loop, RNSC_NS_PER_S, 0, on_timer, h, &h->timer))) {
		snprintf(err, cap, "cannot watch the HTTP server: %s", rnsc_strerror(rc));
		goto fail;
	}
	*out = h;
	return 0;
fail:
	rnsc_http_status_stop(h);
	return rc;
}

void rnsc_http_status_stop(rnsc_http_status *h)
{
	if (!h)
		return;
	if (h->w)
		rnsc_loop_watch_remove(h->loop, h->w);
	if (h->timer)
		rnsc_loop_timer_cancel(h->loop, h->timer);
	if (h->mhd)
		MHD_stop_daemon(h->mhd);
	free(h->cert);
	if (h->key) {
		explicit_bzero(h->key, strlen(h->key));
		free(h->key);
	}
	free(h);
}

uint16_t rnsc_http_status_port(const rnsc_http_status *h)
{
	return h ? h->port : 0;
}

uint64_t rnsc_http_status_served(const rnsc_http_status *h)
{
	return h ? h->served : 0;
}

uint64_t rnsc_http_status_refused(const rnsc_http_status *h)
{
	return h ? h->refused : 0;
}

void rnsc_http_status_closed(const rnsc_http_status *h, uint64_t *over_budget, uint64_t *deadline,
			     uint64_t *gone)
{
	*over_budget = h ? h->source_refused : 0;
	*deadline = h ? h->deadline_closed : 0;
	*gone = h ? h->peer_closed : 0;
}
