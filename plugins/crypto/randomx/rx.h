/* SPDX-License-Identifier: MIT */
/*
 * rnsc's own implementation of the RandomX proof-of-work function, versions 1 and 2.
 *
 * Objects and ownership:
 *   rx_cache    256 MiB Argon2d cache plus the 8 SuperscalarHash programs derived from one key.
 *               Created with rx_cache_new, filled with rx_cache_init, freed with rx_cache_del.
 *   rx_dataset  the 2080 MiB full-memory dataset expanded from a cache (rx_dataset_new/init/del).
 *   rx_vm       one virtual machine (2 MiB scratchpad, program buffer, optional JIT code).
 *               It borrows the cache/dataset it is given: they must outlive it (or be replaced
 *               with rx_vm_set_cache/rx_vm_set_dataset first).
 *
 * Threading: a cache or dataset is read-only once initialised and may be shared by any number
 * of VMs on any threads. A VM is used by one thread at a time. rx_cache_init and
 * rx_dataset_init must not run while a VM reads the object. The library keeps no global
 * mutable state.
 *
 * Errors are negative rnsc_err codes from err.h; 0 means success. After RNSC_ERR_NOMEM from an
 * allocation of a cache, dataset or VM, errno holds the system's reason.
 *
 * Versions: v1 is upstream's default configuration (program size 256); v2 (RX_FLAG_V2) changes
 * the program size to 384, the CFROUND rule, mixes group F with group E by AES rounds and
 * prefetches the dataset two iterations ahead. The cache and dataset are the same for both.
 */
#ifndef RNSC_RX_H
#define RNSC_RX_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RX_HASH_SIZE 32
/* Keys longer than this are accepted; as upstream, Argon2d uses the whole key while the
 * SuperscalarHash generator uses only its first 60 bytes. */
#define RX_KEY_MAX 60

enum rx_flags {
	RX_FLAG_V2 = 1u << 0,       /* RandomX v2 (else v1) */
	RX_FLAG_FULL_MEM = 1u << 1, /* read the full dataset (else compute items from the cache) */
	RX_FLAG_JIT = 1u << 2,      /* x86-64 JIT (else the portable interpreter) */
	RX_FLAG_SOFT_AES = 1u << 3, /* software AES rounds (else AES-NI) */
	RX_FLAG_NO_HUGE_PAGES = 1u << 4, /* do not ask for huge pages */
	/* Keep the VM's JIT code pages W^X: writable while a program is emitted, executable only
	 * after that (two mprotect calls per program, 16 per hash). Without it the code pages are
	 * mapped writable and executable once, like upstream's default, and each program is
	 * emitted without a system call; where the system refuses such pages the JIT falls back to
	 * W^X by itself. */
	RX_FLAG_SECURE_JIT = 1u << 5,
	/* v2 full-memory JIT: fetch the dataset item of a later iteration with one prefetchnta
	 * instruction, as upstream does, instead of the default speculative load followed by a
	 * prefetch an iteration later (see rx_jit_x86.c; v1 always uses prefetchnta). Set by
	 * rx_vm_new where the speculative load cannot be used (a CET shadow stack is active);
	 * rx_vm_flags() tells which one a VM runs with. */
	RX_FLAG_PREFETCH_NTA = 1u << 6,
};

/* What backs a large allocation, as reported by rx_cache_pages()/rx_dataset_pages(). */
enum rx_pages {
	RX_PAGES_NORMAL = 0,  /* 4 KiB pages */
	RX_PAGES_THP = 1,     /* madvise(MADV_HUGEPAGE) accepted: transparent huge pages */
	RX_PAGES_HUGETLB = 2, /* MAP_HUGETLB: pre-reserved 2 MiB pages */
};

/* CPU capabilities that matter here. */
enum rx_cpu {
	RX_CPU_AES = 1u << 0, /* AES-NI present: hardware AES usable */
	RX_CPU_JIT = 1u << 1, /* the x86-64 JIT can run here */
};

typedef struct rx_cache rx_cache;
typedef struct rx_dataset rx_dataset;
typedef struct rx_vm rx_vm;

/* RX_CPU_* bits for this machine. */
unsigned rx_cpu_features(void);
/* The fastest flags for this machine (JIT when available, hardware AES when present),
 * without RX_FLAG_V2 or RX_FLAG_FULL_MEM. */
unsigned rx_default_flags(void);
/* Short name of an rx_pages value ("4k", "thp", "hugetlb"). */
const char *rx_pages_name(int pages);

