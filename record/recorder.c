/*
 * recorder.c - the one recorder (see recorder.h).
 *
 * The collector knows nothing of sessions: the recorder reads the rings
 * and hands each record to it (exec notices first, then every record as
 * soon as it is read, then records in time order), and owns the flush.
 */
#define _GNU_SOURCE
#include "record/recorder.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "binary/cfi_cache.h"
#include "binary/module.h"
#include "collector/aggregate.h"
#include "collector/event.h"
#include "collector/procfs.h"
#include "collector/session.h"
#include "common/clock.h"
#include "common/grow.h"
#include "common/log.h"
#include "common/printable.h"
#include "inference/known.h"
#include "inference/pathmap.h"
#include "schema/store.h"

/* Distinct paths kept in memory; beyond, samples are counted as
 * "map_full" (a program with millions of distinct contexts). */
#define PATHMAP_MAX_NODES (4u << 20)
/* Counters a flush writes: unwinding's, the recorder's, the caller's. */
#define MAX_COUNTERS (UNW_NR_STATUS + 56)
/* New path nodes that make a flush before the second is up: a bound on
 * a flush's transaction.  The rings are read while it runs (reader_main()),
 * so its length loses no samples: the first second of clang++ -O2 -c
 * learns 15k nodes, a flush of about 50 ms.  Flushes every 4096 nodes,
 * short enough for the rings (64 ms of 64 KiB stack copies at 1000 Hz),
 * made 7 flushes of a clang++ record where 3 or 4 do: each commits the
 * B-trees' last pages to the WAL again and upserts each CID's counts
 * again (docs/record.md, Storage). */
#define FLUSH_NODES 32768

/*
 * Learning in bursts (the adaptive bursting of Zhuang et al., PLDI 2006,
 * and ICPP section 6.4).  Every sample's CID is looked up in the paths
 * learned so far as it is counted: a window in which more than
 * LEARN_UNKNOWN of the CIDs are unexplained starts (or prolongs) a burst,
 * with the learning event on all the time; LEARN_QUIET windows in a row
 * nearly all explained end it.  Between bursts the event trickles, on
 * LEARN_TRICKLE_ON_NS of every LEARN_TRICKLE_NS, so paths that are rare
 * but whose CIDs collide with known ones are still learned.
 */
#define LEARN_WINDOW_NS 250000000LL
#define LEARN_UNKNOWN 0.02
#define LEARN_MIN_CIDS 20
#define LEARN_QUIET 4
#define LEARN_TRICKLE_NS 1000000000LL
#define LEARN_TRICKLE_ON_NS 20000000LL
#define LEARN_SWITCH_WINDOW 1000
/* Windows held for the next flush (learn_windows): a minute's at
 * LEARN_WINDOW_NS; past it (a database refusing writes) the last one
 * grows. */
#define LEARN_WINDOWS_HELD 240
/* A step's longest wait where no notifier reports execs (step_wait_ms) */
#define WAIT_NO_NOTIFIER_MS 10
/* The copies grow (recorder_opts.deep_stack) once this many of a
 * window's learning samples, and this share of them, were cut short:
 * a stack deeper than the copy, which later runs of the build would
 * copy whole (run.c sizes them) but the first one would only give
 * fragments of. */
#define LEARN_DEEPEN_MIN 8
#define LEARN_DEEPEN 0.02
/*
 * A known CID reached by a new path is what makes "precise" wrong, so
 * the CIDs are not the only trigger: a window in which the learning
 * samples found a path the map lacked is busy too, and keeps (or
 * starts, from a trickle's pulse) a burst, during which the learning
 * event runs at the sampling rate (record/run.c).  How much sampled weight
 * sits on paths not learned at all is the Good-Turing estimate, the
 * share of the learned paths seen exactly once (learn.once over
 * learn.paths), which the run summary and the report's header show.
 */

struct recorder {
	struct recorder_opts o;
	struct store *store;
	struct module_cache *modules;
	struct aggregate *agg;
	struct collector *col;
	struct session *sess;
	struct pathmap *paths;		/* unwinding */
	uint32_t leaf;			/* the main event's leaf copies */
	uint64_t map_full;		/* complete paths the map had no room for */
	uint64_t new_paths;		/* whole paths new to the map */
	uint64_t once;			/* the map's paths seen once so far */
	uint8_t *seen;			/* by map node: paths ending there, up
					 * to 2 */
	size_t seen_cap;
	uint64_t map_resets;		/* maps started afresh (max_paths) */
	/* The CIDs earlier runs explained (known.h), read a program at a
	 * time as its samples come: NULL for a validation's truth or
	 * where nothing learns.  The keys of this run's nodes from
	 * known_from on, collected into known_new by the flush that
	 * writes them (flush()). */
	struct known_set *known;
	struct known_key *known_new;
	size_t nknown_new, known_cap, known_from;
	uint64_t known_serial;
	const struct module *known_prog;	/* the last program asked of */
	uint64_t known_read, known_hits;	/* this run's: keys read,
						 * CIDs only they explained */
	uint64_t composed;		/* this run's leaf copies' fragments
					 * added as the paths they are part of */
	uint64_t dropped;		/* samples dropped: store full */
	struct collector_stats base;	/* totals when this run began */
	int64_t run_id;
	int64_t run_start;		/* clock__mono_ns() when it began */
	/* this process's CPU (CLOCK_PROCESS_CPUTIME_ID, every thread) when
	 * the run began, and when the last flush began: a run's
	 * recorder.cpu_ms is their difference, and the next run begins
	 * where the last flush of this one did, so each flush is counted
	 * once, in the run after it where a daemon's segments end */
	int64_t cpu_start, cpu_flush;
	int64_t last_flush;
	size_t flushed_nodes;		/* the map's size at the last flush */
	uint64_t spills;		/* read_meanwhile()'s reads */
	int64_t last_exec;		/* recorder__last_exec() */
	struct {
		pthread_t thread;	/* reads the rings while a flush writes */
		int stop[2];		/* the flush's end, to it */
		unsigned failed;	/* flushes it could not start for */
	} reader;
	uint64_t flushes;		/* tried, this one included */
	bool flush_failed;		/* the last flush stored nothing */
	bool paths_unstored;		/* ... stored the counts alone */
	char flush_error[512];		/* why the last one failed */
	struct learn {
		bool active;		/* the run learns */
		bool on;		/* the learning event is on */
		bool burst;
		int quiet;		/* windows nearly all explained */
		int64_t window, since;	/* start of the window, of on */
		uint64_t cids, unknown;	/* collector totals at the window */
		uint64_t samples, truncated;	/* and its learning samples' */
		bool deep;		/* tried to grow them (deep_stack) */
		uint32_t stack;		/* bytes each copy holds now */
		uint64_t new_paths;	/* the recorder's, at the window */
		/* the first and the last window's (recorder_learning) */
		uint64_t first_cids, first_unknown, last_cids, last_unknown;
		uint64_t bursts;
		int64_t on_ns;
		struct recorder_learning base;	/* when the run began */
		/* the switches' copies (record --off-cpu): a burst of
		 * their own, while switch-outs' CIDs are unexplained */
		bool sw_on, sw_burst;
		int sw_quiet;
		uint64_t switches, sw_unknown;	/* totals at the window */
		uint64_t sw_new_paths;
		/* the windows closed since the last flush */
		struct store_window wins[LEARN_WINDOWS_HELD];
		size_t nwins;
	} learn;
};

/* ---- signals ------------------------------------------------------------ */

