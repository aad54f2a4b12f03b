/*
 * run.c - what record, train and validate share: profiling a launched
 * command or an attached process into a run of the database, through
 * the recorder.  Training and validation also unwind each sample's
 * stack copy into a path map (inference/pathmap.h) that the recorder
 * flushes with the counts.
 */
#define _GNU_SOURCE
#include "record/run.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "binary/cfi.h"
#include "binary/cfi_cache.h"
#include "binary/module.h"
#include "collector/collector.h"
#include "collector/event.h"
#include "collector/procfs.h"
#include "common/sys.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/outfile.h"
#include "record/launch.h"
#include "record/recorder.h"
#include "schema/store.h"

#define FLUSH_INTERVAL_NS 1000000000LL
/* A step's longest wait for the rings: the clock's deadlines, execs,
 * signals and the rings' watermarks wake it sooner (recorder.c's
 * step_wait_ms).  Every wait past them was a round for nothing: 10 ms
 * waits cost 11 % of the recorder's CPU on g++ and 2 % on clang++
 * (docs/record.md, The loop's wait). */
#define POLL_MS 50
/* How long the launched command may take to finish its exec. */
#define EXEC_WAIT_MS 2000
#define AGGREGATE_MAX_KEYS 65536

struct run {
	const struct run_mode *mode;
	const struct run_opts *o;
	char **command;			/* NULL: attached to o->pid */
	struct store *store;
	struct recorder *rec;
	struct cfi_cache *cfi_cache;	/* NULL: none */
	struct launch child;
	struct event_choice ev;
	struct run_info ri;
	char attach_cmd[32];
	char *command_line;
	int status;			/* the child's wait status */
	struct rusage usage;		/* its CPU time, with the children
					 * it waited for */
	int64_t attach_cpu[2];		/* attached: the process's user and
					 * system time at the start; -1:
					 * unknown */
	int64_t started;		/* clock__mono_ns() at the start */
	int stop;			/* RECORDER_STOP | HUP: interrupted */
	bool child_done;
	uint32_t stack_size;		/* bytes per stack copy */
	uint32_t leaf_stack;		/* the main event's leaf copies */
};

static char *join_argv(char **argv)
{
	size_t len = 1;
	char *s;

	for (char **a = argv; *a; a++)
		len += strlen(*a) + 1;
	s = calloc(1, len);
	if (!s)
		return NULL;
	for (char **a = argv; *a; a++) {
		if (a != argv)
			strcat(s, " ");
		strcat(s, *a);
	}
	return s;
}

static int exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

/* The executable the run starts with, for the path-map check. */
static struct module *target_module(const struct run *r)
{
	char path[4096];

	if (!r->command) {
		if (procfs__exe((pid_t)r->o->pid, path, sizeof(path)))
			return NULL;
	} else if (launch__resolve(r->command[0], path, sizeof(path))) {
		return NULL;
	}
	return module__open(path);
}

/*
 * Whether the target has a path map in the database.  Validation needs
 * one, or, for a target such as make that runs the programs that do the
 * work, some map in the database (-1 and a message when there is none);
 * a measurement run only says what it lacks.  Scripts (#!) and unreadable targets are not checked:
 * the process that runs is not the file named.
 */
