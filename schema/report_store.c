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
#include "common/search.h"
#include "schema/report_store.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schema/store_int.h"

/* Runs a report shows unless told otherwise: measurement runs.  Training
 * and validation runs sample stack copies at other rates; they are
 * reported only by --run ID. */
#define MEASUREMENT "kind IN ('record', 'daemon')"

/* A daemon's newest segment is open and often empty yet (a flush
 * fills it): its newest data is in the newest segment with samples.  A
 * recording is the latest whatever it holds: "record -- true" is
 * reported as the empty run it is. */
int store__latest_run(struct store *st, int64_t *id)
{
	return store__ints(st, "finding the latest run", id, 1,
			   "SELECT MAX(id) FROM runs WHERE " MEASUREMENT
			   " AND (kind <> 'daemon' OR EXISTS (SELECT 1 FROM"
			   " cid_samples c WHERE c.run_id = runs.id))"
			   " HAVING MAX(id) IS NOT NULL", NULL);
}

int store__run_range(struct store *st, int64_t *lo, int64_t *hi)
{
	int64_t v[2] = { 0, 0 };
	int ret = store__ints(st, "reading runs", v, 2,
			      "SELECT COALESCE(MIN(id), 0), COALESCE(MAX(id), 0)"
			      " FROM runs", NULL);

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
	copy(r->kind, sizeof(r->kind), store__text(s, 1));
	copy(r->status, sizeof(r->status), store__text(s, 2));
	copy(r->event, sizeof(r->event), store__text(s, 3));
	copy(r->command, sizeof(r->command), store__text(s, 4));
	r->samples = sqlite3_column_int64(s, 5);
	r->unresolved = sqlite3_column_int64(s, 6);
	r->lost = sqlite3_column_int64(s, 7);
	r->period = (uint64_t)sqlite3_column_int64(s, 8);
	r->frequency = (uint64_t)sqlite3_column_int64(s, 9);
	r->started_ns = sqlite3_column_int64(s, 10);
	r->ended_ns = sqlite3_column_int64(s, 11);
	r->user_ns = sqlite3_column_int64(s, 12);
	r->system_ns = sqlite3_column_int64(s, 13);
	r->kernel = sqlite3_column_int64(s, 14) != 0;
	r->learned_paths = sqlite3_column_int64(s, 15);
	r->learned_once = sqlite3_column_int64(s, 16);
	return 1;
}

int store__run(struct store *st, int64_t id, struct run_row *out)
{
	int ret;

	memset(out, 0, sizeof(*out));
	ret = store__sql(st, "reading the run", run_row, out,
			 "SELECT id, kind, CASE WHEN crashed THEN 'crashed'"
			 " ELSE status END, event, command, samples,"
			 " unresolved, lost, COALESCE(period, 0),"
			 " COALESCE(frequency, 0), started_ns,"
			 " COALESCE(ended_ns, flushed_ns, started_ns),"
			 " COALESCE(user_ns, -1), COALESCE(system_ns, -1),"
			 " kernel, COALESCE((SELECT value FROM run_counters"
			 "  WHERE run_id = runs.id AND name = 'learn.paths'), 0),"
			 " COALESCE((SELECT value FROM run_counters"
			 "  WHERE run_id = runs.id AND name = 'learn.once'), -1)"
			 " FROM runs WHERE id = ?", "i", id);
	return ret == 1 ? 0 : ret == 0 ? STORE_NONE : -1;
}

/* A caller's typed row callback, behind the store's untyped one. */
struct cb {
	union {
		int (*module)(void *arg, const struct store_module *m);
		int (*path)(void *arg, const char *path);
		int (*function)(void *arg, const struct store_function *f);
		int (*program)(void *arg, int64_t program_id);
		int (*cid)(void *arg, const struct store_cid *c);
		int (*learned)(void *arg, int64_t node_id, int64_t samples);
		int (*explained)(void *arg, const struct store_explained *e);
		int (*context)(void *arg, const struct store_context *c);
		int (*node)(void *arg, const struct store_node *n);
	} fn;
	void *arg;
	int64_t total;		/* the samples of the rows so far */
};

/* Counts no run reaches (10^12 samples in one row, 2^52 in all), so
 * that sums of counts from a database, which anyone can hand over,
 * never overflow. */
#define STORE_MAX_SAMPLES (INT64_C(1) << 40)
#define STORE_MAX_TOTAL (INT64_C(1) << 52)

/* -ERANGE ("Numerical result out of range") for a row whose counts no
 * recording wrote, else 0. */
static int check_counts(struct cb *c, const struct store_cid *k)
{
	if (k->samples < 0 || k->samples > STORE_MAX_SAMPLES ||
	    k->kernel < 0 || k->kernel > k->samples)
		return -ERANGE;
	c->total += k->samples;
	return c->total > STORE_MAX_TOTAL ? -ERANGE : 0;
}

