/*
 * children.c - the top-down view (report --children), as perf report
 * --children prints it: every function with its samples and those of
 * all it calls (children) beside its own (self), the heaviest first,
 * and below each what it calls, --k levels deep.
 *
 * A function's children weight counts each sample once, however often
 * the function recurses on its path (its outermost frames only), as
 * perf's does.  The tree below a function merges its outermost frames'
 * subtrees.  Everything is walked without recursion: a crafted database
 * can hold paths of any depth.  Work is bounded as the forests' is
 * (inference/kccf.h): a table over deep paths at k = inf is depth^2
 * lines; past KCCF_MAX_STEPS nodes merged it stops and asks for a
 * smaller --k.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/hindex.h"
#include "common/log.h"
#include "report/render.h"

/* The CCT's nodes with their children listed (CSR) and their weights. */
struct tree {
	size_t n;
	const struct cct *t;
	uint32_t *first;	/* children of i: kids[first[i] .. first[i+1]) */
	uint32_t *kids;
	double *self, *total;
};

/* A function: its own samples, those below its outermost frames. */
struct fn {
	int64_t frame;
	double self, children;
	uint32_t on_path;	/* its frames on the path being walked */
	uint32_t nouter;	/* its outermost frames, */
	size_t outer;		/* from here in the list of all (by
				 * function) */
};

struct fns {
	struct fn *v;
	size_t n, cap;
	struct hindex index;
};

/* A line of a function's top-down tree: (parent line, frame). */
struct line {
	uint32_t parent;
	int64_t frame;
	double self, total;
	uint32_t first, next;	/* children, sorted, once built */
	uint32_t depth;
};

struct lines_of {
	struct line *v;
	size_t n, cap;
	struct hindex index;
};

static uint64_t frame_hash(int64_t frame)
{
	return hindex__mix(17, (uint64_t)frame);
}

/* The function of @frame in @f, added when @add.  NULL when out of
 * memory or not there. */
static struct fn *fn_of(struct fns *f, int64_t frame, bool add)
{
	uint64_t h = frame_hash(frame);
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint32_t i;

	while ((i = hindex__next(&f->index, &p, h)) != HINDEX_NONE)
		if (f->v[i].frame == frame)
			return &f->v[i];
	if (!add || grow(&f->v, &f->cap, f->n + 1, sizeof(*f->v), 256) ||
	    hindex__insert(&f->index, h, (uint32_t)f->n))
		return NULL;
	f->v[f->n] = (struct fn){ .frame = frame };
	return &f->v[f->n++];
}

static void tree_free(struct tree *t)
{
	free(t->first);
	free(t->kids);
	free(t->self);
	free(t->total);
}

/* @t's weights and children lists.  0 or -ENOMEM. */
static int tree_build(struct tree *t, const struct cct *c)
{
	size_t nrec;
	const struct cct_record *r = cct__records(c, &nrec);
	uint32_t *fill;

	t->t = c;
	t->n = cct__size(c);
	t->first = calloc(t->n + 1, sizeof(*t->first));
	t->kids = calloc(t->n ? t->n : 1, sizeof(*t->kids));
	t->self = calloc(t->n ? t->n : 1, sizeof(*t->self));
	t->total = calloc(t->n ? t->n : 1, sizeof(*t->total));
	fill = calloc(t->n + 1, sizeof(*fill));
	if (!t->first || !t->kids || !t->self || !t->total || !fill) {
		free(fill);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nrec; i++)
		t->self[r[i].node] += r[i].weight;
	/* a child is made after its parent: a higher index */
	for (size_t i = t->n; i-- > 1;) {
		uint32_t up = cct__node((struct cct *)c, (uint32_t)i)->parent;

		t->total[i] += t->self[i];
		t->total[up] += t->total[i];
		t->first[up + 1]++;
	}
	t->total[0] += t->self[0];
	for (size_t i = 0; i < t->n; i++)
		t->first[i + 1] += t->first[i];
	for (size_t i = 1; i < t->n; i++) {
		uint32_t up = cct__node((struct cct *)c, (uint32_t)i)->parent;

		t->kids[t->first[up] + fill[up]++] = (uint32_t)i;
	}
	free(fill);
	return 0;
}

