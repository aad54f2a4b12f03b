/*
 * inlined.c - work done in functions the compiler inlines, for reports'
 * inlined frames (tests/e2e/inline.sh).
 *
 * work() repeats, until ARG1 ms of CPU time are spent, a round of four
 * units of CPU time (2 ms each, measured with burn.h's clock): two in
 * helper_a(), nearly all of it in mix() (inlined from inlined.h into
 * helper_a, itself inlined into work), one in helper_b()'s own loop, and
 * one in callee(), an out-of-line function helper_b calls: its call site
 * is code inlined in work.  So a profile has about
 *   50% in mix (inlined) <- helper_a (inlined) <- work <- main
 *   25% in helper_b (inlined) <- work <- main
 *   25% in callee <- helper_b (inlined) <- work <- main
 * and none of work's own, with whatever machine runs it.  Built with
 * INLINED_MULTI (inlined-multi), each round also spends a unit in
 * inlined_cold.c's cold_helper, inlined into its cold_path.
 */
#include <stdlib.h>

#include "burn.h"
#include "inlined.h"

#define NOINLINE __attribute__((noinline))
#define INLINE static inline __attribute__((always_inline))
#define UNIT_NS 2000000

volatile uint64_t sink;
uint64_t burn_ns;

/* noclone: a constant argument would make it callee.constprop.0 */
__attribute__((noinline, noclone)) static void callee(uint64_t ns)
{
	burn_for(ns);
}

INLINE uint64_t helper_a(uint64_t x, uint64_t ns)
{
	uint64_t end = thread_cpu_ns() + ns;

	do {
		for (int i = 0; i < 1024; i++)
			x = mix(x) ^ (x >> 7);
	} while (thread_cpu_ns() < end);
	return x;
}

INLINE uint64_t helper_b(uint64_t x, uint64_t ns)
{
	uint64_t end = thread_cpu_ns() + ns;

	do {
		for (uint64_t i = 0; i < 65536; i++)
			x = (x << 7) ^ (x >> 5) ^ i;
	} while (thread_cpu_ns() < end);
	callee(ns);
	return x;
}

#ifdef INLINED_MULTI
void cold_path(uint64_t ns);	/* inlined_cold.c */
#endif

NOINLINE static void work(int rounds)
{
	uint64_t x = 1;

	for (int r = 0; r < rounds; r++) {
		x = helper_a(x, 2 * UNIT_NS);
		x = helper_b(x, UNIT_NS);
#ifdef INLINED_MULTI
		cold_path(UNIT_NS);
#endif
	}
	sink += x;
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 400;

	work((int)(ms * 1e6 / (4 * UNIT_NS)) + 1);
	return 0;
}
