/* SPDX-License-Identifier: MIT */
#include "destination.h"

#include <stdio.h>
#include <string.h>

#include "crypto.h"

static int append(char *out, size_t cap, size_t *pos, const char *s, size_t n)
{
	if (*pos + n + 1 > cap)
		return RNSC_ERR_BUFSIZE;
	memcpy(out + *pos, s, n);
	*pos += n;
	out[*pos] = '\0';
	return 0;
}

int rnsc_destination_expand_name(char *out, size_t cap, const uint8_t *identity_hash,
				 const char *app_name, const char *const *aspects, size_t n_aspects)
{
	if (!out || !app_name || (n_aspects && !aspects))
		return RNSC_ERR_INVAL;
	if (strchr(app_name, '.'))
		return RNSC_ERR_NAME;
	size_t pos = 0;
	if (cap == 0)
		return RNSC_ERR_BUFSIZE;
	out[0] = '\0';
	int rc = append(out, cap, &pos, app_name, strlen(app_name));
	for (size_t i = 0; rc == 0 && i < n_aspects; i++) {
		if (strchr(aspects[i], '.'))
			return RNSC_ERR_NAME;
		rc = append(out, cap, &pos, ".", 1);
		if (rc == 0)
			rc = append(out, cap, &pos, aspects[i], strlen(aspects[i]));
	}
	if (rc == 0 && identity_hash) {
		char hex[2 * RNSC_TRUNCATED_HASHLEN + 2];
		hex[0] = '.';
		for (size_t i = 0; i < RNSC_TRUNCATED_HASHLEN; i++)
			snprintf(hex + 1 + 2 * i, 3, "%02x", identity_hash[i]);
		rc = append(out, cap, &pos, hex, sizeof(hex) - 1);
	}
	return rc ? rc : (int)pos;
}

/* Names are hashed as UTF-8 without a length limit; hash straight from the parts so no
 * buffer bounds the name. */
static int name_hash_parts(rnsc_ctx *ctx, uint8_t out[RNSC_NAME_HASHLEN], const char *app_name,
			   const char *const *aspects, size_t n_aspects)
{
	if (!app_name || (n_aspects && !aspects))
		return RNSC_ERR_INVAL;
	if (strchr(app_name, '.'))
		return RNSC_ERR_NAME;
	for (size_t i = 0; i < n_aspects; i++)
		if (!aspects[i] || strchr(aspects[i], '.'))
			return RNSC_ERR_NAME;
	rnsc_hash h;
	int rc = rnsc_hash_init(ctx, &h, RNSC_HASH_SHA256);
	if (rc)
		return rc;
	rc = rnsc_hash_update(&h, (const uint8_t *)app_name, strlen(app_name));
	for (size_t i = 0; rc == 0 && i < n_aspects; i++) {
		rc = rnsc_hash_update(&h, (const uint8_t *)".", 1);
		if (rc == 0)
			rc = rnsc_hash_update(&h, (const uint8_t *)aspects[i], strlen(aspects[i]));
	}
	uint8_t full[RNSC_HASHLEN];
	if (rc) {
		rnsc_hash_abort(&h);
		return rc;
	}
	rc = rnsc_hash_final(&h, full);
	if (rc == 0)
		memcpy(out, full, RNSC_NAME_HASHLEN);
	return rc;
}

int rnsc_name_hash(rnsc_ctx *ctx, uint8_t out[RNSC_NAME_HASHLEN], const char *app_name,
		   const char *const *aspects, size_t n_aspects)
{
	return name_hash_parts(ctx, out, app_name, aspects, n_aspects);
}

int rnsc_destination_hash(rnsc_ctx *ctx, uint8_t out[RNSC_TRUNCATED_HASHLEN],
			  const uint8_t *identity_hash, const char *app_name,
			  const char *const *aspects, size_t n_aspects)
{
	uint8_t material[RNSC_NAME_HASHLEN + RNSC_TRUNCATED_HASHLEN];
	int rc = name_hash_parts(ctx, material, app_name, aspects, n_aspects);
	if (rc)
		return rc;
	size_t n = RNSC_NAME_HASHLEN;
	if (identity_hash) {
		memcpy(material + n, identity_hash, RNSC_TRUNCATED_HASHLEN);
		n += RNSC_TRUNCATED_HASHLEN;
	}
	return rnsc_truncated_hash(ctx, out, material, n);
}

int rnsc_destination_hash_from_name(rnsc_ctx *ctx, uint8_t out[RNSC_TRUNCATED_HASHLEN],
				    const uint8_t *identity_hash, const char *full_name)
{
	/* Splitting on dots and re-joining gives back full_name, so hash it whole. */
	if (!full_name)
		return RNSC_ERR_INVAL;
	uint8_t material[RNSC_NAME_HASHLEN + RNSC_TRUNCATED_HASHLEN];
	uint8_t full[RNSC_HASHLEN];
	int rc = rnsc_sha256(ctx, full, (const uint8_t *)full_name, strlen(full_name));
	if (rc)
		return rc;
	memcpy(material, full, RNSC_NAME_HASHLEN);
	size_t n = RNSC_NAME_HASHLEN;
	if (identity_hash) {
		memcpy(material + n, identity_hash, RNSC_TRUNCATED_HASHLEN);
		n += RNSC_TRUNCATED_HASHLEN;
	}
	return rnsc_truncated_hash(ctx, out, material, n);
}

#define LINK_ECPUBSIZE 64 /* X25519 + Ed25519 public keys in a link request */

int rnsc_link_id_from_request(rnsc_ctx *ctx, uint8_t out[RNSC_TRUNCATED_HASHLEN],
			      const uint8_t *raw, size_t len)
{
	if (!raw || len < 2)
		return RNSC_ERR_TRUNCATED;
	int header2 = (raw[0] & 0x40) != 0;
	size_t addr = header2 ? 2 * RNSC_TRUNCATED_HASHLEN : RNSC_TRUNCATED_HASHLEN;
	size_t data_off = 2 + addr + 1; /* flags, hops, addresses, context */
	if (len < data_off + LINK_ECPUBSIZE)
		return RNSC_ERR_TRUNCATED;
	/* Hashable part: low flag nibble, then everything after the transport id (if any),
	 * minus the signalling bytes beyond the two public keys. */
	size_t skip = header2 ? 2 + RNSC_TRUNCATED_HASHLEN : 2;
	size_t data_len = len - data_off;
	size_t tail = data_len > LINK_ECPUBSIZE ? data_len - LINK_ECPUBSIZE : 0;
	rnsc_hash h;
	uint8_t full[RNSC_HASHLEN];
	uint8_t first = raw[0] & 0x0f;
	int rc = rnsc_hash_init(ctx, &h, RNSC_HASH_SHA256);
	if (rc)
		return rc;
	rc = rnsc_hash_update(&h, &first, 1);
	if (rc == 0)
		rc = rnsc_hash_update(&h, raw + skip, len - skip - tail);
	if (rc) {
		rnsc_hash_abort(&h);
		return rc;
	}
	rc = rnsc_hash_final(&h, full);
	if (rc == 0)
		memcpy(out, full, RNSC_TRUNCATED_HASHLEN);
	return rc;
}
