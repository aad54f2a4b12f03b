/*
 * module_cache.c - modules kept by path and inode for a recorder's or
 * daemon's life (module_cache__get()), within budgets of modules, bytes
 * and per-user shares; perf maps of JIT code (module_cache__perfmap()).
 */
#define _GNU_SOURCE
#include "binary/module_int.h"
#include "common/grow.h"
#include "common/hindex.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/sys.h"

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

struct cfi_cache *module__cfi_cache_of(const struct module *m)
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

Elf *module__elf_open(const struct module *m, int fd, const struct stat *st)
{
	Elf *elf;

	if (!st || !m->cache || !m->cache->map_files || !sys__may_map(fd, st))
		return module__elf_begin(fd);
	elf = module__elf_begin_checked(fd, ELF_C_READ_MMAP);
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
		module__release_cfi(lru);
		lru->cfi_released = true;
	}
}

struct cfi *module__cfi_of(struct module *m)
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
	fd = module__open_mapped(m->path, &m->origin);
	if (fd < 0) {		/* gone or replaced since: say so */
		m->error = fd;
		return NULL;
	}
	st = module__stat_of(fd, &buf);
	m->elf = module__elf_open(m, fd, st);
	if (!module__is_elf64(m->elf))
		m->cfi = cfi__open(m->elf, module__cfi_cache_of(m),
				   module__file_of(st, &file));
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
	module__drop_symbols(m);
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
		if (!c->over && (c->over = module__alloc("[too many modules]")))
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
	} else if ((m = module__alloc(path))) {
		elf_version(EV_CURRENT);
		m->cache = c;	/* read as the cache reads files */
		/* CFI at first use: a process maps tens of libraries
		 * whose code is never sampled, and libdwarf's FDE list is
		 * the dearest part of a module to build */
		fd = module__open_mapped(path, o);
		if (fd < 0)
			m->error = fd;
		else
			module__analyse_fd(m, fd, false);
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
	return module__sort_symbols(m);
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
	pfd = module__open_path(root, rel, true);
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
	m = buf ? module__alloc(path) : NULL;
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

