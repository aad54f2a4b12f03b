#!/bin/sh
# bench/attack.sh - the root daemon's memory while a watched unprivileged
# user (nobody) maps crafted files (bench/crafted.c), all at once, held
# mapped while the daemon reads them:
#   notes    N_NOTES files of 32 note sections over a 32 MiB hole
#            (1 GiB of daemon memory each, before the note cap)
#   symbols  N_SYMBOLS files of 65,000 symbols naming one 4 KB string
#            (284 MB each before; now one 512 MiB budget for all)
#   tables   N_TABLES files whose .symtab covers a 768 MiB hole (788 MB
#            at each open before)
#   sections N_SECTIONS files that declare 20 million sections (10 GB
#            and 43 s at each open before)
#   plain    N_PLAIN distinct small files (a module each, held while
#            mapped; past 16,384 they share one that reads nothing)
# Prints the daemon's resident memory before and its peak after, the
# modules it held, and the run counters that say what it refused.
# Then an unwatched copy of the mapper, as nobody, maps a page of a file
# executable at new addresses and unmaps it for CHURN_MS ms of CPU
# (default 15000): the daemon's CPU over that time, as a share of one
# core.
#
# Round 4 (issue 51), a row each, with the time and peak memory of the
# process attacked:
#   builds   N_USERS users (numeric uids, no account needed) each map
#            N_BUILDS files of distinct build-ids, watched, while a
#            watched victim burns VICTIM_MS of CPU: the daemon's CPU and
#            peak RSS, the modules it held, and the victim's samples
#            against its CPU time at 99 Hz, beside a run with no attack
#   debuglink  a report of a stripped program whose .gnu_debuglink
#            candidates are two 8 GiB sparse files (40 s before)
#   inlined  a report of a database holding 1,000,000 inlined rows of
#            one build-id that all its modules share (138.6 s, 9.2 GB
#            with 100 modules before)
#   names    a function named with ';' and U+FFFE: the SVG checked by
#            xmllint, the folded frames counted; a --base file of
#            escape sequences: control bytes printed
#   diskfull record into a 600 KiB tmpfs: its exit status, and the
#            samples stored and spilled against those taken
#   server   report --from a loopback server sending 80 MiB, 60 MiB of
#            distinct names, and a reply that never ends (--timeout 5)
#   exporter the daemon's stop while its ClickHouse server (a private
#            one, scripts/chserver.sh) takes connections and never
#            answers: how long it took, what it killed and left queued
# Needs root and a 'nobody' user.
# Usage: bench/attack.sh [BUILDDIR]; environment: N_NOTES (default 16),
# N_SYMBOLS (16), N_TABLES (16), N_SECTIONS (16), N_PLAIN (20000),
# CHURN_MS (15000), N_USERS (8), N_BUILDS (2500), VICTIM_MS (3000);
# ROUND4=only runs only round 4's rows; ATTACKS="builds ..." some of
# them (names needs inlined's database).
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1 ||
	{ echo "bench: run as root, with a 'nobody' user" >&2; exit 1; }
crafted=$build/bench/crafted
mapper=$(cd "$progs" && pwd)/mapper
sock=$work/d.sock
db=$work/d.db
u=$work/u
chmod 755 "$work"
mkdir "$u"
kb() { awk -v k="$1" '$1 == k ":" { print $2 }' "/proc/$dpid/status"; }
dcpu() {	# the daemon's CPU seconds so far
	awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' \
		"/proc/$dpid/stat"
}
wait_socket() {
	tries=0
	while [ ! -S "$sock" ] && [ $tries -lt 100 ]; do sleep 0.1; tries=$((tries + 1)); done
}

q() { sqlite3 "${2:-$db}" "$1"; }
counter() { q "SELECT coalesce(sum(value), 0) FROM v_run_counters WHERE name = '$1'" "${2:-$db}"; }

