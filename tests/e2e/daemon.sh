#!/bin/sh
# icppd daemon and icppd ctl: watched processes are profiled, others
# not; a report reads the daemon's run while it writes; a crashing
# watched process, a storm of short processes, SIGHUP reload, SIGTERM
# and kill -9 leave a sound database with everything flushed; bad
# configuration lines, a socket in use, a second daemon on the same
# database and a group-writable database are refused.
. "$TESTS_SRCDIR/e2e/lib.sh"
require_perf
require_root
chmod 700 "$tmp"
dpid=
# a failed check must not leave a daemon or a mount behind
trap '[ -n "$dpid" ] && kill -9 $dpid 2>/dev/null; umount "$tmp/full" 2>/dev/null; rm -rf "$tmp"' EXIT
sock=$tmp/icppd.sock
# The daemon watches the whole machine, and other tests run heights-fp
# at the same time (make check -j): watch a private copy, whose path
# no other test execs.
fp=$tmp/heights-daemon
cp "$PROGS/heights-fp" "$fp"
# Watched programs burn 50 ms of CPU nine times: 225 samples at 500 Hz,
# and they live for half a second of CPU, longer than the daemon takes
# to read their exec record and stack base (it reads at least every
# 200 ms; a process gone before that leaves no_stack_base samples).
ms=50

start() {	# start ARGS...: the daemon in the background, pid in $dpid
	"$ICPPD" daemon --foreground -d "$db" --socket "$sock" -F 500 \
		--flush-interval 1 "$@" 2>>"$tmp/daemon.log" &
	dpid=$!
	i=0
	while [ ! -S "$sock" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
}

samples_of() {	# samples_of PROGRAM_PATH
	q "SELECT coalesce(sum(samples), 0) FROM v_cids WHERE program = '$1'"
}

# Training first, so the daemon's run can be reported with call paths.
"$ICPPD" train $TRAIN_OPTS -q -d "$db" -- "$fp" 20 >/dev/null

# A watched program whose path holds a newline and "ok", the line that
# ends a status: it forged the end of ctl status's answer.
evil="$tmp/$(printf 'evil\nok')"
cp "$PROGS/heights-fp" "$evil"

start --exe "$fp" --exe "$evil"
ok $([ -S "$sock" ]; echo $?) "the daemon listens on its socket"
is "$(stat -c %a "$sock")" 600 "the socket is mode 0600"
"$fp" $ms >/dev/null & a=$!
"$fp" $ms >/dev/null & b=$!
"$PROGS/heights-nofp" $ms >/dev/null
wait $a $b
out=$("$ICPPD" ctl --socket "$sock" flush)
is $? 0 "ctl flush exits 0"
# (the daemon logs it once listening) 500 leaf copies of 16 KiB a second: rings with room for 800 ms of them
# (64 MiB over all CPUs at most: 1024 pages a CPU up to 16 CPUs)
if [ "$(getconf _NPROCESSORS_CONF)" -le 16 ]; then
	contains "$(cat "$tmp/daemon.log")" "rings of 1024 pages a CPU" \
		"-F 500: rings of 1024 pages, for the leaf copies"
else
	skip "over 16 CPUs: the rings' default is cut to 64 MiB in all" "rings of 1024 pages"
fi
run=$(q "SELECT max(run_id) FROM v_runs WHERE kind = 'daemon'")
is "$(q "SELECT count(DISTINCT pid) FROM v_cids WHERE run_id = $run AND program = '$fp'")" 2 \
	"both watched processes have samples"
is "$(samples_of "$PROGS/heights-nofp")" 0 "the unwatched process has none"
rep=$("$ICPPD" report -d "$db" --run "$run" --k 1 --format folded)
is $? 0 "a report reads the daemon's run while it runs"
contains "$rep" "path_a;work " "the report shows the watched program's contexts"
st=$("$ICPPD" ctl --socket "$sock" status)
is $? 0 "ctl status exits 0"
contains "$st" "watch exe $fp" "status: what is watched"
contains "$st" "database $db" "status: the database"
contains "$st" "samples " "status: samples"
is "$(printf '%s\n' "$st" | tail -1)" ok "status ends with ok"
# (the exec tracepoint opens for root where tracefs is readable)
tracefs=0
for t in /sys/kernel/tracing /sys/kernel/debug/tracing; do
	[ -r $t/events/sched/sched_process_exec/id ] && tracefs=1
done
if [ $tracefs = 1 ] && [ "$(id -u)" = 0 ]; then
	contains "$st" "execs that wake the daemon: every exec (a watched name no exec filter can hold)" \
		"status: a watched name with a newline: every exec wakes it"
else
	contains "$st" "execs that wake the daemon: every fork, exec and exit (no exec tracepoint" \
		"status: no exec tracepoint here: forks, execs and exits wake it"
fi
"$evil" 150 >/dev/null & e=$!
i=0
while [ $i -lt 40 ]; do
	st=$("$ICPPD" ctl --socket "$sock" status)
	case $st in *"process $e "*) break ;; esac
	sleep 0.1
	i=$((i + 1))
