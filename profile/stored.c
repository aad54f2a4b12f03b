/*
 * stored.c - a run's inference in the store: each CID's explanation
 * (tables explained and explained_sites) read back into the profile's
 * CCT, and written once a run is inferred (run_profile_int.h).
 */
#include "profile/run_profile_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/log.h"

/* ---- the stored inference -------------------------------------------- */

/* The contexts a run's stored explanations use, by id. */
struct contexts {
	struct store_context *v;
	size_t n, cap;
	struct hindex index;
	uint32_t *nodes;		/* per context: its CCT node;
					 * CCT_NONE: not made yet */
	uint32_t *tops;			/* ... made below this node (the
					 * root, or an unknown frame's) */
	uint32_t *chain;
	size_t chain_cap;
};

static int add_context(void *arg, const struct store_context *c)
{
	struct contexts *cs = arg;

	if (grow(&cs->v, &cs->cap, cs->n + 1, sizeof(*cs->v), 1024) ||
	    hindex__insert(&cs->index, hindex__mix(13, (uint64_t)c->id),
			   (uint32_t)cs->n))
		return -ENOMEM;
	cs->v[cs->n++] = *c;
	return 0;
}

static uint32_t find_context(const struct contexts *cs, int64_t id)
{
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint32_t i;

	while ((i = hindex__next(&cs->index, &p, hindex__mix(13, (uint64_t)id)))
	       != HINDEX_NONE)
		if (cs->v[i].id == id)
			return i;
	return HINDEX_NONE;
}

/* The CCT node of context @id below @top (the root, or an unknown
 * frame's node).  Each context keeps the node it was last made, with
 * its top: the contexts under unknown callers (fragments, cut chains)
 * were walked up to their top at every row, a hash lookup a frame, 21 %
 * of a later report of a 10 kHz clang++ record.  Iterative; a parent
 * missing or a loop (a crafted database) is -EINVAL.  0, -EINVAL or
 * -ENOMEM. */
static int context_node(struct cct *t, struct contexts *cs, int64_t id,
			uint32_t top, uint32_t *out)
{
	size_t n = 0;
	uint32_t node = top;

	for (int64_t x = id; x; ) {
		uint32_t i = find_context(cs, x);

		if (i == HINDEX_NONE || n > cs->n)
			return -EINVAL;
		if (cs->nodes[i] != CCT_NONE && cs->tops[i] == top) {
			node = cs->nodes[i];
			break;
		}
		if (grow(&cs->chain, &cs->chain_cap, n + 1,
			 sizeof(*cs->chain), 64))
			return -ENOMEM;
		cs->chain[n++] = i;
		x = cs->v[i].parent_id;
	}
	while (n--) {
		const struct store_context *c = &cs->v[cs->chain[n]];

		if (cct__child(t, node, c->function_id, &node))
			return -ENOMEM;
		cct__set_site(t, node, (uint64_t)c->call_site, 1);
		cct__node(t, node)->ext = c->id;
		cs->nodes[cs->chain[n]] = node;
		cs->tops[cs->chain[n]] = top;
	}
	*out = node;
	return 0;
}

struct load_expl {
	struct run_profile *p;
	struct expls *e;
	struct contexts *cs;
	struct expl *x;
};

static int load_row(void *arg, const struct store_explained *r)
{
	struct load_expl *l = arg;
	struct cct *t = l->p->cct;
	uint32_t top = CCT_ROOT, node;
	enum cct_how how = CCT_UNKNOWN;
	int ret;

	/* a database is input: a share outside [0, 1] (or NaN) and a
	 * depth out of range are read as the nearest sane value */
	double share = r->share >= 0 ? (r->share <= 1 ? r->share : 1) : 0;
	double own = r->own >= 0 ? (r->own <= share ? r->own : share) : 0;
	uint32_t exact = r->exact < 1 ? 1 : r->exact > 1 << 20 ? 1 << 20 :
			 (uint32_t)r->exact;

	for (int h = 0; h < CCT_NR_HOW; h++)
		if (!strcmp(r->how, cct_how__name((enum cct_how)h)))
			how = (enum cct_how)h;
	if (!l->x || l->x->program != r->program_id ||
	    l->x->func != r->function_id || l->x->height != r->height)
		l->x = run_profile__new_expl(l->e, r->program_id,
					     r->function_id, r->height, how,
					     exact);
	if (!l->x)
		return -ENOMEM;
	if (r->unknown_id) {
		int64_t pseudo = cct__pseudo(t, r->unknown_function,
					     r->unknown_height);

		if (!pseudo || cct__child(t, CCT_ROOT, pseudo, &top))
			return -ENOMEM;
	}
	ret = context_node(t, l->cs, r->context_id, top, &node);
	return ret ? ret : run_profile__add_sol(l->e, l->x, node, share, own);
}

