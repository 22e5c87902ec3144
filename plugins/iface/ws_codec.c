/* SPDX-License-Identifier: MIT */
/* RFC 6455 frame and handshake codec; see ws_codec.h. */
#include "ws_codec.h"

#include <string.h>

#include <openssl/evp.h>

#define WS_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

int rnsc_ws_parse_header(const uint8_t *p, size_t n, int from_client, uint64_t max_payload,
			 rnsc_ws_frame *f)
{
	if (n < 2)
		return 0;
	unsigned b0 = p[0], b1 = p[1];
	f->fin = (b0 & 0x80) != 0;
	f->opcode = b0 & 0x0F;
	f->masked = (b1 & 0x80) != 0;
	if (b0 & 0x70) /* RSV1-3 without a negotiated extension */
		return -RNSC_WS_CLOSE_PROTOCOL;
	switch (f->opcode) {
	case RNSC_WS_OP_CONT:
	case RNSC_WS_OP_TEXT:
	case RNSC_WS_OP_BINARY:
	case RNSC_WS_OP_CLOSE:
	case RNSC_WS_OP_PING:
	case RNSC_WS_OP_PONG:
		break;
	default:
		return -RNSC_WS_CLOSE_PROTOCOL;
	}
	/* 5.1: clients mask every frame, servers none. */
	if (f->masked != (from_client != 0))
		return -RNSC_WS_CLOSE_PROTOCOL;
	uint64_t len = b1 & 0x7F;
	size_t h = 2;
	if (len == 126) {
		if (n < 4)
			return 0;
		len = (uint64_t)p[2] << 8 | p[3];
		h = 4;
		if (len < 126) /* 5.2: the minimal number of bytes MUST be used */
			return -RNSC_WS_CLOSE_PROTOCOL;
	} else if (len == 127) {
		if (n < 10)
			return 0;
		len = 0;
		for (int i = 0; i < 8; i++)
			len = len << 8 | p[2 + i];
		h = 10;
		if (len >> 63 || len <= 0xFFFF)
			return -RNSC_WS_CLOSE_PROTOCOL;
	}
	if (f->opcode & 0x8) { /* 5.5: control frames are short and never fragmented */
		if (!f->fin || len > RNSC_WS_MAX_CONTROL)
			return -RNSC_WS_CLOSE_PROTOCOL;
	} else if (len > max_payload) {
		return -RNSC_WS_CLOSE_TOO_BIG;
	}
	if (f->masked) {
		if (n < h + 4)
			return 0;
		memcpy(f->mask, p + h, 4);
		h += 4;
	}
	f->len = len;
	return (int)h;
}

size_t rnsc_ws_build_header(uint8_t out[RNSC_WS_MAX_HEADER], int fin, unsigned opcode, uint64_t len,
			    const uint8_t *mask)
{
	size_t h = 2;
	out[0] = (uint8_t)((fin ? 0x80 : 0) | (opcode & 0x0F));
	uint8_t m = mask ? 0x80 : 0;
	if (len < 126) {
		out[1] = (uint8_t)(m | len);
	} else if (len <= 0xFFFF) {
		out[1] = m | 126;
		out[2] = (uint8_t)(len >> 8);
		out[3] = (uint8_t)len;
		h = 4;
	} else {
		out[1] = m | 127;
		for (int i = 0; i < 8; i++)
			out[2 + i] = (uint8_t)(len >> (56 - 8 * i));
		h = 10;
	}
	if (mask) {
		memcpy(out + h, mask, 4);
		h += 4;
	}
	return h;
}

void rnsc_ws_mask(uint8_t *p, size_t n, const uint8_t mask[4], uint64_t offset)
{
	/* eight bytes at a time: the mask repeats every four, so one 64-bit word of it applies
	 * at every multiple of eight from p */
	uint8_t m8[8];
	for (size_t k = 0; k < 8; k++)
		m8[k] = mask[(offset + k) & 3];
	uint64_t w;
	memcpy(&w, m8, 8);
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t x;
		memcpy(&x, p + i, 8);
		x ^= w;
		memcpy(p + i, &x, 8);
	}
	for (; i < n; i++)
		p[i] ^= mask[(offset + i) & 3];
}

