#!/bin/sh
# What users' own tools read of icppd's exports.  Folded and pprof carry
# whole stacks and whole counts that add up to the run's samples, and
# the consumers read the same totals: speedscope's collapsed-stack parser
# (npm speedscope, run under node) and the Go pprof parser of go tool
# pprof, Parca and Pyroscope (Debian golang-github-google-pprof-dev).
# pprof carries its period, duration and mappings; C++ names are
# demangled; the text report is tidy.
. "$TESTS_SRCDIR/e2e/lib.sh"
require_perf

# collide ab: target's CID is ambiguous between via_a and via_b, so with
# --whole-chains its weight is apportioned in fractions.
db=$tmp/x.db
"$ICPPD" train $TRAIN_OPTS -q -d "$db" -- "$PROGS/collide" ab 40 >/dev/null
"$ICPPD" record -q -d "$db" -- "$PROGS/collide" ab 40 >/dev/null
run=$(last_run)
samples=$(q "SELECT sum(samples) FROM v_cids WHERE run_id = $run")
ok $([ "${samples:-0}" -ge "$(min_samples 160)" ]; echo $?) "collide sampled ($samples samples)"

"$ICPPD" report -d "$db" --whole-chains -f folded -o "$tmp/w.folded"
is $? 0 "folded written"
is "$(awk '$NF !~ /^[1-9][0-9]*$/' "$tmp/w.folded")" "" \
	"folded: every weight a whole count above 0"
is "$(awk '{ s += $NF } END { print s }' "$tmp/w.folded")" "$samples" \
	"folded: the counts add up to the run's samples"
is "$(grep ';target ' "$tmp/w.folded" | grep -v '^_start;' | head -1)" "" \
	"folded: whole stacks by default, from _start"
contains "$(cat "$tmp/w.folded")" "_start;__libc_start_main@@GLIBC_2.34;__libc_start_call_main;main;via_a;target " \
	"folded: target's whole stack through via_a"
k1=$("$ICPPD" report -d "$db" --whole-chains -f folded --k 1)
is "$(printf '%s\n' "$k1" | awk -F';' 'NF > 2')" "" "--k 1 still cuts to 2 frames"
"$ICPPD" report -d "$db" --whole-chains -f folded --exact -o "$tmp/e.folded"
ok $(awk -v n="$samples" '{ s += $NF } END { exit !(s > n - 0.01 && s < n + 0.01) }' \
	"$tmp/e.folded"; echo $?) "--exact: fractions that add up to the samples"
is "$(awk '$NF == 0' "$tmp/e.folded")" "" "--exact: no line of weight 0"
out=$("$ICPPD" report -d "$db" --exact 2>&1)
is $? 2 "--exact with text: usage error"

# speedscope, as npm installs it
cache=$(pwd)/tests/consumers
if [ ! -d "$cache/node_modules/speedscope" ] && command -v npm >/dev/null; then
	mkdir -p "$cache"
	npm install --prefix "$cache" --no-audit --no-fund --silent \
		speedscope@1.25.0 >"$tmp/npm.log" 2>&1
fi
if [ -d "$cache/node_modules/speedscope" ] && command -v node >/dev/null; then
	ss=$(node "$TESTS_SRCDIR/consumers/speedscope_check.mjs" \
		"$cache/node_modules/speedscope" "$tmp/w.folded" 2>&1)
	contains "$ss" "total $samples" "speedscope reads every sample"
	lines=$(wc -l <"$tmp/w.folded")
	contains "$ss" "kept $lines" "speedscope keeps every line ($lines)"
	ss=$(node "$TESTS_SRCDIR/consumers/speedscope_check.mjs" \
		"$cache/node_modules/speedscope" "$tmp/e.folded" 2>&1)
	contains "$ss" "lines $(wc -l <"$tmp/e.folded")" \
		"speedscope reads --exact files too (dropping fractional lines: why whole counts are the default)"
else
	for t in 1 2 3; do
		skip "npm could not install speedscope ($(tail -1 "$tmp/npm.log" 2>/dev/null))" "speedscope check $t"
	done
fi

# Each sample's instruction: every sample at one, target's within it
# and mostly past its entry (its time is in the burn loop).
is "$(q "SELECT sum(samples) FROM pc_samples WHERE run_id = $run")" "$samples" \
	"pc_samples: every sample at its instruction"
