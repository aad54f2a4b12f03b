# bench/lib.sh - what the benchmark scripts share: locating the build,
# installing the tools compared against, a scratch folder, inputs and
# medians.  Sourced with the build folder as $1 (default: build).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
icppd=$build/icppd
progs=$build/tests/progs/bin
reps=${REPS:-5}
event=${EVENT:-cpu-clock}
sh "$top/scripts/deps.sh" bench
[ -x "$icppd" ] && [ -x "$progs/collide" ] ||
	{ echo "bench: build icppd first (./demo.sh)" >&2; exit 1; }

work=$(mktemp -d /tmp/icppd-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

# make_input FILE BYTES: compressible input, repeated system binaries
# (deterministic).
make_input() {
	for f in /usr/bin/perf /usr/bin/gdb /usr/lib/x86_64-linux-gnu/libc.so.6; do
		[ -f "$f" ] && cat "$f"
	done | head -c "$2" >"$1"
}

median() {	# stdin: numbers, one a line
	sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
