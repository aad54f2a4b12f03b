/*
 * jit.c - a JIT compiler's shape: copies machine code into an anonymous
 * executable mapping, says so in /tmp/perf-PID.map as node
 * --perf-basic-prof and the JVM's perf agents do, and runs it for the
 * CPU milliseconds of its argument (default 200).  The generated
 * function, jit_spin, counts RDI down to 0; main calls it with a small
 * count until the thread has used its time.
 *
 * Argument 2, when given, is the map file's mode: "none" writes no map,
 * "link" writes it as a symlink to a map elsewhere (never followed),
 * "chown" gives it to user 65534 (run as root: not the process's own
 * file, so never read).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* mov %rdi,%rcx; 1: dec %rcx; jnz 1b; ret */
static const unsigned char code[] = { 0x48, 0x89, 0xf9, 0x48, 0xff, 0xc9,
				       0x75, 0xfb, 0xc3 };

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int write_map(const char *mode, void *fn)
{
	char path[64], other[64];
	const char *to = path;
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	if (!strcmp(mode, "none"))
		return 0;
	if (!strcmp(mode, "link")) {
		snprintf(other, sizeof(other), "/tmp/perf-%d.other", (int)getpid());
		to = other;
	}
	f = fopen(to, "w");
	if (!f)
		return -1;
	fprintf(f, "%lx %zx jit_spin\n", (unsigned long)(uintptr_t)fn,
		sizeof(code));
	if (fclose(f))
		return -1;
	if (!strcmp(mode, "chown") && chown(path, 65534, 65534))
		return -1;
	return to == path ? 0 : symlink(other, path);
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? strtod(argv[1], NULL) : 200;
	const char *mode = argc > 2 ? argv[2] : "file";
	void *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void (*spin)(uint64_t);
	uint64_t end;

	if (mem == MAP_FAILED)
		return 1;
	memcpy(mem, code, sizeof(code));
	spin = (void (*)(uint64_t))mem;
	if (write_map(mode, mem))
		return 1;
	end = cpu_ns() + (uint64_t)(ms * 1e6);
	while (cpu_ns() < end)
		spin(1 << 16);
	return 0;
}
