/*
 * test_session.c - the session's ordered delivery (collector/session.h)
 * on a real event: a child that burns CPU, sampled with 8 KiB stack
 * copies, read round by round as the recorder reads it.  Every record
 * delivered must be the record read (each is hashed when read and
 * checked when delivered: one given back to the kernel too early would
 * be written over), in time order.  With rings of room, records wait in
 * place; with rings too small to keep a round, they are copied.  Read
 * by spills (a flush's, session__spill()) between rounds far apart,
 * none is lost where the same rings read only at the end lose samples.
 *
 * The deep learner's records (session__deepen) go to rings of their own,
 * where they wait as in roomy rings, though the CPUs' are too small to
 * keep one.
 *
 * Sized by CPU time: the child burns BURN_MS of CPU, which at 1000 Hz of
 * cpu-clock is about BURN_MS samples; the checks want a third.
 *
 * The exec notifier wakes poll at an exec of a traced task.  Where the
 * exec tracepoint opens (root), forks and exits without an exec do not
 * wake it; where it does not (its tracefs id unreadable here), they do,
 * as the COMM records' event gets them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../tap.h"
#include "burner.h"
#include "collector/event.h"
#include "collector/record.h"
#include "collector/session.h"
#include "common/sys.h"

#define BURN_MS 300
#define MIN_SAMPLES (BURN_MS / 3)
#define STACK 8192
#define DEEP_STACK 16384
#define MAX_RECORDS 65536

/* What a pass saw: each record read, by time and hash, and what was
 * delivered. */
struct seen {
	struct {
		uint64_t time, hash;
		bool delivered;
	} rec[MAX_RECORDS];
	size_t n;
	uint64_t last_time, samples, deep, lost;
	unsigned out_of_order, unknown, broken;
};

static uint64_t fnv(uint64_t x, const void *data, size_t len)
{
	const uint8_t *p = data;

	for (size_t i = 0; i < len; i++)
		x = (x ^ p[i]) * 1099511628211ULL;
	return x;
}

/* A record's hash: a sample's by its fields and the filled part of its
 * copy (a copied sample is trimmed to it), another record's whole. */
static uint64_t hash(const struct perf_event_header *h)
{
	uint64_t x = 1469598103934665603ULL;
	struct perf_sample s;

	if (h->type != PERF_RECORD_SAMPLE || record__parse_sample(h, &s))
		return fnv(x, h, h->size);
	x = fnv(x, &s.time, 8);
	x = fnv(x, &s.tid, 4);
	x = fnv(x, &s.sp, 8);
	x = fnv(x, &s.uip, 8);
	return s.stack ? fnv(x, s.stack, s.stack_size) : x;
}

static void note_read(struct seen *sn, const struct perf_event_header *h)
{
	uint64_t t = 0;

	if (sn->n == MAX_RECORDS)
		return;
	record__time(h, &t);
	sn->rec[sn->n].time = t;
	sn->rec[sn->n].hash = hash(h);
	sn->rec[sn->n++].delivered = false;
}

static void note_delivered(struct seen *sn, const struct perf_event_header *h)
{
	struct perf_sample s;
	uint64_t t = 0, x = hash(h);
	size_t i;

	record__time(h, &t);
	if (t < sn->last_time)
		sn->out_of_order++;
	sn->last_time = t;
	for (i = sn->n; i-- > 0;)
		if (sn->rec[i].time == t && sn->rec[i].hash == x &&
		    !sn->rec[i].delivered)
			break;
	if (i == (size_t)-1)
		sn->unknown++;
	else
		sn->rec[i].delivered = true;
	if (h->type == PERF_RECORD_LOST && h->size >= sizeof(*h) + 16)
		sn->lost += ((const uint64_t *)(h + 1))[1];
	if (h->type != PERF_RECORD_SAMPLE)
		return;
	if (record__parse_sample(h, &s) || !s.has_stack ||
	    s.stack_size > DEEP_STACK)
		sn->broken++;
	else
		sn->samples++;
	sn->deep += h->size > DEEP_STACK;
}

