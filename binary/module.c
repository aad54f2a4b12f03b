/*
 * module.c - ELF images through libelf: PT_LOAD segments, GNU build-id,
 * function symbols, CFI.  A mapping's file opened as the kernel mapped
 * it is module_file.c's, the cache keyed by path and inode
 * module_cache.c's; module_int.h is what the three share.
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
#include "binary/module_int.h"
#include "common/search.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/sys.h"

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

void module__read_build_id(struct module *m)
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

/* Sorts, keeps one name per address, and copies the names kept out of
 * libelf's string tables, which are released with the Elf.  The copies
 * are bounded by the tables: distinct names take no more than their
 * tables (twice, for names that share a tail), where 65,000 symbols
 * that all name one 4,095-byte string took 284 MB of a 1.6 MB file. */
int module__sort_symbols(struct module *m)
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
void module__drop_symbols(struct module *m)
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
 * The symbols in a cache file (CACHE_SYMBOLS): what
 * module__sort_symbols() left, the names as offsets into the names that
 * follow.  Symbol tables of at least SYM_CACHE_MIN symbols are kept;
 * reading the file back is one read and a check of each entry, where reading the tables was a pass
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
	m->debug_elf = module__elf_open(m, fd, st);
	if (m->debug_elf && elf_kind(m->debug_elf) == ELF_K_ELF)
		add_symbols(m, m->debug_elf, SHT_SYMTAB);
	/* Names are copied once sorted; the rest is never read again. */
	if (m->debug_elf)
		elf_cntl(m->debug_elf, ELF_C_FDDONE);
}

Elf *module__elf_begin_checked(int fd, Elf_Cmd cmd)
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
	return module__elf_begin_checked(fd, ELF_C_READ);
}

int module__is_elf64(Elf *elf)
{
	GElf_Ehdr eh;

	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh))
		return -ENOEXEC;
	if (eh.e_machine != EM_X86_64 || gelf_getclass(elf) != ELFCLASS64)
		return -EPROTO;
	return 0;
}

void module__release_cfi(struct module *m)
{
	cfi__close(m->cfi);
	m->cfi = NULL;
	if (m->elf)
		elf_end(m->elf);
	m->elf = NULL;
}

/* The identity of the file fstat() said @st of, by which a cfi_cache
 * names its table; NULL (none) for NULL. */
const struct cfi_file *module__file_of(const struct stat *st,
				       struct cfi_file *f)
{
	if (!st)
		return NULL;
	cfi__file_of(st, f);
	return f;
}

/* What fstat() says of @fd, in *@st; NULL when it fails. */
const struct stat *module__stat_of(int fd, struct stat *st)
{
	return fstat(fd, st) ? NULL : st;
}

/* @m's symbols: from its cache where the file (and its debug file) are
 * the ones cached, else read from the tables (and cached when there are
 * many).  0 or -ENOMEM. */
static int read_symbols(struct module *m, const struct stat *st)
{
	struct cfi_cache *c = st ? module__cfi_cache_of(m) : NULL;
	struct cfi_file file, debug;
	struct stat dst;
	int dfd = open_debug_file(m, &dst);
	uint64_t key = 0;
	int ret = 0;

	if (c) {
		key = symbols_key(c, module__file_of(st, &file), dfd >= 0 ?
				  module__file_of(&dst, &debug) : NULL);
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
	ret = module__sort_symbols(m);
	if (!ret && c)
		store_symbols(m, c, key);
out:
	if (dfd >= 0)
		close(dfd);
	return ret;
}

/* Reads what a module is (m->elf, read from the file fstat() said @st
 * of; NULL: from memory); the CFI too with @cfi, else at first use. */
/* Whether @elf is loaded at its link-time addresses (ET_EXEC). */
static bool fixed_position(Elf *elf)
{
	GElf_Ehdr eh;

	return gelf_getehdr(elf, &eh) && eh.e_type == ET_EXEC;
}

bool module__fixed(const struct module *m)
{
	return m->fixed;
}

static int analyse(struct module *m, const struct stat *st, bool cfi)
{
	struct cfi_file file;
	int ret = module__is_elf64(m->elf);

	if (ret)
		return ret;
	read_segments(m);
	module__read_build_id(m);
	m->go = is_go(m->elf);
	m->fixed = fixed_position(m->elf);
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
		m->cfi = cfi__open(m->elf, module__cfi_cache_of(m),
				   module__file_of(st, &file));
	} else {
		module__release_cfi(m);
		m->cfi_released = true;
	}
	return 0;
}

