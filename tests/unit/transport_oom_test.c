/* SPDX-License-Identifier: MIT */
/*
 * The transport engine when memory runs out: a node takes in another's announce, sends to
 * the announced destination, asks for an unknown path and runs its jobs, and a node receives
 * and proves a packet, with every allocation of those steps failed in turn. Each step must
 * return an error or carry on (no crash, no leak under the sanitizer build), and the sweep
 * must reach the count where nothing failed, so every failure point was visited.
 */
#include <CUnit/Basic.h>
#include <string.h>

#include "cu_run.h"
#include "destination.h"
#include "engine_env.h"
#include "identity.h"
#include "transport.h"

#define NOW 1700000000000ull
static const char *const ASP[] = {"echo"};
static rnsc_identity IDA, IDB, IDD;
static uint8_t DH[RNSC_TRUNCATED_HASHLEN];
static uint8_t ANN[4][600], DATA[600];
static size_t NANN, ANNLEN[4], DATALEN;

static void drain(rnsc_transport *t)
{
	uint8_t buf[600];
	uint32_t ifc;
	while (rnsc_transport_outbox_pop(t, &ifc, buf, sizeof buf) > 0)
		;
}

static rnsc_transport *node(const rnsc_identity *id, int with_dest)
{
	rnsc_transport_config cfg = {.transport_enabled = 1, .use_implicit_proof = 1};
	rnsc_transport *t = NULL;
	if (rnsc_transport_new(C, &t, id, &cfg) != 0)
		return NULL;
	if (rnsc_transport_iface_add(t, 1, RNSC_TRANSPORT_MODE_FULL, 10000000, 0) != 0 ||
	    (with_dest &&
	     rnsc_transport_dest_add(t, RNSC_DEST_SINGLE, &IDD, "oomtest", ASP, 1, 1, DH) != 0)) {
		rnsc_transport_del(t);
		return NULL;
	}
	return t;
}

static int setup(void)
{
	if (engine_env_open("transport_oom_test", 77))
		return 1;
	if (rnsc_identity_generate(C, &IDA) || rnsc_identity_generate(C, &IDB) ||
	    rnsc_identity_generate(C, &IDD))
		return 1;
	rnsc_transport *a = node(&IDA, 1), *b = node(&IDB, 0);
	if (!a || !b || rnsc_transport_announce(a, DH, (const uint8_t *)"app", 3, NOW))
		return 1;
	uint32_t ifc;
	int n;
	while (NANN < 4 && (n = rnsc_transport_outbox_pop(a, &ifc, ANN[NANN], 600)) > 0)
		ANNLEN[NANN++] = (size_t)n;
	for (size_t i = 0; i < NANN; i++)
		rnsc_transport_ingest(b, 1, ANN[i], ANNLEN[i], NOW);
	drain(b);
	if (rnsc_transport_send(b, DH, (const uint8_t *)"hello", 5, NULL, NOW))
		return 1;
	n = rnsc_transport_outbox_pop(b, &ifc, DATA, sizeof DATA);
	if (n <= 0)
		return 1;
	DATALEN = (size_t)n;
	rnsc_transport_del(a);
	rnsc_transport_del(b);
	return NANN ? 0 : 1;
}

static int teardown(void)
{
	rnsc_identity_free(&IDA);
	rnsc_identity_free(&IDB);
	rnsc_identity_free(&IDD);
	engine_env_close();
	return 0;
}

/* The receiving side of an announce: learn, send, ask, tick. */
static void steps_b(rnsc_transport *b)
{
	for (size_t i = 0; i < NANN; i++)
		(void)rnsc_transport_ingest(b, 1, ANN[i], ANNLEN[i], NOW);
	(void)rnsc_transport_send(b, DH, (const uint8_t *)"hello", 5, NULL, NOW);
	static const uint8_t unknown[RNSC_TRUNCATED_HASHLEN] = {0x42};
	(void)rnsc_transport_request_path(b, unknown, 0, 0, NOW);
	(void)rnsc_transport_tick(b, NOW + 1000);
	(void)rnsc_transport_tick(b, NOW + 30000);
	drain(b);
}

/* The destination's side: a packet arrives, is delivered and proved. */
static void steps_a(rnsc_transport *a)
{
	(void)rnsc_transport_ingest(a, 1, DATA, DATALEN, NOW);
	(void)rnsc_transport_tick(a, NOW + 1000);
	drain(a);
}