done
wait $e
contains "$st" "process $e evil $tmp/evil\\x0aok" \
	"status: a watched path with a newline on one line, shown as \\x0a"
is "$(printf '%s\n' "$st" | grep -c '^ok$')" 1 "and it forges no 'ok' line"

# A watched process that crashes; a storm of short processes.
( "$fp" 1 kill 11; true ) >/dev/null 2>&1
sh -c 'i=0; while [ $i -lt 200 ]; do /bin/true; i=$((i + 1)); done'
"$ICPPD" ctl --socket "$sock" status >/dev/null
is $? 0 "the daemon survives a crashing watched process and 200 short ones"

# Refusals while it runs.
msg=$("$ICPPD" daemon --foreground -d "$tmp/other.db" --socket "$sock" --exe "$fp" 2>&1)
is $? 1 "a socket in use: exit 1"
contains "$msg" "in use: another icppd daemon answers there" "a socket in use: says so"
msg=$("$ICPPD" daemon --foreground -d "$db" --socket "$tmp/s2.sock" --exe "$fp" 2>&1)
is $? 1 "a second daemon on the same database: exit 1"
contains "$msg" "another icppd daemon is using this database" "second daemon: says so"

# SIGTERM: flushed, exit 0.
"$fp" $ms >/dev/null
kill -TERM $dpid
wait $dpid
is $? 0 "SIGTERM: exit 0"
is "$(q "SELECT status FROM v_runs WHERE run_id = $run")" finished "SIGTERM: the run is finished"
ok $([ ! -e "$sock" ]; echo $?) "SIGTERM: the socket is removed"

# A configuration file, and SIGHUP.
cat >"$tmp/icppd.conf" <<CONF
# watched by name
comm heights-nofp
flush-interval = 1
CONF
start -C "$tmp/icppd.conf"
"$fp" $ms >/dev/null
"$PROGS/heights-nofp" $ms >/dev/null
"$ICPPD" ctl --socket "$sock" flush >/dev/null
run2=$(q "SELECT max(run_id) FROM v_runs WHERE kind = 'daemon'")
ok $([ "$(q "SELECT coalesce(sum(samples), 0) FROM v_cids WHERE run_id = $run2 AND program = '$PROGS/heights-nofp'")" -gt 0 ]; echo $?) \
	"config: the process named by comm has samples"
is "$(q "SELECT coalesce(sum(samples), 0) FROM v_cids WHERE run_id = $run2 AND program = '$fp'")" 0 \
	"config: the exe not named is not watched"
echo "exe $fp" >>"$tmp/icppd.conf"
kill -HUP $dpid
sleep 0.5
"$fp" $ms >/dev/null
"$ICPPD" ctl --socket "$sock" flush >/dev/null
ok $([ "$(q "SELECT coalesce(sum(samples), 0) FROM v_cids WHERE run_id = $run2 AND program = '$fp'")" -gt 0 ]; echo $?) \
	"SIGHUP: the reloaded configuration watches the exe too"
if [ $tracefs = 1 ] && [ "$(id -u)" = 0 ]; then
	contains "$("$ICPPD" ctl --socket "$sock" status)" \
		"execs that wake the daemon: the watched programs' only" \
		"SIGHUP: execs filtered in the kernel to the watched programs"
