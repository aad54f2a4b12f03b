/*
 * store.c - SQLite profile database: open, migrate, batched writes.
 *
 * Ids of modules and functions are cached in memory for the life of the
 * store, so a flush does one upsert per distinct CID and no lookups for
 * functions it has seen before.  The caches are dropped when a flush
 * rolls back, since the ids it assigned are void then.
 */
#define _GNU_SOURCE
#include "common/clock.h"
#include "schema/store.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "binary/module.h"
#include "collector/aggregate.h"
#include "common/grow.h"
#include "common/hindex.h"
#include "config.h"
#include "inference/pathmap.h"
#include "schema/migrations.h"
#include "schema/report_store.h"
#include "schema/store_int.h"

int store__schema_version(void)
{
	return icppd_nr_migrations;
}

static int pragma_int(struct store *st, const char *what, const char *sql,
		      int *v)
{
	int64_t x = 0;
	int ret = store__ints(st, what, &x, 1, sql, NULL);

	*v = (int)x;
	return ret;
}

/*
 * Whether the file is icppd's to write: new (no schema at all), marked
 * with icppd's application_id, or one written before the mark (id 0,
 * with icppd's tables).  Checked before anything is written, so that a
 * foreign database is neither switched to WAL nor migrated.
 */
static int ours(struct store *st)
{
	int app = 0, objects = 0, tables = 0, triggers = 0;

	if (pragma_int(st, "opening", "PRAGMA application_id", &app) ||
	    pragma_int(st, "opening", "SELECT count(*) FROM sqlite_schema",
		       &objects) ||
	    pragma_int(st, "opening", "SELECT count(*) FROM sqlite_schema"
		       " WHERE type = 'trigger'", &triggers) ||
	    pragma_int(st, "opening", "SELECT count(*) FROM sqlite_schema"
		       " WHERE type ="
		       " 'table' AND name IN ('runs', 'cid_samples',"
		       " 'unresolved_samples')", &tables))
		return -1;
	/* icppd makes none, and one would run at icppd's first write */
	if (triggers) {
		store__set_error(st, "the database holds %d trigger%s, which "
				 "icppd never makes (an edited or crafted "
				 "database): left as it is", triggers,
				 triggers > 1 ? "s" : "");
		return -1;
	}
	if (app == ICPPD_APPLICATION_ID || !objects || (!app && tables == 3))
		return 0;
	store__set_error(st, "not an icppd database (application_id %d, %d "
			 "schema objects): left as it is", app, objects);
	return -1;
}

/* The size of the file at @path, 0 when there is none yet. */
static int64_t file_bytes(const char *path)
{
	struct stat sb;

	return stat(path, &sb) ? 0 : (int64_t)sb.st_size;
}

/* A new database: the schema the migrations leave, made in one pass
 * (icppd_schema), and *@v at their version.  One with objects of
 * someone else's (ours() let it through) takes the migrations one by
 * one, as before. */
static int create_current(struct store *st, int *v)
{
	const char *what = "creating the schema";
	char sql[64];
	int objects;

	if (pragma_int(st, what, "SELECT count(*) FROM sqlite_schema",
		       &objects))
		return -1;
	if (objects)
		return 0;
	for (int i = 0; i < icppd_nr_schema; i++)
		if (store__exec(st, icppd_schema[i].sql, what))
			return -1;
	if (store__exec(st, icppd_schema_rows, what))
		return -1;
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d",
		 icppd_nr_migrations);
	if (store__exec(st, sql, what))
		return -1;
	*v = icppd_nr_migrations;
	return 0;
}

/* No SQLite memory statistics: icppd reads none, and keeping them takes
 * a global mutex at every allocation. */
static void configure_sqlite(void)
{
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);	/* before any use */
}

/*
 * Opens a connection without a mutex of its own: a store is used by one
 * thread at a time (the recorder's, the daemon's, a report's).  With the
 * statistics off too, a micro-benchmark of 27k path nodes' inserts (the
 * first record of clang++ -O2 -c learns as many) ran about 10 % faster.
 */
static int open_db(const char *name, sqlite3 **db, int flags)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, configure_sqlite);
	return sqlite3_open_v2(name, db, flags | SQLITE_OPEN_NOMUTEX, NULL);
}

static int migrate(struct store *st, const struct store_migration *migs,
		   int n)
{
	const char *what = "upgrading the schema";
	char sql[64];
	int v = 0, app = 0, ret;

	/* the write lock now, so a read-only or locked database fails
	 * here, before anything is launched */
	if (store__begin(st, "opening for writing"))
		return -1;
	ret = pragma_int(st, "reading the schema version",
			 "PRAGMA user_version", &v);
	if (!ret && v > n) {
		store__set_error(st, "schema version %d is newer than this icppd "
			  "supports (%d): upgrade icppd", v, n);
		ret = -1;
	}
	if (!ret && !v && migs == icppd_migrations && n == icppd_nr_migrations)
		ret = create_current(st, &v);
	for (; !ret && v < n; v++) {
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", v + 1);
		ret = store__exec(st, migs[v].sql, what) ||
		      store__exec(st, sql, what) ? -1 : 0;
	}
	snprintf(sql, sizeof(sql), "PRAGMA application_id = %d",
		 ICPPD_APPLICATION_ID);
	/* written where it is not yet: an open that writes nothing leaves
	 * the file as it was (schema/checked.c) */
	if (!ret && !(ret = pragma_int(st, what, "PRAGMA application_id",
				       &app)) && app != ICPPD_APPLICATION_ID)
		ret = store__exec(st, sql, what);
	return store__end(st, ret, what);
}

