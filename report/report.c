/*
 * report.c - report__write's dispatch to the renderers (render.h):
 * one renderer per view, each handed what the profile holds.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "report/render.h"

const char *const report_format_names[] = { "text", "folded", "json", "pprof",
					    "svg", NULL };

/* Whether @name is one of comma-separated @list. */
static bool in_list(const char *list, const char *name, size_t len)
{
	while (*list) {
		size_t n = strcspn(list, ",");

		if (n == len && !strncmp(list, name, len))
			return true;
		list += n + (list[n] == ',');
	}
	return false;
}

/* Whether a record whose context ends in frame @id stays in @v's view:
 * its function is in --dsos (the binary's name or path) and --symbols
 * (the name as shown, an inlined one without its mark). */
static bool kept(const struct report_view *v, int64_t id)
{
	const struct cct_frame *f = cct__frame(v->p->cct, id);
	const struct store_module *m;
	const char *base;
	size_t len;

	if (!f || (f->kind != CCT_FUNCTION && f->kind != CCT_INLINED))
		return false;
	if (v->symbols) {
		len = strlen(f->name);
		if (f->kind == CCT_INLINED && len >= strlen(CCT_INLINED_MARK) &&
		    !strcmp(f->name + len - strlen(CCT_INLINED_MARK),
			    CCT_INLINED_MARK))
			len -= strlen(CCT_INLINED_MARK);
		if (!in_list(v->symbols, f->name, len))
			return false;
	}
	if (!v->dsos)
		return true;
	m = run_profile__module(v->p, f->module_id);
	if (!m)
		return false;
	base = strrchr(m->path, '/');
	base = base ? base + 1 : m->path;
	return in_list(v->dsos, m->path, strlen(m->path)) ||
	       in_list(v->dsos, base, strlen(base));
}

/* The records of @v's profile that --dsos and --symbols keep, in a
 * tree of their own with the same frames: NULL when out of memory. */
static struct cct *filter(const struct report_view *v)
{
	struct cct *src = v->p->cct, *dst = cct__new_like(src);
	size_t n = cct__size(src), nrecs;
	const struct cct_record *recs = cct__records(src, &nrecs);
	uint32_t *map = calloc(n ? n : 1, sizeof(*map));	/* 0: none */
	bool *need = calloc(n ? n : 1, sizeof(*need));
	bool ok = dst && map && need;

	/* the nodes on a kept record's path; a child after its parent */
	for (size_t i = 0; ok && i < nrecs; i++) {
		uint32_t at = recs[i].node;

		if (!kept(v, cct__node(src, at)->frame))
			continue;
		while (at && !need[at]) {
			need[at] = true;
			at = cct__node(src, at)->parent;
		}
	}
	for (uint32_t i = 1; ok && i < n; i++) {
		const struct cct_node *nd = cct__node(src, i);

		if (!need[i])
			continue;
		ok = !cct__child(dst, map[nd->parent], nd->frame, &map[i]);
		if (ok)
			cct__set_site(dst, map[i], nd->call_site,
				      nd->site_weight);
	}
	for (size_t i = 0; ok && i < nrecs; i++)
		if (need[recs[i].node] &&
		    kept(v, cct__node(src, recs[i].node)->frame))
			ok = !cct__add(dst, map[recs[i].node], recs[i].exact,
				       recs[i].how, recs[i].weight);
	free(map);
	free(need);
	if (ok)
		return dst;
	cct__delete(dst);
	return NULL;
}

static int write_view(const struct report_view *v);

int report__write(const struct report_view *v)
{
	struct run_profile p;
	struct report_view fv;
	int ret;

	if (!v->dsos && !v->symbols)
		return write_view(v);
	p = *v->p;	/* the same profile, its tree filtered */
	p.cct = filter(v);
	if (!p.cct) {
		log_error("out of memory");
		return -1;
	}
	fv = *v;
	fv.p = &p;
	fv.dsos = fv.symbols = NULL;
	ret = write_view(&fv);
	cct__delete(p.cct);
	return ret;
}

static int write_view(const struct report_view *v)
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