else
	skip "the exec tracepoint needs root and tracefs" "execs filtered in the kernel"
fi
flushed=$(q "SELECT sum(samples) FROM v_cids WHERE run_id = $run2")

# kill -9: what was flushed stays, and the database is sound.
kill -KILL $dpid
wait $dpid 2>/dev/null
is "$(integrity)" ok "kill -9: integrity_check ok"
is "$(q "SELECT sum(samples) FROM v_cids WHERE run_id = $run2")" "$flushed" \
	"kill -9: everything flushed before is there"

# Segments: one run per segment, reports over a time window, one
# process or one program of it.
t0=$(date +%s)
: >"$tmp/daemon.log"
start --exe "$fp" --segment 1 -m 32
"$fp" $ms >/dev/null & p1=$!
wait $p1
sleep 1.3
contains "$(cat "$tmp/daemon.log")" "rings of 32 pages a CPU" "-m 32: rings of 32 pages"
"$fp" $ms >/dev/null
"$ICPPD" ctl --socket "$sock" flush >/dev/null
ok $([ "$(q "SELECT count(*) FROM runs WHERE kind = 'daemon' AND started_ns >= $t0 * 1000000000")" -ge 2 ]; echo $?) \
	"--segment 1: a new run each second"
win=$("$ICPPD" report -d "$db" --since "$t0" --k 1 --format folded)
is $? 0 "report --since: exit 0"
contains "$win" "path_a;work " "report --since: the window's contexts"
one=$("$ICPPD" report -d "$db" --since "$t0" --pid "$p1" --k 0 --format folded |
	awk '{ s += $NF } END { print s }')
is "$one" "$(q "SELECT sum(c.samples) FROM cid_samples c JOIN runs r ON r.id = c.run_id
	WHERE r.started_ns >= $t0 * 1000000000 AND c.pid = $p1")" \
	"report --pid: the samples of that process only"
msg=$("$ICPPD" report -d "$db" --since "$t0" --exe "$PROGS/threads" 2>&1)
is $? 1 "report --exe of a program never run: exit 1"
contains "$msg" "--exe $PROGS/threads: no program of that name has samples in $db (programs with samples: " \
	"report --exe: says there is nothing, and what there is"
msg=$("$ICPPD" report -d "$db" --since "$t0" --pid 1 2>&1)
is $? 1 "report --pid of a process not in the window: exit 1"
contains "$msg" "no samples with a context identifier in that window in the processes or threads chosen" \
	"report --pid: says the window has nothing of it"
msg=$("$ICPPD" report -d "$db" --since yesterday 2>&1)
is $? 2 "report --since garbage: usage error"
msg=$("$ICPPD" report -d "$db" --since -1h --until -59m 2>&1)
is $? 1 "an empty window: exit 1"
contains "$msg" "no run in that time window" "an empty window: says so"
kill -TERM $dpid
wait $dpid

# Retention by age: runs older than about 1.7 s go at each new segment.
first=$(q "SELECT min(id) FROM runs WHERE kind = 'daemon'")
start --exe "$fp" --segment 1 --keep-days 0.00002
sleep 2.2
"$fp" $ms >/dev/null	# samples, and paths, in the runs kept
sleep 1.3
"$ICPPD" ctl --socket "$sock" stop >/dev/null
wait $dpid
is "$(q "SELECT count(*) FROM runs WHERE id = $first")" 0 "--keep-days: the oldest daemon run is deleted"
is "$(q "SELECT count(*) FROM cid_samples WHERE run_id = $first")" 0 "--keep-days: with its samples"
is "$(q "SELECT count(*) FROM runs WHERE kind = 'train'")" 1 "--keep-days: training runs stay"
# what the deleted runs learned left the path maps with them: every
# node of the learned maps counts the samples of runs still there, and
# none is left without samples or without its parent
is "$(q "SELECT count(*) FROM path_nodes n JOIN path_maps m ON m.id = n.map_id
	WHERE m.run_id IN (0, -1) AND n.self != (SELECT coalesce(sum(l.samples), 0)
	FROM run_learned l WHERE l.node_id = n.id)")" 0 \
	"--keep-days: the learned paths count the remaining runs' samples alone"
