/*
 * module.c - ELF images through libelf: PT_LOAD segments, GNU build-id,
 * function symbols, CFI, and a cache keyed by path and inode.
 *
 * Symbols are read once at open into one array sorted by address (a few
 * thousand entries for libc), their names copied into the module, so
 * that neither needs the file again.  Lookups are binary searches;
 * nothing here allocates per sample.
 *
 * The files are a watched user's: a mapped library may be swapped for a
 * FIFO, a symlink to a root-only file, or a file of another mount
 * namespace.  So a mapping's file is opened the way the kernel mapped
 * it (see module_cache__get()), never blocks, and is read only when its
 * device and inode are the mapping's.  No file descriptor is kept: once
 * analysed, libelf is told the descriptor is done, and the sections read
 * stay in memory.  The CFI (the big part: libdwarf's FDE list and its
 * section copy) of a cached module is built from the file at its first
 * use, and released least recently used first when the cache holds more
 * than its budget, to be rebuilt on demand.
 */
#define _GNU_SOURCE
#include "binary/module.h"
#include "binary/cfi_cache.h"
#include "common/grow.h"
#include "common/hindex.h"
#include "common/pageindex.h"
#include "common/search.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/sys.h"

/* Work and memory per module are bounded: no x86-64 binary Debian ships
 * comes near these (libc: 3,000 symbols; chromium: 400,000). */
#define MODULE_MAX_SYMBOLS (4u << 20)
#define MODULE_MAX_NAME_BYTES (128u << 20)
/* Symbol and string tables libelf copies for one module, together
 * (node's are 18 MB, libclickhouse's .dynstr alone 13 MB): a crafted
 * .symtab claiming 800 MB of a sparse file's hole cost 788 MB and 2.5 s
 * per open.  A table past what is left is not read. */
#define MODULE_MAX_TABLE_BYTES ((size_t)128 << 20)
/* Sections and program headers a file may declare: libelf allocates
 * state for every section at elf_begin(), and an 8 KB sparse file whose
 * section 0 declared 20 million (ELF's extended numbering) cost 10 GB
 * and 43 s there.  The largest linked binaries have a few hundred. */
#define MODULE_MAX_SECTIONS 65535
/* Loadable segments kept: linkers emit two to six. */
#define MODULE_MAX_SEGMENTS 64
/* Names copied beyond twice their tables' bytes (sort_symbols()). */
#define NAMES_SLACK ((size_t)64 << 10)
/* libelf's own state for an open image, beside the CFI it holds. */
#define MODULE_ELF_BYTES 4096
/* A build-id note is 36 bytes; libelf copies a section whole when it is
 * read, so a note section is read only up to this size, and only this
 * many of them (a crafted file's 32 notes over one 32 MiB hole cost the
 * daemon a gigabyte). */
#define NOTE_MAX_BYTES 4096
#define NOTE_MAX_SECTIONS 16

struct segment {
	uint64_t offset, filesz, vaddr, memsz;
	bool exec;
};

/* Go's runtime functions past which no walk of a stack copy goes (see
 * module__ends_walk()), as its symbol table names them; assembly ones
 * carry an ".abi0" suffix there. */
static const char *const go_end_names[] = {
	"runtime.goexit", "runtime.mstart", "runtime.rt0_go",
	"runtime.systemstack", "runtime.mcall", "runtime.morestack",
	"runtime.asmcgocall", "runtime.nanotime1", "runtime.walltime",
};
#define GO_ENDS (sizeof(go_end_names) / sizeof(go_end_names[0]))

/* A symbol is also the cache file's entry (symbols_from_image() uses a
 * mapped file's where they lie, written never: no page is copied), so
 * its name is an offset into the module's names once they are copied
 * there (sort_symbols()); before, the name read in the table. */
struct symbol {
	uint64_t addr, size;
	union {
		const char *at;	/* read: in the ELF's (or perf map's) text */
		uint64_t off;	/* sorted: into names */
	} name;
	uint8_t bind, pad[7];
};

/* Recent answers of module__function() by address, in a module with an
 * index of its symbols: a deep stack's frames return to the same call
 * sites sample after sample, and each search costs cache misses in the
 * index, the symbols and the FDEs.  Empty slot: vaddr + 1 == 0. */
#define FUNC_MEMO_BITS 12
struct func_memo {
	uint64_t vaddr1;	/* vaddr + 1 */
	uint64_t start;
	const char *name;
};

struct module {
	char *path;
	const char *name;
	char build_id[41];
	int error;
	Elf *elf, *debug_elf;	/* NULL once released (see above) */
	void *image;		/* in-memory images (vDSO) */
	struct segment *segs;
	size_t nsegs;
	struct symbol *syms;
	size_t nsyms;
	/* of the symbols, where there are more than SYM_INDEX_MIN */
	struct page_index sym_pages;
	struct func_memo *memo;	/* 1 << FUNC_MEMO_BITS slots, or NULL */
	char *names;		/* the symbols' names, NUL-separated */
	struct cache_table sym_image;	/* a cache file holding syms and
					 * names; none: each is its own
					 * allocation */
	size_t names_bytes;
	size_t string_bytes;	/* of the tables the names come from */
	size_t table_bytes;	/* symbol and string tables read */
	struct cfi *cfi;
	bool go;		/* Go code (see module__is_go) */
	uint64_t go_ends[2 * GO_ENDS];	/* see module__ends_walk() */
	size_t ngo_ends;
	bool cfi_released;	/* no cfi held: built on first use (a cached
				 * module's, and one the cache released) */
	struct module_origin origin;	/* cache key and where to reopen */
	struct module_cache *cache;	/* NULL: not in a cache */
	uint64_t last_use;	/* the cache's clock at the last lookup */
	uint32_t refs;		/* holders (module_cache__get, module__hold) */
};

static void read_segments(struct module *m)
{
	size_t n;

	if (elf_getphdrnum(m->elf, &n) || !n)
		return;
	m->segs = calloc(n < MODULE_MAX_SEGMENTS ? n : MODULE_MAX_SEGMENTS,
			 sizeof(*m->segs));
	if (!m->segs)
		return;
	for (size_t i = 0; i < n && m->nsegs < MODULE_MAX_SEGMENTS; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(m->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		m->segs[m->nsegs++] = (struct segment){
			ph.p_offset, ph.p_filesz, ph.p_vaddr, ph.p_memsz,
			(ph.p_flags & PF_X) != 0 };
	}
}

static void read_build_id(struct module *m)
{
	Elf_Scn *scn = NULL;
	int notes = 0;

	while ((scn = elf_nextscn(m->elf, scn)) && notes < NOTE_MAX_SECTIONS) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		if (notes++, sh.sh_size > NOTE_MAX_BYTES)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off))) {
			const unsigned char *desc;

			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((const char *)d->d_buf + name_off, "GNU", 4) ||
			    nh.n_descsz == 0 || nh.n_descsz > 20)
				continue;
			desc = (const unsigned char *)d->d_buf + desc_off;
			for (size_t i = 0; i < nh.n_descsz; i++)
				snprintf(m->build_id + 2 * i, 3, "%02x", desc[i]);
			return;
		}
	}
}

/* Go's linker names its runtime tables .gopclntab (kept when the binary
 * is stripped: the runtime reads it) and .go.buildinfo.  Section headers
 * only: nothing of the sections is read. */
static bool is_go(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (gelf_getshdr(scn, &sh) &&
		    (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    (!strcmp(name, ".gopclntab") ||
		     !strcmp(name, ".go.buildinfo")))
			return true;
	}
	return false;
}

/* Whether a symbol table of @bytes and its string table @strings fit
 * in what is left of MODULE_MAX_TABLE_BYTES; counted when they do. */
static bool table_fits(struct module *m, uint64_t bytes, Elf_Scn *strings)
{
	GElf_Shdr sh;
	size_t left = MODULE_MAX_TABLE_BYTES - m->table_bytes;

	if (strings && gelf_getshdr(strings, &sh)) {
		if (sh.sh_size > left)
			return false;
		left -= sh.sh_size;
	}
	if (bytes > left)
		return false;
	m->table_bytes = MODULE_MAX_TABLE_BYTES - left + bytes;
	return true;
}

