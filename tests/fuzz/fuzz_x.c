/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for rnx's request data and result as rnsc x reads them
 * (src/cli/x_wire.c): what any identified (or, with -n, any) link peer hands an rnsc x
 * listener, and what a hostile listener hands the rnsc x client.
 *
 * Both parsers over the input: they accept or refuse; whatever they hand out lies inside the
 * input; an accepted command is UTF-8 without NUL; an accepted request, written again with
 * the fields it read, reads back to the same fields.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_wire.h"
#include "msgpack.h"
#include "x_wire.h"

static int inside(const uint8_t *p, size_t len, const uint8_t *data, size_t size)
{
	return !p || (p >= data && p + len <= data + size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rnsc_x_request q;
	if (rnsc_x_parse_request(data, size, &q) == 0) {
		FUZZ_CHECK(q.cmd && inside(q.cmd, q.cmd_len, data, size));
		FUZZ_CHECK(inside(q.in, q.in_len, data, size));
		FUZZ_CHECK(rnsc_mp_utf8_valid(q.cmd, q.cmd_len) && !memchr(q.cmd, 0, q.cmd_len));
		size_t cap = q.cmd_len + q.in_len + 64;
		uint8_t *buf = malloc(cap);
		if (buf) {
			rnsc_mp_writer w;
			rnsc_mp_writer_init(&w, buf, cap);
			rnsc_mp_write_array(&w, 5);
			rnsc_mp_write_bin(&w, q.cmd, q.cmd_len);
			if (isnan(q.timeout))
				rnsc_mp_write_nil(&w);
			else
				rnsc_mp_write_double(&w, q.timeout);
			if (q.has_o)
				rnsc_mp_write_int(&w, q.o_limit);
			else
				rnsc_mp_write_nil(&w);
			if (q.has_e)
				rnsc_mp_write_int(&w, q.e_limit);
			else
				rnsc_mp_write_nil(&w);
			if (q.in)
				rnsc_mp_write_bin(&w, q.in, q.in_len);
			else
				rnsc_mp_write_nil(&w);
			int l = rnsc_mp_writer_finish(&w);
			FUZZ_CHECK(l > 0);
			rnsc_x_request r;
			FUZZ_CHECK(rnsc_x_parse_request(buf, (size_t)l, &r) == 0);
			FUZZ_CHECK(r.cmd_len == q.cmd_len && !memcmp(r.cmd, q.cmd, q.cmd_len));
			FUZZ_CHECK(r.in_len == q.in_len &&
				   (!q.in_len || !memcmp(r.in, q.in, q.in_len)));
			FUZZ_CHECK(!r.in == !q.in);
			FUZZ_CHECK(r.has_o == q.has_o && r.o_limit == q.o_limit);
			FUZZ_CHECK(r.has_e == q.has_e && r.e_limit == q.e_limit);
			FUZZ_CHECK(isnan(r.timeout) ? isnan(q.timeout) : r.timeout == q.timeout);
			free(buf);
		}
	}
	rnsc_x_result res;
	if (rnsc_x_parse_result(data, size, &res) == 0) {
		FUZZ_CHECK(inside(res.so, res.so_len, data, size));
		FUZZ_CHECK(inside(res.se, res.se_len, data, size));
		FUZZ_CHECK(res.executed == 0 || res.executed == 1);
	}
	return 0;
}
