/*
 * compare.h - how alike two profiles are (icppd compare): the degree
 * of overlap and hot-edge coverage (inference/metrics.h) of their
 * k-contexts (compare.c).
 */
#ifndef ICPPD_PROFILE_COMPARE_H
#define ICPPD_PROFILE_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inference/metrics.h"

struct compare_request {
	const char *db;		/* the database a run id names */
	/* Each side: a run id (the run as a report shows it), truth:ID
	 * (validation run ID's true paths) or a folded file; A is the
	 * reference */
	const char *a, *b;
	uint32_t k;		/* callers per context; KCCF_INF: whole */
	double threshold;	/* a context is hot with this share (0..1] */
	bool no_inline;		/* runs without their inlined frames */
};

struct compare_scores {
	struct compare_result r;
	size_t contexts_a, contexts_b;	/* distinct k-contexts */
};

/*
 * Scores @q->b against @q->a into @out.  A folded file whose stacks
 * start with a command's name (stackcollapse-perf.pl's, report
 * --comm-frame) while the other side's do not loses that first frame,
 * with a warning.  The database is opened only when a side is a run.
 * 0, or -1 after logging why.
 */
int compare__profiles(const struct compare_request *q,
		      struct compare_scores *out);

/* The k-contexts of CCT @t (folded keys, exclusive weights), equal keys
 * merged, into a new array *@v of *@n entries, which
 * compare__free_contexts() frees.  0, or folded__keys()'s -ENOMEM or
 * -E2BIG (nothing in *@v then). */
struct cct;
int compare__contexts(struct cct *t, uint32_t k, struct flat_entry **v,
		      size_t *n);
void compare__free_contexts(struct flat_entry *v, size_t n);

#endif
