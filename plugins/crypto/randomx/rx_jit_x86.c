/* SPDX-License-Identifier: MIT */
/*
 * x86-64 JIT for RandomX: the SuperscalarHash programs of a cache (dataset items) and the VM
 * programs (the 2048-iteration loop). The VM translator takes the interpreter's decoded byte
 * code as its input, so both implementations share one reading of the instruction semantics.
 *
 * Register use in VM code:
 *   r8-r15 = r0-r7; xmm0-3 = f0-f3; xmm4-7 = e0-e3; xmm8-11 = a0-a3; xmm12 = FSCAL mask;
 *   xmm13/xmm14 = group E mantissa/exponent masks; xmm15 = memory operand.
 *   rsi = scratchpad, rdi = rx_jit_ctx, rbx = mx:ma (high:low), ebp = iteration counter;
 *   rax, rcx, rdx are scratch. The stack holds the context pointer and spAddr0/spAddr1.
 * VM code pages are mapped read-write-execute once and programs are emitted without system
 * calls (two mprotect calls per program cost a measurable share of a hash); RX_FLAG_SECURE_JIT,
 * or a system that refuses such pages, keeps them W^X: read-write while emitting, switched to
 * read-execute to run. SuperscalarHash code is written once per cache and is always W^X.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "rx_jit.h"

#if defined(__x86_64__)

/* The emitter helpers run for every byte of 16 programs per hash: keep them inlined. */
#define EMIT static inline __attribute__((always_inline))

#define VM_CODE_SIZE ((size_t)64 * 1024)
#define SS_CODE_SIZE ((size_t)64 * 1024)
/* The emitter writes without per-byte checks (it runs for every byte of 8 programs per hash):
 * the buffer's usable capacity stops this far short of the mapping, and room() is checked
 * between pieces that emit less than this (one instruction, one fixed block). */
#define CODE_SLACK ((size_t)1024)

enum { RAX = 0, RCX = 1, RDX = 2, RBX = 3, RSP = 4, RBP = 5, RSI = 6, RDI = 7 };
#define VR(i) (8 + (i)) /* x86 register holding VM register ri */

/* Stack frame of the VM function (rsp-relative, 16-byte aligned for helper calls). */
#define FRAME 40
#define S_CTX 0   /* rx_jit_ctx pointer */
#define S_P0 8    /* scratchpad + spAddr0 of the running iteration */
#define S_P1 16   /* scratchpad + spAddr1 of the running iteration */
#define S_TMP 24  /* MXCSR image for ldmxcsr */
#define S_MXB 28  /* caller's MXCSR with the rounding field cleared */
#define S_NEXT 32 /* v2 speculative fetch: dataset offset of the next iteration's item */

struct rx_jit {
	uint8_t *code;
	size_t cap;
	size_t len;
	unsigned flags;
	int rwx; /* mapped writable and executable: no protection changes */
	int writable;
	int overflow;
	uint32_t ins_off[RX_PROGRAM_MAX_SIZE + 1];
	rx_bc bc[RX_PROGRAM_MAX_SIZE];
};

/* A tiny emitter over a caller-owned buffer of cap + CODE_SLACK bytes. */
typedef struct asm_buf {
	uint8_t *p;
	size_t len, cap;
	int overflow;
} asm_buf;

/* Called between emitted pieces: false (and overflow set) once len passed cap. */
EMIT int room(asm_buf *a)
{
	if (a->len > a->cap)
		a->overflow = 1;
	return !a->overflow;
}

EMIT void b1(asm_buf *a, unsigned v)
{
	a->p[a->len++] = (uint8_t)v;
}

EMIT void d32(asm_buf *a, uint32_t v)
{
	rx_store32(a->p + a->len, v);
	a->len += 4;
}

EMIT void d64(asm_buf *a, uint64_t v)
{
	rx_store64(a->p + a->len, v);
	a->len += 8;
}

EMIT void rex(asm_buf *a, int w, int r, int x, int b)
{
	unsigned v = 0x40u | (w ? 8u : 0u) | ((r & 8) ? 4u : 0u) | ((x & 8) ? 2u : 0u) |
		     ((b & 8) ? 1u : 0u);
	if (v != 0x40)
		b1(a, v);
}

EMIT void opcode(asm_buf *a, const uint8_t *op, int n)
{
	for (int i = 0; i < n; i++)
		b1(a, op[i]);
}

/* Register-direct form: [prefix] [REX] opcode modrm(11, reg, rm). */
EMIT void ins_r(asm_buf *a, unsigned prefix, int w, const uint8_t *op, int n, int reg, int rm)
{
	if (prefix)
		b1(a, prefix);
	rex(a, w, reg, 0, rm);
	opcode(a, op, n);
	b1(a, 0xC0u | ((unsigned)(reg & 7) << 3) | (unsigned)(rm & 7));
}

/* Memory form [base + index * 2^scale + disp] (index < 0: none). */
EMIT void ins_m(asm_buf *a, unsigned prefix, int w, const uint8_t *op, int n, int reg, int base,
		int index, int scale, int32_t disp)
{
	if (prefix)
		b1(a, prefix);
	rex(a, w, reg, index < 0 ? 0 : index, base);
	opcode(a, op, n);
	unsigned mod;
	if (disp == 0 && (base & 7) != 5)
		mod = 0;
	else if (disp >= -128 && disp <= 127)
		mod = 1;
	else
		mod = 2;
	if (index >= 0 || (base & 7) == 4) {
		b1(a, (mod << 6) | ((unsigned)(reg & 7) << 3) | 4u);
		unsigned idx = index >= 0 ? (unsigned)(index & 7) : 4u; /* 100: no index */
		b1(a, ((unsigned)scale << 6) | (idx << 3) | (unsigned)(base & 7));
	} else {
		b1(a, (mod << 6) | ((unsigned)(reg & 7) << 3) | (unsigned)(base & 7));
	}
	if (mod == 1)
		b1(a, (unsigned)(disp & 0xff));
	else if (mod == 2)
		d32(a, (uint32_t)disp);
}

