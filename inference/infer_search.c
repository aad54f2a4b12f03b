/*
 * infer_search.c - the search for a CID no path map explains (see
 * infer.c for the tables it walks).
 *
 * The search for a missing CID (f, h) counts the chains of edges from it
 * up to a known CID: N(f, h) = the sum over edges g -> f of size d of
 * N(g, h - d), where a known CID counts its candidates.  Sizes are
 * positive, so heights fall along a chain and the recursion ends; N is
 * memoised per (function, height, guesses left) within the search, so
 * a state is counted once however many chains reach it.  A chain may
 * take at most max_guesses calls no learned path took (all of them when
 * none fits so), learned edges first in each callee's list, so a state
 * out of guesses walks the learned graph alone: the binaries' calls
 * (cc1plus: 400,000) otherwise fan every state out into thousands.
 * A make profile's first report (1,000 searches in cc1): 25 s before
 * these bounds, 0.9 s with them and 1,024 states a search.  The count
 * runs in passes whose bound on a chain's length doubles (2, 4, 8 ...
 * edges) until one finds chains: the shortest are found first, where
 * depth first with the whole bound spent the states far above the
 * leaf's first callers (deepen()).  Before
 * searching, each
 * function's lowest possible height (from the known CIDs down the
 * edges, Dijkstra) prunes every state below it: most of a big program's
 * static call graph cannot reach a sample's height from any root.  The
 * chains are then listed the most probable first (best-first, bounded
 * by each state's reach), following only states that lead somewhere,
 * up to max_solutions: where a bound cuts the list, what is shown is
 * the likeliest part of it.
 *
 * Calls through pointers come last: only when no chain of learned,
 * direct and tail calls reaches a known CID may a chain end at a taken
 * function through an indirect call from a known CID at the height
 * that call puts it (an anchor; infer__add_indirect()).  Taken always,
 * cc1plus's 14,890 taken functions finished chains early at whatever
 * known CID stood at their height, and g++'s k = 3 overlap with the
 * truth fell from 0.26 to 0.20 (a validation run after a trickle
 * record); as a last resort it rose to 0.27.  A frame on a chain that
 * the inferred runs sampled as a CID weighs OBSERVED_BOOST times more,
 * in the count's reach as in the listing.
 */
#define _GNU_SOURCE
#include "inference/infer_int.h"

#include <errno.h>
#include <stdlib.h>

#include "common/grow.h"

static uint64_t state_hash(int64_t func, int64_t height, unsigned guesses)
{
	return hindex__mix(hindex__mix(hindex__mix(9, (uint64_t)func),
				       (uint64_t)height), guesses);
}

static const struct state *find_state(const struct map *m, int64_t func,
				      int64_t height, unsigned guesses)
{
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint32_t i;

	while ((i = hindex__next(&m->state_index, &p,
				 state_hash(func, height, guesses))) !=
	       HINDEX_NONE)
		if (m->states[i].func == func &&
		    m->states[i].height == height &&
		    m->states[i].guesses == guesses)
			return &m->states[i];
	return NULL;
}

/* The guesses left after taking @e with @guesses left; -1: none. */
static int guesses_after(const struct edge *e, unsigned guesses)
{
	return e->count > 0 ? (int)guesses : (int)guesses - 1;
}

/* One search: the chain below the current state, from the leaf up
 * (functions; heights only where solutions are listed). */
struct search {
	struct infer *inf;
	struct map *m;
	int64_t chain[MAX_EDGES_LIMIT + 1];
	int64_t heights[MAX_EDGES_LIMIT + 1];
	unsigned states;
	unsigned max_edges;	/* this pass's bound on a chain's length
				 * (deepen()) */
	unsigned guesses;	/* allowed per chain: the listing's */
	bool cut;		/* a bound cut the search short */
	bool pruned;		/* the guess bound left chains out */
	bool guess;		/* a chain listed takes a call no learned
				 * path took: its weight is a prior */
	size_t first;		/* this search's solutions: m->sols[first..] */
	bool indirect;		/* chains may end in an anchor's indirect
				 * call */
	int err;
};

