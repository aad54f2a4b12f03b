/*
 * procfs.c - small, bounded /proc readers.  Files are read whole into a
 * fixed buffer (stat lines are under 1 KiB) or line by line (maps).
 */
#define _GNU_SOURCE
#include "collector/procfs.h"
#include "common/clock.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/sys.h"
#include "common/grow.h"

static int read_file(const char *path, char *buf, size_t len)
{
	int fd = sys__open(path, O_RDONLY, 0);
	ssize_t n, total = 0;

	if (fd < 0)
		return -errno;
	while ((size_t)total < len - 1 &&
	       (n = read(fd, buf + total, len - 1 - (size_t)total)) > 0)
		total += n;
	close(fd);
	buf[total] = '\0';
	return total > 0 ? 0 : -ENODATA;
}

int procfs__parse_stat(const char *buf, struct procfs_stat *st)
{
	const char *p = strrchr(buf, ')'), *open = strchr(buf, '(');
	int field = 2;		/* the ')' closes field 2 */
	size_t n;

	if (!p || !open || open > p)
		return -EINVAL;
	n = (size_t)(p - open - 1);
	if (n >= sizeof(st->comm))
		n = sizeof(st->comm) - 1;
	memcpy(st->comm, open + 1, n);
	st->comm[n] = '\0';
	p++;
	while (*p) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		if (++field == 3) {
			st->state = *p;
		} else if (field == 14 || field == 15 || field == 27 ||
			   field == 28 || field == 47) {
			char *end;
			unsigned long long v = strtoull(p, &end, 10);

			if (end == p)
				return -EINVAL;
			if (field == 14) {
				st->utime = v;
			} else if (field == 15) {
				st->stime = v;
			} else if (field == 27) {
				st->end_code = v;
			} else if (field == 28) {
				st->start_stack = v;
				st->start_brk = 0;
			} else {
				st->start_brk = v;
				return 0;
			}
		}
		while (*p && *p != ' ')
			p++;
	}
	return field >= 28 ? 0 : -EINVAL;
}

int procfs__parse_startstack(const char *buf, uint64_t *startstack)
{
	struct procfs_stat st;
	int ret = procfs__parse_stat(buf, &st);

	if (!ret)
		*startstack = st.start_stack;
	return ret;
}

static int read_stat(pid_t pid, struct procfs_stat *st)
{
	char path[64], buf[1024];
	int ret;

	snprintf(path, sizeof(path), "%s/%d/stat", icppd_procdir, (int)pid);
	ret = read_file(path, buf, sizeof(buf));
	return ret ? ret : procfs__parse_stat(buf, st);
}

int procfs__main_stack_base(pid_t pid, struct procfs_stack *out)
{
	struct procfs_stat st;
	int ret = read_stat(pid, &st);

	if (ret)
		return ret;
	if (st.state == 'Z' || st.state == 'X')	/* no mm any more */
		return -ESRCH;
	if (!st.start_stack)	/* an exec's new mm, not laid out yet */
		return -EAGAIN;
	*out = (struct procfs_stack){ st.start_stack & ~(uint64_t)15,
				      st.start_brk };
	return 0;
}

/* The new mm of an exec starts zeroed; load_elf_binary sets end_code
 * and the final start_stack together, after the stack is laid out. */
int procfs__exec_stack_base(pid_t pid, struct procfs_stack *out,
			    char comm[16])
{
	struct procfs_stat st, again;
	int ret = read_stat(pid, &st);

	if (ret)
		return ret;
	if (st.state == 'Z' || st.state == 'X')
		return -ESRCH;
	if (!st.end_code || !st.start_stack)
		return -EAGAIN;
	/* end_code is stored just before start_stack: a second read
	 * that agrees closes that window */
	ret = read_stat(pid, &again);
	if (ret)
		return ret;
	if (again.start_stack != st.start_stack)
		return -EAGAIN;
	*out = (struct procfs_stack){ st.start_stack & ~(uint64_t)15,
				      again.start_brk };
	memcpy(comm, st.comm, sizeof(st.comm));
	return 0;
}

int procfs__wait_main_stack_base(pid_t pid, int timeout_ms,
				 struct procfs_stack *st)
{
	int64_t end = clock__mono_ns() + (int64_t)timeout_ms * 1000000;
	int ret;

	/* a command that is done before its base is read is a zombie,
	 * whose base no wait brings */
	while ((ret = procfs__main_stack_base(pid, st)) == -EAGAIN &&
	       clock__mono_ns() < end)
		usleep(50);
	return ret;
}

int procfs__comm(pid_t pid, pid_t tid, char *buf, size_t len)
{
	char path[80];
	int ret;

	snprintf(path, sizeof(path), "%s/%d/task/%d/comm", icppd_procdir,
		 (int)pid, (int)tid);
	ret = read_file(path, buf, len);
	if (!ret)
		buf[strcspn(buf, "\n")] = '\0';
	return ret;
}