/*
 * Allocate a cache. flags: RX_FLAG_JIT compiles the SuperscalarHash programs to native code at
 * rx_cache_init (faster light mode and dataset init); RX_FLAG_NO_HUGE_PAGES.
 * Returns 0, RNSC_ERR_INVAL, RNSC_ERR_NOMEM (256 MiB could not be mapped; errno says why) or
 * RNSC_ERR_NOPRIM (JIT requested on a machine without one). *out is owned by the caller.
 */
RNSC_MUST_CHECK int rx_cache_new(rx_cache **out, unsigned flags);
/* Fill the cache from key (Argon2d, one to two seconds) and generate its programs; with
 * RX_FLAG_JIT also compile them (silently skipped where executable pages are refused).
 * Returns 0 or RNSC_ERR_INVAL. */
RNSC_MUST_CHECK int rx_cache_init(rx_cache *cache, const uint8_t *key, size_t key_len);
/* enum rx_pages backing the cache memory. */
int rx_cache_pages(const rx_cache *cache);
/* Free the cache; NULL is a no-op. */
void rx_cache_del(rx_cache *cache);

/* Size in bytes of the full dataset and its number of 64-byte items. */
uint64_t rx_dataset_size(void);
uint64_t rx_dataset_items(void);
/*
 * Allocate the dataset (2080 MiB). flags: RX_FLAG_NO_HUGE_PAGES. Huge pages are requested
 * before anything touches the memory. Returns 0, RNSC_ERR_INVAL or RNSC_ERR_NOMEM (the mapping
 * failed; errno says why: typically ENOMEM when the machine lacks memory or overcommit is
 * restricted).
 */
RNSC_MUST_CHECK int rx_dataset_new(rx_dataset **out, unsigned flags);
/* Expand cache into the whole dataset with threads worker threads (0: one per online CPU).
 * Returns 0, RNSC_ERR_INVAL, RNSC_ERR_STATE (cache not initialised) or RNSC_ERR_SYS (a thread
 * could not be started). */
RNSC_MUST_CHECK int rx_dataset_init(rx_dataset *ds, const rx_cache *cache, unsigned threads);
/* Compute items [start, start + count) only: for callers running their own threads. */
RNSC_MUST_CHECK int rx_dataset_init_range(rx_dataset *ds, const rx_cache *cache, uint64_t start,
					  uint64_t count);
int rx_dataset_pages(const rx_dataset *ds);
void rx_dataset_del(rx_dataset *ds);

/*
 * Create a VM. flags: RX_FLAG_V2, RX_FLAG_FULL_MEM (needs ds, else needs cache), RX_FLAG_JIT,
 * RX_FLAG_SOFT_AES, RX_FLAG_NO_HUGE_PAGES. The VM borrows cache/ds.
 * Returns 0, RNSC_ERR_INVAL (missing cache/dataset for the mode), RNSC_ERR_STATE (cache not
 * initialised), RNSC_ERR_NOPRIM (hardware AES or JIT requested but unavailable) or
 * RNSC_ERR_NOMEM.
 */
RNSC_MUST_CHECK int rx_vm_new(rx_vm **out, unsigned flags, const rx_cache *cache,
			      const rx_dataset *ds);
/* Point a VM at another (initialised) cache or dataset, e.g. after a key change. */
RNSC_MUST_CHECK int rx_vm_set_cache(rx_vm *vm, const rx_cache *cache);
RNSC_MUST_CHECK int rx_vm_set_dataset(rx_vm *vm, const rx_dataset *ds);
/* The flags the VM runs with. */
unsigned rx_vm_flags(const rx_vm *vm);
void rx_vm_del(rx_vm *vm);

/*
 * RandomX hash of in[0..len) under the VM's key: out receives RX_HASH_SIZE bytes.
 * The caller's floating-point environment is saved and restored.
 * Returns 0 or RNSC_ERR_INVAL.
 */
RNSC_MUST_CHECK int rx_hash(rx_vm *vm, const uint8_t *in, size_t len, uint8_t out[RX_HASH_SIZE]);
/* Commitment = Blake2b-256(in || hash) (upstream randomx_calculate_commitment). */
RNSC_MUST_CHECK int rx_commitment(uint8_t out[RX_HASH_SIZE], const uint8_t *in, size_t len,
				  const uint8_t hash[RX_HASH_SIZE]);

#ifdef __cplusplus
}
#endif

#endif
