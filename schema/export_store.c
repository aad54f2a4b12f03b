/*
 * export_store.c - the export spool and the rows an export reads (see
 * export_store.h).
 */
#include "schema/export_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/report_store.h"
#include "schema/store_int.h"

#define WHAT "the export spool"

static int text_row(sqlite3_stmt *s, void *ctx)
{
	char **out = ctx;

	snprintf(out[0], (size_t)(uintptr_t)out[1], "%s", store__text(s, 0));
	return 1;
}

int store__database_id(struct store *st, char *out, size_t len)
{
	char *ctx[2] = { out, (char *)(uintptr_t)len };

	out[0] = '\0';
	return store__sql(st, WHAT, text_row, ctx,
			  "SELECT id FROM identity LIMIT 1", "") < 0 ? -1 : 0;
}

int store__run_host(struct store *st, int64_t run_id, char *out, size_t len)
{
	char *ctx[2] = { out, (char *)(uintptr_t)len };

	out[0] = '\0';
	return store__sql(st, WHAT, text_row, ctx,
			  "SELECT COALESCE(hostname, '') FROM runs WHERE id = ?",
			  "i", run_id) < 0 ? -1 : 0;
}

int store__export_queue(struct store *st, int64_t run_id, const char *target,
			int64_t now_ns)
{
	return store__sql(st, WHAT, NULL, NULL, "INSERT OR IGNORE INTO exports"
			  " (run_id, target, state, queued_ns) VALUES"
			  " (?, ?, 'pending', ?)", "iti", run_id, target,
			  now_ns) < 0 ? -1 : 0;
}

int store__export_queue_all(struct store *st, const char *target,
			    int64_t now_ns, int64_t *n)
{
	int ret = store__sql(st, WHAT, NULL, NULL, "INSERT OR IGNORE INTO"
			     " exports (run_id, target, state, queued_ns)"
			     " SELECT id, ?, 'pending', ? FROM runs WHERE"
			     " kind IN ('record', 'daemon') AND status <>"
			     " 'running' AND EXISTS (SELECT 1 FROM cid_samples"
			     " c WHERE c.run_id = runs.id)", "ti", target,
			     now_ns);

	*n = ret < 0 ? 0 : sqlite3_changes(st->db);
	return ret < 0 ? -1 : 0;
}

struct due {
	int64_t *runs, *attempts;
	size_t max, n;
};

static int due_row(sqlite3_stmt *s, void *ctx)
{
	struct due *d = ctx;

	if (d->n >= d->max)
		return 1;
	d->runs[d->n] = sqlite3_column_int64(s, 0);
	d->attempts[d->n++] = sqlite3_column_int64(s, 1);
	return 0;
}

int store__export_due(struct store *st, const char *target, int64_t now_ns,
		      int64_t *runs, int64_t *attempts, size_t max, size_t *n)
{
	struct due d = { runs, attempts, max, 0 };
	int ret = store__sql(st, WHAT, due_row, &d, "SELECT run_id, attempts"
			     " FROM exports WHERE target = ?1 AND state ="
			     " 'pending' AND (?2 < 0 OR next_ns <= ?2)"
			     " ORDER BY run_id", "ti", target, now_ns);

	*n = d.n;
	return ret < 0 ? -1 : 0;
}

int store__export_done(struct store *st, int64_t run_id, const char *target,
		       int64_t stack_rows, int64_t cid_rows, int64_t now_ns)
{
	return store__sql(st, WHAT, NULL, NULL, "UPDATE exports SET state ="
			  " 'done', attempts = attempts + 1, done_ns = ?,"
			  " stack_rows = ?, cid_rows = ?, error = NULL"
			  " WHERE run_id = ? AND target = ?", "iiiit", now_ns,
			  stack_rows, cid_rows, run_id, target) < 0 ? -1 : 0;
}

int store__export_failed(struct store *st, int64_t run_id, const char *target,
			 int64_t attempts, int64_t next_ns, const char *why)
{
	return store__sql(st, WHAT, NULL, NULL, "UPDATE exports SET attempts"
			  " = ?, next_ns = ?, error = ? WHERE run_id = ? AND"
			  " target = ?", "iitit", attempts, next_ns, why,
			  run_id, target) < 0 ? -1 : 0;
}

