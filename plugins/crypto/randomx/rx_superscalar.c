/* SPDX-License-Identifier: MIT */
/*
 * SuperscalarHash (spec chapter 6): program generation by simulating the reference CPU, and a
 * portable executor.
 *
 * The generator must reproduce upstream's programs exactly, so it follows the simulation rules
 * literally, including their corner cases: a macro-op's schedule is first probed and only
 * committed once operands are found; a stall moves the decode cycle forward and is not undone
 * when the instruction is thrown away; an aborted slot leaves no current instruction; a
 * multi-op instruction (IMULH_R, IMUL_RCP) may continue in the next decode group.
 */
#include <stdbool.h>

#include "rx_internal.h"

enum { P0 = 1, P1 = 2, P5 = 4, P01 = P0 | P1, P05 = P0 | P5, P015 = P0 | P1 | P5 };

#define CYCLE_MAP_SIZE (RX_SUPERSCALAR_LATENCY + 4)
#define LOOK_FORWARD_CYCLES 4
#define MAX_THROWAWAY_COUNT 256
#define REG_NEEDS_DISPLACEMENT 5 /* r5 cannot be the destination of IADD_RS (x86 lea) */

/* A macro-op of the reference CPU (spec table 6.2.1). uop1 == 0: eliminated (mov r,r). */
typedef struct ss_mop {
	uint8_t size, latency, uop1, uop2;
	bool dependent; /* must wait for the previous macro-op of the same instruction */
} ss_mop;

#define MOP_SUB_RR                                                                                 \
	{                                                                                          \
		3, 1, P015, 0, false                                                               \
	}
#define MOP_XOR_RR                                                                                 \
	{                                                                                          \
		3, 1, P015, 0, false                                                               \
	}
#define MOP_IMUL_R                                                                                 \
	{                                                                                          \
		3, 4, P1, P5, false                                                                \
	}
#define MOP_MUL_R                                                                                  \
	{                                                                                          \
		3, 4, P1, P5, false                                                                \
	}
#define MOP_MOV_RR                                                                                 \
	{                                                                                          \
		3, 0, 0, 0, false                                                                  \
	}
#define MOP_LEA_SIB                                                                                \
	{                                                                                          \
		4, 1, P01, 0, false                                                                \
	}
#define MOP_IMUL_RR                                                                                \
	{                                                                                          \
		4, 3, P1, 0, false                                                                 \
	}
#define MOP_IMUL_RR_DEP                                                                            \
	{                                                                                          \
		4, 3, P1, 0, true                                                                  \
	}
#define MOP_ROR_RI                                                                                 \
	{                                                                                          \
		4, 1, P05, 0, false                                                                \
	}
#define MOP_ADD_RI                                                                                 \
	{                                                                                          \
		7, 1, P015, 0, false                                                               \
	}
#define MOP_XOR_RI                                                                                 \
	{                                                                                          \
		7, 1, P015, 0, false                                                               \
	}
#define MOP_MOV_RI64                                                                               \
	{                                                                                          \
		10, 1, P015, 0, false                                                              \
	}

/* Instruction shapes: which macro-op reads the source, picks the destination, writes it. */
typedef struct ss_info {
	int type;
	int nops;
	ss_mop ops[3];
	int result_op, dst_op, src_op;
} ss_info;

static const ss_info ss_infos[14] = {
	[RX_SS_ISUB_R] = {RX_SS_ISUB_R, 1, {MOP_SUB_RR}, 0, 0, 0},
	[RX_SS_IXOR_R] = {RX_SS_IXOR_R, 1, {MOP_XOR_RR}, 0, 0, 0},
	[RX_SS_IADD_RS] = {RX_SS_IADD_RS, 1, {MOP_LEA_SIB}, 0, 0, 0},
	[RX_SS_IMUL_R] = {RX_SS_IMUL_R, 1, {MOP_IMUL_RR}, 0, 0, 0},
	[RX_SS_IROR_C] = {RX_SS_IROR_C, 1, {MOP_ROR_RI}, 0, 0, -1},
	[RX_SS_IADD_C7] = {RX_SS_IADD_C7, 1, {MOP_ADD_RI}, 0, 0, -1},
	[RX_SS_IXOR_C7] = {RX_SS_IXOR_C7, 1, {MOP_XOR_RI}, 0, 0, -1},
	[RX_SS_IADD_C8] = {RX_SS_IADD_C8, 1, {MOP_ADD_RI}, 0, 0, -1},
	[RX_SS_IXOR_C8] = {RX_SS_IXOR_C8, 1, {MOP_XOR_RI}, 0, 0, -1},
	[RX_SS_IADD_C9] = {RX_SS_IADD_C9, 1, {MOP_ADD_RI}, 0, 0, -1},
	[RX_SS_IXOR_C9] = {RX_SS_IXOR_C9, 1, {MOP_XOR_RI}, 0, 0, -1},
	[RX_SS_IMULH_R] = {RX_SS_IMULH_R, 3, {MOP_MOV_RR, MOP_MUL_R, MOP_MOV_RR}, 1, 0, 1},
	[RX_SS_ISMULH_R] = {RX_SS_ISMULH_R, 3, {MOP_MOV_RR, MOP_IMUL_R, MOP_MOV_RR}, 1, 0, 1},
	[RX_SS_IMUL_RCP] = {RX_SS_IMUL_RCP, 2, {MOP_MOV_RI64, MOP_IMUL_RR_DEP}, 1, 1, -1},
};
/* "No instruction": zero macro-ops, so the next slot always starts a new instruction. */
static const ss_info ss_none = {RX_SS_INVALID, 0, {{0, 0, 0, 0, false}}, 0, 0, -1};

