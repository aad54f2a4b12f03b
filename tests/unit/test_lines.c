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

/* Writes an ELF whose only DWARF is @info (as .debug_info) to a new
 * file; its path in @path. */
static int write_elf(char *path, const void *info, size_t size)
{
	struct ec_section s[] = {
		{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x1000, 0,
		  0, 0, info, size, 0, 0 },
		{ ".debug_info", SHT_PROGBITS, 0, 0, 0, 0, 0, info, size, 0,
		  0 },
		{ ".debug_abbrev", SHT_PROGBITS, 0, 0, 0, 0, 0, info, size, 0,
		  0 } };
	struct ec_file f;
	int fd = mkstemp(path), ret = -1;

	if (fd >= 0 && !ec_build(&f, s, 3)) {
		ret = write(fd, f.buf, f.len) == (ssize_t)f.len ? 0 : -1;
		free(f.buf);
	}
	if (fd >= 0)
		close(fd);
	return ret;
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

		if (write_elf(path, units[i], sizeof(units[i]))) {
			ok(0, "cannot write a crafted file");
			break;
		}
		is_int(lines__find(l, path, "", 0x1000, &file, &line), -ENOENT,
		       "malformed .debug_info %zu: no line, and no abort", i + 1);
		lines__free(l);
		unlink(path);
	}
	return tap_done();
}
