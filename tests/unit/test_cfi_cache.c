/*
 * test_cfi_cache.c - CFI tables kept in a cache directory: libc's table
 * read back from the cache answers every lookup and unwinding step as
 * the one libdwarf listed; crafted and swapped cache files are refused
 * (the table is listed afresh, with the same answers); the directory and
 * key must be the user's alone; the hash is SipHash-2-4; the directory
 * is trimmed to its bound, the tables read least recently first.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "binary/cfi.h"
#include "binary/cfi_cache.h"
#include "common/sys.h"
#include "tests/tap.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

static char top[] = "/tmp/icppd-cfi-cache.XXXXXX";
static char dir[160];	/* the cache's, under top */
static struct cfi_file libc;	/* LIBC's identity */

/* The ELF of @path, its descriptor in *@fd. */
static Elf *open_elf(const char *path, int *fd)
{
	elf_version(EV_CURRENT);
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	return *fd < 0 ? NULL : elf_begin(*fd, ELF_C_READ_MMAP, NULL);
}

/* What one table answers at a pc: its FDE, its CFA and one unwinding
 * step over a stack whose every word holds its own address. */
struct answer {
	int range_ret, cfa_ret, step_ret;
	uint64_t lo, hi, cfa;
	struct cfi_regs regs;
	struct cfi_step step;
};

static uint64_t stack[512];

static void ask(struct cfi *cfi, uint64_t pc, struct answer *a)
{
	struct cfi_mem mem = { 0x7ff000000000, (const uint8_t *)stack,
			       sizeof(stack) };
	struct cfi_regs regs = { mem.start + 1024, mem.start + 2048, pc };

	for (size_t i = 0; i < 512; i++)
		stack[i] = mem.start + 8 * i;
	memset(a, 0, sizeof(*a));
	a->range_ret = cfi__fde_range(cfi, pc, &a->lo, &a->hi);
	a->cfa_ret = cfi__cfa(cfi, pc, &regs, &a->cfa);
	a->step_ret = cfi__step(cfi, pc, &regs, &mem, &a->step);
	a->regs = regs;
}

/* Pcs at which @a and @b answer differently, of *@n asked: every pc of
 * the first 64 KiB of libc's text and every 7th beyond, up to 2 MB. */
static size_t differ(struct cfi *a, struct cfi *b, size_t *n)
{
	size_t bad = 0;

	*n = 0;
	for (uint64_t pc = 0x28000; pc < 0x200000; pc += pc < 0x38000 ? 1 : 7) {
		struct answer x, y;

		ask(a, pc, &x);
		ask(b, pc, &y);
		(*n)++;
		bad += memcmp(&x, &y, sizeof(x)) != 0;
	}
	return bad;
}

static char *cache_file(void)
{
	static char path[128];
	char cmd[256];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ls %s/*.cfi", dir);
	p = popen(cmd, "r");
	if (!p || !fgets(path, sizeof(path), p))
		path[0] = '\0';
	if (p)
		pclose(p);
	path[strcspn(path, "\n")] = '\0';
	return path;
}

static void *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	void *b = NULL;

	if (fd >= 0 && !fstat(fd, &st) && (b = malloc((size_t)st.st_size)) &&
	    read(fd, b, (size_t)st.st_size) == st.st_size)
		*len = (size_t)st.st_size;
	if (fd >= 0)
		close(fd);
	return b;
}

static void spill(const char *path, const void *b, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || write(fd, b, len) != (ssize_t)len)
		ok(0, "wrote %s", path);
	if (fd >= 0)
		close(fd);
}

/* Whether a file under @under is mapped in this process. */
static bool mapped_here(const char *under)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	bool found = false;

	while (f && fgets(line, sizeof(line), f))
		found = found || strstr(line, under);
	if (f)
		fclose(f);
	return found;
}

/* Offsets in the file (cfi.c's image: header of 32 bytes, CIEs of 32,
 * FDEs of 32). */
#define HDR 32
#define CIE_SIZE 32
#define FDE_SIZE 32

