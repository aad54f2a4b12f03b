#!/bin/sh
# Inlined functions as frames (report's default; --no-inline leaves them
# out) on tests/progs/inlined.c, whose CPU time is known by construction:
# about 50% in mix (inlined from a header into helper_a, itself inlined
# into work), 25% in helper_b's own loop (inlined into work) and 25% in
# callee, which helper_b calls from code inlined in work.  The chains
# at every address pprof shows are checked against binutils' addr2line
# -i on the same addresses, for gcc's DWARF 5 and 4, two units, and
# clang's (no .debug_aranges).
. "$TESTS_SRCDIR/e2e/lib.sh"
require_perf

"$ICPPD" record -q -d "$db" -- "$PROGS/inlined" 600 >/dev/null 2>&1
is $? 0 "record the inlined program"
total=$(q "SELECT sum(samples) FROM cid_samples WHERE run_id = 1")
ok $([ "${total:-0}" -ge 200 ]; echo $?) "enough samples to weigh shares ($total)"

# The flat table: each function's self share, the inlined ones named as
# perf report names them.  Margins of 12 points: a share of 25% over
# 200 samples has a standard deviation of 3 points.
flat=$("$ICPPD" report -d "$db" --sort sym --min-percent 0)
share() { printf '%s\n' "$flat" | awk -v f="$1" '{ s = $0; sub(/^ *[0-9.]+ +[0-9.]+% +/, "", s) } s == f { print $2 + 0; exit }'; }
near() {	# near GOT WANT DESCRIPTION
	ok $(awk -v g="${1:-0}" -v w="$2" 'BEGIN { d = g - w; exit !(d < 12 && d > -12) }'; echo $?) "$3 ($1%, expected about $2%)"
}
near "$(share 'mix (inlined)')" 50 "--sort sym: mix, inlined from a header"
near "$(share 'helper_b (inlined)')" 25 "--sort sym: helper_b's own loop"
near "$(share callee)" 25 "--sort sym: callee"
own=$(share work)
ok $(awk -v w="${own:-0}" 'BEGIN { exit !(w < 5) }'; echo $?) \
	"--sort sym: work keeps little of its own (${own:-0}%)"

# The contexts: inlined frames between their caller and what they call.
folded=$("$ICPPD" report -d "$db" -f folded)
has() { printf '%s\n' "$folded" | grep -q "\(^\|;\)$1 [0-9]*$"; }
has 'main;work;helper_a (inlined);mix (inlined)'
ok $? "folded: main;work;helper_a (inlined);mix (inlined)"
has 'main;work;helper_b (inlined);callee'
ok $? "folded: callee below helper_b, inlined where it calls it"
sum_folded() { awk '{ s += $NF } END { print s }'; }
is "$(printf '%s\n' "$folded" | sum_folded)" \
	"$("$ICPPD" report -d "$db" -f folded --no-inline | sum_folded)" \
	"folded: inlined frames split weights, they add none"
text=$("$ICPPD" report -d "$db" --k 3)
printf '%s\n' "$text" | grep -A2 ' mix (inlined)$' | tr -s ' ' |
	grep -q '<- work$'
ok $? "text, k = 3: mix (inlined) <- helper_a (inlined) <- work"
contains "$("$ICPPD" report -d "$db" -f json)" '"function": "mix (inlined)", "inlined": true' \
	"json: the inlined frame, named as in the text and marked"
"$ICPPD" report -d "$db" -f svg -o "$tmp/i.svg"
tr '\n' ' ' <"$tmp/i.svg" | grep -q '<title>mix (inlined) [0-9.]* samples'
ok $? "svg: a frame for mix (inlined)"

# --no-inline: the physical functions alone, as the CIDs have them.
plain=$("$ICPPD" report -d "$db" -f folded --no-inline)
printf '%s\n' "$plain" | grep -q inlined
ok $((! $?)) "--no-inline: no inlined frame"
has_plain() { printf '%s\n' "$plain" | grep -q "\(^\|;\)$1 [0-9]*$"; }
has_plain 'main;work;callee'
ok $? "--no-inline: callee right below work"
flat=$("$ICPPD" report -d "$db" --sort sym --min-percent 0 --no-inline)
near "$(share work)" 75 "--no-inline --sort sym: work holds what was inlined in it"

# compare draws a run as report does: with its inlined frames, or
# without them with --no-inline.
printf '%s\n' "$folded" >"$tmp/inl.folded"
printf '%s\n' "$plain" >"$tmp/plain.folded"
contains "$("$ICPPD" compare -d "$db" "$tmp/inl.folded" 1)" "degree of overlap: 1.0000" \
	"compare: a run and its folded report overlap fully, inlined frames and all"
contains "$("$ICPPD" compare -d "$db" --no-inline "$tmp/plain.folded" 1)" "degree of overlap: 1.0000" \
	"compare --no-inline: as report --no-inline"
