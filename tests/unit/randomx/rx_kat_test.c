/* SPDX-License-Identifier: MIT */
/*
 * Known-answer tests for rnsc's RandomX (plugins/crypto/randomx) against the upstream vectors in
 * the JSON files in shared/vectors/randomx: constants, reciprocal, AES generator, SuperscalarHash programs,
 * cache and dataset items, single instructions, v1 and v2 hashes and commitments. Every check
 * runs on each implementation this machine supports (interpreter and JIT, AES-NI and software
 * AES), in light mode so `make check` stays fast (plus full-memory mode's fetch paths on an
 * unwritten dataset); full-memory mode on a real dataset is rx_full_test.
 *
 * The vector directory is $RX_VECTOR_DIR, else $RNSC_SRCDIR/../shared/vectors/randomx, else
 * the source tree's ../shared/vectors/randomx. A missing vector file is a failure, not a skip.
 * Exit status: the number of failed tests (CUnit's basic runner alone would return 0).
 */
#include <CUnit/Basic.h>
#include <fenv.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>
#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

#include "rx_internal.h"
#include "rx_jit.h"
#include "rx_json.h"

#ifndef RNSC_SRCDIR
#define RNSC_SRCDIR "."
#endif

static char vec_dir[PATH_MAX];
/* Caches for the two keys the vectors use: [key][0] portable, [key][1] with native items. */
static rx_cache *caches[2][2];
static const char *const keys[2] = {"test key 000", "test key 001"};

typedef struct impl {
	const char *name;
	unsigned flags;
} impl;

static const impl impls[] = {
	{"interpreter/aes-ni", 0},
	{"interpreter/soft-aes", RX_FLAG_SOFT_AES},
	{"jit/aes-ni", RX_FLAG_JIT},
	{"jit/soft-aes", RX_FLAG_JIT | RX_FLAG_SOFT_AES},
	/* The default JIT maps its code pages writable and executable; this keeps the W^X path
	 * (an mprotect pair per program) under the same vectors. */
	{"jit-secure/aes-ni", RX_FLAG_JIT | RX_FLAG_SECURE_JIT},
};
#define N_IMPLS (sizeof(impls) / sizeof(impls[0]))

static int impl_ok(const impl *im)
{
	unsigned cpu = rx_cpu_features();
	if ((im->flags & RX_FLAG_JIT) && !(cpu & RX_CPU_JIT))
		return 0;
	if (!(im->flags & RX_FLAG_SOFT_AES) && !(cpu & RX_CPU_AES))
		return 0;
	return 1;
}

static rx_json *load(const char *name)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/%s", vec_dir, name);
	rx_json *j = rx_json_load(path);
	if (!j)
		fprintf(stderr, "cannot load vector file %s\n", path);
	return j;
}

static void hexstr(char *out, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
}

static int key_index(const char *key)
{
	for (int i = 0; i < 2; i++)
		if (key && !strcmp(key, keys[i]))
			return i;
	return -1;
}

static const rx_cache *cache_for(int key, unsigned vm_flags)
{
	return caches[key][(vm_flags & RX_FLAG_JIT) ? 1 : 0];
}

/* ---- constants, reciprocal, AES ---- */

static void test_constants(void)
{
	uint8_t h[128];
	rx_blake2b(h, 64, "RandomX AesGenerator1R keys", 27);
	CU_ASSERT(memcmp(h, rx_aes_gen1r_keys, 64) == 0);
	rx_blake2b(h, 64, "RandomX AesGenerator4R keys 0-3", 31);
	rx_blake2b(h + 64, 64, "RandomX AesGenerator4R keys 4-7", 31);
	CU_ASSERT(memcmp(h, rx_aes_gen4r_keys, 128) == 0);
	rx_blake2b(h, 64, "RandomX AesHash1R state", 23);
	CU_ASSERT(memcmp(h, rx_aes_hash1r_state, 64) == 0);
	rx_blake2b(h, 32, "RandomX AesHash1R xkeys", 23);
	CU_ASSERT(memcmp(h, rx_aes_hash1r_xkeys, 32) == 0);
}

static void test_reciprocal(void)
{
	rx_json *j = load("reciprocal.json");
	CU_ASSERT_PTR_NOT_NULL_FATAL(j);
	const rx_json *v = rx_json_get(j, "vectors");
	CU_ASSERT_FATAL(v && v->n > 0);
	for (size_t i = 0; i < v->n; i++) {
		uint32_t d = (uint32_t)rx_json_u64(rx_json_get(v->items[i], "divisor"));
		uint64_t want = rx_json_hex_u64(rx_json_get(v->items[i], "expected_hex"));
		CU_ASSERT_EQUAL(rx_reciprocal(d), want);
		CU_ASSERT_EQUAL(rx_json_u64(rx_json_get(v->items[i], "expected")), want);
	}
	rx_json_free(j);
}

