/*
 * daemon.c - the service (see daemon.h).
 *
 * One system-wide session (every CPU, every task) feeds the recorder; a
 * filter keeps the samples of watched processes only, so a process that
 * starts, or execs a watched executable, is profiled from its first
 * sample without any per-process setup.  Processes that were running
 * before the daemon, or that the kernel's records did not describe, are
 * seeded from /proc by a scan once per flush interval.  Counts are
 * flushed to SQLite (WAL: reports read while it writes) in one
 * transaction per interval.  The recorder's signal model: SIGTERM and
 * SIGINT flush and exit 0, SIGHUP reloads the settings.
 */
#define _GNU_SOURCE
#include "daemon/daemon.h"

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
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "binary/cfi_cache.h"
#include "collector/collector.h"
#include "collector/event.h"
#include "collector/procfs.h"
#include "common/sys.h"
#include "common/clock.h"
#include "common/grow.h"
#include "common/log.h"
#include "common/printable.h"
#include "daemon/ctl.h"
#include "export/export.h"
#include "record/recorder.h"
#include "schema/export_store.h"
#include "schema/retain.h"
#include "schema/store.h"

#define DAEMON_MAX_KEYS (1u << 20)
/* Learned paths held in memory between flushes (about 100 bytes each
 * with their index): a fresh map after a flush that stored one nearly
 * this big (recorder.h, max_paths). */
#define DAEMON_MAX_PATHS (1u << 18)
/* A step's longest wait: 20 ms while a process started less than
 * DAEMON_EXEC_WINDOW_NS ago (its mappings are read while it still
 * lives: its files are opened through /proc/PID; the loader maps them
 * within a few ms of the exec, which wakes the wait) or a control
 * client is being served (each step moves it on); otherwise until
 * what the clock has due (the learning window's end, the next flush,
 * scan or segment), at most a second.  A wait ends sooner when the
 * rings fill, an exec or a client comes.  At 20 ms throughout, waking
 * was a fifth of the daemon's CPU watching cc1 at 999 Hz through ten
 * makes (perf stat: 1,800 to 2,070 context switches in 22 to 26 s;
 * 1,170 to 1,260 so, and 18 to 20 % less CPU, in rounds run one after
 * the other); at 100 ms, its timeouts were a third of its wakes at 99
 * Hz (docs/benchmarks.md, "the daemon's wakes: execs it does not
 * watch"). */
#define DAEMON_POLL_MS 20
#define DAEMON_IDLE_POLL_MS 1000
#define DAEMON_EXEC_WINDOW_NS 30000000LL
/* The most the rings' default takes over all CPUs (ring_pages()). */
#define DAEMON_RINGS_BYTES ((size_t)64 << 20)

/* What the daemon watches, resolved. */
struct rules {
	char **exe;		/* canonical paths */
	size_t nexe;
	/* the file names an exe is exec'd by: the canonical path's and,
	 * where it differs, the given one's (a link's), for the exec
	 * filter */
	char **file;
	size_t nfile;
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
	struct daemon_opts o;		/* strings: only until started */
	daemon_reload_fn reload;
	void *reload_arg;
	struct rules rules;
	struct store *store;
	struct recorder *rec;
	struct cfi_cache *cfi_cache;	/* NULL: none */
	struct watched *seen;		/* processes seeded or matched */
	size_t nseen, seen_cap;
	pid_t exporter;			/* the export child, or 0 */
	int64_t export_started;		/* ... since */
	unsigned export_fails;		/* rounds failed in a row */
	int64_t export_next;		/* after a failed one: not before */
	bool stop;
	const char *exec_wakes;		/* what wakes it at execs, for status */
	char db_path[PATH_MAX], sock_path[PATH_MAX];
};

static void free_rules(struct rules *r)
{
	for (size_t i = 0; i < r->nexe; i++)
		free(r->exe[i]);
	for (size_t i = 0; i < r->ncomm; i++)
		free(r->comm[i]);
	for (size_t i = 0; i < r->nfile; i++)
		free(r->file[i]);
	free(r->exe);
	free(r->file);
	free(r->comm);
	free(r->pid);
	memset(r, 0, sizeof(*r));
}

