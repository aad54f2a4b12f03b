/*
 * export.h - shipping runs to ClickHouse, with the local database as the
 * spool.
 *
 * A run (a record run, a daemon segment) is queued for a server; an
 * export ships its inferred stacks (per process, whole, as report
 * infers them: path maps, learned paths, the binaries' direct calls)
 * and its raw CID counts, each table in one
 * INSERT of one block (ClickHouse writes a block all or nothing), keyed
 * by the run's segment key HOST/DATABASE-ID/RUN.  Before inserting, the
 * exporter asks whether the server already holds rows of that key (an
 * earlier try whose acknowledgement was lost), so a retry never
 * duplicates; the run is marked done only after the server acknowledged
 * both tables.  A failed try waits 2^tries seconds (at most an hour)
 * before the next one; a run stays queued however long the server is
 * away, and retention keeps it.
 */
#ifndef ICPPD_EXPORT_EXPORT_H
#define ICPPD_EXPORT_EXPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "schema/store.h"

struct export_result {
	int64_t runs;			/* acknowledged now */
	int64_t failed;			/* tried, still queued */
	int64_t stack_rows, cid_rows;	/* shipped now */
	char error[512];		/* the last failure */
};

/*
 * Queues run @run_id for @url and ships every run pending for it whose
 * try is due (@force: every one, whatever the backoff).  0 with what
 * happened in @res (failures are in it, and the runs stay queued); -1
 * after logging why when the URL is no ClickHouse URL or the local
 * database failed.  @run_id 0 queues nothing.
 */
int export__run(struct store *st, int64_t run_id, const char *url,
		bool force, struct export_result *res);

/* @url without its user and password (what the spool and messages
 * name the server by) into @out: 0, or -1 after logging why it is no
 * ClickHouse URL. */
int export__target(const char *url, char *out, size_t len);

/* Queues run @run_id for @url only (the daemon's sample loop: an
 * exporter ships it).  0, or -1 after logging why. */
int export__queue(struct store *st, int64_t run_id, const char *url);
/* Queues every finished measurement run with samples that @url has not
 * taken or queued yet (export --all), how many in *@n.  0, or -1 after
 * logging why. */
int export__queue_all(struct store *st, const char *url, int64_t *n);
/* Whether a run queued for @url is due for a try, or run @run_id
 * sampled a build whose path map the fleet was never asked for
 * (pull.h): 1, 0, or -1 after logging why. */
int export__due(struct store *st, const char *url, int64_t run_id);

#endif
