/*
 * paths.c - a path map's nodes into path_nodes and contexts, at each
 * flush (store__write_paths, store_int.h).
 *
 * A node written at an earlier flush of the same run has its counts
 * added, BATCH_MAX nodes an UPDATE.  New nodes go in by the batch, up
 * to BATCH_MAX rows an INSERT, one depth at a time, so that every row's
 * parent has its id when the row is bound, and their functions before
 * them, as many an INSERT.  One statement of 32 rows pays SQLite's
 * per-statement work (the VDBE's start and halt, the statement
 * journal, the bindings' reset) once, not 32 times: a replay of the
 * 22,258 nodes and 21,742 contexts of a first record of clang++ took
 * 47 ms a row at a time and 34 ms so.
 *
 * Their ids are known before they go in, so that a batch needs no ids
 * back: SQLite gives a new row the table's largest id plus one, and the
 * flush holds the write lock (nobody else inserts meanwhile), so the
 * rows of a batch get the ids from the table's largest at the flush on,
 * in order.  Given no id, a row skips the check of its id for a
 * conflict: 10 % of the instructions of a flush of clang++'s first
 * record (docs/record.md, Storage).  A batch that takes fewer rows
 * than it had found some there already (a context another map shares;
 * a node an earlier run learned, which a second record of a program
 * meets at every node), or whose last row's id is not the one
 * foreseen: then each row's id is looked up by its key, and a node
 * that was there gets its counts added.
 * Where the ids run out (a crafted table whose largest id is near
 * 2^63: SQLite picks ids at random there), rows go one at a time.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binary/module.h"
#include "common/grow.h"
#include "common/hindex.h"
#include "common/search.h"
#include "inference/pathmap.h"
#include "schema/store_int.h"

/* The room above a table's largest id that a flush needs for foreseeing
 * its rows' ids (far more than it writes); with less, one at a time. */
#define IDS_ROOM ((int64_t)1 << 40)

/* The ids of @pm's nodes for @run_id: kept from the last flush of the
 * same map and run, zero for nodes not written yet (and the contexts
 * met, kept as long: no one deletes a context, and a flush that rolls
 * back drops both, store.c's drop_caches()).  NULL: no memory. */
static struct node_row *node_ids(struct store *st, const struct pathmap *pm,
				 int64_t run_id)
{
	struct node_ids *c = &st->nodes;
	size_t n = pathmap__size(pm), old = c->cap;

	if (c->serial != pathmap__serial(pm) || c->run_id != run_id) {
		if (c->v)
			memset(c->v, 0, c->cap * sizeof(*c->v));
		c->serial = pathmap__serial(pm);
		c->run_id = run_id;
		st->rows.first_node = st->rows.first_ctx = -1;
		st->rows.nctx = 0;
		hindex__clear(&st->rows.ctx_index);
	}
	if (n > c->cap) {
		if (grow(&c->v, &c->cap, n, sizeof(*c->v), 1024))
			return NULL;
		memset(c->v + old, 0, (c->cap - old) * sizeof(*c->v));
	}
	return c->v;
}

/* The first of @n ids from *@next, the table's next free one (a flush
 * writes fewer than 2^32 rows, IDS_ROOM and more fit above it); 0:
 * SQLite picks them. */
static int64_t take_ids(int64_t *next, size_t n)
{
	int64_t id = *next;

	if (id)
		*next += (int64_t)n;
	return id;
}

static const struct batch_sql ctx_sql = {
	"INSERT OR IGNORE INTO contexts (parent_id, function_id) VALUES ",
	"", 2
}, node_sql = {
	"INSERT OR IGNORE INTO path_nodes (map_id, parent_id, function_id,"
	" call_site, height, depth, self, total, context_id) VALUES ",
	"", 9
}, counts_sql = {
	"UPDATE OR IGNORE path_nodes SET self = self + v.column2,"
	" total = total + v.column3 FROM (VALUES ",
	") AS v WHERE path_nodes.id = v.column1", 3, NULL, 1
}, func_sql = {
	"INSERT OR IGNORE INTO functions (module_id, address, name, symbol)"
	" VALUES ", "", 4
}, learned_sql = {
	"UPDATE OR IGNORE run_learned SET samples = samples + v.column3"
	" FROM (VALUES ", ") AS v WHERE run_learned.run_id = v.column1"
	" AND run_learned.node_id = v.column2", 3, NULL, 2
}, learned_new_sql = {	/* after learned_sql: the rows not there */
	"INSERT OR IGNORE INTO run_learned VALUES ", "", 3
};