/* Adds @path's file name to r->file, once.  0, or -1 out of memory. */
static int add_file(struct rules *r, const char *path)
{
	const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;

	for (size_t i = 0; i < r->nfile; i++)
		if (!strcmp(r->file[i], name))
			return 0;
	if (!(r->file[r->nfile] = strdup(name)))
		return -1;
	r->nfile++;
	return 0;
}

static int make_rules(const struct daemon_opts *o, struct rules *r)
{
	memset(r, 0, sizeof(*r));
	r->exe = calloc(o->exe.n + 1, sizeof(*r->exe));
	r->file = calloc(2 * o->exe.n + 1, sizeof(*r->file));
	r->comm = calloc(o->comm.n + 1, sizeof(*r->comm));
	r->pid = calloc(o->pid.n + 1, sizeof(*r->pid));
	if (!r->exe || !r->file || !r->comm || !r->pid)
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
		if (!r->exe[r->nexe++] ||
		    add_file(r, r->exe[r->nexe - 1]) ||
		    add_file(r, o->exe.v[i]))
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

/* An --export URL that is no ClickHouse URL: -1 after logging why. */
static int check_export(const struct daemon_opts *o)
{
	char target[1024];

	return o->export_url &&
	       export__target(o->export_url, target, sizeof(target)) ? -1 : 0;
}

int daemon__check_rules(const struct daemon_opts *o)
{
	struct rules r;

	if (check_export(o) || make_rules(o, &r))
		return -1;
	free_rules(&r);
	return 0;
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
	DIR *dir = sys__opendir(icppd_procdir);
	struct dirent *e;
	size_t kept = 0;

	for (size_t i = 0; i < d->nseen; i++) {
		char p[64];

		snprintf(p, sizeof(p), "%s/%u", icppd_procdir, d->seen[i].pid);
		if (!access(p, F_OK))
			d->seen[kept++] = d->seen[i];
	}
	d->nseen = kept;
	while (dir && (e = readdir(dir))) {
		char exe[PATH_MAX] = "", comm[16] = "";
		bool known;
		uint32_t pid;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		pid = (uint32_t)strtoul(e->d_name, NULL, 10);
		if (!pid || (pid_t)pid == getpid() || find_seen(d, pid))
			continue;
		/* what the rules ask of every process, no more: each read
		 * is a syscall or three, for every process of the host,
		 * every scan; a match has both read for its status line */
		known = d->rules.nexe &&
			!procfs__exe((pid_t)pid, exe, sizeof(exe));
		if (d->rules.ncomm)
			procfs__comm((pid_t)pid, (pid_t)pid, comm,
				     sizeof(comm));
		if (!matches(&d->rules, pid, known ? exe : NULL, comm))
			continue;
		if (!d->rules.nexe)	/* left "" where it fails */
			(void)procfs__exe((pid_t)pid, exe, sizeof(exe));
		if (!d->rules.ncomm)
			procfs__comm((pid_t)pid, (pid_t)pid, comm,
				     sizeof(comm));
		if (grow(&d->seen, &d->seen_cap, d->nseen + 1, sizeof(*d->seen),
			 16))
			break;
		memset(&d->seen[d->nseen], 0, sizeof(*d->seen));
		d->seen[d->nseen].pid = pid;
		memcpy(d->seen[d->nseen].comm, comm, sizeof(comm));
		memcpy(d->seen[d->nseen].exe, exe,
		       strnlen(exe, sizeof(d->seen->exe) - 1));
		d->nseen++;
		if (collector__add_running(recorder__collector(d->rec),
					   (pid_t)pid))
			log_warn("process %u: cannot read its memory map", pid);
		else
			log_info("watching process %u (%s, %s)", pid, comm, exe);
	}
	if (dir)
		closedir(dir);
}

/* The recorder's flush: the daemon's counters. */
static size_t counters(void *arg, const struct collector_stats *run,
		       struct store_counter *c, size_t max)
{
	struct daemon *d = arg;

	if (max < 2)
		return 0;
	c[0] = (struct store_counter){ "daemon.filtered", (int64_t)run->filtered };
	c[1] = (struct store_counter){ "daemon.watched_processes",
				       (int64_t)d->nseen };
	return 2;
}

static int64_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : (int64_t)st.st_size;
}

