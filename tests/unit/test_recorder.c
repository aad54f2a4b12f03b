/*
 * test_recorder.c - the one recorder (record/recorder.h), driven the way
 * record drives it (one task, its own events) and the way the daemon
 * does (every task on every CPU, a filter, its own counters), on a child
 * that burns CPU time: both runs must reach the database through the
 * same flushes, with the same totals.
 *
 * Sized by CPU time: the child burns BURN_MS of CPU, which at 1000 Hz of
 * cpu-clock is about BURN_MS samples; the checks want a third.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../tap.h"
#include "burner.h"
#include "dbquery.h"
#include "common/clock.h"
#include "collector/event.h"
#include "record/recorder.h"
#include "schema/store.h"

#define BURN_MS 300
#define MIN_SAMPLES (BURN_MS / 3)

static pid_t watched;

static bool only_child(void *arg, uint32_t pid, const char *exe,
		       const char *comm)
{
	(void)arg; (void)exe; (void)comm;
	return (pid_t)pid == watched;
}

static size_t extra_counters(void *arg, const struct collector_stats *run,
			     struct store_counter *c, size_t max)
{
	(void)arg;
	if (!max)
		return 0;
	c[0] = (struct store_counter){ "test.filtered", (int64_t)run->filtered };
	return 1;
}

/* How a run goes: each step waits @poll_ms at most; the rings have
 * @ring_pages; the child burns @burn_ms of CPU; while it does, another
 * process holds the database's write lock for @lock_ms (0: none). */
struct spec {
	bool system_wide;
	int poll_ms;
	size_t ring_pages;
	long burn_ms;
	long lock_ms;
};

/* A process that holds @db's write lock for @ms from now, as a report
 * storing its inference does; its pid, or -1. */
static pid_t hold_lock(const char *db, long ms)
{
	pid_t pid = fork();

	if (!pid) {
		struct timespec ts = { ms / 1000, ms % 1000 * 1000000 };
		sqlite3 *h;

		if (sqlite3_open(db, &h) != SQLITE_OK ||
		    sqlite3_busy_timeout(h, 5000) != SQLITE_OK ||
		    sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL) !=
		    SQLITE_OK)
			_exit(1);
		nanosleep(&ts, NULL);
		_exit(sqlite3_exec(h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK);
	}
	return pid;
}

/* One run through the recorder; the run id, or -1 (skipped: @why). */
static int64_t one_run(const char *db, struct store *st,
		       const struct spec *sp, struct collector_stats *stats,
		       const char **why)
{
	struct recorder_opts o = { .max_keys = 64, .flush_ns = 50000000,
				   .poll_ms = sp->poll_ms };
	struct run_info ri = { .kind = sp->system_wide ? "daemon" : "record",
			       .command = "test", .event = "cpu-clock",
			       .event_canonical = "cpu-clock", .frequency = 1000 };
	struct event_choice ev;
	struct recorder *r;
	char err[512];
	int go = -1, errnum, status;
	pid_t all = -1, child, locker = -1;
	int64_t id = -1;

	if (sp->system_wide) {
		o.filter = only_child;
		o.counters = extra_counters;
	}
	if (event__choose("cpu-clock", 1000, 0, &ev, err, sizeof(err)) ||
	    !(r = recorder__new(st, &o))) {
		*why = "no cpu-clock event";
		return -1;
	}
	child = burner_spawn(sp->burn_ms, &go);
	watched = child;
	if (recorder__open(r, &ev.attr, sp->system_wide ? &all : &child, 1,
			   sp->ring_pages, err, sizeof(err), &errnum)) {
		*why = "perf_event_open refused (system-wide needs root or "
		       "CAP_PERFMON)";
		goto out;
	}
	/* seeded from /proc, as record -p and the daemon's scan do */
	if (collector__add_running(recorder__collector(r), child) ||
	    recorder__begin(r, &ri) || recorder__enable(r)) {
		*why = "cannot start the run";
		goto out;
	}
	if (write(go, "g", 1) != 1) {
		*why = "cannot start the child";
		goto out;
	}
	if (sp->lock_ms)
		locker = hold_lock(db, sp->lock_ms);
	while (waitpid(child, &status, WNOHANG) != child)
		if (recorder__step(r, -1) < 0)
			break;
	child = -1;
	recorder__drain(r);
	recorder__end(r, "finished", 0);
	recorder__stats(r, stats);
	id = recorder__run_id(r);
out:
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, &status, 0);
	}
	if (locker > 0)
		waitpid(locker, &status, 0);
	if (go >= 0)
		close(go);
	recorder__delete(r);
	return id;
}

