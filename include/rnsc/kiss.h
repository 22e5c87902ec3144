/* SPDX-License-Identifier: MIT */
/*
 * KISS framing (the TNC protocol), as the reference speaks it on
 * KISSInterface, TCPInterface with kiss_framing, and as the base of the
 * RNode/AX.25 interfaces. Sans-I/O: encoders write into caller buffers, the
 * decoder is fed arbitrary chunks.
 *
 * Wire format (rns 1.5.4):
 *   FEND || type || escape(payload) || FEND
 *   type: high nibble = TNC port, low nibble = command (0x00 = data frame).
 *   escape: 0xDB -> 0xDB 0xDD, then 0xC0 -> 0xDB 0xDC.
 *
 * What the reference sends: data frames as C0 00 <escaped> C0; at start-up
 * TXDELAY (preamble_ms / 10), TXTAIL (txtail_ms / 10), P (persistence),
 * SLOTTIME (slottime_ms / 10), each one byte clamped to 0..255, then READY
 * with value 0x01 (sent whether or not flow control is configured). It never
 * sends FULLDUPLEX, SETHARDWARE or RETURN on a plain KISS interface; their
 * codes are here so a TNC's frames can be named.
 *
 * Receive rules, and where rnsc deliberately differs from the reference's
 * byte-at-a-time reader (all differences only concern input the reference's
 * own encoder never produces):
 *   - bytes before the first FEND are discarded (counted as garbage);
 *   - the first byte after FEND is the type byte; a FEND immediately after a
 *     FEND (no type byte) is an empty frame: ignored, counted in stats.empty;
 *   - a data frame with an empty payload is ignored (the reference's
 *     process_incoming drops empty data too), counted in stats.empty;
 *   - FEND both closes a frame and opens the next. The reference instead goes
 *     idle after closing a data frame, so with a shared FEND
 *     ("C0 00 a C0 00 b C0") it loses the second frame; rnsc delivers both,
 *     as the KISS specification intends;
 *   - FESC TFEND -> C0, FESC TFESC -> DB; FESC followed by any other byte
 *     yields that byte (as the reference does), and FESC right before FEND is
 *     dropped; both count in stats.bad_escapes. The escape state is reset at
 *     each frame (the reference lets a dangling FESC leak into the next frame);
 *   - command (non-data) frames are unescaped and delivered like data frames,
 *     so the caller can act on READY (flow control) and others; the reference
 *     ignores their payload bytes;
 *   - the type byte is unescaped too (only ports 12 and 13 could need it);
 *   - a payload longer than max_frame is dropped and counted, and the decoder
 *     skips to the next FEND. The reference instead truncates the payload at
 *     HW_MTU and delivers it, which could only ever fail authentication later.
 * The reference also discards a partial frame after 100 ms without input;
 * that is a clock matter for the runtime, which calls rnsc_kiss_decoder_reset().
 */
#ifndef RNSC_KISS_H
#define RNSC_KISS_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define RNSC_KISS_FEND 0xC0
#define RNSC_KISS_FESC 0xDB
#define RNSC_KISS_TFEND 0xDC
#define RNSC_KISS_TFESC 0xDD

/* Command codes (low nibble of the type byte, except RETURN which is a whole
 * byte and therefore reads as port 15 / command 15 once split). */
#define RNSC_KISS_CMD_DATA 0x00
#define RNSC_KISS_CMD_TXDELAY 0x01
#define RNSC_KISS_CMD_P 0x02
#define RNSC_KISS_CMD_SLOTTIME 0x03
#define RNSC_KISS_CMD_TXTAIL 0x04
#define RNSC_KISS_CMD_FULLDUPLEX 0x05
#define RNSC_KISS_CMD_SETHARDWARE 0x06
#define RNSC_KISS_CMD_READY 0x0F
#define RNSC_KISS_CMD_RETURN 0xFF

#define RNSC_KISS_TYPE(port, cmd) ((uint8_t)((((port)&0x0F) << 4) | ((cmd)&0x0F)))
#define RNSC_KISS_PORT(type) ((uint8_t)(((type) >> 4) & 0x0F))
#define RNSC_KISS_CMD(type) ((uint8_t)((type)&0x0F))

/* HW_MTU of the reference's KISS-framed interfaces (payload bytes). */
#define RNSC_KISS_MTU_SERIAL 564u /* KISSInterface */
#define RNSC_KISS_MTU_TCP 262144u /* TCPInterface with kiss_framing */

