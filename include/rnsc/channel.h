/* SPDX-License-Identifier: MIT */
/*
 * Channel (mirrors Channel.py, rns 1.5.4): sequenced, windowed, acknowledged messages over an
 * established link, sans-I/O like the link under it.
 *
 * Envelope (the plaintext of one CHANNEL packet on the link):
 *   msgtype(2, big-endian) sequence(2) length(2) payload
 * The reference reads the payload as everything after the 6 header bytes and never checks
 * length; neither does this module (it is reported to the handler as received).
 * Message types >= 0xF000 are reserved for system messages (0xFF00 is the Buffer's stream
 * data); a message whose type is not registered is dropped before its sequence is looked at,
 * as the reference does (so it is never acknowledged by the channel, only proved by the link).
 *
 * Delivery: every CHANNEL packet is proved by the receiving link; the proof coming back marks
 * the envelope delivered (rnsc_channel_proof()). An envelope not proved in time is sent again
 * (new IV, so a new packet hash) after
 *   1.5^(tries - 1) * max(rtt * 2.5, 0.025) s * (envelopes outstanding + 1.5),
 * the timeouts of all outstanding envelopes only ever growing when one is (re)sent; after the
 * 5th try times out the channel shuts down and tears the link down.
 * Window: starts at 2 (max 5, min 2, flexibility 4), or 1/1/1/1 on a link whose RTT exceeds
 * 1.45 s; +1 per delivery up to the max; -1 per timeout down to the min (the max shrinking
 * too while it exceeds min + flexibility); after 10 deliveries in a row at an RTT below
 * 0.18 s the max becomes 48 (min 16), below 0.75 s 12 (min 5).
 * Receiving: sequences more than 48 ahead, or already delivered (modulo 2^16, with the
 * reference's wrap rule), are dropped; others are held and delivered in order.
 * A hazard of the reference's design, and what rnsc does about it: the link proves every
 * CHANNEL packet before the channel looks at it, and a sender's window counts undelivered
 * envelopes, not the span of sequences in flight. Under loss, one envelope retried while
 * later ones are proved lets a sender run more than 48 sequences ahead of the receiver,
 * which drops them after they were proved: the data is lost for good (seen at 5% loss
 * between two reference peers). rnsc as a sender never sends a sequence 48 or more past its
 * oldest undelivered envelope (rnsc_channel_ready() stays 0 until it is delivered), so no
 * receiver ever refuses what rnsc sends; nothing on the wire differs. As a receiver rnsc
 * keeps the reference's 48 unless told otherwise (rnsc_channel_set_rx_span()), so a
 * reference sender can be received without that loss.
 *
 * Ownership: a channel borrows its link (which must outlive it) and its context; it owns
 * copies of every envelope it holds. Feed it the link's CHANNEL plaintexts
 * (rnsc_channel_receive()) and PROOF packets (rnsc_channel_proof()) from the link's packet
 * callback, and call rnsc_channel_tick() by rnsc_channel_next_deadline(). Handlers run inside
 * rnsc_channel_receive(); they may send on the channel but must not delete it.
 * Threading: the thread that owns the link.
 */
#ifndef RNSC_CHANNEL_H
#define RNSC_CHANNEL_H

#include <stddef.h>
#include <stdint.h>

#include "ctx.h"
#include "link.h"
#include "linkport.h"

