/*
 * recorder.h - the one recorder: a perf_event session's records go to
 * the collector (CIDs, and, when unwinding, whole paths into a path
 * map), its counts to the aggregate, and the aggregate to a run of the
 * store.  record, train, validate (record/run.h) and the daemon all
 * sample through it; they differ in what they open, what they do
 * between steps and when they stop.
 *
 * One flush policy.  Counts are written once per flush interval and
 * whenever the aggregate fills.  A failed flush keeps them for the next
 * one (a busy or briefly full disk loses nothing); only when the
 * aggregate is full and the store still refuses them are they dropped,
 * so memory stays bounded and sampling goes on.  Dropped samples are
 * said once and counted (the run's recorder.dropped counter).
 *
 * One signal model.  SIGINT, SIGTERM, SIGHUP and SIGCHLD only write to
 * a self-pipe that recorder__step polls with the rings; the step says
 * what arrived, and the caller decides what it means (record stops on
 * SIGHUP, the daemon reloads).
 */
#ifndef ICPPD_RECORD_RECORDER_H
#define ICPPD_RECORD_RECORDER_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collector/collector.h"

struct cfi_cache;
struct pathmap;
struct run_info;
struct store;
struct store_counter;

struct recorder_opts {
	size_t max_keys;	/* distinct counts held between flushes */
	int64_t flush_ns;	/* flush interval */
	int poll_ms;		/* longest wait of one step */
	bool unwind;		/* sample stack copies into a path map */
	bool truth;		/* the paths are the run's own truth
				 * (validate), not training */
	/* Learning during measurement (record): a learning event at
	 * @learn_hz with @learn_stack bytes of stack, in bursts (see
	 * recorder.c); its paths go to the training map of each program's
	 * build.  Needs @unwind, not @truth.  0: off. */
	uint64_t learn_hz;
	uint32_t learn_stack;
	/* Larger copies for stacks deeper than @learn_stack: when a
	 * window's learning samples are cut short (LEARN_DEEPEN in
	 * recorder.c), the learner copies this much for the rest of the
	 * run.  0: never.  Its records go to rings of @deep_ring_pages
	 * data pages per CPU, mapped then (0: the CPUs' rings). */
	uint32_t deep_stack;
	size_t deep_ring_pages;
	/* Leaf copies: while the learner is an event of its own (not
	 * @learn_turns), the main event copies the innermost @leaf_stack
	 * bytes of the stack at every sample, less than @learn_stack
	 * (collector__set_leaf_copies).  0: none, CIDs only. */
	uint32_t leaf_stack;
	/* The bytes a second of @leaf_hz copies of @leaf_stack (0: no
	 * bound): a main event sampled by frequency above it copies
	 * less at every sample, to keep them (recorder__leaf_bytes();
	 * leaf.stack_bytes in the run's counters). */
	uint64_t leaf_hz;
	/* A leaf copy whose CID the paths explain is unwound one time in
	 * @leaf_known (0 or 1: every one; collector__set_leaf_copies). */
	uint32_t leaf_known;
	/* The learner is the main event itself with a stack copy, taking
	 * turns with it (session.h; @learn_hz then only sizes rings): its
	 * samples are the run's samples while it is on, and a path each
	 * unwinds whole is that sample's own, exact path (run_learned). */
	bool learn_turns;
	/* Off-CPU time too (event__switches(), collector__set_switch_ids):
	 * each switch-out's CID with the time until its thread ran again. */
	bool off_cpu;
	/* The events carry the kernel's call chain (record --kernel): each
	 * sample taken in the kernel is counted along it, named through
	 * /proc/kallsyms where it shows addresses (collector.h). */
	bool kernel_chains;
	/* Nodes the in-memory path map may hold (0: millions, for one
	 * run).  A long-lived recorder (the daemon) starts an empty map
	 * after a flush stored the full one, or when the module cache must
	 * evict: the map points into its modules.  Its samples are in the
	 * database, and the new map learns what is unexplained again. */
	size_t max_paths;
	/* Where the modules' CFI tables are looked up and kept (borrowed,
	 * must outlive the recorder; NULL: none): binary/cfi_cache.h. */
	struct cfi_cache *cfi_cache;
	/* Modules map their files (module_cache__set_map_files()): for
	 * a recorder of the user's own programs, not the daemon. */
	bool map_files;
	/* Keeps the samples of the processes it accepts (collector.h). */
	collector_filter_fn filter;
	void *filter_arg;
	/* More counters for each flush (the daemon's), from the run's
	 * counts @run: appends at most @max to @c, returns how many. */
	size_t (*counters)(void *arg, const struct collector_stats *run,
			   struct store_counter *c, size_t max);
	void *counters_arg;
};