static int add_symbols(struct module *m, Elf *elf, Elf64_Word type)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d, *sd;
		Elf_Scn *strings;
		size_t count;
		struct symbol *t;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type ||
		    !sh.sh_entsize)
			continue;
		strings = elf_getscn(elf, sh.sh_link);
		if (!table_fits(m, sh.sh_size, strings))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		sd = strings ? elf_getdata(strings, NULL) : NULL;
		m->string_bytes += sd ? sd->d_size : 0;
		/* The entries the data really holds: a crafted sh_entsize
		 * (larger than sh_size, or tiny) must neither allocate zero
		 * bytes (realloc(p, 0) frees p) nor many times the file. */
		count = d->d_size / sizeof(Elf64_Sym);
		if (sh.sh_size / sh.sh_entsize < count)
			count = sh.sh_size / sh.sh_entsize;
		if (!count)
			continue;
		t = realloc(m->syms, (m->nsyms + count) * sizeof(*t));
		if (!t)
			return -ENOMEM;
		m->syms = t;
		for (size_t i = 0; i < count; i++) {
			GElf_Sym s;
			const char *name;
			int st;

			if (!gelf_getsym(d, (int)i, &s))
				break;
			st = GELF_ST_TYPE(s.st_info);
			if ((st != STT_FUNC && st != STT_GNU_IFUNC) ||
			    s.st_shndx == SHN_UNDEF || !s.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, s.st_name);
			if (!name || !*name)
				continue;
			if (m->nsyms == MODULE_MAX_SYMBOLS)
				return 0;
			m->syms[m->nsyms++] = (struct symbol){
				s.st_value, s.st_size, { .at = name },
				GELF_ST_BIND(s.st_info), { 0 } };
		}
	}
	return 0;
}

static size_t leading_underscores(const char *name)
{
	size_t n = 0;

	while (name[n] == '_')
		n++;
	return n;
}

/*
 * By address; at one address (aliases of one function) the name kept
 * comes first: the name perf keeps, so that profiles compare by name.
 * Sized over unsized, non-weak over weak, global over local, fewer
 * leading underscores (memcpy over __memcpy), the longer name (glibc's
 * __memmove_avx512_unaligned_erms over __memcpy_avx512_unaligned_erms),
 * and then, where perf keeps whichever its table listed first, the
 * first in byte order, so that the order of the tables never matters.
 */
static int cmp_sym(const void *a, const void *b)
{
	const struct symbol *x = a, *y = b;
	size_t nx, ny;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if ((x->size != 0) != (y->size != 0))
		return x->size ? -1 : 1;
	if ((x->bind == STB_WEAK) != (y->bind == STB_WEAK))
		return x->bind == STB_WEAK ? 1 : -1;
	if ((x->bind == STB_GLOBAL) != (y->bind == STB_GLOBAL))
		return x->bind == STB_GLOBAL ? -1 : 1;
	nx = leading_underscores(x->name.at);
	ny = leading_underscores(y->name.at);
	if (nx != ny)
		return nx < ny ? -1 : 1;
	nx = strlen(x->name.at);
	ny = strlen(y->name.at);
	if (nx != ny)
		return nx > ny ? -1 : 1;
	return strcmp(x->name.at, y->name.at);
}

/* Orders @n symbols at @a by cmp_sym(), with @tmp as large: a merge sort
 * whose comparisons are inlined and mostly decided by the address.  The
 * result is in @a.  Stable: symbols cmp_sym() cannot tell apart keep
 * their tables' order. */
static void merge_sort(struct symbol *a, struct symbol *tmp, size_t n)
{
	struct symbol *from = a, *to = tmp, *t;

	for (size_t w = 1; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n,
			       hi = lo + 2 * w < n ? lo + 2 * w : n,
			       i = lo, j = mid, k = lo;

			while (i < mid && j < hi)
				to[k++] = from[j].addr < from[i].addr ||
					  (from[j].addr == from[i].addr &&
					   cmp_sym(&from[j], &from[i]) < 0) ?
					  from[j++] : from[i++];
			while (i < mid)
				to[k++] = from[i++];
			while (j < hi)
				to[k++] = from[j++];
		}
		t = from;
		from = to;
		to = t;
	}
	if (from != a)
		memcpy(a, from, n * sizeof(*a));
}

/*
 * The same order, faster: a stable radix sort by address, 11 bits a
 * pass and only over the bits some address has (three passes for a
 * library of 100 MB), then each run of aliases (one address) by
 * cmp_sym(), a long run by merge_sort() so that a crafted table of one
 * address stays n log n.  In profiles of a record of clang++ (libLLVM's
 * 45k dynamic symbols), qsort() took 55 of icppd's 1,526 samples, the
 * merge sort alone 31 of 973.
 */