/* The export's lag, for status: what waits, since when, and why. */
static void export_status(struct daemon *d, FILE *out)
{
	int64_t pending, oldest;
	char why[512], target[1024] = "off";

	if (store__export_lag(d->store, &pending, &oldest, why, sizeof(why))) {
		fprintf(out, "export: %s\n", store__error(d->store));
		return;
	}
	if (!d->o.export_url && !pending)
		return;
	if (d->o.export_url &&
	    export__target(d->o.export_url, target, sizeof(target)))
		snprintf(target, sizeof(target), "(a URL that is not http)");
	fprintf(out, "export %s: %lld run%s waiting", target,
		(long long)pending, pending == 1 ? "" : "s");
	if (pending)
		fprintf(out, ", the oldest for %.0f s", oldest ?
			(double)(clock__real_ns() - oldest) / 1e9 : 0.0);
	fprintf(out, "%s%s%s\n", d->exporter ? "; exporting now" : "",
		*why ? "; last error: " : "", why);
}

/* What this segment cost the daemon: its CPU, a sample's share, and
 * the share of the CPU its samples stand for (each sample of -F HZ of
 * a CPU clock stands for 1/HZ s of the watched processes' CPU). */
static void own_cpu(const struct daemon *d, const struct collector_stats *run,
		    FILE *out)
{
	double ms = (double)recorder__cpu_ns(d->rec) / 1e6;

	fprintf(out, "own CPU this segment: %.0f ms", ms);
	if (run->samples && d->o.freq)
		fprintf(out, ", %.1f us a sample, %.2f %% of the %.1f s its "
			"samples stand for", 1e3 * ms / (double)run->samples,
			ms * (double)d->o.freq / (double)run->samples / 10.0,
			(double)run->samples / (double)d->o.freq);
	fputc('\n', out);
}

static void status(struct daemon *d, FILE *out)
{
	const struct collector_stats *cs = recorder__totals(d->rec);
	struct collector_stats run;	/* this segment's */

	fprintf(out, "daemon %d, run %lld\n", (int)getpid(),
		(long long)recorder__run_id(d->rec));
	fputs("database ", out);
	printable__write(out, d->db_path);
	fprintf(out, " (%lld bytes)\n", (long long)file_size(d->db_path));
	for (size_t i = 0; i < d->rules.nexe; i++) {
		fputs("watch exe ", out);
		printable__write(out, d->rules.exe[i]);
		fputc('\n', out);
	}
	for (size_t i = 0; i < d->rules.ncomm; i++) {
		fputs("watch comm ", out);
		printable__write(out, d->rules.comm[i]);
		fputc('\n', out);
	}
	for (size_t i = 0; i < d->rules.npid; i++)
		fprintf(out, "watch pid %u\n", d->rules.pid[i]);
	/* a watched user names its program and its path: one line each,
	 * whatever they hold (printable.h) */
	for (size_t i = 0; i < d->nseen; i++) {
		fprintf(out, "process %u ", d->seen[i].pid);
		printable__write(out, d->seen[i].comm);
		fputc(' ', out);
		printable__write(out, d->seen[i].exe);
		fputc('\n', out);
	}
	fprintf(out, "samples %llu, lost %llu, other processes' samples %llu\n",
		(unsigned long long)cs->samples, (unsigned long long)cs->lost,
		(unsigned long long)cs->filtered);
	fprintf(out, "modules %zu\n", recorder__modules(d->rec));
	if (d->exec_wakes)
		fprintf(out, "execs that wake the daemon: %s\n", d->exec_wakes);
	recorder__stats(d->rec, &run);
	own_cpu(d, &run, out);
	if (!d->o.no_learn) {
		struct recorder_learning l;

		recorder__learning(d->rec, &l);
		fprintf(out, "learning this segment: %llu stack samples, %llu "
			"unwound whole; %llu of %llu samples unexplained when "
			"seen", (unsigned long long)l.samples,
			(unsigned long long)l.paths,
			(unsigned long long)l.unknown,
			(unsigned long long)run.cids);
		/* the tail: what learning costs at high rates */
		if (run.leaf_samples)
			fprintf(out, "; %llu leaf copies of an identifier no "
				"path explained yet, unwound",
				(unsigned long long)run.leaf_unknown);
		fputc('\n', out);
	}
	export_status(d, out);
}

