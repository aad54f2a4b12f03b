/*
 * infer_int.h - private to inference/: the engine's tables (infer.c)
 * and what its search (infer_search.c) needs of them.  infer.h is the
 * contract.
 */
#ifndef ICPPD_INFERENCE_INFER_INT_H
#define ICPPD_INFERENCE_INFER_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "common/hindex.h"
#include "inference/infer.h"


#define DEFAULT_MAX_EDGES 24
/* The first pass's bound on a chain's length (infer_search.c, deepen()) */
#define FIRST_MAX_EDGES 2
#define DEFAULT_MAX_STATES 1024
#define DEFAULT_MAX_SOLUTIONS 64
#define DEFAULT_MAX_GUESSES 2
#define MAX_EDGES_LIMIT 64
#define DEFAULT_CONFIDENCE 0.75
/* The weight of a call the binary proves but no learned path took, in
 * samples: learned edges outweigh it as soon as one sample took them. */
#define PROVEN_PRIOR 0.25
/* The weight, in samples, of the map's split of a CID against the
 * split the inferred runs' own learning measured, where the two
 * disagree (see weigh()). */
#define RUN_PRIOR 8.0
#define NO_HEIGHT INT64_MAX
/* Tail calls followed through tail calls (infer__add_tail()) */
#define TAIL_DEPTH 2
/* The weight, in samples, of "called through a pointer" among a taken
 * function's callers: one more call only the binary shows. */
#define INDIRECT_PRIOR PROVEN_PRIOR
/* How much more likely a chain is for each frame on it (not its leaf,
 * nor the known CID it ends at) that the inferred runs sampled as a CID
 * of their own (infer__observe()).  Measured on a validation run of
 * g++ -O2 -c after a trickle record: of the frames between a sample's
 * leaf and the first CID the map knew, 8.6 % were sampled CIDs of the
 * run; of the same functions 16 to 48 bytes higher or lower, 0.9 %. */
#define OBSERVED_BOOST 8.0
/* An indirect call's heights per caller that make anchors (a crafted
 * binary's function may list thousands) */
#define ANCHOR_DELTAS_MAX 16
/* The frames of "[unknown callers of F at height H]; F" counted as
 * certain: the pseudo frame claims nothing but that the callers are
 * unknown. */
#define UNKNOWN_EXACT 2


struct mnode {
	int64_t func, height;
	uint32_t parent;	/* map node index; CCT_NONE: outermost */
	uint32_t cct;
	uint64_t self, total;
	double own;
	bool fragment;
};

struct cid_entry {
	int64_t func, height;
	uint32_t first, n;	/* range of cands */
	uint32_t exact;		/* frames the candidates share */
	bool weighed;		/* learned samples weigh the candidates */
	bool fragment;		/* the candidates are fragments' (some of
				 * them, with no height: see build_cids) */
};

struct edge {
	int64_t callee, caller, delta;
	double count;		/* learned samples through it */
	int64_t caller_hmin;	/* the caller's lowest possible height
				 * (lowest_heights()), kept here so that a
				 * search's step needs no lookup */
	uint32_t caller_callee;	/* the caller's own entry in the map's
				 * callees, NO_CALLEE where nothing calls
				 * it, CALLEE_UNKNOWN until a search first
				 * steps up the edge: its next steps up it
				 * need no lookup either */
	bool proven;		/* a call the binary shows */
	bool caller_known;	/* the caller has CIDs in the map: only
				 * then is a CID looked up */
};

#define NO_CALLEE UINT32_MAX
#define CALLEE_UNKNOWN (UINT32_MAX - 1)

/* A tail call: @from's frame taken by @to. */
struct tail {
	int64_t from, to;
};

/* An indirect call in @caller, its callee's frame @delta below. */
struct isite {
	int64_t caller, delta;
};

/* Where an indirect call from a known CID (@caller at @caller_height)
 * puts its callee: at @height.  @weight: the learned samples through
 * the known CID (its candidates' totals), which weigh the anchors of
 * one height against each other. */
struct anchor {
	int64_t height, caller, caller_height;
	double weight;
};

struct callee {
	int64_t func;
	uint32_t first, n;	/* range of edges */
	double sum;		/* their weights, and INDIRECT_PRIOR when
				 * taken */
	bool taken;		/* its address is taken: an indirect call
				 * may reach it */
};

struct memo {
	int64_t func, height;
	uint32_t first, n;	/* range of sols */
	uint32_t exact;
	enum cct_how how;
};

/* A searched state: the chains from it to known CIDs, and the
 * probability that a walk up from it ends at one (each step taking an
 * edge by its share of the callee's callers). */
struct state {
	int64_t func, height;
	unsigned guesses;	/* calls no learned path took, still allowed
				 * above it */
	double chains, reach;
	bool cut;		/* a bound cut its count short: a lower
				 * bound */
	bool pruned;		/* the guess bound left chains out */
};

/* A function of the call graph: its lowest possible height and its
 * edges as a caller (indexes into the map's by_caller). */
struct fnode {
	int64_t func, hmin;
	uint32_t first, n;
	bool known;		/* some CID of the map is this function's */
};