static int check_training(const struct run *r)
{
	const struct run_mode *mode = r->mode;
	struct module *m = target_module(r);
	const char *file = r->command ? r->command[0] : NULL, *path;
	char other[64] = "";
	int t, any = 0;

	if (!m || module__error(m)) {
		module__delete(m);
		return 0;
	}
	path = module__path(m);
	if (!file)
		file = path;
	t = store__training(r->store, path, module__build_id(m), other,
			    sizeof(other));
	if (t == STORE_OTHER_BUILD && mode->needs_training)
		log_error("%s: the database holds training for another build"
			  " of it (build-id %s; this one is %s): run 'icppd"
			  " train -- %s' again", path, other,
			  module__build_id(m)[0] ? module__build_id(m) : "none",
			  file);
	else if (t == STORE_UNTRAINED && mode->needs_training &&
		 (any = store__any_training(r->store)) == 0)
		log_error("%s: no training in the database for it: run 'icppd"
			  " train -- %s' first", path, file);
	else if (t == STORE_UNTRAINED && mode->needs_training && any > 0)
		log_info("note: %s has no path map of its own: the"
			 " programs it runs are scored by theirs", path);
	else if (t == STORE_OTHER_BUILD)
		log_info("note: %s was trained as another build (%s): samples"
			 " are kept as context identifiers; train again to"
			 " infer call paths", path, other);
	else if (t == STORE_UNTRAINED && !mode->unwind)
		log_info("note: %s has no training yet: samples are kept as"
			 " context identifiers; 'icppd train -- %s' learns the"
			 " call paths", path, file);
	if (t < 0 || any < 0)
		log_error("%s", store__error(r->store));
	module__delete(m);
	if (t < 0 || any < 0)
		return -1;
	return mode->needs_training && (t == STORE_OTHER_BUILD ||
					(t == STORE_UNTRAINED && !any)) ? -1 : 0;
}

/* The mode's start hook, with the target's executable. */
static void start_hook(const struct run *r)
{
	struct module *m;

	if (!r->mode->start)
		return;
	m = target_module(r);
	if (m && !module__error(m))
		r->mode->start(r->store, r->o, module__path(m),
			       module__build_id(m));
	module__delete(m);
}

static bool learning(const struct run *r)
{
	return r->mode->learn && !r->o->no_learn;
}

/* The main event's rate: its frequency, or ICPPD_DEFAULT_FREQ for one
 * sampled by period. */
static uint64_t sampling_hz(const struct run *r)
{
	return r->ev.freq ? r->ev.rate : ICPPD_DEFAULT_FREQ;
}

/* Whether --leaf-freq bounds the leaf copies' bytes a second below
 * the sampling rate's (each copy cut to fit; an event sampled by period
 * copies --leaf-stack at every sample). */
static bool leaf_bounded(const struct run *r)
{
	return r->ev.freq && r->o->leaf_freq && r->o->leaf_freq < r->ev.rate;
}

