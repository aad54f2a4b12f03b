/*
 * frame.c - prologue, body and epilogue checks over Capstone's decoding
 * with operand details (see frame.h for the rules).
 */
#include "binary/frame.h"

#include <errno.h>
#include <string.h>

#include "binary/disasm.h"

static bool is_reg(const cs_x86_op *op, x86_reg r)
{
	return op->type == X86_OP_REG && op->reg == r;
}

/* Whether instruction @in writes RSP outside push/pop/call/ret/leave. */
static bool writes_rsp(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	switch (in->id) {
	case X86_INS_PUSH: case X86_INS_POP: case X86_INS_CALL:
	case X86_INS_RET: case X86_INS_LEAVE: case X86_INS_PUSHFQ:
	case X86_INS_POPFQ:
		return false;
	default:
		break;
	}
	return x->op_count > 0 && is_reg(&x->operands[0], X86_REG_RSP) &&
	       (x->operands[0].access & CS_AC_WRITE);
}

static bool uses_rsp_memory(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	for (int i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_MEM &&
		    (x->operands[i].mem.base == X86_REG_RSP ||
		     x->operands[i].mem.index == X86_REG_RSP))
			return true;
	return false;
}

/* "mov %rbp,%rsp" or "lea -N(%rbp),%rsp": RSP restored from RBP. */
static bool restores_rsp(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	if (x->op_count != 2 || !is_reg(&x->operands[0], X86_REG_RSP))
		return false;
	if (in->id == X86_INS_MOV)
		return is_reg(&x->operands[1], X86_REG_RBP);
	return in->id == X86_INS_LEA && x->operands[1].type == X86_OP_MEM &&
	       x->operands[1].mem.base == X86_REG_RBP &&
	       x->operands[1].mem.index == X86_REG_INVALID;
}

/* Whether @in names RSP or RBP at all (register or memory operand). */
static bool touches_frame_regs(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	for (int i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if (is_reg(op, X86_REG_RSP) || is_reg(op, X86_REG_RBP) ||
		    (op->type == X86_OP_MEM &&
		     (op->mem.base == X86_REG_RSP || op->mem.base == X86_REG_RBP ||
		      op->mem.index == X86_REG_RSP)))
			return true;
	}
	return in->id == X86_INS_PUSH || in->id == X86_INS_POP ||
	       in->id == X86_INS_CALL || in->id == X86_INS_RET ||
	       in->id == X86_INS_LEAVE;
}

/* Jumps, calls and returns: the prologue ends before any of them. */
static bool is_branch(const cs_insn *in)
{
	for (int g = 0; g < in->detail->groups_count; g++)
		if (in->detail->groups[g] == CS_GRP_JUMP ||
		    in->detail->groups[g] == CS_GRP_CALL ||
		    in->detail->groups[g] == CS_GRP_RET)
			return true;
	return false;
}

static bool is_pop_rbp(const cs_insn *in)
{
	return in->id == X86_INS_POP &&
	       is_reg(&in->detail->x86.operands[0], X86_REG_RBP);
}

/* Whether the exit at ins[j] follows "leave" or "pop %rbp", with only
 * instructions that leave RSP alone (or pop) in between. */
static bool exit_restores(const cs_insn *ins, size_t j)
{
	for (size_t k = j; k-- > 0 && j - k <= 8;) {
		if (ins[k].id == X86_INS_LEAVE || is_pop_rbp(&ins[k]))
			return true;
		if (ins[k].id != X86_INS_POP && (writes_rsp(&ins[k]) ||
		    ins[k].id == X86_INS_CALL || ins[k].id == X86_INS_RET ||
		    ins[k].id == X86_INS_JMP))
			return false;
	}
	return false;
}

/*
 * The prologue: push %rbp first (after endbr64); instructions that do
 * not touch RSP or RBP may be scheduled before "mov %rsp,%rbp"; then
 * pushes and other instructions, until the first change of RSP, which
 * must be "sub $N,%rsp".
 */