static int module_row(sqlite3_stmt *s, void *ctx)
{
	struct cb *c = ctx;
	struct store_module m = { sqlite3_column_int64(s, 0),
				  store__text(s, 1), store__text(s, 2) };

	return c->fn.module(c->arg, &m);
}

int store__modules(struct store *st,
		   int (*fn)(void *arg, const struct store_module *m),
		   void *arg)
{
	struct cb c = { .fn.module = fn, .arg = arg };

	return store__sql(st, "reading modules", module_row, &c,
			  "SELECT id, path, build_id FROM modules", NULL);
}

static int path_row(sqlite3_stmt *s, void *ctx)
{
	struct cb *c = ctx;

	return c->fn.path(c->arg, store__text(s, 0));
}

int store__programs_named(struct store *st, const char *name,
			  int (*fn)(void *arg, const char *path), void *arg)
{
	struct cb c = { .fn.path = fn, .arg = arg };

	return store__sql(st, "finding programs", path_row, &c,
			  "SELECT path FROM modules WHERE id IN"
			  " (SELECT DISTINCT program_id FROM cid_samples)"
			  " AND (?1 IS NULL OR path = ?1 OR (instr(?1, '/') = 0"
			  "      AND substr(path, -length(?1) - 1) = '/' || ?1))"
			  " ORDER BY path", "t", name);
}

static int function_row(sqlite3_stmt *s, void *ctx)
{
	struct cb *c = ctx;
	struct store_function f = { sqlite3_column_int64(s, 0),
		sqlite3_column_int64(s, 1), (uint64_t)sqlite3_column_int64(s, 2),
		store__text(s, 3) };

	return c->fn.function(c->arg, &f);
}

int store__functions(struct store *st,
		     int (*fn)(void *arg, const struct store_function *f),
		     void *arg)
{
	struct cb c = { .fn.function = fn, .arg = arg };

	return store__sql(st, "reading functions", function_row, &c,
			  "SELECT id, module_id, address, name FROM functions",
			  NULL);
}

static int program_row(sqlite3_stmt *s, void *ctx)
{
	struct cb *c = ctx;

	return c->fn.program(c->arg, sqlite3_column_int64(s, 0));
}

static int cid_row(sqlite3_stmt *s, void *ctx)
{
	struct cb *c = ctx;
	struct store_cid k = { .program_id = sqlite3_column_int64(s, 0),
		.function_id = sqlite3_column_int64(s, 1),
		.height = sqlite3_column_int64(s, 2),
		.samples = sqlite3_column_int64(s, 3),
		.kernel = sqlite3_column_int64(s, 4) };

	return check_counts(c, &k) ? -ERANGE : c->fn.cid(c->arg, &k);
}

/* The runs of a selection, parameters ?1-?3. */
#define SELECTED_RUNS \
	"SELECT id FROM runs WHERE (?1 > 0 AND id = ?1)" \
	"  OR (?1 = 0 AND " MEASUREMENT " AND started_ns <= ?3" \
	"      AND COALESCE(ended_ns, ?3) >= ?2)"
/* The WHERE clause of a selection over cid_samples c (or kernel_chains
 * c), parameters ?1-?7. */
#define SELECTION \
	" WHERE c.run_id IN (" SELECTED_RUNS ")" \
	" AND (?4 = 0 OR c.pid = ?4)" \
	" AND (?7 = 0 OR c.tid = ?7)" \
	" AND (?5 IS NULL OR c.program_id IN" \
	"      (SELECT id FROM modules WHERE path = ?5))" \
	" AND (?6 IS NULL OR EXISTS (SELECT 1 FROM threads t" \
	"      WHERE t.run_id = c.run_id AND t.pid = c.pid" \
	"      AND t.tid = c.tid AND t.comm = ?6))"
/* The command of cid_samples c's thread. */
#define COMM \
	"COALESCE((SELECT t.comm FROM threads t WHERE t.run_id = c.run_id" \
	" AND t.pid = c.pid AND t.tid = c.tid), '?')"

static int selection(struct store *st, const char *sql, const char *what,
		     const struct store_selection *sel, store_row_fn row,
		     void *ctx)
{
	return store__sql(st, what, row, ctx, sql, "iiiitti", sel->run_id,
			  sel->since_ns, sel->until_ns, sel->pid, sel->program,
			  sel->comm, sel->tid);
}

/*
 * What a selection's CIDs weigh, as a table of cid_samples' columns
 * (run_id, pid, tid, program_id, function_id, height, samples,
 * kernel_samples): their samples; the microseconds their threads were
 * blocked after switching out of them (record --off-cpu), none "in the
 * kernel" (the time is the kernel's wait, not its work); or both, each
 * sample worth its period in microseconds (a clock event's period is
 * nanoseconds, else the rate's): wall-clock time.
 */
