/* SPDX-License-Identifier: MIT */
/* Resources (Resource.py, rns 1.5.4): see resource.h. The comments name the reference's
 * steps where rnsc follows an odd-looking rule on purpose. */
#include "resource.h"

#include <bzlib.h>
#include <math.h>
#include <string.h>

#include "crypto.h"
#include "identity.h"
#include "link.h"
#include "msgpack.h"
#include "packet.h"
#include "token.h"

#define HL 32
#define MH RNSC_RESOURCE_MAPHASH_LEN
#define REQ_RING 64

struct rnsc_resource {
	rnsc_ctx *ctx;
	rnsc_resource_link link;
	rnsc_resource_callbacks cb;
	void *ud;
	int initiator, status, concluded, waiting_next;
	size_t sdu;

	/* the current segment */
	uint8_t hash[HL], original_hash[HL], expected_proof[HL];
	uint8_t random_hash[32];
	size_t rh_len;
	uint64_t size, total_size;
	size_t total_parts;
	unsigned segment_index, total_segments;
	int flags, compressed, split, has_metadata;
	uint8_t request_id[32];
	size_t request_id_len;
	int is_response;
	uint8_t *data;    /* sender: encrypted segment; receiver: the parts, at i * sdu */
	uint8_t *hashmap; /* total_parts map hashes */
	uint8_t *have;    /* sender: part sent once; receiver: part received */
	uint8_t *hm_have; /* receiver: map hash known */

	/* sender */
	uint64_t data_size;
	uint8_t *meta; /* 3-byte size + packed metadata */
	size_t meta_len;
	int auto_compress;
	uint64_t ac_limit;
	size_t sent_parts, rmch;
	uint8_t req_seen[REQ_RING][HL];
	unsigned req_seen_n, req_seen_pos;
	uint64_t adv_sent, last_part_sent, timeout_ms;
	uint64_t early_readv; /* 0, or when a response's first advertisement goes once more */
	double timeout_factor;
	uint8_t adv[RNSC_RESOURCE_ADV_MAX_LEN];
	size_t adv_len;
	/* The next segment, prepared while this one awaits its proof: a copy of this struct
	 * whose segment buffers are its own (everything else it borrows from here). */
	rnsc_resource *nx;
	int nx_tried; /* preparation ahead attempted for the current segment */
	/* A shadow being prepared in slices (while sp_pre is set): sp_pre holds the 4 random
	 * bytes and P (metadata first), sp_read bytes of it read and hashed, sp_enc encrypted,
	 * sp_mapped parts mapped; P starts at data offset sp_off after sp_mo metadata bytes. */
	uint8_t *sp_pre;
	size_t sp_len, sp_read, sp_enc, sp_mapped, sp_mo;
	uint64_t sp_off;
	unsigned sp_index;
	int sp_collision;
	rnsc_token_enc sp_tok;
	rnsc_hash sp_hash; /* SHA-256 over P so far: the hash and the proof continue it */

	/* both */
	double rtt; /* seconds, < 0: None */
	uint64_t last_activity;
	unsigned retries_left;

	/* receiver */
	size_t received_count, hashmap_height;
	long outstanding_parts, cch;
	unsigned window, window_max, window_min, window_flexibility;
	int waiting_for_hmu;
	uint64_t req_sent; /* 0: never */
	int req_resp_set;
	size_t req_sent_bytes;
	uint64_t rtt_rxd_bytes, rtt_rxd_bytes_at_part_req;
	double req_resp_rtt_rate, req_data_rtt_rate, eifr, previous_eifr;
	unsigned fast_rate_rounds, very_slow_rate_rounds, part_timeout_factor;
	int metadata_delivered;

	rnsc_resource_stats st;
};

static void conclude(rnsc_resource *r)
{
	if (r->concluded)
		return;
	r->concluded = 1;
	if (r->cb.concluded)
		r->cb.concluded(r->ud, r);
}

static int send_pkt(rnsc_resource *r, int type, int context, const uint8_t *d, size_t len)
{
	return r->link.send(r->link.ud, type, context, d, len);
}

static void free_segment(rnsc_resource *r)
{
	rnsc_free(r->ctx, r->data);
	rnsc_free(r->ctx, r->hashmap);
	rnsc_free(r->ctx, r->have);
	rnsc_free(r->ctx, r->hm_have);
	r->data = r->hashmap = r->have = r->hm_have = NULL;
}

static void slices_free(rnsc_resource *nx)
{
	if (!nx->sp_pre)
		return;
	rnsc_token_enc_abort(&nx->sp_tok);
	rnsc_hash_abort(&nx->sp_hash); /* a no-op once ended */
	rnsc_free_secret(nx->ctx, nx->sp_pre, nx->sp_len);
	nx->sp_pre = NULL;
}

static void drop_next(rnsc_resource *r)
{
	if (r->nx) {
		slices_free(r->nx);
		free_segment(r->nx);
		rnsc_free(r->ctx, r->nx);
		r->nx = NULL;
	}
}

void rnsc_resource_del(rnsc_resource *r)
{
	if (!r)
		return;
	drop_next(r);
	free_segment(r);
	rnsc_free(r->ctx, r->meta);
	rnsc_free(r->ctx, r);
}

static void fail(rnsc_resource *r, uint64_t now);

/* ---- sender ----------------------------------------------------------------------------- */

static int sha_concat(rnsc_ctx *ctx, uint8_t out[HL], const uint8_t *a, size_t alen,
		      const uint8_t *b, size_t blen)
{
	rnsc_hash h;
	int rc = rnsc_hash_init(ctx, &h, RNSC_HASH_SHA256);
	if (rc)
		return rc;
	if ((rc = rnsc_hash_update(&h, a, alen)) || (rc = rnsc_hash_update(&h, b, blen))) {
		rnsc_hash_abort(&h);
		return rc;
	}
	return rnsc_hash_final(&h, out);
}

/* hash = SHA-256(P + suffix), then proof = SHA-256(P + hash). The two share the prefix P, a
 * whole segment, so P is hashed once and the state copied, where the backend can copy. */
/* The same from a, a hash already over P (a sliced segment hashes P as it reads it); a is
 * always ended. */
static int hash_and_proof_from(rnsc_ctx *ctx, rnsc_hash *a, uint8_t hash[HL], uint8_t proof[HL],
			       const uint8_t *p, size_t plen, const uint8_t *suffix, size_t slen)
{
	rnsc_hash b;
	int rc = rnsc_hash_copy(&b, a);
	if (rc == RNSC_ERR_NOPRIM) { /* a backend from before the hash_copy slot */
		rnsc_hash_abort(a);
		if ((rc = sha_concat(ctx, hash, p, plen, suffix, slen)))
			return rc;
		return sha_concat(ctx, proof, p, plen, hash, HL);
	}
	if (rc) {
		rnsc_hash_abort(a);
		return rc;
	}
	if ((rc = rnsc_hash_update(a, suffix, slen)) || (rc = rnsc_hash_final(a, hash)) ||
	    (rc = rnsc_hash_update(&b, hash, HL))) {
		rnsc_hash_abort(a);
		rnsc_hash_abort(&b);
		return rc;
	}
	return rnsc_hash_final(&b, proof);
}

static int hash_and_proof(rnsc_ctx *ctx, uint8_t hash[HL], uint8_t proof[HL], const uint8_t *p,
			  size_t plen, const uint8_t *suffix, size_t slen)
{
	rnsc_hash a;
	int rc = rnsc_hash_init(ctx, &a, RNSC_HASH_SHA256);
	if (rc)
		return rc;
	if ((rc = rnsc_hash_update(&a, p, plen))) {
		rnsc_hash_abort(&a);
		return rc;
	}
	return hash_and_proof_from(ctx, &a, hash, proof, p, plen, suffix, slen);
}

static int map_hash(rnsc_resource *r, uint8_t out[MH], const uint8_t *part, size_t len)
{
	uint8_t full[HL];
	int rc = sha_concat(r->ctx, full, part, len, r->random_hash, r->rh_len);
	if (!rc)
		memcpy(out, full, MH);
	return rc;
}

static int pack_adv(rnsc_resource *r)
{
	rnsc_resource_adv a = {.t = r->size,
			       .d = r->total_size,
			       .n = r->total_parts,
			       .r_len = r->rh_len,
			       .i = r->segment_index,
			       .l = r->total_segments,
			       .has_q = r->request_id_len > 0,
			       .q_len = r->request_id_len,
			       .f = (uint64_t)r->flags,
			       .m = r->hashmap,
			       .m_len = r->total_parts * MH};
	memcpy(a.h, r->hash, HL);
	memcpy(a.r, r->random_hash, r->rh_len);
	memcpy(a.o, r->original_hash, HL);
	memcpy(a.q, r->request_id, r->request_id_len);
	int n = rnsc_resource_adv_pack(&a, 0, r->adv, sizeof(r->adv));
	if (n < 0)
		return n;
	r->adv_len = (size_t)n;
	return 0;
}

/* bz2.compress(data) (level 9). Returns the length, 0 when it does not help (or fails). */
static size_t bz2_compress(rnsc_resource *r, uint8_t **out, const uint8_t *in, size_t len)
{
	size_t cap = len + len / 100 + 600;
	if (cap > UINT32_MAX)
		return 0;
	uint8_t *buf = rnsc_alloc(r->ctx, cap);
	if (!buf)
		return 0;
	unsigned int dlen = (unsigned int)cap;
	if (BZ2_bzBuffToBuffCompress((char *)buf, &dlen, (char *)(uintptr_t)in, (unsigned int)len,
				     9, 0, 0) != BZ_OK) {
		rnsc_free(r->ctx, buf);
		return 0;
	}
	*out = buf;
	return dlen;
}

