/*
 * pathmap.c - nodes in one array (creation order), found through an
 * open-addressing table of indices keyed by (parent, module, function,
 * call site, height).  Adding a path of depth d costs d lookups and no
 * allocation once the arrays are warm.
 */
#include "inference/pathmap.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/hindex.h"

struct pathmap {
	struct pm_node *nodes;
	size_t n, cap, max;
	uint32_t *path;		/* scratch: node of each frame being added */
	size_t path_cap;
	size_t path_n;		/* nodes path[] holds of the last path added */
	/* A bit per node counted since the last pathmap__clear_counts():
	 * a flush visits those, not the whole map (a daemon's map holds up
	 * to a quarter million nodes; a flush's samples touch thousands) */
	uint64_t *counted;
	size_t counted_cap;	/* words */
	struct hindex index;	/* over nodes */
	struct hindex cids;	/* one node per distinct (mod, func, height) */
	uint64_t serial;
	bool composing;		/* in pathmap__add_through(): nodes made are
				 * composed */
};

struct pathmap *pathmap__new(size_t max_nodes)
{
	static uint64_t next_serial;
	struct pathmap *pm = calloc(1, sizeof(*pm));

	if (pm) {
		pm->max = max_nodes;
		pm->serial = __atomic_add_fetch(&next_serial, 1,
						__ATOMIC_RELAXED);
	}
	return pm;
}

uint64_t pathmap__serial(const struct pathmap *pm)
{
	return pm->serial;
}

void pathmap__delete(struct pathmap *pm)
{
	if (!pm)
		return;
	free(pm->nodes);
	free(pm->path);
	free(pm->counted);
	hindex__exit(&pm->index);
	hindex__exit(&pm->cids);
	free(pm);
}

static uint64_t hash(uint32_t parent, const struct module *mod, uint64_t func,
		     uint64_t call_site, int64_t height)
{
	uint64_t h = hindex__mix(parent, (uintptr_t)mod);

	h = hindex__mix(h, func);
	h = hindex__mix(h, call_site);
	return hindex__mix(h, (uint64_t)height);
}

/* The CID index holds a CID's first two nodes: enough to find one, and
 * to tell a CID one path reaches from one that several do. */
#define CID_INDEXED 2

static uint64_t cid_hash(const struct module *mod, uint64_t func,
			 int64_t height)
{
	return hindex__mix(hindex__mix((uintptr_t)mod, func), (uint64_t)height);
}

/* How many nodes of CID (@mod, @func, @height) the index holds (at
 * most CID_INDEXED), the first of them in *@first when not NULL. */
static unsigned cid_nodes(const struct pathmap *pm, const struct module *mod,
			  uint64_t func, int64_t height, uint32_t *first)
{
	struct hindex_probe p = { HINDEX_NONE, 0 };
	unsigned found = 0;
	uint32_t i;

	while ((i = hindex__next(&pm->cids, &p, cid_hash(mod, func, height))) !=
	       HINDEX_NONE)
		if (pm->nodes[i].mod == mod && pm->nodes[i].func == func &&
		    pm->nodes[i].height == height && !found++ && first)
			*first = i;
	return found;
}

bool pathmap__has_cid(const struct pathmap *pm, const struct module *mod,
		      uint64_t func, int64_t height)
{
	return cid_nodes(pm, mod, func, height, NULL) > 0;
}

unsigned pathmap__cid_paths(const struct pathmap *pm,
			    const struct module *mod, uint64_t func,
			    int64_t height, bool *settled)
{
	uint32_t first = PM_NONE;
	unsigned n = cid_nodes(pm, mod, func, height, &first);

	*settled = n != 1 || pm->nodes[first].seen >= 2;
	return n;
}

static bool same(const struct pm_node *x, uint32_t parent,
		 const struct module *mod, uint64_t func, uint64_t call_site,
		 int64_t height)
{
	return x->parent == parent && x->mod == mod && x->func == func &&
	       x->call_site == call_site && x->height == height;
}

/* Node @i into the CID index, unless the index holds CID_INDEXED of its
 * CID already. */
static int index_cid(struct pathmap *pm, uint32_t i)
{
	const struct pm_node *x = &pm->nodes[i];

	if (cid_nodes(pm, x->mod, x->func, x->height, NULL) >= CID_INDEXED)
		return 0;
	return hindex__insert(&pm->cids, cid_hash(x->mod, x->func, x->height),
			      i);
}

