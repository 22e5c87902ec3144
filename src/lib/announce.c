/* SPDX-License-Identifier: MIT */
#include "announce.h"

#include <string.h>

#include "crypto.h"

#define DST_LEN RNSC_TRUNCATED_HASHLEN

static size_t put(uint8_t *dst, size_t o, const uint8_t *src, size_t n)
{
	memcpy(dst + o, src, n);
	return o + n;
}

int rnsc_announce_random_hash(rnsc_ctx *ctx, uint8_t out[RNSC_ANNOUNCE_RANDOM_LEN], uint64_t now)
{
	if (!out)
		return RNSC_ERR_INVAL;
	if (now >> 40)
		return RNSC_ERR_RANGE;
	uint8_t h[RNSC_TRUNCATED_HASHLEN];
	int rc = rnsc_random_hash(ctx, h);
	if (rc)
		return rc;
	memcpy(out, h, RNSC_ANNOUNCE_RANDOM_LEN - RNSC_ANNOUNCE_TIME_LEN);
	for (int i = 0; i < RNSC_ANNOUNCE_TIME_LEN; i++)
		out[RNSC_ANNOUNCE_RANDOM_LEN - 1 - i] = (uint8_t)(now >> (8 * i));
	return 0;
}

uint64_t rnsc_announce_timestamp(const uint8_t random_hash[RNSC_ANNOUNCE_RANDOM_LEN])
{
	uint64_t t = 0;
	for (int i = RNSC_ANNOUNCE_RANDOM_LEN - RNSC_ANNOUNCE_TIME_LEN;
	     i < RNSC_ANNOUNCE_RANDOM_LEN; i++)
		t = (t << 8) | random_hash[i];
	return t;
}

size_t rnsc_announce_data_len(int has_ratchet, size_t app_data_len)
{
	return RNSC_ANNOUNCE_MIN_LEN + (has_ratchet ? RNSC_RATCHETSIZE : 0) + app_data_len;
}

/* destination_hash public_key name_hash random_hash [ratchet] [app_data], in a buffer from the
 * context's allocator (the signature sits between the ratchet and the app data on the wire, so
 * the signed bytes are never contiguous). */
static uint8_t *signed_data(rnsc_ctx *ctx, size_t *n, const uint8_t *dest_hash, const uint8_t *pub,
			    const uint8_t *name_hash, const uint8_t *random_hash,
			    const uint8_t *ratchet, const uint8_t *app_data, size_t app_data_len)
{
	size_t len = DST_LEN + RNSC_KEYSIZE + RNSC_NAME_HASHLEN + RNSC_ANNOUNCE_RANDOM_LEN +
		     (ratchet ? RNSC_RATCHETSIZE : 0) + app_data_len;
	uint8_t *b = rnsc_alloc(ctx, len);
	if (!b)
		return NULL;
	size_t o = 0;
	o = put(b, o, dest_hash, DST_LEN);
	o = put(b, o, pub, RNSC_KEYSIZE);
	o = put(b, o, name_hash, RNSC_NAME_HASHLEN);
	o = put(b, o, random_hash, RNSC_ANNOUNCE_RANDOM_LEN);
	if (ratchet)
		o = put(b, o, ratchet, RNSC_RATCHETSIZE);
	if (app_data_len)
		memcpy(b + o, app_data, app_data_len);
	*n = len;
	return b;
}