/* Where segment `index` lies in the data, and whether the metadata leads it. */
static int segment_span(const rnsc_resource *r, unsigned index, uint64_t *off, uint64_t *want)
{
	if (!r->split) {
		*off = 0;
		*want = r->data_size;
	} else {
		uint64_t first = RNSC_RESOURCE_MAX_EFFICIENT_SIZE - r->meta_len;
		*off = index == 1
			       ? 0
			       : first + (uint64_t)(index - 2) * RNSC_RESOURCE_MAX_EFFICIENT_SIZE;
		*want = index == 1 ? first : RNSC_RESOURCE_MAX_EFFICIENT_SIZE;
		if (*off > r->data_size)
			*off = r->data_size;
		if (*want > r->data_size - *off)
			*want = r->data_size - *off;
	}
	return index == 1 && r->meta_len > 0;
}

/* One map hash per part, each compared with the COLLISION_GUARD_SIZE before it as the
 * reference does; 1 on a collision. */
static int map_part(rnsc_resource *r, size_t i)
{
	size_t po = i * r->sdu, pl = r->size - po < r->sdu ? r->size - po : r->sdu;
	uint8_t *mh = r->hashmap + i * MH;
	int rc = map_hash(r, mh, r->data + po, pl);
	if (rc)
		return rc;
	size_t j =
		i > RNSC_RESOURCE_COLLISION_GUARD_SIZE ? i - RNSC_RESOURCE_COLLISION_GUARD_SIZE : 0;
	for (; j < i; j++)
		if (memcmp(r->hashmap + j * MH, mh, MH) == 0)
			return 1;
	return 0;
}

/* A random hash, the hash and proof of P with it, and the hashmap of the encrypted data;
 * a new random hash while two map hashes collide. */
static int map_segment(rnsc_resource *r, const uint8_t *plain, size_t plen)
{
	for (;;) {
		uint8_t rnd[RNSC_TRUNCATED_HASHLEN];
		int rc = rnsc_random_hash(r->ctx, rnd);
		if (rc)
			return rc;
		memcpy(r->random_hash, rnd, RNSC_RESOURCE_RANDOM_HASH_SIZE);
		r->rh_len = RNSC_RESOURCE_RANDOM_HASH_SIZE;
		if ((rc = hash_and_proof(r->ctx, r->hash, r->expected_proof, plain, plen,
					 r->random_hash, r->rh_len)))
			return rc;
		int collision = 0;
		for (size_t i = 0; i < r->total_parts && !collision; i++)
			if ((collision = map_part(r, i)) < 0)
				return collision;
		if (!collision)
			return 0;
	}
}

/* The fields a prepared segment ends with, and its advertisement. */
static int finish_segment(rnsc_resource *r, unsigned index)
{
	r->segment_index = index;
	r->sent_parts = 0;
	r->rmch = 0;
	r->req_seen_n = 0;
	r->flags = (r->has_metadata ? RNSC_RESOURCE_F_HAS_METADATA : 0) |
		   (r->request_id_len && r->is_response ? RNSC_RESOURCE_F_IS_RESPONSE : 0) |
		   (r->request_id_len && !r->is_response ? RNSC_RESOURCE_F_IS_REQUEST : 0) |
		   (r->split ? RNSC_RESOURCE_F_SPLIT : 0) |
		   (r->compressed ? RNSC_RESOURCE_F_COMPRESSED : 0) | RNSC_RESOURCE_F_ENCRYPTED;
	return pack_adv(r);
}

/* Resource.__init__ for segment `index`: reads, compresses, encrypts and maps it. */
static int prepare_segment(rnsc_resource *r, unsigned index)
{
	free_segment(r);
	uint64_t off, want;
	int with_meta = segment_span(r, index, &off, &want);
	size_t plen = (with_meta ? r->meta_len : 0) + (size_t)want;
	/* P is read in place after room for the 4 random bytes the encrypted data starts with,
	 * so an uncompressed segment is encrypted from where it was read */
	const size_t RH = RNSC_RESOURCE_RANDOM_HASH_SIZE;
	uint8_t *buf = rnsc_alloc(r->ctx, plen + RH);
	if (!buf)
		return RNSC_ERR_NOMEM;
	uint8_t *plain = buf + RH;
	size_t mo = 0;
	if (with_meta) {
		memcpy(plain, r->meta, r->meta_len);
		mo = r->meta_len;
	}
	int rc = 0;
	if (want) {
		rc = r->cb.read(r->ud, off, plain + mo, (size_t)want);
		if (rc >= 0 && (uint64_t)rc != want)
			rc = RNSC_ERR_IO;
		if (rc < 0)
			goto out;
	}
	rc = 0;
	uint8_t *cdata = NULL;
	size_t clen = 0;
	if (r->auto_compress && r->data_size <= r->ac_limit)
		clen = bz2_compress(r, &cdata, plain, plen);
	r->compressed = cdata && clen < plen;
	size_t blen = r->compressed ? clen : plen;
	/* data = 4 random bytes (a random hash's head) + body, encrypted whole */
	uint8_t *pre = buf;
	if (r->compressed) {
		pre = rnsc_alloc(r->ctx, blen + RH);
		if (pre)
			memcpy(pre + RH, cdata, blen);
	}
	rnsc_free(r->ctx, cdata);
	if (!pre) {
		rc = RNSC_ERR_NOMEM;
		goto out;
	}
	uint8_t rnd[RNSC_TRUNCATED_HASHLEN];
	if ((rc = rnsc_random_hash(r->ctx, rnd))) {
		if (pre != buf)
			rnsc_free(r->ctx, pre);
		goto out;
	}
	memcpy(pre, rnd, RH);
	size_t elen = rnsc_token_len(blen + RH);
	r->data = rnsc_alloc(r->ctx, elen);
	if (!r->data) {
		if (pre != buf)
			rnsc_free(r->ctx, pre);
		rc = RNSC_ERR_NOMEM;
		goto out;
	}
	rc = r->link.encrypt(r->link.ud, r->data, elen, pre, blen + RH);
	if (pre != buf)
		rnsc_free(r->ctx, pre);
	if (rc < 0)
		goto out;
	r->size = (uint64_t)rc;
	rc = 0;
	r->total_parts = (size_t)((r->size + r->sdu - 1) / r->sdu);
	r->hashmap = rnsc_alloc(r->ctx, r->total_parts * MH + 1);
	r->have = rnsc_calloc(r->ctx, r->total_parts + 1, 1);
	if (!r->hashmap || !r->have) {
		rc = RNSC_ERR_NOMEM;
		goto out;
	}
	if ((rc = map_segment(r, plain, plen)))
		goto out;
	if (index == 1)
		memcpy(r->original_hash, r->hash, HL);
	rc = finish_segment(r, index);
out:
	rnsc_free_secret(r->ctx, buf, plen + RH);
	return rc;
}

static int advertise(rnsc_resource *r, uint64_t now)
{
	int rc = send_pkt(r, RNSC_PKT_DATA, RNSC_CTX_RESOURCE_ADV, r->adv, r->adv_len);
	if (rc < 0)
		return rc;
	r->st.advertisements++;
	r->last_activity = r->adv_sent = now;
	r->rtt = -1;
	r->status = RNSC_RESOURCE_ADVERTISED;
	r->retries_left = RNSC_RESOURCE_MAX_ADV_RETRIES;
	r->early_readv = 0;
	if (r->is_response && r->request_id_len && r->segment_index <= 1) {
		uint64_t at = now + RNSC_RESOURCE_RESPONSE_READV_MS +
			      (uint64_t)(3.0 * r->link.rtt * 1000.0);
		if (at < now + r->timeout_ms + RNSC_RESOURCE_PROCESSING_GRACE_MS)
			r->early_readv = at;
	}
	return 0;
}

static rnsc_resource *new_resource(rnsc_ctx *ctx, const rnsc_resource_link *link,
				   const rnsc_resource_callbacks *cb, void *ud)
{
	rnsc_resource *r = rnsc_calloc(ctx, 1, sizeof(*r));
	if (!r)
		return NULL;
	r->ctx = ctx;
	r->link = *link;
	if (cb)
		r->cb = *cb;
	r->ud = ud;
	r->sdu =
		link->mtu > RNSC_RESOURCE_SDU_OVERHEAD ? link->mtu - RNSC_RESOURCE_SDU_OVERHEAD : 1;
	if (r->link.rtt <= 0)
		r->link.rtt = 0.001;
	if (!r->link.establishment_cost)
		r->link.establishment_cost = 300; /* about one link handshake */
	r->rtt = -1;
	r->timeout_factor = RNSC_LINK_TRAFFIC_TIMEOUT_FACTOR;
	r->retries_left = RNSC_RESOURCE_MAX_RETRIES;
	return r;
}

