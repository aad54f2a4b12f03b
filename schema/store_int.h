/*
 * store_int.h - what the files of the store share: the handle and the
 * helpers that turn SQLite errors into "PATH: what: why" messages.
 * Not part of the store's contract (store.h, report_store.h, arr_store.h,
 * retain.h).
 */
#ifndef ICPPD_SCHEMA_STORE_INT_H
#define ICPPD_SCHEMA_STORE_INT_H

#include <sqlite3.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/hindex.h"
#include "common/u64set.h"
#include "schema/store.h"

/* Rows a batched INSERT takes at most: 2^BATCH_LOG. */
#define BATCH_LOG 5
#define BATCH_MAX (1 << BATCH_LOG)

/*
 * A statement of many rows: @head, 2^k rows of @ncols (at most 16)
 * parameters, @tail; @what says what failed (NULL: "writing the path
 * map").
 *
 * None of them can abort (OR IGNORE, no DO UPDATE): a statement that
 * writes many rows and could stop half-way, on a NOT NULL constraint or
 * an upsert's update, keeps a statement journal of every page it
 * changes, to undo its part alone.  Past 64 KiB SQLite spills it to a
 * file in /var/tmp: 42 MB over a clang++ -O2 -c record (10,359 writes
 * of 4 KiB, for a 3.4 MB database), written by the counts' UPDATE,
 * whose 32 rows lie on as many pages.  No value bound is NULL and the
 * tables have no CHECK, so OR IGNORE ignores only what DO NOTHING did:
 * a row already there (a row the batch should have written and did not
 * is an error where its id is looked up, paths.c's missing()).
 */
struct batch_sql {
	const char *head, *tail;
	int ncols;
	const char *what;
	/* A queue's rows that add to a row (store__queue_row): how many
	 * leading columns are the key; rows of one key are summed into one
	 * before a statement takes them (an UPDATE ... FROM (VALUES) meets
	 * a row once, whatever the VALUES repeat).  0: none summed. */
	int key;
};

typedef void (*store_bind_fn)(const void *arg, size_t row, sqlite3_stmt *s,
			      int first);
/* Inserts rows [0, @n) of @arg, each bound by @bind from parameter
 * @first on, in statements of 2^k rows of @q (largest first, each
 * prepared into @stmts[BATCH_LOG - k] at its first use); the rows the
 * table took (sqlite3_changes()) in *@took.  0 or -1. */
int store__insert_rows(struct store *st, sqlite3_stmt **stmts,
		       const struct batch_sql *q, size_t n, store_bind_fn bind,
		       const void *arg, size_t *took);

struct func_slot {
	const struct module *mod;
	uint64_t addr;
	int64_t id;
};

