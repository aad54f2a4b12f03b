#!/bin/sh
# The CFI cache (icppd-record(1) --no-cache): a second run of the same
# binaries reads libc's table from the cache in place of libdwarf's
# listing, and libc's symbols in place of its symbol tables, and learns
# the same call paths (heights-nofp has no frame
# pointers: every step is a CFI rule); --no-cache neither reads nor
# writes it; a directory others may write, or a symlink, is refused
# with a warning and the run goes on without it.
. "$TESTS_SRCDIR/e2e/lib.sh"
require_perf

counter() {	# counter NAME DB: the run's counter, 0 when absent
	q "SELECT coalesce(max(value), 0) FROM v_run_counters WHERE name = '$1'" "$2"
}
paths() {	# paths DB: the distinct call paths learned to the program's
	# own functions, one a line (not to a stray sample's, in the code
	# that writes its truth)
	q "SELECT DISTINCT path FROM v_paths WHERE function IN ('main',
		'path_a', 'path_b', 'work', 'leaf', 'recurse', 'indirect')
		ORDER BY path" "$1"
}

# (require_perf's probe leaves the cache alone; syms_before counts what
# is there all the same)
# Symbols bound at start: a sample inside ld.so's lazy binding
# (_dl_runtime_resolve_xsave, whose CFA is RBX + 32, a register icppd
# does not track) fails a step as bad_cfi, with or without the cache:
# under three busy loops 4 of 90 runs had a bad_cfi step (the one
# traced was there), and none of 40 bound at start.  (A sample in
# __cxa_finalize at exit, 1 run in 25 under load, failed a step in
# crtstuff's __do_global_dtors_aux until 6479e16 and 8da335e:
# tests/e2e/shared_lib.sh's closelib checks that walk every run.)
LD_BIND_NOW=1
export LD_BIND_NOW
syms_before=$(ls "$ICPPD_CACHE_DIR" 2>/dev/null | grep -c '\.sym$')
"$ICPPD" train $TRAIN_OPTS -q -d "$tmp/1.db" -- "$PROGS/heights-nofp" 30 >/dev/null 2>&1
is $? 0 "first train: exit 0"
ok $([ "$(counter cfi.cache_stores "$tmp/1.db")" -ge 1 ]; echo $?) \
	"first run: libc's table stored ($(counter cfi.cache_stores "$tmp/1.db"))"
is "$(counter cfi.cache_hits "$tmp/1.db")" 0 "first run: nothing read from the cache"
is "$(ls "$ICPPD_CACHE_DIR" | grep -c '\.cfi$')" "$(counter cfi.cache_stores "$tmp/1.db")" \
	"one file in the cache per table stored"
is "$(stat -c %a "$ICPPD_CACHE_DIR")" 700 "the directory made is the user's alone"
# libc has over SYM_CACHE_MIN (2,048) functions: its symbols are kept too
sym1=$(($(counter symbols.cache_stores "$tmp/1.db") + $(counter symbols.cache_hits "$tmp/1.db")))
ok $([ "$sym1" -ge 1 ]; echo $?) \
	"first run: libc's symbols stored or read back ($sym1)"
is "$(ls "$ICPPD_CACHE_DIR" | grep -c '\.sym$')" \
	"$((syms_before + $(counter symbols.cache_stores "$tmp/1.db")))" \
	"one file in the cache per symbol table stored"

"$ICPPD" train $TRAIN_OPTS -q -d "$tmp/2.db" -- "$PROGS/heights-nofp" 30 >/dev/null 2>&1
is $? 0 "second train: exit 0"
is "$(counter cfi.cache_hits "$tmp/2.db")" "$(counter cfi.cache_stores "$tmp/1.db")" \
	"second run: every table the first stored read back"
is "$(counter cfi.cache_stores "$tmp/2.db")" 0 "second run: nothing stored"
is "$(counter symbols.cache_hits "$tmp/2.db") $(counter symbols.cache_stores "$tmp/2.db")" \
	"$sym1 0" "second run: every symbol table read back, none stored"
is "$(counter unwind.bad_cfi "$tmp/2.db") $(counter unwind.no_cfi "$tmp/2.db")" "0 0" \
	"second run: no step without a rule"
ok $([ "$(counter unwind.complete "$tmp/2.db")" -ge "$(min_samples 270)" ]; echo $?) \
	"second run: whole paths unwound ($(counter unwind.complete "$tmp/2.db"))"
p1=$(paths "$tmp/1.db")
is "$(paths "$tmp/2.db")" "$p1" "the same call paths learned ($(echo "$p1" | wc -l))"
contains "$p1" "__libc_start_call_main;main;path_b;leaf" \
	"... through libc's frames to leaf"

# --no-cache: the directory is left as it was, no counter is stored
before=$(ls -l --time-style=+%s.%N "$ICPPD_CACHE_DIR")
"$ICPPD" train $TRAIN_OPTS -q --no-cache -d "$tmp/3.db" -- "$PROGS/heights-nofp" 10 >/dev/null 2>&1
is $? 0 "--no-cache: exit 0"
is "$(q "SELECT count(*) FROM v_run_counters WHERE name LIKE 'cfi.%' OR name LIKE 'symbols.%'" "$tmp/3.db")" 0 \
	"--no-cache: no cache counters"
is "$(ls -l --time-style=+%s.%N "$ICPPD_CACHE_DIR")" "$before" "--no-cache: the directory untouched"

# a directory others may write: refused, said in one line, the run goes on
mkdir -m 777 "$tmp/open"
chmod 777 "$tmp/open"
err=$(ICPPD_CACHE_DIR=$tmp/open "$ICPPD" record -d "$tmp/4.db" -- "$PROGS/heights-nofp" 10 2>&1 >/dev/null)
is $? 0 "a directory others may write: the run goes on"
contains "$err" "icppd: warning: CFI cache $tmp/open: Operation not permitted; every binary's frame section and symbols are read afresh (the directory must be yours alone; --no-cache goes without)" \
	"... and says why"
is "$(ls "$tmp/open" | wc -l)" 0 "... nothing written there"
ln -s "$ICPPD_CACHE_DIR" "$tmp/link"
err=$(ICPPD_CACHE_DIR=$tmp/link "$ICPPD" record -d "$tmp/5.db" -- "$PROGS/heights-nofp" 10 2>&1 >/dev/null)
contains "$err" "icppd: warning: CFI cache $tmp/link: Operation not permitted" "a symlink: not followed"
# the $HOME default, when ICPPD_CACHE_DIR is not set
HOME=$tmp/home ICPPD_CACHE_DIR= XDG_CACHE_HOME= "$ICPPD" record -q -d "$tmp/6.db" -- "$PROGS/heights-nofp" 10 >/dev/null 2>&1
ok $(ls "$tmp/home/.cache/icppd/key" >/dev/null 2>&1; echo $?) "default: ~/.cache/icppd"
XDG_CACHE_HOME=$tmp/xdg ICPPD_CACHE_DIR= "$ICPPD" record -q -d "$tmp/7.db" -- "$PROGS/heights-nofp" 10 >/dev/null 2>&1
ok $(ls "$tmp/xdg/icppd/key" >/dev/null 2>&1; echo $?) "with XDG_CACHE_HOME: \$XDG_CACHE_HOME/icppd"
done_testing
