/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for interface discovery announces (src/lib/discovery.c), whose
 * app_data any announcing node on the network chooses.
 *
 *   1. the whole app_data through rnsc_discovery_parse() (flags, stamp check, map), with
 *      required value 1 so that about half of the stamps pass and the map is reached;
 *   2. the input as the packed map alone through rnsc_discovery_decode();
 *   3. every accepted announce written as the stored record, which must re-read as one
 *      msgpack map with nothing after it; names are NUL-terminated inside their buffer.
 */
#include "fuzz_wire.h"

#include "discovery.h"
#include "msgpack.h"

static void check_ok(const rnsc_disc_info *in)
{
	FUZZ_CHECK(memchr(in->name, 0, sizeof in->name) != NULL);
	FUZZ_CHECK(memchr(in->type, 0, sizeof in->type) != NULL);
	static uint8_t rec[16384];
	static const uint8_t nid[16];
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, rec, sizeof rec);
	int n = rnsc_discovery_record(&w, in, nid, 3, 1.5, 1.0, 2.0, 7);
	if (n == RNSC_ERR_BUFSIZE || n == RNSC_ERR_TOOBIG)
		return;
	FUZZ_CHECK(n > 0);
	rnsc_mp_reader r;
	rnsc_mp_reader_init(&r, rec, (size_t)n);
	rnsc_mp_token t;
	FUZZ_CHECK(rnsc_mp_peek(&r, &t) == 0 && t.type == RNSC_MP_MAP);
	FUZZ_CHECK(rnsc_mp_skip(&r) == 0 && rnsc_mp_reader_remaining(&r) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rnsc_ctx *ctx = fuzz_ctx();
	rnsc_disc_info in;
	int r = rnsc_discovery_parse(ctx, &in, data, size, 1);
	FUZZ_CHECK(r >= RNSC_DISC_OK && r <= RNSC_DISC_NOSTORE);
	if (r == RNSC_DISC_OK)
		check_ok(&in);
	memset(&in, 0, sizeof in);
	r = rnsc_discovery_decode(ctx, &in, data, size);
	FUZZ_CHECK(r >= RNSC_DISC_OK && r <= RNSC_DISC_NOSTORE);
	if (r == RNSC_DISC_OK)
		check_ok(&in);
	return 0;
}
