/*
 * retain.c - deleting old daemon runs (see retain.h), one run per
 * transaction so that a reader never waits long.
 */
#include "schema/retain.h"

#include <stdio.h>

#include "schema/store_int.h"

int store__used_bytes(struct store *st, int64_t *bytes)
{
	int64_t v[3] = { 0, 0, 0 };

	if (store__ints(st, "retention", v, 3, "SELECT page_count,"
			" freelist_count, page_size FROM pragma_page_count,"
			" pragma_freelist_count, pragma_page_size", NULL))
		return -1;
	*bytes = (v[0] - v[1]) * v[2];
	return 0;
}

/*
 * Path maps: what @run learned comes out of the build's learned map and
 * fragments (path_maps.run_id 0 and -1), as its flushes put it in.
 * run_learned holds the samples the run added to each node's self; a
 * sample added one to the total of its node and of every node above,
 * so those come off the totals, and a node whose total falls to 0 has
 * no sample of a remaining run left (training's, another run's, a
 * fleet's pull keep it above 0) and goes, with the contexts that only
 * such nodes used.  Without this the maps outgrew every limit: a
 * daemon's leaf copies add a fragment's nodes at most samples (60 % of
 * a database watching cc1 at 999 Hz, docs/daemon.md).
 */

/* Temporary tables of one deletion: the nodes @run touched, with the
 * samples to take off their totals, and the candidate contexts. */
static const char *const prune_sql[] = {
	("CREATE TEMP TABLE IF NOT EXISTS prune_nodes"
	 " (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)"),
	"CREATE TEMP TABLE IF NOT EXISTS prune_ctx (id INTEGER PRIMARY KEY)",
	"CREATE TEMP TABLE IF NOT EXISTS prune_used (id INTEGER PRIMARY KEY)",
	"DELETE FROM prune_nodes",
	"DELETE FROM prune_ctx",
	"DELETE FROM prune_used",
};

/* What @run added, off the maps' counts; the nodes left without
 * samples deleted, and the store's ids of them forgotten. */
static int prune_nodes(struct store *st, int64_t run)
{
	for (size_t i = 0; i < sizeof(prune_sql) / sizeof(prune_sql[0]); i++)
		if (store__sql(st, "retention", NULL, NULL, prune_sql[i], NULL))
			return -1;
	/* each learned node up to its outermost frame (a depth bound: a
	 * crafted table's parents may loop) */
	if (store__sql(st, "retention", NULL, NULL,
		       "INSERT INTO prune_nodes WITH RECURSIVE up(id, n, d) AS"
		       " (SELECT l.node_id, l.samples, 0 FROM run_learned l"
		       "  JOIN path_nodes p ON p.id = l.node_id"
		       "  JOIN path_maps m ON m.id = p.map_id"
		       "  WHERE l.run_id = ?1 AND m.run_id IN (0, -1)"
		       "  AND l.samples > 0"
		       " UNION ALL SELECT p.parent_id, up.n, up.d + 1 FROM up"
		       "  JOIN path_nodes p ON p.id = up.id"
		       "  WHERE p.parent_id != 0 AND up.d < 4096)"
		       " SELECT id, sum(n) FROM up GROUP BY id", "i", run) ||
	    store__sql(st, "retention", NULL, NULL,
		       "UPDATE path_nodes SET total = max(total - d.n, 0)"
		       " FROM prune_nodes d WHERE path_nodes.id = d.id", NULL) ||
	    store__sql(st, "retention", NULL, NULL,
		       "UPDATE path_nodes SET self = max(self - l.samples, 0)"
		       " FROM run_learned l WHERE l.run_id = ?1"
		       " AND path_nodes.id = l.node_id"
		       " AND l.node_id IN (SELECT id FROM prune_nodes)", "i",
		       run) ||
	    /* the spent ones: kept in prune_nodes with n = -1 */
	    store__sql(st, "retention", NULL, NULL,
		       "UPDATE prune_nodes SET n = -1 WHERE id IN"
		       " (SELECT p.id FROM path_nodes p JOIN prune_nodes d"
		       "  ON d.id = p.id WHERE p.total <= 0)", NULL) ||
	    /* a crafted table's child may count more than its parent:
	     * no node loses its parent, a report would refuse the map */
	    store__sql(st, "retention", NULL, NULL,
		       "UPDATE prune_nodes SET n = 0 WHERE n = -1 AND id IN"
		       " (WITH RECURSIVE keep(id) AS (SELECT p.id FROM"
		       "  prune_nodes s JOIN path_nodes p ON p.id = s.id"
		       "  JOIN path_nodes c ON c.map_id = p.map_id AND"
		       "  c.parent_id = p.id WHERE s.n = -1 AND c.id NOT IN"
		       "  (SELECT id FROM prune_nodes WHERE n = -1)"
		       "  UNION SELECT p.parent_id FROM keep JOIN path_nodes p"
		       "  ON p.id = keep.id WHERE p.parent_id != 0)"
		       "  SELECT id FROM keep)", NULL) ||
	    store__sql(st, "retention", NULL, NULL,
		       "INSERT OR IGNORE INTO prune_ctx SELECT p.context_id"
		       " FROM path_nodes p JOIN prune_nodes d ON d.id = p.id"
		       " WHERE d.n = -1", NULL) ||
	    store__sql(st, "retention", NULL, NULL,
		       "DELETE FROM path_nodes WHERE id IN"
		       " (SELECT id FROM prune_nodes WHERE n = -1)", NULL))
		return -1;
	return store__forget_nodes(st);
}