static int prepare(struct store *st)
{
	static const struct { size_t off; const char *sql; } stmts[] = {
		{ offsetof(struct store, ins_module),
		  "INSERT OR IGNORE INTO modules (path, build_id) VALUES (?, ?)" },
		{ offsetof(struct store, sel_module),
		  "SELECT id FROM modules WHERE path = ? AND build_id = ?" },
		{ offsetof(struct store, sel_build),
		  "SELECT MIN(id) FROM modules WHERE build_id = ?"
		  " HAVING COUNT(*) > 0" },
		{ offsetof(struct store, ins_func),
		  "INSERT INTO functions (module_id, address, name, symbol)"
		  " VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING" },
		{ offsetof(struct store, sel_func),
		  "SELECT id FROM functions WHERE module_id = ? AND address = ?" },
		{ offsetof(struct store, ins_offcpu),
		  "INSERT INTO offcpu_samples VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
		  " ON CONFLICT DO UPDATE SET"
		  " switches = switches + excluded.switches,"
		  " blocked_ns = blocked_ns + excluded.blocked_ns,"
		  " runnable_ns = runnable_ns + excluded.runnable_ns" },
		{ offsetof(struct store, ins_kchain),
		  "INSERT INTO kernel_chains VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
		  " ON CONFLICT DO UPDATE SET"
		  " samples = samples + excluded.samples" },
		{ offsetof(struct store, ins_unres),
		  "INSERT INTO unresolved_samples VALUES (?, ?, ?, ?, ?, ?) ON"
		  " CONFLICT DO UPDATE SET samples = samples + excluded.samples" },
		{ offsetof(struct store, ins_thread),
		  "INSERT INTO threads VALUES (?, ?, ?, ?) ON CONFLICT"
		  " DO UPDATE SET comm = excluded.comm" },
		{ offsetof(struct store, upd_run),
		  "UPDATE runs SET samples = ?, unresolved = ?, lost = ?,"
		  " throttled = ?, flushed_ns = ? WHERE id = ?" },
		{ offsetof(struct store, ins_map),
		  "INSERT OR IGNORE INTO path_maps (program_id, run_id)"
		  " VALUES (?, ?)" },
		{ offsetof(struct store, sel_map),
		  "SELECT id FROM path_maps WHERE program_id = ? AND run_id = ?" },
		{ offsetof(struct store, sel_ctx),
		  "SELECT id FROM contexts WHERE parent_id = ? AND"
		  " function_id = ?" },
		{ offsetof(struct store, ins_ctx_new),
		  "INSERT INTO contexts (parent_id, function_id) VALUES (?, ?)"
		  " ON CONFLICT DO NOTHING" },
		{ offsetof(struct store, rows.sel_node),
		  "SELECT id, context_id FROM path_nodes WHERE map_id = ? AND"
		  " parent_id = ? AND function_id = ? AND call_site = ? AND"
		  " height = ?" },
		{ offsetof(struct store, ins_node),
		  "INSERT INTO path_nodes (map_id, parent_id, function_id,"
		  " call_site, height, depth, self, total, context_id)"
		  " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET"
		  " self = self + excluded.self, total = total + excluded.total"
		  " RETURNING id" },
		{ offsetof(struct store, ins_counter),
		  "INSERT INTO run_counters VALUES (?, ?, ?) ON CONFLICT"
		  " DO UPDATE SET value = excluded.value" },
		{ offsetof(struct store, ins_window),
		  "INSERT INTO learn_windows VALUES (?, ?, ?, ?, ?, ?, ?)"
		  " ON CONFLICT DO UPDATE SET end_ms = max(end_ms,"
		  " excluded.end_ms), samples = samples + excluded.samples,"
		  " unexplained = unexplained + excluded.unexplained, copies ="
		  " copies + excluded.copies, new_paths = new_paths +"
		  " excluded.new_paths" },
	};

	for (size_t i = 0; i < sizeof(stmts) / sizeof(stmts[0]); i++) {
		sqlite3_stmt **s = (sqlite3_stmt **)((char *)st + stmts[i].off);

		if (sqlite3_prepare_v3(st->db, stmts[i].sql, -1,
				       SQLITE_PREPARE_PERSISTENT, s, NULL))
			return store__db_error(st, "preparing statements");
	}
	return 0;
}

/*
 * A writer's database must take what it writes, before a command is
 * run under it: a read-only file (SQLite opens it read-only without a
 * word, and the first flush fails), or a corrupt one (a record into a
 * database with damaged pages stored nothing and exited 0).  The whole
 * file is checked up to STORE_CHECK_BYTES (PRAGMA quick_check reads
 * every page: some 0.3 s for 256 MiB); beyond, the pages icppd reads
 * report damage as they are read, as they do for a command that only
 * writes what it derives (store__open_derived()).
 */
#define STORE_CHECK_BYTES ((int64_t)1 << 30)