static void check_aes_gen(const rx_aes_impl *aes)
{
	rx_json *j = load("aes-generator.json");
	CU_ASSERT_PTR_NOT_NULL_FATAL(j);
	const rx_json *v = rx_json_at(rx_json_get(j, "vectors"), 0);
	uint8_t state[64], want[32], out[64];
	CU_ASSERT_FATAL(rx_json_hex(rx_json_get(v, "state_hex"), state, 64) == 64);
	CU_ASSERT_FATAL(rx_json_hex(rx_json_get(v, "expected_prefix_hex"), want, 32) == 32);
	aes->fill1r(state, out, 64);
	CU_ASSERT(memcmp(out, want, 32) == 0);
	/* The output also becomes the generator state. */
	CU_ASSERT(memcmp(out, state, 64) == 0);
	rx_json_free(j);
}

static void test_aes_generator_soft(void)
{
	check_aes_gen(&rx_aes_soft);
}

static void test_aes_generator_hw(void)
{
	const rx_aes_impl *hw = rx_aes_hw();
	if (!hw) {
		printf("(no AES-NI: skipped) ");
		return;
	}
	check_aes_gen(hw);
}

/* The software rounds must match AES-NI bit for bit on arbitrary data. */
static void test_aes_soft_equals_hw(void)
{
	const rx_aes_impl *hw = rx_aes_hw();
	if (!hw) {
		printf("(no AES-NI: skipped) ");
		return;
	}
	static uint8_t buf[4096], o1[4096], o2[4096];
	uint8_t s1[64], s2[64], k[64], h1[64], h2[64];
	rx_blake2b(s1, 64, "rnsc aes equivalence", 20);
	for (size_t i = 0; i < sizeof(buf); i += 64)
		rx_blake2b(buf + i, 64, s1, 64), s1[0]++;
	/* 64 blocks, keys from disjoint parts of buf: all within its 4 KiB. */
	for (int i = 0; i < 64; i++) {
		memcpy(s1, buf + 16 * i, 16);
		memcpy(s2, s1, 16);
		hw->enc_round(s1, buf + 2048 + 16 * i);
		rx_aes_soft.enc_round(s2, buf + 2048 + 16 * i);
		CU_ASSERT(memcmp(s1, s2, 16) == 0);
		hw->dec_round(s1, buf + 1024 + 16 * i);
		rx_aes_soft.dec_round(s2, buf + 1024 + 16 * i);
		CU_ASSERT(memcmp(s1, s2, 16) == 0);
	}
	memcpy(s1, buf, 64);
	memcpy(s2, buf, 64);
	hw->fill1r(s1, o1, sizeof(o1));
	rx_aes_soft.fill1r(s2, o2, sizeof(o2));
	CU_ASSERT(memcmp(o1, o2, sizeof(o1)) == 0 && memcmp(s1, s2, 64) == 0);
	hw->fill4r(buf + 64, o1, sizeof(o1));
	rx_aes_soft.fill4r(buf + 64, o2, sizeof(o2));
	CU_ASSERT(memcmp(o1, o2, sizeof(o1)) == 0);
	hw->hash1r(buf, sizeof(buf), h1);
	rx_aes_soft.hash1r(buf, sizeof(buf), h2);
	CU_ASSERT(memcmp(h1, h2, 64) == 0);
	memcpy(s1, buf + 128, 64);
	memcpy(s2, buf + 128, 64);
	memcpy(k, buf + 256, 64);
	hw->mix_fe(s1, k);
	rx_aes_soft.mix_fe(s2, k);
	CU_ASSERT(memcmp(s1, s2, 64) == 0);
}

/* ---- SuperscalarHash, cache, dataset ---- */

static void test_superscalar(void)
{
	rx_json *j = load("superscalar.json");
	CU_ASSERT_PTR_NOT_NULL_FATAL(j);
	uint8_t key[64];
	int kl = rx_json_hex(rx_json_get(j, "key_hex"), key, sizeof(key));
	const rx_json *hs = rx_json_get(j, "program_hashes");
	CU_ASSERT_FATAL(kl > 0 && hs && hs->n == 10);
	rx_blake2_gen gen;
	rx_blake2_gen_init(&gen, key, (size_t)kl, 0);
	static rx_ss_program prog;
	static uint8_t ser[8 * RX_SUPERSCALAR_MAX_SIZE];
	for (size_t i = 0; i < hs->n; i++) {
		uint8_t want[32], got[32];
		rx_ss_generate(&prog, &gen);
		for (uint32_t k = 0; k < prog.size; k++) {
			ser[8 * k] = prog.ins[k].opcode;
			ser[8 * k + 1] = prog.ins[k].dst;
			ser[8 * k + 2] = prog.ins[k].src;
			ser[8 * k + 3] = prog.ins[k].mod;
			rx_store32(ser + 8 * k + 4, prog.ins[k].imm32);
		}
		rx_blake2b(got, 32, ser, 8 * (size_t)prog.size);
		CU_ASSERT(rx_json_hex(hs->items[i], want, 32) == 32);
		if (memcmp(got, want, 32) != 0) {
			char hx[65];
			hexstr(hx, got, 32);
			fprintf(stderr, "\n  superscalar program %zu: got %s\n", i, hx);
			CU_FAIL("superscalar program hash");
		}
	}
	rx_json_free(j);
}

