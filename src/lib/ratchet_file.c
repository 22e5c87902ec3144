/* SPDX-License-Identifier: MIT */
#include "ratchet_file.h"

#include <string.h>

#include "msgpack.h"

static int pack_list(const uint8_t (*ratchets)[32], size_t n, uint8_t *out, size_t cap)
{
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, out, cap);
	rnsc_mp_write_array(&w, n);
	for (size_t i = 0; i < n; i++)
		rnsc_mp_write_bin(&w, ratchets[i], 32);
	return rnsc_mp_writer_finish(&w);
}

int rnsc_ratchet_file_encode(const rnsc_identity *id, const uint8_t (*ratchets)[32], size_t n,
			     uint8_t *out, size_t cap)
{
	if (!id || (n && !ratchets))
		return RNSC_ERR_INVAL;
	if (n > RNSC_RATCHET_MAX)
		return RNSC_ERR_RANGE;
	if (!id->has_private)
		return RNSC_ERR_NOKEY;
	int plen = pack_list(ratchets, n, NULL, 0);
	if (plen < 0)
		return plen;
	uint8_t *packed = rnsc_alloc(id->ctx, (size_t)plen);
	if (!packed)
		return RNSC_ERR_NOMEM;
	int rc = pack_list(ratchets, n, packed, (size_t)plen);
	uint8_t sig[RNSC_SIGLEN];
	if (rc >= 0)
		rc = rnsc_identity_sign(id, sig, packed, (size_t)plen);
	if (rc >= 0) {
		/* dict(signature=..., ratchets=...) in the reference's insertion order */
		rnsc_mp_writer w;
		rnsc_mp_writer_init(&w, out, out ? cap : 0);
		rnsc_mp_write_map(&w, 2);
		rnsc_mp_write_cstr(&w, "signature");
		rnsc_mp_write_bin(&w, sig, sizeof(sig));
		rnsc_mp_write_cstr(&w, "ratchets");
		rnsc_mp_write_bin(&w, packed, (size_t)plen);
		rc = rnsc_mp_writer_finish(&w);
	}
	rnsc_free_secret(id->ctx, packed, (size_t)plen);
	return rc;
}

/* A str key of the reference's maps. */
static int key_is(const char *k, size_t kl, const char *want)
{
	return kl == strlen(want) && memcmp(k, want, kl) == 0;
}

int rnsc_ratchet_file_decode(const rnsc_identity *id, const uint8_t *buf, size_t len,
			     uint8_t (*out)[32], size_t cap, size_t *n)
{
	if (!id || !buf || !n)
		return RNSC_ERR_INVAL;
	*n = 0;
	rnsc_mp_reader r;
	rnsc_mp_reader_init(&r, buf, len);
	size_t pairs;
	int rc = rnsc_mp_read_map(&r, &pairs);
	if (rc)
		return rc;
	const uint8_t *sig = NULL, *packed = NULL;
	size_t sig_len = 0, packed_len = 0;
	/* The reference only looks the two keys up: other keys are ignored as it does. */
	for (size_t i = 0; i < pairs; i++) {
		const char *k;
		size_t kl;
		rnsc_mp_token tk;
		if ((rc = rnsc_mp_peek(&r, &tk)))
			return rc;
		if (tk.type != RNSC_MP_STR) {
			if ((rc = rnsc_mp_skip(&r)) || (rc = rnsc_mp_skip(&r)))
				return rc;
			continue;
		}
		if ((rc = rnsc_mp_read_str(&r, &k, &kl)))
			return rc;
		if (key_is(k, kl, "signature"))
			rc = rnsc_mp_read_bin(&r, &sig, &sig_len);
		else if (key_is(k, kl, "ratchets"))
			rc = rnsc_mp_read_bin(&r, &packed, &packed_len);
		else
			rc = rnsc_mp_skip(&r);
		if (rc)
			return rc;
	}
	if (rnsc_mp_reader_remaining(&r))
		return RNSC_ERR_MALFORMED;
	if (!sig || !packed)
		return RNSC_ERR_MALFORMED;
	if ((rc = rnsc_identity_verify(id, sig, sig_len, packed, packed_len)))
		return rc;
	rnsc_mp_reader_init(&r, packed, packed_len);
	size_t count;
	if ((rc = rnsc_mp_read_array(&r, &count)))
		return rc;
	if (count > RNSC_RATCHET_MAX)
		return RNSC_ERR_RANGE;
	if (out && count > cap)
		return RNSC_ERR_BUFSIZE;
	for (size_t i = 0; i < count; i++) {
		const uint8_t *p;
		size_t pl;
		if ((rc = rnsc_mp_read_bin(&r, &p, &pl)))
			return rc;
		if (pl != 32)
			return RNSC_ERR_MALFORMED;
		if (out)
			memcpy(out[i], p, 32);
	}
	if (rnsc_mp_reader_remaining(&r))
		return RNSC_ERR_MALFORMED;
	*n = count;
	return 0;
}

