/*
 * test_ctl.c - the control protocol end to end on a real socket: a
 * request and its reply, "error:" answers, a reply of megabytes, a
 * client that never speaks (dropped on time, sampling never waits),
 * and the refusals of ctl__listen (a live daemon, a non-socket) and its
 * replacing of a stale socket.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "daemon/ctl.h"
#include "tests/tap.h"
#include "tests/unit/tmpdir.h"

static char dir[] = "/tmp/icppd-ctl-XXXXXX";
static char sock[96], out[128];

static void answer(void *arg, const char *req, FILE *f)
{
	int *calls = arg;

	++*calls;
	if (!strcmp(req, "status")) {
		fprintf(f, "status: fine\nok\n");
	} else if (!strcmp(req, "big")) {
		for (int i = 0; i < 32768; i++)
			fprintf(f, "%031d\n", i);	/* 1 MiB */
		fprintf(f, "ok\n");
	} else {
		fprintf(f, "error: unknown request '%s'\n", req);
	}
}

/* Runs ctl__request(@req) in a child with stdout to @out while serving;
 * the child's exit status, or -1 when it did not end within 10 s. */
static int request(struct ctl_server *s, const char *req)
{
	int64_t until = clock__mono_ns() + 10 * 1000000000LL;
	pid_t pid;
	int status;

	fflush(stdout);		/* the child must not repeat TAP lines */
	pid = fork();
	if (pid == 0) {
		if (!freopen(out, "w", stdout))
			_exit(99);
		_exit(ctl__request(sock, req));
	}
	while (clock__mono_ns() < until) {
		ctl_server__service(s, true);
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		usleep(1000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

static char *slurp(const char *path, size_t *len)
{
	static char buf[2 << 20];
	FILE *f = fopen(path, "r");

	*len = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	buf[*len] = '\0';
	if (f)
		fclose(f);
	return buf;
}

static void test_protocol(void)
{
	char err[300];
	int calls = 0, lfd, silent;
	struct ctl_server *s;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct stat st;
	size_t len;
	int64_t t0;
	char c;

	lfd = ctl__listen(sock, err, sizeof(err));
	ok(lfd >= 0, "listening: %s", lfd >= 0 ? sock : err);
	ok(!stat(sock, &st) && (st.st_mode & 0777) == 0600,
	   "the socket is mode 0600");
	s = ctl_server__new(lfd, answer, &calls);
	is_int(request(s, "status"), 0, "a request answered 'ok' exits 0");
	is_str(slurp(out, &len), "status: fine\nok\n", "the reply, whole");
	is_int(request(s, "nonsense"), 1, "an 'error:' answer exits 1");
	ok(strstr(slurp(out, &len), "error: unknown request 'nonsense'") != NULL,
	   "and is passed on");
	is_int(request(s, "big"), 0, "a reply of a megabyte");
	slurp(out, &len);
	is_int(len, 32768 * 32 + 3, "arrives whole through a non-blocking server");
	is_int(calls, 3, "one answer per request");

	/* A client that connects and never sends: dropped on time, and the
	 * server never blocks on it meanwhile. */
	silent = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock);
	ok(!connect(silent, (struct sockaddr *)&a, sizeof(a)), "a silent client");
	t0 = clock__mono_ns();
	fcntl(silent, F_SETFL, O_NONBLOCK);
	while (clock__mono_ns() - t0 < (CTL_TIMEOUT_MS + 3000) * 1000000LL) {
		ctl_server__service(s, true);
		if (read(silent, &c, 1) == 0)
			break;
		usleep(5000);
	}
	ok(clock__mono_ns() - t0 >= CTL_TIMEOUT_MS * 1000000LL * 9 / 10,
	   "dropped only after the timeout");
	is_int((int)read(silent, &c, 1), 0, "then the server closed it");
	close(silent);
	is_int(request(s, "status"), 0, "the server still answers");

	is_int(ctl__check(sock, err, sizeof(err)), -1,
	       "a path where a daemon answers is refused");
	ok(strstr(err, sock) != NULL, "naming it: %s", err);
	is_int(ctl__listen(sock, err, sizeof(err)), -1,
	       "a second daemon on the same socket is refused");

	ctl_server__delete(s);
	close(lfd);
	is_int(ctl__check(sock, err, sizeof(err)), 0,
	       "a stale socket (nobody listening) may be replaced");
	lfd = ctl__listen(sock, err, sizeof(err));
	ok(lfd >= 0, "and is replaced");
	close(lfd);
	unlink(sock);
	close(open(sock, O_WRONLY | O_CREAT, 0600));
	is_int(ctl__listen(sock, err, sizeof(err)), -1,
	       "a regular file at the path is refused, left as it is");
	ok(!stat(sock, &st) && S_ISREG(st.st_mode), "the file is still there");
	unlink(sock);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	snprintf(sock, sizeof(sock), "%s/ctl.sock", dir);
	snprintf(out, sizeof(out), "%s/reply", dir);
	test_protocol();
	if (tmpdir_remove(dir))
		return 1;
	return tap_done();
}