struct map {
	int64_t program;
	struct mnode *nodes;
	size_t nnodes, nodes_cap;
	struct cid_entry *cids;
	size_t ncids;
	struct infer_cand *cands;
	size_t ncands;
	struct hindex cid_index;
	struct edge *edges;
	size_t nedges, edges_cap;
	struct tail *tails;
	size_t ntails, tails_cap;
	struct isite *isites;	/* sorted by caller once indexed */
	size_t nisites, isites_cap;
	int64_t *taken;		/* sorted once indexed */
	size_t ntaken, taken_cap;
	struct anchor *anchors;	/* sorted by height */
	size_t nanchors;
	struct cid_key {
		int64_t func, height;
	} *observed;		/* infer__observe() */
	size_t nobserved, observed_cap;
	struct hindex observed_index;
	bool dirty;		/* edges added since the tables were built */
	struct callee *callees;
	size_t ncallees;
	struct hindex callee_index;
	struct fnode *fnodes;
	size_t nfnodes;
	struct hindex fnode_index;
	uint32_t *by_caller;	/* edge indexes, by caller */
	struct state *states;
	size_t nstates, states_cap;
	struct hindex state_index;
	struct memo *memos;
	size_t nmemos, memos_cap;
	struct hindex memo_index;
	struct infer_solution *sols;
	size_t nsols, sols_cap;
};

struct infer {
	struct cct *cct;
	struct infer_limits lim;
	struct map *maps;
	size_t nmaps, maps_cap;
	struct map *building;
	struct infer_solution *scratch;	/* infer__explain() of candidates */
	size_t scratch_cap;
	uint32_t *chain;		/* graft(): a context's nodes */
	size_t chain_cap;
	struct infer_solution *tops;	/* explain_fragments(): a top's */
	size_t tops_cap;
	bool no_search;			/* infer__stop_searching() */
	struct infer_stats stats;
};

/* infer.c: the tables */
const struct cid_entry *infer__find_cid(const struct map *m, int64_t func,
					int64_t height);
/* A learned edge's weight in samples (a proven one's, its prior). */
double infer__edge_weight(const struct edge *e);
void infer__set_height(struct cct *t, uint32_t node, int64_t height);
/* The frames the @n contexts at CCT nodes @cur share, leaf up. */
uint32_t infer__shared_suffix(struct cct *t, uint32_t *cur, uint32_t n);

/* infer.c's room for an outcome's @n solutions (valid until the next
 * call); NULL when out of memory. */
struct infer_solution *infer__scratch(struct infer *inf, size_t n);
/* The explanation of CID (@func, @height) by whole paths, shapes or the
 * search (never by fragments) into inf->tops: how many; 0 when nothing
 * but unknown callers (*@searched: by shapes or the search); -ENOMEM. */
int infer__explain_top(struct infer *inf, struct map *m, int64_t func,
		       int64_t height, bool *searched);
/* The frames of context @node below node @stop, an ancestor of it,
 * under node @under (whose frame is @stop's), in *@out.  0 or -ENOMEM. */
int infer__graft_below(struct infer *inf, uint32_t node, uint32_t stop,
		       uint32_t under, uint32_t *out);

/* Sorts the @n solutions in @v by context and merges equal ones (their
 * shares summed): how many are left. */
size_t infer__merge_solutions(struct infer_solution *v, size_t n);
/* @n weighed solutions in @v (reordered) as a searched outcome, only
 * the leaf certain: equal contexts merged, the weights made shares, in
 * infer.c's scratch.  1 with *@out set, 0 when they weigh nothing, or
 * -ENOMEM. */
int infer__searched(struct infer *inf, struct infer_solution *v, size_t n,
		    struct infer_outcome *out);

/* infer_shapes.c: a missing CID from its function's shapes at other
 * heights.  1 with *@out set, 0 when none fits, or -ENOMEM. */
int infer__explain_shapes(struct infer *inf, struct map *m, int64_t func,
			  int64_t height, struct infer_outcome *out);

/* infer_search.c: a missing CID from the calls into its function whose
 * caller's CID, at the height each puts it, whole paths explain; cut
 * where guessed calls split them.  1 with *@out set, 0 when no call
 * does, or -ENOMEM. */
int infer__explain_callers(struct infer *inf, struct map *m, int64_t func,
			   int64_t height, struct infer_outcome *out);

/* infer_search.c: the search */
/* The memo of CID (@func, @height) of map @m: searched now when there is
 * none.  NULL when out of memory. */
const struct memo *infer__search_memo(struct infer *inf, struct map *m,
				      int64_t func, int64_t height);
/* The callee entry of @func (its edges as a callee), or NULL. */
const struct callee *infer__find_callee(const struct map *m, int64_t func);
/* OBSERVED_BOOST when CID (@func, @height) is one the inferred runs
 * sampled, else 1. */
double infer__observed(const struct map *m, int64_t func, int64_t height);
/* The anchors at callee height @height: their number, the first in
 * *@a. */
size_t infer__anchors_at(const struct map *m, int64_t height,
			 const struct anchor **a);
/* The node of "[unknown callers of @func at @height]; @func" into
 * *@node.  0 or -ENOMEM. */
int infer__unknown_node(struct infer *inf, int64_t func, int64_t height,
			uint32_t *node);
/* Cuts a guessed outcome's @v (*@n solutions) where its candidates
 * disagree (infer.h); the solutions left in *@n, their shared frames in
 * *@exact.  0 or -ENOMEM. */
int infer__cut_outcome(struct infer *inf, const struct map *m,
		       struct infer_solution *v, uint32_t *n, uint32_t *exact,
		       enum cct_how how);

#endif