int store__export_lag(struct store *st, int64_t *pending, int64_t *oldest_ns,
		      char *why, size_t len)
{
	char *ctx[2] = { why, (char *)(uintptr_t)len };
	int64_t v[2] = { 0, 0 };
	int ret = store__ints(st, WHAT, v, 2, "SELECT COUNT(*),"
			      " COALESCE(MIN(queued_ns), 0) FROM exports"
			      " WHERE state = 'pending'", "");

	*pending = v[0];
	*oldest_ns = v[1];
	why[0] = '\0';
	if (ret < 0 || store__sql(st, WHAT, text_row, ctx, "SELECT error FROM"
				  " exports WHERE state = 'pending' AND error"
				  " IS NOT NULL ORDER BY next_ns DESC LIMIT 1",
				  "") < 0)
		return -1;
	return 0;
}

struct cid_cb {
	int (*fn)(void *arg, const struct store_cid_row *r);
	void *arg;
};

static int cid_row(sqlite3_stmt *s, void *ctx)
{
	struct cid_cb *c = ctx;
	struct store_cid_row r = { .pid = sqlite3_column_int64(s, 0),
		.comm = store__text(s, 1), .program = store__text(s, 2),
		.program_build = store__text(s, 3), .module = store__text(s, 4),
		.build_id = store__text(s, 5), .function = store__text(s, 6),
		.height = sqlite3_column_int64(s, 7),
		.samples = sqlite3_column_int64(s, 8),
		.offcpu = sqlite3_column_int64(s, 9),
		.blocked_ns = sqlite3_column_int64(s, 10) };

	return c->fn(c->arg, &r);
}

int store__export_cids(struct store *st, int64_t run_id,
		       int (*fn)(void *arg, const struct store_cid_row *r),
		       void *arg)
{
	struct cid_cb c = { fn, arg };

	return store__sql(st, "reading the run's samples", cid_row, &c,
		"SELECT c.pid, COALESCE(t.comm, '?') AS comm,"
		" COALESCE(pr.path, ''), COALESCE(pr.build_id, ''), m.path,"
		" m.build_id, f.name, c.height, SUM(c.samples), c.offcpu,"
		" SUM(c.blocked_ns)"
		" FROM (SELECT run_id, pid, tid, program_id, function_id,"
		"   height, samples, 0 AS offcpu, 0 AS blocked_ns"
		"   FROM cid_samples WHERE run_id = ?1"
		"   UNION ALL SELECT run_id, pid, tid, program_id, function_id,"
		"   height, switches, 1, blocked_ns"
		"   FROM offcpu_samples WHERE run_id = ?1) c"
		" JOIN functions f ON f.id = c.function_id"
		" JOIN modules m ON m.id = f.module_id"
		" LEFT JOIN modules pr ON pr.id = c.program_id"
		" LEFT JOIN threads t ON t.run_id = c.run_id AND t.pid = c.pid"
		"   AND t.tid = c.tid"
		" GROUP BY c.offcpu, c.pid, comm, c.program_id, c.function_id,"
		" c.height",
		"i", run_id) < 0 ? -1 : 0;
}

struct prog_cb {
	int (*fn)(void *arg, int64_t pid, const char *path,
		  const char *build_id);
	void *arg;
};

static int prog_row(sqlite3_stmt *s, void *ctx)
{
	struct prog_cb *c = ctx;

	return c->fn(c->arg, sqlite3_column_int64(s, 0), store__text(s, 1),
		     store__text(s, 2));
}

