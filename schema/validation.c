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

int store__accuracy(struct store *st, int64_t run_id,
		    const struct accuracy_row *rows, size_t n)
{
	int ret;

	if (store__begin(st, "storing the accuracy"))
		return -1;
	ret = store__sql(st, "storing the accuracy", NULL, NULL,
			 "DELETE FROM accuracy WHERE run_id = ?", "i", run_id);
	for (size_t i = 0; !ret && i < n; i++)
		ret = store__sql(st, "storing the accuracy", NULL, NULL,
				 "INSERT INTO accuracy (run_id, program_id,"
				 " function_id, outcome, solutions, samples,"
				 " correct) VALUES (?, ?, ?, ?, ?, ?, ?)",
				 "iiitiid", run_id, rows[i].program_id,
				 rows[i].function_id, rows[i].outcome,
				 rows[i].solutions, rows[i].samples,
				 rows[i].correct);
	return store__end(st, ret, "storing the accuracy");
}

struct rates_cb {
	int (*fn)(void *arg, const char *outcome, int64_t samples,
		  double correct);
	void *arg;
	int64_t *run_id;
};

static int rate_row(sqlite3_stmt *s, void *ctx)
{
	struct rates_cb *c = ctx;

	*c->run_id = sqlite3_column_int64(s, 0);
	return c->fn(c->arg, store__text(s, 1), sqlite3_column_int64(s, 2),
		     sqlite3_column_double(s, 3));
}

int store__accuracy_rates(struct store *st, int64_t program_id,
			  int64_t *run_id,
			  int (*fn)(void *arg, const char *outcome,
				    int64_t samples, double correct),
			  void *arg)
{
	struct rates_cb c = { fn, arg, run_id };

	*run_id = 0;
	return store__sql(st, "reading the validated accuracy", rate_row, &c,
			  "SELECT run_id, outcome, SUM(samples), SUM(correct)"
			  " FROM accuracy WHERE program_id = ?1 AND run_id ="
			  " (SELECT MAX(run_id) FROM accuracy"
			  "  WHERE program_id = ?1)"
			  " GROUP BY outcome", "i", program_id) < 0 ? -1 : 0;
}
