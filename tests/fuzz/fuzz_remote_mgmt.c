/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the messages of remote management (src/runtime/remote_mgmt_msg.c):
 * the data of a "/status" or "/path" request, which any identified link peer can send to a
 * daemon with enable_remote_management, and a table answer filtered by destination hash
 * (also what a hostile remote instance hands rnsc status/path -R).
 *
 *   1. both request parsers over the input: they accept or refuse, and a destination they
 *      hand out lies inside the input;
 *   2. the filter over the input as a table, with no hash and with the first 16 bytes as
 *      the hash: a kept list is never longer than the input plus its header, re-reads as
 *      a list, and filtering it again keeps it as it is.
 */
#include "fuzz_wire.h"
#include "msgpack.h"
#include "remote_mgmt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int ls, pf;
	int r = rnsc_remote_mgmt_parse_status(data, size, &ls, &pf);
	FUZZ_CHECK(r == 0 || r == 1);
	FUZZ_CHECK(ls == 0 || ls == 1);
	rnsc_remote_mgmt_path_req q;
	r = rnsc_remote_mgmt_parse_path(data, size, &q);
	FUZZ_CHECK(r == 0 || r == 1);
	if (r == 1 && q.dest)
		FUZZ_CHECK(q.dest >= data && q.dest + q.dest_len <= data + size && !q.dest_any);

	for (int pass = 0; pass < 2; pass++) {
		const uint8_t *dest = pass && size >= 16 ? data : NULL;
		uint8_t *out = NULL;
		size_t ol = 0;
		r = rnsc_remote_mgmt_filter(data, size, dest, &out, &ol);
		FUZZ_CODE(r, RNSC_ERR_MALFORMED, RNSC_ERR_NOMEM);
		if (r == 1) {
			FUZZ_CHECK(out && ol <= size + 8);
			rnsc_mp_reader rd;
			rnsc_mp_reader_init(&rd, out, ol);
			size_t n;
			FUZZ_CHECK(rnsc_mp_read_array(&rd, &n) == 0);
			uint8_t *again = NULL;
			size_t al = 0;
			FUZZ_CHECK(rnsc_remote_mgmt_filter(out, ol, dest, &again, &al) == 1);
			FUZZ_CHECK(al == ol && memcmp(again, out, ol) == 0);
			free(again);
		}
		free(out);
	}
	return 0;
}