int store__export_programs(struct store *st, int64_t run_id,
			   int (*fn)(void *arg, int64_t pid, const char *path,
				     const char *build_id),
			   void *arg)
{
	struct prog_cb c = { fn, arg };

	/* a process's program: the one most of its samples name (an exec
	 * keeps the pid, so there may be two) */
	return store__sql(st, "reading the run's programs", prog_row, &c,
		"SELECT pid, COALESCE(m.path, ''), COALESCE(m.build_id, '')"
		" FROM (SELECT pid, program_id, SUM(samples) AS n,"
		"   ROW_NUMBER() OVER (PARTITION BY pid ORDER BY SUM(samples)"
		"   DESC, program_id) AS r FROM cid_samples WHERE run_id = ?"
		"   GROUP BY pid, program_id)"
		" LEFT JOIN modules m ON m.id = program_id WHERE r = 1"
		" ORDER BY pid", "i", run_id) < 0 ? -1 : 0;
}

struct path_cb {
	int (*fn)(void *arg, const struct store_path_row *r);
	void *arg;
};

static int path_row(sqlite3_stmt *s, void *ctx)
{
	struct path_cb *c = ctx;
	struct store_path_row r = { .node = sqlite3_column_int64(s, 0),
		.parent = sqlite3_column_int64(s, 1),
		.program = store__text(s, 2), .program_build = store__text(s, 3),
		.module = store__text(s, 4), .module_build = store__text(s, 5),
		.address = sqlite3_column_int64(s, 6),
		.function = store__text(s, 7),
		.call_site = sqlite3_column_int64(s, 8),
		.height = sqlite3_column_int64(s, 9),
		.self = sqlite3_column_int64(s, 10),
		.total = sqlite3_column_int64(s, 11) };

	return c->fn(c->arg, &r);
}

int store__export_paths(struct store *st, int64_t run_id,
			int (*fn)(void *arg, const struct store_path_row *r),
			void *arg)
{
	struct path_cb c = { fn, arg };

	/* ids grow with insertion, parents first; a node's own total is
	 * at least its children's, so no kept node loses its parent */
	return store__sql(st, WHAT, path_row, &c, "SELECT n.id, n.parent_id,"
			  " pr.path, pr.build_id, m.path, m.build_id,"
			  " f.address, f.name, n.call_site, n.height,"
			  " n.self - COALESCE(fc.self, 0),"
			  " n.total - COALESCE(fc.total, 0)"
			  " FROM path_maps pm"
			  " JOIN modules pr ON pr.id = pm.program_id"
			  " JOIN path_nodes n ON n.map_id = pm.id"
			  " JOIN functions f ON f.id = n.function_id"
			  " JOIN modules m ON m.id = f.module_id"
			  " LEFT JOIN fleet_counts fc ON fc.node_id = n.id"
			  " WHERE pm.run_id = 0 AND pm.program_id IN"
			  " (SELECT DISTINCT program_id FROM cid_samples"
			  " WHERE run_id = ?)"
			  " AND n.total - COALESCE(fc.total, 0) > 0"
			  " ORDER BY pm.id, n.id", "i", run_id) < 0 ? -1 : 0;
}

struct build_cb {
	int (*fn)(void *arg, const char *build_id);
	void *arg;
};

static int build_row(sqlite3_stmt *s, void *ctx)
{
	struct build_cb *c = ctx;

	return c->fn(c->arg, store__text(s, 0));
}

int store__pull_needed(struct store *st, int64_t run_id, const char *also,
		       const char *target, int64_t retry_ns,
		       int (*fn)(void *arg, const char *build_id), void *arg)
{
	struct build_cb c = { fn, arg };

	int r = store__sql(st, WHAT, build_row, &c, "SELECT b FROM"
			  " (SELECT DISTINCT m.build_id AS b FROM modules m"
			  "  WHERE m.id IN (SELECT DISTINCT program_id FROM"
			  "  cid_samples WHERE run_id = ?1)"
			  "  UNION SELECT ?2)"
			  " WHERE b IS NOT NULL AND b != '' AND NOT EXISTS"
			  " (SELECT 1 FROM fleet_pulls p WHERE p.build_id = b"
			  "  AND p.target = ?3 AND (p.paths > 0 OR"
			  "  p.pulled_ns >= ?4))", "itti", run_id, also, target,
			  retry_ns);

	return r < 0 ? -1 : r;
}

