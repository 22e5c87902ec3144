/* SPDX-License-Identifier: MIT */
/*
 * Interface between the VM driver (rx_vm.c) and the x86-64 JIT (rx_jit_x86.c). One rx_jit
 * belongs to one VM and is used by that VM's thread only. Its code pages are writable and
 * executable at once by default; with RX_FLAG_SECURE_JIT (or where the system refuses that)
 * they follow W^X: writable while a program is emitted and executable (read-only) while it runs.
 */
#ifndef RNSC_RX_JIT_H
#define RNSC_RX_JIT_H

#include "rx_internal.h"

typedef struct rx_jit rx_jit;

/* Everything the generated program loop reads or writes. The generated code addresses the
 * fields by offsetof(), so the layout is free to change. */
typedef struct rx_jit_ctx {
	uint64_t spill_r[8];    /* r0..r7 on exit and around helper calls */
	uint8_t spill_x[8][16]; /* f0..f3, e0..e3 on exit and around helper calls */
	uint64_t a[8];          /* group A registers, low/high halves */
	uint64_t scal_mask[2];  /* FSCAL_R: 0x80F0000000000000 in both halves */
	uint64_t mant_mask[2];  /* group E conversion: fraction and low exponent bits kept */
	uint64_t e_mask[2];     /* group E conversion: bits forced per half */
	uint8_t *scratchpad;
	const uint8_t *dataset; /* full mode: dataset memory plus the program's offset */
	const rx_cache *cache;  /* light mode: items are computed from it */
	const rx_aes_impl *aes; /* software AES for the v2 mix (NULL: AES-NI inline) */
	uint64_t dataset_offset;
	uint32_t ma, mx;
	uint32_t mxcsr_base; /* caller's MXCSR with the rounding field cleared */
	uint32_t mxcsr_out;  /* MXCSR at exit: carries the rounding mode to the next program */
} rx_jit_ctx;

/* Whether the full-mode program loop may fetch dataset items by a speculative load (its
 * default; see rx_jit_x86.c): false where a CET shadow stack is active or there is no JIT. */
int rx_jit_spec_load_usable(void);
/* flags: the VM's RX_FLAG_* (RX_FLAG_PREFETCH_NTA selects prefetchnta for the dataset). */
int rx_jit_new(rx_jit **out, unsigned flags);
void rx_jit_del(rx_jit *j);
/* Translate one program of n instructions for the given configuration. */
int rx_jit_compile(rx_jit *j, const uint8_t *program, unsigned n, const rx_prog_config *cfg);
/* Translate an instruction sequence run once (no loop): the registers come from and go back
 * to ctx->spill_r/spill_x, a from ctx->a. For single-instruction tests. */
int rx_jit_compile_body(rx_jit *j, const uint8_t *program, unsigned n);
/* Run the compiled program's RX_PROGRAM_ITERATIONS iterations. */
void rx_jit_run(rx_jit *j, rx_jit_ctx *ctx);

#endif
