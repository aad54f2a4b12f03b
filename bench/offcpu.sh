#!/bin/sh
# bench/offcpu.sh - off-CPU time (record --off-cpu), three parts:
#
# cost: a pipe ping-pong of N round trips (2N switches; tests/progs/
# offcpu pingpong N) run bare, under perf record -e context-switches
# -c 1 (every switch, no call graph), the same with --call-graph dwarf,
# and under icppd record --off-cpu; CPU time of the whole run (user +
# system, /usr/bin/time), medians of REPS interleaved runs, and each over
# perf's.  The ping-pong runs on one CPU (taskset -c 0) in every mode,
# the recorders wherever the kernel puts them: unpinned, its own CPU
# time moved by a third with how each recorder's wakeups placed its two
# threads (perf's dwarf run cost less than its plain one).
#
# accuracy: real programs that block (xz -T2 reading a pipe, make -j2 of
# a small C project, git clone of a local repository over git's own
# transport), each recorded twice by perf record -e sched:sched_switch
# --call-graph dwarf --switch-events (the reference: each blocked
# switch-out's user stack, weighed by the time to its thread's next
# switch-in, from perf script's timestamps) and once by icppd record
# --off-cpu, interleaved.  The k = 3 overlap of icppd's off-CPU stacks
# with perf A's, over perf A's with perf B's (the ceiling), medians of
# REPS rounds.  Kernel frames are left out (icppd's stacks are the
# user's), and so are switches the kernel marked preempted (prev_state
# R: runnable, not blocked; icppd keeps them apart).  As in
# bench/accuracy.sh, perf's stacks are folded without inlined frames,
# icppd's functions without a symbol are named "[unknown]" as perf
# names them, and the leaf functions perf A left without a caller in
# most of their time are left out of all three ("left-out": the share
# of perf A's time that goes; perf's unwinder stops at libc's futex
# wait and write, where icppd's goes on to main).
#
# truth: the known structure of tests/progs/offcpu (below, truth()).
#
# Root (the switch event counts in the kernel).
# Usage: bench/offcpu.sh [BUILDDIR]; environment: PARTS (default
# "cost truth accuracy"), REPS (default 5), N (default 100000), WORKLOADS
# (default "xz make git").
. "$(dirname "$0")/lib.sh"
n=${N:-100000}
prog=$progs/offcpu
[ -x "$prog" ] || { echo "bench: make check TESTS= first (tests/progs)" >&2; exit 1; }

run() {	# run MODE: prints "cpu_s"
	case $1 in
	none) set -- $pin "$prog" pingpong "$n" ;;
	perf) set -- perf record -q -e context-switches -c 1 -o "$work/p.data" -- $pin "$prog" pingpong "$n" ;;
	perf-dwarf) set -- perf record -q -e context-switches -c 1 --call-graph dwarf -o "$work/p.data" -- $pin "$prog" pingpong "$n" ;;
	icppd) set -- "$icppd" record -q --off-cpu -d "$work/i.db" -- $pin "$prog" pingpong "$n" ;;
	esac
	rm -f "$work"/i.db* "$work/p.data"
	/usr/bin/time -f '%U %S' -o "$work/t" "$@" >/dev/null 2>&1
	awk '{ printf "%.3f\n", $1 + $2 }' "$work/t"
}
cost() {
	pin=
	command -v taskset >/dev/null && pin="taskset -c 0"
	modes="none perf perf-dwarf icppd"
	interleave cpu run
	printf '# pipe ping-pong, %s round trips (%s switches), %s, %s runs, medians\n' "$n" "$((2 * n))" "${pin:-unpinned}" "$reps"
	printf '%-12s %8s %10s\n' mode cpu_s "over perf"
	p=$(col cpu perf 1)
	for m in $modes; do
		c=$(col cpu "$m" 1)
		printf '%-12s %8s %10s\n' "$m" "$c" "$(awk -v c="$c" -v p="$p" 'BEGIN { printf "%.3f", (p > 0 ? c / p : 0) }')"
	done
}

