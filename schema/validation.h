/*
 * validation.h - the scores of a validation run: its true paths (the
 * run's own path map) against the training maps of the same programs.
 * 0 or -1 with store__error() set, as the whole store.
 */
#ifndef ICPPD_SCHEMA_VALIDATION_H
#define ICPPD_SCHEMA_VALIDATION_H

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

#endif