static int sig_pipe[2] = { -1, -1 };
static volatile sig_atomic_t sig_seen;	/* RECORDER_STOP | HUP | CHILD */

static void on_signal(int sig)
{
	int saved = errno;
	char c = (char)sig;

	sig_seen |= sig == SIGCHLD ? RECORDER_CHILD : sig == SIGHUP ?
		    RECORDER_HUP : RECORDER_STOP;
	if (write(sig_pipe[1], &c, 1) < 0) {
		/* The pipe is full: the loop is awake already. */
	}
	errno = saved;
}

int recorder__catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGCHLD };

	if (sig_pipe[0] < 0 && pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK))
		return -errno;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	/* "record ... 2>&1 | head": the reader gone, a message written
	 * fails with EPIPE instead of killing the recorder with the run
	 * unfinished; the samples still go to the database. */
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

int recorder__signals(void)
{
	char buf[64];
	int seen;

	if (sig_pipe[0] >= 0)
		while (read(sig_pipe[0], buf, sizeof(buf)) > 0)
			;
	seen = sig_seen;
	sig_seen = 0;
	return seen;
}

/* ---- setup -------------------------------------------------------------- */

/* Path ending at node @leaf was added (@fresh: new to the map). */
static int note_path(struct recorder *r, uint32_t leaf, bool fresh)
{
	size_t n = pathmap__size(r->paths), old = r->seen_cap;

	if (n > r->seen_cap) {
		if (grow(&r->seen, &r->seen_cap, n, 1, 4096))
			return -ENOMEM;
		memset(r->seen + old, 0, r->seen_cap - old);
	}
	r->new_paths += fresh;
	if (r->seen[leaf] < 2) {
		r->once += r->seen[leaf] ? -1 : 1;
		r->seen[leaf]++;
	}
	return 0;
}

/* A whole path, or a fragment (kept apart: not a path of a validation's
 * truth, nor one the learning's estimates count).  A fragment the map
 * knows the rest of (its frames above one whose CID one whole path
 * reaches are that path's) joins that path, stored as the frames the
 * path lacked (pathmap__add_through()).  A leaf copy's path is not the
 * learner's either: the estimates and the bursts judge what the
 * learner's samples find. */
static int path_cb(void *arg, const struct collector_path *p)
{
	struct recorder *r = arg;
	size_t before = pathmap__size(r->paths);
	uint32_t leaf;
	int ret;

	if (p->fragment && r->o.truth)
		return 0;
	if (p->fragment) {
		ret = pathmap__add_through(r->paths, p->program, p->frames,
					   p->n, &leaf);
		r->composed += !ret && p->leaf;
		if (ret == -ENOENT)
			ret = pathmap__add_fragment(r->paths, p->program,
						    p->frames, p->n, &leaf);
	} else {
		ret = pathmap__add(r->paths, p->program, p->frames, p->n,
				   &leaf);
	}
	if (ret == -ENOSPC) {
		r->map_full++;
		return 0;
	}
	if (ret || p->fragment || p->leaf)
		return ret;
	return note_path(r, leaf, pathmap__size(r->paths) > before);
}

/* Whether earlier runs' maps explain CID (@mod, @func, @height) of
 * program @prog: the program's stored keys read the first time it is
 * asked about (a read that fails leaves it to this run's own map, as
 * a first record is). */
static bool stored_cid(struct recorder *r, const struct module *prog,
		       const struct module *mod, uint64_t func, int64_t height)
{
	size_t n = 0;

	if (!r->known || !prog)
		return false;
	/* samples come a program at a time: the one asked of last was
	 * read (no module key hashed and looked up again at each) */
	if (prog != r->known_prog && !known__read(r->known, prog) &&
	    !known__mark_read(r->known, prog)) {
		if (store__read_known(r->store, prog, r->known, &n))
			log_warn("reading what earlier runs of %s learned: "
				 "%s (this run learns as a first one does)",
				 module__path(prog), store__error(r->store));
		r->known_read += n;
	}
	r->known_prog = prog;
	return known__count(r->known) &&
	       known__has(r->known, known__key(r->known, prog, mod, func,
						height));
}

/* Whether the map explains a sample of @k, of which @n whole paths
 * have a frame (pathmap__cid_paths()), or the maps of the runs before
 * did.  A CID with no height that several paths reach is not explained:
 * only learning says how its samples split, so it keeps a burst going
 * as an unknown CID does. */
static bool explained(struct recorder *r, const struct cid_key *k,
		      unsigned n)
{
	if (k->height == ICPPD_HEIGHT_NONE)
		return n == 1;
	if (n)
		return true;
	if (!stored_cid(r, k->prog, k->mod, k->func, k->height))
		return false;
	r->known_hits++;
	return true;
}

static bool known_cid(void *arg, const struct cid_key *k)
{
	struct recorder *r = arg;
	bool settled;

	return explained(r, k, pathmap__cid_paths(r->paths, k->mod, k->func,
						  k->height, &settled));
}

/* known_cid() of a leaf copy's CID, and whether one sample is all its
 * one path has, in the same probe of the map: the sample loop asks it
 * of nearly every copy. */
static enum collector_leaf leaf_cid(void *arg, const struct cid_key *k)
{
	struct recorder *r = arg;
	bool settled;
	unsigned n = pathmap__cid_paths(r->paths, k->mod, k->func, k->height,
					&settled);

	if (!settled)
		return COLLECTOR_LEAF_LONE;
	return explained(r, k, n) ? COLLECTOR_LEAF_KNOWN :
				    COLLECTOR_LEAF_UNKNOWN;
}

/* Whether a fragment's outermost frame @top is explained, as
 * count_leaf() judges the copy (known__collect()). */
static bool top_known(void *arg, const struct pm_node *top)
{
	struct recorder *r = arg;

	return pathmap__has_cid(r->paths, top->mod, top->func, top->height) ||
	       known__has(r->known, known__key(r->known,
				pathmap__node(r->paths, top->root)->mod,
				top->mod, top->func, top->height));
}

/* The keys of the map's nodes new since the last call, into
 * r->known_new (a failure leaves them to the next). */
static void collect_known(struct recorder *r)
{
	if (!r->known)
		return;
	if (r->known_serial != pathmap__serial(r->paths)) {
		r->known_serial = pathmap__serial(r->paths);
		r->known_from = 0;
	}
	if (!known__collect(r->known, r->paths, r->known_from, top_known, r,
			    &r->known_new, &r->nknown_new, &r->known_cap))
		r->known_from = pathmap__size(r->paths);
	r->nknown_new = known__sort(r->known_new, r->nknown_new);
}

static size_t max_paths(const struct recorder_opts *o)
{
	return o->max_paths ? o->max_paths : PATHMAP_MAX_NODES;
}

struct recorder *recorder__new(struct store *st, const struct recorder_opts *o)
{
	struct recorder *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->o = *o;
	r->store = st;
	r->reader.stop[0] = r->reader.stop[1] = -1;
	r->modules = module_cache__new();
	if (r->modules) {
		module_cache__set_cfi_cache(r->modules, o->cfi_cache);
		module_cache__set_map_files(r->modules, o->map_files);
	}
	r->agg = aggregate__new(o->max_keys);
	r->col = r->modules && r->agg ? collector__new(r->modules, r->agg) : NULL;
	if (r->col && o->unwind &&
	    (!(r->paths = pathmap__new(max_paths(o))) ||
	     collector__set_unwind(r->col, path_cb, r)))
		collector__delete(r->col), r->col = NULL;
	if (!r->col) {
		recorder__delete(r);
		return NULL;
	}
	if (o->filter)
		collector__set_filter(r->col, o->filter, o->filter_arg);
	if (o->learn_hz && r->paths) {
		collector__set_learning(r->col, known_cid, r, o->learn_turns);
		if (!o->truth && !(r->known = known__new())) {
			recorder__delete(r);
			return NULL;
		}
	}
	if (o->kernel_chains)
		collector__set_kernel_chains(r->col, NULL);
	return r;
}

