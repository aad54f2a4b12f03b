/*
 * test_module.c - symbol lookup in .symtab, identity from FDEs in a
 * stripped copy, the vDSO, and modules that are not usable.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "binary/cfi_cache.h"
#include "binary/elfimage.h"
#include "common/sys.h"
#include "binary/module.h"
#include "tests/tap.h"
#include "tests/unit/elfcraft.h"

#define LIBC_PATH "/usr/lib/x86_64-linux-gnu/libc.so.6"

/* AddressSanitizer keeps freed memory before reusing it (256 MB by
 * default): a bound on the memory held now would measure that
 * quarantine, so the sanitizer build skips it (peaks still count). */
#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif

__attribute__((noinline)) int known_function(int x);
__attribute__((noinline)) int known_function(int x)
{
	return x * 3 + 1;
}

/*
 * Aliases: several names at one address.  The name kept is the one perf
 * keeps: non-weak over weak, global over local, fewer leading
 * underscores, the longer name, then byte order.  Each group's winner
 * would lose under the rules that follow the one that decides it.
 */
int zz_strong_b(int x);
int aaaa_weak_alias_b(int x);
int zz_global_c(int x);
int __alias_a_long_name(int x);
int alias_a(int x);
int __memcpy_d(int x);
int __memmove_d(int x);
int pick_e_one(int x);
int pick_e_two(int x);
__attribute__((noinline)) int zz_strong_b(int x) { return x * 5 + 2; }
extern __typeof(zz_strong_b) aaaa_weak_alias_b __attribute__((weak, alias("zz_strong_b")));
__attribute__((noinline)) int zz_global_c(int x) { return x * 7 + 3; }
static __typeof(zz_global_c) aaaa_local_alias_c __attribute__((alias("zz_global_c"), used));
__attribute__((noinline)) int __alias_a_long_name(int x) { return x * 13 + 6; }
extern __typeof(__alias_a_long_name) alias_a __attribute__((alias("__alias_a_long_name")));
__attribute__((noinline)) int __memcpy_d(int x) { return x * 9 + 4; }
extern __typeof(__memcpy_d) __memmove_d __attribute__((alias("__memcpy_d")));
__attribute__((noinline)) int pick_e_two(int x) { return x * 11 + 5; }
extern __typeof(pick_e_two) pick_e_one __attribute__((alias("pick_e_two")));

static uint64_t vaddr_of(struct module *m, const void *fn)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	uint64_t addr = (uint64_t)(uintptr_t)fn, v = 0;

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;

		if (sscanf(line, "%llx-%llx %*s %llx", &lo, &hi, &off) == 3 &&
		    addr >= lo && addr < hi) {
			module__vaddr(m, addr - lo + off, &v);
			break;
		}
	}
	if (f)
		fclose(f);
	return v;
}

/*
 * Crafted images: each once crashed or leaked in the root daemon or in
 * arr (double free, stack overflow, over-read, qsort(NULL), a libdwarf
 * error never freed); the sanitizer build turns a relapse into a failure.
 * Sections: 1 .text at 0x1000, 2 .symtab (link 3), 3 .strtab, 4 a note.
 */
enum { CR_EH_TWICE = 1, CR_BAD_DYNSYM = 2, CR_NO_SYMTAB = 4 };

static struct module *crafted(const Elf64_Sym *syms, size_t nsyms,
			      uint64_t sym_entsize, uint64_t sym_size,
			      uint32_t id_len, int how, const char *save_to)
{
	static uint8_t code[64] = { 0xc3 }, note[12100];
	static const char strtab[] = "\0f\0g";
	struct ec_section s[6] = {
		{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x1000,
		  0, 0, 0, code, sizeof(code), 0, 0 },
		{ ".symtab", how & CR_NO_SYMTAB ? SHT_PROGBITS : SHT_SYMTAB,
		  0, 0, sym_entsize, 3, 0, syms, nsyms * sizeof(*syms),
		  sym_size, 0 },
		{ ".strtab", SHT_STRTAB, 0, 0, 0, 0, 0, strtab,
		  sizeof(strtab), 0, 0 },
		{ ".note.gnu.build-id", SHT_NOTE, SHF_ALLOC, 0, 0, 0, 0, note,
		  ec_build_id_note(note, id_len), 0, 0 },
		{ ".eh_frame", SHT_PROGBITS, SHF_ALLOC, 0x2000, 0, 0, 0, code,
		  16, 0, 0 },
		{ ".eh_frame", SHT_PROGBITS, SHF_ALLOC, 0x3000, 0, 0, 0, code,
		  16, 0, 0 },
	};
	struct ec_file f;
	struct module *m;

	if (how & CR_BAD_DYNSYM)	/* after a good .symtab */
		s[4] = (struct ec_section){ ".dynsym", SHT_DYNSYM, SHF_ALLOC,
			0, 2 * sizeof(Elf64_Sym), 3, 0, syms, sizeof(*syms),
			0, 0 };
	if (ec_build(&f, s, how & CR_EH_TWICE ? 6 : how ? 5 : 4))
		return NULL;
	if (save_to) {
		FILE *out = fopen(save_to, "w");

		if (out) {
			fwrite(f.buf, 1, f.len, out);
			fclose(out);
		}
	}
	m = module__open_memory("crafted.so", f.buf, f.len);
	free(f.buf);
	return m;
}

