/*
 * collide.c - context identifiers that collide on purpose.
 *
 * target() is called through via_a, via_b or via_c, three functions with
 * the same frame size, so target's CID (function, height) is the same
 * through all three: a path map trained on more than one of them has
 * several candidates for it (ambiguous), and one trained on "a" alone
 * has one candidate that is wrong for a run through "c" (incorrect).
 * Each via_X burns a little itself, so its own CID shows up too.
 *
 * Usage: collide PATHS [MILLIONS]   PATHS: letters from "abc"
 */
#include "truth.h"

volatile uint64_t sink;
long iters = 10000000;

NOINLINE static void target(uintptr_t *cfa)
{
	CFA_OF(*cfa);
	BURN();
}

/* Different constants keep GCC from folding the three into one. */
#define VIA(name, k) \
NOINLINE static void name(void) \
{ \
	volatile char pad[32]; \
	long saved = iters; \
	uintptr_t c; \
	\
	pad[0] = k; \
	iters /= 4; \
	BURN(); \
	iters = saved; \
	target(&c); \
	truth("target", c); \
	CFA_OF(c); \
	truth(#name, c); \
	sink += pad[0]; \
}
VIA(via_a, 'a')
VIA(via_b, 'b')
VIA(via_c, 'c')

int main(int argc, char **argv)
{
	const char *paths = argc > 1 ? argv[1] : "ab";

	if (argc > 2)
		iters = atol(argv[2]) * 1000000L;
	for (; *paths; paths++) {
		if (*paths == 'a')
			via_a();
		else if (*paths == 'b')
			via_b();
		else if (*paths == 'c')
			via_c();
	}
	return (int)(sink & 0);
}