#define OP(...) (const uint8_t[]){__VA_ARGS__}, (int)sizeof((const uint8_t[]){__VA_ARGS__})

EMIT void push(asm_buf *a, int r)
{
	rex(a, 0, 0, 0, r);
	b1(a, 0x50u + (unsigned)(r & 7));
}

EMIT void pop(asm_buf *a, int r)
{
	rex(a, 0, 0, 0, r);
	b1(a, 0x58u + (unsigned)(r & 7));
}

EMIT void mov_imm64(asm_buf *a, int r, uint64_t v)
{
	rex(a, 1, 0, 0, r);
	b1(a, 0xB8u + (unsigned)(r & 7));
	d64(a, v);
}

static void call_abs(asm_buf *a, const void *fn)
{
	mov_imm64(a, RAX, (uint64_t)(uintptr_t)fn);
	b1(a, 0xFF);
	b1(a, 0xD0); /* call rax */
}

/*
 * v2 dataset fetch, first half: a load that runs only speculatively. In full mode every
 * iteration's dataset line is a TLB miss, and a prefetch instruction holds retirement until
 * its address is translated; under nested paging (a KVM or Firecracker guest) that walk
 * outlasts what the reorder buffer covers. Measured on the 2-vCPU guest this was written on,
 * with the item's read pointed at one fixed line, a prefetchnta of the real address still cost
 * v2 as much as the real read: the walk, not the memory latency, was the stall.
 * This sequence starts the walk without anything waiting for it: the call pushes the address
 * of a load, the callee overwrites that return address with the one past the load (through a
 * short multiply chain, so the return resolves late), and the return predictor sends the
 * front end into the load until then. The translation it brings in outlives the squash; the
 * line does not, so rx_jit_compile prefetches it again an iteration later, when the address
 * translates at once (v2 reads it one iteration after that). Architecturally only rax (free
 * here) and the word below rsp change. The address is rdi + rdx. Not used where a CET shadow
 * stack is active (rx_jit_spec_load_usable).
 */
static void spec_load(asm_buf *a)
{
	b1(a, 0xE8); /* call over */
	const size_t call_rel = a->len;
	d32(a, 0);
	const size_t body = a->len;
	ins_m(a, 0, 1, OP(0x8B), RAX, RDI, RDX, 0, 0); /* mov rax, [rdi + rdx] (speculative only) */
	b1(a, 0x0F), b1(a, 0xAE), b1(a, 0xE8);         /* lfence: speculation stops here */
	b1(a, 0xEB);                                   /* jmp body: never reached */
	b1(a, (unsigned)(uint8_t)(int8_t)((int64_t)body - (int64_t)(a->len + 1)));
	rx_store32(a->p + call_rel, (uint32_t)(a->len - (call_rel + 4)));
	/* over: return past the load, the return address ready only after 8 multiplies (about
	 * 24 cycles: shorter windows let fewer walks start, longer ones gained nothing) */
	b1(a, 0x48), b1(a, 0x8D), b1(a, 0x05); /* lea rax, [rip + past] */
	const size_t lea_rel = a->len;
	d32(a, 0);
	for (int i = 0; i < 8; i++)
		ins_r(a, 0, 1, OP(0x6B), RAX, RAX), b1(a, 1); /* imul rax, rax, 1 */
	ins_m(a, 0, 1, OP(0x89), RAX, RSP, -1, 0, 0);         /* mov [rsp], rax */
	b1(a, 0xC3);                                          /* ret */
	rx_store32(a->p + lea_rel, (uint32_t)(a->len - (lea_rel + 4)));
}

/* Pad with the recommended multi-byte NOPs up to a multiple of align bytes (a power of two),
 * so the program loop starts on a fresh fetch block and decodes from its first byte. */
static void align_nops(asm_buf *a, size_t align)
{
	static const uint8_t nops[9][9] = {
		{0x90},
		{0x66, 0x90},
		{0x0F, 0x1F, 0x00},
		{0x0F, 0x1F, 0x40, 0x00},
		{0x0F, 0x1F, 0x44, 0x00, 0x00},
		{0x66, 0x0F, 0x1F, 0x44, 0x00, 0x00},
		{0x0F, 0x1F, 0x80, 0x00, 0x00, 0x00, 0x00},
		{0x0F, 0x1F, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
		{0x66, 0x0F, 0x1F, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
	};
	size_t pad = (align - (a->len & (align - 1))) & (align - 1);
	while (pad) {
		size_t k = pad > 9 ? 9 : pad;
		opcode(a, nops[k - 1], (int)k);
		pad -= k;
	}
}

#define CTX(field) ((int32_t)offsetof(rx_jit_ctx, field))

/* ---- capability ---- */

int rx_jit_available(void)
{
	return 1; /* x86-64 with SSE2; AES-NI is only emitted when the VM uses hardware AES */
}

/* A shadow stack (CET, Linux 6.6+) would fault on the return spec_load redirects: the kernel
 * lists it in x86_Thread_features when this process has one. */
int rx_jit_spec_load_usable(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return 1; /* no /proc: nothing enables a shadow stack without it being listed */
	char line[256];
	int ok = 1;
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, "x86_Thread_features:", 20) == 0 && strstr(line + 20, "shstk"))
			ok = 0;
	}
	fclose(f);
	return ok;
}

static void *code_map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* ---- SuperscalarHash ---- */

