#!/bin/sh
# icppd train: the path map holds exactly the paths the test programs
# take, with the heights they report themselves: recursion, a function
# pointer, no frame pointers, threads, a shared library; training runs
# of one build merge; truncated stacks are counted, not learned.
. "$TESTS_SRCDIR/e2e/lib.sh"
require_perf

# Nodes of the program's own functions, as paths from main (or from the
# thread start routine), one per line, sorted; truth.h's helpers, which
# GCC may leave out of line, are not the program's paths.
# (a sample in a PLT stub, PROGRAM+0x..., is the program's too, but seen
# once in a loaded run of the suite: the exact sets leave it out)
own_paths() {	# own_paths PROGRAM FROM EXCLUDED...
	prog=$1 from=$2
	shift 2
	q "SELECT DISTINCT substr(path, instr(path || ';', ';$from;') + 1) FROM v_paths
		WHERE program LIKE '%/$prog' AND module LIKE '%/$prog'
		AND instr(path || ';', ';$from;') > 0
		AND function NOT LIKE 'truth%' AND instr(path, ';truth') = 0
		AND function NOT LIKE '$prog+0x%'
		AND function NOT IN ('_start' $(for f; do printf ", '%s'" "$f"; done))
		ORDER BY 1" | tr '\n' ' '
}

