/* SPDX-License-Identifier: MIT */
/*
 * The link state machine (src/lib/link.c), rnsc against rnsc: handshake, data both ways,
 * proofs, keepalives, stale and establishment timeouts, teardown by either side, identify,
 * MTU signalling, and the rejections (bad proof signature, wrong mode, tampered ciphertext,
 * truncated packets). conformance/link_xcheck_test.c runs the same exchanges against the
 * reference.
 */
#include "link.h"

#include "destination.h"
#include "token.h"
#include "wire_test_util.h"

typedef struct side {
	rnsc_link *l;
	int established, closed, identified;
	int last_ctx;
	uint8_t last[1024];
	size_t last_len;
	unsigned packets;
	uint8_t who_hash[16];
	int prove_app;
} side;

static void cb_est(void *ud, rnsc_link *l)
{
	(void)l;
	((side *)ud)->established++;
}

static void cb_closed(void *ud, rnsc_link *l)
{
	(void)l;
	((side *)ud)->closed++;
}

static void cb_packet(void *ud, rnsc_link *l, int context, const uint8_t *d, size_t n,
		      const rnsc_packet *pk, const uint8_t *raw, size_t raw_len)
{
	(void)l, (void)pk, (void)raw, (void)raw_len;
	side *s = ud;
	s->packets++;
	s->last_ctx = context;
	s->last_len = n < sizeof(s->last) ? n : sizeof(s->last);
	memcpy(s->last, d, s->last_len);
}

static void cb_ident(void *ud, rnsc_link *l, const rnsc_identity *who)
{
	(void)l;
	side *s = ud;
	s->identified++;
	memcpy(s->who_hash, who->hash, 16);
}

static int cb_proof_req(void *ud, rnsc_link *l, const rnsc_packet *pk)
{
	(void)l, (void)pk;
	return ((side *)ud)->prove_app;
}

static const rnsc_link_callbacks CBS = {cb_est, cb_closed, cb_packet, cb_ident, cb_proof_req};

static rnsc_identity dest_id;
static uint8_t dest_hash[16];
static side A, B; /* A initiates, B responds */

static void destination(void)
{
	CU_ASSERT_FATAL(rnsc_identity_generate(C, &dest_id) == 0);
	const char *asp[] = {"link"};
	CU_ASSERT_FATAL(rnsc_destination_hash(C, dest_hash, dest_id.hash, "rnsc", asp, 1) == 0);
}

/* Moves one frame from a's outbox into b; returns rnsc_link_receive's code (1 when empty). */
static int shuttle(side *a, side *b, uint64_t now)
{
	uint8_t f[8192];
	int n = rnsc_link_outbox_pop(a->l, f, sizeof(f));
	CU_ASSERT(n >= 0);
	if (n <= 0)
		return 1;
	return rnsc_link_receive(b->l, f, (size_t)n, now);
}

static void drop_all(side *s)
{
	uint8_t f[8192];
	while (rnsc_link_outbox_pop(s->l, f, sizeof(f)) > 0)
		;
}

static void teardown_pair(void)
{
	rnsc_link_del(A.l);
	rnsc_link_del(B.l);
	memset(&A, 0, sizeof(A));
	memset(&B, 0, sizeof(B));
}

/* Initiator at t0 with hw_mtu, responder accepts at t0 + 40 with nh_mtu; stops before the
 * proof is delivered. */
static void start(uint32_t hw_mtu, uint32_t nh_mtu, uint64_t t0)
{
	teardown_pair();
	destination();
	rnsc_link_initiate_params p = {.hw_mtu = hw_mtu, .hops = 1};
	CU_ASSERT_FATAL(rnsc_link_initiate(C, &A.l, dest_hash, &dest_id, &p, t0) == 0);
	rnsc_link_set_callbacks(A.l, &CBS, &A);
	CU_ASSERT_EQUAL(rnsc_link_status(A.l), RNSC_LINK_PENDING);
	CU_ASSERT_EQUAL(rnsc_link_outbox_count(A.l), 1);
	uint8_t req[600];
	int n = rnsc_link_outbox_pop(A.l, req, sizeof(req));
	CU_ASSERT_EQUAL_FATAL(n, 19 + 67); /* 1.5.4 always signals */
	CU_ASSERT_EQUAL(req[0] & 0x03, RNSC_PKT_LINKREQUEST);
	CU_ASSERT(memcmp(req + 2, dest_hash, 16) == 0);
	if (!hw_mtu) /* mode AES_256_CBC in the top 3 bits, MTU 500 below */
		CU_ASSERT(eqhex(req + 19 + 64, 3, "2001f4"));
	CU_ASSERT_FATAL(rnsc_link_accept(C, &B.l, &dest_id, req, (size_t)n, nh_mtu, t0 + 40) == 0);
	rnsc_link_set_callbacks(B.l, &CBS, &B);
	CU_ASSERT_EQUAL(rnsc_link_status(B.l), RNSC_LINK_HANDSHAKE);
	CU_ASSERT(memcmp(rnsc_link_id(A.l), rnsc_link_id(B.l), 16) == 0);
	CU_ASSERT_EQUAL(rnsc_link_outbox_count(B.l), 1);
	CU_ASSERT_PTR_NULL(rnsc_link_derived_key(A.l));
	CU_ASSERT_PTR_NOT_NULL(rnsc_link_derived_key(B.l));
}

/* A full handshake: A at 1000 ms, proof back at 1100, RTT at 1150. */
static void establish(uint32_t hw_mtu, uint32_t nh_mtu)
{
	start(hw_mtu, nh_mtu, 1000);
	CU_ASSERT_EQUAL(shuttle(&B, &A, 1100), 0);
	CU_ASSERT_EQUAL(rnsc_link_status(A.l), RNSC_LINK_ACTIVE);
	CU_ASSERT_EQUAL(A.established, 1);
	CU_ASSERT_EQUAL(shuttle(&A, &B, 1150), 0);
	CU_ASSERT_EQUAL(rnsc_link_status(B.l), RNSC_LINK_ACTIVE);
	CU_ASSERT_EQUAL(B.established, 1);
}

