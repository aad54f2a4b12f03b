/*
 * cfi_program.c - the interpreters cfi.c runs: an FDE's CFA program
 * (its CIE's initial instructions, then its own) into rows, and DWARF
 * expressions over registers and memory (cfi_int.h).
 */
#include "binary/cfi_int.h"

#include <errno.h>
#include <libdwarf/dwarf.h>
#include <string.h>

#include "common/grow.h"

/* LEB128, sign-extended when @sign; -EINVAL when it runs off the end. */
static int read_leb(const uint8_t **p, const uint8_t *end, bool sign,
		    uint64_t *v)
{
	uint64_t r = 0;
	unsigned shift = 0;

	while (*p < end && shift < 64) {
		uint8_t b = *(*p)++;

		r |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (sign && shift < 64 && (b & 0x40))
				r |= ~(uint64_t)0 << shift;
			*v = r;
			return 0;
		}
	}
	return -EINVAL;
}

static int read_uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	return read_leb(p, end, false, v);
}

static int read_sleb(const uint8_t **p, const uint8_t *end, int64_t *v)
{
	return read_leb(p, end, true, (uint64_t *)v);
}

static int read_fixed(const uint8_t **p, const uint8_t *end, unsigned size,
		      bool sign, uint64_t *v)
{
	uint64_t r = 0;

	if ((size_t)(end - *p) < size)
		return -EINVAL;
	for (unsigned i = 0; i < size; i++)
		r |= (uint64_t)(*p)[i] << (8 * i);
	*p += size;
	if (sign && size < 8 && (r >> (8 * size - 1)) & 1)
		r |= ~(uint64_t)0 << (8 * size);
	*v = r;
	return 0;
}

static struct rule *column(struct cfa_state *st, const struct cie_info *ci,
			   uint64_t reg)
{
	if (reg == DWARF_REG_BP)
		return &st->bp;
	if (reg == DWARF_REG_SP)
		return &st->sp;
	if (reg == ci->ra_reg)
		return &st->ra;
	return NULL;		/* a register no unwinder rule here uses */
}

/* One instruction stream.  @initial is the state after the CIE's
 * instructions (DW_CFA_restore's target); NULL while running them.
 * Rows are emitted whenever the location advances. */

/* Column @r as a row keeps it (cfi_int.h, struct row_rule). */
static struct row_rule pack(const struct interp *in, const struct rule *r)
{
	struct row_rule out = { .kind = r->kind, .reg = (uint8_t)r->reg };
	uintptr_t at = (uintptr_t)r->expr, base = (uintptr_t)in->base;

	if (r->offset < INT32_MIN || r->offset > INT32_MAX ||
	    r->reg > UINT8_MAX)
		return (struct row_rule){ .kind = RULE_UNSUPPORTED };
	out.offset = (int32_t)r->offset;
	if (r->kind != RULE_EXPR && r->kind != RULE_VAL_EXPR)
		return out;
	if (at < base || at - base > in->base_len ||
	    r->expr_len > in->base_len - (at - base) ||
	    at - base > UINT32_MAX || r->expr_len > UINT16_MAX)
		return (struct row_rule){ .kind = RULE_UNSUPPORTED };
	out.expr_off = (uint32_t)(at - base);
	out.expr_len = (uint16_t)r->expr_len;
	return out;
}

int cfi__emit_row(struct interp *in, uint64_t next_pc)
{
	if (next_pc <= in->pc)
		return 0;
	if (in->n == MAX_ROWS_PER_FDE)
		return -E2BIG;
	if (grow(&in->rows, &in->cap, in->n + 1, sizeof(*in->rows), 8))
		return -ENOMEM;
	in->rows[in->n++] = (struct cfa_row){ .pc = in->pc,
		.cfa = pack(in, &in->st.cfa), .bp = pack(in, &in->st.bp),
		.sp = pack(in, &in->st.sp), .ra = pack(in, &in->st.ra) };
	in->pc = next_pc;
	return 0;
}

static void set_cfa_reg(struct cfa_state *st, uint64_t reg)
{
	if (reg == DWARF_REG_SP || reg == DWARF_REG_BP) {
		st->cfa.kind = RULE_REG_OFFSET;
		st->cfa.reg = (uint16_t)reg;
	} else {
		st->cfa.kind = RULE_UNSUPPORTED;
	}
}

/* An expression block: ULEB length, then the bytes (kept by pointer). */
static int read_block(const uint8_t **p, const uint8_t *end, struct rule *r,
		      uint8_t kind)
{
	uint64_t len;

	if (read_leb(p, end, false, &len) || len > (uint64_t)(end - *p))
		return -EINVAL;
	if (r) {
		*r = (struct rule){ .kind = len > 0 && len < 4096 ? kind :
				    RULE_UNSUPPORTED, .expr = *p,
				    .expr_len = (uint32_t)len };
	}
	*p += len;
	return 0;
}

