#!/bin/sh
# bench/accuracy.sh - call paths from a plain "icppd record" (no training,
# a fresh database: learning during the run, and report's search over
# learned edges and the binaries' direct calls) against perf record
# --call-graph dwarf, as the degree of overlap of k-contexts.  Sampled
# profiles are noisy, so the figure that matters is icppd's overlap with
# one perf run divided by the overlap of two perf runs (the ceiling).
#
# Per workload and repetition: two perf runs (A, B) and one icppd run,
# interleaved; medians over REPS.  perf's stacks are folded with
# inlined frames left out (icppd names real frames only), and icppd's
# functions without a symbol ("liblzma.so.5+0x1a30") are named
# "[unknown]" as perf names them.
#
# Usage: bench/accuracy.sh [BUILDDIR]   (default: build, made by ./demo.sh)
# Environment: REPS (default 5), EVENT (cpu-clock), FREQ (1000), K (3).
. "$(dirname "$0")/lib.sh"
freq=${FREQ:-1000}
k=${K:-3}
py=$(command -v python3.11 || command -v python3)
cat >"$work/work.py" <<'PY'
import json
def fib(n): return n if n < 2 else fib(n-1) + fib(n-2)
def build(n): return {str(i): [i, i*2, {"k": i}] for i in range(n)}
t = 0
for r in range(400):
    t += fib(20)
    t += len(json.loads(json.dumps(build(3000))))
print(t)
PY
cat >"$work/work.pl" <<'PL'
my %h; my $t = 0;
for my $r (1..60) {
    for my $i (1..20000) { $h{"k$i"} = join(",", map { $_ * $r } 1..8); }
    for my $v (values %h) { $t += length($v) if $v =~ /(\d+),(\d+)$/; }
    my @s = sort { $a cmp $b } keys %h; $t += @s;
}
print "$t\n";
PL
make_input "$work/input" 24000000

fold() {	# fold PERF_DATA: folded stacks, root first
	perf script --no-inline -i "$1" -F ip,sym 2>/dev/null | awk '
		NF == 0 { if (n) { s = f[n]; for (i = n - 1; i >= 1; i--) s = s ";" f[i]; c[s]++ }
			  n = 0; next }
		{ sym = $2; if (sym == "") sym = "[unknown]"; sub(/\+0x[0-9a-f]+$/, "", sym); f[++n] = sym }
		END { for (s in c) print s, c[s] }'
}

overlap() {	# overlap A B: degree of overlap of k-contexts
	"$icppd" compare -d "$work/a.db" --k "$k" "$1" "$2" |
		awk '/^degree of overlap/ { print $4 }'
}

run_one() {	# run_one MODE CMD...: prints "ceiling icppd"
	shift
	for x in a b; do
		perf record -q -e "$event:u" -F "$freq" --call-graph dwarf \
			-o "$work/$x.data" -- "$@" >/dev/null 2>&1
		fold "$work/$x.data" >"$work/$x.folded"
	done
	rm -f "$work"/a.db*
	"$icppd" record -q -e "$event" -F "$freq" -d "$work/a.db" -- "$@" >/dev/null
	# whole stacks, and a function without a symbol as perf names it
	"$icppd" report -d "$work/a.db" -f folded --k inf 2>/dev/null |
		sed 's/[^;]*+0x[0-9a-f]*/[unknown]/g' >"$work/i.folded"
	echo "$(overlap "$work/a.folded" "$work/b.folded") $(overlap "$work/a.folded" "$work/i.folded")"
}

modes=one
printf '# %s, %s Hz, k = %s, %s repetitions; medians; %s CPUs\n' "$event" "$freq" "$k" "$reps" "$(nproc)"
printf '%-10s %12s %12s %8s\n' workload perf-vs-perf icppd-vs-perf ratio
for w in python perl sqlite3 xz; do
	case $w in
	python) set -- "$py" "$work/work.py" ;;
	perl) set -- perl "$work/work.pl" ;;
	sqlite3) set -- sqlite3 :memory: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 600000) SELECT count(DISTINCT x % 1000), sum(length(printf('%08d', x))) FROM c;" ;;
	xz) set -- xz -T2 -6 -c "$work/input" ;;
	esac
	interleave "$w" run_one "$@"
	c=$(col "$w" one 1) i=$(col "$w" one 2)
	printf '%-10s %12s %12s %8s\n' "$w" "$c" "$i" "$(awk -v a="$i" -v b="$c" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }')"
done