void recorder__delete(struct recorder *r)
{
	if (!r)
		return;
	session__close(r->sess);
	if (r->reader.stop[0] >= 0) {
		close(r->reader.stop[0]);
		close(r->reader.stop[1]);
	}
	collector__delete(r->col);
	pathmap__delete(r->paths);
	known__delete(r->known);
	free(r->known_new);
	free(r->seen);
	aggregate__delete(r->agg);
	module_cache__delete(r->modules);
	free(r);
}

struct collector *recorder__collector(struct recorder *r)
{
	return r->col;
}

/* record --off-cpu: the switch event on @tasks, off to begin with when
 * the learner (@learns) will count the switches while it is on.  0 or
 * -errno with why in @err. */
static int open_switches(struct recorder *r, const struct perf_event_attr *attr,
			 const pid_t *tasks, size_t ntasks, bool learns,
			 char *err, size_t errlen)
{
	struct perf_event_attr sa;
	const uint64_t *ids;
	size_t n;
	int ret;

	event__switches(attr, &sa);
	if (learns)
		sa.disabled = 1, sa.enable_on_exec = 0;
	ret = session__add_switches(r->sess, &sa, tasks, ntasks, err, errlen);
	ids = session__switch_ids(r->sess, &n);
	if (!ret && collector__set_switch_ids(r->col, ids, n)) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
	}
	return ret;
}

/* Blocked paths are learned as running ones are: the learner (@la)
 * copies the stack at switches too, and counts them while it is on.
 * Where that cannot be, the plain switch event counts them all. */
static void open_switch_learner(struct recorder *r,
				const struct perf_event_attr *la,
				const pid_t *tasks, size_t ntasks)
{
	struct perf_event_attr sa;
	const uint64_t *ids;
	size_t n;
	char err[256];

	event__switches(la, &sa);
	event__learner_copy(&sa, r->o.learn_stack);
	if (session__add_switch_learner(r->sess, &sa, tasks, ntasks, err,
					sizeof(err)) ||
	    (ids = session__switch_ids(r->sess, &n),
	     collector__set_switch_ids(r->col, ids, n))) {
		log_warn("off-CPU call paths are not learned in this run: %s",
			 err);
		session__switches_on(r->sess);
	}
}

uint32_t recorder__leaf_bytes(uint32_t leaf_stack, uint64_t leaf_hz,
			      uint64_t freq)
{
	uint64_t b;

	if (!leaf_hz || !freq || freq <= leaf_hz)
		return leaf_stack;
	b = (uint64_t)leaf_stack * leaf_hz / freq / 8 * 8;
	if (b < RECORDER_LEAF_MIN)
		b = RECORDER_LEAF_MIN;
	return b < leaf_stack ? (uint32_t)b : leaf_stack;
}

int recorder__open(struct recorder *r, const struct perf_event_attr *attr,
		   const pid_t *tasks, size_t ntasks, size_t ring_pages,
		   char *err, size_t errlen, int *errnum)
{
	struct perf_event_attr la, ma = *attr;
	bool learns = r->o.learn_hz && r->paths;
	int ret;

	if (learns && !r->o.learn_turns && r->o.leaf_stack) {
		r->leaf = recorder__leaf_bytes(r->o.leaf_stack, r->o.leaf_hz,
					       attr->freq ? attr->sample_freq : 0);
		/* where the copies are cut to hold their cost (above
		 * leaf_hz), a known CID's are unwound one in leaf_known
		 * however little its paths settle it: its next samples
		 * come soon, and so does the copy that tests them */
		collector__set_leaf_copies(r->col, r->leaf, r->o.leaf_known,
					   r->leaf < r->o.leaf_stack ? NULL :
					   leaf_cid);
		event__learner_copy(&ma, r->leaf);
	}
	r->sess = session__open(&ma, tasks, ntasks, ring_pages,
				learns && r->o.learn_turns ?
				SESSION_TAKE_TURNS : 0, err, errlen, errnum);
	if (r->sess && r->o.off_cpu &&
	    (ret = open_switches(r, attr, tasks, ntasks, learns, err,
				 errlen))) {
		*errnum = -ret;
		return -1;
	}
	if (!r->sess || !learns)
		return r->sess ? 0 : -1;
	event__learner(attr, r->o.learn_stack, r->o.learn_turns ? 0 :
		       r->o.learn_hz, &la);
	ret = session__add_learner(r->sess, &la, tasks, ntasks, false, 0, err,
				   errlen);
	if (!ret && r->o.deep_stack > r->o.learn_stack) {
		char derr[256];

		la.sample_stack_user = r->o.deep_stack;
		if (session__add_learner(r->sess, &la, tasks, ntasks, true,
					 r->o.deep_ring_pages, derr,
					 sizeof(derr)))	/* never deepened */
			log_warn("stack copies stay at %u bytes: %s",
				 r->o.learn_stack, derr);
	}
	if (!ret && r->o.off_cpu)
		open_switch_learner(r, &la, tasks, ntasks);
	if (ret) {
		/* the run is still a run: identifiers only, the main
		 * event on for good */
		log_warn("learning is off for this run: %s", err);
		collector__set_learning(r->col, NULL, NULL, false);
		collector__set_unwind(r->col, NULL, NULL);
		collector__set_leaf_copies(r->col, 0, 0, NULL);
		r->leaf = 0;
		ret = r->o.learn_turns ? session__learn(r->sess, false) : 0;
		if (ret)
			snprintf(err, errlen, "starting the main event: %s",
				 strerror(-ret));
		return ret ? -1 : 0;
	}
	/* on from the start (with the main event: enable_on_exec, or
	 * recorder__enable): a burst */
	r->learn = (struct learn){ .active = true, .on = true, .burst = true,
		.bursts = 1, .window = clock__mono_ns(),
		.stack = r->o.learn_stack, .sw_on = true, .sw_burst = true };
	r->learn.since = r->learn.window;
	return 0;
}

static void learn_switch(struct recorder *r, bool on, int64_t now)
{
	struct learn *l = &r->learn;

	if (on == l->on)
		return;
	if (session__learn(r->sess, on))
		return;		/* stays as it is; tried again next step */
	if (!on)
		l->on_ns += now - l->since;
	l->since = now;
	l->on = on;
}

/* A burst after a window judged @busy: it starts, or goes on until
 * LEARN_QUIET windows in a row were not. */
static bool burst_after(bool busy, bool burst, int *quiet)
{
	*quiet = busy ? 0 : *quiet + 1;
	return busy || (burst && *quiet < LEARN_QUIET);
}

/* The switches' copies (record --off-cpu): a burst while more than
 * LEARN_UNKNOWN of the switch-outs' CIDs are unexplained, ended by
 * LEARN_QUIET windows without.  A switch-out whose CID the map explains
 * needs no copy, and a window of switches is LEARN_WINDOW_NS or
 * LEARN_SWITCH_WINDOW switches, whichever ends first: a pipe ping-pong
 * switches 30,000 times a second, and a second of copies at every
 * switch cost it half again what perf costs. */
