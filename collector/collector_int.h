/*
 * collector_int.h - what the files of the collector share: the process,
 * thread and mapping model, and the functions each file offers the
 * others.  Not part of the collector's contract (collector.h).
 *
 *   space.c      the tables of processes and threads, address spaces
 *   stackbase.c  main-thread stack bases (by time, across execs)
 *   unwind.c     the CFI unwinder of training and validation
 *   collector.c  records, CID formation, attach
 */
#ifndef ICPPD_COLLECTOR_COLLECTOR_INT_H
#define ICPPD_COLLECTOR_COLLECTOR_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collector/collector.h"
#include "collector/record.h"

/* A main-thread SP further than this below startstack is not on it. */
#define MAIN_STACK_MAX (1ULL << 30)
#define MAX_BASES 4
/* Early exec reads (collector__exec_seen): how many wait at once, how
 * long one is retried (an exec installs its stack a little after it
 * reports its name; the reader retries every millisecond, and more
 * often while it works through a full ring), and how far apart the
 * notifier's and the ring's records of one exec may be (with the same
 * name: see stack__has_base_since). */
#define MAX_EARLY 256
#define EARLY_WAIT_NS 64000000
#define EARLY_NEAR_NS 500000

/* REGION_HEAP: the brk heap, which moves its end: a stack there (a
 * coroutine's, a signal stack) has no fixed base. */
enum map_kind { REGION_MODULE, REGION_ANON, REGION_MAIN_STACK, REGION_HEAP };

struct mapping {
	uint64_t start, end, pgoff;
	struct module *mod;	/* REGION_MODULE only */
	enum map_kind kind;
};

struct stack_base {
	uint64_t since;		/* record time from which it holds */
	uint64_t base;		/* 0: unknown from then on (an exec whose
				 * new base could not be read) */
	uint64_t heap;		/* start_brk, or 0: unknown */
	bool early;		/* read for the notifier's record of an exec
				 * (collector__exec_seen) ... */
	uint32_t comm_hash;	/* ... that named the image this */
};

struct map_block;

struct process {
	uint32_t pid;		/* first: the table key; 0 = empty slot */
	bool base_tried;	/* a /proc read was attempted for t = 0 */
	/* Its mappings, sorted by start and disjoint, in blocks of at most
	 * MAP_BLOCK (space.c says why), themselves sorted; none empty. */
	struct map_block **blocks;
	size_t nblocks, blocks_cap;
	size_t nmaps;		/* in all blocks, at most SPACE_MAX_MAPS */
	/* Changes with every change of a code mapping (module), from a
	 * clock all processes share: a walk remembered under one value
	 * met the same code (unwind.c). */
	uint64_t maps_gen;
	struct stack_base bases[MAX_BASES];
	int nbases;
	struct procfs_stack next_exec;	/* known before its exec record, or
					 * zero */
	/* The time of an exec whose new base is still to be read: read at
	 * the first sample after it (0: none).  Not at the exec record:
	 * execve() sets mm->start_stack twice (setup_arg_pages, then lower
	 * once argv, envp and auxv are pushed), and a read between the two
	 * gives a base a few KB too high.  A sample after the exec shows
	 * the process back in user space, its base final. */
	uint64_t exec_unread;
	struct module *exe;	/* the executable, NULL if unknown; held */
	struct module *jit;	/* its /tmp/perf-PID.map, NULL if none;
				 * held */
	uint64_t jit_checked;	/* sample time the map was last looked at */
	bool exe_pending;	/* exec seen: the next file mapped is it */
	bool uid_known;		/* @uid read (space.c: process_uid()) */
	uint32_t uid;		/* its owner, MODULE_UID_UNKNOWN if gone */
	/* The filter refused it: its code is not opened as modules (a
	 * daemon must not open every library of every process).  Decided
	 * at its exec (by path) or when first seen; cleared by
	 * collector__add_running(). */
	bool ignored;
	/* The filter refused the image of its last exec the notifier
	 * reported (collector__exec_seen()), or its parent's when it was
	 * forked: the peek reads nothing of it from /proc (no thread name,
	 * no stack base), as no sample of it is kept.  Known ahead of
	 * @ignored, which waits for the records to be processed.  The
	 * notifier often reports an exec before the ring's fork record of
	 * the process is read: @verdict_time, the time of the exec that
	 * decided (0: inherited), keeps a fork read later from undoing it,
	 * as the queue of bases to read does for an accepted exec whose
	 * process was not met yet (collector.c's accepted_exec()). */
	bool exec_refused;
	uint64_t verdict_time;
};