#define RNSC_CHANNEL_ENVELOPE_HEADER 6
#define RNSC_CHANNEL_WINDOW 2
#define RNSC_CHANNEL_WINDOW_MIN 2
#define RNSC_CHANNEL_WINDOW_MIN_LIMIT_SLOW 2
#define RNSC_CHANNEL_WINDOW_MIN_LIMIT_MEDIUM 5
#define RNSC_CHANNEL_WINDOW_MIN_LIMIT_FAST 16
#define RNSC_CHANNEL_WINDOW_MAX_SLOW 5
#define RNSC_CHANNEL_WINDOW_MAX_MEDIUM 12
#define RNSC_CHANNEL_WINDOW_MAX_FAST 48
#define RNSC_CHANNEL_WINDOW_MAX RNSC_CHANNEL_WINDOW_MAX_FAST
#define RNSC_CHANNEL_FAST_RATE_THRESHOLD 10
#define RNSC_CHANNEL_RTT_FAST 0.18 /* seconds */
#define RNSC_CHANNEL_RTT_MEDIUM 0.75
#define RNSC_CHANNEL_RTT_SLOW 1.45
#define RNSC_CHANNEL_WINDOW_FLEXIBILITY 4
#define RNSC_CHANNEL_SEQ_MAX 0xFFFF
#define RNSC_CHANNEL_SEQ_MODULUS 0x10000
#define RNSC_CHANNEL_MAX_TRIES 5
#define RNSC_CHANNEL_SYSTEM_TYPES 0xF000
#define RNSC_CHANNEL_SMT_STREAM_DATA 0xFF00
#define RNSC_CHANNEL_MAX_HANDLERS 8

typedef struct rnsc_channel rnsc_channel;

/* A message handler: return nonzero to stop the handlers after it (Channel's rule). */
typedef int (*rnsc_channel_handler)(void *ud, rnsc_channel *ch, uint16_t msgtype, uint16_t sequence,
				    const uint8_t *payload, size_t len);

/* Envelope layout. pack returns 6 + len, RNSC_ERR_BUFSIZE or RNSC_ERR_INVAL; parse returns 0,
 * RNSC_ERR_TRUNCATED (under 6 bytes) or RNSC_ERR_INVAL (payload borrows in). */
RNSC_API int rnsc_channel_envelope_pack(uint8_t *out, size_t cap, uint16_t msgtype,
					uint16_t sequence, const uint8_t *payload, size_t len);
RNSC_API int rnsc_channel_envelope_parse(const uint8_t *in, size_t len, uint16_t *msgtype,
					 uint16_t *sequence, uint16_t *length,
					 const uint8_t **payload,
					 size_t *payload_len) RNSC_MUST_CHECK;

/* A channel on link (Link.get_channel); turns the link's CHANNEL delivery on. The window is
 * chosen from the link's RTT at this moment. Returns 0 (caller owns *out), RNSC_ERR_INVAL,
 * RNSC_ERR_NOMEM. */
RNSC_API int rnsc_channel_new(rnsc_channel **out, rnsc_link *link);
/* A channel over any link port (linkport.h), e.g. a link the transport engine owns
 * (rnsc_linkport_on_transport): the port is copied; ctx allocates. Feed it the CHANNEL
 * plaintexts from on_link_packet and, since the engine checks link proofs itself, the hashes
 * on_link_proof names (rnsc_channel_delivered()). When the channel gives up on an envelope,
 * the port's teardown runs inside rnsc_channel_tick() (for the engine: on_link_closed fires
 * there), so delete the channel only after that call returns. Returns 0, RNSC_ERR_INVAL,
 * RNSC_ERR_NOMEM. */
RNSC_API int rnsc_channel_new_port(rnsc_channel **out, rnsc_ctx *ctx, const rnsc_linkport *port);
/* Frees the channel and what it holds; NULL is fine. The link's CHANNEL delivery goes off. */
RNSC_API void rnsc_channel_del(rnsc_channel *ch);

/* Registers a message type for reception: RNSC_ERR_RANGE for a reserved type (>= 0xF000)
 * unless system is set, RNSC_ERR_NOMEM. Registering twice is fine. */
RNSC_API int rnsc_channel_register_type(rnsc_channel *ch, uint16_t msgtype, int system);
/* Handlers run in the order added; adding one twice is a no-op. RNSC_ERR_RANGE beyond
 * RNSC_CHANNEL_MAX_HANDLERS; remove returns RNSC_ERR_NOTFOUND when not added. */
RNSC_API int rnsc_channel_add_handler(rnsc_channel *ch, rnsc_channel_handler fn, void *ud);
RNSC_API int rnsc_channel_remove_handler(rnsc_channel *ch, rnsc_channel_handler fn, void *ud);

