/*
 * sys.h - the system calls icppd makes on files, the kernel and
 * sockets, behind one overridable table (after SQLite's os_unix.c
 * aSyscall[]), so that tests can inject failures into any of them:
 * perf_event_open, mmap, ioctl, every open (binaries, /proc, the
 * configuration, the database's lock, output files) and the daemon's
 * socket.  Nothing outside this file calls open(2) or opendir(3).
 *
 * Every entry returns -1 and sets errno on failure, like the libc call.
 */
#ifndef ICPPD_COMMON_SYS_H
#define ICPPD_COMMON_SYS_H

#include <dirent.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

struct icppd_sys {
	int (*perf_event_open)(struct perf_event_attr *attr, pid_t pid,
			       int cpu, int group_fd, unsigned long flags);
	void *(*mmap)(void *addr, size_t len, int prot, int flags, int fd,
		      off_t off);
	int (*munmap)(void *addr, size_t len);
	int (*ioctl)(int fd, unsigned long request, unsigned long arg);
	/* every open; O_CLOEXEC is always added */
	int (*openat)(int dirfd, const char *path, int flags, mode_t mode);
	long (*openat2)(int dirfd, const char *path, void *how, size_t size);
	ssize_t (*readlink)(const char *path, char *buf, size_t len);
	int (*socket)(int domain, int type, int protocol);
};

extern struct icppd_sys icppd_sys;

/* open(2) and the stdio and dirent forms, through the table.  NULL
 * (errno set) on failure. */
int sys__open(const char *path, int flags, mode_t mode);
FILE *sys__fopen(const char *path);		/* for reading */
DIR *sys__opendir(const char *path);

/*
 * Applies ICPPD_INJECT_FAULT=CALL:ERRNO[:PREFIX][,...] (for example
 * "perf_event_open:EACCES", or "open:EACCES:/proc/" to fail only the
 * opens of paths that start with /proc/): each named call then fails
 * with that errno.  A testing aid documented in icppd(1).  Returns 0,
 * or -EINVAL for a malformed value.
 */
int sys__inject_from_env(void);

/*
 * Whether the file @fd (fstat() said @st) may be mapped in place of read:
 * a mapped file that shrinks raises SIGBUS at the next read past its new
 * end.  Only root and the file's owner can shrink a file no one else may
 * write (group and other write bits clear; an ACL granting write shows
 * in the group bits), so a regular file of root's or the caller's own,
 * with those bits clear, on a local file system: a FUSE file system
 * (which any user may mount) can claim any owner and shrink any file,
 * and a network one's files change on other machines.  Callers map only
 * where they chose to trust themselves (not the daemon).
 */
struct stat;
bool sys__may_map(int fd, const struct stat *st);

/* Root of the proc file system ("/proc"); tests point it elsewhere. */
extern const char *icppd_procdir;

#endif