/* Records read and never delivered. */
static size_t never_delivered(const struct seen *sn)
{
	size_t n = 0;

	for (size_t i = 0; i < sn->n; i++)
		n += !sn->rec[i].delivered;
	return n;
}

static int one_round(struct session *s, struct seen *sn, bool final)
{
	const struct perf_event_header *h;
	int n = session__fill(s);

	for (int i = 0; i < n; i++)
		note_read(sn, session__fresh(s, (size_t)i));
	session__order(s, final);
	while ((h = session__next(s)))
		note_delivered(sn, h);
	return n < 0 ? n : session__keep_rest(s);
}

/* How the rings are read while the child runs. */
enum reading {
	ROUNDS,		/* a round every 10 ms, as the recorder's loop */
	SPILLS,		/* a spill every 2 ms, rounds only at the end */
	AT_END,		/* nothing until the end */
};

static int spill(struct session *s, struct seen *sn)
{
	int n = session__spill(s);

	for (int i = 0; i < n; i++)
		note_read(sn, session__fresh(s, (size_t)i));
	return n < 0 ? n : 0;
}

/* Keeps @pid on the first CPU this process may use: its samples go to
 * one ring, as the sizes here assume (spread over the CPUs' rings, 190
 * samples of 8 KiB fit in two rings of 1 MiB, and none is lost). */
static void pin(pid_t pid)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set)) {
			CPU_ZERO(&set);
			CPU_SET(c, &set);
			sched_setaffinity(pid, sizeof(set), &set);
			return;
		}
}

/* With @deep (NO_DEEP: none), the main event copies no stack: a
 * learner with STACK bytes, taking turns, is put in place at once by a
 * deep learner with DEEP_STACK, given rings of @deep pages (0: none). */
#define NO_DEEP ((size_t)-1)
static int learners(struct session *s, const struct perf_event_attr *main,
		    pid_t child, size_t deep)
{
	struct perf_event_attr la;
	char err[512];

	event__learner(main, STACK, 0, &la);
	if (session__add_learner(s, &la, &child, 1, false, 0, err,
				 sizeof(err)))
		return -1;
	la.sample_stack_user = DEEP_STACK;
	if (session__add_learner(s, &la, &child, 1, true, deep, err,
				 sizeof(err)) || session__enable(s))
		return -1;
	return session__deepen(s, true) ? -1 : 0;
}

/* A session of @pages a ring on a burning child, read as @how says;
 * what it saw in *@sn, its copies in *@copied of *@read.  0, or -1
 * (skipped: @why). */
static int run(size_t pages, size_t deep, enum reading how, struct seen *sn,
	       uint64_t *copied, uint64_t *read, const char **why)
{
	struct event_choice ev;
	struct session *s;
	char err[512];
	int go = -1, errnum, status, ret = -1;
	pid_t child;

	if (event__choose("cpu-clock", 1000, 0, &ev, err, sizeof(err))) {
		*why = "no cpu-clock event";
		return -1;
	}
	if (deep == NO_DEEP)
		event__add_stack(&ev, STACK);
	child = burner_spawn(BURN_MS, &go);
	if (child < 0) {
		*why = "cannot fork";
		return -1;
	}
	pin(child);
	s = session__open(&ev.attr, &child, 1, pages, deep == NO_DEEP ? 0 :
			  SESSION_TAKE_TURNS, err, sizeof(err), &errnum);
	if (!s || (deep == NO_DEEP ? session__enable(s) :
		   learners(s, &ev.attr, child, deep)) ||
	    write(go, "g", 1) != 1) {
		*why = "perf_event_open refused";
		kill(child, SIGKILL);
	} else {
		while (waitpid(child, &status, WNOHANG) != child) {
			if (how == AT_END) {
				usleep(10000);
				continue;
			}
			session__wait(s, NULL, 0, how == SPILLS ? 2 : 10);
			if (how == SPILLS ? spill(s, sn) :
			    one_round(s, sn, false))
				break;
		}
		session__disable(s);
		ret = one_round(s, sn, true) ? -1 : 0;
		session__copied(s, copied, read);
		*why = "a round failed";
	}
	waitpid(child, &status, 0);
	close(go);
	session__close(s);
	return ret;
}