#define OFFCPU_ROWS \
	"SELECT run_id, pid, tid, program_id, function_id, height," \
	" blocked_ns / 1000 AS samples, 0 AS kernel_samples" \
	" FROM offcpu_samples"
#define US_PER_SAMPLE \
	"(CASE WHEN r.period > 0 THEN r.period / 1000.0" \
	" WHEN r.frequency > 0 THEN 1000000.0 / r.frequency ELSE 0 END)"

static const char *weighed_rows(const struct store_selection *sel)
{
	if (sel->wall)
		return "(SELECT s.run_id, s.pid, s.tid, s.program_id,"
		       " s.function_id, s.height,"
		       " CAST(s.samples * " US_PER_SAMPLE " AS INTEGER)"
		       " AS samples, CAST(s.kernel_samples * " US_PER_SAMPLE
		       " AS INTEGER) AS kernel_samples"
		       " FROM cid_samples s JOIN runs r ON r.id = s.run_id"
		       " UNION ALL " OFFCPU_ROWS ")";
	return sel->offcpu ? "(" OFFCPU_ROWS ")" : "cid_samples";
}

/* selection() of @fmt with its one "%s" the table weighed_rows()
 * gives. */
static int weighed(struct store *st, const char *fmt, const char *what,
		   const struct store_selection *sel, store_row_fn row,
		   void *ctx)
{
	const char *at = strstr(fmt, "%s");
	char sql[4096];

	snprintf(sql, sizeof(sql), "%.*s%s%s", (int)(at - fmt), fmt,
		 weighed_rows(sel), at + 2);
	return selection(st, sql, what, sel, row, ctx);
}

int store__run_programs(struct store *st, const struct store_selection *sel,
			int (*fn)(void *arg, int64_t program_id), void *arg)
{
	struct cb c = { .fn.program = fn, .arg = arg };

	/* off-CPU: a program that only waited (a shell in wait4) has no
	 * CPU sample, and its map explains its waits */
	return weighed(st, "SELECT DISTINCT c.program_id FROM %s c"
		       SELECTION, "reading the run's programs", sel,
		       program_row, &c);
}

int store__run_cids(struct store *st, const struct store_selection *sel,
		    int (*fn)(void *arg, const struct store_cid *c), void *arg)
{
	struct cb c = { .fn.cid = fn, .arg = arg };

	return weighed(st, "SELECT c.program_id, c.function_id, c.height,"
		       " SUM(c.samples), SUM(c.kernel_samples) FROM %s c"
		       SELECTION " GROUP BY c.program_id, c.function_id,"
		       " c.height", "reading the run's samples", sel, cid_row,
		       &c);
}

static int process_cid_row(sqlite3_stmt *s, void *ctx)
{
	struct cb *c = ctx;
	struct store_cid k = { .program_id = sqlite3_column_int64(s, 0),
		.function_id = sqlite3_column_int64(s, 1),
		.height = sqlite3_column_int64(s, 2),
		.samples = sqlite3_column_int64(s, 3),
		.kernel = sqlite3_column_int64(s, 4),
		.pid = sqlite3_column_int64(s, 5), .comm = store__text(s, 6) };

	return check_counts(c, &k) ? -ERANGE : c->fn.cid(c->arg, &k);
}

int store__run_process_cids(struct store *st,
			    const struct store_selection *sel,
			    enum store_group by,
			    int (*fn)(void *arg, const struct store_cid *c),
			    void *arg)
{
	static const char *const sql[] = {
		[STORE_BY_COMM] = "SELECT c.program_id, c.function_id,"
		" c.height, SUM(c.samples), SUM(c.kernel_samples), 0, " COMM
		" AS comm FROM %s c"
		SELECTION " GROUP BY comm, c.program_id, c.function_id,"
		" c.height",
		[STORE_BY_PID] = "SELECT c.program_id, c.function_id,"
		" c.height, SUM(c.samples), SUM(c.kernel_samples), c.pid, "
		COMM " AS comm FROM %s c"
		SELECTION " GROUP BY c.pid, comm, c.program_id, c.function_id,"
		" c.height",
		[STORE_BY_THREAD] = "SELECT c.program_id, c.function_id,"
		" c.height, SUM(c.samples), SUM(c.kernel_samples), c.pid, "
		COMM " || '-' || c.pid || '/' || c.tid AS comm FROM %s c"
		SELECTION " GROUP BY c.pid, c.tid, c.program_id,"
		" c.function_id, c.height" };
	struct cb c = { .fn.cid = fn, .arg = arg };

	return weighed(st, sql[by], "reading the run's samples", sel,
		       process_cid_row, &c);
}