/* @q's statement of 2^@k rows, prepared at its first use. */
static sqlite3_stmt *batch_stmt(struct store *st, sqlite3_stmt **slot,
				const struct batch_sql *q, int k)
{
	char sql[4096], row[40];
	size_t len, rl = 0;

	if (*slot)
		return *slot;
	row[rl++] = '(';
	for (int c = 0; c < q->ncols && c < 16; c++) {
		if (c)
			row[rl++] = ',';
		row[rl++] = '?';
	}
	row[rl++] = ')';
	len = (size_t)snprintf(sql, sizeof(sql), "%s", q->head);
	for (int r = 0; r < 1 << k && len + rl + 128 < sizeof(sql); r++) {
		if (r)
			sql[len++] = ',';
		memcpy(sql + len, row, rl);
		len += rl;
	}
	snprintf(sql + len, sizeof(sql) - len, "%s", q->tail);
	if (sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT,
			       slot, NULL)) {
		store__db_error(st, "writing the path map");
		return NULL;
	}
	return *slot;
}

int store__insert_rows(struct store *st, sqlite3_stmt **stmts,
		       const struct batch_sql *q, size_t n, store_bind_fn bind,
		       const void *arg, size_t *took)
{
	*took = 0;
	for (size_t done = 0, rows; done < n; done += rows) {
		int k = BATCH_LOG, rc;
		sqlite3_stmt *s;

		while ((size_t)1 << k > n - done)
			k--;
		rows = (size_t)1 << k;
		s = batch_stmt(st, &stmts[BATCH_LOG - k], q, k);
		if (!s)
			return -1;
		for (size_t r = 0; r < rows; r++)
			bind(arg, done + r, s, (int)r * q->ncols + 1);
		/* every parameter is bound again next time: no
		 * sqlite3_clear_bindings() of 320 of them */
		rc = sqlite3_step(s);
		sqlite3_reset(s);
		if (rc != SQLITE_DONE)
			return store__db_error(st, q->what ? q->what :
					       "writing the path map");
		*took += (size_t)sqlite3_changes(st->db);
	}
	return 0;
}

/* ---- counts and learned samples, by the batch ---- */

static void bind_queued(const void *arg, size_t row, sqlite3_stmt *s,
			int first)
{
	const struct queued_row *q = (const struct queued_row *)arg + row;

	sqlite3_bind_int64(s, first, q->a);
	sqlite3_bind_int64(s, first + 1, q->b);
	sqlite3_bind_int64(s, first + 2, q->c);
}

static int cmp_row(const void *x, const void *y)
{
	const struct queued_row *a = x, *b = y;

	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	return a->b < b->b ? -1 : a->b > b->b;
}

/* @q's rows of one key summed into one (batch_sql's key): two nodes
 * in memory can be one row (a build run from two paths, one map), and
 * the UPDATE took one of their counts, INSERT OR IGNORE one of their
 * learned samples. */
static size_t merge_rows(struct row_queue *q, size_t n)
{
	int key = q->sql->key;
	size_t m = 0;

	if (!key || n < 2)
		return n;
	qsort(q->v, n, sizeof(*q->v), cmp_row);
	for (size_t i = 1; i < n; i++) {
		struct queued_row *o = &q->v[m], *r = &q->v[i];

		if (o->a == r->a && (key < 2 || o->b == r->b)) {
			if (key < 2)
				o->b += r->b;
			o->c += r->c;
		} else {
			q->v[++m] = *r;
		}
	}
	return m + 1;
}

int store__drain_rows(struct store *st, struct row_queue *q)
{
	size_t took, n = q->n, old, from;

	q->n = 0;
	if (!n)
		return 0;
	n = merge_rows(q, n);
	if (!q->then)
		return store__insert_rows(st, q->stmts, q->sql, n, bind_queued,
					  q->v, &took) ? -1 : 0;
	/* the rows from @fresh on have no row to update (sorted: a
	 * suffix); the others' INSERT only where the UPDATE missed one */
	old = q->fresh ? LOWER_BOUND((size_t)0, n, i, q->v[i].b < q->fresh) :
			 n;
	took = 0;
	if (old && store__insert_rows(st, q->stmts, q->sql, old, bind_queued,
				      q->v, &took))
		return -1;
	from = took == old ? old : 0;
	return store__insert_rows(st, q->then_stmts, q->then, n - from,
				  bind_queued, q->v + from, &took) ? -1 : 0;
}

