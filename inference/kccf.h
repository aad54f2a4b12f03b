/*
 * kccf.h - k-calling-context forests (Ausiello, Demetrescu, Finocchi,
 * Firmani, OOPSLA 2012) from a weighted CCT.
 *
 * The forest has one tree per function u that ends a context; the path
 * from u's root down to a node at level j is a k-context reversed: u,
 * its caller, its caller's caller, ... (j <= k callers).  k = 0 is a
 * flat profile, k = 1 an edge profile, KCCF_INF full contexts.
 *
 * Built by the inverse operation inv_k: every weight record of the CCT
 * walks up at most k + 1 frames, adding its weight along the reversed
 * path: O(k n) for n records.  A node's weight is the weight of the
 * samples whose context ends with that path (exclusive), or, with
 * @inclusive, contains it anywhere (each sample counted once per node,
 * also under recursion: O(depth k) per record).  Its @certain part is
 * the weight of records whose certain suffix covers the whole path.
 */
#ifndef ICPPD_INFERENCE_KCCF_H
#define ICPPD_INFERENCE_KCCF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inference/cct.h"

#define KCCF_INF UINT32_MAX
#define KCCF_NONE UINT32_MAX

struct kccf_node {
	uint32_t parent;	/* KCCF_NONE for a root (a function) */
	uint32_t level;		/* 0 for a root */
	uint32_t first_child, next_sibling;	/* KCCF_NONE: none */
	int64_t frame;
	uint64_t call_site;	/* where this caller called its child */
	int64_t site_module;	/* the caller's module, for call_site */
	double weight, certain;
	double site_weight;	/* internal: the weight that chose the site */
	uint32_t stamp;		/* internal: last record that added to it */
};

struct kccf;

/*
 * Work and memory are bounded: a crafted path map can hold paths of any
 * depth, and an inclusive forest of full contexts costs depth^2 per
 * record (and holds as many nodes when the frames differ).  Past
 * KCCF_MAX_STEPS frames walked or KCCF_MAX_NODES nodes (300 MB) the
 * build stops: a smaller k bounds both.  A synthetic map of 100,000
 * paths takes 5 million steps inclusive at k = 3 (bench/report.sh).
 */
#define KCCF_MAX_STEPS ((uint64_t)1 << 26)
#define KCCF_MAX_NODES ((size_t)1 << 22)

/* NULL with -ENOMEM or -E2BIG (past a bound above) in *@err.  @k:
 * callers per context, or KCCF_INF.  Roots and every node's children
 * are linked by weight descending (ties by name), so output is
 * deterministic. */
struct kccf *kccf__build(struct cct *t, uint32_t k, bool inclusive, int *err);
void kccf__delete(struct kccf *f);

size_t kccf__size(const struct kccf *f);
const struct kccf_node *kccf__node(const struct kccf *f, uint32_t i);
/* The first root; roots are linked by next_sibling. */
uint32_t kccf__first_root(const struct kccf *f);

#endif
