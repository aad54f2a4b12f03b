/*
 * sigframe.c - samples inside a signal handler: the stack runs from the
 * handler through the kernel's signal frame (glibc's __restore_rt, whose
 * CFI is marked 'S') into the interrupted function.  An unwinder that
 * does not follow the signal frame cannot reach main from the handler.
 *
 * Usage: sigframe [MILLIONS]   (handler burns MILLIONS/4 per signal)
 */
#include "truth.h"

#include <signal.h>
#include <sys/time.h>

volatile uint64_t sink;
long iters = 40000000;
static volatile sig_atomic_t signals;

NOINLINE static void in_handler(void)
{
	uintptr_t c;
	long saved = iters;

	CFA_OF(c);
	iters /= 40;
	BURN();
	iters = saved;
	if (signals == 1)
		truth("in_handler", c);
}

static void on_alarm(int sig)
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
		iters = atol(argv[1]) * 1000000L;
	signal(SIGALRM, on_alarm);
	setitimer(ITIMER_REAL, &it, NULL);
	interrupted();
	return (int)(sink & 0);
}
