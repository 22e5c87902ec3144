/* SPDX-License-Identifier: MIT */
#include "path_file.h"

#include <math.h>
#include <string.h>

static int read_seconds(rnsc_mp_reader *r, uint64_t *ms)
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
	/* NaN, negative and absurd times become 0: such an entry is simply expired. */
	*ms = isfinite(v) && v > 0 && v < 1e12 ? (uint64_t)(v * 1000.0) : 0;
	return 0;
}

int rnsc_path_record_read(rnsc_mp_reader *r, rnsc_path_record *rec, int nil_iface, int *usable)
{
	size_t fields, dlen, rlen, ilen = RNSC_HASHLEN, plen, nb;
	const uint8_t *d, *rf, *ih = NULL, *ph;
	uint64_t hops;
	int rc;
	*usable = 1;
	memset(rec, 0, sizeof(*rec));
	if ((rc = rnsc_mp_read_array(r, &fields)))
		return rc;
	if (fields < 8)
		return RNSC_ERR_MALFORMED;
	if ((rc = rnsc_mp_read_bin(r, &d, &dlen)) || (rc = read_seconds(r, &rec->path.timestamp)) ||
	    (rc = rnsc_mp_read_bin(r, &rf, &rlen)) || (rc = rnsc_mp_read_uint(r, &hops)) ||
	    (rc = read_seconds(r, &rec->path.expires)) || (rc = rnsc_mp_read_array(r, &nb)))
		return rc;
	for (size_t b = 0; b < nb; b++) {
		const uint8_t *bp;
		size_t bl;
		if ((rc = rnsc_mp_read_bin(r, &bp, &bl)))
			return rc;
		if (bl != 10) {
			*usable = 0;
			continue;
		}
		if (rec->n_blobs == RNSC_MAX_RANDOM_BLOBS) { /* keep the newest */
			memmove(rec->blobs[0], rec->blobs[1], (RNSC_MAX_RANDOM_BLOBS - 1) * 10);
			rec->n_blobs--;
		}
		memcpy(rec->blobs[rec->n_blobs++], bp, 10);
	}
	if (!(nil_iface && rnsc_mp_read_nil(r) == 0) && (rc = rnsc_mp_read_bin(r, &ih, &ilen)))
		return rc;
	if ((rc = rnsc_mp_read_bin(r, &ph, &plen)))
		return rc;
	for (size_t f = 8; f < fields; f++)
		if ((rc = rnsc_mp_skip(r)))
			return rc;
	if (dlen != RNSC_TRUNCATED_HASHLEN || rlen != RNSC_TRUNCATED_HASHLEN ||
	    ilen != RNSC_HASHLEN || plen != RNSC_HASHLEN || hops >= 128) {
		*usable = 0;
		return 0;
	}
	memcpy(rec->dest_hash, d, sizeof(rec->dest_hash));
	memcpy(rec->path.next_hop, rf, sizeof(rec->path.next_hop));
	rec->path.hops = (unsigned)hops;
	rec->path.n_random_blobs = rec->n_blobs;
	rec->has_iface_hash = ih != NULL;
	if (ih)
		memcpy(rec->iface_hash, ih, sizeof(rec->iface_hash));
	memcpy(rec->path.packet_hash, ph, sizeof(rec->path.packet_hash));
	return 0;
}

static int walk(const uint8_t *p, size_t len, rnsc_path_each_fn each, void *ud, size_t *skipped)
{
	rnsc_mp_reader r;
	rnsc_mp_reader_init(&r, p, len);
	size_t n, used = 0, skip = 0;
	int rc = rnsc_mp_read_array(&r, &n);
	if (rc)
		return rc;
	rnsc_path_record rec;
	for (size_t i = 0; i < n; i++) {
		int usable;
		if ((rc = rnsc_path_record_read(&r, &rec, 0, &usable)))
			return rc;
		if (!usable) {
			skip++;
			continue;
		}
		used++;
		if (each && (rc = each(ud, &rec)))
			return rc;
	}
	if (skipped)
		*skipped = skip;
	return used > (size_t)INT32_MAX ? RNSC_ERR_TOOBIG : (int)used;
}

int rnsc_path_file_parse(const uint8_t *p, size_t len, rnsc_path_each_fn each, void *ud,
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

void rnsc_path_file_begin(rnsc_mp_writer *w, size_t n)
{
	rnsc_mp_write_array(w, n);
}

void rnsc_path_file_entry(rnsc_mp_writer *w, const rnsc_path_record *r)
{
	rnsc_mp_write_array(w, 8);
	rnsc_mp_write_bin(w, r->dest_hash, sizeof(r->dest_hash));
	rnsc_mp_write_double(w, (double)r->path.timestamp / 1000.0);
	rnsc_mp_write_bin(w, r->path.next_hop, sizeof(r->path.next_hop));
	rnsc_mp_write_uint(w, r->path.hops);
	rnsc_mp_write_double(w, (double)r->path.expires / 1000.0);
	rnsc_mp_write_array(w, r->n_blobs);
	for (size_t i = 0; i < r->n_blobs; i++)
		rnsc_mp_write_bin(w, r->blobs[i], 10);
	if (r->has_iface_hash || !r->nil_iface_ok)
		rnsc_mp_write_bin(w, r->iface_hash, sizeof(r->iface_hash));
	else
		rnsc_mp_write_nil(w);
	rnsc_mp_write_bin(w, r->path.packet_hash, sizeof(r->path.packet_hash));
}

int rnsc_path_cache_parse(const uint8_t *p, size_t len, const uint8_t **raw, size_t *raw_len)
{
	if ((!p && len) || !raw || !raw_len)
		return RNSC_ERR_INVAL;
	rnsc_mp_reader r;
	rnsc_mp_reader_init(&r, p, len);
	size_t n;
	const uint8_t *rp;
	size_t rl;
	int rc = rnsc_mp_read_array(&r, &n);
	if (rc)
		return rc;
	if (n < 1)
		return RNSC_ERR_MALFORMED;
	if ((rc = rnsc_mp_read_bin(&r, &rp, &rl)))
		return rc;
	for (size_t i = 1; i < n; i++) /* the interface's name: informational */
		if ((rc = rnsc_mp_skip(&r)))
			return rc;
	*raw = rp;
	*raw_len = rl;
	return 0;
}

void rnsc_path_cache_write(rnsc_mp_writer *w, const uint8_t *raw, size_t raw_len,
			   const char *iface_ref)
{
	rnsc_mp_write_array(w, 2);
	rnsc_mp_write_bin(w, raw, raw_len);
	if (iface_ref)
		rnsc_mp_write_cstr(w, iface_ref);
	else
		rnsc_mp_write_nil(w);
}
