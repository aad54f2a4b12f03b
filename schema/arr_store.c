/*
 * arr_store.c - writing a rewritten build into the store (see
 * arr_store.h).  Statements are prepared per call: an ARR run writes a
 * few thousand rows once.
 */
#include "common/clock.h"
#include "schema/arr_store.h"

#include <sqlite3.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>

#include "schema/report_store.h"
#include "schema/store_int.h"

/*
 * Runs @sql with arguments typed by @types ('i' int64, 'd' double, 't'
 * text or NULL).  The first column of the first row, if any, in *@out
 * (may be NULL).  0, 1 (no row, when @out wants one), -1.
 */
static int run(struct store *st, int64_t *out, const char *sql,
	       const char *types, ...)
{
	sqlite3_stmt *s;
	va_list ap;
	int rc, ret;

	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL))
		return store__db_error(st, "registering the rewritten binary");
	va_start(ap, types);
	for (int i = 0; types[i]; i++) {
		if (types[i] == 'i') {
			sqlite3_bind_int64(s, i + 1, va_arg(ap, int64_t));
		} else if (types[i] == 'd') {
			sqlite3_bind_double(s, i + 1, va_arg(ap, double));
		} else {
			const char *t = va_arg(ap, const char *);

			if (t)
				sqlite3_bind_text(s, i + 1, t, -1, SQLITE_TRANSIENT);
		}
	}
	va_end(ap);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW && out)
		*out = sqlite3_column_int64(s, 0);
	while (rc == SQLITE_ROW)
		rc = sqlite3_step(s);
	ret = rc == SQLITE_DONE ? 0 :
	      store__db_error(st, "registering the rewritten binary");
	sqlite3_finalize(s);
	return ret;
}

int store__module_by_build(struct store *st, const char *build_id,
			   int64_t *id)
{
	*id = 0;
	if (run(st, id, "SELECT MIN(id) FROM modules WHERE build_id = ?"
		" HAVING MIN(id) IS NOT NULL", "t", build_id))
		return -1;
	return *id ? 0 : 1;
}

int store__arr_begin(struct store *st)
{
	return store__exec(st, "BEGIN IMMEDIATE", "registering the rewritten "
			   "binary");
}

int store__arr_commit(struct store *st)
{
	return store__exec(st, "COMMIT", "registering the rewritten binary");
}

void store__arr_rollback(struct store *st)
{
	sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
}

int store__arr_module(struct store *st, int64_t from, const char *path,
		      const char *build_id, int64_t *id)
{
	int64_t old;

	if (!store__module_by_build(st, build_id, &old)) {
		store__set_error(st, "build-id %s is already registered "
				 "(module %lld)", build_id, (long long)old);
		return -1;
	}
	if (run(st, id, "INSERT INTO modules (path, build_id) VALUES (?, ?)"
		" RETURNING id", "tt", path, build_id))
		return -1;
	return run(st, NULL, "INSERT INTO functions (module_id, address, name,"
		   " symbol) SELECT ?, address, name, symbol FROM functions"
		   " WHERE module_id = ?", "ii", *id, from);
}

int store__function_at(struct store *st, int64_t module, uint64_t address,
		       int64_t *id)
{
	int ret = run(st, id, "SELECT id FROM functions WHERE module_id = ?"
		      " AND address = ?", "ii", module, (int64_t)address);

	return ret;
}

int store__arr_map(struct store *st, int64_t module, int64_t *map)
{
	return run(st, map, "INSERT INTO path_maps (program_id, run_id)"
		   " VALUES (?, 0) RETURNING id", "i", module);
}

int store__arr_node(struct store *st, int64_t map, const struct store_node *n,
		    int64_t depth, int64_t *id)
{
	return run(st, id, "INSERT INTO path_nodes (map_id, parent_id,"
		   " function_id, context_id, call_site, height, depth, self,"
		   " total) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO"
		   " UPDATE SET self = self + excluded.self, total = total +"
		   " excluded.total RETURNING id", "iiiiiiiii", map,
		   n->parent_id, n->function_id, n->context_id, n->call_site,
		   n->height, depth, n->self, n->total);
}

int store__arr_function(struct store *st, int64_t module, int64_t function,
			int64_t frame, int64_t pad, const char *reason)
{
	if (frame < 0)
		return run(st, NULL, "INSERT OR REPLACE INTO arr_functions"
			   " VALUES (?, ?, NULL, 0, ?)", "iit", module,
			   function, reason);
	return run(st, NULL, "INSERT OR REPLACE INTO arr_functions VALUES"
		   " (?, ?, ?, ?, NULL)", "iiii", module, function, frame, pad);
}

int store__arr_inseparable(struct store *st, int64_t module, int64_t context,
			   int64_t height, double samples)
{
	return run(st, NULL, "INSERT INTO arr_inseparable VALUES (?, ?, ?, ?)"
		   " ON CONFLICT DO UPDATE SET samples = samples +"
		   " excluded.samples", "iiid", module, context, height,
		   samples);
}

int store__arr_build(struct store *st, const struct arr_build_row *b)
{
	return run(st, NULL, "INSERT INTO arr_builds VALUES (?, ?, ?, ?, ?, ?,"
		   " ?, ?, ?, ?, ?, ?, ?, ?, ?)", "iiiddddiiiiiddi",
		   b->module_id, b->original_id, b->seed, b->max_growth,
		   b->samples, b->precise_before, b->precise_after, b->paths,
		   b->paths_before, b->paths_after, b->deepest_before,
		   b->deepest_after, b->inseparable, b->search_ms,
		   clock__real_ns());
}