/* The contexts @run's stored inference names, candidates too (a
 * report makes contexts for the paths it composes).  Before its rows
 * go. */
static int run_contexts(struct store *st, int64_t run)
{
	static const char *const named[] = { "inferred", "explained",
		"explained_sites" };
	char sql[160];

	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		snprintf(sql, sizeof(sql), "INSERT OR IGNORE INTO prune_ctx"
			 " SELECT context_id FROM %s WHERE run_id = ?",
			 named[i]);
		if (store__sql(st, "retention", NULL, NULL, sql, "i", run))
			return -1;
	}
	return 0;
}

/* Every context above one in temporary table @t, into it (UNION: each
 * context once, so that a crafted loop ends). */
static int add_ancestors(struct store *st, const char *t)
{
	char sql[256];

	snprintf(sql, sizeof(sql), "INSERT OR IGNORE INTO %s WITH RECURSIVE"
		 " up(id) AS (SELECT id FROM %s UNION SELECT c.parent_id FROM"
		 " up JOIN contexts c ON c.id = up.id WHERE c.parent_id != 0)"
		 " SELECT id FROM up", t, t);
	return store__sql(st, "retention", NULL, NULL, sql, NULL);
}

/* The candidate contexts, and the contexts above them, that nothing
 * uses any more: no node, no stored inference, no ARR row, no context
 * below them that stays.  One pass over each table that names
 * contexts (0.13 s in all, nodes too, for a run of 3 s of cc1 at
 * 999 Hz whose leaf copies left 3,860 nodes without samples). */
static int prune_contexts(struct store *st)
{
	static const char *const users[] = { "path_nodes", "inferred",
		"explained", "explained_sites", "arr_inseparable" };
	char sql[160];

	if (add_ancestors(st, "prune_ctx"))
		return -1;
	for (size_t i = 0; i < sizeof(users) / sizeof(users[0]); i++) {
		snprintf(sql, sizeof(sql), "INSERT OR IGNORE INTO prune_used"
			 " SELECT context_id FROM %s WHERE context_id IN"
			 " (SELECT id FROM prune_ctx)", users[i]);
		if (store__sql(st, "retention", NULL, NULL, sql, NULL))
			return -1;
	}
	/* the parents of contexts that stay */
	return store__sql(st, "retention", NULL, NULL,
			  "INSERT OR IGNORE INTO prune_used SELECT c.parent_id"
			  " FROM contexts c WHERE c.parent_id IN"
			  " (SELECT id FROM prune_ctx)"
			  " AND c.id NOT IN (SELECT id FROM prune_ctx)", NULL) ||
	       add_ancestors(st, "prune_used") ||
	       store__sql(st, "retention", NULL, NULL,
			  "DELETE FROM contexts WHERE id IN (SELECT id FROM"
			  " prune_ctx) AND id NOT IN (SELECT id FROM prune_used)",
			  NULL) ? -1 : 0;
}