int store__queue_row(struct store *st, struct row_queue *q, int64_t a,
		      int64_t b, int64_t c)
{
	if (grow(&q->v, &q->cap, q->n + 1, sizeof(*q->v), BATCH_MAX)) {
		store__set_error(st, "%s: out of memory", q->sql->what ?
				 q->sql->what : "writing the path map");
		return -1;
	}
	q->v[q->n++] = (struct queued_row){ a, b, c };
	return q->n < BATCH_MAX ? 0 : store__drain_rows(st, q);
}

/* Adds @samples that the flush's run unwound whole, ending at row @id. */
static int write_learned(struct store *st, int64_t id, uint64_t samples)
{
	struct path_rows *pr = &st->rows;

	return store__queue_row(st, &pr->learned, pr->learned_run, id,
				(int64_t)samples);
}

/* Adds @n's counts to row @id. */
static int add_counts(struct store *st, const struct pm_node *n, int64_t id)
{
	if (!n->self && !n->total)
		return 0;
	return store__queue_row(st, &st->rows.counts, id, (int64_t)n->self,
		     (int64_t)n->total);
}

/* Whether a batch of @n rows, whose ids SQLite was to pick from @first
 * on (0: one row at a time, any id), took each with its id known: every
 * row, the last with id @first + @n - 1 (SQLite gives a row the table's
 * largest id plus one, so the rows before it have the ids before it),
 * or the one row, its id into *@id. */
static bool took_all(struct store *st, int64_t first, size_t n, size_t took,
		     int64_t *id)
{
	if (first)
		return took == n && sqlite3_last_insert_rowid(st->db) ==
					    first + (int64_t)n - 1;
	if (n == 1 && took == 1)
		*id = sqlite3_last_insert_rowid(st->db);
	return n == 1 && took == 1;
}

/* The id above the largest of @table's (0: SQLite picks them, where the
 * largest leaves no room). */
static int next_id(struct store *st, const char *table, int64_t *next)
{
	char sql[80];
	int64_t max = 0;

	snprintf(sql, sizeof(sql), "SELECT COALESCE(MAX(id), 0) FROM %s",
		 table);
	if (store__ints(st, "writing the path map", &max, 1, sql, "") < 0)
		return -1;
	*next = max < INT64_MAX - IDS_ROOM ? (max > 0 ? max : 0) + 1 : 0;
	return 0;
}

/* ---- functions ---- */

/* A function new to the cache, waiting for its batch. */
struct func_row {
	const struct module *mod;
	uint64_t addr;
	const char *symbol;
	int64_t mid, id;
	char label[STORE_LABEL_MAX];
};

static void bind_func(const void *arg, size_t row, sqlite3_stmt *s, int first)
{
	const struct func_row *f = (const struct func_row *)arg + row;

	sqlite3_bind_int64(s, first, f->mid);
	sqlite3_bind_int64(s, first + 1, (int64_t)f->addr);
	sqlite3_bind_text(s, first + 2, f->label, -1, SQLITE_STATIC);
	if (f->symbol)
		sqlite3_bind_text(s, first + 3, f->symbol, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, first + 3);
}

/* Inserts the @n functions of @f, each into the cache with its row's
 * id: the one foreseen, or where the batch met rows (another run's) or
 * the ids ran out, the one looked up. */
static int insert_functions(struct store *st, struct func_row *f, size_t n)
{
	int64_t first, id;
	size_t took;
	bool known;

	if (!n)
		return 0;
	if (next_id(st, "functions", &first) ||
	    store__insert_rows(st, st->rows.ins_funcs, &func_sql, n,
			       bind_func, f, &took))
		return -1;
	known = first && took_all(st, first, n, took, &id);
	for (size_t i = 0; i < n; i++) {
		if (known)
			f[i].id = first + (int64_t)i;
		else if (store__function_found(st, f[i].mid, f[i].addr,
						 &f[i].id))
			return -1;
		if (store__cache_function(st, f[i].mod, f[i].addr, f[i].id))
			return -1;
	}
	return 0;
}