static void test_cache_words(void)
{
	rx_json *j = load("cache-dataset.json");
	CU_ASSERT_PTR_NOT_NULL_FATAL(j);
	int k = key_index(rx_json_str(rx_json_get(j, "key")));
	CU_ASSERT_FATAL(k >= 0);
	const rx_json *cw = rx_json_get(j, "cache_u64");
	CU_ASSERT_FATAL(cw && cw->n > 0);
	for (size_t i = 0; i < cw->n; i++) {
		uint64_t idx = rx_json_u64(rx_json_get(cw->items[i], "index"));
		uint64_t want = rx_json_hex_u64(rx_json_get(cw->items[i], "expected_hex"));
		CU_ASSERT_FATAL(idx < RX_CACHE_SIZE / 8);
		for (int c = 0; c < 2; c++)
			if (caches[k][c])
				CU_ASSERT_EQUAL(rx_load64(caches[k][c]->mem + 8 * idx), want);
	}
	rx_json_free(j);
}

static void test_dataset_items(void)
{
	rx_json *j = load("cache-dataset.json");
	CU_ASSERT_PTR_NOT_NULL_FATAL(j);
	int k = key_index(rx_json_str(rx_json_get(j, "key")));
	CU_ASSERT_FATAL(k >= 0);
	const rx_json *it = rx_json_get(j, "dataset_item_u64_0");
	CU_ASSERT_FATAL(it && it->n > 0);
	for (size_t i = 0; i < it->n; i++) {
		uint64_t item = rx_json_u64(rx_json_get(it->items[i], "item"));
		uint64_t want = rx_json_hex_u64(rx_json_get(it->items[i], "expected_hex"));
		uint64_t out[8], out2[8];
		rx_dataset_item_portable(caches[k][0], item, out);
		CU_ASSERT_EQUAL(out[0], want);
		if (caches[k][1]) {
			/* Native (JIT) items must agree with the portable executor in all 64 bytes. */
			rx_dataset_item(caches[k][1], item, out2);
			CU_ASSERT_EQUAL(out2[0], want);
			CU_ASSERT(memcmp(out, out2, 64) == 0);
		}
	}
	rx_json_free(j);
}

/* ---- single instructions (spec chapter 5) through the interpreter's own code path ---- */

static int rounding_of(const char *r)
{
	if (!r || !strcmp(r, "nearest"))
		return 0;
	if (!strcmp(r, "down"))
		return 1;
	if (!strcmp(r, "up"))
		return 2;
	return 3;
}

static int class_of(const char *op)
{
	for (int c = 0; c < RX_I_COUNT; c++)
		if (!strcmp(rx_instr_names[c], op))
			return c;
	return -1;
}

static void put_instr(uint8_t *w, int cls, unsigned dst, unsigned src, unsigned mod, uint32_t imm)
{
	w[0] = rx_class_first_opcode(cls);
	w[1] = (uint8_t)dst;
	w[2] = (uint8_t)src;
	w[3] = (uint8_t)mod;
	rx_store32(w + 4, imm);
}

static uint64_t dbits(double d)
{
	uint64_t u;
	memcpy(&u, &d, 8);
	return u;
}

static double bitsd(uint64_t u)
{
	double d;
	memcpy(&d, &u, 8);
	return d;
}

static uint8_t *test_scratchpad(void)
{
	static uint8_t *sp;
	if (!sp)
		sp = calloc(1, RX_SCRATCHPAD_L3);
	return sp;
}

/* Run n instruction words once over st: through the interpreter (jit = 0) or through code
 * generated by the x86-64 JIT from the same words (jit = 1). */