static void ss_emit_program(asm_buf *a, const rx_ss_program *p)
{
	for (uint32_t i = 0; i < p->size && room(a); i++) {
		const rx_ss_instr *in = &p->ins[i];
		const int d = VR(in->dst), s = VR(in->src);
		switch (in->opcode) {
		case RX_SS_ISUB_R:
			ins_r(a, 0, 1, OP(0x2B), d, s);
			break;
		case RX_SS_IXOR_R:
			ins_r(a, 0, 1, OP(0x33), d, s);
			break;
		case RX_SS_IADD_RS:
			/* lea d, [d + s * 2^shift]; the generator never picks r5 (r13) as d. */
			ins_m(a, 0, 1, OP(0x8D), d, d, s, (int)p->imm[i], 0);
			break;
		case RX_SS_IMUL_R:
			ins_r(a, 0, 1, OP(0x0F, 0xAF), d, s);
			break;
		case RX_SS_IROR_C:
			ins_r(a, 0, 1, OP(0xC1), 1, d);
			b1(a, (unsigned)p->imm[i]);
			break;
		case RX_SS_IADD_C7:
		case RX_SS_IADD_C8:
		case RX_SS_IADD_C9:
			ins_r(a, 0, 1, OP(0x81), 0, d);
			d32(a, in->imm32);
			break;
		case RX_SS_IXOR_C7:
		case RX_SS_IXOR_C8:
		case RX_SS_IXOR_C9:
			ins_r(a, 0, 1, OP(0x81), 6, d);
			d32(a, in->imm32);
			break;
		case RX_SS_IMULH_R:
		case RX_SS_ISMULH_R:
			ins_r(a, 0, 1, OP(0x8B), RAX, d);
			ins_r(a, 0, 1, OP(0xF7), in->opcode == RX_SS_IMULH_R ? 4 : 5, s);
			ins_r(a, 0, 1, OP(0x8B), d, RDX);
			break;
		case RX_SS_IMUL_RCP:
			mov_imm64(a, RAX, p->imm[i]);
			ins_r(a, 0, 1, OP(0x0F, 0xAF), d, RAX);
			break;
		default:
			break;
		}
	}
}

/* void fn(uint64_t r[8] (rdi), const uint8_t *cache (rsi), uint64_t item (rdx)):
 * r holds the initial registers of the item and receives the item (spec 7.3). */
int rx_ss_jit_compile(rx_cache *c)
{
	uint8_t *code = (uint8_t *)code_map(SS_CODE_SIZE);
	if (!code)
		return RNSC_ERR_NOMEM;
	asm_buf a = {code, 0, SS_CODE_SIZE - CODE_SLACK, 0};
	static const int saved[6] = {RBX, RBP, 12, 13, 14, 15};
	for (int i = 0; i < 6; i++)
		push(&a, saved[i]);
	ins_r(&a, 0, 1, OP(0x8B), RBX, RDX); /* rbx = cache index selector */
	for (int i = 0; i < 8; i++)
		ins_m(&a, 0, 1, OP(0x8B), VR(i), RDI, -1, 0, 8 * i);
	for (int k = 0; k < RX_CACHE_ACCESSES; k++) {
		/* rcx = cache + (selector mod lines) * 64, taken before the program runs. */
		ins_r(&a, 0, 1, OP(0x8B), RCX, RBX);
		ins_r(&a, 0, 0, OP(0x81), 4, RCX);
		d32(&a, (uint32_t)(RX_CACHE_LINES - 1));
		ins_r(&a, 0, 1, OP(0xC1), 4, RCX);
		b1(&a, 6);
		ins_r(&a, 0, 1, OP(0x03), RCX, RSI);
		/* prefetcht2 [rcx]: light mode with a 4 KiB-page cache ran faster with it than with
		 * prefetcht0 or prefetchnta (bench/results/design-notes.md, "light-mode prefetch"). */
		ins_m(&a, 0, 0, OP(0x0F, 0x18), 3, RCX, -1, 0, 0);
		ss_emit_program(&a, &c->prog[k]);
		for (int i = 0; i < 8; i++)
			ins_m(&a, 0, 1, OP(0x33), VR(i), RCX, -1, 0, 8 * i);
		ins_r(&a, 0, 1, OP(0x8B), RBX, VR(c->prog[k].addr_reg));
		if (!room(&a))
			break;
	}
	for (int i = 0; i < 8; i++)
		ins_m(&a, 0, 1, OP(0x89), VR(i), RDI, -1, 0, 8 * i);
	for (int i = 5; i >= 0; i--)
		pop(&a, saved[i]);
	b1(&a, 0xC3);
	if (!room(&a) || mprotect(code, SS_CODE_SIZE, PROT_READ | PROT_EXEC) != 0) {
		munmap(code, SS_CODE_SIZE);
		return a.overflow ? RNSC_ERR_FATAL : RNSC_ERR_SYS;
	}
	c->ss_code = code;
	c->ss_code_len = SS_CODE_SIZE;
	c->ss_fn = (rx_ss_fn)(void *)code;
	return 0;
}

void rx_ss_jit_free(rx_cache *c)
{
	if (c && c->ss_code) {
		munmap(c->ss_code, c->ss_code_len);
		c->ss_code = NULL;
		c->ss_fn = NULL;
	}
}

/* ---- VM ---- */

