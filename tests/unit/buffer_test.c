/* SPDX-License-Identifier: MIT */
/*
 * Buffer (src/lib/buffer.c): StreamDataMessage layout and decoding (bz2 as the reference
 * decides it, the 16 KiB bound, broken streams), the writer's chunking rule, and a stream
 * over a channel on an rnsc link pair (compressible and incompressible data, EOF, other
 * stream ids, a full window, readers and writers on one channel).
 * conformance/request_xcheck_test.c compares the message bytes with the reference.
 */
#include "buffer.h"

#include <bzlib.h>

#include "destination.h"
#include "wire_test_util.h"

typedef struct side {
	rnsc_link *l;
	rnsc_channel *ch;
} side;

static side A, B;
static uint64_t now = 1000;

static void on_packet(void *ud, rnsc_link *l, int context, const uint8_t *d, size_t n,
		      const rnsc_packet *pk, const uint8_t *raw, size_t raw_len)
{
	(void)l, (void)raw, (void)raw_len;
	side *s = ud;
	if (!s->ch)
		return;
	if (pk->packet_type == RNSC_PKT_PROOF && context == RNSC_CTX_NONE) {
		int rc = rnsc_channel_proof(s->ch, d, n, now);
		(void)rc;
	} else if (context == RNSC_CTX_CHANNEL)
		(void)rnsc_channel_receive(s->ch, d, n, now);
}

static const rnsc_link_callbacks CBS = {NULL, NULL, on_packet, NULL, NULL};

static int move(side *from, side *to)
{
	uint8_t f[600];
	int n = rnsc_link_outbox_pop(from->l, f, sizeof(f));
	if (n <= 0)
		return n == 0 ? 1 : n;
	return rnsc_link_receive(to->l, f, (size_t)n, now);
}

static void pump(void)
{
	for (int i = 0; i < 10000; i++) {
		int a = move(&A, &B), b = move(&B, &A);
		if (a == 1 && b == 1)
			return;
	}
	CU_FAIL("pump did not settle");
}

static void free_pair(void)
{
	rnsc_channel_del(A.ch);
	rnsc_channel_del(B.ch);
	rnsc_link_del(A.l);
	rnsc_link_del(B.l);
	memset(&A, 0, sizeof(A));
	memset(&B, 0, sizeof(B));
}

static void pair(void)
{
	free_pair();
	rnsc_identity dest;
	uint8_t dh[16];
	const char *asp[] = {"buffer"};
	CU_ASSERT_FATAL(rnsc_identity_generate(C, &dest) == 0);
	CU_ASSERT_FATAL(rnsc_destination_hash(C, dh, dest.hash, "rnsc", asp, 1) == 0);
	rnsc_link_initiate_params p = {.hops = 1};
	now = 1000;
	CU_ASSERT_FATAL(rnsc_link_initiate(C, &A.l, dh, &dest, &p, now) == 0);
	uint8_t f[600];
	int n = rnsc_link_outbox_pop(A.l, f, sizeof(f));
	CU_ASSERT_FATAL(rnsc_link_accept(C, &B.l, &dest, f, (size_t)n, RNSC_MTU, now + 40) == 0);
	now += 100;
	CU_ASSERT_FATAL(move(&B, &A) == 0);
	now += 50;
	CU_ASSERT_FATAL(move(&A, &B) == 0);
	rnsc_identity_free(&dest);
	rnsc_link_set_callbacks(A.l, &CBS, &A);
	rnsc_link_set_callbacks(B.l, &CBS, &B);
	CU_ASSERT_FATAL(rnsc_channel_new(&A.ch, A.l) == 0);
	CU_ASSERT_FATAL(rnsc_channel_new(&B.ch, B.l) == 0);
}

