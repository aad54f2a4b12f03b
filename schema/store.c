/*
 * store.c - SQLite profile database: open, migrate, batched writes.
 *
 * Ids of modules and functions are cached in memory for the life of the
 * store, so a flush does one upsert per distinct CID and no lookups for
 * functions it has seen before.  The caches are dropped when a flush
 * rolls back, since the ids it assigned are void then.
 */
#define _GNU_SOURCE
#include "schema/store.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "binary/module.h"
#include "collector/aggregate.h"
#include "common/grow.h"
#include "config.h"
#include "schema/migrations.h"

struct func_slot {
	const struct module *mod;	/* NULL = empty */
	uint64_t addr;
	int64_t id;
};

struct store {
	sqlite3 *db;
	char *path;
	char err[512];
	struct mod_slot {		/* module pointer -> id cache */
		const struct module *mod;
		int64_t id;
	} *mods;
	size_t nmods, mods_cap;
	struct func_slot *funcs;	/* (module, address) -> id */
	size_t nfuncs, funcs_cap;	/* funcs_cap: power of two */
	sqlite3_stmt *ins_module, *sel_module, *ins_func, *sel_func,
		     *ins_cid, *ins_unres, *ins_thread, *upd_run;
};

int store__schema_version(void)
{
	return icppd_nr_migrations;
}

static void set_error(struct store *st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_error(struct store *st, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(st->err, sizeof(st->err), "%s: ", st->path);

	va_start(ap, fmt);
	vsnprintf(st->err + n, sizeof(st->err) - (size_t)n, fmt, ap);
	va_end(ap);
}

/* WAL needs the database and its directory writable (-wal, -shm). */
static bool writable(const char *path)
{
	char dir[4096];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	else
		strcpy(dir, ".");
	return !access(path, W_OK) && !access(dir, W_OK);
}

static int db_error(struct store *st, const char *what)
{
	int code = sqlite3_extended_errcode(st->db);
	const char *hint = "";

	if ((code & 0xff) == SQLITE_READONLY ||
	    ((code & 0xff) == SQLITE_CANTOPEN && !writable(st->path)))
		hint = " (the database or its directory is read-only)";
	else if ((code & 0xff) == SQLITE_NOTADB || (code & 0xff) == SQLITE_CORRUPT)
		hint = " (not an icppd database, or corrupt: use another -d)";
	else if ((code & 0xff) == SQLITE_FULL)
		hint = " (disk full)";
	else if ((code & 0xff) == SQLITE_BUSY)
		hint = " (another process holds a lock on it)";
	set_error(st, "%s: %s%s", what, sqlite3_errmsg(st->db), hint);
	return -1;
}

static int exec(struct store *st, const char *sql, const char *what)
{
	return sqlite3_exec(st->db, sql, NULL, NULL, NULL) == SQLITE_OK ?
	       0 : db_error(st, what);
}

static int user_version(struct store *st, int *v)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(st->db, "PRAGMA user_version", -1, &s, NULL))
		return db_error(st, "reading the schema version");
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*v = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : db_error(st, "reading the schema version");
}

static int migrate(struct store *st, const struct store_migration *migs,
		   int n)
{
	char sql[64];
	int v = 0;

	/* IMMEDIATE: take the write lock now, so a read-only or locked
	 * database fails here, before anything is launched. */
	if (exec(st, "BEGIN IMMEDIATE", "opening for writing"))
		return -1;
	if (user_version(st, &v))
		goto out_rollback;
	if (v > n) {
		set_error(st, "schema version %d is newer than this icppd "
			  "supports (%d): upgrade icppd", v, n);
		goto out_rollback;
	}
	for (; v < n; v++) {
		if (exec(st, migs[v].sql, "upgrading the schema"))
			goto out_rollback;
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", v + 1);
		if (exec(st, sql, "upgrading the schema"))
			goto out_rollback;
	}
	return exec(st, "COMMIT", "upgrading the schema");
out_rollback:
	sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	return -1;
}