struct thread {
	uint32_t tid;		/* first: the table key; 0 = empty slot */
	uint32_t pid;
	bool held;		/* named while names were held */
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

/* A thread switched out of a CID (record --off-cpu) and not yet back:
 * the CID points into its modules, so a recorder that evicts modules
 * (the daemon) drops the waits in those first (collector__forget_waits). */
#define OFFCPU_MAX_WAITS 65536	/* threads switched out at once, kept */
struct offcpu_wait {
	uint32_t tid;		/* first: the table key */
	bool pending;		/* out, not yet in */
	bool preempted;		/* the kernel said runnable */
	uint64_t time;		/* of the switch-out */
	struct cid_key key;
	const char *name;	/* the function's; owned by its module */
};

struct cfi_read;
struct walk;
struct walk_state;

struct collector {
	struct module_cache *modules;
	struct aggregate *agg;
	struct collector_stats stats;
	struct table procs;	/* struct process by pid */
	struct table threads;	/* struct thread by tid: names known */
	struct table waits;	/* struct offcpu_wait by tid */
	uint64_t *switch_ids;	/* the switch events' (sorted) */
	size_t nswitch_ids;
	collector_path_fn path_fn;	/* NULL: no unwinding */
	void *path_arg;
	bool kchains;			/* samples carry a callchain */
	struct kallsyms *ksyms;		/* their names; NULL: none */
	collector_known_fn known;	/* NULL: not learning */
	void *known_arg;
	bool learner_counted;	/* its samples are samples too */
	uint32_t leaf_bytes;	/* the main event's copies (0: none) */
	/* a known CID's copy is unwound one time in leaf_known_every,
	 * every time where leaf_judge (NULL: known alone) finds one
	 * sample all its path has; leaf_known_seen counts those copies */
	uint32_t leaf_known_every, leaf_known_seen;
	collector_leaf_fn leaf_judge;
	collector_filter_fn filter;	/* NULL: every process */
	void *filter_arg;
	struct path_frame *frames;	/* ICPPD_MAX_FRAMES, when unwinding */
	struct walk *walks;		/* WALK_SLOTS, when unwinding */
	struct walk_state *states;	/* ICPPD_MAX_FRAMES: this walk's */
	struct cfi_read *reads;		/* WALK_MAX_READS: this walk's */
	struct path_frame *path;	/* ICPPD_MAX_FRAMES: its path, outermost
					 * first */
	size_t nexec_unread;	/* processes with exec_unread set */
	struct early {
		uint32_t pid;
		uint64_t time;
		int64_t seen;	/* clock__mono_ns() when reported */
		char comm[16];
	} early[MAX_EARLY];	/* execs whose base is still to be read */
	size_t nearly;
	bool names_held;	/* collector__hold_names() */
	size_t nheld;		/* threads held */
	struct jit_loader *jit;	/* NULL until a large perf map is read */
};

/* ---- jitload.c ---- */
/* Perf maps larger than this are parsed off the sample loop. */
#define JIT_SYNC_BYTES ((size_t)256 << 10)
struct perfmap_file;
/* Hands perf map @f of process @pid to the loader thread (started on
 * first use), which owns the file from then on: 0, or -EBUSY while it
 * reads another (@f is then closed: ask again later), or -ENOMEM. */
int jitload__submit(struct collector *c, uint32_t pid, struct perfmap_file *f);
/* Gives a map the thread has read to its process (p->jit). */
void jitload__collect(struct collector *c);
/* Stops the thread and frees what it holds (collector__delete). */
void jitload__stop(struct collector *c);

/* ---- space.c ---- */
struct process *space__find_proc(struct collector *c, uint32_t pid);
struct process *space__get_proc(struct collector *c, uint32_t pid);
void *space__table_find(const struct table *t, uint32_t key);
/* The element for @key, zeroed but for its key when new; NULL for key
 * 0, which marks empty slots (a crafted record's pid 0 once took a slot
 * that looked empty: its maps leaked, and the count grew without end).
 * Pointers into the table are invalidated by the next insert. */
void *space__table_get(struct table *t, uint32_t key);
int space__table_init(struct table *t, size_t size);
/* Sets p->exec_unread, counting the processes that have one. */
void space__set_exec_unread(struct collector *c, struct process *p,
			    uint64_t time);
/* Module references: every REGION_MODULE mapping and every exe holds
 * its module, so the daemon can evict modules nobody maps any more
 * (module_cache__evict). */
void space__release_maps(struct process *p);
void space__set_exe(struct process *p, struct module *m);
void space__drop_proc(struct collector *c, struct process *p);
/* The mapping containing @addr, or NULL. */
struct mapping *space__find_map(const struct process *p, uint64_t addr);
/* The first module mapping of the file at @path, or NULL. */
struct mapping *space__find_module(const struct process *p, const char *path);
/* @dst's mappings become copies of @src's (a fork).  0 or -ENOMEM. */
int space__copy_maps(struct process *dst, const struct process *src);
/* The most mappings a process keeps: above the kernel's default
 * vm.max_map_count (65530), so every live mapping fits; perf reports no
 * unmaps, so a table this full holds stale ones, and the caller
 * rebuilds it from /proc (collector.c). */
#define SPACE_MAX_MAPS (1u << 17)
/* Adds a mapping as an MMAP2 record reports it.  0, -ENOMEM, or -E2BIG
 * when the process already has SPACE_MAX_MAPS (nothing added). */
int space__add_mapping(struct collector *c, struct process *p, uint64_t start,
		       uint64_t end, uint64_t pgoff, uint64_t dev, uint64_t ino,
		       unsigned prot, const char *path);
/* Whether the filter refuses process @pid running @exe (NULL: not known). */
bool space__refused(struct collector *c, uint32_t pid, const char *exe);
/* Removes element @e (backward shift). */
void space__table_delete(struct table *t, void *e);

/* ---- stackbase.c ---- */
/* @early: read for the notifier's record of an exec that named the
 * image @comm (NULL otherwise). */
void stack__add_base(struct process *p, uint64_t since,
		     struct procfs_stack st, const char *early);
/* A base read for the exec at @since that named the image @comm: the
 * peek's (at the ring's record time) or an early read's (at the
 * notifier's record of the same exec: tens of microseconds apart, up to
 * 90 under load here, and of the same name). */
bool stack__has_base_since(const struct process *p, uint64_t since,
			   const char *comm);
/* Reads the main thread's base from /proc, to hold from @since. */
void stack__read_main_base(struct process *p, uint64_t since);
/* The base of the stack that @sp is on at @time: 0 with *@base, or the
 * cid_failure that says why there is none.  *@base is 0 when that stack
 * has no fixed base (ICPPD_HEIGHT_NONE): a goroutine's (anonymous memory
 * in a Go program), or one on the brk heap (coroutines, signal stacks):
 * a "[heap]" mapping, or the one that holds the process's start_brk. */
int stack__base(struct process *p, uint64_t sp, uint64_t time,
		uint64_t *base);

/* ---- unwind.c ---- */
/* @base: the stack base form_cid() found for the sample; @leaf: its CID
 * when its copy is a leaf copy (counted in stats.leaf_* and, when
 * unexplained, stats.learn_unknown; not in stats.unwind), else NULL;
 * @leaf_known: whether the paths explain that CID. */
int unwind__sample(struct collector *c, const struct perf_sample *s,
		   uint64_t base, const struct cid_key *leaf, bool leaf_known);
/* Frees what collector__set_unwind() allocated. */
void unwind__exit(struct collector *c);

#endif
