/*
 * test_radix.c - common/radix.h against qsort: random keys over spans
 * of one digit to all 64 bits, signed ones across zero, ties kept in
 * their order (stable), keys by several fields, and the trivial sizes.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/radix.h"
#include "tests/tap.h"

struct item {
	int64_t a, b;		/* keys */
	uint64_t seq;		/* the order before sorting */
	char pad[20];		/* an odd record size */
};

static int cmp_a_seq(const void *x, const void *y)
{
	const struct item *p = x, *q = y;

	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	return p->seq < q->seq ? -1 : p->seq > q->seq;
}

static int cmp_ua_seq(const void *x, const void *y)
{
	const struct item *p = x, *q = y;

	if ((uint64_t)p->a != (uint64_t)q->a)
		return (uint64_t)p->a < (uint64_t)q->a ? -1 : 1;
	return p->seq < q->seq ? -1 : p->seq > q->seq;
}

static int cmp_ab_seq(const void *x, const void *y)
{
	const struct item *p = x, *q = y;

	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	if (p->b != q->b)
		return p->b < q->b ? -1 : 1;
	return p->seq < q->seq ? -1 : p->seq > q->seq;
}

static uint64_t next(uint64_t *seed)
{
	*seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
	return *seed ^ *seed >> 29;
}

int main(void)
{
	static const struct { size_t n; uint64_t span; int64_t base; } cases[] = {
		{ 1000, 1, 0 }, { 1000, 7, 5 }, { 5000, 65536, 0 },
		{ 5000, 1000000, -500000 }, { 3000, 0, 0 },
		{ 4000, 1000000007, INT64_MIN / 2 },
	};
	uint64_t seed = 11;
	struct item one = { 3, 0, 0, "" };

	is_int(radix__sort(NULL, 0, sizeof(one), 0, true), 0,
	       "no records: nothing to do");
	is_int(radix__sort(&one, 1, sizeof(one), 0, true), 0, "one record");
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		size_t n = cases[c].n;
		struct item *v = malloc(n * sizeof(*v)), *w = malloc(n * sizeof(*w));

		for (int sgn = 0; sgn < 2; sgn++) {
			for (size_t i = 0; i < n; i++) {
				uint64_t r = next(&seed);

				v[i] = (struct item){ cases[c].span ?
					cases[c].base + (int64_t)(r % cases[c].span) :
					(int64_t)r, (int64_t)(next(&seed) % 5), i, "" };
			}
			memcpy(w, v, n * sizeof(*v));
			qsort(w, n, sizeof(*w), sgn ? cmp_a_seq : cmp_ua_seq);
			is_int(radix__sort(v, n, sizeof(*v),
					   offsetof(struct item, a), sgn), 0,
			       "%zu keys over %llu, %s: sorted", n,
			       (unsigned long long)cases[c].span,
			       sgn ? "signed" : "unsigned");
			ok(!memcmp(v, w, n * sizeof(*v)),
			   "... as qsort orders them, ties in their order");
		}
		/* by b, then a: the order of (a, b) */
		for (size_t i = 0; i < n; i++)
			v[i].seq = i;
		memcpy(w, v, n * sizeof(*v));
		qsort(w, n, sizeof(*w), cmp_ab_seq);
		ok(!radix__sort(v, n, sizeof(*v), offsetof(struct item, b), true) &&
		   !radix__sort(v, n, sizeof(*v), offsetof(struct item, a), true) &&
		   !memcmp(v, w, n * sizeof(*v)),
		   "by two keys, the less significant first: (a, b) order");
		free(v);
		free(w);
	}
	return tap_done();
}
