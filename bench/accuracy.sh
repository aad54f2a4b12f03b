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
# inlined frames left out (icppd names real frames only) and names
# mangled as icppd gives them, and icppd's functions without a symbol
# ("liblzma.so.5+0x1a30") are named "[unknown]" as perf names them.
# The functions perf cannot unwind from are left out (see no_caller);
# "left-out" is the share of perf's samples that goes.  icppd's profile
# is scored as report shows it (candidates cut where they disagree, under
# "[unknown callers ...]", which never matches perf) and, in the last
# two columns, with report --whole-chains.
#
# Workloads: python3 (pure Python), perl, sqlite3, xz with threads, make
# of a small C project (make -> cc1, as, collect2, ld) and g++ -O2 -c of
# a C++ file, each recorded into a fresh database; and two online ones
# (name-online): trained on one input, recorded on another.
#
# Usage: bench/accuracy.sh [BUILDDIR]   (default: build, made by ./demo.sh)
# Environment: REPS (default 5), EVENT (cpu-clock), FREQ (1000), K (3),
# WORKLOADS (default: all of the above).
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
cat >"$work/train.py" <<'PY'
import json
t = 0
for r in range(300):
    t += len(json.dumps({str(i): [i, str(i)] for i in range(3000)}))
print(t)
PY
make_input "$work/input" 24000000

# A small C project: six files of 40 functions each, and a Makefile.
mkdir "$work/proj"
for f in 1 2 3 4 5 6; do
	awk -v f=$f 'BEGIN {
		print "#include <stdio.h>\n#include <string.h>"
		for (j = 0; j < 40; j++) {
			printf "struct s%d_%d { int a[%d]; double d; char name[32]; };\n", f, j, j + 2
			printf "static int f%d_%d(struct s%d_%d *p, int n) {\n\tint t = 0;\n", f, j, f, j
			printf "\tfor (int k = 0; k < n; k++) { p->a[k %% %d] += k * %d; t += p->a[(k * 7) %% %d];", j + 2, j, j + 2
			printf " if (t > 1000) t -= snprintf(p->name, sizeof p->name, \"%%d\", t); }\n"
			printf "\tswitch (n %% 5) { case 0: t += %d; break; case 1: t *= 3; break; default: t -= 1; }\n", j
			printf "\treturn t + (int)p->d;\n}\n"
		}
		printf "int m%d(int n) { int t = 0;\n", f
		for (j = 0; j < 40; j++)
			printf "\t{ struct s%d_%d x; memset(&x, 0, sizeof x); t += f%d_%d(&x, n + %d); }\n", f, j, f, j, j
		print "\treturn t;\n}"
		if (f == 1)
			print "int m2(int), m3(int), m4(int), m5(int), m6(int);\nint main(int c, char **v) { (void)v; printf(\"%d\\n\", m1(c) + m2(c) + m3(c) + m4(c) + m5(c) + m6(c)); return 0; }"
	}' >"$work/proj/m$f.c"
done
printf 'CFLAGS = -O2 -g\nOBJS = m1.o m2.o m3.o m4.o m5.o m6.o\napp: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n' >"$work/proj/Makefile"

# A C++ file heavy on templates.
cat >"$work/t.cc" <<'CC'
#include <algorithm>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>
template <typename K, typename V> std::map<V, std::vector<K>> invert(const std::map<K, V> &m)
{
	std::map<V, std::vector<K>> r;
	for (const auto &kv : m) r[kv.second].push_back(kv.first);
	return r;
}
int run(int n)
{
	std::map<std::string, int> m;
	std::regex re("([a-z]+)([0-9]+)");
	for (int i = 0; i < n; i++) {
		std::ostringstream os;
		os << "k" << i;
		m[os.str()] = i % 7;
	}
	auto inv = invert(m);
	std::vector<std::string> keys;
	for (auto &kv : inv) for (auto &k : kv.second) if (std::regex_match(k, re)) keys.push_back(k);
	std::sort(keys.begin(), keys.end(), [](const std::string &a, const std::string &b) { return a.size() < b.size() || (a.size() == b.size() && a < b); });
	return (int)keys.size();
}
CC

fold() {	# fold PERF_DATA: folded stacks, root first
	perf script --no-inline --no-demangle -i "$1" -F ip,sym 2>/dev/null | awk '
		NF == 0 { if (n) { s = f[n]; for (i = n - 1; i >= 1; i--) s = s ";" f[i]; c[s]++ }
			  n = 0; next }
		{ sym = $2; if (sym == "") sym = "[unknown]"; sub(/\+0x[0-9a-f]+$/, "", sym); f[++n] = sym }
		END { for (s in c) print s, c[s] }'
}

