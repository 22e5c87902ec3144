/* SPDX-License-Identifier: MIT */
/* The echo benchmark's HTTP/1.1 subset; see echo_http.h. */
#include "echo_http.h"

#include <stdio.h>
#include <string.h>

static int is_tchar(uint8_t c)
{
	if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
		return 1;
	return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static int ieq(const uint8_t *a, size_t n, const char *b)
{
	size_t m = strlen(b);
	if (n != m)
		return 0;
	for (size_t i = 0; i < n; i++) {
		uint8_t x = a[i], y = (uint8_t)b[i];
		if (x >= 'A' && x <= 'Z')
			x = (uint8_t)(x + 32);
		if (y >= 'A' && y <= 'Z')
			y = (uint8_t)(y + 32);
		if (x != y)
			return 0;
	}
	return 1;
}

/* Index just past the first CRLF of p[0..n) or 0. */
static size_t line_end(const uint8_t *p, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (p[i] == '\n')
			return p[i - 1] == '\r' ? i + 1 : 0;
	return 0;
}

static int start_line(const uint8_t *p, size_t n, int request, echo_http_head *h)
{
	static const char ver[] = "HTTP/1.1";
	if (request) {
		const uint8_t *sp = memchr(p, ' ', n);
		if (!sp || sp == p)
			return -400;
		size_t ml = (size_t)(sp - p);
		for (size_t i = 0; i < ml; i++)
			if (!is_tchar(p[i]))
				return -400;
		const uint8_t *t = sp + 1, *end = p + n;
		const uint8_t *sp2 = memchr(t, ' ', (size_t)(end - t));
		if (!sp2 || sp2 == t || *t != '/')
			return -400;
		for (const uint8_t *q = t; q < sp2; q++)
			if (*q <= 0x20 || *q >= 0x7f)
				return -400;
		size_t vl = (size_t)(end - sp2 - 1);
		if (vl != 8 || memcmp(sp2 + 1, "HTTP/1.", 7) != 0)
			return -400;
		if (sp2[8] != '1')
			return -505;
		if (ml != 4 || memcmp(p, "POST", 4) != 0)
			return -405;
		return 0;
	}
	if (n < 12 || memcmp(p, ver, 7) != 0)
		return -400;
	if (p[7] != '1')
		return -505;
	if (p[8] != ' ' || p[9] < '1' || p[9] > '5' || p[10] < '0' || p[10] > '9' || p[11] < '0' ||
	    p[11] > '9' || (n > 12 && p[12] != ' '))
		return -400;
	h->status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
	for (size_t i = 13; i < n; i++)
		if ((p[i] < 0x20 && p[i] != '\t') || p[i] == 0x7f)
			return -400;
	return 0;
}

int echo_http_parse(const uint8_t *p, size_t n, int request, size_t max_body, echo_http_head *h)
{
	memset(h, 0, sizeof(*h));
	size_t lim = n < ECHO_HTTP_MAX_HEAD ? n : ECHO_HTTP_MAX_HEAD;
	size_t at = line_end(p, lim);
	if (!at) {
		for (size_t i = 0; i < lim; i++)
			if (p[i] == '\n')
				return -400; /* a bare LF */
		return n >= ECHO_HTTP_MAX_HEAD ? -431 : 0;
	}
	int rc = start_line(p, at - 2, request, h);
	if (rc)
		return rc;
	int have_len = 0;
	for (;;) {
		size_t e = line_end(p + at, lim - at);
		if (!e) {
			for (size_t i = at; i < lim; i++)
				if (p[i] == '\n')
					return -400;
			return n >= ECHO_HTTP_MAX_HEAD ? -431 : 0;
		}
		const uint8_t *l = p + at;
		size_t ll = e - 2;
		at += e;
		if (ll == 0)
			break;
		const uint8_t *colon = memchr(l, ':', ll);
		if (!colon || colon == l)
			return -400;
		size_t nl = (size_t)(colon - l);
		for (size_t i = 0; i < nl; i++)
			if (!is_tchar(l[i]))
				return -400;
		const uint8_t *v = colon + 1, *ve = l + ll;
		for (const uint8_t *q = v; q < ve; q++)
			if ((*q < 0x20 && *q != '\t') || *q == 0x7f)
				return -400;
		while (v < ve && (*v == ' ' || *v == '\t'))
			v++;
		while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
			ve--;
		size_t vl = (size_t)(ve - v);
		if (ieq(l, nl, "content-length")) {
			if (vl == 0 || vl > 12)
				return -400;
			size_t len = 0;
			for (size_t i = 0; i < vl; i++) {
				if (v[i] < '0' || v[i] > '9')
					return -400;
				len = len * 10 + (size_t)(v[i] - '0');
			}
			if (have_len && len != h->body_len)
				return -400;
			have_len = 1;
			h->body_len = len;
		} else if (ieq(l, nl, "transfer-encoding")) {
			return -501;
		} else if (ieq(l, nl, "connection")) {
			for (size_t i = 0; i + 5 <= vl; i++)
				if (ieq(v + i, 5, "close"))
					h->close = 1;
		}
	}
	if (request && !have_len)
		return -411;
	if (h->body_len > max_body)
		return -413;
	h->head_len = at;
	return (int)at;
}

size_t echo_http_request_head(uint8_t *out, size_t cap, size_t body_len)
{
	int n = snprintf((char *)out, cap,
			 "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %zu\r\n\r\n",
			 body_len);
	return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

size_t echo_http_response_head(uint8_t *out, size_t cap, size_t body_len)
{
	int n = snprintf((char *)out, cap, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n",
			 body_len);
	return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}
