#!/bin/sh
# record --off-cpu: the time threads wait, by the call path they switched
# out of.  The program's main thread burns 20 ms of CPU then sleeps in
# wait_timer() (nanosleep) 30 ms a round; its worker blocks in io_wait()
# (read of a pipe the main thread writes after each sleep).  It measures
# the wall time inside each blocking call itself: the truth the blocked
# time icppd reports under each path is held to, within 10 %.
. "$TESTS_SRCDIR/e2e/lib.sh"
require_perf

if ! "$ICPPD" record -q --off-cpu -d "$tmp/probe.db" -- true 2>"$tmp/probe.err"; then
	skip "record --off-cpu refused here: $(head -1 "$tmp/probe.err")" "off-CPU time"
	done_testing
	exit $?
fi

TRUTH_FILE=$tmp/truth "$ICPPD" record -q --off-cpu -d "$db" -- "$PROGS/offcpu" 10 >/dev/null
is $? 0 "record --off-cpu: exit 0"
run=$(last_run)
truth() { awk -v f="$1" '$1 == "OFFCPU" && $4 == f { printf "%.0f\n", $5 * 1000 }' "$tmp/truth"; }
folded=$("$ICPPD" report -d "$db" --off-cpu -f folded --exact)
is $? 0 "report --off-cpu -f folded: exit 0"
under() {	# under PATH: the microseconds of the stacks ending in PATH
	printf '%s\n' "$folded" | awk -v p="$1" '{ w = $NF; s = $0; sub(/ [0-9.]+$/, "", s)
		if (length(s) >= length(p) && substr(s, length(s) - length(p) + 1) == p) t += w }
		END { printf "%.0f\n", t }'
}
within() {	# within GOT WANT SHARE: |GOT - WANT| <= SHARE of WANT
	awk -v g="$1" -v w="$2" -v s="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(w > 0 && d <= s * w) }'
}
for f in wait_timer io_wait; do
	want=$(truth $f)
	case $f in
	wait_timer) got=$(under ";main;wait_timer;__nanosleep;clock_nanosleep@@GLIBC_2.17") ;;
	io_wait) got=$(under ";worker;io_wait;read") ;;
	esac
	ok $(within "$got" "$want" 0.10; echo $?) \
		"$f: $got us blocked under its call path, the program measured $want us"
done
contains "$folded" "_start;__libc_start_main@@GLIBC_2.34;__libc_start_call_main;main;wait_timer;" \
	"the main thread's wait: main -> wait_timer, its callers from _start"
contains "$folded" ";start_thread;worker;io_wait;read " "the worker's wait: worker -> io_wait -> read"
# in the database: per CID, blocked apart from runnable, the switches
is "$(q "SELECT count(*) > 0 FROM v_offcpu WHERE run_id = $run AND function = 'read' AND switches >= 10")" 1 \
	"v_offcpu: read's switches, at least one a round"
ok $(q "SELECT value FROM run_counters WHERE run_id = $run AND name = 'offcpu.switches'" |
	awk '{ exit !($1 >= 20) }'; echo $?) "run_counters: offcpu.switches counted"
ok $(q "SELECT value FROM run_counters WHERE run_id = $run AND name = 'offcpu.unmatched'" | awk '{ exit !($1 <= 2) }'; echo $?) \
	"run_counters: at most a switch or two unmatched (where the learner turned on or off)"
# the CPU samples are the run's as ever
cpu=$("$ICPPD" report -d "$db" -f folded)
contains "$cpu" ";main;burn_round " "the CPU profile: burn_round, not the waits"
# (the worker's reads take a little CPU: now and then a sample lands in
# one, against burn_round's 200)
ok $(printf '%s\n' "$cpu" | awk '/io_wait/ { n += $NF } END { exit !(n <= 3) }'; echo $?) \
	"... io_wait not in it, but for a sample or three"
# text and svg say what the weights are
text=$("$ICPPD" report -d "$db" --off-cpu)
contains "$text" "off-CPU, " "text: the header says off-CPU"
contains "$text" "      us  %total" "text: the weights are microseconds"
"$ICPPD" report -d "$db" --off-cpu -f svg -o "$tmp/o.svg"
contains "$(cat "$tmp/o.svg")" "Off-CPU flame graph" "svg: an off-CPU flame graph"
fill=$(tr '\n' ' ' <"$tmp/o.svg" | grep -o '<title>io_wait[^<]*</title><rect [^>]*fill="#[0-9a-f]*"' |
	sed 's/.*fill="#\(..\)\(..\)\(..\)"/\1 \2 \3/')
ok $(echo "$fill" | awk '{ exit !(strtonum("0x" $3) > strtonum("0x" $1) + 100) }' 2>/dev/null ||
	echo "$fill" | awk '{ r = $1; b = $3; exit !(b > r) }'; echo $?) "svg: off-CPU frames are blue ($fill)"
