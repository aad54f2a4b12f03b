/*
 * burner.h - a child that burns CPU on cue, for tests that sample a real
 * event: sized by CPU time, so that a machine of any speed gives about
 * the same number of samples.
 */
#ifndef ICPPD_TESTS_BURNER_H
#define ICPPD_TESTS_BURNER_H

#include <time.h>
#include <unistd.h>

static volatile unsigned long burner_sink;

/* Burns @ms of this process's CPU time. */
static inline void burner_burn(long ms)
{
	struct timespec ts;

	do {
		for (int i = 0; i < 100000; i++)
			burner_sink += (unsigned long)i;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	} while (ts.tv_sec * 1000 + ts.tv_nsec / 1000000 < ms);
}

/* A child held at a pipe until *@go is written to; then it burns @ms of
 * CPU and exits.  Its pid, or -1. */
static inline pid_t burner_spawn(long ms, int *go)
{
	int fds[2];
	pid_t pid;
	char c;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (!pid) {
		close(fds[1]);
		if (read(fds[0], &c, 1) == 1)
			burner_burn(ms);
		_exit(0);
	}
	close(fds[0]);
	*go = fds[1];
	return pid;
}

#endif