static void check(size_t pages, bool roomy)
{
	static struct seen sn;
	uint64_t copied = 0, read = 0;
	const char *why = NULL;
	size_t undelivered;

	sn = (struct seen){ .n = 0 };
	if (run(pages, NO_DEEP, ROUNDS, &sn, &copied, &read, &why)) {
		skip(why, "%zu-page rings", pages);
		return;
	}
	undelivered = never_delivered(&sn);
	ok(sn.samples >= MIN_SAMPLES, "%zu-page rings: %llu samples from %d "
	   "ms of CPU at 1000 Hz (want >= %d)", pages,
	   (unsigned long long)sn.samples, BURN_MS, MIN_SAMPLES);
	ok(!sn.unknown && !sn.broken && !undelivered && sn.n == read,
	   "%zu-page rings: each of %zu records delivered once, as it was "
	   "read (%u changed, %u broken, %zu never delivered)", pages, sn.n,
	   sn.unknown, sn.broken, undelivered);
	is_int(sn.out_of_order, 0, "%zu-page rings: in time order", pages);
	if (roomy)
		ok(copied * 4 < read, "%zu-page rings: records wait in the "
		   "rings (%llu of %llu copied: those that wrapped the end)",
		   pages, (unsigned long long)copied,
		   (unsigned long long)read);
	else
		ok(copied * 2 > read, "%zu-page rings: too small to keep a "
		   "round, the records are copied (%llu of %llu)", pages,
		   (unsigned long long)copied, (unsigned long long)read);
}

/*
 * 256-page rings (1 MiB: about 125 samples of 8 KiB, 125 ms of the
 * child's CPU, of its 300) read only once it is done lose samples;
 * spilled every 2 ms, none (it would take this process 120 ms off the
 * CPU), and each record read is delivered once, in time order, from the
 * copy the spill made (every record a spill read is copied).
 */
static void check_spills(void)
{
	static struct seen sn;
	uint64_t copied = 0, read = 0;
	const char *why = NULL;
	size_t undelivered;

	sn = (struct seen){ .n = 0 };
	if (run(256, NO_DEEP, AT_END, &sn, &copied, &read, &why)) {
		skip(why, "spills");
		return;
	}
	ok(sn.lost > 0, "256-page rings read at the end only: %llu samples "
	   "lost (%llu kept)", (unsigned long long)sn.lost,
	   (unsigned long long)sn.samples);
	sn = (struct seen){ .n = 0 };
	if (run(256, NO_DEEP, SPILLS, &sn, &copied, &read, &why)) {
		skip(why, "spills");
		return;
	}
	undelivered = never_delivered(&sn);
	ok(sn.samples >= MIN_SAMPLES && !sn.lost, "spilled every 2 ms: %llu "
	   "samples, %llu lost", (unsigned long long)sn.samples,
	   (unsigned long long)sn.lost);
	ok(!sn.unknown && !sn.broken && !undelivered && sn.n == read,
	   "spilled: each of %zu records delivered once, as it was read (%u "
	   "changed, %u broken, %zu never delivered)", sn.n, sn.unknown,
	   sn.broken, undelivered);
	is_int(sn.out_of_order, 0, "spilled: in time order");
	ok(copied + 2 >= read, "spilled: the records copied out of the rings "
	   "(%llu of %llu; the final round's may wait in place)",
	   (unsigned long long)copied, (unsigned long long)read);
}

/*
 * 16-page rings (64 KiB) keep a round of the main event's small samples,
 * but not one of the deep learner's 16 KiB copies (a quarter of the
 * ring holds one): written there, they are copied.  In rings of 1024
 * pages of its own (4 MiB: 250 ms of them), they wait there.
 */
