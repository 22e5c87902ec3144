/* SPDX-License-Identifier: MIT */
/*
 * The RandomX virtual machine (spec chapters 2, 4 and 5): programming, the portable byte-code
 * interpreter, the main loop for v1 and v2, and the hash driver. The x86-64 JIT (rx_jit_x86.c)
 * plugs into the same driver and shares the programming step.
 *
 * Floating point: the interpreter computes with C doubles, which on every supported target are
 * IEEE-754 binary64 operations honouring the dynamic rounding mode (this file is built with
 * -frounding-math so the compiler neither folds nor reorders them across mode changes). The
 * caller's floating-point environment is saved and restored around every hash.
 */
#include <errno.h>
#include <fenv.h>
#include <math.h>
#include <stdlib.h>

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

#include <sodium.h>

#include "rx_internal.h"
#include "rx_jit.h"

/* Opcode frequencies per 256 (spec tables 5.2.1, 5.3.1, 5.4.1, 5.5.1), in opcode order. */
static const uint8_t rx_freq[RX_I_COUNT] = {
	[RX_I_IADD_RS] = 16, [RX_I_IADD_M] = 7,   [RX_I_ISUB_R] = 16,  [RX_I_ISUB_M] = 7,
	[RX_I_IMUL_R] = 16,  [RX_I_IMUL_M] = 4,   [RX_I_IMULH_R] = 4,  [RX_I_IMULH_M] = 1,
	[RX_I_ISMULH_R] = 4, [RX_I_ISMULH_M] = 1, [RX_I_IMUL_RCP] = 8, [RX_I_INEG_R] = 2,
	[RX_I_IXOR_R] = 15,  [RX_I_IXOR_M] = 5,   [RX_I_IROR_R] = 8,   [RX_I_IROL_R] = 2,
	[RX_I_ISWAP_R] = 4,  [RX_I_FSWAP_R] = 4,  [RX_I_FADD_R] = 16,  [RX_I_FADD_M] = 5,
	[RX_I_FSUB_R] = 16,  [RX_I_FSUB_M] = 5,   [RX_I_FSCAL_R] = 6,  [RX_I_FMUL_R] = 32,
	[RX_I_FDIV_M] = 4,   [RX_I_FSQRT_R] = 6,  [RX_I_CBRANCH] = 25, [RX_I_CFROUND] = 1,
	[RX_I_ISTORE] = 16,
};

const char *const rx_instr_names[RX_I_COUNT] = {
	"IADD_RS",  "IADD_M",   "ISUB_R",   "ISUB_M",  "IMUL_R", "IMUL_M", "IMULH_R", "IMULH_M",
	"ISMULH_R", "ISMULH_M", "IMUL_RCP", "INEG_R",  "IXOR_R", "IXOR_M", "IROR_R",  "IROL_R",
	"ISWAP_R",  "FSWAP_R",  "FADD_R",   "FADD_M",  "FSUB_R", "FSUB_M", "FSCAL_R", "FMUL_R",
	"FDIV_M",   "FSQRT_R",  "CBRANCH",  "CFROUND", "ISTORE",
};

int rx_opcode_class(uint8_t opcode)
{
	unsigned ceil = 0;
	for (int c = 0; c < RX_I_COUNT; c++) {
		ceil += rx_freq[c];
		if (opcode < ceil)
			return c;
	}
	return RX_I_ISTORE; /* unreachable: the frequencies add up to 256 */
}

uint8_t rx_class_first_opcode(int cls)
{
	unsigned first = 0;
	for (int c = 0; c < cls && c < RX_I_COUNT; c++)
		first += rx_freq[c];
	return (uint8_t)first;
}

/* ---- programming (spec 4.5) ---- */

/* Group A values: 1.fraction x 2^exponent with the exponent in 0..31 (spec 4.5.2). */
static uint64_t small_positive_float_bits(uint64_t entropy)
{
	uint64_t exponent = ((entropy >> 59) + 1023) & 2047;
	return (exponent << 52) | (entropy & ((1ull << 52) - 1));
}

/* Group E masks: fraction bits 0-21, exponent bits 3-6 from bits 60-63, bits 0-2 = 011
 * (spec 4.3.2, 4.5.6). */
static uint64_t e_mask_bits(uint64_t entropy)
{
	uint64_t exponent = 0x300 | ((entropy >> 60) << 4);
	return (entropy & ((1ull << 22) - 1)) | (exponent << 52);
}