int rnsc_resource_send(rnsc_ctx *ctx, rnsc_resource **out, const rnsc_resource_link *link,
		       const rnsc_resource_callbacks *cb, void *cb_ud,
		       const rnsc_resource_params *p, uint64_t now)
{
	if (!ctx || !out || !link || !link->send || !link->encrypt || !cb || !p ||
	    (p->size && !cb->read) || (p->metadata_len && !p->metadata) ||
	    (p->request_id && (p->request_id_len == 0 || p->request_id_len > 32)))
		return RNSC_ERR_INVAL;
	*out = NULL;
	if (p->metadata_len > RNSC_RESOURCE_METADATA_MAX_SIZE)
		return RNSC_ERR_TOOBIG;
	rnsc_resource *r = new_resource(ctx, link, cb, cb_ud);
	if (!r)
		return RNSC_ERR_NOMEM;
	r->initiator = 1;
	r->data_size = p->size;
	if (p->metadata) {
		r->meta_len = 3 + p->metadata_len;
		r->meta = rnsc_alloc(ctx, r->meta_len);
		if (!r->meta) {
			rnsc_resource_del(r);
			return RNSC_ERR_NOMEM;
		}
		r->meta[0] = (uint8_t)(p->metadata_len >> 16);
		r->meta[1] = (uint8_t)(p->metadata_len >> 8);
		r->meta[2] = (uint8_t)p->metadata_len;
		memcpy(r->meta + 3, p->metadata, p->metadata_len);
		r->has_metadata = 1;
	}
	r->auto_compress = p->auto_compress != 0;
	r->ac_limit = p->auto_compress_limit ? p->auto_compress_limit
					     : RNSC_RESOURCE_AUTO_COMPRESS_MAX_SIZE;
	if (p->request_id) {
		memcpy(r->request_id, p->request_id, p->request_id_len);
		r->request_id_len = p->request_id_len;
		r->is_response = p->is_response != 0;
	}
	r->total_size = r->data_size + r->meta_len;
	if (r->total_size <= RNSC_RESOURCE_MAX_EFFICIENT_SIZE) {
		r->total_segments = 1;
		r->split = 0;
	} else {
		if (r->meta_len >= RNSC_RESOURCE_MAX_EFFICIENT_SIZE) {
			rnsc_resource_del(r);
			return RNSC_ERR_TOOBIG;
		}
		r->total_segments =
			(unsigned)((r->total_size - 1) / RNSC_RESOURCE_MAX_EFFICIENT_SIZE + 1);
		r->split = 1;
	}
	r->timeout_ms =
		p->timeout_ms ? p->timeout_ms
			      : (uint64_t)(r->link.rtt * RNSC_LINK_TRAFFIC_TIMEOUT_FACTOR * 1000.0);
	int rc = prepare_segment(r, 1);
	if (!rc && p->queued)
		r->status = RNSC_RESOURCE_QUEUED;
	else if (!rc)
		rc = advertise(r, now);
	if (rc) {
		rnsc_resource_del(r);
		return rc;
	}
	*out = r;
	return 0;
}

int rnsc_resource_advertise(rnsc_resource *r, uint64_t now)
{
	if (!r)
		return RNSC_ERR_INVAL;
	if (r->status != RNSC_RESOURCE_QUEUED || r->concluded)
		return RNSC_ERR_STATE;
	int rc = advertise(r, now);
	if (rc)
		fail(r, now);
	return rc;
}

static int req_seen(rnsc_resource *r, const uint8_t h[HL])
{
	unsigned n = r->req_seen_n < REQ_RING ? r->req_seen_n : REQ_RING;
	for (unsigned i = 0; i < n; i++)
		if (memcmp(r->req_seen[i], h, HL) == 0)
			return 1;
	memcpy(r->req_seen[r->req_seen_pos], h, HL);
	r->req_seen_pos = (r->req_seen_pos + 1) % REQ_RING;
	r->req_seen_n++;
	return 0;
}

/* Resource.request: a part request on the sender. */
static void sender_request(rnsc_resource *r, const uint8_t *pt, size_t len, uint64_t now)
{
	if (r->status == RNSC_RESOURCE_FAILED)
		return;
	if (r->rtt < 0)
		r->rtt = (double)(now - r->adv_sent) / 1000.0;
	r->status = RNSC_RESOURCE_TRANSFERRING;
	r->retries_left = RNSC_RESOURCE_MAX_RETRIES;
	int more = pt[0] == RNSC_RESOURCE_HASHMAP_IS_EXHAUSTED;
	size_t pad = more ? 1 + MH : 1;
	const uint8_t *req = pt + pad + HL;
	size_t nreq = (len - pad - HL) / MH;
	size_t end = r->rmch + RNSC_RESOURCE_COLLISION_GUARD_SIZE;
	if (end > r->total_parts)
		end = r->total_parts;
	for (size_t i = r->rmch; i < end; i++) {
		const uint8_t *mh = r->hashmap + i * MH;
		size_t k;
		for (k = 0; k < nreq; k++)
			if (memcmp(req + k * MH, mh, MH) == 0)
				break;
		if (k == nreq)
			continue;
		size_t po = i * r->sdu, pl = r->size - po < r->sdu ? r->size - po : r->sdu;
		if (send_pkt(r, RNSC_PKT_DATA, RNSC_CTX_RESOURCE, r->data + po, pl) < 0) {
			fail(r, now);
			return;
		}
		if (!r->have[i]) {
			r->have[i] = 1;
			r->sent_parts++;
		} else {
			r->st.resent_parts++;
		}
		r->st.parts++;
		r->st.bytes += pl;
		r->last_activity = r->last_part_sent = now;
	}
	if (more) {
		const uint8_t *last = pt + 1;
		size_t part_index = r->rmch;
		for (size_t i = r->rmch; i < end; i++) {
			part_index++;
			if (memcmp(r->hashmap + i * MH, last, MH) == 0)
				break;
		}
		r->rmch = part_index > 1 + RNSC_RESOURCE_WINDOW_MAX
				  ? part_index - 1 - RNSC_RESOURCE_WINDOW_MAX
				  : 0;
		if (part_index % RNSC_RESOURCE_HASHMAP_MAX_LEN != 0) {
			/* "Resource sequencing error" */
			fail(r, now);
			return;
		}
		size_t seg = part_index / RNSC_RESOURCE_HASHMAP_MAX_LEN;
		size_t hs = seg * RNSC_RESOURCE_HASHMAP_MAX_LEN;
		size_t he = hs + RNSC_RESOURCE_HASHMAP_MAX_LEN;
		if (he > r->total_parts)
			he = r->total_parts;
		if (hs >= he) {
			fail(r, now); /* "Resource HMU error" */
			return;
		}
		uint8_t hmu[HL + 16 + RNSC_RESOURCE_HASHMAP_MAX_LEN * MH];
		memcpy(hmu, r->hash, HL);
		rnsc_mp_writer w;
		rnsc_mp_writer_init(&w, hmu + HL, sizeof(hmu) - HL);
		rnsc_mp_write_array(&w, 2);
		rnsc_mp_write_uint(&w, seg);
		rnsc_mp_write_bin(&w, r->hashmap + hs * MH, (he - hs) * MH);
		int n = rnsc_mp_writer_finish(&w);
		if (n < 0 ||
		    send_pkt(r, RNSC_PKT_DATA, RNSC_CTX_RESOURCE_HMU, hmu, HL + (size_t)n) < 0) {
			fail(r, now);
			return;
		}
		r->st.hmus++;
		r->last_activity = now;
	}
	if (r->sent_parts == r->total_parts) {
		r->status = RNSC_RESOURCE_AWAITING_PROOF;
		r->retries_left = 3;
	}
	if (r->cb.progress)
		r->cb.progress(r->ud, r);
}

/* The sender is idle between sending the last part and the proof while the receiver
 * decrypts and hashes: it prepares the next segment then, a loop pass after the last part
 * (so the parts just queued leave first), into a shadow copy of itself. */
static int prep_ahead_due(const rnsc_resource *r)
{
	return r->initiator && r->status == RNSC_RESOURCE_AWAITING_PROOF && !r->nx &&
	       !r->nx_tried && r->segment_index < r->total_segments;
}

static void prepare_ahead(rnsc_resource *r)
{
	r->nx_tried = 1;
	rnsc_resource *nx = rnsc_alloc(r->ctx, sizeof(*nx));
	if (!nx)
		return; /* prepared when the proof comes, as without this */
	memcpy(nx, r, sizeof(*nx));
	nx->data = nx->hashmap = nx->have = nx->hm_have = NULL;
	nx->nx = NULL;
	if (prepare_segment(nx, r->segment_index + 1) != 0) {
		/* the same preparation runs again at the proof and fails the resource there */
		free_segment(nx);
		rnsc_free(r->ctx, nx);
		return;
	}
	r->nx = nx;
}

/* The next segment in slices. A sender of several segments is idle while the receiver
 * hashes each window of parts, and the whole preparation after the last part (read,
 * encrypt, hash, map) kept the receiver waiting for the next advertisement. So the shadow
 * is made SLICE_BYTES at a time, one slice per loop pass while the current segment
 * transfers, each pass handling the packets that arrived first (the measurement that chose
 * the slice size: bench/results/design-notes.md, "resource slices"). Needs the link's
 * encryption in pieces; a compressible resource is prepared whole. */
#define SLICE_BYTES 32768u

static int slices_due(const rnsc_resource *r)
{
	return r->initiator && !r->nx && !r->nx_tried && r->segment_index < r->total_segments &&
	       r->link.encrypt_begin && !(r->auto_compress && r->data_size <= r->ac_limit) &&
	       (r->status == RNSC_RESOURCE_TRANSFERRING ||
		r->status == RNSC_RESOURCE_AWAITING_PROOF);
}

