/*
 * test_cfi.c - CFA rules from this test binary's own .eh_frame, checked
 * against __builtin_dwarf_cfa() at the same instruction, in a function
 * with a big frame, a leaf, and a function using alloca (CFA from BP);
 * the DWARF expression evaluator on the PLT expression, and unwinding
 * steps over a copy of this test's own stack.
 */
#define _GNU_SOURCE
#include <alloca.h>
#include <pthread.h>
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

/*
 * Unwinding this test's own stack: inner() captures its registers and
 * copies the stack above SP; each function on the way records its CFA
 * and return address as GCC sees them; cfi__step must reproduce them
 * frame by frame (middle() uses alloca, so its CFA comes from RBP).
 */
static struct capture u_regs;
static uint8_t u_stack[16384];
static size_t u_size;
static uint64_t u_top;	/* end of this thread's stack */
static uint64_t u_cfa[3], u_ra[3];	/* inner, middle, outer */

/* Reads the whole stack above SP, other frames' redzones included, as
 * the kernel's copy does: not a bug for AddressSanitizer to report. */
__attribute__((noinline, no_sanitize_address)) static void inner(void)
{
	const volatile uint8_t *sp;

	CAPTURE(&u_regs);
	u_size = u_top - u_regs.sp < sizeof(u_stack) ? u_top - u_regs.sp
						      : sizeof(u_stack);
	sp = (const volatile uint8_t *)(uintptr_t)u_regs.sp;
	for (size_t i = 0; i < u_size; i++)
		u_stack[i] = sp[i];
	u_cfa[0] = u_regs.cfa;
	u_ra[0] = (uint64_t)(uintptr_t)__builtin_return_address(0);
	sink++;
}

__attribute__((noinline)) static void middle(int n)
{
	volatile char *p = alloca((size_t)n);

	p[0] = 1;
	inner();
	u_cfa[1] = (uint64_t)(uintptr_t)__builtin_dwarf_cfa();
	u_ra[1] = (uint64_t)(uintptr_t)__builtin_return_address(0);
	sink += p[0];
}

__attribute__((noinline)) static void outer(void)
{
	volatile char pad[100];

	pad[0] = 1;
	middle(500);
	u_cfa[2] = (uint64_t)(uintptr_t)__builtin_dwarf_cfa();
	u_ra[2] = (uint64_t)(uintptr_t)__builtin_return_address(0);
	sink += pad[0];
}

static void test_step(struct module *m)
{
	struct cfi_mem mem = { 0, u_stack, sizeof(u_stack) };
	struct cfi_regs regs;
	struct cfi_step st;
	uint64_t start, pgoff, vaddr;
	static const char *const names[] = { "inner", "middle", "outer" };

	pthread_attr_t a;
	void *addr;
	size_t size;

	pthread_getattr_np(pthread_self(), &a);
	pthread_attr_getstack(&a, &addr, &size);
	pthread_attr_destroy(&a);
	u_top = (uint64_t)(uintptr_t)addr + size;
	outer();
	mem.start = u_regs.sp;
	mem.size = u_size;
	regs = (struct cfi_regs){ u_regs.sp, u_regs.bp, u_regs.ip };
	for (int i = 0; i < 3; i++) {
		if (self_mapping(regs.ip, &start, &pgoff) ||
		    module__vaddr(m, regs.ip - start + pgoff, &vaddr)) {
			ok(0, "%s: pc maps into the executable", names[i]);
			return;
		}
		/* Past the innermost frame the pc is a return address. */
		is_int(module__step(m, i ? vaddr - 1 : vaddr, &regs, &mem, &st),
		       0, "%s: one unwinding step", names[i]);
		is_int(st.cfa, u_cfa[i], "%s: CFA as GCC sees it", names[i]);
		is_int(regs.ip, u_ra[i], "%s: return address as GCC sees it",
		       names[i]);
		ok(!st.signal, "%s: not a signal frame", names[i]);
	}
	/* A copy that stops short: the saved return address is outside. */
	mem.size = 0;
	regs = (struct cfi_regs){ u_regs.sp, u_regs.bp, u_regs.ip };
	self_mapping(regs.ip, &start, &pgoff);
	module__vaddr(m, regs.ip - start + pgoff, &vaddr);
	is_int(module__step(m, vaddr, &regs, &mem, &st), -EFAULT,
	       "stack copy too short: -EFAULT");
	{
		uint64_t v = 0;
		struct cfi_mem small = { 0x1000, u_stack, 16 };

		is_int(cfi__mem_read(&small, 0x1008, &v), 0, "read inside the copy");
		is_int(cfi__mem_read(&small, 0x1009, &v), -EFAULT, "read across its end refused");
		is_int(cfi__mem_read(&small, 0xff8, &v), -EFAULT, "read below its start refused");
		is_int(cfi__mem_read(&small, UINT64_MAX - 3, &v), -EFAULT, "wrapping address refused");
	}
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
	test_step(m);
	module__free(m);
	return tap_done();
}
