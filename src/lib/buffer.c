/* SPDX-License-Identifier: MIT */
#include "buffer.h"

#include <bzlib.h>
#include <limits.h>
#include <string.h>

#define WHO "buffer"

/* ---- StreamDataMessage ------------------------------------------------------------------------ */

int rnsc_stream_msg_pack(uint8_t *out, size_t cap, unsigned stream_id, int eof, int compressed,
			 const uint8_t *data, size_t len)
{
	if (!out || (!data && len))
		return RNSC_ERR_INVAL;
	if (stream_id > RNSC_BUFFER_STREAM_ID_MAX)
		return RNSC_ERR_RANGE;
	if (len > INT_MAX - RNSC_BUFFER_HEADER_LEN)
		return RNSC_ERR_INVAL;
	if (cap < RNSC_BUFFER_HEADER_LEN + len)
		return RNSC_ERR_BUFSIZE;
	unsigned h = stream_id | (eof ? RNSC_BUFFER_FLAG_EOF : 0) |
		     (compressed ? RNSC_BUFFER_FLAG_COMPRESSED : 0);
	out[0] = (uint8_t)(h >> 8);
	out[1] = (uint8_t)h;
	if (len)
		memcpy(out + RNSC_BUFFER_HEADER_LEN, data, len);
	return (int)(RNSC_BUFFER_HEADER_LEN + len);
}

int rnsc_stream_msg_parse(const uint8_t *in, size_t len, unsigned *stream_id, int *eof,
			  int *compressed, const uint8_t **data, size_t *data_len)
{
	if (!in && len)
		return RNSC_ERR_INVAL;
	if (len < RNSC_BUFFER_HEADER_LEN)
		return RNSC_ERR_TRUNCATED;
	unsigned h = (unsigned)in[0] << 8 | in[1];
	if (stream_id)
		*stream_id = h & RNSC_BUFFER_STREAM_ID_MAX;
	if (eof)
		*eof = !!(h & RNSC_BUFFER_FLAG_EOF);
	if (compressed)
		*compressed = !!(h & RNSC_BUFFER_FLAG_COMPRESSED);
	if (data)
		*data = in + RNSC_BUFFER_HEADER_LEN;
	if (data_len)
		*data_len = len - RNSC_BUFFER_HEADER_LEN;
	return 0;
}

/* BZ2Decompressor().decompress(data, max_length=MAX_CHUNK_LEN) followed by the reference's
 * "not decompressor.eof" check. */
static int bunzip(uint8_t *out, const uint8_t *in, size_t len)
{
	bz_stream s;
	memset(&s, 0, sizeof(s));
	if (BZ2_bzDecompressInit(&s, 0, 0) != BZ_OK)
		return RNSC_ERR_NOMEM;
	s.next_in = (char *)(uintptr_t)in;
	s.avail_in = (unsigned)len;
	s.next_out = (char *)out;
	s.avail_out = RNSC_BUFFER_MAX_CHUNK_LEN;
	int rc, end = 0;
	for (;;) {
		rc = BZ2_bzDecompress(&s);
		if (rc == BZ_STREAM_END) {
			end = 1;
			break;
		}
		if (rc != BZ_OK || s.avail_in == 0 || s.avail_out == 0)
			break;
	}
	int n = (int)(RNSC_BUFFER_MAX_CHUNK_LEN - s.avail_out);
	BZ2_bzDecompressEnd(&s);
	if (rc == BZ_MEM_ERROR)
		return RNSC_ERR_NOMEM;
	return end ? n : RNSC_ERR_MALFORMED;
}

