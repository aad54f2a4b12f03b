/*
 * test_collector.c - the whole CID pipeline on synthesized records: this
 * test binary serves as the module, a fake /proc gives the main stack
 * base, and registers are captured from a real function so the CFI rule
 * is real.  Checks heights for the main thread and a thread stack, fork,
 * exec, every reason a sample can stay unresolved, and learning mode.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "binary/module.h"
#include "collector/collector.h"
#include "collector/collector_int.h"
#include "common/sys.h"
#include "tests/tap.h"
#include "tests/unit/selfregs.h"
#include "tests/unit/synth.h"

#define PID 999999u
#define THREAD 1000000u
#define CHILD 777777u
#define NOPROC 888888u
#define EXECER 666666u
#define FORKED 555555u
#define UNWATCHED 444444u
#define WATCHED 333333u
#define MODELLED 333334u
#define BASE 0x7ffc00001000ULL		/* main stack base */
#define TSTACK_LO 0x7f0000000000ULL	/* a thread stack */
#define TSTACK_HI 0x7f0000800000ULL
#define HEAP_LO 0x5f0000000000ULL	/* the brk heap */
#define HEAP_HI 0x5f0000100000ULL
#define BRK_LO 0x5e0000000000ULL	/* a brk heap perf named "//anon" */
#define BRK_HI 0x5e0000100000ULL
#define JIT 0x7e0000000000ULL

volatile int sink;

__attribute__((noinline)) static void sampled(struct capture *c)
{
	volatile char pad[100];

	pad[0] = 1;
	CAPTURE(c);
	sink += pad[0];
}

static int no_path(void *arg, const struct collector_path *p)
{
	(void)arg;
	(void)p;
	return 0;
}

static bool known_none(void *arg, const struct cid_key *k)
{
	(void)arg;
	(void)k;
	return false;
}

static struct collector *col;
static struct aggregate *agg_of_test;
static struct synth s;

static void feed(struct perf_event_header *h)
{
	collector__peek(col, h);
	collector__process(col, h);
}

static uint64_t cid_samples(struct aggregate *a, uint32_t pid, uint32_t tid,
			    int64_t height)
{
	size_t n;
	const struct cid_count *c = aggregate__cids(a, &n);
	uint64_t total = 0;

	for (size_t i = 0; i < n; i++)
		if (c[i].key.pid == pid && c[i].key.tid == tid &&
		    c[i].key.height == height)
			total += c[i].samples;
	return total;
}

static uint64_t unresolved(struct aggregate *a, enum cid_failure why)
{
	size_t n;
	const struct unresolved_count *u = aggregate__unresolved(a, &n);
	uint64_t total = 0;

	for (size_t i = 0; i < n; i++)
		if (u[i].reason == why)
			total += u[i].samples;
	return total;
}

/* The daemon's filter, as a test: every process but UNWATCHED. */
static bool all_but_unwatched(void *arg, uint32_t pid, const char *exe,
			      const char *comm)
{
	(void)arg;
	(void)exe;
	(void)comm;
	return pid != UNWATCHED;
}

/* A daemon's rules, as a test: the executable /opt/watched, or any
 * process named "named". */
static bool exe_or_name(void *arg, uint32_t pid, const char *exe,
			const char *comm)
{
	(void)arg;
	(void)pid;
	return (exe && !strcmp(exe, "/opt/watched")) ||
	       (comm && !strcmp(comm, "named"));
}

/* /proc/PID/stat of the fake /proc in @dir: a stat line with
 * startstack (field 28) and start_brk (field 47). */
static void fake_proc(const char *dir, unsigned pid, uint64_t startstack,
		      uint64_t start_brk)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u", dir, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%u/stat", dir, pid);
	f = fopen(path, "w");
	fprintf(f, "%u (app) R 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1 1 1 1 "
		"1 1 %llu 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 1 1 %llu 0 0 0 0 0\n",
		pid, (unsigned long long)startstack,
		(unsigned long long)start_brk);
	fclose(f);
}

/*
 * The watched churner of main(), now mapping at ever lower addresses:
 * each insert goes before every mapping kept (quadratic in one sorted
 * array), until the table is full and read again from /proc, whose
 * fake maps in @dir list two live mappings.
 */
