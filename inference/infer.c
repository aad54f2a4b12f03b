/*
 * infer.c - the inference engine (see infer.h for the rules).
 *
 * Per program: the map's nodes, then tables built once by
 * infer__end_map() from sorted copies - CIDs with their candidate
 * ranges, and call-graph edges grouped by callee - and the memos of
 * searches.  A lookup is one hash probe and a compare of (function,
 * height).  Calls the binary proves (infer__add_call) join the edges
 * when the next CID is attributed; the memos start afresh then.
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
 * these bounds, 0.9 s with them and 1,024 states a search.  Before
 * searching, each
 * function's lowest possible height (from the known CIDs down the
 * edges, Dijkstra) prunes every state below it: most of a big program's
 * static call graph cannot reach a sample's height from any root.  The
 * chains are then listed the most probable first (best-first, bounded
 * by each state's reach), following only states that lead somewhere,
 * up to max_solutions: where a bound cuts the list, what is shown is
 * the likeliest part of it.
 */
#define _GNU_SOURCE
#include "inference/infer.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

#define DEFAULT_MAX_EDGES 24
#define DEFAULT_MAX_STATES 1024
#define DEFAULT_MAX_SOLUTIONS 64
#define DEFAULT_MAX_GUESSES 2
#define MAX_EDGES_LIMIT 64
#define DEFAULT_CONFIDENCE 0.75
/* The weight of a call the binary proves but no learned path took, in
 * samples: learned edges outweigh it as soon as one sample took them. */
#define PROVEN_PRIOR 0.25
/* The weight, in samples, of the map's split of a CID against the
 * split the inferred runs' own learning measured, where the two
 * disagree (see weigh()). */
#define RUN_PRIOR 8.0
#define NO_HEIGHT INT64_MAX

struct mnode {
	int64_t func, height;
	uint32_t parent;	/* map node index; CCT_NONE: outermost */
	uint32_t cct;
	uint64_t self, total;
	double own;
	bool fragment;
};

struct cid_entry {
	int64_t func, height;
	uint32_t first, n;	/* range of cands */
	uint32_t exact;		/* frames the candidates share */
	bool weighed;		/* learned samples weigh the candidates */
	bool fragment;		/* the candidates are fragments' (some of
				 * them, with no height: see build_cids) */
};

struct edge {
	int64_t callee, caller, delta;
	double count;		/* learned samples through it */
	bool proven;		/* a call the binary shows */
	int64_t caller_hmin;	/* the caller's lowest possible height
				 * (lowest_heights()), kept here so that a
				 * search's step needs no lookup */
	bool caller_known;	/* the caller has CIDs in the map: only
				 * then is a CID looked up */
};

struct callee {
	int64_t func;
	uint32_t first, n;	/* range of edges */
	double sum;
};

struct memo {
	int64_t func, height;
	uint32_t first, n;	/* range of sols */
	uint32_t exact;
	enum cct_how how;
};

/* A searched state: the chains from it to known CIDs, and the
 * probability that a walk up from it ends at one (each step taking an
 * edge by its share of the callee's callers). */
struct state {
	int64_t func, height;
	unsigned guesses;	/* calls no learned path took, still allowed
				 * above it */
	double chains, reach;
	bool cut;		/* a bound cut its count short: a lower
				 * bound */
	bool pruned;		/* the guess bound left chains out */
};

/* A function of the call graph: its lowest possible height and its
 * edges as a caller (indexes into the map's by_caller). */
struct fnode {
	int64_t func, hmin;
	uint32_t first, n;
	bool known;		/* some CID of the map is this function's */
};

struct map {
	int64_t program;
	struct mnode *nodes;
	size_t nnodes, nodes_cap;
	struct cid_entry *cids;
	size_t ncids;
	struct infer_cand *cands;
	size_t ncands;
	struct hindex cid_index;
	struct edge *edges;
	size_t nedges, edges_cap;
	bool dirty;		/* edges added since the tables were built */
	struct callee *callees;
	size_t ncallees;
	struct hindex callee_index;
	struct fnode *fnodes;
	size_t nfnodes;
	struct hindex fnode_index;
	uint32_t *by_caller;	/* edge indexes, by caller */
	struct state *states;
	size_t nstates, states_cap;
	struct hindex state_index;
	struct memo *memos;
	size_t nmemos, memos_cap;
	struct hindex memo_index;
	struct infer_solution *sols;
	size_t nsols, sols_cap;
};

struct infer {
	struct cct *cct;
	struct infer_limits lim;
	struct map *maps;
	size_t nmaps, maps_cap;
	struct map *building;
	struct infer_solution *scratch;	/* infer__explain() of candidates */
	size_t scratch_cap;
	uint32_t *chain;		/* graft(): a context's nodes */
	size_t chain_cap;
	struct infer_solution *tops;	/* explain_fragments(): a top's */
	size_t tops_cap;
	bool no_search;			/* infer__stop_searching() */
	struct infer_stats stats;
};

struct infer *infer__new(struct cct *t, const struct infer_limits *lim)
{
	struct infer *inf = calloc(1, sizeof(*inf));

	if (!inf)
		return NULL;
	inf->cct = t;
	if (lim)
		inf->lim = *lim;
	if (!inf->lim.max_edges)
		inf->lim.max_edges = DEFAULT_MAX_EDGES;
	if (inf->lim.max_edges > MAX_EDGES_LIMIT)
		inf->lim.max_edges = MAX_EDGES_LIMIT;
	if (!inf->lim.max_states)
		inf->lim.max_states = DEFAULT_MAX_STATES;
	if (!inf->lim.max_solutions)
		inf->lim.max_solutions = DEFAULT_MAX_SOLUTIONS;
	if (!inf->lim.max_guesses)
		inf->lim.max_guesses = DEFAULT_MAX_GUESSES;
	if (!inf->lim.confidence)
		inf->lim.confidence = DEFAULT_CONFIDENCE;
	if (inf->lim.confidence > 1)
		inf->lim.confidence = 1;
	return inf;
}