static void test_crafted(void)
{
	Elf64_Sym syms[3] = { { 0 }, ec_func(1, 0x1000, 16),
			      ec_func(3, 0x1010, 0xfffffffffffffff0ULL) },
		  unsized[4] = { { 0 }, ec_func(1, 0x1000, 16),
				 ec_func(3, 0x1010, 0), ec_func(1, 0x1030, 16) };
	char tmp[] = "/tmp/icppd-crafted-XXXXXX", err[256];
	struct elf_image *img;
	struct module_func f;
	struct module *m;
	const uint8_t *code;
	uint8_t *id;
	size_t size;
	int fd;

	m = crafted(syms, 2, sizeof(Elf64_Sym), 0, 20, 0, NULL);
	is_int(module__error(m), 0, "crafted: a well-formed image opens");
	is_int(module__function(m, 0x1004, &f), 0, "crafted: its symbol is found");
	is_str(f.name, "f", "crafted: by name");
	is_str(module__build_id(m), "112233445566778899aabbccddeeff1021324354",
	       "crafted: a 20-byte build-id is read");
	module__delete(m);

	/* An unsized symbol with no FDE (crtstuff's __do_global_dtors_aux,
	 * where a sample in __cxa_finalize at exit returns): up to the
	 * next symbol, and not past the last one. */
	m = crafted(unsized, 4, sizeof(Elf64_Sym), 0, 20, 0, NULL);
	ok(!module__function(m, 0x1024, &f) && f.start == 0x1010 &&
	   f.name && !strcmp(f.name, "g"),
	   "an unsized symbol without an FDE: found up to the next symbol");
	ok(!module__function(m, 0x1034, &f) && f.start == 0x1030,
	   "... and the next symbol is found past it");
	module__delete(m);
	m = crafted(unsized, 3, sizeof(Elf64_Sym), 0, 20, 0, NULL);
	is_int(module__function(m, 0x1024, &f), -ENOENT,
	       "an unsized last symbol without an FDE: no function");
	module__delete(m);

	/* A .dynsym with sh_entsize above sh_size after a good .symtab:
	 * realloc(syms, 0) freed the array and module__delete freed it
	 * again. */
	m = crafted(syms, 2, sizeof(Elf64_Sym), 0, 20, CR_BAD_DYNSYM, NULL);
	is_int(module__error(m), 0, "sh_entsize > sh_size: the image still opens");
	is_int(module__nr_symbols(m), 1, "sh_entsize > sh_size: .symtab's symbol kept");
	module__delete(m);

	/* A tiny sh_entsize claims 24 times the entries the data holds. */
	m = crafted(syms, 2, 1, 0, 20, 0, NULL);
	is_int(module__nr_symbols(m), 1,
	       "sh_entsize 1: only the entries the data holds are read");
	module__delete(m);

	/* Fully stripped: no symbol table at all (qsort(NULL, 0)). */
	m = crafted(syms, 2, sizeof(Elf64_Sym), 0, 20, CR_NO_SYMTAB, NULL);
	is_int(module__nr_symbols(m), 0, "no symbols: none, and no qsort(NULL)");
	is_int(module__function(m, 0x1004, &f), -ENOENT,
	       "no symbols and no CFI: no function");
	module__delete(m);

	/* A 12,000-byte build-id note is not a build-id. */
	m = crafted(syms, 2, sizeof(Elf64_Sym), 0, 12000, 0, NULL);
	is_str(module__build_id(m), "", "a 12,000-byte build-id note is refused");
	module__delete(m);

	/* Two .eh_frame sections: dwarf_elf_init fails with an error that
	 * must be freed (LeakSanitizer checks). */
	m = crafted(syms, 2, sizeof(Elf64_Sym), 0, 20, CR_EH_TWICE, NULL);
	is_int(module__error(m), 0, "duplicate .eh_frame: the image opens");
	ok(!module__has_cfi(m), "duplicate .eh_frame: no CFI");
	module__delete(m);

	/* arr's reader: st_size 2^64 - 16 wrapped vaddr + size, and a long
	 * note overflowed the 128-byte hex buffer. */
	fd = mkstemp(tmp);
	close(fd);
	module__delete(crafted(syms, 3, sizeof(Elf64_Sym), 0, 12000, 0, tmp));
	img = elf_image__open(tmp, err, sizeof(err));
	ok(img != NULL, "arr reader opens the crafted file (%s)", img ? "" : err);
	if (img) {
		is_int(elf_image__function(img, 0x1010, &code, &size), -ENOENT,
		       "st_size 2^64-16: no function, no over-read");
		is_int(elf_image__function(img, 0x1000, &code, &size), 0,
		       "a sized symbol inside .text is found");
		is_int(size, 16, "with its size");
		is_int(elf_image__build_id(img, &id), 0,
		       "arr reader: a 12,000-byte build-id note is refused");
		elf_image__delete(img);
	}
	unlink(tmp);
}

/* The most memory this process has held, in MiB. */
static long peak_mib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss / 1024;
}

/* The memory this process holds now, in MiB. */
static long resident_mib(void)
{
	long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f || fscanf(f, "%*s %ld", &pages) != 1)
		pages = 0;
	if (f)
		fclose(f);
	return pages * (sysconf(_SC_PAGESIZE) / 1024) / 1024;
}

/* @f (freed) into a new file at template @path, @size bytes long: the
 * rest a hole.  0, or -1. */
static int write_sparse(char *path, struct ec_file *f, uint64_t size)
{
	int fd = mkstemp(path), ret = -1;

	if (fd >= 0 && write(fd, f->buf, f->len) == (ssize_t)f->len &&
	    !ftruncate(fd, (off_t)size))
		ret = 0;
	if (fd >= 0)
		close(fd);
	free(f->buf);
	return ret;
}

/* The file at PATH as a mapping of process @pid would name it. */
static struct module_origin origin_of(const char *path, int pid)
{
	struct stat st;

	if (stat(path, &st))
		return (struct module_origin){ 0 };
	return (struct module_origin){ .pid = pid, .dev = st.st_dev,
				       .ino = st.st_ino };
}

/*
 * Sections that claim a sparse hole: a 20 KB file whose 32 note
 * sections each cover one 32 MiB hole (libelf copied every one whole:
 * 1 GiB kept per file in the root daemon), one whose .eh_frame covers
 * 128 MiB (libdwarf copies it), and one whose .symtab covers 768 MiB
 * (libelf copied it: 788 MB and 2.5 s at each open).  Opened as the
 * daemon opens a file, the process's peak memory grows by a few MiB.
 */
static void test_sparse(void)
{
	static const char *what[] = { "32 notes over a 32 MiB hole",
		"a 128 MiB .eh_frame", "a 768 MiB .symtab" };
	static const uint8_t small[24];
	static const char strtab[] = "\0f";
	const uint64_t hole = 1 << 20, hole_size = 32u << 20;
	struct ec_section s[33];
	char path[] = "/tmp/icppd-sparse-XXXXXX";
	struct ec_file f;
	struct module *m;
	long before;

	for (int k = 0; k < 3; k++) {
		int n = k ? 1 : 32;

		for (int i = 0; i < n; i++)
			s[i] = (struct ec_section){ k ? ".eh_frame" : ".note.x",
				k ? SHT_PROGBITS : SHT_NOTE, SHF_ALLOC, 0, 0, 0,
				0, small, 16, k ? 4 * hole_size : hole_size,
				hole };
		if (k == 2) {
			s[0] = (struct ec_section){ ".symtab", SHT_SYMTAB, 0,
				0, sizeof(Elf64_Sym), 2, 1, small,
				sizeof(small), 24 * hole_size, hole };
			s[1] = (struct ec_section){ ".strtab", SHT_STRTAB, 0,
				0, 0, 0, 0, strtab, sizeof(strtab), 0, 0 };
			n = 2;
		}
		if (ec_build(&f, s, n))
			return;
		if (write_sparse(path, &f, hole + 24 * hole_size))
			return;
		before = peak_mib();
		m = module__open(path);
		is_int(module__error(m), 0, "%s: the file opens", what[k]);
		if (k == 1)
			ok(!module__has_cfi(m), "%s: no CFI read", what[k]);
		else if (k == 2)
			is_int(module__nr_symbols(m), 0, "%s: not read", what[k]);
		else
			is_str(module__build_id(m), "", "32 large notes: no build-id");
		ok(peak_mib() - before < 16, "%s: peak memory grew %ld MiB (< 16)",
		   what[k], peak_mib() - before);
		module__delete(m);
		unlink(path);
		strcpy(path, "/tmp/icppd-sparse-XXXXXX");
	}
}

/*
 * What a file declares before any section is read: a 20 KB file whose
 * section 0 declares 20 million sections (ELF's extended numbering:
 * libelf allocated for each at elf_begin(), 10 GB and 43 s), and files
 * of 60,000 loadable segments held mapped (each module kept them all).
 */
