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
		fprintf(stderr, "usage: mapper MS map|fifo|link:TARGET|keep FILE...\n");
		return 2;
	}
	burn_set_ms(argv[1]);
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