is "$(q "SELECT count(*) FROM path_nodes WHERE total = 0 OR (parent_id != 0 AND
	parent_id NOT IN (SELECT id FROM path_nodes))")" 0 \
	"--keep-days: no node left without samples or parent"
is "$(q "SELECT count(*) FROM contexts c WHERE parent_id != 0 AND
	parent_id NOT IN (SELECT id FROM contexts)")" 0 "--keep-days: no context left without its parent"
"$ICPPD" report -d "$db" --since 0 --k 1 --format folded 2>/dev/null | grep -q "path_a;work "
is $? 0 "--keep-days: the remaining runs report their call paths"
is "$(integrity)" ok "after retention: integrity_check ok"

# Processes that run before the daemon starts: its first scan of /proc
# finds them, by executable or by command name (reading of each process
# only what the rules ask, and of a match both, for its status), and
# leaves the others.
"$fp" 250 >/dev/null & pre_exe=$!
"$PROGS/heights-nofp" 600 >/dev/null & pre_comm=$!	# outlives the first daemon
sleep 0.3	# both exec'd: only a scan can find them now
: >"$tmp/daemon.log"
start --exe "$fp"
wait $pre_exe	# sampled for most of its 2.25 s of CPU
"$ICPPD" ctl --socket "$sock" flush >/dev/null
pre_run=$(q "SELECT max(run_id) FROM v_runs WHERE kind = 'daemon'")
"$ICPPD" ctl --socket "$sock" stop >/dev/null
wait $dpid
contains "$(cat "$tmp/daemon.log")" "watching process $pre_exe (heights-daemon, $fp)" \
	"a process running before the daemon: found by its executable, named"
ok $([ "$(q "SELECT coalesce(sum(samples), 0) FROM v_cids WHERE run_id = $pre_run AND pid = $pre_exe")" -gt 0 ]; echo $?) \
	"... and sampled"
is "$(q "SELECT coalesce(sum(samples), 0) FROM v_cids WHERE run_id = $pre_run AND pid = $pre_comm")" 0 \
	"... the other one not"
: >"$tmp/daemon.log"
start --comm heights-nofp
"$ICPPD" ctl --socket "$sock" stop >/dev/null
wait $dpid
contains "$(cat "$tmp/daemon.log")" \
	"watching process $pre_comm (heights-nofp, $(readlink -f "$PROGS/heights-nofp"))" \
	"a process running before the daemon: found by its command name, its executable read"
kill $pre_comm 2>/dev/null
wait $pre_comm

# A full disk: flushes fail with a clear log line and keep their
# counts; once there is room again they succeed; nothing is corrupt.
full=$tmp/full
mkdir "$full"
if mount -t tmpfs -o size=1m,mode=0700 tmpfs "$full" 2>/dev/null; then
	sock_saved=$sock db_saved=$db
	db=$full/d.db
	"$ICPPD" record -q -d "$db" -- true 2>/dev/null	# the schema
	start --exe "$fp"
	dd if=/dev/zero of="$full/filler" bs=4k 2>/dev/null
	"$fp" $ms >/dev/null
	msg=$("$ICPPD" ctl --socket "$sock" flush)
	is $? 1 "disk full: ctl flush reports the failure"
	contains "$msg" "disk full" "disk full: the answer says why"
	contains "$(cat "$tmp/daemon.log")" "flush failed, counts kept for the next one" \
		"disk full: one clear log line"
	rm -f "$full/filler"
	"$ICPPD" ctl --socket "$sock" flush >/dev/null
	is $? 0 "room again: the next flush succeeds"
	ok $([ "$(q "SELECT coalesce(sum(samples), 0) FROM v_cids WHERE program = '$fp'")" -gt 0 ]; echo $?) \
		"room again: the kept counts are written"
	"$ICPPD" ctl --socket "$sock" stop >/dev/null
	wait $dpid
	is "$(integrity)" ok "disk full: integrity_check ok"
	umount "$full"
	db=$db_saved sock=$sock_saved
