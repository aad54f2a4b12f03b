#!/bin/sh
# Exit statuses, targets killed by signals, Ctrl-C, and icppd killed.
. "$TESTS_SRCDIR/e2e/lib.sh"
require_perf

"$ICPPD" record -q -d "$db" -- sh -c 'exit 3'
is $? 3 "exit status of the command passed on"
is "$(q "SELECT exit_status || ' ' || status FROM v_runs WHERE run_id = $(last_run)")" "3 finished" \
	"exit status stored"

"$ICPPD" record -q -d "$db" -- "$PROGS/heights-nofp" 30 kill 9 >/dev/null
is $? 137 "target killed by SIGKILL: 128+9"
run=$(last_run)
is "$(q "SELECT exit_status FROM v_runs WHERE run_id = $run")" 137 "status 137 stored"
s=$(q "SELECT count(*) FROM v_cids WHERE run_id = $run AND function = 'recurse'")
is "$s" 4 "samples before the kill kept"

"$ICPPD" record -q -d "$db" -- "$PROGS/heights-nofp" 1 kill 11 >/dev/null
is $? 139 "target crashing with SIGSEGV: 128+11"

# "record ... 2>&1 | head -c 1" (icppd's messages are on stderr): the reader leaves at once; the messages
# that follow fail with EPIPE and the recording goes on to its end.
"$ICPPD" record -d "$db" -- "$PROGS/heights-nofp" 30 2>&1 >/dev/null | head -c 1 >/dev/null
run=$(last_run)
is "$(q "SELECT status || ' ' || exit_status FROM v_runs WHERE run_id = $run")" "finished 0" \
	"stderr closed by the reader: the run finishes, not killed by SIGPIPE"
s=$(q "SELECT coalesce(sum(samples), 0) FROM v_cids WHERE run_id = $run AND function = 'recurse'")
ok $([ "$s" -gt 0 ]; echo $?) "stderr closed by the reader: the samples stored ($s)"
# ... while the command itself still gets SIGPIPE, as without icppd
"$ICPPD" record -q -d "$db" -- sh -c 'while :; do echo y; done' | head -1 >/dev/null
is "$(q "SELECT exit_status FROM v_runs WHERE run_id = $(last_run)")" 141 \
	"the command's own SIGPIPE is not ignored: 128+13"

# Ctrl-C at a terminal: SIGINT to the whole foreground process group,
# once the program has spun 300 ms of CPU (300 samples at 1000 Hz).
TRUTH_FILE=$tmp/t1 setsid "$ICPPD" record -q -d "$db" -- "$PROGS/heights-nofp" 1 spin 60 &
pid=$!
wait_spin "$tmp/t1" 300
/bin/kill -INT -- -$pid
wait $pid
is $? 130 "Ctrl-C: icppd exits 130 like the interrupted command"
run=$(last_run)
is "$(q "SELECT status FROM v_runs WHERE run_id = $run")" interrupted "Ctrl-C: run marked interrupted"
s=$(q "SELECT coalesce(sum(samples), 0) FROM v_cids WHERE run_id = $run AND function = 'spin_forever'")
ok $([ "$s" -ge "$(min_samples 300)" ]; echo $?) "Ctrl-C: samples up to the interrupt kept ($s of about 300)"
is "$(integrity)" ok "Ctrl-C: database passes integrity_check"

# SIGTERM to icppd alone: the command is terminated, the run kept.
TRUTH_FILE=$tmp/t2 "$ICPPD" record -q -d "$db" -- "$PROGS/heights-nofp" 1 spin 60 &
pid=$!
wait_spin "$tmp/t2" 100
kill -TERM $pid
wait $pid
is $? 143 "SIGTERM to icppd: command terminated, status 143"
is "$(q "SELECT status FROM v_runs WHERE run_id = $(last_run)")" interrupted "SIGTERM: run marked interrupted"

# SIGKILL of icppd: flushed data survives, the database stays valid.
# icppd flushes once a second: wait until a flush holds the first 200
# ms of spinning, then kill it.
TRUTH_FILE=$tmp/t3 "$ICPPD" record -q -d "$db" -- "$PROGS/heights-nofp" 1 spin 60 &
pid=$!
wait_spin "$tmp/t3" 200
run=$(last_run)
flushed=0 i=0
while [ "$flushed" -lt "$(min_samples 200)" ] && [ $i -lt 600 ]; do
	sleep 0.05
	flushed=$(q "SELECT coalesce(sum(samples), 0) FROM v_cids WHERE run_id = $run AND function = 'spin_forever'")
	i=$((i + 1))
done
kill -KILL $pid
wait $pid 2>/dev/null
pkill -f "heights-nofp 1 spin 60"
is "$(integrity)" ok "icppd killed: database passes integrity_check"
is "$(q "SELECT status FROM v_runs WHERE run_id = $run")" running "icppd killed: run left as running"
s=$(q "SELECT coalesce(sum(samples), 0) FROM v_cids WHERE run_id = $run AND function = 'spin_forever'")
ok $([ "$flushed" -ge "$(min_samples 200)" ] && [ "$s" -ge "$flushed" ]; echo $?) \
	"icppd killed: the samples flushed before the kill kept ($s >= $flushed)"
contains "$("$ICPPD" report -d "$db" --run "$run" 2>&1)" \
	"not finished: still recording, or its recorder was killed" \
	"icppd killed: its report says the run did not finish"
"$ICPPD" record -q -d "$db" -- "$PROGS/heights-nofp" 5 >/dev/null 2>&1
is "$(q "SELECT status FROM v_runs WHERE run_id = $run")" crashed "the next record marks it crashed"
contains "$("$ICPPD" report -d "$db" --run "$run" 2>&1)" \
	"not finished: its recorder was killed; the samples up to its last flush" \
	"... and its report says so"
done_testing
