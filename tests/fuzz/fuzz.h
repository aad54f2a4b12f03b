/*
 * fuzz.h - what the libFuzzer harnesses share: addresses worth probing
 * in an ELF image that may be anything, and the patching of a cache
 * file that the table-cache harnesses (fuzz_cficache, fuzz_symcache)
 * write back for the code under test to read.
 *
 * The probes come from the input itself (entry point, executable
 * sections, symbol values), read with libelf on a copy, and are
 * bounded, so every input costs a bounded number of lookups.
 */
#ifndef ICPPD_TESTS_FUZZ_H
#define ICPPD_TESTS_FUZZ_H

#include <dirent.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_PROBES 256

static size_t fuzz_add(uint64_t *out, size_t n, uint64_t v)
{
	if (n < FUZZ_MAX_PROBES)
		out[n++] = v;
	return n;
}

/* Up to FUZZ_MAX_PROBES addresses of @data into @out; their number. */
static inline size_t fuzz_probes(const uint8_t *data, size_t size,
				 uint64_t *out)
{
	char *copy = malloc(size ? size : 1);
	Elf *elf;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	size_t n = 0;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	elf_version(EV_CURRENT);
	elf = elf_memory(copy, size);
	if (elf && gelf_getehdr(elf, &eh))
		n = fuzz_add(out, n, eh.e_entry);
	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh))
			break;
		if (sh.sh_flags & SHF_EXECINSTR) {
			n = fuzz_add(out, n, sh.sh_addr);
			n = fuzz_add(out, n, sh.sh_addr + sh.sh_size / 2);
			n = fuzz_add(out, n, sh.sh_addr + sh.sh_size - 1);
		}
		if ((sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (int i = 0; i < 64; i++) {
			GElf_Sym sym;

			if (!gelf_getsym(d, i, &sym))
				break;
			n = fuzz_add(out, n, sym.st_value);
			n = fuzz_add(out, n, sym.st_value + 4);
		}
	}
	if (elf)
		elf_end(elf);
	free(copy);
	return n;
}

/* The directory fuzz_make_dir() made, removed at exit. */
static inline char **fuzz_dir_slot(void)
{
	static char *dir;

	return &dir;
}

static inline void fuzz_rm_dir(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", *fuzz_dir_slot());
	if (system(cmd))
		fprintf(stderr, "fuzz: %s left behind\n", *fuzz_dir_slot());
}

/* A fresh directory from template @tmpl (mkdtemp(3)), removed when the
 * harness exits: 0, or -1. */
static inline int fuzz_make_dir(char *tmpl)
{
	if (!mkdtemp(tmpl))
		return -1;
	*fuzz_dir_slot() = tmpl;
	atexit(fuzz_rm_dir);
	return 0;
}

/* The one file of @dir whose name ends with @suffix, into @path: 0, or
 * -1 when there is none. */
static inline int fuzz_find_file(const char *dir, const char *suffix,
				 char *path, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t sl = strlen(suffix);
	int found = -1;

	while (d && (e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (n > sl && !strcmp(e->d_name + n - sl, suffix)) {
			snprintf(path, len, "%s/%s", dir, e->d_name);
			found = 0;
		}
	}
	if (d)
		closedir(d);
	return found;
}

/* The whole file @path, malloc'd, its length in *@len; NULL if empty
 * or unreadable. */
static inline uint8_t *fuzz_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = NULL;
	long n;

	if (f && !fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 &&
	    !fseek(f, 0, SEEK_SET) && (b = malloc((size_t)n)) &&
	    fread(b, 1, (size_t)n, f) == (size_t)n) {
		*len = (size_t)n;
	} else {
		free(b);
		b = NULL;
	}
	if (f)
		fclose(f);
	return b;
}

/* Writes the @len bytes at @good to @path, patched by the input: each
 * 12 bytes of it a 4-byte offset into the file, then up to 8 bytes
 * written there, as wide as the offset's top two bits say; a last odd
 * byte cuts the file to that fraction of its length. */
static inline void fuzz_patch_file(const char *path, const uint8_t *good,
				   size_t len, const uint8_t *data,
				   size_t size)
{
	uint8_t *img = malloc(len);
	size_t out = len;
	FILE *f;

	if (!img)
		return;
	memcpy(img, good, len);
	for (size_t i = 0; i + 12 <= size; i += 12) {
		uint32_t at;
		size_t width;

		memcpy(&at, data + i, 4);
		width = (size_t)1 << (at >> 30);
		at %= (uint32_t)len;
		if (width <= len - at)
			memcpy(img + at, data + i + 4, width);
	}
	if (size % 12)
		out = len * data[size - 1] / 256;
	f = fopen(path, "wb");
	if (f) {
		fwrite(img, 1, out, f);
		fclose(f);
	}
	free(img);
}

#endif
