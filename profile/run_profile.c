/*
 * run_profile.c - loading a run into the inference engine and its CCT
 * (see run_profile.h); reading back and storing what it inferred is
 * stored.c's.
 */
#include "profile/run_profile_int.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "binary/demangle.h"
#include "binary/lines.h"
#include "binary/module.h"
#include "common/grow.h"
#include "common/log.h"
#include "common/search.h"
#include "schema/validation.h"

/* The debug file of module @id, opened at the first ask (NULL: none).
 * The line reader's worker looks it up: a debuglink's candidates are
 * anyone's to place, and its timeout bounds what they cost. */
static struct module *debug_module(struct run_profile *p, int64_t id)
{
	char path[4096];

	for (size_t i = 0; i < p->nmodules; i++) {
		if (p->modules[i].id != id)
			continue;
		if (!p->debug_looked[i]) {
			p->debug_looked[i] = true;
			if (!p->debug_lines)
				p->debug_lines = lines__new();
			if (p->debug_lines &&
			    !lines__debug_file(p->debug_lines,
					       p->modules[i].path,
					       p->modules[i].build_id,
					       p->flags & RUN_PROFILE_DEBUGINFOD,
					       path, sizeof(path)))
				p->debug[i] = module__open(path);
			if (p->debug[i] && module__error(p->debug[i])) {
				module__delete(p->debug[i]);
				p->debug[i] = NULL;
			}
		}
		return p->debug[i];
	}
	return NULL;
}

/*
 * @f's name from its module's debug file, where the binary was stripped
 * and named it by its FDE ("prog+0x1130", module__func_label()): into
 * @buf, or @f's own name.
 */
static const char *debug_name(struct run_profile *p,
			      const struct store_function *f, char *buf,
			      size_t len)
{
	const struct store_module *m = p->debug && strstr(f->name, "+0x") ?
		run_profile__module(p, f->module_id) : NULL;
	const char *base = m ? strrchr(m->path, '/') : NULL;
	struct module_func fn;
	struct module *dm;
	char label[300];

	/* named by a symbol: no module looked up, no label made */
	if (!p->debug || !strstr(f->name, "+0x") || !m)
		return f->name;
	snprintf(label, sizeof(label), "%s+0x%llx", base ? base + 1 : m->path,
		 (unsigned long long)f->address);
	if (strcmp(label, f->name) ||
	    !(dm = debug_module(p, f->module_id)) ||
	    module__function(dm, f->address, &fn) || !fn.name ||
	    fn.start != f->address)
		return f->name;
	snprintf(buf, len, "%s", fn.name);
	p->named_by_debuginfo++;
	return buf;
}

static int add_function(void *arg, const struct store_function *f)
{
	struct run_profile *p = arg;
	char buf[1024], dbg[1024];
	const char *raw = debug_name(p, f, dbg, sizeof(dbg));
	const char *name = p->mangled ? raw :
			   demangle__name(raw, buf, sizeof(buf));
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
		return RUN_PROFILE_NONE;
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
		if (ret == RUN_PROFILE_NONE)
			log_error("no run in that time window (see the v_runs "
				  "view)");
		if (ret)
			goto out_fail;
		goto out_cct;
	}
	ret = store__run(st, run_id, &p->run);
	if (ret == STORE_NONE) {
		int64_t lo, hi;

		if (!store__run_range(st, &lo, &hi) && hi)
			log_error("no run %lld in the database (runs %lld to "
				  "%lld; see the v_runs view)", (long long)run_id,
				  (long long)lo, (long long)hi);
		else
			log_error("no run %lld: the database holds no runs",
				  (long long)run_id);
		return RUN_PROFILE_NONE;
	}
	if (ret)
		goto out_fail;
out_cct:
	p->cct = cct__new();
	if (p->cct && calls)
		p->calls = static_calls__new(p->cct, st, p->mangled);
	/* the modules first: a nameless function's is looked up */
	if (!p->cct || (calls && !p->calls) ||
	    store__modules(st, add_module, p))
		goto out_fail;
	p->flags = flags;
	if ((flags & RUN_PROFILE_DEBUGINFO) && p->nmodules &&
	    (!(p->debug = calloc(p->nmodules, sizeof(*p->debug))) ||
	     !(p->debug_looked = calloc(p->nmodules, sizeof(bool)))))
		goto out_fail;
	if (store__functions(st, add_function, p))
		goto out_fail;
	return 0;
out_fail:
	if (ret <= 0)
		log_error("%s", ret < 0 || p->cct ? store__error(st) :
			  "out of memory");
	return ret > 0 ? RUN_PROFILE_NONE : -1;
}

/* Ids as a store's walk gives them: a run's programs, a window's runs. */
struct id_list {
	int64_t *v;
	size_t n, cap;
};

static int add_to_list(void *arg, int64_t id)
{
	struct id_list *l = arg;

	if (grow(&l->v, &l->cap, l->n + 1, sizeof(*l->v), 8))
		return -ENOMEM;
	l->v[l->n++] = id;
	return 0;
}

/* A true path with samples ending in it, for scoring. */
struct truth_leaf {
	uint32_t node;			/* in the CCT */
	int64_t func, height;
	int64_t samples;
};

/* The samples the inferred runs' learning unwound whole, by the map
 * node their paths end at: sorted by node, no two alike. */
