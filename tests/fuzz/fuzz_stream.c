/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the Buffer's StreamDataMessage (src/lib/buffer.c): any input is a
 * message to decode (the header, and bz2 with the reference's 16 KiB bound when the
 * compressed flag is set). Rejections must be documented codes; a decoded message packs
 * back (uncompressed) to a message that decodes to the same data; and the writer's chunking
 * of the input must produce a chunk that decodes to the bytes it says it took.
 */
#include "buffer.h"
#include "fuzz_wire.h"

static const int CODES[] = {RNSC_ERR_MALFORMED, RNSC_ERR_TRUNCATED, RNSC_ERR_NOMEM, 0};
static uint8_t out[RNSC_BUFFER_MAX_CHUNK_LEN], msg[RNSC_BUFFER_MAX_CHUNK_LEN + 2],
	again[RNSC_BUFFER_MAX_CHUNK_LEN], chunk[RNSC_BUFFER_MAX_CHUNK_LEN + 2];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned id;
	int eof, comp;
	int n = rnsc_stream_msg_decode(data, size, &id, &eof, &comp, out, sizeof(out));
	FUZZ_CHECK(fuzz_code_in(n, CODES) || (n == RNSC_ERR_BUFSIZE && !comp));
	if (n >= 0) {
		FUZZ_CHECK(id <= RNSC_BUFFER_STREAM_ID_MAX && (size_t)n <= sizeof(out));
		int m = rnsc_stream_msg_pack(msg, sizeof(msg), id, eof, 0, out, (size_t)n);
		FUZZ_CHECK(m == n + 2);
		unsigned id2;
		int eof2, comp2;
		int k = rnsc_stream_msg_decode(msg, (size_t)m, &id2, &eof2, &comp2, again,
					       sizeof(again));
		FUZZ_CHECK(k == n && id2 == id && eof2 == eof && !comp2 &&
			   memcmp(again, out, (size_t)n) == 0);
	}
	/* the writer's rule on the input as data, with an MDU taken from its first byte */
	size_t mdu = size ? 64 + (size_t)data[0] * 8 : 64;
	size_t taken;
	int c = rnsc_stream_chunk(chunk + 2, mdu, mdu, data, size, &taken, &comp);
	FUZZ_CHECK(c >= 0 && (size_t)c <= mdu && taken <= size);
	if (size > 0)
		FUZZ_CHECK(taken > 0);
	chunk[0] = comp ? 0x40 : 0;
	chunk[1] = 1;
	int k = rnsc_stream_msg_decode(chunk, (size_t)c + 2, &id, &eof, &comp, again,
				       sizeof(again));
	FUZZ_CHECK(k >= 0 && (size_t)k == taken && memcmp(again, data, taken) == 0);
	return 0;
}
