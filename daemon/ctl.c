/*
 * ctl.c - the control socket (see ctl.h).
 */
#define _GNU_SOURCE
#include "daemon/ctl.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static int address(const char *path, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	strcpy(sa->sun_path, path);
	return 0;
}

static int connect_to(const char *path)
{
	struct sockaddr_un sa;
	int fd;

	if (address(path, &sa))
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

int ctl__check(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa;
	struct stat st;
	int fd;

	if (address(path, &sa)) {
		snprintf(err, errlen, "%s: path too long for a socket", path);
		return -1;
	}
	if (!lstat(path, &st)) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen, "%s: exists and is not a socket",
				 path);
			return -1;
		}
		fd = connect_to(path);
		if (fd >= 0) {
			close(fd);
			snprintf(err, errlen, "%s: in use: another icppd daemon "
				 "answers there", path);
			return -1;
		}
	}
	return 0;
}

int ctl__listen(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa;
	mode_t old;
	int fd;

	if (ctl__check(path, err, errlen))
		return -1;
	address(path, &sa);
	unlink(path);	/* stale: its daemon is gone */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		goto out_err;
	old = umask(077);	/* never wider than 0700, even for a moment */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		umask(old);
		goto out_close;
	}
	umask(old);
	if (chmod(path, 0600))
		goto out_close;
	if (listen(fd, 8))
		goto out_close;
	return fd;
out_close:
	close(fd);
out_err:
	snprintf(err, errlen, "%s: %s", path, strerror(errno));
	return -1;
}

int ctl__accept(int lfd, char *req, size_t len)
{
	struct pollfd p;
	size_t got = 0;
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return -1;
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	while (got + 1 < len && poll(&p, 1, 1000) == 1) {
		ssize_t n = read(fd, req + got, len - 1 - got);

		if (n <= 0)
			break;
		got += (size_t)n;
		if (memchr(req, '\n', got))
			break;
	}
	req[got] = '\0';
	req[strcspn(req, "\r\n")] = '\0';
	if (!got) {
		close(fd);
		return -1;
	}
	return fd;
}

int ctl__request(const char *path, const char *request)
{
	char buf[4096], last[256] = "";
	int fd = connect_to(path);
	size_t len;
	ssize_t n;

	if (fd < 0) {
		fprintf(stderr, "icppd: ctl: %s: %s (is the daemon running?)\n",
			path, strerror(errno));
		return 1;
	}
	len = strlen(request);
	if (write(fd, request, len) != (ssize_t)len || write(fd, "\n", 1) != 1) {
		fprintf(stderr, "icppd: ctl: %s: %s\n", path, strerror(errno));
		close(fd);
		return 1;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		fwrite(buf, 1, (size_t)n, stdout);
		/* keep the tail to find the last line */
		if ((size_t)n >= sizeof(last) - 1) {
			memcpy(last, buf + n - (sizeof(last) - 1), sizeof(last) - 1);
			last[sizeof(last) - 1] = '\0';
		} else {
			size_t keep = strlen(last);

			if (keep + (size_t)n >= sizeof(last)) {
				memmove(last, last + keep + (size_t)n - (sizeof(last) - 1),
					sizeof(last) - 1 - (size_t)n);
				keep = sizeof(last) - 1 - (size_t)n;
			}
			memcpy(last + keep, buf, (size_t)n);
			last[keep + (size_t)n] = '\0';
		}
	}
	close(fd);
	fflush(stdout);
	len = strlen(last);
	while (len && last[len - 1] == '\n')
		last[--len] = '\0';
	return len >= 2 && !strcmp(last + len - 2, "ok") &&
	       (len == 2 || last[len - 3] == '\n') ? 0 : 1;
}