/* The function ids of nodes @order[0, @n) into @fids: the cache's, or
 * rows inserted BATCH_MAX a statement (a statement each cost 2 % of the
 * instructions of a flush of clang++'s first record). */
static int function_ids(struct store *st, struct pathmap *pm,
			const uint32_t *order, size_t n, int64_t *fids)
{
	struct path_rows *pr = &st->rows;
	size_t nf = 0;

	if (!pr->funcs &&
	    !(pr->funcs = malloc(BATCH_MAX * sizeof(*pr->funcs)))) {
		store__set_error(st, "writing the path map: out of memory");
		return -1;
	}
	for (size_t k = 0; k < n; k++) {
		const struct pm_node *nd = pathmap__node(pm, order[k]);
		struct func_row *f = pr->funcs;
		size_t i = 0;

		if (store__cached_function(st, nd->mod, nd->func, &fids[k]))
			continue;
		fids[k] = -1;	/* its batch's, below */
		while (i < nf && (f[i].mod != nd->mod || f[i].addr != nd->func))
			i++;
		if (i < nf)
			continue;
		f[nf] = (struct func_row){ nd->mod, nd->func, nd->name, 0, 0,
					   "" };
		if (store__module_id(st, nd->mod, &f[nf].mid))
			return -1;
		module__func_label(nd->mod, nd->func, nd->name, f[nf].label,
				   sizeof(f[nf].label));
		if (++nf == BATCH_MAX) {
			if (insert_functions(st, f, nf))
				return -1;
			nf = 0;
		}
	}
	if (insert_functions(st, pr->funcs, nf))
		return -1;
	for (size_t k = 0; k < n; k++) {
		const struct pm_node *nd = pathmap__node(pm, order[k]);

		if (fids[k] < 0 &&
		    !store__cached_function(st, nd->mod, nd->func, &fids[k])) {
			store__set_error(st, "writing the path map: a "
					 "function just written is not there");
			return -1;
		}
	}
	return 0;
}

/* ---- contexts ---- */

static uint64_t ctx_hash(int64_t parent, int64_t fid)
{
	return hindex__mix(hindex__mix(7, (uint64_t)parent), (uint64_t)fid);
}

/* The entry of context (@parent, @fid) met before, or HINDEX_NONE. */
static uint32_t ctx_find(struct path_rows *pr, int64_t parent, int64_t fid)
{
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint32_t i;

	while ((i = hindex__next(&pr->ctx_index, &p, ctx_hash(parent, fid))) !=
	       HINDEX_NONE)
		if (pr->ctx[i].parent == parent && pr->ctx[i].fid == fid)
			return i;
	return HINDEX_NONE;
}

static int ctx_add(struct path_rows *pr, int64_t parent, int64_t fid,
		   uint32_t *entry)
{
	if (pr->nctx >= UINT32_MAX - 1 ||
	    grow(&pr->ctx, &pr->ctx_cap, pr->nctx + 1, sizeof(*pr->ctx),
		 1024) ||
	    hindex__insert(&pr->ctx_index, ctx_hash(parent, fid),
			   (uint32_t)pr->nctx))
		return -1;
	pr->ctx[pr->nctx] = (struct ctx_row){ parent, fid, 0 };
	*entry = (uint32_t)pr->nctx++;
	return 0;
}

struct ctx_batch {
	struct path_rows *pr;
	const uint32_t *entries;
};

static void bind_ctx(const void *arg, size_t row, sqlite3_stmt *s, int first)
{
	const struct ctx_batch *b = arg;
	const struct ctx_row *c = &b->pr->ctx[b->entries[row]];

	sqlite3_bind_int64(s, first, c->parent);
	sqlite3_bind_int64(s, first + 1, c->fid);
}

/* Whether a row a batch wrote or met is not there (@found:
 * store__lookup_id()'s answer), with the error set: only a database changed under the write
 * lock gets here. */
static bool missing(struct store *st, int found)
{
	if (!found)
		store__set_error(st, "writing the path map: a row just "
				 "written is not there");
	return found <= 0;
}

