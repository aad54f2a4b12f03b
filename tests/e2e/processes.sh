#!/bin/sh
# Child processes: one forked, one forked and exec'ing another program.
. "$TESTS_SRCDIR/e2e/lib.sh"
require_perf
ms=30			# CPU per burn, in each of the three processes
min=$(min_samples $ms)

TRUTH_FILE=$tmp/truth "$ICPPD" record -q -d "$db" -- "$PROGS/forker" $ms "$PROGS/heights-nofp" $ms
is $? 0 "forker: exit status 0"
run=$(last_run)
load_truth "$tmp/truth"
check_truth "$run" "forker" "$min"
is "$(q "SELECT count(DISTINCT pid) FROM v_cids WHERE run_id = $run AND samples >= $min")" 3 \
	"parent, forked child and exec'd child all sampled"
is "$(q "SELECT count(*) FROM v_cids WHERE run_id = $run AND function = 'recurse' AND module LIKE '%/heights-nofp'")" 4 \
	"exec'd program attributed to its own module"
done_testing