static void learn_switch_window(struct learn *l,
				const struct collector_stats *cs,
				uint64_t new_paths, bool window_over)
{
	uint64_t n = cs->offcpu_switches - l->switches;
	uint64_t unknown = cs->offcpu_unknown - l->sw_unknown;

	if (!window_over && n < LEARN_SWITCH_WINDOW)
		return;
	if (n >= LEARN_MIN_CIDS) {
		/* unexplained, or a known CID reached by a new path (a share
		 * of them: a ping-pong's trickle finds a path now and then,
		 * and each one prolonged the burst by 4,000 copies) */
		bool busy = (double)(unknown + new_paths - l->sw_new_paths) >
			    LEARN_UNKNOWN * (double)n;

		l->sw_burst = burst_after(busy, l->sw_burst, &l->sw_quiet);
	}
	l->switches = cs->offcpu_switches;
	l->sw_unknown = cs->offcpu_unknown;
	l->sw_new_paths = new_paths;
}

static void learn_switches(struct recorder *r, bool on)
{
	if (on != r->learn.sw_on && !session__learn_switches(r->sess, on))
		r->learn.sw_on = on;
}

/* Grows the copies when this window's learning samples were cut short
 * (see LEARN_DEEPEN). */
static void learn_deepen(struct recorder *r, const struct collector_stats *cs)
{
	struct learn *l = &r->learn;
	uint64_t cut = cs->unwind[UNW_TRUNCATED] - l->truncated;
	uint64_t samples = cs->learn_samples - l->samples;

	if (l->deep || !r->o.deep_stack || cut < LEARN_DEEPEN_MIN ||
	    (double)cut < LEARN_DEEPEN * (double)samples)
		return;
	l->deep = true;		/* tried once */
	if (session__deepen(r->sess, l->on))
		return;
	l->stack = r->o.deep_stack;
	log_info("stack copies grow to %u bytes: %llu of %llu learning "
		 "samples had stacks deeper than %u", r->o.deep_stack,
		 (unsigned long long)cut, (unsigned long long)samples,
		 r->o.learn_stack);
}

/* Judges the window now over: a burst starts or goes on while its
 * CIDs are unexplained or its copies teach new paths (see LEARN_*). */
static void learn_judge(struct learn *l, const struct collector_stats *cs,
			uint64_t new_paths)
{
	uint64_t cids = cs->cids - l->cids;
	uint64_t unknown = cs->learn_unknown - l->unknown;
	bool busy = new_paths > l->new_paths ||
		    (double)unknown > LEARN_UNKNOWN * (double)cids;

	if (cids < LEARN_MIN_CIDS)
		return;
	if (!l->first_cids) {
		l->first_cids = cids;
		l->first_unknown = unknown;
	}
	l->last_cids = cids;
	l->last_unknown = unknown;
	if (busy && !l->burst)
		l->bursts++;
	l->burst = burst_after(busy, l->burst, &l->quiet);
}

static int64_t ms_since_start(const struct recorder *r, int64_t ns)
{
	return ns > r->run_start ? (ns - r->run_start) / 1000000 : 0;
}

/* Holds window @w for the next flush (learn_windows: a row a window
 * with samples or copies); past LEARN_WINDOWS_HELD, the last one
 * grows. */
static void keep_window(struct learn *l, const struct store_window *w)
{
	struct store_window *last = &l->wins[LEARN_WINDOWS_HELD - 1];

	if (!w->samples && !w->copies)
		return;
	if (l->nwins < LEARN_WINDOWS_HELD) {
		l->wins[l->nwins++] = *w;
		return;
	}
	last->end_ms = w->end_ms;
	last->samples += w->samples;
	last->unexplained += w->unexplained;
	last->copies += w->copies;
	last->new_paths += w->new_paths;
}

/* Ends the current window at @now, kept for the next flush, and starts
 * the next one. */
static void learn_next_window(struct recorder *r,
			      const struct collector_stats *cs, int64_t now)
{
	struct learn *l = &r->learn;
	struct store_window w = { ms_since_start(r, l->window),
		ms_since_start(r, now), cs->cids - l->cids,
		cs->learn_unknown - l->unknown,
		cs->learn_samples - l->samples, r->new_paths - l->new_paths };

	keep_window(l, &w);
	l->window = now;
	l->cids = cs->cids;
	l->unknown = cs->learn_unknown;
	l->samples = cs->learn_samples;
	l->truncated = cs->unwind[UNW_TRUNCATED];
	l->new_paths = r->new_paths;
}

/* After each read: closes a window when one is over, and moves the
 * learning event on or off (see LEARN_*). */
static void learn_step(struct recorder *r)
{
	const struct collector_stats *cs = collector__stats(r->col);
	struct learn *l = &r->learn;
	int64_t now = clock__mono_ns();
	bool window_over = now - l->window >= LEARN_WINDOW_NS;
	bool trickle = now % LEARN_TRICKLE_NS < LEARN_TRICKLE_ON_NS;

	if (!l->active)
		return;
	learn_deepen(r, cs);
	if (r->o.off_cpu) {
		learn_switch_window(l, cs, r->new_paths, window_over);
		learn_switches(r, l->sw_burst || trickle);
	}
	if (window_over) {
		learn_judge(l, cs, r->new_paths);
		learn_next_window(r, cs, now);
	}
	learn_switch(r, l->burst || trickle, now);
}

/* What learning did since the recorder began. */
static void learning_totals(const struct recorder *r,
			    struct recorder_learning *l)
{
	const struct collector_stats *cs = collector__stats(r->col);
	const struct learn *s = &r->learn;

	*l = (struct recorder_learning){ cs->learn_samples,
		cs->unwind[UNW_COMPLETE], cs->learn_unknown, s->bursts,
		s->on_ns + (s->on ? clock__mono_ns() - s->since : 0),
		r->new_paths, r->once, s->first_cids, s->first_unknown,
		s->last_cids, s->last_unknown, r->leaf };
}

void recorder__learning(const struct recorder *r, struct recorder_learning *l)
{
	const struct learn *s = &r->learn;

	learning_totals(r, l);
	l->samples -= s->base.samples;
	l->paths -= s->base.paths;
	l->unknown -= s->base.unknown;
	l->bursts -= s->base.bursts;
	l->on_ns -= s->base.on_ns;
	l->new_paths -= s->base.new_paths;
	l->stored_cids = r->known_read;
	l->stored_hits = r->known_hits;
	l->composed = r->composed;
}

/* A run's writer is alive when it is an icppd process on this host
 * (a reused pid runs something else); another host's runs are left. */
static bool writer_alive(void *arg, const char *host, int64_t pid)
{
	char comm[16] = "", me[256] = "";

	(void)arg;
	gethostname(me, sizeof(me) - 1);
	if (strcmp(host, me))
		return true;	/* cannot tell */
	if (pid <= 0 || pid > INT32_MAX)
		return false;	/* written before writers were recorded */
	if (pid == getpid())
		return true;
	if (procfs__comm((pid_t)pid, (pid_t)pid, comm, sizeof(comm)))
		return false;
	return !strncmp(comm, "icppd", 5);
}

int recorder__begin(struct recorder *r, const struct run_info *ri)
{
	int64_t n;

	if (store__crash_runs(r->store, writer_alive, NULL, &n))
		log_warn("%s", store__error(r->store));
	else if (n)
		log_warn("%lld run%s left running by a killed icppd: marked "
			 "crashed", (long long)n, n > 1 ? "s" : "");
	if (store__begin_run(r->store, ri, &r->run_id)) {
		log_error("%s", store__error(r->store));
		return -1;
	}
	r->last_flush = r->run_start = clock__mono_ns();
	r->cpu_start = r->cpu_flush = clock__ns(CLOCK_PROCESS_CPUTIME_ID);
	return 0;
}