static void test_declared(void)
{
	static const uint8_t code[16] = { 0xc3 };
	const struct ec_section text = { ".text", SHT_PROGBITS,
		SHF_ALLOC | SHF_EXECINSTR, 0x1000, 0, 0, 0, code, sizeof(code),
		0, 0 };
	const size_t nph = 60000;
	struct module_cache *c = module_cache__new();
	struct module *held[48];
	char path[48][32];
	Elf64_Ehdr eh;
	Elf64_Shdr sh0 = { .sh_size = 20000000 };
	struct ec_file f;
	struct module *m;
	long before;

	if (!c || ec_build(&f, &text, 1))
		return;
	memcpy(&eh, f.buf, sizeof(eh));
	eh.e_shnum = 0;
	memcpy(f.buf, &eh, sizeof(eh));
	memcpy(f.buf + eh.e_shoff, &sh0, sizeof(sh0));
	strcpy(path[0], "/tmp/icppd-decl-XXXXXX");
	if (write_sparse(path[0], &f, eh.e_shoff + 64 * sh0.sh_size))
		return;
	before = peak_mib();
	m = module__open(path[0]);
	ok(module__error(m) != 0, "20 million sections declared: refused (%d)",
	   module__error(m));
	ok(peak_mib() - before < 16, "... peak memory grew %ld MiB (< 16)",
	   peak_mib() - before);
	module__delete(m);
	unlink(path[0]);

	before = resident_mib();
	for (int i = 0; i < 48; i++) {
		Elf64_Phdr *ph;
		struct module_origin o;

		held[i] = NULL;
		if (ec_build(&f, &text, 1))
			break;
		/* the program headers after the file, all loadable */
		memcpy(&eh, f.buf, sizeof(eh));
		eh.e_phoff = f.len;
		eh.e_phnum = (uint16_t)nph;
		ph = calloc(nph, sizeof(*ph));
		f.buf = realloc(f.buf, f.len + nph * sizeof(*ph));
		if (!ph || !f.buf)
			break;
		memcpy(f.buf, &eh, sizeof(eh));
		for (size_t j = 0; j < nph; j++)
			ph[j] = (Elf64_Phdr){ .p_type = PT_LOAD,
				.p_flags = PF_R | PF_X, .p_filesz = 16,
				.p_memsz = 16, .p_vaddr = 0x1000 * j };
		memcpy(f.buf + f.len, ph, nph * sizeof(*ph));
		f.len += nph * sizeof(*ph);
		free(ph);
		strcpy(path[i], "/tmp/icppd-decl-XXXXXX");
		if (write_sparse(path[i], &f, f.len))
			break;
		o = origin_of(path[i], 0);
		held[i] = module_cache__get(c, path[i], &o);
	}
	ok(held[47] && !module__error(held[47]),
	   "48 files of 60,000 loadable segments held: they open");
#ifdef TEST_ASAN
	skip("AddressSanitizer's quarantine holds freed memory",
	     "... memory held grew less than 24 MiB");
#else
	ok(resident_mib() - before < 24, "... memory held grew %ld MiB (< 24)",
	   resident_mib() - before);
#endif
	for (int i = 0; i < 48 && held[i]; i++) {
		module__release(held[i]);
		unlink(path[i]);
	}
	module_cache__delete(c);
}

static int count_code(void *arg, uint64_t vaddr, const uint8_t *code,
		      size_t len)
{
	uint64_t *bytes = arg;

	(void)vaddr;
	(void)code;
	bytes[0] += len;
	bytes[1]++;
	return 0;
}

/*
 * Code decoded once, and only what a segment loads: 32 code sections
 * over one 32 MiB hole of a sparse file (sites decoded each, 197 s at
 * 1 GB), and one more past the executable segment.
 */
static void test_code_once(void)
{
	static const uint8_t small[16];
	const uint64_t hole = 1 << 20, hole_size = 32u << 20;
	struct ec_section s[33];
	char path[] = "/tmp/icppd-code-XXXXXX";
	uint64_t seen[2] = { 0, 0 };
	struct ec_file f;
	Elf64_Phdr ph;
	struct module *m;
	long before;

	for (int i = 0; i < 33; i++)
		s[i] = (struct ec_section){ ".text", SHT_PROGBITS,
			SHF_ALLOC | SHF_EXECINSTR, 0x400000 + 0x1000 * i, 0, 0,
			0, small, sizeof(small), hole_size,
			i < 32 ? hole : hole + 2 * hole_size };
	if (ec_build(&f, s, 33))
		return;
	/* the one segment loads the hole, not the last section */
	memcpy(&ph, f.buf + sizeof(Elf64_Ehdr), sizeof(ph));
	ph.p_filesz = ph.p_memsz = hole + hole_size;
	memcpy(f.buf + sizeof(Elf64_Ehdr), &ph, sizeof(ph));
	if (write_sparse(path, &f, hole + 3 * hole_size))
		return;
	before = peak_mib();
	m = module__open(path);
	is_int(module__error(m), 0, "32 code sections over a hole: the file opens");
	is_int(module__code(m, count_code, seen), 0, "its code read");
	ok(seen[0] == hole_size && seen[1] == 1,
	   "the hole's 32 MiB once, the section past the segment not at all "
	   "(%llu MiB in %llu pieces)", (unsigned long long)(seen[0] >> 20),
	   (unsigned long long)seen[1]);
	ok(peak_mib() - before < 48, "peak memory grew %ld MiB (< 48)",
	   peak_mib() - before);
	module__delete(m);
	unlink(path);
}

/* A file of @nsyms function symbols @stride bytes apart, every one
 * named by the one string of @name_len bytes, at @path.  With @stride 0,
 * all at one address, named by ever longer tails of that string. */
static int symbols_file(const char *path, size_t nsyms, size_t name_len,
			uint64_t stride)
{
	static const uint8_t code[16];
	Elf64_Sym *syms = calloc(nsyms + 1, sizeof(*syms));
	char *strtab = calloc(name_len + 2, 1);
	struct ec_section s[3];
	struct ec_file f;
	int fd, ret = -1;

	if (!syms || !strtab)
		goto out;
	memset(strtab + 1, 'x', name_len);
	for (size_t i = 1; i <= nsyms; i++)
		syms[i] = (Elf64_Sym){ .st_name = stride ? 1 :
			(uint32_t)(name_len - (i - 1) * name_len / nsyms),
			.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
			.st_shndx = 1, .st_value = 0x1010 + stride * (i - 1),
			.st_size = 16 };
	s[0] = (struct ec_section){ ".text", SHT_PROGBITS,
		SHF_ALLOC | SHF_EXECINSTR, 0x1000, 0, 0, 0, code, sizeof(code),
		0, 0 };
	s[1] = (struct ec_section){ ".symtab", SHT_SYMTAB, 0, 0,
		sizeof(Elf64_Sym), 3, 1, syms, (nsyms + 1) * sizeof(*syms), 0,
		0 };
	s[2] = (struct ec_section){ ".strtab", SHT_STRTAB, 0, 0, 0, 0, 0,
		strtab, name_len + 2, 0, 0 };
	if (ec_build(&f, s, 3))
		goto out;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0 && write(fd, f.buf, f.len) == (ssize_t)f.len)
		ret = 0;
	if (fd >= 0)
		close(fd);
	free(f.buf);
out:
	free(syms);
	free(strtab);
	return ret;
}

/*
 * Symbol names are bounded by the tables they come from, and the
 * symbols of every module held by one budget: 65,000 symbols that all
 * name one 4,095-byte string took 284 MB of a 1.6 MB file, and four
 * such files mapped at once 1.4 GB of the root daemon.
 */
