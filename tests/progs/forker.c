/*
 * forker.c - a parent that forks a child which burns in child_work, and
 * a second child that execs another program (argv[2...]).
 * Usage: forker MS PROGRAM [ARGS...]   MS: CPU milliseconds each burns
 */
#include "truth.h"

#include <sys/wait.h>

volatile uint64_t sink;
uint64_t burn_ns = 20000000;

NOINLINE static void child_work(uintptr_t *cfa)
{
	volatile char pad[56];

	pad[0] = 1;
	CFA_OF(*cfa);
	BURN();
	sink += pad[0];
}

NOINLINE static void parent_work(uintptr_t *cfa)
{
	CFA_OF(*cfa);
	BURN();
}

int main(int argc, char **argv)
{
	uintptr_t c;
	pid_t a, b;

	if (argc > 1)
		burn_set_ms(argv[1]);
	a = fork();
	if (a == 0) {
		child_work(&c);
		truth("child_work", c);
		truth_process_cpu();
		_exit(0);
	}
	b = fork();
	if (b == 0) {
		if (argc > 2)
			execv(argv[2], argv + 2);
		_exit(127);
	}
	parent_work(&c);
	truth("parent_work", c);
	waitpid(a, NULL, 0);
	waitpid(b, NULL, 0);
	truth_process_cpu();
	return 0;
}
