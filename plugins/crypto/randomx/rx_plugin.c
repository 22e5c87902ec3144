/* SPDX-License-Identifier: MIT */
/*
 * The "randomx" crypto plugin: RandomX machines (RNSC_PRIM_RANDOMX) from two implementations
 * behind one ops table, chosen per machine by RNSC_RANDOMX_IMPL_*:
 *   own         rnsc's RandomX (this folder): v1 and v2, interpreter or x86-64 JIT, hardware or
 *               software AES, datasets on transparent or reserved huge pages.
 *   librandomx  the system's librandomx (Debian's librandomx-dev), when configure found it: v1
 *               only. Built into the plugin so both can be compared in one process.
 *
 * A machine owns its cache, dataset (full mode) and VM; the plugin instance itself holds only
 * the host table. Machines are independent of each other and of the instance, so several may
 * exist at once (e.g. calibration comparing implementations); each is used by one thread at a
 * time.
 *
 * The self-test runs whenever any rnsc command loads plugins, so it must cost microseconds: it
 * checks the building blocks with known answers (Blake2b constants, the reciprocal, both AES
 * generator implementations, one SuperscalarHash program) and never builds a cache. The full
 * hash vectors are checked by make check (tests/unit/randomx/).
 */
#include <errno.h>
#include <fenv.h>
#include <stdarg.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "crypto_abi.h"
#include "rx.h"
#include "rx_internal.h"

#ifdef HAVE_LIBRANDOMX
#include <dlfcn.h>
#include <randomx.h>

/* Debian's librandomx is opened on first use rather than linked: it pulls in libstdc++, about
 * 1.7 MiB resident in every rnsc process (the plugin host loads every plugin), while only a
 * timelock run that asks for it ever hashes with it. */
/* clang-format off */
#define LX_FUNCS(X)                                                                                \
	X(get_flags) X(alloc_cache) X(init_cache) X(release_cache) X(alloc_dataset)                 \
	X(dataset_item_count) X(init_dataset) X(get_dataset_memory) X(release_dataset)             \
	X(create_vm) X(destroy_vm) X(calculate_hash)
/* clang-format on */
static struct {
#define LX_FIELD(n) __typeof__(&randomx_##n) n;
	LX_FUNCS(LX_FIELD)
#undef LX_FIELD
	int ok;
	char err[200];
} lx;
static pthread_once_t lx_once = PTHREAD_ONCE_INIT;

