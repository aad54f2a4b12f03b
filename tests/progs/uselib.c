/*
 * uselib.c - calls into libwork.so directly and through lib_outer.
 * Usage: uselib [MS]   MS: CPU milliseconds of each burn (default 20)
 */
#include "truth.h"

void lib_work(uintptr_t *cfa);
void lib_outer(void);

int main(int argc, char **argv)
{
	uintptr_t c;

	if (argc > 1)
		burn_set_ms(argv[1]);
	lib_work(&c);
	truth("lib_work", c);
	lib_outer();
	truth_process_cpu();
	return 0;
}
