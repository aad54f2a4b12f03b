/*
 * profile.c - what record, train and validate share: profiling a
 * launched command or an attached process into a run of the database.
 *
 * Wires the pieces: launch or attach, session (perf_event), collector
 * (CIDs), aggregate (counts), store (SQLite).  The loop polls the rings
 * and a self-pipe that signal handlers write to; handlers do nothing
 * else.  Counts are flushed once a second or when the aggregate is full,
 * so memory stays bounded and a crash loses at most a second.  Training
 * and validation also unwind each sample's stack copy into a path map
 * (inference/pathmap.h) flushed in the same transaction.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "binary/module.h"
#include "collector/aggregate.h"
#include "collector/collector.h"
#include "collector/event.h"
#include "collector/procfs.h"
#include "collector/session.h"
#include "collector/sys.h"
#include "daemon/launch.h"
#include "daemon/log.h"
#include "daemon/outfile.h"
#include "daemon/profile.h"
#include "inference/pathmap.h"
#include "schema/store.h"

#define FLUSH_INTERVAL_NS 1000000000LL
/* Bounds the delay before a new descendant's /proc entry is read: one
 * that exits sooner has no known stack base (counted as no_stack_base). */
#define POLL_MS 10
/* How long the launched command may take to finish its exec. */
#define EXEC_WAIT_MS 2000
#define AGGREGATE_MAX_KEYS 65536

/* Distinct paths kept in memory; beyond, samples are counted as
 * "map_full" (a program with millions of distinct contexts). */
#define PATHMAP_MAX_NODES (4u << 20)

static int sig_pipe[2] = { -1, -1 };
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	int saved = errno;
	char c = (char)sig;

	if (sig != SIGCHLD)
		stop_signal = sig;
	if (write(sig_pipe[1], &c, 1) < 0) {
		/* The pipe is full: the loop is awake already. */
	}
	errno = saved;
}

static int install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGCHLD };

	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK))
		return -errno;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	return 0;
}

static void drain_sig_pipe(void)
{
	char buf[64];

	while (read(sig_pipe[0], buf, sizeof(buf)) > 0)
		;
}

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct recorder {
	const struct profile_mode *mode;
	struct store *store;
	struct module_cache *modules;
	struct aggregate *agg;
	struct collector *col;
	struct session *sess;
	struct pathmap *paths;		/* training and validation */
	uint64_t map_full;		/* complete paths the map had no room for */
	int64_t run_id;
	int64_t last_flush;
	bool flush_failed;
};

static int path_cb(void *arg, const struct collector_path *p)
{
	struct recorder *r = arg;
	int ret = pathmap__add(r->paths, p->program, p->frames, p->n, NULL);

	if (ret == -ENOSPC) {
		r->map_full++;
		return 0;
	}
	return ret;
}

static int flush(struct recorder *r)
{
	const struct collector_stats *cs = collector__stats(r->col);
	struct store_counter counters[UNW_NR_STATUS + 1];
	struct store_batch b = { .agg = r->agg, .tot = { cs->samples,
		cs->unresolved, cs->lost, cs->throttled }, .paths = r->paths,
		.truth = r->mode->truth, .counters = counters };
	static char names[UNW_NR_STATUS][32];

	if (r->paths) {
		for (int i = 0; i < UNW_NR_STATUS; i++) {
			snprintf(names[i], sizeof(names[i]), "unwind.%s",
				 unwind_status__name(i));
			counters[b.ncounters++] = (struct store_counter){
				names[i], (int64_t)cs->unwind[i] };
		}
		counters[b.ncounters++] = (struct store_counter){
			"unwind.map_full", (int64_t)r->map_full };
	}
	r->last_flush = mono_ns();
	if (store__flush(r->store, r->run_id, &b)) {
		/* Keep the counts and try again at the next flush: a busy
		 * or briefly full disk should not lose them. */
		if (!r->flush_failed)
			log_error("%s", store__error(r->store));
		r->flush_failed = true;
		return aggregate__full(r->agg) ? -1 : 0;
	}
	r->flush_failed = false;
	aggregate__clear(r->agg);
	return 0;
}

static int read_and_flush(struct recorder *r, bool final)
{
	int ret = collector__read(r->col, r->sess, final);

	if (ret) {
		log_error("reading samples: %s", strerror(-ret));
		return -1;
	}
	if (final || aggregate__full(r->agg) ||
	    mono_ns() - r->last_flush >= FLUSH_INTERVAL_NS)
		return flush(r);
	return 0;
}

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

