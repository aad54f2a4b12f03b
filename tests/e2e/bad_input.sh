#!/bin/sh
# Bad input: one "icppd: ..." line, the documented exit status, and a
# database that stays valid and keeps what it had.
. "$TESTS_SRCDIR/e2e/lib.sh"
require_perf

# expect STATUS DESCRIPTION NEEDLE -- icppd args...: runs icppd, checks
# the exit status, that stderr is one line starting "icppd: ", and that
# it contains NEEDLE.
expect() {
	want=$1 desc=$2 needle=$3
	shift 4
	"$ICPPD" "$@" >"$tmp/out" 2>"$tmp/err"
	is $? "$want" "$desc: exit status $want"
	first=$(head -1 "$tmp/err")
	contains "$first" "$needle" "$desc: message says '$needle'"
	case $want in
	1 | 126 | 127) is "$(wc -l <"$tmp/err" | tr -d ' ')" 1 "$desc: exactly one line" ;;
	esac
	case $first in icppd:*) ok 0 "$desc: starts with 'icppd:'" ;; *) ok 1 "$desc: starts with 'icppd:' ($first)" ;; esac
}

# A good run first, so there is something to lose.
"$ICPPD" record -q -d "$db" -- "$PROGS/heights-nofp" 10 >/dev/null
before=$(q "SELECT count(*) || '/' || sum(samples) FROM v_cids")

# a command that does not run exits as a shell's would: 127, 126
expect 127 "missing command" "no-such-command-xyz: command not found" -- record -d "$db" -- no-such-command-xyz
expect 127 "missing file" "/no/such/cmd: No such file or directory" -- record -d "$db" -- /no/such/cmd
# a command whose name forges a second line and colours the terminal
expect 127 "a command named with a newline" 'no\x0aicppd: FORGED\x1b[31m: command not found' -- \
	record -d "$db" -- "$(printf 'no\nicppd: FORGED\033[31m')"
printf 'hello\n' >"$tmp/text"
expect 126 "not executable" "not executable" -- record -d "$db" -- "$tmp/text"
chmod +x "$tmp/text"
expect 126 "not an ELF file" "not an ELF file" -- record -d "$db" -- "$tmp/text"
expect 126 "a directory" "is a directory" -- record -d "$db" -- "$tmp"
# A foreign binary: heights with its e_machine set to AArch64 (183).
cp "$PROGS/heights-nofp" "$tmp/foreign"
printf '\267\000' | dd of="$tmp/foreign" bs=1 seek=18 conv=notrunc 2>/dev/null
expect 126 "foreign ELF" "not an x86-64 ELF program (64-bit, machine 183)" -- record -d "$db" -- "$tmp/foreign"
expect 1 "database directory missing" "cannot open database" -- record -d "$tmp/no/such/dir.db" -- true
expect 1 "database on a read-only file system" "/proc/icppd.db" -- record -d /proc/icppd.db -- true

head -c 8192 /dev/urandom >"$tmp/corrupt.db"
sum1=$(md5sum <"$tmp/corrupt.db")
expect 1 "corrupt database" "file is not a database" -- record -d "$tmp/corrupt.db" -- true
is "$(md5sum <"$tmp/corrupt.db")" "$sum1" "corrupt database left untouched"

cp "$db" "$tmp/newer.db"
q "PRAGMA user_version = 99" "$tmp/newer.db"
expect 1 "newer schema" "schema version 99 is newer than this icppd supports" -- record -d "$tmp/newer.db" -- true

expect 1 "unknown event" "no_such_event" -- record -d "$db" -e no_such_event -- true
expect 1 "no such process" "no such process" -- record -d "$db" -p 2147483646

# perf_event_open refused (injected): the command must not run.
ICPPD_INJECT_FAULT=perf_event_open:EACCES \
	expect 1 "perf_event_open refused" "perf_event_paranoid" -- record -d "$db" -- sh -c "touch $tmp/ran"