struct own_list {
	struct own { int64_t node; double samples; } *v;
	size_t n, cap;
};

static int add_own(void *arg, int64_t node, int64_t samples)
{
	struct own_list *o = arg;

	if (grow(&o->v, &o->cap, o->n + 1, sizeof(*o->v), 256))
		return -ENOMEM;
	o->v[o->n++] = (struct own){ node, (double)samples };
	return 0;
}

static int by_node(const void *a, const void *b)
{
	const struct own *x = a, *y = b;

	return (x->node > y->node) - (x->node < y->node);
}

/* The own samples of @sel's runs into @o.  0, or -1 (store__error()). */
static int load_own(struct store *st, const struct store_selection *sel,
		    struct own_list *o)
{
	struct id_list runs = { 0 };
	size_t u = 0;
	int ret = sel->run_id ? add_to_list(&runs, sel->run_id) :
		  store__window_run_ids(st, sel, add_to_list, &runs);

	for (size_t i = 0; !ret && i < runs.n; i++)
		ret = store__run_learned(st, runs.v[i], add_own, o);
	free(runs.v);
	if (ret)
		return -1;
	if (o->n)
		qsort(o->v, o->n, sizeof(*o->v), by_node);
	for (size_t i = 0; i < o->n; i++)	/* one per node: summed */
		if (u && o->v[u - 1].node == o->v[i].node)
			o->v[u - 1].samples += o->v[i].samples;
		else
			o->v[u++] = o->v[i];
	o->n = u;
	return 0;
}

static double own_of(const struct own_list *o, int64_t node)
{
	const struct own key = { node, 0 }, *f = o && o->n ?
		bsearch(&key, o->v, o->n, sizeof(*o->v), by_node) : NULL;

	return f ? f->samples : 0;
}

/* Store node ids of the map being read, in order, to find parents. */
struct map_load {
	struct infer *inf;		/* inference: nodes into the engine */
	const struct own_list *own;	/* inference: the runs' own paths */
	struct cct *cct;		/* truth: nodes straight into the CCT */
	int64_t *ids;
	uint32_t *cct_nodes;		/* truth */
	size_t n, cap, cap2;
	size_t from;			/* the first of the map being read */
	bool fragment;			/* it holds the build's fragments */
	bool collect;			/* truth: leaves into @leaves, not
					 * weight into the CCT */
	struct truth_leaf *leaves;
	size_t nleaves, leaves_cap;
};

static int64_t index_of(const struct map_load *ml, int64_t id)
{
	size_t lo = LOWER_BOUND(ml->from, ml->n, i, ml->ids[i] < id);

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
			(uint64_t)n->total, n->context_id,
			own_of(ml->own, n->id), ml->fragment };

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
 * explain, by program: their direct calls are worth reading, where
 * those samples are at least UNEXPLAINED_MIN of the selection's (when
 * learning explained nearly all of them, decoding cc1 for three samples
 * took 0.8 s: they stay unknown callers, counted as such). */
#define UNEXPLAINED_MIN 0.005

struct unexplained {
	struct infer *inf;
	struct cct *cct;
	const struct run_profile *p;
	struct prog_modules {
		int64_t program;
		int64_t *ids;
		size_t n, cap;
		int64_t samples;	/* unexplained */
	} *progs;
	size_t nprogs, cap;
	int64_t samples;		/* all of the selection's */
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

	u->samples += c->samples;
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
		*pm = (struct prog_modules){ c->program_id, NULL, 0, 0, 0 };
		/* the executable: its calls reach the libraries' exports */
		if (add_id(&pm->ids, &pm->n, &pm->cap, c->program_id))
			return -ENOMEM;
	}
	pm->samples += c->samples;
	return add_id(&pm->ids, &pm->n, &pm->cap, f->module_id);
}

/*
 * The direct calls of the binaries where samples went unexplained (and
 * of each such program's executable), into @inf.  Only those: reading
 * a binary costs time (cc1: 0.6 s), and the other
 * modules' calls matter only to chains that pass through them.  0, -1.
 */
static int load_static(struct store *st, const struct store_selection *sel,
		       struct run_profile *p, struct infer *inf)
{
	struct unexplained u = { inf, p->cct, p, NULL, 0, 0, 0 };
	int ret = store__run_cids(st, sel, note_unexplained, &u);

