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

#include <stddef.h>
#include <stdint.h>

struct aggregate;
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
/* Same, with another list of migrations (unit tests). */
struct store *store__open_with(const char *path,
			       const struct store_migration *migs, int n,
			       char *err, size_t errlen);
void store__close(struct store *st);

/* "PATH: reason" for the last failed call. */
const char *store__error(const struct store *st);

struct run_info {
	const char *kind;	/* "record" */
	const char *command;	/* argv joined by spaces, or "pid N" */
	int64_t target_pid;
	const char *event;	/* user-facing name */
	const char *event_canonical;
	int precise;
	uint64_t period, frequency;	/* one of them is 0 */
};

/* Inserts a run with status 'running'; its id in *@run_id.  0 or -1. */
int store__begin_run(struct store *st, const struct run_info *ri,
		     int64_t *run_id);

struct run_totals {
	uint64_t samples, unresolved, lost, throttled;
};

/* Writes @agg and the run's totals in one transaction.  0 or -1. */
int store__flush(struct store *st, int64_t run_id,
		 const struct aggregate *agg, const struct run_totals *tot);

/* Sets status ("finished", "interrupted", "failed"), end time and exit
 * status (negative: none). */
int store__end_run(struct store *st, int64_t run_id, const char *status,
		   int exit_status);

#endif
