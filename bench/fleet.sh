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
# 4. A fleet of real segments (PARTS=scale, or all): one record of a
#    make exported, its stacks, CIDs and path-map rows copied as the
#    10-minute segments of 1,000 hosts (100, 1,000, 3,000 and 10,000 of
#    them, through the local tables, so the materialized views feed the
#    rollups as exports do); at each size the report of all hosts and of
#    one host (median of REPS), the same aggregation over the raw rows
#    by clickhouse-client alone (what every report cost before the
#    rollups), and the k = 3 overlap of the fleet's profile with the
#    exported run's own (every copy is that run: the sum of the exports
#    has its shares).  Targets at 3,000: all hosts < 5 s, one host < 1 s,
#    overlap >= 0.999; the time per segment flat or falling.
#
# Needs root (the daemon samples every CPU) and clickhouse-server.
# Usage: bench/fleet.sh [BUILDDIR]; environment: REPS (default 5),
# PARTS (default "daemon export synth scale"), SIZES (default
# "100 1000 3000 10000").
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

part_daemon() {
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

}

part_export() {
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

}

fleet() {	# fleet MODE: wall seconds
	case $1 in
	icppd-report) /usr/bin/time -f '%e' -o "$work/ft" "$icppd" report --from "$url/?database=synth" --k 3 >"$work/rep" ;;
	clickhouse-client) /usr/bin/time -f '%e' -o "$work/ft" clickhouse-client --port $((port + 1)) -q \
		"SELECT arraySlice(stack, -4) AS context, how, sum(weight), min(certain_frames) FROM synth.stacks
		 GROUP BY context, how FORMAT TabSeparated" >/dev/null ;;
	esac
	cat "$work/ft"
}

part_synth() {
	echo "== a fleet report: 100,000,000 samples from 1,000 synthetic hosts, k = 3"
	schema synth
	ch "INSERT INTO synth.stacks_local (segment, host, program, build_id, comm, pid,
		start_time, end_time, stack, weight, certain_frames, how) SELECT
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
	modes="icppd-report clickhouse-client"
	interleave fleet fleet
	printf '%-18s %8s\n' mode seconds
	for m in $modes; do
		printf '%-18s %8s\n' "$m" "$(col fleet "$m" 1)"
	done
	echo "  ratio icppd/clickhouse-client: $(echo "$(col fleet icppd-report 1) $(col fleet clickhouse-client 1)" | awk '{ printf "%.2f", $1 / $2 }'); target: report under 2 s"
	echo "  the report's head:"
	sed -n '1,12p' "$work/rep" | sed 's/^/    /'
}