	if (ret)
		log_error("%s", store__error(st));
	for (size_t i = 0; i < u.nprogs; i++) {
		const struct prog_modules *pm = &u.progs[i];
		const struct store_module **mods;
		size_t n = 0;

		if ((double)pm->samples < UNEXPLAINED_MIN * (double)u.samples) {
			free(pm->ids);
			continue;
		}
		mods = malloc((pm->n ? pm->n : 1) * sizeof(*mods));

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

/* ---- explanations: each CID's outcome, inferred or stored ---------- */

static uint64_t expl_hash(int64_t program, int64_t func, int64_t height)
{
	return hindex__mix(hindex__mix(hindex__mix(12, (uint64_t)program),
				       (uint64_t)func), (uint64_t)height);
}

struct expl *run_profile__find_expl(const struct expls *e, int64_t program,
				    int64_t func, int64_t height)
{
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint32_t i;

	while ((i = hindex__next(&e->index, &p, expl_hash(program, func,
							  height))) !=
	       HINDEX_NONE)
		if (e->v[i].program == program && e->v[i].func == func &&
		    e->v[i].height == height)
			return &e->v[i];
	return NULL;
}

/* A new entry for the CID (its solutions added next); a later one for
 * the same CID replaces it (a window's newer run).  NULL: no memory. */
struct expl *run_profile__new_expl(struct expls *e, int64_t program,
				   int64_t func, int64_t height,
				   enum cct_how how, uint32_t exact)
{
	struct expl *x = run_profile__find_expl(e, program, func, height);

	if (!x) {
		if (grow(&e->v, &e->cap, e->n + 1, sizeof(*e->v), 256) ||
		    hindex__insert(&e->index, expl_hash(program, func, height),
				   (uint32_t)e->n))
			return NULL;
		x = &e->v[e->n++];
	}
	*x = (struct expl){ program, func, height, how, exact,
			    (uint32_t)e->nsols, 0 };
	return x;
}

int run_profile__add_sol(struct expls *e, struct expl *x, uint32_t node,
			 double share, double own)
{
	if (grow(&e->sols, &e->sols_cap, e->nsols + 1, sizeof(*e->sols), 256))
		return -ENOMEM;
	e->sols[e->nsols++] = (struct infer_solution){ node, share, own };
	x->n++;
	return 0;
}

static int keep_outcome(struct expls *e, int64_t program, int64_t func,
			int64_t height, const struct infer_outcome *o)
{
	struct expl *x = run_profile__new_expl(e, program, func, height,
					       o->how, o->exact);
	int ret = x ? 0 : -ENOMEM;

	for (size_t i = 0; i < o->n && !ret; i++)
		ret = run_profile__add_sol(e, x, o->sols[i].node,
					   o->sols[i].share, o->sols[i].own);
	return ret;
}

static void expls_free(struct expls *e)
{
	free(e->v);
	hindex__exit(&e->index);
	free(e->sols);
}

/* The work one report may spend inferring: CPU seconds from @start. */
struct budget {
	double start, limit;
};

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double budget_left(const struct budget *b)
{
	return b->limit - (cpu_now() - b->start);
}

/* A CID to explain, with the samples it has in the runs inferred. */
struct todo {
	int64_t program, func, height;
	double samples;
};

struct todos {
	struct todo *v;
	size_t n, cap;
	struct hindex index;
};

static int add_todo(void *arg, const struct store_cid *c)
{
	struct todos *t = arg;
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint64_t h = expl_hash(c->program_id, c->function_id, c->height);
	uint32_t i;

	while ((i = hindex__next(&t->index, &p, h)) != HINDEX_NONE)
		if (t->v[i].program == c->program_id &&
		    t->v[i].func == c->function_id &&
		    t->v[i].height == c->height) {
			t->v[i].samples += (double)c->samples;
			return 0;
		}
	if (grow(&t->v, &t->cap, t->n + 1, sizeof(*t->v), 256) ||
	    hindex__insert(&t->index, h, (uint32_t)t->n))
		return -ENOMEM;
	t->v[t->n++] = (struct todo){ c->program_id, c->function_id,
				      c->height, (double)c->samples };
	return 0;
}

static int heaviest_first(const void *a, const void *b)
{
	const struct todo *x = a, *y = b;

	return x->samples > y->samples ? -1 : x->samples < y->samples;
}

/*
 * Explains every CID in @t with @inf into @e, the heaviest first:
 * lookups always, searches while @b's limit lasts from now: reading the
 * binaries had a limit of its own (a big binary's calls took all of
 * one shared budget before the search began), and so has building
 * their call graph, before it.  What the budget leaves unexplained is
 * unknown, counted in @p.  0 or -ENOMEM.
 */
static int explain_all(struct run_profile *p, struct infer *inf,
		       struct todos *t, const struct budget *within,
		       struct expls *e)
{
	int ret = infer__index_calls(inf);
	const struct budget sb = { cpu_now(), within->limit }, *b = &sb;
	const struct infer_cand *c;
	bool over = false;
	char limit[48] = "";

	if (!isinf(b->limit))
		snprintf(limit, sizeof(limit), " (budget %.1f s)", b->limit);
	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), heaviest_first);
	/* every CID sampled weighs the chains through it, the first
	 * search's as much as the last's */
	for (size_t i = 0; i < t->n && !ret; i++)
		if (infer__observe(inf, t->v[i].program, t->v[i].func,
				   t->v[i].height) == -ENOMEM)
			ret = -ENOMEM;
	for (size_t i = 0; i < t->n && !ret; i++) {
		const struct todo *d = &t->v[i];
		struct infer_outcome o;

		log__progress("inferring call paths: %zu of %zu context "
			      "identifiers, %.1f s of CPU%s", i, t->n,
			      cpu_now() - b->start, limit);

		if (!over && !infer__lookup(inf, d->program, d->func,
					    d->height, &c) &&
		    (over = budget_left(b) <= 0))
			infer__stop_searching(inf);
		if (over && !infer__lookup(inf, d->program, d->func,
					   d->height, &c)) {
			p->over_budget_cids++;
			p->over_budget_samples += d->samples;
			ret = infer__unknown(inf, d->func, d->height, &o);
		} else {
			ret = infer__explain_counted(inf, d->program,
					d->func, d->height, d->samples, &o);
		}
		if (!ret)
			ret = keep_outcome(e, d->program, d->func, d->height,
					   &o);
	}
	return ret;
}

