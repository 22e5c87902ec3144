/* SPDX-License-Identifier: MIT */
/*
 * Memory given back after bursts: a flood of connections or packets leaves the heap full
 * of freed chunks that glibc keeps (and, once a large block was freed, its raised mmap
 * threshold puts the next large blocks on the heap too). rnsc_mem_trim_start() fixes the
 * mmap threshold at its default (128 KiB blocks keep coming from mmap and go back to the
 * system when freed) and, on a loop timer every RNSC_MEM_TRIM_PERIOD_S, returns the free
 * heap pages with malloc_trim() when the main arena holds more than RNSC_MEM_TRIM_SLACK
 * free bytes (and once a minute regardless, for the other arenas). Off glibc it does
 * nothing.
 *
 * Ownership: the returned keeper is freed by rnsc_mem_trim_stop(); the loop must outlive it.
 * Threading: the loop's thread.
 */
#ifndef RNSC_MEM_TRIM_H
#define RNSC_MEM_TRIM_H

#include <stddef.h>
#include <stdint.h>

#include "loop.h"

#define RNSC_MEM_TRIM_PERIOD_S 5
#define RNSC_MEM_TRIM_SLACK (512u * 1024u)

typedef struct rnsc_mem_trim rnsc_mem_trim;

/* 0, RNSC_ERR_NOMEM or the loop's error. */
RNSC_API int rnsc_mem_trim_start(rnsc_loop *loop, rnsc_mem_trim **out);
/* NULL is a no-op. */
RNSC_API void rnsc_mem_trim_stop(rnsc_mem_trim *m);
/* How many times memory was handed back. */
RNSC_API uint64_t rnsc_mem_trim_count(const rnsc_mem_trim *m);

#endif
