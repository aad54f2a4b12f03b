#!/bin/sh
# bench/exports.sh - what an export costs, icppd against perf, on one
# multi-process workload (make of bench/workloads.sh's small C project:
# make, cc1, as, collect2, ld), both recorded at 1000 Hz of cpu-clock.
#
#   flat table    icppd report --sort comm,dso,sym
#                 perf report --stdio --no-children --sort comm,dso,sym
#   stacks        icppd report -f folded (whole stacks, whole counts)
#                 perf script (the input of stackcollapse-perf.pl;
#                 perf recorded with -g, frame pointers)
#   stacks+comm   icppd report -f folded --comm-frame
#   pprof         icppd report -f pprof (processes apart: pid, comm)
#
# REPS runs of each, interleaved; medians of wall time and peak RSS,
# and the ratio icppd / perf where perf has a counterpart.
#
# Usage: bench/exports.sh [BUILDDIR]   (default: build, made by ./demo.sh)
# Environment: REPS (default 5).
. "$(dirname "$0")/lib.sh"
. "$top/bench/workloads.sh"
workload make
db=$work/x.db
echo "== recording: make of a small C project, perf record -g and icppd record"
eval "set -- $cmd"
"$icppd" record -q -d "$db" -- "$@" >/dev/null 2>&1
"$icppd" report -d "$db" -f json >/dev/null 2>&1	# stores the inference
perf record -q -e cpu-clock:u -F 1000 -g -o "$work/perf.data" -- "$@" \
	>/dev/null 2>&1
echo "   icppd: $("$icppd" report -d "$db" -f folded 2>/dev/null |
	awk '{ s += $NF } END { print s }') samples; perf: $(perf script -i \
	"$work/perf.data" -F period 2>/dev/null | wc -l) samples"

# timed MODE: one run, "WALL_S RSS_KB"
timed() {
	case $1 in
	icppd-sort) set -- "$icppd" report -d "$db" --sort comm,dso,sym ;;
	perf-sort) set -- perf report -i "$work/perf.data" --stdio \
		--no-children --sort comm,dso,sym ;;
	icppd-folded) set -- "$icppd" report -d "$db" -f folded ;;
	perf-script) set -- perf script -i "$work/perf.data" ;;
	icppd-comm) set -- "$icppd" report -d "$db" -f folded --comm-frame ;;
	icppd-pprof) set -- "$icppd" report -d "$db" -f pprof -o "$work/p.pb.gz" ;;
	esac
	/usr/bin/time -f '%e %M' -o "$work/time" "$@" >/dev/null 2>&1
	cat "$work/time"
}
modes="icppd-sort perf-sort icppd-folded perf-script icppd-comm icppd-pprof"
interleave t timed
printf '\n%-14s %10s %10s %12s\n' "export" "wall s" "peak MiB" "icppd/perf"
row() {	# row LABEL MODE [PERF_MODE]
	w=$(col t "$2" 1)
	m=$(col t "$2" 2)
	ratio=-
	[ -n "${3:-}" ] && ratio=$(awk -v a="$w" -v b="$(col t "$3" 1)" \
		'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
	printf '%-14s %10s %10.1f %12s\n' "$1" "$w" \
		"$(awk -v m="$m" 'BEGIN { print m / 1024 }')" "$ratio"
}
row "flat (icppd)" icppd-sort perf-sort
row "flat (perf)" perf-sort
row "folded" icppd-folded perf-script
row "perf script" perf-script
row "folded+comm" icppd-comm perf-script
row "pprof" icppd-pprof
echo "(median of $reps interleaved runs each; perf script is what"
echo " stackcollapse-perf.pl reads, so icppd's folded output is compared"
echo " with it)"
