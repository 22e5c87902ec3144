/* SPDX-License-Identifier: MIT */
/* rnx's request data and result, read with the MessagePack reader (x_wire.h). */
#include <math.h>
#include <string.h>

#include "msgpack.h"
#include "x_wire.h"

/* an int or nil; -1 for anything else */
static int read_opt_int(rnsc_mp_reader *rd, int *has, int64_t *v)
{
	rnsc_mp_token t;
	*has = 0;
	if (rnsc_mp_peek(rd, &t))
		return -1;
	if (t.type == RNSC_MP_NIL)
		return rnsc_mp_read_nil(rd) ? -1 : 0;
	*has = 1;
	return rnsc_mp_read_int(rd, v) ? -1 : 0;
}

/* a float, an integer or nil (NAN) as a double (Python compares either) */
static int read_opt_num(rnsc_mp_reader *rd, double *v)
{
	rnsc_mp_token t;
	*v = NAN;
	if (rnsc_mp_peek(rd, &t))
		return -1;
	if (t.type == RNSC_MP_NIL)
		return rnsc_mp_read_nil(rd) ? -1 : 0;
	if (t.type == RNSC_MP_UINT || t.type == RNSC_MP_INT) {
		int64_t i;
		if (rnsc_mp_read_int(rd, &i))
			return -1;
		*v = (double)i;
		return 0;
	}
	return rnsc_mp_read_double(rd, v) || isnan(*v) ? -1 : 0;
}

/* bytes, str or nil (NULL) */
static int read_opt_bytes(rnsc_mp_reader *rd, const uint8_t **p, size_t *len)
{
	rnsc_mp_token t;
	*p = NULL;
	*len = 0;
	if (rnsc_mp_peek(rd, &t))
		return -1;
	if (t.type == RNSC_MP_NIL)
		return rnsc_mp_read_nil(rd) ? -1 : 0;
	if (t.type == RNSC_MP_STR) {
		const char *s;
		if (rnsc_mp_read_str(rd, &s, len))
			return -1;
		*p = (const uint8_t *)s;
		return 0;
	}
	return rnsc_mp_read_bin(rd, p, len) ? -1 : 0;
}

int rnsc_x_parse_request(const uint8_t *p, size_t len, rnsc_x_request *out)
{
	memset(out, 0, sizeof(*out));
	out->timeout = NAN;
	rnsc_mp_reader rd;
	rnsc_mp_reader_init(&rd, p, len);
	size_t n;
	/* rnx indexes data[0..4] and decodes data[0] */
	if (rnsc_mp_read_array(&rd, &n) || n < 5 || read_opt_bytes(&rd, &out->cmd, &out->cmd_len) ||
	    !out->cmd || !rnsc_mp_utf8_valid(out->cmd, out->cmd_len) ||
	    memchr(out->cmd, 0, out->cmd_len))
		return -1;
	if (read_opt_num(&rd, &out->timeout) || read_opt_int(&rd, &out->has_o, &out->o_limit) ||
	    read_opt_int(&rd, &out->has_e, &out->e_limit))
		return -1;
	rnsc_mp_token t;
	if (rnsc_mp_peek(&rd, &t) || t.type == RNSC_MP_STR) /* bytes only: write() needs them */
		return -1;
	return read_opt_bytes(&rd, &out->in, &out->in_len);
}

int rnsc_x_parse_result(const uint8_t *p, size_t len, rnsc_x_result *out)
{
	memset(out, 0, sizeof(*out));
	out->started = out->concluded = NAN;
	rnsc_mp_reader rd;
	rnsc_mp_reader_init(&rd, p, len);
	size_t n;
	rnsc_mp_token t;
	if (rnsc_mp_read_array(&rd, &n) || n < 8 || rnsc_mp_peek(&rd, &t))
		return -1;
	if (t.type == RNSC_MP_BOOL) {
		if (rnsc_mp_read_bool(&rd, &out->executed))
			return -1;
	} else if (t.type == RNSC_MP_NIL) {
		if (rnsc_mp_read_nil(&rd))
			return -1;
	} else { /* Python truthiness of a number */
		double d;
		if (read_opt_num(&rd, &d))
			return -1;
		out->executed = d != 0;
	}
	if (read_opt_int(&rd, &out->has_ret, &out->retval) ||
	    read_opt_bytes(&rd, &out->so, &out->so_len) ||
	    read_opt_bytes(&rd, &out->se, &out->se_len) ||
	    read_opt_int(&rd, &out->has_olen, &out->outlen) ||
	    read_opt_int(&rd, &out->has_elen, &out->errlen) || read_opt_num(&rd, &out->started) ||
	    read_opt_num(&rd, &out->concluded))
		return -1;
	return 0;
}
