/*
 * ctl.c - the control socket (see ctl.h).
 */
#define _GNU_SOURCE
#include "common/clock.h"
#include "daemon/ctl.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/sys.h"

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
	fd = icppd_sys.socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
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
	fd = icppd_sys.socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC |
			      SOCK_NONBLOCK, 0);
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

/* A client: its request as it arrives, then its reply as it leaves. */
struct ctl_client {
	int fd;
	int64_t deadline;	/* CLOCK_MONOTONIC ns */
	char req[CTL_MAX_REQUEST];
	size_t got;
	char *reply;		/* NULL until the request is complete */
	size_t len, sent;
};

struct ctl_server {
	int lfd;
	struct ctl_client clients[CTL_MAX_CLIENTS];
	size_t n;
	ctl_answer_fn answer;
	void *arg;
};

struct ctl_server *ctl_server__new(int lfd, ctl_answer_fn answer, void *arg)
{
	struct ctl_server *s = calloc(1, sizeof(*s));

	if (s) {
		s->lfd = lfd;
		s->answer = answer;
		s->arg = arg;
	}
	return s;
}

static void drop(struct ctl_server *s, size_t i)
{
	close(s->clients[i].fd);
	free(s->clients[i].reply);
	s->clients[i] = s->clients[--s->n];
}

void ctl_server__delete(struct ctl_server *s)
{
	if (!s)
		return;
	while (s->n)
		drop(s, 0);
	free(s);
}

/* The whole reply in memory, bounded; a reply cut at the bound ends
 * with an error line instead of "ok". */
static void answer(struct ctl_server *s, struct ctl_client *c)
{
	FILE *out = open_memstream(&c->reply, &c->len);

	if (!out) {
		c->reply = NULL;
		c->len = 0;
		return;
	}
	c->req[strcspn(c->req, "\r\n")] = '\0';
	s->answer(s->arg, c->req, out);
	if (fclose(out)) {
		free(c->reply);
		c->reply = NULL;
		c->len = 0;
	} else if (c->len > CTL_MAX_REPLY) {
		static const char cut[] = "\nerror: reply too long\n";

		memcpy(c->reply + CTL_MAX_REPLY - (sizeof(cut) - 1), cut,
		       sizeof(cut) - 1);
		c->len = CTL_MAX_REPLY;
	}
}

/* Moves client @c on as far as it goes without blocking: 1 when done. */
static int step(struct ctl_server *s, struct ctl_client *c)
{
	while (!c->reply) {
		ssize_t n = read(c->fd, c->req + c->got,
				 sizeof(c->req) - 1 - c->got);

		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : 1;
		c->got += (size_t)n;
		c->req[c->got] = '\0';
		if (n == 0 || memchr(c->req, '\n', c->got) ||
		    c->got == sizeof(c->req) - 1) {
			if (!c->got)
				return 1;	/* closed without a word */
			answer(s, c);
			if (!c->reply)
				return 1;
		}
	}
	while (c->sent < c->len) {
		ssize_t n = send(c->fd, c->reply + c->sent, c->len - c->sent,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : 1;
		c->sent += (size_t)n;
	}
	return 1;
}

void ctl_server__service(struct ctl_server *s, bool pending)
{
	int64_t now = clock__mono_ns();

	while (pending) {	/* every pending connection, without waiting */
		int fd = accept4(s->lfd, NULL, NULL,
				 SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (fd < 0)
			break;
		if (s->n == CTL_MAX_CLIENTS) {	/* busy: try again later */
			close(fd);
			continue;
		}
		s->clients[s->n++] = (struct ctl_client){ .fd = fd,
			.deadline = now + CTL_TIMEOUT_MS * 1000000LL };
	}
	for (size_t i = 0; i < s->n;) {
		if (step(s, &s->clients[i]) || now > s->clients[i].deadline)
			drop(s, i);
		else
			i++;
	}
}

size_t ctl_server__clients(const struct ctl_server *s)
{
	return s->n;
}

int ctl__request(const char *path, const char *request)
{
	char buf[4096], last[256] = "";
	int fd = connect_to(path);
	struct ucred peer;
	socklen_t plen = sizeof(peer);
	size_t len;
	ssize_t n;

	if (fd < 0) {
		fprintf(stderr, "icppd: ctl: %s: %s (is the daemon running?)\n",
			path, strerror(errno));
		return 1;
	}
	/* whoever listens there answers: a daemon is root's or ours, and
	 * another user may have taken a path in a shared directory first */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &plen) ||
	    (peer.uid != 0 && peer.uid != geteuid())) {
		fprintf(stderr, "icppd: ctl: %s: the listener is uid %ld, "
			"neither root nor you: not your daemon (start it with "
			"--socket in a directory only you can write)\n", path,
			plen == sizeof(peer) ? (long)peer.uid : -1L);
		close(fd);
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
