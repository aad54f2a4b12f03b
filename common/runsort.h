/*
 * runsort.h - sorts an array that is mostly a few runs in order already
 * (queues of records that each CPU wrote in time order) by merging
 * adjacent runs pairwise: O(n log runs), and one pass when it is sorted.
 * Stable.  Needs a second array of @n elements; the result ends in one
 * of the two.  Static inline, so that a constant element size makes
 * each copy a move.
 */
#ifndef ICPPD_COMMON_RUNSORT_H
#define ICPPD_COMMON_RUNSORT_H

#include <stddef.h>
#include <string.h>

typedef int (*runsort_cmp)(const void *a, const void *b);

/* The end of the run in order that starts at @i. */
static inline size_t runsort__run_end(const char *a, size_t i, size_t n,
				      size_t size, runsort_cmp cmp)
{
	while (++i < n && cmp(a + (i - 1) * size, a + i * size) <= 0)
		;
	return i;
}

/* Merges runs @x (@nx elements) and @y (@ny) into @out, stably. */
static inline void runsort__merge(const char *x, size_t nx, const char *y,
				  size_t ny, char *out, size_t size,
				  runsort_cmp cmp)
{
	while (nx && ny) {
		if (cmp(y, x) < 0) {
			memcpy(out, y, size);
			y += size;
			ny--;
		} else {
			memcpy(out, x, size);
			x += size;
			nx--;
		}
		out += size;
	}
	memcpy(out, x, nx * size);
	memcpy(out + nx * size, y, ny * size);
}

/* Sorts the @n elements of @a, using @b (room for @n); returns the one
 * of the two that holds them sorted. */
static inline void *runsort(void *a, void *b, size_t n, size_t size,
			    runsort_cmp cmp)
{
	char *from = a, *to = b;

	if (runsort__run_end(from, 0, n, size, cmp) >= n)
		return a;
	for (size_t runs = 0; runs != 1;) {
		char *t;

		runs = 0;
		for (size_t i = 0, mid, end; i < n; i = end, runs++) {
			mid = runsort__run_end(from, i, n, size, cmp);
			end = mid < n ? runsort__run_end(from, mid, n, size,
							 cmp) : mid;
			runsort__merge(from + i * size, mid - i,
				       from + mid * size, end - mid,
				       to + i * size, size, cmp);
		}
		t = from;
		from = to;
		to = t;
	}
	return from;
}

#endif
