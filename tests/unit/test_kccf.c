/*
 * test_kccf.c - k-calling-context forests: the motivating example of
 * the k-CCF paper (c called 4 times, 3 of them via a-b) for k = 0, 1,
 * 2, inf, exclusive and inclusive; certain and apportioned weight; and
 * random trees against a brute-force reference, and folded__stacks()'s
 * whole stacks, read off the CCT, against the same.  Also Space-Saving
 * and the overlap metrics.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inference/cct.h"
#include "inference/hcct.h"
#include "inference/kccf.h"
#include "inference/metrics.h"
#include "profile/folded_keys.h"
#include "tests/tap.h"

enum { MAIN = 1, A, B, C, D };

/* "c;b;a" for a forest node: its frames from the root (the function)
 * down to it. */
static int err;

static void key_of(const struct cct *t, const struct kccf *f, uint32_t i,
		   char *buf, size_t len)
{
	const struct kccf_node *n = kccf__node(f, i);

	if (n->parent == KCCF_NONE) {
		snprintf(buf, len, "%s", cct__name(t, n->frame));
		return;
	}
	key_of(t, f, n->parent, buf, len);
	snprintf(buf + strlen(buf), len - strlen(buf), ";%s",
		 cct__name(t, n->frame));
}

/* The weight of forest node @key ("c;b"), -1 when absent. */
static double weight(const struct cct *t, const struct kccf *f,
		     const char *key, double *certain)
{
	char buf[512];

	for (uint32_t i = 0; i < kccf__size(f); i++) {
		key_of(t, f, i, buf, sizeof(buf));
		if (!strcmp(buf, key)) {
			if (certain)
				*certain = kccf__node(f, i)->certain;
			return kccf__node(f, i)->weight;
		}
	}
	return -1;
}

static uint32_t path(struct cct *t, const int64_t *frames, size_t n)
{
	uint32_t node = CCT_ROOT;

	for (size_t i = 0; i < n; i++)
		cct__child(t, node, frames[i], &node);
	return node;
}

/* A tree with the frames main, a, b, c, d named. */
static struct cct *named_tree(void)
{
	static const char *const names[] = { "", "main", "a", "b", "c", "d" };
	struct cct *t = cct__new();

	for (int f = MAIN; f <= D; f++)
		cct__define(t, f, names[f], 1, 0x10 * (unsigned)f);
	return t;
}

static struct cct *example(void)
{
	struct cct *t = named_tree();
	static const int64_t abc[] = { MAIN, A, B, C }, dc[] = { MAIN, D, C };

	cct__add(t, path(t, abc, 4), 4, CCT_PRECISE, 3);
	cct__add(t, path(t, dc, 3), 3, CCT_PRECISE, 1);
	return t;
}

static void test_paper_example(void)
{
	struct cct *t = example();
	struct kccf *f;

	f = kccf__build(t, 0, false, &err);
	is_int(kccf__size(f), 1, "k=0: one node, a flat profile");
	is_int(weight(t, f, "c", NULL), 4, "k=0: c has all 4 samples");
	kccf__delete(f);

	f = kccf__build(t, 1, false, &err);
	is_int(kccf__size(f), 3, "k=1: c and its two callers");
	is_int(weight(t, f, "c;b", NULL), 3, "k=1: 3 samples via b");
	is_int(weight(t, f, "c;d", NULL), 1, "k=1: 1 via d");
	is_str(cct__name(t, kccf__node(f, kccf__node(f, kccf__first_root(f))->first_child)->frame),
	       "b", "children sorted by weight: b first");
	kccf__delete(f);

	f = kccf__build(t, 2, false, &err);
	is_int(kccf__size(f), 5, "k=2: five nodes");
	is_int(weight(t, f, "c;b;a", NULL), 3, "k=2: c <- b <- a: 3");
	is_int(weight(t, f, "c;d;main", NULL), 1, "k=2: c <- d <- main: 1");
	is_int(weight(t, f, "c;b;a;main", NULL), -1, "k=2: no third caller");
	kccf__delete(f);

	f = kccf__build(t, KCCF_INF, false, &err);
	is_int(kccf__size(f), 6, "k=inf: whole contexts");
	is_int(weight(t, f, "c;b;a;main", NULL), 3, "k=inf: the full path via a-b");
	is_int(weight(t, f, "c;d;main", NULL), 1, "k=inf: the full path via d");
	kccf__delete(f);

	f = kccf__build(t, 1, true, &err);
	is_int(weight(t, f, "main", NULL), 4, "inclusive: main holds all 4");
	is_int(weight(t, f, "b", NULL), 3, "inclusive: b holds 3");
	is_int(weight(t, f, "b;a", NULL), 3, "inclusive: b <- a: 3");
	is_int(weight(t, f, "a;main", NULL), 3, "inclusive: a <- main: 3");
	is_int(weight(t, f, "d;main", NULL), 1, "inclusive: d <- main: 1");
	is_int(weight(t, f, "c", NULL), 4, "inclusive: c itself: 4");
	kccf__delete(f);
	cct__delete(t);
}