ov=$("$ICPPD" compare -d "$db" --no-inline "$tmp/inl.folded" 1 | sed -n 's/^degree of overlap: //p')
ok $(awk -v o="${ov:-1}" 'BEGIN { exit !(o < 0.5) }'; echo $?) \
	"compare: inlined frames against none differ ($ov)"

# pprof: one location per address, a line per function inlined there,
# innermost first.  Every location of the program against addr2line -i.
chains() {	# chains PROGRAM PPROF_FILE: "ADDRESS ours | addr2line's" per location
	go tool pprof -raw "$2" 2>/dev/null | awk '
		/^Locations/ { on = 1; next } /^Mappings/ { on = 0 }
		on && $1 ~ /^[0-9]+:$/ { m = ($3 == "M=1"); if (m) { a = $2; n[a] = $4; order[++k] = a } next }
		on && m && NF >= 2 { n[a] = n[a] " " $1 }
		END { for (i = 1; i <= k; i++) print order[i], n[order[i]] }' |
	while read -r addr names; do
		theirs=$(addr2line -f -i -e "$1" "$addr" | awk 'NR % 2' | tr '\n' ' ')
		echo "$addr $names | ${theirs% }"
	done
}
same_chains() {	# same_chains PROGRAM DB LABEL
	"$ICPPD" report -d "$2" -f pprof -o "$tmp/c.pb.gz" || return
	chains "$1" "$tmp/c.pb.gz" >"$tmp/chains"
	bad=$(awk -F' [|] ' '{ o = $1; sub(/^[^ ]* /, "", o) } o != $2' "$tmp/chains")
	is "$bad" "" "$3: every location's functions as addr2line -i gives them ($(wc -l <"$tmp/chains") locations)"
	grep -q ' mix helper_a work |' "$tmp/chains"
	ok $? "$3: mix and helper_a inlined at work's hot addresses"
}
if command -v go >/dev/null; then
	same_chains "$PROGS/inlined" "$db" "pprof, DWARF 5"
	go tool pprof -traces "$tmp/c.pb.gz" >"$tmp/traces" 2>&1
	grep -q 'mix (inline)' "$tmp/traces"
	ok $? "go tool pprof -traces: mix (inline)"
	go tool pprof -list '^mix$' "$tmp/c.pb.gz" >"$tmp/list" 2>&1
	contains "$(cat "$tmp/list")" "ROUTINE ======================== mix in $(realpath "$TESTS_SRCDIR/progs/inlined.h")" \
		"go tool pprof -list: mix's lines in the header it is inlined from"
	"$ICPPD" report -d "$db" -f pprof --no-inline -o "$tmp/n.pb.gz"
	go tool pprof -traces "$tmp/n.pb.gz" 2>&1 | grep -q '(inline)'
	ok $((! $?)) "pprof --no-inline: no inlined lines"
	"$ICPPD" record -q -d "$tmp/d4.db" -- "$PROGS/inlined-dwarf4" 200 >/dev/null 2>&1
	same_chains "$PROGS/inlined-dwarf4" "$tmp/d4.db" "pprof, DWARF 4 (.debug_ranges)"
	"$ICPPD" record -q -d "$tmp/mu.db" -- "$PROGS/inlined-multi" 200 >/dev/null 2>&1
	same_chains "$PROGS/inlined-multi" "$tmp/mu.db" "pprof, two units read as lookups reach them"
	grep -q ' cold_helper cold_path |' "$tmp/chains"
	ok $? "two units: cold_helper inlined in the unit below"
	if [ -x "$PROGS/inlined-clang" ]; then
		"$ICPPD" record -q -d "$tmp/cl.db" -- "$PROGS/inlined-clang" 200 >/dev/null 2>&1
		same_chains "$PROGS/inlined-clang" "$tmp/cl.db" "pprof, clang (no .debug_aranges: units by their DIEs' ranges)"
	else
		skip "clang missing" "pprof, clang"
	fi
else
	skip "go missing" "pprof's inlined lines"
fi

# The chains a report read from the DWARF are kept in the store: a
# later report of the build finds them there, also once its file is
# gone.  What the store holds is checked as any input.
cp "$PROGS/inlined" "$tmp/gone"
"$ICPPD" record -q -d "$tmp/g.db" -- "$tmp/gone" 200 >/dev/null 2>&1
"$ICPPD" report -d "$tmp/g.db" -f folded >"$tmp/g1"
nl="char(10)" tab="char(9)"
kept=$(q "SELECT count(*) FROM inlined WHERE instr(chain, $nl)" "$tmp/g.db")
ok $([ "${kept:-0}" -ge 1 ]; echo $?) "the store keeps what DWARF said ($kept addresses with inlined functions)"
rm "$tmp/gone"
"$ICPPD" report -d "$tmp/g.db" -f folded >"$tmp/g2" 2>/dev/null
is "$(grep -c inlined "$tmp/g2")" "$(grep -c inlined "$tmp/g1")" \
	"the file gone: the inlined frames from the store"
