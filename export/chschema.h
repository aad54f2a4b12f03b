/*
 * chschema.h - the ClickHouse tables of a fleet: what export writes,
 * what report --from reads, and how a database an earlier icppd made is
 * brought up to date.
 *
 * Raw tables, one row per process and stack (or CID, or path-map node)
 * of each exported run: stacks, cids, paths.  Rollups, fed by
 * materialized views on every insert into stacks_local, so that a
 * fleet report reads sums instead of every host's rows:
 *   stacks_rollup       identical stacks of one program build and event
 *                       summed per hour of the runs' start (the report
 *                       of all hosts),
 *   host_stacks_rollup  the same per host (a host's report: its own
 *                       rows, found through the sort key),
 *   segments            one row per exported run: host, program, times,
 *                       its stack rows and weight (what a report counts
 *                       and says),
 *   rollups             since when the rollups hold every row: 0 for a
 *                       database made with them, else the hour after
 *                       they were added (the rows before are read raw).
 * Each as NAME_local (MergeTree family) and NAME, the table queries read:
 * a Distributed table over a cluster's NAME_local, or a view.
 */
#ifndef ICPPD_EXPORT_CHSCHEMA_H
#define ICPPD_EXPORT_CHSCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct clickhouse;

/* The buckets of the rollups, seconds (toStartOfHour). */
#define CHSCHEMA_BUCKET_S 3600

/* The DDL of database @db (@cluster: Distributed tables over it, else
 * NULL: views), then the migrations of a database an earlier icppd made,
 * as comments for a person. */
void chschema__print(FILE *out, const char *db, const char *cluster);

/*
 * Makes what @c's database lacks, unless its URL says create=no (then
 * -1, the hint to export --schema added to @why): the columns added
 * since the tables were first made (ALTER TABLE ... ADD COLUMN, local
 * tables first; a view made again, since a view of SELECT * keeps the
 * columns it was made with), then every table, view and materialized
 * view of chschema__print() that is missing, Distributed over the
 * cluster the existing stacks table is Distributed over.  @all: the
 * database may be missing too (no ALTER is tried).  0, or -1 with the
 * server's error in @why.
 */
int chschema__update(struct clickhouse *c, bool all, char *why, size_t len);

/*
 * With raw_days=N in @c's URL: drops the days of raw stack and CID rows
 * older than N days that this server's rollups hold (partitions of
 * stacks_local and cids_local, a day each; path maps are kept), and
 * notes in rollups_local from when the raw rows are kept (a report's
 * window edges before it are whole hours).  0, or -1 with why.
 */
int chschema__prune(struct clickhouse *c, char *why, size_t len);

#endif
