/* SPDX-License-Identifier: MIT */
/* ResourceAdvertisement pack/unpack (see resource_adv.h). */
#include "resource_adv.h"

#include <string.h>

#include "msgpack.h"

int rnsc_resource_adv_pack(const rnsc_resource_adv *a, unsigned segment, uint8_t *out, size_t cap)
{
	if (!a || !out || a->r_len > 32 || (a->has_q && (a->q_len == 0 || a->q_len > 32)) ||
	    (!a->m && a->m_len) || a->m_len / RNSC_RESOURCE_MAPHASH_LEN < a->n)
		return RNSC_ERR_INVAL;
	uint64_t start = (uint64_t)segment * RNSC_RESOURCE_HASHMAP_MAX_LEN;
	uint64_t end = start + RNSC_RESOURCE_HASHMAP_MAX_LEN;
	if (end > a->n)
		end = a->n;
	if (start > end)
		start = end;
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, out, cap);
	rnsc_mp_write_map(&w, 11);
	rnsc_mp_write_cstr(&w, "t");
	rnsc_mp_write_uint(&w, a->t);
	rnsc_mp_write_cstr(&w, "d");
	rnsc_mp_write_uint(&w, a->d);
	rnsc_mp_write_cstr(&w, "n");
	rnsc_mp_write_uint(&w, a->n);
	rnsc_mp_write_cstr(&w, "h");
	rnsc_mp_write_bin(&w, a->h, 32);
	rnsc_mp_write_cstr(&w, "r");
	rnsc_mp_write_bin(&w, a->r, a->r_len);
	rnsc_mp_write_cstr(&w, "o");
	rnsc_mp_write_bin(&w, a->o, 32);
	rnsc_mp_write_cstr(&w, "i");
	rnsc_mp_write_uint(&w, a->i);
	rnsc_mp_write_cstr(&w, "l");
	rnsc_mp_write_uint(&w, a->l);
	rnsc_mp_write_cstr(&w, "q");
	if (a->has_q)
		rnsc_mp_write_bin(&w, a->q, a->q_len);
	else
		rnsc_mp_write_nil(&w);
	rnsc_mp_write_cstr(&w, "f");
	rnsc_mp_write_uint(&w, a->f);
	rnsc_mp_write_cstr(&w, "m");
	rnsc_mp_write_bin(&w, a->m ? a->m + start * RNSC_RESOURCE_MAPHASH_LEN : NULL,
			  (size_t)(end - start) * RNSC_RESOURCE_MAPHASH_LEN);
	return rnsc_mp_writer_finish(&w);
}

static int read_fixed(rnsc_mp_reader *r, uint8_t *out, size_t minlen, size_t maxlen, size_t *got)
{
	const uint8_t *p;
	size_t n;
	int rc = rnsc_mp_read_bin(r, &p, &n);
	if (rc)
		return rc;
	if (n < minlen || n > maxlen)
		return RNSC_ERR_MALFORMED;
	memcpy(out, p, n);
	if (got)
		*got = n;
	return 0;
}

int rnsc_resource_adv_unpack(rnsc_resource_adv *a, const uint8_t *p, size_t len)
{
	if (!a || (!p && len))
		return RNSC_ERR_INVAL;
	memset(a, 0, sizeof(*a));
	rnsc_mp_reader r;
	rnsc_mp_reader_init(&r, p, len);
	size_t pairs;
	int rc = rnsc_mp_read_map(&r, &pairs);
	if (rc)
		return rc;
	unsigned seen = 0; /* one bit per key, in "tdnhroilqfm" order */
	static const char keys[] = "tdnhroilqfm";
	for (size_t k = 0; k < pairs; k++) {
		rnsc_mp_token key;
		if ((rc = rnsc_mp_peek(&r, &key)))
			return rc;
		const char *hit = NULL;
		if (key.type == RNSC_MP_STR && key.len == 1)
			hit = strchr(keys, (char)key.p[0]);
		if (!hit || !key.p[0]) {
			/* a key the reference does not look at: skip key and value */
			if ((rc = rnsc_mp_skip(&r)) || (rc = rnsc_mp_skip(&r)))
				return rc;
			continue;
		}
		(void)rnsc_mp_next(&r, &key);
		unsigned bit = 1u << (unsigned)(hit - keys);
		/* a dict keeps the last value of a repeated key */
		seen |= bit;
		switch (*hit) {
		case 't':
			rc = rnsc_mp_read_uint(&r, &a->t);
			break;
		case 'd':
			rc = rnsc_mp_read_uint(&r, &a->d);
			break;
		case 'n':
			rc = rnsc_mp_read_uint(&r, &a->n);
			break;
		case 'i':
			rc = rnsc_mp_read_uint(&r, &a->i);
			break;
		case 'l':
			rc = rnsc_mp_read_uint(&r, &a->l);
			break;
		case 'f':
			rc = rnsc_mp_read_uint(&r, &a->f);
			break;
		case 'h':
			rc = read_fixed(&r, a->h, 32, 32, NULL);
			break;
		case 'o':
			rc = read_fixed(&r, a->o, 32, 32, NULL);
			break;
		case 'r':
			rc = read_fixed(&r, a->r, 1, 32, &a->r_len);
			break;
		case 'q':
			if (rnsc_mp_read_nil(&r) == 0) {
				a->has_q = 0;
				rc = 0;
			} else {
				rc = read_fixed(&r, a->q, 1, 32, &a->q_len);
				a->has_q = rc == 0;
			}
			break;
		default: /* 'm' */
			rc = rnsc_mp_read_bin(&r, &a->m, &a->m_len);
			if (!rc && a->m_len % RNSC_RESOURCE_MAPHASH_LEN)
				rc = RNSC_ERR_MALFORMED;
			break;
		}
		if (rc)
			return rc;
	}
	if (seen != (1u << 11) - 1)
		return RNSC_ERR_MALFORMED;
	if (a->i < 1 || a->l < 1 || a->i > a->l)
		return RNSC_ERR_MALFORMED;
	if (a->t > 3ull * RNSC_RESOURCE_MAX_EFFICIENT_SIZE)
		return RNSC_ERR_TOOBIG;
	return 0;
}

int rnsc_resource_adv_is_request(const rnsc_resource_adv *a)
{
	return a && a->has_q && (a->f & RNSC_RESOURCE_F_IS_REQUEST);
}

int rnsc_resource_adv_is_response(const rnsc_resource_adv *a)
{
	return a && a->has_q && (a->f & RNSC_RESOURCE_F_IS_RESPONSE);
}