/* Reading speed of the binaries' calls (binary/callsites.h: a byte
 * scan, Capstone only for frame-pointer functions; on the 2-CPU VM
 * cc1's 33 MB of code took 0.6 s), to keep reading them in budget. */
#define DECODE_BYTES_PER_S 40e6

/* The kernel call chains of each CID (store__run_kchains()): entries
 * of one CID linked from the first, which the index finds. */
struct kchains {
	struct kchain_entry {
		int64_t program_id, function_id, height;
		char *chain;
		int64_t samples;
		uint32_t next;		/* UINT32_MAX: the last */
	} *v;
	size_t n, cap;
	struct hindex index;	/* over the first entry of each CID */
};

static uint64_t kchain_hash(int64_t program_id, int64_t function_id,
			    int64_t height)
{
	return hindex__mix(hindex__mix(hindex__mix(11, (uint64_t)program_id),
				       (uint64_t)function_id), (uint64_t)height);
}

/* The first chain of a CID, or UINT32_MAX. */
static uint32_t kchain_first(const struct kchains *k, int64_t program_id,
			     int64_t function_id, int64_t height)
{
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint32_t i;

	while ((i = hindex__next(&k->index, &p, kchain_hash(program_id,
			function_id, height))) != HINDEX_NONE)
		if (k->v[i].program_id == program_id &&
		    k->v[i].function_id == function_id &&
		    k->v[i].height == height)
			return i;
	return UINT32_MAX;
}

static int add_kchain(void *arg, const struct store_kchain *c)
{
	struct kchains *k = arg;
	uint32_t first = kchain_first(k, c->program_id, c->function_id,
				      c->height);

	if (k->n >= UINT32_MAX - 1 ||
	    grow(&k->v, &k->cap, k->n + 1, sizeof(*k->v), 64))
		return -ENOMEM;
	k->v[k->n] = (struct kchain_entry){ c->program_id, c->function_id,
		c->height, strdup(c->chain), c->samples, UINT32_MAX };
	if (!k->v[k->n].chain)
		return -ENOMEM;
	if (first == UINT32_MAX) {
		if (hindex__insert(&k->index, kchain_hash(c->program_id,
				   c->function_id, c->height), (uint32_t)k->n))
			return -ENOMEM;
	} else {	/* second on: after the first */
		k->v[k->n].next = k->v[first].next;
		k->v[first].next = (uint32_t)k->n;
	}
	k->n++;
	return 0;
}

static void kchains_free(struct kchains *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->v[i].chain);
	free(k->v);
	hindex__exit(&k->index);
}

/* Inferring a selection's CIDs, under process frames or not. */
struct cid_load {
	struct run_profile *p;
	struct infer *inf;
	struct expls *e;
	const struct budget *b;
	bool processes;
	enum store_group by;	/* with @processes: their frames' */
	int64_t pid;		/* the last row's process ... */
	char *comm;
	uint32_t node;		/* ... and its frame's node (the root when
				 * processes stay together) */
	struct kchains kchains;
};

/* @kernel samples of outcome @o below [kernel] and, where the CID has
 * kernel chains, each chain's share of them below it too (the chains
 * are counted over the CID's processes, so one process's share of a
 * chain is apportioned). */
static int add_kernel(struct cid_load *l, const struct store_cid *c,
		      const struct infer_outcome *o, int64_t frame,
		      double kernel)
{
	uint32_t first = kchain_first(&l->kchains, c->program_id,
				      c->function_id, c->height);
	double total = 0, done = 0;
	int64_t frames[64];
	int ret = 0;

	for (uint32_t i = first; i != UINT32_MAX; i = l->kchains.v[i].next)
		total += (double)l->kchains.v[i].samples;
	frames[0] = frame;
	for (uint32_t i = first; i != UINT32_MAX && total > 0 && !ret;
	     i = l->kchains.v[i].next) {
		const struct kchain_entry *k = &l->kchains.v[i];
		char *copy = strdup(k->chain), *name, *save = NULL;
		size_t n = 1;
		double w = kernel * (double)k->samples / total;

		if (!copy)
			return -ENOMEM;
		for (name = strtok_r(copy, ";", &save);
		     name && n < sizeof(frames) / sizeof(frames[0]) && !ret;
		     name = strtok_r(NULL, ";", &save))
			if (!(frames[n++] = cct__kernel_function(l->p->cct,
								  name)))
				ret = -ENOMEM;
		free(copy);
		if (!ret)
			ret = infer__add_outcome_chain(l->inf, l->node, frames,
						       n, o, w);
		done += w;
	}
	if (!ret && kernel - done > 1e-9)
		ret = infer__add_outcome(l->inf, l->node, frame, o,
					 kernel - done);
	return ret;
}