/* Whether callee @c has an edge from @caller of size @delta: then an
 * anchor's call is that edge's, already counted. */
static bool has_edge(const struct map *m, const struct callee *c,
		     int64_t caller, int64_t delta)
{
	for (uint32_t i = 0; i < c->n; i++)
		if (m->edges[c->first + i].caller == caller &&
		    m->edges[c->first + i].delta == delta)
			return true;
	return false;
}

/* The known CID of anchor @a, where it ends a chain at taken callee @c
 * at height @h: NULL where @c's edges already hold its call. */
static const struct cid_entry *anchor_cid(const struct map *m,
					  const struct callee *c, int64_t h,
					  const struct anchor *a)
{
	return has_edge(m, c, a->caller, h - a->caller_height) ? NULL :
	       infer__find_cid(m, a->caller, a->caller_height);
}

/* The anchors that end a chain at taken callee @c at height @h (see
 * infer__add_indirect()): in *@a, their number in *@n; the sum of the
 * weights of those anchor_cid() keeps, whose known CIDs *@chains
 * counts. */
static double anchors(const struct map *m, const struct callee *c,
		      int64_t h, const struct anchor **a, size_t *n,
		      double *chains)
{
	double w = 0;

	*n = c && c->taken ? infer__anchors_at(m, h, a) : 0;
	*chains = 0;
	for (size_t i = 0; i < *n; i++) {
		const struct cid_entry *k = anchor_cid(m, c, h, &(*a)[i]);

		if (k) {
			w += (*a)[i].weight;
			*chains += k->n;
		}
	}
	return w;
}

/* The callee entry of @e's caller: the next step up, looked up once
 * an edge. */
static const struct callee *callee_of(const struct map *m, struct edge *e)
{
	if (e->caller_callee == CALLEE_UNKNOWN) {
		const struct callee *c = infer__find_callee(m, e->caller);

		e->caller_callee = c ? (uint32_t)(c - m->callees) : NO_CALLEE;
	}
	return e->caller_callee == NO_CALLEE ? NULL :
	       &m->callees[e->caller_callee];
}

/* Can the frame of @e's caller at @up lie on a chain to a known CID? */
static bool feasible(const struct map *m, const struct edge *e, int64_t up)
{
	(void)m;
	return up > 0 && up >= e->caller_hmin;
}

/*
 * The chains from frame chain[depth] at height @h (not a known CID) up
 * to known CIDs, each of which counts its candidates, and the state's
 * reach.  Memoised always, with whether a bound cut it short: a state
 * is expanded once per search, however many chains reach it.  (Memoising
 * only the uncut counts expanded every state near the edge bound once
 * per path that reached it: in cc1's call graph every search then ran
 * into the state bound, and a make report spent 20 s there.)  @c is
 * chain[depth]'s entry in the callees (NULL: nothing calls it), which
 * each edge keeps for its caller once looked up: a step up an edge
 * taken before looks nothing up.
 */
