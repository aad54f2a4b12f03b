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
#include <fcntl.h>
#include <libdwarf/dwarf.h>
#include <gelf.h>
#include <libdwarf/libdwarf.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "binary/module.h"
#include "tests/tap.h"
#include "tests/unit/elfcraft.h"
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

/*
 * The one-pass row builder against libdwarf's own answer (which replays
 * the FDE for each pc) at every pc of every FDE of @path whose CFA rule
 * libdwarf gives as SP or BP + offset.  Returns the number of pcs that
 * differ; *@checked counts the pcs compared.
 */
static size_t against_libdwarf(const char *path, size_t *checked)
{
	struct module *m = module__open(path);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf;
	Dwarf_Debug dbg = NULL;
	Dwarf_Error err = NULL;
	Dwarf_Cie *cies;
	Dwarf_Fde *fdes;
	Dwarf_Signed ncie, nfde;
	size_t bad = 0;

	*checked = 0;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!m || module__error(m) || dwarf_elf_init(elf, DW_DLC_READ, NULL,
			NULL, &dbg, &err) != DW_DLV_OK ||
	    (dwarf_get_fde_list_eh(dbg, &cies, &ncie, &fdes, &nfde, &err) !=
	     DW_DLV_OK &&	/* Go: .debug_frame alone, compressed */
	     dwarf_get_fde_list(dbg, &cies, &ncie, &fdes, &nfde, &err) !=
	     DW_DLV_OK))
		return (size_t)-1;
	dwarf_set_frame_rule_table_size(dbg, 128);
	for (Dwarf_Signed i = 0; i < nfde; i++) {
		Dwarf_Addr lo, pc;
		Dwarf_Unsigned len;

		if (dwarf_get_fde_range(fdes[i], &lo, &len, NULL, NULL, NULL,
					NULL, NULL, &err) != DW_DLV_OK)
			continue;
		for (pc = lo; pc < lo + len && pc < lo + 4096; pc++) {
			Dwarf_Small vt = 0;
			Dwarf_Signed off_rel = 0, reg = 0, off = 0;
			Dwarf_Ptr block;
			Dwarf_Addr row, next;
			Dwarf_Bool more;
			struct cfi_regs regs = { 0x10000, 0x20000, pc };
			uint64_t cfa = 0, want;

			if (dwarf_get_fde_info_for_cfa_reg3_b(fdes[i], pc, &vt,
					&off_rel, &reg, &off, &block, &row,
					&more, &next, &err) != DW_DLV_OK ||
			    vt != DW_EXPR_OFFSET || !off_rel ||
			    (reg != 7 && reg != 6))
				continue;
			want = (reg == 7 ? regs.sp : regs.bp) + (uint64_t)off;
			++*checked;
			if (module__cfa(m, pc, &regs, &cfa) || cfa != want) {
				if (bad++ < 3)
					printf("#   %s: pc 0x%llx: CFA 0x%llx, "
					       "libdwarf 0x%llx\n", path,
					       (unsigned long long)pc,
					       (unsigned long long)cfa,
					       (unsigned long long)want);
			}
		}
	}
	dwarf_fde_cie_list_dealloc(dbg, cies, ncie, fdes, nfde);
	dwarf_finish(dbg, &err);
	elf_end(elf);
	close(fd);
	module__delete(m);
	return bad;
}

/*
 * A crafted FDE of 65,536 rows (def_cfa_offset, advance_loc 1, ...).
 * Asking libdwarf row by row replayed the FDE each time: quadratic, 24 s
 * of CPU for a 277 KB FDE.  One pass takes milliseconds; the child gets
 * 10 s of CPU, a margin of more than 100 on any machine.
 */
#define BIG_ROWS 65536

/* Writes a 4-byte value at *@n and moves past it. */
static void put_u32(uint8_t *eh, size_t *n, uint32_t v)
{
	memcpy(eh + *n, &v, 4);
	*n += 4;
}