static void t_handshake(void)
{
	establish(0, RNSC_MTU);
	CU_ASSERT(memcmp(rnsc_link_derived_key(A.l), rnsc_link_derived_key(B.l), 64) == 0);
	CU_ASSERT_EQUAL(rnsc_link_mtu(A.l), RNSC_MTU);
	CU_ASSERT_EQUAL(rnsc_link_mtu(B.l), RNSC_MTU);
	CU_ASSERT_EQUAL(rnsc_link_get_mdu(A.l), RNSC_LINK_MDU);
	CU_ASSERT_DOUBLE_EQUAL(rnsc_link_rtt(A.l), 0.1, 1e-9);
	/* the responder takes the larger of its own measure (110 ms) and the reported 100 ms */
	CU_ASSERT_DOUBLE_EQUAL(rnsc_link_rtt(B.l), 0.11, 1e-9);
	/* keepalive = rtt * 360 / 1.75 s (at least 5 s), in ms rounded up */
	CU_ASSERT_EQUAL(rnsc_link_keepalive_ms(A.l), 20572);
	CU_ASSERT_EQUAL(rnsc_link_stale_time_ms(A.l), 2 * 20572);
	CU_ASSERT_EQUAL(rnsc_link_keepalive_ms(B.l), 22629);
	const rnsc_identity *r = rnsc_link_remote_identity(A.l);
	CU_ASSERT(r && memcmp(r->hash, dest_id.hash, 16) == 0);
	CU_ASSERT_PTR_NULL(rnsc_link_remote_identity(B.l));
	CU_ASSERT(rnsc_link_is_initiator(A.l) && !rnsc_link_is_initiator(B.l));
	CU_ASSERT_EQUAL(rnsc_link_get_mode(A.l), RNSC_LINK_MODE_AES256_CBC);
	CU_ASSERT_STRING_EQUAL(rnsc_link_status_name(rnsc_link_status(A.l)), "ACTIVE");
	/* establishment timeouts: initiator 6 s first hop + 6 s per hop, responder 6 s + 360 s */
	CU_ASSERT_EQUAL(rnsc_link_establishment_timeout_ms(A.l), 12000);
	CU_ASSERT_EQUAL(rnsc_link_establishment_timeout_ms(B.l), 366000);
	/* a second RTT or proof is not the initiator's business any more */
	CU_ASSERT_EQUAL(rnsc_link_outbox_count(A.l), 0);
	CU_ASSERT_EQUAL(rnsc_link_outbox_count(B.l), 0);
}

static void t_data_both_ways(void)
{
	establish(0, RNSC_MTU);
	static const uint8_t m1[] = "hello from the initiator";
	static const uint8_t m2[] = "and back from the responder";
	uint8_t h1[32];
	rnsc_link_set_proof_strategy(B.l, RNSC_PROVE_ALL);
	CU_ASSERT(rnsc_link_send(A.l, RNSC_CTX_NONE, m1, sizeof(m1), h1, 2000) > 0);
	CU_ASSERT_EQUAL(shuttle(&A, &B, 2010), 0);
	CU_ASSERT_EQUAL(B.packets, 1);
	CU_ASSERT_EQUAL(B.last_ctx, RNSC_CTX_NONE);
	CU_ASSERT(B.last_len == sizeof(m1) && memcmp(B.last, m1, sizeof(m1)) == 0);
	/* PROVE_ALL: the proof comes back and validates against the sent packet's hash */
	uint8_t f[600];
	int n = rnsc_link_outbox_pop(B.l, f, sizeof(f));
	CU_ASSERT_EQUAL_FATAL(n, 19 + 96);
	rnsc_packet pk;
	CU_ASSERT_FATAL(rnsc_packet_unpack(&pk, f, (size_t)n) == 0);
	CU_ASSERT_EQUAL(pk.packet_type, RNSC_PKT_PROOF);
	CU_ASSERT_EQUAL(pk.dest_type, RNSC_DEST_LINK);
	CU_ASSERT_EQUAL(rnsc_link_validate_proof(A.l, h1, pk.data, pk.data_len, 2015), 0);
	uint8_t bad[96];
	memcpy(bad, pk.data, 96);
	bad[70] ^= 1;
	CU_ASSERT_EQUAL(rnsc_link_validate_proof(A.l, h1, bad, 96, 2015), RNSC_ERR_SIGNATURE);
	h1[0] ^= 1;
	CU_ASSERT_EQUAL(rnsc_link_validate_proof(A.l, h1, pk.data, 96, 2015), RNSC_ERR_PROOF_HASH);
	/* the proof handed to the link reaches the packet callback, for the receipts */
	unsigned before = A.packets;
	CU_ASSERT_EQUAL(rnsc_link_receive(A.l, f, (size_t)n, 2020), 0);
	CU_ASSERT_EQUAL(A.packets, before + 1);
	CU_ASSERT(A.last_ctx == RNSC_CTX_NONE && A.last_len == 96 &&
		  memcmp(A.last, pk.data, 96) == 0);

	CU_ASSERT(rnsc_link_send(B.l, RNSC_CTX_NONE, m2, sizeof(m2), NULL, 2100) > 0);
	CU_ASSERT_EQUAL(shuttle(&B, &A, 2110), 0);
	CU_ASSERT(A.last_len == sizeof(m2) && memcmp(A.last, m2, sizeof(m2)) == 0);
	CU_ASSERT_EQUAL(rnsc_link_outbox_count(A.l), 0); /* A proves nothing by default */

	/* PROVE_APP asks the callback */
	rnsc_link_set_proof_strategy(A.l, RNSC_PROVE_APP);
	A.prove_app = 1;
	CU_ASSERT(rnsc_link_send(B.l, RNSC_CTX_REQUEST, m2, sizeof(m2), NULL, 2200) > 0);
	CU_ASSERT_EQUAL(shuttle(&B, &A, 2210), 0);
	CU_ASSERT_EQUAL(A.last_ctx, RNSC_CTX_REQUEST);
	CU_ASSERT_EQUAL(rnsc_link_outbox_count(A.l), 0); /* only context NONE is proved */
	CU_ASSERT(rnsc_link_send(B.l, RNSC_CTX_NONE, m2, sizeof(m2), NULL, 2300) > 0);
	CU_ASSERT_EQUAL(shuttle(&B, &A, 2310), 0);
	CU_ASSERT_EQUAL(rnsc_link_outbox_count(A.l), 1);
	CU_ASSERT_EQUAL(rnsc_link_set_proof_strategy(A.l, 7), RNSC_ERR_INVAL);

	/* channel packets are dropped until the channel is on, then proved and delivered */
	CU_ASSERT(rnsc_link_send(A.l, RNSC_CTX_CHANNEL, m1, sizeof(m1), NULL, 2400) > 0);
	drop_all(&A);
	CU_ASSERT(rnsc_link_send(A.l, RNSC_CTX_CHANNEL, m1, sizeof(m1), NULL, 2400) > 0);
	CU_ASSERT_EQUAL(shuttle(&A, &B, 2410), RNSC_ERR_STATE);
	rnsc_link_set_channel(B.l, 1);
	drop_all(&B);
	CU_ASSERT(rnsc_link_send(A.l, RNSC_CTX_CHANNEL, m1, sizeof(m1), NULL, 2500) > 0);
	CU_ASSERT_EQUAL(shuttle(&A, &B, 2510), 0);
	CU_ASSERT_EQUAL(B.last_ctx, RNSC_CTX_CHANNEL);
	CU_ASSERT_EQUAL(rnsc_link_outbox_count(B.l), 1);

	uint64_t rx, rxb, tx, txb;
	rnsc_link_counters(B.l, &rx, &rxb, &tx, &txb);
	CU_ASSERT(rx >= 3 && tx >= 3 && rxb > 0 && txb > 0);
}

