/*
 * fuzz_lines.c - the line-table reader (binary/lines.h) on any bytes:
 * what `report --lines` and `-f pprof` do with a recorded module, which
 * any local user can craft.  The bytes go to a file, since lines.c opens
 * modules by path as reports do; every probe address of the input is
 * looked up, and a row found must name a file; the functions inlined
 * there must be named, the last frame alone unnamed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "binary/lines.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

static int write_input(const uint8_t *data, size_t size)
{
	FILE *f;

	if (!path[0])
		snprintf(path, sizeof(path), "/tmp/fuzz_lines.%d", (int)getpid());
	f = fopen(path, "w");
	if (!f)
		return -1;
	if (size && fwrite(data, 1, size, f) != size) {
		fclose(f);
		return -1;
	}
	return fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t probe[FUZZ_MAX_PROBES];
	struct lines *l;
	size_t n;

	if (write_input(data, size))
		return 0;
	l = lines__new();
	if (!l)
		return 0;
	n = fuzz_probes(data, size, probe);
	for (size_t i = 0; i < n; i++) {
		const char *file;
		unsigned line;

		struct lines_frame fr[LINES_MAX_FRAMES];
		int nf;

		if (!lines__find(l, path, "", probe[i], &file, &line) &&
		    (!file || !line))
			__builtin_trap();
		nf = lines__inlined(l, path, "", probe[i], fr,
				    LINES_MAX_FRAMES);
		if (nf > LINES_MAX_FRAMES || (nf > 0 && fr[nf - 1].name))
			__builtin_trap();
		for (int j = 0; j + 1 < nf; j++)
			if (!fr[j].name)
				__builtin_trap();
	}
	lines__delete(l);
	return 0;
}