/* Decoder groups (spec table 6.3.1): 16 bytes split into 3 or 4 slots. */
typedef struct ss_decoder {
	int index;
	int n;
	int sizes[4];
} ss_decoder;

static const ss_decoder ss_decoders[6] = {
	{0, 3, {4, 8, 4}}, {1, 4, {7, 3, 3, 3}}, {2, 4, {3, 7, 3, 3}},
	{3, 3, {4, 9, 3}}, {4, 4, {4, 4, 4, 4}}, {5, 3, {3, 3, 10}},
};

typedef struct ss_reg {
	int latency;       /* cycle at which the value is ready */
	int last_op_group; /* group of the last instruction writing it */
	int last_op_par;   /* its source register, -1 for a constant, or a random tag */
} ss_reg;

typedef struct ss_cur {
	const ss_info *info;
	int src, dst;
	int mod;
	uint32_t imm;
	int group;
	int group_par;
	bool can_reuse;        /* destination may equal source (the multiply-high forms) */
	bool group_par_is_src; /* the group parameter is the chosen source register */
} ss_cur;

static bool is_mul(int type)
{
	return type == RX_SS_IMUL_R || type == RX_SS_IMULH_R || type == RX_SS_ISMULH_R ||
	       type == RX_SS_IMUL_RCP;
}

static const ss_decoder *fetch_next(int type, int cycle, int mul_count, rx_blake2_gen *gen)
{
	/* A 128-bit multiply decodes to 2 uops: only 3-3-10 keeps the group within 4 uops. */
	if (type == RX_SS_IMULH_R || type == RX_SS_ISMULH_R)
		return &ss_decoders[5];
	/* Keep the multiplier port saturated. */
	if (mul_count < cycle + 1)
		return &ss_decoders[4];
	/* IMUL_RCP's multiply must start the next group in a 4-byte slot. */
	if (type == RX_SS_IMUL_RCP)
		return (rx_blake2_gen_byte(gen) & 1) ? &ss_decoders[0] : &ss_decoders[3];
	return &ss_decoders[rx_blake2_gen_byte(gen) & 3];
}

static void create(ss_cur *c, const ss_info *info, rx_blake2_gen *gen)
{
	c->info = info;
	c->src = c->dst = -1;
	c->can_reuse = c->group_par_is_src = false;
	switch (info->type) {
	case RX_SS_ISUB_R:
		/* Subtraction counts as addition so "add r,s" cannot follow "sub r,s" trivially. */
		c->mod = 0, c->imm = 0, c->group = RX_SS_IADD_RS, c->group_par_is_src = true;
		break;
	case RX_SS_IXOR_R:
		c->mod = 0, c->imm = 0, c->group = RX_SS_IXOR_R, c->group_par_is_src = true;
		break;
	case RX_SS_IADD_RS:
		c->mod = rx_blake2_gen_byte(gen), c->imm = 0, c->group = RX_SS_IADD_RS;
		c->group_par_is_src = true;
		break;
	case RX_SS_IMUL_R:
		c->mod = 0, c->imm = 0, c->group = RX_SS_IMUL_R, c->group_par_is_src = true;
		break;
	case RX_SS_IROR_C:
		c->mod = 0;
		do
			c->imm = rx_blake2_gen_byte(gen) & 63;
		while (c->imm == 0);
		c->group = RX_SS_IROR_C, c->group_par = -1;
		break;
	case RX_SS_IADD_C7:
	case RX_SS_IADD_C8:
	case RX_SS_IADD_C9:
		c->mod = 0, c->imm = rx_blake2_gen_u32(gen), c->group = RX_SS_IADD_C7,
		c->group_par = -1;
		break;
	case RX_SS_IXOR_C7:
	case RX_SS_IXOR_C8:
	case RX_SS_IXOR_C9:
		c->mod = 0, c->imm = rx_blake2_gen_u32(gen), c->group = RX_SS_IXOR_C7,
		c->group_par = -1;
		break;
	case RX_SS_IMULH_R:
	case RX_SS_ISMULH_R:
		c->can_reuse = true;
		c->mod = 0, c->imm = 0, c->group = info->type;
		c->group_par = (int)rx_blake2_gen_u32(gen);
		break;
	case RX_SS_IMUL_RCP:
		c->mod = 0;
		do
			c->imm = rx_blake2_gen_u32(gen);
		while (rx_is_zero_or_pow2(c->imm));
		c->group = RX_SS_IMUL_RCP, c->group_par = -1;
		break;
	default:
		break;
	}
}

