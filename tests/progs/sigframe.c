/*
 * sigframe.c - samples inside a signal handler: the stack runs from the
 * handler through the kernel's signal frame (glibc's __restore_rt, whose
 * CFI is marked 'S') into the interrupted function.  An unwinder that
 * does not follow the signal frame cannot reach main from the handler.
 *
 * A signal comes every 20 ms of the process's CPU time (ITIMER_PROF),
 * 40 in all; the handler burns MS/40 CPU milliseconds of each.
 *
 * Usage: sigframe [MS]   (default 40)
 */
#include "truth.h"

#include <signal.h>
#include <sys/time.h>

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

	if (argc > 1)
		burn_set_ms(argv[1]);
	signal(SIGPROF, on_prof);
	setitimer(ITIMER_PROF, &it, NULL);
	interrupted();
	truth_process_cpu();
	return (int)(sink & 0);
}
