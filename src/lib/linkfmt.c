/* SPDX-License-Identifier: MIT */
#include "linkfmt.h"

#include <string.h>

#include "crypto.h"
#include "msgpack.h"
#include "packet.h"

int rnsc_link_mode_enabled(int mode)
{
	return mode == RNSC_LINK_MODE_AES256_CBC;
}

const char *rnsc_link_mode_name(int mode)
{
	static const char *const n[] = {"AES128_CBC",    "AES256_CBC",    "AES256_GCM",
					"OTP_RESERVED",  "PQ_RESERVED_1", "PQ_RESERVED_2",
					"PQ_RESERVED_3", "PQ_RESERVED_4"};
	return mode >= 0 && mode < 8 ? n[mode] : NULL;
}

int rnsc_link_signalling(uint8_t out[RNSC_LINK_MTU_SIZE], uint32_t mtu, int mode)
{
	if (!out)
		return RNSC_ERR_INVAL;
	if (!rnsc_link_mode_enabled(mode))
		return RNSC_ERR_LINK_MODE;
	if (mtu > RNSC_LINK_MTU_BYTEMASK)
		return RNSC_ERR_RANGE;
	uint32_t v = mtu | ((((uint32_t)mode << 5) & RNSC_LINK_MODE_BYTEMASK) << 16);
	out[0] = (uint8_t)(v >> 16);
	out[1] = (uint8_t)(v >> 8);
	out[2] = (uint8_t)v;
	return 0;
}

void rnsc_link_signalling_decode(const uint8_t in[RNSC_LINK_MTU_SIZE], uint32_t *mtu, int *mode)
{
	uint32_t v = ((uint32_t)in[0] << 16) | ((uint32_t)in[1] << 8) | in[2];
	if (mtu)
		*mtu = v & RNSC_LINK_MTU_BYTEMASK;
	if (mode)
		*mode = (in[0] & RNSC_LINK_MODE_BYTEMASK) >> 5;
}

int rnsc_link_request_build(uint8_t *out, size_t cap, const uint8_t x25519_pub[32],
			    const uint8_t ed25519_pub[32], int signal, uint32_t mtu, int mode)
{
	if (!out || !x25519_pub || !ed25519_pub)
		return RNSC_ERR_INVAL;
	size_t n = RNSC_LINK_ECPUBSIZE + (signal ? RNSC_LINK_MTU_SIZE : 0);
	uint8_t sig[RNSC_LINK_MTU_SIZE];
	if (signal) {
		int rc = rnsc_link_signalling(sig, mtu, mode);
		if (rc)
			return rc;
	}
	if (cap < n)
		return RNSC_ERR_BUFSIZE;
	memcpy(out, x25519_pub, 32);
	memcpy(out + 32, ed25519_pub, 32);
	if (signal)
		memcpy(out + RNSC_LINK_ECPUBSIZE, sig, RNSC_LINK_MTU_SIZE);
	return (int)n;
}

int rnsc_link_request_parse(rnsc_link_request *r, const uint8_t *data, size_t len)
{
	if (!r || (!data && len))
		return RNSC_ERR_INVAL;
	memset(r, 0, sizeof(*r));
	if (len != RNSC_LINK_ECPUBSIZE && len != RNSC_LINK_ECPUBSIZE + RNSC_LINK_MTU_SIZE)
		return RNSC_ERR_MALFORMED;
	r->x25519_pub = data;
	r->ed25519_pub = data + 32;
	r->mtu = RNSC_MTU;
	r->mode = RNSC_LINK_MODE_DEFAULT;
	if (len > RNSC_LINK_ECPUBSIZE) {
		uint32_t mtu;
		r->has_signalling = 1;
		rnsc_link_signalling_decode(data + RNSC_LINK_ECPUBSIZE, &mtu, &r->mode);
		if (mtu)
			r->mtu = mtu;
	}
	/* The reference accepts the request, then fails to sign its proof for a mode it has not
	 * enabled and drops the link; refuse it up front. */
	if (!rnsc_link_mode_enabled(r->mode))
		return RNSC_ERR_LINK_MODE;
	return 0;
}