/* quick_check's first row, on one line. */
static int check_ok(sqlite3_stmt *s, void *ctx)
{
	char *out = ctx;

	snprintf(out, 200, "%s", store__text(s, 0));
	for (char *p = out; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	return 1;
}

static int check_writable(struct store *st, bool whole)
{
	char result[200] = "";

	if (sqlite3_db_readonly(st->db, "main") == 1) {
		store__set_error(st, "the database is read-only (use a "
				 "database you can write: -d FILE)");
		return -1;
	}
	if (!whole || file_bytes(st->path) > STORE_CHECK_BYTES ||
	    st->left_whole)
		return 0;
	if (store__sql(st, "checking the database", check_ok, result,
		       "PRAGMA quick_check(1)", NULL) < 0)
		return -1;
	if (strcmp(result, "ok")) {
		store__set_error(st, "the database is corrupt (quick_check: "
				 "%s): use another -d, or recover it with "
				 "sqlite3's .recover", result);
		return -1;
	}
	st->read_whole = true;
	return 0;
}

/* Opens @path with @migs; @whole: the whole file checked for damage
 * (check_writable()). */
static struct store *open_store(const char *path,
				const struct store_migration *migs, int n,
				bool whole, char *err, size_t errlen)
{
	struct store *st = calloc(1, sizeof(*st));
	int rc;

	if (!st || !(st->path = strdup(path))) {
		snprintf(err, errlen, "%s: out of memory", path);
		free(st);
		return NULL;
	}
	/* before the open's own writes (its application_id) */
	st->left_whole = store__checked_before(st);
	rc = open_db(path, &st->db, SQLITE_OPEN_READWRITE |
		     SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW);
	if (rc != SQLITE_OK) {
		store__set_error(st, "cannot open database: %s%s",
			  st->db ? sqlite3_errmsg(st->db) : sqlite3_errstr(rc),
			  access(path, F_OK) ? " (is the directory writable?)"
					     : "");
		goto out_fail;
	}
	sqlite3_extended_result_codes(st->db, 1);
	sqlite3_busy_timeout(st->db, 5000);
	store__bound_statements(st, file_bytes(path));
	/* synchronous=NORMAL is durable across a crash of icppd in WAL
	 * mode; only a power loss can drop the last flushes. */
	if (ours(st) ||
	    store__exec(st, "PRAGMA journal_mode = WAL", "opening") ||
	    store__exec(st, "PRAGMA synchronous = NORMAL", "opening") ||
	    migrate(st, migs, n))
		goto out_fail;
	if (n == icppd_nr_migrations && migs == icppd_migrations &&
	    (store__check_schema(st) || prepare(st) ||
	     check_writable(st, whole)))
		goto out_fail;
	return st;
out_fail:
	snprintf(err, errlen, "%s", st->err);
	store__close(st);
	return NULL;
}

struct store *store__open_with(const char *path,
			       const struct store_migration *migs, int n,
			       char *err, size_t errlen)
{
	return open_store(path, migs, n, true, err, errlen);
}

struct store *store__open(const char *path, char *err, size_t errlen)
{
	return open_store(path, icppd_migrations, icppd_nr_migrations, true,
			  err, errlen);
}

struct store *store__open_derived(const char *path, char *err, size_t errlen)
{
	return open_store(path, icppd_migrations, icppd_nr_migrations, false,
			  err, errlen);
}

/* Opens @path read-only; @immutable: as a file nobody writes (no -shm,
 * which a read-only folder cannot hold for a WAL database). */
static int open_ro(struct store *st, const char *path, bool immutable)
{
	char uri[4200];
	size_t n = 0;

	if (!immutable)
		return open_db(path, &st->db, SQLITE_OPEN_READONLY |
			       SQLITE_OPEN_NOFOLLOW);
	n = (size_t)snprintf(uri, sizeof(uri), "file:");
	for (const char *p = path; *p && n + 4 < sizeof(uri); p++)
		n += (size_t)(strchr("%?#", *p) ?
			snprintf(uri + n, sizeof(uri) - n, "%%%02X", *p) :
			snprintf(uri + n, sizeof(uri) - n, "%c", *p));
	snprintf(uri + n, sizeof(uri) - n, "?immutable=1");
	return open_db(uri, &st->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI |
		       SQLITE_OPEN_NOFOLLOW);
}

struct store *store__open_readonly(const char *path, char *err,
				  size_t errlen)
{
	struct store *st = calloc(1, sizeof(*st));
	int v = 0, rc;

	if (!st || !(st->path = strdup(path))) {
		snprintf(err, errlen, "%s: out of memory", path);
		free(st);
		return NULL;
	}
	st->readonly = true;
	for (int immutable = 0; immutable < 2; immutable++) {
		rc = open_ro(st, path, immutable);
		if (rc != SQLITE_OK) {
			store__set_error(st, "cannot open database: %s",
					 st->db ? sqlite3_errmsg(st->db)
						: sqlite3_errstr(rc));
			goto out_fail;
		}
		sqlite3_extended_result_codes(st->db, 1);
		sqlite3_busy_timeout(st->db, 5000);
		store__bound_statements(st, file_bytes(path));
		if (!pragma_int(st, "reading the schema version",
				"PRAGMA user_version", &v))
			break;
		rc = sqlite3_errcode(st->db) & 0xff;
		if (immutable || (rc != SQLITE_READONLY && rc != SQLITE_CANTOPEN))
			goto out_fail;
		sqlite3_close(st->db);
		st->db = NULL;
	}
	if (v != icppd_nr_migrations) {
		store__set_error(st, v > icppd_nr_migrations ?
			"schema version %d is newer than this icppd supports "
			"(%d): upgrade icppd" :
			"schema version %d is older than this icppd's (%d) and "
			"the database is read-only: upgrade it from a writable "
			"copy", v, icppd_nr_migrations);
		goto out_fail;
	}
	if (ours(st) || store__check_schema(st))
		goto out_fail;
	return st;
out_fail:
	snprintf(err, errlen, "%s", st->err);
	store__close(st);
	return NULL;
}

bool store__readonly(const struct store *st)
{
	return st->readonly;
}

void store__close(struct store *st)
{
	if (!st)
		return;
	sqlite3_stmt *stmts[] = { st->ins_module, st->sel_module, st->sel_build,
		st->ins_func, st->sel_func, st->ins_offcpu, st->ins_kchain,
		st->ins_unres,
		st->ins_thread, st->upd_run, st->ins_map, st->sel_map,
		st->sel_ctx, st->ins_node, st->ins_counter, st->ins_ctx_new,
		st->ins_window, st->ins_unknown, st->ins_inferred,
		st->ins_function, st->ins_explained, st->sel_inlined };

	for (size_t i = 0; i < sizeof(stmts) / sizeof(stmts[0]); i++)
		sqlite3_finalize(stmts[i]);
	for (int k = 0; k <= BATCH_LOG; k++) {
		sqlite3_finalize(st->sites.stmts[k]);
		sqlite3_finalize(st->cid_writes.insert[k]);
		sqlite3_finalize(st->pc_writes.insert[k]);
	}
	free(st->sites.v);
	sqlite3_finalize(st->cid_writes.upsert);
	sqlite3_finalize(st->pc_writes.upsert);
	u64set__exit(&st->cid_writes.keys);
	u64set__exit(&st->pc_writes.keys);
	free(st->samples);
	free(st->fresh);
	store__paths_exit(st);		/* its statements before the close */
	sqlite3_close(st->db);
	store__keep_checked(st);
	free(st->mods);
	free(st->funcs);
	hindex__exit(&st->func_index);
	free(st->path);
	free(st);
}

int store__begin_run(struct store *st, const struct run_info *ri,
		     int64_t *run_id)
{
	char host[256] = "";

	gethostname(host, sizeof(host) - 1);
	if (store__sql(st, "creating the run", NULL, NULL,
	    "INSERT INTO runs (kind, command, target_pid, event, event_canonical,"
	    " precise, period, frequency, started_ns, status, hostname,"
	    " icppd_version, owner_pid, kernel) VALUES (?, ?, ?, ?, ?, ?, ?,"
	    " ?, ?, 'running', ?, ?, ?, ?)", "ttnttinnittii", ri->kind,
	    ri->command,
	    (int64_t)(ri->target_pid > 0 ? ri->target_pid : -1), ri->event,
	    ri->event_canonical, (int64_t)ri->precise,
	    (int64_t)(ri->period ? (int64_t)ri->period : -1),
	    (int64_t)(ri->frequency ? (int64_t)ri->frequency : -1),
	    clock__real_ns(), host, PACKAGE_VERSION, (int64_t)getpid(),
	    (int64_t)ri->kernel))
		return -1;
	*run_id = sqlite3_last_insert_rowid(st->db);
	return 0;
}

/* 0 when a module with build-id @build exists, 1 when none, -1 on
 * error. */
static int find_by_build_id(struct store *st, const char *build, int64_t *id)
{
	sqlite3_stmt *s = st->sel_build;
	int rc;

	sqlite3_bind_text(s, 1, build, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (rc == SQLITE_ROW)
		return 0;
	return rc == SQLITE_DONE ? 1 : store__db_error(st, "looking up a module");
}

int store__find_module(struct store *st, const char *path, const char *build,
		      int64_t *id)
{
	/* The same build at another path is the same module (its path
	 * map applies); images without a build-id go by path. */
	if (build[0]) {
		int ret = find_by_build_id(st, build, id);

		if (ret <= 0)
			return ret ? -1 : 1;
	}
	sqlite3_bind_text(st->sel_module, 1, path, -1, SQLITE_STATIC);
	sqlite3_bind_text(st->sel_module, 2, build, -1, SQLITE_STATIC);
	return store__lookup_id(st, st->sel_module, id, NULL);
}

int store__module_row(struct store *st, const char *path, const char *build,
		      int64_t *id)
{
	int found = store__find_module(st, path, build, id);

	if (found)
		return found < 0 ? -1 : 0;
	sqlite3_bind_text(st->ins_module, 1, path, -1, SQLITE_STATIC);
	sqlite3_bind_text(st->ins_module, 2, build, -1, SQLITE_STATIC);
	if (store__step_done(st, st->ins_module, "adding a module"))
		return -1;
	sqlite3_bind_text(st->sel_module, 1, path, -1, SQLITE_STATIC);
	sqlite3_bind_text(st->sel_module, 2, build, -1, SQLITE_STATIC);
	return store__select_id(st, st->sel_module, id);
}

int store__module_id(struct store *st, const struct module *m, int64_t *id)
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
	if (store__module_row(st, module__path(m), module__build_id(m), id))
		return -1;
	if (grow(&st->mods, &st->mods_cap, st->nmods + 1, sizeof(*st->mods), 16))
		return -1;
	st->mods[st->nmods++] = (struct mod_slot){ m, *id };
	return 0;
}

static uint64_t func_hash(const struct module *m, uint64_t addr)
{
	return hindex__mix(hindex__mix(0, (uintptr_t)m), addr);
}

int store__cache_function(struct store *st, const struct module *m,
			  uint64_t addr, int64_t id)
{
	if (grow(&st->funcs, &st->funcs_cap, st->nfuncs + 1,
		 sizeof(*st->funcs), 1024) ||
	    hindex__insert(&st->func_index, func_hash(m, addr),
			   (uint32_t)st->nfuncs)) {
		store__set_error(st, "adding a function: out of memory");
		return -1;
	}
	st->funcs[st->nfuncs++] = (struct func_slot){ m, addr, id };
	return 0;
}

bool store__cached_function(struct store *st, const struct module *m,
			    uint64_t addr, int64_t *id)
{
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint32_t i;

	while ((i = hindex__next(&st->func_index, &p, func_hash(m, addr))) !=
	       HINDEX_NONE)
		if (st->funcs[i].mod == m && st->funcs[i].addr == addr) {
			*id = st->funcs[i].id;
			return true;
		}
	return false;
}

int store__function_id(struct store *st, const struct module *m,
			uint64_t addr, const char *name, int64_t *id)
{
	char display[STORE_LABEL_MAX];
	int64_t mid;
	int added;

	if (store__cached_function(st, m, addr, id))
		return 0;
	if (store__module_id(st, m, &mid))
		return -1;
	module__func_label(m, addr, name, display, sizeof(display));
	sqlite3_bind_int64(st->ins_func, 1, mid);
	sqlite3_bind_int64(st->ins_func, 2, (int64_t)addr);
	sqlite3_bind_text(st->ins_func, 3, display, -1, SQLITE_TRANSIENT);
	if (name)
		sqlite3_bind_text(st->ins_func, 4, name, -1, SQLITE_STATIC);
	added = store__insert_new(st, st->ins_func, id, "adding a function");
	if (added < 0)
		return -1;
	if (!added && store__function_found(st, mid, addr, id))
		return -1;	/* there already: another run's */
	return store__cache_function(st, m, addr, *id);
}

int store__function_found(struct store *st, int64_t module_id, uint64_t addr,
			int64_t *id)
{
	sqlite3_bind_int64(st->sel_func, 1, module_id);
	sqlite3_bind_int64(st->sel_func, 2, (int64_t)addr);
	return store__select_id(st, st->sel_func, id);
}

static void drop_caches(struct store *st)
{
	st->nmods = 0;
	st->nfuncs = 0;
	hindex__clear(&st->func_index);
	st->nodes.serial = 0;
}

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(const void *const *)a;
	uintptr_t y = (uintptr_t)*(const void *const *)b;

	return x < y ? -1 : x > y;
}

