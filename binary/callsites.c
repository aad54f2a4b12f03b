/*
 * callsites.c - a linear sweep of the code with Capstone, tracking
 * RSP and RBP relative to the function's CFA (see callsites.h).
 *
 * The sweep is linear: compilers lay a function out as one range.  Each
 * jump to a fixed address leaves its state at the target, merged with
 * every other jump's there (two different heights: unknown), and an
 * instruction that is a target merges that with what falls through; a
 * block after an exit (ret, jmp) starts from its jumps' state alone, or
 * when no jump to it is known, from the state before the stack last
 * shrank (an epilogue's add, pop or leave).  Jumps backwards (a loop's
 * exit into code already swept, with an alloca'd stack) are only seen
 * after their target: so a section is swept again, up to SWEEP_PASSES
 * times, until no target's state changes, and the last pass's sites
 * stand.  Each instruction is decoded once, into the little the passes
 * read of it (struct insn): decoding with details is most of a sweep's
 * cost (libc: 0.14 s to 0.07 s).  The CFI corrects the tracked RSP at every call it describes
 * by RSP, so tracking matters only where the rule is RBP's.
 *
 * Most code is not swept at all: a call's height change is the CFA
 * rule at the call when that rule is "CFA = RSP + n", which the CFI
 * gives without decoding.  So a byte scan finds the call sites first
 * (E8 rel32 to the start of a function or to a PLT stub, FF 15 disp32
 * through a GOT slot), and only the functions where some call's rule
 * is RBP's, or that have no CFI, are swept with Capstone.  A byte scan
 * also meets E8 bytes inside other instructions; one whose target is
 * exactly a function's start and whose address has an RSP rule is
 * rare (about one in a 30 MB binary by the odds) and costs a spurious
 * candidate edge at most.  Debian's cc1 (33 MB of code, no frame
 * pointers) reads in 0.6 s so, against 16.5 s swept whole.
 *
 * Tail calls are found alike: E9 rel32 to a function's start (or a PLT
 * stub) where the rule is "CFA = RSP + 8", or in a swept function a
 * jump to one where the tracked RSP is 8 below the CFA.
 *
 * Indirect calls (FF /2) are found alike, and so are the addresses of
 * functions the code takes ("lea func(%rip)", and immediates in
 * position-dependent code); the data sections' aligned words and the
 * relocations' pointers add the rest of the taken functions.
 *
 * Calls through the GOT are linked by name: the first pass notes every
 * "jmp *slot(%rip)" (a PLT stub's, at its start or after its endbr64),
 * and a call to one, or a "call *slot(%rip)" (-fno-plt), names the
 * symbol the module's relocations bind to that slot.
 */
#include "binary/callsites.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "binary/disasm.h"
#include "common/grow.h"
#include "common/hindex.h"
#include "common/radix.h"
#include "common/search.h"

/* Two register values far apart, to tell an RSP rule from an RBP one. */
#define PROBE_SP 0x7f0000100000ULL
#define PROBE_BP0 0x7f0000200000ULL
#define PROBE_BP1 0x7f0000300000ULL
/* States only ever go from known to unknown, so passes converge; these
 * many suffice for any code GCC or Clang lays out (libc: 2). */
#define SWEEP_PASSES 6

/* A name longer than this is cut: no linker writes one. */
#define NAME_MAX_BYTES 4096

/* RSP and RBP as offsets from the CFA, where known. */
struct regs_state {
	bool sp_ok, bp_ok;
	int64_t sp, bp;
};

/*
 * One instruction as the sweep needs it, decoded once for all passes
 * (Capstone's decoding with details is most of a sweep's cost).
 */
enum insn_kind { K_OTHER, K_BAD, K_ENDBR, K_CALL, K_JMP, K_EXIT };
/* what it does to RSP and RBP (see step()) */
enum insn_step {
	S_OTHER,	/* nothing, unless F_WSP / F_WBP */
	S_PUSH, S_POP, S_POP_BP, S_LEAVE,
	S_ADD_SP,	/* rsp += imm: add, sub, lea (%rsp) */
	S_SP_FROM_BP,	/* rsp = rbp + imm: mov, lea */
	S_BP_FROM_SP,	/* rbp = rsp + imm: mov, lea */
};
#define F_JUMP 1	/* in Capstone's jump group */
#define F_TARGET 2	/* ref is the fixed address it jumps or calls to */
#define F_SLOT 4	/* ref is the GOT slot it jumps or calls through */
#define F_WSP 8		/* writes RSP some other way */
#define F_WBP 16	/* writes RBP some other way */
struct insn {
	uint64_t addr, ref;
	int64_t imm;
	uint8_t size, kind, step, flags;
};

