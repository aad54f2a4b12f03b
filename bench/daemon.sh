#!/bin/sh
# bench/daemon.sh - the daemon's cost, in one run.
#
# 1. Overhead on a multi-threaded workload (tests/progs/threads, 4
#    threads on this machine's CPUs): CPU time of the workload alone,
#    with icppd daemon watching it (99 Hz), with perf record -a -F 99,
#    and with perf record -a -F 99 --call-graph dwarf; and the CPU time
#    of the profiler itself (the daemon's, or perf's minus the
#    workload's).  REPS rounds, interleaved, medians.
#    The daemon learns call paths by default; icppd-daemon-nolearn is
#    the same with --no-learn.
# 2. An hour of samples at 99 Hz on 2 busy CPUs (712 800 samples),
#    taken faster (10 kHz): the daemon's peak memory, and the database's
#    growth per million samples.
# 3. Learning while profiling: two python3 processes nobody trained
#    (json and sorting, 15 s of CPU each), watched at 10 kHz with the
#    learning event at 2.5 kHz (the default 99 and 25 Hz, sped up), in
#    segments of 3 s: per segment, the samples whose identifier the
#    paths learned so far did not explain when seen, the unknown
#    callers of a report of that segment, and the daemon's own CPU
#    (its recorder.cpu_ms: ms, us a sample, and the share of the CPU
#    the samples stand for).
# 4. The daemon's own case: cc1 watched through ten make -B of one small
#    C project (lib.sh), at the default 99 Hz and at -F 999, learning at
#    the default 25 Hz, in segments of 3 s (about one make each): per
#    segment as in 3, the same past the first segment (which learns the
#    first paths: what a daemon running for days costs), both rates on a
#    CFI cache warmed first (a daemon's is kept across restarts; what the
#    first sight of the builds costs once is printed), the daemon's CPU
#    over the makes' and over cc1's (the watched processes', as their
#    samples stand for), and the k = 3
#    ratio of its profile of cc1 (every segment, icppd report --since 0
#    --exe cc1): its overlap with perf record --call-graph dwarf's of
#    as many more makes at the same rate, over two such perf runs' overlap
#    (bench/accuracy.sh's method); and again with the stacks of one
#    frame dropped from all three (perf's unwinding stopped at the first
#    step for 3-4 % of cc1's samples; icppd's profile has none); and what
#    a flat profile costs there: perf record -a at the same rate without
#    a call graph through as many makes, its CPU over cc1's and the
#    makes'.
# 5. A machine that forks: a shell spawning subshells (a fork and an
#    exit each, no exec) for 5 s, alone, under the daemon (99 Hz,
#    watching cc1, which does not run) and under perf record -a -F 99:
#    subshells a second, the loop's CPU per subshell, the profiler's
#    CPU and its wakes (voluntary context switches); then the same with
#    each subshell exec'ing /bin/true (execs of a program the daemon
#    does not watch).  REPS rounds, interleaved, medians.
#
# Needs root (every CPU is sampled).
# Usage: bench/daemon.sh [BUILDDIR]; environment: REPS (default 5),
# PARTS (default "1 2 3 4 5": the parts to run), HZS (part 4's rates,
# default "99 999"), DAEMON_OPTS (more daemon options in part 4, e.g.
# "--leaf-freq 250"), MAKES (part 4's makes, default 10: more show what
# the segments cost as the map fills).
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "bench: run as root" >&2; exit 1; }
workload="$progs/threads 540 4"
sock=$work/d.sock
parts=${PARTS:-1 2 3 4 5}
part() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }

start_daemon() {	# start_daemon DB HZ [ARGS...]: the daemon under time,
	# pid in $dpid; ARGS default to watching the threads workload
	d=$1 hz=$2
	shift 2
	[ $# -gt 0 ] || set -- --exe "$progs/threads"
	rm -f "$sock"
	/usr/bin/time -f '%U %S %M %w' -o "$work/dtime" "$icppd" daemon --foreground \
		-d "$d" --socket "$sock" -F "$hz" --flush-interval 10 "$@" \
		2>/dev/null &
	dpid=$!
	tries=0	# not i: interleave counts its rounds in i
	while [ ! -S "$sock" ] && [ $tries -lt 100 ]; do
		sleep 0.1
		tries=$((tries + 1))
	done
}

start_perf_a() {	# start_perf_a DATA HZ: perf record -a, no call graph,
	# under time (its CPU on $work/dtime's last line), pid in $dpid
	/usr/bin/time -f '%U %S %M %w' -o "$work/dtime" \
		perf record -q -a -F "$2" -o "$1" 2>/dev/null &
	dpid=$!
	sleep 1
}

stop_perf_a() {	# SIGINT to perf itself (time passes none on), then its end
	kill -INT "$(pgrep -P "$dpid" perf || echo "$dpid")" 2>/dev/null
	wait "$dpid" || true	# perf's status after SIGINT
}

# segments DB HZ: per daemon segment of DB, its samples, learned paths,
# the tail (the share of its samples whose leaf copy was of a CID no
# path explained yet, each unwound: leaf.unknown), the share
# unexplained when seen (after those copies), the unknown callers of
# its report,
# and the daemon's own CPU (recorder.cpu_ms: from the segment's start to
# its last flush's, the flush that ended the segment before it
# included): ms, us a sample, and its share of the CPU the samples
# stand for (a sample of HZ a CPU second is 1/HZ s of it)
segments() {
	printf '%-8s %8s %8s %6s %14s %16s %8s %10s %8s\n' segment samples learned tail unexplained \
		report_unknown own_ms us/sample own_%
	sqlite3 -separator ' ' "$1" "SELECT run_id, samples, coalesce(learned_paths, 0),
		coalesce((SELECT max(value) FROM v_run_counters c
		WHERE c.run_id = r.run_id AND name = 'leaf.unknown'), 0),
		coalesce(unexplained_when_seen, 0), coalesce((SELECT max(value) FROM v_run_counters c
		WHERE c.run_id = r.run_id AND name = 'recorder.cpu_ms'), 0)
		FROM v_runs r WHERE kind = 'daemon' AND samples > 0 ORDER BY run_id" |
	while read -r run n learned tail unexpl ms; do
		unk=$("$icppd" report -d "$1" --run "$run" 2>/dev/null </dev/null |
			sed -n 's/.* \([0-9.]*\)% unknown callers.*/\1/p')
		printf '%-8s %8s %8s %5.1f%% %13.1f%% %15s%% %8s %10.1f %7.2f%%\n' "$run" "$n" "$learned" \
			"$(awk -v t="$tail" -v n="$n" 'BEGIN { print n ? 100 * t / n : 0 }')" \
			"$(awk -v u="$unexpl" -v n="$n" 'BEGIN { print n ? 100 * u / n : 0 }')" "${unk:--}" \
			"$ms" "$(awk -v m="$ms" -v n="$n" 'BEGIN { print n ? 1000 * m / n : 0 }')" \
			"$(awk -v m="$ms" -v n="$n" -v hz="$2" 'BEGIN { print n ? m * hz / n / 10 : 0 }')"
	done
}

cost() {	# cost MODE: prints "total_cpu profiler_cpu" (workload + profiler;
	# the profiler's own CPU where it is a process apart, else -1)
	rm -f "$work"/perf.data* "$work"/d.db*
	case $1 in
	none)
		/usr/bin/time -f '%U %S' -o "$work/t" $workload >/dev/null 2>&1
		awk '{ printf "%.3f 0\n", $1 + $2 }' "$work/t" ;;
	icppd-daemon|icppd-daemon-nolearn)
		if [ "$1" = icppd-daemon ]; then
			start_daemon "$work/d.db" 99
		else
			start_daemon "$work/d.db" 99 --exe "$progs/threads" --no-learn
		fi
		/usr/bin/time -f '%U %S' -o "$work/t" $workload >/dev/null 2>&1
		"$icppd" ctl --socket "$sock" stop >/dev/null
		wait $dpid
		paste "$work/t" "$work/dtime" |
			awk '{ printf "%.3f %.3f\n", $1 + $2 + $3 + $4, $3 + $4 }' ;;
	perf-a|perf-a-dwarf)
		g=
		[ "$1" = perf-a-dwarf ] && g="--call-graph dwarf"
		# perf -a records every CPU until the workload ends
		/usr/bin/time -f '%U %S' -o "$work/pt" sh -c "perf record -q -a -F 99 $g \
			-o $work/perf.data -- $workload >/dev/null 2>&1"
		awk '{ printf "%.3f -1\n", $1 + $2 }' "$work/pt" ;;
	esac
}
modes="none icppd-daemon icppd-daemon-nolearn perf-a perf-a-dwarf"
if part 1; then
interleave cost cost