static void create_for_slot(ss_cur *c, rx_blake2_gen *gen, int slot, int decoder, bool is_last)
{
	static const int slot3[2] = {RX_SS_ISUB_R, RX_SS_IXOR_R};
	static const int slot3l[4] = {RX_SS_ISUB_R, RX_SS_IXOR_R, RX_SS_IMULH_R, RX_SS_ISMULH_R};
	static const int slot4[2] = {RX_SS_IROR_C, RX_SS_IADD_RS};
	static const int slot7[2] = {RX_SS_IXOR_C7, RX_SS_IADD_C7};
	static const int slot8[2] = {RX_SS_IXOR_C8, RX_SS_IADD_C8};
	static const int slot9[2] = {RX_SS_IXOR_C9, RX_SS_IADD_C9};
	int type;
	switch (slot) {
	case 3:
		/* Only the last slot of a group may take a 2-uop multiply-high. */
		type = is_last ? slot3l[rx_blake2_gen_byte(gen) & 3]
			       : slot3[rx_blake2_gen_byte(gen) & 1];
		break;
	case 4:
		if (decoder == 4 && !is_last)
			type = RX_SS_IMUL_R;
		else
			type = slot4[rx_blake2_gen_byte(gen) & 1];
		break;
	case 7:
		type = slot7[rx_blake2_gen_byte(gen) & 1];
		break;
	case 8:
		type = slot8[rx_blake2_gen_byte(gen) & 1];
		break;
	case 9:
		type = slot9[rx_blake2_gen_byte(gen) & 1];
		break;
	default: /* 10 */
		type = RX_SS_IMUL_RCP;
		break;
	}
	create(c, &ss_infos[type], gen);
}

static bool select_register(const int *avail, int n, rx_blake2_gen *gen, int *reg)
{
	if (n == 0)
		return false;
	int index = n > 1 ? (int)(rx_blake2_gen_u32(gen) % (uint32_t)n) : 0;
	*reg = avail[index];
	return true;
}

static bool select_destination(ss_cur *c, int cycle, bool allow_chained_mul, const ss_reg regs[8],
			       rx_blake2_gen *gen)
{
	int avail[8], n = 0;
	for (int i = 0; i < 8; i++) {
		if (regs[i].latency > cycle)
			continue;
		if (!c->can_reuse && i == c->src)
			continue;
		if (!allow_chained_mul && c->group == RX_SS_IMUL_R &&
		    regs[i].last_op_group == RX_SS_IMUL_R)
			continue;
		if (regs[i].last_op_group == c->group && regs[i].last_op_par == c->group_par)
			continue;
		if (c->info->type == RX_SS_IADD_RS && i == REG_NEEDS_DISPLACEMENT)
			continue;
		avail[n++] = i;
	}
	return select_register(avail, n, gen, &c->dst);
}

static bool select_source(ss_cur *c, int cycle, const ss_reg regs[8], rx_blake2_gen *gen)
{
	int avail[8], n = 0;
	for (int i = 0; i < 8; i++)
		if (regs[i].latency <= cycle)
			avail[n++] = i;
	/* With two candidates for IADD_RS and one of them r5, r5 must be the source. */
	if (n == 2 && c->info->type == RX_SS_IADD_RS &&
	    (avail[0] == REG_NEEDS_DISPLACEMENT || avail[1] == REG_NEEDS_DISPLACEMENT)) {
		c->group_par = c->src = REG_NEEDS_DISPLACEMENT;
		return true;
	}
	if (select_register(avail, n, gen, &c->src)) {
		if (c->group_par_is_src)
			c->group_par = c->src;
		return true;
	}
	return false;
}