#define RADIX_BITS 11
static void sort_by_address(struct symbol *a, struct symbol *tmp, size_t n)
{
	size_t count[1u << RADIX_BITS];
	const uint64_t mask = (1u << RADIX_BITS) - 1;
	struct symbol *from = a, *to = tmp, *t;
	uint64_t all = 0;

	for (size_t i = 0; i < n; i++)
		all |= a[i].addr;
	for (unsigned shift = 0; shift < 64 && (all >> shift);
	     shift += RADIX_BITS) {
		size_t sum = 0;

		memset(count, 0, sizeof(count));
		for (size_t i = 0; i < n; i++)
			count[(from[i].addr >> shift) & mask]++;
		for (size_t b = 0; b <= mask; b++) {
			size_t c = count[b];

			count[b] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			to[count[(from[i].addr >> shift) & mask]++] = from[i];
		t = from;
		from = to;
		to = t;
	}
	if (from != a)
		memcpy(a, from, n * sizeof(*a));
	for (size_t lo = 0, hi; lo < n; lo = hi) {
		for (hi = lo + 1; hi < n && a[hi].addr == a[lo].addr; hi++)
			;
		if (hi - lo > 8) {
			merge_sort(a + lo, tmp, hi - lo);
			continue;
		}
		for (size_t i = lo + 1; i < hi; i++) {
			struct symbol x = a[i];
			size_t k = i;

			for (; k > lo && cmp_sym(&x, &a[k - 1]) < 0; k--)
				a[k] = a[k - 1];
			a[k] = x;
		}
	}
}

/* Symbol tables this large get a page index (common/pageindex.h). */
#define SYM_INDEX_MIN 4096

/* Sorts, keeps one name per address, and copies the names kept out of
 * libelf's string tables, which are released with the Elf.  The copies
 * are bounded by the tables: distinct names take no more than their
 * tables (twice, for names that share a tail), where 65,000 symbols
 * that all name one 4,095-byte string took 284 MB of a 1.6 MB file. */
static int sort_symbols(struct module *m)
{
	size_t kept = 0, bytes = 0, limit = MODULE_MAX_NAME_BYTES;
	struct symbol *tmp;
	char *p;

	if (m->string_bytes < (limit - NAMES_SLACK) / 2)
		limit = 2 * m->string_bytes + NAMES_SLACK;

	if (!m->nsyms)		/* a stripped static binary: no array */
		return 0;
	tmp = malloc(m->nsyms * sizeof(*tmp));
	if (tmp)
		sort_by_address(m->syms, tmp, m->nsyms);
	else
		qsort(m->syms, m->nsyms, sizeof(*m->syms), cmp_sym);
	free(tmp);
	for (size_t i = 0; i < m->nsyms; i++) {
		size_t len;

		if (kept && m->syms[kept - 1].addr == m->syms[i].addr)
			continue;
		len = strnlen(m->syms[i].name.at, 4096) + 1;
		if (bytes + len > limit)
			break;
		bytes += len;
		m->syms[kept++] = m->syms[i];
	}
	m->nsyms = kept;
	m->names = malloc(bytes ? bytes : 1);
	m->names_bytes = bytes;
	if (!m->names) {
		m->nsyms = 0;
		return -ENOMEM;
	}
	p = m->names;
	for (size_t i = 0; i < kept; i++) {
		size_t len = strnlen(m->syms[i].name.at, 4095);

		memcpy(p, m->syms[i].name.at, len);
		p[len] = '\0';
		m->syms[i].name.off = (uint64_t)(p - m->names);
		p += len + 1;
	}
	if (kept > SYM_INDEX_MIN)	/* none: searched whole */
		page_index__build(&m->sym_pages, m->syms, kept,
				  sizeof(*m->syms), m->syms[kept - 1].addr +
				  m->syms[kept - 1].size);
	return 0;
}

/* Frees the symbols, their names, index and memo. */
static void drop_symbols(struct module *m)
{
	if (m->sym_image.buf) {
		cfi_cache__release(&m->sym_image);
	} else {
		free(m->syms);
		free(m->names);
	}
	page_index__exit(&m->sym_pages);
	free(m->memo);
	m->syms = NULL;
	m->names = NULL;
	m->memo = NULL;
	m->nsyms = m->names_bytes = 0;
}

/*
 * The symbols in a cache file (CACHE_SYMBOLS): what sort_symbols() left,
 * the names as offsets into the names that follow.  Symbol tables of at
 * least SYM_CACHE_MIN symbols are kept; reading the file back is one
 * read and a check of each entry, where reading the tables was a pass
 * over every symbol and string of .symtab and .dynsym, a sort and a copy
 * of each name (libLLVM-14: 33,850 functions, 6 to 9 ms).
 */
#define SYM_CACHE_MIN 2048
#define SYM_IMAGE_MAGIC "icppdsym"
#define SYM_IMAGE_VERSION 1

struct sym_image_header {
	char magic[8];
	uint32_t version, pad;
	uint64_t nsyms, names_bytes, string_bytes, table_bytes;
};

_Static_assert(sizeof(struct symbol) == 32 &&
	       sizeof(struct sym_image_header) % 8 == 0,
	       "a cached symbol is read where it lies");

/* The cache's name for the symbols of the file @f (with @debug, the
 * debug file's identity; NULL: none): both identities whole, after the
 * limits that shaped what was kept. */
static uint64_t symbols_key(const struct cfi_cache *c,
			    const struct cfi_file *f,
			    const struct cfi_file *debug)
{
	uint64_t k[4 + 2 * sizeof(struct cfi_file) / 8] = {
		0x73796d626f6c73,	/* "symbols": no CFI key is this */
		SYM_IMAGE_VERSION, MODULE_MAX_SYMBOLS, MODULE_MAX_NAME_BYTES };

	_Static_assert(sizeof(struct cfi_file) % 8 == 0,
		       "an identity is whole words, no padding");
	memcpy(&k[4], f, sizeof(*f));
	if (debug)
		memcpy(&k[4 + sizeof(*f) / 8], debug, sizeof(*debug));
	return cfi_cache__key(c, k, sizeof(k));
}

/* Writes @m's symbols (sorted, names copied) as the file of @key. */
static void store_symbols(const struct module *m, struct cfi_cache *c,
			  uint64_t key)
{
	struct sym_image_header h = { .version = SYM_IMAGE_VERSION,
		.nsyms = m->nsyms, .names_bytes = m->names_bytes,
		.string_bytes = m->string_bytes,
		.table_bytes = m->table_bytes };
	size_t len = sizeof(h) + m->nsyms * sizeof(*m->syms) + m->names_bytes;
	uint8_t *img;
	struct symbol *e;

	if (m->nsyms < SYM_CACHE_MIN || len > CFI_CACHE_MAX_FILE ||
	    !(img = malloc(len)))
		return;
	memcpy(h.magic, SYM_IMAGE_MAGIC, sizeof(h.magic));
	memcpy(img, &h, sizeof(h));
	e = (void *)(img + sizeof(h));
	memcpy(e, m->syms, m->nsyms * sizeof(*e));	/* each made with pad 0 */
	memcpy(e + m->nsyms, m->names, m->names_bytes);
	cfi_cache__store(c, CACHE_SYMBOLS, key, img, len);
	free(img);
}

/* @m's symbols from the file @t (@m holds it when it is valid): 0, or
 * -EINVAL with @t released.  Everything in it is checked as anything
 * read from a file: the counts against the limits of reading the
 * tables, each name inside the names and ending there, the addresses
 * increasing (the order the searches need).  A mapped file is only
 * read: its entries are the symbols, its names read as used. */
static int symbols_from_image(struct module *m, struct cache_table *t)
{
	uint8_t *img = t->buf;
	size_t len = t->len;
	struct sym_image_header h;
	const struct symbol *e;
	const char *names;

	if (len < sizeof(h))
		goto bad;
	memcpy(&h, img, sizeof(h));
	if (memcmp(h.magic, SYM_IMAGE_MAGIC, sizeof(h.magic)) ||
	    h.version != SYM_IMAGE_VERSION || !h.nsyms ||
	    h.nsyms > MODULE_MAX_SYMBOLS || !h.names_bytes ||
	    h.names_bytes > MODULE_MAX_NAME_BYTES ||
	    h.string_bytes > MODULE_MAX_TABLE_BYTES ||
	    h.table_bytes > MODULE_MAX_TABLE_BYTES ||
	    len != sizeof(h) + h.nsyms * sizeof(*e) + h.names_bytes)
		goto bad;
	e = (void *)(img + sizeof(h));
	names = (const char *)(e + h.nsyms);
	if (names[h.names_bytes - 1])
		goto bad;
	for (size_t i = 0; i < h.nsyms; i++)
		if (e[i].name.off >= h.names_bytes ||
		    (i && e[i].addr <= e[i - 1].addr))
			goto bad;
	m->sym_image = *t;
	m->syms = (struct symbol *)e;
	m->names = (char *)names;
	m->nsyms = h.nsyms;
	m->names_bytes = h.names_bytes;
	m->string_bytes = h.string_bytes;
	m->table_bytes = h.table_bytes;
	if (m->nsyms > SYM_INDEX_MIN)
		page_index__build(&m->sym_pages, m->syms, m->nsyms,
				  sizeof(*m->syms), m->syms[m->nsyms - 1].addr +
				  m->syms[m->nsyms - 1].size);
	return 0;
bad:
	cfi_cache__release(t);
	return -EINVAL;
}

/* @m's symbols from @c's file of @key: 0, or -errno (none there, or not
 * valid: counted, and replaced by the store that follows). */
static int load_symbols(struct module *m, struct cfi_cache *c, uint64_t key)
{
	struct cache_table t;
	int ret = cfi_cache__load(c, CACHE_SYMBOLS, key, &t);

	if (ret)
		return ret;
	ret = symbols_from_image(m, &t);
	cfi_cache__checked(c, CACHE_SYMBOLS, !ret);
	return ret;
}

/* The addresses of go_end_names' functions (an assembly function and
 * its Go-ABI wrapper both), once the symbols are sorted: one pass over
 * them, for a Go module only. */
static void find_go_ends(struct module *m)
{
	for (size_t i = 0; i < m->nsyms; i++) {
		const char *name = m->names + m->syms[i].name.off;
		size_t len;

		if (strncmp(name, "runtime.", 8))
			continue;
		len = strlen(name);
		if (len > 5 && !strcmp(name + len - 5, ".abi0"))
			len -= 5;
		for (size_t j = 0; j < GO_ENDS; j++)
			if (strlen(go_end_names[j]) == len &&
			    !strncmp(name, go_end_names[j], len) &&
			    m->ngo_ends < 2 * GO_ENDS)
				m->go_ends[m->ngo_ends++] = m->syms[i].addr;
	}
}

/* libelf on @fd for @m: mapped where its cache maps files and @st (what
 * fstat() said of @fd; NULL: nothing) allows. */
static Elf *elf_open(const struct module *m, int fd, const struct stat *st);

/* A stripped Debian binary keeps its .symtab in /usr/lib/debug/.build-id
 * when the -dbgsym package is installed: that file, opened, with what
 * fstat() said of it in *@st (its identity names a symbol table cached
 * with it); -1 when there is none. */
static int open_debug_file(const struct module *m, struct stat *st)
{
	char path[128];
	int fd;

	if (strlen(m->build_id) < 4)
		return -1;
	snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug",
		 m->build_id, m->build_id + 2);
	fd = sys__open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW, 0);
	if (fd < 0)
		return -1;
	if (fstat(fd, st) || !S_ISREG(st->st_mode)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The debug file's symbols (@fd and @st from open_debug_file()), added. */
static void add_debug_symbols(struct module *m, int fd, const struct stat *st)
{
	m->debug_elf = elf_open(m, fd, st);
	if (m->debug_elf && elf_kind(m->debug_elf) == ELF_K_ELF)
		add_symbols(m, m->debug_elf, SHT_SYMTAB);
	/* Names are copied once sorted; the rest is never read again. */
	if (m->debug_elf)
		elf_cntl(m->debug_elf, ELF_C_FDDONE);
}

static Elf *elf_begin_checked(int fd, Elf_Cmd cmd)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh0;
	uint64_t shnum, phnum;

	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return NULL;
	shnum = eh.e_shnum;
	phnum = eh.e_phnum;
	/* extended numbering: the counts are in section 0 */
	if (eh.e_shoff && (!shnum || phnum == PN_XNUM)) {
		if (eh.e_shoff > INT64_MAX ||
		    pread(fd, &sh0, sizeof(sh0), (off_t)eh.e_shoff) !=
		    (ssize_t)sizeof(sh0))
			return NULL;
		if (!shnum)
			shnum = sh0.sh_size;
		if (phnum == PN_XNUM)
			phnum = sh0.sh_info;
	}
	if (shnum > MODULE_MAX_SECTIONS || phnum > MODULE_MAX_SECTIONS)
		return NULL;
	elf_version(EV_CURRENT);
	return elf_begin(fd, cmd, NULL);
}