void rx_vm_configure(rx_prog_config *cfg, rx_regfile *reg, const uint8_t *entropy)
{
	for (int i = 0; i < 8; i++)
		reg->a[i] = small_positive_float_bits(rx_load64(entropy + 8 * i));
	cfg->ma = (uint32_t)rx_load64(entropy + 8 * 8) & RX_DATASET_LINE_MASK;
	cfg->mx = (uint32_t)rx_load64(entropy + 8 * 10);
	uint64_t sel = rx_load64(entropy + 8 * 12);
	for (int i = 0; i < 4; i++)
		cfg->read_reg[i] = (uint32_t)(2 * i + ((sel >> i) & 1));
	cfg->dataset_offset =
		(rx_load64(entropy + 8 * 13) % (RX_DATASET_EXTRA_ITEMS + 1)) * RX_CACHE_LINE;
	cfg->e_mask[0] = e_mask_bits(rx_load64(entropy + 8 * 14));
	cfg->e_mask[1] = e_mask_bits(rx_load64(entropy + 8 * 15));
}

/* ---- rounding ---- */

void rx_set_fprc(unsigned fprc)
{
#if defined(__x86_64__)
	/* MXCSR's rounding field (bits 13-14) uses the same encoding as fprc. */
	_mm_setcsr((_mm_getcsr() & ~0x6000u) | ((fprc & 3u) << 13));
#else
	static const int modes[4] = {FE_TONEAREST, FE_DOWNWARD, FE_UPWARD, FE_TOWARDZERO};
	fesetround(modes[fprc & 3]);
#endif
}

/* ---- interpreter ---- */

static inline double u2d(uint64_t u)
{
	double d;
	memcpy(&d, &u, sizeof(d));
	return d;
}

static inline uint64_t d2u(double d)
{
	uint64_t u;
	memcpy(&u, &d, sizeof(u));
	return u;
}

/* Group F conversion of 8 bytes: two signed 32-bit integers, exactly representable. */
static inline void cvt_f(double out[2], const uint8_t *p)
{
	out[0] = (double)(int32_t)rx_load32(p);
	out[1] = (double)(int32_t)rx_load32(p + 4);
}

/* Group E conversion: as F, then sign cleared and exponent/fraction bits forced by the masks. */
static inline void cvt_e(double out[2], const uint8_t *p, const uint64_t mask[2])
{
	cvt_f(out, p);
	out[0] = u2d((d2u(out[0]) & RX_DYN_MANTISSA_MASK) | mask[0]);
	out[1] = u2d((d2u(out[1]) & RX_DYN_MANTISSA_MASK) | mask[1]);
}

