/* SPDX-License-Identifier: MIT */
/*
 * Internals shared by the RandomX modules and their known-answer tests; not part of the public
 * API (rx.h). Everything here is either a compile-time constant, a read-only table, or a function
 * working only on storage its caller owns, so any number of threads may call into it as long as
 * each one works on its own objects.
 *
 * Parameter names follow the RandomX specification (doc/specs.md of the upstream project), so a
 * failing check can be traced to the chapter that defines it.
 */
#ifndef RNSC_RX_INTERNAL_H
#define RNSC_RX_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "rx.h"

/* ---- Parameters (spec table 1.2.1; identical for v1 and v2 except the program size) ---- */
#define RX_ARGON_MEMORY 262144u /* 1 KiB Argon2 blocks in the cache */
#define RX_ARGON_ITERATIONS 3u
#define RX_ARGON_LANES 1u
#define RX_ARGON_SALT "RandomX\x03"
#define RX_ARGON_SALT_LEN 8u
#define RX_CACHE_ACCESSES 8
#define RX_SUPERSCALAR_LATENCY 170
#define RX_SUPERSCALAR_MAX_SIZE (3 * RX_SUPERSCALAR_LATENCY + 2)
#define RX_DATASET_BASE_SIZE 2147483648ull
#define RX_DATASET_EXTRA_SIZE 33554368ull
#define RX_PROGRAM_SIZE_V1 256
#define RX_PROGRAM_SIZE_V2 384
#define RX_PROGRAM_MAX_SIZE 384
#define RX_PROGRAM_ITERATIONS 2048
#define RX_PROGRAM_COUNT 8
#define RX_SCRATCHPAD_L3 2097152u
#define RX_SCRATCHPAD_L2 262144u
#define RX_SCRATCHPAD_L1 16384u
#define RX_JUMP_BITS 8
#define RX_JUMP_OFFSET 8

/* ---- Derived sizes and masks (spec 4.2, 4.5.5, 7.3) ---- */
#define RX_CACHE_SIZE ((size_t)RX_ARGON_MEMORY * 1024u)
#define RX_CACHE_LINE 64u
#define RX_CACHE_LINES (RX_CACHE_SIZE / RX_CACHE_LINE)
#define RX_DATASET_SIZE (RX_DATASET_BASE_SIZE + RX_DATASET_EXTRA_SIZE)
#define RX_DATASET_ITEMS (RX_DATASET_SIZE / RX_CACHE_LINE)
#define RX_DATASET_EXTRA_ITEMS (RX_DATASET_EXTRA_SIZE / RX_CACHE_LINE)
#define RX_DATASET_LINE_MASK                                                                       \
	((uint32_t)((RX_DATASET_BASE_SIZE - 1) & ~(uint64_t)(RX_CACHE_LINE - 1)))
#define RX_L1_MASK ((RX_SCRATCHPAD_L1 - 1) & ~7u)
#define RX_L2_MASK ((RX_SCRATCHPAD_L2 - 1) & ~7u)
#define RX_L3_MASK ((RX_SCRATCHPAD_L3 - 1) & ~7u)
#define RX_L3_MASK64 ((RX_SCRATCHPAD_L3 - 1) & ~63u)
#define RX_STORE_L3_COND 14

/* The size of the program buffer a VM is programmed with (spec 4.5). */
#define RX_PROGRAM_BYTES(n) (128u + 8u * (unsigned)(n))