echo "== overhead: $workload ($reps rounds, medians of CPU seconds)"
printf '%-21s %10s %13s %9s\n' mode total_cpu profiler_own overhead
base=$(col cost none 1)
for m in $modes; do
	t=$(col cost "$m" 1) p=$(col cost "$m" 2)
	[ "$p" = "-1" ] && p=-
	printf '%-21s %10s %13s %8.1f%%\n' "$m" "$t" "$p" \
		"$(echo "$t $base" | awk '{ print 100 * ($1 - $2) / $2 }')"
done

fi

if part 2; then
echo "== an hour of samples at 99 Hz on 2 busy CPUs, taken at 10 kHz"
rm -f "$work"/h.db*
start_daemon "$work/h.db" 10000
"$progs/threads" 14000 2 >/dev/null 2>&1
"$icppd" ctl --socket "$sock" flush >/dev/null
"$icppd" ctl --socket "$sock" stop >/dev/null
wait $dpid
hwm=$(awk '{ print $3 }' "$work/dtime")	# time's %M: the daemon's peak
samples=$(sqlite3 "$work/h.db" "SELECT sum(samples) FROM v_runs WHERE kind = 'daemon'")
bytes=$(stat -c %s "$work/h.db")
echo "$samples $hwm $bytes" | awk '{
	printf "  samples %d (%.2f hours at 99 Hz x 2 CPUs)\n", $1, $1 / 712800
	printf "  daemon peak RSS %.1f MiB\n", $2 / 1024
	printf "  database %.1f KiB: %.1f KiB per million samples\n", $3 / 1024, $3 / 1024 / ($1 / 1e6) }'

fi

if part 3; then
echo "== learning while profiling: 2 python3 processes never trained, 10 kHz, learning 2.5 kHz, 3 s segments"
py=$(readlink -f "$(PATH=/usr/bin:/bin command -v python3)")
cat >"$work/loop.py" <<'PY'
import json, time
def build(n): return {str(i): [i, i * 2, {"k": i}] for i in range(n)}
t = 0
while time.process_time() < 15:
    s = json.dumps(build(2000))
    t += len(json.loads(s))
    t += len(sorted(s.split(","), key=lambda x: x[::-1]))
print(t)
PY
rm -f "$work"/l.db*
start_daemon "$work/l.db" 10000 --exe "$py" --learn-freq 2500 --segment 3 --flush-interval 1
"$py" "$work/loop.py" >/dev/null & p1=$!
"$py" "$work/loop.py" >/dev/null
wait $p1
"$icppd" ctl --socket "$sock" stop >/dev/null
wait $dpid
segments "$work/l.db" 10000

fi

# k3 MINE PERF_A PERF_B LABEL: the k = 3 ratio of MINE's overlap with
# PERF_A over PERF_B's (bench/accuracy.sh's method)
k3() {
	ceiling=$("$icppd" compare -d "$work/m.db" --k 3 "$2" "$3" |
		awk '/^degree of overlap/ { print $4 }')
	mine=$("$icppd" compare -d "$work/m.db" --k 3 "$1" "$2" |
		awk '/^degree of overlap/ { print $4 }')
	awk -v c="$ceiling" -v m="$mine" -v l="$4" 'BEGIN {
		printf "  k = 3%s: daemon vs perf dwarf %.3f, perf vs perf %.3f, ratio %.3f\n", l, m, c, (c > 0 ? m / c : 0) }'
}

