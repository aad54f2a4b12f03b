/*
 * cmd_daemon.c - "icppd daemon": continuous profiling of the processes
 * it is told to watch (by PID, executable or command name), and "icppd
 * ctl", which talks to it.
 *
 * One system-wide sampling session (every CPU, every task) feeds the
 * collector; a filter keeps the samples of watched processes only, so a
 * process that starts, or execs a watched executable, is profiled from
 * its first sample without any per-process setup.  Processes that were
 * running before the daemon, or that the kernel's records did not
 * describe, are seeded from /proc by a scan at every flush.  Counts are
 * flushed to SQLite (WAL: reports read while it writes) in one
 * transaction per interval.  Signal handlers only set flags; the loop
 * does the work: SIGTERM/SIGINT flush and exit 0, SIGHUP reloads the
 * configuration file.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "binary/module.h"
#include "collector/aggregate.h"
#include "collector/collector.h"
#include "collector/event.h"
#include "collector/procfs.h"
#include "collector/session.h"
#include "common/grow.h"
#include "daemon/commands.h"
#include "daemon/conffile.h"
#include "daemon/ctl.h"
#include "daemon/log.h"
#include "daemon/profile.h"
#include "schema/retain.h"
#include "schema/store.h"

#define DAEMON_MAX_KEYS (1u << 20)

#define OPT(f) offsetof(struct daemon_opts, f)
static const struct cli_option daemon_options[] = {
	{ "config", 'c', CLI_STRING, OPT(config), "FILE",
	  "read settings from FILE (see icppd.conf(5))", 0, 0 },
	{ "foreground", 0, CLI_FLAG, OPT(foreground), NULL,
	  "stay in the foreground (systemd, tests)", 0, 0 },
	{ "database", 'd', CLI_STRING, OPT(db), "FILE",
	  "profile database (default icppd.db)", 0, 0 },
	{ "socket", 0, CLI_STRING, OPT(socket), "PATH",
	  "control socket (default /run/icppd/icppd.sock for root)", 0, 0 },
	{ "freq", 'F', CLI_UINT, OPT(freq), "HZ",
	  "samples per second of CPU time (default 99)", 1, 100000 },
	{ "exe", 0, CLI_LIST, OPT(exe), "PATH",
	  "watch processes running this executable (repeatable)", 0, 0 },
	{ "comm", 0, CLI_LIST, OPT(comm), "NAME",
	  "watch processes with this command name (repeatable)", 0, 0 },
	{ "pid", 'p', CLI_LIST, OPT(pid), "PID",
	  "watch this process (repeatable)", 0, 0 },
	{ "flush-interval", 0, CLI_SECONDS, OPT(flush), "S",
	  "write to the database every S seconds (default 10)", 0, 0 },
	{ "segment", 0, CLI_SECONDS, OPT(segment), "S",
	  "start a new run every S seconds (default 600): the time step "
	  "of report --since/--until", 0, 0 },
	{ "keep-days", 0, CLI_SECONDS, OPT(keep_days), "D",
	  "delete the daemon's runs older than D days (default: keep)",
	  0, 0 },
	{ "max-size", 0, CLI_UINT, OPT(max_mb), "MB",
	  "delete the oldest daemon runs while the database uses more than "
	  "MB megabytes (default: no limit)", 1, 1u << 30 },
	{ "mmap-pages", 'm', CLI_UINT, OPT(mmap_pages), "N",
	  "ring buffer pages per CPU, a power of two (default 64)", 1, 65536 },
};

const struct cli_command daemon_command = {
	.name = "daemon",
	.synopsis = "[-c CONFIG] [--foreground] [-d DB] [--socket PATH] [-F HZ]\n"
		    "       [--exe PATH]... [--comm NAME]... [--pid PID]...",
	.brief = "continuous, low-overhead call-path profiling of running processes",
	.summary = "Profile the watched processes continuously, at a low rate,\n"
		   "into the database; control it with icppd ctl.",
	.options = daemon_options,
	.noptions = sizeof(daemon_options) / sizeof(daemon_options[0]),
	.permute = true,
	.epilog = "Needs permission to sample every CPU (root, or CAP_PERFMON).\n"
		  "See icppd-daemon(8), icppd.conf(5) and icppd-ctl(1).\n",
};

/* What the daemon watches, resolved. */
struct rules {
	char **exe;		/* canonical paths */
	size_t nexe;
	char **comm;
	size_t ncomm;
	uint32_t *pid;
	size_t npid;
};

