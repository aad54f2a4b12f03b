# bench/workloads.sh - the workloads bench/accuracy.sh and
# bench/validate.sh run: python3 (pure Python), perl, sqlite3, xz with
# threads, make of a small C project (make -> cc1, as, collect2, ld), g++
# -O2 -c of a C++ file, a C program whose stacks are deeper than any
# stack copy (deep: mutual recursion 4,000 frames down, 300 KiB), a Go
# program (go: four goroutines encoding JSON, sorting, matching and
# hashing, on stacks with no fixed base; go-pprof: the same four times
# as long, scored against Go's own profiler), makecontext() coroutines on
# heap blocks (coro: tests/progs/coro.c), two
# online ones (NAME-online: trained on one
# input, recorded on another), and two test programs whose CIDs collide
# (dispatch: eight handlers; collide: two callers), trained first.  Sourced after lib.sh: writes the inputs
# under $work and defines workload().
workloads="python perl sqlite3 xz make g++ clang++ deep go go-pprof coro python-online sqlite3-online dispatch collide"
py=$(command -v python3.11 || command -v python3)
cat >"$work/work.py" <<'PY'
import json
def fib(n): return n if n < 2 else fib(n-1) + fib(n-2)
def build(n): return {str(i): [i, i*2, {"k": i}] for i in range(n)}
t = 0
for r in range(400):
    t += fib(20)
    t += len(json.loads(json.dumps(build(3000))))
print(t)
PY
cat >"$work/work.pl" <<'PL'
my %h; my $t = 0;
for my $r (1..60) {
    for my $i (1..20000) { $h{"k$i"} = join(",", map { $_ * $r } 1..8); }
    for my $v (values %h) { $t += length($v) if $v =~ /(\d+),(\d+)$/; }
    my @s = sort { $a cmp $b } keys %h; $t += @s;
}
print "$t\n";
PL
cat >"$work/train.py" <<'PY'
import json
t = 0
for r in range(300):
    t += len(json.dumps({str(i): [i, str(i)] for i in range(3000)}))
print(t)
PY
make_input "$work/input" 24000000

# A small C project (lib.sh).
make_cproject "$work/proj"

# A C++ file heavy on templates.
cat >"$work/t.cc" <<'CC'
#include <algorithm>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>
template <typename K, typename V> std::map<V, std::vector<K>> invert(const std::map<K, V> &m)
{
	std::map<V, std::vector<K>> r;
	for (const auto &kv : m) r[kv.second].push_back(kv.first);
	return r;
}
int run(int n)
{
	std::map<std::string, int> m;
	std::regex re("([a-z]+)([0-9]+)");
	for (int i = 0; i < n; i++) {
		std::ostringstream os;
		os << "k" << i;
		m[os.str()] = i % 7;
	}
	auto inv = invert(m);
	std::vector<std::string> keys;
	for (auto &kv : inv) for (auto &k : kv.second) if (std::regex_match(k, re)) keys.push_back(k);
	std::sort(keys.begin(), keys.end(), [](const std::string &a, const std::string &b) { return a.size() < b.size() || (a.size() == b.size() && a < b); });
	return (int)keys.size();
}
CC

# Stacks deeper than the largest copy perf_event takes (64 KiB): four
# functions recursing into each other, a leaf burning at the bottom.
cat >"$work/deep.c" <<'DEEP'
#include <stdlib.h>
volatile unsigned long sink;
__attribute__((noinline)) void leaf_a(int n) { for (int i = 0; i < n; i++) sink += (unsigned long)i * 3; }
__attribute__((noinline)) void leaf_b(int n) { for (int i = 0; i < n; i++) sink ^= (unsigned long)i * 7; }
int r1(int d, int n), r2(int d, int n), r3(int d, int n);
#define R(name, next, leaf) __attribute__((noinline)) int name(int d, int n) \
	{ volatile char pad[40]; pad[0] = (char)d; if (!d) { leaf(n); return pad[0]; } \
	  return next(d - 1, n) + pad[0]; }
R(r0, r1, leaf_a) R(r1, r2, leaf_b) R(r2, r3, leaf_a) R(r3, r0, leaf_b)
int main(int c, char **v)
{
	int rounds = c > 1 ? atoi(v[1]) : 1000, t = 0;
	for (int r = 0; r < rounds; r++)
		t += r0(4000 + r % 4, 200000);
	return t & 0;
}
DEEP
${CC:-cc} -O2 -g -fno-optimize-sibling-calls -o "$work/deep" "$work/deep.c"

