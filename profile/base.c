/*
 * base.c - a baseline for a differential report (report --base): the
 * k-contexts of a profile, or of a folded file, as keys and weights.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/hindex.h"
#include "common/printable.h"
#include "profile/base.h"
#include "profile/folded_keys.h"

struct profile_base {
	char **keys;
	double *w;
	size_t n, cap, wcap;
	struct hindex index;
	double total;
};

/* Where @key is in @b, or HINDEX_NONE. */
static uint32_t find(const struct profile_base *b, const char *key)
{
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint64_t h = hindex__string(key);
	uint32_t i;

	while ((i = hindex__next(&b->index, &p, h)) != HINDEX_NONE)
		if (!strcmp(b->keys[i], key))
			return i;
	return HINDEX_NONE;
}

static int add(struct profile_base *b, const char *key, double w)
{
	uint32_t i = find(b, key);

	b->total += w;
	if (i != HINDEX_NONE) {
		b->w[i] += w;
		return 0;
	}
	if (b->n >= UINT32_MAX - 1 ||
	    grow(&b->keys, &b->cap, b->n + 1, sizeof(*b->keys), 256) ||
	    grow(&b->w, &b->wcap, b->n + 1, sizeof(*b->w), 256) ||
	    hindex__insert(&b->index, hindex__string(key), (uint32_t)b->n) ||
	    !(b->keys[b->n] = strdup(key)))
		return -ENOMEM;
	b->w[b->n++] = w;
	return 0;
}

static int add_context(void *arg, const char *key,
		       struct folded_group group, double w)
{
	(void)group;
	return add(arg, key, w);
}

struct profile_base *profile_base__of(const struct run_profile *p, uint32_t k,
				    int *err)
{
	struct profile_base *b = calloc(1, sizeof(*b));

	*err = b ? 0 : -ENOMEM;
	if (b)		/* its keys are k-contexts already */
		*err = folded__keys(p->cct, k, add_context, b);
	if (*err) {
		profile_base__delete(b);
		return NULL;
	}
	return b;
}

struct profile_base *profile_base__read(FILE *in, uint32_t k, int *err,
				      size_t *bad_line)
{
	struct profile_base *b = calloc(1, sizeof(*b));
	char *line = NULL;
	size_t cap = 0, no = 0;

	*err = b ? 0 : -ENOMEM;
	*bad_line = 0;
	while (!*err && getline(&line, &cap, in) > 0) {
		double w;
		int r = folded__line(line, &w);

		no++;
		if (r < 0) {
			*err = -EINVAL;
			*bad_line = no;
		} else if (!r) {
			/* whole stacks: cut to k-contexts, and printable as
			 * the database's names are (a baseline file is
			 * anyone's to write: no escape sequence from it
			 * reaches a terminal, no invalid UTF-8 the JSON) */
			char *key = printable__dup(folded__cut(line, k));

			*err = key ? add(b, key, w) : -ENOMEM;
			free(key);
		}
	}
	free(line);
	if (!*err && ferror(in))
		*err = -EIO;
	if (*err) {
		profile_base__delete(b);
		return NULL;
	}
	return b;
}

void profile_base__delete(struct profile_base *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n; i++)
		free(b->keys[i]);
	free(b->keys);
	free(b->w);
	hindex__exit(&b->index);
	free(b);
}

double profile_base__total(const struct profile_base *b)
{
	return b->total;
}

size_t profile_base__size(const struct profile_base *b)
{
	return b->n;
}

const char *profile_base__key(const struct profile_base *b, size_t i,
			     double *w)
{
	*w = b->w[i];
	return b->keys[i];
}

bool profile_base__weight(const struct profile_base *b, const char *key,
			  double *w)
{
	uint32_t i = find(b, key);

	*w = i == HINDEX_NONE ? 0 : b->w[i];
	return i != HINDEX_NONE;
}
