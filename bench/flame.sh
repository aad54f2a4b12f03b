#!/bin/sh
# bench/flame.sh - the flame graph of a big profile: g++ -O2 -c
# (bench/workloads.sh's) recorded at 4 kHz for some 10,000 contexts;
# the time report -f svg takes, the file's size, and the time headless
# chromium takes from navigation to the first frame drawn after the
# script ran (a copy of the file that logs performance.now() then),
# medians of REPS.
# Usage: bench/flame.sh [BUILDDIR]; environment: REPS (default 5).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/workloads.sh"
command -v chromium >/dev/null || { echo "bench: needs chromium" >&2; exit 1; }
workload g++
eval "set -- $cmd"
"$icppd" record -q -e "$event" -F 4000 -d "$work/g.db" -- "$@" >/dev/null
contexts=$("$icppd" report -d "$work/g.db" -f folded | wc -l)
i=0
while [ $i -lt "$reps" ]; do
	/usr/bin/time -f '%e' -o "$work/t" "$icppd" report -d "$work/g.db" \
		-f svg -o "$work/g.svg"
	cat "$work/t" >>"$work/report.times"
	sed 's|</svg>|<script>window.addEventListener("load", function () { requestAnimationFrame(function () { console.log("ICPPD-TIMING " + performance.now().toFixed(0)); }); });</script></svg>|' \
		"$work/g.svg" >"$work/timed.svg"
	timeout 60 chromium --headless --no-sandbox --disable-gpu \
		--user-data-dir="$work/chromium" --enable-logging=stderr --v=0 \
		--screenshot="$work/shot.png" --window-size=1200,1600 \
		"file://$work/timed.svg" 2>&1 |
		sed -n 's/.*ICPPD-TIMING \([0-9]*\).*/\1/p' >>"$work/open.ms"
	i=$((i + 1))
done
frames=$(grep -c '<g><title>' "$work/g.svg")
printf '%-28s %s\n' "contexts (folded lines)" "$contexts"
printf '%-28s %s\n' "frames drawn" "$frames"
printf '%-28s %s KB\n' "svg size" "$(($(wc -c <"$work/g.svg") / 1024))"
printf '%-28s %s s\n' "report -f svg (median)" "$(median <"$work/report.times")"
printf '%-28s %s ms\n' "chromium: open to drawn" "$(median <"$work/open.ms")"
