/*
 * metrics.h - how alike two profiles are (Zhuang, Serrano, Cain, Choi,
 * PLDI 2006 "Accurate, efficient, and adaptive calling context
 * profiling"), over calling contexts named by their frames.
 *
 * - degree of overlap: the sum over contexts of both profiles of the
 *   smaller of their two shares (weight / profile total): 1 for equal
 *   distributions, 0 for disjoint ones.
 * - hot-edge coverage at threshold T: of the contexts hot in @a (share
 *   >= T), the fraction also hot in @b.  @a is the reference.
 *
 * Contexts are compared by key (frames joined by ';'); each profile
 * must list a key once.
 */
#ifndef ICPPD_INFERENCE_METRICS_H
#define ICPPD_INFERENCE_METRICS_H

#include <stddef.h>

struct flat_entry {
	char *key;		/* owned by the caller */
	double weight;
};

struct compare_result {
	double overlap;
	double coverage;	/* 1 when @a has no hot context */
	size_t hot_a, hot_both;
	size_t common, only_a, only_b;
	double total_a, total_b;
};

/* Sorts @v by key and merges equal keys (their weights added, the
 * keys of the merged entries freed); the entries left in *@n. */
void metrics__merge(struct flat_entry *v, size_t *n);

/* Sorts @a and @b by key, then compares them. */
void metrics__compare(struct flat_entry *a, size_t na, struct flat_entry *b,
		      size_t nb, double threshold, struct compare_result *r);

#endif