int rx_jit_new(rx_jit **out, unsigned flags)
{
	rx_jit *j = (rx_jit *)calloc(1, sizeof(*j));
	if (!j)
		return RNSC_ERR_NOMEM;
	j->code = (uint8_t *)code_map(VM_CODE_SIZE);
	if (!j->code) {
		free(j);
		return RNSC_ERR_NOMEM;
	}
	j->cap = VM_CODE_SIZE;
	j->writable = 1;
	j->flags = flags;
	/* Fast path: make the pages executable too, once. Hardened systems (SELinux execmem, PaX)
	 * refuse this; the JIT then stays W^X, which costs speed but not correctness. */
	if (!(flags & RX_FLAG_SECURE_JIT) &&
	    mprotect(j->code, j->cap, PROT_READ | PROT_WRITE | PROT_EXEC) == 0)
		j->rwx = 1;
	*out = j;
	return 0;
}

void rx_jit_del(rx_jit *j)
{
	if (!j)
		return;
	munmap(j->code, j->cap);
	free(j);
}

/* Called from generated code: XOR dataset item (addr / 64), computed from the cache, into the
 * spilled integer registers. */
static void jit_light_read(rx_jit_ctx *ctx, uint64_t addr)
{
	uint64_t item[8];
	rx_dataset_item(ctx->cache, addr / RX_CACHE_LINE, item);
	for (int i = 0; i < 8; i++)
		ctx->spill_r[i] ^= item[i];
}

/* Called from generated code: the v2 F/E mix with software AES on the spilled registers. */
static void jit_soft_mix(rx_jit_ctx *ctx)
{
	ctx->aes->mix_fe(ctx->spill_x[0], ctx->spill_x[4]);
}

static void spill_all(asm_buf *a)
{
	for (int i = 0; i < 8; i++)
		ins_m(a, 0, 1, OP(0x89), VR(i), RDI, -1, 0, CTX(spill_r) + 8 * i);
	for (int i = 0; i < 8; i++)
		ins_m(a, 0x66, 0, OP(0x0F, 0x11), i, RDI, -1, 0, CTX(spill_x) + 16 * i);
}

static void load_consts(asm_buf *a)
{
	for (int i = 0; i < 4; i++)
		ins_m(a, 0x66, 0, OP(0x0F, 0x10), 8 + i, RDI, -1, 0, CTX(a) + 16 * i);
	ins_m(a, 0x66, 0, OP(0x0F, 0x10), 12, RDI, -1, 0, CTX(scal_mask));
	ins_m(a, 0x66, 0, OP(0x0F, 0x10), 13, RDI, -1, 0, CTX(mant_mask));
	ins_m(a, 0x66, 0, OP(0x0F, 0x10), 14, RDI, -1, 0, CTX(e_mask));
}

/* After a helper call: restore rdi, rsi and every VM register. */
static void reload_all(asm_buf *a)
{
	ins_m(a, 0, 1, OP(0x8B), RDI, RSP, -1, 0, S_CTX);
	ins_m(a, 0, 1, OP(0x8B), RSI, RDI, -1, 0, CTX(scratchpad));
	for (int i = 0; i < 8; i++)
		ins_m(a, 0, 1, OP(0x8B), VR(i), RDI, -1, 0, CTX(spill_r) + 8 * i);
	for (int i = 0; i < 8; i++)
		ins_m(a, 0x66, 0, OP(0x0F, 0x10), i, RDI, -1, 0, CTX(spill_x) + 16 * i);
	load_consts(a);
}

static void prologue(asm_buf *a)
{
	static const int saved[6] = {RBX, RBP, 12, 13, 14, 15};
	for (int i = 0; i < 6; i++)
		push(a, saved[i]);
	ins_r(a, 0, 1, OP(0x83), 5, RSP); /* sub rsp, FRAME */
	b1(a, FRAME);
	ins_m(a, 0, 1, OP(0x89), RDI, RSP, -1, 0, S_CTX);
	ins_m(a, 0, 0, OP(0x0F, 0xAE), 2, RDI, -1, 0, CTX(mxcsr_out)); /* ldmxcsr */
	/* CFROUND ors its mode into this copy: no context pointer needed in the loop. */
	ins_m(a, 0, 0, OP(0x8B), RAX, RDI, -1, 0, CTX(mxcsr_base));
	ins_m(a, 0, 0, OP(0x89), RAX, RSP, -1, 0, S_MXB);
	ins_m(a, 0, 1, OP(0x8B), RSI, RDI, -1, 0, CTX(scratchpad));
	load_consts(a);
}

static void epilogue(asm_buf *a)
{
	static const int saved[6] = {RBX, RBP, 12, 13, 14, 15};
	ins_m(a, 0, 1, OP(0x8B), RDI, RSP, -1, 0, S_CTX); /* rdi may point at the dataset */
	spill_all(a);
	ins_m(a, 0, 0, OP(0x0F, 0xAE), 3, RDI, -1, 0, CTX(mxcsr_out)); /* stmxcsr */
	ins_r(a, 0, 1, OP(0x83), 0, RSP);                              /* add rsp, FRAME */
	b1(a, FRAME);
	for (int i = 5; i >= 0; i--)
		pop(a, saved[i]);
	b1(a, 0xC3);
}

/* Memory operand of a byte-code instruction: [rsi + rcx] after computing the masked address
 * into ecx, or [rsi + constant] when the address register is the constant zero. */
EMIT void mem_operand(asm_buf *a, const rx_bc *b, int addr_reg, int *base, int *index,
		      int32_t *disp)
{
	if (addr_reg == 8) {
		*base = RSI, *index = -1, *disp = (int32_t)(uint32_t)(b->imm & b->mask);
		return;
	}
	ins_m(a, 0, 0, OP(0x8D), RCX, VR(addr_reg), -1, 0, (int32_t)(uint32_t)b->imm); /* lea ecx */
	ins_r(a, 0, 0, OP(0x81), 4, RCX);                                              /* and ecx */
	d32(a, b->mask);
	*base = RSI, *index = RCX, *disp = 0;
}

