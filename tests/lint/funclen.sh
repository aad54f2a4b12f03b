# funclen.sh - no function of the C code is longer than 100 lines,
# except the DWARF expression interpreter (binary/cfi_program.c
# cfi__eval(), one switch over the opcodes, which reads best whole).
#
# A function is what lies between a line "{" at the start of a line and
# the next "}" at the start of a line (STYLE.md's layout).  TAP.
top=${TESTS_SRCDIR:?}/..
MAX=100
count=0
bad=0

for folder in common binary collector inference schema record profile arr report export daemon cli; do
	count=$((count + 1))
	long=$(cd "$top" && for f in $folder/*.c; do
		awk -v file="$f" -v max=$MAX '
			/^[a-z].*\(/ { sig = $0 }
			/^\{/ { start = NR; name = sig }
			/^\}/ { if (start && NR - start > max) print file ":" start ": " NR - start " lines: " name; start = 0 }' "$f"
	done | grep -v 'binary/cfi_program.c:.*: int cfi__eval(')
	if [ -z "$long" ]; then
		echo "ok $count - $folder/: no function over $MAX lines"
	else
		echo "not ok $count - $folder/: functions over $MAX lines:"
		echo "$long" | sed 's/^/#   /'
		bad=$((bad + 1))
	fi
done
echo "1..$count"
[ "$bad" -eq 0 ]
