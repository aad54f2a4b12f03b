/*
 * space.c - the tables of processes and threads, and each process's
 * address space: its mappings, sorted by start and never overlapping (a
 * new mapping cuts what it covers out of older ones, as the kernel
 * does).  Only mappings that matter are kept: executable ones (modules,
 * JIT code) and anonymous ones (thread stacks).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "binary/module.h"
#include "collector/collector_int.h"
#include "common/grow.h"
#include "common/search.h"

/* Mappings a block holds (see "mappings" below). */
#define MAP_BLOCK 256

struct map_block {
	size_t n;		/* 1..MAP_BLOCK */
	struct mapping m[MAP_BLOCK];
};

/* ---- tables of processes and threads --------------------------------- */

static uint32_t key_at(const struct table *t, size_t i)
{
	uint32_t k;

	memcpy(&k, (const char *)t->slots + i * t->size, sizeof(k));
	return k;
}

static size_t probe(const struct table *t, uint32_t key)
{
	size_t i = (key * 2654435761u) & (t->nslots - 1);

	while (key_at(t, i) && key_at(t, i) != key)
		i = (i + 1) & (t->nslots - 1);
	return i;
}

void *space__table_find(const struct table *t, uint32_t key)
{
	size_t i = probe(t, key);

	return key_at(t, i) ? (char *)t->slots + i * t->size : NULL;
}

int space__table_init(struct table *t, size_t size)
{
	t->size = size;
	t->nslots = 64;
	t->n = 0;
	t->slots = calloc(t->nslots, size);
	return t->slots ? 0 : -ENOMEM;
}

/* Re-inserts every element into a table of @nslots slots. */
static int table_rehash(struct table *t, size_t nslots)
{
	struct table n = { calloc(nslots, t->size), t->n, nslots, t->size };

	if (!n.slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->nslots; i++)
		if (key_at(t, i))
			memcpy((char *)n.slots + probe(&n, key_at(t, i)) * t->size,
			       (char *)t->slots + i * t->size, t->size);
	free(t->slots);
	*t = n;
	return 0;
}

void *space__table_get(struct table *t, uint32_t key)
{
	void *e = key ? space__table_find(t, key) : NULL;

	if (e || !key)
		return e;
	if (2 * (t->n + 1) > t->nslots && table_rehash(t, 2 * t->nslots))
		return NULL;
	e = (char *)t->slots + probe(t, key) * t->size;
	memset(e, 0, t->size);
	memcpy(e, &key, sizeof(key));
	t->n++;
	return e;
}

/* Deletion under linear probing: re-insert the rest of the cluster. */
void space__table_delete(struct table *t, void *e)
{
	size_t i = (size_t)((char *)e - (char *)t->slots) / t->size;
	char moved[sizeof(struct process) > sizeof(struct thread) ?
		   sizeof(struct process) : sizeof(struct thread)];
	uint32_t key;

	memset(e, 0, t->size);
	t->n--;
	for (i = (i + 1) & (t->nslots - 1); (key = key_at(t, i));
	     i = (i + 1) & (t->nslots - 1)) {
		char *slot = (char *)t->slots + i * t->size;

		memcpy(moved, slot, t->size);
		memset(slot, 0, t->size);
		memcpy((char *)t->slots + probe(t, key) * t->size, moved,
		       t->size);
	}
}

struct process *space__find_proc(struct collector *c, uint32_t pid)
{
	return space__table_find(&c->procs, pid);
}

struct process *space__get_proc(struct collector *c, uint32_t pid)
{
	return space__table_get(&c->procs, pid);
}

void space__set_exec_unread(struct collector *c, struct process *p,
			    uint64_t time)
{
	if (p->exec_unread)
		c->nexec_unread--;
	if (time)
		c->nexec_unread++;
	p->exec_unread = time;
}

/* A code mapping of @p changes (unwind.c's memo of walks). */
static void code_changed(struct process *p)
{
	static uint64_t clock;

	p->maps_gen = __atomic_add_fetch(&clock, 1, __ATOMIC_RELAXED);
}

void space__release_maps(struct process *p)
{
	code_changed(p);
	for (size_t b = 0; b < p->nblocks; b++) {
		for (size_t i = 0; i < p->blocks[b]->n; i++)
			if (p->blocks[b]->m[i].kind == REGION_MODULE)
				module__release(p->blocks[b]->m[i].mod);
		free(p->blocks[b]);
	}
	p->nblocks = 0;
	p->nmaps = 0;
}

void space__set_exe(struct process *p, struct module *m)
{
	module__hold(m);
	module__release(p->exe);
	p->exe = m;
}

void space__drop_proc(struct collector *c, struct process *p)
{
	space__set_exec_unread(c, p, 0);
	space__release_maps(p);
	space__set_exe(p, NULL);
	module__release(p->jit);
	free(p->blocks);
	space__table_delete(&c->procs, p);
}