tpcs=$(q "SELECT count(*) FROM v_pcs WHERE run_id = $run AND function = 'target'")
ok $([ "${tpcs:-0}" -ge 1 ]; echo $?) "pc_samples: target's instructions ($tpcs)"
is "$(q "SELECT 2 * sum(samples * (offset > 0)) > sum(samples) FROM v_pcs
	WHERE run_id = $run AND function = 'target'")" 1 "v_pcs: target's samples mostly in its body"

# pprof, read by the Go pprof parser
"$ICPPD" report -d "$db" --whole-chains -f pprof -o "$tmp/p.pb.gz"
is $? 0 "pprof written"
gopprof=/usr/share/gocode/src/github.com/google/pprof/profile
if command -v go >/dev/null && [ -d "$gopprof" ] &&
	GOPATH=/usr/share/gocode GO111MODULE=off GOCACHE="$tmp/gocache" GOFLAGS= \
	go build -o "$tmp/pprof_check" "$TESTS_SRCDIR/consumers/pprof_check.go" >"$tmp/go.log" 2>&1; then
	pc=$("$tmp/pprof_check" "$tmp/p.pb.gz" 2>&1)
	is $? 0 "the Go pprof parser reads it and finds it valid"
	per=$(q "SELECT COALESCE(period, 1000000000 / frequency) FROM v_runs WHERE run_id = $run")
	contains "$pc" "total0 $samples" "pprof: the sample counts add up to the run's samples"
	contains "$pc" "zero0 0" "pprof: no sample with a count of 0"
	contains "$pc" "type1 cpu/nanoseconds" "pprof: cpu time in ns"
	contains "$pc" "total1 $((samples * per))" "pprof: cpu time is the counts times the period"
	contains "$pc" "period_type cpu/nanoseconds" "pprof: period type"
	contains "$pc" "period $per" "pprof: the run's period"
	dur=$(printf '%s\n' "$pc" | sed -n 's/^duration //p')
	ok $([ "${dur:-0}" -gt 0 ]; echo $?) "pprof: the run's duration ($dur ns)"
	m0=$(printf '%s\n' "$pc" | sed -n 's/^mapping0 //p')
	is "${m0%% *}" "$(realpath "$PROGS/collide")" "pprof: the program is the first mapping"
	ok $(printf '%s\n' "$m0" | awk '{ exit !(strtonum("0x" $2) < strtonum("0x" $3)) }' 2>/dev/null ||
		printf '%s\n' "$m0" | awk '{ exit !(length($2) > 0 && $2 != $3) }'; echo $?) \
		"pprof: its mapping spans its code ($m0)"
	contains "$pc" "label inference $(printf '%s\n' "$pc" | sed -n 's/^samples //p')" \
		"pprof: every sample labelled with its inference"
	contains "$pc" "root _start " "pprof: stacks start at _start"
	top=$(go tool pprof -top "$tmp/p.pb.gz" 2>&1)
	contains "$top" "File: collide" "go tool pprof names the profile by the program"
	contains "$top" "Type: cpu" "go tool pprof: cpu profile"
	# the leaf at its instructions: -disasm (objdump on the program)
	# shows target's samples at as many as icppd sampled, -list at
	# its burn loop (a macro: its lines are target's; inline.sh checks
	# the lines of functions inlined from a header)
	dis=$(go tool pprof -disasm 'target' "$tmp/p.pb.gz" 2>&1)
	is "$(printf '%s\n' "$dis" | awk '$1 != "." && $3 ~ /^[0-9a-f]+:$/' | wc -l)" "$tpcs" \
		"go tool pprof -disasm: target's samples at each instruction sampled"
	lst=$(go tool pprof -list '^target$' "$tmp/p.pb.gz" 2>&1)
	contains "$lst" "ROUTINE ======================== target in " "go tool pprof -list finds target's source"
	hot=$(printf '%s\n' "$lst" | awk '$1 != "." && $3 ~ /^[0-9]+:$/' | wc -l)
	ok $([ "$hot" -ge 1 ] && [ "$hot" -le "$tpcs" ]; echo $?) \
		"go tool pprof -list: samples on $hot of its lines, not all on the first"
	printf '%s\n' "$lst" | awk '$1 != "." && /BURN\(\);/ { f = 1 } END { exit !f }'
	ok $? "go tool pprof -list: samples on target's burn loop, BURN()"