# The files of every kind, mapped at once by nobody.
maps() {
	for kind in "notes ${N_NOTES:-16}" "symbols ${N_SYMBOLS:-16}" \
		"tables ${N_TABLES:-16}" "sections ${N_SECTIONS:-16}" \
		"plain ${N_PLAIN:-20000}"; do
		# shellcheck disable=SC2086
		"$crafted" $kind "$u"
	done
	chown -R nobody "$u"

	"$icppd" daemon --foreground -d "$db" --socket "$sock" -F 99 \
		--flush-interval 1 --exe "$mapper" 2>"$work/daemon.log" &
	dpid=$!
	wait_socket
	rss0=$(kb VmRSS)
	# the mapper holds every file mapped while it burns 20 s of CPU; the
	# daemon opens each file as the mapping's record arrives
	t0=$(date +%s.%N)
	# shellcheck disable=SC2046
	set -- $(find "$u" -name '*.so' | sort)
	setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$mapper" 20000 \
		map "$@" >/dev/null
	t1=$(date +%s.%N)
	status=$("$icppd" ctl --socket "$sock" status)
	hwm=$(kb VmHWM)
	cpu=$(dcpu)
	rss1=$(kb VmRSS)
	# the churn, by a program no rule watches, once the mapper's modules
	# (idle since it exited) are evicted, which two flushes do
	"$icppd" ctl --socket "$sock" flush >/dev/null
	"$icppd" ctl --socket "$sock" flush >/dev/null
	evicted=$(dcpu)
	cp "$mapper" "$u/churner"
	c0=$(dcpu)
	t2=$(date +%s.%N)
	maps=$(setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
		"$u/churner" "${CHURN_MS:-15000}" churn /bin/true)
	t3=$(date +%s.%N)
	c1=$(dcpu)
	lost=$("$icppd" ctl --socket "$sock" status | sed -n 's/.*, lost \([0-9]*\),.*/\1/p')
	"$icppd" ctl --socket "$sock" stop >/dev/null
	wait $dpid || true

	printf '%-34s %s\n' "files mapped" "$(find "$u" -name '*.so' | wc -l)"
	printf '%-34s %.1f s\n' "mapper's wall time" "$(echo "$t1 - $t0" | bc)"
	printf '%-34s %s MiB\n' "daemon RSS before" $((rss0 / 1024))
	printf '%-34s %s MiB\n' "daemon RSS with all mapped" $((rss1 / 1024))
	printf '%-34s %s MiB\n' "daemon peak RSS (VmHWM)" $((hwm / 1024))
	printf '%-34s %s s\n' "daemon CPU" "$cpu"
	printf '%-34s %s s\n' "daemon CPU, with the eviction" "$evicted"
	printf '%-34s %s\n' "modules held" "$(echo "$status" | sed -n 's/^modules //p')"
	printf '%-34s %s\n' "modules.refused" "$(counter modules.refused)"
	printf '%-34s %s\n' "modules.symbols_dropped" "$(counter modules.symbols_dropped)"
	printf '%-34s %s\n' "mapper samples recorded" \
		"$(q "SELECT coalesce(sum(samples), 0) FROM v_cids WHERE module = '$mapper'")"
	printf '%-34s %s in %.1f s\n' "unwatched churn: mappings" "$maps" "$(echo "$t3 - $t2" | bc)"
	printf '%-34s %.2f s = %.2f %% of one core\n' "daemon CPU meanwhile" \
		"$(echo "$c1 - $c0" | bc)" "$(echo "100 * ($c1 - $c0) / ($t3 - $t2)" | bc -l)"
	printf '%-34s %s\n' "records lost, whole run (status)" "$lost"
}

# ---- Round 4 (issue 51) ----
# timed CMD...: runs CMD, its output and errors into $work/last.out and
# .err, its status into $work/last.rc; prints "SECONDS PEAK_KB".
timed() {
	rc=0
	/usr/bin/time -o "$work/last.time" -f "%e %M" "$@" >"$work/last.out" \
		2>"$work/last.err" || rc=$?
	echo $rc >"$work/last.rc"
	tail -1 "$work/last.time"
}
row() { printf '%-10s %-46s %s\n' "$1" "$2" "$3"; }
# "T s, P MiB": timed's line
tp() { echo "$1" | awk '{ printf "%.2f s, %.0f MiB", $1, $2 / 1024 }'; }

# The victim's samples against its CPU time at 99 Hz, recorded by a
# daemon watching it and the mappers; with @1 "attack", N_USERS users
# each map N_BUILDS distinct builds meanwhile.
victim_run() {
	vdb=$work/v-$1.db
	rm -f "$vdb"* "$sock"
	"$icppd" daemon --foreground -d "$vdb" --socket "$sock" -F 99 \
		--flush-interval 1 --exe "$b/bmapper" --exe "$b/victim" \
		2>"$work/daemon-$1.log" &
	dpid=$!
	wait_socket
	c0=$(dcpu)
	mpids=
	if [ "$1" = attack ]; then
		for i in $(seq 1 "$n_users"); do
			# shellcheck disable=SC2046
			setpriv --reuid=$((60000 + i)) --regid=$((60000 + i)) \
				--clear-groups -- "$b/bmapper" 4000 map \
				$(find "$b/u$i" -name '*.so' | sort) >/dev/null &
			mpids="$mpids $!"
		done
		sleep 2		# the mappings arrive first
	fi
	/usr/bin/time -o "$work/victim.time" -f "%U %S" "$b/victim" \
		$((${VICTIM_MS:-3000} / 9)) >/dev/null
	# shellcheck disable=SC2086
	[ -n "$mpids" ] && wait $mpids
	status=$("$icppd" ctl --socket "$sock" status)
	vlost=$(echo "$status" | sed -n 's/.*, lost \([0-9]*\),.*/\1/p')
	hwm=$(kb VmHWM)
	cpu=$(echo "$(dcpu) - $c0" | bc)
	"$icppd" ctl --socket "$sock" stop >/dev/null
	wait $dpid || true
	vcpu=$(awk '{ print $1 + $2 }' "$work/victim.time")
	vs=$(q "SELECT coalesce(sum(samples), 0) FROM v_cids WHERE program = '$b/victim'" "$vdb")
	printf '%s %s %s %s %s %s %s\n' "$vs" "$vcpu" "$cpu" "$((hwm / 1024))" \
		"$(echo "$status" | sed -n 's/^modules //p')" \
		"$(counter modules.refused "$vdb")" "${vlost:-0}"
}

