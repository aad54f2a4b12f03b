#!/bin/sh
# Heights icppd stores equal the heights the program reports itself:
# frame pointers or not, PIE or not, several paths, recursion, function
# pointers, a leaf without a frame.
. "$TESTS_SRCDIR/e2e/lib.sh"
require_perf
ms=30			# CPU per burn: 30 samples of each CID at 1000 Hz
min=$(min_samples $ms)

for variant in fp nofp nopie; do
	TRUTH_FILE=$tmp/truth-$variant "$ICPPD" record -q -d "$db" -- "$PROGS/heights-$variant" $ms
	is $? 0 "heights-$variant: record exits with the program's status 0"
	run=$(last_run)
	load_truth "$tmp/truth-$variant"
	check_truth "$run" "heights-$variant" "$min"
	is "$(q "SELECT count(DISTINCT height) FROM v_cids WHERE run_id = $run AND function = 'work' AND samples >= $min")" 2 \
		"heights-$variant: work reached through two paths has two heights"
	is "$(q "SELECT count(DISTINCT height) FROM v_cids WHERE run_id = $run AND function = 'recurse' AND samples >= $min")" 4 \
		"heights-$variant: recursion four deep has four heights"
	is "$(q "SELECT samples = resolved + unresolved AND status = 'finished' FROM v_runs WHERE run_id = $run")" 1 \
		"heights-$variant: run row adds up and is finished"
	# Only startup and exit (about a millisecond) lie outside the
	# burns' 270 samples: a few at most, unresolved or not.
	unres=$(q "SELECT coalesce(sum(samples), 0) * 100 / (SELECT samples FROM v_runs WHERE run_id = $run) FROM v_unresolved WHERE run_id = $run")
	ok $([ "$unres" -le 1 ]; echo $?) "heights-$variant: at most 1% of samples unresolved ($unres%)"
done

is "$(q "SELECT count(*) FROM v_cids WHERE module LIKE '%/heights-nopie' AND length(build_id) = 40 AND function = 'main'")" 1 \
	"module path and build-id stored"

# Stripped: names are gone, identities and heights are not.  The same
# code as heights-nofp, so nm on that gives the addresses.  A database
# of its own: one that knows heights-nofp knows the build (same build-id)
# and its names.
is "$(integrity)" ok "database passes integrity_check"
db=$tmp/stripped.db
TRUTH_FILE=$tmp/truth-stripped "$ICPPD" record -q -d "$db" -- "$PROGS/heights-stripped" $ms
run=$(last_run)
load_truth "$tmp/truth-stripped"
nm "$PROGS/heights-nofp" | while read -r addr type name; do
	case $type in [tT]) printf "UPDATE truth SET function = 'heights-stripped+0x%x' WHERE function = '%s';\n" "0x$addr" "$name" ;; esac
done | sqlite3 -batch "$db"
check_truth "$run" "heights-stripped" "$min"
is "$(q "SELECT count(*) FROM v_cids WHERE run_id = $run AND function = 'main'")" 0 \
	"stripped binary: no symbol names invented"
is "$(integrity)" ok "stripped: database passes integrity_check"
done_testing
