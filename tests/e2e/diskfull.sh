#!/bin/sh
# A database on a full disk (issue 51, item 6): record must say the
# recording could not be stored, exit non-zero, and lose nothing it
# sampled.  A flush the disk refuses whole is tried again with the
# counts alone (a path map is most of a flush's bytes); the counts the
# database never took at the end go to a file named in the error.  A
# small tmpfs is the full disk; mounting one needs root.
. "$TESTS_SRCDIR/e2e/lib.sh"
require_root
require_perf

fs=$tmp/fs
mkdir -p "$fs"
if ! mount -t tmpfs -o size=1m tmpfs "$fs" 2>"$tmp/mount.err"; then
	echo "1..0 # SKIP cannot mount a tmpfs: $(head -1 "$tmp/mount.err")"
	exit 0
fi
trap 'umount "$fs" 2>/dev/null; rm -rf "$tmp"' EXIT
TMPDIR=$tmp
export TMPDIR

# samples with a context identifier: the database's and the spill's
stored() { q "SELECT coalesce(sum(samples), 0) FROM v_cids" "$1" 2>/dev/null || echo 0; }
spilled() {	# spilled ERRFILE
	f=$(sed -n 's/.*written to \([^ ]*\) (free space.*/\1/p' "$1")
	[ -n "$f" ] && awk -F'\t' '!/^#/ { s += $8 } END { print s + 0 }' "$f" ||
		echo 0
}
cids() { sed -n 's/.*samples, \([0-9]*\) with a context identifier.*/\1/p' "$1"; }

# 1. The disk fills once the run has begun: no flush is taken, and
# every sample is in the spill file.
fdb=$fs/full.db
( i=0
  until [ "$(q "SELECT count(*) FROM runs" "$fdb" 2>/dev/null)" = 1 ] ||
	[ $i -ge 200 ]; do sleep 0.05; i=$((i + 1)); done
  dd if=/dev/zero of="$fs/fill" bs=4k 2>/dev/null
  : >"$tmp/filled" ) &
"$ICPPD" record -d "$fdb" -- sh -c \
	"until [ -f '$tmp/filled' ]; do sleep 0.05; done; exec '$PROGS/paths' 300" \
	>/dev/null 2>"$tmp/full.err"
rc=$?
wait
is $rc 1 "disk full from the start: record exits 1"
contains "$(cat "$tmp/full.err")" "samples not in the database, written to $tmp/icppd-run-1-" \
	"... and names the file that holds them"
total=$(cids "$tmp/full.err")
got=$(($(stored "$fdb") + $(spilled "$tmp/full.err")))
ok $([ "${total:-0}" -ge "$(min_samples 300)" ]; echo $?) "... of $total samples with a context identifier"
is "$got" "$total" "... every one in the database or the file"
rm -f "$fs"/*

# 2. A disk that takes some flushes: whatever is not stored is said,
# record exits 1, and the samples add up.
mount -o remount,size=600k "$fs"
pdb=$fs/part.db
"$ICPPD" record -d "$pdb" -- "$PROGS/paths" 1500 \
	>/dev/null 2>"$tmp/part.err"
is $? 1 "a disk that fills mid-run: record exits 1"
contains "$(cat "$tmp/part.err")" "storing run 1" "... and says what it could not store"
total=$(cids "$tmp/part.err")
got=$(($(stored "$pdb") + $(spilled "$tmp/part.err")))
is "$got" "$total" "... $total samples, every one in the database or the file"
ok $([ "$(stored "$pdb")" -gt 0 ]; echo $?) "... the flushes that fit kept ($(stored "$pdb") stored)"
is "$(q "PRAGMA integrity_check" "$pdb")" ok "... the database intact"
done_testing