void rx_interp_compile(rx_bc *bc, const uint8_t *program, unsigned n)
{
	/* Last instruction index that modified each integer register, for CBRANCH targets. */
	int32_t last_mod[8];
	for (int i = 0; i < 8; i++)
		last_mod[i] = -1;
	/* rx_opcode_class searches the frequency table; this runs for every program of every
	 * hash (16 per hash with the JIT), so expand the table once per program instead. */
	uint8_t cls_of[256];
	for (unsigned c = 0, op = 0; c < RX_I_COUNT; c++)
		for (unsigned k = 0; k < rx_freq[c]; k++)
			cls_of[op++] = (uint8_t)c;

	for (unsigned i = 0; i < n; i++) {
		const uint8_t *w = program + 8 * i;
		const int cls = cls_of[w[0]];
		const unsigned d = w[1] % 8, s = w[2] % 8, mod = w[3];
		const uint32_t imm32 = rx_load32(w + 4);
		const uint32_t mem_mask = (mod % 4) ? RX_L1_MASK : RX_L2_MASK;
		rx_bc *b = &bc[i];
		memset(b, 0, sizeof(*b));
		b->dst = (uint8_t)d;
		b->src = (uint8_t)s;

		switch (cls) {
		case RX_I_IADD_RS:
			b->op = RX_BC_IADD_RS;
			b->shift = (uint8_t)((mod >> 2) % 4);
			/* r5 takes a displacement: it encodes as the x86 base register r13. */
			b->imm = d == 5 ? rx_sext32(imm32) : 0;
			last_mod[d] = (int32_t)i;
			break;
		case RX_I_IADD_M:
		case RX_I_ISUB_M:
		case RX_I_IMUL_M:
		case RX_I_IMULH_M:
		case RX_I_ISMULH_M:
		case RX_I_IXOR_M: {
			static const uint8_t ops[RX_I_COUNT] = {
				[RX_I_IADD_M] = RX_BC_IADD_M,     [RX_I_ISUB_M] = RX_BC_ISUB_M,
				[RX_I_IMUL_M] = RX_BC_IMUL_M,     [RX_I_IMULH_M] = RX_BC_IMULH_M,
				[RX_I_ISMULH_M] = RX_BC_ISMULH_M, [RX_I_IXOR_M] = RX_BC_IXOR_M,
			};
			b->op = ops[cls];
			b->imm = rx_sext32(imm32);
			if (s != d) {
				b->mask = mem_mask;
			} else {
				/* Same register: an absolute L3 address from the immediate alone. */
				b->src = 8;
				b->mask = RX_L3_MASK;
			}
			last_mod[d] = (int32_t)i;
			break;
		}
		case RX_I_ISUB_R:
		case RX_I_IMUL_R:
		case RX_I_IXOR_R: {
			if (s != d) {
				b->op = cls == RX_I_ISUB_R   ? RX_BC_ISUB_R
					: cls == RX_I_IMUL_R ? RX_BC_IMUL_R
							     : RX_BC_IXOR_R;
			} else {
				b->op = cls == RX_I_ISUB_R   ? RX_BC_ISUB_I
					: cls == RX_I_IMUL_R ? RX_BC_IMUL_I
							     : RX_BC_IXOR_I;
				b->imm = rx_sext32(imm32);
			}
			last_mod[d] = (int32_t)i;
			break;
		}
		case RX_I_IMULH_R:
			b->op = RX_BC_IMULH_R;
			last_mod[d] = (int32_t)i;
			break;
		case RX_I_ISMULH_R:
			b->op = RX_BC_ISMULH_R;
			last_mod[d] = (int32_t)i;
			break;
		case RX_I_IMUL_RCP:
			if (!rx_is_zero_or_pow2(imm32)) {
				b->op = RX_BC_IMUL_I;
				b->imm = rx_reciprocal(imm32);
				last_mod[d] = (int32_t)i;
			} else {
				b->op = RX_BC_NOP;
			}
			break;
		case RX_I_INEG_R:
			b->op = RX_BC_INEG_R;
			last_mod[d] = (int32_t)i;
			break;
		case RX_I_IROR_R:
		case RX_I_IROL_R: {
			const int ror = cls == RX_I_IROR_R;
			if (s != d) {
				b->op = ror ? RX_BC_IROR_R : RX_BC_IROL_R;
			} else {
				b->op = ror ? RX_BC_IROR_I : RX_BC_IROL_I;
				b->imm = imm32 & 63;
			}
			last_mod[d] = (int32_t)i;
			break;
		}
		case RX_I_ISWAP_R:
			if (s != d) {
				b->op = RX_BC_ISWAP_R;
				last_mod[d] = last_mod[s] = (int32_t)i;
			} else {
				b->op = RX_BC_NOP;
			}
			break;
		case RX_I_FSWAP_R:
			b->op = RX_BC_FSWAP_R;
			b->dst = (uint8_t)(d < 4 ? RX_FREG_F(d) : RX_FREG_E(d - 4));
			break;
		case RX_I_FADD_R:
		case RX_I_FSUB_R:
			b->op = cls == RX_I_FADD_R ? RX_BC_FADD_R : RX_BC_FSUB_R;
			b->dst = (uint8_t)RX_FREG_F(d % 4);
			b->src = (uint8_t)RX_FREG_A(s % 4);
			break;
		case RX_I_FADD_M:
		case RX_I_FSUB_M:
			b->op = cls == RX_I_FADD_M ? RX_BC_FADD_M : RX_BC_FSUB_M;
			b->dst = (uint8_t)RX_FREG_F(d % 4);
			b->mask = mem_mask;
			b->imm = rx_sext32(imm32);
			break;
		case RX_I_FSCAL_R:
			b->op = RX_BC_FSCAL_R;
			b->dst = (uint8_t)RX_FREG_F(d % 4);
			break;
		case RX_I_FMUL_R:
			b->op = RX_BC_FMUL_R;
			b->dst = (uint8_t)RX_FREG_E(d % 4);
			b->src = (uint8_t)RX_FREG_A(s % 4);
			break;
		case RX_I_FDIV_M:
			b->op = RX_BC_FDIV_M;
			b->dst = (uint8_t)RX_FREG_E(d % 4);
			b->mask = mem_mask;
			b->imm = rx_sext32(imm32);
			break;
		case RX_I_FSQRT_R:
			b->op = RX_BC_FSQRT_R;
			b->dst = (uint8_t)RX_FREG_E(d % 4);
			break;
		case RX_I_CBRANCH: {
			const unsigned shift = (mod >> 4) + RX_JUMP_OFFSET;
			b->op = RX_BC_CBRANCH;
			b->target = last_mod[d];
			/* Bit b set and bit b-1 cleared: at most two jumps in a row are possible. */
			b->imm = (rx_sext32(imm32) | (1ull << shift)) & ~(1ull << (shift - 1));
			b->mask = ((1u << RX_JUMP_BITS) - 1) << shift;
			for (int j = 0; j < 8; j++)
				last_mod[j] = (int32_t)i;
			break;
		}
		case RX_I_CFROUND:
			b->op = RX_BC_CFROUND;
			b->imm = imm32 & 63;
			break;
		case RX_I_ISTORE:
			b->op = RX_BC_ISTORE;
			b->imm = rx_sext32(imm32);
			b->mask = (mod >> 4) < RX_STORE_L3_COND ? mem_mask : RX_L3_MASK;
			break;
		}
	}
}

