#!/bin/sh
# icppd record learns call paths while it measures: a plain record of a
# program never trained shows its call paths; a phase training never saw
# is explained after one record; the learning event works in bursts
# (on while CIDs are unexplained, a trickle once nearly all are); and
# --no-learn learns nothing.
. "$TESTS_SRCDIR/e2e/lib.sh"
require_perf

db=$tmp/learn.db
# 60 ms of CPU per burn: 60 main samples per path at 1000 Hz, and as
# many of the learning event's, at the sampling rate while a burst is on
# (none at all for a path: e^-60).
out=$("$ICPPD" record -d "$db" -- "$PROGS/heights-nofp" 60 2>&1 >/dev/null)
is $? 0 "record with no training: exit 0"
contains "$out" "stack samples unwound to whole call paths" "the summary says what was learned"
paths=$(q "SELECT learned_paths FROM v_runs")
ok $([ "${paths:-0}" -gt 0 ]; echo $?) "v_runs shows the learned paths ($paths)"
folded=$("$ICPPD" report -d "$db" --format folded --k inf 2>/dev/null)
is $? 0 "report after one plain record: exit 0"
contains "$folded" ";main;path_b;leaf " "call path main -> path_b -> leaf, from record alone"
contains "$folded" ";main;path_a;work " "call path main -> path_a -> work"
contains "$folded" ";main;recurse;recurse;recurse " "recursion, from record alone"
# Learning as the run went, a row a window (v_learning): they add up to
# the run's samples and learning's counters, one after the other.
wsum() { q "SELECT coalesce(sum($1), 0) FROM learn_windows WHERE run_id = 1"; }
rcount() { q "SELECT coalesce(max(value), 0) FROM v_run_counters WHERE run_id = 1 AND name = '$1'"; }
ok $([ "$(q "SELECT count(*) FROM v_learning")" -ge 1 ]; echo $?) \
	"v_learning: the run's windows ($(q "SELECT count(*) FROM v_learning"))"
is "$(wsum samples)" "$(q "SELECT sum(samples) FROM cid_samples WHERE run_id = 1")" \
	"v_learning: the windows' samples are the run's samples with a CID"
is "$(wsum unexplained)" "$(rcount learn.unknown_cids)" \
	"v_learning: their unexplained samples are learn.unknown_cids"
is "$(wsum copies)" "$(rcount learn.samples)" "v_learning: their copies are learn.samples"
is "$(wsum new_paths)" "$(rcount learn.new_paths)" "v_learning: their new paths are learn.new_paths"
is "$(q "SELECT count(*) FROM (SELECT start_ms, end_ms, lag(end_ms)
	OVER (ORDER BY start_ms) AS prev FROM learn_windows)
	WHERE start_ms < coalesce(prev, 0) OR end_ms < start_ms")" 0 \
	"v_learning: the windows follow one another, none overlapping"
is "$(q "SELECT count(*) FROM v_learning WHERE explained_pct IS NOT
	round(100.0 * (samples - unexplained) / samples, 1)")" 0 \
	"v_learning: explained_pct is the share explained"
unknown=$(q "SELECT COALESCE(SUM(samples), 0) FROM v_inferred WHERE how = 'unknown'")
total=$(q "SELECT SUM(samples) FROM v_inferred")
ok $(awk -v u="$unknown" -v t="$total" 'BEGIN { exit !(t > 0 && u <= 0.05 * t) }'; echo $?) \
	"at most 5% of the samples without known callers ($unknown of $total)"

# --no-learn: CIDs only; nothing learned, nothing in the path maps.
nl=$tmp/nolearn.db
out=$("$ICPPD" record --no-learn -d "$nl" -- "$PROGS/heights-nofp" 10 2>&1 >/dev/null)
is $? 0 "--no-learn: exit 0"
is "$(q "SELECT count(*) FROM path_maps" "$nl")" 0 "--no-learn: no path map"
is "$(q "SELECT learned_paths IS NULL FROM v_runs" "$nl")" 1 "--no-learn: v_runs shows no learning"
is "$(q "SELECT count(*) FROM learn_windows" "$nl")" 0 "--no-learn: no learning windows"
case $out in *learning:*) ok 1 "--no-learn: no learning line" ;; *) ok 0 "--no-learn: no learning line" ;; esac

