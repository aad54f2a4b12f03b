#!/bin/sh
# bench/inline.sh - inlined frames against perf's: each function's self
# share, with the functions inlined where the samples fell as functions
# of their own, as perf shows them with inline frames on.
#
# perf: perf record --call-graph dwarf, then perf script --inline (its
# inline frames, from addr2line): each sample's innermost frame.
# icppd: icppd record, then icppd report --sort sym (a perf report
# --no-children-style table), both at HZ (default 4000) samples a
# second.  Medians of REPS interleaved runs of each,
# over user-space samples; the functions with at least 1% in either,
# the inlined ones marked, and the difference in points.
#
# Workloads, C built with -O2 -g:
#   inlined  tests/progs/inlined.c, 3 s of CPU: mix inlined from a header
#            into helper_a, inlined into work; helper_b inlined, calling
#            an out-of-line callee
#   lookup   icppd's inference engine (bench/lookup.c): a path map of
#            a million paths built, then 20 million CID lookups, hash
#            probes inlined from common/hindex.h and the like
# Usage: bench/inline.sh [BUILDDIR]; environment: REPS (default 5).
. "$(dirname "$0")/lib.sh"

[ -x "$build/bench/lookup" ] || { echo "bench: make bench/lookup first" >&2; exit 1; }
modes="perf icppd"
hz=${HZ:-4000}

# leaves MODE CMD...: one run's shares, "NAME PERCENT" per function.
leaves() {
	mode=$1
	shift
	if [ "$mode" = perf ]; then
		perf record -q -e "$event:u" -F "$hz" --call-graph dwarf \
			-o "$work/p.data" -- "$@" >/dev/null 2>&1
		# perf's quirk: where DWARF names a function otherwise than
		# its symbol (msort_with_tmp.part.0, ___pthread_mutex_lock),
		# perf shows the DWARF name as a frame "inlined" at the
		# same address, or alone: that frame is the function itself
		perf script -i "$work/p.data" --inline -F ip,sym 2>/dev/null |
			awk 'BEGIN { RS = ""; FS = "\n" }
			     function frame(l, parts) {
				sub(/^[ \t]*/, "", l); parts[1] = l; sub(/ .*/, "", parts[1])
				sub(/^[0-9a-f]+ /, "", l); sub(/\+0x[0-9a-f]+/, "", l); return l }
			     function base(f) { sub(/ \(inlined\)$/, "", f); sub(/@.*/, "", f)
				sub(/\.(part|constprop|isra|cold)\..*$/, "", f); sub(/^_+(GI_+)?/, "", f); return f }
			     { l = frame($1, a); if (l ~ / \(inlined\)$/) {
				 o = frame($2, b)
				 if (a[1] != b[1]) l = base(l) " "
				 else if (base(l) == base(o)) l = o }
			       sub(/ $/, "", l); n[l]++; t++ }
			     END { for (f in n) printf "%s\t%.3f\n", f, 100 * n[f] / t }'
	else
		rm -f "$work/i.db"
		"$icppd" record -q -e "$event" -F "$hz" -d "$work/i.db" -- "$@" \
			>/dev/null 2>&1
		# the table's lines: samples, percent, then the name
		"$icppd" report -d "$work/i.db" --sort sym --min-percent 0 |
			awk '/^ *[0-9.]+ +[0-9.]+% / { p = $2; sub(/%/, "", p)
			     s = $0; sub(/^ *[0-9.]+ +[0-9.]+% +/, "", s)
			     printf "%s\t%s\n", s, p }'
	fi >"$work/one"
	# one line for the run: NAME=PERCENT pairs, tab-joined; a function
	# named as both tools name it (no symbol version, clone suffix or
	# leading underscores: perf takes DWARF's names, icppd the symbols)
	awk -F'\t' '{ f = $1; i = sub(/ \(inlined\)$/, "", f); sub(/@.*/, "", f)
		sub(/\.(part|constprop|isra|cold)\..*$/, "", f); sub(/^_+(GI_+)?/, "", f)
		# glibc: memcpy is the code of memmove under a second name
		sub(/^memcpy_/, "memmove_", f)
		if (i) f = f " (inlined)"; v[f] += $2 }
		END { for (f in v) printf "%s%s=%s", (k++ ? "\t" : ""), f, v[f]; print "" }' \
		"$work/one"
}

printf 'inlined frames: self shares (%%), medians of %s interleaved runs\n' "$reps"
for w in inlined lookup; do
	case $w in
	inlined) interleave $w leaves "$progs/inlined" 3000 ;;
	lookup) interleave $w leaves "$build/bench/lookup" 1000000 20000000 ;;
	esac
	printf '\n%s\n%-44s %7s %7s %7s\n' "$w" function perf icppd diff
	for m in perf icppd; do
		tr '\t' '\n' <"$work/$w.$m" | awk -F= -v m=$m 'NF >= 2 { print m "\t" $1 "\t" $2 }'
	done | awk -F'\t' -v reps="$reps" '
		{ v[$2, $1] = v[$2, $1] " " $3; names[$2] = 1 }
		function med(s,   a, n, i, j, t) {
			n = split(s, a, " ")
			for (; n < reps; n++) a[n + 1] = 0	# absent in a run: 0
			for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
				if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		}
		END {
			for (f in names) {
				p = med(v[f, "perf"]); i = med(v[f, "icppd"])
				if (p >= 1 || i >= 1)
					printf "%7.2f|%-44s %7.2f %7.2f %+7.2f\n", (p > i ? p : i), substr(f, 1, 44), p, i, i - p
			}
		}' | sort -g -r | cut -d'|' -f2- | tee "$work/$w.table"
	awk '/\(inlined\)/ { d = $NF < 0 ? -$NF : $NF; if (d > m) m = d; n++ }
	     END { printf "inlined functions: %d; largest difference %.2f points (target: 2)\n", n, m }' \
		"$work/$w.table"
done