#define SCAL_MASK RX_SCAL_MASK

void rx_interp_execute(rx_interp_state *st, const rx_bc *bc, unsigned n)
{
	uint64_t *const r = st->r;
	double(*const fr)[2] = st->fr;
	uint8_t *const sp = st->scratchpad;
	double m[2];

	for (int pc = 0; pc < (int)n; pc++) {
		const rx_bc *b = &bc[pc];
#define d (&r[b->dst]) /* integer destination; float cases index fr instead */
		switch (b->op) {
		case RX_BC_NOP:
			break;
		case RX_BC_IADD_RS:
			*d += (r[b->src] << b->shift) + b->imm;
			break;
		case RX_BC_IADD_M:
			*d += rx_load64(sp + ((r[b->src] + b->imm) & b->mask));
			break;
		case RX_BC_ISUB_R:
			*d -= r[b->src];
			break;
		case RX_BC_ISUB_I:
			*d -= b->imm;
			break;
		case RX_BC_ISUB_M:
			*d -= rx_load64(sp + ((r[b->src] + b->imm) & b->mask));
			break;
		case RX_BC_IMUL_R:
			*d *= r[b->src];
			break;
		case RX_BC_IMUL_I:
			*d *= b->imm;
			break;
		case RX_BC_IMUL_M:
			*d *= rx_load64(sp + ((r[b->src] + b->imm) & b->mask));
			break;
		case RX_BC_IMULH_R:
			*d = rx_mulh(*d, r[b->src]);
			break;
		case RX_BC_IMULH_M:
			*d = rx_mulh(*d, rx_load64(sp + ((r[b->src] + b->imm) & b->mask)));
			break;
		case RX_BC_ISMULH_R:
			*d = rx_smulh(*d, r[b->src]);
			break;
		case RX_BC_ISMULH_M:
			*d = rx_smulh(*d, rx_load64(sp + ((r[b->src] + b->imm) & b->mask)));
			break;
		case RX_BC_INEG_R:
			*d = 0 - *d;
			break;
		case RX_BC_IXOR_R:
			*d ^= r[b->src];
			break;
		case RX_BC_IXOR_I:
			*d ^= b->imm;
			break;
		case RX_BC_IXOR_M:
			*d ^= rx_load64(sp + ((r[b->src] + b->imm) & b->mask));
			break;
		case RX_BC_IROR_R:
			*d = rx_rotr64(*d, (unsigned)(r[b->src] & 63));
			break;
		case RX_BC_IROR_I:
			*d = rx_rotr64(*d, (unsigned)b->imm);
			break;
		case RX_BC_IROL_R:
			*d = rx_rotl64(*d, (unsigned)(r[b->src] & 63));
			break;
		case RX_BC_IROL_I:
			*d = rx_rotl64(*d, (unsigned)b->imm);
			break;
		case RX_BC_ISWAP_R: {
			uint64_t t = r[b->src];
			r[b->src] = *d;
			*d = t;
			break;
		}
		case RX_BC_FSWAP_R: {
			double t = fr[b->dst][0];
			fr[b->dst][0] = fr[b->dst][1];
			fr[b->dst][1] = t;
			break;
		}
		case RX_BC_FADD_R:
			fr[b->dst][0] += fr[b->src][0];
			fr[b->dst][1] += fr[b->src][1];
			break;
		case RX_BC_FADD_M:
			cvt_f(m, sp + ((r[b->src] + b->imm) & b->mask));
			fr[b->dst][0] += m[0];
			fr[b->dst][1] += m[1];
			break;
		case RX_BC_FSUB_R:
			fr[b->dst][0] -= fr[b->src][0];
			fr[b->dst][1] -= fr[b->src][1];
			break;
		case RX_BC_FSUB_M:
			cvt_f(m, sp + ((r[b->src] + b->imm) & b->mask));
			fr[b->dst][0] -= m[0];
			fr[b->dst][1] -= m[1];
			break;
		case RX_BC_FSCAL_R:
			fr[b->dst][0] = u2d(d2u(fr[b->dst][0]) ^ SCAL_MASK);
			fr[b->dst][1] = u2d(d2u(fr[b->dst][1]) ^ SCAL_MASK);
			break;
		case RX_BC_FMUL_R:
			fr[b->dst][0] *= fr[b->src][0];
			fr[b->dst][1] *= fr[b->src][1];
			break;
		case RX_BC_FDIV_M:
			cvt_e(m, sp + ((r[b->src] + b->imm) & b->mask), st->e_mask);
			fr[b->dst][0] /= m[0];
			fr[b->dst][1] /= m[1];
			break;
		case RX_BC_FSQRT_R:
			fr[b->dst][0] = sqrt(fr[b->dst][0]);
			fr[b->dst][1] = sqrt(fr[b->dst][1]);
			break;
		case RX_BC_CBRANCH:
			*d += b->imm;
			if ((*d & b->mask) == 0)
				pc = b->target; /* the loop's increment continues after it */
			break;
		case RX_BC_CFROUND: {
			const uint64_t v = rx_rotr64(r[b->src], (unsigned)b->imm);
			/* v2 changes the mode only when bits 2-5 of the rotated value are zero. */
			if (!(st->flags & RX_FLAG_V2) || (v & 60) == 0) {
				st->fprc = (unsigned)(v & 3);
				rx_set_fprc(st->fprc);
			}
			break;
		}
		case RX_BC_ISTORE:
			rx_store64(sp + ((*d + b->imm) & b->mask), r[b->src]);
			break;
		default:
			break;
		}
#undef d
	}
}

