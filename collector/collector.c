/*
 * collector.c - records into address spaces (space.c), stack bases
 * (stackbase.c), CIDs and, when training, paths (unwind.c).
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
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "binary/module.h"
#include "common/clock.h"
#include "common/grow.h"
#include "collector/collector_int.h"
#include "collector/kallsyms.h"
#include "collector/procfs.h"
#include "collector/record.h"
#include "common/sys.h"

struct collector *collector__new(struct module_cache *modules,
				 struct aggregate *agg)
{
	struct collector *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->modules = modules;
	c->agg = agg;
	if (space__table_init(&c->procs, sizeof(struct process)) ||
	    space__table_init(&c->threads, sizeof(struct thread)) ||
	    space__table_init(&c->waits, sizeof(struct offcpu_wait))) {
		collector__delete(c);
		return NULL;
	}
	return c;
}

void collector__delete(struct collector *c)
{
	if (!c)
		return;
	jitload__stop(c);
	for (size_t i = 0; c->procs.slots && i < c->procs.nslots; i++) {
		struct process *p = (struct process *)c->procs.slots + i;

		if (p->pid) {
			space__release_maps(p);
			space__set_exe(p, NULL);
		}
		free(p->blocks);
	}
	free(c->procs.slots);
	free(c->threads.slots);
	free(c->waits.slots);
	free(c->switch_ids);
	unwind__exit(c);
	kallsyms__delete(c->ksyms);
	free(c);
}

void collector__set_kernel_chains(struct collector *c, const char *kallsyms)
{
	c->kchains = true;
	kallsyms__delete(c->ksyms);
	c->ksyms = kallsyms__load(kallsyms);
}

bool collector__kernel_unnamed(const struct collector *c)
{
	return c->kchains && !c->ksyms;
}

/* The names of @s's kernel call chain, outermost first, ';' between,
 * each with perf's "_[k]" (stackcollapse-perf.pl's mark of a kernel
 * frame), into @buf: "" when none can be named. */
static const char *kernel_chain(const struct collector *c,
				const struct perf_sample *s, char *buf,
				size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (uint64_t i = s->nchain; i-- > 0;) {
		uint64_t ip;
		const char *name;
		int w;

		memcpy(&ip, s->chain + i, sizeof(ip));
		if (ip >= (uint64_t)PERF_CONTEXT_MAX)	/* a context marker */
			continue;
		name = kallsyms__find(c->ksyms, ip);
		w = snprintf(buf + n, len - n, "%s%s_[k]", n ? ";" : "",
			     name ? name : "[unknown]");
		if (w < 0 || (size_t)w >= len - n)
			break;		/* the outermost frames kept */
		n += (size_t)w;
	}
	return buf;
}

const struct collector_stats *collector__stats(const struct collector *c)
{
	return &c->stats;
}

/* ---- records -------------------------------------------------------- */

/* Remembers a thread's name for the database. */
static void note_thread(struct collector *c, uint32_t pid, uint32_t tid,
			const char *comm)
{
	struct thread *t = space__table_get(&c->threads, tid);

	if (!t)
		return;
	snprintf(t->comm, sizeof(t->comm), "%s", comm);
	t->pid = pid;
	if (!c->names_held)
		aggregate__add_thread(c->agg, pid, tid, t->comm);
	else if (!t->held)
		t->held = true, c->nheld++;
}

void collector__hold_names(struct collector *c, bool hold)
{
	c->names_held = hold;
	for (size_t i = 0; !hold && c->nheld && i < c->threads.nslots; i++) {
		struct thread *t = (struct thread *)c->threads.slots + i;

		if (t->tid && t->held) {
			aggregate__add_thread(c->agg, t->pid, t->tid, t->comm);
			t->held = false;
			c->nheld--;
		}
	}
}

/* The time of an exec of @pid after @since that the filter accepted and
 * whose stack base is still to be read (collector__exec_seen() keeps no
 * verdict on a process it has not met: it may be gone), or 0. */
static uint64_t accepted_exec(const struct collector *c, uint32_t pid,
			      uint64_t since)
{
	for (size_t i = 0; i < c->nearly; i++)
		if (c->early[i].pid == pid && c->early[i].time > since)
			return c->early[i].time;
	return 0;
}