/* Whether frame @id is one the table lists: a function, inlined or
 * not (not a process, [kernel] or an unknown callers' frame). */
static bool listed(const struct cct *t, int64_t id)
{
	enum cct_frame_kind k = cct__kind(t, id);

	return k == CCT_FUNCTION || k == CCT_INLINED;
}

/* Orders @outer (@n nodes) by function, each function's from its
 * @outer on: a counting sort.  0 or -ENOMEM. */
static int group_outer(const struct tree *t, struct fns *f, uint32_t *outer,
		       size_t n)
{
	uint32_t *by = malloc((n ? n : 1) * sizeof(*by));
	size_t at = 0;

	if (!by)
		return -ENOMEM;
	for (size_t i = 0; i < f->n; i++) {
		f->v[i].outer = at;
		at += f->v[i].nouter;
		f->v[i].nouter = 0;
	}
	for (size_t i = 0; i < n; i++) {
		struct fn *fn = fn_of(f, cct__node((struct cct *)t->t,
						   outer[i])->frame, false);

		by[fn->outer + fn->nouter++] = outer[i];
	}
	memcpy(outer, by, n * sizeof(*by));
	free(by);
	return 0;
}

/*
 * Every function's self and children weights into @f, and the nodes
 * that are a function's outermost frame on their path into @outer
 * (@nouter of them): a depth-first walk keeping each function's frames
 * on the path.  0 or -ENOMEM.
 */
static int weigh(const struct tree *t, struct fns *f, uint32_t **outer,
		 size_t *nouter)
{
	uint32_t *stack, *next;	/* the path, and each level's next child */
	size_t depth = 0;
	int ret = 0;

	*outer = malloc((t->n ? t->n : 1) * sizeof(**outer));
	stack = malloc((t->n + 1) * sizeof(*stack));
	next = malloc((t->n + 1) * sizeof(*next));
	if (!*outer || !stack || !next) {
		free(stack);
		free(next);
		return -ENOMEM;
	}
	*nouter = 0;
	stack[0] = 0;
	next[0] = t->first[0];
	while (!ret) {
		uint32_t at = stack[depth];

		if (next[depth] < t->first[at + 1]) {
			uint32_t c = t->kids[next[depth]++];
			int64_t frame = cct__node((struct cct *)t->t, c)->frame;
			struct fn *fn = NULL;

			if (listed(t->t, frame) && !(fn = fn_of(f, frame, true))) {
				ret = -ENOMEM;
				break;
			}
			if (fn) {
				fn->self += t->self[c];
				if (!fn->on_path++) {
					fn->children += t->total[c];
					fn->nouter++;
					(*outer)[(*nouter)++] = c;
				}
			}
			stack[++depth] = c;
			next[depth] = t->first[c];
			continue;
		}
		if (!depth)
			break;
		{
			int64_t frame = cct__node((struct cct *)t->t, at)->frame;
			struct fn *fn = listed(t->t, frame) ?
					fn_of(f, frame, false) : NULL;

			if (fn)
				fn->on_path--;
		}
		depth--;
	}
	free(stack);
	free(next);
	return ret ? ret : group_outer(t, f, *outer, *nouter);
}

static uint64_t line_hash(uint32_t parent, int64_t frame)
{
	return hindex__mix(hindex__mix(23, parent), (uint64_t)frame);
}

/* The line (@parent, @frame) of @l, made when new.  Its index, or
 * HINDEX_NONE when out of memory. */
static uint32_t line_of(struct lines_of *l, uint32_t parent, int64_t frame,
			uint32_t depth)
{
	uint64_t h = line_hash(parent, frame);
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint32_t i;

	while ((i = hindex__next(&l->index, &p, h)) != HINDEX_NONE)
		if (l->v[i].parent == parent && l->v[i].frame == frame)
			return i;
	if (grow(&l->v, &l->cap, l->n + 1, sizeof(*l->v), 64) ||
	    hindex__insert(&l->index, h, (uint32_t)l->n))
		return HINDEX_NONE;
	l->v[l->n] = (struct line){ .parent = parent, .frame = frame,
		.first = HINDEX_NONE, .next = HINDEX_NONE, .depth = depth };
	return (uint32_t)l->n++;
}

