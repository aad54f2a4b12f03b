/*
 * guard.c - a database is input: its schema must be the one icppd's
 * migrations make, and no statement runs unbounded (see store_int.h).
 *
 * A database that carries icppd's application id can still hold what
 * icppd never created: a trigger that runs an endless recursive query
 * on the first write, or one of icppd's views replaced by one that
 * never returns.  The schema the migrations make is known, so every
 * object of a database is compared with it (type, name and SQL text,
 * as SQLite stores it), once the database is at icppd's version.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/grow.h"
#include "common/printable.h"
#include "schema/migrations.h"
#include "schema/store_int.h"

/* A statement's longest run: the largest database a report reads, with
 * icppd's indexes, takes seconds; a minute plus a second per 10 MB of
 * the file bounds what a crafted one can make a statement do. */
#define STATEMENT_BASE_NS (60 * 1000000000LL)
#define STATEMENT_BYTES_PER_S (10LL << 20)
/* Virtual machine steps between two looks at the clock. */
#define PROGRESS_STEPS 100000

/* Each object as "type\x1fname\x1fsql", SQLite's own (sqlite_*) left out. */
static const char SCHEMA_ROWS[] =
	"SELECT type || char(31) || name || char(31) || coalesce(sql, '')"
	" FROM sqlite_schema WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'";

struct rows {
	char **v;
	size_t n, cap;
};

static int by_text(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int add_row(void *arg, int ncol, char **cols, char **names)
{
	struct rows *r = arg;

	(void)ncol;
	(void)names;
	if (grow(&r->v, &r->cap, r->n + 1, sizeof(*r->v), 64) ||
	    !(r->v[r->n] = strdup(cols[0] ? cols[0] : "")))
		return 1;
	r->n++;
	return 0;
}

/* The schema icppd's migrations make, sorted: made once per process in
 * memory (15 ms on the 2-CPU VM, most of it SQLite parsing the schema
 * again at each ALTER TABLE).  NULL when memory ran out. */
static const struct rows *expected(void)
{
	static struct rows r;
	static bool made;
	sqlite3 *db = NULL;
	bool ok;

	if (made)
		return &r;
	ok = sqlite3_open(":memory:", &db) == SQLITE_OK;
	for (int i = 0; ok && i < icppd_nr_migrations; i++)
		ok = sqlite3_exec(db, icppd_migrations[i].sql, NULL, NULL,
				  NULL) == SQLITE_OK;
	ok = ok && sqlite3_exec(db, SCHEMA_ROWS, add_row, &r, NULL) ==
		   SQLITE_OK;
	sqlite3_close(db);
	if (!ok) {
		while (r.n)
			free(r.v[--r.n]);
		return NULL;
	}
	qsort(r.v, r.n, sizeof(*r.v), by_text);
	made = true;
	return &r;
}

int store__check_schema(struct store *st)
{
	const struct rows *want = expected();
	struct rows have = { 0 };
	int ret = 0, rc;

	if (!want) {
		store__set_error(st, "checking the schema: out of memory");
		return -1;
	}
	rc = sqlite3_exec(st->db, SCHEMA_ROWS, add_row, &have, NULL);
	if (rc == SQLITE_ABORT) {	/* add_row() */
		store__set_error(st, "checking the schema: out of memory");
		ret = -1;
	} else if (rc != SQLITE_OK) {
		ret = store__db_error(st, "checking the schema");
	}
	for (size_t i = 0; !ret && i < have.n; i++) {
		char *type = have.v[i], *name = strchr(type, '\x1f'), *end;
		char *shown;

		if (bsearch(&have.v[i], want->v, want->n, sizeof(*want->v),
			    by_text))
			continue;
		*name++ = '\0';
		end = strchr(name, '\x1f');
		if (end)
			*end = '\0';
		shown = printable__dup(name);
		store__set_error(st, "the %s '%s' is not one icppd made (an "
				 "edited or crafted database): left as it is; "
				 "drop it to use the database (sqlite3 DB "
				 "'DROP %s \"%s\"')", type, shown ? shown : "?",
				 type, shown ? shown : "?");
		free(shown);
		ret = -1;
	}
	while (have.n)
		free(have.v[--have.n]);
	free(have.v);
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