/* Retention by age and size, at each new segment. */
static void retain(struct daemon *d)
{
	int64_t deleted, before = 0;

	if (!d->o.keep_days && !d->o.max_mb)
		return;
	if (d->o.keep_days)
		before = clock__real_ns() - (int64_t)(d->o.keep_days * 86400e9);
	if (store__retain(d->store, recorder__run_id(d->rec), before,
			  (int64_t)d->o.max_mb << 20, &deleted))
		log_error("retention: %s", store__error(d->store));
	else if (deleted)
		log_info("retention: deleted %lld old run%s", (long long)deleted,
			 deleted > 1 ? "s" : "");
}

static void control(void *arg, const char *req, FILE *out)
{
	struct daemon *d = arg;

	if (!strcmp(req, "status")) {
		status(d, out);
		fprintf(out, "ok\n");
	} else if (!strcmp(req, "flush")) {
		fprintf(out, recorder__flush(d->rec) ? "error: %s\n" : "ok\n",
			store__error(d->store));
	} else if (!strcmp(req, "stop")) {
		d->stop = true;
		fprintf(out, "ok\n");
	} else {
		fputs("error: unknown request '", out);
		printable__write(out, req);
		fputs("' (status, flush, stop)\n", out);
	}
}

/*
 * The exec notifier wakes the loop at each exec so that a watched
 * process's stack base is read while it lives; an exec of a process
 * the rules refuse needs no haste, and on a machine that builds, most
 * are (make, sh, as, ld around each cc1).  With the exec tracepoint,
 * the kernel passes only the execs of the files, command names and
 * pids the rules name.  A process the filter misses that the rules
 * take (exec'd through a link of a name of its own, or renamed after
 * its exec) is read when its records are, a step later, as any is
 * without the tracepoint.  Rules no filter can hold (a name with a
 * quote or a glob's byte) leave every exec waking the loop.
 */
static void filter_execs(struct daemon *d)
{
	const struct rules *r = &d->rules;
	char filter[4096];
	bool held = !event__exec_filter((const char *const *)r->file, r->nfile,
					(const char *const *)r->comm, r->ncomm,
					r->pid, r->npid, filter, sizeof(filter));
	int ret = recorder__filter_execs(d->rec, held ? filter : NULL);

	if (ret && ret != -EOPNOTSUPP)
		log_warn("every exec wakes the daemon: the exec filter: %s",
			 strerror(-ret));
	d->exec_wakes = ret == -EOPNOTSUPP ?
		"every fork, exec and exit (no exec tracepoint: tracefs "
		"unreadable)" : ret ? "every exec (the exec filter refused)" :
		held ? "the watched programs' only (the exec tracepoint, "
		"filtered)" : "every exec (a watched name no exec filter can "
		"hold)";
}

