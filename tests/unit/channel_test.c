/* SPDX-License-Identifier: MIT */
/*
 * Channel (src/lib/channel.c) over an rnsc link pair: envelope layout, ordered delivery both
 * ways with proofs, the window (growth, full, fast-rate upgrade), reordering, duplicates and
 * the receive window, sequence wrap, retransmission with a new packet hash and the teardown
 * after the last try. conformance/link_xcheck_test.c checks envelopes and delivery against
 * the reference's Channel.
 */
#include "channel.h"

#include "destination.h"
#include "wire_test_util.h"

typedef struct side {
	rnsc_link *l;
	rnsc_channel *ch;
	unsigned got;
	uint16_t seqs[1024];
	uint8_t last[512];
	size_t last_len;
	uint16_t last_type;
	int stop_first; /* the first handler claims the message */
	unsigned second;
	int proof_rc, receive_rc; /* the channel's verdicts on the last proof / envelope */
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
	if (pk->packet_type == RNSC_PKT_PROOF && context == RNSC_CTX_NONE)
		s->proof_rc = rnsc_channel_proof(s->ch, d, n, now);
	else if (context == RNSC_CTX_CHANNEL)
		s->receive_rc = rnsc_channel_receive(s->ch, d, n, now);
}

static const rnsc_link_callbacks CBS = {NULL, NULL, on_packet, NULL, NULL};

static int handler1(void *ud, rnsc_channel *ch, uint16_t type, uint16_t seq, const uint8_t *p,
		    size_t n)
{
	(void)ch;
	side *s = ud;
	if (s->got < sizeof(s->seqs) / sizeof(s->seqs[0]))
		s->seqs[s->got] = seq;
	s->got++;
	s->last_type = type;
	s->last_len = n < sizeof(s->last) ? n : sizeof(s->last);
	memcpy(s->last, p, s->last_len);
	return s->stop_first;
}