static int slices_pending(const rnsc_resource *r)
{
	return r->nx && r->nx->sp_pre;
}

static void slices_begin(rnsc_resource *r)
{
	const size_t RH = RNSC_RESOURCE_RANDOM_HASH_SIZE;
	r->nx_tried = 1;
	rnsc_resource *nx = rnsc_alloc(r->ctx, sizeof(*nx));
	if (!nx)
		return; /* prepared whole when the proof comes */
	memcpy(nx, r, sizeof(*nx));
	nx->data = nx->hashmap = nx->have = nx->hm_have = NULL;
	nx->nx = NULL;
	nx->sp_index = r->segment_index + 1;
	uint64_t want;
	nx->sp_mo = segment_span(r, nx->sp_index, &nx->sp_off, &want) ? r->meta_len : 0;
	nx->sp_len = RH + nx->sp_mo + (size_t)want;
	nx->sp_read = RH + nx->sp_mo;
	nx->sp_enc = nx->sp_mapped = 0;
	nx->sp_collision = 0;
	memset(&nx->sp_tok, 0, sizeof(nx->sp_tok)); /* not live: abort does nothing */
	memset(&nx->sp_hash, 0, sizeof(nx->sp_hash));
	nx->compressed = 0;
	nx->size = rnsc_token_len(nx->sp_len);
	nx->total_parts = (size_t)((nx->size + nx->sdu - 1) / nx->sdu);
	nx->sp_pre = rnsc_alloc(r->ctx, nx->sp_len);
	nx->data = rnsc_alloc(r->ctx, (size_t)nx->size);
	nx->hashmap = rnsc_alloc(r->ctx, nx->total_parts * MH + 1);
	nx->have = rnsc_calloc(r->ctx, nx->total_parts + 1, 1);
	uint8_t rnd[RNSC_TRUNCATED_HASHLEN];
	int rc = nx->sp_pre && nx->data && nx->hashmap && nx->have ? 0 : RNSC_ERR_NOMEM;
	if (!rc && !(rc = rnsc_random_hash(r->ctx, rnd)))
		memcpy(nx->sp_pre, rnd, RH);
	if (!rc && !(rc = rnsc_random_hash(r->ctx, rnd))) {
		memcpy(nx->random_hash, rnd, RH);
		nx->rh_len = RH;
	}
	if (!rc)
		rc = rnsc_hash_init(r->ctx, &nx->sp_hash, RNSC_HASH_SHA256);
	if (!rc && nx->sp_mo) {
		memcpy(nx->sp_pre + RH, r->meta, nx->sp_mo);
		rc = rnsc_hash_update(&nx->sp_hash, nx->sp_pre + RH, nx->sp_mo);
	}
	if (!rc)
		rc = nx->link.encrypt_begin(nx->link.ud, &nx->sp_tok, nx->data);
	r->nx = nx;
	if (rc)
		drop_next(r);
}

/* The next slice of at most budget bytes: read and hash P, encrypt the whole blocks read,
 * map the parts the ciphertext covers; the last slice ends the token, the hash and the
 * proof, and packs the advertisement. 0: more to do, 1: prepared, < 0: an error. */
static int slices_run(rnsc_resource *nx, size_t budget)
{
	const size_t RH = RNSC_RESOURCE_RANDOM_HASH_SIZE;
	int rc;
	if (nx->sp_read < nx->sp_len) {
		size_t n = nx->sp_len - nx->sp_read < budget ? nx->sp_len - nx->sp_read : budget;
		uint8_t *at = nx->sp_pre + nx->sp_read;
		rc = nx->cb.read(nx->ud, nx->sp_off + (nx->sp_read - RH - nx->sp_mo), at, n);
		if (rc >= 0 && (size_t)rc != n)
			rc = RNSC_ERR_IO;
		if (rc < 0 || (rc = rnsc_hash_update(&nx->sp_hash, at, n)))
			return rc;
		nx->sp_read += n;
	}
	size_t whole = nx->sp_read - nx->sp_read % 16;
	if (whole > nx->sp_enc) {
		if ((rc = rnsc_token_enc_update(&nx->sp_tok, nx->data + 16 + nx->sp_enc,
						nx->sp_pre + nx->sp_enc, whole - nx->sp_enc)))
			return rc;
		nx->sp_enc = whole;
	}
	int fin = nx->sp_read == nx->sp_len;
	if (fin) {
		rc = rnsc_token_enc_final(&nx->sp_tok, nx->data + 16 + nx->sp_enc,
					  (size_t)nx->size - 16 - nx->sp_enc,
					  nx->sp_pre + nx->sp_enc, nx->sp_len - nx->sp_enc);
		if (rc < 0)
			return rc;
		nx->sp_enc = nx->sp_len;
	}
	size_t avail = fin ? (size_t)nx->size : 16 + nx->sp_enc;
	while (!nx->sp_collision && nx->sp_mapped < nx->total_parts) {
		size_t end = (nx->sp_mapped + 1) * nx->sdu;
		if (end > nx->size)
			end = (size_t)nx->size;
		if (end > avail)
			break; /* not encrypted yet */
		if ((rc = map_part(nx, nx->sp_mapped)) < 0)
			return rc;
		nx->sp_collision = rc;
		nx->sp_mapped++;
	}
	if (!fin)
		return 0;
	rc = hash_and_proof_from(nx->ctx, &nx->sp_hash, nx->hash, nx->expected_proof,
				 nx->sp_pre + RH, nx->sp_len - RH, nx->random_hash, nx->rh_len);
	if (!rc && nx->sp_collision) /* a new random hash, everything mapped again */
		rc = map_segment(nx, nx->sp_pre + RH, nx->sp_len - RH);
	if (!rc)
		rc = finish_segment(nx, nx->sp_index);
	if (rc)
		return rc;
	slices_free(nx);
	return 1;
}

static void slices_step(rnsc_resource *r, size_t budget)
{
	if (slices_run(r->nx, budget) < 0)
		drop_next(
			r); /* prepared whole at the proof, which fails the resource if it fails */
}

/* Makes the segment prepared ahead the current one: takes over exactly the fields
 * prepare_segment() sets (keep the two in step). */
static void adopt_next(rnsc_resource *r)
{
	rnsc_resource *nx = r->nx;
	r->nx = NULL;
	free_segment(r);
	r->data = nx->data;
	r->hashmap = nx->hashmap;
	r->have = nx->have;
	r->size = nx->size;
	r->total_parts = nx->total_parts;
	memcpy(r->random_hash, nx->random_hash, sizeof(r->random_hash));
	r->rh_len = nx->rh_len;
	memcpy(r->hash, nx->hash, HL);
	memcpy(r->expected_proof, nx->expected_proof, HL);
	r->compressed = nx->compressed;
	r->flags = nx->flags;
	r->segment_index = nx->segment_index;
	r->sent_parts = nx->sent_parts;
	r->rmch = nx->rmch;
	r->req_seen_n = nx->req_seen_n;
	memcpy(r->adv, nx->adv, nx->adv_len);
	r->adv_len = nx->adv_len;
	rnsc_free(r->ctx, nx);
}

static void sender_proof(rnsc_resource *r, const uint8_t *d, size_t len, uint64_t now)
{
	if (r->status == RNSC_RESOURCE_FAILED || len != 2 * HL ||
	    memcmp(d + HL, r->expected_proof, HL) != 0)
		return;
	r->status = RNSC_RESOURCE_COMPLETE;
	if (r->segment_index == r->total_segments) {
		free_segment(r);
		conclude(r);
		return;
	}
	int rc = 0;
	if (slices_pending(r))
		slices_step(r, SIZE_MAX);
	if (r->nx)
		adopt_next(r);
	else
		rc = prepare_segment(r, r->segment_index + 1);
	r->nx_tried = 0;
	if (!rc)
		rc = advertise(r, now);
	if (rc) {
		r->status = RNSC_RESOURCE_FAILED;
		conclude(r);
	}
}

/* ---- receiver --------------------------------------------------------------------------- */

static int hashmap_update(rnsc_resource *r, uint64_t segment, const uint8_t *m, size_t mlen)
{
	size_t hashes = mlen / MH;
	uint64_t base = segment * RNSC_RESOURCE_HASHMAP_MAX_LEN;
	if (hashes < 1)
		return RNSC_ERR_MALFORMED;
	if (segment > r->total_parts || base + hashes > r->total_parts)
		return RNSC_ERR_MALFORMED; /* the reference raises an IndexError */
	r->status = RNSC_RESOURCE_TRANSFERRING;
	for (size_t i = 0; i < hashes; i++) {
		size_t idx = (size_t)base + i;
		if (!r->hm_have[idx]) {
			r->hm_have[idx] = 1;
			r->hashmap_height++;
		}
		memcpy(r->hashmap + idx * MH, m + i * MH, MH);
	}
	return 0;
}