# fold_switches PERF_DATA: each blocked switch-out's user stack, root
# first, with the microseconds until its thread switched in again
fold_switches() {
	perf script -i "$1" --show-switch-events --no-inline --no-demangle \
		-F comm,pid,tid,time,trace,ip,sym,dso 2>/dev/null | awk '
		function flush(  s, i) {
			if (out && n) {
				s = f[n]; for (i = n - 1; i >= 1; i--) s = s ";" f[i]
				stack[tid] = s; since[tid] = t
			}
			out = 0; n = 0
		}
		/^[^\t]/ {
			flush()
			if (!match($0, / [0-9]+\/[0-9]+ +[0-9]+\.[0-9]+: /)) next
			split(substr($0, RSTART + 1, RLENGTH - 3), h, " +"); split(h[1], pt, "/")
			tid = pt[2]; t = h[2] + 0
			if ($0 ~ /PERF_RECORD_SWITCH IN/) {
				if (tid in since) { us[stack[tid]] += (t - since[tid]) * 1e6; delete since[tid] }
				next
			}
			st = $0; sub(/.*prev_state=/, "", st); sub(/ .*/, "", st)
			out = $0 ~ /prev_state=/ && st !~ /^R/
			next
		}
		/^\t/ {
			if ($1 ~ /^ffffffff/) next	# the kernel part
			sym = $2; if (sym == "" || sym ~ /^\(/) sym = "[unknown]"; sub(/\+0x[0-9a-f]+$/, "", sym)
			f[++n] = sym
		}
		END { flush(); for (s in us) if (us[s] >= 1) printf "%s %.0f\n", s, us[s] }'
}
no_caller() {	# no_caller FOLDED: leaf functions perf left callerless
	awk '{ w = $NF; sub(/ [0-9.]+$/, ""); n = split($0, f, ";")
	       tot[f[n]] += w; if (n == 1) one[f[n]] += w }
	     END { for (l in tot) if (2 * one[l] > tot[l]) print l }' "$1"
}
drop_leaves() {	# drop_leaves LIST FOLDED: FOLDED without stacks ending in LIST
	awk 'FILENAME == ARGV[1] { x[$0] = 1; next }
	     { l = $0; sub(/ [0-9.]+$/, "", l); n = split(l, f, ";"); if (!(f[n] in x)) print }' "$1" "$2"
}
overlap() {	# overlap A B: degree of overlap of 3-contexts
	"$icppd" compare -d "$work/o.db" --k 3 "$1" "$2" | awk '/^degree of overlap/ { print $4 }'
}
kept_share() {	# kept_share KEPT ALL: 1 - KEPT's weight over ALL's
	awk -v all="$(awk '{ t += $NF } END { print t + 0 }' "$2")" '{ t += $NF }
		END { printf "%.3f\n", (all > 0 ? 1 - t / all : 0) }' "$1"
}

# one_accuracy MODE CMD...: one round (MODE unused: one mode), prints
# "ceiling icppd left-out perf_ms icppd_ms"
one_accuracy() {
	shift
	for x in a b; do
		prep
		perf record -q -e sched:sched_switch --call-graph dwarf --switch-events \
			-o "$work/$x.data" -- "$@" >/dev/null 2>&1
		fold_switches "$work/$x.data" >"$work/$x.folded"
	done
	prep
	rm -f "$work"/o.db*
	"$icppd" record -q --off-cpu -d "$work/o.db" -- "$@" >/dev/null 2>&1
	"$icppd" report -d "$work/o.db" --off-cpu -f folded --k inf --exact --no-demangle --no-inline 2>/dev/null |
		sed "$as_perf" >"$work/i.folded"
	no_caller "$work/a.folded" >"$work/nocaller"
	for x in a b i; do
		drop_leaves "$work/nocaller" "$work/$x.folded" >"$work/$x.kept"
	done
	echo "$(overlap "$work/a.kept" "$work/b.kept") $(overlap "$work/a.kept" "$work/i.kept") $(kept_share "$work/a.kept" "$work/a.folded") $(awk '{ t += $NF } END { printf "%.0f", t / 1000 }' "$work/a.folded") $(awk '{ t += $NF } END { printf "%.0f", t / 1000 }' "$work/i.folded")"
}