static void test_symbol_budget(void)
{
	char a[] = "/tmp/icppd-syms-a-XXXXXX", b[] = "/tmp/icppd-syms-b-XXXXXX";
	struct module_cache *c = module_cache__new();
	struct module_origin oa, ob;
	struct module *m, *n;
	struct module_func fn;
	long before;
	int fd;

	if (!c || (fd = mkstemp(a)) < 0)
		return;
	close(fd);
	if ((fd = mkstemp(b)) < 0)
		return;
	close(fd);
	if (symbols_file(a, 65000, 4095, 16) || symbols_file(b, 20000, 16, 16))
		return;
	before = peak_mib();
	m = module__open(a);
	is_int(module__error(m), 0, "65,000 symbols naming one 4 KB string: "
	       "the file opens");
	ok(peak_mib() - before < 32, "... peak memory grew %ld MiB (< 32)",
	   peak_mib() - before);
	ok(!module__function(m, 0x1000 + 16, &fn) && fn.name &&
	   strlen(fn.name) == 4095, "... its first functions keep their name");
	module__delete(m);

	/* the cache: one budget for the modules held */
	oa = origin_of(a, 0);
	ob = origin_of(b, 0);
	module_cache__set_symbol_budget(c, 200000);
	m = module_cache__get(c, b, &ob);
	ok(m && !module__function(m, 0x1000 + 16, &fn) && fn.name,
	   "a module within the symbol budget keeps its symbols");
	n = module_cache__get(c, a, &oa);
	ok(n && module__function(n, 0x1000 + 16, &fn) != 0 &&
	   module_cache__symbols_dropped(c) == 1,
	   "one opened past it keeps none, and is counted");
	module__release(m);
	module__release(n);
	module_cache__delete(c);
	unlink(a);
	unlink(b);
}

/* 65,000 aliases of one function, listed shortest name first: sorting
 * them by name (longest first) must not take n^2 steps, as an insertion
 * sort of each address's aliases would (minutes). */
static void test_one_address(void)
{
	char a[] = "/tmp/icppd-alias-XXXXXX";
	struct module_func fn;
	struct module *m;
	int fd = mkstemp(a);

	if (fd < 0)
		return;
	close(fd);
	if (symbols_file(a, 65000, 255, 0))
		return;
	m = module__open(a);
	ok(!module__error(m) && module__nr_symbols(m) == 1 &&
	   !module__function(m, 0x1010, &fn) && fn.start == 0x1010 &&
	   fn.name && strlen(fn.name) == 255, "65,000 aliases at one "
	   "address: one function, under its longest name");
	module__delete(m);
	unlink(a);
}

/*
 * The cache opens a mapping's file only when it is the file mapped: a
 * FIFO (open() blocked the root daemon forever), a symlink swapped in
 * for the library (to a root-only file), another inode (a process in
 * another mount namespace) all give -ESTALE without a read.
 */
static void test_cache(void)
{
	struct module_cache *c = module_cache__new();
	char dir[] = "/tmp/icppd-cache-XXXXXX", lib[300], fifo[300], link[300];
	char self[256] = "";
	struct module_origin o;
	struct module *a, *b, *d;
	struct module_func f;
	size_t built;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n > 0)
		self[n] = '\0';
	o = origin_of(self, 0);
	a = module_cache__get(c, self, &o);
	b = module_cache__get(c, self, &o);
	is_int(module__error(a), 0, "cache: the file mapped opens");
	ok(a && a == b, "cache returns the same module for the same inode");
	o.ino++;
	d = module_cache__get(c, self, &o);
	ok(d && d != a, "another inode is another module");
	is_int(module__error(d), -ESTALE, "another inode at the path: -ESTALE, not read");

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	snprintf(lib, sizeof(lib), "%s/lib.so", dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo.so", dir);
	snprintf(link, sizeof(link), "%s/link.so", dir);
	mkfifo(fifo, 0600);
	o = origin_of(fifo, 0);
	d = module_cache__get(c, fifo, &o);
	is_int(module__error(d), -ESTALE, "a FIFO at a mapped path: -ESTALE, open never blocks");
	/* A symlink to a root-only file, with the target's own inode. */
	symlink("/etc/shadow", link);
	o = origin_of("/etc/shadow", 0);
	d = module_cache__get(c, link, &o);
	is_int(module__error(d), -ESTALE, "a symlink at a mapped path: -ESTALE, never followed");
	/* Through a live process's root: this one's. */
	o = origin_of(self, getpid());
	d = module_cache__get(c, self, &o);
	ok(d == a, "through /proc/PID: the same module");

	/* Budget: CFI is built at a module's first use, not when it is
	 * opened; with room for one module's, building a second's
	 * releases the first; using the first rebuilds it. */
	{
		char copy[300], cmd[700];

		snprintf(copy, sizeof(copy), "%s/copy", dir);
		snprintf(cmd, sizeof(cmd), "cp %s %s", self, copy);
		if (system(cmd) == 0) {
			uint64_t v = vaddr_of(a, known_function);

			ok(module__has_cfi(a), "budget: the first one built");
			module_cache__set_budget(c, module_cache__bytes(c, NULL));
			o = origin_of(copy, 0);
			b = module_cache__get(c, copy, &o);
			module_cache__bytes(c, &built);
			is_int(built, 1, "budget: the second one opened, its CFI not built yet");
			ok(module__has_cfi(b), "budget: the second one built at its first use");
			module_cache__bytes(c, &built);
			is_int(built, 1, "budget: one module's CFI kept built");
			ok(module__has_cfi(a), "budget: the released one is rebuilt on use");
			is_int(module__function(a, v, &f), 0, "budget: and answers as before");
			is_str(f.name, "known_function", "budget: with its name");
			module_cache__bytes(c, &built);
			is_int(built, 1, "budget: the other one released in turn");
			unlink(copy);
		}
	}
	unlink(lib);
	unlink(fifo);
	unlink(link);
	rmdir(dir);
	module_cache__delete(c);
}

/* Files a cache that maps files (or not: @map) mapped to open @path. */
static uint64_t maps(const char *path, bool map)
{
	struct module_cache *c = module_cache__new();
	struct module_origin o = origin_of(path, 0);
	struct module *m;
	uint64_t n;

	module_cache__set_map_files(c, map);
	m = module_cache__get(c, path, &o);
	n = module__error(m) ? 99 : module_cache__files_mapped(c);
	module_cache__delete(c);
	return n;
}

/*
 * A module cache set to map files maps only a file that no one but root
 * and the caller can shrink (a mapped file that shrinks raises SIGBUS):
 * root's or the caller's own, writable by no one else, on a local file
 * system.  Its modules answer as read ones do.
 */
static void test_map(void)
{
	/* tmpfs, a local file system on any Linux machine (/tmp may be
	 * any file system at all) */
	char dir[] = "/dev/shm/icppd-map-XXXXXX", copy[300], cmd[700];
	char self[256] = "";
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	struct module_cache *c;
	struct module_origin o;
	struct module_func f;
	struct module *m;

	if (n <= 0 || !mkdtemp(dir)) {
		skip("no /dev/shm to write in", "map: files mapped");
		return;
	}
	self[n] = '\0';
	snprintf(copy, sizeof(copy), "%s/copy", dir);
	snprintf(cmd, sizeof(cmd), "cp %s %s", self, copy);
	if (system(cmd)) {
		ok(0, "map: a scratch copy");
		return;
	}
	chmod(copy, 0644);
	is_int(maps(copy, true), 1, "map: the caller's own file, writable by "
	       "it alone, is mapped");
	is_int(maps(copy, false), 0, "map: not by a cache that reads files");
	chmod(copy, 0664);
	is_int(maps(copy, true), 0, "map: a file its group may write is read");
	chmod(copy, 0646);
	is_int(maps(copy, true), 0, "map: a file anyone may write is read");
	chmod(copy, 0644);
	if (geteuid() == 0 && !chown(copy, 65534, 65534)) {
		is_int(maps(copy, true), 0, "map: another user's file is read");
		if (chown(copy, 0, 0))
			ok(0, "map: the copy given back to root");
	} else {
		skip("making another user's file needs root",
		     "map: another user's file is read");
	}

	c = module_cache__new();
	module_cache__set_map_files(c, true);
	o = origin_of(copy, 0);
	m = module_cache__get(c, copy, &o);
	is_int(module__error(m), 0, "map: a cache that maps opens the module");
	is_int(module_cache__files_mapped(c), 1,
	       "map: its symbols read from the mapping");
	ok(module__has_cfi(m), "map: its CFI read from the mapping");
	is_int(module_cache__files_mapped(c), 2,
	       "map: the file mapped again for it");
	is_int(module__function(m, vaddr_of(m, known_function), &f), 0,
	       "map: its functions found");
	is_str(f.name, "known_function", "map: by name, from the mapped .symtab");
	module_cache__delete(c);
	unlink(copy);
	rmdir(dir);
}