struct sweep {
	struct module *m;
	struct callsites *out;
	size_t cap;
	const struct disasm *d;
	csh cs;
	uint64_t func;		/* start of the current function; 0: none */
	bool in_func;
	struct regs_state st, body;
	bool after_exit;	/* the last instruction was an exit */
	bool guessed;		/* since then, no jump reached the sweep */
	bool changed;		/* a target's state changed in this pass */
	/* the state the jumps to each target leave there, merged, by
	 * address (the section's, across passes) */
	struct target {
		uint64_t addr;
		struct regs_state st;
	} *targets;
	size_t ntargets, targets_cap;
	struct hindex target_index;
	int pass;
	uint64_t endbr_end;	/* where the last endbr64 ended */
	uint64_t code_lo, code_hi;	/* the span of the code sections: a
					 * call's target lies within */
	/* address -> value: jumps through a GOT slot (first pass) to
	 * their slot; imported slots and exports to their names' offsets */
	struct slot_ref {
		uint64_t addr, val;
	} *stubs;
	size_t nstubs, stubs_cap;
	uint64_t *got;		/* per site: the slot a call reads; 0: none */
	size_t got_cap;
	struct slot_ref *imports, *exports;
	size_t nimports, imports_cap, nexports, exports_cap;
	char *names;
	size_t names_len, names_cap;
	struct insn *insns;	/* the function being swept, decoded */
	size_t ninsns, insns_cap;
	bool fixed;		/* module__fixed(): immediates may hold
				 * functions' addresses */
	uint64_t *taken;	/* addresses in the code that code, data
				 * or relocations hold: functions' starts
				 * among them are taken (finish_taken()) */
	size_t ntaken, taken_cap;
	uint64_t data_lo, data_hi;	/* the span of the data sections */
	/* the indirect calls' check (indirect_at()): a second Capstone
	 * handle without details, and the current function's last known
	 * instruction boundary (decoded so far, or the end of the last
	 * call the scan found: boundary()) */
	csh lengths;
	cs_insn *insn;
	uint64_t cur_func, cur_at;
};

static bool is_reg(const cs_x86_op *op, x86_reg r)
{
	return op->type == X86_OP_REG && op->reg == r;
}

static bool writes_reg(const cs_insn *in, x86_reg r)
{
	const cs_detail *d = in->detail;

	for (int i = 0; i < d->regs_write_count; i++)
		if (d->regs_write[i] == r)
			return true;
	for (int i = 0; i < d->x86.op_count; i++)
		if (is_reg(&d->x86.operands[i], r) &&
		    (d->x86.operands[i].access & CS_AC_WRITE))
			return true;
	return false;
}

/* What @in does to RSP and RBP, into @r (its step, imm and flags). */
static void classify_step(struct insn *r, const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *a = &x->operands[0], *b = &x->operands[1];
	bool two = x->op_count == 2;

	switch (in->id) {
	case X86_INS_PUSH:
	case X86_INS_PUSHFQ:
		r->step = S_PUSH;
		return;
	case X86_INS_POP:
	case X86_INS_POPFQ:
		r->step = x->op_count == 1 && is_reg(a, X86_REG_RBP) ?
			  S_POP_BP : S_POP;
		return;
	case X86_INS_LEAVE:
		r->step = S_LEAVE;
		return;
	case X86_INS_SUB:
	case X86_INS_ADD:
		if (two && is_reg(a, X86_REG_RSP) && b->type == X86_OP_IMM) {
			r->step = S_ADD_SP;
			r->imm = in->id == X86_INS_ADD ? b->imm : -b->imm;
			return;
		}
		break;
	case X86_INS_MOV:
		if (two && is_reg(a, X86_REG_RBP) && is_reg(b, X86_REG_RSP)) {
			r->step = S_BP_FROM_SP;
			return;
		}
		if (two && is_reg(a, X86_REG_RSP) && is_reg(b, X86_REG_RBP)) {
			r->step = S_SP_FROM_BP;
			return;
		}
		break;
	case X86_INS_LEA:
		if (two && b->type == X86_OP_MEM &&
		    b->mem.index == X86_REG_INVALID &&
		    b->mem.segment == X86_REG_INVALID) {
			r->imm = b->mem.disp;
			if (is_reg(a, X86_REG_RSP) &&
			    b->mem.base == X86_REG_RBP) {
				r->step = S_SP_FROM_BP;
				return;
			}
			if (is_reg(a, X86_REG_RSP) &&
			    b->mem.base == X86_REG_RSP) {
				r->step = S_ADD_SP;
				return;
			}
			if (is_reg(a, X86_REG_RBP) &&
			    b->mem.base == X86_REG_RSP) {
				r->step = S_BP_FROM_SP;
				return;
			}
			r->imm = 0;
		}
		break;
	default:
		break;
	}
	/* and $-16,%rsp; mov (..),%rsp */
	r->flags |= (writes_reg(in, X86_REG_RSP) ? F_WSP : 0) |
		    (writes_reg(in, X86_REG_RBP) ? F_WBP : 0);
}

/* The effect of @r (not a call or an exit) on RSP and RBP. */
static void step(struct regs_state *st, const struct insn *r)
{
	const struct regs_state from = *st;

	switch (r->step) {
	case S_PUSH:
		st->sp -= 8;
		return;
	case S_POP_BP:
		st->bp_ok = false;
		/* fall through */
	case S_POP:
		st->sp += 8;
		return;
	case S_LEAVE:
		st->sp = st->bp + 8;
		st->sp_ok = st->bp_ok;
		st->bp_ok = false;
		return;
	case S_ADD_SP:
		st->sp += r->imm;
		return;
	case S_SP_FROM_BP:
		st->sp = from.bp + r->imm;
		st->sp_ok = from.bp_ok;
		return;
	case S_BP_FROM_SP:
		st->bp = from.sp + r->imm;
		st->bp_ok = from.sp_ok;
		return;
	default:
		if (r->flags & F_WSP)
			st->sp_ok = false;
		if (r->flags & F_WBP)
			st->bp_ok = false;
	}
}

static struct target *find_target(const struct sweep *w, uint64_t addr)
{
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint32_t i;

	while ((i = hindex__next(&w->target_index, &p,
				 hindex__mix(7, addr))) != HINDEX_NONE)
		if (w->targets[i].addr == addr)
			return &w->targets[i];
	return NULL;
}

