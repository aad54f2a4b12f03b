/*
 * arr_store.c - writing a rewritten build into the store (see
 * arr_store.h).  Statements are prepared per call: an ARR run writes a
 * few thousand rows once.
 */
#include "common/clock.h"
#include "schema/arr_store.h"

#include <string.h>
#include <time.h>

#include "schema/report_store.h"
#include "schema/store_int.h"

#define WHAT "registering the rewritten binary"

int store__module_by_build(struct store *st, const char *build_id,
			   int64_t *id)
{
	*id = 0;
	return store__ints(st, WHAT, id, 1, "SELECT MIN(id) FROM modules"
			   " WHERE build_id = ? HAVING MIN(id) IS NOT NULL", "t",
			   build_id);
}

int store__arr_begin(struct store *st)
{
	return store__begin(st, WHAT);
}

int store__arr_commit(struct store *st)
{
	return store__end(st, 0, WHAT);
}

void store__arr_rollback(struct store *st)
{
	store__end(st, -1, WHAT);
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
	if (store__ints(st, WHAT, id, 1, "INSERT INTO modules (path, build_id)"
			" VALUES (?, ?) RETURNING id", "tt", path, build_id))
		return -1;
	return store__sql(st, WHAT, NULL, NULL, "INSERT INTO functions (module_id, address, name,"
		   " symbol) SELECT ?, address, name, symbol FROM functions"
		   " WHERE module_id = ?", "ii", *id, from);
}

int store__function_at(struct store *st, int64_t module, uint64_t address,
		       int64_t *id)
{
	int ret = store__ints(st, WHAT, id, 1, "SELECT id FROM functions"
			      " WHERE module_id = ? AND address = ?", "ii",
			      module, (int64_t)address);

	if (ret > 0) {
		store__set_error(st, "%s: no function at %#llx in module %lld",
				 WHAT, (unsigned long long)address,
				 (long long)module);
		ret = -1;
	}
	return ret;
}

int store__arr_map(struct store *st, int64_t module, int64_t *map)
{
	return store__ints(st, WHAT, map, 1, "INSERT INTO path_maps (program_id, run_id)"
		   " VALUES (?, 0) RETURNING id", "i", module);
}

int store__arr_node(struct store *st, int64_t map, const struct store_node *n,
		    int64_t depth, int64_t *id)
{
	return store__ints(st, WHAT, id, 1, "INSERT INTO path_nodes (map_id, parent_id,"
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
		return store__sql(st, WHAT, NULL, NULL, "INSERT OR REPLACE INTO arr_functions"
			   " VALUES (?, ?, NULL, 0, ?)", "iit", module,
			   function, reason);
	return store__sql(st, WHAT, NULL, NULL, "INSERT OR REPLACE INTO arr_functions VALUES"
		   " (?, ?, ?, ?, NULL)", "iiii", module, function, frame, pad);
}

int store__arr_inseparable(struct store *st, int64_t module, int64_t context,
			   int64_t height, double samples)
{
	return store__sql(st, WHAT, NULL, NULL, "INSERT INTO arr_inseparable VALUES (?, ?, ?, ?)"
		   " ON CONFLICT DO UPDATE SET samples = samples +"
		   " excluded.samples", "iiid", module, context, height,
		   samples);
}

int store__arr_build(struct store *st, const struct arr_build_row *b)
{
	return store__sql(st, WHAT, NULL, NULL, "INSERT INTO arr_builds VALUES (?, ?, ?, ?, ?, ?,"
		   " ?, ?, ?, ?, ?, ?, ?, ?, ?)", "iiiddddiiiiiddi",
		   b->module_id, b->original_id, b->seed, b->max_growth,
		   b->samples, b->precise_before, b->precise_after, b->paths,
		   b->paths_before, b->paths_after, b->deepest_before,
		   b->deepest_after, b->inseparable, b->search_ms,
		   clock__real_ns());
}
