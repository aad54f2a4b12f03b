/*
 * offcpu.c - known off-CPU time (record --off-cpu): the main thread
 * burns BURN_MS of CPU in burn_round() and then sleeps SLEEP_MS in
 * wait_timer() (nanosleep), ROUNDS times, writing a byte down a pipe
 * after each sleep; a worker thread blocks in io_wait() on the pipe's
 * read end between the bytes.  The program measures the wall time it
 * spent inside each blocking call and says it in $TRUTH_FILE (or on
 * standard output): "OFFCPU pid tid function ms longest_ms", the total
 * and the longest single call.
 *
 * Usage: offcpu [ROUNDS [BURN_MS [SLEEP_MS]]] (default 10 20 30)
 *        offcpu pingpong N: two threads pass a byte back and forth
 *        through two pipes N times (2N switches), for bench/offcpu.sh
 */
#include "truth.h"

#include <time.h>

volatile uint64_t sink;
uint64_t burn_ns = 20000000;

static int pipefd[2];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void say(const char *function, uint64_t ns, uint64_t longest)
{
	char line[160];
	int n = snprintf(line, sizeof(line), "OFFCPU %d %d %s %.3f %.3f\n",
			 (int)getpid(), (int)gettid(), function, ns / 1e6,
			 longest / 1e6);

	truth_write(line, n, 1);
}

NOINLINE static void burn_round(void)
{
	BURN();
}

NOINLINE static uint64_t wait_timer(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u),
			       (long)(ns % 1000000000u) };
	uint64_t t0 = now_ns();

	while (nanosleep(&ts, &ts))
		;
	return now_ns() - t0;
}

/* The longest of @v and @x. */
static uint64_t longer(uint64_t v, uint64_t x)
{
	return x > v ? x : v;
}

NOINLINE static int io_wait(char *c, uint64_t *ns, uint64_t *longest)
{
	uint64_t t0 = now_ns();
	ssize_t n = read(pipefd[0], c, 1);
	uint64_t waited = now_ns() - t0;

	*ns += waited;
	*longest = longer(*longest, waited);
	return n == 1;
}

static void *worker(void *arg)
{
	uint64_t blocked = 0, longest = 0;
	char c;

	(void)arg;
	while (io_wait(&c, &blocked, &longest))
		;
	say("io_wait", blocked, longest);
	return NULL;
}

static int back[2];

static void *pong(void *arg)
{
	char c;

	(void)arg;
	while (read(pipefd[0], &c, 1) == 1)
		if (write(back[1], &c, 1) != 1)
			break;
	close(back[1]);
	return NULL;
}

static int pingpong(long n)
{
	pthread_t t;
	char c = 'x';

	if (pipe(pipefd) || pipe(back) || pthread_create(&t, NULL, pong, NULL))
		return 1;
	for (long i = 0; i < n; i++)
		if (write(pipefd[1], &c, 1) != 1 || read(back[0], &c, 1) != 1)
			return 1;
	close(pipefd[1]);
	pthread_join(t, NULL);
	return 0;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 10;
	uint64_t sleep_ns = 30000000, slept = 0, longest = 0;
	pthread_t t;

	if (argc > 2 && !strcmp(argv[1], "pingpong"))
		return pingpong(atol(argv[2]));
	if (argc > 2)
		burn_ns = strtoull(argv[2], NULL, 10) * 1000000u;
	if (argc > 3)
		sleep_ns = strtoull(argv[3], NULL, 10) * 1000000u;
	if (pipe(pipefd) || pthread_create(&t, NULL, worker, NULL))
		return 1;
	for (int i = 0; i < rounds; i++) {
		uint64_t ns;

		burn_round();
		ns = wait_timer(sleep_ns);
		slept += ns;
		longest = longer(longest, ns);
		if (write(pipefd[1], "x", 1) != 1)
			return 1;
	}
	close(pipefd[1]);
	pthread_join(t, NULL);
	say("wait_timer", slept, longest);
	return 0;
}