/* The selection of store__run_pcs(): SELECTION for pc_samples p,
 * whose rows name a process but not its thread or program (a thread
 * chosen: its process's instructions). */
#define PC_SELECTION \
	" WHERE p.run_id IN (" SELECTED_RUNS ")" \
	" AND (?4 = 0 OR p.pid = ?4)" \
	" AND (?7 = 0 OR EXISTS (SELECT 1 FROM cid_samples c" \
	"      WHERE c.run_id = p.run_id AND c.pid = p.pid AND c.tid = ?7))" \
	" AND (?5 IS NULL OR EXISTS (SELECT 1 FROM cid_samples c" \
	"      WHERE c.run_id = p.run_id AND c.pid = p.pid AND c.program_id" \
	"      IN (SELECT id FROM modules WHERE path = ?5)))" \
	" AND (?6 IS NULL OR EXISTS (SELECT 1 FROM threads t" \
	"      WHERE t.run_id = p.run_id AND t.pid = p.pid AND t.comm = ?6))"

struct pc_cb {
	int (*fn)(void *arg, const struct store_pc *pc);
	void *arg;
};

static int pc_row(sqlite3_stmt *s, void *ctx)
{
	struct pc_cb *c = ctx;
	int64_t off = sqlite3_column_int64(s, 1);
	struct store_pc pc = { .function_id = sqlite3_column_int64(s, 0),
		.offset = (uint32_t)off,
		.samples = sqlite3_column_int64(s, 2) };

	if (off < 0 || off > UINT32_MAX || pc.samples <= 0 ||
	    pc.samples > STORE_MAX_SAMPLES)
		return 0;
	return c->fn(c->arg, &pc);
}

int store__run_pcs(struct store *st, const struct store_selection *sel,
		   int (*fn)(void *arg, const struct store_pc *pc), void *arg)
{
	struct pc_cb c = { fn, arg };

	return selection(st, "SELECT p.function_id, p.offset, SUM(p.samples)"
			 " FROM pc_samples p" PC_SELECTION
			 " GROUP BY p.function_id, p.offset"
			 " ORDER BY p.function_id, p.offset",
			 "reading the sampled instructions", sel, pc_row, &c);
}

size_t store__pcs_of(const struct store_pc *pcs, size_t n,
		     int64_t function_id, size_t *first)
{
	size_t lo = LOWER_BOUND((size_t)0, n, i,
				pcs[i].function_id < function_id), end;

	for (end = lo; end < n && pcs[end].function_id == function_id; end++)
		;
	*first = lo;
	return end - lo;
}

struct kchain_cb {
	int (*fn)(void *arg, const struct store_kchain *k);
	void *arg;
};

static int kchain_row(sqlite3_stmt *s, void *ctx)
{
	struct kchain_cb *c = ctx;
	struct store_kchain k = { sqlite3_column_int64(s, 0),
		sqlite3_column_int64(s, 1), sqlite3_column_int64(s, 2),
		store__text(s, 3), sqlite3_column_int64(s, 4) };

	return k.samples > 0 ? c->fn(c->arg, &k) : 0;
}

int store__run_kchains(struct store *st, const struct store_selection *sel,
		       int (*fn)(void *arg, const struct store_kchain *k),
		       void *arg)
{
	struct kchain_cb c = { fn, arg };

	return selection(st, "SELECT c.program_id, c.function_id, c.height,"
			 " c.chain, SUM(c.samples) FROM kernel_chains c"
			 SELECTION " GROUP BY c.program_id, c.function_id,"
			 " c.height, c.chain", "reading the kernel's chains",
			 sel, kchain_row, &c);
}

/* A command and its samples, for store__run_comms(). */
struct comm_cb {
	int (*fn)(void *arg, const char *comm, int64_t samples);
	void *arg;
};

static int comm_row(sqlite3_stmt *s, void *ctx)
{
	struct comm_cb *c = ctx;

	return c->fn(c->arg, store__text(s, 0), sqlite3_column_int64(s, 1));
}

int store__run_comms(struct store *st, const struct store_selection *sel,
		     int (*fn)(void *arg, const char *comm, int64_t samples),
		     void *arg)
{
	struct comm_cb c = { fn, arg };

	return weighed(st, "SELECT " COMM " AS comm, SUM(c.samples) AS n"
		       " FROM %s c" SELECTION " GROUP BY comm"
		       " ORDER BY n DESC, comm", "reading the run's commands",
		       sel, comm_row, &c);
}

