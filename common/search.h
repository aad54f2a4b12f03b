/*
 * search.h - the one binary search of sorted arrays.
 *
 * LOWER_BOUND(from, to, i, below) is the first index i in [from, to)
 * at which @below, an expression of i, is false, where @below holds
 * for a prefix of the range and for nothing after it (the array is
 * sorted by what it tests); @to when it holds throughout.  So:
 *
 *   the first element >= key:     LOWER_BOUND(0, n, i, v[i] < key)
 *   the first element > key:      LOWER_BOUND(0, n, i, v[i] <= key)
 *   the last element <= key:      that, minus one (none when 0)
 *
 * An expression rather than a function taking a comparator, so that the
 * per-sample lookups (a mapping, a symbol, an FDE, a CFI row) compare
 * inline; the midpoint never overflows.  @from and @to are evaluated
 * once, @below once per step.
 */
#ifndef ICPPD_COMMON_SEARCH_H
#define ICPPD_COMMON_SEARCH_H

#define LOWER_BOUND(from, to, i, below) __extension__ ({		\
	__typeof__((from) + (to)) lb_lo_ = (from), lb_hi_ = (to);	\
	while (lb_lo_ < lb_hi_) {					\
		__typeof__(lb_lo_) i = lb_lo_ + (lb_hi_ - lb_lo_) / 2;	\
		if (below)						\
			lb_lo_ = i + 1;					\
		else							\
			lb_hi_ = i;					\
	}								\
	lb_lo_;								\
})

#endif
