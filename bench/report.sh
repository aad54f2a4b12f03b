#!/bin/sh
# bench/report.sh - the inference engine and icppd report against perf
# report, in one run.
#
# 1. Lookup rate: CID -> candidates through a path map of PATHS paths
#    (bench/lookup, a random tree), hits and misses.
# 2. Report time and peak memory over the same number of samples:
#    - perf report --children on a perf.data with call graphs (frame
#      pointers) of two heights-fp processes sampled every 10 us of CPU
#      (cpu-clock), about SAMPLES samples;
#    - icppd report --inclusive on icppd's record of the same workload
#      and rate, trained first (the same call paths);
#    - icppd report (k = 3, then --inclusive, then --k inf, then the
#      top-down --children table, perf report --children's view) on a
#      synthetic profile of exactly as many samples over a path map of
#      PATHS paths (bench/synth.py: 2000 functions, Zipf-like weights,
#      1 % of samples on CIDs training never saw).
#    REPS runs per report, interleaved; medians of wall time, CPU time
#    and peak RSS.  The first icppd report of a run also stores the
#    inferred contexts: that one is timed apart ("first").
#
# Usage: bench/report.sh [BUILDDIR]   (default: build, made by ./demo.sh)
# Environment: REPS (default 5), PATHS (100000), SAMPLES (10000000).
. "$(dirname "$0")/lib.sh"
paths=${PATHS:-100000}
want=${SAMPLES:-10000000}
[ -x "$build/bench/lookup" ] || { echo "bench: make bench/lookup first" >&2; exit 1; }

echo "== lookup rate: path map of $paths paths, 10000000 lookups"
"$build/bench/lookup" "$paths" 10000000 | awk '{
	printf "  hit  %6.1f ns/lookup  %6.1f M lookups/s\n", $4, 1000 / $4
	printf "  miss %6.1f ns/lookup  %6.1f M lookups/s\n", $5, 1000 / $5 }'

# The workload: two processes, each burning long enough for want / 2
# samples at 100 kHz of CPU: 9 burns of MS milliseconds each, of which
# perf keeps 60-80 % of the 100 kHz it is asked for.
ms=$((want / 1260 + 1))
workload="$progs/heights-fp $ms & $progs/heights-fp $ms; wait"
echo "== recording: perf record -g and icppd record, cpu-clock every 10 us"
perf record -q -e cpu-clock -c 10000 -g -o "$work/perf.data" -- \
	sh -c "$workload" >/dev/null 2>&1
perf_samples=$(perf report -i "$work/perf.data" --stats 2>/dev/null |
	awk '/SAMPLE events:/ { print $3; exit }')
"$icppd" train -q -F 1000 -m 4096 -d "$work/real.db" -- "$progs/heights-fp" 40 >/dev/null 2>&1
"$icppd" record -q -c 10000 -m 4096 -d "$work/real.db" -- sh -c "$workload" >/dev/null 2>&1
real_run=$(sqlite3 "$work/real.db" "SELECT max(run_id) FROM v_runs")
real_samples=$(sqlite3 "$work/real.db" "SELECT samples FROM v_runs WHERE run_id = $real_run")
echo "  perf.data: $perf_samples samples, $(($(stat -c %s "$work/perf.data") / 1048576)) MiB;" \
	"icppd: $real_samples samples, $(($(stat -c %s "$work/real.db") / 1024)) KiB"

echo "== synthetic profile: $perf_samples samples over $paths paths"
"$icppd" record -q -d "$work/synth.db" -- true >/dev/null 2>&1
synth_run=$(python3 "$top/bench/synth.py" "$work/synth.db" "$paths" "$perf_samples")
first=$( { /usr/bin/time -f '%e %U %S %M' "$icppd" report -d "$work/synth.db" \
	--run "$synth_run" -o /dev/null; } 2>&1 | tail -1)

report() {	# report MODE: prints "wall cpu maxrss_kib"
	mode=$1
	case $1 in
	perf-children) set -- perf report -i "$work/perf.data" --children --stdio -q ;;
	icppd-real) set -- "$icppd" report -d "$work/real.db" --run "$real_run" --inclusive ;;
	icppd-k3) set -- "$icppd" report -d "$work/synth.db" --run "$synth_run" ;;
	icppd-incl) set -- "$icppd" report -d "$work/synth.db" --run "$synth_run" --inclusive ;;
	icppd-kinf) set -- "$icppd" report -d "$work/synth.db" --run "$synth_run" --k inf ;;
	icppd-child) set -- "$icppd" report -d "$work/synth.db" --run "$synth_run" --children ;;
	esac
	/usr/bin/time -f '%e %U %S %M' -o "$work/time" "$@" >/dev/null 2>"$work/err" ||
		{ echo "bench: $mode failed: $(tail -1 "$work/err")" >&2; }
	tail -1 "$work/time" | awk '{ printf "%.3f %.3f %d\n", $1, $2 + $3, $4 }'
}
modes="perf-children icppd-real icppd-k3 icppd-incl icppd-kinf icppd-child"
interleave rep report

echo "== report over the same number of samples ($reps runs each, medians)"
printf '%-14s %10s %9s %9s %10s %12s\n' mode samples wall_s cpu_s peak_MiB "perf/this"
# /usr/bin/time has 10 ms steps: a wall time of 0 is under 5 ms
pw=$(col rep perf-children 1)
for m in $modes; do
	case $m in
	perf-children) s=$perf_samples ;;
	icppd-real) s=$real_samples ;;
	*) s=$perf_samples ;;
	esac
	w=$(col rep "$m" 1)
	printf '%-14s %10s %9s %9s %10.1f %12.1f\n' "$m" "$s" "$w" "$(col rep "$m" 2)" \
		"$(col rep "$m" 3 | awk '{ print $1 / 1024 }')" \
		"$(echo "$pw $w" | awk '{ print $1 / ($2 > 0 ? $2 : 0.005) }')"
done
echo "$first" | awk '{ printf "icppd-k3 first report (infers and stores): %.2f s wall, %.1f MiB\n", $1, $4 / 1024 }'
