#!/bin/sh
# bench/offcpu.sh - what off-CPU time costs: a pipe ping-pong of N
# round trips (2N switches; tests/progs/offcpu pingpong N) run bare,
# under perf record -e context-switches -c 1 (every switch, no call
# graph), the same with --call-graph dwarf, and under icppd record
# --off-cpu; CPU time of the whole run (user + system, /usr/bin/time),
# medians of REPS interleaved runs, and each over perf's.  Root (the
# switch event counts in the kernel).
# Usage: bench/offcpu.sh [BUILDDIR]; environment: REPS (default 5),
# N (default 100000).
. "$(dirname "$0")/lib.sh"
n=${N:-100000}
prog=$progs/offcpu
[ -x "$prog" ] || { echo "bench: make check TESTS= first (tests/progs)" >&2; exit 1; }

run() {	# run MODE: prints "cpu_s"
	case $1 in
	none) set -- "$prog" pingpong "$n" ;;
	perf) set -- perf record -q -e context-switches -c 1 -o "$work/p.data" -- "$prog" pingpong "$n" ;;
	perf-dwarf) set -- perf record -q -e context-switches -c 1 --call-graph dwarf -o "$work/p.data" -- "$prog" pingpong "$n" ;;
	icppd) set -- "$icppd" record -q --off-cpu -d "$work/i.db" -- "$prog" pingpong "$n" ;;
	esac
	rm -f "$work"/i.db* "$work/p.data"
	/usr/bin/time -f '%U %S' -o "$work/t" "$@" >/dev/null 2>&1
	awk '{ printf "%.3f\n", $1 + $2 }' "$work/t"
}
modes="none perf perf-dwarf icppd"
interleave cpu run
printf '# pipe ping-pong, %s round trips (%s switches), %s runs, medians\n' "$n" "$((2 * n))" "$reps"
printf '%-12s %8s %10s\n' mode cpu_s "over perf"
p=$(col cpu perf 1)
for m in $modes; do
	c=$(col cpu "$m" 1)
	printf '%-12s %8s %10s\n' "$m" "$c" "$(awk -v c="$c" -v p="$p" 'BEGIN { printf "%.3f", (p > 0 ? c / p : 0) }')"
done
