/*
 * validation.h - the scores of a validation run: its true paths (the
 * run's own path map) against the training maps of the same programs.
 * 0 or -1 with store__error() set, as the whole store.
 */
#ifndef ICPPD_SCHEMA_VALIDATION_H
#define ICPPD_SCHEMA_VALIDATION_H

#include <stddef.h>
#include <stdint.h>

#include "schema/store.h"

/* Scores validation run @run_id: compares its true paths with the
 * training maps of the same programs and fills the validation table.
 * 0 or -1. */
int store__score(struct store *st, int64_t run_id);

struct validation_row {
	const char *program, *function, *outcome;	/* valid in the call */
	int64_t candidates, samples;
};
/* Calls @fn for every row of run @run_id's scores, biggest first;
 * a positive return from @fn stops.  0 or -1. */
int store__validation(struct store *st, int64_t run_id,
		      int (*fn)(void *arg, const struct validation_row *r),
		      void *arg);

/* One group of a validation run's accuracy: the true paths of one
 * function that a report infers alike. */
struct accuracy_row {
	int64_t program_id, function_id;
	const char *outcome;	/* "precise", "ambiguous", "searched",
				 * "unknown" */
	int64_t solutions, samples;
	double correct;		/* the weight the true contexts got */
};
/* Replaces run @run_id's accuracy rows with @rows.  0 or -1. */
int store__accuracy(struct store *st, int64_t run_id,
		    const struct accuracy_row *rows, size_t n);

/* Calls @fn with the samples and correct weight per outcome of the
 * latest validation run scored for program @program_id (a build: the
 * module of its build-id), whose id goes to *@run_id (0: none).  0 or
 * -1. */
int store__accuracy_rates(struct store *st, int64_t program_id,
			  int64_t *run_id,
			  int (*fn)(void *arg, const char *outcome,
				    int64_t samples, double correct),
			  void *arg);

#endif