int rnsc_announce_build(uint8_t *out, size_t cap, const rnsc_identity *id,
			const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
			const uint8_t name_hash[RNSC_NAME_HASHLEN],
			const uint8_t random_hash[RNSC_ANNOUNCE_RANDOM_LEN],
			const uint8_t *ratchet_pub, const uint8_t *app_data, size_t app_data_len)
{
	if (!out || !id || !dest_hash || !name_hash || !random_hash || (app_data_len && !app_data))
		return RNSC_ERR_INVAL;
	if (!id->has_private)
		return RNSC_ERR_NOKEY;
	size_t total = rnsc_announce_data_len(ratchet_pub != NULL, app_data_len);
	if (total < app_data_len || total > (size_t)INT32_MAX)
		return RNSC_ERR_TOOBIG;
	if (total > cap)
		return RNSC_ERR_BUFSIZE;
	uint8_t pub[RNSC_KEYSIZE];
	rnsc_identity_public_bytes(id, pub);
	size_t n = 0;
	uint8_t *sd = signed_data(id->ctx, &n, dest_hash, pub, name_hash, random_hash, ratchet_pub,
				  app_data, app_data_len);
	if (!sd)
		return RNSC_ERR_NOMEM;
	uint8_t sig[RNSC_SIGLEN];
	int rc = rnsc_identity_sign(id, sig, sd, n);
	rnsc_free(id->ctx, sd);
	if (rc)
		return rc;
	size_t o = 0;
	o = put(out, o, pub, RNSC_KEYSIZE);
	o = put(out, o, name_hash, RNSC_NAME_HASHLEN);
	o = put(out, o, random_hash, RNSC_ANNOUNCE_RANDOM_LEN);
	if (ratchet_pub)
		o = put(out, o, ratchet_pub, RNSC_RATCHETSIZE);
	o = put(out, o, sig, RNSC_SIGLEN);
	if (app_data_len)
		memmove(out + o, app_data, app_data_len);
	return (int)total;
}

int rnsc_announce_parse(rnsc_announce *a, const rnsc_packet *p)
{
	if (!a || !p || (!p->data && p->data_len))
		return RNSC_ERR_INVAL;
	memset(a, 0, sizeof(*a));
	if (p->packet_type != RNSC_PKT_ANNOUNCE)
		return RNSC_ERR_MALFORMED;
	int ratchet = p->context_flag == RNSC_FLAG_SET;
	size_t min = rnsc_announce_data_len(ratchet, 0);
	if (p->data_len < min)
		return RNSC_ERR_TRUNCATED;
	const uint8_t *d = p->data;
	a->public_key = d;
	d += RNSC_KEYSIZE;
	a->name_hash = d;
	d += RNSC_NAME_HASHLEN;
	a->random_hash = d;
	d += RNSC_ANNOUNCE_RANDOM_LEN;
	if (ratchet) {
		a->ratchet = d;
		d += RNSC_RATCHETSIZE;
	}
	a->signature = d;
	d += RNSC_SIGLEN;
	a->app_data_len = p->data_len - min;
	a->app_data = a->app_data_len ? d : NULL;
	return 0;
}

int rnsc_announce_validate(rnsc_ctx *ctx, const rnsc_packet *p, rnsc_announce *out,
			   rnsc_identity *announced)
{
	rnsc_announce a;
	int rc = rnsc_announce_parse(&a, p);
	if (rc)
		return rc;
	rnsc_identity id;
	rc = rnsc_identity_from_public(ctx, &id, a.public_key, RNSC_KEYSIZE);
	if (rc)
		return rc;
	size_t n = 0;
	uint8_t *sd = signed_data(ctx, &n, p->dest_hash, a.public_key, a.name_hash, a.random_hash,
				  a.ratchet, a.app_data, a.app_data_len);
	if (!sd)
		return RNSC_ERR_NOMEM;
	rc = rnsc_identity_verify(&id, a.signature, RNSC_SIGLEN, sd, n);
	rnsc_free(ctx, sd);
	/* A public key the backend cannot even decode signs nothing. */
	if (rc == RNSC_ERR_BADKEY)
		rc = RNSC_ERR_SIGNATURE;
	if (rc)
		return rc;
	uint8_t material[RNSC_NAME_HASHLEN + RNSC_TRUNCATED_HASHLEN],
		expect[RNSC_TRUNCATED_HASHLEN];
	memcpy(material, a.name_hash, RNSC_NAME_HASHLEN);
	memcpy(material + RNSC_NAME_HASHLEN, id.hash, RNSC_TRUNCATED_HASHLEN);
	rc = rnsc_truncated_hash(ctx, expect, material, sizeof(material));
	if (rc)
		return rc;
	if (memcmp(expect, p->dest_hash, RNSC_TRUNCATED_HASHLEN) != 0)
		return RNSC_ERR_DEST_MISMATCH;
	if (out)
		*out = a;
	if (announced)
		*announced = id;
	return 0;
}
