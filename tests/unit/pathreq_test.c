/* SPDX-License-Identifier: MIT */
/* Path requests: destination, data layout, the receivers' reading of it. */
#include "destination.h"
#include "packet.h"
#include "pathreq.h"
#include "wire_test_util.h"

/* Transport.request_path(00..0f, tag=0x77*16) on a transport node with id 10..1f */
static const char *PATHREQ =
	"08006b9f66014d9853faab220fba47d0276100000102030405060708090a0b0c0d0e0f101112131415161718"
	"191a1b1c1d1e1f77777777777777777777777777777777";

static void t_kat(void)
{
	uint8_t prd[16], dest[16], tid[16], tag[16], data[64], raw[128];
	CU_ASSERT_EQUAL(rnsc_pathreq_destination(C, prd), 0);
	CU_ASSERT(eqhex(prd, 16, "6b9f66014d9853faab220fba47d02761"));
	for (int i = 0; i < 16; i++)
		dest[i] = (uint8_t)i, tid[i] = (uint8_t)(16 + i);
	memset(tag, 0x77, 16);
	int n = rnsc_pathreq_build(data, sizeof(data), dest, tid, tag, 16);
	CU_ASSERT_EQUAL_FATAL(n, 48);
	rnsc_packet p = {0};
	p.dest_type = RNSC_DEST_PLAIN;
	memcpy(p.dest_hash, prd, 16);
	p.data = data;
	p.data_len = (size_t)n;
	int m = rnsc_packet_pack(raw, sizeof(raw), &p, RNSC_MTU);
	CU_ASSERT(eqhex(raw, (size_t)m, PATHREQ));
	rnsc_pathreq r;
	CU_ASSERT_EQUAL(rnsc_pathreq_parse(&r, data, (size_t)n), 0);
	CU_ASSERT(r.has_transport_id);
	CU_ASSERT(memcmp(r.transport_id, tid, 16) == 0);
	CU_ASSERT_EQUAL(r.tag_len, 16);
	CU_ASSERT_FALSE(r.tag_truncated);
}

static void t_forms(void)
{
	uint8_t dest[16] = {9}, tag[16] = {1, 2, 3}, data[80];
	rnsc_pathreq r;
	/* without transport id, tags of 1..16 bytes */
	for (size_t t = 1; t <= 16; t++) {
		int n = rnsc_pathreq_build(data, sizeof(data), dest, NULL, tag, t);
		CU_ASSERT_EQUAL(n, (int)(16 + t));
		CU_ASSERT_EQUAL(rnsc_pathreq_parse(&r, data, (size_t)n), 0);
		CU_ASSERT_FALSE(r.has_transport_id);
		CU_ASSERT_EQUAL(r.tag_len, t);
		CU_ASSERT(memcmp(r.dest_hash, dest, 16) == 0);
	}
	/* receivers' reading: tagless, short, long tags cut to 16 */
	CU_ASSERT_EQUAL(rnsc_pathreq_parse(&r, data, 16), RNSC_ERR_NOTAG);
	CU_ASSERT_EQUAL(rnsc_pathreq_parse(&r, data, 15), RNSC_ERR_TRUNCATED);
	CU_ASSERT_EQUAL(rnsc_pathreq_parse(&r, data, 0), RNSC_ERR_TRUNCATED);
	memset(data + 32, 0x5a, 40);
	CU_ASSERT_EQUAL(rnsc_pathreq_parse(&r, data, 72), 0);
	CU_ASSERT(r.has_transport_id);
	CU_ASSERT_EQUAL(r.tag_len, 16);
	CU_ASSERT(r.tag_truncated);
	CU_ASSERT_EQUAL(rnsc_pathreq_parse(&r, data, 33), 0);
	CU_ASSERT(r.has_transport_id && r.tag_len == 1);
	CU_ASSERT_EQUAL(rnsc_pathreq_parse(NULL, data, 33), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_pathreq_parse(&r, NULL, 33), RNSC_ERR_INVAL);
	/* builder limits */
	CU_ASSERT_EQUAL(rnsc_pathreq_build(data, sizeof(data), dest, NULL, tag, 0), RNSC_ERR_RANGE);
	CU_ASSERT_EQUAL(rnsc_pathreq_build(data, sizeof(data), dest, NULL, tag, 17),
			RNSC_ERR_RANGE);
	CU_ASSERT_EQUAL(rnsc_pathreq_build(data, 31, dest, NULL, tag, 16), RNSC_ERR_BUFSIZE);
	CU_ASSERT_EQUAL(rnsc_pathreq_build(NULL, 31, dest, NULL, tag, 16), RNSC_ERR_INVAL);
}

int main(void)
{
	static const wt_test tests[] = {
		{"request KAT", t_kat},
		{"forms and bounds", t_forms},
	};
	return wt_main("pathreq", tests, sizeof(tests) / sizeof(tests[0]));
}