static int delete_run(struct store *st, int64_t run)
{
	static const char *const tables[] = { "exports", "cid_samples",
		"offcpu_samples", "kernel_chains", "pc_samples",
		"unresolved_samples", "threads", "run_counters",
		"learn_windows", "inferred", "explained", "explained_sites",
		"run_learned", "inferences", "validation", "accuracy", "runs" };
	char sql[96];
	int ret = 0;

	if (store__begin(st, "retention"))
		return -1;
	ret = prune_nodes(st, run);
	if (!ret)
		ret = run_contexts(st, run);
	for (size_t i = 0; !ret && i < sizeof(tables) / sizeof(tables[0]); i++) {
		snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE %s = ?",
			 tables[i], i + 1 < sizeof(tables) / sizeof(tables[0]) ?
			 "run_id" : "id");
		ret = store__sql(st, "retention", NULL, NULL, sql, "i", run);
	}
	if (!ret)
		ret = prune_contexts(st);
	/* the known CIDs may name nodes just deleted: a shortcut the
	 * records after rebuild (known_store.c), not a map */
	if (!ret)
		ret = store__sql(st, "retention", NULL, NULL,
				 "DELETE FROM known_cids", NULL);
	/* the calls of builds last read when @run was the newest: a cache,
	 * decoded again if a later run needs them */
	if (!ret)
		ret = store__sql(st, "retention", NULL, NULL, "DELETE FROM"
				 " build_calls WHERE last_run <= ?", "i", run);
	if (!ret)
		ret = store__sql(st, "retention", NULL, NULL, "DELETE FROM"
				 " inlined WHERE last_run <= ?", "i", run);
	return store__end(st, ret, "retention");
}

/* The oldest daemon run that retention may delete, other than @keep:
 * ended before @before_ns, or any when @before_ns is 0, and not waiting
 * to be exported (the spool keeps what a server has not acknowledged,
 * over the size limit if an outage lasts).  0: none. */
static int oldest(struct store *st, int64_t keep, int64_t before_ns,
		  int64_t *run)
{
	*run = 0;
	return store__ints(st, "retention", run, 1, "SELECT MIN(id) FROM runs"
			   " WHERE kind = 'daemon' AND id != ?1 AND (?2 = 0 OR"
			   " (ended_ns IS NOT NULL AND ended_ns < ?2)) AND id"
			   " NOT IN (SELECT run_id FROM exports"
			   " WHERE state = 'pending')", "ii",
			   keep, before_ns) < 0 ? -1 : 0;
}

int store__retain(struct store *st, int64_t keep, int64_t before_ns,
		  int64_t max_bytes, int64_t *deleted)
{
	int64_t run, used;

	*deleted = 0;
	while (before_ns > 0) {
		if (oldest(st, keep, before_ns, &run))
			return -1;
		if (!run)
			break;
		if (delete_run(st, run))
			return -1;
		(*deleted)++;
	}
	while (max_bytes > 0) {
		if (store__used_bytes(st, &used))
			return -1;
		if (used <= max_bytes)
			break;
		if (oldest(st, keep, 0, &run))
			return -1;
		if (!run)
			break;		/* only the current run is left */
		if (delete_run(st, run))
			return -1;
		(*deleted)++;
	}
	return 0;
}
