/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the persisted tunnel table parser (src/runtime/tunnel_file.c).
 * Checked beyond "no crash, no leak, no UB": a refused file produces no callback, an
 * accepted one exactly one tunnel callback per counted tunnel, every path within the
 * engine's limits and after its tunnel's callback.
 */
#include <stdlib.h>
#include <string.h>

#include "tunnel_file.h"

typedef struct acc {
	int tunnels;
	int paths;
	uint8_t last[RNSC_HASHLEN];
} acc;

static int each(void *ud, const rnsc_tunnel_record *tn, const rnsc_path_record *r)
{
	acc *a = ud;
	if (!r) {
		a->tunnels++;
		memcpy(a->last, tn->id, sizeof(a->last));
		return 0;
	}
	if (r->n_blobs > RNSC_MAX_RANDOM_BLOBS || r->path.hops >= 128 || !a->tunnels ||
	    memcmp(a->last, tn->id, sizeof(a->last)) != 0)
		abort();
	a->paths++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	acc a = {0};
	int rc = rnsc_tunnel_file_parse(data, size, each, &a, NULL);
	if ((rc < 0 && (a.tunnels || a.paths)) || (rc >= 0 && rc != a.tunnels))
		abort();
	return 0;
}