struct forget_log {
	size_t calls, n;
	const struct module *first;
};

static void log_forget(void *arg, const struct module *const *m, size_t n)
{
	struct forget_log *l = arg;

	l->calls++;
	l->n += n;
	l->first = n ? m[0] : NULL;
}

/*
 * Go's stack-switching functions end a walk (module__ends_walk): by
 * name, with or without the ".abi0" of an assembly function, and only
 * in a module with Go's sections.  A lookalike name and the same names
 * in C code do not.
 */
static void test_go_ends(void)
{
	static uint8_t code[0x100] = { 0xc3 };
	static const char strtab[] = "\0runtime.systemstack.abi0\0runtime.mcall"
		"\0runtime.systemstackx\0runtime.mstart.abi0x\0main.main";
	Elf64_Sym syms[6] = { { 0 }, ec_func(1, 0x1000, 16),
		ec_func(26, 0x1010, 16), ec_func(40, 0x1020, 16),
		ec_func(61, 0x1030, 16), ec_func(82, 0x1040, 16) };
	struct ec_section s[4] = {
		{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x1000,
		  0, 0, 0, code, sizeof(code), 0, 0 },
		{ ".symtab", SHT_SYMTAB, 0, 0, sizeof(Elf64_Sym), 3, 0, syms,
		  sizeof(syms), 0, 0 },
		{ ".strtab", SHT_STRTAB, 0, 0, 0, 0, 0, strtab, sizeof(strtab),
		  0, 0 },
		{ ".gopclntab", SHT_PROGBITS, SHF_ALLOC, 0x2000, 0, 0, 0, code,
		  16, 0, 0 },
	};

	for (int go = 1; go >= 0; go--) {
		struct ec_file f;
		struct module *m;

		if (ec_build(&f, s, go ? 4 : 3)) {
			ok(0, "crafted Go module");
			return;
		}
		m = module__open_memory("go.elf", f.buf, f.len);
		free(f.buf);
		if (!m || module__error(m)) {
			ok(0, "crafted Go module opens");
			module__delete(m);
			return;
		}
		is_int(module__is_go(m), go, "%s: Go by its sections", go ? "Go" : "C");
		is_int(module__ends_walk(m, 0x1000), go,
		       "%s: runtime.systemstack.abi0 ends a walk", go ? "Go" : "C");
		is_int(module__ends_walk(m, 0x1010), go,
		       "%s: runtime.mcall ends a walk", go ? "Go" : "C");
		ok(!module__ends_walk(m, 0x1020) && !module__ends_walk(m, 0x1030) &&
		   !module__ends_walk(m, 0x1040) && !module__ends_walk(m, 0),
		   "%s: lookalike names and other functions do not", go ? "Go" : "C");
		module__delete(m);
	}
}

/*
 * Whole modules go once nobody holds them: 300 files mapped and let go
 * but for the last 10, so 290 idle; 256 stay (the libraries of short
 * processes are parsed once), the 34 least recently used are freed, and
 * their owner is told first.  A user mapping file after file kept every
 * one in the root daemon for ever.
 */
static void test_evict(void)
{
	Elf64_Sym syms[2] = { { 0 }, ec_func(1, 0x1000, 16) };
	char dir[] = "/tmp/icppd-evict-XXXXXX", path[300][64];
	struct module_cache *c = module_cache__new();
	struct module *mods[300];
	struct forget_log log = { 0 };
	struct module_origin o;
	size_t held = 0;

	if (!mkdtemp(dir) || !c) {
		ok(0, "temporary folder");
		return;
	}
	for (int i = 0; i < 300; i++) {
		snprintf(path[i], sizeof(path[i]), "%s/m%d.so", dir, i);
		module__delete(crafted(syms, 2, sizeof(Elf64_Sym), 0, 20, 0,
				     path[i]));
		o = origin_of(path[i], 0);
		mods[i] = module_cache__get(c, path[i], &o);
		held += mods[i] && !module__error(mods[i]);
	}
	is_int(held, 300, "300 crafted modules opened");
	for (int i = 0; i < 290; i++)
		module__release(mods[i]);
	is_int(module_cache__evict(c, log_forget, &log), 34,
	       "290 idle: the 34 beyond 256 freed");
	ok(log.calls == 1 && log.n == 34 && log.first == mods[0],
	   "the owner is told once, of the least recently used first");
	is_int(module_cache__count(c), 266, "256 idle and 10 held stay");
	is_int(module_cache__evict(c, log_forget, &log), 0, "nothing more to free");
	o = origin_of(path[0], 0);
	mods[0] = module_cache__get(c, path[0], &o);
	ok(mods[0] && !module__error(mods[0]) && module__nr_symbols(mods[0]) == 1,
	   "an evicted module is opened again when mapped again");
	/* a cache at its bound of modules: a file mapped anew gets the
	 * shared module that reads nothing; cached ones are still found */
	module_cache__set_max(c, module_cache__count(c));
	o = origin_of(path[5], 0);
	mods[5] = module_cache__get(c, path[5], &o);
	o = origin_of(path[6], 0);
	mods[6] = module_cache__get(c, path[6], &o);
	ok(mods[5] && mods[5] == mods[6] &&
	   module__error(mods[5]) == -EMFILE &&
	   !strcmp(module__path(mods[5]), "[too many modules]") &&
	   module_cache__refused(c) == 2 &&
	   module_cache__count(c) == 267,
	   "past the bound: one shared module, -EMFILE, nothing opened");
	o = origin_of(path[0], 0);
	ok(module_cache__get(c, path[0], &o) != mods[5],
	   "a module already cached is still found past the bound");
	/* a perf map is a module too */
	ok(!module_cache__adopt(c, module__open(path[7])) &&
	   module_cache__refused(c) == 3 && module_cache__count(c) == 267,
	   "past the bound: a perf map parsed is not adopted");
	module_cache__delete(c);
	for (int i = 0; i < 300; i++)
		unlink(path[i]);
	rmdir(dir);
}

/*
 * Users who fill the cache do not blind it to everyone else (issue 51):
 * with a bound of 16, user 1000 opens 4 modules and no more, user 1001
 * 4 more, root up to the bound, and an executable a quarter past it.
 * Freed modules give their user room again.  Before, a user took every
 * place, and a program started then had no module at all.
 */
