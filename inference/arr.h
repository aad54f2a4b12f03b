/*
 * arr.h - the search of activation record resizing: pads (multiples of
 * 16 bytes) for some functions' frames so that colliding context
 * identifiers separate, judged on the training path map alone.
 *
 * Height model: a pad on F adds to the height of every node below a
 * frame of F (F itself keeps its CFA, which is RBP + 16).  So with
 * nodes parents first, offset(n) = offset(parent) + pad(parent's
 * function), and the new height is height + offset: no retraining.
 *
 * Score: the training samples (self weight) of nodes whose new CID
 * (function, height) has exactly one context, ties broken by the number
 * of such contexts.  Two contexts whose callers are the same multiset
 * of functions (A-B-D and B-A-D), or differ only in functions that
 * cannot be padded, collide under any pads: they are reported as not
 * separable and never chosen as targets.
 *
 * The search starts from the ICPP paper's random search (pick two
 * colliding contexts, pad a function that differs between them by 16,
 * 32, 48..., keep a change that raises the score, accept a non-improving
 * one after 100 fruitless tries, stop at the target share or after 2000
 * steps without progress) and does better: collisions are picked by
 * training weight, smaller pads are tried first, a bound on the deepest
 * stack is kept, and pads that do not help are dropped at the end.
 * Deterministic for a seed.
 */
#ifndef ICPPD_INFERENCE_ARR_H
#define ICPPD_INFERENCE_ARR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct arr_node {
	int64_t parent;		/* index of the parent node; -1: outermost */
	uint32_t func;		/* index into the functions */
	int64_t height;
	uint32_t ctx;		/* equal for equal function sequences */
	double weight;		/* training self samples */
};

struct arr_func {
	bool padable;
	int64_t max_pad;	/* multiple of 16 */
};

struct arr_opts {
	uint64_t seed;
	double target;		/* stop at this precise share (0..1] */
	double max_growth;	/* deepest height after / before */
	unsigned patience;	/* steps without progress (default 2000) */
};

struct arr_result {
	int64_t *pads;			/* per function; owned */
	double total;			/* training weight */
	double precise_before, precise_after;	/* weight */
	size_t paths, unique_before, unique_after;	/* precise nodes */
	int64_t deepest_before, deepest_after;
	unsigned steps;
	double inseparable;		/* weight of contexts no pad separates */
	/* per node: part of a collision no pad can separate */
	bool *inseparable_node;		/* owned */
};

/* 0, -ENOMEM, or -EINVAL (a parent index not before its child). */
int arr__search(const struct arr_node *nodes, size_t n,
		const struct arr_func *funcs, size_t nfuncs,
		const struct arr_opts *o, struct arr_result *r);
void arr_result__exit(struct arr_result *r);

/* New heights of all nodes under @pads into @out. */
void arr__heights(const struct arr_node *nodes, size_t n, const int64_t *pads,
		  int64_t *out);

#endif