/* Node @i, met on a path being added: a composed node that a path
 * added whole reaches is observed, and explains its CID from then on. */
static int meet(struct pathmap *pm, uint32_t i)
{
	struct pm_node *x = &pm->nodes[i];

	if (!x->composed || pm->composing)
		return 0;
	x->composed = false;
	return index_cid(pm, i);
}

/* The node for the key, created when absent (*@made set then; not
 * looked for when @parent was just made: it has no children yet).
 * PM_NONE on failure, with *@err set. */
static uint32_t get(struct pathmap *pm, uint32_t parent,
		    const struct module *mod, uint64_t func, const char *name,
		    uint64_t call_site, int64_t height, bool *made, int *err)
{
	uint64_t h = hash(parent, mod, func, call_site, height);
	struct hindex_probe p = { HINDEX_NONE, 0 };
	struct pm_node *x;
	uint32_t i;

	while (!*made && (i = hindex__next(&pm->index, &p, h)) != HINDEX_NONE)
		if (same(&pm->nodes[i], parent, mod, func, call_site, height))
			return (*err = meet(pm, i)) ? PM_NONE : i;
	*made = true;
	if (pm->n >= pm->max) {
		*err = -ENOSPC;
		return PM_NONE;
	}
	if ((*err = grow(&pm->nodes, &pm->cap, pm->n + 1, sizeof(*pm->nodes),
			 256)) ||
	    (*err = hindex__insert(&pm->index, h, (uint32_t)pm->n)))
		return PM_NONE;
	x = &pm->nodes[pm->n];
	*x = (struct pm_node){ .parent = parent, .mod = mod, .func = func,
		.name = name, .call_site = call_site, .height = height };
	if (parent == PM_NONE) {
		x->root = (uint32_t)pm->n;
		x->fragment = call_site == PM_FRAGMENT;
	} else {
		x->root = pm->nodes[parent].root;
		x->depth = pm->nodes[parent].depth + 1;
		x->fragment = pm->nodes[parent].fragment;
		x->composed = pm->composing;
		if (!x->fragment && !x->composed &&
		    (*err = index_cid(pm, (uint32_t)pm->n)))
			return PM_NONE;
	}
	return (uint32_t)pm->n++;
}

/* A bit for every node, zeroed where new. */
static int room_to_mark(struct pathmap *pm)
{
	size_t words = (pm->n + 63) / 64, old = pm->counted_cap;

	if (words <= old)
		return 0;
	if (grow(&pm->counted, &pm->counted_cap, words, sizeof(*pm->counted),
		 64))
		return -ENOMEM;
	memset(pm->counted + old, 0,
	       (pm->counted_cap - old) * sizeof(*pm->counted));
	return 0;
}

/* One more sample through node @i. */
static void count(struct pathmap *pm, uint32_t i)
{
	struct pm_node *x = &pm->nodes[i];

	if (!x->total++)
		pm->counted[i / 64] |= 1ULL << (i % 64);
	if (x->seen < UINT8_MAX)
		x->seen++;
}

static int add_below(struct pathmap *pm, uint32_t top, uint64_t site,
		     const struct path_frame *frames, size_t n, uint32_t *leaf)
{
	uint32_t *path;
	size_t along;
	bool made = false;	/* the last node got was made: no children */
	int err = 0;

	if (grow(&pm->path, &pm->path_cap, n + 1, sizeof(*pm->path), 64))
		return -ENOMEM;
	path = pm->path;
	/* A sample's outer frames are mostly the last one's: while they
	 * are, the last path's node (still in path[]) is checked in place
	 * of a search of the index. */
	along = pm->path_n && path[0] == top ? pm->path_n : 0;
	path[0] = top;
	for (size_t i = 0; i < n && path[i] != PM_NONE; i++) {
		uint64_t cs = i ? frames[i - 1].pc : site;

		if (i + 1 < along && same(&pm->nodes[path[i + 1]], path[i],
					  frames[i].mod, frames[i].func, cs,
					  frames[i].height)) {
			if ((err = meet(pm, path[i + 1])))
				break;
			continue;
		}
		along = 0;
		path[i + 1] = get(pm, path[i], frames[i].mod, frames[i].func,
				  frames[i].name, cs, frames[i].height, &made,
				  &err);
	}
	pm->path_n = err ? 0 : n + 1;
	if (!err)
		err = room_to_mark(pm);
	if (err)
		return err;	/* nodes made so far stay, with no counts */
	for (size_t i = 1; i <= n; i++)
		count(pm, path[i]);
	for (uint32_t i = top; i != PM_NONE; i = pm->nodes[i].parent)
		count(pm, i);
	pm->nodes[path[n]].self++;
	if (leaf)
		*leaf = path[n];
	return 0;
}