/* A watched process, for status. */
struct watched {
	uint32_t pid;
	char comm[16];
	char exe[256];
};

struct daemon {
	struct daemon_opts o;
	char **config_lines;		/* strings the options point into */
	size_t nconfig, config_cap;
	struct daemon_opts *pending;	/* what a file being loaded sets */
	struct rules rules;
	struct store *store;
	struct module_cache *modules;
	struct aggregate *agg;
	struct collector *col;
	struct session *sess;
	int64_t run_id;
	struct watched *seen;		/* processes seeded or matched */
	size_t nseen, seen_cap;
	bool flush_failed;
	struct collector_stats base;	/* totals when this run began */
	char db_path[PATH_MAX], sock_path[PATH_MAX];
};

static volatile sig_atomic_t stop_flag, reload_flag;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		reload_flag = 1;
	else
		stop_flag = 1;
}

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A setting of the file: a copy the options point into, kept until a
 * reload replaces it. */
static int set_config(void *arg, const char *key, const char *val,
		      char *err, size_t errlen)
{
	struct daemon *d = arg;
	char *copy = strdup(val);

	if (!copy || grow(&d->config_lines, &d->config_cap, d->nconfig + 1,
			  sizeof(*d->config_lines), 16)) {
		free(copy);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	d->config_lines[d->nconfig++] = copy;
	return cli__set(&daemon_command, key, copy, d->pending, err, errlen);
}

static int load_config(struct daemon *d, const char *path,
		       struct daemon_opts *o)
{
	char *text;
	int ret;

	if (config__read(path, &text))
		return -1;
	d->pending = o;
	ret = config__parse(text, path, set_config, d);
	d->pending = NULL;
	free(text);
	return ret;
}

/* The options: defaults, then the configuration file, then argv. */
static int settings(struct daemon *d, int argc, char **argv,
		    struct daemon_opts *o)
{
	struct daemon_opts first;
	int idx;

	config__defaults(&first);
	idx = cli__parse(&daemon_command, argc, argv, &first);
	if (idx < 0)
		return idx;
	if (idx < argc) {
		fprintf(stderr, "icppd: daemon: unexpected argument '%s'\n"
			"Try 'icppd daemon --help'.\n", argv[idx]);
		return -2;
	}
	config__defaults(o);
	if (first.config && load_config(d, first.config, o))
		return -3;
	return cli__parse(&daemon_command, argc, argv, o) < 0 ? -2 : 0;
}

static void free_rules(struct rules *r)
{
	for (size_t i = 0; i < r->nexe; i++)
		free(r->exe[i]);
	for (size_t i = 0; i < r->ncomm; i++)
		free(r->comm[i]);
	free(r->exe);
	free(r->comm);
	free(r->pid);
	memset(r, 0, sizeof(*r));
}

static int make_rules(const struct daemon_opts *o, struct rules *r)
{
	memset(r, 0, sizeof(*r));
	r->exe = calloc(o->exe.n + 1, sizeof(*r->exe));
	r->comm = calloc(o->comm.n + 1, sizeof(*r->comm));
	r->pid = calloc(o->pid.n + 1, sizeof(*r->pid));
	if (!r->exe || !r->comm || !r->pid)
		goto out_nomem;
	for (size_t i = 0; i < o->exe.n; i++) {
		char real[PATH_MAX];

		if (!*o->exe.v[i]) {
			log_error("--exe: expected an executable's path, not ''");
			free_rules(r);
			return -1;
		}

		/* a path not there yet may appear later, as given */
		r->exe[r->nexe] = strdup(realpath(o->exe.v[i], real) ?
					 real : o->exe.v[i]);
		if (!r->exe[r->nexe++])
			goto out_nomem;
	}
	for (size_t i = 0; i < o->comm.n; i++) {
		if (!*o->comm.v[i]) {
			log_error("--comm: expected a command name, not ''");
			free_rules(r);
			return -1;
		}
		if (!(r->comm[r->ncomm++] = strdup(o->comm.v[i])))
			goto out_nomem;
	}
	for (size_t i = 0; i < o->pid.n; i++) {
		char *end;
		unsigned long v = strtoul(o->pid.v[i], &end, 10);

		if (end == o->pid.v[i] || *end || !v || v > INT32_MAX) {
			log_error("--pid: not a process id: '%s'", o->pid.v[i]);
			free_rules(r);
			return -1;
		}
		r->pid[r->npid++] = (uint32_t)v;
	}
	return 0;
out_nomem:
	free_rules(r);
	log_error("out of memory");
	return -1;
}

static bool matches(const struct rules *r, uint32_t pid, const char *exe,
		    const char *comm)
{
	for (size_t i = 0; i < r->npid; i++)
		if (r->pid[i] == pid)
			return true;
	for (size_t i = 0; exe && i < r->nexe; i++)
		if (!strcmp(r->exe[i], exe))
			return true;
	for (size_t i = 0; comm && *comm && i < r->ncomm; i++)
		if (!strncmp(r->comm[i], comm, 15))
			return true;
	return false;
}

static bool filter(void *arg, uint32_t pid, const char *exe, const char *comm)
{
	return matches(&((struct daemon *)arg)->rules, pid, exe, comm);
}

static struct watched *find_seen(struct daemon *d, uint32_t pid)
{
	for (size_t i = 0; i < d->nseen; i++)
		if (d->seen[i].pid == pid)
			return &d->seen[i];
	return NULL;
}

/*
 * Seeds every running process that matches and was not seeded yet from
 * /proc (its mappings, stack base, thread names); forgets those gone.
 */
static void scan(struct daemon *d)
{
	DIR *dir = opendir("/proc");
	struct dirent *e;
	size_t kept = 0;

	for (size_t i = 0; i < d->nseen; i++) {
		char p[32];

		snprintf(p, sizeof(p), "/proc/%u", d->seen[i].pid);
		if (!access(p, F_OK))
			d->seen[kept++] = d->seen[i];
	}
	d->nseen = kept;
	while (dir && (e = readdir(dir))) {
		char link[64], exe[PATH_MAX], comm[16] = "";
		uint32_t pid;
		ssize_t n;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		pid = (uint32_t)strtoul(e->d_name, NULL, 10);
		if (!pid || (pid_t)pid == getpid() || find_seen(d, pid))
			continue;
		snprintf(link, sizeof(link), "/proc/%u/exe", pid);
		n = readlink(link, exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = '\0';
		procfs__comm((pid_t)pid, (pid_t)pid, comm, sizeof(comm));
		if (!matches(&d->rules, pid, n > 0 ? exe : NULL, comm))
			continue;
		if (grow(&d->seen, &d->seen_cap, d->nseen + 1, sizeof(*d->seen),
			 16))
			break;
		memset(&d->seen[d->nseen], 0, sizeof(*d->seen));
		d->seen[d->nseen].pid = pid;
		memcpy(d->seen[d->nseen].comm, comm, sizeof(comm));
		memcpy(d->seen[d->nseen].exe, exe,
		       strnlen(exe, sizeof(d->seen->exe) - 1));
		d->nseen++;
		if (collector__add_running(d->col, (pid_t)pid))
			log_warn("process %u: cannot read its memory map", pid);
		else
			log_info("watching process %u (%s, %s)", pid, comm, exe);
	}
	if (dir)
		closedir(dir);
}

static void forget_modules(void *arg, const struct module *const *mods,
			   size_t n)
{
	store__forget_modules(arg, mods, n);
}

static int flush(struct daemon *d)
{
	const struct collector_stats *cs = collector__stats(d->col);
	struct store_counter counters[] = {
		{ "daemon.filtered", (int64_t)(cs->filtered -
					       d->base.filtered) },
		{ "daemon.watched_processes", (int64_t)d->nseen } };
	struct store_batch b = { .agg = d->agg, .tot = {
		cs->samples - d->base.samples,
		cs->unresolved - d->base.unresolved, cs->lost - d->base.lost,
		cs->throttled - d->base.throttled }, .counters = counters,
		.ncounters = 2 };

	if (store__flush(d->store, d->run_id, &b)) {
		/* keep the counts for the next flush; say so once */
		if (!d->flush_failed)
			log_error("flush failed, counts kept for the next one: "
				  "%s", store__error(d->store));
		d->flush_failed = true;
		if (aggregate__full(d->agg))
			aggregate__clear(d->agg);	/* bounded memory */
		return -1;
	}
	if (d->flush_failed)
		log_info("flushing again");
	d->flush_failed = false;
	aggregate__clear(d->agg);
	/* Nothing counted refers to a module now: those no process maps
	 * go beyond the cache's bounds (a user mapping file after file
	 * must not grow the daemon), and the store forgets their ids. */
	module_cache__evict(d->modules, forget_modules, d->store);
	return 0;
}

static int64_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : (int64_t)st.st_size;
}

static void status(struct daemon *d, FILE *out)
{
	const struct collector_stats *cs = collector__stats(d->col);

	fprintf(out, "daemon %d, run %lld\n", (int)getpid(),
		(long long)d->run_id);
	fprintf(out, "database %s (%lld bytes)\n", d->db_path,
		(long long)file_size(d->db_path));
	for (size_t i = 0; i < d->rules.nexe; i++)
		fprintf(out, "watch exe %s\n", d->rules.exe[i]);
	for (size_t i = 0; i < d->rules.ncomm; i++)
		fprintf(out, "watch comm %s\n", d->rules.comm[i]);
	for (size_t i = 0; i < d->rules.npid; i++)
		fprintf(out, "watch pid %u\n", d->rules.pid[i]);
	for (size_t i = 0; i < d->nseen; i++)
		fprintf(out, "process %u %s %s\n", d->seen[i].pid,
			d->seen[i].comm, d->seen[i].exe);
	fprintf(out, "samples %llu, lost %llu, other processes' samples %llu\n",
		(unsigned long long)cs->samples, (unsigned long long)cs->lost,
		(unsigned long long)cs->filtered);
	fprintf(out, "modules %zu\n", module_cache__count(d->modules));
}

/* Retention by age and size, at each new segment. */
static void retain(struct daemon *d)
{
	struct timespec now;
	int64_t deleted, before = 0;

	if (!d->o.keep_days && !d->o.max_mb)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	if (d->o.keep_days)
		before = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec -
			 (int64_t)(d->o.keep_days * 86400e9);
	if (store__retain(d->store, d->run_id, before,
			  (int64_t)d->o.max_mb << 20, &deleted))
		log_error("retention: %s", store__error(d->store));
	else if (deleted)
		log_info("retention: deleted %lld old run%s", (long long)deleted,
			 deleted > 1 ? "s" : "");
}

/*
 * Ends the current run and starts the next one, so that reports can
 * pick runs by time.  The collector's totals grow across runs: the new
 * run's totals start from zero as offsets.  0 or -1 (the old run goes
 * on).
 */
static int next_segment(struct daemon *d, const struct run_info *ri)
{
	int64_t next;

	collector__read(d->col, d->sess, false);
	if (flush(d) || store__begin_run(d->store, ri, &next))
		return -1;
	store__end_run(d->store, d->run_id, "finished", -1);
	d->run_id = next;
	d->base = *collector__stats(d->col);
	retain(d);
	return 0;
}

static void control(void *arg, const char *req, FILE *out)
{
	struct daemon *d = arg;

	if (!strcmp(req, "status")) {
		status(d, out);
		fprintf(out, "ok\n");
	} else if (!strcmp(req, "flush")) {
		collector__read(d->col, d->sess, false);
		fprintf(out, flush(d) ? "error: %s\n" : "ok\n",
			store__error(d->store));
	} else if (!strcmp(req, "stop")) {
		stop_flag = 1;
		fprintf(out, "ok\n");
	} else {
		fprintf(out, "error: unknown request '%s' (status, flush, "
			"stop)\n", req);
	}
}

/* The configuration strings from @from on. */
static void free_config(struct daemon *d, size_t from)
{
	for (size_t i = from; i < d->nconfig; i++)
		free(d->config_lines[i]);
	d->nconfig = from;
}

/* After startup only the rules (their own copies) and the numbers
 * below outlive a load, so a reload frees the old file's strings. */
static void reload(struct daemon *d, int argc, char **argv)
{
	struct daemon_opts o;
	struct rules r;
	size_t old = d->nconfig;

	if (settings(d, argc, argv, &o) || make_rules(&o, &r)) {
		free_config(d, old);
		log_error("reload failed: the old settings stay");
		return;
	}
	for (size_t i = 0; i < old; i++)
		free(d->config_lines[i]);
	memmove(d->config_lines, d->config_lines + old,
		(d->nconfig - old) * sizeof(*d->config_lines));
	d->nconfig -= old;
	free_rules(&d->rules);
	d->rules = r;
	d->o.exe = o.exe;
	d->o.comm = o.comm;
	d->o.pid = o.pid;
	d->o.flush = o.flush;
	d->o.segment = o.segment;
	d->o.keep_days = o.keep_days;
	d->o.max_mb = o.max_mb;
	log_info("reloaded: %zu executables, %zu names, %zu pids watched",
		 r.nexe, r.ncomm, r.npid);
	scan(d);
}

/*
 * The database, which root fills with every watched process's profile:
 * not a symbolic link, owned by this user and writable by no one else,
 * and under folders that only root or this user can change all the way
 * up (a folder another user can write to, without the sticky bit, lets
 * that user swap what is below it; a sticky one, as /tmp, does not).
 */
static int check_db(const char *path)
{
	char dir[PATH_MAX], real[PATH_MAX], *slash;
	struct stat st;

	if (!lstat(path, &st)) {
		if (S_ISLNK(st.st_mode) || !S_ISREG(st.st_mode) ||
		    (st.st_mode & 022) || st.st_uid != geteuid()) {
			log_error("%s: refused: %s", path, S_ISLNK(st.st_mode) ?
				  "a symbolic link" : !S_ISREG(st.st_mode) ?
				  "not a regular file" : st.st_mode & 022 ?
				  "writable by group or others (chmod go-w)" :
				  "owned by another user (it could read every "
				  "profile)");
			return -1;
		}
	}
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	else
		strcpy(dir, ".");
	if (!realpath(dir, real)) {
		log_error("%s: %s", dir, strerror(errno));
		return -1;
	}
	for (;;) {
		if (stat(real, &st))
			break;
		if ((st.st_uid && st.st_uid != geteuid()) ||
		    ((st.st_mode & 022) && !(st.st_mode & S_ISVTX))) {
			log_error("%s: refused: the folder %s is %s", path, real,
				  st.st_mode & 022 && !(st.st_mode & S_ISVTX) ?
				  "writable by group or others" :
				  "owned by another user");
			return -1;
		}
		if (!strcmp(real, "/"))
			break;
		slash = strrchr(real, '/');
		*(slash == real ? slash + 1 : slash) = '\0';
	}
	return 0;
}

/* One daemon per database: a lock held while it runs. */
static int lock_db(const char *db)
{
	char path[PATH_MAX + 16];
	int fd;

	snprintf(path, sizeof(path), "%s-daemon.lock", db);
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		log_error("%s: %s", path, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		log_error("%s: another icppd daemon is using this database",
			  db);
		close(fd);
		return -1;
	}
	return fd;
}

static void default_socket(char *buf, size_t len)
{
	const char *run = getenv("XDG_RUNTIME_DIR");

	if (!geteuid())
		snprintf(buf, len, "/run/icppd/icppd.sock");
	else if (run && *run)
		snprintf(buf, len, "%s/icppd.sock", run);
	else
		snprintf(buf, len, "/tmp/icppd-%u.sock", (unsigned)geteuid());
}

static int absolute(const char *path, char *out, size_t len)
{
	char cwd[PATH_MAX];

	if (path[0] == '/')
		return snprintf(out, len, "%s", path) >= (int)len ? -1 : 0;
	if (!getcwd(cwd, sizeof(cwd)))
		return -1;
	return snprintf(out, len, "%s/%s", cwd, path) >= (int)len ? -1 : 0;
}

static void free_daemon(struct daemon *d)
{
	session__close(d->sess);
	collector__free(d->col);
	aggregate__free(d->agg);
	module_cache__free(d->modules);
	store__close(d->store);
	free_rules(&d->rules);
	free_config(d, 0);
	free(d->config_lines);
	free(d->seen);
}

int cmd_daemon(int argc, char **argv)
{
	struct daemon d = { 0 };
	struct event_choice ev;
	struct run_info ri = { .kind = "daemon", .command = "icppd daemon",
			       .target_pid = -1 };
	struct sigaction sa = { .sa_handler = on_signal };
	pid_t all = -1;
	char err[600];
	int ret = 1, lfd = -1, lock = -1, errnum, r;
	struct ctl_server *ctl = NULL;
	int64_t last_flush, segment_start;

	r = settings(&d, argc, argv, &d.o);
	if (r) {
		ret = r == -1 ? 0 : r == -3 ? 1 : 2;	/* -1: --help */
		goto out;
	}
	/* A configuration file may watch nothing yet: the installed one
	 * does, and a reload adds what to watch. */
	if (!d.o.exe.n && !d.o.comm.n && !d.o.pid.n && !d.o.config) {
		fprintf(stderr, "icppd: daemon: nothing to watch: give --exe, "
			"--comm or --pid (or a configuration file)\n"
			"Try 'icppd daemon --help'.\n");
		ret = 2;
		goto out;
	}
	if (d.o.mmap_pages & (d.o.mmap_pages - 1)) {
		fprintf(stderr, "icppd: daemon: --mmap-pages must be a power of "
			"two\n");
		ret = 2;
		goto out;
	}
	if (absolute(d.o.db, d.db_path, sizeof(d.db_path)) ||
	    (d.o.socket ? absolute(d.o.socket, d.sock_path, sizeof(d.sock_path))
			: (default_socket(d.sock_path, sizeof(d.sock_path)), 0))) {
		log_error("path too long");
		goto out;
	}
	if (make_rules(&d.o, &d.rules) || check_db(d.db_path) ||
	    (lock = lock_db(d.db_path)) < 0)
		goto out;
	/* refuse a socket in use now; listen only once sampling runs, so
	 * that the socket's appearance means the daemon is ready */
	/* the unit's RuntimeDirectory; made here when run by hand */
	if (!strcmp(d.sock_path, "/run/icppd/icppd.sock"))
		mkdir("/run/icppd", 0755);
	if (ctl__check(d.sock_path, err, sizeof(err))) {
		log_error("%s", err);
		goto out;
	}
	umask(077);	/* a new database is the owner's only */
	d.store = store__open(d.db_path, err, sizeof(err));
	if (!d.store) {
		log_error("%s", err);
		goto out_socket;
	}
	if (event__choose(NULL, d.o.freq, 0, &ev, err, sizeof(err))) {
		log_error("%s", err);
		goto out_socket;
	}
	d.modules = module_cache__new();
	d.agg = aggregate__new(DAEMON_MAX_KEYS);
	d.col = d.modules && d.agg ? collector__new(d.modules, d.agg) : NULL;
	if (!d.col) {
		log_error("out of memory");
		goto out_socket;
	}
	collector__set_filter(d.col, filter, &d);
	d.sess = session__open(&ev.attr, &all, 1, (size_t)d.o.mmap_pages, err,
			       sizeof(err), &errnum);
	if (!d.sess) {
		log_error("%s: %s%s", ev.name, err, errnum == EACCES ||
			  errnum == EPERM ? " (sampling every CPU needs root or "
			  "CAP_PERFMON)" : "");
		goto out_socket;
	}
	ri.event = ev.name;
	ri.event_canonical = ev.canonical;
	ri.precise = ev.attr.precise_ip;
	ri.period = ev.freq ? 0 : ev.rate;
	ri.frequency = ev.freq ? ev.rate : 0;
	profile__crash_runs(d.store);
	if (store__begin_run(d.store, &ri, &d.run_id)) {
		log_error("%s", store__error(d.store));
		goto out_socket;
	}
	if (!d.o.foreground && daemon(0, 1)) {
		log_error("cannot detach: %s", strerror(errno));
		goto out_run;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	scan(&d);
	if (session__enable(d.sess)) {
		log_error("enabling the events: %s", strerror(errno));
		goto out_run;
	}
	lfd = ctl__listen(d.sock_path, err, sizeof(err));
	if (lfd < 0) {
		log_error("%s", err);
		goto out_run;
	}
	ctl = ctl_server__new(lfd, control, &d);
	if (!ctl) {
		log_error("out of memory");
		goto out_run;
	}
	log_info("daemon %d: %s at %llu Hz into %s (run %lld), control at %s",
		 (int)getpid(), ev.name, (unsigned long long)ev.rate,
		 d.db_path, (long long)d.run_id, d.sock_path);
	last_flush = segment_start = mono_ns();
	while (!stop_flag) {
		/* 20 ms: a new process's mappings are read while it
		 * still lives (its files are opened through /proc/PID),
		 * and a pending control client waits no longer; 1 ms
		 * while an exec's stack base waits for the exec to end
		 * (an exec wakes the poll: session__execs). */
		int mask = session__wait(d.sess, lfd,
				collector__execs_waiting(d.col) ? 1 : 20);

		(void)mask;	/* clients are served either way */
		ctl_server__service(ctl);
		if (reload_flag) {
			reload_flag = 0;
			if (d.o.config)
				reload(&d, argc, argv);
		}
		if (collector__read(d.col, d.sess, false))
			log_warn("reading samples failed");
		if (mono_ns() - last_flush >= (int64_t)(d.o.flush * 1e9) ||
		    aggregate__full(d.agg)) {
			flush(&d);
			scan(&d);
			last_flush = mono_ns();
		}
		if (mono_ns() - segment_start >= (int64_t)(d.o.segment * 1e9) &&
		    !next_segment(&d, &ri))
			segment_start = mono_ns();
	}
	session__disable(d.sess);
	collector__read(d.col, d.sess, true);
	ret = flush(&d) ? 1 : 0;
	log_info("stopped: run %lld flushed", (long long)d.run_id);
out_run:
	store__end_run(d.store, d.run_id, ret ? "failed" : "finished", -1);
out_socket:
	ctl_server__free(ctl);
	if (lfd >= 0) {
		close(lfd);
		unlink(d.sock_path);
	}
out:
	if (lock >= 0)
		close(lock);
	free_daemon(&d);
	return ret;
}

/* ---- icppd ctl ----------------------------------------------------------- */

struct ctl_opts {
	const char *socket;
};

static const struct cli_option ctl_options[] = {
	{ "socket", 0, CLI_STRING, offsetof(struct ctl_opts, socket), "PATH",
	  "the daemon's control socket (default as icppd daemon)", 0, 0 },
};

const struct cli_command ctl_command = {
	.name = "ctl",
	.synopsis = "[--socket PATH] status|flush|stop",
	.brief = "control a running icppd daemon",
	.summary = "Ask a running icppd daemon for its status, to flush now, or\n"
		   "to stop.",
	.options = ctl_options,
	.noptions = 1,
	.permute = true,
	.epilog = "See icppd-ctl(1).\n",
};

int cmd_ctl(int argc, char **argv)
{
	struct ctl_opts o = { 0 };
	char path[PATH_MAX];
	int idx;

	/* every other subcommand takes -d: say why this one does not */
	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], "-d", 2) ||
		    !strncmp(argv[i], "--database", 10)) {
			fprintf(stderr, "icppd: ctl: %s: ctl talks to the daemon "
				"through its control socket, not to a database: "
				"give --socket PATH ('icppd ctl status' names the "
				"daemon's database)\n", argv[i]);
			return 2;
		}
	idx = cli__parse(&ctl_command, argc, argv, &o);
	if (idx < 0)
		return idx == -1 ? 0 : 2;
	if (argc - idx != 1 || (strcmp(argv[idx], "status") &&
	    strcmp(argv[idx], "flush") && strcmp(argv[idx], "stop"))) {
		fprintf(stderr, "icppd: ctl: expected status, flush or stop\n"
			"Try 'icppd ctl --help'.\n");
		return 2;
	}
	if (o.socket)
		snprintf(path, sizeof(path), "%s", o.socket);
	else
		default_socket(path, sizeof(path));
	return ctl__request(path, argv[idx]);
}
