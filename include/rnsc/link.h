/* SPDX-License-Identifier: MIT */
/*
 * The link state machine (mirrors Link.py, rns 1.5.4), sans-I/O: no sockets, no clock, no
 * threads. Time comes in as `now` (milliseconds on any monotonic scale, the same scale for
 * every call on one link); randomness (ephemeral keys, token IVs) comes from the context's
 * crypto backend. Payload layouts are linkfmt.h's; this module owns the states, the keys and
 * the timers.
 *
 * Driving a link (what the transport does):
 *   - initiator: rnsc_link_initiate() queues the LINKREQUEST; hand every packet addressed to
 *     the link id to rnsc_link_receive() (the LRPROOF included); the link goes ACTIVE when
 *     the proof checks out and queues the LRRTT packet.
 *   - responder: for a LINKREQUEST to a local SINGLE destination, rnsc_link_accept() builds
 *     the link and queues the LRPROOF; the link goes ACTIVE on the LRRTT packet.
 *   - after every call, drain the outbox (rnsc_link_outbox_pop()) and send the frames on the
 *     link's interface; call rnsc_link_tick() no later than rnsc_link_next_deadline().
 *   - the transport keeps what belongs to it: binding the link to the interface the request
 *     or proof came in on (Link.attached_interface: packets from another interface must not
 *     reach rnsc_link_receive), clamping the signalled MTU of a request (passed to accept as
 *     nh_mtu), hop counts, receipts for sent packets (rnsc_link_validate_proof() checks a
 *     link packet proof) and blackholed identities.
 *
 * Timers (Link.py's watchdog, one iteration per rnsc_link_tick()):
 *   PENDING / HANDSHAKE  closed with reason TIMEOUT at request time + establishment timeout
 *                        (initiator: first-hop timeout + 6 s per hop (at least one);
 *                        responder: 6 s per hop of the request + KEEPALIVE).
 *   ACTIVE               once nothing came in, or nothing went out, for `keepalive` the
 *                        initiator sends a keepalive (0xFF) at most every `keepalive`; rnsc
 *                        sends it a margin of the RTT (50 ms..1 s) after that nominal time
 *                        (or with STALE, as the reference does), and one left unanswered
 *                        once more a quarter keepalive later (a responder answers only when
 *                        it sent nothing for `keepalive`: see keepalive_margin()); nothing in
 *                        for `stale_time` makes the link STALE.
 *   STALE                torn down (LINKCLOSE sent, reason TIMEOUT) at the next watchdog wake,
 *                        rtt * 4 + 5 s later but never more than the watchdog's 5 s nap:
 *                        the reference caps every sleep at WATCHDOG_MAX_SLEEP. Any inbound
 *                        packet before then makes the link ACTIVE again.
 *   keepalive = clamp(rtt * 360 / 1.75, 5 s, 360 s), stale_time = 2 * keepalive, set when the
 *   link becomes ACTIVE.
 *
 * Reference behaviour kept on purpose (a cross-check would see any difference):
 *   - an LRPROOF whose signature fails leaves the initiator in HANDSHAKE (keys were derived
 *     before the check), so a later genuine proof is ignored and the link times out; a proof
 *     for another mode closes the link without the closed callback; a proof of the wrong
 *     length is ignored (the link stays PENDING).
 *   - an undecryptable packet is dropped but still counts as inbound traffic.
 *   - an LRRTT whose plaintext is not a MessagePack number tears the link down.
 *
 * Ownership: a link is created by initiate/accept and owned by the caller until
 * rnsc_link_del(); it borrows its context (which must outlive it) and copies every key and
 * identity it is given. Callbacks run inside the call that caused them (receive, tick,
 * teardown); they may send on the link or tear it down but must not delete it.
 * Threading: one thread at a time per link (the thread that owns the link's interface in the
 * runtime); different links are independent.
 */
#ifndef RNSC_LINK_H
#define RNSC_LINK_H

#include <stddef.h>
#include <stdint.h>

