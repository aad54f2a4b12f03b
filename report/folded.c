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

#include "report/render.h"

/* The frames of forest node @i up to its root, outermost first. */
static char *folded_key(const struct cct *t, const struct kccf *f, uint32_t i)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return NULL;
	for (; i != KCCF_NONE; i = kccf__node(f, i)->parent)
		fprintf(m, "%s%s", cct__name(t, kccf__node(f, i)->frame),
			kccf__node(f, i)->parent == KCCF_NONE ? "" : ";");
	if (fclose(m)) {
		free(buf);
		return NULL;
	}
	return buf;
}

int report__folded(struct cct *t, uint32_t k,
		   int (*fn)(void *arg, const char *key, double weight),
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
		char *key;

		for (uint32_t c = n->first_child; c != KCCF_NONE;
		     c = kccf__node(f, c)->next_sibling)
			self -= kccf__node(f, c)->weight;
		if (self <= 1e-9)
			continue;
		key = folded_key(t, f, i);
		ret = key ? fn(arg, key, self) : -ENOMEM;
		free(key);
	}
	kccf__free(f);
	return ret;
}

static int folded_line(void *arg, const char *key, double weight)
{
	const struct render *r = arg;

	if (r->total <= 0 || 100 * weight / r->total < r->v->min_percent)
		return 0;
	fprintf(r->out, "%s ", key);
	report__weight(r->out, weight);
	fputc('\n', r->out);
	return 0;
}

int render__folded(const struct render *r)
{
	int err = report__folded(r->p->cct, r->v->k, folded_line, (void *)r);

	if (err)
		report__forest_error(err);
	return err ? -1 : 0;
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

void report__weight(FILE *out, double w)
{
	if (fabs(w - round(w)) < 1e-6)
		fprintf(out, "%.0f", w);
	else
		fprintf(out, "%.3f", w);
}
