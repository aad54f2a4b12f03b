/*
 * tmpdir.h - a test's scratch directory: made from a mkdtemp template,
 * files written into it, removed with everything in it when the test is
 * done.
 */
#ifndef ICPPD_TESTS_TMPDIR_H
#define ICPPD_TESTS_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* Writes @text to @dir/@name with mode @mode (replacing the file); its
 * path, valid until the next call. */
static inline const char *tmpdir_file(const char *dir, const char *name,
				      const char *text, mode_t mode)
{
	static char path[300];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	chmod(path, mode);
	return path;
}

/* Removes @dir and its contents.  0 or -1. */
static inline int tmpdir_remove(const char *dir)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}

#endif
