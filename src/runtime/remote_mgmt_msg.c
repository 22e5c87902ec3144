/* SPDX-License-Identifier: MIT */
/* The messages of remote management (remote_mgmt.h) that need no node: reading the
 * "/status" and "/path" request data as the reference's handlers read them, and filtering
 * a table answer by destination hash. Kept apart for the fuzz target (fuzz_remote_mgmt). */
#include <stdlib.h>
#include <string.h>

#include "msgpack.h"
#include "remote_mgmt.h"

/* Python truthiness of `x == True`: True, or the integer 1 (1 == True). */
static int is_true(const rnsc_mp_token *t)
{
	return (t->type == RNSC_MP_BOOL && t->boolean) || (t->type == RNSC_MP_UINT && t->u == 1) ||
	       (t->type == RNSC_MP_FLOAT64 && t->f64 == 1.0);
}

int rnsc_remote_mgmt_parse_status(const uint8_t *data, size_t len, int *lstats, int *prof)
{
	rnsc_mp_reader r;
	rnsc_mp_reader_init(&r, data, len);
	size_t cnt;
	*lstats = *prof = 0;
	if (rnsc_mp_read_array(&r, &cnt) || cnt == 0)
		return 0;
	rnsc_mp_token a0, a1;
	if (rnsc_mp_peek(&r, &a0) || rnsc_mp_skip(&r))
		return 0;
	*lstats = is_true(&a0);
	if (cnt >= 2 && rnsc_mp_peek(&r, &a1) == 0)
		*prof = is_true(&a1);
	return 1;
}

int rnsc_remote_mgmt_parse_path(const uint8_t *data, size_t len, rnsc_remote_mgmt_path_req *q)
{
	memset(q, 0, sizeof(*q));
	q->dest_any = 1;
	rnsc_mp_reader r;
	rnsc_mp_reader_init(&r, data, len);
	size_t cnt;
	if (rnsc_mp_read_array(&r, &cnt) || cnt == 0)
		return 0;
	const char *cmd;
	size_t cl;
	if (rnsc_mp_read_str(&r, &cmd, &cl))
		return 0; /* command == "table" is False for anything else */
	q->table = cl == 5 && memcmp(cmd, "table", 5) == 0;
	int rates = cl == 5 && memcmp(cmd, "rates", 5) == 0;
	if (!q->table && !rates)
		return 0;
	rnsc_mp_token mh = {.type = RNSC_MP_NIL};
	if (cnt > 1) {
		rnsc_mp_token d;
		if (rnsc_mp_peek(&r, &d))
			return 0;
		if (d.type != RNSC_MP_NIL) {
			q->dest_any = 0;
			if (d.type == RNSC_MP_BIN) {
				q->dest = d.p;
				q->dest_len = d.len;
			}
		}
		if (rnsc_mp_skip(&r))
			return 0;
	}
	if (cnt > 2 && rnsc_mp_peek(&r, &mh))
		return 0;
	q->with_hops = q->table && (mh.type == RNSC_MP_UINT || mh.type == RNSC_MP_INT);
	if (q->with_hops)
		q->max_hops = mh.type == RNSC_MP_UINT
				      ? (int64_t)(mh.u > INT64_MAX ? INT64_MAX : mh.u)
				      : mh.i;
	return 1;
}

/* Copies the entries of a list of maps whose "hash" is dest (all with dest NULL). */
int rnsc_remote_mgmt_filter(const uint8_t *list, size_t len, const uint8_t *dest, uint8_t **out,
			    size_t *out_len)
{
	rnsc_mp_reader r;
	rnsc_mp_reader_init(&r, list, len);
	size_t cnt, keep = 0;
	if (rnsc_mp_read_array(&r, &cnt))
		return RNSC_ERR_MALFORMED;
	uint8_t *buf = malloc(len + 8);
	if (!buf)
		return RNSC_ERR_NOMEM;
	size_t body = 8; /* the header is written last, in front */
	for (size_t i = 0; i < cnt; i++) {
		size_t start = r.pos;
		int match = dest == NULL;
		rnsc_mp_reader e = r;
		size_t pairs;
		if (rnsc_mp_read_map(&e, &pairs) == 0)
			for (size_t k = 0; k < pairs && !match; k++) {
				const char *ks;
				size_t kl;
				const uint8_t *b;
				size_t bl;
				if (rnsc_mp_read_str(&e, &ks, &kl) != 0)
					break;
				if (kl == 4 && memcmp(ks, "hash", 4) == 0 &&
				    rnsc_mp_read_bin(&e, &b, &bl) == 0) {
					match = bl == RNSC_TRUNCATED_HASHLEN &&
						memcmp(b, dest, RNSC_TRUNCATED_HASHLEN) == 0;
					break;
				}
				if (rnsc_mp_skip(&e))
					break;
			}
		if (rnsc_mp_skip(&r)) {
			free(buf);
			return RNSC_ERR_MALFORMED;
		}
		if (match) {
			memcpy(buf + body, list + start, r.pos - start);
			body += r.pos - start;
			keep++;
		}
	}
	uint8_t hdr[8];
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, hdr, sizeof(hdr));
	rnsc_mp_write_array(&w, keep);
	int hl = rnsc_mp_writer_finish(&w);
	if (hl < 0) {
		free(buf);
		return hl;
	}
	memmove(buf + 8 - hl, hdr, (size_t)hl);
	memmove(buf, buf + 8 - hl, body - 8 + (size_t)hl);
	*out = buf;
	*out_len = body - 8 + (size_t)hl;
	return 1;
}