void collector__peek(struct collector *c, const struct perf_event_header *h)
{
	struct process *p;

	if (h->type == PERF_RECORD_COMM) {
		struct rec_comm r;

		if (record__parse_comm(h, &r) || !r.exec ||
		    !(p = space__get_proc(c, r.pid)))
			return;
		space__set_exec_unread(c, p, r.sid.time ? r.sid.time : 1);
	} else if (h->type == PERF_RECORD_FORK) {
		struct rec_task r;
		struct process *parent;

		if (record__parse_task(h, &r) || r.pid == r.ppid ||
		    !(p = space__get_proc(c, r.pid)))
			return;
		/* A child's stack is its parent's copy: the parent's base
		 * (copied when the record is processed) holds.  /proc would
		 * show the child as it is now, perhaps after an exec. */
		parent = space__find_proc(c, r.ppid);	/* after get_proc: it may move */
		if (p->verdict_time <= r.time) {
			uint64_t t = accepted_exec(c, r.pid, r.time);

			p->exec_refused = !t && parent && parent->exec_refused;
			p->verdict_time = t;
		}
		if (!p->exec_refused && (!parent || !parent->nbases))
			stack__read_main_base(p, r.time);
	} else if (h->type == PERF_RECORD_SAMPLE) {
		uint32_t pid, tid;
		uint64_t time;
		char comm[16];

		if (record__sample_task(h, &pid, &tid))
			return;
		p = c->filter || c->nexec_unread ? space__find_proc(c, pid) :
		    NULL;
		/* the filter refuses it: no /proc read for a sample not
		 * kept (the daemon sees every process of the machine) */
		if (c->filter && p && p->exec_refused)
			return;
		if (c->nexec_unread && p &&
		    p->exec_unread && !record__time(h, &time) &&
		    time > p->exec_unread) {
			stack__read_main_base(p, p->exec_unread);
			space__set_exec_unread(c, p, 0);
		}
		if (space__table_find(&c->threads, tid))
			return;
		if (!procfs__comm((pid_t)pid, (pid_t)tid, comm, sizeof(comm)))
			note_thread(c, pid, tid, comm);
		p = space__get_proc(c, pid);
		if (p && !p->nbases && !p->base_tried) {
			p->base_tried = true;
			stack__read_main_base(p, 0);
		}
	}
}

/* How often a sample in JIT code without a symbol looks at the perf map
 * again: the compiler appends as it goes. */
#define JIT_RECHECK_NS 100000000

/* The function of JIT code at @ip in @p's perf map, read or read again
 * when @ip has none (at most every JIT_RECHECK_NS of sample time).
 * 0, or -ENOENT. */
static int jit_function(struct collector *c, struct process *p, uint64_t ip,
			uint64_t time, struct module_func *f)
{
	struct perfmap_file pf;
	struct module *m;
	uint32_t uid;

	jitload__collect(c);
	if (p->jit && !module__function(p->jit, ip, f))
		return 0;
	if (p->ignored || (p->jit_checked && time >= p->jit_checked &&
			   time - p->jit_checked < JIT_RECHECK_NS))
		return -ENOENT;
	p->jit_checked = time ? time : 1;
	if (procfs__uid((pid_t)p->pid, &uid) ||
	    module_cache__perfmap_open(c->modules, (int)p->pid, uid, p->jit,
				       &pf))
		return -ENOENT;
	if (pf.size > JIT_SYNC_BYTES) {	/* jitload.c says why */
		jitload__submit(c, p->pid, &pf);
		return -ENOENT;
	}
	m = perfmap__read(&pf);
	if (m && (m = module_cache__adopt(c->modules, m))) {
		module__release(p->jit);
		p->jit = m;
	}
	return p->jit ? module__function(p->jit, ip, f) : -ENOENT;
}

/*
 * A CID in JIT code: its function from the perf map, its height from the
 * SP, as no CFI describes the frame (so a function's samples spread over
 * the heights its pushes reach).  Not learned: no unwinding goes through
 * such code, so reports show its callers as unknown.
 */