int rnsc_ratchet_remote_encode(const uint8_t ratchet[32], double received_s, uint8_t *out,
			       size_t cap)
{
	if (!ratchet)
		return RNSC_ERR_INVAL;
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, out, out ? cap : 0);
	rnsc_mp_write_map(&w, 2);
	rnsc_mp_write_cstr(&w, "ratchet");
	rnsc_mp_write_bin(&w, ratchet, 32);
	rnsc_mp_write_cstr(&w, "received");
	rnsc_mp_write_double(&w, received_s);
	return rnsc_mp_writer_finish(&w);
}

int rnsc_ratchet_remote_decode(const uint8_t *buf, size_t len, uint8_t ratchet[32],
			       double *received_s)
{
	if (!buf || !ratchet || !received_s)
		return RNSC_ERR_INVAL;
	rnsc_mp_reader r;
	rnsc_mp_reader_init(&r, buf, len);
	size_t pairs;
	int rc = rnsc_mp_read_map(&r, &pairs);
	if (rc)
		return rc;
	const uint8_t *rp = NULL;
	size_t rl = 0;
	int have_time = 0;
	double t = 0;
	for (size_t i = 0; i < pairs; i++) {
		const char *k;
		size_t kl;
		rnsc_mp_token tk;
		if ((rc = rnsc_mp_peek(&r, &tk)))
			return rc;
		if (tk.type != RNSC_MP_STR) {
			if ((rc = rnsc_mp_skip(&r)) || (rc = rnsc_mp_skip(&r)))
				return rc;
			continue;
		}
		if ((rc = rnsc_mp_read_str(&r, &k, &kl)))
			return rc;
		if (key_is(k, kl, "ratchet")) {
			rc = rnsc_mp_read_bin(&r, &rp, &rl);
		} else if (key_is(k, kl, "received")) {
			/* time.time() is a float; an int is as good to Python's comparison */
			if ((rc = rnsc_mp_peek(&r, &tk)))
				return rc;
			if (tk.type == RNSC_MP_FLOAT64 || tk.type == RNSC_MP_FLOAT32) {
				rc = rnsc_mp_next(&r, &tk);
				t = tk.type == RNSC_MP_FLOAT64 ? tk.f64 : tk.f32;
			} else if (tk.type == RNSC_MP_UINT) {
				rc = rnsc_mp_next(&r, &tk);
				t = (double)tk.u;
			} else if (tk.type == RNSC_MP_INT) {
				rc = rnsc_mp_next(&r, &tk);
				t = (double)tk.i;
			} else {
				return RNSC_ERR_MALFORMED;
			}
			have_time = 1;
		} else {
			rc = rnsc_mp_skip(&r);
		}
		if (rc)
			return rc;
	}
	if (rnsc_mp_reader_remaining(&r) || !rp || !have_time || t != t)
		return RNSC_ERR_MALFORMED;
	if (rl != 32)
		return RNSC_ERR_KEYLEN;
	memcpy(ratchet, rp, 32);
	*received_s = t;
	return 0;
}