/*
 * The tree below function @fn: the subtrees of its outermost frames
 * (@outer), merged by frame, @levels deep, into @l (line 0: the
 * function itself; NULL: only counted), each node merged taken off
 * *@steps.  0, -ENOMEM, or -E2BIG when the steps run out.
 */
static int merge_below(const struct tree *t, const struct fn *fn,
		       const uint32_t *outer, uint32_t levels,
		       struct lines_of *l, uint64_t *steps, uint32_t *stack,
		       uint32_t *at_line, uint32_t *next)
{
	if (l && line_of(l, HINDEX_NONE, fn->frame, 0) != 0)
		return -ENOMEM;
	outer += fn->outer;
	for (size_t o = 0; o < fn->nouter; o++) {
		size_t depth = 0;

		if (l) {
			l->v[0].self += t->self[outer[o]];
			l->v[0].total += t->total[outer[o]];
		}
		stack[0] = outer[o];
		at_line[0] = 0;
		next[0] = t->first[outer[o]];
		for (;;) {
			uint32_t at = stack[depth], c, li;
			int64_t frame;

			if (depth >= levels || next[depth] >= t->first[at + 1]) {
				if (!depth)
					break;
				depth--;
				continue;
			}
			if (!*steps)
				return -E2BIG;
			--*steps;
			c = t->kids[next[depth]++];
			frame = cct__node((struct cct *)t->t, c)->frame;
			li = 0;
			if (l) {
				li = line_of(l, at_line[depth], frame,
					     (uint32_t)depth + 1);
				if (li == HINDEX_NONE)
					return -ENOMEM;
				l->v[li].self += t->self[c];
				l->v[li].total += t->total[c];
			}
			stack[++depth] = c;
			at_line[depth] = li;
			next[depth] = t->first[c];
		}
	}
	return 0;
}

static const struct line *sort_lines;

static int heavier_line(const void *a, const void *b)
{
	const struct line *x = &sort_lines[*(const uint32_t *)a];
	const struct line *y = &sort_lines[*(const uint32_t *)b];

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

/* Links each line's children, the heaviest first.  0 or -ENOMEM. */
static int link_lines(struct lines_of *l)
{
	uint32_t *order = malloc((l->n ? l->n : 1) * sizeof(*order));

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < l->n; i++)
		order[i] = (uint32_t)i;
	sort_lines = l->v;
	qsort(order, l->n, sizeof(*order), heavier_line);
	/* the lightest first, each pushed in front of its siblings */
	for (size_t i = l->n; i-- > 0;) {
		struct line *x = &l->v[order[i]];

		if (x->parent == HINDEX_NONE)
			continue;
		x->next = l->v[x->parent].first;
		l->v[x->parent].first = order[i];
	}
	free(order);
	return 0;
}

/* The columns before a line's name: 31 characters. */
#define COLUMNS "%31s"

static void print_line(const struct render *r, const struct line *x)
{
	double total = r->total > 0 ? r->total : 1;
	bool whole = fabs(x->total - round(x->total)) < 1e-6;

	fprintf(r->out, whole ? "%8.2f%% %7.2f%% %11.0f " :
		"%8.2f%% %7.2f%% %11.1f ", 100 * x->total / total,
		100 * x->self / total, x->total);
	render__indent(r, x->depth);
	fprintf(r->out, "%s%s\n", x->depth ? "-> " : "",
		cct__name(r->p->cct, x->frame));
}

/* Prints @l's lines depth first (line 0 is the function), each shown
 * above --min-percent; the callees of a line all under it, in one line
 * that says how many. */
static void print_lines(const struct render *r, const struct lines_of *l,
			uint32_t *stack)
{
	double min = r->v->min_percent / 100 * r->total;
	size_t depth = 0;

	print_line(r, &l->v[0]);
	stack[0] = l->v[0].first;
	for (;;) {
		uint32_t i = stack[depth];
		double hidden = 0;
		unsigned count = 0;

		if (i == HINDEX_NONE) {
			if (!depth)
				break;
			depth--;
			continue;
		}
		stack[depth] = l->v[i].next;
		if (l->v[i].total < min) {
			/* the rest of the siblings are lighter still */
			for (uint32_t j = i; j != HINDEX_NONE; j = l->v[j].next) {
				hidden += l->v[j].total;
				count++;
			}
			stack[depth] = HINDEX_NONE;
			fprintf(r->out, COLUMNS, "");
			render__indent(r, l->v[i].depth);
			fprintf(r->out, "-> [%u callee%s, each under the "
				"thresholds: %.2f%%]\n", count,
				count > 1 ? "s" : "", r->total > 0 ?
				100 * hidden / r->total : 0.0);
			continue;
		}
		print_line(r, &l->v[i]);
		stack[++depth] = l->v[i].first;
	}
}

