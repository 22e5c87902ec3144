/* SPDX-License-Identifier: MIT */
/*
 * Delivery proofs (mirrors Identity.prove, Link.prove_packet, Packet.ProofDestination and
 * PacketReceipt.validate_proof / validate_link_proof, rns 1.5.4).
 *
 *   explicit proof: packet_hash(32) || Ed25519 signature over packet_hash (64)   = 96 bytes
 *   implicit proof: signature(64)                                                 = 64 bytes
 * A proof for a packet received from a destination goes out as a PROOF packet, HEADER_1,
 * context NONE, destination type SINGLE, addressed to the proof destination: the proved
 * packet's truncated hash (first 16 bytes of its packet hash); its data is not encrypted.
 * The reference sends implicit proofs when its configuration says so (the default in
 * 1.5.4: use_implicit_proof = True) and validates both forms.
 * Over a link the proof is always explicit, signed with the link's own Ed25519 key, sent as a
 * PROOF packet to the LINK destination (the link id), unencrypted; the validating peer checks
 * it with the peer's link signing key.
 *
 * Threading: reentrant.
 */
#ifndef RNSC_PROOF_H
#define RNSC_PROOF_H

#include <stddef.h>
#include <stdint.h>

#include "ctx.h"
#include "identity.h"
#include "packet.h"

#define RNSC_PROOF_EXPLICIT_LEN (RNSC_HASHLEN + RNSC_SIGLEN) /* 96 */
#define RNSC_PROOF_IMPLICIT_LEN RNSC_SIGLEN                  /* 64 */

/* The destination hash a proof for a packet with this packet hash is addressed to. */
RNSC_API void rnsc_proof_destination(uint8_t out[RNSC_TRUNCATED_HASHLEN],
				     const uint8_t packet_hash[RNSC_HASHLEN]);

/* Proof data for packet_hash, signed by signer (private key required); implicit selects the
 * 64-byte form. Returns 96 or 64, RNSC_ERR_INVAL, RNSC_ERR_NOKEY, RNSC_ERR_BUFSIZE, crypto
 * errors. */
RNSC_API int rnsc_proof_build(uint8_t *out, size_t cap, const rnsc_identity *signer,
			      const uint8_t packet_hash[RNSC_HASHLEN], int implicit);

/* Fills p as the proof packet for proof data (borrowed) of a packet with packet_hash:
 * HEADER_1, BROADCAST, PROOF, SINGLE, context NONE, hops 0, addressed to the proof
 * destination. Pack it with rnsc_packet_pack(). */
RNSC_API void rnsc_proof_packet(rnsc_packet *p, const uint8_t packet_hash[RNSC_HASHLEN],
				const uint8_t *proof, size_t len);

/* Receipt validation for a packet sent to a destination whose identity is signer (public part
 * suffices): an explicit proof must name packet_hash and carry a valid signature, an implicit
 * proof must carry a valid signature over packet_hash.
 * Returns 0, RNSC_ERR_MALFORMED (neither 96 nor 64 bytes), RNSC_ERR_PROOF_HASH (explicit proof
 * for another packet), RNSC_ERR_SIGNATURE. */
RNSC_API int rnsc_proof_validate(const rnsc_identity *signer,
				 const uint8_t packet_hash[RNSC_HASHLEN], const uint8_t *proof,
				 size_t len) RNSC_MUST_CHECK;

/* Link packet proof: packet_hash || signature with the link's Ed25519 key (seed and public
 * key). Returns 96 or RNSC_ERR_INVAL / RNSC_ERR_BUFSIZE / crypto errors. */
RNSC_API int rnsc_proof_build_link(rnsc_ctx *ctx, uint8_t *out, size_t cap,
				   const uint8_t sig_seed[32], const uint8_t sig_pub[32],
				   const uint8_t packet_hash[RNSC_HASHLEN]);

/* Validates a link packet proof with the peer's Ed25519 link key. Stricter than the reference,
 * which reads the first 96 bytes of a longer proof and ignores the rest: anything but 96 bytes
 * is RNSC_ERR_MALFORMED here. Otherwise 0, RNSC_ERR_PROOF_HASH or RNSC_ERR_SIGNATURE. */
RNSC_API int rnsc_proof_validate_link(rnsc_ctx *ctx, const uint8_t peer_sig_pub[32],
				      const uint8_t packet_hash[RNSC_HASHLEN], const uint8_t *proof,
				      size_t len) RNSC_MUST_CHECK;

#endif