accuracy() {
	make_input "$work/in.bin" 40000000
	make_cproject "$work/proj"
	git -C "$top" rev-parse --git-dir >/dev/null 2>&1 || echo "# no git repository at $top: the git row is left out"
	modes=one
	printf '# off-CPU, k = 3, %s rounds, medians; %s CPUs; perf: sched:sched_switch --call-graph dwarf --switch-events\n' "$reps" "$(nproc)"
	printf '%-6s %12s %12s %8s %9s %9s %9s\n' workload perf-vs-perf icppd-vs-perf ratio left-out perf_ms icppd_ms
	for w in ${WORKLOADS:-xz make git}; do
		case $w in
		xz) prep() { :; }
		    set -- sh -c "cat '$work/in.bin' | xz -T2 -3 >/dev/null" ;;
		make) prep() { :; }
		    set -- make -s -j2 -B -C "$work/proj" ;;
		git) git -C "$top" rev-parse --git-dir >/dev/null 2>&1 || continue
		    prep() { rm -rf "$work/clone"; }
		    set -- git clone -q --no-local "$top" "$work/clone" ;;
		esac
		interleave "$w" one_accuracy "$@"
		c=$(col "$w" one 1) i=$(col "$w" one 2)
		printf '%-6s %12s %12s %8s %9s %9s %9s\n' "$w" "$c" "$i" \
			"$(awk -v i="$i" -v c="$c" 'BEGIN { printf "%.3f", (c > 0 ? i / c : 0) }')" \
			"$(col "$w" one 3)" "$(col "$w" one 4)" "$(col "$w" one 5)"
	done
}

# truth: tests/progs/offcpu's main thread burns 20 ms then sleeps 30 ms
# in wait_timer() a round, its worker blocks on a pipe in io_wait(); the
# program measures each wait itself (TRUTH_FILE).  Per path, the time
# icppd reports under it (report --off-cpu -f folded) against that,
# medians of REPS records of 10 rounds.
truth() {
	modes=one
	interleave truth one_truth
	printf '# tests/progs/offcpu 10: blocked time under each path against what the program measured, %s runs, medians\n' "$reps"
	printf '%-28s %10s %10s %8s\n' path icppd_us truth_us error
	printf '%-28s %10s %10s %8s\n' "main;wait_timer" "$(col truth one 1)" "$(col truth one 2)" "$(col truth one 3)"
	printf '%-28s %10s %10s %8s\n' "worker;io_wait;read" "$(col truth one 4)" "$(col truth one 5)" "$(col truth one 6)"
}
one_truth() {	# prints "got want error" for wait_timer, then io_wait
	rm -f "$work"/t.db* "$work/truth"
	TRUTH_FILE=$work/truth "$icppd" record -q --off-cpu -d "$work/t.db" -- "$prog" 10 >/dev/null
	"$icppd" report -d "$work/t.db" --off-cpu -f folded --exact 2>/dev/null >"$work/t.folded"
	for p in ";main;wait_timer;" ";worker;io_wait;read"; do
		f=wait_timer
		[ "$p" = ";main;wait_timer;" ] || f=io_wait
		got=$(awk -v p="$p" 'index($0, p) { t += $NF } END { printf "%.0f", t }' "$work/t.folded")
		want=$(awk -v f="$f" '$1 == "OFFCPU" && $4 == f { printf "%.0f", $5 * 1000 }' "$work/truth")
		printf '%s %s %s ' "$got" "$want" "$(awk -v g="$got" -v w="$want" 'BEGIN { printf "%.4f", (w > 0 ? (g - w) / w : 0) }')"
	done
	echo
}

for part in ${PARTS:-cost truth accuracy}; do
	$part
done
