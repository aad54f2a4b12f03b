/*
 * bench/cputime.c - runs a command and writes its CPU time to a file, to
 * the microsecond (GNU time's %U and %S print hundredths, coarser than
 * what bench/ab.sh compares): "USER_S SYSTEM_S MINOR_FAULTS" of the
 * command and everything it waited for.
 *
 * Usage: cputime OUTFILE COMMAND [ARGS...]; exits with the command's
 * status.
 */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct rusage ru;
	int status;
	pid_t pid;
	FILE *f;

	if (argc < 3) {
		fprintf(stderr, "usage: cputime OUTFILE COMMAND [ARGS...]\n");
		return 2;
	}
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid)
		return 1;
	f = fopen(argv[1], "w");
	if (!f)
		return 1;
	fprintf(f, "%.6f %.6f %ld\n",
		ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
		ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, ru.ru_minflt);
	fclose(f);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
