/* SPDX-License-Identifier: MIT */
/*
 * full_mode_upstream_v2_vector: the upstream v2 hash vectors in full-memory mode. Builds the
 * cache, allocates the 2080 MiB dataset (huge pages when available), initialises it with all
 * cores, hashes the vectors of the first key and checks them; optionally measures the hash rate.
 * Not part of `make check` (2.3 GiB of memory and a dataset build of tens of seconds).
 *
 * usage: rx_full_test [--v1] [--interp] [--soft-aes] [--no-huge] [--threads N] [--bench N]
 *                     [--aggregate]
 *   --v1         check hashes-v1.json instead of hashes-v2.json
 *   --bench N    also time N hashes (each with a distinct input) and print H/s
 *   --aggregate  instead, check benchmark-aggregate.json: the XOR of 1000 full-mode hashes,
 *                for v1 and v2 on one dataset (key 00000000)
 * Vectors: $RX_VECTOR_DIR, else $RNSC_SRCDIR/../shared/vectors/randomx.
 * Exit status: number of failed checks. The last line reads "N passed, N failed".
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rx.h"
#include "rx_json.h"

#ifndef RNSC_SRCDIR
#define RNSC_SRCDIR "."
#endif

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void hex(char *out, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
}

int main(int argc, char **argv)
{
	unsigned flags = rx_default_flags() | RX_FLAG_V2 | RX_FLAG_FULL_MEM;
	unsigned threads = 0;
	long bench = 0;
	int aggregate = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--v1"))
			flags &= ~(unsigned)RX_FLAG_V2;
		else if (!strcmp(argv[i], "--interp"))
			flags &= ~(unsigned)RX_FLAG_JIT;
		else if (!strcmp(argv[i], "--soft-aes"))
			flags |= RX_FLAG_SOFT_AES;
		else if (!strcmp(argv[i], "--no-huge"))
			flags |= RX_FLAG_NO_HUGE_PAGES;
		else if (!strcmp(argv[i], "--prefetch-hint"))
			flags |= RX_FLAG_PREFETCH_NTA;
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			threads = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--aggregate"))
			aggregate = 1;
		else if (!strcmp(argv[i], "--bench") && i + 1 < argc)
			bench = strtol(argv[++i], NULL, 10);
		else {
			fprintf(stderr,
				"usage: %s [--v1] [--interp] [--soft-aes] [--no-huge] [--prefetch-hint] "
				"[--threads N] [--bench N] [--aggregate]\n",
				argv[0]);
			return 2;
		}
	}
	const int v2 = (flags & RX_FLAG_V2) != 0;
	char dir[PATH_MAX], path[PATH_MAX + 32];
	const char *d = getenv("RX_VECTOR_DIR"), *src = getenv("RNSC_SRCDIR");
	if (d && *d)
		snprintf(dir, sizeof(dir), "%s", d);
	else
		snprintf(dir, sizeof(dir), "%s/../shared/vectors/randomx",
			 src && *src ? src : RNSC_SRCDIR);
	snprintf(path, sizeof(path), "%s/%s", dir,
		 aggregate ? "benchmark-aggregate.json"
		 : v2      ? "hashes-v2.json"
			   : "hashes-v1.json");
	rx_json *j = rx_json_load(path);
	if (!j) {
		printf("0 passed, 1 failed\n");
		return 1;
	}
	const rx_json *vecs = rx_json_get(j, "vectors");
	const rx_json *first = aggregate ? j : rx_json_at(vecs, 0);
	uint8_t key[64];
	int kl = rx_json_hex(rx_json_get(first, "key_hex"), key, sizeof(key));
	if (kl < 0) {
		fprintf(stderr, "%s: no key in the first vector\n", path);
		printf("0 passed, 1 failed\n");
		return 1;
	}

	printf("RandomX v%d full-memory mode: %s, %s AES%s\n", v2 ? 2 : 1,
	       (flags & RX_FLAG_JIT) ? "JIT" : "interpreter",
	       (flags & RX_FLAG_SOFT_AES) ? "software" : "hardware",
	       !(flags & RX_FLAG_JIT)           ? ""
	       : (flags & RX_FLAG_PREFETCH_NTA) ? ", dataset fetch by prefetchnta"
						: ", dataset fetch by speculative load");
	rx_cache *cache = NULL;
	rx_dataset *ds = NULL;
	rx_vm *vm = NULL;
	int rc = rx_cache_new(&cache, flags & (RX_FLAG_JIT | RX_FLAG_NO_HUGE_PAGES));
	if (rc < 0) {
		fprintf(stderr, "cannot allocate the 256 MiB cache: %s (%s)\n", rnsc_err_name(rc),
			strerror(errno));
		return 1;
	}
	double t0 = now();
	if ((rc = rx_cache_init(cache, key, (size_t)kl)) < 0) {
		fprintf(stderr, "cache init failed: %s\n", rnsc_err_name(rc));
		return 1;
	}
	printf("cache: %.2f s, %s pages\n", now() - t0, rx_pages_name(rx_cache_pages(cache)));
	rc = rx_dataset_new(&ds, flags & RX_FLAG_NO_HUGE_PAGES);
	if (rc < 0) {
		fprintf(stderr, "cannot allocate the %llu MiB dataset: %s (%s)\n",
			(unsigned long long)(rx_dataset_size() >> 20), rnsc_err_name(rc),
			strerror(errno));
		printf("0 passed, 1 failed\n");
		return 1;
	}
	t0 = now();
	if ((rc = rx_dataset_init(ds, cache, threads)) < 0) {
		fprintf(stderr, "dataset init failed: %s\n", rnsc_err_name(rc));
		printf("0 passed, 1 failed\n");
		return 1;
	}
	char tdesc[24] = "all";
	if (threads)
		snprintf(tdesc, sizeof(tdesc), "%u", threads);
	printf("dataset: %.2f s with %s threads, %s pages\n", now() - t0, tdesc,
	       rx_pages_name(rx_dataset_pages(ds)));
	if ((rc = rx_vm_new(&vm, flags, cache, ds)) < 0) {
		fprintf(stderr, "vm: %s\n", rnsc_err_name(rc));
		printf("0 passed, 1 failed\n");
		return 1;
	}

	int passed = 0, failed = 0;
	if (aggregate) {
		/* One dataset serves both versions: only the VM differs. */
		uint8_t tmpl[128];
		int tl = rx_json_hex(rx_json_get(j, "block_template_hex"), tmpl, sizeof(tmpl));
		unsigned off = (unsigned)rx_json_u64(rx_json_get(j, "nonce_offset"));
		unsigned count = (unsigned)rx_json_u64(rx_json_get(j, "nonce_count"));
		for (size_t i = 0; tl > 0 && off + 4 <= (unsigned)tl && i < vecs->n; i++) {
			const rx_json *t = vecs->items[i];
			unsigned ver = (unsigned)rx_json_u64(rx_json_get(t, "version"));
			unsigned vflags =
				(flags & ~(unsigned)RX_FLAG_V2) | (ver == 2 ? RX_FLAG_V2 : 0);
			rx_vm *avm = NULL;
			uint8_t want[32], acc[32] = {0}, out[32];
			if (rx_vm_new(&avm, vflags, cache, ds) < 0 ||
			    rx_json_hex(rx_json_get(t, "expected_xor_hex"), want, 32) != 32) {
				failed++;
				rx_vm_del(avm);
				continue;
			}
			t0 = now();
			for (uint32_t n = 0; n < count; n++) {
				tmpl[off] = (uint8_t)n;
				tmpl[off + 1] = (uint8_t)(n >> 8);
				tmpl[off + 2] = (uint8_t)(n >> 16);
				tmpl[off + 3] = (uint8_t)(n >> 24);
				if (rx_hash(avm, tmpl, (size_t)tl, out) < 0)
					break;
				for (int b = 0; b < 32; b++)
					acc[b] ^= out[b];
			}
			double dt = now() - t0;
			char hx[65];
			hex(hx, acc, 32);
			int ok = memcmp(acc, want, 32) == 0;
			printf("%s aggregate v%u (%u hashes, %.1f H/s): %s\n", ok ? "PASS" : "FAIL",
			       ver, count, (double)count / dt, hx);
			ok ? passed++ : failed++;
			rx_vm_del(avm);
		}
	}
	for (size_t i = 0; !aggregate && i < vecs->n; i++) {
		const rx_json *t = vecs->items[i];
		uint8_t k2[64], in[256], want[32], got[32];
		int k2l = rx_json_hex(rx_json_get(t, "key_hex"), k2, sizeof(k2));
		if (k2l != kl || memcmp(k2, key, (size_t)kl) != 0)
			continue; /* another key would need another 2 GiB dataset build */
		int il = rx_json_hex(rx_json_get(t, "input_hex"), in, sizeof(in));
		if (il < 0 || rx_json_hex(rx_json_get(t, "expected_hex"), want, 32) != 32 ||
		    rx_hash(vm, in, (size_t)il, got) < 0) {
			failed++;
			continue;
		}
		char hx[65];
		hex(hx, got, 32);
		int ok = memcmp(got, want, 32) == 0;
		printf("%s %s: %s\n", ok ? "PASS" : "FAIL", rx_json_str(rx_json_get(t, "name")),
		       hx);
		ok ? passed++ : failed++;
	}

	if (bench > 0) {
		uint8_t in[76] = {0}, out[32];
		t0 = now();
		for (long n = 0; n < bench; n++) {
			memcpy(in + 39, &n, 4);
			if (rx_hash(vm, in, sizeof(in), out) < 0)
				break;
		}
		double dt = now() - t0;
		printf("bench: %ld hashes in %.2f s = %.1f H/s (one thread)\n", bench, dt,
		       (double)bench / dt);
	}
	rx_vm_del(vm);
	rx_dataset_del(ds);
	rx_cache_del(cache);
	rx_json_free(j);
	printf("%d passed, %d failed\n", passed, failed);
	return failed;
}