/* The node of @c's process frame, in @l->node. */
static int process_node(struct cid_load *l, const struct store_cid *c)
{
	int64_t pid = l->by != STORE_BY_COMM ? c->pid : 0, frame;

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

/* One row of CID samples, as its explanation says (one made now when
 * it has none: a row a daemon's live segment added since its stamp was
 * read); those taken in the kernel go to [kernel] below the context
 * that entered it. */
static int infer_cid(void *arg, const struct store_cid *c)
{
	struct cid_load *l = arg;
	int64_t kernel = c->kernel > 0 && c->kernel <= c->samples ? c->kernel
								   : 0;
	int64_t frame = kernel ? cct__kernel(l->p->cct) : 0;
	const struct expl *x = run_profile__find_expl(l->e, c->program_id,
						      c->function_id,
						      c->height);
	struct infer_outcome o;
	int ret = l->processes ? process_node(l, c) : 0;

	if (!ret && kernel && !frame)
		ret = -ENOMEM;
	if (!ret && !x) {
		struct todos t = { 0 };

		ret = add_todo(&t, c);
		if (!ret)
			ret = explain_all(l->p, l->inf, &t, l->b, l->e);
		free(t.v);
		hindex__exit(&t.index);
		x = run_profile__find_expl(l->e, c->program_id,
					   c->function_id, c->height);
	}
	if (ret || !x)
		return ret ? ret : -ENOMEM;
	o = (struct infer_outcome){ x->how, x->exact, x->n,
				    &l->e->sols[x->first] };
	if (c->samples > kernel)
		ret = infer__add_outcome(l->inf, l->node, 0, &o,
					 (double)(c->samples - kernel));
	if (!ret && kernel)
		ret = add_kernel(l, c, &o, frame, (double)kernel);
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

/* The selection's CIDs into the CCT as @e explains them, under
 * process frames with RUN_PROFILE_BY_COMM, _BY_PID or _BY_THREAD in
 * @flags; its commands into @p. */
static int infer_cids(struct store *st, const struct store_selection *sel,
		      unsigned flags, struct run_profile *p, struct infer *inf,
		      struct expls *e, const struct budget *b)
{
	struct cid_load l = { p, inf, e, b,
		flags & (RUN_PROFILE_BY_COMM | RUN_PROFILE_BY_PID |
			 RUN_PROFILE_BY_THREAD),
		flags & RUN_PROFILE_BY_THREAD ? STORE_BY_THREAD :
		flags & RUN_PROFILE_BY_PID ? STORE_BY_PID : STORE_BY_COMM,
		0, NULL, CCT_ROOT };
	int ret;

	if (store__run_comms(st, sel, add_comm, p) ||
	    (!sel->offcpu && !sel->wall &&
	     store__run_kchains(st, sel, add_kchain, &l.kchains))) {
		kchains_free(&l.kchains);
		return -1;
	}
	ret = l.processes ?
	      store__run_process_cids(st, sel, l.by, infer_cid, &l) :
	      store__run_cids(st, sel, infer_cid, &l);
	free(l.comm);
	kchains_free(&l.kchains);
	return ret;
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

/* Notes that a map has a node (*@arg) and stops there: its return is
 * STORE_NONE's too, which a map that is not there returns. */
static int stop_at_first(void *arg, const struct store_node *n)
{
	(void)n;
	*(bool *)arg = true;
	return 1;
}

/* The programs of @sel into @p (how many, which have no map, the rates
 * their validation measured); with @inf, their path maps into it. */
static int load_maps(struct store *st, const struct store_selection *sel,
		     struct run_profile *p, struct infer *inf)
{
	struct id_list ps = { 0 };
	struct map_load ml = { 0 };
	struct own_list own = { 0 };
	int ret = -1;

	if (store__run_programs(st, sel, add_to_list, &ps) ||
	    (inf && load_own(st, sel, &own)))
		goto out_store;
	for (size_t i = 0; i < ps.n; i++) {
		const struct store_module *m = run_profile__module(p, ps.v[i]);
		bool mapped = false;
		int r;

		p->programs++;
		free(ml.ids);
		ml = (struct map_load){ .inf = inf, .own = &own };
		if (inf && infer__begin_map(inf, ps.v[i]))
			goto out_nomem;
		r = inf ? store__map_nodes(st, ps.v[i], 0, load_node, &ml) :
		    store__map_nodes(st, ps.v[i], 0, stop_at_first, &mapped);
		/* then the build's fragments, into the same engine map */
		if (inf && r >= 0) {
			ml.from = ml.n;
			ml.fragment = true;
			if (store__map_nodes(st, ps.v[i], STORE_FRAGMENTS_RUN,
					     load_node, &ml) < 0)
				r = -1;
		}
		if (r < 0 && store__stopped(st) == -EINVAL) {
			log_error("the path map of %s is corrupt (a node "
				  "without its parent)", m ? m->path : "?");
			goto out;
		}
		if (r < 0)
			goto out_store;
		if (inf && infer__end_map(inf))
			goto out_nomem;
		if (add_rates(st, p, ps.v[i]))
			goto out_store;
		if (inf ? !ml.n : !mapped) {
			size_t at = strlen(p->unmapped_list);
			const char *path = m ? m->path : "?";

			p->unmapped++;
			snprintf(p->unmapped_path, sizeof(p->unmapped_path),
				 "%s", m ? m->path : "");
			if (at + strlen(path) + 8 < sizeof(p->unmapped_list))
				snprintf(p->unmapped_list + at,
					 sizeof(p->unmapped_list) - at, "%s%s",
					 at ? ", " : "", path);
			else if (!strstr(p->unmapped_list, ", ..."))
				snprintf(p->unmapped_list + at,
					 sizeof(p->unmapped_list) - at, ", ...");
		}
	}
	ret = 0;
	goto out;
out_nomem:
	log_error("out of memory");
	goto out;
out_store:
	log_error("%s", store__error(st));
out:
	free(ml.ids);
	free(ps.v);
	free(own.v);
	return ret;
}

/* The selection whose programs' maps an inference loads: every
 * process of its runs, since a run's whole inference is stored; off
 * CPU, those of the switches too (a shell that only waited in wait4
 * has no CPU sample, and its map explains its wait). */
static struct store_selection whole_runs(const struct store_selection *sel)
{
	struct store_selection all = *sel;

	all.pid = all.tid = 0;
	all.program = all.comm = NULL;
	all.wall = sel->offcpu || sel->wall;	/* both tables' programs */
	all.offcpu = false;
	return all;
}

/* Opens @sel's profile and an inference engine without maps (*@infp,
 * the caller's to free); counts its programs.  0, 1 (logged) when there
 * is nothing to infer, -1 after logging. */
static int open_inference(struct store *st, const struct store_selection *sel,
			  unsigned flags, struct run_profile *p,
			  struct infer **infp)
{
	struct store_selection all = whole_runs(sel);
	int ret = open_profile(st, sel, flags, p);

	*infp = NULL;
	if (ret)
		return ret;
	p->whole = flags & RUN_PROFILE_WHOLE;
	p->flat = flags & RUN_PROFILE_FLAT;
	*infp = infer__new(p->cct, p->whole ?
		&(struct infer_limits){ .confidence = -1 } : NULL);
	if (!*infp) {
		log_error("out of memory");
		return -1;
	}
	return p->flat ? 0 : load_maps(st, &all, p, NULL);
}

/* The path maps of @sel's programs into @inf, and the binaries' direct
 * calls (RUN_PROFILE_STATIC) as far as @b allows.  0, -1 (logged). */
static int add_maps(struct store *st, const struct store_selection *sel,
		    struct run_profile *p, struct infer *inf,
		    const struct budget *b)
{
	struct store_selection all = whole_runs(sel);
	double left;

	if (p->flat)
		return 0;
	/* counted again as they load */
	p->programs = p->unmapped = 0;
	p->unmapped_list[0] = p->unmapped_path[0] = '\0';
	p->validated_run = 0;
	memset(p->validated, 0, sizeof(p->validated));
	memset(p->validated_correct, 0, sizeof(p->validated_correct));
	if (load_maps(st, &all, p, inf))
		return -1;
	if (!p->calls)
		return 0;
	left = budget_left(b);
	static_calls__limit(p->calls, left <= 0 ? 1 :
			    left >= (double)UINT64_MAX / DECODE_BYTES_PER_S ?
			    UINT64_MAX : (uint64_t)(left * DECODE_BYTES_PER_S));
	return load_static(st, &all, p, inf);
}

/* Whether run @id's stored inference (@old) still holds: the run and
 * the maps of its programs have not grown since, and its budget was
 * enough or as large as @budget_s.  @now gets what holds now. */
static int stored_holds(struct store *st, int64_t id, double budget_s,
			struct inference_stamp *old,
			struct inference_stamp *now, bool *holds)
{
	struct run_row row;
	int r = store__inference_stamp(st, id, old);

	*now = (struct inference_stamp){ 0 };
	if (r < 0 || store__run(st, id, &row) < 0 ||
	    store__run_map_samples(st, id, &now->map_samples))
		return -1;
	now->run_samples = row.samples;
	now->budget_s = budget_s;
	*holds = !r && old->run_samples == now->run_samples &&
		 old->map_samples == now->map_samples &&
		 (!(old->over_budget_cids || old->over_budget_modules) ||
		  budget_s <= old->budget_s);
	return 0;
}

/* What the header says of the binaries' calls, from a stored stamp. */
static void stamp_calls(struct run_profile *p, const struct inference_stamp *t)
{
	struct static_calls_stats *c = &p->calls_stats;

	c->modules = (unsigned)t->static_modules;
	c->unreadable = (unsigned)t->unreadable;
	c->over_budget = (unsigned)t->over_budget_modules;
	c->calls = (uint64_t)t->static_calls;
	snprintf(c->unreadable_path, sizeof(c->unreadable_path), "%s",
		 t->unreadable_path);
	snprintf(c->unreadable_why, sizeof(c->unreadable_why), "%s",
		 t->unreadable_why);
	p->budget_s = t->budget_s;
	p->over_budget_cids = t->over_budget_cids;
	p->over_budget_samples = t->over_budget_samples;
	p->searches = t->searches;
	p->inference_cpu_s = t->cpu_s;
}

/* The CIDs of the selections @sels[0, @n) into @e, the heaviest first
 * within @b (explain_all()).  0, or -1 after logging why. */
static int explain_selected(struct store *st,
			    const struct store_selection *sels, size_t n,
			    struct run_profile *p, struct infer *inf,
			    const struct budget *b, struct expls *e)
{
	struct todos t = { 0 };
	int ret = 0;

	for (size_t i = 0; i < n && !ret; i++)
		if (store__run_cids(st, &sels[i], add_todo, &t)) {
			log_error("%s", store__error(st));
			ret = -1;
		}
	if (!ret && explain_all(p, inf, &t, b, e)) {
		log_error("out of memory");
		ret = -1;
	}
	free(t.v);
	hindex__exit(&t.index);
	return ret;
}

/* What the inference just made did, into stamp @s (stamp_calls()
 * reads it back). */
static void stamp_inference(const struct run_profile *p,
			    struct inference_stamp *s)
{
	const struct static_calls_stats *c = &p->calls_stats;

	s->static_calls = (int64_t)c->calls;
	s->static_modules = c->modules;
	s->unreadable = c->unreadable;
	snprintf(s->unreadable_path, sizeof(s->unreadable_path), "%s",
		 c->unreadable_path);
	snprintf(s->unreadable_why, sizeof(s->unreadable_why), "%s",
		 c->unreadable_why);
	s->over_budget_cids = p->over_budget_cids;
	s->over_budget_samples = p->over_budget_samples;
	s->over_budget_modules = c->over_budget;
	s->searches = p->searches;
	s->cpu_s = p->inference_cpu_s;
}

/* Explains the CIDs of the stale runs @stale with @inf into @e, and
 * stores each run's inference (@stamps: what holds now) when @save_it. */
static int infer_stale(struct store *st, struct run_profile *p,
		       struct infer *inf, const struct id_list *stale,
		       struct inference_stamp *stamps, bool save_it,
		       const struct budget *b, struct expls *e)
{
	struct store_selection *sels = calloc(stale->n, sizeof(*sels));
	int ret;

	if (!sels) {
		log_error("out of memory");
		return -1;
	}
	for (size_t i = 0; i < stale->n; i++)
		sels[i].run_id = stale->v[i];
	ret = explain_selected(st, sels, stale->n, p, inf, b, e);
	free(sels);
	if (p->calls)
		p->calls_stats = *static_calls__stats(p->calls);
	p->searches = (int64_t)infer__stats(inf)->searches;
	p->inference_cpu_s = cpu_now() - b->start;
	for (size_t i = 0; i < stale->n && !ret && save_it; i++) {
		int r;

		stamp_inference(p, &stamps[i]);
		r = stored__save(st, p, stale->v[i], e, &stamps[i]);
		if (r)
			log_warn("%s: the inferred contexts are not stored; "
				 "the report is complete", r == -ENOMEM ?
				 "out of memory" : store__error(st));
	}
	return ret;
}

/*
 * The explanations of @sel's runs into @e: each run's stored inference
 * where it still holds; the others inferred now (their CIDs, the
 * heaviest first, within @b) and stored when @flags allow.  *@infp: the
 * engine the profile is then built with.
 */
static int explain_runs(struct store *st, const struct store_selection *sel,
			unsigned flags, double budget_s, struct run_profile *p,
			const struct budget *b, struct expls *e,
			struct infer **infp)
{
	struct id_list runs = { 0 }, stale = { 0 };
	struct inference_stamp *stamps = NULL, old;
	bool keep = !(flags & (RUN_PROFILE_WHOLE | RUN_PROFILE_FLAT));
	int ret = open_inference(st, sel, flags, p, infp);

	if (ret)
		return ret;
	if (!keep)	/* views: inferred as they are read */
		return add_maps(st, sel, p, *infp, b) ||
		       explain_selected(st, sel, 1, p, *infp, b, e) ? -1 : 0;
	ret = -1;
	if (sel->run_id ? add_to_list(&runs, sel->run_id) :
	    store__window_run_ids(st, sel, add_to_list, &runs)) {
		log_error("%s", store__error(st));
		goto out;
	}
	stamps = calloc(runs.n ? runs.n : 1, sizeof(*stamps));
	if (!stamps)
		goto out_nomem;
	for (size_t i = 0; i < runs.n; i++) {
		bool holds;

		if (stored_holds(st, runs.v[i], budget_s, &old,
				 &stamps[stale.n], &holds)) {
			log_error("%s", store__error(st));
			goto out;
		}
		if (holds) {
			stamp_calls(p, &old);
			if (stored__load(st, p, runs.v[i], e))
				goto out;
		} else if (add_to_list(&stale, runs.v[i])) {
			goto out_nomem;
		}
	}
	p->reused = runs.n && !stale.n;
	ret = 0;
	if (stale.n)
		ret = add_maps(st, sel, p, *infp, b) ||
		      infer_stale(st, p, *infp, &stale, stamps,
				  !store__readonly(st) &&
				  (flags & RUN_PROFILE_SAVE), b, e) ? -1 : 0;
	/* a CID seen only switching out (a read in io_wait) has no stored
	 * explanation: infer_cid() makes one, with the maps */
	else if (sel->offcpu || sel->wall)
		ret = add_maps(st, sel, p, *infp, b) ? -1 : 0;
	goto out;
out_nomem:
	log_error("out of memory");
out:
	free(runs.v);
	free(stale.v);
	free(stamps);
	return ret;
}

int run_profile__infer_within(struct store *st,
			      const struct store_selection *sel,
			      unsigned flags, double budget_s,
			      struct run_profile *p)
{
	struct budget b = { cpu_now(), budget_s };
	struct expls e = { 0 };
	struct infer *inf = NULL;
	int ret;

	log__progress_start();
	ret = explain_runs(st, sel, flags, budget_s, p, &b, &e, &inf);
	p->filtered = sel->pid || sel->tid || sel->program || sel->comm;
	p->offcpu = sel->offcpu;
	p->wall = sel->wall;

	if (ret)
		goto out;
	ret = -1;
	/* the sampled instructions split a function's CPU samples among
	 * what is inlined there; where a thread waited no sample says (its
	 * wait took all of read() under one CPU sample's inlined frame) */
	if (infer_cids(st, sel, flags, p, inf, &e, &b) ||
	    ((flags & RUN_PROFILE_PCS) && !sel->offcpu && !sel->wall &&
	     store__run_pcs(st, sel, add_pc, p))) {
		log_error("%s", store__error(st));
		goto out;
	}
	p->stats = *infer__stats(inf);
	if (p->calls && !p->reused)
		p->calls_stats = *static_calls__stats(p->calls);
	if (!p->reused)
		p->budget_s = budget_s;
	ret = 0;
out:
	infer__delete(inf);
	expls_free(&e);
	log__progress_end();
	return ret;
}

int run_profile__infer(struct store *st, const struct store_selection *sel,
		       unsigned flags, struct run_profile *p)
{
	return run_profile__infer_within(st, sel, flags,
					 RUN_PROFILE_BUDGET_S, p);
}

/* Whether every frame that context @shown shows is true of context
 * @truth: the same context, or one cut short under unknown callers
 * whose frames are @truth's innermost ones; of the innermost @frames
 * only, where a report shows no more. */
static bool shown_true(struct cct *t, uint32_t shown, uint32_t truth,
		       unsigned frames)
{
	for (; shown != truth && frames; frames--) {
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
			unsigned k, int64_t program, const struct map_load *ml,
			int (*fn)(void *arg, const struct run_score *s),
			void *arg)
{
	const struct store_module *m = run_profile__module(p, program);

	/* the run's samples weigh the chains through them, as in a
	 * report of the run (explain_all()) */
	for (size_t i = 0; i < ml->nleaves; i++)
		if (infer__observe(inf, program, ml->leaves[i].func,
				   ml->leaves[i].height) == -ENOMEM)
			return -ENOMEM;
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
					      l->node, UINT_MAX)) {
				sc.correct += w;
				sc.cut += w;
			}
			if (shown_true(p->cct, o.sols[j].node, l->node, k + 1))
				sc.correct_k += w;
		}
		if ((ret = fn(arg, &sc)))
			return ret;
	}
	return 0;
}