/* ---- the VM ---- */

struct rx_vm {
	unsigned flags;
	unsigned prog_size;
	const rx_cache *cache;
	const rx_dataset *ds;
	const rx_aes_impl *aes;
	uint8_t *scratchpad;
	void *sp_base;
	size_t sp_len;
	int sp_pages;
	unsigned fprc;
	rx_jit *jit;
	rx_regfile reg;
	rx_prog_config cfg;
	uint8_t program[RX_PROGRAM_BYTES(RX_PROGRAM_MAX_SIZE)];
	rx_bc bc[RX_PROGRAM_MAX_SIZE];
};

unsigned rx_cpu_features(void)
{
	unsigned f = 0;
	if (rx_aes_hw())
		f |= RX_CPU_AES;
	if (rx_jit_available())
		f |= RX_CPU_JIT;
	return f;
}

unsigned rx_default_flags(void)
{
	unsigned cpu = rx_cpu_features(), f = 0;
	if (cpu & RX_CPU_JIT)
		f |= RX_FLAG_JIT;
	if (!(cpu & RX_CPU_AES))
		f |= RX_FLAG_SOFT_AES;
	return f;
}

static int check_sources(unsigned flags, const rx_cache *cache, const rx_dataset *ds)
{
	if (flags & RX_FLAG_FULL_MEM) {
		if (!ds)
			return RNSC_ERR_INVAL;
	} else {
		if (!cache)
			return RNSC_ERR_INVAL;
		if (!cache->initialized)
			return RNSC_ERR_STATE;
	}
	return 0;
}

