/*
 * hcct.c - Space-Saving with weights: a min-heap of counters by count
 * and a hash index from key to counter.  A new key replaces the
 * minimum counter, inheriting its count as error.  O(log m) an update.
 * The HCCT keeps the monitored nodes that are hot and their ancestors.
 */
#include "inference/hcct.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/hindex.h"
#include "inference/cct.h"

struct spacesaving {
	struct ss_item *items;
	uint32_t *heap;		/* item indexes, min count first */
	uint32_t *pos;		/* item -> heap position */
	size_t n, cap;
	struct hindex index;	/* key -> item */
	double total;
};

size_t hcct__counters(double phi)
{
	return (size_t)ceil(2.0 / phi) + 1;
}

struct spacesaving *ss__new(size_t capacity)
{
	struct spacesaving *ss;

	if (!capacity || capacity >= UINT32_MAX / 2)
		return NULL;
	ss = calloc(1, sizeof(*ss));
	if (!ss)
		return NULL;
	ss->cap = capacity;
	ss->items = calloc(capacity, sizeof(*ss->items));
	ss->heap = calloc(capacity, sizeof(*ss->heap));
	ss->pos = calloc(capacity, sizeof(*ss->pos));
	if (!ss->items || !ss->heap || !ss->pos) {
		ss__delete(ss);
		return NULL;
	}
	return ss;
}

void ss__delete(struct spacesaving *ss)
{
	if (!ss)
		return;
	hindex__exit(&ss->index);
	free(ss->items);
	free(ss->heap);
	free(ss->pos);
	free(ss);
}

static double count_at(const struct spacesaving *ss, size_t h)
{
	return ss->items[ss->heap[h]].count;
}

static void swap(struct spacesaving *ss, size_t a, size_t b)
{
	uint32_t t = ss->heap[a];

	ss->heap[a] = ss->heap[b];
	ss->heap[b] = t;
	ss->pos[ss->heap[a]] = (uint32_t)a;
	ss->pos[ss->heap[b]] = (uint32_t)b;
}

/* Counts only grow: an item can only move down the heap. */
static void sift_down(struct spacesaving *ss, size_t h)
{
	for (;;) {
		size_t l = 2 * h + 1, r = l + 1, m = h;

		if (l < ss->n && count_at(ss, l) < count_at(ss, m))
			m = l;
		if (r < ss->n && count_at(ss, r) < count_at(ss, m))
			m = r;
		if (m == h)
			return;
		swap(ss, h, m);
		h = m;
	}
}

static void sift_up(struct spacesaving *ss, size_t h)
{
	while (h && count_at(ss, (h - 1) / 2) > count_at(ss, h)) {
		swap(ss, h, (h - 1) / 2);
		h = (h - 1) / 2;
	}
}

static uint64_t key_hash(uint32_t key)
{
	return hindex__mix(8, key);
}

int ss__add(struct spacesaving *ss, uint32_t key, double weight)
{
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint64_t h = key_hash(key);
	uint32_t i;

	ss->total += weight;
	while ((i = hindex__next(&ss->index, &p, h)) != HINDEX_NONE)
		if (ss->items[i].key == key) {
			ss->items[i].count += weight;
			sift_down(ss, ss->pos[i]);
			return 0;
		}
	if (ss->n < ss->cap) {
		i = (uint32_t)ss->n;
		ss->items[i] = (struct ss_item){ key, weight, 0 };
		ss->heap[ss->n] = i;
		ss->pos[i] = (uint32_t)ss->n;
		ss->n++;
		sift_up(ss, ss->n - 1);
		return hindex__insert(&ss->index, h, i);
	}
	/* evict the minimum: the newcomer inherits its count as error */
	i = ss->heap[0];
	p = (struct hindex_probe){ HINDEX_NONE, 0 };
	while (hindex__next(&ss->index, &p, key_hash(ss->items[i].key)) != i)
		;
	hindex__remove(&ss->index, &p);
	ss->items[i] = (struct ss_item){ key, ss->items[i].count + weight,
					 ss->items[i].count };
	sift_down(ss, 0);
	return hindex__insert(&ss->index, h, i);
}

