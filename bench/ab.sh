#!/bin/sh
# bench/ab.sh - the recorder's own CPU, one build of icppd against
# another, on the same workloads in one run: what a change to the
# recorder costs or saves, which bench/record.sh (one build against
# perf) cannot tell apart from the VM's noise.
#
# Each round records each workload once with each build, the order
# alternating round by round, into a fresh database (the table cache
# filled by one record of each first, as a user's next record finds
# it).  The recorder's own CPU is the tree's (bench/cputime.c around
# icppd record, to the microsecond) less the workload's (the same inside
# it), as record.sh's own_s; its page faults the same way.  Printed: each
# build's median CPU and mean page faults, and the median over rounds
# of the round's B/A ratio (paired: a round's two records run seconds
# apart, the rounds minutes apart, and this VM's speed drifts by more
# than a change moves).
#
# Usage: bench/ab.sh BUILD_A BUILD_B   (two build folders; for an older
# commit: git worktree add /tmp/old COMMIT, and build it there as
# ./demo.sh does)
# Environment: REPS (default 16), WORKLOADS (default "clang++ g++"),
# RECORD_OPTS (more options of both records, e.g. "-F 10000
# --learn-freq 25"), PRIOR (default 0: that many records of the same
# command by the same build go into each timed record's database first,
# untimed: the cost of a record after them, as bench/record.sh's
# PRIOR).
set -eu
[ $# -eq 2 ] && [ -x "$1/icppd" ] && [ -x "$2/icppd" ] ||
	{ echo "usage: bench/ab.sh BUILD_A BUILD_B (folders with icppd)" >&2
	  exit 2; }
a=$(cd "$1" && pwd)/icppd b=$(cd "$2" && pwd)/icppd
. "$(dirname "$0")/lib.sh" "$1"
. "$top/bench/workloads.sh"
reps=${REPS:-16}
cc -O2 -o "$work/cputime" "$top/bench/cputime.c"

# one BIN: "OWN_CPU_S OWN_MINOR_FAULTS" of one record of the workload,
# into a fresh database (after PRIOR records, in place: a user's next
# record finds the file as the last left it)
one() {
	bin=$1
	eval "set -- $cmd"
	rm -f "$work/ab.db" "$work/ab.db-wal" "$work/ab.db-shm"
	p=0	# not i: the rounds' count
	while [ $p -lt "${PRIOR:-0}" ]; do
		# shellcheck disable=SC2086
		"$bin" record -q ${RECORD_OPTS:-} -d "$work/ab.db" -- "$@" \
			>/dev/null 2>&1
		p=$((p + 1))
	done
	# shellcheck disable=SC2086
	"$work/cputime" "$work/tree" "$bin" record -q ${RECORD_OPTS:-} \
		-d "$work/ab.db" -- \
		"$work/cputime" "$work/wl" "$@" >/dev/null 2>&1
	paste -d' ' "$work/tree" "$work/wl" |
		awk '{ printf "%.4f %d\n", $1 + $2 - $4 - $5, $3 - $6 }'
}

printf '# the recorder own CPU, %s rounds, B over A; A %s, B %s%s\n' \
	"$reps" "$a" "$b" "${RECORD_OPTS:+; record $RECORD_OPTS}"
printf '%-8s %8s %8s %9s %9s %8s\n' workload "A cpu_s" "B cpu_s" \
	"A faults" "B faults" "paired"
for w in ${WORKLOADS:-clang++ g++}; do
	workload "$w"
	one "$a" >/dev/null	# the table cache filled
	one "$b" >/dev/null
	: >"$work/$w.a"
	: >"$work/$w.b"
	i=0
	while [ $i -lt "$reps" ]; do
		if [ $((i % 2)) -eq 0 ]; then
			one "$a" >>"$work/$w.a"
			one "$b" >>"$work/$w.b"
		else
			one "$b" >>"$work/$w.b"
			one "$a" >>"$work/$w.a"
		fi
		i=$((i + 1))
	done
	printf '%-8s %8s %8s %9s %9s %8s\n' "$w" \
		"$(cut -d' ' -f1 "$work/$w.a" | median)" \
		"$(cut -d' ' -f1 "$work/$w.b" | median)" \
		"$(awk '{ s += $2 } END { printf "%d", s / NR }' "$work/$w.a")" \
		"$(awk '{ s += $2 } END { printf "%d", s / NR }' "$work/$w.b")" \
		"$(paste -d' ' "$work/$w.a" "$work/$w.b" |
		   awk '$1 > 0 { printf "%.4f\n", $3 / $1 }' | median)"
done
