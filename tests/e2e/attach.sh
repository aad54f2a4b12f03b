#!/bin/sh
# -p PID: attach to a running process for --duration seconds.
. "$TESTS_SRCDIR/e2e/lib.sh"
require_perf

TRUTH_FILE=$tmp/truth "$PROGS/heights-nofp" 2 spin 4 >/dev/null &
target=$!
# Wait until it reaches spin_forever.
i=0
while ! grep -q spin_forever "$tmp/truth" 2>/dev/null && [ $i -lt 100 ]; do
	sleep 0.05
	i=$((i + 1))
done
"$ICPPD" record -q -d "$db" -p $target --duration 1 2>"$tmp/err"
is $? 0 "attach: exit status 0"
run=$(last_run)
kill $target 2>/dev/null
wait $target 2>/dev/null
load_truth "$tmp/truth"
h=$(awk '$4 == "spin_forever" { print $5 }' "$tmp/truth")
got=$(q "SELECT height FROM v_cids WHERE run_id = $run AND function = 'spin_forever' ORDER BY samples DESC LIMIT 1")
is "$got" "$h" "attached: spin_forever at its true height"
s=$(q "SELECT samples FROM v_runs WHERE run_id = $run")
ok $([ "$s" -ge 200 ] && [ "$s" -le 1100 ]; echo $?) "about one second of samples at 1000 Hz, or less on a busy machine ($s)"
is "$(q "SELECT command || ' ' || target_pid FROM v_runs WHERE run_id = $run")" "pid $target $target" \
	"run records the attached pid"
is "$(q "SELECT exit_status IS NULL FROM v_runs WHERE run_id = $run")" 1 \
	"no exit status for an attached process"
done_testing