static void map_free(struct map *m)
{
	free(m->nodes);
	free(m->cids);
	free(m->cands);
	hindex__exit(&m->cid_index);
	free(m->edges);
	free(m->callees);
	hindex__exit(&m->callee_index);
	free(m->fnodes);
	hindex__exit(&m->fnode_index);
	free(m->by_caller);
	free(m->states);
	hindex__exit(&m->state_index);
	free(m->memos);
	hindex__exit(&m->memo_index);
	free(m->sols);
}

void infer__delete(struct infer *inf)
{
	if (!inf)
		return;
	for (size_t i = 0; i < inf->nmaps; i++)
		map_free(&inf->maps[i]);
	free(inf->maps);
	free(inf->scratch);
	free(inf->chain);
	free(inf->tops);
	free(inf);
}

static struct map *find_map(const struct infer *inf, int64_t program)
{
	for (size_t i = 0; i < inf->nmaps; i++)
		if (inf->maps[i].program == program)
			return &inf->maps[i];
	return NULL;
}

int infer__begin_map(struct infer *inf, int64_t program_id)
{
	if (inf->building || find_map(inf, program_id))
		return -EINVAL;
	if (grow(&inf->maps, &inf->maps_cap, inf->nmaps + 1,
		 sizeof(*inf->maps), 4))
		return -ENOMEM;
	inf->building = &inf->maps[inf->nmaps++];
	*inf->building = (struct map){ .program = program_id };
	return 0;
}

static void set_height(struct cct *t, uint32_t node, int64_t height)
{
	struct cct_node *cn = cct__node(t, node);

	if (!cn->height)
		cn->height = height;
}

static int unknown_node(struct infer *inf, int64_t func, int64_t height,
			uint32_t *node);

int infer__add_node(struct infer *inf, const struct infer_node *n)
{
	struct map *m = inf->building;
	uint32_t parent = CCT_ROOT, node;
	int ret;

	if (!m || n->parent >= (int64_t)m->nnodes || n->parent < -1)
		return -EINVAL;
	if (n->parent >= 0)
		parent = m->nodes[n->parent].cct;
	/* where a stack copy ended: its callers are unknown */
	ret = n->parent < 0 && n->fragment ?
	      unknown_node(inf, n->function_id, n->height, &node) :
	      cct__child(inf->cct, parent, n->function_id, &node);
	if (ret)
		return ret;
	cct__set_site(inf->cct, node, n->call_site, (double)n->total);
	set_height(inf->cct, node, n->height);
	if (n->context_id)
		cct__node(inf->cct, node)->ext = n->context_id;
	if (grow(&m->nodes, &m->nodes_cap, m->nnodes + 1, sizeof(*m->nodes),
		 1024))
		return -ENOMEM;
	m->nodes[m->nnodes++] = (struct mnode){ n->function_id, n->height,
		n->parent < 0 ? CCT_NONE : (uint32_t)n->parent, node, n->self,
		n->total, n->own > 0 ? n->own : 0, n->fragment };
	return 0;
}

static uint64_t cid_hash(int64_t func, int64_t height)
{
	return hindex__mix(hindex__mix(4, (uint64_t)func), (uint64_t)height);
}

static int cmp_mnode(const void *a, const void *b)
{
	const struct mnode *x = a, *y = b;

	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	if (x->height != y->height)
		return x->height < y->height ? -1 : 1;
	return x->cct < y->cct ? -1 : x->cct > y->cct;
}

/* Frames the contexts cur[0, n) share from the leaf up (at least the
 * leaf); @cur is scratch, walked up in place. */
static uint32_t shared_suffix(struct cct *t, uint32_t *cur, uint32_t n)
{
	uint32_t exact = 0;

	for (;;) {
		int64_t f = cct__node(t, cur[0])->frame;
		uint32_t i;

		if (cur[0] == CCT_ROOT)
			break;
		for (i = 1; i < n; i++)
			if (cur[i] == CCT_ROOT || cct__node(t, cur[i])->frame != f)
				break;
		if (i < n)
			break;
		exact++;
		for (i = 0; i < n; i++)
			cur[i] = cct__node(t, cur[i])->parent;
	}
	return exact ? exact : 1;
}

/* The same for candidates. */
static uint32_t cands_suffix(struct cct *t, const struct infer_cand *c,
			     uint32_t n)
{
	uint32_t *cur = malloc(n * sizeof(*cur)), exact;

	if (!cur)
		return 1;	/* the leaf is always shared */
	for (uint32_t i = 0; i < n; i++)
		cur[i] = c[i].node;
	exact = shared_suffix(t, cur, n);
	free(cur);
	return exact;
}

/* The split the map's counts give candidate @k of @n. */
static double map_share(const struct infer_cand *k, uint32_t n, double self,
			double total)
{
	return self > 0 ? k->self / self : total > 0 ? k->total / total :
	       1.0 / n;
}