int rx_vm_new(rx_vm **out, unsigned flags, const rx_cache *cache, const rx_dataset *ds)
{
	if (!out)
		return RNSC_ERR_INVAL;
	*out = NULL;
	int rc = check_sources(flags, cache, ds);
	if (rc < 0)
		return rc;
	const rx_aes_impl *aes = (flags & RX_FLAG_SOFT_AES) ? &rx_aes_soft : rx_aes_hw();
	if (!aes)
		return RNSC_ERR_NOPRIM;
	if ((flags & RX_FLAG_JIT) && !rx_jit_available())
		return RNSC_ERR_NOPRIM;
	if (sodium_init() < 0)
		return RNSC_ERR_CRYPTO;

	if ((flags & RX_FLAG_JIT) && (flags & RX_FLAG_FULL_MEM) && !rx_jit_spec_load_usable())
		flags |= RX_FLAG_PREFETCH_NTA;

	rx_vm *vm = (rx_vm *)calloc(1, sizeof(*vm));
	if (!vm)
		return RNSC_ERR_NOMEM;
	vm->flags = flags;
	vm->prog_size = (flags & RX_FLAG_V2) ? RX_PROGRAM_SIZE_V2 : RX_PROGRAM_SIZE_V1;
	vm->cache = cache;
	vm->ds = ds;
	vm->aes = aes;
	vm->scratchpad = (uint8_t *)rx_mem_alloc(RX_SCRATCHPAD_L3, !(flags & RX_FLAG_NO_HUGE_PAGES),
						 &vm->sp_base, &vm->sp_len, &vm->sp_pages);
	if (!vm->scratchpad) {
		int e = errno;
		free(vm);
		errno = e;
		return RNSC_ERR_NOMEM;
	}
	if (flags & RX_FLAG_JIT) {
		rc = rx_jit_new(&vm->jit, flags);
		if (rc < 0) {
			rx_vm_del(vm);
			return rc;
		}
	}
	*out = vm;
	return 0;
}

int rx_vm_set_cache(rx_vm *vm, const rx_cache *cache)
{
	if (!vm || !cache)
		return RNSC_ERR_INVAL;
	if (!cache->initialized)
		return RNSC_ERR_STATE;
	vm->cache = cache;
	return 0;
}

int rx_vm_set_dataset(rx_vm *vm, const rx_dataset *ds)
{
	if (!vm || !ds)
		return RNSC_ERR_INVAL;
	vm->ds = ds;
	return 0;
}

unsigned rx_vm_flags(const rx_vm *vm)
{
	return vm ? vm->flags : 0;
}

void rx_vm_del(rx_vm *vm)
{
	if (!vm)
		return;
	rx_jit_del(vm->jit);
	if (vm->scratchpad)
		sodium_memzero(vm->scratchpad, RX_SCRATCHPAD_L3);
	rx_mem_free(vm->sp_base, vm->sp_len);
	sodium_memzero(vm, sizeof(*vm));
	free(vm);
}

/* The dataset item at byte address addr: read from memory, or computed from the cache. */
static inline void dataset_read(const rx_vm *vm, uint64_t addr, uint64_t out[8])
{
	if (vm->flags & RX_FLAG_FULL_MEM) {
		const uint8_t *p = vm->ds->mem + addr;
		for (int i = 0; i < 8; i++)
			out[i] = rx_load64(p + 8 * i);
	} else if (vm->flags & RX_FLAG_JIT) {
		rx_dataset_item(vm->cache, addr / RX_CACHE_LINE, out);
	} else {
		/* The interpreter stays portable end to end, even with a JIT-compiled cache. */
		rx_dataset_item_portable(vm->cache, addr / RX_CACHE_LINE, out);
	}
}

