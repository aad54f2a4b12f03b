#!/bin/sh
# bench/fleet.sh - the fleet's cost, in one run, against a private
# clickhouse-server on loopback (scripts/chserver.sh).
#
# 1. The daemon with and without --export: a 2-thread workload of 8 s of
#    CPU watched at 99 Hz in 1 s segments (every segment exported while
#    it samples); the workload's and the daemon's CPU (with its exporter
#    processes, which it reaps) and the daemon's peak RSS.  REPS rounds,
#    interleaved, medians.
# 2. Export throughput: the segments of a daemon database (the same
#    workload at 2 kHz) shipped by "icppd export --all" into a fresh
#    ClickHouse database each round: segments and rows per second
#    (stacks, CIDs and path-map nodes), and ClickHouse's bytes on disk
#    per million samples.
# 3. A fleet report: 100 million samples from 1,000 synthetic hosts (two
#    segments each, 1,000,000 stack rows, up to 16,384 distinct stacks
#    of 10 frames from 66 function names, skewed), "icppd report --from URL --k 3" against the same
#    aggregation by clickhouse-client alone (the floor: the query
#    without icppd's rendering).  Target: the report under 2 s.
#
# Needs root (the daemon samples every CPU) and clickhouse-server.
# Usage: bench/fleet.sh [BUILDDIR]; environment: REPS (default 5).
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "bench: run as root" >&2; exit 1; }
command -v clickhouse-server >/dev/null ||
	{ echo "bench: no clickhouse-server (apt-get install clickhouse-server clickhouse-client)" >&2; exit 1; }
. "$top/scripts/chserver.sh"
chmod 711 "$work"
port=$((30000 + $$ % 1000 * 3))
url=http://127.0.0.1:$port
trap '[ -f "$work/ch/pid" ] && ch_stop "$work/ch"; rm -rf "$work"' EXIT
ch_start "$work/ch" $port $((port + 1)) $((port + 2)) || exit 1
ch() {
	clickhouse-client --port $((port + 1)) -q "$1"
}
schema() {	# schema NAME: a fresh ClickHouse database of that name
	ch "DROP DATABASE IF EXISTS $1"
	"$icppd" export --schema --ch-database "$1" |
		clickhouse-client --port $((port + 1)) --multiquery
}
sock=$work/d.sock
workload="$progs/threads 4000 2"

daemon_cost() {	# daemon_cost MODE: "workload_cpu daemon_cpu daemon_kib"
	rm -f "$work"/d.db* "$sock"
	x=
	if [ "$1" = export ]; then
		schema d
		x="--export $url/?database=d"
	fi
	/usr/bin/time -f '%U %S %M' -o "$work/dtime" "$icppd" daemon --foreground \
		-d "$work/d.db" --socket "$sock" -F 99 --flush-interval 1 --segment 1 \
		--exe "$progs/threads" $x 2>/dev/null &
	dpid=$!
	tries=0
	while [ ! -S "$sock" ] && [ $tries -lt 100 ]; do sleep 0.1; tries=$((tries + 1)); done
	/usr/bin/time -f '%U %S' -o "$work/t" $workload >/dev/null 2>&1
	"$icppd" ctl --socket "$sock" stop >/dev/null
	wait $dpid
	[ "$1" = export ] && sqlite3 "$work/d.db" \
		"SELECT count(*) || '/' || sum(state = 'done') FROM exports" >"$work/segs"
	paste "$work/t" "$work/dtime" | awk '{ printf "%.3f %.3f %d\n", $1 + $2, $3 + $4, $5 }'
}
modes="no-export export"
interleave cost daemon_cost
echo "== the daemon with --export: $workload at 99 Hz, 1 s segments ($reps rounds, medians)"
printf '%-10s %13s %11s %14s %9s\n' mode workload_cpu daemon_cpu daemon_peak segments
segs=$(cat "$work/segs")
for m in $modes; do
	printf '%-10s %12ss %10ss %10.1f MiB %9s\n' "$m" "$(col cost "$m" 1)" "$(col cost "$m" 2)" \
		"$(echo "$(col cost "$m" 3)" | awk '{ print $1 / 1024 }')" \
		"$([ "$m" = export ] && echo "$segs" || echo -)"
done
echo "  (segments: queued/acknowledged in the last export round)"