static void test_churn_down(const char *dir)
{
	const size_t n = SPACE_MAX_MAPS;
	const uint64_t top = 0x7f0000000000ull;
	size_t before = space__find_proc(col, WATCHED)->nmaps;
	size_t after = n - (SPACE_MAX_MAPS - before) - 1;
	char path[256];
	struct process *p;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u", dir, WATCHED);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%u/maps", dir, WATCHED);
	f = fopen(path, "w");
	fprintf(f, "10000000-10002000 r--p 00000000 00:00 0\n"
		"7ffff0000000-7ffff0021000 rw-p 00000000 00:00 0 [stack]\n");
	fclose(f);
	for (size_t i = 0; i < n; i++)
		feed(synth_mmap2(&s, WATCHED, top - 0x2000 * (uint64_t)i,
				 0x1000, 0, PROT_READ, "//anon", 53));
	p = space__find_proc(col, WATCHED);
	is_int((int)collector__stats(col)->maps_reread, 1,
	       "a full table is read again from /proc, once");
	is_int((int)p->nmaps, (int)(2 + 1 + after),
	       "then it holds /proc's mappings and those mapped since");
	ok(space__find_map(p, 0x10001000) && space__find_map(p, top) == NULL &&
	   space__find_map(p, top - 0x2000 * (uint64_t)(n - 1)),
	   "/proc's, not the stale ones, and the last one mapped");
}

/*
 * Mappings of random place and size (20,000 pages, 40,000 records, a
 * fixed seed) against a model that keeps, per page, which record mapped
 * it last and at what file offset: every page is found in the mapping
 * the model says, whole (a run of one record's pages is one mapping),
 * across the blocks' splits and removals.
 */
static void test_map_model(void)
{
	enum { PAGES = 20000, OPS = 40000 };
	static uint32_t owner[PAGES];	/* record + 1; 0: unmapped */
	static uint64_t off[PAGES];
	const uint64_t lo = 0x20000000;
	uint64_t seed = 42;
	size_t runs = 0, bad = 0;
	struct process *p;

	for (uint32_t op = 1; op <= OPS; op++) {
		size_t at, len;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		at = (size_t)(seed >> 33) % PAGES;
		len = 1 + (size_t)(seed >> 20) % (op % 50 ? 4 : 300);
		if (at + len > PAGES)
			len = PAGES - at;
		feed(synth_mmap2(&s, MODELLED, lo + at * 4096, len * 4096,
				 (uint64_t)op << 20, PROT_READ, "//anon", 60));
		for (size_t i = 0; i < len; i++) {
			owner[at + i] = op;
			off[at + i] = ((uint64_t)op << 20) + i * 4096;
		}
	}
	p = space__find_proc(col, MODELLED);
	for (size_t i = 0; p && i < PAGES; i++) {
		const struct mapping *m = space__find_map(p, lo + i * 4096);
		size_t first = i, last = i;

		if (!owner[i]) {
			bad += m != NULL;
			continue;
		}
		while (first > 0 && owner[first - 1] == owner[i])
			first--;
		while (last + 1 < PAGES && owner[last + 1] == owner[i])
			last++;
		runs += first == i;
		bad += !m || m->start != lo + first * 4096 ||
		       m->end != lo + (last + 1) * 4096 ||
		       m->pgoff + (i - first) * 4096 != off[i];
	}
	ok(p && !bad && p->nmaps == runs,
	   "40,000 random mappings: every page in the mapping the model "
	   "says (%zu wrong), %zu mappings", bad, runs);
}

/*
 * A perf map above JIT_SYNC_BYTES (a JIT that has named 20,000
 * functions) is parsed by the loader thread, not in the sample loop:
 * the sample that asks for it goes unnamed, and a later one (after the
 * thread is done, whatever the sample times) is named by it.
 */