struct cfi_cache *recorder__open_cache(const char *dir)
{
	struct cfi_cache *c = NULL;
	int ret;

	/* a cache that cannot be used costs the run nothing but time */
	if (!dir)
		return NULL;
	if ((ret = cfi_cache__open(dir, &c))) {
		log_warn("CFI cache %s: %s; every binary's frame section and "
			 "symbols are read afresh%s", dir, strerror(-ret),
			 ret == -EPERM ? " (the directory must be yours "
			 "alone; --no-cache goes without)" : "");
		return NULL;
	}
	/* mapped as the binaries are (.map_files): only its owner can
	 * write or shrink its files */
	cfi_cache__set_map(c, true);
	return c;
}

int64_t recorder__cpu_ns(const struct recorder *r)
{
	return clock__ns(CLOCK_PROCESS_CPUTIME_ID) - r->cpu_start;
}

int64_t recorder__run_id(const struct recorder *r)
{
	return r->run_id;
}

int recorder__enable(struct recorder *r)
{
	return session__enable(r->sess) ? -errno : 0;
}

/* ---- reading and flushing ----------------------------------------------- */

/* Records processed between two looks at the exec notifier: a full
 * ring of stack samples takes tens of milliseconds to unwind, longer
 * than a short-lived process lives (processes.sh runs 400 of them). */
#define EXEC_BATCH 64

static void take_execs(struct recorder *r)
{
	const struct collector_stats *cs = collector__stats(r->col);
	uint64_t read = cs->execs_read;
	struct session_exec e;

	/* a process the filter refuses needs no haste */
	while (session__next_exec(r->sess, &e))
		collector__exec_seen(r->col, e.pid, e.time, e.comm);
	collector__retry_execs(r->col);
	/* nor one gone before its exec was read (with the exec filter,
	 * most execs are read late: each had kept the wait short) */
	if (cs->execs_read > read || collector__execs_waiting(r->col))
		r->last_exec = clock__mono_ns();
}

void recorder__set_poll_ms(struct recorder *r, int ms)
{
	r->o.poll_ms = ms;
}

int64_t recorder__last_exec(const struct recorder *r)
{
	return r->last_exec;
}

int recorder__filter_execs(struct recorder *r, const char *filter)
{
	return r->sess ? session__filter_execs(r->sess, filter) : -EOPNOTSUPP;
}

/*
 * How long a wait for the rings may be, whatever the clock has due:
 * poll_ms; 1 ms while an exec's stack base waits.  The rest wakes the
 * wait when it comes: the rings at their watermark, an exec at the
 * notifier, a signal at its pipe.  Without the notifier, a round reads
 * a new image's stack base after its exec, and the wait (at most
 * WAIT_NO_NOTIFIER_MS) bounds how late that is (a process gone by then
 * has none: no_stack_base).
 */
static int64_t ring_wait_ns(const struct recorder *r)
{
	int64_t wait = r->o.poll_ms * 1000000LL;

	if (collector__execs_waiting(r->col))
		return 1000000;
	if (!session__notifies_execs(r->sess) &&
	    wait > WAIT_NO_NOTIFIER_MS * 1000000LL)
		wait = WAIT_NO_NOTIFIER_MS * 1000000LL;
	return wait;
}

static int wait_ms(int64_t ns)
{
	return ns > 1000000 ? (int)((ns + 999999) / 1000000) : 1;
}

/* ---- reading the rings while a flush writes ----------------------------- */

/*
 * A flush cannot stop in the middle of a statement: SQLite's COMMIT
 * (with the WAL's checkpoint and its fsyncs, hundreds of ms on a busy
 * disk), a lock another process holds (a report storing its inference:
 * the busy timeout waits up to 5 s), a slow page.  Rings sized for tens
 * of ms would lose samples meanwhile, so a second thread reads them
 * for as long as the flush runs, woken as the main loop is (the rings'
 * watermark, the exec notifier): it takes the execs, copies what the
 * rings hold into the session's queue and gives the rings back
 * (session__spill), and peeks at those records.  The flush touches
 * only the store, the aggregate and the path map; the thread touches
 * only the session and the collector's processes and threads, and
 * holds the names it learns for the next flush (collector__hold_names).
 */
static void read_meanwhile(struct recorder *r)
{
	int n;

	take_execs(r);
	n = session__spill(r->sess);
	for (int i = 0; i < n; i++)
		collector__peek(r->col, session__fresh(r->sess, (size_t)i));
	r->spills++;
}

static void *reader_main(void *arg)
{
	struct recorder *r = arg;
	struct pollfd stop = { .fd = r->reader.stop[0], .events = POLLIN };
	int mask;

	do {
		mask = session__wait(r->sess, &stop.fd, 1,
				     wait_ms(ring_wait_ns(r)));
		if (mask >= 0 && !(mask & SESSION_EXTRA))
			read_meanwhile(r);
	} while (mask >= 0 && !(mask & (SESSION_EXTRA | SESSION_HUP)));
	/* every task gone: nothing more comes, and the rings' poll would
	 * not wait */
	if (mask > 0 && !(mask & SESSION_EXTRA))
		poll(&stop, 1, -1);
	return NULL;
}

/* Starts the reader for a flush; false when it could not (the flush
 * runs without it, as a round that stalls would). */
static bool reader_start(struct recorder *r)
{
	sigset_t all, old;
	int err;

	if (!r->sess)
		return false;
	if (r->reader.stop[0] < 0 &&
	    pipe2(r->reader.stop, O_CLOEXEC | O_NONBLOCK)) {
		err = errno;
	} else {
		collector__hold_names(r->col, true);
		/* signals stay the main loop's (their pipe, its EINTR) */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		err = pthread_create(&r->reader.thread, NULL, reader_main, r);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (err)
			collector__hold_names(r->col, false);
	}
	if (err && !r->reader.failed++)
		log_warn("cannot read the rings while flushing (%s): a long "
			 "flush may lose samples", strerror(err));
	return !err;
}

static void reader_stop(struct recorder *r)
{
	char c = 0;

	/* cannot fail: the pipe is ours, empty and non-blocking */
	if (write(r->reader.stop[1], &c, 1) != 1)
		log_error("cannot stop the flush's reader: %s", strerror(errno));
	pthread_join(r->reader.thread, NULL);
	if (read(r->reader.stop[0], &c, 1) != 1) {
		/* nothing to take back: the pipe is empty again either way */
	}
}

/*
 * One round: the exec notifier first (its reads must precede the exec
 * records), then every new record is peeked at in ring order (execs and
 * forks whose stack base must be read now), then the records that are
 * safe are processed in time order, with a look at the notifier after
 * each batch.
 */
static int read_rings(struct recorder *r, bool final)
{
	const struct perf_event_header *h;
	int n, keep, ret = 0;
	unsigned done = 0;

	take_execs(r);
	n = session__fill(r->sess);
	for (int i = 0; i < n; i++)
		collector__peek(r->col, session__fresh(r->sess, (size_t)i));
	session__order(r->sess, final);
	while (!ret && (h = session__next(r->sess))) {
		ret = collector__process(r->col, h);
		if (++done % EXEC_BATCH == 0)
			take_execs(r);
	}
	keep = session__keep_rest(r->sess);
	if (n < 0)
		ret = n;
	else if (!ret)
		ret = keep;
	if (ret)
		log_error("reading samples: %s", strerror(-ret));
	return ret ? -1 : 0;
}