Elf *module__elf_begin(int fd)
{
	return elf_begin_checked(fd, ELF_C_READ);
}

static int is_elf64(Elf *elf)
{
	GElf_Ehdr eh;

	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh))
		return -ENOEXEC;
	if (eh.e_machine != EM_X86_64 || gelf_getclass(elf) != ELFCLASS64)
		return -EPROTO;
	return 0;
}

static void release_cfi(struct module *m)
{
	cfi__close(m->cfi);
	m->cfi = NULL;
	if (m->elf)
		elf_end(m->elf);
	m->elf = NULL;
}

static struct cfi_cache *cfi_cache_of(const struct module *m);

/* The identity of the file fstat() said @st of, by which a cfi_cache
 * names its table; NULL (none) for NULL. */
static const struct cfi_file *file_of(const struct stat *st,
				      struct cfi_file *f)
{
	if (!st)
		return NULL;
	cfi__file_of(st, f);
	return f;
}

/* What fstat() says of @fd, in *@st; NULL when it fails. */
static const struct stat *stat_of(int fd, struct stat *st)
{
	return fstat(fd, st) ? NULL : st;
}

/* @m's symbols: from its cache where the file (and its debug file) are
 * the ones cached, else read from the tables (and cached when there are
 * many).  0 or -ENOMEM. */
static int read_symbols(struct module *m, const struct stat *st)
{
	struct cfi_cache *c = st ? cfi_cache_of(m) : NULL;
	struct cfi_file file, debug;
	struct stat dst;
	int dfd = open_debug_file(m, &dst);
	uint64_t key = 0;
	int ret = 0;

	if (c) {
		key = symbols_key(c, file_of(st, &file), dfd >= 0 ?
				  file_of(&dst, &debug) : NULL);
		if (!load_symbols(m, c, key))
			goto out;
	}
	if (add_symbols(m, m->elf, SHT_SYMTAB) ||
	    add_symbols(m, m->elf, SHT_DYNSYM)) {
		ret = -ENOMEM;
		goto out;
	}
	if (dfd >= 0)
		add_debug_symbols(m, dfd, &dst);
	ret = sort_symbols(m);
	if (!ret && c)
		store_symbols(m, c, key);
out:
	if (dfd >= 0)
		close(dfd);
	return ret;
}

/* Reads what a module is (m->elf, read from the file fstat() said @st
 * of; NULL: from memory); the CFI too with @cfi, else at first use. */
static int analyse(struct module *m, const struct stat *st, bool cfi)
{
	struct cfi_file file;
	int ret = is_elf64(m->elf);

	if (ret)
		return ret;
	read_segments(m);
	read_build_id(m);
	m->go = is_go(m->elf);
	ret = read_symbols(m, st);
	if (ret)
		return ret;
	if (m->go)
		find_go_ends(m);
	if (m->debug_elf) {	/* its names are copied: not needed */
		elf_end(m->debug_elf);
		m->debug_elf = NULL;
	}
	if (cfi) {
		m->cfi = cfi__open(m->elf, cfi_cache_of(m),
				   file_of(st, &file));
	} else {
		release_cfi(m);
		m->cfi_released = true;
	}
	return 0;
}

/* Reads what analysis needs from @fd, then lets it go (see above). */
static int analyse_fd(struct module *m, int fd, bool cfi)
{
	struct stat buf;
	const struct stat *st = stat_of(fd, &buf);

	m->elf = elf_open(m, fd, st);
	m->error = analyse(m, st, cfi);
	if (m->elf)
		elf_cntl(m->elf, ELF_C_FDDONE);
	close(fd);
	return m->error;
}

static struct module *module_alloc(const char *path)
{
	struct module *m = calloc(1, sizeof(*m));
	const char *slash;

	if (!m)
		return NULL;
	m->path = strdup(path);
	if (!m->path) {
		free(m);
		return NULL;
	}
	slash = strrchr(m->path, '/');
	m->name = slash ? slash + 1 : m->path;
	return m;
}

/* A file the user named: a regular file, opened without blocking (a
 * FIFO would block open() forever). */
static int open_regular(const char *path)
{
	struct stat st;
	int fd = sys__open(path, O_RDONLY | O_NONBLOCK, 0);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

int module__file_build_id(const char *path, char *out, size_t len,
			  struct module_span *span)
{
	struct module probe = { .path = (char *)path };
	int fd = module__open_recorded_fd(path, NULL), ret;

	if (fd < 0)
		return fd;
	elf_version(EV_CURRENT);
	probe.elf = module__elf_begin(fd);
	ret = is_elf64(probe.elf);
	if (!ret) {
		read_build_id(&probe);
		snprintf(out, len, "%s", probe.build_id);
		if (span) {
			read_segments(&probe);
			span->found = !module__code_span(&probe, &span->start,
							 &span->limit,
							 &span->offset);
			free(probe.segs);
		}
	}
	if (probe.elf)
		elf_end(probe.elf);
	close(fd);
	return ret;
}

struct module *module__open(const char *path)
{
	struct module *m = module_alloc(path);
	int fd;

	if (!m)
		return NULL;
	elf_version(EV_CURRENT);
	fd = open_regular(path);
	if (fd < 0)
		m->error = fd;
	else
		analyse_fd(m, fd, true);
	return m;
}

struct module *module__open_memory(const char *name, const void *img,
				   size_t size)
{
	struct module *m = module_alloc(name);

	if (!m)
		return NULL;
	elf_version(EV_CURRENT);
	m->image = malloc(size ? size : 1);
	if (!m->image) {
		module__delete(m);
		return NULL;
	}
	memcpy(m->image, img, size);
	m->elf = elf_memory(m->image, size);
	m->error = analyse(m, NULL, true);
	return m;
}

/* The vDSO's size is not in the auxv; /proc/self/maps has its bounds. */
struct module *module__open_vdso(void)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	unsigned long lo, hi;
	char line[256];
	FILE *f;
	struct module *m = NULL;

	f = sys__fopen("/proc/self/maps");
	if (!base || !f)
		goto out;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "[vdso]") ||
		    sscanf(line, "%lx-%lx", &lo, &hi) != 2 || lo != base)
			continue;
		m = module__open_memory("[vdso]", (const void *)lo, hi - lo);
		break;
	}
out:
	if (f)
		fclose(f);
	if (!m && (m = module_alloc("[vdso]")))
		m->error = -ENOENT;
	return m;
}


void module__delete(struct module *m)
{
	if (!m)
		return;
	release_cfi(m);
	if (m->debug_elf)
		elf_end(m->debug_elf);
	free(m->image);
	free(m->segs);
	drop_symbols(m);
	free(m->path);
	free(m);
}

const char *module__path(const struct module *m) { return m->path; }
const char *module__name(const struct module *m) { return m->name; }

void module__func_label(const struct module *m, uint64_t addr,
			const char *sym, char *buf, size_t len)
{
	if (sym)
		snprintf(buf, len, "%s", sym);
	else
		snprintf(buf, len, "%s+0x%llx", m->name,
			 (unsigned long long)addr);
}
const char *module__build_id(const struct module *m) { return m->build_id; }
int module__error(const struct module *m) { return m->error; }
size_t module__nr_symbols(const struct module *m) { return m->nsyms; }
/* The CFI, rebuilt when the cache released it (see the head). */
static struct cfi *cfi_of(struct module *m);

bool module__is_go(const struct module *m) { return m->go; }

bool module__ends_walk(const struct module *m, uint64_t func)
{
	for (size_t i = 0; i < m->ngo_ends; i++)
		if (m->go_ends[i] == func)
			return true;
	return false;
}

bool module__has_cfi(const struct module *m)
{
	return cfi_of((struct module *)m) != NULL;
}