static int run_words(int jit, const uint8_t *w, unsigned n, rx_interp_state *st)
{
	rx_bc bc[8];
	if (!jit) {
		rx_interp_compile(bc, w, n);
		rx_set_fprc(st->fprc);
		rx_interp_execute(st, bc, n);
		return 0;
	}
	rx_jit *j = NULL;
	if (rx_jit_new(&j, st->flags) != 0)
		return -1;
	rx_jit_ctx ctx;
	memset(&ctx, 0, sizeof(ctx));
	memcpy(ctx.spill_r, st->r, sizeof(ctx.spill_r));
	for (int i = 0; i < 8; i++) {
		memcpy(ctx.spill_x[i], &st->fr[i][0], 8);
		memcpy(ctx.spill_x[i] + 8, &st->fr[i][1], 8);
	}
	for (int i = 0; i < 4; i++) {
		memcpy(&ctx.a[2 * i], &st->fr[RX_FREG_A(i)][0], 8);
		memcpy(&ctx.a[2 * i + 1], &st->fr[RX_FREG_A(i)][1], 8);
	}
	ctx.scal_mask[0] = ctx.scal_mask[1] = RX_SCAL_MASK;
	ctx.mant_mask[0] = ctx.mant_mask[1] = RX_DYN_MANTISSA_MASK;
	ctx.e_mask[0] = st->e_mask[0];
	ctx.e_mask[1] = st->e_mask[1];
	ctx.scratchpad = st->scratchpad;
	fenv_t env;
	fegetenv(&env);
	rx_set_fprc(0);
#if defined(__x86_64__)
	ctx.mxcsr_base = _mm_getcsr() & ~0x6000u;
#endif
	ctx.mxcsr_out = ctx.mxcsr_base | (st->fprc << 13);
	int rc = rx_jit_compile_body(j, w, n);
	if (rc == 0)
		rx_jit_run(j, &ctx);
	fesetenv(&env);
	rx_jit_del(j);
	memcpy(st->r, ctx.spill_r, sizeof(ctx.spill_r));
	for (int i = 0; i < 8; i++) {
		memcpy(&st->fr[i][0], ctx.spill_x[i], 8);
		memcpy(&st->fr[i][1], ctx.spill_x[i] + 8, 8);
	}
	st->fprc = (ctx.mxcsr_out >> 13) & 3;
	return rc;
}

static int n_engines(void)
{
	return (rx_cpu_features() & RX_CPU_JIT) ? 2 : 1;
}

static const char *engine_name(int jit)
{
	return jit ? "jit" : "interpreter";
}

static void test_instr_integer(void)
{
	rx_json *j = load("instructions.json");
	CU_ASSERT_PTR_NOT_NULL_FATAL(j);
	const rx_json *v = rx_json_get(j, "integer");
	CU_ASSERT_FATAL(v && v->n > 0);
	for (int eng = 0; eng < n_engines(); eng++)
		for (size_t i = 0; i < v->n; i++) {
			const rx_json *t = v->items[i];
			const char *name = rx_json_str(rx_json_get(t, "name"));
			int cls = class_of(rx_json_str(rx_json_get(t, "op")));
			CU_ASSERT_FATAL(cls >= 0);
			const rx_json *jimm = rx_json_get(t, "imm");
			const rx_json *jsrc = rx_json_get(t, "src");
			const rx_json *jshift = rx_json_get(t, "shift");
			int src_is_imm = rx_json_get(t, "src_is_imm") &&
					 rx_json_get(t, "src_is_imm")->boolean;
			uint64_t imm = jimm ? rx_json_hex_u64(jimm) : 0;
			uint64_t srcv = jsrc ? rx_json_hex_u64(jsrc) : 0;
			/* IADD_RS adds its immediate only with r5 as destination. */
			unsigned dst = (cls == RX_I_IADD_RS && imm) ? 5 : 0;
			unsigned src = src_is_imm ? dst : 1;
			unsigned mod = jshift ? (unsigned)rx_json_u64(jshift) << 2 : 0;
			uint32_t imm32 = src_is_imm ? (uint32_t)srcv : (uint32_t)imm;
			uint8_t w[8];
			rx_interp_state st;
			memset(&st, 0, sizeof(st));
			st.scratchpad = test_scratchpad();
			st.r[dst] = rx_json_hex_u64(rx_json_get(t, "dst"));
			if (!src_is_imm)
				st.r[src] = srcv;
			put_instr(w, cls, dst, src, mod, imm32);
			CU_ASSERT_EQUAL_FATAL(run_words(eng, w, 1, &st), 0);
			uint64_t want = rx_json_hex_u64(rx_json_get(t, "expected_dst"));
			if (st.r[dst] != want) {
				fprintf(stderr, "\n  %s [%s]: got %016llx want %016llx\n", name,
					engine_name(eng), (unsigned long long)st.r[dst],
					(unsigned long long)want);
				CU_FAIL("integer instruction");
			}
			if (rx_json_get(t, "expected_src"))
				CU_ASSERT_EQUAL(st.r[src],
						rx_json_hex_u64(rx_json_get(t, "expected_src")));
		}
	rx_json_free(j);
}

