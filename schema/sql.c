/*
 * sql.c - how every file of the store talks to SQLite: the one statement
 * runner, the one transaction helper, the helpers for the statements a
 * store prepares once, and the errors ("PATH: what: why", with a hint).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "schema/store_int.h"

void store__set_error(struct store *st, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(st->err, sizeof(st->err), "%s: ", st->path);

	va_start(ap, fmt);
	vsnprintf(st->err + n, sizeof(st->err) - (size_t)n, fmt, ap);
	va_end(ap);
}

/* WAL needs the database and its directory writable (-wal, -shm). */
bool store__writable(const char *path)
{
	char dir[4096];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	else
		strcpy(dir, ".");
	return !access(path, W_OK) && !access(dir, W_OK);
}

int store__db_error(struct store *st, const char *what)
{
	int code = sqlite3_extended_errcode(st->db);
	const char *hint = "";

	if ((code & 0xff) == SQLITE_READONLY ||
	    ((code & 0xff) == SQLITE_CANTOPEN && !store__writable(st->path)))
		hint = " (the database or its directory is read-only)";
	else if ((code & 0xff) == SQLITE_NOTADB || (code & 0xff) == SQLITE_CORRUPT)
		hint = " (not an icppd database, or corrupt: use another -d)";
	else if ((code & 0xff) == SQLITE_FULL)
		hint = " (disk full)";
	else if ((code & 0xff) == SQLITE_BUSY)
		hint = " (another process holds a lock on it)";
	else if ((code & 0xff) == SQLITE_INTERRUPT && st->timed_out)
		hint = " (a statement ran over its time bound: a crafted "
		       "database?)";
	store__set_error(st, "%s: %s%s", what, sqlite3_errmsg(st->db), hint);
	return -1;
}

int store__exec(struct store *st, const char *sql, const char *what)
{
	return sqlite3_exec(st->db, sql, NULL, NULL, NULL) == SQLITE_OK ?
	       0 : store__db_error(st, what);
}

int store__vsql(struct store *st, const char *what, store_row_fn row,
		void *ctx, const char *sql, const char *types, va_list ap)
{
	sqlite3_stmt *s;
	int rc, ret = 0;

	st->stopped = 0;
	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK) {
		sqlite3_finalize(s);
		return store__db_error(st, what);
	}
	for (int i = 0; types && types[i]; i++) {
		const char *t;

		switch (types[i]) {
		case 'i':
			sqlite3_bind_int64(s, i + 1, va_arg(ap, int64_t));
			break;
		case 'n': {
			int64_t v = va_arg(ap, int64_t);

			if (v >= 0)
				sqlite3_bind_int64(s, i + 1, v);
			break;
		}
		case 'd':
			sqlite3_bind_double(s, i + 1, va_arg(ap, double));
			break;
		default:
			t = va_arg(ap, const char *);
			if (t)
				sqlite3_bind_text(s, i + 1, t, -1,
						  SQLITE_TRANSIENT);
		}
	}
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		if (row && (ret = row(s, ctx)))
			break;
	if (ret < 0) {
		st->stopped = ret;
		store__set_error(st, "%s: %s", what, strerror(-ret));
		ret = -1;
	} else if (!ret && rc != SQLITE_DONE) {
		ret = store__db_error(st, what);
	}
	sqlite3_finalize(s);
	return ret;
}

int store__sql(struct store *st, const char *what, store_row_fn row,
	       void *ctx, const char *sql, const char *types, ...)
{
	va_list ap;
	int ret;

	va_start(ap, types);
	ret = store__vsql(st, what, row, ctx, sql, types, ap);
	va_end(ap);
	return ret;
}

struct ints {
	int64_t *v;
	int n;
};

static int first_row(sqlite3_stmt *s, void *ctx)
{
	struct ints *r = ctx;

	for (int i = 0; i < r->n && i < sqlite3_column_count(s); i++)
		r->v[i] = sqlite3_column_int64(s, i);
	return 1;	/* found: stop */
}

int store__ints(struct store *st, const char *what, int64_t *v, int nv,
		const char *sql, const char *types, ...)
{
	struct ints r = { v, nv };
	va_list ap;
	int ret;

	va_start(ap, types);
	ret = store__vsql(st, what, first_row, &r, sql, types, ap);
	va_end(ap);
	return ret == 1 ? 0 : ret == 0 ? STORE_NONE : -1;
}

const char *store__text(sqlite3_stmt *s, int col)
{
	const unsigned char *t = sqlite3_column_text(s, col);

	return t ? (const char *)t : "";
}

int store__begin(struct store *st, const char *what)
{
	return store__exec(st, "BEGIN IMMEDIATE", what);
}

int store__end(struct store *st, int ret, const char *what)
{
	if (!ret && !store__exec(st, "COMMIT", what))
		return 0;
	sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	return -1;
}

int store__stopped(const struct store *st)
{
	return st->stopped;
}


/* Runs a prepared statement that returns nothing; resets it. */
int store__step_done(struct store *st, sqlite3_stmt *s, const char *what)
{
	int rc = sqlite3_step(s);

	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return rc == SQLITE_DONE ? 0 : store__db_error(st, what);
}

int store__lookup_id(struct store *st, sqlite3_stmt *s, int64_t *id,
		     int64_t *second)
{
	int rc = sqlite3_step(s);

	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(s, 0);
	if (rc == SQLITE_ROW && second)
		*second = sqlite3_column_int64(s, 1);
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store__db_error(st, "looking up an id");
	return rc == SQLITE_ROW;
}

int store__select_id(struct store *st, sqlite3_stmt *s, int64_t *id)
{
	int found = store__lookup_id(st, s, id, NULL);

	if (!found)
		return store__db_error(st, "looking up an id");
	return found < 0 ? -1 : 0;
}

/* Runs an INSERT ... RETURNING id; the id in *@id. */
int store__returning_id(struct store *st, sqlite3_stmt *s, int64_t *id,
			const char *what)
{
	int rc = sqlite3_step(s);

	*id = 0;
	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(s, 0);
	while (rc == SQLITE_ROW)
		rc = sqlite3_step(s);
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return rc == SQLITE_DONE && *id ? 0 : store__db_error(st, what);
}

int store__insert_new(struct store *st, sqlite3_stmt *s, int64_t *id,
		      const char *what)
{
	int rc = sqlite3_step(s);
	bool added = rc == SQLITE_DONE && sqlite3_changes(st->db) > 0;

	if (added)
		*id = sqlite3_last_insert_rowid(st->db);
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return rc == SQLITE_DONE ? added : store__db_error(st, what);
}

const char *store__error(const struct store *st)
{
	return st->err;
}