/* link_id || x25519_pub || ed25519_pub [|| signalling] */
static size_t proof_signed(uint8_t *b, const uint8_t *link_id, const uint8_t *x_pub,
			   const uint8_t *ed_pub, const uint8_t *signalling)
{
	memcpy(b, link_id, RNSC_TRUNCATED_HASHLEN);
	memcpy(b + 16, x_pub, 32);
	memcpy(b + 48, ed_pub, 32);
	if (!signalling)
		return 80;
	memcpy(b + 80, signalling, RNSC_LINK_MTU_SIZE);
	return 80 + RNSC_LINK_MTU_SIZE;
}

int rnsc_link_proof_build(uint8_t *out, size_t cap, const rnsc_identity *dest_identity,
			  const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
			  const uint8_t x25519_pub[32], int signal, uint32_t mtu, int mode)
{
	if (!out || !dest_identity || !link_id || !x25519_pub)
		return RNSC_ERR_INVAL;
	if (!dest_identity->has_private)
		return RNSC_ERR_NOKEY;
	uint8_t sig_bytes[RNSC_LINK_MTU_SIZE];
	if (signal) {
		int rc = rnsc_link_signalling(sig_bytes, mtu, mode);
		if (rc)
			return rc;
	}
	size_t n = RNSC_LINK_PROOF_LEN + (signal ? RNSC_LINK_MTU_SIZE : 0);
	if (cap < n)
		return RNSC_ERR_BUFSIZE;
	uint8_t sd[83];
	size_t sn = proof_signed(sd, link_id, x25519_pub, dest_identity->ed_pub,
				 signal ? sig_bytes : NULL);
	int rc = rnsc_identity_sign(dest_identity, out, sd, sn);
	if (rc)
		return rc;
	memcpy(out + RNSC_SIGLEN, x25519_pub, 32);
	if (signal)
		memcpy(out + RNSC_LINK_PROOF_LEN, sig_bytes, RNSC_LINK_MTU_SIZE);
	return (int)n;
}

int rnsc_link_proof_validate(rnsc_ctx *ctx, rnsc_link_proof *p, const uint8_t *data, size_t len,
			     const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
			     const uint8_t dest_ed25519_pub[32], int expected_mode)
{
	if (!p || (!data && len) || !link_id || !dest_ed25519_pub)
		return RNSC_ERR_INVAL;
	memset(p, 0, sizeof(*p));
	if (len != RNSC_LINK_PROOF_LEN && len != RNSC_LINK_PROOF_LEN + RNSC_LINK_MTU_SIZE)
		return RNSC_ERR_MALFORMED;
	p->signature = data;
	p->x25519_pub = data + RNSC_SIGLEN;
	p->mtu = RNSC_MTU;
	p->mode = RNSC_LINK_MODE_DEFAULT;
	const uint8_t *signalling = NULL;
	if (len > RNSC_LINK_PROOF_LEN) {
		signalling = data + RNSC_LINK_PROOF_LEN;
		p->has_signalling = 1;
		rnsc_link_signalling_decode(signalling, &p->mtu, &p->mode);
	}
	if (p->mode != expected_mode)
		return RNSC_ERR_LINK_MODE;
	uint8_t sd[83];
	size_t sn = proof_signed(sd, link_id, p->x25519_pub, dest_ed25519_pub, signalling);
	int rc = rnsc_ed25519_verify(ctx, p->signature, dest_ed25519_pub, sd, sn);
	return rc == RNSC_ERR_BADKEY ? RNSC_ERR_SIGNATURE : rc;
}

int rnsc_link_rtt_encode(uint8_t *out, size_t cap, double rtt)
{
	if (!out)
		return RNSC_ERR_INVAL;
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, out, cap);
	rnsc_mp_write_double(&w, rtt);
	return rnsc_mp_writer_finish(&w);
}

