/* SPDX-License-Identifier: MIT */
/* Ratchets: the two file layouts (ratchet_file.h) and the engine's local and remote ratchets
 * (transport_ratchet.c) between two engines wired back to back. The reference's side is
 * tests/live/ratchet_interop_test.sh. */
#include <string.h>

#include "cu_run.h"
#include "destination.h"
#include "engine_env.h"
#include "msgpack.h"
#include "packet.h"
#include "ratchet_file.h"
#include "transport.h"

#define HL RNSC_TRUNCATED_HASHLEN
static uint64_t NOW = 1700000000000ull;

static void test_files(void)
{
	rnsc_identity id, other;
	CU_ASSERT_EQUAL_FATAL(rnsc_identity_generate(C, &id), 0);
	CU_ASSERT_EQUAL_FATAL(rnsc_identity_generate(C, &other), 0);
	uint8_t keys[3][32];
	for (int i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(rnsc_ratchet_generate(C, keys[i]), 0);
	int n = rnsc_ratchet_file_encode(&id, (const uint8_t(*)[32])keys, 3, NULL, 0);
	CU_ASSERT_FATAL(n > 0);
	uint8_t buf[512];
	CU_ASSERT_EQUAL_FATAL(
		rnsc_ratchet_file_encode(&id, (const uint8_t(*)[32])keys, 3, buf, sizeof(buf)), n);
	/* map of 2, "signature" first (the reference's dict order) */
	CU_ASSERT_EQUAL(buf[0], 0x82);
	CU_ASSERT_EQUAL(buf[1], 0xa9);
	CU_ASSERT_EQUAL(memcmp(buf + 2, "signature", 9), 0);
	uint8_t out[3][32];
	size_t cnt = 0;
	CU_ASSERT_EQUAL(rnsc_ratchet_file_decode(&id, buf, (size_t)n, out, 3, &cnt), 0);
	CU_ASSERT_EQUAL(cnt, 3);
	CU_ASSERT_EQUAL(memcmp(out, keys, sizeof(keys)), 0);
	CU_ASSERT_EQUAL(rnsc_ratchet_file_decode(&id, buf, (size_t)n, out, 2, &cnt),
			RNSC_ERR_BUFSIZE);
	/* another identity's signature, a flipped key byte, truncation, trailing bytes */
	CU_ASSERT_EQUAL(rnsc_ratchet_file_decode(&other, buf, (size_t)n, NULL, 0, &cnt),
			RNSC_ERR_SIGNATURE);
	buf[n - 1] ^= 1;
	CU_ASSERT_EQUAL(rnsc_ratchet_file_decode(&id, buf, (size_t)n, NULL, 0, &cnt),
			RNSC_ERR_SIGNATURE);
	buf[n - 1] ^= 1;
	CU_ASSERT(rnsc_ratchet_file_decode(&id, buf, (size_t)n - 1, NULL, 0, &cnt) < 0);
	buf[n] = 0xc0;
	CU_ASSERT_EQUAL(rnsc_ratchet_file_decode(&id, buf, (size_t)n + 1, NULL, 0, &cnt),
			RNSC_ERR_MALFORMED);
	/* an empty list, as enable_ratchets writes first */
	n = rnsc_ratchet_file_encode(&id, NULL, 0, buf, sizeof(buf));
	CU_ASSERT_FATAL(n > 0);
	CU_ASSERT_EQUAL(rnsc_ratchet_file_decode(&id, buf, (size_t)n, NULL, 0, &cnt), 0);
	CU_ASSERT_EQUAL(cnt, 0);
	/* no private key: no signature */
	rnsc_identity pub;
	uint8_t pk[64];
	memcpy(pk, id.x_pub, 32);
	memcpy(pk + 32, id.ed_pub, 32);
	CU_ASSERT_EQUAL_FATAL(rnsc_identity_from_public(C, &pub, pk, 64), 0);
	CU_ASSERT_EQUAL(rnsc_ratchet_file_encode(&pub, NULL, 0, buf, sizeof(buf)), RNSC_ERR_NOKEY);

	/* remote: {"ratchet": bin32, "received": float64} */
	n = rnsc_ratchet_remote_encode(keys[0], 1700000000.25, buf, sizeof(buf));
	CU_ASSERT_EQUAL_FATAL(n, 1 + 8 + 2 + 32 + 9 + 9);
	CU_ASSERT_EQUAL(buf[0], 0x82);
	CU_ASSERT_EQUAL(buf[n - 9], 0xcb);
	uint8_t r[32];
	double t = 0;
	CU_ASSERT_EQUAL(rnsc_ratchet_remote_decode(buf, (size_t)n, r, &t), 0);
	CU_ASSERT_EQUAL(memcmp(r, keys[0], 32), 0);
	CU_ASSERT_DOUBLE_EQUAL(t, 1700000000.25, 1e-9);
	for (int cut = 0; cut < n; cut++)
		CU_ASSERT(rnsc_ratchet_remote_decode(buf, (size_t)cut, r, &t) < 0);
	/* a 31-byte ratchet: get_ratchet's length check */
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, buf, sizeof(buf));
	rnsc_mp_write_map(&w, 2);
	rnsc_mp_write_cstr(&w, "received");
	rnsc_mp_write_uint(&w, 5);
	rnsc_mp_write_cstr(&w, "ratchet");
	rnsc_mp_write_bin(&w, keys[0], 31);
	n = rnsc_mp_writer_finish(&w);
	CU_ASSERT_EQUAL(rnsc_ratchet_remote_decode(buf, (size_t)n, r, &t), RNSC_ERR_KEYLEN);
	rnsc_identity_free(&id);
	rnsc_identity_free(&other);
	rnsc_identity_free(&pub);
}

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
	int persisted;    /* on_ratchet calls */
	int rotated;      /* on_dest_ratchets calls */
	size_t rotated_n;
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
static void on_ratchet(void *ud, const uint8_t *dest, const uint8_t *pub, uint64_t rcv)
{
	(void)dest, (void)pub, (void)rcv;
	((side *)ud)->persisted++;
}
static void on_dest_ratchets(void *ud, const uint8_t *dest, const uint8_t (*r)[32], size_t n)
{
	(void)dest, (void)r;
	((side *)ud)->rotated++;
	((side *)ud)->rotated_n = n;
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
					       .on_ratchet = on_ratchet,
					       .on_dest_ratchets = on_dest_ratchets};
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