/* Whether every context of @cs has its parent there too. */
static bool parents_there(const struct contexts *cs)
{
	for (size_t i = 0; i < cs->n; i++)
		if (cs->v[i].parent_id &&
		    find_context(cs, cs->v[i].parent_id) == HINDEX_NONE)
			return false;
	return true;
}

/* Run @run_id's contexts into @cs: those explained_sites lists (one
 * scan: 0.02 s for the 128,000 of a 10 kHz record of g++), or where it
 * does not list them all (an older build stored only the contexts with
 * a call site), the explanations' and their ancestors', by a recursive
 * query (0.26 s).  0 or -1. */
static int load_contexts(struct store *st, int64_t run_id,
			 struct contexts *cs)
{
	int ret = store__sited_contexts(st, run_id, add_context, cs);

	if (ret < 0 || (!ret && parents_there(cs)))
		return ret;
	cs->n = 0;
	hindex__clear(&cs->index);
	return store__explained_contexts(st, run_id, add_context, cs);
}

/* Run @run_id's stored explanations into @e.  0, -1 after logging. */
int stored__load(struct store *st, struct run_profile *p, int64_t run_id,
		 struct expls *e)
{
	struct contexts cs = { 0 };
	struct load_expl l = { p, e, &cs, NULL };
	int ret = load_contexts(st, run_id, &cs);

	if (!ret && (!(cs.nodes = malloc((cs.n ? cs.n : 1) *
					 sizeof(*cs.nodes))) ||
		     !(cs.tops = malloc((cs.n ? cs.n : 1) * sizeof(*cs.tops)))))
		ret = -1;
	for (size_t i = 0; !ret && i < cs.n; i++)
		cs.nodes[i] = CCT_NONE;
	if (!ret)
		ret = store__explained(st, run_id, load_row, &l);
	if (ret && store__stopped(st) == -EINVAL)
		log_error("the stored inference of run %lld is corrupt (a "
			  "context without its parent)", (long long)run_id);
	else if (ret)
		log_error("%s", cs.tops ? store__error(st) : "out of memory");
	free(cs.v);
	hindex__exit(&cs.index);
	free(cs.nodes);
	free(cs.tops);
	free(cs.chain);
	return ret ? -1 : 0;
}

struct ctx_chain {
	uint32_t *v;
	size_t n, cap;
};

/* The context id of CCT node @i, created in the store if needed; an
 * unknown frame acts as the root.  Iterative: a crafted path map can be
 * deeper than any stack.  @chain is scratch space kept across calls.
 * 0 or -1. */
static int context_of(struct store *st, const struct run_profile *p,
		      uint32_t i, struct ctx_chain *chain, int64_t *id)
{
	struct cct *t = p->cct;
	int64_t ctx = 0;

	chain->n = 0;
	for (uint32_t x = i; x != CCT_ROOT; x = cct__node(t, x)->parent) {
		const struct cct_node *n = cct__node(t, x);

		if (n->frame < 0)
			break;
		if (n->ext) {
			ctx = n->ext;
			break;
		}
		if (grow(&chain->v, &chain->cap, chain->n + 1,
			 sizeof(*chain->v), 64))
			return -1;
		chain->v[chain->n++] = x;
	}
	while (chain->n) {
		uint32_t x = chain->v[--chain->n];
		int64_t func = cct__node(t, x)->frame;

		if ((p->calls &&
		     static_calls__store_id(p->calls, st, func, &func)) ||
		    store__context(st, ctx, func, &ctx))
			return -1;
		cct__node(t, x)->ext = ctx;
	}
	*id = ctx;
	return 0;
}

