/*
 * test_store.c - schema creation and migration, refusal of newer and
 * corrupt databases, unwritable paths, batched upserts, and the one
 * error convention of row walks.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdbool.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "binary/cfi_cache.h"
#include "binary/module.h"
#include "collector/aggregate.h"
#include "inference/known.h"
#include "inference/pathmap.h"
#include "common/clock.h"
#include "schema/migrations.h"
#include "schema/store_int.h"
#include "schema/report_store.h"
#include "schema/retain.h"
#include "schema/store.h"
#include "tests/tap.h"
#include "tests/unit/dbquery.h"
#include "tests/unit/tmpdir.h"

static char dir[] = "/tmp/icppd-store-XXXXXX";

static char *path_in(const char *name)
{
	static char p[4][256];
	static int k;

	k = (k + 1) % 4;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
	return p[k];
}

static void run_sql(const char *db, const char *sql)
{
	sqlite3 *h;

	sqlite3_open(db, &h);
	sqlite3_exec(h, sql, NULL, NULL, NULL);
	sqlite3_close(h);
}

static void test_migrations(void)
{
	static const struct store_migration v1[] = {
		{ "CREATE TABLE t (a INTEGER);" } };
	static const struct store_migration v2[] = {
		{ "CREATE TABLE t (a INTEGER);" },
		{ "ALTER TABLE t ADD COLUMN b INTEGER DEFAULT 7;" } };
	char err[512];
	char *db = path_in("mig.db");
	struct store *st;

	st = store__open_with(db, v1, 1, err, sizeof(err));
	ok(st != NULL, "version 1 database created");
	store__close(st);
	is_int(query(db, "PRAGMA user_version"), 1, "user_version is 1");
	run_sql(db, "INSERT INTO t (a) VALUES (42)");
	st = store__open_with(db, v2, 2, err, sizeof(err));
	ok(st != NULL, "version 1 database opens with version 2 code");
	store__close(st);
	is_int(query(db, "PRAGMA user_version"), 2, "migrated to version 2");
	is_int(query(db, "SELECT a FROM t"), 42, "data kept across the migration");
	is_int(query(db, "SELECT b FROM t"), 7, "new column has its default");
	st = store__open_with(db, v1, 1, err, sizeof(err));
	ok(st == NULL, "version 2 database refused by version 1 code");
	ok(strstr(err, "schema version 2 is newer than this icppd supports (1)") != NULL,
	   "refusal says why: %s", err);
	is_int(query(db, "PRAGMA user_version"), 2, "refused database untouched");
}

/* Objects of database @a not in @b, and of @b not in @a, by type, name,
 * table and SQL text; -1 when they cannot be read. */
