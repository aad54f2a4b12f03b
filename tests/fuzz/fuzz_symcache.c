/*
 * fuzz_symcache.c - symbol tables in the table cache (binary/cfi_cache.h,
 * CACHE_SYMBOLS) someone else wrote: libc's symbols, as module.c stores
 * them, patched by the input as fuzz_cficache patches a CFI table
 * (fuzz.h's fuzz_patch_file()), put back under libc's name, then libc
 * opened through a new module cache (the file read or mapped) and its
 * functions looked up across its text.  A file that does not check out
 * is read afresh from the tables; one that does must give each lookup a
 * function that starts at or below it, with a name that ends inside the
 * file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "binary/cfi_cache.h"
#include "binary/module.h"
#include "tests/fuzz/fuzz.h"

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

/* libc through a new module cache (its symbols stored the first time). */
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
	struct module *m = NULL;
	struct stat st;

	if (stat(LIBC, &st) || fuzz_make_dir(dir))
		return -1;
	s.origin = (struct module_origin){ .dev = st.st_dev,
					   .ino = st.st_ino };
	if (cfi_cache__open(dir, &s.cache))
		return -1;
	module_cache__delete(libc_through_cache(&m));
	if (fuzz_find_file(dir, ".sym", s.path, sizeof(s.path)) ||
	    !(s.good = fuzz_slurp(s.path, &s.len)))
		return -1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	struct module_cache *c;
	struct module *m = NULL;
	uint64_t start, limit, off;

	if (!ready)
		ready = setup() ? -1 : 1;
	if (ready < 0)
		return 0;
	fuzz_patch_file(s.path, s.good, s.len, data, size);
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
	module_cache__delete(c);
	return 0;
}
