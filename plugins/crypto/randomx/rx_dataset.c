/* SPDX-License-Identifier: MIT */
/*
 * Cache (Argon2d + SuperscalarHash programs) and dataset (spec chapter 7), page-backed memory
 * with huge pages when the system offers them, and multi-threaded dataset initialisation.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <sodium.h>

#include "rx_internal.h"

#define HUGE_2M ((size_t)2 << 20)

/* Initial register values of a dataset item (spec 7.3 step 1). */
#define SS_MUL0 6364136223846793005ull
static const uint64_t ss_xor[7] = {
	9298411001130361340ull, 12065312585734608966ull, 9306329213124626780ull,
	5281919268842080866ull, 10536153434571861004ull, 3398623926847679864ull,
	9549104520008361294ull,
};

const char *rx_pages_name(int pages)
{
	switch (pages) {
	case RX_PAGES_THP:
		return "thp";
	case RX_PAGES_HUGETLB:
		return "hugetlb";
	default:
		return "4k";
	}
}

void *rx_mem_alloc(size_t len, int allow_huge, void **map_base, size_t *map_len, int *pages)
{
	void *p;
	*pages = RX_PAGES_NORMAL;
	if (allow_huge && len >= HUGE_2M) {
#ifdef MAP_HUGETLB
		/* Reserved huge pages are the fastest, but most systems have none: try quietly. Without
		 * MAP_NORESERVE the kernel refuses the mapping unless the pages are reserved, instead of
		 * delivering SIGBUS on first touch. */
		size_t hl = (len + HUGE_2M - 1) & ~(HUGE_2M - 1);
		p = mmap(NULL, hl, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
		if (p != MAP_FAILED) {
			*map_base = p;
			*map_len = hl;
			*pages = RX_PAGES_HUGETLB;
			return p;
		}
#endif
	}
	/* Over-map by 2 MiB so the block can start on a huge-page boundary: THP only backs whole,
	 * aligned 2 MiB ranges. */
	size_t ml = len + (allow_huge && len >= HUGE_2M ? HUGE_2M : 0);
	p = mmap(NULL, ml, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		*map_base = NULL;
		*map_len = 0;
		return NULL; /* errno set by mmap */
	}
	*map_base = p;
	*map_len = ml;
	uint8_t *q = (uint8_t *)p;
	if (ml != len) {
		q = (uint8_t *)(((uintptr_t)p + HUGE_2M - 1) & ~(uintptr_t)(HUGE_2M - 1));
#ifdef MADV_HUGEPAGE
		/* Must happen before the first touch, or the range is already backed by 4 KiB pages. */
		int saved = errno;
		if (madvise(q, len, MADV_HUGEPAGE) == 0)
			*pages = RX_PAGES_THP;
		errno = saved;
#endif
	}
	return q;
}

void rx_mem_free(void *map_base, size_t map_len)
{
	if (map_base)
		munmap(map_base, map_len);
}

/* ---- cache ---- */

int rx_cache_new(rx_cache **out, unsigned flags)
{
	if (!out)
		return RNSC_ERR_INVAL;
	*out = NULL;
	if ((flags & RX_FLAG_JIT) && !rx_jit_available())
		return RNSC_ERR_NOPRIM;
	if (sodium_init() < 0)
		return RNSC_ERR_CRYPTO;
	rx_cache *c = (rx_cache *)calloc(1, sizeof(*c));
	if (!c)
		return RNSC_ERR_NOMEM;
	c->flags = flags;
	c->mem = (uint8_t *)rx_mem_alloc(RX_CACHE_SIZE, !(flags & RX_FLAG_NO_HUGE_PAGES),
					 &c->map_base, &c->map_len, &c->pages);
	if (!c->mem) {
		int e = errno;
		free(c);
		errno = e;
		return RNSC_ERR_NOMEM;
	}
	*out = c;
	return 0;
}

int rx_cache_pages(const rx_cache *c)
{
	return c ? c->pages : RX_PAGES_NORMAL;
}

void rx_cache_del(rx_cache *c)
{
	if (!c)
		return;
	rx_ss_jit_free(c);
	rx_mem_free(c->map_base, c->map_len);
	free(c);
}

int rx_cache_init(rx_cache *c, const uint8_t *key, size_t key_len)
{
	if (!c || (key_len && !key))
		return RNSC_ERR_INVAL;
	c->initialized = 0;
	rx_ss_jit_free(c);
	rx_argon2d_fill(c->mem, key, key_len);
	rx_blake2_gen gen;
	rx_blake2_gen_init(&gen, key, key_len, 0);
	for (int i = 0; i < RX_CACHE_ACCESSES; i++)
		rx_ss_generate(&c->prog[i], &gen);
	/* Native item code is only an accelerator: where executable pages are refused (e.g. an
	 * execmem policy) the portable executor computes the same items. */
	if (c->flags & RX_FLAG_JIT)
		(void)rx_ss_jit_compile(c);
	c->initialized = 1;
	return 0;
}

int rx_cache_init_from(rx_cache *dst, const rx_cache *src)
{
	if (!dst || !src || !src->initialized || dst == src)
		return RNSC_ERR_INVAL;
	dst->initialized = 0;
	rx_ss_jit_free(dst);
	memcpy(dst->mem, src->mem, RX_CACHE_SIZE);
	memcpy(dst->prog, src->prog, sizeof(dst->prog));
	if (dst->flags & RX_FLAG_JIT)
		(void)rx_ss_jit_compile(dst);
	dst->initialized = 1;
	return 0;
}

/* ---- dataset items ---- */

static inline void item_init_regs(uint64_t r[8], uint64_t item)
{
	r[0] = (item + 1) * SS_MUL0;
	for (int i = 0; i < 7; i++)
		r[i + 1] = r[0] ^ ss_xor[i];
}

void rx_dataset_item_portable(const rx_cache *c, uint64_t item, uint64_t out[8])
{
	uint64_t r[8];
	uint64_t sel = item;
	item_init_regs(r, item);
	for (int i = 0; i < RX_CACHE_ACCESSES; i++) {
		const uint8_t *mix = c->mem + (sel & (RX_CACHE_LINES - 1)) * RX_CACHE_LINE;
		rx_ss_execute(r, &c->prog[i]);
		for (int q = 0; q < 8; q++)
			r[q] ^= rx_load64(mix + 8 * q);
		sel = r[c->prog[i].addr_reg];
	}
	memcpy(out, r, sizeof(r));
}

void rx_dataset_item(const rx_cache *c, uint64_t item, uint64_t out[8])
{
	if (c->ss_code) {
		uint64_t r[8];
		item_init_regs(r, item);
		c->ss_fn(r, c->mem, item);
		memcpy(out, r, sizeof(r));
		return;
	}
	rx_dataset_item_portable(c, item, out);
}

/* ---- dataset ---- */

uint64_t rx_dataset_size(void)
{
	return RX_DATASET_SIZE;
}

uint64_t rx_dataset_items(void)
{
	return RX_DATASET_ITEMS;
}

int rx_dataset_new(rx_dataset **out, unsigned flags)
{
	if (!out)
		return RNSC_ERR_INVAL;
	*out = NULL;
	rx_dataset *d = (rx_dataset *)calloc(1, sizeof(*d));
	if (!d)
		return RNSC_ERR_NOMEM;
	d->mem = (uint8_t *)rx_mem_alloc((size_t)RX_DATASET_SIZE, !(flags & RX_FLAG_NO_HUGE_PAGES),
					 &d->map_base, &d->map_len, &d->pages);
	if (!d->mem) {
		int e = errno;
		free(d);
		errno = e;
		return RNSC_ERR_NOMEM;
	}
	*out = d;
	return 0;
}

int rx_dataset_pages(const rx_dataset *d)
{
	return d ? d->pages : RX_PAGES_NORMAL;
}

void rx_dataset_del(rx_dataset *d)
{
	if (!d)
		return;
	rx_mem_free(d->map_base, d->map_len);
	free(d);
}

static void fill_range(rx_dataset *d, const rx_cache *c, uint64_t start, uint64_t count)
{
	uint64_t r[8];
	for (uint64_t i = start; i < start + count; i++) {
		rx_dataset_item(c, i, r);
		uint8_t *p = d->mem + i * RX_CACHE_LINE;
		for (int q = 0; q < 8; q++)
			rx_store64(p + 8 * q, r[q]);
	}
}

int rx_dataset_init_range(rx_dataset *d, const rx_cache *c, uint64_t start, uint64_t count)
{
	if (!d || !c || start > RX_DATASET_ITEMS || count > RX_DATASET_ITEMS - start)
		return RNSC_ERR_INVAL;
	if (!c->initialized)
		return RNSC_ERR_STATE;
	fill_range(d, c, start, count);
	return 0;
}

typedef struct ds_job {
	rx_dataset *d;
	const rx_cache *c;
	uint64_t start, count;
} ds_job;

static void *ds_worker(void *arg)
{
	ds_job *j = (ds_job *)arg;
	fill_range(j->d, j->c, j->start, j->count);
	return NULL;
}

int rx_dataset_init(rx_dataset *d, const rx_cache *c, unsigned threads)
{
	if (!d || !c)
		return RNSC_ERR_INVAL;
	if (!c->initialized)
		return RNSC_ERR_STATE;
	if (threads == 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		threads = n > 0 ? (unsigned)n : 1;
	}
	if (threads > 256)
		threads = 256;
	if (threads == 1) {
		fill_range(d, c, 0, RX_DATASET_ITEMS);
		return 0;
	}

	ds_job *jobs = (ds_job *)calloc(threads, sizeof(*jobs));
	pthread_t *tids = (pthread_t *)calloc(threads, sizeof(*tids));
	if (!jobs || !tids) {
		free(jobs);
		free(tids);
		return RNSC_ERR_NOMEM;
	}
	uint64_t per = RX_DATASET_ITEMS / threads, pos = 0;
	unsigned started = 0;
	int rc = 0;
	for (unsigned t = 0; t < threads; t++) {
		jobs[t] = (ds_job){d, c, pos, t + 1 == threads ? RX_DATASET_ITEMS - pos : per};
		pos += jobs[t].count;
	}
	/* The calling thread does the last share itself rather than idling in join. */
	for (unsigned t = 0; t + 1 < threads; t++) {
		if (pthread_create(&tids[t], NULL, ds_worker, &jobs[t]) != 0) {
			rc = RNSC_ERR_SYS;
			break;
		}
		started++;
	}
	if (rc == 0)
		ds_worker(&jobs[threads - 1]);
	for (unsigned t = 0; t < started; t++)
		pthread_join(tids[t], NULL);
	free(jobs);
	free(tids);
	return rc;
}