static void put_uleb(uint8_t *eh, size_t *n, uint32_t v)
{
	do {
		eh[(*n)++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
}

/* The CIE the crafted tables start with: version 1, "zR", code align 1,
 * data align -8, RA 16, FDE pointers udata4; CFA = rsp + 8, RA at CFA -
 * 8.  Returns its bytes. */
static size_t put_cie(uint8_t *eh)
{
	static const uint8_t cie[] = { 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78,
		16, 1, 0x03, DW_CFA_def_cfa, 7, 8, 0x80 | 16, 1, 0, 0 };
	size_t n = 0;

	put_u32(eh, &n, sizeof(cie));
	memcpy(eh + n, cie, sizeof(cie));
	return n + sizeof(cie);
}

/* An FDE of the CIE at 0, for [@pc, @pc + @range), at *@n: its header;
 * end_fde() pads its instructions and writes its length.  Returns where
 * it starts. */
static size_t begin_fde(uint8_t *eh, size_t *n, uint32_t pc, uint32_t range)
{
	size_t fde = *n;

	*n += 4;			/* length, in end_fde() */
	put_u32(eh, n, (uint32_t)*n);	/* back to the CIE */
	put_u32(eh, n, pc);
	put_u32(eh, n, range);
	eh[(*n)++] = 0;			/* augmentation data length */
	return fde;
}

static void end_fde(uint8_t *eh, size_t fde, size_t *n)
{
	while ((*n - fde) % 4)
		eh[(*n)++] = DW_CFA_nop;
	memcpy(eh + fde, &(uint32_t){ (uint32_t)(*n - fde - 4) }, 4);
}

static size_t big_fde(uint8_t *eh)
{
	size_t n = put_cie(eh), fde = begin_fde(eh, &n, 0x1000, BIG_ROWS);

	for (uint32_t i = 0; i < BIG_ROWS - 1; i++) {
		eh[n++] = DW_CFA_def_cfa_offset;
		put_uleb(eh, &n, 16 + 8 * (i % 4096));
		eh[n++] = 0x40 | 1;	/* advance_loc 1 */
	}
	end_fde(eh, fde, &n);
	memset(eh + n, 0, 4);		/* terminator */
	return n + 4;
}

static void test_big_fde(void)
{
	static uint8_t eh[BIG_ROWS * 5 + 64], code[16];
	struct ec_section s[2] = {
		{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x1000, 0,
		  0, 0, code, sizeof(code), BIG_ROWS, 0 },
		{ ".eh_frame", SHT_PROGBITS, SHF_ALLOC, 0x200000, 0, 0, 0, eh,
		  0, 0, 0 },
	};
	struct ec_file f;
	pid_t pid;
	int status = -1;

	s[1].size = big_fde(eh);
	if (ec_build(&f, s, 2)) {
		ok(0, "crafted FDE built");
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct rlimit cpu = { 10, 10 };
		struct module *m = module__open_memory("big.so", f.buf, f.len);
		struct cfi_regs regs = { 0x10000, 0, 0 };
		uint64_t cfa = 0, pc = 0x1000 + BIG_ROWS - 2;

		setrlimit(RLIMIT_CPU, &cpu);
		if (module__cfa(m, pc, &regs, &cfa))
			_exit(3);
		/* Row i has CFA = rsp + 16 + 8 * (i % 4096). */
		_exit(cfa == 0x10000 + 16 + 8 * ((BIG_ROWS - 2) % 4096) ? 0 : 4);
	}
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "a 65,536-row FDE: the right CFA at its last rows within 10 s "
	   "of CPU (status 0x%x)", status);
	free(f.buf);
}

/*
 * MANY_FDES functions of 16 bytes from 0x1000, function i's CFA at rsp
 * + 8 * (i + 1), and SECOND_ROW more from its ninth byte: enough FDEs
 * that lookups go through the memo of recent ones and their rows
 * (cfi.c), and a CFA that tells which FDE and which row answered.
 */
#define MANY_FDES 6000
#define SECOND_ROW 0x8000

static size_t many_fdes(uint8_t *eh, bool second_row)
{
	size_t n = put_cie(eh);

	for (uint32_t i = 0; i < MANY_FDES; i++) {
		size_t fde = begin_fde(eh, &n, 0x1000 + 16 * i, 16);

		eh[n++] = DW_CFA_def_cfa_offset;
		put_uleb(eh, &n, 8 * (i + 1));
		if (second_row) {	/* from the function's ninth byte */
			eh[n++] = DW_CFA_advance_loc | 8;
			eh[n++] = DW_CFA_def_cfa_offset;
			put_uleb(eh, &n, 8 * (i + 1) + SECOND_ROW);
		}
		end_fde(eh, fde, &n);
	}
	memset(eh + n, 0, 4);		/* terminator */
	return n + 4;
}

/* An ELF of many_fdes()' functions into @f: 0, or nonzero. */
static int build_many(struct ec_file *f, bool second_row)
{
	static uint8_t eh[MANY_FDES * 40 + 64], code[16];
	struct ec_section s[2] = {
		{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x1000, 0,
		  0, 0, code, sizeof(code), 16 * MANY_FDES, 0 },
		{ ".eh_frame", SHT_PROGBITS, SHF_ALLOC, 0x200000, 0, 0, 0, eh,
		  0, 0, 0 },
	};

	s[1].size = many_fdes(eh, second_row);
	return ec_build(f, s, 2);
}

/* Each pc's FDE, looked up in three orders (each fills the memo's slots
 * with pcs that share them with the next order's): a remembered lookup
 * is the searched one, never another pc's. */
static void test_memo(void)
{
	struct ec_file f;
	struct module *m;
	size_t wrong = 0, looked = 0;

	if (build_many(&f, true)) {
		ok(0, "crafted FDEs built");
		return;
	}
	m = module__open_memory("many.so", f.buf, f.len);
	for (int pass = 0; pass < 3; pass++)
		for (uint64_t k = 0; k < 16 * MANY_FDES; k += 3) {
			uint64_t j = pass == 1 ? 16 * MANY_FDES - 1 - k :
				     pass == 2 ? (k * 7919) % (16 * MANY_FDES) : k;
			struct cfi_regs regs = { 0x10000, 0, 0x1000 + j };
			uint64_t cfa = 0;

			looked++;
			if (module__cfa(m, 0x1000 + j, &regs, &cfa) ||
			    cfa != 0x10000 + 8 * (j / 16 + 1) +
			    (j % 16 >= 8 ? SECOND_ROW : 0))
				wrong++;
		}
	ok(m && module__has_cfi(m), "%d crafted FDEs read", MANY_FDES);
	is_int(wrong, 0, "each of %zu lookups in three orders finds its pc's "
	       "FDE and row", looked);
	module__delete(m);
	free(f.buf);
}

/* The bytes the rows of MANY_FDES FDEs of one row each (or two) add to
 * their table once each is built; 0 where the table was not read. */
static size_t rows_bytes(bool second_row)
{
	struct ec_file f;
	struct cfi *cfi;
	size_t before, built = 0;
	Elf *elf;

	if (build_many(&f, second_row))
		return 0;
	elf_version(EV_CURRENT);
	elf = elf_memory((char *)f.buf, f.len);
	cfi = cfi__open(elf, NULL, NULL);
	before = cfi__bytes(cfi);
	for (uint64_t i = 0; cfi && i < MANY_FDES; i++) {
		struct cfi_regs regs = { 0x10000, 0, 0x1000 + 16 * i };
		uint64_t cfa;

		built += !cfi__cfa(cfi, 0x1000 + 16 * i, &regs, &cfa);
	}
	before = built == MANY_FDES ? cfi__bytes(cfi) - before : 0;
	cfi__close(cfi);
	elf_end(elf);
	free(f.buf);
	return before;
}

/* Rows are kept to their number (grown by doubling from eight, an FDE
 * of one row held room for eight): FDEs of two rows take twice what
 * FDEs of one take. */
static void test_rows_to_size(void)
{
	size_t one = rows_bytes(false), two = rows_bytes(true);

	ok(one > 0 && two == 2 * one, "the rows of %d FDEs of one row take "
	   "%zu bytes, of two rows %zu: twice as many", MANY_FDES, one, two);
}

/* Two functions whose CFA lies 2^31 - 8 and 2^31 bytes above rsp: a
 * built row keeps an offset in 32 bits (cfi_int.h, struct row_rule), so
 * the first is followed exactly and the second is a rule the walk
 * refuses, never a wrapped offset. */
static void test_offset_bits(void)
{
	static uint8_t eh[128], code[16];
	struct ec_section s[2] = {
		{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x1000, 0,
		  0, 0, code, sizeof(code), 32, 0 },
		{ ".eh_frame", SHT_PROGBITS, SHF_ALLOC, 0x200000, 0, 0, 0, eh,
		  0, 0, 0 },
	};
	struct cfi_regs regs = { 0x10000, 0, 0 };
	uint64_t cfa = 0, cfa2 = 0;
	size_t n = put_cie(eh);
	struct module *m;
	struct ec_file f;
	int ret;

	for (uint32_t i = 0; i < 2; i++) {
		size_t fde = begin_fde(eh, &n, 0x1000 + 16 * i, 16);

		eh[n++] = DW_CFA_def_cfa_offset;
		put_uleb(eh, &n, i ? 0x80000000u : 0x7ffffff8u);
		end_fde(eh, fde, &n);
	}
	memset(eh + n, 0, 4);
	s[1].size = n + 4;
	if (ec_build(&f, s, 2)) {
		ok(0, "crafted FDEs built");
		return;
	}
	m = module__open_memory("offsets.so", f.buf, f.len);
	ok(m && !module__cfa(m, 0x1004, &regs, &cfa) &&
	   cfa == 0x10000 + 0x7ffffff8u, "a CFA 2^31 - 8 above rsp followed "
	   "(%#llx)", (unsigned long long)cfa);
	ret = m ? module__cfa(m, 0x1014, &regs, &cfa2) : 0;
	ok(ret != 0, "a CFA 2^31 above rsp refused (%d)", ret);
	module__delete(m);
	free(f.buf);
}

/*
 * Every CIE of this test binary with its augmentation data length set
 * to 144 bytes (ULEB 0x90 0x01) in a CIE of 20, and the pointer encoding
 * after it uleb128: the shape of the input libFuzzer found through
 * fuzz_cfi, where libdwarf 20210528 put a CIE's instructions past its
 * end with a length that wraps around (UBSan: pointer overflow in
 * build_rows, which now checks both lengths against their entries).
 * No FDE of those CIEs yields a rule, and nothing is read outside.
 */
static void test_lying_cie(void)
{
	int fd = open("/proc/self/exe", O_RDONLY);
	struct stat st;
	uint8_t *img = NULL;
	struct cfi_regs regs = { 0x10000, 0, 0 };
	struct module *m = NULL;
	int patched = 0, rules = 0;
	Elf *elf = NULL;
	Elf_Scn *scn = NULL;
	Dwarf_Debug dbg;
	Dwarf_Error err = NULL;
	Dwarf_Cie *cies;
	Dwarf_Fde *fdes;
	Dwarf_Signed ncie, nfde;

	if (fd >= 0 && !fstat(fd, &st) && (img = malloc((size_t)st.st_size)) &&
	    read(fd, img, (size_t)st.st_size) == st.st_size) {
		elf_version(EV_CURRENT);
		elf = elf_memory((char *)img, (size_t)st.st_size);
	}
	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		size_t shstrndx;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || elf_getshdrstrndx(elf, &shstrndx) ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(name, ".eh_frame") || sh.sh_size < 24)
			continue;
		/* every CIE "zR", code 1, data -8, RA 16, aug length 1 */
		for (size_t at = 0; at + 24 <= sh.sh_size;) {
			uint8_t *e = img + sh.sh_offset + at;
			uint32_t len, id;

			memcpy(&len, e, 4);
			memcpy(&id, e + 4, 4);
			if (!len || len == 0xffffffff)
				break;
			if (!id && !memcmp(e + 8, "\1zR\0\1\x78\x10\1", 8)) {
				memcpy(e + 15, "\x90\1\1", 3);
				patched++;
			}
			at += 4 + (size_t)len;
		}
	}
	if (patched)
		m = module__open_memory("lying-cie", img, (size_t)st.st_size);
	/* every FDE libdwarf lists, at its first pc */
	if (m && dwarf_elf_init(elf, DW_DLC_READ, NULL, NULL, &dbg, &err) ==
	    DW_DLV_OK) {
		if (dwarf_get_fde_list_eh(dbg, &cies, &ncie, &fdes, &nfde,
					  &err) == DW_DLV_OK) {
			for (Dwarf_Signed i = 0; i < nfde; i++) {
				Dwarf_Addr lo;
				Dwarf_Unsigned len;
				uint64_t cfa = 0;

				if (dwarf_get_fde_range(fdes[i], &lo, &len, NULL,
						NULL, NULL, NULL, NULL, &err) ==
				    DW_DLV_OK && len)
					rules += !module__cfa(m, lo, &regs, &cfa);
			}
			dwarf_fde_cie_list_dealloc(dbg, cies, ncie, fdes, nfde);
		}
		dwarf_finish(dbg, &err);
	}
	if (elf)
		elf_end(elf);
	ok(patched && m && !rules, "a CIE whose augmentation data overruns "
	   "it: no rule from its FDEs (%d), nothing read outside the section "
	   "(ASan, UBSan)", rules);
	module__delete(m);
	free(img);
	if (fd >= 0)
		close(fd);
}

