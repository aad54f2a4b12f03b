/*
 * pathmap.h - the path map in memory: a calling context tree of observed
 * paths per program, as a training run learns it (or as a validation
 * run records the true paths of its samples).
 *
 * A node is one frame in one context: (parent, function, call site,
 * height).  The call site is the return address in the parent's
 * function, so two calls of F from different places of G are different
 * contexts; the height is part of the key because a context reached with
 * a different frame size above it (alloca, variable-length arrays) is a
 * different CID.  Every node is a candidate path for the CID (function,
 * height) of its frame: a sample whose innermost frame is that node
 * would carry exactly that CID.  Each program has a root node (func 0)
 * whose children are outermost frames (_start, clone3).
 *
 * Fragments: a sample whose stack copy ended before its outermost frame
 * gives its innermost frames, each with its height.  They go under a
 * second root of the program (a node with call_site PM_FRAGMENT), whose
 * children are the outermost frames the copies reached, not outermost
 * frames of the program; such nodes are marked fragment and explain no
 * CID for pathmap__has_cid().  A fragment the map already knows the
 * rest of (pathmap__add_through()) is added as that whole path instead;
 * the nodes that made are composed, and explain no CID either until a
 * path added whole reaches them: above the copy a composed path rests on
 * one path being the only one, which the copies of its CIDs go on
 * testing.
 *
 * Counts: self = samples whose innermost frame is the node, total =
 * samples passing through it, both since the last pathmap__clear_counts()
 * (the store adds them to the database and clears them).  Memory is
 * bounded by @max_nodes.
 */
#ifndef ICPPD_INFERENCE_PATHMAP_H
#define ICPPD_INFERENCE_PATHMAP_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/path.h"

#define PM_NONE UINT32_MAX
#define PM_FRAGMENT 1	/* the call_site of a program's fragment root */

struct pm_node {
	uint32_t parent;	/* PM_NONE for a program root */
	uint32_t root;		/* the program root above it (itself for one) */
	uint32_t depth;		/* 0 for a root, 1 for an outermost frame */
	const struct module *mod;	/* the program, for a root */
	uint64_t func;
	const char *name;
	uint64_t call_site;	/* the parent's pc; 0 under a root */
	int64_t height;
	uint64_t self, total;	/* since the last clear */
	bool fragment;		/* under the program's fragment root */
	bool composed;		/* made by pathmap__add_through(), on no
				 * path added whole yet */
	uint8_t seen;		/* samples through it, up to 255: never
				 * cleared (pathmap__cid_paths()) */
};

struct pathmap;

struct pathmap *pathmap__new(size_t max_nodes);
void pathmap__delete(struct pathmap *pm);

/*
 * Adds one sample's path of @n frames, outermost first, under program
 * @prog: every frame's total grows by one, the innermost one's self by
 * one.  The innermost node's index in *@leaf when @leaf is not NULL.
 * 0, -ENOSPC (the map is at max_nodes: nothing was counted), -ENOMEM.
 */
int pathmap__add(struct pathmap *pm, const struct module *prog,
		 const struct path_frame *frames, size_t n, uint32_t *leaf);
/* The same for a fragment: @frames[0] is the outermost frame the copy
 * reached. */
int pathmap__add_fragment(struct pathmap *pm, const struct module *prog,
			  const struct path_frame *frames, size_t n,
			  uint32_t *leaf);

/*
 * A fragment as the whole path it is part of, where the map knows that
 * path: the innermost frame of @frames (outermost first, as a
 * fragment's) whose CID one path of @prog added whole reaches, that
 * path's frames above it the fragment's (call sites included), takes
 * the fragment's frames below it as the path's continuation, counted as
 * pathmap__add() counts a path; nodes it makes are composed.  -ENOENT
 * where no frame is such (nothing added); else as pathmap__add().
 */
int pathmap__add_through(struct pathmap *pm, const struct module *prog,
			 const struct path_frame *frames, size_t n,
			 uint32_t *leaf);

/* Whether some path added whole has a frame of function @func of @mod at
 * @height (a node neither a fragment's nor composed): a sample with that
 * CID is explained by the map.  One probe. */
bool pathmap__has_cid(const struct pathmap *pm, const struct module *mod,
		      uint64_t func, int64_t height);
/*
 * How many whole paths have a frame of that CID (0, 1, or 2 for
 * several), in one probe.  With no height (ICPPD_HEIGHT_NONE) to tell
 * its paths apart, a sample of a CID that several reach is explained
 * only by how often each is learned.  *@settled: whether the map's
 * evidence for the CID is more than a lone observation: not where one
 * path has a frame of it and one sample alone went through that frame
 * (since the map began, not since the last clear).  Where one sample was
 * all a map had of a CID's one path, that was the wrong path for 15-17 %
 * of a validation's samples, against 2-4 % after two or three
 * (docs/benchmarks.md, "lone observations").  A CID several paths reach
 * is settled: its samples are split by the paths' counts, which stay a
 * fair sample of them only while its copies are unwound at one rate.
 */
unsigned pathmap__cid_paths(const struct pathmap *pm,
			    const struct module *mod, uint64_t func,
			    int64_t height, bool *settled);

/* Nodes in creation order: a parent always comes before its children. */
size_t pathmap__size(const struct pathmap *pm);
struct pm_node *pathmap__node(struct pathmap *pm, uint32_t i);

/* The first node from index @from on with samples since the last
 * clear, or PM_NONE: a writer's walk of what changed, in creation order
 * (parents first), that costs a bit per node it passes over. */
uint32_t pathmap__next_counted(const struct pathmap *pm, uint32_t from);
/* Zeroes every count (after they were stored). */
void pathmap__clear_counts(struct pathmap *pm);
/* A number no other map of this process has had: what a writer keys
 * its own per-node state by (an address may be reused). */
uint64_t pathmap__serial(const struct pathmap *pm);

#endif