static void test_instr_float(void)
{
	rx_json *j = load("instructions.json");
	CU_ASSERT_PTR_NOT_NULL_FATAL(j);
	const rx_json *v = rx_json_get(j, "float");
	CU_ASSERT_FATAL(v && v->n > 0);
	for (int eng = 0; eng < n_engines(); eng++)
		for (size_t i = 0; i < v->n; i++) {
			const rx_json *t = v->items[i];
			const char *name = rx_json_str(rx_json_get(t, "name"));
			int cls = class_of(rx_json_str(rx_json_get(t, "op")));
			CU_ASSERT_FATAL(cls >= 0);
			const rx_json *jdst = rx_json_get(t, "dst"), *jsrc = rx_json_get(t, "src");
			const rx_json *jmem = rx_json_get(t, "mem_u64"),
				      *jem = rx_json_get(t, "e_mask");
			const rx_json *jwant = rx_json_get(t, "expected_dst");
			rx_interp_state st;
			memset(&st, 0, sizeof(st));
			st.scratchpad = test_scratchpad();
			/* Group F destinations for add/sub/scale/swap, group E for mul/div/sqrt. */
			int is_e = cls == RX_I_FMUL_R || cls == RX_I_FDIV_M || cls == RX_I_FSQRT_R;
			int dreg = is_e ? RX_FREG_E(0) : RX_FREG_F(0);
			for (int h = 0; h < 2; h++) {
				st.fr[dreg][h] =
					bitsd(rx_json_hex_u64(rx_json_at(jdst, (size_t)h)));
				if (jsrc)
					st.fr[RX_FREG_A(0)][h] =
						bitsd(rx_json_hex_u64(rx_json_at(jsrc, (size_t)h)));
				if (jem)
					st.e_mask[h] = rx_json_hex_u64(rx_json_at(jem, (size_t)h));
			}
			/* Memory operands: r1 = 0 plus imm 0, L1 (mod.mem = 1), so the address is 0. */
			if (jmem)
				rx_store64(st.scratchpad, rx_json_hex_u64(jmem));
			uint8_t w[8];
			/* dst 0: f0 or e0; source a0 for register forms, r1 for memory forms. */
			put_instr(w, cls, 0, jmem ? 1 : 0, 1, 0);
			st.fprc = (unsigned)rounding_of(rx_json_str(rx_json_get(t, "rounding")));
			fenv_t env;
			fegetenv(&env);
			CU_ASSERT_EQUAL_FATAL(run_words(eng, w, 1, &st), 0);
			fesetenv(&env);
			uint8_t bytes[16], wantb[16];
			for (int h = 0; h < 2; h++) {
				uint64_t got = dbits(st.fr[dreg][h]);
				uint64_t want = rx_json_hex_u64(rx_json_at(jwant, (size_t)h));
				rx_store64(bytes + 8 * h, got);
				if (got != want) {
					fprintf(stderr,
						"\n  %s [%s] half %d: got %016llx want %016llx\n",
						name, engine_name(eng), h, (unsigned long long)got,
						(unsigned long long)want);
					CU_FAIL("float instruction");
				}
			}
			CU_ASSERT(rx_json_hex(rx_json_get(t, "expected_bytes_hex"), wantb, 16) ==
				  16);
			CU_ASSERT(memcmp(bytes, wantb, 16) == 0);
		}
	rx_json_free(j);
}

static void test_instr_control(void)
{
	rx_json *j = load("instructions.json");
	CU_ASSERT_PTR_NOT_NULL_FATAL(j);
	const rx_json *v = rx_json_get(j, "control");
	CU_ASSERT_FATAL(v && v->n > 0);
	int seen = 0;
	for (size_t i = 0; i < v->n; i++) {
		const rx_json *t = v->items[i];
		const char *op = rx_json_str(rx_json_get(t, "op"));
		uint8_t w[16];
		rx_bc bc[2];
		if (!strcmp(op, "CBRANCH") && rx_json_get(t, "imm32")) {
			put_instr(w, RX_I_CBRANCH, 0, 0,
				  (unsigned)rx_json_u64(rx_json_get(t, "mod")),
				  (uint32_t)rx_json_u64(rx_json_get(t, "imm32")));
			rx_interp_compile(bc, w, 1);
			CU_ASSERT_EQUAL(bc[0].imm,
					rx_json_hex_u64(rx_json_get(t, "expected_cimm")));
			CU_ASSERT_EQUAL(bc[0].mask,
					rx_json_hex_u64(rx_json_get(t, "expected_mask")));
			CU_ASSERT_EQUAL(bc[0].target, -1);
			seen++;
		} else if (!strcmp(op, "CBRANCH")) {
			/* Program: [r0 += r1 (=0), marking r0 modified] [CBRANCH r0]. A taken branch
			 * returns to the CBRANCH, which then adds cimm a second time and falls through
			 * (bit b-1 of cimm is clear, so two jumps in a row are impossible). */
			uint64_t cimm = rx_json_hex_u64(rx_json_get(t, "cimm"));
			uint64_t dst = rx_json_hex_u64(rx_json_get(t, "dst"));
			/* Recover mod.cond and imm32 from the vector's cimm/mask. */
			uint32_t mask = (uint32_t)rx_json_hex_u64(rx_json_get(t, "mask"));
			unsigned b = (unsigned)__builtin_ctz(mask);
			uint32_t imm32 = (uint32_t)cimm & ~(1u << b);
			/* bit b-1 was cleared by the decoder; the imm32 bit there does not matter. */
			put_instr(w, RX_I_IADD_RS, 0, 1, 0, 0);
			put_instr(w + 8, RX_I_CBRANCH, 0, 0, (b - RX_JUMP_OFFSET) << 4, imm32);
			rx_interp_compile(bc, w, 2);
			CU_ASSERT_EQUAL(bc[1].imm, cimm);
			CU_ASSERT_EQUAL(bc[1].mask, mask);
			CU_ASSERT_EQUAL(bc[1].target, 0);
			for (int eng = 0; eng < n_engines(); eng++) {
				rx_interp_state st;
				memset(&st, 0, sizeof(st));
				st.scratchpad = test_scratchpad();
				st.r[0] = dst;
				CU_ASSERT_EQUAL_FATAL(run_words(eng, w, 2, &st), 0);
				int taken = st.r[0] != dst + cimm;
				CU_ASSERT_EQUAL(taken, rx_json_get(t, "expected_taken")->boolean);
				if (taken)
					CU_ASSERT_EQUAL(st.r[0], dst + 2 * cimm);
			}
			seen++;
		} else if (!strcmp(op, "CFROUND")) {
			put_instr(w, RX_I_CFROUND, 0, 0, 0,
				  (uint32_t)rx_json_u64(rx_json_get(t, "imm32")));
			rx_interp_compile(bc, w, 1);
			CU_ASSERT_EQUAL(bc[0].imm,
					rx_json_u64(rx_json_get(t, "expected_rotation")));
			seen++;
		}
	}
	CU_ASSERT_EQUAL(seen, (int)v->n);
	rx_json_free(j);
}

