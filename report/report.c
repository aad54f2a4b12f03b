/*
 * report.c - report__write's dispatch to the renderers (render.h):
 * one renderer per view, each handed what the profile holds.
 */
#define _GNU_SOURCE
#include <math.h>

#include "report/render.h"

const char *const report_format_names[] = { "text", "folded", "json", "pprof",
					    "svg", NULL };

int report__write(const struct report_view *v)
{
	struct render r = { .v = v, .p = v->p, .out = v->out,
			    .total = cct__total(v->p->cct), .integral = true };
	size_t n;
	const struct cct_record *recs = cct__records(v->p->cct, &n);
	struct kccf *f;
	int err;

	for (size_t i = 0; i < n && r.integral; i++)
		r.integral = fabs(recs[i].weight - round(recs[i].weight)) < 1e-6;

	if (v->base && v->fmt != REPORT_SVG)
		return render__diff(&r);
	if (v->phi > 0)
		return render__hot(&r);
	if (v->nsort)
		return render__sorted(&r);
	if (v->children)
		return render__children(&r);
	if (v->fmt == REPORT_FOLDED)
		return render__folded(&r);
	if (v->fmt == REPORT_PPROF)
		return render__pprof(&r);
	if (v->fmt == REPORT_SVG)
		return render__svg(&r);
	f = kccf__build(v->p->cct, v->k, v->inclusive, &err);
	if (!f) {
		folded__forest_error(err);
		return -1;
	}
	if (v->fmt == REPORT_JSON)
		render__json(&r, f);
	else
		render__text(&r, f);
	kccf__delete(f);
	return 0;
}
