#!/bin/sh
# A fleet feeding ClickHouse: two clickhouse-server processes on
# loopback ports of their own, a two-shard cluster with Distributed
# tables over them; two writers with different host names export record
# runs into one shard each; the Distributed tables hold the union, each
# run exactly once.  Then an outage: a run recorded while its server is
# down stays queued, loses nothing and, once the server is back, arrives
# once, even when an acknowledgement was lost.  Fleet learning: a host
# with an empty database pulls the path map the others exported and
# explains its first run of the program without learning anything.  A
# daemon exports each segment through an outage of its server, each
# once.  Without clickhouse-server the spool alone is checked against a
# port where nobody listens.
. "$TESTS_SRCDIR/e2e/lib.sh"
require_perf

prog=$PROGS/collide
"$ICPPD" train $TRAIN_OPTS -q -d "$tmp/a.db" -- "$prog" ab 30 >/dev/null

# A port nobody listens on: the spool without a server.
dead=http://127.0.0.1:9
out=$("$ICPPD" record -d "$tmp/a.db" --export "$dead" -- "$prog" ab 30 2>&1 >/dev/null)
is $? 0 "record --export to a server that is away: the run still succeeds"
contains "$out" "icppd: warning: export: http://127.0.0.1:9: " "... and says why the export failed"
contains "$out" "stays queued (icppd export --retry -d $tmp/a.db $dead retries)" "... and that the run stays queued"
is "$(q "SELECT state, attempts, error IS NOT NULL FROM exports" "$tmp/a.db")" "pending|1|1" \
	"the spool: one run pending, one try, its error"