static enum cid_failure jit_cid(struct collector *c, struct process *p,
				const struct perf_sample *s,
				struct cid_key *key, const char **name,
				const struct module **where, uint64_t *stack_top,
				uint64_t *pc)
{
	struct module_func f;
	uint64_t base;
	int ret;

	if (jit_function(c, p, s->uip, s->time, &f))
		return CID_ANON_CODE;
	*where = p->jit;
	ret = stack__base(p, s->sp, s->time, &base);
	if (ret)
		return (enum cid_failure)ret;
	if (base && s->sp >= base)
		return CID_SP_OUTSIDE_STACK;
	*key = (struct cid_key){ .mod = p->jit, .func = f.start,
		.height = base ? (int64_t)(base - s->sp) : ICPPD_HEIGHT_NONE,
		.pid = s->pid,
		.tid = s->tid, .prog = p->exe };
	*name = f.name;
	*stack_top = base;
	*pc = s->uip;		/* the map's addresses are the process's */
	return CID_NR_FAILURES;	/* success */
}

/* The CID of sample @s, its function's symbol, the top of its stack and
 * the link-time address of its pc; or why there is none (@where: the
 * module the pc lies in, or NULL). */
static enum cid_failure form_cid(struct collector *c,
				 const struct perf_sample *s,
				 struct cid_key *key, const char **name,
				 const struct module **where, uint64_t *stack_top,
				 uint64_t *pc)
{
	struct process *p = space__find_proc(c, s->pid);
	struct module_func f;
	struct cfi_regs regs;
	uint64_t vaddr, cfa, base;
	struct mapping *m;
	int ret;

	*where = NULL;
	if (!s->has_regs)
		return CID_NO_USER_REGS;
	if (!p)
		p = space__get_proc(c, s->pid);
	if (!p || !(m = space__find_map(p, s->uip)))
		return CID_NO_MAPPING;
	if (m->kind == REGION_ANON)
		return jit_cid(c, p, s, key, name, where, stack_top, pc);
	if (m->kind != REGION_MODULE)
		return CID_ANON_CODE;
	*where = m->mod;
	if (module__error(m->mod))
		return module__error(m->mod) == -ESTALE ? CID_MODULE_CHANGED :
		       CID_MODULE_UNREADABLE;
	if (module__vaddr(m->mod, s->uip - m->start + m->pgoff, &vaddr) ||
	    module__function(m->mod, vaddr, &f))
		return CID_NO_CFI;
	ret = stack__base(p, s->sp, s->time, &base);
	if (ret)
		return (enum cid_failure)ret;
	/* on a stack with no fixed base the function alone is the CID */
	regs = (struct cfi_regs){ .sp = s->sp, .bp = s->bp, .ip = s->uip };
	ret = base ? module__cfa(m->mod, vaddr, &regs, &cfa) : 0;
	if (ret == -ENOENT)
		return CID_NO_CFI;
	if (ret)
		return CID_CFA_UNSUPPORTED;
	if (base && (cfa >= base || cfa <= s->sp))
		return CID_SP_OUTSIDE_STACK;
	*key = (struct cid_key){ .mod = m->mod, .func = f.start,
		.height = base ? (int64_t)(base - cfa) : ICPPD_HEIGHT_NONE,
		.pid = s->pid, .tid = s->tid, .prog = p->exe };
	*name = f.name;
	*stack_top = base;
	*pc = vaddr;
	return CID_NR_FAILURES;	/* success */
}

void collector__set_learning(struct collector *c, collector_known_fn known,
			     void *arg, bool counted)
{
	c->known = known;
	c->known_arg = arg;
	c->learner_counted = known && counted;
}

void collector__set_leaf_copies(struct collector *c, uint32_t bytes,
				uint32_t known_every, collector_leaf_fn judge)
{
	c->leaf_bytes = bytes;
	c->leaf_known_every = known_every;
	c->leaf_known_seen = 0;
	c->leaf_judge = judge;
}

/* What the paths say of leaf copy @k's CID: one look. */
static enum collector_leaf leaf_judge(struct collector *c,
				      const struct cid_key *k)
{
	if (c->leaf_judge)
		return c->leaf_judge(c->known_arg, k);
	return c->known(c->known_arg, k) ? COLLECTOR_LEAF_KNOWN :
					   COLLECTOR_LEAF_UNKNOWN;
}

/* Whether a leaf copy whose CID the paths explain (@v) goes without its
 * unwind: not where one sample is all its path has, nor the one in
 * leaf_known_every that is unwound all the same. */
