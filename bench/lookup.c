/*
 * lookup.c - the rate of CID -> candidates lookups of the inference
 * engine (bench/report.sh runs it).
 *
 * Builds a path map of PATHS nodes (a random tree: 2000 functions,
 * frames of 16..320 bytes, depth about log PATHS), then times LOOKUPS
 * lookups of CIDs drawn at random from the map, and as many of CIDs it
 * does not hold.  Prints "lookup PATHS LOOKUPS NS_PER_HIT NS_PER_MISS".
 *
 * Usage: lookup [PATHS [LOOKUPS]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "inference/cct.h"
#include "inference/infer.h"

static uint64_t rng = 88172645463325252ULL;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	size_t paths = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
	size_t lookups = argc > 2 ? strtoul(argv[2], NULL, 10) : 10000000;
	struct infer_node *nodes = calloc(paths, sizeof(*nodes));
	struct cct *t = cct__new();
	struct infer *inf = infer__new(t, NULL);
	const struct infer_cand *c;
	uint64_t *keys = malloc(2 * 4096 * sizeof(*keys));
	size_t found = 0;
	double t0, hit, miss;

	if (!nodes || !t || !inf || !keys || paths < 2)
		return 1;
	infer__begin_map(inf, 1);
	for (size_t i = 0; i < paths; i++) {
		int64_t parent = i ? (int64_t)(next() % i) : -1;

		nodes[i] = (struct infer_node){ parent, 1 + (int64_t)(next() % 2000),
			(parent < 0 ? 0 : nodes[parent].height) +
			16 * (int64_t)(1 + next() % 20), 0x1000 + i,
			1 + next() % 100, 0, 0 };
		nodes[i].total = nodes[i].self;
		if (infer__add_node(inf, &nodes[i]))
			return 1;
	}
	if (infer__end_map(inf))
		return 1;
	/* keys from a small table, so the timing is the lookup's */
	for (size_t i = 0; i < 4096; i++) {
		const struct infer_node *n = &nodes[next() % paths];

		keys[2 * i] = (uint64_t)n->function_id;
		keys[2 * i + 1] = (uint64_t)n->height;
	}
	t0 = now();
	for (size_t i = 0; i < lookups; i++) {
		size_t k = 2 * (i & 4095);

		found += infer__lookup(inf, 1, (int64_t)keys[k],
				       (int64_t)keys[k + 1], &c) > 0;
	}
	hit = (now() - t0) / (double)lookups;
	t0 = now();
	for (size_t i = 0; i < lookups; i++) {
		size_t k = 2 * (i & 4095);

		found += infer__lookup(inf, 1, (int64_t)keys[k],
				       (int64_t)keys[k + 1] + 8, &c) > 0;
	}
	miss = (now() - t0) / (double)lookups;
	printf("lookup %zu %zu %.1f %.1f %zu\n", paths, lookups, hit * 1e9,
	       miss * 1e9, found);
	infer__delete(inf);
	cct__delete(t);
	free(nodes);
	free(keys);
	return 0;
}