static void lx_load(void)
{
	void *h = dlopen("librandomx.so.0", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(lx.err, sizeof(lx.err), "cannot open librandomx.so.0: %s", dlerror());
		return;
	}
#define LX_SYM(n)                                                                                  \
	if (!(*(void **)&lx.n = dlsym(h, "randomx_" #n))) {                                        \
		snprintf(lx.err, sizeof(lx.err), "librandomx.so.0 lacks randomx_" #n);             \
		return;                                                                            \
	}
	LX_FUNCS(LX_SYM)
#undef LX_SYM
	lx.ok = 1; /* kept open for the life of the process */
}

#define randomx_get_flags lx.get_flags
#define randomx_alloc_cache lx.alloc_cache
#define randomx_init_cache lx.init_cache
#define randomx_release_cache lx.release_cache
#define randomx_alloc_dataset lx.alloc_dataset
#define randomx_dataset_item_count lx.dataset_item_count
#define randomx_init_dataset lx.init_dataset
#define randomx_get_dataset_memory lx.get_dataset_memory
#define randomx_release_dataset lx.release_dataset
#define randomx_create_vm lx.create_vm
#define randomx_destroy_vm lx.destroy_vm
#define randomx_calculate_hash lx.calculate_hash
#endif

#ifndef LIBRANDOMX_VERSION
#define LIBRANDOMX_VERSION "unknown"
#endif

#define HUGE_2M ((size_t)2 << 20)

typedef struct rxp_inst {
	const rnsc_host_api *host;
} rxp_inst;

/* One machine. Exactly one of the own/lib groups is in use, per impl. */
typedef struct rxp_vm {
	uint32_t flags; /* RNSC_RANDOMX_* as asked */
	int impl;       /* 0 own, 1 librandomx */
	int jit, soft_aes;
	int secure_jit;            /* JIT code pages kept W^X (RNSC_RANDOMX_SECURE_JIT) */
	int cache_pages, ds_pages; /* enum rx_pages */
	unsigned threads;
	double cache_s, dataset_s;
	rx_cache *cache;
	rx_dataset *ds;
	rx_vm *vm;
#ifdef HAVE_LIBRANDOMX
	randomx_cache *lcache;
	randomx_dataset *lds;
	randomx_vm *lvm;
#endif
} rxp_vm;

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Failures are returned as codes; these lines add the system's reason for library users, at
 * notice level so a CLI that prints its own message does not print two. */
static void logf_(rxp_inst *in, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void logf_(rxp_inst *in, int level, const char *fmt, ...)
{
	if (!in || !in->host || !in->host->log)
		return;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	in->host->log(in->host->host_ctx, level, "randomx", msg);
}

static unsigned online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

/*
 * Kilobytes of [p, p + len) that the kernel really backs with transparent huge pages, from
 * /proc/self/smaps. madvise(MADV_HUGEPAGE) being accepted only says the kernel may use them;
 * the report must say what it did. -1 when smaps cannot be read.
 */
static long thp_kb(const void *p, size_t len)
{
	if (!p || !len)
		return 0;
	FILE *f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	uintptr_t lo = (uintptr_t)p, hi = lo + len;
	char line[512];
	int in_range = 0;
	long total = 0;
	while (fgets(line, sizeof(line), f)) {
		uintptr_t a, b;
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &a, &b) == 2 && strchr(line, '-') &&
		    line[0] != ' ') {
			in_range = a < hi && b > lo;
			continue;
		}
		long kb;
		if (in_range && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			total += kb;
	}
	fclose(f);
	return total;
}

/* ---- own implementation ------------------------------------------------------------------ */

static int own_new(rxp_inst *in, rxp_vm *m, const uint8_t *key, size_t key_len)
{
	unsigned cpu = rx_cpu_features();
	unsigned f = 0;
	if (!(m->flags & RNSC_RANDOMX_INTERP) && (cpu & RX_CPU_JIT))
		f |= RX_FLAG_JIT;
	if ((m->flags & RNSC_RANDOMX_SOFT_AES) || !(cpu & RX_CPU_AES))
		f |= RX_FLAG_SOFT_AES;
	if (m->flags & RNSC_RANDOMX_NO_HUGE)
		f |= RX_FLAG_NO_HUGE_PAGES;
	if (m->flags & RNSC_RANDOMX_V2)
		f |= RX_FLAG_V2;
	if (m->flags & RNSC_RANDOMX_PREFETCH_NTA)
		f |= RX_FLAG_PREFETCH_NTA;
	int full = (m->flags & RNSC_RANDOMX_FULL) != 0;
	m->jit = (f & RX_FLAG_JIT) != 0;
	m->soft_aes = (f & RX_FLAG_SOFT_AES) != 0;
	if (m->jit && (m->flags & RNSC_RANDOMX_SECURE_JIT)) {
		f |= RX_FLAG_SECURE_JIT;
		m->secure_jit = 1;
	}

	double t0 = now_s();
	int rc = rx_cache_new(&m->cache, f & (RX_FLAG_JIT | RX_FLAG_NO_HUGE_PAGES));
	if (rc) {
		int e = errno;
		logf_(in, RNSC_LOG_NOTICE, "cannot allocate the 256 MiB RandomX cache: %s",
		      strerror(e));
		errno = e;
		return rc;
	}
	if ((rc = rx_cache_init(m->cache, key, key_len)) != 0)
		return rc;
	m->cache_s = now_s() - t0;
	m->cache_pages = rx_cache_pages(m->cache);
	if (full) {
		t0 = now_s();
		rc = rx_dataset_new(&m->ds, f & RX_FLAG_NO_HUGE_PAGES);
		if (rc) {
			int e = errno;
			logf_(in, RNSC_LOG_NOTICE,
			      "cannot allocate the %" PRIu64
			      " MiB RandomX dataset: %s (full-memory mode "
			      "needs about 2.3 GiB free; light mode needs 256 MiB)",
			      (rx_dataset_size() + (1u << 20) - 1) >> 20, strerror(e));
			errno = e;
			return rc;
		}
		m->ds_pages = rx_dataset_pages(m->ds);
		if ((rc = rx_dataset_init(m->ds, m->cache, m->threads)) != 0)
			return rc;
		m->dataset_s = now_s() - t0;
		/* A full-memory VM reads only the dataset: give the 256 MiB back now. */
		rx_cache_del(m->cache);
		m->cache = NULL;
	}
	rc = rx_vm_new(&m->vm, f | (full ? RX_FLAG_FULL_MEM : 0), m->cache, m->ds);
	if (rc == RNSC_ERR_NOMEM)
		logf_(in, RNSC_LOG_NOTICE, "cannot allocate a RandomX VM: %s", strerror(errno));
	return rc;
}

/* ---- librandomx ------------------------------------------------------------------------- */

#ifdef HAVE_LIBRANDOMX
/*
 * Whether bytes of reserved 2 MiB huge pages are free right now. librandomx's "large pages"
 * are MAP_HUGETLB only, and a failed attempt is not free: 1.1.10 leaks its JIT compiler object
 * when the cache allocation fails. So it is asked only when the pages are there.
 */
static int hugetlb_free_for(size_t bytes)
{
	FILE *f = fopen("/proc/meminfo", "r");
	if (!f)
		return 0;
	char line[128];
	long free_pages = 0, page_kb = 0;
	while (fgets(line, sizeof(line), f)) {
		(void)(sscanf(line, "HugePages_Free: %ld", &free_pages) == 1 ||
		       sscanf(line, "Hugepagesize: %ld kB", &page_kb) == 1);
	}
	fclose(f);
	if (page_kb != 2048 || free_pages <= 0)
		return 0;
	return (uint64_t)free_pages * HUGE_2M >= (uint64_t)bytes;
}

typedef struct lib_job {
	randomx_dataset *ds;
	randomx_cache *cache;
	unsigned long start, count;
} lib_job;

static void *lib_init_worker(void *p)
{
	lib_job *j = p;
	randomx_init_dataset(j->ds, j->cache, j->start, j->count);
	return NULL;
}

/* librandomx leaves threading to its caller: split the items evenly over our threads. */
static int lib_init_dataset(randomx_dataset *ds, randomx_cache *cache, unsigned threads)
{
	unsigned long items = randomx_dataset_item_count();
	pthread_t tid[256];
	lib_job jobs[256];
	int started[256];
	if (threads > 256)
		threads = 256;
	if (threads <= 1) {
		randomx_init_dataset(ds, cache, 0, items);
		return 0;
	}
	int rc = 0;
	for (unsigned i = 0; i < threads; i++) {
		unsigned long a = items * i / threads, b = items * (i + 1) / threads;
		jobs[i] = (lib_job){ds, cache, a, b - a};
		started[i] = pthread_create(&tid[i], NULL, lib_init_worker, &jobs[i]) == 0;
		if (!started[i]) {
			/* Still compute this share (here), so the dataset is whole; report it. */
			randomx_init_dataset(ds, cache, a, b - a);
			rc = RNSC_ERR_SYS;
		}
	}
	for (unsigned i = 0; i < threads; i++)
		if (started[i])
			pthread_join(tid[i], NULL);
	return rc;
}

static int lib_new(rxp_inst *in, rxp_vm *m, const uint8_t *key, size_t key_len)
{
	if (m->flags & RNSC_RANDOMX_V2) {
		logf_(in, RNSC_LOG_NOTICE, "librandomx %s implements RandomX v1 only",
		      LIBRANDOMX_VERSION);
		return RNSC_ERR_NOPRIM;
	}
	pthread_once(&lx_once, lx_load);
	if (!lx.ok) {
		logf_(in, RNSC_LOG_ERROR, "%s", lx.err);
		return RNSC_ERR_NOPRIM;
	}
	randomx_flags base = randomx_get_flags();
	int f = (int)base;
	if (m->flags & RNSC_RANDOMX_INTERP)
		f &= ~RANDOMX_FLAG_JIT;
	if (m->flags & RNSC_RANDOMX_SOFT_AES)
		f &= ~RANDOMX_FLAG_HARD_AES;
	int full = (m->flags & RNSC_RANDOMX_FULL) != 0;
	int huge = !(m->flags & RNSC_RANDOMX_NO_HUGE);
	m->jit = (f & RANDOMX_FLAG_JIT) != 0;
	m->soft_aes = !(f & RANDOMX_FLAG_HARD_AES);
	if (m->jit && (m->flags & RNSC_RANDOMX_SECURE_JIT)) {
		f |= RANDOMX_FLAG_SECURE; /* like for like with own's W^X JIT */
		m->secure_jit = 1;
	}

	double t0 = now_s();
	/* librandomx's "large pages" are reserved (hugetlb) pages only: try them, then fall back. */
	m->cache_pages = RX_PAGES_NORMAL;
	if (huge && hugetlb_free_for(RX_CACHE_SIZE) &&
	    (m->lcache = randomx_alloc_cache((randomx_flags)(f | RANDOMX_FLAG_LARGE_PAGES))))
		m->cache_pages = RX_PAGES_HUGETLB;
	if (!m->lcache)
		m->lcache = randomx_alloc_cache((randomx_flags)f);
	if (!m->lcache) {
		logf_(in, RNSC_LOG_NOTICE, "librandomx cannot allocate its 256 MiB cache");
		errno = ENOMEM;
		return RNSC_ERR_NOMEM;
	}
	randomx_init_cache(m->lcache, key, key_len);
	m->cache_s = now_s() - t0;
	if (full) {
		t0 = now_s();
		m->ds_pages = RX_PAGES_NORMAL;
		if (huge && hugetlb_free_for(rx_dataset_size()) &&
		    (m->lds = randomx_alloc_dataset((randomx_flags)(f | RANDOMX_FLAG_LARGE_PAGES))))
			m->ds_pages = RX_PAGES_HUGETLB;
		if (!m->lds)
			m->lds = randomx_alloc_dataset((randomx_flags)f);
		if (!m->lds) {
			logf_(in, RNSC_LOG_NOTICE,
			      "librandomx cannot allocate its 2080 MiB dataset (full-memory mode needs "
			      "about 2.3 GiB free; light mode needs 256 MiB)");
			errno = ENOMEM;
			return RNSC_ERR_NOMEM;
		}
#ifdef MADV_HUGEPAGE
		if (huge && m->ds_pages == RX_PAGES_NORMAL) {
			/* The same transparent huge pages rnsc's own datasets get, so a comparison on
			 * "the same pages" is fair: the memory is untouched until the init below. */
			uintptr_t p = (uintptr_t)randomx_get_dataset_memory(m->lds);
			uintptr_t a = (p + HUGE_2M - 1) & ~(uintptr_t)(HUGE_2M - 1);
			uintptr_t e = (p + rx_dataset_size()) & ~(uintptr_t)(HUGE_2M - 1);
			if (e > a && madvise((void *)a, e - a, MADV_HUGEPAGE) == 0)
				m->ds_pages = RX_PAGES_THP;
		}
#endif
		if (lib_init_dataset(m->lds, m->lcache, m->threads) != 0)
			return RNSC_ERR_SYS;
		m->dataset_s = now_s() - t0;
		f |= RANDOMX_FLAG_FULL_MEM;
	}
	if (huge && hugetlb_free_for(RX_SCRATCHPAD_L3))
		m->lvm = randomx_create_vm((randomx_flags)(f | RANDOMX_FLAG_LARGE_PAGES), m->lcache,
					   m->lds);
	if (!m->lvm)
		m->lvm = randomx_create_vm((randomx_flags)f, m->lcache, m->lds);
	if (!m->lvm) {
		logf_(in, RNSC_LOG_NOTICE, "librandomx cannot create a VM");
		return RNSC_ERR_NOMEM;
	}
	return 0;
}
#endif

/* ---- ops --------------------------------------------------------------------------------- */

static void rxp_del(void *inst, void *vmp)
{
	(void)inst;
	rxp_vm *m = vmp;
	if (!m)
		return;
	rx_vm_del(m->vm);
	rx_dataset_del(m->ds);
	rx_cache_del(m->cache);
#ifdef HAVE_LIBRANDOMX
	if (m->lvm)
		randomx_destroy_vm(m->lvm);
	if (m->lds)
		randomx_release_dataset(m->lds);
	if (m->lcache)
		randomx_release_cache(m->lcache);
#endif
	free(m);
}

/* How a full-memory machine fetches dataset items ahead: "spec" (own v2 JIT: speculative load,
 * then a prefetch), "hint" (a prefetch instruction: own v1, own interpreter, own JIT on
 * request, librandomx) or "none" (light mode computes items instead). */
static const char *prefetch_name(const rxp_vm *m, int full)
{
	if (!full)
		return "none";
	if (m->impl || !m->vm || !m->jit || !(m->flags & RNSC_RANDOMX_V2))
		return "hint";
	return (rx_vm_flags(m->vm) & RX_FLAG_PREFETCH_NTA) ? "hint" : "spec";
}

static int rxp_new(void *inst, uint32_t flags, const uint8_t *key, size_t key_len,
		   unsigned init_threads, void **out)
{
	rxp_inst *in = inst;
	if (!out || (key_len && !key))
		return RNSC_ERR_INVAL;
	*out = NULL;
	const uint32_t known = RNSC_RANDOMX_V2 | RNSC_RANDOMX_FULL | RNSC_RANDOMX_INTERP |
			       RNSC_RANDOMX_SOFT_AES | RNSC_RANDOMX_NO_HUGE |
			       RNSC_RANDOMX_SECURE_JIT | RNSC_RANDOMX_PREFETCH_NTA |
			       RNSC_RANDOMX_IMPL_MASK;
	if (flags & ~known)
		return RNSC_ERR_INVAL;
	uint32_t impl = flags & RNSC_RANDOMX_IMPL_MASK;
	if (impl != RNSC_RANDOMX_IMPL_OWN && impl != RNSC_RANDOMX_IMPL_LIBRANDOMX)
		return RNSC_ERR_NOPRIM;
#ifndef HAVE_LIBRANDOMX
	if (impl == RNSC_RANDOMX_IMPL_LIBRANDOMX) {
		logf_(in, RNSC_LOG_NOTICE,
		      "this build has no librandomx (install the Debian package "
		      "'librandomx-dev' and reconfigure)");
		return RNSC_ERR_NOPRIM;
	}
#endif
	rxp_vm *m = calloc(1, sizeof(*m));
	if (!m)
		return RNSC_ERR_NOMEM;
	m->flags = flags;
	m->impl = impl == RNSC_RANDOMX_IMPL_LIBRANDOMX;
	m->threads = init_threads ? init_threads : online_cpus();
	int rc;
#ifdef HAVE_LIBRANDOMX
	if (m->impl)
		rc = lib_new(in, m, key, key_len);
	else
#endif
		rc = own_new(in, m, key, key_len);
	if (rc) {
		int e = errno;
		rxp_del(inst, m);
		errno = e;
		return rc;
	}
	*out = m;
	return 0;
}

static int rxp_hash(void *inst, void *vmp, uint8_t out[32], const uint8_t *in, size_t len)
{
	(void)inst;
	rxp_vm *m = vmp;
	if (!m || !out || (len && !in))
		return RNSC_ERR_INVAL;
#ifdef HAVE_LIBRANDOMX
	if (m->impl) {
		/* librandomx leaves its own rounding mode behind; the ABI promises the caller's. */
		fenv_t env;
		fegetenv(&env);
		randomx_calculate_hash(m->lvm, in, len, out);
		fesetenv(&env);
		return 0;
	}
#endif
	return rx_hash(m->vm, in, len, out);
}

static int rxp_info(void *inst, void *vmp, char *buf, size_t cap)
{
	(void)inst;
	rxp_vm *m = vmp;
	if (!buf || !cap)
		return RNSC_ERR_INVAL;
	int n;
	unsigned cpu = rx_cpu_features();
	if (!m) {
#ifdef HAVE_LIBRANDOMX
		const char *impls = "own,librandomx",
			   *lib = " librandomx_versions=1 librandomx_version=" LIBRANDOMX_VERSION;
#else
		const char *impls = "own", *lib = "";
#endif
		n = snprintf(buf, cap,
			     "impls=%s own_versions=1,2 own_version=rnsc-%s%s jit=%s aes=%s", impls,
			     PACKAGE_VERSION, lib, (cpu & RX_CPU_JIT) ? "available" : "none",
			     (cpu & RX_CPU_AES) ? "hw" : "soft");
		if (n < 0)
			return RNSC_ERR_FATAL;
		return n >= (int)cap ? (int)cap - 1 : n;
	}
	int full = (m->flags & RNSC_RANDOMX_FULL) != 0;
	const void *mem = NULL;
	size_t len = 0;
	if (full && m->ds) {
		mem = m->ds->mem;
		len = rx_dataset_size();
	} else if (!full && m->cache) {
		mem = m->cache->mem;
		len = RX_CACHE_SIZE;
	}
#ifdef HAVE_LIBRANDOMX
	if (m->impl && full && m->lds) {
		mem = randomx_get_dataset_memory(m->lds);
		len = rx_dataset_size();
	}
#endif
	long thp = thp_kb(mem, len);
	n = snprintf(
		buf, cap,
		"impl=%s impl_version=%s%s version=%d mode=%s jit=%s aes=%s pages=%s thp_kb=%ld "
		"cache_pages=%s init_threads=%u cache_s=%.3f dataset_s=%.3f jit_pages=%s "
		"prefetch=%s",
		m->impl ? "librandomx" : "own", m->impl ? "librandomx-" : "rnsc-",
		m->impl ? LIBRANDOMX_VERSION : PACKAGE_VERSION,
		(m->flags & RNSC_RANDOMX_V2) ? 2 : 1, full ? "full" : "light",
		m->jit ? "on" : "off", m->soft_aes ? "soft" : "hw",
		rx_pages_name(full ? m->ds_pages : m->cache_pages), thp,
		rx_pages_name(m->cache_pages), full ? m->threads : 0, m->cache_s, m->dataset_s,
		!m->jit         ? "none"
		: m->secure_jit ? "wx"
				: "rwx",
		prefetch_name(m, full));
	if (n < 0)
		return RNSC_ERR_FATAL;
	return n >= (int)cap ? (int)cap - 1 : n;
}

/* ---- self-test: known answers for the building blocks, microseconds in total -------------- */

/* Upstream tests.cpp (v2.0) vectors, also in shared/vectors/randomx/. */
static const uint8_t kat_aes_state[32] = {
	0x6c, 0x19, 0x53, 0x6e, 0xb2, 0xde, 0x31, 0xb6, 0xc0, 0x06, 0x5f,
	0x7f, 0x11, 0x6e, 0x86, 0xf9, 0x60, 0xd8, 0xaf, 0x0c, 0x57, 0x21,
	0x0a, 0x65, 0x84, 0xc3, 0x23, 0x7b, 0x9d, 0x06, 0x4d, 0xc7,
};
static const uint8_t kat_aes_out[32] = {
	0xfa, 0x89, 0x39, 0x7d, 0xd6, 0xca, 0x42, 0x25, 0x13, 0xae, 0xad,
	0xba, 0x3f, 0x12, 0x4b, 0x55, 0x40, 0x32, 0x4c, 0x4a, 0xd4, 0xb6,
	0xdb, 0x43, 0x43, 0x94, 0x30, 0x7a, 0x17, 0xc8, 0x33, 0xab,
};
/* Blake2b-256 of the first SuperscalarHash program for key "test key 000" (serialised as in
 * superscalar.json: opcode, dst, src, mod, imm32 little-endian per instruction). */
static const uint8_t kat_ss_prog0[32] = {
	0xd3, 0xa4, 0xa6, 0x62, 0x37, 0x38, 0x75, 0x6f, 0x77, 0xe6, 0x10,
	0x44, 0x69, 0x10, 0x2f, 0x08, 0x2e, 0xff, 0x2a, 0x3e, 0x60, 0xbe,
	0x7a, 0xd6, 0x96, 0x28, 0x5e, 0xf7, 0xdf, 0xc7, 0x2a, 0x61,
};

static int check_aes(const rx_aes_impl *aes)
{
	uint8_t state[64] = {0}, out[64];
	memcpy(state, kat_aes_state, sizeof(kat_aes_state));
	aes->fill1r(state, out, sizeof(out));
	return memcmp(out, kat_aes_out, 32) == 0 && memcmp(out, state, 64) == 0;
}

static int rxp_self_test(void *inst)
{
	rxp_inst *in = inst;
	uint8_t h[64];
	/* Blake2b: the AES generator keys are defined as a Blake2b hash of a text. */
	rx_blake2b(h, 64, "RandomX AesGenerator1R keys", 27);
	if (memcmp(h, rx_aes_gen1r_keys, 64) != 0)
		goto fail;
	if (rx_reciprocal(3) != UINT64_C(0xaaaaaaaaaaaaaaaa) ||
	    rx_reciprocal(15000001) != UINT64_C(0x8f2a629922e3cce4))
		goto fail;
	if (!check_aes(&rx_aes_soft))
		goto fail;
	if (rx_aes_hw() && !check_aes(rx_aes_hw()))
		goto fail;
	/* Static: one program is about 12 KiB, too much for a plugin's caller's stack. */
	static _Thread_local rx_ss_program prog;
	static _Thread_local uint8_t ser[8 * RX_SUPERSCALAR_MAX_SIZE];
	rx_blake2_gen gen;
	rx_blake2_gen_init(&gen, (const uint8_t *)"test key 000", 12, 0);
	rx_ss_generate(&prog, &gen);
	for (uint32_t k = 0; k < prog.size; k++) {
		ser[8 * k] = prog.ins[k].opcode;
		ser[8 * k + 1] = prog.ins[k].dst;
		ser[8 * k + 2] = prog.ins[k].src;
		ser[8 * k + 3] = prog.ins[k].mod;
		rx_store32(ser + 8 * k + 4, prog.ins[k].imm32);
	}
	rx_blake2b(h, 32, ser, 8 * (size_t)prog.size);
	if (memcmp(h, kat_ss_prog0, 32) != 0)
		goto fail;
	return 0;
fail:
	logf_(in, RNSC_LOG_ERROR, "RandomX building-block known answers do not match");
	return RNSC_ERR_SELFTEST;
}

static int rxp_init(void *inst, const rnsc_host_api *host)
{
	((rxp_inst *)inst)->host = host;
	return 0;
}

static const rnsc_crypto_ops rxp_ops = {
	.struct_size = sizeof(rnsc_crypto_ops),
	.self_test = rxp_self_test,
	.randomx_new = rxp_new,
	.randomx_hash = rxp_hash,
	.randomx_info = rxp_info,
	.randomx_del = rxp_del,
};

static const rnsc_plugin_desc rxp_desc = {
	.struct_size = sizeof(rnsc_plugin_desc),
	.abi_major = RNSC_PLUGIN_ABI_MAJOR,
	.abi_minor = RNSC_PLUGIN_ABI_MINOR,
	.kind = RNSC_PLUGIN_CRYPTO,
	.name = "randomx",
	.version = PACKAGE_VERSION,
#ifdef HAVE_LIBRANDOMX
	.description =
		"RandomX v1/v2: rnsc's own implementation, and librandomx " LIBRANDOMX_VERSION
		" (v1)",
#else
	.description = "RandomX v1/v2: rnsc's own implementation",
#endif
	.caps = RNSC_PRIM_BIT(RNSC_PRIM_RANDOMX),
	.inst_size = sizeof(rxp_inst),
	.ops = &rxp_ops,
	.init = rxp_init,
	.fini = NULL,
};

int rnsc_plugin_init(const rnsc_host_api *host, const rnsc_plugin_desc **out)
	__attribute__((visibility("default")));
int rnsc_plugin_init(const rnsc_host_api *host, const rnsc_plugin_desc **out)
{
	if (out == NULL)
		return RNSC_ERR_INVAL;
	*out = NULL;
	/* Refuse a host whose table we would misread (same rule as the other plugins). */
	if (host != NULL &&
	    (host->struct_size < offsetof(rnsc_host_api, abi_minor) + sizeof(host->abi_minor) ||
	     host->abi_major != RNSC_PLUGIN_ABI_MAJOR))
		return RNSC_ERR_ABI;
	*out = &rxp_desc;
	return 0;
}