/*
 * The bytes of each leaf copy: @leaf_stack's, or, for a main event
 * sampled at @freq a second above @leaf_hz (@freq 0: by period), what
 * keeps the bytes a second those of @leaf_hz copies of @leaf_stack (a
 * multiple of 8, at least RECORDER_LEAF_MIN, never more than
 * @leaf_stack).  Every sample carries one: at -F 10000 a 1 KiB copy at
 * every sample gave make and g++ a k = 3 ratio of 0.97-0.98 where
 * 2,500 copies of 4 KiB a second gave 0.94 and 0.89, the same bytes
 * copied (docs/benchmarks.md, "10 kHz read again").
 */
uint32_t recorder__leaf_bytes(uint32_t leaf_stack, uint64_t leaf_hz,
			      uint64_t freq);
/* The least a cut copy copies: the innermost frames of most samples
 * (1 KiB gave g++ and make at 10 kHz the k = 3 ratio of 2 KiB). */
#define RECORDER_LEAF_MIN 1024

struct recorder;

/* A recorder writing to @st (borrowed).  NULL when out of memory. */
struct recorder *recorder__new(struct store *st, const struct recorder_opts *o);
void recorder__delete(struct recorder *r);

/* The collector, for seeding processes (collector__add_running, ...). */
struct collector *recorder__collector(struct recorder *r);

/* Opens the session (session__open's arguments and failures), with
 * the learning event when the options ask for it. */
int recorder__open(struct recorder *r, const struct perf_event_attr *attr,
		   const pid_t *tasks, size_t ntasks, size_t ring_pages,
		   char *err, size_t errlen, int *errnum);

/* What learning did in the current run. */
struct recorder_learning {
	uint64_t samples;	/* the learning event's samples */
	uint64_t paths;		/* of those, unwound to a whole path */
	uint64_t unknown;	/* CIDs the paths learned so far did not
				 * explain when counted */
	uint64_t bursts;
	int64_t on_ns;		/* the learning event was on this long */
	uint64_t new_paths;	/* whole paths new to the map */
	/* paths learned exactly once since the recorder began (or its
	 * map was last started afresh): over paths, the Good-Turing
	 * estimate of the sampled weight on paths not learned */
	uint64_t once;
	/* samples with a CID, and of them unknown, in the first and in
	 * the last learning window (a quarter second) with enough of
	 * them: how far the paths came to explain the run */
	uint64_t first_cids, first_unknown, last_cids, last_unknown;
	uint32_t leaf_bytes;	/* each leaf copy's (0: none) */
	uint64_t composed;	/* leaf copies' fragments that joined a
				 * learned path */
	/* CIDs that earlier runs' maps explain, read from the database
	 * (known_cids), and the samples only they explained */
	uint64_t stored_cids, stored_hits;
};
void recorder__learning(const struct recorder *r, struct recorder_learning *l);

/* Marks the runs a killed icppd left 'running' as crashed, then starts
 * run @ri.  0, or -1 after logging why. */
int recorder__begin(struct recorder *r, const struct run_info *ri);
int64_t recorder__run_id(const struct recorder *r);

/* The longest wait of a step from now on (recorder_opts.poll_ms). */
void recorder__set_poll_ms(struct recorder *r, int ms);
/* When the last exec of a process the filter accepts was read while
 * the process lived (clock__mono_ns()); 0: none yet. */
