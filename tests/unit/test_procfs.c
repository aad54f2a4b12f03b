/*
 * test_procfs.c - /proc parsing, and the main-thread stack base from a
 * fake proc directory.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "collector/procfs.h"
#include "common/sys.h"
#include "tests/tap.h"

/* A stat line: comm "(a) b (c", startstack 140737488347000 (not aligned),
 * start_brk (field 47) 94000000200000. */
static const char stat_line[] =
	"4242 ((a) b (c) R 1 4242 4242 0 -1 4194560 100 0 0 0 5 6 0 0 20 0 1 "
	"0 12345 1000000 200 18446744073709551615 94000000000000 "
	"94000000100000 140737488347000 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 "
	"94000000150000 94000000160000 94000000200000 140737488348000 "
	"140737488348100 140737488348100 140737488348200 0\n";

/* The tracefs id file's text, as the kernel writes it and crafted. */
static void check_tracepoint_id(void)
{
	static const struct {
		const char *text, *shown;
		int ret;
		uint64_t id;
	} cases[] = {
		{ "312\n", "312\\n", 0, 312 }, { "7", "7", 0, 7 },
		{ "0\n", "0\\n", 0, 0 },
		{ "2147483647\n", "2147483647\\n", 0, 2147483647 },
		{ "", "", -EINVAL, 0 }, { "\n", "\\n", -EINVAL, 0 },
		{ " 12\n", " 12\\n", -EINVAL, 0 },
		{ "12 \n", "12 \\n", -EINVAL, 0 },
		{ "12\n\n", "12\\n\\n", -EINVAL, 0 },
		{ "1x\n", "1x\\n", -EINVAL, 0 }, { "-3\n", "-3\\n", -EINVAL, 0 },
		{ "2147483648\n", "2147483648\\n", -EINVAL, 0 },
		{ "99999999999999999999", "99999999999999999999", -EINVAL, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t id = 12345;
		int ret = procfs__parse_tracepoint_id(cases[i].text, &id);

		ok(ret == cases[i].ret && (ret || id == cases[i].id),
		   "tracepoint id file \"%s\": %d, %llu", cases[i].shown, ret,
		   (unsigned long long)id);
	}
}

int main(void)
{
	char dir[] = "/tmp/icppd-proc-XXXXXX", path[256], line[256], comm[16];
	struct procfs_map m;
	struct procfs_stack st;
	struct procfs_stat ps;
	uint64_t v = 0;
	int *cpus;
	size_t n;
	FILE *f;

	check_tracepoint_id();
	is_int(procfs__parse_startstack(stat_line, &v), 0, "startstack parsed");
	is_int(v, 140737488347000ULL, "startstack is field 28 despite ') (' in comm");
	is_int(procfs__parse_startstack("1 (x) R 2 3", &v), -EINVAL, "short line rejected");
	is_int(procfs__parse_startstack("no paren", &v), -EINVAL, "no comm rejected");
	is_int(procfs__parse_stat(stat_line, &ps), 0, "a whole line parsed");
	is_int(ps.start_brk, 94000000200000ULL, "start_brk is field 47");
	is_int(procfs__parse_stat("1 (x) R 1 1 1 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 "
				  "1 1 1 1 1 2 3 0\n", &ps), 0,
	       "a line that ends before field 47 (Linux before 3.3) parsed");
	is_int(ps.start_stack, 3, "with its startstack");
	is_int(ps.start_brk, 0, "and start_brk unknown (0)");

	strcpy(line, "7f0000001000-7f0000003000 r-xp 00002000 08:01 1234 /usr/lib/x 1.so\n");
	is_int(procfs__parse_maps_line(line, &m), 0, "maps line parsed");
	is_int(m.start, 0x7f0000001000, "maps start");
	is_int(m.pgoff, 0x2000, "maps offset");
	is_int(m.prot, PROT_READ | PROT_EXEC, "maps permissions");
	is_int(m.dev, makedev(8, 1), "maps device");
	is_str(m.path, "/usr/lib/x 1.so", "maps path with a space");
	strcpy(line, "7f0000001000-7f0000003000 rw-p 00000000 00:00 0\n");
	procfs__parse_maps_line(line, &m);
	is_str(m.path, "", "anonymous mapping has an empty path");

	is_int(procfs__parse_cpu_list("0-3,8,10-11\n", &cpus, &n), 0, "cpu list parsed");
	is_int(n, 7, "seven cpus");
	is_int(cpus[4], 8, "single cpu kept");
	is_int(cpus[6], 11, "range end kept");
	free(cpus);
	is_int(procfs__parse_cpu_list("3-1", &cpus, &n), -EINVAL, "reversed range rejected");

	/* Fake /proc: the base is startstack rounded down to 16. */
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/4242", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/4242/stat", dir);
	f = fopen(path, "w");
	fputs(stat_line, f);
	fclose(f);
	icppd_procdir = dir;
	is_int(procfs__main_stack_base(4242, &st), 0, "stack base from fake proc");
	is_int(st.base, 140737488347000ULL & ~15ULL, "stack base is startstack & ~15");
	is_int(st.base % 16, 0, "stack base is 16-byte aligned");
	is_int(st.heap, 94000000200000ULL, "the heap starts at start_brk");
	is_int(procfs__main_stack_base(4343, &st), -ENOENT, "missing process reported");
	st = (struct procfs_stack){ 0 };
	is_int(procfs__exec_stack_base(4242, &st, comm), 0, "an exec that has "
	       "ended (end_code set): its base");
	is_int(st.base, 140737488347000ULL & ~15ULL, "the exec's base is startstack & ~15");
	is_int(st.heap, 94000000200000ULL, "and its heap's start");
	is_str(comm, "(a) b (c", "and the name it runs under, parentheses and all");
	/* mid-exec: the new mm has no end_code yet */
	f = fopen(path, "w");
	fputs("4242 (sh) R 1 4242 4242 0 -1 4194560 100 0 0 0 5 6 0 0 20 0 1 "
	      "0 12345 1000000 200 18446744073709551615 0 0 140737488350000 "
	      "0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n", f);
	fclose(f);
	is_int(procfs__exec_stack_base(4242, &st, comm), -EAGAIN, "mid-exec (end_code 0): "
	       "try again, the base may still move");
	f = fopen(path, "w");
	fputs("4242 (sh) Z 1 4242 4242 0 -1 4194560 100 0 0 0 5 6 0 0 20 0 1 "
	      "0 12345 0 0 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 "
	      "0 0 0 0\n", f);
	fclose(f);
	is_int(procfs__exec_stack_base(4242, &st, comm), -ESRCH, "a zombie: gone");
	{	/* a command that ended before its base was read: no wait
		 * for a stack it will never have (it waited the whole
		 * timeout, reading stat 40,000 times) */
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		is_int(procfs__wait_main_stack_base(4242, 4000, &st), -ESRCH,
		       "waiting on a zombie's base: gone");
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ok(t1.tv_sec - t0.tv_sec < 2, "at once, not after the 4 s "
		   "timeout");
	}
	f = fopen(path, "w");
	fputs("4242 (sh) R 1 4242 4242 0 -1 4194560 100 0 0 0 5 6 0 0 20 0 1 "
	      "0 12345 0 0 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 "
	      "0 0 0 0\n", f);
	fclose(f);
	is_int(procfs__main_stack_base(4242, &st), -EAGAIN, "mid-exec (no "
	       "startstack yet, not a zombie): try again");
	is_int(procfs__wait_main_stack_base(4242, 1, &st), -EAGAIN,
	       "and a wait that times out says so");
	unlink(path);
	snprintf(path, sizeof(path), "%s/4242", dir);
	rmdir(path);
	rmdir(dir);
	icppd_procdir = "/proc";

	/* The real thing agrees with where our own stack is. */
	is_int(procfs__main_stack_base(getpid(), &st), 0, "own stack base read");
	ok(st.base > (uint64_t)(uintptr_t)&v, "own stack base is above a local");
	ok(st.base - (uint64_t)(uintptr_t)&v < (1 << 20), "and within 1 MiB of it");
	ok(st.heap && st.heap <= (uint64_t)(uintptr_t)sbrk(0) &&
	   st.heap > (uint64_t)(uintptr_t)&main,
	   "own brk heap starts at start_brk: above the code, at most brk");
	return tap_done();
}
