/*
 * paths.c - many distinct call paths, quickly: each call of down() goes
 * DEPTH levels deep through left() or right() by a pseudo-random bit at
 * each, so samples land on up to 2^DEPTH paths, nearly each one new: a
 * first record learns tens of path nodes per sample, thousands a second
 * (as of clang++ -O2 -c).
 *
 * Usage: paths [MS]   MS: CPU milliseconds in all (default 500), in
 * leaves of 50 us each.
 */
#include "burn.h"

#define NOINLINE __attribute__((noinline))
#define DEPTH 24

volatile uint64_t sink;
uint64_t burn_ns = 50000;

NOINLINE static void down(unsigned depth, uint64_t bits);

NOINLINE static void left(unsigned depth, uint64_t bits)
{
	down(depth, bits);
	sink += 1;
}

NOINLINE static void right(unsigned depth, uint64_t bits)
{
	down(depth, bits);
	sink += 2;
}

NOINLINE static void down(unsigned depth, uint64_t bits)
{
	if (!depth) {
		BURN();
		return;
	}
	if (bits & 1)
		left(depth - 1, bits >> 1);
	else
		right(depth - 1, bits >> 1);
	sink += 3;
}

int main(int argc, char **argv)
{
	uint64_t total = (uint64_t)((argc > 1 ? strtod(argv[1], NULL) : 500) *
				    1e6);
	uint64_t x = 88172645463325252ull, start = thread_cpu_ns();

	while (thread_cpu_ns() - start < total) {
		x ^= x << 13;	/* xorshift64 */
		x ^= x >> 7;
		x ^= x << 17;
		down(DEPTH, x);
	}
	return 0;
}
