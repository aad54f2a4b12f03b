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
# The validation run scores inference alone: all its samples are
# inferred from their CIDs.  A plain record's report is not: the
# samples its learning event took (at the sampling rate it takes the
# main event's turn) and unwound whole are reported in their own paths,
# exact.  "exact" is that share of the record's samples, and the last
# two columns the record report's incorrect and unknown shares when its
# other samples fare as the validation run's did: (1 - exact) times
# those.  The samples outside learning bursts are the ones whose paths
# the map had already learned, easier than the average: an upper bound.
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

run_one() {	# run_one MODE CMD...: "samples correct cut incorrect unknown overlap exact"
	shift
	rm -f "$work"/v.db* "$work"/proj/*.o "$work"/t.o
	[ -z "$train" ] || eval "\"\$icppd\" train -q -e \"\$event\" -F \"\$freq\" -d \"\$work/v.db\" -- $train" >/dev/null
	"$icppd" record -q -e "$event" -F "$freq" -d "$work/v.db" -- "$@" >/dev/null
	exact=$(sqlite3 "$work/v.db" "SELECT printf('%.4f', coalesce((SELECT
		sum(rl.samples) FROM run_learned rl JOIN v_paths p
		ON p.node_id = rl.node_id WHERE rl.run_id = r.id), 0)
		* 1.0 / max(r.samples, 1)) FROM runs r ORDER BY r.id DESC LIMIT 1")
	rm -f "$work"/proj/*.o "$work"/t.o
	"$icppd" validate -q -e "$event" -F "$freq" -d "$work/v.db" \
		--format json -o "$work/v.json" -- "$@" >/dev/null 2>&1
	for p in samples correct cut incorrect unknown; do
		field "$work/v.json" "\$.report.$p"
	done | tr '\n' ' '
	printf '%s %s\n' "$(field "$work/v.json" '$.overlap_k3')" "$exact"
}

modes=one
printf '# %s, %s Hz, %s repetitions; medians; %s CPUs\n' "$event" "$freq" "$reps" "$(nproc)"
printf '%-15s %8s %8s %8s %9s %8s %8s %7s %9s %8s\n' workload samples \
	correct cut incorrect unknown overlap exact rep.incor rep.unkn
# go-pprof is the go workload scored against another reference: once is enough
for w in ${WORKLOADS:-$(echo "$workloads" | sed "s/ go-pprof//")}; do
	workload "$w"
	eval "set -- $cmd"
	interleave "$w" run_one "$@"
	x=$(col "$w" one 7)
	printf '%-15s %8.0f %8s %8s %9s %8s %8s %7s %9.4f %8.4f\n' "$w" \
		"$(col "$w" one 1)" "$(col "$w" one 2)" "$(col "$w" one 3)" \
		"$(col "$w" one 4)" "$(col "$w" one 5)" "$(col "$w" one 6)" "$x" \
		"$(awk -v i="$(col "$w" one 4)" -v x="$x" 'BEGIN { print (1 - x) * i }')" \
		"$(awk -v u="$(col "$w" one 5)" -v x="$x" 'BEGIN { print (1 - x) * u }')"
done