ok $([ ! -e "$tmp/ran" ]; echo $?) "perf_event_open refused: the command never ran"
contains "$(cat "$tmp/err")" "Permission denied" "perf_event_open refused: says Permission denied"
ICPPD_INJECT_FAULT=mmap:ENOMEM \
	expect 1 "ring buffer mmap refused" "mmap of the perf ring buffer" -- record -d "$db" -- true
# The binary cannot be opened (injected for its directory only): the
# command is refused before it runs, and says why.
ICPPD_INJECT_FAULT=open:EACCES:$PROGS/ \
	expect 126 "binary unreadable" "cannot read it: Permission denied" -- record -d "$db" -- "$PROGS/heights-nofp" 1
# /proc cannot be read: the run is recorded, and every sample is counted
# as unresolved with the reason rather than dropped.
ICPPD_INJECT_FAULT=open:EACCES:/proc/ "$ICPPD" record -d "$tmp/noproc.db" -- "$PROGS/heights-nofp" 5 \
	>/dev/null 2>"$tmp/err"
contains "$(cat "$tmp/err")" "cannot read its stack base" "/proc unreadable: the stack base warning says so"
is "$(q "SELECT samples = unresolved AND samples > 0 FROM v_runs" "$tmp/noproc.db")" 1 \
	"/proc unreadable: every sample is kept, as unresolved"

# A read-only database, where this machine lets us mount one.
mkdir "$tmp/ro"
cp "$db" "$tmp/ro/ro.db"
if mount -t tmpfs tmpfs "$tmp/ro" 2>/dev/null && cp "$db" "$tmp/ro/ro.db" &&
   mount -o remount,ro "$tmp/ro" 2>/dev/null; then
	expect 1 "read-only database" "read-only" -- record -d "$tmp/ro/ro.db" -- true
	umount "$tmp/ro"
else
	umount "$tmp/ro" 2>/dev/null
	skip "cannot mount a read-only tmpfs here" "read-only database"
fi

# Usage errors: exit 2.
expect 2 "no command" "give either -p PID or -- COMMAND" -- record -d "$db"
expect 2 "-F with -c" "exclude each other" -- record -d "$db" -F 100 -c 1000 -- true
expect 2 "bad frequency" "--freq wants a whole number" -- record -d "$db" -F abc -- true
expect 2 "unknown option" "unknown option '--bogus'" -- record --bogus -- true
expect 2 "mmap pages not a power of two" "power of two" -- record -m 3 -- true
expect 2 "unknown subcommand" "unknown subcommand 'frobnicate'" -- frobnicate
# Times that overflowed an int64_t of nanoseconds (UBSan aborted).
expect 2 "--since 280+ years back" "--since: expected now" -- report -d "$db" --since -99999999999999d
expect 2 "--until far ahead" "--until: expected now" -- report -d "$db" --until 99999999999999
expect 2 "--until in year 9999" "--until: expected now" -- report -d "$db" --until 9999-12-31
expect 2 "report --exe ''" "--exe: expected a program's path or name, not ''" -- report -d "$db" --exe ''
# Folded weights that are not finite numbers printed -nan and invalid JSON.
printf 'main;f 1\n' >"$tmp/one.folded"
printf 'main;f inf\n' >"$tmp/inf.folded"
printf 'main;f 1e308\nmain;g 1e308\n' >"$tmp/huge.folded"
expect 1 "compare, an inf weight" "inf.folded:1: expected 'frame;...;frame WEIGHT', WEIGHT a finite number" -- compare -f json "$tmp/inf.folded" "$tmp/one.folded"
is "$(wc -c <"$tmp/out" | tr -d ' ')" 0 "compare, an inf weight: no output"
expect 1 "compare, weights beyond a double" "huge.folded:2: the weights add up to more than a double holds" -- compare -f json "$tmp/one.folded" "$tmp/huge.folded"
printf 'main;f 1e300\nmain;g 3\n' >"$tmp/large.folded"
"$ICPPD" compare -f json "$tmp/large.folded" "$tmp/large.folded" >"$tmp/out" 2>&1
contains "$(cat "$tmp/out")" '"overlap": 1.000000' "compare: large finite weights still give numbers"

