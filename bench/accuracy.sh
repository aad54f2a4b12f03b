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
# inlined frames left out (and icppd's too: --no-inline) and names
# mangled as icppd gives them, and icppd's functions without a symbol
# ("liblzma.so.5+0x1a30") are named "[unknown]" as perf names them.
# The functions perf cannot unwind from are left out (see no_caller);
# "left-out" is the share of perf's samples that goes.  icppd's profile
# is scored as report shows it (apportioned by learned counts; only
# guessed chains cut where they disagree, under "[unknown callers]",
# which never matches perf) and, in the last two columns, with report
# --whole-chains.
#
# Workloads: bench/workloads.sh's, each recorded into a fresh database
# (the online ones trained on another input first).  perf unwinds the Go
# program by frame pointers (--call-graph fp, as Go users profile it):
# with dwarf it gives every sample of it without a caller.
#
# Usage: bench/accuracy.sh [BUILDDIR]   (default: build, made by ./demo.sh)
# Environment: REPS (default 5), EVENT (cpu-clock), FREQ (1000), K (3),
# WORKLOADS (default: all of bench/workloads.sh's), LEARN (options of
# icppd record: "--no-learn" or "--learn-freq 250" for the points of
# learning's cost curve; bench/record.sh gives their cost).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/workloads.sh"
freq=${FREQ:-1000}
k=${K:-3}

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
		perf record -q -e "$event:u" -F "$freq" --call-graph "$graph" \
			-o "$work/$x.data" -- "$@" >/dev/null 2>&1
		fold "$work/$x.data" >"$work/$x.folded"
	done
	rm -f "$work"/a.db* "$work"/proj/*.o "$work"/t.o
	[ -z "$train" ] || eval "\"\$icppd\" train -q -e \"\$event\" -F \"\$freq\" -d \"\$work/a.db\" -- $train" >/dev/null
	"$icppd" record -q ${LEARN:-} -e "$event" -F "$freq" -d "$work/a.db" -- "$@" >/dev/null
	# whole stacks, and a function without a symbol as perf names it;
	# as shown (cut where candidates disagree) and --whole-chains
	"$icppd" report -d "$work/a.db" -f folded --k inf --exact --no-demangle --no-inline 2>/dev/null |
		sed "$as_perf" >"$work/i.folded"
	"$icppd" report -d "$work/a.db" -f folded --k inf --exact --no-demangle --no-inline --whole-chains 2>/dev/null |
		sed "$as_perf" >"$work/w.folded"
	no_caller "$work/a.folded" >"$work/nocaller"
	for x in a b i w; do
		drop_leaves "$work/nocaller" "$work/$x.folded" >"$work/$x.kept"
	done
	echo "$(overlap "$work/a.kept" "$work/b.kept") $(overlap "$work/a.kept" "$work/i.kept") $(share_of "$work/a.kept" "$work/a.folded") $(overlap "$work/a.kept" "$work/w.kept")"
}

# What perf cannot name, as perf names it: a function without a symbol,
# and makecontext()'s trampoline, where a coroutine's stack ends: perf
# looks up the return address minus one, which lies before it.
as_perf='s/[^;]*+0x[0-9a-f]*/[unknown]/g; s/^__start_context;/[unknown];/'

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }'; }

modes=one
printf '# %s, %s Hz, k = %s, %s repetitions; medians; %s CPUs\n' "$event" "$freq" "$k" "$reps" "$(nproc)"
printf '%-15s %12s %12s %8s %9s %8s %8s\n' workload perf-vs-perf icppd-vs-perf ratio left-out whole ratio
for w in ${WORKLOADS:-$workloads}; do
	workload "$w"
	graph=dwarf
	[ "$w" = go ] && graph=fp
	eval "set -- $cmd"
	interleave "$w" run_one "$@"
	c=$(col "$w" one 1) i=$(col "$w" one 2) l=$(col "$w" one 3) x=$(col "$w" one 4)
	printf '%-15s %12s %12s %8s %9s %8s %8s\n' "$w" "$c" "$i" "$(ratio "$i" "$c")" "$l" "$x" "$(ratio "$x" "$c")"
done