int store__window_runs(struct store *st, const struct store_selection *sel,
		       int64_t *nruns, int64_t *first, int64_t *last,
		       int64_t *samples, int64_t *unresolved)
{
	int64_t v[5] = { 0 };
	int ret = store__ints(st, "reading runs", v, 5,
		"SELECT COUNT(*), COALESCE(MIN(id), 0),"
		" COALESCE(MAX(id), 0), COALESCE(SUM(samples), 0),"
		" COALESCE(SUM(unresolved), 0) FROM runs WHERE id IN"
		" (" SELECTED_RUNS ")", "iii", sel->run_id, sel->since_ns,
		sel->until_ns);

	*nruns = v[0];
	*first = v[1];
	*last = v[2];
	*samples = v[3];
	*unresolved = v[4];
	return ret < 0 ? -1 : 0;
}

int store__window_run_ids(struct store *st, const struct store_selection *sel,
			  int (*fn)(void *arg, int64_t run_id), void *arg)
{
	struct cb c = { .fn.program = fn, .arg = arg };

	return store__sql(st, "reading runs", program_row, &c,
			  SELECTED_RUNS " ORDER BY id", "iii", sel->run_id,
			  sel->since_ns, sel->until_ns) < 0 ? -1 : 0;
}

static int node_row(sqlite3_stmt *s, void *ctx)
{
	struct cb *c = ctx;
	struct store_node n = { sqlite3_column_int64(s, 0),
		sqlite3_column_int64(s, 1), sqlite3_column_int64(s, 2),
		sqlite3_column_int64(s, 3), sqlite3_column_int64(s, 4),
		sqlite3_column_int64(s, 5), sqlite3_column_int64(s, 6),
		sqlite3_column_int64(s, 7) };

	if (n.self < 0 || n.self > STORE_MAX_SAMPLES || n.total < 0 ||
	    n.total > STORE_MAX_SAMPLES)
		return -ERANGE;	/* see STORE_MAX_SAMPLES */
	return c->fn.node(c->arg, &n);
}

int store__map_nodes(struct store *st, int64_t program_id, int64_t map_run,
		     int (*fn)(void *arg, const struct store_node *n),
		     void *arg)
{
	struct cb c = { .fn.node = fn, .arg = arg };
	int64_t map = 0;
	int ret;

	ret = store__ints(st, "reading path maps", &map, 1,
			  "SELECT id FROM path_maps WHERE program_id = ?"
			  " AND run_id = ?", "ii", program_id, map_run);
	if (ret)
		return ret;
	/* ids grow with insertion and a parent is always written before
	 * its children: id order is parents first */
	return store__sql(st, "reading the path map", node_row, &c,
			  "SELECT id, parent_id, function_id, context_id,"
			  " height, call_site, self, total FROM path_nodes"
			  " WHERE map_id = ? ORDER BY id", "i", map);
}

int store__run_map_samples(struct store *st, int64_t run_id,
			   int64_t *samples)
{
	return store__ints(st, "reading path maps", samples, 1,
			   "SELECT COALESCE(SUM(n.self), 0) FROM path_nodes n"
			   " JOIN path_maps m ON m.id = n.map_id"
			   " WHERE m.run_id IN (0, -1) AND m.program_id IN"
			   " (SELECT DISTINCT program_id FROM cid_samples"
			   "  WHERE run_id = ?)", "i", run_id) < 0 ? -1 : 0;
}

static int learned_row(sqlite3_stmt *s, void *ctx)
{
	const struct cb *c = ctx;
	int64_t samples = sqlite3_column_int64(s, 1);

	if (samples > STORE_MAX_SAMPLES)	/* the query keeps > 0 */
		return -ERANGE;
	return c->fn.learned(c->arg, sqlite3_column_int64(s, 0), samples);
}

int store__run_learned(struct store *st, int64_t run_id,
		       int (*fn)(void *arg, int64_t node_id, int64_t samples),
		       void *arg)
{
	struct cb c = { .fn.learned = fn, .arg = arg };

	return store__sql(st, "reading a run's learned paths", learned_row,
			  &c, "SELECT node_id, samples FROM run_learned"
			  " WHERE run_id = ? AND samples > 0", "i", run_id) < 0 ?
	       -1 : 0;
}

static int stamp_row(sqlite3_stmt *s, void *ctx)
{
	struct inference_stamp *o = ctx;

	*o = (struct inference_stamp){ sqlite3_column_int64(s, 0),
		sqlite3_column_int64(s, 1), sqlite3_column_double(s, 2),
		sqlite3_column_int64(s, 3), sqlite3_column_int64(s, 4),
		sqlite3_column_int64(s, 5), "", "",
		sqlite3_column_int64(s, 8), sqlite3_column_double(s, 12),
		sqlite3_column_int64(s, 9), sqlite3_column_int64(s, 10),
		sqlite3_column_double(s, 11) };
	snprintf(o->unreadable_path, sizeof(o->unreadable_path), "%s",
		 store__text(s, 6));
	snprintf(o->unreadable_why, sizeof(o->unreadable_why), "%s",
		 store__text(s, 7));
	return 1;
}

