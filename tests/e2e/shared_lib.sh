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

# A burn under dlclose(): libwork's fini is crtstuff's
# __do_global_dtors_aux (size 0, no FDE), which calls __cxa_finalize()
# with BP equal to SP; its frame pointer unwinds it.  Every such sample
# was an unwind without a CFI rule, under unknown callers, before.
"$ICPPD" record -q -d "$tmp/close.db" -- "$PROGS/closelib" 200 >/dev/null
is $? 0 "closelib: exit status 0"
folded=$("$ICPPD" report -d "$tmp/close.db" --format folded --k inf 2>/dev/null)
closing=$(printf '%s\n' "$folded" | awk '/;main;dlclose[^;]*;.*;__do_global_dtors_aux;__cxa_finalize;lib_closing [0-9.]+$/ { t += $NF }
	END { printf "%d\n", t }')
ok $([ "$closing" -ge "$(min_samples 200)" ]; echo $?) \
	"closelib: main -> dlclose -> ... -> __do_global_dtors_aux -> __cxa_finalize -> lib_closing ($closing samples)"
is "$(q "SELECT coalesce(sum(value), 0) FROM v_run_counters WHERE name IN ('unwind.no_cfi', 'unwind.bad_cfi')" "$tmp/close.db")" 0 \
	"closelib: no step without a rule"
done_testing
