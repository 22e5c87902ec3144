/* SPDX-License-Identifier: MIT */
/* Blackholed identities (transport_blackhole.c): the table, the announce drop before the
 * path table, path purging, expiry on the jobs, and the list codec against bytes the
 * reference's umsgpack wrote. Times in ms. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "crypto.h"
#include "destination.h"
#include "packet.h"
#include "cu_run.h"
#include "engine_env.h"
#include "identity.h"
#include "msgpack.h"
#include "plugin_host.h"
#include "transport.h"

static uint64_t NOW = 1700000000000ull;
static const char *const ASP[] = {"blackhole", "test"};

static int unhex(uint8_t *out, size_t cap, const char *hx)
{
	size_t n = strlen(hx) / 2;
	if (n > cap)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		if (sscanf(hx + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (uint8_t)v;
	}
	return (int)n;
}

typedef struct pair {
	rnsc_transport *a, *b;
	rnsc_identity ta, tb, ida;
	uint8_t da[16]; /* a SINGLE destination on a */
	uint8_t ida_hash[16];
	uint8_t frame[600];
	size_t frame_len;
} pair;

static void pair_up(pair *p)
{
	memset(p, 0, sizeof(*p));
	CU_ASSERT_EQUAL_FATAL(rnsc_identity_generate(C, &p->ta), 0);
	CU_ASSERT_EQUAL_FATAL(rnsc_identity_generate(C, &p->tb), 0);
	CU_ASSERT_EQUAL_FATAL(rnsc_transport_new(C, &p->a, &p->ta, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(rnsc_transport_new(C, &p->b, &p->tb, NULL), 0);
	CU_ASSERT_EQUAL(rnsc_transport_iface_add(p->a, 1, RNSC_TRANSPORT_MODE_FULL, 10000000, 0),
			0);
	CU_ASSERT_EQUAL(rnsc_transport_iface_add(p->b, 1, RNSC_TRANSPORT_MODE_FULL, 10000000, 0),
			0);
	CU_ASSERT_EQUAL_FATAL(rnsc_identity_generate(C, &p->ida), 0);
	CU_ASSERT_EQUAL_FATAL(
		rnsc_transport_dest_add(p->a, RNSC_DEST_SINGLE, &p->ida, "rnsc", ASP, 2, 1, p->da),
		0);
	uint8_t pub[RNSC_KEYSIZE];
	rnsc_identity_public_bytes(&p->ida, pub);
	CU_ASSERT_EQUAL_FATAL(rnsc_truncated_hash(C, p->ida_hash, pub, sizeof(pub)), 0);
	CU_ASSERT_EQUAL_FATAL(rnsc_transport_announce(p->a, p->da, NULL, 0, NOW), 0);
	uint32_t ifc;
	int len = rnsc_transport_outbox_pop(p->a, &ifc, p->frame, sizeof(p->frame));
	CU_ASSERT_FATAL(len > 0);
	p->frame_len = (size_t)len;
}

static void pair_down(pair *p)
{
	rnsc_transport_del(p->a);
	rnsc_transport_del(p->b);
	rnsc_identity_free(&p->ta);
	rnsc_identity_free(&p->tb);
	rnsc_identity_free(&p->ida);
}

static void test_announce_dropped(void)
{
	pair p;
	pair_up(&p);
	rnsc_blackhole_entry e = {.reason = "spam", .reason_len = 4};
	CU_ASSERT_EQUAL(rnsc_transport_blackhole_add(p.b, p.ida_hash, &e), 1);
	CU_ASSERT_EQUAL(rnsc_transport_blackhole_add(p.b, p.ida_hash, &e), 0); /* None */
	CU_ASSERT_EQUAL(rnsc_transport_blackhole_count(p.b), 1);
	rnsc_blackhole_entry got;
	CU_ASSERT_EQUAL_FATAL(rnsc_transport_blackhole_get(p.b, p.ida_hash, &got), 0);
	CU_ASSERT_EQUAL(memcmp(got.source, rnsc_transport_id(p.b), 16), 0); /* local */
	CU_ASSERT_EQUAL(got.until, 0);
	CU_ASSERT_EQUAL(got.reason_len, 4);
	CU_ASSERT_EQUAL(memcmp(got.reason, "spam", 4), 0);

	CU_ASSERT_EQUAL(rnsc_transport_ingest(p.b, 1, p.frame, p.frame_len, NOW), 0);
	CU_ASSERT_EQUAL(rnsc_transport_has_path(p.b, p.da), 0);
	CU_ASSERT_EQUAL(rnsc_transport_recall(p.b, p.da, NULL, NULL, NULL), RNSC_ERR_NOTFOUND);
	const rnsc_transport_stats *st = rnsc_transport_get_stats(p.b);
	CU_ASSERT_EQUAL(st->announces_blackholed, 1);
	CU_ASSERT_EQUAL(st->announces_valid, 0);
	CU_ASSERT_EQUAL(st->announces_invalid, 0);

	/* lifted: the same announce is taken (it never entered the hashlist) */
	CU_ASSERT_EQUAL(rnsc_transport_blackhole_remove(p.b, p.ida_hash), 1);
	CU_ASSERT_EQUAL(rnsc_transport_blackhole_remove(p.b, p.ida_hash), 0);
	CU_ASSERT_EQUAL(rnsc_transport_blackhole_get(p.b, p.ida_hash, NULL), RNSC_ERR_NOTFOUND);
	CU_ASSERT_EQUAL(rnsc_transport_ingest(p.b, 1, p.frame, p.frame_len, NOW), 0);
	CU_ASSERT_EQUAL(rnsc_transport_has_path(p.b, p.da), 1);
	CU_ASSERT_EQUAL(st->announces_blackholed, 1);

	/* blackholing an identity with a known path drops that path at once */
	uint8_t other[16];
	memset(other, 0x77, sizeof(other));
	CU_ASSERT_EQUAL(rnsc_transport_blackhole_add(p.b, other, &(rnsc_blackhole_entry){0}), 1);
	CU_ASSERT_EQUAL(rnsc_transport_has_path(p.b, p.da), 1); /* another identity */
	CU_ASSERT_EQUAL(rnsc_transport_blackhole_add(p.b, p.ida_hash, &(rnsc_blackhole_entry){0}),
			1);
	CU_ASSERT_EQUAL(rnsc_transport_has_path(p.b, p.da), 0);
	CU_ASSERT_EQUAL(rnsc_transport_blackhole_purge_paths(p.b), 0);

	/* argument checks */
	CU_ASSERT_EQUAL(rnsc_transport_blackhole_add(NULL, other, &e), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(
		rnsc_transport_blackhole_add(p.b, other, &(rnsc_blackhole_entry){.until = -1}),
		RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(
		rnsc_transport_blackhole_add(p.b, other, &(rnsc_blackhole_entry){.reason_len = 3}),
		RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_transport_blackhole_remove(NULL, other), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_transport_blackhole_get(NULL, other, NULL), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_transport_blackhole_count(NULL), 0);
	size_t cur = 0;
	CU_ASSERT_EQUAL(rnsc_transport_blackhole_next(NULL, &cur, NULL, NULL), 0);
	CU_ASSERT_EQUAL(rnsc_transport_blackhole_purge_paths(NULL), 0);
	pair_down(&p);
}

static void test_iterate_and_expire(void)
{
	pair p;
	pair_up(&p);
	uint8_t ids[3][16];
	for (int i = 0; i < 3; i++)
		memset(ids[i], 0x10 + i, 16);
	uint8_t src[16];
	memset(src, 0xaa, sizeof(src));
	/* forever; expiring in 30 s; from another source expiring in 90 s */
	CU_ASSERT_EQUAL(rnsc_transport_blackhole_add(p.b, ids[0], &(rnsc_blackhole_entry){0}), 1);
	CU_ASSERT_EQUAL(rnsc_transport_blackhole_add(
				p.b, ids[1], &(rnsc_blackhole_entry){.until = NOW / 1000.0 + 30}),
			1);
	rnsc_blackhole_entry e3 = {.has_source = 1, .until = NOW / 1000.0 + 90, .until_int = 1};
	memcpy(e3.source, src, 16);
	CU_ASSERT_EQUAL(rnsc_transport_blackhole_add(p.b, ids[2], &e3), 1);
	size_t cur = 0, n = 0;
	uint8_t h[16];
	rnsc_blackhole_entry e;
	int seen = 0;
	while (rnsc_transport_blackhole_next(p.b, &cur, h, &e)) {
		n++;
		for (int i = 0; i < 3; i++)
			if (memcmp(h, ids[i], 16) == 0)
				seen |= 1 << i;
		if (memcmp(h, ids[2], 16) == 0) {
			CU_ASSERT_EQUAL(memcmp(e.source, src, 16), 0);
			CU_ASSERT_EQUAL(e.until_int, 1);
		}
	}
	CU_ASSERT_EQUAL(n, 3);
	CU_ASSERT_EQUAL(seen, 7);
	/* the expiry job: due at once (never checked), then every 60 s */
	uint64_t d = rnsc_transport_next_deadline(p.b);
	CU_ASSERT(d <= RNSC_BLACKHOLE_CHECK_INTERVAL_MS + 1);
	CU_ASSERT_EQUAL(rnsc_transport_tick(p.b, NOW), 0);
	CU_ASSERT_EQUAL(rnsc_transport_blackhole_count(p.b), 3);
	CU_ASSERT_EQUAL(rnsc_transport_tick(p.b, NOW + 31000), 0); /* not yet checked again */
	CU_ASSERT_EQUAL(rnsc_transport_blackhole_count(p.b), 3);
	CU_ASSERT(rnsc_transport_next_deadline(p.b) <= NOW + RNSC_BLACKHOLE_CHECK_INTERVAL_MS + 1);
	CU_ASSERT_EQUAL(rnsc_transport_tick(p.b, NOW + 61000), 0);
	CU_ASSERT_EQUAL(rnsc_transport_blackhole_count(p.b), 2);
	CU_ASSERT_EQUAL(rnsc_transport_blackhole_get(p.b, ids[1], NULL), RNSC_ERR_NOTFOUND);
	CU_ASSERT_EQUAL(rnsc_transport_tick(p.b, NOW + 122000), 0);
	CU_ASSERT_EQUAL(rnsc_transport_blackhole_count(p.b), 1);
	CU_ASSERT_EQUAL(rnsc_transport_blackhole_get(p.b, ids[0], NULL), 0); /* forever */
	CU_ASSERT_EQUAL(rnsc_transport_tick(p.b, NOW + 10000000), 0);
	CU_ASSERT_EQUAL(rnsc_transport_blackhole_count(p.b), 1);
	/* many expiring at once (more than one batch of 64) */
	for (int i = 0; i < 150; i++) {
		uint8_t id[16] = {0};
		id[0] = (uint8_t)i;
		id[1] = 0xee;
		CU_ASSERT_EQUAL(
			rnsc_transport_blackhole_add(
				p.b, id, &(rnsc_blackhole_entry){.until = NOW / 1000.0 + 1}),
			1);
	}
	CU_ASSERT_EQUAL(rnsc_transport_tick(p.b, NOW + 20000000), 0);
	CU_ASSERT_EQUAL(rnsc_transport_blackhole_count(p.b), 1);
	pair_down(&p);
}

/* umsgpack.packb of single-entry dicts (python: see the commit introducing this test). */
static const char *const REF_FLOAT =
	"81c410000102030405060708090a0b0c0d0e0f83a6736f75726365c410aaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	"aaaa5756e74696ccb41d954fc4f200000a6726561736f6ea47370616d";
static const char *const REF_NONE =
	"81c4100101010101010101010101010101010183a6736f75726365c410aaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	"aaaa5756e74696cc0a6726561736f6ec0";
static const char *const REF_INT =
	"81c4100202020202020202020202020202020283a6736f75726365c410aaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	"aaaa5756e74696cce6553f13ca6726561736f6ec0";

typedef struct collect {
	rnsc_transport *t;
	int n;
} collect;

static int add_cb(void *ud, const uint8_t id[16], const rnsc_blackhole_entry *e)
{
	collect *c = ud;
	c->n++;
	int rc = rnsc_transport_blackhole_add(c->t, id, e);
	return rc < 0 ? rc : 0;
}

static int fail_cb(void *ud, const uint8_t id[16], const rnsc_blackhole_entry *e)
{
	(void)ud;
	(void)id;
	(void)e;
	return RNSC_ERR_NOMEM;
}

static void roundtrip(const char *hx)
{
	uint8_t ref[256], out[256];
	int n = unhex(ref, sizeof(ref), hx);
	CU_ASSERT_FATAL(n > 0);
	rnsc_identity tid;
	rnsc_transport *t;
	CU_ASSERT_EQUAL_FATAL(rnsc_identity_generate(C, &tid), 0);
	CU_ASSERT_EQUAL_FATAL(rnsc_transport_new(C, &t, &tid, NULL), 0);
	collect c = {.t = t};
	CU_ASSERT_EQUAL(rnsc_blackhole_list_parse(ref, (size_t)n, add_cb, &c), 1);
	CU_ASSERT_EQUAL(c.n, 1);
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, out, sizeof(out));
	CU_ASSERT_EQUAL(rnsc_blackhole_list_write(&w, t, NULL), n);
	CU_ASSERT_EQUAL(memcmp(out, ref, (size_t)n), 0);
	/* filtered by source: the entry's source is aa.., not ours */
	uint8_t src[16];
	memset(src, 0xaa, sizeof(src));
	rnsc_mp_writer_init(&w, out, sizeof(out));
	CU_ASSERT_EQUAL(rnsc_blackhole_list_write(&w, t, src), n);
	rnsc_mp_writer_init(&w, out, sizeof(out));
	CU_ASSERT_EQUAL(rnsc_blackhole_list_write(&w, t, rnsc_transport_id(t)), 1); /* {} */
	CU_ASSERT_EQUAL(out[0], 0x80);
	rnsc_transport_del(t);
	rnsc_identity_free(&tid);
}

static void test_list_codec(void)
{
	roundtrip(REF_FLOAT);
	roundtrip(REF_NONE);
	roundtrip(REF_INT);
	CU_ASSERT_EQUAL(rnsc_blackhole_list_write(NULL, NULL, NULL), RNSC_ERR_INVAL);

	uint8_t b[256];
	int n = unhex(b, sizeof(b), REF_FLOAT);
	CU_ASSERT_EQUAL(rnsc_blackhole_list_parse(b, (size_t)n, NULL, NULL), 1);
	CU_ASSERT_EQUAL(rnsc_blackhole_list_parse(b, (size_t)n, fail_cb, NULL), RNSC_ERR_NOMEM);
	CU_ASSERT(rnsc_blackhole_list_parse(b, (size_t)n - 3, NULL, NULL) < 0); /* truncated */
	CU_ASSERT_EQUAL(rnsc_blackhole_list_parse(NULL, 3, NULL, NULL), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_blackhole_list_parse((const uint8_t *)"\x80", 1, NULL, NULL), 0);
	static const char *const bad[] = {
		"90",                                                       /* not a map */
		"8190c0",                                                   /* unhashable key */
		"81c4100101010101010101010101010101010101",                 /* entry not a map */
		"81c4100101010101010101010101010101010181a6736f7572636501", /* source int */
		"81c4100101010101010101010101010101010181a5756e74696ca178", /* until str */
		"81c4100101010101010101010101010101010181a5756e74696ccb7ff8000000000000", /* NaN */
		"81c4100101010101010101010101010101010181a5756e74696ccbbff0000000000000", /* -1.0 */
		"81c4100101010101010101010101010101010181a6726561736f6e01", /* reason int */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		n = unhex(b, sizeof(b), bad[i]);
		CU_ASSERT(rnsc_blackhole_list_parse(b, (size_t)n, NULL, NULL) < 0);
	}
	/* a key of another length is skipped; a negative int until is an expired entry; an
	 * unknown field, a float32 until and a nil source are accepted */
	n = unhex(b, sizeof(b),
		  "82c403010203c0c4100101010101010101010101010101010184a5756e74696cff"
		  "a178c0a6736f75726365c0a6726561736f6ec0");
	collect c = {0};
	rnsc_identity tid;
	CU_ASSERT_EQUAL_FATAL(rnsc_identity_generate(C, &tid), 0);
	CU_ASSERT_EQUAL_FATAL(rnsc_transport_new(C, &c.t, &tid, NULL), 0);
	CU_ASSERT_EQUAL(rnsc_blackhole_list_parse(b, (size_t)n, add_cb, &c), 1);
	rnsc_blackhole_entry e;
	uint8_t id1[16];
	memset(id1, 1, sizeof(id1));
	CU_ASSERT_EQUAL_FATAL(rnsc_transport_blackhole_get(c.t, id1, &e), 0);
	CU_ASSERT(e.until > 0 && e.until < 1);
	CU_ASSERT_EQUAL(e.reason, NULL);
	CU_ASSERT_EQUAL(memcmp(e.source, rnsc_transport_id(c.t), 16), 0);
	n = unhex(b, sizeof(b), "81c4100101010101010101010101010101010181a5756e74696cca4f000000");
	CU_ASSERT_EQUAL(rnsc_blackhole_list_parse(b, (size_t)n, NULL, NULL), 1);
	rnsc_transport_del(c.t);
	rnsc_identity_free(&tid);
}

int main(void)
{
	if (engine_env_open("transport_blackhole_test", 0x1234567887654321u))
		return 1;
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("transport_blackhole", NULL, NULL);
	CU_add_test(s, "blackholed announces never reach the path table", test_announce_dropped);
	CU_add_test(s, "iteration and expiry on the jobs", test_iterate_and_expire);
	CU_add_test(s, "list codec against the reference's bytes", test_list_codec);
	int rc = rnsc_cu_run();
	engine_env_close();
	return rc;
}
