/*
 * text.c - the k-calling-context forests as an indented table: one
 * tree per function, its callers below it.
 */
#include "report/render.h"

/* The walk of one function's tree: its root's weight at hand, as a
 * walk up from each line to it costs the depth (quadratic in a
 * 100,000-frame context at k = inf: 9 s). */
struct text_walk {
	const struct render *r;
	double root_weight;
};

/* One line for callers of @n that are all under the thresholds, so that
 * a function never looks as if it had no callers. */
static void hidden_callers(const struct render *r, const struct kccf *f,
			   const struct kccf_node *n, double root_weight)
{
	double w = 0;
	unsigned count = 0;

	for (uint32_t c = n->first_child; c != KCCF_NONE;
	     c = kccf__node(f, c)->next_sibling) {
		const struct kccf_node *cn = kccf__node(f, c);

		if (render__shown(r, cn, root_weight))
			return;
		w += cn->weight;
		count++;
	}
	if (!count)
		return;
	render__count(r, w);
	fprintf(r->out, "%6.1f%% ", n->weight > 0 ? 100 * w / n->weight : 0.0);
	render__indent(r, n->level + 1);
	fprintf(r->out, "<- [%u caller%s, each under the thresholds]\n", count,
		count > 1 ? "s" : "");
}

static void text_line(void *arg, const struct kccf *f,
		      const struct kccf_node *n)
{
	const struct text_walk *tw = arg;
	const struct render *r = tw->r;
	char site[512];
	const char *where;

	render__count(r, n->weight);
	if (n->parent == KCCF_NONE) {
		fprintf(r->out, "%7s ", "");
	} else {
		double parent = kccf__node(f, n->parent)->weight;

		fprintf(r->out, "%6.1f%% ", parent > 0 ? 100 * n->weight / parent
							: 0.0);
	}
	render__indent(r, n->level);
	fprintf(r->out, "%s%s", n->level ? "<- " : "",
		cct__name(r->p->cct, n->frame));
	where = render__site(r, n, site, sizeof(site));
	if (where)
		fprintf(r->out, " (%s)", where);
	if (n->weight - n->certain > 0.05)
		fprintf(r->out, "  ~%.1f", n->weight - n->certain);
	fputc('\n', r->out);
	hidden_callers(r, f, n, tw->root_weight);
}

void render__text(const struct render *r, const struct kccf *f)
{
	struct text_walk tw = { r, 0 };
	const struct render_walk w = { .open = text_line, .arg = &tw };

	render__header(r);
	fprintf(r->out, "k = ");
	if (r->v->k == KCCF_INF)
		fprintf(r->out, "inf");
	else
		fprintf(r->out, "%u", r->v->k);
	fprintf(r->out, ", %s weights; contexts under %g%% of all samples "
		"hidden%s\n%%callee: a caller's share of the line it calls; "
		"~N: weight not certain\n\n",
		r->v->inclusive ? "inclusive" : "self", r->v->min_percent,
		r->v->similar ? " and under --similar" : "");
	fprintf(r->out, "%11s %7s %7s %s\n", render__unit(r), "%total", "%callee",
		"function <- callers");
	for (uint32_t i = kccf__first_root(f); i != KCCF_NONE;
	     i = kccf__node(f, i)->next_sibling) {
		tw.root_weight = kccf__node(f, i)->weight;
		render__walk(r, f, i, &w);
	}
}
