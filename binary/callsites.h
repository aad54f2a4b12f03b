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
 * Indirect calls have no static callee and are not listed; a call to a
 * PLT stub lists the stub (the library function is learned).
 */
#ifndef ICPPD_BINARY_CALLSITES_H
#define ICPPD_BINARY_CALLSITES_H

#include <stddef.h>
#include <stdint.h>

#include "binary/module.h"

struct callsite {
	uint64_t ret;		/* the return address (link-time) */
	uint64_t caller;	/* start of the calling function */
	uint64_t callee;	/* the call's target */
	int64_t delta;		/* callee height - caller height (n) */
};

struct callsites {
	struct callsite *v;	/* sorted by ret */
	size_t n;
	/* direct calls left out: no function known at the site, or no
	 * height change that holds on every path */
	size_t unknown;
};

/*
 * Decodes the executable sections of @m (module__code).  0, or -errno
 * (-ENOMEM; what module__code returns; -ENOTSUP when Capstone cannot
 * be opened).  Work is linear in the code's size.
 */
int callsites__scan(struct module *m, struct callsites *out);
void callsites__free(struct callsites *cs);

/* The site whose return address is @ret, or NULL. */
const struct callsite *callsites__find(const struct callsites *cs,
				       uint64_t ret);

#endif
