/*
 * heights.c - one program, many known context identifiers: a function
 * reached through two paths of different frame sizes (work), recursion
 * (recurse, one height per depth), a call through a function pointer
 * (indirect), a leaf that needs no frame (leaf), and main itself.
 *
 * Usage: heights [MILLIONS [spin SECONDS | kill SIGNAL]]
 *   MILLIONS  iterations per burn, in millions (default 20)
 *   spin S    then burn in spin_forever() for S seconds (signal tests)
 *   kill N    then raise signal N
 */
#include "truth.h"

#include <signal.h>
#include <time.h>

volatile uint64_t sink;
long iters = 20000000;

NOINLINE static void leaf(uintptr_t *cfa)
{
	CFA_OF(*cfa);
	BURN();
}

NOINLINE static void work(uintptr_t *cfa)
{
	volatile char pad[24];

	pad[0] = 1;
	CFA_OF(*cfa);
	BURN();
	sink += pad[0];
}

NOINLINE static void path_a(void)
{
	volatile char pad[40];
	uintptr_t c;

	pad[0] = 1;
	work(&c);
	truth("work", c);
	sink += pad[0];
}

NOINLINE static void path_b(void)
{
	volatile char pad[200];
	uintptr_t c;

	pad[0] = 1;
	work(&c);
	truth("work", c);
	leaf(&c);
	truth("leaf", c);
	sink += pad[0];
}

NOINLINE static void recurse(int depth)
{
	volatile char pad[16];
	uintptr_t c;

	pad[0] = (char)depth;
	CFA_OF(c);
	BURN();
	truth("recurse", c);
	if (depth > 0)
		recurse(depth - 1);
	sink += pad[0];
}

NOINLINE static void indirect(uintptr_t *cfa)
{
	volatile char pad[64];

	pad[0] = 2;
	CFA_OF(*cfa);
	BURN();
	sink += pad[0];
}

static void (*volatile fnptr)(uintptr_t *) = indirect;

NOINLINE static void spin_forever(double seconds)
{
	struct timespec t0, t;
	uintptr_t c;

	CFA_OF(c);
	truth("spin_forever", c);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (long i = 0; i < 1000000; i++)
			sink += (uint64_t)i;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
}

int main(int argc, char **argv)
{
	uintptr_t c;

	if (argc > 1)
		iters = atol(argv[1]) * 1000000L;
	CFA_OF(c);
	truth("main", c);
	BURN();
	path_a();
	path_b();
	recurse(3);
	fnptr(&c);
	truth("indirect", c);
	if (argc > 3 && !strcmp(argv[2], "spin"))
		spin_forever(atof(argv[3]));
	if (argc > 3 && !strcmp(argv[2], "kill"))
		raise(atoi(argv[3]));
	return (int)(sink & 0);
}
