/* SPDX-License-Identifier: MIT */
#include "ifac.h"

#include <string.h>

#include "crypto.h"
#include "packet.h"

const uint8_t rnsc_ifac_salt[32] = {0xad, 0xf5, 0x4d, 0x88, 0x2c, 0x9a, 0x9b, 0x80,
				    0x77, 0x1e, 0xb4, 0x99, 0x5d, 0x70, 0x2d, 0x4a,
				    0x3e, 0x73, 0x33, 0x91, 0xb2, 0xa0, 0xf5, 0x3f,
				    0x41, 0x6d, 0x9f, 0x90, 0x7e, 0x55, 0xcf, 0xf8};

int rnsc_ifac_hkdf(rnsc_ctx *ctx, uint8_t *out, size_t len, const uint8_t *ikm, size_t ikm_len,
		   const uint8_t *salt, size_t salt_len)
{
	if (!out || len == 0 || !ikm || ikm_len == 0 || (!salt && salt_len))
		return RNSC_ERR_INVAL;
	static const uint8_t zero_salt[32] = {0};
	uint8_t prk[32], block[33];
	if (salt_len == 0) {
		salt = zero_salt;
		salt_len = sizeof(zero_salt);
	}
	int rc = rnsc_hmac_sha256(ctx, prk, salt, salt_len, ikm, ikm_len);
	size_t prev = 0; /* bytes of the previous block in front of the counter */
	for (size_t i = 0, o = 0; rc == 0 && o < len; i++) {
		block[prev] = (uint8_t)(i + 1); /* wraps: block 256 uses counter 0 */
		uint8_t t[32];
		rc = rnsc_hmac_sha256(ctx, t, prk, sizeof(prk), block, prev + 1);
		if (rc)
			break;
		size_t take = len - o < 32 ? len - o : 32;
		memcpy(out + o, t, take);
		o += take;
		memcpy(block, t, 32);
		prev = 32;
	}
	rnsc_memzero(prk, sizeof(prk));
	rnsc_memzero(block, sizeof(block));
	return rc;
}

size_t rnsc_ifac_size_from_bits(long bits)
{
	return bits >= 8 * RNSC_IFAC_MIN_SIZE ? (size_t)bits / 8 : 0;
}

static int hash_str(rnsc_ctx *ctx, uint8_t out[32], const char *s)
{
	return rnsc_sha256(ctx, out, (const uint8_t *)s, strlen(s));
}

int rnsc_ifac_init(rnsc_ifac *ifac, rnsc_ctx *ctx, const char *network_name, const char *passphrase,
		   size_t size)
{
	if (!ifac || !ctx)
		return RNSC_ERR_INVAL;
	memset(ifac, 0, sizeof(*ifac));
	int has_name = network_name && *network_name, has_pass = passphrase && *passphrase;
	if (!has_name && !has_pass)
		return RNSC_ERR_INVAL;
	if (size < RNSC_IFAC_MIN_SIZE || size > RNSC_IFAC_MAX_SIZE)
		return RNSC_ERR_RANGE;
	uint8_t origin[64], origin_hash[32], key_hash[32];
	size_t n = 0;
	int rc = 0;
	if (has_name) {
		rc = hash_str(ctx, origin, network_name);
		n += 32;
	}
	if (rc == 0 && has_pass) {
		rc = hash_str(ctx, origin + n, passphrase);
		n += 32;
	}
	if (rc == 0)
		rc = rnsc_sha256(ctx, origin_hash, origin, n);
	if (rc == 0)
		rc = rnsc_ifac_hkdf(ctx, ifac->key, RNSC_IFAC_KEYLEN, origin_hash, 32,
				    rnsc_ifac_salt, sizeof(rnsc_ifac_salt));
	if (rc == 0)
		rc = rnsc_identity_from_private(ctx, &ifac->identity, ifac->key, RNSC_IFAC_KEYLEN);
	if (rc == 0)
		rc = rnsc_sha256(ctx, key_hash, ifac->key, RNSC_IFAC_KEYLEN);
	if (rc == 0)
		rc = rnsc_identity_sign(&ifac->identity, ifac->signature, key_hash, 32);
	rnsc_memzero(origin, sizeof(origin));
	rnsc_memzero(origin_hash, sizeof(origin_hash));
	if (rc) {
		rnsc_ifac_free(ifac);
		return rc;
	}
	ifac->ctx = ctx;
	ifac->size = size;
	return 0;
}

void rnsc_ifac_free(rnsc_ifac *ifac)
{
	if (!ifac)
		return;
	rnsc_identity_free(&ifac->identity);
	rnsc_memzero(ifac, sizeof(*ifac));
}