static bool forgotten(const struct module *const *sorted, size_t n,
		      const struct module *m)
{
	return bsearch(&m, sorted, n, sizeof(*sorted), cmp_ptr) != NULL;
}

void store__forget_modules(struct store *st, const struct module *const *mods,
			   size_t n)
{
	const struct module **sorted = malloc((n ? n : 1) * sizeof(*sorted));
	size_t kept = 0;

	if (!sorted) {		/* forget everything: always correct */
		drop_caches(st);
		return;
	}
	memcpy(sorted, mods, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_ptr);
	for (size_t i = 0; i < st->nmods; i++)
		if (!forgotten(sorted, n, st->mods[i].mod))
			st->mods[kept++] = st->mods[i];
	st->nmods = kept;
	/* compact the cache and index it anew */
	kept = 0;
	for (size_t i = 0; i < st->nfuncs; i++)
		if (!forgotten(sorted, n, st->funcs[i].mod))
			st->funcs[kept++] = st->funcs[i];
	st->nfuncs = 0;
	hindex__clear(&st->func_index);
	for (size_t i = 0; i < kept; i++) {
		struct func_slot f = st->funcs[i];

		if (hindex__insert(&st->func_index, func_hash(f.mod, f.addr),
				   (uint32_t)i)) {
			drop_caches(st);
			break;
		}
		st->nfuncs++;
	}
	free(sorted);
}