/* eax = spAddr0, edx = spAddr1 of the next iteration: r[readReg0] ^ r[readReg1], low and
 * high halves masked to L3 lines (spAddr0/1 are zero between iterations); both lines are
 * prefetched so they arrive while this iteration stores. */
static void next_sp_addr(asm_buf *a, const rx_prog_config *cfg)
{
	ins_r(a, 0, 1, OP(0x8B), RAX, VR(cfg->read_reg[0]));
	ins_r(a, 0, 1, OP(0x33), RAX, VR(cfg->read_reg[1]));
	ins_r(a, 0, 1, OP(0x8B), RDX, RAX);
	ins_r(a, 0, 0, OP(0x81), 4, RAX);
	d32(a, RX_L3_MASK64);
	ins_m(a, 0, 0, OP(0x0F, 0x18), 1, RSI, RAX, 0, 0); /* prefetcht0 */
	ins_r(a, 0, 1, OP(0xC1), 5, RDX);                  /* shr rdx, 32 */
	b1(a, 32);
	ins_r(a, 0, 0, OP(0x81), 4, RDX);
	d32(a, RX_L3_MASK64);
	ins_m(a, 0, 0, OP(0x0F, 0x18), 1, RSI, RDX, 0, 0);
}

static int fits_i32(uint64_t v)
{
	return (uint64_t)(int64_t)(int32_t)(uint32_t)v == v;
}

static void emit_body(rx_jit *j, asm_buf *a, unsigned n)
{
	const int v2 = (j->flags & RX_FLAG_V2) != 0;
	for (unsigned i = 0; i < n && room(a); i++) {
		const rx_bc *b = &j->bc[i];
		const int D = VR(b->dst & 7), S = VR(b->src & 7);
		int base, index;
		int32_t disp;
		j->ins_off[i] = (uint32_t)a->len;
		switch (b->op) {
		case RX_BC_NOP:
			break;
		case RX_BC_IADD_RS:
			ins_m(a, 0, 1, OP(0x8D), D, D, S, b->shift, (int32_t)(uint32_t)b->imm);
			break;
		case RX_BC_IADD_M:
		case RX_BC_ISUB_M:
		case RX_BC_IXOR_M:
			mem_operand(a, b, b->src, &base, &index, &disp);
			ins_m(a, 0, 1,
			      OP(b->op == RX_BC_IADD_M   ? 0x03
				 : b->op == RX_BC_ISUB_M ? 0x2B
							 : 0x33),
			      D, base, index, 0, disp);
			break;
		case RX_BC_IMUL_M:
			mem_operand(a, b, b->src, &base, &index, &disp);
			ins_m(a, 0, 1, OP(0x0F, 0xAF), D, base, index, 0, disp);
			break;
		case RX_BC_IMULH_M:
		case RX_BC_ISMULH_M:
			mem_operand(a, b, b->src, &base, &index, &disp);
			ins_r(a, 0, 1, OP(0x8B), RAX, D);
			ins_m(a, 0, 1, OP(0xF7), b->op == RX_BC_IMULH_M ? 4 : 5, base, index, 0,
			      disp);
			ins_r(a, 0, 1, OP(0x8B), D, RDX);
			break;
		case RX_BC_IMULH_R:
		case RX_BC_ISMULH_R:
			ins_r(a, 0, 1, OP(0x8B), RAX, D);
			ins_r(a, 0, 1, OP(0xF7), b->op == RX_BC_IMULH_R ? 4 : 5, S);
			ins_r(a, 0, 1, OP(0x8B), D, RDX);
			break;
		case RX_BC_ISUB_R:
			ins_r(a, 0, 1, OP(0x2B), D, S);
			break;
		case RX_BC_IXOR_R:
			ins_r(a, 0, 1, OP(0x33), D, S);
			break;
		case RX_BC_IMUL_R:
			ins_r(a, 0, 1, OP(0x0F, 0xAF), D, S);
			break;
		case RX_BC_ISUB_I:
			ins_r(a, 0, 1, OP(0x81), 5, D);
			d32(a, (uint32_t)b->imm);
			break;
		case RX_BC_IXOR_I:
			ins_r(a, 0, 1, OP(0x81), 6, D);
			d32(a, (uint32_t)b->imm);
			break;
		case RX_BC_IMUL_I:
			if (fits_i32(b->imm)) {
				ins_r(a, 0, 1, OP(0x69), D, D);
				d32(a, (uint32_t)b->imm);
			} else {
				mov_imm64(a, RAX, b->imm);
				ins_r(a, 0, 1, OP(0x0F, 0xAF), D, RAX);
			}
			break;
		case RX_BC_INEG_R:
			ins_r(a, 0, 1, OP(0xF7), 3, D);
			break;
		case RX_BC_IROR_R:
		case RX_BC_IROL_R:
			ins_r(a, 0, 1, OP(0x8B), RCX, S);
			ins_r(a, 0, 1, OP(0xD3), b->op == RX_BC_IROR_R ? 1 : 0, D);
			break;
		case RX_BC_IROR_I:
		case RX_BC_IROL_I:
			ins_r(a, 0, 1, OP(0xC1), b->op == RX_BC_IROR_I ? 1 : 0, D);
			b1(a, (unsigned)(b->imm & 63));
			break;
		case RX_BC_ISWAP_R:
			ins_r(a, 0, 1, OP(0x87), S, D);
			break;
		case RX_BC_FSWAP_R:
			ins_r(a, 0x66, 0, OP(0x0F, 0xC6), b->dst, b->dst);
			b1(a, 1);
			break;
		case RX_BC_FADD_R:
			ins_r(a, 0x66, 0, OP(0x0F, 0x58), b->dst, b->src);
			break;
		case RX_BC_FSUB_R:
			ins_r(a, 0x66, 0, OP(0x0F, 0x5C), b->dst, b->src);
			break;
		case RX_BC_FMUL_R:
			ins_r(a, 0x66, 0, OP(0x0F, 0x59), b->dst, b->src);
			break;
		case RX_BC_FADD_M:
		case RX_BC_FSUB_M:
			mem_operand(a, b, b->src, &base, &index, &disp);
			ins_m(a, 0xF3, 0, OP(0x0F, 0xE6), 15, base, index, 0, disp); /* cvtdq2pd */
			ins_r(a, 0x66, 0, OP(0x0F, b->op == RX_BC_FADD_M ? 0x58 : 0x5C), b->dst,
			      15);
			break;
		case RX_BC_FSCAL_R:
			ins_r(a, 0, 0, OP(0x0F, 0x57), b->dst, 12);
			break;
		case RX_BC_FDIV_M:
			mem_operand(a, b, b->src, &base, &index, &disp);
			ins_m(a, 0xF3, 0, OP(0x0F, 0xE6), 15, base, index, 0, disp);
			ins_r(a, 0, 0, OP(0x0F, 0x54), 15, 13); /* andps */
			ins_r(a, 0, 0, OP(0x0F, 0x56), 15, 14); /* orps */
			ins_r(a, 0x66, 0, OP(0x0F, 0x5E), b->dst, 15);
			break;
		case RX_BC_FSQRT_R:
			ins_r(a, 0x66, 0, OP(0x0F, 0x51), b->dst, b->dst);
			break;
		case RX_BC_CBRANCH: {
			/* cimm only changes bits below 24 of a sign-extended imm32: still an imm32. */
			ins_r(a, 0, 1, OP(0x81), 0, D);
			d32(a, (uint32_t)b->imm);
			ins_r(a, 0, 1, OP(0xF7), 0, D); /* test D, mask */
			d32(a, b->mask);
			b1(a, 0x0F);
			b1(a, 0x84); /* jz: backwards only, so the target offset is known */
			uint32_t target = j->ins_off[b->target + 1];
			d32(a, (uint32_t)((int64_t)target - (int64_t)(a->len + 4)));
			break;
		}
		case RX_BC_CFROUND: {
			/* One rotate brings bits imm, imm+1 of the source to MXCSR's rounding field
			 * (bits 13-14): rol by 13 - imm is ror by imm followed by shl 13. */
			ins_r(a, 0, 1, OP(0x8B), RAX, S);
			const unsigned rot = (13u - (unsigned)(b->imm & 63)) & 63u;
			if (rot) {
				ins_r(a, 0, 1, OP(0xC1), 0, RAX); /* rol rax, rot */
				b1(a, rot);
			}
			size_t patch = 0;
			if (v2) {
				b1(a, 0xA9); /* test eax, 60 << 13: bits 2-5 after the ror */
				d32(a, 60u << 13);
				b1(a, 0x75); /* jnz skip */
				patch = a->len;
				b1(a, 0);
			}
			b1(a, 0x25); /* and eax, 0x6000 */
			d32(a, 0x6000);
			ins_m(a, 0, 0, OP(0x0B), RAX, RSP, -1, 0, S_MXB);
			ins_m(a, 0, 0, OP(0x89), RAX, RSP, -1, 0, S_TMP);
			ins_m(a, 0, 0, OP(0x0F, 0xAE), 2, RSP, -1, 0, S_TMP); /* ldmxcsr */
			if (v2)
				a->p[patch] = (uint8_t)(a->len - patch - 1);
			break;
		}
		case RX_BC_ISTORE:
			ins_m(a, 0, 0, OP(0x8D), RCX, D, -1, 0, (int32_t)(uint32_t)b->imm);
			ins_r(a, 0, 0, OP(0x81), 4, RCX);
			d32(a, b->mask);
			ins_m(a, 0, 1, OP(0x89), S, RSI, RCX, 0, 0);
			break;
		default:
			break;
		}
	}
	j->ins_off[n] = (uint32_t)a->len;
}