/* The last `size` bytes of the IFAC identity's signature over packet p. */
static int make_code(const rnsc_ifac *ifac, uint8_t *code, const uint8_t *p, size_t len)
{
	uint8_t sig[RNSC_SIGLEN];
	int rc = rnsc_identity_sign(&ifac->identity, sig, p, len);
	if (rc == 0)
		memcpy(code, sig + RNSC_SIGLEN - ifac->size, ifac->size);
	return rc;
}

int rnsc_ifac_apply(const rnsc_ifac *ifac, uint8_t *out, size_t cap, const uint8_t *raw, size_t len)
{
	if (!ifac || !ifac->ctx || !out || (!raw && len))
		return RNSC_ERR_INVAL;
	if (len < 2)
		return RNSC_ERR_TRUNCATED;
	if (raw[0] & RNSC_PACKET_IFAC_FLAG)
		return RNSC_ERR_MALFORMED;
	size_t size = ifac->size, total = len + size;
	if (total < len || total > (size_t)INT32_MAX)
		return RNSC_ERR_TOOBIG;
	if (cap < total)
		return RNSC_ERR_BUFSIZE;
	uint8_t code[RNSC_IFAC_MAX_SIZE];
	int rc = make_code(ifac, code, raw, len);
	/* The mask goes straight into out and the frame is XORed onto it. */
	if (rc == 0)
		rc = rnsc_ifac_hkdf(ifac->ctx, out, total, code, size, ifac->key, RNSC_IFAC_KEYLEN);
	if (rc)
		return rc;
	out[0] = (uint8_t)((out[0] ^ raw[0]) | RNSC_PACKET_IFAC_FLAG);
	out[1] ^= raw[1];
	memcpy(out + 2, code, size);
	for (size_t i = 2; i < len; i++)
		out[i + size] ^= raw[i];
	return (int)total;
}

static int count(rnsc_ifac_stats *stats, uint64_t *which, int rc)
{
	if (stats) {
		(*which)++;
		if (which != &stats->runts)
			stats->violations++;
	}
	return rc;
}

int rnsc_ifac_check(const rnsc_ifac *ifac, rnsc_ifac_stats *stats, uint8_t *out, size_t cap,
		    const uint8_t *frame, size_t len)
{
	rnsc_ifac_stats dummy;
	if (!stats) {
		memset(&dummy, 0, sizeof(dummy));
		stats = &dummy;
	}
	if (!out || (!frame && len) || (ifac && !ifac->ctx))
		return RNSC_ERR_INVAL;
	if (len > (size_t)INT32_MAX)
		return RNSC_ERR_TOOBIG;
	if (len <= 2)
		return count(stats, &stats->runts, RNSC_ERR_TRUNCATED);
	int flagged = (frame[0] & RNSC_PACKET_IFAC_FLAG) != 0;
	if (!ifac) {
		if (flagged)
			return count(stats, &stats->unexpected, RNSC_ERR_IFAC_UNEXPECTED);
		if (cap < len)
			return RNSC_ERR_BUFSIZE;
		memcpy(out, frame, len);
		stats->accepted++;
		return (int)len;
	}
	if (!flagged)
		return count(stats, &stats->missing, RNSC_ERR_IFAC_MISSING);
	size_t size = ifac->size;
	if (len <= 2 + size)
		return count(stats, &stats->too_short, RNSC_ERR_IFAC);
	if (cap < len)
		return RNSC_ERR_BUFSIZE;
	const uint8_t *code = frame + 2;
	int rc = rnsc_ifac_hkdf(ifac->ctx, out, len, code, size, ifac->key, RNSC_IFAC_KEYLEN);
	if (rc)
		return rc;
	out[0] = (uint8_t)((out[0] ^ frame[0]) & (uint8_t)~RNSC_PACKET_IFAC_FLAG);
	out[1] ^= frame[1];
	/* In place and upwards: mask byte i is read before out[i] is overwritten as packet byte
	 * i - size (the mask bytes under the code are never used). */
	for (size_t i = 2 + size; i < len; i++)
		out[i - size] = out[i] ^ frame[i];
	size_t n = len - size;
	uint8_t expect[RNSC_IFAC_MAX_SIZE];
	rc = make_code(ifac, expect, out, n);
	if (rc)
		return rc;
	if (rnsc_ct_memcmp(expect, code, size) != 0)
		return count(stats, &stats->bad_code, RNSC_ERR_IFAC);
	stats->accepted++;
	return (int)n;
}