int run_profile__score(struct store *st, int64_t run_id, unsigned k,
		       int (*fn)(void *arg, const struct run_score *s),
		       void *arg)
{
	struct store_selection sel = { .run_id = run_id };
	struct run_profile p;
	struct id_list ps = { 0 };
	struct infer *inf;
	struct budget b = { cpu_now(), RUN_PROFILE_BUDGET_S };
	int ret = open_inference(st, &sel, RUN_PROFILE_STATIC, &p, &inf),
	    found = 0;

	if (!ret && add_maps(st, &sel, &p, inf, &b))
		ret = -1;
	if (!ret && store__run_programs(st, &sel, add_to_list, &ps)) {
		log_error("%s", store__error(st));
		ret = -1;
	}
	/* the true paths join the CCT after the maps: a true context and
	 * an inferred one are the same node when their frames are */
	for (size_t i = 0; !ret && i < ps.n; i++) {
		struct map_load ml = { .cct = p.cct, .collect = true };
		int r = store__map_nodes(st, ps.v[i], run_id, load_node, &ml);

		if (r < 0) {
			log_error("%s", store__error(st));
			ret = -1;
		} else if (!r) {
			found = 1;
			r = score_leaves(&p, inf, k, ps.v[i], &ml, fn, arg);
			if (r < 0)
				log_error("out of memory");
			if (r)
				ret = -1;
		}
		free(ml.ids);
		free(ml.cct_nodes);
		free(ml.leaves);
	}
	free(ps.v);
	infer__delete(inf);
	run_profile__exit(&p);
	return !ret && !found ? RUN_PROFILE_NONE : ret;
}