# A phase training never saw: trained on via_a alone, recorded through
# via_c.  One record explains via_c with its real caller.
ph=$tmp/phase.db
"$ICPPD" train $TRAIN_OPTS -q -d "$ph" -- "$PROGS/collide" a 40 >/dev/null
"$ICPPD" record -q -d "$ph" -- "$PROGS/collide" c 40 >/dev/null
text=$("$ICPPD" report -d "$ph" --k 1 --min-percent 0)
printf '%s\n' "$text" | grep -A1 '^ .* via_c$' | grep -q '<- main'
ok $? "the untrained phase: via_c <- main after one record"
case $text in *"unknown callers of via_c"*) ok 1 "via_c has no unknown-callers frame" ;;
	*) ok 0 "via_c has no unknown-callers frame" ;; esac
is "$(q "SELECT count(*) FROM path_maps WHERE run_id = 0" "$ph")" 1 \
	"what record learned joined the one training map of the build"

# A run's own learning splits its CIDs: target()'s CID in collide has a
# candidate through via_a and one through via_b (equal frames).
# Training measured via_b seven times in eight; the run goes through
# via_a seven times in eight.  The map's counts (training and the run
# merged) would give via_a under half of target's samples; the paths
# the run's learning unwound give it about seven eighths.
own=$tmp/own.db
"$ICPPD" train $TRAIN_OPTS -q -d "$own" -- "$PROGS/collide" abbbbbbb 60 >/dev/null
"$ICPPD" record -q --learn-freq 1000 -d "$own" -- "$PROGS/collide" aaaaaaab 60 >/dev/null
orun=$(q "SELECT max(id) FROM runs" "$own")
ok $([ "$(q "SELECT coalesce(sum(samples), 0) FROM run_learned WHERE run_id = $orun" "$own")" -gt 0 ]; echo $?) \
	"the paths a run learned are kept as its own (run_learned)"
