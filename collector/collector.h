/*
 * collector.h - turns decoded perf records into context identifiers.
 *
 * The collector keeps, per process, the executable and anonymous
 * mappings (from MMAP2 records, or /proc for an attached process) and the
 * main thread's stack base; per sample it finds the module and function
 * of the PC, the CFA from the module's CFI, the stack base of the thread
 * (main thread: startstack & ~15; other threads: the end of the anonymous
 * mapping holding SP), and counts height = base - CFA in the aggregate.
 * It knows nothing of SQL or of how records were read.
 *
 * Records must be given in time order (collector__process); the reader
 * (record/recorder.c) calls collector__peek on each record as soon as it
 * is read, before ordering, so /proc facts that vanish with a
 * short-lived process (its startstack) are captured while it is still
 * alive.
 */
#ifndef ICPPD_COLLECTOR_COLLECTOR_H
#define ICPPD_COLLECTOR_COLLECTOR_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "collector/aggregate.h"
#include "collector/procfs.h"
#include "common/path.h"

struct module;
struct module_cache;
struct kallsyms;

/* What became of a sample's stack when unwinding (training and
 * validation runs).  Names are stored in the database. */
enum unwind_status {
	UNW_COMPLETE,		/* reached the outermost frame */
	UNW_TRUNCATED,		/* the stack copy ends below the outermost frame */
	UNW_NO_STACK,		/* the sample carries no stack copy */
	UNW_NO_MAPPING,		/* a return address outside every module */
	UNW_NO_CFI,		/* no CFI covers a frame's pc */
	UNW_BAD_CFI,		/* a CFI rule it cannot follow */
	UNW_BAD_FRAME,		/* a frame not above its callee on the stack */
	UNW_TOO_DEEP,		/* more than ICPPD_MAX_FRAMES frames */
	UNW_NO_PROGRAM,		/* the process's executable is unknown */
	UNW_NR_STATUS
};

#define ICPPD_MAX_FRAMES 4096

/* "complete", "truncated", ... */
const char *unwind_status__name(enum unwind_status s);

/* A sample's whole call path, outermost frame first; the innermost
 * frame's (function, height) is the sample's CID.  Frames are valid
 * during the callback only. */
struct collector_path {
	const struct module *program;	/* the process's executable */
	uint32_t pid, tid;
	const struct path_frame *frames;
	size_t n;
	/* the stack copy ended first: frames are the innermost ones, each
	 * with its height, frames[0] not an outermost frame */
	bool fragment;
	bool leaf;	/* from a leaf copy (collector__set_leaf_copies) */
};

/* Called for every sample unwound completely, and for every one whose
 * copy ended first with the frames it gave (a fragment); non-zero is
 * returned from collector__process(). */
typedef int (*collector_path_fn)(void *arg, const struct collector_path *p);

