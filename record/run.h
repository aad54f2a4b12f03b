/*
 * run.h - a run of record, train or validate: launch COMMAND or attach
 * to PID, sample it through the recorder (record/recorder.h), end the
 * run with the command's status.  Each subcommand is a run_mode: what
 * it samples and what it does once the last counts are flushed.
 */
#ifndef ICPPD_RECORD_RUN_H
#define ICPPD_RECORD_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct collector_stats;
struct pathmap;
struct store;

/* Bytes of user stack copied with each training sample when
 * --stack-size is not given (0), unless earlier runs of the build
 * sampled deeper stacks (run.c).  perf's own default is 8192; 16 KiB
 * holds the whole stack of most programs. */
#define RUN_DEFAULT_STACK 16384
/* Ring pages per CPU when -m is not given: the learning event's stack
 * copies need room to wait for a reader that the machine's load
 * delays (64 of them of 16 KiB: a quarter second at 250 Hz; more pages
 * at a higher learning rate). */
#define RUN_RING_PAGES 64
#define RUN_RING_PAGES_LEARNING 256
#define RUN_RING_LEARN_HZ 250
/* ... but at most 16 MiB per CPU and ring (-m sets more: 64 KiB copies
 * at 1000 Hz fit), where a 16-CPU machine sampling at 10 kHz would
 * otherwise lock 2.5 GiB of rings.  A run whose copies grow has two per
 * CPU, the CPUs' and the grown copies' (session.h). */
#define RUN_RING_PAGES_MAX 4096
/* --learn-freq's bound. */
#define RUN_MAX_LEARN_HZ 10000
/* Without --learn-freq, the learner takes the main event's turn (every
 * sample it takes exact) up to this sampling rate; above it, it learns
 * beside the main event at this rate, while leaf copies (--leaf-freq)
 * give the innermost frames: at -F 10000 a record of g++ cost 1.20
 * times perf's CPU taking turns, against perf --call-graph dwarf's
 * 1.10, and 1.06 so (docs/benchmarks.md, "Issue 53: leaf copies at
 * high rates").  Fewer copies above it (the learner at 250 Hz, leaf
 * copies at 1000) cut the recorder's CPU by a quarter to a third, and
 * cost the first report twice the search and 0.11-0.21 of the k = 3
 * ratio on g++ and clang++ ("fewer copies above 1 kHz"). */
#define RUN_TURN_HZ 1000
/* Without --learn-freq, where the sampling rate is above --leaf-freq
 * (every sample's leaf copy cut to its bytes a second: recorder.h),
 * the learner's rate beside it: each sample's innermost frames are its
 * own, and the learner's whole paths the map's upper part.  At
 * -F 10000 it gave make and g++ the k = 3 ratio the learner at 1000
 * Hz gave (0.971 and 0.974, against 0.981 and 0.972), for a median
 * 0.39 s of g++'s recorder CPU against 0.61 s (two bench rounds:
 * docs/benchmarks.md, "10 kHz read again"). */
#define RUN_LEAF_LEARN_HZ 250
/* The kernel's limit: the record size is a u16. */
#define RUN_MAX_STACK 65528

/* Every option any of the three subcommands takes. */
struct run_opts {
	const char *db;
	const char *event;
	uint64_t freq, period, pid, mmap_pages, stack_size;
	uint64_t learn_freq;	/* record: the learning event's rate (0:
				 * the sampling rate) */
	uint64_t leaf_stack;	/* record: the main event's leaf copies
				 * while learning is below the sampling
				 * rate (recorder.h; 0: none) */
	uint64_t leaf_freq;	/* record: at most this many of them a
				 * second (recorder.h) */
	uint64_t leaf_known;	/* record: one in this many of those whose
				 * CID the paths explain unwound */
	double duration;
	bool quiet;
	bool no_learn;		/* record: CIDs only */
	bool kernel;		/* record: sample in the kernel too */
	bool off_cpu;		/* record: off-CPU time too */
	const char *export_url;	/* record: ship the run to ClickHouse */
	int format;		/* validate: text or json */
	/* The directory of CFI tables already read (binary/cfi_cache.h),
	 * NULL: none. */
	const char *cache_dir;
	bool no_cache;		/* --no-cache: the CLI leaves cache_dir NULL */
	const char *output;	/* validate: -o FILE, NULL for stdout */
};

struct run_result {
	struct store *store;
	int64_t run_id;
	const struct run_opts *opts;
	const struct collector_stats *stats;	/* the run's */
	struct pathmap *paths;	/* NULL for record */
	uint64_t map_full;	/* complete paths the map had no room for */
	uint32_t stack_size;	/* bytes copied per stack sample */
	FILE *out;		/* the report: stdout or -o FILE (opened
				 * before the command starts, kept only if
				 * finish succeeds) */
};

struct run_mode {
	const char *kind;	/* the run's kind: "record", "train", ... */
	bool unwind;		/* sample stack copies and unwind them */
	bool truth;		/* paths are the run's own truth (validate),
				 * not training for the program's map */
	bool needs_training;	/* refuse a target without a path map */
	bool learn;		/* learn paths while measuring (unless
				 * --no-learn): record */
	unsigned rate_scale;	/* default sampling rate multiplier */
	/* Before the target runs, with its executable's path and build-id
	 * ("" when it has none) when it can be read: record --export pulls
	 * the fleet's path map of that build here.  May be NULL; what it
	 * returns is ignored (it logs its own failures). */
	void (*start)(struct store *st, const struct run_opts *o,
		      const char *path, const char *build_id);
	/* After the last flush: summaries, scores.  Non-zero fails the run
	 * (exit status 1 unless the command's own status is non-zero). */
	int (*finish)(const struct run_result *res);
};

/* Runs @mode on @command (NULL-terminated argv) or, when @command is
 * NULL, on process @o->pid.  The options are checked already.  The exit
 * status: the command's, 1 after a failure, 127 when it cannot start. */
int run__main(const struct run_mode *mode, const struct run_opts *o,
	      char **command);

#endif
