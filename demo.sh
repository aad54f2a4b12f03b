#!/bin/sh
# The main job on a fresh Debian 12 machine: install what is needed,
# build icppd, train and record the bundled demo program, validate the
# inference, and report the measurement run's call paths with k = 3.
set -e
cd "$(dirname "$0")"
sh scripts/deps.sh
mkdir -p build
# The build's own output goes to build/build.log, shown only on failure,
# so that what follows is the demo; a line says it is under way.
start=$(date +%s)
[ -x build/icppd ] ||
	echo "icppd: demo: building icppd (about a minute on 2 CPUs; its output goes to build/build.log) ..."
{
	{ [ -x configure ] || ./autogen.sh; } &&
	{ [ -f build/Makefile ] || (cd build && ../configure -q); } &&
	make -s -C build -j"$(nproc)" icppd tests/progs/bin/.built
} >build/build.log 2>&1 || {
	cat build/build.log
	echo "icppd: demo: the build failed (log above, also in build/build.log)" >&2
	exit 1
}
echo "Built build/icppd in $(($(date +%s) - start)) s ('make -C build install' installs"
echo "it and its man pages: icppd(1) and one page per subcommand)."
echo
cd build
rm -f demo.db demo.db-wal demo.db-shm
demo=tests/progs/bin/demo
# 1. The training run learns which call paths produce which identifiers.
./icppd train -d demo.db -- $demo 300000
echo
# 2. The measurement run samples only SP, BP and PC.
./icppd record -d demo.db -- $demo 300000
echo
echo "Hottest context identifiers (function, stack height) of the measurement"
echo "run, each with the call path(s) training saw for it:"
sqlite3 -header -column demo.db "
  SELECT c.function, c.height, c.samples,
         (SELECT count(DISTINCT context_id) FROM v_paths p
           WHERE p.function = c.function AND p.height = c.height) AS contexts,
         (SELECT substr(p.path, instr(p.path, ';main;') + 1) FROM v_paths p
           WHERE p.function = c.function AND p.height = c.height
           ORDER BY p.self_samples DESC LIMIT 1) AS path
    FROM (SELECT function, height, sum(samples) AS samples FROM v_cids
           WHERE run_id = (SELECT max(run_id) FROM v_runs)
           GROUP BY function, height) c
   ORDER BY c.samples DESC LIMIT 6"
echo
echo "hash() is reached from count() and from lookup(): two heights, two CIDs,"
echo "each with one call path."
echo
# 3. Validation: how often the identifier alone gives the true path.
./icppd validate -q -d demo.db -- $demo 300000
echo
# 4. The report: the measurement run (run 2), each hot function with its
# hottest calling contexts of up to 3 callers.
./icppd report -d demo.db --run 2 --k 3
echo
# 5. The same run top-down, as perf report --children: each function's
# samples with all it calls beside its own, and what it calls.
./icppd report -d demo.db --run 2 --children --k 2 --min-percent 5
echo
# 6. Where in hash() the samples fell, instruction by instruction.
./icppd annotate -d demo.db --run 2 hash | head -40
echo
echo "A flame graph of it: build/icppd report -d build/demo.db --run 2 -f svg -o flame.svg"