/* What learning did, in a few lines. */
static void learn_summary(const struct run *r)
{
	struct recorder_learning l;
	struct collector_stats cs;
	int64_t ran = clock__mono_ns() - r->started;

	recorder__learning(r->rec, &l);
	recorder__stats(r->rec, &cs);
	log_info("learning: %llu of %llu stack samples unwound to whole call "
		 "paths (%llu burst%s; the learning event was on %.0f%% of the "
		 "run)", (unsigned long long)l.paths, (unsigned long long)l.samples,
		 (unsigned long long)l.bursts, l.bursts == 1 ? "" : "s",
		 /* on_ns counts from the event's enabling, which the
		  * run's clock may start after */
		 ran <= 0 ? 0.0 : l.on_ns >= ran ? 100.0 :
		 100.0 * (double)l.on_ns / (double)ran);
	/* an estimate of the map, not of this run: the samples this run
	 * unwound are exact whatever it says (g++ unwound 4,993 of 5,042
	 * samples whole, its report 99.9 % precise, beside "80.8 % on
	 * paths not learned") */
	if (l.paths)
		log_info("learning: %llu of %llu paths seen once: a next run "
			 "would have about %.1f%% of its samples on paths not "
			 "learned yet (Good-Turing; the report says how this "
			 "run's were inferred)", (unsigned long long)l.once,
			 (unsigned long long)l.paths,
			 100.0 * (double)l.once / (double)l.paths);
	if (l.first_cids && l.last_cids)
		log_info("learning: the paths explained %.1f%% of the samples "
			 "when seen in the first quarter second with samples, "
			 "%.1f%% in the last",
			 100.0 * (1 - (double)l.first_unknown /
				  (double)l.first_cids),
			 100.0 * (1 - (double)l.last_unknown /
				  (double)l.last_cids));
	if (l.stored_cids)
		log_info("learning: %llu identifiers that earlier runs of "
			 "these programs explained, %llu samples explained by "
			 "them alone (known.* in v_run_counters)",
			 (unsigned long long)l.stored_cids,
			 (unsigned long long)l.stored_hits);
	if (cs.leaf_samples) {
		char unsettled[96] = "";

		if (cs.leaf_unsettled)
			snprintf(unsettled, sizeof(unsettled), ", %llu "
				 "unwound though they did, by one sample alone",
				 (unsigned long long)cs.leaf_unsettled);
		log_info("leaf copies: %llu of %llu samples copied their "
			 "innermost %u bytes of stack%s: %llu unwound whole, "
			 "%llu to their innermost frames (%llu of them the "
			 "rest of a learned path), %llu of those of an "
			 "identifier no path explained yet; %llu not unwound "
			 "as the paths explained their identifier%s (leaf.* "
			 "in v_run_counters)",
			 (unsigned long long)cs.leaf_samples,
			 (unsigned long long)cs.samples, l.leaf_bytes,
			 l.leaf_bytes < r->leaf_stack ?
			 " (--leaf-stack cut to --leaf-freq's bytes a second)" :
			 "",
			 (unsigned long long)cs.leaf_whole,
			 (unsigned long long)cs.leaf_fragments,
			 (unsigned long long)l.composed,
			 (unsigned long long)cs.leaf_unknown,
			 (unsigned long long)cs.leaf_known, unsettled);
	}
	if (!l.paths)
		log_warn("no call path learned: the program ran too briefly, or "
			 "its stack did not unwind (see v_run_counters: unwind.*)");
}

/*
 * The stack copy, when --stack-size is not given: RUN_DEFAULT_STACK, or
 * enough for 99.5 % of the samples of the last runs of the target's
 * build, its children's included (the height of a sample is the stack
 * its whole unwind needs), up
 * to the largest copy perf takes.  So a program whose copies were
 * truncated gets larger ones from its next run on, and a shallow one
 * never pays for more than the default.
 */
#define STACK_PER_MILLE 995
#define STACK_MARGIN 512	/* above the outermost frame's CFA */
static uint32_t stack_size(const struct run *r)
{
	struct module *m;
	int64_t h = 0;
	uint64_t size;

	if (r->o->stack_size)
		return (uint32_t)r->o->stack_size;
	m = target_module(r);
	if (m && !module__error(m) &&
	    store__height_quantile(r->store, module__path(m),
				   module__build_id(m), STACK_PER_MILLE, &h))
		log_warn("%s: the stack copy stays at %u bytes",
			 store__error(r->store), RUN_DEFAULT_STACK);
	module__delete(m);
	size = ((uint64_t)h + STACK_MARGIN + 4095) / 4096 * 4096;
	if (size <= RUN_DEFAULT_STACK)
		return RUN_DEFAULT_STACK;
	size = size < RUN_MAX_STACK ? size : RUN_MAX_STACK;
	log_info("stack copies of %llu bytes: earlier runs of this build "
		 "sampled stacks %lld bytes deep (--stack-size sets it)",
		 (unsigned long long)size, (long long)h);
	return (uint32_t)size;
}

/* --leaf-stack, while it is less than the learner's copies. */
static uint32_t leaf_stack(const struct run *r)
{
	if (r->o->leaf_stack < r->stack_size)
		return (uint32_t)r->o->leaf_stack;
	log_warn("no leaf copies: --leaf-stack %llu is not less than the "
		 "learner's copies (%u bytes)",
		 (unsigned long long)r->o->leaf_stack, r->stack_size);
	return 0;
}