echo "== export throughput: a daemon database at 2 kHz, 1 s segments, shipped by icppd export --all"
rm -f "$work"/s.db* "$sock"
"$icppd" daemon --foreground -d "$work/s.db" --socket "$sock" -F 2000 --flush-interval 1 \
	--segment 1 --exe "$progs/threads" 2>/dev/null &
dpid=$!
tries=0
while [ ! -S "$sock" ] && [ $tries -lt 100 ]; do sleep 0.1; tries=$((tries + 1)); done
$workload >/dev/null 2>&1
"$icppd" ctl --socket "$sock" stop >/dev/null
wait $dpid
i=0
while [ $i -lt "$reps" ]; do
	schema "t$i"
	cp "$work/s.db" "$work/r.db"
	rm -f "$work"/r.db-*
	/usr/bin/time -f '%e' -o "$work/et" "$icppd" export -d "$work/r.db" --all "$url/?database=t$i" >/dev/null
	n=$(sqlite3 "$work/r.db" "SELECT count(*) FROM exports WHERE state = 'done'")
	rows=$(ch "SELECT (SELECT count() FROM t$i.stacks) + (SELECT count() FROM t$i.cids) + (SELECT count() FROM t$i.paths)")
	echo "$(cat "$work/et") $n $rows" >>"$work/export"
	i=$((i + 1))
done
secs=$(cut -d' ' -f1 "$work/export" | median)
n=$(tail -1 "$work/export" | cut -d' ' -f2)
rows=$(tail -1 "$work/export" | cut -d' ' -f3)
samples=$(ch "SELECT sum(samples) FROM t0.cids")
bytes=$(ch "SELECT sum(bytes_on_disk) FROM system.parts WHERE database = 't0' AND active")
echo "$secs $n $rows $samples $bytes" | awk '{
	printf "  %d segments, %d rows, %d samples in %.2f s (median): %.1f segments/s, %.0f rows/s\n", $2, $3, $4, $1, $2 / $1, $3 / $1
	printf "  ClickHouse: %.1f KiB on disk, %.1f MiB per million samples\n", $5 / 1024, $5 / 1048576 / ($4 / 1e6) }'

echo "== a fleet report: 100,000,000 samples from 1,000 synthetic hosts, k = 3"
schema synth
ch "INSERT INTO synth.stacks_local SELECT
	concat('host', toString(number % 1000), '/synth/', toString(intDiv(number, 1000) % 2)),
	concat('host', toString(number % 1000)), '/usr/bin/app', 'synthbuild', 'app',
	toUInt32(1000 + number % 1000),
	toDateTime(1795000000 + 600 * (intDiv(number, 1000) % 2)),
	toDateTime(1795000600 + 600 * (intDiv(number, 1000) % 2)),
	arrayConcat(['_start', 'main'], arrayMap(j -> concat('fn', toString(j), '_',
		toString(bitShiftRight(intHash32(number) % (1 + intHash32(number + 7) % 16384), 2 * (7 - j)) % 8)),
		range(8))),
	toFloat64(100), toUInt16(3), toInt8(1 + intHash32(number + 1) % 3)
	FROM numbers(1000000)"
echo "  $(ch "SELECT sum(weight), uniqExact(host), count(), uniqExact(stack) FROM synth.stacks" |
	awk '{ printf "%d samples, %d hosts, %d rows, %d distinct stacks", $1, $2, $3, $4 }')"
fleet() {	# fleet MODE: wall seconds
	case $1 in
	icppd-report) /usr/bin/time -f '%e' -o "$work/ft" "$icppd" report --from "$url/?database=synth" --k 3 >"$work/rep" ;;
	clickhouse-client) /usr/bin/time -f '%e' -o "$work/ft" clickhouse-client --port $((port + 1)) -q \
		"SELECT arraySlice(stack, -4) AS context, how, sum(weight), min(certain_frames) FROM synth.stacks
		 GROUP BY context, how FORMAT TabSeparated" >/dev/null ;;
	esac
	cat "$work/ft"
}
modes="icppd-report clickhouse-client"
interleave fleet fleet
printf '%-18s %8s\n' mode seconds
for m in $modes; do
	printf '%-18s %8s\n' "$m" "$(col fleet "$m" 1)"
done
echo "  ratio icppd/clickhouse-client: $(echo "$(col fleet icppd-report 1) $(col fleet clickhouse-client 1)" | awk '{ printf "%.2f", $1 / $2 }'); target: report under 2 s"
echo "  the report's head:"
sed -n '1,12p' "$work/rep" | sed 's/^/    /'