int module__vaddr(const struct module *m, uint64_t file_off, uint64_t *vaddr)
{
	for (size_t i = 0; i < m->nsegs; i++) {
		const struct segment *s = &m->segs[i];

		if (file_off >= s->offset && file_off - s->offset < s->filesz) {
			*vaddr = file_off - s->offset + s->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

int module__code_span(const struct module *m, uint64_t *start,
		      uint64_t *limit, uint64_t *offset)
{
	bool found = false;

	for (size_t i = 0; i < m->nsegs; i++) {
		const struct segment *s = &m->segs[i];

		if (!s->exec || s->vaddr + s->memsz < s->vaddr)
			continue;
		if (!found || s->vaddr < *start) {
			*start = s->vaddr;
			*offset = s->offset;
		}
		if (!found || s->vaddr + s->memsz > *limit)
			*limit = s->vaddr + s->memsz;
		found = true;
	}
	return found ? 0 : -ENOENT;
}

static int search_function(const struct module *m, uint64_t vaddr,
			   struct module_func *out)
{
	size_t lo, hi;
	uint64_t flo, fhi;
	/* Logically const: rebuilding released CFI changes no answer. */
	bool have_fde = !cfi__fde_range(cfi_of((struct module *)m), vaddr,
					&flo, &fhi);

	page_index__range(&m->sym_pages, m->nsyms, vaddr, &lo, &hi);
	/* the first symbol above vaddr */
	lo = LOWER_BOUND(lo, hi, i, m->syms[i].addr <= vaddr);
	if (lo) {
		const struct symbol *s = &m->syms[lo - 1];

		/* A sized symbol covers its range; an unsized one (hand-
		 * written assembly) only when its FDE starts at it. */
		if ((s->size && vaddr - s->addr < s->size) ||
		    (!s->size && have_fde && flo == s->addr)) {
			out->start = s->addr;
			out->name = m->names + s->name.off;
			return 0;
		}
	}
	if (have_fde) {
		out->start = flo;
		out->name = NULL;
		return 0;
	}
	return -ENOENT;
}

int module__function(const struct module *m, uint64_t vaddr,
		     struct module_func *out)
{
	/* Logically const, as the CFI's memo: the slots change no answer. */
	struct module *w = (struct module *)m;
	struct func_memo *slot;
	int ret;

	if (!w->memo && m->nsyms > SYM_INDEX_MIN)
		w->memo = calloc((size_t)1 << FUNC_MEMO_BITS, sizeof(*w->memo));
	if (!w->memo)
		return search_function(m, vaddr, out);
	slot = &w->memo[(vaddr * 0x9e3779b97f4a7c15ULL) >>
			(64 - FUNC_MEMO_BITS)];
	if (slot->vaddr1 == vaddr + 1) {
		out->start = slot->start;
		out->name = slot->name;
		return 0;
	}
	ret = search_function(m, vaddr, out);
	if (!ret)
		*slot = (struct func_memo){ vaddr + 1, out->start, out->name };
	return ret;
}

int module__cfa(struct module *m, uint64_t vaddr, const struct cfi_regs *regs,
		uint64_t *cfa)
{
	struct cfi *cfi = cfi_of(m);

	if (!cfi)
		return -ENOENT;
	return cfi__cfa(cfi, vaddr, regs, cfa);
}

int module__step(struct module *m, uint64_t vaddr, struct cfi_regs *regs,
		 const struct cfi_mem *mem, struct cfi_step *out)
{
	struct cfi *cfi = cfi_of(m);

	if (!cfi)
		return -ENOENT;
	return cfi__step(cfi, vaddr, regs, mem, out);
}

/* ---- opening a mapping's file as the kernel mapped it ---------------- */

/* The file behind @fd is the mapping's: a regular file with its inode
 * (and device, when @want_dev: a path we resolved ourselves, unlike a
 * map_files link, which the kernel resolves to the mapped file; btrfs
 * and overlayfs report another st_dev there than in the MMAP2 record). */
static int same_file(int fd, const struct module_origin *o, bool want_dev)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_ino != o->ino ||
	    (want_dev && st.st_dev != o->dev))
		return -ESTALE;
	return 0;
}

/* @pfd is an O_PATH descriptor: checked, then reopened for reading
 * through /proc/self/fd, so that nothing but the checked regular file is
 * ever opened (opening a FIFO blocks; opening a device can act). */
static int reopen_checked(int pfd, const struct module_origin *o,
			  bool want_dev)
{
	char self[64];
	int fd = -1, ret = same_file(pfd, o, want_dev);

	if (!ret) {
		snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
		fd = sys__open(self, O_RDONLY | O_NONBLOCK, 0);
		ret = fd < 0 ? -errno : same_file(fd, o, want_dev);
	}
	close(pfd);
	if (ret && fd >= 0)
		close(fd);
	return ret ? ret : fd;
}

/* @path under @dirfd with no symlink anywhere in it: the kernel's
 * mapping paths have none, so one is a swap.  RESOLVE_IN_ROOT when
 * @dirfd is a process's root. */
static int open_path(int dirfd, const char *path, bool in_root)
{
	struct open_how how = { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
			   (in_root ? RESOLVE_IN_ROOT : 0) };
	long fd = icppd_sys.openat2(dirfd, path, &how, sizeof(how));

	if (fd < 0 && errno == ENOSYS)	/* before Linux 5.6 */
		fd = icppd_sys.openat(dirfd, in_root ? path + 1 : path,
				      O_PATH | O_NOFOLLOW, 0);
	return fd < 0 ? (errno == ELOOP ? -ESTALE : -errno) : (int)fd;
}

/*
 * In order: /proc/PID/map_files/START-END (the mapped file itself; root
 * only), the path inside /proc/PID/root (the process's mount namespace
 * and chroot), and the path as this process sees it, only when the
 * process is gone.  Each is checked against the mapping's inode.
 */
static int open_mapped(const char *path, const struct module_origin *o)
{
	char p[96];
	int pfd, root;

	if (o->pid > 0 && o->end > o->start) {
		snprintf(p, sizeof(p), "/proc/%d/map_files/%llx-%llx", o->pid,
			 (unsigned long long)o->start,
			 (unsigned long long)o->end);
		pfd = sys__open(p, O_PATH, 0);
		if (pfd >= 0)
			return reopen_checked(pfd, o, false);
	}
	if (o->pid > 0) {
		snprintf(p, sizeof(p), "/proc/%d/root", o->pid);
		root = sys__open(p, O_PATH | O_DIRECTORY, 0);
		if (root >= 0) {
			pfd = open_path(root, path, true);
			close(root);
			return pfd < 0 ? pfd : reopen_checked(pfd, o, true);
		}
	}
	pfd = open_path(AT_FDCWD, path, false);
	return pfd < 0 ? pfd : reopen_checked(pfd, o, true);
}

/*
 * A file a database recorded (a path the kernel reported as mapped), as
 * report and the exporter reopen it, often as root: with no symlink
 * anywhere in the path (the kernel's paths have none, so one is a
 * swap, to a root-only file say), a regular file, never blocking; and
 * with @build_id (not empty) the build-id recorded, or -ESTALE.
 */
int module__open_recorded_fd(const char *path, const char *build_id)
{
	struct module probe = { .path = (char *)path };
	char self[64];
	struct stat st;
	int pfd = open_path(AT_FDCWD, path, false), fd, ret = 0;

	if (pfd < 0)
		return pfd;
	/* not even opened unless a regular file: opening a device has
	 * effects of its own */
	if (fstat(pfd, &st) || !S_ISREG(st.st_mode)) {
		close(pfd);
		return -EINVAL;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = sys__open(self, O_RDONLY | O_NONBLOCK, 0);
	close(pfd);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		ret = -EINVAL;
	if (!ret && build_id && build_id[0]) {
		elf_version(EV_CURRENT);
		probe.elf = module__elf_begin(fd);
		ret = is_elf64(probe.elf);
		if (!ret) {
			read_build_id(&probe);
			if (strcmp(probe.build_id, build_id))
				ret = -ESTALE;
		}
		if (probe.elf)
			elf_end(probe.elf);
	}
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

struct module *module__open_recorded(const char *path, const char *build_id)
{
	struct module *m = module_alloc(path);
	int fd;

	if (!m)
		return NULL;
	fd = module__open_recorded_fd(path, build_id);
	if (fd < 0)
		m->error = fd;
	else
		analyse_fd(m, fd, true);
	return m;
}

/* A code section's bytes in the file, clipped to the executable
 * segment that loads them. */
struct code_range {
	uint64_t off, end, addr;
};

static int by_offset(const void *a, const void *b)
{
	const struct code_range *x = a, *y = b;

	return (x->off > y->off) - (x->off < y->off);
}

/*
 * The file bytes @elf's executable segments load, as disjoint ranges
 * sorted by offset in *@out (the caller frees it), so that each code
 * section finds its segment by binary search: a crafted file may have
 * as many segments as sections.  How many, or -ENOMEM.
 */
static long exec_ranges(Elf *elf, struct code_range **out)
{
	struct code_range *v = NULL;
	size_t n = 0, cap = 0, nph = 0, u = 0;

	*out = NULL;
	if (elf_getphdrnum(elf, &nph))
		return 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X) || !ph.p_filesz ||
		    ph.p_offset + ph.p_filesz < ph.p_offset)
			continue;
		if (grow(&v, &cap, n + 1, sizeof(*v), 8)) {
			free(v);
			return -ENOMEM;
		}
		v[n++] = (struct code_range){ ph.p_offset,
					      ph.p_offset + ph.p_filesz, 0 };
	}
	if (n)
		qsort(v, n, sizeof(*v), by_offset);
	for (size_t i = 0; i < n; i++)	/* merged where they overlap */
		if (u && v[i].off <= v[u - 1].end)
			v[u - 1].end = v[i].end > v[u - 1].end ? v[i].end :
				       v[u - 1].end;
		else
			v[u++] = v[i];
	*out = v;
	return (long)u;
}