const struct ss_item *ss__items(const struct spacesaving *ss, size_t *n)
{
	*n = ss->n;
	return ss->items;
}

double ss__total(const struct spacesaving *ss)
{
	return ss->total;
}

/* Marks the hot monitored nodes and their ancestors. */
static int select_hot(struct cct *t, double phi, struct hcct *h,
		      bool *mark)
{
	size_t nrecs, nitems;
	const struct cct_record *recs = cct__records(t, &nrecs);
	const struct ss_item *items;
	struct spacesaving *ss = ss__new(h->ncounters);

	if (!ss)
		return -ENOMEM;
	for (size_t i = 0; i < nrecs; i++)
		if (recs[i].weight > 0 &&
		    ss__add(ss, recs[i].node, recs[i].weight)) {
			ss__delete(ss);
			return -ENOMEM;
		}
	items = ss__items(ss, &nitems);
	h->threshold = phi * ss__total(ss);
	for (size_t i = 0; i < nitems; i++) {
		h->count[items[i].key] = items[i].count;
		h->error[items[i].key] = items[i].error;
		if (items[i].count < h->threshold)
			continue;
		h->hot++;
		for (uint32_t x = items[i].key; x != CCT_ROOT && !mark[x];
		     x = cct__node(t, x)->parent)
			mark[x] = true;
	}
	ss__delete(ss);
	return 0;
}

/* The tree over the positions of nodes[]. */
static int link_tree(struct cct *t, struct hcct *h, size_t size)
{
	uint32_t *pos = malloc(size * sizeof(*pos));	/* node -> position */

	h->up = malloc((h->n + 1) * sizeof(*h->up));
	h->first = malloc((h->n + 1) * sizeof(*h->first));
	h->next = malloc((h->n + 1) * sizeof(*h->next));
	if (!h->up || !h->first || !h->next || !pos) {
		free(pos);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < h->n; i++) {
		uint32_t parent = cct__node(t, h->nodes[i])->parent;

		h->first[i] = h->next[i] = HCCT_NONE;
		h->up[i] = parent == CCT_ROOT ? HCCT_NONE : pos[parent];
		pos[h->nodes[i]] = i;
	}
	for (uint32_t i = (uint32_t)h->n; i-- > 0;)
		if (h->up[i] != HCCT_NONE) {
			h->next[i] = h->first[h->up[i]];
			h->first[h->up[i]] = i;
		}
	free(pos);
	return 0;
}

int hcct__build(struct cct *t, double phi, struct hcct *h)
{
	size_t size = cct__size(t);
	bool *mark = calloc(size + 1, sizeof(*mark));
	int ret = -ENOMEM;

	memset(h, 0, sizeof(*h));
	h->ncounters = hcct__counters(phi);
	h->count = malloc((size + 1) * sizeof(*h->count));
	h->error = malloc((size + 1) * sizeof(*h->error));
	h->nodes = malloc((size + 1) * sizeof(*h->nodes));
	if (!mark || !h->count || !h->error || !h->nodes)
		goto out;
	for (size_t i = 0; i < size; i++)
		h->count[i] = h->error[i] = NAN;
	if (select_hot(t, phi, h, mark))
		goto out;
	for (uint32_t i = 0; i < size; i++)	/* parents come first */
		if (mark[i])
			h->nodes[h->n++] = i;
	ret = link_tree(t, h, size);
out:
	free(mark);
	return ret;
}

void hcct__exit(struct hcct *h)
{
	if (!h)
		return;
	free(h->nodes);
	free(h->up);
	free(h->first);
	free(h->next);
	free(h->count);
	free(h->error);
	memset(h, 0, sizeof(*h));
}