static int begin(rx_jit *j)
{
	if (!j->rwx && !j->writable) {
		if (mprotect(j->code, j->cap, PROT_READ | PROT_WRITE) != 0)
			return RNSC_ERR_SYS;
		j->writable = 1;
	}
	return 0;
}

static int finish(rx_jit *j, asm_buf *a)
{
	if (!room(a))
		return RNSC_ERR_FATAL;
	j->len = a->len;
	if (j->rwx)
		return 0;
	if (mprotect(j->code, j->cap, PROT_READ | PROT_EXEC) != 0)
		return RNSC_ERR_SYS;
	j->writable = 0;
	return 0;
}

int rx_jit_compile(rx_jit *j, const uint8_t *program, unsigned n, const rx_prog_config *cfg)
{
	int rc = begin(j);
	if (rc < 0)
		return rc;
	const int v2 = (j->flags & RX_FLAG_V2) != 0;
	const int full = (j->flags & RX_FLAG_FULL_MEM) != 0;
	const int soft = (j->flags & RX_FLAG_SOFT_AES) != 0;
	/* v2 reads an item two iterations after its address is known: time for a speculative
	 * walk and a prefetch (spec_load). v1 reads it after one: a prefetch instruction. */
	const int spec = v2 && full && !(j->flags & RX_FLAG_PREFETCH_NTA);
	asm_buf a = {j->code, 0, j->cap - CODE_SLACK, 0};
	rx_interp_compile(j->bc, program, n);

	prologue(&a);
	for (int i = 0; i < 8; i++)
		ins_r(&a, 0, 1, OP(0x33), VR(i), VR(i)); /* r = 0 */
	/* rbx = mx << 32 | ma */
	ins_m(&a, 0, 0, OP(0x8B), RBX, RDI, -1, 0, CTX(ma));
	ins_m(&a, 0, 0, OP(0x8B), RAX, RDI, -1, 0, CTX(mx));
	ins_r(&a, 0, 1, OP(0xC1), 4, RAX);
	b1(&a, 32);
	ins_r(&a, 0, 1, OP(0x0B), RBX, RAX);
	if (full) {
		/* rdi = dataset from here on (the context stays on the stack); fetch the first two
		 * items the loop reads (ma, then mx) right away. */
		ins_m(&a, 0, 1, OP(0x8B), RDI, RDI, -1, 0, CTX(dataset));
		ins_r(&a, 0, 0, OP(0x8B), RAX, RBX);
		ins_r(&a, 0, 0, OP(0x81), 4, RAX);
		d32(&a, RX_DATASET_LINE_MASK);
		ins_m(&a, 0, 0, OP(0x0F, 0x18), 0, RDI, RAX, 0, 0); /* prefetchnta */
		ins_r(&a, 0, 1, OP(0x8B), RAX, RBX);
		ins_r(&a, 0, 1, OP(0xC1), 5, RAX);
		b1(&a, 32);
		ins_r(&a, 0, 0, OP(0x81), 4, RAX);
		d32(&a, RX_DATASET_LINE_MASK);
		ins_m(&a, 0, 0, OP(0x0F, 0x18), 0, RDI, RAX, 0, 0);
		if (spec) /* iteration 0's late prefetch: mx, read at the end of iteration 1 */
			ins_m(&a, 0, 1, OP(0x89), RAX, RSP, -1, 0, S_NEXT);
	}
	/* First iteration: spAddr0 = mx, spAddr1 = ma (r is zero, so the mix changes nothing).
	 * Later iterations get eax/edx from the end of the previous one. */
	ins_r(&a, 0, 1, OP(0x8B), RAX, RBX);
	ins_r(&a, 0, 1, OP(0xC1), 5, RAX); /* shr rax, 32 */
	b1(&a, 32);
	ins_r(&a, 0, 0, OP(0x81), 4, RAX);
	d32(&a, RX_L3_MASK64);
	ins_r(&a, 0, 0, OP(0x8B), RDX, RBX);
	ins_r(&a, 0, 0, OP(0x81), 4, RDX);
	d32(&a, RX_L3_MASK64);
	b1(&a, 0xBD); /* mov ebp, iterations */
	d32(&a, RX_PROGRAM_ITERATIONS);

	align_nops(&a, 64);
	const size_t loop_top = a.len;
	/* Loads: r ^= 64 bytes at spAddr0; f, e from 64 bytes at spAddr1. The line addresses go
	 * to the stack for the stores at the end. */
	ins_m(&a, 0, 1, OP(0x8D), RCX, RSI, RAX, 0, 0); /* lea rcx, [rsi + rax] */
	ins_m(&a, 0, 1, OP(0x89), RCX, RSP, -1, 0, S_P0);
	for (int i = 0; i < 8; i++)
		ins_m(&a, 0, 1, OP(0x33), VR(i), RCX, -1, 0, 8 * i);
	ins_m(&a, 0, 1, OP(0x8D), RCX, RSI, RDX, 0, 0);
	ins_m(&a, 0, 1, OP(0x89), RCX, RSP, -1, 0, S_P1);
	for (int i = 0; i < 8; i++)
		ins_m(&a, 0xF3, 0, OP(0x0F, 0xE6), i, RCX, -1, 0, 8 * i);
	for (int i = 4; i < 8; i++)
		ins_r(&a, 0, 0, OP(0x0F, 0x54), i, 13);
	for (int i = 4; i < 8; i++)
		ins_r(&a, 0, 0, OP(0x0F, 0x56), i, 14);

	emit_body(j, &a, n);
	if (spec) {
		/* Second half of the fetch: the line of the item read at the end of the next
		 * iteration, whose walk spec_load started an iteration ago. */
		ins_m(&a, 0, 1, OP(0x8B), RAX, RSP, -1, 0, S_NEXT);
		ins_m(&a, 0, 0, OP(0x0F, 0x18), 0, RDI, RAX, 0, 0); /* prefetchnta */
	}
	if (!room(&a))
		return finish(j, &a);

	/* Dataset: the item at ma is read; mp (mx in v1, ma in v2) ^= low 32 bits of
	 * r[readReg2] ^ r[readReg3] and is prefetched; ma and mx swap. */
	ins_r(&a, 0, 0, OP(0x8B), RCX, RBX); /* ecx = ma */
	ins_r(&a, 0, 0, OP(0x81), 4, RCX);
	d32(&a, RX_DATASET_LINE_MASK);
	if (full)
		ins_m(&a, 0, 1, OP(0x33), VR(0), RDI, RCX, 0, 0);
	ins_r(&a, 0, 0, OP(0x8B), RAX, VR(cfg->read_reg[2]));
	ins_r(&a, 0, 0, OP(0x33), RAX, VR(cfg->read_reg[3])); /* 32-bit: zero-extends */
	if (v2) {
		ins_r(&a, 0, 1, OP(0x33), RBX, RAX); /* ma ^= mix */
		ins_r(&a, 0, 0, OP(0x8B), RDX, RBX);
		ins_r(&a, 0, 1, OP(0xC1), 1, RBX); /* ror rbx, 32: swap */
		b1(&a, 32);
	} else {
		ins_r(&a, 0, 1, OP(0xC1), 1, RBX); /* swap: mx in the low half */
		b1(&a, 32);
		ins_r(&a, 0, 1, OP(0x33), RBX, RAX); /* mx ^= mix */
		ins_r(&a, 0, 0, OP(0x8B), RDX, RBX);
	}
	if (full) {
		ins_r(&a, 0, 0, OP(0x81), 4, RDX);
		d32(&a, RX_DATASET_LINE_MASK);
		if (spec) {
			ins_m(&a, 0, 1, OP(0x89), RDX, RSP, -1, 0, S_NEXT);
			spec_load(&a);
		} else {
			ins_m(&a, 0, 0, OP(0x0F, 0x18), 0, RDI, RDX, 0, 0); /* prefetchnta */
		}
		for (int i = 1; i < 8; i++)
			ins_m(&a, 0, 1, OP(0x33), VR(i), RDI, RCX, 0, 8 * i);
	} else {
		spill_all(&a);
		ins_m(&a, 0, 1, OP(0x8B), RSI, RDI, -1, 0, CTX(dataset_offset));
		ins_r(&a, 0, 1, OP(0x03), RSI, RCX);
		call_abs(&a, (const void *)jit_light_read);
		reload_all(&a);
	}

	if (!room(&a))
		return finish(j, &a);
	/* Next iteration's spAddr0/1 from the final registers, prefetched before the stores. */
	const int helper_mix = v2 && soft;
	if (!helper_mix)
		next_sp_addr(&a, cfg);
	ins_m(&a, 0, 1, OP(0x8B), RCX, RSP, -1, 0, S_P1);
	for (int i = 0; i < 8; i++)
		ins_m(&a, 0, 1, OP(0x89), VR(i), RCX, -1, 0, 8 * i);
	if (!v2) {
		for (int i = 0; i < 4; i++)
			ins_r(&a, 0x66, 0, OP(0x0F, 0x57), i, 4 + i); /* xorpd */
	} else if (!soft) {
		for (int k = 4; k < 8; k++) {
			ins_r(&a, 0x66, 0, OP(0x0F, 0x38, 0xDC), 0, k); /* aesenc */
			ins_r(&a, 0x66, 0, OP(0x0F, 0x38, 0xDE), 1, k); /* aesdec */
			ins_r(&a, 0x66, 0, OP(0x0F, 0x38, 0xDC), 2, k);
			ins_r(&a, 0x66, 0, OP(0x0F, 0x38, 0xDE), 3, k);
		}
	} else {
		ins_m(&a, 0, 1, OP(0x8B), RDI, RSP, -1, 0, S_CTX);
		spill_all(&a);
		call_abs(&a, (const void *)jit_soft_mix);
		reload_all(&a);
		if (full)
			ins_m(&a, 0, 1, OP(0x8B), RDI, RDI, -1, 0, CTX(dataset));
		next_sp_addr(&a, cfg);
	}
	if (!room(&a))
		return finish(j, &a);
	ins_m(&a, 0, 1, OP(0x8B), RCX, RSP, -1, 0, S_P0);
	for (int i = 0; i < 4; i++)
		ins_m(&a, 0x66, 0, OP(0x0F, 0x29), i, RCX, -1, 0, 16 * i); /* movapd */
	ins_r(&a, 0, 0, OP(0xFF), 1, RBP);                                 /* dec ebp */
	b1(&a, 0x0F);
	b1(&a, 0x85); /* jnz loop_top */
	d32(&a, (uint32_t)((int64_t)loop_top - (int64_t)(a.len + 4)));
	epilogue(&a);
	return finish(j, &a);
}