int rnsc_stream_msg_decode(const uint8_t *in, size_t len, unsigned *stream_id, int *eof,
			   int *compressed, uint8_t *out, size_t cap)
{
	const uint8_t *d;
	size_t dl;
	int comp;
	if (!out && cap)
		return RNSC_ERR_INVAL;
	int rc = rnsc_stream_msg_parse(in, len, stream_id, eof, &comp, &d, &dl);
	if (rc)
		return rc;
	if (compressed)
		*compressed = comp;
	if (!comp) {
		if (dl > cap)
			return RNSC_ERR_BUFSIZE;
		if (dl)
			memcpy(out, d, dl);
		return (int)dl;
	}
	if (cap < RNSC_BUFFER_MAX_CHUNK_LEN)
		return RNSC_ERR_BUFSIZE;
	if (dl > UINT_MAX)
		return RNSC_ERR_MALFORMED;
	return bunzip(out, d, dl);
}

int rnsc_stream_bz2(uint8_t *out, size_t cap, const uint8_t *data, size_t len)
{
	if (!out || (!data && len) || len > UINT_MAX / 2 || cap > UINT_MAX)
		return RNSC_ERR_INVAL;
	unsigned n = (unsigned)cap;
	int rc = BZ2_bzBuffToBuffCompress((char *)out, &n, (char *)(uintptr_t)data, (unsigned)len,
					  9, 0, 0);
	if (rc == BZ_OUTBUFF_FULL)
		return RNSC_ERR_BUFSIZE;
	if (rc == BZ_MEM_ERROR)
		return RNSC_ERR_NOMEM;
	if (rc != BZ_OK || n > INT_MAX)
		return RNSC_ERR_FATAL;
	return (int)n;
}

int rnsc_stream_chunk(uint8_t *out, size_t cap, size_t mdu, const uint8_t *data, size_t len,
		      size_t *taken, int *compressed)
{
	if (!out || (!data && len) || !taken || !compressed)
		return RNSC_ERR_INVAL;
	if (len > RNSC_BUFFER_MAX_CHUNK_LEN)
		len = RNSC_BUFFER_MAX_CHUNK_LEN;
	if (len > 32) {
		/* bz2 output for at most 16 KiB in is far below this bound */
		uint8_t tmp[RNSC_BUFFER_MAX_CHUNK_LEN + RNSC_BUFFER_MAX_CHUNK_LEN / 100 + 600];
		for (size_t t = 1; t < RNSC_BUFFER_COMPRESSION_TRIES; t++) {
			size_t seg = len / t;
			int c = rnsc_stream_bz2(tmp, sizeof(tmp), data, seg);
			if (c < 0)
				return c;
			if ((size_t)c < mdu && (size_t)c < seg) {
				if ((size_t)c > cap)
					return RNSC_ERR_BUFSIZE;
				memcpy(out, tmp, (size_t)c);
				*taken = seg;
				*compressed = 1;
				return c;
			}
		}
	}
	size_t n = len < mdu ? len : mdu;
	if (n > cap)
		return RNSC_ERR_BUFSIZE;
	if (n)
		memcpy(out, data, n);
	*taken = n;
	*compressed = 0;
	return (int)n;
}

/* ---- writer ----------------------------------------------------------------------------------- */

struct rnsc_buffer_writer {
	rnsc_channel *ch;
	unsigned stream_id;
	size_t mdu;
};

int rnsc_buffer_writer_new(rnsc_buffer_writer **out, rnsc_channel *ch, unsigned stream_id)
{
	if (!out || !ch)
		return RNSC_ERR_INVAL;
	*out = NULL;
	if (stream_id > RNSC_BUFFER_STREAM_ID_MAX)
		return RNSC_ERR_RANGE;
	rnsc_buffer_writer *w = rnsc_calloc(rnsc_channel_context(ch), 1, sizeof(*w));
	if (!w)
		return RNSC_ERR_NOMEM;
	w->ch = ch;
	w->stream_id = stream_id;
	size_t m = rnsc_channel_mdu(ch);
	w->mdu = m > RNSC_BUFFER_HEADER_LEN ? m - RNSC_BUFFER_HEADER_LEN : 0;
	*out = w;
	return 0;
}

