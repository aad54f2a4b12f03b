/*
 * validation.c - scoring a validation run against the training maps
 * (see validation.h), in SQL so that it is the query a user can read
 * in icppd-schema(5).
 */
#include "schema/validation.h"

#include <sqlite3.h>

#include "schema/store_int.h"

/*
 * A true leaf's CID has as candidates the contexts (function
 * sequences) of every training node with its (function, height) in the
 * same program's map: none is "missing"; the true context not among
 * them is "incorrect"; one candidate context, the truth, is "precise";
 * several with the truth among them, "ambiguous".  Nodes that differ
 * only in call sites are one context, as a report shows them.
 */
static const char score_sql[] =
	"WITH truth AS (SELECT n.*, pm.program_id FROM path_nodes n"
	"   JOIN path_maps pm ON pm.id = n.map_id"
	"   WHERE pm.run_id = ?1 AND n.self > 0),"
	" train AS (SELECT n.function_id, n.height, n.context_id, pm.program_id"
	"   FROM path_nodes n JOIN path_maps pm ON pm.id = n.map_id"
	"   WHERE pm.run_id = 0 AND pm.program_id IN"
	"   (SELECT program_id FROM path_maps WHERE run_id = ?1)),"
	" cands AS (SELECT program_id, function_id, height,"
	"   COUNT(DISTINCT context_id) AS k FROM train"
	"   GROUP BY program_id, function_id, height)"
	" INSERT INTO validation (run_id, program_id, function_id, outcome,"
	"   candidates, samples)"
	" SELECT ?1, t.program_id, t.function_id,"
	"   CASE WHEN c.k IS NULL THEN 'missing'"
	"        WHEN NOT EXISTS (SELECT 1 FROM train n"
	"          WHERE n.program_id = t.program_id"
	"          AND n.function_id = t.function_id AND n.height = t.height"
	"          AND n.context_id = t.context_id) THEN 'incorrect'"
	"        WHEN c.k = 1 THEN 'precise' ELSE 'ambiguous' END,"
	"   COALESCE(c.k, 0), SUM(t.self)"
	" FROM truth t LEFT JOIN cands c ON c.program_id = t.program_id"
	"   AND c.function_id = t.function_id AND c.height = t.height"
	" WHERE true GROUP BY 1, 2, 3, 4, 5"
	" ON CONFLICT DO UPDATE SET samples = excluded.samples";

int store__score(struct store *st, int64_t run_id)
{
	if (store__begin(st, "scoring"))
		return -1;
	return store__end(st, store__sql(st, "scoring", NULL, NULL, score_sql,
					 "i", run_id), "scoring");
}

struct validation_cb {
	int (*fn)(void *arg, const struct validation_row *r);
	void *arg;
};

static int validation_row(sqlite3_stmt *s, void *ctx)
{
	struct validation_cb *c = ctx;
	struct validation_row r = { store__text(s, 0), store__text(s, 1),
		store__text(s, 2), sqlite3_column_int64(s, 3),
		sqlite3_column_int64(s, 4) };

	return c->fn(c->arg, &r);
}

int store__validation(struct store *st, int64_t run_id,
		      int (*fn)(void *arg, const struct validation_row *r),
		      void *arg)
{
	struct validation_cb c = { fn, arg };

	return store__sql(st, "reading the scores", validation_row, &c,
			  "SELECT program, function, outcome, candidates,"
			  " samples FROM v_validation WHERE run_id = ?"
			  " ORDER BY samples DESC, function, outcome", "i",
			  run_id) < 0 ? -1 : 0;
}