static int add(struct pathmap *pm, const struct module *prog,
	       const struct path_frame *frames, size_t n, uint32_t *leaf,
	       bool fragment)
{
	bool made = false;
	int err = 0;
	uint32_t root;

	if (!n)
		return -EINVAL;
	root = get(pm, PM_NONE, prog, 0, NULL, fragment ? PM_FRAGMENT : 0, 0,
		   &made, &err);
	if (root == PM_NONE)
		return err;
	return add_below(pm, root, 0, frames, n, leaf);
}

int pathmap__add(struct pathmap *pm, const struct module *prog,
		 const struct path_frame *frames, size_t n, uint32_t *leaf)
{
	return add(pm, prog, frames, n, leaf, false);
}

int pathmap__add_fragment(struct pathmap *pm, const struct module *prog,
			  const struct path_frame *frames, size_t n,
			  uint32_t *leaf)
{
	return add(pm, prog, frames, n, leaf, true);
}

/* The node of program @prog's one whole path through a frame of
 * @f[j]'s CID, where the map has one and its frames above that one are
 * @f[0, j), call sites included; PM_NONE where it has none or several,
 * or one the copy disagrees with. */
static uint32_t agreeing(const struct pathmap *pm, const struct module *prog,
			 const struct path_frame *f, size_t j)
{
	uint32_t x = PM_NONE, at;

	if (cid_nodes(pm, f[j].mod, f[j].func, f[j].height, &x) != 1 ||
	    pm->nodes[pm->nodes[x].root].mod != prog)
		return PM_NONE;
	at = x;
	for (size_t k = j; k; k--) {
		const struct pm_node *c = &pm->nodes[at];
		const struct pm_node *up = &pm->nodes[c->parent];

		if (!up->depth || c->call_site != f[k - 1].pc ||
		    up->mod != f[k - 1].mod || up->func != f[k - 1].func ||
		    up->height != f[k - 1].height)
			return PM_NONE;
		at = c->parent;
	}
	return x;
}

int pathmap__add_through(struct pathmap *pm, const struct module *prog,
			 const struct path_frame *frames, size_t n,
			 uint32_t *leaf)
{
	for (size_t j = n; j-- > 0;) {
		uint32_t x = agreeing(pm, prog, frames, j);

		if (x != PM_NONE) {
			int ret;

			pm->composing = true;
			ret = add_below(pm, x, frames[j].pc, frames + j + 1,
					n - j - 1, leaf);
			pm->composing = false;
			return ret;
		}
	}
	return -ENOENT;
}

size_t pathmap__size(const struct pathmap *pm)
{
	return pm->n;
}

struct pm_node *pathmap__node(struct pathmap *pm, uint32_t i)
{
	return i < pm->n ? &pm->nodes[i] : NULL;
}

uint32_t pathmap__next_counted(const struct pathmap *pm, uint32_t from)
{
	size_t w = from / 64, words = (pm->n + 63) / 64;
	uint64_t bits;

	if (from >= pm->n || w >= pm->counted_cap)
		return PM_NONE;
	for (bits = pm->counted[w] & (~0ULL << (from % 64)); !bits;
	     bits = pm->counted[w])
		if (++w >= words || w >= pm->counted_cap)
			return PM_NONE;
	return (uint32_t)(w * 64 + (size_t)__builtin_ctzll(bits));
}

void pathmap__clear_counts(struct pathmap *pm)
{
	for (uint32_t i = pathmap__next_counted(pm, 0); i != PM_NONE;
	     i = pathmap__next_counted(pm, i + 1))
		pm->nodes[i].self = pm->nodes[i].total = 0;
	if (pm->counted_cap)
		memset(pm->counted, 0,
		       pm->counted_cap * sizeof(*pm->counted));
}