/* Context @c's row, if there is one: 1 (its id in c->id), 0, -1. */
static int ctx_lookup(struct store *st, struct ctx_row *c)
{
	sqlite3_bind_int64(st->sel_ctx, 1, c->parent);
	sqlite3_bind_int64(st->sel_ctx, 2, c->fid);
	return store__lookup_id(st, st->sel_ctx, &c->id, NULL);
}

/*
 * Writes the contexts of @entries (new to this flush; the array is
 * reused); each entry's id is the row's after, whether this wrote it
 * or found it.  Where the last batch found rows there, each is looked
 * up first (a second record of a program has most), until a batch
 * finds none.
 */
static int write_contexts(struct store *st, uint32_t *entries, size_t n)
{
	struct path_rows *pr = &st->rows;
	struct ctx_batch b = { pr, entries };
	int64_t first;
	size_t took, m = 0;

	if (pr->probe_ctx) {
		for (size_t i = 0; i < n; i++) {
			struct ctx_row *c = &pr->ctx[entries[i]];
			/* under a context this map's run wrote: no row
			 * yet (one another writer made meanwhile, the
			 * insert's check below finds) */
			int found = pr->first_ctx > 0 &&
				    c->parent >= pr->first_ctx ? 0 :
				    ctx_lookup(st, c);

			if (found < 0)
				return -1;
			if (!found)
				entries[m++] = entries[i];
		}
		pr->probe_ctx = m < n;
		if (!(n = m))
			return 0;
	}
	first = take_ids(&pr->next_ctx, n);
	for (size_t i = 0; i < n; i++)
		pr->ctx[entries[i]].id = first ? first + (int64_t)i : 0;
	if (store__insert_rows(st, pr->ins_ctxs, &ctx_sql, n, bind_ctx, &b,
			       &took))
		return -1;
	if (took_all(st, first, n, took, &pr->ctx[entries[0]].id))
		return 0;
	pr->probe_ctx = true;
	for (size_t i = 0; i < n; i++)		/* some were there */
		if (missing(st, ctx_lookup(st, &pr->ctx[entries[i]])))
			return -1;
	/* the ids to come follow those SQLite gave */
	return first ? next_id(st, "contexts", &pr->next_ctx) : 0;
}

/* ---- nodes ---- */

struct node_batch {
	struct pathmap *pm;
	const struct node_row *ids;
	const uint32_t *idx;
	const int64_t *fids;
};

/* The columns of a row of node @n: its map, its parent's row (0 under
 * the root) and its function. */
static void node_key(const struct node_batch *b, uint32_t i, int64_t *map,
		     int64_t *parent)
{
	const struct pm_node *n = pathmap__node(b->pm, i);

	*map = b->ids[n->root].id;
	*parent = n->parent == n->root ? 0 : b->ids[n->parent].id;
}

static void bind_node(const void *arg, size_t row, sqlite3_stmt *s, int first)
{
	const struct node_batch *b = arg;
	uint32_t i = b->idx[row];
	const struct pm_node *n = pathmap__node(b->pm, i);
	int64_t map, parent;

	node_key(b, i, &map, &parent);
	sqlite3_bind_int64(s, first, map);
	sqlite3_bind_int64(s, first + 1, parent);
	sqlite3_bind_int64(s, first + 2, b->fids[row]);
	sqlite3_bind_int64(s, first + 3, (int64_t)n->call_site);
	sqlite3_bind_int64(s, first + 4, n->height);
	sqlite3_bind_int64(s, first + 5, n->depth);
	sqlite3_bind_int64(s, first + 6, (int64_t)n->self);
	sqlite3_bind_int64(s, first + 7, (int64_t)n->total);
	sqlite3_bind_int64(s, first + 8, b->ids[i].ctx);
}

/* The row of node @row of @b, if there is one: 1 (its id in *@id, and
 * with @ctx its context's in *@ctx), 0, -1. */
static int node_lookup(struct store *st, const struct node_batch *b,
		       size_t row, int64_t *id, int64_t *ctx)
{
	const struct pm_node *n = pathmap__node(b->pm, b->idx[row]);
	sqlite3_stmt *s = st->rows.sel_node;
	int64_t map, parent;

	node_key(b, b->idx[row], &map, &parent);
	sqlite3_bind_int64(s, 1, map);
	sqlite3_bind_int64(s, 2, parent);
	sqlite3_bind_int64(s, 3, b->fids[row]);
	sqlite3_bind_int64(s, 4, (int64_t)n->call_site);
	sqlite3_bind_int64(s, 5, n->height);
	return store__lookup_id(st, s, id, ctx);
}