void rnsc_buffer_writer_del(rnsc_buffer_writer *w)
{
	if (w)
		rnsc_free(rnsc_channel_context(w->ch), w);
}

size_t rnsc_buffer_writer_mdu(const rnsc_buffer_writer *w)
{
	return w ? w->mdu : 0;
}

static int send_msg(rnsc_buffer_writer *w, int eof, int compressed, const uint8_t *chunk, size_t n,
		    uint64_t now)
{
	rnsc_ctx *ctx = rnsc_channel_context(w->ch);
	uint8_t *msg = rnsc_alloc(ctx, RNSC_BUFFER_HEADER_LEN + n);
	if (!msg)
		return RNSC_ERR_NOMEM;
	int ml = rnsc_stream_msg_pack(msg, RNSC_BUFFER_HEADER_LEN + n, w->stream_id, eof,
				      compressed, chunk, n);
	int rc = ml < 0 ? ml
			: rnsc_channel_send(w->ch, RNSC_CHANNEL_SMT_STREAM_DATA, msg, (size_t)ml,
					    NULL, now);
	rnsc_free(ctx, msg);
	return rc;
}

int rnsc_buffer_writer_write(rnsc_buffer_writer *w, const uint8_t *data, size_t len, uint64_t now)
{
	if (!w || (!data && len))
		return RNSC_ERR_INVAL;
	if (rnsc_channel_is_shut_down(w->ch))
		return RNSC_ERR_STATE;
	if (!rnsc_channel_ready(w->ch))
		return 0; /* ME_LINK_NOT_READY: nothing taken */
	rnsc_ctx *ctx = rnsc_channel_context(w->ch);
	size_t cap = w->mdu ? w->mdu : 1;
	uint8_t *chunk = rnsc_alloc(ctx, cap);
	if (!chunk)
		return RNSC_ERR_NOMEM;
	size_t taken;
	int comp;
	int n = rnsc_stream_chunk(chunk, cap, w->mdu, data, len, &taken, &comp);
	int rc = n < 0 ? n : send_msg(w, 0, comp, chunk, (size_t)n, now);
	rnsc_free(ctx, chunk);
	if (rc == RNSC_ERR_STATE && !rnsc_channel_is_shut_down(w->ch))
		return 0;
	return rc < 0 ? rc : (int)taken;
}

int rnsc_buffer_writer_close(rnsc_buffer_writer *w, uint64_t now)
{
	if (!w)
		return RNSC_ERR_INVAL;
	if (!rnsc_channel_ready(w->ch))
		return RNSC_ERR_STATE;
	return send_msg(w, 1, 0, NULL, 0, now);
}

/* ---- reader ----------------------------------------------------------------------------------- */

struct rnsc_buffer_reader {
	rnsc_ctx *ctx;
	rnsc_channel *ch;
	unsigned stream_id;
	rnsc_buffer_ready_fn ready;
	void *ud;
	uint8_t *buf;
	size_t start, len, cap; /* buffered bytes are buf[start .. start + len) */
	int eof;
	uint64_t errors;
};

static int append(rnsc_buffer_reader *r, const uint8_t *p, size_t n)
{
	if (!n)
		return 0;
	if (r->start + r->len + n > r->cap) {
		if (r->start) { /* compact first */
			memmove(r->buf, r->buf + r->start, r->len);
			r->start = 0;
		}
		if (r->len + n > r->cap) {
			size_t cap = r->cap ? r->cap : 4096;
			while (cap < r->len + n)
				cap *= 2;
			uint8_t *nb = rnsc_alloc(r->ctx, cap);
			if (!nb)
				return RNSC_ERR_NOMEM;
			if (r->len)
				memcpy(nb, r->buf, r->len);
			rnsc_free(r->ctx, r->buf);
			r->buf = nb;
			r->cap = cap;
		}
	}
	memcpy(r->buf + r->start + r->len, p, n);
	r->len += n;
	return 0;
}

