/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the persisted path table and announce cache parsers
 * (src/runtime/path_file.c). The first byte picks the parser. Checked beyond "no crash,
 * no leak, no UB": a refused table produces no callback, an accepted one exactly as many
 * callbacks as its count, every record within the engine's limits, and re-encoding the
 * accepted records parses to the same count; a parsed cache entry lies inside the input.
 */
#include <stdlib.h>
#include <string.h>

#include "path_file.h"

typedef struct acc {
	int calls;
	rnsc_path_record *r;
	size_t cap;
} acc;

static int each(void *ud, const rnsc_path_record *r)
{
	acc *a = ud;
	if (r->n_blobs > RNSC_MAX_RANDOM_BLOBS || r->path.hops >= 128)
		abort();
	if ((size_t)a->calls < a->cap)
		a->r[a->calls] = *r;
	a->calls++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const uint8_t *p = data + 1;
	size_t len = size - 1;
	if (data[0] & 1) {
		const uint8_t *raw;
		size_t raw_len;
		if (rnsc_path_cache_parse(p, len, &raw, &raw_len) == 0 &&
		    (raw < p || raw + raw_len > p + len))
			abort();
		return 0;
	}
	acc a = {.cap = 8};
	a.r = calloc(a.cap, sizeof(*a.r));
	if (!a.r)
		return 0;
	int rc = rnsc_path_file_parse(p, len, each, &a, NULL);
	if ((rc < 0 && a.calls != 0) || (rc >= 0 && rc != a.calls))
		abort();
	if (rc > 0 && (size_t)rc <= a.cap) {
		rnsc_mp_writer w;
		rnsc_mp_writer_init(&w, NULL, 0);
		rnsc_path_file_begin(&w, (size_t)rc);
		for (int i = 0; i < rc; i++)
			rnsc_path_file_entry(&w, &a.r[i]);
		size_t need = w.len;
		uint8_t *buf = malloc(need);
		if (buf) {
			rnsc_mp_writer_init(&w, buf, need);
			rnsc_path_file_begin(&w, (size_t)rc);
			for (int i = 0; i < rc; i++)
				rnsc_path_file_entry(&w, &a.r[i]);
			if (rnsc_mp_writer_finish(&w) < 0 ||
			    rnsc_path_file_parse(buf, w.len, NULL, NULL, NULL) != rc)
				abort();
			free(buf);
		}
	}
	free(a.r);
	return 0;
}
