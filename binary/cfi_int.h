/*
 * cfi_int.h - private to binary/: what cfi.c (the FDE lists, the rows
 * built on first use, the lookups and the unwinding step) and
 * cfi_program.c (the interpreters of CFA programs and DWARF
 * expressions) share.  cfi.h is the contract.
 */
#ifndef ICPPD_BINARY_CFI_INT_H
#define ICPPD_BINARY_CFI_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "binary/cfi.h"

#define DWARF_REG_BP 6
#define DWARF_REG_SP 7
#define DWARF_REG_IP 16

/* No producer emits more rows than bytes of code; cap a lying table. */
#define MAX_ROWS_PER_FDE 65536

/*
 * One column of a row.  The CFA column uses RULE_REG_OFFSET (reg + offset)
 * and RULE_VAL_EXPR (the expression computes the CFA); register columns
 * use all of them, with DWARF's meanings: RULE_OFFSET and RULE_EXPR give
 * the address where the caller's value is saved, RULE_VAL_OFFSET and
 * RULE_VAL_EXPR the value itself.
 */
enum rule_kind {
	RULE_SAME,		/* the caller's value is the current one */
	RULE_UNDEF,		/* no caller value (outermost frame for RA) */
	RULE_OFFSET,		/* saved at CFA + offset */
	RULE_VAL_OFFSET,	/* is CFA + offset */
	RULE_REG_OFFSET,	/* is register reg + offset */
	RULE_EXPR,		/* saved at the address the expr computes */
	RULE_VAL_EXPR,		/* is what the expr computes */
	RULE_UNSUPPORTED,
};

struct rule {
	int64_t offset;
	const uint8_t *expr;	/* into libdwarf's section copy */
	uint32_t expr_len;
	uint16_t reg;
	uint8_t kind;
};

/*
 * A column as a built row keeps it: 12 bytes where struct rule takes 24,
 * so that a row takes 56 where it took 104 (the 440,000 rows of all of
 * cc1's FDEs: 25 MB, not 46; a daemon builds thousands of FDEs' rows in
 * each few seconds of a build).  An expression is kept by its offset in the
 * section the rows were built from (struct interp's base); a column
 * whose offset does not fit 32 bits, or whose expression lies outside
 * that section, is RULE_UNSUPPORTED (a walk stops there, as at any rule
 * it cannot follow).
 */
struct row_rule {
	int32_t offset;
	uint32_t expr_off;
	uint16_t expr_len;
	uint8_t reg;
	uint8_t kind;
};

/* The columns an x86-64 unwinder needs: CFA, RBP, RSP and the return
 * address.  Other callee-saved registers never feed a CFA rule in code
 * GCC or glibc emit, so they are not tracked. */
struct cfa_row {
	uint64_t pc;
	struct row_rule cfa, bp, sp, ra;
};

/*
 * Rows are built in one pass over the CIE's initial instructions and the
 * FDE's own, by the interpreter below.  (libdwarf answers "the rule at
 * pc" by replaying the FDE from its start, so asking it row by row is
 * quadratic: one crafted 277 KB FDE cost 24 s.)  Only the CFA, RBP, RSP
 * and return-address columns are kept; rules of other registers are
 * parsed and dropped.
 */
struct cfa_state {
	struct rule cfa, bp, sp, ra;
};

struct cie_info {
	uint64_t code_align;
	int64_t data_align;
	uint16_t ra_reg;
	const uint8_t *init;
	size_t init_len;
};

/* remember_state nests this deep in no real producer's output. */
#define STATE_STACK_MAX 16

struct interp {
	struct cfa_state st, *initial, stack[STATE_STACK_MAX];
	int depth;
	uint64_t pc, hi;
	struct cfa_row *rows;
	size_t n, cap;
	const uint8_t *base;	/* the section the program lies in: what a
				 * row's expressions are offsets into */
	size_t base_len;
};

/* Runs CFA instructions [@p, @end) of an FDE or its CIE (@ci) into @in's
 * rows.  0, -EINVAL (a malformed or unsupported program), -E2BIG (past
 * MAX_ROWS_PER_FDE) or -ENOMEM. */
int cfi__run_program(struct interp *in, const struct cie_info *ci,
		     const uint8_t *p, const uint8_t *end);
/* Closes the row open at in->pc up to @next_pc.  0, -E2BIG or -ENOMEM. */
int cfi__emit_row(struct interp *in, uint64_t next_pc);
/* Evaluates DWARF expression @expr (@len bytes) over @regs, reading
 * memory through @mem (may be NULL: no deref); @initial, when not NULL,
 * is pushed first (the CFA, for DW_CFA_expression and
 * DW_CFA_val_expression rules).  0 with the value in *@value, or a
 * negative errno. */
int cfi__eval(const uint8_t *expr, size_t len, const struct cfi_regs *regs,
	      const struct cfi_mem *mem, const uint64_t *initial,
	      uint64_t *value);
/* The value of DWARF register @reg (SP, BP, IP) in @regs; *@ok false
 * for any other. */
uint64_t cfi__reg_value(const struct cfi_regs *regs, uint64_t reg, bool *ok);
/* Logs a memory read of an unwinding step, where @mem asks for it. */
void cfi__log_read(const struct cfi_mem *mem, uint64_t addr, uint64_t value);

#endif