/*
 * The learning event's rate while it is on: --learn-freq, or the
 * sampling rate up to RUN_TURN_HZ (a learning sample is an exact one,
 * so learning at that rate gives perf --call-graph dwarf's accuracy;
 * bursts end once the samples stop finding new paths), RUN_TURN_HZ
 * above it, or ICPPD_DEFAULT_FREQ for an event sampled by period.  The
 * learner is a CPU clock: --learn-freq's bound.
 */
static uint64_t learn_hz(const struct run *r)
{
	uint64_t hz = sampling_hz(r);

	if (r->o->learn_freq)
		return r->o->learn_freq;
	if (hz <= RUN_TURN_HZ)
		return hz;
	return r->o->leaf_stack && leaf_bounded(r) ? RUN_LEAF_LEARN_HZ :
	       RUN_TURN_HZ;
}

/* The default ring for learning with copies of @stack bytes, and the
 * main event's @leaf bytes: larger with the bytes a second they copy
 * (the same time's worth of them fits). */
static size_t learning_pages(const struct run *r, uint32_t stack,
			     uint32_t leaf)
{
	size_t pages = RUN_RING_PAGES_LEARNING;

	while (pages < RUN_RING_PAGES_MAX &&
	       pages * RUN_DEFAULT_STACK * RUN_RING_LEARN_HZ <
	       RUN_RING_PAGES_LEARNING *
	       ((size_t)stack * learn_hz(r) +
		(size_t)recorder__leaf_bytes(leaf, r->o->leaf_freq,
					     r->ev.freq ? r->ev.rate : 0) *
		sampling_hz(r)))
		pages *= 2;
	return pages;
}

/* -m, or the default: larger while learning. */
static size_t ring_pages(const struct run *r)
{
	if (r->o->mmap_pages)
		return (size_t)r->o->mmap_pages;
	return learning(r) ? learning_pages(r, r->stack_size, r->leaf_stack) :
	       RUN_RING_PAGES;
}

/* The recorder's learning options (record, unless --no-learn). */
static void learning_opts(struct run *r, struct recorder_opts *ro)
{
	const struct run_opts *o = r->o;

	ro->unwind = true;
	ro->learn_hz = learn_hz(r);
	ro->learn_stack = r->stack_size;
	/* a first run of a deep program grows its copies as soon as they
	 * are cut short, not from its next run on */
	if (!o->stack_size)
		ro->deep_stack = RUN_MAX_STACK;
	/* its copies fill the CPUs' rings four times as fast: in rings of
	 * their own, a round's records wait there (in the CPUs', 1,572 of
	 * 3,965 of a clang++ record were copied out), and the reader wakes
	 * a quarter as often.  -m: the size of every ring, the CPUs'
	 * shared. */
	if (!o->mmap_pages)
		ro->deep_ring_pages = learning_pages(r, RUN_MAX_STACK, 0);
	/* at the sampling rate, the learner takes the main event's turn:
	 * its samples are the run's, each one unwound whole an exact one */
	ro->learn_turns = r->ev.freq ? learn_hz(r) == r->ev.rate :
		!o->learn_freq;
	/* below it, every sample's innermost frames from a short copy, the
	 * rest inferred (recorder.h) */
	if (!ro->learn_turns) {
		ro->leaf_stack = r->leaf_stack = leaf_stack(r);
		ro->leaf_hz = o->leaf_freq;
		ro->leaf_known = (uint32_t)o->leaf_known;
	}
}

