/*
 * report_store.c - the read side of the store for reports, and the
 * writing of inferred contexts (see report_store.h).
 *
 * Reads prepare their statement per call: a report runs a handful of
 * queries, each over many rows.  The inference writer prepares its
 * per-row statements once per transaction.
 */
#define _GNU_SOURCE
#include "common/clock.h"
#include "schema/report_store.h"

#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "schema/store_int.h"

/* Steps the prepared @s, calling @row per result row, and finalizes it.
 * A non-zero @row return stops and is returned. */
static int run_rows(struct store *st, sqlite3_stmt *s, const char *what,
		    int (*row)(sqlite3_stmt *s, void *ctx), void *ctx)
{
	int rc, ret = 0;

	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		if ((ret = row(s, ctx)))
			break;
	if (!ret && rc != SQLITE_DONE)
		ret = store__db_error(st, what);
	sqlite3_finalize(s);
	return ret;
}

/* Prepares @sql, binds the int64 arguments, calls @row per result row. */
static int query(struct store *st, const char *sql, const char *what,
		 const int64_t *args, int nargs,
		 int (*row)(sqlite3_stmt *s, void *ctx), void *ctx)
{
	sqlite3_stmt *s;

	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL))
		return store__db_error(st, what);
	for (int i = 0; i < nargs; i++)
		sqlite3_bind_int64(s, i + 1, args[i]);
	return run_rows(st, s, what, row, ctx);
}

static const char *text(sqlite3_stmt *s, int col)
{
	const unsigned char *t = sqlite3_column_text(s, col);

	return t ? (const char *)t : "";
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
	return 2;	/* found: stop */
}

/* The first row's first @nv columns in @v[0, nv): 0 when the query
 * returns a row, 1 when none, -1 on error. */
static int select_ints(struct store *st, const char *sql, const char *what,
		       const int64_t *args, int nargs, int64_t *v, int nv)
{
	struct ints r = { v, nv };
	int ret = query(st, sql, what, args, nargs, first_row, &r);

	return ret == 2 ? 0 : ret == 0 ? 1 : -1;
}

/* Runs a report shows unless told otherwise: measurement runs.  Training
 * and validation runs sample stack copies at other rates; they are
 * reported only by --run ID. */
#define MEASUREMENT "kind IN ('record', 'daemon')"

int store__latest_run(struct store *st, int64_t *id)
{
	return select_ints(st, "SELECT MAX(id) FROM runs WHERE " MEASUREMENT
			   " HAVING MAX(id) IS NOT NULL", "finding the latest run",
			   NULL, 0, id, 1);
}

int store__run_range(struct store *st, int64_t *lo, int64_t *hi)
{
	int64_t v[2] = { 0, 0 };
	int ret = select_ints(st, "SELECT COALESCE(MIN(id), 0),"
			      " COALESCE(MAX(id), 0) FROM runs",
			      "reading runs", NULL, 0, v, 2);

	*lo = v[0];
	*hi = v[1];
	return ret < 0 ? -1 : 0;
}

static void copy(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src);
}

static int run_row(sqlite3_stmt *s, void *ctx)
{
	struct run_row *r = ctx;

	r->id = sqlite3_column_int64(s, 0);
	copy(r->kind, sizeof(r->kind), text(s, 1));
	copy(r->status, sizeof(r->status), text(s, 2));
	copy(r->event, sizeof(r->event), text(s, 3));
	copy(r->command, sizeof(r->command), text(s, 4));
	r->samples = sqlite3_column_int64(s, 5);
	r->unresolved = sqlite3_column_int64(s, 6);
	r->lost = sqlite3_column_int64(s, 7);
	r->period = (uint64_t)sqlite3_column_int64(s, 8);
	r->frequency = (uint64_t)sqlite3_column_int64(s, 9);
	r->started_ns = sqlite3_column_int64(s, 10);
	return 2;
}

int store__run(struct store *st, int64_t id, struct run_row *out)
{
	int ret;

	memset(out, 0, sizeof(*out));
	ret = query(st, "SELECT id, kind, status, event, command, samples,"
		    " unresolved, lost, COALESCE(period, 0),"
		    " COALESCE(frequency, 0), started_ns FROM runs WHERE id = ?",
		    "reading the run", &id, 1, run_row, out);
	return ret == 2 ? 0 : ret == 0 ? 1 : -1;
}

