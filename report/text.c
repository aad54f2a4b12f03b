/*
 * text.c - the k-calling-context forests as an indented table: one
 * tree per function, its callers below it.
 */
#include "report/render.h"

static void text_line(void *arg, const struct kccf *f,
		      const struct kccf_node *n)
{
	const struct render *r = arg;
	char site[512];
	const char *where;

	fprintf(r->out, "%11.1f %6.2f%% ", n->weight, 100 * n->weight / r->total);
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
}

void render__text(const struct render *r, const struct kccf *f)
{
	const struct render_walk w = { .open = text_line, .arg = (void *)r };

	render__header(r);
	fprintf(r->out, "k = ");
	if (r->v->k == KCCF_INF)
		fprintf(r->out, "inf");
	else
		fprintf(r->out, "%u", r->v->k);
	fprintf(r->out, ", %s weights; contexts under %g%% of all samples "
		"hidden%s; ~N: weight not certain\n\n",
		r->v->inclusive ? "inclusive" : "self", r->v->min_percent,
		r->v->similar ? " and under --similar" : "");
	fprintf(r->out, "%11s %7s %7s %s\n", "samples", "total", "parent",
		"function <- callers");
	for (uint32_t i = kccf__first_root(f); i != KCCF_NONE;
	     i = kccf__node(f, i)->next_sibling)
		render__walk(r, f, i, &w);
}