/* The end of the range of @segs (@n, from exec_ranges()) that holds
 * file offset @off; 0: none does. */
static uint64_t exec_segment_end(const struct code_range *segs, size_t n,
				 uint64_t off)
{
	/* the first range starting above @off */
	size_t lo = LOWER_BOUND((size_t)0, n, i, segs[i].off <= off);

	return lo && off < segs[lo - 1].end ? segs[lo - 1].end : 0;
}

/*
 * Each code section's bytes, once: only what an executable segment
 * loads (a section the program never maps is no code of it), and a
 * byte that overlapping sections share only the first time.  A crafted
 * file of 32 code sections over one 32 MiB hole was decoded 32 times
 * over, a gigabyte of copies; now at most its segments' bytes are read.
 */
static int each_code_section(Elf *elf, module_code_fn fn, void *arg)
{
	struct code_range *v = NULL, *segs;
	size_t n = 0, cap = 0;
	long nsegs = exec_ranges(elf, &segs);
	Elf_Scn *scn = NULL;
	uint64_t done = 0;
	int ret = 0;

	if (nsegs < 0)
		return (int)nsegs;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		uint64_t end;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || !sh.sh_size ||
		    !(end = exec_segment_end(segs, (size_t)nsegs,
					     sh.sh_offset)))
			continue;
		if (sh.sh_size < end - sh.sh_offset)
			end = sh.sh_offset + sh.sh_size;
		if (grow(&v, &cap, n + 1, sizeof(*v), 16)) {
			free(v);
			free(segs);
			return -ENOMEM;
		}
		v[n++] = (struct code_range){ sh.sh_offset, end, sh.sh_addr };
	}
	free(segs);
	if (n)
		qsort(v, n, sizeof(*v), by_offset);
	for (size_t i = 0; i < n && !ret; i++) {
		uint64_t from = v[i].off > done ? v[i].off : done;
		Elf_Data *d;

		if (from >= v[i].end)
			continue;
		done = v[i].end;
		/* libelf checks the range lies within the file */
		d = elf_getdata_rawchunk(elf, (int64_t)from, v[i].end - from,
					 ELF_T_BYTE);
		if (d && d->d_buf && d->d_size == v[i].end - from)
			ret = fn(arg, v[i].addr + (from - v[i].off),
				 d->d_buf, d->d_size);
	}
	free(v);
	return ret;
}

/* Each dynamic symbol of @elf's table @dynsym that names a function it
 * defines (not an IFUNC: its value is the resolver, not the code that
 * runs), then each relocation of a GOT slot to a named symbol. */
static int each_dynamic(Elf *elf, module_dynamic_fn fn, void *arg)
{
	Elf_Scn *scn = NULL;
	int ret = 0;

	while (!ret && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh, link;
		Elf_Scn *ls;
		Elf_Data *d, *syms;
		size_t count;

		if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize ||
		    (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_RELA))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			continue;
		/* as in add_symbols: what the data holds, whatever the
		 * header claims */
		count = d->d_size / (sh.sh_type == SHT_RELA ?
				     sizeof(Elf64_Rela) : sizeof(Elf64_Sym));
		if (sh.sh_size / sh.sh_entsize < count)
			count = sh.sh_size / sh.sh_entsize;
		if (sh.sh_type == SHT_DYNSYM) {
			for (size_t i = 0; i < count && !ret; i++) {
				GElf_Sym s;
				const char *name;

				if (!gelf_getsym(d, (int)i, &s))
					break;
				if (GELF_ST_TYPE(s.st_info) != STT_FUNC ||
				    s.st_shndx == SHN_UNDEF || !s.st_value)
					continue;
				name = elf_strptr(elf, sh.sh_link, s.st_name);
				if (name && *name)
					ret = fn(arg, MODULE_EXPORT, s.st_value,
						 name);
			}
			continue;
		}
		/* a RELA section's symbols: the table its sh_link names */
		ls = elf_getscn(elf, sh.sh_link);
		if (!ls || !gelf_getshdr(ls, &link) ||
		    link.sh_type != SHT_DYNSYM ||
		    !(syms = elf_getdata(ls, NULL)))
			continue;
		for (size_t i = 0; i < count && !ret; i++) {
			GElf_Rela r;
			GElf_Sym s;
			const char *name;
			uint64_t type;

			if (!gelf_getrela(d, (int)i, &r))
				break;
			type = GELF_R_TYPE(r.r_info);
			if ((type != R_X86_64_JUMP_SLOT &&
			     type != R_X86_64_GLOB_DAT) ||
			    !GELF_R_SYM(r.r_info) ||
			    !gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &s))
				continue;
			name = elf_strptr(elf, link.sh_link, s.st_name);
			if (name && *name)
				ret = fn(arg, MODULE_IMPORT, r.r_offset, name);
		}
	}
	return ret;
}

/* Opens the module's file again (build-id checked), for @code or
 * @dynamic (one of them). */
static int reread(struct module *m, module_code_fn code,
		  module_dynamic_fn dynamic, void *arg)
{
	struct module again = { .path = m->path };
	Elf *elf = m->elf;
	int fd = -1, ret = 0;

	if (m->error)
		return m->error;
	if (!m->image) {	/* in memory: every section is there */
		fd = m->cache ? open_mapped(m->path, &m->origin) :
				open_regular(m->path);
		if (fd < 0)
			return fd;
		elf = again.elf = module__elf_begin(fd);
		ret = is_elf64(elf);
		if (!ret) {
			read_build_id(&again);
			if (strcmp(again.build_id, m->build_id))
				ret = -ESTALE;
		}
	}
	if (!ret)
		ret = code ? each_code_section(elf, code, arg) :
			     each_dynamic(elf, dynamic, arg);
	if (again.elf)
		elf_end(again.elf);
	if (fd >= 0)
		close(fd);
	return ret;
}

int module__code(struct module *m, module_code_fn fn, void *arg)
{
	return reread(m, fn, NULL, arg);
}

int module__dynamic(struct module *m, module_dynamic_fn fn, void *arg)
{
	return reread(m, NULL, fn, arg);
}

/* ---- the cache ------------------------------------------------------ */

void module__hold(struct module *m)
{
	if (m)
		m->refs++;
}

void module__release(struct module *m)
{
	if (m && m->refs)
		m->refs--;
}

/* A module's symbols, their names and their index. */
static size_t symbol_bytes(const struct module *m)
{
	return m->names_bytes + m->nsyms * sizeof(*m->syms) +
	       page_index__bytes(&m->sym_pages) +
	       (m->nsyms > SYM_INDEX_MIN ?
		sizeof(struct func_memo) << FUNC_MEMO_BITS : 0);
}

/* What a module holds in memory: symbols, names, segments, and the
 * CFI while it is built. */
static size_t module_bytes(const struct module *m)
{
	return sizeof(*m) + strlen(m->path) + 1 + symbol_bytes(m) +
	       m->nsegs * sizeof(*m->segs) +
	       (m->cfi ? MODULE_ELF_BYTES + cfi__bytes(m->cfi) : 0);
}

