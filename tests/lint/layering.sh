# layering.sh - no folder includes a folder above it in the data flow
# (docs/architecture.md).  Each folder may include itself and the
# folders named for it here; anything else is a layering error.
#
# TAP; run from make check with TESTS_SRCDIR set (or by hand:
# TESTS_SRCDIR=tests sh tests/lint/layering.sh).
top=${TESTS_SRCDIR:?}/..
count=0
bad=0

# folder: the folders it may include besides itself
allowed() {
	case $1 in
	common) echo "" ;;
	binary) echo "common" ;;
	collector) echo "common binary" ;;
	inference) echo "common binary" ;;
	schema) echo "common binary collector inference" ;;
	record) echo "common binary collector inference schema" ;;
	profile) echo "common binary inference schema" ;;
	arr) echo "common binary inference schema" ;;
	report) echo "common binary inference schema profile" ;;
	export) echo "common binary inference schema profile" ;;
	daemon) echo "common binary collector inference schema record profile report export" ;;
	cli) echo "common binary collector inference schema record profile arr report export daemon" ;;
	esac
}

for folder in common binary collector inference schema record profile arr report export daemon cli; do
	count=$((count + 1))
	ok=" $folder $(allowed $folder) "
	errors=$(cd "$top" && grep -n '^#include "[a-z_]*/' $folder/*.c $folder/*.h 2>/dev/null |
		while IFS= read -r line; do
			inc=${line#*#include \"}
			inc=${inc%%/*}
			case "$ok" in
			*" $inc "*) ;;
			*) echo "$line" ;;
			esac
		done)
	if [ -z "$errors" ]; then
		echo "ok $count - $folder/ includes only: $folder $(allowed $folder)"
	else
		echo "not ok $count - $folder/ includes a folder above it:"
		echo "$errors" | sed 's/^/#   /'
		bad=$((bad + 1))
	fi
done

# A folder missing from the list above would escape the check.  Build
# folders (./demo.sh's build, test.sh's build-test-*) hold generated
# sources: they have a config.status.
count=$((count + 1))
extra=$(cd "$top" && for f in */*.c */*.h; do
	d=${f%%/*}
	[ -f "$d/config.status" ] && continue
	case " common binary collector inference schema record profile arr report export daemon cli tests bench " in
	*" $d "*) ;;
	*) echo "$d" ;;
	esac
done | sort -u | tr '\n' ' ')
if [ -z "$extra" ]; then
	echo "ok $count - every folder with C code has a place in the data flow"
else
	echo "not ok $count - folders with no place in the data flow: $extra"
	bad=$((bad + 1))
fi
echo "1..$count"
[ "$bad" -eq 0 ]
