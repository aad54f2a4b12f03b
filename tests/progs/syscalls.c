/*
 * syscalls.c - spends most of its CPU time in the kernel: writes of 16
 * bytes to /dev/null until the process used the CPU milliseconds of its
 * argument (default 200) in all, user and system together.  The kernel
 * share is what icppd's run accounting must show.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static uint64_t process_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void write_loop(int fd, uint64_t end)
{
	static const char buf[16];

	do {
		for (int i = 0; i < 256; i++)
			if (write(fd, buf, sizeof(buf)) < 0)
				exit(1);
	} while (process_cpu_ns() < end);
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? strtod(argv[1], NULL) : 200;
	int fd = open("/dev/null", O_WRONLY);

	if (fd < 0)
		return 1;
	write_loop(fd, process_cpu_ns() + (uint64_t)(ms * 1e6));
	return 0;
}