/* The nodes of @b found there (their ids and contexts set, counts
 * added), and into @idx and @fids (*@m of them) those not: looked up
 * first, as write_contexts() says when, a node found needs no context
 * written or looked up (a second record of a program meets half its
 * nodes again). */
static int probe_nodes(struct store *st, struct node_row *ids,
		       const struct node_batch *b, size_t n, uint32_t *idx,
		       int64_t *fids, size_t *m)
{
	int64_t fresh = st->rows.first_node;

	*m = 0;
	for (size_t r = 0; r < n; r++) {
		uint32_t i = b->idx[r];
		const struct pm_node *nd = pathmap__node(b->pm, i);
		/* under a node this map's run wrote: no row yet (one that
		 * is, written by another writer meanwhile, write_nodes()'s
		 * check of what the insert took finds) */
		int found = fresh > 0 && nd->parent != nd->root &&
			    ids[nd->parent].id >= fresh ? 0 :
			    node_lookup(st, b, r, &ids[i].id, &ids[i].ctx);

		if (found < 0 || (found &&
				  add_counts(st, pathmap__node(b->pm, i),
					     ids[i].id)))
			return -1;
		if (!found) {
			idx[*m] = i;
			fids[(*m)++] = b->fids[r];
		}
	}
	st->rows.probe_node = *m < n;
	return 0;
}

/* Writes the rows of @b's @n nodes (one depth, their contexts written):
 * each node's id is its row's after, and a row that was there before
 * gets the node's counts added. */
static int write_nodes(struct store *st, struct node_row *ids,
		       const struct node_batch *b, size_t n)
{
	struct path_rows *pr = &st->rows;
	int64_t first = take_ids(&pr->next_node, n);
	size_t took;

	for (size_t r = 0; r < n; r++)
		ids[b->idx[r]].id = first ? first + (int64_t)r : 0;
	if (store__insert_rows(st, pr->ins_nodes, &node_sql, n, bind_node, b,
			       &took))
		return -1;
	if (took_all(st, first, n, took, &ids[b->idx[0]].id))
		return 0;
	pr->probe_node = true;
	/* two nodes may be one new row now, their learned samples in two
	 * drains: each added to the other's */
	pr->learned.fresh = 0;
	for (size_t r = 0; r < n; r++) {	/* some were there */
		struct node_row *row = &ids[b->idx[r]];
		bool there;

		if (missing(st, node_lookup(st, b, r, &row->id, NULL)))
			return -1;
		/* a row under @first was there before, and one an earlier
		 * node of the batch wrote (the same build's node under
		 * another program path): its counts added */
		there = !first || row->id < first;
		for (size_t e = 0; !there && e < r; e++)
			there = ids[b->idx[e]].id == row->id;
		if (there &&
		    add_counts(st, pathmap__node(b->pm, b->idx[r]), row->id))
			return -1;
	}
	return first ? next_id(st, "path_nodes", &pr->next_node) : 0;
}

/* Writes new nodes @idx[0, @n), all of one depth, and their contexts. */
static int write_depth(struct store *st, struct pathmap *pm,
		       struct node_row *ids, const uint32_t *idx,
		       const int64_t *fids, size_t n, int64_t learned_run)
{
	struct path_rows *pr = &st->rows;
	uint32_t left[BATCH_MAX], entry[BATCH_MAX], fresh[BATCH_MAX];
	int64_t lfids[BATCH_MAX];
	struct node_batch b = { pm, ids, idx, fids };
	struct node_batch rest = { pm, ids, left, lfids };
	size_t m = n, nfresh = 0;

	if (!pr->probe_node) {
		memcpy(left, idx, n * sizeof(*left));
		memcpy(lfids, fids, n * sizeof(*lfids));
	} else if (probe_nodes(st, ids, &b, n, left, lfids, &m)) {
		return -1;
	}
	for (size_t r = 0; r < m; r++) {	/* the contexts of the rest */
		const struct pm_node *nd = pathmap__node(pm, left[r]);
		int64_t pctx = nd->parent == nd->root ? 0 :
			       ids[nd->parent].ctx;

		entry[r] = ctx_find(pr, pctx, lfids[r]);
		if (entry[r] != HINDEX_NONE)
			continue;
		if (ctx_add(pr, pctx, lfids[r], &entry[r])) {
			store__set_error(st, "writing the path map: out of "
					 "memory");
			return -1;
		}
		fresh[nfresh++] = entry[r];
	}
	if (nfresh && write_contexts(st, fresh, nfresh))
		return -1;
	for (size_t r = 0; r < m; r++)
		ids[left[r]].ctx = pr->ctx[entry[r]].id;
	if (m && write_nodes(st, ids, &rest, m))
		return -1;
	for (size_t r = 0; r < n; r++) {
		const struct pm_node *nd = pathmap__node(pm, idx[r]);

		if (learned_run && nd->self &&
		    write_learned(st, ids[idx[r]].id, nd->self))
			return -1;
	}
	return 0;
}

