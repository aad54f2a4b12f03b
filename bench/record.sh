#!/bin/sh
# bench/record.sh - cost of a measurement run, icppd against perf, on the
# same workloads in one run.
#
# Modes: no profiler; perf record (same event and rate, no call graph);
# perf record --call-graph fp; perf record --call-graph dwarf (8 KiB of
# stack a sample, its default: clang++'s stacks are 16 to 40 KiB deep,
# so every such sample is cut short); perf record --call-graph
# dwarf,65528 (perf-dwarf64: the whole stack, as icppd's copies grow to
# where stacks are deep; its rings 4 MiB a CPU, as icppd's); icppd
# record --no-learn (identifiers only); icppd record (learning call
# paths in bursts, the default: at the sampling rate while on, taking
# the main event's turn, up to 1 kHz; above, at 1 kHz beside it, with
# a leaf copy at every sample, and above 2500 Hz at 250 Hz, every
# sample's copy cut to 2500 copies' bytes a second; its CFI
# cache filled by the first round, as a user's first record fills it);
# icppd record --no-cache (icppd-cold: every binary's frame section
# listed afresh, as in a first record); icppd record --learn-freq 250 (a sparser learning event: the cost side of
# the rate curve); icppd-l25, not in the default MODES: --learn-freq 25,
# the daemon's trickle, its leaf copies cut to --leaf-freq's default's
# bytes a second; icppd-l25-all, not in the default MODES: the same with every
# sample's copy whole (--leaf-freq 0); icppd-l1k, not in the default
# MODES: --learn-freq 1000 (at -F 10000 the learner beside the main
# event, not taking its turn: whole copies at 1 kHz while it bursts);
# icppd-s2k, not in the default MODES either:
# --stack-size 2048, every learning copy the innermost 2 KiB only
# (fragments: docs/benchmarks.md, "what the innermost frames cost");
# icppd-opts, not in the default MODES: icppd record with the options
# in ICPPD_OPTS (e.g. "--learn-freq 25 --leaf-freq 0 --leaf-stack 1024").
# PRIOR (default 0): that many records of the same command (options
# PRIOR_OPTS, default none) go into every icppd mode's database first,
# untimed: the cost of a record after them, as a second record of a
# build reads what the first explained (docs/record.md, "Records after
# the first"); bytes are the database's growth in the timed record.
# Every mode runs REPS times, interleaved (mode order rotates
# each repetition), and the table shows medians of: CPU time of the whole
# process tree (profiler included, user + system), wall time, and bytes
# stored per sample (perf.data size, or the growth of a fresh icppd
# database, divided by the samples taken).  cpu/perf is the ratio of
# the medians; paired the median of each round's own ratio to the perf
# run beside it, which a machine that slows down or speeds up during
# the bench moves less (rounds run minutes apart, modes seconds);
# per-smp the same of CPU per sample taken, which the workload's own
# variation from run to run moves less; wl/perf the same of the
# workload's own CPU (its tree under /usr/bin/time inside the profiler):
# what the profiler costs it from inside, which per-smp divides away;
# own_s the profiler's own CPU (the tree's less the workload's: perf
# record or icppd record itself), median seconds.
#
# Usage: bench/record.sh [BUILDDIR]   (default: build, made by ./demo.sh)
# Environment: REPS (default 5), EVENT (default cpu-clock), FREQ (1000),
# WORKLOADS (default: all below, e.g. "make g++"), MODES (default: all
# above, e.g. "none perf icppd"; cpu/none and cpu/perf need those two),
# ICPPD_OPTS (the icppd-opts mode's record options).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/workloads.sh"
freq=${FREQ:-1000}
make_input "$work/input" 8000000

# The big multi-process workloads too (bench/workloads.sh's): make of a
# small C project (make, cc, cc1, as, collect2, ld) and g++ -O2 -c of a
# template-heavy file, the same file through clang++ (a front end whose
# stacks outgrow the first copies); a Go program's goroutines;
# makecontext() coroutines.
set -- \
	"heights" "$progs/heights-nofp 200" \
	"threads" "$progs/threads 360 2" \
	"xz" "xz -6 -T1 -c $work/input" \
	"bzip2" "bzip2 -9 -c $work/input" \
	"make" "make -s -B -C $work/proj" \
	"g++" "g++ -O2 -c -o $work/t.o $work/t.cc" \
	"clang++" "clang++ -O2 -c -o $work/t.o $work/t.cc" \
	"go" "$work/gowork 300" \
	"coro" "$progs/coro 300" \
	"dispatch" "$progs/dispatch table 20" \
	"collide" "$progs/collide ab 300"

