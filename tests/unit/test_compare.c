/*
 * test_compare.c - compare__profiles() (profile/compare.h): folded
 * files against each other and against a run of a small store
 * (profile_store.h); a command's first frame that only one side has is
 * dropped; k cuts the keys; a side that cannot be read is an error.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inference/kccf.h"
#include "profile/compare.h"
#include "tests/tap.h"
#include "tests/unit/profile_store.h"

static char dir[] = "/tmp/icppd-compare-XXXXXX";
static char db[PATH_MAX];

/* Writes @text to file @name of the scratch folder: its path. */
static const char *folded(const char *name, const char *text)
{
	static char path[8][PATH_MAX];
	static int k;
	FILE *f;

	k = (k + 1) % 8;
	snprintf(path[k], sizeof(path[k]), "%s/%s", dir, name);
	f = fopen(path[k], "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	return path[k];
}

static struct compare_scores score(const char *a, const char *b, uint32_t k,
				   int *ret)
{
	struct compare_request q = { .db = db, .a = a, .b = b, .k = k,
				     .threshold = 0.01, .no_inline = true };
	struct compare_scores s;

	*ret = compare__profiles(&q, &s);
	return s;
}

static void test_files(void)
{
	const char *a = folded("a", "main;a;leaf 30\nmain;b;leaf 10\n");
	const char *half = folded("half", "main;a;leaf 10\nmain;c;leaf 10\n");
	const char *comm = folded("comm", "prog;main;a;leaf 3\n"
				  "prog;main;b;leaf 1\n");
	const char *other = folded("other", "x;y;main;a;leaf 3\n");
	const char *bad = folded("bad", "main;a;leaf many\n");
	struct compare_scores s;
	int ret;

	s = score(a, a, KCCF_INF, &ret);
	ok(!ret && fabs(s.r.overlap - 1) < 1e-9 && s.contexts_a == 2 &&
	   s.r.common == 2, "a profile against itself: overlap 1, 2 contexts");
	s = score(a, half, KCCF_INF, &ret);
	/* shares: a 0.75/0.25, half 0.5/0.5 on main;a;leaf and main;c;leaf */
	ok(!ret && fabs(s.r.overlap - 0.5) < 1e-9 && s.r.common == 1,
	   "half in common: overlap 0.5 (%g)", s.r.overlap);
	s = score(a, comm, KCCF_INF, &ret);
	ok(!ret && fabs(s.r.overlap - 1) < 1e-9,
	   "a command's first frame on B's stacks only is dropped (%g)",
	   s.r.overlap);
	s = score(a, other, KCCF_INF, &ret);
	ok(!ret && s.r.overlap < 1e-9, "x;y;main;a;leaf whole: nothing common");
	s = score(a, other, 2, &ret);
	ok(!ret && fabs(s.r.overlap - 0.75) < 1e-9,
	   "... at k = 2 it is main;a;leaf: overlap 0.75 (%g)", s.r.overlap);
	score(a, bad, KCCF_INF, &ret);
	is_int(ret, -1, "a line that is no folded stack: -1");
	score(a, "/nonexistent/icppd.folded", KCCF_INF, &ret);
	is_int(ret, -1, "a file that is not there: -1");
	unlink(a);
	unlink(half);
	unlink(comm);
	unlink(other);
	unlink(bad);
}

static void test_runs(void)
{
	const char *same = folded("same", "main;a;leaf 30\nmain;b;leaf 10\n");
	struct compare_scores s;
	int ret;

	s = score("1", same, KCCF_INF, &ret);
	ok(!ret && fabs(s.r.overlap - 1) < 1e-9 && fabs(s.r.total_a - 40) < 1e-9,
	   "run 1 against its own stacks: overlap 1, 40 samples");
	s = score("1", "2", 3, &ret);
	/* run 2: 5/24, 15/24 explained, 4/24 under unknown callers */
	ok(!ret && fabs(s.r.overlap - (5.0 / 24 + 10.0 / 40)) < 1e-9,
	   "run 1 against run 2: the smaller share of each context (%g)",
	   s.r.overlap);
	score("truth:1", "1", 3, &ret);
	is_int(ret, -1, "truth of a run with none kept: -1");
	score("9", "1", 3, &ret);
	is_int(ret, -1, "a run that is not there: -1");
	unlink(same);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	snprintf(db, sizeof(db), "%s/p.db", dir);
	test_files();
	ok(!profile_store__create(db), "the store is written");
	test_runs();
	unlink(db);
	rmdir(dir);
	return tap_done();
}
