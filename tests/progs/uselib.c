/*
 * uselib.c - calls into libwork.so directly and through lib_outer.
 * Usage: uselib [MILLIONS]
 */
#include "truth.h"

extern long iters;
void lib_work(uintptr_t *cfa);
void lib_outer(void);

int main(int argc, char **argv)
{
	uintptr_t c;

	if (argc > 1)
		iters = atol(argv[1]) * 1000000L;
	lib_work(&c);
	truth("lib_work", c);
	lib_outer();
	return 0;
}
