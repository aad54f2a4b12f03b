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
 * Each of mix, leaf_d and step computes a fixed number of ROUNDS (so the
 * output depends on SEED alone) and repeats that computation until the
 * call has used MS milliseconds of CPU (burn.h), so that sample counts
 * do not depend on the speed of the CPU.
 *
 * Usage: arrdemo SEED [MS]   prints checksums of each path (MS: default 2)
 */
#include <alloca.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "burn.h"

#define NOINLINE __attribute__((noinline, noclone))
#define ROUNDS 65536

uint64_t burn_ns = 2000000;
volatile uint64_t sink;

NOINLINE static uint64_t mix(uint64_t x, volatile uint64_t *out)
{
	uint64_t end = thread_cpu_ns() + burn_ns, y;

	do {
		y = x;
		__asm__ volatile("" : "+r"(y));	/* recompute every time */
		for (long i = 0; i < ROUNDS; i++)
			y = y * 6364136223846793005ULL + 1442695040888963407ULL;
		*out = y;
	} while (thread_cpu_ns() < end);
	return y;
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
	uint64_t end = thread_cpu_ns() + burn_ns;

	do {
		slot[0] = x;
		for (long i = 0; i < ROUNDS; i++)
			slot[0] = slot[0] * 2862933555777941757ULL + 3037000493ULL;
	} while (thread_cpu_ns() < end);
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
	uint64_t end = thread_cpu_ns() + burn_ns;

	do {
		slot[0] = x;
		for (long i = 0; i < ROUNDS; i++)
			slot[0] ^= slot[0] << 7, slot[0] ^= slot[0] >> 9;
	} while (thread_cpu_ns() < end);
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
	/* nothing live across the call: no callee-saved register to push,
	 * so the first change of RSP stays the variable "sub %reg,%rsp"
	 * whatever registers step() clobbers (GCC's IPA-RA) */
	return step(p[n - 1]) + 1;
}

NOINLINE static uint64_t u_nosub(uint64_t x)
{
	return step(x) + 1;
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;

	if (argc > 2)
		burn_set_ms(argv[2]);
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
