/* SPDX-License-Identifier: MIT */
/*
 * Drives the node's storage code (node_store.c) on a real engine for the storage-hygiene
 * suite (tests/live/storage_hygiene_test.sh), which feeds the reference the same inputs:
 *   store_tool clean <storage> <now_ms> <paths>  load known_destinations, give the engine a
 *       path to every destination listed (hex, one a line), run the known-destinations
 *       clean at now_ms (which writes the file and deletes stale ratchet files)
 *   store_tool cache <storage> <paths>  paths given as "<dest hex> <packet hash hex>": clean
 *       <storage>/cache/announces; prints the number removed
 *   store_tool churn <storage>  write-heavy loop until killed: learn, use and retain
 *       destinations, write known_destinations and packet_hashlist.raw after every change
 *   store_tool load <storage>  load both as the daemon does at start; prints the counts and
 *       exits 1 when either is unreadable or corrupt
 *   store_tool tunnels-make <storage>  an engine with 2 tunnels (3 paths and 1 path, times
 *       around now) writes storage/tunnels and their announces to the cache
 *   store_tool tunnels-load <storage>  loads storage/tunnels; prints "tunnels N paths M"
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine_env.h"
#include "identity.h"
#include "node_store.h"
#include "packet.h"
#include "transport.h"

static int unhex(uint8_t *out, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (uint8_t)v;
	}
	return 0;
}

/* A path entry for dest: the engine only checks that raw is an announce for dest. */
static int add_path(rnsc_transport *t, const uint8_t dest[16], const uint8_t ph[32])
{
	uint8_t raw[19 + 160] = {0};
	raw[0] = RNSC_PKT_ANNOUNCE; /* HEADER_1, SINGLE, broadcast */
	memcpy(raw + 2, dest, 16);
	rnsc_transport_path p;
	memset(&p, 0, sizeof(p));
	p.timestamp = 1;
	p.expires = (uint64_t)1 << 50;
	p.iface = 1;
	memcpy(p.next_hop, dest, 16);
	memcpy(p.packet_hash, ph, 32);
	return rnsc_transport_path_import(t, dest, &p, NULL, 0, raw, sizeof(raw));
}

static int read_paths(rnsc_transport *t, const char *file, int with_packet)
{
	FILE *f = fopen(file, "r");
	if (!f)
		return -1;
	char line[256];
	int n = 0;
	while (fgets(line, sizeof(line), f)) {
		uint8_t d[16], ph[32];
		memset(ph, 0, sizeof(ph));
		if (strlen(line) < 32 || unhex(d, 16, line))
			continue;
		if (with_packet && (strlen(line) < 97 || unhex(ph, 32, line + 33)))
			continue;
		if (!with_packet)
			memcpy(ph, d, 16);
		if (add_path(t, d, ph) == 0)
			n++;
	}
	fclose(f);
	return n;
}

static int no_describe(void *ud, uint32_t id, char *buf, size_t cap)
{
	(void)ud, (void)id, (void)buf, (void)cap;
	return -1; /* loaded tunnels have no interface */
}

static uint32_t no_find(void *ud, const uint8_t h[32])
{
	(void)ud, (void)h;
	return 0;
}

static uint64_t wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int tunnels_make(rnsc_transport *t, const char *storage)
{
	uint64_t now = wall_ms();
	for (int tn = 0; tn < 2; tn++) {
		uint8_t id[32];
		test_rng(NULL, id, sizeof(id));
		if (rnsc_transport_tunnel_import(t, id, now + 4 * 3600000ull + (uint64_t)tn * 1000))
			return 1;
		for (int i = 0; i < (tn ? 1 : 3); i++) {
			uint8_t raw[19 + 160], blobs[3][10];
			memset(raw, 0, sizeof(raw));
			raw[0] = RNSC_PKT_ANNOUNCE;
			test_rng(NULL, raw + 2, 16);
			test_rng(NULL, raw + 19, 160);
			test_rng(NULL, (uint8_t *)blobs, sizeof(blobs));
			rnsc_transport_path p;
			memset(&p, 0, sizeof(p));
			p.timestamp = now - 60000 - (uint64_t)i * 1000 + 250;
			p.expires = now + 7 * 86400000ull;
			p.hops = (unsigned)(i + 1);
			test_rng(NULL, p.next_hop, 16);
			if (rnsc_packet_hash(C, p.packet_hash, raw, sizeof(raw)) ||
			    rnsc_transport_tunnel_path_import(t, id, raw + 2, &p, blobs,
							      (size_t)i + 1, raw, sizeof(raw)))
				return 1;
		}
	}
	node_store_ifaces ifs = {.describe = no_describe, .find = no_find};
	return node_store_save_tunnels(C, t, storage, &ifs) != 0;
}