folded=$("$ICPPD" report -d "$own" --run "$orun" -f folded --no-demangle 2>/dev/null)
share=$(printf '%s\n' "$folded" | awk '
	/;target [0-9.]+$/ { t += $NF; if ($0 ~ /;via_a;target /) a += $NF }
	END { if (t > 0) printf "%.3f", a / t; else print 0 }')
ok $(awk -v s="$share" 'BEGIN { exit !(s > 0.75 && s < 0.97) }'; echo $?) \
	"target's samples split as the run's own learning saw them: via_a $share (true 0.875)"
out=$("$ICPPD" report -d "$own" --run "$orun" 2>/dev/null)
contains "$out" "a next run would have about" \
	"the report's header estimates the weight on paths never learned ..."
contains "$out" "of its samples on paths not learned yet (Good-Turing)" \
	"... as an estimate of a next run, not of this one's profile"

# A sample unwound whole is an exact sample: at the sampling rate the
# learning event takes the main event's turn, its samples are the run's,
# and each one's own path counts as it is.  Trained on via_a and via_b
# alike, then recorded through via_a seven times in eight, in under a
# second of CPU (one burst throughout): target's split in the report is
# the unwound paths' split exactly, nothing apportioned.
ex=$tmp/exact.db
"$ICPPD" train $TRAIN_OPTS -q -d "$ex" -- "$PROGS/collide" ab 60 >/dev/null
"$ICPPD" record -q -d "$ex" -- "$PROGS/collide" aaaaaaab 60 >/dev/null
erun=$(q "SELECT max(id) FROM runs" "$ex")
learned() {	# learned CALLER: the run's samples unwound to CALLER -> target
	q "SELECT coalesce(sum(rl.samples), 0) FROM run_learned rl
	   JOIN v_paths p ON p.node_id = rl.node_id
	   WHERE rl.run_id = $erun AND p.path LIKE '%;$1;target'" "$ex"
}
folded=$("$ICPPD" report -d "$ex" --run "$erun" -f folded --exact --no-demangle 2>/dev/null)
shown() {	# shown CALLER: the report's samples of CALLER -> target
	printf '%s\n' "$folded" | awk -v c=";$1;target" '
		index($0, c " ") { s += $NF } END { printf "%.0f", s }'
}
samples=$(q "SELECT samples FROM runs WHERE id = $erun" "$ex")
ok $([ "$(learned via_a)" -gt 0 ] && [ "$(learned via_b)" -gt 0 ]; echo $?) \
	"the run's own paths reach target through both callers ($(learned via_a), $(learned via_b))"
# a sample whose copy did not unwind whole is apportioned: the margin
unwhole=$((samples - $(q "SELECT sum(rl.samples) FROM run_learned rl
	JOIN v_paths p ON p.node_id = rl.node_id WHERE rl.run_id = $erun" "$ex")))
for c in via_a via_b; do
	d=$(($(shown $c) - $(learned $c)))
	ok $([ "${d#-}" -le "$unwhole" ]; echo $?) \
		"$c -> target: the report shows the $(learned $c) samples unwound to it ($(shown $c); $unwhole not whole)"
done
# only the samples not unwound whole may be apportioned (all of them
# are whole when the run is one burst; under a loaded machine's longer
# wall time the burst may end before the run)
amb=$(q "SELECT printf('%.0f', coalesce(sum(samples), 0)) FROM v_inferred WHERE run_id = $erun AND how = 'ambiguous'" "$ex")
ok $([ "$amb" -le "$unwhole" ]; echo $?) \
	"no sample unwound whole apportioned among candidates ($amb apportioned, $unwhole not whole)"

counter() {	# counter NAME DB: the run's counter
	q "SELECT value FROM v_run_counters WHERE name = '$1'" "$2"
}

# Fragments: a stack deeper than a first record's copy (deep() puts a
# 64 KiB frame under deep_leaf).  The samples the copy cut short still
# give their innermost frames, each with its height: the first record's
# report shows deep_leaf <- deep, with deep's callers unknown, instead
# of nothing above deep_leaf.
fr=$tmp/frag.db
"$ICPPD" record -q -d "$fr" -- "$PROGS/heights-nofp" 20 deep 64 >/dev/null
ok $([ "$(counter unwind.truncated "$fr")" -gt 0 ]; echo $?) \
	"the first record's copies were cut short ($(counter unwind.truncated "$fr") samples)"
is "$(q "SELECT count(*) FROM v_path_maps WHERE kind = 'fragments' AND samples > 0" "$fr")" 1 \
	"their innermost frames are kept, a map of fragments"
is "$(q "SELECT count(*) FROM v_paths WHERE function = 'deep_leaf'" "$fr")" 0 \
	"... never passed off as whole paths"
folded=$("$ICPPD" report -d "$fr" -f folded 2>/dev/null | grep 'deep_leaf ')
ok $([ -n "$folded" ] && ! printf '%s\n' "$folded" | grep -qv ';deep;deep_leaf '; echo $?) \
	"every deep_leaf stack ends deep;deep_leaf"
# deep's callers are unknown, with its height; or, where the report read
# the binaries' calls (it does for a sample no path explains: under
# load, one in the dynamic linker's _dl_fixup), main, the call at
# deep's height, shown not certain (~)
above=$("$ICPPD" report -d "$fr" --k 2 2>/dev/null | grep -A2 ' deep_leaf$' | sed -n 3p)
ok $(printf '%s\n' "$above" | grep -Eq '<- \[unknown callers of deep at height [0-9]+\]|<- main +~'; echo $?) \
	"... above deep, its callers unknown, with its height, or main not certain ($above)"

# Copies that grow: a stack of 32 KiB (a 32 KiB frame under deep_leaf),
# deeper than a first record's 16 KiB copy but within the kernel's
# limit, which the learner copies once its samples are cut short.  The
# first record itself gets deep_leaf's whole path, where it gave only
# fragments before; a shallow program's copies stay small.
dg=$tmp/deepen.db
out=$("$ICPPD" record -d "$dg" -- "$PROGS/heights-nofp" 300 deep 32 2>&1 >/dev/null)
contains "$out" "stack copies grow to 65528 bytes" "a first record's copies grow once cut short"
is "$(counter learn.stack_bytes "$dg")" 65528 "... to the kernel's limit (learn.stack_bytes)"
# in rings of their own (test_session checks that they wait there):
# recorder.copied counts the records copied out, a few that wrapped
# a ring's end or were read while a flush wrote
copied=$(counter recorder.copied "$dg")
ok $([ -n "$copied" ] && [ "$copied" -le $(($(counter learn.samples "$dg") / 3)) ]; echo $?) \
	"... few of its records copied out of the rings (recorder.copied $copied)"
ok $([ "$(q "SELECT count(*) FROM v_paths WHERE function = 'deep_leaf'" "$dg")" -ge 1 ]; echo $?) \
	"deep_leaf's whole path learned in the first record"
deep=$("$ICPPD" report -d "$dg" -f folded --k inf 2>/dev/null |
	awk '/;main;deep;deep_leaf [0-9.]+$/ { t += $NF } END { printf "%d\n", t }')
ok $([ "$deep" -ge "$(min_samples 300)" ]; echo $?) \
	"... and its samples under main -> deep -> deep_leaf ($deep)"
is "$(counter learn.stack_bytes "$ex")" 16384 "a shallow program's copies stay at 16 KiB"

# A program that learns thousands of path nodes a second (as the first
# record of clang++ does) is flushed once a second, the rings read by a
# thread of their own while a flush writes: a flush of the first
# second's nodes runs for tens of ms (53 ms for clang++'s 15k), most of
# what the rings hold at 1000 Hz once the stack copies grow, and longer
# where the disk is slow (test_recorder checks the reading itself, on a
# flush that waits a second).  2500 ms of CPU: about 2500 samples, each
# on one of 2^24 paths 48 frames deep, 20,000 nodes a second.  A flush
# that stalled the reading lost a ring's worth (60 samples and more);
# the margin is for a machine so loaded that the recorder itself waits.
pdb=$tmp/paths.db
"$ICPPD" record -q -d "$pdb" -- "$PROGS/paths" 2500 >/dev/null 2>&1
is $? 0 "record of a program whose paths are nearly all new: exit 0"
nodes=$(q "SELECT count(*) FROM path_nodes" "$pdb")
ok $([ "${nodes:-0}" -ge 40000 ]; echo $?) "it learns thousands of path nodes ($nodes)"
ok $([ "$(counter recorder.flushes "$pdb")" -ge 3 ]; echo $?) \
	"... flushed once a second and at the end ($(counter recorder.flushes "$pdb") flushes)"
lost=$(q "SELECT lost FROM runs" "$pdb")
taken=$(q "SELECT samples FROM runs" "$pdb")
ok $([ "${lost:-1}" -le $((${taken:-0} / 100)) ] && [ "${taken:-0}" -ge "$(min_samples 2500)" ]; echo $?) \
	"... no sample lost to the flushes ($lost lost of $taken; want at most 1 %)"

# Records after the first: a record adds the CIDs its paths explain to
# its program's known_cids, and the next record of the program reads
# them, so a leaf copy of a CID an earlier run explained is left to the
# stored paths as one this run explained is (--leaf-known 1000000:
# none unwound).  The first record unwinds each CID's first copy; the
# second, none of a CID the first explained, and its report still has
# the call paths.  Another program reads none of them.
kn=$tmp/known.db
rc() {	# rc RUN NAME: the run's counter in $kn
	q "SELECT coalesce(max(value), 0) FROM v_run_counters WHERE run_id = $1 AND name = '$2'" "$kn"
}
"$ICPPD" record -q -d "$kn" --learn-freq 1 --leaf-known 1000000 -- "$PROGS/heights-nofp" 60 >/dev/null 2>&1
keys=$(q "SELECT coalesce(sum(length(k.cids) / 8), 0) FROM known_cids k
	JOIN modules m ON m.id = k.program_id WHERE m.path LIKE '%/heights-nofp'" "$kn")
ok $([ "$keys" -gt 0 ]; echo $?) "a record stores the CIDs its paths explain ($keys)"
is "$(rc 1 known.stored_cids)" 0 "the first record read none"
ok $([ "$(rc 1 leaf.whole)" -gt 0 ]; echo $?) "it unwound its CIDs' first copies ($(rc 1 leaf.whole))"
out=$("$ICPPD" record -d "$kn" --learn-freq 1 --leaf-known 1000000 -- "$PROGS/heights-nofp" 60 2>&1 >/dev/null)
is "$(rc 2 known.stored_cids)" "$keys" "the second record read them all"
contains "$out" "learning: $keys identifiers that earlier runs of these programs explained" \
	"... and its summary says so"
cids=$(q "SELECT sum(samples) FROM cid_samples WHERE run_id = 2" "$kn")
ok $([ "$(rc 2 known.stored_hits)" -gt 0 ] && [ $(($(rc 2 leaf.known) * 10)) -ge $((cids * 9)) ]; echo $?) 	"its copies of the CIDs they explain left to the stored paths ($(rc 2 leaf.known) of $cids; $(rc 2 known.stored_hits) answered by them alone)"
ok $([ $(($(rc 2 leaf.whole) * 2)) -le "$(rc 1 leaf.whole)" ]; echo $?) 	"... unwinding at most half the first's ($(rc 2 leaf.whole) against $(rc 1 leaf.whole))"
folded=$("$ICPPD" report -d "$kn" --run 2 --format folded --k inf 2>/dev/null)
contains "$folded" ";main;path_b;leaf " "the second's report: main -> path_b -> leaf"
contains "$folded" ";main;recurse;recurse;recurse " "... and the recursion"
precise=$(q "SELECT round(100 * precise, 1) FROM v_inference_summary WHERE run_id = 2" "$kn")
ok $(awk -v p="${precise:-0}" 'BEGIN { exit !(p >= 95) }'; echo $?) \
	"... its samples precise from the stored paths: $precise%"
"$ICPPD" record -q -d "$kn" --learn-freq 1 -- "$PROGS/collide" ab 20 >/dev/null 2>&1
is "$(rc 3 known.stored_cids)" 0 "another program reads none of them"

# Learning keeps going while it finds paths the map lacks: dispatch's
# phases reach work() through a new handler every 400 ms of CPU, its
# CIDs all known after the first, and the learning event stays on; the
# steady program below drops to the trickle.
on_ran() {	# on_ran DB: "ON RAN", ms the learning event was on, of the run
	echo "$(counter learn.on_ms "$1") $(q "SELECT CAST(duration_s * 1000 AS INTEGER) FROM v_runs" "$1")"
}
ph8=$tmp/phases.db
"$ICPPD" record -q -d "$ph8" -- "$PROGS/dispatch" phases 64 50 >/dev/null
set -- $(on_ran "$ph8")
ok $([ "${1:-0}" -ge $((${2:-0} * 8 / 10)) ]; echo $?) \
	"new paths to known CIDs keep the learning event on ($1 of $2 ms)"
ok $([ "$(counter learn.new_paths "$ph8")" -ge 8 ]; echo $?) \
	"... each phase's new path counted (learn.new_paths)"

# Bursts: a program whose CIDs stay the same for seconds (4 s of CPU in
# one function) is learned early; then the learning event trickles.
sp=$tmp/spin.db
"$ICPPD" record -q -d "$sp" -- "$PROGS/heights-nofp" 20 spin 4 >/dev/null 2>&1
# (its "CPU ..." lines every 100 ms go through libc: a path first seen
# late restarts a burst, rightly; 16 runs here were on 31-56 % of the
# run, one of them 85 %, one of a clean clone's suite under load 92 %,
# and a learner that never trickles is on 100 %: a second run where
# the first was on that long, which such a learner fails again)
set -- $(on_ran "$sp")
if [ "${1:-999999}" -ge $((${2:-0} * 9 / 10)) ]; then
	rm -f "$sp" "$sp-wal" "$sp-shm"
	"$ICPPD" record -q -d "$sp" -- "$PROGS/heights-nofp" 20 spin 4 >/dev/null 2>&1
	set -- $(on_ran "$sp")
fi
ok $([ "${1:-999999}" -lt $((${2:-0} * 9 / 10)) ]; echo $?) \
	"the learning event was on for less than 90% of a steady run ($1 of $2 ms)"
ok $([ "$(counter learn.bursts "$sp")" -ge 1 ]; echo $?) \
	"at least one burst"
# The learner and the main event take turns: each stretch of CPU time
# is sampled once, by one or the other (neither both nor none), and the
# learner's samples are among the run's.
set -- $(q "SELECT samples FROM runs" "$sp") \
	$(q "SELECT (user_ns + system_ns) / 1000000 FROM runs" "$sp") \
	$(counter learn.samples "$sp")
ok $(awk -v s="$1" -v ms="$2" 'BEGIN { exit !(s > 0.75 * ms && s < 1.1 * ms) }'; echo $?) \
	"one sample per ms of CPU at 1000 Hz, bursts or not ($1 samples, $2 ms)"
ok $([ "${3:-0}" -gt 0 ] && [ "${3:-0}" -lt "$1" ]; echo $?) \
	"the learner's samples are some of the run's ($3 of $1)"
done_testing
