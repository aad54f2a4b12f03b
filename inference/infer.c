/*
 * infer.c - the inference engine (see infer.h for the rules).
 *
 * Per program: the map's nodes, then tables built once by
 * infer__end_map() from sorted copies - CIDs with their candidate
 * ranges, and call-graph edges grouped by callee - and the memos of
 * searches.  A lookup is one hash probe and a compare of (function,
 * height).  Calls the binary proves (infer__add_call) join the edges
 * when the next CID is attributed; the memos start afresh then.
 * The search for a CID no map explains is infer_search.c's;
 * infer_int.h is what the two share.
 */
#define _GNU_SOURCE
#include "inference/infer_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/radix.h"
#include "common/search.h"

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
	free(m->tails);
	free(m->isites);
	free(m->taken);
	free(m->anchors);
	free(m->observed);
	hindex__exit(&m->observed_index);
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

void infer__set_height(struct cct *t, uint32_t node, int64_t height)
{
	struct cct_node *cn = cct__node(t, node);

	if (!cn->height)
		cn->height = height;
}

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
	      infer__unknown_node(inf, n->function_id, n->height, &node) :
	      cct__child(inf->cct, parent, n->function_id, &node);
	if (ret)
		return ret;
	cct__set_site(inf->cct, node, n->call_site, (double)n->total);
	infer__set_height(inf->cct, node, n->height);
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
uint32_t infer__shared_suffix(struct cct *t, uint32_t *cur, uint32_t n)
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
	exact = infer__shared_suffix(t, cur, n);
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

double infer__edge_weight(const struct edge *e)
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
		m->edges[m->nedges++] = (struct edge){ .callee = c->func,
			.caller = p->func, .delta = c->height - p->height,
			.count = (double)c->total };
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

/* @m's edge indexes by caller into m->by_caller: by radix over (caller,
 * index) pairs, qsort_r() where memory is short (sorting the indexes
 * with a compare call each was a tenth of a report of clang++, whose
 * libraries' calls make 1.5 million edges). */