static const struct fn *sort_fns;

static int heavier_fn(const void *a, const void *b)
{
	const struct fn *x = &sort_fns[*(const uint32_t *)a];
	const struct fn *y = &sort_fns[*(const uint32_t *)b];

	if (x->children != y->children)
		return x->children > y->children ? -1 : 1;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

int render__children(const struct render *r)
{
	struct tree t = { 0 };
	struct fns f = { 0 };
	struct lines_of l = { 0 };
	uint32_t *outer = NULL, *order = NULL, *stack = NULL, *at_line = NULL;
	uint32_t *next = NULL;
	uint32_t levels = r->v->k == KCCF_INF ? UINT32_MAX : r->v->k;
	size_t nouter = 0;
	uint64_t steps = KCCF_MAX_STEPS;
	double min = r->v->min_percent / 100 * r->total;
	int ret = -ENOMEM;

	if (tree_build(&t, r->p->cct) || weigh(&t, &f, &outer, &nouter))
		goto out;
	order = malloc((f.n ? f.n : 1) * sizeof(*order));
	stack = malloc((t.n + 1) * sizeof(*stack));
	at_line = malloc((t.n + 1) * sizeof(*at_line));
	next = malloc((t.n + 1) * sizeof(*next));
	if (!order || !stack || !at_line || !next)
		goto out;
	for (size_t i = 0; i < f.n; i++)
		order[i] = (uint32_t)i;
	sort_fns = f.v;
	qsort(order, f.n, sizeof(*order), heavier_fn);
	/* counted first: a table past the bound prints nothing */
	ret = 0;
	for (size_t i = 0; i < f.n && !ret; i++) {
		const struct fn *fn = &f.v[order[i]];

		if (fn->children < min || fn->children <= 0)
			break;
		ret = merge_below(&t, fn, outer, levels, NULL, &steps, stack,
				  at_line, next);
	}
	if (ret)
		goto out;
	steps = KCCF_MAX_STEPS;

	render__header(r);
	fprintf(r->out, "children: a function's samples with all it calls, "
		"beside its own (self), as perf report --children; below "
		"each, what it calls, ");
	if (levels == UINT32_MAX)
		fprintf(r->out, "every level");
	else
		fprintf(r->out, "%u level%s", levels, levels == 1 ? "" : "s");
	fprintf(r->out, " deep (--k); lines under %g%% of all samples "
		"hidden\n\n%9s %8s %11s %s\n", r->v->min_percent, "children",
		"self", render__unit(r), "function -> callees");
	ret = 0;
	for (size_t i = 0; i < f.n && !ret; i++) {
		const struct fn *fn = &f.v[order[i]];

		if (fn->children < min || fn->children <= 0)
			break;
		hindex__clear(&l.index);
		l.n = 0;
		ret = merge_below(&t, fn, outer, levels, &l, &steps, stack,
				  at_line, next);
		if (!ret)
			ret = link_lines(&l);
		if (ret)
			break;
		l.v[0].self = fn->self;	/* of every frame, recursive too */
		print_lines(r, &l, stack);
	}
out:
	if (ret == -E2BIG)
		log_error("report: the --children table over these paths takes "
			  "more than %llu frames to merge (deep paths at a large "
			  "--k): use a smaller --k",
			  (unsigned long long)KCCF_MAX_STEPS);
	else if (ret)
		log_error("out of memory");
	tree_free(&t);
	free(f.v);
	hindex__exit(&f.index);
	free(l.v);
	hindex__exit(&l.index);
	free(outer);
	free(order);
	free(stack);
	free(at_line);
	free(next);
	return ret ? -1 : 0;
}
