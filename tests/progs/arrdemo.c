/*
 * arrdemo.c - a program for activation record resizing, with output
 * that depends on its input, so a rewritten binary can be checked to
 * compute exactly what the original computes.
 *
 * - mix() is called through via_a, via_b and via_c, three functions with
 *   equal frames: mix's CID collides, and padding one of them separates
 *   it.
 * - leaf_d() is reached as fa -> fb -> leaf_d and fb -> fa -> leaf_d:
 *   the same functions in another order, never separable by pads.
 * - step() is reached from three functions whose frames cannot grow in
 *   place: u_nofp (no frame pointer), u_alloca (RSP changes in the
 *   body) and u_nosub (no locals, no "sub $N,%rsp").
 *
 * Usage: arrdemo SEED [MILLIONS]   prints checksums of each path.
 */
#include <alloca.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline, noclone))

static long iters = 2000000;
volatile uint64_t sink;

NOINLINE static uint64_t mix(uint64_t x, volatile uint64_t *out)
{
	for (long i = 0; i < iters; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	*out = x;
	return x;
}

/* Equal frames: the constants keep GCC from merging them. */
#define VIA(name, k) \
NOINLINE static uint64_t name(uint64_t x) \
{ \
	volatile uint64_t slot[4]; \
	slot[1] = k; \
	mix(x ^ slot[1], &slot[0]); \
	return slot[0] + slot[1]; \
}
VIA(via_a, 0xa)
VIA(via_b, 0xb)
VIA(via_c, 0xc)

NOINLINE static uint64_t leaf_d(uint64_t x)
{
	volatile uint64_t slot[2];

	slot[0] = x;
	for (long i = 0; i < iters; i++)
		slot[0] = slot[0] * 2862933555777941757ULL + 3037000493ULL;
	return slot[0];
}

NOINLINE static uint64_t fb(uint64_t x, int depth);

NOINLINE static uint64_t fa(uint64_t x, int depth)
{
	volatile uint64_t slot[2];

	slot[0] = x + 1;
	slot[1] = depth ? fb(slot[0], depth - 1) : leaf_d(slot[0]);
	return slot[1] ^ slot[0];
}

NOINLINE static uint64_t fb(uint64_t x, int depth)
{
	volatile uint64_t slot[2];

	slot[0] = x + 2;
	slot[1] = depth ? fa(slot[0], depth - 1) : leaf_d(slot[0]);
	return slot[1] ^ slot[0];
}

NOINLINE static uint64_t step(uint64_t x)
{
	volatile uint64_t slot[2];

	slot[0] = x;
	for (long i = 0; i < iters; i++)
		slot[0] ^= slot[0] << 7, slot[0] ^= slot[0] >> 9;
	return slot[0];
}

__attribute__((optimize("omit-frame-pointer")))
NOINLINE static uint64_t u_nofp(uint64_t x)
{
	volatile uint64_t slot[3];

	slot[2] = x;
	return step(slot[2]) + slot[2];
}

NOINLINE static uint64_t u_alloca(uint64_t x, size_t n)
{
	volatile uint64_t *p = alloca(n * sizeof(*p));

	for (size_t i = 0; i < n; i++)
		p[i] = x + i;
	return step(p[0]) + p[n - 1];
}

NOINLINE static uint64_t u_nosub(uint64_t x)
{
	return step(x) + 1;
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;

	if (argc > 2)
		iters = atol(argv[2]) * 1000000L;
	printf("a %llu\n", (unsigned long long)via_a(seed));
	printf("b %llu\n", (unsigned long long)via_b(seed + 1));
	printf("c %llu\n", (unsigned long long)via_c(seed + 2));
	printf("abd %llu\n", (unsigned long long)fa(seed, 1));
	printf("bad %llu\n", (unsigned long long)fb(seed, 1));
	printf("nofp %llu\n", (unsigned long long)u_nofp(seed));
	printf("alloca %llu\n", (unsigned long long)u_alloca(seed, 3 + seed % 5));
	printf("nosub %llu\n", (unsigned long long)u_nosub(seed));
	printf("sink %llu\n", (unsigned long long)sink);
	return 0;
}
