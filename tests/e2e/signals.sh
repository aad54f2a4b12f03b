#!/bin/sh
# Exit statuses, targets killed by signals, Ctrl-C, and icppd killed.
. "$TESTS_SRCDIR/e2e/lib.sh"
require_perf

"$ICPPD" record -q -d "$db" -- sh -c 'exit 3'
is $? 3 "exit status of the command passed on"
is "$(q "SELECT exit_status || ' ' || status FROM v_runs WHERE run_id = $(last_run)")" "3 finished" \
	"exit status stored"

"$ICPPD" record -q -d "$db" -- "$PROGS/heights-nofp" 3 kill 9 >/dev/null
is $? 137 "target killed by SIGKILL: 128+9"
run=$(last_run)
is "$(q "SELECT exit_status FROM v_runs WHERE run_id = $run")" 137 "status 137 stored"
s=$(q "SELECT count(*) FROM v_cids WHERE run_id = $run AND function = 'recurse'")
is "$s" 4 "samples before the kill kept"

"$ICPPD" record -q -d "$db" -- "$PROGS/heights-nofp" 1 kill 11 >/dev/null
is $? 139 "target crashing with SIGSEGV: 128+11"

# wait_spin FILE: until the program reached spin_forever.
wait_spin() {
	i=0
	while ! grep -q spin_forever "$1" 2>/dev/null && [ $i -lt 200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	sleep 0.5
}

# Ctrl-C at a terminal: SIGINT to the whole foreground process group.
TRUTH_FILE=$tmp/t1 setsid "$ICPPD" record -q -d "$db" -- "$PROGS/heights-nofp" 1 spin 30 &
pid=$!
wait_spin "$tmp/t1"
/bin/kill -INT -- -$pid
wait $pid
is $? 130 "Ctrl-C: icppd exits 130 like the interrupted command"
run=$(last_run)
is "$(q "SELECT status FROM v_runs WHERE run_id = $run")" interrupted "Ctrl-C: run marked interrupted"
s=$(q "SELECT coalesce(sum(samples), 0) FROM v_cids WHERE run_id = $run AND function = 'spin_forever'")
ok $([ "$s" -ge 100 ]; echo $?) "Ctrl-C: samples up to the interrupt kept ($s)"
is "$(integrity)" ok "Ctrl-C: database passes integrity_check"

# SIGTERM to icppd alone: the command is terminated, the run kept.
TRUTH_FILE=$tmp/t2 "$ICPPD" record -q -d "$db" -- "$PROGS/heights-nofp" 1 spin 30 &
pid=$!
wait_spin "$tmp/t2"
kill -TERM $pid
wait $pid
is $? 143 "SIGTERM to icppd: command terminated, status 143"
is "$(q "SELECT status FROM v_runs WHERE run_id = $(last_run)")" interrupted "SIGTERM: run marked interrupted"

# SIGKILL of icppd: flushed data survives, the database stays valid.
TRUTH_FILE=$tmp/t3 "$ICPPD" record -q -d "$db" -- "$PROGS/heights-nofp" 1 spin 30 &
pid=$!
wait_spin "$tmp/t3"
sleep 1.5
kill -KILL $pid
wait $pid 2>/dev/null
pkill -f "heights-nofp 1 spin 30"
run=$(last_run)
is "$(integrity)" ok "icppd killed: database passes integrity_check"
is "$(q "SELECT status FROM v_runs WHERE run_id = $run")" running "icppd killed: run left as running"
s=$(q "SELECT coalesce(sum(samples), 0) FROM v_cids WHERE run_id = $run")
ok $([ "$s" -ge 200 ]; echo $?) "icppd killed: samples flushed before the kill kept ($s)"
done_testing
