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

# One line per frame: "NAME SAMPLES X Y WIDTH FILL".
frames() {
	tr '\n' ' ' <"$1" | grep -o '<g[^>]*><title>[^<]*</title><rect [^>]*>' |
		sed 's/<g[^>]*><title>\([^<]*\) \([0-9.]*\) samples, [0-9.]*%<\/title><rect x="\([0-9.]*\)" y="\([0-9.]*\)" width="\([0-9.]*\)" height="[0-9]*" fill="\(#[0-9a-f]*\)".*/\1 \2 \3 \4 \5 \6/'
}
frames "$tmp/h.svg" >"$tmp/frames"
total=$(q "SELECT sum(samples) FROM cid_samples WHERE run_id = 1")
field() { awk -v n="$1" -v f="$2" '$1 == n { print $f; exit }' "$tmp/frames"; }
is "$(field main 2)" "$total" "main's frame carries every sample ($total)"
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

# The script, in a browser: zoomed on path_a, path_a and work above it
# fill the width, main below is dimmed, path_b is hidden; a search for
# work highlights it and matches all of path_a's width.
if command -v chromium >/dev/null; then
	timeout 60 chromium --headless --no-sandbox --disable-gpu \
		--user-data-dir="$tmp/chromium" \
		--dump-dom "file://$tmp/h.svg#zoom=path_a&search=%5Ework%24" \
		>"$tmp/dom" 2>/dev/null
	frames "$tmp/dom" >"$tmp/frames"
	is "$(field path_a 3) $(field path_a 5)" "10.0 1180.0" "zoom: path_a fills the width"
	is "$(field work 5) $(field work 6)" "1180.0 #e040e0" "zoom: work above it too, highlighted by the search"
	contains "$(tr '\n' ' ' <"$tmp/dom" | grep -o '<g style="[^"]*"><title>main ')" "opacity: 0.5" \
		"zoom: main, below, is dimmed"
	contains "$(tr '\n' ' ' <"$tmp/dom" | grep -o '<g style="[^"]*"><title>path_b ')" "display: none" \
		"zoom: path_b is hidden"
	contains "$(cat "$tmp/dom")" ">Matched: 100.0%<" "search: work matches the whole zoomed width"
else
	skip "chromium missing" "the script in a browser"
fi

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
is "$(awk '{ print $4 }' "$tmp/frames" | sort -u | wc -l)" 2 \
	"--k 1: two levels, each function and one caller"
done_testing
