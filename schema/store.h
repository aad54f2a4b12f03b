/*
 * store.h - the profile database (SQLite).
 *
 * Opening creates or migrates the schema: PRAGMA user_version holds the
 * version; older databases are upgraded in one transaction, newer ones
 * refused.  Journal mode is WAL so readers never block the recorder.
 * Writes come in batches: one transaction per flush of an aggregate.
 * The public query interface is the v_* views (icppd-schema(5)).
 */
#ifndef ICPPD_SCHEMA_STORE_H
#define ICPPD_SCHEMA_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct aggregate;
struct cfi_cache;
struct known_key;
struct known_set;
struct module;
struct pathmap;
struct store;

/* One step: SQL that brings user_version from (index) to (index + 1). */
struct store_migration {
	const char *sql;
};

/* The schema this build writes. */
int store__schema_version(void);

/*
 * Opens (creating if needed) the database at @path and brings its schema
 * up to date.  NULL on failure, with "PATH: reason" in @err.
 */
struct store *store__open(const char *path, char *err, size_t errlen);
/*
 * Where the writers of this process keep the state each database was
 * left whole in (binary/cfi_cache.h; NULL: nowhere, the default), open
 * until the last store closes.  A writer that finds its file still so
 * skips reading it whole for damage (PRAGMA quick_check, about 3.5 ms
 * of CPU a megabyte: a record into a grown database costs no more for
 * its size), and one that found it so or read it whole keeps its state
 * at its close, when it met no error (schema/checked.c).
 */
void store__use_check_cache(struct cfi_cache *cache);
/* Whether @st's open found the file in a state a writer left it whole
 * in, and so did not read it for damage. */
bool store__found_whole(const struct store *st);
/* Same, for a command that writes only what it derives from the
 * database (a report's inference, an export's row): no read of the
 * whole file for damage first (PRAGMA quick_check, 0.09 s of a
 * 21 MB database's report), since a damaged page fails the read that
 * meets it, saying so, and nothing recorded is at stake. */
struct store *store__open_derived(const char *path, char *err, size_t errlen);
/* Same as store__open(), with another list of migrations (unit tests). */
struct store *store__open_with(const char *path,
			       const struct store_migration *migs, int n,
			       char *err, size_t errlen);
/* Opens an existing, up-to-date database for reading only (reports on
 * a read-only file): writes fail, nothing is migrated. */
struct store *store__open_readonly(const char *path, char *err,
				  size_t errlen);
bool store__readonly(const struct store *st);
/* Whether the database and its directory are writable (WAL needs both). */
bool store__writable(const char *path);
void store__close(struct store *st);

/* "PATH: reason" for the last failed call. */
const char *store__error(const struct store *st);

/* What a lookup returns when there is nothing there (no such run, map,
 * module or stamp): neither success (0) nor failure (-1, with
 * store__error() saying why).  A name, as SQLite's SQLITE_DONE, never a
 * bare 1 (docs/architecture.md, errors). */
#define STORE_NONE 1

/* Every statement of @st stops after @ns of running from now on (the
 * default: a minute, and a second per 10 MB of the file), failing with
 * "interrupted".  For tests of that bound. */
void store__set_statement_limit(struct store *st, int64_t ns);
/* The negative errno with which a caller's row callback stopped the
 * last walk (that walk returned -1), or 0 when none did. */
int store__stopped(const struct store *st);

struct run_info {
	const char *kind;	/* "record" */
	const char *command;	/* argv joined by spaces, or "pid N" */
	int64_t target_pid;
	const char *event;	/* user-facing name */
	const char *event_canonical;
	int precise;
	uint64_t period, frequency;	/* one of them is 0 */
	bool kernel;		/* samples in the kernel count */
};

/* icppd's databases say so in PRAGMA application_id ("ICPD"); a
 * database marked otherwise is never altered. */
#define ICPPD_APPLICATION_ID 0x49435044
/* The path_maps run_id of a build's fragments (pathmap.h): the
 * innermost frames of samples whose stack copy ended first. */
#define STORE_FRAGMENTS_RUN (-1)

/* Marks the runs left 'running' whose writer @alive says is gone as
 * crashed (v_runs status 'crashed'), ended at their last flush; their
 * number in *@n.  @pid is the writer's process (0: not recorded). */