# A database handed over with counts no recording writes: a signed
# overflow in the report's sums (UBSan), now a clear refusal.
cp "$db" "$tmp/big.db"
sqlite3 "$tmp/big.db" "UPDATE cid_samples SET samples = 9223372036854775807
	WHERE function_id = (SELECT min(function_id) FROM cid_samples)"
expect 1 "a sample count of 2^63 - 1" "reading the run's samples: Numerical result out of range" -- \
	report -d "$tmp/big.db" -f pprof -o "$tmp/big.pb"
cp "$db" "$tmp/bignode.db"
sqlite3 "$tmp/bignode.db" "UPDATE path_nodes SET self = 1125899906842624,
	total = 1125899906842624 WHERE id = (SELECT max(id) FROM path_nodes)"
expect 1 "a path map count of 2^50" "Numerical result out of range" -- \
	report -d "$tmp/bignode.db" --format folded

is "$(q "SELECT count(*) || '/' || sum(samples) FROM v_cids")" "$before" \
	"failed invocations lost nothing already recorded"

# A function named "x\nFORGED;stack 999999" (objcopy --redefine-sym)
# forged a line of folded output; with an escape sequence it reached the
# terminal in text.  Names are written with such bytes as \xNN.
if command -v objcopy >/dev/null; then
	objcopy --redefine-sym "main=$(printf 'x\nFORGED;stack 999999')" \
		--redefine-sym "path_a=$(printf 'a\033[2Jb\377')" \
		"$PROGS/heights-fp" "$tmp/forged"
	fdb=$tmp/forged.db
	"$ICPPD" record -q -d "$fdb" -- "$tmp/forged" 100 >/dev/null 2>&1
	"$ICPPD" report -d "$fdb" --format folded --k inf >"$tmp/folded" 2>/dev/null
	is "$(grep -c '^FORGED' "$tmp/folded")" 0 "a newline in a name forges no folded line"
	is "$(grep -vc ' [0-9.][0-9.]*$' "$tmp/folded")" 0 "every folded line ends in its count"
	contains "$(cat "$tmp/folded")" 'x\x0aFORGED\x3bstack 999999' "the name is shown, its newline as \\x0a, its ';' as \\x3b (one frame)"
	"$ICPPD" report -d "$fdb" --k 3 >"$tmp/text" 2>/dev/null
	is "$(tr -d -c '\033' <"$tmp/text" | wc -c | tr -d ' ')" 0 "no escape byte reaches the text report"
	"$ICPPD" report -d "$fdb" --format json --k 3 >"$tmp/json" 2>/dev/null
	ok $(iconv -f UTF-8 -t UTF-8 "$tmp/json" >/dev/null 2>&1; echo $?) \
		"JSON of a name that is not UTF-8 is valid UTF-8"
	contains "$(cat "$tmp/json")" '"a\\x1b[2Jb\\xff"' \
		"the name as in every format: the escape and the stray byte as \\xNN"
	# the flame graph too; and a name with what XML reserves
	objcopy --redefine-sym "path_b=$(printf '<b>&amp;\"')" "$tmp/forged" "$tmp/forged2"
	"$ICPPD" record -q -d "$tmp/forged2.db" -- "$tmp/forged2" 100 >/dev/null 2>&1
	"$ICPPD" report -d "$tmp/forged2.db" -f svg -o "$tmp/forged.svg" 2>/dev/null
	xmllint --noout "$tmp/forged.svg" 2>/dev/null
	is $? 0 "svg of names with a newline, an escape, a stray byte and XML's own characters: well-formed"
	contains "$(cat "$tmp/forged.svg")" '&lt;b&gt;&amp;amp;' "... XML's characters escaped"
	contains "$(cat "$tmp/forged.svg")" 'a\x1b[2Jb\xff' "... the others as in every format"
else
	skip "objcopy not installed" "names that forge output"