static struct state count_chains(struct search *s, int64_t h,
				 unsigned depth, unsigned guesses,
				 const struct callee *c)
{
	struct map *m = s->m;
	const struct infer_limits *lim = &s->inf->lim;
	const struct state *st = find_state(m, s->chain[depth], h, guesses);
	struct state r = { s->chain[depth], h, guesses, 0, 0, false, false };
	bool cut = s->cut, pruned = s->pruned;

	if (st) {	/* most states are met again */
		s->cut = s->cut || st->cut;
		s->pruned = s->pruned || st->pruned;
		return *st;
	}
	if (++s->states > lim->max_states) {
		s->cut = true;
		return r;
	}
	s->cut = s->pruned = false;
	for (uint32_t i = 0; c && i < c->n && !s->err; i++) {
		struct edge *e = &m->edges[c->first + i];
		const struct cid_entry *k;
		int64_t up = h - e->delta;
		int g = guesses_after(e, guesses);

		if (g < 0) {	/* and every edge after it: learned first */
			for (; i < c->n && !s->pruned; i++)
				s->pruned = feasible(m, &m->edges[c->first + i],
						     h - m->edges[c->first + i].delta);
			break;
		}
		if (!feasible(m, e, up))
			continue;
		if (e->caller_known && (k = infer__find_cid(m, e->caller, up))) {
			r.chains += k->n;
			r.reach += infer__edge_weight(e) / c->sum;
		} else if (depth + 1 < s->max_edges) {
			struct state above;

			s->chain[depth + 1] = e->caller;
			above = count_chains(s, up, depth + 1, (unsigned)g,
					     callee_of(m, e));
			r.chains += above.chains;
			if (above.reach > 0)	/* most states reach none */
				r.reach += infer__edge_weight(e) / c->sum *
					   above.reach *
					   infer__observed(m, e->caller, up);
		} else {
			s->cut = true;
		}
	}
	if (s->indirect && c && c->taken && !s->err) {	/* a guess */
		const struct anchor *a;
		size_t na;
		double chains, w = anchors(m, c, h, &a, &na, &chains);

		if (w > 0 && guesses > 0) {
			r.chains += chains;
			r.reach += INDIRECT_PRIOR / c->sum;
		} else if (w > 0) {
			s->pruned = true;
		}
	}
	r.cut = s->cut;
	r.pruned = s->pruned;
	if (!s->err) {
		if (grow(&m->states, &m->states_cap, m->nstates + 1,
			 sizeof(*m->states), 1024) ||
		    hindex__insert(&m->state_index,
				   state_hash(s->chain[depth], h, guesses),
				   (uint32_t)m->nstates))
			s->err = -ENOMEM;
		else
			m->states[m->nstates++] = r;
	}
	s->cut = s->cut || cut;
	s->pruned = s->pruned || pruned;
	return r;
}

/* A solution: the anchor context, then chain[depth] ... chain[0]. */
static void add_solution(struct search *s, uint32_t anchor, unsigned depth,
			 double weight)
{
	struct map *m = s->m;
	uint32_t node = anchor;

	for (unsigned j = depth + 1; j-- > 0;) {
		if ((s->err = cct__child(s->inf->cct, node, s->chain[j], &node)))
			return;
		infer__set_height(s->inf->cct, node, s->heights[j]);
	}
	if ((s->err = grow(&m->sols, &m->sols_cap, m->nsols + 1,
			   sizeof(*m->sols), 64)))
		return;
	m->sols[m->nsols++] = (struct infer_solution){ node, weight };
}

/*
 * A chain being listed: its top frame @func at @height, the item below
 * it (@below; the leaf has none), and the probability @p of the path
 * walking up from the leaf.  A finished item (@anchor set) is a known
 * CID's candidate on top of the chain @below; its @bound is @p.  An
 * open one's @bound is @p times its state's reach: the probability of
 * all the chains that finish it, so no one of them is more probable.
 */
struct bitem {
	int64_t func, height;
	uint32_t below, anchor, depth;
	unsigned guesses;	/* left above it */
	bool expanded;
	bool guess;		/* an edge on it has no learned samples */
	double p, bound;
};

struct best {
	struct bitem *v;
	size_t n, cap;
	uint32_t *heap;		/* item indexes, the highest bound first */
	size_t hn, hcap;
};

static bool higher(const struct best *b, uint32_t x, uint32_t y)
{
	return b->v[x].bound > b->v[y].bound;
}

static int best_push(struct best *b, struct bitem it)
{
	size_t i;

	if (grow(&b->v, &b->cap, b->n + 1, sizeof(*b->v), 256) ||
	    grow(&b->heap, &b->hcap, b->hn + 1, sizeof(*b->heap), 256))
		return -ENOMEM;
	b->v[b->n] = it;
	for (i = b->hn++; i && higher(b, (uint32_t)b->n, b->heap[(i - 1) / 2]);
	     i = (i - 1) / 2)
		b->heap[i] = b->heap[(i - 1) / 2];
	b->heap[i] = (uint32_t)b->n++;
	return 0;
}

