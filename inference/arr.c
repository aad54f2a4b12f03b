/*
 * arr.c - the ARR search (see arr.h).  Each evaluation recomputes all
 * heights (O(n)) and sorts the nodes by CID (O(n log n)): path maps are
 * thousands of nodes, the search a few thousand steps.
 */
#include "inference/arr.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define FRUITLESS_BEFORE_ACCEPT 100
#define DEFAULT_PATIENCE 2000
#define PAD_STEPS 4		/* try +16, +32, +48, +64 */

struct entry {
	uint32_t func;
	int64_t height;
	uint32_t ctx;
	uint32_t node;
};

struct state {
	const struct arr_node *nodes;
	size_t n;
	const struct arr_func *funcs;
	size_t nfuncs;
	int64_t *heights;
	struct entry *e;
	bool *unique;		/* per node, after evaluate() */
	uint64_t rng;
};

static uint64_t next(struct state *s)
{
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	return s->rng;
}

void arr__heights(const struct arr_node *nodes, size_t n, const int64_t *pads,
		  int64_t *out)
{
	/* out[i] holds the offset first, then the height */
	for (size_t i = 0; i < n; i++) {
		int64_t p = nodes[i].parent;

		out[i] = p < 0 ? 0 : out[p] + pads[nodes[p].func];
	}
	for (size_t i = 0; i < n; i++)
		out[i] += nodes[i].height;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	if (x->height != y->height)
		return x->height < y->height ? -1 : 1;
	return x->ctx < y->ctx ? -1 : x->ctx > y->ctx;
}

struct score {
	double weight;
	size_t unique;
	int64_t deepest;
};

static bool better(const struct score *a, const struct score *b)
{
	return a->weight > b->weight + 1e-9 ||
	       (a->weight > b->weight - 1e-9 && a->unique > b->unique);
}

/* Scores @pads; s->unique[i] tells whether node i's CID is precise. */
static struct score evaluate(struct state *s, const int64_t *pads)
{
	struct score sc = { 0, 0, 0 };
	size_t i = 0;

	arr__heights(s->nodes, s->n, pads, s->heights);
	for (size_t k = 0; k < s->n; k++) {
		s->e[k] = (struct entry){ s->nodes[k].func, s->heights[k],
					  s->nodes[k].ctx, (uint32_t)k };
		if (s->heights[k] > sc.deepest)
			sc.deepest = s->heights[k];
	}
	qsort(s->e, s->n, sizeof(*s->e), cmp_entry);
	while (i < s->n) {
		size_t j = i + 1;
		bool one = true;

		while (j < s->n && s->e[j].func == s->e[i].func &&
		       s->e[j].height == s->e[i].height) {
			if (s->e[j].ctx != s->e[i].ctx)
				one = false;
			j++;
		}
		for (size_t k = i; k < j; k++) {
			s->unique[s->e[k].node] = one;
			if (one)
				sc.weight += s->nodes[s->e[k].node].weight;
		}
		if (one)
			sc.unique += j - i;
		i = j;
	}
	return sc;
}

/* How many times function @f is a frame above node @i, for each f:
 * the differences between two nodes' callers are what a pad can use. */
static void callers(const struct arr_node *nodes, size_t i, int32_t *count,
		    int sign)
{
	for (int64_t p = nodes[i].parent; p >= 0; p = nodes[p].parent)
		count[nodes[p].func] += sign;
}

/* The padable functions whose count differs between nodes @a and @b,
 * into @out; their number. */
static size_t differing(struct state *s, uint32_t a, uint32_t b,
			int32_t *count, uint32_t *out)
{
	size_t n = 0;

	callers(s->nodes, a, count, 1);
	callers(s->nodes, b, count, -1);
	for (int pass = 0; pass < 2; pass++)
		for (int64_t p = s->nodes[pass ? b : a].parent; p >= 0;
		     p = s->nodes[p].parent) {
			uint32_t f = s->nodes[p].func;

			if (count[f] && s->funcs[f].padable) {
				bool seen = false;

				for (size_t k = 0; k < n; k++)
					seen |= out[k] == f;
				if (!seen)
					out[n++] = f;
			}
		}
	/* clear what was set */
	callers(s->nodes, a, count, -1);
	callers(s->nodes, b, count, 1);
	return n;
}

/* Marks the nodes of baseline collisions that no pad can separate:
 * every other context of their CID has the same callers, or differs
 * only in functions that cannot be padded. */
static void find_inseparable(struct state *s, int32_t *count, uint32_t *tmp,
			     bool *mark)
{
	size_t i = 0;

	while (i < s->n) {
		size_t j = i + 1;

		while (j < s->n && s->e[j].func == s->e[i].func &&
		       s->e[j].height == s->e[i].height)
			j++;
		for (size_t a = i; a < j; a++) {
			bool separable = false;
			bool collides = false;

			for (size_t b = i; b < j && !separable; b++) {
				if (s->e[a].ctx == s->e[b].ctx)
					continue;
				collides = true;
				separable = differing(s, s->e[a].node, s->e[b].node,
						      count, tmp) > 0;
			}
			mark[s->e[a].node] = collides && !separable;
		}
		i = j;
	}
}

/* A colliding, separable node, drawn by training weight; CCT_NONE-like
 * UINT32_MAX when none. */
static uint32_t pick_collision(struct state *s, const bool *inseparable)
{
	double total = 0, r;

	for (size_t i = 0; i < s->n; i++)
		if (!s->unique[i] && !inseparable[i])
			total += s->nodes[i].weight + 1e-3;
	if (total <= 0)
		return UINT32_MAX;
	r = (double)(next(s) % 1000000) / 1e6 * total;
	for (size_t i = 0; i < s->n; i++)
		if (!s->unique[i] && !inseparable[i]) {
			r -= s->nodes[i].weight + 1e-3;
			if (r <= 0)
				return (uint32_t)i;
		}
	return UINT32_MAX;
}

