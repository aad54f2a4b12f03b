/*
 * infer.c - the inference engine (see infer.h for the rules).
 *
 * Per program: the map's nodes, then three tables built once by
 * infer__end_map() from sorted copies - CIDs with their candidate
 * ranges, call-graph edges grouped by callee, and the memo of searches.
 * A lookup is one hash probe and a compare of (function, height).
 */
#include "inference/infer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

#define DEFAULT_MAX_EDGES 6
#define DEFAULT_MAX_STATES 4096
#define DEFAULT_MAX_SOLUTIONS 64
#define MAX_EDGES_LIMIT 32

struct mnode {
	int64_t func, height;
	uint32_t parent;	/* map node index; CCT_NONE: outermost */
	uint32_t cct;
	uint64_t self, total;
};

struct cid_entry {
	int64_t func, height;
	uint32_t first, n;	/* range of cands */
	uint32_t exact;		/* frames the candidates share */
};

struct edge {
	int64_t callee, caller, delta;
	double count;
};

struct callee {
	int64_t func;
	uint32_t first, n;	/* range of edges */
	double sum;
};

struct solution {
	uint32_t node;
	double share;
};

struct memo {
	int64_t func, height;
	uint32_t first, n;	/* range of sols */
	enum cct_how how;
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
	size_t nedges;
	struct callee *callees;
	size_t ncallees;
	struct hindex callee_index;
	struct memo *memos;
	size_t nmemos, memos_cap;
	struct hindex memo_index;
	struct solution *sols;
	size_t nsols, sols_cap;
};

struct infer {
	struct cct *cct;
	struct infer_limits lim;
	struct map *maps;
	size_t nmaps, maps_cap;
	struct map *building;
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
	return inf;
}

static void map_free(struct map *m)
{
	free(m->nodes);
	free(m->cids);
	free(m->cands);
	hindex__free(&m->cid_index);
	free(m->edges);
	free(m->callees);
	hindex__free(&m->callee_index);
	free(m->memos);
	hindex__free(&m->memo_index);
	free(m->sols);
}