# wall-clock: the CPU samples at their period beside the waits
wall=$("$ICPPD" report -d "$db" --wall -f folded --exact)
is $? 0 "report --wall: exit 0"
folded=$wall
# as --off-cpu has it, and the CPU samples the reads took (1000 us each)
walled=$(under ";worker;io_wait;read")
waited=$(printf '%s\n' "$("$ICPPD" report -d "$db" --off-cpu -f folded --exact)" |
	awk '/;worker;io_wait;read / { printf "%.0f\n", $NF }')
ok $(awk -v w="$walled" -v o="$waited" 'BEGIN { d = w - o; exit !(o > 0 && d >= 0 && d <= 3000 && d % 1000 == 0) }'; echo $?) \
	"--wall: the worker's wait, as --off-cpu has it ($waited us), and its CPU samples ($walled us)"
burn=$(under ";main;burn_round")
ok $(within "$burn" 200000 0.25; echo $?) \
	"--wall: burn_round's 10 x 20 ms of CPU, its samples at 1 ms each: $burn us"
contains "$("$ICPPD" report -d "$db" --wall)" "wall-clock, " "--wall: the header says wall-clock"
out=$("$ICPPD" report -d "$db" --wall --off-cpu 2>&1)
is $? 2 "--wall with --off-cpu: usage error"
# what it refuses, and a run without off-CPU time
"$ICPPD" report -d "$db" --off-cpu -f pprof -o "$tmp/o.pb.gz"
is $? 0 "pprof: exit 0"
if command -v go >/dev/null; then
	top=$(HOME=$tmp GOCACHE=$tmp/.gocache go tool pprof -top "$tmp/o.pb.gz" 2>&1)
	contains "$top" "Type: off-cpu" "go tool pprof: an off-cpu profile"
	contains "$top" "io_wait" "... with io_wait in it"
else
	skip "no go" "go tool pprof reads the off-CPU profile"
	skip "no go" "... io_wait in it"
fi
# a program that only waits (no CPU sample: its map is read all the
# same): sh in wait4 for its child, the child in nanosleep
"$ICPPD" record -q --off-cpu -d "$tmp/w.db" -- sh -c 'sleep 0.2; true' >/dev/null
waits=$("$ICPPD" report -d "$tmp/w.db" --off-cpu -f folded --exact)
ok $(printf '%s\n' "$waits" | awk '/wait4 [0-9.]+$/ && /__libc_start_main/ && $NF >= 150000 { f = 1 } END { exit !f }'; echo $?) \
	"a shell that only waited: its wait4, 0.2 s, under its callers from __libc_start_main"
ok $(printf '%s\n' "$waits" | grep -q 'unknown callers'; [ $? -ne 0 ]; echo $?) "... nothing under unknown callers"

# which thread waited: a frame per thread, COMM-PID/TID
threads=$("$ICPPD" report -d "$db" --run "$run" --off-cpu -f folded --thread-frame --exact)
is $? 0 "--thread-frame: exit 0"
pid=$(q "SELECT DISTINCT pid FROM offcpu_samples WHERE run_id = $run")
main_tid=$(printf '%s\n' "$threads" | sed -n "s|^offcpu-$pid/\([0-9]*\);.*;main;wait_timer;.*|\1|p" | sort -u)
worker_tid=$(printf '%s\n' "$threads" | sed -n "s|^offcpu-$pid/\([0-9]*\);.*;worker;io_wait;.*|\1|p" | sort -u)
is "$main_tid" "$pid" "--thread-frame: the timer's wait under the main thread, offcpu-$pid/$pid"
ok $([ -n "$worker_tid" ] && [ "$worker_tid" != "$pid" ]; echo $?) \
	"... the pipe's under the worker thread, offcpu-$pid/$worker_tid"
is "$(printf '%s\n' "$threads" | awk '{ s += $NF } END { printf "%.0f\n", s }')" \
	"$("$ICPPD" report -d "$db" --run "$run" --off-cpu -f folded --exact | awk '{ s += $NF } END { printf "%.0f\n", s }')" \
	"... the same microseconds as without the thread frames"
out=$("$ICPPD" report -d "$db" --thread-frame 2>&1)
is $? 2 "--thread-frame in text: usage error"
# SQL: the switches beside the samples in v_cids, an event column apart
is "$(q "SELECT count(DISTINCT event) FROM v_cids WHERE run_id = $run")" 2 "v_cids: cpu and off-cpu rows"
is "$(q "SELECT sum(blocked_ns) FROM v_cids WHERE run_id = $run AND event = 'off-cpu'")" \
	"$(q "SELECT sum(blocked_ns) FROM v_offcpu WHERE run_id = $run")" "... the off-cpu rows carry v_offcpu's time"
is "$(q "SELECT sum(samples) FROM v_cids WHERE run_id = $run AND event = 'cpu'")" \
	"$(q "SELECT sum(samples) FROM cid_samples WHERE run_id = $run")" "... the cpu rows the samples"