/* The v2 CFROUND rule is not covered by the upstream KATs: check both rules directly. */
static void test_cfround_rule(void)
{
	static const struct {
		uint64_t src;
		unsigned v1, v2;
	} cases[] = {
		{0x2, 2, 2},  /* bits 2-5 zero: both versions apply mode 2 */
		{0x7, 3, 0},  /* bit 2 set: v2 keeps the old mode */
		{0x41, 1, 1}, /* bit 6 is outside 2-5: v2 applies */
		{0x3d, 1, 0}, /* bits 2-5 all set */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (int ver = 0; ver < 4; ver++) {
			const int eng = ver / 2;
			if (eng >= n_engines())
				break;
			uint8_t w[8];
			rx_interp_state st;
			memset(&st, 0, sizeof(st));
			st.scratchpad = test_scratchpad();
			st.flags = (ver & 1) ? RX_FLAG_V2 : 0;
			st.fprc = 0;
			/* Rotate right by 8: the value sits 8 bits up in the register. */
			st.r[3] = cases[i].src << 8;
			put_instr(w, RX_I_CFROUND, 0, 3, 0, 8);
			fenv_t env;
			fegetenv(&env);
			CU_ASSERT_EQUAL_FATAL(run_words(eng, w, 1, &st), 0);
			fesetenv(&env);
			CU_ASSERT_EQUAL(st.fprc, (ver & 1) ? cases[i].v2 : cases[i].v1);
		}
	}
}

/* ---- hashes and commitments ---- */

static void check_hash_file(const char *file, unsigned version_flag)
{
	rx_json *j = load(file);
	CU_ASSERT_PTR_NOT_NULL_FATAL(j);
	const rx_json *v = rx_json_get(j, "vectors");
	CU_ASSERT_FATAL(v && v->n > 0);
	for (size_t m = 0; m < N_IMPLS; m++) {
		if (!impl_ok(&impls[m])) {
			printf("(%s unavailable) ", impls[m].name);
			continue;
		}
		rx_vm *vm[2] = {NULL, NULL};
		for (int k = 0; k < 2; k++) {
			int rc = rx_vm_new(&vm[k], impls[m].flags | version_flag,
					   cache_for(k, impls[m].flags), NULL);
			CU_ASSERT_EQUAL_FATAL(rc, 0);
		}
		for (size_t i = 0; i < v->n; i++) {
			const rx_json *t = v->items[i];
			int k = key_index(rx_json_str(rx_json_get(t, "key")));
			CU_ASSERT_FATAL(k >= 0);
			uint8_t in[256], want[32], got[32];
			int il = rx_json_hex(rx_json_get(t, "input_hex"), in, sizeof(in));
			CU_ASSERT_FATAL(il >= 0);
			CU_ASSERT_FATAL(rx_json_hex(rx_json_get(t, "expected_hex"), want, 32) ==
					32);
			CU_ASSERT_EQUAL_FATAL(rx_hash(vm[k], in, (size_t)il, got), 0);
			if (memcmp(got, want, 32) != 0) {
				char hx[65];
				hexstr(hx, got, 32);
				fprintf(stderr, "\n  %s %s [%s]: got %s\n", file,
					rx_json_str(rx_json_get(t, "name")), impls[m].name, hx);
				CU_FAIL("hash mismatch");
			}
		}
		rx_vm_del(vm[0]);
		rx_vm_del(vm[1]);
	}
	rx_json_free(j);
}

