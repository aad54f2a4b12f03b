/*
 * sys.c - default system-call table and fault injection.
 */
#define _GNU_SOURCE
#include "collector/sys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
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

static int real_open(const char *path, int flags)
{
	return open(path, flags | O_CLOEXEC);
}

struct icppd_sys icppd_sys = {
	.perf_event_open = real_perf_event_open,
	.mmap = mmap,
	.munmap = munmap,
	.ioctl = real_ioctl,
	.open = real_open,
	.readlink = readlink,
};

const char *icppd_procdir = "/proc";

static int fault_perf_event_open, fault_mmap, fault_ioctl, fault_open,
	   fault_readlink;

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

static int failing_open(const char *p, int f)
{
	(void)p; (void)f;
	errno = fault_open;
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
		char *colon = strchr(item, ':');
		int err = 0;

		if (!colon) {
			ret = -EINVAL;
			break;
		}
		*colon = '\0';
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
			icppd_sys.open = failing_open;
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