cc1=$(readlink -f "$(gcc -print-prog-name=cc1)")
if part 4; then
makes=${MAKES:-10}
make_cproject "$work/proj"
# The daemon keeps its CFI cache across restarts (the unit's
# CacheDirectory): one that has run a day has read cc1's build, as, ld
# and the rest once, and a bench that starts it on an empty cache
# charges that to the first rate it runs and not the other.  So both
# rates start on a warm cache, and what the first sight of these builds
# costs, once, is printed: a record of one make on the empty cache less
# the same record on the cache it filled.
warm_ms() {
	rm -f "$work"/w.db*
	"$icppd" record -q -d "$work/w.db" -- make -s -B -C "$work/proj" >/dev/null
	sqlite3 "$work/w.db" "SELECT value FROM v_run_counters WHERE
		name = 'recorder.cpu_ms'"
}
cold=$(warm_ms) warm=$(warm_ms)
echo "== the first sight of the builds (CFI tables and symbols read, then cached): $((cold - warm)) ms once ($cold ms against $warm ms for a record of one make)"
for hz in ${HZS:-99 999}; do
	echo "== cc1 through $makes make -B, $hz Hz, learning 25 Hz, 3 s segments${DAEMON_OPTS:+, $DAEMON_OPTS}"
	rm -f "$work"/m.db*
	# shellcheck disable=SC2086
	start_daemon "$work/m.db" "$hz" --exe "$cc1" --segment 3 ${DAEMON_OPTS:-}
	/usr/bin/time -f '%U %S' -o "$work/mtime" sh -c "for i in \$(seq $makes); do
		make -s -B -C '$work/proj' >/dev/null; done"
	"$icppd" ctl --socket "$sock" stop >/dev/null
	wait $dpid
	segments "$work/m.db" "$hz"
	# a daemon runs for days: its cost past the first segment (which
	# learns the first paths) is what it costs from then on
	sqlite3 -separator ' ' "$work/m.db" "SELECT sum(samples), sum(coalesce((SELECT
		max(value) FROM v_run_counters c WHERE c.run_id = r.run_id
		AND name = 'recorder.cpu_ms'), 0)) FROM v_runs r WHERE kind = 'daemon'
		AND samples > 0 AND run_id > (SELECT min(run_id) FROM v_runs
		WHERE kind = 'daemon' AND samples > 0)" |
	awk -v hz="$hz" '$1 > 0 {
		printf "  after the first segment: %d ms for %d samples, %.1f us a sample, %.2f %% of the CPU they stand for\n",
			$2, $1, 1000 * $2 / $1, $2 * hz / $1 / 10 }'
	read -r du ds dm _ < "$work/dtime"
	read -r mu ms < "$work/mtime"
	# cc1's own CPU, the watched processes': as its samples stand for
	n=$(sqlite3 "$work/m.db" "SELECT sum(samples) FROM v_runs WHERE kind = 'daemon'")
	awk -v d="$du + $ds" -v du="$du" -v ds="$ds" -v mu="$mu" -v ms="$ms" -v m="$dm" \
		-v n="$n" -v hz="$hz" 'BEGIN {
		printf "  daemon CPU %.2f s over the makes\047 %.2f s: %.2f %%; over cc1\047s %.2f s (%d samples at %d Hz): %.2f %%; peak RSS %.1f MiB\n",
			du + ds, mu + ms, 100 * (du + ds) / (mu + ms), n / hz, n, hz,
			100 * (du + ds) * hz / n, m / 1024 }'
	"$icppd" report -d "$work/m.db" --since 0 --exe "$cc1" -f folded --k inf --exact \
		--no-inline --no-demangle 2>/dev/null | sed "$as_perf" >"$work/m.folded"
	for x in a b; do
		perf record -q -e cpu-clock:u -F "$hz" --call-graph dwarf -o "$work/p$x.data" -- \
			sh -c "for i in \$(seq $makes); do make -s -B -C '$work/proj' >/dev/null; done" 2>/dev/null
		fold_comm "$work/p$x.data" cc1 | sed "$as_perf" >"$work/p$x.folded"
	done
	k3 "$work/m.folded" "$work/pa.folded" "$work/pb.folded" ""
	# perf's unwinder stops at the first frame for 3-4 % of cc1's
	# samples (_int_malloc, malloc, _int_free, memset alone), and its
	# two runs agree on that; a stack of one frame is dropped from all
	# three profiles here (icppd's have none: a sample's stack reaches
	# at least "[unknown callers of F]")
	for x in m pa pb; do
		grep ';' "$work/$x.folded" >"$work/$x.multi" || true
	done
	k3 "$work/m.multi" "$work/pa.multi" "$work/pb.multi" ", without one-frame stacks"
	rm -f "$work"/p[ab].data*
	# what a flat profile of as many makes costs: perf record -a at the
	# same rate, no call graph (its own CPU; cc1's, as its samples
	# stand for)
	start_perf_a "$work/flat.data" "$hz"
	/usr/bin/time -f '%U %S' -o "$work/mtime" sh -c "for i in \$(seq $makes); do
		make -s -B -C '$work/proj' >/dev/null; done"
	stop_perf_a
	n=$(perf script -i "$work/flat.data" -F comm 2>/dev/null | grep -c ' cc1 *$' || true)
	read -r fu fs _ <<EOF