static void test_quota(void)
{
	Elf64_Sym syms[2] = { { 0 }, ec_func(1, 0x1000, 16) };
	char dir[] = "/tmp/icppd-quota-XXXXXX", path[24][64];
	struct module_cache *c = module_cache__new();
	struct module *mods[24];
	struct module_origin o;
	int good = 0;

	if (!mkdtemp(dir) || !c) {
		ok(0, "temporary folder");
		return;
	}
	module_cache__set_max(c, 16);
	for (int i = 0; i < 24; i++) {
		snprintf(path[i], sizeof(path[i]), "%s/q%d.so", dir, i);
		module__delete(crafted(syms, 2, sizeof(Elf64_Sym), 0, 20, 0,
				     path[i]));
	}
	for (int i = 0; i < 6; i++) {
		o = origin_of(path[i], 0);
		o.uid = 1000;
		mods[i] = module_cache__get(c, path[i], &o);
		good += mods[i] && !module__error(mods[i]);
	}
	is_int(good, 4, "user 1000 maps 6 files: 4 modules, a quarter of 16");
	ok(module__error(mods[5]) == -EMFILE, "... the 5th and 6th refused");
	o = origin_of(path[6], 0);
	o.uid = 1001;
	mods[6] = module_cache__get(c, path[6], &o);
	ok(mods[6] && !module__error(mods[6]), "user 1001 still has room");
	good = 0;
	for (int i = 7; i < 20; i++) {
		o = origin_of(path[i], 0);
		mods[i] = module_cache__get(c, path[i], &o);
		good += mods[i] && !module__error(mods[i]);
	}
	is_int(good, 11, "root: up to the bound of 16, no quota");
	o = origin_of(path[20], 0);
	o.uid = 1002;
	o.exe = true;
	mods[20] = module_cache__get(c, path[20], &o);
	ok(mods[20] && !module__error(mods[20]),
	   "the cache full: an executable still opened (a quarter past it)");
	o = origin_of(path[21], 0);
	o.uid = 1002;
	mods[21] = module_cache__get(c, path[21], &o);
	ok(module__error(mods[21]) == -EMFILE, "... a library not");
	for (int i = 0; i < 4; i++)
		module__release(mods[i]);
	module_cache__set_budget(c, 0);		/* every idle one goes */
	is_int(module_cache__evict(c, NULL, NULL), 4, "user 1000's 4 freed");
	o = origin_of(path[22], 0);
	o.uid = 1000;
	mods[22] = module_cache__get(c, path[22], &o);
	ok(mods[22] && !module__error(mods[22]),
	   "user 1000's modules freed: room for it again");
	module_cache__delete(c);
	for (int i = 0; i < 24; i++)
		unlink(path[i]);
	rmdir(dir);
}

/* An .eh_frame of one CIE and @nfdes FDEs of 20 bytes, each one byte
 * of code from 0x1000 on, into @eh (room for 24 + 20 * nfdes + 4). */
static size_t tiny_fdes(uint8_t *eh, uint32_t nfdes)
{
	/* CIE: version 1, "zR", code align 1, data align -8, RA 16,
	 * udata4 pointers; CFA = rsp + 8, RA at CFA - 8 */
	static const uint8_t cie[] = { 20, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R',
		0, 1, 0x78, 16, 1, 0x03, 0x0c, 7, 8, 0x90, 1, 0, 0 };
	size_t n = sizeof(cie);

	memcpy(eh, cie, n);
	for (uint32_t i = 0; i < nfdes; i++) {
		uint32_t fde[4] = { 16, (uint32_t)n + 4, 0x1000 + i, 1 };

		memcpy(eh + n, fde, sizeof(fde));
		memset(eh + n + 16, 0, 4);	/* no augmentation; nops */
		n += 20;
	}
	memset(eh + n, 0, 4);			/* the terminator */
	return n + 4;
}

/* An .eh_frame of one CIE (as tiny_fdes()) and @nfdes FDEs, FDE i for
 * [lo[i], lo[i] + len[i]), into @eh (room for 24 + 20 * nfdes + 4). */
static size_t fdes_at(uint8_t *eh, const uint32_t *lo, const uint32_t *len,
		      uint32_t nfdes)
{
	size_t n = tiny_fdes(eh, nfdes) - 4;

	for (uint32_t i = 0; i < nfdes; i++) {
		memcpy(eh + 24 + 20 * (size_t)i + 8, &lo[i], 4);
		memcpy(eh + 24 + 20 * (size_t)i + 12, &len[i], 4);
	}
	return n + 4;
}

/*
 * The FDE search of a large table (a page index, then a few FDEs) finds
 * the FDE of every address and none in the gaps: 20,000 FDEs with gaps
 * of 0 to 64 bytes, and some of megabytes or gigabytes, which make the
 * index's pages coarse.
 */
static void test_fde_search(void)
{
	enum { N = 20000 };
	static uint32_t lo[N], len[N];
	static uint8_t code[16];
	uint8_t *eh = malloc(28 + 20 * (size_t)N);
	uint64_t at = 0x1000, rng = 12345;
	struct module_func f;
	struct ec_file ef;
	struct module *m;
	unsigned wrong = 0, probes = 0;

	for (uint32_t i = 0; i < N; i++) {
		rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		at += (rng >> 33) % 65;
		if (i % 5000 == 4999)	/* a far jump */
			at += i == 9999 ? 0x40000000 : 0x300000;
		lo[i] = (uint32_t)at;
		len[i] = 1 + (uint32_t)((rng >> 20) % 200);
		at += len[i];
	}
	{
		struct ec_section sec[2] = {
			{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
			  0x1000, 0, 0, 0, code, sizeof(code), at - 0x1000,
			  0 },
			{ ".eh_frame", SHT_PROGBITS, SHF_ALLOC, 0x60000000, 0,
			  0, 0, eh, fdes_at(eh, lo, len, N), 0, 0 } };

		if (ec_build(&ef, sec, 2)) {
			ok(0, "crafted .eh_frame built");
			free(eh);
			return;
		}
	}
	m = module__open_memory("fdes.so", ef.buf, ef.len);
	for (uint32_t i = 0; i < N; i++) {
		uint64_t in[] = { lo[i], lo[i] + len[i] / 2, lo[i] + len[i] - 1 };
		uint64_t next = i + 1 < N ? lo[i + 1] : UINT64_MAX;

		for (int k = 0; k < 3; k++, probes++)
			wrong += module__function(m, in[k], &f) ||
				 f.start != lo[i];
		/* the gap after it, if any: no function */
		if (lo[i] + len[i] < next) {
			probes++;
			wrong += !module__function(m, lo[i] + len[i], &f);
		}
	}
	wrong += !module__function(m, lo[0] - 1, &f);
	wrong += !module__function(m, (uint64_t)at + 4096, &f);
	ok(module__has_cfi(m) && !wrong, "%u FDEs, gaps of up to 1 GiB: %u of "
	   "%u lookups wrong", N, wrong, probes + 2);
	module__delete(m);
	free(ef.buf);
	free(eh);
}

/*
 * The same for symbols: 20,000 sized functions with gaps between them,
 * some of megabytes or a gigabyte.  Each is found from its first byte to
 * its last, and no function in the gaps.
 */
