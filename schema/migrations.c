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
 * - path_nodes is the path map: a calling context tree per program
 *   (path_maps), one row per (parent, function, call site, height).
 *   Every row is a whole path (follow parent_id to 0) and a candidate
 *   for the CID (function, height) of its frame, hence the index on
 *   (map, function, height): CID -> candidates is one index range.
 * - contexts names each sequence of functions from the outermost frame
 *   once, for all maps: the calling context a report shows.  Nodes that
 *   differ only in call sites or in the heights above them share one
 *   context, so "how many contexts can this CID be" is COUNT(DISTINCT
 *   context_id), and whether a validation sample's true path is among
 *   the candidates is an equality of context ids, with no recursion.
 *   Training runs of one executable merge into its map (run_id 0);
 *   a validation run keeps the true paths of its samples in a map of
 *   its own (run_id = the run), scored against the training map.
 *   Modules are matched by build-id, so a rebuilt executable is a new
 *   module and gets a new map, while the same build at another path
 *   shares the old one.
 * - run_counters holds per-run figures that are not sample counts by
 *   CID (unwinding outcomes, validation totals), as name/value pairs so
 *   a new figure needs no migration.
 * - validation holds a validation run's scores grouped by program,
 *   function, outcome and number of candidates: every table icppd
 *   validate prints is a GROUP BY over it.
 * - accuracy (version 9) scores what a report of a validation run
 *   shows: each true leaf's CID inferred as a report would (training
 *   map, learned paths, the binaries' direct calls), grouped by
 *   program, function, outcome (precise, ambiguous, searched, unknown)
 *   and number of solutions, with the weight the inference gave the
 *   true context (correct: fractional, as an ambiguous CID's samples are
 *   apportioned).  validation keeps the path map's own score (the ICPP
 *   paper's outcomes).  Reports read the rates per outcome of the
 *   latest validation of a build to state their expected correctness.
 * - runs.user_ns and system_ns (version 10) are the CPU time of the
 *   command icppd ran (its rusage, with the descendants it waited for),
 *   or of an attached process while attached (/proc/PID/stat):
 *   samples see user time only, so the kernel's share says what a
 *   profile without --kernel cannot show.  With --kernel (runs.kernel)
 *   samples in the kernel count too, under the CID of the user code
 *   that entered it (its user registers), and cid_samples.kernel_samples
 *   says how many of a CID's samples they are.
 * - cid_samples gains program_id in version 3 (rebuilt, as a primary key
 *   cannot change in place): the executable a process ran picks the path
 *   map that explains its CIDs, also for CIDs in shared libraries and
 *   across an exec.  0: unknown (runs recorded before version 3; version
 *   6 fills in the program where one trained program explains it).
 * - inferred is a run's inferred calling context tree, as the contexts
 *   it ends in with their (fractional) sample weights.  exact_depth says
 *   how many frames from the leaf are certain: all of them for a precise
 *   CID, the suffix the candidates share for an ambiguous one (the rest
 *   is apportioned by training frequency), 1 for a path the call-graph
 *   search found.  A sample the engine could not explain ends in the
 *   context of its function alone, below a pseudo frame "[unknown
 *   callers of F at height H]" (unknown_frames; "[unknown callers of
 *   F]" on a stack with no fixed base, version 17).  inferences stamps each
 *   run's rows with the training samples and run samples they were
 *   computed from, and (version 8) the binaries' direct calls they
 *   used, so a report stores them again only when one of these changed.
 * - arr_builds is one rewritten binary (modules row of its new build-id)
 *   with the original it came from and what the search predicted;
 *   arr_functions the frame, pad and (when it cannot be padded) reason
 *   of every function of the original's path map; arr_inseparable the
 *   colliding contexts no pad can separate.  The rewritten build gets a
 *   training map of its own (path_maps run 0) with the predicted
 *   heights, so record, validate and report work on it at once.
 */
#include "schema/migrations.h"

/* v_runs as version 5 made it; version 7 adds the learning columns
 * (V_RUNS_LEARN), version 10 the CPU time. */
#define V_RUNS_LEARN \
	"  (SELECT value FROM run_counters WHERE run_id = runs.id" \
	"    AND name = 'learn.samples') AS learn_samples," \
	"  (SELECT value FROM run_counters WHERE run_id = runs.id" \
	"    AND name = 'learn.paths') AS learned_paths," \
	"  (SELECT value FROM run_counters WHERE run_id = runs.id" \
	"    AND name = 'learn.unknown_cids') AS unexplained_when_seen"
#define V_RUNS_SINCE_5 \
	"CREATE VIEW v_runs AS SELECT" \
	"  id AS run_id, kind, command, target_pid, event, event_canonical," \
	"  precise, period, frequency," \
	"  strftime('%Y-%m-%dT%H:%M:%fZ', started_ns / 1e9, 'unixepoch')" \
	"    AS started," \
	"  strftime('%Y-%m-%dT%H:%M:%fZ', ended_ns / 1e9, 'unixepoch')" \
	"    AS ended," \
	"  (ended_ns - started_ns) / 1e9 AS duration_s," \
	"  CASE WHEN crashed THEN 'crashed' ELSE status END AS status," \
	"  samples, samples - unresolved AS resolved, unresolved," \
	"  lost, throttled, exit_status, hostname, icppd_version"

/* v_inferred_frames, whose unknown frame names its height as @height
 * (an SQL expression) says: one row per inferred row and frame, walking
 * from the leaf up; level 0 is the leaf; an unknown frame is the last
 * level. */
