#!/bin/sh
# A crafted path map 300,000 frames deep (training stops at 4096, but a
# database can be shared or crafted): every report format and view ends
# with bounded work and output, on a 1 MiB stack, with no recursion that
# follows the depth.  The map is written with SQL into a database icppd
# created: a chain f1 -> f2 -> ... -> fD, every function distinct, and
# a run with 10 samples at the leaf's CID.
. "$TESTS_SRCDIR/e2e/lib.sh"
require_perf
D=300000
"$ICPPD" record -q -d "$db" -- true
q "INSERT INTO modules (id, path, build_id) VALUES (90001, '/deep/prog', 'deep');
WITH RECURSIVE d(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM d WHERE x < $D)
INSERT INTO functions SELECT 9000000 + x, 90001, 4096 + 16 * x, 'f' || x, 'f' || x FROM d;
INSERT INTO path_maps (id, program_id, run_id) VALUES (90001, 90001, 0);
WITH RECURSIVE d(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM d WHERE x < $D)
INSERT INTO contexts SELECT 9000000 + x, CASE x WHEN 1 THEN 0 ELSE 9000000 + x - 1 END,
  9000000 + x FROM d;
WITH RECURSIVE d(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM d WHERE x < $D)
INSERT INTO path_nodes SELECT 9000000 + x, 90001, CASE x WHEN 1 THEN 0 ELSE 9000000 + x - 1 END,
  9000000 + x, 9000000 + x, 4096 + x, 16 * x, x, x = $D, $D - x + 1 FROM d;
INSERT INTO runs (id, kind, command, event, event_canonical, precise, frequency,
  started_ns, ended_ns, status, samples) VALUES (90001, 'record', 'deep', 'cpu-clock',
  'perf::cpu-clock', 0, 1000, 0, 1000000000, 'finished', 10);
INSERT INTO cid_samples VALUES (90001, 1, 1, 90001, 9000000 + $D, 16 * $D, 10, 0);"
is "$(q "SELECT max(depth) FROM path_nodes")" $D "the crafted map is $D frames deep"

# report ARGS...: icppd report of the deep run into $tmp/out, on a
# 1 MiB stack and at most 60 s of CPU (each format takes about a second
# here; text took over 120 s while each line walked up to its root);
# its exit status.
report() {
	( ulimit -s 1024; ulimit -t 60; exec "$ICPPD" report -d "$db" --run 90001 "$@" ) \
		>"$tmp/out" 2>"$tmp/err"
}
longest() { awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$tmp/out"; }

report --k inf
is $? 0 "text, k = inf: exit 0"
is "$(grep -c '<- f' "$tmp/out")" $((D - 1)) "text, k = inf: every caller on a line"
contains "$(tail -1 "$tmp/out")" "[$((D - 1))] <- f1" "text: the outermost caller, its level shown past the indentation cap"
ok $([ "$(longest)" -lt 200 ]; echo $?) "text: no line over 200 bytes (indentation stops growing: $(longest))"
contains "$(cat "$tmp/out")" "inferred: 100.0% one path fits (precise)" "text: the leaf's one path is precise"
contains "$(cat "$tmp/out")" "expected correct: not measured for this build (icppd validate -- COMMAND measures it)" \
	"text: no validation, so no figure of correctness"

report --k inf -f json
is $? 0 "json, k = inf: exit 0"
is "$(tr -cd '{' <"$tmp/out" | wc -c)" "$(tr -cd '}' <"$tmp/out" | wc -c)" "json: braces balance"
is "$(grep -o '"function"' "$tmp/out" | wc -l)" $D "json: $D nested functions"

report --k inf -f folded
is $? 0 "folded, k = inf: exit 0"
is "$(awk -F';' '{ print NF, $1, $NF }' "$tmp/out")" "$D f1 f$D 10" "folded: one stack of $D frames, weight 10"

report --k 3 --inclusive
is $? 0 "inclusive, k = 3: exit 0"
is "$(grep -c '<- f' "$tmp/out")" $((3 * D - 6)) "inclusive, k = 3: three callers per function (fewer at the top)"

report --k inf --inclusive
is $? 1 "inclusive, k = inf: refused (depth^2 contexts)"
contains "$(cat "$tmp/err")" "use a smaller --k" "inclusive, k = inf: says to use a smaller --k"
is "$(wc -l <"$tmp/err" | tr -d ' ')" 1 "inclusive, k = inf: one line"

report --hot 1
is $? 0 "--hot text: exit 0"
ok $([ "$(wc -c <"$tmp/out")" -lt $((200 * D)) ]; echo $?) "--hot text: output linear in depth ($(wc -c <"$tmp/out") bytes)"
report --hot 1 -f folded
is "$(awk -F';' '{ print NF }' "$tmp/out")" $D "--hot folded: the hot context's $D frames"

# --children: every function's tree below it, depth^2 lines at k = inf
report --children --k inf
is $? 1 "--children, k = inf: refused (depth^2 lines), no recursion on a $D-frame path"
contains "$(cat "$tmp/err")" "use a smaller --k" "... saying to use a smaller --k"
is "$(wc -c <"$tmp/out" | tr -d ' ')" 0 "... before printing anything"
report --children --k 2
is $? 0 "--children, k = 2: exit 0"
ok $([ "$(wc -l <"$tmp/out")" -ge $((3 * (D - 1))) ] && [ "$(wc -c <"$tmp/out")" -lt $((400 * D)) ]; echo $?) \
	"--children, k = 2: each function and two levels below it, linear in depth ($(wc -l <"$tmp/out") lines)"

report --k inf -f pprof -o "$tmp/deep.pb.gz"
is $? 0 "pprof, k = inf: exit 0"
ok $([ -s "$tmp/deep.pb.gz" ]; echo $?) "pprof: written"

( ulimit -s 1024; ulimit -t 60; exec "$ICPPD" compare -d "$db" 90001 90001 ) >"$tmp/out" 2>&1
contains "$(cat "$tmp/out")" "degree of overlap: 1.0000" "compare of the deep run with itself"
is "$(integrity)" ok "database passes integrity_check"
done_testing
