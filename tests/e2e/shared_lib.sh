#!/bin/sh
# A function in a shared library, reached through two paths.
. "$TESTS_SRCDIR/e2e/lib.sh"
require_perf
ms=60			# CPU per burn
# What this checks is where the samples land (heights, the module), not
# how many a burn gets: on a loaded 2-CPU machine a 30 ms burn once kept
# 4 of its 30 (a clean clone's run), so a CID counts with a sample.
min=1

TRUTH_FILE=$tmp/truth "$ICPPD" record -q -d "$db" -- "$PROGS/uselib" $ms
is $? 0 "uselib: exit status 0"
run=$(last_run)
load_truth "$tmp/truth"
check_truth "$run" "uselib" "$min"
is "$(q "SELECT DISTINCT module FROM v_cids WHERE run_id = $run AND function = 'lib_work'")" "$PROGS/libwork.so" \
	"lib_work attributed to libwork.so"
is "$(q "SELECT count(DISTINCT height) FROM v_cids WHERE run_id = $run AND function = 'lib_work' AND samples >= $min")" 2 \
	"two paths into the library, two heights"
done_testing