#include "ctx.h"
#include "identity.h"
#include "linkfmt.h"
#include "packet.h"
#include "token.h"

/* Link.PENDING ... Link.CLOSED */
enum rnsc_link_status {
	RNSC_LINK_PENDING = 0x00,
	RNSC_LINK_HANDSHAKE = 0x01,
	RNSC_LINK_ACTIVE = 0x02,
	RNSC_LINK_STALE = 0x03,
	RNSC_LINK_CLOSED = 0x04,
};

/* Link.TIMEOUT / INITIATOR_CLOSED / DESTINATION_CLOSED; 0 while the link is open. */
enum rnsc_link_reason {
	RNSC_LINK_REASON_NONE = 0x00,
	RNSC_LINK_TIMEOUT = 0x01,
	RNSC_LINK_INITIATOR_CLOSED = 0x02,
	RNSC_LINK_DESTINATION_CLOSED = 0x03,
};

/* Destination.PROVE_* (which received link DATA packets get a proof). */
enum rnsc_link_proof_strategy {
	RNSC_PROVE_NONE = 0x21,
	RNSC_PROVE_APP = 0x22,
	RNSC_PROVE_ALL = 0x23,
};

/* Link.py / Reticulum.py timing constants, in milliseconds. */
#define RNSC_LINK_PER_HOP_TIMEOUT_MS 6000u /* ESTABLISHMENT_TIMEOUT_PER_HOP */
#define RNSC_LINK_KEEPALIVE_MAX_MS 360000u
#define RNSC_LINK_KEEPALIVE_MIN_MS 5000u
#define RNSC_LINK_KEEPALIVE_MS RNSC_LINK_KEEPALIVE_MAX_MS
#define RNSC_LINK_STALE_FACTOR 2u
#define RNSC_LINK_STALE_TIME_MS (RNSC_LINK_STALE_FACTOR * RNSC_LINK_KEEPALIVE_MS)
#define RNSC_LINK_KEEPALIVE_MAX_RTT 1.75 /* seconds */
#define RNSC_LINK_KEEPALIVE_TIMEOUT_FACTOR 4u
#define RNSC_LINK_STALE_GRACE_MS 5000u
#define RNSC_LINK_WATCHDOG_MAX_SLEEP_MS 5000u
#define RNSC_LINK_TRAFFIC_TIMEOUT_FACTOR 6u
#define RNSC_LINK_TRAFFIC_TIMEOUT_MIN_MS 5u

typedef struct rnsc_link rnsc_link;

/* Events. `data` is the plaintext for encrypted contexts and the packet data as received for
 * the contexts the reference does not encrypt (RESOURCE, and RESOURCE_PRF proofs). */
typedef struct rnsc_link_callbacks {
	void (*established)(void *ud, rnsc_link *link);
	void (*closed)(void *ud, rnsc_link *link);
	/* DATA with context NONE, REQUEST, RESPONSE, CHANNEL (only while channel delivery is on),
	 * RESOURCE and RESOURCE_* contexts; PROOF packets (pkt->packet_type) with context NONE
	 * (packet proofs: check them with rnsc_link_validate_proof or rnsc_channel_proof) or
	 * RESOURCE_PRF.
	 * pkt->data still holds the packet's data as received; raw is the whole packet (a
	 * request's id is its truncated packet hash). */
	void (*packet)(void *ud, rnsc_link *link, int context, const uint8_t *data, size_t len,
		       const rnsc_packet *pkt, const uint8_t *raw, size_t raw_len);
	/* The initiator revealed an identity (responder side; first time only). */
	void (*identified)(void *ud, rnsc_link *link, const rnsc_identity *who);
	/* RNSC_PROVE_APP: return nonzero to prove this DATA packet. */
	int (*proof_requested)(void *ud, rnsc_link *link, const rnsc_packet *pkt);
} rnsc_link_callbacks;

