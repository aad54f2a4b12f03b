/*
 * migrations.h - the ordered schema steps (see migrations.c).
 */
#ifndef ICPPD_SCHEMA_MIGRATIONS_H
#define ICPPD_SCHEMA_MIGRATIONS_H

#include "schema/store.h"

extern const struct store_migration icppd_migrations[];
extern const int icppd_nr_migrations;

/* What the migrations leave: each object's type, name, table and SQL,
 * as sqlite_schema holds them, in an order that creates them.  Made at
 * build time by schema/gen_schema.c (schema/current.c). */
struct schema_object {
	const char *type, *name, *tbl, *sql;
};

extern const struct schema_object icppd_schema[];
extern const int icppd_nr_schema;
/* The rows the migrations write into a new database, as SQL to run
 * after icppd_schema's objects are made. */
extern const char icppd_schema_rows[];

#endif