static uint32_t best_pop(struct best *b)
{
	uint32_t top = b->heap[0], last = b->heap[--b->hn];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= b->hn)
			break;
		if (c + 1 < b->hn && higher(b, b->heap[c + 1], b->heap[c]))
			c++;
		if (!higher(b, b->heap[c], last))
			break;
		b->heap[i] = b->heap[c];
		i = c;
	}
	if (b->hn)
		b->heap[i] = last;
	return top;
}

/*
 * Pushes what lies one edge above open item @i: a known CID's
 * candidates as finished chains, the caller's frame as an open one.
 * Returns the open item to dive into next - the one with the highest
 * bound, when no chain finished here - or UINT32_MAX.
 */
static uint32_t best_expand(struct search *s, struct best *b, uint32_t i)
{
	struct map *m = s->m;
	const struct bitem it = b->v[i];
	const struct callee *c = infer__find_callee(m, it.func);
	uint32_t dive = UINT32_MAX;
	bool finished = false;

	b->v[i].expanded = true;
	if (s->indirect && c && c->taken && it.guesses > 0) {
		const struct anchor *a;
		size_t na;
		double chains, w = anchors(m, c, it.height, &a, &na, &chains);

		for (size_t j = 0; w > 0 && j < na && !s->err; j++) {
			const struct cid_entry *k;
			double pa = it.p * INDIRECT_PRIOR / c->sum *
				    a[j].weight / w;

			if (!(k = anchor_cid(m, c, it.height, &a[j])))
				continue;
			for (uint32_t x = 0; x < k->n && !s->err; x++) {
				double share = m->cands[k->first + x].share;

				s->err = best_push(b, (struct bitem){
					a[j].caller, a[j].caller_height, i,
					m->cands[k->first + x].node, it.depth,
					0, false, true, pa * share,
					pa * share });
			}
			finished = true;
		}
	}
	for (uint32_t j = 0; c && j < c->n && !s->err; j++) {
		const struct edge *e = &m->edges[c->first + j];
		const struct cid_entry *k;
		const struct state *st;
		double pe = it.p * infer__edge_weight(e) / c->sum;
		int64_t up = it.height - e->delta;
		bool guess = it.guess || e->count <= 0;
		int g = guesses_after(e, it.guesses);

		if (g < 0)	/* and every edge after it: learned first */
			break;
		if (!feasible(m, e, up))
			continue;
		if (e->caller_known && (k = infer__find_cid(m, e->caller, up))) {
			for (uint32_t a = 0; a < k->n && !s->err; a++) {
				const struct infer_cand *x =
					&m->cands[k->first + a];

				s->err = best_push(b, (struct bitem){ e->caller,
					up, i, x->node, it.depth, 0, false,
					guess, pe * x->share, pe * x->share });
			}
			finished = true;
		} else if (it.depth + 1 >= s->max_edges) {
			s->cut = true;
		} else if ((st = find_state(m, e->caller, up, (unsigned)g)) &&
			   st->chains > 0) {
			/* only where the count found chains (a state it did
			 * not reach, past its bound, is not listed: pushing
			 * every such caller of a callee with thousands made
			 * the listing's heap most of a report's time); one
			 * it cut short is bounded by the reach it found */
			double po = pe * infer__observed(m, e->caller, up);
			double bound = po * st->reach;

			s->err = best_push(b, (struct bitem){ e->caller, up, i,
				CCT_NONE, it.depth + 1, (unsigned)g, false,
				guess, po, bound });
			if (dive == UINT32_MAX || bound > b->v[dive].bound)
				dive = (uint32_t)b->n - 1;
		}
	}
	return finished ? UINT32_MAX : dive;
}