int store__build_calls(struct store *st, const char *build_id, size_t max,
		       void **blob, size_t *len)
{
	const char *what = "reading a build's calls";
	sqlite3_stmt *s;
	int rc, found = 0;

	*blob = NULL;
	*len = 0;
	if (sqlite3_prepare_v2(st->db, "SELECT length(calls), calls"
			       " FROM build_calls WHERE build_id = ?", -1, &s,
			       NULL))
		return store__db_error(st, what);
	sqlite3_bind_text(s, 1, build_id, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	/* the length first: a larger blob is never loaded */
	if (rc == SQLITE_ROW && sqlite3_column_int64(s, 0) > 0 &&
	    (uint64_t)sqlite3_column_int64(s, 0) <= max) {
		const void *b = sqlite3_column_blob(s, 1);
		int n = sqlite3_column_bytes(s, 1);

		if (b && n > 0 && (*blob = malloc((size_t)n))) {
			memcpy(*blob, b, (size_t)n);
			*len = (size_t)n;
			found = 1;
		} else if (b && n > 0) {
			store__set_error(st, "%s: out of memory", what);
			rc = SQLITE_NOMEM;
		}
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return rc == SQLITE_NOMEM ? -1 : store__db_error(st, what);
	if (found && !st->readonly &&
	    store__sql(st, what, NULL, NULL, "UPDATE build_calls SET last_run ="
		       " (SELECT coalesce(max(id), 0) FROM runs)"
		       " WHERE build_id = ?1 AND last_run <"
		       " (SELECT coalesce(max(id), 0) FROM runs)", "t",
		       build_id)) {
		free(*blob);
		*blob = NULL;
		return -1;
	}
	return found;
}

int store__put_build_calls(struct store *st, const char *build_id,
			   const void *blob, size_t len)
{
	const char *what = "keeping a build's calls";
	sqlite3_stmt *s;
	int rc;

	if (len > INT32_MAX) {
		store__set_error(st, "%s: %zu bytes, too large", what, len);
		return -1;
	}
	if (sqlite3_prepare_v2(st->db, "INSERT OR REPLACE INTO build_calls"
			       " (build_id, last_run, calls) VALUES (?,"
			       " (SELECT coalesce(max(id), 0) FROM runs), ?)",
			       -1, &s, NULL))
		return store__db_error(st, what);
	sqlite3_bind_text(s, 1, build_id, -1, SQLITE_STATIC);
	sqlite3_bind_blob(s, 2, blob, (int)len, SQLITE_STATIC);
	rc = sqlite3_step(s);
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : store__db_error(st, what);
}

int store__inlined_at(struct store *st, const char *build_id,
		      uint64_t address, char *chain, size_t len)
{
	const char *what = "reading a build's inlined functions";
	sqlite3_stmt *s;
	int rc, ret = 0;

	if (address > INT64_MAX || len <= STORE_MAX_CHAIN)
		return 0;
	if (!st->sel_inlined &&
	    sqlite3_prepare_v3(st->db, "SELECT chain FROM inlined"
			       " WHERE build_id = ? AND address = ?", -1,
			       SQLITE_PREPARE_PERSISTENT, &st->sel_inlined,
			       NULL))
		return store__db_error(st, what);
	s = st->sel_inlined;
	sqlite3_bind_text(s, 1, build_id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, (int64_t)address);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		/* a row is anyone's to write: its length checked first */
		int bytes = sqlite3_column_bytes(s, 0);

		if (bytes >= 0 && bytes <= STORE_MAX_CHAIN) {
			snprintf(chain, len, "%.*s", bytes, store__text(s, 0));
			ret = 1;
		}
	} else if (rc != SQLITE_DONE) {
		ret = store__db_error(st, what);
	}
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return ret;
}

int store__keep_inlined(struct store *st, const char *build_id,
			const uint64_t *addresses, char *const *chains,
			size_t n)
{
	const char *what = "keeping a build's inlined functions";
	sqlite3_stmt *ins, *upd;
	int ret = 0;

	if (st->readonly || store__begin(st, what))
		return -1;
	if (sqlite3_prepare_v2(st->db, "INSERT OR REPLACE INTO inlined"
			       " (build_id, address, last_run, chain) VALUES"
			       " (?, ?, (SELECT coalesce(max(id), 0) FROM runs),"
			       " ?)", -1, &ins, NULL))
		return store__end(st, store__db_error(st, what), what);
	if (sqlite3_prepare_v2(st->db, "UPDATE inlined SET last_run ="
			       " (SELECT coalesce(max(id), 0) FROM runs)"
			       " WHERE build_id = ? AND address = ?", -1, &upd,
			       NULL)) {
		sqlite3_finalize(ins);
		return store__end(st, store__db_error(st, what), what);
	}
	for (size_t i = 0; !ret && i < n; i++) {
		sqlite3_stmt *s = chains[i] ? ins : upd;

		if (addresses[i] > INT64_MAX)
			continue;
		/* store__step_done() clears every binding */
		sqlite3_bind_text(s, 1, build_id, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 2, (int64_t)addresses[i]);
		if (chains[i])
			sqlite3_bind_text(s, 3, chains[i], -1, SQLITE_STATIC);
		ret = store__step_done(st, s, what);
	}
	sqlite3_finalize(ins);
	sqlite3_finalize(upd);
	return store__end(st, ret, what);
}

int store__inference_stamp(struct store *st, int64_t run_id,
			   struct inference_stamp *out)
{
	int ret = store__sql(st, "reading the inference", stamp_row, out,
			     "SELECT map_samples, run_samples, budget_s,"
			     " static_calls, static_modules, unreadable,"
			     " unreadable_path, unreadable_why,"
			     " over_budget_cids, over_budget_modules, searches,"
			     " cpu_s, over_budget_samples FROM inferences"
			     " WHERE run_id = ?", "i",
			     run_id);

	if (ret < 0)
		return -1;
	if (!ret)
		*out = (struct inference_stamp){ 0 };
	return ret ? 0 : STORE_NONE;
}

int store__inference_begin(struct store *st, int64_t run_id)
{
	static const char *const tables[] = { "inferred", "explained",
		"explained_sites", "inferences" };
	const char *what = "storing the inference";
	char sql[64];
	int ret = 0;

	if (store__begin(st, what))
		return -1;
	for (size_t i = 0; !ret && i < sizeof(tables) / sizeof(*tables); i++) {
		snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE run_id = ?",
			 tables[i]);
		ret = store__sql(st, what, NULL, NULL, sql, "i", run_id);
	}
	return ret ? store__end(st, -1, what) : 0;
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
	sqlite3_stmt *s = st->ins_ctx_new;
	int added;

	sqlite3_bind_int64(s, 1, parent_id);
	sqlite3_bind_int64(s, 2, function_id);
	added = store__insert_new(st, s, id, "storing a context");
	if (added)
		return added < 0 ? -1 : 0;
	s = st->sel_ctx;	/* there already: contexts are shared */
	sqlite3_bind_int64(s, 1, parent_id);
	sqlite3_bind_int64(s, 2, function_id);
	return store__select_id(st, s, id);
}

