#!/bin/sh
# Leaf copies: while the learning event runs below the sampling rate,
# every sample copies the innermost --leaf-stack bytes of its stack.  A
# shallow program's samples unwind whole from them, so its call paths
# show though the learner took next to nothing, and once the paths
# explain a CID by more than one sample only one of its copies in
# --leaf-known is unwound (above --leaf-freq, once they explain it); a
# deep frame's samples give their innermost frames (a fragment) exact;
# a fragment whose frames above one a learned whole path reaches are
# that path's joins it; --leaf-stack 0 copies nothing; above
# --leaf-freq every sample copies less, the bytes a second those of
# --leaf-freq copies; the default record, whose learner takes the main
# event's turn, has none at 1000 Hz, and above --leaf-freq's rate every
# sample one cut to fit.
. "$TESTS_SRCDIR/e2e/lib.sh"
require_perf

# 60 ms of CPU per burn: 60 samples per path at 1000 Hz; a learner at
# 1 Hz takes one sample or none in the whole run.
db=$tmp/leaf.db
out=$("$ICPPD" record -d "$db" --learn-freq 1 -- "$PROGS/heights-nofp" 60 2>&1 >/dev/null)
is $? 0 "record --learn-freq 1: exit 0"
contains "$out" "leaf copies: " "the summary says what the leaf copies gave"
counter() {	# counter RUN NAME [DB]
	q "SELECT coalesce(max(value), 0) FROM v_run_counters WHERE run_id = $1 AND name = '$2'" "${3:-$db}"
}
run=$(last_run)
cids=$(q "SELECT sum(samples) FROM cid_samples WHERE run_id = $run")
is "$(counter "$run" leaf.samples)" "$cids" "every sample with a CID carried a leaf copy ($cids)"
whole=$(counter "$run" leaf.whole)
known=$(counter "$run" leaf.known)
# its few CIDs are explained after their first copies: of those, one
# copy in 8 (--leaf-known's default) is unwound, once more than one
# sample went through its path: one copy of each CID more
ok $([ $(((whole + known) * 10)) -ge $((cids * 9)) ]; echo $?) \
	"a shallow program's leaf copies unwind whole or explain a known CID ($whole and $known of $cids)"
distinct=$(q "SELECT count(*) FROM (SELECT DISTINCT function_id, height FROM cid_samples WHERE run_id = $run)")
unsettled=$(counter "$run" leaf.unsettled)
ok $([ "$unsettled" -ge 1 ] && [ "$unsettled" -le "$distinct" ]; echo $?) \
	"a known CID seen once: its next copy unwound, one a CID at most ($unsettled of $distinct CIDs)"
contains "$out" ", $unsettled unwound though they did, by one sample alone" \
	"... which the summary says"
# a whole copy explains its CID: only a CID's first copy is of one no
# path explained yet (a stray copy that does not unwind, in the loader
# or at exit, leaves its CID unexplained for the next)
tail=$(counter "$run" leaf.unknown)
ok $([ "$tail" -ge 1 ] && [ "$tail" -le $((distinct + 2)) ]; echo $?) \
	"copies of a CID no path explained yet: about one a CID ($tail of $distinct CIDs)"
contains "$out" ", $tail of those of an identifier no path explained yet;" \
	"... which the summary says"
ok $([ $((known * 4)) -ge "$cids" ] && [ $((whole * 20)) -ge "$cids" ]; echo $?) \
	"copies of known CIDs mostly not unwound, one in 8 still ($known not unwound, $whole whole)"
ok $([ "$(counter "$run" learn.samples)" -le 3 ]; echo $?) \
	"the learner took next to nothing ($(counter "$run" learn.samples))"
# a sample whose own copy gave its whole path is explained
unknown=$(counter "$run" learn.unknown_cids)
ok $([ $((unknown * 20)) -le "$cids" ]; echo $?) \
	"samples explained by their own copies: $unknown of $cids unexplained"