/* The nodes of @pm not written yet into st->rows.order, by depth (a
 * counting sort, stable: parents come before their children). */
static int order_new(struct store *st, struct pathmap *pm,
		     const uint32_t *fresh, size_t n)
{
	struct path_rows *pr = &st->rows;
	uint32_t maxd = 0;

	for (size_t k = 0; k < n; k++)
		if (pathmap__node(pm, fresh[k])->depth > maxd)
			maxd = pathmap__node(pm, fresh[k])->depth;
	if (grow(&pr->order, &pr->order_cap, n + 1, sizeof(*pr->order),
		 1024) ||
	    grow(&pr->at, &pr->at_cap, (size_t)maxd + 2, sizeof(*pr->at),
		 1024))
		return -1;
	memset(pr->at, 0, ((size_t)maxd + 2) * sizeof(*pr->at));
	for (size_t k = 0; k < n; k++)
		pr->at[pathmap__node(pm, fresh[k])->depth + 1]++;
	for (uint32_t d = 1; d <= maxd + 1; d++)
		pr->at[d] += pr->at[d - 1];
	for (size_t k = 0; k < n; k++)
		pr->order[pr->at[pathmap__node(pm, fresh[k])->depth]++] =
			fresh[k];
	return 0;
}

/* Of the nodes counted since the last flush (the others have nothing
 * to write, and a flush of a big map's few changes passes over them a
 * bit each): roots get their maps' ids, a node written before its
 * counts; the others' indexes, in the map's order, into st->rows.fresh
 * (*@n of them).  A node's parents are counted with it. */
static int write_known(struct store *st, struct pathmap *pm,
		       struct node_row *ids, int64_t run_id,
		       int64_t learned_run, size_t *n)
{
	struct path_rows *pr = &st->rows;

	*n = 0;
	for (uint32_t i = pathmap__next_counted(pm, 0); i != PM_NONE;
	     i = pathmap__next_counted(pm, i + 1)) {
		const struct pm_node *nd = pathmap__node(pm, i);
		struct node_row *r = &ids[i];

		if (nd->parent == PM_NONE) {
			if (!r->id && store__map_id(st, nd->mod, nd->fragment ?
						    STORE_FRAGMENTS_RUN :
						    run_id, &r->id))
				return -1;
		} else if (!r->id) {
			/* one retention deleted, counting nothing since:
			 * nor do the nodes below it */
			if (!nd->total)
				continue;
			if (grow(&pr->fresh, &pr->fresh_cap, *n + 1,
				 sizeof(*pr->fresh), 1024)) {
				store__set_error(st, "writing the path map: "
						 "out of memory");
				return -1;
			}
			pr->fresh[(*n)++] = i;
		} else if (add_counts(st, nd, r->id) ||
			   (learned_run && nd->self &&
			    write_learned(st, r->id, nd->self))) {
			return -1;
		}
	}
	return 0;
}

int store__write_paths(struct store *st, int64_t run_id, int64_t learned_run,
		       struct pathmap *pm)
{
	struct path_rows *pr = &st->rows;
	struct node_row *ids;
	size_t n, batch;

