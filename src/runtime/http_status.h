/* SPDX-License-Identifier: MIT */
/*
 * The daemon's read-only HTTP endpoint (off unless asked for): `GET /status` serves the
 * node's status as JSON (node_status.h) and `GET /metrics` the Prometheus text format.
 * Anything else is refused with a 4xx status and the connection closed; requests are
 * bounded in size, time and number of connections: 64 connections, at most 8 from one
 * source address (more are closed at accept), 5 s to send the request headers and 5 s
 * idle between keep-alive requests, and a peer that is gone is closed within 200 ms.
 * The request target must be literally /status or /metrics (no query, escape or NUL). HTTPS when a certificate and key are
 * given.
 *
 * HTTP itself is libmicrohttpd's (Debian's libmicrohttpd-dev, a well-kept and fuzzed
 * parser), run without threads of its own: its epoll fd is watched by the node's loop and
 * its timeouts armed as a loop timer, so every request is answered on the node's thread.
 *
 * Ownership: the node must outlive the endpoint; rnsc_http_status_stop() frees it.
 * Threading: the node's thread only.
 */
#ifndef RNSC_HTTP_STATUS_H
#define RNSC_HTTP_STATUS_H

#include <stddef.h>
#include <stdint.h>

#include "node.h"

typedef struct rnsc_http_status rnsc_http_status;

typedef struct rnsc_http_status_options {
	const char *bind;      /* IPv4 or IPv6 literal; NULL: 127.0.0.1 */
	uint16_t port;         /* 0: any free port (see rnsc_http_status_port) */
	const char *cert_file; /* PEM; with key_file: HTTPS */
	const char *key_file;
} rnsc_http_status_options;

/* Starts serving. On failure err (cap bytes) says why. Returns 0, RNSC_ERR_INVAL (bad
 * address, only one of cert/key), RNSC_ERR_NOENT (unreadable certificate or key),
 * RNSC_ERR_IO (cannot listen: port in use, TLS set-up refused), RNSC_ERR_NOMEM. */
RNSC_API int rnsc_http_status_start(rnsc_node *n, const rnsc_http_status_options *o,
				    rnsc_http_status **out, char *err, size_t cap);
/* Closes every connection and frees. NULL is a no-op. */
RNSC_API void rnsc_http_status_stop(rnsc_http_status *h);
/* The port it listens on. */
RNSC_API uint16_t rnsc_http_status_port(const rnsc_http_status *h);
/* Requests answered, and requests refused (4xx). */
RNSC_API uint64_t rnsc_http_status_served(const rnsc_http_status *h);
RNSC_API uint64_t rnsc_http_status_refused(const rnsc_http_status *h);
/* Connections closed by the endpoint's own defences: refused at accept because their source
 * already held its share, shut down for missing the header/idle deadline, and found gone
 * (end of stream) while libmicrohttpd still held them. */
RNSC_API void rnsc_http_status_closed(const rnsc_http_status *h, uint64_t *over_budget,
				      uint64_t *deadline, uint64_t *gone);

#endif