void profile__breakdown(char *buf, size_t len, const char *name,
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

static void print_summary(struct recorder *r)
{
	const struct collector_stats *cs = collector__stats(r->col);
	char reasons[512] = "";

	for (int i = 0; i < CID_NR_FAILURES; i++)
		profile__breakdown(reasons, sizeof(reasons),
				   cid_failure__name(i), cs->by_reason[i]);
	log_info("run %lld: %llu samples, %llu with a context identifier, "
		 "%llu unresolved%s, %llu lost, %llu throttled",
		 (long long)r->run_id, (unsigned long long)cs->samples,
		 (unsigned long long)cs->cids,
		 (unsigned long long)cs->unresolved, reasons,
		 (unsigned long long)cs->lost,
		 (unsigned long long)cs->throttled);
	if (cs->lost)
		log_warn("%llu samples lost: the ring buffers filled faster than "
			 "icppd read them; raise --mmap-pages or lower the rate",
			 (unsigned long long)cs->lost);
	if (cs->malformed || session__corrupt(r->sess))
		log_warn("%llu malformed records, %lu ring resets",
			 (unsigned long long)cs->malformed,
			 session__corrupt(r->sess));
}

static bool power_of_two(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* The executable the run starts with, for the path-map check. */
static struct module *target_module(const char *file, uint64_t pid)
{
	char path[4096], link[4200];
	ssize_t n;

	if (pid) {
		snprintf(link, sizeof(link), "%s/%llu/exe", icppd_procdir,
			 (unsigned long long)pid);
		n = readlink(link, path, sizeof(path) - 1);
		if (n <= 0)
			return NULL;
		path[n] = '\0';
	} else if (launch__resolve(file, path, sizeof(path))) {
		return NULL;
	}
	return module__open(path);
}

/* A run's writer is alive when it is an icppd process on this host
 * (a reused pid runs something else); another host's runs are left. */
static bool writer_alive(void *arg, const char *host, int64_t pid)
{
	char path[64], comm[16] = "", me[256] = "";
	FILE *f;

	(void)arg;
	gethostname(me, sizeof(me) - 1);
	if (strcmp(host, me))
		return true;	/* cannot tell */
	if (pid <= 0)
		return false;	/* written before writers were recorded */
	if (pid == getpid())
		return true;
	snprintf(path, sizeof(path), "/proc/%lld/comm", (long long)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = '\0';
	fclose(f);
	return !strncmp(comm, "icppd", 5);
}

void profile__crash_runs(struct store *st)
{
	int64_t n;

	if (store__crash_runs(st, writer_alive, NULL, &n))
		log_warn("%s", store__error(st));
	else if (n)
		log_warn("%lld run%s left running by a killed icppd: marked "
			 "crashed", (long long)n, n > 1 ? "s" : "");
}

/*
 * Whether the target has a path map in the database.  Validation needs
 * one (1 and a message when it has none); a measurement run only says
 * what it lacks.  Scripts (#!) and unreadable targets are not checked:
 * the process that runs is not the file named.
 */
static int check_training(const struct profile_mode *mode, struct store *st,
			  const char *file, uint64_t pid)
{
	struct module *m = target_module(file, pid);
	char other[64] = "";
	const char *path;
	int t;

	if (!m || module__error(m)) {
		module__free(m);
		return 0;
	}
	path = module__path(m);
	t = store__training(st, path, module__build_id(m), other, sizeof(other));
	if (t == STORE_OTHER_BUILD && mode->needs_training)
		log_error("%s: the database holds training for another build"
			  " of it (build-id %s; this one is %s): run 'icppd"
			  " train -- %s' again", path, other,
			  module__build_id(m)[0] ? module__build_id(m) : "none",
			  file ? file : path);
	else if (t == STORE_UNTRAINED && mode->needs_training)
		log_error("%s: no training in the database for it: run 'icppd"
			  " train -- %s' first", path, file ? file : path);
	else if (t == STORE_OTHER_BUILD)
		log_info("note: %s was trained as another build (%s): samples"
			 " are kept as context identifiers; train again to"
			 " infer call paths", path, other);
	else if (t == STORE_UNTRAINED && !mode->unwind)
		log_info("note: %s has no training yet: samples are kept as"
			 " context identifiers; 'icppd train -- %s' learns the"
			 " call paths", path, file ? file : path);
	else if (t < 0)
		log_error("%s", store__error(st));
	module__free(m);
	return mode->needs_training && t != STORE_TRAINED ? -1 : 0;
}

int profile__main(const struct profile_mode *mode, int argc, char **argv)
{
	struct profile_opts o = { .db = "icppd.db",
		.mmap_pages = mode->unwind ? 1024 : 64,
		.stack_size = PROFILE_DEFAULT_STACK };
	struct recorder r = { .mode = mode };
	struct outfile out = { 0 };
	struct launch child = { .pid = -1, .go_fd = -1, .err_fd = -1 };
	struct event_choice ev;
	struct run_info ri = { .kind = mode->cmd->name };
	char err[512], *command = NULL, attach_cmd[32];
	pid_t *tasks = NULL, self_task;
	size_t ntasks = 0;
	int first, ret = 1, status = -1, errnum;
	bool child_done = false, attach, finish_failed = false, wrote = false;
	int64_t deadline = 0;

	first = cli__parse(mode->cmd, argc, argv, &o);
	if (first < 0)
		return first == -1 ? 0 : 2;
	if (o.quiet)
		log__set_level(LOG_WARN);
	attach = o.pid != 0;
	if (attach == (first < argc)) {
		fprintf(stderr, "icppd: %s: give either -p PID or -- COMMAND"
			"\nTry 'icppd %s --help'.\n", mode->cmd->name,
			mode->cmd->name);
		return 2;
	}
	if (o.freq && o.period) {
		fprintf(stderr, "icppd: %s: -F and -c exclude each other\n"
			"Try 'icppd %s --help'.\n", mode->cmd->name,
			mode->cmd->name);
		return 2;
	}
	if (!power_of_two(o.mmap_pages)) {
		fprintf(stderr, "icppd: %s: --mmap-pages must be a power of"
			" two\nTry 'icppd %s --help'.\n", mode->cmd->name,
			mode->cmd->name);
		return 2;
	}
	if (mode->unwind && (o.stack_size % 8 || o.stack_size < 64 ||
			     o.stack_size > PROFILE_MAX_STACK)) {
		fprintf(stderr, "icppd: %s: --stack-size must be a multiple of 8"
			" from 64 to %u\nTry 'icppd %s --help'.\n",
			mode->cmd->name, PROFILE_MAX_STACK, mode->cmd->name);
		return 2;
	}
	if (mode->check_opts && mode->check_opts(&o))
		return 2;
	if (sys__inject_from_env()) {
		log_error("ICPPD_INJECT_FAULT: expected CALL:ERRNO[,...]");
		return 2;
	}
	if (!attach && launch__check(argv[first], err, sizeof(err))) {
		log_error("%s", err);
		return 1;
	}
	if (attach && kill((pid_t)o.pid, 0) && errno == ESRCH) {
		log_error("process %llu: no such process",
			  (unsigned long long)o.pid);
		return 1;
	}
	r.store = store__open(o.db, err, sizeof(err));
	if (!r.store) {
		log_error("%s", err);
		return 1;
	}
	/* before the command runs: an unwritable -o fails at once */
	if (outfile__open(&out, o.output))
		goto out_store;
	/* Validation cannot start without a path map; a measurement run
	 * says what it lacks once it is done, after its summary. */
	if (mode->needs_training &&
	    check_training(mode, r.store, attach ? NULL : argv[first], o.pid))
		goto out_store;
	if (event__choose(o.event, o.freq, o.period, &ev, err, sizeof(err))) {
		log_error("%s", err);
		goto out_store;
	}
	if (mode->unwind)
		event__add_stack(&ev, (uint32_t)o.stack_size);
	if (mode->rate_scale > 1 && !o.freq && !o.period)
		event__scale_rate(&ev, mode->rate_scale);
	r.modules = module_cache__new();
	r.agg = aggregate__new(AGGREGATE_MAX_KEYS);
	r.col = r.modules && r.agg ? collector__new(r.modules, r.agg) : NULL;
	if (r.col && mode->unwind &&
	    (!(r.paths = pathmap__new(PATHMAP_MAX_NODES)) ||
	     collector__set_unwind(r.col, path_cb, &r)))
		collector__free(r.col), r.col = NULL;
	if (!r.col || install_signals()) {
		log_error("out of memory");
		goto out_free;
	}
	if (attach) {
		if (procfs__tasks((pid_t)o.pid, &tasks, &ntasks)) {
			log_error("process %llu: cannot list its threads in /proc",
				  (unsigned long long)o.pid);
			goto out_free;
		}
		if (collector__add_running(r.col, (pid_t)o.pid))
			log_warn("process %llu: cannot read its memory map; "
				 "samples may stay unresolved",
				 (unsigned long long)o.pid);
		snprintf(attach_cmd, sizeof(attach_cmd), "pid %llu",
			 (unsigned long long)o.pid);
	} else {
		if (launch__fork(argv + first, &child, err, sizeof(err))) {
			log_error("%s", err);
			goto out_free;
		}
		self_task = child.pid;
		tasks = &self_task;
		ntasks = 1;
		ev.attr.enable_on_exec = 1;
	}
	r.sess = session__open(&ev.attr, tasks, ntasks, (size_t)o.mmap_pages,
			       err, sizeof(err), &errnum);
	if (!r.sess) {
		log_error("%s: %s", ev.name, err);
		goto out_child;
	}
	command = attach ? strdup(attach_cmd) : join_argv(argv + first);
	ri.command = command ? command : "?";
	ri.target_pid = attach ? (int64_t)o.pid : child.pid;
	ri.event = ev.name;
	ri.event_canonical = ev.canonical;
	ri.precise = ev.attr.precise_ip;
	ri.period = ev.freq ? 0 : ev.rate;
	ri.frequency = ev.freq ? ev.rate : 0;
	profile__crash_runs(r.store);
	if (store__begin_run(r.store, &ri, &r.run_id)) {
		log_error("%s", store__error(r.store));
		goto out_child;
	}
	if (ev.note[0])
		log_info("%s; using cpu-clock", ev.note);
	log_info("recording %s with %s%s, %s %llu, into %s (run %lld)",
		 ri.command, ev.name, ev.precise ? " (precise)" : "",
		 ev.freq ? "frequency (Hz)" : "period",
		 (unsigned long long)ev.rate, o.db, (long long)r.run_id);
	r.last_flush = mono_ns();
	if (o.duration > 0)
		deadline = mono_ns() + (int64_t)(o.duration * 1e9);
	if (attach) {
		if (session__enable(r.sess)) {
			log_error("enabling the events: %s", strerror(errno));
			store__end_run(r.store, r.run_id, "failed", -1);
			goto out_child;
		}
	} else if (launch__go(&child, err, sizeof(err))) {
		log_error("%s: %s", argv[first], err);
		child.pid = -1;
		store__end_run(r.store, r.run_id, "failed", 127);
		ret = 127;
		goto out_child;
	} else {
		uint64_t base;

		if (procfs__wait_main_stack_base(child.pid, EXEC_WAIT_MS, &base))
			log_warn("%s: cannot read its stack base; samples of "
				 "its main thread may stay unresolved", argv[first]);
		else
			collector__set_main_base(r.col, child.pid, base);
	}

	for (;;) {
		int mask = session__wait(r.sess, sig_pipe[0],
				collector__execs_waiting(r.col) ? 1 : POLL_MS);

		if (mask < 0) {
			log_error("poll: %s", strerror(-mask));
			break;
		}
		drain_sig_pipe();
		if (!attach && !child_done &&
		    waitpid(child.pid, &status, WNOHANG) == child.pid)
			child_done = true;
		if (read_and_flush(&r, false))
			break;
		if (child_done || stop_signal)
			break;
		if (deadline && mono_ns() >= deadline)
			break;
		if (attach && ((mask & SESSION_HUP) ||
			       (kill((pid_t)o.pid, 0) && errno == ESRCH)))
			break;
	}
	session__disable(r.sess);
	read_and_flush(&r, true);
	print_summary(&r);
	if (!mode->unwind)
		check_training(mode, r.store, attach ? NULL : argv[first], o.pid);
	if (mode->finish) {
		struct profile_result res = { .store = r.store, .run_id = r.run_id,
			.opts = &o, .stats = collector__stats(r.col),
			.paths = r.paths, .map_full = r.map_full,
			.out = out.f };

		if (mode->finish(&res))
			finish_failed = true;
		else
			wrote = true;
	}

	if (!attach && !child_done) {
		if (stop_signal) {
			/* Ctrl-C at a terminal reached the child too; a
			 * signal sent to icppd alone is passed on. */
			kill(child.pid, SIGTERM);
		}
		while (waitpid(child.pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	child.pid = -1;
	ret = attach ? 0 : exit_code(status);
	if (finish_failed && !ret)
		ret = 1;
	store__end_run(r.store, r.run_id,
		       stop_signal ? "interrupted" : "finished",
		       attach ? -1 : ret);
	goto out_free;

out_child:
	if (!attach && child.pid > 0) {
		launch__abort(&child);
		child.pid = -1;
	}
out_free:
	session__close(r.sess);
	collector__free(r.col);
	pathmap__free(r.paths);
	aggregate__free(r.agg);
	module_cache__free(r.modules);
	free(command);
	if (attach)
		free(tasks);
out_store:
	if (outfile__close(&out, wrote) && !ret)
		ret = 1;
	store__close(r.store);
	return ret;
}