static int request_next(rnsc_resource *r, uint64_t now)
{
	if (r->status == RNSC_RESOURCE_FAILED || r->waiting_for_hmu)
		return 0;
	r->outstanding_parts = 0;
	int exhausted = 0;
	uint8_t req[1 + MH + HL + RNSC_RESOURCE_WINDOW_MAX_FAST * MH];
	size_t nreq = 0;
	size_t pn = (size_t)(r->cch + 1);
	unsigned i = 0;
	size_t end = pn + r->window;
	if (end > r->total_parts)
		end = r->total_parts;
	uint8_t *hashes = req + 1 + MH + HL;
	for (; pn < end; pn++) {
		if (!r->have[pn]) {
			if (r->hm_have[pn]) {
				memcpy(hashes + nreq * MH, r->hashmap + pn * MH, MH);
				nreq++;
				r->outstanding_parts++;
				i++;
			} else {
				exhausted = 1;
			}
		}
		if (i >= r->window || exhausted)
			break;
	}
	size_t o = 0;
	req[o++] = exhausted ? RNSC_RESOURCE_HASHMAP_IS_EXHAUSTED
			     : RNSC_RESOURCE_HASHMAP_IS_NOT_EXHAUSTED;
	if (exhausted) {
		memcpy(req + o, r->hashmap + (r->hashmap_height - 1) * MH, MH);
		o += MH;
		r->waiting_for_hmu = 1;
	}
	memcpy(req + o, r->hash, HL);
	o += HL;
	memmove(req + o, hashes, nreq * MH);
	o += nreq * MH;
	int rc = send_pkt(r, RNSC_PKT_DATA, RNSC_CTX_RESOURCE_REQ, req, o);
	if (rc < 0) {
		fail(r, now);
		return rc;
	}
	r->st.requests++;
	r->last_activity = r->req_sent = now;
	r->req_sent_bytes = (size_t)rc;
	r->rtt_rxd_bytes_at_part_req = r->rtt_rxd_bytes;
	r->req_resp_set = 0;
	return 0;
}

static double cur_rtt(const rnsc_resource *r)
{
	return r->rtt >= 0 ? r->rtt : r->link.rtt;
}

static double eifr_of(const rnsc_resource *r)
{
	if (r->req_data_rtt_rate != 0)
		return r->req_data_rtt_rate * 8;
	if (r->previous_eifr > 0)
		return r->previous_eifr;
	return (double)r->link.establishment_cost * 8 / cur_rtt(r);
}

static int setup_incoming(rnsc_resource *r, const rnsc_resource_adv *a)
{
	free_segment(r);
	r->flags = (int)(a->f & 0xFF);
	r->size = a->t;
	r->total_size = a->d;
	memcpy(r->hash, a->h, HL);
	memcpy(r->original_hash, a->o, HL);
	memcpy(r->random_hash, a->r, a->r_len);
	r->rh_len = a->r_len;
	r->compressed = (a->f >> 1) & 1;
	r->total_parts = (size_t)((a->t + r->sdu - 1) / r->sdu);
	r->segment_index = (unsigned)a->i;
	r->total_segments = (unsigned)a->l;
	r->split = a->l > 1;
	r->has_metadata = (a->f >> 5) & 1;
	r->received_count = 0;
	r->outstanding_parts = 0;
	r->hashmap_height = 0;
	r->waiting_for_hmu = 0;
	r->cch = -1;
	r->req_sent = 0;
	r->req_resp_set = 0;
	r->part_timeout_factor = RNSC_RESOURCE_PART_TIMEOUT_FACTOR;
	r->retries_left = RNSC_RESOURCE_MAX_RETRIES;
	r->data = rnsc_alloc(r->ctx, a->t ? (size_t)a->t : 1);
	/* zeroed: a hostile hashmap update can leave holes the request's "last map hash" reads */
	r->hashmap = rnsc_calloc(r->ctx, r->total_parts * MH + 1, 1);
	r->have = rnsc_calloc(r->ctx, r->total_parts + 1, 1);
	r->hm_have = rnsc_calloc(r->ctx, r->total_parts + 1, 1);
	if (!r->data || !r->hashmap || !r->have || !r->hm_have)
		return RNSC_ERR_NOMEM;
	return 0;
}

/* Resource.accept's window set-up, hashmap_update(0, m) and first request. */
static int start_incoming(rnsc_resource *r, const rnsc_resource_adv *a, uint64_t now)
{
	int rc = setup_incoming(r, a);
	if (rc)
		return rc;
	r->status = RNSC_RESOURCE_TRANSFERRING;
	r->last_activity = now;
	if ((rc = hashmap_update(r, 0, a->m, a->m_len)))
		return rc;
	return request_next(r, now);
}

int rnsc_resource_accept(rnsc_ctx *ctx, rnsc_resource **out, const rnsc_resource_link *link,
			 const rnsc_resource_callbacks *cb, void *cb_ud, const uint8_t *adv_plain,
			 size_t len, uint64_t now)
{
	if (!ctx || !out || !link || !link->send || !link->decrypt || !cb || !cb->write)
		return RNSC_ERR_INVAL;
	*out = NULL;
	rnsc_resource_adv a;
	int rc = rnsc_resource_adv_unpack(&a, adv_plain, len);
	if (rc)
		return rc;
	if (a.m_len < MH)
		return RNSC_ERR_MALFORMED;
	rnsc_resource *r = new_resource(ctx, link, cb, cb_ud);
	if (!r)
		return RNSC_ERR_NOMEM;
	r->initiator = 0;
	if (a.has_q) {
		memcpy(r->request_id, a.q, a.q_len);
		r->request_id_len = a.q_len;
		r->is_response = (a.f & RNSC_RESOURCE_F_IS_RESPONSE) != 0;
	}
	r->window = link->last_window ? link->last_window : RNSC_RESOURCE_WINDOW;
	if (r->window > RNSC_RESOURCE_WINDOW_MAX_FAST)
		r->window = RNSC_RESOURCE_WINDOW_MAX_FAST; /* the part request holds at most this */
	r->window_max = RNSC_RESOURCE_WINDOW_MAX_SLOW;
	r->window_min = RNSC_RESOURCE_WINDOW_MIN;
	r->window_flexibility = RNSC_RESOURCE_WINDOW_FLEXIBILITY;
	r->previous_eifr = link->last_eifr;
	if ((rc = start_incoming(r, &a, now))) {
		rnsc_resource_del(r);
		return rc;
	}
	*out = r;
	return 0;
}

int rnsc_resource_accept_segment(rnsc_resource *r, const rnsc_resource_adv *a, uint64_t now)
{
	if (!r || !a)
		return RNSC_ERR_INVAL;
	if (r->initiator || !r->waiting_next || memcmp(a->o, r->original_hash, HL) != 0 ||
	    a->i != (uint64_t)r->segment_index + 1 || a->l != r->total_segments)
		return 0;
	if (a->m_len < MH)
		return RNSC_ERR_MALFORMED;
	r->waiting_next = 0;
	/* a new Resource on the same link: it starts from the link's last window and rate */
	r->previous_eifr = r->eifr;
	r->req_data_rtt_rate = 0;
	r->req_resp_rtt_rate = 0;
	r->rtt = -1;
	r->fast_rate_rounds = r->very_slow_rate_rounds = 0;
	r->window_max = RNSC_RESOURCE_WINDOW_MAX_SLOW;
	r->window_min = RNSC_RESOURCE_WINDOW_MIN;
	int rc = start_incoming(r, a, now);
	if (rc) {
		r->status = RNSC_RESOURCE_FAILED;
		conclude(r);
		return rc;
	}
	return 1;
}

int rnsc_resource_reject(const rnsc_resource_link *link, const uint8_t *adv_plain, size_t len)
{
	if (!link || !link->send)
		return RNSC_ERR_INVAL;
	rnsc_resource_adv a;
	int rc = rnsc_resource_adv_unpack(&a, adv_plain, len);
	if (rc)
		return rc;
	rc = link->send(link->ud, RNSC_PKT_DATA, RNSC_CTX_RESOURCE_RCL, a.h, HL);
	return rc < 0 ? rc : 0;
}

/* One pass of bz2 decompression of in[0..len), handing each chunk of output to fn (which
 * returns 0 or stops the pass with its code). More than cap bytes of output fail with
 * RNSC_ERR_TOOBIG (the reference's max_decompressed_size), a stream that does not end with
 * RNSC_ERR_TRUNCATED (decompressor.eof), bad data with RNSC_ERR_MALFORMED. The output never
 * lives in memory beyond one chunk, so a bomb costs CPU, not memory. *total gets the output
 * length. */
#define UNZ_CHUNK 65536u
typedef int (*unz_fn)(void *ud, const uint8_t *p, size_t n);
static int bz2_stream(rnsc_resource *r, const uint8_t *in, size_t len, size_t cap, unz_fn fn,
		      void *ud, size_t *total)
{
	bz_stream s;
	memset(&s, 0, sizeof(s));
	if (BZ2_bzDecompressInit(&s, 0, 0) != BZ_OK)
		return RNSC_ERR_NOMEM;
	uint8_t *buf = rnsc_alloc(r->ctx, UNZ_CHUNK);
	if (!buf) {
		BZ2_bzDecompressEnd(&s);
		return RNSC_ERR_NOMEM;
	}
	s.next_in = (char *)(uintptr_t)in;
	s.avail_in = (unsigned)len;
	size_t have = 0;
	int rc;
	for (;;) {
		s.next_out = (char *)buf;
		s.avail_out = UNZ_CHUNK;
		int z = BZ2_bzDecompress(&s);
		size_t n = UNZ_CHUNK - s.avail_out;
		if (n > cap - have) {
			rc = RNSC_ERR_TOOBIG;
			break;
		}
		have += n;
		if (n && (rc = fn(ud, buf, n)) != 0)
			break;
		if (z == BZ_STREAM_END) {
			rc = 0;
			break;
		}
		if (z != BZ_OK) {
			rc = RNSC_ERR_MALFORMED;
			break;
		}
		if (s.avail_in == 0 && s.avail_out > 0) {
			rc = RNSC_ERR_TRUNCATED; /* input ended before the stream did */
			break;
		}
	}
	BZ2_bzDecompressEnd(&s);
	rnsc_free(r->ctx, buf);
	*total = have;
	return rc;
}

