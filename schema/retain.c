/*
 * retain.c - deleting old daemon runs (see retain.h), one run per
 * transaction so that a reader never waits long.
 */
#include "schema/retain.h"

#include <stdio.h>

#include "schema/store_int.h"

int store__used_bytes(struct store *st, int64_t *bytes)
{
	int64_t v[3] = { 0, 0, 0 };

	if (store__ints(st, "retention", v, 3, "SELECT page_count,"
			" freelist_count, page_size FROM pragma_page_count,"
			" pragma_freelist_count, pragma_page_size", NULL))
		return -1;
	*bytes = (v[0] - v[1]) * v[2];
	return 0;
}

static int delete_run(struct store *st, int64_t run)
{
	static const char *const tables[] = { "exports", "cid_samples",
		"offcpu_samples", "kernel_chains", "pc_samples",
		"unresolved_samples", "threads", "run_counters",
		"learn_windows", "inferred", "explained", "explained_sites",
		"run_learned", "inferences", "validation", "accuracy", "runs" };
	char sql[96];
	int ret = 0;

	if (store__begin(st, "retention"))
		return -1;
	for (size_t i = 0; !ret && i < sizeof(tables) / sizeof(tables[0]); i++) {
		snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE %s = ?",
			 tables[i], i + 1 < sizeof(tables) / sizeof(tables[0]) ?
			 "run_id" : "id");
		ret = store__sql(st, "retention", NULL, NULL, sql, "i", run);
	}
	/* the calls of builds last read when @run was the newest: a cache,
	 * decoded again if a later run needs them */
	if (!ret)
		ret = store__sql(st, "retention", NULL, NULL, "DELETE FROM"
				 " build_calls WHERE last_run <= ?", "i", run);
	if (!ret)
		ret = store__sql(st, "retention", NULL, NULL, "DELETE FROM"
				 " inlined WHERE last_run <= ?", "i", run);
	return store__end(st, ret, "retention");
}

/* The oldest daemon run that retention may delete, other than @keep:
 * ended before @before_ns, or any when @before_ns is 0, and not waiting
 * to be exported (the spool keeps what a server has not acknowledged,
 * over the size limit if an outage lasts).  0: none. */
static int oldest(struct store *st, int64_t keep, int64_t before_ns,
		  int64_t *run)
{
	*run = 0;
	return store__ints(st, "retention", run, 1, "SELECT MIN(id) FROM runs"
			   " WHERE kind = 'daemon' AND id != ?1 AND (?2 = 0 OR"
			   " (ended_ns IS NOT NULL AND ended_ns < ?2)) AND id"
			   " NOT IN (SELECT run_id FROM exports"
			   " WHERE state = 'pending')", "ii",
			   keep, before_ns) < 0 ? -1 : 0;
}

int store__retain(struct store *st, int64_t keep, int64_t before_ns,
		  int64_t max_bytes, int64_t *deleted)
{
	int64_t run, used;

	*deleted = 0;
	while (before_ns > 0) {
		if (oldest(st, keep, before_ns, &run))
			return -1;
		if (!run)
			break;
		if (delete_run(st, run))
			return -1;
		(*deleted)++;
	}
	while (max_bytes > 0) {
		if (store__used_bytes(st, &used))
			return -1;
		if (used <= max_bytes)
			break;
		if (oldest(st, keep, 0, &run))
			return -1;
		if (!run)
			break;		/* only the current run is left */
		if (delete_run(st, run))
			return -1;
		(*deleted)++;
	}
	return 0;
}
