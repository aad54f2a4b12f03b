/*
 * fuzz_cficache.c - CFI cache files (binary/cfi_cache.h) someone else
 * wrote: libc's own table, as cfi.c stores it, patched by the input
 * (fuzz.h's fuzz_patch_file(): each 12 bytes a 4-byte offset into the
 * file, then up to 8 bytes written there, as wide as the offset's top
 * two bits say; a last odd byte cuts the file to that fraction of its
 * length), put in the cache under libc's name, then opened and looked
 * up across libc's text.  A
 * file that does not check out is listed afresh; one that does must
 * stay inside the section at every lookup.
 */
#include <fcntl.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "binary/cfi.h"
#include "binary/cfi_cache.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

static struct {
	Elf *elf;
	struct cfi_cache *cache;
	struct cfi_file file;	/* libc's */
	char path[256];		/* libc's table in the cache */
	uint8_t *good;
	size_t len;
} s;

static char dir[] = "/tmp/icppd-fuzz-cficache.XXXXXX";

/* libc opened once, its table stored in a fresh cache and read back. */
static int setup(void)
{
	int fd = open(LIBC, O_RDONLY | O_CLOEXEC);
	struct cfi *cfi;

	elf_version(EV_CURRENT);
	if (fd < 0 || cfi__file(fd, &s.file) ||
	    !(s.elf = elf_begin(fd, ELF_C_READ_MMAP, NULL)) ||
	    fuzz_make_dir(dir))
		return -1;
	if (cfi_cache__open(dir, &s.cache))
		return -1;
	cfi = cfi__open(s.elf, s.cache, &s.file);
	cfi__close(cfi);
	if (fuzz_find_file(dir, ".cfi", s.path, sizeof(s.path)) ||
	    !(s.good = fuzz_slurp(s.path, &s.len)))
		return -1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	struct cfi *cfi;

	if (!ready)
		ready = setup() ? -1 : 1;
	if (ready < 0)
		return 0;
	fuzz_patch_file(s.path, s.good, s.len, data, size);
	cfi = cfi__open(s.elf, s.cache, &s.file);
	for (uint64_t pc = 0x28000; cfi && pc < 0x1a0000; pc += 0x1003) {
		struct cfi_regs regs = { 0x7ffd0000, 0x7ffd0100, pc };
		uint64_t stack[64] = { 0 }, lo, hi, cfa;
		struct cfi_mem mem = { regs.sp - 64, (const uint8_t *)stack,
				       sizeof(stack) };
		struct cfi_step step;

		if (cfi__fde_range(cfi, pc, &lo, &hi))
			continue;
		if (pc < lo || pc >= hi)
			__builtin_trap();
		(void)cfi__cfa(cfi, pc, &regs, &cfa);
		(void)cfi__step(cfi, pc, &regs, &mem, &step);
	}
	cfi__close(cfi);
	return 0;
}