void recorder__stats(const struct recorder *r, struct collector_stats *out)
{
	const struct collector_stats *cs = collector__stats(r->col);

	*out = *cs;
	out->samples -= r->base.samples;
	out->cids -= r->base.cids;
	out->unresolved -= r->base.unresolved;
	out->lost -= r->base.lost;
	out->throttled -= r->base.throttled;
	out->malformed -= r->base.malformed;
	out->filtered -= r->base.filtered;
	out->learn_samples -= r->base.learn_samples;
	out->learn_unknown -= r->base.learn_unknown;
	out->execs_seen -= r->base.execs_seen;
	out->execs_read -= r->base.execs_read;
	out->maps_reread -= r->base.maps_reread;
	out->unwind_reused -= r->base.unwind_reused;
	out->unwind_frames_reused -= r->base.unwind_frames_reused;
	out->leaf_samples -= r->base.leaf_samples;
	out->leaf_whole -= r->base.leaf_whole;
	out->leaf_fragments -= r->base.leaf_fragments;
	out->leaf_known -= r->base.leaf_known;
	out->leaf_unsettled -= r->base.leaf_unsettled;
	out->leaf_unknown -= r->base.leaf_unknown;
	/* a daemon segment's switches, not the daemon's */
	out->offcpu_switches -= r->base.offcpu_switches;
	out->offcpu_unresolved -= r->base.offcpu_unresolved;
	out->offcpu_unmatched -= r->base.offcpu_unmatched;
	out->offcpu_open_at_exit -= r->base.offcpu_open_at_exit;
	out->offcpu_unknown -= r->base.offcpu_unknown;
	for (int i = 0; i < CID_NR_FAILURES; i++)
		out->by_reason[i] -= r->base.by_reason[i];
	for (int i = 0; i < UNW_NR_STATUS; i++)
		out->unwind[i] -= r->base.unwind[i];
}

/* record --off-cpu's counts into @c: how many. */
static size_t offcpu_counters(const struct collector_stats *cs,
			      struct store_counter *c)
{
	c[0] = (struct store_counter){ "offcpu.switches",
				       (int64_t)cs->offcpu_switches };
	c[1] = (struct store_counter){ "offcpu.unresolved",
				       (int64_t)cs->offcpu_unresolved };
	c[2] = (struct store_counter){ "offcpu.unmatched",
				       (int64_t)cs->offcpu_unmatched };
	c[3] = (struct store_counter){ "offcpu.open_at_exit",
				       (int64_t)cs->offcpu_open_at_exit };
	c[4] = (struct store_counter){ "offcpu.unexplained",
				       (int64_t)cs->offcpu_unknown };
	return 5;
}

/* The unwinder's counters, and the leaf copies': appended to @c. */
static size_t unwind_counters(const struct recorder *r,
			      const struct collector_stats *cs,
			      struct store_counter *c)
{
	static char names[UNW_NR_STATUS][32];
	size_t n = 0;

	if (r->paths) {
		for (int i = 0; i < UNW_NR_STATUS; i++) {
			snprintf(names[i], sizeof(names[i]), "unwind.%s",
				 unwind_status__name(i));
			c[n++] = (struct store_counter){ names[i],
							 (int64_t)cs->unwind[i] };
		}
		c[n++] = (struct store_counter){ "unwind.map_full",
						 (int64_t)r->map_full };
		c[n++] = (struct store_counter){ "unwind.reused",
						 (int64_t)cs->unwind_reused };
		c[n++] = (struct store_counter){ "unwind.frames_reused",
					(int64_t)cs->unwind_frames_reused };
		if (r->map_resets)
			c[n++] = (struct store_counter){ "unwind.map_resets",
						 (int64_t)r->map_resets };
	}
	if (r->known) {
		c[n++] = (struct store_counter){ "known.stored_cids",
						 (int64_t)r->known_read };
		c[n++] = (struct store_counter){ "known.stored_hits",
						 (int64_t)r->known_hits };
	}
	if (r->leaf) {
		c[n++] = (struct store_counter){ "leaf.samples",
						 (int64_t)cs->leaf_samples };
		c[n++] = (struct store_counter){ "leaf.whole",
						 (int64_t)cs->leaf_whole };
		c[n++] = (struct store_counter){ "leaf.fragments",
						 (int64_t)cs->leaf_fragments };
		c[n++] = (struct store_counter){ "leaf.known",
						 (int64_t)cs->leaf_known };
		c[n++] = (struct store_counter){ "leaf.unsettled",
						 (int64_t)cs->leaf_unsettled };
		c[n++] = (struct store_counter){ "leaf.unknown",
						 (int64_t)cs->leaf_unknown };
		c[n++] = (struct store_counter){ "leaf.composed",
						 (int64_t)r->composed };
		c[n++] = (struct store_counter){ "leaf.stack_bytes",
						 (int64_t)r->leaf };
	}
	return n;
}

static size_t counters(const struct recorder *r,
		       const struct collector_stats *cs,
		       struct store_counter *c)
{
	size_t n = unwind_counters(r, cs, c);

	if (cs->execs_seen) {
		c[n++] = (struct store_counter){ "exec.seen",
						 (int64_t)cs->execs_seen };
		c[n++] = (struct store_counter){ "exec.base_read",
						 (int64_t)cs->execs_read };
	}
	if (r->o.off_cpu)
		n += offcpu_counters(cs, c + n);
	if (cs->maps_reread)	/* a process's table full: stale mappings */
		c[n++] = (struct store_counter){ "maps.reread",
						 (int64_t)cs->maps_reread };
	if (module_cache__refused(r->modules))	/* MODULE_CACHE_MAX */
		c[n++] = (struct store_counter){ "modules.refused",
			(int64_t)module_cache__refused(r->modules) };
	if (module_cache__symbols_dropped(r->modules))
		c[n++] = (struct store_counter){ "modules.symbols_dropped",
			(int64_t)module_cache__symbols_dropped(r->modules) };
	if (r->dropped)
		c[n++] = (struct store_counter){ "recorder.dropped",
						 (int64_t)r->dropped };
	c[n++] = (struct store_counter){ "recorder.flushes",
					 (int64_t)r->flushes };
	c[n++] = (struct store_counter){ "recorder.cpu_ms",
		(r->cpu_flush - r->cpu_start) / 1000000 };
	if (r->spills)
		c[n++] = (struct store_counter){ "recorder.flush_reads",
						 (int64_t)r->spills };
	if (r->sess) {
		uint64_t copied, read;

		session__copied(r->sess, &copied, &read);
		c[n++] = (struct store_counter){ "recorder.copied",
						 (int64_t)copied };
	}
	for (int k = 0; r->o.cfi_cache && k < CACHE_NR_KINDS; k++) {
		static const char *const labels[CACHE_NR_KINDS][3] = {
			[CACHE_CFI] = { "cfi.cache_hits", "cfi.cache_stores",
					"cfi.cache_rejected" },
			[CACHE_SYMBOLS] = { "symbols.cache_hits",
					    "symbols.cache_stores",
					    "symbols.cache_rejected" },
		};
		struct cfi_cache_stats cc;

		if (!labels[k][0])	/* a kind the recorder does not use */
			continue;
		cfi_cache__stats(r->o.cfi_cache, (enum cache_kind)k, &cc);
		c[n++] = (struct store_counter){ labels[k][0],
						 (int64_t)cc.hits };
		c[n++] = (struct store_counter){ labels[k][1],
						 (int64_t)cc.stores };
		if (cc.rejected)
			c[n++] = (struct store_counter){ labels[k][2],
						 (int64_t)cc.rejected };
	}
	if (r->learn.active) {
		struct recorder_learning l;

		recorder__learning(r, &l);
		c[n++] = (struct store_counter){ "learn.samples",
						 (int64_t)l.samples };
		c[n++] = (struct store_counter){ "learn.paths",
						 (int64_t)l.paths };
		c[n++] = (struct store_counter){ "learn.unknown_cids",
						 (int64_t)l.unknown };
		c[n++] = (struct store_counter){ "learn.bursts",
						 (int64_t)l.bursts };
		c[n++] = (struct store_counter){ "learn.on_ms",
						 l.on_ns / 1000000 };
		c[n++] = (struct store_counter){ "learn.new_paths",
						 (int64_t)l.new_paths };
		c[n++] = (struct store_counter){ "learn.once",
						 (int64_t)l.once };
		c[n++] = (struct store_counter){ "learn.stack_bytes",
						 r->learn.stack };
	}
	if (r->o.counters)
		n += r->o.counters(r->o.counters_arg, cs, c + n,
				    MAX_COUNTERS - n);
	return n;
}