static void test_big_perfmap(const char *dir)
{
	/* this process: the map must be its owner's (real /proc) */
	const uint32_t pid = (uint32_t)getpid();
	char path[256];
	int64_t waited = 0;
	uint64_t named = 0;
	FILE *f;

	fake_proc(dir, pid, BASE + 8, 0);
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
	f = fopen(path, "w");
	for (unsigned i = 1; f && i <= 20000; i++)
		fprintf(f, "%llx 10 filler_function_number_%u\n",
			(unsigned long long)(JIT + 0x10000 + 0x10 * i), i);
	if (f) {
		fprintf(f, "%llx 40 big_jit_fn\n", (unsigned long long)JIT);
		fclose(f);
	}
	feed(synth_comm(&s, pid, pid, "node", 1, 70));
	feed(synth_mmap2(&s, pid, JIT, 0x100000, 0, PROT_READ | PROT_EXEC,
			 "//anon", 70));
	feed(synth_sample(&s, pid, pid, 71, JIT + 16, BASE - 64, 0, 1));
	is_int((int)cid_samples(agg_of_test, pid, pid, 64), 0,
	       "a perf map above JIT_SYNC_BYTES: not parsed in the sample loop");
	while (!named && waited < 10000) {
		usleep(10000);
		waited += 10;
		feed(synth_sample(&s, pid, pid, 72, JIT + 16, BASE - 64,
				  0, 1));
		named = cid_samples(agg_of_test, pid, pid, 64);
	}
	ok(named == 1, "the loader thread's map names a later sample "
	   "(after %lld ms)", (long long)waited);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%u/stat", dir, pid);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%u", dir, pid);
	rmdir(path);
}

static bool named(struct aggregate *a, uint32_t tid, const char *comm)
{
	size_t n;
	const struct thread_name *t = aggregate__threads(a, &n);

	for (size_t i = 0; i < n; i++)
		if (t[i].tid == tid && !strcmp(t[i].comm, comm))
			return true;
	return false;
}

/*
 * While a flush writes the aggregate out and clears it, the names learned
 * (by the recorder's reader, which peeks meanwhile) wait in the
 * collector; released after the clear, they are in it for the next
 * flush, once each.
 */
static void test_hold_names(struct aggregate *agg)
{
	const uint32_t tid = THREAD + 7;
	size_t n;

	collector__hold_names(col, true);
	feed(synth_comm(&s, PID, tid, "held-a", 0, 60));
	feed(synth_comm(&s, PID, tid, "held-b", 0, 61));
	ok(!named(agg, tid, "held-a") && !named(agg, tid, "held-b"),
	   "names held: none in the aggregate the flush writes");
	aggregate__clear(agg);
	collector__hold_names(col, false);
	ok(named(agg, tid, "held-b"), "released after the clear: the last "
	   "name, for the next flush");
	aggregate__threads(agg, &n);
	is_int((int)n, 1, "... once");
	collector__hold_names(col, false);
	aggregate__threads(agg, &n);
	is_int((int)n, 1, "released again: nothing more");
	feed(synth_comm(&s, PID, tid, "free-c", 0, 62));
	ok(named(agg, tid, "free-c"), "not held: straight into the aggregate");
}

/* /proc/PID/task/TID/comm of the fake /proc in @dir. */
static void fake_comm(const char *dir, unsigned pid, unsigned tid,
		      const char *comm)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u", dir, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%u/task", dir, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%u/task/%u", dir, pid, tid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%u/task/%u/comm", dir, pid, tid);
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "%s\n", comm);
		fclose(f);
	}
}

/* What fake_comm() and a test's exe link made, gone. */
static void remove_fake(const char *dir, unsigned pid, unsigned tid)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%u/task/%u/comm", dir, pid, tid);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%u/task/%u", dir, pid, tid);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/%u/task", dir, pid);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/%u/exe", dir, pid);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%u", dir, pid);
	rmdir(path);
}

/*
 * An exec's stack base is read for the processes the filter accepts
 * only: by the exec's name, or else by /proc/PID/exe (a program run
 * through a link of another name); where that link cannot be read, as
 * before.  Execs wait in the queue until collector__retry_execs().
 */