/*
 * Lists the chains from the CID chain[0] at @h, the most probable
 * first.  A chain's probability is the product of each edge's share of
 * its callee's callers (learned samples, a proven call's prior), times
 * the anchor's share of its CID.  Best-first over bounds: a finished
 * chain popped is more probable than any chain not yet listed.  Each
 * open item popped is dived into (its best child, and so on) until a
 * chain finishes, so chains finish within the state bound even where
 * many are equally probable (recursion); when the bound cuts the list,
 * the finished chains found so far are listed, the most probable first.
 * Follows only states that lead to a known CID.
 */
static void list_chains(struct search *s, int64_t h)
{
	const struct infer_limits *lim = &s->inf->lim;
	struct best b = { 0 };
	bool draining = false;

	s->err = best_push(&b, (struct bitem){ s->chain[0], h, UINT32_MAX,
		CCT_NONE, 0, s->guesses, false, false, 1.0, 1.0 });
	while (!s->err && b.hn) {
		uint32_t i = best_pop(&b);

		if (b.v[i].anchor != CCT_NONE) {
			if (s->m->nsols - s->first >= lim->max_solutions) {
				s->cut = true;
				break;
			}
			for (uint32_t j = b.v[i].below; j != UINT32_MAX;
			     j = b.v[j].below) {
				s->chain[b.v[j].depth] = b.v[j].func;
				s->heights[b.v[j].depth] = b.v[j].height;
			}
			add_solution(s, b.v[i].anchor, b.v[i].depth, b.v[i].p);
			s->guess |= b.v[i].guess;
			continue;
		}
		while (!draining && !s->err && i != UINT32_MAX &&
		       !b.v[i].expanded) {
			if (++s->states > lim->max_states) {
				s->cut = draining = true;
				break;
			}
			i = best_expand(s, &b, i);
		}
	}
	free(b.v);
	free(b.heap);
}

/*
 * The context "[unknown callers of F at height H]; F".  Both frames
 * count as certain: the pseudo frame claims nothing but that the
 * callers are unknown.
 */
int infer__unknown_node(struct infer *inf, int64_t func, int64_t height,
			uint32_t *node)
{
	int64_t pseudo = cct__pseudo(inf->cct, func, height);
	uint32_t up;
	int ret;

	if (!pseudo)
		return -ENOMEM;
	ret = cct__child(inf->cct, CCT_ROOT, pseudo, &up);
	return ret ? ret : cct__child(inf->cct, up, func, node);
}

/* How a search's solutions are shown: one chain, counted without a cut,
 * is precise (every frame certain); all of several, ambiguous (the
 * frames they share certain); a list a bound cut short, searched (only
 * the leaf certain). */
static void classify(struct infer *inf, struct map *m, struct memo *mo,
		     double chains, bool cut)
{
	uint32_t *cur;

	mo->how = CCT_SEARCHED;
	mo->exact = 1;
	if (cut || chains != mo->n)
		return;
	if (mo->n == 1) {
		mo->how = CCT_PRECISE;
		mo->exact = cct__node(inf->cct, m->sols[mo->first].node)->depth;
		return;
	}
	cur = malloc(mo->n * sizeof(*cur));
	if (!cur)
		return;
	for (uint32_t i = 0; i < mo->n; i++)
		cur[i] = m->sols[mo->first + i].node;
	mo->how = CCT_AMBIGUOUS;
	mo->exact = infer__shared_suffix(inf->cct, cur, mo->n);
	free(cur);
}

/* A solution being cut: its top frame kept so far, the group of the
 * solutions that agree with it up to there, and the frame above. */
struct cutter {
	uint32_t sol, top, group;
	int64_t above;
};

static int cmp_cutter(const void *a, const void *b)
{
	const struct cutter *x = a, *y = b;

	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	return x->above < y->above ? -1 : x->above > y->above;
}

/* The context "[unknown callers of F at height H]; F; ...; leaf" for
 * the frames from @leaf up to its ancestor @top (F). */