/* The samples the aggregate holds, before it is dropped. */
static uint64_t held_samples(const struct aggregate *agg)
{
	size_t n, nu;
	const struct cid_count *c = aggregate__cids(agg, &n);
	const struct unresolved_count *u = aggregate__unresolved(agg, &nu);
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += c[i].samples;
	for (size_t i = 0; i < nu; i++)
		sum += u[i].samples;
	return sum;
}

/* Modules about to be freed: the store's ids of them, and the waits
 * whose CIDs point into them. */
static void forget_modules(void *arg, const struct module *const *mods,
			   size_t n)
{
	struct recorder *r = arg;

	store__forget_modules(r->store, mods, n);
	if (r->known) {
		known__forget_modules(r->known);
		r->known_prog = NULL;	/* its address may be another's */
	}
	if (r->o.off_cpu)
		collector__forget_waits(r->col, mods, n);
}

/* An empty path map in place of the stored one.  -1 when out of
 * memory: the old map stays (and its modules with it). */
static int new_paths(struct recorder *r)
{
	struct pathmap *pm = pathmap__new(r->o.max_paths);

	if (!pm)
		return -1;
	/* what the old map explained stays known, as a stored map's does
	 * (its keys were written with it) */
	if (r->known) {
		struct known_key *v = NULL;
		size_t n = 0, cap = 0;

		if (!known__collect(r->known, r->paths, 0, top_known, r, &v,
				    &n, &cap))
			for (size_t i = 0; i < n; i++)
				known__add(r->known, v[i].key);
		free(v);
	}
	pathmap__delete(r->paths);
	r->paths = pm;
	r->flushed_nodes = 0;
	r->map_resets++;
	if (r->seen)	/* the new map's nodes: none seen yet */
		memset(r->seen, 0, r->seen_cap);
	r->once = 0;
	return 0;
}

/* Writes what @r holds: the counts, the map's new nodes, and at the
 * run's @last flush the keys of the CIDs its map explains. */
static int flush(struct recorder *r, bool last)
{
	struct collector_stats cs;
	struct store_counter c[MAX_COUNTERS];
	struct store_batch b = { .agg = r->agg, .paths = r->paths,
				 .truth = r->o.truth, .counters = c,
				 .windows = r->learn.wins,
				 .nwindows = r->learn.nwins };
	bool reading;
	int failed;

	r->flushes++;
	r->cpu_flush = clock__ns(CLOCK_PROCESS_CPUTIME_ID);
	recorder__stats(r, &cs);
	b.tot = (struct run_totals){ cs.samples, cs.unresolved, cs.lost,
				     cs.throttled };
	b.ncounters = counters(r, &cs, c);
	r->last_flush = clock__mono_ns();
	r->flushed_nodes = r->paths ? pathmap__size(r->paths) : 0;
	/* A record's keys go in once, at its end: rewriting the blob at
	 * every flush grew a second 1 kHz record's database 8-10 % more.  A
	 * recorder that evicts modules after each flush (the daemon's:
	 * max_paths) writes them at each, as they name the modules. */
	if (last || r->o.max_paths) {
		collect_known(r);
		b.known = r->known_new;
		b.nknown = r->nknown_new;
	}
	reading = reader_start(r);
	failed = store__flush(r->store, r->run_id, &b);
	if (failed) {
		snprintf(r->flush_error, sizeof(r->flush_error), "%s",
			 store__error(r->store));
		/* The counts alone, where a disk too full for the path map
		 * takes them: a map is most of a flush's bytes (a make that
		 * learned 1,255 paths filled 600 KiB that its counts fit
		 * in), and it keeps its counts for the next flush. */
		if (b.paths) {
			b.paths = NULL;
			failed = store__flush(r->store, r->run_id, &b);
			if (!failed && !r->paths_unstored)
				log_error("storing the learned paths failed, "
					  "the samples were stored: %s",
					  r->flush_error);
			r->paths_unstored = !failed;
		}
	} else {
		r->paths_unstored = false;
	}
	if (reading)
		reader_stop(r);
	/* the keys went in with the map, or, where only the counts did,
	 * are dropped (a shortcut): the modules they name may go below */
	if (!failed)
		r->nknown_new = 0;
	if (failed) {
		if (!r->flush_failed)
			log_error("flush failed, counts kept for the next one: "
				  "%s", r->flush_error);
		r->flush_failed = true;
		if (aggregate__full(r->agg)) {	/* bounded memory */
			uint64_t lost = held_samples(r->agg);

			if (!r->dropped)
				log_warn("the database refuses writes and the "
					 "counts fill memory: dropping samples "
					 "until it takes them again");
			r->dropped += lost;
			aggregate__clear(r->agg);
		}
	} else {
		if (r->flush_failed)
			log_info("flushing again");
		r->flush_failed = false;
		aggregate__clear(r->agg);
		r->learn.nwins = 0;
	}
	collector__hold_names(r->col, false);	/* the reader's, for the next */
	if (failed)
		return -1;
	/* Nothing counted refers to a module now: those no process maps
	 * go beyond the cache's bounds (a user mapping file after file
	 * must not grow the daemon), and the store forgets their ids.  A
	 * path map keeps pointers to its modules: it is stored now, so a
	 * long-lived recorder starts an empty one first. */
	if (r->paths && r->o.max_paths &&
	    (pathmap__size(r->paths) >= r->o.max_paths / 10 * 9 ||
	     module_cache__over(r->modules)) && new_paths(r))
		return 0;	/* no memory for a new map: no eviction */
	if (!r->paths || r->o.max_paths)
		module_cache__evict(r->modules, forget_modules, r);
	return 0;
}

int recorder__flush(struct recorder *r)
{
	read_rings(r, false);
	return flush(r, false);
}

/* How long a step waits: ring_wait_ns(), and no longer than what the
 * clock has due sooner: the end of the learning window (judged late,
 * a window is longer than the others), the learning trickle's next
 * turn (a wait past it would stretch or skip the turn) and the next
 * flush. */
static int step_wait_ms(struct recorder *r)
{
	int64_t now = clock__mono_ns(), wait = ring_wait_ns(r);
	int64_t flush = r->last_flush + r->o.flush_ns - now;
	const struct learn *l = &r->learn;

	if (l->active && l->window + LEARN_WINDOW_NS - now < wait)
		wait = l->window + LEARN_WINDOW_NS - now;
	if (l->active && !l->burst) {
		int64_t phase = now % LEARN_TRICKLE_NS;
		int64_t turn = phase < LEARN_TRICKLE_ON_NS ?
			       LEARN_TRICKLE_ON_NS - phase :
			       LEARN_TRICKLE_NS - phase;

		if (turn < wait)
			wait = turn;
	}
	if (flush < wait)
		wait = flush;
	return wait_ms(wait);
}

