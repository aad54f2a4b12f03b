/*
 * export_store.h - the export spool (schema 12): which runs wait for
 * which ClickHouse server, and the rows an export ships.
 */
#ifndef ICPPD_SCHEMA_EXPORT_STORE_H
#define ICPPD_SCHEMA_EXPORT_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "schema/store.h"

/* The database's random id, 32 hex digits, into @out. */
int store__database_id(struct store *st, char *out, size_t len);

/* Queues run @run_id for @target (once: a queued or done run stays). */
int store__export_queue(struct store *st, int64_t run_id, const char *target,
			int64_t now_ns);
/* Queues every finished measurement run (record, daemon) with samples
 * that @target has not queued or taken yet; how many in *@n. */
int store__export_queue_all(struct store *st, const char *target,
			    int64_t now_ns, int64_t *n);

/* Up to @max runs pending for @target whose next try is due by @now_ns
 * (every pending one when @now_ns < 0), oldest first, with their tries
 * so far; their number in *@n. */
int store__export_due(struct store *st, const char *target, int64_t now_ns,
		      int64_t *runs, int64_t *attempts, size_t max, size_t *n);
/* The server acknowledged run @run_id's rows. */
int store__export_done(struct store *st, int64_t run_id, const char *target,
		       int64_t stack_rows, int64_t cid_rows, int64_t now_ns);
/* A try failed: tries @attempts so far, the next not before @next_ns. */
int store__export_failed(struct store *st, int64_t run_id, const char *target,
			 int64_t attempts, int64_t next_ns, const char *why);
/* How many runs wait (any target), when the oldest was queued (0:
 * none), and the latest failed try's error into @why ("" when none). */
int store__export_lag(struct store *st, int64_t *pending, int64_t *oldest_ns,
		      char *why, size_t len);

/* A run's samples by process, command and CID, with names; then its
 * switches out of each (record --off-cpu), @offcpu set, with the time
 * their threads were blocked after them. */
struct store_cid_row {
	int64_t pid, height, samples;	/* samples, or switches */
	bool offcpu;
	int64_t blocked_ns;
	const char *comm, *program, *program_build, *module, *build_id,
		   *function;		/* valid in the callback */
};
int store__export_cids(struct store *st, int64_t run_id,
		       int (*fn)(void *arg, const struct store_cid_row *r),
		       void *arg);
/* Each process of run @run_id with the program it ran (its CIDs' most
 * common; "" when unknown). */
int store__export_programs(struct store *st, int64_t run_id,
			   int (*fn)(void *arg, int64_t pid, const char *path,
				     const char *build_id),
			   void *arg);
/* Run @run_id's host name ("" when unknown) into @out. */
int store__run_host(struct store *st, int64_t run_id, char *out, size_t len);

/*
 * Fleet learning.  The path maps of run @run_id's programs, as this
 * database learned them: each node with its own counts (a pull's are
 * taken off), nodes no own sample passed through left out, parents
 * first.  The node ids are this database's.
 */
struct store_path_row {
	int64_t node, parent;		/* parent 0: an outermost frame */
	int64_t address, call_site, height, self, total;
	const char *program, *program_build, *module, *module_build,
		   *function;		/* valid in the callback */
};
int store__export_paths(struct store *st, int64_t run_id,
			int (*fn)(void *arg, const struct store_path_row *r),
			void *arg);

/* Each program build run @run_id sampled (or, with @run_id 0, none)
 * plus @also (may be NULL) that @target was never asked for, or that
 * it had no paths for when asked before @retry_ns: @fn with each (a
 * positive return stops, and is returned). */
int store__pull_needed(struct store *st, int64_t run_id, const char *also,
		       const char *target, int64_t retry_ns,
		       int (*fn)(void *arg, const char *build_id), void *arg);
/* A pull of @build_id from @target: what it merged. */
int store__pull_done(struct store *st, const char *build_id,
		     const char *target, int64_t now_ns, int64_t paths,
		     int64_t sources);

/* One pulled node: @parent is the index in the same array of its
 * parent (which comes first), -1 for an outermost frame. */
struct store_pulled_node {
	int64_t parent;
	uint64_t address, call_site, self, total;
	int64_t height;
	const char *module, *module_build, *function;
};
/* Merges @n pulled nodes into the path map of program @program
 * (@build_id), adding their counts as a local run's would, and
 * remembering them as pulled; in one transaction.  A node whose parent
 * index is not an earlier node's is skipped.  The nodes merged in
 * *@merged. */
int store__merge_paths(struct store *st, const char *program,
		       const char *build_id,
		       const struct store_pulled_node *nodes, size_t n,
		       size_t *merged);

#endif
