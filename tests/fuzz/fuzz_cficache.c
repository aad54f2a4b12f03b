/*
 * fuzz_cficache.c - CFI cache files (binary/cfi_cache.h) someone else
 * wrote: libc's own table, as cfi.c stores it, patched by the input
 * (each 12 bytes: a 4-byte offset into the file, then up to 8 bytes
 * written there, as wide as the offset's top two bits say; a last odd
 * byte cuts the file to that fraction of its length), put in the cache
 * under libc's name, then opened and looked up across libc's text.  A
 * file that does not check out is listed afresh; one that does must
 * stay inside the section at every lookup.
 */
#include <dirent.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "binary/cfi.h"
#include "binary/cfi_cache.h"

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

/* The one table file in the cache directory, into s.path. */
static int find_table(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int found = -1;

	while (d && (e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (n > 4 && !strcmp(e->d_name + n - 4, ".cfi")) {
			snprintf(s.path, sizeof(s.path), "%s/%s", dir,
				 e->d_name);
			found = 0;
		}
	}
	if (d)
		closedir(d);
	return found;
}

static void cleanup(void)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "fuzz_cficache: %s left behind\n", dir);
}

/* libc opened once, its table stored in a fresh cache and read back. */
static int setup(void)
{
	int fd = open(LIBC, O_RDONLY | O_CLOEXEC);
	struct cfi *cfi;
	FILE *f;

	elf_version(EV_CURRENT);
	if (fd < 0 || cfi__file(fd, &s.file) ||
	    !(s.elf = elf_begin(fd, ELF_C_READ_MMAP, NULL)) || !mkdtemp(dir))
		return -1;
	atexit(cleanup);
	if (cfi_cache__open(dir, &s.cache))
		return -1;
	cfi = cfi__open(s.elf, s.cache, &s.file);
	cfi__close(cfi);
	if (find_table())
		return -1;
	f = fopen(s.path, "rb");
	if (!f || fseek(f, 0, SEEK_END) || (long)(s.len = (size_t)ftell(f)) <= 0 ||
	    fseek(f, 0, SEEK_SET) || !(s.good = malloc(s.len)) ||
	    fread(s.good, 1, s.len, f) != s.len)
		return -1;
	fclose(f);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	uint8_t *img;
	size_t len;
	struct cfi *cfi;
	FILE *f;

	if (!ready)
		ready = setup() ? -1 : 1;
	if (ready < 0 || !(img = malloc(s.len)))
		return 0;
	memcpy(img, s.good, s.len);
	len = s.len;
	for (size_t i = 0; i + 12 <= size; i += 12) {
		uint32_t at;
		size_t width;

		memcpy(&at, data + i, 4);
		width = (size_t)1 << (at >> 30);
		at %= (uint32_t)s.len;
		if (width <= s.len - at)
			memcpy(img + at, data + i + 4, width);
	}
	if (size % 12)
		len = len * data[size - 1] / 256;
	f = fopen(s.path, "wb");
	if (f) {
		fwrite(img, 1, len, f);
		fclose(f);
	}
	free(img);
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
