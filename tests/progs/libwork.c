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

/*
 * At dlclose() the library's fini runs crtstuff's __do_global_dtors_aux
 * (a symbol of size 0 and no FDE, whose frame pointer is all that
 * unwinds it), which calls __cxa_finalize(), which calls what the
 * library registered with its __dso_handle: lib_closing burns there
 * when lib_burn_at_close() asked it to (closelib; uselib never does).
 */
extern int __cxa_atexit(void (*fn)(void *), void *arg, void *dso);
extern void *__dso_handle;
static int burn_at_close;

NOINLINE static void lib_closing(void *arg)
{
	(void)arg;
	if (burn_at_close)
		BURN();
}

__attribute__((constructor)) static void lib_init(void)
{
	__cxa_atexit(lib_closing, NULL, &__dso_handle);
}

void lib_burn_at_close(void)
{
	burn_at_close = 1;
}