/*
 * Each of the @n candidates @k of a CID its share: the map's split
 * (@self, @total: the candidates' learned samples), unless the samples
 * the inferred runs' own learning unwound (@own in all, each
 * candidate's in its share on entry) contradict it.  The map has more
 * samples, from every run; the run's own are of this run: a phase the
 * map saw otherwise (trained on one input, run on another) is told
 * from sampling noise by Pearson's statistic, over its mean plus four
 * standard deviations (df + 4 sqrt(2 df), a chance of about 1 in 500
 * when the run does split as the map does).  Then the run's own split
 * holds, the map weighing as RUN_PRIOR samples.  A candidate the map
 * never saw the run take is a contradiction too.
 */
static void weigh(struct infer_cand *k, uint32_t n, double self,
		  double total, double own)
{
	double x2 = 0, df = n > 1 ? n - 1 : 1;
	bool differs = false;

	for (uint32_t j = 0; own > 0 && j < n; j++) {
		double e = own * map_share(&k[j], n, self, total);

		if (e > 0)
			x2 += (k[j].share - e) * (k[j].share - e) / e;
		else
			differs |= k[j].share > 0;
	}
	differs |= x2 > df + 4 * sqrt(2 * df);
	for (uint32_t j = 0; j < n; j++) {
		double prior = map_share(&k[j], n, self, total);

		k[j].share = differs ? (k[j].share + RUN_PRIOR * prior) /
				       (own + RUN_PRIOR) : prior;
	}
}

static int build_cids(struct infer *inf, struct map *m)
{
	struct mnode *s = m->nodes;
	size_t i = 0;

	if (m->nnodes)	/* an empty map has no array */
		qsort(s, m->nnodes, sizeof(*s), cmp_mnode);
	m->cids = malloc((m->nnodes ? m->nnodes : 1) * sizeof(*m->cids));
	m->cands = malloc((m->nnodes ? m->nnodes : 1) * sizeof(*m->cands));
	if (!m->cids || !m->cands)
		return -ENOMEM;
	while (i < m->nnodes) {
		struct cid_entry *c = &m->cids[m->ncids];
		double self = 0, total = 0, own = 0;
		bool whole = false;

		/* Fragments are candidates only where no whole path is, as
		 * the height tells the paths that reach it.  With no height
		 * (a goroutine's function) it tells nothing: a deep call of
		 * the function has only fragments, a shallow one whole
		 * paths, and both are candidates. */
		bool mixed = s[i].height == ICPPD_HEIGHT_NONE, any = false;

		*c = (struct cid_entry){ s[i].func, s[i].height,
			(uint32_t)m->ncands, 0, 0, false };
		for (size_t j = i; j < m->nnodes && s[j].func == c->func &&
		     s[j].height == c->height && !whole; j++)
			whole = !s[j].fragment;
		for (; i < m->nnodes && s[i].func == c->func &&
		       s[i].height == c->height; i++) {
			struct infer_cand *k = &m->cands[m->ncands];

			if (!mixed && s[i].fragment == whole)
				continue;
			any |= s[i].fragment;
			/* the share holds the candidate's own samples
			 * until they are all summed */
			if (c->n && k[-1].node == s[i].cct) {
				k[-1].self += (double)s[i].self;
				k[-1].total += (double)s[i].total;
				k[-1].share += s[i].own;
				k[-1].own += s[i].fragment ? 0 : s[i].own;
			} else {
				*k = (struct infer_cand){ s[i].cct,
					(double)s[i].self, (double)s[i].total,
					s[i].own, s[i].fragment ? 0 : s[i].own,
					s[i].fragment };
				m->ncands++;
				c->n++;
			}
			self += (double)s[i].self;
			total += (double)s[i].total;
			own += s[i].own;
		}
		c->weighed = self > 0 || total > 0 || own > 0;
		c->fragment = !whole || any;
		weigh(&m->cands[c->first], c->n, self, total, own);
		c->exact = c->n == 1 ?
			cct__node(inf->cct, m->cands[c->first].node)->depth :
			cands_suffix(inf->cct, &m->cands[c->first], c->n);
		if (hindex__insert(&m->cid_index, cid_hash(c->func, c->height),
				   (uint32_t)m->ncids))
			return -ENOMEM;
		m->ncids++;
	}
	return 0;
}

static int cmp_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	if (x->callee != y->callee)
		return x->callee < y->callee ? -1 : 1;
	if (x->caller != y->caller)
		return x->caller < y->caller ? -1 : 1;
	return x->delta < y->delta ? -1 : x->delta > y->delta;
}

static double weight(const struct edge *e)
{
	return e->count + (e->proven ? PROVEN_PRIOR : 0);
}

/* The learned call graph: one edge per parent -> child of the map,
 * with the training samples that passed through it. */
static int learned_edges(struct map *m)
{
	for (size_t i = 0; i < m->nnodes; i++) {
		const struct mnode *c = &m->nodes[i], *p;

		if (c->parent == CCT_NONE)
			continue;
		p = &m->nodes[c->parent];
		/* frames with no height give no frame size to search by */
		if (c->height == ICPPD_HEIGHT_NONE ||
		    p->height == ICPPD_HEIGHT_NONE)
			continue;
		if (grow(&m->edges, &m->edges_cap, m->nedges + 1,
			 sizeof(*m->edges), 1024))
			return -ENOMEM;
		m->edges[m->nedges++] = (struct edge){ c->func, p->func,
			c->height - p->height, (double)c->total, false };
	}
	return 0;
}

static struct fnode *find_fnode(const struct map *m, int64_t func)
{
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint32_t i;

	while ((i = hindex__next(&m->fnode_index, &p,
				 hindex__mix(8, (uint64_t)func))) != HINDEX_NONE)
		if (m->fnodes[i].func == func)
			return &m->fnodes[i];
	return NULL;
}

