/*
 * pageindex.h - a page index over a sorted array of addresses, so that a
 * search looks at the few entries of one page, not at all of them: the
 * entries whose address is below page p's start are the first first[p].
 *
 * The arrays it serves are large and searched once per stack frame
 * (libLLVM's 95k FDEs and 34k symbols): a binary search of them missed
 * the data cache at most of its 15 to 17 steps.  Pages are 4 KiB, or
 * larger where the addresses spread so far (a crafted file puts them
 * gigabytes apart) that there would be more than twice as many pages
 * as entries.
 */
#ifndef ICPPD_COMMON_PAGEINDEX_H
#define ICPPD_COMMON_PAGEINDEX_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct page_index {
	uint32_t *first;	/* npages + 1 entries; NULL: none */
	size_t npages;
	uint64_t base;
	unsigned shift;
};

/* The address of entry @i: its first 8 bytes, @stride bytes apart. */
static inline uint64_t page_index__key(const void *array, size_t stride,
				       size_t i)
{
	uint64_t k;

	memcpy(&k, (const uint8_t *)array + i * stride, sizeof(k));
	return k;
}

/* Indexes @n (at most UINT32_MAX) entries sorted by address, the last
 * reaching to @end.  0, or -1 without memory (the index stays empty:
 * page_index__range() then gives the whole array). */
static inline int page_index__build(struct page_index *x, const void *array,
				    size_t n, size_t stride, uint64_t end)
{
	uint64_t base, span;
	unsigned shift = 12;
	size_t pages, j = 0;

	*x = (struct page_index){ 0 };
	if (!n || n > UINT32_MAX)
		return 0;
	base = page_index__key(array, stride, 0);
	span = end > base ? end - base : 0;
	while (shift < 63 && (span >> shift) >= 2 * (uint64_t)n)
		shift++;
	pages = (size_t)(span >> shift) + 1;
	x->first = malloc((pages + 1) * sizeof(*x->first));
	if (!x->first)
		return -1;
	for (size_t p = 0; p < pages; p++) {
		uint64_t start = base + ((uint64_t)p << shift);

		while (j < n && page_index__key(array, stride, j) < start)
			j++;
		x->first[p] = (uint32_t)j;
	}
	x->first[pages] = (uint32_t)n;
	x->npages = pages;
	x->base = base;
	x->shift = shift;
	return 0;
}

static inline void page_index__exit(struct page_index *x)
{
	if (!x)
		return;
	free(x->first);
	*x = (struct page_index){ 0 };
}

static inline size_t page_index__bytes(const struct page_index *x)
{
	return x->first ? (x->npages + 1) * sizeof(*x->first) : 0;
}

/* Narrows the search of an array of @n entries for @v to [*@lo, *@hi):
 * every entry before *@lo is at or below @v, every entry from *@hi on is
 * above it.  So the last entry at or below @v, if any, is in the range,
 * and the first above it is too, or is at *@hi. */
static inline void page_index__range(const struct page_index *x, size_t n,
				     uint64_t v, size_t *lo, size_t *hi)
{
	uint64_t p;

	*lo = 0;
	*hi = n;
	if (!x->first)
		return;
	if (v < x->base) {
		*hi = 0;
		return;
	}
	p = (v - x->base) >> x->shift;
	if (p >= x->npages)
		p = x->npages - 1;
	*lo = x->first[p] ? x->first[p] - 1 : 0;
	*hi = x->first[p + 1];
}

#endif