static void check_deep(void)
{
	static struct seen sn;
	uint64_t copied = 0, read = 0;
	const char *why = NULL;
	size_t undelivered;

	sn = (struct seen){ .n = 0 };
	if (run(16, 0, ROUNDS, &sn, &copied, &read, &why)) {
		skip(why, "the deep learner");
		return;
	}
	ok(copied * 2 > read, "the deep learner in the CPUs' 16-page rings: "
	   "its records copied (%llu of %llu)", (unsigned long long)copied,
	   (unsigned long long)read);
	sn = (struct seen){ .n = 0 };
	if (run(16, 1024, ROUNDS, &sn, &copied, &read, &why)) {
		skip(why, "the deep learner");
		return;
	}
	undelivered = never_delivered(&sn);
	ok(sn.deep >= MIN_SAMPLES && !sn.lost, "in 1024-page rings of its "
	   "own: %llu samples of %d-byte copies (want >= %d), %llu lost",
	   (unsigned long long)sn.deep, DEEP_STACK, MIN_SAMPLES,
	   (unsigned long long)sn.lost);
	ok(!sn.unknown && !sn.broken && !undelivered && sn.n == read,
	   "its own rings: each of %zu records delivered once, as it was "
	   "read (%u changed, %u broken, %zu never delivered)", sn.n,
	   sn.unknown, sn.broken, undelivered);
	is_int(sn.out_of_order, 0, "its own rings and the CPUs': in time "
	       "order");
	ok(copied * 4 < read, "its own rings: records wait there (%llu of "
	   "%llu copied)", (unsigned long long)copied,
	   (unsigned long long)read);
}

/* A child held at @cmd until told: 'f' forks FORKS children that exit
 * at once (it answers on @ack once they are reaped), 'e' execs
 * /bin/sleep, which lives on: a traced task gone makes poll answer
 * POLLHUP alone for its events, whatever woke it. */
#define FORKS 8
static pid_t exec_child(int *cmd, int *ack)
{
	int c[2], a[2];
	pid_t pid;
	char x;

	if (pipe(c))
		return -1;
	if (pipe(a)) {
		close(c[0]);
		close(c[1]);
		return -1;
	}
	pid = fork();
	if (!pid) {
		close(c[1]);
		close(a[0]);
		while (read(c[0], &x, 1) == 1) {
			if (x == 'e')
				execl("/bin/sleep", "sleep", "60", (char *)NULL);
			for (int i = 0; i < FORKS; i++) {
				pid_t p = fork();

				if (!p)
					_exit(0);
				if (p > 0)
					waitpid(p, NULL, 0);
			}
			if (write(a[1], "a", 1) != 1)
				break;
		}
		_exit(1);
	}
	close(c[0]);
	close(a[1]);
	*cmd = c[1];
	*ack = a[0];
	return pid;
}

static int (*real_openat)(int, const char *, int, mode_t);

static int no_tracefs(int dirfd, const char *path, int flags, mode_t mode)
{
	if (!strncmp(path, "/sys/kernel/", 12)) {
		errno = ENOENT;
		return -1;
	}
	return real_openat(dirfd, path, flags, mode);
}

/* A child of exec_child() and a session on it. */
struct exec_run {
	pid_t child;
	int cmd, ack;
	struct session *s;
};

/* Starts @x: its child, and a session on it with the exec tracepoint
 * (@tracefs) or without it (its id unreadable), enabled.  False after
 * a skip of @what, saying why. */
static bool exec_start(struct exec_run *x, bool tracefs, const char *what)
{
	struct event_choice ev;
	char err[512];
	int errnum;

	*x = (struct exec_run){ .child = -1, .cmd = -1, .ack = -1 };
	if (event__choose("cpu-clock", 1000, 0, &ev, err, sizeof(err))) {
		skip("no cpu-clock event", "%s", what);
		return false;
	}
	x->child = exec_child(&x->cmd, &x->ack);
	if (x->child < 0) {
		skip("cannot fork", "%s", what);
		return false;
	}
	real_openat = icppd_sys.openat;
	if (!tracefs)
		icppd_sys.openat = no_tracefs;
	x->s = session__open(&ev.attr, &x->child, 1, 16, 0, err, sizeof(err),
			     &errnum);
	icppd_sys.openat = real_openat;
	if (!x->s || session__enable(x->s) || !session__notifies_execs(x->s)) {
		skip("perf_event_open refused", "%s", what);
		return false;
	}
	return true;
}