/* ---- mappings -------------------------------------------------------
 *
 * A process's mappings are sorted and disjoint, in blocks of at most
 * MAP_BLOCK: a lookup is two binary searches, and an insert or a removal
 * moves at most one block's mappings and the block pointers.  One sorted
 * array moved all mappings above the insert: quadratic in a process
 * that maps at ever lower addresses (300,000 one-page mappings).
 */


/* The block that holds, or would hold, a mapping starting at @addr:
 * the last whose first mapping starts at or below it, else the first.
 * Every mapping of an earlier block ends at or below @addr. */
static size_t block_of(const struct process *p, uint64_t addr)
{
	size_t lo = LOWER_BOUND((size_t)0, p->nblocks, i,
				p->blocks[i]->m[0].start <= addr);

	return lo ? lo - 1 : 0;
}

/* The first mapping of @b that ends above @addr (b->n if none). */
static size_t first_ending_above(const struct map_block *b, uint64_t addr)
{
	return LOWER_BOUND((size_t)0, b->n, i, b->m[i].end <= addr);
}

struct mapping *space__find_map(const struct process *p, uint64_t addr)
{
	struct map_block *b;
	size_t i;

	if (!p->nblocks)
		return NULL;
	b = p->blocks[block_of(p, addr)];
	i = first_ending_above(b, addr);
	return i < b->n && b->m[i].start <= addr ? &b->m[i] : NULL;
}

struct mapping *space__find_module(const struct process *p, const char *path)
{
	for (size_t b = 0; b < p->nblocks; b++)
		for (size_t i = 0; i < p->blocks[b]->n; i++) {
			struct mapping *m = &p->blocks[b]->m[i];

			if (m->kind == REGION_MODULE &&
			    !strcmp(module__path(m->mod), path))
				return m;
		}
	return NULL;
}

/* A new empty block at index @at of the block list, or NULL. */
static struct map_block *new_block(struct process *p, size_t at)
{
	struct map_block *b;

	if (grow(&p->blocks, &p->blocks_cap, p->nblocks + 1,
		 sizeof(*p->blocks), 8) || !(b = malloc(sizeof(*b))))
		return NULL;
	b->n = 0;
	memmove(&p->blocks[at + 1], &p->blocks[at],
		(p->nblocks - at) * sizeof(*p->blocks));
	p->blocks[at] = b;
	p->nblocks++;
	return b;
}

int space__copy_maps(struct process *dst, const struct process *src)
{
	space__release_maps(dst);
	for (size_t b = 0; b < src->nblocks; b++) {
		struct map_block *nb = new_block(dst, b);

		if (!nb)
			return -ENOMEM;
		*nb = *src->blocks[b];
		dst->nmaps += nb->n;
		for (size_t i = 0; i < nb->n; i++)
			if (nb->m[i].kind == REGION_MODULE)
				module__hold(nb->m[i].mod);
	}
	return 0;
}

/* Inserts @m at position @i of block @bi (which the order puts it in),
 * splitting a full block in two.  0 or -ENOMEM. */
static int insert_at(struct process *p, size_t bi, size_t i,
		     const struct mapping *m)
{
	struct map_block *b;

	if (!p->nblocks && !new_block(p, 0))
		return -ENOMEM;
	b = p->blocks[bi];
	if (b->n == MAP_BLOCK) {
		struct map_block *upper = new_block(p, bi + 1);

		if (!upper)
			return -ENOMEM;
		upper->n = MAP_BLOCK / 2;
		memcpy(upper->m, &b->m[MAP_BLOCK / 2],
		       upper->n * sizeof(*b->m));
		b->n = MAP_BLOCK / 2;
		if (i > b->n) {
			i -= b->n;
			b = upper;
		}
	}
	memmove(&b->m[i + 1], &b->m[i], (b->n - i) * sizeof(*m));
	b->m[i] = *m;
	b->n++;
	p->nmaps++;
	if (m->kind == REGION_MODULE)
		code_changed(p);
	return 0;
}

/* Removes mapping @i of block @bi (its module released); true when that
 * emptied the block, which is then gone from the list. */
static bool remove_at(struct process *p, size_t bi, size_t i)
{
	struct map_block *b = p->blocks[bi];

	if (b->m[i].kind == REGION_MODULE) {
		module__release(b->m[i].mod);
		code_changed(p);
	}
	memmove(&b->m[i], &b->m[i + 1], (b->n - i - 1) * sizeof(*b->m));
	b->n--;
	p->nmaps--;
	if (b->n)
		return false;
	free(b);
	memmove(&p->blocks[bi], &p->blocks[bi + 1],
		(p->nblocks - bi - 1) * sizeof(*p->blocks));
	p->nblocks--;
	return true;
}

/* Cuts [start, end) out of every mapping, as munmap or MAP_FIXED would:
 * from the first mapping ending above @start, found by binary search,
 * to the last starting below @end. */