struct cb {
	void *fn, *arg;
};

static int module_row(sqlite3_stmt *s, void *ctx)
{
	struct cb *c = ctx;
	struct store_module m = { sqlite3_column_int64(s, 0), text(s, 1),
				  text(s, 2) };

	return ((int (*)(void *, const struct store_module *))c->fn)(c->arg, &m);
}

int store__modules(struct store *st,
		   int (*fn)(void *arg, const struct store_module *m),
		   void *arg)
{
	struct cb c = { (void *)fn, arg };

	return query(st, "SELECT id, path, build_id FROM modules",
		     "reading modules", NULL, 0, module_row, &c);
}

static int path_row(sqlite3_stmt *s, void *ctx)
{
	struct cb *c = ctx;

	return ((int (*)(void *, const char *))c->fn)(c->arg, text(s, 0));
}

int store__programs_named(struct store *st, const char *name,
			  int (*fn)(void *arg, const char *path), void *arg)
{
	struct cb c = { (void *)fn, arg };
	sqlite3_stmt *s;

	if (sqlite3_prepare_v2(st->db,
	    "SELECT path FROM modules WHERE id IN"
	    " (SELECT DISTINCT program_id FROM cid_samples)"
	    " AND (?1 IS NULL OR path = ?1 OR (instr(?1, '/') = 0"
	    "      AND substr(path, -length(?1) - 1) = '/' || ?1))"
	    " ORDER BY path", -1, &s, NULL))
		return store__db_error(st, "finding programs");
	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	return run_rows(st, s, "finding programs", path_row, &c);
}

static int function_row(sqlite3_stmt *s, void *ctx)
{
	struct cb *c = ctx;
	struct store_function f = { sqlite3_column_int64(s, 0),
		sqlite3_column_int64(s, 1), (uint64_t)sqlite3_column_int64(s, 2),
		text(s, 3) };

	return ((int (*)(void *, const struct store_function *))c->fn)(c->arg,
									 &f);
}

int store__functions(struct store *st,
		     int (*fn)(void *arg, const struct store_function *f),
		     void *arg)
{
	struct cb c = { (void *)fn, arg };

	return query(st, "SELECT id, module_id, address, name FROM functions",
		     "reading functions", NULL, 0, function_row, &c);
}

static int program_row(sqlite3_stmt *s, void *ctx)
{
	struct cb *c = ctx;

	return ((int (*)(void *, int64_t))c->fn)(c->arg,
						sqlite3_column_int64(s, 0));
}

static int cid_row(sqlite3_stmt *s, void *ctx)
{
	struct cb *c = ctx;
	struct store_cid k = { sqlite3_column_int64(s, 0),
		sqlite3_column_int64(s, 1), sqlite3_column_int64(s, 2),
		sqlite3_column_int64(s, 3) };

	return ((int (*)(void *, const struct store_cid *))c->fn)(c->arg, &k);
}

/* The WHERE clause of a selection over cid_samples c, parameters ?1-?5. */
#define SELECTION \
	" WHERE c.run_id IN (SELECT id FROM runs WHERE (?1 > 0 AND id = ?1)" \
	"  OR (?1 = 0 AND " MEASUREMENT " AND started_ns <= ?3" \
	"      AND COALESCE(ended_ns, ?3) >= ?2))" \
	" AND (?4 = 0 OR c.pid = ?4)" \
	" AND (?5 IS NULL OR c.program_id IN" \
	"      (SELECT id FROM modules WHERE path = ?5))"

static int selection(struct store *st, const char *sql, const char *what,
		     const struct store_selection *sel,
		     int (*row)(sqlite3_stmt *s, void *ctx), void *ctx)
{
	sqlite3_stmt *s;
	int rc, ret = 0;

	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL))
		return store__db_error(st, what);
	sqlite3_bind_int64(s, 1, sel->run_id);
	sqlite3_bind_int64(s, 2, sel->since_ns);
	sqlite3_bind_int64(s, 3, sel->until_ns);
	sqlite3_bind_int64(s, 4, sel->pid);
	if (sel->program)
		sqlite3_bind_text(s, 5, sel->program, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		if ((ret = row(s, ctx)))
			break;
	if (!ret && rc != SQLITE_DONE)
		ret = store__db_error(st, what);
	sqlite3_finalize(s);
	return ret;
}