static void test_crafted(Elf *elf, struct cfi *ref, struct cfi_cache *c)
{
	const char *path = cache_file();
	size_t len = 0, n;
	uint8_t *good = slurp(path, &len), *bad;
	uint32_t ncies;

	if (!good || len < HDR) {
		ok(0, "the cache file %s read", path);
		return;
	}
	memcpy(&ncies, good + 12, 4);
	bad = malloc(len);
	struct {
		const char *what;
		size_t at, size;
		uint64_t value;
		size_t cut;
	} cases[] = {
		{ "magic", 0, 1, 'X', 0 },
		{ "version", 8, 4, 99, 0 },
		{ "a CIE count past the end", 12, 4, ncies + 1, 0 },
		{ "an FDE count of 2^40", 16, 8, (uint64_t)1 << 40, 0 },
		{ "another section's size", 24, 8, 12345, 0 },
		{ "a CIE's instructions past the section", HDR + 16, 4,
		  0xfffffff0, 0 },
		{ "a CIE's code alignment 0", HDR, 8, 0, 0 },
		{ "an FDE's instructions past the section",
		  HDR + CIE_SIZE * ncies + FDE_SIZE * 3 + 20, 4, 0x7fffffff, 0 },
		{ "an FDE's CIE out of range",
		  HDR + CIE_SIZE * ncies + FDE_SIZE * 3 + 24, 4, ncies, 0 },
		{ "an FDE before the one ahead of it",
		  HDR + CIE_SIZE * ncies + FDE_SIZE * 3, 8, 0, 0 },
		{ "an empty FDE range",
		  HDR + CIE_SIZE * ncies + FDE_SIZE * 3 + 8, 8, 0, 0 },
		{ "a file cut short", 0, 0, 0, 7 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cfi_cache_stats before, after;
		struct cfi *t;

		memcpy(bad, good, len);
		if (cases[i].size)
			memcpy(bad + cases[i].at, &cases[i].value,
			       cases[i].size);
		spill(path, bad, len - cases[i].cut);
		cfi_cache__stats(c, CACHE_CFI, &before);
		t = cfi__open(elf, c, &libc);
		cfi_cache__stats(c, CACHE_CFI, &after);
		ok(t && !cfi__cached(t) &&
		   after.rejected == before.rejected + 1 &&
		   after.stores == before.stores + 1,
		   "%s: refused, listed afresh and stored again", cases[i].what);
		is_int(differ(ref, t, &n), 0, "... the same answers at %zu pcs",
		       n);
		cfi__close(t);
	}
	/* put back, the next open reads it */
	spill(path, good, len);
	{
		struct cfi *t = cfi__open(elf, c, &libc);

		ok(cfi__cached(t), "the file put back is read again");
		cfi__close(t);
	}
	/* a symlink in the file's place is not followed */
	{
		char target[160];
		struct cfi *t;

		snprintf(target, sizeof(target), "%s.real", path);
		rename(path, target);
		if (symlink(target, path))
			ok(0, "symlink made");
		t = cfi__open(elf, c, &libc);
		ok(t && !cfi__cached(t), "a symlink to a good file: not read");
		cfi__close(t);
		unlink(target);
	}
	free(bad);
	free(good);
}

/* Whether opening @path with cache @c reads its table from there (1),
 * lists it (0), or fails (-1). */
static int cached_open(const char *path, struct cfi_cache *c)
{
	struct cfi_file f;
	int fd, ret = -1;
	Elf *elf = open_elf(path, &fd);
	struct cfi *t = elf && !cfi__file(fd, &f) ? cfi__open(elf, c, &f) :
						    NULL;

	if (t)
		ret = cfi__cached(t);
	cfi__close(t);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return ret;
}

/*
 * A table is named by the file it was read from, not by its bytes: a
 * copy of libc has a table of its own, and a file changed since its
 * table was stored is listed again, even when its modification time is
 * put back (the change time moves with any change).
 */
static void test_identity(void)
{
	char copy[200], cmd[300], own[200];
	struct cfi_cache *c = NULL;
	struct stat st;

	/* a cache of its own: test_crafted() finds libc's table by listing */
	snprintf(own, sizeof(own), "%s/identity", top);
	snprintf(copy, sizeof(copy), "%s/libc-copy.so", top);
	snprintf(cmd, sizeof(cmd), "cp %s %s", LIBC, copy);
	if (cfi_cache__open(own, &c) || system(cmd) || stat(copy, &st)) {
		ok(0, "a cache and a copy of libc made");
		cfi_cache__close(c);
		return;
	}
	is_int(cached_open(LIBC, c), 0, "libc: listed into a new cache");
	is_int(cached_open(copy, c), 0, "a copy of libc: listed, not libc's");
	is_int(cached_open(copy, c), 1, "... its own table read the next time");
	sleep(1);	/* the change time a second on, whatever its grain */
	{
		struct timespec t[2] = { st.st_atim, st.st_mtim };

		utimensat(AT_FDCWD, copy, t, 0);
	}
	is_int(cached_open(copy, c), 0, "a file changed since, its "
	       "modification time put back: listed again");
	is_int(cached_open(LIBC, c), 1, "libc's own table still read");
	cfi_cache__close(c);
	unlink(copy);
}

/* Whether table @key's file is in directory @d. */
/* Tables of odd keys are CFI's in test_trim(), of even keys symbols'. */
static const char *suffix(uint64_t key)
{
	return key % 2 ? "cfi" : "sym";
}

static bool has_table(const char *d, uint64_t key)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%016llx.%s", d,
		 (unsigned long long)key, suffix(key));
	return access(path, F_OK) == 0;
}

