/*
 * run_profile.c - loading a run into the inference engine and its CCT,
 * and storing what it inferred (see run_profile.h).
 */
#include "report/run_profile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binary/demangle.h"
#include "common/grow.h"
#include "common/log.h"
#include "schema/validation.h"

static int add_function(void *arg, const struct store_function *f)
{
	struct run_profile *p = arg;
	char buf[1024];
	const char *name = p->mangled ? f->name :
			   demangle__name(f->name, buf, sizeof(buf));
	int ret = cct__define(p->cct, f->id, name, f->module_id, f->address);

	return ret || !p->calls ? ret :
	       static_calls__function(p->calls, f->id, f->module_id,
				      f->address);
}

static int add_module(void *arg, const struct store_module *m)
{
	struct run_profile *p = arg;
	struct store_module *pm;

	if (grow(&p->modules, &p->modules_cap, p->nmodules + 1,
		 sizeof(*p->modules), 16))
		return -ENOMEM;
	pm = &p->modules[p->nmodules];
	*pm = (struct store_module){ m->id, strdup(m->path),
				     strdup(m->build_id) };
	p->nmodules++;
	return pm->path && pm->build_id ? 0 : -ENOMEM;
}

const struct store_module *run_profile__module(const struct run_profile *p,
						 int64_t id)
{
	for (size_t i = 0; i < p->nmodules; i++)
		if (p->modules[i].id == id)
			return &p->modules[i];
	return NULL;
}

/* A window's runs as one pseudo run (id 0) for the report's header. */
static int open_window(struct store *st, const struct store_selection *sel,
		       struct run_profile *p)
{
	int64_t n, first, last;

	if (store__window_runs(st, sel, &n, &first, &last, &p->run.samples,
			       &p->run.unresolved))
		return -1;
	if (!n)
		return 1;
	snprintf(p->run.kind, sizeof(p->run.kind), "window");
	snprintf(p->run.command, sizeof(p->run.command),
		 "%lld run%s, %lld to %lld", (long long)n, n > 1 ? "s" : "",
		 (long long)first, (long long)last);
	snprintf(p->run.event, sizeof(p->run.event), "?");
	p->run.started_ns = sel->since_ns;
	p->run.user_ns = p->run.system_ns = -1;
	return 0;
}

/* The store's rows into a fresh CCT with every function named (and
 * known to the static calls, with RUN_PROFILE_STATIC in @flags). */
static int open_profile(struct store *st, const struct store_selection *sel,
			unsigned flags, struct run_profile *p)
{
	int64_t run_id = sel->run_id;
	bool calls = (flags & RUN_PROFILE_STATIC) &&
		     !(flags & RUN_PROFILE_FLAT);
	int ret;

	memset(p, 0, sizeof(*p));
	p->mangled = flags & RUN_PROFILE_MANGLED;
	if (!run_id) {
		ret = open_window(st, sel, p);
		if (ret > 0)
			log_error("no run in that time window (see the v_runs "
				  "view)");
		if (ret)
			goto out_fail;
		goto out_cct;
	}
	ret = store__run(st, run_id, &p->run);
	if (ret > 0) {
		int64_t lo, hi;

		if (!store__run_range(st, &lo, &hi) && hi)
			log_error("no run %lld in the database (runs %lld to "
				  "%lld; see the v_runs view)", (long long)run_id,
				  (long long)lo, (long long)hi);
		else
			log_error("no run %lld: the database holds no runs",
				  (long long)run_id);
		return 1;
	}
	if (ret)
		goto out_fail;
out_cct:
	p->cct = cct__new();
	if (p->cct && calls)
		p->calls = static_calls__new(p->cct);
	if (!p->cct || (calls && !p->calls) ||
	    store__functions(st, add_function, p) ||
	    store__modules(st, add_module, p))
		goto out_fail;
	return 0;
out_fail:
	if (ret <= 0)
		log_error("%s", ret < 0 || p->cct ? store__error(st) :
			  "out of memory");
	return ret > 0 ? 1 : -1;
}

/* Collects a run's distinct programs. */
struct programs {
	int64_t *ids;
	size_t n, cap;
};

