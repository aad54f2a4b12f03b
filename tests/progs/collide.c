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
 * Usage: collide PATHS [MS]   PATHS: letters from "abc"; MS: CPU
 * milliseconds target burns per call (default 10), a quarter of it in
 * each via_X.
 */
#include "truth.h"

volatile uint64_t sink;
uint64_t burn_ns = 10000000;

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
	uintptr_t c; \
	\
	pad[0] = k; \
	burn_for(burn_ns / 4); \
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
		burn_set_ms(argv[2]);
	for (; *paths; paths++) {
		if (*paths == 'a')
			via_a();
		else if (*paths == 'b')
			via_b();
		else if (*paths == 'c')
			via_c();
	}
	truth_process_cpu();
	return (int)(sink & 0);
}