int store__function_row(struct store *st, int64_t module_id,
			uint64_t address, const char *name, const char *symbol,
			int64_t *id)
{
	sqlite3_stmt *s = cached(st, &st->ins_function,
		"INSERT INTO functions (module_id, address, name, symbol)"
		" VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET"
		" name = name RETURNING id");

	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, module_id);
	sqlite3_bind_int64(s, 2, (int64_t)address);
	sqlite3_bind_text(s, 3, name, -1, SQLITE_STATIC);
	if (symbol)
		sqlite3_bind_text(s, 4, symbol, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 4);
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

int store__explained_row(struct store *st, int64_t run_id,
			 const struct store_explained *e)
{
	sqlite3_stmt *s = cached(st, &st->ins_explained,
		"INSERT INTO explained VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
		" ON CONFLICT DO UPDATE SET share = share + excluded.share,"
		" own = own + excluded.own");

	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, run_id);
	sqlite3_bind_int64(s, 2, e->program_id);
	sqlite3_bind_int64(s, 3, e->function_id);
	sqlite3_bind_int64(s, 4, e->height);
	sqlite3_bind_int64(s, 5, e->context_id);
	sqlite3_bind_int64(s, 6, e->unknown_id);
	sqlite3_bind_text(s, 7, e->how, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 8, e->exact);
	sqlite3_bind_double(s, 9, e->share);
	sqlite3_bind_double(s, 10, e->own);
	return store__step_done(st, s, "storing the inference");
}

static const struct batch_sql sites_sql = {
	"INSERT OR IGNORE INTO explained_sites VALUES ", "", 3,
	"storing the inference"
};

int store__explained_site(struct store *st, int64_t run_id,
			  int64_t context_id, int64_t call_site)
{
	st->sites.sql = &sites_sql;
	return store__queue_row(st, &st->sites, run_id, context_id,
				call_site);
}