static void test_engine(void)
{
	sides_up();
	rnsc_identity id;
	CU_ASSERT_EQUAL_FATAL(rnsc_identity_generate(C, &id), 0);
	static const char *const asp[] = {"ratchet"};
	uint8_t dh[HL];
	CU_ASSERT_EQUAL_FATAL(
		rnsc_transport_dest_add(S[0].t, RNSC_DEST_SINGLE, &id, "rnsclt", asp, 1, 1, dh), 0);
	memcpy(S[0].dest, dh, HL);
	/* enforcement needs ratchets on (the reference returns False) */
	CU_ASSERT_EQUAL(rnsc_transport_dest_enforce_ratchets(S[0].t, dh), RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(rnsc_transport_dest_ratchets(S[0].t, dh, NULL, NULL), RNSC_ERR_STATE);
	/* without ratchets: identity key, no ratchet id */
	CU_ASSERT_EQUAL(rnsc_transport_announce(S[0].t, dh, NULL, 0, NOW), 0);
	pump();
	uint8_t rp[32];
	CU_ASSERT_EQUAL(rnsc_transport_ratchet_get(S[1].t, dh, rp), RNSC_ERR_NOTFOUND);
	CU_ASSERT_EQUAL(rnsc_transport_send(S[1].t, dh, (const uint8_t *)"plain", 5, NULL, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(S[0].data_n, 1);
	CU_ASSERT_EQUAL(S[0].rid_used, 0);

	/* ratchets on, loaded empty: the next announce rotates and carries ratchet 0 */
	CU_ASSERT_EQUAL(rnsc_transport_dest_ratchets_enable(S[0].t, dh, NULL, 0), 0);
	CU_ASSERT_EQUAL(rnsc_transport_dest_ratchet_interval(S[0].t, dh, 0), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_transport_dest_ratchet_interval(S[0].t, dh, 60), 0);
	NOW += 1000;
	CU_ASSERT_EQUAL(rnsc_transport_announce(S[0].t, dh, NULL, 0, NOW), 0);
	CU_ASSERT_EQUAL(S[0].rotated, 1);
	CU_ASSERT_EQUAL(S[0].rotated_n, 1);
	CU_ASSERT_EQUAL(S[0].persisted, 1); /* _remember_ratchet of its own */
	pump();
	const uint8_t(*list)[32];
	size_t n;
	CU_ASSERT_EQUAL_FATAL(rnsc_transport_dest_ratchets(S[0].t, dh, &list, &n), 0);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	uint8_t pub0[32], id0[10];
	CU_ASSERT_EQUAL(rnsc_ratchet_public(C, pub0, list[0]), 0);
	CU_ASSERT_EQUAL(rnsc_ratchet_id(C, id0, pub0), 0);
	CU_ASSERT_EQUAL_FATAL(rnsc_transport_ratchet_get(S[1].t, dh, rp), 0);
	CU_ASSERT_EQUAL(memcmp(rp, pub0, 32), 0);
	CU_ASSERT_EQUAL(S[1].persisted, 1);
	/* the same ratchet again is not persisted again */
	NOW += 1000;
	CU_ASSERT_EQUAL(rnsc_transport_announce(S[0].t, dh, NULL, 0, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(S[0].rotated, 1); /* within the interval */
	CU_ASSERT_EQUAL(S[1].persisted, 1);
	CU_ASSERT_EQUAL(rnsc_transport_send(S[1].t, dh, (const uint8_t *)"r0", 2, NULL, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(S[0].data_n, 2);
	CU_ASSERT_EQUAL(S[0].rid_used, 1);
	CU_ASSERT_EQUAL(memcmp(S[0].rid, id0, 10), 0);

	/* past the interval: rotation, the old one retained and still accepted */
	NOW += 61000;
	CU_ASSERT_EQUAL(rnsc_transport_announce(S[0].t, dh, NULL, 0, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(S[0].rotated, 2);
	CU_ASSERT_EQUAL_FATAL(rnsc_transport_dest_ratchets(S[0].t, dh, &list, &n), 0);
	CU_ASSERT_EQUAL_FATAL(n, 2);
	uint8_t pub1[32], id1[10];
	CU_ASSERT_EQUAL(rnsc_ratchet_public(C, pub1, list[0]), 0);
	CU_ASSERT_EQUAL(rnsc_ratchet_id(C, id1, pub1), 0);
	CU_ASSERT_NOT_EQUAL(memcmp(pub0, pub1, 32), 0);
	CU_ASSERT_EQUAL(S[1].persisted, 2);
	CU_ASSERT_EQUAL(rnsc_transport_send(S[1].t, dh, (const uint8_t *)"r1", 2, NULL, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(S[0].data_n, 3);
	CU_ASSERT_EQUAL(memcmp(S[0].rid, id1, 10), 0);

	/* enforcement: a packet to the identity key is refused, ratchet packets still pass */
	CU_ASSERT_EQUAL(rnsc_transport_dest_enforce_ratchets(S[0].t, dh), 0);
	uint64_t failed = rnsc_transport_get_stats(S[0].t)->decrypt_failed;
	{
		rnsc_identity rid;
		uint8_t pk[64];
		memcpy(pk, id.x_pub, 32);
		memcpy(pk + 32, id.ed_pub, 32);
		CU_ASSERT_EQUAL_FATAL(rnsc_identity_from_public(C, &rid, pk, 64), 0);
		uint8_t ct[200], raw[300];
		int cl =
			rnsc_identity_encrypt(&rid, ct, sizeof(ct), (const uint8_t *)"id", 2, NULL);
		CU_ASSERT_FATAL(cl > 0);
		rnsc_packet p = {0};
		p.header_type = RNSC_HEADER_1;
		p.dest_type = RNSC_DEST_SINGLE;
		p.packet_type = RNSC_PKT_DATA;
		memcpy(p.dest_hash, dh, HL);
		p.data = ct;
		p.data_len = (size_t)cl;
		int rl = rnsc_packet_pack(raw, sizeof(raw), &p, RNSC_MTU);
		CU_ASSERT_FATAL(rl > 0);
		CU_ASSERT_EQUAL(rnsc_transport_ingest(S[0].t, 1, raw, (size_t)rl, NOW), 0);
		rnsc_identity_free(&rid);
	}
	CU_ASSERT_EQUAL(S[0].data_n, 3);
	CU_ASSERT_EQUAL(rnsc_transport_get_stats(S[0].t)->decrypt_failed, failed + 1);
	CU_ASSERT_EQUAL(rnsc_transport_send(S[1].t, dh, (const uint8_t *)"r2", 2, NULL, NOW), 0);
	pump();
	CU_ASSERT_EQUAL(S[0].data_n, 4);

	/* retained 1: the older ratchet goes at once */
	CU_ASSERT_EQUAL(rnsc_transport_dest_retained_ratchets(S[0].t, dh, 0), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_transport_dest_retained_ratchets(S[0].t, dh, 1), 0);
	CU_ASSERT_EQUAL_FATAL(rnsc_transport_dest_ratchets(S[0].t, dh, &list, &n), 0);
	CU_ASSERT_EQUAL(n, 1);

	/* remote ratchets: import refuses expired ones, iteration sees them */
	uint8_t other[HL] = {1, 2, 3};
	CU_ASSERT_EQUAL(rnsc_transport_ratchet_import(S[1].t, other, pub0,
						      NOW - RNSC_RATCHET_EXPIRY_S * 1000, NOW),
			RNSC_ERR_RANGE);
	CU_ASSERT_EQUAL(rnsc_transport_ratchet_import(S[1].t, other, pub0, NOW - 1000, NOW), 0);
	size_t cur = 0, seen = 0;
	uint8_t d[HL];
	uint64_t rcv;
	while (rnsc_transport_ratchet_next(S[1].t, &cur, d, rp, &rcv))
		seen++;
	CU_ASSERT_EQUAL(seen, 2);
	/* a remembered ratchet survives in a new engine only through import */
	rnsc_identity_free(&id);
	sides_down();
}

/* Remote ratchet files whose "received" is each number kind Python compares (float64,
 * float32, int, negative int), a key that is not a string (skipped, as a dict lookup ignores
 * it), and a time of another type (refused); the local file's reader skips a non-string
 * key too and still requires its signature. */
static size_t remote_doc(uint8_t *buf, size_t cap, int kind, int extra_key)
{
	static const uint8_t rk[32] = {5, 6, 7};
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, buf, cap);
	rnsc_mp_write_map(&w, 2 + (extra_key != 0));
	if (extra_key) {
		rnsc_mp_write_uint(&w, 1);
		rnsc_mp_write_nil(&w);
	}
	rnsc_mp_write_cstr(&w, "ratchet");
	rnsc_mp_write_bin(&w, rk, 32);
	rnsc_mp_write_cstr(&w, "received");
	switch (kind) {
	case 0:
		rnsc_mp_write_double(&w, 1.7e9);
		break;
	case 1:
		rnsc_mp_write_float(&w, 1.5e9f);
		break;
	case 2:
		rnsc_mp_write_uint(&w, 1700000000);
		break;
	case 3:
		rnsc_mp_write_int(&w, -3);
		break;
	default:
		rnsc_mp_write_cstr(&w, "yesterday");
		break;
	}
	int n = rnsc_mp_writer_finish(&w);
	CU_ASSERT_FATAL(n > 0);
	return (size_t)n;
}

static void test_file_kinds(void)
{
	uint8_t buf[256], r[32];
	double t = 0;
	static const double want[] = {1.7e9, 1.5e9, 1.7e9, -3};
	for (int k = 0; k < 4; k++) {
		size_t n = remote_doc(buf, sizeof buf, k, k == 2);
		CU_ASSERT_EQUAL(rnsc_ratchet_remote_decode(buf, n, r, &t), 0);
		CU_ASSERT(t > want[k] - 1000 && t < want[k] + 1000);
		CU_ASSERT_EQUAL(r[0], 5);
	}
	size_t n = remote_doc(buf, sizeof buf, 4, 1);
	CU_ASSERT_NOT_EQUAL(rnsc_ratchet_remote_decode(buf, n, r, &t), 0);
	/* the local file: a non-string key, then a signature that cannot verify */
	rnsc_identity id;
	CU_ASSERT_EQUAL_FATAL(rnsc_identity_generate(C, &id), 0);
	static const uint8_t sig[64] = {1}, packed[4] = {0x91, 0xc4, 0x01, 0x00};
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, buf, sizeof buf);
	rnsc_mp_write_map(&w, 3);
	rnsc_mp_write_uint(&w, 9);
	rnsc_mp_write_nil(&w);
	rnsc_mp_write_cstr(&w, "signature");
	rnsc_mp_write_bin(&w, sig, 64);
	rnsc_mp_write_cstr(&w, "ratchets");
	rnsc_mp_write_bin(&w, packed, sizeof packed);
	int len = rnsc_mp_writer_finish(&w);
	CU_ASSERT_FATAL(len > 0);
	size_t cnt = 0;
	CU_ASSERT_EQUAL(rnsc_ratchet_file_decode(&id, buf, (size_t)len, NULL, 0, &cnt),
			RNSC_ERR_SIGNATURE);
	rnsc_identity_free(&id);
}

int main(void)
{
	if (engine_env_open("ratchet_test", 0x9E3779B97F4A7C15u))
		return 1;
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("ratchet", NULL, NULL);
	CU_add_test(s, "ratchet files", test_files);
	CU_add_test(s, "ratchet file number kinds and keys", test_file_kinds);
	CU_add_test(s, "local and remote ratchets in the engine", test_engine);
	int rc = rnsc_cu_run();
	engine_env_close();
	return rc;
}