int64_t recorder__last_exec(const struct recorder *r);
/* Only the execs @filter passes wake a step (session__filter_execs();
 * NULL: every exec).  0, -EOPNOTSUPP where execs do not wake it alone,
 * or -errno. */
int recorder__filter_execs(struct recorder *r, const char *filter);

/* Installs the signal handlers (see above) and ignores SIGPIPE (a
 * closed stderr must not end a recording).  0 or -errno. */
int recorder__catch_signals(void);
/* The RECORDER_STOP, HUP and CHILD signals caught since the last step
 * or call (a step takes them too). */
int recorder__signals(void);

/* Enables the events (attach and system-wide sessions; a launched
 * command's start with enable_on_exec).  0 or -errno. */
int recorder__enable(struct recorder *r);

/* What a step saw. */
enum {
	RECORDER_STOP = 1,	/* SIGINT or SIGTERM */
	RECORDER_HUP = 2,	/* SIGHUP */
	RECORDER_CHILD = 4,	/* SIGCHLD */
	RECORDER_EXTRA = 8,	/* @extra_fd is readable */
	RECORDER_GONE = 16,	/* every traced task has exited */
};

/*
 * One turn of the loop: waits for data, an exec, a signal or @extra_fd
 * (-1: none) up to poll_ms, less where the learning trickle turns or a
 * flush is due sooner (1 ms while an exec's stack base waits, 10 ms at
 * most without an exec notifier), reads the rings into the collector,
 * and flushes when one is due.  The mask of what it saw, or -1 after
 * logging a failure that ends the recording.
 */
int recorder__step(struct recorder *r, int extra_fd);

/* Reads what the rings hold and flushes now.  0, or -1 (logged once
 * while flushes keep failing; the counts are kept). */
int recorder__flush(struct recorder *r);

/* Flushes, then ends the current run and starts @ri, whose counts start
 * from zero (the daemon's segments).  0, or -1: the old run goes on. */
int recorder__next_run(struct recorder *r, const struct run_info *ri);

/* Disables the events, reads everything left and flushes.  0 or -1. */
int recorder__drain(struct recorder *r);

/*
 * After the last flush: says what the store did not take of the
 * current run (one error line), and writes the counts it refused to a
 * new file of $TMPDIR (/tmp), a line per context identifier, named in
 * that line.  True when it refused anything: the counts, or the path
 * map of a flush that stored the counts alone.
 */
bool recorder__unstored(const struct recorder *r);

/* Ends the run: "finished", "interrupted", "failed"; @exit_status of the
 * profiled command, -1 for none. */
void recorder__end(struct recorder *r, const char *status, int exit_status);

/* The current run's counts (since recorder__begin or next_run). */
void recorder__stats(const struct recorder *r, struct collector_stats *out);
/* The CFI cache in directory @dir (NULL: none), its files mapped as the
 * binaries are; where it cannot be opened, a warning saying why and
 * NULL: the recorder reads every binary afresh.  cfi_cache__close()
 * after the recorder is deleted. */
struct cfi_cache *recorder__open_cache(const char *dir);

/* Since the recorder started, across runs. */
const struct collector_stats *recorder__totals(const struct recorder *r);
/* This process's CPU (every thread's, user and system) since the run
 * began: what recording it cost, as the run's counter recorder.cpu_ms
 * says at each flush. */
int64_t recorder__cpu_ns(const struct recorder *r);

/* A new flush interval (a daemon's reload). */
void recorder__set_flush_ns(struct recorder *r, int64_t ns);
/* Modules in the recorder's cache. */
size_t recorder__modules(const struct recorder *r);

/* The path map (unwinding only, else NULL) and the complete paths it
 * had no room for. */
struct pathmap *recorder__paths(const struct recorder *r);
uint64_t recorder__map_full(const struct recorder *r);

/* Logs the run's summary line, and warnings for lost and malformed
 * records. */
void recorder__summary(const struct recorder *r);

/* Appends "NAME COUNT" to a " (a 1, b 2)" list in @buf (a string of
 * @len bytes, "" to start); nothing when @count is 0. */
void recorder__breakdown(char *buf, size_t len, const char *name,
			 uint64_t count);

#endif