static int cut_node(struct cct *t, uint32_t top, uint32_t leaf,
		    uint32_t *node)
{
	const struct cct_node *tn = cct__node(t, top);
	uint32_t n = cct__node(t, leaf)->depth - tn->depth + 1, i = n;
	int64_t pseudo = cct__pseudo(t, tn->frame, tn->height), *frames;
	int ret = 0;

	if (!pseudo || !(frames = malloc(n * sizeof(*frames))))
		return -ENOMEM;
	for (uint32_t x = leaf; i > 0; x = cct__node(t, x)->parent)
		frames[--i] = cct__node(t, x)->frame;
	ret = cct__child(t, CCT_ROOT, pseudo, node);
	for (i = 0; i < n && !ret; i++)
		ret = cct__child(t, *node, frames[i], node);
	free(frames);
	return ret;
}

/* Whether a learned path took a call from @caller to @callee (a
 * callee's learned edges come first). */
static bool learned_call(const struct map *m, int64_t caller, int64_t callee)
{
	const struct callee *c = infer__find_callee(m, callee);

	for (uint32_t i = 0; c && i < c->n; i++) {
		const struct edge *e = &m->edges[c->first + i];

		if (e->count <= 0)
			break;
		if (e->caller == caller)
			return true;
	}
	return false;
}

/*
 * Cuts the @n solutions in @v (shares summing to 1) where they stop
 * agreeing, as infer.h says: level by level from the leaf, the
 * solutions still growing are grouped by the frame above; at a level
 * whose split a guess makes (some call into it no learned path of @mp
 * took), a group with less than the confidence share of the weight
 * stops there.  Then the cut ones get their cut contexts and equal
 * contexts merge.  The number of solutions left in @v, or 0 when out
 * of memory.
 */
static size_t cut_uncertain(struct infer *inf, const struct map *mp,
			    struct infer_solution *v, size_t n)
{
	struct cct *t = inf->cct;
	struct cutter *c = malloc(n * sizeof(*c));
	uint32_t *top = malloc(n * sizeof(*top));
	bool *cut = calloc(n, sizeof(*cut)), any = false;
	size_t live = n, k = 0;

	if (!c || !top || !cut)
		goto fail;
	for (uint32_t i = 0; i < n; i++)
		c[i] = (struct cutter){ i, v[i].node, 0, 0 };
	while (live) {
		size_t m = 0;
		bool weighed = true;

		for (size_t i = 0; i < live; i++) {
			uint32_t up = cct__node(t, c[i].top)->parent;

			if (up == CCT_ROOT) {	/* whole: never cut */
				top[c[i].sol] = c[i].top;
				continue;
			}
			c[i].above = cct__node(t, up)->frame;
			weighed = weighed && learned_call(mp, c[i].above,
				cct__node(t, c[i].top)->frame);
			c[m++] = c[i];
		}
		qsort(c, m, sizeof(*c), cmp_cutter);
		live = 0;
		for (size_t a = 0, b; a < m; a = b) {
			double mass = 0;

			for (b = a; b < m && !cmp_cutter(&c[a], &c[b]); b++)
				mass += v[c[b].sol].share;
			for (size_t i = a; i < b; i++) {
				/* a split that learned calls weigh is
				 * apportioned: only a guess is cut */
				if (!weighed && mass < inf->lim.confidence) {
					top[c[i].sol] = c[i].top;
					cut[c[i].sol] = any = true;
					continue;
				}
				c[live] = c[i];
				c[live].top = cct__node(t, c[i].top)->parent;
				c[live++].group = (uint32_t)a;
			}
		}
	}
	for (size_t i = 0; any && i < n; i++)
		if (cut[i] && cut_node(t, top[i], v[i].node, &v[i].node))
			goto fail;
	if (any)
		k = infer__merge_solutions(v, n);
	free(c);
	free(top);
	free(cut);
	return any ? k : n;
fail:
	free(c);
	free(top);
	free(cut);
	return 0;
}

/* Cuts the solutions of an outcome that has several (cut_uncertain()).
 * Ambiguous ones that all merge into one are certain to its top: all
 * chains agreed up to where it is cut.  0 or -ENOMEM. */
int infer__cut_outcome(struct infer *inf, const struct map *m,
		       struct infer_solution *v, uint32_t *n, uint32_t *exact,
		       enum cct_how how)
{
	size_t k;