size_t rnsc_ws_header_end(const uint8_t *p, size_t n)
{
	for (size_t i = 3; i < n; i++)
		if (p[i] == '\n' && p[i - 1] == '\r' && p[i - 2] == '\n' && p[i - 3] == '\r')
			return i + 1;
	return 0;
}

int rnsc_ws_accept(const char *key, size_t key_len, char out[RNSC_WS_ACCEPT_LEN + 1])
{
	uint8_t md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	int ok = c && EVP_DigestInit_ex(c, EVP_sha1(), NULL) == 1 &&
		 EVP_DigestUpdate(c, key, key_len) == 1 &&
		 EVP_DigestUpdate(c, WS_GUID, sizeof(WS_GUID) - 1) == 1 &&
		 EVP_DigestFinal_ex(c, md, &mdlen) == 1 && mdlen == 20;
	EVP_MD_CTX_free(c);
	if (!ok)
		return -1;
	return EVP_EncodeBlock((unsigned char *)out, md, 20) == RNSC_WS_ACCEPT_LEN ? 0 : -1;
}

/* ---- HTTP/1.1 header block ------------------------------------------------------------- */

typedef struct span {
	const char *p;
	size_t n;
} span;

static int lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

static int ieq(span s, const char *lit)
{
	size_t n = strlen(lit);
	if (s.n != n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (lower((unsigned char)s.p[i]) != lower((unsigned char)lit[i]))
			return 0;
	return 1;
}

static span trim(span s)
{
	while (s.n && (s.p[0] == ' ' || s.p[0] == '\t')) {
		s.p++;
		s.n--;
	}
	while (s.n && (s.p[s.n - 1] == ' ' || s.p[s.n - 1] == '\t'))
		s.n--;
	return s;
}

/* True when the comma-separated list s holds token (case-insensitive). */
static int has_token(span s, const char *token)
{
	while (s.n) {
		size_t i = 0;
		while (i < s.n && s.p[i] != ',')
			i++;
		if (ieq(trim((span){s.p, i}), token))
			return 1;
		if (i == s.n)
			break;
		s.p += i + 1;
		s.n -= i + 1;
	}
	return 0;
}

typedef struct hdrs {
	span line0;
	int host, upgrade, connection, version13, version_seen, accept_ok;
	span key, accept;
} hdrs;

/* Splits the block into the start line and the headers this codec cares about. Header
 * bytes must be printable ASCII or tabs; obsolete line folding is refused. */
static int parse_block(const uint8_t *p, size_t n, hdrs *h)
{
	memset(h, 0, sizeof(*h));
	const char *s = (const char *)p;
	size_t end = rnsc_ws_header_end(p, n);
	if (!end)
		return -1;
	size_t i = 0;
	int first = 1;
	while (i < end - 2) {
		size_t j = i;
		while (j + 1 < end && !(s[j] == '\r' && s[j + 1] == '\n'))
			j++;
		span line = {s + i, j - i};
		for (size_t k = 0; k < line.n; k++) {
			unsigned char c = (unsigned char)line.p[k];
			if ((c < 0x20 && c != '\t') || c == 0x7F)
				return -1;
		}
		if (first) {
			h->line0 = line;
			first = 0;
		} else {
			if (!line.n || line.p[0] == ' ' || line.p[0] == '\t')
				return -1;
			const char *colon = memchr(line.p, ':', line.n);
			if (!colon || colon == line.p)
				return -1;
			span name = {line.p, (size_t)(colon - line.p)};
			span val = trim((span){colon + 1, line.n - name.n - 1});
			for (size_t k = 0; k < name.n; k++)
				if (name.p[k] == ' ' || name.p[k] == '\t')
					return -1;
			if (ieq(name, "Host"))
				h->host = val.n > 0;
			else if (ieq(name, "Upgrade"))
				h->upgrade |= has_token(val, "websocket");
			else if (ieq(name, "Connection"))
				h->connection |= has_token(val, "upgrade");
			else if (ieq(name, "Sec-WebSocket-Version")) {
				h->version_seen = 1;
				h->version13 = val.n == 2 && val.p[0] == '1' && val.p[1] == '3';
			} else if (ieq(name, "Sec-WebSocket-Key")) {
				if (h->key.p) /* repeated: ambiguous */
					return -1;
				h->key = val;
			} else if (ieq(name, "Sec-WebSocket-Accept"))
				h->accept = val;
		}
		i = j + 2;
	}
	return first ? -1 : 0;
}

static int b64char(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '+' || c == '/';
}

int rnsc_ws_parse_request(const uint8_t *p, size_t n, const char *path,
			  char key[RNSC_WS_KEY_LEN + 1], const char **why)
{
	hdrs h;
	if (parse_block(p, n, &h) != 0) {
		*why = "malformed HTTP request";
		return 400;
	}
	/* Request line: METHOD SP target SP HTTP/1.1 */
	span l = h.line0;
	const char *sp1 = memchr(l.p, ' ', l.n);
	if (!sp1) {
		*why = "malformed request line";
		return 400;
	}
	span method = {l.p, (size_t)(sp1 - l.p)};
	span rest = {sp1 + 1, l.n - method.n - 1};
	const char *sp2 = memchr(rest.p, ' ', rest.n);
	if (!sp2) {
		*why = "malformed request line";
		return 400;
	}
	span target = {rest.p, (size_t)(sp2 - rest.p)};
	span version = {sp2 + 1, rest.n - target.n - 1};
	if (!ieq(version, "HTTP/1.1")) {
		*why = "not HTTP/1.1";
		return 400;
	}
	if (!(method.n == 3 && memcmp(method.p, "GET", 3) == 0)) {
		*why = "method is not GET";
		return 405;
	}
	const char *q = memchr(target.p, '?', target.n);
	size_t tn = q ? (size_t)(q - target.p) : target.n;
	if (tn != strlen(path) || memcmp(target.p, path, tn) != 0) {
		*why = "no WebSocket endpoint at this path";
		return 404;
	}
	if (!h.host) {
		*why = "no Host header";
		return 400;
	}
	if (!h.upgrade || !h.connection) {
		*why = "not a WebSocket upgrade (Upgrade: websocket, Connection: Upgrade)";
		return 400;
	}
	if (!h.version13) {
		*why = "Sec-WebSocket-Version is not 13";
		return h.version_seen ? 426 : 400;
	}
	/* A base64 nonce of 16 bytes: 22 characters and "==". */
	int ok = h.key.n == RNSC_WS_KEY_LEN && h.key.p[22] == '=' && h.key.p[23] == '=';
	for (size_t i = 0; ok && i < 22; i++)
		ok = b64char((unsigned char)h.key.p[i]);
	if (!ok) {
		*why = "missing or malformed Sec-WebSocket-Key";
		return 400;
	}
	memcpy(key, h.key.p, RNSC_WS_KEY_LEN);
	key[RNSC_WS_KEY_LEN] = 0;
	*why = NULL;
	return 0;
}

int rnsc_ws_parse_response(const uint8_t *p, size_t n, const char *accept, const char **why)
{
	hdrs h;
	if (parse_block(p, n, &h) != 0) {
		*why = "malformed HTTP response";
		return -1;
	}
	span l = h.line0;
	/* "HTTP/1.1 101" followed by a reason phrase (or nothing). */
	if (l.n < 12 || memcmp(l.p, "HTTP/1.1 ", 9) != 0 || (l.n > 12 && l.p[12] != ' ')) {
		*why = "malformed status line";
		return -1;
	}
	if (memcmp(l.p + 9, "101", 3) != 0) {
		*why = "the server did not switch protocols (status is not 101)";
		return -1;
	}
	if (!h.upgrade || !h.connection) {
		*why = "the server's answer lacks Upgrade: websocket / Connection: Upgrade";
		return -1;
	}
	if (h.accept.n != RNSC_WS_ACCEPT_LEN ||
	    memcmp(h.accept.p, accept, RNSC_WS_ACCEPT_LEN) != 0) {
		*why = "wrong Sec-WebSocket-Accept";
		return -1;
	}
	*why = NULL;
	return 0;
}
