/*
 * profile_store.h - a small store written with SQL for the tests of
 * profile/ (no perf needed): a program main -> {a, b} -> leaf whose
 * path map explains two CIDs of leaf, and two runs of it.
 */
#ifndef ICPPD_TESTS_PROFILE_STORE_H
#define ICPPD_TESTS_PROFILE_STORE_H

#include <sqlite3.h>
#include <stdio.h>

#include "schema/store.h"

/* The program: functions 11 main, 12 a, 13 b, 14 leaf; leaf called
 * from a (return address 0x2010, height 96) and from b (0x3010, 128).
 * Run 1: 30 and 10 samples there; run 2: 5 and 15, and 4 at height 200,
 * which no path takes. */
static const char *const profile_store_rows =
	"INSERT INTO modules (id, path, build_id) VALUES"
	"  (1, '/nonexistent/icppd-test/prog', 'b1');"
	"INSERT INTO functions VALUES (11, 1, 4096, 'main', 'main'),"
	"  (12, 1, 8192, 'a', 'a'), (13, 1, 12288, 'b', 'b'),"
	"  (14, 1, 16384, 'leaf', 'leaf');"
	"INSERT INTO path_maps (id, program_id, run_id) VALUES (1, 1, 0);"
	"INSERT INTO contexts VALUES (1, 0, 11), (2, 1, 12), (3, 1, 13),"
	"  (4, 2, 14), (5, 3, 14);"
	"INSERT INTO path_nodes VALUES"
	"  (1, 1, 0, 11, 1, 0, 16, 1, 0, 2),"
	"  (2, 1, 1, 12, 2, 4112, 48, 2, 0, 1),"
	"  (3, 1, 1, 13, 3, 4128, 80, 2, 0, 1),"
	"  (4, 1, 2, 14, 4, 8208, 96, 3, 1, 1),"
	"  (5, 1, 3, 14, 5, 12304, 128, 3, 1, 1);"
	"INSERT INTO runs (id, kind, command, event, event_canonical, precise,"
	"  frequency, started_ns, ended_ns, status, samples) VALUES"
	"  (1, 'record', 'prog', 'cpu-clock', 'perf::cpu-clock', 0, 1000,"
	"   1000000000, 2000000000, 'finished', 40),"
	"  (2, 'record', 'prog', 'cpu-clock', 'perf::cpu-clock', 0, 1000,"
	"   3000000000, 4000000000, 'finished', 24);"
	"INSERT INTO threads VALUES (1, 100, 100, 'prog'), (2, 200, 200, 'prog');"
	"INSERT INTO cid_samples VALUES (1, 100, 100, 1, 14, 96, 30, 0),"
	"  (1, 100, 100, 1, 14, 128, 10, 0), (2, 200, 200, 1, 14, 96, 5, 0),"
	"  (2, 200, 200, 1, 14, 128, 15, 0), (2, 200, 200, 1, 14, 200, 4, 0);";

/* Creates database @db (icppd's schema) holding those rows, and an
 * inlined row: helper inlined in a at 0x200f, its call of leaf.
 * 0, or -1 after printing why. */
static inline int profile_store__create(const char *db)
{
	char err[256], *msg = NULL;
	struct store *st = store__open(db, err, sizeof(err));
	sqlite3 *h;

	if (!st) {
		fprintf(stderr, "# %s\n", err);
		return -1;
	}
	store__close(st);
	if (sqlite3_open(db, &h) ||
	    sqlite3_exec(h, profile_store_rows, NULL, NULL, &msg) ||
	    sqlite3_exec(h, "INSERT INTO inlined VALUES ('b1', 8207, 1,"
			 " 'helper' || char(9) || 'x.c' || char(9) || '10'"
			 " || char(10) || char(9) || 'x.c' || char(9) || '20')",
			 NULL, NULL, &msg)) {
		fprintf(stderr, "# %s\n", msg ? msg : sqlite3_errmsg(h));
		sqlite3_free(msg);
		sqlite3_close(h);
		return -1;
	}
	sqlite3_close(h);
	return 0;
}

#endif
