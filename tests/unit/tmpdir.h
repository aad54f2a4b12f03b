/*
 * tmpdir.h - a test's scratch directory: made from a mkdtemp template,
 * removed with everything in it when the test is done.
 */
#ifndef ICPPD_TESTS_TMPDIR_H
#define ICPPD_TESTS_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>

/* Removes @dir and its contents.  0 or -1. */
static inline int tmpdir_remove(const char *dir)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}

#endif
