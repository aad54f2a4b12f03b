/*
 * infer.h - the inference engine: context identifiers to calling
 * contexts, through the path maps that training learned.
 *
 * Each program's path map is given node by node (parents first).  Its
 * nodes become contexts of the caller's CCT, and two tables are built:
 * - CID -> candidates: (function, height) to the distinct contexts that
 *   training saw with that frame, with their training frequencies; a
 *   hash lookup, one probe in the common case.
 * - the call graph: caller -> callee edges with the frame size between
 *   them (callee height - caller height): the map's, with their counts,
 *   and the direct calls the binaries prove (infer__add_call), for the
 *   search that explains CIDs training never saw.
 *
 * infer__cid() then attributes a measurement's samples of one CID:
 * - one candidate: all weight to it, every frame certain (precise);
 * - several: the suffix they share is certain, the weight is split by
 *   training frequency (self samples, else total) (ambiguous);
 * - none: the calls into its function (learned, proven, through tail
 *   calls) whose caller's CID, at the height the call puts it, is a
 *   known one: that CID's candidates with the function below, weighed
 *   by the call's weight times the candidate's share, cut where guessed
 *   calls split them (searched, only the leaf certain); else its
 *   function's shapes at other heights (infer_shapes.c); else a search
 *   up the call graph counts the chains of edges whose
 *   frame sizes add up to the height, from a known CID, the shortest
 *   first (memoised per function and height).  One chain is precise, every frame certain;
 *   several are ambiguous, the frames they share certain; both as
 *   above.  The chains share the weight by the probability of walking
 *   up each: every edge's share of its callee's callers (learned
 *   samples; a proven call no sample took weighs a quarter of one),
 *   times the anchor's share of its CID.  When a bound cut the search
 *   short, the chains it found are "searched": only the leaf certain.
 * - still nothing: the context "[unknown callers of F at height H]; F"
 *   (unknown), never dropped.
 *
 * Several candidates or chains are apportioned by their weights, as
 * ICPP does (right in aggregate, the frames above their shared suffix
 * marked not certain), and cut only where a guess alone splits them:
 * walking up from the leaf, at each level where the chains part, the
 * split is weighed when a learned path took every call it makes (each
 * chain's call from the frame above into its frame at that level);
 * such a split is kept whole.  At a split a guess makes (a call only
 * the binary shows, whose weight is a prior; candidates without
 * counts), a chain keeps its frames only while the chains that show
 * the same frames so far hold at least the confidence share of the
 * weight.  Above the last frame kept, F at height H, stands "[unknown
 * callers of F at height H]", and the chains cut alike merge.  A report
 * so never draws a guessed caller as if it were known (the search's
 * guesses deep in a big program, cc1 under make, were wrong 80 % of the
 * time when shown whole), and never hides a measured one (cutting
 * learned candidates put 93 % of a dispatch loop's profile under
 * unknown callers).
 */
#ifndef ICPPD_INFERENCE_INFER_H
#define ICPPD_INFERENCE_INFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/path.h"

#include "inference/cct.h"

/* One node of a path map, as the store holds it. */
struct infer_node {
	int64_t parent;		/* index among this map's nodes; -1: outermost */
	int64_t function_id;
	int64_t height;
	uint64_t call_site;	/* return address in the parent */
	uint64_t self, total;	/* training samples */
	int64_t context_id;	/* the store's context; 0: none */
	/* samples of the runs being inferred whose learning unwound this
	 * path whole: where a CID's candidates have some that contradict
	 * the map's split beyond sampling noise, they split its samples */
	double own;
	/* a fragment's node (pathmap.h): one with parent -1 is where a
	 * stack copy ended, shown under "[unknown callers of F at height
	 * H]"; a CID's fragment nodes are its candidates only when no
	 * whole path explains it */
	bool fragment;
};

/* A candidate context of a CID. */
struct infer_cand {
	uint32_t node;		/* in the CCT */
	double self, total;	/* training samples in that context */
	double share;		/* of the CID's samples it gets */
	double own;		/* the inferred runs' own samples of it,
				 * unwound whole (struct infer_node) */
	bool fragment;		/* a stack copy's innermost frames only */
};

