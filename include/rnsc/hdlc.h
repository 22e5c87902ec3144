/* SPDX-License-Identifier: MIT */
/*
 * HDLC-like byte-stuffed framing, as the reference uses on its stream
 * interfaces (TCPInterface, BackboneInterface, LocalInterface, I2PInterface,
 * PipeInterface, SerialInterface). Sans-I/O: the encoder writes into a caller
 * buffer, the decoder is fed whatever chunks the transport happens to read.
 *
 * Wire format (rns 1.5.4):
 *   FLAG || escape(payload) || FLAG
 *   escape: 0x7D -> 0x7D 0x5D, then 0x7E -> 0x7D 0x5E (ESC is XORed with 0x20).
 * There is no checksum and no address/control field; the stream transport is
 * trusted for integrity.
 *
 * Receive rules, taken from the reference's ReceiveBuffer
 * (RNS/Interfaces/util/HDLC.py, used by Local and Backbone) and the identical
 * inline reader of TCPInterface:
 *   - bytes before the first FLAG are discarded;
 *   - every FLAG both closes the current frame and opens the next one, so
 *     "7E a 7E b 7E" carries two frames and "7E 7E" is an empty frame
 *     (LocalInterface sends exactly that as a keepalive);
 *   - empty frames are ignored silently;
 *   - a frame whose unescaped length is <= HEADER_MINSIZE (19) or
 *     > HW_MTU (+ IFAC size on TCP/Backbone) is dropped;
 *   - unescaping only maps 7D 5E -> 7E and 7D 5D -> 7D; a 7D followed by any
 *     other byte (or by the closing FLAG) is kept as a literal 7D and the
 *     following byte is processed normally. This decoder reproduces that
 *     byte for byte, and counts such escapes in stats.bad_escapes.
 * Where the reference clears a runaway buffer (more than 2 * HW_MTU raw bytes
 * without a closing FLAG), this decoder stops buffering as soon as the
 * unescaped frame exceeds max_frame and discards up to the next FLAG, which
 * then opens a new frame. Either way the oversized frame is lost and the next
 * complete frame is delivered.
 *
 * The reference's byte-at-a-time readers (PipeInterface, SerialInterface,
 * I2PInterface) differ only on malformed or oversized input: they deliver an
 * oversized frame truncated to HW_MTU, drop the ESC of an unknown escape, and
 * ignore bytes between a closing FLAG and the next opening FLAG. Well-formed
 * frames within the limit (FLAG escape(payload) FLAG) decode identically.
 */
#ifndef RNSC_HDLC_H
#define RNSC_HDLC_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define RNSC_HDLC_FLAG 0x7E
#define RNSC_HDLC_ESC 0x7D
#define RNSC_HDLC_ESC_MASK 0x20

/* HW_MTU per reference interface (rns 1.5.4). TCP and Backbone accept
 * HW_MTU + ifac_size; Local accepts exactly HW_MTU. */
#define RNSC_HDLC_MTU_TCP 262144u
#define RNSC_HDLC_MTU_LOCAL 262144u
#define RNSC_HDLC_MTU_BACKBONE 1048576u
#define RNSC_HDLC_MTU_PIPE 1064u
#define RNSC_HDLC_MTU_I2P 1064u
#define RNSC_HDLC_MTU_SERIAL 564u
/* The reference drops frames of length <= Reticulum.HEADER_MINSIZE (19), so the
 * smallest frame it delivers is 20 bytes. Pass this as min_frame to match it. */
#define RNSC_HDLC_REF_MIN_FRAME 20u

/* Largest possible encoding of a len-byte payload (every byte escaped, plus
 * two flags). Saturates at SIZE_MAX instead of wrapping. */
RNSC_API size_t rnsc_hdlc_encoded_max(size_t len);

/* Exact encoded length of payload p (flags included). Saturates at SIZE_MAX. */
RNSC_API size_t rnsc_hdlc_encoded_len(const uint8_t *p, size_t len);