/* Has @x's child exec sleep: the mask of the waits of up to @tries
 * tenths of a second until the notifier wakes poll; *@mine: the exec
 * was reported, as sleep.  -1 when the child could not be told. */
static int exec_sleep(struct exec_run *x, int tries, bool *mine)
{
	struct session_exec e = { 0 };
	int mask = 0;

	*mine = false;
	if (write(x->cmd, "e", 1) != 1)
		return -1;
	for (int i = 0; i < tries && !(mask & SESSION_EXEC); i++)
		mask = session__wait(x->s, NULL, 0, 100);
	while (session__next_exec(x->s, &e))
		*mine |= e.pid == (uint32_t)x->child && !strcmp(e.comm, "sleep");
	return mask;
}

static void exec_end(struct exec_run *x)
{
	close(x->cmd);
	close(x->ack);
	if (x->child > 0) {
		kill(x->child, SIGKILL);
		waitpid(x->child, NULL, 0);
	}
	session__close(x->s);
}

/* The notifier on a child that forks, then execs, with the exec
 * tracepoint (@tracefs) or without it (its id unreadable). */
static void check_execs(bool tracefs)
{
	const char *mode = tracefs ? "tracepoint" : "no tracefs";
	struct session_exec e = { 0 };
	struct exec_run x;
	char what[32], c;
	int mask, execs = 0;
	bool only, mine;

	snprintf(what, sizeof(what), "%s: execs", mode);
	if (!exec_start(&x, tracefs, what))
		goto out;
	only = session__notifies_execs_only(x.s);
	if (!tracefs) {
		ok(!only, "no tracefs: the COMM records wake poll");
		is_int(session__filter_execs(x.s, "pid == 1"), -EOPNOTSUPP,
		       "no tracefs: no exec filter");
	} else if (!only) {
		skip("the exec tracepoint needs root (or its tracefs)",
		     "tracepoint: forks do not wake poll");
	}
	if (write(x.cmd, "f", 1) != 1 || read(x.ack, &c, 1) != 1) {
		ok(false, "%s: the child forks", mode);
		goto out;
	}
	mask = session__wait(x.s, NULL, 0, 300);
	if (only)
		ok(mask >= 0 && !(mask & SESSION_EXEC), "tracepoint: %d forks "
		   "and exits do not wake poll (mask %d)", FORKS, mask);
	else if (!tracefs)
		ok(mask > 0 && (mask & SESSION_EXEC), "no tracefs: %d forks "
		   "and exits wake poll (mask %d)", FORKS, mask);
	while (session__next_exec(x.s, &e))
		execs++;
	is_int(execs, 0, "%s: no exec reported for the forks", mode);
	mask = exec_sleep(&x, 50, &mine);
	ok(mask > 0 && (mask & SESSION_EXEC), "%s: the exec wakes poll "
	   "(mask %d)", mode, mask);
	ok(mine, "%s: the exec of %d reported, as sleep", mode, (int)x.child);
out:
	exec_end(&x);
}

/* The exec filter's text: what it passes, and what it refuses to
 * hold. */
