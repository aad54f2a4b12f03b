#!/bin/sh
# --help, --version, and the man pages kept in step with the options.
. "$TESTS_SRCDIR/e2e/lib.sh"
man=$TESTS_SRCDIR/../man

out=$("$ICPPD" --help)
is $? 0 "icppd --help exits 0"
contains "$out" "record" "icppd --help lists record"
out=$("$ICPPD" record --help)
is $? 0 "icppd record --help exits 0"
contains "$out" "Usage: icppd record" "record --help shows usage"
contains "$("$ICPPD" --version)" "icppd 0." "--version prints the version"
"$ICPPD" >/dev/null 2>&1
is $? 2 "no subcommand: usage error 2"

# Every long option of record --help is documented in icppd-record(1).
for opt in $("$ICPPD" record --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
	grep -q -- "\\\\-\\\\-${opt#--}" "$man/icppd-record.1" || grep -q -- "$opt" "$man/icppd-record.1"
	ok $? "icppd-record(1) documents $opt"
done
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
done_testing