static int add_program(void *arg, int64_t id)
{
	struct programs *ps = arg;

	if (grow(&ps->ids, &ps->cap, ps->n + 1, sizeof(*ps->ids), 8))
		return -ENOMEM;
	ps->ids[ps->n++] = id;
	return 0;
}

/* A true path with samples ending in it, for scoring. */
struct truth_leaf {
	uint32_t node;			/* in the CCT */
	int64_t func, height;
	int64_t samples;
};

/* Store node ids of the map being read, in order, to find parents. */
struct map_load {
	struct infer *inf;		/* inference: nodes into the engine */
	struct cct *cct;		/* truth: nodes straight into the CCT */
	int64_t *ids;
	uint32_t *cct_nodes;		/* truth */
	size_t n, cap, cap2;
	bool collect;			/* truth: leaves into @leaves, not
					 * weight into the CCT */
	struct truth_leaf *leaves;
	size_t nleaves, leaves_cap;
};

static int64_t index_of(const struct map_load *ml, int64_t id)
{
	size_t lo = 0, hi = ml->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (ml->ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ml->n && ml->ids[lo] == id ? (int64_t)lo : -2;
}

static int add_leaf(struct map_load *ml, uint32_t node,
		    const struct store_node *n)
{
	if (grow(&ml->leaves, &ml->leaves_cap, ml->nleaves + 1,
		 sizeof(*ml->leaves), 256))
		return -ENOMEM;
	ml->leaves[ml->nleaves++] = (struct truth_leaf){ node,
		n->function_id, n->height, n->self };
	return 0;
}

static int load_node(void *arg, const struct store_node *n)
{
	struct map_load *ml = arg;
	int64_t parent = n->parent_id ? index_of(ml, n->parent_id) : -1;
	int ret;

	if (parent == -2)
		return -EINVAL;		/* an orphan: a corrupt map */
	if (grow(&ml->ids, &ml->cap, ml->n + 1, sizeof(*ml->ids), 1024))
		return -ENOMEM;
	if (ml->inf) {
		struct infer_node in = { parent, n->function_id, n->height,
			(uint64_t)n->call_site, (uint64_t)n->self,
			(uint64_t)n->total, n->context_id };

		ret = infer__add_node(ml->inf, &in);
	} else {
		uint32_t node;

		ret = grow(&ml->cct_nodes, &ml->cap2, ml->n + 1,
			   sizeof(*ml->cct_nodes), 1024);
		if (!ret)
			ret = cct__child(ml->cct, parent < 0 ? CCT_ROOT :
					 ml->cct_nodes[parent], n->function_id,
					 &node);
		if (!ret) {
			struct cct_node *cn = cct__node(ml->cct, node);

			ml->cct_nodes[ml->n] = node;
			cct__set_site(ml->cct, node, (uint64_t)n->call_site,
				      (double)n->total);
			if (n->self && ml->collect)
				ret = add_leaf(ml, node, n);
			else if (n->self)
				ret = cct__add(ml->cct, node, cn->depth,
					       CCT_PRECISE, (double)n->self);
		}
	}
	if (ret)
		return ret;
	ml->ids[ml->n++] = n->id;
	return 0;
}

/* The modules whose functions have samples the path maps do not
 * explain, by program: their direct calls are worth reading. */
struct unexplained {
	struct infer *inf;
	struct cct *cct;
	const struct run_profile *p;
	struct prog_modules {
		int64_t program;
		int64_t *ids;
		size_t n, cap;
	} *progs;
	size_t nprogs, cap;
};

static int add_id(int64_t **v, size_t *n, size_t *cap, int64_t id)
{
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i] == id)
			return 0;
	if (grow(v, cap, *n + 1, sizeof(**v), 8))
		return -ENOMEM;
	(*v)[(*n)++] = id;
	return 0;
}