builds() {
	n_users=${N_USERS:-8} n_builds=${N_BUILDS:-2500}
	b=$work/b
	mkdir -p "$b"
	cp "$progs/heights-fp" "$b/victim"
	cp "$mapper" "$b/bmapper"
	for i in $(seq 1 "$n_users"); do
		mkdir -p "$b/u$i"
		"$crafted" builds "$n_builds" "$b/u$i" $((i * n_builds))
	done
	chmod -R a+rX "$b"
	set -- $(victim_run quiet)
	row builds "no attack: victim samples / (CPU s x 99)" \
		"$1 / $(echo "$2 * 99" | bc) = $(echo "scale=3; $1 / ($2 * 99)" | bc)"
	row "" "... daemon CPU, peak RSS, records lost" "$3 s, $4 MiB, $7"
	set -- $(victim_run attack)
	row builds "$n_users users x $n_builds builds mapped: victim" \
		"$1 / $(echo "$2 * 99" | bc) = $(echo "scale=3; $1 / ($2 * 99)" | bc)"
	row "" "... daemon CPU, peak RSS, records lost" "$3 s, $4 MiB, $7"
	row "" "... modules held at the end, refused" "$5, $6 (victim: 0 samples before)"
}

debuglink() {
	d=$work/dl
	mkdir -p "$d/.debug"
	cp "$progs/heights-fp" "$work/full"
	objcopy --only-keep-debug "$work/full" "$work/prog.debug"
	objcopy --strip-all --add-gnu-debuglink="$work/prog.debug" \
		"$work/full" "$d/prog"
	"$icppd" record -q -d "$work/dl.db" -- "$d/prog" 40 >/dev/null 2>&1
	for f in "$d/prog.debug" "$d/.debug/prog.debug"; do
		head -c 64 "$work/prog.debug" >"$f"
		truncate -s 8G "$f"
	done
	t=$(timed "$icppd" report -d "$work/dl.db" -f folded)
	row debuglink "report, two 8 GiB candidates (40 s before)" \
		"$(tp "$t"), exit $(cat "$work/last.rc")"
	rm -f "$d/prog.debug" "$d/.debug/prog.debug"
}

inlined() {
	idb=$work/inl.db
	"$icppd" record -q -d "$idb" -- "$progs/inlined" 300 >/dev/null 2>&1
	"$icppd" report -d "$idb" -f folded >/dev/null 2>&1
	bid=$(q "SELECT build_id FROM modules WHERE path = '$progs/inlined'" "$idb")
	q "UPDATE modules SET build_id = '$bid'" "$idb"
	q "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c
	   WHERE i < 1000000) INSERT OR IGNORE INTO inlined SELECT '$bid',
	   1000000 + i * 16, 1, 'fn' || i || char(9) || 'file' || i || '.c' ||
	   char(9) || '7' || char(10) || char(9) || 'x.c' || char(9) || '9'
	   FROM c" "$idb"
	for fmt in folded svg pprof; do
		t=$(timed "$icppd" report -d "$idb" -f $fmt -o "$work/inl.$fmt")
		row inlined "report -f $fmt, 1,000,000 rows of one build" \
			"$(tp "$t"), exit $(cat "$work/last.rc")"
	done
	row "" "... its modules" "$(q "SELECT count(*) FROM modules" "$idb") (138.6 s, 9.2 GB with 100 before)"
}

