/*
 * run_profile_int.h - private to profile/: what run_profile.c (loading
 * and inferring a run) and stored.c (its inference read back from the
 * store and written to it) share.  run_profile.h is the contract.
 */
#ifndef ICPPD_PROFILE_RUN_PROFILE_INT_H
#define ICPPD_PROFILE_RUN_PROFILE_INT_H

#include "common/hindex.h"
#include "profile/run_profile.h"

/* The outcome of one CID (program, function, height): its solutions
 * sols[first, first + n), nodes of the profile's CCT. */
struct expl {
	int64_t program, func, height;
	enum cct_how how;
	uint32_t exact, first, n;
};

struct expls {
	struct expl *v;
	size_t n, cap;
	struct hindex index;
	struct infer_solution *sols;
	size_t nsols, sols_cap;
};

/* run_profile.c: the explanations */
/* The explanation of CID (@program, @func, @height), or NULL. */
struct expl *run_profile__find_expl(const struct expls *e, int64_t program,
				    int64_t func, int64_t height);
/* A new explanation of that CID, its solutions added next; a later one
 * for the same CID replaces it (a window's newer run).  NULL: no
 * memory. */
struct expl *run_profile__new_expl(struct expls *e, int64_t program,
				   int64_t func, int64_t height,
				   enum cct_how how, uint32_t exact);
/* Adds CCT node @node, with @share of the CID's samples, @own of them
 * its own, to @x's solutions.  0 or -ENOMEM. */
int run_profile__add_sol(struct expls *e, struct expl *x, uint32_t node,
			 double share, double own);

/* stored.c: the stored inference */
/* Reads run @run_id's stored explanations into @e, their contexts into
 * @p's CCT.  0, or -1 after logging why. */
int stored__load(struct store *st, struct run_profile *p, int64_t run_id,
		 struct expls *e);
/* Stores run @run's inference: every CID of the run as @e explains it,
 * stamped @stamp.  0, or -1 after logging why. */
int stored__save(struct store *st, struct run_profile *p, int64_t run,
		 const struct expls *e, const struct inference_stamp *stamp);

#endif