/* Bounds of the search for missing CIDs (0: the default). */
struct infer_limits {
	unsigned max_edges;	/* chain length; default 24, at most 64 */
	unsigned max_states;	/* states visited per CID; default 1024 */
	unsigned max_solutions;	/* default 64 */
	unsigned max_guesses;	/* calls per chain that no learned path
				 * took (the binaries' direct calls only):
				 * default 2; chains needing more are
				 * searched only when no chain needs so
				 * few.  Learned paths differ from a
				 * missing CID's true one by an edge or two
				 * near the leaf; without this bound the
				 * static graph's fan-in (cc1: 350,000
				 * calls) made each search visit thousands
				 * of states */
	double confidence;	/* a chain's frames are shown up to where
				 * chains with at least this share of the
				 * weight agree; default 0.75; < 0: whole
				 * chains */
	bool search_only;	/* missing CIDs by the search alone, not
				 * by their function's shapes at other
				 * heights first (infer_shapes.c): the
				 * search's own tests */
};

struct infer_stats {
	uint64_t cids;		/* infer__cid() calls */
	uint64_t searches;	/* CIDs searched (memo misses) */
	uint64_t search_states;
	uint64_t calls;		/* infer__add_call() and _add_tail() calls */
	double samples, by_how[CCT_NR_HOW];
};

struct infer;

/* The engine writes into @t, which it borrows.  @lim may be NULL. */
struct infer *infer__new(struct cct *t, const struct infer_limits *lim);
void infer__delete(struct infer *inf);

/* Adds the path map of program @program_id, parents before children.
 * 0 or -ENOMEM / -EINVAL (a parent index not seen yet). */
int infer__begin_map(struct infer *inf, int64_t program_id);
int infer__add_node(struct infer *inf, const struct infer_node *n);
int infer__end_map(struct infer *inf);

/* A direct call the binary shows: @caller calls @callee, whose frame
 * lies @delta bytes below the caller's (> 0).  After the map of
 * @program_id is built; the next infer__cid() rebuilds the call graph
 * and forgets earlier searches.  0, -EINVAL or -ENOMEM. */
int infer__add_call(struct infer *inf, int64_t program_id, int64_t caller,
		    int64_t callee, int64_t delta);

/* Builds the call graph of the calls added since the maps were built
 * (infer__add_call() and the three below), as the next explanation
 * would: a caller that budgets its explanations builds it first.  With
 * clang++'s libraries' calls (1.5 million) that took 1.7 s, more than
 * a report's search budget, and where the machine's cache had them,
 * 64 % of a validation run's samples were left unknown.  0 or
 * -ENOMEM. */
int infer__index_calls(struct infer *inf);

/* A tail call the binary shows: @from ends in a jump to @callee, which
 * takes its frame, so every call into @from (learned or proven, and
 * through other tail calls, TAIL_DEPTH deep) is one into @callee with
 * the same frame size: proven calls of it.  On a stack @callee stands
 * under @from's caller, @from nowhere.  GCC -O2 makes many (cc1plus:
 * 15,362): of the 148 true paths validate found one frame below a known
 * CID under a wrong caller (g++ -O2 -c after a default record), 115 had
 * no edge from the true caller into the leaf; with tail calls, 9 of 43.
 * 0, -EINVAL or -ENOMEM. */
int infer__add_tail(struct infer *inf, int64_t program_id, int64_t from,
		    int64_t callee);

/*
 * An indirect call the binary shows: @caller calls through a pointer
 * (a virtual call, a hook, a callback), its callee's frame @delta bytes
 * below its own (> 0); and a function whose address the binary takes
 * (@func), which such a call may reach.  The search ends a chain at a
 * taken function through an indirect call only from a known CID (an
 * anchor): "a taken function at height H" names a callee only when
 * something learned stands where the call comes from, and among the
 * anchors at one height the learned samples through each weigh it.  A
 * guess, shown only where it holds the confidence share.  cc1plus's
 * passes run so (execute_one_pass() calls each pass's execute() through
 * its vtable): 83 % of g++'s true stacks cross an indirect call.  After
 * the map is built, as infer__add_call().  0, -EINVAL or -ENOMEM.
 */
int infer__add_indirect(struct infer *inf, int64_t program_id,
			int64_t caller, int64_t delta);