static int handler2(void *ud, rnsc_channel *ch, uint16_t type, uint16_t seq, const uint8_t *p,
		    size_t n)
{
	(void)ch, (void)type, (void)seq, (void)p, (void)n;
	((side *)ud)->second++;
	return 0;
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

static int move(side *from, side *to)
{
	uint8_t f[600];
	int n = rnsc_link_outbox_pop(from->l, f, sizeof(f));
	if (n <= 0)
		return n == 0 ? 1 : n;
	return rnsc_link_receive(to->l, f, (size_t)n, now);
}

/* Moves frames both ways until both outboxes are empty. */
static void pump(void)
{
	for (int i = 0; i < 1000; i++) {
		int a = move(&A, &B), b = move(&B, &A);
		CU_ASSERT(a == 0 || a == 1);
		CU_ASSERT(b == 0 || b == 1);
		if (a == 1 && b == 1)
			return;
	}
	CU_FAIL("pump did not settle");
}

static void pair(void)
{
	free_pair();
	rnsc_identity dest;
	uint8_t dh[16];
	const char *asp[] = {"channel"};
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
	rnsc_link_set_proof_strategy(A.l, RNSC_PROVE_NONE);
	CU_ASSERT_FATAL(rnsc_channel_new(&A.ch, A.l) == 0);
	CU_ASSERT_FATAL(rnsc_channel_new(&B.ch, B.l) == 0);
	CU_ASSERT(rnsc_channel_register_type(A.ch, 0x0101, 0) == 0);
	CU_ASSERT(rnsc_channel_register_type(B.ch, 0x0101, 0) == 0);
	CU_ASSERT(rnsc_channel_add_handler(A.ch, handler1, &A) == 0);
	CU_ASSERT(rnsc_channel_add_handler(B.ch, handler1, &B) == 0);
	CU_ASSERT(rnsc_channel_add_handler(B.ch, handler2, &B) == 0);
}

static void t_envelope(void)
{
	uint8_t e[16];
	CU_ASSERT_EQUAL(
		rnsc_channel_envelope_pack(e, sizeof(e), 0xABCD, 0x0102, (const uint8_t *)"hi", 2),
		8);
	CU_ASSERT(eqhex(e, 8, "abcd010200026869"));
	CU_ASSERT_EQUAL(rnsc_channel_envelope_pack(e, 7, 1, 1, (const uint8_t *)"hi", 2),
			RNSC_ERR_BUFSIZE);
	uint16_t t, s, l;
	const uint8_t *p;
	size_t pl;
	CU_ASSERT_EQUAL(rnsc_channel_envelope_parse(e, 8, &t, &s, &l, &p, &pl), 0);
	CU_ASSERT(t == 0xABCD && s == 0x0102 && l == 2 && pl == 2 && p == e + 6);
	CU_ASSERT_EQUAL(rnsc_channel_envelope_parse(e, 5, &t, &s, &l, &p, &pl), RNSC_ERR_TRUNCATED);
	/* the length field is not checked, as the reference does not */
	e[5] = 9;
	CU_ASSERT_EQUAL(rnsc_channel_envelope_parse(e, 8, &t, &s, &l, &p, &pl), 0);
	CU_ASSERT(l == 9 && pl == 2);
}

static void t_delivery_and_window(void)
{
	pair();
	CU_ASSERT_EQUAL(rnsc_channel_window(A.ch), 2);
	CU_ASSERT_EQUAL(rnsc_channel_window_max(A.ch), 5);
	CU_ASSERT_EQUAL(rnsc_channel_mdu(A.ch), RNSC_LINK_MDU - 6);
	uint16_t seq;
	CU_ASSERT_EQUAL(rnsc_channel_send(A.ch, 0x0101, (const uint8_t *)"one", 3, &seq, now), 0);
	CU_ASSERT_EQUAL(seq, 0);
	CU_ASSERT_EQUAL(rnsc_channel_send(A.ch, 0x0101, (const uint8_t *)"two", 3, &seq, now), 0);
	CU_ASSERT_EQUAL(seq, 1);
	/* the window of 2 is full */
	CU_ASSERT(!rnsc_channel_ready(A.ch));
	CU_ASSERT_EQUAL(rnsc_channel_send(A.ch, 0x0101, (const uint8_t *)"3", 1, NULL, now),
			RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(rnsc_channel_outstanding(A.ch), 2);
	now += 10;
	pump();
	CU_ASSERT_EQUAL(B.got, 2);
	CU_ASSERT_EQUAL(B.second, 2);
	CU_ASSERT(B.seqs[0] == 0 && B.seqs[1] == 1);
	CU_ASSERT(B.last_len == 3 && memcmp(B.last, "two", 3) == 0 && B.last_type == 0x0101);
	CU_ASSERT_EQUAL(rnsc_channel_outstanding(A.ch), 0); /* both proved */
	CU_ASSERT_EQUAL(rnsc_channel_window(A.ch), 4);
	/* the first handler can claim a message */
	B.stop_first = 1;
	CU_ASSERT_EQUAL(rnsc_channel_send(A.ch, 0x0101, (const uint8_t *)"x", 1, NULL, now), 0);
	pump();
	CU_ASSERT(B.got == 3 && B.second == 2);
	/* the other way */
	CU_ASSERT_EQUAL(rnsc_channel_send(B.ch, 0x0101, (const uint8_t *)"back", 4, NULL, now), 0);
	pump();
	CU_ASSERT(A.got == 1 && A.last_len == 4 && memcmp(A.last, "back", 4) == 0);
	/* rtt 0.1 s < 0.18 s: ten deliveries in a row open the window to 48 */
	for (int i = 0; i < 8; i++) {
		CU_ASSERT_EQUAL(rnsc_channel_send(A.ch, 0x0101, (const uint8_t *)"r", 1, NULL, now),
				0);
		pump();
	}
	CU_ASSERT_EQUAL(rnsc_channel_window_max(A.ch), 48);
	CU_ASSERT_EQUAL(rnsc_channel_window_min(A.ch), 16);
	/* 40 more, as fast as the window allows: it keeps opening */
	int sent = 0, rounds = 0;
	while (sent < 40 && rounds++ < 40) {
		while (sent < 40 && rnsc_channel_ready(A.ch)) {
			CU_ASSERT_EQUAL(
				rnsc_channel_send(A.ch, 0x0101, (const uint8_t *)"w", 1, NULL, now),
				0);
			sent++;
		}
		pump();
	}
	CU_ASSERT_EQUAL(B.got, 3 + 8 + 40);
	CU_ASSERT(rnsc_channel_window(A.ch) > 20);
	/* too big for one packet */
	uint8_t big[RNSC_LINK_MDU];
	memset(big, 0, sizeof(big));
	CU_ASSERT_EQUAL(rnsc_channel_send(A.ch, 0x0101, big, RNSC_LINK_MDU - 5, NULL, now),
			RNSC_ERR_TOOBIG);
	CU_ASSERT_EQUAL(rnsc_channel_send(A.ch, 0x0101, big, RNSC_LINK_MDU - 6, NULL, now), 0);
	pump();
	CU_ASSERT_EQUAL(B.last_len,
			sizeof(B.last) < RNSC_LINK_MDU - 6 ? sizeof(B.last) : RNSC_LINK_MDU - 6);
	CU_ASSERT_EQUAL(rnsc_channel_register_type(A.ch, 0xF000, 0), RNSC_ERR_RANGE);
	CU_ASSERT_EQUAL(rnsc_channel_register_type(A.ch, RNSC_CHANNEL_SMT_STREAM_DATA, 1), 0);
	CU_ASSERT_EQUAL(rnsc_channel_remove_handler(B.ch, handler2, &B), 0);
	CU_ASSERT_EQUAL(rnsc_channel_remove_handler(B.ch, handler2, &B), RNSC_ERR_NOTFOUND);
	free_pair();
}

static int feed(side *s, uint16_t type, uint16_t seq, const char *msg)
{
	uint8_t e[64];
	int n = rnsc_channel_envelope_pack(e, sizeof(e), type, seq, (const uint8_t *)msg,
					   strlen(msg));
	return rnsc_channel_receive(s->ch, e, (size_t)n, now);
}

static void t_receive_order(void)
{
	pair();
	CU_ASSERT_EQUAL(feed(&B, 0x0101, 2, "c"), 0);
	CU_ASSERT_EQUAL(feed(&B, 0x0101, 1, "b"), 0);
	CU_ASSERT_EQUAL(B.got, 0);
	CU_ASSERT_EQUAL(rnsc_channel_held(B.ch), 2);
	CU_ASSERT_EQUAL(feed(&B, 0x0101, 1, "b"), RNSC_ERR_RANGE); /* held twice */
	CU_ASSERT_EQUAL(feed(&B, 0x0101, 0, "a"), 0);
	CU_ASSERT_EQUAL(B.got, 3);
	CU_ASSERT(B.seqs[0] == 0 && B.seqs[1] == 1 && B.seqs[2] == 2);
	CU_ASSERT_EQUAL(rnsc_channel_held(B.ch), 0);
	CU_ASSERT_EQUAL(feed(&B, 0x0101, 1, "b"), RNSC_ERR_RANGE); /* already delivered */
	CU_ASSERT_EQUAL(feed(&B, 0x0101, 3 + 49, "far"), RNSC_ERR_RANGE);
	CU_ASSERT_EQUAL(feed(&B, 0x0101, 3 + 48, "edge"), 0);
	CU_ASSERT_EQUAL(feed(&B, 0x0202, 3, "unknown type"), RNSC_ERR_NOTFOUND);
	CU_ASSERT_EQUAL(rnsc_channel_next_rx_sequence(B.ch), 3); /* not taken */
	CU_ASSERT_EQUAL(rnsc_channel_receive(B.ch, (const uint8_t *)"\x01\x01\x00", 3, now),
			RNSC_ERR_TRUNCATED);
	free_pair();

	/* sequence wrap: 0..65533 in order, then 65535 and 0 held, then 65534 releases all */
	pair();
	for (uint32_t s = 0; s < 65534; s++)
		if (feed(&B, 0x0101, (uint16_t)s, "") != 0) {
			CU_FAIL("in-order envelope refused");
			break;
		}
	CU_ASSERT_EQUAL(B.got, 65534);
	CU_ASSERT_EQUAL(feed(&B, 0x0101, 65535, "z"), 0);
	CU_ASSERT_EQUAL(feed(&B, 0x0101, 0, "wrapped"), 0);
	CU_ASSERT_EQUAL(feed(&B, 0x0101, 47, "beyond the wrapped window"), RNSC_ERR_RANGE);
	CU_ASSERT_EQUAL(B.got, 65534);
	CU_ASSERT_EQUAL(feed(&B, 0x0101, 65534, "y"), 0);
	CU_ASSERT_EQUAL(B.got, 65537);
	CU_ASSERT(B.last_len == 7 && memcmp(B.last, "wrapped", 7) == 0);
	CU_ASSERT_EQUAL(rnsc_channel_next_rx_sequence(B.ch), 1);
	free_pair();
}

static void t_retransmit(void)
{
	pair();
	CU_ASSERT_EQUAL(rnsc_channel_send(A.ch, 0x0101, (const uint8_t *)"lost", 4, NULL, now), 0);
	uint8_t f1[600], f2[600];
	int n1 = rnsc_link_outbox_pop(A.l, f1, sizeof(f1));
	CU_ASSERT_FATAL(n1 > 0);
	/* 1.5^0 * max(0.1 * 2.5, 0.025) * (1 + 1.5) = 0.625 s */
	uint64_t sent = now;
	CU_ASSERT_EQUAL(rnsc_channel_next_deadline(A.ch), sent + 626);
	CU_ASSERT_EQUAL(rnsc_channel_tick(A.ch, sent + 625), 0);
	CU_ASSERT_EQUAL(rnsc_link_outbox_count(A.l), 0);
	now = sent + 626;
	CU_ASSERT_EQUAL(rnsc_channel_tick(A.ch, now), 0);
	int n2 = rnsc_link_outbox_pop(A.l, f2, sizeof(f2));
	CU_ASSERT_FATAL(n2 == n1);
	CU_ASSERT(memcmp(f1, f2, (size_t)n1) != 0); /* new IV */
	/* the late first copy arrives and is proved: that proof names the old hash */
	CU_ASSERT_EQUAL(rnsc_link_receive(B.l, f1, (size_t)n1, now), 0);
	CU_ASSERT_EQUAL(B.got, 1);
	uint8_t pf[600];
	int pn = rnsc_link_outbox_pop(B.l, pf, sizeof(pf));
	CU_ASSERT_FATAL(pn > 0);
	CU_ASSERT_EQUAL(rnsc_link_receive(A.l, pf, (size_t)pn, now), 0);
	CU_ASSERT_EQUAL(A.proof_rc, RNSC_ERR_NOTFOUND);
	CU_ASSERT_EQUAL(rnsc_channel_outstanding(A.ch), 1); /* not the current copy */
	/* the resent copy is a duplicate for the receiver, but still proved by the link */
	CU_ASSERT_EQUAL(rnsc_link_receive(B.l, f2, (size_t)n2, now), 0);
	CU_ASSERT_EQUAL(B.receive_rc, RNSC_ERR_RANGE);
	CU_ASSERT_EQUAL(B.got, 1);
	pump();
	CU_ASSERT_EQUAL(A.proof_rc, 0);
	CU_ASSERT_EQUAL(rnsc_channel_outstanding(A.ch), 0);

	/* nothing ever arrives: 5 tries, then the channel shuts down and the link is torn down */
	CU_ASSERT_EQUAL(rnsc_channel_send(A.ch, 0x0101, (const uint8_t *)"void", 4, NULL, now), 0);
	int sends = 1;
	for (int i = 0; i < 10 && !rnsc_channel_is_shut_down(A.ch); i++) {
		uint8_t f[600];
		while (rnsc_link_outbox_pop(A.l, f, sizeof(f)) > 0)
			;
		now = rnsc_channel_next_deadline(A.ch);
		CU_ASSERT_EQUAL(rnsc_channel_tick(A.ch, now), 0);
		if (!rnsc_channel_is_shut_down(A.ch))
			sends++;
	}
	CU_ASSERT_EQUAL(sends, RNSC_CHANNEL_MAX_TRIES);
	CU_ASSERT(rnsc_channel_is_shut_down(A.ch));
	CU_ASSERT_EQUAL(rnsc_link_status(A.l), RNSC_LINK_CLOSED);
	CU_ASSERT_EQUAL(rnsc_channel_next_deadline(A.ch), UINT64_MAX);
	CU_ASSERT_EQUAL(rnsc_channel_send(A.ch, 0x0101, (const uint8_t *)"x", 1, NULL, now),
			RNSC_ERR_STATE);
	/* the responder's channel shuts down with its link */
	CU_ASSERT_EQUAL(move(&A, &B), 0);
	CU_ASSERT_EQUAL(rnsc_link_status(B.l), RNSC_LINK_CLOSED);
	CU_ASSERT_EQUAL(feed(&B, 0x0101, 1, "late"), RNSC_ERR_STATE);
	CU_ASSERT(rnsc_channel_is_shut_down(B.ch));
	free_pair();
}

static void t_window_shrinks(void)
{
	pair();
	/* grow to 4 first */
	for (int i = 0; i < 2; i++) {
		CU_ASSERT_EQUAL(rnsc_channel_send(A.ch, 0x0101, (const uint8_t *)"g", 1, NULL, now),
				0);
		pump();
	}
	CU_ASSERT_EQUAL(rnsc_channel_window(A.ch), 4);
	CU_ASSERT_EQUAL(rnsc_channel_send(A.ch, 0x0101, (const uint8_t *)"t", 1, NULL, now), 0);
	uint8_t f[600];
	CU_ASSERT(rnsc_link_outbox_pop(A.l, f, sizeof(f)) > 0);
	now = rnsc_channel_next_deadline(A.ch);
	CU_ASSERT_EQUAL(rnsc_channel_tick(A.ch, now), 0);
	CU_ASSERT_EQUAL(rnsc_channel_window(A.ch), 3);
	CU_ASSERT_EQUAL(rnsc_channel_window_max(A.ch), 5); /* 5 > 2 + 4 is false: unchanged */
	pump();
	free_pair();
}

static void t_slow_link(void)
{
	/* a link RTT above 1.45 s gives a window of 1 */
	free_pair();
	rnsc_identity dest;
	uint8_t dh[16], f[600];
	const char *asp[] = {"slow"};
	CU_ASSERT_FATAL(rnsc_identity_generate(C, &dest) == 0);
	CU_ASSERT_FATAL(rnsc_destination_hash(C, dh, dest.hash, "rnsc", asp, 1) == 0);
	rnsc_link_initiate_params p = {.hops = 1};
	CU_ASSERT_FATAL(rnsc_link_initiate(C, &A.l, dh, &dest, &p, 0) == 0);
	int n = rnsc_link_outbox_pop(A.l, f, sizeof(f));
	CU_ASSERT_FATAL(rnsc_link_accept(C, &B.l, &dest, f, (size_t)n, RNSC_MTU, 1000) == 0);
	now = 2000;
	CU_ASSERT_FATAL(move(&B, &A) == 0);
	CU_ASSERT_FATAL(rnsc_channel_new(&A.ch, A.l) == 0);
	CU_ASSERT_EQUAL(rnsc_channel_window(A.ch), 1);
	CU_ASSERT_EQUAL(rnsc_channel_window_max(A.ch), 1);
	rnsc_identity_free(&dest);
	free_pair();
}

static void t_api_edges(void)
{
	pair();
	uint8_t e[8];
	CU_ASSERT_EQUAL(rnsc_channel_envelope_pack(NULL, 8, 1, 1, NULL, 0), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_channel_envelope_pack(e, 8, 1, 1, NULL, 1), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_channel_envelope_pack(e, 8, 1, 1, NULL, 0), 6);
	CU_ASSERT_EQUAL(rnsc_channel_envelope_parse(NULL, 3, NULL, NULL, NULL, NULL, NULL),
			RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_channel_envelope_parse(e, 6, NULL, NULL, NULL, NULL, NULL), 0);
	CU_ASSERT_EQUAL(rnsc_channel_new(NULL, A.l), RNSC_ERR_INVAL);
	/* the type table grows */
	for (uint16_t t = 1; t <= 40; t++)
		CU_ASSERT_EQUAL(rnsc_channel_register_type(A.ch, t, 0), 0);
	CU_ASSERT_EQUAL(rnsc_channel_register_type(A.ch, 7, 0), 0);
	CU_ASSERT_EQUAL(rnsc_channel_register_type(NULL, 7, 0), RNSC_ERR_INVAL);
	/* handler limits */
	CU_ASSERT_EQUAL(rnsc_channel_add_handler(A.ch, handler1, &A), 0); /* already there */
	for (int i = 0; i < RNSC_CHANNEL_MAX_HANDLERS - 1; i++)
		CU_ASSERT_EQUAL(rnsc_channel_add_handler(A.ch, handler2, &B.seqs[i]), 0);
	CU_ASSERT_EQUAL(rnsc_channel_add_handler(A.ch, handler2, &A), RNSC_ERR_RANGE);
	CU_ASSERT_EQUAL(rnsc_channel_add_handler(A.ch, NULL, &A), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_channel_remove_handler(A.ch, NULL, &A), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_channel_send(NULL, 1, NULL, 0, NULL, now), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_channel_receive(NULL, NULL, 0, now), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_channel_proof(NULL, NULL, 0, now), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_channel_proof(A.ch, e, 6, now), RNSC_ERR_NOTFOUND);
	CU_ASSERT_EQUAL(rnsc_channel_tick(NULL, now), RNSC_ERR_INVAL);
	/* a forged proof naming an outstanding envelope is refused */
	uint8_t h[32];
	CU_ASSERT_EQUAL(rnsc_channel_send(A.ch, 0x0101, (const uint8_t *)"p", 1, NULL, now), 0);
	uint8_t f[600];
	int n = rnsc_link_outbox_pop(A.l, f, sizeof(f));
	CU_ASSERT_FATAL(n > 0);
	CU_ASSERT_EQUAL(rnsc_packet_hash(C, h, f, (size_t)n), 0);
	uint8_t forged[96];
	memcpy(forged, h, 32);
	memset(forged + 32, 0x11, 64);
	CU_ASSERT_EQUAL(rnsc_channel_proof(A.ch, forged, 96, now), RNSC_ERR_SIGNATURE);
	CU_ASSERT_EQUAL(rnsc_channel_outstanding(A.ch), 1);
	CU_ASSERT(!rnsc_channel_window(NULL) && !rnsc_channel_window_max(NULL) &&
		  !rnsc_channel_window_min(NULL) && !rnsc_channel_outstanding(NULL) &&
		  !rnsc_channel_held(NULL) && !rnsc_channel_next_sequence(NULL) &&
		  !rnsc_channel_next_rx_sequence(NULL) && rnsc_channel_is_shut_down(NULL) &&
		  !rnsc_channel_mdu(NULL) && !rnsc_channel_ready(NULL));
	CU_ASSERT_EQUAL(rnsc_channel_next_deadline(NULL), UINT64_MAX);
	rnsc_channel_del(NULL);
	/* allocation failures while sending and receiving: clean errors */
	rnsc_ctx_fail_alloc_after(C, 1);
	int rc = feed(&B, 0x0101, 0, "x");
	rnsc_ctx_fail_alloc_after(C, 0);
	CU_ASSERT_EQUAL(rc, RNSC_ERR_NOMEM);
	free_pair();
}

int main(void)
{
	static const wt_test tests[] = {
		{"envelope", t_envelope},
		{"delivery, proofs, window", t_delivery_and_window},
		{"receive order, duplicates, window, wrap", t_receive_order},
		{"retransmission and last try", t_retransmit},
		{"window shrinks on timeout", t_window_shrinks},
		{"slow link window", t_slow_link},
		{"API edges", t_api_edges},
	};
	return wt_main("channel", tests, sizeof(tests) / sizeof(tests[0]));
}
