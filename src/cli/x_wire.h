/* SPDX-License-Identifier: MIT */
/* rnx's request data and result (x_wire.c), read as rnx reads them; used by rnsc x
 * (cmd_x.c) and fuzzed (tests/fuzz/fuzz_x.c). Pointers in the structs point into the input.
 * Pure functions, any thread. */
#ifndef RNSC_CLI_X_WIRE_H
#define RNSC_CLI_X_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* [command (bin or str, UTF-8 without NUL), timeout (number or nil), stdout limit (int or
 * nil), stderr limit (int or nil), stdin (bin or nil), ...] */
typedef struct rnsc_x_request {
	const uint8_t *cmd;
	size_t cmd_len;
	double timeout; /* NAN: none */
	int has_o, has_e;
	int64_t o_limit, e_limit;
	const uint8_t *in; /* NULL: none */
	size_t in_len;
} rnsc_x_request;

/* [executed, return code, stdout, stderr, stdout length, stderr length, started, concluded,
 * ...]; nil where rnx sends None (has_* 0, NULL pointers, NAN times). */
typedef struct rnsc_x_result {
	int executed, has_ret, has_olen, has_elen;
	int64_t retval, outlen, errlen;
	const uint8_t *so, *se;
	size_t so_len, se_len;
	double started, concluded;
} rnsc_x_result;

/* 0, or -1 when the value is not such a list (rnx: the handler raises, no answer). */
int rnsc_x_parse_request(const uint8_t *p, size_t len, rnsc_x_request *out);
/* 0, or -1 (rnx: "Received invalid result"). */
int rnsc_x_parse_result(const uint8_t *p, size_t len, rnsc_x_result *out);

#endif