static const char *check(const cs_insn *ins, size_t n, uint64_t start,
			 uint64_t end, struct frame_info *out)
{
	size_t i = 0;
	bool restored = false;

	if (i < n && ins[i].id == X86_INS_ENDBR64)
		i++;
	if (i >= n || ins[i].id != X86_INS_PUSH ||
	    !is_reg(&ins[i].detail->x86.operands[0], X86_REG_RBP))
		return "no frame-pointer prologue (push %rbp; mov %rsp,%rbp)";
	for (i++; i < n && !(ins[i].id == X86_INS_MOV &&
			     is_reg(&ins[i].detail->x86.operands[0], X86_REG_RBP) &&
			     is_reg(&ins[i].detail->x86.operands[1], X86_REG_RSP));
	     i++)
		if (touches_frame_regs(&ins[i]))
			return "no frame-pointer prologue (push %rbp; mov %rsp,%rbp)";
	if (i >= n)
		return "no frame-pointer prologue (push %rbp; mov %rsp,%rbp)";
	for (i++; i < n && (ins[i].id == X86_INS_PUSH || !writes_rsp(&ins[i]));
	     i++)
		if (is_branch(&ins[i]) || ins[i].id == X86_INS_LEAVE ||
		    is_pop_rbp(&ins[i]) || uses_rsp_memory(&ins[i]))
			break;
	if (i >= n || ins[i].id != X86_INS_SUB ||
	    !is_reg(&ins[i].detail->x86.operands[0], X86_REG_RSP))
		return "no sub $N,%rsp in the prologue (no locals to grow)";
	if (ins[i].detail->x86.operands[1].type != X86_OP_IMM)
		return "the frame size is not an immediate (alloca or a "
		       "variable-length array)";
	out->sub_vaddr = ins[i].address;
	out->sub_len = ins[i].size;
	out->frame = ins[i].detail->x86.operands[1].imm;
	if (out->sub_len == 4)
		out->max_pad = 127 - out->frame;
	else if (out->sub_len == 7)
		out->max_pad = INT32_MAX - out->frame;
	else
		return "an unexpected encoding of sub $N,%rsp";
	out->max_pad &= ~(int64_t)15;
	for (size_t j = 0; j < n; j++) {
		const cs_insn *in = &ins[j];
		bool exits = in->id == X86_INS_RET;

		if (j == i)
			continue;
		if (uses_rsp_memory(in))
			return "locals addressed from RSP";
		if (restores_rsp(in) || in->id == X86_INS_LEAVE) {
			restored = true;
			continue;
		}
		if (writes_rsp(in))
			return "RSP changed in the body (add/sub/alloca)";
		if (in->id == X86_INS_JMP &&
		    in->detail->x86.operands[0].type == X86_OP_IMM) {
			uint64_t t = (uint64_t)in->detail->x86.operands[0].imm;

			exits = t < start || t >= end;
		}
		if (exits && (!restored || !exit_restores(ins, j)))
			return "an exit that does not restore RSP from RBP";
	}
	if (out->max_pad < 16)
		return "sub $N,%rsp has an 8-bit immediate with no room left";
	return NULL;
}

void frame__analyse(const uint8_t *code, size_t size, uint64_t vaddr,
		    struct frame_info *out)
{
	const struct disasm *d;
	cs_insn *ins = NULL;
	size_t n = 0;
	csh h;

	memset(out, 0, sizeof(*out));
	if (!(d = disasm__capstone(&out->why)))
		return;
	if (d->open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK) {
		out->why = "the disassembler failed to start";
		return;
	}
	d->option(h, CS_OPT_DETAIL, CS_OPT_ON);
	n = d->disasm(h, code, size, vaddr, 0, &ins);
	if (!n)
		out->why = "no instruction decodes";
	else if (ins[n - 1].address + ins[n - 1].size != vaddr + size)
		out->why = "code that does not decode to its end";
	else
		out->why = check(ins, n, vaddr, vaddr + size, out);
	out->safe = !out->why;
	if (n)
		d->free(ins, n);
	d->close(&h);
}

int frame__encode_sub(int64_t frame, unsigned len, uint8_t *buf)
{
	if (len == 4 && frame >= 0 && frame <= 127) {
		buf[0] = 0x48, buf[1] = 0x83, buf[2] = 0xec;
		buf[3] = (uint8_t)frame;
		return 0;
	}
	if (len == 7 && frame >= 0 && frame <= INT32_MAX) {
		buf[0] = 0x48, buf[1] = 0x81, buf[2] = 0xec;
		for (int i = 0; i < 4; i++)
			buf[3 + i] = (uint8_t)(frame >> (8 * i));
		return 0;
	}
	return -ERANGE;
}
