/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the blackhole list codec (rnsc_blackhole_list_parse in
 * src/lib/transport_blackhole.c): the msgpack map read from storage/blackhole/ files and from
 * a remote transport instance's /list answer.
 *
 * Checked beyond "no crash, no leak, no UB": a refused list (< 0) adds nothing; an accepted
 * one calls back exactly as many times as it returns, with reasons inside the input; what was
 * added is written back with rnsc_blackhole_list_write, and that parses again to as many
 * entries as the table holds, each identity found in the table.
 */
#include "fuzz_wire.h"

#include "msgpack.h"
#include "transport.h"

typedef struct acc {
	rnsc_transport *t;
	const uint8_t *p;
	size_t len;
	int calls;
} acc;

static int each(void *ud, const uint8_t id[16], const rnsc_blackhole_entry *e)
{
	acc *a = ud;
	if (e->reason && (e->reason_len > a->len || (const uint8_t *)e->reason < a->p ||
			  (const uint8_t *)e->reason + e->reason_len > a->p + a->len))
		abort();
	FUZZ_CHECK(e->until >= 0);
	a->calls++;
	return a->t && rnsc_transport_blackhole_add(a->t, id, e) < 0 ? RNSC_ERR_NOMEM : 0;
}

static int found(void *ud, const uint8_t id[16], const rnsc_blackhole_entry *e)
{
	(void)e;
	acc *a = ud;
	FUZZ_CHECK(rnsc_transport_blackhole_get(a->t, id, NULL) == 0);
	a->calls++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rnsc_ctx *ctx = fuzz_ctx();
	uint8_t prv[64];
	for (int i = 0; i < 64; i++)
		prv[i] = (uint8_t)(i * 5 + 3);
	rnsc_identity tid;
	FUZZ_CHECK(rnsc_identity_from_private(ctx, &tid, prv, 64) == 0);
	rnsc_transport *t = NULL;
	FUZZ_CHECK(rnsc_transport_new(ctx, &t, &tid, NULL) == 0);

	acc dry = {.p = data, .len = size};
	int rc = rnsc_blackhole_list_parse(data, size, each, &dry);
	FUZZ_CHECK(rc < 0 || rc == dry.calls);
	acc a = {.t = t, .p = data, .len = size};
	int rc2 = rnsc_blackhole_list_parse(data, size, each, &a);
	FUZZ_CHECK(rc2 == rc);
	if (rc < 0)
		FUZZ_CHECK(rc2 < 0);
	else
		FUZZ_CHECK(rnsc_transport_blackhole_count(t) <= (size_t)rc);

	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, NULL, 0);
	int n = rnsc_blackhole_list_write(&w, t, NULL);
	FUZZ_CHECK(n > 0);
	uint8_t *buf = malloc((size_t)n);
	FUZZ_CHECK(buf != NULL);
	rnsc_mp_writer_init(&w, buf, (size_t)n);
	FUZZ_CHECK(rnsc_blackhole_list_write(&w, t, NULL) == n);
	acc b = {.t = t, .p = buf, .len = (size_t)n};
	FUZZ_CHECK(rnsc_blackhole_list_parse(buf, (size_t)n, found, &b) ==
		   (int)rnsc_transport_blackhole_count(t));
	free(buf);
	(void)rnsc_transport_tick(t, 1800000000000ull); /* the expiry job on whatever was taken */
	rnsc_transport_del(t);
	rnsc_identity_free(&tid);
	return 0;
}
