#!/bin/sh
# bench/validate.sh - how much of what a report shows is right, after a
# plain "icppd record" (learning during the run; online workloads trained
# on another input first): icppd validate then unwinds every sample's
# true stack and scores the report's inference against it.  Per
# workload, the median over REPS of: correct (every frame shown is true),
# of it cut (candidates shown only as far as they agree), incorrect, and
# unknown callers, as shares of the scored samples; and the profile as a
# whole, the k = 3 overlap of the report with the true stacks (1: the
# same), which apportioned samples keep high where they lower correct.
#
# Usage: bench/validate.sh [BUILDDIR]   (default: build, made by ./demo.sh)
# Environment: REPS (default 5), EVENT (cpu-clock), FREQ (1000),
# WORKLOADS (default: all of bench/workloads.sh's).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/workloads.sh"
freq=${FREQ:-1000}

field() {	# field FILE PATH: a JSON number, by SQLite's json_extract
	sqlite3 :memory: "SELECT printf('%.4f', json_extract(readfile('$1'), '$2'))"
}

run_one() {	# run_one MODE CMD...: "samples correct cut incorrect unknown overlap"
	shift
	rm -f "$work"/v.db* "$work"/proj/*.o "$work"/t.o
	[ -z "$train" ] || eval "\"\$icppd\" train -q -e \"\$event\" -F \"\$freq\" -d \"\$work/v.db\" -- $train" >/dev/null
	"$icppd" record -q -e "$event" -F "$freq" -d "$work/v.db" -- "$@" >/dev/null
	rm -f "$work"/proj/*.o "$work"/t.o
	"$icppd" validate -q -e "$event" -F "$freq" -d "$work/v.db" \
		--format json -o "$work/v.json" -- "$@" >/dev/null 2>&1
	for p in samples correct cut incorrect unknown; do
		field "$work/v.json" "\$.report.$p"
	done | tr '\n' ' '
	field "$work/v.json" '$.overlap_k3'
}

modes=one
printf '# %s, %s Hz, %s repetitions; medians; %s CPUs\n' "$event" "$freq" "$reps" "$(nproc)"
printf '%-15s %8s %8s %8s %9s %8s %8s\n' workload samples correct cut incorrect unknown overlap
for w in ${WORKLOADS:-$workloads}; do
	workload "$w"
	eval "set -- $cmd"
	interleave "$w" run_one "$@"
	printf '%-15s %8.0f %8s %8s %9s %8s %8s\n' "$w" "$(col "$w" one 1)" \
		"$(col "$w" one 2)" "$(col "$w" one 3)" "$(col "$w" one 4)" \
		"$(col "$w" one 5)" "$(col "$w" one 6)"
done