int rnsc_link_rtt_decode(const uint8_t *p, size_t len, double *rtt)
{
	if ((!p && len) || !rtt)
		return RNSC_ERR_INVAL;
	rnsc_mp_reader r;
	rnsc_mp_token t;
	rnsc_mp_reader_init(&r, p, len);
	int rc = rnsc_mp_next(&r, &t);
	if (rc)
		return rc;
	switch (t.type) {
	case RNSC_MP_FLOAT64:
		*rtt = t.f64;
		break;
	case RNSC_MP_FLOAT32:
		*rtt = (double)t.f32;
		break;
	case RNSC_MP_UINT:
		*rtt = (double)t.u;
		break;
	case RNSC_MP_INT:
		*rtt = (double)t.i;
		break;
	default:
		return RNSC_ERR_MALFORMED;
	}
	return rnsc_mp_reader_remaining(&r) ? RNSC_ERR_MALFORMED : 0;
}

int rnsc_link_keepalive_parse(const uint8_t *p, size_t len)
{
	if (len != 1 || !p)
		return RNSC_ERR_MALFORMED;
	if (p[0] == RNSC_LINK_KEEPALIVE_REQUEST || p[0] == RNSC_LINK_KEEPALIVE_RESPONSE)
		return p[0];
	return RNSC_ERR_MALFORMED;
}

int rnsc_link_close_check(const uint8_t *p, size_t len,
			  const uint8_t link_id[RNSC_TRUNCATED_HASHLEN])
{
	if ((!p && len) || !link_id)
		return RNSC_ERR_INVAL;
	if (len != RNSC_TRUNCATED_HASHLEN)
		return RNSC_ERR_MALFORMED;
	return memcmp(p, link_id, RNSC_TRUNCATED_HASHLEN) == 0 ? 0 : RNSC_ERR_NOTFOUND;
}

int rnsc_link_identify_build(uint8_t *out, size_t cap, const rnsc_identity *identity,
			     const uint8_t link_id[RNSC_TRUNCATED_HASHLEN])
{
	if (!out || !identity || !link_id)
		return RNSC_ERR_INVAL;
	if (!identity->has_private)
		return RNSC_ERR_NOKEY;
	if (cap < RNSC_LINK_IDENTIFY_LEN)
		return RNSC_ERR_BUFSIZE;
	uint8_t sd[RNSC_TRUNCATED_HASHLEN + RNSC_KEYSIZE];
	memcpy(sd, link_id, RNSC_TRUNCATED_HASHLEN);
	rnsc_identity_public_bytes(identity, sd + RNSC_TRUNCATED_HASHLEN);
	int rc = rnsc_identity_sign(identity, out + RNSC_KEYSIZE, sd, sizeof(sd));
	if (rc)
		return rc;
	memcpy(out, sd + RNSC_TRUNCATED_HASHLEN, RNSC_KEYSIZE);
	return RNSC_LINK_IDENTIFY_LEN;
}

int rnsc_link_identify_validate(rnsc_ctx *ctx, rnsc_identity *who, const uint8_t *p, size_t len,
				const uint8_t link_id[RNSC_TRUNCATED_HASHLEN])
{
	if ((!p && len) || !link_id)
		return RNSC_ERR_INVAL;
	if (len != RNSC_LINK_IDENTIFY_LEN)
		return RNSC_ERR_MALFORMED;
	rnsc_identity id;
	int rc = rnsc_identity_from_public(ctx, &id, p, RNSC_KEYSIZE);
	if (rc)
		return rc;
	uint8_t sd[RNSC_TRUNCATED_HASHLEN + RNSC_KEYSIZE];
	memcpy(sd, link_id, RNSC_TRUNCATED_HASHLEN);
	memcpy(sd + RNSC_TRUNCATED_HASHLEN, p, RNSC_KEYSIZE);
	rc = rnsc_identity_verify(&id, p + RNSC_KEYSIZE, RNSC_SIGLEN, sd, sizeof(sd));
	if (rc == RNSC_ERR_BADKEY)
		rc = RNSC_ERR_SIGNATURE;
	if (rc == 0 && who)
		*who = id;
	return rc;
}