# run MODE CMD: one measurement; prints "cpu wall bytes samples wl":
# wl the workload's own CPU (user + system of the command's tree,
# /usr/bin/time inside the profiler).
run() {
	mode=$1
	shift
	out=$work/out
	rm -f "$work"/perf.data* "$work"/b.db*
	case $mode in
	none) prof= ;;
	perf) prof="perf record -q -e $event:u -F $freq -o $work/perf.data --" ;;
	perf-fp) prof="perf record -q -e $event:u -F $freq --call-graph fp -o $work/perf.data --" ;;
	perf-dwarf) prof="perf record -q -e $event:u -F $freq --call-graph dwarf -o $work/perf.data --" ;;
	perf-dwarf64) prof="perf record -q -e $event:u -F $freq --call-graph dwarf,65528 -m 1024 -o $work/perf.data --" ;;
	icppd-nolearn) prof="$icppd record -q --no-learn -e $event -F $freq -d $work/b.db --" ;;
	icppd) prof="$icppd record -q -e $event -F $freq -d $work/b.db --" ;;
	icppd-cold) prof="$icppd record -q --no-cache -e $event -F $freq -d $work/b.db --" ;;
	icppd-l1k) prof="$icppd record -q --learn-freq 1000 -e $event -F $freq -d $work/b.db --" ;;
	icppd-l250) prof="$icppd record -q --learn-freq 250 -e $event -F $freq -d $work/b.db --" ;;
	icppd-l25) prof="$icppd record -q --learn-freq 25 -e $event -F $freq -d $work/b.db --" ;;
	icppd-l25-all) prof="$icppd record -q --learn-freq 25 --leaf-freq 0 -e $event -F $freq -d $work/b.db --" ;;
	icppd-s2k) prof="$icppd record -q --stack-size 2048 -e $event -F $freq -d $work/b.db --" ;;
	icppd-opts) prof="$icppd record -q ${ICPPD_OPTS:-} -e $event -F $freq -d $work/b.db --" ;;
	esac
	before=0
	case $mode in icppd*)	# PRIOR records of the command first, untimed
		j=0
		while [ $j -lt "${PRIOR:-0}" ]; do
			# shellcheck disable=SC2086
			"$icppd" record -q ${PRIOR_OPTS:-} -e "$event" -F "$freq" \
				-d "$work/b.db" -- "$@" >/dev/null 2>&1
			j=$((j + 1))
		done
		[ -f "$work/b.db" ] && before=$(stat -c %s "$work/b.db") ;;
	esac
	/usr/bin/time -f '%U %S %e' -o "$work/time" $prof \
		/usr/bin/time -f '%U %S' -o "$work/wtime" "$@" >/dev/null 2>"$out" || true
	read -r u s e <"$work/time"
	read -r wu ws <"$work/wtime"
	case $mode in
	none) bytes=0 samples=0 ;;
	icppd*)
		bytes=$(($(stat -c %s "$work/b.db") - before))
		samples=$(sqlite3 "$work/b.db" \
			"SELECT samples FROM v_runs ORDER BY run_id DESC LIMIT 1") ;;
	*)
		bytes=$(stat -c %s "$work/perf.data")
		samples=$(perf_samples "$work/perf.data") ;;
	esac
	echo "$u $s $e $bytes $samples $wu $ws" |
		awk '{ printf "%.3f %.3f %d %d %.3f\n", $1 + $2, $3, $4, $5, $6 + $7 }'
}

modes=${MODES:-none perf perf-fp perf-dwarf perf-dwarf64 icppd-nolearn icppd icppd-cold icppd-l250}
printf '# %s, %s Hz, %s repetitions, interleaved; medians; %s\n' "$event" "$freq" "$reps" "$(nproc) CPUs"
# paired NAME MODE: the median over rounds of MODE's CPU over perf's
paired() {
	paste -d' ' "$work/$1.$2" "$work/$1.perf" | awk '{ print $1 / $6 }' | median
}
# workload NAME MODE: the same, of the workload's own CPU: what the
# profiler costs it from inside (the kernel's stack copies are taken in
# its time, and push its data out of the caches), which per-smp leaves
# out
workload_cpu() {
	paste -d' ' "$work/$1.$2" "$work/$1.perf" |
		awk '$5 > 0 && $10 > 0 { print $5 / $10 }' | median
}
# per_sample NAME MODE: the same, of CPU per sample taken: samples count
# the workload's own CPU time, which varies from run to run by more than
# a profiler costs (clang++ took 2,648 to 2,834 samples a round), so
# this is the profiler's cost for the same work
per_sample() {
	paste -d' ' "$work/$1.$2" "$work/$1.perf" |
		awk '$4 > 0 && $9 > 0 { print ($1 / $4) / ($6 / $9) }' | median
}
printf '%-8s %-13s %8s %8s %9s %9s %8s %8s %8s %10s %8s %7s\n' workload mode cpu_s wall_s cpu/none cpu/perf paired per-smp wl/perf bytes/smp samples own_s
while [ $# -gt 0 ]; do
	name=$1 cmd=$2
	shift 2
	case " ${WORKLOADS:-$name} " in *" $name "*) ;; *) continue ;; esac
	interleave "$name" run $cmd
	base=$(col "$name" none 1)
	perfc=$(col "$name" perf 1)
	for m in $modes; do
		cpu=$(col "$name" "$m" 1)
		wall=$(col "$name" "$m" 2)
		smp=$(col "$name" "$m" 4)
		bps=$(awk '{ if ($4 > 0) print $3 / $4; else print 0 }' "$work/$name.$m" | median)
		ps=-
		[ "$m" = none ] || ps=$(per_sample "$name" "$m" | awk '{ printf "%.3f", $1 }')
		printf '%-8s %-13s %8.3f %8.3f %9.3f %9.3f %8.3f %8s %8.3f %10.1f %8.0f %7.3f\n' "$name" "$m" "$cpu" "$wall" \
			"$(echo "$cpu $base" | awk '{ print $1 / $2 }')" \
			"$(echo "$cpu $perfc" | awk '{ print $1 / $2 }')" "$(paired "$name" "$m")" \
			"$ps" "$(workload_cpu "$name" "$m")" "$bps" "$smp" \
			"$(awk '{ print $1 - $5 }' "$work/$name.$m" | median)"
	done
done
