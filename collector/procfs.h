/*
 * procfs.h - what the collector reads from /proc (through common/sys.h
 * and icppd_procdir, so tests can fake both): a process's stack start,
 * its memory map, its threads, its command name; the online CPUs, and
 * the exec tracepoint's id in tracefs.
 */
#ifndef ICPPD_COLLECTOR_PROCFS_H
#define ICPPD_COLLECTOR_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct procfs_map {
	uint64_t start, end, pgoff, dev, ino;
	unsigned prot;		/* PROT_* */
	const char *path;	/* "" for anonymous, "[stack]", "[vdso]"... */
};

/* What icppd reads of /proc/PID/stat. */
struct procfs_stat {
	char comm[16];		/* field 2, without its parentheses */
	char state;		/* field 3: R, S, Z... */
	uint64_t utime, stime;	/* fields 14 and 15, clock ticks */
	uint64_t end_code;	/* field 27 */
	uint64_t start_stack;	/* field 28 */
	uint64_t start_brk;	/* field 47 (Linux 3.3 on), or 0 */
};

/* Where a process's main stack and brk heap are (see below). */
struct procfs_stack {
	uint64_t base;		/* startstack & ~15 */
	uint64_t heap;		/* start_brk: where the brk heap begins, or
				 * 0 where the kernel does not say */
};

/* Fields 2, 3, 14, 15, 27, 28 and 47 of a /proc/PID/stat line in @buf
 * (see below); a line that ends before field 47 gives start_brk 0.
 * 0, or -EINVAL. */
int procfs__parse_stat(const char *buf, struct procfs_stat *st);

/*
 * Field 28 (startstack) of a /proc/PID/stat line in @buf.  The command
 * name may hold spaces and parentheses; parsing starts after the last ')'.
 * 0, or -EINVAL.
 */
int procfs__parse_startstack(const char *buf, uint64_t *startstack);
/* Parses one /proc/PID/maps line; @m->path points into @line. */
int procfs__parse_maps_line(char *line, struct procfs_map *m);

/* The stack base of a process's main thread: startstack & ~15.  Stable
 * across runs whatever argv and the environment (see DESIGN.md).  With
 * it, start_brk: the brk heap is the mapping that holds it, whatever
 * name perf gave that mapping ("[heap]" only while the vma spans
 * start_brk..brk as the record is written; "//anon" otherwise).
 * -EAGAIN while an exec has not laid out the new stack (startstack 0),
 * -ESRCH for a zombie (no mm any more). */
int procfs__main_stack_base(pid_t pid, struct procfs_stack *st);
/*
 * The same, for a process that is in the middle of exec: the kernel sets
 * startstack (from 0) only once the new stack is laid out, so the first
 * non-zero value is final.  Polls for up to @timeout_ms while the answer
 * is -EAGAIN.
 */
int procfs__wait_main_stack_base(pid_t pid, int timeout_ms,
				 struct procfs_stack *st);
/*
 * The stack base of a process that has just exec'd, read as early as
 * possible: -EAGAIN while the exec is still laying out the new image
 * (end_code not set yet, or startstack changing between two reads),
 * -ESRCH once it is a zombie (no mm any more).  @comm: the name it runs
 * under, for the caller to tell this exec from a later one.  The kernel
 * randomizes start_brk a few instructions after it sets startstack, so
 * a read in between gets the heap's unrandomized start: a heap that then
 * lies in no mapping, and stacks on it keep a mapping's end for base.
 */
int procfs__exec_stack_base(pid_t pid, struct procfs_stack *st,
			    char comm[16]);
int procfs__comm(pid_t pid, pid_t tid, char *buf, size_t len);
/* The CPU time process @pid (all its threads) used so far, user and
 * system, in ns.  0 or -errno. */
int procfs__cpu_ns(pid_t pid, int64_t *user, int64_t *sys);
/* The owner of process @pid (its /proc directory's: the effective uid).
 * 0 or -errno. */
int procfs__uid(pid_t pid, uint32_t *uid);
/* The path /proc/PID/exe names, into @buf.  0 or -errno. */
int procfs__exe(pid_t pid, char *buf, size_t len);
/* Calls @cb for each mapping; stops at the first non-zero return. */
int procfs__maps(pid_t pid, int (*cb)(void *arg, const struct procfs_map *m),
		 void *arg);
/* Thread ids of @pid in *@tids (malloc'ed, caller frees). */
int procfs__tasks(pid_t pid, pid_t **tids, size_t *n);
/* Online CPU numbers, from /sys/devices/system/cpu/online. */
int procfs__online_cpus(int **cpus, size_t *n);
/* Parses a CPU list such as "0-3,8,10-11". */
int procfs__parse_cpu_list(const char *s, int **cpus, size_t *n);

/* The id of the exec tracepoint (sched:sched_process_exec) in tracefs,
 * which only root reads on most systems.  0, or -errno. */
int procfs__exec_tracepoint_id(uint64_t *id);
/* A tracefs id file's text in @s: decimal digits, a newline at most,
 * below 2^31.  0, or -EINVAL. */
int procfs__parse_tracepoint_id(const char *s, uint64_t *id);

#endif