static int prepare(struct store *st)
{
	static const struct { size_t off; const char *sql; } stmts[] = {
		{ offsetof(struct store, ins_module),
		  "INSERT OR IGNORE INTO modules (path, build_id) VALUES (?, ?)" },
		{ offsetof(struct store, sel_module),
		  "SELECT id FROM modules WHERE path = ? AND build_id = ?" },
		{ offsetof(struct store, ins_func),
		  "INSERT OR IGNORE INTO functions (module_id, address, name,"
		  " symbol) VALUES (?, ?, ?, ?)" },
		{ offsetof(struct store, sel_func),
		  "SELECT id FROM functions WHERE module_id = ? AND address = ?" },
		{ offsetof(struct store, ins_cid),
		  "INSERT INTO cid_samples VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT"
		  " DO UPDATE SET samples = samples + excluded.samples" },
		{ offsetof(struct store, ins_unres),
		  "INSERT INTO unresolved_samples VALUES (?, ?, ?, ?, ?, ?) ON"
		  " CONFLICT DO UPDATE SET samples = samples + excluded.samples" },
		{ offsetof(struct store, ins_thread),
		  "INSERT INTO threads VALUES (?, ?, ?, ?) ON CONFLICT"
		  " DO UPDATE SET comm = excluded.comm" },
		{ offsetof(struct store, upd_run),
		  "UPDATE runs SET samples = ?, unresolved = ?, lost = ?,"
		  " throttled = ? WHERE id = ?" },
	};

	for (size_t i = 0; i < sizeof(stmts) / sizeof(stmts[0]); i++) {
		sqlite3_stmt **s = (sqlite3_stmt **)((char *)st + stmts[i].off);

		if (sqlite3_prepare_v3(st->db, stmts[i].sql, -1,
				       SQLITE_PREPARE_PERSISTENT, s, NULL))
			return db_error(st, "preparing statements");
	}
	return 0;
}

struct store *store__open_with(const char *path,
			       const struct store_migration *migs, int n,
			       char *err, size_t errlen)
{
	struct store *st = calloc(1, sizeof(*st));
	int rc;

	if (!st || !(st->path = strdup(path))) {
		snprintf(err, errlen, "%s: out of memory", path);
		free(st);
		return NULL;
	}
	rc = sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE |
			     SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW, NULL);
	if (rc != SQLITE_OK) {
		set_error(st, "cannot open database: %s%s",
			  st->db ? sqlite3_errmsg(st->db) : sqlite3_errstr(rc),
			  access(path, F_OK) ? " (is the directory writable?)"
					     : "");
		goto out_fail;
	}
	sqlite3_extended_result_codes(st->db, 1);
	sqlite3_busy_timeout(st->db, 5000);
	/* synchronous=NORMAL is durable across a crash of icppd in WAL
	 * mode; only a power loss can drop the last flushes. */
	if (exec(st, "PRAGMA journal_mode = WAL", "opening") ||
	    exec(st, "PRAGMA synchronous = NORMAL", "opening") ||
	    migrate(st, migs, n))
		goto out_fail;
	if (n == icppd_nr_migrations && migs == icppd_migrations &&
	    prepare(st))
		goto out_fail;
	return st;
out_fail:
	snprintf(err, errlen, "%s", st->err);
	store__close(st);
	return NULL;
}

struct store *store__open(const char *path, char *err, size_t errlen)
{
	return store__open_with(path, icppd_migrations, icppd_nr_migrations,
				err, errlen);
}

void store__close(struct store *st)
{
	if (!st)
		return;
	sqlite3_finalize(st->ins_module);
	sqlite3_finalize(st->sel_module);
	sqlite3_finalize(st->ins_func);
	sqlite3_finalize(st->sel_func);
	sqlite3_finalize(st->ins_cid);
	sqlite3_finalize(st->ins_unres);
	sqlite3_finalize(st->ins_thread);
	sqlite3_finalize(st->upd_run);
	sqlite3_close(st->db);
	free(st->mods);
	free(st->funcs);
	free(st->path);
	free(st);
}