static void t_message(void)
{
	uint8_t m[64], out[RNSC_BUFFER_MAX_CHUNK_LEN];
	CU_ASSERT_EQUAL(rnsc_stream_msg_pack(m, sizeof(m), 0x1234, 0, 0, (const uint8_t *)"ab", 2),
			4);
	CU_ASSERT(eqhex(m, 4, "12346162"));
	CU_ASSERT_EQUAL(rnsc_stream_msg_pack(m, sizeof(m), 5, 1, 0, NULL, 0), 2);
	CU_ASSERT(eqhex(m, 2, "8005"));
	CU_ASSERT_EQUAL(rnsc_stream_msg_pack(m, sizeof(m), 0x3FFF, 1, 1, NULL, 0), 2);
	CU_ASSERT(eqhex(m, 2, "ffff"));
	CU_ASSERT_EQUAL(rnsc_stream_msg_pack(m, sizeof(m), 0x4000, 0, 0, NULL, 0), RNSC_ERR_RANGE);
	CU_ASSERT_EQUAL(rnsc_stream_msg_pack(m, 3, 1, 0, 0, (const uint8_t *)"ab", 2),
			RNSC_ERR_BUFSIZE);
	CU_ASSERT_EQUAL(rnsc_stream_msg_pack(NULL, 3, 1, 0, 0, NULL, 0), RNSC_ERR_INVAL);
	unsigned id;
	int eof, comp;
	const uint8_t *d;
	size_t dl;
	CU_ASSERT_EQUAL(rnsc_stream_msg_parse(m, 2, &id, &eof, &comp, &d, &dl), 0);
	CU_ASSERT(id == 0x3FFF && eof && comp && dl == 0);
	CU_ASSERT_EQUAL(rnsc_stream_msg_parse(m, 1, &id, &eof, &comp, &d, &dl), RNSC_ERR_TRUNCATED);
	CU_ASSERT_EQUAL(rnsc_stream_msg_parse(NULL, 1, &id, &eof, &comp, &d, &dl), RNSC_ERR_INVAL);
	/* decode: plain and compressed */
	int n = rnsc_stream_msg_pack(m, sizeof(m), 7, 0, 0, (const uint8_t *)"hello", 5);
	CU_ASSERT_EQUAL(rnsc_stream_msg_decode(m, (size_t)n, &id, &eof, &comp, out, 5), 5);
	CU_ASSERT(id == 7 && !eof && !comp && memcmp(out, "hello", 5) == 0);
	CU_ASSERT_EQUAL(rnsc_stream_msg_decode(m, (size_t)n, &id, &eof, &comp, out, 4),
			RNSC_ERR_BUFSIZE);
	CU_ASSERT_EQUAL(rnsc_stream_msg_decode(m, (size_t)n, &id, &eof, &comp, NULL, 4),
			RNSC_ERR_INVAL);
	static uint8_t big[RNSC_BUFFER_MAX_CHUNK_LEN + 1], z[20000], msg[20000];
	memset(big, 'a', sizeof(big));
	int zl = rnsc_stream_bz2(z, sizeof(z), big, RNSC_BUFFER_MAX_CHUNK_LEN);
	CU_ASSERT_FATAL(zl > 0);
	n = rnsc_stream_msg_pack(msg, sizeof(msg), 9, 1, 1, z, (size_t)zl);
	CU_ASSERT_EQUAL(rnsc_stream_msg_decode(msg, (size_t)n, &id, &eof, &comp, out, sizeof(out)),
			RNSC_BUFFER_MAX_CHUNK_LEN);
	CU_ASSERT(id == 9 && eof && comp && out[0] == 'a' && out[16383] == 'a');
	CU_ASSERT_EQUAL(rnsc_stream_msg_decode(msg, (size_t)n, &id, &eof, &comp, out, 100),
			RNSC_ERR_BUFSIZE);
	/* trailing bytes after the bz2 stream are ignored (BZ2Decompressor.unused_data) */
	msg[n] = 0x55;
	CU_ASSERT_EQUAL(
		rnsc_stream_msg_decode(msg, (size_t)n + 1, &id, &eof, &comp, out, sizeof(out)),
		RNSC_BUFFER_MAX_CHUNK_LEN);
	/* one byte more than 16 KiB: "exceeds maximum legitimate size" */
	zl = rnsc_stream_bz2(z, sizeof(z), big, sizeof(big));
	n = rnsc_stream_msg_pack(msg, sizeof(msg), 9, 0, 1, z, (size_t)zl);
	CU_ASSERT_EQUAL(rnsc_stream_msg_decode(msg, (size_t)n, &id, &eof, &comp, out, sizeof(out)),
			RNSC_ERR_MALFORMED);
	/* truncated, empty and garbage streams */
	zl = rnsc_stream_bz2(z, sizeof(z), big, 100);
	n = rnsc_stream_msg_pack(msg, sizeof(msg), 9, 0, 1, z, (size_t)zl - 1);
	CU_ASSERT_EQUAL(rnsc_stream_msg_decode(msg, (size_t)n, &id, &eof, &comp, out, sizeof(out)),
			RNSC_ERR_MALFORMED);
	n = rnsc_stream_msg_pack(msg, sizeof(msg), 9, 0, 1, NULL, 0);
	CU_ASSERT_EQUAL(rnsc_stream_msg_decode(msg, (size_t)n, &id, &eof, &comp, out, sizeof(out)),
			RNSC_ERR_MALFORMED);
	n = rnsc_stream_msg_pack(msg, sizeof(msg), 9, 0, 1, (const uint8_t *)"notbz2", 6);
	CU_ASSERT_EQUAL(rnsc_stream_msg_decode(msg, (size_t)n, &id, &eof, &comp, out, sizeof(out)),
			RNSC_ERR_MALFORMED);
	/* bz2: matches libbz2 at level 9 (what Python's bz2.compress runs) */
	unsigned ref_len = sizeof(msg);
	CU_ASSERT_EQUAL(BZ2_bzBuffToBuffCompress((char *)msg, &ref_len, (char *)big, 1000, 9, 0, 0),
			BZ_OK);
	zl = rnsc_stream_bz2(z, sizeof(z), big, 1000);
	CU_ASSERT(zl == (int)ref_len && memcmp(z, msg, ref_len) == 0);
	CU_ASSERT_EQUAL(rnsc_stream_bz2(z, 10, big, 1000), RNSC_ERR_BUFSIZE);
	CU_ASSERT_EQUAL(rnsc_stream_bz2(NULL, 10, big, 1000), RNSC_ERR_INVAL);
}