# The stack rows' columns, a copy's segment, host and times put in.
copy_of() {	# copy_of TABLE COLUMNS: the SELECT list of a copy
	echo "$2" | sed -e 's/\<segment\>/@SEG@/; s/\<host\>/@HOST@/; s/\<start_time\>/@START@/; s/\<end_time\>/@END@/' \
		-e "s|@SEG@|concat('host', toString(i % 1000), '/scale/', toString(i)) AS segment|" \
		-e "s|@HOST@|concat('host', toString(i % 1000)) AS host|" \
		-e "s|@START@|toDateTime($base + 600 * intDiv(i, 1000)) AS start_time|" \
		-e "s|@END@|toDateTime($base + 600 * intDiv(i, 1000) + 600) AS end_time|"
}
columns_of() {	# columns_of TABLE: its columns, comma-separated
	ch "SELECT name FROM system.columns WHERE database = 'scale' AND table = '$1'" | paste -sd, | sed 's/,/, /g'
}
grow() {	# grow FROM TO: segments FROM..TO-1 of the fleet, copies of the run
	from=$1
	while [ "$from" -lt "$2" ]; do	# 250 at a time: an INSERT's memory
		to=$((from + 250 < $2 ? from + 250 : $2))
		for t in stacks cids paths; do
			ch "INSERT INTO scale.${t}_local SELECT $(copy_of $t "$(columns_of ${t}_local)")
				FROM (SELECT * FROM scale.${t}_local WHERE segment = '$orig')
				ARRAY JOIN arrayMap(x -> x + $from, range(toUInt32($to - $from))) AS i"
		done
		from=$to
	done
}
fleet_report() {	# fleet_report MODE: "seconds overlap"
	case $1 in
	all) /usr/bin/time -f '%e' -o "$work/ft" "$icppd" report --from "$url/?database=scale" \
		-f folded --k 3 --exact >"$work/fleet.folded" 2>"$work/fleet.err" ||
		cat "$work/fleet.err" >&2 ;;
	host) /usr/bin/time -f '%e' -o "$work/ft" "$icppd" report --from "$url/?database=scale" \
		--host host7 -f folded --k 3 --exact >"$work/fleet.folded" 2>"$work/fleet.err" ||
		cat "$work/fleet.err" >&2 ;;
	raw) /usr/bin/time -f '%e' -o "$work/ft" clickhouse-client --port $((port + 1)) -q \
		"SELECT arraySlice(stack, -4) AS context, how, sum(weight), min(certain_frames)
		 FROM scale.stacks WHERE event = 'cpu' GROUP BY context, how FORMAT TabSeparated" >/dev/null
		echo "$(cat "$work/ft") -"; return ;;
	esac
	echo "$(cat "$work/ft") $("$icppd" compare -d "$work/m.db" --k 3 "$work/run.folded" "$work/fleet.folded" |
		awk '/^degree of overlap/ { print $4 }')"
}
part_scale() {
	echo "== a fleet of real segments: one record of a make, copied as 1,000 hosts' 10-minute segments"
	make_cproject "$work/proj"
	rm -f "$work"/m.db*
	"$icppd" record -q -d "$work/m.db" -- make -s -B -C "$work/proj" >/dev/null
	ch "DROP DATABASE IF EXISTS scale"
	"$icppd" export -d "$work/m.db" --all "$url/?database=scale" >/dev/null 2>&1
	orig=$(ch "SELECT any(segment) FROM scale.stacks")
	"$icppd" report -d "$work/m.db" -f folded --k 3 --exact --no-inline >"$work/run.folded" 2>/dev/null
	echo "  the run: $(ch "SELECT count() FROM scale.stacks") stack rows, $(ch "SELECT count() FROM scale.cids") CID rows, $(ch "SELECT count() FROM scale.paths") path-map rows a segment"
	base=$(ch "SELECT toUInt32(toStartOfHour(now())) - 86400")
	printf '%9s %11s %9s %9s %12s %10s %10s %10s\n' segments stack_rows all_s host_s raw_client_s all_ms/seg overlap host_ovl
	have=1
	for n in ${SIZES:-100 1000 3000 10000}; do
		grow "$have" "$n"
		have=$n
		modes="all host raw"
		interleave "scale$n" fleet_report
		printf '%9s %11s %9s %9s %12s %10s %10s %10s\n' "$n" \
			"$(ch "SELECT count() FROM scale.stacks")" \
			"$(col "scale$n" all 1)" "$(col "scale$n" host 1)" "$(col "scale$n" raw 1)" \
			"$(awk -v s="$(col "scale$n" all 1)" -v n="$n" 'BEGIN { printf "%.3f", 1000 * s / (n + 1) }')" \
			"$(col "scale$n" all 2)" "$(col "scale$n" host 2)"
	done
	echo "  (the exported run is segment 0 of host0, the copies 1..N-1; raw_client_s: clickhouse-client's"
	echo "   aggregation of the raw rows, what report --from read before the rollups; overlap: k = 3"
	echo "   against the run's own report, the sum of identical exports)"
	sed -n '1,2p' "$work/fleet.err" | sed 's/^/  /'
	"$icppd" report --from "$url/?database=scale" --k 3 | sed -n '1,2p' | sed 's/^/  /'
}

for part in ${PARTS:-daemon export synth scale}; do
	part_$part
done
