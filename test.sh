#!/bin/sh
# The whole test suite on a fresh Debian 12 machine: installs what is
# needed, builds with -Wall -Wextra -Werror and runs every test, then
# builds again with AddressSanitizer and UBSan and runs them all again,
# then builds the libFuzzer harnesses with clang and runs each for a few
# seconds (tests/fuzz/fuzz.sh; "make fuzz" there runs them longer).
# The last line is "N passed, N failed[, N skipped]".
set -u
cd "$(dirname "$0")"
top=$(pwd)
sh scripts/deps.sh test || { echo "icppd: installing dependencies failed"; echo "0 passed, 1 failed"; exit 1; }
./autogen.sh >/dev/null 2>&1 || { echo "icppd: autogen failed"; echo "0 passed, 1 failed"; exit 1; }
# Out-of-tree builds need a source tree that is not configured in place.
[ -f config.status ] && make -s distclean >/dev/null 2>&1
jobs=$(nproc)
status=0
broken=""	# the steps that failed outside any test (a build that broke)
for variant in plain asan fuzz; do
	dir=$top/build-test-$variant
	rm -rf "$dir"
	mkdir -p "$dir"
	flags=--enable-werror
	[ $variant = asan ] && flags="$flags --enable-sanitizers"
	[ $variant = fuzz ] && flags="$flags --enable-fuzzing CC=clang"
	echo "== $variant build: configure $flags"
	( cd "$dir" && "$top/configure" -q $flags && make -s -j"$jobs" ) ||
		broken="$broken $variant-build"
	echo "== $variant build: make check"
	( cd "$dir" && make -s -j"$jobs" check ) || broken="$broken $variant-check"
done
pass=0 fail=0 skip=0
for log in "$top"/build-test-*/test-suite.log; do
	[ -f "$log" ] || continue
	p=$(sed -n 's/^# PASS: *//p' "$log")
	f=$(sed -n 's/^# FAIL: *//p' "$log")
	e=$(sed -n 's/^# ERROR: *//p' "$log")
	x=$(sed -n 's/^# XPASS: *//p' "$log")
	s=$(sed -n 's/^# SKIP: *//p' "$log")
	pass=$((pass + ${p:-0}))
	fail=$((fail + ${f:-0} + ${e:-0} + ${x:-0}))
	skip=$((skip + ${s:-0}))
done
# Each test that did not pass, with the end of its log: CI shows only
# the end of this script's output, and a flaky failure must be
# diagnosable from that alone.
for trs in $(grep -l -s -E '^:global-test-result: (FAIL|ERROR|XPASS)' \
	$(find "$top"/build-test-* -name '*.trs' 2>/dev/null)); do
	# (its failed checks first, then the end of its log, each line
	# cut short: one check's dump of a whole file hid which failed)
	echo "== ${trs#"$top"/} did not pass; its failed checks and the end of its log:"
	{ grep -v -E "^(ok [0-9]|PASS: |FAIL: )" "${trs%.trs}.log" |
		grep -A 2 -E "^not ok" | head -n 24
	  echo "..."
	  grep -v -E "^(ok [0-9]|not ok [0-9]|PASS: |FAIL: )" \
		"${trs%.trs}.log" | tail -n 12
	} | cut -c 1-300 | sed "s/^/   /"
done
# A step that failed with no test failing (a harness that did not
# compile stops make check before its tests run) is a failure too, and
# the last line says so; a make check that failed tests is counted by
# them.
for step in $broken; do
	log=$top/build-test-${step%-*}/test-suite.log
	case $step in
	*-check) grep -q -E '^# (FAIL|ERROR|XPASS): *[1-9]' "$log" 2>/dev/null &&
		continue ;;
	esac
	echo "== $step failed (its output is above)"
	fail=$((fail + 1))
done
[ $fail -eq 0 ] && [ $pass -eq 0 ] && fail=1	# nothing ran
[ $fail -ne 0 ] && status=1
if [ $skip -gt 0 ]; then
	echo "$pass passed, $fail failed, $skip skipped"
else
	echo "$pass passed, $fail failed"
fi
exit $status