int infer__add_taken(struct infer *inf, int64_t program_id, int64_t func);

/*
 * CID (@func, @height) of @program_id is one the runs being inferred
 * sampled: evidence that a frame of @func stands at @height on their
 * stacks.  A searched chain through such a frame (not its leaf) is
 * OBSERVED_BOOST times likelier (infer_int.h).  Given before the
 * explanations it should weigh: searches already made keep their
 * chains.  0, -EINVAL or -ENOMEM.
 */
int infer__observe(struct infer *inf, int64_t program_id, int64_t func,
		   int64_t height);

/* The candidates of CID (@func, @height) of @program_id: their number,
 * the array in *@c (valid until the next map is added). */
size_t infer__lookup(const struct infer *inf, int64_t program_id,
		     int64_t func, int64_t height,
		     const struct infer_cand **c);

/* A context a CID's samples go to: a leaf of the CCT, with its share;
 * of it, @own are samples whose own stack was unwound to this very
 * context (infer__explain_counted()): exact, every frame certain. */
struct infer_solution {
	uint32_t node;
	double share, own;
};

/* How the samples of one CID are attributed. */
struct infer_outcome {
	enum cct_how how;
	uint32_t exact;		/* frames from the leaf that are certain */
	size_t n;
	const struct infer_solution *sols;	/* shares sum to 1; valid
						 * until the next call */
};

/* What infer__cid() would do with CID (@func, @height) of @program_id,
 * without adding weight: for validation, which compares it with the
 * truth.  Unknown callers get their pseudo context in the CCT.  0 or
 * -ENOMEM. */
int infer__explain(struct infer *inf, int64_t program_id, int64_t func,
		   int64_t height, struct infer_outcome *out);

/*
 * infer__explain() for @samples of the CID in the inferred runs, of
 * which the runs' own learning unwound some whole (the learner took
 * the main event's turn: they are samples of the run): each of those
 * counts in its own context, in the solution's @own, and only the rest
 * is apportioned.  0 or -ENOMEM.
 */
int infer__explain_counted(struct infer *inf, int64_t program_id,
			   int64_t func, int64_t height, double samples,
			   struct infer_outcome *out);

/* Attributes @samples of CID (@func, @height) measured in @program_id.
 * @func must be defined in the CCT (its name heads unknown frames).
 * 0 or -ENOMEM. */
int infer__cid(struct infer *inf, int64_t program_id, int64_t func,
	       int64_t height, double samples);

/* infer__cid() with the contexts below CCT node @under (a process
 * frame's) instead of the root: the same frames, in their own nodes
 * (the contexts the engine keeps for later CIDs stay under the root);
 * with @below (a frame, such as [kernel]; 0: none) the weight goes to
 * that frame's node below each context. */
int infer__cid_under(struct infer *inf, uint32_t under, int64_t below,
		     int64_t program_id, int64_t func, int64_t height,
		     double samples);

/* The outcome of a CID left unexplained without a search (a report's
 * budget ran out): its context "[unknown callers of F at height H]; F".
 * 0 or -ENOMEM. */
int infer__unknown(struct infer *inf, int64_t func, int64_t height,
		   struct infer_outcome *out);

/* Attributes @samples as outcome @o says (from infer__explain(), or
 * kept from an earlier inference: its nodes in this engine's CCT),
 * below @under and above @below as infer__cid_under() does; a
 * solution's own part as precise.  0 or -ENOMEM. */
int infer__add_outcome(struct infer *inf, uint32_t under, int64_t below,
		       const struct infer_outcome *o, double samples);

/* infer__add_outcome() with @nbelow frames below the context (the
 * first just below it), every one certain: [kernel] and the kernel's
 * call chain of the samples taken in it.  0 or -ENOMEM. */
int infer__add_outcome_chain(struct infer *inf, uint32_t under,
			     const int64_t *below, size_t nbelow,
			     const struct infer_outcome *o, double samples);

/* From now on, explanations search no more: a fragment's top (see
 * struct infer_node) is explained by the whole paths alone, as a
 * report's budget runs out. */
void infer__stop_searching(struct infer *inf);

const struct infer_stats *infer__stats(const struct infer *inf);

#endif