/* Writes one CID's explanation (@x, @samples in the run) into run
 * @run's rows: its contexts, the call sites along them, and the
 * inferred table's weights.  0 or -1. */
static int save_cid(struct store *st, struct run_profile *p, int64_t run,
		    const struct expl *x, const struct infer_solution *sols,
		    double samples, struct ctx_chain *chain, uint8_t *sited)
{
	struct cct *t = p->cct;

	for (uint32_t i = 0; i < x->n; i++) {
		uint32_t top = sols[i].node;
		const struct cct_node *n;
		struct store_explained r = { x->program, x->func, x->height,
			0, 0, 0, 0, cct_how__name(x->how), x->exact,
			sols[i].share, x->how == CCT_PRECISE ? 0 :
			sols[i].own };
		/* the own samples are exact: every frame of the context */
		uint32_t depth = cct__node(t, sols[i].node)->depth;

		if (context_of(st, p, top, chain, &r.context_id))
			return -1;
		/* the call sites up the context, each node's once (@sited:
		 * by node, nodes stored already; deep stacks share most),
		 * 0 where none is known: the rows list every context of the
		 * run's, for stored__load() */
		for (;;) {
			n = cct__node(t, top);
			if (!sited[top] &&
			    store__explained_site(st, run, n->ext,
						  (int64_t)n->call_site))
				return -1;
			sited[top] = 1;
			if (n->parent == CCT_ROOT ||
			    cct__node(t, n->parent)->frame <= 0)
				break;
			top = n->parent;
		}
		if (n->parent != CCT_ROOT) {
			const struct cct_frame *f = cct__frame(t,
				cct__node(t, n->parent)->frame);

			if (!f || store__unknown_frame(st, f->function_id,
						       f->height,
						       &r.unknown_id))
				return -1;
		}
		if (store__explained_row(st, run, &r) ||
		    (r.own > 0 && store__inferred_row(st, run, r.context_id,
				r.unknown_id, cct_how__name(CCT_PRECISE), depth,
				samples * r.own)) ||
		    (r.share > r.own && store__inferred_row(st, run,
				r.context_id, r.unknown_id, r.how, r.exact,
				samples * (r.share - r.own))))
			return -1;
	}
	return 0;
}

struct save_run {
	struct store *st;
	struct run_profile *p;
	const struct expls *e;
	int64_t run;
	struct ctx_chain chain;
	uint8_t *sited;		/* per CCT node: its call site stored */
};

static int save_row(void *arg, const struct store_cid *c)
{
	struct save_run *s = arg;
	const struct expl *x = run_profile__find_expl(s->e, c->program_id,
						      c->function_id,
						      c->height);

	if (!x)
		return 0;	/* a row newer than the inference */
	return save_cid(s->st, s->p, s->run, x, &s->e->sols[x->first],
			(double)c->samples, &s->chain, s->sited) ? -EIO : 0;
}

/* Stores run @run's inference: every CID of the run as @e explains it,
 * stamped with @stamp.  0, -ENOMEM, or -1 (the store's error set). */
int stored__save(struct store *st, struct run_profile *p, int64_t run,
		 const struct expls *e, const struct inference_stamp *stamp)
{
	struct save_run s = { st, p, e, run, { 0 },
			      calloc(cct__size(p->cct) + 1, 1) };
	struct store_selection one = { .run_id = run };
	int ret;

	if (!s.sited)
		return -ENOMEM;
	if (store__inference_begin(st, run)) {
		free(s.sited);
		return -1;
	}
	ret = store__run_cids(st, &one, save_row, &s);
	free(s.chain.v);
	free(s.sited);
	if (ret) {
		store__inference_rollback(st);
		return -1;
	}
	return store__inference_commit(st, run, stamp);
}
