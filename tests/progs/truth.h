/*
 * truth.h - lets a test program report its own true context identifiers.
 *
 * A function records its canonical frame address with CFA_OF(slot)
 * (GCC's __builtin_dwarf_cfa(), which does not force a frame pointer),
 * and its caller reports it with truth().  The stack base is computed
 * independently of icppd: /proc/self/stat startstack & ~15 for the main
 * thread, pthread_getattr_np() stack top for other threads.  Lines go to
 * the file named by $TRUTH_FILE (O_APPEND, one write per line), else to
 * stdout: "TRUTH pid tid function height".
 *
 * The programs burn CPU time (burn.h), not iterations, and say how much
 * they used: truth_cpu() writes "CPU pid tid what milliseconds", to
 * $TRUTH_FILE only (a program run without it prints no such noise).
 * A test derives the samples it may expect from these and the rate.
 */
#ifndef TRUTH_H
#define TRUTH_H

#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "burn.h"

#define CFA_OF(slot) ((slot) = (uintptr_t)__builtin_dwarf_cfa())
#define NOINLINE __attribute__((noinline, noclone))

static uint64_t truth_base(void)
{
	if (gettid() == getpid()) {
		char buf[1024], *p;
		int fd = open("/proc/self/stat", O_RDONLY), field = 2;
		ssize_t n = read(fd, buf, sizeof(buf) - 1);

		close(fd);
		buf[n > 0 ? n : 0] = '\0';
		p = strrchr(buf, ')') + 1;
		while (*p && field < 28) {
			if (*p++ == ' ' && *p != ' ')
				field++;
		}
		return strtoull(p, NULL, 10) & ~15ULL;
	} else {
		pthread_attr_t a;
		void *addr;
		size_t size;

		pthread_getattr_np(pthread_self(), &a);
		pthread_attr_getstack(&a, &addr, &size);
		pthread_attr_destroy(&a);
		return (uint64_t)(uintptr_t)addr + size;
	}
}

/* Appends @line (@n bytes) to $TRUTH_FILE, or to stdout if @or_stdout. */
static void truth_write(const char *line, int n, int or_stdout)
{
	const char *file = getenv("TRUTH_FILE");
	int fd = file && *file ? open(file, O_WRONLY | O_APPEND | O_CREAT, 0644) :
		 or_stdout ? 1 : -1;

	if (fd < 0)
		return;
	if (write(fd, line, (size_t)n) != n)
		abort();
	if (fd != 1)
		close(fd);
}

static void truth(const char *function, uintptr_t cfa)
{
	char line[160];
	int n = snprintf(line, sizeof(line), "TRUTH %d %d %s %llu\n",
			 (int)getpid(), (int)gettid(), function,
			 (unsigned long long)(truth_base() - cfa));

	truth_write(line, n, 1);
}

/* Says that @what used @ns nanoseconds of CPU. */
static __attribute__((unused)) void truth_cpu(const char *what, uint64_t ns)
{
	char line[160];
	int n = snprintf(line, sizeof(line), "CPU %d %d %s %.3f\n",
			 (int)getpid(), (int)gettid(), what, ns / 1e6);

	truth_write(line, n, 0);
}

/* Says how much CPU the whole process used: call it last, before exit. */
static __attribute__((unused)) void truth_process_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	truth_cpu("process", (uint64_t)ts.tv_sec * 1000000000u +
		  (uint64_t)ts.tv_nsec);
}

#endif