if command -v go >/dev/null; then
	"$ICPPD" report -d "$tmp/g.db" -f pprof -o "$tmp/g.pb.gz" 2>/dev/null
	go tool pprof -traces "$tmp/g.pb.gz" 2>&1 | grep -q 'mix (inline)'
	ok $? "the file gone: pprof's inlined lines from the store"
else
	skip "go missing" "pprof from the store"
fi
q "UPDATE inlined SET chain = 'b' || char(1) || 'c' || $tab || 'f.c' || $tab || '3' || $nl || 'a' || $tab || 'g.c' || $tab || '4' || $nl || $tab || 'h.c' || $tab || '5' WHERE instr(chain, $nl)" "$tmp/g.db"
"$ICPPD" report -d "$tmp/g.db" -f folded >"$tmp/g3" 2>/dev/null
is "$?" 0 "a crafted row: report exits 0"
grep -q ';a (inlined);b\\x01c (inlined) [0-9]*$' "$tmp/g3"
ok $? "a crafted row: its names made printable"
for bad in "'x' || $tab || 'f' || $tab || '1' || $nl || 'y' || $tab || 'f' || $tab || '2'" \
	"replace(hex(zeroblob(20)), '00', 'x' || $tab || 'f' || $tab || '1' || $nl) || $tab || 'f' || $tab || '1'" \
	"'x' || $tab || '1' || $nl || $tab || 'f' || $tab || '1'" \
	"'x' || $tab || 'f' || $tab || '99999999999' || $nl || $tab || 'f' || $tab || '1'"; do
	q "UPDATE inlined SET chain = $bad WHERE instr(chain, $tab)" "$tmp/g.db"
	"$ICPPD" report -d "$tmp/g.db" -f folded >"$tmp/g4" 2>/dev/null
	# the program's inlined frames or the row's: libc's, read from its
	# debug file where its rows are left out too, may show (a rare
	# sample at a libc address with inlined functions)
	grep -Eq '(^|;)(x|y|mix|helper_a|helper_b|cold_helper) \(inlined\)' "$tmp/g4"
	ok $((! $?)) "a row a report did not write, left out: $bad"
	q "UPDATE inlined SET chain = 'b' || $tab || $tab || '1' || $nl || $tab || $tab || '1' WHERE chain = $bad" "$tmp/g.db"
done

# The store is asked for the addresses a report needs, once per build:
# 400,000 crafted rows of one build-id that both modules of the run
# share (a library mapped under many paths is one build) cost a report
# no memory (read whole per module, they took 148 MB and 1.05 s).
if command -v /usr/bin/time >/dev/null; then
	b=$(q "SELECT build_id FROM modules WHERE path LIKE '%/gone'" "$tmp/g.db")
	q "UPDATE modules SET build_id = '$b'" "$tmp/g.db"
	rss() { /usr/bin/time -f %M "$ICPPD" report -d "$tmp/g.db" -f folded \
		2>&1 >/dev/null | tail -1; }
	rss0=$(rss)
	q "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c
	   WHERE i < 400000) INSERT OR IGNORE INTO inlined SELECT '$b',
	   1000000 + i * 16, 1, 'fn' || i || $tab || 'file' || i || '.c' ||
	   $tab || '7' || $nl || $tab || 'x.c' || $tab || '9' FROM c" "$tmp/g.db"
	rss1=$(rss)
	ok $([ $((rss1 - rss0)) -lt 32768 ]; echo $?) \
		"400,000 rows of a shared build: the report's peak memory $rss0 KB, now $rss1 KB"
else
	skip "no /usr/bin/time (apt-get install time)" "a shared build's rows"
fi

# A program without DWARF: no inlined frame in its functions, the
# report as before.  (A stray sample in libc, which has DWARF where
# libc6-dbg is installed, may have inlined frames in libc's: those are
# right, and not the program's.)
"$ICPPD" record -q -d "$tmp/s.db" -- "$PROGS/heights-stripped" 60 >/dev/null 2>&1
"$ICPPD" report -d "$tmp/s.db" -f folded >"$tmp/s.folded"
is $? 0 "a stripped program: report exits 0"
is "$(awk '{ sub(/ [0-9]+$/, ""); n = split($0, f, ";"); phys = ""
	for (i = 1; i <= n; i++)
		if (f[i] !~ / \(inlined\)$/) phys = f[i]
		else if (phys ~ /^heights-stripped/) print f[i] " in " phys }' "$tmp/s.folded" | head -3)" "" \
	"a stripped program: no inlined frame in its functions"
is "$(integrity)" ok "the database passes integrity_check"
done_testing
