/*
 * libwork.c - a shared library function reached directly and through
 * another library function (two heights in libwork.so).
 */
#include "truth.h"

volatile uint64_t sink;
uint64_t burn_ns = 20000000;

NOINLINE void lib_work(uintptr_t *cfa)
{
	volatile char pad[40];

	pad[0] = 1;
	CFA_OF(*cfa);
	BURN();
	sink += pad[0];
}

NOINLINE void lib_outer(void)
{
	volatile char pad[96];
	uintptr_t c;

	pad[0] = 1;
	lib_work(&c);
	truth("lib_work", c);
	sink += pad[0];
}