/* The event, the recorder and its signals.  0, or -1 after logging. */
static int prepare(struct run *r)
{
	const struct run_opts *o = r->o;
	struct recorder_opts ro = { .max_keys = AGGREGATE_MAX_KEYS,
		.flush_ns = FLUSH_INTERVAL_NS, .poll_ms = POLL_MS,
		.unwind = r->mode->unwind, .truth = r->mode->truth,
		.map_files = true };
	char err[512];

	if (r->mode->unwind || (r->mode->learn && !o->no_learn))
		r->stack_size = stack_size(r);
	if (event__choose(o->event, o->freq, o->period, &r->ev, err,
			  sizeof(err))) {
		log_error("%s", err);
		return -1;
	}
	if (learning(r))
		learning_opts(r, &ro);
	if (r->mode->unwind)
		event__add_stack(&r->ev, r->stack_size);
	/* a sample in the kernel carries the user registers of the code
	 * that entered it: its CID is that code's */
	if (o->kernel) {
		r->ev.attr.exclude_kernel = 0;
		/* the kernel's own unwind of its part (exclude_callchain_user
		 * is set): the chain each kernel sample was taken on */
		r->ev.attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
		r->ev.attr.exclude_callchain_kernel = 0;
		r->ev.attr.exclude_callchain_user = 1;
		ro.kernel_chains = true;
	}
	ro.off_cpu = o->off_cpu;
	if (r->mode->rate_scale > 1 && !o->freq && !o->period)
		event__scale_rate(&r->ev, r->mode->rate_scale);
	ro.cfi_cache = r->cfi_cache;
	/* one program's binaries, then the command exits: what a crafted
	 * section could make libdwarf leak goes with it (cfi.h) */
	cfi__set_leak_tracking(false);
	r->rec = recorder__new(r->store, &ro);
	if (!r->rec || recorder__catch_signals()) {
		log_error("out of memory");
		return -1;
	}
	return 0;
}

/* Forks the command (stopped before its exec) or lists the process's
 * threads, then opens the session on them.  0, or -1 after logging. */
static int open_target(struct run *r)
{
	pid_t *tasks = NULL;
	size_t ntasks = 0;
	char err[512];
	int errnum, ret;

	if (!r->command) {
		if (procfs__tasks((pid_t)r->o->pid, &tasks, &ntasks)) {
			log_error("process %llu: cannot list its threads in /proc",
				  (unsigned long long)r->o->pid);
			return -1;
		}
		if (collector__add_running(recorder__collector(r->rec),
					   (pid_t)r->o->pid))
			log_warn("process %llu: cannot read its memory map; "
				 "samples may stay unresolved",
				 (unsigned long long)r->o->pid);
	} else {
		if (launch__fork(r->command, &r->child, err, sizeof(err))) {
			log_error("%s", err);
			return -1;
		}
		r->ev.attr.enable_on_exec = 1;
	}
	ret = recorder__open(r->rec, &r->ev.attr, tasks ? tasks : &r->child.pid,
			     tasks ? ntasks : 1, ring_pages(r), err,
			     sizeof(err), &errnum);
	free(tasks);
	if (ret)
		log_error("%s: %s%s", r->ev.name, err, r->o->kernel &&
			  (errnum == EACCES || errnum == EPERM) ?
			  " (--kernel needs root, CAP_PERFMON or "
			  "kernel.perf_event_paranoid <= 1)" : "");
	return ret;
}

/* The run's row, begun.  0, or -1 after logging. */
static int begin_run(struct run *r)
{
	const struct event_choice *ev = &r->ev;

	snprintf(r->attach_cmd, sizeof(r->attach_cmd), "pid %llu",
		 (unsigned long long)r->o->pid);
	r->command_line = r->command ? join_argv(r->command)
				     : strdup(r->attach_cmd);
	r->ri = (struct run_info){ .kind = r->mode->kind,
		.command = r->command_line ? r->command_line : "?",
		.target_pid = r->command ? r->child.pid : (int64_t)r->o->pid,
		.event = ev->name, .event_canonical = ev->canonical,
		.precise = ev->attr.precise_ip,
		.period = ev->freq ? 0 : ev->rate,
		.frequency = ev->freq ? ev->rate : 0, .kernel = r->o->kernel };
	if (recorder__begin(r->rec, &r->ri))
		return -1;
	if (ev->note[0]) {	/* every VM and container without a PMU */
		log_info("sampling cpu-clock: no hardware event opens here "
			 "(normal in a VM)");
		log_debug("%s", ev->note);
	}
	log_info("recording %s with %s%s, %s %llu, into %s (run %lld)",
		 r->ri.command, ev->name, ev->precise ? " (precise)" : "",
		 ev->freq ? "frequency (Hz)" : "period",
		 (unsigned long long)ev->rate, r->o->db,
		 (long long)recorder__run_id(r->rec));
	return 0;
}

