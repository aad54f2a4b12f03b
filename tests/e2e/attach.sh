#!/bin/sh
# -p PID: attach to a running process for --duration seconds.
. "$TESTS_SRCDIR/e2e/lib.sh"
require_perf

TRUTH_FILE=$tmp/truth "$PROGS/heights-nofp" 2 spin 60 >/dev/null &
target=$!
wait_spin "$tmp/truth" 100
cpu0=$(proc_cpu_ms $target) t0=$(now_ms)
"$ICPPD" record -q -d "$db" -p $target --duration 1 2>"$tmp/err"
is $? 0 "attach: exit status 0"
cpu=$(($(proc_cpu_ms $target) - cpu0)) wall=$(($(now_ms) - t0))
run=$(last_run)
kill $target 2>/dev/null
wait $target 2>/dev/null
load_truth "$tmp/truth"
h=$(awk '$1 == "TRUTH" && $4 == "spin_forever" { print $5 }' "$tmp/truth")
got=$(q "SELECT height FROM v_cids WHERE run_id = $run AND function = 'spin_forever' ORDER BY samples DESC LIMIT 1")
is "$got" "$h" "attached: spin_forever at its true height"
# The target (one thread) used $cpu ms of CPU while icppd ran; at most
# $wall - 1000 ms of that fell outside the one-second window sampled.
# cpu-clock samples CPU time: never more samples than CPU milliseconds
# (plus two clock ticks of rounding), at least a third of those in the
# window.
s=$(q "SELECT samples FROM v_runs WHERE run_id = $run")
ok $([ "$s" -le $((cpu + 20)) ]; echo $?) "no more samples than the target's CPU milliseconds ($s <= $cpu + 20)"
# On a machine so busy that icppd's own start and end took longer than
# the target's CPU time, the window cannot be bounded: one sample then.
low=$(min_samples $((cpu - (wall - 1000))))
[ "$low" -ge 1 ] || low=1
ok $([ "$s" -ge "$low" ]; echo $?) "at least a third of its CPU time in the window, as far as it is bounded ($s >= $low)"
is "$(q "SELECT command || ' ' || target_pid FROM v_runs WHERE run_id = $run")" "pid $target $target" \
	"run records the attached pid"
is "$(q "SELECT exit_status IS NULL FROM v_runs WHERE run_id = $run")" 1 \
	"no exit status for an attached process"
# its CPU time while attached, from /proc: the spinning thread's, about
# a second, never more than the CPU time measured around icppd
us=$(q "SELECT CAST(1000 * (user_s + system_s) AS INTEGER) FROM v_runs WHERE run_id = $run")
ok $([ "${us:-0}" -ge 1 ] && [ "${us:-0}" -le $((cpu + 20)) ]; echo $?) \
	"attached: the process's CPU time during the run (${us:-NULL} ms, $cpu ms around it)"
done_testing
