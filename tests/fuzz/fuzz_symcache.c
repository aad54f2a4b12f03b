/*
 * fuzz_symcache.c - symbol tables in the table cache (binary/cfi_cache.h,
 * CACHE_SYMBOLS) someone else wrote: libc's symbols, as module.c stores
 * them, patched by the input as fuzz_cficache patches a CFI table (each
 * 12 bytes: a 4-byte offset into the file, then up to 8 bytes written
 * there, as wide as the offset's top two bits say; a last odd byte cuts
 * the file to that fraction of its length), put back under libc's name,
 * then libc opened through a new module cache (the file read or mapped)
 * and its functions looked up across its text.  A file that does not check out is read afresh
 * from the tables; one that does must give each lookup a function that
 * starts at or below it, with a name that ends inside the file.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "binary/cfi_cache.h"
#include "binary/module.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"

static struct {
	struct cfi_cache *cache;
	struct module_origin origin;	/* libc's */
	char path[256];			/* libc's symbols in the cache */
	uint8_t *good;
	size_t len;
} s;

static char dir[] = "/tmp/icppd-fuzz-symcache.XXXXXX";

/* The one file of symbols in the cache directory, into s.path. */
static int find_table(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int found = -1;

	while (d && (e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (n > 4 && !strcmp(e->d_name + n - 4, ".sym")) {
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
		fprintf(stderr, "fuzz_symcache: %s left behind\n", dir);
}

/* libc opened through a module cache once: its symbols stored. */
static struct module_cache *libc_through_cache(struct module **m)
{
	struct module_cache *c = module_cache__new();

	if (c) {
		module_cache__set_cfi_cache(c, s.cache);
		*m = module_cache__get(c, LIBC, &s.origin);
	}
	return c;
}

static int setup(void)
{
	struct module_cache *c;
	struct module *m = NULL;
	struct stat st;
	FILE *f;

	if (stat(LIBC, &st) || !mkdtemp(dir))
		return -1;
	atexit(cleanup);
	s.origin = (struct module_origin){ .dev = st.st_dev,
					   .ino = st.st_ino };
	if (cfi_cache__open(dir, &s.cache))
		return -1;
	c = libc_through_cache(&m);
	module_cache__free(c);
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
	struct module_cache *c;
	struct module *m = NULL;
	uint64_t start, limit, off;
	uint8_t *img;
	size_t len;
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
	/* read, or mapped as record maps it: by the input's length */
	cfi_cache__set_map(s.cache, size % 2);
	c = libc_through_cache(&m);
	if (m && !module__error(m) &&
	    !module__code_span(m, &start, &limit, &off))
		for (uint64_t pc = start; pc < limit; pc += 0x301) {
			struct module_func fn;

			volatile size_t name_len;

			if (module__function(m, pc, &fn))
				continue;
			if (fn.start > pc)
				__builtin_trap();
			/* read to its end: the sanitizer checks it is
			 * inside the file read */
			name_len = fn.name ? strlen(fn.name) : 0;
			(void)name_len;
		}
	module_cache__free(c);
	return 0;
}
