/* SPDX-License-Identifier: MIT */
/*
 * HTTP/1.1 for the echo benchmark's http and https protocols: a keep-alive POST carries one
 * message as its body and the 200 response echoes it. Sans-I/O and allocation-free; the
 * echo server and client (echo_run.c) feed it the bytes they buffered, tests/fuzz/
 * fuzz_echo_http.c fuzzes the parser.
 *
 * Why an own HTTP/1.1 rather than libmicrohttpd (the status endpoint's library): the echo
 * must run on rnsc_loop in all three IO models (one loop, loop + workers, sharded loops)
 * and HTTPS must go through the interfaces' TLS path (tls_io.c, OpenSSL). libmicrohttpd
 * owns its connections and threads (external select still keeps its own per-connection
 * state machine and one daemon per listener, no sharding of one listener), does HTTPS only
 * with GnuTLS and allocates a response object per request. The subset needed here, a
 * request line, headers, Content-Length and pipelined keep-alive, is small enough to check
 * completely (every malformed input is refused, see echo_http_parse()).
 *
 * Threading: no state; every function is reentrant. Buffers are borrowed for the call.
 */
#ifndef RNSC_ECHO_HTTP_H
#define RNSC_ECHO_HTTP_H

#include <stddef.h>
#include <stdint.h>

#define ECHO_HTTP_MAX_HEAD 8192u /* request or status line plus headers */

typedef struct echo_http_head {
	size_t head_len; /* bytes up to and including the empty line */
	size_t body_len; /* Content-Length */
	int status;      /* responses: the status code */
	int close;       /* "Connection: close" was given */
} echo_http_head;

/*
 * Parses a request (request != 0: "POST <target> HTTP/1.1") or a response ("HTTP/1.1 <3
 * digits> <reason>") head at p[0..n). Header names are tokens, every line ends in CRLF, no
 * obsolete line folding; Content-Length is required for requests, digits only, repeated only
 * with the same value, at most max_body. Returns the head length with *h filled, 0 when the
 * empty line has not arrived yet, or minus an HTTP status: -400 malformed, -405 not POST,
 * -411 no Content-Length, -413 body over max_body, -431 head over ECHO_HTTP_MAX_HEAD,
 * -501 Transfer-Encoding (not supported), -505 not HTTP/1.1.
 */
int echo_http_parse(const uint8_t *p, size_t n, int request, size_t max_body, echo_http_head *h);

/* Writes the head of a POST /echo request or of a 200 response for body_len bytes into out
 * (cap >= 96). Returns its length. */
size_t echo_http_request_head(uint8_t *out, size_t cap, size_t body_len);
size_t echo_http_response_head(uint8_t *out, size_t cap, size_t body_len);

#endif