/* Ports are tried P5, then P0, then P1 so any-port uops leave the multiplier free. */
static int schedule_uop(int uop, int busy[CYCLE_MAP_SIZE][3], int cycle, bool commit)
{
	for (; cycle < CYCLE_MAP_SIZE; cycle++) {
		if ((uop & P5) && !busy[cycle][2]) {
			if (commit)
				busy[cycle][2] = uop;
			return cycle;
		}
		if ((uop & P0) && !busy[cycle][0]) {
			if (commit)
				busy[cycle][0] = uop;
			return cycle;
		}
		if ((uop & P1) && !busy[cycle][1]) {
			if (commit)
				busy[cycle][1] = uop;
			return cycle;
		}
	}
	return -1;
}

static int schedule_mop(const ss_mop *m, int busy[CYCLE_MAP_SIZE][3], int cycle, int dep_cycle,
			bool commit)
{
	if (m->dependent && dep_cycle > cycle)
		cycle = dep_cycle;
	if (m->uop1 == 0)
		return cycle; /* eliminated at rename: no port */
	if (m->uop2 == 0)
		return schedule_uop(m->uop1, busy, cycle, commit);
	/* Two uops are placed conservatively: both in the same cycle. */
	for (; cycle < CYCLE_MAP_SIZE; cycle++) {
		int c1 = schedule_uop(m->uop1, busy, cycle, false);
		int c2 = schedule_uop(m->uop2, busy, cycle, false);
		if (c1 >= 0 && c1 == c2) {
			if (commit) {
				schedule_uop(m->uop1, busy, c1, true);
				schedule_uop(m->uop2, busy, c2, true);
			}
			return c1;
		}
	}
	return -1;
}

static void finish_program(rx_ss_program *p)
{
	/* Address register: the longest chain assuming unit latency and unlimited width. */
	int asic[8] = {0};
	for (uint32_t i = 0; i < p->size; i++) {
		const rx_ss_instr *in = &p->ins[i];
		int lat_dst = asic[in->dst] + 1;
		int lat_src = in->dst != in->src ? asic[in->src] + 1 : 0;
		asic[in->dst] = lat_dst > lat_src ? lat_dst : lat_src;
	}
	int max = 0;
	p->addr_reg = 0;
	for (int i = 0; i < 8; i++)
		if (asic[i] > max)
			max = asic[i], p->addr_reg = i;

	for (uint32_t i = 0; i < p->size; i++) {
		const rx_ss_instr *in = &p->ins[i];
		switch (in->opcode) {
		case RX_SS_IROR_C:
			p->imm[i] = in->imm32 & 63;
			break;
		case RX_SS_IADD_C7:
		case RX_SS_IADD_C8:
		case RX_SS_IADD_C9:
		case RX_SS_IXOR_C7:
		case RX_SS_IXOR_C8:
		case RX_SS_IXOR_C9:
			p->imm[i] = rx_sext32(in->imm32);
			break;
		case RX_SS_IMUL_RCP:
			p->imm[i] = rx_reciprocal(in->imm32);
			break;
		case RX_SS_IADD_RS:
			p->imm[i] = (in->mod >> 2) & 3;
			break;
		default:
			p->imm[i] = 0;
			break;
		}
	}
}