int store__map_id(struct store *st, const struct module *prog, int64_t run_id,
		 int64_t *id)
{
	int64_t pid;

	if (store__module_id(st, prog, &pid))
		return -1;
	for (int k = 0; k < 2; k++) {
		sqlite3_stmt *s = k ? st->sel_map : st->ins_map;

		sqlite3_bind_int64(s, 1, pid);
		sqlite3_bind_int64(s, 2, run_id);
		if (k ? store__select_id(st, s, id) : store__step_done(st, s, "adding a path map"))
			return -1;
	}
	return 0;
}

/* Binds run @run_id and CID @k (its function named @func_name) to
 * columns 1-6 of @s: run, pid, tid, program, function, height, as the
 * cid_samples and kernel_chains inserts take them.  0 or -1. */
static int bind_cid(struct store *st, sqlite3_stmt *s, int64_t run_id,
		    const struct cid_key *k, const char *func_name)
{
	int64_t fid, pid;

	if (store__function_id(st, k->mod, k->func, func_name, &fid) ||
	    store__module_id(st, k->prog, &pid))
		return -1;
	sqlite3_bind_int64(s, 1, run_id);
	sqlite3_bind_int64(s, 2, k->pid);
	sqlite3_bind_int64(s, 3, k->tid);
	sqlite3_bind_int64(s, 4, pid);
	sqlite3_bind_int64(s, 5, fid);
	sqlite3_bind_int64(s, 6, k->height);
	return 0;
}

/*
 * A flush's samples by CID and by instruction, each row's columns in
 * the order of the table's key, sorted by it, the rows of one key
 * summed (two modules of one build are one row).  The rows whose key
 * the run has not written yet (the store keeps the hashes of those it
 * wrote, struct sample_writes) go in 32 a statement, INSERT OR IGNORE;
 * the others are upserted one a statement, in key order.  Sorted,
 * SQLite meets each row on the page it met the last one on.
 * Standalone replays of cid_samples' rows, us a row: 8,000 new rows
 * 1.6 one upsert at a time in hash order, 1.3 sorted, 0.6 sorted and
 * 32 a statement; 8,000 rows a flush drawn from 30,000 keys, as a
 * run's later flushes meet its earlier rows, 3.4 one at a time in hash
 * order, 2.3 sorted, 2.3 sorted and 32 an upsert, 5.5 as an UPDATE OR
 * IGNORE ... FROM (VALUES) and an INSERT OR IGNORE of 32 each.  An
 * upsert of many rows can abort half-way, so SQLite keeps a statement
 * journal for it, which spills to /var/tmp where its rows lie pages
 * apart (store_int.h, batch_sql); one row a statement keeps none.
 * A 10 kHz record of g++ -O2 -c flushes a dozen times, and most of a
 * later flush's rows are new keys (its CIDs' long tail): upserting
 * every row of a later flush was 18 % of the recorder's own CPU.
 */
