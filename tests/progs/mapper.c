/*
 * mapper.c - a watched unprivileged user's moves against a root daemon:
 * maps files as code, and swaps a mapped library's path for something
 * else once the kernel has mapped it.
 * Usage: mapper MS map FILE...         maps each FILE executable, then
 *                                      burns MS ms of CPU in main
 *        mapper MS fifo LIB            dlopens LIB, puts a FIFO at its
 *                                      path, burns MS ms in LIB's lib_work
 *        mapper MS link:TARGET LIB     the same with a symlink to TARGET
 *        mapper MS keep LIB            dlopens LIB and burns, no swap
 *        mapper MS churn FILE          maps a page of FILE executable at
 *                                      new addresses and unmaps it, until
 *                                      it used MS ms of CPU; prints the
 *                                      number of mappings
 * Prints "ready" once the swap is done.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "truth.h"

/* Exported (-rdynamic): the library's burn reads this one. */
volatile uint64_t sink;
uint64_t burn_ns = 20000000;

int main(int argc, char **argv)
{
	void (*work)(uintptr_t *);
	uintptr_t c;
	void *h;

	if (argc < 4) {
		fprintf(stderr, "usage: mapper MS map|churn|fifo|link:TARGET|keep FILE...\n");
		return 2;
	}
	burn_set_ms(argv[1]);
	if (!strcmp(argv[2], "churn")) {
		int fd = open(argv[3], O_RDONLY);
		uint64_t end = thread_cpu_ns() + burn_ns, n = 0;
		char *base = (char *)0x200000000000ull;

		if (fd < 0) {
			perror(argv[3]);
			return 1;
		}
		while (thread_cpu_ns() < end) {
			/* 1,024 maps between clock reads, each page apart */
			for (int i = 0; i < 1024; i++, n++) {
				void *want = base + (n % (1u << 24)) * 8192;
				void *p = mmap(want, 4096, PROT_READ | PROT_EXEC,
					       MAP_PRIVATE | MAP_FIXED_NOREPLACE,
					       fd, 0);

				if (p == MAP_FAILED) {
					perror("mmap");
					return 1;
				}
				munmap(p, 4096);
			}
		}
		printf("%llu\n", (unsigned long long)n);
		return 0;
	}
	if (!strcmp(argv[2], "map")) {
		for (int i = 3; i < argc; i++) {
			int fd = open(argv[i], O_RDONLY);

			if (fd < 0 || mmap(NULL, 4096, PROT_READ | PROT_EXEC,
					   MAP_PRIVATE, fd, 0) == MAP_FAILED) {
				perror(argv[i]);
				return 1;
			}
			close(fd);
		}
		printf("ready\n");
		fflush(stdout);
		BURN();
		return 0;
	}
	h = dlopen(argv[3], RTLD_NOW);
	work = h ? (void (*)(uintptr_t *))dlsym(h, "lib_work") : NULL;
	if (!work) {
		fprintf(stderr, "mapper: %s\n", dlerror());
		return 1;
	}
	if (!strcmp(argv[2], "fifo")) {
		unlink(argv[3]);
		if (mkfifo(argv[3], 0644)) {
			perror("mkfifo");
			return 1;
		}
	} else if (!strncmp(argv[2], "link:", 5)) {
		unlink(argv[3]);
		if (symlink(argv[2] + 5, argv[3])) {
			perror("symlink");
			return 1;
		}
	}
	printf("ready\n");
	fflush(stdout);
	work(&c);
	truth("lib_work", c);
	truth_process_cpu();
	return 0;
}
