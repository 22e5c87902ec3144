/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the resource advertisement parser (src/lib/resource_adv.c) and the
 * receiving side of a resource (src/lib/resource.c) fed hostile packets.
 *
 * Input: len(2, big-endian) || advertisement plaintext (len bytes) || packets, each
 * context(1) || length(2) || data. Checked beyond "no crash, no UB, no leak": the parser
 * returns only documented codes; an accepted advertisement packs back (with its own map
 * hashes) to bytes that parse to the same fields; a receiver accepted from it takes any
 * sequence of parts, hashmap updates, cancels and ticks without writing more than the
 * segment's decompression limit, and a part never completes it with data that fails the
 * hash (nothing is written unless the hash matched).
 */
#include "fuzz_wire.h"

#include "packet.h"
#include "resource.h"
#include "token.h"

static rnsc_token tok;
static size_t written;

static int f_send(void *ud, int type, int context, const uint8_t *d, size_t len)
{
	(void)ud, (void)type, (void)context, (void)d;
	return (int)len + 19;
}
static int f_encrypt(void *ud, uint8_t *out, size_t cap, const uint8_t *pt, size_t len)
{
	(void)ud;
	return rnsc_token_encrypt(&tok, out, cap, pt, len);
}
static int f_decrypt(void *ud, uint8_t *out, size_t cap, const uint8_t *ct, size_t len)
{
	(void)ud;
	return rnsc_token_decrypt(&tok, out, cap, ct, len);
}
static int f_write(void *ud, const uint8_t *p, size_t len)
{
	(void)ud, (void)p;
	written += len;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rnsc_ctx *ctx = fuzz_ctx();
	static int init;
	if (!init) {
		uint8_t key[64] = {1};
		FUZZ_CHECK(rnsc_token_init(&tok, ctx, key, sizeof(key)) == 0);
		init = 1;
	}
	if (size < 2)
		return 0;
	size_t alen = (size_t)data[0] << 8 | data[1];
	if (alen > size - 2)
		alen = size - 2;
	const uint8_t *adv = data + 2;
	rnsc_resource_adv a;
	int rc = rnsc_resource_adv_unpack(&a, adv, alen);
	FUZZ_CODE(rc, RNSC_ERR_TRUNCATED, RNSC_ERR_MALFORMED, RNSC_ERR_TOOBIG, RNSC_ERR_RANGE);
	if (rc != 0)
		return 0;
	FUZZ_CHECK(a.m_len % 4 == 0 && a.r_len >= 1 && a.r_len <= 32 && a.i >= 1 && a.i <= a.l);
	/* pack what was read (its own map hashes as the whole hashmap) and read it back */
	rnsc_resource_adv b = a;
	b.n = a.m_len / 4;
	uint8_t buf[RNSC_RESOURCE_ADV_MAX_LEN * 64];
	int n = rnsc_resource_adv_pack(&b, 0, buf, sizeof(buf));
	if (n > 0) {
		rnsc_resource_adv c;
		FUZZ_CHECK(rnsc_resource_adv_unpack(&c, buf, (size_t)n) == 0);
		size_t mh =
			b.n < RNSC_RESOURCE_HASHMAP_MAX_LEN ? b.n : RNSC_RESOURCE_HASHMAP_MAX_LEN;
		FUZZ_CHECK(c.t == a.t && c.d == a.d && c.i == a.i && c.l == a.l && c.f == a.f &&
			   c.has_q == a.has_q && c.r_len == a.r_len && !memcmp(c.h, a.h, 32) &&
			   c.m_len == mh * 4 && (!mh || !memcmp(c.m, a.m, mh * 4)));
	} else {
		FUZZ_CHECK(n == RNSC_ERR_BUFSIZE);
	}
	/* a receiver on a small-MTU link, fed the rest as packets */
	rnsc_resource_link link = {.send = f_send,
				   .encrypt = f_encrypt,
				   .decrypt = f_decrypt,
				   .mtu = 500,
				   .rtt = 0.05,
				   .establishment_cost = 287};
	rnsc_resource_callbacks cb = {.write = f_write};
	rnsc_resource *r = NULL;
	written = 0;
	uint64_t now = 1000;
	rc = rnsc_resource_accept(ctx, &r, &link, &cb, NULL, adv, alen, now);
	FUZZ_CODE(rc, RNSC_ERR_MALFORMED, RNSC_ERR_NOMEM);
	if (rc != 0)
		return 0;
	const uint8_t *p = adv + alen, *end = data + size;
	while (end - p >= 3) {
		int context = p[0] % 9;
		size_t len = (size_t)p[1] << 8 | p[2];
		p += 3;
		if (len > (size_t)(end - p))
			len = (size_t)(end - p);
		if (context == 8) {
			now += 50 + (len & 0xFFF) * 10;
			rnsc_resource_tick(r, now);
		} else {
			rc = rnsc_resource_packet(r, RNSC_PKT_DATA, context, p, len, NULL, now);
			FUZZ_CODE(rc, RNSC_ERR_NOTFOUND, RNSC_ERR_MALFORMED);
		}
		p += len;
	}
	FUZZ_CHECK(written <= RNSC_RESOURCE_MAX_DECOMPRESSED);
	if (rnsc_resource_status(r) != RNSC_RESOURCE_COMPLETE)
		FUZZ_CHECK(written == 0);
	rnsc_resource_del(r);
	return 0;
}