static void test_certain(void)
{
	struct cct *t = named_tree();
	static const int64_t abc[] = { MAIN, A, B, C }, dbc[] = { MAIN, D, B, C };
	struct kccf *f;
	double certain;

	/* an ambiguous CID of c: two candidates sharing the suffix b;c */
	cct__add(t, path(t, abc, 4), 2, CCT_AMBIGUOUS, 4.5);
	cct__add(t, path(t, dbc, 4), 2, CCT_AMBIGUOUS, 1.5);
	is_int(cct__total(t), 6, "total weight");
	f = kccf__build(t, 2, false, &err);
	ok(weight(t, f, "c;b", &certain) == 6 && certain == 6,
	   "the shared suffix c <- b is certain: 6 of 6");
	ok(weight(t, f, "c;b;a", &certain) == 4.5 && certain == 0,
	   "c <- b <- a: 4.5, all apportioned");
	ok(weight(t, f, "c;b;d", &certain) == 1.5 && certain == 0,
	   "c <- b <- d: 1.5, all apportioned");
	kccf__delete(f);
	cct__delete(t);
}

/* Brute force: every record's frames, leaf first. */
struct bf_entry {
	char key[256];
	double w, certain;
	int stamp;
};

static void bf_add(struct bf_entry *e, size_t *n, const char *key, double w,
		   bool certain, int stamp)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp(e[i].key, key)) {
			if (e[i].stamp == stamp)
				return;
			e[i].stamp = stamp;
			e[i].w += w;
			e[i].certain += certain ? w : 0;
			return;
		}
	snprintf(e[*n].key, sizeof(e[*n].key), "%s", key);
	e[*n].w = w;
	e[*n].certain = certain ? w : 0;
	e[(*n)++].stamp = stamp;
}

static int random_trees(unsigned seed)
{
	static struct bf_entry bf[20000];
	int bad = 0;

	srand(seed);
	for (int trial = 0; trial < 60; trial++) {
		struct cct *t = cct__new();
		uint32_t k = (uint32_t)(rand() % 5);
		bool inclusive = rand() % 2;
		int nodes = 1 + rand() % 40;
		size_t nbf = 0, nrecs;
		const struct cct_record *recs;
		struct kccf *f;

		if (trial % 7 == 6)
			k = KCCF_INF;
		for (int fr = 1; fr <= 6; fr++) {
			char name[8];

			snprintf(name, sizeof(name), "f%d", fr);
			cct__define(t, fr, name, 1, 0);
		}
		for (int i = 0; i < nodes; i++) {
			uint32_t parent = (uint32_t)(rand() % (int)cct__size(t)), n;

			/* few names: recursion and repeated frames */
			cct__child(t, parent, 1 + rand() % 6, &n);
			if (rand() % 2)
				cct__add(t, n, 1 + (uint32_t)(rand() % 4),
					 CCT_AMBIGUOUS, 1 + rand() % 9);
		}
		recs = cct__records(t, &nrecs);
		for (size_t r = 0; r < nrecs; r++) {
			int64_t frames[64];
			uint32_t depth = 0;

			for (uint32_t x = recs[r].node; x != CCT_ROOT;
			     x = cct__node(t, x)->parent)
				frames[depth++] = cct__node(t, x)->frame;
			for (uint32_t i = 0; i < (inclusive ? depth : 1); i++)
				for (uint32_t j = 0; i + j < depth &&
				     (k == KCCF_INF || j <= k); j++) {
					char key[256] = "";

					for (uint32_t q = 0; q <= j; q++)
						snprintf(key + strlen(key),
							 sizeof(key) - strlen(key),
							 "%sf%lld", q ? ";" : "",
							 (long long)frames[i + q]);
					bf_add(bf, &nbf, key, recs[r].weight,
					       i + j + 1 <= recs[r].exact,
					       (int)r + 1);
				}
		}
		f = kccf__build(t, k, inclusive, &err);
		if (kccf__size(f) != nbf)
			bad++;
		for (size_t i = 0; i < nbf; i++) {
			double c, w = weight(t, f, bf[i].key, &c);

			if (fabs(w - bf[i].w) > 1e-9 || fabs(c - bf[i].certain) > 1e-9)
				bad++;
		}
		kccf__delete(f);
		cct__delete(t);
	}
	return bad;
}