struct store {
	sqlite3 *db;
	bool readonly;		/* opened by store__open_readonly() */
	char *path;
	/* the file as a writer left it whole when opened, or read whole
	 * for damage then (checked.c) */
	bool left_whole, read_whole;
	char err[512];
	int stopped;		/* a row callback's errno: store__stopped() */
	struct mod_slot {		/* module pointer -> id cache */
		const struct module *mod;
		int64_t id;
	} *mods;
	size_t nmods, mods_cap;
	struct func_slot *funcs;	/* (module, address) -> id */
	size_t nfuncs, funcs_cap;
	struct hindex func_index;	/* over funcs */
	/* the row and context ids of the path map last written, by node
	 * index: the store's own, so that it writes nothing back into the
	 * map */
	struct node_ids {
		uint64_t serial;	/* pathmap__serial(); 0: none */
		int64_t run_id;
		struct node_row { int64_t id, ctx; } *v;
		size_t cap;
	} nodes;
	sqlite3_stmt *ins_module, *sel_module, *sel_build, *ins_func, *sel_func,
		     *ins_offcpu, *ins_kchain, *ins_unres, *ins_thread, *upd_run,
		     *ins_map, *sel_map, *sel_ctx, *ins_node, *ins_counter,
		     *ins_ctx_new, *ins_window;
	/* paths.c's: a flush's new nodes and contexts, written by depth
	 * in batches of up to BATCH_MAX rows an INSERT */
	struct path_rows {
		uint32_t *fresh, *order;	/* new nodes; by depth */
		size_t fresh_cap, order_cap;
		uint32_t *at;			/* the counting sort's */
		size_t at_cap;
		struct ctx_row { int64_t parent, fid, id; } *ctx;
		size_t nctx, ctx_cap;		/* the contexts met, as nodes */
		struct hindex ctx_index;	/* over ctx */
		int64_t next_node, next_ctx;	/* ids to give; 0: SQLite's */
		/* the first node and context ids the flushes of this map
		 * and run gave (0: not known; -1: given at the next) */
		int64_t first_node, first_ctx;
		bool probe_node, probe_ctx;	/* look rows up first */
		sqlite3_stmt *ins_nodes[BATCH_LOG + 1], *ins_ctxs[BATCH_LOG + 1];
		sqlite3_stmt *sel_node;
		/* rows of three numbers, written BATCH_MAX a statement:
		 * the counts added to nodes written before (id, self,
		 * total), the samples unwound whole (run, node, samples);
		 * @then, if set, runs after @sql on the same rows (an
		 * UPDATE, then an INSERT OR IGNORE of the rows not there;
		 * rows whose second number is @fresh or more, if set, are
		 * known not to be there: the INSERT alone) */
		struct row_queue {
			struct queued_row { int64_t a, b, c; } *v;
			size_t n, cap;
			int64_t fresh;
			const struct batch_sql *sql, *then;
			sqlite3_stmt *stmts[BATCH_LOG + 1];
			sqlite3_stmt *then_stmts[BATCH_LOG + 1];
		} counts, learned;
		int64_t learned_run;
		/* the functions of the new nodes, by the batch */
		struct func_row *funcs;		/* BATCH_MAX */
		int64_t *fids;			/* of each in order */
		size_t fids_cap;
		sqlite3_stmt *ins_funcs[BATCH_LOG + 1];
	} rows;
	/* write_counts()'s rows of cid_samples and pc_samples (store.c),
	 * sorted by the table's key: rows new to the run go in BATCH_MAX
	 * a statement, the others are upserted one a statement (one upsert
	 * a row in the aggregate's hash order was 29 % of a 10 kHz
	 * record's own CPU); @fresh: the new rows' indexes */
	struct sample_row { int64_t v[8]; } *samples;
	size_t samples_cap;
	uint32_t *fresh;
	size_t fresh_cap;
	struct sample_writes {
		/* the INSERTs' statements by size, and the upsert's */
		sqlite3_stmt *insert[BATCH_LOG + 1], *upsert;
		/* The hashes of the keys of the rows written for run_id
		 * (common/u64set.h): every row of the run in the table
		 * has its key's hash here while @complete, so a row whose
		 * hash is not is new (a collision costs an upsert). */
		struct u64set keys;
		int64_t run_id;
		bool complete;
	} cid_writes, pc_writes;
	/* prepared on first use by report_store.c */
	sqlite3_stmt *ins_unknown, *ins_inferred, *ins_function, *ins_explained,
		     *sel_inlined;
	/* an inference's contexts and call sites (run, context, site), by
	 * the batch: one row a statement was a quarter of storing it */
	struct row_queue sites;
	/* every statement bounded (guard.c) */
	int64_t limit_ns, deadline_ns;
	bool timed_out;		/* one ran over: SQLITE_INTERRUPT */
};

/* Queues row (@a, @b, @c) of @q, writing BATCH_MAX rows a statement
 * (@q->sql, then @q->then); store__drain_rows() writes the rest.  0 or
 * -1 (the error set). */
int store__queue_row(struct store *st, struct row_queue *q, int64_t a,
		     int64_t b, int64_t c);
int store__drain_rows(struct store *st, struct row_queue *q);

