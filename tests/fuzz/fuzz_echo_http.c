/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the echo benchmark's HTTP/1.1 parser (bench/echo/echo_http.c): the
 * bytes an echo server or client reads from its peer.
 *
 * Input: byte 0 picks request (even) or response (odd) parsing, the rest is the stream.
 * Checked beyond "no crash, no UB":
 *   - a positive result is the head length, within the input and ECHO_HTTP_MAX_HEAD,
 *     ending in CRLFCRLF, with body_len <= the limit;
 *   - a negative result is one of the documented statuses;
 *   - a result is stable: parsing any longer prefix of the same stream gives the same
 *     head (more bytes never change a decision already made);
 *   - a head built by echo_http_request_head/response_head parses back to its length.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "echo_http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	int request = !(data[0] & 1);
	size_t max_body = (size_t)data[0] * 97u;
	const uint8_t *p = data + 1;
	size_t n = size - 1;
	echo_http_head h, h2;
	int r = echo_http_parse(p, n, request, max_body, &h);
	if (r > 0) {
		if ((size_t)r > n || (size_t)r > ECHO_HTTP_MAX_HEAD || h.head_len != (size_t)r ||
		    h.body_len > max_body || memcmp(p + r - 4, "\r\n\r\n", 4) != 0)
			abort();
		if (!request && (h.status < 100 || h.status > 599))
			abort();
		/* a longer stream (the body following) parses to the same head */
		uint8_t *q = malloc(n + 16);
		if (!q)
			return 0;
		memcpy(q, p, n);
		memset(q + n, 'x', 16);
		if (echo_http_parse(q, n + 16, request, max_body, &h2) != r ||
		    h2.body_len != h.body_len || h2.close != h.close)
			abort();
		free(q);
	} else if (r < 0) {
		static const int ok[] = {-400, -405, -411, -413, -431, -501, -505};
		int found = 0;
		for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
			found |= r == ok[i];
		if (!found)
			abort();
	} else if (n >= ECHO_HTTP_MAX_HEAD) {
		abort(); /* "need more" past the head limit */
	}
	uint8_t head[128];
	size_t len = (size_t)data[0] * 300u;
	size_t hl = request ? echo_http_request_head(head, sizeof(head), len)
			    : echo_http_response_head(head, sizeof(head), len);
	if (echo_http_parse(head, hl, request, len, &h) != (int)hl || h.body_len != len ||
	    (!request && h.status != 200))
		abort();
	return 0;
}