struct collector_stats {
	uint64_t samples;	/* sample records seen */
	uint64_t cids;		/* samples with a CID */
	uint64_t unresolved;	/* samples without one, by reason below */
	uint64_t by_reason[CID_NR_FAILURES];
	uint64_t lost;		/* PERF_RECORD_LOST(_SAMPLES) totals */
	uint64_t throttled;	/* PERF_RECORD_THROTTLE count */
	uint64_t malformed;	/* records that failed to decode */
	uint64_t filtered;	/* samples of processes the filter refused */
	/* Samples with a CID, by what unwinding their stack gave (only
	 * when unwinding is on; when learning, the learner's samples). */
	uint64_t unwind[UNW_NR_STATUS];
	/* Of the complete ones, those whose outer frames were the thread's
	 * last walk's (unwind.c), and those frames. */
	uint64_t unwind_reused, unwind_frames_reused;
	/* Learning (collector__set_learning): the learner's samples (in
	 * @samples too when they are counted); and the CIDs the map
	 * learned so far did not explain when they were counted (a leaf
	 * copy's sample: by its own CID or, after its unwind, the CID of
	 * the outermost frame it reached; explained when it reached the
	 * outermost). */
	uint64_t learn_samples, learn_unknown;
	/* Leaf copies (collector__set_leaf_copies): the samples that
	 * carried one, and of those, the ones unwound whole, the ones
	 * that gave a fragment, and the ones not unwound because the
	 * paths explained their CID (the others are in none). */
	uint64_t leaf_samples, leaf_whole, leaf_fragments, leaf_known;
	/* Of the copies unwound, those of a known CID whose paths were
	 * not settled (collector__set_leaf_copies' @judge), and those
	 * of a CID the paths did not explain when it was counted: the
	 * tail, whose unwinds and rows are what learning costs at high
	 * rates. */
	uint64_t leaf_unsettled, leaf_unknown;
	/* Execs reported as they happen (collector__exec_seen), and of
	 * those, whose new stack base was read while the process ran. */
	uint64_t execs_seen, execs_read;
	/* Mapping tables that reached SPACE_MAX_MAPS and were read again
	 * from /proc. */
	uint64_t maps_reread;
	/* Off-CPU (collector__set_switch_ids): switch-outs with a CID,
	 * those without one, switch-outs or switch-ins that found no
	 * partner (a second out before an in; an in after an out without
	 * a CID), and threads that exited switched out. */
	uint64_t offcpu_switches, offcpu_unresolved, offcpu_unmatched,
		 offcpu_open_at_exit;
	/* ... and, learning, the switch-outs whose CIDs the map did not
	 * explain when they were counted. */
	uint64_t offcpu_unknown;
};

struct collector;

/*
 * Off-CPU time (record --off-cpu): samples whose event id is one of
 * @ids (n of them, copied) are switch-outs, not CPU samples: each one's
 * CID waits for its thread's next PERF_RECORD_SWITCH in, and the time
 * between goes to the aggregate's off-CPU counts (aggregate.h), as
 * blocked or, where the switch-out record said preempted, runnable.
 * 0 or -ENOMEM.
 */
int collector__set_switch_ids(struct collector *c, const uint64_t *ids,
			      size_t n);
/* Lets go of every thread switched out and not back yet (counted
 * unmatched). */
void collector__drop_waits(struct collector *c);
/* Lets go of those whose CID points into one of @mods (n of them), the
 * modules module_cache__evict() is about to free (its forget): a wait
 * of a live process keeps its time across a daemon's flush. */
void collector__forget_waits(struct collector *c,
			     const struct module *const *mods, size_t n);

/* Borrows @modules and @agg; both must outlive the collector. */
struct collector *collector__new(struct module_cache *modules,
				 struct aggregate *agg);
void collector__delete(struct collector *c);

/*
 * Unwinds the stack copy of every sample that has a CID (the event must
 * request PERF_SAMPLE_STACK_USER) with the CFI of each module, and hands
 * complete paths to @fn.  Partial paths are only counted.
 */
int collector__set_unwind(struct collector *c, collector_path_fn fn,
			  void *arg);

/*
 * Learning during measurement (record; the path map grows as the run
 * goes): the session also carries a learning event whose samples have
 * a stack copy (has_stack).  Those are unwound (collector__set_unwind
 * must be on) and counted in stats.learn_samples.  With @counted (the
 * learner takes turns with the main event: session.h) each is a sample
 * of the run as well, its CID counted as any other's; otherwise it is
 * for its path only.  Every sample's CID is counted, and @known tells
 * whether the paths learned so far explain it (those it does not are
 * counted in stats.learn_unknown).
 */
struct cid_key;
typedef bool (*collector_known_fn)(void *arg, const struct cid_key *k);
void collector__set_learning(struct collector *c, collector_known_fn known,
			     void *arg, bool counted);