typedef struct rnsc_link_initiate_params {
	/* The next-hop interface's HW_MTU when it autoconfigures or fixes its MTU (what
	 * Transport.next_hop_interface_hw_mtu answers), 0 when none: RNSC_MTU is signalled. */
	uint32_t hw_mtu;
	/* Transport.hops_to(destination): RNSC_PATHFINDER_M when no path is known. */
	unsigned hops;
	/* Reticulum.get_first_hop_timeout(destination) in ms; 0 means the default (6 s). */
	uint64_t first_hop_timeout_ms;
	int mode; /* enum rnsc_link_mode; 0 is taken as RNSC_LINK_MODE_DEFAULT */
} rnsc_link_initiate_params;

/* Initiator: a link to the SINGLE destination dest_hash owned by dest_identity (public key
 * suffices). Draws ephemeral X25519 and Ed25519 keys, queues the LINKREQUEST (always with
 * signalling bytes, as 1.5.4 sends them) and computes the link id. p may be NULL (defaults).
 * Returns 0 (caller owns *out), RNSC_ERR_INVAL, RNSC_ERR_LINK_MODE, RNSC_ERR_RANGE (hw_mtu
 * beyond 21 bits), RNSC_ERR_NOMEM, crypto errors. */
RNSC_API int rnsc_link_initiate(rnsc_ctx *ctx, rnsc_link **out,
				const uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN],
				const rnsc_identity *dest_identity,
				const rnsc_link_initiate_params *p, uint64_t now);

/* Responder: Link.validate_request for a LINKREQUEST packet (raw, as received, no IFAC) to a
 * local destination whose identity (with private key) is dest_identity. nh_mtu is the
 * transport's clamp: 0 when the receiving interface has no HW_MTU (signalling ignored, the
 * link runs at RNSC_MTU), else the largest MTU the receiving interface allows (its HW_MTU when
 * it autoconfigures or fixes it, RNSC_MTU otherwise). Derives the keys (state HANDSHAKE) and
 * queues the LRPROOF.
 * Returns 0 (caller owns *out), RNSC_ERR_INVAL, RNSC_ERR_NOKEY (no private key), the errors of
 * rnsc_packet_unpack(), RNSC_ERR_MALFORMED (not a LINKREQUEST, or data of a length other than
 * 64 / 67), RNSC_ERR_LINK_MODE, RNSC_ERR_LOW_ORDER (the peer's key gives no shared secret),
 * RNSC_ERR_NOMEM, crypto errors. */
RNSC_API int rnsc_link_accept(rnsc_ctx *ctx, rnsc_link **out, const rnsc_identity *dest_identity,
			      const uint8_t *raw, size_t len, uint32_t nh_mtu,
			      uint64_t now) RNSC_MUST_CHECK;

/* Wipes the keys and frees the link and its outbox; NULL is fine. No packet is sent: call
 * rnsc_link_teardown() first for an orderly close. */
RNSC_API void rnsc_link_del(rnsc_link *link);

RNSC_API void rnsc_link_set_callbacks(rnsc_link *link, const rnsc_link_callbacks *cb, void *ud);
/* Which received DATA packets (context NONE) the link proves; default RNSC_PROVE_NONE (as a
 * destination's default). RNSC_ERR_INVAL for another value. */
RNSC_API int rnsc_link_set_proof_strategy(rnsc_link *link, int strategy);
/* Turns delivery of CHANNEL packets on (the reference drops them while the link has no
 * channel, and proves every one it delivers). */
RNSC_API void rnsc_link_set_channel(rnsc_link *link, int on);

/* Hands the link one packet addressed to its link id (raw as received, no IFAC; the transport
 * has already checked the receiving interface). Follows Link.receive (DATA packets and
 * resource proofs), Link.validate_proof (PROOF with context LRPROOF) and, for packet proofs
 * (PROOF, context NONE), only passes them to the packet callback: like Transport's receipt
 * path they are not inbound traffic for the timers.
 * Returns 0 when the packet was taken (handled or, as the reference does, silently ignored),
 * or why it was dropped: RNSC_ERR_INVAL, the errors of rnsc_packet_unpack(),
 * RNSC_ERR_NOTFOUND (addressed to another link, or a LINKCLOSE naming another link),
 * RNSC_ERR_STATE (link closed, or not the packet this side takes in this state),
 * RNSC_ERR_TRUNCATED / RNSC_ERR_AUTH / RNSC_ERR_PADDING (undecryptable, or an RTT packet
 * holding truncated MessagePack), RNSC_ERR_MALFORMED, RNSC_ERR_SIGNATURE (LRPROOF or
 * identify signature), RNSC_ERR_LINK_MODE, RNSC_ERR_LOW_ORDER, RNSC_ERR_NOMEM.
 * The code describes the packet; the link's state is rnsc_link_status(): an LRPROOF of
 * another mode and an RTT packet that is not a number close the link, as in the reference. */