/*
 * The directory is kept under CFI_CACHE_MAX_BYTES, the tables read least
 * recently removed first: 13 tables of 20 MiB (sparse files: no disk),
 * CFI's and symbols', the oldest read once, then a store: the second
 * oldest goes, and only it.
 */
static void test_trim(void)
{
	char d[] = "/tmp/icppd-trim.XXXXXX", path[256];
	struct cfi_cache *c = NULL;
	uint64_t key;
	struct cache_table table;
	bool others = true;

	if (!mkdtemp(d) || cfi_cache__open(d, &c)) {
		ok(0, "a cache to trim");
		return;
	}
	for (key = 1; key <= 13; key++) {
		struct timespec t[2] = { { 1000000 + (time_t)key, 0 },
					 { 1000000 + (time_t)key, 0 } };
		int fd;

		snprintf(path, sizeof(path), "%s/%016llx.%s", d,
			 (unsigned long long)key, suffix(key));
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || ftruncate(fd, (off_t)20 << 20) ||
		    futimens(fd, t))
			ok(0, "table %llu made", (unsigned long long)key);
		if (fd >= 0)
			close(fd);
	}
	is_int(cfi_cache__load(c, CACHE_CFI, 1, &table), 0,
	       "the oldest table read");
	cfi_cache__release(&table);
	is_int(cfi_cache__load(c, CACHE_CFI, 2, &table), -ENOENT,
	       "a table of symbols is not CFI's");
	is_int(cfi_cache__store(c, CACHE_SYMBOLS, 100, "x", 1), 0,
	       "a table stored over the bound");
	ok(!has_table(d, 2), "the table read least recently is removed");
	ok(has_table(d, 1), "the oldest, read since, stays");
	for (key = 3; key <= 13; key++)
		others = others && has_table(d, key);
	ok(others && has_table(d, 100), "the others stay: the directory "
	   "under the bound again");
	cfi_cache__close(c);
	snprintf(path, sizeof(path), "rm -rf %s", d);
	if (system(path))
		ok(0, "%s removed", d);
}

/* SipHash-2-4's test vectors (the paper's appendix): key 00..0f, the
 * messages 00..0e and the empty one. */
static void test_siphash(void)
{
	char d[] = "/tmp/icppd-sip.XXXXXX", key[64];
	uint8_t k[16], msg[15];
	struct cfi_cache *c = NULL;

	for (int i = 0; i < 16; i++)
		k[i] = (uint8_t)i;
	for (int i = 0; i < 15; i++)
		msg[i] = (uint8_t)i;
	if (!mkdtemp(d))
		return;
	chmod(d, 0700);
	snprintf(key, sizeof(key), "%s/key", d);
	spill(key, k, sizeof(k));
	is_int(cfi_cache__open(d, &c), 0, "a cache with a key of ours opens");
	if (c) {
		ok(cfi_cache__key(c, msg, 15) == 0xa129ca6149be45e5ULL,
		   "SipHash-2-4 of 15 bytes: the paper's value");
		ok(cfi_cache__key(c, msg, 0) == 0x726fdb47dd0e0e31ULL,
		   "SipHash-2-4 of none: the paper's value");
	}
	cfi_cache__close(c);
	chmod(key, 0622);
	is_int(cfi_cache__open(d, &c), -EPERM, "a key others may write: refused");
	chmod(key, 0600);
	chmod(d, 0777);
	is_int(cfi_cache__open(d, &c), -EPERM,
	       "a directory others may write: refused");
	unlink(key);
	rmdir(d);
}

