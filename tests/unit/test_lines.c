/*
 * test_lines.c - source lines from crafted DWARF: a line table reader
 * that meets a malformed unit fails the lookup, it never aborts (libdwarf
 * abort()s on an error no handler takes).
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "binary/lines.h"
#include "tests/tap.h"
#include "tests/unit/elfcraft.h"

/* Writes an ELF whose DWARF is @info (as .debug_info), and @rng (as
 * .debug_rnglists) when not NULL, to a new file; its path in @path. */
static int write_elf(char *path, const void *info, size_t size,
		     const void *rng, size_t rng_size)
{
	struct ec_section s[] = {
		{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x1000, 0,
		  0, 0, info, size, 0, 0 },
		{ ".debug_info", SHT_PROGBITS, 0, 0, 0, 0, 0, info, size, 0,
		  0 },
		{ ".debug_abbrev", SHT_PROGBITS, 0, 0, 0, 0, 0, info, size, 0,
		  0 },
		{ ".debug_rnglists", SHT_PROGBITS, 0, 0, 0, 0, 0, rng,
		  rng_size, 0, 0 } };
	struct ec_file f;
	int fd = mkstemp(path), ret = -1;

	if (fd >= 0 && !ec_build(&f, s, rng ? 4 : 3)) {
		ret = write(fd, f.buf, f.len) == (ssize_t)f.len ? 0 : -1;
		free(f.buf);
	}
	if (fd >= 0)
		close(fd);
	return ret;
}

/*
 * A .debug_rnglists header of version 4: libdwarf 20210528 frees its
 * context, goes on, and frees it again, as it first loads .debug_info
 * (found by tests/fuzz/fuzz_lines).  Reading lines in a worker process
 * keeps the crash from the report: no line, and the reader goes on.
 */
static void test_crash(void)
{
	static const unsigned char unit[16] = { 12, 0, 0, 0, 5, 0, 1, 8, 0,
						0, 0, 0, 0, 0, 0, 0 };
	static const unsigned char rng[16] = { 12, 0, 0, 0, 4, 0, 8, 0, 0,
					       0, 0, 0, 0, 0, 0, 0 };
	char path[] = "/tmp/icppd-lines-XXXXXX";
	struct lines *l = lines__new();
	const char *file = NULL;
	unsigned line = 0;

	if (write_elf(path, unit, sizeof(unit), rng, sizeof(rng))) {
		ok(0, "cannot write a crafted file");
		return;
	}
	is_int(lines__find(l, path, "", 0x1000, &file, &line), -ENOENT,
	       "a reader that crashes libdwarf: no line, and the report lives");
	is_int(lines__find(l, path, "", 0x1004, &file, &line), -ENOENT,
	       "the module that crashed it is not read again");
	lines__delete(l);
	unlink(path);
}

int main(void)
{
	/* a 16-byte unit that claims more than it holds, and one whose
	 * 64-bit length runs past the section */
	static const unsigned char units[][16] = {
		{ 0x40, 0, 0, 0, 4, 0, 0, 0, 0, 0, 8, 1, 2, 3, 4, 5 },
		{ 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		  0xff, 0x7f, 4, 0, 0, 0 } };

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		char path[] = "/tmp/icppd-lines-XXXXXX";
		struct lines *l = lines__new();
		const char *file = NULL;
		unsigned line = 0;

		if (write_elf(path, units[i], sizeof(units[i]), NULL, 0)) {
			ok(0, "cannot write a crafted file");
			break;
		}
		is_int(lines__find(l, path, "", 0x1000, &file, &line), -ENOENT,
		       "malformed .debug_info %zu: no line, and no abort", i + 1);
		lines__delete(l);
		unlink(path);
	}
	test_crash();
	return tap_done();
}