RNSC_API int rnsc_link_receive(rnsc_link *link, const uint8_t *raw, size_t len,
			       uint64_t now) RNSC_MUST_CHECK;

/* One watchdog iteration at now (see the top of this header); may queue a keepalive or a
 * LINKCLOSE and close the link. Returns 0 or RNSC_ERR_NOMEM / crypto errors. */
RNSC_API int rnsc_link_tick(rnsc_link *link, uint64_t now);
/* When rnsc_link_tick() next has something to do (ms, same scale as now); UINT64_MAX once
 * closed. */
RNSC_API uint64_t rnsc_link_next_deadline(const rnsc_link *link);

/* Sends data with a DATA context on an ACTIVE (or STALE) link: encrypted with the link token
 * unless the reference sends that context in the clear (KEEPALIVE, RESOURCE, CACHE_REQUEST).
 * packet_hash (may be NULL) receives the sent packet's hash, for a receipt.
 * Returns the packet length, RNSC_ERR_INVAL, RNSC_ERR_STATE (not established / closed),
 * RNSC_ERR_TOOBIG (beyond the link MTU: the caller must use a resource), RNSC_ERR_NOMEM. */
RNSC_API int rnsc_link_send(rnsc_link *link, int context, const uint8_t *data, size_t len,
			    uint8_t packet_hash[RNSC_HASHLEN], uint64_t now);
/* Sends any packet an application layer puts on the link: DATA with any context (as
 * rnsc_link_send), or a PROOF with context RESOURCE_PRF (a resource proof, sent in the clear
 * as the reference does). Other packet types / proof contexts: RNSC_ERR_INVAL. */
RNSC_API int rnsc_link_send_packet(rnsc_link *link, int packet_type, int context,
				   const uint8_t *data, size_t len,
				   uint8_t packet_hash[RNSC_HASHLEN], uint64_t now);
/* Link.encrypt / Link.decrypt with the link's token (resources encrypt their whole data this
 * way before splitting it into parts). Output lengths: rnsc_token_len(len) for encrypt, at
 * most len for decrypt. Return the length written, RNSC_ERR_STATE before the handshake or
 * after close, RNSC_ERR_BUFSIZE, RNSC_ERR_AUTH / RNSC_ERR_PADDING / RNSC_ERR_TRUNCATED. */
RNSC_API int rnsc_link_encrypt(const rnsc_link *link, uint8_t *out, size_t cap, const uint8_t *pt,
			       size_t len) RNSC_MUST_CHECK;
RNSC_API int rnsc_link_decrypt(const rnsc_link *link, uint8_t *out, size_t cap, const uint8_t *ct,
			       size_t len) RNSC_MUST_CHECK;
/* rnsc_link_encrypt in pieces (rnsc_token_enc_begin with the link's key): writes the IV to
 * out[0..16); continue with rnsc_token_enc_update / _final. RNSC_ERR_STATE as above. */
RNSC_API int rnsc_link_encrypt_begin(const rnsc_link *link, rnsc_token_enc *e,
				     uint8_t out[16]) RNSC_MUST_CHECK;
/* Link.identify: the initiator reveals identity (private key) over the ACTIVE link.
 * Returns the packet length, RNSC_ERR_STATE (responder, or not ACTIVE), RNSC_ERR_NOKEY, ... */
