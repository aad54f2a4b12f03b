/*
 * sys.c - default system-call table and fault injection.
 */
#define _GNU_SOURCE
#include "common/sys.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <sys/syscall.h>
#include <unistd.h>

static int real_perf_event_open(struct perf_event_attr *attr, pid_t pid,
				int cpu, int group_fd, unsigned long flags)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, group_fd,
			    flags);
}

static int real_ioctl(int fd, unsigned long request, unsigned long arg)
{
	return ioctl(fd, request, arg);
}

static int real_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	return openat(dirfd, path, flags | O_CLOEXEC, mode);
}

static long real_openat2(int dirfd, const char *path, void *how,
			 size_t size)
{
	return syscall(SYS_openat2, dirfd, path, how, size);
}

int sys__open(const char *path, int flags, mode_t mode)
{
	return icppd_sys.openat(AT_FDCWD, path, flags, mode);
}

FILE *sys__fopen(const char *path)
{
	int fd = sys__open(path, O_RDONLY, 0);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "r");

	if (fd >= 0 && !f)
		close(fd);
	return f;
}

DIR *sys__opendir(const char *path)
{
	int fd = sys__open(path, O_RDONLY | O_DIRECTORY, 0);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);

	if (fd >= 0 && !d)
		close(fd);
	return d;
}

/* The file systems sys__may_map() trusts (sys.h). */
static bool local_fs(int fd)
{
	static const unsigned long types[] = { EXT4_SUPER_MAGIC,
		XFS_SUPER_MAGIC, BTRFS_SUPER_MAGIC, F2FS_SUPER_MAGIC,
		TMPFS_MAGIC, OVERLAYFS_SUPER_MAGIC, SQUASHFS_MAGIC };
	struct statfs fs;

	if (fstatfs(fd, &fs))
		return false;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if ((unsigned long)fs.f_type == types[i])
			return true;
	return false;
}

bool sys__may_map(int fd, const struct stat *st)
{
	return S_ISREG(st->st_mode) &&
	       (!st->st_uid || st->st_uid == geteuid()) &&
	       !(st->st_mode & (S_IWGRP | S_IWOTH)) && local_fs(fd);
}

struct icppd_sys icppd_sys = {
	.perf_event_open = real_perf_event_open,
	.mmap = mmap,
	.munmap = munmap,
	.ioctl = real_ioctl,
	.openat = real_openat,
	.openat2 = real_openat2,
	.readlink = readlink,
	.socket = socket,
};

const char *icppd_procdir = "/proc";

static int fault_perf_event_open, fault_mmap, fault_ioctl, fault_open,
	   fault_readlink, fault_socket;
static char *fault_open_prefix;	/* NULL: every open fails */

static int failing_perf_event_open(struct perf_event_attr *a, pid_t p, int c,
				   int g, unsigned long f)
{
	(void)a; (void)p; (void)c; (void)g; (void)f;
	errno = fault_perf_event_open;
	return -1;
}

static void *failing_mmap(void *a, size_t l, int p, int f, int fd, off_t o)
{
	(void)a; (void)l; (void)p; (void)f; (void)fd; (void)o;
	errno = fault_mmap;
	return MAP_FAILED;
}

static int failing_ioctl(int fd, unsigned long r, unsigned long a)
{
	(void)fd; (void)r; (void)a;
	errno = fault_ioctl;
	return -1;
}

/* Whether the injected open fault covers @p (every path, or those
 * under the prefix). */
static bool open_fails(const char *p)
{
	return !fault_open_prefix ||
	       !strncmp(p, fault_open_prefix, strlen(fault_open_prefix));
}

static int failing_openat(int dirfd, const char *p, int f, mode_t m)
{
	if (!open_fails(p))
		return real_openat(dirfd, p, f, m);
	errno = fault_open;
	return -1;
}

static long failing_openat2(int dirfd, const char *p, void *how, size_t size)
{
	if (!open_fails(p))
		return real_openat2(dirfd, p, how, size);
	errno = fault_open;
	return -1;
}

static int failing_socket(int d, int t, int p)
{
	(void)d; (void)t; (void)p;
	errno = fault_socket;
	return -1;
}

static ssize_t failing_readlink(const char *p, char *b, size_t l)
{
	(void)p; (void)b; (void)l;
	errno = fault_readlink;
	return -1;
}

static const struct { const char *name; int value; } errnos[] = {
	{ "EACCES", EACCES }, { "EPERM", EPERM }, { "ENOENT", ENOENT },
	{ "EINVAL", EINVAL }, { "ENOMEM", ENOMEM }, { "EBUSY", EBUSY },
	{ "EMFILE", EMFILE }, { "ENODEV", ENODEV }, { "ESRCH", ESRCH },
	{ "EOPNOTSUPP", EOPNOTSUPP },
};

int sys__inject_from_env(void)
{
	const char *env = getenv("ICPPD_INJECT_FAULT");
	char *copy, *item, *save = NULL;
	int ret = 0;

	if (!env || !*env)
		return 0;
	copy = strdup(env);
	if (!copy)
		return -ENOMEM;
	for (item = strtok_r(copy, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(item, ':'), *prefix;
		int err = 0;

		if (!colon) {
			ret = -EINVAL;
			break;
		}
		*colon = '\0';
		prefix = strchr(colon + 1, ':');
		if (prefix)
			*prefix++ = '\0';
		if (prefix && strcmp(item, "open")) {
			ret = -EINVAL;	/* only opens are told by path */
			break;
		}
		for (size_t i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++)
			if (!strcmp(colon + 1, errnos[i].name))
				err = errnos[i].value;
		if (!err) {
			ret = -EINVAL;
			break;
		}
		if (!strcmp(item, "perf_event_open")) {
			fault_perf_event_open = err;
			icppd_sys.perf_event_open = failing_perf_event_open;
		} else if (!strcmp(item, "mmap")) {
			fault_mmap = err;
			icppd_sys.mmap = failing_mmap;
		} else if (!strcmp(item, "ioctl")) {
			fault_ioctl = err;
			icppd_sys.ioctl = failing_ioctl;
		} else if (!strcmp(item, "open")) {
			fault_open = err;
			free(fault_open_prefix);
			fault_open_prefix = prefix ? strdup(prefix) : NULL;
			if (prefix && !fault_open_prefix) {
				ret = -ENOMEM;
				break;
			}
			icppd_sys.openat = failing_openat;
			icppd_sys.openat2 = failing_openat2;
		} else if (!strcmp(item, "socket")) {
			fault_socket = err;
			icppd_sys.socket = failing_socket;
		} else if (!strcmp(item, "readlink")) {
			fault_readlink = err;
			icppd_sys.readlink = failing_readlink;
		} else {
			ret = -EINVAL;
			break;
		}
	}
	free(copy);
	return ret;
}
