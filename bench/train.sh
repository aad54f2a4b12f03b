#!/bin/sh
# bench/train.sh - the training run and inference precision, in one run.
#
# 1. Cost: icppd train against perf record --call-graph dwarf at the same
#    event, rate and stack-copy size.  perf unwinds when the data is read,
#    so "perf-dwarf+script" adds the perf script pass that unwinds every
#    sample; icppd train has unwound and stored its path map when it
#    exits.  REPS runs per mode, interleaved (the order rotates), medians
#    of CPU time of the whole process tree (user + system), wall time,
#    and bytes stored (perf.data, or the icppd database).
# 2. Path-map size after one training run of each workload.
# 3. Validation: precise / ambiguous / incorrect / missing shares of
#    scored samples, training and validation on the same input
#    (offline) and on another input (online).
#
# Usage: bench/train.sh [BUILDDIR]   (default: build, made by ./demo.sh)
# Environment: REPS (default 5), EVENT (default cpu-clock), FREQ (4000),
# STACK (16384).
. "$(dirname "$0")/lib.sh"
freq=${FREQ:-4000}
stack=${STACK:-16384}
make_input "$work/input" 4000000
# Another input for the online scenario: text, not code.
for f in /usr/share/common-licenses/* /usr/share/perl5/*.pm /usr/include/*.h; do
	[ -f "$f" ] && cat "$f"
done 2>/dev/null | head -c 4000000 >"$work/input2"

# ---- 1. cost -------------------------------------------------------------
cost() {	# cost MODE CMD...: prints "cpu wall bytes samples"
	mode=$1
	shift
	rm -f "$work"/perf.data* "$work"/c.db*
	case $mode in
	none) prof= ;;
	perf-dwarf|perf-dwarf+script)
		prof="perf record -q -e $event:u -F $freq --call-graph dwarf,$stack -o $work/perf.data --" ;;
	icppd-train)
		prof="$icppd train -q -e $event -F $freq --stack-size $stack -d $work/c.db --" ;;
	esac
	/usr/bin/time -f '%U %S %e' -o "$work/time" $prof "$@" >/dev/null 2>&1 || true
	read -r u s e <"$work/time"
	if [ "$mode" = perf-dwarf+script ]; then
		/usr/bin/time -f '%U %S %e' -o "$work/time2" \
			perf script -i "$work/perf.data" -F ip,sym >/dev/null 2>&1 || true
		read -r u2 s2 e2 <"$work/time2"
		u=$(echo "$u $u2" | awk '{ print $1 + $2 }')
		s=$(echo "$s $s2" | awk '{ print $1 + $2 }')
		e=$(echo "$e $e2" | awk '{ print $1 + $2 }')
	fi
	case $mode in
	none) bytes=0 samples=0 ;;
	icppd-train)
		bytes=$(stat -c %s "$work/c.db")
		samples=$(sqlite3 "$work/c.db" "SELECT samples FROM v_runs") ;;
	*)
		bytes=$(stat -c %s "$work/perf.data")
		samples=$(perf_samples "$work/perf.data") ;;
	esac
	echo "$u $s $e $bytes $samples" | awk '{ printf "%.3f %.3f %d %d\n", $1 + $2, $3, $4, $5 }'
}

set -- \
	"heights" "$progs/heights-nofp 100" \
	"threads" "$progs/threads 180 2" \
	"xz" "xz -6 -T1 -c $work/input" \
	"bzip2" "bzip2 -9 -c $work/input"

modes="none perf-dwarf perf-dwarf+script icppd-train"
printf '# 1. training cost: %s, %s Hz, %s-byte stack copies, %s repetitions, interleaved; medians; %s CPUs\n' \
	"$event" "$freq" "$stack" "$reps" "$(nproc)"
printf '%-8s %-18s %8s %8s %9s %10s %12s %8s\n' workload mode cpu_s wall_s cpu/none cpu/perf+s bytes samples
for w in 1 2 3 4; do
	name=$1 cmd=$2
	shift 2
	interleave "$name" cost $cmd
	base=$(col "$name" none 1)
	ref=$(col "$name" perf-dwarf+script 1)
	for m in $modes; do
		cpu=$(col "$name" "$m" 1)
		wall=$(col "$name" "$m" 2)
		bytes=$(col "$name" "$m" 3)
		smp=$(col "$name" "$m" 4)
		printf '%-8s %-18s %8.3f %8.3f %9.3f %10.3f %12d %8d\n' "$name" "$m" "$cpu" "$wall" \
			"$(echo "$cpu $base" | awk '{ print $1 / $2 }')" \
			"$(echo "$cpu $ref" | awk '{ print $1 / $2 }')" "$bytes" "$smp"
	done
done

# ---- 2 and 3. path-map size and validation -------------------------------
# name | training command | online validation command (offline: the
# training command again)
cat >"$work/cases" <<CASES
heights|$progs/heights-nofp 70|$progs/heights-nofp 35 spin 1
threads|$progs/threads 100 3|$progs/threads 100 6
uselib|$progs/uselib 70|$progs/uselib 140
collide|$progs/collide ab 70|$progs/collide abc 70
xz|xz -6 -T1 -c $work/input|xz -6 -T1 -c $work/input2
bzip2|bzip2 -9 -c $work/input|bzip2 -9 -c $work/input2
CASES

scores() {	# scores DB: the last validation run's shares
	sqlite3 -separator ' ' "$1" "SELECT samples, round(100 * precise, 1),
		round(100 * ambiguous, 1), round(100 * incorrect, 1),
		round(100 * missing, 1) FROM v_validation_summary
		WHERE run_id = (SELECT max(run_id) FROM v_runs)"
}

echo
echo "# 2. path map after one training run ($freq Hz, $stack-byte stack copies)"
printf '%-8s %8s %8s %9s %8s %10s %10s\n' workload samples paths cids ambig_cids truncated db_bytes
while IFS='|' read -r name train online; do
	db=$work/$name.db
	rm -f "$db"*
	$icppd train -q -e "$event" -F "$freq" --stack-size "$stack" -d "$db" -- $train >/dev/null 2>&1 || true
	sqlite3 -separator ' ' "$db" "SELECT sum(m.samples), sum(paths), sum(cids), sum(ambiguous_cids),
		(SELECT sum(value) FROM v_run_counters WHERE name = 'unwind.truncated')
		FROM v_path_maps m WHERE kind = 'train'" |
		while read -r s p c a t; do
			printf '%-8s %8d %8d %9d %8d %10d %10d\n' "$name" "$s" "$p" "$c" "$a" "$t" "$(stat -c %s "$db")"
		done
done <"$work/cases"

echo
echo "# 3. validation ($event, 1000 Hz): shares of scored samples, %"
printf '%-8s %-8s %8s %8s %9s %9s %8s\n' workload scenario samples precise ambiguous incorrect missing
while IFS='|' read -r name train online; do
	db=$work/$name.db
	$icppd validate -q -e "$event" --stack-size "$stack" -d "$db" -- $train >/dev/null 2>&1 || true
	scores "$db" | while read -r s p a i m; do
		printf '%-8s %-8s %8d %8s %9s %9s %8s\n' "$name" offline "$s" "$p" "$a" "$i" "$m"
	done
	$icppd validate -q -e "$event" --stack-size "$stack" -d "$db" -- $online >/dev/null 2>&1 || true
	scores "$db" | while read -r s p a i m; do
		printf '%-8s %-8s %8d %8s %9s %9s %8s\n' "$name" online "$s" "$p" "$a" "$i" "$m"
	done
done <"$work/cases"