void rx_ss_generate(rx_ss_program *prog, rx_blake2_gen *gen)
{
	int busy[CYCLE_MAP_SIZE][3];
	ss_reg regs[8];
	ss_cur cur;
	const ss_decoder *dec;
	int mop_index = 0, cycle = 0, dep_cycle = 0, retire_cycle = 0;
	int program_size = 0, mul_count = 0, throw_away = 0;
	bool ports_saturated = false;

	memset(busy, 0, sizeof(busy));
	memset(&cur, 0, sizeof(cur));
	cur.info = &ss_none;
	cur.src = cur.dst = -1;
	for (int i = 0; i < 8; i++)
		regs[i] = (ss_reg){0, RX_SS_INVALID, -1};

	for (int decode_cycle = 0; decode_cycle < RX_SUPERSCALAR_LATENCY && !ports_saturated &&
				   program_size < RX_SUPERSCALAR_MAX_SIZE;
	     decode_cycle++) {
		dec = fetch_next(cur.info->type, decode_cycle, mul_count, gen);
		int slot = 0;
		while (slot < dec->n) {
			int top_cycle = cycle;
			if (mop_index >= cur.info->nops) {
				if (ports_saturated || program_size >= RX_SUPERSCALAR_MAX_SIZE)
					break;
				create_for_slot(&cur, gen, dec->sizes[slot], dec->index,
						dec->n == slot + 1);
				mop_index = 0;
			}
			const ss_mop *mop = &cur.info->ops[mop_index];
			int sched = schedule_mop(mop, busy, cycle, dep_cycle, false);
			if (sched < 0) {
				ports_saturated = true;
				break;
			}
			if (mop_index == cur.info->src_op) {
				int fwd;
				for (fwd = 0; fwd < LOOK_FORWARD_CYCLES &&
					      !select_source(&cur, sched, regs, gen);
				     fwd++) {
					sched++;
					cycle++;
				}
				if (fwd == LOOK_FORWARD_CYCLES) {
					if (throw_away < MAX_THROWAWAY_COUNT) {
						throw_away++;
						mop_index = cur.info->nops;
						continue;
					}
					cur.info = &ss_none;
					cur.src = cur.dst = -1;
					break;
				}
			}
			if (mop_index == cur.info->dst_op) {
				int fwd;
				for (fwd = 0;
				     fwd < LOOK_FORWARD_CYCLES &&
				     !select_destination(&cur, sched, throw_away > 0, regs, gen);
				     fwd++) {
					sched++;
					cycle++;
				}
				if (fwd == LOOK_FORWARD_CYCLES) {
					if (throw_away < MAX_THROWAWAY_COUNT) {
						throw_away++;
						mop_index = cur.info->nops;
						continue;
					}
					cur.info = &ss_none;
					cur.src = cur.dst = -1;
					break;
				}
			}
			throw_away = 0;
			sched = schedule_mop(mop, busy, sched, sched, true);
			if (sched < 0) {
				ports_saturated = true;
				break;
			}
			dep_cycle = sched + mop->latency;
			if (mop_index == cur.info->result_op) {
				ss_reg *ri = &regs[cur.dst];
				retire_cycle = dep_cycle;
				ri->latency = retire_cycle;
				ri->last_op_group = cur.group;
				ri->last_op_par = cur.group_par;
			}
			slot++;
			mop_index++;
			if (sched >= RX_SUPERSCALAR_LATENCY)
				ports_saturated = true;
			cycle = top_cycle;
			if (mop_index >= cur.info->nops) {
				rx_ss_instr *out = &prog->ins[program_size++];
				out->opcode = (uint8_t)cur.info->type;
				out->dst = (uint8_t)cur.dst;
				out->src = (uint8_t)(cur.src >= 0 ? cur.src : cur.dst);
				out->mod = (uint8_t)cur.mod;
				out->imm32 = cur.imm;
				mul_count += is_mul(cur.info->type);
			}
		}
		cycle++;
	}
	(void)retire_cycle;
	prog->size = (uint32_t)program_size;
	finish_program(prog);
}

void rx_ss_execute(uint64_t r[8], const rx_ss_program *p)
{
	for (uint32_t i = 0; i < p->size; i++) {
		const rx_ss_instr *in = &p->ins[i];
		uint64_t *d = &r[in->dst];
		const uint64_t s = r[in->src];
		switch (in->opcode) {
		case RX_SS_ISUB_R:
			*d -= s;
			break;
		case RX_SS_IXOR_R:
			*d ^= s;
			break;
		case RX_SS_IADD_RS:
			*d += s << p->imm[i];
			break;
		case RX_SS_IMUL_R:
			*d *= s;
			break;
		case RX_SS_IROR_C:
			*d = rx_rotr64(*d, (unsigned)p->imm[i]);
			break;
		case RX_SS_IADD_C7:
		case RX_SS_IADD_C8:
		case RX_SS_IADD_C9:
			*d += p->imm[i];
			break;
		case RX_SS_IXOR_C7:
		case RX_SS_IXOR_C8:
		case RX_SS_IXOR_C9:
			*d ^= p->imm[i];
			break;
		case RX_SS_IMULH_R:
			*d = rx_mulh(*d, s);
			break;
		case RX_SS_ISMULH_R:
			*d = rx_smulh(*d, s);
			break;
		case RX_SS_IMUL_RCP:
			*d *= p->imm[i];
			break;
		default:
			break;
		}
	}
}
