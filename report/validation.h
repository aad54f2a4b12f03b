/*
 * validation.h - printing a validation run's scores (icppd validate).
 * The scores come from profile/validation.h; what could not be scored
 * comes from the recorder, passed in by name so that this folder knows
 * nothing of the collector.
 */
#ifndef ICPPD_REPORT_VALIDATION_H
#define ICPPD_REPORT_VALIDATION_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "profile/validation.h"

struct validation_unscored {
	const char *name;	/* "truncated", "no_stack", ..., "map_full" */
	uint64_t samples;
};

struct validation_input {
	int64_t run_id;
	uint64_t unresolved;	/* samples with no CID at all */
	/* samples with a CID but no whole true stack, by reason; the text
	 * format names "truncated" apart and sums the rest as "other" */
	const struct validation_unscored *unscored;
	size_t nunscored;
};

/* Writes run @in->run_id's scores @s to @out, as JSON or text. */
void report__validation(FILE *out, bool json,
			const struct validation_input *in,
			const struct validation_scores *s);

#endif