/* Enables the events, or lets the command exec.  0, 127 when the
 * command could not start, or -1 after logging. */
static int go(struct run *r)
{
	char err[512];
	struct procfs_stack st;
	int ret;

	r->started = clock__mono_ns();
	if (!r->command) {
		if (procfs__cpu_ns((pid_t)r->o->pid, &r->attach_cpu[0],
				   &r->attach_cpu[1]))
			r->attach_cpu[0] = -1;
		if (!recorder__enable(r->rec))
			return 0;
		log_error("enabling the events: %s", strerror(errno));
		return -1;
	}
	if (launch__go(&r->child, err, sizeof(err))) {
		log_error("%s: %s", r->command[0], err);
		r->child.pid = -1;
		return 127;
	}
	ret = procfs__wait_main_stack_base(r->child.pid, EXEC_WAIT_MS, &st);
	if (!ret)
		collector__set_main_base(recorder__collector(r->rec),
					 r->child.pid, &st);
	else if (ret != -ESRCH)	/* not a command that is done already */
		log_warn("%s: cannot read its stack base; samples of its main "
			 "thread may stay unresolved", r->command[0]);
	return 0;
}

/* Samples until the command ends, the process goes, a signal or the
 * deadline. */
static void loop(struct run *r)
{
	int64_t deadline = r->o->duration > 0 ? clock__mono_ns() +
			   (int64_t)(r->o->duration * 1e9) : 0;

	for (;;) {
		int seen = recorder__step(r->rec, -1);

		if (seen > 0)
			r->stop |= seen & (RECORDER_STOP | RECORDER_HUP);
		if (r->command && !r->child_done &&
		    wait4(r->child.pid, &r->status, WNOHANG, &r->usage) ==
		    r->child.pid)
			r->child_done = true;
		if (seen < 0 || r->child_done)
			break;
		if (r->stop || (deadline && clock__mono_ns() >= deadline))
			break;
		if (!r->command && ((seen & RECORDER_GONE) ||
		    (kill((pid_t)r->o->pid, 0) && errno == ESRCH)))
			break;
	}
	/* a Ctrl-C that ended the command with icppd, after the last step */
	r->stop |= recorder__signals() & (RECORDER_STOP | RECORDER_HUP);
}

static int64_t tv_ns(const struct timeval *tv)
{
	return (int64_t)tv->tv_sec * 1000000000 + (int64_t)tv->tv_usec * 1000;
}

/* The command's CPU time during the run, stored and said: samples see
 * only its user time, so the kernel's share is what the profile leaves
 * out.  An attached process: what /proc says it used since the start
 * (nothing when it is gone). */
static void cpu_summary(struct run *r)
{
	int64_t user = tv_ns(&r->usage.ru_utime),
		sys = tv_ns(&r->usage.ru_stime);

	if (!r->command && (r->attach_cpu[0] < 0 ||
	    procfs__cpu_ns((pid_t)r->o->pid, &user, &sys)))
		return;
	if (!r->command) {
		user -= r->attach_cpu[0];
		sys -= r->attach_cpu[1];
	}

	if (store__run_cpu(r->store, recorder__run_id(r->rec), user, sys))
		log_warn("%s", store__error(r->store));
	if (user + sys <= 0)
		return;
	log_info("run %lld: CPU time %.3f s user, %.3f s system: %.1f%% in "
		 "the kernel, %s", (long long)recorder__run_id(r->rec),
		 (double)user / 1e9, (double)sys / 1e9,
		 100.0 * (double)sys / (double)(user + sys), r->o->kernel ?
		 "sampled (--kernel) under [kernel]" :
		 "where samples do not see it (--kernel samples it)");
	if (r->o->kernel &&
	    collector__kernel_unnamed(recorder__collector(r->rec)))
		log_info("the kernel's functions stay unnamed: /proc/kallsyms "
			 "shows no addresses here (kernel.kptr_restrict; run "
			 "as root)");
}