	if (*n < 2 || inf->lim.confidence < 0)
		return 0;
	if (!(k = cut_uncertain(inf, m, v, *n)))
		return -ENOMEM;
	if (k == 1 && how == CCT_AMBIGUOUS)
		*exact = cct__node(inf->cct, v[0].node)->depth;
	*n = (uint32_t)k;
	return 0;
}

/*
 * The calls into @func (learned, direct, and through tail calls) whose
 * caller's CID, at the height the call puts it, whole paths explain:
 * each such CID's candidates with @func below them, weighed by the
 * call's weight (its learned samples, or the prior of one only the
 * binary shows) times the candidate's share, and cut where calls no
 * learned path took split them, as the search's chains are.  A chain of
 * one edge, which the search would find first too; before the shapes
 * because they reach only the callers @func was learned under: of
 * g++'s samples in validate whose leaf CID the map lacked and whose
 * caller's it had, the call had never been learned for 531 of 933.
 */
int infer__explain_callers(struct infer *inf, struct map *m, int64_t func,
			   int64_t height, struct infer_outcome *out)
{
	const struct callee *c = infer__find_callee(m, func);
	struct infer_solution *acc = NULL;
	size_t n = 0, cap = 0;
	uint32_t k;
	int ret = 0;

	if (!c || height == ICPPD_HEIGHT_NONE)
		return 0;
	for (uint32_t i = 0; i < c->n && !ret; i++) {
		const struct edge *e = &m->edges[c->first + i];
		const struct cid_entry *ce;
		bool searched = false;
		int nt;

		if (!e->caller_known)
			continue;
		ce = infer__find_cid(m, e->caller, height - e->delta);
		if (!ce || ce->fragment)
			continue;
		nt = infer__explain_top(inf, m, e->caller, height - e->delta,
					&searched);
		if (nt < 0 || grow(&acc, &cap, n + (size_t)nt, sizeof(*acc),
				   16)) {
			ret = -ENOMEM;
			break;
		}
		for (int j = 0; j < nt && !ret; j++) {
			uint32_t node;

			if ((ret = cct__child(inf->cct, inf->tops[j].node,
					      func, &node)))
				break;
			infer__set_height(inf->cct, node, height);
			acc[n++] = (struct infer_solution){ node,
				infer__edge_weight(e) * inf->tops[j].share, 0 };
		}
	}
	if (!ret && n)
		ret = infer__searched(inf, acc, n, out);
	free(acc);
	if (ret <= 0)
		return ret;
	k = (uint32_t)out->n;	/* out->sols is the scratch */
	if (infer__cut_outcome(inf, m, inf->scratch, &k, &out->exact,
			       out->how))
		return -ENOMEM;
	out->n = k;
	return 1;
}

/*
 * Counts the chains from the CID chain[0] at @height pass by pass, the
 * bound on their length doubling from FIRST_MAX_EDGES to max_edges,
 * until a pass finds some (the passes share the state bound).  The
 * first pass that reaches a known CID lists the shortest chains: the
 * count is depth first, and with max_edges from the start it spent the
 * state bound deep above the first few callers of the leaf, so the
 * chains it found went through the wrong caller right above the leaf
 * for a third of their weight (validate, g++ -O2 -c after a default
 * record), where the true one was one or two edges from a known CID.
 */
static double deepen(struct search *s, int64_t height, unsigned guesses)
{
	const struct infer_limits *lim = &s->inf->lim;
	double chains = 0;

	for (s->max_edges = FIRST_MAX_EDGES;; s->max_edges *= 2) {
		if (s->max_edges > lim->max_edges)
			s->max_edges = lim->max_edges;
		/* states are this pass's: a table kept across searches
		 * grew to millions (cc1plus: 8M, 400 MB), and looking them
		 * up, a cache miss each, took a third of a report's time */
		s->m->nstates = 0;
		hindex__clear(&s->m->state_index);
		s->cut = s->pruned = false;
		chains = count_chains(s, height, 0, guesses,
				      infer__find_callee(s->m, s->chain[0]))
				 .chains;
		if (chains > 0 || s->err || s->max_edges >= lim->max_edges ||
		    s->states > lim->max_states)
			return chains;
	}
}