/* @a merged with @b: a register they disagree on is unknown. */
static struct regs_state merge(struct regs_state a, struct regs_state b)
{
	a.sp_ok = a.sp_ok && b.sp_ok && a.sp == b.sp;
	a.bp_ok = a.bp_ok && b.bp_ok && a.bp == b.bp;
	return a;
}

/* A jump of @r to a fixed address leaves its state there. */
static int note_jump(struct sweep *w, const struct insn *r)
{
	struct target *t;
	uint64_t to;

	if (!(r->flags & F_TARGET))
		return 0;
	to = r->ref;
	if ((t = find_target(w, to))) {
		struct regs_state m = merge(t->st, w->st);

		/* a merge only makes known registers unknown */
		if (m.sp_ok != t->st.sp_ok || m.bp_ok != t->st.bp_ok) {
			t->st = m;
			w->changed = true;
		}
		return 0;
	}
	if (grow(&w->targets, &w->targets_cap, w->ntargets + 1,
		 sizeof(*w->targets), 64) ||
	    hindex__insert(&w->target_index, hindex__mix(7, to),
			   (uint32_t)w->ntargets))
		return -ENOMEM;
	w->targets[w->ntargets++] = (struct target){ to, w->st };
	w->changed = true;
	return 0;
}

/* The GOT slot a "jmp/call *disp(%rip)" reads, or 0. */
static uint64_t rip_slot(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *a = &x->operands[0];

	if (x->op_count != 1 || a->type != X86_OP_MEM ||
	    a->mem.base != X86_REG_RIP || a->mem.index != X86_REG_INVALID ||
	    a->mem.segment != X86_REG_INVALID)
		return 0;
	return in->address + in->size + (uint64_t)a->mem.disp;
}

static int add_ref(struct slot_ref **v, size_t *n, size_t *cap, uint64_t a,
		   uint64_t b)
{
	if (grow(v, cap, *n + 1, sizeof(**v), 64))
		return -ENOMEM;
	(*v)[(*n)++] = (struct slot_ref){ a, b };
	return 0;
}

/* A jump through a GOT slot: a PLT stub's, reached at its address, or
 * at its endbr64's. */
static int note_stub(struct sweep *w, const struct insn *r)
{
	int ret;

	if (!(r->flags & F_SLOT))
		return 0;
	ret = add_ref(&w->stubs, &w->nstubs, &w->stubs_cap, r->addr, r->ref);
	if (!ret && w->endbr_end == r->addr)
		ret = add_ref(&w->stubs, &w->nstubs, &w->stubs_cap,
			      r->addr - 4, r->ref);
	return ret;
}

static bool is_jump(const cs_insn *in)
{
	for (int g = 0; g < in->detail->groups_count; g++)
		if (in->detail->groups[g] == CS_GRP_JUMP)
			return true;
	return false;
}

/* @in as the sweep needs it (see struct insn). */
static struct insn classify(const cs_insn *in)
{
	struct insn r = { .addr = in->address, .size = (uint8_t)in->size };
	const cs_x86 *x = &in->detail->x86;
	uint64_t slot = rip_slot(in);

	switch (in->id) {
	case X86_INS_ENDBR64: r.kind = K_ENDBR; break;
	case X86_INS_CALL: r.kind = K_CALL; break;
	case X86_INS_JMP: r.kind = K_JMP; break;
	case X86_INS_RET:
	case X86_INS_HLT:
	case X86_INS_UD2: r.kind = K_EXIT; break;
	default: classify_step(&r, in);
	}
	if (is_jump(in))
		r.flags |= F_JUMP;
	if (x->op_count == 1 && x->operands[0].type == X86_OP_IMM) {
		r.flags |= F_TARGET;
		r.ref = (uint64_t)x->operands[0].imm;
	} else if (slot) {
		r.flags |= F_SLOT;
		r.ref = slot;
	}
	return r;
}

/* The height change at the call at @addr: 0, or -ENOENT. */
static int call_delta(struct sweep *w, uint64_t addr, int64_t *delta)
{
	struct cfi_regs r0 = { PROBE_SP, PROBE_BP0, addr };
	struct cfi_regs r1 = { PROBE_SP, PROBE_BP1, addr };
	uint64_t c0, c1;
	struct regs_state *st = &w->st;

	if (!module__cfa(w->m, addr, &r0, &c0) &&
	    !module__cfa(w->m, addr, &r1, &c1)) {
		if (c0 == c1) {			/* CFA = RSP + n */
			*delta = (int64_t)(c0 - PROBE_SP);
			st->sp = -*delta;
			st->sp_ok = true;
		} else if (c0 - PROBE_BP0 == c1 - PROBE_BP1) {	/* RBP + k */
			int64_t bp = -(int64_t)(c0 - PROBE_BP0);

			if (st->bp_ok && st->bp != bp)
				st->sp_ok = false;	/* lost track */
			st->bp = bp;
			st->bp_ok = true;
			if (!st->sp_ok)
				return -ENOENT;
			*delta = -st->sp;
		} else {
			return -ENOENT;
		}
	} else if (st->sp_ok) {			/* no CFI: tracking alone */
		*delta = -st->sp;
	} else {
		return -ENOENT;
	}
	/* a callee's CFA lies below its caller's by at least the return
	 * address; anything else is code this sweep misread */
	return *delta >= 8 ? 0 : -ENOENT;
}