/* Spec 4.6: one program, RX_PROGRAM_ITERATIONS iterations, interpreted. */
static void run_interp(rx_vm *vm)
{
	const rx_prog_config *cfg = &vm->cfg;
	uint8_t *sp = vm->scratchpad;
	const int v2 = (vm->flags & RX_FLAG_V2) != 0;
	rx_interp_state st;
	uint64_t item[8];
	uint8_t fbytes[64], ebytes[64];

	memset(&st, 0, sizeof(st));
	for (int i = 0; i < 4; i++) {
		st.fr[RX_FREG_A(i)][0] = u2d(vm->reg.a[2 * i]);
		st.fr[RX_FREG_A(i)][1] = u2d(vm->reg.a[2 * i + 1]);
	}
	st.e_mask[0] = cfg->e_mask[0];
	st.e_mask[1] = cfg->e_mask[1];
	st.scratchpad = sp;
	st.flags = vm->flags;
	st.fprc = vm->fprc;
	rx_interp_compile(vm->bc, vm->program + 128, vm->prog_size);

	uint32_t ma = cfg->ma, mx = cfg->mx;
	uint32_t sp0 = mx, sp1 = ma;
	const unsigned rr0 = cfg->read_reg[0], rr1 = cfg->read_reg[1];
	const unsigned rr2 = cfg->read_reg[2], rr3 = cfg->read_reg[3];

	for (unsigned ic = 0; ic < RX_PROGRAM_ITERATIONS; ic++) {
		const uint64_t mix = st.r[rr0] ^ st.r[rr1];
		sp0 = (sp0 ^ (uint32_t)mix) & RX_L3_MASK64;
		sp1 = (sp1 ^ (uint32_t)(mix >> 32)) & RX_L3_MASK64;
		for (int i = 0; i < 8; i++)
			st.r[i] ^= rx_load64(sp + sp0 + 8 * i);
		for (int i = 0; i < 4; i++) {
			cvt_f(st.fr[RX_FREG_F(i)], sp + sp1 + 8 * i);
			cvt_e(st.fr[RX_FREG_E(i)], sp + sp1 + 32 + 8 * i, st.e_mask);
		}

		rx_interp_execute(&st, vm->bc, vm->prog_size);

		/* mt = ma; then mp (mx in v1, ma in v2) takes the mix and is prefetched. */
		const uint64_t read_addr = cfg->dataset_offset + (ma & RX_DATASET_LINE_MASK);
		const uint32_t mp_mix = (uint32_t)(st.r[rr2] ^ st.r[rr3]);
		if (v2)
			ma ^= mp_mix;
		else
			mx ^= mp_mix;
		if (vm->flags & RX_FLAG_FULL_MEM)
			__builtin_prefetch(vm->ds->mem + cfg->dataset_offset +
					   ((v2 ? ma : mx) & RX_DATASET_LINE_MASK));
		dataset_read(vm, read_addr, item);
		for (int i = 0; i < 8; i++)
			st.r[i] ^= item[i];
		const uint32_t t = mx;
		mx = ma;
		ma = t;

		for (int i = 0; i < 8; i++)
			rx_store64(sp + sp1 + 8 * i, st.r[i]);
		for (int i = 0; i < 4; i++) {
			rx_store64(fbytes + 16 * i, d2u(st.fr[RX_FREG_F(i)][0]));
			rx_store64(fbytes + 16 * i + 8, d2u(st.fr[RX_FREG_F(i)][1]));
		}
		if (v2) {
			for (int i = 0; i < 4; i++) {
				rx_store64(ebytes + 16 * i, d2u(st.fr[RX_FREG_E(i)][0]));
				rx_store64(ebytes + 16 * i + 8, d2u(st.fr[RX_FREG_E(i)][1]));
			}
			vm->aes->mix_fe(fbytes, ebytes);
		} else {
			for (int i = 0; i < 4; i++) {
				for (int h = 0; h < 2; h++) {
					uint64_t x = rx_load64(fbytes + 16 * i + 8 * h) ^
						     d2u(st.fr[RX_FREG_E(i)][h]);
					rx_store64(fbytes + 16 * i + 8 * h, x);
				}
			}
		}
		memcpy(sp + sp0, fbytes, 64);
		/* The mixed f values are what the register file carries on. */
		for (int i = 0; i < 4; i++) {
			st.fr[RX_FREG_F(i)][0] = u2d(rx_load64(fbytes + 16 * i));
			st.fr[RX_FREG_F(i)][1] = u2d(rx_load64(fbytes + 16 * i + 8));
		}
		sp0 = 0;
		sp1 = 0;
	}

	for (int i = 0; i < 8; i++)
		vm->reg.r[i] = st.r[i];
	for (int i = 0; i < 4; i++) {
		vm->reg.f[2 * i] = d2u(st.fr[RX_FREG_F(i)][0]);
		vm->reg.f[2 * i + 1] = d2u(st.fr[RX_FREG_F(i)][1]);
		vm->reg.e[2 * i] = d2u(st.fr[RX_FREG_E(i)][0]);
		vm->reg.e[2 * i + 1] = d2u(st.fr[RX_FREG_E(i)][1]);
	}
	vm->fprc = st.fprc;
}

/* The caller's MXCSR with the rounding field cleared: the JIT ors the mode into it. */
static uint32_t mxcsr_base(void)
{
#if defined(__x86_64__)
	return _mm_getcsr() & ~0x6000u;
#else
	return 0;
#endif
}