folded=$("$ICPPD" report -d "$db" --format folded --k inf 2>/dev/null)
contains "$folded" ";main;path_b;leaf " "call path main -> path_b -> leaf from leaf copies"
contains "$folded" ";main;path_a;work " "call path main -> path_a -> work"
contains "$folded" ";main;recurse;recurse;recurse " "recursion"
precise=$(q "SELECT round(100 * precise, 1) FROM v_inference_summary WHERE run_id = $run")
ok $(awk -v p="${precise:-0}" 'BEGIN { exit !(p >= 95) }'; echo $?) \
	"the samples' own paths and the known CIDs': $precise% precise"
# --leaf-known 1: every copy unwound, none left to its CID
"$ICPPD" record -q -d "$db" --learn-freq 1 --leaf-known 1 -- "$PROGS/heights-nofp" 60 >/dev/null 2>&1
run=$(last_run)
cids=$(q "SELECT sum(samples) FROM cid_samples WHERE run_id = $run")
whole=$(counter "$run" leaf.whole)
ok $([ $((whole * 10)) -ge $((cids * 9)) ]; echo $?) \
	"--leaf-known 1: a shallow program's leaf copies unwind whole ($whole of $cids)"
is "$(counter "$run" leaf.known)" 0 "--leaf-known 1: no copy left to its CID"
# (a stray sample, in the loader or at exit, may bring a CID of its own)
tail2=$(counter "$run" leaf.unknown)
ok $([ $((tail2 * 2)) -le "$tail" ]; echo $?) \
	"a second record: the first's paths explain its CIDs (known_cids): $tail2 copies of a CID no path explained, $tail in the first"

# A frame of 8 KiB: deep_leaf's copies end in deep's frame, and give
# those two frames exact.
"$ICPPD" record -q -d "$db" --learn-freq 1 -- "$PROGS/heights-nofp" 60 deep 8 >/dev/null 2>&1
run=$(last_run)
ok $([ "$(counter "$run" leaf.fragments)" -ge "$(min_samples 60)" ]; echo $?) \
	"a deep frame's samples give fragments ($(counter "$run" leaf.fragments))"
folded=$("$ICPPD" report -d "$db" --run "$run" --format folded --k inf 2>/dev/null)
contains "$folded" ";deep;deep_leaf " "its innermost frames: deep -> deep_leaf"
is "$(counter "$run" leaf.composed)" 0 "no whole path through deep learned: none joins one"
# With the learner at 50 Hz (3 of its samples in 60 ms of deep_leaf,
# each copying the whole stack, during the burst of new CIDs the run's
# start begins and each new phase prolongs), deep_leaf's path is learned
# whole early, and the copies unwound after (one in 8) end in deep's
# frame, which that path reaches with the same call site: they join it.
db2=$tmp/leaf2.db
"$ICPPD" record -q -d "$db2" --learn-freq 50 -- "$PROGS/heights-nofp" 60 deep 8 >/dev/null 2>&1
run=$(last_run "$db2")
composed=$(counter "$run" leaf.composed "$db2")
fragments=$(counter "$run" leaf.fragments "$db2")
ok $([ "$composed" -ge 1 ] && [ "$composed" -le "$fragments" ]; echo $?) \
	"copies ending in deep's frame join the learned path ($composed of $fragments)"
folded=$("$ICPPD" report -d "$db2" --run "$run" --format folded --k inf 2>/dev/null)
contains "$folded" ";main;deep;deep_leaf " "deep_leaf's whole path"
is "$(printf '%s\n' "$folded" | grep -c 'unknown callers\];deep;deep_leaf ')" 0 \
	"no sample of it under unknown callers"

# Above --leaf-freq, every sample copies less: at 4000 Hz with
# --leaf-freq 500, 4096 bytes an eighth as often would be 512 a
# sample, under the least a cut copy takes (1024), every sample
# counted and carrying one.
out=$("$ICPPD" record -d "$db" -F 4000 --learn-freq 1 --leaf-freq 500 -- "$PROGS/heights-nofp" 100 2>&1 >/dev/null)
is $? 0 "record -F 4000 --leaf-freq 500: exit 0"
contains "$out" "innermost 1024 bytes of stack (--leaf-stack cut to --leaf-freq's bytes a second)" \
	"the summary says the copies were cut"
