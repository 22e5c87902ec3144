/* SPDX-License-Identifier: MIT */
/*
 * Buffer (mirrors Buffer.py, rns 1.5.4): byte streams over a Channel (channel.h), the
 * reference's RawChannelReader / RawChannelWriter and their StreamDataMessage.
 *
 * StreamDataMessage (channel message type 0xFF00, a system type):
 *   header (2 bytes, big-endian) = stream_id (14 bits) | 0x8000 if EOF | 0x4000 if compressed
 *   data   (the rest): the chunk, bz2-compressed when the flag says so.
 * A compressed chunk is decompressed as the reference does (one bz2 stream, at most
 * RNSC_BUFFER_MAX_CHUNK_LEN bytes out, bytes after the stream's end ignored); one that does
 * not end within that, or is not bz2, is refused.
 *
 * Writer (RawChannelWriter.write): takes at most 16 KiB per call; when the chunk is over 32
 * bytes it tries bz2 (level 9, as Python's bz2.compress) on the whole chunk, then on 1/2 and
 * 1/3 of it, and sends the first compressed form that is both smaller than the writer's MDU
 * (channel MDU - 2) and smaller than its input; otherwise the first MDU bytes go
 * uncompressed. The return value says how much of the input was taken; 0 when the channel's
 * window is full (the reference's ME_LINK_NOT_READY), so the caller drives the link and
 * tries again. close() sends an empty message with the EOF flag; where the reference would
 * give up silently when the window stays full, rnsc_buffer_writer_close() says
 * RNSC_ERR_STATE and the caller retries.
 *
 * Reader (RawChannelReader): registers the message type and a channel handler; messages for
 * its stream id are appended to its buffer (the handler claims them), the EOF flag is kept,
 * and the ready callback gets the number of bytes buffered. Messages for other stream ids are
 * left to other handlers. A message that cannot be decoded is dropped (logged); the reference
 * drops it inside Channel._receive before its sequence is accounted, rnsc's channel has
 * already accepted it at that point.
 *
 * Ownership: readers and writers borrow their channel (which must outlive them) and its
 * context; the reader owns its buffer. Threading: the thread that owns the link.
 */
#ifndef RNSC_BUFFER_H
#define RNSC_BUFFER_H

#include <stddef.h>
#include <stdint.h>

#include "channel.h"
#include "ctx.h"

#define RNSC_BUFFER_STREAM_ID_MAX 0x3FFF
#define RNSC_BUFFER_HEADER_LEN 2
#define RNSC_BUFFER_OVERHEAD (RNSC_BUFFER_HEADER_LEN + RNSC_CHANNEL_ENVELOPE_HEADER)
#define RNSC_BUFFER_MAX_CHUNK_LEN 16384 /* RawChannelWriter.MAX_CHUNK_LEN */
#define RNSC_BUFFER_COMPRESSION_TRIES 4
#define RNSC_BUFFER_FLAG_EOF 0x8000
#define RNSC_BUFFER_FLAG_COMPRESSED 0x4000

/* ---- StreamDataMessage ------------------------------------------------------------------------ */

/* Packs header + data (data as given: compress first for a compressed message). Returns the
 * length, RNSC_ERR_RANGE (stream id beyond 0x3FFF), RNSC_ERR_BUFSIZE, RNSC_ERR_INVAL. */
RNSC_API int rnsc_stream_msg_pack(uint8_t *out, size_t cap, unsigned stream_id, int eof,
				  int compressed, const uint8_t *data, size_t len);
/* Reads the header; *data points into in (still compressed when *compressed). 0,
 * RNSC_ERR_TRUNCATED (under 2 bytes), RNSC_ERR_INVAL. */
RNSC_API int rnsc_stream_msg_parse(const uint8_t *in, size_t len, unsigned *stream_id, int *eof,
				   int *compressed, const uint8_t **data,
				   size_t *data_len) RNSC_MUST_CHECK;
/* StreamDataMessage.unpack: the header, and the data decompressed into out (cap at least
 * RNSC_BUFFER_MAX_CHUNK_LEN for a compressed message, else the data's length). Returns the
 * data length, RNSC_ERR_TRUNCATED, RNSC_ERR_MALFORMED (not a bz2 stream, or one that does
 * not end within 16 KiB of output), RNSC_ERR_BUFSIZE, RNSC_ERR_NOMEM, RNSC_ERR_INVAL. */