int main(void)
{
	int fd;
	Elf *elf = open_elf(LIBC, &fd);
	struct cfi *ref, *cold, *warm;
	struct cfi_cache *c = NULL;
	struct cfi_cache_stats s;
	char sub[128];
	size_t n;

	if (!elf || cfi__file(fd, &libc) || !mkdtemp(top)) {
		ok(0, "%s opened, a temporary directory made", LIBC);
		return tap_done();
	}
	/* a directory to create, two levels down */
	snprintf(dir, sizeof(dir), "%s/a/b", top);
	is_int(cfi_cache__open(dir, &c), 0, "the cache opens, its directories "
	       "made");
	ref = cfi__open(elf, NULL, NULL);
	cold = cfi__open(elf, c, &libc);
	warm = cfi__open(elf, c, &libc);
	cfi_cache__stats(c, CACHE_CFI, &s);
	ok(ref && cold && warm, "libc's CFI opens without, into and from the "
	   "cache");
	ok(!cfi__cached(cold) && cfi__cached(warm),
	   "the first open lists it, the second reads it from the cache");
	is_int(s.stores, 1, "one table stored");
	is_int(s.hits, 1, "one table read back");
	is_int(cfi__nr_fdes(warm), cfi__nr_fdes(ref), "as many FDEs (%zu)",
	       cfi__nr_fdes(ref));
	is_int(differ(ref, warm, &n), 0, "the cached table answers as the "
	       "listed one at each of %zu pcs", n);
	ok(n > 100000, "over 100,000 pcs compared");
	is_int(differ(ref, cold, &n), 0, "so does the one that stored it");
	{	/* a small section: never cached */
		int sfd;
		Elf *small = open_elf("/proc/self/exe", &sfd);
		struct cfi_file f;
		struct cfi *t = small && !cfi__file(sfd, &f) ?
				cfi__open(small, c, &f) : NULL;
		struct cfi_cache_stats s2;

		cfi_cache__stats(c, CACHE_CFI, &s2);
		ok(t && s2.stores == 1 && s2.hits == 1,
		   "a section under %zu bytes: neither looked up nor stored",
		   CFI_CACHE_MIN_BYTES);
		cfi__close(t);
		elf_end(small);
		close(sfd);
	}
	test_identity();
	cfi__close(cold);
	cfi__close(warm);
	cfi_cache__close(c);
	if (!cfi_cache__open(dir, &c))	/* opened again: its key read */
		test_crafted(elf, ref, c);
	/* mapped, as record maps it: the same answers, the file in this
	 * process's mappings while the table is held; the same checks */
	cfi_cache__set_map(c, true);
	{
		struct cfi *mapped = cfi__open(elf, c, &libc);
		int cfd = open(cache_file(), O_RDONLY);
		struct stat st;
		/* where the file system allows (common/sys.h) */
		bool can = cfd >= 0 && !fstat(cfd, &st) &&
			   sys__may_map(cfd, &st);

		if (cfd >= 0)
			close(cfd);
		ok(cfi__cached(mapped) && mapped_here(dir) == can,
		   "mapped: the table read from the cache, the file %s",
		   can ? "mapped" : "not (its file system may change it)");
		is_int(differ(ref, mapped, &n), 0, "... the same answers at "
		       "%zu pcs", n);
		cfi__close(mapped);
		ok(!mapped_here(dir), "... and unmapped when it is closed");
		test_crafted(elf, ref, c);
	}
	cfi_cache__close(c);
	snprintf(sub, sizeof(sub), "rm -rf %s", top);
	if (system(sub))
		ok(0, "%s removed", top);
	cfi__close(ref);
	elf_end(elf);
	close(fd);
	test_siphash();
	test_trim();
	return tap_done();
}