/* SIGHUP: the reloadable settings, and the rules they give. */
static void reload(struct daemon *d)
{
	struct daemon_opts o = d->o;
	struct rules r;

	if (!d->reload || d->reload(d->reload_arg, &o) || make_rules(&o, &r)) {
		log_error("reload failed: the old settings stay");
		return;
	}
	free_rules(&d->rules);
	d->rules = r;
	d->o = o;
	recorder__set_flush_ns(d->rec, (int64_t)(d->o.flush * 1e9));
	log_info("reloaded: %zu executables, %zu names, %zu pids watched",
		 r.nexe, r.ncomm, r.npid);
	filter_execs(d);
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
	struct stat st = { 0 };
	int fd;

	snprintf(path, sizeof(path), "%s-daemon.lock", db);
	fd = sys__open(path, O_RDWR | O_CREAT | O_NOFOLLOW, 0600);
	if (fd < 0) {
		log_error("%s: %s", path, strerror(errno));
		return -1;
	}
	/* a lock another user made, that user can hold for ever */
	if (fstat(fd, &st) || st.st_uid != geteuid()) {
		log_error("%s: owned by uid %ld, not by this user: another user "
			  "can hold it; remove it, or keep the database in a "
			  "directory only you can write", path, (long)st.st_uid);
		close(fd);
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

/* A user's socket when there is no XDG_RUNTIME_DIR (%u: the uid). */
#define PRIVATE_DIR "/tmp/icppd-%u"

void daemon__default_socket(char *buf, size_t len)
{
	const char *run = getenv("XDG_RUNTIME_DIR");

	if (!geteuid())
		snprintf(buf, len, "/run/icppd/icppd.sock");
	else if (run && *run)
		snprintf(buf, len, "%s/icppd.sock", run);
	else
		snprintf(buf, len, PRIVATE_DIR "/icppd.sock",
			 (unsigned)geteuid());
}

/* When socket @sock is in the default socket's directory in /tmp, that
 * directory made or checked: ours, a directory, and closed to others,
 * so that no other user can have a socket listening there first.  0, or
 * -1 after logging why. */
static int private_dir(const char *sock)
{
	char dir[64];
	struct stat st = { 0 };
	size_t n = (size_t)snprintf(dir, sizeof(dir), PRIVATE_DIR,
				    (unsigned)geteuid());

	if (strncmp(sock, dir, n) || sock[n] != '/')
		return 0;
	if (mkdir(dir, 0700) && errno != EEXIST) {
		log_error("%s: %s", dir, strerror(errno));
		return -1;
	}
	if (lstat(dir, &st) || !S_ISDIR(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & 077)) {
		log_error("%s: not a directory of this user's only (owner uid "
			  "%ld, mode %o): another user may listen there; set "
			  "XDG_RUNTIME_DIR or give --socket", dir,
			  (long)st.st_uid, (unsigned)(st.st_mode & 07777));
		return -1;
	}
	return 0;
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

/* Paths made absolute (the daemon may chdir), the rules, the database
 * checked and locked, the socket free.  The lock's descriptor, or -1
 * after logging why. */
static int claim(struct daemon *d)
{
	char err[600];
	int lock;

	if (absolute(d->o.db, d->db_path, sizeof(d->db_path)) ||
	    (d->o.socket ? absolute(d->o.socket, d->sock_path,
				    sizeof(d->sock_path))
			 : (daemon__default_socket(d->sock_path,
						   sizeof(d->sock_path)), 0))) {
		log_error("path too long");
		return -1;
	}
	if (check_export(&d->o) || make_rules(&d->o, &d->rules) ||
	    check_db(d->db_path) ||
	    private_dir(d->sock_path) ||
	    (lock = lock_db(d->db_path)) < 0)
		return -1;
	/* the unit's RuntimeDirectory; made here when run by hand */
	if (!strcmp(d->sock_path, "/run/icppd/icppd.sock"))
		mkdir("/run/icppd", 0755);
	/* refuse a socket in use now; listen only once sampling runs, so
	 * that the socket's appearance means the daemon is ready */
	if (ctl__check(d->sock_path, err, sizeof(err))) {
		log_error("%s", err);
		close(lock);
		return -1;
	}
	return lock;
}

/*
 * -m, or the rings' default: 64 pages a CPU, or room for 800 ms of the
 * copies where they need more (the leaf copies, every sample's, cut to
 * --leaf-freq's bytes a second above it, and the learner's while on),
 * up to 1024 pages and 64 MiB over all CPUs.  A ring wakes the reader
 * a quarter full, so that is a wake every 200 ms of copies on a busy
 * CPU; with room for 200 ms (a wake every 50 ms), the rings' wakes were
 * 839 of the daemon's 1,600 watching cc1 at 99 Hz through ten makes,
 * and its waits 14 % of its CPU.  The reader waits up to 100 ms, and a
 * segment's flush as long again: at -F 999 with 8 KiB copies, 64 pages
 * (31 copies) lost 21 of 18,500 samples over ten makes of cc1, 512 none.
 */
static size_t ring_pages(const struct daemon_opts *o)
{
	uint64_t bytes = 0;	/* a second's copies on a busy CPU */
	long cpus = sysconf(_SC_NPROCESSORS_CONF), pg = sysconf(_SC_PAGESIZE);
	size_t page = pg > 0 ? (size_t)pg : 4096, pages = 64,
	       most = DAEMON_RINGS_BYTES / page / (size_t)(cpus > 0 ? cpus : 1);

	if (o->mmap_pages)
		return (size_t)o->mmap_pages;
	if (!o->no_learn)
		bytes = o->learn_freq * (o->stack_size + 256);
	if (!o->no_learn && o->leaf_stack)
		bytes += o->freq * (recorder__leaf_bytes((uint32_t)o->leaf_stack,
							 o->leaf_freq, o->freq) +
				    256);
	bytes = bytes * 4 / 5;		/* 800 ms */
	while (pages < 1024 && 2 * pages <= most && pages * page < bytes)
		pages *= 2;
	return pages;
}

/* The store, the event and the recorder's session on every CPU, and
 * the first run.  0, or -1 after logging why. */
static int start_recording(struct daemon *d, struct run_info *ri,
			   struct event_choice *ev)
{
	struct recorder_opts ro = { .max_keys = DAEMON_MAX_KEYS,
		.flush_ns = (int64_t)(d->o.flush * 1e9),
		.poll_ms = DAEMON_POLL_MS, .filter = filter, .filter_arg = d,
		.counters = counters, .counters_arg = d,
		.unwind = !d->o.no_learn,
		.learn_hz = d->o.no_learn ? 0 : d->o.learn_freq,
		.learn_stack = (uint32_t)d->o.stack_size,
		.leaf_stack = (uint32_t)d->o.leaf_stack,
		.leaf_hz = d->o.leaf_freq,
		.leaf_known = (uint32_t)d->o.leaf_known,
		.max_paths = DAEMON_MAX_PATHS, .off_cpu = d->o.off_cpu };
	pid_t all = -1;
	char err[600];
	int errnum;

	umask(077);	/* a new database is the owner's only */
	d->store = store__open(d->db_path, err, sizeof(err));
	if (!d->store) {
		log_error("%s", err);
		return -1;
	}
	if (event__choose(NULL, d->o.freq, 0, ev, err, sizeof(err))) {
		log_error("%s", err);
		return -1;
	}
	/* record's CFI cache (icppd-record(1) --no-cache): a daemon
	 * started again, or one whose module cache dropped a table it needs
	 * again (docs/daemon.md, Memory), reads what libdwarf listed of a
	 * binary's frame section from it, where listing cc1's took about
	 * 45 ms of each start, a sixth of its CPU through ten makes at
	 * 999 Hz.  Root's own directory where root runs it (the cache
	 * refuses one anyone else may write), every file checked against
	 * its section before use (binary/cfi_cache.h). */
	ro.cfi_cache = d->cfi_cache = recorder__open_cache(d->o.cache_dir);
	d->rec = recorder__new(d->store, &ro);
	if (!d->rec || recorder__catch_signals()) {
		log_error("out of memory");
		return -1;
	}
	if (recorder__open(d->rec, &ev->attr, &all, 1, ring_pages(&d->o),
			   err, sizeof(err), &errnum)) {
		log_error("%s: %s%s", ev->name, err, errnum == EACCES ||
			  errnum == EPERM ? " (sampling every CPU needs root or "
			  "CAP_PERFMON)" : "");
		return -1;
	}
	*ri = (struct run_info){ .kind = "daemon", .command = "icppd daemon",
		.target_pid = -1, .event = ev->name,
		.event_canonical = ev->canonical,
		.precise = ev->attr.precise_ip,
		.period = ev->freq ? 0 : ev->rate,
		.frequency = ev->freq ? ev->rate : 0 };
	return recorder__begin(d->rec, ri);
}

/*
 * The exporter: a child process per round, "icppd export --due", so
 * that the sample loop never waits on ClickHouse or on inferring a
 * segment's stacks.  It is exec'd, not only forked: an SQLite
 * connection must not be opened in a forked copy of a process that has
 * one open (its locks are the process's).  It ships every run due
 * (export.h keeps the backoff) and exits; the loop reaps it and starts
 * the next round when a run is due again.  Niced: shipping is never
 * more urgent than the work being profiled.
 *
 * What it reads (the segment's binaries, their debug files) is any
 * watched user's to craft, so a round has a budget: EXPORT_CPU_S of
 * CPU (RLIMIT_CPU: the kernel ends it) and EXPORT_WALL_S of wall time
 * (the loop kills it).  A round killed is a failed round: its runs stay
 * queued, retried after the backoff.  A stop waits EXPORT_STOP_S for
 * the running round, then as long again for the last segment's.
 */
#define EXPORT_CPU_S 60
#define EXPORT_WALL_S 300
#define EXPORT_STOP_S 5

static void exporter(struct daemon *d, bool all)
{
	char *argv[] = { "icppd", "export", all ? "--retry" : "--due", "-d",
			 d->db_path, (char *)d->o.export_url, NULL };
	struct rlimit cpu = { EXPORT_CPU_S, EXPORT_CPU_S + 5 }, core = { 0, 0 };
	int null = sys__open("/dev/null", O_WRONLY | O_CLOEXEC, 0);

	/* what it logs goes where the daemon's log goes; the rest away */
	if (null >= 0)
		dup2(null, STDOUT_FILENO);
	close_range(3, ~0u, 0);		/* the events, the socket, the lock */
	if (nice(10) == -1 && errno)
		log_warn("export: nice: %s", strerror(errno));
	/* SIGXCPU dumps core by default: not a root process's memory
	 * (the database's rows) into a file */
	if (setrlimit(RLIMIT_CORE, &core) || setrlimit(RLIMIT_CPU, &cpu))
		log_warn("export: setrlimit: %s", strerror(errno));
	execv("/proc/self/exe", argv);
	log_error("export: /proc/self/exe: %s", strerror(errno));
	_exit(127);
}

static void start_exporter(struct daemon *d, bool all)
{
	pid_t pid = fork();

	if (pid < 0) {
		log_error("export: fork: %s", strerror(errno));
	} else if (!pid) {
		exporter(d, all);
	} else {
		d->exporter = pid;
		d->export_started = clock__mono_ns();
	}
}

/* Reaps the exporter when it is done, and kills it when it runs past
 * @deadline (clock__mono_ns()): 1 when it is gone (its round counted),
 * 0 while it runs. */
static int reap_exporter(struct daemon *d, int64_t deadline)
{
	int status = 0;
	pid_t pid = waitpid(d->exporter, &status, WNOHANG);

	if (!pid && clock__mono_ns() >= deadline) {
		log_warn("export: the exporter ran %.1f s, past its budget: "
			 "killed, its runs stay queued",
			 (double)(clock__mono_ns() - d->export_started) / 1e9);
		kill(d->exporter, SIGKILL);
		pid = waitpid(d->exporter, &status, 0);
	}
	if (!pid)
		return 0;
	d->exporter = 0;
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU)
		log_warn("export: the exporter spent its %d s of CPU: its runs "
			 "stay queued", EXPORT_CPU_S);
	/* a round that failed (the server away): the next waits 2, 4,
	 * 8 ... s, at most an hour, whatever asks for one (a pull has no
	 * backoff of its own in the spool) */
	if (pid > 0 && WIFEXITED(status) && !WEXITSTATUS(status)) {
		d->export_fails = 0;
	} else {
		d->export_fails += d->export_fails < 12;
		d->export_next = clock__mono_ns() + ((int64_t)1 <<
			d->export_fails) * 1000000000LL;
	}
	return 1;
}

/* Waits up to EXPORT_STOP_S for the running exporter (at the stop),
 * then kills it. */
static void wait_exporter(struct daemon *d)
{
	int64_t deadline = clock__mono_ns() + EXPORT_STOP_S * 1000000000LL;

	while (d->exporter && !reap_exporter(d, deadline))
		usleep(20000);
}

/* Reaps a finished exporter (or one past its wall budget); starts one
 * when a run is due. */
static void export_round(struct daemon *d)
{
	if (d->exporter &&
	    !reap_exporter(d, d->export_started +
			   EXPORT_WALL_S * 1000000000LL))
		return;
	if (!d->o.export_url ||
	    (d->export_fails && clock__mono_ns() < d->export_next) ||
	    export__due(d->store, d->o.export_url,
			recorder__run_id(d->rec)) != 1)
		return;
	start_exporter(d, false);
}

/* A finished run goes into the spool when the daemon exports. */
static void export_queue(struct daemon *d, int64_t run_id)
{
	if (d->o.export_url)
		export__queue(d->store, run_id, d->o.export_url);	/* logs */
}

/* A step's longest wait (DAEMON_POLL_MS above): short while a client
 * is served or a watched process has just started, else until the
 * next scan or segment, at most DAEMON_IDLE_POLL_MS (the recorder
 * ends it sooner where its own clock has something due). */
static int poll_ms(const struct daemon *d, const struct ctl_server *ctl,
		   int64_t last_scan, int64_t segment_start)
{
	int64_t now = clock__mono_ns(), exec = recorder__last_exec(d->rec);
	int64_t due = segment_start + (int64_t)(d->o.segment * 1e9);

	if (ctl_server__clients(ctl) ||
	    (exec && now - exec < DAEMON_EXEC_WINDOW_NS))
		return DAEMON_POLL_MS;
	if (last_scan + (int64_t)(d->o.flush * 1e9) < due)
		due = last_scan + (int64_t)(d->o.flush * 1e9);
	due = (due - now) / 1000000 + 1;	/* ms, rounded up */
	return due < 1 ? 1 : due < DAEMON_IDLE_POLL_MS ? (int)due :
	       DAEMON_IDLE_POLL_MS;
}

/* The loop: samples, control clients, reloads, scans and segments,
 * until a stop. */
static void serve(struct daemon *d, struct ctl_server *ctl, int lfd,
		  const struct run_info *ri)
{
	int64_t last_scan = clock__mono_ns(), segment_start = last_scan;

	while (!d->stop) {
		int seen;

		recorder__set_poll_ms(d->rec, poll_ms(d, ctl, last_scan,
						      segment_start));
		seen = recorder__step(d->rec, lfd);

		if (seen < 0)
			seen = 0;	/* logged; sampling goes on */
		ctl_server__service(ctl, seen & RECORDER_EXTRA);
		if (seen & RECORDER_STOP)
			break;
		if ((seen & RECORDER_HUP) && d->o.config)
			reload(d);
		if (clock__mono_ns() - last_scan >= (int64_t)(d->o.flush * 1e9)) {
			scan(d);
			export_round(d);
			last_scan = clock__mono_ns();
		}
		if (clock__mono_ns() - segment_start >=
		    (int64_t)(d->o.segment * 1e9)) {
			int64_t ended = recorder__run_id(d->rec);

			if (recorder__next_run(d->rec, ri))
				continue;
			segment_start = clock__mono_ns();
			export_queue(d, ended);
			export_round(d);
			retain(d);
		}
	}
}

static void free_daemon(struct daemon *d)
{
	recorder__delete(d->rec);
	cfi_cache__close(d->cfi_cache);
	store__close(d->store);
	free_rules(&d->rules);
	free(d->seen);
}

int daemon__run(const struct daemon_opts *o, daemon_reload_fn reload_fn,
		void *arg)
{
	struct daemon d = { .o = *o, .reload = reload_fn, .reload_arg = arg };
	struct ctl_server *ctl = NULL;
	struct event_choice ev;
	struct run_info ri;
	char err[600];
	int ret = 1, lfd = -1, lock = claim(&d);

	if (lock < 0)
		goto out;
	if (start_recording(&d, &ri, &ev))
		goto out_socket;
	filter_execs(&d);
	if (!d.o.foreground && daemon(0, 1)) {
		log_error("cannot detach: %s", strerror(errno));
		goto out_run;
	}
	signal(SIGPIPE, SIG_IGN);
	scan(&d);
	if (recorder__enable(d.rec)) {
		log_error("enabling the events: %s", strerror(errno));
		goto out_run;
	}
	lfd = ctl__listen(d.sock_path, err, sizeof(err));
	if (lfd < 0 || !(ctl = ctl_server__new(lfd, control, &d))) {
		log_error("%s", lfd < 0 ? err : "out of memory");
		goto out_run;
	}
	log_info("daemon %d: %s at %llu Hz into %s (run %lld), rings of %zu "
		 "pages a CPU, control at %s", (int)getpid(), ev.name,
		 (unsigned long long)ev.rate, d.db_path,
		 (long long)recorder__run_id(d.rec), ring_pages(&d.o),
		 d.sock_path);
	serve(&d, ctl, lfd, &ri);
	recorder__drain(d.rec);
	ret = recorder__unstored(d.rec) ? 1 : 0;	/* logs, spills */
	log_info("stopped: run %lld flushed", (long long)recorder__run_id(d.rec));
out_run:
	recorder__end(d.rec, ret ? "failed" : "finished", -1);
	/* the last segment: one try now, sampling being over, by an
	 * exporter with the stop's budget (a failed one stays queued for
	 * the next start, or icppd export --retry) */
	wait_exporter(&d);
	if (!ret && d.o.export_url) {
		export_queue(&d, recorder__run_id(d.rec));
		start_exporter(&d, true);
		wait_exporter(&d);
	}
out_socket:
	ctl_server__delete(ctl);
	if (lfd >= 0) {
		close(lfd);
		unlink(d.sock_path);
	}
	close(lock);
out:
	free_daemon(&d);
	return ret;
}