static void test_symbol_search(void)
{
	enum { N = 20000 };
	static const char strtab[] = "\0f";
	static uint8_t code[16];
	Elf64_Sym *syms = calloc(N + 1, sizeof(*syms));
	uint64_t at = 0x1000, rng = 54321, last_end = 0;
	unsigned wrong = 0, probes = 0;
	struct module_func f;
	struct ec_file ef;
	struct module *m;

	if (!syms)
		return;
	for (size_t i = 1; i <= N; i++) {
		rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		at += (rng >> 33) % 65;
		if (i % 5000 == 0)
			at += i == 10000 ? 0x40000000 : 0x300000;
		syms[i] = ec_func(1, at, 1 + (rng >> 20) % 200);
		at += syms[i].st_size;
	}
	{
		struct ec_section sec[3] = {
			{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
			  0x1000, 0, 0, 0, code, sizeof(code), at - 0x1000,
			  0 },
			{ ".symtab", SHT_SYMTAB, 0, 0, sizeof(Elf64_Sym), 3,
			  1, syms, (N + 1) * sizeof(*syms), 0, 0 },
			{ ".strtab", SHT_STRTAB, 0, 0, 0, 0, 0, strtab,
			  sizeof(strtab), 0, 0 } };

		if (ec_build(&ef, sec, 3)) {
			ok(0, "crafted symbols built");
			free(syms);
			return;
		}
	}
	m = module__open_memory("syms.so", ef.buf, ef.len);
	for (size_t i = 1; i <= N; i++) {
		uint64_t a = syms[i].st_value, z = a + syms[i].st_size;
		uint64_t in[] = { a, a + (z - a) / 2, z - 1 };

		for (int k = 0; k < 3; k++, probes++)
			wrong += module__function(m, in[k], &f) ||
				 f.start != a;
		if (last_end < a) {	/* the gap before it */
			probes++;
			wrong += !module__function(m, a - 1, &f);
		}
		last_end = z;
	}
	probes++;
	wrong += !module__function(m, at + 4096, &f);
	ok(module__nr_symbols(m) == N && !wrong, "%u symbols, gaps of up to "
	   "1 GiB: %u of %u lookups wrong", N, wrong, probes);
	/* Again, each address twice, from the last: the second answer is
	 * the memo's, where the first left it (module.c's func_memo), and
	 * the same as a search's. */
	wrong = probes = 0;
	for (size_t i = N; i >= 1; i--) {
		uint64_t a = syms[i].st_value, z = a + syms[i].st_size;
		uint64_t in[] = { z - 1, a, a + (z - a) / 2, z - 1, a };

		for (int k = 0; k < 5; k++, probes++)
			wrong += module__function(m, in[k], &f) ||
				 f.start != a || !f.name || strcmp(f.name, "f");
	}
	ok(!wrong, "the same, remembered: %u of %u lookups wrong", wrong,
	   probes);
	module__delete(m);
	free(ef.buf);
	free(syms);
}

/* How many of @m's answers differ from @ref's at every 8th byte of
 * @ref's code (function start and name); the probes in *@n. */
static size_t answers_differ(struct module *ref, struct module *m, size_t *n)
{
	uint64_t start, off, limit;
	size_t wrong = 0;

	*n = 0;
	if (!m || module__code_span(ref, &start, &limit, &off))
		return 1;
	for (uint64_t a = start; a < limit; a += 8, (*n)++) {
		struct module_func x, y;
		int rx = module__function(ref, a, &x),
		    ry = module__function(m, a, &y);

		wrong += rx != ry || (!rx && (x.start != y.start ||
					      !x.name != !y.name ||
					      (x.name && strcmp(x.name, y.name))));
	}
	return wrong;
}

/* The one file of symbols in @dir, into @path. */
static bool sym_file(const char *dir, char *path, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	bool found = false;

	while (d && (e = readdir(d)))
		if (strstr(e->d_name, ".sym")) {
			snprintf(path, len, "%s/%s", dir, e->d_name);
			found = true;
		}
	if (d)
		closedir(d);
	return found;
}

/* The kB of this process's mappings of files under @dir that were
 * written: copied on write, anonymous now (Private_Dirty would count the
 * file's own pages not yet written back).  -1 when none is mapped. */
static long dirty_here(const char *dir)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false;
	long dirty = -1, kb;
	unsigned long lo, hi;

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)	/* a mapping */
			in = strstr(line, dir) != NULL;
		if (in && sscanf(line, "Anonymous: %ld kB", &kb) == 1)
			dirty = (dirty < 0 ? 0 : dirty) + kb;
	}
	if (f)
		fclose(f);
	return dirty;
}

/* libc through a new module cache with table cache @cc (in directory
 * @dir); its symbols' counts (CACHE_SYMBOLS) before and after in
 * *@before, *@after, dirty_here(@dir) once it answered in *@dirty (-1:
 * no file of @dir was mapped), its answers' differences from @ref's in
 * the return. */
static size_t libc_through(struct cfi_cache *cc, const char *dir,
			   struct module *ref, struct cfi_cache_stats *before,
			   struct cfi_cache_stats *after, long *dirty,
			   size_t *n)
{
	struct module_cache *c = module_cache__new();
	struct module_origin o = origin_of(LIBC_PATH, 0);
	struct module *m;
	size_t wrong;

	module_cache__set_cfi_cache(c, cc);
	cfi_cache__stats(cc, CACHE_SYMBOLS, before);
	m = module_cache__get(c, LIBC_PATH, &o);
	cfi_cache__stats(cc, CACHE_SYMBOLS, after);
	wrong = module__error(m) ? 1 : answers_differ(ref, m, n);
	*dirty = dirty_here(dir);
	module_cache__delete(c);
	return wrong;
}

/*
 * libc's 3,700 functions through the table cache (over SYM_CACHE_MIN):
 * the first module reads its tables and stores its symbols, a module of
 * another module cache reads them back, and both answer as libc opened
 * without the cache at every 8th byte of its code; then again mapped.
 * Then the file is spoiled in each way the checks look for, and read
 * and mapped each time: refused (counted), the tables read again and
 * the file stored again, the same answers.
 */
static void test_symbol_cache(void)
{
	static const struct {
		const char *what;
		size_t at;	/* SIZE_MAX: the last byte */
		uint64_t value;
		unsigned size, cut;
	} cases[] = {
		{ "another magic", 0, 'X', 1, 0 },
		{ "another version", 8, 2, 4, 0 },
		{ "one symbol more than the file holds", 16, 0, 0, 0 },
		{ "a name past the names", 48 + 16, UINT32_MAX, 8, 0 },
		{ "two symbols at one address", 48 + 32, 0, 0, 0 },
		{ "names that do not end", SIZE_MAX, 'x', 1, 0 },
		{ "a file cut short", 0, 0, 0, 1 },
		{ "an empty file", 0, 0, 0, UINT_MAX },
	};
	char dir[] = "/tmp/icppd-symcache-XXXXXX", path[512], cmd[600];
	struct module *ref = module__open(LIBC_PATH);
	struct cfi_cache_stats b, a;
	struct cfi_cache *cc = NULL;
	uint8_t *good = NULL, *bad;
	long dirty;
	size_t n = 0, len = 0;
	FILE *f;

	if (!ref || module__nr_symbols(ref) < 3000 || !mkdtemp(dir) ||
	    cfi_cache__open(dir, &cc)) {
		ok(0, "libc's symbols, a table cache");
		module__delete(ref);
		return;
	}
	is_int(libc_through(cc, dir, ref, &b, &a, &dirty, &n), 0,
	       "symbols cache: the module that stores them answers as "
	       "libc's own");
	ok(n > 100000, "... at every 8th byte of its code (%zu)", n);
	ok(a.stores == b.stores + 1 && a.hits == b.hits,
	   "... its symbols stored (%zu)", module__nr_symbols(ref));
	is_int(libc_through(cc, dir, ref, &b, &a, &dirty, &n), 0,
	   "... a module of another cache reads them back: the same answers");
	ok(a.hits == b.hits + 1 && a.stores == b.stores && dirty < 0,
	   "... read from the cache (not mapped), not stored again");
	if (!sym_file(dir, path, sizeof(path)) || !(f = fopen(path, "rb"))) {
		ok(0, "the file of symbols");
		goto out;
	}
	{	/* mapped where the file system allows (common/sys.h) */
		struct stat st;
		bool can = !fstat(fileno(f), &st) &&
			   sys__may_map(fileno(f), &st);

		cfi_cache__set_map(cc, true);
		is_int(libc_through(cc, dir, ref, &b, &a, &dirty, &n), 0,
		       "... mapped, as record maps it: the same answers");
		ok(a.hits == b.hits + 1 && (dirty >= 0) == can,
		   "... read from the file, %s", can ? "mapped" :
		   "not mapped (its file system may change it)");
		/* a page written would be copied: its fault and 4 KiB */
		ok(dirty <= 0, "... only read where it lies: %ld kB copied "
		   "on write", dirty);
	}
	good = malloc(64 << 20);
	len = good ? fread(good, 1, 64 << 20, f) : 0;
	fclose(f);
	bad = good ? malloc(len) : NULL;
	for (int map = 0; map < 2; map++) {
		cfi_cache__set_map(cc, map);
		for (size_t i = 0; bad && i < sizeof(cases) / sizeof(cases[0]);
		     i++) {
			size_t at = cases[i].at == SIZE_MAX ? len - 1 :
				    cases[i].at;
			size_t wlen = cases[i].cut == UINT_MAX ? 0 :
				      len - cases[i].cut;
			uint64_t v;

			memcpy(bad, good, len);
			if (cases[i].size) {
				memcpy(bad + at, &cases[i].value,
				       cases[i].size);
			} else if (!cases[i].cut && at == 16) {	/* nsyms + 1 */
				memcpy(&v, bad + 16, 8);
				v++;
				memcpy(bad + 16, &v, 8);
			} else if (!cases[i].cut) {	/* entry 1 at entry 0 */
				memcpy(bad + at, bad + 48, 8);
			}
			f = fopen(path, "wb");
			if (!f || fwrite(bad, 1, wlen, f) != wlen) {
				ok(0, "spoiled file written");
				if (f)
					fclose(f);
				break;
			}
			fclose(f);
			is_int(libc_through(cc, dir, ref, &b, &a, &dirty, &n),
			       0, "%s%s: the same answers", cases[i].what,
			       map ? " (mapped)" : "");
			ok(a.rejected == b.rejected + 1 &&
			   a.stores == b.stores + 1 && a.hits == b.hits,
			   "... refused, read from the tables, stored again");
		}
	}
	free(bad);
out:
	free(good);
	cfi_cache__close(cc);
	module__delete(ref);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		ok(0, "%s removed", dir);
}

