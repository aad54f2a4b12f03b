# bench/lib.sh - what the benchmark scripts share: locating the build,
# installing the tools compared against, a scratch folder, inputs and
# medians.  Sourced with the build folder as $1 (default: build).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
icppd=$build/icppd
progs=$build/tests/progs/bin
reps=${REPS:-5}
event=${EVENT:-cpu-clock}
sh "$top/scripts/deps.sh" bench
[ -x "$icppd" ] && [ -x "$progs/collide" ] ||
	{ echo "bench: build icppd first (./demo.sh)" >&2; exit 1; }

work=$(mktemp -d /tmp/icppd-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
# icppd's CFI cache (icppd-record(1) --no-cache) starts empty with each
# bench, as on a machine that never ran icppd: the first icppd run of a
# workload fills it, the later ones read it, as a user's next record
# does.  Mode icppd-cold of record.sh lists every section afresh.
ICPPD_CACHE_DIR=$work/cfi-cache
export ICPPD_CACHE_DIR

# make_cproject DIR: a small C project, six files of 40 functions each,
# and a Makefile (make -B -C DIR: make, cc, cc1, as, collect2, ld)
make_cproject() {
	mkdir "$1"
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
		}' >"$1/m$f.c"
	done
	printf 'CFLAGS = -O2 -g\nOBJS = m1.o m2.o m3.o m4.o m5.o m6.o\napp: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n' >"$1/Makefile"
}

# What perf cannot name, as perf names it: a function without a symbol,
# and makecontext()'s trampoline, where a coroutine's stack ends: perf
# looks up the return address minus one, which lies before it.
as_perf='s/[^;]*+0x[0-9a-f]*/[unknown]/g; s/^__start_context;/[unknown];/'

# fold_comm PERF_DATA COMM: the folded stacks (root first, perf's own
# symbols) of the samples of threads named COMM in a perf record with
# call graphs
fold_comm() {
	perf script --no-inline --no-demangle -i "$1" -F comm,ip,sym 2>/dev/null | awk -v want="$2" '
		NF == 0 { if (n && keep) { s = f[n]; for (i = n - 1; i >= 1; i--) s = s ";" f[i]; c[s]++ }
			  n = 0; head = 1; next }
		head || !/^\t/ { keep = $1 == want; head = 0; n = 0; next }
		{ sym = $2; if (sym == "") sym = "[unknown]"; sub(/\+0x[0-9a-f]+$/, "", sym); f[++n] = sym }
		END { if (n && keep) { s = f[n]; for (i = n - 1; i >= 1; i--) s = s ";" f[i]; c[s]++ }
		      for (s in c) print s, c[s] }'
}

# make_input FILE BYTES: compressible input, repeated system binaries
# (deterministic).
make_input() {
	for f in /usr/bin/perf /usr/bin/gdb /usr/lib/x86_64-linux-gnu/libc.so.6; do
		[ -f "$f" ] && cat "$f"
	done | head -c "$2" >"$1"
}

median() {	# stdin: numbers, one a line
	sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# interleave NAME FUNC CMD...: REPS rounds of "FUNC MODE CMD..." for each
# mode in $modes, appending FUNC's line to $work/NAME.MODE; the order
# rotates each round so that no mode always runs first.
interleave() {
	name=$1 func=$2
	shift 2
	i=0
	while [ $i -lt "$reps" ]; do
		for m in $(echo $modes | tr ' ' '\n' | awk -v k=$i '{ a[NR] = $0 } END { for (j = 0; j < NR; j++) print a[(j + k) % NR + 1] }'); do
			$func "$m" "$@" >>"$work/$name.$m"
		done
		i=$((i + 1))
	done
}

# col NAME MODE FIELD: the median of field FIELD of NAME's MODE runs.
col() {
	cut -d' ' -f"$3" "$work/$1.$2" | median
}

# perf_samples FILE: the samples perf.data FILE holds.  --stats counts
# them without decoding them (-D printed every stack copy: minutes for
# a dwarf run of clang++).
perf_samples() {
	perf_n=$(perf report --stats -i "$1" 2>/dev/null |
		awk '/SAMPLE events:/ { print $3; exit }')
	echo "${perf_n:-0}"
}
