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
# program by frame pointers (--call-graph fp): with dwarf it gives every
# sample of it without a caller.  Frame pointers skip the caller of
# every Go function that keeps no frame, so the go-pprof row scores the
# same program against the profiler Go users run, the runtime's own
# (runtime/pprof, whose traceback reads the runtime's tables and is
# exact): A and B are two of its profiles, at 250 Hz (its highest
# lossless rate here) over a run four times as long, and icppd records
# at the same rate.  Its stacks name functions as Go does: assembly
# without ".abi0", and no runtime.goexit or wrapper frames (those DWARF
# marks DW_AT_trampoline), so icppd's are named so too.  Go's profiler
# counts a thread's time in the kernel too, at the call that entered it
# (runtime.futex); icppd and perf sample user time.  Below the table,
# perf's own profile of the go-pprof row's program (frame pointers, as
# on the go row) is scored against Go's profiler the same way: what a
# perf user gets for a Go program, beside what icppd gives.
#
# The reference (ref) is perf, or Go's profiler on the go-pprof row.
# "rounds" is the lowest and highest of the rounds' own ratios: one
# round of g++ or clang++ moves by 0.1 (docs/benchmarks.md, "fewer
# copies above 1 kHz"), so a change is judged by the medians of
# several, never by one.
#
# Usage: bench/accuracy.sh [BUILDDIR]   (default: build, made by ./demo.sh)
# Environment: REPS (default 5), EVENT (cpu-clock), FREQ (1000), K (3),
# WORKLOADS (default: all of bench/workloads.sh's), LEARN (options of
# icppd record: "--no-learn" or "--learn-freq 250" for the points of
# learning's cost curve; bench/record.sh gives their cost), PRIOR (how
# many records of the same command go into the database first: many
# runs, one map, as the daemon's segments and repeated records add up;
# default 0) and PRIOR_LEARN (their options, default LEARN's).  The run
# scored is the last; PRIOR=1 PRIOR_LEARN= LEARN="--learn-freq 25" is
# "a trickle record after one default record", PRIOR=4 with LEARN's
# trickle "the fifth trickle run".  REPORT: options of the scored
# reports (e.g. "--budget 0.8", the search's old default budget).
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

# Go's own profile, folded as above; inlined frames left out.
fold_pprof() {	# fold_pprof BINARY PROFILE
	go tool pprof -traces -sample_index=samples "$1" "$2" 2>/dev/null | awk '
		/^-----------\+/ { flush(); next }
		!blk && /^ *[0-9]+   / { blk = 1; w = $1; sub(/^ *[0-9]+   /, ""); add($0); next }
		blk && /^             / { sub(/^ +/, ""); add($0) }
		function add(f) { if (f !~ / \(inline\)$/) fr[++n] = f }
		function flush(  s, i) {
			if (blk && n) { s = fr[n]; for (i = n - 1; i >= 1; i--) s = s ";" fr[i]; c[s] += w }
			blk = 0; n = 0 }
		END { flush(); for (s in c) print s, c[s] }'
}
# The functions Go's linker marks as wrappers (DW_AT_trampoline), which
# its tracebacks leave out.
go_wrappers() {	# go_wrappers BINARY
	objdump --dwarf=info "$1" 2>/dev/null | awk '
		/^ *<[0-9]+><[0-9a-f]+>: Abbrev Number/ {
			if (tramp && name != "") print name
			sp = /DW_TAG_subprogram/; tramp = 0; name = ""; next }
		sp && /DW_AT_name/ { name = $0; sub(/^.*: /, "", name) }
		sp && /DW_AT_trampoline/ { tramp = 1 }
		END { if (tramp && name != "") print name }'
}
# icppd's folded stacks named as Go's profiler names them.
as_go() {	# as_go WRAPPERS FOLDED
	awk 'FILENAME == ARGV[1] { x[$0] = 1; next }
	     { w = $NF; l = $0; sub(/ [0-9.]+$/, "", l); gsub(/\.abi0/, "", l)
	       n = split(l, f, ";"); s = ""
	       for (i = 1; i <= n; i++)
		       if (!(f[i] in x) && f[i] != "runtime.goexit") s = s (s == "" ? "" : ";") f[i]
	       if (s != "") print s, w }' "$1" "$2"
}

overlap() {	# overlap A B: degree of overlap of k-contexts
	"$icppd" compare -d "$work/a.db" --k "$k" "$1" "$2" |
		awk '/^degree of overlap/ { print $4 }'
}