int recorder__step(struct recorder *r, int extra_fd)
{
	int fds[2] = { sig_pipe[0], extra_fd }, mask, seen;
	int wait = step_wait_ms(r);

	mask = session__wait(r->sess, fds, extra_fd >= 0 ? 2 : 1, wait);
	if (mask < 0) {
		log_error("poll: %s", strerror(-mask));
		return -1;
	}
	seen = recorder__signals();
	if (extra_fd >= 0 && (mask & SESSION_EXTRA))
		seen |= RECORDER_EXTRA;
	if (mask & SESSION_HUP)
		seen |= RECORDER_GONE;
	if (read_rings(r, false))
		return -1;
	learn_step(r);
	if (aggregate__full(r->agg) ||
	    clock__mono_ns() - r->last_flush >= r->o.flush_ns ||
	    (r->paths && pathmap__size(r->paths) >= r->flushed_nodes +
	     FLUSH_NODES))
		flush(r, false);
	return seen;
}

/* The run's last window, shorter than the others, before its last
 * flush. */
static void learn_last_window(struct recorder *r)
{
	if (r->learn.active)
		learn_next_window(r, collector__stats(r->col),
				  clock__mono_ns());
}

int recorder__next_run(struct recorder *r, const struct run_info *ri)
{
	int64_t next;

	read_rings(r, false);
	learn_last_window(r);
	if (flush(r, true) || store__begin_run(r->store, ri, &next))
		return -1;
	store__end_run(r->store, r->run_id, "finished", -1);
	r->run_id = next;
	r->run_start = clock__mono_ns();
	r->cpu_start = r->cpu_flush;
	r->base = *collector__stats(r->col);
	learning_totals(r, &r->learn.base);
	r->dropped = 0;
	r->known_read = r->known_hits = 0;
	r->composed = 0;
	return 0;
}

int recorder__drain(struct recorder *r)
{
	session__disable(r->sess);
	read_rings(r, true);
	learn_last_window(r);
	return flush(r, true);
}

/* The counts @r holds, as text, into a new file whose name goes into
 * @path.  0 or -errno. */
static int spill(const struct recorder *r, char *path, size_t len)
{
	const char *tmp = getenv("TMPDIR");
	size_t n, nu;
	const struct cid_count *c = aggregate__cids(r->agg, &n);
	const struct unresolved_count *u = aggregate__unresolved(r->agg, &nu);
	uint64_t unresolved = 0;
	FILE *f;
	int fd, ret = 0;

	if ((size_t)snprintf(path, len, "%s/icppd-run-%lld-XXXXXX.tsv",
			     tmp && *tmp == '/' ? tmp : "/tmp",
			     (long long)r->run_id) >= len)
		return -ENAMETOOLONG;
	fd = mkstemps(path, 4);	/* O_EXCL, 0600: never another's file */
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		ret = -errno;
		close(fd);
		return ret;
	}
	for (size_t i = 0; i < nu; i++)
		unresolved += u[i].samples;
	fprintf(f, "# icppd run %lld: the samples the database did not take "
		"(%llu more had no context identifier)\n"
		"# pid\ttid\tprogram\tmodule\tfunction\taddress\theight"
		"\tsamples\tkernel\n", (long long)r->run_id,
		(unsigned long long)unresolved);
	for (size_t i = 0; i < n; i++) {
		const struct cid_key *k = &c[i].key;

		fprintf(f, "%u\t%u\t", k->pid, k->tid);
		printable__write(f, k->prog ? module__path(k->prog) : "");
		fputc('\t', f);
		printable__write(f, k->mod ? module__path(k->mod) : "");
		fputc('\t', f);
		printable__write(f, c[i].func_name ? c[i].func_name : "");
		fprintf(f, "\t0x%llx\t%lld\t%llu\t%llu\n",
			(unsigned long long)k->func, (long long)k->height,
			(unsigned long long)c[i].samples,
			(unsigned long long)c[i].kernel);
	}
	if (ferror(f))
		ret = -EIO;
	if (fclose(f) && !ret)
		ret = -errno;
	return ret;
}

bool recorder__unstored(const struct recorder *r)
{
	uint64_t held = r->flush_failed ? held_samples(r->agg) : 0;
	char file[4096];
	int err;

	if (!r->flush_failed && !r->paths_unstored)
		return false;
	if (!r->flush_failed) {
		log_error("storing run %lld's learned paths: %s: its samples "
			  "are stored, what it learned of their call paths is "
			  "not (free space and record again)",
			  (long long)r->run_id, r->flush_error);
		return true;
	}
	err = spill(r, file, sizeof(file));
	if (err)
		log_error("storing run %lld: %s: %llu samples lost (writing "
			  "them to %s failed too: %s)", (long long)r->run_id,
			  r->flush_error, (unsigned long long)held, file,
			  strerror(-err));
	else
		log_error("storing run %lld: %s: %llu samples not in the "
			  "database, written to %s (free space and record "
			  "again)", (long long)r->run_id, r->flush_error,
			  (unsigned long long)held, file);
	return true;
}

void recorder__end(struct recorder *r, const char *status, int exit_status)
{
	store__end_run(r->store, r->run_id, status, exit_status);
}

const struct collector_stats *recorder__totals(const struct recorder *r)
{
	return collector__stats(r->col);
}

void recorder__set_flush_ns(struct recorder *r, int64_t ns)
{
	r->o.flush_ns = ns;
}

size_t recorder__modules(const struct recorder *r)
{
	return module_cache__count(r->modules);
}

struct pathmap *recorder__paths(const struct recorder *r)
{
	return r->paths;
}

uint64_t recorder__map_full(const struct recorder *r)
{
	return r->map_full;
}

void recorder__breakdown(char *buf, size_t len, const char *name,
			 uint64_t count)
{
	size_t used = strlen(buf);

	if (!count || used + 1 >= len)
		return;
	if (used)
		buf[used - 1] = '\0';	/* reopen the list: drop ")" */
	snprintf(buf + strlen(buf), len - strlen(buf), "%s%s %llu)",
		 used ? ", " : " (", name, (unsigned long long)count);
}

void recorder__summary(const struct recorder *r)
{
	struct collector_stats cs;
	char reasons[512] = "";

	recorder__stats(r, &cs);
	for (int i = 0; i < CID_NR_FAILURES; i++)
		recorder__breakdown(reasons, sizeof(reasons),
				    cid_failure__name(i), cs.by_reason[i]);
	log_info("run %lld: %llu samples, %llu with a context identifier, "
		 "%llu unresolved%s, %llu lost, %llu throttled",
		 (long long)r->run_id, (unsigned long long)cs.samples,
		 (unsigned long long)cs.cids,
		 (unsigned long long)cs.unresolved, reasons,
		 (unsigned long long)cs.lost,
		 (unsigned long long)cs.throttled);
	if (cs.lost)
		log_warn("%llu samples lost: the ring buffers filled faster than "
			 "icppd read them; raise --mmap-pages or lower the rate",
			 (unsigned long long)cs.lost);
	if (r->dropped)
		log_warn("%llu samples dropped: the database refused them while "
			 "memory for counts was full", (unsigned long long)r->dropped);
	if (cs.malformed || session__corrupt(r->sess))
		log_warn("%llu malformed records, %lu ring resets",
			 (unsigned long long)cs.malformed,
			 session__corrupt(r->sess));
}