/* The memo entry of CID (func, height) in @m, made by a search if
 * needed; NULL on error. */
const struct memo *infer__search_memo(struct infer *inf, struct map *m,
				      int64_t func, int64_t height)
{
	uint64_t h = hindex__mix(hindex__mix(6, (uint64_t)func),
				 (uint64_t)height);
	struct hindex_probe p = { HINDEX_NONE, 0 };
	struct search s = { .inf = inf, .m = m, .first = m->nsols,
			    .guesses = inf->lim.max_guesses };
	struct memo *mo;
	double sum = 0, chains;
	bool cut;
	uint32_t i;

	while ((i = hindex__next(&m->memo_index, &p, h)) != HINDEX_NONE)
		if (m->memos[i].func == func && m->memos[i].height == height)
			return &m->memos[i];
	inf->stats.searches++;
	s.chain[0] = func;
	/* few guesses first (the common case, and cheap); all of them
	 * only when that finds no chain.  A CID with no height has no
	 * frame sizes to add up: nothing to search. */
	chains = height == ICPPD_HEIGHT_NONE ? 0 :
		 deepen(&s, height, inf->lim.max_guesses);
	if (chains <= 0 && !s.err && height != ICPPD_HEIGHT_NONE &&
	    inf->lim.max_guesses < MAX_EDGES_LIMIT) {
		s.guesses = MAX_EDGES_LIMIT;
		chains = deepen(&s, height, s.guesses);
	}
	if (chains <= 0 && !s.err && height != ICPPD_HEIGHT_NONE &&
	    m->nanchors) {
		s.indirect = true;
		s.guesses = inf->lim.max_guesses;
		chains = deepen(&s, height, s.guesses);
	}
	/* chains the guess bound left out: the count is not all there is */
	cut = s.cut || s.pruned;
	inf->stats.search_states += s.states;
	s.states = 0;
	if (chains > 0 && !s.err)
		list_chains(&s, height);
	inf->stats.search_states += s.states;
	if (s.err)
		return NULL;
	if (grow(&m->memos, &m->memos_cap, m->nmemos + 1, sizeof(*m->memos),
		 64))
		return NULL;
	mo = &m->memos[m->nmemos];
	*mo = (struct memo){ func, height, (uint32_t)s.first,
		(uint32_t)(m->nsols - s.first), 1, CCT_SEARCHED };
	for (i = 0; i < mo->n; i++)
		sum += m->sols[mo->first + i].share;
	for (i = 0; i < mo->n; i++)
		m->sols[mo->first + i].share = sum > 0 ?
			m->sols[mo->first + i].share / sum : 1.0 / mo->n;
	if (mo->n) {
		classify(inf, m, mo, chains, cut || s.cut);
		/* chains that learned samples alone weigh are apportioned
		 * whole; a prior's guess is cut where they disagree */
		if (s.guess &&
		    infer__cut_outcome(inf, m, &m->sols[mo->first], &mo->n,
				       &mo->exact, mo->how))
			return NULL;
		m->nsols = mo->first + mo->n;	/* merged ones dropped */
	} else {
		mo->how = CCT_UNKNOWN;
		mo->exact = UNKNOWN_EXACT;
		if (infer__unknown_node(inf, func, height, &i) ||
		    grow(&m->sols, &m->sols_cap, m->nsols + 1,
			 sizeof(*m->sols), 64))
			return NULL;
		m->sols[m->nsols++] = (struct infer_solution){ i, 1.0 };
		mo->n = 1;
	}
	if (hindex__insert(&m->memo_index, h, (uint32_t)m->nmemos))
		return NULL;
	return &m->memos[m->nmemos++];
}

/* @n solutions in the scratch array; NULL when out of memory. */