int store__crash_runs(struct store *st,
		      bool (*alive)(void *arg, const char *host, int64_t pid),
		      void *arg, int64_t *n);

/* Inserts a run with status 'running'; its id in *@run_id.  0 or -1. */
int store__begin_run(struct store *st, const struct run_info *ri,
		     int64_t *run_id);

struct run_totals {
	uint64_t samples, unresolved, lost, throttled;
};

/* A per-run figure, set (not added) by a flush. */
struct store_counter {
	const char *name;
	int64_t value;
};

/* One of learning's windows (record/recorder.c): the samples with a
 * CID, those the paths learned by then left unexplained, the stack
 * copies taken and the whole paths new to the map; in ms since the run
 * began.  Two windows starting in the same millisecond share a row. */
struct store_window {
	int64_t start_ms, end_ms;
	uint64_t samples, unexplained, copies, new_paths;
};

/* What one flush writes. */
struct store_batch {
	const struct aggregate *agg;	/* CID and unresolved counts, or NULL */
	struct run_totals tot;
	const struct store_window *windows;
	size_t nwindows;
	/* Paths whose counts are added to the database (training: the
	 * program's path map; validation with @truth: the run's own map of
	 * true paths).  NULL: none.  On success their counts are cleared;
	 * the store remembers the nodes' row ids for the next flush. */
	struct pathmap *paths;
	bool truth;
	const struct store_counter *counters;
	size_t ncounters;
	/* CIDs the run's maps explain, by program then key
	 * (known__sort()): added to each program's known_cids, which the
	 * records after read (store__read_known()). */
	const struct known_key *known;
	size_t nknown;
};

/* Program @prog's known CIDs, the keys its maps' runs stored
 * (inference/known.h), added to @k: *@n of them (0 where none, or
 * where the row is not a whole number of keys or holds more than
 * KNOWN_MAX: a crafted row reads as none).  0, or -1 with the error
 * set. */
int store__read_known(struct store *st, const struct module *prog,
		      struct known_set *k, size_t *n);

/* Writes @b in one transaction.  0 or -1.  On failure nothing of @b is
 * written and its counts stay, to be retried by the next flush. */
int store__flush(struct store *st, int64_t run_id, const struct store_batch *b);

/* Whether the executable at @path (canonical) with @build_id has a path
 * map.  On STORE_OTHER_BUILD, @other gets the build-id that was trained. */
enum store_training { STORE_TRAINED, STORE_UNTRAINED, STORE_OTHER_BUILD };
int store__training(struct store *st, const char *path, const char *build_id,
		    char *other, size_t otherlen);

/* Whether any program has a path map: 1, 0, or -1 on error. */
int store__any_training(struct store *st);

/* The stack height (bytes) at or under which @per_mille of the samples
 * fell in those of the last STORE_HEIGHT_RUNS runs that sampled the
 * executable @build_id (or, with no build-id, at @path), in *@height; 0
 * when none did.  All the programs of those runs count: a launcher
 * (make) needs copies as deep as the programs it runs (cc1).  Stack
 * copies that size unwind that share of the samples whole.  0 or -1. */
#define STORE_HEIGHT_RUNS 20
int store__height_quantile(struct store *st, const char *path,
			   const char *build_id, int per_mille,
			   int64_t *height);

/* Size of the training path map of @prog. */
struct store_map_summary {
	int64_t paths;		/* nodes: distinct paths and prefixes */
	int64_t cids;		/* distinct (function, height) */
	int64_t ambiguous_cids;	/* CIDs with more than one path */
	int64_t samples;	/* training samples in it */
};
int store__map_summary(struct store *st, const struct module *prog,
		       struct store_map_summary *out);

/* The CPU time run @run_id's command used, user and system. */
int store__run_cpu(struct store *st, int64_t run_id, int64_t user_ns,
		   int64_t system_ns);
/* Sets status ("finished", "interrupted", "failed"), end time and exit
 * status (negative: none). */
int store__end_run(struct store *st, int64_t run_id, const char *status,
		   int exit_status);

/* Drops the ids cached for modules about to be freed (the caches are
 * keyed by address: module_cache__evict's @forget). */
void store__forget_modules(struct store *st, const struct module *const *mods,
			   size_t n);

#endif
