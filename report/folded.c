/*
 * folded.c - folded stacks ("frame;frame;frame WEIGHT", outermost
 * first), the format of flamegraph.pl and speedscope: writing a
 * profile's k-contexts, and reading a line back (compare).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/hindex.h"
#include "report/render.h"

/* The frames of forest node @i up to its root, outermost first; in
 * *@group the root's frame (the leaf function), mixed with the outermost
 * frame when that is a process: the weight report__round() keeps whole
 * (a CID's samples, of one process when processes are apart). */
static char *folded_key(const struct cct *t, const struct kccf *f, uint32_t i,
			int64_t *group)
{
	int64_t outer = kccf__node(f, i)->frame, leaf = outer;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return NULL;
	for (; i != KCCF_NONE; i = kccf__node(f, i)->parent) {
		leaf = kccf__node(f, i)->frame;
		fprintf(m, "%s%s", cct__root_name(t, kccf__node(f, i)->frame),
			kccf__node(f, i)->parent == KCCF_NONE ? "" : ";");
	}
	*group = cct__kind(t, outer) == CCT_PROCESS ?
		 (int64_t)hindex__mix((uint64_t)leaf, (uint64_t)outer) : leaf;
	if (fclose(m)) {
		free(buf);
		return NULL;
	}
	return buf;
}

int report__folded(struct cct *t, uint32_t k,
		   int (*fn)(void *arg, const char *key, int64_t group,
			     double weight),
		   void *arg)
{
	int ret;
	struct kccf *f = kccf__build(t, k, false, &ret);

	if (!f)
		return ret;
	ret = 0;
	for (uint32_t i = 0; i < kccf__size(f) && !ret; i++) {
		const struct kccf_node *n = kccf__node(f, i);
		double self = n->weight;
		int64_t group = 0;
		char *key;

		for (uint32_t c = n->first_child; c != KCCF_NONE;
		     c = kccf__node(f, c)->next_sibling)
			self -= kccf__node(f, c)->weight;
		if (self <= 1e-9)
			continue;
		key = folded_key(t, f, i, &group);
		ret = key ? fn(arg, key, group, self) : -ENOMEM;
		free(key);
	}
	kccf__free(f);
	return ret;
}

/* The lines of a folded report, kept until their weights are rounded;
 * equal keys (unknown callers of one function at several heights, all
 * under one root) are one line. */
struct folded_lines {
	const struct render *r;
	char **keys;
	double *w;
	int64_t *group, *count;
	size_t n, cap, cap2, cap3;
	struct hindex index;
};

static int keep_line(void *arg, const char *key, int64_t group, double weight)
{
	struct folded_lines *l = arg;
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint64_t h = hindex__string(key);
	uint32_t i;

	while ((i = hindex__next(&l->index, &p, h)) != HINDEX_NONE)
		if (l->group[i] == group && !strcmp(l->keys[i], key)) {
			l->w[i] += weight;
			return 0;
		}
	if (hindex__insert(&l->index, h, (uint32_t)l->n) ||
	    grow(&l->keys, &l->cap, l->n + 1, sizeof(*l->keys), 256) ||
	    grow(&l->w, &l->cap2, l->n + 1, sizeof(*l->w), 256) ||
	    grow(&l->group, &l->cap3, l->n + 1, sizeof(*l->group), 256) ||
	    !(l->keys[l->n] = strdup(key)))
		return -ENOMEM;
	l->w[l->n] = weight;
	l->group[l->n++] = group;
	return 0;
}

/*
 * Whole counts unless --exact, rounded per leaf function and process
 * (report__round)
 * before --min-percent hides any line, so that the lines shown carry
 * the counts a full report gives them; a line whose count is 0 is not
 * written (its weight went to its function's other lines).
 */
static int write_lines(const struct render *r, struct folded_lines *l)
{
	if (!r->v->exact &&
	    (!(l->count = malloc((l->n ? l->n : 1) * sizeof(*l->count))) ||
	     report__round(l->w, l->group, l->n, l->count)))
		return -ENOMEM;
	for (size_t i = 0; i < l->n; i++) {
		double w = l->count ? (double)l->count[i] : l->w[i];

		if (w <= 0 || r->total <= 0 ||
		    100 * w / r->total < r->v->min_percent)
			continue;
		fprintf(r->out, "%s ", l->keys[i]);
		report__weight(r->out, w);
		fputc('\n', r->out);
	}
	return 0;
}

int render__folded(const struct render *r)
{
	struct folded_lines l = { .r = r };
	int err = report__folded(r->p->cct, r->v->k, keep_line, &l);

	if (!err)
		err = write_lines(r, &l);
	if (err)
		report__forest_error(err);
	for (size_t i = 0; i < l.n; i++)
		free(l.keys[i]);
	free(l.keys);
	free(l.w);
	free(l.group);
	free(l.count);
	hindex__free(&l.index);
	return err ? -1 : 0;
}

const char *report__cut_key(const char *key, uint32_t k)
{
	const char *p = key + strlen(key);
	uint32_t frames = 0;

	if (k == KCCF_INF)
		return key;
	while (p > key) {
		if (p[-1] == ';' && ++frames == k + 1)
			return p;
		p--;
	}
	return key;
}

int report__folded_line(char *line, double *w)
{
	size_t len = strlen(line);
	char *sp, *end;

	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		line[--len] = '\0';
	if (!len)
		return 1;
	sp = strrchr(line, ' ');
	if (!sp || sp == line)
		return -1;
	*w = strtod(sp + 1, &end);
	if (end == sp + 1 || *end || !(*w >= 0) || isinf(*w))
		return -1;
	*sp = '\0';
	return 0;
}
