/*
 * folded.c - folded stacks ("frame;frame;frame WEIGHT", outermost
 * first), the format of flamegraph.pl and speedscope: writing a
 * profile's k-contexts, and reading a line back (compare).
 *
 * Every reader of folded stacks (flamegraph.pl, speedscope, inferno)
 * splits a line's frames at ';' and has no escape for one: a name that
 * holds one (a symbol any local user can write) would be two frames.
 * So a ';' in a name is written as the printable form of the byte,
 * "\x3b" (common/printable.h writes every unsafe byte so), here only:
 * every other format keeps the name as it is.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/hindex.h"
#include "report/render.h"

int report__stacks(struct cct *t, uint32_t k,
		   int (*fn)(void *arg, const int64_t *frames, size_t n,
			     int64_t group, double weight),
		   void *arg)
{
	int ret;
	struct kccf *f = kccf__build(t, k, false, &ret);
	int64_t *frames = NULL;
	size_t cap = 0;

	if (!f)
		return ret;
	ret = 0;
	for (uint32_t i = 0; i < kccf__size(f) && !ret; i++) {
		const struct kccf_node *n = kccf__node(f, i);
		double self = n->weight;
		int64_t group;
		size_t depth = 0;

		for (uint32_t c = n->first_child; c != KCCF_NONE;
		     c = kccf__node(f, c)->next_sibling)
			self -= kccf__node(f, c)->weight;
		if (self <= 1e-9)
			continue;
		/* a forest's root is the leaf function and its children its
		 * callers: node i is the outermost frame, its parents lead in
		 * to the leaf */
		for (uint32_t j = i; j != KCCF_NONE && !ret;
		     j = kccf__node(f, j)->parent, depth++)
			if (grow(&frames, &cap, depth + 1, sizeof(*frames), 64))
				ret = -ENOMEM;
			else
				frames[depth] = kccf__node(f, j)->frame;
		if (ret)
			break;
		/* the weight report__round() keeps whole: a CID's samples,
		 * of one process when processes are apart */
		group = cct__kind(t, frames[0]) == CCT_PROCESS ?
			(int64_t)hindex__mix((uint64_t)frames[depth - 1],
					     (uint64_t)frames[0]) :
			frames[depth - 1];
		ret = fn(arg, frames, depth, group, self);
	}
	free(frames);
	kccf__free(f);
	return ret;
}

/* report__folded()'s frames into a key. */
struct keyed {
	struct cct *t;
	int (*fn)(void *arg, const char *key, int64_t group, double weight);
	void *arg;
	char *buf;
	size_t cap;
};

static int to_key(void *arg, const int64_t *frames, size_t n, int64_t group,
		  double weight)
{
	struct keyed *k = arg;
	size_t len = 0;

	if (grow(&k->buf, &k->cap, 1, 1, 256))
		return -ENOMEM;
	k->buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		const char *name = cct__root_name(k->t, frames[i]);
		size_t l = strlen(name);

		/* each ';' of a name written as FOLDED_SEMICOLON: 4 bytes */
		if (l > (SIZE_MAX - len - 2) / 4 ||
		    grow(&k->buf, &k->cap, len + 4 * l + 2, 1, 256))
			return -ENOMEM;
		for (const char *c = name; *c; c++)
			if (*c == ';') {
				memcpy(k->buf + len, FOLDED_SEMICOLON, 4);
				len += 4;
			} else {
				k->buf[len++] = *c;
			}
		k->buf[len++] = i + 1 < n ? ';' : '\0';
	}
	return k->fn(k->arg, k->buf, group, weight);
}

int report__folded(struct cct *t, uint32_t k,
		   int (*fn)(void *arg, const char *key, int64_t group,
			     double weight),
		   void *arg)
{
	struct keyed kd = { t, fn, arg, NULL, 0 };
	int ret = report__stacks(t, k, to_key, &kd);

	free(kd.buf);
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

void report__folded_unescape(char *frame)
{
	char *w = frame;

	for (const char *r = frame; *r;)
		if (!strncmp(r, FOLDED_SEMICOLON, 4)) {
			*w++ = ';';
			r += 4;
		} else {
			*w++ = *r++;
		}
	*w = '\0';
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