static int unz_hash(void *ud, const uint8_t *p, size_t n)
{
	return rnsc_hash_update(ud, p, n);
}

/* The second pass over a checked segment: the metadata of the first segment (its 3-byte
 * length, then that many bytes, cut to what the segment holds as Python slicing does) goes
 * to the metadata callback once, everything after it to the write callback. */
typedef struct unz_out {
	rnsc_resource *r;
	int meta;    /* this segment starts with metadata */
	size_t plen; /* the segment's decompressed length (from the first pass) */
	size_t pos;  /* bytes of the segment seen so far */
	uint8_t mhdr[3];
	size_t ms; /* the metadata length, once the header is in */
	uint8_t *mbuf;
	rnsc_hash h; /* the proof's hash over the whole segment */
} unz_out;

static void unz_meta_done(unz_out *o)
{
	rnsc_resource *r = o->r;
	if (r->cb.metadata && !r->metadata_delivered)
		r->cb.metadata(r->ud, r, o->mbuf ? o->mbuf : o->mhdr, o->ms);
	r->metadata_delivered = 1;
	rnsc_free(r->ctx, o->mbuf);
	o->mbuf = NULL;
	o->meta = 0;
}

static int unz_write(void *ud, const uint8_t *p, size_t n)
{
	unz_out *o = ud;
	int rc = rnsc_hash_update(&o->h, p, n);
	if (rc)
		return rc;
	while (n && o->meta) {
		if (o->pos < 3) {
			o->mhdr[o->pos++] = *p++;
			n--;
			if (o->pos == 3) {
				size_t ms = (size_t)o->mhdr[0] << 16 | (size_t)o->mhdr[1] << 8 |
					    o->mhdr[2];
				o->ms = ms > o->plen - 3 ? o->plen - 3 : ms; /* Python slicing */
				if (o->ms == 0) {
					unz_meta_done(o);
				} else if (!(o->mbuf = rnsc_alloc(o->r->ctx, o->ms))) {
					return RNSC_ERR_NOMEM;
				}
			}
			continue;
		}
		size_t got = o->pos - 3, take = o->ms - got < n ? o->ms - got : n;
		memcpy(o->mbuf + got, p, take);
		o->pos += take;
		p += take;
		n -= take;
		if (o->pos - 3 == o->ms)
			unz_meta_done(o);
	}
	o->pos += n;
	if (n && o->r->cb.write(o->r->ud, p, n) < 0)
		return RNSC_ERR_IO;
	return 0;
}

static void prove(rnsc_resource *r, const uint8_t proof_hash[HL], uint64_t now)
{
	uint8_t proof[2 * HL];
	memcpy(proof, r->hash, HL);
	memcpy(proof + HL, proof_hash, HL);
	if (send_pkt(r, RNSC_PKT_PROOF, RNSC_CTX_RESOURCE_PRF, proof, sizeof(proof)) < 0)
		fail(r, now);
}

static void assembled(rnsc_resource *r, int ok);

/* Resource.assemble for a compressed segment, in two streaming passes so that memory stays
 * bounded however far it decompresses (up to the reference's AUTO_COMPRESS_MAX_SIZE): the
 * first hashes the decompressed bytes and checks the segment's hash, the second (only for a
 * segment that checked) hands them to the callbacks and hashes them again for the proof. */
static void assemble_compressed(rnsc_resource *r, uint8_t *dec, const uint8_t *body, size_t blen,
				uint64_t now)
{
	rnsc_hash h;
	size_t plen = 0;
	uint8_t calc[HL], proof_hash[HL];
	int ok = 0, rc = rnsc_hash_init(r->ctx, &h, RNSC_HASH_SHA256);
	if (rc)
		goto corrupt;
	rc = bz2_stream(r, body, blen, RNSC_RESOURCE_MAX_DECOMPRESSED, unz_hash, &h, &plen);
	if (rc == 0 && (rc = rnsc_hash_update(&h, r->random_hash, r->rh_len)) == 0)
		rc = rnsc_hash_final(&h, calc);
	else
		rnsc_hash_abort(&h);
	if (rc == RNSC_ERR_TOOBIG) {
		/* "Decompressed resource exceeded maximum decompressed size": rejected, and the
		 * reference tears the link down */
		rnsc_free(r->ctx, dec);
		r->status = RNSC_RESOURCE_CORRUPT;
		(void)send_pkt(r, RNSC_PKT_DATA, RNSC_CTX_RESOURCE_RCL, r->hash, HL);
		if (r->link.teardown)
			r->link.teardown(r->link.ud);
		free_segment(r);
		conclude(r);
		return;
	}
	if (rc || memcmp(calc, r->hash, HL) != 0)
		goto corrupt;
	unz_out o = {.r = r, .meta = r->has_metadata && r->segment_index == 1, .plen = plen};
	if (o.meta && plen < 3)
		goto corrupt;
	/* second pass: the proof is SHA-256(P + hash), P streamed to the callbacks meanwhile */
	if ((rc = rnsc_hash_init(r->ctx, &o.h, RNSC_HASH_SHA256)) != 0)
		goto corrupt;
	size_t again = 0;
	rc = bz2_stream(r, body, blen, plen, unz_write, &o, &again);
	if (rc == 0 && (rc = rnsc_hash_update(&o.h, r->hash, HL)) == 0)
		rc = rnsc_hash_final(&o.h, proof_hash);
	else
		rnsc_hash_abort(&o.h);
	rnsc_free(r->ctx, o.mbuf);
	if (rc) {
		rnsc_free(r->ctx, dec);
		fail(r, now);
		return;
	}
	rnsc_free(r->ctx, dec);
	r->status = RNSC_RESOURCE_COMPLETE;
	prove(r, proof_hash, now);
	ok = r->status == RNSC_RESOURCE_COMPLETE;
	assembled(r, ok);
	return;
corrupt:
	r->status = RNSC_RESOURCE_CORRUPT;
	rnsc_free(r->ctx, dec);
	assembled(r, 0);
}

/* Resource.assemble for the current segment. */
static void assemble(rnsc_resource *r, uint64_t now)
{
	r->status = RNSC_RESOURCE_ASSEMBLING;
	uint8_t *dec = rnsc_alloc(r->ctx, r->size ? (size_t)r->size : 1);
	const uint8_t *plain = NULL; /* P: in dec, after the random head */
	size_t plen = 0;
	int ok = 0;
	if (!dec)
		goto corrupt;
	int n = r->link.decrypt(r->link.ud, dec, (size_t)r->size, r->data, (size_t)r->size);
	if (n < RNSC_RESOURCE_RANDOM_HASH_SIZE)
		goto corrupt;
	const uint8_t *body = dec + RNSC_RESOURCE_RANDOM_HASH_SIZE;
	size_t blen = (size_t)n - RNSC_RESOURCE_RANDOM_HASH_SIZE;
	if (r->compressed) {
		assemble_compressed(r, dec, body, blen, now);
		return;
	}
	plain = body;
	plen = blen;
	/* the proof, SHA-256(P + hash), is computed with the check: they share P */
	uint8_t calc[HL], proof_hash[HL];
	if (hash_and_proof(r->ctx, calc, proof_hash, plain, plen, r->random_hash, r->rh_len) ||
	    memcmp(calc, r->hash, HL) != 0)
		goto corrupt;
	const uint8_t *payload = plain;
	size_t paylen = plen;
	if (r->has_metadata && r->segment_index == 1) {
		if (plen < 3)
			goto corrupt;
		size_t ms = (size_t)plain[0] << 16 | (size_t)plain[1] << 8 | plain[2];
		if (ms > plen - 3)
			ms = plen - 3; /* Python slicing */
		if (r->cb.metadata && !r->metadata_delivered)
			r->cb.metadata(r->ud, r, plain + 3, ms);
		r->metadata_delivered = 1;
		payload = plain + 3 + ms;
		paylen = plen - 3 - ms;
	}
	if (r->cb.write(r->ud, payload, paylen) < 0) {
		rnsc_free(r->ctx, dec);
		fail(r, now);
		return;
	}
	r->status = RNSC_RESOURCE_COMPLETE;
	prove(r, proof_hash, now);
	ok = r->status == RNSC_RESOURCE_COMPLETE;
	goto done;
corrupt:
	r->status = RNSC_RESOURCE_CORRUPT;
done:
	rnsc_free(r->ctx, dec);
	assembled(r, ok);
}

/* After a segment: the window and rate carry over, the next segment is awaited or the
 * resource concludes. */
static void assembled(rnsc_resource *r, int ok)
{
	/* Link.resource_concluded: the window and rate carry over to the next resource */
	r->eifr = eifr_of(r);
	free_segment(r);
	if (ok && r->segment_index < r->total_segments) {
		r->waiting_next = 1;
		return;
	}
	conclude(r);
}

