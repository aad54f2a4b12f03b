/*
 * test_cfi.c - CFA rules from this test binary's own .eh_frame, checked
 * against __builtin_dwarf_cfa() at the same instruction, in a function
 * with a big frame, a leaf, and a function using alloca (CFA from BP);
 * and the DWARF expression evaluator on the PLT expression.
 */
#include <alloca.h>
#include <errno.h>
#include <libdwarf/dwarf.h>

#include "binary/module.h"
#include "tests/tap.h"
#include "tests/unit/selfregs.h"

volatile int sink;

__attribute__((noinline)) static void big_frame(struct capture *c)
{
	volatile char pad[300];

	pad[0] = 1;
	CAPTURE(c);
	sink += pad[0];
}

__attribute__((noinline)) static void leaf(struct capture *c)
{
	CAPTURE(c);
}

__attribute__((noinline)) static void dynamic_frame(struct capture *c, int n)
{
	volatile char *p = alloca((size_t)n);

	p[0] = 1;
	CAPTURE(c);
	sink += p[0];
}

static void check(struct module *m, const char *what, const struct capture *c)
{
	uint64_t start, pgoff, vaddr, cfa = 0;
	struct cfi_regs regs = { c->sp, c->bp, c->ip };
	int ret;

	if (self_mapping(c->ip, &start, &pgoff) ||
	    module__vaddr(m, c->ip - start + pgoff, &vaddr)) {
		ok(0, "%s: ip maps into the executable", what);
		return;
	}
	ret = module__cfa(m, vaddr, &regs, &cfa);
	is_int(ret, 0, "%s: CFA rule found", what);
	is_int(cfa, c->cfa, "%s: CFA equals __builtin_dwarf_cfa", what);
}

static void test_expr(void)
{
	/* The .plt CFA expression GCC/binutils emit for x86-64:
	 * rsp + 8 + ((rip & 15) >= 11 ? 8 : 0) */
	static const uint8_t plt[] = {
		DW_OP_breg7, 8, DW_OP_breg16, 0, DW_OP_lit15, DW_OP_and,
		DW_OP_lit11, DW_OP_ge, DW_OP_lit3, DW_OP_shl, DW_OP_plus };
	static const uint8_t deref[] = { DW_OP_breg7, 0, DW_OP_deref };
	static const uint8_t bad[] = { DW_OP_plus };
	static const uint8_t cut[] = { DW_OP_const4u, 1, 2 };
	struct cfi_regs r = { .sp = 0x1000, .bp = 0, .ip = 0x4020 };
	uint64_t v = 0;

	is_int(cfi__eval_expr(plt, sizeof(plt), &r, &v), 0, "PLT expression evaluates");
	is_int(v, 0x1008, "PLT entry start: CFA = rsp + 8");
	r.ip = 0x402b;
	cfi__eval_expr(plt, sizeof(plt), &r, &v);
	is_int(v, 0x1010, "PLT entry after push: CFA = rsp + 16");
	is_int(cfi__eval_expr(deref, sizeof(deref), &r, &v), -ENOTSUP,
	       "an expression reading memory is unsupported");
	is_int(cfi__eval_expr(bad, sizeof(bad), &r, &v), -EINVAL,
	       "stack underflow is malformed");
	is_int(cfi__eval_expr(cut, sizeof(cut), &r, &v), -EINVAL,
	       "truncated operand is malformed");
}

int main(void)
{
	struct module *m = module__open("/proc/self/exe");
	struct capture c;

	ok(m && !module__error(m), "test binary opens as a module");
	ok(module__has_cfi(m), "test binary has CFI");
	big_frame(&c);
	check(m, "300-byte frame", &c);
	leaf(&c);
	check(m, "leaf", &c);
	dynamic_frame(&c, 1000);
	check(m, "alloca frame", &c);
	dynamic_frame(&c, 40);
	check(m, "alloca frame, other size", &c);
	{
		struct cfi_regs regs = { 0 };
		uint64_t cfa;

		is_int(module__cfa(m, 0x10, &regs, &cfa), -ENOENT,
		       "no FDE below the first function");
	}
	test_expr();
	module__free(m);
	return tap_done();
}
