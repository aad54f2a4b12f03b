/*
 * grow.h - growing a malloc'ed array by doubling, the one way every
 * module does it.
 */
#ifndef ICPPD_COMMON_GROW_H
#define ICPPD_COMMON_GROW_H

#include <errno.h>
#include <stdlib.h>

/*
 * Makes the array at *@arr (of *@cap elements of @size bytes) hold at
 * least @need elements, doubling from @first.  On failure the array is
 * left as it was.  0 or -ENOMEM.
 */
static inline int grow(void *arr, size_t *cap, size_t need, size_t size,
		       size_t first)
{
	void **p = arr;
	size_t n = *cap ? *cap : first;
	void *t;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	t = realloc(*p, n * size);
	if (!t)
		return -ENOMEM;
	*p = t;
	*cap = n;
	return 0;
}

#endif
