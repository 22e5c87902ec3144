/* SPDX-License-Identifier: MIT */
#include "known_file.h"

#include <math.h>
#include <string.h>

/* A number the reference may have written for a time: float or integer seconds. *is_int
 * (may be NULL) says which. */
static int read_number(rnsc_mp_reader *r, double *out, int *is_int)
{
	rnsc_mp_token t;
	int rc = rnsc_mp_next(r, &t);
	if (rc)
		return rc;
	if (is_int)
		*is_int = t.type == RNSC_MP_UINT || t.type == RNSC_MP_INT;
	switch (t.type) {
	case RNSC_MP_FLOAT64:
		*out = t.f64;
		return 0;
	case RNSC_MP_FLOAT32:
		*out = t.f32;
		return 0;
	case RNSC_MP_UINT:
		*out = (double)t.u;
		return 0;
	case RNSC_MP_INT:
		*out = (double)t.i;
		return 0;
	default:
		return RNSC_ERR_MALFORMED;
	}
}

/* bin, or nil (*p NULL). */
static int read_opt_bin(rnsc_mp_reader *r, const uint8_t **p, size_t *len)
{
	if (rnsc_mp_read_nil(r) == 0) {
		*p = NULL;
		*len = 0;
		return 0;
	}
	return rnsc_mp_read_bin(r, p, len);
}

/* One pass; each NULL validates only. */
static int walk(const uint8_t *p, size_t len, rnsc_known_each_fn each, void *ud, size_t *skipped)
{
	rnsc_mp_reader r;
	rnsc_mp_reader_init(&r, p, len);
	size_t n, used = 0, skip = 0;
	int rc = rnsc_mp_read_map(&r, &n);
	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *key, *ph, *pub, *app;
		size_t klen, phlen, publen, applen, fields;
		double ts, last_used = RNSC_KNOWN_NEVER_USED;
		int lu_int = 1; /* a record without it: the reference fills in the integer 0 */
		if ((rc = rnsc_mp_read_bin(&r, &key, &klen)) ||
		    (rc = rnsc_mp_read_array(&r, &fields)))
			return rc;
		if (fields < 4)
			return RNSC_ERR_MALFORMED;
		if ((rc = read_number(&r, &ts, NULL)) || (rc = rnsc_mp_read_bin(&r, &ph, &phlen)) ||
		    (rc = rnsc_mp_read_bin(&r, &pub, &publen)) ||
		    (rc = read_opt_bin(&r, &app, &applen)))
			return rc;
		if (fields > 4 && (rc = read_number(&r, &last_used, &lu_int)))
			return rc;
		for (size_t f = 5; f < fields; f++) /* anything newer */
			if ((rc = rnsc_mp_skip(&r)))
				return rc;
		if (klen != RNSC_TRUNCATED_HASHLEN || phlen != RNSC_HASHLEN ||
		    publen != RNSC_KEYSIZE) {
			skip++;
			continue;
		}
		used++;
		if (!each)
			continue;
		rnsc_transport_known k;
		memcpy(k.dest_hash, key, sizeof(k.dest_hash));
		/* NaN, negative or absurd times become 0: the entry is then simply old. */
		k.timestamp = isfinite(ts) && ts > 0 && ts < 1e12 ? (uint64_t)(ts * 1000.0) : 0;
		memcpy(k.packet_hash, ph, RNSC_HASHLEN);
		memcpy(k.public_key, pub, RNSC_KEYSIZE);
		k.app_data = app;
		k.app_data_len = applen;
		/* kept as read (also an odd negative: the reference's cleaning reads it so) */
		k.last_used = isfinite(last_used) ? last_used : RNSC_KNOWN_NEVER_USED;
		k.last_used_int = lu_int && isfinite(last_used) && fabs(last_used) < 9e18;
		if ((rc = each(ud, &k)))
			return rc;
	}
	if (skipped)
		*skipped = skip;
	return used > (size_t)INT32_MAX ? RNSC_ERR_TOOBIG : (int)used;
}

int rnsc_known_file_parse(const uint8_t *p, size_t len, rnsc_known_each_fn each, void *ud,
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

void rnsc_known_file_begin(rnsc_mp_writer *w, size_t n)
{
	rnsc_mp_write_map(w, n);
}

void rnsc_known_file_entry(rnsc_mp_writer *w, const rnsc_transport_known *k)
{
	rnsc_mp_write_bin(w, k->dest_hash, sizeof(k->dest_hash));
	rnsc_mp_write_array(w, 5);
	rnsc_mp_write_double(w, (double)k->timestamp / 1000.0);
	rnsc_mp_write_bin(w, k->packet_hash, sizeof(k->packet_hash));
	rnsc_mp_write_bin(w, k->public_key, sizeof(k->public_key));
	if (k->app_data)
		rnsc_mp_write_bin(w, k->app_data, k->app_data_len);
	else
		rnsc_mp_write_nil(w);
	/* last_used as the reference writes it: the integers 0 (never) and -1 (retained), the
	 * float time of the last use, or whatever number a file held, of the same kind */
	if (k->last_used_int && k->last_used >= 0)
		rnsc_mp_write_uint(w, (uint64_t)k->last_used);
	else if (k->last_used_int)
		rnsc_mp_write_int(w, (int64_t)k->last_used);
	else
		rnsc_mp_write_double(w, k->last_used);
}
