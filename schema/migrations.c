/*
 * migrations.c - the schema, as the list of steps that build it.
 *
 * Step i brings PRAGMA user_version from i to i + 1.  Never edit a step
 * that has shipped: add one.  Tables may change between versions; the
 * v_* views are the stable interface and are documented in
 * man/icppd-schema.5.
 *
 * Why these tables:
 * - cid_samples is keyed by (run, pid, tid, function, height) WITHOUT
 *   ROWID: the recorder upserts aggregated counts, so a flush touches one
 *   b-tree entry per distinct CID, and the primary key is the index
 *   queries use.
 * - functions is shared by all runs (module + start address); its name
 *   column is the display name (symbol, or "module+0xADDR" for stripped
 *   code) so views need no string work.
 * - unresolved_samples keeps every sample that got no CID, by reason,
 *   so the totals always add up: samples = cids + unresolved.
 */
#include "schema/migrations.h"

const struct store_migration icppd_migrations[] = {
	{ /* 0 -> 1: the measurement run */
	"CREATE TABLE runs ("
	"  id INTEGER PRIMARY KEY,"
	"  kind TEXT NOT NULL,"
	"  command TEXT NOT NULL,"
	"  target_pid INTEGER,"
	"  event TEXT NOT NULL,"
	"  event_canonical TEXT NOT NULL,"
	"  precise INTEGER NOT NULL,"
	"  period INTEGER,"
	"  frequency INTEGER,"
	"  started_ns INTEGER NOT NULL,"
	"  ended_ns INTEGER,"
	"  status TEXT NOT NULL CHECK (status IN"
	"    ('running', 'finished', 'interrupted', 'failed')),"
	"  samples INTEGER NOT NULL DEFAULT 0,"
	"  unresolved INTEGER NOT NULL DEFAULT 0,"
	"  lost INTEGER NOT NULL DEFAULT 0,"
	"  throttled INTEGER NOT NULL DEFAULT 0,"
	"  exit_status INTEGER,"
	"  hostname TEXT,"
	"  icppd_version TEXT);"
	"CREATE TABLE modules ("
	"  id INTEGER PRIMARY KEY,"
	"  path TEXT NOT NULL,"
	"  build_id TEXT NOT NULL,"
	"  UNIQUE (path, build_id));"
	"CREATE TABLE functions ("
	"  id INTEGER PRIMARY KEY,"
	"  module_id INTEGER NOT NULL REFERENCES modules(id),"
	"  address INTEGER NOT NULL,"
	"  name TEXT NOT NULL,"
	"  symbol TEXT,"
	"  UNIQUE (module_id, address));"
	"CREATE TABLE threads ("
	"  run_id INTEGER NOT NULL REFERENCES runs(id),"
	"  pid INTEGER NOT NULL,"
	"  tid INTEGER NOT NULL,"
	"  comm TEXT NOT NULL,"
	"  PRIMARY KEY (run_id, pid, tid)) WITHOUT ROWID;"
	"CREATE TABLE cid_samples ("
	"  run_id INTEGER NOT NULL REFERENCES runs(id),"
	"  pid INTEGER NOT NULL,"
	"  tid INTEGER NOT NULL,"
	"  function_id INTEGER NOT NULL REFERENCES functions(id),"
	"  height INTEGER NOT NULL,"
	"  samples INTEGER NOT NULL,"
	"  PRIMARY KEY (run_id, pid, tid, function_id, height)) WITHOUT ROWID;"
	"CREATE TABLE unresolved_samples ("
	"  run_id INTEGER NOT NULL REFERENCES runs(id),"
	"  pid INTEGER NOT NULL,"
	"  tid INTEGER NOT NULL,"
	"  reason TEXT NOT NULL,"
	"  module_id INTEGER NOT NULL,"	/* 0: the pc had no module */
	"  samples INTEGER NOT NULL,"
	"  PRIMARY KEY (run_id, pid, tid, reason, module_id)) WITHOUT ROWID;"
	"CREATE VIEW v_runs AS SELECT"
	"  id AS run_id, kind, command, target_pid, event, event_canonical,"
	"  precise, period, frequency,"
	"  strftime('%Y-%m-%dT%H:%M:%fZ', started_ns / 1e9, 'unixepoch')"
	"    AS started,"
	"  strftime('%Y-%m-%dT%H:%M:%fZ', ended_ns / 1e9, 'unixepoch')"
	"    AS ended,"
	"  (ended_ns - started_ns) / 1e9 AS duration_s,"
	"  status, samples, samples - unresolved AS resolved, unresolved,"
	"  lost, throttled, exit_status, hostname, icppd_version"
	"  FROM runs;"
	"CREATE VIEW v_cids AS SELECT"
	"  c.run_id, c.pid, c.tid, m.path AS module, m.build_id,"
	"  f.name AS function, f.address, c.height, c.samples"
	"  FROM cid_samples c"
	"  JOIN functions f ON f.id = c.function_id"
	"  JOIN modules m ON m.id = f.module_id;"
	"CREATE VIEW v_unresolved AS SELECT"
	"  u.run_id, u.pid, u.tid, u.reason, m.path AS module, u.samples"
	"  FROM unresolved_samples u LEFT JOIN modules m ON m.id = u.module_id;"
	"CREATE VIEW v_threads AS SELECT run_id, pid, tid, comm FROM threads;"
	},
};

const int icppd_nr_migrations =
	(int)(sizeof(icppd_migrations) / sizeof(icppd_migrations[0]));