const char *store__error(const struct store *st)
{
	return st->err;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int store__begin_run(struct store *st, const struct run_info *ri,
		     int64_t *run_id)
{
	sqlite3_stmt *s;
	char host[256] = "";
	int rc;

	gethostname(host, sizeof(host) - 1);
	if (sqlite3_prepare_v2(st->db,
	    "INSERT INTO runs (kind, command, target_pid, event, event_canonical,"
	    " precise, period, frequency, started_ns, status, hostname,"
	    " icppd_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?)",
	    -1, &s, NULL))
		return db_error(st, "creating the run");
	sqlite3_bind_text(s, 1, ri->kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, ri->command, -1, SQLITE_STATIC);
	if (ri->target_pid > 0)
		sqlite3_bind_int64(s, 3, ri->target_pid);
	sqlite3_bind_text(s, 4, ri->event, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 5, ri->event_canonical, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 6, ri->precise);
	if (ri->period)
		sqlite3_bind_int64(s, 7, (int64_t)ri->period);
	if (ri->frequency)
		sqlite3_bind_int64(s, 8, (int64_t)ri->frequency);
	sqlite3_bind_int64(s, 9, now_ns());
	sqlite3_bind_text(s, 10, host, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 11, PACKAGE_VERSION, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return db_error(st, "creating the run");
	*run_id = sqlite3_last_insert_rowid(st->db);
	return 0;
}

/* Runs a prepared statement that returns nothing; resets it. */
static int step_done(struct store *st, sqlite3_stmt *s, const char *what)
{
	int rc = sqlite3_step(s);

	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return rc == SQLITE_DONE ? 0 : db_error(st, what);
}

static int select_id(struct store *st, sqlite3_stmt *s, int64_t *id)
{
	int rc = sqlite3_step(s);

	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return rc == SQLITE_ROW ? 0 : db_error(st, "looking up an id");
}

static int module_id(struct store *st, const struct module *m, int64_t *id)
{
	if (!m) {
		*id = 0;
		return 0;
	}
	for (size_t i = 0; i < st->nmods; i++)
		if (st->mods[i].mod == m) {
			*id = st->mods[i].id;
			return 0;
		}
	for (int k = 0; k < 2; k++) {
		sqlite3_stmt *s = k ? st->sel_module : st->ins_module;

		sqlite3_bind_text(s, 1, module__path(m), -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, module__build_id(m), -1, SQLITE_STATIC);
		if (k ? select_id(st, s, id) : step_done(st, s, "adding a module"))
			return -1;
	}
	if (grow(&st->mods, &st->mods_cap, st->nmods + 1, sizeof(*st->mods), 16))
		return -1;
	st->mods[st->nmods++] = (struct mod_slot){ m, *id };
	return 0;
}

static struct func_slot *func_slot(struct func_slot *tab, size_t cap,
				   const struct module *m, uint64_t addr)
{
	size_t i = (((uintptr_t)m >> 4) ^ (addr * 0x9e3779b97f4a7c15ULL)) &
		   (cap - 1);

	while (tab[i].mod && (tab[i].mod != m || tab[i].addr != addr))
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static int grow_funcs(struct store *st)
{
	size_t cap = st->funcs_cap ? 2 * st->funcs_cap : 1024;
	struct func_slot *t = calloc(cap, sizeof(*t));

	if (!t)
		return -1;
	for (size_t i = 0; i < st->funcs_cap; i++)
		if (st->funcs[i].mod)
			*func_slot(t, cap, st->funcs[i].mod,
				   st->funcs[i].addr) = st->funcs[i];
	free(st->funcs);
	st->funcs = t;
	st->funcs_cap = cap;
	return 0;
}

static int function_id(struct store *st, const struct cid_count *c,
		       int64_t *id)
{
	const struct module *m = c->key.mod;
	struct func_slot *slot;
	char display[512];
	int64_t mid;

	if (2 * (st->nfuncs + 1) > st->funcs_cap && grow_funcs(st))
		return -1;
	slot = func_slot(st->funcs, st->funcs_cap, m, c->key.func);
	if (slot->mod) {
		*id = slot->id;
		return 0;
	}
	if (module_id(st, m, &mid))
		return -1;
	if (c->func_name)
		snprintf(display, sizeof(display), "%s", c->func_name);
	else
		snprintf(display, sizeof(display), "%s+0x%llx", module__name(m),
			 (unsigned long long)c->key.func);
	sqlite3_bind_int64(st->ins_func, 1, mid);
	sqlite3_bind_int64(st->ins_func, 2, (int64_t)c->key.func);
	sqlite3_bind_text(st->ins_func, 3, display, -1, SQLITE_TRANSIENT);
	if (c->func_name)
		sqlite3_bind_text(st->ins_func, 4, c->func_name, -1,
				  SQLITE_STATIC);
	if (step_done(st, st->ins_func, "adding a function"))
		return -1;
	sqlite3_bind_int64(st->sel_func, 1, mid);
	sqlite3_bind_int64(st->sel_func, 2, (int64_t)c->key.func);
	if (select_id(st, st->sel_func, id))
		return -1;
	*slot = (struct func_slot){ m, c->key.func, *id };
	st->nfuncs++;
	return 0;
}

static void drop_caches(struct store *st)
{
	st->nmods = 0;
	if (st->funcs)
		memset(st->funcs, 0, st->funcs_cap * sizeof(*st->funcs));
	st->nfuncs = 0;
}

static int write_batch(struct store *st, int64_t run_id,
		       const struct aggregate *agg, const struct run_totals *tot)
{
	const struct cid_count *cids;
	const struct unresolved_count *unres;
	const struct thread_name *threads;
	size_t n;

	threads = aggregate__threads(agg, &n);
	for (size_t i = 0; i < n; i++) {
		sqlite3_stmt *s = st->ins_thread;

		sqlite3_bind_int64(s, 1, run_id);
		sqlite3_bind_int64(s, 2, threads[i].pid);
		sqlite3_bind_int64(s, 3, threads[i].tid);
		sqlite3_bind_text(s, 4, threads[i].comm, -1, SQLITE_STATIC);
		if (step_done(st, s, "writing threads"))
			return -1;
	}
	cids = aggregate__cids(agg, &n);
	for (size_t i = 0; i < n; i++) {
		sqlite3_stmt *s = st->ins_cid;
		int64_t fid;

		if (function_id(st, &cids[i], &fid))
			return -1;
		sqlite3_bind_int64(s, 1, run_id);
		sqlite3_bind_int64(s, 2, cids[i].key.pid);
		sqlite3_bind_int64(s, 3, cids[i].key.tid);
		sqlite3_bind_int64(s, 4, fid);
		sqlite3_bind_int64(s, 5, cids[i].key.height);
		sqlite3_bind_int64(s, 6, (int64_t)cids[i].samples);
		if (step_done(st, s, "writing samples"))
			return -1;
	}
	unres = aggregate__unresolved(agg, &n);
	for (size_t i = 0; i < n; i++) {
		sqlite3_stmt *s = st->ins_unres;
		int64_t mid;

		if (module_id(st, unres[i].mod, &mid))
			return -1;
		sqlite3_bind_int64(s, 1, run_id);
		sqlite3_bind_int64(s, 2, unres[i].pid);
		sqlite3_bind_int64(s, 3, unres[i].tid);
		sqlite3_bind_text(s, 4, cid_failure__name(unres[i].reason), -1,
				  SQLITE_STATIC);
		sqlite3_bind_int64(s, 5, mid);
		sqlite3_bind_int64(s, 6, (int64_t)unres[i].samples);
		if (step_done(st, s, "writing unresolved samples"))
			return -1;
	}
	sqlite3_bind_int64(st->upd_run, 1, (int64_t)tot->samples);
	sqlite3_bind_int64(st->upd_run, 2, (int64_t)tot->unresolved);
	sqlite3_bind_int64(st->upd_run, 3, (int64_t)tot->lost);
	sqlite3_bind_int64(st->upd_run, 4, (int64_t)tot->throttled);
	sqlite3_bind_int64(st->upd_run, 5, run_id);
	return step_done(st, st->upd_run, "updating the run");
}

int store__flush(struct store *st, int64_t run_id, const struct aggregate *agg,
		 const struct run_totals *tot)
{
	if (exec(st, "BEGIN IMMEDIATE", "flushing"))
		return -1;
	if (write_batch(st, run_id, agg, tot) ||
	    exec(st, "COMMIT", "flushing")) {
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		drop_caches(st);
		return -1;
	}
	return 0;
}

int store__end_run(struct store *st, int64_t run_id, const char *status,
		   int exit_status)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(st->db, "UPDATE runs SET status = ?,"
			       " ended_ns = ?, exit_status = ? WHERE id = ?",
			       -1, &s, NULL))
		return db_error(st, "finishing the run");
	sqlite3_bind_text(s, 1, status, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, now_ns());
	if (exit_status >= 0)
		sqlite3_bind_int(s, 3, exit_status);
	sqlite3_bind_int64(s, 4, run_id);
	rc = sqlite3_step(s);
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : db_error(st, "finishing the run");
}
