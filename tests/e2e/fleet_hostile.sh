#!/bin/sh
# report --from against a server that answers with hostile data
# (tests/progs/hostile_http.c on a loopback port; issue 51): whatever it
# sends, the report's memory and time stay bounded, what it prints is
# printable, and a reply it cannot use is one clear line and exit 1.
. "$TESTS_SRCDIR/e2e/lib.sh"

serve() {	# serve MODE: starts the server, its URL into $url
	rm -f "$tmp/port"
	"$PROGS/hostile_http" "$tmp/port" "$1" 60 &
	spid=$!
	i=0
	while [ ! -s "$tmp/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	url=http://127.0.0.1:$(cat "$tmp/port")
}
unserve() { kill $spid 2>/dev/null; wait $spid 2>/dev/null; }
trap 'unserve; rm -rf "$tmp"' EXIT
# report --from with ARGS: its output, errors, exit status and peak
# memory (KB) into $tmp/{out,err,rc,kb}
report() {
	if command -v /usr/bin/time >/dev/null; then
		/usr/bin/time -o "$tmp/kb" -f %M "$ICPPD" report --from "$url" "$@" \
			>"$tmp/out" 2>"$tmp/err"
	else
		"$ICPPD" report --from "$url" "$@" >"$tmp/out" 2>"$tmp/err"
		echo 0 >"$tmp/kb"
	fi
	echo $? >"$tmp/rc"
}
# (AddressSanitizer holds freed memory back for 256 MB by default.)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"
export ASAN_OPTIONS
# bytes below 0x20 other than newline, in FILE
controls() { tr -d '\n' <"$1" | tr -d '\040-\377' | wc -c; }

serve names
for fmt in text folded; do
	report -f $fmt
	is "$(cat "$tmp/rc")" 0 "names with ESC, CR, BEL and invalid UTF-8: $fmt report exits 0"
	is "$(controls "$tmp/out")" 0 "... and prints no control byte"
done
contains "$(cat "$tmp/out")" '\x1b]0\x3bpwned\x07\x1b[2Jesc' "... the escape sequence as \\xNN"
contains "$(cat "$tmp/out")" 'main;semi\x3bFORGED 1' "... a ';' in a name one frame"
unserve

serve absurd
report -f folded
is "$(cat "$tmp/rc")" 1 "absurd weights (1e300, nan, -5): exit 1"
contains "$(cat "$tmp/err")" "row 1 is no stack, how, weight" "... naming the row"
is "$(wc -l <"$tmp/err")" 1 "... in one line"
is "$(controls "$tmp/err")" 0 "... that is printable"
unserve

serve huge
report -f folded
is "$(cat "$tmp/rc")" 1 "an 80 MiB reply: exit 1"
contains "$(cat "$tmp/err")" "the reply is over 64 MiB" "... and says why"
ok $([ "$(tail -1 "$tmp/kb")" -lt 400000 ]; echo $?) "... within bounded memory ($(tail -1 "$tmp/kb") KB peak)"
unserve

serve wide
report -f folded
is "$(cat "$tmp/rc")" 0 "60 MiB of distinct 4,000-byte names: exit 0"
ok $([ "$(tail -1 "$tmp/kb")" -lt 600000 ]; echo $?) "... within bounded memory ($(tail -1 "$tmp/kb") KB peak)"
unserve

serve endless
start=$(now_ms)
report -f folded --timeout 2
took=$(($(now_ms) - start))
is "$(cat "$tmp/rc")" 1 "a reply that never ends: exit 1"
contains "$(cat "$tmp/err")" "no whole reply in 2 s" "... at --timeout, saying so"
ok $([ $took -lt 20000 ]; echo $?) "... after $took ms"
unserve
done_testing
