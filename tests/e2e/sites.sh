#!/bin/sh
# icppd sites: the static height change at every direct call site equals
# the one training measured there, with and without frame pointers, in
# an executable (PIE or not) and in a shared library; indirect calls are
# the only measured edges without a static site.
. "$TESTS_SRCDIR/e2e/lib.sh"
require_perf
ms=20

# sites_table MODULE_FILE: "icppd sites" into table sites(ret, caller,
# callee, delta) of the test database.
sites_table() {
	"$ICPPD" sites "$1" > "$tmp/sites.out"
	status=$?
	grep -v '^#' "$tmp/sites.out" | tr '\t' '|' > "$tmp/sites.psv"
	q "DROP TABLE IF EXISTS sites; CREATE TABLE sites (ret TEXT, caller TEXT,
		callee TEXT, delta INTEGER);"
	sqlite3 -bail "$db" ".import $tmp/sites.psv sites" 2>&1
	return $status
}

# The measured edges whose call site is in MODULE: "ret delta callee".
measured() {	# measured MODULE_LIKE
	q "SELECT DISTINCT printf('0x%x', c.call_site), c.height - p.height, f.name
		FROM path_nodes c JOIN path_nodes p ON p.id = c.parent_id
		JOIN functions pf ON pf.id = p.function_id
		JOIN modules pm ON pm.id = pf.module_id
		JOIN functions f ON f.id = c.function_id
		WHERE pm.path LIKE '$1'" | tr '|' ' '
}

# check LABEL MODULE_FILE MIN INDIRECT...: training measured at least
# MIN call edges in MODULE_FILE; each has a static site with the same
# delta, but for calls through a pointer of the functions INDIRECT
# names (patterns).  _start calls __libc_start_main through the GOT:
# listed by the symbol the relocation names.
check() {
	label=$1 file=$2 min=$3
	shift 3
	sites_table "$file"
	is $? 0 "$label: sites exits 0"
	measured "%/$(basename "$file")" > "$tmp/measured"
	total=$(wc -l < "$tmp/measured")
	ok $([ "$total" -ge "$min" ]; echo $?) "$label: training measured $total call edges in it (>= $min)"
	wrong= missing=
	while read -r ret delta callee; do
		static=$(q "SELECT group_concat(delta) FROM sites WHERE ret = '$ret'")
		if [ -z "$static" ]; then
			through_pointer=
			for f; do
				case $callee in $f) through_pointer=1 ;; esac
			done
			[ -n "$through_pointer" ] || missing="$missing $ret:$callee"
		elif [ "$static" != "$delta" ]; then
			wrong="$wrong $ret:$callee:measured=$delta,static=$static"
		fi
	done < "$tmp/measured"
	is "$wrong" "" "$label: every static delta equals the measured one"
	is "$missing" "" "$label: every measured direct call has a static site"
	for f; do
		is "$(q "SELECT count(*) FROM sites WHERE callee GLOB '$f'")" 0 \
			"$label: the call of $f through a pointer is not listed"
	done
	case $label in libwork.so) return ;; esac
	is "$(q "SELECT count(*) FROM sites WHERE caller = '_start'
		AND callee = '__libc_start_main@plt'")" 1 \
		"$label: _start's call through the GOT names __libc_start_main"
}

for variant in nofp fp nopie; do
	"$ICPPD" train $TRAIN_OPTS -q -d "$db" -- "$PROGS/heights-$variant" $ms >/dev/null
	check "heights-$variant" "$PROGS/heights-$variant" 8 indirect
done
"$ICPPD" train $TRAIN_OPTS -q -d "$db" -- "$PROGS/threads" $ms >/dev/null
check threads "$PROGS/threads" 4
"$ICPPD" train $TRAIN_OPTS -q -d "$db" -- "$PROGS/uselib" $ms >/dev/null
check libwork.so "$PROGS/libwork.so" 1

# heights' recursion: one site, the frame recurse adds, listed by caller
out=$("$ICPPD" sites --function recurse "$PROGS/heights-nofp")
is "$(echo "$out" | awk -F '\t' '$3 == "recurse"' | wc -l)" 1 \
	"sites --function recurse: the one recursive call"

# bad input: one line, exit 1
printf 'not an ELF file' > "$tmp/junk"
out=$("$ICPPD" sites "$tmp/junk" 2>&1)
is "$?" 1 "sites on a text file: exit 1"
is "$out" "icppd: sites: $tmp/junk: not an ELF file" "sites on a text file: says so"
out=$("$ICPPD" sites "$tmp/none" 2>&1)
is "$?" 1 "sites on a missing file: exit 1"
is "$out" "icppd: sites: $tmp/none: No such file or directory" "sites on a missing file: says so"
done_testing