	if (!pathmap__size(pm))
		return 0;
	ids = node_ids(st, pm, run_id);
	if (!ids) {
		store__set_error(st, "writing the path map: out of memory");
		return -1;
	}
	pr->counts.n = pr->learned.n = 0;	/* what a failed flush left */
	pr->learned.fresh = 0;
	pr->counts.sql = &counts_sql;
	pr->learned.sql = &learned_sql;
	pr->learned.then = &learned_new_sql;
	pr->learned_run = learned_run;
	if (write_known(st, pm, ids, run_id, learned_run, &n))
		return -1;
	if (!n)
		return store__drain_rows(st, &pr->counts) ||
		       store__drain_rows(st, &pr->learned) ?
			       -1 : 0;
	if (order_new(st, pm, pr->fresh, n)) {
		store__set_error(st, "writing the path map: out of memory");
		return -1;
	}
	if (next_id(st, "path_nodes", &pr->next_node) ||
	    next_id(st, "contexts", &pr->next_ctx))
		return -1;
	/* the nodes new to the table: none has a learned row yet */
	pr->learned.fresh = pr->next_node;
	if (pr->first_node < 0) {
		pr->first_node = pr->next_node;
		pr->first_ctx = pr->next_ctx;
	}
	if (grow(&pr->fids, &pr->fids_cap, n, sizeof(*pr->fids), 1024)) {
		store__set_error(st, "writing the path map: out of memory");
		return -1;
	}
	if (function_ids(st, pm, pr->order, n, pr->fids))
		return -1;
	pr->probe_ctx = pr->probe_node = false;
	batch = pr->next_node && pr->next_ctx ? BATCH_MAX : 1;
	for (size_t k = 0, m; k < n; k += m) {
		uint32_t depth = pathmap__node(pm, pr->order[k])->depth;

		for (m = 1; k + m < n && m < batch &&
			    pathmap__node(pm, pr->order[k + m])->depth == depth;
		     m++)
			;
		if (write_depth(st, pm, ids, pr->order + k, pr->fids + k, m,
				learned_run))
			return -1;
	}
	return store__drain_rows(st, &pr->counts) ||
		       store__drain_rows(st, &pr->learned) ? -1 : 0;
}

struct id_list {
	int64_t *v;
	size_t n, cap;
};

static int add_id(sqlite3_stmt *s, void *ctx)
{
	struct id_list *l = ctx;

	if (grow(&l->v, &l->cap, l->n + 1, sizeof(*l->v), 256))
		return -ENOMEM;
	l->v[l->n++] = sqlite3_column_int64(s, 0);
	return 0;
}

int store__forget_nodes(struct store *st)
{
	struct node_ids *c = &st->nodes;
	struct id_list gone = { NULL, 0, 0 };

	if (store__sql(st, "retention", add_id, &gone, "SELECT id FROM"
		       " prune_nodes WHERE n = -1 ORDER BY id", NULL)) {
		free(gone.v);
		return -1;
	}
	for (size_t i = 0; gone.n && c->v && i < c->cap; i++) {
		int64_t id = c->v[i].id;
		size_t at = LOWER_BOUND((size_t)0, gone.n, k, gone.v[k] < id);

		if (id && at < gone.n && gone.v[at] == id)
			c->v[i] = (struct node_row){ 0, 0 };
	}
	if (gone.n) {
		st->rows.nctx = 0;
		hindex__clear(&st->rows.ctx_index);
	}
	free(gone.v);
	return 0;
}

void store__paths_exit(struct store *st)
{
	struct path_rows *pr;

	if (!st)
		return;
	pr = &st->rows;
	for (int k = 0; k <= BATCH_LOG; k++) {
		sqlite3_finalize(pr->ins_nodes[k]);
		sqlite3_finalize(pr->ins_ctxs[k]);
		sqlite3_finalize(pr->counts.stmts[k]);
		sqlite3_finalize(pr->learned.stmts[k]);
		sqlite3_finalize(pr->learned.then_stmts[k]);
	}
	for (int k = 0; k <= BATCH_LOG; k++)
		sqlite3_finalize(pr->ins_funcs[k]);
	free(pr->counts.v);
	free(pr->learned.v);
	free(pr->funcs);
	free(pr->fids);
	sqlite3_finalize(pr->sel_node);
	free(pr->fresh);
	free(pr->order);
	free(pr->at);
	free(pr->ctx);
	hindex__exit(&pr->ctx_index);
	free(st->nodes.v);
}
