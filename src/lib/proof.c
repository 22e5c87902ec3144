/* SPDX-License-Identifier: MIT */
#include "proof.h"

#include <string.h>

#include "crypto.h"
#include "destination.h"

void rnsc_proof_destination(uint8_t out[RNSC_TRUNCATED_HASHLEN],
			    const uint8_t packet_hash[RNSC_HASHLEN])
{
	memcpy(out, packet_hash, RNSC_TRUNCATED_HASHLEN);
}

int rnsc_proof_build(uint8_t *out, size_t cap, const rnsc_identity *signer,
		     const uint8_t packet_hash[RNSC_HASHLEN], int implicit)
{
	if (!out || !signer || !packet_hash)
		return RNSC_ERR_INVAL;
	size_t n = implicit ? RNSC_PROOF_IMPLICIT_LEN : RNSC_PROOF_EXPLICIT_LEN;
	if (cap < n)
		return RNSC_ERR_BUFSIZE;
	uint8_t sig[RNSC_SIGLEN];
	int rc = rnsc_identity_sign(signer, sig, packet_hash, RNSC_HASHLEN);
	if (rc)
		return rc;
	if (!implicit)
		memcpy(out, packet_hash, RNSC_HASHLEN);
	memcpy(out + (implicit ? 0 : RNSC_HASHLEN), sig, RNSC_SIGLEN);
	return (int)n;
}

void rnsc_proof_packet(rnsc_packet *p, const uint8_t packet_hash[RNSC_HASHLEN],
		       const uint8_t *proof, size_t len)
{
	memset(p, 0, sizeof(*p));
	p->header_type = RNSC_HEADER_1;
	p->transport_type = RNSC_TRANSPORT_BROADCAST;
	p->packet_type = RNSC_PKT_PROOF;
	p->dest_type = RNSC_DEST_SINGLE;
	p->context = RNSC_CTX_NONE;
	rnsc_proof_destination(p->dest_hash, packet_hash);
	p->data = proof;
	p->data_len = len;
}

static int signature_verdict(int rc)
{
	/* a key the backend refuses to decode verifies nothing */
	return rc == RNSC_ERR_BADKEY ? RNSC_ERR_SIGNATURE : rc;
}

int rnsc_proof_validate(const rnsc_identity *signer, const uint8_t packet_hash[RNSC_HASHLEN],
			const uint8_t *proof, size_t len)
{
	if (!signer || !packet_hash || (!proof && len))
		return RNSC_ERR_INVAL;
	const uint8_t *sig;
	if (len == RNSC_PROOF_EXPLICIT_LEN) {
		if (memcmp(proof, packet_hash, RNSC_HASHLEN) != 0)
			return RNSC_ERR_PROOF_HASH;
		sig = proof + RNSC_HASHLEN;
	} else if (len == RNSC_PROOF_IMPLICIT_LEN) {
		sig = proof;
	} else {
		return RNSC_ERR_MALFORMED;
	}
	return signature_verdict(
		rnsc_identity_verify(signer, sig, RNSC_SIGLEN, packet_hash, RNSC_HASHLEN));
}

int rnsc_proof_build_link(rnsc_ctx *ctx, uint8_t *out, size_t cap, const uint8_t sig_seed[32],
			  const uint8_t sig_pub[32], const uint8_t packet_hash[RNSC_HASHLEN])
{
	if (!out || !sig_seed || !sig_pub || !packet_hash)
		return RNSC_ERR_INVAL;
	if (cap < RNSC_PROOF_EXPLICIT_LEN)
		return RNSC_ERR_BUFSIZE;
	int rc = rnsc_ed25519_sign(ctx, out + RNSC_HASHLEN, sig_seed, sig_pub, packet_hash,
				   RNSC_HASHLEN);
	if (rc)
		return rc;
	memcpy(out, packet_hash, RNSC_HASHLEN);
	return RNSC_PROOF_EXPLICIT_LEN;
}

int rnsc_proof_validate_link(rnsc_ctx *ctx, const uint8_t peer_sig_pub[32],
			     const uint8_t packet_hash[RNSC_HASHLEN], const uint8_t *proof,
			     size_t len)
{
	if (!peer_sig_pub || !packet_hash || (!proof && len))
		return RNSC_ERR_INVAL;
	if (len != RNSC_PROOF_EXPLICIT_LEN)
		return RNSC_ERR_MALFORMED;
	if (memcmp(proof, packet_hash, RNSC_HASHLEN) != 0)
		return RNSC_ERR_PROOF_HASH;
	return signature_verdict(rnsc_ed25519_verify(ctx, proof + RNSC_HASHLEN, peer_sig_pub,
						     packet_hash, RNSC_HASHLEN));
}
