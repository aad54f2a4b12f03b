/*
 * cct.h - a calling context tree with sample weights: what inference
 * makes of a measurement run, and what every report is built from.
 *
 * A node is a calling context: the sequence of frames from the
 * outermost one (the root's children) down to it.  A frame is a function
 * of the store (id > 0) or a pseudo frame (id < 0): the "[unknown callers
 * of F at height H]" that stands above a sample the engine could not
 * explain (cct__pseudo()), a process (cct__process()), which stands
 * above every context of that process when a report asks for processes,
 * or "[kernel]" (cct__kernel()) below the user context that entered the
 * kernel, for samples taken there, or a function inlined in the frame
 * above it (cct__inlined(), added by profile/inline.c).
 * Node 0 is the root (frame 0).
 *
 * Weights are attached to nodes as records (node, exact, how, weight):
 * @exact frames from the node upwards are certain; the rest of the
 * context was apportioned among candidates or inferred by search.
 * Records with the same (node, exact, how) are merged, so their number
 * is bounded by the nodes times the few distinct values of exact.
 *
 * Each node also keeps the call site by which its parent called it
 * (a return address, as a virtual address in the parent's module), the
 * heaviest one seen, for --lines.
 *
 * Tuned for reports over path maps of 10^5..10^6 contexts: nodes and
 * records are dense arrays with hash indexes, one lookup per child step.
 */
#ifndef ICPPD_INFERENCE_CCT_H
#define ICPPD_INFERENCE_CCT_H

#include <stddef.h>
#include <stdint.h>

#include "common/hindex.h"

#define CCT_ROOT 0
#define CCT_NONE UINT32_MAX

/* How a record's weight was inferred, most certain first. */
enum cct_how {
	CCT_PRECISE,	/* the CID has one candidate context */
	CCT_AMBIGUOUS,	/* several: apportioned by training frequency */
	CCT_SEARCHED,	/* no candidate: a chain of call-graph edges */
	CCT_UNKNOWN,	/* nothing explains it: under an unknown frame */
	CCT_NR_HOW
};

/* "precise", ... */
const char *cct_how__name(enum cct_how how);

struct cct_node {
	uint32_t parent;	/* CCT_NONE for the root */
	uint32_t depth;		/* 0: the root; 1: an outermost frame */
	int64_t frame;
	uint64_t call_site;	/* return address in the parent; 0: none */
	double site_weight;	/* the weight that chose call_site */
	int64_t ext;		/* the store's context id; 0: none yet */
	int64_t height;		/* the stack height inference first gave
				 * its frame; 0: none (it names the unknown
				 * callers above a cut chain) */
};

struct cct_record {
	uint32_t node;
	uint32_t exact;		/* certain frames from the node up, >= 1 */
	enum cct_how how;
	double weight;
};

enum cct_frame_kind {
	CCT_FUNCTION,		/* id > 0 */
	CCT_UNKNOWN_CALLERS,	/* the pseudo frames: id < 0 */
	CCT_PROCESS,
	CCT_KERNEL,
	CCT_INLINED,		/* a function inlined in the frame above:
				 * a presentation of its pcs (cct__inlined()) */
};

/* What a report shows of a frame. */
struct cct_frame {
	int64_t id;
	enum cct_frame_kind kind;
	char *name;		/* owned */
	int64_t module_id;	/* the store's module; 0: none */
	uint64_t address;	/* function start, module virtual address */
	int64_t function_id;	/* pseudo frames: the function below;
				 * 0: a process frame */
	int64_t height;		/* pseudo frames: the height of the CID */
	int64_t pid;		/* process frames: the process; 0: all
				 * processes of the command @name */
};

struct cct;

struct cct *cct__new(void);
void cct__delete(struct cct *t);

/* The child of @parent for @frame, created if needed, in *@out.
 * 0 or -ENOMEM. */
int cct__child(struct cct *t, uint32_t parent, int64_t frame, uint32_t *out);
/* Keeps @site as @node's call site if @weight beats the current one. */
void cct__set_site(struct cct *t, uint32_t node, uint64_t site, double weight);

/* Adds @weight to the record (@node, @exact, @how).  0 or -ENOMEM. */
int cct__add(struct cct *t, uint32_t node, uint32_t exact, enum cct_how how,
	     double weight);

size_t cct__size(const struct cct *t);
struct cct_node *cct__node(struct cct *t, uint32_t i);
const struct cct_record *cct__records(const struct cct *t, size_t *n);
/* The sum of all records' weights. */
double cct__total(const struct cct *t);

/* Describes function frame @id (copies @name, made printable: a control
 * character or a byte of invalid UTF-8 as \xNN, see printable.h, so no
 * output format can be forged by a name).  0 or -ENOMEM. */
int cct__define(struct cct *t, int64_t id, const char *name,
		int64_t module_id, uint64_t address);
/* The pseudo frame "[unknown callers of F at height H]" for function
 * frame @func (defined) at @height: its id (< 0), the same one for the
 * same pair; 0 when out of memory. */
int64_t cct__pseudo(struct cct *t, int64_t func, int64_t height);
/* The process frame of process @pid (0: every process) running command
 * @comm, named @comm (made printable): its id (< 0), the same one for the
 * same pair; 0 when out of memory. */
int64_t cct__process(struct cct *t, int64_t pid, const char *comm);
/* The process frame that starts the context of node @i, or 0 when it
 * starts with no process frame. */
int64_t cct__process_of(struct cct *t, uint32_t i);
/* The "[kernel]" frame: its id (< 0), always the same; 0 when out of
 * memory. */
int64_t cct__kernel(struct cct *t);
/* The frame of kernel function @name (kind CCT_KERNEL, as "[kernel]":
 * drawn below it), the same id for the same name; 0 when out of
 * memory. */
int64_t cct__kernel_function(struct cct *t, const char *name);
/* The frame of function @name inlined in code of module @module_id,
 * named "@name (inlined)" (made printable), the same id for the same
 * pair; 0 when out of memory. */
int64_t cct__inlined(struct cct *t, int64_t module_id, const char *name);
/* The suffix of an inlined frame's name, as perf report shows it. */
#define CCT_INLINED_MARK " (inlined)"
/* An empty tree (the root alone) with @src's frames, under the same ids:
 * a tree rebuilt from @src's nodes (profile/inline.c) keeps every frame
 * id.  NULL when out of memory. */
struct cct *cct__new_like(const struct cct *src);
/* The kind of frame @id (an undefined one: CCT_FUNCTION). */
enum cct_frame_kind cct__kind(const struct cct *t, int64_t id);
/* The description of frame @id, or NULL when it was never defined. */
const struct cct_frame *cct__frame(const struct cct *t, int64_t id);
/* Its name; "?" for an undefined one. */
const char *cct__name(const struct cct *t, int64_t id);

/* What folded stacks and pprof call every unknown-callers frame: one
 * root, not one per (function, height) (a flame graph's edge would be
 * confetti); text and JSON keep the detail, pprof as a label. */
#define CCT_UNKNOWN_ROOT "[unknown callers]"
/* cct__name(), but CCT_UNKNOWN_ROOT for an unknown-callers frame. */
const char *cct__root_name(const struct cct *t, int64_t id);

#endif