struct module_cache {
	struct module **mods;
	size_t n, cap;
	uint64_t clock;		/* counts lookups, for LRU */
	size_t max_bytes;	/* of CFI kept built */
	size_t max_symbol_bytes;	/* of the modules held */
	uint64_t symbols_dropped;	/* modules over it */
	size_t max_modules;	/* MODULE_CACHE_MAX */
	struct module *over;	/* the one past it; not in mods */
	uint64_t refused;	/* files given it */
	struct owner {		/* modules opened per user (module.h) */
		uint32_t uid;
		uint32_t n;
	} *owners;
	size_t nowners, owners_cap;
	struct hindex index;	/* mods by path: a mapping's lookup is one
				 * probe, not a scan of 16,384 modules */
	struct cfi_cache *cfi_cache;	/* borrowed; NULL: none */
	bool map_files;		/* module_cache__set_map_files() */
	uint64_t files_mapped;	/* opened so */
};

static struct cfi_cache *cfi_cache_of(const struct module *m)
{
	return m->cache ? m->cache->cfi_cache : NULL;
}

void module_cache__set_cfi_cache(struct module_cache *c, struct cfi_cache *cc)
{
	c->cfi_cache = cc;
}

void module_cache__set_map_files(struct module_cache *c, bool map)
{
	c->map_files = map;
}

static Elf *elf_open(const struct module *m, int fd, const struct stat *st)
{
	Elf *elf;

	if (!st || !m->cache || !m->cache->map_files || !sys__may_map(fd, st))
		return module__elf_begin(fd);
	elf = elf_begin_checked(fd, ELF_C_READ_MMAP);
	if (elf)
		m->cache->files_mapped++;
	return elf;
}

uint64_t module_cache__files_mapped(const struct module_cache *c)
{
	return c->files_mapped;
}

struct module_cache *module_cache__new(void)
{
	struct module_cache *c = calloc(1, sizeof(struct module_cache));

	if (c) {
		c->max_bytes = MODULE_CACHE_BYTES;
		c->max_symbol_bytes = MODULE_CACHE_SYMBOL_BYTES;
		c->max_modules = MODULE_CACHE_MAX;
	}
	return c;
}

void module_cache__set_budget(struct module_cache *c, size_t max_bytes)
{
	c->max_bytes = max_bytes;
}

void module_cache__set_symbol_budget(struct module_cache *c, size_t bytes)
{
	c->max_symbol_bytes = bytes;
}

size_t module_cache__bytes(const struct module_cache *c, size_t *built)
{
	size_t bytes = 0, n = 0;

	for (size_t i = 0; i < c->n; i++)
		if (c->mods[i]->cfi) {
			bytes += MODULE_ELF_BYTES + cfi__bytes(c->mods[i]->cfi);
			n++;
		}
	if (built)
		*built = n;
	return bytes;
}

/* Releases least recently used CFI (never @keep's) until the cache is
 * within its budget.  Runs when a module is opened or rebuilt, not per
 * sample; names and symbols stay while the module does. */
static void fit_budget(struct module_cache *c, const struct module *keep)
{
	size_t bytes = module_cache__bytes(c, NULL);

	while (bytes > c->max_bytes) {
		struct module *lru = NULL;

		for (size_t i = 0; i < c->n; i++) {
			struct module *m = c->mods[i];

			if (m->cfi && m != keep && !m->image &&
			    (!lru || m->last_use < lru->last_use))
				lru = m;
		}
		if (!lru)
			return;
		bytes -= MODULE_ELF_BYTES + cfi__bytes(lru->cfi);
		release_cfi(lru);
		lru->cfi_released = true;
	}
}

static struct cfi *cfi_of(struct module *m)
{
	struct cfi_file file;
	const struct stat *st;
	struct stat buf;
	int fd;

	if (m->cache)
		m->last_use = ++m->cache->clock;
	if (!m->cfi_released)
		return m->cfi;
	m->cfi_released = false;
	fd = open_mapped(m->path, &m->origin);
	if (fd < 0) {		/* gone or replaced since: say so */
		m->error = fd;
		return NULL;
	}
	st = stat_of(fd, &buf);
	m->elf = elf_open(m, fd, st);
	if (!is_elf64(m->elf))
		m->cfi = cfi__open(m->elf, cfi_cache_of(m),
				   file_of(st, &file));
	if (m->elf)
		elf_cntl(m->elf, ELF_C_FDDONE);
	close(fd);
	fit_budget(m->cache, m);
	return m->cfi;
}

void module_cache__delete(struct module_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		module__delete(c->mods[i]);
	module__delete(c->over);
	free(c->mods);
	free(c->owners);
	hindex__exit(&c->index);
	free(c);
}

/*
 * One budget for the symbols of every module held: those of modules
 * still mapped cannot be evicted, so files crafted to the per-module
 * bounds, mapped by anyone, would add up without one (idle ones count
 * in the cache's byte budget, module_cache__evict()).  A module that
 * does not fit keeps no symbols: its functions are named by their
 * FDEs, as a stripped binary's are.
 */
static void fit_symbols(struct module_cache *c, struct module *m)
{
	size_t bytes = 0;

	for (size_t i = 0; i < c->n; i++)
		if (c->mods[i]->refs)
			bytes += symbol_bytes(c->mods[i]);
	if (bytes + symbol_bytes(m) <= c->max_symbol_bytes)
		return;
	drop_symbols(m);
	c->symbols_dropped++;
}

/* The count of modules user @uid opened, made at its first ask (NULL
 * when memory is short).  Users are few: a scan. */
static struct owner *owner_of(struct module_cache *c, uint32_t uid)
{
	for (size_t i = 0; i < c->nowners; i++)
		if (c->owners[i].uid == uid)
			return &c->owners[i];
	if (grow(&c->owners, &c->owners_cap, c->nowners + 1,
		 sizeof(*c->owners), 8))
		return NULL;
	c->owners[c->nowners] = (struct owner){ uid, 0 };
	return &c->owners[c->nowners++];
}

/* Whether a new module mapped as @o is past the bounds (module.h). */
static bool refuse(struct module_cache *c, const struct module_origin *o)
{
	const struct owner *w;

	if (c->n >= c->max_modules + (o->exe ? c->max_modules / 4 : 0))
		return true;
	if (!o->uid)
		return false;
	w = owner_of(c, o->uid);
	return !w || w->n >= c->max_modules / 4;
}

/* Module @m leaves the cache: its user's count down. */
static void uncharge(struct module_cache *c, const struct module *m)
{
	struct owner *w = m->origin.uid ? owner_of(c, m->origin.uid) : NULL;

	if (w && w->n)
		w->n--;
}

/* Adds mods[c->n] (grown by the caller) to the cache and its index. */
static int cache_add(struct module_cache *c, struct module *m)
{
	if (hindex__insert(&c->index, hindex__string(m->path),
			   (uint32_t)c->n))
		return -ENOMEM;
	c->mods[c->n++] = m;
	return 0;
}

/* Called per mapping event, not per sample: one probe of the index by
 * path, the file told by its device and inode. */
struct module *module_cache__get(struct module_cache *c, const char *path,
				 const struct module_origin *o)
{
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint64_t h = hindex__string(path);
	struct module *m;
	bool vdso = !strcmp(path, "[vdso]");
	uint32_t i;
	int fd;

	while ((i = hindex__next(&c->index, &p, h)) != HINDEX_NONE) {
		m = c->mods[i];
		if (!strcmp(m->path, path) && (vdso ||
		    (m->origin.dev == o->dev && m->origin.ino == o->ino))) {
			/* Reopen through a live process next time. */
			m->origin.pid = o->pid;
			m->origin.start = o->start;
			m->origin.end = o->end;
			m->refs++;
			return m;
		}
	}
	if (refuse(c, o)) {		/* module.h says why */
		if (!c->over && (c->over = module_alloc("[too many modules]")))
			c->over->error = -EMFILE;
		if (c->over) {
			c->over->refs++;
			c->refused++;
		}
		return c->over;
	}
	if (grow(&c->mods, &c->cap, c->n + 1, sizeof(*c->mods), 16))
		return NULL;
	if (vdso) {
		m = module__open_vdso();
	} else if ((m = module_alloc(path))) {
		elf_version(EV_CURRENT);
		m->cache = c;	/* read as the cache reads files */
		/* CFI at first use: a process maps tens of libraries
		 * whose code is never sampled, and libdwarf's FDE list is
		 * the dearest part of a module to build */
		fd = open_mapped(path, o);
		if (fd < 0)
			m->error = fd;
		else
			analyse_fd(m, fd, false);
	}
	if (!m)
		return NULL;
	m->origin = *o;
	m->cache = c;
	m->last_use = ++c->clock;
	m->refs = 1;
	fit_symbols(c, m);
	if (cache_add(c, m)) {
		module__delete(m);
		return NULL;
	}
	if (o->uid)
		owner_of(c, o->uid)->n++;	/* made by refuse() */
	fit_budget(c, m);
	return m;
}