int store__run_programs(struct store *st, const struct store_selection *sel,
			int (*fn)(void *arg, int64_t program_id), void *arg)
{
	struct cb c = { (void *)fn, arg };

	return selection(st, "SELECT DISTINCT c.program_id FROM cid_samples c"
			 SELECTION, "reading the run's programs", sel,
			 program_row, &c);
}

int store__run_cids(struct store *st, const struct store_selection *sel,
		    int (*fn)(void *arg, const struct store_cid *c), void *arg)
{
	struct cb c = { (void *)fn, arg };

	return selection(st, "SELECT c.program_id, c.function_id, c.height,"
			 " SUM(c.samples) FROM cid_samples c" SELECTION
			 " GROUP BY c.program_id, c.function_id, c.height",
			 "reading the run's samples", sel, cid_row, &c);
}

static int window_row(sqlite3_stmt *s, void *ctx)
{
	int64_t *v = ctx;

	for (int i = 0; i < 5; i++)
		v[i] = sqlite3_column_int64(s, i);
	return 0;
}

int store__window_runs(struct store *st, const struct store_selection *sel,
		       int64_t *nruns, int64_t *first, int64_t *last,
		       int64_t *samples, int64_t *unresolved)
{
	int64_t v[5] = { 0 };
	int ret = selection(st, "SELECT COUNT(*), COALESCE(MIN(id), 0),"
		" COALESCE(MAX(id), 0), COALESCE(SUM(samples), 0),"
		" COALESCE(SUM(unresolved), 0) FROM runs WHERE id IN"
		" (SELECT id FROM runs WHERE (?1 > 0 AND id = ?1)"
		"  OR (?1 = 0 AND " MEASUREMENT " AND started_ns <= ?3"
		"      AND COALESCE(ended_ns, ?3) >= ?2))"
		" AND ?4 = ?4 AND (?5 IS NULL OR ?5 = ?5)",
		"reading runs", sel, window_row, v);

	*nruns = v[0];
	*first = v[1];
	*last = v[2];
	*samples = v[3];
	*unresolved = v[4];
	return ret;
}

static int node_row(sqlite3_stmt *s, void *ctx)
{
	struct cb *c = ctx;
	struct store_node n = { sqlite3_column_int64(s, 0),
		sqlite3_column_int64(s, 1), sqlite3_column_int64(s, 2),
		sqlite3_column_int64(s, 3), sqlite3_column_int64(s, 4),
		sqlite3_column_int64(s, 5), sqlite3_column_int64(s, 6),
		sqlite3_column_int64(s, 7) };

	return ((int (*)(void *, const struct store_node *))c->fn)(c->arg, &n);
}

int store__map_nodes(struct store *st, int64_t program_id, int64_t map_run,
		     int (*fn)(void *arg, const struct store_node *n),
		     void *arg)
{
	int64_t args[2] = { program_id, map_run }, map = 0;
	struct cb c = { (void *)fn, arg };
	int ret;

	ret = select_ints(st, "SELECT id FROM path_maps WHERE program_id = ?"
			  " AND run_id = ?", "reading path maps", args, 2, &map, 1);
	if (ret)
		return ret;
	/* ids grow with insertion and a parent is always written before
	 * its children: id order is parents first */
	return query(st, "SELECT id, parent_id, function_id, context_id,"
		     " height, call_site, self, total FROM path_nodes"
		     " WHERE map_id = ? ORDER BY id", "reading the path map",
		     &map, 1, node_row, &c);
}

int store__map_samples(struct store *st, int64_t *samples)
{
	return select_ints(st, "SELECT COALESCE(SUM(n.self), 0) FROM"
			   " path_nodes n JOIN path_maps m ON m.id = n.map_id"
			   " WHERE m.run_id = 0", "reading path maps", NULL, 0,
			   samples, 1) < 0 ? -1 : 0;
}