$(tail -n 1 "$work/dtime")
EOF
	read -r mu ms <"$work/mtime"
	awk -v fu="$fu" -v fs="$fs" -v mu="$mu" -v ms="$ms" -v n="$n" \
		-v hz="$hz" 'BEGIN { c = n / hz
		printf "  a flat profile, perf record -a -F %d (no call graph) through as many makes: %.2f s, %.2f %% of cc1\047s %.2f s (%d samples), %.2f %% of the makes\047 %.2f s\n",
			hz, fu + fs, (c > 0 ? 100 * (fu + fs) / c : 0), c, n,
			100 * (fu + fs) / (mu + ms), mu + ms }'
	rm -f "$work"/flat.data*
done
fi

part 5 || exit 0
forks() {	# forks MODE [CMD]: "subshells loop_cpu profiler_cpu
	# profiler_wakes" of subshells running CMD (default none: a fork
	# and an exit each; /bin/true: an exec too)
	loop="end=\$((SECONDS + 5)); n=0; while [ \$SECONDS -lt \$end ]; do ( ${2:-:} ); n=\$((n + 1)); done; echo \$n"
	rm -f "$work"/f.db* "$work"/perf.data*
	case $1 in
	icppd-daemon) start_daemon "$work/f.db" 99 --exe "$cc1" ;;
	perf-a) start_perf_a "$work/perf.data" 99 ;;
	esac
	/usr/bin/time -f '%U %S' -o "$work/ft" bash -c "$loop" >"$work/fn"
	case $1 in
	icppd-daemon) "$icppd" ctl --socket "$sock" stop >/dev/null
		wait "$dpid" ;;
	perf-a) stop_perf_a ;;
	none) echo "0 0 0 0" >"$work/dtime" ;;
	esac
	read -r n <"$work/fn"
	read -r lu ls <"$work/ft"
	# (time's last line: a first one says a signal ended perf)
	read -r du ds dm dw <<EOF
$(tail -n 1 "$work/dtime")
EOF
	awk -v n="$n" -v l="$lu + $ls" -v lu="$lu" -v ls="$ls" -v d="$du" -v s="$ds" -v w="$dw" 'BEGIN {
		printf "%d %.1f %.3f %d\n", n / 5, 1e6 * (lu + ls) / n, d + s, w }'
}
modes="none icppd-daemon perf-a"
interleave fork forks
interleave exec forks /bin/true
for x in "fork subshells" "exec subshells exec'ing /bin/true"; do
	echo "== a shell spawning ${x#* } for 5 s ($reps rounds, medians)"
	printf '%-14s %12s %18s %14s %16s\n' mode subshells/s loop_us/subshell profiler_cpu profiler_wakes
	for m in $modes; do
		printf '%-14s %12s %18s %14s %16s\n' "$m" "$(col "${x%% *}" "$m" 1)" \
			"$(col "${x%% *}" "$m" 2)" "$(col "${x%% *}" "$m" 3)" \
			"$(col "${x%% *}" "$m" 4)"
	done
done