static const struct sample_table {
	const char *table, *upsert;
	struct batch_sql insert;
	int key;		/* leading columns; the rest are counts */
} cid_table = {
	"cid_samples",
	"INSERT INTO cid_samples (run_id, pid, tid, program_id, function_id,"
	" height, samples, kernel_samples) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
	" ON CONFLICT DO UPDATE SET samples = samples + excluded.samples,"
	" kernel_samples = kernel_samples + excluded.kernel_samples", {
		"INSERT OR IGNORE INTO cid_samples (run_id, pid, tid,"
		" program_id, function_id, height, samples, kernel_samples)"
		" VALUES ", "", 8, "writing samples", 0
	}, 6
}, pc_table = {
	"pc_samples",
	"INSERT INTO pc_samples (run_id, function_id, offset, pid, samples)"
	" VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET samples ="
	" samples + excluded.samples", {
		"INSERT OR IGNORE INTO pc_samples (run_id, function_id,"
		" offset, pid, samples) VALUES ", "", 5, "writing samples", 0
	}, 4
};

/* By the first six columns: either table's key, then a count. */
static int cmp_sample(const void *x, const void *y)
{
	const struct sample_row *a = x, *b = y;

	for (int c = 0; c < 6; c++)
		if (a->v[c] != b->v[c])
			return a->v[c] < b->v[c] ? -1 : 1;
	return 0;
}

/* At most this many keys' hashes a table and run (16 MiB of slots);
 * past it, every row of the run is upserted. */
#define SAMPLE_KEYS_MAX (1u << 20)

static uint64_t sample_hash(const struct sample_row *r, int key)
{
	uint64_t h = 0;

	for (int c = 0; c < key; c++)
		h = hindex__mix(h, (uint64_t)r->v[c]);
	return h ? h : 1;
}

/* Whether hash @h is among @w's keys (true where the set is not
 * complete: the row may be there); if not, it is now. */
static bool key_written(struct sample_writes *w, uint64_t h)
{
	if (!w->complete || u64set__has(&w->keys, h))
		return true;
	if (u64set__add(&w->keys, h, SAMPLE_KEYS_MAX))
		w->complete = false;
	return !w->complete;
}

struct sample_batch {
	const struct sample_row *rows;
	const uint32_t *idx;	/* the rows' indexes; NULL: in order */
	int ncols;
};

static void bind_sample(const void *arg, size_t row, sqlite3_stmt *s,
			int first)
{
	const struct sample_batch *b = arg;
	const struct sample_row *r = &b->rows[b->idx ? b->idx[row] : row];

	for (int c = 0; c < b->ncols; c++)
		sqlite3_bind_int64(s, first + c, r->v[c]);
}

/* Writes st->samples[0, @n) of run @run_id into @t, with @w. */
static int write_samples(struct store *st, int64_t run_id,
			 struct sample_writes *w,
			 const struct sample_table *t, size_t n)
{
	struct sample_row *r = st->samples;
	struct sample_batch b = { r, NULL, t->insert.ncols };
	char sql[96];
	size_t m = 0, nfresh = 0, took;

	if (!n)
		return 0;
	qsort(r, n, sizeof(*r), cmp_sample);
	for (size_t i = 1; i < n; i++) {
		if (!memcmp(r[m].v, r[i].v, (size_t)t->key * sizeof(r->v[0]))) {
			for (int c = t->key; c < b.ncols; c++)
				r[m].v[c] += r[i].v[c];
		} else {
			r[++m] = r[i];
		}
	}
	n = m + 1;
	if (w->run_id != run_id) {	/* the run's first flush here */
		int64_t there = 0;

		snprintf(sql, sizeof(sql), "SELECT EXISTS (SELECT 1 FROM %s"
			 " WHERE run_id = ?)", t->table);
		if (store__ints(st, "writing samples", &there, 1, sql, "i",
				run_id) < 0)
			return -1;
		u64set__clear(&w->keys);
		w->run_id = run_id;
		w->complete = !there;
	}
	if (grow(&st->fresh, &st->fresh_cap, n, sizeof(*st->fresh), 1024)) {
		store__set_error(st, "writing samples: out of memory");
		return -1;
	}
	/* the rows there already upserted, the new ones kept for after */
	for (size_t i = 0; i < n; i++) {
		if (!key_written(w, sample_hash(&r[i], t->key))) {
			st->fresh[nfresh++] = (uint32_t)i;
			continue;
		}
		if (!w->upsert && sqlite3_prepare_v3(st->db, t->upsert, -1,
					SQLITE_PREPARE_PERSISTENT, &w->upsert,
					NULL))
			return store__db_error(st, "writing samples");
		bind_sample(&b, i, w->upsert, 1);
		if (store__step_done(st, w->upsert, "writing samples"))
			return -1;
	}
	b.idx = st->fresh;
	if (store__insert_rows(st, w->insert, &t->insert, nfresh, bind_sample,
			       &b, &took))
		return -1;
	if (took != nfresh) {	/* a row the set did not know: not lost */
		w->complete = false;	/* the flush again, every row upserted */
		store__set_error(st, "writing samples: %zu of %zu new rows of"
				 " %s were there already", nfresh - took,
				 nfresh, t->table);
		return -1;
	}
	return 0;
}