fi
# A crafted database that still carries icppd's application id: a
# trigger on inferred running an endless recursive query hung report at
# its first write; one of icppd's views replaced by such a query hung
# train's summary (over 10 minutes of CPU, deaf to SIGTERM, until it
# was killed).  Refused at open, in one line.
cp "$db" "$tmp/trigger.db"
q "CREATE TRIGGER endless AFTER INSERT ON inferred BEGIN
	SELECT count(*) FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL
	SELECT x + 1 FROM c) SELECT x FROM c); END" "$tmp/trigger.db"
timeout -s KILL 60 "$ICPPD" report -d "$tmp/trigger.db" >/dev/null 2>"$tmp/err"
is $? 1 "a crafted trigger: report refuses, no hang"
is "$(cat "$tmp/err")" "icppd: $tmp/trigger.db: the database holds 1 trigger, which icppd never makes (an edited or crafted database): left as it is" \
	"... in one line saying why"
cp "$db" "$tmp/view.db"
q "DROP VIEW v_path_maps; CREATE VIEW v_path_maps AS WITH RECURSIVE
	c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x AS map_id,
	x AS paths, x AS cids, x AS ambiguous_cids, x AS samples FROM c" "$tmp/view.db"
timeout -s KILL 60 "$ICPPD" train -d "$tmp/view.db" -- "$PROGS/heights-nofp" 5 >/dev/null 2>"$tmp/err"
is $? 1 "one of icppd's views replaced: train refuses, no hang"
contains "$(cat "$tmp/err")" "the view 'v_path_maps' is not one icppd made" "... naming it"

is "$(q "SELECT count(*) FROM v_runs")" 1 "failed invocations added no run"
is "$(integrity)" ok "database passes integrity_check"

# A database with damaged pages, or one the user cannot write: refused
# before the command starts, exit 1, one line (a record into a damaged
# database stored nothing and exited 0).
cp "$db" "$tmp/damaged.db"
dd if=/dev/urandom of="$tmp/damaged.db" bs=1 seek=5000 count=3000 conv=notrunc 2>/dev/null
out=$("$ICPPD" record -d "$tmp/damaged.db" -- touch "$tmp/started" 2>&1)
is $? 1 "damaged database: exit 1"
contains "$out" "the database is corrupt" "... saying so"
is "$(printf '%s\n' "$out" | wc -l)" 1 "... in one line"
ok $([ ! -e "$tmp/started" ]; echo $?) "... before the command starts"
# The same in place, after records that kept the state they left it in
# (schema/checked.c: the next skips the read while the file is in it):
# the damage moves the file's change time, and the next record reads it
# whole.  The sleep: times move by ticks of up to 10 ms.
cp "$db" "$tmp/inplace.db"
kept=$(find "$ICPPD_CACHE_DIR" -name '*.chk' | wc -l)
"$ICPPD" record -q -d "$tmp/inplace.db" -- true
"$ICPPD" record -q -d "$tmp/inplace.db" -- true
is "$(find "$ICPPD_CACHE_DIR" -name '*.chk' | wc -l)" $((kept + 1)) \
	"records keep the state they leave a database in, one file"
sleep 0.1
dd if=/dev/urandom of="$tmp/inplace.db" bs=1 seek=5000 count=3000 conv=notrunc 2>/dev/null
out=$("$ICPPD" record -d "$tmp/inplace.db" -- touch "$tmp/started" 2>&1)
is $? 1 "damaged in place after records kept its state: exit 1"
contains "$out" "the database is corrupt" "... saying so"
ok $([ ! -e "$tmp/started" ]; echo $?) "... before the command starts"
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1; then
	cp "$db" "$tmp/theirs.db"
	chmod 644 "$tmp/theirs.db"
	chmod 777 "$tmp"
	out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
		"$ICPPD" record -d "$tmp/theirs.db" -- touch "$tmp/started" 2>&1)
	is $? 1 "a database the user cannot write: exit 1"
	contains "$out" "read" "... saying it is read-only"
	ok $([ ! -e "$tmp/started" ]; echo $?) "... before the command starts"
else
	skip "needs root and a 'nobody' user" "an unwritable database"
fi
done_testing
