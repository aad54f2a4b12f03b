/*
 * known.c - the CIDs earlier runs explained, as a set of 64-bit keys
 * (known.h; docs/record.md, "Records after the first").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "binary/module.h"
#include "common/grow.h"
#include "common/hindex.h"
#include "common/u64set.h"
#include "inference/known.h"

/* Modules whose keys are remembered, direct-mapped by address. */
#define MOD_SLOTS 64

/* Both sets seeded by the process (u64set.h): keys read from a
 * database are input. */
struct known_set {
	struct u64set keys, read;
	struct {
		const struct module *m;
		uint64_t key;
	} mods[MOD_SLOTS];
};

struct known_set *known__new(void)
{
	struct known_set *k = calloc(1, sizeof(*k));
	uint64_t seed;

	if (!k)
		return NULL;
	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed))
		seed = (uint64_t)time(NULL) ^ (uintptr_t)k;
	k->keys.seed = k->read.seed = seed;
	return k;
}

void known__delete(struct known_set *k)
{
	if (!k)
		return;
	u64set__exit(&k->keys);
	u64set__exit(&k->read);
	free(k);
}

/* A module's key: its path and build id, hashed once and remembered. */
static uint64_t module_key(struct known_set *k, const struct module *m)
{
	size_t slot = (size_t)(hindex__mix(0, (uintptr_t)m) % MOD_SLOTS);
	uint64_t key;

	if (!m)
		return 0;
	if (k->mods[slot].m == m)
		return k->mods[slot].key;
	/* as the store knows a module: the same build at another path
	 * is the same module; images without a build-id go by path */
	key = module__build_id(m)[0] ?
	      hindex__mix(1, hindex__string(module__build_id(m))) :
	      hindex__mix(2, hindex__string(module__path(m)));
	k->mods[slot].m = m;
	k->mods[slot].key = key;
	return key;
}

uint64_t known__key(struct known_set *k, const struct module *prog,
		    const struct module *mod, uint64_t func, int64_t height)
{
	uint64_t h = hindex__mix(module_key(k, prog), module_key(k, mod));

	h = hindex__mix(hindex__mix(h, func), (uint64_t)height);
	return h ? h : 1;
}

void known__forget_modules(struct known_set *k)
{
	memset(k->mods, 0, sizeof(k->mods));
}

int known__add(struct known_set *k, uint64_t key)
{
	return key ? u64set__add(&k->keys, key, KNOWN_MAX) : 0;
}

bool known__has(const struct known_set *k, uint64_t key)
{
	return u64set__has(&k->keys, key);
}

size_t known__count(const struct known_set *k)
{
	return k->keys.n;
}

/* A program's mark, among the programs read: its key, mixed apart. */
static uint64_t read_mark(struct known_set *k, const struct module *prog)
{
	uint64_t h = hindex__mix(module_key(k, prog), 0x72656164);

	return h ? h : 1;
}

bool known__read(struct known_set *k, const struct module *prog)
{
	return u64set__has(&k->read, read_mark(k, prog));
}

int known__mark_read(struct known_set *k, const struct module *prog)
{
	return u64set__add(&k->read, read_mark(k, prog), KNOWN_MAX);
}

/* The outermost frame above fragment node @i: @tops[j - @from] holds
 * node j's for the nodes from @from on (a parent comes before its
 * children), so a fragment costs a walk of its frames above @from
 * once, not one per frame. */
static uint32_t fragment_top(struct pathmap *pm, uint32_t *tops, size_t from,
			     uint32_t i)
{
	const struct pm_node *nd = pathmap__node(pm, i);

	while (nd->parent != nd->root && nd->parent < from)
		nd = pathmap__node(pm, i = nd->parent);
	if (nd->parent == nd->root)
		return i;
	return tops[nd->parent - from];
}

int known__collect(struct known_set *k, struct pathmap *pm, size_t from,
		   bool (*top_known)(void *arg, const struct pm_node *top),
		   void *arg, struct known_key **v, size_t *n, size_t *cap)
{
	size_t size = pathmap__size(pm);
	uint32_t *tops = from < size ?
			 malloc((size - from) * sizeof(*tops)) : NULL;

	if (from < size && !tops)
		return -ENOMEM;
	for (size_t i = from; i < size; i++) {
		const struct pm_node *nd = pathmap__node(pm, (uint32_t)i);
		const struct module *prog;
		uint64_t key;

		if (nd->parent == PM_NONE)
			continue;
		if (nd->fragment)
			tops[i - from] = fragment_top(pm, tops, from,
						      (uint32_t)i);
		if (nd->height == ICPPD_HEIGHT_NONE ||
		    (nd->fragment &&
		     !top_known(arg, pathmap__node(pm, tops[i - from]))))
			continue;
		prog = pathmap__node(pm, nd->root)->mod;
		key = known__key(k, prog, nd->mod, nd->func, nd->height);
		if (known__has(k, key))
			continue;	/* stored already */
		if (grow(v, cap, *n + 1, sizeof(**v), 1024)) {
			free(tops);
			return -ENOMEM;
		}
		(*v)[(*n)++] = (struct known_key){ prog, key };
	}
	free(tops);
	return 0;
}

static int cmp_key(const void *x, const void *y)
{
	const struct known_key *a = x, *b = y;

	if (a->prog != b->prog)
		return (uintptr_t)a->prog < (uintptr_t)b->prog ? -1 : 1;
	return a->key < b->key ? -1 : a->key > b->key;
}

size_t known__sort(struct known_key *v, size_t n)
{
	size_t m = 0;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_key);
	for (size_t i = 1; i < n; i++)
		if (v[i].prog != v[m].prog || v[i].key != v[m].key)
			v[++m] = v[i];
	return m + 1;
}