int store__pull_done(struct store *st, const char *build_id,
		     const char *target, int64_t now_ns, int64_t paths,
		     int64_t sources)
{
	return store__sql(st, WHAT, NULL, NULL, "INSERT INTO fleet_pulls"
			  " VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET"
			  " pulled_ns = excluded.pulled_ns, paths ="
			  " excluded.paths, sources = excluded.sources",
			  "ttiii", build_id, target, now_ns, paths,
			  sources) < 0 ? -1 : 0;
}

/* What a merged node keeps for its children. */
struct merged_node {
	int64_t id, ctx, depth;
};

static int merge_node(struct store *st, int64_t map, const
		      struct store_pulled_node *x, const struct merged_node *up,
		      int64_t *mod, const char **mod_path,
		      const char **mod_build, struct merged_node *out)
{
	sqlite3_stmt *node = st->ins_node;
	int64_t fid;

	if (!*mod_path || strcmp(*mod_path, x->module) ||
	    strcmp(*mod_build, x->module_build)) {
		if (store__module_row(st, x->module, x->module_build, mod))
			return -1;
		*mod_path = x->module;
		*mod_build = x->module_build;
	}
	/* the rows and statements a local run's paths are written with */
	if (store__function_row(st, *mod, x->address, x->function, NULL,
				&fid) ||
	    store__context(st, up ? up->ctx : 0, fid, &out->ctx))
		return -1;
	sqlite3_bind_int64(node, 1, map);
	sqlite3_bind_int64(node, 2, up ? up->id : 0);
	sqlite3_bind_int64(node, 3, fid);
	sqlite3_bind_int64(node, 4, (int64_t)x->call_site);
	sqlite3_bind_int64(node, 5, x->height);
	sqlite3_bind_int64(node, 6, up ? up->depth + 1 : 1);
	sqlite3_bind_int64(node, 7, (int64_t)x->self);
	sqlite3_bind_int64(node, 8, (int64_t)x->total);
	sqlite3_bind_int64(node, 9, out->ctx);
	if (store__returning_id(st, node, &out->id, WHAT) ||
	    store__sql(st, WHAT, NULL, NULL, "INSERT INTO fleet_counts VALUES"
		       " (?, ?, ?) ON CONFLICT DO UPDATE SET self = self +"
		       " excluded.self, total = total + excluded.total", "iii",
		       out->id, (int64_t)x->self, (int64_t)x->total) < 0)
		return -1;
	out->depth = up ? up->depth + 1 : 1;
	return 0;
}

int store__merge_paths(struct store *st, const char *program,
		       const char *build_id,
		       const struct store_pulled_node *nodes, size_t n,
		       size_t *merged)
{
	struct merged_node *m = calloc(n ? n : 1, sizeof(*m));
	const char *mod_path = NULL, *mod_build = NULL;
	int64_t prog, map, mod = 0;
	int ret = -1;

	*merged = 0;
	if (!m) {
		store__set_error(st, "%s: out of memory", WHAT);
		return -1;
	}
	if (store__begin(st, WHAT))
		goto out;
	if (store__module_row(st, program, build_id, &prog) ||
	    store__sql(st, WHAT, NULL, NULL, "INSERT OR IGNORE INTO path_maps"
		       " (program_id, run_id) VALUES (?, 0)", "i", prog) < 0 ||
	    store__ints(st, WHAT, &map, 1, "SELECT id FROM path_maps WHERE"
			" program_id = ? AND run_id = 0", "i", prog))
		goto end;
	for (size_t i = 0; i < n; i++) {
		const struct store_pulled_node *x = &nodes[i];

		m[i].id = 0;	/* not merged: its children are not either */
		if (x->parent < -1 || x->parent >= (int64_t)i ||
		    (x->parent >= 0 && !m[x->parent].id))
			continue;
		if (merge_node(st, map, x, x->parent >= 0 ? &m[x->parent] :
			       NULL, &mod, &mod_path, &mod_build, &m[i]))
			goto end;
		(*merged)++;
	}
	ret = 0;
end:
	ret = store__end(st, ret, WHAT);
out:
	free(m);
	return ret;
}
