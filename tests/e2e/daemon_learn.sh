#!/bin/sh
# icppd daemon learns: a watched program nobody trained is explained
# while the daemon runs.  Without leaf copies its first process meets
# unexplained CIDs and the learning event unwinds their paths; the next
# process of the same build is explained nearly from its first sample,
# and a report of the daemon's run shows call paths.  With them (the
# default) the first process is explained by its own samples' copies.
# A daemon started again reads what the first learned.  --no-learn
# learns nothing.  The CFI cache: a daemon started again reads libc's
# frame table from it; --no-cache neither reads nor writes.
. "$TESTS_SRCDIR/e2e/lib.sh"
require_perf
require_root
chmod 700 "$tmp"
dpid=
trap '[ -n "$dpid" ] && kill -9 $dpid 2>/dev/null; rm -rf "$tmp"' EXIT
sock=$tmp/icppd.sock
# The daemon watches the whole machine and other tests run heights-nofp
# at the same time (make check -j): watch a private copy.
prog=$tmp/heights-learn
cp "$PROGS/heights-nofp" "$prog"
# 9 burns of 50 ms: 225 samples at 500 Hz; the learning event at the
# same rate while in a burst.
ms=50

start() {	# start DB ARGS...: the daemon in the background, pid in $dpid
	d=$1
	shift
	"$ICPPD" daemon --foreground -d "$d" --socket "$sock" -F 500 \
		--flush-interval 1 --exe "$prog" "$@" 2>>"$tmp/daemon.log" &
	dpid=$!
	i=0
	while [ ! -S "$sock" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
}
stop() {
	kill -TERM $dpid
	wait $dpid
	dpid=
}
counter() {	# counter NAME: the daemon run's counter, from its last flush
	q "SELECT coalesce(max(value), 0) FROM v_run_counters WHERE name = '$1'
		AND run_id = (SELECT max(run_id) FROM v_runs WHERE kind = 'daemon')"
}
cids() {
	q "SELECT coalesce(sum(samples), 0) FROM v_cids
		WHERE run_id = (SELECT max(run_id) FROM v_runs WHERE kind = 'daemon')"
}

start "$db" --learn-freq 500 --leaf-stack 0
"$prog" $ms >/dev/null
"$ICPPD" ctl --socket "$sock" flush >/dev/null
u1=$(counter learn.unknown_cids) c1=$(cids)
ok $([ "$(counter learn.paths)" -ge "$(min_samples 100)" ]; echo $?) \
	"the first process: its stacks unwound ($(counter learn.paths) paths)"
ok $([ "$u1" -ge 1 ]; echo $?) \
	"the first process: CIDs unexplained when first seen ($u1 of $c1 samples)"
st=$("$ICPPD" ctl --socket "$sock" status)
contains "$st" "learning this segment: " "ctl status: what learning did"
contains "$st" "us a sample, " "ctl status: what the segment cost the daemon"
# recorder.cpu_ms: the daemon's CPU from the segment's start to the
# flush's, within what the scheduler ran its threads all along
cpu=$(counter recorder.cpu_ms)
if [ -r "/proc/$dpid/schedstat" ]; then
	all=$(cat /proc/$dpid/task/*/schedstat | awk '{ ns += $1 } END { print int(ns / 1e6) }')
	ok $([ "$cpu" -ge 1 ] && [ "$cpu" -le "$all" ]; echo $?) \
		"recorder.cpu_ms: the segment's own CPU ($cpu ms; the daemon's all along $all ms)"
else
	skip "no /proc/PID/schedstat (CONFIG_SCHED_INFO)" "recorder.cpu_ms against the scheduler's count"
fi
"$prog" $ms >/dev/null
"$ICPPD" ctl --socket "$sock" flush >/dev/null
u2=$(counter learn.unknown_cids) c2=$(cids)
# Every CID of the program was sampled about 25 times in the first
# process, so its paths were learned; the second meets only the few
# CIDs of its startup that the first never showed.
ok $([ $((c2 - c1)) -ge "$(min_samples 450 500)" ] && [ $(( (u2 - u1) * 20 )) -le $((c2 - c1)) ]; echo $?) \
	"the next process of the build: at most 5% unexplained ($((u2 - u1)) of $((c2 - c1)) samples)"
rep=$("$ICPPD" report -d "$db" --k 1 --format folded 2>&1)
contains "$rep" "path_a;work " "a report of the daemon's run shows call paths, with no training"
is "$(q "SELECT count(*) FROM v_runs WHERE kind = 'train'")" 0 "no training run"
stop
is "$(q "SELECT learned_paths > 0 FROM v_runs WHERE kind = 'daemon'")" 1 \
	"v_runs: the segment's learned paths"
is "$(q "SELECT count(*) FROM runs r WHERE (SELECT coalesce(sum(samples), 0)
	FROM learn_windows WHERE run_id = r.id) != (SELECT coalesce(sum(samples),
	0) FROM cid_samples WHERE run_id = r.id)")" 0 \
	"learn_windows: each run's windows count its own samples"
ok $([ "$(q "SELECT count(*) FROM learn_windows")" -ge 1 ]; echo $?) \
	"learn_windows: the daemon's run has its windows"
stores=$(counter cfi.cache_stores)
ok $([ "$stores" -ge 1 ] && [ "$(counter cfi.cache_hits)" -eq 0 ]; echo $?) \
	"CFI cache: the first daemon stored libc's table ($stores), read none"

# A daemon started again on its database reads what the first learned
# (known_cids): the program's first process is explained nearly from
# its first sample, as the first daemon's second process was.
start "$db" --learn-freq 500 --leaf-stack 0
"$prog" $ms >/dev/null
"$ICPPD" ctl --socket "$sock" flush >/dev/null
u=$(counter learn.unknown_cids) c=$(cids) k=$(counter known.stored_cids)
h=$(counter known.stored_hits)
stop
ok $([ "$k" -ge 1 ]; echo $?) "a daemon started again read the keys the first stored ($k)"
ok $([ "$h" -ge 1 ]; echo $?) "... which explained samples its own map did not yet ($h)"
ok $([ "$c" -ge "$(min_samples 450 500)" ] && [ $((u * 20)) -le "$c" ]; echo $?) \
	"... and its first process at most 5% unexplained ($u of $c samples)"

# Leaf copies (the default): a shallow program's samples unwind whole
# from their own copies, the first process's too.
start "$tmp/leaf.db"
"$prog" $ms >/dev/null
"$ICPPD" ctl --socket "$sock" flush >/dev/null
db=$tmp/leaf.db
u=$(counter learn.unknown_cids) c=$(cids) l=$(counter leaf.samples)
b=$(counter leaf.stack_bytes) t=$(counter leaf.unknown)
st=$("$ICPPD" ctl --socket "$sock" status)
stop
ok $([ "$c" -ge "$(min_samples 450 500)" ] && [ "$l" -eq "$c" ]; echo $?) \
	"leaf copies: every sample of the first process carried one ($l of $c)"
ok $([ "$t" -ge 1 ] && [ $((t * 2)) -le "$c" ]; echo $?) \
	"leaf copies of a CID no path explained yet: its first ones, a few ($t of $c)"
contains "$st" " leaf copies of an identifier no path explained yet, unwound" \
	"ctl status: the copies of the tail"
is "$b" 16376 "leaf copies: 16376 bytes by default, at 500 Hz"
ok $([ $((u * 20)) -le "$c" ]; echo $?) \
	"leaf copies: the first process at most 5% unexplained ($u of $c samples)"
is "$(counter cfi.cache_hits) $(counter cfi.cache_stores)" "$stores 0" \
	"CFI cache: the next daemon read every table the first stored, stored none"
db=$tmp/icppd.db

# The leaf copies' default follows --stack-size, and above --leaf-freq
# (500) samples a second every sample copies less.
start "$tmp/leaf2.db" -F 1000 --stack-size 8192
"$prog" $ms >/dev/null
"$ICPPD" ctl --socket "$sock" flush >/dev/null
db=$tmp/leaf2.db
b=$(counter leaf.stack_bytes)
stop
db=$tmp/icppd.db
is "$b" 4088 "--stack-size 8192 at 1000 Hz: leaf copies of 8184 bytes, halved"

# --no-learn: identifiers only.
before=$(ls -l --time-style=+%s.%N "$ICPPD_CACHE_DIR")
start "$tmp/nl.db" --no-learn --no-cache
"$prog" $ms >/dev/null
"$ICPPD" ctl --socket "$sock" flush >/dev/null
st=$("$ICPPD" ctl --socket "$sock" status)
stop
ok $([ "$(q "SELECT sum(samples) FROM v_cids" "$tmp/nl.db")" -ge "$(min_samples 450 500)" ]; echo $?) \
	"--no-learn: the samples are recorded"
is "$(q "SELECT count(*) FROM path_nodes" "$tmp/nl.db")" 0 "--no-learn: nothing learned"
is "$(q "SELECT count(*) FROM v_run_counters WHERE name LIKE 'cfi.%'" "$tmp/nl.db")" 0 \
	"--no-cache: no cache counters"
ok $(printf '%s\n' "$st" | grep -q "^learning"; [ $? -ne 0 ]; echo $?) \
	"--no-learn: status has no learning line"
is "$(ls -l --time-style=+%s.%N "$ICPPD_CACHE_DIR")" "$before" \
	"--no-cache: the cache directory untouched"

# Bad input.  A cache directory others may write: refused in one line,
# the daemon goes on without it.
mkdir -m 777 "$tmp/open"
chmod 777 "$tmp/open"
: >"$tmp/daemon.log"
ICPPD_CACHE_DIR=$tmp/open start "$tmp/open.db"
"$prog" $ms >/dev/null
"$ICPPD" ctl --socket "$sock" flush >/dev/null
stop
contains "$(cat "$tmp/daemon.log")" "CFI cache $tmp/open: Operation not permitted; every binary's frame section and symbols are read afresh" \
	"a cache directory others may write: the daemon says why"
ok $([ "$(q "SELECT coalesce(sum(samples), 0) FROM v_cids" "$tmp/open.db")" -ge "$(min_samples 450 500)" ]; echo $?) \
	"... and profiles without it"
is "$(ls "$tmp/open" | wc -l)" 0 "... writing nothing there"
"$ICPPD" daemon --foreground -d "$tmp/x.db" --socket "$sock" --exe "$prog" --stack-size 100 2>/dev/null
is $? 2 "--stack-size not a multiple of 8: usage error"

is "$(integrity)" ok "database passes integrity_check"
done_testing