static void receive_part(rnsc_resource *r, const uint8_t *part, size_t len, uint64_t now)
{
	if (r->status == RNSC_RESOURCE_FAILED || r->waiting_next ||
	    r->status >= RNSC_RESOURCE_ASSEMBLING)
		return;
	r->last_activity = now;
	r->retries_left = RNSC_RESOURCE_MAX_RETRIES;
	if (!r->req_resp_set) {
		r->req_resp_set = 1;
		double rtt = (double)(now - r->req_sent) / 1000.0;
		r->part_timeout_factor = RNSC_RESOURCE_PART_TIMEOUT_FACTOR_AFTER_RTT;
		if (r->rtt < 0)
			r->rtt = r->link.rtt;
		else if (rtt < r->rtt)
			r->rtt = fmax(r->rtt - r->rtt * 0.05, rtt);
		else if (rtt > r->rtt)
			r->rtt = fmin(r->rtt + r->rtt * 0.05, rtt);
		if (rtt > 0) {
			/* the part's packet: header (19 bytes on a link) + data */
			double cost = (double)(len + 19 + r->req_sent_bytes);
			r->req_resp_rtt_rate = cost / rtt;
			if (r->req_resp_rtt_rate > RNSC_RESOURCE_RATE_FAST &&
			    r->fast_rate_rounds < RNSC_RESOURCE_FAST_RATE_THRESHOLD) {
				r->fast_rate_rounds++;
				if (r->fast_rate_rounds == RNSC_RESOURCE_FAST_RATE_THRESHOLD)
					r->window_max = RNSC_RESOURCE_WINDOW_MAX_FAST;
			}
		}
	}
	r->status = RNSC_RESOURCE_TRANSFERRING;
	uint8_t mh[MH];
	if (map_hash(r, mh, part, len))
		return;
	size_t start = (size_t)(r->cch + 1);
	size_t end = start + r->window;
	if (end > r->total_parts)
		end = r->total_parts;
	for (size_t i = start; i < end; i++) {
		if (!r->hm_have[i] || memcmp(r->hashmap + i * MH, mh, MH) != 0 || r->have[i])
			continue;
		size_t po = i * r->sdu;
		size_t pl = r->size - po < r->sdu ? (size_t)(r->size - po) : r->sdu;
		if (len != pl)
			continue; /* a part of another length cannot be this one */
		memcpy(r->data + po, part, len);
		r->have[i] = 1;
		r->rtt_rxd_bytes += len;
		r->received_count++;
		r->outstanding_parts--;
		r->st.parts++;
		r->st.bytes += len;
		size_t cp = (size_t)(r->cch + 1);
		while (cp < r->total_parts && r->have[cp]) {
			r->cch = (long)cp;
			cp++;
		}
		if (r->cb.progress)
			r->cb.progress(r->ud, r);
	}
	if (r->received_count == r->total_parts) {
		assemble(r, now);
	} else if (r->outstanding_parts == 0) {
		if (r->window < r->window_max) {
			r->window++;
			if (r->window - r->window_min > r->window_flexibility - 1)
				r->window_min++;
		}
		if (r->req_sent != 0) {
			double rtt = (double)(now - r->req_sent) / 1000.0;
			uint64_t got = r->rtt_rxd_bytes - r->rtt_rxd_bytes_at_part_req;
			if (rtt != 0) {
				r->req_data_rtt_rate = (double)got / rtt;
				r->eifr = eifr_of(r);
				r->rtt_rxd_bytes_at_part_req = r->rtt_rxd_bytes;
				if (r->req_data_rtt_rate > RNSC_RESOURCE_RATE_FAST &&
				    r->fast_rate_rounds < RNSC_RESOURCE_FAST_RATE_THRESHOLD) {
					r->fast_rate_rounds++;
					if (r->fast_rate_rounds ==
					    RNSC_RESOURCE_FAST_RATE_THRESHOLD)
						r->window_max = RNSC_RESOURCE_WINDOW_MAX_FAST;
				}
				if (r->fast_rate_rounds == 0 &&
				    r->req_data_rtt_rate < RNSC_RESOURCE_RATE_VERY_SLOW &&
				    r->very_slow_rate_rounds <
					    RNSC_RESOURCE_VERY_SLOW_RATE_THRESHOLD) {
					r->very_slow_rate_rounds++;
					if (r->very_slow_rate_rounds ==
					    RNSC_RESOURCE_VERY_SLOW_RATE_THRESHOLD)
						r->window_max = RNSC_RESOURCE_WINDOW_MAX_VERY_SLOW;
				}
			}
		}
		request_next(r, now);
	}
}

static void receive_hmu(rnsc_resource *r, const uint8_t *pt, size_t len, uint64_t now)
{
	if (r->status == RNSC_RESOURCE_FAILED || !r->waiting_for_hmu || r->waiting_next)
		return;
	rnsc_mp_reader rd;
	rnsc_mp_reader_init(&rd, pt + HL, len - HL);
	size_t n;
	uint64_t seg;
	const uint8_t *m;
	size_t mlen;
	if (rnsc_mp_read_array(&rd, &n) || n < 2 || rnsc_mp_read_uint(&rd, &seg) ||
	    rnsc_mp_read_bin(&rd, &m, &mlen))
		return; /* the reference's unpack raises: the packet is dropped */
	r->last_activity = now;
	r->retries_left = RNSC_RESOURCE_MAX_RETRIES;
	if (mlen / MH < 1) {
		fail(r, now); /* "Invalid HMU received, cancelling transfer" */
		return;
	}
	if (hashmap_update(r, seg, m, mlen))
		return;
	r->waiting_for_hmu = 0;
	request_next(r, now);
}

/* ---- common ------------------------------------------------------------------------------ */

int rnsc_resource_packet(rnsc_resource *r, int packet_type, int context, const uint8_t *data,
			 size_t len, const uint8_t packet_hash[32], uint64_t now)
{
	if (!r || (!data && len))
		return RNSC_ERR_INVAL;
	if (r->concluded)
		return RNSC_ERR_NOTFOUND;
	if (packet_type == RNSC_PKT_PROOF) {
		if (context != RNSC_CTX_RESOURCE_PRF || !r->initiator)
			return RNSC_ERR_NOTFOUND;
		if (len < HL)
			return RNSC_ERR_MALFORMED;
		if (memcmp(data, r->hash, HL) != 0)
			return RNSC_ERR_NOTFOUND;
		sender_proof(r, data, len, now);
		return 0;
	}
	switch (context) {
	case RNSC_CTX_RESOURCE:
		if (r->initiator)
			return RNSC_ERR_NOTFOUND;
		receive_part(r, data, len, now);
		return 0;
	case RNSC_CTX_RESOURCE_REQ: {
		if (!r->initiator)
			return RNSC_ERR_NOTFOUND;
		if (len < 1)
			return RNSC_ERR_MALFORMED;
		size_t pad = data[0] == RNSC_RESOURCE_HASHMAP_IS_EXHAUSTED ? 1 + MH : 1;
		if (len < pad + HL)
			return RNSC_ERR_MALFORMED;
		if (memcmp(data + pad, r->hash, HL) != 0)
			return RNSC_ERR_NOTFOUND;
		if (packet_hash && req_seen(r, packet_hash))
			return 0;
		sender_request(r, data, len, now);
		return 0;
	}
	case RNSC_CTX_RESOURCE_HMU:
	case RNSC_CTX_RESOURCE_ICL:
		if (r->initiator)
			return RNSC_ERR_NOTFOUND;
		if (len < HL)
			return RNSC_ERR_MALFORMED;
		if (memcmp(data, r->hash, HL) != 0)
			return RNSC_ERR_NOTFOUND;
		if (context == RNSC_CTX_RESOURCE_HMU)
			receive_hmu(r, data, len, now);
		else
			rnsc_resource_cancel(r, now);
		return 0;
	case RNSC_CTX_RESOURCE_RCL:
		if (!r->initiator)
			return RNSC_ERR_NOTFOUND;
		if (len < HL)
			return RNSC_ERR_MALFORMED;
		if (memcmp(data, r->hash, HL) != 0)
			return RNSC_ERR_NOTFOUND;
		if (r->status < RNSC_RESOURCE_COMPLETE) { /* Resource._rejected */
			r->status = RNSC_RESOURCE_REJECTED;
			free_segment(r);
			conclude(r);
		}
		return 0;
	default:
		return RNSC_ERR_NOTFOUND;
	}
}

static void fail(rnsc_resource *r, uint64_t now)
{
	(void)now;
	if (r->concluded)
		return;
	if (r->status < RNSC_RESOURCE_COMPLETE || r->waiting_next) {
		int was_waiting = r->waiting_next;
		r->status = RNSC_RESOURCE_FAILED;
		r->waiting_next = 0;
		if (!was_waiting)
			(void)send_pkt(r, RNSC_PKT_DATA,
				       r->initiator ? RNSC_CTX_RESOURCE_ICL : RNSC_CTX_RESOURCE_RCL,
				       r->hash, HL);
		free_segment(r);
		drop_next(r);
		conclude(r);
	}
}

void rnsc_resource_cancel(rnsc_resource *r, uint64_t now)
{
	if (r)
		fail(r, now);
}

void rnsc_resource_link_closed(rnsc_resource *r)
{
	if (!r || r->concluded)
		return;
	if (r->status < RNSC_RESOURCE_COMPLETE || r->waiting_next)
		r->status = RNSC_RESOURCE_FAILED;
	r->waiting_next = 0;
	free_segment(r);
	drop_next(r);
	conclude(r);
}

