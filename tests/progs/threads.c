/*
 * threads.c - threads with stacks of their own: each thread reaches
 * thread_work at another depth (nest), and main burns in main_work.
 * Usage: threads [MS [NTHREADS]]   MS: CPU milliseconds each thread burns
 * (default 20)
 */
#include "truth.h"

volatile uint64_t sink;
uint64_t burn_ns = 20000000;

NOINLINE static void thread_work(uintptr_t *cfa)
{
	volatile char pad[32];

	pad[0] = 1;
	CFA_OF(*cfa);
	BURN();
	sink += pad[0];
}

NOINLINE static void nest(int depth)
{
	volatile char pad[48];
	uintptr_t c;

	pad[0] = 1;
	if (depth == 0) {
		thread_work(&c);
		truth("thread_work", c);
	} else {
		nest(depth - 1);
	}
	sink += pad[0];
}

static void *start(void *arg)
{
	nest((int)(intptr_t)arg);
	return NULL;
}

NOINLINE static void main_work(uintptr_t *cfa)
{
	CFA_OF(*cfa);
	BURN();
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 3;
	pthread_t t[16];
	uintptr_t c;

	if (argc > 1)
		burn_set_ms(argv[1]);
	if (n > 16)
		n = 16;
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, start, (void *)(intptr_t)i);
	main_work(&c);
	truth("main_work", c);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	truth_process_cpu();
	return 0;
}
