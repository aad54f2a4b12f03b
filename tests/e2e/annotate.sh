#!/bin/sh
# icppd annotate: a function's samples by instruction and source line,
# as perf annotate --stdio prints them, and each instruction's share
# within its bound of perf annotate's own on the same program; by
# instruction alone for stripped code; what it cannot read, said.
. "$TESTS_SRCDIR/e2e/lib.sh"
require_perf

ms=200	# CPU milliseconds per burn: work burns twice, 400 ms
"$ICPPD" record -q -d "$db" -- "$PROGS/heights-nofp" $ms >/dev/null
run=$(last_run)
out=$("$ICPPD" annotate -d "$db" work)
is $? 0 "annotate work: exit 0"
contains "$out" "Source code & Disassembly of heights-nofp for cpu-clock (" "the header names the binary and event"
samples=$(q "SELECT sum(p.samples) FROM pc_samples p JOIN functions f ON f.id = p.function_id
	WHERE p.run_id = $run AND f.name = 'work'")
ok $([ "$samples" -ge "$(min_samples $((2 * ms)))" ]; echo $?) "work has its samples ($samples)"
contains "$out" "($samples samples, percent: local period), run $run" "... all of them, of this run"
# each instruction: "  PP.PP :   ADDR:   TEXT"
pct=$(printf '%s\n' "$out" | awk '$2 == ":" && $3 ~ /^[0-9a-f]+:$/ { s += $1; if ($1 > m) m = $1 } END { printf "%.1f %.1f\n", s, m }')
ok $(awk -v s="${pct% *}" 'BEGIN { exit !(s >= 99.9 && s <= 100.1) }'; echo $?) \
	"the instructions' shares add up to 100 ($pct)"
# (the hottest held 49.8 % in one ASan run of a full suite: a bound of
# 50 had no margin)
ok $(awk -v m="${pct#* }" 'BEGIN { exit !(m >= 35) }'; echo $?) "the burn loop's hottest instruction holds 35 % or more (${pct#* })"
contains "$out" "Sorted summary of the source lines of work" "a summary of the sampled source lines first"
contains "$out" "heights.c:" "... named by file and line"
contains "$out" "BURN();" "the source lines' text between the instructions"
contains "$out" "<work>:" "the function's start, named"
contains "$("$ICPPD" annotate -d "$db" --no-source work)" "heights.c" "--no-source: lines by file name"
ok $("$ICPPD" annotate -d "$db" --no-source work | grep -q 'BURN();'; [ $? -ne 0 ]; echo $?) "... without their text"

# perf annotate's shares of the same function, instruction by instruction,
# of the same run: icppd records perf recording the program, both at
# 10 kHz, about 4,000 samples each in work.  Sampling alone would move
# the difference of two shares by sqrt(2 p (1 - p) / n) (1.05 points for
# a share of 67 %); on a quiet VM they are 0.0-0.4 points apart, under
# six busy loops under half a point, but three CI suites saw 2.42, 2.64
# and 2.67 points, the last at an instruction holding 97 % of work (on
# this build's loop the add after the load of sink holds 96-99 %; on
# another CPU three instructions held 67, 28 and 5 %), and a full ASan
# suite here 15.33 points with 2,743 samples in work, not 3,700-3,900;
# why, not found (both tools sample user mode only; alone, under busy
# loops, beside a daemon sampling every CPU at 500 Hz and beside the
# heaviest e2e tests, 0.04-1.12 points).  Each instruction's bound is
# four of its standard deviations and half a point, at least 4 points:
# an instruction's samples given to its neighbour moves 5 to 99 points
# at the hottest.  A run out of bounds prints both tools' shares and is
# recorded once more: a misattribution fails both runs, and the one-off
# above, not understood, fails one.  A guess for the next look: the split
# of work between its two hottest instructions moves from run to run
# (48/40, 38/53 and 78/2 % on one VM); if it moves within a run too,
# samples icppd alone loses at the busiest moments (its ring full behind
# a slow ASan reader) weigh those moments apart from perf's.  So the run
# out of bounds prints icppd's lost and throttled samples.
vs_perf() {	# vs_perf: one run of both; "RATIO DIFFERENCE at INSTRUCTION",
	# work's samples in $tmp/fn
	rm -f "$tmp"/f.db* "$tmp/perf.data"
	"$ICPPD" record -q -F 10000 -d "$tmp/f.db" -- perf record -q -e cpu-clock:u -F 10000 \
		-o "$tmp/perf.data" -- "$PROGS/heights-nofp" $ms >/dev/null 2>&1 &&
		[ -s "$tmp/perf.data" ] || return 1
	perf annotate -i "$tmp/perf.data" --stdio -s work 2>/dev/null |
		awk '$2 == ":" && $3 ~ /^[0-9a-f]+:$/ { sub(/:$/, "", $3); print $3, $1 }' >"$tmp/perf.pct"
	"$ICPPD" annotate -d "$tmp/f.db" work |
		awk '$2 == ":" && $3 ~ /^[0-9a-f]+:$/ { sub(/:$/, "", $3); print $3, $1 }' >"$tmp/icppd.pct"
	q "SELECT sum(p.samples) FROM pc_samples p JOIN functions f ON f.id = p.function_id
		WHERE f.name = 'work'" "$tmp/f.db" >"$tmp/fn"
	fn=$(cat "$tmp/fn")
	[ -s "$tmp/perf.pct" ] || { echo "100 100 at -"; return 0; }
	awk -v n="${fn:-1}" 'FILENAME == ARGV[1] { p[$1] = $2; next }
		{ d = $2 - p[$1]; if (d < 0) d = -d; if (!($1 in p)) d = 100
		  s = ($2 + p[$1]) / 200; b = 400 * sqrt(2 * s * (1 - s) / n) + 0.5
		  if (b < 4) b = 4
		  if (d / b > r) { r = d / b; w = d; at = $1 } }
		END { printf "%.2f %.2f at %s\n", r, w, at == "" ? "-" : at }' "$tmp/perf.pct" "$tmp/icppd.pct"
}
shares() {	# shares: both tools' shares of work's instructions, a comment
	awk 'FILENAME == ARGV[1] { p[$1] = $2; next }
		$2 + p[$1] >= 0.5 { s = s " " $1 " " p[$1] "/" $2 }
		END { print "#   instruction perf/icppd %:" s }' "$tmp/perf.pct" "$tmp/icppd.pct"
}
if command -v perf >/dev/null && worst=$(vs_perf); then
	tries=1
	if ! awk -v r="${worst%% *}" 'BEGIN { exit !(r <= 1) }'; then
		echo "# a run out of bounds ($(cat "$tmp/fn") samples; $worst), recorded again"
		shares
		echo "#   samples, lost, throttled (icppd's): $(q "SELECT samples, lost,
			throttled FROM v_runs" "$tmp/f.db" | tr '|' ' ')"
		worst=$(vs_perf) || worst="100 100 at -"
		tries=2
	fi
	fn=$(cat "$tmp/fn")
	awk -v r="${worst%% *}" 'BEGIN { exit !(r <= 1) }'
	within=$?
	ok $within "every instruction's share within its bound of perf annotate's ($fn samples; worst difference over bound, difference, instruction: $worst; run $tries)"
	[ $within -eq 0 ] || shares
	is "$(wc -l <"$tmp/icppd.pct" | tr -d ' ')" "$(wc -l <"$tmp/perf.pct" | tr -d ' ')" \
		"... the same instructions as perf's"
else
	skip "no perf tool (apt-get install linux-perf)" "shares against perf annotate's"
	skip "no perf tool (apt-get install linux-perf)" "the same instructions as perf's"
fi

# stripped code: by its address label, instructions only
"$ICPPD" record -q -d "$tmp/s.db" -- "$PROGS/heights-stripped" 100 >/dev/null
label=$("$ICPPD" report -d "$tmp/s.db" --k 0 -f folded 2>/dev/null | sort -k2 -nr | awk 'NR == 1 { print $1 }')
sout=$("$ICPPD" annotate -d "$tmp/s.db" "$label" 2>&1)
is $? 0 "stripped code: annotate $label, exit 0"
contains "$sout" "<$label>:" "... by its label"
ok $(printf '%s\n' "$sout" | grep -q 'Sorted summary'; [ $? -ne 0 ]; echo $?) "... no source lines to sum up"
ok $(printf '%s\n' "$sout" | awk '$2 == ":" && $3 ~ /^[0-9a-f]+:$/ { n++ } END { exit !(n >= 3) }'; echo $?) \
	"... its instructions"

# what it cannot do, said in one line
out=$("$ICPPD" annotate -d "$db" no_such_function 2>&1)
is $? 1 "a function without samples: exit 1"
contains "$out" "icppd: annotate: no function named 'no_such_function' has samples in run $run" "... saying so"
is "$(printf '%s\n' "$out" | wc -l | tr -d ' ')" 1 "... in one line"
out=$("$ICPPD" annotate -d "$db" 2>&1)
is $? 2 "no SYMBOL: usage error"
# the binary replaced by another build since the run
cp "$PROGS/heights-nofp" "$tmp/prog"
"$ICPPD" record -q -d "$tmp/r.db" -- "$tmp/prog" 50 >/dev/null
cp "$PROGS/heights-fp" "$tmp/prog"
out=$("$ICPPD" annotate -d "$tmp/r.db" work 2>&1)
is $? 0 "a rebuilt binary: exit 0"
contains "$out" "no instructions: $tmp/prog cannot be read: it is not the build the run sampled" \
	"... saying its code is not the one sampled"
# a crafted database: the function at the top of the address space, a
# sample 4 GiB into it; nothing is read past the code, nothing wraps
cp "$db" "$tmp/c.db"
# (one row of work's kept, so that the new offset breaks no key)
q "UPDATE functions SET address = -256 WHERE name = 'work';
   DELETE FROM pc_samples WHERE function_id = (SELECT id FROM functions WHERE name = 'work')
     AND offset <> (SELECT max(offset) FROM pc_samples WHERE function_id =
       (SELECT id FROM functions WHERE name = 'work'));
   UPDATE pc_samples SET offset = 4294967295 WHERE function_id =
     (SELECT id FROM functions WHERE name = 'work')" "$tmp/c.db"
is "$(q "SELECT count(*) FROM pc_samples WHERE offset = 4294967295" "$tmp/c.db")" 1 \
	"crafted: a sample 4 GiB into the function"
out=$( (ulimit -t 30; exec "$ICPPD" annotate -d "$tmp/c.db" work) 2>&1)
is $? 0 "crafted: a function at the top of the address space, exit 0"
contains "$out" "work: no instructions: $PROGS/heights-nofp holds no code at 0xffffffffffffff00" \
	"... said to have no code there"
done_testing
