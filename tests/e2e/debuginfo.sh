#!/bin/sh
# Names and lines for a stripped program from its separate debug file,
# found as the toolchain finds it: the file .gnu_debuglink names, with
# its CRC checked, and debuginfod by build-id (Debian's debuginfod
# server on a loopback port, serving the file objcopy --only-keep-debug
# split off); nothing fetched when DEBUGINFOD_URLS is unset, and a
# server that does not answer costs at most its timeout.
. "$TESTS_SRCDIR/e2e/lib.sh"
require_perf

d=$tmp/bin
mkdir -p "$d" "$tmp/srv"
cp "$PROGS/heights-fp" "$d/full"
objcopy --only-keep-debug "$d/full" "$d/prog.debug"
objcopy --strip-all --add-gnu-debuglink="$d/prog.debug" "$d/full" "$d/prog"
mv "$d/prog.debug" "$tmp/prog.debug"	# away while recording
"$ICPPD" record -q -d "$db" -- "$d/prog" 40 >/dev/null 2>&1
names() {	# names [ENV...]: the report's leaf functions, sorted
	env "$@" "$ICPPD" report -d "$db" -f folded --k 0 2>/dev/null |
		sed 's/ [0-9]*$//' | sort -u | tr '\n' ' '
}
contains "$(names)" "prog+0x" "stripped, no debug file: functions named by their FDEs"
hint=$(env -u DEBUGINFOD_URLS "$ICPPD" report -d "$db" --k 0 2>&1 >/dev/null)
contains "$hint" "of the samples are in functions without a name (the heaviest in prog): stripped code; set DEBUGINFOD_URLS" \
	"... and the report says how to name them, once"
is "$(printf '%s\n' "$hint" | grep -c 'without a name')" 1 "... in one line"
# The "prog+0xADDR" names the unstripped program's symbols cover: a
# stray sample in a PLT stub (the program's truth-writing calls libc)
# has no symbol in either, and stays an address.
covered() {	# covered NAMES
	for a in $(printf '%s\n' $1 | sed -n 's/^prog+0x//p'); do
		addr2line -f -e "$d/full" "0x$a" | head -1
	done | grep -vc '^??$'
}

# The debuglink: found beside the program, judged by its build-id.
objcopy --only-keep-debug "$PROGS/heights-nofp" "$d/prog.debug"
contains "$(names)" "prog+0x" "a debug file of another build: not used"
cp "$tmp/prog.debug" "$d/prog.debug"
got=$(names)
contains "$got" "leaf " "debuglink: the stripped program's functions named"
is "$(covered "$got")" 0 "... every one"
is "$(env -u DEBUGINFOD_URLS "$ICPPD" report -d "$db" --k 0 2>&1 >/dev/null | grep -c 'without a name')" 0 \
	"... and no hint to name them"
rm "$d/prog.debug"

# A candidate is anyone's to place (issue 51, item 1): an 8 GiB sparse
# file with an ELF header and no build-id, beside the program and in
# .debug/, was CRC'd whole, 16 GiB for one module (40 s; at least 8 s
# on the fastest CPU).  It is past the CRC's bound now: not read.
mkdir -p "$d/.debug"
for f in "$d/prog.debug" "$d/.debug/prog.debug"; do
	head -c 64 "$tmp/prog.debug" >"$f"
	truncate -s 8G "$f"
done
start=$(now_ms)
got=$(names)
took=$(($(now_ms) - start))
ok $([ $took -lt 4000 ]; echo $?) "two 8 GiB candidates: the report took $took ms (16 GiB CRC'd took 40 s)"
contains "$got" "prog+0x" "... and used neither"
rm -r "$d/prog.debug" "$d/.debug"

# A program and debug file with no build-id: the link's CRC decides.
objcopy --remove-section .note.gnu.build-id "$PROGS/heights-fp" "$tmp/nobid"
objcopy --only-keep-debug "$tmp/nobid" "$tmp/nobid.debug"
objcopy --strip-all --add-gnu-debuglink="$tmp/nobid.debug" "$tmp/nobid" "$d/nb"
"$ICPPD" record -q -d "$tmp/nb.db" -- "$d/nb" 40 >/dev/null 2>&1
nbnames() { "$ICPPD" report -d "$tmp/nb.db" -f folded --k 0 2>/dev/null |
	sed 's/ [0-9]*$//' | sort -u | tr '\n' ' '; }
cp "$tmp/nobid.debug" "$d/nobid.debug"
printf 'x' | dd of="$d/nobid.debug" bs=1 seek=100 conv=notrunc 2>/dev/null
contains "$(nbnames)" "nb+0x" "no build-id, a debug file whose CRC is not the link's: not used"
cp "$tmp/nobid.debug" "$d/nobid.debug"
contains "$(nbnames)" "leaf " "no build-id, the link's CRC: the functions named"
rm "$d/nobid.debug"

# debuginfod: a server on a loopback port serving the debug file.
if ! command -v debuginfod >/dev/null; then
	skip "no debuginfod server (apt-get install debuginfod)" "debuginfod"
	done_testing
	exit
fi
id=$(readelf -n "$d/prog" | sed -n 's/.*Build ID: //p')
cp "$tmp/prog.debug" "$tmp/srv/"
port=$((20000 + $$ % 20000))
debuginfod -F "$tmp/srv" -p "$port" -d "$tmp/di.sqlite" >"$tmp/di.log" 2>&1 &
dpid=$!
trap 'kill $dpid 2>/dev/null; rm -rf "$tmp"' EXIT
i=0
until curl -sf -o /dev/null "http://127.0.0.1:$port/buildid/$id/debuginfo" ||
	[ $i -ge 100 ]; do
	sleep 0.2
	i=$((i + 1))
done
ok $([ $i -lt 100 ]; echo $?) "debuginfod serves the debug file of build $id"
contains "$(names)" "prog+0x" "DEBUGINFOD_URLS unset: nothing fetched"
dienv="DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$tmp/cache"
got=$(names $dienv)
contains "$got" "leaf " "debuginfod: the stripped program's functions named"
is "$(covered "$got")" 0 "... every one"
lines=$(env $dienv "$ICPPD" report -d "$db" --lines --k 1 2>/dev/null)
contains "$lines" "<- path_b (heights.c:" "debuginfod: the callers' lines too"
ok $(ls "$tmp/cache/$id/debuginfo" >/dev/null 2>&1; echo $?) "... kept in debuginfod's cache"
# the same name in every format
"$ICPPD" report -d "$db" -f json -o "$tmp/r.json" 2>/dev/null
env $dienv "$ICPPD" report -d "$db" -f json -o "$tmp/r.json"
contains "$(cat "$tmp/r.json")" '"function": "path_a"' "json: the name debuginfod gave"
env $dienv "$ICPPD" report -d "$db" -f svg -o "$tmp/r.svg"
contains "$(cat "$tmp/r.svg")" "<title>path_a" "svg: the same name"
kill $dpid 2>/dev/null
wait $dpid 2>/dev/null

# A server that does not answer: one timeout at most, then the raw names.
start=$(now_ms)
got=$(names DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_TIMEOUT=2 \
	DEBUGINFOD_CACHE_PATH="$tmp/cache2")
took=$(($(now_ms) - start))
ok $([ $took -lt 6000 ]; echo $?) "a server away: the report took $took ms (timeout 2 s)"
contains "$got" "prog+0x" "... and named what it could"
done_testing
