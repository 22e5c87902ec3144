/* SPDX-License-Identifier: MIT */
#include "tunnel_file.h"

#include <math.h>
#include <string.h>

static int read_ms(rnsc_mp_reader *r, uint64_t *ms)
{
	rnsc_mp_token t;
	int rc = rnsc_mp_next(r, &t);
	if (rc)
		return rc;
	double v;
	switch (t.type) {
	case RNSC_MP_FLOAT64:
		v = t.f64;
		break;
	case RNSC_MP_FLOAT32:
		v = t.f32;
		break;
	case RNSC_MP_UINT:
		v = (double)t.u;
		break;
	case RNSC_MP_INT:
		v = (double)t.i;
		break;
	default:
		return RNSC_ERR_MALFORMED;
	}
	*ms = isfinite(v) && v > 0 && v < 1e12 ? (uint64_t)(v * 1000.0) : 0; /* else: expired */
	return 0;
}

static int walk(const uint8_t *p, size_t len, rnsc_tunnel_each_fn each, void *ud, size_t *skipped)
{
	rnsc_mp_reader r;
	rnsc_mp_reader_init(&r, p, len);
	size_t n, used = 0, skip = 0;
	int rc = rnsc_mp_read_array(&r, &n);
	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++) {
		size_t fields, idlen, ihlen = RNSC_HASHLEN, np;
		const uint8_t *id, *ih;
		if ((rc = rnsc_mp_read_array(&r, &fields)))
			return rc;
		if (fields < 4)
			return RNSC_ERR_MALFORMED;
		if ((rc = rnsc_mp_read_bin(&r, &id, &idlen)))
			return rc;
		if (rnsc_mp_read_nil(&r) != 0 && (rc = rnsc_mp_read_bin(&r, &ih, &ihlen)))
			return rc;
		if ((rc = rnsc_mp_read_array(&r, &np)))
			return rc;
		/* expires follows the paths: find it first, so each() sees the whole tunnel */
		rnsc_mp_reader paths = r;
		for (size_t k = 0; k < np; k++)
			if ((rc = rnsc_mp_skip(&r)))
				return rc;
		rnsc_tunnel_record tn;
		if ((rc = read_ms(&r, &tn.expires)))
			return rc;
		for (size_t f = 4; f < fields; f++)
			if ((rc = rnsc_mp_skip(&r)))
				return rc;
		int ok = idlen == RNSC_HASHLEN && ihlen == RNSC_HASHLEN;
		if (ok) {
			memcpy(tn.id, id, RNSC_HASHLEN);
			used++;
			if (each && (rc = each(ud, &tn, NULL)))
				return rc;
		} else {
			skip++;
		}
		for (size_t k = 0; k < np; k++) {
			rnsc_path_record rec;
			int usable;
			if ((rc = rnsc_path_record_read(&paths, &rec, 1, &usable)))
				return rc;
			if (!usable || !ok) {
				skip++;
				continue;
			}
			if (each && (rc = each(ud, &tn, &rec)))
				return rc;
		}
	}
	if (skipped)
		*skipped = skip;
	return used > (size_t)INT32_MAX ? RNSC_ERR_TOOBIG : (int)used;
}

int rnsc_tunnel_file_parse(const uint8_t *p, size_t len, rnsc_tunnel_each_fn each, void *ud,
			   size_t *skipped)
{
	if (!p && len)
		return RNSC_ERR_INVAL;
	if (skipped)
		*skipped = 0;
	int rc = walk(p, len, NULL, NULL, skipped);
	if (rc < 0 || !each)
		return rc;
	return walk(p, len, each, ud, skipped);
}

void rnsc_tunnel_file_begin(rnsc_mp_writer *w, size_t n)
{
	rnsc_mp_write_array(w, n);
}

void rnsc_tunnel_file_tunnel(rnsc_mp_writer *w, const rnsc_tunnel_record *tn,
			     const uint8_t *iface_hash, size_t n_paths)
{
	rnsc_mp_write_array(w, 4);
	rnsc_mp_write_bin(w, tn->id, sizeof(tn->id));
	if (iface_hash)
		rnsc_mp_write_bin(w, iface_hash, RNSC_HASHLEN);
	else
		rnsc_mp_write_nil(w);
	rnsc_mp_write_array(w, n_paths);
}

void rnsc_tunnel_file_tunnel_end(rnsc_mp_writer *w, const rnsc_tunnel_record *tn)
{
	rnsc_mp_write_double(w, (double)tn->expires / 1000.0);
}