/* Keeps site @c, made through GOT slot @slot (0: none). */
static int push_site(struct sweep *w, struct callsite c, uint64_t slot)
{
	if (grow(&w->out->v, &w->cap, w->out->n + 1, sizeof(*w->out->v),
		 1024) ||
	    grow(&w->got, &w->got_cap, w->out->n + 1, sizeof(*w->got), 1024))
		return -ENOMEM;
	w->got[w->out->n] = slot;
	w->out->v[w->out->n++] = c;
	return 0;
}

static int add_site(struct sweep *w, const struct insn *r)
{
	uint64_t ret = r->addr + r->size;
	uint64_t slot = r->flags & F_SLOT ? r->ref : 0;
	int64_t delta;

	if (!(r->flags & (F_SLOT | F_TARGET))) {	/* indirect */
		if (!w->in_func || call_delta(w, r->addr, &delta))
			return 0;
		return push_site(w, (struct callsite){ ret, w->func,
			CALLSITE_INDIRECT, delta, NULL }, 0);
	}
	if (!slot && r->ref == ret)
		return 0;			/* call next: a PC thunk */
	if (!w->in_func || call_delta(w, r->addr, &delta)) {
		w->out->unknown++;
		return 0;
	}
	return push_site(w, (struct callsite){ ret, w->func,
		slot ? 0 : r->ref, delta, NULL }, slot);
}

static const struct slot_ref *find_ref(const struct slot_ref *v, size_t n,
				       uint64_t addr);

/* Whether @target is where a tail call goes from function @from: a PLT
 * stub, or the start of another function. */
static bool tail_target(struct sweep *w, uint64_t from, uint64_t target)
{
	struct module_func c;

	if (target < w->code_lo || target >= w->code_hi)
		return false;
	if (find_ref(w->stubs, w->nstubs, target))
		return true;
	return !module__function(w->m, target, &c) && c.start == target &&
	       target != from;
}

/* A jump the sweep meets: a tail call where the frame is torn down. */
static int add_tail(struct sweep *w, const struct insn *r)
{
	if (!(r->flags & F_TARGET) || !w->in_func || !w->st.sp_ok ||
	    w->st.sp != -8 || !tail_target(w, w->func, r->ref))
		return 0;
	return push_site(w, (struct callsite){ r->addr + r->size, w->func,
		r->ref, CALLSITE_TAIL, NULL }, 0);
}

/* Function boundaries: the state restarts at each function's entry. */
static void enter(struct sweep *w, uint64_t addr)
{
	struct module_func f;

	if (module__function(w->m, addr, &f)) {
		w->in_func = false;
		return;
	}
	if (w->in_func && f.start == w->func)
		return;
	w->in_func = true;
	w->func = f.start;
	w->st = (struct regs_state){ .sp_ok = addr == f.start, .sp = -8 };
	w->body = (struct regs_state){ 0 };
	w->after_exit = w->guessed = false;
}

static int sweep_pass(struct sweep *w)
{
	struct target *t;
	int ret = 0;

	w->in_func = false;
	w->changed = false;
	for (size_t i = 0; i < w->ninsns && !ret; i++) {
		const struct insn *r = &w->insns[i];

		if (r->kind == K_BAD) {	/* padding or data */
			w->in_func = false;
			continue;
		}
		if (r->kind == K_ENDBR)
			w->endbr_end = r->addr + r->size;
		else if (!w->pass && r->kind == K_JMP &&
			 (ret = note_stub(w, r)))
			break;
		enter(w, r->addr);
		if (!w->in_func)
			continue;
		/* a function's entry starts afresh, whatever jumps there */
		t = r->addr == w->func ? NULL : find_target(w, r->addr);
		if (t && (w->after_exit || w->guessed))
			w->st = t->st;
		else if (t)
			w->st = merge(w->st, t->st);
		else if (w->after_exit)
			w->st = w->body;
		/* a block after an exit that no jump is known to reach
		 * (padding, a loop entered from below): the body's state,
		 * until a target says otherwise */
		w->guessed = !t && (w->after_exit || w->guessed);
		w->after_exit = false;
		if ((r->flags & F_JUMP) && (ret = note_jump(w, r)))
			break;
		if (r->kind == K_CALL) {
			ret = add_site(w, r);
			w->body = w->st;
		} else if (r->kind == K_JMP || r->kind == K_EXIT) {
			if (r->kind == K_JMP && (ret = add_tail(w, r)))
				break;
			w->after_exit = true;
		} else {
			struct regs_state before = w->st;

			step(&w->st, r);
			/* the body's state: as long as the stack does not
			 * shrink (an epilogue's pop, add, leave) */
			if (w->st.sp_ok && before.sp_ok &&
			    w->st.sp <= before.sp)
				w->body = w->st;
		}
	}
	return ret;
}

/* The instructions of [@vaddr, +@size) into w->insns, each byte that
 * does not decode as one of its own (resynchronising). */
static int decode(struct sweep *w, uint64_t vaddr, const uint8_t *code,
		  size_t size)
{
	cs_insn *in = w->d->malloc(w->cs);
	const uint8_t *p = code;
	uint64_t addr = vaddr;

	if (!in)
		return -ENOMEM;
	w->ninsns = 0;
	while (size) {
		if (grow(&w->insns, &w->insns_cap, w->ninsns + 1,
			 sizeof(*w->insns), 1024)) {
			w->d->free(in, 1);
			return -ENOMEM;
		}
		if (w->d->disasm_iter(w->cs, &p, &size, &addr, in)) {
			w->insns[w->ninsns++] = classify(in);
			continue;
		}
		w->insns[w->ninsns++] = (struct insn){ .addr = addr,
			.size = 1, .kind = K_BAD };
		p++;
		size--;
		addr++;
	}
	w->d->free(in, 1);
	return 0;
}