static int write_counts(struct store *st, int64_t run_id,
			const struct aggregate *agg)
{
	const struct cid_count *cids;
	const struct offcpu_count *offcpu;
	const struct pc_count *pcs;
	const struct kchain_count *kch;
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
		if (store__step_done(st, s, "writing threads"))
			return -1;
	}
	cids = aggregate__cids(agg, &n);
	if (grow(&st->samples, &st->samples_cap, n, sizeof(*st->samples), 1024))
		goto oom;
	for (size_t i = 0; i < n; i++) {
		const struct cid_key *k = &cids[i].key;
		int64_t fid, prog;

		if (store__function_id(st, k->mod, k->func, cids[i].func_name,
				       &fid) ||
		    store__module_id(st, k->prog, &prog))
			return -1;
		st->samples[i] = (struct sample_row){ { run_id, k->pid, k->tid,
			prog, fid, k->height, (int64_t)cids[i].samples,
			(int64_t)cids[i].kernel } };
	}
	if (write_samples(st, run_id, &st->cid_writes, &cid_table, n))
		return -1;
	offcpu = aggregate__offcpu(agg, &n);
	for (size_t i = 0; i < n; i++) {
		sqlite3_stmt *s = st->ins_offcpu;

		if (bind_cid(st, s, run_id, &offcpu[i].key,
			     offcpu[i].func_name))
			return -1;
		sqlite3_bind_int64(s, 7, (int64_t)offcpu[i].switches);
		sqlite3_bind_int64(s, 8, (int64_t)offcpu[i].blocked_ns);
		sqlite3_bind_int64(s, 9, (int64_t)offcpu[i].runnable_ns);
		if (store__step_done(st, s, "writing off-CPU time"))
			return -1;
	}
	pcs = aggregate__pcs(agg, &n);
	if (grow(&st->samples, &st->samples_cap, n, sizeof(*st->samples), 1024))
		goto oom;
	for (size_t i = 0; i < n; i++) {
		int64_t fid;

		if (store__function_id(st, pcs[i].mod, pcs[i].func,
				       pcs[i].func_name, &fid))
			return -1;
		st->samples[i] = (struct sample_row){ { run_id, fid,
			pcs[i].offset, pcs[i].pid, (int64_t)pcs[i].samples } };
	}
	if (write_samples(st, run_id, &st->pc_writes, &pc_table, n))
		return -1;
	kch = aggregate__kchains(agg, &n);
	for (size_t i = 0; i < n; i++) {
		sqlite3_stmt *s = st->ins_kchain;

		if (bind_cid(st, s, run_id, &kch[i].key, kch[i].func_name))
			return -1;
		sqlite3_bind_text(s, 7, kch[i].chain, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 8, (int64_t)kch[i].samples);
		if (store__step_done(st, s, "writing kernel chains"))
			return -1;
	}
	unres = aggregate__unresolved(agg, &n);
	for (size_t i = 0; i < n; i++) {
		sqlite3_stmt *s = st->ins_unres;
		int64_t mid;

		if (store__module_id(st, unres[i].mod, &mid))
			return -1;
		sqlite3_bind_int64(s, 1, run_id);
		sqlite3_bind_int64(s, 2, unres[i].pid);
		sqlite3_bind_int64(s, 3, unres[i].tid);
		sqlite3_bind_text(s, 4, cid_failure__name(unres[i].reason), -1,
				  SQLITE_STATIC);
		sqlite3_bind_int64(s, 5, mid);
		sqlite3_bind_int64(s, 6, (int64_t)unres[i].samples);
		if (store__step_done(st, s, "writing unresolved samples"))
			return -1;
	}
	return 0;
oom:
	store__set_error(st, "writing samples: out of memory");
	return -1;
}

static int write_batch(struct store *st, int64_t run_id,
		       const struct store_batch *b)
{
	const struct run_totals *tot = &b->tot;

	if (b->agg && write_counts(st, run_id, b->agg))
		return -1;
	for (size_t i = 0; i < b->ncounters; i++) {
		sqlite3_stmt *s = st->ins_counter;

		sqlite3_bind_int64(s, 1, run_id);
		sqlite3_bind_text(s, 2, b->counters[i].name, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 3, b->counters[i].value);
		if (store__step_done(st, s, "writing run counters"))
			return -1;
	}
	if (b->paths && store__write_paths(st, b->truth ? run_id : 0,
				    b->truth ? 0 : run_id, b->paths))
		return -1;
	if (b->paths && !b->truth && store__write_known(st, b->known, b->nknown))
		return -1;
	/* a statement prepared once: a flush of the daemon's holds 40
	 * windows (10 s of 250 ms), and preparing each was 2.5 % of its
	 * CPU at 99 Hz */
	for (size_t i = 0; i < b->nwindows; i++) {
		const struct store_window *w = &b->windows[i];
		sqlite3_stmt *s = st->ins_window;

		sqlite3_bind_int64(s, 1, run_id);
		sqlite3_bind_int64(s, 2, w->start_ms);
		sqlite3_bind_int64(s, 3, w->end_ms);
		sqlite3_bind_int64(s, 4, (int64_t)w->samples);
		sqlite3_bind_int64(s, 5, (int64_t)w->unexplained);
		sqlite3_bind_int64(s, 6, (int64_t)w->copies);
		sqlite3_bind_int64(s, 7, (int64_t)w->new_paths);
		if (store__step_done(st, s, "writing learning's windows"))
			return -1;
	}
	sqlite3_bind_int64(st->upd_run, 1, (int64_t)tot->samples);
	sqlite3_bind_int64(st->upd_run, 2, (int64_t)tot->unresolved);
	sqlite3_bind_int64(st->upd_run, 3, (int64_t)tot->lost);
	sqlite3_bind_int64(st->upd_run, 4, (int64_t)tot->throttled);
	sqlite3_bind_int64(st->upd_run, 5, clock__real_ns());
	sqlite3_bind_int64(st->upd_run, 6, run_id);
	return store__step_done(st, st->upd_run, "updating the run");
}

int store__flush(struct store *st, int64_t run_id, const struct store_batch *b)
{
	int ret;

	if (store__begin(st, "flushing"))
		return -1;
	ret = write_batch(st, run_id, b);
	if (store__end(st, ret, "flushing")) {
		drop_caches(st);
		return -1;
	}
	if (b->paths)
		pathmap__clear_counts(b->paths);
	return 0;
}

