/* SPDX-License-Identifier: MIT */
/* The persisted path table (src/runtime/path_file.c): the reference's bytes, a round trip
 * through the writer, announce cache entries, and truncated or corrupted files refused as
 * a whole. */
#include <stdio.h>
#include <string.h>

#include "cu_run.h"
#include "path_file.h"
#include "tunnel_file.h"

/* umsgpack.packb() by the pinned reference's vendored umsgpack of three entries in
 * Transport.save_path_table's layout; the second has a 5-byte destination hash and is
 * skipped, as Transport.start skips it. */
static const char *REF_HEX =
	"9398c410000102030405060708090a0b0c0d0e0fcb41d954fc40200000c410101112131415161718191a1b"
	"1c1d1e1f01cb41d9574ae020000092c40a01010101010101010101c40a02020202020202020202c4203333"
	"333333333333333333333333333333333333333333333333333333333333c4204444444444444444444444"
	"44444444444444444444444444444444444444444498c4050001020304cb3ff0000000000000c410000000"
	"0000000000000000000000000001cb400000000000000090c4200000000000000000000000000000000000"
	"000000000000000000000000000000c4200000000000000000000000000000000000000000000000000000"
	"00000000000098c410202122232425262728292a2b2c2d2e2fcb41d954fc40400000c41030313233343536"
	"3738393a3b3c3d3e3f03cb41d9574ae040000091c40a09090909090909090909c420555555555555555555"
	"5555555555555555555555555555555555555555555555c420666666666666666666666666666666666666"
	"6666666666666666666666666666";

static size_t unhex(uint8_t *out, const char *h)
{
	size_t n = 0;
	for (; h[0] && h[1]; h += 2)
		sscanf(h, "%2hhx", &out[n++]);
	return n;
}

typedef struct seen {
	int n;
	rnsc_path_record r[3];
} seen;

static int collect(void *ud, const rnsc_path_record *r)
{
	seen *s = ud;
	if (s->n >= 3)
		return -99;
	s->r[s->n++] = *r;
	return 0;
}

static int count_only(void *ud, const rnsc_path_record *r)
{
	(void)r;
	(*(int *)ud)++;
	return 0;
}

static void test_reference_bytes(void)
{
	uint8_t buf[1024];
	size_t len = unhex(buf, REF_HEX);
	seen s = {0};
	size_t skipped = 0;
	CU_ASSERT_EQUAL(rnsc_path_file_parse(buf, len, collect, &s, &skipped), 2);
	CU_ASSERT_EQUAL(skipped, 1);
	CU_ASSERT_EQUAL_FATAL(s.n, 2);
	CU_ASSERT_EQUAL(s.r[0].dest_hash[1], 1);
	CU_ASSERT_EQUAL(s.r[0].path.timestamp, 1700000000500ull);
	CU_ASSERT_EQUAL(s.r[0].path.expires, 1700604800500ull);
	CU_ASSERT_EQUAL(s.r[0].path.next_hop[0], 16);
	CU_ASSERT_EQUAL(s.r[0].path.hops, 1);
	CU_ASSERT_EQUAL(s.r[0].n_blobs, 2);
	CU_ASSERT_EQUAL(s.r[0].blobs[1][9], 2);
	CU_ASSERT_EQUAL(s.r[0].iface_hash[0], 0x33);
	CU_ASSERT_EQUAL(s.r[0].path.packet_hash[31], 0x44);
	CU_ASSERT_EQUAL(s.r[1].path.hops, 3);
	CU_ASSERT_EQUAL(s.r[1].n_blobs, 1);
}

static void test_round_trip(void)
{
	rnsc_path_record in;
	memset(&in, 0, sizeof(in));
	memset(in.dest_hash, 7, sizeof(in.dest_hash));
	in.path.timestamp = 1764460800123ull;
	in.path.expires = in.path.timestamp + 604800000ull;
	in.path.hops = 5;
	in.n_blobs = RNSC_MAX_RANDOM_BLOBS;
	for (size_t i = 0; i < in.n_blobs; i++)
		memset(in.blobs[i], (int)i, 10);
	memset(in.iface_hash, 9, sizeof(in.iface_hash));
	static uint8_t buf[4096];
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, buf, sizeof(buf));
	rnsc_path_file_begin(&w, 1);
	rnsc_path_file_entry(&w, &in);
	CU_ASSERT_FATAL(rnsc_mp_writer_finish(&w) >= 0);
	seen s = {0};
	CU_ASSERT_EQUAL(rnsc_path_file_parse(buf, w.len, collect, &s, NULL), 1);
	CU_ASSERT_EQUAL(memcmp(s.r[0].dest_hash, in.dest_hash, 16), 0);
	CU_ASSERT_EQUAL(s.r[0].path.timestamp, in.path.timestamp);
	CU_ASSERT_EQUAL(s.r[0].path.expires, in.path.expires);
	CU_ASSERT_EQUAL(s.r[0].path.hops, 5);
	CU_ASSERT_EQUAL(s.r[0].n_blobs, RNSC_MAX_RANDOM_BLOBS);
	CU_ASSERT_EQUAL(memcmp(s.r[0].blobs, in.blobs, sizeof(in.blobs)), 0);
}

