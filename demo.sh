#!/bin/sh
# The main job on a fresh Debian 12 machine: install what is needed,
# build icppd, record the bundled demo program and show what was stored.
set -e
cd "$(dirname "$0")"
sh scripts/deps.sh
[ -x configure ] || ./autogen.sh >/dev/null
mkdir -p build
cd build
[ -f Makefile ] || ../configure -q
make -s -j"$(nproc)" icppd tests/progs/bin/.built
rm -f demo.db demo.db-wal demo.db-shm
./icppd record -d demo.db -- tests/progs/bin/demo 300000
echo
echo "Hottest context identifiers (function, stack height) in build/demo.db:"
sqlite3 -header -column demo.db "
  SELECT function, height, sum(samples) AS samples FROM v_cids
  GROUP BY function, height ORDER BY samples DESC LIMIT 8"
echo
echo "hash() is reached from count() and from lookup(): two heights, two CIDs."
