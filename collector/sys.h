/*
 * sys.h - the system calls the collector makes, behind one overridable
 * table (after SQLite's os_unix.c aSyscall[]), so tests can inject
 * failures into perf_event_open, mmap, ioctl and /proc reads.
 *
 * Every entry returns -1 and sets errno on failure, like the libc call.
 */
#ifndef ICPPD_COLLECTOR_SYS_H
#define ICPPD_COLLECTOR_SYS_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <sys/types.h>

struct icppd_sys {
	int (*perf_event_open)(struct perf_event_attr *attr, pid_t pid,
			       int cpu, int group_fd, unsigned long flags);
	void *(*mmap)(void *addr, size_t len, int prot, int flags, int fd,
		      off_t off);
	int (*munmap)(void *addr, size_t len);
	int (*ioctl)(int fd, unsigned long request, unsigned long arg);
	int (*open)(const char *path, int flags);
	ssize_t (*readlink)(const char *path, char *buf, size_t len);
};

extern struct icppd_sys icppd_sys;

/*
 * Applies ICPPD_INJECT_FAULT=CALL:ERRNO[,CALL:ERRNO...] (for example
 * "perf_event_open:EACCES"): each named call then fails with that errno.
 * A testing aid documented in icppd(1).  Returns 0, or -EINVAL for a
 * malformed value.
 */
int sys__inject_from_env(void);

/* Root of the proc file system ("/proc"); tests point it elsewhere. */
extern const char *icppd_procdir;

#endif