static int cut_range(struct process *p, uint64_t start, uint64_t end)
{
	size_t bi = block_of(p, start), i;

	if (!p->nblocks)
		return 0;
	i = first_ending_above(p->blocks[bi], start);
	while (bi < p->nblocks) {
		struct mapping *o;

		if (i == p->blocks[bi]->n) {
			bi++;
			i = 0;
			continue;
		}
		o = &p->blocks[bi]->m[i];
		if (o->start >= end)
			break;
		if (o->kind == REGION_MODULE)
			code_changed(p);
		if (o->start < start && o->end > end) {	/* split in two */
			struct mapping right = *o;

			right.pgoff += end - o->start;
			right.start = end;
			if (right.kind == REGION_MODULE)
				module__hold(right.mod);
			o->end = start;
			if (insert_at(p, bi, i + 1, &right)) {
				if (right.kind == REGION_MODULE)
					module__release(right.mod);
				return -ENOMEM;
			}
			return 0;	/* nothing else can overlap */
		}
		if (o->start < start) {
			o->end = start;
			i++;
		} else if (o->end > end) {
			o->pgoff += end - o->start;
			o->start = end;
			break;
		} else if (remove_at(p, bi, i)) {
			i = 0;		/* the next block moved to @bi */
		}
	}
	return 0;
}

static int insert_map(struct process *p, const struct mapping *m)
{
	size_t bi, lo = 0, hi;
	int ret;

	if (m->end <= m->start)
		return -EINVAL;
	if (p->nmaps >= SPACE_MAX_MAPS)
		return -E2BIG;
	ret = cut_range(p, m->start, m->end);
	if (ret)
		return ret;
	bi = block_of(p, m->start);
	hi = p->nblocks ? p->blocks[bi]->n : 0;
	lo = LOWER_BOUND(lo, hi, i, p->blocks[bi]->m[i].start < m->start);
	return insert_at(p, bi, lo, m);
}

/* Anonymous memory as MMAP2 records ("//anon") and /proc maps ("",
 * "[heap]", "[anon:name]") name it; /dev/zero mappings are anonymous too. */
static bool is_anon_path(const char *path)
{
	return !path[0] || !strcmp(path, "//anon") || !strcmp(path, "[heap]") ||
	       !strncmp(path, "[anon:", 6) || !strncmp(path, "/dev/zero", 9);
}

static bool is_module_path(const char *path)
{
	return (path[0] == '/' && !is_anon_path(path)) ||
	       !strcmp(path, "[vdso]");
}

/* The owner of process @p, read once a process and exec: what the
 * module cache charges the modules it maps first to (module.h). */
static uint32_t process_uid(struct process *p)
{
	if (!p->uid_known) {
		p->uid_known = true;
		if (procfs__uid((pid_t)p->pid, &p->uid))
			p->uid = MODULE_UID_UNKNOWN;
	}
	return p->uid;
}

bool space__refused(struct collector *c, uint32_t pid, const char *exe)
{
	struct thread *t;

	if (!c->filter)
		return false;
	t = space__table_find(&c->threads, pid);
	return !c->filter(c->filter_arg, pid, exe, t ? t->comm : "");
}

int space__add_mapping(struct collector *c, struct process *p, uint64_t start,
		       uint64_t end, uint64_t pgoff, uint64_t dev, uint64_t ino,
		       unsigned prot, const char *path)
{
	struct mapping m = { .start = start, .end = end, .pgoff = pgoff };
	struct module_origin o = { .pid = (int)p->pid, .start = start,
		.end = end, .dev = dev, .ino = ino };
	int ret;

	/* The kernel maps the executable's segments first after an exec
	 * (the first one is often not executable). */
	if (p->exe_pending && path[0] == '/' && !is_anon_path(path)) {
		struct module *exe = NULL;

		p->ignored = space__refused(c, p->pid, path);
		p->uid_known = false;	/* a set-user-ID program's now */
		if (!p->ignored) {
			o.uid = process_uid(p);
			o.exe = true;
			exe = module_cache__get(c->modules, path, &o);
			o.exe = false;
		}
		space__set_exe(p, exe);
		module__release(exe);	/* set_exe holds it */
		p->exe_pending = false;
	}
	/* a process the filter refuses has no table: no sample of it is
	 * kept, and an unwatched user's mapping churn costs nothing */
	if (p->ignored) {
		space__release_maps(p);
		return 0;
	}
	if (!strcmp(path, "[stack]")) {
		m.kind = REGION_MAIN_STACK;
	} else if (prot & PROT_EXEC) {
		if (is_module_path(path) && !p->ignored) {
			m.kind = REGION_MODULE;
			o.uid = process_uid(p);
			m.mod = module_cache__get(c->modules, path, &o);
			if (!m.mod)
				return -ENOMEM;
		} else {
			m.kind = REGION_ANON;	/* JIT code, [vsyscall] */
		}
	} else if (!strcmp(path, "[heap]")) {
		m.kind = REGION_HEAP;
	} else if (is_anon_path(path)) {
		m.kind = REGION_ANON;
	} else {
		/* A file's data: neither code nor a stack, but it replaces
		 * whatever was mapped there before. */
		return cut_range(p, start, end);
	}
	ret = insert_map(p, &m);
	if (ret && m.kind == REGION_MODULE)
		module__release(m.mod);
	return ret;
}