/* folded__stacks()'s stacks, as "f1;f2" keys (outermost first). */
struct stacks {
	struct bf_entry *v;
	size_t n;
	int bad;
};

static int keep_stack(void *arg, const int64_t *frames, size_t n,
		      struct folded_group group, double weight)
{
	struct stacks *s = arg;
	char key[256] = "";

	for (size_t i = 0; i < n; i++)
		snprintf(key + strlen(key), sizeof(key) - strlen(key), "%sf%lld",
			 i ? ";" : "", (long long)frames[i]);
	/* no process frames here */
	s->bad += group.leaf != frames[n - 1] || group.process;
	for (size_t i = 0; i < s->n; i++)
		s->bad += !strcmp(s->v[i].key, key);	/* one per path */
	bf_add(s->v, &s->n, key, weight, false, (int)s->n + 1);
	return 0;
}

/* Whole stacks (k = inf) of random trees: one per path with records,
 * its records' weight, as brute force sums them.  The number wrong. */
static int whole_stacks(unsigned seed)
{
	static struct bf_entry bf[4096], got[4096];
	int bad = 0;

	srand(seed);
	for (int trial = 0; trial < 60; trial++) {
		struct cct *t = cct__new();
		struct stacks s = { got, 0, 0 };
		size_t nbf = 0, nrecs;
		const struct cct_record *recs;

		for (int fr = 1; fr <= 6; fr++) {
			char name[8];

			snprintf(name, sizeof(name), "f%d", fr);
			cct__define(t, fr, name, 1, 0);
		}
		int nodes = 1 + rand() % 60;

		for (int i = 0; i < nodes; i++) {
			uint32_t parent = (uint32_t)(rand() % (int)cct__size(t)), n;

			cct__child(t, parent, 1 + rand() % 6, &n);
			/* several records of a node: their weights add */
			for (int r = rand() % 3; r > 0; r--)
				cct__add(t, n, 1, CCT_AMBIGUOUS, 1 + rand() % 9);
		}
		recs = cct__records(t, &nrecs);
		for (size_t r = 0; r < nrecs; r++) {
			int64_t frames[64];
			uint32_t depth = 0;
			char key[256] = "";

			for (uint32_t x = recs[r].node; x != CCT_ROOT;
			     x = cct__node(t, x)->parent)
				frames[depth++] = cct__node(t, x)->frame;
			while (depth--)
				snprintf(key + strlen(key), sizeof(key) - strlen(key),
					 "%sf%lld", key[0] ? ";" : "",
					 (long long)frames[depth]);
			bf_add(bf, &nbf, key, recs[r].weight, false, (int)r + 1);
		}
		bad += folded__stacks(t, KCCF_INF, keep_stack, &s) != 0;
		bad += s.bad + (s.n != nbf);
		for (size_t i = 0; i < s.n; i++) {
			size_t j = 0;

			while (j < nbf && strcmp(bf[j].key, got[i].key))
				j++;
			bad += j == nbf || fabs(bf[j].w - got[i].w) > 1e-9;
		}
		cct__delete(t);
	}
	return bad;
}