/* The last counts, the summary and the mode's finish; waits for the
 * command.  The exit status. */
static int finish(struct run *r, struct outfile *out)
{
	struct collector_stats cs;
	bool failed;
	int ret;

	recorder__drain(r->rec);
	recorder__summary(r->rec);
	failed = recorder__unstored(r->rec);
	if (learning(r))
		learn_summary(r);
	else if (!r->mode->unwind)
		check_training(r);
	recorder__stats(r->rec, &cs);
	if (r->mode->finish) {
		struct run_result res = { .store = r->store,
			.run_id = recorder__run_id(r->rec), .opts = r->o,
			.stats = &cs, .paths = recorder__paths(r->rec),
			.map_full = recorder__map_full(r->rec),
			.stack_size = r->stack_size, .out = out->f };

		failed |= r->mode->finish(&res) != 0;
	}
	if (r->command && !r->child_done) {
		/* Ctrl-C at a terminal reached the child too; a signal sent
		 * to icppd alone is passed on. */
		if (r->stop)
			kill(r->child.pid, SIGTERM);
		while (wait4(r->child.pid, &r->status, 0, &r->usage) < 0 &&
		       errno == EINTR)
			;
	}
	cpu_summary(r);
	r->child.pid = -1;
	ret = r->command ? exit_code(r->status) : 0;
	if (failed && !ret)
		ret = 1;
	recorder__end(r->rec, r->stop ? "interrupted" : "finished",
		      r->command ? ret : -1);
	if (outfile__close(out, !failed) && !ret)
		ret = 1;
	return ret;
}

int run__main(const struct run_mode *mode, const struct run_opts *o,
	      char **command)
{
	struct run r = { .mode = mode, .o = o, .command = command,
		.child = { .pid = -1, .go_fd = -1, .err_fd = -1 } };
	struct outfile out = { 0 };
	char err[512];
	int ret = 1, started, bad;

	if (sys__inject_from_env()) {
		log_error("ICPPD_INJECT_FAULT: expected CALL:ERRNO[,...]");
		return 2;
	}
	if (command && (bad = launch__check(command[0], err, sizeof(err)))) {
		log_error("%s", err);
		return bad;	/* as a shell exits: 127 or 126 */
	}
	if (!command && kill((pid_t)o->pid, 0) && errno == ESRCH) {
		log_error("process %llu: no such process",
			  (unsigned long long)o->pid);
		return 1;
	}
	/* before the store: it keeps the database's state there */
	r.cfi_cache = recorder__open_cache(o->cache_dir);
	store__use_check_cache(r.cfi_cache);
	r.store = store__open(o->db, err, sizeof(err));
	if (!r.store) {
		log_error("%s", err);
		cfi_cache__close(r.cfi_cache);
		return 1;
	}
	/* before the command runs: an unwritable -o fails at once.
	 * Validation cannot start without a path map; a measurement run
	 * says what it lacks once it is done, after its summary. */
	if (outfile__open(&out, o->output))
		goto out;
	start_hook(&r);
	if ((mode->needs_training && check_training(&r)) ||
	    prepare(&r) || open_target(&r) || begin_run(&r))
		goto out;
	started = go(&r);
	if (started) {
		recorder__end(r.rec, "failed", started == 127 ? 127 : -1);
		ret = started == 127 ? 127 : 1;
		goto out;
	}
	loop(&r);
	ret = finish(&r, &out);
out:
	if (r.command && r.child.pid > 0)
		launch__abort(&r.child);
	recorder__delete(r.rec);
	free(r.command_line);
	outfile__close(&out, false);
	store__close(r.store);
	cfi_cache__close(r.cfi_cache);	/* after the store: checked.c */
	return ret;
}