static void by_caller(struct map *m)
{
	struct pair {
		int64_t caller;
		uint64_t i;
	} *v = malloc((m->nedges ? m->nedges : 1) * sizeof(*v));

	for (size_t i = 0; v && i < m->nedges; i++)
		v[i] = (struct pair){ m->edges[i].caller, i };
	if (v && !radix__sort(v, m->nedges, sizeof(*v),
			      offsetof(struct pair, caller), true)) {
		for (size_t i = 0; i < m->nedges; i++)
			m->by_caller[i] = (uint32_t)v[i].i;
	} else {
		for (size_t i = 0; i < m->nedges; i++)
			m->by_caller[i] = (uint32_t)i;
		qsort_r(m->by_caller, m->nedges, sizeof(uint32_t),
			cmp_by_caller, m->edges);
	}
	free(v);
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
	for (size_t i = 0; i < m->ntaken && !ret; i++)
		ret = add_fnode(m, m->taken[i], &cap);
	m->by_caller = malloc((m->nedges ? m->nedges : 1) * sizeof(uint32_t));
	if (ret || !m->by_caller)
		return -ENOMEM;
	by_caller(m);
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
	/* a taken function may be called through a pointer from any
	 * known CID that makes indirect calls: as high as the lowest
	 * anchor */
	for (size_t i = 0; m->nanchors && i < m->ntaken && !ret; i++) {
		struct fnode *f = find_fnode(m, m->taken[i]);

		if (m->anchors[0].height < f->hmin) {
			f->hmin = m->anchors[0].height;
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

static int cmp_tail(const void *a, const void *b)
{
	const struct tail *x = a, *y = b;

	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

/*
 * The calls tail calls make: each edge into a function that ends in a
 * jump to another is an edge into that one too, with the same frame
 * size, a proven one (no sample says the jump was taken); TAIL_DEPTH
 * rounds, each over the edges the one before made, for tail calls of
 * tail calls.  Repeats merge in index_edges().  The tails are sorted,
 * not the edges: sorting the edges to find each jumper's doubled what
 * indexing cc1plus's graph cost.
 */
static int derive_tails(struct map *m)
{
	size_t from = 0;

	if (!m->ntails)
		return 0;
	qsort(m->tails, m->ntails, sizeof(*m->tails), cmp_tail);
	for (unsigned round = 0; round < TAIL_DEPTH; round++) {
		size_t end = m->nedges;

		for (size_t i = from; i < end; i++) {
			const struct edge e = m->edges[i];
			size_t t = LOWER_BOUND((size_t)0, m->ntails, k,
					       m->tails[k].from < e.callee);

			for (; t < m->ntails && m->tails[t].from == e.callee;
			     t++) {
				if (grow(&m->edges, &m->edges_cap,
					 m->nedges + 1, sizeof(*m->edges),
					 1024))
					return -ENOMEM;
				m->edges[m->nedges++] = (struct edge){
					.callee = m->tails[t].to,
					.caller = e.caller, .delta = e.delta,
					.proven = true };
			}
		}
		if (m->nedges == end)
			break;
		from = end;
	}
	return 0;
}

/*
 * Sorts @m's edges as cmp_edge() orders them (callee, caller, size), by
 * radix (common/radix.h): qsort took 0.16 s of a trickle record's
 * report for cc1plus's 254,000 edges.  Out of memory, qsort() does it.
 */
static void sort_edges(struct map *m)
{
	size_t n = m->nedges, z = sizeof(*m->edges);

	if (radix__sort(m->edges, n, z, offsetof(struct edge, delta), true) ||
	    radix__sort(m->edges, n, z, offsetof(struct edge, caller), true) ||
	    radix__sort(m->edges, n, z, offsetof(struct edge, callee), true))
		qsort(m->edges, n, z, cmp_edge);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int cmp_isite(const void *a, const void *b)
{
	const struct isite *x = a, *y = b;

	if (x->caller != y->caller)
		return x->caller < y->caller ? -1 : 1;
	return (x->delta > y->delta) - (x->delta < y->delta);
}

static int cmp_anchor(const void *a, const void *b)
{
	const struct anchor *x = a, *y = b;

	return (x->height > y->height) - (x->height < y->height);
}

/* Sorts @v (@n items of @size) and drops repeats; how many are left. */
static size_t sort_unique(void *v, size_t n, size_t size,
			  int (*cmp)(const void *, const void *))
{
	char *b = v;
	size_t k = 0;

	if (!n)
		return 0;
	qsort(v, n, size, cmp);
	for (size_t i = 0; i < n; i++)
		if (!k || cmp(b + (k - 1) * size, b + i * size))
			memmove(b + k++ * size, b + i * size, size);
	return k;
}

/* Whether @func is among the first @n taken functions (sorted). */
static bool taken_in(const struct map *m, size_t n, int64_t func)
{
	return n && bsearch(&func, m->taken, n, sizeof(*m->taken), cmp_i64);
}

/*
 * The taken functions, sorted, and those a taken one's tail call
 * reaches (TAIL_DEPTH deep): a vtable's entry is often a thunk that
 * jumps to the function doing the work (cc1plus's passes' execute()),
 * which so stands right under the indirect call.
 */
static int index_taken(struct map *m)
{
	for (unsigned round = 0; round < TAIL_DEPTH; round++) {
		size_t n = m->ntaken = sort_unique(m->taken, m->ntaken,
						   sizeof(*m->taken), cmp_i64);

		for (size_t t = 0; t < m->ntails; t++) {
			if (!taken_in(m, n, m->tails[t].from) ||
			    taken_in(m, n, m->tails[t].to))
				continue;
			if (grow(&m->taken, &m->taken_cap, m->ntaken + 1,
				 sizeof(*m->taken), 256))
				return -ENOMEM;
			m->taken[m->ntaken++] = m->tails[t].to;
		}
		if (m->ntaken == n)
			break;
	}
	m->ntaken = sort_unique(m->taken, m->ntaken, sizeof(*m->taken),
				cmp_i64);
	return 0;
}

/*
 * The anchors: for each known CID whose function makes indirect calls,
 * where each (of its first ANCHOR_DELTAS_MAX heights) puts the callee,
 * sorted by that height.
 */
static int index_anchors(struct map *m)
{
	size_t cap = 0;

	free(m->anchors);
	m->anchors = NULL;
	m->nanchors = 0;
	m->nisites = sort_unique(m->isites, m->nisites, sizeof(*m->isites),
				 cmp_isite);
	if (!m->nisites)
		return 0;
	for (size_t i = 0; i < m->ncids; i++) {
		const struct cid_entry *k = &m->cids[i];
		size_t s = LOWER_BOUND((size_t)0, m->nisites, j,
				       m->isites[j].caller < k->func);
		double w = 0;

		if (!k->n || k->height == ICPPD_HEIGHT_NONE ||
		    s == m->nisites || m->isites[s].caller != k->func)
			continue;
		for (uint32_t a = 0; a < k->n; a++)
			w += m->cands[k->first + a].total;
		for (size_t j = s; j < m->nisites && j < s + ANCHOR_DELTAS_MAX &&
		     m->isites[j].caller == k->func; j++) {
			if (grow(&m->anchors, &cap, m->nanchors + 1,
				 sizeof(*m->anchors), 1024))
				return -ENOMEM;
			m->anchors[m->nanchors++] = (struct anchor){
				k->height + m->isites[j].delta, k->func,
				k->height, w > 0 ? w : 1 };
		}
	}
	if (m->nanchors)
		qsort(m->anchors, m->nanchors, sizeof(*m->anchors),
		      cmp_anchor);
	return 0;
}

size_t infer__anchors_at(const struct map *m, int64_t height,
			 const struct anchor **a)
{
	size_t lo = LOWER_BOUND((size_t)0, m->nanchors, i,
				m->anchors[i].height < height), hi = lo;

	while (hi < m->nanchors && m->anchors[hi].height == height)
		hi++;
	*a = &m->anchors[lo];
	return hi - lo;
}

const struct callee *infer__find_callee(const struct map *m, int64_t func)
{
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint64_t h = hindex__mix(5, (uint64_t)func);
	uint32_t i;

	while ((i = hindex__next(&m->callee_index, &p, h)) != HINDEX_NONE)
		if (m->callees[i].func == func)
			return &m->callees[i];
	return NULL;
}

/* Marks each taken callee, and gives each taken function no edge
 * reaches a callee of its own (edges none): only indirect calls reach
 * it.  Only where the program makes indirect calls. */
static int taken_callees(struct map *m)
{
	size_t n = m->ncallees;

	if (!m->nanchors)
		return 0;
	for (size_t i = 0; i < n; i++) {
		struct callee *c = &m->callees[i];

		if (taken_in(m, m->ntaken, c->func)) {
			c->taken = true;
			c->sum += INDIRECT_PRIOR;
		}
	}
	for (size_t i = 0; i < m->ntaken; i++) {
		if (infer__find_callee(m, m->taken[i]))
			continue;
		m->callees[m->ncallees] = (struct callee){ m->taken[i],
			(uint32_t)m->nedges, 0, INDIRECT_PRIOR, true };
		if (hindex__insert(&m->callee_index,
				   hindex__mix(5, (uint64_t)m->taken[i]),
				   (uint32_t)m->ncallees))
			return -ENOMEM;
		m->ncallees++;
	}
	return 0;
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
	if (derive_tails(m) || index_taken(m) || index_anchors(m))
		return -ENOMEM;
	sort_edges(m);
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
	m->callees = malloc((n + m->ntaken + 1) * sizeof(*m->callees));
	if (!m->callees)
		return -ENOMEM;
	for (size_t i = 0; i < n;) {
		struct callee *c = &m->callees[m->ncallees];

		*c = (struct callee){ m->edges[i].callee, (uint32_t)i, 0, 0,
				      false };
		for (; i < n && m->edges[i].callee == c->func; i++) {
			c->sum += infer__edge_weight(&m->edges[i]);
			c->n++;
		}
		if (hindex__insert(&m->callee_index,
				   hindex__mix(5, (uint64_t)c->func),
				   (uint32_t)m->ncallees))
			return -ENOMEM;
		m->ncallees++;
	}
	ret = taken_callees(m);
	if (!ret)
		ret = lowest_heights(m);
	for (size_t i = 0; !ret && i < m->nedges; i++) {
		struct edge *e = &m->edges[i];
		const struct fnode *f = find_fnode(m, e->caller);

		e->caller_hmin = f ? f->hmin : NO_HEIGHT;
		e->caller_known = f && f->known;
		/* looked up by the search, the first time it needs it: a
		 * report that searches a few CIDs needs few of them */
		e->caller_callee = CALLEE_UNKNOWN;
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

int infer__index_calls(struct infer *inf)
{
	for (size_t i = 0; i < inf->nmaps; i++)
		if (inf->maps[i].dirty && index_edges(&inf->maps[i]))
			return -ENOMEM;
	return 0;
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
	m->edges[m->nedges++] = (struct edge){ .callee = callee,
		.caller = caller, .delta = delta, .proven = true };
	m->dirty = true;
	inf->stats.calls++;
	return 0;
}

int infer__add_tail(struct infer *inf, int64_t program_id, int64_t from,
		    int64_t callee)
{
	struct map *m = find_map(inf, program_id);

	if (!m || m == inf->building || from == callee)
		return -EINVAL;
	if (grow(&m->tails, &m->tails_cap, m->ntails + 1, sizeof(*m->tails),
		 256))
		return -ENOMEM;
	m->tails[m->ntails++] = (struct tail){ from, callee };
	m->dirty = true;
	inf->stats.calls++;
	return 0;
}

int infer__add_indirect(struct infer *inf, int64_t program_id,
			int64_t caller, int64_t delta)
{
	struct map *m = find_map(inf, program_id);

	if (!m || m == inf->building || delta <= 0)
		return -EINVAL;
	if (grow(&m->isites, &m->isites_cap, m->nisites + 1,
		 sizeof(*m->isites), 256))
		return -ENOMEM;
	m->isites[m->nisites++] = (struct isite){ caller, delta };
	m->dirty = true;
	inf->stats.calls++;
	return 0;
}

int infer__add_taken(struct infer *inf, int64_t program_id, int64_t func)
{
	struct map *m = find_map(inf, program_id);

	if (!m || m == inf->building)
		return -EINVAL;
	if (grow(&m->taken, &m->taken_cap, m->ntaken + 1, sizeof(*m->taken),
		 256))
		return -ENOMEM;
	m->taken[m->ntaken++] = func;
	m->dirty = true;
	return 0;
}

double infer__observed(const struct map *m, int64_t func, int64_t height)
{
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint32_t i;

	if (!m->nobserved)	/* a search's every step asks */
		return 1;
	while ((i = hindex__next(&m->observed_index, &p,
				 cid_hash(func, height))) != HINDEX_NONE)
		if (m->observed[i].func == func &&
		    m->observed[i].height == height)
			return OBSERVED_BOOST;
	return 1;
}

int infer__observe(struct infer *inf, int64_t program_id, int64_t func,
		   int64_t height)
{
	struct map *m = find_map(inf, program_id);

	if (!m || m == inf->building)
		return -EINVAL;
	if (height == ICPPD_HEIGHT_NONE ||
	    infer__observed(m, func, height) > 1)
		return 0;
	if (grow(&m->observed, &m->observed_cap, m->nobserved + 1,
		 sizeof(*m->observed), 256) ||
	    hindex__insert(&m->observed_index, cid_hash(func, height),
			   (uint32_t)m->nobserved))
		return -ENOMEM;
	m->observed[m->nobserved++] = (struct cid_key){ func, height };
	return 0;
}

const struct cid_entry *infer__find_cid(const struct map *m, int64_t func,
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
	const struct cid_entry *e = m ? infer__find_cid(m, func, height) : NULL;

	if (!e)
		return 0;
	*c = &m->cands[e->first];
	return e->n;
}

struct infer_solution *infer__scratch(struct infer *inf, size_t n)
{
	return grow(&inf->scratch, &inf->scratch_cap, n, sizeof(*inf->scratch),
		    16) ? NULL : inf->scratch;
}

static int cmp_solution(const void *a, const void *b)
{
	const struct infer_solution *x = a, *y = b;

	return x->node < y->node ? -1 : x->node > y->node;
}

size_t infer__merge_solutions(struct infer_solution *v, size_t n)
{
	size_t k = 0;

	qsort(v, n, sizeof(*v), cmp_solution);
	for (size_t i = 0; i < n; i++)
		if (k && v[k - 1].node == v[i].node)
			v[k - 1].share += v[i].share;
		else
			v[k++] = v[i];
	return k;
}

int infer__searched(struct infer *inf, struct infer_solution *v, size_t n,
		    struct infer_outcome *out)
{
	struct infer_solution *sols;
	size_t k = infer__merge_solutions(v, n);
	double sum = 0;

	for (size_t i = 0; i < k; i++)
		sum += v[i].share;
	if (sum <= 0)	/* no weight at all (none learned): none fits */
		return 0;
	if (!(sols = infer__scratch(inf, k)))
		return -ENOMEM;
	for (size_t i = 0; i < k; i++)
		sols[i] = (struct infer_solution){ v[i].node, v[i].share / sum,
						   0 };
	*out = (struct infer_outcome){ CCT_SEARCHED, 1, k, sols };
	return 1;
}

/* A CID no path explains, by the calls into its function from a known
 * CID (infer_search.c), else by its function's shapes (infer_shapes.c):
 * 1 with *@out set, 0 when neither explains it, or -ENOMEM. */
static int explain_near(struct infer *inf, struct map *m, int64_t func,
			int64_t height, struct infer_outcome *out)
{
	int ret;

	if (inf->lim.search_only)
		return 0;
	ret = infer__explain_callers(inf, m, func, height, out);
	return ret ? ret : infer__explain_shapes(inf, m, func, height, out);
}

/* The explanation of CID (@func, @height) by whole paths, shapes or the
 * search (never by fragments) into inf->tops: how many; 0 when nothing
 * but unknown callers; -ENOMEM. */
int infer__explain_top(struct infer *inf, struct map *m, int64_t func,
		       int64_t height, bool *searched)
{
	const struct cid_entry *e = infer__find_cid(m, func, height);
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
		if (n)
			return (int)n;
	}
	/* no whole path: a fragment's top is one of its own fragments'
	 * CIDs, explained as a CID no path explains is */
	{
		struct infer_outcome o;
		int ret = explain_near(inf, m, func, height, &o);

		if (ret < 0 || (ret && grow(&inf->tops, &inf->tops_cap, o.n,
					    sizeof(*inf->tops), 8)))
			return -ENOMEM;
		if (ret) {
			memcpy(inf->tops, o.sols, o.n * sizeof(*inf->tops));
			*searched = true;
			return (int)o.n;
		}
	}
	if (inf->no_search)
		return 0;
	if (!(mo = infer__search_memo(inf, m, func, height)))
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
		nt = infer__explain_top(inf, m, tn->frame, tn->height, &searched);

		if (nt < 0 || grow(&acc, &cap, n + (nt ? (size_t)nt : 1),
				   sizeof(*acc), 8)) {
			ret = -ENOMEM;
			break;
		}
		if (!nt)
			acc[n++] = (struct infer_solution){ k->node, share };
		for (int j = 0; j < nt && !ret; j++) {
			uint32_t node;

			ret = infer__graft_below(inf, k->node, top, inf->tops[j].node,
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
	if (!ret && !infer__scratch(inf, n ? n : 1))
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
	e = m ? infer__find_cid(m, func, height) : NULL;
	if (e && e->fragment)
		return explain_fragments(inf, m, e, counted, out);
	if (e) {
		if (!(v = infer__scratch(inf, e->n)))
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
		    infer__cut_outcome(inf, m, v, &n, &out->exact, out->how))
			return -ENOMEM;
		out->n = n;
		return 0;
	}
	if (!m)
		return infer__unknown(inf, func, height, out);
	/* the calls into it from a known CID, else the shapes its
	 * function was learned in: chains the search could list, weighed
	 * by what was seen; the search where neither explains it */
	{
		int ret = explain_near(inf, m, func, height, out);

		if (ret)
			return ret < 0 ? ret : 0;
	}
	mo = infer__search_memo(inf, m, func, height);
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
int infer__graft_below(struct infer *inf, uint32_t node, uint32_t stop,
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
	       infer__graft_below(inf, node, CCT_ROOT, under, out);
}

int infer__unknown(struct infer *inf, int64_t func, int64_t height,
		   struct infer_outcome *out)
{
	struct infer_solution *v = infer__scratch(inf, 1);

	if (!v || infer__unknown_node(inf, func, height, &v[0].node))
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
