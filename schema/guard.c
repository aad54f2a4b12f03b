/*
 * guard.c - a database is input: its schema must be the one icppd's
 * migrations make, and no statement runs unbounded (see store_int.h).
 *
 * A database that carries icppd's application id can still hold what
 * icppd never created: a trigger that runs an endless recursive query
 * on the first write, or one of icppd's views replaced by one that
 * never returns.  The schema the migrations make is known, so every
 * object of a database that could run at icppd's statements is
 * compared with it (type, name and SQL text, as SQLite stores it), once
 * the database is at icppd's version (see allowed()).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/printable.h"
#include "schema/migrations.h"
#include "schema/objects.h"
#include "schema/store_int.h"

/* A statement's longest run: the largest database a report reads, with
 * icppd's indexes, takes seconds; a minute plus a second per 10 MB of
 * the file bounds what a crafted one can make a statement do. */
#define STATEMENT_BASE_NS (60 * 1000000000LL)
#define STATEMENT_BYTES_PER_S (10LL << 20)
/* Virtual machine steps between two looks at the clock. */
#define PROGRESS_STEPS 100000

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct schema_object *)a)->name,
		      ((const struct schema_object *)b)->name);
}

/* The schema icppd's migrations make (icppd_schema), sorted by name
 * once per process (sort_schema).  NULL when memory ran out. */
static struct schema_object *sorted_schema;

static void sort_schema(void)
{
	struct schema_object *v = malloc((size_t)icppd_nr_schema * sizeof(*v));

	if (!v)
		return;
	memcpy(v, icppd_schema, (size_t)icppd_nr_schema * sizeof(*v));
	qsort(v, (size_t)icppd_nr_schema, sizeof(*v), by_name);
	sorted_schema = v;
}

static const struct schema_object *expected(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, sort_schema);
	return sorted_schema;
}

static const struct schema_object *find(const struct schema_object *want,
					const char *name)
{
	struct schema_object key = { .name = name };

	return bsearch(&key, want, (size_t)icppd_nr_schema, sizeof(*want),
		       by_name);
}

/*
 * Whether object @x of the database may stay: one that bears the name
 * of one of icppd's must be it exactly (a view icppd reads, a table
 * with a CHECK or a generated column of someone else's); an index on
 * one of icppd's tables runs its expressions at icppd's every write,
 * so only icppd's own; a user's tables and views, and indexes on them,
 * are theirs (icppd never reads them).
 */
static bool allowed(const struct schema_object *want,
		    const struct schema_row *x)
{
	const struct schema_object *w = find(want, x->name), *t;

	if (w)
		return !strcmp(w->type, x->type) && !strcmp(w->sql, x->sql);
	if (strcmp(x->type, "index"))
		return strcmp(x->type, "trigger") != 0;
	t = find(want, x->tbl);
	return !t || strcmp(t->type, "table");
}

int store__check_schema(struct store *st)
{
	const struct schema_object *want = expected();
	struct schema_rows have;
	int ret = 0, rc;

	if (!want) {
		store__set_error(st, "checking the schema: out of memory");
		return -1;
	}
	rc = schema_rows__read(st->db, &have);
	if (rc == SQLITE_ABORT) {
		store__set_error(st, "checking the schema: out of memory");
		ret = -1;
	} else if (rc != SQLITE_OK) {
		ret = store__db_error(st, "checking the schema");
	}
	for (size_t i = 0; !ret && i < have.n; i++) {
		const struct schema_row *x = &have.v[i];
		char *shown;

		if (allowed(want, x))
			continue;
		shown = printable__dup(x->name);
		store__set_error(st, "the %s '%s' is not one icppd made (an "
				 "edited or crafted database): left as it is; "
				 "drop it to use the database (sqlite3 DB "
				 "'DROP %s \"%s\"')", x->type,
				 shown ? shown : "?", x->type,
				 shown ? shown : "?");
		free(shown);
		ret = -1;
	}
	schema_rows__exit(&have);
	return ret;
}

/* ---- every statement bounded ----------------------------------------- */

static int statement_starts(unsigned type, void *arg, void *p, void *x)
{
	struct store *st = arg;

	(void)type;
	(void)p;
	(void)x;
	st->deadline_ns = clock__mono_ns() + st->limit_ns;
	return 0;
}

static int over_time(void *arg)
{
	struct store *st = arg;

	if (clock__mono_ns() <= st->deadline_ns)
		return 0;
	st->timed_out = true;
	return 1;
}

void store__bound_statements(struct store *st, int64_t file_bytes)
{
	st->limit_ns = STATEMENT_BASE_NS +
		       (file_bytes > 0 ? file_bytes : 0) /
		       STATEMENT_BYTES_PER_S * 1000000000LL;
	st->deadline_ns = clock__mono_ns() + st->limit_ns;
	sqlite3_trace_v2(st->db, SQLITE_TRACE_STMT, statement_starts, st);
	sqlite3_progress_handler(st->db, PROGRESS_STEPS, over_time, st);
}

void store__set_statement_limit(struct store *st, int64_t ns)
{
	st->limit_ns = ns;
}
