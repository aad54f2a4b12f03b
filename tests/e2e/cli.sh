#!/bin/sh
# --help, --version, and the man pages kept in step with the options.
. "$TESTS_SRCDIR/e2e/lib.sh"
man=$TESTS_SRCDIR/../man

out=$("$ICPPD" --help)
is $? 0 "icppd --help exits 0"
contains "$out" "record" "icppd --help lists record"
contains "$out" "icppd report -f svg -o flame.svg" "icppd --help opens with examples, a flame graph among them"
is "$(printf '%s\n' "$out" | sed -n '/^Advanced/,/^$/p' | awk 'NR > 1 && NF { print $1 }' | tr '\n' ' ')" "arr sites " \
	"icppd --help lists arr and sites apart, as advanced"
out=$("$ICPPD" record --help)
is $? 0 "icppd record --help exits 0"
contains "$out" "Usage: icppd record" "record --help shows usage"
contains "$("$ICPPD" --version)" "icppd 0." "--version prints the version"
"$ICPPD" >/dev/null 2>&1
is $? 2 "no subcommand: usage error 2"

# Every long option of each subcommand's --help is in its man page.
for cmd in record train validate report annotate compare list arr sites daemon ctl export; do
	page=$man/icppd-$cmd.1
	[ -f "$page" ] || page=$man/icppd-$cmd.8
	# whole sentences: the line is the man page's NAME line, uncut
	name=$(sed -n '/^\.SH NAME/{n;s/^icppd-[a-z]* \\- //;p;}' "$page")
	is "$("$ICPPD" --help | sed -n "s/^  $cmd  *//p")" "$name" \
		"icppd --help describes $cmd as icppd-$cmd's NAME line does"
	for opt in $("$ICPPD" $cmd --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
		page=$man/icppd-$cmd.1
		[ -f "$page" ] || page=$man/icppd-$cmd.8
		grep -q -- "\\\\-\\\\-$(echo "${opt#--}" | sed 's/-/\\\\-/g')" "$page" || grep -q -- "$opt" "$page"
		ok $? "icppd-$cmd(1) documents $opt"
	done
done
# -d FILE everywhere but ctl, which says why not.
for cmd in record train validate report compare arr daemon export; do
	contains "$("$ICPPD" $cmd --help)" "-d, --database FILE" "icppd $cmd takes -d FILE"
done
out=$("$ICPPD" ctl -d x status 2>&1)
is $? 2 "ctl -d: usage error"
contains "$out" "icppd: ctl: -d: ctl talks to the daemon through its control socket, not to a database: give --socket PATH" \
	"ctl -d: says what ctl takes instead"

# Every public view is documented in icppd-schema(5).
"$ICPPD" record -q -d "$db" -- true 2>/dev/null
for v in $(q "SELECT name FROM sqlite_master WHERE type = 'view' ORDER BY name"); do
	grep -q "$v" "$man/icppd-schema.5"
	ok $? "icppd-schema(5) documents view $v"
done
# Every unresolved reason is documented.
for r in no_user_regs no_mapping anon_code module_unreadable no_cfi cfa_unsupported no_stack_base sp_outside_stack; do
	grep -q "$r" "$man/icppd-schema.5"
	ok $? "icppd-schema(5) documents reason $r"
done
# Every unwinding outcome is documented.
for u in complete truncated no_stack no_mapping no_cfi bad_cfi bad_frame too_deep no_program map_full; do
	grep -q "^\.B $u" "$man/icppd-train.1"
	ok $? "icppd-train(1) documents unwind outcome $u"
done
# perf's subcommands without a twin: answered with the nearest command
for sub in script top stat diff; do
	out=$("$ICPPD" $sub 2>&1)
	is $? 2 "icppd $sub: usage error"
	contains "$out" "icppd: $sub: not an icppd subcommand (perf $sub): " "... answered"
done
contains "$("$ICPPD" diff 2>&1)" "icppd report --base RUN" "diff: report --base"
contains "$("$ICPPD" top 2>&1)" "icppd daemon" "top: the daemon"
contains "$("$ICPPD" script 2>&1)" "icppd report -f folded --k inf" "script: folded stacks"
contains "$("$ICPPD" stat 2>&1)" "icppd report --k 0" "stat: the flat profile"

# compare of broad profiles: no context reaches the hot threshold, and
# the coverage says so instead of "1.0000 (0 of 0 hot contexts)"
awk 'BEGIN { for (i = 0; i < 200; i++) printf "main;f%d 1\n", i }' >"$tmp/broad.folded"
out=$("$ICPPD" compare "$tmp/broad.folded" "$tmp/broad.folded")
contains "$out" "degree of overlap: 1.0000" "compare of broad profiles: the overlap"
contains "$out" "hot-edge coverage (>= 1%): none measured, no context of A holds 1%" "... no coverage of nothing"
out=$("$ICPPD" compare -t 0.5 "$tmp/broad.folded" "$tmp/broad.folded")
contains "$out" "hot-edge coverage (>= 0.5%): 1.0000 (200 of 200 hot contexts of A are hot in B)" \
	"... which a lower threshold measures"

# icppd list: the events that open here, each named once per line,
# and their number; what perf takes and icppd does not, said plainly.
out=$("$ICPPD" list)
is $? 0 "icppd list exits 0"
nev=$(printf '%s\n' "$out" | sed -n 's/^\([0-9]*\) events can be sampled here.*/\1/p')
is "$(printf '%s\n' "$out" | grep -c '^  ')" "${nev:-none}" "list: as many events listed as it counts ($nev)"
ok $(printf '%s\n' "$out" | grep -qi '^  cpu-clock '; echo $?) "list: cpu-clock, which every machine samples"
is "$(printf '%s\n' "$out" | grep -ci 'cpu.clock')" 1 "list: cpu-clock on one line, its other names with it"
contains "$(printf '%s\n' "$out" | grep -i '^  cpu-clock ')" "(also PERF_COUNT_SW_CPU_CLOCK)" \
	"... the kernel's name among them"
out=$("$ICPPD" record -d "$tmp/l.db" -e sched:sched_switch -- true 2>&1)
ok $([ $? -ne 0 ]; echo $?) "a tracepoint: refused"
contains "$out" "tracepoint" "... saying it is a tracepoint icppd does not sample"
out=$("$ICPPD" record -d "$tmp/l.db" -e cycles,instructions -- true 2>&1)
contains "$out" "icppd samples one event at a time" "an event list: refused, saying why"
# perf's habits: the same meaning works, a different one is answered.
"$ICPPD" record -q -o "$tmp/o.db" -- true 2>"$tmp/q.err"
ok $([ -s "$tmp/o.db" ]; echo $?) "record -o FILE: the database, as perf's -o"
is "$(grep -v '^icppd: error' "$tmp/q.err" | head -1)" "" "record -q: errors only (no note, no warning)"
out=$("$ICPPD" record -d "$tmp/o.db" -g -- true 2>&1)
contains "$out" "call paths are always recorded" "record -g: accepted, with a note"
out=$("$ICPPD" record -d "$tmp/o.db" --per-thread -- true 2>&1)
contains "$out" "report --tid TID shows one thread" "record --per-thread: accepted, with a note"
out=$("$ICPPD" record -d "$tmp/o.db" -a -- true 2>&1)
is $? 2 "record -a: usage error"
contains "$out" "-a: icppd follows a command" "... naming the daemon for every process"
"$ICPPD" record -q -d "$tmp/h.db" -- "$PROGS/heights-fp" 20 >/dev/null 2>&1
"$ICPPD" report -d "$tmp/h.db" >/dev/null 2>&1	# infers and stores the run
out=$("$ICPPD" report -i "$tmp/h.db" --percent-limit 1 2>&1)
is "$out" "$("$ICPPD" report -d "$tmp/h.db" --min-percent 1 2>&1)" \
	"report -i, --percent-limit: perf's names, the same report"
contains "$("$ICPPD" report -i "$tmp/h.db" --children 2>&1)" " children     self     samples function -> callees" \
	"report --children: perf's top-down table"
out=$("$ICPPD" daemon -c 99 2>&1)
is $? 2 "daemon -c: usage error"
contains "$out" "configuration file is -C FILE" "... -c is the period elsewhere; the config is -C"
out=$("$ICPPD" sites -f main /bin/true 2>&1)
contains "$out" "sites takes --function NAME" "sites -f: -f is the format elsewhere"
# What record says on its way: a machine without a hardware PMU is
# named once, quietly; learning's share of the run is at most 100 %.
"$ICPPD" record -d "$tmp/say.db" -- "$PROGS/heights-fp" 20 >/dev/null 2>"$tmp/say.err"
ok $(! grep -q 'No such file or directory' "$tmp/say.err"; echo $?) \
	"record: no raw perf_event_open error on the way"
if grep -q 'cpu-clock' "$tmp/say.err" && ! grep -q 'precise' "$tmp/say.err"; then
	contains "$(cat "$tmp/say.err")" "sampling cpu-clock: no hardware event opens here (normal in a VM)" \
		"record without a PMU: one quiet line says why cpu-clock"
fi
share=$(sed -n 's/.*the learning event was on \([0-9]*\)% of the run.*/\1/p' "$tmp/say.err")
ok $([ -n "$share" ] && [ "$share" -le 100 ]; echo $?) "record: learning on ${share:-?}% of the run, at most 100"
done_testing
