/*
 * collector.c - address spaces, stack bases and CID formation.
 *
 * Invariants: a process's mappings are sorted by start and do not
 * overlap (a new mapping cuts what it covers out of older ones, as the
 * kernel does); only mappings that matter are kept: executable ones
 * (modules, JIT code) and anonymous ones (thread stacks).  Main-thread
 * stack bases are kept as a short list by time, because an exec changes
 * the base while samples from before it may still be in flight.
 *
 * Hot path: collector__process() for a sample does two binary searches
 * (mapping of PC, mapping of SP), one symbol search, one CFI lookup and
 * one hash update; no allocation once the tables are warm.  Its peek
 * adds one process lookup while some exec's stack base is still to be
 * read (exec_unread; in a daemon, an exec'd process never sampled keeps
 * one pending until it exits).  A process that exits before its first
 * sample is read would have no base: collector__exec_seen reads it when
 * the exec is reported, within a millisecond.
 */
#define _GNU_SOURCE
#include "collector/collector.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "binary/module.h"
#include "common/grow.h"
#include "collector/procfs.h"
#include "collector/record.h"
#include "common/sys.h"

/* A main-thread SP further than this below startstack is not on it. */
#define MAIN_STACK_MAX (1ULL << 30)
#define MAX_BASES 4
/* Early exec reads (collector__exec_seen): how many wait at once, how
 * often one is retried (the loops retry every millisecond), and how
 * far apart the notifier's and the ring's records of one exec may be
 * (with the same name: see has_base_since). */
#define MAX_EARLY 256
#define EARLY_TRIES 64
#define EARLY_NEAR_NS 500000

enum map_kind { REGION_MODULE, REGION_ANON, REGION_MAIN_STACK };

struct mapping {
	uint64_t start, end, pgoff;
	struct module *mod;	/* REGION_MODULE only */
	enum map_kind kind;
};

struct stack_base {
	uint64_t since;		/* record time from which it holds */
	uint64_t base;		/* 0: unknown from then on (an exec whose
				 * new base could not be read) */
	bool early;		/* read for the notifier's record of an exec
				 * (collector__exec_seen) ... */
	uint32_t comm_hash;	/* ... that named the image this */
};

struct process {
	uint32_t pid;		/* first: the table key; 0 = empty slot */
	bool base_tried;	/* a /proc read was attempted for t = 0 */
	struct mapping *maps;
	size_t nmaps, cap;
	struct stack_base bases[MAX_BASES];
	int nbases;
	uint64_t next_exec_base;	/* known before its exec record, or 0 */
	/* The time of an exec whose new base is still to be read: read at
	 * the first sample after it (0: none).  Not at the exec record:
	 * execve() sets mm->start_stack twice (setup_arg_pages, then lower
	 * once argv, envp and auxv are pushed), and a read between the two
	 * gives a base a few KB too high.  A sample after the exec shows
	 * the process back in user space, its base final. */
	uint64_t exec_unread;
	struct module *exe;	/* the executable, NULL if unknown; held */
	bool exe_pending;	/* exec seen: the next file mapped is it */
	/* The filter refused it: its code is not opened as modules (a
	 * daemon must not open every library of every process).  Decided
	 * at its exec (by path) or when first seen; cleared by
	 * collector__add_running(). */
	bool ignored;
};

struct thread {
	uint32_t tid;		/* first: the table key; 0 = empty slot */
	char comm[16];
};

/* Open addressing with linear probing, keyed by the uint32_t that starts
 * each element (pid or tid; 0 never names a user task).  Not
 * common/hindex.h, on purpose: processes and threads come and go with
 * every exit, so the elements live in the slots themselves and leave by
 * backward shift; an index over a dense array would have to compact
 * that array (and move every process) on each exit. */
struct table {
	void *slots;
	size_t n, nslots;	/* nslots: a power of two */
	size_t size;		/* of one element */
};