/* Reads what analysis needs from @fd, then lets it go (see above). */
int module__analyse_fd(struct module *m, int fd, bool cfi)
{
	struct stat buf;
	const struct stat *st = module__stat_of(fd, &buf);

	m->elf = module__elf_open(m, fd, st);
	m->error = analyse(m, st, cfi);
	if (m->elf)
		elf_cntl(m->elf, ELF_C_FDDONE);
	close(fd);
	return m->error;
}

struct module *module__alloc(const char *path)
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
int module__open_regular(const char *path)
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
	ret = module__is_elf64(probe.elf);
	if (!ret) {
		module__read_build_id(&probe);
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
	struct module *m = module__alloc(path);
	int fd;

	if (!m)
		return NULL;
	elf_version(EV_CURRENT);
	fd = module__open_regular(path);
	if (fd < 0)
		m->error = fd;
	else
		module__analyse_fd(m, fd, true);
	return m;
}

struct module *module__open_memory(const char *name, const void *img,
				   size_t size)
{
	struct module *m = module__alloc(name);

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
	if (!m && (m = module__alloc("[vdso]")))
		m->error = -ENOENT;
	return m;
}

void module__delete(struct module *m)
{
	if (!m)
		return;
	module__release_cfi(m);
	if (m->debug_elf)
		elf_end(m->debug_elf);
	free(m->image);
	free(m->segs);
	module__drop_symbols(m);
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
	return module__cfi_of((struct module *)m) != NULL;
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
	uint64_t flo = 0, fhi;
	bool have_fde;

	page_index__range(&m->sym_pages, m->nsyms, vaddr, &lo, &hi);
	/* the first symbol above vaddr */
	lo = LOWER_BOUND(lo, hi, i, m->syms[i].addr <= vaddr);
	/* A sized symbol covers its range: no FDE looked up (that search
	 * was 2.8 % of the daemon's profile watching cc1 at 999 Hz, and
	 * 1.0 % so) */
	if (lo && m->syms[lo - 1].size &&
	    vaddr - m->syms[lo - 1].addr < m->syms[lo - 1].size) {
		out->start = m->syms[lo - 1].addr;
		out->name = m->names + m->syms[lo - 1].name.off;
		return 0;
	}
	/* Logically const: rebuilding released CFI changes no answer. */
	have_fde = !cfi__fde_range(module__cfi_of((struct module *)m), vaddr,
				   &flo, &fhi);
	if (lo && !m->syms[lo - 1].size) {
		const struct symbol *s = &m->syms[lo - 1];

		/* An unsized one (hand-written assembly) when its FDE
		 * starts at it, or, where no FDE covers the address, up
		 * to the next symbol, as perf sizes it: crtstuff's
		 * __do_global_dtors_aux has neither size nor FDE, and a
		 * sample in __cxa_finalize at exit returns into it (its
		 * frame pointer unwinds it). */
		if ((have_fde && flo == s->addr) ||
		    (!have_fde && lo < m->nsyms)) {
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

int module__function_end(const struct module *m, uint64_t start,
			 uint64_t *end)
{
	size_t lo, hi;
	uint64_t flo, fhi;

	page_index__range(&m->sym_pages, m->nsyms, start, &lo, &hi);
	lo = LOWER_BOUND(lo, hi, i, m->syms[i].addr < start);
	for (; lo < m->nsyms && m->syms[lo].addr == start; lo++)
		if (m->syms[lo].size &&
		    start + m->syms[lo].size > start) {
			*end = start + m->syms[lo].size;
			return 0;
		}
	if (!cfi__fde_range(module__cfi_of((struct module *)m), start, &flo,
			    &fhi) && flo == start && fhi > start) {
		*end = fhi;
		return 0;
	}
	return -ENOENT;
}

int module__cfa(struct module *m, uint64_t vaddr, const struct cfi_regs *regs,
		uint64_t *cfa)
{
	struct cfi *cfi = module__cfi_of(m);

	if (!cfi)
		return -ENOENT;
	return cfi__cfa(cfi, vaddr, regs, cfa);
}

int module__step(struct module *m, uint64_t vaddr, struct cfi_regs *regs,
		 const struct cfi_mem *mem, struct cfi_step *out)
{
	struct cfi *cfi = module__cfi_of(m);

	if (!cfi)
		return -ENOENT;
	return cfi__step(cfi, vaddr, regs, mem, out);
}

