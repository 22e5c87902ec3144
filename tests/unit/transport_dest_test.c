/* SPDX-License-Identifier: MIT */
/* Local destination settings and PLAIN/GROUP sends (transport_dest.c) between two engines
 * wired back to back: GROUP keys and Token traffic, PLAIN traffic, PROVE_APP, default app
 * data in announces and path responses, deregistration. */
#include <stdint.h>
#include <string.h>

#include "cu_run.h"
#include "destination.h"
#include "engine_env.h"
#include "link.h"
#include "packet.h"
#include "token.h"
#include "transport.h"

#define HL RNSC_TRUNCATED_HASHLEN
static uint64_t NOW = 1700000000000ull;

/* ---- two engines, one wire ---- */
typedef struct side {
	rnsc_transport *t;
	rnsc_identity tid;
	int data_n;
	uint8_t data[64];
	size_t data_len;
	int rid_used;
	uint8_t rid[RNSC_RATCHET_ID_LEN];
	uint8_t dest[HL]; /* local destination, for the rid lookup */
	int asked, proved, announces;
	uint8_t app[64];
	size_t app_len;
} side;
static side S[2];

static void on_data(void *ud, const uint8_t *dest, const uint8_t *data, size_t len,
		    const uint8_t *ph, uint32_t iface)
{
	(void)ph, (void)iface;
	side *s = ud;
	s->data_n++;
	memcpy(s->data, data, len < sizeof(s->data) ? len : sizeof(s->data));
	s->data_len = len;
	s->rid_used = rnsc_transport_dest_latest_ratchet_id(s->t, dest, s->rid);
}
static int on_proof_requested(void *ud, const uint8_t *dest, const uint8_t *data, size_t len,
			      const uint8_t *ph)
{
	(void)dest, (void)ph;
	side *s = ud;
	s->asked++;
	return len >= 5 && memcmp(data, "prove", 5) == 0;
}
static void on_receipt(void *ud, const uint8_t *ph, int proved)
{
	(void)ph;
	if (proved)
		((side *)ud)->proved++;
}
static void on_announce(void *ud, const uint8_t *dest, const uint8_t *app, size_t len,
			unsigned hops)
{
	(void)dest, (void)hops;
	side *s = ud;
	s->announces++;
	s->app_len = app ? len : (size_t)-1;
	if (app && len <= sizeof(s->app))
		memcpy(s->app, app, len);
}

static void pump(void)
{
	for (int round = 0; round < 20; round++) {
		int any = 0;
		for (int i = 0; i < 2; i++) {
			uint8_t buf[600];
			uint32_t ifc;
			int len;
			while ((len = rnsc_transport_outbox_pop(S[i].t, &ifc, buf, sizeof(buf))) >
			       0) {
				any = 1;
				CU_ASSERT_EQUAL(
					rnsc_transport_ingest(S[1 - i].t, 1, buf, (size_t)len, NOW),
					0);
			}
		}
		if (!any)
			return;
	}
}

static void sides_up(void)
{
	memset(S, 0, sizeof(S));
	for (int i = 0; i < 2; i++) {
		CU_ASSERT_EQUAL_FATAL(rnsc_identity_generate(C, &S[i].tid), 0);
		rnsc_transport_config cfg = {.use_implicit_proof = 1};
		CU_ASSERT_EQUAL_FATAL(rnsc_transport_new(C, &S[i].t, &S[i].tid, &cfg), 0);
		rnsc_transport_callbacks cb = {.ud = &S[i],
					       .on_data = on_data,
					       .on_proof_requested = on_proof_requested,
					       .on_receipt = on_receipt,
					       .on_announce = on_announce};
		rnsc_transport_set_callbacks(S[i].t, &cb);
		CU_ASSERT_EQUAL_FATAL(
			rnsc_transport_iface_add(S[i].t, 1, RNSC_TRANSPORT_MODE_FULL, 10000000, 0),
			0);
	}
}

static void sides_down(void)
{
	for (int i = 0; i < 2; i++) {
		rnsc_transport_del(S[i].t);
		rnsc_identity_free(&S[i].tid);
	}
}

