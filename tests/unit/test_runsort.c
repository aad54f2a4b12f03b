/*
 * test_runsort.c - common/runsort.h against qsort: queues made of a few
 * runs in order (the session's rings), many short runs, one run, and
 * random order, with ties kept in their order (stable).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/runsort.h"
#include "tests/tap.h"

struct item {
	uint64_t key;
	uint64_t seq;		/* the order before sorting */
};

static int cmp_key(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

static int cmp_key_seq(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	return x->key != y->key ? cmp_key(a, b) :
	       x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* @n items in @runs runs, each in order, keys below @range. */
static void fill(struct item *v, size_t n, size_t runs, uint64_t range,
		 uint64_t *seed)
{
	size_t per = (n + runs - 1) / runs;

	for (size_t i = 0; i < n; i++) {
		*seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
		v[i] = (struct item){ (*seed >> 24) % range, i };
	}
	for (size_t i = 0; i < n; i += per)
		qsort(v + i, i + per < n ? per : n - i, sizeof(*v), cmp_key_seq);
	for (size_t i = 0; i < n; i++)
		v[i].seq = i;
}

int main(void)
{
	static const struct { size_t n, runs; uint64_t range; } cases[] = {
		{ 0, 1, 10 }, { 1, 1, 10 }, { 1000, 1, 1000000 },
		{ 10000, 3, 1000000 }, { 10000, 17, 1000000 },
		{ 9999, 100, 50 }, { 5000, 5000, 1000000 }, { 4096, 2, 3 },
	};
	uint64_t seed = 7;

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		size_t n = cases[c].n;
		struct item *v = malloc((n + 1) * sizeof(*v));
		struct item *tmp = malloc((n + 1) * sizeof(*v));
		struct item *want = malloc((n + 1) * sizeof(*v));
		struct item *got;

		fill(v, n, cases[c].runs, cases[c].range, &seed);
		memcpy(want, v, n * sizeof(*v));
		qsort(want, n, sizeof(*v), cmp_key_seq);	/* stable by seq */
		got = runsort(v, tmp, n, sizeof(*v), cmp_key);
		ok(!memcmp(got, want, n * sizeof(*v)),
		   "%zu items in %zu runs, keys below %llu: as a stable sort",
		   n, cases[c].runs, (unsigned long long)cases[c].range);
		free(v);
		free(tmp);
		free(want);
	}
	return tap_done();
}
