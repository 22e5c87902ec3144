/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the known-destinations file parser (src/runtime/known_file.c).
 * Checked beyond "no crash, no leak, no UB": a refused file produces no callback; an
 * accepted one produces exactly as many callbacks as the returned count, each with
 * app_data inside the input; re-encoding what was accepted parses to the same count.
 */
#include <stdlib.h>
#include <string.h>

#include "known_file.h"

typedef struct acc {
	const uint8_t *p;
	size_t len;
	int calls;
	rnsc_transport_known *k;
	size_t cap;
} acc;

static int each(void *ud, const rnsc_transport_known *k)
{
	acc *a = ud;
	if (k->app_data && (k->app_data < a->p || k->app_data + k->app_data_len > a->p + a->len))
		abort();
	if ((size_t)a->calls < a->cap)
		a->k[a->calls] = *k;
	a->calls++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	acc a = {.p = data, .len = size};
	a.cap = 64;
	a.k = calloc(a.cap, sizeof(*a.k));
	if (!a.k)
		return 0;
	int rc = rnsc_known_file_parse(data, size, each, &a, NULL);
	if (rc < 0 && a.calls != 0)
		abort();
	if (rc >= 0 && rc != a.calls)
		abort();
	if (rc > 0 && (size_t)rc <= a.cap) {
		rnsc_mp_writer w;
		rnsc_mp_writer_init(&w, NULL, 0);
		rnsc_known_file_begin(&w, (size_t)rc);
		for (int i = 0; i < rc; i++)
			rnsc_known_file_entry(&w, &a.k[i]);
		size_t need = w.len;
		uint8_t *buf = malloc(need);
		if (buf) {
			rnsc_mp_writer_init(&w, buf, need);
			rnsc_known_file_begin(&w, (size_t)rc);
			for (int i = 0; i < rc; i++)
				rnsc_known_file_entry(&w, &a.k[i]);
			if (rnsc_mp_writer_finish(&w) < 0 ||
			    rnsc_known_file_parse(buf, w.len, NULL, NULL, NULL) != rc)
				abort();
			free(buf);
		}
	}
	free(a.k);
	return 0;
}
