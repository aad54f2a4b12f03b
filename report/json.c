/*
 * json.c - the k-calling-context forests as one JSON object: each
 * function with its callers nested below it.
 */
#include "common/json.h"
#include "report/render.h"

struct json_walk {
	const struct render *r;
	bool first;		/* no element printed yet at this level */
};

/* The module of a function (a root of the forest: its callers' modules
 * are their own roots'). */
static void json_module(const struct render *r, int64_t frame)
{
	const struct cct_frame *f = cct__frame(r->p->cct, frame);
	const struct store_module *m = f && frame > 0 ?
		run_profile__module(r->p, f->module_id) : NULL;

	if (!m)
		return;
	fprintf(r->out, ", \"module\": ");
	json__string(r->out, m->path);
}

static void json_open(void *arg, const struct kccf *f,
		      const struct kccf_node *n)
{
	struct json_walk *j = arg;
	const struct render *r = j->r;
	char site[512];
	const char *where;

	(void)f;
	fprintf(r->out, "%s{\"function\": ", j->first ? "" : ", ");
	json__string(r->out, cct__name(r->p->cct, n->frame));
	if (cct__kind(r->p->cct, n->frame) == CCT_INLINED)
		fprintf(r->out, ", \"inlined\": true");
	fprintf(r->out, ", \"samples\": ");
	render__weight(r->out, n->weight);
	fprintf(r->out, ", \"certain\": ");
	render__weight(r->out, n->certain);
	if (!n->level)
		json_module(r, n->frame);
	where = render__site(r, n, site, sizeof(site));
	if (where) {
		fprintf(r->out, ", \"call_site\": ");
		json__string(r->out, where);
	}
	fprintf(r->out, ", \"callers\": [");
	j->first = true;	/* its callers come next */
}

static void json_close(void *arg)
{
	struct json_walk *j = arg;

	fprintf(j->r->out, "]}");
	j->first = false;
}

void render__json(const struct render *r, const struct kccf *f)
{
	struct json_walk j = { .r = r, .first = true };
	const struct render_walk w = { json_open, json_close, &j };

	render__json_stats(r);
	fprintf(r->out, ", \"k\": ");
	if (r->v->k == KCCF_INF)
		fprintf(r->out, "\"inf\"");
	else
		fprintf(r->out, "%u", r->v->k);
	fprintf(r->out, ", \"inclusive\": %s, \"functions\": [",
		r->v->inclusive ? "true" : "false");
	for (uint32_t i = kccf__first_root(f); i != KCCF_NONE;
	     i = kccf__node(f, i)->next_sibling)
		render__walk(r, f, i, &w);
	fprintf(r->out, "]}\n");
}
