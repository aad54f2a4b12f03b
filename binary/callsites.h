/*
 * callsites.h - the static call graph of one module: every direct call
 * instruction, with the change of stack height it makes.
 *
 * At a call in function F the caller's CFA is SP + n, the call pushes
 * the return address, and the callee's CFA is the SP before that push:
 * so the callee's height is F's height plus n, whatever the sample.  n
 * comes from the CFI where its rule is "CFA = SP + n"; where it is
 * "CFA = RBP + k" (frame-pointer code), from the stack pointer tracked
 * through the function's instructions (Capstone): pushes, pops, sub/add
 * and lea of RSP, "mov %rsp,%rbp", "leave".  A site whose n neither
 * gives (stack realignment, RSP from memory) is left out, never guessed.
 *
 * A tail call is listed too, with a height change of 0: a jump to the
 * start of another function (or to a PLT stub) where the frame is torn
 * down ("CFA = RSP + 8", the return address on top), so the callee
 * takes the caller's frame, and on a stack it stands where its caller
 * would, under its caller's caller (GCC -O2 turns many calls into such
 * jumps).
 *
 * An indirect call (through a register or memory) is listed with callee
 * CALLSITE_INDIRECT: where it is and the height it adds are known, what
 * it calls is not.  What it may call are the functions whose address
 * the module takes (callsites.taken): found as a word of its data (a
 * vtable's, a callback table's), a pointer its relocations write, a
 * "lea func(%rip)", or in position-dependent code an immediate ("mov
 * $func,%edi").  Other modules' pointers (a comparator handed to
 * qsort) are theirs to list.  A call to a
 * PLT stub (a "jmp *slot(%rip)", after an endbr64 or not) names the
 * symbol the dynamic relocations bind that slot to, and the module's
 * exports are listed, so that a program's modules can be linked by
 * name as the dynamic linker does (see callsites__export()).
 */
#ifndef ICPPD_BINARY_CALLSITES_H
#define ICPPD_BINARY_CALLSITES_H

#include <stddef.h>
#include <stdint.h>

#include "binary/module.h"

struct callsite {
	uint64_t ret;		/* the return address (link-time); a tail
				 * call's: the address past its jump */
	uint64_t caller;	/* start of the calling function */
	uint64_t callee;	/* the call's target */
	int64_t delta;		/* callee height - caller height (n); 0: a
				 * tail call (CALLSITE_TAIL) */
	const char *import;	/* a PLT stub's symbol, or NULL */
};

/* The height change of a tail call: the callee takes the frame. */
#define CALLSITE_TAIL 0
/* The callee of an indirect call: not known. */
#define CALLSITE_INDIRECT UINT64_MAX

struct callsite_export {
	uint64_t addr;		/* link-time */
	const char *name;
};

struct callsites {
	struct callsite *v;	/* sorted by ret */
	size_t n;
	/* direct calls left out: no function known at the site, or no
	 * height change that holds on every path */
	size_t unknown;
	struct callsite_export *exports;	/* sorted by name */
	size_t nexports;
	uint64_t *taken;	/* functions whose address is taken (their
				 * starts), sorted, no two alike */
	size_t ntaken;
	char *names;		/* what import and name point into */
};

/*
 * Decodes the executable sections of @m (module__code) and reads its
 * dynamic symbols (module__dynamic).  0, or -errno (-ENOMEM; what those
 * return; -ENOTSUP when Capstone cannot be opened).  Work is linear in
 * the code's size and the symbols'.
 */
int callsites__scan(struct module *m, struct callsites *out);
void callsites__exit(struct callsites *cs);

/* The address of the function @m exports as @name: 0, or -ENOENT. */
int callsites__export(const struct callsites *cs, const char *name,
		      uint64_t *addr);

/* The site whose return address is @ret, or NULL. */
const struct callsite *callsites__find(const struct callsites *cs,
				       uint64_t ret);

#endif
