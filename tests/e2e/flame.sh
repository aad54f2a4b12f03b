#!/bin/sh
# icppd report --format svg: a flame graph of a program whose call paths
# are known (heights: main calls path_a and path_b, both call work,
# path_b calls leaf, recurse calls itself).  What the file says (frames,
# weights, geometry), what the picture holds once drawn (rsvg-convert,
# its pixels read back), and what its script does in a browser (headless
# chromium: zoom and search through the URL's #zoom= and #search=).
. "$TESTS_SRCDIR/e2e/lib.sh"
require_perf
pixels="$TESTS_SRCDIR/consumers/png_pixels.mjs"

"$ICPPD" record -q -d "$db" -- "$PROGS/heights-fp" 60 >/dev/null 2>&1
"$ICPPD" report -d "$db" -f svg -o "$tmp/h.svg"
is $? 0 "report -f svg: exit 0"
xmllint --noout "$tmp/h.svg" 2>"$tmp/xml.err"
is $? 0 "the SVG is well-formed XML $(head -1 "$tmp/xml.err")"
is "$(grep -o 'https\{0,1\}://[^"]*' "$tmp/h.svg" | sort -u)" "http://www.w3.org/2000/svg" \
	"nothing is loaded from the network (the only address is the SVG namespace)"

# One line per frame: "NAME SAMPLES X Y WIDTH FILL".  A name may hold
# spaces ("[unknown callers]", "truth_base (inlined)": a stray sample in
# the program's truth-writing code), so fields are counted from the end.
frames() {
	tr '\n' ' ' <"$1" | grep -o '<g[^>]*><title>[^<]*</title><rect [^>]*>' |
		sed 's/<g[^>]*><title>\([^<]*\) \([0-9.]*\) samples, [0-9.]*%[^<]*<\/title><rect x="\([0-9.]*\)" y="\([0-9.]*\)" width="\([0-9.]*\)" height="[0-9]*" fill="\(#[0-9a-f]*\)".*/\1 \2 \3 \4 \5 \6/'
}
frames "$tmp/h.svg" >"$tmp/frames"
total=$(q "SELECT sum(samples) FROM cid_samples WHERE run_id = 1")
field() { awk -v n="$1" -v f="$2" '$1 == n { print $f; exit }' "$tmp/frames"; }
# main's frame weighs what the folded report puts under main: all but a
# stray sample taken before main or after it returned (ld.so, exit())
under_main=$("$ICPPD" report -d "$db" -f folded |
	awk '/(^|;)main(;| )/ { s += $NF } END { print s + 0 }')
is "$(field main 2)" "$under_main" "main's frame carries the samples under main ($under_main)"
ok $([ "$under_main" -ge $((total * 95 / 100)) ]; echo $?) \
	"... nearly every sample of the run ($under_main of $total)"
for f in path_a path_b work leaf recurse indirect; do
	ok $([ -n "$(field "$f" 2)" ]; echo $?) "a frame for $f"
done
is "$(awk '$1 == "work"' "$tmp/frames" | wc -l)" 2 "work twice: above path_a and above path_b"
is "$(awk '$1 == "recurse"' "$tmp/frames" | wc -l)" 4 "recurse four levels deep"
# geometry: a frame is as wide as its share, one level above its caller
w_a=$(field path_a 5) n_a=$(field path_a 2)
ok $(awk -v w="$w_a" -v n="$n_a" -v t="$total" 'BEGIN { d = w - 1180 * n / t; exit !(d < 0.2 && d > -0.2) }'; echo $?) \
	"path_a is as wide as its share: $w_a px for $n_a of $total samples"
is "$(($(field main 4) - $(field path_a 4)))" 16 "path_a sits one level above main"
ok $(awk -v a="$(field path_a 3)" -v b="$(field path_b 3)" 'BEGIN { exit !(a < b) }'; echo $?) \
	"siblings in name order: path_a left of path_b"