RNSC_API int rnsc_link_identify(rnsc_link *link, const rnsc_identity *identity, uint64_t now);
/* Link.teardown: LINKCLOSE (unless still PENDING), state CLOSED, reason INITIATOR_CLOSED or
 * DESTINATION_CLOSED by side, closed callback. No-op when already closed. */
RNSC_API int rnsc_link_teardown(rnsc_link *link, uint64_t now);
/* Link.prove_packet for a packet received on this link (raw as received): queues the proof.
 * Returns the proof packet length or RNSC_ERR_INVAL, the errors of rnsc_packet_unpack(). */
RNSC_API int rnsc_link_prove_packet(rnsc_link *link, const uint8_t *raw, size_t len, uint64_t now);
/* A proof that came back for a packet this side sent on the link (packet_hash), checked with
 * the peer's link signing key (PacketReceipt.validate_link_proof). A valid proof counts as
 * inbound for the keepalive and stale timers (Link.last_proof), as in the reference.
 * 0, RNSC_ERR_MALFORMED, RNSC_ERR_PROOF_HASH, RNSC_ERR_SIGNATURE, RNSC_ERR_STATE (no peer key
 * yet). */
RNSC_API int rnsc_link_validate_proof(rnsc_link *link, const uint8_t packet_hash[RNSC_HASHLEN],
				      const uint8_t *proof, size_t len,
				      uint64_t now) RNSC_MUST_CHECK;

/* Outbox: frames the link wants sent, oldest first. pop copies the oldest into out and drops
 * it; returns its length, 0 when empty, RNSC_ERR_BUFSIZE (nothing dropped) when cap is too
 * small. */
RNSC_API int rnsc_link_outbox_pop(rnsc_link *link, uint8_t *out, size_t cap);
RNSC_API size_t rnsc_link_outbox_count(const rnsc_link *link);
/* Length of the oldest queued frame, 0 when empty. */
RNSC_API size_t rnsc_link_outbox_peek_len(const rnsc_link *link);

/* State. Pointers are owned by the link and valid until rnsc_link_del(). */
RNSC_API rnsc_ctx *rnsc_link_context(const rnsc_link *link);
RNSC_API int rnsc_link_status(const rnsc_link *link);
RNSC_API int rnsc_link_reason(const rnsc_link *link);
RNSC_API int rnsc_link_is_initiator(const rnsc_link *link);
RNSC_API const uint8_t *rnsc_link_id(const rnsc_link *link);
RNSC_API uint32_t rnsc_link_mtu(const rnsc_link *link);
RNSC_API size_t rnsc_link_get_mdu(const rnsc_link *link);
RNSC_API int rnsc_link_get_mode(const rnsc_link *link);
/* Seconds; negative until measured. */
RNSC_API double rnsc_link_rtt(const rnsc_link *link);
RNSC_API uint64_t rnsc_link_keepalive_ms(const rnsc_link *link);
RNSC_API uint64_t rnsc_link_stale_time_ms(const rnsc_link *link);
RNSC_API uint64_t rnsc_link_establishment_timeout_ms(const rnsc_link *link);
/* The remote identity: the destination's for an initiator once ACTIVE, the identified
 * initiator's for a responder; NULL when unknown. */
RNSC_API const rnsc_identity *rnsc_link_remote_identity(const rnsc_link *link);
/* The 64-byte session key (HKDF over the X25519 secret, salt the link id), NULL before the
 * handshake and after close. For conformance checks only. */
RNSC_API const uint8_t *rnsc_link_derived_key(const rnsc_link *link);
/* Packets and payload bytes counted in and out (Link.rx / rxbytes / tx / txbytes). */
RNSC_API void rnsc_link_counters(const rnsc_link *link, uint64_t *rx, uint64_t *rxbytes,
				 uint64_t *tx, uint64_t *txbytes);

/* Names as the reference spells them ("ACTIVE", "INITIATOR_CLOSED"); NULL when unknown. */
RNSC_API const char *rnsc_link_status_name(int status);
RNSC_API const char *rnsc_link_reason_name(int reason);

#endif
