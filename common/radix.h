/*
 * radix.h - a stable sort of fixed-size records by a 64-bit key at a
 * fixed offset: least significant digit first, 16 bits a pass, over the
 * span of the keys only (addresses within one binary, ids: two or three
 * passes).  Sorting by several keys is one call per key, the least
 * significant first.  For the big arrays of a build's call graph, which
 * qsort() sorted a compare call and a 40- or 48-byte copy at a time
 * (cc1plus: 400,000 call sites, 250,000 edges: a fifth of a report).
 * Static inline: a constant record size makes each copy a move.
 */
#ifndef ICPPD_COMMON_RADIX_H
#define ICPPD_COMMON_RADIX_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RADIX_BITS 16
#define RADIX_BUCKETS ((size_t)1 << RADIX_BITS)

/* The key of record @p at @off, in unsigned order (signed keys with
 * their sign bit flipped). */
static inline uint64_t radix__key(const char *p, size_t off, bool is_signed)
{
	uint64_t k;

	memcpy(&k, p + off, sizeof(k));
	return is_signed ? k ^ (UINT64_C(1) << 63) : k;
}

/*
 * Sorts @n records of @size bytes at @v by the 64-bit key at @off
 * (int64_t when @is_signed, else uint64_t), stably.  0, or -ENOMEM
 * with @v untouched.
 */
static inline int radix__sort(void *v, size_t n, size_t size, size_t off,
			      bool is_signed)
{
	char *a = v, *b, *from, *to;
	uint64_t lo, hi;
	size_t *count;

	if (n < 2)
		return 0;
	lo = hi = radix__key(a, off, is_signed);
	for (size_t i = 1; i < n; i++) {
		uint64_t k = radix__key(a + i * size, off, is_signed);

		lo = k < lo ? k : lo;
		hi = k > hi ? k : hi;
	}
	if (lo == hi)
		return 0;
	b = malloc(n * size);
	count = malloc(RADIX_BUCKETS * sizeof(*count));
	if (!b || !count) {
		free(b);
		free(count);
		return -ENOMEM;
	}
	from = a;
	to = b;
	for (unsigned shift = 0; shift < 64 && (hi - lo) >> shift;
	     shift += RADIX_BITS) {
		size_t sum = 0;
		char *t;

		memset(count, 0, RADIX_BUCKETS * sizeof(*count));
		for (size_t i = 0; i < n; i++)
			count[(radix__key(from + i * size, off, is_signed) -
			       lo) >> shift & (RADIX_BUCKETS - 1)]++;
		for (size_t d = 0; d < RADIX_BUCKETS; d++) {
			size_t c = count[d];

			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			memcpy(to + count[(radix__key(from + i * size, off,
						      is_signed) - lo) >>
					  shift & (RADIX_BUCKETS - 1)]++ * size,
			       from + i * size, size);
		t = from;
		from = to;
		to = t;
	}
	if (from != a)
		memcpy(a, from, n * size);
	free(b);
	free(count);
	return 0;
}

#endif
