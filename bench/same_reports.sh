#!/bin/sh
# bench/same_reports.sh - a refactoring's check: the reports of two
# builds of icppd, byte for byte, on the same databases.  Records the
# bench workloads once with the new build (make of a small C project
# twice, g++ -O2 -c, the dispatch and collide test programs trained
# first), then runs every report format and view, compare and a
# second (stored) report with each build on its own copy of each
# database (a first report stores its inference and DWARF answers, so
# each build does that work itself), and diffs the outputs.  The one
# figure allowed to differ is the CPU time a first inference took.
#
# Usage: BASE=OLD_BUILDDIR bench/same_reports.sh [NEW_BUILDDIR]
# Exit status 0 when every output is the same, 1 otherwise (the diffs
# printed).
. "$(dirname "$0")/lib.sh"
. "$top/bench/workloads.sh"
old=${BASE:?BASE=OLD_BUILDDIR: the build to compare against}/icppd
[ -x "$old" ] || { echo "same_reports: no $old" >&2; exit 1; }

rec() {	# DB ARGS...: one record into DB with the new build
	db=$1
	shift
	"$icppd" record -q -d "$db" "$@" >/dev/null 2>&1 ||
		{ echo "same_reports: record $*: failed" >&2; exit 1; }
}
rec "$work/make.db" -- make -s -B -C "$work/proj"
rec "$work/make.db" -- make -s -B -C "$work/proj"
rec "$work/make25.db" --learn-freq 25 -- make -s -B -C "$work/proj"
rec "$work/gxx.db" -- g++ -O2 -c -o "$work/t.o" "$work/t.cc"
for p in dispatch collide; do
	"$icppd" train -q -d "$work/$p.db" -- "$progs/$p" >/dev/null 2>&1
	rec "$work/$p.db" -- "$progs/$p"
done

# The reports: one a line, "NAME ARGS...", run as icppd ARGS -d DB.
cat >"$work/views" <<'EOF'
text report
text2 report
folded report -f folded
exact report -f folded --exact
json report -f json
svg report -f svg
commframe report -f folded --comm-frame
k1lines report --k 1 --lines
k0 report --k 0
noinline report -f folded --no-inline
hot report --hot 5
hotjson report --hot 5 -f json
sort report --sort dso,sym
sortpid report --sort comm,pid
inclusive report --inclusive --k 2
similar report --similar 20
whole report --whole-chains -f folded
mangled report --no-demangle -f folded
budget0 report --budget 0 -f folded --run 1
base report --base 1
basefolded report -f folded --base 1
basesvg report -f svg --base 1
pprof report -f pprof
compare compare 1 2
comparejson compare 1 2 --format json --k 3
comparenoinline compare 1 2 --no-inline
EOF

fail=0 n=0 ok=0
for db in "$work"/*.db; do
	name=$(basename "$db" .db)
	for b in old new; do
		cp "$db" "$work/$name.$b.db"
	done
	while read -r view args; do
		for b in old new; do
			bin=$icppd
			[ $b = old ] && bin=$old
			# shellcheck disable=SC2086
			st=0
			"$bin" $args -d "$work/$name.$b.db" >"$work/out.$b" 2>&1 ||
				st=$?
			echo "status $st" >>"$work/out.$b"
			# the one figure that is a measurement
			sed -E 's/in [0-9.]+ s of CPU/in X s of CPU/g; s/[0-9.]+ s of CPU/X s of CPU/g' \
				"$work/out.$b" >"$work/cut.$b"
		done
		n=$((n + 1))
		[ $st = 0 ] && ok=$((ok + 1))
		if ! cmp -s "$work/cut.old" "$work/cut.new"; then
			echo "== $name $view: icppd $args differs"
			diff "$work/cut.old" "$work/cut.new" | head -20
			fail=$((fail + 1))
		fi
	done <"$work/views"
done
echo "same_reports: $n outputs ($ok of them exit 0), $fail differ"
[ $fail = 0 ]