static int on_message(void *ud, rnsc_channel *ch, uint16_t msgtype, uint16_t seq,
		      const uint8_t *payload, size_t len)
{
	(void)ch, (void)seq;
	rnsc_buffer_reader *r = ud;
	if (msgtype != RNSC_CHANNEL_SMT_STREAM_DATA)
		return 0;
	unsigned id;
	if (rnsc_stream_msg_parse(payload, len, &id, NULL, NULL, NULL, NULL) || id != r->stream_id)
		return 0;
	uint8_t *out = rnsc_alloc(
		r->ctx, len > RNSC_BUFFER_MAX_CHUNK_LEN ? len : RNSC_BUFFER_MAX_CHUNK_LEN);
	if (!out) {
		r->errors++;
		return 0;
	}
	int eof;
	int n = rnsc_stream_msg_decode(payload, len, &id, &eof, NULL, out,
				       len > RNSC_BUFFER_MAX_CHUNK_LEN ? len
								       : RNSC_BUFFER_MAX_CHUNK_LEN);
	int rc = n < 0 ? n : append(r, out, (size_t)n);
	rnsc_free(r->ctx, out);
	if (rc) {
		r->errors++;
		rnsc_log(r->ctx, RNSC_LOG_WARNING, WHO, "stream %u: message dropped: %s", id,
			 rnsc_strerror(rc));
		return 0;
	}
	if (eof)
		r->eof = 1;
	if (r->ready)
		r->ready(r->ud, r, r->len);
	return 1;
}

int rnsc_buffer_reader_new(rnsc_buffer_reader **out, rnsc_channel *ch, unsigned stream_id,
			   rnsc_buffer_ready_fn ready, void *ud)
{
	if (!out || !ch)
		return RNSC_ERR_INVAL;
	*out = NULL;
	if (stream_id > RNSC_BUFFER_STREAM_ID_MAX)
		return RNSC_ERR_RANGE;
	rnsc_ctx *ctx = rnsc_channel_context(ch);
	rnsc_buffer_reader *r = rnsc_calloc(ctx, 1, sizeof(*r));
	if (!r)
		return RNSC_ERR_NOMEM;
	r->ctx = ctx;
	r->ch = ch;
	r->stream_id = stream_id;
	r->ready = ready;
	r->ud = ud;
	int rc = rnsc_channel_register_type(ch, RNSC_CHANNEL_SMT_STREAM_DATA, 1);
	if (rc == 0)
		rc = rnsc_channel_add_handler(ch, on_message, r);
	if (rc) {
		rnsc_free(ctx, r);
		return rc;
	}
	*out = r;
	return 0;
}

void rnsc_buffer_reader_del(rnsc_buffer_reader *r)
{
	if (!r)
		return;
	(void)rnsc_channel_remove_handler(r->ch, on_message, r);
	rnsc_free(r->ctx, r->buf);
	rnsc_free(r->ctx, r);
}

int rnsc_buffer_reader_read(rnsc_buffer_reader *r, uint8_t *out, size_t cap)
{
	if (!r || (!out && cap))
		return RNSC_ERR_INVAL;
	size_t n = r->len < cap ? r->len : cap;
	if (n > INT_MAX)
		n = INT_MAX;
	if (n)
		memcpy(out, r->buf + r->start, n);
	r->start += n;
	r->len -= n;
	if (!r->len)
		r->start = 0;
	return (int)n;
}

size_t rnsc_buffer_reader_available(const rnsc_buffer_reader *r)
{
	return r ? r->len : 0;
}

int rnsc_buffer_reader_eof(const rnsc_buffer_reader *r)
{
	return r ? r->eof && r->len == 0 : 1;
}

uint64_t rnsc_buffer_reader_errors(const rnsc_buffer_reader *r)
{
	return r ? r->errors : 0;
}