# Goroutines doing what Go services do: JSON, sorting, regexps, hashing,
# channels, and the garbage collector beside them.
cat >"$work/work.go" <<'GO'
package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"sync"
)

type rec struct {
	ID    int
	Name  string
	Tags  []string
	Score float64
}

func gen(n, seed int) []rec {
	rs := make([]rec, n)
	for i := range rs {
		k := (i*7919 + seed*104729) % 100003
		rs[i] = rec{k, "name-" + strconv.Itoa(k), []string{"t" + strconv.Itoa(k%13), "u" + strconv.Itoa(k%7)}, float64(k) / 3}
	}
	return rs
}

func roundTrip(rs []rec) int {
	b, _ := json.Marshal(rs)
	var out []rec
	json.Unmarshal(b, &out)
	return len(out)
}

func digest(rs []rec) int {
	h := sha256.New()
	for _, r := range rs {
		fmt.Fprintf(h, "%d:%s", r.ID, r.Name)
	}
	return int(h.Sum(nil)[0])
}

var re = regexp.MustCompile(`^([a-z]+)-(\d+)7$`)

func matches(rs []rec) int {
	n := 0
	for _, r := range rs {
		if re.MatchString(r.Name) {
			n++
		}
	}
	return n
}

func worker(jobs <-chan int, out chan<- int, wg *sync.WaitGroup) {
	defer wg.Done()
	for j := range jobs {
		rs := gen(2000, j)
		t := roundTrip(rs)
		sort.Slice(rs, func(a, b int) bool { return rs[a].Name < rs[b].Name })
		t += matches(rs) + digest(rs)
		out <- t
	}
}

func main() {
	// Go's own CPU profile, for bench/accuracy.sh's go-pprof row: at
	// 250 Hz, the highest rate at which its per-thread timers kept every
	// sample here (500 Hz kept half the CPU time, 1000 Hz a quarter).
	if p := os.Getenv("GOWORK_CPUPROFILE"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			panic(err)
		}
		runtime.SetCPUProfileRate(250)
		pprof.StartCPUProfile(f)	// warns that the rate is set
		defer pprof.StopCPUProfile()
	}
	n, _ := strconv.Atoi(os.Args[1])
	jobs, out := make(chan int), make(chan int, n)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go worker(jobs, out, &wg)
	}
	for j := 0; j < n; j++ {
		jobs <- j
	}
	close(jobs)
	wg.Wait()
	close(out)
	t := 0
	for v := range out {
		t += v
	}
	fmt.Println(t)
}
GO
GOCACHE="$work/.gocache" GO111MODULE=off HOME="$work" go build -o "$work/gowork" "$work/work.go"

query="WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 600000) SELECT count(DISTINCT x % 1000), sum(length(printf('%08d', x))) FROM c;"
train_query="WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000) SELECT x % 97, count(*) FROM c GROUP BY 1 ORDER BY 2 DESC LIMIT 3;"

# workload NAME: sets cmd, NAME's command line (for eval "set -- $cmd"),
# and train, an online workload's training command line (else empty).
workload() {
	train=
	case $1 in
	python) cmd='"$py" "$work/work.py"' ;;
	perl) cmd='perl "$work/work.pl"' ;;
	sqlite3) cmd='sqlite3 :memory: "$query"' ;;
	xz) cmd='xz -T2 -6 -c "$work/input"' ;;
	make) cmd='make -s -B -C "$work/proj"' ;;
	g++) cmd='g++ -O2 -c -o "$work/t.o" "$work/t.cc"' ;;
	clang++) cmd='clang++ -O2 -c -o "$work/t.o" "$work/t.cc"' ;;
	deep) cmd='"$work/deep" 15000' ;;
	go) cmd='"$work/gowork" 300' ;;
	go-pprof) cmd='"$work/gowork" 1200' ;;
	coro) cmd='"$progs/coro" 300' ;;
	python-online)
		train='"$py" "$work/train.py"'
		cmd='"$py" "$work/work.py"' ;;
	sqlite3-online)
		train='sqlite3 :memory: "$train_query"'
		cmd='sqlite3 :memory: "$query"' ;;
	# trained, then recorded: colliding CIDs whose candidates training
	# weighed (eight handlers of a dispatch table; two callers)
	dispatch)
		train='"$progs/dispatch" table 20'
		cmd='"$progs/dispatch" table 20' ;;
	collide)
		train='"$progs/collide" ab 300'
		cmd='"$progs/collide" ab 300' ;;
	*) echo "bench: unknown workload $1" >&2; exit 1 ;;
	esac
}