static void test_hash_v1(void)
{
	check_hash_file("hashes-v1.json", 0);
}

static void test_hash_v2(void)
{
	check_hash_file("hashes-v2.json", RX_FLAG_V2);
}

static void test_commitment(void)
{
	rx_json *j = load("commitment.json");
	CU_ASSERT_PTR_NOT_NULL_FATAL(j);
	const rx_json *v = rx_json_get(j, "vectors");
	CU_ASSERT_FATAL(v && v->n > 0);
	for (size_t i = 0; i < v->n; i++) {
		const rx_json *t = v->items[i];
		unsigned ver = (unsigned)rx_json_u64(rx_json_get(t, "version"));
		int k = key_index(rx_json_str(rx_json_get(t, "key")));
		CU_ASSERT_FATAL(k >= 0 && (ver == 1 || ver == 2));
		uint8_t in[256], h[32], want[32], got[32], com[32];
		int il = rx_json_hex(rx_json_get(t, "input_hex"), in, sizeof(in));
		CU_ASSERT_FATAL(il >= 0);
		CU_ASSERT_FATAL(rx_json_hex(rx_json_get(t, "hash_hex"), h, 32) == 32);
		CU_ASSERT_FATAL(rx_json_hex(rx_json_get(t, "expected_hex"), want, 32) == 32);
		/* The commitment from the vector's hash, and from a hash we compute ourselves. */
		CU_ASSERT_EQUAL(rx_commitment(com, in, (size_t)il, h), 0);
		CU_ASSERT(memcmp(com, want, 32) == 0);
		unsigned flags = rx_default_flags() | (ver == 2 ? RX_FLAG_V2 : 0);
		rx_vm *vm = NULL;
		CU_ASSERT_EQUAL_FATAL(rx_vm_new(&vm, flags, cache_for(k, flags), NULL), 0);
		CU_ASSERT_EQUAL(rx_hash(vm, in, (size_t)il, got), 0);
		CU_ASSERT(memcmp(got, h, 32) == 0);
		rx_vm_del(vm);
	}
	rx_json_free(j);
}

/* Full-memory mode's two ways of fetching dataset items ahead (the JIT's speculative load and
 * its prefetchnta) and the interpreter must give the same hashes. The 2 GiB dataset is mapped
 * but never written, so every item reads as zeros: this checks that the fetch sequences leave
 * the VM's state alone, cheaply; rx_full_test checks the upstream vectors on a real dataset
 * both ways (make check-full). */
static void test_full_fetch_paths(void)
{
	rx_dataset *ds = NULL;
	if (rx_dataset_new(&ds, RX_FLAG_NO_HUGE_PAGES) != 0) {
		CU_FAIL("cannot map the 2 GiB dataset (address space)");
		return;
	}
	const unsigned base = rx_default_flags() | RX_FLAG_FULL_MEM | RX_FLAG_NO_HUGE_PAGES;
	for (int ver = 1; ver <= 2; ver++) {
		const unsigned vf = ver == 2 ? RX_FLAG_V2 : 0;
		const unsigned variants[3] = {(base & ~(unsigned)RX_FLAG_JIT) | vf, base | vf,
					      base | vf | RX_FLAG_PREFETCH_NTA};
		const int n_var = (base & RX_FLAG_JIT) ? 3 : 1;
		uint8_t got[3][3][32];
		for (int k = 0; k < n_var; k++) {
			rx_vm *vm = NULL;
			CU_ASSERT_EQUAL_FATAL(rx_vm_new(&vm, variants[k], NULL, ds), 0);
			if (k == 1 && rx_jit_spec_load_usable())
				CU_ASSERT_FALSE(rx_vm_flags(vm) & RX_FLAG_PREFETCH_NTA);
			if (k == 2)
				CU_ASSERT_TRUE(rx_vm_flags(vm) & RX_FLAG_PREFETCH_NTA);
			for (int i = 0; i < 3; i++) {
				uint8_t in[68];
				memset(in, 0x41 + i, sizeof in);
				CU_ASSERT_EQUAL(rx_hash(vm, in, sizeof in, got[k][i]), 0);
			}
			rx_vm_del(vm);
		}
		for (int k = 1; k < n_var; k++)
			for (int i = 0; i < 3; i++)
				if (memcmp(got[k][i], got[0][i], 32) != 0) {
					fprintf(stderr,
						"\n  v%d input %d: %s differs from the interpreter\n",
						ver, i,
						k == 1 ? "JIT (speculative load)"
						       : "JIT (prefetchnta)");
					CU_FAIL("full-mode hash mismatch");
				}
	}
	rx_dataset_del(ds);
}

