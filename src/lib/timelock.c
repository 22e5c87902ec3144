/* SPDX-License-Identifier: MIT */
#include "timelock.h"

#include <string.h>

#define OFF_VERSION 8
#define OFF_ALGO 9
#define OFF_MODE 10
#define OFF_RES1 11
#define OFF_INTERVAL 12
#define OFF_STEPS 16
#define OFF_CTLEN 24
#define OFF_RATE 32
#define OFF_RES2 36
#define OFF_KEY 40
#define OFF_SEED 72
#define OFF_CHECK 104
#define CHECK_LEN 16

static const char ctx_label[] = "rnsc-timelock-v1 context";
static const char key_label[] = "rnsc-timelock-v1 keys";

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v = 0;
	for (int i = 3; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

uint64_t rnsc_timelock_ct_len(uint64_t payload_len)
{
	return payload_len + (16 - payload_len % 16);
}

uint64_t rnsc_timelock_file_len(const rnsc_timelock_header *h)
{
	return RNSC_TL_HEADER_LEN + RNSC_TL_IV_LEN + h->ct_len + RNSC_TL_TAG_LEN;
}

uint32_t rnsc_timelock_randomx_flags(const rnsc_timelock_header *h)
{
	return h->algo == RNSC_TL_ALGO_V2 ? RNSC_RANDOMX_V2 : 0;
}

/* Field checks shared by encode and decode, so a header we write is one we accept. */
static int check_fields(const rnsc_timelock_header *h, const char **why)
{
	const char *w = NULL;
	if (h->algo != RNSC_TL_ALGO_V1 && h->algo != RNSC_TL_ALGO_V2)
		w = "unknown RandomX algorithm";
	else if (h->mode != RNSC_TL_MODE_LIGHT && h->mode != RNSC_TL_MODE_FULL)
		w = "unknown mode";
	else if (h->steps == 0 || h->steps > RNSC_TL_MAX_STEPS)
		w = "step count out of range";
	else if (h->checkpoint_interval == 0)
		w = "checkpoint interval is zero";
	else if (h->ct_len < 16 || h->ct_len % 16 || h->ct_len > RNSC_TL_MAX_PAYLOAD + 16)
		w = "ciphertext length out of range";
	if (why && w)
		*why = w;
	return w ? RNSC_ERR_RANGE : 0;
}

int rnsc_timelock_header_new(rnsc_ctx *ctx, rnsc_timelock_header *h, int algo, int mode,
			     uint64_t steps, uint32_t interval, uint32_t rate_mhs,
			     size_t payload_len)
{
	if (!ctx || !h)
		return RNSC_ERR_INVAL;
	if ((uint64_t)payload_len > RNSC_TL_MAX_PAYLOAD)
		return RNSC_ERR_RANGE;
	memset(h, 0, sizeof(*h));
	h->version = RNSC_TL_VERSION;
	h->algo = (uint8_t)algo;
	h->mode = (uint8_t)mode;
	h->checkpoint_interval = interval;
	h->steps = steps;
	h->ct_len = rnsc_timelock_ct_len(payload_len);
	h->rate_mhs = rate_mhs;
	if (algo != h->algo || mode != h->mode)
		return RNSC_ERR_RANGE;
	int rc = check_fields(h, NULL);
	if (rc == 0)
		rc = rnsc_random(ctx, h->rx_key, sizeof(h->rx_key));
	if (rc == 0)
		rc = rnsc_random(ctx, h->seed, sizeof(h->seed));
	return rc;
}

int rnsc_timelock_header_encode(rnsc_ctx *ctx, uint8_t out[RNSC_TL_HEADER_LEN],
				const rnsc_timelock_header *h)
{
	if (!ctx || !out || !h || h->version != RNSC_TL_VERSION)
		return RNSC_ERR_INVAL;
	int rc = check_fields(h, NULL);
	if (rc)
		return rc;
	memset(out, 0, RNSC_TL_HEADER_LEN);
	memcpy(out, RNSC_TL_MAGIC, 8);
	out[OFF_VERSION] = h->version;
	out[OFF_ALGO] = h->algo;
	out[OFF_MODE] = h->mode;
	put32(out + OFF_INTERVAL, h->checkpoint_interval);
	put64(out + OFF_STEPS, h->steps);
	put64(out + OFF_CTLEN, h->ct_len);
	put32(out + OFF_RATE, h->rate_mhs);
	memcpy(out + OFF_KEY, h->rx_key, 32);
	memcpy(out + OFF_SEED, h->seed, 32);
	uint8_t d[32];
	if ((rc = rnsc_sha256(ctx, d, out, OFF_CHECK)) != 0)
		return rc;
	memcpy(out + OFF_CHECK, d, CHECK_LEN);
	return 0;
}

int rnsc_timelock_header_decode(rnsc_ctx *ctx, rnsc_timelock_header *h, const uint8_t *buf,
				size_t len, const char **why)
{
	const char *dummy;
	if (!why)
		why = &dummy;
	*why = NULL;
	if (!ctx || !h || (len && !buf))
		return RNSC_ERR_INVAL;
	/* The magic first, so a file of another kind is named as such even when it is short. */
	if (len < 8 || memcmp(buf, RNSC_TL_MAGIC, 8) != 0) {
		if (len < 8 && memcmp(buf, RNSC_TL_MAGIC, len) == 0) {
			*why = "file ends inside the header";
			return RNSC_ERR_TRUNCATED;
		}
		*why = "not an rnsc timelock file (bad magic)";
		return RNSC_ERR_MALFORMED;
	}
	if (len < RNSC_TL_HEADER_LEN) {
		*why = "file ends inside the header";
		return RNSC_ERR_TRUNCATED;
	}
	/* The version before the check: a newer format may lay out (and check) its header
	 * differently, and "made by a newer rnsc" is the useful message then. */
	if (buf[OFF_VERSION] != RNSC_TL_VERSION) {
		*why = "timelock format version not supported by this rnsc";
		return RNSC_ERR_VERSION;
	}
	uint8_t d[32];
	int rc = rnsc_sha256(ctx, d, buf, OFF_CHECK);
	if (rc)
		return rc;
	if (rnsc_ct_memcmp(d, buf + OFF_CHECK, CHECK_LEN) != 0) {
		*why = "header check mismatch (the header was changed or corrupted)";
		return RNSC_ERR_MALFORMED;
	}
	if (buf[OFF_RES1] != 0 || get32(buf + OFF_RES2) != 0) {
		*why = "reserved header bytes are not zero";
		return RNSC_ERR_MALFORMED;
	}
	rnsc_timelock_header t;
	memset(&t, 0, sizeof(t));
	t.version = buf[OFF_VERSION];
	t.algo = buf[OFF_ALGO];
	t.mode = buf[OFF_MODE];
	t.checkpoint_interval = get32(buf + OFF_INTERVAL);
	t.steps = get64(buf + OFF_STEPS);
	t.ct_len = get64(buf + OFF_CTLEN);
	t.rate_mhs = get32(buf + OFF_RATE);
	memcpy(t.rx_key, buf + OFF_KEY, 32);
	memcpy(t.seed, buf + OFF_SEED, 32);
	if ((rc = check_fields(&t, why)) != 0)
		return rc;
	*h = t;
	return 0;
}

void rnsc_timelock_step_input(uint8_t in[RNSC_TL_STEP_INPUT_LEN], const uint8_t prev[32],
			      uint32_t i, const uint8_t context[32])
{
	memmove(in, prev, 32);
	put32(in + 32, i);
	memcpy(in + 36, context, 32);
}

int rnsc_timelock_chain_init(rnsc_ctx *ctx, rnsc_timelock_chain *c,
			     const uint8_t header[RNSC_TL_HEADER_LEN],
			     const rnsc_timelock_header *h)
{
	if (!ctx || !c || !header || !h)
		return RNSC_ERR_INVAL;
	memset(c, 0, sizeof(*c));
	uint8_t buf[sizeof(ctx_label) - 1 + OFF_CHECK];
	memcpy(buf, ctx_label, sizeof(ctx_label) - 1);
	memcpy(buf + sizeof(ctx_label) - 1, header, OFF_CHECK);
	int rc = rnsc_sha256(ctx, c->context, buf, sizeof(buf));
	if (rc == 0)
		rc = rnsc_sha256(ctx, c->header_hash, header, RNSC_TL_HEADER_LEN);
	if (rc)
		return rc;
	memcpy(c->x, h->seed, 32);
	c->pos = 0;
	c->steps = h->steps;
	return 0;
}

int rnsc_timelock_chain_run(rnsc_timelock_chain *c, rnsc_randomx *rx, uint64_t max_steps,
			    uint64_t every, rnsc_timelock_progress_fn progress, void *ud)
{
	if (!c || !rx || c->pos > c->steps || c->steps > RNSC_TL_MAX_STEPS)
		return RNSC_ERR_INVAL;
	uint64_t end = c->steps;
	if (max_steps && max_steps < end - c->pos)
		end = c->pos + max_steps;
	uint8_t in[RNSC_TL_STEP_INPUT_LEN];
	int rc = 0;
	while (c->pos < end) {
		/* One worker, no pipelining: each input needs the output just computed. */
		rnsc_timelock_step_input(in, c->x, (uint32_t)c->pos, c->context);
		if ((rc = rnsc_randomx_hash(rx, c->x, in, sizeof(in))) != 0)
			break;
		c->pos++;
		if (progress && ((every && c->pos % every == 0) || c->pos == end) &&
		    progress(ud, c->pos, c->steps))
			break;
	}
	rnsc_memzero(in, sizeof(in));
	return rc;
}

/* mac_key || enc_key from the chain end, salted with the header so keys are per file. */
static int derive_keys(rnsc_ctx *ctx, uint8_t okm[64], const uint8_t *header,
		       const rnsc_timelock_chain *c)
{
	uint8_t salt[32];
	int rc = rnsc_sha256(ctx, salt, header, RNSC_TL_HEADER_LEN);
	if (rc == 0)
		rc = rnsc_hkdf_sha256(ctx, okm, 64, c->x, 32, salt, sizeof(salt),
				      (const uint8_t *)key_label, sizeof(key_label) - 1);
	return rc;
}

int rnsc_timelock_seal(rnsc_ctx *ctx, uint8_t *out, size_t cap,
		       const uint8_t header[RNSC_TL_HEADER_LEN], const rnsc_timelock_chain *c,
		       const uint8_t *payload, size_t len)
{
	if (!ctx || !out || !header || !c || (len && !payload))
		return RNSC_ERR_INVAL;
	rnsc_timelock_header h;
	int rc = rnsc_timelock_header_decode(ctx, &h, header, RNSC_TL_HEADER_LEN, NULL);
	if (rc)
		return RNSC_ERR_INVAL;
	if (h.ct_len != rnsc_timelock_ct_len(len))
		return RNSC_ERR_INVAL;
	if (c->pos != c->steps || c->steps != h.steps)
		return RNSC_ERR_STATE;
	uint64_t total = rnsc_timelock_file_len(&h);
	if (total > cap || total > (uint64_t)INT32_MAX)
		return RNSC_ERR_BUFSIZE;
	uint8_t okm[64];
	if ((rc = derive_keys(ctx, okm, header, c)) != 0)
		return rc;
	memmove(out, header, RNSC_TL_HEADER_LEN);
	uint8_t *iv = out + RNSC_TL_HEADER_LEN, *ct = iv + RNSC_TL_IV_LEN;
	rc = rnsc_random(ctx, iv, RNSC_TL_IV_LEN);
	int plen = rc ? rc : rnsc_pkcs7_pad(ct, (size_t)h.ct_len, payload, len);
	if (plen < 0)
		rc = plen;
	if (rc == 0)
		rc = rnsc_aes256_cbc_encrypt(ctx, ct, okm + 32, iv, ct, (size_t)plen);
	if (rc == 0)
		rc = rnsc_hmac_sha256(ctx, ct + plen, okm, 32, out,
				      RNSC_TL_HEADER_LEN + RNSC_TL_IV_LEN + (size_t)plen);
	rnsc_memzero(okm, sizeof(okm));
	if (rc) {
		rnsc_memzero(out, (size_t)total);
		return rc;
	}
	return (int)total;
}

int rnsc_timelock_open(rnsc_ctx *ctx, uint8_t *out, size_t cap, const uint8_t *file, size_t len,
		       const rnsc_timelock_chain *c)
{
	if (!ctx || !out || !file || !c)
		return RNSC_ERR_INVAL;
	rnsc_timelock_header h;
	int rc = rnsc_timelock_header_decode(ctx, &h, file, len, NULL);
	if (rc)
		return rc;
	uint64_t total = rnsc_timelock_file_len(&h);
	if (len < total)
		return RNSC_ERR_TRUNCATED;
	if (len > total)
		return RNSC_ERR_MALFORMED;
	if (c->pos != c->steps || c->steps != h.steps)
		return RNSC_ERR_STATE;
	if (cap < h.ct_len)
		return RNSC_ERR_BUFSIZE;
	uint8_t okm[64], mac[32];
	if ((rc = derive_keys(ctx, okm, file, c)) != 0)
		return rc;
	const size_t body = RNSC_TL_HEADER_LEN + RNSC_TL_IV_LEN + (size_t)h.ct_len;
	rc = rnsc_hmac_sha256(ctx, mac, okm, 32, file, body);
	/* Authenticate before decrypting anything: no padding oracle, no unauthenticated output. */
	if (rc == 0 && rnsc_ct_memcmp(mac, file + body, RNSC_TL_TAG_LEN) != 0)
		rc = RNSC_ERR_AUTH;
	if (rc) {
		rnsc_memzero(okm, sizeof(okm));
		return rc; /* out untouched */
	}
	rc = rnsc_aes256_cbc_decrypt(ctx, out, okm + 32, file + RNSC_TL_HEADER_LEN,
				     file + RNSC_TL_HEADER_LEN + RNSC_TL_IV_LEN, (size_t)h.ct_len);
	rnsc_memzero(okm, sizeof(okm));
	int n = rc ? rc : rnsc_pkcs7_unpad_len(out, (size_t)h.ct_len);
	if (n < 0) {
		rnsc_memzero(out, (size_t)h.ct_len);
		return n;
	}
	rnsc_memzero(out + n, (size_t)h.ct_len - (size_t)n);
	return n;
}

int rnsc_timelock_checkpoint_encode(rnsc_ctx *ctx, uint8_t out[RNSC_TL_CKPT_LEN],
				    const rnsc_timelock_chain *c)
{
	if (!ctx || !out || !c)
		return RNSC_ERR_INVAL;
	memcpy(out, RNSC_TL_CKPT_MAGIC, 8);
	memcpy(out + 8, c->header_hash, 32);
	put64(out + 40, c->pos);
	memcpy(out + 48, c->x, 32);
	uint8_t d[32];
	int rc = rnsc_sha256(ctx, d, out, 80);
	if (rc)
		return rc;
	memcpy(out + 80, d, 16);
	return 0;
}

int rnsc_timelock_checkpoint_decode(rnsc_ctx *ctx, rnsc_timelock_chain *c, const uint8_t *buf,
				    size_t len)
{
	if (!ctx || !c || (len && !buf))
		return RNSC_ERR_INVAL;
	if (len < RNSC_TL_CKPT_LEN)
		return RNSC_ERR_TRUNCATED;
	if (len > RNSC_TL_CKPT_LEN || memcmp(buf, RNSC_TL_CKPT_MAGIC, 8) != 0)
		return RNSC_ERR_MALFORMED;
	uint8_t d[32];
	int rc = rnsc_sha256(ctx, d, buf, 80);
	if (rc)
		return rc;
	if (rnsc_ct_memcmp(d, buf + 80, 16) != 0)
		return RNSC_ERR_MALFORMED;
	if (memcmp(buf + 8, c->header_hash, 32) != 0)
		return RNSC_ERR_NOTFOUND;
	uint64_t pos = get64(buf + 40);
	if (pos > c->steps)
		return RNSC_ERR_RANGE;
	c->pos = pos;
	memcpy(c->x, buf + 48, 32);
	return 0;
}