/*
 * Offsets factored by the data alignment that overflow an int64_t:
 * DW_CFA_offset_extended_sf with 2^62 (times -8), and
 * DW_CFA_def_cfa_offset_sf with -2^62 (fuzz_cfi found the signed
 * overflow; UBSan aborts the ASan build on a relapse).  The FDE yields
 * no rule.
 */
static void test_factored_overflow(void)
{
	static const uint8_t cie[] = { 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78,
		16, 1, 0x03, DW_CFA_def_cfa, 7, 8, 0x80 | 16, 1, 0, 0 };
	static const uint8_t ops[2][12] = {
		/* reg 6 at 2^62 * -8 */
		{ DW_CFA_offset_extended_sf, 6, 0x80, 0x80, 0x80, 0x80, 0x80,
		  0x80, 0x80, 0x80, 0xc0, 0 },
		/* CFA offset -2^62 * -8 */
		{ DW_CFA_def_cfa_offset_sf, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
		  0x80, 0x80, 0x40, DW_CFA_nop, DW_CFA_nop } };
	static uint8_t eh[128], code[16];

	for (int k = 0; k < 2; k++) {
		struct ec_section s[2] = {
			{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
			  0x1000, 0, 0, 0, code, sizeof(code), 0, 0 },
			{ ".eh_frame", SHT_PROGBITS, SHF_ALLOC, 0x200000, 0, 0,
			  0, eh, 0, 0, 0 },
		};
		struct cfi_regs regs = { 0x10000, 0, 0 };
		uint64_t cfa = 0;
		struct module *m;
		struct ec_file f;
		uint32_t u32;
		size_t n, fde;

		u32 = sizeof(cie);
		memcpy(eh, &u32, 4);
		memcpy(eh + 4, cie, sizeof(cie));
		n = fde = 4 + sizeof(cie);
		n += 4;
		u32 = (uint32_t)n;		/* back to the CIE */
		memcpy(eh + n, &u32, 4);
		n += 4;
		u32 = 0x1000;			/* pc_begin */
		memcpy(eh + n, &u32, 4);
		n += 4;
		u32 = 16;			/* pc_range */
		memcpy(eh + n, &u32, 4);
		n += 4;
		eh[n++] = 0;			/* augmentation data length */
		eh[n++] = 0x40 | 4;		/* advance_loc 4 */
		memcpy(eh + n, ops[k], sizeof(ops[k]));
		n += sizeof(ops[k]);
		while ((n - fde) % 4)
			eh[n++] = DW_CFA_nop;
		u32 = (uint32_t)(n - fde - 4);
		memcpy(eh + fde, &u32, 4);
		memset(eh + n, 0, 4);
		s[1].size = n + 4;
		if (ec_build(&f, s, 2)) {
			ok(0, "crafted FDE built");
			return;
		}
		m = module__open_memory("factor.so", f.buf, f.len);
		ok(m && module__cfa(m, 0x1008, &regs, &cfa) != 0,
		   "%s: an offset of 2^62 data-alignment units refused",
		   k ? "DW_CFA_def_cfa_offset_sf" : "DW_CFA_offset_extended_sf");
		module__delete(m);
		free(f.buf);
	}
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
	module__delete(m);
	test_big_fde();
	test_memo();
	/* as record lists them: without libdwarf's tree of allocations
	 * (the sanitizer build says nothing leaks then) */
	cfi__set_leak_tracking(false);
	test_memo();
	cfi__set_leak_tracking(true);
	test_rows_to_size();
	test_offset_bits();
	test_lying_cie();
	test_factored_overflow();
	{
		/* the Go program (built when Debian's golang-go is there)
		 * has a compressed .debug_frame and no .eh_frame: its table
		 * is read from libdwarf's inflated copy */
		static const char *const paths[] = { "/proc/self/exe",
			"/lib/x86_64-linux-gnu/libc.so.6",
			"tests/progs/bin/goroutines" };

		for (size_t i = 0; i < 3; i++) {
			size_t n, bad;

			if (i == 2 && access(paths[i], R_OK)) {
				skip("no Go program built (golang-go missing)",
				     "%s: compressed .debug_frame", paths[i]);
				continue;
			}
			bad = against_libdwarf(paths[i], &n);
			is_int(bad, 0, "%s: rows built in one pass equal "
			       "libdwarf's at each of %zu pcs", paths[i], n);
			ok(n > 1000, "%s: over 1000 pcs compared", paths[i]);
		}
	}
	return tap_done();
}