void store__set_error(struct store *st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Sets the error from SQLite's last one, with a hint; returns -1. */
int store__db_error(struct store *st, const char *what);

/* guard.c: whether every schema object is one icppd's migrations make
 * (type, name and SQL); 0, or -1 naming the first that is not. */
int store__check_schema(struct store *st);
/* Bounds each statement's run (a minute, and a second per 10 MB of a
 * @file_bytes database): one over it stops with SQLITE_INTERRUPT. */
void store__bound_statements(struct store *st, int64_t file_bytes);
/* Runs @sql (no rows, no parameters).  0 or -1. */
int store__exec(struct store *st, const char *sql, const char *what);

/*
 * The one statement runner.  Prepares @sql, binds one argument per
 * letter of @types from the variadic list ('i' int64_t; 'n' int64_t,
 * SQL NULL when negative; 'd' double; 't' a string, NULL for SQL NULL), steps it and calls @row (may be
 * NULL) for each result row, then finalizes it.
 *
 * The convention every store function follows: 0 when done, -1 when
 * it failed with store__error() saying why.  A @row callback returns
 * 0 to go on, a positive value to stop (returned as it is: "found"),
 * or a negative errno to fail (-1, with "WHAT: strerror" as the error
 * and the errno in store__stopped()).
 */
typedef int (*store_row_fn)(sqlite3_stmt *s, void *ctx);
int store__sql(struct store *st, const char *what, store_row_fn row,
	       void *ctx, const char *sql, const char *types, ...);
/* The same with the arguments in @ap. */
int store__vsql(struct store *st, const char *what, store_row_fn row,
		void *ctx, const char *sql, const char *types, va_list ap);
/* The first row's first @nv int64 columns into @v: 0 when there is a
 * row, STORE_NONE when none, -1 on error.  Arguments as store__sql's. */
int store__ints(struct store *st, const char *what, int64_t *v, int nv,
		const char *sql, const char *types, ...);
/* Column @col as a string, "" for NULL. */
const char *store__text(sqlite3_stmt *s, int col);

/* The function row of address @addr of @m (named @name, or NULL),
 * cached.  0 or -1. */
int store__function_id(struct store *st, const struct module *m,
			uint64_t addr, const char *name, int64_t *id);
/* The parts of it, for a caller that inserts many (paths.c): the
 * cache's id, if it has one; adding to the cache (0 or -1, the error
 * set); the row of (@module_id, @addr), which must be there (0 or -1);
 * the row of @m, 0 for none (0 or -1).  A function's name, as
 * module__func_label() makes it, is at most STORE_LABEL_MAX bytes. */
bool store__cached_function(struct store *st, const struct module *m,
			    uint64_t addr, int64_t *id);
int store__cache_function(struct store *st, const struct module *m,
			  uint64_t addr, int64_t id);
int store__function_found(struct store *st, int64_t module_id, uint64_t addr,
			int64_t *id);
int store__module_id(struct store *st, const struct module *m, int64_t *id);
#define STORE_LABEL_MAX 512
/* The id of @prog's map for @run_id (0: training), created if needed. */
int store__map_id(struct store *st, const struct module *prog, int64_t run_id,
		  int64_t *id);
/* paths.c: adds the counts of @pm's nodes to the database, into the map
 * of @run_id (0: the map every run shares), and when @learned_run is
 * not 0, each path's samples as that run's own (run_learned).  0 or -1.
 * Inside the flush's transaction. */
int store__write_paths(struct store *st, int64_t run_id, int64_t learned_run,
		       struct pathmap *pm);
/* Forgets the ids of the nodes retention deleted (the temporary table
 * prune_nodes' rows with n = -1: retain.c) and the contexts met, so
 * that a node the map still holds is written again when it counts
 * samples.  0 or -1. */
int store__forget_nodes(struct store *st);
/* Frees what store__write_paths keeps between flushes and finalizes
 * its statements: before the connection closes. */
void store__paths_exit(struct store *st);

/* The module row of (@path, @build): the one of that build-id whatever
 * its path, else the one of that path (created if needed).  0 or -1. */
int store__module_row(struct store *st, const char *path, const char *build,
		      int64_t *id);

/* The same where nothing is created: 1 with the row's id in *@id, 0
 * when there is none, -1 on an error. */
int store__find_module(struct store *st, const char *path, const char *build,
		      int64_t *id);
/* known_store.c: adds each program's keys of @v[0, @n) (sorted by
 * program, then key) to its known_cids row.  Inside the flush's
 * transaction.  0 or -1. */
int store__write_known(struct store *st, const struct known_key *v, size_t n);

/* The one transaction helper: begin takes the write lock at once
 * (IMMEDIATE), so a locked or read-only database fails before any work;
 * end commits when @ret is 0 and rolls back otherwise (or when the
 * commit fails).  end returns 0 or -1. */
int store__begin(struct store *st, const char *what);
int store__end(struct store *st, int ret, const char *what);
/* Steps a prepared statement that returns nothing; resets it. */
int store__step_done(struct store *st, sqlite3_stmt *s, const char *what);
/* Steps a SELECT of one id; resets it. */
int store__select_id(struct store *st, sqlite3_stmt *s, int64_t *id);
/* The same where there may be no row: 1 with the id (and, with @second,
 * the column after it) in *@id and *@second, 0 when there is none, -1
 * on an error. */
int store__lookup_id(struct store *st, sqlite3_stmt *s, int64_t *id,
		     int64_t *second);
/* Runs an INSERT ... RETURNING id; the id in *@id. */
int store__returning_id(struct store *st, sqlite3_stmt *s, int64_t *id,
			const char *what);
/*
 * Runs an INSERT ... ON CONFLICT DO NOTHING: 1 with the new row's id in
 * *@id, 0 when the row was there already, -1 on an error.  The way to a
 * new row's id when most rows are new: RETURNING buffers its rows in an
 * ephemeral table, opened and closed per statement, which costs more
 * than the insert itself.  On 0, an upsert RETURNING id finds the row.
 */
int store__insert_new(struct store *st, sqlite3_stmt *s, int64_t *id,
		      const char *what);

/* checked.c: whether the file is in the state a writer left it whole
 * in (its read for damage can be skipped), and keeping its state so
 * after the close, when no error was met and nothing is left in its
 * WAL. */
bool store__checked_before(struct store *st);
void store__keep_checked(struct store *st);

#endif
