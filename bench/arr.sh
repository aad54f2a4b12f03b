#!/bin/sh
# bench/arr.sh - activation record resizing on the test programs and on
# real programs built from Debian source packages with frame pointers
# (bzip2, lua5.4, zstd; apt-get source, so deb-src is enabled if it is
# not).  For each workload:
#   - train on input A, then icppd arr (seed 1, default bounds);
#   - validation of the original and of the rewritten binary, without
#     retraining, on input A (offline) and on input B (online): the
#     precise share of the scored samples;
#   - the share of distinct training paths that are precise, before
#     and after, as the search predicts it (v_arr);
#   - stack growth (deepest training frame after / before) and the
#     search time;
#   - run time of the rewritten binary over the original's (medians of
#     REPS interleaved runs of input A).
# A workload whose map has no collision a pad can separate is refused by
# icppd arr ("nothing to gain"): its row says so.
#
# Usage: bench/arr.sh [BUILDDIR]   (default: build, made by ./demo.sh)
# Environment: REPS (default 5).
. "$(dirname "$0")/lib.sh"
src=$work/src
mkdir -p "$src"
sources=/etc/apt/sources.list.d/debian.sources
if [ -f "$sources" ] && ! grep -q deb-src "$sources"; then
	echo "bench: enabling deb-src in $sources for apt-get source" >&2
	sed -i 's/^Types: deb$/Types: deb deb-src/' "$sources"
	apt-get update -qq
fi
( cd "$src" && apt-get source -qq bzip2 lua5.4 zstd >/dev/null 2>&1 ) ||
	{ echo "bench: apt-get source failed" >&2; exit 1; }
fp="-O2 -g -fno-omit-frame-pointer"
( cd "$src"/bzip2-*/ && make -s bzip2 CFLAGS="$fp -D_FILE_OFFSET_BITS=64" ) >/dev/null 2>&1
( cd "$src"/lua5.4-*/src &&
	echo '#define DEB_HOST_MULTIARCH "x86_64-linux-gnu"' >lua5.4-deb-multiarch.h &&
	gcc $fp -DLUA_USE_POSIX -DLUA_USE_DLOPEN -o lua $(ls *.c | grep -v luac.c) -lm -ldl ) >/dev/null 2>&1
( cd "$src"/libzstd-*/ && make -s -j"$(nproc)" -C programs zstd MOREFLAGS="-fno-omit-frame-pointer -g" ) >/dev/null 2>&1
bzip2=$(echo "$src"/bzip2-*/bzip2)
lua=$(echo "$src"/lua5.4-*/src/lua)
zstd=$(echo "$src"/libzstd-*/programs/zstd)
for b in "$bzip2" "$lua" "$zstd"; do
	[ -x "$b" ] || { echo "bench: building $b failed" >&2; exit 1; }
done

make_input "$work/in1" 6000000
for f in /usr/share/common-licenses/* /usr/share/perl5/*.pm /usr/include/*.h; do
	[ -f "$f" ] && cat "$f"
done 2>/dev/null | head -c 6000000 >"$work/in2"
cat >"$work/a.lua" <<'LUA'
local function fib(n) if n < 2 then return n end return fib(n-1) + fib(n-2) end
local t = {}
for i = 1, 300000 do t[i] = (i * 7919) % 100003 end
table.sort(t)
local s = {}
for i = 1, 150000 do s[#s+1] = string.format("%d:%s", i, tostring(t[i])) end
local n = 0
for w in table.concat(s, ","):gmatch("%d+") do n = n + #w end
print(fib(29), n)
LUA
cat >"$work/b.lua" <<'LUA'
local words = {}
for i = 1, 200000 do words[i] = string.rep(string.char(97 + i % 26), 1 + i % 7) end
local count = {}
for _, w in ipairs(words) do count[w] = (count[w] or 0) + 1 end
local keys = {}
for k in pairs(count) do keys[#keys+1] = k end
table.sort(keys, function(a, b) return count[a] > count[b] or (count[a] == count[b] and a < b) end)
local function ack(m, n) if m == 0 then return n + 1 elseif n == 0 then return ack(m - 1, 1) else return ack(m - 1, ack(m, n - 1)) end end
print(#keys, ack(2, 500))
LUA

# NAME BINARY "ARGS A" "ARGS B" (the word IN is the binary itself)
workloads() {
	echo "arrdemo|$progs/arrdemo|1 20|7 20"
	echo "collide|$progs/collide|ab 20|abc 20"
	echo "bzip2|$bzip2|-k -f -9 $work/in1|-k -f -9 $work/in2"
	echo "zstd|$zstd|-q -f -19 $work/in1 -o $work/out.zst|-q -f -19 $work/in2 -o $work/out.zst"
	echo "lua|$lua|$work/a.lua|$work/b.lua"
}

share() {	# share DB BINARY ARGS: precise share of icppd validate
	"$icppd" validate -q -d "$1" --format json -- "$2" $3 2>/dev/null |
		grep -a -o '"precise": [0-9.]*' | head -1 | awk '{ printf "%.1f", 100 * $2 }'
}

runtime() {	# runtime MODE BINARY ARGS: wall seconds
	/usr/bin/time -f '%e' -o "$work/t" "$2" $3 >/dev/null 2>&1 || true
	tail -1 "$work/t"
}

printf '%-8s %15s %15s %15s %7s %8s %8s\n' workload "offline%" "online%" \
	"paths%(pred)" growth search_ms runtime
workloads | while IFS='|' read -r name bin a b; do
	db=$work/$name.db out=$work/$name.arr
	"$icppd" train -q -F 4000 -m 4096 -d "$db" -- "$bin" $a >/dev/null 2>&1
	if ! "$icppd" arr -d "$db" -o "$out" "$bin" >"$work/arr.out" 2>&1; then
		off=$(share "$db" "$bin" "$a") on=$(share "$db" "$bin" "$b")
		printf '%-8s %15s %15s %15s %7s %8s %8s  (%s)\n' "$name" \
			"$off -> -" "$on -> -" - - - - \
			"$(sed -n 's/.*\(nothing to gain[^(]*\).*/\1/p' "$work/arr.out" | head -c 60)"
		continue
	fi
	off0=$(share "$db" "$bin" "$a") off1=$(share "$db" "$out" "$a")
	on0=$(share "$db" "$bin" "$b") on1=$(share "$db" "$out" "$b")
	set -- $(sqlite3 "$db" "SELECT printf('%.1f %.1f %.3f %.0f',
		100 * paths_precise_before, 100 * paths_precise_after,
		stack_growth, search_ms) FROM v_arr")
	rm -f "$work/rt.orig" "$work/rt.arr"
	i=0
	while [ $i -lt "$reps" ]; do
		if [ $((i % 2)) -eq 0 ]; then
			runtime o "$bin" "$a" >>"$work/rt.orig"; runtime a "$out" "$a" >>"$work/rt.arr"
		else
			runtime a "$out" "$a" >>"$work/rt.arr"; runtime o "$bin" "$a" >>"$work/rt.orig"
		fi
		i=$((i + 1))
	done
	ratio=$(echo "$(median <"$work/rt.arr") $(median <"$work/rt.orig")" |
		awk '{ printf "%.3f", ($2 > 0 ? $1 / $2 : 0) }')
	printf '%-8s %15s %15s %15s %7s %8s %8s\n' "$name" "$off0 -> $off1" \
		"$on0 -> $on1" "$1 -> $2" "$3" "$4" "$ratio"
done