static void t_too_big(void)
{
	establish(0, RNSC_MTU);
	uint8_t big[RNSC_LINK_MDU + 1];
	memset(big, 0x5a, sizeof(big));
	CU_ASSERT(rnsc_link_send(A.l, RNSC_CTX_NONE, big, RNSC_LINK_MDU, NULL, 2000) ==
		  RNSC_MTU - 1);
	CU_ASSERT_EQUAL(rnsc_link_send(A.l, RNSC_CTX_NONE, big, sizeof(big), NULL, 2000),
			RNSC_ERR_TOOBIG);
	CU_ASSERT_EQUAL(rnsc_link_send(A.l, RNSC_CTX_NONE, big, 0, NULL, 2000), RNSC_ERR_TRUNCATED);
}

static void t_mtu_signalling(void)
{
	/* the responder's interface allows less than the path signalled: clamped */
	establish(8192, 4096);
	CU_ASSERT_EQUAL(rnsc_link_mtu(B.l), 4096);
	CU_ASSERT_EQUAL(rnsc_link_mtu(A.l), 4096);
	CU_ASSERT_EQUAL(rnsc_link_get_mdu(A.l), rnsc_link_mdu(4096));
	uint8_t big[3000];
	memset(big, 1, sizeof(big));
	CU_ASSERT(rnsc_link_send(A.l, RNSC_CTX_NONE, big, sizeof(big), NULL, 2000) > RNSC_MTU);
	CU_ASSERT_EQUAL(shuttle(&A, &B, 2010), 0);
	CU_ASSERT_EQUAL(B.last_len, 1024); /* the test's copy limit; the packet got through */
	/* no HW MTU at the responder: signalling ignored, 500 */
	establish(8192, 0);
	CU_ASSERT_EQUAL(rnsc_link_mtu(B.l), RNSC_MTU);
	CU_ASSERT_EQUAL(rnsc_link_mtu(A.l), RNSC_MTU);
	/* room for all of it */
	establish(8192, 16384);
	CU_ASSERT_EQUAL(rnsc_link_mtu(A.l), 8192);
}