static void test_space_saving(void)
{
	struct spacesaving *ss = ss__new(3);
	const struct ss_item *items;
	size_t n;
	double heavy = 0;

	/* a heavy key among many light ones: always monitored, exact-ish */
	for (uint32_t i = 0; i < 1000; i++) {
		ss__add(ss, 7, 1);
		ss__add(ss, 100 + i, 0.25);
	}
	items = ss__items(ss, &n);
	is_int(n, 3, "3 counters, 3 items");
	for (size_t i = 0; i < n; i++)
		if (items[i].key == 7) {
			heavy = items[i].count;
			ok(items[i].count - items[i].error <= 1000 &&
			   items[i].count >= 1000, "count - error <= true <= count");
		}
	ok(heavy >= 1000, "the heavy hitter (80%% of the weight) is monitored");
	ok(fabs(ss__total(ss) - 1250) < 1e-9, "total weight 1250");
	is_int(hcct__counters(0.01), 201, "phi 1%%: 201 counters");
	ok(!ss__new(0), "zero counters refused");
	ss__delete(ss);
}

static void test_metrics(void)
{
	char k1[] = "a;b", k2[] = "a;c", k3[] = "a;d", k4[] = "a;b", k5[] = "a;c";
	struct flat_entry a[] = { { k1, 60 }, { k2, 30 }, { k3, 10 } };
	struct flat_entry b[] = { { k4, 30 }, { k5, 70 } };
	struct compare_result r;

	metrics__compare(a, 3, b, 2, 0.2, &r);
	ok(fabs(r.overlap - 0.6) < 1e-9, "overlap: min(.6,.3) + min(.3,.7) = 0.6");
	is_int(r.hot_a, 2, "two hot contexts in A (>= 20%%)");
	is_int(r.hot_both, 2, "both hot in B");
	ok(fabs(r.coverage - 1) < 1e-9, "coverage 1");
	is_int(r.common, 2, "two common contexts");
	metrics__compare(a, 3, a, 3, 0.2, &r);
	ok(fabs(r.overlap - 1) < 1e-9, "a profile overlaps itself fully");
}

/* A crafted path of 20,000 distinct frames: full contexts are linear,
 * inclusive full contexts would be 2e8 nodes and stop at the bound. */
static void test_deep(void)
{
	struct cct *t = cct__new();
	uint32_t node = CCT_ROOT;
	struct kccf *f;

	for (int i = 0; i < 20000; i++)
		cct__child(t, node, 1 + i, &node);
	cct__add(t, node, 1, CCT_PRECISE, 5);
	f = kccf__build(t, KCCF_INF, false, &err);
	ok(f && kccf__size(f) == 20000, "20,000 frames deep, k = inf: one "
	   "chain of 20,000 nodes");
	kccf__delete(f);
	f = kccf__build(t, 3, true, &err);
	ok(f && kccf__size(f) == 4 * 20000 - 6, "inclusive, k = 3: four "
	   "frames per function (%zu nodes)", f ? kccf__size(f) : 0);
	kccf__delete(f);
	f = kccf__build(t, KCCF_INF, true, &err);
	ok(!f && err == -E2BIG, "inclusive, k = inf: stops at KCCF_MAX_STEPS "
	   "with -E2BIG (%d)", err);
	cct__delete(t);
}

int main(void)
{
	test_paper_example();
	test_certain();
	is_int(random_trees(1), 0, "60 random trees, k = 0..4 and inf, "
	       "exclusive and inclusive: equal to brute force");
	is_int(random_trees(2), 0, "60 more, another seed");
	is_int(whole_stacks(3), 0, "folded whole stacks of 60 random trees, "
	       "read off the CCT: a stack per path with records, their "
	       "weights summed, as brute force");
	test_deep();
	test_space_saving();
	test_metrics();
	cct__delete(NULL);
	kccf__delete(NULL);
	return tap_done();
}