# The picture: each frame's colour inside its box, the background
# outside any.
if command -v rsvg-convert >/dev/null && command -v node >/dev/null; then
	rsvg-convert "$tmp/h.svg" -o "$tmp/h.png"
	is $? 0 "rsvg-convert draws it"
	at() {	# at NAME: the middle of NAME's first box
		awk -v n="$1" '$1 == n { printf "%d,%d", $3 + $5 / 2, $4 + 7; exit }' "$tmp/frames"
	}
	got=$(node "$pixels" "$tmp/h.png" "$(at path_a)" "$(at leaf)" "$(at main)" 3,3)
	is "$(echo "$got" | sed -n 2p)" "$(field path_a 6)" "drawn: path_a's box in its colour"
	is "$(echo "$got" | sed -n 3p)" "$(field leaf 6)" "drawn: leaf's box in its colour"
	is "$(echo "$got" | sed -n 4p)" "$(field main 6)" "drawn: main's box in its colour"
	is "$(echo "$got" | sed -n 5p)" "#f6f6f0" "drawn: the background outside the frames"
else
	skip "rsvg-convert or node missing" "the picture"
fi

# The script, in a browser: zoomed on path_a, path_a fills the width and
# work above it its share of path_a (all of it but for a stray sample in
# the truth-writing code path_a calls after work), main below is dimmed,
# path_b is hidden; a search for work highlights it and matches that
# share of the zoomed width.
if command -v chromium >/dev/null; then
	a_all=$(field path_a 2)
	a_work=$("$ICPPD" report -d "$db" -f folded |
		awk '/;path_a;work( |;)/ { s += $NF } END { print s + 0 }')
	dom() {	# dom URL-FRAGMENT [WIDTH,HEIGHT]: the document once its script ran
		timeout 60 chromium --headless --no-sandbox --disable-gpu \
			--user-data-dir="$tmp/chromium" --window-size="${2:-1400,900}" \
			--dump-dom "file://$tmp/h.svg#$1" >"$tmp/dom" 2>/dev/null
		frames "$tmp/dom" >"$tmp/frames"
	}
	svg_width() { sed -n 's/.*<svg [^>]* width="\([0-9]*\)".*/\1/p' "$tmp/dom" | head -1; }
	near() {	# near GOT WANT MARGIN: exit 0 when |GOT - WANT| <= MARGIN
		awk -v g="$1" -v w="$2" -v m="$3" 'BEGIN { d = g - w; exit !(g != "" && d <= m && d >= -m) }'
	}
	# the window's width: at 1400 px the graph is 1400 px wide (less
	# a scrollbar), each frame its share of it
	dom ""
	W=$(svg_width)
	ok $([ "${W:-0}" -ge 1380 ] && [ "$W" -le 1400 ]; echo $?) "a 1400 px window: the graph $W px wide"
	ok $(near "$(field path_a 5)" "$(awk -v n="$(awk '$1 == "path_a" { print $2; exit }' "$tmp/frames")" \
		-v t="$total" -v w="$W" 'BEGIN { printf "%.1f", (w - 20) * n / t }')" 0.2; echo $?) \
		"... path_a as wide as its share of it ($(field path_a 5) px)"
	ok $([ "$(field main 4)" -gt "$(field path_a 4)" ]; echo $?) \
		"it fits the window's height: a flame, main below path_a"
	# taller than the window: an icicle, its base under the buttons;
	# #flame and #icicle choose
	dom "" 1400,200
	is "$(field _start 4)" 76 "a window lower than the graph: an icicle, the root at the top (y 76)"
	ok $([ "$(field main 4)" -lt "$(field path_a 4)" ]; echo $?) "... main above path_a"
	contains "$(cat "$tmp/dom")" '>Flame</text>' "... and a button to turn it over"
	dom "flame" 1400,200
	ok $([ "$(field main 4)" -gt "$(field path_a 4)" ]; echo $?) "#flame: a flame whatever the window"
	dom "icicle"
	is "$(field _start 4)" 76 "#icicle: an icicle whatever the window"
	dom "zoom=path_a&search=%5Ework%24" 1200,900
	W=$(svg_width)
	is "$(field path_a 3) $(field path_a 5)" "10.0 $((W - 20)).0" "zoom: path_a fills the width"
	w_work=$(awk -v a="$a_work" -v t="$a_all" -v w="$W" 'BEGIN { printf "%.1f", (w - 20) * a / t }')
	# (zoomed widths are scaled from widths rounded to 0.1 px: within
	# 1.5 px, and 0.15 points of path_a's width)
	ok $(near "$(field work 5)" "$w_work" 1.5; echo $?) \
		"zoom: work above it, $(field work 5) px wide for $a_work of path_a's $a_all samples ($w_work)"
	is "$(field work 6)" "#e040e0" "... highlighted by the search"
	contains "$(tr '\n' ' ' <"$tmp/dom" | grep -o '<g style="[^"]*"><title>main ')" "opacity: 0.5" \
		"zoom: main, below, is dimmed"
	contains "$(tr '\n' ' ' <"$tmp/dom" | grep -o '<g style="[^"]*"><title>path_b ')" "display: none" \
		"zoom: path_b is hidden"
	got=$(sed -n 's/.*>Matched: \([0-9.]*\)%<.*/\1/p' "$tmp/dom" | head -1)
	want=$(awk -v a="$a_work" -v t="$a_all" 'BEGIN { printf "%.1f", 100 * a / t }')
	ok $(near "$got" "$want" 0.15; echo $?) \
		"search: work matches its share of the zoomed width: $got% ($want%)"
else
	skip "chromium missing" "the script in a browser"
fi

# Siblings narrower than a pixel (of a 2560 px screen) are one frame,
# as wide as they are together: 3000 functions of one sample each, whose
# callers are unknown, beside the run's own
cp "$db" "$tmp/m.db"
q "WITH RECURSIVE i(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM i WHERE n < 3000)
   INSERT INTO functions (module_id, address, name) SELECT 1, 1000000 + n, 'tiny_' || n FROM i;
   INSERT INTO cid_samples (run_id, pid, tid, program_id, function_id, height, samples)
   SELECT 1, c.pid, c.tid, c.program_id, f.id, 64, 1 FROM functions f,
     (SELECT pid, tid, program_id FROM cid_samples WHERE run_id = 1 LIMIT 1) c
   WHERE f.name LIKE 'tiny\_%' ESCAPE '\'" "$tmp/m.db"
"$ICPPD" report -d "$tmp/m.db" --run 1 -f svg -o "$tmp/m.svg" 2>/dev/null
is $? 0 "3000 functions under a pixel: exit 0"
frames "$tmp/m.svg" >"$tmp/frames"
is "$(grep -c 'tiny_' "$tmp/m.svg")" 0 "... none drawn alone"
is "$(awk '/^\[3000 narrower than a pixel\] / { print $(NF - 4) }' "$tmp/frames")" 3000 \
	"... one frame, [3000 narrower than a pixel], with their 3000 samples"
ok $([ "$(wc -c <"$tmp/m.svg")" -lt 200000 ]; echo $?) "... a small file ($(wc -c <"$tmp/m.svg") bytes)"

# --comm-frame: the process is the root frame; the options folded
# refuses, svg refuses alike.
"$ICPPD" report -d "$db" -f svg --comm-frame -o "$tmp/c.svg"
frames "$tmp/c.svg" >"$tmp/frames"
is "$(field heights-fp 2)" "$total" "--comm-frame: the command is the root, with every sample"
out=$("$ICPPD" report -d "$db" -f svg --inclusive 2>&1)
is $? 2 "--inclusive with svg: usage error"
out=$("$ICPPD" report -d "$db" -f svg --hot 5 2>&1)
is $? 2 "--hot with svg: usage error"
# --k as for folded: k = 1 leaves each function with one caller
"$ICPPD" report -d "$db" -f svg --k 1 -o "$tmp/k1.svg"
frames "$tmp/k1.svg" >"$tmp/frames"
is "$(awk '{ print $(NF - 2) }' "$tmp/frames" | sort -u | wc -l)" 2 \
	"--k 1: two levels, each function and one caller"

# Diffs against a baseline.  The base is this run's own folded stacks
# with work's weight tripled: against it work's share shrank, by a known
# amount, and every other function's grew.
"$ICPPD" report -d "$db" -f folded >"$tmp/now.folded"
awk '{ w = $NF; if ($0 ~ /;work [0-9]+$/) w *= 3; sub(/ [0-9]+$/, ""); print $0, w }' \
	"$tmp/now.folded" >"$tmp/base.folded"
# (and stacks this run does not have: the base's own frames, not drawn)
cp "$tmp/base.folded" "$tmp/base-more.folded"
for i in $(seq 1 50); do echo "main;gone_$i;deeper 1"; done >>"$tmp/base-more.folded"
want=$(awk '{ t += $NF; if ($0 ~ /;work [0-9]+$/) w += $NF }
	END { printf "%.2f", 100 * (w / t - 3 * w / (t + 2 * w)) }' "$tmp/now.folded")
text=$("$ICPPD" report -d "$db" --base "$tmp/base.folded")
is $? 0 "--base FILE: exit 0"
got=$(printf '%s\n' "$text" | awk '/^functions/ { f = 1 } f && $4 == "work" { print $3; exit }')
ok $(awk -v g="$got" -v w="$want" 'BEGIN { d = g - w; exit !(d < 0.02 && d > -0.02) }'; echo $?) \
	"text: work's share changed by $got points (expected $want)"
is "$(printf '%s\n' "$text" | awk '/^functions/ { getline; getline; print $4; exit }')" work \
	"text: the biggest change first"
"$ICPPD" report -d "$db" --base "$tmp/base.folded" -f json -o "$tmp/d.json"
is "$(sqlite3 :memory: "SELECT json_extract(readfile('$tmp/d.json'), '\$.functions[0].function') || ' ' || (json_extract(readfile('$tmp/d.json'), '\$.functions[0].change') < 0)")" \
	"work 1" "json: work first, its change negative"
"$ICPPD" report -d "$db" --base "$tmp/base.folded" -f folded >"$tmp/pairs"
# (a frame's name may hold spaces: the two counts are the last fields)
is "$(awk 'NF < 3 || $(NF - 1) !~ /^[0-9.]+$/ || $NF !~ /^[0-9.]+$/' "$tmp/pairs" | wc -l)" 0 \
	"folded: every line 'stack BASE NOW', flamegraph.pl's differential input"
is "$(awk '{ b += $(NF - 1); n += $NF } END { printf "%.0f %.0f", b, n }' "$tmp/pairs")" "$total $total" \
	"folded: the base scaled to this run's total"
"$ICPPD" report -d "$db" --base "$tmp/base-more.folded" -f svg -o "$tmp/more.svg"
is $? 0 "svg against a base with stacks of its own: exit 0"
is "$(grep -c 'gone_' "$tmp/more.svg")" 0 "... the base's own stacks not drawn"
"$ICPPD" report -d "$db" --base "$tmp/base.folded" -f svg -o "$tmp/d.svg"
frames "$tmp/d.svg" >"$tmp/frames"
fill() { field "$1" 6; }
ok $(case "$(fill work)" in \#????ff) [ "$(fill work)" != "#ffffff" ] ;; *) false ;; esac; echo $?) \
	"svg: work, which shrank, is blue ($(fill work))"
ok $(case "$(fill recurse)" in \#ff????) [ "$(fill recurse)" != "#ffffff" ] ;; *) false ;; esac; echo $?) \
	"svg: recurse, which grew, is red ($(fill recurse))"
# another run as the base; what --base refuses
"$ICPPD" record -q -d "$db" -- "$PROGS/heights-fp" 30 >/dev/null 2>&1
contains "$("$ICPPD" report -d "$db" --base 1)" "run 2 (" "--base RUN: the latest run against run 1"
out=$("$ICPPD" report -d "$db" --base 1 -f pprof 2>&1)
is $? 2 "--base with pprof: usage error"
contains "$out" "go tool pprof -diff_base" "... naming pprof's own way"
out=$("$ICPPD" report -d "$db" --base "$tmp/missing.folded" 2>&1)
is $? 1 "--base: a missing file: exit 1"
printf 'a;b 3\nnot a stack\n' >"$tmp/bad.folded"
contains "$("$ICPPD" report -d "$db" --base "$tmp/bad.folded" 2>&1)" "line 2 is not a folded stack" \
	"--base: a bad line is named"
# pprof diffs with pprof's own -diff_base, from one file per run
if command -v go >/dev/null; then
	"$ICPPD" report -d "$db" --run 1 -f pprof -o "$tmp/1.pb.gz"
	"$ICPPD" report -d "$db" --run 2 -f pprof -o "$tmp/2.pb.gz"
	top=$(HOME=$tmp GOCACHE=$tmp/.gocache go tool pprof -top -diff_base "$tmp/1.pb.gz" "$tmp/2.pb.gz" 2>&1)
	contains "$top" "work" "go tool pprof -diff_base reads two of icppd's profiles"
else
	skip "no go" "go tool pprof -diff_base"
fi
done_testing