int store__inference_commit(struct store *st, int64_t run_id,
			    const struct inference_stamp *t)
{
	const char *what = "storing the inference";

	if (store__drain_rows(st, &st->sites))
		return store__end(st, -1, what);
	return store__end(st, store__sql(st, what, NULL, NULL,
		"INSERT INTO inferences (run_id, map_samples, run_samples,"
		" created_ns, static_calls, static_modules, unreadable,"
		" unreadable_path, unreadable_why, budget_s, over_budget_cids,"
		" over_budget_modules, searches, cpu_s, over_budget_samples)"
		" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		"iiiiiiissdiiidd", run_id, t->map_samples, t->run_samples,
		clock__real_ns(), t->static_calls, t->static_modules,
		t->unreadable, t->unreadable_path, t->unreadable_why,
		t->budget_s, t->over_budget_cids, t->over_budget_modules,
		t->searches, t->cpu_s, t->over_budget_samples), what);
}

static int explained_row(sqlite3_stmt *s, void *ctx)
{
	struct cb *c = ctx;
	struct store_explained e = { sqlite3_column_int64(s, 0),
		sqlite3_column_int64(s, 1), sqlite3_column_int64(s, 2),
		sqlite3_column_int64(s, 3), sqlite3_column_int64(s, 4),
		sqlite3_column_int64(s, 5), sqlite3_column_int64(s, 6),
		store__text(s, 7), sqlite3_column_int64(s, 8),
		sqlite3_column_double(s, 9), sqlite3_column_double(s, 10) };

	return c->fn.explained(c->arg, &e);
}

int store__explained(struct store *st, int64_t run_id,
		     int (*fn)(void *arg, const struct store_explained *e),
		     void *arg)
{
	struct cb c = { .fn.explained = fn, .arg = arg };

	return store__sql(st, "reading the stored inference", explained_row,
			  &c, "SELECT e.program_id, e.function_id, e.height,"
			  " e.context_id, e.unknown_id,"
			  " COALESCE(u.function_id, 0), COALESCE(u.height, 0),"
			  " e.how, e.exact_depth, e.share, e.own FROM explained e"
			  " LEFT JOIN unknown_frames u ON u.id = e.unknown_id"
			  " WHERE e.run_id = ?"
			  " ORDER BY e.program_id, e.function_id, e.height",
			  "i", run_id) < 0 ? -1 : 0;
}

static int context_row(sqlite3_stmt *s, void *ctx)
{
	struct cb *c = ctx;
	struct store_context k = { sqlite3_column_int64(s, 0),
		sqlite3_column_int64(s, 1), sqlite3_column_int64(s, 2),
		sqlite3_column_int64(s, 3) };

	return c->fn.context(c->arg, &k);
}

int store__explained_contexts(struct store *st, int64_t run_id,
			      int (*fn)(void *arg,
					const struct store_context *c),
			      void *arg)
{
	struct cb c = { .fn.context = fn, .arg = arg };

	return store__sql(st, "reading the stored inference", context_row,
			  &c, "WITH RECURSIVE need(id) AS ("
			  "  SELECT context_id FROM explained WHERE run_id = ?1"
			  "  UNION"
			  "  SELECT c.parent_id FROM contexts c"
			  "  JOIN need ON need.id = c.id WHERE c.parent_id != 0)"
			  " SELECT c.id, c.parent_id, c.function_id,"
			  " COALESCE(s.call_site, 0) FROM need"
			  " JOIN contexts c ON c.id = need.id"
			  " LEFT JOIN explained_sites s ON s.run_id = ?1"
			  "  AND s.context_id = c.id", "i", run_id) < 0 ? -1 : 0;
}

int store__reads_begin(struct store *st)
{
	return store__exec(st, "BEGIN DEFERRED", "reading");
}

void store__reads_end(struct store *st)
{
	sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL);
}

int store__sited_contexts(struct store *st, int64_t run_id,
			  int (*fn)(void *arg, const struct store_context *c),
			  void *arg)
{
	const char *what = "reading the stored inference";
	struct cb c = { .fn.context = fn, .arg = arg };
	int64_t unlisted = 0;
	int ret = store__ints(st, what, &unlisted, 1, "SELECT EXISTS ("
			      " SELECT 1 FROM explained e WHERE e.run_id = ?1"
			      " AND NOT EXISTS (SELECT 1 FROM explained_sites s"
			      "  WHERE s.run_id = ?1"
			      "  AND s.context_id = e.context_id))", "i", run_id);

	if (ret)
		return -1;	/* EXISTS gives a row */
	if (unlisted)
		return STORE_NONE;
	return store__sql(st, what, context_row, &c,
			  "SELECT c.id, c.parent_id, c.function_id,"
			  " s.call_site FROM explained_sites s"
			  " JOIN contexts c ON c.id = s.context_id"
			  " WHERE s.run_id = ?", "i", run_id) < 0 ? -1 : 0;
}

void store__inference_rollback(struct store *st)
{
	st->sites.n = 0;
	store__end(st, -1, "storing the inference");
}