static void t_chunk(void)
{
	static uint8_t data[20000], out[20000];
	size_t taken;
	int comp;
	/* short input: never compressed */
	memset(data, 'x', sizeof(data));
	CU_ASSERT_EQUAL(rnsc_stream_chunk(out, sizeof(out), 400, data, 32, &taken, &comp), 32);
	CU_ASSERT(taken == 32 && !comp);
	/* compressible: the whole (16 KiB-capped) input in one compressed chunk */
	int n = rnsc_stream_chunk(out, sizeof(out), 400, data, sizeof(data), &taken, &comp);
	CU_ASSERT(n > 0 && n < 400 && comp && taken == RNSC_BUFFER_MAX_CHUNK_LEN);
	/* incompressible: the first MDU bytes as they are */
	uint64_t s = 1;
	for (size_t i = 0; i < sizeof(data); i++) {
		s = s * 6364136223846793005u + 1442695040888963407u;
		data[i] = (uint8_t)(s >> 56);
	}
	n = rnsc_stream_chunk(out, sizeof(out), 400, data, sizeof(data), &taken, &comp);
	CU_ASSERT(n == 400 && !comp && taken == 400 && memcmp(out, data, 400) == 0);
	/* compressible only in part: the second try (half) fits */
	memset(data, 'y', 6000);
	n = rnsc_stream_chunk(out, sizeof(out), 300, data, 12000, &taken, &comp);
	CU_ASSERT(comp && taken == 6000 && n < 300);
	/* errors */
	CU_ASSERT_EQUAL(rnsc_stream_chunk(out, 10, 400, data, 1000, &taken, &comp),
			RNSC_ERR_BUFSIZE);
	memset(data, 'z', 1000);
	CU_ASSERT_EQUAL(rnsc_stream_chunk(out, 5, 400, data, 1000, &taken, &comp),
			RNSC_ERR_BUFSIZE);
	CU_ASSERT_EQUAL(rnsc_stream_chunk(NULL, 5, 400, data, 1000, &taken, &comp), RNSC_ERR_INVAL);
}

static unsigned g_ready;
static size_t g_ready_bytes;

static void on_ready(void *ud, rnsc_buffer_reader *r, size_t ready)
{
	(void)ud, (void)r;
	g_ready++;
	g_ready_bytes = ready;
}

