#!/bin/sh
# The CIDs of a program are the same across runs: ASLR on, small and
# large environments, short and long argv.
. "$TESTS_SRCDIR/e2e/lib.sh"
require_perf
# The CIDs compared are those of the burns (30 samples each, at least
# $min expected); startup and exit give a sample or two, never $min.
# A run's frequent CIDs must each be among the other run's CIDs: a
# changed CID fails that both ways, while a burn that a busy machine
# shortened in samples still shows its CID (CI once had fewer than 10
# of work@560's 30, and six busy loops on this 2-CPU VM gave a burn 5
# samples where the thread's CPU clock said 30 ms: the clock and the
# sampling timer part where a vCPU is stolen, we think).
ms=30
min=$(min_samples $ms)

is "$(cat /proc/sys/kernel/randomize_va_space)" 2 "ASLR is on"
long=$(head -c 3000 /dev/zero | tr '\0' x)
frequent="SELECT function, height FROM v_cids WHERE samples >= $min
	  AND function NOT LIKE '%+0x%'"
cids() {	# cids RUN: its frequent CIDs, sorted
	q "SELECT group_concat(function || '@' || height, ' ') FROM
	   ($frequent AND run_id = $1 ORDER BY function, height)"
}
absent() {	# absent RUN OTHER: RUN's frequent CIDs that OTHER lacks
	q "SELECT group_concat(function || '@' || height, ' ') FROM
	   ($frequent AND run_id = $1 EXCEPT SELECT function, height
	    FROM v_cids WHERE run_id = $2)"
}
same() {	# same RUN OTHER DESCRIPTION
	is "$(absent "$1" "$2")$(absent "$2" "$1")" "" "$3"
}

env -i "$ICPPD" record -q -d "$db" -- "$PROGS/heights-nofp" $ms >/dev/null
small=$(last_run)
big_env=$(i=0; while [ $i -lt 200 ]; do printf 'BIG_%d=%s ' $i "$long"; i=$((i + 1)); done)
env $big_env "$ICPPD" record -q -d "$db" -- "$PROGS/heights-nofp" $ms "$long" >/dev/null
big=$(last_run)
"$ICPPD" record -q -d "$db" -- "$PROGS/heights-nofp" $ms >/dev/null
plain=$(last_run)

small_cids=$(cids "$small")
contains "$small_cids" "work@" "runs produced CIDs ($small_cids)"
same "$big" "$small" "600 KB of environment and a 3 KB argument change no CID"
same "$plain" "$small" "a third run with ASLR gives the same CIDs"

# Thread stacks too.
"$ICPPD" record -q -d "$db" -- "$PROGS/threads" $ms 3 >/dev/null
t1=$(last_run)
env $big_env "$ICPPD" record -q -d "$db" -- "$PROGS/threads" $ms 3 >/dev/null
t2=$(last_run)
heights=$(q "SELECT group_concat(height, ' ') FROM (SELECT height FROM v_cids
	WHERE run_id = $t1 AND function = 'thread_work' AND samples >= $min ORDER BY height)")
contains "$heights" " " "thread heights recorded ($heights)"
same "$t2" "$t1" "thread CIDs identical across runs and environments"
done_testing