static void check(const char *db, struct store *st, bool system_wide)
{
	const char *name = system_wide ? "daemon-style" : "record-style";
	struct spec sp = { system_wide, 10, 64, BURN_MS, 0 };
	struct collector_stats cs;
	const char *why = NULL;
	char sql[256];
	int64_t id = one_run(db, st, &sp, &cs, &why);

	if (id < 0) {
		skip(why, "%s run", name);
		return;
	}
	ok(cs.cids >= MIN_SAMPLES, "%s: %llu samples with a CID from %d ms of "
	   "CPU at 1000 Hz (want >= %d)", name, (unsigned long long)cs.cids,
	   BURN_MS, MIN_SAMPLES);
	snprintf(sql, sizeof(sql), "SELECT samples FROM v_runs WHERE run_id = "
		 "%lld", (long long)id);
	is_int(query(db, sql), cs.samples, "%s: the run's samples in the "
	       "database are the recorder's", name);
	snprintf(sql, sizeof(sql), "SELECT sum(samples) FROM v_cids WHERE "
		 "run_id = %lld", (long long)id);
	is_int(query(db, sql), cs.cids, "%s: every CID count was flushed",
	       name);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM v_cids WHERE run_id = "
		 "%lld AND pid != %d", (long long)id, (int)watched);
	is_int(query(db, sql), 0, "%s: only the child's samples", name);
	snprintf(sql, sizeof(sql), "SELECT value FROM v_run_counters WHERE "
		 "run_id = %lld AND name = 'test.filtered'", (long long)id);
	if (system_wide)
		is_int(query(db, sql), cs.filtered, "%s: the caller's counters "
		       "written with each flush", name);
	else
		is_int(query(db, sql), -1, "%s: no counters asked, none "
		       "written", name);
}

/*
 * Each step waits no longer than the next flush is due: with a poll of
 * 10 s, a run of BURN_MS of CPU still flushes every 50 ms (a step that
 * waited out its poll would flush once, at the end, 10 s later).
 */
static void check_deadline(const char *db, struct store *st)
{
	struct spec sp = { false, 10000, 64, BURN_MS, 0 };
	struct collector_stats cs;
	const char *why = NULL;
	char sql[256];
	int64_t start = clock__mono_ns(), id, ms;

	id = one_run(db, st, &sp, &cs, &why);
	ms = (clock__mono_ns() - start) / 1000000;
	if (id < 0) {
		skip(why, "a run with a long poll");
		return;
	}
	snprintf(sql, sizeof(sql), "SELECT value FROM v_run_counters WHERE "
		 "run_id = %lld AND name = 'recorder.flushes'", (long long)id);
	ok(query(db, sql) >= 3 && ms < 5000, "a 10 s poll: the flushes every "
	   "50 ms wake the steps (%lld flushes in %lld ms; want >= 3, and "
	   "under 5 s)", query(db, sql), (long long)ms);
}

/*
 * A flush that waits on the database (another process holds its write
 * lock for LOCK_MS while the child burns) loses no sample: a thread
 * reads the rings meanwhile.  Rings of 4 pages hold about 200 ms of
 * these samples, a fifth of the wait; a recorder that read them only
 * between its statements lost most of the wait's samples.
 */
#define LOCK_MS 1000
static void check_blocked_flush(const char *db, struct store *st)
{
	struct spec sp = { false, 10, 4, 3 * LOCK_MS / 2, LOCK_MS };
	struct collector_stats cs;
	const char *why = NULL;
	char sql[256];
	int64_t id = one_run(db, st, &sp, &cs, &why);

	if (id < 0) {
		skip(why, "a run whose flush waits");
		return;
	}
	snprintf(sql, sizeof(sql), "SELECT value FROM v_run_counters WHERE "
		 "run_id = %lld AND name = 'recorder.flush_reads'",
		 (long long)id);
	ok(query(db, sql) >= 1, "a flush that waits %d ms on another's lock: "
	   "the rings read meanwhile (%lld times)", LOCK_MS, query(db, sql));
	ok(cs.samples >= 3 * LOCK_MS / 2 / 3 && cs.lost * 20 <= cs.samples,
	   "... and no sample lost (%llu lost of %llu; want under 5 %%, of "
	   "at least %d)", (unsigned long long)cs.lost,
	   (unsigned long long)cs.samples, 3 * LOCK_MS / 2 / 3);
}

int main(void)
{
	char dir[] = "/tmp/icppd-recorder.XXXXXX", db[64], err[512];
	struct store *st;

	if (!mkdtemp(dir))
		return 1;
	snprintf(db, sizeof(db), "%s/r.db", dir);
	st = store__open(db, err, sizeof(err));
	ok(st != NULL, "store opens: %s", st ? "yes" : err);
	if (st) {
		check(db, st, false);
		check(db, st, true);
		check_deadline(db, st);
		check_blocked_flush(db, st);
		store__close(st);
	}
	unlink(db);
	snprintf(err, sizeof(err), "%s/r.db-wal", dir);
	unlink(err);
	snprintf(err, sizeof(err), "%s/r.db-shm", dir);
	unlink(err);
	rmdir(dir);
	return tap_done();
}
