/*
 * module.c - ELF images through libelf: PT_LOAD segments, GNU build-id,
 * function symbols, CFI, and a cache keyed by path and inode.
 *
 * Symbols are read once at open into one array sorted by address (a few
 * thousand entries for libc).  Lookups are binary searches; nothing here
 * allocates per sample.
 */
#define _GNU_SOURCE
#include "binary/module.h"
#include "common/grow.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

struct segment {
	uint64_t offset, filesz, vaddr;
};

struct symbol {
	uint64_t addr, size;
	const char *name;	/* into the Elf's string table */
	unsigned char bind;
};

struct module {
	char *path;
	const char *name;
	char build_id[41];
	int error;
	int fd, debug_fd;
	Elf *elf, *debug_elf;
	void *image;		/* in-memory images (vDSO) */
	struct segment *segs;
	size_t nsegs;
	struct symbol *syms;
	size_t nsyms;
	struct cfi *cfi;
	uint64_t dev, ino;	/* cache key */
};

static void read_segments(struct module *m)
{
	size_t n;

	if (elf_getphdrnum(m->elf, &n) || !n)
		return;
	m->segs = calloc(n, sizeof(*m->segs));
	if (!m->segs)
		return;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(m->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		m->segs[m->nsegs++] = (struct segment){
			ph.p_offset, ph.p_filesz, ph.p_vaddr };
	}
}

static void read_build_id(struct module *m)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(m->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
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

static int add_symbols(struct module *m, Elf *elf, Elf64_Word type)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t count;
		struct symbol *t;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type ||
		    !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
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
			m->syms[m->nsyms++] = (struct symbol){
				s.st_value, s.st_size, name,
				GELF_ST_BIND(s.st_info) };
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
	nx = leading_underscores(x->name);
	ny = leading_underscores(y->name);
	if (nx != ny)
		return nx < ny ? -1 : 1;
	nx = strlen(x->name);
	ny = strlen(y->name);
	if (nx != ny)
		return nx > ny ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void sort_symbols(struct module *m)
{
	size_t kept = 0;

	if (!m->nsyms)		/* a stripped static binary: no array */
		return;
	qsort(m->syms, m->nsyms, sizeof(*m->syms), cmp_sym);
	for (size_t i = 0; i < m->nsyms; i++)
		if (!kept || m->syms[kept - 1].addr != m->syms[i].addr)
			m->syms[kept++] = m->syms[i];
	m->nsyms = kept;
}

/* A stripped Debian binary keeps its .symtab in /usr/lib/debug/.build-id
 * when the -dbgsym package is installed. */
static void open_debug_file(struct module *m)
{
	char path[128];

	if (strlen(m->build_id) < 4)
		return;
	snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug",
		 m->build_id, m->build_id + 2);
	m->debug_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (m->debug_fd < 0)
		return;
	m->debug_elf = elf_begin(m->debug_fd, ELF_C_READ, NULL);
	if (m->debug_elf && elf_kind(m->debug_elf) == ELF_K_ELF)
		add_symbols(m, m->debug_elf, SHT_SYMTAB);
}

static int analyse(struct module *m)
{
	GElf_Ehdr eh;

	if (!m->elf || elf_kind(m->elf) != ELF_K_ELF || !gelf_getehdr(m->elf, &eh))
		return -ENOEXEC;
	if (eh.e_machine != EM_X86_64 || gelf_getclass(m->elf) != ELFCLASS64)
		return -EPROTO;
	read_segments(m);
	read_build_id(m);
	if (add_symbols(m, m->elf, SHT_SYMTAB) ||
	    add_symbols(m, m->elf, SHT_DYNSYM))
		return -ENOMEM;
	open_debug_file(m);
	sort_symbols(m);
	m->cfi = cfi__open(m->elf);
	return 0;
}

static struct module *module_alloc(const char *path)
{
	struct module *m = calloc(1, sizeof(*m));
	const char *slash;