run=$(last_run)
cids=$(q "SELECT sum(samples) FROM cid_samples WHERE run_id = $run")
is "$(counter "$run" leaf.stack_bytes)" 1024 "leaf.stack_bytes: the cut copies' 1024"
is "$(counter "$run" leaf.samples)" "$cids" "every sample carried a cut copy"
is "$(counter "$run" leaf.unsettled)" 0 "cut copies: a known CID's unwound one in 8 however few samples its path had"
ok $([ "$cids" -ge "$(min_samples 900 4000)" ]; echo $?) \
	"the samples counted ($cids, nine burns of 100 ms at 4000 Hz)"
folded=$("$ICPPD" report -d "$db" --run "$run" --format folded --k inf 2>/dev/null)
contains "$folded" ";main;path_b;leaf " "their call paths from the copies' paths"
"$ICPPD" record -q -d "$db" -F 4000 --learn-freq 1 --leaf-freq 0 -- "$PROGS/heights-nofp" 20 >/dev/null 2>&1
run=$(last_run)
is "$(counter "$run" leaf.samples)" "$(q "SELECT sum(samples) FROM cid_samples WHERE run_id = $run")" \
	"--leaf-freq 0: every sample copies"

# Above 1000 Hz the default record learns beside the main event, leaf
# copies giving the innermost frames; above --leaf-freq's 2500 every
# sample's copy is cut to 2500 copies of 4096 bytes a second (at 4000
# Hz 2560 bytes) and the learner runs at 250 Hz; --learn-freq at the
# sampling rate takes its turn, every sample exact.
"$ICPPD" record -q -d "$db" -F 4000 -- "$PROGS/heights-nofp" 100 >/dev/null 2>&1
run=$(last_run)
cids=$(q "SELECT sum(samples) FROM cid_samples WHERE run_id = $run")
is "$(counter "$run" leaf.stack_bytes)" 2560 "the default record at 4000 Hz: copies of 2560 bytes"
is "$(counter "$run" leaf.samples)" "$cids" "... at every sample"
learned=$(counter "$run" learn.samples)
ok $([ "$learned" -gt 0 ] && [ $((learned * 4)) -le "$cids" ]; echo $?) \
	"... and the learner beside the main event, at 250 Hz ($learned of $cids samples: under a quarter)"
"$ICPPD" record -q -d "$db" -F 4000 --learn-freq 4000 -- "$PROGS/heights-nofp" 20 >/dev/null 2>&1
is "$(counter "$(last_run)" leaf.samples)" 0 "--learn-freq at the sampling rate: its turn, no leaf copies"

"$ICPPD" record -q -d "$db" --learn-freq 1 --leaf-stack 0 -- "$PROGS/heights-nofp" 20 >/dev/null 2>&1
is "$(counter "$(last_run)" leaf.samples)" 0 "--leaf-stack 0: no leaf copies"
"$ICPPD" record -q -d "$db" -- "$PROGS/heights-nofp" 20 >/dev/null 2>&1
is "$(counter "$(last_run)" leaf.samples)" 0 "the default record (learning at the sampling rate): none"
out=$("$ICPPD" record -d "$db" --learn-freq 1 --leaf-stack 16384 -- "$PROGS/heights-nofp" 20 2>&1 >/dev/null)
contains "$out" "no leaf copies: --leaf-stack 16384 is not less than" \
	"a leaf copy as large as the learner's: said, and none taken"
is "$(counter "$(last_run)" leaf.samples)" 0 "... none taken"

"$ICPPD" record -d "$db" --leaf-stack 100 -- true >/dev/null 2>&1
is $? 2 "--leaf-stack not a multiple of 8: usage error"
"$ICPPD" record -d "$db" --leaf-stack 40 -- true >/dev/null 2>&1
is $? 2 "--leaf-stack under 64: usage error"
"$ICPPD" record -d "$db" --leaf-freq 20000 -- true >/dev/null 2>&1
is $? 2 "--leaf-freq over 10000: usage error"
"$ICPPD" daemon --foreground -d "$db" --pid 1 --leaf-freq 20000 >/dev/null 2>&1
is $? 2 "daemon --leaf-freq over 10000: usage error"
out=$("$ICPPD" daemon --foreground -d "$db" --pid 1 --stack-size 16384 --leaf-stack 16384 2>&1)
is $? 2 "daemon --leaf-stack not less than --stack-size: usage error"
contains "$out" "--leaf-stack must be" "... saying what it must be"
done_testing