struct collector {
	struct module_cache *modules;
	struct aggregate *agg;
	struct collector_stats stats;
	struct table procs;	/* struct process by pid */
	struct table threads;	/* struct thread by tid: names known */
	collector_path_fn path_fn;	/* NULL: no unwinding */
	void *path_arg;
	collector_filter_fn filter;	/* NULL: every process */
	void *filter_arg;
	struct path_frame *frames;	/* ICPPD_MAX_FRAMES, when unwinding */
	size_t nexec_unread;	/* processes with exec_unread set */
	struct early {
		uint32_t pid, tries;
		uint64_t time;
		char comm[16];
	} early[MAX_EARLY];	/* execs whose base is still to be read */
	size_t nearly;
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

static void *table_find(const struct table *t, uint32_t key)
{
	size_t i = probe(t, key);

	return key_at(t, i) ? (char *)t->slots + i * t->size : NULL;
}

static int table_init(struct table *t, size_t size)
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

/* The element for @key, zeroed but for its key when new; NULL for key
 * 0, which marks empty slots (a crafted record's pid 0 once took a slot
 * that looked empty: its maps leaked, and the count grew without end).
 * Pointers into the table are invalidated by the next insert. */
static void *table_get(struct table *t, uint32_t key)
{
	void *e = key ? table_find(t, key) : NULL;

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
static void table_delete(struct table *t, void *e)
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

static struct process *find_proc(struct collector *c, uint32_t pid)
{
	return table_find(&c->procs, pid);
}

static struct process *get_proc(struct collector *c, uint32_t pid)
{
	return table_get(&c->procs, pid);
}

/* Sets p->exec_unread, counting the processes that have one. */
static void set_exec_unread(struct collector *c, struct process *p,
			    uint64_t time)
{
	if (p->exec_unread)
		c->nexec_unread--;
	if (time)
		c->nexec_unread++;
	p->exec_unread = time;
}

/* Module references: every REGION_MODULE mapping and every exe holds
 * its module, so the daemon can evict modules nobody maps any more
 * (module_cache__evict). */
static void release_maps(struct process *p)
{
	for (size_t i = 0; i < p->nmaps; i++)
		if (p->maps[i].kind == REGION_MODULE)
			module__release(p->maps[i].mod);
	p->nmaps = 0;
}

static void set_exe(struct process *p, struct module *m)
{
	module__hold(m);
	module__release(p->exe);
	p->exe = m;
}

static void drop_proc(struct collector *c, struct process *p)
{
	set_exec_unread(c, p, 0);
	release_maps(p);
	set_exe(p, NULL);
	free(p->maps);
	table_delete(&c->procs, p);
}

struct collector *collector__new(struct module_cache *modules,
				 struct aggregate *agg)
{
	struct collector *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->modules = modules;
	c->agg = agg;
	if (table_init(&c->procs, sizeof(struct process)) ||
	    table_init(&c->threads, sizeof(struct thread))) {
		collector__free(c);
		return NULL;
	}
	return c;
}

void collector__free(struct collector *c)
{
	if (!c)
		return;
	for (size_t i = 0; c->procs.slots && i < c->procs.nslots; i++) {
		struct process *p = (struct process *)c->procs.slots + i;

		if (p->pid) {
			release_maps(p);
			set_exe(p, NULL);
		}
		free(p->maps);
	}
	free(c->procs.slots);
	free(c->threads.slots);
	free(c->frames);
	free(c);
}

const struct collector_stats *collector__stats(const struct collector *c)
{
	return &c->stats;
}

/* ---- mappings ------------------------------------------------------- */

/* Index of the mapping containing @addr, or -1. */
static long find_map(const struct process *p, uint64_t addr)
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

static int reserve_maps(struct process *p, size_t extra)
{
	return grow(&p->maps, &p->cap, p->nmaps + extra, sizeof(*p->maps), 32);
}

/* Cuts [start, end) out of every mapping, as munmap or MAP_FIXED would. */
static int cut_range(struct process *p, uint64_t start, uint64_t end)
{
	if (reserve_maps(p, 1))
		return -ENOMEM;
	for (size_t i = 0; i < p->nmaps; i++) {
		struct mapping *o = &p->maps[i];

		if (o->end <= start || o->start >= end)
			continue;
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
	if (cut_range(p, m->start, m->end) || reserve_maps(p, 1))
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

/* Whether the filter refuses process @pid running @exe (NULL: not known). */
static bool refused(struct collector *c, uint32_t pid, const char *exe)
{
	struct thread *t;

	if (!c->filter)
		return false;
	t = table_find(&c->threads, pid);
	return !c->filter(c->filter_arg, pid, exe, t ? t->comm : "");
}

static int add_mapping(struct collector *c, struct process *p, uint64_t start,
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

		p->ignored = refused(c, p->pid, path);
		if (!p->ignored)
			exe = module_cache__get(c->modules, path, &o);
		set_exe(p, exe);
		module__release(exe);	/* set_exe holds it */
		p->exe_pending = false;
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

/* ---- stack bases ---------------------------------------------------- */

static uint32_t comm_hash(const char *comm)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < 15 && comm[i]; i++)
		h = (h ^ (unsigned char)comm[i]) * 16777619u;
	return h;
}

/* @early: read for the notifier's record of an exec that named the
 * image @comm (NULL otherwise). */
static void add_base(struct process *p, uint64_t since, uint64_t base,
		     const char *early)
{
	int i;

	for (i = 0; i < p->nbases; i++)
		if (p->bases[i].since == since) {
			p->bases[i] = (struct stack_base){ since, base,
				early != NULL, early ? comm_hash(early) : 0 };
			return;
		}
	if (p->nbases == MAX_BASES) {	/* forget the oldest */
		memmove(&p->bases[0], &p->bases[1],
			(MAX_BASES - 1) * sizeof(p->bases[0]));
		p->nbases--;
	}
	for (i = p->nbases; i > 0 && p->bases[i - 1].since > since; i--)
		p->bases[i] = p->bases[i - 1];
	p->bases[i] = (struct stack_base){ since, base, early != NULL,
					   early ? comm_hash(early) : 0 };
	p->nbases++;
}

/* 1: *base holds; 0: unknown since an exec; -1: never read. */
static int main_base_at(const struct process *p, uint64_t time,
			uint64_t *base)
{
	for (int i = p->nbases - 1; i >= 0; i--)
		if (p->bases[i].since <= time) {
			*base = p->bases[i].base;
			return *base ? 1 : 0;
		}
	return -1;
}

/* A base read for the exec at @since that named the image @comm: the
 * peek's (at the ring's record time) or an early read's (at the
 * notifier's record of the same exec: tens of microseconds apart, up to
 * 90 under load here, and of the same name). */
static bool has_base_since(const struct process *p, uint64_t since,
			   const char *comm)
{
	for (int i = 0; i < p->nbases; i++) {
		const struct stack_base *b = &p->bases[i];

		if (b->since == since || (b->early && comm &&
		    b->comm_hash == comm_hash(comm) &&
		    (b->since > since ? b->since - since : since - b->since) <=
		    EARLY_NEAR_NS))
			return true;
	}
	return false;
}

static void read_main_base(struct process *p, uint64_t since)
{
	uint64_t base;

	if (!procfs__main_stack_base((pid_t)p->pid, &base))
		add_base(p, since, base, NULL);
}

static int stack_base(struct process *p, uint64_t sp, uint64_t time,
		      uint64_t *base)
{
	long i = find_map(p, sp);

	if (i >= 0 && p->maps[i].kind == REGION_ANON) {
		*base = p->maps[i].end;
		return 0;
	}
	if (i >= 0 && p->maps[i].kind != REGION_MAIN_STACK)
		return CID_SP_OUTSIDE_STACK;
	switch (main_base_at(p, time, base)) {
	case 1:
		break;
	case 0:
		return CID_NO_STACK_BASE;
	default:
		if (p->base_tried)
			return CID_NO_STACK_BASE;
		p->base_tried = true;
		read_main_base(p, 0);
		if (main_base_at(p, time, base) != 1)
			return CID_NO_STACK_BASE;
	}
	if (sp >= *base || *base - sp > MAIN_STACK_MAX)
		return CID_SP_OUTSIDE_STACK;
	return 0;
}

/* ---- records -------------------------------------------------------- */

/* Remembers a thread's name for the database. */
static void note_thread(struct collector *c, uint32_t pid, uint32_t tid,
			const char *comm)
{
	struct thread *t = table_get(&c->threads, tid);

	if (t) {
		snprintf(t->comm, sizeof(t->comm), "%s", comm);
		aggregate__add_thread(c->agg, pid, tid, t->comm);
	}
}

void collector__peek(struct collector *c, const struct perf_event_header *h)
{
	struct process *p;

	if (h->type == PERF_RECORD_COMM) {
		struct rec_comm r;

		if (record__parse_comm(h, &r) || !r.exec ||
		    !(p = get_proc(c, r.pid)))
			return;
		set_exec_unread(c, p, r.sid.time ? r.sid.time : 1);
	} else if (h->type == PERF_RECORD_FORK) {
		struct rec_task r;
		struct process *parent;

		if (record__parse_task(h, &r) || r.pid == r.ppid ||
		    !(p = get_proc(c, r.pid)))
			return;
		/* A child's stack is its parent's copy: the parent's base
		 * (copied when the record is processed) holds.  /proc would
		 * show the child as it is now, perhaps after an exec. */
		parent = find_proc(c, r.ppid);	/* after get_proc: it may move */
		if (!parent || !parent->nbases)
			read_main_base(p, r.time);
	} else if (h->type == PERF_RECORD_SAMPLE) {
		uint32_t pid, tid;
		uint64_t time;
		char comm[16];

		if (record__sample_task(h, &pid, &tid))
			return;
		if (c->nexec_unread && (p = find_proc(c, pid)) &&
		    p->exec_unread && !record__time(h, &time) &&
		    time > p->exec_unread) {
			read_main_base(p, p->exec_unread);
			set_exec_unread(c, p, 0);
		}
		if (table_find(&c->threads, tid))
			return;
		if (!procfs__comm((pid_t)pid, (pid_t)tid, comm, sizeof(comm)))
			note_thread(c, pid, tid, comm);
		p = get_proc(c, pid);
		if (p && !p->nbases && !p->base_tried) {
			p->base_tried = true;
			read_main_base(p, 0);
		}
	}
}

static enum cid_failure form_cid(struct collector *c,
				 const struct perf_sample *s,
				 struct cid_key *key, const char **name,
				 const struct module **where, uint64_t *stack_top)
{
	struct process *p = find_proc(c, s->pid);
	struct module_func f;
	struct cfi_regs regs;
	uint64_t vaddr, cfa, base;
	struct mapping *m;
	long i;
	int ret;

	*where = NULL;
	if (!s->has_regs)
		return CID_NO_USER_REGS;
	if (!p)
		p = get_proc(c, s->pid);
	if (!p || (i = find_map(p, s->uip)) < 0)
		return CID_NO_MAPPING;
	m = &p->maps[i];
	if (m->kind != REGION_MODULE)
		return CID_ANON_CODE;
	*where = m->mod;
	if (module__error(m->mod))
		return module__error(m->mod) == -ESTALE ? CID_MODULE_CHANGED :
		       CID_MODULE_UNREADABLE;
	if (module__vaddr(m->mod, s->uip - m->start + m->pgoff, &vaddr) ||
	    module__function(m->mod, vaddr, &f))
		return CID_NO_CFI;
	regs = (struct cfi_regs){ .sp = s->sp, .bp = s->bp, .ip = s->uip };
	ret = module__cfa(m->mod, vaddr, &regs, &cfa);
	if (ret == -ENOENT)
		return CID_NO_CFI;
	if (ret)
		return CID_CFA_UNSUPPORTED;
	ret = stack_base(p, s->sp, s->time, &base);
	if (ret)
		return (enum cid_failure)ret;
	if (cfa >= base || cfa <= s->sp)
		return CID_SP_OUTSIDE_STACK;
	*key = (struct cid_key){ .mod = m->mod, .func = f.start,
		.height = (int64_t)(base - cfa), .pid = s->pid, .tid = s->tid,
		.prog = p->exe };
	*name = f.name;
	*stack_top = base;
	return CID_NR_FAILURES;	/* success */
}

/* ---- unwinding (training and validation) ---------------------------- */

static const char *const unwind_names[UNW_NR_STATUS] = {
	[UNW_COMPLETE] = "complete",
	[UNW_TRUNCATED] = "truncated",
	[UNW_NO_STACK] = "no_stack",
	[UNW_NO_MAPPING] = "no_mapping",
	[UNW_NO_CFI] = "no_cfi",
	[UNW_BAD_CFI] = "bad_cfi",
	[UNW_BAD_FRAME] = "bad_frame",
	[UNW_TOO_DEEP] = "too_deep",
	[UNW_NO_PROGRAM] = "no_program",
};

const char *unwind_status__name(enum unwind_status s)
{
	return (unsigned)s < UNW_NR_STATUS ? unwind_names[s] : "?";
}

void collector__set_filter(struct collector *c, collector_filter_fn fn,
			   void *arg)
{
	c->filter = fn;
	c->filter_arg = arg;
}

/* Whether the filter accepts the process of a sample. */
static bool accepted(struct collector *c, uint32_t pid)
{
	struct process *p = find_proc(c, pid);
	struct thread *t = table_find(&c->threads, pid);

	return c->filter(c->filter_arg, pid, p && p->exe ?
			 module__path(p->exe) : NULL, t ? t->comm : "");
}

int collector__set_unwind(struct collector *c, collector_path_fn fn,
			  void *arg)
{
	if (!c->frames) {
		c->frames = calloc(ICPPD_MAX_FRAMES, sizeof(*c->frames));
		if (!c->frames)
			return -ENOMEM;
	}
	c->path_fn = fn;
	c->path_arg = arg;
	return 0;
}

/*
 * Walks the stack copy from the sampled registers to the outermost
 * frame.  A frame is outermost when its CFI says the return address is
 * undefined (glibc's _start and clone3) or when its CFA is at or above
 * the stack base (a start routine without such CFI).  Heights use the
 * same base as the sample's CID, so frames[innermost] is the CID.
 * Frames are stored innermost first in c->frames; *@n is their count.
 */
static enum unwind_status unwind(struct collector *c, struct process *p,
				 const struct perf_sample *s, uint64_t base,
				 size_t *n)
{
	struct cfi_regs regs = { .sp = s->sp, .bp = s->bp, .ip = s->uip };
	struct cfi_mem mem = { .start = s->sp, .data = s->stack,
			       .size = s->stack_size };
	bool exact = true;	/* the pc is not a return address */

	*n = 0;
	if (!s->stack || !s->stack_size)
		return UNW_NO_STACK;
	for (;;) {
		struct module_func f;
		struct cfi_step st = { 0 };
		struct mapping *m;
		uint64_t vaddr, look, sp = regs.sp;
		long i = find_map(p, regs.ip);
		int ret;

		if (*n == ICPPD_MAX_FRAMES)
			return UNW_TOO_DEEP;
		if (i < 0 || p->maps[i].kind != REGION_MODULE)
			return UNW_NO_MAPPING;
		m = &p->maps[i];
		if (module__error(m->mod) ||
		    module__vaddr(m->mod, regs.ip - m->start + m->pgoff, &vaddr))
			return UNW_NO_MAPPING;
		/* A return address may be one past a call that ends the
		 * function (noreturn): look up the call itself. */
		look = exact ? vaddr : vaddr - 1;
		if (module__function(m->mod, look, &f))
			return UNW_NO_CFI;
		ret = module__step(m->mod, look, &regs, &mem, &st);
		if (ret < 0 && ret != -EFAULT)
			return ret == -ENOENT ? UNW_NO_CFI : UNW_BAD_CFI;
		if (ret == -EFAULT && st.cfa < base)
			return UNW_TRUNCATED;
		c->frames[(*n)++] = (struct path_frame){ .mod = m->mod,
			.func = f.start, .name = f.name, .pc = vaddr,
			.height = (int64_t)(base - st.cfa) };
		if (ret == 1 || st.cfa >= base)
			return UNW_COMPLETE;
		if (ret == -EFAULT || regs.sp <= sp)
			return UNW_BAD_FRAME;
		exact = st.signal;
	}
}

/* Reverses c->frames[0, n) into outermost-first order. */
static void reverse_frames(struct path_frame *f, size_t n)
{
	for (size_t i = 0; i < n / 2; i++) {
		struct path_frame t = f[i];

		f[i] = f[n - 1 - i];
		f[n - 1 - i] = t;
	}
}

/* @base: the stack base form_cid() found for the sample. */
static int unwind_sample(struct collector *c, const struct perf_sample *s,
			 uint64_t base)
{
	struct process *p = find_proc(c, s->pid);	/* form_cid() made it */
	struct collector_path path;
	enum unwind_status st;
	size_t n;

	st = p->exe ? unwind(c, p, s, base, &n) : UNW_NO_PROGRAM;
	c->stats.unwind[st]++;
	if (st != UNW_COMPLETE)
		return 0;
	reverse_frames(c->frames, n);
	path = (struct collector_path){ .program = p->exe, .pid = s->pid,
		.tid = s->tid, .frames = c->frames, .n = n };
	return c->path_fn(c->path_arg, &path);
}

static int process_sample(struct collector *c, const struct perf_event_header *h)
{
	struct perf_sample s;
	struct cid_key key;
	const char *name = NULL;
	const struct module *where;
	enum cid_failure why;
	uint64_t base;

	if (record__parse_sample(h, &s)) {
		c->stats.malformed++;
		return 0;
	}
	if (c->filter && !accepted(c, s.pid)) {
		c->stats.filtered++;
		return 0;
	}
	c->stats.samples++;
	why = form_cid(c, &s, &key, &name, &where, &base);
	if (why == CID_NR_FAILURES) {
		int ret;

		c->stats.cids++;
		ret = aggregate__add_cid(c->agg, &key, name);
		if (!ret && c->path_fn)
			ret = unwind_sample(c, &s, base);
		return ret;
	}
	c->stats.unresolved++;
	c->stats.by_reason[why]++;
	return aggregate__add_unresolved(c->agg, where, s.pid, s.tid, why);
}

static int process_mmap2(struct collector *c, const struct perf_event_header *h)
{
	struct rec_mmap2 r;
	struct process *p;
	bool fresh;

	if (record__parse_mmap2(h, &r)) {
		c->stats.malformed++;
		return 0;
	}
	if (!r.pid) {		/* no process of ours: crafted */
		c->stats.malformed++;
		return 0;
	}
	fresh = !find_proc(c, r.pid);
	p = get_proc(c, r.pid);
	if (!p)
		return -ENOMEM;
	if (fresh)	/* running before us, never seen to exec */
		p->ignored = refused(c, r.pid, NULL);
	return add_mapping(c, p, r.start, r.start + r.len, r.pgoff,
			   makedev((unsigned)(r.dev >> 32), (unsigned)r.dev),
			   r.ino, r.prot, r.filename) == -ENOMEM ? -ENOMEM : 0;
}

static int process_task(struct collector *c, const struct perf_event_header *h)
{
	struct rec_task r;
	struct process *p, *parent;

	if (record__parse_task(h, &r)) {
		c->stats.malformed++;
		return 0;
	}
	if (h->type == PERF_RECORD_EXIT) {
		struct thread *t = table_find(&c->threads, r.tid);

		if (t)
			table_delete(&c->threads, t);
		if (r.pid == r.tid && (p = find_proc(c, r.pid)))
			drop_proc(c, p);
		return 0;
	}
	{	/* a new task is named like its parent until it renames */
		struct thread *parent_thread = table_find(&c->threads, r.ptid);

		if (parent_thread) {
			char comm[16];

			memcpy(comm, parent_thread->comm, sizeof(comm));
			note_thread(c, r.pid, r.tid, comm);
		}
	}
	if (r.pid == r.ppid)	/* a new thread shares the address space */
		return 0;
	if (!r.pid) {		/* pid 0 never forks as a child: crafted */
		c->stats.malformed++;
		return 0;
	}
	p = get_proc(c, r.pid);
	parent = find_proc(c, r.ppid);	/* after get_proc: it may move */
	if (!p)
		return -ENOMEM;
	if (parent) {
		release_maps(p);
		if (reserve_maps(p, parent->nmaps))
			return -ENOMEM;
		if (parent->nmaps)	/* a parent without maps has no array */
			memcpy(p->maps, parent->maps,
			       parent->nmaps * sizeof(*p->maps));
		p->nmaps = parent->nmaps;
		for (size_t i = 0; i < p->nmaps; i++)
			if (p->maps[i].kind == REGION_MODULE)
				module__hold(p->maps[i].mod);
		set_exe(p, parent->exe);
		p->ignored = parent->ignored;
		for (int i = 0; i < parent->nbases; i++)
			if (parent->bases[i].since <= r.time)
				add_base(p, parent->bases[i].since,
					 parent->bases[i].base, NULL);
		/* the parent's new base, still to be read, is the child's
		 * too (unless the child's own exec came since) */
		if (parent->exec_unread && !p->exec_unread)
			set_exec_unread(c, p, parent->exec_unread);
	}
	return 0;
}

/* 0 once done (read, or given up), -EAGAIN to retry.  The base is the
 * exec's only while the process runs the name the exec gave it: a
 * later exec (sh -c "exec prog") would give the next image's. */
static int try_early(struct collector *c, struct early *e)
{
	uint64_t base;
	struct process *p;
	char comm[16];
	int ret = procfs__exec_stack_base((pid_t)e->pid, &base, comm);

	if (ret == -EAGAIN && ++e->tries < EARLY_TRIES)
		return -EAGAIN;
	if (!ret && !strncmp(comm, e->comm, sizeof(comm) - 1) &&
	    (p = get_proc(c, e->pid))) {
		add_base(p, e->time, base, e->comm);
		/* the ring's record of this exec, processed first, said
		 * "unknown from here": the samples still to come can use it */
		for (int i = 0; i < p->nbases; i++)
			if (!p->bases[i].base && p->bases[i].since > e->time &&
			    p->bases[i].since - e->time <= EARLY_NEAR_NS)
				p->bases[i].base = base;
	}
	return 0;
}

/* Queued, not read at once: of several execs of one process reported
 * together only the last can still be read. */
void collector__exec_seen(struct collector *c, uint32_t pid, uint64_t time,
			  const char *comm)
{
	struct early e = { .pid = pid, .time = time };
	size_t i;

	snprintf(e.comm, sizeof(e.comm), "%s", comm);
	for (i = 0; i < c->nearly && c->early[i].pid != pid; i++)
		;
	if (i < c->nearly)
		c->early[i] = e;	/* a later exec of the same process */
	else if (c->nearly < MAX_EARLY)
		c->early[c->nearly++] = e;
}

void collector__retry_execs(struct collector *c)
{
	size_t kept = 0;

	for (size_t i = 0; i < c->nearly; i++)
		if (try_early(c, &c->early[i]) == -EAGAIN)
			c->early[kept++] = c->early[i];
	c->nearly = kept;
}

size_t collector__execs_waiting(const struct collector *c)
{
	return c->nearly;
}

static int process_comm(struct collector *c, const struct perf_event_header *h)
{
	struct rec_comm r;
	struct process *p;

	if (record__parse_comm(h, &r)) {
		c->stats.malformed++;
		return 0;
	}
	note_thread(c, r.pid, r.tid, r.comm);
	if (!r.exec || !(p = get_proc(c, r.pid)))
		return 0;
	release_maps(p);	/* a new image: MMAP2 records follow */
	set_exe(p, NULL);
	p->exe_pending = true;
	/* The old image's stack base no longer holds.  When the peek could
	 * not read the new one (the process was already gone), record that
	 * it is unknown, rather than let samples fall back on the old one. */
	if (!has_base_since(p, r.sid.time, r.comm))
		add_base(p, r.sid.time, p->next_exec_base, NULL);
	p->next_exec_base = 0;
	return 0;
}

int collector__process(struct collector *c, const struct perf_event_header *h)
{
	uint64_t lost;

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		return process_sample(c, h);
	case PERF_RECORD_MMAP2:
		return process_mmap2(c, h);
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return process_task(c, h);
	case PERF_RECORD_COMM:
		return process_comm(c, h);
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		if (record__parse_lost(h, &lost))
			c->stats.malformed++;
		else
			c->stats.lost += lost;
		return 0;
	case PERF_RECORD_THROTTLE:
		c->stats.throttled++;
		return 0;
	default:
		return 0;
	}
}

int collector__set_main_base(struct collector *c, pid_t pid, uint64_t base)
{
	struct process *p = get_proc(c, (uint32_t)pid);

	if (!p)
		return -ENOMEM;
	add_base(p, 0, base, NULL);
	p->next_exec_base = base;	/* its exec record is still to come */
	return 0;
}

/* ---- attach --------------------------------------------------------- */

struct seed_ctx {
	struct collector *c;
	struct process *p;
};

static int seed_map(void *arg, const struct procfs_map *m)
{
	struct seed_ctx *s = arg;

	return add_mapping(s->c, s->p, m->start, m->end, m->pgoff, m->dev,
			   m->ino, m->prot, m->path) == -ENOMEM ? -ENOMEM : 0;
}

/* The executable of a process not seen exec'ing: the module mapped
 * from the file /proc/PID/exe names. */
static void find_exe(struct process *p, pid_t pid)
{
	char path[4096];

	if (procfs__exe(pid, path, sizeof(path)))
		return;
	for (size_t i = 0; i < p->nmaps; i++)
		if (p->maps[i].mod && !strcmp(module__path(p->maps[i].mod), path)) {
			set_exe(p, p->maps[i].mod);
			return;
		}
}

int collector__add_running(struct collector *c, pid_t pid)
{
	struct process *p = get_proc(c, (uint32_t)pid);
	struct seed_ctx ctx = { c, p };
	pid_t *tids;
	size_t n;
	int ret;

	if (!p)
		return -ENOMEM;
	p->ignored = false;	/* watched now: open its modules */
	ret = procfs__maps(pid, seed_map, &ctx);
	if (ret)
		return ret;
	find_exe(p, pid);
	p->base_tried = true;
	read_main_base(p, 0);
	if (!procfs__tasks(pid, &tids, &n)) {
		for (size_t i = 0; i < n; i++) {
			char comm[16];

			if (!procfs__comm(pid, tids[i], comm, sizeof(comm)))
				note_thread(c, (uint32_t)pid, (uint32_t)tids[i],
					    comm);
		}
		free(tids);
	}
	return 0;
}
