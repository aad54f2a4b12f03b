#!/bin/sh
# Runs every libFuzzer harness for FUZZ_SECONDS (default 8) on its corpus
# under FUZZ_CORPUS, seeded by seeds.sh when absent; TAP, one test per
# harness: ok when libFuzzer ran to the end with no sanitizer report,
# with its number of runs.  A crash leaves its input beside the corpus.
set -u
secs=${FUZZ_SECONDS:-8}
bin=${FUZZ_BIN:?}
corpus=${FUZZ_CORPUS:?}
names="module cfi cficache symcache notes elfimage record config folded perfmap fleet buildcalls lines debuglink inlined"
echo "1..15"
if [ ! -d "$corpus/inlined" ]; then
	if ! sh "$TESTS_SRCDIR/fuzz/seeds.sh" "$TESTS_SRCDIR" "$corpus" \
		>"$corpus.seeds.log" 2>&1; then
		echo "Bail out! seeds.sh failed: $(tail -1 "$corpus.seeds.log")"
		exit 1
	fi
fi
i=0
for name in $names; do
	i=$((i + 1))
	log=$corpus/$name.log
	mkdir -p "$corpus/$name" "$corpus/crashes"
	"$bin/fuzz_$name" -max_total_time="$secs" -timeout=10 \
		-rss_limit_mb=2048 -close_fd_mask=3 \
		-artifact_prefix="$corpus/crashes/$name-" \
		"$corpus/$name" >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$log")
	if [ $rc -eq 0 ] && [ -n "$runs" ]; then
		echo "ok $i - fuzz_$name: $runs runs in $secs s, no report"
	else
		echo "not ok $i - fuzz_$name: exit $rc (log: $log)"
		grep -E 'ERROR|SUMMARY|Test unit written' "$log" | head -5 |
			sed 's/^/# /'
	fi
done