static bool leaf_left(struct collector *c, enum collector_leaf v)
{
	if (c->leaf_known_every < 2)
		return false;
	if (v == COLLECTOR_LEAF_LONE) {
		c->stats.leaf_unsettled++;
		return false;
	}
	if (++c->leaf_known_seen < c->leaf_known_every) {
		c->stats.leaf_samples++;
		c->stats.leaf_known++;
		return true;
	}
	c->leaf_known_seen = 0;
	return false;
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
	struct process *p = space__find_proc(c, pid);
	struct thread *t = space__table_find(&c->threads, pid);

	return c->filter(c->filter_arg, pid, p && p->exe ?
			 module__path(p->exe) : NULL, t ? t->comm : "");
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void collector__drop_waits(struct collector *c)
{
	for (size_t i = 0; c->waits.slots && i < c->waits.nslots; i++)
		c->stats.offcpu_unmatched +=
			((struct offcpu_wait *)c->waits.slots)[i].pending;
	if (c->waits.slots)
		memset(c->waits.slots, 0, c->waits.nslots * c->waits.size);
	c->waits.n = 0;
}

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(const void *const *)a,
		  y = (uintptr_t)*(const void *const *)b;

	return x < y ? -1 : x > y;
}

static bool among(const struct module *const *sorted, size_t n,
		  const struct module *m)
{
	return m && bsearch(&m, sorted, n, sizeof(*sorted), cmp_ptr);
}

void collector__forget_waits(struct collector *c,
			     const struct module *const *mods, size_t n)
{
	const struct module **sorted;

	if (!c->waits.n || !n)
		return;
	sorted = malloc(n * sizeof(*sorted));
	if (!sorted) {		/* none kept is safe */
		collector__drop_waits(c);
		return;
	}
	memcpy(sorted, mods, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_ptr);
	for (size_t i = 0; i < c->waits.nslots; i++) {
		struct offcpu_wait *w = (struct offcpu_wait *)c->waits.slots + i;

		if (w->pending && (among(sorted, n, w->key.mod) ||
				   among(sorted, n, w->key.prog))) {
			w->pending = false;
			c->stats.offcpu_unmatched++;
		}
	}
	free(sorted);
}