#define V_INFERRED_FRAMES(height) \
	"CREATE VIEW v_inferred_frames AS WITH RECURSIVE up(run_id, leaf_ctx," \
	"  unknown_id, how, exact_depth, samples, ctx, level, path) AS (" \
	"  SELECT i.run_id, i.context_id, i.unknown_id, i.how, i.exact_depth," \
	"    i.samples, i.context_id, 0, f.name" \
	"    FROM inferred i JOIN contexts c ON c.id = i.context_id" \
	"    JOIN functions f ON f.id = c.function_id" \
	"  UNION ALL" \
	"  SELECT up.run_id, up.leaf_ctx, up.unknown_id, up.how, up.exact_depth," \
	"    up.samples, c.parent_id, up.level + 1," \
	"    CASE WHEN c.parent_id = 0 THEN '[unknown callers of ' || lf.name" \
	"      || " height " || ']' ELSE pf.name END" \
	"      || ';' || up.path" \
	"    FROM up JOIN contexts c ON c.id = up.ctx" \
	"    LEFT JOIN contexts p ON p.id = c.parent_id" \
	"    LEFT JOIN functions pf ON pf.id = p.function_id" \
	"    LEFT JOIN unknown_frames u ON u.id = up.unknown_id" \
	"    LEFT JOIN functions lf ON lf.id = u.function_id" \
	"    WHERE c.parent_id != 0 OR up.unknown_id != 0)" \
	"  SELECT * FROM up;"

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
	{ /* 1 -> 2: the training run, the path map and validation */
	"CREATE INDEX modules_build_id ON modules (build_id);"
	"CREATE TABLE path_maps ("
	"  id INTEGER PRIMARY KEY,"
	"  program_id INTEGER NOT NULL REFERENCES modules(id),"
	"  run_id INTEGER NOT NULL,"	/* 0: training; else a validation run */
	"  UNIQUE (program_id, run_id));"
	"CREATE TABLE contexts ("
	"  id INTEGER PRIMARY KEY,"
	"  parent_id INTEGER NOT NULL,"	/* 0: an outermost frame */
	"  function_id INTEGER NOT NULL REFERENCES functions(id),"
	"  UNIQUE (parent_id, function_id));"
	"CREATE TABLE path_nodes ("
	"  id INTEGER PRIMARY KEY,"
	"  map_id INTEGER NOT NULL REFERENCES path_maps(id),"
	"  parent_id INTEGER NOT NULL,"	/* 0: an outermost frame */
	"  function_id INTEGER NOT NULL REFERENCES functions(id),"
	"  context_id INTEGER NOT NULL REFERENCES contexts(id),"
	"  call_site INTEGER NOT NULL,"	/* return address in the parent */
	"  height INTEGER NOT NULL,"
	"  depth INTEGER NOT NULL,"
	"  self INTEGER NOT NULL,"
	"  total INTEGER NOT NULL,"
	"  UNIQUE (map_id, parent_id, function_id, call_site, height));"
	"CREATE INDEX path_nodes_cid ON path_nodes"
	"  (map_id, function_id, height, context_id);"
	"CREATE TABLE run_counters ("
	"  run_id INTEGER NOT NULL REFERENCES runs(id),"
	"  name TEXT NOT NULL,"
	"  value INTEGER NOT NULL,"
	"  PRIMARY KEY (run_id, name)) WITHOUT ROWID;"
	"CREATE TABLE validation ("
	"  run_id INTEGER NOT NULL REFERENCES runs(id),"
	"  program_id INTEGER NOT NULL REFERENCES modules(id),"
	"  function_id INTEGER NOT NULL REFERENCES functions(id),"
	"  outcome TEXT NOT NULL CHECK (outcome IN"
	"    ('precise', 'ambiguous', 'incorrect', 'missing')),"
	"  candidates INTEGER NOT NULL,"
	"  samples INTEGER NOT NULL,"
	"  PRIMARY KEY (run_id, program_id, function_id, outcome, candidates))"
	"  WITHOUT ROWID;"
	"CREATE VIEW v_path_maps AS SELECT"
	"  pm.id AS map_id, m.path AS program, m.build_id,"
	"  CASE pm.run_id WHEN 0 THEN 'train' ELSE 'truth' END AS kind,"
	"  NULLIF(pm.run_id, 0) AS run_id,"
	"  (SELECT COUNT(*) FROM path_nodes n WHERE n.map_id = pm.id) AS paths,"
	"  (SELECT COUNT(*) FROM (SELECT 1 FROM path_nodes n"
	"    WHERE n.map_id = pm.id GROUP BY function_id, height)) AS cids,"
	"  (SELECT COUNT(*) FROM (SELECT 1 FROM path_nodes n"
	"    WHERE n.map_id = pm.id GROUP BY function_id, height"
	"    HAVING COUNT(DISTINCT context_id) > 1)) AS ambiguous_cids,"
	"  (SELECT COALESCE(SUM(self), 0) FROM path_nodes n"
	"    WHERE n.map_id = pm.id) AS samples"
	"  FROM path_maps pm JOIN modules m ON m.id = pm.program_id;"
	"CREATE VIEW v_paths AS WITH RECURSIVE p(id, path) AS ("
	"  SELECT n.id, f.name FROM path_nodes n"
	"    JOIN functions f ON f.id = n.function_id WHERE n.parent_id = 0"
	"  UNION ALL"
	"  SELECT n.id, p.path || ';' || f.name FROM path_nodes n"
	"    JOIN p ON n.parent_id = p.id JOIN functions f ON f.id = n.function_id)"
	"  SELECT n.id AS node_id, n.map_id, pr.path AS program,"
	"  NULLIF(n.parent_id, 0) AS parent_id, n.context_id, n.depth,"
	"  m.path AS module,"
	"  f.name AS function, n.call_site, n.height,"
	"  n.self AS self_samples, n.total AS total_samples, p.path"
	"  FROM path_nodes n JOIN p ON p.id = n.id"
	"  JOIN functions f ON f.id = n.function_id"
	"  JOIN modules m ON m.id = f.module_id"
	"  JOIN path_maps pm ON pm.id = n.map_id"
	"  JOIN modules pr ON pr.id = pm.program_id;"
	"CREATE VIEW v_path_cids AS SELECT"
	"  n.map_id, m.path AS module, f.name AS function, n.height,"
	"  COUNT(DISTINCT n.context_id) AS contexts, COUNT(*) AS paths,"
	"  SUM(n.self) AS self_samples"
	"  FROM path_nodes n JOIN functions f ON f.id = n.function_id"
	"  JOIN modules m ON m.id = f.module_id"
	"  GROUP BY n.map_id, n.function_id, n.height;"
	"CREATE VIEW v_run_counters AS SELECT run_id, name, value"
	"  FROM run_counters;"
	"CREATE VIEW v_validation AS SELECT"
	"  v.run_id, pr.path AS program, m.path AS module, f.name AS function,"
	"  v.outcome, v.candidates, v.samples"
	"  FROM validation v JOIN functions f ON f.id = v.function_id"
	"  JOIN modules m ON m.id = f.module_id"
	"  JOIN modules pr ON pr.id = v.program_id;"
	"CREATE VIEW v_validation_summary AS SELECT"
	"  run_id, SUM(samples) AS samples,"
	"  1.0 * SUM(samples * (outcome = 'precise')) / SUM(samples) AS precise,"
	"  1.0 * SUM(samples * (outcome = 'ambiguous')) / SUM(samples)"
	"    AS ambiguous,"
	"  1.0 * SUM(samples * (outcome = 'incorrect')) / SUM(samples)"
	"    AS incorrect,"
	"  1.0 * SUM(samples * (outcome = 'missing')) / SUM(samples) AS missing"
	"  FROM validation GROUP BY run_id;"
	},
	{ /* 2 -> 3: the program of each CID, inferred contexts, k-CCF */
	"CREATE TABLE cid_samples3 ("
	"  run_id INTEGER NOT NULL REFERENCES runs(id),"
	"  pid INTEGER NOT NULL,"
	"  tid INTEGER NOT NULL,"
	"  program_id INTEGER NOT NULL,"	/* modules(id); 0: unknown */
	"  function_id INTEGER NOT NULL REFERENCES functions(id),"
	"  height INTEGER NOT NULL,"
	"  samples INTEGER NOT NULL,"
	"  PRIMARY KEY (run_id, pid, tid, program_id, function_id, height))"
	"  WITHOUT ROWID;"
	"INSERT INTO cid_samples3 SELECT run_id, pid, tid, 0, function_id,"
	"  height, samples FROM cid_samples;"
	"DROP VIEW v_cids;"
	"DROP TABLE cid_samples;"
	"ALTER TABLE cid_samples3 RENAME TO cid_samples;"
	"CREATE VIEW v_cids AS SELECT"
	"  c.run_id, c.pid, c.tid, m.path AS module, m.build_id,"
	"  f.name AS function, f.address, c.height, c.samples,"
	"  pr.path AS program"
	"  FROM cid_samples c"
	"  JOIN functions f ON f.id = c.function_id"
	"  JOIN modules m ON m.id = f.module_id"
	"  LEFT JOIN modules pr ON pr.id = c.program_id;"
	"CREATE TABLE inferences ("
	"  run_id INTEGER PRIMARY KEY REFERENCES runs(id),"
	"  map_samples INTEGER NOT NULL,"
	"  run_samples INTEGER NOT NULL,"
	"  created_ns INTEGER NOT NULL);"
	"CREATE TABLE unknown_frames ("
	"  id INTEGER PRIMARY KEY,"
	"  function_id INTEGER NOT NULL REFERENCES functions(id),"
	"  height INTEGER NOT NULL,"
	"  UNIQUE (function_id, height));"
	"CREATE TABLE inferred ("
	"  run_id INTEGER NOT NULL REFERENCES runs(id),"
	"  context_id INTEGER NOT NULL REFERENCES contexts(id),"
	"  unknown_id INTEGER NOT NULL,"	/* unknown_frames(id); 0: none */
	"  how TEXT NOT NULL CHECK (how IN"
	"    ('precise', 'ambiguous', 'searched', 'unknown')),"
	"  exact_depth INTEGER NOT NULL,"
	"  samples REAL NOT NULL,"
	"  PRIMARY KEY (run_id, context_id, unknown_id, how, exact_depth))"
	"  WITHOUT ROWID;"
	V_INFERRED_FRAMES("' at height ' || u.height")
	"CREATE VIEW v_inferred AS SELECT"
	"  fr.run_id, f.name AS function, fr.path, fr.level + 1 AS depth,"
	"  fr.how, fr.exact_depth, fr.samples"
	"  FROM v_inferred_frames fr"
	"  JOIN contexts lc ON lc.id = fr.leaf_ctx"
	"  JOIN functions f ON f.id = lc.function_id"
	"  LEFT JOIN contexts c ON c.id = fr.ctx"
	"  WHERE fr.ctx = 0 OR fr.unknown_id = 0 AND c.parent_id = 0;"
	"CREATE VIEW v_kccf AS SELECT"
	"  fr.run_id, f.name AS function, fr.level, fr.path AS context,"
	"  SUM(fr.samples) AS samples,"
	"  SUM(CASE WHEN fr.exact_depth > fr.level THEN fr.samples ELSE 0 END)"
	"    AS certain"
	"  FROM v_inferred_frames fr"
	"  JOIN contexts c ON c.id = fr.leaf_ctx"
	"  JOIN functions f ON f.id = c.function_id"
	"  GROUP BY fr.run_id, f.name, fr.level, fr.path;"
	"CREATE VIEW v_inference_summary AS SELECT"
	"  run_id, SUM(samples) AS samples,"
	"  SUM(samples * (how = 'precise')) / SUM(samples) AS precise,"
	"  SUM(samples * (how = 'ambiguous')) / SUM(samples) AS ambiguous,"
	"  SUM(samples * (how = 'searched')) / SUM(samples) AS searched,"
	"  SUM(samples * (how = 'unknown')) / SUM(samples) AS unknown"
	"  FROM inferred GROUP BY run_id;"
	},
	{ /* 3 -> 4: activation record resizing */
	"CREATE TABLE arr_builds ("
	"  module_id INTEGER PRIMARY KEY REFERENCES modules(id),"
	"  original_id INTEGER NOT NULL REFERENCES modules(id),"
	"  seed INTEGER NOT NULL,"
	"  max_growth REAL NOT NULL,"
	"  samples REAL NOT NULL,"
	"  precise_before REAL NOT NULL,"
	"  precise_after REAL NOT NULL,"
	"  paths INTEGER NOT NULL,"
	"  paths_before INTEGER NOT NULL,"
	"  paths_after INTEGER NOT NULL,"
	"  deepest_before INTEGER NOT NULL,"
	"  deepest_after INTEGER NOT NULL,"
	"  inseparable REAL NOT NULL,"
	"  search_ms REAL NOT NULL,"
	"  created_ns INTEGER NOT NULL);"
	"CREATE TABLE arr_functions ("
	"  module_id INTEGER NOT NULL REFERENCES arr_builds(module_id),"
	"  function_id INTEGER NOT NULL REFERENCES functions(id),"
	"  frame INTEGER,"		/* the prologue's N; NULL: not padable */
	"  pad INTEGER NOT NULL,"
	"  reason TEXT,"		/* why it cannot be padded */
	"  PRIMARY KEY (module_id, function_id)) WITHOUT ROWID;"
	"CREATE TABLE arr_inseparable ("
	"  module_id INTEGER NOT NULL REFERENCES arr_builds(module_id),"
	"  context_id INTEGER NOT NULL REFERENCES contexts(id),"
	"  height INTEGER NOT NULL,"
	"  samples REAL NOT NULL,"
	"  PRIMARY KEY (module_id, context_id, height)) WITHOUT ROWID;"
	"CREATE VIEW v_arr AS SELECT"
	"  m.path AS program, m.build_id, o.path AS original,"
	"  o.build_id AS original_build_id, a.seed, a.max_growth,"
	"  a.precise_before / a.samples AS precise_before,"
	"  a.precise_after / a.samples AS precise_after,"
	"  1.0 * a.paths_before / a.paths AS paths_precise_before,"
	"  1.0 * a.paths_after / a.paths AS paths_precise_after,"
	"  1.0 * a.deepest_after / a.deepest_before AS stack_growth,"
	"  a.inseparable / a.samples AS inseparable, a.search_ms"
	"  FROM arr_builds a JOIN modules m ON m.id = a.module_id"
	"  JOIN modules o ON o.id = a.original_id;"
	"CREATE VIEW v_arr_functions AS SELECT"
	"  m.path AS program, m.build_id, f.name AS function, a.frame, a.pad,"
	"  a.reason"
	"  FROM arr_functions a JOIN modules m ON m.id = a.module_id"
	"  JOIN functions f ON f.id = a.function_id;"
	"CREATE VIEW v_arr_inseparable AS WITH RECURSIVE p(id, leaf, path) AS ("
	"  SELECT c.id, c.id, f.name FROM contexts c"
	"    JOIN functions f ON f.id = c.function_id"
	"    WHERE c.id IN (SELECT context_id FROM arr_inseparable)"
	"  UNION ALL"
	"  SELECT c.parent_id, p.leaf, f.name || ';' || p.path FROM p"
	"    JOIN contexts c ON c.id = p.id"
	"    JOIN contexts pc ON pc.id = c.parent_id"
	"    JOIN functions f ON f.id = pc.function_id)"
	"  SELECT m.path AS program, m.build_id, i.height, i.samples, p.path"
	"  FROM arr_inseparable i JOIN modules m ON m.id = i.module_id"
	"  JOIN p ON p.leaf = i.context_id"
	"  JOIN contexts top ON top.id = p.id AND top.parent_id = 0;"
	},
	/* 4 -> 5: runs left 'running' by a killed icppd become 'crashed'
	 * (owner_pid tells a dead writer from a live one; flushed_ns is
	 * their end).  A new column, not a new status value: the CHECK on
	 * status cannot change without rebuilding the table. */
	{ "ALTER TABLE runs ADD COLUMN owner_pid INTEGER;"
	"ALTER TABLE runs ADD COLUMN flushed_ns INTEGER;"
	"ALTER TABLE runs ADD COLUMN crashed INTEGER NOT NULL DEFAULT 0;"
	"DROP VIEW v_runs;"
	V_RUNS_SINCE_5
	"  FROM runs;"
	},
	/* 5 -> 6: CIDs recorded before version 3 name no program, so no
	 * map explained them although their program was trained.  A
	 * process whose CIDs lie in exactly one module with a training
	 * map ran that program (the libraries it also sampled have none);
	 * the others stay unknown rather than guessed. */
	{ "UPDATE cid_samples SET program_id = ("
	"  SELECT CASE COUNT(DISTINCT pm.program_id) WHEN 1"
	"    THEN MIN(pm.program_id) ELSE 0 END"
	"  FROM path_maps pm"
	"  WHERE pm.run_id = 0 AND pm.program_id IN ("
	"    SELECT f.module_id FROM cid_samples c"
	"    JOIN functions f ON f.id = c.function_id"
	"    WHERE c.run_id = cid_samples.run_id AND c.pid = cid_samples.pid))"
	"  WHERE program_id = 0;"
	"DELETE FROM inferences;"
	},
	/* 6 -> 7: learning during measurement.  What a run learned is in
	 * run_counters (learn.*); v_runs shows it next to the samples:
	 * NULL for runs that did not learn. */
	{ "DROP VIEW v_runs;"
	V_RUNS_SINCE_5 "," V_RUNS_LEARN
	"  FROM runs;"
	},
	/* 7 -> 8: the static call graph.  An inference that used the
	 * binaries' direct calls says how many, so a report that can read
	 * them replaces one stored without (record stores its inference
	 * from the path maps alone, at no cost to the run). */
	{ "ALTER TABLE inferences ADD COLUMN static_calls INTEGER NOT NULL"
	"  DEFAULT 0;"
	},
	/* 8 -> 9: validation scores what a report shows (accuracy). */
	{ "CREATE TABLE accuracy ("
	"  run_id INTEGER NOT NULL REFERENCES runs(id),"
	"  program_id INTEGER NOT NULL REFERENCES modules(id),"
	"  function_id INTEGER NOT NULL REFERENCES functions(id),"
	"  outcome TEXT NOT NULL CHECK (outcome IN"
	"    ('precise', 'ambiguous', 'searched', 'unknown')),"
	"  solutions INTEGER NOT NULL,"
	"  samples INTEGER NOT NULL,"
	"  correct REAL NOT NULL,"
	"  PRIMARY KEY (run_id, program_id, function_id, outcome, solutions))"
	"  WITHOUT ROWID;"
	"CREATE VIEW v_accuracy AS SELECT"
	"  a.run_id, pr.path AS program, pr.build_id, m.path AS module,"
	"  f.name AS function, a.outcome, a.solutions, a.samples, a.correct,"
	"  CASE a.outcome WHEN 'unknown' THEN 0 ELSE a.samples - a.correct END"
	"    AS incorrect"
	"  FROM accuracy a JOIN functions f ON f.id = a.function_id"
	"  JOIN modules m ON m.id = f.module_id"
	"  JOIN modules pr ON pr.id = a.program_id;"
	"CREATE VIEW v_accuracy_summary AS SELECT"
	"  run_id, SUM(samples) AS samples,"
	"  SUM(correct) / SUM(samples) AS correct,"
	"  1.0 * SUM(CASE outcome WHEN 'unknown' THEN 0"
	"    ELSE samples - correct END) / SUM(samples) AS incorrect,"
	"  1.0 * SUM(samples * (outcome = 'unknown')) / SUM(samples) AS unknown"
	"  FROM accuracy GROUP BY run_id;"
	},
	/* 9 -> 10: the kernel.  The CPU time of the command (user and
	 * system), so a run says how much of it was in the kernel (NULL:
	 * not measured: the daemon, an attached process that ended first);
	 * whether the run
	 * sampled the kernel (record --kernel), and of each CID's samples
	 * those taken in the kernel, on behalf of the user context that
	 * entered it. */
	{ "ALTER TABLE runs ADD COLUMN user_ns INTEGER;"
	"ALTER TABLE runs ADD COLUMN system_ns INTEGER;"
	"ALTER TABLE runs ADD COLUMN kernel INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE cid_samples ADD COLUMN kernel_samples INTEGER NOT NULL"
	"  DEFAULT 0;"
	"DROP VIEW v_runs;"
	V_RUNS_SINCE_5 "," V_RUNS_LEARN ","
	"  user_ns / 1e9 AS user_s, system_ns / 1e9 AS system_s,"
	"  1.0 * system_ns / NULLIF(user_ns + system_ns, 0) AS kernel_share,"
	"  kernel AS kernel_sampled"
	"  FROM runs;"
	"DROP VIEW v_cids;"
	"CREATE VIEW v_cids AS SELECT"
	"  c.run_id, c.pid, c.tid, m.path AS module, m.build_id,"
	"  f.name AS function, f.address, c.height, c.samples,"
	"  pr.path AS program, c.kernel_samples"
	"  FROM cid_samples c"
	"  JOIN functions f ON f.id = c.function_id"
	"  JOIN modules m ON m.id = f.module_id"
	"  LEFT JOIN modules pr ON pr.id = c.program_id;"
	},
	/* 10 -> 11: where in a function its samples fell.  The offset of
	 * each sampled pc from its function's start, per process, so pprof
	 * puts a leaf at its instructions and lines (go tool pprof -list,
	 * -disasm) and SQL can rank the hot instructions. */
	{ "CREATE TABLE pc_samples ("
	"  run_id INTEGER NOT NULL REFERENCES runs(id),"
	"  pid INTEGER NOT NULL,"
	"  function_id INTEGER NOT NULL REFERENCES functions(id),"
	"  offset INTEGER NOT NULL,"
	"  samples INTEGER NOT NULL,"
	"  PRIMARY KEY (run_id, function_id, offset, pid)) WITHOUT ROWID;"
	"CREATE VIEW v_pcs AS SELECT"
	"  p.run_id, p.pid, m.path AS module, m.build_id, f.name AS function,"
	"  f.address + p.offset AS address, p.offset, p.samples"
	"  FROM pc_samples p"
	"  JOIN functions f ON f.id = p.function_id"
	"  JOIN modules m ON m.id = f.module_id;"
	},
	/* 11 -> 12: the export spool.  A database's random id (a run's
	 * export key is host/id/run, the same on every retry) and, per run
	 * and ClickHouse server, whether the server has acknowledged it:
	 * a run is marked done only then, and a failed try waits longer
	 * each time. */
	{ "CREATE TABLE identity (id TEXT NOT NULL);"
	"INSERT INTO identity VALUES (lower(hex(randomblob(16))));"
	"CREATE TABLE exports ("
	"  run_id INTEGER NOT NULL REFERENCES runs(id),"
	"  target TEXT NOT NULL,"
	"  state TEXT NOT NULL CHECK (state IN ('pending', 'done')),"
	"  attempts INTEGER NOT NULL DEFAULT 0,"
	"  next_ns INTEGER NOT NULL DEFAULT 0,"
	"  queued_ns INTEGER NOT NULL,"
	"  done_ns INTEGER,"
	"  stack_rows INTEGER,"
	"  cid_rows INTEGER,"
	"  error TEXT,"
	"  PRIMARY KEY (run_id, target)) WITHOUT ROWID;"
	"CREATE VIEW v_exports AS SELECT"
	"  run_id, target, state, attempts,"
	"  strftime('%Y-%m-%dT%H:%M:%fZ', queued_ns / 1e9, 'unixepoch')"
	"    AS queued,"
	"  strftime('%Y-%m-%dT%H:%M:%fZ', done_ns / 1e9, 'unixepoch') AS done,"
	"  stack_rows, cid_rows, error"
	"  FROM exports;"
	},
	/* 12 -> 13: fleet learning.  Which builds' path maps were pulled
	 * from which server, and the counts a pull added to each node: an
	 * export ships this database's own counts only (the node's less
	 * what was pulled), so no host's learning comes back to the fleet
	 * twice. */
	{ "CREATE TABLE fleet_pulls ("
	"  build_id TEXT NOT NULL,"
	"  target TEXT NOT NULL,"
	"  pulled_ns INTEGER NOT NULL,"
	"  paths INTEGER NOT NULL,"
	"  sources INTEGER NOT NULL,"
	"  PRIMARY KEY (build_id, target)) WITHOUT ROWID;"
	"CREATE TABLE fleet_counts ("
	"  node_id INTEGER PRIMARY KEY REFERENCES path_nodes(id),"
	"  self INTEGER NOT NULL,"
	"  total INTEGER NOT NULL);"
	"CREATE VIEW v_fleet_pulls AS SELECT"
	"  build_id, target,"
	"  strftime('%Y-%m-%dT%H:%M:%fZ', pulled_ns / 1e9, 'unixepoch')"
	"    AS pulled,"
	"  paths, sources"
	"  FROM fleet_pulls;"
	},
	/* 13 -> 14: a run is inferred once, at its first report, and every
	 * later report, export and format reads what was stored: each
	 * CID's explanation (the contexts its samples go to, with their
	 * shares), so that any choice of processes, commands or programs
	 * is a join, not a new inference; the call site of each context
	 * they use (pprof lines, --lines); and in inferences, what the
	 * inference read and what its budget left unknown.  Stored
	 * inferences from before are dropped: their CIDs' explanations
	 * were never kept. */
	{ "CREATE TABLE explained ("
	"  run_id INTEGER NOT NULL REFERENCES runs(id),"
	"  program_id INTEGER NOT NULL,"
	"  function_id INTEGER NOT NULL REFERENCES functions(id),"
	"  height INTEGER NOT NULL,"
	"  context_id INTEGER NOT NULL REFERENCES contexts(id),"
	"  unknown_id INTEGER NOT NULL,"	/* unknown_frames(id); 0: none */
	"  how TEXT NOT NULL CHECK (how IN"
	"    ('precise', 'ambiguous', 'searched', 'unknown')),"
	"  exact_depth INTEGER NOT NULL,"
	"  share REAL NOT NULL,"
	"  PRIMARY KEY (run_id, program_id, function_id, height, context_id,"
	"    unknown_id)) WITHOUT ROWID;"
	"CREATE TABLE explained_sites ("
	"  run_id INTEGER NOT NULL REFERENCES runs(id),"
	"  context_id INTEGER NOT NULL REFERENCES contexts(id),"
	"  call_site INTEGER NOT NULL,"
	"  PRIMARY KEY (run_id, context_id)) WITHOUT ROWID;"
	"DELETE FROM inferred;"
	"DELETE FROM inferences;"
	"ALTER TABLE inferences ADD COLUMN static_modules INTEGER NOT NULL"
	"  DEFAULT 0;"
	"ALTER TABLE inferences ADD COLUMN unreadable INTEGER NOT NULL"
	"  DEFAULT 0;"
	"ALTER TABLE inferences ADD COLUMN unreadable_path TEXT NOT NULL"
	"  DEFAULT '';"
	"ALTER TABLE inferences ADD COLUMN unreadable_why TEXT NOT NULL"
	"  DEFAULT '';"
	"ALTER TABLE inferences ADD COLUMN budget_s REAL NOT NULL DEFAULT 0;"
	"ALTER TABLE inferences ADD COLUMN over_budget_cids INTEGER NOT NULL"
	"  DEFAULT 0;"
	"ALTER TABLE inferences ADD COLUMN over_budget_samples REAL NOT NULL"
	"  DEFAULT 0;"
	"ALTER TABLE inferences ADD COLUMN over_budget_modules INTEGER"
	"  NOT NULL DEFAULT 0;"
	"ALTER TABLE inferences ADD COLUMN searches INTEGER NOT NULL"
	"  DEFAULT 0;"
	"ALTER TABLE inferences ADD COLUMN cpu_s REAL NOT NULL DEFAULT 0;"
	},
	/* 14 -> 15: the direct calls of a build, decoded by the first
	 * inference that needs them and read back by every later one (of
	 * any run of that build, even once the file is gone), packed as
	 * profile/build_calls.h says.  A cache: last_run is the newest run
	 * when they were last read, and retention drops them with it. */
	{ "CREATE TABLE build_calls ("
	"  build_id TEXT PRIMARY KEY,"
	"  last_run INTEGER NOT NULL,"
	"  calls BLOB NOT NULL);"
	},
	/* 15 -> 16: the samples each run's learning unwound whole, per
	 * path map node (a path's leaf): the merged map counts every
	 * run's, and a run's own say how its CIDs' samples split.  And a
	 * build's fragments, the innermost frames of the samples whose
	 * stack copy ended first, as a path map of their own (run_id -1:
	 * its outermost nodes are where the copies ended). */
	{ "CREATE TABLE run_learned ("
	"  run_id INTEGER NOT NULL REFERENCES runs(id),"
	"  node_id INTEGER NOT NULL REFERENCES path_nodes(id),"
	"  samples INTEGER NOT NULL,"
	"  PRIMARY KEY (run_id, node_id)) WITHOUT ROWID;"
	"DROP VIEW v_path_maps;"
	"CREATE VIEW v_path_maps AS SELECT"
	"  pm.id AS map_id, m.path AS program, m.build_id,"
	"  CASE pm.run_id WHEN 0 THEN 'train' WHEN -1 THEN 'fragments'"
	"    ELSE 'truth' END AS kind,"
	"  CASE WHEN pm.run_id > 0 THEN pm.run_id END AS run_id,"
	"  (SELECT COUNT(*) FROM path_nodes n WHERE n.map_id = pm.id) AS paths,"
	"  (SELECT COUNT(*) FROM (SELECT 1 FROM path_nodes n"
	"    WHERE n.map_id = pm.id GROUP BY function_id, height)) AS cids,"
	"  (SELECT COUNT(*) FROM (SELECT 1 FROM path_nodes n"
	"    WHERE n.map_id = pm.id GROUP BY function_id, height"
	"    HAVING COUNT(DISTINCT context_id) > 1)) AS ambiguous_cids,"
	"  (SELECT COALESCE(SUM(self), 0) FROM path_nodes n"
	"    WHERE n.map_id = pm.id) AS samples"
	"  FROM path_maps pm JOIN modules m ON m.id = pm.program_id;"
	/* the path views show whole paths, as before: a fragment is
	 * no path from an outermost frame */
	"DROP VIEW v_paths;"
	"CREATE VIEW v_paths AS WITH RECURSIVE p(id, path) AS ("
	"  SELECT n.id, f.name FROM path_nodes n"
	"    JOIN functions f ON f.id = n.function_id"
	"    JOIN path_maps pm ON pm.id = n.map_id"
	"    WHERE n.parent_id = 0 AND pm.run_id != -1"
	"  UNION ALL"
	"  SELECT n.id, p.path || ';' || f.name FROM path_nodes n"
	"    JOIN p ON n.parent_id = p.id JOIN functions f ON f.id = n.function_id)"
	"  SELECT n.id AS node_id, n.map_id, pr.path AS program,"
	"  NULLIF(n.parent_id, 0) AS parent_id, n.context_id, n.depth,"
	"  m.path AS module,"
	"  f.name AS function, n.call_site, n.height,"
	"  n.self AS self_samples, n.total AS total_samples, p.path"
	"  FROM path_nodes n JOIN p ON p.id = n.id"
	"  JOIN functions f ON f.id = n.function_id"
	"  JOIN modules m ON m.id = f.module_id"
	"  JOIN path_maps pm ON pm.id = n.map_id"
	"  JOIN modules pr ON pr.id = pm.program_id;"
	"DROP VIEW v_path_cids;"
	"CREATE VIEW v_path_cids AS SELECT"
	"  n.map_id, m.path AS module, f.name AS function, n.height,"
	"  COUNT(DISTINCT n.context_id) AS contexts, COUNT(*) AS paths,"
	"  SUM(n.self) AS self_samples"
	"  FROM path_nodes n JOIN functions f ON f.id = n.function_id"
	"  JOIN modules m ON m.id = f.module_id"
	"  WHERE n.map_id NOT IN (SELECT id FROM path_maps WHERE run_id = -1)"
	"  GROUP BY n.map_id, n.function_id, n.height;"
	},
	/* 16 -> 17: an unknown caller of a function on a stack with no
	 * fixed base (a goroutine's, a coroutine's) has no height to name:
	 * "[unknown callers of F]", as the report writes it. */
	{ "DROP VIEW v_inferred_frames;"
	V_INFERRED_FRAMES("CASE WHEN u.height = 0 THEN ''"
			  " ELSE ' at height ' || u.height END")
	},
	/* 17 -> 18: a learning sample that took the main event's turn is
	 * a sample of the run, and one unwound whole counts in its own
	 * context: of a context's share of a CID, the part that is such
	 * samples (explained.own, stored in inferred as 'precise').  The
	 * stored inferences, made without it, are made again. */
	{ "ALTER TABLE explained ADD COLUMN own REAL NOT NULL DEFAULT 0;"
	"DELETE FROM explained;"
	"DELETE FROM explained_sites;"
	"DELETE FROM inferred;"
	"DELETE FROM inferences;"
	},
	/* 18 -> 19: the kernel's functions.  With record --kernel and
	 * kallsyms readable, a CID's samples taken in the kernel are also
	 * counted by the kernel call chain they were taken on (the
	 * kernel's own unwind, PERF_SAMPLE_CALLCHAIN): its functions'
	 * names, outermost first, each with perf's "_[k]".  Reports draw
	 * them below [kernel]. */
	{ "CREATE TABLE kernel_chains ("
	"  run_id INTEGER NOT NULL REFERENCES runs(id),"
	"  pid INTEGER NOT NULL,"
	"  tid INTEGER NOT NULL,"
	"  program_id INTEGER NOT NULL REFERENCES modules(id),"
	"  function_id INTEGER NOT NULL REFERENCES functions(id),"
	"  height INTEGER NOT NULL,"
	"  chain TEXT NOT NULL,"
	"  samples INTEGER NOT NULL,"
	"  PRIMARY KEY (run_id, pid, tid, program_id, function_id, height,"
	"               chain)) WITHOUT ROWID;"
	"CREATE VIEW v_kernel_chains AS SELECT"
	"  k.run_id, k.pid, k.tid, pr.path AS program, m.path AS module,"
	"  f.name AS function, k.height, k.chain, k.samples"
	"  FROM kernel_chains k JOIN functions f ON f.id = k.function_id"
	"  JOIN modules m ON m.id = f.module_id"
	"  JOIN modules pr ON pr.id = k.program_id;"
	},
	/* 19 -> 20: what a build's DWARF says at its sampled addresses and
	 * call sites (profile/dwarf.c): read from the DWARF by the first
	 * report that asks, from here by every later one.  A cache like
	 * build_calls: a build-id's DWARF never changes, and retention
	 * drops the rows with the run that last read them.  chain: a line
	 * per frame, innermost first, "NAME\tFILE\tLINE": the functions
	 * inlined there, then, with no name, the one they are inlined in
	 * (names and files made printable). */
	{ "CREATE TABLE inlined ("
	"  build_id TEXT NOT NULL,"
	"  address INTEGER NOT NULL,"
	"  last_run INTEGER NOT NULL,"
	"  chain TEXT NOT NULL,"
	"  PRIMARY KEY (build_id, address)) WITHOUT ROWID;"
	},
	/* 20 -> 21: no index of path_nodes by CID.  Each learned node paid
	 * a third B-tree insert for it, 1.2 us of the 3.1 us a node costs
	 * a record (a third of the recorder's SQLite time on clang++),
	 * and nothing reads the map by CID: reports read a map whole by
	 * map_id, and validation's scoring and v_path_cids group the map
	 * once (SQLite builds an automatic index for the lookups). */
	{ "DROP INDEX path_nodes_cid;"
	},
	/* 21 -> 22: off-CPU time (record --off-cpu): each switch-out's
	 * CID, keyed as cid_samples, with the time until its thread ran
	 * again, apart as blocked (it waited) and runnable (preempted:
	 * PERF_RECORD_MISC_SWITCH_OUT_PREEMPT), and how many switches. */
	{ "CREATE TABLE offcpu_samples ("
	"  run_id INTEGER NOT NULL REFERENCES runs(id),"
	"  pid INTEGER NOT NULL,"
	"  tid INTEGER NOT NULL,"
	"  program_id INTEGER NOT NULL REFERENCES modules(id),"
	"  function_id INTEGER NOT NULL REFERENCES functions(id),"
	"  height INTEGER NOT NULL,"
	"  switches INTEGER NOT NULL,"
	"  blocked_ns INTEGER NOT NULL,"
	"  runnable_ns INTEGER NOT NULL,"
	"  PRIMARY KEY (run_id, pid, tid, program_id, function_id, height))"
	"  WITHOUT ROWID;"
	"CREATE VIEW v_offcpu AS SELECT"
	"  o.run_id, o.pid, o.tid, pr.path AS program, m.path AS module,"
	"  f.name AS function, o.height, o.switches, o.blocked_ns,"
	"  o.runnable_ns"
	"  FROM offcpu_samples o JOIN functions f ON f.id = o.function_id"
	"  JOIN modules m ON m.id = f.module_id"
	"  JOIN modules pr ON pr.id = o.program_id;"
	},
	/* 22 -> 23: off-CPU time beside the CPU samples in v_cids, an
	 * event column saying which (as the ClickHouse tables have it):
	 * a run without record --off-cpu reads as before. */
	{ "DROP VIEW v_cids;"
	"CREATE VIEW v_cids AS SELECT"
	"  c.run_id, c.pid, c.tid, m.path AS module, m.build_id,"
	"  f.name AS function, f.address, c.height, c.samples,"
	"  pr.path AS program, c.kernel_samples, c.event, c.blocked_ns,"
	"  c.runnable_ns"
	"  FROM (SELECT run_id, pid, tid, program_id, function_id, height,"
	"    samples, kernel_samples, 'cpu' AS event, 0 AS blocked_ns,"
	"    0 AS runnable_ns FROM cid_samples"
	"    UNION ALL SELECT run_id, pid, tid, program_id, function_id,"
	"    height, switches, 0, 'off-cpu', blocked_ns, runnable_ns"
	"    FROM offcpu_samples) c"
	"  JOIN functions f ON f.id = c.function_id"
	"  JOIN modules m ON m.id = f.module_id"
	"  LEFT JOIN modules pr ON pr.id = c.program_id;"
	},
	/* 23 -> 24: learning as a run goes (record/recorder.c's windows of
	 * LEARN_WINDOW_NS, the run's last one shorter): the samples with a
	 * CID, how many of them the paths learned by then left
	 * unexplained, the stack copies taken and the whole paths new to
	 * the map.  v_runs gives the first and last window's share only;
	 * these say whether learning converges, and where it stopped. */
	{ "CREATE TABLE learn_windows ("
	"  run_id INTEGER NOT NULL REFERENCES runs(id),"
	"  start_ms INTEGER NOT NULL,"	/* since the run began */
	"  end_ms INTEGER NOT NULL,"
	"  samples INTEGER NOT NULL,"
	"  unexplained INTEGER NOT NULL,"
	"  copies INTEGER NOT NULL,"
	"  new_paths INTEGER NOT NULL,"
	"  PRIMARY KEY (run_id, start_ms)) WITHOUT ROWID;"
	"CREATE VIEW v_learning AS SELECT"
	"  run_id, start_ms, end_ms, samples, unexplained,"
	"  ROUND(100.0 * (samples - unexplained) / samples, 1)"
	"    AS explained_pct, copies, new_paths"
	"  FROM learn_windows;"
	},
	/* 24 -> 25: each program's known CIDs, for the records after the
	 * first (inference/known.h): the keys of every CID its maps
	 * explain, 8 bytes each in host order, sorted, in one blob, so
	 * that a record reads what the runs before it explained in one
	 * row (a scan of path_nodes for them took 0.28 s over the 218,788
	 * nodes of three g++ records at 10 kHz).  A record adds its own
	 * at its end. */
	{ "CREATE TABLE known_cids ("
	"  program_id INTEGER PRIMARY KEY REFERENCES modules(id),"
	"  cids BLOB NOT NULL);"
	},
};

const int icppd_nr_migrations =
	(int)(sizeof(icppd_migrations) / sizeof(icppd_migrations[0]));

/* The rows the steps above write into a new database, which a database
 * made in one pass (icppd_schema) gets from here: 11 -> 12's id.  A
 * step that writes rows into a new database adds them here too; the
 * build checks that both ways give each table as many rows
 * (schema/gen_schema.c). */
const char icppd_schema_rows[] =
	"INSERT INTO identity VALUES (lower(hex(randomblob(16))));";
