/*
 * export_store.c - the export spool and the rows an export reads (see
 * export_store.h).
 */
#include "schema/export_store.h"

#include <stdio.h>
#include <string.h>

#include "schema/store_int.h"

#define WHAT "the export spool"

static int text_row(sqlite3_stmt *s, void *ctx)
{
	char **out = ctx;

	snprintf(out[0], (size_t)(uintptr_t)out[1], "%s", store__text(s, 0));
	return 1;
}

int store__database_id(struct store *st, char *out, size_t len)
{
	char *ctx[2] = { out, (char *)(uintptr_t)len };

	out[0] = '\0';
	return store__sql(st, WHAT, text_row, ctx,
			  "SELECT id FROM identity LIMIT 1", "") < 0 ? -1 : 0;
}

int store__run_host(struct store *st, int64_t run_id, char *out, size_t len)
{
	char *ctx[2] = { out, (char *)(uintptr_t)len };

	out[0] = '\0';
	return store__sql(st, WHAT, text_row, ctx,
			  "SELECT COALESCE(hostname, '') FROM runs WHERE id = ?",
			  "i", run_id) < 0 ? -1 : 0;
}

int store__export_queue(struct store *st, int64_t run_id, const char *target,
			int64_t now_ns)
{
	return store__sql(st, WHAT, NULL, NULL, "INSERT OR IGNORE INTO exports"
			  " (run_id, target, state, queued_ns) VALUES"
			  " (?, ?, 'pending', ?)", "iti", run_id, target,
			  now_ns) < 0 ? -1 : 0;
}

struct due {
	int64_t *runs, *attempts;
	size_t max, n;
};

static int due_row(sqlite3_stmt *s, void *ctx)
{
	struct due *d = ctx;

	if (d->n >= d->max)
		return 1;
	d->runs[d->n] = sqlite3_column_int64(s, 0);
	d->attempts[d->n++] = sqlite3_column_int64(s, 1);
	return 0;
}

int store__export_due(struct store *st, const char *target, int64_t now_ns,
		      int64_t *runs, int64_t *attempts, size_t max, size_t *n)
{
	struct due d = { runs, attempts, max, 0 };
	int ret = store__sql(st, WHAT, due_row, &d, "SELECT run_id, attempts"
			     " FROM exports WHERE target = ?1 AND state ="
			     " 'pending' AND (?2 < 0 OR next_ns <= ?2)"
			     " ORDER BY run_id", "ti", target, now_ns);

	*n = d.n;
	return ret < 0 ? -1 : 0;
}

int store__export_done(struct store *st, int64_t run_id, const char *target,
		       int64_t stack_rows, int64_t cid_rows, int64_t now_ns)
{
	return store__sql(st, WHAT, NULL, NULL, "UPDATE exports SET state ="
			  " 'done', attempts = attempts + 1, done_ns = ?,"
			  " stack_rows = ?, cid_rows = ?, error = NULL"
			  " WHERE run_id = ? AND target = ?", "iiiit", now_ns,
			  stack_rows, cid_rows, run_id, target) < 0 ? -1 : 0;
}

int store__export_failed(struct store *st, int64_t run_id, const char *target,
			 int64_t attempts, int64_t next_ns, const char *why)
{
	return store__sql(st, WHAT, NULL, NULL, "UPDATE exports SET attempts"
			  " = ?, next_ns = ?, error = ? WHERE run_id = ? AND"
			  " target = ?", "iitit", attempts, next_ns, why,
			  run_id, target) < 0 ? -1 : 0;
}

int store__export_lag(struct store *st, int64_t *pending, int64_t *oldest_ns)
{
	int64_t v[2] = { 0, 0 };
	int ret = store__ints(st, WHAT, v, 2, "SELECT COUNT(*),"
			      " COALESCE(MIN(queued_ns), 0) FROM exports"
			      " WHERE state = 'pending'", "");

	*pending = v[0];
	*oldest_ns = v[1];
	return ret < 0 ? -1 : 0;
}

struct cid_cb {
	int (*fn)(void *arg, const struct store_cid_row *r);
	void *arg;
};

static int cid_row(sqlite3_stmt *s, void *ctx)
{
	struct cid_cb *c = ctx;
	struct store_cid_row r = { .pid = sqlite3_column_int64(s, 0),
		.comm = store__text(s, 1), .program = store__text(s, 2),
		.program_build = store__text(s, 3), .module = store__text(s, 4),
		.build_id = store__text(s, 5), .function = store__text(s, 6),
		.height = sqlite3_column_int64(s, 7),
		.samples = sqlite3_column_int64(s, 8) };

	return c->fn(c->arg, &r);
}

int store__export_cids(struct store *st, int64_t run_id,
		       int (*fn)(void *arg, const struct store_cid_row *r),
		       void *arg)
{
	struct cid_cb c = { fn, arg };

	return store__sql(st, "reading the run's samples", cid_row, &c,
		"SELECT c.pid, COALESCE(t.comm, '?') AS comm,"
		" COALESCE(pr.path, ''), COALESCE(pr.build_id, ''), m.path,"
		" m.build_id, f.name, c.height, SUM(c.samples)"
		" FROM cid_samples c"
		" JOIN functions f ON f.id = c.function_id"
		" JOIN modules m ON m.id = f.module_id"
		" LEFT JOIN modules pr ON pr.id = c.program_id"
		" LEFT JOIN threads t ON t.run_id = c.run_id AND t.pid = c.pid"
		"   AND t.tid = c.tid"
		" WHERE c.run_id = ?"
		" GROUP BY c.pid, comm, c.program_id, c.function_id, c.height",
		"i", run_id) < 0 ? -1 : 0;
}

struct prog_cb {
	int (*fn)(void *arg, int64_t pid, const char *path,
		  const char *build_id);
	void *arg;
};

static int prog_row(sqlite3_stmt *s, void *ctx)
{
	struct prog_cb *c = ctx;

	return c->fn(c->arg, sqlite3_column_int64(s, 0), store__text(s, 1),
		     store__text(s, 2));
}

int store__export_programs(struct store *st, int64_t run_id,
			   int (*fn)(void *arg, int64_t pid, const char *path,
				     const char *build_id),
			   void *arg)
{
	struct prog_cb c = { fn, arg };

	/* a process's program: the one most of its samples name (an exec
	 * keeps the pid, so there may be two) */
	return store__sql(st, "reading the run's programs", prog_row, &c,
		"SELECT pid, COALESCE(m.path, ''), COALESCE(m.build_id, '')"
		" FROM (SELECT pid, program_id, SUM(samples) AS n,"
		"   ROW_NUMBER() OVER (PARTITION BY pid ORDER BY SUM(samples)"
		"   DESC, program_id) AS r FROM cid_samples WHERE run_id = ?"
		"   GROUP BY pid, program_id)"
		" LEFT JOIN modules m ON m.id = program_id WHERE r = 1"
		" ORDER BY pid", "i", run_id) < 0 ? -1 : 0;
}
