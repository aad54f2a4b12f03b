/*
 * launch.c - fork, hold, exec.
 */
#define _GNU_SOURCE
#include "record/launch.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/sys.h"

static int check_file(const char *path, const char *shown, char *err,
		      size_t errlen)
{
	unsigned char magic[20] = { 0 };
	struct stat sb;
	int fd;

	if (stat(path, &sb)) {
		int e = errno;

		snprintf(err, errlen, "%s: %s", shown, strerror(e));
		return e == ENOENT || e == ENOTDIR ? LAUNCH_NOT_FOUND :
		       LAUNCH_CANNOT_RUN;
	}
	if (S_ISDIR(sb.st_mode)) {
		snprintf(err, errlen, "%s: is a directory", shown);
		return LAUNCH_CANNOT_RUN;
	}
	if (access(path, X_OK)) {
		snprintf(err, errlen, "%s: not executable (%s)", shown,
			 strerror(errno));
		return LAUNCH_CANNOT_RUN;
	}
	fd = sys__open(path, O_RDONLY, 0);
	if (fd < 0 || read(fd, magic, sizeof(magic)) < 4) {
		snprintf(err, errlen, "%s: cannot read it: %s", shown,
			 fd < 0 ? strerror(errno) : "file too short");
		if (fd >= 0)
			close(fd);
		return LAUNCH_CANNOT_RUN;
	}
	close(fd);
	if (!memcmp(magic, "#!", 2))
		return 0;
	if (memcmp(magic, "\177ELF", 4)) {
		snprintf(err, errlen, "%s: not an ELF file (nor a #! script)",
			 shown);
		return LAUNCH_CANNOT_RUN;
	}
	/* icppd samples x86-64 user registers: a 32-bit or foreign
	 * program would run (or fail) without a single usable sample. */
	if (magic[EI_CLASS] != ELFCLASS64 || magic[EI_DATA] != ELFDATA2LSB ||
	    (magic[18] | magic[19] << 8) != EM_X86_64) {
		snprintf(err, errlen, "%s: not an x86-64 ELF program (%s, "
			 "machine %u): icppd samples x86-64 only", shown,
			 magic[EI_CLASS] == ELFCLASS32 ? "32-bit" : "64-bit",
			 (unsigned)(magic[18] | magic[19] << 8));
		return LAUNCH_CANNOT_RUN;
	}
	return 0;
}

/* The file execvp would run for @file, in @buf: 0 or -ENOENT. */
static int search_path(const char *file, char *buf, size_t len)
{
	const char *path = getenv("PATH");

	if (strchr(file, '/')) {
		snprintf(buf, len, "%s", file);
		return 0;
	}
	if (!path)
		path = "/usr/local/bin:/bin:/usr/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		snprintf(buf, len, "%.*s/%s", (int)(n ? n : 1),
			 n ? path : ".", file);
		if (!access(buf, F_OK))
			return 0;
		path += n + (path[n] == ':');
	}
	return -ENOENT;
}

int launch__resolve(const char *file, char *path, size_t len)
{
	char buf[PATH_MAX];

	if (!*file || search_path(file, buf, sizeof(buf)) ||
	    !realpath(buf, path) || strlen(path) >= len)
		return -ENOENT;
	return 0;
}

int launch__check(const char *file, char *err, size_t errlen)
{
	char buf[PATH_MAX];

	if (!*file) {
		snprintf(err, errlen, "empty command name");
		return LAUNCH_NOT_FOUND;
	}
	if (!search_path(file, buf, sizeof(buf)))
		return check_file(buf, file, err, errlen);
	snprintf(err, errlen, "%s: command not found", file);
	return LAUNCH_NOT_FOUND;
}

int launch__fork(char *const argv[], struct launch *l, char *err,
		 size_t errlen)
{
	int go[2], ex[2];
	char c;

	if (pipe2(go, O_CLOEXEC)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	if (pipe2(ex, O_CLOEXEC)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		close(go[0]);
		close(go[1]);
		return -1;
	}
	l->pid = fork();
	if (l->pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(go[0]); close(go[1]); close(ex[0]); close(ex[1]);
		return -1;
	}
	if (l->pid == 0) {
		int e;

		close(go[1]);
		close(ex[0]);
		/* Exit quietly when icppd gave up before letting us go. */
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		/* an ignored signal stays ignored across exec: the command
		 * gets SIGPIPE as it would without icppd */
		signal(SIGPIPE, SIG_DFL);
		execvp(argv[0], argv);
		e = errno;
		if (write(ex[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ex[1]);
	l->go_fd = go[1];
	l->err_fd = ex[0];
	return 0;
}

int launch__go(struct launch *l, char *err, size_t errlen)
{
	int e = 0;
	ssize_t n;

	if (write(l->go_fd, "g", 1) != 1) {
		snprintf(err, errlen, "starting the command: %s",
			 strerror(errno));
		return -1;
	}
	close(l->go_fd);
	l->go_fd = -1;
	do
		n = read(l->err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(l->err_fd);
	l->err_fd = -1;
	if (n == (ssize_t)sizeof(e)) {
		snprintf(err, errlen, "exec: %s", strerror(e));
		waitpid(l->pid, NULL, 0);
		return -1;
	}
	return 0;
}

void launch__abort(struct launch *l)
{
	if (l->go_fd >= 0)
		close(l->go_fd);
	if (l->err_fd >= 0)
		close(l->err_fd);
	l->go_fd = l->err_fd = -1;
	if (l->pid > 0)
		waitpid(l->pid, NULL, 0);
}