static int note_unexplained(void *arg, const struct store_cid *c)
{
	struct unexplained *u = arg;
	const struct infer_cand *cands;
	const struct cct_frame *f;
	const struct store_module *m;
	struct prog_modules *pm = NULL;

	if (!c->program_id ||
	    infer__lookup(u->inf, c->program_id, c->function_id, c->height,
			  &cands) ||
	    !(f = cct__frame(u->cct, c->function_id)) || !f->module_id)
		return 0;
	/* JIT code (a perf map): no binary holds its calls */
	m = run_profile__module(u->p, f->module_id);
	if (m && !strncmp(m->path, "/tmp/perf-", 10) &&
	    strlen(m->path) > 14 && !strcmp(m->path + strlen(m->path) - 4,
					     ".map"))
		return 0;
	for (size_t i = 0; i < u->nprogs && !pm; i++)
		if (u->progs[i].program == c->program_id)
			pm = &u->progs[i];
	if (!pm) {
		if (grow(&u->progs, &u->cap, u->nprogs + 1, sizeof(*u->progs),
			 4))
			return -ENOMEM;
		pm = &u->progs[u->nprogs++];
		*pm = (struct prog_modules){ c->program_id, NULL, 0, 0 };
		/* the executable: its calls reach the libraries' exports */
		if (add_id(&pm->ids, &pm->n, &pm->cap, c->program_id))
			return -ENOMEM;
	}
	return add_id(&pm->ids, &pm->n, &pm->cap, f->module_id);
}

/*
 * The direct calls of the binaries where samples went unexplained (and
 * of each such program's executable), into @inf.  Only those: reading
 * a binary costs about a second per 2 MB of code, and the other
 * modules' calls matter only to chains that pass through them.  0, -1.
 */
static int load_static(struct store *st, const struct store_selection *sel,
		       struct run_profile *p, struct infer *inf)
{
	struct unexplained u = { inf, p->cct, p, NULL, 0, 0 };
	int ret = store__run_cids(st, sel, note_unexplained, &u);

	if (ret)
		log_error("%s", store__error(st));
	for (size_t i = 0; i < u.nprogs; i++) {
		const struct prog_modules *pm = &u.progs[i];
		const struct store_module **mods =
			malloc((pm->n ? pm->n : 1) * sizeof(*mods));
		size_t n = 0;

		/* ids[0] is the program's executable: it stays first */
		for (size_t j = 0; mods && j < pm->n; j++)
			if ((mods[n] = run_profile__module(p, pm->ids[j])))
				n++;
		if (!ret && (!mods ||
			     static_calls__program(p->calls, inf, pm->program,
						   mods, n))) {
			log_error("out of memory");
			ret = -1;
		}
		free(mods);
		free(pm->ids);
	}
	free(u.progs);
	return ret;
}

/* Inferring a selection's CIDs, under process frames or not. */
struct cid_load {
	struct run_profile *p;
	struct infer *inf;
	bool processes, by_pid;
	int64_t pid;		/* the last row's process ... */
	char *comm;
	uint32_t node;		/* ... and its frame's node (the root when
				 * processes stay together) */
};

/* The node of @c's process frame, in @l->node. */
static int process_node(struct cid_load *l, const struct store_cid *c)
{
	int64_t pid = l->by_pid ? c->pid : 0, frame;

	/* rows come grouped by process: one lookup per process */
	if (l->comm && l->pid == pid && !strcmp(l->comm, c->comm))
		return 0;
	frame = cct__process(l->p->cct, pid, c->comm);
	free(l->comm);
	if (!frame || !(l->comm = strdup(c->comm)) ||
	    cct__child(l->p->cct, CCT_ROOT, frame, &l->node))
		return -ENOMEM;
	l->pid = pid;
	return 0;
}

/* One row of CID samples: those taken in the kernel go to [kernel]
 * below the context that entered it. */
static int infer_cid(void *arg, const struct store_cid *c)
{
	struct cid_load *l = arg;
	int64_t kernel = c->kernel > 0 && c->kernel <= c->samples ? c->kernel
								   : 0;
	int64_t frame = kernel ? cct__kernel(l->p->cct) : 0;
	int ret = l->processes ? process_node(l, c) : 0;

	if (!ret && kernel && !frame)
		ret = -ENOMEM;
	if (!ret && c->samples > kernel)
		ret = infer__cid_under(l->inf, l->node, 0, c->program_id,
				       c->function_id, c->height,
				       (double)(c->samples - kernel));
	if (!ret && kernel)
		ret = infer__cid_under(l->inf, l->node, frame, c->program_id,
				       c->function_id, c->height,
				       (double)kernel);
	l->p->kernel_samples += (double)kernel;
	return ret;
}