RNSC_API int rnsc_stream_msg_decode(const uint8_t *in, size_t len, unsigned *stream_id, int *eof,
				    int *compressed, uint8_t *out, size_t cap) RNSC_MUST_CHECK;
/* The writer's chunking decision for up to len input bytes with a writer MDU of mdu: fills
 * out (cap at least mdu) with the chunk to send and *taken with how many input bytes it
 * carries, *compressed with its flag. Returns the chunk length, RNSC_ERR_BUFSIZE,
 * RNSC_ERR_NOMEM, RNSC_ERR_INVAL. */
RNSC_API int rnsc_stream_chunk(uint8_t *out, size_t cap, size_t mdu, const uint8_t *data,
			       size_t len, size_t *taken, int *compressed);
/* bz2 at level 9 (Python's bz2.compress): returns the length or RNSC_ERR_BUFSIZE /
 * RNSC_ERR_NOMEM / RNSC_ERR_INVAL. Worst case output: len + len / 100 + 600. */
RNSC_API int rnsc_stream_bz2(uint8_t *out, size_t cap, const uint8_t *data, size_t len);

/* ---- writer ----------------------------------------------------------------------------------- */

typedef struct rnsc_buffer_writer rnsc_buffer_writer;

/* RNSC_ERR_RANGE for a stream id beyond 0x3FFF, RNSC_ERR_INVAL, RNSC_ERR_NOMEM. */
RNSC_API int rnsc_buffer_writer_new(rnsc_buffer_writer **out, rnsc_channel *ch, unsigned stream_id);
RNSC_API void rnsc_buffer_writer_del(rnsc_buffer_writer *w);
/* Sends one message carrying a prefix of data (see the top). Returns the number of input
 * bytes taken (0: window full, try again), or RNSC_ERR_INVAL, RNSC_ERR_NOMEM and the
 * channel's send errors other than a full window (RNSC_ERR_STATE after the channel shut
 * down). */
RNSC_API int rnsc_buffer_writer_write(rnsc_buffer_writer *w, const uint8_t *data, size_t len,
				      uint64_t now);
/* Sends the EOF message: 0, RNSC_ERR_STATE while the window is full (try again) or once the
 * channel shut down, the channel's errors. */
RNSC_API int rnsc_buffer_writer_close(rnsc_buffer_writer *w, uint64_t now);
/* The writer's MDU: the channel MDU - 2 when it was made. */
RNSC_API size_t rnsc_buffer_writer_mdu(const rnsc_buffer_writer *w);

/* ---- reader ----------------------------------------------------------------------------------- */

typedef struct rnsc_buffer_reader rnsc_buffer_reader;
/* New data (or the EOF) arrived: ready is the number of bytes buffered. */
typedef void (*rnsc_buffer_ready_fn)(void *ud, rnsc_buffer_reader *r, size_t ready);

/* Registers the message type and its handler on ch. ready may be NULL. RNSC_ERR_RANGE,
 * RNSC_ERR_INVAL, RNSC_ERR_NOMEM, the channel's handler limit (RNSC_ERR_RANGE). */
RNSC_API int rnsc_buffer_reader_new(rnsc_buffer_reader **out, rnsc_channel *ch, unsigned stream_id,
				    rnsc_buffer_ready_fn ready, void *ud);
/* Removes the handler and frees the buffer. NULL is fine. */
RNSC_API void rnsc_buffer_reader_del(rnsc_buffer_reader *r);
/* Copies up to cap buffered bytes out: the count, 0 when nothing is buffered (then
 * rnsc_buffer_reader_eof() tells the end of the stream from "nothing yet"). */
RNSC_API int rnsc_buffer_reader_read(rnsc_buffer_reader *r, uint8_t *out, size_t cap);
RNSC_API size_t rnsc_buffer_reader_available(const rnsc_buffer_reader *r);
/* 1 once the EOF message arrived and everything before it was read. */
RNSC_API int rnsc_buffer_reader_eof(const rnsc_buffer_reader *r);
/* Messages for this stream that could not be decoded (dropped). */
RNSC_API uint64_t rnsc_buffer_reader_errors(const rnsc_buffer_reader *r);

#endif
