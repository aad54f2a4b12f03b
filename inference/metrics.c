/*
 * metrics.c - degree of overlap and hot-edge coverage by a merge of
 * the two profiles sorted by key.
 */
#include "inference/metrics.h"

#include <stdlib.h>
#include <string.h>

static int cmp_key(const void *x, const void *y)
{
	return strcmp(((const struct flat_entry *)x)->key,
		      ((const struct flat_entry *)y)->key);
}

static double sum(const struct flat_entry *e, size_t n)
{
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += e[i].weight;
	return s;
}

void metrics__merge(struct flat_entry *v, size_t *n)
{
	size_t kept = 0;

	if (*n)
		qsort(v, *n, sizeof(*v), cmp_key);
	for (size_t i = 0; i < *n; i++) {
		if (kept && !strcmp(v[kept - 1].key, v[i].key)) {
			v[kept - 1].weight += v[i].weight;
			free(v[i].key);
		} else {
			v[kept++] = v[i];
		}
	}
	*n = kept;
}

void metrics__compare(struct flat_entry *a, size_t na, struct flat_entry *b,
		      size_t nb, double threshold, struct compare_result *r)
{
	size_t i = 0, j = 0;

	memset(r, 0, sizeof(*r));
	if (na)		/* an empty profile may have no array */
		qsort(a, na, sizeof(*a), cmp_key);
	if (nb)
		qsort(b, nb, sizeof(*b), cmp_key);
	r->total_a = sum(a, na);
	r->total_b = sum(b, nb);
	while (i < na || j < nb) {
		int c = i == na ? 1 : j == nb ? -1 : strcmp(a[i].key, b[j].key);
		double sa = c <= 0 && r->total_a > 0 ? a[i].weight / r->total_a : 0;
		double sb = c >= 0 && r->total_b > 0 ? b[j].weight / r->total_b : 0;

		if (c == 0) {
			r->common++;
			r->overlap += sa < sb ? sa : sb;
		} else if (c < 0) {
			r->only_a++;
		} else {
			r->only_b++;
		}
		if (c <= 0 && sa >= threshold) {
			r->hot_a++;
			if (sb >= threshold)
				r->hot_both++;
		}
		if (c <= 0)
			i++;
		if (c >= 0)
			j++;
	}
	r->coverage = r->hot_a ? (double)r->hot_both / (double)r->hot_a : 1.0;
}
