/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the WebSocket codec of the "websocket" interface plugin
 * (plugins/iface/ws_codec.c): frame headers and the opening handshake's HTTP parsing.
 *
 * Input: one selector byte, then the bytes for the parser it picks. Properties checked
 * beyond "no crash, no UB":
 *   - an accepted frame header is at most 14 bytes, every shorter prefix of it asks for
 *     more bytes, and building a header from the parsed fields gives back exactly those
 *     bytes (the parser accepts minimal encodings only);
 *   - masking twice is the identity;
 *   - an accepted request yields a 24-character key whose accept value is computable,
 *     and a response is only accepted when it carries that exact accept value.
 */
#define _GNU_SOURCE /* memmem */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ws_codec.h"

static void check_header(const uint8_t *p, size_t n, int from_client)
{
	rnsc_ws_frame f;
	int h = rnsc_ws_parse_header(p, n, from_client, 16400, &f);
	if (h <= 0) {
		if (h < 0 && h != -RNSC_WS_CLOSE_PROTOCOL && h != -RNSC_WS_CLOSE_TOO_BIG)
			abort();
		return;
	}
	if (h > RNSC_WS_MAX_HEADER || (size_t)h > n || f.masked != from_client)
		abort();
	for (size_t k = 0; k < (size_t)h; k++) {
		rnsc_ws_frame g;
		if (rnsc_ws_parse_header(p, k, from_client, 16400, &g) != 0)
			abort();
	}
	uint8_t out[RNSC_WS_MAX_HEADER];
	size_t b = rnsc_ws_build_header(out, f.fin, f.opcode, f.len, f.masked ? f.mask : NULL);
	if (b != (size_t)h || memcmp(out, p, b) != 0)
		abort();
	if (!(f.opcode & 8) && f.len > 16400)
		abort();
	/* mask round trip on the payload that follows */
	size_t pl = n - (size_t)h < f.len ? n - (size_t)h : (size_t)f.len;
	uint8_t *copy = malloc(pl ? pl : 1);
	if (!copy)
		abort();
	memcpy(copy, p + h, pl);
	rnsc_ws_mask(copy, pl, f.mask, 3);
	rnsc_ws_mask(copy, pl, f.mask, 3);
	if (memcmp(copy, p + h, pl) != 0)
		abort();
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned sel = data[0] % 4;
	const uint8_t *p = data + 1;
	size_t n = size - 1;
	const char *why = NULL;
	char key[RNSC_WS_KEY_LEN + 1], acc[RNSC_WS_ACCEPT_LEN + 1];
	switch (sel) {
	case 0:
	case 1:
		check_header(p, n, sel == 0);
		break;
	case 2: {
		size_t end = rnsc_ws_header_end(p, n);
		if (end > n || (end && (end < 4 || memcmp(p + end - 4, "\r\n\r\n", 4) != 0)))
			abort();
		int st = rnsc_ws_parse_request(p, n, "/rns", key, &why);
		if (st == 0) {
			if (strlen(key) != RNSC_WS_KEY_LEN || why)
				abort();
			if (rnsc_ws_accept(key, RNSC_WS_KEY_LEN, acc) != 0 ||
			    strlen(acc) != RNSC_WS_ACCEPT_LEN)
				abort();
		} else if ((st != 400 && st != 404 && st != 405 && st != 426) || !why) {
			abort();
		}
		break;
	}
	default: {
		/* The accept for RFC 6455's example nonce. */
		const char *ok = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";
		int r = rnsc_ws_parse_response(p, n, ok, &why);
		if (r == 0 && (why || !memmem(p, n, ok, strlen(ok))))
			abort();
		if (r != 0 && (r != -1 || !why))
			abort();
		break;
	}
	}
	return 0;
}