static void test_exec_filter(const char *dir)
{
	static const struct { unsigned pid; const char *comm, *exe; } e[] = {
		{ 700001, "other", "/opt/watched" },	/* by its executable */
		{ 700002, "named", NULL },		/* by its name */
		{ 700003, "other", "/bin/other" },	/* neither: not read */
		{ 700004, "other", NULL },		/* no link: read */
	};
	char path[256];

	collector__retry_execs(col);	/* none left from before */
	collector__set_filter(col, exe_or_name, NULL);
	for (size_t i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/%u", dir, e[i].pid);
		mkdir(path, 0755);
		snprintf(path, sizeof(path), "%s/%u/exe", dir, e[i].pid);
		if (e[i].exe && symlink(e[i].exe, path))
			perror("symlink");
		collector__exec_seen(col, e[i].pid, 1, e[i].comm);
	}
	is_int((int)collector__execs_waiting(col), 3,
	       "execs: the stack bases of the watched executable (through a "
	       "link of another name), the watched name and one whose "
	       "executable cannot be read wait to be read; the other's not");
	collector__retry_execs(col);	/* their /proc has no stat: done */
	is_int((int)collector__execs_waiting(col), 0, "... and are read");
	/* The samples of what the filter refused read nothing of /proc (no
	 * name), nor does the exec's record name it, nor a child it forks;
	 * the others' are named. */
	for (size_t i = 0; i < 4; i++)
		fake_comm(dir, e[i].pid, e[i].pid, e[i].comm);
	fake_comm(dir, 700005, 700005, "other");
	feed(synth_comm(&s, 700003, 700003, "other", 1, 70));
	feed(synth_task(&s, PERF_RECORD_FORK, 700005, 700003, 700005, 700003,
			71));
	for (size_t i = 0; i < 4; i++)
		feed(synth_sample(&s, e[i].pid, e[i].pid, 72, 0x1000, 0x2000,
				  0x2000, 1));
	feed(synth_sample(&s, 700005, 700005, 73, 0x1000, 0x2000, 0x2000,
			  1));
	ok(named(agg_of_test, 700001, "other") &&
	   named(agg_of_test, 700002, "named"),
	   "a sample of a watched exec's process: named from /proc");
	ok(!named(agg_of_test, 700003, "other"),
	   "of a refused one: not named, by /proc nor by its exec's record");
	ok(!named(agg_of_test, 700005, "other"),
	   "... nor its child");
	/* the notifier reports an exec before the ring's fork record of
	 * the process is read: the fork does not undo its verdict */
	fake_comm(dir, 700006, 700006, "other");
	snprintf(path, sizeof(path), "%s/700006/exe", dir);
	if (symlink("/bin/other", path))
		perror("symlink");
	collector__exec_seen(col, 700006, 80, "other");
	feed(synth_task(&s, PERF_RECORD_FORK, 700006, 700002, 700006, 700002,
			75));
	feed(synth_sample(&s, 700006, 700006, 81, 0x1000, 0x2000, 0x2000,
			  1));
	ok(!named(agg_of_test, 700006, "other"), "an exec refused before "
	   "its fork is read, from a watched parent: not named");
	/* and an exec accepted before its fork is read, from a refused
	 * parent: its base still to be read, the fork finds it queued */
	fake_comm(dir, 700007, 700007, "named");
	collector__exec_seen(col, 700007, 90, "named");
	feed(synth_task(&s, PERF_RECORD_FORK, 700007, 700003, 700007, 700003,
			85));
	feed(synth_sample(&s, 700007, 700007, 91, 0x1000, 0x2000, 0x2000,
			  1));
	ok(named(agg_of_test, 700007, "named"), "an exec accepted before its "
	   "fork is read, from a refused parent: named");
	collector__retry_execs(col);
	collector__set_filter(col, NULL, NULL);
	for (size_t i = 0; i < 4; i++)
		remove_fake(dir, e[i].pid, e[i].pid);
	remove_fake(dir, 700005, 700005);
	remove_fake(dir, 700006, 700006);
	remove_fake(dir, 700007, 700007);
}

