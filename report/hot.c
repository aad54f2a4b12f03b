/*
 * hot.c - the hot calling context tree (--hot; inference/hcct.h) in
 * each format: an indented tree (text), or its hot contexts as whole
 * paths (JSON, folded).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>

#include "common/grow.h"
#include "common/json.h"
#include "common/log.h"
#include "inference/hcct.h"
#include "report/render.h"

static bool is_hot(const struct render *r, const struct hcct *h,
		   uint32_t node)
{
	return !isnan(h->count[node]) && h->count[node] >= r->v->phi * r->total;
}

static void hot_line(const struct render *r, const struct hcct *h,
		     uint32_t i)
{
	uint32_t node = h->nodes[i];
	const struct cct_node *n = cct__node(r->p->cct, node);

	if (!is_hot(r, h, node))
		fprintf(r->out, "%11s %7s ", "-", "");
	else
		render__count(r, h->count[node]);
	render__indent(r, n->depth - 1);
	fprintf(r->out, "%s", cct__name(r->p->cct, n->frame));
	if (is_hot(r, h, node) && h->error[node] > 0)
		fprintf(r->out, "  (+- %.1f)", h->error[node]);
	fputc('\n', r->out);
}

/* Prints the tree of position @root depth first, without recursion
 * (see RENDER_INDENT_LEVELS). */
static void hot_tree(const struct render *r, const struct hcct *h,
		     uint32_t root)
{
	uint32_t i = root;

	for (;;) {
		hot_line(r, h, i);
		if (h->first[i] != HCCT_NONE) {
			i = h->first[i];
			continue;
		}
		while (i != root && h->next[i] == HCCT_NONE)
			i = h->up[i];
		if (i == root)
			return;
		i = h->next[i];
	}
}

static void hot_text(const struct render *r, const struct hcct *h)
{
	render__header(r);
	fprintf(r->out, "hot calling context tree: %zu contexts with at "
		"least %g%% of all samples (%zu counters); '-': a caller "
		"that is not hot itself\n\n", h->hot, 100 * r->v->phi, h->ncounters);
	fprintf(r->out, "%11s %7s %s\n", render__unit(r), "%total",
		"context (outermost first)");
	for (uint32_t i = 0; i < h->n; i++)
		if (h->up[i] == HCCT_NONE)
			hot_tree(r, h, i);
}

/* The frames of CCT node @node, outermost first, joined by ';'; with
 * @root, every unknown-callers frame is the one CCT_UNKNOWN_ROOT. */
static char *cct_key(struct cct *t, uint32_t node, bool root)
{
	uint32_t *chain = NULL;
	size_t n = 0, cap = 0, len = 0;
	char *buf = NULL;
	FILE *m;

	for (uint32_t x = node; x != CCT_ROOT; x = cct__node(t, x)->parent) {
		if (grow(&chain, &cap, n + 1, sizeof(*chain), 64)) {
			free(chain);
			return NULL;
		}
		chain[n++] = x;
	}
	m = open_memstream(&buf, &len);
	for (size_t j = n; m && j-- > 0;)
		fprintf(m, "%s%s", root ?
			cct__root_name(t, cct__node(t, chain[j])->frame) :
			cct__name(t, cct__node(t, chain[j])->frame),
			j ? ";" : "");
	free(chain);
	if (!m || fclose(m)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* JSON or folded: the hot contexts only, each as its whole path. */
static void hot_paths(const struct render *r, const struct hcct *h)
{
	bool json = r->v->fmt == REPORT_JSON, first = true;

	if (json) {
		render__json_stats(r);
		fprintf(r->out, ", \"hot_percent\": %g, \"contexts\": [",
			100 * r->v->phi);
	}
	for (size_t i = 0; i < h->n; i++) {
		uint32_t node = h->nodes[i];
		char *key;

		if (!is_hot(r, h, node) ||
		    !(key = cct_key(r->p->cct, node, !json)))
			continue;
		if (json) {
			fprintf(r->out, "%s\n {\"context\": ", first ? "" : ",");
			json__string(r->out, key);
			fprintf(r->out, ", \"samples\": ");
			render__weight(r->out, h->count[node]);
			fprintf(r->out, ", \"error\": ");
			render__weight(r->out, h->error[node]);
			fputc('}', r->out);
		} else {
			fprintf(r->out, "%s ", key);
			render__weight(r->out, h->count[node]);
			fputc('\n', r->out);
		}
		first = false;
		free(key);
	}
	if (json)
		fprintf(r->out, "]}\n");
}

int render__hot(const struct render *r)
{
	struct hcct h;

	if (hcct__build(r->p->cct, r->v->phi, &h)) {
		hcct__exit(&h);
		log_error("out of memory");
		return -1;
	}
	if (r->v->fmt == REPORT_TEXT)
		hot_text(r, &h);
	else
		hot_paths(r, &h);
	hcct__exit(&h);
	return 0;
}