static void test_cache_entry(void)
{
	uint8_t raw[40], buf[128];
	memset(raw, 0x5a, sizeof(raw));
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, buf, sizeof(buf));
	rnsc_path_cache_write(&w, raw, sizeof(raw), "TCPInterface[x/127.0.0.1:1]");
	CU_ASSERT_FATAL(rnsc_mp_writer_finish(&w) >= 0);
	const uint8_t *p;
	size_t len;
	CU_ASSERT_EQUAL(rnsc_path_cache_parse(buf, w.len, &p, &len), 0);
	CU_ASSERT_EQUAL(len, sizeof(raw));
	CU_ASSERT_EQUAL(memcmp(p, raw, len), 0);
	for (size_t cut = 0; cut < w.len - 29; cut++) /* the raw bytes themselves cut short */
		CU_ASSERT(rnsc_path_cache_parse(buf, cut, &p, &len) < 0);
	CU_ASSERT(rnsc_path_cache_parse((const uint8_t *)"\x90", 1, &p, &len) < 0);
	CU_ASSERT(rnsc_path_cache_parse((const uint8_t *)"\x91\xc0", 2, &p, &len) < 0);
}

static void test_truncations_and_corruptions(void)
{
	uint8_t ref[1024], buf[1024];
	size_t len = unhex(ref, REF_HEX);
	for (size_t cut = 0; cut < len; cut++) {
		int calls = 0;
		CU_ASSERT(rnsc_path_file_parse(ref, cut, count_only, &calls, NULL) < 0);
		CU_ASSERT_EQUAL(calls, 0);
	}
	static const uint8_t vals[] = {0x00, 0x7f, 0xc0, 0xc1, 0xc4, 0xdc, 0xff, 0x98};
	for (size_t i = 0; i < len; i++) {
		for (size_t v = 0; v < sizeof(vals); v++) {
			memcpy(buf, ref, len);
			buf[i] = vals[v];
			int calls = 0;
			int rc = rnsc_path_file_parse(buf, len, count_only, &calls, NULL);
			if (rc < 0) {
				CU_ASSERT_EQUAL(calls, 0);
			} else {
				CU_ASSERT_EQUAL(calls, rc);
			}
		}
	}
}

/* storage/tunnels: one tunnel without paths whose expires is written as each msgpack
 * number kind (float64, float32, uint, int: seconds), a tunnel id of the wrong length
 * (skipped), and the structural errors that reject the file. */
static size_t tunnel_doc(uint8_t *buf, size_t cap, int kind, size_t idlen, size_t fields)
{
	static const uint8_t id[32] = {7};
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, buf, cap);
	rnsc_mp_write_array(&w, 1);
	rnsc_mp_write_array(&w, fields);
	rnsc_mp_write_bin(&w, id, idlen);
	if (fields > 1)
		rnsc_mp_write_bin(&w, id, 32); /* the interface hash */
	if (fields > 2)
		rnsc_mp_write_array(&w, 0);
	if (fields > 3) {
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
			rnsc_mp_write_int(&w, -5);
			break;
		default:
			rnsc_mp_write_cstr(&w, "soon");
			break;
		}
	}
	for (size_t f = 4; f < fields; f++)
		rnsc_mp_write_nil(&w); /* fields newer releases may add */
	int n = rnsc_mp_writer_finish(&w);
	CU_ASSERT_FATAL(n > 0);
	return (size_t)n;
}

static uint64_t seen_expires;
static int on_tunnel(void *ud, const rnsc_tunnel_record *tn, const rnsc_path_record *path)
{
	(void)ud, (void)path;
	seen_expires = tn->expires;
	return 0;
}

static void test_tunnel_file(void)
{
	uint8_t buf[256];
	size_t skipped = 0, n;
	static const uint64_t want[] = {1700000000000ull, 1500000000000ull, 1700000000000ull, 0};
	for (int k = 0; k < 4; k++) {
		n = tunnel_doc(buf, sizeof buf, k, 32, 4 + (k == 2));
		seen_expires = 1;
		CU_ASSERT_EQUAL(rnsc_tunnel_file_parse(buf, n, on_tunnel, NULL, &skipped), 1);
		CU_ASSERT(seen_expires / 1000 == want[k] / 1000); /* -5 s: expired (0) */
		CU_ASSERT_EQUAL(skipped, 0);
	}
	n = tunnel_doc(buf, sizeof buf, 4, 32, 4);
	CU_ASSERT(rnsc_tunnel_file_parse(buf, n, NULL, NULL, NULL) < 0);
	n = tunnel_doc(buf, sizeof buf, 0, 16, 4);
	CU_ASSERT_EQUAL(rnsc_tunnel_file_parse(buf, n, on_tunnel, NULL, &skipped), 0);
	CU_ASSERT_EQUAL(skipped, 1);
	n = tunnel_doc(buf, sizeof buf, 0, 32, 3);
	CU_ASSERT(rnsc_tunnel_file_parse(buf, n, NULL, NULL, NULL) < 0);
	for (size_t cut = 1; cut < n; cut++)
		CU_ASSERT(rnsc_tunnel_file_parse(buf, cut, NULL, NULL, NULL) < 0);
	CU_ASSERT(rnsc_tunnel_file_parse((const uint8_t *)"\x90", 1, NULL, NULL, NULL) == 0);
	CU_ASSERT(rnsc_tunnel_file_parse(NULL, 0, NULL, NULL, NULL) < 0);
}

int main(void)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("path_file", NULL, NULL);
	CU_add_test(s, "reference bytes", test_reference_bytes);
	CU_add_test(s, "round trip", test_round_trip);
	CU_add_test(s, "announce cache entry", test_cache_entry);
	CU_add_test(s, "truncations and corruptions", test_truncations_and_corruptions);
	CU_add_test(s, "tunnel file: expires kinds, skipped and rejected", test_tunnel_file);
	return rnsc_cu_run();
}
