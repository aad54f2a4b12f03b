/*
 * hcct.c - Space-Saving with weights: a min-heap of counters by count
 * and a hash index from key to counter.  A new key replaces the
 * minimum counter, inheriting its count as error.  O(log m) an update.
 */
#include "inference/hcct.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "common/hindex.h"

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
		ss__free(ss);
		return NULL;
	}
	return ss;
}

void ss__free(struct spacesaving *ss)
{
	if (!ss)
		return;
	hindex__free(&ss->index);
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