int procfs__exe(pid_t pid, char *buf, size_t len)
{
	char link[80];
	ssize_t n;

	snprintf(link, sizeof(link), "%s/%d/exe", icppd_procdir, (int)pid);
	n = icppd_sys.readlink(link, buf, len - 1);
	if (n <= 0)
		return n < 0 ? -errno : -ENOENT;
	buf[n] = '\0';
	return 0;
}

int procfs__parse_maps_line(char *line, struct procfs_map *m)
{
	unsigned long long start, end, off, ino;
	unsigned maj, min;
	char perms[8];
	int n = 0;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end,
		   perms, &off, &maj, &min, &ino, &n) < 7 || strlen(perms) < 3)
		return -EINVAL;
	m->start = start;
	m->end = end;
	m->pgoff = off;
	m->dev = makedev(maj, min);
	m->ino = ino;
	m->prot = (perms[0] == 'r' ? PROT_READ : 0) |
		  (perms[1] == 'w' ? PROT_WRITE : 0) |
		  (perms[2] == 'x' ? PROT_EXEC : 0);
	m->path = n ? line + n : "";
	line[strcspn(line, "\n")] = '\0';
	return 0;
}

int procfs__maps(pid_t pid, int (*cb)(void *arg, const struct procfs_map *m),
		 void *arg)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	FILE *f;
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%d/maps", icppd_procdir, (int)pid);
	fd = sys__open(path, O_RDONLY, 0);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -errno;
	}
	while (!ret && getline(&line, &cap, f) > 0) {
		struct procfs_map m;

		if (!procfs__parse_maps_line(line, &m))
			ret = cb(arg, &m);
	}
	free(line);
	fclose(f);
	return ret;
}

int procfs__tasks(pid_t pid, pid_t **tids, size_t *n)
{
	char path[64];
	DIR *d;
	struct dirent *e;
	size_t cap = 0;

	snprintf(path, sizeof(path), "%s/%d/task", icppd_procdir, (int)pid);
	d = sys__opendir(path);
	if (!d)
		return -errno;
	*n = 0;
	*tids = NULL;
	while ((e = readdir(d))) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		if (grow(tids, &cap, *n + 1, sizeof(**tids), 16)) {
			free(*tids);
			closedir(d);
			return -ENOMEM;
		}
		(*tids)[(*n)++] = (pid_t)atoi(e->d_name);
	}
	closedir(d);
	return *n ? 0 : -ESRCH;
}

int procfs__parse_cpu_list(const char *s, int **cpus, size_t *n)
{
	size_t cap = 0;

	*n = 0;
	*cpus = NULL;
	while (*s && *s != '\n') {
		char *end;
		long a = strtol(s, &end, 10), b;

		if (end == s || a < 0)
			goto bad;
		b = a;
		s = end;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			if (end == s + 1 || b < a || b - a > 65536)
				goto bad;
			s = end;
		}
		for (long c = a; c <= b; c++) {
			if (grow(cpus, &cap, *n + 1, sizeof(**cpus), 8)) {
				free(*cpus);
				return -ENOMEM;
			}
			(*cpus)[(*n)++] = (int)c;
		}
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			goto bad;
	}
	if (*n)
		return 0;
bad:
	free(*cpus);
	*cpus = NULL;
	return -EINVAL;
}

int procfs__online_cpus(int **cpus, size_t *n)
{
	char buf[4096];
	int ret = read_file("/sys/devices/system/cpu/online", buf, sizeof(buf));

	if (ret)
		return ret;
	return procfs__parse_cpu_list(buf, cpus, n);
}

int procfs__parse_tracepoint_id(const char *s, uint64_t *id)
{
	uint64_t v = 0;
	size_t i = 0;

	for (; s[i] >= '0' && s[i] <= '9'; i++) {
		v = v * 10 + (uint64_t)(s[i] - '0');
		if (v > INT32_MAX)
			return -EINVAL;
	}
	if (!i || (s[i] && strcmp(s + i, "\n")))
		return -EINVAL;
	*id = v;
	return 0;
}

int procfs__exec_tracepoint_id(uint64_t *id)
{
	static const char *const roots[] = { "/sys/kernel/tracing",
					     "/sys/kernel/debug/tracing" };
	int ret = -ENOENT;

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		char path[128], buf[24];

		snprintf(path, sizeof(path),
			 "%s/events/sched/sched_process_exec/id", roots[i]);
		ret = read_file(path, buf, sizeof(buf));
		if (!ret)
			return procfs__parse_tracepoint_id(buf, id);
	}
	return ret;
}

int procfs__uid(pid_t pid, uint32_t *uid)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &st))
		return -errno;
	*uid = (uint32_t)st.st_uid;
	return 0;
}

int procfs__cpu_ns(pid_t pid, int64_t *user, int64_t *sys)
{
	struct procfs_stat st;
	long hz = sysconf(_SC_CLK_TCK);
	int ret = read_stat(pid, &st);

	if (ret)
		return ret;
	if (hz <= 0 ||
	    st.utime > INT64_MAX / 1000000000 || st.stime > INT64_MAX / 1000000000)
		return -EINVAL;
	*user = (int64_t)st.utime * (1000000000 / hz);
	*sys = (int64_t)st.stime * (1000000000 / hz);
	return 0;
}