static int add_comm(void *arg, const char *comm, int64_t samples)
{
	struct run_profile *p = arg;

	if (p->ncomms < RUN_PROFILE_COMMS) {
		struct run_comm *c = &p->comms[p->ncomms];

		snprintf(c->name, sizeof(c->name), "%s", comm);
		c->samples = (double)samples;
	}
	p->ncomms++;
	return 0;
}

static int add_pc(void *arg, const struct store_pc *pc)
{
	struct run_profile *p = arg;

	if (grow(&p->pcs, &p->pcs_cap, p->npcs + 1, sizeof(*p->pcs), 256))
		return -ENOMEM;
	p->pcs[p->npcs++] = *pc;
	return 0;
}

/* The selection's CIDs into @inf, under process frames with
 * RUN_PROFILE_BY_COMM or _BY_PID in @flags; its commands into @p. */
static int infer_cids(struct store *st, const struct store_selection *sel,
		      unsigned flags, struct run_profile *p, struct infer *inf)
{
	struct cid_load l = { p, inf,
		flags & (RUN_PROFILE_BY_COMM | RUN_PROFILE_BY_PID),
		flags & RUN_PROFILE_BY_PID, 0, NULL, CCT_ROOT };
	int ret;

	if (store__run_comms(st, sel, add_comm, p))
		return -1;
	ret = l.processes ?
	      store__run_process_cids(st, sel, l.by_pid, infer_cid, &l) :
	      store__run_cids(st, sel, infer_cid, &l);
	free(l.comm);
	return ret;
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

static int save(struct store *st, struct run_profile *p,
		const struct inference_stamp *stamp)
{
	struct ctx_chain chain = { 0 };
	const struct cct_record *recs;
	size_t n;

	if (store__inference_begin(st, p->run.id))
		return -1;
	recs = cct__records(p->cct, &n);
	for (size_t i = 0; i < n; i++) {
		const struct cct_record *r = &recs[i];
		uint32_t node = r->node;
		const struct cct_node *cn = cct__node(p->cct, node), *up;
		int64_t ctx, unknown = 0;

		/* the inferred table has no [kernel]: its samples count
		 * for the context that entered the kernel */
		if (cct__kind(p->cct, cn->frame) == CCT_KERNEL)
			cn = cct__node(p->cct, node = cn->parent);
		up = cct__node(p->cct, cn->parent);
		if (context_of(st, p, node, &chain, &ctx))
			goto out_rollback;
		if (up->frame < 0) {
			const struct cct_frame *f = cct__frame(p->cct, up->frame);

			if (!f || store__unknown_frame(st, f->function_id,
						       f->height, &unknown))
				goto out_rollback;
		}
		if (store__inferred_row(st, p->run.id, ctx, unknown,
					cct_how__name(r->how), node == r->node ?
					r->exact : r->exact - 1,
					r->weight))
			goto out_rollback;
	}
	free(chain.v);
	return store__inference_commit(st, p->run.id, stamp);
out_rollback:
	free(chain.v);
	store__inference_rollback(st);
	return -1;
}

static int add_rate(void *arg, const char *outcome, int64_t samples,
		    double correct)
{
	struct run_profile *p = arg;

	for (int h = 0; h < CCT_NR_HOW; h++)
		if (!strcmp(outcome, cct_how__name((enum cct_how)h))) {
			p->validated[h] += (double)samples;
			p->validated_correct[h] += correct;
		}
	return 0;
}

/* Pools the rates the latest validation of program @id measured. */
static int add_rates(struct store *st, struct run_profile *p, int64_t id)
{
	int64_t run;

	if (store__accuracy_rates(st, id, &run, add_rate, p))
		return -1;
	if (run > p->validated_run)
		p->validated_run = run;
	return 0;
}

/* Opens @sel's profile with the path maps of its programs in a new
 * engine (*@infp, the caller's to free), and the binaries' direct calls
 * with RUN_PROFILE_STATIC in @flags.  0, 1 (logged) when there is
 * nothing to infer, -1 after logging why. */
static int open_inference(struct store *st, const struct store_selection *sel,
			  unsigned flags, struct run_profile *p,
			  struct infer **infp)
{
	struct programs ps = { 0 };
	struct map_load ml = { 0 };
	struct infer *inf;
	int ret = open_profile(st, sel, flags, p);

	*infp = NULL;
	if (ret)
		return ret;
	ret = -1;
	p->whole = flags & RUN_PROFILE_WHOLE;
	*infp = inf = infer__new(p->cct, p->whole ?
		&(struct infer_limits){ .confidence = -1 } : NULL);
	if (!inf) {
		log_error("out of memory");
		goto out;
	}
	p->flat = flags & RUN_PROFILE_FLAT;
	if (!p->flat && store__run_programs(st, sel, add_program, &ps))
		goto out_store;
	for (size_t i = 0; i < ps.n; i++) {
		const struct store_module *m = run_profile__module(p, ps.ids[i]);
		int r;

		p->programs++;
		free(ml.ids);
		ml = (struct map_load){ .inf = inf };
		if (infer__begin_map(inf, ps.ids[i]))
			goto out_nomem;
		r = store__map_nodes(st, ps.ids[i], 0, load_node, &ml);
		if (r < 0 && store__stopped(st) == -EINVAL) {
			log_error("the path map of %s is corrupt (a node "
				  "without its parent)", m ? m->path : "?");
			goto out;
		}
		if (r < 0)
			goto out_store;
		if (infer__end_map(inf))
			goto out_nomem;
		if (add_rates(st, p, ps.ids[i]))
			goto out_store;
		if (!ml.n) {
			p->unmapped++;
			snprintf(p->unmapped_path, sizeof(p->unmapped_path),
				 "%s", m ? m->path : "");
		}
	}
	if (p->calls && load_static(st, sel, p, inf))
		goto out;
	ret = 0;
	goto out;
out_nomem:
	log_error("out of memory");
	goto out;
out_store:
	log_error("%s", store__error(st));
out:
	free(ml.ids);
	free(ps.ids);
	return ret;
}

int run_profile__infer(struct store *st, const struct store_selection *sel,
		       unsigned flags, struct run_profile *p)
{
	struct infer *inf;
	struct inference_stamp old, now = { 0 };
	int64_t run_id = sel->run_id;
	int ret = open_inference(st, sel, flags, p, &inf);

	if (ret)
		goto out;
	ret = -1;
	if (infer_cids(st, sel, flags, p, inf) ||
	    ((flags & RUN_PROFILE_PCS) && store__run_pcs(st, sel, add_pc, p)))
		goto out_store;
	p->stats = *infer__stats(inf);
	/* only whole runs are stored: a window, one process or processes
	 * apart are views */
	if ((flags & RUN_PROFILE_SAVE) && !p->whole && !p->flat && run_id &&
	    !sel->pid &&
	    !sel->program && !sel->comm && !store__readonly(st) &&
	    !(flags & (RUN_PROFILE_BY_COMM | RUN_PROFILE_BY_PID))) {
		now.run_samples = p->run.samples;
		now.static_calls = (int64_t)p->stats.calls;
		if (store__map_samples(st, &now.map_samples))
			goto out_store;
		if (store__inference_stamp(st, run_id, &old) ||
		    memcmp(&old, &now, sizeof(now))) {
			if (save(st, p, &now))
				log_warn("%s: the inferred contexts are not "
					 "stored; the report is complete",
					 store__error(st));
			else
				p->saved = true;
		}
	}
	ret = 0;
	goto out;
out_store:
	log_error("%s", store__error(st));
out:
	infer__free(inf);
	return ret;
}

/* Whether every frame that context @shown shows is true of context
 * @truth: the same context, or one cut short under unknown callers
 * whose frames are @truth's innermost ones. */
static bool shown_true(struct cct *t, uint32_t shown, uint32_t truth)
{
	while (shown != truth) {
		const struct cct_node *s = cct__node(t, shown),
			*u = cct__node(t, truth);

		if (s->frame < 0)
			return true;
		if (shown == CCT_ROOT || truth == CCT_ROOT ||
		    s->frame != u->frame)
			return false;
		shown = s->parent;
		truth = u->parent;
	}
	return true;
}

/* Scores one program's true leaves (@ml) with @inf, for @fn. */
static int score_leaves(struct run_profile *p, struct infer *inf,
			int64_t program, const struct map_load *ml,
			int (*fn)(void *arg, const struct run_score *s),
			void *arg)
{
	const struct store_module *m = run_profile__module(p, program);

	for (size_t i = 0; i < ml->nleaves; i++) {
		const struct truth_leaf *l = &ml->leaves[i];
		struct infer_outcome o;
		struct run_score sc = { m ? m->path : "?", program, l->func,
			cct__name(p->cct, l->func), 0, 0, (double)l->samples,
			0 };
		int ret = infer__explain(inf, program, l->func, l->height, &o);

		if (ret)
			return ret;
		sc.how = o.how;
		sc.solutions = o.n;
		for (size_t j = 0; j < o.n && o.how != CCT_UNKNOWN; j++) {
			double w = sc.samples * o.sols[j].share;

			if (o.sols[j].node == l->node) {
				sc.correct += w;
			} else if (shown_true(p->cct, o.sols[j].node,
					      l->node)) {
				sc.correct += w;
				sc.cut += w;
			}
		}
		if ((ret = fn(arg, &sc)))
			return ret;
	}
	return 0;
}

int run_profile__score(struct store *st, int64_t run_id,
		       int (*fn)(void *arg, const struct run_score *s),
		       void *arg)
{
	struct store_selection sel = { .run_id = run_id };
	struct run_profile p;
	struct programs ps = { 0 };
	struct infer *inf;
	int ret = open_inference(st, &sel, RUN_PROFILE_STATIC, &p, &inf),
	    found = 0;

	if (!ret && store__run_programs(st, &sel, add_program, &ps)) {
		log_error("%s", store__error(st));
		ret = -1;
	}
	/* the true paths join the CCT after the maps: a true context and
	 * an inferred one are the same node when their frames are */
	for (size_t i = 0; !ret && i < ps.n; i++) {
		struct map_load ml = { .cct = p.cct, .collect = true };
		int r = store__map_nodes(st, ps.ids[i], run_id, load_node, &ml);

		if (r < 0) {
			log_error("%s", store__error(st));
			ret = -1;
		} else if (!r) {
			found = 1;
			r = score_leaves(&p, inf, ps.ids[i], &ml, fn, arg);
			if (r < 0)
				log_error("out of memory");
			if (r)
				ret = -1;
		}
		free(ml.ids);
		free(ml.cct_nodes);
		free(ml.leaves);
	}
	free(ps.ids);
	infer__free(inf);
	run_profile__free(&p);
	return !ret && !found ? 1 : ret;
}

int run_profile__truth(struct store *st, int64_t run_id,
		       struct run_profile *p)
{
	struct store_selection sel = { .run_id = run_id };
	struct programs ps = { 0 };
	int ret = open_profile(st, &sel, 0, p), found = 0;

	if (ret)
		return ret;
	if (store__run_programs(st, &sel, add_program, &ps)) {
		log_error("%s", store__error(st));
		ret = -1;
	}
	for (size_t i = 0; !ret && i < ps.n; i++) {
		struct map_load ml = { .cct = p->cct };
		int r = store__map_nodes(st, ps.ids[i], run_id, load_node, &ml);

		free(ml.ids);
		free(ml.cct_nodes);
		if (r < 0) {
			log_error("%s", store__error(st));
			ret = -1;
		} else if (r > 0) {
			continue;
		}
		found = 1;
		p->programs++;
	}
	free(ps.ids);
	if (!ret && !found)
		ret = 1;
	p->stats.samples = p->stats.by_how[CCT_PRECISE] = cct__total(p->cct);
	return ret;
}

void run_profile__free(struct run_profile *p)
{
	for (size_t i = 0; i < p->nmodules; i++) {
		free((char *)p->modules[i].path);
		free((char *)p->modules[i].build_id);
	}
	free(p->modules);
	free(p->pcs);
	static_calls__free(p->calls);
	cct__free(p->cct);
	memset(p, 0, sizeof(*p));
}