else
	skip "cannot mount a tmpfs here" "disk full"
fi

# Bad configuration lines.
printf 'exe %s\nfrobnicate 3\n' "$fp" >"$tmp/bad.conf"
msg=$("$ICPPD" daemon --foreground --config "$tmp/bad.conf" -d "$tmp/b.db" --socket "$tmp/b.sock" 2>&1)
is $? 1 "a bad configuration line: exit 1"
is "$msg" "icppd: $tmp/bad.conf:2: unknown setting 'frobnicate'" "a bad line: CONFIG:LINE: what"
printf 'freq many\n' >"$tmp/bad.conf"
msg=$("$ICPPD" daemon --foreground --config "$tmp/bad.conf" -d "$tmp/b.db" --socket "$tmp/b.sock" 2>&1)
contains "$msg" "$tmp/bad.conf:1: --freq wants a whole number" "a bad value: CONFIG:LINE: what"
ok $([ ! -e "$tmp/b.sock" ] && [ ! -e "$tmp/b.db" ]; echo $?) "a refused configuration creates nothing"
msg=$("$ICPPD" daemon --foreground -d "$tmp/b.db" 2>&1)
is $? 2 "nothing to watch: usage error"
msg=$("$ICPPD" daemon --foreground -d "$tmp/b.db" --socket "$tmp/b.sock" --exe '' 2>&1)
is $? 1 "--exe '': exit 1"
is "$msg" "icppd: --exe: expected an executable's path, not ''" "--exe '': says what it wants"
msg=$("$ICPPD" daemon --foreground -d "$tmp/b.db" --socket "$tmp/b.sock" --comm '' 2>&1)
is "$msg" "icppd: --comm: expected a command name, not ''" "--comm '': says what it wants"
touch "$tmp/gw.db"
chmod 664 "$tmp/gw.db"
msg=$("$ICPPD" daemon --foreground -d "$tmp/gw.db" --socket "$tmp/g.sock" --exe "$fp" 2>&1)
is $? 1 "a group-writable database: exit 1"
contains "$msg" "writable by group or others" "a group-writable database: says so"
msg=$("$ICPPD" ctl --socket "$tmp/none.sock" status 2>&1)
is $? 1 "ctl without a daemon: exit 1"
contains "$msg" "is the daemon running?" "ctl without a daemon: says so"
# The unit file as built: systemd reads it without a complaint (but the
# binary, not installed yet, and the man pages); its sandbox has no
# network and a private /tmp, and the export drop-in opens the network.
unit=$(dirname "$ICPPD")/systemd/icppd.service
dropin=$TESTS_SRCDIR/../systemd/icppd-export.conf
if command -v systemd-analyze >/dev/null; then
	SYSTEMD_LOG_LEVEL=warning systemd-analyze verify "$unit" 2>&1 |
		grep -v 'is not executable\|Command .man ' >"$tmp/verify"
	is "$(cat "$tmp/verify")" "" "systemd-analyze verify: the unit is sound"
else
	skip "no systemd-analyze" "the unit file"
fi
ok $(grep -q -- '--config /etc/icppd.conf$' "$unit"; echo $?) \
	"the unit reads /etc/icppd.conf, where make install puts it and icppd.conf(5) says"
help=$("$ICPPD" daemon --help)
contains "$(printf '%s\n' "$help" | head -1)" "[-C CONFIG]" "daemon --help: the usage line names -C, the option"
contains "$help" "-C, --config FILE" "... as the option list does"
is "$(grep -c '^PrivateNetwork=yes$\|^PrivateTmp=yes$\|^RestrictAddressFamilies=AF_UNIX$' "$unit")" 3 \
	"the unit: no network, AF_UNIX only, a private /tmp"
ok $(grep -q '^CacheDirectory=icppd$' "$unit"; echo $?) \
	"the unit: a cache directory of its own (\$CACHE_DIRECTORY, the daemon's CFI cache)"
is "$(grep -c '^PrivateNetwork=no$\|^RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6$' "$dropin")" 2 \
	"the export drop-in: the network back, for HTTP to ClickHouse"
done_testing
