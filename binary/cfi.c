/*
 * cfi.c - CFA rules from .eh_frame/.debug_frame through libdwarf.
 *
 * Invariants: fdes[] is sorted by lo and ranges do not overlap (when a
 * broken producer emits overlapping FDEs, the later one is dropped); a
 * row array, once built, is sorted by pc and covers [fde.lo, fde.hi).
 * Expression rules point into libdwarf's copy of the section, which lives
 * as long as the Dwarf_Debug does.
 */
#include "binary/cfi.h"
#include "common/grow.h"

#include <errno.h>
#include <libdwarf/dwarf.h>
#include <libdwarf/libdwarf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define DWARF_REG_BP 6
#define DWARF_REG_SP 7
#define DWARF_REG_IP 16

/* No producer emits more rows than bytes of code; cap a lying table. */
#define MAX_ROWS_PER_FDE 65536

enum row_kind { ROW_REG_OFFSET, ROW_EXPR, ROW_UNSUPPORTED };

struct cfa_row {
	uint64_t pc;
	int64_t offset;		/* ROW_REG_OFFSET */
	const uint8_t *expr;	/* ROW_EXPR: into libdwarf's section copy */
	uint32_t expr_len;
	uint16_t reg;
	uint8_t kind;
};

struct fde_entry {
	uint64_t lo, hi;
	Dwarf_Fde fde;
	struct cfa_row *rows;	/* NULL until first use */
	uint32_t nrows;
	bool broken;		/* rows could not be built */
};

struct cfi {
	Dwarf_Debug dbg;
	Dwarf_Cie *cie_data;
	Dwarf_Fde *fde_data;
	Dwarf_Signed cie_count, fde_count;
	struct fde_entry *fdes;
	size_t nfdes;
};

static int cmp_fde(const void *a, const void *b)
{
	const struct fde_entry *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

struct cfi *cfi__open(Elf *elf)
{
	Dwarf_Error err = NULL;
	struct cfi *cfi = calloc(1, sizeof(*cfi));
	int rc;

	if (!cfi)
		return NULL;
	if (dwarf_elf_init(elf, DW_DLC_READ, NULL, NULL, &cfi->dbg, &err) !=
	    DW_DLV_OK)
		goto out_free;
	/* Rule table large enough for every x86-64 DWARF register. */
	dwarf_set_frame_rule_table_size(cfi->dbg, 128);
	rc = dwarf_get_fde_list_eh(cfi->dbg, &cfi->cie_data, &cfi->cie_count,
				   &cfi->fde_data, &cfi->fde_count, &err);
	if (rc != DW_DLV_OK) {
		if (rc == DW_DLV_ERROR)
			dwarf_dealloc(cfi->dbg, err, DW_DLA_ERROR);
		err = NULL;
		rc = dwarf_get_fde_list(cfi->dbg, &cfi->cie_data,
					&cfi->cie_count, &cfi->fde_data,
					&cfi->fde_count, &err);
	}
	if (rc != DW_DLV_OK || cfi->fde_count <= 0)
		goto out_finish;
	cfi->fdes = calloc((size_t)cfi->fde_count, sizeof(*cfi->fdes));
	if (!cfi->fdes)
		goto out_finish;
	for (Dwarf_Signed i = 0; i < cfi->fde_count; i++) {
		Dwarf_Addr lo;
		Dwarf_Unsigned len;

		if (dwarf_get_fde_range(cfi->fde_data[i], &lo, &len, NULL, NULL,
					NULL, NULL, NULL, &err) != DW_DLV_OK ||
		    len == 0 || lo + len < lo)
			continue;
		cfi->fdes[cfi->nfdes++] = (struct fde_entry){
			.lo = lo, .hi = lo + len, .fde = cfi->fde_data[i] };
	}
	qsort(cfi->fdes, cfi->nfdes, sizeof(*cfi->fdes), cmp_fde);
	size_t kept = 0;
	for (size_t i = 0; i < cfi->nfdes; i++) {
		if (kept && cfi->fdes[i].lo < cfi->fdes[kept - 1].hi)
			continue;
		cfi->fdes[kept++] = cfi->fdes[i];
	}
	cfi->nfdes = kept;
	if (!kept)
		goto out_finish;
	return cfi;

out_finish:
	cfi__close(cfi);
	return NULL;
out_free:
	free(cfi);
	return NULL;
}

void cfi__close(struct cfi *cfi)
{
	if (!cfi)
		return;
	for (size_t i = 0; i < cfi->nfdes; i++)
		free(cfi->fdes[i].rows);
	free(cfi->fdes);
	if (cfi->fde_data)
		dwarf_fde_cie_list_dealloc(cfi->dbg, cfi->cie_data,
					   cfi->cie_count, cfi->fde_data,
					   cfi->fde_count);
	dwarf_finish(cfi->dbg, NULL);
	free(cfi);
}

size_t cfi__nr_fdes(const struct cfi *cfi)
{
	return cfi ? cfi->nfdes : 0;
}

static struct fde_entry *find_fde(const struct cfi *cfi, uint64_t vaddr)
{
	size_t lo = 0, hi = cfi ? cfi->nfdes : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		struct fde_entry *f = &cfi->fdes[mid];

		if (vaddr < f->lo)
			hi = mid;
		else if (vaddr >= f->hi)
			lo = mid + 1;
		else
			return f;
	}
	return NULL;
}

