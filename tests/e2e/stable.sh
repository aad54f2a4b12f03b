#!/bin/sh
# The CIDs of a program are the same across runs: ASLR on, small and
# large environments, short and long argv.
. "$TESTS_SRCDIR/e2e/lib.sh"
require_perf
# The CIDs compared are those of the burns (30 samples each, at least
# $min expected); startup and exit give a sample or two, never $min.
ms=30
min=$(min_samples $ms)

is "$(cat /proc/sys/kernel/randomize_va_space)" 2 "ASLR is on"
long=$(head -c 3000 /dev/zero | tr '\0' x)
cids() {
	q "SELECT group_concat(function || '@' || height, ' ') FROM
	   (SELECT function, height FROM v_cids WHERE run_id = $1 AND samples >= $min
	    AND function NOT LIKE '%+0x%' ORDER BY function, height)"
}

env -i "$ICPPD" record -q -d "$db" -- "$PROGS/heights-nofp" $ms >/dev/null
small=$(cids "$(last_run)")
big_env=$(i=0; while [ $i -lt 200 ]; do printf 'BIG_%d=%s ' $i "$long"; i=$((i + 1)); done)
env $big_env "$ICPPD" record -q -d "$db" -- "$PROGS/heights-nofp" $ms "$long" >/dev/null
big=$(cids "$(last_run)")
"$ICPPD" record -q -d "$db" -- "$PROGS/heights-nofp" $ms >/dev/null
plain=$(cids "$(last_run)")

contains "$small" "work@" "runs produced CIDs ($small)"
is "$big" "$small" "600 KB of environment and a 3 KB argument change no CID"
is "$plain" "$small" "a third run with ASLR gives the same CIDs"

# Thread stacks too.
"$ICPPD" record -q -d "$db" -- "$PROGS/threads" $ms 3 >/dev/null
t1=$(q "SELECT group_concat(height, ' ') FROM (SELECT height FROM v_cids WHERE run_id = $(last_run) AND function = 'thread_work' AND samples >= $min ORDER BY height)")
env $big_env "$ICPPD" record -q -d "$db" -- "$PROGS/threads" $ms 3 >/dev/null
t2=$(q "SELECT group_concat(height, ' ') FROM (SELECT height FROM v_cids WHERE run_id = $(last_run) AND function = 'thread_work' AND samples >= $min ORDER BY height)")
contains "$t1" " " "thread heights recorded ($t1)"
is "$t2" "$t1" "thread CIDs identical across runs and environments"
done_testing
