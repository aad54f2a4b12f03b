/*
 * retain.c - deleting old daemon runs (see retain.h), one run per
 * transaction so that a reader never waits long.
 */
#include "schema/retain.h"

#include <sqlite3.h>
#include <stdio.h>

#include "schema/store_int.h"

static int int_query(struct store *st, const char *sql, int64_t a, int64_t b,
		     int64_t *out)
{
	sqlite3_stmt *s;
	int rc;

	*out = 0;
	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL))
		return store__db_error(st, "retention");
	sqlite3_bind_int64(s, 1, a);
	sqlite3_bind_int64(s, 2, b);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 :
	       store__db_error(st, "retention");
}

int store__used_bytes(struct store *st, int64_t *bytes)
{
	int64_t pages, free_pages, size;

	if (int_query(st, "PRAGMA page_count", 0, 0, &pages) ||
	    int_query(st, "PRAGMA freelist_count", 0, 0, &free_pages) ||
	    int_query(st, "PRAGMA page_size", 0, 0, &size))
		return -1;
	*bytes = (pages - free_pages) * size;
	return 0;
}

static int delete_run(struct store *st, int64_t run)
{
	static const char *const tables[] = { "cid_samples",
		"unresolved_samples", "threads", "run_counters", "inferred",
		"inferences", "validation" };
	char sql[96];

	if (store__exec(st, "BEGIN IMMEDIATE", "retention"))
		return -1;
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		sqlite3_stmt *s;
		int rc;

		snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE run_id = ?",
			 tables[i]);
		if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL))
			goto out_rollback;
		sqlite3_bind_int64(s, 1, run);
		rc = sqlite3_step(s);
		sqlite3_finalize(s);
		if (rc != SQLITE_DONE)
			goto out_rollback;
	}
	snprintf(sql, sizeof(sql), "DELETE FROM runs WHERE id = %lld",
		 (long long)run);
	if (store__exec(st, sql, "retention") ||
	    store__exec(st, "COMMIT", "retention"))
		goto out_rollback;
	return 0;
out_rollback:
	store__db_error(st, "retention");
	sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	return -1;
}

int store__retain(struct store *st, int64_t keep, int64_t before_ns,
		  int64_t max_bytes, int64_t *deleted)
{
	int64_t run, used;

	*deleted = 0;
	while (before_ns > 0) {
		if (int_query(st, "SELECT MIN(id) FROM runs WHERE kind = 'daemon'"
			      " AND id != ? AND ended_ns IS NOT NULL"
			      " AND ended_ns < ?", keep, before_ns, &run))
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
		if (int_query(st, "SELECT MIN(id) FROM runs WHERE kind = 'daemon'"
			      " AND id != ? AND ?2 = ?2", keep, 0, &run))
			return -1;
		if (!run)
			break;		/* only the current run is left */
		if (delete_run(st, run))
			return -1;
		(*deleted)++;
	}
	return 0;
}