	if (!m)
		return NULL;
	m->fd = m->debug_fd = -1;
	m->path = strdup(path);
	if (!m->path) {
		free(m);
		return NULL;
	}
	slash = strrchr(m->path, '/');
	m->name = slash ? slash + 1 : m->path;
	return m;
}

struct module *module__open(const char *path)
{
	struct module *m = module_alloc(path);

	if (!m)
		return NULL;
	elf_version(EV_CURRENT);
	m->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (m->fd < 0) {
		m->error = -errno;
		return m;
	}
	m->elf = elf_begin(m->fd, ELF_C_READ, NULL);
	m->error = analyse(m);
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
		module__free(m);
		return NULL;
	}
	memcpy(m->image, img, size);
	m->elf = elf_memory(m->image, size);
	m->error = analyse(m);
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

	f = fopen("/proc/self/maps", "re");
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

void module__free(struct module *m)
{
	if (!m)
		return;
	cfi__close(m->cfi);
	if (m->debug_elf)
		elf_end(m->debug_elf);
	if (m->elf)
		elf_end(m->elf);
	if (m->debug_fd >= 0)
		close(m->debug_fd);
	if (m->fd >= 0)
		close(m->fd);
	free(m->image);
	free(m->segs);
	free(m->syms);
	free(m->path);
	free(m);
}

const char *module__path(const struct module *m) { return m->path; }
const char *module__name(const struct module *m) { return m->name; }
const char *module__build_id(const struct module *m) { return m->build_id; }
int module__error(const struct module *m) { return m->error; }
size_t module__nr_symbols(const struct module *m) { return m->nsyms; }
bool module__has_cfi(const struct module *m) { return m->cfi != NULL; }

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

int module__function(const struct module *m, uint64_t vaddr,
		     struct module_func *out)
{
	size_t lo = 0, hi = m->nsyms;
	uint64_t flo, fhi;
	bool have_fde = !cfi__fde_range(m->cfi, vaddr, &flo, &fhi);

	while (lo < hi) {	/* first symbol above vaddr */
		size_t mid = lo + (hi - lo) / 2;

		if (m->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo) {
		const struct symbol *s = &m->syms[lo - 1];

		/* A sized symbol covers its range; an unsized one (hand-
		 * written assembly) only when its FDE starts at it. */
		if ((s->size && vaddr - s->addr < s->size) ||
		    (!s->size && have_fde && flo == s->addr)) {
			out->start = s->addr;
			out->name = s->name;
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

int module__cfa(struct module *m, uint64_t vaddr, const struct cfi_regs *regs,
		uint64_t *cfa)
{
	if (!m->cfi)
		return -ENOENT;
	return cfi__cfa(m->cfi, vaddr, regs, cfa);
}

int module__step(struct module *m, uint64_t vaddr, struct cfi_regs *regs,
		 const struct cfi_mem *mem, struct cfi_step *out)
{
	if (!m->cfi)
		return -ENOENT;
	return cfi__step(m->cfi, vaddr, regs, mem, out);
}

struct module_cache {
	struct module **mods;
	size_t n, cap;
};

struct module_cache *module_cache__new(void)
{
	return calloc(1, sizeof(struct module_cache));
}

void module_cache__free(struct module_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		module__free(c->mods[i]);
	free(c->mods);
	free(c);
}

/* Linear search: called per mapping event, not per sample, and a process
 * maps tens of modules. */
struct module *module_cache__get(struct module_cache *c, const char *path,
				 uint64_t dev, uint64_t ino)
{
	struct module *m;
	bool vdso = !strcmp(path, "[vdso]");

	for (size_t i = 0; i < c->n; i++) {
		m = c->mods[i];
		if (!strcmp(m->path, path) &&
		    (vdso || (m->dev == dev && m->ino == ino)))
			return m;
	}
	if (grow(&c->mods, &c->cap, c->n + 1, sizeof(*c->mods), 16))
		return NULL;
	m = vdso ? module__open_vdso() : module__open(path);
	if (!m)
		return NULL;
	m->dev = dev;
	m->ino = ino;
	c->mods[c->n++] = m;
	return m;
}
