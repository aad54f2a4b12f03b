#!/bin/sh
# Writes the seed corpora of the fuzz harnesses, one folder per harness.
# Usage: seeds.sh TESTS_SRCDIR OUTDIR   (CC: the compiler, default cc)
# The ELF seeds are small programs compiled here in the shapes icppd
# meets: frame pointers or not, PIE or not, a shared library, stripped,
# DWARF or not; the record seeds are streams written by seed_records.c.
set -eu
src=$1
out=$2
cc=${CC:-cc}
tmp=$out/.build
mkdir -p "$tmp"
tmp=$(cd "$tmp" && pwd)
cat >"$tmp/prog.c" <<'PROG'
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) int leaf(int x) { return x * 3 + 1; }
__attribute__((noinline)) int big(int n)
{
	volatile char buf[256];
	for (int i = 0; i < n && i < 256; i++)
		buf[i] = (char)leaf(i);
	return buf[n % 256];
}
/* at -O2 a jump to leaf: a tail call's site */
__attribute__((noinline)) int tail(int x) { return leaf(x + 1); }
__attribute__((noinline)) int rec(int n) { return n ? rec(n - 1) + big(n) + tail(n) : 0; }
int main(int argc, char **argv)
{
	(void)argv;
	printf("%d\n", rec(argc + 3));
	return 0;
}
PROG
$cc -O2 -g -fno-omit-frame-pointer -o "$tmp/prog-fp" "$tmp/prog.c"
$cc -O2 -fomit-frame-pointer -o "$tmp/prog-nofp" "$tmp/prog.c"
$cc -O1 -g -fno-pie -no-pie -o "$tmp/prog-nopie" "$tmp/prog.c"
$cc -O2 -fPIC -shared -o "$tmp/prog.so" "$tmp/prog.c"
cp "$tmp/prog-nofp" "$tmp/prog-stripped"
strip --strip-all "$tmp/prog-stripped"
for h in module cfi notes elfimage lines; do
	mkdir -p "$out/$h"
	for f in prog-fp prog-nofp prog-nopie prog.so prog-stripped; do
		cp "$tmp/$f" "$out/$h/$f"
	done
done
# inlined subroutines, with DWARF 5 range lists and DWARF 4 ranges
$cc -O2 -g -I"$src/progs" -o "$out/lines/prog-inline" "$src/progs/inlined.c"
$cc -O2 -gdwarf-4 -I"$src/progs" -o "$out/lines/prog-inline4" "$src/progs/inlined.c"
mkdir -p "$out/record"
$cc -I"$src/.." -o "$tmp/seed_records" "$src/fuzz/seed_records.c"
"$tmp/seed_records" "$tmp/prog-fp" "$out/record"
mkdir -p "$out/config"
cp "$src/../systemd/icppd.conf" "$out/config/installed"
cat >"$out/config/every" <<'CONF'
# every setting
database /var/lib/icppd/icppd.db
socket = /run/icppd/icppd.sock
freq 99
exe /usr/bin/python3.11
exe /usr/bin/make
comm nginx
pid 1
flush-interval 10
segment = 600
keep-days 30
max-size 512
mmap-pages 64

foreground
CONF
mkdir -p "$out/folded"
cat >"$out/folded/stacks" <<'FOLD'
_start;__libc_start_main;main;work;leaf 120
_start;__libc_start_main;main;work 3.5
_start;__libc_start_main;main;other 0.25
main;[unknown caller] 7
FOLD
printf 'a;b 1\r\nc 2\n\n' >"$out/folded/crlf"
mkdir -p "$out/perfmap"
cat >"$out/perfmap/node" <<'MAP'
3a1c00a0 1c LazyCompile:~run /app/index.js:12
3a1c0100 80 Builtin:ArgumentsAdaptorTrampoline
3a1c0100 40 Stub:CEntryStub
7f0000001000 ffffffffffffffff huge
zz 10 not hex
3a1c0200 0 empty
MAP
printf '10 10 a\n20 10 b' >"$out/perfmap/nonewline"
mkdir -p "$out/fleet"
printf "['_start','main','work']\tprecise\t120\t3\n['main','w\\\\'x\\\\\\\\']\tambiguous\t2.5\t1\n" >"$out/fleet/report"
printf 'h/1\t1\t0\t/bin/p\t/bin/p\tab\t4096\tmain\t0\t8\t0\t5\nh/1\t2\t1\t/bin/p\t/lib/c\\tx\tcd\t64\tw\\\\n\t4100\t40\t3\t3\nh/2\t7\t3\t/bin/p\t/bin/p\tab\t1\tq\t0\t-8\t1\t1\n' >"$out/fleet/paths"
# A build's calls as the store keeps them (profile/build_calls.h): two
# calls (one through an import), an export, two named functions.
mkdir -p "$out/buildcalls"
printf '\111\103\120\103\001\000\000\000\002\000\000\000\000\000\000\000\001\000\000\000\000\000\000\000\002\000\000\000\000\000\000\000\003\000\000\000\000\000\000\000\013\000\000\000\000\000\000\000\220\040\040\000\340\003\040\020\100\001\020\200\042\011\200\040\017\200\002\023\155\145\155\143\160\171\000\146\000\147\000' >"$out/buildcalls/small"
# A stripped program whose .gnu_debuglink names c.debug, and its debug
# file (fuzz_debuglink: a 16-bit length, the program, the candidate);
# then the program with a debug file of another build.
mkdir -p "$out/debuglink"
objcopy --only-keep-debug "$tmp/prog-fp" "$tmp/c.debug"
(cd "$tmp" && objcopy --strip-all --add-gnu-debuglink=c.debug prog-fp prog-linked)
seed_link() {	# seed_link PROG CANDIDATE OUT
	n=$(stat -c %s "$1")
	printf "\\$(printf %03o $((n & 255)))\\$(printf %03o $((n >> 8 & 255)))" >"$3"
	cat "$1" "$2" >>"$3"
}
seed_link "$tmp/prog-linked" "$tmp/c.debug" "$out/debuglink/match"
objcopy --only-keep-debug "$tmp/prog-nopie" "$tmp/other.debug"
seed_link "$tmp/prog-linked" "$tmp/other.debug" "$out/debuglink/other"
# Rows of the store's inlined table (report/dwarf.c): a chain, a row
# with no inlined function, one with a control byte.
mkdir -p "$out/inlined"
printf 'mix\tinlined.h\t12\nhelper_a\tinlined.c\t30\n\tinlined.c\t41' >"$out/inlined/chain"
printf '\tmain.c\t7' >"$out/inlined/plain"
printf 'a\001b\tf.c\t3\n\t\t0' >"$out/inlined/control"