static long long schema_difference(const char *a, const char *b)
{
	static const char objects[] = "SELECT type, name, tbl_name, sql FROM";
	char *sql = sqlite3_mprintf("SELECT (SELECT count(*) FROM (%s"
		" main.sqlite_schema EXCEPT %s b.sqlite_schema)) + (SELECT"
		" count(*) FROM (%s b.sqlite_schema EXCEPT %s"
		" main.sqlite_schema))", objects, objects, objects, objects);
	char *attach = sqlite3_mprintf("ATTACH %Q AS b", b);
	sqlite3 *h = NULL;
	sqlite3_stmt *s = NULL;
	long long v = -1;

	if (sql && attach && sqlite3_open(a, &h) == SQLITE_OK &&
	    sqlite3_exec(h, attach, NULL, NULL, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(h, sql, -1, &s, NULL) == SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(h);
	sqlite3_free(sql);
	sqlite3_free(attach);
	return v;
}

/* A new database is made in one pass (icppd_schema): it must be what
 * every migration in turn makes of a version 1 database. */
static void test_one_pass(void)
{
	char err[512];
	char *stepped = path_in("stepped.db"), *fresh = path_in("fresh.db");
	struct store *st = store__open_with(stepped, icppd_migrations, 1, err,
					    sizeof(err));

	ok(st != NULL, "version 1 database made: %s", st ? "" : err);
	store__close(st);
	st = store__open(stepped, err, sizeof(err));
	ok(st != NULL, "... migrated step by step: %s", st ? "" : err);
	store__close(st);
	st = store__open(fresh, err, sizeof(err));
	ok(st != NULL, "new database made in one pass: %s", st ? "" : err);
	store__close(st);
	is_int(query(fresh, "SELECT count(*) FROM sqlite_schema"),
	       query(stepped, "SELECT count(*) FROM sqlite_schema"),
	       "both have as many schema objects");
	is_int(schema_difference(fresh, stepped), 0,
	       "... the same ones, SQL text for SQL text");
	is_int(query(fresh, "PRAGMA user_version"), icppd_nr_migrations,
	       "the new one is at the last version");
	is_int(query(fresh, "PRAGMA application_id"),
	       query(stepped, "PRAGMA application_id"), "... and icppd's");
	is_int(query(fresh, "SELECT count(*) FROM identity WHERE"
		     " length(id) = 32"), 1, "... with an id of its own");
	ok(query(fresh, "SELECT count(*) FROM runs") == 0 &&
	   query(fresh, "SELECT count(*) FROM path_nodes") == 0,
	   "... and no other rows");
}

/* Version 3 rebuilds cid_samples with a program column: old rows stay,
 * with program 0 (unknown); a read-only open needs the current schema. */
static void test_v3(void)
{
	char err[512];
	char *db = path_in("v2.db");
	struct store *st = store__open_with(db, icppd_migrations, 2, err,
					    sizeof(err));

	ok(st != NULL, "a version 2 database");
	store__close(st);
	run_sql(db, "INSERT INTO runs (kind, command, event, event_canonical,"
		" precise, started_ns, status) VALUES ('record', 'x', 'e', 'e',"
		" 0, 0, 'finished'); INSERT INTO modules VALUES (1, '/x', '');"
		" INSERT INTO functions VALUES (1, 1, 16, 'f', 'f');"
		" INSERT INTO cid_samples VALUES (1, 5, 5, 1, 64, 9);"
		/* a trained program /t (a library /l beside it) */
		" INSERT INTO modules VALUES (2, '/t', 'aa'), (3, '/l', 'bb');"
		" INSERT INTO functions VALUES (2, 2, 16, 'main', 'main'),"
		" (3, 3, 16, 'memcpy', 'memcpy');"
		" INSERT INTO path_maps (program_id, run_id) VALUES (2, 0);"
		" INSERT INTO cid_samples VALUES (1, 6, 6, 2, 32, 4),"
		" (1, 6, 6, 3, 80, 2)");
	st = store__open_readonly(db, err, sizeof(err));
	ok(st == NULL && strstr(err, "schema version 2 is older"),
	   "read-only open of an old schema refused: %s", err);
	st = store__open(db, err, sizeof(err));
	ok(st != NULL, "migrated to version 3");
	store__close(st);
	is_int(query(db, "SELECT samples FROM v_cids WHERE function = 'f' AND"
		     " height = 64 AND program IS NULL"), 9,
	       "old CID rows kept, program unknown");
	is_int(query(db, "SELECT SUM(samples) FROM v_cids WHERE pid = 6 AND"
		     " program = '/t'"), 6,
	       "version 6: a process whose CIDs one trained program explains "
	       "ran that program (the one a v2 database was trained on)");
	st = store__open_readonly(db, err, sizeof(err));
	ok(st != NULL && store__readonly(st), "read-only open of the current schema");
	store__close(st);
}

static void test_bad_files(void)
{
	char err[512];
	char *db = path_in("garbage.db");
	struct store *st;
	FILE *f = fopen(db, "w");

	for (int i = 0; i < 512; i++)
		fputs("not a database ", f);
	fclose(f);
	st = store__open(db, err, sizeof(err));
	ok(st == NULL, "corrupt file refused");
	ok(strstr(err, "file is not a database") && strstr(err, "garbage.db"),
	   "corrupt file error names file and cause: %s", err);

	st = store__open("/nonexistent-dir/x.db", err, sizeof(err));
	ok(st == NULL, "database in a missing directory refused");
	ok(strstr(err, "cannot open database") != NULL, "says it cannot open: %s", err);

	st = store__open("/proc/icppd.db", err, sizeof(err));
	ok(st == NULL, "database on a read-only file system refused");

	db = path_in("new.db");
	run_sql(db, "PRAGMA user_version = 99");
	st = store__open(db, err, sizeof(err));
	ok(st == NULL, "newer schema refused");
	ok(strstr(err, "schema version 99 is newer") != NULL, "newer schema message: %s", err);
}

/* A database is input: objects icppd never makes are refused, and no
 * statement runs unbounded. */
static double now_s(void)
{
	return (double)clock__mono_ns() / 1e9;
}

static void test_crafted(void)
{
	char err[512];
	char *db = path_in("crafted.db");
	struct store *st = store__open(db, err, sizeof(err));
	int64_t n = 0;
	double t0;

	ok(st != NULL, "a fresh database: %s", st ? "" : err);
	store__close(st);
	run_sql(db, "CREATE TRIGGER endless AFTER INSERT ON runs BEGIN"
		" WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1"
		" FROM c) SELECT count(*) FROM c; END");
	st = store__open(db, err, sizeof(err));
	ok(st == NULL && strstr(err, "1 trigger, which icppd never makes"),
	   "a trigger refused before anything runs: %s", err);
	st = store__open_readonly(db, err, sizeof(err));
	ok(st == NULL && strstr(err, "1 trigger"),
	   "... read-only too: %s", err);
	run_sql(db, "DROP TRIGGER endless; DROP VIEW v_path_maps;"
		" CREATE VIEW v_path_maps AS WITH RECURSIVE c(x) AS (SELECT 1"
		" UNION ALL SELECT x + 1 FROM c) SELECT x AS map_id FROM c");
	st = store__open(db, err, sizeof(err));
	ok(st == NULL && strstr(err, "the view 'v_path_maps' is not one "
				"icppd made") && strstr(err, "DROP view"),
	   "one of icppd's views replaced: refused, with how to go on: %s",
	   err);
	run_sql(db, "DROP VIEW v_path_maps; CREATE INDEX mine ON runs(id)");
	st = store__open(db, err, sizeof(err));
	ok(st == NULL && strstr(err, "the index 'mine'"),
	   "an index on icppd's table that icppd did not make: refused: %s",
	   err);
	run_sql(db, "DROP INDEX mine; CREATE TABLE runs2 (x);"
		" CREATE INDEX mine ON runs2(x); CREATE VIEW v_mine AS"
		" SELECT count(*) FROM runs");
	st = store__open(db, err, sizeof(err));
	ok(st != NULL, "a user's own table, index and view stay: %s",
	   st ? "" : err);
	store__close(st);
	run_sql(db, "DROP TABLE runs2; CREATE TABLE foo (x); DROP TABLE foo;"
		" DROP TABLE threads; CREATE TABLE threads (run_id, tid, comm,"
		" x CHECK (length(zeroblob(100000000))))");
	st = store__open(db, err, sizeof(err));
	ok(st == NULL && strstr(err, "the table 'threads'"),
	   "one of icppd's tables made otherwise: refused: %s", err);

	/* every statement bounded: an endless one stops at the limit */
	db = path_in("bounded.db");
	st = store__open(db, err, sizeof(err));
	ok(st != NULL, "a fresh database: %s", st ? "" : err);
	if (!st)
		return;
	store__set_statement_limit(st, 200000000);	/* 0.2 s */
	t0 = now_s();
	is_int(store__ints(st, "counting", &n, 1, "WITH RECURSIVE c(x) AS"
			   " (SELECT 1 UNION ALL SELECT x + 1 FROM c)"
			   " SELECT count(*) FROM c", NULL), -1,
	       "an endless statement stops");
	ok(now_s() - t0 < 5, "... at its bound (%.1f s)", now_s() - t0);
	ok(strstr(store__error(st), "ran over its time bound") != NULL,
	   "... saying so: %s", store__error(st));
	is_int(store__ints(st, "counting", &n, 1, "SELECT count(*) FROM runs",
			   NULL), 0, "the next statement has its own bound");
	store__close(st);
}

static void test_flush(void)
{
	char err[512];
	char *db = path_in("flush.db");
	struct store *st = store__open(db, err, sizeof(err));
	struct module *m = module__open("/proc/self/exe");
	struct aggregate *a = aggregate__new(100);
	struct run_info ri = { "record", "app --x", 4242, "cpu-clock",
			       "perf::cpu-clock", 0, 0, 1000 };
	struct store_batch b = { .tot = { 7, 2, 1, 0 } };
	struct cid_key k1 = { m, 0x1130, 256, 10, 10, m };
	struct cid_key k2 = { m, 0x1200, 512, 10, 11, NULL };
	int64_t run = 0;

	ok(st != NULL, "fresh database opens: %s", st ? "" : err);
	is_int(query(db, "PRAGMA user_version"), store__schema_version(),
	       "fresh database at the current schema version");
	is_int(store__begin_run(st, &ri, &run), 0, "run created");
	is_int(run, 1, "first run id is 1");
	for (int i = 0; i < 3; i++)
		aggregate__add_cid(a, &k1, "main", false);
	for (int i = 0; i < 2; i++)
		aggregate__add_cid(a, &k2, NULL, false);
	aggregate__add_unresolved(a, NULL, 10, 10, CID_NO_CFI);
	aggregate__add_unresolved(a, m, 10, 10, CID_NO_CFI);
	aggregate__add_thread(a, 10, 11, "worker");
	b.agg = a;
	is_int(store__flush(st, run, &b), 0, "first flush");
	is_int(store__flush(st, run, &b), 0, "second flush adds up");
	is_int(store__end_run(st, run, "finished", 3), 0, "run ended");
	store__close(st);

	is_int(query(db, "SELECT samples FROM v_cids WHERE function = 'main' AND height = 256"),
	       6, "upserted counts add across flushes");
	is_int(query(db, "SELECT count(*) FROM v_cids WHERE function LIKE '%+0x1200'"),
	       1, "unnamed function shown as module+0xADDR");
	is_int(query(db, "SELECT count(*) FROM v_cids WHERE function = 'main' AND program = module"),
	       1, "the program of a CID is stored");
	is_int(query(db, "SELECT count(*) FROM v_cids WHERE program IS NULL"),
	       1, "a CID of an unknown program has a NULL program");
	is_int(query(db, "SELECT sum(samples) FROM v_unresolved WHERE reason = 'no_cfi'"),
	       4, "unresolved samples stored by reason");
	is_int(query(db, "SELECT count(*) FROM v_unresolved WHERE module IS NULL"),
	       1, "unresolved without a module has a NULL module");
	is_int(query(db, "SELECT samples FROM v_runs"), 7, "run totals stored");
	is_int(query(db, "SELECT exit_status FROM v_runs WHERE status = 'finished'"),
	       3, "exit status and status stored");
	is_int(query(db, "SELECT count(*) FROM v_threads WHERE comm = 'worker'"), 1,
	       "thread names stored");
	is_int(query(db, "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check = 'ok'"),
	       1, "integrity_check ok");
	ok(query(db, "SELECT count(*) FROM pragma_journal_mode WHERE journal_mode = 'wal'") == 1,
	   "database in WAL mode");
	aggregate__delete(a);
	module__delete(m);
}

/* Two recorders learning the same path into one database: each writes
 * rows it has not seen, and the second finds the first's rows there (a
 * plain insert would conflict): counts add up, no row is doubled, and
 * the contexts are shared.  The second also learns a branch under the
 * first's outer frame: its middle is looked up and not found, and the
 * node under it, whose parent that flush wrote, is not looked up. */
static void test_paths(void)
{
	char err[512];
	char *db = path_in("paths.db");
	struct module *m = module__open("/proc/self/exe");
	struct path_frame f[3] = {
		{ m, 0x1000, "outer", 0x1010, 300 },
		{ m, 0x2000, "middle", 0x2020, 200 },
		{ m, 0x3000, "inner", 0x3030, 100 } };
	struct path_frame g[3] = { f[0],
		{ m, 0x4000, "other", 0x4040, 180 },
		{ m, 0x5000, "leaf", 0x5050, 90 } };
	struct run_info ri = { "record", "app", 4242, "cpu-clock",
			       "perf::cpu-clock", 0, 0, 1000 };

	for (int k = 0; k < 2; k++) {
		struct store *st = store__open(db, err, sizeof(err));
		struct pathmap *pm = pathmap__new(100);
		struct store_batch b = { .paths = pm };
		int64_t run = 0;

		store__begin_run(st, &ri, &run);
		pathmap__add(pm, m, f, 3, NULL);
		pathmap__add(pm, m, f, 2, NULL);	/* outer -> middle */
		if (k)
			pathmap__add(pm, m, g, 3, NULL);
		is_int(store__flush(st, run, &b), 0, "recorder %d: paths flushed", k + 1);
		pathmap__add(pm, m, f, 3, NULL);
		is_int(store__flush(st, run, &b), 0, "recorder %d: a known path again", k + 1);
		store__close(st);
		pathmap__delete(pm);
	}
	is_int(query(db, "SELECT count(*) FROM path_nodes WHERE parent_id != 0 OR function_id != 0"),
	       5, "three frames, one row each, and the branch's two");
	is_int(query(db, "SELECT count(*) FROM path_nodes n JOIN path_nodes p ON p.id = n.parent_id"
		     " JOIN functions f ON f.id = n.function_id JOIN functions pf ON pf.id = p.function_id"
		     " WHERE f.address = 20480 AND n.self = 1 AND n.height = 90"
		     " AND pf.address = 16384 AND p.total = 1"),
	       1, "the branch's leaf under its new middle, counted once");
	is_int(query(db, "SELECT self FROM path_nodes n JOIN functions f ON f.id = n.function_id"
		     " WHERE f.address = 12288"), 4, "inner's count adds up over both recorders");
	is_int(query(db, "SELECT self FROM path_nodes n JOIN functions f ON f.id = n.function_id"
		     " WHERE f.address = 8192"), 2, "and middle's");
	is_int(query(db, "SELECT count(*) FROM contexts"), 5,
	       "five contexts, the first three shared");
	is_int(query(db, "SELECT sum(samples) FROM run_learned"), 7,
	       "each run's own paths: three samples each, and the branch's");

	/* Unknown callers: of a CID with no height (version 17), and
	 * with one. */
	run_sql(db, "INSERT INTO unknown_frames VALUES (900, 1, 0), (901, 1, 64);"
		"INSERT OR IGNORE INTO contexts (parent_id, function_id) VALUES (0, 1);"
		"INSERT INTO inferred SELECT 1, id, 900, 'unknown', 1, 2 FROM contexts"
		" WHERE parent_id = 0 AND function_id = 1;"
		"INSERT INTO inferred SELECT 1, id, 901, 'unknown', 1, 1 FROM contexts"
		" WHERE parent_id = 0 AND function_id = 1;");
	is_int(query(db, "SELECT samples FROM v_inferred, functions f ON f.id = 1"
		     " WHERE path = '[unknown callers of ' || f.name || '];' || f.name"), 2,
	       "no height: [unknown callers of F]");
	is_int(query(db, "SELECT samples FROM v_inferred, functions f ON f.id = 1"
		     " WHERE path = '[unknown callers of ' || f.name || ' at height 64];'"
		     " || f.name"), 1, "a height: [unknown callers of F at height H]");
	module__delete(m);
}

/* One build under two paths (two modules in memory, one in the
 * database): their nodes are one row each, which takes both's counts
 * and learned samples, whether the rows are new or there. */
static void test_paths_twice(void)
{
	char err[512];
	char *db = path_in("twice.db");
	struct store *st = store__open(db, err, sizeof(err));
	struct module *m1 = module__open("/proc/self/exe");
	struct module *m2 = module__open("/proc/self/exe");
	struct pathmap *pm = pathmap__new(100);
	struct store_batch b = { .paths = pm };
	struct run_info ri = { "record", "app", 4242, "cpu-clock",
			       "perf::cpu-clock", 0, 0, 1000 };
	struct path_frame f1[2] = { { m1, 0x1000, "outer", 0x1010, 300 },
				    { m1, 0x3000, "inner", 0x3030, 100 } };
	struct path_frame f2[2] = { { m2, 0x1000, "outer", 0x1010, 300 },
				    { m2, 0x3000, "inner", 0x3030, 100 } };
	/* self, total and learned samples as SSTTLL */
	const char *inner = "SELECT self * 10000 + total * 100 + (SELECT"
		" sum(samples) FROM run_learned WHERE node_id = n.id) FROM"
		" path_nodes n JOIN functions f ON f.id = n.function_id"
		" WHERE f.address = 12288";
	int64_t run = 0;

	ok(st && m1 && m2 && m1 != m2, "one file opened twice");
	store__begin_run(st, &ri, &run);
	for (int i = 0; i < 5; i++)
		pathmap__add(pm, i < 2 ? m1 : m2, i < 2 ? f1 : f2, 2, NULL);
	is_int(store__flush(st, run, &b), 0, "new rows flushed");
	is_int(query(db, inner), 50505, "one row with both's counts and samples");
	pathmap__add(pm, m1, f1, 2, NULL);
	pathmap__add(pm, m2, f2, 2, NULL);
	is_int(store__flush(st, run, &b), 0, "rows there flushed");
	is_int(query(db, inner), 70707, "counts added to it by both");
	is_int(query(db, "SELECT count(*) FROM path_nodes"), 2, "two rows in all");
	store__close(st);
	pathmap__delete(pm);
	module__delete(m1);
	module__delete(m2);
}

/* The keys of the known CIDs a store reads back into a new set: its
 * count (-1 on error), and whether it holds @key. */
static long long read_known(struct store *st, const struct module *m,
			    uint64_t key, bool *has)
{
	struct known_set *k = known__new();
	size_t n = 0;
	int ret = store__read_known(st, m, k, &n);

	*has = known__has(k, key);
	known__delete(k);
	return ret ? -1 : (long long)n;
}

/* Each program's known CIDs: written by the flushes of a run's maps
 * (a validation's truth writes none), added to, read back, and a
 * crafted row read as none or sorted. */
static void test_known(void)
{
	char err[512];
	char *db = path_in("known.db");
	struct store *st = store__open(db, err, sizeof(err));
	struct module *m = module__open("/proc/self/exe");
	struct module *sh = module__open("/bin/sh");
	struct pathmap *pm = pathmap__new(100);
	struct known_key k1[2] = { { m, 7 }, { m, 9 } }, k2[2] = { { m, 9 },
								  { m, 11 } };
	struct store_batch b = { .paths = pm, .known = k1, .nknown = 2 };
	struct run_info ri = { "record", "app", 4242, "cpu-clock",
			       "perf::cpu-clock", 0, 0, 1000 };
	int64_t run = 0;
	bool has;

	ok(st && m && sh && pm, "database, modules and map");
	is_int(read_known(st, m, 7, &has), 0, "none before a run");
	store__begin_run(st, &ri, &run);
	is_int(store__flush(st, run, &b), 0, "two keys flushed");
	is_int(read_known(st, m, 7, &has), 2, "both read back");
	ok(has, "a key written is there");
	b.known = k2;
	is_int(store__flush(st, run, &b), 0, "two more flushed, one there");
	is_int(read_known(st, m, 11, &has), 3, "three: the keys added up");
	ok(has, "the new one is there");
	is_int(read_known(st, sh, 7, &has), 0, "another program has none");
	ok(!has, "nor its key");
	b.truth = true;
	b.known = (struct known_key[1]){ { m, 13 } };
	b.nknown = 1;
	is_int(store__flush(st, run, &b), 0, "a truth flushed");
	is_int(read_known(st, m, 13, &has), 3, "a truth's keys not written");
	run_sql(db, "UPDATE known_cids SET cids = x'01020304050607'");
	is_int(read_known(st, m, 7, &has), 0,
	       "a blob not a whole number of keys reads as none");
	run_sql(db, "UPDATE known_cids SET cids = x'0900000000000000"
		"0700000000000000" "0900000000000000'");
	is_int(read_known(st, m, 7, &has), 2, "keys out of order sorted, "
	       "each once");
	ok(has, "and found");
	run_sql(db, "UPDATE known_cids SET cids = zeroblob(8 * 1048577)");
	is_int(read_known(st, m, 0, &has), 0, "a blob over KNOWN_MAX keys "
	       "reads as none");
	b.truth = false;
	b.known = k1;
	b.nknown = 2;
	is_int(store__flush(st, run, &b), 0, "a flush over a crafted row");
	is_int(read_known(st, m, 9, &has), 2, "which it replaced");
	store__close(st);
	pathmap__delete(pm);
	module__delete(m);
	module__delete(sh);
}

/* The one .chk file of cache folder @d, its path into @out: 1, 0. */
static int stamp_file(const char *d, char *out, size_t len)
{
	DIR *dp = opendir(d);
	struct dirent *e;
	int n = 0;

	while (dp && (e = readdir(dp)))
		if (strlen(e->d_name) > 4 &&
		    !strcmp(e->d_name + strlen(e->d_name) - 4, ".chk"))
			n += snprintf(out, len, "%s/%s", d, e->d_name) > 0;
	if (dp)
		closedir(dp);
	return n;
}

/* Sets @db's modification time to a second of its own: a file system
 * moves a file's times by ticks of some milliseconds, and the steps of
 * test_checked() come faster. */
static void moved(const char *db)
{
	static time_t t = 1000000000;
	struct timespec ts[2] = { { t, 0 }, { t, 0 } };

	t++;
	utimensat(AT_FDCWD, db, ts, 0);
}

/* Whether a writer's opening of @db found it as one left it whole: 1,
 * 0 (it read it whole), -1 (it did not open). */
static int found_whole(const char *db)
{
	char err[512];
	struct store *st = store__open(db, err, sizeof(err));
	int found = st ? store__found_whole(st) : -1;

	store__close(st);
	return found;
}

/* A writer that finds its database as one left it whole (no error, no
 * WAL, the file's state unchanged) does not read it for damage: a
 * record costs no more for the database's size (schema/checked.c). */
static void test_checked(void)
{
	char err[512], chk[512];
	char *db = path_in("checked.db"), *cdir = path_in("cache");
	struct cfi_cache *c = NULL;
	struct store *st;
	FILE *f;

	ok(!cfi_cache__open(cdir, &c), "a cache");
	store__use_check_cache(c);
	is_int(found_whole(db), 0, "a new database is read whole");
	is_int(stamp_file(cdir, chk, sizeof(chk)), 1, "its state kept");
	is_int(found_whole(db), 1, "found as it was left: not read");
	st = store__open_derived(db, err, sizeof(err));
	ok(st && store__found_whole(st), "a report's store finds it so too");
	run_sql(db, "UPDATE identity SET id = id");
	store__close(st);
	is_int(found_whole(db), 1, "and keeps what it leaves, its writes "
	       "and another's made meanwhile");
	store__use_check_cache(NULL);
	st = store__open(db, err, sizeof(err));
	ok(st && !store__found_whole(st), "without the cache: read whole");
	run_sql(db, "UPDATE identity SET id = id");
	store__close(st);
	moved(db);
	store__use_check_cache(c);
	is_int(found_whole(db), 0, "after a writer that kept none: read whole");
	run_sql(db, "UPDATE identity SET id = id");
	moved(db);
	is_int(found_whole(db), 0, "changed by another writer: read whole");
	moved(db);	/* only its times */
	is_int(found_whole(db), 0, "its times moved: read whole");
	st = store__open(db, err, sizeof(err));
	ok(st && store__found_whole(st), "then left whole again");
	store__set_error(st, "a failed flush");
	store__close(st);
	is_int(found_whole(db), 0, "a writer that met an error forgets the "
	       "state kept, the file in it still");
	is_int(stamp_file(cdir, chk, sizeof(chk)), 1, "one file a database");
	f = fopen(chk, "w");
	ok(f && fputs("crafted", f) >= 0 && !fclose(f), "a crafted state");
	is_int(found_whole(db), 0, "the crafted state: read whole");
	store__use_check_cache(NULL);
	cfi_cache__close(c);
}

/* Retention deletes daemon runs, oldest first, never the kept one nor
 * other kinds: by age, then by size. */
static void test_retain(void)
{
	char err[512];
	char *db = path_in("retain.db");
	struct store *st = store__open(db, err, sizeof(err));
	struct run_info daemon = { "daemon", "icppd daemon", -1, "cpu-clock",
				   "perf::cpu-clock", 0, 0, 99 };
	struct run_info train = { "train", "x", -1, "cpu-clock",
				  "perf::cpu-clock", 0, 0, 99 };
	int64_t runs[4], t, deleted, used;

	ok(st != NULL, "database for retention");
	store__begin_run(st, &train, &t);
	store__end_run(st, t, "finished", 0);
	for (int i = 0; i < 4; i++) {
		store__begin_run(st, &daemon, &runs[i]);
		if (i < 3)
			store__end_run(st, runs[i], "finished", -1);
		/* a build's calls last read when run 2 was the newest, and
		 * another's when run 4 was */
		if (i == 1 || i == 3)
			store__put_build_calls(st, i == 1 ? "b1" : "b3",
					       "blob", 4);
	}
	{
		void *b;
		size_t len;

		is_int(store__build_calls(st, "b3", 4, &b, &len), 1,
		       "a build's calls read back");
		ok(len == 4 && !memcmp(b, "blob", 4), "as they were put");
		free(b);
		is_int(store__build_calls(st, "b3", 3, &b, &len), 0,
		       "over the size asked for: not read");
		is_int(store__build_calls(st, "none", 4, &b, &len), 0,
		       "a build not kept: none");
	}
	/* run 1 ended long ago */
	store__close(st);
	{
		char sql[128];

		snprintf(sql, sizeof(sql), "UPDATE runs SET ended_ns = 1 WHERE id = %lld",
			 (long long)runs[0]);
		run_sql(db, sql);
	}
	st = store__open(db, err, sizeof(err));
	is_int(store__retain(st, runs[3], 1000, 0, &deleted), 0, "retain by age");
	is_int(deleted, 1, "the run that ended at 1 ns is deleted");
	is_int(store__used_bytes(st, &used), 0, "used bytes");
	ok(used > 0, "the database uses %lld bytes", (long long)used);
	is_int(store__retain(st, runs[3], 0, 1, &deleted), 0, "retain by size");
	is_int(deleted, 2, "all older daemon runs deleted to meet 1 byte");
	store__close(st);
	is_int(query(db, "SELECT count(*) FROM runs WHERE kind = 'daemon'"), 1,
	       "the current daemon run stays");
	is_int(query(db, "SELECT count(*) FROM runs WHERE kind = 'train'"), 1,
	       "the training run stays");
	is_int(query(db, "SELECT count(*) FROM build_calls WHERE build_id = 'b1'"),
	       0, "the calls last read by deleted runs go with them");
	is_int(query(db, "SELECT count(*) FROM build_calls WHERE build_id = 'b3'"),
	       1, "those read by the run kept stay");
}

/* The daemon's runs and its one path map: retention takes what a
 * deleted run learned off the maps' counts, deletes the nodes left
 * without samples and the contexts only they used, and the map in
 * memory writes such a node again when it counts samples again. */
static void test_retain_paths(void)
{
	char err[512];
	char *db = path_in("prune.db");
	struct store *st = store__open(db, err, sizeof(err));
	struct module *m = module__open("/proc/self/exe");
	struct path_frame f[3] = {
		{ m, 0x1000, "outer", 0x1010, 300 },
		{ m, 0x2000, "middle", 0x2020, 200 },
		{ m, 0x3000, "inner", 0x3030, 100 } };
	struct run_info daemon = { "daemon", "icppd daemon", -1, "cpu-clock",
				   "perf::cpu-clock", 0, 0, 99 };
	struct run_info train = { "train", "x", -1, "cpu-clock",
				  "perf::cpu-clock", 0, 0, 99 };
	struct pathmap *pm = pathmap__new(100), *tm = pathmap__new(100);
	struct store_batch b = { .paths = pm }, tb = { .paths = tm };
	int64_t a, bb, c, t, deleted, mid;
	const char *inner = "SELECT coalesce(sum(self), 0) FROM path_nodes n"
		" JOIN functions f ON f.id = n.function_id WHERE f.address = 12288";

	ok(st && m && pm && tm, "database, module and maps");
	/* run A: the whole path twice and a fragment (middle -> inner,
	 * its top middle) */
	store__begin_run(st, &daemon, &a);
	pathmap__add(pm, m, f, 3, NULL);
	pathmap__add(pm, m, f, 3, NULL);
	pathmap__add_fragment(pm, m, f + 1, 2, NULL);
	is_int(store__flush(st, a, &b), 0, "run A flushed");
	store__end_run(st, a, "finished", -1);
	usleep(2000);
	mid = clock__real_ns();
	usleep(2000);
	/* training: the path once, and outer alone */
	store__begin_run(st, &train, &t);
	pathmap__add(tm, m, f, 3, NULL);
	pathmap__add(tm, m, f, 1, NULL);
	is_int(store__flush(st, t, &tb), 0, "training flushed");
	store__end_run(st, t, "finished", 0);
	/* run B: outer -> middle once */
	store__begin_run(st, &daemon, &bb);
	pathmap__add(pm, m, f, 2, NULL);
	is_int(store__flush(st, bb, &b), 0, "run B flushed");
	store__end_run(st, bb, "finished", -1);
	store__begin_run(st, &daemon, &c);
	is_int(query(db, "SELECT count(*) FROM path_nodes"), 5,
	       "before: 3 nodes of the path, 2 of the fragment");
	is_int(query(db, inner), 3 + 1, "inner: A's 2, training's 1, the fragment's 1");
	/* a report's composed contexts: two under outer's, the inner one
	 * named by A's inference; one named by B's */
	{
		char sql[1280];

		snprintf(sql, sizeof(sql),
			 "INSERT INTO contexts (parent_id, function_id) SELECT c.id, 998"
			 " FROM contexts c JOIN functions f ON f.id = c.function_id"
			 " WHERE c.parent_id = 0 AND f.address = 4096;"
			 "INSERT INTO contexts (parent_id, function_id) SELECT id, 999"
			 " FROM contexts WHERE function_id = 998;"
			 "INSERT INTO contexts (parent_id, function_id) SELECT c.id, 997"
			 " FROM contexts c JOIN functions f ON f.id = c.function_id"
			 " WHERE c.parent_id = 0 AND f.address = 4096;"
			 "INSERT INTO explained (run_id, program_id, function_id, height,"
			 " context_id, unknown_id, how, exact_depth, share)"
			 " SELECT %lld, 1, 999, 8, id, 0, 'searched', 1, 1"
			 " FROM contexts WHERE function_id = 999;"
			 "INSERT INTO explained (run_id, program_id, function_id, height,"
			 " context_id, unknown_id, how, exact_depth, share)"
			 " SELECT %lld, 1, 997, 8, id, 0, 'searched', 1, 1"
			 " FROM contexts WHERE function_id = 997;", (long long)a, (long long)bb);
		run_sql(db, sql);
	}
	is_int(query(db, "SELECT count(*) FROM contexts"), 5 + 3, "eight contexts");

	run_sql(db, "INSERT INTO known_cids VALUES (1, x'0100000000000000')");
	is_int(store__retain(st, c, mid, 0, &deleted), 0, "retain by age");
	is_int(query(db, "SELECT count(*) FROM known_cids"), 0,
	       "the known CIDs, which may name deleted nodes, go too");
	is_int(deleted, 1, "run A deleted");
	is_int(query(db, inner), 1, "inner: training's sample left");
	is_int(query(db, "SELECT total FROM path_nodes n JOIN functions f"
		     " ON f.id = n.function_id WHERE f.address = 4096"), 3,
	       "outer's total: training's 2 and B's 1");
	is_int(query(db, "SELECT count(*) FROM path_nodes n JOIN path_maps m"
		     " ON m.id = n.map_id WHERE m.run_id = -1"),
	       0, "the fragment, A's alone, is gone");
	is_int(query(db, "SELECT count(*) FROM contexts WHERE function_id < 997"), 3,
	       "the fragment's two contexts with it; the path's three stay");
	is_int(query(db, "SELECT count(*) FROM contexts WHERE function_id >= 997"), 1,
	       "A's composed contexts with it, the one above too; B's stays");
	is_int(query(db, "SELECT count(*) FROM contexts c WHERE c.parent_id != 0"
		     " AND c.parent_id NOT IN (SELECT id FROM contexts)"), 0,
	       "no context lost its parent");

	/* the map in memory: the fragment counts again and is written
	 * again; the path's rows still take its counts */
	pathmap__add_fragment(pm, m, f + 1, 2, NULL);
	pathmap__add(pm, m, f, 3, NULL);
	is_int(store__flush(st, c, &b), 0, "run C flushed after retention");
	is_int(query(db, "SELECT count(*) FROM path_nodes n JOIN path_maps m"
		     " ON m.id = n.map_id WHERE m.run_id = -1"),
	       2, "the fragment written again");
	is_int(query(db, inner), 3, "inner: training's, C's and the fragment's");
	is_int(query(db, "SELECT count(*) FROM path_nodes WHERE parent_id != 0"
		     " AND parent_id NOT IN (SELECT id FROM path_nodes)"), 0,
	       "no node lost its parent");
	store__end_run(st, c, "finished", -1);

	/* every daemon run gone: training's paths alone */
	is_int(store__retain(st, 0, clock__real_ns() + 1, 0, &deleted), 0,
	       "retain every daemon run");
	is_int(deleted, 2, "runs B and C deleted");
	is_int(query(db, "SELECT count(*) FROM path_nodes WHERE parent_id != 0"
		     " OR function_id != 0"), 3, "training's three nodes stay");
	is_int(query(db, "SELECT count(*) FROM path_nodes WHERE total = 0"), 0,
	       "none without samples");
	is_int(query(db, "SELECT count(*) FROM contexts"), 3,
	       "the contexts of training's nodes alone");
	/* a crafted count: the fragment's inner node counting more than
	 * its top; the top, left without samples of its own, stays */
	store__begin_run(st, &daemon, &c);
	pathmap__add_fragment(pm, m, f + 1, 2, NULL);
	is_int(store__flush(st, c, &b), 0, "run D flushed");
	store__end_run(st, c, "finished", -1);
	run_sql(db, "UPDATE path_nodes SET total = total + 5 WHERE id ="
		" (SELECT max(id) FROM path_nodes)");
	is_int(store__retain(st, 0, clock__real_ns() + 1, 0, &deleted), 0,
	       "retain run D");
	is_int(query(db, "SELECT count(*) FROM path_nodes WHERE parent_id != 0"
		     " AND parent_id NOT IN (SELECT id FROM path_nodes)"), 0,
	       "a crafted count orphans no node");
	is_int(query(db, "SELECT count(*) FROM path_nodes"), 3 + 2,
	       "the fragment stays, its top without samples");
	is_int(query(db, "SELECT count(*) FROM path_nodes n JOIN functions f"
		     " ON f.id = n.function_id WHERE (f.address = 4096 AND self = 1"
		     " AND total = 2) OR (f.address = 8192 AND self = 0 AND total = 1)"
		     " OR (f.address = 12288 AND self = 1 AND total = 1)"), 3,
	       "with training's counts: outer 1/2, middle 0/1, inner 1/1");
	store__close(st);
	pathmap__delete(pm);
	pathmap__delete(tm);
	module__delete(m);
}

static int stop_with(void *arg, const struct store_module *m)
{
	int *calls = arg;

	(void)m;
	++*calls;
	return calls[1];	/* what the test asks the callback to return */
}

static bool all_dead(void *arg, const char *host, int64_t pid)
{
	(void)arg;
	(void)host;
	(void)pid;
	return false;
}

/* Walks return 0 when done, a callback's positive stop as it is, and -1
 * with "what: why" and store__stopped() for a callback's -errno: never
 * the errno itself, which -1 (-EPERM) would make ambiguous. */
static void test_walks(void)
{
	char err[512];
	char *db = path_in("walks.db");
	struct store *st = store__open(db, err, sizeof(err));
	struct run_info ri = { "record", "x", -1, "cpu-clock",
			       "perf::cpu-clock", 0, 0, 99 };
	int calls[2];
	int64_t run, n = -1;

	ok(st != NULL, "database for walks");
	store__close(st);
	run_sql(db, "INSERT INTO modules (path, build_id) VALUES ('/a', 'aa'),"
		" ('/b', 'bb')");
	st = store__open(db, err, sizeof(err));
	calls[0] = 0;
	calls[1] = 0;
	is_int(store__modules(st, stop_with, calls), 0, "a full walk: 0");
	is_int(calls[0], 2, "both modules seen");
	calls[0] = 0;
	calls[1] = 7;
	is_int(store__modules(st, stop_with, calls), 7,
	       "a positive stop is returned as it is");
	is_int(calls[0], 1, "and stops at the first row");
	calls[1] = -ENOMEM;
	is_int(store__modules(st, stop_with, calls), -1,
	       "a callback's -ENOMEM: the walk fails with -1");
	is_int(store__stopped(st), -ENOMEM, "store__stopped() has the errno");
	ok(strstr(store__error(st), "reading modules: Cannot allocate memory"),
	   "and the error says what and why: %s", store__error(st));
	calls[1] = -EPERM;
	is_int(store__modules(st, stop_with, calls), -1, "-EPERM: also -1");
	is_int(store__stopped(st), -EPERM, "told apart by store__stopped()");
	calls[1] = 0;
	is_int(store__modules(st, stop_with, calls), 0, "walks again");
	is_int(store__stopped(st), 0, "a later walk clears the stop");

	is_int(store__begin_run(st, &ri, &run), 0, "a run to sweep");
	is_int(store__crash_runs(st, all_dead, NULL, &n), 0, "crash sweep");
	is_int(n, 1, "one run's owner is gone");
	store__close(st);
	is_int(query(db, "SELECT count(*) FROM runs WHERE status ="
		     " 'interrupted' AND crashed = 1"), 1,
	       "it is marked interrupted and crashed");
	is_int(query(db, "SELECT count(*) FROM runs WHERE target_pid IS NULL"
		     " AND period IS NULL AND frequency = 99"), 1,
	       "unset numbers are stored as NULL, set ones as given");
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	test_migrations();
	test_one_pass();
	test_v3();
	test_bad_files();
	test_crafted();
	test_flush();
	test_paths();
	test_paths_twice();
	test_known();
	test_checked();
	test_retain();
	test_retain_paths();
	test_walks();
	if (tmpdir_remove(dir))
		return 1;
	return tap_done();
}
