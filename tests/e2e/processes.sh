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

# 400 short-lived processes, 0.3 ms of CPU per burn (a few ms alive):
# most exit before the rings are read, so their stack bases are read
# when the exec is reported (session__execs).  Before that, 46 % of
# such samples here had no stack base; now few, and every height is
# the one the process itself reports.  How few depends on the load
# (the suite runs two tests per core): 10.8 % and 13 % in
# full suites (127 vs 1174, 142 vs 1089), and 30 % in a full suite's
# ASan build (328 vs 1096).  So the bound is three eighths, which the
# 46 % before the fix still fails; part 4 of issue 14 (many processes)
# is to bring it down everywhere.
TRUTH_FILE=$tmp/short "$ICPPD" record -q -d "$db" -F 999 -- sh -c \
	"i=0; while [ \$i -lt 400 ]; do \"$PROGS/heights-nofp\" 0.3 >/dev/null; i=\$((i + 1)); done"
is $? 0 "400 short-lived processes: exit status 0"
run=$(last_run)
load_truth "$tmp/short"
total=$(q "SELECT count(*) || ' ' || coalesce(sum(samples), 0) FROM v_cids
	WHERE run_id = $run AND module LIKE '%/heights-nofp'")
nobase=$(q "SELECT coalesce(sum(samples), 0) FROM v_unresolved
	WHERE run_id = $run AND reason = 'no_stack_base'")
execs=$(q "SELECT group_concat(name || ' ' || value, ', ') FROM v_run_counters
	WHERE run_id = $run AND name LIKE 'exec.%'")
set -- $total
ok $([ "$2" -gt 0 ] && [ $((nobase * 8)) -lt $(($2 * 3)) ]; echo $?) \
	"short-lived processes: under 37.5 % as many samples without a stack base as with a CID in heights ($nobase vs $2; $execs)"
wrong=$(q "SELECT coalesce(sum(c.samples), 0) FROM v_cids c WHERE c.run_id = $run
	AND c.module LIKE '%/heights-nofp' AND c.function IN (SELECT function FROM truth)
	AND NOT EXISTS (SELECT 1 FROM truth t WHERE t.pid = c.pid AND t.tid = c.tid
	AND t.function = c.function AND t.height = c.height)")
is "$wrong" 0 "short-lived processes: no sample at a height its process did not report"
done_testing