int store__run_cpu(struct store *st, int64_t run_id, int64_t user_ns,
		   int64_t system_ns)
{
	return store__sql(st, "storing the run's CPU time", NULL, NULL,
			  "UPDATE runs SET user_ns = ?, system_ns = ?"
			  " WHERE id = ?", "iii", user_ns, system_ns, run_id);
}

int store__end_run(struct store *st, int64_t run_id, const char *status,
		   int exit_status)
{
	return store__sql(st, "finishing the run", NULL, NULL,
			  "UPDATE runs SET status = ?, ended_ns = ?,"
			  " exit_status = ? WHERE id = ?", "tini", status,
			  clock__real_ns(), (int64_t)exit_status, run_id);
}

struct crash_sweep {
	struct store *st;
	bool (*alive)(void *arg, const char *host, int64_t pid);
	void *arg;
	int64_t n;
};

static int crash_row(sqlite3_stmt *s, void *ctx)
{
	struct crash_sweep *c = ctx;

	if (c->alive(c->arg, store__text(s, 1), sqlite3_column_int64(s, 2)))
		return 0;
	if (store__sql(c->st, "marking a crashed run", NULL, NULL,
		       "UPDATE runs SET status = 'interrupted', crashed = 1,"
		       " ended_ns = coalesce(flushed_ns, started_ns)"
		       " WHERE id = ?", "i", sqlite3_column_int64(s, 0)))
		return 2;	/* stop: the error is set */
	c->n++;
	return 0;
}

int store__crash_runs(struct store *st,
		      bool (*alive)(void *arg, const char *host, int64_t pid),
		      void *arg, int64_t *n)
{
	struct crash_sweep c = { st, alive, arg, 0 };
	int ret = store__sql(st, "finding crashed runs", crash_row, &c,
			     "SELECT id, hostname, owner_pid FROM runs"
			     " WHERE status = 'running'", NULL);

	*n = c.n;
	return ret ? -1 : 0;
}

struct text_out {
	char *buf;
	size_t len;
};

static int copy_text(sqlite3_stmt *s, void *ctx)
{
	struct text_out *out = ctx;

	snprintf(out->buf, out->len, "%s", store__text(s, 0));
	return 1;
}

int store__training(struct store *st, const char *path, const char *build_id,
		    char *other, size_t otherlen)
{
	struct text_out out = { other, otherlen };
	int64_t one;
	int ret;

	/* this build, anywhere: modules are matched by build-id */
	ret = store__ints(st, "looking up the path map", &one, 1,
			  "SELECT 1 FROM path_maps pm JOIN modules m"
			  " ON m.id = pm.program_id WHERE pm.run_id = 0 AND"
			  " m.build_id = ?1 AND (?1 <> '' OR m.path = ?2)"
			  " LIMIT 1", "tt", build_id, path);
	if (ret <= 0)
		return ret ? -1 : STORE_TRAINED;
	/* another build at the same path */
	ret = store__sql(st, "looking up the path map", copy_text, &out,
			 "SELECT m.build_id FROM path_maps pm JOIN modules m"
			 " ON m.id = pm.program_id WHERE pm.run_id = 0 AND"
			 " m.path = ? ORDER BY pm.id DESC LIMIT 1", "t", path);
	return ret < 0 ? -1 : ret ? STORE_OTHER_BUILD : STORE_UNTRAINED;
}

int store__any_training(struct store *st)
{
	int64_t one;
	int ret = store__ints(st, "looking up the path maps", &one, 1,
			      "SELECT 1 FROM path_maps WHERE run_id = 0"
			      " LIMIT 1", "");

	return ret < 0 ? -1 : ret == 0;
}

int store__height_quantile(struct store *st, const char *path,
			   const char *build_id, int per_mille,
			   int64_t *height)
{
	int ret;

	*height = 0;
	/* the run range first: cid_samples' key starts with run_id, so the
	 * scan stays within the last runs however big the database is */
	ret = store__ints(st, "reading stack heights", height, 1,
			  "WITH r AS (SELECT DISTINCT c.run_id"
			  "  FROM cid_samples c JOIN modules m"
			  "  ON m.id = c.program_id"
			  "  WHERE c.run_id > (SELECT MAX(id) FROM runs) - ?3"
			  "  AND m.build_id = ?1 AND (?1 <> '' OR m.path = ?2)),"
			  " h AS (SELECT c.height, SUM(c.samples) AS s"
			  "  FROM cid_samples c JOIN r ON c.run_id = r.run_id"
			  "  GROUP BY c.height),"
			  " q AS (SELECT height, SUM(s) OVER (ORDER BY height)"
			  "  AS cum, SUM(s) OVER () AS total FROM h)"
			  " SELECT height FROM q WHERE 1000 * cum >= ?4 * total"
			  " ORDER BY height LIMIT 1", "ttii", build_id, path,
			  (int64_t)STORE_HEIGHT_RUNS, (int64_t)per_mille);
	return ret < 0 ? -1 : 0;
}

int store__map_summary(struct store *st, const struct module *prog,
		       struct store_map_summary *out)
{
	int64_t mid, v[4] = { 0 };

	memset(out, 0, sizeof(*out));
	if (store__module_id(st, prog, &mid) ||
	    store__ints(st, "reading the path map", v, 4,
			"SELECT paths, cids, ambiguous_cids, samples"
			" FROM v_path_maps v JOIN path_maps pm"
			" ON pm.id = v.map_id"
			" WHERE pm.program_id = ? AND pm.run_id = 0", "i",
			mid) < 0)
		return -1;
	out->paths = v[0];
	out->cids = v[1];
	out->ambiguous_cids = v[2];
	out->samples = v[3];
	return 0;
}