static int sweep_section(void *arg, uint64_t vaddr, const uint8_t *code,
			 size_t size)
{
	struct sweep *w = arg;
	size_t n = w->out->n, unknown = w->out->unknown;
	int ret = decode(w, vaddr, code, size);

	for (int pass = 0; pass < SWEEP_PASSES && !ret; pass++) {
		w->out->n = n;		/* the last pass's sites stand */
		w->out->unknown = unknown;
		w->pass = pass;
		ret = sweep_pass(w);
		if (!w->changed)
			break;
	}
	return ret;
}

static int cmp_site(const void *a, const void *b)
{
	const struct callsite *x = a, *y = b;

	return x->ret < y->ret ? -1 : x->ret > y->ret;
}

static int cmp_ref(const void *a, const void *b)
{
	const struct slot_ref *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static const struct slot_ref *find_ref(const struct slot_ref *v, size_t n,
				       uint64_t addr)
{
	size_t lo = LOWER_BOUND((size_t)0, n, i, v[i].addr < addr);

	return lo < n && v[lo].addr == addr ? &v[lo] : NULL;
}

/* @addr, held by the module's code, data or relocations: a taken
 * function's start, if it is one (finish_taken()). */
static int note_taken(struct sweep *w, uint64_t addr)
{
	if (addr < w->code_lo || addr >= w->code_hi)
		return 0;
	if (grow(&w->taken, &w->taken_cap, w->ntaken + 1, sizeof(*w->taken),
		 1024))
		return -ENOMEM;
	w->taken[w->ntaken++] = addr;
	return 0;
}

static int on_dynamic(void *arg, enum module_dyn kind, uint64_t addr,
		      const char *name)
{
	struct sweep *w = arg;
	size_t len;
	int ret;

	if (kind == MODULE_POINTER)
		return note_taken(w, addr);
	len = strnlen(name, NAME_MAX_BYTES - 1);
	if (grow(&w->names, &w->names_cap, w->names_len + len + 1, 1, 4096))
		return -ENOMEM;
	ret = kind == MODULE_IMPORT ?
	      add_ref(&w->imports, &w->nimports, &w->imports_cap, addr,
		      w->names_len) :
	      add_ref(&w->exports, &w->nexports, &w->exports_cap, addr,
		      w->names_len);
	if (ret)
		return ret;
	memcpy(w->names + w->names_len, name, len);
	w->names[w->names_len + len] = '\0';
	w->names_len += len + 1;
	return 0;
}

static int cmp_export(const void *a, const void *b)
{
	const struct callsite_export *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->addr > y->addr) - (x->addr < y->addr);
}

/* Names the symbol of each call through a GOT slot, makes a call
 * through a slot no relocation names indirect (a function pointer in
 * the module's data; bytes that only looked like such a call read
 * outside it, and are dropped), and lists the exports. */
static int link_names(struct sweep *w, struct callsites *out)
{
	size_t kept = 0;

	if (w->nstubs)
		qsort(w->stubs, w->nstubs, sizeof(*w->stubs), cmp_ref);
	if (w->nimports)
		qsort(w->imports, w->nimports, sizeof(*w->imports), cmp_ref);
	for (size_t i = 0; i < out->n; i++) {
		struct callsite c = out->v[i];
		uint64_t slot = w->got[i];
		const struct slot_ref *r;

		if (!slot && (r = find_ref(w->stubs, w->nstubs, c.callee)))
			slot = r->val;
		r = slot ? find_ref(w->imports, w->nimports, slot) : NULL;
		if (r)
			c.import = w->names + r->val;
		else if (w->got[i] && (w->got[i] < w->data_lo ||
					 w->got[i] + 8 > w->data_hi))
			continue;
		else if (w->got[i])
			c.callee = CALLSITE_INDIRECT;
		out->v[kept++] = c;
	}
	out->n = kept;
	out->exports = malloc((w->nexports ? w->nexports : 1) *
			      sizeof(*out->exports));
	if (!out->exports)
		return -ENOMEM;
	for (size_t i = 0; i < w->nexports; i++)
		out->exports[i] = (struct callsite_export){
			w->exports[i].addr, w->names + w->exports[i].val };
	out->nexports = w->nexports;
	if (out->nexports)
		qsort(out->exports, out->nexports, sizeof(*out->exports),
		      cmp_export);
	out->names = w->names;
	w->names = NULL;
	return 0;
}

/* ---- the byte scan ---------------------------------------------------- */

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* The bytes of the memory or register operand whose ModRM byte is at
 * @p (ModRM, SIB, displacement), or 0 when @avail bytes do not hold
 * them. */
static unsigned modrm_len(const uint8_t *p, size_t avail)
{
	unsigned mod = p[0] >> 6, rm = p[0] & 7, n = 1;

	if (mod != 3 && rm == 4) {		/* SIB */
		if (avail < 2)
			return 0;
		n++;
		if (mod == 0 && (p[1] & 7) == 5)
			n += 4;
	}
	if (mod == 1)
		n += 1;
	else if (mod == 2 || (mod == 0 && rm == 5))
		n += 4;
	return n <= avail ? n : 0;
}

