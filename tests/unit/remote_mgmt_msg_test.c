/* SPDX-License-Identifier: MIT */
/* The remote-management request data and table filter (src/runtime/remote_mgmt_msg.c):
 * the request lists the reference's rnstatus -R and rnpath -R send, the values Python's
 * `x == True` and `command == "table"` accept, and the filter over a list of table maps. */
#include <stdlib.h>
#include <string.h>

#include "cu_run.h"
#include "msgpack.h"
#include "remote_mgmt.h"

static uint8_t buf[256];
static rnsc_mp_writer W;

static void begin(void)
{
	rnsc_mp_writer_init(&W, buf, sizeof(buf));
}

static size_t end(void)
{
	int n = rnsc_mp_writer_finish(&W);
	CU_ASSERT_FATAL(n > 0);
	return (size_t)n;
}

static void test_status(void)
{
	int ls = -1, pf = -1;
	size_t n;
	begin(); /* [True, False]: link stats, no profiling */
	rnsc_mp_write_array(&W, 2);
	rnsc_mp_write_bool(&W, 1);
	rnsc_mp_write_bool(&W, 0);
	n = end();
	CU_ASSERT_EQUAL(rnsc_remote_mgmt_parse_status(buf, n, &ls, &pf), 1);
	CU_ASSERT(ls == 1 && pf == 0);
	begin(); /* [1.0, 1]: both compare equal to True */
	rnsc_mp_write_array(&W, 2);
	rnsc_mp_write_double(&W, 1.0);
	rnsc_mp_write_uint(&W, 1);
	n = end();
	CU_ASSERT_EQUAL(rnsc_remote_mgmt_parse_status(buf, n, &ls, &pf), 1);
	CU_ASSERT(ls == 1 && pf == 1);
	begin(); /* ["yes"]: a string is not True */
	rnsc_mp_write_array(&W, 1);
	rnsc_mp_write_cstr(&W, "yes");
	n = end();
	CU_ASSERT_EQUAL(rnsc_remote_mgmt_parse_status(buf, n, &ls, &pf), 1);
	CU_ASSERT(ls == 0 && pf == 0);
	begin(); /* [] and a non-list: no answer */
	rnsc_mp_write_array(&W, 0);
	n = end();
	CU_ASSERT_EQUAL(rnsc_remote_mgmt_parse_status(buf, n, &ls, &pf), 0);
	CU_ASSERT_EQUAL(rnsc_remote_mgmt_parse_status((const uint8_t *)"\xc3", 1, &ls, &pf), 0);
	CU_ASSERT_EQUAL(rnsc_remote_mgmt_parse_status((const uint8_t *)"\x91", 1, &ls, &pf), 0);
}

static void test_path(void)
{
	static const uint8_t h[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
	rnsc_remote_mgmt_path_req q;
	size_t n;
	begin(); /* ["table", hash, 3] */
	rnsc_mp_write_array(&W, 3);
	rnsc_mp_write_cstr(&W, "table");
	rnsc_mp_write_bin(&W, h, sizeof(h));
	rnsc_mp_write_uint(&W, 3);
	n = end();
	CU_ASSERT_EQUAL(rnsc_remote_mgmt_parse_path(buf, n, &q), 1);
	CU_ASSERT(q.table && !q.dest_any && q.dest_len == 16 && memcmp(q.dest, h, 16) == 0);
	CU_ASSERT(q.with_hops && q.max_hops == 3);
	begin(); /* ["table", None, -1]: any destination, a signed hop limit */
	rnsc_mp_write_array(&W, 3);
	rnsc_mp_write_cstr(&W, "table");
	rnsc_mp_write_nil(&W);
	rnsc_mp_write_int(&W, -1);
	n = end();
	CU_ASSERT_EQUAL(rnsc_remote_mgmt_parse_path(buf, n, &q), 1);
	CU_ASSERT(q.table && q.dest_any && q.with_hops && q.max_hops == -1);
	begin(); /* ["rates", "x"]: a destination that is not bytes matches nothing */
	rnsc_mp_write_array(&W, 2);
	rnsc_mp_write_cstr(&W, "rates");
	rnsc_mp_write_cstr(&W, "x");
	n = end();
	CU_ASSERT_EQUAL(rnsc_remote_mgmt_parse_path(buf, n, &q), 1);
	CU_ASSERT(!q.table && !q.dest_any && q.dest == NULL && !q.with_hops);
	begin(); /* ["drop"] and [7]: no answer */
	rnsc_mp_write_array(&W, 1);
	rnsc_mp_write_cstr(&W, "drop");
	n = end();
	CU_ASSERT_EQUAL(rnsc_remote_mgmt_parse_path(buf, n, &q), 0);
	begin();
	rnsc_mp_write_array(&W, 1);
	rnsc_mp_write_uint(&W, 7);
	n = end();
	CU_ASSERT_EQUAL(rnsc_remote_mgmt_parse_path(buf, n, &q), 0);
	/* ["table", <truncated>] */
	CU_ASSERT_EQUAL(
		rnsc_remote_mgmt_parse_path((const uint8_t *)"\x92\xa5table\xc4\x10", 9, &q), 0);
}

static void put_entry(const uint8_t *hash, uint64_t hops)
{
	rnsc_mp_write_map(&W, 2);
	rnsc_mp_write_cstr(&W, "hops");
	rnsc_mp_write_uint(&W, hops);
	rnsc_mp_write_cstr(&W, "hash");
	rnsc_mp_write_bin(&W, hash, 16);
}

static void test_filter(void)
{
	uint8_t a[16], b[16];
	memset(a, 0xAA, sizeof(a));
	memset(b, 0xBB, sizeof(b));
	begin(); /* [{hops, hash a}, {hops, hash b}, 5] */
	rnsc_mp_write_array(&W, 3);
	put_entry(a, 1);
	put_entry(b, 2);
	rnsc_mp_write_uint(&W, 5);
	size_t n = end();
	uint8_t *out = NULL;
	size_t ol = 0;
	CU_ASSERT_EQUAL_FATAL(rnsc_remote_mgmt_filter(buf, n, b, &out, &ol), 1);
	rnsc_mp_reader r;
	rnsc_mp_reader_init(&r, out, ol);
	size_t cnt = 0;
	CU_ASSERT(rnsc_mp_read_array(&r, &cnt) == 0 && cnt == 1);
	CU_ASSERT(ol > 16 && memcmp(out + ol - 16, b, 16) == 0);
	free(out);
	CU_ASSERT_EQUAL_FATAL(rnsc_remote_mgmt_filter(buf, n, NULL, &out, &ol), 1);
	CU_ASSERT_EQUAL(ol, n); /* every entry kept: the same list */
	CU_ASSERT(memcmp(out, buf, n) == 0);
	free(out);
	/* a list cut inside an entry, and no list at all */
	CU_ASSERT_EQUAL(rnsc_remote_mgmt_filter(buf, n - 4, a, &out, &ol), RNSC_ERR_MALFORMED);
	CU_ASSERT_EQUAL(rnsc_remote_mgmt_filter((const uint8_t *)"\x05", 1, a, &out, &ol),
			RNSC_ERR_MALFORMED);
}

int main(void)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("remote_mgmt_msg", NULL, NULL);
	CU_add_test(s, "status request data", test_status);
	CU_add_test(s, "path request data", test_path);
	CU_add_test(s, "table filter", test_filter);
	return rnsc_cu_run();
}