else
	skip "no Go pprof parser (apt-get install golang-go golang-github-google-pprof-dev): $(tail -1 "$tmp/go.log" 2>/dev/null)" \
		"Go pprof checks"
fi

# Processes: forker burns 60 ms in itself, a forked copy and an exec'd
# heights-nofp (60 ms in each of its 9 contexts): two commands.
"$ICPPD" train $TRAIN_OPTS -q -d "$tmp/f.db" -- "$PROGS/forker" 60 "$PROGS/heights-nofp" 60 >/dev/null
"$ICPPD" record -q -d "$tmp/f.db" -- "$PROGS/forker" 60 "$PROGS/heights-nofp" 60 >/dev/null
fsamples=$(q "SELECT sum(samples) FROM v_cids WHERE run_id = 2" "$tmp/f.db")
hsamples=$(q "SELECT sum(c.samples) FROM v_cids c JOIN v_threads t USING (run_id, pid, tid)
	WHERE c.run_id = 2 AND t.comm = 'heights-nofp'" "$tmp/f.db")
ok $([ "${hsamples:-0}" -ge "$(min_samples 540)" ]; echo $?) "heights-nofp sampled ($hsamples of $fsamples)"
t=$("$ICPPD" report -d "$tmp/f.db")
contains "$t" "commands: 2 (heights-nofp" "the header names the commands, heaviest first"
t=$("$ICPPD" report -d "$tmp/f.db" --sort comm,dso,sym --min-percent 0)
contains "$t" "samples  %total comm            dso                      sym" "--sort: perf's columns"
ok $(printf '%s\n' "$t" | awk -v n="$hsamples" '$3 == "heights-nofp" { s += $1 }
	END { exit !(s >= n - 1 && s <= n + 1) }'; echo $?) \
	"--sort comm,dso,sym: heights-nofp's lines add up to its samples ($hsamples)"
is "$(printf '%s\n' "$t" | awk '$3 == "forker" && $4 == "forker" && $5 ~ /^(parent|child)_work$/' | wc -l)" 2 \
	"--sort comm,dso,sym: forker's parent_work and child_work, a line each"
t=$("$ICPPD" report -d "$tmp/f.db" --sort pid,sym --min-percent 0)
is "$(printf '%s\n' "$t" | awk '$4 ~ /^(parent|child)_work$/ { print $3 }' | sort -u | wc -l)" 2 \
	"--sort pid,sym: parent_work and child_work in two processes"
f=$("$ICPPD" report -d "$tmp/f.db" -f folded --comm-frame)
is "$(printf '%s\n' "$f" | grep -v -e '^forker;' -e '^heights-nofp;' | head -1)" "" \
	"--comm-frame: every stack starts with its command"
is "$(printf '%s\n' "$f" | grep '^heights-nofp;' | awk '{ s += $NF } END { print s }')" "$hsamples" \
	"--comm-frame: heights-nofp's stacks hold its samples"
f=$("$ICPPD" report -d "$tmp/f.db" -f folded --comm heights-nofp)
is "$(printf '%s\n' "$f" | awk '{ s += $NF } END { print s }')" "$hsamples" "--comm: that command's samples only"
is "$(printf '%s\n' "$f" | grep -c ';forker;\|^forker')" 0 "--comm: no stack of forker"
out=$("$ICPPD" report -d "$tmp/f.db" --sort comm,bogus 2>&1)
is $? 2 "--sort with an unknown key: usage error"
contains "$out" "--sort: expected comm, pid, dso or sym" "... says which keys there are"
# compare with a file whose stacks start with the command, as
# stackcollapse-perf.pl writes them: the first frame is dropped
"$ICPPD" report -d "$tmp/f.db" -f folded --comm-frame -o "$tmp/comm.folded"
cmp=$("$ICPPD" compare -d "$tmp/f.db" -f json 2 "$tmp/comm.folded" 2>"$tmp/err")
overlap=$(printf '%s' "$cmp" | sed 's/.*"overlap": \([0-9.]*\).*/\1/')
ok $(awk -v o="$overlap" 'BEGIN { exit !(o >= 0.99) }'; echo $?) \
	"compare: a file with command frames overlaps its run ($overlap)"
contains "$(cat "$tmp/err")" "starts each stack with a command's name (as stackcollapse-perf.pl writes it)" \
	"compare: says it dropped the command frames"
"$ICPPD" report -d "$tmp/f.db" -f pprof -o "$tmp/f.pb.gz"
if [ -x "$tmp/pprof_check" ]; then
	pc=$("$tmp/pprof_check" "$tmp/f.pb.gz")
	nsamp=$(printf "%s\n" "$pc" | sed -n "s/^samples //p")
	contains "$pc" "label comm $nsamp" "pprof: every sample labelled with its command"
	contains "$pc" "label pid $nsamp" "pprof: ... and its pid"
	contains "$pc" "total0 $fsamples" "pprof: processes apart, the counts still add up"
else
	skip "no Go pprof parser" "pprof process labels"
fi

# Kernel time: syscalls spends most of its 200 ms of CPU in write(2)
"$ICPPD" record -q -d "$tmp/k.db" -- "$PROGS/syscalls" 200 >/dev/null 2>"$tmp/err"
is "$(q "SELECT user_s + system_s >= 0.15 FROM v_runs" "$tmp/k.db")" 1 \
	"v_runs: the command's CPU time ($(q "SELECT user_s, system_s FROM v_runs" "$tmp/k.db"))"
is "$(q "SELECT kernel_share > 0.25 FROM v_runs" "$tmp/k.db")" 1 \
	"v_runs: most of it in the kernel ($(q "SELECT kernel_share FROM v_runs" "$tmp/k.db"))"
"$ICPPD" record -d "$tmp/k.db" -- "$PROGS/syscalls" 50 >/dev/null 2>"$tmp/err"
contains "$(cat "$tmp/err")" "in the kernel, where samples do not see it" "record's summary gives the kernel share"
t=$("$ICPPD" report -d "$tmp/k.db" --run 1 --k 0)
contains "$t" "in the kernel, not in this profile" "the report's header gives it too"
j=$("$ICPPD" report -d "$tmp/k.db" --run 1 --k 0 -f json)
contains "$j" '"cpu": {"user_s": ' "JSON: the CPU time"
is "$(q "SELECT sum(kernel_samples) FROM v_cids WHERE run_id = 1" "$tmp/k.db")" 0 \
	"without --kernel: no sample in the kernel"
# --kernel: samples in write(2) count, under the user context that called
# it (the CID from the user registers at the system call)
"$ICPPD" train $TRAIN_OPTS -q -d "$tmp/k.db" -- "$PROGS/syscalls" 100 >/dev/null
"$ICPPD" record -q --kernel -d "$tmp/k.db" -- "$PROGS/syscalls" 200 >/dev/null 2>"$tmp/err"
is $? 0 "record --kernel: exit 0"
krun=$(last_run "$tmp/k.db")
is "$(q "SELECT kernel_sampled FROM v_runs WHERE run_id = $krun" "$tmp/k.db")" 1 "v_runs: kernel sampled"
ks=$(q "SELECT sum(samples) || ' ' || sum(kernel_samples) FROM v_cids WHERE run_id = $krun" "$tmp/k.db")
ok $(echo "$ks" | awk '{ exit !($2 * 4 >= $1 && $2 > 0) }'; echo $?) \
	"--kernel: a quarter or more of the samples in the kernel (samples, kernel: $ks)"
f=$("$ICPPD" report -d "$tmp/k.db" --run "$krun" -f folded)
ok $(printf '%s\n' "$f" | grep -q '^_start;.*;main;write_loop;.*;\[kernel\]\(;[^ ;]*_\[k\]\)* [0-9]*$'; echo $?) \
	"folded: [kernel] below write_loop's call of write, the whole user stack above"
is "$(printf '%s\n' "$f" | awk '{ s += $NF } END { print s }')" "${ks%% *}" \
	"folded: user and kernel samples add up to the run's"
t=$("$ICPPD" report -d "$tmp/k.db" --run "$krun")
contains "$t" "in the kernel: ${ks##* } samples" "the header counts the samples in the kernel"
contains "$t" "[kernel]" "text: [kernel] is a function of the forest, with its callers"
# the kernel's functions, where /proc/kallsyms shows their addresses:
# the chain the kernel unwound for each of its samples, below [kernel]
if [ "$(head -c 16 /proc/kallsyms 2>/dev/null | tr -d 0)" != "" ]; then
	named=$(q "SELECT COALESCE(sum(samples), 0) FROM kernel_chains WHERE run_id = $krun" "$tmp/k.db")
	ok $([ $((named * 10)) -ge $((${ks##* } * 9)) ]; echo $?) \
		"--kernel: $named of ${ks##* } kernel samples named by kernel function (90 % or more)"
	ok $(printf '%s\n' "$f" | grep -q ';\[kernel\];[^ ]*write[^ ;]*_\[k\]'; echo $?) \
		"folded: below [kernel], the kernel's write functions, marked _[k] as perf marks them"
	contains "$t" "_[k]" "text: the kernel's functions in the forest"
	"$ICPPD" report -d "$tmp/k.db" --run "$krun" -f json -o "$tmp/k.json"
	contains "$(cat "$tmp/k.json")" '_[k]"' "json: the same names"
else
	skip "/proc/kallsyms shows no addresses here (kptr_restrict)" "kernel functions named"
fi
"$ICPPD" report -d "$tmp/k.db" --run "$krun" --k 0 >/dev/null
is "$(q "SELECT round(sum(samples)) FROM v_inferred WHERE run_id = $krun" "$tmp/k.db")" \
	"$(q "SELECT round(sum(samples)) FROM v_cids WHERE run_id = $krun" "$tmp/k.db")" \
	"v_inferred keeps the kernel samples, in the context that entered the kernel"

# JIT code: jit copies a function into anonymous memory and names it in
# /tmp/perf-PID.map, as node --perf-basic-prof does
jit_run() {	# jit_run DB MODE: records jit for 200 ms; its pid
	"$ICPPD" record -q -d "$1" -- "$PROGS/jit" 200 "$2" >/dev/null 2>&1
	q "SELECT target_pid FROM v_runs ORDER BY run_id DESC LIMIT 1" "$1"
}
jpid=$(jit_run "$tmp/j.db" file)
# (a flat profile: whether this short run learned any path is chance)
f=$("$ICPPD" report -d "$tmp/j.db" -f folded --k 0 2>/dev/null)
jit=$(printf '%s\n' "$f" | sed -n 's/^jit_spin \([0-9]*\)$/\1/p')
ok $([ "${jit:-0}" -ge "$(min_samples 200)" ]; echo $?) "JIT: samples in jit_spin, named by the perf map ($jit)"
is "$(q "SELECT DISTINCT module FROM v_cids WHERE function = 'jit_spin'" "$tmp/j.db")" \
	"/tmp/perf-$jpid.map" "JIT: the function's module is the perf map"
rm -f "/tmp/perf-$jpid.map"
for mode in none link chown; do
	[ "$mode" = chown ] && [ "$(id -u)" -ne 0 ] &&
		{ skip "needs root to give the map away" "JIT map of another user"; continue; }
	rm -f "$tmp/j2.db"*
	jpid=$(jit_run "$tmp/j2.db" "$mode")
	is "$(q "SELECT count(*) FROM v_cids WHERE function = 'jit_spin'" "$tmp/j2.db")" 0 \
		"JIT map '$mode': not read"
	ok $([ "$(q "SELECT COALESCE(sum(samples), 0) FROM v_unresolved WHERE reason = 'anon_code'" "$tmp/j2.db")" \
		-ge "$(min_samples 200)" ]; echo $?) "JIT map '$mode': its samples counted as anon_code"
	rm -f "/tmp/perf-$jpid.map" "/tmp/perf-$jpid.other"
done

# A JIT in a mount namespace of its own with a private /tmp (a
# container; the daemon's unit has PrivateTmp=yes): its map is read
# through /proc/PID/root, as perf does.
if [ "$(id -u)" -eq 0 ] && unshare -m true 2>/dev/null; then
	# (from its folder: the build may itself be under /tmp, which the
	# new tmpfs hides; the working folder stays reachable)
	"$ICPPD" record -q -d "$tmp/ns.db" -- unshare -m sh -c \
		"cd '$PROGS' && mount -t tmpfs none /tmp && exec ./jit 200 file" >/dev/null 2>&1
	jn=$(q "SELECT COALESCE(sum(samples), 0) FROM v_cids WHERE function = 'jit_spin'" "$tmp/ns.db")
	ok $([ "$jn" -ge "$(min_samples 200)" ]; echo $?) \
		"JIT behind a private /tmp: jit_spin named through /proc/PID/root ($jn)"
else
	skip "needs root and unshare -m" "JIT map behind a private /tmp"
fi

# A flat table needs no path map
"$ICPPD" record -q --no-learn -d "$tmp/nomap.db" -- "$PROGS/heights-nofp" 30 >/dev/null 2>&1
t=$("$ICPPD" report -d "$tmp/nomap.db" --sort dso,sym 2>"$tmp/err")
is $? 0 "--sort without a path map: exit 0"
is "$(cat "$tmp/err")" "" "... and no warning about callers it does not show"
ok $(printf '%s\n' "$t" | grep -q ' heights-nofp  *recurse$'; echo $?) "... and the table lists recurse"

# C++: demangled by default, as the symbols spell them on request
"$ICPPD" train $TRAIN_OPTS -q -d "$tmp/cxx.db" -- "$PROGS/shapes" 60 >/dev/null
"$ICPPD" record -q -d "$tmp/cxx.db" -- "$PROGS/shapes" 60 >/dev/null
f=$("$ICPPD" report -d "$tmp/cxx.db" -f folded)
contains "$f" ";main;void geo::measure<geo::Square>(geo::Square const&, int);geo::Square::area(int) const " \
	"C++ names demangled in folded output"
f=$("$ICPPD" report -d "$tmp/cxx.db" -f folded --no-demangle)
contains "$f" ";main;_ZN3geo7measureINS_6SquareEEEvRKT_i;_ZNK3geo6Square4areaEi " \
	"--no-demangle: the symbols as they are"
t=$("$ICPPD" report -d "$tmp/cxx.db")
contains "$t" "geo::Square::area(int) const" "C++ names demangled in text"
j=$("$ICPPD" report -d "$tmp/cxx.db" -f json)
contains "$j" '"function": "geo::Square::area(int) const"' "C++ names demangled in JSON"
contains "$j" "\"module\": \"$(realpath "$PROGS/shapes")\"" "JSON: the function's module"
contains "$j" '"event": "cpu-clock"' "JSON: the event"

# Text: whole counts when nothing is apportioned, one line of argv
"$ICPPD" train $TRAIN_OPTS -q -d "$tmp/h.db" -- "$PROGS/heights-nofp" 30 >/dev/null
"$ICPPD" record -q -d "$tmp/h.db" -- sh -c "\"$PROGS/heights-nofp\" 30 # one
two" >/dev/null
t=$("$ICPPD" report -d "$tmp/h.db" --min-percent 0)
is "$(printf '%s\n' "$t" | sed -n 2p | cut -c1-9)" "inferred:" "a two-line argv: the header's run line is one line"
contains "$(printf '%s\n' "$t" | head -1)" "# one two)" "... with the argv on it"
is "$(printf '%s\n' "$t" | grep -c '^ *[0-9]*\.[0-9] ')" 0 "nothing apportioned: whole counts"
contains "$t" "%callee function <- callers" "column names"
t=$("$ICPPD" report -d "$tmp/h.db" --min-percent 15)
contains "$t" "<- [2 callers, each under the thresholds]" \
	"a function whose callers are all under the threshold says so"
# collide's split is fractional unless its shares happen to give whole
# samples: one decimal exactly when --exact shows a fraction
t=$("$ICPPD" report -d "$db" --whole-chains --k 1)
frac=$(awk '$NF ~ /\./ { f = 1 } END { print f + 0 }' "$tmp/e.folded")
is "$(printf '%s\n' "$t" | grep -c '^ *[0-9]*\.[0-9] ' | awk '{ print ($1 > 0) }')" "$frac" \
	"one decimal exactly when some weight is apportioned in fractions"
# ... and only on those lines: a function's own samples are a whole
# count, printed as one (they read 83.0 beside the fractions)
is "$(printf '%s\n' "$t" | awk '$3 == "target" && NF == 3 { print $1 }')" \
	"$(q "SELECT sum(samples) FROM v_cids WHERE run_id = $run AND function = 'target'")" \
	"target's own line: its samples, a whole count"
done_testing
