# syscalls.sh - every open, opendir, fopen and socket goes through the
# overridable table of common/sys.h, so that a test can make any of them
# fail (ICPPD_INJECT_FAULT=open:ERRNO:PREFIX).  A direct call anywhere
# else would be a path no fault injection reaches.
#
# TAP; run from make check with TESTS_SRCDIR set.
top=${TESTS_SRCDIR:?}/..
count=0
bad=0

for folder in common binary collector inference schema record profile arr report export daemon cli; do
	count=$((count + 1))
	# a call: the name right after a non-identifier character and
	# followed by "(", outside comments (lines starting with " *")
	direct=$(cd "$top" && grep -nHE '(^|[^_a-zA-Z0-9.>])(open|openat|fopen|opendir|socket|readlink)\(' \
		$folder/*.c 2>/dev/null | grep -v '^common/sys\.c:' |
		grep -vE '^[^:]*:[0-9]+:[[:space:]]*(\*|/\*)')
	if [ -z "$direct" ]; then
		echo "ok $count - $folder/: no open/opendir/fopen/socket/readlink outside common/sys.h"
	else
		echo "not ok $count - $folder/: calls that bypass common/sys.h:"
		echo "$direct" | sed 's/^/#   /'
		bad=$((bad + 1))
	fi
done
echo "1..$count"
[ "$bad" -eq 0 ]
