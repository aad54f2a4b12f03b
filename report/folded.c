/*
 * folded.c - folded stacks ("frame;frame;frame WEIGHT", outermost
 * first), the format of flamegraph.pl and speedscope: a profile's
 * k-contexts (profile/folded_keys.h), their weights rounded to whole
 * counts unless --exact.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/hindex.h"
#include "report/render.h"

/* The lines of a folded report, kept until their weights are rounded;
 * equal keys (unknown callers of one function at several heights, all
 * under one root) are one line. */
struct folded_lines {
	const struct render *r;
	char **keys;
	double *w;
	int64_t *group, *process, *count;
	size_t n, cap, cap2, cap3, cap4;
	struct hindex index;
};

static int keep_line(void *arg, const char *key, struct folded_group group,
		     double weight)
{
	struct folded_lines *l = arg;
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint64_t h = hindex__string(key);
	uint32_t i;

	while ((i = hindex__next(&l->index, &p, h)) != HINDEX_NONE)
		if (l->group[i] == group.leaf && !strcmp(l->keys[i], key)) {
			l->w[i] += weight;
			return 0;
		}
	if (hindex__insert(&l->index, h, (uint32_t)l->n) ||
	    grow(&l->keys, &l->cap, l->n + 1, sizeof(*l->keys), 256) ||
	    grow(&l->w, &l->cap2, l->n + 1, sizeof(*l->w), 256) ||
	    grow(&l->group, &l->cap3, l->n + 1, sizeof(*l->group), 256) ||
	    grow(&l->process, &l->cap4, l->n + 1, sizeof(*l->process), 256) ||
	    !(l->keys[l->n] = strdup(key)))
		return -ENOMEM;
	l->w[l->n] = weight;
	l->group[l->n] = group.leaf;
	l->process[l->n++] = group.process;
	return 0;
}

/*
 * Whole counts unless --exact, rounded per leaf function and process,
 * each process keeping its samples (render__round), before
 * --min-percent hides any line, so that the lines shown carry
 * the counts a full report gives them; a line whose count is 0 is not
 * written (its weight went to its function's other lines).
 */
static int write_lines(const struct render *r, struct folded_lines *l)
{
	if (!r->v->exact &&
	    (!(l->count = malloc((l->n ? l->n : 1) * sizeof(*l->count))) ||
	     render__round(l->w, l->group, l->process, l->n, l->count)))
		return -ENOMEM;
	for (size_t i = 0; i < l->n; i++) {
		double w = l->count ? (double)l->count[i] : l->w[i];

		if (w <= 0 || r->total <= 0 ||
		    100 * w / r->total < r->v->min_percent)
			continue;
		fprintf(r->out, "%s ", l->keys[i]);
		render__weight(r->out, w);
		fputc('\n', r->out);
	}
	return 0;
}

int render__folded(const struct render *r)
{
	struct folded_lines l = { .r = r };
	int err = folded__keys(r->p->cct, r->v->k, keep_line, &l);

	if (!err)
		err = write_lines(r, &l);
	if (err)
		folded__forest_error(err);
	for (size_t i = 0; i < l.n; i++)
		free(l.keys[i]);
	free(l.keys);
	free(l.w);
	free(l.group);
	free(l.process);
	free(l.count);
	hindex__exit(&l.index);
	return err ? -1 : 0;
}
