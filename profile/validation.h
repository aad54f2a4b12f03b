/*
 * validation.h - the scores of a validation run (validation.c), which
 * report/validation.h shows:
 * - what a report of the run shows (run_profile__score()): by outcome
 *   (precise, ambiguous, searched, unknown), the weight the true context
 *   got (correct) and the rest (incorrect), by function; stored in the
 *   accuracy table, whose rates report headers quote; and the weight
 *   whose frames a k = VALIDATION_K report shows are true (correct_k);
 * - the path map alone, the outcomes of the ICPP paper (precise,
 *   ambiguous, incorrect, missing: is the true path among the map's
 *   candidates for the CID), the degree of ambiguity, and the shares by
 *   function; stored in the validation table;
 * - the degree of overlap of the run's profile (profile__load()) with
 *   its true stacks, at k = VALIDATION_K.
 */
#ifndef ICPPD_PROFILE_VALIDATION_H
#define ICPPD_PROFILE_VALIDATION_H

#include <stddef.h>
#include <stdint.h>

#include "inference/cct.h"

struct store;

/* The k of the overlap validate reports (what a report shows by
 * default). */
#define VALIDATION_K 3

enum validation_outcome { VALIDATION_PRECISE, VALIDATION_AMBIGUOUS,
			  VALIDATION_INCORRECT, VALIDATION_MISSING,
			  VALIDATION_NR_OUTCOMES };
/* "precise", "ambiguous", "incorrect", "missing" */
extern const char *const validation_outcome_names[VALIDATION_NR_OUTCOMES];

struct validation_func {
	char *program, *function;
	uint64_t samples, by[VALIDATION_NR_OUTCOMES];
};

struct validation_bucket {
	int64_t candidates;
	uint64_t samples;
};

/* The path map alone: each scored sample's outcome, the number of
 * candidates its CID had, and the outcomes by function. */
struct validation_map {
	uint64_t samples, by[VALIDATION_NR_OUTCOMES];
	struct validation_bucket *hist;		/* by candidates, ascending */
	size_t nhist, hist_cap;
	struct validation_func *funcs;	/* biggest first */
	size_t nfuncs, funcs_cap;
};

/* What a report shows, from run_profile__score(): one entry per true
 * path, merged by group; then, once stored, by function, the most
 * incorrect first. */
struct validation_entry {
	int64_t program_id, function_id;
	char *function;
	enum cct_how how;
	size_t solutions;
	double samples, correct;
	double wrong;		/* validation__incorrect(), by function */
};

struct validation_report {
	struct validation_entry *v;
	size_t n, cap;
	double samples, by[CCT_NR_HOW], correct[CCT_NR_HOW], cut[CCT_NR_HOW];
	/* the frames a report with VALIDATION_K callers shows true */
	double correct_k[CCT_NR_HOW];
};


struct validation_scores {
	struct validation_map map;
	struct validation_report report;
	double overlap;		/* -1: either side could not be made */
};

/* Scores validation run @run_id into @s and stores the scores.  0, or
 * -1 after logging why.  @s needs validation__exit() whatever the
 * result. */
int validation__score(struct store *st, int64_t run_id,
		      struct validation_scores *s);
void validation__exit(struct validation_scores *s);

/* Weight a report gives to other contexts than the true one: none for
 * unknown callers, which claim no context; shares that add up to 1 only
 * up to rounding leave crumbs, not weight. */
double validation__incorrect(enum cct_how how, double samples,
			     double correct);

#endif