/*
 * An .eh_frame of 600,000 FDEs of 20 bytes (12 MB): libdwarf allocates
 * about 300 bytes per FDE, 190 MB for this one in the root daemon, and
 * 1.2 GB for 64 MiB of them.  Refused past CFI_MAX_ENTRIES (524,288,
 * five times libLLVM-14's FDEs); 50,000 are read.
 */
static void test_many_fdes(void)
{
	static const uint32_t counts[] = { 50000, 600000 };
	static uint8_t code[16];

	for (int k = 0; k < 2; k++) {
		uint8_t *eh = malloc(28 + 20 * (size_t)counts[k]);
		struct ec_section s[2] = {
			{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
			  0x1000, 0, 0, 0, code, sizeof(code),
			  counts[k] + 16, 0 },
			{ ".eh_frame", SHT_PROGBITS, SHF_ALLOC, 0x20000000, 0,
			  0, 0, eh, 0, 0, 0 } };
		struct cfi_regs regs = { 0x10000, 0, 0 };
		struct ec_file f;
		struct module *m;
		uint64_t cfa = 0;

		s[1].size = tiny_fdes(eh, counts[k]);
		if (ec_build(&f, s, 2)) {
			ok(0, "crafted .eh_frame built");
			free(eh);
			return;
		}
		m = module__open_memory("fdes.so", f.buf, f.len);
		(void)module__cfa(m, 0x1000 + counts[k] / 2, &regs, &cfa);
		is_int(module__has_cfi(m), k == 0, "%u FDEs of 20 bytes: %s",
		       counts[k], k ? "no CFI read" : "CFI read");
		module__delete(m);
		free(f.buf);
		free(eh);
	}
}

int main(void)
{
	struct module *m = module__open("/proc/self/exe"), *s, *bad;
	struct module_func f, fs;
	uint64_t v = vaddr_of(m, known_function);
	char cmd[256], tmp[] = "/tmp/icppd-test-XXXXXX";
	int fd, ret;

	ok(v != 0, "function address maps to a link-time address");
	is_int(module__function(m, v, &f), 0, "function found at its start");
	is_str(f.name, "known_function", "symbol name from .symtab");
	is_int(f.start, v, "function start is the symbol address");
	is_int(module__function(m, v + 3, &f), 0, "function found inside");
	is_int(f.start, v, "inside address maps to the same start");
	ok(strlen(module__build_id(m)) == 40, "build-id read (%s)", module__build_id(m));
	ok(module__nr_symbols(m) > 10, "symbols loaded");
	is_int(module__function(m, 0x10, &f), -ENOENT, "no function at 0x10");
	{
		static const struct { const void *fn; const char *want, *why; } al[] = {
			{ zz_strong_b, "zz_strong_b", "non-weak over weak" },
			{ zz_global_c, "zz_global_c", "global over local" },
			{ alias_a, "alias_a", "fewer leading underscores" },
			{ __memcpy_d, "__memmove_d", "the longer name (perf's memmove)" },
			{ pick_e_two, "pick_e_one", "then byte order" },
		};

		for (size_t i = 0; i < sizeof(al) / sizeof(al[0]); i++) {
			f.name = NULL;
			module__function(m, vaddr_of(m, al[i].fn), &f);
			is_str(f.name ? f.name : "(none)", al[i].want,
			       "aliases: %s", al[i].why);
		}
	}

	/* A stripped copy: no names, the same identities from .eh_frame. */
	fd = mkstemp(tmp);
	close(fd);
	{
		char self[200] = "";

		if (readlink("/proc/self/exe", self, sizeof(self) - 1) < 0)
			return 1;
		snprintf(cmd, sizeof(cmd), "objcopy --strip-all %s %s", self, tmp);
	}
	ret = system(cmd);
	s = module__open(tmp);
	if (ret == 0 && s && !module__error(s)) {
		is_int(module__nr_symbols(s), 0, "stripped copy has no symbols");
		is_int(module__function(s, v, &fs), 0, "stripped function still identified");
		ok(fs.name == NULL, "stripped function has no name");
		is_int(fs.start, v, "FDE start equals the symbol address");
		is_str(module__build_id(s), module__build_id(m), "build-id survives strip");
	} else {
		skip("objcopy unavailable", "stripped copy");
	}
	module__delete(s);
	unlink(tmp);

	s = module__open_vdso();
	is_int(module__error(s), 0, "vDSO image opens");
	is_str(module__path(s), "[vdso]", "vDSO path");
	ok(module__has_cfi(s), "vDSO has CFI");
	module__delete(s);

	bad = module__open("/etc/hostname");
	is_int(module__error(bad), -ENOEXEC, "a text file is not ELF");
	module__delete(bad);
	bad = module__open("/nonexistent/lib.so");
	is_int(module__error(bad), -ENOENT, "a missing file is reported");
	module__delete(bad);

	test_cache();
	test_map();
	module__delete(m);
	test_crafted();
	test_symbol_budget();	/* first: the peak grows least before it */
	test_one_address();
	test_sparse();
	test_declared();
	test_many_fdes();
	test_fde_search();
	test_symbol_search();
	test_symbol_cache();
	test_code_once();
	test_go_ends();
	test_evict();
	test_quota();
	return tap_done();
}