static uint64_t ms_at(uint64_t base, double seconds)
{
	if (seconds <= 0)
		return base;
	double v = (double)base + seconds * 1000.0;
	return v >= 1.8e19 ? UINT64_MAX : (uint64_t)v;
}

/* The reference's watchdog deadlines, state by state: when the watchdog next has something
 * to do (timeouts, retries). */
static uint64_t watch_deadline(const rnsc_resource *r)
{
	if (r->concluded || r->waiting_next)
		return UINT64_MAX;
	switch (r->status) {
	case RNSC_RESOURCE_ADVERTISED:
		if (r->early_readv)
			return r->early_readv;
		return r->adv_sent + r->timeout_ms + RNSC_RESOURCE_PROCESSING_GRACE_MS;
	case RNSC_RESOURCE_TRANSFERRING:
		if (!r->initiator) {
			double extra = (RNSC_RESOURCE_MAX_RETRIES - r->retries_left) *
				       (RNSC_RESOURCE_PER_RETRY_DELAY_MS / 1000.0);
			double eifr = eifr_of(r);
			double sdu = (double)r->sdu;
			double hmu = (r->waiting_for_hmu || r->outstanding_parts == 0)
					     ? sdu * 8 * RNSC_RESOURCE_HMU_WAIT_FACTOR / eifr
					     : 0;
			double tof = (double)r->outstanding_parts * sdu * 8 / eifr;
			double wait;
			if (r->req_resp_rtt_rate != 0)
				wait = r->part_timeout_factor * tof + hmu;
			else
				wait = r->part_timeout_factor * ((3 * sdu) / eifr);
			wait += RNSC_RESOURCE_RETRY_GRACE_TIME_MS / 1000.0 + extra;
			return ms_at(r->last_activity, wait);
		} else {
			/* sum((r + 1) * PER_RETRY_DELAY for r in range(MAX_RETRIES)) */
			double extra =
				RNSC_RESOURCE_PER_RETRY_DELAY_MS / 1000.0 *
				(RNSC_RESOURCE_MAX_RETRIES * (RNSC_RESOURCE_MAX_RETRIES + 1) / 2);
			double wait = cur_rtt(r) * r->timeout_factor * RNSC_RESOURCE_MAX_RETRIES +
				      RNSC_RESOURCE_SENDER_GRACE_TIME_MS / 1000.0 + extra;
			return ms_at(r->last_activity, wait);
		}
	case RNSC_RESOURCE_AWAITING_PROOF: {
		return ms_at(r->last_part_sent,
			     cur_rtt(r) * RNSC_RESOURCE_PROOF_TIMEOUT_FACTOR +
				     RNSC_RESOURCE_SENDER_GRACE_TIME_MS / 1000.0);
	}
	default:
		return UINT64_MAX;
	}
}

static int work_deferred(const rnsc_resource *r)
{
	return !r->concluded && (slices_pending(r) || slices_due(r) || prep_ahead_due(r));
}

static uint64_t deadline(const rnsc_resource *r)
{
	return work_deferred(r) ? 0 : watch_deadline(r);
}

int rnsc_resource_work_deferred(const rnsc_resource *r)
{
	return r && work_deferred(r);
}

uint64_t rnsc_resource_next_deadline(const rnsc_resource *r)
{
	return r ? deadline(r) : UINT64_MAX;
}

void rnsc_resource_tick(rnsc_resource *r, uint64_t now)
{
	if (!r || r->concluded || now < deadline(r))
		return;
	if (slices_pending(r))
		slices_step(r, SLICE_BYTES);
	else if (slices_due(r))
		slices_begin(r);
	else if (prep_ahead_due(r))
		prepare_ahead(r);
	if (now < watch_deadline(r))
		return;
	switch (r->status) {
	case RNSC_RESOURCE_ADVERTISED:
		if (r->early_readv) {
			/* the same advertisement again; the timeout still runs from the first */
			r->early_readv = 0;
			if (send_pkt(r, RNSC_PKT_DATA, RNSC_CTX_RESOURCE_ADV, r->adv, r->adv_len) <
			    0) {
				fail(r, now);
				return;
			}
			r->st.advertisements++;
			r->st.early_advertisements++;
			break;
		}
		if (r->retries_left == 0) {
			fail(r, now); /* "Resource transfer timeout after sending advertisement" */
			return;
		}
		r->retries_left--;
		r->st.retries++;
		if (send_pkt(r, RNSC_PKT_DATA, RNSC_CTX_RESOURCE_ADV, r->adv, r->adv_len) < 0) {
			fail(r, now);
			return;
		}
		r->st.advertisements++;
		r->last_activity = r->adv_sent = now;
		break;
	case RNSC_RESOURCE_TRANSFERRING:
		if (!r->initiator) {
			if (r->retries_left == 0) {
				fail(r, now);
				return;
			}
			/* "Timed out waiting for parts, requesting retry" */
			if (r->window > r->window_min) {
				r->window--;
				if (r->window_max > r->window_min) {
					r->window_max--;
					if (r->window_max - r->window > r->window_flexibility - 1)
						r->window_max--;
				}
			}
			r->retries_left--;
			r->st.retries++;
			r->waiting_for_hmu = 0;
			request_next(r, now);
		} else {
			fail(r, now); /* "Resource timed out waiting for part requests" */
		}
		break;
	case RNSC_RESOURCE_AWAITING_PROOF:
		r->timeout_factor = RNSC_RESOURCE_PROOF_TIMEOUT_FACTOR;
		if (r->retries_left == 0) {
			fail(r, now); /* "Resource timed out waiting for proof" */
			return;
		}
		r->retries_left--;
		r->st.retries++;
		r->last_part_sent = now;
		break;
	default:
		break;
	}
}

/* ---- accessors --------------------------------------------------------------------------- */

int rnsc_resource_status(const rnsc_resource *r)
{
	return r ? r->status : RNSC_ERR_INVAL;
}
int rnsc_resource_done(const rnsc_resource *r)
{
	return r ? r->concluded : 1;
}
int rnsc_resource_is_initiator(const rnsc_resource *r)
{
	return r ? r->initiator : 0;
}
const uint8_t *rnsc_resource_hash(const rnsc_resource *r)
{
	return r ? r->hash : NULL;
}
const uint8_t *rnsc_resource_original_hash(const rnsc_resource *r)
{
	return r ? r->original_hash : NULL;
}
uint64_t rnsc_resource_total_size(const rnsc_resource *r)
{
	return r ? r->total_size : 0;
}
uint64_t rnsc_resource_transfer_size(const rnsc_resource *r)
{
	return r ? r->size : 0;
}
size_t rnsc_resource_parts(const rnsc_resource *r)
{
	return r ? r->total_parts : 0;
}
unsigned rnsc_resource_segment_index(const rnsc_resource *r)
{
	return r ? r->segment_index : 0;
}
unsigned rnsc_resource_segments(const rnsc_resource *r)
{
	return r ? r->total_segments : 0;
}
int rnsc_resource_flags(const rnsc_resource *r)
{
	return r ? r->flags : 0;
}
int rnsc_resource_compressed(const rnsc_resource *r)
{
	return r ? r->compressed : 0;
}
unsigned rnsc_resource_window(const rnsc_resource *r)
{
	return r ? r->window : 0;
}
double rnsc_resource_eifr(const rnsc_resource *r)
{
	return r ? r->eifr : 0;
}

const uint8_t *rnsc_resource_request_id(const rnsc_resource *r, size_t *len)
{
	if (len)
		*len = r ? r->request_id_len : 0;
	return r && r->request_id_len ? r->request_id : NULL;
}

void rnsc_resource_stats_get(const rnsc_resource *r, rnsc_resource_stats *out)
{
	if (r && out)
		*out = r->st;
}

static size_t done_parts(const rnsc_resource *r)
{
	return r->initiator ? r->sent_parts : r->received_count;
}

double rnsc_resource_progress(const rnsc_resource *r)
{
	if (!r)
		return 0;
	if (r->status == RNSC_RESOURCE_COMPLETE && r->segment_index == r->total_segments)
		return 1.0;
	double processed, total;
	if (!r->split) {
		processed = (double)done_parts(r);
		total = (double)r->total_parts;
	} else {
		double maxp = ceil((double)RNSC_RESOURCE_MAX_EFFICIENT_SIZE / (double)r->sdu);
		double prev = (double)(r->segment_index - 1) * maxp;
		double cur = (double)r->total_parts;
		double factor = cur > 0 && cur < maxp ? maxp / cur : 1;
		processed = prev + (double)done_parts(r) * factor;
		total = (double)r->total_segments * maxp;
	}
	if (total <= 0)
		return 0;
	double p = processed / total;
	return p > 1.0 ? 1.0 : p;
}

double rnsc_resource_segment_progress(const rnsc_resource *r)
{
	if (!r)
		return 0;
	if (r->status == RNSC_RESOURCE_COMPLETE && r->segment_index == r->total_segments)
		return 1.0;
	if (!r->total_parts)
		return 0;
	double p = (double)done_parts(r) / (double)r->total_parts;
	return p > 1.0 ? 1.0 : p;
}

const char *rnsc_resource_status_name(int s)
{
	static const char *const names[] = {
		"NONE",       "QUEUED",   "ADVERTISED", "TRANSFERRING", "AWAITING_PROOF",
		"ASSEMBLING", "COMPLETE", "FAILED",     "CORRUPT",      "REJECTED"};
	return s >= 0 && s <= RNSC_RESOURCE_REJECTED ? names[s] : NULL;
}
