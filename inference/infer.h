/*
 * infer.h - the inference engine: context identifiers to calling
 * contexts, through the path maps that training learned.
 *
 * Each program's path map is given node by node (parents first).  Its
 * nodes become contexts of the caller's CCT, and two tables are built:
 * - CID -> candidates: (function, height) to the distinct contexts that
 *   training saw with that frame, with their training frequencies; a
 *   hash lookup, one probe in the common case.
 * - the dynamic call graph: caller -> callee edges with the frame size
 *   between them (callee height - caller height) and their counts, for
 *   the search that explains CIDs training never saw.
 *
 * infer__cid() then attributes a measurement's samples of one CID:
 * - one candidate: all weight to it, every frame certain (precise);
 * - several: the suffix they share is certain, the weight is split by
 *   training frequency (self samples, else total) (ambiguous);
 * - none: a bounded search up the call graph for a chain of edges
 *   whose frame sizes add up to the height, from a known CID; the
 *   solutions share the weight by their anchor's frequency times the
 *   edges' probabilities, and only the leaf is certain (searched);
 *   results are memoised per CID;
 * - still nothing: the context "[unknown callers of F at height H]; F"
 *   (unknown), never dropped.
 */
#ifndef ICPPD_INFERENCE_INFER_H
#define ICPPD_INFERENCE_INFER_H

#include <stddef.h>
#include <stdint.h>

#include "inference/cct.h"

/* One node of a path map, as the store holds it. */
struct infer_node {
	int64_t parent;		/* index among this map's nodes; -1: outermost */
	int64_t function_id;
	int64_t height;
	uint64_t call_site;	/* return address in the parent */
	uint64_t self, total;	/* training samples */
	int64_t context_id;	/* the store's context; 0: none */
};

/* A candidate context of a CID. */
struct infer_cand {
	uint32_t node;		/* in the CCT */
	double self, total;	/* training samples in that context */
	double share;		/* of the CID's samples it gets */
};

/* Bounds of the search for missing CIDs (0: the default). */
struct infer_limits {
	unsigned max_edges;	/* chain length; default 6 */
	unsigned max_states;	/* states visited per CID; default 4096 */
	unsigned max_solutions;	/* default 64 */
};

struct infer_stats {
	uint64_t cids;		/* infer__cid() calls */
	uint64_t searches;	/* CIDs searched (memo misses) */
	uint64_t search_states;
	double samples, by_how[CCT_NR_HOW];
};

struct infer;

/* The engine writes into @t, which it borrows.  @lim may be NULL. */
struct infer *infer__new(struct cct *t, const struct infer_limits *lim);
void infer__free(struct infer *inf);

/* Adds the path map of program @program_id, parents before children.
 * 0 or -ENOMEM / -EINVAL (a parent index not seen yet). */
int infer__begin_map(struct infer *inf, int64_t program_id);
int infer__add_node(struct infer *inf, const struct infer_node *n);
int infer__end_map(struct infer *inf);

/* The candidates of CID (@func, @height) of @program_id: their number,
 * the array in *@c (valid until the next map is added). */
size_t infer__lookup(const struct infer *inf, int64_t program_id,
		     int64_t func, int64_t height,
		     const struct infer_cand **c);

/* Attributes @samples of CID (@func, @height) measured in @program_id.
 * @func must be defined in the CCT (its name heads unknown frames).
 * 0 or -ENOMEM. */
int infer__cid(struct infer *inf, int64_t program_id, int64_t func,
	       int64_t height, double samples);

const struct infer_stats *infer__stats(const struct infer *inf);

#endif
