/*
 * objects.c - a database's schema objects (see objects.h).
 */
#define _GNU_SOURCE
#include "schema/objects.h"

#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

static const char OBJECTS[] =
	"SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_schema"
	" WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
	" ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1"
	" ELSE 2 END, rowid";

static int add(void *arg, int ncol, char **cols, char **names)
{
	struct schema_rows *r = arg;
	struct schema_row *x;

	(void)names;
	if (ncol != 4 || grow(&r->v, &r->cap, r->n + 1, sizeof(*r->v), 64))
		return 1;
	x = &r->v[r->n++];
	*x = (struct schema_row){ strdup(cols[0] ? cols[0] : ""),
		strdup(cols[1] ? cols[1] : ""), strdup(cols[2] ? cols[2] : ""),
		strdup(cols[3] ? cols[3] : "") };
	return !x->type || !x->name || !x->tbl || !x->sql;
}

int schema_rows__read(sqlite3 *db, struct schema_rows *out)
{
	*out = (struct schema_rows){ 0 };
	return sqlite3_exec(db, OBJECTS, add, out, NULL);
}

void schema_rows__exit(struct schema_rows *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].type);
		free(r->v[i].name);
		free(r->v[i].tbl);
		free(r->v[i].sql);
	}
	free(r->v);
	*r = (struct schema_rows){ 0 };
}
