/*
 * launch.h - starting the command to profile.
 *
 * The child is forked first and waits on a pipe, so the perf events can
 * be attached to its pid (with enable_on_exec) before it runs anything;
 * then it is let go and execs.  Exec failures come back through a
 * close-on-exec pipe.  The child's stdin, stdout and stderr are icppd's.
 */
#ifndef ICPPD_RECORD_LAUNCH_H
#define ICPPD_RECORD_LAUNCH_H

#include <stddef.h>
#include <sys/types.h>

struct launch {
	pid_t pid;
	int go_fd;	/* write end; -1 once used */
	int err_fd;	/* read end; -1 once used */
};

/*
 * Finds @file as execvp would and checks that it can run: it exists, is
 * executable, and is an ELF file or a "#!" script.  0, or the exit
 * status a shell gives such a command, with a one-line reason in @err:
 * LAUNCH_NOT_FOUND ("foo: command not found") or LAUNCH_CANNOT_RUN (a
 * directory, not executable, not an x86-64 program).
 */
#define LAUNCH_NOT_FOUND 127
#define LAUNCH_CANNOT_RUN 126
int launch__check(const char *file, char *err, size_t errlen);

/* The canonical path (symlinks resolved, as the kernel names mappings)
 * of the file execvp would run for @file.  0 or -ENOENT.  @path must
 * hold PATH_MAX bytes. */
int launch__resolve(const char *file, char *path, size_t len);

/* Forks the child, stopped before exec.  0, or -1 with @err set. */
int launch__fork(char *const argv[], struct launch *l, char *err,
		 size_t errlen);
/* Lets the child exec.  0 when exec succeeded, else -1 with @err set
 * (the child has then exited with status 127). */
int launch__go(struct launch *l, char *err, size_t errlen);
/* Makes a child that was never let go exit, and reaps it. */
void launch__abort(struct launch *l);

#endif
