/*
 * objects.h - a database's schema objects as sqlite_schema lists them.
 *
 * Read by the schema check (guard.c) and by the generator of the schema
 * the migrations leave (gen_schema.c), which is built before the
 * library, so this file needs nothing but SQLite.
 */
#ifndef ICPPD_SCHEMA_OBJECTS_H
#define ICPPD_SCHEMA_OBJECTS_H

#include <sqlite3.h>
#include <stddef.h>

struct schema_row {
	char *type, *name, *tbl, *sql;	/* sql: "" where SQLite has none */
};

struct schema_rows {
	struct schema_row *v;
	size_t n, cap;
};

/*
 * Every object of @db's main schema but SQLite's own (sqlite_*), in an
 * order that creates them: tables, indexes, then the rest, each in the
 * order they were made.  SQLITE_OK; SQLITE_ABORT when memory ran out;
 * else SQLite's error, @db's message saying why.  *@out is freed with
 * schema_rows__exit() in every case.
 */
int schema_rows__read(sqlite3 *db, struct schema_rows *out);
void schema_rows__exit(struct schema_rows *r);

#endif
