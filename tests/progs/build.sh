#!/bin/sh
# Builds the test programs with exact flags: with and without frame
# pointers, PIE and non-PIE, stripped, a shared library, threads.
# Usage: build.sh SRCDIR OUTDIR
# PROG_CFLAGS is added to every program: -DBURN_FAST or -DBURN_SLOW=N
# change how fast the burn loop runs (burn.h), to prove that the tests
# do not depend on it.
set -e
src=$1
out=$2
cc=${CC:-gcc}
common="-O2 -g -Wall -I$src ${PROG_CFLAGS:-}"
mkdir -p "$out"
$cc $common -fno-omit-frame-pointer -o "$out/heights-fp" "$src/heights.c"
$cc $common -fomit-frame-pointer -o "$out/heights-nofp" "$src/heights.c"
$cc $common -fno-omit-frame-pointer -fno-pie -no-pie -o "$out/heights-nopie" "$src/heights.c"
# Same code as heights-nofp, without any symbol table.
cp "$out/heights-nofp" "$out/heights-stripped"
strip --strip-all "$out/heights-stripped"
$cc $common -pthread -o "$out/threads" "$src/threads.c"
$cc $common -pthread -o "$out/offcpu" "$src/offcpu.c"
$cc $common -fPIC -shared -o "$out/libwork.so" "$src/libwork.c"
$cc $common -o "$out/uselib" "$src/uselib.c" -L"$out" -lwork -Wl,-rpath,'$ORIGIN'
$cc $common -o "$out/closelib" "$src/closelib.c" -ldl
$cc $common -o "$out/forker" "$src/forker.c"
$cc $common -fno-omit-frame-pointer -o "$out/demo" "$src/demo.c"
$cc $common -fno-omit-frame-pointer -o "$out/collide" "$src/collide.c"
$cc $common -fno-omit-frame-pointer -o "$out/dispatch" "$src/dispatch.c"
$cc $common -fno-omit-frame-pointer -o "$out/arrdemo" "$src/arrdemo.c"
$cc $common -fomit-frame-pointer -o "$out/sigframe" "$src/sigframe.c"
$cc $common -rdynamic -o "$out/mapper" "$src/mapper.c" -ldl
$cc $common -o "$out/syscalls" "$src/syscalls.c"
$cc $common -o "$out/jit" "$src/jit.c"
$cc $common -o "$out/coro" "$src/coro.c"
$cc $common -o "$out/paths" "$src/paths.c"
# Inlined functions: DWARF 5 (gcc's default: range lists, .debug_aranges),
# DWARF 4 (.debug_ranges) and clang's (no .debug_aranges: every unit is
# read at once), when clang is here.
$cc $common -o "$out/inlined" "$src/inlined.c"
$cc $common -gdwarf-4 -o "$out/inlined-dwarf4" "$src/inlined.c"
$cc $common -DINLINED_MULTI -o "$out/inlined-multi" "$src/inlined_cold.c" "$src/inlined.c"
if command -v clang >/dev/null; then
	clang $common -o "$out/inlined-clang" "$src/inlined.c"
fi
${CXX:-g++} $common -o "$out/shapes" "$src/shapes.cc"
$cc -O2 -Wall -o "$out/shpatch" "$src/shpatch.c"
$cc -O2 -Wall -o "$out/ctlpeer" "$src/ctlpeer.c"
$cc -O2 -Wall -o "$out/hostile_http" "$src/hostile_http.c"
# Rust, when rustc is here (./test.sh installs Debian's): its default
# mangling (legacy: _ZN...17h<hash>E) and v0 (_R...).
if command -v rustc >/dev/null; then
	rustc -O -g -o "$out/rustwork" "$src/rustwork.rs"
	rustc -O -g -C symbol-mangling-version=v0 -o "$out/rustwork-v0" \
		"$src/rustwork.rs"
fi
# Goroutines, when Go is here (./test.sh installs Debian's golang-go),
# with .debug_frame and without DWARF (-w, as release builds strip it:
# frame pointers only); and Go code on the thread's system stack.  The build cache is the output directory's, so a
# build never writes to the user's home.
if command -v go >/dev/null; then
	abs=$(cd "$out" && pwd)
	for v in goroutines:-ldflags= goroutines-nodwarf:-ldflags=-w; do
		GOCACHE=$abs/.gocache GO111MODULE=off HOME=$abs \
			go build "${v#*:}" -o "$out/${v%%:*}" "$src/goroutines.go"
	done
	GOCACHE=$abs/.gocache GO111MODULE=off HOME=$abs \
		go build -o "$out/gcassist" "$src/gcassist.go"
fi