run_one() {	# run_one MODE CMD...: prints "ceiling icppd left-out whole perf-fp"
	# (perf-fp: perf's frame-pointer profile against Go's, "-" but on
	# the go-pprof row); $train, when set, is a command trained into
	# the database first (online)
	shift
	for x in a b; do
		if [ "$graph" = pprof ]; then
			GOWORK_CPUPROFILE="$work/$x.pb" "$@" >/dev/null 2>&1
			fold_pprof "$1" "$work/$x.pb" >"$work/$x.folded"
			continue
		fi
		perf record -q -e "$event:u" -F "$freq" --call-graph "$graph" \
			-o "$work/$x.data" -- "$@" >/dev/null 2>&1
		fold "$work/$x.data" >"$work/$x.folded"
	done
	rm -f "$work"/a.db* "$work"/p.folded "$work"/proj/*.o "$work"/t.o
	[ -z "$train" ] || eval "\"\$icppd\" train -q -e \"\$event\" -F \"\$freq\" -d \"\$work/a.db\" -- $train" >/dev/null
	j=0
	while [ $j -lt "${PRIOR:-0}" ]; do
		# shellcheck disable=SC2086
		"$icppd" record -q $prior_opts -e "$event" -F "$freq" \
			-d "$work/a.db" -- "$@" >/dev/null
		j=$((j + 1))
	done
	"$icppd" record -q ${LEARN:-} -e "$event" -F "$freq" -d "$work/a.db" -- "$@" >/dev/null
	# whole stacks, and a function without a symbol as perf names it;
	# as shown (cut where candidates disagree) and --whole-chains
	# shellcheck disable=SC2086
	"$icppd" report ${REPORT:-} -d "$work/a.db" -f folded --k inf --exact --no-demangle --no-inline 2>/dev/null |
		sed "$as_perf" >"$work/i.folded"
	# shellcheck disable=SC2086
	"$icppd" report ${REPORT:-} -d "$work/a.db" -f folded --k inf --exact --no-demangle --no-inline --whole-chains 2>/dev/null |
		sed "$as_perf" >"$work/w.folded"
	if [ "$graph" = pprof ]; then
		for x in i w; do
			as_go "$work/wrappers" "$work/$x.folded" >"$work/$x.go" &&
				mv "$work/$x.go" "$work/$x.folded"
		done
	fi
	# perf's own profile of the program (frame pointers, as on the go
	# row), scored against Go's profiler as icppd's is
	if [ "$graph" = pprof ]; then
		perf record -q -e "$event:u" -F "$freq" --call-graph fp \
			-o "$work/p.data" -- "$@" >/dev/null 2>&1
		fold "$work/p.data" | sed "$as_perf" >"$work/p.perf"
		as_go "$work/wrappers" "$work/p.perf" >"$work/p.folded"
	fi
	no_caller "$work/a.folded" >"$work/nocaller"
	for x in a b i w p; do
		[ -f "$work/$x.folded" ] &&
			drop_leaves "$work/nocaller" "$work/$x.folded" >"$work/$x.kept"
	done
	perf_fp=-
	[ "$graph" != pprof ] || perf_fp=$(overlap "$work/a.kept" "$work/p.kept")
	echo "$(overlap "$work/a.kept" "$work/b.kept") $(overlap "$work/a.kept" "$work/i.kept") $(share_of "$work/a.kept" "$work/a.folded") $(overlap "$work/a.kept" "$work/w.kept") $perf_fp"
}


ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }'; }
rounds() {	# rounds NAME: the lowest and highest round's icppd/ref ratio
	awk '$1 > 0 { r = $2 / $1; if (!n++) lo = hi = r; if (r < lo) lo = r; if (r > hi) hi = r }
	     END { if (n) printf "%.2f-%.2f", lo, hi; else printf "-" }' "$work/$1.one"
}

modes=one pprof_line=
prior_opts=${PRIOR_LEARN-${LEARN:-}}
printf '# %s, %s Hz, k = %s, %s repetitions; medians; %s CPUs; record %s' \
	"$event" "$freq" "$k" "$reps" "$(nproc)" "${LEARN:-(default)}"
[ "${PRIOR:-0}" = 0 ] || printf ', after %s record(s) %s' "$PRIOR" "${prior_opts:-(default)}"
[ -z "${REPORT:-}" ] && echo || echo "; report $REPORT"
printf '%-15s %12s %12s %8s %10s %9s %8s %8s\n' workload ref-vs-ref icppd-vs-ref ratio rounds left-out whole ratio
for w in ${WORKLOADS:-$workloads}; do
	workload "$w"
	graph=dwarf freq=${FREQ:-1000}
	[ "$w" = go ] && graph=fp
	if [ "$w" = go-pprof ]; then
		graph=pprof freq=250
		go_wrappers "$work/gowork" >"$work/wrappers"
	fi
	eval "set -- $cmd"
	interleave "$w" run_one "$@"
	c=$(col "$w" one 1) i=$(col "$w" one 2) l=$(col "$w" one 3) x=$(col "$w" one 4)
	printf '%-15s %12s %12s %8s %10s %9s %8s %8s\n' "$w" "$c" "$i" "$(ratio "$i" "$c")" "$(rounds "$w")" "$l" "$x" "$(ratio "$x" "$c")"
	[ "$graph" != pprof ] || pprof_line="$pprof_line$w: perf --call-graph fp against Go's profiler $(col "$w" one 5), ratio $(ratio "$(col "$w" one 5)" "$c") (icppd $(ratio "$i" "$c"))
"
done
printf '%s' "${pprof_line:-}"