static int add_fnode(struct map *m, int64_t func, size_t *cap)
{
	if (find_fnode(m, func))
		return 0;
	if (grow(&m->fnodes, cap, m->nfnodes + 1, sizeof(*m->fnodes), 1024) ||
	    hindex__insert(&m->fnode_index, hindex__mix(8, (uint64_t)func),
			   (uint32_t)m->nfnodes))
		return -ENOMEM;
	m->fnodes[m->nfnodes++] = (struct fnode){ func, NO_HEIGHT, 0, 0, false };
	return 0;
}

static int cmp_by_caller(const void *a, const void *b, void *arg)
{
	const struct edge *e = arg;
	int64_t x = e[*(const uint32_t *)a].caller;
	int64_t y = e[*(const uint32_t *)b].caller;

	return x < y ? -1 : x > y;
}

/* A binary heap of (height, fnode) for Dijkstra; stale entries are
 * skipped when popped. */
struct heap {
	struct hitem { int64_t h; uint32_t f; } *v;
	size_t n, cap;
};

static int heap_push(struct heap *q, int64_t h, uint32_t f)
{
	size_t i;

	if (grow(&q->v, &q->cap, q->n + 1, sizeof(*q->v), 1024))
		return -ENOMEM;
	for (i = q->n++; i && q->v[(i - 1) / 2].h > h; i = (i - 1) / 2)
		q->v[i] = q->v[(i - 1) / 2];
	q->v[i] = (struct hitem){ h, f };
	return 0;
}

static struct hitem heap_pop(struct heap *q)
{
	struct hitem top = q->v[0], last = q->v[--q->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= q->n)
			break;
		if (c + 1 < q->n && q->v[c + 1].h < q->v[c].h)
			c++;
		if (q->v[c].h >= last.h)
			break;
		q->v[i] = q->v[c];
		i = c;
	}
	if (q->n)
		q->v[i] = last;
	return top;
}

/*
 * Each function's lowest possible height: a known CID's height, or a
 * caller's lowest plus the edge's size, whichever is lower (Dijkstra:
 * sizes are positive).  A function no known CID reaches keeps
 * NO_HEIGHT, and a search never enters it.
 */
static int lowest_heights(struct map *m)
{
	struct heap q = { 0 };
	size_t cap = 0;
	int ret = 0;

	for (size_t i = 0; i < m->nedges && !ret; i++)
		ret = add_fnode(m, m->edges[i].caller, &cap) ||
		      add_fnode(m, m->edges[i].callee, &cap) ? -ENOMEM : 0;
	for (size_t i = 0; i < m->ncids && !ret; i++)
		ret = add_fnode(m, m->cids[i].func, &cap);
	m->by_caller = malloc((m->nedges ? m->nedges : 1) * sizeof(uint32_t));
	if (ret || !m->by_caller)
		return -ENOMEM;
	for (size_t i = 0; i < m->nedges; i++)
		m->by_caller[i] = (uint32_t)i;
	qsort_r(m->by_caller, m->nedges, sizeof(uint32_t), cmp_by_caller,
		m->edges);
	for (size_t i = 0; i < m->nedges;) {
		struct fnode *f = find_fnode(m, m->edges[m->by_caller[i]].caller);

		f->first = (uint32_t)i;
		while (i < m->nedges &&
		       m->edges[m->by_caller[i]].caller == f->func)
			i++;
		f->n = (uint32_t)i - f->first;
	}
	for (size_t i = 0; i < m->ncids && !ret; i++) {
		struct fnode *f = find_fnode(m, m->cids[i].func);

		f->known = true;
		if (m->cids[i].height != ICPPD_HEIGHT_NONE &&
		    m->cids[i].height < f->hmin) {
			f->hmin = m->cids[i].height;
			ret = heap_push(&q, f->hmin, (uint32_t)(f - m->fnodes));
		}
	}
	while (!ret && q.n) {
		struct hitem it = heap_pop(&q);
		const struct fnode *f = &m->fnodes[it.f];

		if (it.h != f->hmin)
			continue;
		for (uint32_t j = 0; j < f->n && !ret; j++) {
			const struct edge *e = &m->edges[m->by_caller[f->first + j]];
			struct fnode *to = find_fnode(m, e->callee);

			if (e->delta > 0 && it.h + e->delta < to->hmin) {
				to->hmin = it.h + e->delta;
				ret = heap_push(&q, to->hmin,
						(uint32_t)(to - m->fnodes));
			}
		}
	}
	free(q.v);
	return ret;
}

static int learned_first(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	return (y->count > 0) - (x->count > 0);
}

/*
 * The call graph's tables from m->edges (learned and proven, in any
 * order, repeats allowed): one edge per (caller, callee, size), grouped
 * by callee, and the lowest heights.  Searches made before are
 * forgotten: the graph they searched has changed.
 */