/* An offset operand times the data alignment (@u holds a signed LEB's
 * bits when @sf).  0, or -EINVAL when the product does not fit: a
 * crafted factor (fuzz_cfi found the signed overflow). */
static int factored(uint64_t u, bool sf, const struct cie_info *ci,
		    int64_t *out)
{
	if (!sf && u > INT64_MAX)
		return -EINVAL;
	return __builtin_mul_overflow((int64_t)u, ci->data_align, out) ?
	       -EINVAL : 0;
}

/* DW_CFA_advance_loc*: the row so far holds up to pc + delta. */
static int advance(struct interp *in, const struct cie_info *ci,
		   uint64_t delta)
{
	if (!in->initial)	/* a CIE does not advance */
		return -EINVAL;
	delta *= ci->code_align;
	if (delta > in->hi - in->pc)
		delta = in->hi - in->pc;
	return cfi__emit_row(in, in->pc + delta);
}

/* DW_CFA_restore*: @reg's rule as the CIE left it. */
static int restore(struct interp *in, const struct cie_info *ci, uint64_t reg)
{
	struct rule *r;

	if (!in->initial)
		return -EINVAL;
	if ((r = column(&in->st, ci, reg)))
		*r = *column(in->initial, ci, reg);
	return 0;
}

/* The instructions that move the row or define the CFA.  0, -errno,
 * or 1 when @op is not one of them. */
static int cfa_op(struct interp *in, const struct cie_info *ci, uint8_t op,
		  const uint8_t **p, const uint8_t *end)
{
	uint64_t reg = 0, u = 0;
	int64_t sv = 0;
	bool sf = op == DW_CFA_def_cfa_sf || op == DW_CFA_def_cfa_offset_sf;

	switch (op) {
	case DW_CFA_advance_loc1:
	case DW_CFA_advance_loc2:
	case DW_CFA_advance_loc4:
		if (read_fixed(p, end, op == DW_CFA_advance_loc1 ? 1 :
			       op == DW_CFA_advance_loc2 ? 2 : 4, false, &u))
			return -EINVAL;
		return advance(in, ci, u);
	case DW_CFA_def_cfa:
	case DW_CFA_def_cfa_sf:
		if (read_leb(p, end, false, &reg) || read_leb(p, end, sf, &u) ||
		    (sf && factored(u, true, ci, &sv)))
			return -EINVAL;
		set_cfa_reg(&in->st, reg);
		in->st.cfa.offset = sf ? sv : (int64_t)u;
		return 0;
	case DW_CFA_def_cfa_register:
		if (read_leb(p, end, false, &reg))
			return -EINVAL;
		if (in->st.cfa.kind != RULE_VAL_EXPR)
			set_cfa_reg(&in->st, reg);
		return 0;
	case DW_CFA_def_cfa_offset:
	case DW_CFA_def_cfa_offset_sf:
		if (read_leb(p, end, sf, &u) || (sf && factored(u, true, ci, &sv)))
			return -EINVAL;
		in->st.cfa.offset = sf ? sv : (int64_t)u;
		return 0;
	case DW_CFA_def_cfa_expression:
		return read_block(p, end, &in->st.cfa, RULE_VAL_EXPR) ? -EINVAL : 0;
	}
	return 1;
}

/* The extended instructions that set a register's rule.  0, -errno, or
 * 1 when @op is not one of them. */
static int register_op(struct interp *in, const struct cie_info *ci,
		       uint8_t op, const uint8_t **p, const uint8_t *end)
{
	uint64_t reg = 0, u = 0;
	int64_t sv = 0;
	bool sf = op == DW_CFA_offset_extended_sf || op == DW_CFA_val_offset_sf;
	struct rule *r;

	switch (op) {
	case DW_CFA_offset_extended:
	case DW_CFA_offset_extended_sf:
	case DW_CFA_val_offset:
	case DW_CFA_val_offset_sf:
	case DW_CFA_GNU_negative_offset_extended:
		if (read_leb(p, end, false, &reg) || read_leb(p, end, sf, &u) ||
		    factored(u, sf, ci, &sv) ||
		    (op == DW_CFA_GNU_negative_offset_extended &&
		     __builtin_sub_overflow(0, sv, &sv)))
			return -EINVAL;
		if ((r = column(&in->st, ci, reg)))
			*r = (struct rule){ .kind = op == DW_CFA_val_offset ||
				op == DW_CFA_val_offset_sf ? RULE_VAL_OFFSET :
				RULE_OFFSET, .offset = sv };
		return 0;
	case DW_CFA_restore_extended:
		if (read_leb(p, end, false, &reg))
			return -EINVAL;
		return restore(in, ci, reg);
	case DW_CFA_undefined:
	case DW_CFA_same_value:
		if (read_leb(p, end, false, &reg))
			return -EINVAL;
		if ((r = column(&in->st, ci, reg)))
			*r = (struct rule){ .kind = op == DW_CFA_undefined ?
					    RULE_UNDEF : RULE_SAME };
		return 0;
	case DW_CFA_register:
		if (read_leb(p, end, false, &reg) || read_leb(p, end, false, &u))
			return -EINVAL;
		if ((r = column(&in->st, ci, reg)))
			*r = u == reg ? (struct rule){ .kind = RULE_SAME } :
			     u < 128 ? (struct rule){ .kind = RULE_REG_OFFSET,
					.reg = (uint16_t)u } :
			     (struct rule){ .kind = RULE_UNSUPPORTED };
		return 0;
	case DW_CFA_expression:
	case DW_CFA_val_expression:
		if (read_leb(p, end, false, &reg) ||
		    read_block(p, end, column(&in->st, ci, reg),
			       op == DW_CFA_expression ? RULE_EXPR :
			       RULE_VAL_EXPR))
			return -EINVAL;
		return 0;
	}
	return 1;
}

