/*
 * infer_shapes.c - a CID no path explains, from the innermost frames
 * its function was seen with at other heights (see infer.c's explain()).
 *
 * A big program's CIDs rarely repeat: cc1plus's recursive walks put a
 * function at a new height on most samples, while the few frames below
 * the recursion (a leaf, its caller, theirs) repeat.  So a CID (f, h)
 * no path explains is likely where f was seen before, shifted: each
 * context the map learned for f at a height h' (a shape), its frames
 * moved by h - h', is a candidate when one of its frames, so moved, is
 * a CID whole paths explain (the first from the leaf up): the frames
 * below it come from the shape, the rest from that CID's paths.  The
 * shapes weigh by the samples learned in them with f innermost, those
 * CID's paths by their shares, and every frame but the leaf is
 * uncertain (searched).  Only the shapes that fit with the fewest
 * guessed frames count: a frame between the leaf and the known CID
 * whose function, moved, the map never saw there is a guess, and the
 * more of them, the likelier a wrong one (validate, g++ -O2 -c after
 * a default record: of the single shapes that fit, 77 % of the
 * samples were in their true context where the leaf's caller was the
 * known CID, 56 % where the frame above it was, 25 % three up, 6 %
 * four to eight up).  The calls into f from a known CID come before
 * the shapes (infer_search.c, infer__explain_callers()); where no
 * shape fits, the call-graph search goes on as before.
 */
#define _GNU_SOURCE
#include "inference/infer_int.h"

#include <errno.h>
#include <stdlib.h>

#include "common/grow.h"
#include "common/search.h"

/* The shapes a missing CID tries: its function's, the most learned
 * first. */
#define SHAPES_MAX 32
/* Frames of a shape walked up for one whose CID, moved, is known. */
#define SHAPE_LEVELS 8
/* A context passing through f (f not innermost) weighs a quarter of a
 * sample in it: it shows f's callers, not where f's own samples are. */
#define PASSING_WEIGHT 0.25

struct shape {
	uint32_t node;		/* f's frame in the CCT */
	int64_t height;		/* its height there */
	double weight;
};

static int cmp_shape(const void *a, const void *b)
{
	const struct shape *x = a, *y = b;

	return x->weight > y->weight ? -1 : x->weight < y->weight;
}

/* The first of the map's CIDs of @func (they are sorted by function,
 * then height), and how many in *@n. */
static const struct cid_entry *cids_of(const struct map *m, int64_t func,
				       size_t *n)
{
	size_t lo = LOWER_BOUND((size_t)0, m->ncids, i,
				m->cids[i].func < func), end;

	for (end = lo; end < m->ncids && m->cids[end].func == func; end++)
		;
	*n = end - lo;
	return &m->cids[lo];
}

/* @func's shapes, the SHAPES_MAX most learned, into *@v; how many, or
 * -ENOMEM. */
static int shapes_of(const struct map *m, int64_t func, struct shape **v)
{
	size_t ncid, n = 0, cap = 0;
	const struct cid_entry *c = cids_of(m, func, &ncid);

	*v = NULL;
	for (size_t i = 0; i < ncid; i++)
		for (uint32_t j = 0; j < c[i].n; j++) {
			const struct infer_cand *k = &m->cands[c[i].first + j];
			double w = k->self > 0 ? k->self :
				   PASSING_WEIGHT * k->total;

			if (w <= 0 || c[i].height == ICPPD_HEIGHT_NONE)
				continue;
			if (grow(v, &cap, n + 1, sizeof(**v), 64))
				return -ENOMEM;
			(*v)[n++] = (struct shape){ k->node, c[i].height, w };
		}
	if (n > 1)
		qsort(*v, n, sizeof(**v), cmp_shape);
	return n < SHAPES_MAX ? (int)n : SHAPES_MAX;
}

/* Shape @s moved to @height: its solutions appended to *@acc (*@n of
 * them, room *@cap), weighed by the shape, where one of its frames is
 * a known CID so moved with at most *@best guessed frames below it
 * (their CIDs, moved, unknown to the map; a fragment's CID is seen);
 * a fit with fewer drops the fits before it (*@n = 0) and lowers
 * *@best to its count.  0 when it does not fit, 1 when it does, or
 * -ENOMEM. */
static int fit_shape(struct infer *inf, struct map *m, const struct shape *s,
		     int64_t height, struct infer_solution **acc, size_t *n,
		     size_t *cap, int *best)
{
	struct cct *t = inf->cct;
	int64_t delta = height - s->height;
	uint32_t x = s->node;

	for (int level = 0, guessed = 0; level < SHAPE_LEVELS; level++) {
		const struct cct_node *up;
		const struct cid_entry *e;
		bool searched = false;
		int nt;

		x = cct__node(t, x)->parent;
		if (x == CCT_ROOT || x == CCT_NONE)
			return 0;
		up = cct__node(t, x);
		if (up->frame < 0 || !up->height)
			return 0;	/* a fragment's unknown callers */
		e = infer__find_cid(m, up->frame, up->height + delta);
		if (!e && ++guessed > *best)
			return 0;	/* others fit with fewer guesses */
		if (!e || e->fragment)
			continue;
		nt = infer__explain_top(inf, m, up->frame, up->height + delta,
					&searched);
		if (nt <= 0)
			return nt;
		if (guessed < *best) {
			*n = 0;
			*best = guessed;
		}
		if (grow(acc, cap, *n + (size_t)nt, sizeof(**acc), 16))
			return -ENOMEM;
		for (int j = 0; j < nt; j++) {
			uint32_t node;
			double share = inf->tops[j].share;
			int ret = infer__graft_below(inf, s->node, x,
						     inf->tops[j].node, &node);

			if (ret)
				return ret;
			(*acc)[(*n)++] = (struct infer_solution){ node,
				s->weight * share, 0 };
		}
		return 1;
	}
	return 0;
}

int infer__explain_shapes(struct infer *inf, struct map *m, int64_t func,
			  int64_t height, struct infer_outcome *out)
{
	struct shape *v;
	struct infer_solution *acc = NULL;
	size_t n = 0, cap = 0;
	int ns, ret = 0, best = SHAPE_LEVELS;

	if (height == ICPPD_HEIGHT_NONE)	/* nothing to move them by */
		return 0;
	ns = shapes_of(m, func, &v);
	for (int i = 0; i < ns && ret >= 0; i++)
		ret = fit_shape(inf, m, &v[i], height, &acc, &n, &cap, &best);
	free(v);
	if (ns < 0 || ret < 0 || !n) {
		free(acc);
		return ns < 0 || ret < 0 ? -ENOMEM : 0;
	}
	/* equal contexts (shapes alike but for their heights) merge */
	ret = infer__searched(inf, acc, n, out);
	free(acc);
	return ret;
}