int main(void)
{
	char dir[] = "/tmp/icppd-col-XXXXXX", self[256] = "";
	struct module_cache *mc = module_cache__new();
	struct aggregate *agg = aggregate__new(1000);
	struct capture c;
	uint64_t start = 0, pgoff = 0, end = 0, sp, bp, cfa_off;
	const struct collector_stats *st;
	ssize_t n;
	FILE *f;
	char line[512];

	col = collector__new(mc, agg);
	if (!mkdtemp(dir) || (n = readlink("/proc/self/exe", self, sizeof(self) - 1)) < 0)
		return 1;
	fake_proc(dir, PID, BASE + 8, BRK_LO);	/* the base: rounded down */
	icppd_procdir = dir;

	sampled(&c);
	self_mapping(c.ip, &start, &pgoff);
	f = fopen("/proc/self/maps", "r");
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi;

		if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && lo == start)
			end = hi;
	}
	fclose(f);
	cfa_off = c.cfa - c.sp;		/* CFA = SP + cfa_off here */

	feed(synth_comm(&s, PID, PID, "app", 1, 1));
	feed(synth_mmap2(&s, PID, start, end - start, pgoff,
			 PROT_READ | PROT_EXEC, self, 2));
	feed(synth_mmap2(&s, PID, TSTACK_LO, TSTACK_HI - TSTACK_LO, 0,
			 PROT_READ | PROT_WRITE, "//anon", 3));
	feed(synth_mmap2(&s, PID, JIT, 0x1000, 0, PROT_READ | PROT_EXEC,
			 "//anon", 3));
	feed(synth_mmap2(&s, PID, HEAP_LO, HEAP_HI - HEAP_LO, 0,
			 PROT_READ | PROT_WRITE, "[heap]", 3));
	feed(synth_mmap2(&s, PID, BRK_LO, BRK_HI - BRK_LO, 0,
			 PROT_READ | PROT_WRITE, "//anon", 3));
	feed(synth_mmap2(&s, PID, 0x10000, 0x1000, 0, PROT_READ | PROT_EXEC,
			 "/etc/hostname", 3));

	/* Main thread: height = BASE - (sp + cfa_off). */
	sp = BASE - 4096;
	bp = sp + (c.bp - c.sp);
	for (int i = 0; i < 5; i++)
		feed(synth_sample(&s, PID, PID, 10, c.ip, sp, bp, 1));
	is_int(cid_samples(agg, PID, PID, (int64_t)(4096 - cfa_off)), 5,
	       "main thread: height = startstack&~15 - CFA");
	/* Another thread on the anonymous stack: base = mapping end. */
	sp = TSTACK_HI - 8192;
	feed(synth_sample(&s, PID, THREAD, 11, c.ip, sp, sp + (c.bp - c.sp), 1));
	is_int(cid_samples(agg, PID, THREAD, (int64_t)(8192 - cfa_off)), 1,
	       "thread: height = stack mapping end - CFA");
	/* A coroutine's stack on the heap, whose end moves: no height. */
	sp = HEAP_HI - 8192;
	feed(synth_sample(&s, PID, THREAD, 11, c.ip, sp, sp + (c.bp - c.sp), 1));
	feed(synth_sample(&s, PID, THREAD, 11, c.ip, sp - 4096, sp, 1));
	is_int(cid_samples(agg, PID, THREAD, ICPPD_HEIGHT_NONE), 2,
	       "sp on the heap: the function alone (ICPPD_HEIGHT_NONE), wherever it is");
	/* A signal stack on a brk heap that perf named "//anon": the
	 * mapping that holds start_brk is the heap all the same. */
	sp = BRK_HI - 8192;
	feed(synth_sample(&s, PID, THREAD, 11, c.ip, sp, sp + (c.bp - c.sp), 1));
	is_int(cid_samples(agg, PID, THREAD, ICPPD_HEIGHT_NONE), 3,
	       "sp on an anonymous mapping holding start_brk: no height either");
	{
		size_t k;
		const struct cid_count *cc = aggregate__cids(agg, &k);

		is_str(cc[0].func_name, "sampled", "function named from the symbol table");
	}

	/* Learning: the learning event's samples (a stack trailer) are
	 * unwound only, never counted; every other sample's CID is looked
	 * up in what was learned. */
	st = collector__stats(col);
	{
		uint64_t samples = st->samples, cids = st->cids;

		is_int(collector__set_unwind(col, no_path, NULL), 0, "unwinding on");
		collector__set_learning(col, known_none, NULL, false);
		sp = BASE - 4096;
		bp = sp + (c.bp - c.sp);
		feed(synth_sample_stack(&s, PID, PID, 50, c.ip, sp, bp, 64, 0));
		is_int(st->learn_samples, 1, "learning sample counted as such");
		is_int(st->samples, samples, "and not as a sample");
		is_int(st->unwind[UNW_NO_STACK], 1,
		       "unwound (its copy was empty: no_stack)");
		feed(synth_sample(&s, PID, PID, 51, c.ip, sp, bp, 1));
		is_int(st->cids, cids + 1, "a main sample still forms its CID");
		is_int(st->learn_unknown, 1, "and is counted unexplained");
		is_int(st->unwind[UNW_NO_STACK], 1, "but is not unwound");
		collector__set_learning(col, NULL, NULL, false);
	}

	feed(synth_sample(&s, PID, PID, 12, c.ip, 0, 0, 0));
	is_int(unresolved(agg, CID_NO_USER_REGS), 1, "no_user_regs counted");
	feed(synth_sample(&s, PID, PID, 12, 0x1234, BASE - 64, 0, 1));
	is_int(unresolved(agg, CID_NO_MAPPING), 1, "no_mapping counted");
	feed(synth_sample(&s, PID, PID, 12, JIT + 16, BASE - 64, 0, 1));
	is_int(unresolved(agg, CID_ANON_CODE), 1, "anon_code counted");
	feed(synth_sample(&s, PID, PID, 12, 0x10010, BASE - 64, 0, 1));
	is_int(unresolved(agg, CID_MODULE_UNREADABLE), 1, "module_unreadable counted");
	feed(synth_sample(&s, PID, PID, 12, c.ip, BASE - (2ULL << 30), 0, 1));
	is_int(unresolved(agg, CID_SP_OUTSIDE_STACK), 1,
	       "sp 2 GiB below the main stack base: sp_outside_stack");
	feed(synth_sample(&s, PID, PID, 12, c.ip, BASE + 64, 0, 1));
	is_int(unresolved(agg, CID_SP_OUTSIDE_STACK), 2, "sp above the base: sp_outside_stack");

	/* A process never seen, without /proc entry: its mappings are
	 * unknown first; give it one, and the base is still unknown. */
	feed(synth_mmap2(&s, NOPROC, start, end - start, pgoff,
			 PROT_READ | PROT_EXEC, self, 13));
	feed(synth_sample(&s, NOPROC, NOPROC, 14, c.ip, BASE - 4096, 0, 1));
	is_int(unresolved(agg, CID_NO_STACK_BASE), 1, "no_stack_base counted");

	/* fork: the child inherits mappings and main stack base. */
	feed(synth_task(&s, PERF_RECORD_FORK, CHILD, PID, CHILD, PID, 15));
	sp = BASE - 4096;
	feed(synth_sample(&s, CHILD, CHILD, 16, c.ip, sp, sp + (c.bp - c.sp), 1));
	is_int(cid_samples(agg, CHILD, CHILD, (int64_t)(4096 - cfa_off)), 1,
	       "forked child inherits mappings and stack base");

	/* The child execs and is gone before its new base can be read (no
	 * /proc entry): its samples are no_stack_base, never measured
	 * from the base of the image it replaced. */
	feed(synth_comm(&s, CHILD, CHILD, "short", 1, 17));
	feed(synth_mmap2(&s, CHILD, start, end - start, pgoff,
			 PROT_READ | PROT_EXEC, self, 17));
	feed(synth_sample(&s, CHILD, CHILD, 18, c.ip, sp, sp + (c.bp - c.sp), 1));
	is_int(unresolved(agg, CID_NO_STACK_BASE), 2,
	       "after an exec whose base is unknown: no_stack_base");
	is_int(cid_samples(agg, CHILD, CHILD, (int64_t)(4096 - cfa_off)), 1,
	       "and not a height from the replaced image's base");

	/* execve() sets startstack twice: above argv's strings, then lower
	 * once argv, envp and auxv are pushed.  /proc shows the first value
	 * when the exec record is read, the final one by the time a sample
	 * shows the process back in user space: the final one is used. */
	fake_proc(dir, EXECER, BASE + 0x1800, 0);
	feed(synth_comm(&s, EXECER, EXECER, "execd", 1, 40));
	feed(synth_mmap2(&s, EXECER, start, end - start, pgoff,
			 PROT_READ | PROT_EXEC, self, 40));
	fake_proc(dir, EXECER, BASE + 8, 0);
	feed(synth_sample(&s, EXECER, EXECER, 41, c.ip, sp, sp + (c.bp - c.sp), 1));
	is_int(cid_samples(agg, EXECER, EXECER, (int64_t)(4096 - cfa_off)), 1,
	       "exec: the base is read once a sample shows the exec done");

	/* fork: the child's base is its parent's, whatever /proc shows of
	 * the child by the time the record is read (an exec since, say). */
	fake_proc(dir, FORKED, BASE + 0x10000, 0);
	feed(synth_task(&s, PERF_RECORD_FORK, FORKED, PID, FORKED, PID, 42));
	feed(synth_sample(&s, FORKED, FORKED, 43, c.ip, sp, sp + (c.bp - c.sp), 1));
	is_int(cid_samples(agg, FORKED, FORKED, (int64_t)(4096 - cfa_off)), 1,
	       "fork: the parent's base, not /proc's view of the child now");

	/* exec: the old image is gone until new MMAP2 records arrive. */
	feed(synth_comm(&s, PID, PID, "new", 1, 20));
	feed(synth_sample(&s, PID, PID, 21, c.ip, sp, bp, 1));
	is_int(unresolved(agg, CID_NO_MAPPING), 2, "exec forgets the old mappings");

	feed(synth_lost(&s, 7, 22));
	st = collector__stats(col);
	is_int(st->lost, 7, "lost samples counted");
	is_int(st->samples, 22, "every sample counted (learning samples are not)");
	is_int(st->cids + st->unresolved, st->samples, "cids + unresolved = samples");

	synth_sample(&s, PID, PID, 23, 1, 2, 3, 1);
	((struct perf_event_header *)s.buf)->size -= 8;
	feed((struct perf_event_header *)s.buf);
	is_int(st->malformed, 1, "malformed sample counted, not decoded");

	/* exit of the main thread drops the process. */
	feed(synth_task(&s, PERF_RECORD_EXIT, CHILD, PID, CHILD, PID, 30));
	feed(synth_sample(&s, CHILD, CHILD, 31, c.ip, BASE - 4096, 0, 1));
	is_int(unresolved(agg, CID_NO_MAPPING), 3, "exited process forgotten");

	/* pid 0 is the key of an empty slot: a crafted MMAP2 or FORK of
	 * pid 0 took a slot that looked empty (fuzz_record: its maps
	 * leaked, and the table grew with each one). */
	for (int i = 0; i < 1000; i++)
		feed(synth_mmap2(&s, 0, 0x400000 + 0x1000 * (uint64_t)i, 0x1000,
				 0, PROT_READ | PROT_EXEC, self, 40));
	feed(synth_task(&s, PERF_RECORD_FORK, 0, PID, 0, PID, 41));
	for (int i = 0; i < 1000; i++)
		feed(synth_comm(&s, 0, 0, "swapper", 0, 42));
	is_int(st->malformed, 1 + 1001, "MMAP2 and FORK records of pid 0: "
	       "malformed, nothing kept (ASan: no leak)");

	/* Mapping churn: a process that maps and unmaps one executable
	 * page at ever new addresses (perf reports no unmaps).  One the
	 * filter refuses keeps no table at all; a watched one's inserts
	 * find their overlaps by binary search. */
	collector__set_filter(col, all_but_unwatched, NULL);
	feed(synth_comm(&s, UNWATCHED, UNWATCHED, "churn", 1, 50));
	feed(synth_comm(&s, WATCHED, WATCHED, "churn", 1, 50));
	for (int i = 0; i < 20000; i++) {
		uint64_t at = 0x10000000 + 0x2000 * (uint64_t)i;

		feed(synth_mmap2(&s, UNWATCHED, at, 0x1000, 0,
				 PROT_READ | PROT_EXEC, self, 51));
		feed(synth_mmap2(&s, WATCHED, at, 0x1000, 0, PROT_READ,
				 "//anon", 51));
	}
	is_int(space__find_proc(col, UNWATCHED) ?
	       (int)space__find_proc(col, UNWATCHED)->nmaps : -1, 0,
	       "a process the filter refuses: no mapping table");
	is_int(space__find_proc(col, WATCHED) ?
	       (int)space__find_proc(col, WATCHED)->nmaps : -1, 20000,
	       "a watched one: every mapping kept");
	/* one mapping over the middle 10,000 replaces them */
	feed(synth_mmap2(&s, WATCHED, 0x10000000 + 0x2000 * 5000ull,
			 0x2000 * 10000ull, 0, PROT_READ, "//anon", 52));
	is_int((int)space__find_proc(col, WATCHED)->nmaps, 10001,
	       "a mapping over 10,000 others replaces them");
	test_churn_down(dir);
	test_map_model();
	agg_of_test = agg;
	test_big_perfmap(dir);
	test_hold_names(agg);
	test_exec_filter(dir);

	collector__delete(col);
	aggregate__delete(agg);
	module_cache__delete(mc);
	{
		char path[256];

		const unsigned pids[] = { PID, EXECER, FORKED, WATCHED };

		for (size_t i = 0; i < 4; i++) {
			snprintf(path, sizeof(path), "%s/%u/stat", dir, pids[i]);
			unlink(path);
			snprintf(path, sizeof(path), "%s/%u/maps", dir, pids[i]);
			unlink(path);
			snprintf(path, sizeof(path), "%s/%u", dir, pids[i]);
			rmdir(path);
		}
		rmdir(dir);
	}
	return tap_done();
}