static int index_edges(struct map *m)
{
	int ret;
	size_t n = 0;

	m->dirty = false;
	free(m->callees);
	hindex__exit(&m->callee_index);
	free(m->fnodes);
	m->fnodes = NULL;
	m->nfnodes = 0;
	hindex__exit(&m->fnode_index);
	free(m->by_caller);
	m->by_caller = NULL;
	m->ncallees = m->nstates = m->nmemos = 0;
	hindex__clear(&m->state_index);
	hindex__clear(&m->memo_index);
	if (m->nedges)
		qsort(m->edges, m->nedges, sizeof(*m->edges), cmp_edge);
	for (size_t i = 0; i < m->nedges; i++) {
		struct edge *e = &m->edges[i];

		if (e->delta <= 0)	/* a crafted map: no chain ends */
			continue;
		if (n && m->edges[n - 1].callee == e->callee &&
		    m->edges[n - 1].caller == e->caller &&
		    m->edges[n - 1].delta == e->delta) {
			m->edges[n - 1].count += e->count;
			m->edges[n - 1].proven |= e->proven;
		} else {
			m->edges[n++] = *e;
		}
	}
	m->nedges = n;
	m->callees = malloc((n ? n : 1) * sizeof(*m->callees));
	if (!m->callees)
		return -ENOMEM;
	for (size_t i = 0; i < n;) {
		struct callee *c = &m->callees[m->ncallees];

		*c = (struct callee){ m->edges[i].callee, (uint32_t)i, 0, 0 };
		for (; i < n && m->edges[i].callee == c->func; i++) {
			c->sum += weight(&m->edges[i]);
			c->n++;
		}
		if (hindex__insert(&m->callee_index,
				   hindex__mix(5, (uint64_t)c->func),
				   (uint32_t)m->ncallees))
			return -ENOMEM;
		m->ncallees++;
	}
	ret = lowest_heights(m);
	for (size_t i = 0; !ret && i < m->nedges; i++) {
		const struct fnode *f = find_fnode(m, m->edges[i].caller);

		m->edges[i].caller_hmin = f ? f->hmin : NO_HEIGHT;
		m->edges[i].caller_known = f && f->known;
	}
	/* each callee's learned edges first: a chain out of guesses
	 * stops at its first edge only the binary shows */
	for (size_t i = 0; !ret && i < m->ncallees; i++)
		qsort(&m->edges[m->callees[i].first], m->callees[i].n,
		      sizeof(*m->edges), learned_first);
	return ret;
}

int infer__end_map(struct infer *inf)
{
	struct map *m = inf->building;
	int ret;

	if (!m)
		return -EINVAL;
	inf->building = NULL;
	/* edges need the nodes in their order (parent indexes); the CID
	 * table then sorts them in place */
	ret = learned_edges(m);
	if (!ret)
		ret = build_cids(inf, m);
	if (!ret)
		ret = index_edges(m);
	/* the tables hold all that lookups and searches need */
	free(m->nodes);
	m->nodes = NULL;
	m->nnodes = m->nodes_cap = 0;
	return ret;
}

int infer__add_call(struct infer *inf, int64_t program_id, int64_t caller,
		    int64_t callee, int64_t delta)
{
	struct map *m = find_map(inf, program_id);

	if (!m || m == inf->building || delta <= 0)
		return -EINVAL;
	if (grow(&m->edges, &m->edges_cap, m->nedges + 1, sizeof(*m->edges),
		 1024))
		return -ENOMEM;
	m->edges[m->nedges++] = (struct edge){ callee, caller, delta, 0, true };
	m->dirty = true;
	inf->stats.calls++;
	return 0;
}

static const struct cid_entry *find_cid(const struct map *m, int64_t func,
					int64_t height)
{
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint64_t h = cid_hash(func, height);
	uint32_t i;

	while ((i = hindex__next(&m->cid_index, &p, h)) != HINDEX_NONE)
		if (m->cids[i].func == func && m->cids[i].height == height)
			return &m->cids[i];
	return NULL;
}

size_t infer__lookup(const struct infer *inf, int64_t program_id,
		     int64_t func, int64_t height,
		     const struct infer_cand **c)
{
	const struct map *m = find_map(inf, program_id);
	const struct cid_entry *e = m ? find_cid(m, func, height) : NULL;

	if (!e)
		return 0;
	*c = &m->cands[e->first];
	return e->n;
}

static const struct callee *find_callee(const struct map *m, int64_t func)
{
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint64_t h = hindex__mix(5, (uint64_t)func);
	uint32_t i;

	while ((i = hindex__next(&m->callee_index, &p, h)) != HINDEX_NONE)
		if (m->callees[i].func == func)
			return &m->callees[i];
	return NULL;
}

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
	unsigned guesses;	/* allowed per chain: the listing's */
	bool cut;		/* a bound cut the search short */
	bool pruned;		/* the guess bound left chains out */
	bool guess;		/* a chain listed takes a call no learned
				 * path took: its weight is a prior */
	size_t first;		/* this search's solutions: m->sols[first..] */
	int err;
};

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
 * into the state bound, and a make report spent 20 s there.)
 */