/* The context the channel allocates from (for layers on top of it, e.g. the Buffer). */
RNSC_API rnsc_ctx *rnsc_channel_context(const rnsc_channel *ch);
/* Largest payload of one message: the link MDU - 6, at most 0xFFFF. */
RNSC_API size_t rnsc_channel_mdu(const rnsc_channel *ch);
/* 1 when a message may be sent now: fewer undelivered envelopes than the window, and the
 * next sequence less than 48 past the oldest undelivered one (see the top). */
RNSC_API int rnsc_channel_ready(const rnsc_channel *ch);
/* Accept sequences up to span ahead of the next expected one (default 48, the reference's
 * rule; at most 254): a receiver that holds more never refuses an envelope its link has
 * already proved. RNSC_ERR_RANGE outside 48..254. */
RNSC_API int rnsc_channel_set_rx_span(rnsc_channel *ch, unsigned span);
/* Sends one message (Channel.send). *sequence (may be NULL) receives its sequence number.
 * Returns 0, RNSC_ERR_INVAL, RNSC_ERR_STATE (link not ACTIVE, window full or channel shut
 * down: the reference's ME_LINK_NOT_READY), RNSC_ERR_TOOBIG (envelope beyond the link MDU),
 * RNSC_ERR_NOMEM, the errors of rnsc_link_send(). */
RNSC_API int rnsc_channel_send(rnsc_channel *ch, uint16_t msgtype, const uint8_t *payload,
			       size_t len, uint16_t *sequence, uint64_t now);
/* One CHANNEL plaintext from the link. Returns 0 when the envelope was taken (delivered now
 * or held for order), or why it was dropped: RNSC_ERR_TRUNCATED, RNSC_ERR_NOTFOUND (type not
 * registered), RNSC_ERR_RANGE (outside the receive window, or a duplicate),
 * RNSC_ERR_STATE (shut down), RNSC_ERR_NOMEM. */
RNSC_API int rnsc_channel_receive(rnsc_channel *ch, const uint8_t *plaintext, size_t len,
				  uint64_t now);
/* The data of a PROOF packet that came in on the link: 0 when it proved an outstanding
 * envelope (now delivered), RNSC_ERR_NOTFOUND when it names no outstanding envelope, the
 * errors of rnsc_link_validate_proof() otherwise. */
RNSC_API int rnsc_channel_proof(rnsc_channel *ch, const uint8_t *proof, size_t len,
				uint64_t now) RNSC_MUST_CHECK;
/* An outstanding envelope's packet (full hash) was proved, the proof already checked by the
 * layer below (the engine's on_link_proof). 0 when it was outstanding (now delivered),
 * RNSC_ERR_NOTFOUND otherwise, RNSC_ERR_INVAL. rnsc_channel_proof() answers RNSC_ERR_STATE
 * on a port that is not a bare link (it cannot check the signature there). */
RNSC_API int rnsc_channel_delivered(rnsc_channel *ch, const uint8_t packet_hash[RNSC_HASHLEN],
				    uint64_t now);
/* Handles the timeouts due at now: resends, and after the last try shuts the channel down and
 * tears the link down. Returns 0 or the errors of rnsc_link_send(). */
RNSC_API int rnsc_channel_tick(rnsc_channel *ch, uint64_t now);
/* The earliest envelope timeout, UINT64_MAX when nothing is outstanding. */
RNSC_API uint64_t rnsc_channel_next_deadline(const rnsc_channel *ch);

/* State, for tests and status output. */
RNSC_API unsigned rnsc_channel_window(const rnsc_channel *ch);
RNSC_API unsigned rnsc_channel_window_max(const rnsc_channel *ch);
RNSC_API unsigned rnsc_channel_window_min(const rnsc_channel *ch);
RNSC_API size_t rnsc_channel_outstanding(const rnsc_channel *ch);
RNSC_API size_t rnsc_channel_held(const rnsc_channel *ch);
RNSC_API uint16_t rnsc_channel_next_sequence(const rnsc_channel *ch);
RNSC_API uint16_t rnsc_channel_next_rx_sequence(const rnsc_channel *ch);
RNSC_API int rnsc_channel_is_shut_down(const rnsc_channel *ch);

#endif
