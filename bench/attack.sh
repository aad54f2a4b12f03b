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
# Needs root and a 'nobody' user.
# Usage: bench/attack.sh [BUILDDIR]; environment: N_NOTES (default 16),
# N_SYMBOLS (16), N_TABLES (16), N_SECTIONS (16), N_PLAIN (20000),
# CHURN_MS (15000).
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
for kind in "notes ${N_NOTES:-16}" "symbols ${N_SYMBOLS:-16}" \
	"tables ${N_TABLES:-16}" "sections ${N_SECTIONS:-16}" \
	"plain ${N_PLAIN:-20000}"; do
	# shellcheck disable=SC2086
	"$crafted" $kind "$u"
done
chown -R nobody "$u"

kb() { awk -v k="$1" '$1 == k ":" { print $2 }' "/proc/$dpid/status"; }
dcpu() {	# the daemon's CPU seconds so far
	awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' \
		"/proc/$dpid/stat"
}

"$icppd" daemon --foreground -d "$db" --socket "$sock" -F 99 \
	--flush-interval 1 --exe "$mapper" 2>"$work/daemon.log" &
dpid=$!
tries=0
while [ ! -S "$sock" ] && [ $tries -lt 100 ]; do sleep 0.1; tries=$((tries + 1)); done
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
q() { sqlite3 "$db" "$1"; }
counter() { q "SELECT coalesce(sum(value), 0) FROM v_run_counters WHERE name = '$1'"; }

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
