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

void space__release_maps(struct process *p)
{
	for (size_t i = 0; i < p->nmaps; i++)
		if (p->maps[i].kind == REGION_MODULE)
			module__release(p->maps[i].mod);
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
	free(p->maps);
	space__table_delete(&c->procs, p);
}

/* ---- mappings ------------------------------------------------------- */

long space__find_map(const struct process *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nmaps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < p->maps[mid].start)
			hi = mid;
		else if (addr >= p->maps[mid].end)
			lo = mid + 1;
		else
			return (long)mid;
	}
	return -1;
}

int space__reserve_maps(struct process *p, size_t extra)
{
	return grow(&p->maps, &p->cap, p->nmaps + extra, sizeof(*p->maps), 32);
}

/* Cuts [start, end) out of every mapping, as munmap or MAP_FIXED would.
 * The mappings are sorted and disjoint, so their ends are sorted too:
 * the first that can overlap is found in O(log n), and the walk stops
 * past @end (a scan of the whole table per insert was quadratic in a
 * process that maps and unmaps at ever new addresses). */
static int cut_range(struct process *p, uint64_t start, uint64_t end)
{
	size_t lo = 0, hi = p->nmaps;

	if (space__reserve_maps(p, 1))
		return -ENOMEM;
	while (lo < hi) {	/* the first mapping ending above @start */
		size_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].end <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < p->nmaps && p->maps[i].start < end; i++) {
		struct mapping *o = &p->maps[i];

		if (o->start < start && o->end > end) {	/* split in two */
			struct mapping right = *o;

			right.pgoff += end - o->start;
			right.start = end;
			if (right.kind == REGION_MODULE)
				module__hold(right.mod);
			o->end = start;
			memmove(o + 2, o + 1, (p->nmaps - i - 1) * sizeof(*o));
			o[1] = right;
			p->nmaps++;
			return 0;	/* nothing else can overlap */
		}
		if (o->start < start) {
			o->end = start;
		} else if (o->end > end) {
			o->pgoff += end - o->start;
			o->start = end;
		} else {
			if (o->kind == REGION_MODULE)
				module__release(o->mod);
			memmove(o, o + 1, (p->nmaps - i - 1) * sizeof(*o));
			p->nmaps--;
			i--;
		}
	}
	return 0;
}

static int insert_map(struct process *p, const struct mapping *m)
{
	size_t lo = 0, hi;

	if (m->end <= m->start)
		return -EINVAL;
	if (cut_range(p, m->start, m->end) || space__reserve_maps(p, 1))
		return -ENOMEM;
	hi = p->nmaps;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].start < m->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	memmove(&p->maps[lo + 1], &p->maps[lo],
		(p->nmaps - lo) * sizeof(*m));
	p->maps[lo] = *m;
	p->nmaps++;
	return 0;
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
	const struct module_origin o = { .pid = (int)p->pid, .start = start,
		.end = end, .dev = dev, .ino = ino };
	int ret;

	/* The kernel maps the executable's segments first after an exec
	 * (the first one is often not executable). */
	if (p->exe_pending && path[0] == '/' && !is_anon_path(path)) {
		struct module *exe = NULL;

		p->ignored = space__refused(c, p->pid, path);
		if (!p->ignored)
			exe = module_cache__get(c->modules, path, &o);
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