static void t_keepalive_and_stale(void)
{
	establish(0, RNSC_MTU);
	uint64_t ka = rnsc_link_keepalive_ms(A.l), t;
	/* the reference's cadence plus a margin of the RTT, 50 ms at least */
	double rtt_ms = rnsc_link_rtt(A.l) * 1000.0;
	uint64_t margin = (uint64_t)rtt_ms;
	margin += (double)margin < rtt_ms; /* rounded up, as link.c's secs_to_ms */
	margin = margin < 50 ? 50 : margin > 1000 ? 1000 : margin;
	CU_ASSERT_EQUAL(rnsc_link_next_deadline(A.l), 1100 + ka + margin);
	CU_ASSERT_EQUAL(rnsc_link_tick(A.l, 1100 + ka + margin - 1), 0);
	CU_ASSERT_EQUAL(rnsc_link_outbox_count(A.l), 0);
	t = 1100 + ka + margin;
	CU_ASSERT_EQUAL(rnsc_link_tick(A.l, t), 0);
	uint8_t f[64];
	int n = rnsc_link_outbox_pop(A.l, f, sizeof(f));
	CU_ASSERT_EQUAL_FATAL(n, 20);
	CU_ASSERT_EQUAL(f[18], RNSC_CTX_KEEPALIVE);
	CU_ASSERT_EQUAL(f[19], 0xFF);
	/* unanswered: sent once more a quarter keepalive after the nominal time, and only once */
	uint64_t r = 1100 + ka + ka / 4;
	CU_ASSERT_EQUAL(rnsc_link_next_deadline(A.l), r);
	CU_ASSERT_EQUAL(rnsc_link_tick(A.l, r - 1), 0);
	CU_ASSERT_EQUAL(rnsc_link_outbox_count(A.l), 0);
	CU_ASSERT_EQUAL(rnsc_link_tick(A.l, r), 0);
	uint8_t g[64];
	CU_ASSERT_EQUAL(rnsc_link_outbox_pop(A.l, g, sizeof(g)), 20);
	CU_ASSERT_EQUAL(g[19], 0xFF);
	/* the schedule is the reference's: the next one is due a keepalive after the first's
	 * nominal time, which is also when the silent link goes STALE (stale_time = 2 x
	 * keepalive), not a keepalive after the re-send */
	CU_ASSERT_EQUAL(rnsc_link_next_deadline(A.l), 1100 + rnsc_link_stale_time_ms(A.l));
	CU_ASSERT_EQUAL(rnsc_link_stale_time_ms(A.l), 2 * ka);
	CU_ASSERT_EQUAL(rnsc_link_tick(A.l, 1100 + ka + ka / 2), 0);
	CU_ASSERT_EQUAL(rnsc_link_outbox_count(A.l), 0);
	/* the responder answers once it has been quiet for its own keepalive */
	CU_ASSERT_EQUAL(rnsc_link_receive(B.l, f, (size_t)n, t + 5), 0);
	CU_ASSERT_EQUAL(rnsc_link_outbox_count(B.l), 0);
	uint64_t tb = 1040 + rnsc_link_keepalive_ms(B.l);
	CU_ASSERT_EQUAL(rnsc_link_receive(B.l, f, (size_t)n, tb), 0);
	int m = rnsc_link_outbox_pop(B.l, f, sizeof(f));
	CU_ASSERT_EQUAL_FATAL(m, 20);
	CU_ASSERT_EQUAL(f[19], 0xFE);
	CU_ASSERT_EQUAL(rnsc_link_receive(A.l, f, (size_t)m, tb + 10), 0);
	/* an initiator ignores a keepalive request (not even counted as inbound) */
	f[19] = 0xFF;
	CU_ASSERT_EQUAL(rnsc_link_receive(A.l, f, (size_t)m, tb + 11), 0);
	CU_ASSERT_EQUAL(rnsc_link_outbox_count(A.l), 0);
	/* no answer when the responder sent something recently */
	CU_ASSERT(rnsc_link_send(B.l, RNSC_CTX_NONE, (const uint8_t *)"x", 1, NULL, tb + 20) > 0);
	drop_all(&B);
	CU_ASSERT_EQUAL(rnsc_link_receive(B.l, f, (size_t)m, tb + 30), 0);
	CU_ASSERT_EQUAL(rnsc_link_outbox_count(B.l), 0);

	/* silence: STALE after stale_time without inbound, then closed within the watchdog's
	 * 5 s nap with a LINKCLOSE */
	uint64_t li = tb + 10;
	uint64_t st = rnsc_link_stale_time_ms(A.l);
	drop_all(&A);
	for (uint64_t now = li + 1000; now < li + st; now += 1000)
		CU_ASSERT_EQUAL(rnsc_link_tick(A.l, now), 0);
	CU_ASSERT_EQUAL(rnsc_link_status(A.l), RNSC_LINK_ACTIVE);
	CU_ASSERT(rnsc_link_outbox_count(A.l) >= 1); /* keepalives kept going out */
	drop_all(&A);
	CU_ASSERT_EQUAL(rnsc_link_tick(A.l, li + st), 0);
	CU_ASSERT_EQUAL(rnsc_link_status(A.l), RNSC_LINK_STALE);
	CU_ASSERT_EQUAL(rnsc_link_next_deadline(A.l), li + st + 5000);
	/* traffic revives a stale link */
	CU_ASSERT(rnsc_link_send(B.l, RNSC_CTX_NONE, (const uint8_t *)"y", 1, NULL, li + st + 1) >
		  0);
	CU_ASSERT_EQUAL(shuttle(&B, &A, li + st + 2), 0);
	CU_ASSERT_EQUAL(rnsc_link_status(A.l), RNSC_LINK_ACTIVE);
	li = li + st + 2;
	drop_all(&A);
	CU_ASSERT_EQUAL(rnsc_link_tick(A.l, li + st), 0);
	CU_ASSERT_EQUAL(rnsc_link_status(A.l), RNSC_LINK_STALE);
	drop_all(&A);
	CU_ASSERT_EQUAL(rnsc_link_tick(A.l, li + st + 4999), 0);
	CU_ASSERT_EQUAL(rnsc_link_status(A.l), RNSC_LINK_STALE);
	CU_ASSERT_EQUAL(rnsc_link_tick(A.l, li + st + 5000), 0);
	CU_ASSERT_EQUAL(rnsc_link_status(A.l), RNSC_LINK_CLOSED);
	CU_ASSERT_EQUAL(rnsc_link_reason(A.l), RNSC_LINK_TIMEOUT);
	CU_ASSERT_EQUAL(A.closed, 1);
	CU_ASSERT_PTR_NULL(rnsc_link_derived_key(A.l));
	CU_ASSERT_EQUAL(rnsc_link_next_deadline(A.l), UINT64_MAX);
	/* its LINKCLOSE closes the responder */
	CU_ASSERT_EQUAL(shuttle(&A, &B, li + st + 5010), 0);
	CU_ASSERT_EQUAL(rnsc_link_status(B.l), RNSC_LINK_CLOSED);
	CU_ASSERT_EQUAL(rnsc_link_reason(B.l), RNSC_LINK_INITIATOR_CLOSED);
	CU_ASSERT_EQUAL(B.closed, 1);
	/* a closed link takes nothing and sends nothing */
	CU_ASSERT_EQUAL(rnsc_link_send(A.l, RNSC_CTX_NONE, f, 1, NULL, li + st + 6000),
			RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(rnsc_link_receive(A.l, f, (size_t)m, li + st + 6000), RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(rnsc_link_teardown(A.l, li + st + 6000), 0);
	CU_ASSERT_EQUAL(A.closed, 1);
}

static void t_establishment_timeout(void)
{
	start(0, RNSC_MTU, 1000);
	/* the proof never arrives */
	CU_ASSERT_EQUAL(rnsc_link_next_deadline(A.l), 1000 + 12000);
	CU_ASSERT_EQUAL(rnsc_link_tick(A.l, 12999), 0);
	CU_ASSERT_EQUAL(rnsc_link_status(A.l), RNSC_LINK_PENDING);
	CU_ASSERT_EQUAL(rnsc_link_tick(A.l, 13000), 0);
	CU_ASSERT_EQUAL(rnsc_link_status(A.l), RNSC_LINK_CLOSED);
	CU_ASSERT_EQUAL(rnsc_link_reason(A.l), RNSC_LINK_TIMEOUT);
	CU_ASSERT_EQUAL(A.closed, 1);
	CU_ASSERT_EQUAL(rnsc_link_outbox_count(A.l), 0); /* nothing to say on a pending link */
	/* the responder waits for the RTT packet 6 s per hop plus a keepalive */
	CU_ASSERT_EQUAL(rnsc_link_next_deadline(B.l), 1040 + 366000);
	CU_ASSERT_EQUAL(rnsc_link_tick(B.l, 1040 + 365999), 0);
	CU_ASSERT_EQUAL(rnsc_link_status(B.l), RNSC_LINK_HANDSHAKE);
	CU_ASSERT_EQUAL(rnsc_link_tick(B.l, 1040 + 366000), 0);
	CU_ASSERT_EQUAL(rnsc_link_status(B.l), RNSC_LINK_CLOSED);
	CU_ASSERT_EQUAL(rnsc_link_reason(B.l), RNSC_LINK_TIMEOUT);

	/* hops and first-hop timeout of the path */
	rnsc_link *l;
	rnsc_link_initiate_params p = {.hops = 3, .first_hop_timeout_ms = 6500};
	CU_ASSERT_FATAL(rnsc_link_initiate(C, &l, dest_hash, &dest_id, &p, 0) == 0);
	CU_ASSERT_EQUAL(rnsc_link_establishment_timeout_ms(l), 6500 + 18000);
	rnsc_link_del(l);
	/* unknown path: the reference counts PATHFINDER_M hops */
	CU_ASSERT_FATAL(rnsc_link_initiate(C, &l, dest_hash, &dest_id, NULL, 0) == 0);
	CU_ASSERT_EQUAL(rnsc_link_establishment_timeout_ms(l), 6000 + 6000 * 128);
	rnsc_link_del(l);
}

static void t_bad_proof(void)
{
	start(0, RNSC_MTU, 1000);
	uint8_t f[600];
	int n = rnsc_link_outbox_pop(B.l, f, sizeof(f));
	CU_ASSERT_EQUAL_FATAL(n, 19 + 99);
	uint8_t bad[600];
	/* wrong length: ignored, still pending */
	CU_ASSERT_EQUAL(rnsc_link_receive(A.l, f, (size_t)n - 2, 1100), RNSC_ERR_MALFORMED);
	CU_ASSERT_EQUAL(rnsc_link_status(A.l), RNSC_LINK_PENDING);
	/* data for a pending initiator: not its business */
	rnsc_packet dp = {.dest_type = RNSC_DEST_LINK,
			  .packet_type = RNSC_PKT_DATA,
			  .data = (const uint8_t *)"x",
			  .data_len = 1};
	memcpy(dp.dest_hash, rnsc_link_id(A.l), 16);
	int dn = rnsc_packet_pack(bad, sizeof(bad), &dp, RNSC_MTU);
	CU_ASSERT_EQUAL(rnsc_link_receive(A.l, bad, (size_t)dn, 1100), RNSC_ERR_STATE);
	/* another link's id */
	memcpy(bad, f, (size_t)n);
	bad[5] ^= 1;
	CU_ASSERT_EQUAL(rnsc_link_receive(A.l, bad, (size_t)n, 1100), RNSC_ERR_NOTFOUND);
	/* a forged signature leaves the link in HANDSHAKE, and the genuine proof is then ignored */
	memcpy(bad, f, (size_t)n);
	bad[19 + 10] ^= 0x40;
	CU_ASSERT_EQUAL(rnsc_link_receive(A.l, bad, (size_t)n, 1100), RNSC_ERR_SIGNATURE);
	CU_ASSERT_EQUAL(rnsc_link_status(A.l), RNSC_LINK_HANDSHAKE);
	CU_ASSERT_EQUAL(A.established, 0);
	CU_ASSERT_EQUAL(rnsc_link_outbox_count(A.l), 0);
	CU_ASSERT_EQUAL(rnsc_link_receive(A.l, f, (size_t)n, 1101), RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(rnsc_link_status(A.l), RNSC_LINK_HANDSHAKE);
	CU_ASSERT_EQUAL(rnsc_link_tick(A.l, 13000), 0);
	CU_ASSERT_EQUAL(rnsc_link_reason(A.l), RNSC_LINK_TIMEOUT);

	/* a proof by another identity */
	start(0, RNSC_MTU, 1000);
	n = rnsc_link_outbox_pop(B.l, f, sizeof(f));
	rnsc_identity other;
	CU_ASSERT_FATAL(rnsc_identity_generate(C, &other) == 0);
	uint8_t pd[99];
	CU_ASSERT_EQUAL(rnsc_link_proof_build(pd, sizeof(pd), &other, rnsc_link_id(A.l),
					      f + 19 + 64, 1, RNSC_MTU, RNSC_LINK_MODE_DEFAULT),
			99);
	memcpy(bad, f, 19);
	memcpy(bad + 19, pd, 99);
	CU_ASSERT_EQUAL(rnsc_link_receive(A.l, bad, 118, 1100), RNSC_ERR_SIGNATURE);
	CU_ASSERT_EQUAL(rnsc_link_status(A.l), RNSC_LINK_HANDSHAKE);
	rnsc_identity_free(&other);

	/* another mode: the link closes (no callback, as the reference) */
	start(0, RNSC_MTU, 1000);
	n = rnsc_link_outbox_pop(B.l, f, sizeof(f));
	f[19 + 96] = (uint8_t)((f[19 + 96] & 0x1F) | (RNSC_LINK_MODE_AES256_GCM << 5));
	CU_ASSERT_EQUAL(rnsc_link_receive(A.l, f, (size_t)n, 1100), RNSC_ERR_LINK_MODE);
	CU_ASSERT_EQUAL(rnsc_link_status(A.l), RNSC_LINK_CLOSED);
	CU_ASSERT_EQUAL(A.closed, 0);
}

static void t_tampered_and_truncated(void)
{
	establish(0, RNSC_MTU);
	static const uint8_t m[] = "integrity matters";
	CU_ASSERT(rnsc_link_send(A.l, RNSC_CTX_NONE, m, sizeof(m), NULL, 2000) > 0);
	uint8_t f[600], g[600];
	int n = rnsc_link_outbox_pop(A.l, f, sizeof(f));
	CU_ASSERT_FATAL(n > 19 + 48);
	for (int i = 19; i < n; i += 7) {
		memcpy(g, f, (size_t)n);
		g[i] ^= 0x01;
		int rc = rnsc_link_receive(B.l, g, (size_t)n, 2001);
		CU_ASSERT(rc == RNSC_ERR_AUTH);
	}
	CU_ASSERT_EQUAL(B.packets, 0);
	/* every truncation is refused with a clear code */
	for (int k = 0; k < n; k++) {
		int rc = rnsc_link_receive(B.l, f, (size_t)k, 2002);
		CU_ASSERT(rc == RNSC_ERR_TRUNCATED || rc == RNSC_ERR_AUTH);
	}
	CU_ASSERT_EQUAL(B.packets, 0);
	CU_ASSERT_EQUAL(rnsc_link_status(B.l), RNSC_LINK_ACTIVE);
	CU_ASSERT_EQUAL(rnsc_link_receive(B.l, f, (size_t)n, 2003), 0);
	CU_ASSERT_EQUAL(B.packets, 1);
	/* an RTT that is not a number tears the responder down (reference: exception) */
	start(0, RNSC_MTU, 1000);
	CU_ASSERT_EQUAL(shuttle(&B, &A, 1100), 0);
	drop_all(&A);
	/* hand-made LRRTT with a string inside, encrypted with the session key */
	rnsc_token tok;
	CU_ASSERT_FATAL(rnsc_token_init(&tok, C, rnsc_link_derived_key(A.l), 64) == 0);
	uint8_t pt[] = {0xa3, 'a', 'b', 'c'};
	uint8_t ct[80];
	int cn = rnsc_token_encrypt(&tok, ct, sizeof(ct), pt, sizeof(pt));
	rnsc_token_free(&tok);
	rnsc_packet p = {.dest_type = RNSC_DEST_LINK,
			 .packet_type = RNSC_PKT_DATA,
			 .context = RNSC_CTX_LRRTT,
			 .data = ct,
			 .data_len = (size_t)cn};
	memcpy(p.dest_hash, rnsc_link_id(A.l), 16);
	n = rnsc_packet_pack(f, sizeof(f), &p, RNSC_MTU);
	CU_ASSERT_FATAL(n > 0);
	CU_ASSERT_EQUAL(rnsc_link_receive(B.l, f, (size_t)n, 1150), RNSC_ERR_MALFORMED);
	CU_ASSERT_EQUAL(rnsc_link_status(B.l), RNSC_LINK_CLOSED);
	CU_ASSERT_EQUAL(rnsc_link_reason(B.l), RNSC_LINK_DESTINATION_CLOSED);
	CU_ASSERT_EQUAL(rnsc_link_outbox_count(B.l), 1); /* its LINKCLOSE */
	CU_ASSERT_EQUAL(shuttle(&B, &A, 1160), 0);
	CU_ASSERT_EQUAL(rnsc_link_reason(A.l), RNSC_LINK_DESTINATION_CLOSED);

	/* link requests the responder refuses */
	start(0, RNSC_MTU, 1000);
	uint8_t req[200];
	rnsc_link *l = NULL;
	rnsc_link_initiate_params ip = {.hops = 1};
	CU_ASSERT_FATAL(rnsc_link_initiate(C, &l, dest_hash, &dest_id, &ip, 0) == 0);
	n = rnsc_link_outbox_pop(l, req, sizeof(req));
	rnsc_link_del(l);
	for (int k = 0; k < n; k++) {
		int rc = rnsc_link_accept(C, &l, &dest_id, req, (size_t)k, RNSC_MTU, 0);
		CU_ASSERT(rc == RNSC_ERR_TRUNCATED || (k == 19 + 64 && rc == 0) ||
			  (k != 19 + 64 && rc == RNSC_ERR_MALFORMED));
		rnsc_link_del(l);
		l = NULL;
	}
	rnsc_identity pub_only;
	uint8_t pubk[64];
	rnsc_identity_public_bytes(&dest_id, pubk);
	CU_ASSERT_FATAL(rnsc_identity_from_public(C, &pub_only, pubk, 64) == 0);
	CU_ASSERT_EQUAL(rnsc_link_accept(C, &l, &pub_only, req, (size_t)n, RNSC_MTU, 0),
			RNSC_ERR_NOKEY);
	req[19 + 64] = (uint8_t)((req[19 + 64] & 0x1F) | (RNSC_LINK_MODE_AES128_CBC << 5));
	CU_ASSERT_EQUAL(rnsc_link_accept(C, &l, &dest_id, req, (size_t)n, RNSC_MTU, 0),
			RNSC_ERR_LINK_MODE);
	CU_ASSERT_PTR_NULL(l);
}

static void t_teardown(void)
{
	establish(0, RNSC_MTU);
	CU_ASSERT_EQUAL(rnsc_link_teardown(B.l, 3000), 0);
	CU_ASSERT_EQUAL(rnsc_link_reason(B.l), RNSC_LINK_DESTINATION_CLOSED);
	CU_ASSERT_EQUAL(B.closed, 1);
	uint8_t f[600];
	int n = rnsc_link_outbox_pop(B.l, f, sizeof(f));
	CU_ASSERT_FATAL(n > 0);
	/* a LINKCLOSE carrying another id is ignored */
	rnsc_token tok;
	CU_ASSERT_FATAL(rnsc_token_init(&tok, C, rnsc_link_derived_key(A.l), 64) == 0);
	uint8_t other[16] = {1};
	uint8_t ct[80], g[200];
	int cn = rnsc_token_encrypt(&tok, ct, sizeof(ct), other, 16);
	rnsc_token_free(&tok);
	memcpy(g, f, 19);
	memcpy(g + 19, ct, (size_t)cn);
	CU_ASSERT_EQUAL(rnsc_link_receive(A.l, g, 19 + (size_t)cn, 3001), RNSC_ERR_NOTFOUND);
	CU_ASSERT_EQUAL(rnsc_link_status(A.l), RNSC_LINK_ACTIVE);
	CU_ASSERT_EQUAL(rnsc_link_receive(A.l, f, (size_t)n, 3002), 0);
	CU_ASSERT_EQUAL(rnsc_link_status(A.l), RNSC_LINK_CLOSED);
	CU_ASSERT_EQUAL(rnsc_link_reason(A.l), RNSC_LINK_DESTINATION_CLOSED);
	CU_ASSERT_EQUAL(A.closed, 1);
	CU_ASSERT_EQUAL(rnsc_link_outbox_count(A.l), 0);

	establish(0, RNSC_MTU);
	CU_ASSERT_EQUAL(rnsc_link_teardown(A.l, 3000), 0);
	CU_ASSERT_EQUAL(rnsc_link_reason(A.l), RNSC_LINK_INITIATOR_CLOSED);
	CU_ASSERT_EQUAL(shuttle(&A, &B, 3001), 0);
	CU_ASSERT_EQUAL(rnsc_link_reason(B.l), RNSC_LINK_INITIATOR_CLOSED);

	/* a pending link closes without a word */
	start(0, RNSC_MTU, 1000);
	CU_ASSERT_EQUAL(rnsc_link_teardown(A.l, 1001), 0);
	CU_ASSERT_EQUAL(rnsc_link_outbox_count(A.l), 0);
	CU_ASSERT_EQUAL(rnsc_link_reason(A.l), RNSC_LINK_INITIATOR_CLOSED);
	CU_ASSERT_STRING_EQUAL(rnsc_link_reason_name(rnsc_link_reason(A.l)), "INITIATOR_CLOSED");
}

static void t_identify(void)
{
	establish(0, RNSC_MTU);
	rnsc_identity me;
	CU_ASSERT_FATAL(rnsc_identity_generate(C, &me) == 0);
	CU_ASSERT_EQUAL(rnsc_link_identify(B.l, &dest_id, 2000), RNSC_ERR_STATE);
	CU_ASSERT(rnsc_link_identify(A.l, &me, 2000) > 0);
	CU_ASSERT_EQUAL(shuttle(&A, &B, 2010), 0);
	CU_ASSERT_EQUAL(B.identified, 1);
	CU_ASSERT(memcmp(B.who_hash, me.hash, 16) == 0);
	const rnsc_identity *r = rnsc_link_remote_identity(B.l);
	CU_ASSERT(r && memcmp(r->hash, me.hash, 16) == 0);
	/* only the first identity sticks */
	rnsc_identity me2;
	CU_ASSERT_FATAL(rnsc_identity_generate(C, &me2) == 0);
	CU_ASSERT(rnsc_link_identify(A.l, &me2, 2100) > 0);
	CU_ASSERT_EQUAL(shuttle(&A, &B, 2110), 0);
	CU_ASSERT_EQUAL(B.identified, 1);
	CU_ASSERT(memcmp(rnsc_link_remote_identity(B.l)->hash, me.hash, 16) == 0);
	/* an identify signed for another link is refused */
	uint8_t pt[128], other_id[16] = {9};
	CU_ASSERT_EQUAL(rnsc_link_identify_build(pt, sizeof(pt), &me2, other_id), 128);
	CU_ASSERT(rnsc_link_send(A.l, RNSC_CTX_LINKIDENTIFY, pt, sizeof(pt), NULL, 2200) > 0);
	CU_ASSERT_EQUAL(shuttle(&A, &B, 2210), RNSC_ERR_SIGNATURE);
	rnsc_identity_free(&me);
	rnsc_identity_free(&me2);
}

static void t_api_edges(void)
{
	destination();
	rnsc_link *l = NULL;
	rnsc_link_initiate_params p = {.hops = 1, .mode = RNSC_LINK_MODE_AES256_GCM};
	CU_ASSERT_EQUAL(rnsc_link_initiate(C, &l, dest_hash, &dest_id, &p, 0), RNSC_ERR_LINK_MODE);
	p.mode = 0;
	p.hw_mtu = RNSC_LINK_MTU_BYTEMASK + 1;
	CU_ASSERT_EQUAL(rnsc_link_initiate(C, &l, dest_hash, &dest_id, &p, 0), RNSC_ERR_RANGE);
	CU_ASSERT_EQUAL(rnsc_link_initiate(NULL, &l, dest_hash, &dest_id, NULL, 0), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_link_initiate(C, &l, dest_hash, NULL, NULL, 0), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_link_accept(C, &l, &dest_id, NULL, 0, RNSC_MTU, 0), RNSC_ERR_INVAL);
	CU_ASSERT_PTR_NULL(l);
	/* a packet that is not a link request */
	uint8_t pkt[64] = {0};
	pkt[0] = RNSC_PKT_DATA;
	CU_ASSERT_EQUAL(rnsc_link_accept(C, &l, &dest_id, pkt, 40, RNSC_MTU, 0),
			RNSC_ERR_MALFORMED);

	p.hw_mtu = 0;
	CU_ASSERT_FATAL(rnsc_link_initiate(C, &l, dest_hash, &dest_id, &p, 0) == 0);
	uint8_t small[8] = {0};
	CU_ASSERT_EQUAL(rnsc_link_outbox_peek_len(l), 86);
	CU_ASSERT_EQUAL(rnsc_link_outbox_pop(l, small, sizeof(small)), RNSC_ERR_BUFSIZE);
	CU_ASSERT_EQUAL(rnsc_link_outbox_count(l), 1);
	CU_ASSERT_EQUAL(rnsc_link_outbox_pop(l, NULL, 4), RNSC_ERR_INVAL);
	/* nothing to send or identify while pending */
	CU_ASSERT_EQUAL(rnsc_link_send(l, RNSC_CTX_NONE, small, 1, NULL, 1), RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(rnsc_link_send(l, 0x100, small, 1, NULL, 1), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_link_identify(l, &dest_id, 1), RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(rnsc_link_identify(l, NULL, 1), RNSC_ERR_INVAL);
	uint8_t h[32] = {0}, proof[96] = {0};
	CU_ASSERT_EQUAL(rnsc_link_validate_proof(l, h, proof, 96, 1), RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(rnsc_link_validate_proof(NULL, h, proof, 96, 1), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_link_prove_packet(l, NULL, 0, 1), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_link_prove_packet(l, small, 3, 1), RNSC_ERR_TRUNCATED);
	CU_ASSERT_EQUAL(rnsc_link_receive(l, NULL, 0, 1), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_link_tick(NULL, 1), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_link_teardown(NULL, 1), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_link_set_proof_strategy(NULL, RNSC_PROVE_ALL), RNSC_ERR_INVAL);
	rnsc_link_set_callbacks(l, NULL, NULL);
	rnsc_link_set_callbacks(NULL, NULL, NULL);
	rnsc_link_set_channel(NULL, 1);
	CU_ASSERT_EQUAL(rnsc_link_rtt(l), -1.0);
	CU_ASSERT_PTR_EQUAL(rnsc_link_context(l), C);
	CU_ASSERT_EQUAL(rnsc_link_keepalive_ms(l), RNSC_LINK_KEEPALIVE_MS);
	CU_ASSERT_EQUAL(rnsc_link_stale_time_ms(l), RNSC_LINK_STALE_TIME_MS);
	rnsc_link_del(l);
	/* every accessor is safe on NULL */
	CU_ASSERT_EQUAL(rnsc_link_status(NULL), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_link_reason(NULL), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_link_get_mode(NULL), RNSC_ERR_INVAL);
	CU_ASSERT(!rnsc_link_is_initiator(NULL) && !rnsc_link_id(NULL) && !rnsc_link_mtu(NULL) &&
		  !rnsc_link_get_mdu(NULL) && rnsc_link_rtt(NULL) < 0 &&
		  !rnsc_link_keepalive_ms(NULL) && !rnsc_link_stale_time_ms(NULL) &&
		  !rnsc_link_establishment_timeout_ms(NULL) && !rnsc_link_remote_identity(NULL) &&
		  !rnsc_link_derived_key(NULL) && !rnsc_link_context(NULL) &&
		  !rnsc_link_outbox_count(NULL) && !rnsc_link_outbox_peek_len(NULL));
	CU_ASSERT_EQUAL(rnsc_link_next_deadline(NULL), UINT64_MAX);
	uint64_t rx = 1, rxb = 1, tx = 1, txb = 1;
	rnsc_link_counters(NULL, &rx, &rxb, &tx, &txb);
	CU_ASSERT(rx == 0 && rxb == 0 && tx == 0 && txb == 0);
	CU_ASSERT_PTR_NULL(rnsc_link_status_name(5));
	CU_ASSERT_PTR_NULL(rnsc_link_reason_name(0));
	CU_ASSERT_STRING_EQUAL(rnsc_link_reason_name(RNSC_LINK_TIMEOUT), "TIMEOUT");
	CU_ASSERT_STRING_EQUAL(rnsc_link_status_name(RNSC_LINK_STALE), "STALE");
	rnsc_link_del(NULL);
}

static void t_alloc_failures(void)
{
	/* every allocation of a handshake failing in turn: a clean error, no leak (ASan) */
	destination();
	for (unsigned long k = 1; k < 40; k++) {
		rnsc_link *a = NULL, *b = NULL;
		rnsc_ctx_fail_alloc_after(C, k);
		int rc = rnsc_link_initiate(C, &a, dest_hash, &dest_id, NULL, 0);
		uint8_t f[600];
		int n = rc == 0 ? rnsc_link_outbox_pop(a, f, sizeof(f)) : 0;
		if (n > 0)
			rc = rnsc_link_accept(C, &b, &dest_id, f, (size_t)n, RNSC_MTU, 1);
		if (rc == 0 && b) {
			n = rnsc_link_outbox_pop(b, f, sizeof(f));
			if (n > 0)
				rc = rnsc_link_receive(a, f, (size_t)n, 2);
		}
		rnsc_ctx_fail_alloc_after(C, 0);
		CU_ASSERT(rc == 0 || rc == RNSC_ERR_NOMEM);
		rnsc_link_del(a);
		rnsc_link_del(b);
	}
	teardown_pair(); /* the last pair, before the context goes */
}

int main(void)
{
	static const wt_test tests[] = {
		{"handshake", t_handshake},
		{"data both ways, proofs, channel gate", t_data_both_ways},
		{"MTU limit", t_too_big},
		{"MTU signalling and clamping", t_mtu_signalling},
		{"keepalive, stale, timeout close", t_keepalive_and_stale},
		{"establishment timeouts", t_establishment_timeout},
		{"bad proofs", t_bad_proof},
		{"tampered and truncated packets", t_tampered_and_truncated},
		{"teardown by either side", t_teardown},
		{"identify", t_identify},
		{"API edges", t_api_edges},
		{"allocation failures", t_alloc_failures},
	};
	return wt_main("link", tests, sizeof(tests) / sizeof(tests[0]));
}