/* The rest: no-ops and the state stack.  0 or -errno (an unknown op:
 * DW_CFA_set_loc and vendor ops give up). */
static int state_op(struct interp *in, uint8_t op, const uint8_t **p,
		    const uint8_t *end)
{
	uint64_t u;

	switch (op) {
	case DW_CFA_nop:
		return 0;
	case DW_CFA_remember_state:
		if (in->depth == STATE_STACK_MAX)
			return -E2BIG;
		in->stack[in->depth++] = in->st;
		return 0;
	case DW_CFA_restore_state:
		if (!in->depth)
			return -EINVAL;
		/* The CFA rule is part of the saved state, as in libgcc's
		 * unwinder (GCC's epilogues rely on it). */
		in->st = in->stack[--in->depth];
		return 0;
	case DW_CFA_GNU_args_size:
		return read_leb(p, end, false, &u) ? -EINVAL : 0;
	}
	return -EINVAL;
}

/* Runs CFA instructions [@p, @end): the three primary opcodes (the
 * operand in the low six bits), then the extended ones. */
int cfi__run_program(struct interp *in, const struct cie_info *ci,
		   const uint8_t *p, const uint8_t *end)
{
	while (p < end) {
		uint8_t op = *p++, low = op & 0x3f;
		uint64_t u = 0;
		int64_t sv = 0;
		struct rule *r;
		int ret;

		switch (op >> 6) {
		case 1:		/* DW_CFA_advance_loc */
			ret = advance(in, ci, low);
			break;
		case 2:		/* DW_CFA_offset */
			if (read_leb(&p, end, false, &u) ||
			    factored(u, false, ci, &sv))
				return -EINVAL;
			if ((r = column(&in->st, ci, low)))
				*r = (struct rule){ .kind = RULE_OFFSET,
					.offset = sv };
			ret = 0;
			break;
		case 3:		/* DW_CFA_restore */
			ret = restore(in, ci, low);
			break;
		default:
			ret = cfa_op(in, ci, op, &p, end);
			if (ret == 1)
				ret = register_op(in, ci, op, &p, end);
			if (ret == 1)
				ret = state_op(in, op, &p, end);
		}
		if (ret)
			return ret;
	}
	return 0;
}

uint64_t cfi__reg_value(const struct cfi_regs *regs, uint64_t reg, bool *ok)
{
	switch (reg) {
	case DWARF_REG_SP: return regs->sp;
	case DWARF_REG_BP: return regs->bp;
	case DWARF_REG_IP: return regs->ip;
	default: *ok = false; return 0;
	}
}

#define STACK_MAX 16

void cfi__log_read(const struct cfi_mem *mem, uint64_t addr, uint64_t value)
{
	struct cfi_log *l = mem->log;

	if (l->n == l->cap)
		l->full = true;
	else
		l->v[l->n++] = (struct cfi_read){ addr, value };
}

int cfi__mem_read(const struct cfi_mem *mem, uint64_t addr, uint64_t *value)
{
	if (!mem || addr < mem->start || addr - mem->start > mem->size ||
	    mem->size - (addr - mem->start) < 8)
		return -EFAULT;
	memcpy(value, mem->data + (addr - mem->start), 8);
	if (mem->log)
		cfi__log_read(mem, addr, *value);
	return 0;
}

/* @initial, when not NULL, is pushed first (the CFA, for DW_CFA_expression
 * and DW_CFA_val_expression rules); @mem may be NULL (no deref). */
