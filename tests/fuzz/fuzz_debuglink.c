/*
 * fuzz_debuglink.c - the search for a stripped binary's debug file by
 * its .gnu_debuglink (binary/debuginfo.h), on a crafted binary and a
 * crafted candidate: the input is a 16-bit length, the binary's bytes,
 * then the candidate's, written as PROG and as the two candidates gdb's
 * folders give for the name "c.debug" (the seeds' link).  Whatever the
 * section and the candidate claim, a file found is one of those, and
 * of PROG's build where both have a build-id.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "binary/debuginfo.h"
#include "binary/module.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];

static int put(const char *path, const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int ret;

	if (fd < 0)
		return -1;
	ret = write(fd, data, size) == (ssize_t)size ? 0 : -1;
	close(fd);
	return ret;
}

/* The files, gone with the process. */
static void clean(void)
{
	static const char *const names[] = { "prog", "c.debug",
		".debug/c.debug", ".debug", "" };
	char path[128];

	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		remove(path);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char prog[128], near[128], dot[128], out[4096], id[64], got[64];
	size_t n;

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/icppd-fuzz-dl.XXXXXX");
		if (!mkdtemp(dir))
			abort();
		atexit(clean);
	}
	if (size < 2)
		return 0;
	n = (size_t)data[0] | (size_t)data[1] << 8;
	if (n > size - 2)
		n = size - 2;
	snprintf(prog, sizeof(prog), "%s/prog", dir);
	snprintf(near, sizeof(near), "%s/c.debug", dir);
	snprintf(dot, sizeof(dot), "%s/.debug", dir);
	mkdir(dot, 0700);
	snprintf(dot, sizeof(dot), "%s/.debug/c.debug", dir);
	if (put(prog, data + 2, n) || put(near, data + 2 + n, size - 2 - n) ||
	    put(dot, data + 2 + n, size - 2 - n))
		return 0;
	if (module__file_build_id(prog, id, sizeof(id), NULL))
		id[0] = '\0';
	debuginfo__forget();	/* every input looked up afresh */
	if (debuginfo__find(prog, id, false, out, sizeof(out)) ==
	    DEBUGINFO_LINK) {
		if (strcmp(out, near) && strcmp(out, dot))
			__builtin_trap();
		if (id[0] && !module__file_build_id(out, got, sizeof(got),
						    NULL) &&
		    got[0] && strcmp(got, id))
			__builtin_trap();
	}
	return 0;
}
