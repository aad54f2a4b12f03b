#!/bin/sh
# Rust's names, as perf shows them, in every format: the legacy scheme
# (_ZN...17h<hash>E: the hash dropped) and v0 (_R...), through
# libiberty's demangler.  The program is built by tests/progs/build.sh
# when rustc is here (./test.sh installs Debian's).
. "$TESTS_SRCDIR/e2e/lib.sh"
require_perf

if [ ! -x "$PROGS/rustwork" ] || [ ! -x "$PROGS/rustwork-v0" ]; then
	skip "no rustc when the test programs were built" "Rust names"
	done_testing
	exit $?
fi

for prog in rustwork rustwork-v0; do
	case $prog in
	rustwork) scheme=legacy pat='17h[0-9a-f]\{16\}E' ;;
	*) scheme=v0 pat='^_R' ;;
	esac
	# the binary has such symbols: what the test is about
	mangled=$(nm "$PROGS/$prog" | awk '{ print $NF }' | grep -c -- "$pat")
	if [ "$mangled" -eq 0 ]; then
		skip "this rustc does not mangle $scheme by default" "$scheme names"
		continue
	fi
	db=$tmp/$prog.db
	"$ICPPD" record -q -d "$db" -- "$PROGS/$prog" 300 >/dev/null
	is $? 0 "$scheme: record exit 0"
	for fmt in folded text json svg pprof; do
		"$ICPPD" report -d "$db" -f "$fmt" --k inf -o "$tmp/r.$fmt" 2>/dev/null
		is $? 0 "$scheme, $fmt: report exit 0"
		if [ "$fmt" = pprof ]; then
			gzip -dc "$tmp/r.pprof" | tr -c '[:print:]' '\n' >"$tmp/r.txt"
		else
			cp "$tmp/r.$fmt" "$tmp/r.txt"
		fi
		for name in rustwork::leaf rustwork::middle rustwork::outer::top rustwork::main \
			std::rt::lang_start_internal; do
			ok $(grep -q -F "$name" "$tmp/r.txt"; echo $?) "$scheme, $fmt: $name named"
		done
		ok $(! grep -q -e '_RNv' -e '_ZN[0-9]' -e '::h[0-9a-f]\{16\}' -e '17h[0-9a-f]\{16\}E' \
			"$tmp/r.txt"; echo $?) "$scheme, $fmt: no mangled name, no hash"
	done
	# the call path itself, as perf --call-graph shows it
	folded=$("$ICPPD" report -d "$db" -f folded --k inf --no-inline 2>/dev/null)
	contains "$folded" ";rustwork::main;rustwork::outer::top;rustwork::middle;rustwork::leaf " \
		"$scheme: main -> outer::top -> middle -> leaf"
	# perf's hottest whole stack of the same program, every name alike
	if command -v perf >/dev/null && perf record -q -e cpu-clock:u -F 1000 --call-graph dwarf \
		-o "$tmp/perf.data" -- "$PROGS/$prog" 300 >/dev/null 2>&1; then
		theirs=$(perf script -i "$tmp/perf.data" -F ip,sym --no-inline 2>/dev/null | awk '
			NF == 0 { if (n) { s = f[n]; for (i = n - 1; i >= 1; i--) s = s ";" f[i]; c[s]++ }
				  n = 0; next }
			{ sym = $2; for (i = 3; i <= NF; i++) sym = sym " " $i
			  sub(/\+0x[0-9a-f]+$/, "", sym); f[++n] = sym }
			END { for (s in c) if (c[s] > m) { m = c[s]; best = s }; print best }')
		ours=$(printf '%s\n' "$folded" | awk '{ w = $NF; s = $0; sub(/ [0-9.]+$/, "", s)
			if (w > m) { m = w; best = s } } END { print best }')
		is "$ours" "$theirs" "$scheme: the hottest stack named frame by frame as perf names it"
	else
		skip "no perf tool (apt-get install linux-perf)" "$scheme: names as perf's"
	fi
done
done_testing