# perf cannot unwind from some functions (in python3, libc's memmove,
# memset, _int_realloc and brk: 14 % of the samples come back with no
# caller at all), where icppd gives whole paths.  Scored as they are,
# icppd's right answers there count against it, so both profiles leave
# out the functions most of whose samples perf A left without a caller
# (outermost frames such as _start excepted); the share perf A lost so
# is printed beside.
no_caller() {	# no_caller FOLDED: leaf functions perf left callerless
	awk '{ w = $NF; sub(/ [0-9.]+$/, ""); n = split($0, f, ";")
	       tot[f[n]] += w; if (n == 1) one[f[n]] += w }
	     END { for (l in tot) if (2 * one[l] > tot[l] && l !~ /^(_start|__clone3?|_dl_start_user)$/) print l }' "$1"
}
drop_leaves() {	# drop_leaves LIST FOLDED: FOLDED without stacks ending in LIST
	awk 'FILENAME == ARGV[1] { x[$0] = 1; next }
	     { l = $0; sub(/ [0-9.]+$/, "", l); n = split(l, f, ";"); if (!(f[n] in x)) print }' "$1" "$2"
}
share_of() {	# share_of PART WHOLE: PART's samples over WHOLE's
	awk '{ print $NF }' "$1" | awk -v w="$(awk '{ t += $NF } END { print t }' "$2")" \
		'{ t += $1 } END { printf "%.3f\n", (w > 0 ? 1 - t / w : 0) }'
}

overlap() {	# overlap A B: degree of overlap of k-contexts
	"$icppd" compare -d "$work/a.db" --k "$k" "$1" "$2" |
		awk '/^degree of overlap/ { print $4 }'
}

run_one() {	# run_one MODE CMD...: prints "ceiling icppd left-out whole"; $train, when
	# set, is a command trained into the database first (online)
	shift
	for x in a b; do
		perf record -q -e "$event:u" -F "$freq" --call-graph dwarf \
			-o "$work/$x.data" -- "$@" >/dev/null 2>&1
		fold "$work/$x.data" >"$work/$x.folded"
	done
	rm -f "$work"/a.db* "$work"/proj/*.o "$work"/t.o
	[ -z "$train" ] || eval "\"\$icppd\" train -q -e \"\$event\" -F \"\$freq\" -d \"\$work/a.db\" -- $train" >/dev/null
	"$icppd" record -q -e "$event" -F "$freq" -d "$work/a.db" -- "$@" >/dev/null
	# whole stacks, and a function without a symbol as perf names it;
	# as shown (cut where candidates disagree) and --whole-chains
	"$icppd" report -d "$work/a.db" -f folded --k inf 2>/dev/null |
		sed 's/[^;]*+0x[0-9a-f]*/[unknown]/g' >"$work/i.folded"
	"$icppd" report -d "$work/a.db" -f folded --k inf --whole-chains 2>/dev/null |
		sed 's/[^;]*+0x[0-9a-f]*/[unknown]/g' >"$work/w.folded"
	no_caller "$work/a.folded" >"$work/nocaller"
	for x in a b i w; do
		drop_leaves "$work/nocaller" "$work/$x.folded" >"$work/$x.kept"
	done
	echo "$(overlap "$work/a.kept" "$work/b.kept") $(overlap "$work/a.kept" "$work/i.kept") $(share_of "$work/a.kept" "$work/a.folded") $(overlap "$work/a.kept" "$work/w.kept")"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }'; }

modes=one
printf '# %s, %s Hz, k = %s, %s repetitions; medians; %s CPUs\n' "$event" "$freq" "$k" "$reps" "$(nproc)"
printf '%-15s %12s %12s %8s %9s %8s %8s\n' workload perf-vs-perf icppd-vs-perf ratio left-out whole ratio
query="WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 600000) SELECT count(DISTINCT x % 1000), sum(length(printf('%08d', x))) FROM c;"
for w in ${WORKLOADS:-python perl sqlite3 xz make g++ python-online sqlite3-online}; do
	train=
	case $w in
	python) set -- "$py" "$work/work.py" ;;
	perl) set -- perl "$work/work.pl" ;;
	sqlite3) set -- sqlite3 :memory: "$query" ;;
	xz) set -- xz -T2 -6 -c "$work/input" ;;
	make) set -- make -s -B -C "$work/proj" ;;
	g++) set -- g++ -O2 -c -o "$work/t.o" "$work/t.cc" ;;
	python-online)
		train='"$py" "$work/train.py"'
		set -- "$py" "$work/work.py" ;;
	sqlite3-online)
		train="sqlite3 :memory: \"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000) SELECT x % 97, count(*) FROM c GROUP BY 1 ORDER BY 2 DESC LIMIT 3;\""
		set -- sqlite3 :memory: "$query" ;;
	*) echo "bench: unknown workload $w" >&2; exit 1 ;;
	esac
	interleave "$w" run_one "$@"
	c=$(col "$w" one 1) i=$(col "$w" one 2) l=$(col "$w" one 3) x=$(col "$w" one 4)
	printf '%-15s %12s %12s %8s %9s %8s %8s\n' "$w" "$c" "$i" "$(ratio "$i" "$c")" "$l" "$x" "$(ratio "$x" "$c")"
done