int rx_jit_compile_body(rx_jit *j, const uint8_t *program, unsigned n)
{
	int rc = begin(j);
	if (rc < 0)
		return rc;
	asm_buf a = {j->code, 0, j->cap - CODE_SLACK, 0};
	rx_interp_compile(j->bc, program, n);
	prologue(&a);
	for (int i = 0; i < 8; i++)
		ins_m(&a, 0, 1, OP(0x8B), VR(i), RDI, -1, 0, CTX(spill_r) + 8 * i);
	for (int i = 0; i < 8; i++)
		ins_m(&a, 0x66, 0, OP(0x0F, 0x10), i, RDI, -1, 0, CTX(spill_x) + 16 * i);
	emit_body(j, &a, n);
	epilogue(&a);
	return finish(j, &a);
}

void rx_jit_run(rx_jit *j, rx_jit_ctx *ctx)
{
	void (*fn)(rx_jit_ctx *) = (void (*)(rx_jit_ctx *))(void *)j->code;
	fn(ctx);
}

#else /* not x86-64: no JIT */

int rx_jit_available(void)
{
	return 0;
}

int rx_jit_spec_load_usable(void)
{
	return 0;
}

int rx_ss_jit_compile(rx_cache *c)
{
	(void)c;
	return RNSC_ERR_NOPRIM;
}

void rx_ss_jit_free(rx_cache *c)
{
	(void)c;
}

int rx_jit_new(rx_jit **out, unsigned flags)
{
	(void)flags;
	*out = NULL;
	return RNSC_ERR_NOPRIM;
}

void rx_jit_del(rx_jit *j)
{
	(void)j;
}

int rx_jit_compile(rx_jit *j, const uint8_t *program, unsigned n, const rx_prog_config *cfg)
{
	(void)j, (void)program, (void)n, (void)cfg;
	return RNSC_ERR_NOPRIM;
}

int rx_jit_compile_body(rx_jit *j, const uint8_t *program, unsigned n)
{
	(void)j, (void)program, (void)n;
	return RNSC_ERR_NOPRIM;
}

void rx_jit_run(rx_jit *j, rx_jit_ctx *ctx)
{
	(void)j, (void)ctx;
}

#endif