static struct state count_chains(struct search *s, int64_t h,
				 unsigned depth, unsigned guesses)
{
	struct map *m = s->m;
	const struct infer_limits *lim = &s->inf->lim;
	const struct callee *c = find_callee(m, s->chain[depth]);
	const struct state *st = find_state(m, s->chain[depth], h, guesses);
	struct state r = { s->chain[depth], h, guesses, 0, 0, false, false };
	bool cut = s->cut, pruned = s->pruned;

	if (st) {
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
		const struct edge *e = &m->edges[c->first + i];
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
		if (e->caller_known && (k = find_cid(m, e->caller, up))) {
			r.chains += k->n;
			r.reach += weight(e) / c->sum;
		} else if (depth + 1 < lim->max_edges) {
			struct state above;

			s->chain[depth + 1] = e->caller;
			above = count_chains(s, up, depth + 1, (unsigned)g);
			r.chains += above.chains;
			r.reach += weight(e) / c->sum * above.reach;
		} else {
			s->cut = true;
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
		set_height(s->inf->cct, node, s->heights[j]);
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
	const struct callee *c = find_callee(m, it.func);
	uint32_t dive = UINT32_MAX;
	bool finished = false;

	b->v[i].expanded = true;
	for (uint32_t j = 0; c && j < c->n && !s->err; j++) {
		const struct edge *e = &m->edges[c->first + j];
		const struct cid_entry *k;
		const struct state *st;
		double pe = it.p * weight(e) / c->sum;
		int64_t up = it.height - e->delta;
		bool guess = it.guess || e->count <= 0;
		int g = guesses_after(e, it.guesses);

		if (g < 0)	/* and every edge after it: learned first */
			break;
		if (!feasible(m, e, up))
			continue;
		if (e->caller_known && (k = find_cid(m, e->caller, up))) {
			for (uint32_t a = 0; a < k->n && !s->err; a++) {
				const struct infer_cand *x =
					&m->cands[k->first + a];

				s->err = best_push(b, (struct bitem){ e->caller,
					up, i, x->node, it.depth, 0, false,
					guess, pe * x->share, pe * x->share });
			}
			finished = true;
		} else if (it.depth + 1 >= s->inf->lim.max_edges) {
			s->cut = true;
		} else if ((st = find_state(m, e->caller, up, (unsigned)g)) &&
			   st->chains > 0) {
			/* only where the count found chains (a state it did
			 * not reach, past its bound, is not listed: pushing
			 * every such caller of a callee with thousands made
			 * the listing's heap most of a report's time); one
			 * it cut short is bounded by the reach it found */
			double bound = pe * st->reach;

			s->err = best_push(b, (struct bitem){ e->caller, up, i,
				CCT_NONE, it.depth + 1, (unsigned)g, false,
				guess, pe, bound });
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
#define UNKNOWN_EXACT 2
static int unknown_node(struct infer *inf, int64_t func, int64_t height,
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
	mo->exact = shared_suffix(inf->cct, cur, mo->n);
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

static int cmp_solution(const void *a, const void *b)
{
	const struct infer_solution *x = a, *y = b;

	return x->node < y->node ? -1 : x->node > y->node;
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
	const struct callee *c = find_callee(m, callee);

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
	if (any) {
		qsort(v, n, sizeof(*v), cmp_solution);
		for (size_t i = 0; i < n; i++)
			if (k && v[k - 1].node == v[i].node)
				v[k - 1].share += v[i].share;
			else
				v[k++] = v[i];
	}
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
static int cut_outcome(struct infer *inf, const struct map *m,
		       struct infer_solution *v,
		       uint32_t *n, uint32_t *exact, enum cct_how how)
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

/* The memo entry of CID (func, height) in @m, made by a search if
 * needed; NULL on error. */
static const struct memo *search_memo(struct infer *inf, struct map *m,
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
	/* states are this search's: a table kept across searches grew to
	 * millions (cc1plus: 8M, 400 MB), and looking them up, a cache
	 * miss each, took a third of a report's time */
	m->nstates = 0;
	hindex__clear(&m->state_index);
	s.chain[0] = func;
	/* few guesses first (the common case, and cheap); all of them
	 * only when that finds no chain.  A CID with no height has no
	 * frame sizes to add up: nothing to search. */
	chains = height == ICPPD_HEIGHT_NONE ? 0 :
		 count_chains(&s, height, 0, inf->lim.max_guesses).chains;
	if (chains <= 0 && !s.err && height != ICPPD_HEIGHT_NONE &&
	    inf->lim.max_guesses < MAX_EDGES_LIMIT) {
		s.cut = s.pruned = false;
		s.guesses = MAX_EDGES_LIMIT;
		chains = count_chains(&s, height, 0, s.guesses).chains;
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
		if (s.guess && cut_outcome(inf, m, &m->sols[mo->first], &mo->n,
					   &mo->exact,
				mo->how))
			return NULL;
		m->nsols = mo->first + mo->n;	/* merged ones dropped */
	} else {
		mo->how = CCT_UNKNOWN;
		mo->exact = UNKNOWN_EXACT;
		if (unknown_node(inf, func, height, &i) ||
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
static struct infer_solution *scratch(struct infer *inf, size_t n)
{
	return grow(&inf->scratch, &inf->scratch_cap, n, sizeof(*inf->scratch),
		    16) ? NULL : inf->scratch;
}

static int graft_below(struct infer *inf, uint32_t node, uint32_t stop,
		       uint32_t under, uint32_t *out);

/* The explanation of CID (@func, @height) by whole paths or the search
 * (never by fragments) into inf->tops: how many; 0 when nothing but
 * unknown callers; -ENOMEM. */
static int explain_top(struct infer *inf, struct map *m, int64_t func,
		       int64_t height, bool *searched)
{
	const struct cid_entry *e = find_cid(m, func, height);
	const struct memo *mo;
	uint32_t n;

	if (e) {
		double sum = 0;

		if (grow(&inf->tops, &inf->tops_cap, e->n, sizeof(*inf->tops),
			 8))
			return -ENOMEM;
		n = 0;
		for (uint32_t i = 0; i < e->n; i++) {
			const struct infer_cand *k = &m->cands[e->first + i];

			if (k->fragment)
				continue;
			inf->tops[n] = (struct infer_solution){ k->node,
				e->n == 1 ? 1.0 : k->share };
			sum += inf->tops[n++].share;
		}
		for (uint32_t i = 0; i < n && sum > 0; i++)
			inf->tops[i].share /= sum;
		return (int)n;
	}
	if (inf->no_search)
		return 0;
	if (!(mo = search_memo(inf, m, func, height)))
		return -ENOMEM;
	if (mo->how == CCT_UNKNOWN)
		return 0;
	if (grow(&inf->tops, &inf->tops_cap, mo->n, sizeof(*inf->tops), 8))
		return -ENOMEM;
	memcpy(inf->tops, &m->sols[mo->first], mo->n * sizeof(*inf->tops));
	*searched = true;
	return (int)mo->n;
}

/* The frame a fragment's context @node starts with: the outermost one
 * the stack copy reached, under its unknown-callers frame. */
static uint32_t fragment_top(struct cct *t, uint32_t node)
{
	for (;;) {
		uint32_t up = cct__node(t, node)->parent;

		if (up == CCT_ROOT || cct__node(t, up)->frame < 0)
			return node;
		node = up;
	}
}

/*
 * A CID no whole path explains, only fragments (or, with no height,
 * fragments beside whole paths, which stay as they are): each fragment's
 * frames, certain, below the explanation of its top (the outermost
 * frame its copy reached: itself a CID, which the whole paths or the
 * search may explain); where nothing does, the fragment stays under
 * unknown callers.
 */
static int explain_fragments(struct infer *inf, struct map *m,
			     const struct cid_entry *e, bool counted,
			     struct infer_outcome *out)
{
	struct cct *t = inf->cct;
	struct infer_solution *acc = NULL;
	size_t n = 0, cap = 0;
	bool searched = false, grafted = false;
	uint32_t exact = UINT32_MAX;
	int ret = 0;

	for (uint32_t i = 0; i < e->n && !ret; i++) {
		const struct infer_cand *k = &m->cands[e->first + i];
		double share = e->n == 1 ? 1.0 : k->share;
		uint32_t top = fragment_top(t, k->node);
		const struct cct_node *tn = cct__node(t, top);
		int nt;

		if (!k->fragment) {	/* a whole path beside fragments */
			if (grow(&acc, &cap, n + 1, sizeof(*acc), 8)) {
				ret = -ENOMEM;
				break;
			}
			acc[n++] = (struct infer_solution){ k->node, share,
				counted ? k->own : 0 };
			continue;
		}
		nt = explain_top(inf, m, tn->frame, tn->height, &searched);

		if (nt < 0 || grow(&acc, &cap, n + (nt ? (size_t)nt : 1),
				   sizeof(*acc), 8)) {
			ret = -ENOMEM;
			break;
		}
		if (!nt)
			acc[n++] = (struct infer_solution){ k->node, share };
		for (int j = 0; j < nt && !ret; j++) {
			uint32_t node;

			ret = graft_below(inf, k->node, top, inf->tops[j].node,
					  &node);
			acc[n++] = (struct infer_solution){ node,
				share * inf->tops[j].share };
		}
		if (nt) {
			uint32_t own = cct__node(t, k->node)->depth -
				       cct__node(t, top)->depth + 1;

			exact = own < exact ? own : exact;
			grafted = true;
		}
	}
	if (!ret && !scratch(inf, n ? n : 1))
		ret = -ENOMEM;
	if (!ret) {
		memcpy(inf->scratch, acc, n * sizeof(*acc));
		*out = (struct infer_outcome){
			grafted && searched ? CCT_SEARCHED :
			n == 1 ? CCT_PRECISE : CCT_AMBIGUOUS,
			!grafted ? e->exact : n == 1 && !searched ?
			cct__node(t, inf->scratch[0].node)->depth : exact,
			n, inf->scratch };
	}
	free(acc);
	return ret;
}

void infer__stop_searching(struct infer *inf)
{
	inf->no_search = true;
}

/* infer__explain(); with @counted, each solution's @own holds the
 * runs' own samples of it (count_own() makes them shares). */
static int explain(struct infer *inf, int64_t program_id, int64_t func,
		   int64_t height, bool counted, struct infer_outcome *out)
{
	struct map *m = find_map(inf, program_id);
	const struct cid_entry *e;
	const struct memo *mo;
	struct infer_solution *v;
	uint32_t n;

	if (m && m->dirty && index_edges(m))
		return -ENOMEM;
	e = m ? find_cid(m, func, height) : NULL;
	if (e && e->fragment)
		return explain_fragments(inf, m, e, counted, out);
	if (e) {
		if (!(v = scratch(inf, e->n)))
			return -ENOMEM;
		for (uint32_t i = 0; i < e->n; i++) {
			const struct infer_cand *k = &m->cands[e->first + i];

			v[i] = (struct infer_solution){ k->node,
				e->n == 1 ? 1.0 : k->share,
				counted ? k->own : 0 };
		}
		*out = (struct infer_outcome){
			e->n == 1 ? CCT_PRECISE : CCT_AMBIGUOUS, e->exact,
			e->n, v };
		n = e->n;
		/* learned counts weigh the candidates: apportioned whole */
		if (!e->weighed &&
		    cut_outcome(inf, m, v, &n, &out->exact, out->how))
			return -ENOMEM;
		out->n = n;
		return 0;
	}
	if (!m)
		return infer__unknown(inf, func, height, out);
	mo = search_memo(inf, m, func, height);
	if (!mo)
		return -ENOMEM;
	*out = (struct infer_outcome){ mo->how, mo->exact, mo->n,
				       &m->sols[mo->first] };
	return 0;
}

int infer__explain(struct infer *inf, int64_t program_id, int64_t func,
		   int64_t height, struct infer_outcome *out)
{
	return explain(inf, program_id, func, height, false, out);
}

/*
 * The own samples in @o's solutions (explain() with counted) as shares
 * of the CID's @samples: each context gets its own samples and its
 * share of the rest.  The own may exceed @samples where a window's
 * runs were inferred apart (each run's are then at most all of it).
 */
static void count_own(struct infer_outcome *o, struct infer_solution *v,
		      double samples)
{
	double own = 0, all, rest;

	for (size_t i = 0; i < o->n; i++)
		own += v[i].own;
	if (own <= 0)
		return;
	all = samples > own ? samples : own;
	rest = all - own;
	for (size_t i = 0; i < o->n; i++) {
		v[i].share = (v[i].own + rest * v[i].share) / all;
		v[i].own /= all;
	}
}

int infer__explain_counted(struct infer *inf, int64_t program_id,
			   int64_t func, int64_t height, double samples,
			   struct infer_outcome *out)
{
	int ret = explain(inf, program_id, func, height, true, out);

	/* a search's solutions are the memo's, and own none */
	if (!ret && out->sols == inf->scratch)
		count_own(out, inf->scratch, samples);
	return ret;
}

/* The frames of context @node below node @stop, an ancestor of it,
 * under node @under (whose frame is @stop's), in *@out. */
static int graft_below(struct infer *inf, uint32_t node, uint32_t stop,
		       uint32_t under, uint32_t *out)
{
	struct cct *t = inf->cct;
	size_t n = 0;

	for (uint32_t x = node; x != stop && x != CCT_ROOT;
	     x = cct__node(t, x)->parent) {
		if (grow(&inf->chain, &inf->chain_cap, n + 1,
			 sizeof(*inf->chain), 64))
			return -ENOMEM;
		inf->chain[n++] = x;
	}
	for (*out = under; n-- > 0;) {
		uint32_t x = inf->chain[n], y;
		const struct cct_node *from;
		struct cct_node *to;

		if (cct__child(t, *out, cct__node(t, x)->frame, &y))
			return -ENOMEM;
		from = cct__node(t, x);
		cct__set_site(t, y, from->call_site, from->site_weight);
		to = cct__node(t, y);
		to->height = from->height;
		*out = y;
	}
	return 0;
}

/* The node with the frames of context @node below node @under, in
 * *@out (@node itself under the root).  Iterative: a path map can be
 * deeper than any stack.  0 or -ENOMEM. */
static int graft(struct infer *inf, uint32_t node, uint32_t under,
		 uint32_t *out)
{
	*out = node;
	return under == CCT_ROOT ? 0 :
	       graft_below(inf, node, CCT_ROOT, under, out);
}

int infer__unknown(struct infer *inf, int64_t func, int64_t height,
		   struct infer_outcome *out)
{
	struct infer_solution *v = scratch(inf, 1);

	if (!v || unknown_node(inf, func, height, &v[0].node))
		return -ENOMEM;
	v[0].share = 1.0;
	*out = (struct infer_outcome){ CCT_UNKNOWN, UNKNOWN_EXACT, 1, v };
	return 0;
}

/* Solution @v's share of @samples into CCT node @node: its own part
 * as precise, every frame of its context certain, the rest as @o says
 * (@below: one frame more below it). */
static int add_own(struct infer *inf, uint32_t node,
		   const struct infer_outcome *o,
		   const struct infer_solution *v, uint32_t below,
		   double samples)
{
	double own = v->own > 0 && o->how != CCT_PRECISE ?
		     (v->own < v->share ? v->own : v->share) : 0;
	int ret = 0;

	if (own > 0) {
		ret = cct__add(inf->cct, node,
			       cct__node(inf->cct, v->node)->depth + below,
			       CCT_PRECISE, samples * own);
		inf->stats.by_how[CCT_PRECISE] += samples * own;
		inf->stats.by_how[o->how] -= samples * own;
	}
	if (!ret && v->share > own)
		ret = cct__add(inf->cct, node, o->exact + below, o->how,
			       samples * (v->share - own));
	return ret;
}

int infer__add_outcome_chain(struct infer *inf, uint32_t under,
			     const int64_t *below, size_t nbelow,
			     const struct infer_outcome *o, double samples)
{
	int ret = 0;

	inf->stats.cids++;
	inf->stats.samples += samples;
	inf->stats.by_how[o->how] += samples;
	for (size_t i = 0; i < o->n && !ret; i++) {
		uint32_t node;

		ret = graft(inf, o->sols[i].node, under, &node);
		for (size_t j = 0; j < nbelow && !ret; j++)
			ret = cct__child(inf->cct, node, below[j], &node);
		if (!ret)
			ret = add_own(inf, node, o, &o->sols[i],
				      (uint32_t)nbelow, samples);
	}
	return ret;
}

int infer__add_outcome(struct infer *inf, uint32_t under, int64_t below,
		       const struct infer_outcome *o, double samples)
{
	return infer__add_outcome_chain(inf, under, &below, below != 0, o,
					samples);
}

int infer__cid_under(struct infer *inf, uint32_t under, int64_t below,
		     int64_t program_id, int64_t func, int64_t height,
		     double samples)
{
	struct infer_outcome o;
	int ret = infer__explain(inf, program_id, func, height, &o);

	if (ret) {
		inf->stats.cids++;
		inf->stats.samples += samples;
		return ret;
	}
	return infer__add_outcome(inf, under, below, &o, samples);
}

int infer__cid(struct infer *inf, int64_t program_id, int64_t func,
	       int64_t height, double samples)
{
	return infer__cid_under(inf, CCT_ROOT, 0, program_id, func, height,
				samples);
}

const struct infer_stats *infer__stats(const struct infer *inf)
{
	return &inf->stats;
}