names() {
	ndb=$work/names.db
	cp "$work/inl.db" "$ndb"
	q "UPDATE functions SET name = name || ';FORGED' || char(65534)" "$ndb"
	t=$(timed "$icppd" report -d "$ndb" -f svg -o "$work/n.svg")
	xml=$(xmllint --noout "$work/n.svg" 2>&1 | head -1)
	row names "svg of ';' and U+FFFE names: xmllint" \
		"${xml:-valid}; $(tp "$t")"
	"$icppd" report -d "$ndb" -f folded --no-inline >"$work/n.folded"
	"$icppd" report -d "$work/inl.db" -f folded --no-inline >"$work/p.folded"
	row "" "folded frames, ';' names vs plain" \
		"$(awk -F';' '{ n += NF } END { print n }' "$work/n.folded") vs $(awk -F';' '{ n += NF } END { print n }' "$work/p.folded")"
	printf 'main;\033]0;pwned\007\033[2Jwork;leaf 2\nmain;FAKE\rother 1\n' >"$work/base.folded"
	t=$(timed "$icppd" report -d "$ndb" --base "$work/base.folded")
	row "" "text --base of escape sequences: control bytes" \
		"$(tr -d '\n' <"$work/last.out" | tr -d '\040-\377' | wc -c); $(tp "$t")"
}

diskfull() {
	mkdir -p "$work/fs"
	mount -t tmpfs -o size=600k tmpfs "$work/fs"
	t=$(TMPDIR=$work timed "$icppd" record -d "$work/fs/r.db" -- \
		"$progs/paths" 1500)
	taken=$(sed -n 's/.*samples, \([0-9]*\) with a context identifier.*/\1/p' "$work/last.err")
	stored=$(q "SELECT coalesce(sum(samples), 0) FROM v_cids" "$work/fs/r.db")
	spill=$(sed -n 's/.*written to \([^ ]*\) (free space.*/\1/p' "$work/last.err")
	spilled=$([ -n "$spill" ] && awk -F'\t' '!/^#/ { s += $8 } END { print s + 0 }' "$spill" || echo 0)
	row diskfull "record into 600 KiB: exit status" "$(cat "$work/last.rc") (0 before); $(tp "$t")"
	row "" "... samples taken, stored, spilled" "$taken, $stored, $spilled (0 stored before)"
	umount "$work/fs"
}

server() {
	for m in huge wide endless; do
		rm -f "$work/port"
		"$progs/hostile_http" "$work/port" $m 60 &
		spid=$!
		while [ ! -s "$work/port" ]; do sleep 0.05; done
		t=$(timed "$icppd" report --from "http://127.0.0.1:$(cat "$work/port")" \
			-f folded --timeout 5)
		row server "report --from, $m reply" \
			"$(tp "$t"), exit $(cat "$work/last.rc"): $(cut -c 1-60 "$work/last.err" | sed 's/.*127.0.0.1:[0-9]*: //' | head -1)"
		kill $spid 2>/dev/null
		wait $spid 2>/dev/null || true
	done
}

# The daemon's stop while its ClickHouse server takes connections and
# never answers (SIGSTOP): a segment's exporter waits on it.
exporter() {
	command -v clickhouse-server >/dev/null ||
		{ row exporter "daemon stop, server stalled" "(no clickhouse-server)"; return; }
	. "$top/scripts/chserver.sh"
	chmod 711 "$work"
	port=$((30000 + $$ % 1000 * 3))
	ch_start "$work/ch" $port $((port + 1)) $((port + 2)) >/dev/null || {
		row exporter "daemon stop, server stalled" "(the server did not start)"
		return
	}
	rm -f "$sock"
	cp "$progs/heights-fp" "$work/exp-prog"
	"$icppd" daemon --foreground -d "$work/exp.db" --socket "$sock" -F 500 \
		--flush-interval 0.5 --segment 1 --exe "$work/exp-prog" \
		--export "http://127.0.0.1:$port" 2>"$work/exp.log" &
	dpid=$!
	wait_socket
	kill -STOP "$(cat "$work/ch/pid")"
	"$work/exp-prog" 40 >/dev/null
	sleep 1.5
	hwm=$(kb VmHWM)
	cpu=$(dcpu)	# until the stop: then it waits, its exporters work
	t0=$(date +%s.%N)
	kill -TERM $dpid
	wait $dpid || true
	t1=$(date +%s.%N)
	kill -CONT "$(cat "$work/ch/pid")"
	ch_stop "$work/ch"
	row exporter "daemon stop, server stalled (358.5 s before)" \
		"$(echo "$t1 - $t0" | bc | awk '{ printf "%.1f s", $1 }'), $(grep -c 'past its budget: killed' "$work/exp.log") exporters killed, $(q "SELECT count(*) FROM exports WHERE state = 'pending'" "$work/exp.db") segments queued"
	row "" "... daemon CPU before the stop, peak RSS" "$cpu s, $((hwm / 1024)) MiB"
}

[ "${ROUND4:-}" = only ] || maps
echo
printf '%-10s %-46s %s\n' attack measured result
for a in ${ATTACKS:-builds debuglink inlined names diskfull server exporter}; do
	$a
done