static void test_group_plain(void)
{
	sides_up();
	static const char *const asp[] = {"group"};
	uint8_t gh[HL], ph[HL], key[64];
	CU_ASSERT_EQUAL_FATAL(
		rnsc_transport_dest_add(S[0].t, RNSC_DEST_GROUP, NULL, "rnsclt", asp, 1, 0, gh), 0);
	static const char *const asp2[] = {"plain"};
	CU_ASSERT_EQUAL_FATAL(
		rnsc_transport_dest_add(S[0].t, RNSC_DEST_PLAIN, NULL, "rnsclt", asp2, 1, 0, ph),
		0);
	CU_ASSERT_EQUAL(rnsc_transport_dest_group_key(S[0].t, ph, key, 64), RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(rnsc_token_generate_key(C, key), 0);
	/* no key yet: not delivered (the reference raises in decrypt) */
	CU_ASSERT_EQUAL(
		rnsc_transport_send_group(S[1].t, gh, key, 64, (const uint8_t *)"g0", 2, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(S[0].data_n, 0);
	CU_ASSERT_EQUAL(rnsc_transport_dest_group_key(S[0].t, gh, key, 10), RNSC_ERR_KEYLEN);
	CU_ASSERT_EQUAL(rnsc_transport_dest_group_key(S[0].t, gh, key, 64), 0);
	CU_ASSERT_EQUAL(
		rnsc_transport_send_group(S[1].t, gh, key, 64, (const uint8_t *)"g1", 2, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(S[0].data_n, 1);
	CU_ASSERT_EQUAL(S[0].data_len, 2);
	CU_ASSERT_EQUAL(memcmp(S[0].data, "g1", 2), 0);
	/* another key: refused, counted */
	uint8_t other[64];
	CU_ASSERT_EQUAL(rnsc_token_generate_key(C, other), 0);
	uint64_t df = rnsc_transport_get_stats(S[0].t)->decrypt_failed;
	CU_ASSERT_EQUAL(
		rnsc_transport_send_group(S[1].t, gh, other, 64, (const uint8_t *)"g2", 2, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(S[0].data_n, 1);
	CU_ASSERT_EQUAL(rnsc_transport_get_stats(S[0].t)->decrypt_failed, df + 1);
	/* PLAIN: as is */
	CU_ASSERT_EQUAL(rnsc_transport_send_plain(S[1].t, ph, (const uint8_t *)"hello", 5, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(S[0].data_n, 2);
	CU_ASSERT_EQUAL(memcmp(S[0].data, "hello", 5), 0);
	/* the MTU bounds both */
	static uint8_t big[RNSC_MTU];
	CU_ASSERT_EQUAL(rnsc_transport_send_plain(S[1].t, ph, big, RNSC_MTU - 19, NOW), 0);
	CU_ASSERT_EQUAL(rnsc_transport_send_plain(S[1].t, ph, big, RNSC_MTU - 18, NOW),
			RNSC_ERR_TOOBIG);
	CU_ASSERT_EQUAL(rnsc_transport_send_group(S[1].t, gh, key, 64, big, 440, NOW),
			RNSC_ERR_TOOBIG);
	pump();
	/* deregistration: no longer delivered */
	CU_ASSERT_EQUAL(rnsc_transport_dest_remove(S[0].t, ph), 0);
	CU_ASSERT_EQUAL(rnsc_transport_dest_remove(S[0].t, ph), RNSC_ERR_NOTFOUND);
	int before = S[0].data_n;
	CU_ASSERT_EQUAL(rnsc_transport_send_plain(S[1].t, ph, (const uint8_t *)"gone", 4, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(S[0].data_n, before);
	sides_down();
}

static void test_prove_app_default_app_data(void)
{
	sides_up();
	rnsc_identity id;
	CU_ASSERT_EQUAL_FATAL(rnsc_identity_generate(C, &id), 0);
	static const char *const asp[] = {"app"};
	uint8_t dh[HL];
	CU_ASSERT_EQUAL_FATAL(
		rnsc_transport_dest_add(S[0].t, RNSC_DEST_SINGLE, &id, "rnsclt", asp, 1, 0, dh), 0);
	CU_ASSERT_EQUAL(rnsc_transport_dest_set_proof_strategy(S[0].t, dh, 7), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_transport_dest_set_proof_strategy(S[0].t, dh, RNSC_PROVE_APP), 0);
	CU_ASSERT_EQUAL(
		rnsc_transport_dest_set_default_app_data(S[0].t, dh, (const uint8_t *)"dflt", 4),
		0);
	/* an announce without app data carries the default */
	CU_ASSERT_EQUAL(rnsc_transport_announce(S[0].t, dh, NULL, 0, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(S[1].announces, 1);
	CU_ASSERT_EQUAL(S[1].app_len, 4);
	CU_ASSERT_EQUAL(memcmp(S[1].app, "dflt", 4), 0);
	/* its own (even empty) app data wins */
	NOW += 1000;
	CU_ASSERT_EQUAL(rnsc_transport_announce(S[0].t, dh, (const uint8_t *)"own", 3, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(S[1].app_len, 3);
	CU_ASSERT_EQUAL(memcmp(S[1].app, "own", 3), 0);
	/* a path response carries the default too */
	NOW += 5000;
	CU_ASSERT_EQUAL(rnsc_transport_request_path(S[1].t, dh, 0, 0, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(S[1].announces, 3);
	CU_ASSERT_EQUAL(S[1].app_len, 4);
	CU_ASSERT_EQUAL(memcmp(S[1].app, "dflt", 4), 0);
	/* cleared: no app data (None) */
	CU_ASSERT_EQUAL(rnsc_transport_dest_set_default_app_data(S[0].t, dh, NULL, 0), 0);
	NOW += 1000;
	CU_ASSERT_EQUAL(rnsc_transport_announce(S[0].t, dh, NULL, 0, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(S[1].app_len, (size_t)-1);
	/* PROVE_APP: asked for every packet, proves the ones it says */
	CU_ASSERT_EQUAL(rnsc_transport_send(S[1].t, dh, (const uint8_t *)"skip", 4, NULL, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(rnsc_transport_send(S[1].t, dh, (const uint8_t *)"prove", 5, NULL, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(S[0].data_n, 2);
	CU_ASSERT_EQUAL(S[0].asked, 2);
	CU_ASSERT_EQUAL(S[1].proved, 1);
	/* PROVE_NONE: not asked; PROVE_ALL: proved without asking */
	CU_ASSERT_EQUAL(rnsc_transport_dest_set_proof_strategy(S[0].t, dh, RNSC_PROVE_NONE), 0);
	CU_ASSERT_EQUAL(rnsc_transport_send(S[1].t, dh, (const uint8_t *)"prove", 5, NULL, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(S[0].asked, 2);
	CU_ASSERT_EQUAL(S[1].proved, 1);
	CU_ASSERT_EQUAL(rnsc_transport_dest_set_proof_strategy(S[0].t, dh, RNSC_PROVE_ALL), 0);
	CU_ASSERT_EQUAL(rnsc_transport_send(S[1].t, dh, (const uint8_t *)"x", 1, NULL, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(S[0].asked, 2);
	CU_ASSERT_EQUAL(S[1].proved, 2);
	/* deregistered: path requests are no longer answered here */
	CU_ASSERT_EQUAL(rnsc_transport_dest_remove(S[0].t, dh), 0);
	int ann = S[1].announces;
	NOW += 5000;
	CU_ASSERT_EQUAL(rnsc_transport_request_path(S[1].t, dh, 0, 0, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(S[1].announces, ann);
	rnsc_identity_free(&id);
	sides_down();
}

static int hits[3], hits_pr[3];
static void handler(void *ud, const uint8_t *dest, const rnsc_identity *who, const uint8_t *app,
		    size_t len, const uint8_t *ph, int pr)
{
	(void)dest, (void)app, (void)len, (void)ph;
	int i = (int)(intptr_t)ud;
	CU_ASSERT_PTR_NOT_NULL(who);
	hits[i]++;
	hits_pr[i] += pr;
	/* no changes to the handler list from inside a handler */
	CU_ASSERT_EQUAL(rnsc_transport_announce_handler_remove(S[1].t, 1), RNSC_ERR_STATE);
}

static void test_announce_handlers(void)
{
	sides_up();
	rnsc_identity id;
	CU_ASSERT_EQUAL_FATAL(rnsc_identity_generate(C, &id), 0);
	static const char *const asp[] = {"app", "x"};
	uint8_t dh[HL];
	CU_ASSERT_EQUAL_FATAL(
		rnsc_transport_dest_add(S[0].t, RNSC_DEST_SINGLE, &id, "rnsclt", asp, 2, 0, dh), 0);
	memset(hits, 0, sizeof(hits));
	memset(hits_pr, 0, sizeof(hits_pr));
	uint32_t h0, h1, h2;
	CU_ASSERT_EQUAL(
		rnsc_transport_announce_handler_add(S[1].t, NULL, 0, handler, (void *)0, &h0), 0);
	CU_ASSERT_EQUAL(rnsc_transport_announce_handler_add(S[1].t, "rnsclt.app.x", 1, handler,
							    (void *)1, &h1),
			0);
	CU_ASSERT_EQUAL(rnsc_transport_announce_handler_add(S[1].t, "rnsclt.app", 1, handler,
							    (void *)2, &h2),
			0);
	CU_ASSERT_EQUAL(rnsc_transport_announce(S[0].t, dh, NULL, 0, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(hits[0], 1);
	CU_ASSERT_EQUAL(hits[1], 1);
	CU_ASSERT_EQUAL(hits[2], 0); /* aspect_filter names another destination */
	/* a path response: only the handlers that asked for them */
	NOW += 5000;
	CU_ASSERT_EQUAL(rnsc_transport_request_path(S[1].t, dh, 0, 0, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(hits[0], 1);
	CU_ASSERT_EQUAL(hits[1], 2);
	CU_ASSERT_EQUAL(hits_pr[1], 1);
	CU_ASSERT_EQUAL(rnsc_transport_announce_handler_remove(S[1].t, h1), 0);
	CU_ASSERT_EQUAL(rnsc_transport_announce_handler_remove(S[1].t, h1), RNSC_ERR_NOTFOUND);
	NOW += 5000;
	CU_ASSERT_EQUAL(rnsc_transport_announce(S[0].t, dh, NULL, 0, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(hits[0], 2);
	CU_ASSERT_EQUAL(hits[1], 2);
	(void)h0, (void)h2;
	rnsc_identity_free(&id);
	sides_down();
}

int main(void)
{
	if (engine_env_open("transport_dest_test", 0x8BADF00D12345678u))
		return 1;
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("transport_dest", NULL, NULL);
	CU_add_test(s, "GROUP and PLAIN destinations, deregistration", test_group_plain);
	CU_add_test(s, "PROVE_APP and default app data", test_prove_app_default_app_data);
	CU_add_test(s, "announce handlers: aspect filters, path responses", test_announce_handlers);
	int rc = rnsc_cu_run();
	engine_env_close();
	return rc;
}