# the hot contexts and a comparison, in microseconds
hot=$("$ICPPD" report -d "$db" --run "$run" --off-cpu --hot 5)
is $? 0 "--off-cpu --hot: exit 0"
contains "$hot" "         us  %total context" "... in microseconds"
contains "$hot" "io_wait" "... the worker's wait a hot context"
TRUTH_FILE=$tmp/truth2 "$ICPPD" record -q --off-cpu -d "$db" -- "$PROGS/offcpu" 4 >/dev/null
diff=$("$ICPPD" report -d "$db" --off-cpu --base "$run" --k 2)
is $? 0 "--off-cpu --base: exit 0"
contains "$diff" " us) against the base (" "... comparing microseconds"
change=$(printf '%s\n' "$diff" | awk '$4 == "read" && $5 == "<-" { print $3; exit }')
ok $(awk -v c="${change:-x}" 'BEGIN { exit !(c ~ /^[-+][0-9.]+$/ && c < 10 && c > -10) }'; echo $?) \
	"... the same program's waits in the same shares, within 10 points ($change)"
"$ICPPD" record -q -d "$db" -- "$PROGS/offcpu" 2 >/dev/null
out=$("$ICPPD" report -d "$db" --off-cpu 2>&1)
is $? 1 "a run recorded without --off-cpu: exit 1"
contains "$out" "has no off-CPU time (icppd record --off-cpu -- COMMAND records it)" "... saying how to record it"
# the daemon, --off-cpu watching a private copy of the program (other
# tests run theirs meanwhile): the same waits, from its segments
if [ "$(id -u)" -ne 0 ]; then
	skip "not root: the daemon watches every CPU" "daemon --off-cpu"
	done_testing
	exit $?
fi
chmod 700 "$tmp"
prog=$tmp/offcpu-daemon
cp "$PROGS/offcpu" "$prog"
sock=$tmp/d.sock
"$ICPPD" daemon --foreground -d "$tmp/d.db" --socket "$sock" --flush-interval 1 --segment 1 \
	--off-cpu --exe "$prog" 2>"$tmp/daemon.log" &
dpid=$!
trap 'kill -9 $dpid 2>/dev/null; rm -rf "$tmp"' EXIT
i=0
while [ ! -S "$sock" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
TRUTH_FILE=$tmp/dtruth "$prog" 40 >/dev/null
"$ICPPD" ctl --socket "$sock" stop >/dev/null
wait $dpid
is $? 0 "daemon --off-cpu: stops with exit 0"
dfold=$("$ICPPD" report -d "$tmp/d.db" --since 0 --off-cpu -f folded --exact 2>/dev/null)
folded=$dfold
got=$(under ";worker;io_wait;read")
want=$(awk '$1 == "OFFCPU" && $4 == "io_wait" { printf "%.0f\n", $5 * 1000 }' "$tmp/dtruth")
longest=$(awk '$1 == "OFFCPU" && $4 == "io_wait" { printf "%.0f\n", $6 * 1000 }' "$tmp/dtruth")
unres=$(q "SELECT coalesce(sum(value), 0) FROM run_counters WHERE name = 'offcpu.unresolved'" "$tmp/d.db")
# (within 5 %: a flush dropped every wait still open, 5-10 % of them,
# until a flush kept those whose modules it did not evict; and, on a
# loaded machine, the switches out before the daemon had the new
# process's stack base have no CID: counted as offcpu.unresolved, each
# losing at most the longest wait, 7 % of the worker's in one run of
# the ASan build under the whole suite)
ok $(awk -v g="$got" -v w="$want" -v l="$longest" -v u="${unres:-0}" \
	'BEGIN { exit !(g <= 1.05 * w && w - g <= 0.05 * w + u * l) }'; echo $?) \
	"daemon: the worker's wait under io_wait, $got us (the program measured $want us; $unres switches out unresolved, the longest wait $longest us)"
# each 1 s segment counts its own switches: their counters add up to
# the switches stored and those never closed, not more (a later
# segment's counters held the earlier ones')
counted=$(q "SELECT sum(value) FROM run_counters WHERE name = 'offcpu.switches'" "$tmp/d.db")
stored=$(q "SELECT sum(switches) FROM offcpu_samples" "$tmp/d.db")
open=$(q "SELECT coalesce(sum(value), 0) FROM run_counters WHERE name IN ('offcpu.open_at_exit', 'offcpu.unmatched')" "$tmp/d.db")
# (a few more: the thread's last switch, after its exit record, and the
# daemon's own end)
ok $([ "$counted" -ge "$stored" ] && [ "$counted" -le $((stored + stored / 20 + open + 5)) ]; echo $?) \
	"daemon segments: offcpu.switches per segment ($counted) add up to those stored ($stored) and never closed ($open)"
ok $(q "SELECT count(DISTINCT run_id) FROM offcpu_samples" "$tmp/d.db" | awk '{ exit !($1 >= 2) }'; echo $?) \
	"... over several segments"
done_testing