static size_t all_bytes(const struct module_cache *c)
{
	size_t bytes = 0;

	for (size_t i = 0; i < c->n; i++)
		bytes += module_bytes(c->mods[i]);
	return bytes;
}

/* The symbols of perf-map text @buf (NUL-terminated, changed in place:
 * names end at their newline) into @m: copied, so @buf may go. */
static int parse_perfmap(struct module *m, char *buf)
{
	size_t cap = 0;

	m->string_bytes = strlen(buf);

	for (char *line = buf, *next; *line; line = next) {
		char *end, *name;
		uint64_t start, size;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		if ((size_t)(next - line) > PERFMAP_MAX_LINE)
			continue;
		start = strtoull(line, &end, 16);
		if (end == line || *end != ' ')
			continue;
		size = strtoull(name = end + 1, &end, 16);
		if (end == name || *end != ' ' || !end[1] || !size ||
		    start + size < start || m->nsyms == MODULE_MAX_SYMBOLS)
			continue;
		if (grow(&m->syms, &cap, m->nsyms + 1, sizeof(*m->syms), 256))
			return -ENOMEM;
		m->syms[m->nsyms++] = (struct symbol){ start, size,
			{ .at = end + 1 }, STB_GLOBAL, { 0 } };
	}
	return sort_symbols(m);
}

/* The text of perf map @fd (@size bytes, checked), NUL-terminated;
 * NULL when it cannot be read. */
static char *read_all(int fd, size_t size)
{
	char *buf = malloc(size + 1);
	size_t got = 0;

	while (buf && got < size) {
		ssize_t n = read(fd, buf + got, size - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (buf)
		buf[got] = '\0';
	return buf;
}

/*
 * /tmp/perf-PID.map as process @pid sees it: through /proc/PID/root, as
 * perf reads it, so that a process in a container or with a private
 * /tmp (the daemon's own unit has PrivateTmp=yes) is found, with no
 * symlink anywhere (RESOLVE_IN_ROOT: an absolute link inside that root
 * would otherwise resolve against ours).  This process's /tmp only when
 * the process's root cannot be opened (it is gone).
 */
static int perfmap_fd(int pid)
{
	char root_path[48], rel[48], self[48];
	int root, pfd, fd;

	snprintf(root_path, sizeof(root_path), "/proc/%d/root", pid);
	snprintf(rel, sizeof(rel), "/tmp/perf-%d.map", pid);
	root = sys__open(root_path, O_PATH | O_DIRECTORY, 0);
	if (root < 0)
		return sys__open(rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
				 O_CLOEXEC, 0);
	pfd = open_path(root, rel, true);
	close(root);
	if (pfd < 0)
		return -1;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = sys__open(self, O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0);
	close(pfd);
	return fd;
}

int module_cache__perfmap_open(struct module_cache *c, int pid, uint32_t uid,
			       const struct module *prev,
			       struct perfmap_file *f)
{
	struct stat st;
	uint64_t mtime;

	f->fd = perfmap_fd(pid);
	if (f->fd < 0)
		return -ENOENT;
	mtime = fstat(f->fd, &st) ? 0 :
		(uint64_t)st.st_mtim.tv_sec * 1000000000u +
		(uint64_t)st.st_mtim.tv_nsec;
	/* what identifies this version of the file: its size and mtime
	 * where a mapping has its range */
	f->size = (size_t)st.st_size;
	f->origin = (struct module_origin){ pid, (uint64_t)st.st_size, mtime,
		(uint64_t)st.st_dev, (uint64_t)st.st_ino };
	if (!mtime || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
	    st.st_uid != uid || (uint64_t)st.st_size > PERFMAP_MAX_BYTES ||
	    /* many processes' maps together stay in the cache's budget */
	    all_bytes(c) + 2 * (size_t)st.st_size > c->max_bytes ||
	    (prev && prev->origin.dev == f->origin.dev &&
	     prev->origin.ino == f->origin.ino &&
	     prev->origin.start == f->origin.start &&
	     prev->origin.end == f->origin.end)) {
		close(f->fd);
		f->fd = -1;
		return -ENOENT;
	}
	return 0;
}

struct module *perfmap__read(struct perfmap_file *f)
{
	char path[64], *buf = read_all(f->fd, f->size);
	struct module *m;

	close(f->fd);
	f->fd = -1;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", f->origin.pid);
	m = buf ? module_alloc(path) : NULL;
	if (!m || parse_perfmap(m, buf)) {
		if (m)
			module__delete(m);
		free(buf);
		return NULL;
	}
	free(buf);
	m->origin = f->origin;
	return m;
}

struct module *module_cache__adopt(struct module_cache *c, struct module *m)
{
	if (c->n >= c->max_modules) {		/* as module_cache__get() */
		c->refused++;
		module__delete(m);
		return NULL;
	}
	if (grow(&c->mods, &c->cap, c->n + 1, sizeof(*c->mods), 16)) {
		module__delete(m);
		return NULL;
	}
	m->cache = c;
	m->last_use = ++c->clock;
	m->refs = 1;
	if (cache_add(c, m)) {
		module__delete(m);
		return NULL;
	}
	return m;
}

struct module *module_cache__perfmap(struct module_cache *c, int pid,
				     uint32_t uid, const struct module *prev)
{
	struct perfmap_file f;
	struct module *m;

	if (module_cache__perfmap_open(c, pid, uid, prev, &f) ||
	    !(m = perfmap__read(&f)))
		return NULL;
	return module_cache__adopt(c, m);
}

/* The modules nobody holds, and the bytes of all: whether eviction
 * would free some. */
static bool over(const struct module_cache *c, size_t *idle, size_t *bytes)
{
	*idle = *bytes = 0;
	for (size_t i = 0; i < c->n; i++) {
		*idle += !c->mods[i]->refs;
		*bytes += module_bytes(c->mods[i]);
	}
	return *idle && (*idle > MODULE_CACHE_IDLE || *bytes > c->max_bytes);
}

bool module_cache__over(const struct module_cache *c)
{
	size_t idle, bytes;

	return over(c, &idle, &bytes);
}

static int cmp_last_use(const void *a, const void *b)
{
	const struct module *x = *(struct module *const *)a;
	const struct module *y = *(struct module *const *)b;

	return x->last_use < y->last_use ? -1 : x->last_use > y->last_use;
}

size_t module_cache__evict(struct module_cache *c,
			   void (*forget)(void *arg, const struct module *const *m,
					  size_t n),
			   void *arg)
{
	struct module **victims;
	size_t idle, bytes, nv = 0, kept = 0;

	if (!over(c, &idle, &bytes))
		return 0;
	victims = malloc(idle * sizeof(*victims));
	if (!victims)
		return 0;
	/* the idle ones, least recently used first (one sort: a process
	 * that mapped 16,384 files leaves them all idle at once) */
	for (size_t i = 0; i < c->n; i++)
		if (!c->mods[i]->refs)
			victims[nv++] = c->mods[i];
	qsort(victims, nv, sizeof(*victims), cmp_last_use);
	nv = 0;
	while (idle && (idle > MODULE_CACHE_IDLE || bytes > c->max_bytes)) {
		bytes -= module_bytes(victims[nv]);
		victims[nv++]->cache = NULL;	/* taken */
		idle--;
	}
	for (size_t i = 0; i < c->n; i++)
		if (c->mods[i]->cache)
			c->mods[kept++] = c->mods[i];
		else
			uncharge(c, c->mods[i]);
	/* the kept moved: index them again (never fails: no more than
	 * the index held) */
	hindex__clear(&c->index);
	for (size_t i = 0; i < kept; i++)
		(void)hindex__insert(&c->index, hindex__string(c->mods[i]->path),
				     (uint32_t)i);
	c->n = kept;
	if (forget && nv)
		forget(arg, (const struct module *const *)victims, nv);
	for (size_t i = 0; i < nv; i++)
		module__delete(victims[i]);
	free(victims);
	return nv;
}

uint64_t module_cache__refused(const struct module_cache *c)
{
	return c->refused;
}

void module_cache__set_max(struct module_cache *c, size_t max_modules)
{
	c->max_modules = max_modules;
}

uint64_t module_cache__symbols_dropped(const struct module_cache *c)
{
	return c->symbols_dropped;
}

size_t module_cache__count(const struct module_cache *c)
{
	return c->n;
}
