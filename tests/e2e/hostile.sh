#!/bin/sh
# A watched unprivileged user (nobody) against the root daemon: crafted
# libraries, a FIFO or a symlink to a root-only file swapped in for a
# mapped library, a binary bind-mounted in another mount namespace,
# 1,100 mapped files, control clients that never finish; then the
# daemon's own inputs: configuration files and databases another user
# could control, reloads, and runs left by a killed daemon.
. "$TESTS_SRCDIR/e2e/lib.sh"
require_perf
if [ "$(id -u)" -ne 0 ] || ! id nobody >/dev/null 2>&1; then
	echo "1..0 # SKIP needs root and a 'nobody' user"
	exit 0
fi
dpid=
trap '[ -n "$dpid" ] && kill -9 $dpid 2>/dev/null; umount "$tmp/bin/prog" 2>/dev/null; rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
u=$tmp/u		# the attacker's folder
mkdir "$u" && chown nobody "$u"
sock=$tmp/icppd.sock
mapper=$PROGS/mapper

as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; }

start() {	# start ARGS...: the daemon in the background, pid in $dpid
	rm -f "$sock"
	"$ICPPD" daemon --foreground -d "$db" --socket "$sock" -F 500 \
		--flush-interval 1 "$@" 2>>"$tmp/daemon.log" &
	dpid=$!
	i=0
	while [ ! -S "$sock" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
}

# ctl with a bound: a daemon blocked in open() never answers.
ctl() { timeout 20 "$ICPPD" ctl --socket "$sock" "$@"; }

build_id() { readelf -n "$1" | sed -n 's/.*Build ID: //p'; }

mkdir "$tmp/bin"
cp "$PROGS/heights-fp" "$tmp/bin/prog"
start --exe "$mapper" --exe "$tmp/bin/prog"

# A library whose .dynsym has sh_entsize above its sh_size: dlopen still
# loads it (the loader reads no section headers); icppd freed its symbol
# array twice.
cp "$PROGS/libwork.so" "$u/bad.so"
size=$((0x$(readelf -SW "$u/bad.so" | awk '{ for (i = 1; i < NF; i++) if ($i == ".dynsym") print $(i + 4) }')))
"$PROGS/shpatch" "$u/bad.so" .dynsym entsize $((size + 24))
chown nobody "$u/bad.so"
out=$(as_nobody "$mapper" 100 keep "$u/bad.so")
contains "$out" "ready" "a library with a bad .dynsym still loads"
ctl status >/dev/null
is $? 0 "bad .dynsym: the daemon still answers"

# A FIFO put at the library's path once it is mapped: the daemon read
# the path and blocked in open() for good.
cp "$PROGS/libwork.so" "$u/fifo.so"
chown nobody "$u/fifo.so"
pid=$(as_nobody "$mapper" 200 fifo "$u/fifo.so" | sed -n 's/^TRUTH \([0-9]*\) .*/\1/p')
ok $([ -p "$u/fifo.so" ]; echo $?) "the library's path is a FIFO now"
ctl flush >/dev/null
is $? 0 "FIFO: the daemon still answers"
# Read through /proc/PID/map_files while the process lives: the mapped
# file; after it exits, the FIFO at the path is seen and never opened.
lib=$(build_id "$PROGS/libwork.so")
got=$(q "SELECT (SELECT coalesce(sum(samples), 0) FROM v_cids WHERE pid = $pid AND function = 'lib_work' AND build_id = '$lib') + (SELECT coalesce(sum(samples), 0) FROM v_unresolved WHERE pid = $pid AND reason = 'module_changed')")
ok $([ "$got" -ge "$(min_samples 200 500)" ]; echo $?) \
	"FIFO: $got lib_work samples in the mapped file or counted module_changed"
if [ "$got" -lt "$(min_samples 200 500)" ]; then	# seen once in a loaded suite
	q "SELECT 'cids', function, build_id, sum(samples) FROM v_cids WHERE pid = $pid GROUP BY 2, 3
	   UNION ALL SELECT 'unresolved', reason, '', sum(samples) FROM v_unresolved WHERE pid = $pid GROUP BY 2
	   UNION ALL SELECT 'all pids', pid, '', sum(samples) FROM v_cids GROUP BY 2" | sed 's/^/#   /'
	tail -5 "$tmp/daemon.log" | sed 's/^/#   /'
fi
is "$(q "SELECT count(*) FROM v_cids WHERE pid = $pid AND function = 'lib_work' AND build_id <> '$lib'")" 0 \
	"FIFO: none attributed to another file"

# A symlink to a root-only ELF file: it must never be read.
mkdir -m 700 "$tmp/secret"
cp "$PROGS/heights-nofp" "$tmp/secret/prog"
chmod 600 "$tmp/secret/prog"
secret_id=$(build_id "$tmp/secret/prog")
cp "$PROGS/libwork.so" "$u/link.so"
chown nobody "$u/link.so"
as_nobody "$mapper" 200 "link:$tmp/secret/prog" "$u/link.so" >/dev/null
ctl flush >/dev/null
ok $([ -n "$secret_id" ]; echo $?) "the root-only file has a build-id ($secret_id)"
is "$(q "SELECT count(*) FROM modules WHERE build_id = '$secret_id'")" 0 \
	"symlink: the root-only file was never read"


# Another mount namespace: the process runs heights-nofp bind-mounted
# over a copy of heights-fp.  The host's file at that path is not it.
if unshare -m true 2>/dev/null; then
	unshare -m sh -c "mount --bind '$PROGS/heights-nofp' '$tmp/bin/prog' && exec '$tmp/bin/prog' 100" >/dev/null
	ctl flush >/dev/null
	is "$(q "SELECT count(*) FROM v_cids WHERE module = '$tmp/bin/prog' AND build_id = '$(build_id "$PROGS/heights-fp")'")" 0 \
		"mount namespace: no sample is given to the host's file at that path"
	ok $([ "$(q "SELECT coalesce(sum(samples), 0) FROM v_cids WHERE build_id = '$(build_id "$PROGS/heights-nofp")' AND function = 'work'")" -gt 0 ]; echo $?) \
		"mount namespace: samples belong to the binary the process mapped"
else
	skip "unshare -m is not allowed here" "mount namespace"
fi

# 1,100 mapped files: the daemon kept one descriptor each until it ran
# out at 1,024, then answered nothing and ignored 'ctl stop'.
for i in $(seq 1 1100); do cp "$PROGS/libwork.so" "$u/m$i.so"; done
chown nobody "$u"/m*.so
as_nobody "$mapper" 300 map "$u"/m*.so >/dev/null
ctl flush >/dev/null
is $? 0 "1,100 mapped files: the daemon answers"
fds=$(ls "/proc/$dpid/fd" | wc -l)
ok $([ "$fds" -lt 64 ]; echo $?) "1,100 mapped files: the daemon holds $fds descriptors, under 64"
ok $([ "$(q "SELECT coalesce(sum(samples), 0) FROM v_cids WHERE module = '$mapper'")" -gt 0 ]; echo $?) \
	"1,100 mapped files: the mapper's samples are recorded"
# Once it has exited, the modules nobody maps go at the next flushes
# beyond the 256 kept idle: the cache held all 1,100 for ever before.
sleep 0.1
ctl flush >/dev/null
ctl flush >/dev/null
mods=$(ctl status | sed -n 's/^modules //p')
ok $([ -n "$mods" ] && [ "$mods" -le 300 ]; echo $?) \
	"1,100 mapped files, the mapper gone: $mods modules cached, at most 300"
# The daemon learns paths, which point into their modules: it stores
# them and starts an empty map before it evicts.
ok $([ "$(q "SELECT coalesce(max(value), 0) FROM v_run_counters WHERE name = 'unwind.map_resets'")" -ge 1 ]; echo $?) \
	"eviction while learning: the path map was stored and started afresh"

# Control clients that say nothing, or a byte a second: the daemon must
# keep sampling and answering others, and drop them within seconds.
"$PROGS/ctlpeer" "$sock" silent 10 >"$tmp/peer1" &
p1=$!
"$PROGS/ctlpeer" "$sock" slow 10 >"$tmp/peer2" &
p2=$!
sleep 0.3
st=$(ctl status)
is $? 0 "slow clients connected: ctl status still answers"
contains "$st" "samples" "slow clients connected: a whole status"
wait $p1 $p2
is "$(cat "$tmp/peer1")" closed "a silent client is dropped before 10 s"
is "$(cat "$tmp/peer2")" closed "a byte-a-second client is dropped before 10 s"

# kill -9, then a new daemon: the old run is 'crashed', ended at its
# last flush, and no longer running.
killed=$(q "SELECT max(run_id) FROM v_runs WHERE kind = 'daemon'")
kill -9 $dpid
wait $dpid 2>/dev/null
start --exe "$mapper"
is "$(q "SELECT status FROM v_runs WHERE run_id = $killed")" crashed "kill -9: the run is crashed"
ok $([ -n "$(q "SELECT ended FROM v_runs WHERE run_id = $killed")" ]; echo $?) "kill -9: it has an end"
contains "$(cat "$tmp/daemon.log")" "marked crashed" "kill -9: the new daemon says so"

# SIGHUP 300 times with a 240 KB configuration: each reload kept the
# old file's strings (72 MB here); now the daemon grows by less than 16 MB.
pad=$(printf '%04000d' 0)
{ echo "exe $mapper"; for i in $(seq 1 60); do echo "flush-interval = 1.$pad"; done; } >"$tmp/big.conf"
kill -9 $dpid
wait $dpid 2>/dev/null
# (AddressSanitizer holds freed memory back for 256 MB by default.)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"
export ASAN_OPTIONS
start -C "$tmp/big.conf"
rss0=$(awk '/^VmRSS/ { print $2 }' "/proc/$dpid/status")
for i in $(seq 1 300); do
	before=$(grep -c reloaded "$tmp/daemon.log")
	kill -HUP $dpid 2>/dev/null || break
	j=0
	while [ "$(grep -c reloaded "$tmp/daemon.log")" -eq "$before" ] && [ $j -lt 100 ]; do
		sleep 0.01; j=$((j + 1))
	done
done
rss1=$(awk '/^VmRSS/ { print $2 }' "/proc/$dpid/status")
ok $([ $((rss1 - rss0)) -lt 16384 ]; echo $?) "300 reloads of 240 KB: RSS grew by $((rss1 - rss0)) KB, under 16 MB"
ctl stop >/dev/null
wait $dpid
dpid=

# The configuration decides what root reads and writes.
# A blank line once ended the file: line 3 must still be read.
printf 'exe /bin/true\n\nfrobnicate 3\n' >"$tmp/blank.conf"
msg=$("$ICPPD" daemon --foreground --config "$tmp/blank.conf" -d "$tmp/n.db" --socket "$tmp/n.sock" 2>&1)
is "$msg" "icppd: $tmp/blank.conf:3: unknown setting 'frobnicate'" "a blank line: the lines after it are read"
printf 'exe /bin/true\nflush-interval 1\0\n' >"$tmp/nul.conf"
msg=$("$ICPPD" daemon --foreground --config "$tmp/nul.conf" -d "$tmp/n.db" --socket "$tmp/n.sock" 2>&1)
is "$msg" "icppd: $tmp/nul.conf:2: a NUL byte: not a text file" "a NUL byte in the config: says so"
msg=$("$ICPPD" daemon --foreground --config "$tmp" -d "$tmp/n.db" --socket "$tmp/n.sock" 2>&1)
is "$msg" "icppd: $tmp: not a regular file (a directory)" "a config that is a directory: says so"
ln -s /etc/shadow "$tmp/shadow.conf"
msg=$("$ICPPD" daemon --foreground --config "$tmp/shadow.conf" -d "$tmp/n.db" --socket "$tmp/n.sock" 2>&1)
is "$msg" "icppd: $tmp/shadow.conf:1: not a NAME VALUE setting" "a config linked to /etc/shadow: no line echoed"
printf 'exe /bin/true\n' >"$u/evil.conf"
chown nobody "$u/evil.conf"
msg=$("$ICPPD" daemon --foreground --config "$u/evil.conf" -d "$tmp/n.db" --socket "$tmp/n.sock" 2>&1)
contains "$msg" "owned by another user" "a config owned by nobody: refused"
ok $([ ! -e "$tmp/n.db" ]; echo $?) "refused configurations create no database"

# A database nobody created, or under a folder nobody can swap.
as_nobody sh -c "umask 022; : >'$u/pre.db'"
msg=$("$ICPPD" daemon --foreground -d "$u/pre.db" --socket "$tmp/n.sock" --exe /bin/true 2>&1)
is $? 1 "a database created by nobody: exit 1"
contains "$msg" "owned by another user" "a database created by nobody: says so"
msg=$("$ICPPD" daemon --foreground -d "$u/sub.db" --socket "$tmp/n.sock" --exe /bin/true 2>&1)
contains "$msg" "the folder $u is owned by another user" "a folder nobody owns: refused"
# Squatting: a lock file, a socket, a socket's folder another user made
# first (each was taken as the daemon's own).
nuid=$(id -u nobody)
mkdir -m 1777 "$tmp/sticky"
as_nobody flock "$tmp/sticky/s.db-daemon.lock" sleep 20 & sq=$!
i=0
while [ ! -e "$tmp/sticky/s.db-daemon.lock" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
msg=$("$ICPPD" daemon --foreground -d "$tmp/sticky/s.db" --socket "$tmp/n.sock" --exe /bin/true 2>&1)
is $? 1 "a lock file nobody made and holds: exit 1"
contains "$msg" "s.db-daemon.lock: owned by uid $nuid, not by this user" \
	"a squatted lock file: says whose it is"
kill $sq 2>/dev/null
wait $sq 2>/dev/null

as_nobody "$PROGS/ctlpeer" "$u/fake.sock" serve 20 & sq=$!
i=0
while [ ! -S "$u/fake.sock" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
out=$(timeout 10 "$ICPPD" ctl --socket "$u/fake.sock" status 2>"$tmp/err")
is $? 1 "ctl answered by another user's listener: exit 1"
is "$out" "" "ctl prints none of its forged answer"
contains "$(cat "$tmp/err")" "the listener is uid $nuid, neither root nor you" \
	"ctl says whose listener it is"
kill $sq 2>/dev/null
wait $sq 2>/dev/null

v=4242
vdir=/tmp/icppd-$v
if [ ! -e "$vdir" ]; then
	as_nobody mkdir -m 777 "$vdir"
	mkdir "$tmp/v" && chown $v "$tmp/v"
	msg=$(env -u XDG_RUNTIME_DIR timeout 10 setpriv --reuid=$v --regid=$v --clear-groups \
		"$ICPPD" daemon --foreground -d "$tmp/v/v.db" --exe /bin/true 2>&1)
	is $? 1 "no XDG_RUNTIME_DIR, /tmp/icppd-UID made by nobody: exit 1"
	contains "$msg" "$vdir: not a directory of this user's only (owner uid $nuid" \
		"the socket folder another user made: refused, says whose"
	rmdir "$vdir"
else
	skip "$vdir exists already" "a squatted socket folder"
fi
# A recorded path swapped for a symlink: report (often run as root)
# and the exporter reopen recorded paths, and read nothing through one,
# not even a copy of the same build (the kernel's mapping paths have no
# symlinks, so one is a swap: to a root-only file, or a device).
sw=$tmp/swap
mkdir "$sw"
cp "$PROGS/heights-nofp" "$sw/prog"
cp "$sw/prog" "$sw/copy"
"$ICPPD" record -q -d "$sw/s.db" -- "$sw/prog" 20 >/dev/null
lines_read() { "$ICPPD" report -d "$sw/s.db" --lines --k 1 2>/dev/null | grep -c 'heights\.c:'; }
read_n=$(lines_read)
ok $([ "${read_n:-0}" -gt 0 ]; echo $?) "the recorded file's lines are read ($read_n)"
rm "$sw/prog"
ln -s "$sw/copy" "$sw/prog"
is "$(lines_read)" 0 "swapped for a symlink: no line read through it"
rm "$sw/prog"
mkfifo "$sw/prog"
is "$(lines_read)" 0 "swapped for a FIFO: nothing read, no hang"
done_testing