int cfi__eval(const uint8_t *expr, size_t len, const struct cfi_regs *regs,
		const struct cfi_mem *mem, const uint64_t *initial,
		uint64_t *value)
{
	const uint8_t *p = expr, *end = expr + len;
	uint64_t st[STACK_MAX], a, b;
	int sp = 0;
	bool ok = true;

	if (initial)
		st[sp++] = *initial;
#define NEED(n) do { if (sp < (n)) return -EINVAL; } while (0)
#define PUSH(v) do { if (sp == STACK_MAX) return -EINVAL; st[sp++] = (v); } while (0)
	while (p < end) {
		uint8_t op = *p++;
		int64_t s;
		uint64_t u;

		if (op >= DW_OP_lit0 && op <= DW_OP_lit31) {
			PUSH((uint64_t)(op - DW_OP_lit0));
		} else if (op >= DW_OP_breg0 && op <= DW_OP_breg31) {
			if (read_sleb(&p, end, &s))
				return -EINVAL;
			a = cfi__reg_value(regs, (uint64_t)(op - DW_OP_breg0), &ok);
			if (!ok)
				return -ENOTSUP;
			PUSH(a + (uint64_t)s);
		} else {
			switch (op) {
			case DW_OP_const1u: case DW_OP_const1s:
			case DW_OP_const2u: case DW_OP_const2s:
			case DW_OP_const4u: case DW_OP_const4s:
			case DW_OP_const8u: case DW_OP_const8s: {
				static const unsigned sz[] = { 1, 1, 2, 2, 4, 4, 8, 8 };
				unsigned i = (unsigned)(op - DW_OP_const1u);

				if (read_fixed(&p, end, sz[i], i & 1, &u))
					return -EINVAL;
				PUSH(u);
				break;
			}
			case DW_OP_constu:
				if (read_uleb(&p, end, &u))
					return -EINVAL;
				PUSH(u);
				break;
			case DW_OP_consts:
				if (read_sleb(&p, end, &s))
					return -EINVAL;
				PUSH((uint64_t)s);
				break;
			case DW_OP_bregx:
				if (read_uleb(&p, end, &u) || read_sleb(&p, end, &s))
					return -EINVAL;
				a = cfi__reg_value(regs, u, &ok);
				if (!ok)
					return -ENOTSUP;
				PUSH(a + (uint64_t)s);
				break;
			case DW_OP_plus_uconst:
				NEED(1);
				if (read_uleb(&p, end, &u))
					return -EINVAL;
				st[sp - 1] += u;
				break;
			case DW_OP_dup:
				NEED(1);
				a = st[sp - 1];
				PUSH(a);
				break;
			case DW_OP_drop:
				NEED(1);
				sp--;
				break;
			case DW_OP_swap:
				NEED(2);
				a = st[sp - 1]; st[sp - 1] = st[sp - 2]; st[sp - 2] = a;
				break;
			case DW_OP_plus: case DW_OP_minus: case DW_OP_and:
			case DW_OP_or: case DW_OP_xor: case DW_OP_shl:
			case DW_OP_shr: case DW_OP_mul:
			case DW_OP_ge: case DW_OP_gt: case DW_OP_le:
			case DW_OP_lt: case DW_OP_eq: case DW_OP_ne:
				NEED(2);
				b = st[--sp];
				a = st[sp - 1];
				switch (op) {
				case DW_OP_plus: a += b; break;
				case DW_OP_minus: a -= b; break;
				case DW_OP_and: a &= b; break;
				case DW_OP_or: a |= b; break;
				case DW_OP_xor: a ^= b; break;
				case DW_OP_mul: a *= b; break;
				case DW_OP_shl: a = b < 64 ? a << b : 0; break;
				case DW_OP_shr: a = b < 64 ? a >> b : 0; break;
				/* Comparisons are signed in DWARF. */
				case DW_OP_ge: a = (int64_t)a >= (int64_t)b; break;
				case DW_OP_gt: a = (int64_t)a > (int64_t)b; break;
				case DW_OP_le: a = (int64_t)a <= (int64_t)b; break;
				case DW_OP_lt: a = (int64_t)a < (int64_t)b; break;
				case DW_OP_eq: a = a == b; break;
				default: a = a != b; break;
				}
				st[sp - 1] = a;
				break;
			case DW_OP_nop:
				break;
			case DW_OP_deref: {
				int ret;

				NEED(1);
				if (!mem)
					return -ENOTSUP;
				ret = cfi__mem_read(mem, st[sp - 1], &a);
				if (ret)
					return ret;
				st[sp - 1] = a;
				break;
			}
			default:
				return -ENOTSUP;
			}
		}
	}
#undef NEED
#undef PUSH
	if (sp < 1)
		return -EINVAL;
	*value = st[sp - 1];
	return 0;
}

int cfi__eval_expr(const uint8_t *expr, size_t len,
		   const struct cfi_regs *regs, uint64_t *value)
{
	return cfi__eval(expr, len, regs, NULL, NULL, value);
}
