/*
 * sigframe.c - samples inside a signal handler: the stack runs from the
 * handler through the kernel's signal frame (glibc's __restore_rt, whose
 * CFI is marked 'S') into the interrupted function.  An unwinder that
 * does not follow the signal frame cannot reach main from the handler.
 *
 * A signal comes every 20 ms of the process's CPU time (ITIMER_PROF),
 * 40 in all; the handler burns MS/40 CPU milliseconds of each.  With
 * "alt" the handler runs on a sigaltstack() block of the brk heap
 * (malloc), a stack with no fixed base.
 *
 * Usage: sigframe [MS [alt]]   (default 40)
 */
#include "truth.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define ALT_STACK (64 * 1024)	/* under malloc's mmap threshold: heap */

volatile uint64_t sink;
uint64_t burn_ns = 40000000;
static volatile sig_atomic_t signals;

NOINLINE static void in_handler(void)
{
	uintptr_t c;

	CFA_OF(c);
	burn_for(burn_ns / 40);
	if (signals == 1)
		truth("in_handler", c);
}

static void on_prof(int sig)
{
	(void)sig;
	signals++;
	in_handler();
}

NOINLINE static void interrupted(void)
{
	uintptr_t c;

	CFA_OF(c);
	truth("interrupted", c);
	while (signals < 40)
		sink++;
}

int main(int argc, char **argv)
{
	struct itimerval it = { { 0, 20000 }, { 0, 20000 } };
	struct sigaction sa = { .sa_handler = on_prof };

	if (argc > 1)
		burn_set_ms(argv[1]);
	if (argc > 2 && !strcmp(argv[2], "alt")) {
		stack_t ss = { .ss_sp = malloc(ALT_STACK), .ss_size = ALT_STACK };

		if (!ss.ss_sp || sigaltstack(&ss, NULL))
			return 1;
		sa.sa_flags = SA_ONSTACK;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, NULL);
	setitimer(ITIMER_PROF, &it, NULL);
	interrupted();
	truth_process_cpu();
	return (int)(sink & 0);
}