/* ---- Little-endian helpers: the spec defines every load and store as little-endian ---- */
static inline uint64_t rx_load64(const void *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

static inline uint32_t rx_load32(const void *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	return v;
}

static inline void rx_store64(void *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	memcpy(p, &v, 8);
}

static inline void rx_store32(void *p, uint32_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	memcpy(p, &v, 4);
}

static inline uint64_t rx_rotr64(uint64_t x, unsigned c)
{
	c &= 63;
	return c ? (x >> c) | (x << (64 - c)) : x;
}

static inline uint64_t rx_rotl64(uint64_t x, unsigned c)
{
	c &= 63;
	return c ? (x << c) | (x >> (64 - c)) : x;
}

static inline uint64_t rx_sext32(uint32_t x)
{
	return (uint64_t)(int64_t)(int32_t)x;
}

/* High 64 bits of the 128-bit products. 32-bit targets (armhf) have no __int128: there the
 * product is built from 32-bit halves and the signed one corrected from the unsigned one. */
#if defined(__SIZEOF_INT128__)
static inline uint64_t rx_mulh(uint64_t a, uint64_t b)
{
	return (uint64_t)(((unsigned __int128)a * b) >> 64);
}

static inline uint64_t rx_smulh(uint64_t a, uint64_t b)
{
	return (uint64_t)(((__int128)(int64_t)a * (int64_t)b) >> 64);
}
#else
static inline uint64_t rx_mulh(uint64_t a, uint64_t b)
{
	uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
	uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
	uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
	return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

static inline uint64_t rx_smulh(uint64_t a, uint64_t b)
{
	/* signed = unsigned - (a < 0 ? b : 0) - (b < 0 ? a : 0), modulo 2^64 */
	return rx_mulh(a, b) - ((a >> 63) ? b : 0) - ((b >> 63) ? a : 0);
}
#endif

static inline int rx_is_zero_or_pow2(uint64_t x)
{
	return (x & (x - 1)) == 0;
}

/* floor(2^x / d) for the largest x keeping the quotient below 2^64 (spec 5.2.6). d must be
 * neither 0 nor a power of two. */
uint64_t rx_reciprocal(uint32_t d);

/* ---- Blake2b (libsodium's crypto_generichash, unkeyed) ---- */
/* Hash512/Hash256 of the spec: Blake2b with an outlen-byte digest (1..64). */
void rx_blake2b(void *out, size_t outlen, const void *in, size_t inlen);

/* BlakeGenerator (spec 3.5): a 64-byte state refreshed by Hash512 when exhausted. */
typedef struct rx_blake2_gen {
	uint8_t data[64];
	size_t pos;
} rx_blake2_gen;
void rx_blake2_gen_init(rx_blake2_gen *g, const uint8_t *seed, size_t seed_len, uint32_t nonce);
uint8_t rx_blake2_gen_byte(rx_blake2_gen *g);
uint32_t rx_blake2_gen_u32(rx_blake2_gen *g);

/* ---- Argon2d memory fill (spec 7.1): mem must hold RX_CACHE_SIZE bytes ---- */
void rx_argon2d_fill(uint8_t *mem, const uint8_t *pwd, size_t pwd_len);

/* ---- AES (spec 3.2-3.4) ----
 * One round is x86 AESENC/AESDEC semantics on 16 bytes in memory order. The two implementations
 * (AES-NI and table-free software) are selected per VM, so both are exercised by the tests. */
typedef struct rx_aes_impl {
	const char *name;
	/* AesGenerator1R: len is a multiple of 64; the state is advanced and written back. */
	void (*fill1r)(uint8_t state[64], uint8_t *out, size_t len);
	/* AesGenerator4R: len is a multiple of 64; the state is only read. */
	void (*fill4r)(const uint8_t state[64], uint8_t *out, size_t len);
	/* AesHash1R over len (multiple of 64) bytes. */
	void (*hash1r)(const uint8_t *in, size_t len, uint8_t out[64]);
	/* v2 step 10 of 4.6.2: f0..f3 (64 bytes) mixed with AES rounds keyed by e0..e3. */
	void (*mix_fe)(uint8_t f[64], const uint8_t e[64]);
	void (*enc_round)(uint8_t blk[16], const uint8_t key[16]);
	void (*dec_round)(uint8_t blk[16], const uint8_t key[16]);
} rx_aes_impl;

extern const rx_aes_impl rx_aes_soft;
#if defined(__x86_64__)
extern const rx_aes_impl rx_aes_ni;
#endif
/* Returns the hardware implementation when the CPU has one, else NULL. */
const rx_aes_impl *rx_aes_hw(void);

/* Fixed keys and states (spec 3.2-3.4); each is Blake2b of a text, checked by the tests. */
extern const uint8_t rx_aes_gen1r_keys[64];
extern const uint8_t rx_aes_gen4r_keys[128];
extern const uint8_t rx_aes_hash1r_state[64];
extern const uint8_t rx_aes_hash1r_xkeys[32];

/* ---- SuperscalarHash (spec 6) ---- */
enum rx_ss_type {
	RX_SS_ISUB_R = 0,
	RX_SS_IXOR_R = 1,
	RX_SS_IADD_RS = 2,
	RX_SS_IMUL_R = 3,
	RX_SS_IROR_C = 4,
	RX_SS_IADD_C7 = 5,
	RX_SS_IXOR_C7 = 6,
	RX_SS_IADD_C8 = 7,
	RX_SS_IXOR_C8 = 8,
	RX_SS_IADD_C9 = 9,
	RX_SS_IXOR_C9 = 10,
	RX_SS_IMULH_R = 11,
	RX_SS_ISMULH_R = 12,
	RX_SS_IMUL_RCP = 13,
	RX_SS_INVALID = -1
};

/* One generated instruction, kept as generated (imm32 of IMUL_RCP is the divisor). */
typedef struct rx_ss_instr {
	uint8_t opcode, dst, src, mod;
	uint32_t imm32;
} rx_ss_instr;

typedef struct rx_ss_program {
	uint32_t size;
	int addr_reg; /* register with the longest dependency chain (spec 7.3 step 7) */
	rx_ss_instr ins[RX_SUPERSCALAR_MAX_SIZE];
	uint64_t imm
		[RX_SUPERSCALAR_MAX_SIZE]; /* pre-computed operand: sign-extended, rotation or reciprocal */
} rx_ss_program;

void rx_ss_generate(rx_ss_program *prog, rx_blake2_gen *gen);
void rx_ss_execute(uint64_t r[8], const rx_ss_program *prog);

/* ---- Cache, dataset ---- */
/* Native code computing one dataset item: r holds the initial registers on entry and the item
 * on return. */
typedef void (*rx_ss_fn)(uint64_t r[8], const uint8_t *cache_mem, uint64_t item);

struct rx_cache {
	uint8_t *mem;
	size_t map_len;
	void *map_base;
	int pages; /* enum rx_pages */
	int initialized;
	unsigned flags;
	rx_ss_program prog[RX_CACHE_ACCESSES];
	/* JIT-compiled dataset item code (W^X: executable, never writable while executable), or
	 * NULL when the portable executor is used. */
	void *ss_code;
	size_t ss_code_len;
	rx_ss_fn ss_fn;
};

struct rx_dataset {
	uint8_t *mem;
	size_t map_len;
	void *map_base;
	int pages;
};

/* Initialise dst as a copy of the initialised cache src (same key), then build dst's own
 * native code if its flags ask for it. Used by tests to avoid a second Argon2d fill. */
int rx_cache_init_from(rx_cache *dst, const rx_cache *src);

/* The 64-byte dataset item itemNumber computed from the cache (spec 7.3), portable executor. */
void rx_dataset_item_portable(const rx_cache *c, uint64_t item, uint64_t out[8]);
/* Same, through the fastest path the cache has (JIT when compiled). */
void rx_dataset_item(const rx_cache *c, uint64_t item, uint64_t out[8]);

/* Page-backed allocation: huge pages when allowed and available, reported in *pages. */
void *rx_mem_alloc(size_t len, int allow_huge, void **map_base, size_t *map_len, int *pages);
void rx_mem_free(void *map_base, size_t map_len);

/* ---- Virtual machine (spec 4, 5) ---- */
typedef struct rx_regfile {
	uint64_t r[8];
	uint64_t f[8]; /* f0..f3, low then high half, as IEEE-754 bit patterns */
	uint64_t e[8];
	uint64_t a[8];
} rx_regfile;

typedef struct rx_prog_config {
	uint64_t e_mask[2];
	uint32_t read_reg[4];
	uint32_t ma, mx;
	uint64_t dataset_offset;
} rx_prog_config;

/* Interpreter byte code: the program buffer decoded once per program. */
enum rx_bc_op {
	RX_BC_NOP = 0,
	RX_BC_IADD_RS,
	RX_BC_IADD_M,
	RX_BC_ISUB_R,
	RX_BC_ISUB_I,
	RX_BC_ISUB_M,
	RX_BC_IMUL_R,
	RX_BC_IMUL_I,
	RX_BC_IMUL_M,
	RX_BC_IMULH_R,
	RX_BC_IMULH_M,
	RX_BC_ISMULH_R,
	RX_BC_ISMULH_M,
	RX_BC_INEG_R,
	RX_BC_IXOR_R,
	RX_BC_IXOR_I,
	RX_BC_IXOR_M,
	RX_BC_IROR_R,
	RX_BC_IROR_I,
	RX_BC_IROL_R,
	RX_BC_IROL_I,
	RX_BC_ISWAP_R,
	RX_BC_FSWAP_R,
	RX_BC_FADD_R,
	RX_BC_FADD_M,
	RX_BC_FSUB_R,
	RX_BC_FSUB_M,
	RX_BC_FSCAL_R,
	RX_BC_FMUL_R,
	RX_BC_FDIV_M,
	RX_BC_FSQRT_R,
	RX_BC_CBRANCH,
	RX_BC_CFROUND,
	RX_BC_ISTORE,
	RX_BC_COUNT
};

typedef struct rx_bc {
	uint8_t op;
	uint8_t dst; /* integer register, or float register index into the 12-entry float file */
	uint8_t src; /* integer register (8 = constant zero) or float register index */
	uint8_t shift;
	uint32_t mask; /* scratchpad mask, or the CBRANCH condition mask */
	uint64_t imm;
	int32_t target; /* CBRANCH: index of the instruction to continue after (-1: start) */
	uint32_t pad;
} rx_bc;

/* The instruction classes of the 256 opcodes (spec tables 5.2.1-5.5.1), in opcode order. */
enum rx_instr {
	RX_I_IADD_RS,
	RX_I_IADD_M,
	RX_I_ISUB_R,
	RX_I_ISUB_M,
	RX_I_IMUL_R,
	RX_I_IMUL_M,
	RX_I_IMULH_R,
	RX_I_IMULH_M,
	RX_I_ISMULH_R,
	RX_I_ISMULH_M,
	RX_I_IMUL_RCP,
	RX_I_INEG_R,
	RX_I_IXOR_R,
	RX_I_IXOR_M,
	RX_I_IROR_R,
	RX_I_IROL_R,
	RX_I_ISWAP_R,
	RX_I_FSWAP_R,
	RX_I_FADD_R,
	RX_I_FADD_M,
	RX_I_FSUB_R,
	RX_I_FSUB_M,
	RX_I_FSCAL_R,
	RX_I_FMUL_R,
	RX_I_FDIV_M,
	RX_I_FSQRT_R,
	RX_I_CBRANCH,
	RX_I_CFROUND,
	RX_I_ISTORE,
	RX_I_COUNT
};
/* Instruction class of an opcode byte. */
int rx_opcode_class(uint8_t opcode);
/* The first opcode byte of a class (for building test programs). */
uint8_t rx_class_first_opcode(int cls);
extern const char *const rx_instr_names[RX_I_COUNT];

/* FSCAL_R flips the sign and the 4 low exponent bits (spec 5.3.4). */
#define RX_SCAL_MASK 0x80F0000000000000ull
/* Group E conversion keeps the fraction and the low 4 exponent bits (spec 4.3.2). */
#define RX_DYN_MANTISSA_MASK ((1ull << 56) - 1)

/* Float register numbering inside the interpreter's float file. */
#define RX_FREG_F(i) (i)
#define RX_FREG_E(i) (4 + (i))
#define RX_FREG_A(i) (8 + (i))

/* Interpreter machine state for one program execution. Exposed so single-instruction
 * known-answer tests can drive exactly the code path the VM uses. */
typedef struct rx_interp_state {
	uint64_t r[9];    /* r0..r7 and a constant zero */
	double fr[12][2]; /* f0..f3, e0..e3, a0..a3 */
	uint64_t e_mask[2];
	uint8_t *scratchpad;
	unsigned flags; /* RX_FLAG_V2 selects the v2 CFROUND rule */
	unsigned fprc;
} rx_interp_state;

/* Decode n instruction words (8 bytes each) into byte code. */
void rx_interp_compile(rx_bc *bc, const uint8_t *program, unsigned n);
/* Execute decoded byte code once over st. */
void rx_interp_execute(rx_interp_state *st, const rx_bc *bc, unsigned n);
/* Apply rounding mode fprc (0..3) to the floating-point environment. */
void rx_set_fprc(unsigned fprc);

/* The parts of VM programming the interpreter and JIT share (spec 4.5). */
void rx_vm_configure(rx_prog_config *cfg, rx_regfile *reg, const uint8_t *entropy);

/* ---- x86-64 JIT ---- */
/* 1 when the JIT can run on this machine (x86-64 with the instructions it emits). */
int rx_jit_available(void);
/* Compile the cache's SuperscalarHash programs to a dataset-item function. */
int rx_ss_jit_compile(rx_cache *c);
void rx_ss_jit_free(rx_cache *c);

#endif