static void t_stream(void)
{
	pair();
	rnsc_buffer_reader *r, *r2;
	rnsc_buffer_writer *w, *w2;
	CU_ASSERT_EQUAL(rnsc_buffer_reader_new(&r, B.ch, 3, on_ready, NULL), 0);
	CU_ASSERT_EQUAL(rnsc_buffer_reader_new(&r2, B.ch, 4, NULL, NULL), 0);
	CU_ASSERT_EQUAL(rnsc_buffer_writer_new(&w, A.ch, 3), 0);
	CU_ASSERT_EQUAL(rnsc_buffer_writer_new(&w2, A.ch, 4), 0);
	CU_ASSERT_EQUAL(rnsc_buffer_writer_mdu(w), rnsc_channel_mdu(A.ch) - 2);
	/* 60 KB: compressible halves and random halves */
	static uint8_t data[60000], got[70000];
	uint64_t s = 7;
	for (size_t i = 0; i < sizeof(data); i++) {
		s = s * 6364136223846793005u + 1442695040888963407u;
		data[i] = (i / 5000) % 2 ? (uint8_t)(s >> 56) : (uint8_t)(i % 7);
	}
	size_t off = 0, got_n = 0, zero_writes = 0;
	while (off < sizeof(data)) {
		int n = rnsc_buffer_writer_write(w, data + off, sizeof(data) - off, now);
		CU_ASSERT_FATAL(n >= 0);
		if (n == 0) {
			zero_writes++;
			now += 10;
			pump();
		}
		off += (size_t)n;
		int k = rnsc_buffer_reader_read(r, got + got_n, sizeof(got) - got_n);
		got_n += (size_t)k;
	}
	CU_ASSERT(zero_writes > 0); /* the window filled at least once */
	while (rnsc_buffer_writer_close(w, now) == RNSC_ERR_STATE) {
		now += 10;
		pump();
	}
	/* a message on stream 4 goes to the other reader */
	while (rnsc_buffer_writer_write(w2, (const uint8_t *)"other", 5, now) == 0) {
		now += 10;
		pump();
	}
	pump();
	got_n += (size_t)rnsc_buffer_reader_read(r, got + got_n, sizeof(got) - got_n);
	CU_ASSERT_EQUAL(got_n, sizeof(data));
	CU_ASSERT(memcmp(got, data, sizeof(data)) == 0);
	CU_ASSERT(rnsc_buffer_reader_eof(r));
	CU_ASSERT(g_ready > 0 && g_ready_bytes <= sizeof(data));
	CU_ASSERT_EQUAL(rnsc_buffer_reader_available(r2), 5);
	CU_ASSERT(!rnsc_buffer_reader_eof(r2));
	uint8_t o[8];
	CU_ASSERT_EQUAL(rnsc_buffer_reader_read(r2, o, 2), 2);
	CU_ASSERT_EQUAL(rnsc_buffer_reader_read(r2, o + 2, 8), 3);
	CU_ASSERT(memcmp(o, "other", 5) == 0);
	CU_ASSERT_EQUAL(rnsc_buffer_reader_read(r2, o, 8), 0);
	CU_ASSERT_EQUAL(rnsc_buffer_reader_errors(r), 0);
	/* a broken compressed message for the stream is dropped and counted */
	uint8_t bad[8];
	int bl = rnsc_stream_msg_pack(bad, sizeof(bad), 3, 0, 1, (const uint8_t *)"xx", 2);
	while (rnsc_channel_send(A.ch, RNSC_CHANNEL_SMT_STREAM_DATA, bad, (size_t)bl, NULL, now)) {
		now += 10;
		pump();
	}
	pump();
	CU_ASSERT_EQUAL(rnsc_buffer_reader_errors(r), 1);
	/* a message too short for its header, and another type, reach no reader */
	CU_ASSERT_EQUAL(rnsc_channel_register_type(B.ch, 0x0102, 0), 0);
	while (rnsc_channel_send(A.ch, RNSC_CHANNEL_SMT_STREAM_DATA, bad, 1, NULL, now)) {
		now += 10;
		pump();
	}
	while (rnsc_channel_send(A.ch, 0x0102, bad, 2, NULL, now)) {
		now += 10;
		pump();
	}
	pump();
	CU_ASSERT_EQUAL(rnsc_buffer_reader_errors(r), 1);
	/* argument errors and NULLs */
	rnsc_buffer_writer *wx;
	rnsc_buffer_reader *rx;
	CU_ASSERT_EQUAL(rnsc_buffer_writer_new(&wx, A.ch, 0x4000), RNSC_ERR_RANGE);
	CU_ASSERT_EQUAL(rnsc_buffer_writer_new(NULL, A.ch, 1), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_buffer_reader_new(&rx, B.ch, 0x4000, NULL, NULL), RNSC_ERR_RANGE);
	CU_ASSERT_EQUAL(rnsc_buffer_reader_new(NULL, B.ch, 1, NULL, NULL), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_buffer_writer_write(NULL, NULL, 0, now), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_buffer_writer_close(NULL, now), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_buffer_reader_read(NULL, o, 1), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_buffer_reader_available(NULL), 0);
	CU_ASSERT(rnsc_buffer_reader_eof(NULL));
	CU_ASSERT_EQUAL(rnsc_buffer_reader_errors(NULL), 0);
	CU_ASSERT_EQUAL(rnsc_buffer_writer_mdu(NULL), 0);
	rnsc_buffer_reader_del(NULL);
	rnsc_buffer_writer_del(NULL);
	/* allocation failure while receiving: the message is dropped and counted */
	while (rnsc_buffer_writer_write(w, (const uint8_t *)"again", 5, now) == 0) {
		now += 10;
		pump();
	}
	uint8_t f[600];
	int fl = rnsc_link_outbox_pop(A.l, f, sizeof(f));
	CU_ASSERT_FATAL(fl > 0);
	rnsc_ctx_fail_alloc_after(C, 2);
	int rrc = rnsc_link_receive(B.l, f, (size_t)fl, now);
	(void)rrc;
	rnsc_ctx_fail_alloc_after(C, 0);
	CU_ASSERT(rnsc_buffer_reader_errors(r) >= 1);
	/* the channel shut down: writes fail */
	CU_ASSERT(rnsc_link_teardown(A.l, now) >= 0);
	CU_ASSERT_EQUAL(rnsc_buffer_writer_write(w, (const uint8_t *)"x", 1, now), RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(rnsc_buffer_writer_close(w, now), RNSC_ERR_STATE);
	rnsc_buffer_reader_del(r);
	rnsc_buffer_reader_del(r2);
	rnsc_buffer_writer_del(w);
	rnsc_buffer_writer_del(w2);
	free_pair();
}

/* What the Buffer work added to the channel: the context accessor, the receive span, the
 * sender's span rule, proofs checked by the layer below (rnsc_channel_delivered), and a
 * channel on a custom port. */
static const rnsc_link *port_get(const rnsc_linkport *p)
{
	return p->link;
}

static int port_send(const rnsc_linkport *p, int context, const uint8_t *data, size_t len,
		     uint8_t hash[32], uint64_t n)
{
	return rnsc_link_send(p->link, context, data, len, hash, n);
}

static const rnsc_link *ud_get(const rnsc_linkport *p)
{
	return p->ud;
}

static int ud_send(const rnsc_linkport *p, int context, const uint8_t *data, size_t len,
		   uint8_t hash[32], uint64_t n)
{
	return rnsc_link_send(p->ud, context, data, len, hash, n);
}

static int port_teardown(const rnsc_linkport *p, uint64_t n)
{
	return rnsc_link_teardown(p->link, n);
}

static void port_set_channel(const rnsc_linkport *p, int on)
{
	rnsc_link_set_channel(p->link, on);
}

static void t_channel_additions(void)
{
	pair();
	CU_ASSERT_PTR_EQUAL(rnsc_channel_context(A.ch), C);
	CU_ASSERT_PTR_NULL(rnsc_channel_context(NULL));
	CU_ASSERT_EQUAL(rnsc_channel_set_rx_span(B.ch, 47), RNSC_ERR_RANGE);
	CU_ASSERT_EQUAL(rnsc_channel_set_rx_span(B.ch, 255), RNSC_ERR_RANGE);
	CU_ASSERT_EQUAL(rnsc_channel_set_rx_span(NULL, 100), RNSC_ERR_RANGE);
	CU_ASSERT_EQUAL(rnsc_channel_register_type(B.ch, 0x0101, 0), 0);
	/* a sequence 60 ahead: refused at the default span, held with a wider one */
	uint8_t env[16];
	int n = rnsc_channel_envelope_pack(env, sizeof(env), 0x0101, 60, (const uint8_t *)"x", 1);
	CU_ASSERT_EQUAL(rnsc_channel_receive(B.ch, env, (size_t)n, now), RNSC_ERR_RANGE);
	CU_ASSERT_EQUAL(rnsc_channel_set_rx_span(B.ch, 100), 0);
	CU_ASSERT_EQUAL(rnsc_channel_receive(B.ch, env, (size_t)n, now), 0);
	CU_ASSERT_EQUAL(rnsc_channel_held(B.ch), 1);
	n = rnsc_channel_envelope_pack(env, sizeof(env), 0x0101, 101, (const uint8_t *)"x", 1);
	CU_ASSERT_EQUAL(rnsc_channel_receive(B.ch, env, (size_t)n, now), RNSC_ERR_RANGE);
	/* delivered by hash (the engine checked the proof): the first outstanding one */
	CU_ASSERT_EQUAL(rnsc_channel_send(A.ch, 0x0101, (const uint8_t *)"a", 1, NULL, now), 0);
	uint8_t f[600], h[32];
	int fl = rnsc_link_outbox_pop(A.l, f, sizeof(f));
	CU_ASSERT_FATAL(fl > 0);
	CU_ASSERT_EQUAL(rnsc_packet_hash(C, h, f, (size_t)fl), 0);
	uint8_t other[32] = {0};
	CU_ASSERT_EQUAL(rnsc_channel_delivered(A.ch, other, now), RNSC_ERR_NOTFOUND);
	CU_ASSERT_EQUAL(rnsc_channel_delivered(A.ch, h, now), 0);
	CU_ASSERT_EQUAL(rnsc_channel_outstanding(A.ch), 0);
	CU_ASSERT_EQUAL(rnsc_channel_delivered(NULL, h, now), RNSC_ERR_INVAL);
	/* the sender's span rule: with the oldest envelope stuck, the window may allow more
	 * but no sequence 48 past it goes out */
	rnsc_channel *c2;
	rnsc_linkport port;
	rnsc_linkport_on_link(&port, A.l);
	port.get = port_get;
	port.send = port_send;
	port.teardown = port_teardown;
	port.set_channel = port_set_channel;
	CU_ASSERT_EQUAL(rnsc_channel_new_port(&c2, C, &port), 0);
	rnsc_linkport bad = port;
	bad.send = NULL;
	rnsc_channel *c3;
	CU_ASSERT_EQUAL(rnsc_channel_new_port(&c3, C, &bad), RNSC_ERR_INVAL);
	uint8_t stuck_hash[32];
	CU_ASSERT_EQUAL(rnsc_channel_send(c2, 0x0101, (const uint8_t *)"s", 1, NULL, now), 0);
	fl = rnsc_link_outbox_pop(A.l, f, sizeof(f));
	CU_ASSERT_EQUAL(rnsc_packet_hash(C, stuck_hash, f, (size_t)fl), 0);
	unsigned sent = 1;
	for (int i = 0; i < 200 && sent < 200; i++) {
		if (!rnsc_channel_ready(c2))
			break;
		CU_ASSERT_EQUAL(rnsc_channel_send(c2, 0x0101, (const uint8_t *)"m", 1, NULL, now),
				0);
		fl = rnsc_link_outbox_pop(A.l, f, sizeof(f));
		CU_ASSERT_EQUAL(rnsc_packet_hash(C, h, f, (size_t)fl), 0);
		CU_ASSERT_EQUAL(rnsc_channel_delivered(c2, h, now), 0); /* all but the first */
		sent++;
	}
	CU_ASSERT_EQUAL(sent, RNSC_CHANNEL_WINDOW_MAX);
	CU_ASSERT_EQUAL(rnsc_channel_outstanding(c2), 1);
	CU_ASSERT(!rnsc_channel_ready(c2));
	/* a proof this port cannot check itself: the engine path is _delivered */
	uint8_t proof[96];
	memcpy(proof, stuck_hash, 32);
	memset(proof + 32, 0, 64);
	CU_ASSERT_EQUAL(rnsc_channel_proof(c2, proof, sizeof(proof), now), RNSC_ERR_SIGNATURE);
	CU_ASSERT_EQUAL(rnsc_channel_delivered(c2, stuck_hash, now), 0);
	CU_ASSERT(rnsc_channel_ready(c2));
	rnsc_channel_del(c2);
	/* a port without a bare link (its link reached through ud): rnsc_channel_proof says
	 * STATE, the proof must come through rnsc_channel_delivered */
	port.ud = A.l;
	port.link = NULL;
	port.get = ud_get;
	port.send = ud_send;
	CU_ASSERT_EQUAL(rnsc_channel_new_port(&c2, C, &port), 0);
	CU_ASSERT_EQUAL(rnsc_channel_send(c2, 0x0101, (const uint8_t *)"u", 1, NULL, now), 0);
	fl = rnsc_link_outbox_pop(A.l, f, sizeof(f));
	CU_ASSERT_EQUAL(rnsc_packet_hash(C, h, f, (size_t)fl), 0);
	memcpy(proof, h, 32);
	CU_ASSERT_EQUAL(rnsc_channel_proof(c2, proof, sizeof(proof), now), RNSC_ERR_STATE);
	rnsc_channel_del(c2);
	free_pair();
}

int main(void)
{
	static const wt_test tests[] = {
		{"channel additions", t_channel_additions},
		{"stream data message", t_message},
		{"writer chunking", t_chunk},
		{"stream over a channel", t_stream},
	};
	return wt_main("buffer", tests, sizeof(tests) / sizeof(tests[0]));
}