static void check_filter_text(void)
{
	static const char *const files[] = { "cc1", "gcc-12" };
	static const char *const comms[] = { "make", "a-long-comm-name-here" };
	static const uint32_t pids[] = { 42 };
	char buf[4096], big[300], small[64];

	ok(!event__exec_filter(files, 2, comms, 2, pids, 1, buf, sizeof(buf)),
	   "exec filter: files, names and pids");
	is_str(buf, "filename ~ \"*/cc1\" || filename == \"cc1\" || "
	       "filename ~ \"*/gcc-12\" || filename == \"gcc-12\" || "
	       "filename ~ \"*/make\" || filename == \"make\" || "
	       "filename ~ \"*/a-long-comm-nam*\" || "
	       "filename ~ \"a-long-comm-nam*\" || pid == 42",
	       "exec filter: a path's end or the whole of it; a command "
	       "name of 15 bytes or more, its first 15 as a prefix");
	ok(event__exec_filter(NULL, 0, NULL, 0, NULL, 0, buf, sizeof(buf)),
	   "exec filter: nothing watched, no filter");
	for (const char *bad = "\"*?[\\/\n"; *bad; bad++) {
		char name[8] = { 'a', *bad, 'b', 0 };
		const char *const one[] = { name };

		ok(event__exec_filter(one, 1, NULL, 0, NULL, 0, buf,
				      sizeof(buf)) &&
		   event__exec_filter(NULL, 0, one, 1, NULL, 0, buf,
				      sizeof(buf)),
		   "exec filter: a name holding byte %#x is refused",
		   (unsigned)(unsigned char)*bad);
	}
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	{
		const char *const one[] = { big }, *const empty[] = { "" };

		ok(event__exec_filter(one, 1, NULL, 0, NULL, 0, buf,
				      sizeof(buf)),
		   "exec filter: a file name past a filter string's 255 "
		   "bytes is refused");
		ok(!event__exec_filter(NULL, 0, one, 1, NULL, 0, buf,
				       sizeof(buf)),
		   "exec filter: a command name that long is its first 15");
		ok(event__exec_filter(empty, 1, NULL, 0, NULL, 0, buf,
				      sizeof(buf)),
		   "exec filter: an empty name is refused");
	}
	ok(event__exec_filter(files, 2, NULL, 0, NULL, 0, small, sizeof(small)),
	   "exec filter: longer than the buffer, refused");
	{
		static uint32_t many[400];

		for (size_t i = 0; i < 400; i++)
			many[i] = 1000000 + (uint32_t)i;
		ok(event__exec_filter(NULL, 0, NULL, 0, many, 400, buf,
				      sizeof(buf)),
		   "exec filter: longer than a filter may be (4095 bytes), "
		   "refused");
	}
}

/* An exec under the exec filter @filter: it wakes poll (@wakes) or
 * not, and is reported either way. */
static void check_exec_filter(const char *filter, bool wakes)
{
	struct exec_run x;
	char what[512];
	int mask;
	bool mine;

	snprintf(what, sizeof(what), "exec filter %s", filter);
	if (!exec_start(&x, true, what))
		goto out;
	if (!session__notifies_execs_only(x.s)) {
		skip("the exec tracepoint needs root (or its tracefs)", "%s",
		     what);
		goto out;
	}
	is_int(session__filter_execs(x.s, filter), 0, "%s: set", what);
	/* passed: it wakes within 5 s; refused: not in 1 s */
	mask = exec_sleep(&x, wakes ? 50 : 10, &mine);
	ok(mask >= 0 && !!(mask & SESSION_EXEC) == wakes,
	   "%s: the exec of sleep %s poll (mask %d)", what,
	   wakes ? "wakes" : "does not wake", mask);
	ok(mine, "%s: the exec reported all the same", what);
out:
	exec_end(&x);
}

int main(void)
{
	/* 4 MiB: a round of 10 ms is ~80 KiB of samples; a round's records
	 * are copied only when it is 128 ms late (a quarter of the ring).
	 * 1 MiB rings left 32 ms, which rounds on CI's two loaded cores
	 * under the sanitizers overran: 60 of 296 copied. */
	check(1024, true);
	/* 32 KiB: a quarter holds no 8 KiB sample */
	check(8, false);
	check_spills();
	check_deep();
	check_execs(true);
	check_execs(false);
	check_filter_text();
	check_exec_filter("filename ~ \"*/nosuch\"", false);
	check_exec_filter("filename ~ \"*/sleep\"", true);
	{	/* as the daemon builds them: the kernel takes every form */
		static const char *const files[] = { "nosuch", "gcc-12" };
		static const char *const sleep[] = { "sleep" },
				  *const longer[] = { "a-long-comm-name" };
		static const uint32_t pids[] = { 1 };
		char f[4096];

		if (!event__exec_filter(files, 2, longer, 1, pids, 1, f,
					sizeof(f)))
			check_exec_filter(f, false);
		if (!event__exec_filter(files, 2, sleep, 1, pids, 1, f,
					sizeof(f)))
			check_exec_filter(f, true);
	}
	return tap_done();
}