/* Another context colliding with node @a under the current heights. */
static uint32_t partner(struct state *s, uint32_t a)
{
	uint32_t found[64];
	size_t n = 0;

	for (size_t i = 0; i < s->n && n < 64; i++)
		if (s->nodes[i].func == s->nodes[a].func &&
		    s->heights[i] == s->heights[a] &&
		    s->nodes[i].ctx != s->nodes[a].ctx)
			found[n++] = (uint32_t)i;
	return n ? found[next(s) % n] : UINT32_MAX;
}

void arr_result__exit(struct arr_result *r)
{
	if (!r)
		return;
	free(r->pads);
	free(r->inseparable_node);
	r->pads = NULL;
	r->inseparable_node = NULL;
}

/* Grows function @f's pad in steps of 16 bytes until the score gets
 * better than *@now (or, after enough fruitless tries, just moves, to
 * leave a plateau) within the depth @limit; a step that does neither is
 * undone. */
static void try_pads(struct state *s, uint32_t f, int64_t *cur, int64_t limit,
		     struct score *now, unsigned *fruitless)
{
	for (int k = 1; k <= PAD_STEPS; k++) {
		int64_t old = cur[f];
		struct score sc;

		cur[f] = old + 16 * k;
		if (cur[f] > s->funcs[f].max_pad) {
			cur[f] = old;
			return;
		}
		sc = evaluate(s, cur);
		if (sc.deepest <= limit && better(&sc, now)) {
			*now = sc;
			return;
		}
		if (sc.deepest <= limit &&
		    ++*fruitless >= FRUITLESS_BEFORE_ACCEPT) {
			*now = sc;	/* accept, to leave a plateau */
			*fruitless = 0;
			return;
		}
		cur[f] = old;
	}
}

/* Drops the pads that do not help, then shrinks the rest. */
static void shrink_pads(struct state *s, int64_t *pads, size_t nfuncs,
			struct score *best)
{
	for (size_t f = 0; f < nfuncs; f++) {
		while (pads[f] > 0) {
			struct score sc;

			pads[f] -= 16;
			sc = evaluate(s, pads);
			if (better(best, &sc)) {
				pads[f] += 16;
				break;
			}
			*best = sc;
		}
	}
}

int arr__search(const struct arr_node *nodes, size_t n,
		const struct arr_func *funcs, size_t nfuncs,
		const struct arr_opts *o, struct arr_result *r)
{
	struct state s = { nodes, n, funcs, nfuncs, NULL, NULL, NULL,
			   o->seed * 2654435761ULL + 88172645463325252ULL };
	int64_t *cur = calloc(nfuncs + 1, sizeof(*cur));
	int32_t *count = calloc(nfuncs + 1, sizeof(*count));
	uint32_t *tmp = calloc(n + nfuncs + 1, sizeof(*tmp));
	unsigned patience = o->patience ? o->patience : DEFAULT_PATIENCE;
	unsigned fruitless = 0, stale = 0;
	struct score best, now;
	int64_t limit;
	int ret = -ENOMEM;

	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i < n; i++)
		if (nodes[i].parent >= (int64_t)i || nodes[i].func >= nfuncs)
			return -EINVAL;
	s.heights = calloc(n + 1, sizeof(*s.heights));
	s.e = calloc(n + 1, sizeof(*s.e));
	s.unique = calloc(n + 1, sizeof(*s.unique));
	r->pads = calloc(nfuncs + 1, sizeof(*r->pads));
	r->inseparable_node = calloc(n + 1, sizeof(*r->inseparable_node));
	if (!cur || !count || !tmp || !s.heights || !s.e || !s.unique ||
	    !r->pads || !r->inseparable_node)
		goto out;
	for (size_t i = 0; i < n; i++)
		r->total += nodes[i].weight;
	best = evaluate(&s, r->pads);
	r->precise_before = best.weight;
	r->unique_before = best.unique;
	r->deepest_before = best.deepest;
	r->paths = n;
	find_inseparable(&s, count, tmp, r->inseparable_node);
	for (size_t i = 0; i < n; i++)
		if (r->inseparable_node[i])
			r->inseparable += nodes[i].weight;
	limit = (int64_t)(o->max_growth * (double)best.deepest);
	now = best;
	while (stale < patience &&
	       best.weight < o->target * r->total - 1e-9) {
		uint32_t a, b, f, cand[64];
		size_t nc;

		r->steps++;
		evaluate(&s, cur);
		a = pick_collision(&s, r->inseparable_node);
		if (a == UINT32_MAX)
			break;		/* nothing separable collides */
		b = partner(&s, a);
		nc = b == UINT32_MAX ? 0 : differing(&s, a, b, count, tmp);
		if (!nc) {
			stale++;
			continue;
		}
		if (nc > 64)
			nc = 64;
		memcpy(cand, tmp, nc * sizeof(*cand));
		f = cand[next(&s) % nc];
		try_pads(&s, f, cur, limit, &now, &fruitless);
		if (better(&now, &best)) {
			best = now;
			memcpy(r->pads, cur, nfuncs * sizeof(*cur));
			stale = 0;
		} else {
			stale++;
		}
	}
	shrink_pads(&s, r->pads, nfuncs, &best);
	best = evaluate(&s, r->pads);
	r->precise_after = best.weight;
	r->unique_after = best.unique;
	r->deepest_after = best.deepest;
	ret = 0;
out:
	if (ret)
		arr_result__exit(r);
	free(cur);
	free(count);
	free(tmp);
	free(s.heights);
	free(s.e);
	free(s.unique);
	return ret;
}