static void run_jit(rx_vm *vm)
{
	rx_jit_ctx ctx;
	memset(&ctx, 0, sizeof(ctx));
	memcpy(ctx.a, vm->reg.a, sizeof(ctx.a));
	ctx.scal_mask[0] = ctx.scal_mask[1] = SCAL_MASK;
	ctx.mant_mask[0] = ctx.mant_mask[1] = RX_DYN_MANTISSA_MASK;
	ctx.e_mask[0] = vm->cfg.e_mask[0];
	ctx.e_mask[1] = vm->cfg.e_mask[1];
	ctx.scratchpad = vm->scratchpad;
	ctx.dataset_offset = vm->cfg.dataset_offset;
	ctx.dataset = (vm->flags & RX_FLAG_FULL_MEM) ? vm->ds->mem + vm->cfg.dataset_offset : NULL;
	ctx.cache = vm->cache;
	ctx.aes = vm->aes;
	ctx.ma = vm->cfg.ma;
	ctx.mx = vm->cfg.mx;
	ctx.mxcsr_base = mxcsr_base();
	ctx.mxcsr_out = ctx.mxcsr_base | (vm->fprc << 13);
	if (rx_jit_compile(vm->jit, vm->program + 128, vm->prog_size, &vm->cfg) < 0) {
		/* Code pages unavailable (mprotect refused): the interpreter gives the same result. */
		run_interp(vm);
		return;
	}
	rx_jit_run(vm->jit, &ctx);
	memcpy(vm->reg.r, ctx.spill_r, sizeof(vm->reg.r));
	for (int i = 0; i < 4; i++) {
		vm->reg.f[2 * i] = rx_load64(ctx.spill_x[i]);
		vm->reg.f[2 * i + 1] = rx_load64(ctx.spill_x[i] + 8);
		vm->reg.e[2 * i] = rx_load64(ctx.spill_x[4 + i]);
		vm->reg.e[2 * i + 1] = rx_load64(ctx.spill_x[4 + i] + 8);
	}
	vm->fprc = (ctx.mxcsr_out >> 13) & 3;
}

static void regfile_bytes(uint8_t out[256], const rx_regfile *reg)
{
	for (int i = 0; i < 8; i++) {
		rx_store64(out + 8 * i, reg->r[i]);
		rx_store64(out + 64 + 8 * i, reg->f[i]);
		rx_store64(out + 128 + 8 * i, reg->e[i]);
		rx_store64(out + 192 + 8 * i, reg->a[i]);
	}
}

int rx_hash(rx_vm *vm, const uint8_t *in, size_t len, uint8_t out[RX_HASH_SIZE])
{
	if (!vm || !out || (len && !in))
		return RNSC_ERR_INVAL;
	if (check_sources(vm->flags, vm->cache, vm->ds) < 0)
		return RNSC_ERR_STATE;

	fenv_t saved_env;
	fegetenv(&saved_env);
	uint8_t seed[64];
	uint8_t rf[256];

	rx_blake2b(seed, sizeof(seed), in, len);
	vm->aes->fill1r(seed, vm->scratchpad, RX_SCRATCHPAD_L3);
	vm->fprc = 0;
	rx_set_fprc(0);
	for (int chain = 0; chain < RX_PROGRAM_COUNT; chain++) {
		vm->aes->fill4r(seed, vm->program, RX_PROGRAM_BYTES(vm->prog_size));
		rx_vm_configure(&vm->cfg, &vm->reg, vm->program);
		if (vm->jit)
			run_jit(vm);
		else
			run_interp(vm);
		if (chain + 1 < RX_PROGRAM_COUNT) {
			regfile_bytes(rf, &vm->reg);
			rx_blake2b(seed, sizeof(seed), rf, sizeof(rf));
		}
	}
	regfile_bytes(rf, &vm->reg);
	/* The scratchpad fingerprint replaces the a registers (spec 2, steps 12-13). */
	vm->aes->hash1r(vm->scratchpad, RX_SCRATCHPAD_L3, rf + 192);
	rx_blake2b(out, RX_HASH_SIZE, rf, sizeof(rf));
	fesetenv(&saved_env);
	sodium_memzero(seed, sizeof(seed));
	return 0;
}

int rx_commitment(uint8_t out[RX_HASH_SIZE], const uint8_t *in, size_t len,
		  const uint8_t hash[RX_HASH_SIZE])
{
	if (!out || !hash || (len && !in))
		return RNSC_ERR_INVAL;
	crypto_generichash_state st;
	crypto_generichash_init(&st, NULL, 0, RX_HASH_SIZE);
	if (len)
		crypto_generichash_update(&st, in, len);
	crypto_generichash_update(&st, hash, RX_HASH_SIZE);
	crypto_generichash_final(&st, out, RX_HASH_SIZE);
	return 0;
}