# Every (function, height) the program reported is in the path map, and
# no node of those functions has any other height.
check_heights() {	# check_heights PROGRAM LABEL
	missing=$(q "SELECT group_concat(DISTINCT t.function || '@' || t.height) FROM truth t
		WHERE NOT EXISTS (SELECT 1 FROM v_paths p WHERE p.program LIKE '%/$1'
		AND p.function = t.function AND p.height = t.height)")
	is "$missing" "" "$2: every reported (function, height) is in the path map"
	wrong=$(q "SELECT count(*) FROM v_paths p WHERE p.program LIKE '%/$1'
		AND p.function IN (SELECT function FROM truth)
		AND NOT EXISTS (SELECT 1 FROM truth t WHERE t.function = p.function
		AND t.height = p.height)")
	is "$wrong" 0 "$2: no path-map node of those functions at another height"
}

# Each burn is 20 ms of CPU: 20 samples at 1000 Hz, and every path
# needs one (the ring holds a second of samples: none is lost).
ms=20
expected_heights="main main;indirect main;path_a main;path_a;work main;path_b main;path_b;leaf main;path_b;work main;recurse main;recurse;recurse main;recurse;recurse;recurse main;recurse;recurse;recurse;recurse "

for variant in nofp fp; do
	out=$(TRUTH_FILE=$tmp/truth-$variant "$ICPPD" train $TRAIN_OPTS -d "$db" -- "$PROGS/heights-$variant" $ms 2>&1)
	is $? 0 "heights-$variant: train exits with the program's status"
	contains "$out" " 0 truncated" "heights-$variant: no stack copy truncated"
	# Startup samples can fail to unwind: one or two of 175 with both
	# CPUs busy (more page faults charged to the dynamic loader, where
	# the unresolved samples of those runs all were), none in 40 quiet
	# runs.  The program's own paths are checked exactly below.
	# (not $failed: lib.sh counts the failed tests in it)
	unwinds_failed=$(printf '%s\n' "$out" | sed -n 's/.* truncated ([^)]*), \([0-9]*\) failed.*/\1/p')
	ok $([ "${unwinds_failed:-99}" -le 5 ]; echo $?) "heights-$variant: at most 5 unwinds (startup) failed ($unwinds_failed)"
	contains "$out" "path map of $PROGS" "heights-$variant: summary names the path map"
	is "$(own_paths heights-$variant main)" "$expected_heights" \
		"heights-$variant: exactly the paths the program takes"
	load_truth "$tmp/truth-$variant"
	check_heights "heights-$variant" "heights-$variant"
	run=$(last_run)
	is "$(q "SELECT kind || ' ' || lost FROM v_runs WHERE run_id = $run")" "train 0" \
		"heights-$variant: run kind is train, no sample lost"
	is "$(q "SELECT value >= (SELECT resolved FROM v_runs WHERE run_id = $run) - 5 FROM v_run_counters
		WHERE run_id = $run AND name = 'unwind.complete'")" 1 \
		"heights-$variant: every sample with a CID unwound, but for at most 5 (startup)"
	is "$(q "SELECT count(*) FROM v_paths WHERE program LIKE '%/heights-$variant' AND path LIKE '_start;__libc_start_main%;%main;path_b;work'")" 1 \
		"heights-$variant: whole path from _start, through libc, to work"
done

# Every node is a path; a CID's candidates are the nodes with its
# (function, height); the two builds keep two maps.
is "$(q "SELECT count(*) FROM v_path_maps WHERE kind = 'train'")" 2 "two builds, two path maps"
is "$(q "SELECT count(*) FROM v_path_cids c JOIN v_path_maps m USING (map_id)
	WHERE m.program LIKE '%/heights-nofp' AND c.function = 'work'")" 2 \
	"work has two CIDs (two heights), one path each"

# A second training run of the same build merges into the same map.
before=$(q "SELECT samples FROM v_path_maps WHERE program LIKE '%/heights-nofp'")
"$ICPPD" train $TRAIN_OPTS -q -d "$db" -- "$PROGS/heights-nofp" 5 >/dev/null
is "$(q "SELECT count(*) FROM v_path_maps WHERE program LIKE '%/heights-nofp'")" 1 "second training run: still one map"
after=$(q "SELECT samples FROM v_path_maps WHERE program LIKE '%/heights-nofp'")
ok $([ "$after" -gt "$before" ]; echo $?) "second training run adds its samples ($before -> $after)"
is "$(own_paths heights-nofp main)" "$expected_heights" "merged map: still exactly the program's paths"
# The stripped copy is the same build (same build-id): the same map.
"$ICPPD" train $TRAIN_OPTS -q -d "$db" -- "$PROGS/heights-stripped" 3 >/dev/null
is "$(q "SELECT count(*) FROM v_path_maps WHERE kind = 'train'")" 2 "stripped copy shares the build's map"

# Threads: each thread's path starts at clone3 and uses its own base.
TRUTH_FILE=$tmp/truth-threads "$ICPPD" train $TRAIN_OPTS -q -d "$db" -- "$PROGS/threads" $ms
load_truth "$tmp/truth-threads"
check_heights threads threads
is "$(q "SELECT count(DISTINCT path) FROM v_paths WHERE program LIKE '%/threads'
	AND function = 'thread_work' AND path LIKE '%clone3;start_thread;start;nest%'")" 3 \
	"threads: thread_work under clone3/start_thread at three nesting depths"
is "$(own_paths threads main)" "main main;main_work " "threads: main thread paths"

# Shared library: frames in libwork.so, called from the executable.
# (A sample in its PLT, unnamed "libwork.so+0x1020", now and then: not
# one of the library's functions; nor is one at exit in its crtstuff,
# _dl_fini -> __do_global_dtors_aux, once in a clean clone's suite.)
TRUTH_FILE=$tmp/truth-uselib "$ICPPD" train $TRAIN_OPTS -q -d "$db" -- "$PROGS/uselib" $ms
load_truth "$tmp/truth-uselib"
check_heights uselib uselib
is "$(q "SELECT group_concat(p, ' ') FROM (SELECT DISTINCT substr(path, instr(path, ';main;') + 1) p
	FROM v_paths WHERE program LIKE '%/uselib' AND module LIKE '%/libwork.so'
	AND instr(path, ';main;') > 0
	AND function <> 'truth' AND function NOT LIKE '%+0x%' ORDER BY 1)")" "main;lib_outer main;lib_outer;lib_work main;lib_work" \
	"uselib: library paths, direct and through lib_outer"

# Signal frames: from the handler through glibc's __restore_rt (CFI
# marked 'S') into the function the signal interrupted, up to _start.
# (on_prof calls in_handler in tail position: no frame of its own.)
# 40 signals, 1 ms of CPU in the handler each: 40 samples there.
TRUTH_FILE=$tmp/truth-sig "$ICPPD" train $TRAIN_OPTS -q -d "$db" -- "$PROGS/sigframe" 40
load_truth "$tmp/truth-sig"
check_heights sigframe sigframe
is "$(q "SELECT count(DISTINCT context_id) FROM v_paths WHERE program LIKE '%/sigframe'
	AND function = 'in_handler' AND path LIKE '_start;%;main;interrupted;%;in_handler'")" 1 \
	"sigframe: in_handler's path runs through the signal frame to _start"
is "$(q "SELECT count(*) FROM v_paths WHERE program LIKE '%/sigframe' AND function = 'in_handler'
	AND path NOT LIKE '_start;%;main;interrupted;%;in_handler'")" 0 \
	"sigframe: no other path for in_handler"

# A stack copy too short for the stack: counted, nothing learned.
out=$("$ICPPD" train $TRAIN_OPTS -d "$tmp/short.db" --stack-size 64 -- "$PROGS/heights-nofp" 10 2>&1 >/dev/null)
run=$(q "SELECT max(run_id) FROM v_runs" "$tmp/short.db")
trunc=$(q "SELECT value FROM v_run_counters WHERE run_id = $run AND name = 'unwind.truncated'" "$tmp/short.db")
ok $([ "$trunc" -gt 0 ]; echo $?) "--stack-size 64: truncated samples counted ($trunc)"
contains "$out" "$trunc truncated" "--stack-size 64: summary says how many were truncated"
is "$(q "SELECT count(*) FROM v_paths WHERE function = 'recurse'" "$tmp/short.db")" 0 \
	"--stack-size 64: no partial path of the deep recursion passed off as whole"

# A stack deeper than the default copy: deep_leaf runs under 24 KiB.
# The first run (default copy) truncates its samples; the next run of
# the build copies enough for the heights it sampled, and unwinds them.
deep_trunc() {	# deep_trunc DB: truncated samples of the latest run
	q "SELECT coalesce(max(value), 0) FROM v_run_counters WHERE name = 'unwind.truncated'
		AND run_id = (SELECT max(run_id) FROM v_runs)" "$1"
}
"$ICPPD" train $TRAIN_OPTS -q -d "$tmp/deep.db" -- "$PROGS/heights-nofp" 30 deep 24 >/dev/null
trunc=$(deep_trunc "$tmp/deep.db")
ok $([ "$trunc" -ge "$(min_samples 30)" ]; echo $?) \
	"deep stack, default copy: deep_leaf's samples truncated ($trunc)"
out=$("$ICPPD" train $TRAIN_OPTS -d "$tmp/deep.db" -- "$PROGS/heights-nofp" 30 deep 24 2>&1 >/dev/null)
size=$(printf '%s\n' "$out" | sed -n 's/^icppd: stack copies of \([0-9]*\) bytes: earlier runs of this build sampled stacks [0-9]* bytes deep.*/\1/p')
ok $([ "${size:-0}" -gt 24576 ] && [ "$size" -le 65528 ]; echo $?) \
	"the next run copies more, and says why (${size:-none} bytes)"
contains "$out" "(stack copies of ${size:-?} bytes)" "the summary gives the copy it used"
# (A sample may still be truncated while deep() touches its pages: the
# kernel's copy ends at the first page not touched yet.)
again=$(deep_trunc "$tmp/deep.db")
ok $([ "$again" -lt $((trunc / 3)) ]; echo $?) \
	"the larger copy unwinds deep_leaf: truncated $trunc -> $again"
is "$(q "SELECT count(*) FROM v_paths WHERE function = 'deep_leaf'" "$tmp/deep.db")" 1 \
	"deep_leaf's path learned"
out=$("$ICPPD" train $TRAIN_OPTS -d "$tmp/deep.db" --stack-size 8192 -- "$PROGS/heights-nofp" 1 2>&1 >/dev/null)
contains "$out" "(stack copies of 8192 bytes)" "--stack-size given: used as given"
# A launcher's copies grow with the stacks of the programs it runs:
# forker burns 30 ms of its own, and its child execs the deep program.
"$ICPPD" train $TRAIN_OPTS -q -d "$tmp/launch.db" -- "$PROGS/forker" 30 "$PROGS/heights-nofp" 30 deep 24 >/dev/null
out=$("$ICPPD" train $TRAIN_OPTS -d "$tmp/launch.db" -- "$PROGS/forker" 30 "$PROGS/heights-nofp" 30 deep 24 2>&1 >/dev/null)
size=$(printf '%s\n' "$out" | sed -n 's/^icppd: stack copies of \([0-9]*\) bytes: .*/\1/p')
ok $([ "${size:-0}" -gt 24576 ]; echo $?) \
	"a launcher's next run copies as deep as its child's stacks (${size:-none} bytes)"

is "$(integrity)" ok "database passes integrity_check"
done_testing