int collector__set_switch_ids(struct collector *c, const uint64_t *ids,
			      size_t n)
{
	uint64_t *v = malloc((n ? n : 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	memcpy(v, ids, n * sizeof(*v));
	qsort(v, n, sizeof(*v), cmp_u64);
	free(c->switch_ids);
	c->switch_ids = v;
	c->nswitch_ids = n;
	return 0;
}

/* A switch-out sample @s (its user registers: where the thread entered
 * the kernel): its CID waits for the thread to switch back in.  Its
 * stack base into *@base (0: no CID), for a learner's copy to unwind. */
static int switch_out(struct collector *c, const struct perf_sample *s,
		      uint64_t *base)
{
	struct cid_key key;
	const char *name = NULL;
	const struct module *where;
	uint64_t pc = 0;
	struct offcpu_wait *w;

	/* a thread's last switch out may come after its exit record:
	 * such waits never end, and a run of many short threads must not
	 * keep them all */
	if (c->waits.n >= OFFCPU_MAX_WAITS)
		collector__drop_waits(c);
	if (!(w = space__table_get(&c->waits, s->tid)))
		return s->tid ? -ENOMEM : 0;
	if (w->pending)		/* out twice: the first never came back */
		c->stats.offcpu_unmatched++;
	w->pending = false;
	if (form_cid(c, s, &key, &name, &where, base, &pc) !=
	    CID_NR_FAILURES) {
		*base = 0;
		c->stats.offcpu_unresolved++;
		return 0;
	}
	c->stats.offcpu_switches++;
	/* what the switches' copies are for (the recorder turns them off
	 * when the map explains the switches) */
	if (c->known && !c->known(c->known_arg, &key))
		c->stats.offcpu_unknown++;
	*w = (struct offcpu_wait){ s->tid, true, false, s->time, key, name };
	return 0;
}

/* PERF_RECORD_SWITCH: a switch-out record marks its wait preempted; a
 * switch-in ends the wait, its time counted. */
static int process_switch(struct collector *c, const struct perf_event_header *h)
{
	struct rec_switch r;
	struct offcpu_wait *w;

	if (record__parse_switch(h, &r)) {
		c->stats.malformed++;
		return 0;
	}
	w = space__table_find(&c->waits, r.sid.tid);
	if (!w || !w->pending)
		return 0;	/* a thread's first switch-in, or one not
				 * sampled out (filtered, no CID) */
	if (r.out) {
		w->preempted = r.preempted;
		return 0;
	}
	w->pending = false;
	if (r.sid.time < w->time) {	/* out of order: not a wait */
		c->stats.offcpu_unmatched++;
		return 0;
	}
	return aggregate__add_offcpu(c->agg, &w->key, w->name,
				     r.sid.time - w->time, w->preempted);
}

static int process_sample(struct collector *c, const struct perf_event_header *h)
{
	struct perf_sample s;
	struct cid_key key;
	const char *name = NULL;
	const struct module *where;
	enum cid_failure why;
	uint64_t base = 0, pc = 0;
	bool learner, leaf;

	if (c->kchains ? record__parse_sample_chain(h, &s) :
	    record__parse_sample(h, &s)) {
		c->stats.malformed++;
		return 0;
	}
	if (c->filter && !accepted(c, s.pid)) {
		c->stats.filtered++;
		return 0;
	}
	if (c->nswitch_ids && bsearch(&s.id, c->switch_ids, c->nswitch_ids,
				      sizeof(*c->switch_ids), cmp_u64)) {
		/* the learner's copy at a switch: a switch, and a path to
		 * learn */
		int ret = switch_out(c, &s, &base);

		return ret || !base || !s.has_stack || !c->path_fn ? ret :
		       unwind__sample(c, &s, base, NULL, false);
	}
	leaf = c->known && s.has_stack && c->leaf_bytes &&
	       s.stack_cap <= c->leaf_bytes;
	learner = c->known && s.has_stack && !leaf;
	if (learner)
		c->stats.learn_samples++;
	if (learner && !c->learner_counted) {	/* a path only */
		why = form_cid(c, &s, &key, &name, &where, &base, &pc);
		return why == CID_NR_FAILURES ?
		       unwind__sample(c, &s, base, NULL, false) : 0;
	}
	c->stats.samples++;
	why = form_cid(c, &s, &key, &name, &where, &base, &pc);
	if (why == CID_NR_FAILURES) {
		int ret;

		c->stats.cids++;
		if (c->known && !leaf && !c->known(c->known_arg, &key))
			c->stats.learn_unknown++;
		/* a sample in the kernel (record --kernel): the CID is the
		 * user code's that entered it, from its user registers */
		bool in_kernel = (h->misc & PERF_RECORD_MISC_CPUMODE_MASK) ==
				 PERF_RECORD_MISC_KERNEL;

		ret = aggregate__add_cid(c->agg, &key, name, in_kernel);
		if (!ret && in_kernel && c->ksyms) {
			char chain[2048];

			if (*kernel_chain(c, &s, chain, sizeof(chain)))
				ret = aggregate__add_kchain(c->agg, &key, name,
							    chain);
		}
		if (!ret)
			ret = aggregate__add_pc(c->agg, &key, name, pc);
		if (!ret && c->path_fn && (!c->known || learner || leaf)) {
			/* looked up once: the skip and count_leaf() */
			enum collector_leaf v = leaf ? leaf_judge(c, &key) :
					       COLLECTOR_LEAF_UNKNOWN;
			bool known = v != COLLECTOR_LEAF_UNKNOWN;

			c->stats.leaf_unknown += leaf && !known;
			if (!(known && leaf_left(c, v)))
				ret = unwind__sample(c, &s, base,
						     leaf ? &key : NULL, known);
		}
		return ret;
	}
	c->stats.unresolved++;
	c->stats.by_reason[why]++;
	return aggregate__add_unresolved(c->agg, where, s.pid, s.tid, why);
}

static int add_mmap2(struct collector *c, struct process *p,
		     const struct rec_mmap2 *r)
{
	return space__add_mapping(c, p, r->start, r->start + r->len, r->pgoff,
			makedev((unsigned)(r->dev >> 32), (unsigned)r->dev),
			r->ino, r->prot, r->filename);
}

static void reread_maps(struct collector *c, struct process *p);

static int process_mmap2(struct collector *c, const struct perf_event_header *h)
{
	struct rec_mmap2 r;
	struct process *p;
	bool fresh;
	int ret;

	if (record__parse_mmap2(h, &r)) {
		c->stats.malformed++;
		return 0;
	}
	if (!r.pid) {		/* no process of ours: crafted */
		c->stats.malformed++;
		return 0;
	}
	fresh = !space__find_proc(c, r.pid);
	p = space__get_proc(c, r.pid);
	if (!p)
		return -ENOMEM;
	if (fresh)	/* running before us, never seen to exec */
		p->ignored = space__refused(c, r.pid, NULL);
	ret = add_mmap2(c, p, &r);
	if (ret == -E2BIG) {
		/* a full table holds mappings long unmapped (perf reports
		 * no unmaps): the live ones are in /proc */
		c->stats.maps_reread++;
		reread_maps(c, p);
		ret = add_mmap2(c, p, &r);
	}
	return ret == -ENOMEM ? -ENOMEM : 0;
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
		struct thread *t = space__table_find(&c->threads, r.tid);
		struct offcpu_wait *w = space__table_find(&c->waits, r.tid);

		if (t)
			space__table_delete(&c->threads, t);
		if (w) {
			c->stats.offcpu_open_at_exit += w->pending;
			space__table_delete(&c->waits, w);
		}
		if (r.pid == r.tid && (p = space__find_proc(c, r.pid)))
			space__drop_proc(c, p);
		return 0;
	}
	{	/* a new task is named like its parent until it renames;
		 * the wait a dead task of its tid left (its last switch
		 * out comes after its exit record) is not its */
		struct thread *parent_thread = space__table_find(&c->threads, r.ptid);
		struct offcpu_wait *w = space__table_find(&c->waits, r.tid);

		if (w)
			space__table_delete(&c->waits, w);

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
	p = space__get_proc(c, r.pid);
	parent = space__find_proc(c, r.ppid);	/* after get_proc: it may move */
	if (!p)
		return -ENOMEM;
	if (parent) {
		if (space__copy_maps(p, parent))
			return -ENOMEM;
		space__set_exe(p, parent->exe);
		p->ignored = parent->ignored;
		for (int i = 0; i < parent->nbases; i++)
			if (parent->bases[i].since <= r.time)
				stack__add_base(p, parent->bases[i].since,
					(struct procfs_stack){
						parent->bases[i].base,
						parent->bases[i].heap }, NULL);
		/* the parent's new base, still to be read, is the child's
		 * too (unless the child's own exec came since) */
		if (parent->exec_unread && !p->exec_unread)
			space__set_exec_unread(c, p, parent->exec_unread);
	}
	return 0;
}

/* 0 once done (read, or given up), -EAGAIN to retry.  The base is the
 * exec's only while the process runs the name the exec gave it: a
 * later exec (sh -c "exec prog") would give the next image's. */
static int try_early(struct collector *c, struct early *e)
{
	struct procfs_stack st;
	struct process *p;
	char comm[16];
	int ret = procfs__exec_stack_base((pid_t)e->pid, &st, comm);

	if (ret == -EAGAIN && clock__mono_ns() - e->seen < EARLY_WAIT_NS)
		return -EAGAIN;
	if (!ret && !strncmp(comm, e->comm, sizeof(comm) - 1) &&
	    (p = space__get_proc(c, e->pid))) {
		c->stats.execs_read++;
		if (e->time > p->verdict_time) {	/* watched */
			p->exec_refused = false;
			p->verdict_time = e->time;
		}
		stack__add_base(p, e->time, st, e->comm);
		/* the ring's record of this exec, processed first, said
		 * "unknown from here": the samples still to come can use it */
		for (int i = 0; i < p->nbases; i++)
			if (!p->bases[i].base && p->bases[i].since > e->time &&
			    p->bases[i].since - e->time <= EARLY_NEAR_NS) {
				p->bases[i].base = st.base;
				p->bases[i].heap = st.heap;
			}
	}
	return 0;
}

/*
 * Whether the filter accepts a process that exec'd @comm: the others'
 * stack bases are not read (two reads of /proc/PID/stat each, and
 * more while an exec is in progress, for every exec of the machine
 * where the daemon samples every CPU: watching cc1 through ten makes at
 * 99 Hz, 15-19 % of the daemon's profile, 7.5 % so, 60 of 225 execs
 * read).  The name alone may not say (an exe rule, and a program run
 * through a link of another name): then the executable, from /proc;
 * where that cannot be read, the stack base is read as before.
 */
static bool exec_accepted(struct collector *c, uint32_t pid, const char *comm)
{
	char exe[PATH_MAX];

	return c->filter(c->filter_arg, pid, NULL, comm) ||
	       procfs__exe((pid_t)pid, exe, sizeof(exe)) ||
	       c->filter(c->filter_arg, pid, exe, comm);
}

/* Queued, not read at once: of several execs of one process reported
 * together only the last can still be read. */
bool collector__exec_seen(struct collector *c, uint32_t pid, uint64_t time,
			  const char *comm)
{
	struct early e = { .pid = pid, .time = time,
			   .seen = clock__mono_ns() };
	size_t i;

	c->stats.execs_seen++;
	/* the notifier's rings are read one CPU's after another: a process
	 * that exec'd on two CPUs (a launcher's exec, then its program's,
	 * read together where the exec filter woke the loop for the
	 * second) may have its later exec read first, and that one's
	 * stack base is the one to read */
	for (i = 0; i < c->nearly && c->early[i].pid != pid; i++)
		;
	if (i < c->nearly && c->early[i].time > time)
		return false;
	if (c->filter) {
		bool accepted = exec_accepted(c, pid, comm);
		/* a refusal read the process's executable: it lived, and its
		 * exit record, to come, removes what is made here; an
		 * acceptance may be of one gone already (no link to read),
		 * whose exit record may have been processed: a fork record
		 * read later finds it in the queue (accepted_exec()) */
		struct process *p = accepted ? space__find_proc(c, pid) :
				    space__get_proc(c, pid);

		if (p && time >= p->verdict_time) {
			p->exec_refused = !accepted;
			p->verdict_time = time;
		}
		if (!accepted)
			return false;
	}
	snprintf(e.comm, sizeof(e.comm), "%s", comm);
	if (i < c->nearly)
		c->early[i] = e;	/* a later exec of the same process */
	else if (c->nearly < MAX_EARLY)
		c->early[c->nearly++] = e;
	return true;
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
	p = space__find_proc(c, r.pid);
	/* an exec into what the filter refuses names nothing: its samples
	 * are not kept (a later rename's record still names it) */
	if (!(r.exec && p && p->exec_refused))
		note_thread(c, r.pid, r.tid, r.comm);
	if (!r.exec || !(p = space__get_proc(c, r.pid)))
		return 0;
	space__release_maps(p);	/* a new image: MMAP2 records follow */
	space__set_exe(p, NULL);
	p->exe_pending = true;
	/* The old image's stack base no longer holds.  When the peek could
	 * not read the new one (the process was already gone), record that
	 * it is unknown, rather than let samples fall back on the old one. */
	if (!stack__has_base_since(p, r.sid.time, r.comm))
		stack__add_base(p, r.sid.time, p->next_exec, NULL);
	p->next_exec = (struct procfs_stack){ 0 };
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
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		return c->nswitch_ids ? process_switch(c, h) : 0;
	default:
		return 0;
	}
}

int collector__set_main_base(struct collector *c, pid_t pid,
			     const struct procfs_stack *st)
{
	struct process *p = space__get_proc(c, (uint32_t)pid);

	if (!p)
		return -ENOMEM;
	stack__add_base(p, 0, *st, NULL);
	p->next_exec = *st;	/* its exec record is still to come */
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

	return space__add_mapping(s->c, s->p, m->start, m->end, m->pgoff, m->dev,
			   m->ino, m->prot, m->path) == -ENOMEM ? -ENOMEM : 0;
}

/* @p's mappings as /proc lists them now, in place of its table; none
 * when that cannot be read (the process is gone). */
static void reread_maps(struct collector *c, struct process *p)
{
	struct seed_ctx ctx = { c, p };

	space__release_maps(p);
	if (procfs__maps((pid_t)p->pid, seed_map, &ctx))
		space__release_maps(p);
}

/* The executable of a process not seen exec'ing: the module mapped
 * from the file /proc/PID/exe names. */
static void find_exe(struct process *p, pid_t pid)
{
	char path[4096];
	struct mapping *m;

	if (!procfs__exe(pid, path, sizeof(path)) &&
	    (m = space__find_module(p, path)))
		space__set_exe(p, m->mod);
}

int collector__add_running(struct collector *c, pid_t pid)
{
	struct process *p = space__get_proc(c, (uint32_t)pid);
	struct seed_ctx ctx = { c, p };
	pid_t *tids;
	size_t n;
	int ret;

	if (!p)
		return -ENOMEM;
	p->ignored = p->exec_refused = false;	/* watched now: open its
						 * modules */
	ret = procfs__maps(pid, seed_map, &ctx);
	if (ret)
		return ret;
	find_exe(p, pid);
	p->base_tried = true;
	stack__read_main_base(p, 0);
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
