/*
 * heights.c - one program, many known context identifiers: a function
 * reached through two paths of different frame sizes (work), recursion
 * (recurse, one height per depth), a call through a function pointer
 * (indirect), a leaf that needs no frame (leaf), and main itself.
 *
 * Usage: heights [MS [spin SECONDS | kill SIGNAL | deep KIB]]
 *   MS        CPU milliseconds per burn (default 20); nine burns in all
 *   spin S    then burn in spin_forever() for S seconds of CPU, saying
 *             "CPU ... spin_forever MS" every 100 ms of it (signal tests)
 *   kill N    then raise signal N
 *   deep K    then burn MS more in deep(), under a frame of K KiB (a
 *             stack deeper than the default stack copy)
 */
#include "truth.h"

#include <signal.h>

volatile uint64_t sink;
uint64_t burn_ns = 20000000;

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

NOINLINE static void deep_leaf(uintptr_t *cfa)
{
	CFA_OF(*cfa);
	BURN();
	sink += 3;	/* not leaf's code: not folded into it */
}

NOINLINE static void deep(size_t kib)
{
	volatile char pad[kib * 1024];
	uintptr_t c;

	/* every page touched: the kernel copies a sample's stack without
	 * faulting, so a page never touched would end the copy there */
	for (size_t i = 0; i < kib * 1024; i += 512)
		pad[i] = 1;
	deep_leaf(&c);
	truth("deep_leaf", c);
	sink += pad[0];
}

NOINLINE static void spin_forever(double seconds)
{
	uint64_t spun = 0;
	uintptr_t c;

	CFA_OF(c);
	truth("spin_forever", c);
	while (spun < seconds * 1e9) {
		burn_for(100000000);
		spun += 100000000;
		truth_cpu("spin_forever", spun);
	}
}

int main(int argc, char **argv)
{
	uintptr_t c;

	if (argc > 1)
		burn_set_ms(argv[1]);
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
	if (argc > 3 && !strcmp(argv[2], "deep") && atoi(argv[3]) > 0)
		deep((size_t)atoi(argv[3]));
	truth_process_cpu();
	if (argc > 3 && !strcmp(argv[2], "kill"))
		raise(atoi(argv[3]));
	return (int)(sink & 0);
}