void infer__free(struct infer *inf)
{
	if (!inf)
		return;
	for (size_t i = 0; i < inf->nmaps; i++)
		map_free(&inf->maps[i]);
	free(inf->maps);
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

int infer__add_node(struct infer *inf, const struct infer_node *n)
{
	struct map *m = inf->building;
	uint32_t parent = CCT_ROOT, node;
	int ret;

	if (!m || n->parent >= (int64_t)m->nnodes || n->parent < -1)
		return -EINVAL;
	if (n->parent >= 0)
		parent = m->nodes[n->parent].cct;
	ret = cct__child(inf->cct, parent, n->function_id, &node);
	if (ret)
		return ret;
	cct__set_site(inf->cct, node, n->call_site, (double)n->total);
	if (n->context_id)
		cct__node(inf->cct, node)->ext = n->context_id;
	if (grow(&m->nodes, &m->nodes_cap, m->nnodes + 1, sizeof(*m->nodes),
		 1024))
		return -ENOMEM;
	m->nodes[m->nnodes++] = (struct mnode){ n->function_id, n->height,
		n->parent < 0 ? CCT_NONE : (uint32_t)n->parent, node, n->self,
		n->total };
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

/* Frames the candidates cands[0, n) share from the leaf up. */
static uint32_t shared_suffix(struct cct *t, const struct infer_cand *c,
			      uint32_t n)
{
	uint32_t *cur = malloc(n * sizeof(*cur)), exact = 0;

	if (!cur)
		return 1;	/* the leaf is always shared */
	for (uint32_t i = 0; i < n; i++)
		cur[i] = c[i].node;
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
	free(cur);
	return exact ? exact : 1;
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
		double self = 0, total = 0;

		*c = (struct cid_entry){ s[i].func, s[i].height,
			(uint32_t)m->ncands, 0, 0 };
		for (; i < m->nnodes && s[i].func == c->func &&
		       s[i].height == c->height; i++) {
			struct infer_cand *k = &m->cands[m->ncands];

			if (c->n && k[-1].node == s[i].cct) {
				k[-1].self += (double)s[i].self;
				k[-1].total += (double)s[i].total;
			} else {
				*k = (struct infer_cand){ s[i].cct,
					(double)s[i].self, (double)s[i].total, 0 };
				m->ncands++;
				c->n++;
			}
			self += (double)s[i].self;
			total += (double)s[i].total;
		}
		for (uint32_t j = 0; j < c->n; j++) {
			struct infer_cand *k = &m->cands[c->first + j];

			k->share = self > 0 ? k->self / self :
				   total > 0 ? k->total / total : 1.0 / c->n;
		}
		c->exact = c->n == 1 ?
			cct__node(inf->cct, m->cands[c->first].node)->depth :
			shared_suffix(inf->cct, &m->cands[c->first], c->n);
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

/* The call graph: one edge per (caller, callee, frame size) with the
 * training samples that passed through it. */
static int build_edges(struct map *m)
{
	size_t n = 0;

	m->edges = malloc((m->nnodes ? m->nnodes : 1) * sizeof(*m->edges));
	if (!m->edges)
		return -ENOMEM;
	for (size_t i = 0; i < m->nnodes; i++) {
		const struct mnode *c = &m->nodes[i], *p;

		if (c->parent == CCT_NONE)
			continue;
		p = &m->nodes[c->parent];
		m->edges[n++] = (struct edge){ c->func, p->func,
			c->height - p->height, (double)c->total };
	}
	qsort(m->edges, n, sizeof(*m->edges), cmp_edge);
	m->callees = malloc((n ? n : 1) * sizeof(*m->callees));
	if (!m->callees)
		return -ENOMEM;
	for (size_t i = 0; i < n;) {
		struct callee *c = &m->callees[m->ncallees];
		size_t first = m->nedges;

		*c = (struct callee){ m->edges[i].callee, (uint32_t)first, 0, 0 };
		for (; i < n && m->edges[i].callee == c->func; i++) {
			struct edge *e = &m->edges[m->nedges];

			if (m->nedges > first && e[-1].caller == m->edges[i].caller &&
			    e[-1].delta == m->edges[i].delta) {
				e[-1].count += m->edges[i].count;
			} else {
				*e = m->edges[i];
				m->nedges++;
			}
			c->sum += m->edges[i].count;
		}
		c->n = (uint32_t)(m->nedges - first);
		if (hindex__insert(&m->callee_index,
				   hindex__mix(5, (uint64_t)c->func),
				   (uint32_t)m->ncallees))
			return -ENOMEM;
		m->ncallees++;
	}
	return 0;
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
	ret = build_edges(m);
	if (!ret)
		ret = build_cids(inf, m);
	/* the tables hold all that lookups and searches need */
	free(m->nodes);
	m->nodes = NULL;
	m->nnodes = m->nodes_cap = 0;
	return ret;
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

/* One search: the chain below the current state, from the leaf up. */
struct search {
	struct infer *inf;
	struct map *m;
	int64_t chain[MAX_EDGES_LIMIT + 1];
	unsigned states;
	size_t first;		/* this search's solutions: m->sols[first..] */
	int err;
};

/* A solution: the anchor context, then chain[depth] ... chain[0]. */
static void add_solution(struct search *s, uint32_t anchor, unsigned depth,
			 double weight)
{
	struct map *m = s->m;
	uint32_t node = anchor;

	for (unsigned j = depth + 1; j-- > 0;)
		if ((s->err = cct__child(s->inf->cct, node, s->chain[j], &node)))
			return;
	if ((s->err = grow(&m->sols, &m->sols_cap, m->nsols + 1,
			   sizeof(*m->sols), 64)))
		return;
	m->sols[m->nsols++] = (struct solution){ node, weight };
}

/*
 * Explains frame chain[depth] at height @h: every edge into it from a
 * caller G whose frame ends at h - delta.  A known CID there anchors a
 * solution (its candidates by training frequency); else go on up.
 * Depth-first, bounded by edges, states and solutions.
 */
static void search(struct search *s, int64_t h, unsigned depth, double p)
{
	const struct callee *c = find_callee(s->m, s->chain[depth]);
	const struct infer_limits *lim = &s->inf->lim;

	for (uint32_t i = 0; c && i < c->n && !s->err; i++) {
		const struct edge *e = &s->m->edges[c->first + i];
		const struct cid_entry *k;
		double pe = p * e->count / c->sum;
		int64_t up = h - e->delta;

		if (++s->states > lim->max_states ||
		    s->m->nsols - s->first >= lim->max_solutions)
			return;
		if (up <= 0)
			continue;
		k = find_cid(s->m, e->caller, up);
		if (k) {
			for (uint32_t j = 0; j < k->n && !s->err; j++) {
				const struct infer_cand *a =
					&s->m->cands[k->first + j];

				add_solution(s, a->node, depth, a->total * pe);
			}
		} else if (depth + 1 < lim->max_edges) {
			s->chain[depth + 1] = e->caller;
			search(s, up, depth + 1, pe);
		}
	}
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

/* The memo entry of CID (func, height) in @m, made by a search if
 * needed; NULL on error. */
static const struct memo *explain(struct infer *inf, struct map *m,
				  int64_t func, int64_t height)
{
	uint64_t h = hindex__mix(hindex__mix(6, (uint64_t)func),
				 (uint64_t)height);
	struct hindex_probe p = { HINDEX_NONE, 0 };
	struct search s = { .inf = inf, .m = m, .first = m->nsols };
	struct memo *mo;
	double sum = 0;
	uint32_t i;

	while ((i = hindex__next(&m->memo_index, &p, h)) != HINDEX_NONE)
		if (m->memos[i].func == func && m->memos[i].height == height)
			return &m->memos[i];
	inf->stats.searches++;
	s.chain[0] = func;
	search(&s, height, 0, 1.0);
	inf->stats.search_states += s.states;
	if (s.err)
		return NULL;
	if (grow(&m->memos, &m->memos_cap, m->nmemos + 1, sizeof(*m->memos),
		 64))
		return NULL;
	mo = &m->memos[m->nmemos];
	*mo = (struct memo){ func, height, (uint32_t)s.first,
		(uint32_t)(m->nsols - s.first), CCT_SEARCHED };
	for (i = 0; i < mo->n; i++)
		sum += m->sols[mo->first + i].share;
	for (i = 0; i < mo->n; i++)
		m->sols[mo->first + i].share = sum > 0 ?
			m->sols[mo->first + i].share / sum : 1.0 / mo->n;
	if (!mo->n) {
		mo->how = CCT_UNKNOWN;
		if (unknown_node(inf, func, height, &i) ||
		    grow(&m->sols, &m->sols_cap, m->nsols + 1,
			 sizeof(*m->sols), 64))
			return NULL;
		m->sols[m->nsols++] = (struct solution){ i, 1.0 };
		mo->n = 1;
	}
	if (hindex__insert(&m->memo_index, h, (uint32_t)m->nmemos))
		return NULL;
	return &m->memos[m->nmemos++];
}

int infer__cid(struct infer *inf, int64_t program_id, int64_t func,
	       int64_t height, double samples)
{
	struct map *m = find_map(inf, program_id);
	const struct cid_entry *e = m ? find_cid(m, func, height) : NULL;
	const struct memo *mo;
	uint32_t node;
	int ret;

	inf->stats.cids++;
	inf->stats.samples += samples;
	if (e && e->n == 1) {
		inf->stats.by_how[CCT_PRECISE] += samples;
		return cct__add(inf->cct, m->cands[e->first].node, e->exact,
				CCT_PRECISE, samples);
	}
	if (e) {
		inf->stats.by_how[CCT_AMBIGUOUS] += samples;
		for (uint32_t i = 0; i < e->n; i++) {
			const struct infer_cand *c = &m->cands[e->first + i];

			ret = cct__add(inf->cct, c->node, e->exact,
				       CCT_AMBIGUOUS, samples * c->share);
			if (ret)
				return ret;
		}
		return 0;
	}
	if (!m) {
		inf->stats.by_how[CCT_UNKNOWN] += samples;
		ret = unknown_node(inf, func, height, &node);
		return ret ? ret : cct__add(inf->cct, node, UNKNOWN_EXACT,
					    CCT_UNKNOWN, samples);
	}
	mo = explain(inf, m, func, height);
	if (!mo)
		return -ENOMEM;
	inf->stats.by_how[mo->how] += samples;
	for (uint32_t i = 0; i < mo->n; i++) {
		const struct solution *so = &m->sols[mo->first + i];

		ret = cct__add(inf->cct, so->node, mo->how == CCT_UNKNOWN ?
			       UNKNOWN_EXACT : 1, mo->how, samples * so->share);
		if (ret)
			return ret;
	}
	return 0;
}

const struct infer_stats *infer__stats(const struct infer *inf)
{
	return &inf->stats;
}