int store__inference_stamp(struct store *st, int64_t run_id,
			   int64_t *map_samples, int64_t *run_samples)
{
	int64_t v[2] = { 0, 0 };
	int ret = select_ints(st, "SELECT map_samples, run_samples FROM"
			      " inferences WHERE run_id = ?",
			      "reading the inference", &run_id, 1, v, 2);

	*map_samples = v[0];
	*run_samples = v[1];
	return ret;
}

int store__inference_begin(struct store *st, int64_t run_id)
{
	sqlite3_stmt *s;
	int ret = -1;

	if (store__exec(st, "BEGIN IMMEDIATE", "storing the inference"))
		return -1;
	for (int i = 0; i < 2; i++) {
		if (sqlite3_prepare_v2(st->db, i ?
		    "DELETE FROM inferences WHERE run_id = ?" :
		    "DELETE FROM inferred WHERE run_id = ?", -1, &s, NULL))
			goto out_rollback;
		sqlite3_bind_int64(s, 1, run_id);
		ret = store__step_done(st, s, "storing the inference");
		sqlite3_finalize(s);
		if (ret)
			goto out_rollback;
	}
	return 0;
out_rollback:
	if (!ret)
		store__db_error(st, "storing the inference");
	store__inference_rollback(st);
	return -1;
}

/* A statement kept for the rows of one inference. */
static sqlite3_stmt *cached(struct store *st, sqlite3_stmt **slot,
			    const char *sql)
{
	if (!*slot && sqlite3_prepare_v3(st->db, sql, -1,
					 SQLITE_PREPARE_PERSISTENT, slot, NULL))
		store__db_error(st, "storing the inference");
	return *slot;
}

int store__context(struct store *st, int64_t parent_id, int64_t function_id,
		   int64_t *id)
{
	sqlite3_stmt *s = st->ins_ctx;

	sqlite3_bind_int64(s, 1, parent_id);
	sqlite3_bind_int64(s, 2, function_id);
	return store__returning_id(st, s, id, "storing the inference");
}

int store__unknown_frame(struct store *st, int64_t function_id,
			 int64_t height, int64_t *id)
{
	sqlite3_stmt *s = cached(st, &st->ins_unknown,
		"INSERT INTO unknown_frames (function_id, height) VALUES (?, ?)"
		" ON CONFLICT DO UPDATE SET height = height RETURNING id");

	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, function_id);
	sqlite3_bind_int64(s, 2, height);
	return store__returning_id(st, s, id, "storing the inference");
}

int store__inferred_row(struct store *st, int64_t run_id, int64_t context_id,
			int64_t unknown_id, const char *how, int64_t exact,
			double samples)
{
	sqlite3_stmt *s = cached(st, &st->ins_inferred,
		"INSERT INTO inferred VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT"
		" DO UPDATE SET samples = samples + excluded.samples");

	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, run_id);
	sqlite3_bind_int64(s, 2, context_id);
	sqlite3_bind_int64(s, 3, unknown_id);
	sqlite3_bind_text(s, 4, how, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 5, exact);
	sqlite3_bind_double(s, 6, samples);
	return store__step_done(st, s, "storing the inference");
}

int store__inference_commit(struct store *st, int64_t run_id,
			    int64_t map_samples, int64_t run_samples)
{
	int64_t now = clock__real_ns();
	sqlite3_stmt *s;
	int ret;

	if (sqlite3_prepare_v2(st->db, "INSERT INTO inferences VALUES"
			       " (?, ?, ?, ?)", -1, &s, NULL)) {
		store__db_error(st, "storing the inference");
		goto out_rollback;
	}
	sqlite3_bind_int64(s, 1, run_id);
	sqlite3_bind_int64(s, 2, map_samples);
	sqlite3_bind_int64(s, 3, run_samples);
	sqlite3_bind_int64(s, 4, now);
	ret = store__step_done(st, s, "storing the inference");
	sqlite3_finalize(s);
	if (ret || store__exec(st, "COMMIT", "storing the inference"))
		goto out_rollback;
	return 0;
out_rollback:
	store__inference_rollback(st);
	return -1;
}

void store__inference_rollback(struct store *st)
{
	sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
}