static void sweep(const char *what, const rnsc_identity *id, int with_dest,
		  void (*steps)(rnsc_transport *))
{
	unsigned failed = 0;
	for (unsigned long n = 1; n < 2000; n++) {
		rnsc_transport *t = node(id, with_dest);
		CU_ASSERT_PTR_NOT_NULL_FATAL(t);
		rnsc_ctx_fail_alloc_after(C, n);
		steps(t);
		unsigned long made = rnsc_ctx_fail_alloc_after(C, 0);
		rnsc_transport_del(t);
		if (made < n) {
			fprintf(stderr, "%s: %u allocation failure points, each survived\n", what,
				failed);
			CU_ASSERT(failed > 0);
			return;
		}
		failed++;
	}
	CU_FAIL("the sweep never reached a run without a failed allocation");
}

static void test_announce_side(void)
{
	sweep("announce, send, path request, jobs", &IDB, 0, steps_b);
}

static void test_delivery_side(void)
{
	sweep("delivery and proof", &IDA, 1, steps_a);
}

/* Frames from one engine to the other until both are quiet (at most rounds passes). */
static void pump(rnsc_transport *a, rnsc_transport *b, uint64_t now)
{
	uint8_t buf[600];
	uint32_t ifc;
	int n;
	for (int round = 0; round < 8; round++) {
		int moved = 0;
		while ((n = rnsc_transport_outbox_pop(a, &ifc, buf, sizeof buf)) > 0) {
			(void)rnsc_transport_ingest(b, 1, buf, (size_t)n, now);
			moved = 1;
		}
		while ((n = rnsc_transport_outbox_pop(b, &ifc, buf, sizeof buf)) > 0) {
			(void)rnsc_transport_ingest(a, 1, buf, (size_t)n, now);
			moved = 1;
		}
		if (!moved)
			return;
	}
}

/* Both sides of a link: the announce learned, a path request answered, the link opened and
 * proved, data sent over it and proved, the link closed, the jobs run. */
static void sweep_link(void)
{
	unsigned failed = 0;
	for (unsigned long n = 1; n < 4000; n++) {
		rnsc_transport *a = node(&IDA, 1), *b = node(&IDB, 0);
		CU_ASSERT_FATAL(a && b);
		(void)rnsc_transport_dest_accept_links(a, DH, 1);
		rnsc_ctx_fail_alloc_after(C, n);
		(void)rnsc_transport_announce(a, DH, (const uint8_t *)"app", 3, NOW);
		pump(a, b, NOW);
		(void)rnsc_transport_request_path(b, DH, 0, 0, NOW + 10);
		pump(a, b, NOW + 10);
		uint8_t lid[RNSC_TRUNCATED_HASHLEN];
		if (rnsc_transport_link_open(b, DH, lid, NOW + 20) == 0) {
			pump(a, b, NOW + 20);
			(void)rnsc_transport_link_send(b, lid, (const uint8_t *)"over the link", 13,
						       NULL, NOW + 30);
			pump(a, b, NOW + 30);
			(void)rnsc_transport_tick(a, NOW + 2000);
			(void)rnsc_transport_tick(b, NOW + 2000);
			pump(a, b, NOW + 2000);
			(void)rnsc_transport_link_close(b, lid, NOW + 3000);
			pump(a, b, NOW + 3000);
		}
		(void)rnsc_transport_tick(a, NOW + 60000);
		(void)rnsc_transport_tick(b, NOW + 60000);
		unsigned long made = rnsc_ctx_fail_alloc_after(C, 0);
		rnsc_transport_del(a);
		rnsc_transport_del(b);
		if (made < n) {
			fprintf(stderr, "link: %u allocation failure points, each survived\n",
				failed);
			CU_ASSERT(failed > 20);
			return;
		}
		failed++;
	}
	CU_FAIL("the sweep never reached a run without a failed allocation");
}

int main(void)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("transport_oom", setup, teardown);
	CU_add_test(s, "every allocation of learning and sending fails in turn",
		    test_announce_side);
	CU_add_test(s, "every allocation of delivering and proving fails in turn",
		    test_delivery_side);
	CU_add_test(s, "every allocation of a link's life fails in turn", sweep_link);
	return rnsc_cu_run();
}