/* The addresses the instruction that may start at @p (@avail bytes
 * there, at @at) puts in a register or memory: "lea disp(%rip)", and
 * in position-dependent code "mov $imm32" (B8+r, C7 /0) and "push
 * $imm32".  A byte that only looks like one costs a spurious taken
 * function at most, and only when it hits one's start. */
static int scan_taken(struct sweep *w, uint64_t at, const uint8_t *p,
		      size_t avail)
{
	unsigned len;

	if (p[0] == 0x8d && (p[1] & 0xc7) == 0x05 && avail >= 6)
		return note_taken(w, at + 6 +
				  (uint64_t)(int64_t)(int32_t)le32(p + 2));
	if (!w->fixed)
		return 0;
	if ((p[0] >= 0xb8 && p[0] <= 0xbf) || p[0] == 0x68)
		return note_taken(w, le32(p + 1));
	if (p[0] == 0xc7 && !(p[1] >> 3 & 7) &&
	    (len = modrm_len(p + 1, avail - 1)) && 1 + len + 4 <= avail)
		return note_taken(w, le32(p + 1 + len));
	return 0;
}

static int cmp_start(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The taken functions of @out: the starts of functions among the
 * addresses noted. */
static int finish_taken(struct sweep *w, struct callsites *out)
{
	size_t k = 0;

	if (radix__sort(w->taken, w->ntaken, sizeof(*w->taken), 0, false))
		qsort(w->taken, w->ntaken, sizeof(*w->taken), cmp_start);
	for (size_t i = 0; i < w->ntaken; i++) {
		struct module_func f;

		if ((k && w->taken[k - 1] == w->taken[i]) ||
		    module__function(w->m, w->taken[i], &f) ||
		    f.start != w->taken[i])
			continue;
		w->taken[k++] = w->taken[i];
	}
	out->taken = w->taken;
	out->ntaken = k;
	w->taken = NULL;
	return 0;
}

/* A data section: every aligned word that points into the code. */
static int data_section(void *arg, uint64_t vaddr, const uint8_t *data,
			size_t size)
{
	struct sweep *w = arg;
	int ret = 0;

	if (!w->data_hi || vaddr < w->data_lo)
		w->data_lo = vaddr;
	if (vaddr + size > w->data_hi)
		w->data_hi = vaddr + size;
	for (size_t off = (8 - vaddr % 8) % 8; off + 8 <= size && !ret;
	     off += 8)
		ret = note_taken(w, le64(data + off));
	return ret;
}

/* PLT stubs: "jmp *disp(%rip)" at an 8-byte boundary, after an endbr64
 * and a bnd prefix or not (.plt, .plt.sec, .plt.got). */
static int scan_stubs(struct sweep *w, uint64_t vaddr, const uint8_t *code,
		      size_t size)
{
	int ret = 0;

	for (size_t off = (8 - vaddr % 8) % 8; off + 6 <= size && !ret;
	     off += 8) {
		size_t j = off;

		if (j + 10 <= size && !memcmp(code + j, "\xf3\x0f\x1e\xfa", 4))
			j += 4;
		if (code[j] == 0xf2 && j + 7 <= size)
			j++;
		if (code[j] != 0xff || code[j + 1] != 0x25 || j + 6 > size)
			continue;
		ret = add_ref(&w->stubs, &w->nstubs, &w->stubs_cap, vaddr + off,
			      vaddr + j + 6 + (uint64_t)(int64_t)(int32_t)
			      le32(code + j + 2));
	}
	return ret;
}

/* The height change at a call at @addr when the CFA rule there is
 * RSP's: 0; 1 when it is RBP's or there is none (the function is to be
 * swept); -ENOENT when no change holds. */
static int rsp_delta(struct sweep *w, uint64_t addr, int64_t *delta)
{
	struct cfi_regs r0 = { PROBE_SP, PROBE_BP0, addr };
	struct cfi_regs r1 = { PROBE_SP, PROBE_BP1, addr };
	uint64_t c0, c1;

	if (module__cfa(w->m, addr, &r0, &c0) ||
	    module__cfa(w->m, addr, &r1, &c1) || c0 != c1)
		return 1;
	*delta = (int64_t)(c0 - PROBE_SP);
	return *delta >= 8 ? 0 : -ENOENT;
}

/* @at, in function @func, is where an instruction starts: the end of a
 * call the scan found.  indirect_at() decodes from there on. */
static void boundary(struct sweep *w, uint64_t func, uint64_t at)
{
	if (w->cur_func != func || w->cur_at < at) {
		w->cur_func = func;
		w->cur_at = at;
	}
}

/* Functions the scan hands to the sweep, by start. */
struct to_sweep {
	uint64_t *v;
	size_t n, cap;
};

/* Hands function @start to the sweep. */
static int hand_over(struct to_sweep *ts, uint64_t start)
{
	if (grow(&ts->v, &ts->cap, ts->n + 1, sizeof(*ts->v), 64))
		return -ENOMEM;
	ts->v[ts->n++] = start;
	return 0;
}

/* Call @c the byte scan found at @addr (through GOT slot @slot, or 0),
 * its height change from the CFI: kept when the rule there is RSP's,
 * its function handed to the sweep when it is RBP's, counted as left
 * out when none holds. */
static int scan_push(struct sweep *w, struct to_sweep *ts, uint64_t addr,
		     struct callsite c, uint64_t slot)
{
	int r = rsp_delta(w, addr, &c.delta);

	if (r < 0) {
		w->out->unknown++;
		return 0;
	}
	if (r > 0)
		return hand_over(ts, c.caller);
	boundary(w, c.caller, c.ret);
	return push_site(w, c, slot);
}

/* One call the byte scan found at @addr, @len bytes long, to @target
 * (E8) or through GOT slot @slot (FF 15). */
static int scan_site(struct sweep *w, struct to_sweep *ts, uint64_t addr,
		     unsigned len, uint64_t target, uint64_t slot)
{
	struct module_func f, c;

	/* most E8 bytes are not calls: their "target" leaves the code */
	if (!slot && (target < w->code_lo || target >= w->code_hi))
		return 0;
	if (module__function(w->m, addr, &f))
		return 0;			/* not in any function */
	if (!slot && !find_ref(w->stubs, w->nstubs, target) &&
	    (module__function(w->m, target, &c) || c.start != target))
		return 0;	/* not a function's start: not a call */
	if (ts->n && ts->v[ts->n - 1] == f.start)
		return 0;			/* swept */
	return scan_push(w, ts, addr, (struct callsite){ addr + len, f.start,
		slot ? 0 : target, 0, NULL }, slot);
}

/*
 * Whether the FF at @at (in function @f, section [@vaddr, +@size) at
 * @code) is the opcode of a call instruction, decoding the function
 * from its start: FF /2 bytes are common inside other instructions
 * (a backward call's rel32 ends in FF, and a "push %rax" after it
 * reads as "call *disp8(%rax)": a byte scan of cc1plus found 21,873
 * where objdump finds 13,987).  Lengths alone, without Capstone's
 * details, and from the end of the last call the scan found before it
 * in the function (boundary()), else from the function's start: each
 * byte decoded once at most.  The return address into *@ret.
 */
static bool indirect_at(struct sweep *w, const struct module_func *f,
			uint64_t vaddr, const uint8_t *code, size_t size,
			uint64_t at, uint64_t *ret)
{
	if (w->cur_func != f->start || w->cur_at < vaddr) {
		w->cur_func = f->start;
		w->cur_at = f->start > vaddr ? f->start : vaddr;
	}
	while (w->cur_at <= at) {
		const uint8_t *p = code + (w->cur_at - vaddr);
		size_t left = size - (w->cur_at - vaddr);
		uint64_t from = w->cur_at, addr = from;

		if (!w->d->disasm_iter(w->lengths, &p, &left, &addr,
				       w->insn)) {
			w->cur_at = from + 1;
			continue;
		}
		w->cur_at = addr;
		if (addr > at) {	/* an indirect call's, not E8 rel32's */
			*ret = addr;
			return w->insn->id == X86_INS_CALL &&
			       w->insn->bytes[0] != 0xe8;
		}
	}
	return false;
}

/* An indirect call the byte scan may have found at @addr (FF /2; see
 * indirect_at()). */
static int scan_indirect(struct sweep *w, struct to_sweep *ts,
			 uint64_t vaddr, const uint8_t *code, size_t size,
			 uint64_t addr)
{
	struct module_func f;
	uint64_t ret;

	if (module__function(w->m, addr, &f) ||
	    (ts->n && ts->v[ts->n - 1] == f.start) ||
	    !indirect_at(w, &f, vaddr, code, size, addr, &ret))
		return 0;
	return scan_push(w, ts, addr, (struct callsite){ ret, f.start,
		CALLSITE_INDIRECT, 0, NULL }, 0);
}

/* A jump the byte scan found at @addr (E9 rel32) to @target: a tail
 * call where the rule there is "CFA = RSP + 8". */
static int scan_tail(struct sweep *w, const struct to_sweep *ts,
		     uint64_t addr, uint64_t target)
{
	struct module_func f;
	int64_t delta;

	/* most E9 bytes are not jumps: their "target" leaves the code */
	if (target < w->code_lo || target >= w->code_hi ||
	    module__function(w->m, addr, &f) ||
	    (ts->n && ts->v[ts->n - 1] == f.start) ||
	    !tail_target(w, f.start, target) ||
	    rsp_delta(w, addr, &delta) || delta != 8)
		return 0;
	boundary(w, f.start, addr + 5);
	return push_site(w, (struct callsite){ addr + 5, f.start, target,
		CALLSITE_TAIL, NULL }, 0);
}

/* The end of function @start: the first address past it where another
 * function (or none) begins, by bisection within [@start, @limit). */
static uint64_t function_end(const struct module *m, uint64_t start,
			     uint64_t limit)
{
	struct module_func f;

	return LOWER_BOUND(start + 1, limit, a,
			   !module__function(m, a, &f) && f.start == start);
}

/* Whether @ts (sorted) lists function @start. */
static bool listed(const struct to_sweep *ts, uint64_t start)
{
	return ts->n && bsearch(&start, ts->v, ts->n, sizeof(*ts->v),
				cmp_start);
}

/* The sites of the functions @ts lists (in section [@vaddr, +@size)),
 * swept with Capstone, dropping what the scan kept of them. */
static int sweep_listed(struct sweep *w, struct to_sweep *ts,
			size_t first, uint64_t vaddr, const uint8_t *code,
			size_t size)
{
	size_t kept = first;
	int ret = 0;

	/* in address order as the scan met them, unless symbols overlap */
	qsort(ts->v, ts->n, sizeof(*ts->v), cmp_start);
	for (size_t i = first; i < w->out->n; i++) {
		if (!listed(ts, w->out->v[i].caller)) {
			w->got[kept] = w->got[i];
			w->out->v[kept++] = w->out->v[i];
		}
	}
	w->out->n = kept;
	for (size_t j = 0; j < ts->n && !ret; j++) {
		uint64_t start = ts->v[j], end;

		if (start < vaddr || start >= vaddr + size)
			continue;
		end = function_end(w->m, start, vaddr + size);
		ret = sweep_section(w, start, code + (start - vaddr),
				    end - start);
	}
	/* the sweep notes stubs too: sorted again for find_ref() */
	if (w->nstubs)
		qsort(w->stubs, w->nstubs, sizeof(*w->stubs), cmp_ref);
	return ret;
}

/* One executable section: its calls by byte scan, the functions whose
 * rules need it swept. */
static int scan_section(void *arg, uint64_t vaddr, const uint8_t *code,
			size_t size)
{
	struct sweep *w = arg;
	struct to_sweep ts = { 0 };
	size_t first = w->out->n;
	int ret = 0;

	for (size_t i = 0; i + 5 <= size && !ret; i++) {
		uint64_t at = vaddr + i;

		if ((ret = scan_taken(w, at, code + i, size - i)))
			break;
		if (code[i] == 0xe8)
			ret = scan_site(w, &ts, at, 5, at + 5 +
					(uint64_t)(int64_t)(int32_t)
					le32(code + i + 1), 0);
		else if (code[i] == 0xe9)
			ret = scan_tail(w, &ts, at, at + 5 +
					(uint64_t)(int64_t)(int32_t)
					le32(code + i + 1));
		else if (code[i] == 0xff && code[i + 1] == 0x15 &&
			 i + 6 <= size)
			ret = scan_site(w, &ts, at, 6, 0, at + 6 +
					(uint64_t)(int64_t)(int32_t)
					le32(code + i + 2));
		else if (code[i] == 0xff && (code[i + 1] >> 3 & 7) == 2)
			ret = scan_indirect(w, &ts, vaddr, code, size, at);
	}
	if (!ret && ts.n)
		ret = sweep_listed(w, &ts, first, vaddr, code, size);
	free(ts.v);
	return ret;
}

/* Every section's stubs first: a call may reach one in another. */
static int stubs_section(void *arg, uint64_t vaddr, const uint8_t *code,
			 size_t size)
{
	struct sweep *w = arg;

	if (!w->code_hi || vaddr < w->code_lo)
		w->code_lo = vaddr;
	if (vaddr + size > w->code_hi)
		w->code_hi = vaddr + size;
	return scan_stubs(w, vaddr, code, size);
}

int callsites__scan(struct module *m, struct callsites *out)
{
	struct sweep w = { .m = m, .out = out, .fixed = module__fixed(m) };
	const char *why;
	int ret;

	*out = (struct callsites){ 0 };
	w.d = disasm__capstone(&why);
	if (!w.d || w.d->open(CS_ARCH_X86, CS_MODE_64, &w.cs) != CS_ERR_OK)
		return -ENOTSUP;
	w.d->option(w.cs, CS_OPT_DETAIL, CS_OPT_ON);
	if (w.d->open(CS_ARCH_X86, CS_MODE_64, &w.lengths) != CS_ERR_OK) {
		w.d->close(&w.cs);
		return -ENOTSUP;
	}
	if (!(w.insn = w.d->malloc(w.lengths))) {
		w.d->close(&w.lengths);
		w.d->close(&w.cs);
		return -ENOMEM;
	}
	ret = module__code(m, stubs_section, &w);
	if (!ret && w.nstubs)
		qsort(w.stubs, w.nstubs, sizeof(*w.stubs), cmp_ref);
	if (!ret)
		ret = module__code(m, scan_section, &w);
	w.d->free(w.insn, 1);
	w.d->close(&w.lengths);
	w.d->close(&w.cs);
	if (!ret)
		ret = module__dynamic(m, on_dynamic, &w);
	if (!ret)
		ret = module__data(m, data_section, &w);
	if (!ret)
		ret = link_names(&w, out);
	if (!ret)
		ret = finish_taken(&w, out);
	free(w.targets);
	free(w.insns);
	hindex__exit(&w.target_index);
	free(w.stubs);
	free(w.got);
	free(w.imports);
	free(w.exports);
	free(w.names);
	free(w.taken);
	if (ret) {
		callsites__exit(out);
		return ret;
	}
	/* by radix: qsort() of cc1plus's 400,000 sites was a tenth of
	 * reading its calls */
	if (radix__sort(out->v, out->n, sizeof(*out->v),
			offsetof(struct callsite, ret), false))
		qsort(out->v, out->n, sizeof(*out->v), cmp_site);
	return 0;
}

int callsites__export(const struct callsites *cs, const char *name,
		      uint64_t *addr)
{
	size_t lo = LOWER_BOUND((size_t)0, cs->nexports, i,
				strcmp(cs->exports[i].name, name) < 0);

	if (lo == cs->nexports || strcmp(cs->exports[lo].name, name))
		return -ENOENT;
	*addr = cs->exports[lo].addr;
	return 0;
}

void callsites__exit(struct callsites *cs)
{
	if (!cs)
		return;
	free(cs->v);
	free(cs->exports);
	free(cs->names);
	free(cs->taken);
	*cs = (struct callsites){ 0 };
}

const struct callsite *callsites__find(const struct callsites *cs,
				       uint64_t ret)
{
	size_t lo = LOWER_BOUND((size_t)0, cs->n, i, cs->v[i].ret < ret);

	return lo < cs->n && cs->v[lo].ret == ret ? &cs->v[lo] : NULL;
}