out=$("$ICPPD" export -d "$tmp/a.db" --retry "$dead" 2>&1)
is $? 1 "export --retry while the server is away: exit 1"
is "$(q "SELECT state, attempts FROM exports" "$tmp/a.db")" "pending|2" "... the run still pending, two tries"
# --all: every finished run the server has not taken, queued and shipped
# (a run recorded without --export among them; a training run not)
cp "$tmp/a.db" "$tmp/all.db"
"$ICPPD" record -q --no-learn -d "$tmp/all.db" -- "$prog" ab 30 >/dev/null
out=$("$ICPPD" export -d "$tmp/all.db" --all "$dead" 2>&1)
is $? 1 "export --all while the server is away: exit 1"
contains "$out" "icppd: 1 run queued" "export --all: queues the run no export named"
is "$(q "SELECT count(*) FROM exports WHERE state = 'pending'" "$tmp/all.db")" 2 "... both runs pending, tried"
out=$("$ICPPD" export -d "$tmp/all.db" --all --run 1 "$dead" 2>&1)
is $? 2 "export --all --run: usage error"
out=$("$ICPPD" export -d "$tmp/a.db" ftp://x 2>&1)
is $? 1 "export to a URL that is not http: exit 1"
contains "$out" "not an http:// or https:// URL" "... says what it takes"
is "$(integrity "$tmp/a.db")" ok "the spool's database stays valid"

if ! command -v clickhouse-server >/dev/null || ! command -v clickhouse-client >/dev/null; then
	for t in cluster outage learning daemon; do
		skip "no clickhouse-server (apt-get install clickhouse-server clickhouse-client)" "ClickHouse $t checks"
	done
	done_testing
	exit
fi

# Two servers: HTTP, native and interserver ports apart from any other
# test's (the shell's pid picks the block).
base=$((20000 + ($$ % 2000) * 10))
chdir=$tmp/ch
# the server's user must reach its folder
chmod 711 "$tmp"
. "$TESTS_SRCDIR/../scripts/chserver.sh"
start_server() {	# start_server N
	ch_start "$chdir/$1" $((base + $1 * 3)) $((base + $1 * 3 + 1)) $((base + $1 * 3 + 2)) "
  <remote_servers>
    <icppd>
      <shard><replica><host>127.0.0.1</host><port>$((base + 1))</port></replica></shard>
      <shard><replica><host>127.0.0.1</host><port>$((base + 4))</port></replica></shard>
    </icppd>
  </remote_servers>"
}
stop_server() {	# stop_server N: and wait until it is gone
	ch_stop "$chdir/$1"
}
cleanup() {
	for s in 0 1; do
		[ -f "$chdir/$s/pid" ] && kill -9 "$(cat "$chdir/$s/pid")" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
same_stacks() {	# same_stacks A B: per stack, the same weight (to 0.01)
	awk '{ w = $NF; $NF = ""; if (FILENAME == ARGV[1]) a[$0] += w; else b[$0] += w }
	END { for (k in a) if (!(k in b) || (a[k] - b[k])^2 > 1e-4) bad++
	      for (k in b) if (!(k in a)) bad++
	      print bad + 0 }' "$1" "$2"
}
url0=http://127.0.0.1:$base
url1=http://127.0.0.1:$((base + 3))
ch() {	# ch N SQL
	clickhouse-client --port $((base + $1 * 3 + 1)) -q "$2"
}

if ! start_server 0 || ! start_server 1; then
	for t in cluster outage learning daemon; do
		ok 1 "ClickHouse $t checks: the servers did not start"
	done
	done_testing
	exit
fi
for s in 0 1; do
	"$ICPPD" export --schema --cluster icppd |
		clickhouse-client --port $((base + s * 3 + 1)) --multiquery
	ok $? "the schema goes into server $s"
done

# A database nobody set up: the exporter makes its tables (IF NOT
# EXISTS), unless the URL says create=no.
"$ICPPD" record --no-learn -d "$tmp/f.db" --export "$url0/?database=fresh" -- "$prog" ab 30 >"$tmp/f.out" 2>&1
is "$(q "SELECT state FROM exports" "$tmp/f.db")" done "missing tables: the run is shipped $(grep export "$tmp/f.out" | tail -1)"
ok $([ "$(ch 0 "SELECT count() FROM fresh.stacks_local")" -gt 0 ]; echo $?) \
	"... into the tables the exporter made"
out=$("$ICPPD" record --no-learn -d "$tmp/g.db" --export "$url0/?database=none&create=no" -- "$prog" ab 30 2>&1 >/dev/null)
contains "$out" "the URL says create=no: icppd export --schema prints them" \
	"create=no: nothing made, the hint names export --schema"
is "$(q "SELECT state FROM exports" "$tmp/g.db")" pending "... and the run stays queued"

# Raw rows kept for a window (raw_days=N in the URL): database pruned
# gets f.db's run and a copy of its rows three days back; an export
# with raw_days=1 drops that day's raw rows (the rollups keep their
# sums): a report of everything is what it was, and one whose window
# starts inside that day reads whole hours of the rollups and says so.
cp "$tmp/f.db" "$tmp/p.db"
rm -f "$tmp"/p.db-*
q "DELETE FROM exports" "$tmp/p.db"
"$ICPPD" export -d "$tmp/p.db" --all "$url0/?database=pruned" >/dev/null 2>&1
ch 0 "INSERT INTO pruned.stacks_local SELECT concat(segment, '/old'), host, program, build_id, comm,
	pid, start_time - 259200, end_time - 259200, stack, weight, certain_frames, how, event
	FROM pruned.stacks_local"
"$ICPPD" report --from "$url0/?database=pruned" -f folded --k inf --exact >"$tmp/before.folded"
old_day=$(ch 0 "SELECT toDate(min(start_time)) FROM pruned.stacks")
"$ICPPD" record --no-learn -d "$tmp/p.db" --export "$url0/?database=pruned&raw_days=1" -- "$prog" ab 30 >"$tmp/p.out" 2>&1
contains "$(cat "$tmp/p.out")" "dropping the raw rows of $old_day (raw_days=1; the rollups keep their sums)" \
	"raw_days=1: the export drops the raw rows of a day three days back"
is "$(ch 0 "SELECT count() FROM pruned.stacks WHERE toDate(start_time) = '$old_day'")" 0 "... its stack rows gone"
is "$(ch 0 "SELECT count() > 0 FROM pruned.stacks_rollup WHERE toDate(bucket) = '$old_day'")" 1 "... its rollup rows kept"
"$ICPPD" report --from "$url0/?database=pruned" -f folded --k inf --exact >"$tmp/after.folded"
"$ICPPD" report -d "$tmp/p.db" --run "$(q "SELECT max(run_id) FROM exports" "$tmp/p.db")" -f folded --exact --no-inline \
	>>"$tmp/before.folded" 2>/dev/null
is "$(same_stacks "$tmp/after.folded" "$tmp/before.folded")" 0 \
	"... the fleet's profile what it was (and the new run), stack by stack"
cut=$(ch 0 "SELECT toUInt32(min(bucket)) + 1800 FROM pruned.stacks_rollup WHERE toDate(bucket) = '$old_day'")
contains "$("$ICPPD" report --from "$url0/?database=pruned" --since "$cut" --k 1)" "its whole hours" \
	"... a window starting inside the dropped day: whole hours, said"
out=$("$ICPPD" export -d "$tmp/p.db" --retry "$url0/?raw_days=0" 2>&1)
is $? 1 "raw_days=0: refused"
contains "$out" "raw_days= takes a number of days, 1 to 36500" "... saying what it takes"

# A database an earlier icppd made (before the event columns): export
# adds what is missing (the local tables, then the views made again),
# and the old rows read as CPU samples.  Then off-CPU time (record
# --off-cpu) goes beside them and report --from --off-cpu gives the
# local report's stacks.
"$ICPPD" export --schema --ch-database old | sed -e '/^    event /d' -e '/^    blocked_us /d' \
	-e "s/'unknown' = 4),\$/'unknown' = 4)/" -e 's/samples UInt64,$/samples UInt64/' |
	clickhouse-client --port $((base + 1)) --multiquery
is "$(ch 0 "SELECT count() FROM system.columns WHERE database = 'old' AND name = 'event'")" 0 \
	"an old fleet database: no event columns"
"$ICPPD" report -d "$tmp/f.db" -f folded --exact --no-inline >"$tmp/old_local.folded" 2>/dev/null
ch 0 "INSERT INTO old.stacks_local SELECT segment, host, program, build_id, comm, pid,
	start_time, end_time, stack, weight, certain_frames, how FROM fresh.stacks_local"
if "$ICPPD" record -q --off-cpu -d "$tmp/o.db" -- true 2>"$tmp/probe.err"; then
	"$ICPPD" record -q --off-cpu -d "$tmp/o.db" -- "$PROGS/offcpu" 3 >/dev/null
	out=$("$ICPPD" export -d "$tmp/o.db" --run 2 "$url0/?database=old" 2>&1)
	is $? 0 "export into an old database: exit 0"
	contains "$out" "adding column event to old.stacks_local" "... adds the missing columns, saying so"
	is "$(ch 0 "SELECT count() FROM system.columns WHERE database = 'old' AND table IN ('stacks', 'stacks_local', 'cids', 'cids_local') AND name IN ('event', 'blocked_us')")" 6 \
		"... to the local tables and the views (made again)"
	is "$(ch 0 "SELECT count() FROM system.tables WHERE database = 'old' AND name LIKE '%rollup%'")" 8 \
		"... and the rollups, their views and their materialized views"
	is "$(ch 0 "SELECT since > now() FROM old.rollups")" 1 \
		"... which hold the rows from the next hour on (the rows before them are read raw)"
	is "$(ch 0 "SELECT event, count() > 0 FROM old.stacks GROUP BY event ORDER BY event" | tr '\t\n' ': ')" \
		"cpu:1 off-cpu:1 " "... the old rows read as CPU samples, the new run's off-CPU stacks beside them"
	is "$(ch 0 "SELECT sum(blocked_us) FROM old.cids WHERE event = 'off-cpu'")" \
		"$(q "SELECT sum(blocked_ns / 1000) FROM offcpu_samples WHERE run_id = 2" "$tmp/o.db")" \
		"the CID rows carry the microseconds blocked"
	"$ICPPD" report -d "$tmp/o.db" --run 2 --off-cpu -f folded --exact --no-inline >"$tmp/off_local.folded" 2>/dev/null
	"$ICPPD" report --from "$url0/?database=old" --off-cpu -f folded --exact >"$tmp/off_fleet.folded"
	is $? 0 "report --from --off-cpu: exit 0"
	is "$(same_stacks "$tmp/off_fleet.folded" "$tmp/off_local.folded")" 0 \
		"... the local off-CPU report, stack by stack"
	contains "$(cat "$tmp/off_fleet.folded")" "main;wait_timer;" "... the timer's wait under its caller"
	"$ICPPD" report -d "$tmp/o.db" --run 2 -f folded --exact --no-inline >>"$tmp/old_local.folded" 2>/dev/null
	"$ICPPD" report --from "$url0/?database=old" -f folded --exact >"$tmp/old_fleet.folded"
	is "$(same_stacks "$tmp/old_fleet.folded" "$tmp/old_local.folded")" 0 \
		"report --from without --off-cpu: the CPU samples alone, old rows and new"
	contains "$("$ICPPD" report --from "$url0/?database=old" --off-cpu)" "off-CPU, " \
		"... the text header says off-CPU time"
else
	for t in export migrate rows cids report stacks callers cpu header; do
		skip "record --off-cpu refused here: $(head -1 "$tmp/probe.err")" "off-CPU to ClickHouse: $t"
	done
fi

# A window that cuts an hour: its whole hours from the rollups, the
# rest raw; the same stacks as the raw rows alone.  A copy of the rows
# the exporter put in database fresh (which it made with its rollups)
# two hours back, through the local table (the materialized views feed
# the rollups), from the middle of its hour.
ch 0 "INSERT INTO fresh.stacks_local SELECT concat(segment, '/early'), host, program, build_id, comm,
	pid, start_time - 7200, end_time - 7200, stack, weight, certain_frames, how, event
	FROM fresh.stacks_local"
since=$(ch 0 "SELECT toUInt32(min(start_time)) FROM fresh.stacks WHERE segment LIKE '%/early'")
"$ICPPD" report --from "$url0/?database=fresh" --since "$since" -f folded --k inf --exact >"$tmp/window.folded"
ch 0 "SELECT arrayStringConcat(stack, ';'), sum(weight) FROM fresh.stacks
	WHERE end_time >= toDateTime($since) AND event = 'cpu' GROUP BY stack" | tr '\t' ' ' >"$tmp/window.raw"
is "$(same_stacks "$tmp/window.folded" "$tmp/window.raw")" 0 \
	"report --from --since inside an hour: rollup and raw rows together give the raw rows' sums, stack by stack"
ok $(awk '{ s += $NF } END { exit !(s > 0) }' "$tmp/window.raw"; echo $?) "... which are not empty"
text=$("$ICPPD" report --from "$url0/?database=fresh" --since "$since" --k 1)
contains "$text" "rows of the hourly rollups read, the rest raw" "... saying what it read"
contains "$text" "fleet ($url0/?database=fresh: 1 host, 2 runs)" "... two runs, the copy and its original"

# Writer a (this host) ships to shard 0; writer b, another host name (a
# UTS namespace of its own where there is one), to shard 1.
# (Without learning: a map that grows re-weighs the apportioned
# samples of the runs shipped before, whose local report would then
# differ from what the server holds.)
"$ICPPD" export -d "$tmp/a.db" --run 2 "$url0" >/dev/null 2>&1	# the run recorded while away
"$ICPPD" record -q --no-learn -d "$tmp/a.db" --export "$url0" -- "$prog" ab 30 >/dev/null 2>&1
is "$(q "SELECT count(*), sum(state = 'done') FROM exports WHERE target = '$url0'" "$tmp/a.db")" "2|2" \
	"writer a: both its runs acknowledged by shard 0"
"$ICPPD" train $TRAIN_OPTS -q -d "$tmp/b.db" -- "$prog" ab 30 >/dev/null
if [ "$(id -u)" -eq 0 ] && unshare --uts true 2>/dev/null; then
	unshare --uts sh -c "hostname icppd-host-b && \"$ICPPD\" record -q -d \"$tmp/b.db\" --export $url1 -- \"$prog\" ab 30" >/dev/null 2>&1
	hosts=2
else
	"$ICPPD" record -q -d "$tmp/b.db" --export "$url1" -- "$prog" ab 30 >/dev/null 2>&1
	hosts=1
fi
is "$(q "SELECT state FROM exports" "$tmp/b.db")" "done" "writer b: its run acknowledged by shard 1"
a_samples=$(q "SELECT sum(samples) FROM cid_samples WHERE run_id IN
	(SELECT run_id FROM exports WHERE target = '$url0')" "$tmp/a.db")
b_samples=$(q "SELECT sum(samples) FROM cid_samples WHERE run_id IN
	(SELECT run_id FROM exports)" "$tmp/b.db")
is "$(ch 0 "SELECT sum(samples) FROM icppd.cids_local")" "$a_samples" "shard 0 holds writer a's CID counts"
is "$(ch 1 "SELECT sum(samples) FROM icppd.cids_local")" "$b_samples" "shard 1 holds writer b's"
is "$(ch 0 "SELECT sum(samples) FROM icppd.cids")" "$((a_samples + b_samples))" \
	"the Distributed table: the union of both"
is "$(ch 1 "SELECT count(DISTINCT host) FROM icppd.stacks")" "$hosts" "... from $hosts host names"
is "$(ch 0 "SELECT toString(round(sum(weight), 6)) FROM icppd.stacks")" \
	"$(ch 0 "SELECT toString(round(sum(samples), 6)) FROM icppd.cids")" \
	"the stacks' weights add up to the samples"
is "$(ch 0 "SELECT countIf(stack[1] = '_start') > 0 FROM icppd.stacks WHERE how = 'precise'")" 1 \
	"precise stacks are whole, from _start"
is "$(q "SELECT sum(stack_rows) FROM exports" "$tmp/a.db")" \
	"$(ch 0 "SELECT count() FROM icppd.stacks_local")" "the spool counts the rows the server holds"

# The fleet's report, k-contexts summed by ClickHouse over both shards:
# the union of the local reports of the runs exported (weights as
# fractions, summed per stack; physical frames, as the export has them).
for r in $(q "SELECT run_id FROM exports WHERE target = '$url0'" "$tmp/a.db"); do
	"$ICPPD" report -d "$tmp/a.db" --run "$r" -f folded --exact --no-inline 2>/dev/null
done >"$tmp/local.folded"
"$ICPPD" report -d "$tmp/b.db" -f folded --exact --no-inline >>"$tmp/local.folded" 2>/dev/null
"$ICPPD" report --from "$url0" -f folded --exact >"$tmp/fleet.folded"
is $? 0 "report --from: exit 0"
is "$(same_stacks "$tmp/fleet.folded" "$tmp/local.folded")" 0 \
	"report --from over the cluster: the union of the local reports, stack by stack"
ok $([ -s "$tmp/fleet.folded" ]; echo $?) "... which is not empty"
# the same runs into one server's database: the cluster's report is the
# single node's, at k = 3 and whole
cp "$tmp/a.db" "$tmp/a1.db"
cp "$tmp/b.db" "$tmp/b1.db"
rm -f "$tmp"/a1.db-* "$tmp"/b1.db-*
q "DELETE FROM exports" "$tmp/b1.db"
"$ICPPD" export -d "$tmp/a1.db" --all "$url0/?database=single" >/dev/null 2>&1
"$ICPPD" export -d "$tmp/b1.db" --all "$url0/?database=single" >/dev/null 2>&1
for k in 3 inf; do
	"$ICPPD" report --from "$url0" --k $k -f folded --exact >"$tmp/cluster.$k"
	"$ICPPD" report --from "$url0/?database=single" --k $k -f folded --exact >"$tmp/single.$k"
	is "$(same_stacks "$tmp/cluster.$k" "$tmp/single.$k")" 0 \
		"report --from --k $k: the two-shard cluster's report is the single node's, stack by stack"
done
text=$("$ICPPD" report --from "$url0" --k 3)
rolled=$(printf '%s\n' "$text" | sed -n 's/^read: .* (\([0-9]*\) rows of the hourly rollups read, the rest raw)$/\1/p')
ok $([ "${rolled:-0}" -gt 0 ]; echo $?) "report --from: the sums of the hourly rollups read ($rolled rows)"

contains "$text" "fleet ($url0: $hosts host" "report --from: the header names the fleet read"
contains "$text" "<- main" "report --from --k 3: callers, as a local report shows them"
if [ "$hosts" -eq 2 ]; then
	is "$("$ICPPD" report --from "$url0" --host icppd-host-b -f folded --exact |
		awk '{ s += $NF } END { printf "%.0f\n", s }')" "$b_samples" "report --from --host: that host's samples"
else
	skip "no UTS namespace for a second host name" "report --from --host"
fi
# every format, from the same stacks: the flame graph, pprof, JSON
fleet_total=$(awk '{ s += $NF } END { printf "%.0f\n", s }' "$tmp/fleet.folded")
"$ICPPD" report --from "$url0" -f svg -o "$tmp/fleet.svg"
is $? 0 "report --from -f svg: exit 0"
ok $(xmllint --noout "$tmp/fleet.svg" 2>/dev/null; echo $?) "... a well-formed SVG"
contains "$(cat "$tmp/fleet.svg")" ">main<" "... drawing main"
"$ICPPD" report --from "$url0" -f json -o "$tmp/fleet.json"
is $? 0 "report --from -f json: exit 0"
ok $(python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/fleet.json" 2>/dev/null; echo $?) \
	"... valid JSON"
"$ICPPD" report --from "$url0" -f pprof -o "$tmp/fleet.pb.gz"
is $? 0 "report --from -f pprof: exit 0"
gopprof=/usr/share/gocode/src/github.com/google/pprof/profile
if command -v go >/dev/null && [ -d "$gopprof" ] &&
	GOPATH=/usr/share/gocode GO111MODULE=off GOCACHE="$tmp/gocache" GOFLAGS= \
	go build -o "$tmp/pprof_check" "$TESTS_SRCDIR/consumers/pprof_check.go" >"$tmp/go.log" 2>&1; then
	pc=$("$tmp/pprof_check" "$tmp/fleet.pb.gz" main 2>&1)
	is $? 0 "... which the Go pprof parser reads and finds valid"
	all=$(printf '%s\n' "$pc" | sed -n 's/^total0 //p')
	ok $(awk -v a="${all:-0}" -v f="$fleet_total" 'BEGIN { exit !(a >= f - 1 && a <= f + 1) }'; echo $?) \
		"... holding the fleet's samples ($all of $fleet_total)"
else
	skip "the Go pprof parser is not installed" "report --from -f pprof: read by Go's parser"
	skip "the Go pprof parser is not installed" "report --from -f pprof: the fleet's samples"
fi
out=$("$ICPPD" report --from http://127.0.0.1:9 2>&1)
is $? 1 "report --from a server that is away: exit 1"
contains "$out" "icppd: report --from: http://127.0.0.1:9: " "... says which and why"
out=$("$ICPPD" report --from "$url0" --sort comm 2>&1)
is $? 2 "report --from with --sort: usage error"
out=$("$ICPPD" report --from "$url0" --exe nothing-of-that-name 2>&1)
is $? 1 "report --from with no run matching: exit 1"
contains "$out" "no exported run matches" "... says so"

# Outage: shard 0 stops; a run recorded meanwhile stays queued.
stop_server 0
out=$("$ICPPD" record -d "$tmp/a.db" --export "$url0" -- "$prog" ab 30 2>&1 >/dev/null)
is $? 0 "outage: record still succeeds"
contains "$out" "stays queued" "outage: record says the run stays queued"
run=$(q "SELECT max(run_id) FROM exports" "$tmp/a.db")
is "$(q "SELECT state FROM exports WHERE run_id = $run" "$tmp/a.db")" pending "outage: the run is pending"
is "$(integrity "$tmp/a.db")" ok "outage: the database stays valid"
start_server 0
# the next run's export ships the one the outage left waiting (its
# backoff not over) as well
"$ICPPD" record --no-learn -d "$tmp/a.db" --export "$url0" -- "$prog" ab 30 >"$tmp/back.out" 2>&1
is "$(q "SELECT state FROM exports WHERE run_id = $run" "$tmp/a.db")" done \
	"back: the next record --export ships the queued run too"
out=$("$ICPPD" export -d "$tmp/a.db" --retry "$url0" 2>&1)
is $? 0 "back: export --retry exits 0"
key=$(ch 0 "SELECT DISTINCT segment FROM icppd.stacks_local" | grep "/$run\$")
rows=$(q "SELECT stack_rows FROM exports WHERE run_id = $run" "$tmp/a.db")
is "$(ch 0 "SELECT count() FROM icppd.stacks_local WHERE segment = '$key'")" "$rows" \
	"back: its rows arrived once ($rows)"
# An acknowledgement lost: the spool still thinks it pending.
q "UPDATE exports SET state = 'pending' WHERE run_id = $run" "$tmp/a.db"
"$ICPPD" export -d "$tmp/a.db" --retry "$url0" >/dev/null 2>&1
is "$(ch 0 "SELECT count() FROM icppd.stacks_local WHERE segment = '$key'")" "$rows" \
	"a retry after a lost acknowledgement duplicates nothing"
is "$(ch 0 "SELECT count() FROM icppd.cids_local WHERE segment = '$key'")" \
	"$(q "SELECT cid_rows FROM exports WHERE run_id = $run" "$tmp/a.db")" "... in either table"
is "$(ch 0 "SELECT count(DISTINCT segment) FROM icppd.stacks_local")" 4 "shard 0: writer a's four runs, once each"

# Fleet learning: the path maps went with the runs, one version per
# run of each database.
is "$(ch 0 "SELECT count(DISTINCT source) FROM icppd.paths")" 2 "the path maps of both writers are in the cluster"
is "$(ch 0 "SELECT count() FROM icppd.paths_local WHERE segment = '$key'")" \
	"$(q "SELECT count(*) FROM path_nodes n JOIN path_maps m ON m.id = n.map_id WHERE m.run_id = 0" "$tmp/a.db")" \
	"a run ships its database's whole map of the program"
# A host that never ran the program: empty database, no learning.
out=$("$ICPPD" record --no-learn -d "$tmp/c.db" --export "$url1" -- "$prog" ab 30 2>&1 >/dev/null)
is $? 0 "host c: record --no-learn --export into an empty database"
contains "$out" "paths learned by 2 other hosts, from $url1" "host c: pulls the map both writers learned"
is "$(q "SELECT paths > 0, sources FROM fleet_pulls" "$tmp/c.db")" "1|2" "host c: the pull is remembered"
is "$(q "SELECT count(*) FROM path_nodes WHERE self < 0 OR total < self" "$tmp/c.db")" 0 "host c: the merged counts are sound"
rep=$("$ICPPD" report -d "$tmp/c.db" -f folded 2>&1)
is $? 0 "host c: its first run is reported with call paths"
contains "$rep" "main;via_a " "host c: ... through main, as the writers' maps have it"
contains "$rep" "main;via_b " "host c: ... both callers"
out=$("$ICPPD" record -q --no-learn -d "$tmp/d.db" -- "$prog" ab 30 2>&1 >/dev/null)
out=$("$ICPPD" report -d "$tmp/d.db" 2>&1)
is $? 0 "without the fleet the same first run has no path map: reported"
contains "$out" "no path map for $prog" "... and says so"
is "$(ch 0 "SELECT count() FROM icppd.paths WHERE source = '$(hostname)/$(q "SELECT id FROM identity" "$tmp/c.db")'")" 0 \
	"host c ships no path of its own: what it pulled never goes back"
"$ICPPD" record -q --no-learn -d "$tmp/c.db" --export "$url1" -- "$prog" ab 30 >/dev/null 2>&1
is "$(q "SELECT count(*) FROM fleet_pulls" "$tmp/c.db")" 1 "host c: a build is pulled once"

# A daemon exports each segment, through an outage of its server.
if [ "$(id -u)" -ne 0 ]; then
	skip "needs root" "daemon export checks"
	done_testing
	exit
fi
db=$tmp/daemon.db
sock=$tmp/d.sock
# The daemon watches the whole machine and other tests run collide at
# the same time (make check -j): watch a private copy.
prog=$tmp/collide-daemon
cp "$PROGS/collide" "$prog"
out=$("$ICPPD" daemon --foreground -d "$db" --socket "$sock" --exe "$prog" --export ftp://x 2>&1)
is $? 1 "daemon --export with a URL that is not http: exit 1 at once"
contains "$out" "ftp://x: not an http:// or https:// URL" "... and says why"
"$ICPPD" daemon --foreground -d "$db" --socket "$sock" -F 500 --flush-interval 0.5 \
	--segment 1 --exe "$prog" --export "$url0" 2>"$tmp/daemon.log" &
dpid=$!
trap 'kill -9 $dpid 2>/dev/null; cleanup' EXIT
i=0
while [ ! -S "$sock" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
"$prog" ab 20 >/dev/null
# segments ship while it samples: wait for the first
i=0
while [ "$(q "SELECT count(*) FROM exports WHERE state = 'done' AND stack_rows > 0" "$db")" = 0 ] && [ $i -lt 100 ]; do
	sleep 0.2; i=$((i + 1))
done
st=$("$ICPPD" ctl --socket "$sock" status)
contains "$st" "export $url0: " "ctl status: the export and its lag"
stop_server 0
"$prog" ab 20 >/dev/null
# a segment or two end while the server is away, and an export of one
# fails: 1.5 s on a quiet machine, longer in a loaded ASan suite (a full
# one here had none yet at 1.5 s), so up to 15 s
i=0
while st=$("$ICPPD" ctl --socket "$sock" status) &&
	case $st in *"last error: $url0"*) false ;; *) [ $i -lt 75 ] ;; esac; do
	sleep 0.2; i=$((i + 1))
done
contains "$st" "last error: $url0" "ctl status: the outage, with the server's error"
ok $(printf '%s\n' "$st" | grep -q "export $url0: [1-9][0-9]* runs\? waiting"; echo $?) \
	"ctl status: segments wait in the spool"
start_server 0
"$prog" ab 20 >/dev/null
kill -TERM $dpid
wait $dpid
is $? 0 "the daemon stops cleanly"
# back: every queued segment arrives (the last try waits out its backoff)
i=0
while [ "$(q "SELECT count(*) FROM exports WHERE state = 'pending'" "$db")" != 0 ] && [ $i -lt 60 ]; do
	"$ICPPD" export -d "$db" --due "$url0" >/dev/null 2>&1
	sleep 0.5; i=$((i + 1))
done
is "$(q "SELECT count(*) FROM exports WHERE state = 'pending'" "$db")" 0 "after the outage every segment is shipped"
ok $([ "$(q "SELECT max(attempts) FROM exports" "$db")" -gt 1 ]; echo $?) "... some after failed tries"
dbid=$(q "SELECT id FROM identity" "$db")
is "$(ch 0 "SELECT count(DISTINCT segment) FROM icppd.cids_local WHERE segment LIKE '%/$dbid/%'")" \
	"$(q "SELECT count(*) FROM exports WHERE cid_rows > 0" "$db")" "each segment with samples arrived"
is "$(ch 0 "SELECT sum(samples) FROM icppd.cids_local WHERE segment LIKE '%/$dbid/%'")" \
	"$(q "SELECT sum(samples) FROM cid_samples WHERE run_id IN (SELECT id FROM runs WHERE kind = 'daemon')" "$db")" \
	"every sample arrived exactly once"
is "$(ch 0 "SELECT count() FROM icppd.stacks_local WHERE segment LIKE '%/$dbid/%'")" \
	"$(q "SELECT sum(stack_rows) FROM exports" "$db")" "and every segment's stacks, once"
is "$(integrity "$db")" ok "the daemon's database stays valid"

# A server that takes connections and never answers (stopped): a stop
# waits 5 s for the exporter's round, then 5 s for the last segment's,
# and kills each; the segments stay queued.  Before, the stop waited on
# the exporter, then shipped the last segment itself, each query out
# to curl's 120 s timeout: 358.5 s (bench/attack.sh, exporter).
chp=$(cat "$chdir/0/pid")
"$ICPPD" daemon --foreground -d "$tmp/hang.db" --socket "$sock" -F 500 \
	--flush-interval 0.5 --segment 1 --exe "$prog" --export "$url0" \
	2>"$tmp/hang.log" &
dpid=$!
i=0
while [ ! -S "$sock" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
kill -STOP "$chp"
"$prog" ab 20 >/dev/null
sleep 1.5	# a segment ends: an exporter starts and waits on the server
start=$(now_ms)
kill -TERM $dpid
wait $dpid
rc=$?
took=$(($(now_ms) - start))
kill -CONT "$chp"
is $rc 0 "a server that never answers: the daemon stops cleanly"
ok $([ $took -lt 30000 ]; echo $?) "... in $took ms (an exporter has 5 s at a stop)"
contains "$(cat "$tmp/hang.log")" "past its budget: killed, its runs stay queued" \
	"... and says it killed the exporter"
ok $([ "$(q "SELECT count(*) FROM exports WHERE state = 'pending'" "$tmp/hang.db")" -ge 1 ]; echo $?) \
	"... whose segments stay queued"
done_testing