static int churn(rnsc_transport *t, const char *storage)
{
	node_store_load_known(C, t, storage);
	node_store_load_hashlist(C, t, storage);
	uint8_t pub[64];
	for (unsigned long i = 0;; i++) {
		rnsc_transport_known k;
		memset(&k, 0, sizeof(k));
		test_rng(NULL, k.dest_hash, sizeof(k.dest_hash));
		test_rng(NULL, k.packet_hash, sizeof(k.packet_hash));
		test_rng(NULL, pub, sizeof(pub));
		memcpy(k.public_key, pub, sizeof(pub));
		k.timestamp = rnsc_transport_known_count(t) + 1700000000000ull;
		k.app_data = (const uint8_t *)"churn";
		k.app_data_len = 5;
		k.last_used = i % 3 == 0 ? 1700000000.25 + (double)i : 0;
		k.last_used_int = i % 3 != 0;
		if (rnsc_transport_known_import(t, &k) ||
		    rnsc_transport_hashlist_add(t, k.packet_hash))
			return 1;
		if (i % 7 == 0)
			rnsc_transport_known_retain(t, k.dest_hash);
		if (node_store_save_known(C, t, storage) || node_store_save_hashlist(C, t, storage))
			return 1;
		if (i % 50 == 0) {
			printf("churn %lu %zu\n", i, rnsc_transport_known_count(t));
			fflush(stdout);
		}
	}
}

int main(int argc, char **argv)
{
	if (argc < 3 || engine_env_open("store_tool", 0x29292929u ^ (uint64_t)getpid()))
		return 2;
	rnsc_identity tid;
	rnsc_transport *t;
	rnsc_transport_config cfg = {.transport_enabled = 1, .use_implicit_proof = 1};
	if (rnsc_identity_generate(C, &tid) || rnsc_transport_new(C, &t, &tid, &cfg) ||
	    rnsc_transport_iface_add(t, 1, RNSC_TRANSPORT_MODE_FULL, 0, 0))
		return 2;
	int rc = 0;
	const char *st = argv[2];
	if (!strcmp(argv[1], "clean") && argc == 5) {
		if (node_store_load_known(C, t, st) < 0 || read_paths(t, argv[4], 0) < 0)
			return 1;
		int n = node_store_clean_known(C, t, st, strtoull(argv[3], NULL, 10));
		printf("removed %d kept %zu\n", n, rnsc_transport_known_count(t));
		rc = n < 0;
	} else if (!strcmp(argv[1], "cache") && argc == 4) {
		if (read_paths(t, argv[3], 1) < 0)
			return 1;
		int n = node_store_clean_cache(C, t, st);
		printf("removed %d\n", n);
		rc = n < 0;
	} else if (!strcmp(argv[1], "tunnels-make")) {
		rc = tunnels_make(t, st);
	} else if (!strcmp(argv[1], "tunnels-load")) {
		int n = node_store_load_tunnels(C, t, st);
		size_t cur = 0, paths = 0;
		rnsc_transport_tunnel info;
		while (rnsc_transport_tunnel_next(t, &cur, NULL, &info))
			paths += info.n_paths;
		printf("tunnels %d paths %zu\n", n, paths);
		rc = n < 0;
	} else if (!strcmp(argv[1], "churn")) {
		rc = churn(t, st);
	} else if (!strcmp(argv[1], "load")) {
		int k = node_store_load_known(C, t, st);
		int h = node_store_load_hashlist(C, t, st);
		printf("known %d hashes %d\n", k, h);
		rc = k < 0 || h < 0;
	} else {
		rc = 2;
	}
	rnsc_transport_del(t);
	rnsc_identity_free(&tid);
	engine_env_close();
	return rc;
}
