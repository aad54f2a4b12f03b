#!/bin/sh
# bench/flame.sh - the flame graph of a big profile, and its diff: g++
# -O2 -c (bench/workloads.sh's) recorded at 4 kHz for some 10,000
# contexts, and a second record as the diff's base.  For each: the time
# report -f svg takes, the file's size, the time headless chromium
# takes from navigation to the first frame drawn after the script ran
# (a copy of the file that logs performance.now() then), medians of
# REPS; then, opened at 1400x900 as a user opens it, whether its base
# (the root frames) is on the first screen, and whether every frame
# wider than a pixel there is drawn (the folded stacks' tree, each node
# at least a pixel wide of the graph's width, against the frames the
# page holds, by name and level).
# Usage: bench/flame.sh [BUILDDIR]; environment: REPS (default 5).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/workloads.sh"
command -v chromium >/dev/null || { echo "bench: needs chromium" >&2; exit 1; }
workload g++
eval "set -- $cmd"
"$icppd" record -q -e "$event" -F 4000 -d "$work/g.db" -- "$@" >/dev/null
"$icppd" record -q -e "$event" -F 4000 -d "$work/g.db" -- "$@" >/dev/null
contexts=$("$icppd" report -d "$work/g.db" -f folded 2>/dev/null | wc -l)

chrome() {	# chrome FILE ARGS...: headless chromium at 1400x900
	f=$1
	shift
	timeout 60 chromium --headless --no-sandbox --disable-gpu \
		--user-data-dir="$work/chromium" --window-size=1400,900 "$@" "file://$f"
}

# check SVG FOLDED: "BASE-ON-SCREEN MISSING WIDE": the root's level on
# the first screen (1/0), frames a pixel wide the page lacks, and how
# many there are
check() {
	chrome "$1" --dump-dom >"$work/dom" 2>/dev/null
	python3 - "$work/dom" "$2" <<'PY'
import re, sys, html
dom = open(sys.argv[1], encoding='utf-8').read()
W = int(re.search(r'<svg [^>]*width="(\d+)"', dom).group(1))
H = int(re.search(r'<svg [^>]*height="(\d+)"', dom).group(1))
drawn, top = set(), 10 ** 9
pat = re.compile(r'<g[^>]*><title>([^<]*)</title><rect x="[0-9.]+" y="([0-9.]+)" width="([0-9.]+)"')
for m in pat.finditer(dom):
    name = html.unescape(m.group(1).split('\n')[0])
    y = float(m.group(2))
    drawn.add((name, y))
    top = min(top, y)
ys = sorted({y for _, y in drawn})
icicle = 'Flame</text>' in dom
level = {y: (i if icicle else len(ys) - 1 - i) for i, y in enumerate(ys)}
have = {(n, level[y]) for n, y in drawn}
tree, total = {}, 0.0
for line in open(sys.argv[2], encoding='utf-8', errors='replace'):
    stack, _, w = line.rstrip('\n').rpartition(' ')
    w = float(w)
    total += w
    for d, f in enumerate(stack.split(';')):
        k = (tuple(stack.split(';')[:d + 1]))
        tree[k] = tree.get(k, 0.0) + w
px = (W - 20) / total
wide = [(k[-1].replace('\\x3b', ';'), len(k) - 1) for k, w in tree.items() if w * px >= 1]
missing = sum(1 for k in wide if k not in have)
root_y = max(y for n, y in drawn if level[y] == 0) if not icicle else min(y for n, y in drawn if level[y] == 0)
print(1 if root_y + 16 <= 900 else 0, missing, len(wide))
PY
}

for kind in graph diff; do
	opt=
	[ $kind = diff ] && opt="--base 1"
	i=0
	: >"$work/report.times"
	: >"$work/open.ms"
	while [ $i -lt "$reps" ]; do
		/usr/bin/time -f '%e' -o "$work/t" "$icppd" report -d "$work/g.db" \
			$opt -f svg -o "$work/g.svg" 2>/dev/null
		cat "$work/t" >>"$work/report.times"
		sed 's|</svg>|<script>window.addEventListener("load", function () { requestAnimationFrame(function () { console.log("ICPPD-TIMING " + performance.now().toFixed(0)); }); });</script></svg>|' \
			"$work/g.svg" >"$work/timed.svg"
		chrome "$work/timed.svg" --enable-logging=stderr --v=0 \
			--screenshot="$work/$kind.png" 2>&1 |
			sed -n 's/.*ICPPD-TIMING \([0-9]*\).*/\1/p' >>"$work/open.ms"
		i=$((i + 1))
	done
	"$icppd" report -d "$work/g.db" -f folded >"$work/g.folded" 2>/dev/null
	set -- $(check "$work/g.svg" "$work/g.folded")
	echo "== $kind (report -f svg $opt)"
	printf '%-34s %s\n' "contexts (folded lines)" "$contexts"
	printf '%-34s %s\n' "frames in the file" "$(grep -c '<g><title>' "$work/g.svg")"
	printf '%-34s %s KB\n' "svg size" "$(($(wc -c <"$work/g.svg") / 1024))"
	printf '%-34s %s s\n' "report -f svg (median)" "$(median <"$work/report.times")"
	printf '%-34s %s ms\n' "chromium: open to drawn (median)" "$(median <"$work/open.ms")"
	printf '%-34s %s\n' "base on the first screen (1400x900)" "$([ "$1" = 1 ] && echo yes || echo no)"
	printf '%-34s %s of %s missing\n' "frames wider than a pixel" "$2" "$3"
done