/* Frames payload p into out (FLAG, escaped payload, FLAG), byte-identical to
 * the reference's HDLC.frame(). out and p must not overlap. Nothing is written
 * unless the whole frame fits.
 * Returns the frame length, or
 *   RNSC_ERR_INVAL   out or p NULL with a non-zero size,
 *   RNSC_ERR_BUFSIZE cap smaller than rnsc_hdlc_encoded_len(p, len),
 *   RNSC_ERR_TOOBIG  the frame would be longer than INT_MAX. */
RNSC_API int rnsc_hdlc_encode(uint8_t *out, size_t cap, const uint8_t *p, size_t len);

/* Receive counters; they only ever grow (until rnsc_hdlc_decoder_init). */
typedef struct rnsc_hdlc_stats {
	uint64_t frames;        /* frames delivered to the callback */
	uint64_t bytes;         /* payload bytes delivered */
	uint64_t empty;         /* FLAG FLAG: keepalives and frame separators, not errors */
	uint64_t drop_runt;     /* non-empty frames shorter than min_frame */
	uint64_t drop_oversize; /* frames longer than max_frame */
	uint64_t garbage;       /* bytes seen outside any frame (before the first FLAG) */
	uint64_t bad_escapes;   /* ESC not followed by 0x5E or 0x5D (kept literally) */
} rnsc_hdlc_stats;

/* Streaming decoder. Caller storage; the frame buffer is caller storage too
 * and must outlive the decoder. Not thread-safe: one owner (the thread that
 * reads the interface) feeds it. Fields are private except stats. */
typedef struct rnsc_hdlc_decoder {
	uint8_t *buf;
	size_t max_frame;
	size_t min_frame;
	size_t len;
	uint8_t state;
	uint8_t esc;
	rnsc_hdlc_stats stats;
} rnsc_hdlc_decoder;

/* Called once per complete frame. frame points into the decoder's buffer and
 * is valid only during the call. Return 0 to continue; any other value stops
 * the feed, which then returns that value (use negative rnsc_err codes). */
typedef int (*rnsc_hdlc_frame_fn)(void *ud, const uint8_t *frame, size_t len);

/* Prepares dec to assemble frames of up to max_frame unescaped bytes into buf
 * (which must hold max_frame bytes). min_frame starts at 1 (only empty frames
 * are ignored); see rnsc_hdlc_decoder_set_min(). Counters are zeroed and the
 * decoder hunts for a first FLAG.
 * Returns 0, or RNSC_ERR_INVAL when dec or buf is NULL or max_frame is 0. */
RNSC_API int rnsc_hdlc_decoder_init(rnsc_hdlc_decoder *dec, uint8_t *buf, size_t max_frame);

/* Frames shorter than min_frame (but not empty) are dropped and counted in
 * drop_runt. Use RNSC_HDLC_REF_MIN_FRAME to match the reference. Values of 0
 * are treated as 1. Returns 0, or RNSC_ERR_INVAL if dec is NULL or min_frame
 * exceeds max_frame. */
RNSC_API int rnsc_hdlc_decoder_set_min(rnsc_hdlc_decoder *dec, size_t min_frame);

/* Forgets any partial frame and hunts for the next FLAG, keeping counters.
 * For the runtime to call after a read timeout or reconnect. */
RNSC_API void rnsc_hdlc_decoder_reset(rnsc_hdlc_decoder *dec);

/* Consumes a chunk of any size (0 is fine), calling cb for each completed
 * frame in stream order. Partial frames, including an ESC at the very end of
 * the chunk, carry over to the next call.
 * Returns 0 when the whole chunk was consumed, the callback's non-zero return
 * value if it stopped the feed (the rest of the chunk is discarded and the
 * decoder is reset to hunting, counters kept), or RNSC_ERR_INVAL when dec or
 * cb is NULL, or chunk is NULL with len > 0. */
RNSC_API int rnsc_hdlc_decoder_feed(rnsc_hdlc_decoder *dec, const uint8_t *chunk, size_t len,
				    rnsc_hdlc_frame_fn cb, void *ud);

#endif
