/* SPDX-License-Identifier: MIT */
/*
 * A small RFC 6455 codec for the "websocket" interface plugin: frame headers (parse with
 * every MUST of section 5 checked, build), masking, and the opening handshake's HTTP
 * parsing and Sec-WebSocket-Accept. Sans-I/O and allocation-free: the plugin feeds it
 * bytes it buffered itself; tests/fuzz/fuzz_ws.c fuzzes every parser here.
 *
 * Threading: no state; every function is reentrant. Buffers are borrowed for the call.
 */
#ifndef RNSC_PLUGIN_WS_CODEC_H
#define RNSC_PLUGIN_WS_CODEC_H

#include <stddef.h>
#include <stdint.h>

enum {
	RNSC_WS_OP_CONT = 0x0,
	RNSC_WS_OP_TEXT = 0x1,
	RNSC_WS_OP_BINARY = 0x2,
	RNSC_WS_OP_CLOSE = 0x8,
	RNSC_WS_OP_PING = 0x9,
	RNSC_WS_OP_PONG = 0xA,
};

/* Close codes (RFC 6455 section 7.4.1) the plugin sends. */
enum {
	RNSC_WS_CLOSE_NORMAL = 1000,
	RNSC_WS_CLOSE_GOING_AWAY = 1001,
	RNSC_WS_CLOSE_PROTOCOL = 1002,
	RNSC_WS_CLOSE_UNSUPPORTED = 1003,
	RNSC_WS_CLOSE_TOO_BIG = 1009,
};

#define RNSC_WS_MAX_HEADER 14
#define RNSC_WS_MAX_CONTROL 125
#define RNSC_WS_KEY_LEN 24    /* base64 of 16 bytes */
#define RNSC_WS_ACCEPT_LEN 28 /* base64 of a SHA-1 */

typedef struct rnsc_ws_frame {
	int fin;
	unsigned opcode;
	int masked;
	uint8_t mask[4];
	uint64_t len; /* payload length */
} rnsc_ws_frame;

/*
 * Parses the frame header at p[0..n). from_client: the frame was sent by a client, so it
 * must be masked (and a server's must not be). Data frames longer than max_payload are
 * refused. Returns the header length (2..14) with *f filled, 0 when more bytes are
 * needed, or minus a close code: -RNSC_WS_CLOSE_PROTOCOL (reserved bits, unknown opcode,
 * wrong masking, fragmented or long control frame, non-minimal or 2^63+ length) or
 * -RNSC_WS_CLOSE_TOO_BIG.
 */
int rnsc_ws_parse_header(const uint8_t *p, size_t n, int from_client, uint64_t max_payload,
			 rnsc_ws_frame *f);

/* Writes a frame header (FIN set when fin) into out; mask NULL: unmasked. Returns its
 * length (2..14). */
size_t rnsc_ws_build_header(uint8_t out[RNSC_WS_MAX_HEADER], int fin, unsigned opcode, uint64_t len,
			    const uint8_t *mask);

/* XORs p with the mask, p[0] being payload byte `offset`. */
void rnsc_ws_mask(uint8_t *p, size_t n, const uint8_t mask[4], uint64_t offset);

/* Index just past the first CRLFCRLF in p[0..n), or 0 when there is none yet. */
size_t rnsc_ws_header_end(const uint8_t *p, size_t n);

/* Sec-WebSocket-Accept for a key: base64(SHA-1(key GUID)), NUL-terminated. 0 or -1. */
int rnsc_ws_accept(const char *key, size_t key_len, char out[RNSC_WS_ACCEPT_LEN + 1]);

/*
 * Checks a client's opening handshake (the bytes up to and including CRLFCRLF) for a
 * server at `path` (a query string is ignored). Returns 0 with key (NUL-terminated)
 * filled, or the HTTP status to answer: 400 (malformed, missing Host, Upgrade,
 * Connection or a valid Sec-WebSocket-Key), 404 (other path), 405 (not GET), 426
 * (Sec-WebSocket-Version is not 13). *why names the fault.
 */
int rnsc_ws_parse_request(const uint8_t *p, size_t n, const char *path,
			  char key[RNSC_WS_KEY_LEN + 1], const char **why);

/* Checks a server's answer (up to and including CRLFCRLF) against the expected accept
 * value. Returns 0 or -1 with *why naming the fault (status, header, accept value). */
int rnsc_ws_parse_response(const uint8_t *p, size_t n, const char *accept, const char **why);

#endif
