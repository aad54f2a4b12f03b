/*
 * u64set.h - a set of 64-bit keys (hashes), open addressing with
 * linear probing, its load kept under one half.
 *
 * Slot 0 marks an empty slot, so keys 0 and 1 are one key (they are
 * hashes: a collision costs what the caller's collision costs).  A
 * key's slot is its bits mixed with @seed: a set of keys read from
 * input takes a seed the input cannot know, so keys made to share
 * their low bits do not make every probe walk them all.
 */
#ifndef ICPPD_COMMON_U64SET_H
#define ICPPD_COMMON_U64SET_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/hindex.h"

struct u64set {
	uint64_t *slots;	/* NULL until the first key */
	size_t mask, n;
	uint64_t seed;
};

static inline uint64_t u64set__key(uint64_t key)
{
	return key ? key : 1;
}

static inline size_t u64set__slot(const struct u64set *s, uint64_t key)
{
	return (size_t)hindex__mix(s->seed, key) & s->mask;
}

static inline bool u64set__has(const struct u64set *s, uint64_t key)
{
	key = u64set__key(key);
	if (!s->slots)
		return false;
	for (size_t i = u64set__slot(s, key); s->slots[i];
	     i = (i + 1) & s->mask)
		if (s->slots[i] == key)
			return true;
	return false;
}

static inline void u64set__put(struct u64set *s, uint64_t key)
{
	size_t i = u64set__slot(s, key);

	while (s->slots[i] && s->slots[i] != key)
		i = (i + 1) & s->mask;
	if (!s->slots[i]) {
		s->slots[i] = key;
		s->n++;
	}
}

/* Adds @key, the set holding at most @max: 0, -ENOSPC or -ENOMEM (the
 * set as it was). */
static inline int u64set__add(struct u64set *s, uint64_t key, size_t max)
{
	key = u64set__key(key);
	if (!s->slots || s->n + 1 > (s->mask + 1) / 2) {
		size_t slots = s->slots ? 2 * (s->mask + 1) : 1024;
		struct u64set t = { NULL, slots - 1, 0, s->seed };

		if (s->n >= max)
			return -ENOSPC;
		if (!(t.slots = calloc(slots, sizeof(*t.slots))))
			return -ENOMEM;
		for (size_t i = 0; s->slots && i <= s->mask; i++)
			if (s->slots[i])
				u64set__put(&t, s->slots[i]);
		free(s->slots);
		*s = t;
	}
	u64set__put(s, key);
	return 0;
}

/* Empties the set, keeping its slots. */
static inline void u64set__clear(struct u64set *s)
{
	if (s->slots)
		memset(s->slots, 0, (s->mask + 1) * sizeof(*s->slots));
	s->n = 0;
}

static inline void u64set__exit(struct u64set *s)
{
	free(s->slots);
	*s = (struct u64set){ 0 };
}

#endif