static void test_api_errors(void)
{
	rx_vm *vm = (rx_vm *)1;
	rx_cache *c = NULL;
	CU_ASSERT_EQUAL(rx_vm_new(&vm, RX_FLAG_FULL_MEM, caches[0][0], NULL), RNSC_ERR_INVAL);
	CU_ASSERT_PTR_NULL(vm);
	CU_ASSERT_EQUAL(rx_vm_new(&vm, 0, NULL, NULL), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rx_vm_new(NULL, 0, caches[0][0], NULL), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rx_cache_new(&c, RX_FLAG_NO_HUGE_PAGES), 0);
	CU_ASSERT_EQUAL(rx_cache_pages(c), RX_PAGES_NORMAL);
	/* A cache that was never filled cannot serve a VM or a dataset. */
	CU_ASSERT_EQUAL(rx_vm_new(&vm, 0, c, NULL), RNSC_ERR_STATE);
	rx_dataset *ds = NULL;
	/* The 2 GiB mapping is only reserved, never touched here. */
	if (rx_dataset_new(&ds, RX_FLAG_NO_HUGE_PAGES) == 0) {
		CU_ASSERT_EQUAL(rx_dataset_init_range(ds, c, 0, 1), RNSC_ERR_STATE);
		CU_ASSERT_EQUAL(rx_dataset_init_range(ds, caches[0][0], rx_dataset_items(), 1),
				RNSC_ERR_INVAL);
		CU_ASSERT_EQUAL(rx_dataset_init(ds, c, 1), RNSC_ERR_STATE);
		rx_dataset_del(ds);
	}
	rx_cache_del(c);
	CU_ASSERT_EQUAL(rx_dataset_init_range(NULL, caches[0][0], 0, 1), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rx_hash(NULL, NULL, 0, NULL), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rx_dataset_items() * 64, rx_dataset_size());
	CU_ASSERT_STRING_EQUAL(rx_pages_name(RX_PAGES_THP), "thp");
}

/* ---- setup ---- */

static int suite_init(void)
{
	const char *d = getenv("RX_VECTOR_DIR");
	const char *src = getenv("RNSC_SRCDIR");
	if (d && *d)
		snprintf(vec_dir, sizeof(vec_dir), "%s", d);
	else
		snprintf(vec_dir, sizeof(vec_dir), "%s/../shared/vectors/randomx",
			 src && *src ? src : RNSC_SRCDIR);
	if (sodium_init() < 0)
		return -1;
	int jit = (rx_cpu_features() & RX_CPU_JIT) != 0;
	for (int k = 0; k < 2; k++) {
		for (int n = 0; n < 1 + jit; n++) {
			struct timespec t0, t1;
			clock_gettime(CLOCK_MONOTONIC, &t0);
			if (rx_cache_new(&caches[k][n], n ? RX_FLAG_JIT : 0) != 0)
				return -1;
			if (n == 1) {
				/* Argon2d is identical: reuse the portable cache's memory, then compile. */
				if (rx_cache_init_from(caches[k][1], caches[k][0]) != 0)
					return -1;
			} else if (rx_cache_init(caches[k][n], (const uint8_t *)keys[k],
						 strlen(keys[k])) != 0) {
				return -1;
			}
			clock_gettime(CLOCK_MONOTONIC, &t1);
			fprintf(stderr, "cache '%s'%s ready in %.2f s (%s pages)\n", keys[k],
				n ? " (jit)" : "",
				(double)(t1.tv_sec - t0.tv_sec) +
					(double)(t1.tv_nsec - t0.tv_nsec) * 1e-9,
				rx_pages_name(rx_cache_pages(caches[k][n])));
		}
	}
	return 0;
}

static int suite_clean(void)
{
	for (int k = 0; k < 2; k++)
		for (int n = 0; n < 2; n++)
			rx_cache_del(caches[k][n]), caches[k][n] = NULL;
	return 0;
}

int main(void)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("randomx_kat", suite_init, suite_clean);
	if (!s)
		return 1;
	const struct {
		const char *name;
		CU_TestFunc fn;
	} tests[] = {
		{"constants", test_constants},
		{"reciprocal", test_reciprocal},
		{"aes_generator_1r_soft", test_aes_generator_soft},
		{"aes_generator_1r_aesni", test_aes_generator_hw},
		{"aes_soft_equals_aesni", test_aes_soft_equals_hw},
		{"superscalar_programs", test_superscalar},
		{"cache_words", test_cache_words},
		{"dataset_items", test_dataset_items},
		{"instructions_integer", test_instr_integer},
		{"instructions_float", test_instr_float},
		{"instructions_control", test_instr_control},
		{"cfround_v1_v2_rule", test_cfround_rule},
		{"hashes_v1_light", test_hash_v1},
		{"hashes_v2_light", test_hash_v2},
		{"commitment", test_commitment},
		{"full_mode_fetch_paths", test_full_fetch_paths},
		{"api_errors", test_api_errors},
	};
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		if (!CU_add_test(s, tests[i].name, tests[i].fn))
			return 1;
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	unsigned failed = CU_get_number_of_tests_failed() + CU_get_number_of_suites_failed();
	CU_cleanup_registry();
	return (int)(failed > 255 ? 255 : failed);
}