int run_profile__truth(struct store *st, int64_t run_id,
		       struct run_profile *p)
{
	struct store_selection sel = { .run_id = run_id };
	struct id_list ps = { 0 };
	int ret = open_profile(st, &sel, 0, p), found = 0;

	if (ret)
		return ret;
	if (store__run_programs(st, &sel, add_to_list, &ps)) {
		log_error("%s", store__error(st));
		ret = -1;
	}
	for (size_t i = 0; !ret && i < ps.n; i++) {
		struct map_load ml = { .cct = p->cct };
		int r = store__map_nodes(st, ps.v[i], run_id, load_node, &ml);

		free(ml.ids);
		free(ml.cct_nodes);
		if (r < 0) {
			log_error("%s", store__error(st));
			ret = -1;
		} else if (r == STORE_NONE) {
			continue;
		}
		found = 1;
		p->programs++;
	}
	free(ps.v);
	if (!ret && !found)
		ret = RUN_PROFILE_NONE;
	p->stats.samples = p->stats.by_how[CCT_PRECISE] = cct__total(p->cct);
	return ret;
}

void run_profile__exit(struct run_profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nmodules; i++) {
		free((char *)p->modules[i].path);
		free((char *)p->modules[i].build_id);
		if (p->debug)
			module__delete(p->debug[i]);
	}
	free(p->debug);
	free(p->debug_looked);
	lines__delete(p->debug_lines);
	free(p->modules);
	free(p->pcs);
	static_calls__delete(p->calls);
	cct__delete(p->cct);
	memset(p, 0, sizeof(*p));
}
