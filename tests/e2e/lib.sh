# lib.sh - TAP helpers and truth comparison for the end-to-end tests.
# Sourced by each tests/e2e/*.sh; expects ICPPD and PROGS in the
# environment (set by the Makefile).

n=0
failed=0
tmp=$(mktemp -d /tmp/icppd-e2e.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
db=$tmp/icppd.db
# The CFI cache (icppd-record(1) --no-cache) of this test alone: none in
# the home of whoever runs the suite, and every test starts cold, as a
# first record does.
ICPPD_CACHE_DIR=$tmp/cache
export ICPPD_CACHE_DIR
# Training runs in tests: a ring that holds a second of samples, so that
# a CI machine busy with other tests (and icppd slowed by ASan) loses
# none; the exact path checks need every short burst of the programs.
TRAIN_OPTS="-F 1000 -m 4096"

# Workloads are sized by CPU time, never by iterations: the test programs
# take CPU milliseconds per burn (tests/progs/burn.h), and cpu-clock
# counts the sampled thread's CPU time, so a burn of MS milliseconds at
# HZ gives MS * HZ / 1000 samples of its context identifier on any CPU,
# give or take one (measured: 29 to 31 for 30 ms at 1000 Hz).  A check
# expects a sixth of that.  A third was too many on a busy VM: CI twice
# had a 30 ms burn keep fewer than 10 samples, none lost or throttled,
# and six busy loops on a 2-CPU VM gave one 5 (the thread's CPU clock
# and the sampling timer part there, we think).
min_samples() {	# min_samples MS [HZ]
	echo $(($1 * ${2:-1000} / 6000))
}

# CPU milliseconds the program says it used ("CPU pid tid process MS"
# lines in its truth file; the sum over processes), rounded down.
cpu_ms() {	# cpu_ms TRUTH_FILE
	awk '$1 == "CPU" && $4 == "process" { s += $5 } END { printf "%d\n", s }' "$1"
}

ok() {	# ok STATUS DESCRIPTION
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
	fi
}

is() {	# is GOT WANT DESCRIPTION
	if [ "$1" = "$2" ]; then
		ok 0 "$3"
	else
		ok 1 "$3"
		printf '%s\n' "  got:  '$1'" "  want: '$2'" | sed 's/^/#  /'
	fi
}

contains() {	# contains TEXT NEEDLE DESCRIPTION
	case $1 in
	*"$2"*) ok 0 "$3" ;;
	# every line a comment (is() too): a line of TEXT that reads "ok"
	# would be a test result to the TAP driver (ctl status ends with one)
	*) ok 1 "$3"; printf '%s\n' "  '$2' not in: $1" | sed 's/^/#  /' ;;
	esac
}

skip() {	# skip REASON DESCRIPTION
	n=$((n + 1))
	echo "ok $n - $2 # SKIP $1"
}

done_testing() {
	echo "1..$n"
	[ "$failed" -eq 0 ]
}

q() {	# q SQL [DB]: waits out another's write lock, as icppd does
	sqlite3 -batch -noheader -cmd ".timeout 5000" "${2:-$db}" "$1"
}

integrity() {	# integrity [DB]
	q "PRAGMA integrity_check" "${1:-$db}"
}

# Skips the whole script when this machine cannot sample at all.
# Skips the whole script unless it runs as root: the daemon samples
# every CPU.
require_root() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "1..0 # SKIP the daemon samples every CPU: needs root"
		exit 0
	fi
}

require_perf() {
	# (--no-cache: a probe sample in libc stored libc's CFI table
	# where cficache.sh counts what its first run stores)
	if ! "$ICPPD" record -q --no-cache -d "$tmp/probe.db" -- true \
		2>"$tmp/probe.err"; then
		echo "1..0 # SKIP perf_event_open unavailable: $(head -1 "$tmp/probe.err")"
		exit 0
	fi
	rm -f "$tmp"/probe.db*
}

# Loads a TRUTH file ("TRUTH pid tid function height" lines) into a
# table truth in the database.
load_truth() {	# load_truth FILE [DB]
	q "DROP TABLE IF EXISTS truth; CREATE TABLE truth (pid, tid, function, height);" "${2:-$db}"
	awk '$1 == "TRUTH" { printf "INSERT INTO truth VALUES (%d, %d, '"'"'%s'"'"', %d);\n", $2, $3, $4, $5 }' "$1" |
		sqlite3 -batch "${2:-$db}"
}

# Asserts that run RUN holds every true CID with at least MIN samples
# (min_samples of the program's burn), and that no sample of a function
# has a height other than those its process reported for it.  (A process
# that reported nothing of a function is not judged on it: forker's own
# main is not heights' main.)
check_truth() {	# check_truth RUN LABEL MIN
	run=$1 label=$2 min=$3
	total=$(q "SELECT count(*) FROM truth")
	ok $([ "$total" -gt 0 ]; echo $?) "$label: the program reported $total true CIDs"
	missing=$(q "SELECT group_concat(t.function || '@' || t.height, ' ') FROM truth t
		WHERE NOT EXISTS (SELECT 1 FROM v_cids c WHERE c.run_id = $run
		AND c.pid = t.pid AND c.tid = t.tid AND c.function = t.function
		AND c.height = t.height AND c.samples >= $min)")
	is "$missing" "" "$label: every true CID stored with >= $min samples"
	if [ -n "$missing" ]; then	# lost, throttled, or taken elsewhere?
		q "SELECT '# run: ' || samples || ' samples, ' || resolved || ' resolved, ' ||
			lost || ' lost, ' || throttled || ' throttled, ' || status
			FROM v_runs WHERE run_id = $run"
		q "SELECT '# stored: ' || function || '@' || height || ' ' || samples
			FROM v_cids WHERE run_id = $run ORDER BY function, height"
	fi
	where="FROM v_cids c WHERE c.run_id = $run
		AND c.function IN (SELECT function FROM truth t WHERE t.pid = c.pid)
		AND NOT EXISTS (SELECT 1 FROM truth t WHERE t.pid = c.pid
		AND t.tid = c.tid AND t.function = c.function AND t.height = c.height)"
	wrong=$(q "SELECT coalesce(sum(c.samples), 0) $where")
	is "$wrong" 0 "$label: no sample of these functions at a wrong height"
	if [ "$wrong" != 0 ]; then	# what was seen, and what is true
		q "SELECT '# wrong: pid ' || c.pid || ' tid ' || c.tid || ' ' || c.module || ' ' ||
			c.function || '@' || c.height || ' ' || c.samples $where"
		q "SELECT '# truth: pid ' || pid || ' tid ' || tid || ' ' || function || '@' || height FROM truth"
	fi
}

# CPU milliseconds process PID has used so far (utime + stime).
proc_cpu_ms() {	# proc_cpu_ms PID
	sed 's/.*) //' "/proc/$1/stat" |
		awk -v hz="$(getconf CLK_TCK)" '{ printf "%d\n", ($12 + $13) * 1000 / hz }'
}

now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

# Waits until the heights program writing TRUTH_FILE has spun MS
# milliseconds of CPU in spin_forever (it says so every 100 ms of CPU),
# however slow or busy the machine; gives up after a minute.
wait_spin() {	# wait_spin TRUTH_FILE MS
	i=0
	while ! awk -v ms="$2" '$1 == "CPU" && $4 == "spin_forever" && $5 >= ms { f = 1 }
		END { exit !f }' "$1" 2>/dev/null && [ $i -lt 1200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
}

last_run() {	# last_run [DB]
	q "SELECT max(run_id) FROM v_runs" "${1:-$db}"
}
