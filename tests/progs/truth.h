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

#define CFA_OF(slot) ((slot) = (uintptr_t)__builtin_dwarf_cfa())
#define NOINLINE __attribute__((noinline, noclone))

extern volatile uint64_t sink;
extern long iters;

/* Burns CPU inside the calling function, so samples land in it. */
#define BURN() do { for (long i_ = 0; i_ < iters; i_++) sink += (uint64_t)i_; } while (0)

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

static void truth(const char *function, uintptr_t cfa)
{
	char line[160];
	const char *file = getenv("TRUTH_FILE");
	int fd = file && *file ? open(file, O_WRONLY | O_APPEND | O_CREAT, 0644) : 1;
	int n = snprintf(line, sizeof(line), "TRUTH %d %d %s %llu\n",
			 (int)getpid(), (int)gettid(), function,
			 (unsigned long long)(truth_base() - cfa));

	if (write(fd, line, (size_t)n) != n)
		abort();
	if (fd != 1)
		close(fd);
}

#endif
