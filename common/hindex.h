/*
 * hindex.h - an open-addressing hash index over entries that the caller
 * keeps in a dense array of its own.
 *
 * A slot holds an entry's index + 1 (0 = empty) and the high 32 bits of
 * its hash, which also pick the slot: a probe compares entries only when
 * those bits match, and growing needs no callback (at most 2^32 slots).
 * Linear probing, load kept under 1/2.  The caller
 * decides equality: hindex__find() walks the probe sequence of @hash and
 * returns each candidate in turn through a cursor.
 */
#ifndef ICPPD_COMMON_HINDEX_H
#define ICPPD_COMMON_HINDEX_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HINDEX_NONE UINT32_MAX

struct hindex_slot {
	uint32_t idx1;		/* entry index + 1; 0: empty */
	uint32_t hash;
};

struct hindex {
	struct hindex_slot *slots;
	size_t mask;		/* slots - 1; slots is a power of two */
	size_t count;
};

/* Mixes @v into @h (64-bit finaliser of MurmurHash3). */
static inline uint64_t hindex__mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

/* A hash of string @s (FNV-1a, then mixed), for indexes of names. */
static inline uint64_t hindex__string(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return hindex__mix(9, h);
}

static inline void hindex__exit(struct hindex *h)
{
	if (!h)
		return;
	free(h->slots);
	*h = (struct hindex){ 0 };
}

/* @dst (empty) as a copy of @src, for a copy of its entries' array.
 * 0 or -ENOMEM. */
static inline int hindex__copy(struct hindex *dst, const struct hindex *src)
{
	*dst = *src;
	if (!src->slots)
		return 0;
	dst->slots = malloc((src->mask + 1) * sizeof(*src->slots));
	if (!dst->slots) {
		*dst = (struct hindex){ 0 };
		return -ENOMEM;
	}
	memcpy(dst->slots, src->slots, (src->mask + 1) * sizeof(*src->slots));
	return 0;
}

/* Empties the index, keeping its slots for reuse. */
static inline void hindex__clear(struct hindex *h)
{
	if (h->count)
		memset(h->slots, 0, (h->mask + 1) * sizeof(*h->slots));
	h->count = 0;
}

/* A probe: set pos to HINDEX_NONE before the first hindex__next(). */
struct hindex_probe {
	size_t pos;
	uint32_t hash;
};

/* The next entry whose hash bits match, or HINDEX_NONE at the end of
 * the probe sequence. */
static inline uint32_t hindex__next(const struct hindex *h,
				    struct hindex_probe *p, uint64_t hash)
{
	if (!h->slots)
		return HINDEX_NONE;
	if (p->pos == HINDEX_NONE) {
		p->hash = (uint32_t)(hash >> 32);
		p->pos = p->hash & h->mask;
	} else {
		p->pos = (p->pos + 1) & h->mask;
	}
	for (;; p->pos = (p->pos + 1) & h->mask) {
		const struct hindex_slot *s = &h->slots[p->pos];

		if (!s->idx1)
			return HINDEX_NONE;
		if (s->hash == p->hash)
			return s->idx1 - 1;
	}
}

/* Adds entry @idx with @hash (not already present).  0 or -ENOMEM. */
static inline int hindex__insert(struct hindex *h, uint64_t hash, uint32_t idx)
{
	size_t pos;

	if (2 * (h->count + 1) > (h->slots ? h->mask + 1 : 0)) {
		size_t n = h->slots ? 2 * (h->mask + 1) : 64;
		struct hindex_slot *s = calloc(n, sizeof(*s));

		if (!s)
			return -ENOMEM;
		for (size_t i = 0; h->slots && i <= h->mask; i++) {
			struct hindex_slot o = h->slots[i];

			if (!o.idx1)
				continue;
			pos = o.hash & (n - 1);
			while (s[pos].idx1)
				pos = (pos + 1) & (n - 1);
			s[pos] = o;
		}
		free(h->slots);
		h->slots = s;
		h->mask = n - 1;
	}
	pos = (uint32_t)(hash >> 32) & h->mask;
	while (h->slots[pos].idx1)
		pos = (pos + 1) & h->mask;
	h->slots[pos] = (struct hindex_slot){ idx + 1, (uint32_t)(hash >> 32) };
	h->count++;
	return 0;
}

/* Removes the entry hindex__next() just returned through @p (backward
 * shift: no tombstones, so probes stay short).  @p is spent. */
static inline void hindex__remove(struct hindex *h, struct hindex_probe *p)
{
	size_t i = p->pos, j = i;

	for (;;) {
		size_t home;

		j = (j + 1) & h->mask;
		if (!h->slots[j].idx1)
			break;
		home = h->slots[j].hash & h->mask;
		/* move j back to i unless its home lies cyclically in (i, j] */
		if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
			h->slots[i] = h->slots[j];
			i = j;
		}
	}
	h->slots[i] = (struct hindex_slot){ 0, 0 };
	h->count--;
}

#endif