/* Largest possible encoding of a len-byte payload: FEND, type and payload
 * all escaped, FEND. Saturates at SIZE_MAX. */
RNSC_API size_t rnsc_kiss_encoded_max(size_t len);

/* Frames payload p with the given type byte: FEND type escape(p) FEND. The
 * type byte is escaped like payload bytes. out and p must not overlap and
 * nothing is written unless the whole frame fits.
 * Returns the frame length, or RNSC_ERR_INVAL (NULL with a non-zero size),
 * RNSC_ERR_BUFSIZE (cap too small), RNSC_ERR_TOOBIG (longer than INT_MAX). */
RNSC_API int rnsc_kiss_encode_frame(uint8_t *out, size_t cap, uint8_t type, const uint8_t *p,
				    size_t len);

/* Data frame on port 0, byte-identical to the reference: C0 00 <escaped> C0.
 * Same return values as rnsc_kiss_encode_frame(). */
RNSC_API int rnsc_kiss_encode(uint8_t *out, size_t cap, const uint8_t *p, size_t len);

/* One-byte TNC command on port 0 (TXDELAY, P, SLOTTIME, TXTAIL, FULLDUPLEX,
 * SETHARDWARE, READY): C0 cmd value C0. Identical to the reference for every
 * value except 0xC0 and 0xDB, which the reference sends unescaped (a TNC would
 * misparse them) and rnsc escapes. cmd must be at most 0x0F or RETURN.
 * Returns the frame length (4 or 5), RNSC_ERR_INVAL for a bad cmd or NULL out,
 * RNSC_ERR_BUFSIZE when cap is too small. */
RNSC_API int rnsc_kiss_encode_command(uint8_t *out, size_t cap, uint8_t cmd, uint8_t value);

/* The reference's millisecond-to-parameter conversion for TXDELAY, TXTAIL and
 * SLOTTIME: ms / 10 truncated, clamped to 0..255. */
RNSC_API uint8_t rnsc_kiss_param_from_ms(long ms);

typedef struct rnsc_kiss_stats {
	uint64_t frames;        /* frames delivered (data and command) */
	uint64_t data_frames;   /* of which data frames */
	uint64_t bytes;         /* payload bytes delivered */
	uint64_t empty;         /* FEND FEND, and data frames with no payload */
	uint64_t drop_oversize; /* payload longer than max_frame */
	uint64_t garbage;       /* bytes before the first FEND */
	uint64_t bad_escapes;   /* FESC not followed by TFEND/TFESC */
} rnsc_kiss_stats;

/* Streaming decoder. Caller storage; buf (max_frame bytes) is caller storage
 * and must outlive the decoder. One owner thread. Fields are private except
 * stats. */
typedef struct rnsc_kiss_decoder {
	uint8_t *buf;
	size_t max_frame;
	size_t len;
	uint8_t state;
	uint8_t esc;
	uint8_t type;
	rnsc_kiss_stats stats;
} rnsc_kiss_decoder;

/* Called once per complete frame with its type byte (use RNSC_KISS_CMD() and
 * RNSC_KISS_PORT(); the reference masks the port away) and unescaped payload,
 * which points into the decoder's buffer and is valid only during the call.
 * Return 0 to continue; any other value stops the feed, which returns it. */
typedef int (*rnsc_kiss_frame_fn)(void *ud, uint8_t type, const uint8_t *payload, size_t len);

/* Prepares dec for payloads of up to max_frame bytes in buf. Counters zeroed.
 * Returns 0, or RNSC_ERR_INVAL when dec or buf is NULL or max_frame is 0. */
RNSC_API int rnsc_kiss_decoder_init(rnsc_kiss_decoder *dec, uint8_t *buf, size_t max_frame);

/* Forgets any partial frame and hunts for the next FEND; counters kept. */
RNSC_API void rnsc_kiss_decoder_reset(rnsc_kiss_decoder *dec);

/* Consumes a chunk of any size, calling cb for each completed frame.
 * Returns 0 when the whole chunk was consumed, the callback's non-zero value
 * if it stopped the feed (rest of the chunk discarded, decoder reset, counters
 * kept), or RNSC_ERR_INVAL when dec or cb is NULL or chunk is NULL with
 * len > 0. */
RNSC_API int rnsc_kiss_decoder_feed(rnsc_kiss_decoder *dec, const uint8_t *chunk, size_t len,
				    rnsc_kiss_frame_fn cb, void *ud);

#endif
