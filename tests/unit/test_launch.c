/*
 * test_launch.c - starting the command to profile: the checks that
 * refuse what cannot run, with one-line reasons; the path the kernel
 * will name; and the fork-stop-go handshake, which reports exec
 * failures back through the pipe instead of losing them.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "record/launch.h"
#include "tests/tap.h"
#include "tests/unit/tmpdir.h"

static char dir[] = "/tmp/icppd-launch-XXXXXX";

static const char *file(const char *name, const char *text, mode_t mode)
{
	return tmpdir_file(dir, name, text, mode);
}

static void test_check(void)
{
	char err[300], path[PATH_MAX];

	is_int(launch__check("true", err, sizeof(err)), 0,
	       "a command on PATH");
	is_int(launch__check("no-such-command-xyz", err, sizeof(err)), 127,
	       "an unknown command: 127, as a shell exits");
	ok(strstr(err, "no-such-command-xyz: command not found") != NULL,
	   "says so as a shell would: %s", err);
	is_int(launch__check(file("data", "just text\n", 0755), err,
			     sizeof(err)), 126, "an executable text file: 126");
	ok(strstr(err, "data") != NULL, "is refused with a reason: %s", err);
	is_int(launch__check(file("noexec", "#!/bin/sh\n", 0644), err,
			     sizeof(err)), 126, "a file without x");
	ok(strstr(err, "noexec") != NULL, "named: %s", err);
	is_int(launch__check(file("script", "#!/bin/sh\nexit 3\n", 0755), err,
			     sizeof(err)), 0, "a #! script runs");
	is_int(launch__check(dir, err, sizeof(err)), 126, "a directory");
	is_int(launch__check("/no/such/dir/cmd", err, sizeof(err)), 127,
	       "a path that is not there: 127");

	is_int(launch__resolve("sh", path, sizeof(path)), 0, "sh resolves");
	ok(path[0] == '/' && !strstr(path, "/./"), "to a canonical path: %s",
	   path);
	is_int(launch__resolve("no-such-command-xyz", path, sizeof(path)),
	       -ENOENT, "an unknown command does not");
}

static void test_fork(void)
{
	char err[300], *ok_argv[] = { "/bin/sh", "-c", "exit 7", NULL };
	char *bad_argv[2] = { NULL, NULL };
	struct launch l;
	int status = 0;

	is_int(launch__fork(ok_argv, &l, err, sizeof(err)), 0, "forked");
	ok(l.pid > 0 && waitpid(l.pid, &status, WNOHANG) == 0,
	   "the child waits for the go");
	is_int(launch__go(&l, err, sizeof(err)), 0, "exec succeeded");
	waitpid(l.pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 7,
	   "the command ran to its own exit status");

	/* exec fails after the checks (the file changed in between) */
	bad_argv[0] = (char *)file("gone", "#!/bin/sh\n", 0755);
	is_int(launch__fork(bad_argv, &l, err, sizeof(err)), 0, "forked again");
	unlink(bad_argv[0]);
	is_int(launch__go(&l, err, sizeof(err)), -1,
	       "an exec failure comes back through the pipe");
	ok(strstr(err, "No such file") != NULL, "with its reason: %s", err);
	ok(waitpid(l.pid, &status, WNOHANG) < 0 && errno == ECHILD,
	   "and the failed child is already reaped");

	is_int(launch__fork(ok_argv, &l, err, sizeof(err)), 0, "a third fork");
	launch__abort(&l);
	ok(waitpid(l.pid, &status, WNOHANG) < 0 && errno == ECHILD,
	   "abort reaps the child that never ran");
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	test_check();
	test_fork();
	if (tmpdir_remove(dir))
		return 1;
	return tap_done();
}
