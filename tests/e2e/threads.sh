#!/bin/sh
# Threads: each thread's height is measured from its own stack.
. "$TESTS_SRCDIR/e2e/lib.sh"
require_perf
ms=30			# CPU each thread burns
min=$(min_samples $ms)

TRUTH_FILE=$tmp/truth "$ICPPD" record -q -d "$db" -- "$PROGS/threads" $ms 5
is $? 0 "threads: exit status 0"
run=$(last_run)
load_truth "$tmp/truth"
check_truth "$run" "threads" "$min"
is "$(q "SELECT count(DISTINCT tid) FROM v_cids WHERE run_id = $run AND function = 'thread_work' AND samples >= $min")" 5 \
	"five threads sampled in thread_work"
is "$(q "SELECT count(DISTINCT height) FROM v_cids WHERE run_id = $run AND function = 'thread_work' AND samples >= $min")" 5 \
	"five nesting depths give five heights"
is "$(q "SELECT count(*) FROM v_threads WHERE run_id = $run AND comm = 'threads'")" 6 \
	"six threads named in v_threads"
is "$(integrity)" ok "database passes integrity_check"
done_testing