int cfi__fde_range(const struct cfi *cfi, uint64_t vaddr, uint64_t *lo,
		   uint64_t *hi)
{
	const struct fde_entry *f = find_fde(cfi, vaddr);

	if (!f)
		return -ENOENT;
	*lo = f->lo;
	*hi = f->hi;
	return 0;
}

/* Walks the FDE's rows once with libdwarf and keeps the CFA column. */
static int build_rows(struct cfi *cfi, struct fde_entry *f)
{
	size_t cap = 0, n = 0;
	struct cfa_row *rows = NULL;
	Dwarf_Addr pc = f->lo;
	int ret = -EINVAL;

	while (pc < f->hi && n < MAX_ROWS_PER_FDE) {
		Dwarf_Small vtype = 0;
		Dwarf_Signed off_rel = 0, reg = 0, off = 0;
		Dwarf_Ptr block = NULL;
		Dwarf_Addr row_pc = 0, next_pc = 0;
		Dwarf_Bool more = 0;
		Dwarf_Error err = NULL;
		struct cfa_row r = { 0 };

		if (dwarf_get_fde_info_for_cfa_reg3_b(f->fde, pc, &vtype,
				&off_rel, &reg, &off, &block, &row_pc, &more,
				&next_pc, &err) != DW_DLV_OK) {
			if (err)
				dwarf_dealloc(cfi->dbg, err, DW_DLA_ERROR);
			goto out;
		}
		r.pc = pc;
		if (vtype == DW_EXPR_OFFSET && off_rel &&
		    (reg == DWARF_REG_SP || reg == DWARF_REG_BP)) {
			r.kind = ROW_REG_OFFSET;
			r.reg = (uint16_t)reg;
			r.offset = off;
		} else if (vtype == DW_EXPR_EXPRESSION && block && off > 0 &&
			   off < 4096) {
			r.kind = ROW_EXPR;
			r.expr = block;
			r.expr_len = (uint32_t)off;
		} else {
			r.kind = ROW_UNSUPPORTED;
		}
		if (grow(&rows, &cap, n + 1, sizeof(*rows), 8)) {
			ret = -ENOMEM;
			goto out;
		}
		rows[n++] = r;
		if (!more || next_pc <= pc)
			break;
		pc = next_pc;
	}
	f->rows = rows;
	f->nrows = (uint32_t)n;
	return 0;
out:
	free(rows);
	return ret;
}

static uint64_t reg_value(const struct cfi_regs *regs, uint64_t reg, bool *ok)
{
	switch (reg) {
	case DWARF_REG_SP: return regs->sp;
	case DWARF_REG_BP: return regs->bp;
	case DWARF_REG_IP: return regs->ip;
	default: *ok = false; return 0;
	}
}

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

#define STACK_MAX 16

int cfi__eval_expr(const uint8_t *expr, size_t len,
		   const struct cfi_regs *regs, uint64_t *value)
{
	const uint8_t *p = expr, *end = expr + len;
	uint64_t st[STACK_MAX], a, b;
	int sp = 0;
	bool ok = true;

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
			a = reg_value(regs, (uint64_t)(op - DW_OP_breg0), &ok);
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
				a = reg_value(regs, u, &ok);
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
			default:
				/* deref and friends need the target's memory. */
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

int cfi__cfa(struct cfi *cfi, uint64_t vaddr, const struct cfi_regs *regs,
	     uint64_t *cfa)
{
	struct fde_entry *f = find_fde(cfi, vaddr);
	const struct cfa_row *r;
	size_t lo, hi;

	if (!f)
		return -ENOENT;
	if (!f->rows && !f->broken) {
		int ret = build_rows(cfi, f);

		if (ret == -ENOMEM)
			return ret;
		if (ret)
			f->broken = true;
	}
	if (f->broken || !f->nrows)
		return -EINVAL;
	/* Last row with pc <= vaddr. */
	lo = 0;
	hi = f->nrows;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->rows[mid].pc <= vaddr)
			lo = mid;
		else
			hi = mid;
	}
	r = &f->rows[lo];
	switch (r->kind) {
	case ROW_REG_OFFSET:
		*cfa = (r->reg == DWARF_REG_SP ? regs->sp : regs->bp) +
		       (uint64_t)r->offset;
		return 0;
	case ROW_EXPR:
		return cfi__eval_expr(r->expr, r->expr_len, regs, cfa);
	default:
		return -ENOTSUP;
	}
}