/*
 * Leaf copies (learning a trickle, not taking turns): the main event
 * copies the innermost @bytes of the stack at every sample (0: it does
 * not), less than the learner copies.  A sample whose copy was asked
 * that short is the main event's: counted as any other, and unwound as
 * far as its copy goes, a whole path where it reached the outermost
 * frame and a fragment (the innermost frames, exact) where it did not;
 * the path map's paths and the search explain the fragment's top.
 * Where the learned paths explain a sample's CID already (the @known of
 * collector__set_learning), its copy is unwound one time in
 * @known_every (0 or 1: every time): the paths it would add are mostly
 * there, and a report splits the others among them as it splits a
 * sample's that had no copy; the one in @known_every keeps the paths'
 * counts growing and finds the paths of a known CID not learned yet.
 * @judge (called with the @known's arg; NULL: @known alone) says it of
 * a leaf copy's CID in one look, and where one sample alone is all the
 * CID's one path has, every copy of it is unwound.
 */
enum collector_leaf {
	COLLECTOR_LEAF_UNKNOWN,	/* no path explains the CID */
	COLLECTOR_LEAF_LONE,	/* one path, one sample alone through it */
	COLLECTOR_LEAF_KNOWN,
};
typedef enum collector_leaf (*collector_leaf_fn)(void *arg,
						 const struct cid_key *k);
void collector__set_leaf_copies(struct collector *c, uint32_t bytes,
				uint32_t known_every, collector_leaf_fn judge);

/*
 * Keeps only the samples of processes @fn accepts (the daemon's watch
 * rules): @exe is the process's executable (NULL while unknown), @comm
 * its main thread's name ("" while unknown).  Other samples are counted
 * in stats.filtered and go nowhere.  Mappings and names are still
 * tracked for every process, so one that later execs a watched
 * executable is known from its exec on.
 */
typedef bool (*collector_filter_fn)(void *arg, uint32_t pid, const char *exe,
				    const char *comm);
void collector__set_filter(struct collector *c, collector_filter_fn fn,
			   void *arg);

/* record --kernel: samples carry the kernel's call chain
 * (PERF_SAMPLE_CALLCHAIN, the kernel part); each one taken in the
 * kernel is counted along it, its functions named through @kallsyms
 * (NULL: /proc/kallsyms), read now, before any sample (50 ms of the
 * kernel's time to list 120,000 symbols: a stall the sample loop must
 * not take).  Where it shows no addresses, the samples stay under
 * [kernel] alone and collector__kernel_unnamed() says so. */
void collector__set_kernel_chains(struct collector *c, const char *kallsyms);
bool collector__kernel_unnamed(const struct collector *c);
void collector__peek(struct collector *c, const struct perf_event_header *h);
/*
 * While the caller writes the aggregate out and clears it (a flush),
 * peeking from another thread: the thread names peek learns wait in the
 * collector, not in the aggregate; released, they go into it, for the
 * next flush.  Nothing else peek, collector__exec_seen() and
 * collector__retry_execs() touch is the aggregate's or the path map's.
 */
void collector__hold_names(struct collector *c, bool hold);

int collector__process(struct collector *c, const struct perf_event_header *h);

/* Seeds a running process from /proc (attach mode): its mappings, main
 * stack base and thread names.  0 or -errno. */
int collector__add_running(struct collector *c, pid_t pid);

/* Records the main stack base of @pid, known from outside: for the
 * launched command, read right after its exec, and valid from that exec
 * record on, with where its brk heap starts. */
int collector__set_main_base(struct collector *c, pid_t pid,
			     const struct procfs_stack *st);

/*
 * An exec reported as it happens (session__execs, which the reader asks
 * before it reads the rings): reads the new image's stack base now, while a
 * short-lived process still runs, for its exec record to use if the
 * process is gone by the time that record and its samples are read
 * (@comm, the name the exec gave, tells it from a later exec); with a
 * filter (collector__set_filter()), only for a process it accepts
 * (false: not one).  A read that finds the exec still in progress is
 * retried by
 * collector__retry_execs(), which the reader calls before each read of
 * the rings and between batches of records; while any wait,
 * collector__execs_waiting() is non-zero and the reader should read
 * again within a millisecond.
 */
bool collector__exec_seen(struct collector *c, uint32_t pid, uint64_t time,
			  const char *comm);
void collector__retry_execs(struct collector *c);
size_t collector__execs_waiting(const struct collector *c);

const struct collector_stats *collector__stats(const struct collector *c);

#endif
